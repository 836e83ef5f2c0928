/*
 * Copyright (c) 2026 The userdt authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * The recording path of the preload library: what a hook does when one
 * of its probes is enabled.  It takes the event's fields without a
 * system call (tid cached per thread, cpu from glibc's rseq area, time
 * from the time stamp counter when dtd can convert it, else from the
 * vDSO, comm cached per thread) and writes one fixed-size
 * record into the process's ring with a reserve/commit pair, after
 * LTTng-UST's ring buffer: no lock, no allocation, safe to interrupt and
 * to run in a signal handler.
 *
 * Recursion: a hook that fires while its thread is already recording (a
 * signal handler interrupting the recording path, or anything the
 * unwinder calls while it walks the stack) drops its event and counts
 * it in rh_recur, which dtd reports as recurevt, as dt(4) counts events
 * that fire while an event is being recorded.  The calls the unwinder
 * makes while it walks the stack for USTACK (udt_cfi.c's raw reads) are
 * the library's own, not the program's: they are not recorded and not
 * counted.
 */
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <signal.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <dev/dt/dtvar.h>

#include "systab.h"
#include "udt_preload.h"
#include "udt_lrec.h"
#include "udt_str.h"
#include "udt_sys.h"
#include "udt_unw.h"

__thread struct udt_thread udt_thread
    __attribute__((tls_model("initial-exec")));

udt_fn_t	udt_real_clock_gettime_fn;
uintptr_t	udt_text_lo, udt_text_hi;

/* Bumped on every rename so each thread refetches its comm once. */
static unsigned int udt_commgen = 1;

void
udt_comm_invalidate(void)
{
	__atomic_add_fetch(&udt_commgen, 1, __ATOMIC_RELAXED);
}

/* The thread's cached comm, fetched again after a rename. */
static inline const char *
udt_comm(struct udt_thread *t)
{
	unsigned int gen = __atomic_load_n(&udt_commgen, __ATOMIC_RELAXED);

	if (__predict_false(t->ut_commgen != gen)) {
		char buf[UDT_COMMLEN + 1] = { 0 };

		if (udt_sys2(SYS_prctl, PR_GET_NAME, buf) != 0)
			buf[0] = '\0';
		__builtin_memcpy(t->ut_comm, buf, UDT_COMMLEN);
		t->ut_comm[UDT_COMMLEN - 1] = '\0';
		t->ut_commgen = gen;
	}
	return t->ut_comm;
}

void
udt_getcomm(char *comm)
{
	__builtin_memcpy(comm, udt_comm(&udt_thread), UDT_COMMLEN);
}

/*
 * sched_getcpu() without the call: glibc registers rseq for every
 * thread and the kernel keeps cpu_id there (glibc's own sched_getcpu()
 * reads the same word).  Where rseq is not registered (__rseq_size 0,
 * or glibc.pthread.rseq=0), ask glibc.
 */
extern const ptrdiff_t	__rseq_offset;
extern const unsigned int __rseq_size;

static inline int
udt_cpu(void)
{
	if (__predict_true(__rseq_size >= 8)) {
		const volatile uint32_t *id = (const volatile uint32_t *)
		    (void *)((char *)__builtin_thread_pointer() +
		    __rseq_offset + 4);
		int32_t cpu = (int32_t)*id;

		if (cpu >= 0)
			return cpu;
	}
	return sched_getcpu();
}

int
udt_getcpu(void)
{
	int cpu = udt_cpu();

	return cpu < 0 ? 0 : cpu;
}

int
udt_gettid(void)
{
	struct udt_thread *t = &udt_thread;

	if (__predict_false(t->ut_tid == 0))
		t->ut_tid = (int)udt_sys0(SYS_gettid);
	return t->ut_tid;
}

/*
 * Ask for a line in the state a store needs (exclusive), not shared as
 * __builtin_prefetch(p, 1) gives without -mprfchw: dtd's CPU read the
 * line last, and a shared copy would still cost the store an ownership
 * round trip.  PREFETCHW decodes as a no-op on x86 CPUs without it.
 */
