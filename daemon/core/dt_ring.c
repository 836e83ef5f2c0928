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

/* An open's per-CPU event rings and their counters: see dt_ring.h. */
#include <sys/mman.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "dt_ring.h"

int
dt_ring_init(struct dt_ring *dr, unsigned int size)
{
	void *p;

	memset(dr, 0, sizeof(*dr));
	if (size < 2)
		return EINVAL;
	/*
	 * mmap rather than calloc: large default rings cost memory only
	 * for the pages events actually pass through.
	 */
	p = mmap(NULL, (size_t)size * sizeof(struct dt_evt),
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return ENOMEM;
	dr->dr_slots = p;
	dr->dr_size = size;
	pthread_mutex_init(&dr->dr_mtx, NULL);
	return 0;
}

/*
 * A put batch (dt_ring_batch_begin()): the ring whose dr_mtx this thread
 * kept after its last put, so that the next put into the same ring takes
 * no lock.  A sequencer's release puts hundreds of events oldest first,
 * most of them into one CPU's ring, and a lock and an unlock per event
 * were a tenth of dtd's samples at two million events a second: each
 * unlock waited for the record's stores to leave the CPU.  At most one
 * ring is kept, as a put holds one (dt_ring_merge()), and only for
 * DT_RING_KEEP_MAX puts, so a reader's merge waits a few microseconds
 * for it at most.
 */
#define DT_RING_KEEP_MAX	64
static _Thread_local bool		 dt_ring_batching;	/* [t] */
static _Thread_local struct dt_ring	*dt_ring_kept;		/* [t] */
static _Thread_local unsigned int	 dt_ring_nkept;		/* [t] */

/* Give back the ring this thread kept, if any.  [t] */
static void
dt_ring_unkeep(void)
{
	if (dt_ring_kept == NULL)
		return;
	pthread_mutex_unlock(&dt_ring_kept->dr_mtx);
	dt_ring_kept = NULL;
}

/* A put's lock of dr: the one this thread kept, or taken.  [t] */
static void
dt_ring_lock(struct dt_ring *dr)
{
	if (dt_ring_kept == dr)
		return;
	dt_ring_unkeep();
	pthread_mutex_lock(&dr->dr_mtx);
	dt_ring_nkept = 0;
}

/* A put's unlock of dr: kept in a batch, up to DT_RING_KEEP_MAX.  [t] */
static void
dt_ring_unlock(struct dt_ring *dr)
{
	if (dt_ring_batching && ++dt_ring_nkept < DT_RING_KEEP_MAX) {
		dt_ring_kept = dr;
		return;
	}
	dt_ring_kept = NULL;
	pthread_mutex_unlock(&dr->dr_mtx);
}

void
dt_ring_batch_begin(void)
{
	dt_ring_batching = true;
}

void
dt_ring_batch_end(void)
{
	dt_ring_batching = false;
	dt_ring_unkeep();
}

static unsigned int dt_ring_npressed;	/* [a] rings with dr_pressed */
static uint64_t	dt_ring_nreads;		/* [a] reads that took records
					   of a pressed ring */

uint64_t
dt_ring_reads(void)
{
	return __atomic_load_n(&dt_ring_nreads, __ATOMIC_RELAXED);
}

unsigned int
dt_ring_pressed(void)
{
	return __atomic_load_n(&dt_ring_npressed, __ATOMIC_RELAXED);
}

/* Records in dr now.  Under dr_mtx. */
static unsigned int
dt_ring_fill(const struct dt_ring *dr)
{
	return (dr->dr_prod + dr->dr_size - dr->dr_cons) % dr->dr_size;
}

unsigned int
dt_ring_room(struct dt_ring *dr)
{
	unsigned int room = UINT_MAX;

	dt_ring_unkeep();
	pthread_mutex_lock(&dr->dr_mtx);
	if (dr->dr_lossless)
		room = dr->dr_size - 1 - dt_ring_fill(dr);
	pthread_mutex_unlock(&dr->dr_mtx);
	return room;
}

bool
dt_ring_is_pressed(struct dt_ring *dr)
{
	bool pressed;

	dt_ring_unkeep();
	pthread_mutex_lock(&dr->dr_mtx);
	pressed = dr->dr_pressed != 0;
	pthread_mutex_unlock(&dr->dr_mtx);
	return pressed;
}

/*
 * After a put for an open that asked for lossless (or one that found
 * the ring full): pressed from half full.  Under dr_mtx.
 */
static void
dt_ring_press(struct dt_ring *dr, uint64_t evtflags)
{
	if (evtflags & DTEVT_LOSSLESS)
		dr->dr_lossless = true;
	if ((evtflags & DTEVT_LOSSLESS) && !dr->dr_pressed &&
	    dt_ring_fill(dr) * 2 >= dr->dr_size - 1) {
		dr->dr_pressed = 1;
		__atomic_add_fetch(&dt_ring_npressed, 1, __ATOMIC_RELAXED);
	}
}

/*
 * After a read: no longer pressed once under half, so that every read
 * of a reader that keeps reading lets the drain go on: the tracees it
 * holds back wait for the drain's progress, a few ms at most, not for
 * a slow reader to empty the ring.  Under dr_mtx.
 */
static void
dt_ring_unpress(struct dt_ring *dr, bool all)
{
	if (dr->dr_pressed && (all || dt_ring_fill(dr) * 2 < dr->dr_size - 1)) {
		dr->dr_pressed = 0;
		__atomic_sub_fetch(&dt_ring_npressed, 1, __ATOMIC_RELAXED);
	}
}

void
dt_ring_fini(struct dt_ring *dr)
{
	if (dr->dr_slots == NULL)
		return;
	dt_ring_unkeep();
	dt_ring_unpress(dr, true);
	munmap(dr->dr_slots, (size_t)dr->dr_size * sizeof(struct dt_evt));
	pthread_mutex_destroy(&dr->dr_mtx);
	dr->dr_slots = NULL;
}

/*
 * A stack as a client may trust it: st_count within bounds, nothing but
 * zeroes past it, whatever the provider's buffer held.  NULL: empty.
 */
static void
dt_stack_copy(struct stacktrace *dst, const struct stacktrace *src)
{
	unsigned int n = 0;

	if (src != NULL) {
		n = src->st_count < STACKTRACE_MAX ? src->st_count :
		    STACKTRACE_MAX;
		memcpy(dst->st_pc, src->st_pc, n * sizeof(dst->st_pc[0]));
	}
	dst->st_count = n;
	memset(&dst->st_pc[n], 0, (STACKTRACE_MAX - n) * sizeof(dst->st_pc[0]));
}

/*
 * Copy the requested parts of src into dr's slot dst; the rest of dst
 * must read as zero.  Most opens ask for no stack and no strings, and
 * then the frames, two thirds of a record, are zero in every slot: a
 * ring's pages start zero and nothing else ever wrote there
 * (dr_stkdirty).  Only st_count is written then: clearing the frames
 * of every record again wrote five cache lines of seven that the reader
 * on another CPU had just read, each fetched back for the write.  Under
 * dr_mtx.
 */
static void
dt_evt_copy(struct dt_ring *dr, struct dt_evt *dst, uint32_t pbn,
    unsigned int cpu, uint64_t evtflags, const struct dt_evt *src)
{
	dst->dtev_pbn = pbn;
	dst->dtev_cpu = cpu;
	dst->dtev_pid = src->dtev_pid;
	dst->dtev_tid = src->dtev_tid;
	dst->dtev_tsp = src->dtev_tsp;

	if (evtflags & (DTEVT_STRINGS | DTEVT_KSTACK | DTEVT_USTACK))
		dr->dr_stkdirty = true;
	/*
	 * Syscall events carry their strings where a kernel stack would
	 * be (DTEVT_STRINGS, dtvar.h), and never a kernel stack: an open
	 * that did not ask for strings reads the zeros it always read.
	 */
	if (!dr->dr_stkdirty) {
		dst->dtev_kstack.st_count = 0;
		dst->dtev_ustack.st_count = 0;
	} else {
		if (evtflags & DTEVT_STRINGS) {
			dst->dtev_kstack.st_count = 0;
			memcpy(dst->dtev_kstack.st_pc, src->dtev_kstack.st_pc,
			    sizeof(dst->dtev_kstack.st_pc));
		} else
			dt_stack_copy(&dst->dtev_kstack,
			    (evtflags & DTEVT_KSTACK) ? &src->dtev_kstack :
			    NULL);
		dt_stack_copy(&dst->dtev_ustack, (evtflags & DTEVT_USTACK) ?
		    &src->dtev_ustack : NULL);
	}
	if (evtflags & DTEVT_EXECNAME) {
		/* strncpy pads: no stale byte after the NUL reaches a reader */
		strncpy(dst->dtev_comm, src->dtev_comm, DTMAXCOMLEN);
		dst->dtev_comm[DTMAXCOMLEN - 1] = '\0';
	} else
		memset(dst->dtev_comm, 0, DTMAXCOMLEN);
	/* DT_RING_ARGS: set by dt_pcb_ring_put() from dtp_argsflag. */
	if (evtflags & DT_RING_ARGS)
		dst->_args = src->_args;
	else
		memset(&dst->_args, 0, sizeof(dst->_args));
	if (evtflags & DT_RING_NORV1)
		dst->dtev_retval[1] = 0;
}

int
dt_ring_put(struct dt_ring *dr, uint32_t pbn, unsigned int cpu,
    uint64_t evtflags, const struct dt_evt *src)
{
	unsigned int next;

	dt_ring_lock(dr);
	next = dr->dr_prod + 1;
	if (next == dr->dr_size)
		next = 0;
	if (next == dr->dr_cons) {
		dr->dr_dropevt++;
		dt_ring_press(dr, evtflags);
		dt_ring_unlock(dr);
		return ENOBUFS;
	}
	dt_evt_copy(dr, &dr->dr_slots[dr->dr_prod], pbn, cpu, evtflags, src);
	dr->dr_prod = next;
	dt_ring_press(dr, evtflags);
	dt_ring_unlock(dr);
	return 0;
}

int
dt_ring_put_more(struct dt_ring *dr, uint32_t pbn, unsigned int cpu,
    uint64_t evtflags, const struct dt_evt *src, const struct dt_evt *more,
    unsigned int nmore)
{
	struct dt_evt *dst;
	unsigned int free, i;

	dt_ring_lock(dr);
	/* one slot always stays empty: prod == cons is an empty ring */
	free = (dr->dr_cons + dr->dr_size - dr->dr_prod - 1) % dr->dr_size;
	if (free < nmore + 1) {
		dr->dr_dropevt++;
		dt_ring_press(dr, evtflags);
		dt_ring_unlock(dr);
		return ENOBUFS;
	}
	dst = &dr->dr_slots[dr->dr_prod];
	/* Continuation records fill whole slots, frames and all. */
	dr->dr_stkdirty = true;
	dt_evt_copy(dr, dst, pbn, cpu, evtflags, src);
	/*
	 * the depth past STACKTRACE_MAX is what tells of the records; a
	 * kernel stack area that carries strings has none
	 */
	if ((evtflags & DTEVT_KSTACK) && !(evtflags & DTEVT_STRINGS))
		dst->dtev_kstack.st_count = src->dtev_kstack.st_count;
	if (evtflags & DTEVT_USTACK)
		dst->dtev_ustack.st_count = src->dtev_ustack.st_count;
	for (i = 0; i < nmore; i++) {
		if (++dr->dr_prod == dr->dr_size)
			dr->dr_prod = 0;
		dst = &dr->dr_slots[dr->dr_prod];
		*dst = more[i];
		dst->dtev_pbn = pbn | DTEV_PBN_MORE;
		dst->dtev_cpu = cpu;
	}
	if (++dr->dr_prod == dr->dr_size)
		dr->dr_prod = 0;
	dt_ring_press(dr, evtflags);
	dt_ring_unlock(dr);
	return 0;
}

/* Is a's time stamp before b's? */
static bool
dt_evt_before(const struct dt_evt *a, const struct dt_evt *b)
{
	if (a->dtev_tsp.tv_sec != b->dtev_tsp.tv_sec)
		return a->dtev_tsp.tv_sec < b->dtev_tsp.tv_sec;
	return a->dtev_tsp.tv_nsec < b->dtev_tsp.tv_nsec;
}

void
dt_ring_merge_begin(struct dt_ring *drs, unsigned int n)
{
	struct dt_ring *dr;
	unsigned int i;

	/*
	 * The slots from dr_cons to dr_prod are the reader's until it moves
	 * dr_cons: producers fill only the others.  So each ring's lock is
	 * taken to see where its records end and again to give back the
	 * slots read; the merge and the copy run with no lock held, and no
	 * producer waits for a read.
	 *
	 * Where the records end is seen under every ring's lock at once, in
	 * index order (producers hold one lock at a time): the sequencer
	 * puts oldest first, one ring after another, and a look taken ring
	 * by ring could see a younger event already put into one ring but
	 * miss an older one put into a ring looked at before it.  The read
	 * would then hand out a completion before its issue.
	 */
	dt_ring_unkeep();
	for (i = 0; i < n; i++)
		pthread_mutex_lock(&drs[i].dr_mtx);
	for (i = 0; i < n; i++) {
		dr = &drs[i];
		dr->dr_rhead = dr->dr_cons;
		dr->dr_rend = dr->dr_prod;
	}
	for (i = n; i-- > 0;)
		pthread_mutex_unlock(&drs[i].dr_mtx);
}

size_t
dt_ring_merge_runs(struct dt_ring *drs, unsigned int n, unsigned int first,
    struct iovec *iov, unsigned int niov, unsigned int *nrun, size_t resid)
{
	struct dt_ring *dr, *best, *next;
	unsigned int i, bpos, npos, k, lim;
	size_t done = 0, len;

	*nrun = 0;
	while (resid > 0 && *nrun < niov) {
		best = next = NULL;
		bpos = npos = 0;
		for (i = 0; i < n; i++) {
			dr = &drs[(first + i) % n];
			if (dr->dr_rhead == dr->dr_rend)
				continue;
			if (best == NULL || dt_evt_before(
			    &dr->dr_slots[dr->dr_rhead],
			    &best->dr_slots[best->dr_rhead])) {
				next = best;
				npos = bpos;
				best = dr;
				bpos = i;
			} else if (next == NULL || dt_evt_before(
			    &dr->dr_slots[dr->dr_rhead],
			    &next->dr_slots[next->dr_rhead])) {
				next = dr;
				npos = i;
			}
		}
		if (best == NULL)
			break;
		/*
		 * best's records from its head on go as one run while each
		 * would win against every other ring's head, that is against
		 * next's (the oldest of them, the first of equals in the
		 * walk's order): one run, not a look at every ring per
		 * record.  A reader that keeps up reads one CPU's run after
		 * another's.
		 */
		k = 0;
		lim = best->dr_rend >= best->dr_rhead ? best->dr_rend :
		    best->dr_size;
		while (best->dr_rhead + k < lim &&
		    (k + 1) * sizeof(struct dt_evt) <= resid &&
		    (next == NULL || dt_evt_before(&best->dr_slots[
		    best->dr_rhead + k], &next->dr_slots[next->dr_rhead]) ||
		    (bpos < npos && !dt_evt_before(&next->dr_slots[
		    next->dr_rhead], &best->dr_slots[best->dr_rhead + k]))))
			k++;
		if (k == 0) {
			/* The last, truncated record: resid is less than one. */
			k = 1;
			len = resid;
		} else
			len = k * sizeof(struct dt_evt);
		iov[*nrun].iov_base = &best->dr_slots[best->dr_rhead];
		iov[*nrun].iov_len = len;
		(*nrun)++;
		done += len;
		resid -= len;
		best->dr_rhead += k;
		if (best->dr_rhead == best->dr_size)
			best->dr_rhead = 0;
	}
	return done;
}

void
dt_ring_merge_count(struct dt_ring *drs, unsigned int n)
{
	struct dt_ring *dr;
	unsigned int i;

	for (i = 0; i < n; i++) {
		dr = &drs[i];
		if (dr->dr_rhead == dr->dr_cons)
			continue;
		pthread_mutex_lock(&dr->dr_mtx);
		dr->dr_readevt += (dr->dr_rhead + dr->dr_size - dr->dr_cons) %
		    dr->dr_size;
		pthread_mutex_unlock(&dr->dr_mtx);
	}
}

void
dt_ring_merge_end(struct dt_ring *drs, unsigned int n)
{
	struct dt_ring *dr;
	unsigned int i;
	bool pressed = false;

	/* A ring nothing was taken from has nothing to give back. */
	for (i = 0; i < n; i++) {
		dr = &drs[i];
		if (dr->dr_rhead == dr->dr_cons)
			continue;
		pthread_mutex_lock(&dr->dr_mtx);
		pressed |= dr->dr_pressed != 0;
		dr->dr_cons = dr->dr_rhead;
		/*
		 * Caught up: start again at slot 0.  A reader that keeps up
		 * then keeps the producers in the ring's first pages, warm
		 * in the cache and faulted in long ago, whatever the ring's
		 * size; walked end to end, a ring faults in and zeroes a
		 * page every nine records on its first lap, and a bigger
		 * ring spent longer on that lap, so it lost more.
		 */
		if (dr->dr_cons == dr->dr_prod)
			dr->dr_cons = dr->dr_prod = 0;
		dt_ring_unpress(dr, false);
		pthread_mutex_unlock(&dr->dr_mtx);
	}
	if (pressed)
		__atomic_add_fetch(&dt_ring_nreads, 1, __ATOMIC_RELAXED);
}


size_t
dt_ring_merge(struct dt_ring *drs, unsigned int n, unsigned int first,
    char *buf, size_t resid)
{
	struct iovec iov[64];
	unsigned int i, nrun;
	size_t done = 0, got;

	dt_ring_merge_begin(drs, n);
	while (resid > 0 && (got = dt_ring_merge_runs(drs, n, first, iov,
	    sizeof(iov) / sizeof(iov[0]), &nrun, resid)) > 0) {
		for (i = 0; i < nrun; i++) {
			memcpy(buf + done, iov[i].iov_base, iov[i].iov_len);
			done += iov[i].iov_len;
		}
		resid -= got;
	}
	dt_ring_merge_count(drs, n);
	dt_ring_merge_end(drs, n);
	return done;
}

size_t
dt_ring_walk(struct dt_ring *drs, unsigned int n, unsigned int first,
    char *buf, size_t resid)
{
	struct dt_ring *dr;
	unsigned int i, taken;
	size_t done = 0, len;

	dt_ring_unkeep();
	for (i = 0; i < n && resid > 0; i++) {
		dr = &drs[(first + i) % n];
		taken = 0;
		pthread_mutex_lock(&dr->dr_mtx);
		while (resid > 0 && dr->dr_cons != dr->dr_prod) {
			len = resid < sizeof(struct dt_evt) ? resid :
			    sizeof(struct dt_evt);
			memcpy(buf + done, &dr->dr_slots[dr->dr_cons], len);
			done += len;
			resid -= len;
			if (++dr->dr_cons == dr->dr_size)
				dr->dr_cons = 0;
			taken++;
		}
		/* A truncated record is consumed and read, as in dt(4). */
		dr->dr_readevt += taken;
		if (taken > 0 && dr->dr_pressed)
			__atomic_add_fetch(&dt_ring_nreads, 1,
			    __ATOMIC_RELAXED);
		dt_ring_unpress(dr, false);
		pthread_mutex_unlock(&dr->dr_mtx);
	}
	return done;
}

int
dt_ring_readable(struct dt_ring *dr)
{
	int readable;

	dt_ring_unkeep();
	pthread_mutex_lock(&dr->dr_mtx);
	readable = dr->dr_cons != dr->dr_prod;
	pthread_mutex_unlock(&dr->dr_mtx);
	return readable;
}

void
dt_ring_count(struct dt_ring *dr, uint64_t ndrop, uint64_t nskip,
    uint64_t nrecur)
{
	dt_ring_lock(dr);
	dr->dr_dropevt += ndrop;
	dr->dr_skiptick += nskip;
	dr->dr_recurevt += nrecur;
	dt_ring_unlock(dr);
}

void
dt_ring_stats(struct dt_ring *dr, struct dtioc_stat *st)
{
	dt_ring_unkeep();
	pthread_mutex_lock(&dr->dr_mtx);
	/* True sums: dt(4) 1.48 assigns skiptick and recurevt instead. */
	st->dtst_readevt += dr->dr_readevt;
	st->dtst_dropevt += dr->dr_dropevt;
	st->dtst_skiptick += dr->dr_skiptick;
	st->dtst_recurevt += dr->dr_recurevt;
	pthread_mutex_unlock(&dr->dr_mtx);
}

void
dt_ring_count_filtered(struct dt_ring *dr, uint64_t n)
{
	/* Only a sum is ever read: no order with anything else needed. */
	atomic_fetch_add_explicit(&dr->dr_filtevt, n, memory_order_relaxed);
}

uint64_t
dt_ring_filtered(struct dt_ring *dr)
{
	return atomic_load_explicit(&dr->dr_filtevt, memory_order_relaxed);
}

void
dt_ring_count_late(struct dt_ring *dr)
{
	/* As dr_filtevt: only a sum is ever read. */
	atomic_fetch_add_explicit(&dr->dr_lateevt, 1, memory_order_relaxed);
}

uint64_t
dt_ring_late(struct dt_ring *dr)
{
	return atomic_load_explicit(&dr->dr_lateevt, memory_order_relaxed);
}
