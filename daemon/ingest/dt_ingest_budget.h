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
 * What a lossless drain pass may take from the tracees' rings, and how
 * it shares that among them (dt_ingest_budget.c): plain arithmetic on
 * its arguments, apart from the drain thread (dt_ingest_drain.c) so that
 * a unit test drives it pass by pass.  A plan is its caller's own; the
 * drain's is the drain thread's ([D]).
 */
#ifndef DT_INGEST_BUDGET_H
#define DT_INGEST_BUDGET_H

#include <stdbool.h>

struct dti_plan {
	unsigned int	dpl_budget;	/* slots the pass may still take;
					   UINT_MAX: no bound */
	unsigned int	dpl_share;	/* what one ring may take of it */
	unsigned int	dpl_first;	/* the list index the pass starts at */
	unsigned int	dpl_n;		/* tracees in the pass */
	unsigned int	dpl_turn;	/* turns given so far in the pass */
	unsigned int	dpl_next;	/* where the next pass starts */
	bool		dpl_cut;	/* a turn found the budget spent */
};

/*
 * The slots a pass may take: room, what the fullest lossless ring can
 * still take, less held, what of the drain's own the sequencer holds
 * for it.
 */
unsigned int	dti_budget_room(unsigned int room, unsigned int held);

/*
 * A pass over n tracees begins with budget slots (UINT_MAX: no bound):
 * each gets an even share.  The pass takes the tracees in list order
 * from dti_plan_first() on, wrapping around: the first tracee the last
 * pass's budget did not reach, so that with fewer slots than tracees
 * each still gets its turn every few passes.  A plan is zeroed once,
 * then goes from pass to pass.
 */
void		dti_plan_begin(struct dti_plan *, unsigned int budget,
		    unsigned int n);
unsigned int	dti_plan_first(const struct dti_plan *);
/*
 * What the next tracee's turn may take; UINT_MAX: no bound.  Once a
 * turn, before dti_plan_took().
 */
unsigned int	dti_plan_allow(struct dti_plan *);
/* That turn took n slots (a record may take more than it was allowed). */
void		dti_plan_took(struct dti_plan *, unsigned int n);

#endif /* DT_INGEST_BUDGET_H */
