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
 * apart from the drain thread (dt_ingest_drain.c) so that a unit test
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
};

/*
 * The slots a pass may take: room, what the fullest lossless ring can
 * still take, less held, what of the drain's own the sequencer holds
 * for it, less *reserve: a part kept for records older than what is
 * held (dti_drain_oldest()).
 */
#define DTI_RESERVE_DIV	8	/* the reserve: this part of the room */
unsigned int	dti_budget_room(unsigned int room, unsigned int held,
		    unsigned int *reserve);

/* A pass begins with budget slots (UINT_MAX: no bound). */
void		dti_plan_begin(struct dti_plan *, unsigned int budget);
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

#endif /* DT_INGEST_BUDGET_H */
