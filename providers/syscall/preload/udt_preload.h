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
 * Internals of libuserdt-preload, the syscall provider's half that runs
 * inside traced processes.  This header declares no libc wrapper, so the
 * hook file can define functions named read or open with its own
 * prototype.
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before any other thread exists
 *	[A]	published with release stores by udt_attach(), which only one
 *		thread runs at a time (udt_attaching); read with acquire or
 *		relaxed loads from any thread, any context
 *	[t]	thread-local
 */
#ifndef UDT_PRELOAD_H
#define UDT_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

#include <userdt/udt_wire.h>

#define UDT_EXPORT	__attribute__((visibility("default")))
#define UDT_HIDDEN	__attribute__((visibility("hidden")))
#define __predict_false(x)	__builtin_expect(!!(x), 0)
#define __predict_true(x)	__builtin_expect(!!(x), 1)

/* A libc wrapper as the hooks call it: integer arguments in registers. */
typedef long (*udt_fn_t)(long, ...);

/* How a wrapper reports its result (syscalls.tsv "ret"). */
enum udt_rtype {
	UDT_RT_i,	/* int, -1 and errno on failure */
	UDT_RT_u,	/* unsigned int, never fails */
	UDT_RT_l,	/* long-sized, -1 and errno on failure */
	UDT_RT_n,	/* pointer, NULL and errno on failure */
	UDT_RT_v,	/* void */
};

/*
 * [A] The enable bytes the hooks test: the current table's tb_enab, or
 * a static zero array until the first attach.  Never NULL.
 */
extern const uint8_t	*udt_enab UDT_HIDDEN;
extern struct udt_tab	*udt_tab UDT_HIDDEN;		/* [A] */
extern struct udt_ring_hdr *udt_ring UDT_HIDDEN;	/* [A] NULL: none */
extern int		udt_use_tsc UDT_HIDDEN;	/* [A] dtd reads TSC stamps */
/* [a] dtd binds the ring to this image: drain it before an exec. */
extern int		udt_use_xdrain UDT_HIDDEN;
/*
 * [a] A fork child's parent's ring until the child attaches: only its
 * exec announces go there (udt_exec.c).
 */
extern struct udt_ring_hdr *udt_pring UDT_HIDDEN;
/* [A] dtd samples profile probes in tracees (UDT_W_PTIMER) */
extern int		udt_use_ptimer UDT_HIDDEN;
/* [A] the pid dtd stamps this process's records with (uw_pid), 0: none */
extern int32_t		udt_dtd_pid UDT_HIDDEN;

/*
 * What a hook knows of its event for the table's filter (udt_filt.c,
 * userdt/udt_filt.h), as dtd will read its record.
 */
struct udt_fctx {
	int64_t		 fc_pid;	/* dtd's pid for it; 0: cannot tell */
	int64_t		 fc_tid;	/* the tid it writes */
	const char	*fc_comm;	/* the comm it writes */
	const long	*fc_args;	/* entry: the registers; else NULL */
	unsigned int	 fc_nargs;	/* the call's argument count */
	int		 fc_isret;
	int64_t		 fc_rv;		/* return: the value it writes */
	int64_t		 fc_error;	/* return: the errno it writes */
};

/*
 * Whether the filter in tab for probe rejects the event c: 1 only when
 * a sane program, not rewritten meanwhile, says so.  Any thread, any
 * context: no lock, no allocation, no system call, bounded.
 */
int	udt_filt_reject(const struct udt_tab *tab, unsigned int probe,
	    const struct udt_fctx *c) UDT_HIDDEN;
/*
 * Whether tab has a filter for probe at all: what a hook asks before it
 * gathers its event's fields (a thread's first comm costs a system call
 * the library would not otherwise make).  Same contract.
 */
int	udt_filt_on(const struct udt_tab *tab, unsigned int probe) UDT_HIDDEN;

/*
 * Aggregations in the tracee (udt_sagg.c, userdt/udt_sagg.h): fold the
 * event into the accumulators after ring r of the slots tab names for
 * probe, and answer 1; 0 (nothing folded) when the event must be
 * recorded instead.  lat: a return's duration (udt_sagg_lat()), NULL
 * when it has none: a duration's slot then folds nothing (answer 1),
 * as the script would skip the return.  stk: the event's user stack,
 * nframes of it, as its record would carry it; NULL when not walked: a
 * slot keyed by it then makes the fold answer -1 (nothing folded, none
 * of the other slots' entries claimed), for the caller to walk it and
 * ask again, so that only the rules keyed by a stack pay for the walk.
 * Any thread, any context, inside udt_rec_enter()'s nesting: no lock,
 * no allocation, no system call.
 */
