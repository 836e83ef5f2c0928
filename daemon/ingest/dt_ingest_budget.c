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
dti_room(unsigned int size, unsigned int free)
{
	unsigned int half = (size + 1) / 2, head = size / DTI_HEADROOM_DIV;

	/*
	 * The drain's events are not all a lossless open gets: a profile
	 * or tracepoint probe of the same script puts into the same
	 * rings, and cannot wait for room.  With the whole free space the
	 * drain's budget and reserve filled the ring, and those dropped.
	 * Never less than half, though, as before the free space counted
	 * (no ring is pressed): with the free space less the headroom,
	 * whatever it was, four dd's behind btrace (latpairs) dropped
	 * 29643 events in one run of eight and had 11007 late in another.
	 */
	if (free == UINT_MAX || free <= head || free - head < half)
		return half;
	return free - head;
}

unsigned int
dti_allow(unsigned int size, unsigned int free)
{
	unsigned int head = size / DTI_HEADROOM_DIV;

	if (free == UINT_MAX)
		return (size + 1) / 2;
	return free > head ? free - head : 0;
}

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
	/*
	 * Whatever is left of the room: the sequencer lets no more of the
	 * held events into the rings than they have room for (dti_allow()).
	 * Cut to what was left, the reserve was nothing once held events
	 * filled the room, younger ones that only the older records still
	 * in the tracees' rings could let go: none could be taken, the
	 * reader's ring stood empty and the tracees waited, until the
	 * sequencer's patient bound let the held ones out and the older
	 * records came late (four dd's behind btrace: 12 to 28% of the
	 * events in half the runs, after 130 ms standing still).
	 */
	if (held >= DTI_HELD_MAX)
		*reserve = 0;
	else if (*reserve > DTI_HELD_MAX - held)
		*reserve = DTI_HELD_MAX - held;
	return left > *reserve ? left - *reserve : 0;
}

void
dti_plan_begin(struct dti_plan *pl, unsigned int budget)
{
	pl->dpl_budget = budget;
	pl->dpl_cap = UINT_MAX;
}

void
dti_plan_cap(struct dti_plan *pl, unsigned int cap)
{
	pl->dpl_cap = cap;
}

unsigned int
dti_plan_allow(const struct dti_plan *pl)
{
	return pl->dpl_budget < pl->dpl_cap ? pl->dpl_budget : pl->dpl_cap;
}

unsigned int
dti_floor(unsigned int budget, unsigned int nwait)
{
	uint64_t f;

	if (nwait == 0 || budget == 0)
		return 0;
	/*
	 * Not the whole even share: what a floor takes of a ring is
	 * younger, maybe, than what another ring still holds, and waits
	 * in the sequencer for it, taking room.
	 */
	f = (uint64_t)budget / ((uint64_t)DTI_FLOOR_DIV * nwait);
	return f > 0 ? (unsigned int)f : 1;
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

unsigned int
dti_order_run(struct dti_plan *pl, struct dti_order *o, unsigned int cap,
    uint64_t lim)
{
	uint64_t bound, head;
	unsigned int n = 0, got;
	bool more;
	int j;

	while (pl->dpl_budget > 0 && (j = dti_pick(o->do_head, o->do_done,
	    o->do_n, o->do_slack, &bound)) >= 0 &&
	    (lim == UINT64_MAX || o->do_head[j] < lim)) {
		dti_plan_cap(pl, cap == UINT_MAX ? UINT_MAX :
		    cap - o->do_took[j]);
		more = false;
		got = o->do_take(o->do_arg, (unsigned int)j,
		    bound < lim ? bound : lim, &head, &more);
		dti_plan_cap(pl, UINT_MAX);
		n += got;
		o->do_took[j] += got;
		/*
		 * Done with it for this pass: nothing taken (nothing
		 * committed, or a batch waiting for its look), or taken to
		 * the end of what was committed; or, for now, at its cap.
		 */
		if (got == 0 || !more)
			o->do_done[j] = true;
		else {
			o->do_head[j] = head;
			if (cap != UINT_MAX && o->do_took[j] >= cap)
				o->do_done[j] = o->do_capped[j] = true;
		}
	}
	return n;
}

unsigned int
dti_order_pass(struct dti_plan *pl, struct dti_order *o, unsigned int nwait,
    uint64_t lim)
{
	unsigned int i, n = 0, f, keep;

	for (i = 0; i < o->do_n; i++) {
		o->do_done[i] = o->do_capped[i] = false;
		o->do_took[i] = 0;
	}
	if (pl->dpl_budget == UINT_MAX)
		return dti_order_run(pl, o, UINT_MAX, lim);
	/*
	 * Oldest first, all but the floors; then each ring not yet at its
	 * floor up to it, oldest first; then what is left, oldest first.
	 * The stamps are the tracees' word: one stamped old, or a ring of
	 * void slots (nothing to order by, taken at once), won every turn
	 * and took every pass, while the others' threads waited past their
	 * bound and dropped.
	 */
	f = dti_floor(pl->dpl_budget, nwait);
	keep = (uint64_t)f * nwait < pl->dpl_budget ? f * nwait :
	    pl->dpl_budget;
	pl->dpl_budget -= keep;
	n += dti_order_run(pl, o, UINT_MAX, lim);
	pl->dpl_budget += keep;
	for (i = 0; i < o->do_n; i++)
		if (!o->do_done[i] && o->do_took[i] >= f)
			o->do_done[i] = o->do_capped[i] = true;
	n += dti_order_run(pl, o, f, lim);
	for (i = 0; i < o->do_n; i++)
		if (o->do_capped[i])
			o->do_done[i] = false;
	n += dti_order_run(pl, o, UINT_MAX, lim);
	return n;
}
