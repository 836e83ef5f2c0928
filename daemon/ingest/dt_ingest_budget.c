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
 * The lossless drain's budget and order (dt_ingest_budget.h).  No state
 * of its own: the plan is the caller's, and nothing here takes a lock.
 */
#include <limits.h>

#include "dt_ingest_budget.h"

unsigned int
dti_budget_room(unsigned int room, unsigned int held, unsigned int *reserve)
{
	unsigned int left = held < room ? room - held : 0;

	/*
	 * What a pass takes may all be held, younger than records that
	 * come after it (a new image's loader's, a thread's that waited
	 * for room) or that it left within the mark's slack; only taking
	 * those lets it go.  With all the room spent on it, nothing could
	 * be taken, and the drain stood still until the sequencer's bound
	 * D let the held ones out and made the older ones late.
	 */
	/*
	 * At least one: a ring of fewer than DTI_RESERVE_DIV slots kept
	 * none, and its drain stood still behind its own held events until
	 * the sequencer's patient bound let them out.
	 */
	*reserve = room / DTI_RESERVE_DIV;
	if (*reserve == 0)
		*reserve = 1;
	if (*reserve > left)
		*reserve = left;
	return left - *reserve;
}

void
dti_plan_begin(struct dti_plan *pl, unsigned int budget)
{
	pl->dpl_budget = budget;
}

unsigned int
dti_plan_allow(const struct dti_plan *pl)
{
	return pl->dpl_budget;
}

void
dti_plan_took(struct dti_plan *pl, unsigned int n)
{
	if (pl->dpl_budget != UINT_MAX)
		pl->dpl_budget -= n < pl->dpl_budget ? n : pl->dpl_budget;
}

int
dti_pick(const uint64_t *head, const bool *done, unsigned int n,
    uint64_t slack, uint64_t *bound)
{
	unsigned int i;
	int best = -1, next = -1;

	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		if (best < 0 || head[i] < head[best]) {
			next = best;
			best = (int)i;
		} else if (next < 0 || head[i] < head[next])
			next = (int)i;
	}
	/*
	 * A little past the next ring's oldest: rings whose threads'
	 * stamps interleave would otherwise give way after every record,
	 * each a drain call of its own.  What that lets through stays
	 * within the mark's slack (dti_low_mark()).
	 */
	if (next < 0 || head[next] > UINT64_MAX - slack)
		*bound = UINT64_MAX;
	else
		*bound = head[next] + slack;
	return best;
}