int	udt_sagg_fold(const struct udt_tab *tab, struct udt_ring_hdr *r,
	    unsigned int probe, const long *args, int isret, long rv,
	    int error, const int64_t *lat, const uint64_t *stk,
	    unsigned int nframes) UDT_HIDDEN;
/*
 * Durations (udt_sagg.h): udt_sagg_stamp() at an entry of probe keeps
 * the thread's stamp when the table marks the call, and answers 1 when
 * the entry is to be neither folded nor recorded (UDT_SST_ONLY).
 * udt_sagg_lat() at a return takes the thread's stamp: 1 with the
 * duration in *ns when it is this call's of the current generation, 0
 * else (the stamp is gone either way, but for the return of a call
 * whose entry is not marked: another rule's, which leaves it).  at: the
 * time of the call in CLOCK_REALTIME ns when the launcher saw it
 * (udt_lrec.h), -1: now.
 * This thread, inside udt_rec_enter()'s nesting: no lock, no
 * allocation, no system call.
 */
int	udt_sagg_stamp(const struct udt_tab *tab, unsigned int probe,
	    int64_t at) UDT_HIDDEN;
int	udt_sagg_lat(const struct udt_tab *tab, unsigned int probe,
	    int64_t at, int64_t *ns) UDT_HIDDEN;
/* The CPU a record would carry (0 when unknown).  Any context. */
int	udt_getcpu(void) UDT_HIDDEN;
/* [I] USERDT_SRCAGG=0 in the environment: fold nothing, record all. */
extern int	udt_sagg_off UDT_HIDDEN;
#define UDT_SAGG_ENV	"USERDT_SRCAGG"
/* check: compare with dlsym(); dlsym: it alone (udt_resolve.c). */
#define UDT_RESOLVE_ENV	"USERDT_RESOLVE"

/*
 * The two enable bytes of systab index idx (entry, return) in one load.
 * Any thread, any context; relaxed: a hook that misses a change by a few
 * nanoseconds records one event more or less, as dt(4) does.
 */
static inline uint16_t
udt_enab16(unsigned int idx)
{
	const uint8_t *e = __atomic_load_n(&udt_enab, __ATOMIC_RELAXED);

	return __atomic_load_n((const uint16_t *)(const void *)(e + 2 * idx),
	    __ATOMIC_RELAXED);
}

/*
 * Call the real wrapper with entry and return probes around it.  nr >= 0
 * calls fn(nr, args...) as syscall(3) does, else fn(args...).  Keeps
 * errno as the real call left it.  Any thread, any context (signal
 * handlers, fork children): no lock, no allocation.
 */
long	udt_slow(unsigned int idx, enum udt_rtype, udt_fn_t *, const char *,
	    long nr, const long *args) UDT_HIDDEN;

/*
 * The next definition of sym after this library, stored in *slot.
 * Called by the constructor for every hook, and by a hook that runs
 * before it (another library's constructor); may take the dynamic
 * linker's lock, so never from a signal handler in practice.  Returns a
 * function that fails with ENOSYS if libc has no such symbol.
 */
udt_fn_t	udt_resolve(udt_fn_t *, const char *) UDT_HIDDEN;
void		udt_resolve_all(void) UDT_HIDDEN;
/*
 * Fill the empty ones of n slots with the next definitions of their
 * names, as dlsym(RTLD_NEXT) would (udt_resolve.c): the names one after
 * the other, each ended by a NUL, so that the table holds no pointer
 * the loader must relocate (udt_hooks.c).  The first is asked of
 * dlsym() and says where the search ends.  The constructor's thread,
 * before the program runs.
 */
void		udt_resolve_fast(udt_fn_t *slots, const char *names, size_t n)
		    UDT_HIDDEN;

/* Record one event into the ring (udt_record.c).  Same contract. */
void	udt_emit(unsigned int probe, unsigned int en, const long *args,
	    int isret, long rv, int error) UDT_HIDDEN;

/*
 * Record a call the launcher saw before the library ran (udt_lrec.h,
 * udt_loader.c) as probe, with enable byte en.  The constructor only.
 */
struct udt_lrec;
void	udt_emit_lrec(const struct udt_lrec *, unsigned int probe,
	    unsigned int en) UDT_HIDDEN;

/*
 * The launcher's handover (udt_loader.c).  udt_loader_take(): first
 * thing in the constructor, takes the loader's calls the launcher kept.
 * udt_loader_replay(rec): once attached, records those enabled (when rec
 * is not 0), frees them.
 */
