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
 * The lossless drain's budget (dt_ingest_budget.h).  No state of its
 * own: the plan is the caller's, and nothing here takes a lock.
 */
#include <limits.h>

#include "dt_ingest_budget.h"

unsigned int
dti_budget_room(unsigned int room, unsigned int held)
{
	return held < room ? room - held : 0;
}

void
dti_plan_begin(struct dti_plan *pl, unsigned int budget, unsigned int n)
{
	pl->dpl_budget = budget;
	/*
	 * Where the last pass ran out, if it did; the list may have
	 * changed since (a tracee attached at its head, or left), which
	 * moves the turn by as many: some tracee may wait a pass more.
	 */
	pl->dpl_first = n > 0 ? pl->dpl_next % n : 0;
	pl->dpl_n = n;
	pl->dpl_turn = 0;
	pl->dpl_next = pl->dpl_first;
	pl->dpl_cut = false;
	/*
	 * An even share, or the first rings of the list would take it all,
	 * pass after pass, while the last ones' threads waited past their
	 * bound and dropped.
	 */
	if (budget == UINT_MAX)
		pl->dpl_share = UINT_MAX;
	else {
		pl->dpl_share = n > 1 ? budget / n : budget;
		if (pl->dpl_share == 0)
			pl->dpl_share = 1;
	}
}

unsigned int
dti_plan_first(const struct dti_plan *pl)
{
	return pl->dpl_first;
}

unsigned int
dti_plan_allow(struct dti_plan *pl)
{
	/*
	 * The first turn the budget does not reach is the next pass's
	 * first: starting every pass at the list's head, the first
	 * tracees took what few slots there were, pass after pass, and
	 * the last ones' threads waited past their bound and dropped.
	 */
	if (pl->dpl_budget == 0 && !pl->dpl_cut) {
		pl->dpl_cut = true;
		pl->dpl_next = pl->dpl_n > 0 ?
		    (pl->dpl_first + pl->dpl_turn) % pl->dpl_n : 0;
	}
	return pl->dpl_budget < pl->dpl_share ? pl->dpl_budget :
	    pl->dpl_share;
}

void
dti_plan_took(struct dti_plan *pl, unsigned int n)
{
	pl->dpl_turn++;
	if (pl->dpl_budget != UINT_MAX)
		pl->dpl_budget -= n < pl->dpl_budget ? n : pl->dpl_budget;
}