static inline void
udt_prefetchw(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m" (*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/*
 * User stack, innermost first, without this library's own frames, at
 * most max frames: UDT_STACK_MAX into pcs, the rest into the continuation
 * slots more[] (NULL: none, max is UDT_STACK_MAX).  The first entry is
 * the return address into the code that called the libc wrapper, as the
 * first entry of dt(4)'s ustack is the return address of the system
 * call.  Not inlined: its XSAVE area and the unwinder's frames are paid
 * for by records with a user stack only, not by every record made on a
 * signal handler's alternate stack.
 */
static unsigned int __attribute__((noinline))
udt_ustack(uint64_t *pcs, struct udt_rec_more *const *more, unsigned int max)
{
	struct udt_pcdst dst = { .pd_pc0 = pcs, .pd_n0 = UDT_STACK_MAX };
	const struct udt_pcdst *d = &dst;
	struct udt_xsave xs;
	unsigned int k = 0, i;

	for (i = 0; more != NULL && i < UDT_MORE_MAXSLOTS; i++)
		dst.pd_more[i] = more[i];
	/* The unwinder's copies of its rows use vector registers. */
	udt_xsave(&xs);
	/*
	 * Signals stay open: the walk (udt_cfi.c) makes raw system calls
	 * only, none the program's, so a handler that lands during it is
	 * one inside a record like any other, counted as recursive by
	 * udt_rec_enter().  Holding them for the walk (libunwind's masking
	 * once cost fifteen calls a stack) cost two calls a stack, and the
	 * handler's calls, run as the mask came back, went uncounted.
	 *
	 * All-calls mode unwinds from the system call instruction the
	 * SIGSYS interrupted, as dt(4)'s first entry is the PC of the call:
	 * no frame of ours to cut.
	 */
	if (udt_thread.ut_uc != NULL)
		k = udt_unw_stack_dst(udt_thread.ut_uc, d, max);
	else
		k = udt_unw_here_dst(d, max, udt_text_lo, udt_text_hi);
	udt_xrstor(&xs);
	return k;
}

static uint64_t
udt_mono_ns(void)
{
	struct timespec ts;

	if (udt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * A slice of the bound: a wake dtd never sends (a flag a handler's
 * siglongjmp() left behind and dtd cleared, a tail that moved by 2^32)
 * costs one slice, never the program.
 */
#define UDT_WAIT_SLICE	(UDT_WAIT_NSEC / 4)

/*
 * The lossless mode's wait (udt_preload.h): sleep on rh_tail until
 * ticket last is free, while the drain makes progress at least every
 * UDT_WAIT_NSEC.  It makes no progress, as when dtd is stopped, dead, or
 * holding this ring back for a reader that does not read: give up,
 * leave rh_gaveup saying at which tail, and every producer of the ring
 * then drops at once (one test, no system call) until the tail moves.
 * The clock is read with a system call, not the vDSO: this runs in
 * signal handlers and before libc's pointers are known, and only when
 * the ring is full, where a microsecond is nothing.
 */
int
udt_ring_wait(struct udt_ring_hdr *r, uint64_t last, uint64_t mask)
{
	struct timespec ts = { 0, (long)UDT_WAIT_SLICE };
	uint64_t tail, seen, since;

	tail = __atomic_load_n(&r->rh_tail, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&r->rh_gaveup, __ATOMIC_RELAXED) == tail + 1)
		return 0;
	seen = tail;
	since = udt_mono_ns();
	for (;;) {
		/* The flag, then the tail: dtd stores them the other way. */
		__atomic_store_n(&r->rh_wait, 1, __ATOMIC_SEQ_CST);
		tail = __atomic_load_n(&r->rh_tail, __ATOMIC_SEQ_CST);
		if (tail == seen)
			(void)udt_sys6(SYS_futex, (long)&r->rh_tail,
			    FUTEX_WAIT, (long)(uint32_t)tail, (long)&ts, 0, 0);
		tail = __atomic_load_n(&r->rh_tail, __ATOMIC_ACQUIRE);
		if (udt_ring_fits(last, tail, mask)) {
			__atomic_store_n(&r->rh_ptail, tail,
			    __ATOMIC_RELEASE);
			return 1;
		}
		if (tail != seen) {
			seen = tail;
			since = udt_mono_ns();
		} else if (udt_mono_ns() - since >= UDT_WAIT_NSEC)
			break;
	}
	__atomic_store_n(&r->rh_gaveup, tail + 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Two consecutive tickets with one compare-and-swap, as udt_reserve()
 * takes one: the record, remembered for udt_rec_void() as
 * udt_rec_reserve() does, and after it the strings (udt_rec_str), filled
 * from strs and committed here: they wait in the ring for the record.
 */
static struct udt_rec *
udt_rec_reserve_str(struct udt_thread *t, struct udt_ring_hdr *r,
    unsigned int probe, const unsigned char *strs, uint64_t *ticket,
    int32_t tid)
{
	uint64_t head, mask = r->rh_nslots - 1;
	struct udt_rec_str *rs;
	struct udt_rec *rec;

	head = __atomic_load_n(&r->rh_head, __ATOMIC_RELAXED);
	do {
		if (!udt_ring_room(r, head + 1, mask, probe))
			return NULL;
	} while (!__atomic_compare_exchange_n(&r->rh_head, &head, head + 2,
	    0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*ticket = head;
	rec = (struct udt_rec *)(void *)((char *)r + UDT_RING_HDRSIZE +
	    (head & mask) * UDT_SLOT_SIZE);
	t->ut_ticket = head;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->ut_rec = rec;
	/* Claimed before the strings' copy. */
	udt_rec_claim(rec, head, tid, probe);
	rs = (struct udt_rec_str *)(void *)((char *)r + UDT_RING_HDRSIZE +
	    ((head + 1) & mask) * UDT_SLOT_SIZE);
	rs->us_probe = (uint16_t)probe;
	rs->us_flags = UDT_R_STRDATA;
	__builtin_memcpy(rs->us_str, strs, UDT_STR_SIZE);
	__atomic_store_n(&rs->us_seq, head + 2, __ATOMIC_RELEASE);
	return rec;
}

/*
 * A record with a deep user stack (UDT_EN_DEEP, udt_wire.h): the record,
 * its strings (strs non-NULL, as udt_rec_reserve_str()) and the
 * UDT_MORE_MAXSLOTS continuation slots with one compare-and-swap.  The
 * slots are committed at once as pads, so that whatever becomes of this
 * record leaves no hole in the ring, and given in more[] for the walk
 * (udt_rec_deep()), which marks those it filled before the record's
 * commit publishes them.
 */
static struct udt_rec *
udt_rec_reserve_deep(struct udt_thread *t, struct udt_ring_hdr *r,
    unsigned int probe, const unsigned char *strs, uint64_t *ticket,
    struct udt_rec_more **more, int32_t tid)
{
	uint64_t head, first, mask = r->rh_nslots - 1;
	unsigned int ns = 1 + (strs != NULL) + UDT_MORE_MAXSLOTS, k;
	struct udt_rec_more *m;
	struct udt_rec_str *rs;
	struct udt_rec *rec;

	head = __atomic_load_n(&r->rh_head, __ATOMIC_RELAXED);
	do {
		if (!udt_ring_room(r, head + ns - 1, mask, probe))
			return NULL;
	} while (!__atomic_compare_exchange_n(&r->rh_head, &head, head + ns,
	    0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*ticket = head;
	rec = (struct udt_rec *)(void *)((char *)r + UDT_RING_HDRSIZE +
	    (head & mask) * UDT_SLOT_SIZE);
	t->ut_ticket = head;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->ut_rec = rec;
	/* Claimed before its other slots and the walk. */
	udt_rec_claim(rec, head, tid, probe);
	first = head + 1;
	if (strs != NULL) {
		rs = (struct udt_rec_str *)(void *)((char *)r +
		    UDT_RING_HDRSIZE + (first & mask) * UDT_SLOT_SIZE);
		rs->us_probe = (uint16_t)probe;
		rs->us_flags = UDT_R_STRDATA;
		__builtin_memcpy(rs->us_str, strs, UDT_STR_SIZE);
		__atomic_store_n(&rs->us_seq, first + 1, __ATOMIC_RELEASE);
		first++;
	}
	for (k = 0; k < UDT_MORE_MAXSLOTS; k++) {
		m = (struct udt_rec_more *)(void *)((char *)r +
		    UDT_RING_HDRSIZE + ((first + k) & mask) * UDT_SLOT_SIZE);
		m->um_probe = (uint16_t)probe;
		m->um_flags = UDT_R_STKPAD;
		m->um_idx = (uint8_t)k;
		m->um_pad = 0;
		__atomic_store_n(&m->um_seq, first + k + 1, __ATOMIC_RELEASE);
		more[k] = m;
	}
	return rec;
}

/*
 * A deep stack's record (udt_rec_reserve_deep()), its stack walked into
 * it and its slots, *nframes deep; the slots the walk filled carry
 * frames now, and the record's commit (release) publishes them with it.
 * Not inlined: its slot pointers and the walk are paid for by deep
 * records only, not by every record made on a signal handler's
 * alternate stack.
 */
static struct udt_rec * __attribute__((noinline))
udt_rec_deep(struct udt_thread *t, struct udt_ring_hdr *r, unsigned int probe,
    const unsigned char *strs, uint64_t *ticket, unsigned int *nframes,
    int32_t tid)
{
	struct udt_rec_more *more[UDT_MORE_MAXSLOTS];
	struct udt_rec *rec;
	unsigned int k;

	if ((rec = udt_rec_reserve_deep(t, r, probe, strs, ticket, more,
	    tid)) == NULL)
		return NULL;
	*nframes = udt_ustack(rec->ur_stack, more, UDT_DEEP_MAX);
	for (k = 0; k < UDT_MORE_SLOTS(*nframes); k++)
		more[k]->um_flags = UDT_R_STKDATA;
	return rec;
}

/*
 * udt_str_read(), not inlined: its copies of three strings are paid for
 * by records with strings only, not by every record made on a signal
 * handler's alternate stack.
 */
static unsigned int __attribute__((noinline))
udt_emit_strs(int tid, const struct systab_ent *se, const long *args,
    unsigned char *strs)
{
	return udt_str_read(tid, se, args, strs);
}

/*
 * Whether the table's filter (udt_filt.c) rejects this event: then it is
 * counted in rh_filt, which dtd reports as filtered, and not recorded.
 */
static int
udt_filtered(struct udt_thread *t, struct udt_ring_hdr *r, unsigned int probe,
    const long *args, int isret, long rv, int error)
{
	const struct udt_tab *tab = __atomic_load_n(&udt_tab,
	    __ATOMIC_ACQUIRE);
	struct udt_fctx c;

	if (__predict_true(!udt_filt_on(tab, probe)))
		return 0;
	/* A vfork child writes through its parent's ring, as itself. */
	c.fc_pid = t->ut_vfork > 0 ? 0 :
	    __atomic_load_n(&udt_dtd_pid, __ATOMIC_RELAXED);
	c.fc_tid = udt_gettid();
	c.fc_comm = udt_comm(t);
	c.fc_args = isret ? NULL : args;
	c.fc_nargs = probe / 2 < SYSTAB_COUNT ? systab[probe / 2].se_nargs : 0;
	c.fc_isret = isret;
	c.fc_rv = rv;
	c.fc_error = error;
	if (!udt_filt_reject(tab, probe, &c))
		return 0;
	__atomic_add_fetch(&r->rh_filt[probe], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->rh_filt_total, 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * A fork child's return (0) from a fork-like call: recorded, never
 * folded here, so that dtd can tell it (dt_ingest_kseen()) and drop it
 * where the kernel's counting program counted it already.
 */
static int
udt_forkret(unsigned int probe, int isret, long rv)
{
	unsigned int lin;

	if (!isret || rv != 0 || probe / 2 >= SYSTAB_COUNT)
		return 0;
	lin = systab[probe / 2].se_linux;
	return lin == SYS_fork || lin == SYS_vfork || lin == SYS_clone ||
	    lin == SYS_clone3;
}

void
udt_emit(unsigned int probe, unsigned int en, const long *args, int isret,
    long rv, int error)
{
	unsigned char strs[UDT_STR_SIZE];
	unsigned int nstr = 0;
	struct udt_thread *t = &udt_thread;
	const struct udt_tab *tab;
	struct udt_ring_hdr *r;
	struct udt_rec *rec;
	struct timespec ts;
	int64_t sec, nsec, lat = 0;
	int haslat = 0;
	uint64_t stack[UDT_STACK_MAX];
	char comm[UDT_COMMLEN];
	uint64_t head, mask;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	unsigned int nframes = 0, i, nslots;
	int cpu, tsc, tid, depth, deep, rc, walked = 0;

	/* Our own calls are no events of the program: not even recursive. */
	if (t->ut_inlib)
		return;
	if (__predict_false(__atomic_load_n(&__atomic_load_n(&udt_tab,
	    __ATOMIC_RELAXED)->tb_reconnect, __ATOMIC_RELAXED) != 0)) {
		/*
		 * A fork child's first record: its enable bytes were the
		 * live ones, so the event is recorded once it has a ring.
		 * A new dtd's adoption: the table read is a dead one's.
		 */
		if (!udt_attach_pending()) {
			udt_attach();
			return;
		}
		udt_attach();
	}
	if ((r = udt_rec_enter(t, probe, sp, &depth)) == NULL)
		goto out;
	/*
	 * Durations (udt_sagg.h): a marked entry keeps its stamp, before
	 * any filter (the return's rule reads it whatever the entry's
	 * filter says); a return takes its own, for its fold or record.
	 */
	tab = __atomic_load_n(&udt_tab, __ATOMIC_ACQUIRE);
	if (!isret && (en & UDT_EN_AGG) && udt_sagg_stamp(tab, probe, -1))
		goto out;
	if (isret && udt_lat_here(t)->ul_call != 0)
		haslat = udt_sagg_lat(tab, probe, -1, &lat);
	if (udt_filtered(t, r, probe, args, isret, rv, error))
		goto out;
	/*
	 * Aggregated here (UDT_EN_AGG): a few adds, no stamp, no slot.  A
	 * vfork child's events are its own pid's, which dtd only knows
	 * from its records.
	 */
	deep = (en & (DTEVT_USTACK | UDT_EN_DEEP)) ==
	    (DTEVT_USTACK | UDT_EN_DEEP);
	if ((en & UDT_EN_AGG) && t->ut_vfork <= 0 && !udt_forkret(probe,
	    isret, rv)) {
		rc = udt_sagg_fold(tab, r, probe, args, isret, rv, error,
		    haslat ? &lat : NULL, NULL, 0);
		/*
		 * A rule keyed by the stack: walked here, where a record's
		 * is, so that the frames are the record's; kept for the
		 * record when the fold cannot take it.  A deep walk stays
		 * with the record (its slots' first frames, dtd's fold).
		 */
		if (rc < 0 && (en & DTEVT_USTACK) && !deep) {
			nframes = udt_ustack(stack, NULL, UDT_STACK_MAX);
			walked = 1;
			rc = udt_sagg_fold(tab, r, probe, args, isret, rv,
			    error, haslat ? &lat : NULL, stack, nframes);
		}
		if (rc > 0)
			goto out;
	}
	/*
	 * Only counted (UDT_EN_COUNT): one add, no stamp, no slot.  But
	 * not a fork child's return nor a vfork child's call: the add
	 * would be the ring owner's, and a kernel counting program counts
	 * them too, which dtd drops only from records (dt_ingest_kseen()).
	 */
	if ((en & UDT_EN_COUNT) && t->ut_vfork <= 0 && !udt_forkret(probe,
	    isret, rv)) {
		__atomic_fetch_add(&r->rh_count[probe], 1, __ATOMIC_RELAXED);
		goto out;
	}

	/*
	 * The slow parts first, outside the reserve/commit window; but a
	 * deep stack is walked straight into its slots once reserved.
	 */
	if ((en & DTEVT_USTACK) && !deep && !walked)
		nframes = udt_ustack(stack, NULL, UDT_STACK_MAX);
	tsc = __atomic_load_n(&udt_use_tsc, __ATOMIC_RELAXED);
	/*
	 * Scalars, not the timespec: copying a timespec written a field at
	 * a time into the slot is a 16-byte load the two stores cannot
	 * forward to, a stall on every record.
	 */
	if (tsc) {
		/* dtd turns it into CLOCK_REALTIME; see UDT_W_TSC. */
		sec = 0;
		nsec = (int64_t)(__builtin_ia32_rdtsc() &
		    0x7fffffffffffffffULL);
	} else {
		if (udt_real_clock_gettime_fn != NULL)
			udt_real_clock_gettime_fn(CLOCK_REALTIME, &ts);
		else
			udt_sys2(SYS_clock_gettime, CLOCK_REALTIME, &ts);
		sec = ts.tv_sec;
		nsec = ts.tv_nsec;
	}
	if (en & DTEVT_EXECNAME)
		__builtin_memcpy(comm, udt_comm(t), UDT_COMMLEN);
	cpu = udt_cpu();
	if (cpu < 0)
		cpu = 0;
	tid = udt_gettid();
	if (__predict_false(en & UDT_EN_STR) && !isret &&
	    probe / 2 < SYSTAB_COUNT && systab[probe / 2].se_strargs != 0) {
		/* Our own thread's tid: no getpid() to find the process. */
		__builtin_memset(strs, 0, sizeof(strs));
		nstr = udt_emit_strs(tid, &systab[probe / 2], args, strs);
	}

	nslots = nstr > 0 ? 2 : 1;
	if (__predict_false(deep)) {
		if ((rec = udt_rec_deep(t, r, probe, nstr > 0 ? strs : NULL,
		    &head, &nframes, tid)) == NULL)
			goto out;
		nslots += UDT_MORE_MAXSLOTS;
	} else if ((rec = nstr > 0 ? udt_rec_reserve_str(t, r, probe, strs,
	    &head, tid) : udt_rec_reserve(t, r, probe, &head, tid)) == NULL)
		goto out;
	rec->ur_flags = (tsc ? UDT_R_TSC : 0) | (nstr > 0 ? UDT_R_STR : 0);
	rec->ur_nframes = (uint8_t)nframes;
	rec->ur_cpu = (uint32_t)cpu;
	rec->ur_sec = sec;
	rec->ur_nsec = nsec;
	if (isret) {
		rec->ur_flags |= UDT_R_RET;
		rec->ur_args[0] = rv;
		/* the duration + 1, 0 for none (udt_wire.h) */
		rec->ur_args[1] = haslat ? (lat < INT64_MAX ? lat : INT64_MAX -
		    1) + 1 : 0;
		rec->ur_error = error;
	} else {
		rec->ur_error = 0;
		if (en & DTEVT_FUNCARGS) {
			rec->ur_flags |= UDT_R_ARGS;
			/* Built-in: this file is -fno-builtin. */
			__builtin_memcpy(rec->ur_args, args,
			    sizeof(rec->ur_args));
		}
	}
	if (en & DTEVT_EXECNAME) {
		rec->ur_flags |= UDT_R_COMM;
		__builtin_memcpy(rec->ur_comm, comm, UDT_COMMLEN);
	}
	if (nframes > 0 && deep)
		rec->ur_flags |= UDT_R_STACK;	/* walked in place */
	else if (nframes > 0) {
		rec->ur_flags |= UDT_R_STACK;
		/*
		 * Not memcpy(): libc's uses vector registers this library
		 * does not keep (udt_xstate.c).  The empty asm keeps the
		 * compiler from making the loop a call to it.
		 */
		for (i = 0; i < nframes; i++) {
			rec->ur_stack[i] = stack[i];
			__asm__ volatile("");
		}
	}
	udt_rec_commit(t, rec, head);
	/*
	 * The next slot's lines were last touched by dtd's CPU: ask for
	 * them now, while this thread goes on into the system call.
	 */
	mask = r->rh_nslots - 1;
	rec = (struct udt_rec *)(void *)((char *)r + UDT_RING_HDRSIZE +
	    ((head + nslots) & mask) * UDT_SLOT_SIZE);
	udt_prefetchw(rec);
	udt_prefetchw((char *)rec + 64);
out:
	udt_nest_leave(t, depth);
}

/*
 * A call the launcher saw the loader make before this library ran
 * (udt_lrec.h), recorded as udt_emit() records a call of our own, with
 * the launcher's stamps, tid and cpu, and no user stack (the launcher
 * takes none).  en: the probe's enable byte.  The constructor's thread,
 * before any other of ours exists.
 */
void
udt_emit_lrec(const struct udt_lrec *lr, unsigned int probe, unsigned int en)
{
	struct udt_thread *t = &udt_thread;
	const struct udt_tab *tab;
	struct udt_ring_hdr *r;
	struct udt_rec *rec;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uint64_t head;
	int64_t at, lat = 0;
	int depth, str, haslat = 0;

	if ((r = udt_rec_enter(t, probe, sp, &depth)) == NULL)
		goto out;
	/* the loader's calls are timed by the launcher's stamps */
	tab = __atomic_load_n(&udt_tab, __ATOMIC_ACQUIRE);
	at = lr->lr_sec * 1000000000 + lr->lr_nsec;
	if (!(lr->lr_flags & UDT_LR_RET) && (en & UDT_EN_AGG) &&
	    udt_sagg_stamp(tab, probe, at))
		goto out;
	if ((lr->lr_flags & UDT_LR_RET) && udt_lat_here(t)->ul_call != 0)
		haslat = udt_sagg_lat(tab, probe, at, &lat);
	str = (en & UDT_EN_STR) && (lr->lr_flags & UDT_LR_STR) &&
	    !(lr->lr_flags & UDT_LR_RET);
	/* The loader's thread is this one, the constructor's. */
	if ((rec = str ? udt_rec_reserve_str(t, r, probe, lr->lr_str, &head,
	    lr->lr_tid) : udt_rec_reserve(t, r, probe, &head, lr->lr_tid)) ==
	    NULL)
		goto out;
	rec->ur_flags = str ? UDT_R_STR : 0;
	rec->ur_nframes = 0;
	rec->ur_cpu = lr->lr_cpu;
	rec->ur_sec = lr->lr_sec;
	rec->ur_nsec = lr->lr_nsec;
	rec->ur_error = 0;
	if (lr->lr_flags & UDT_LR_RET) {
		rec->ur_flags |= UDT_R_RET;
		rec->ur_args[0] = lr->lr_args[0];
		rec->ur_args[1] = haslat ? (lat < INT64_MAX ? lat : INT64_MAX -
		    1) + 1 : 0;
		rec->ur_error = lr->lr_error;
	} else if (en & DTEVT_FUNCARGS) {
		rec->ur_flags |= UDT_R_ARGS;
		__builtin_memcpy(rec->ur_args, lr->lr_args,
		    sizeof(rec->ur_args));
	}
	if (en & DTEVT_EXECNAME) {
		rec->ur_flags |= UDT_R_COMM;
		__builtin_memcpy(rec->ur_comm, lr->lr_comm, UDT_COMMLEN);
		rec->ur_comm[UDT_COMMLEN - 1] = '\0';
	}
	udt_rec_commit(t, rec, head);
out:
	udt_nest_leave(t, depth);
}

long
udt_slow(unsigned int idx, enum udt_rtype rt, udt_fn_t *slot,
    const char *name, long nr, const long *args)
{
	udt_fn_t fn;
	unsigned int en;
	long r, rv;
	int error, failed;

	/*
	 * All-calls mode records the call where it enters the kernel
	 * (udt_sud.c); here only dispatch is turned back on, in case a
	 * thread-creating clone left it off.
	 */
	if (__predict_false(udt_sud_active)) {
		udt_thread.ut_sud = 1;
		en = 0;
	} else
		en = udt_enab16(idx) & 0xff;
	if (en != 0) {
		/*
		 * The entry probe (libunwind, sched_getcpu) may change
		 * errno; a call that succeeds leaves it alone, so the
		 * program must see its own.
		 */
		error = errno;
		udt_emit(2 * idx, en, args, 0, 0, 0);
		errno = error;
	}

	fn = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (__predict_false(fn == NULL))
		fn = udt_resolve(slot, name);
	if (nr >= 0)
		r = fn(nr, args[0], args[1], args[2], args[3], args[4],
		    args[5]);
	else
		r = fn(args[0], args[1], args[2], args[3], args[4], args[5]);
	error = errno;
	/* A raw fork's child runs no atfork handler: attach it here. */
	if (nr >= 0 && r == 0 && udt_forklike(nr, args[0]))
		udt_fork_child();

	/* Re-read: a fork child has a new table, the call may have waited. */
	en = udt_sud_active ? 0 : udt_enab16(idx) >> 8;
	if (en != 0) {
		switch (rt) {
		case UDT_RT_i:
			rv = (int)r;
			failed = rv == -1;
			break;
		case UDT_RT_u:
			rv = (unsigned int)r;
			failed = 0;
			break;
		case UDT_RT_n:
			rv = r;
			failed = r == 0;
			break;
		case UDT_RT_v:
			rv = 0;
			failed = 0;
			break;
		default:
			rv = r;
			failed = r == -1;
			break;
		}
		if (failed)
			udt_emit(2 * idx + 1, en, NULL, 1, -1, error);
		else
			udt_emit(2 * idx + 1, en, NULL, 1, rv, 0);
	}
	errno = error;
	return r;
}