void	udt_loader_take(void) UDT_HIDDEN;
void	udt_loader_replay(int) UDT_HIDDEN;

/*
 * Before an execve or execveat: have the launcher's helper trace the
 * new image's loader (udt_lfollow.c).  want: udt_lfollow_want(), asked
 * by the caller once for both; without it the helper is not asked.  Any
 * context; returns when the helper follows this thread or will not:
 * whether it follows the loader call by call, so that its calls will be
 * handed over.
 * udt_lfollow_want(): whether any syscall probe is on, so that the
 * helper would follow.
 */
int	udt_lfollow_exec(int want) UDT_HIDDEN;
int	udt_lfollow_want(void) UDT_HIDDEN;

/*
 * Before an exec: wait (boundedly) until dtd has drained this process's
 * ring, whose records it discards once the image has exec'd
 * (udt_attach.c).  Only where dtd's welcome asked for it (UDT_W_XDRAIN:
 * not root's tracees), or in a vfork child (ut_vfork), before its exec
 * or exit: dtd stamps its records with its own pid only while it can
 * see that the child still shares the ring's memory (dt_ingest_who.c);
 * else it returns at once.  Any context.
 */
void	udt_exec_drain(void) UDT_HIDDEN;

/*
 * udt_exec_stamp(): this thread's tid and the time; udt_exec_mark(): the
 * exec stamped so is on its way, and the helper may hand over its
 * loader's calls (rh_exec), stores alone; udt_exec_retract(tid): it is
 * not, or not so (the helper does not follow); udt_exec_unmark(): the
 * calling thread's exec failed.  Any context.
 */
void	udt_exec_stamp(int32_t *tid, uint64_t *stamp) UDT_HIDDEN;
void	udt_exec_mark(int32_t tid, uint64_t stamp) UDT_HIDDEN;
void	udt_exec_retract(int32_t tid) UDT_HIDDEN;
void	udt_exec_unmark(void) UDT_HIDDEN;

/*
 * In this order, on each path that sees an execve or execveat
 * (udt_rw_slow(), dispatch's deferred one): the drain may sleep, and the
 * helper's tracer lets a process go after a few calls between its answer
 * and the exec.  The announce is out before the helper is asked: asking
 * is a round trip to another process that attaches with ptrace, often
 * longer than the sequencer's slack under load, and an announce stamped
 * before it but published after came too late to hold anything (the
 * loader's records then came after younger ones).  None is made when no
 * syscall probe is on (the helper is then not asked), and it goes
 * back at once when the helper does not follow: without the loader's
 * calls to come, nothing of the new image is older than its attach, and
 * a hold would only delay the other sources (up to D for an image that
 * never attaches).
 */
static inline void
udt_exec_before(void)
{
	uint64_t stamp;
	int32_t tid;
	int want;

	udt_exec_drain();
	udt_exec_stamp(&tid, &stamp);
	if ((want = udt_lfollow_want()) != 0)
		udt_exec_mark(tid, stamp);
	if (!udt_lfollow_exec(want) && want)
		udt_exec_retract(tid);
}

/* The thread's comm changed (prctl, pthread_setname_np): refetch. */
void	udt_comm_invalidate(void) UDT_HIDDEN;

/*
 * The calling thread's comm (UDT_COMMLEN bytes, cached) and tid (cached)
 * for a record.  Same contract as udt_emit(): any context, no lock.
 */
void	udt_getcomm(char *) UDT_HIDDEN;
int	udt_gettid(void) UDT_HIDDEN;

/*
 * Reserve the next slot of ring r for probe: returns it with *ticket
 * set, or NULL when the ring is full (counted in rh_lost[probe]).  The
 * caller fills every field but ur_seq and commits with a release store
 * of *ticket + 1 into ur_seq.  Any thread, any context: lock-free.
 */
/*
 * Whether ticket last is free in ring r (mask: nslots - 1), else count
 * the event of probe as lost.  rh_tail is on the line dtd writes after
 * each batch: reading it on every reserve would fetch that line across
 * cores once per batch, so a producer first trusts rh_ptail, which only
 * lags rh_tail, and looks at rh_tail itself when the ring seems full.
 * Acquire and release on both: a slot is reused only after dtd's copy
 * of it, whichever producer last looked.  Any thread, any context.
 */
