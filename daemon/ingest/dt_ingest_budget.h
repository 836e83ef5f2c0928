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
 * What a lossless drain pass may take from the tracees' rings, and in
 * which order (dt_ingest_budget.c): plain arithmetic on its arguments,
 * apart from the drain thread (dt_ingest_hold.c) so that a unit test
 * drives it pass by pass.  A plan is its caller's own; the drain's is
 * the drain thread's ([D]).
 */
#ifndef DT_INGEST_BUDGET_H
#define DT_INGEST_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct dti_plan {
	unsigned int	dpl_budget;	/* slots the pass may still take;
					   UINT_MAX: no bound */
	unsigned int	dpl_cap;	/* and the next ring's drain */
};

/*
 * The slots a pass may take: room, what the fullest lossless ring can
 * still take, less held, what of the drain's own the sequencer holds
 * for it, less *reserve: a part kept for the oldest records
 * (dti_drain_oldest()), which it takes even when held fills the room,
 * as long as held stays under DTI_HELD_MAX.
 */
#define DTI_RESERVE_DIV	8	/* the reserve: this part of the room */
#define DTI_HELD_MAX	16384	/* and no more held than this */
/*
 * The room of a pass, for rings of size slots the fullest of which has
 * free slots free (UINT_MAX: unknown): that less a headroom of
 * size / DTI_HEADROOM_DIV, but at least half the ring (no ring is
 * pressed, so half is free).
 */
#define DTI_HEADROOM_DIV 8	/* kept for the sources that do not wait */
unsigned int	dti_room(unsigned int size, unsigned int free);
/*
 * What of the drain's events the sequencer may put into rings of size
 * slots, the fullest of which has free slots free, until the next pass
 * (dt_source_room()): that less the headroom; not known (UINT_MAX),
 * half a ring, as dti_room() assumes.
 */
unsigned int	dti_allow(unsigned int size, unsigned int free);
unsigned int	dti_budget_room(unsigned int room, unsigned int held,
		    unsigned int *reserve);

/* A pass begins with budget slots (UINT_MAX: no bound), no cap. */
void		dti_plan_begin(struct dti_plan *, unsigned int budget);
/* The next ring's drain takes at most cap of them (UINT_MAX: no cap). */
void		dti_plan_cap(struct dti_plan *, unsigned int cap);
/* What the next ring's drain may take; UINT_MAX: no bound. */
unsigned int	dti_plan_allow(const struct dti_plan *);
/* That drain took n slots (a record may take more than it was allowed). */
void		dti_plan_took(struct dti_plan *, unsigned int n);

/*
 * Which ring a pass under a budget takes from next: of the n rings
 * whose oldest records are stamped head[i] (0: nothing to order by, a
 * slot to skip or one not committed yet, taken at once) and not done[i],
 * the one with the oldest, the first of equals; -1 when all are done.
 * *bound: the stamp after which that ring gives way, the next oldest's
 * plus slack; UINT64_MAX when no other ring has one.
 */
int		dti_pick(const uint64_t *head, const bool *done,
		    unsigned int n, uint64_t slack, uint64_t *bound);

/*
 * What of budget each of nwait rings with records waiting is sure of,
 * whatever the stamps in the others: a part of an even share, at least
 * one slot; of them all, at most budget.
 */
#define DTI_FLOOR_DIV	16	/* the floors: this part of the budget */
unsigned int	dti_floor(unsigned int budget, unsigned int nwait);

/*
 * A pass's turns over n rings (dti_drain_oldest()), each ring's oldest
 * stamp in do_head[] as dti_pick() wants it; the arrays are the
 * caller's, do_n long, and dti_order_pass() sets all but do_head.
 * do_take(do_arg, j, bound, &head) drains ring j as pl allows, drawing
 * on it itself (dti_plan_allow(), dti_plan_took()), none stamped after
 * bound but the first; it returns the slots taken, and true in *more
 * with the ring's new oldest in *head when it left records it could
 * take later in the pass.
 */
struct dti_order {
	uint64_t	*do_head;
	bool		*do_done;	/* nothing more this pass */
	bool		*do_capped;	/* at its cap for now */
	unsigned int	*do_took;	/* slots taken this pass */
	unsigned int	 do_n;
	uint64_t	 do_slack;	/* dti_pick()'s */
	unsigned int	(*do_take)(void *, unsigned int, uint64_t,
			    uint64_t *, bool *);
	void		*do_arg;
};

/*
 * One pass under pl's budget: oldest first, but each of the nwait rings
 * with records waiting sure of its floor (dti_floor()); none past lim, as
 * dti_order_run() (UINT64_MAX: no limit), floors or not.  Returns the
 * slots taken.  The caller's thread; no lock.
 */
unsigned int	dti_order_pass(struct dti_plan *pl, struct dti_order *o,
		    unsigned int nwait, uint64_t lim);
/*
 * Turns, oldest first, while pl has budget, among the rings not done,
 * each at most cap slots in all this pass (UINT_MAX: none), none from a
 * ring whose oldest is stamped lim or later, nor past it (UINT64_MAX:
 * no limit).  Returns the slots taken.
 */
unsigned int	dti_order_run(struct dti_plan *pl, struct dti_order *o,
		    unsigned int cap, uint64_t lim);

#endif /* DT_INGEST_BUDGET_H */
