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
 * The sequencer's held events (dt_seq_hold.c), shared with dt_seq.c and
 * no one else: the run, the heap, the slots the two point into and the
 * free slots' stack, and the deep user stacks the slots own.
 *
 * dt_seq.c decides what is held and when it goes; dt_seq_hold.c keeps
 * it: where an entry goes, which is the oldest, the memory and its
 * charge.  Every function and global here is [s]: dt_seq_mtx, taken by
 * dt_seq.c's entry points, never here.
 *
 * Locks used to protect the globals in this file:
 *	[s]	dt_seq_mtx (dt_seq.c)
 */
#ifndef DT_SEQ_VAR_H
#define DT_SEQ_VAR_H

#include <stdbool.h>
#include <stdint.h>

#include "dt_softc.h"

/* A held event and where it goes. */
struct dt_seq_slot {
	struct dt_evt		 dss_ev;
	struct dt_deepstack	*dss_deep;	/* its user stack, deeper than
						   dss_ev's, or NULL; owned */
	void			*dss_target;	/* a dt_probe or a dt_pcb */
	struct dt_source	*dss_src;	/* who put it, or NULL */
	unsigned int		 dss_cpu;
	bool			 dss_pcb;	/* dss_target is a pcb */
};

/*
 * A run or heap entry: small, so sifting and the run's copies move 24
 * bytes, not an event.
 */
struct dt_seq_ent {
	uint64_t		 dse_ns;	/* time stamp */
	uint64_t		 dse_seq;	/* arrival: ties stay FIFO */
	uint32_t		 dse_slot;
};

extern struct dt_seq_ent	*dt_seq_heap;	/* [s] dt_seq_cap */
extern struct dt_seq_ent	*dt_seq_run;	/* [s] dt_seq_cap, a ring */
extern struct dt_seq_slot	*dt_seq_slots;	/* [s] dt_seq_cap */
extern uint32_t			*dt_seq_freeslots; /* [s] free slots' stack */
extern uint32_t			 dt_seq_n;	/* [s] held: hn + rn */
extern uint32_t			 dt_seq_hn;	/* [s] in the heap */
extern uint32_t			 dt_seq_rn;	/* [s] in the run */
extern uint32_t			 dt_seq_rhead;	/* [s] the run's oldest */
extern uint32_t			 dt_seq_cap;	/* [s] */
/* dt_seq.c's: dt_seq_deep_dup() counts dss_deepcut. */
extern struct dt_seq_stats	 dt_seq_counters;	/* [s] */

/* Does a go before b: older, or as old and come first. */
static inline bool
dt_seq_less(const struct dt_seq_ent *a, const struct dt_seq_ent *b)
{
	if (a->dse_ns != b->dse_ns)
		return a->dse_ns < b->dse_ns;
	return a->dse_seq < b->dse_seq;
}

/* The run's entry k places after its head.  [s] */
static inline struct dt_seq_ent *
dt_seq_runent(uint32_t k)
{
	return &dt_seq_run[(dt_seq_rhead + k) % dt_seq_cap];
}

/* The oldest held event's entry: the run's head or the heap's top.  [s] */
static inline const struct dt_seq_ent *
dt_seq_oldest(void)
{
	const struct dt_seq_ent *r;

	r = dt_seq_rn > 0 ? &dt_seq_run[dt_seq_rhead] : NULL;
	if (dt_seq_hn > 0 && (r == NULL || dt_seq_less(&dt_seq_heap[0], r)))
		return &dt_seq_heap[0];
	return r;
}

/*
 * A copy of u to hold, charged as the store is; NULL when u is, or
 * without the memory (counted: dss_deepcut).  [s]
 */
struct dt_deepstack	*dt_seq_deep_dup(const struct dt_deepstack *u);
/* Free a held slot's deep stack, if any, and its charge.  [s] */
void	dt_seq_deep_free(struct dt_seq_slot *);
/* Restore the heap's order below entry i.  [s] */
void	dt_seq_sift_down(uint32_t i);
/* Hold e, whose slot is filled: in the run or the heap.  [s] */
void	dt_seq_hold(const struct dt_seq_ent *e);
/* Take the oldest held event off; its slot is freed.  dt_seq_n > 0.  [s] */
uint32_t	dt_seq_pop(void);
/* Room for more held events, charged; whether there is.  [s] */
bool	dt_seq_grow(void);
/* Give a large store back once nothing is held.  [s] */
void	dt_seq_shrink(void);
/*
 * Free the store and its charge; the held events' deep stacks must be
 * freed first (dt_seq_fini()).  [s]
 */
void	dt_seq_store_free(void);

#endif /* DT_SEQ_VAR_H */