/*
 * Lossless mode (udt_tab's tb_lossless): ring r has no room for ticket
 * last though the producers' copy of rh_tail is fresh: wait, bounded,
 * for dtd's drain to make room (udt_record.c).  1: room now; 0: none,
 * the caller drops and counts.  Raw system calls (futex, clock_gettime)
 * only, no lock, nothing held across the wait but this thread's
 * reserve attempt, so any thread, any context (signal handlers, vfork
 * children, the constructor): a handler interrupting the wait that
 * records is nested (counted as recursive) and never waits itself.
 */
int	udt_ring_wait(struct udt_ring_hdr *r, uint64_t last, uint64_t mask)
	    UDT_HIDDEN;

/*
 * Whether ticket last fits in the ring with tail where it is.  A ticket
 * behind the tail fits: it comes from a head read before the thread was
 * preempted, which dtd drained past meanwhile, and the caller's
 * compare-and-swap of rh_head refuses it and reads the head again.
 * Taken as full, it was counted lost in a ring with room, or, lossless,
 * waited out the whole bound for a room it already had.
 */
static inline int
udt_ring_fits(uint64_t last, uint64_t tail, uint64_t mask)
{
	return (int64_t)(last - tail) <= (int64_t)mask;
}

static inline int
udt_ring_room(struct udt_ring_hdr *r, uint64_t last, uint64_t mask,
    unsigned int probe)
{
	uint64_t tail;

	if (udt_ring_fits(last, __atomic_load_n(&r->rh_ptail, __ATOMIC_ACQUIRE),
	    mask))
		return 1;
	tail = __atomic_load_n(&r->rh_tail, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->rh_ptail, tail, __ATOMIC_RELEASE);
	if (udt_ring_fits(last, tail, mask))
		return 1;
	if (__predict_false(__atomic_load_n(&__atomic_load_n(&udt_tab,
	    __ATOMIC_RELAXED)->tb_lossless, __ATOMIC_RELAXED) != 0) &&
	    udt_ring_wait(r, last, mask))
		return 1;
	__atomic_add_fetch(&r->rh_lost[probe], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->rh_lost_total, 1, __ATOMIC_RELAXED);
	return 0;
}

