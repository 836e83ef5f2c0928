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
 * A per-CPU event ring of one open, as dt(4)'s dt_cpubuf: a circular
 * array of whole dt_evt records, one slot always empty, so a ring of
 * size n holds n - 1 unread events (16 reproduces OpenBSD's 15).
 *
 * Producers are any of dtd's event sources (the ingest loop, the timer
 * thread, the perf reader), several of which may fill the ring of one
 * CPU, so the ring takes a mutex: short critical sections, one record
 * copy, never contended by more than a handful of threads.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_ring_init()
 *	[m]	dr_mtx
 *	[r]	the reader: one dt_ring_merge() at a time (dt_softc's [m])
 */
#ifndef DT_RING_H
#define DT_RING_H

#include <sys/uio.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

struct dt_ring {
	pthread_mutex_t	 dr_mtx;
	struct dt_evt	*dr_slots;	/* [I] dr_size records */
	unsigned int	 dr_size;	/* [I] slots */
	unsigned int	 dr_prod;	/* [m] next slot to fill */
	unsigned int	 dr_cons;	/* [m] next slot to read; [r] writes it */
	unsigned int	 dr_rhead;	/* [r] next slot this read takes */
	unsigned int	 dr_rend;	/* [r] dr_prod as this read began */
	uint64_t	 dr_readevt;	/* [m] records consumed by read(2) */
	uint64_t	 dr_dropevt;	/* [m] records lost, ring full */
	uint64_t	 dr_skiptick;	/* [m] timer periods skipped */
	uint64_t	 dr_recurevt;	/* [m] recursive events dropped */
	_Atomic uint64_t dr_filtevt;	/* [a] rejected by a filter at the
					   source: counted without dr_mtx,
					   which such an event never takes */
	_Atomic uint64_t dr_lateevt;	/* [a] put after a later event:
					   the sequencer's late path */
	unsigned int	 dr_pressed;	/* [m] counted in dt_ring_pressed() */
	bool		 dr_lossless;	/* [m] an open that asked for
					   lossless has put into it */
	bool		 dr_stkdirty;	/* [m] some slot's stack frames or
					   strings may not be zero */
} __attribute__((aligned(64)));		/* keep CPUs off each other's line */

/*
 * Lossless backpressure (DTEVT_LOSSLESS, dtvar.h): how many rings now
 * hold half their size or more after a put that asked for lossless,
 * and have not yet been read down to a quarter.  dtd's ingest drain
 * holds the tracees' records back while it is not 0, so that their
 * threads wait (bounded) instead of the reader's ring dropping.  Any
 * thread; relaxed: a hint, never a promise.
 */
unsigned int	dt_ring_pressed(void);

/*
 * The free slots of dr if an open that asked for lossless has put into
 * it, else UINT_MAX.  Any thread but one holding dr's lock.
 */
unsigned int	dt_ring_room(struct dt_ring *dr);

/*
 * Whether dr is one of those dt_ring_pressed() counts.  Any thread but
 * one holding dr's lock.
 */
bool		dt_ring_is_pressed(struct dt_ring *dr);

/*
 * How many reads have taken records from a pressed ring, ever: a
 * lossless reader the drain holds for that reads, however slowly, moves
 * it; another open's reads do not, so that one that stopped reading
 * still gets the drain's pass-through.  Any thread; relaxed, a hint.
 */
uint64_t	dt_ring_reads(void);

/*
 * Between these, this thread's puts (dt_ring_put(), dt_ring_put_more(),
 * dt_ring_count()) may keep the last ring's dr_mtx for the next put into
 * it, a few dozen puts at most; any other call here, a put into another
 * ring, or dt_ring_batch_end() gives it back.  So between them the
 * thread must take no lock that a holder of dr_mtx may wait for, and
 * must end the batch before it may wait for a reader.  Not nested.
 * Hence a hard rule: nothing is ever taken under a dr_mtx (it is a
 * leaf, taken last, under the sequencer's lock at most); a lock taken
 * under it would deadlock against a batching producer.
 */
void	dt_ring_batch_begin(void);
void	dt_ring_batch_end(void);

/* Map the slots (lazily committed by the kernel).  0 or ENOMEM. */
int	dt_ring_init(struct dt_ring *, unsigned int size);
void	dt_ring_fini(struct dt_ring *);

/* Not a DTEVT_* flag: copy dtev_args/retval/error too. */
#define DT_RING_ARGS	(1ULL << 63)
/* Not one either: a return whose dtev_retval[1] is dtd's own (dtp_lat). */
#define DT_RING_NORV1	(1ULL << 62)

/*
 * Copy src into the next slot keeping only what evtflags asks for, with
 * pbn and cpu set; count a drop when full.  Any thread.  Returns 0 or
 * ENOBUFS.  The unlock is a release: a reader that takes dr_mtx after it
 * sees the whole record.
 */
int	dt_ring_put(struct dt_ring *, uint32_t pbn, unsigned int cpu,
	    uint64_t evtflags, const struct dt_evt *src);

/*
 * dt_ring_put() of src followed by nmore continuation records (more[],
 * complete: dtev_pbn and dtev_cpu are set here), all in one go or none
 * (one drop counted): DTEVT_DEEPSTACK's records (dtvar.h) must never
 * be parted from their event.  src's stacks are copied whole, st_count
 * included, when it says more than STACKTRACE_MAX.
 */
int	dt_ring_put_more(struct dt_ring *, uint32_t pbn, unsigned int cpu,
	    uint64_t evtflags, const struct dt_evt *src,
	    const struct dt_evt *more, unsigned int nmore);

/*
 * Move up to resid bytes of records from the n rings drs into buf, the
 * last one truncated when resid is not a multiple of the record size, as
 * dt(4)'s read does (a truncated record is consumed and counted as
 * read); returns the bytes written.  Each next record is the oldest
 * (dtev_tsp) of those at the rings' heads, ties to the ring first after
 * drs[first].  Each ring stays FIFO, as dt(4) promises; on top of that a
 * read gives its records in time order, as far as each ring is, so an
 * event on one CPU and its sequel on another (a syscall's entry and
 * return across a migration, an I/O's issue and its completion) come in
 * order.  The records are those put before the read looked at the
 * rings, all at one instant; later ones wait for the next read.  Takes
 * every ring's dr_mtx together, in index order, only to see where the
 * records end (so a caller must hold none), none while copying, and
 * each ring's again only if some were read.  One caller at a time, any
 * thread.
 */
size_t	dt_ring_merge(struct dt_ring *drs, unsigned int n, unsigned int first,
	    char *buf, size_t resid);

/*
 * dt_ring_merge() in three steps, for a reader that hands the records
 * on without a copy of its own (a FUSE reply's writev copies them
 * straight from the slots): dt_ring_merge_begin() sees where the
 * records end, as dt_ring_merge() does; dt_ring_merge_runs() then gives
 * the next up to resid bytes as at most niov runs of consecutive slots
 * (*nrun of them; the bytes returned), in dt_ring_merge()'s order, and
 * may be called again for more; dt_ring_merge_count() counts them read
 * (before the reader can see them: it may ask for the counters at once);
 * dt_ring_merge_end() gives back the slots taken.  Until then the runs'
 * slots stay the reader's: no producer writes them.  Same locks and
 * callers as dt_ring_merge().
 */
void	dt_ring_merge_begin(struct dt_ring *drs, unsigned int n);
size_t	dt_ring_merge_runs(struct dt_ring *drs, unsigned int n,
	    unsigned int first, struct iovec *iov, unsigned int niov,
	    unsigned int *nrun, size_t resid);
void	dt_ring_merge_count(struct dt_ring *drs, unsigned int n);
void	dt_ring_merge_end(struct dt_ring *drs, unsigned int n);

/*
 * dt(4)'s own read (--openbsd-strict): the same, but ring after ring,
 * from drs[first] on, each drained in FIFO order until resid is used up,
 * with no ordering across rings (dt_dev.c 1.48's dtread, dt-abi 4.4).
 * Holds each ring's dr_mtx while copying its records (OpenBSD's rings
 * are 16 slots).  One caller at a time, any thread.
 */
size_t	dt_ring_walk(struct dt_ring *drs, unsigned int n, unsigned int first,
	    char *buf, size_t resid);

/* Whether a record is waiting.  Takes dr_mtx: see dt_dev_read(). */
int	dt_ring_readable(struct dt_ring *);

/* Add to the drop, skipped-tick and recursion counters.  Any thread. */
void	dt_ring_count(struct dt_ring *, uint64_t ndrop, uint64_t nskip,
	    uint64_t nrecur);

/* Add this ring's counters to st. */
void	dt_ring_stats(struct dt_ring *, struct dtioc_stat *st);

/* Count n events a filter at the source rejected.  Any thread. */
void	dt_ring_count_filtered(struct dt_ring *, uint64_t n);
void	dt_ring_count_late(struct dt_ring *);
uint64_t dt_ring_late(struct dt_ring *);

/* This ring's filtered count.  Any thread. */
uint64_t dt_ring_filtered(struct dt_ring *);

#endif /* DT_RING_H */
