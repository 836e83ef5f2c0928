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
 * Aggregations at the source (dtvar.h, DTIOCPRBAGG, DTIOCAGGREAD): an
 * open's events of a probe folded into a bounded table where they are
 * put, instead of a ring slot each.  DTrace keeps its aggregations in
 * per-CPU buffers the consumer merges; dtd's producers are a few
 * threads (the ingest drain, perf readers, the sequencer's release), so
 * one table per open under one lock, as a ring's put takes one.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after DTIOCPRBAGG made it
 *	[K]	dt_dev_lock, the configuration lock
 *	[a]	atomic operations
 *	[t]	dat_mtx, the table's lock
 */
#ifndef DT_AGG_H
#define DT_AGG_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

struct dt_softc;
struct dt_pcb;
struct dt_uaccess;
struct dt_deepstack;

/* Which entry fields an aggregation keys on (das_keys). */
#define DTA_K_PID	0x0001
#define DTA_K_TID	0x0002
#define DTA_K_CPU	0x0004
#define DTA_K_PBN	0x0008
#define DTA_K_COMM	0x0010
#define DTA_K_RETVAL	0x0020
#define DTA_K_ERRNO	0x0040
#define DTA_K_KSTACK	0x0080
#define DTA_K_USTACK	0x80000		/* past DTA_K_ARG0 << 9 */
#define DTA_K_STACKS	(DTA_K_KSTACK | DTA_K_USTACK)
#define DTA_K_ARG0	0x0100		/* << n */

/* The key is everything before the values; padding included, zeroed. */
#define DTA_KEYLEN	offsetof(struct dtioc_aggent, dtae_count)

/* One DTIOCPRBAGG: what a probe's events fold into. */
struct dt_aggspec {
	struct dt_aggspec	*das_next;	/* [K] next of the same probe,
						   read-only while recording */
	struct dtioc_aggspec	 das_req;	/* [I] as checked, id set */
	uint32_t		 das_keys;	/* [I] DTA_K_* of the keys */
};

/* One generation of a stack table: stacks by id, an open-addressed hash. */
struct dt_stkgen {
	struct dtioc_aggstack	*sg_stks;	/* [t] by id - 1 */
	uint32_t		*sg_hash;	/* [t] id, 0 empty */
	uint32_t		 sg_n;		/* [t] stacks in use */
};

/*
 * The open's stack table (DTF_KSTACK, DTF_USTACK keys): each distinct
 * stack once, by id.  Two generations: stacks are interned into
 * dsk_cur; a DTIOCAGGREAD that empties the entries retires it (its
 * entries name its ids) for DTIOCAGGSTACKS and starts the other afresh,
 * so a client that reads as it goes needs room for the stacks of one
 * read's entries, not of the whole run.  Under the aggregation table's
 * dat_mtx, [t] all.
 */
struct dt_aggstk {
	struct dt_stkgen	 dsk_gen[2];
	struct dt_stkgen	*dsk_cur;	/* [t] interned into */
	struct dt_stkgen	*dsk_rd;	/* [t] the last read's */
	uint32_t		 dsk_size;	/* [I] stacks a generation */
	uint32_t		 dsk_hmask;	/* [I] hash slots - 1 */
	uint64_t		 dsk_overflow;	/* [t] events refused for a
						   stack, once each however
						   many aggregations */
};

/* The open's table: entries in an open-addressed hash, [t] all. */
struct dt_aggtab {
	pthread_mutex_t		 dat_mtx;
	struct dtioc_aggent	*dat_ents;	/* [t] dat_size of them */
	uint32_t		*dat_hash;	/* [t] entry + 1, 0 empty */
	uint32_t		 dat_size;	/* [I] entries at most */
	uint32_t		 dat_hmask;	/* [I] hash slots - 1 */
	uint32_t		 dat_n;		/* [t] entries in use */
	uint64_t		 dat_aggevt;	/* [t] events folded, once an
						   aggregation */
	uint64_t		 dat_kcount;	/* [t] of them, counters',
						   the same unit */
	uint64_t		 dat_overflow;	/* [t] events a full table
						   could not fold */
	_Atomic uint64_t	 dat_srcstk;	/* [a] events a source
						   recorded for want of room
						   for their stacks */
	struct dt_aggstk	*_Atomic dat_stk; /* [K] set once, [a] read:
						   made by the first spec
						   with a stack key,
						   published as ds_agg */
	struct dt_aggspec	**dat_specs;	/* [K] by id - 1 */
	uint32_t		 dat_nspecs;	/* [K] */
};

/*
 * DTIOCPRBAGG: check spec, make sc's table on the first (charged to
 * sc's user as rings are) and its stack table on the first spec with a
 * stack key (dtas_stksize, charged too), and chain a new aggregation on
 * every pcb of its probe.  Under [K], sc not recording.  0 or an errno;
 * on an error nothing is left made for this spec but sc's table.
 */
int	dt_agg_spec(struct dt_softc *sc, struct dtioc_aggspec *spec);

/*
 * Fold src (an event dp's filter kept, as the provider saw it, for ring
 * cpu) into every aggregation of dp.  k and u: its kernel and user
 * stacks walked deeper than src's stacktraces hold (dt_deepstack), or
 * NULL for src's own; only a stack key reads them.  The same contract
 * as dt_pcb_ring_put(): any thread inside rcu_read_lock(), on a
 * recording pcb; one lock, no allocation.  Returns 0, or ENOBUFS when
 * a full table could not take a new key or a full stack table a new
 * stack (counted: dat_overflow per aggregation, dsk_overflow once).
 */
int	dt_agg_put(struct dt_pcb *dp, unsigned int cpu,
	    const struct dt_evt *src, const struct dt_deepstack *k,
	    const struct dt_deepstack *u);

/*
 * Fold n events into key k of tab (its entry made if new), their values
 * summing to sum, between min and max; false, counted as overflow, when
 * a full table has no room for k.  Under [t].
 */
bool	dt_agg_fold_ent(struct dt_aggtab *tab, const struct dtioc_aggent *k,
	    uint64_t n, int64_t sum, int64_t min, int64_t max);

/* hist()'s class of v: -1 for v < 0, 0 for 0, k + 1 for 2^k <= v. */
int64_t	dt_agg_pow2(int64_t v);

/*
 * DTIOCAGGREAD into the caller's buffer through ua.  Any thread, no
 * lock of the core held ([K] is not needed: the table outlives every
 * ioctl of its open).
 */
int	dt_agg_read(struct dt_softc *sc, struct dtioc_aggread *rd,
	    const struct dt_uaccess *ua);

/* Close, no producer left: free sc's table and specs. */
void	dt_agg_free(struct dt_softc *sc);

/* dt_aggstk.c */

/*
 * A stack table of size stacks (0: the default), charged to sc's user;
 * *sizep says the size made.  Under [K].  0 or ENOMEM.
 */
int	dt_aggstk_new(struct dt_softc *sc, uint32_t *sizep,
	    struct dt_aggstk **stkp);

/*
 * The id of the n frames at pc in stk, interned if new: 0 for n == 0,
 * -1 when a full table has no room for it.  Under [t].
 */
int32_t	dt_aggstk_intern(struct dt_aggstk *stk, const uint64_t *pc,
	    unsigned int n);

/*
 * A DTIOCAGGREAD copied the entries: DTIOCAGGSTACKS is to read the
 * generation they name, and with clear, interning starts on the other,
 * emptied.  Under [t].
 */
void	dt_aggstk_mark(struct dt_aggstk *stk, bool clear);

/*
 * DTIOCAGGSTACKS into the caller's buffer through ua.  Any thread, as
 * dt_agg_read(); takes [t] itself.
 */
int	dt_aggstk_read(struct dt_softc *sc, struct dtioc_aggstkread *rd,
	    const struct dt_uaccess *ua);

/* Close: free stk and uncharge sc's user. */
void	dt_aggstk_free(struct dt_softc *sc, struct dt_aggstk *stk);

#endif /* DT_AGG_H */