static inline struct udt_rec *
udt_reserve(struct udt_ring_hdr *r, unsigned int probe, uint64_t *ticket)
{
	uint64_t head, mask = r->rh_nslots - 1;

	head = __atomic_load_n(&r->rh_head, __ATOMIC_RELAXED);
	do {
		if (!udt_ring_room(r, head, mask, probe))
			return NULL;
	} while (!__atomic_compare_exchange_n(&r->rh_head, &head, head + 1,
	    0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*ticket = head;
	return (struct udt_rec *)(void *)((char *)r + UDT_RING_HDRSIZE +
	    (head & mask) * UDT_SLOT_SIZE);
}

/* The profile timer sampler and its door into the library. */
#include "udt_host.h"

/*
 * Connect to dtd and switch to the ring and table it hands out, or to a
 * private placeholder table a future dtd can find (udt_attach.c).  Only
 * one thread attaches at a time; the others return at once.  Uses raw
 * system calls only: callable from a fork child and a signal handler.
 */
void	udt_attach(void) UDT_HIDDEN;
/* A fork child that has not attached yet (udt_fork_child()).  Any. */
int	udt_attach_pending(void) UDT_HIDDEN;
/*
 * Descriptors lo..hi of the constructor's, left for it to close at its
 * end with the others it so left, in one close_range(2): 0, or -1 when
 * they must be closed now (not the constructor, or not next to those).
 */
int	udt_close_defer(int, int) UDT_HIDDEN;

/*
 * Syscall User Dispatch (udt_sud.c) catches the system calls of sites
 * that were neither rewritten nor trapped (udt_rw.c, udt_rw_trap.c).  A
 * thread with dispatch on pays for it on every system call it makes (the
 * kernel's slow entry path, tens of ns), so by default a thread turns it
 * on only in a process that has such sites (!udt_rw_complete): at its
 * start (the constructor's end for the first) when a probe is on, else
 * once it records an event (udt_rw_slow()), and a fork child when its
 * parent's thread had it on.  In all-calls mode (UDT_SUD_ENV=1, dtrun -a) every thread
 * has it on from its start and nothing is rewritten; with UDT_HOOKS_ENV=1
 * only the libc wrappers' hooks record.
 *
 * udt_sud_init(all): from the constructor, after the first attach; guards
 * SIGSYS in the masks from then on, and installs its handler at once in
 * all-calls mode or where SIGSYS was caught or blocked before, else when
 * first needed (udt_sud_act.c).  udt_sud_thread(): turn dispatch on for
 * the calling thread; -1 when a SIGSYS the thread holds refuses it for
 * now (worth asking again once that is gone), else 0, on or refused for
 * good (a tracer, a kernel or sandbox).  udt_sud_forked(): a fork
 * child's first code.
 * udt_sud_start(): a new thread's or process's first code: on in
 * all-calls mode, or as said above (udt_sud_wanted(), which also has
 * pthread_create() wrap the thread's start, udt_host_wrap_threads()).
 * Async-signal-safe.
 */
#define UDT_SUD_ENV	"USERDT_ALLCALLS"
#define UDT_HOOKS_ENV	"USERDT_HOOKS"
extern int	udt_sud_active UDT_HIDDEN;	/* [I] dispatch may be had */
extern int	udt_sud_all UDT_HIDDEN;		/* [I] all-calls mode */
extern uint64_t	udt_sud_ours UDT_HIDDEN;	/* [I] SIGSYS, SIGTRAP bits */
void	udt_sud_init(int) UDT_HIDDEN;
void	udt_sud_forked(void) UDT_HIDDEN;
/*
 * Around a vfork-like call made in place (udt_rw_slow()): the program's
 * SIGSYS and SIGTRAP actions kept aside, saved by the thread before the
 * call and put back when it returns in the parent, as the child found
 * them (udt_sud.c).  udt_sud_pset(): a set of one by the program.  The
 * calling thread.
 */
void	udt_sud_vfork_save(void) UDT_HIDDEN;
void	udt_sud_vfork_back(void) UDT_HIDDEN;
void	udt_sud_pset(void) UDT_HIDDEN;
/*
 * Around this thread's execve or execveat, before udt_exec_before():
 * udt_sud_exec_pre(x, uc) makes the program's view of SIGTRAP and
 * SIGSYS (blocked, ignored) real for the image it execs, saying in *x
 * what it changed; uc is the SIGSYS handler's context of a call it
 * defers to udt_sud_stub (the mask goes into its frame too), NULL
 * where the call is made at once.  udt_sud_exec_undo(x): the exec
 * failed, ours back as they were.  Async-signal-safe; no call unless
 * the program blocks or ignores one of ours, then a few, or, where
 * every int3 site must go back to its call, a pair a site
 * (udt_sud_act.c).
 */
struct udt_sud_xsig {
	uint64_t	xs_blk;		/* ours blocked for the exec */
	uint64_t	xs_ign;		/* ours ignored for the exec */
	int		xs_off;		/* dispatch turned off for it */
};
void	udt_sud_exec_pre(struct udt_sud_xsig *, void *) UDT_HIDDEN;
void	udt_sud_exec_undo(const struct udt_sud_xsig *) UDT_HIDDEN;
/*
 * From the rewriter, before its first int3 (udt_rw_trap.c): the SIGTRAP
 * handler, which makes a trapped site's call as the SIGSYS handler makes
 * a dispatched one.  0 once it is installed.  The constructor's thread.
 */
int	udt_sud_trap_init(void) UDT_HIDDEN;
int	udt_sud_thread(void) UDT_HIDDEN;
int	udt_sud_wanted(void) UDT_HIDDEN;
/*
 * What /proc/self/status says of the process at the constructor: its
 * threads (-1 unknown), the signals it has handlers for (SigCgt) and
 * those it blocks (SigBlk; either all ones unknown), its tracer.  dtd's
 * reading of it in the constructor's welcome (udt_proc_status_told()),
 * else the file's, read at the first call, which is the constructor's,
 * before it installs anything; cached after.  Any argument may be NULL.
 */
int	udt_proc_status(int *, uint64_t *, uint64_t *, long *) UDT_HIDDEN;
/*
 * The constructor's handshake hands dtd's reading over (0), or -1 when
 * the welcome has none or it came too late (the file was read).  The
 * constructor's thread.
 */
int	udt_proc_status_told(const struct udt_welcome *) UDT_HIDDEN;
/*
 * Whether dtd's reading was taken and said one thread: then the table's
 * executable mappings and files (udt_tab.tb_xmaps, tb_xfiles), read by
 * dtd while that thread waited, are the process's.  The constructor.
 */
int	udt_proc_status_dtd(void) UDT_HIDDEN;
/*
 * getpid()'s answer from the same look, or -1 when it told none: the
 * constructor takes it from there, a system call fewer in every traced
 * image.  Only while nothing could have changed it: the constructor.
 */
int32_t	udt_proc_pid(void) UDT_HIDDEN;
/*
 * The lower-case hex number at *pp (as /proc writes them), *pp moved past
 * it.  No libc (strtoull may use vector code); any context.
 */
uint64_t udt_hex(const char **) UDT_HIDDEN;
/*
 * After calls of the program no guard saw: what they blocked of SIGTRAP
 * and SIGSYS becomes the program's view of its mask, and is unblocked
 * for real (udt_sud_sig.c).  This thread, async-signal-safe.
 */
void	udt_sud_resync(void) UDT_HIDDEN;
/*
 * Around the program's pthread_create() whose clone dispatch let through
 * (udt_host_thread_created()): the view of the caller's mask as it was
 * before, which glibc's own mask calls after the clone, let through too,
 * put back.  This thread, async-signal-safe.
 */
void	udt_sig_create_begin(void) UDT_HIDDEN;
void	udt_sig_create_end(void) UDT_HIDDEN;
void	udt_sud_start(void) UDT_HIDDEN;

/*
 * udt_sud_stub pushes UDT_RW_NR_SUD for udt_rw_post's number: the call
 * it made was deferred by the handler, and udt_sud_take(rv, back, x)
 * gives its number + 1, puts where it returns in *back and, for an exec,
 * what udt_sud_exec_pre() changed in *x.  Only from
 * udt_rw_slow_post(); async-signal-safe.
 */
#define UDT_RW_NR_SUD	(-1L)
long	udt_sud_take(long, uintptr_t *, struct udt_sud_xsig *) UDT_HIDDEN;

/*
 * While dispatch is on, SIGSYS must never be blocked (a dispatch to a
 * blocked SIGSYS kills) and the program's own SIGSYS action is kept
 * aside.  udt_sud_guard() does that for a call made outside the SIGSYS
 * handler (a rewritten site): it makes rt_sigaction itself (1, result
 * in *rp), or points the masks in a[] at copies without SIGSYS, kept in
 * *tmp, for the caller to make the call (0).  Any thread, any context.
 */
struct udt_sud_psd {
	const uint64_t	*ps_set;
	size_t		 ps_len;
};
struct udt_sud_tmp {
	uint64_t		st_mask;
	struct udt_sud_psd	st_psd;
};
int	udt_sud_guard(long, long *, struct udt_sud_tmp *, long *) UDT_HIDDEN;

/*
 * In a new child process (fork, _Fork, syscall(SYS_fork)): drop the
 * parent's ring and attach on our own.  Only the calling thread exists;
 * raw system calls only.
 */
/*
 * Call the registered host client (udt_host.h): udt_host_attached() from
 * the constructor after its first attach, udt_host_fork_child() from the
 * fork handler in a child (async-signal-safe).  udt_host.c.
 */
void	udt_host_attached(void) UDT_HIDDEN;
void	udt_host_fork_child(void) UDT_HIDDEN;

void	udt_fork_child(void) UDT_HIDDEN;

/*
 * Whether syscall(3) number nr with first argument a0 creates a process
 * that keeps running this code on its own copy of memory, so that a
 * result of 0 means "in the child".
 */
int	udt_forklike(long nr, long a0) UDT_HIDDEN;
/* A call that makes a vfork child: vfork, clone or clone3 CLONE_VFORK. */
int	udt_vforklike(long nr, const long *a) UDT_HIDDEN;
/*
 * clone3's flags, from its struct clone_args (a[0], a[1] bytes) read
 * without faulting: 0, or -1 where the kernel refuses the call anyway.
 * Any context.
 */
int	udt_clone3_flags(const long *a, uint64_t *flags) UDT_HIDDEN;
/*
 * Before a system call with arguments a: note a clone that may start a
 * thread running beside the caller on this memory (udt_rw_mt, for the
 * entry's counting path).  Any context.
 */
void	udt_rw_mt_note(long nr, const long *a) UDT_HIDDEN;

/* The real clock_gettime (vDSO), resolved by the constructor. */
extern udt_fn_t	udt_real_clock_gettime_fn UDT_HIDDEN;

/* Bounds of this library's code, to cut its frames out of ustack. */
extern uintptr_t	udt_text_lo UDT_HIDDEN, udt_text_hi UDT_HIDDEN;

/*
 * The entry stamp of a call whose returns' durations are folded
 * (udt_sagg.h), as the script's @s[tid] would hold it: ul_call is its
 * systab index + 1 (0: none), ul_gen the call's sg_latgen then, ul_tsc
 * whether ul_t is a TSC value or ns.  Taken by the return, once.
 * Written and taken a field at a time, and a signal handler on an
 * alternate stack (recorded, not a recursion) may stamp in between:
 * ul_call is cleared first and set last, and ul_seq, moved by every
 * stamp, tells a writer or a taker that a handler's came in between,
 * so that no one pairs with a stamp half one call's, half another's.
 */
struct udt_lat {
	int64_t		ul_t;
	unsigned int	ul_call;
	uint16_t	ul_gen;
	uint8_t		ul_tsc;
	uint8_t		ul_seq;
};

/*
 * Stamps a thread's memory holds: its own and those of the vfork
 * children nested on it (a vfork child runs on its parent's thread
 * memory with a tid of its own, while the parent waits in vfork).
 */
#define UDT_LAT_DEPTH	8

/*
 * Per-thread state.  [t]: this thread only, including its signal
 * handlers, which is why the recording depth is more than a counter.
 */
struct udt_thread {
	int		ut_nest;	/* [t] recording depth */
	uintptr_t	ut_nest_sp;	/* [t] stack of the depth-1 entry */
	struct udt_rec	*ut_rec;	/* [t] reserved, not committed yet */
	uint64_t	ut_ticket;	/* [t] ut_rec's ticket */
	int		ut_inlib;	/* [t] the library's own calls */
	char		ut_sud;		/* [t] dispatch selector, udt_sud.c */
	char		ut_armed;	/* [t] dispatch is on for the thread */
	char		ut_traced;	/* [t] recorded: dispatch on once
					   udt_rw_complete ends */
	char		ut_sbtry;	/* [t] dispatch tried since int3
					   sites went back (udt_rw_slow()) */
	void		*ut_uc;		/* [t] the SIGSYS context it records */
	int		ut_tid;		/* [t] gettid(), 0: unknown */
	int		ut_vfork;	/* [t] > 0: a vfork child, on its
					   parent's memory and TLS until its
					   exec or exit; each child adds one,
					   its parent, back, takes it off
					   (udt_rw_slow_post()) */
	/* [t] the entry stamps, one a vfork depth (udt_lat_here()) */
	struct udt_lat	ut_lat[UDT_LAT_DEPTH];
	unsigned int	ut_commgen;	/* [t] udt_commgen of ut_comm */
	char		ut_comm[UDT_COMMLEN];	/* [t] */
};

extern __thread struct udt_thread udt_thread
    __attribute__((tls_model("initial-exec"))) UDT_HIDDEN;

/*
 * The stamp of whoever runs on t: a vfork child keeps its own, under its
 * own tid in the events, beside its waiting parent's, which it leaves as
 * it was; children nested deeper than UDT_LAT_DEPTH share the last (a
 * waiting parent's stamp is then lost, which only a call interrupted by
 * a handler that vforks would have kept).
 */
static inline struct udt_lat *
udt_lat_here(struct udt_thread *t)
{
	int d = t->ut_vfork;

	if (d < 0)
		d = 0;
	return &t->ut_lat[d < UDT_LAT_DEPTH ? d : UDT_LAT_DEPTH - 1];
}

/*
 * Enter the recording path at stack address sp (the caller's frame);
 * returns the depth to hand back to udt_nest_leave(): 0 for an outer
 * entry, more for one nested in a signal handler, which the caller drops
 * and counts as recursive.  This thread and its handlers only.
 *
 * A handler that interrupted a recording and left it by siglongjmp()
 * never ran the interrupted udt_nest_leave(): the depth would stay
 * raised and every later event of the thread
 * would be dropped as recursive, and a slot it had reserved would stall
 * the ring (udt_rec_void()).  A truly nested entry runs deeper on
 * the stack than the entry it interrupted (or on a signal stack, which
 * is mostly below); an entry at or above the recorded depth-1 frame is
 * the first after such a jump, and starts over at depth 0.  A signal
 * stack placed above the thread's stack is taken for a jump: that
 * nested event is recorded, not counted, and nothing else goes wrong,
 * since records are reserved and committed lock-free.
 */
/*
 * Give up the slot this thread reserved and will never commit (it left
 * the recording by siglongjmp()): commit it void, so dtd skips it now
 * rather than after UDT_STUCK_NSEC.  Only while the slot still waits for
 * this ticket: if dtd skipped it already and a later lap committed
 * there, the slot is not ours to touch; a later lap that reserved it but
 * has not committed overwrites our value with its own commit.
 */
static inline void
udt_rec_void(struct udt_thread *t)
{
	struct udt_rec *rec = t->ut_rec;
	uint64_t cur;

	if (rec == NULL)
		return;
	t->ut_rec = NULL;
	cur = __atomic_load_n(&rec->ur_seq, __ATOMIC_RELAXED);
	/* An older lap's, or our own claim (udt_rec_claim()). */
	if ((cur & ~(UDT_SEQ_VOID | UDT_SEQ_BUSY)) < t->ut_ticket + 1 ||
	    cur == ((t->ut_ticket + 1) | UDT_SEQ_BUSY))
		(void)__atomic_compare_exchange_n(&rec->ur_seq, &cur,
		    (t->ut_ticket + 1) | UDT_SEQ_VOID, 0, __ATOMIC_RELEASE,
		    __ATOMIC_RELAXED);
}

static inline int
udt_nest_enter(struct udt_thread *t, uintptr_t sp)
{
	int depth = t->ut_nest;

	if (depth != 0 && sp >= t->ut_nest_sp) {
		depth = 0;
		udt_rec_void(t);
	}
	if (depth == 0) {
		t->ut_nest_sp = sp;
		/* A handler arriving now must see sp with the new depth. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	t->ut_nest = depth + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return depth;
}

/* Leave what udt_nest_enter() entered: restore, never decrement. */
static inline void
udt_nest_leave(struct udt_thread *t, int depth)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->ut_nest = depth;
}

/*
 * The three steps of every record, shared by the hooks (udt_emit()) and
 * the timer fallback's samples.  This thread and its handlers only.
 *
 * udt_rec_enter(): raise the depth (*depthp, for udt_nest_leave(), which
 * the caller owes whatever this returns), then load the ring: only once
 * the depth is raised, since a fork child made by a handler in between
 * would have unmapped a ring loaded before.  NULL when there is no ring,
 * or when this entry is nested in a recording: then counted in
 * rh_recur[probe].
 */
static inline struct udt_ring_hdr *
udt_rec_enter(struct udt_thread *t, unsigned int probe, uintptr_t sp,
    int *depthp)
{
	struct udt_ring_hdr *r;

	*depthp = udt_nest_enter(t, sp);
	if ((r = __atomic_load_n(&udt_ring, __ATOMIC_ACQUIRE)) == NULL)
		return NULL;
	if (*depthp != 0) {
		__atomic_add_fetch(&r->rh_recur[probe], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->rh_recur_total, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return r;
}

/*
 * Claim a reserved slot as thread tid's (udt_wire.h): first of its
 * fields, so that dtd, finding it long uncommitted, can ask whether that
 * thread still runs, and, skipping it, whose opens lost an event (its
 * probe).  The release orders both before the claim.
 */
static inline void
udt_rec_claim(struct udt_rec *rec, uint64_t ticket, int32_t tid,
    unsigned int probe)
{
	rec->ur_tid = tid;
	rec->ur_probe = (uint16_t)probe;
	__atomic_store_n(&rec->ur_seq, (ticket + 1) | UDT_SEQ_BUSY,
	    __ATOMIC_RELEASE);
}

/*
 * udt_reserve(), and the slot remembered for udt_rec_void() until
 * udt_rec_commit(), in that order: a handler sees the ticket before the
 * slot it belongs to; then claimed as thread tid's.
 */
static inline struct udt_rec *
udt_rec_reserve(struct udt_thread *t, struct udt_ring_hdr *r,
    unsigned int probe, uint64_t *ticket, int32_t tid)
{
	struct udt_rec *rec;

	if ((rec = udt_reserve(r, probe, ticket)) == NULL)
		return NULL;
	t->ut_ticket = *ticket;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->ut_rec = rec;
	udt_rec_claim(rec, *ticket, tid, probe);
	return rec;
}

/* Publish a filled slot (release: dtd sees every field), forget it. */
static inline void
udt_rec_commit(struct udt_thread *t, struct udt_rec *rec, uint64_t ticket)
{
	__atomic_store_n(&rec->ur_seq, ticket + 1, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->ut_rec = NULL;
}

/*
 * The program's vector state beyond xmm0-15 (upper halves of ymm0-15,
 * zmm16-31, k0-7), kept across code that is not this library's
 * (udt_xstate.c): udt_xsave() before it, udt_xrstor() after, on a
 * struct udt_xsave of the caller's (2.6 KiB, on its stack).  Nothing
 * is saved where the CPU has none of it.  Any thread, any context;
 * each pair on one thread.
 */
#define UDT_XSAVE_SIZE	2688	/* XSAVE's standard form up to Hi16_ZMM */
struct udt_xsave {
	uint8_t		xs_area[UDT_XSAVE_SIZE];
} __attribute__((aligned(64)));
void	udt_xsave(struct udt_xsave *) UDT_HIDDEN;
void	udt_xrstor(const struct udt_xsave *) UDT_HIDDEN;

#endif /* UDT_PRELOAD_H */
