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
 * The lossless drain's budget and order (dt_ingest_budget.c), pass by
 * pass as the drain thread runs them (dti_drain_oldest()), on rings of
 * made-up stamps:
 *
 *  - a pass the budget cuts takes the oldest records of all the rings
 *    first: what it leaves is younger than what it took (but for the
 *    slack), so the mark lets what it took go.  Taken ring by ring, a
 *    cut pass took one tracee's young records and left another's old
 *    ones, which came late once the sequencer's bound let the young
 *    ones out; and with fewer slots than tracees, each pass starting at
 *    the list's head, the last tracees got nothing, pass after pass.
 *  - the budget keeps a reserve: when everything the passes took is
 *    held behind an older record that comes later, a pass can still
 *    take that record.  Without it, the held events filled the room
 *    and no pass could take anything until the bound D let them go.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dt_ingest_budget.h"
#include "dtt.h"

#define NR	16		/* rings */
#define NREC	4096		/* records a ring */
#define SLACK	200		/* dti_pick()'s slack, in stamp units */

struct ring {
	uint64_t	r_ts[NREC];
	unsigned int	r_tail, r_n;
};

static struct ring	rings[NR];

static uint64_t
head(const struct ring *r)
{
	return r->r_tail < r->r_n ? r->r_ts[r->r_tail] : 0;
}

/*
 * One cut pass over nr rings with budget slots, as dti_drain_oldest():
 * pick, take up to the bound (at least one record), again.  *newest:
 * the youngest record taken.  Returns records taken.
 */
static unsigned int
pass(unsigned int nr, unsigned int budget, uint64_t *newest)
{
	struct dti_plan pl;
	uint64_t h[NR], bound;
	bool done[NR];
	unsigned int i, n, total = 0;
	struct ring *r;
	int j;

	*newest = 0;
	dti_plan_begin(&pl, budget);
	for (i = 0; i < nr; i++) {
		h[i] = head(&rings[i]);
		done[i] = h[i] == 0;
	}
	while (pl.dpl_budget > 0 &&
	    (j = dti_pick(h, done, nr, SLACK, &bound)) >= 0) {
		r = &rings[j];
		for (n = 0; n < dti_plan_allow(&pl) && r->r_tail < r->r_n &&
		    (n == 0 || r->r_ts[r->r_tail] <= bound); n++) {
			if (r->r_ts[r->r_tail] > *newest)
				*newest = r->r_ts[r->r_tail];
			r->r_tail++;
		}
		dti_plan_took(&pl, n);
		total += n;
		if ((h[j] = head(r)) == 0)
			done[j] = true;
	}
	return total;
}

/*
 * nr rings, each a thread's stamps at its own pace, interleaved, and
 * passes of budget slots until all are taken: each pass takes some, and
 * what it leaves is no older than what it took, less the slack, so no
 * ring's records wait while younger ones go (the first rings of the
 * list took them all, the last ones' threads waited past their bound).
 */
static bool
cut_passes(unsigned int nr, unsigned int budget, const char *what)
{
	uint64_t newest, oldest_left;
	unsigned int i, k, npass = 0, took;
	bool order = true, left, moved = true;

	for (i = 0; i < nr; i++) {
		rings[i].r_tail = 0;
		rings[i].r_n = NREC / (i + 1);
		for (k = 0; k < rings[i].r_n; k++)
			rings[i].r_ts[k] = 1000 + i * 7 + (uint64_t)k * (i + 1) *
			    10;
	}
	do {
		took = pass(nr, budget, &newest);
		moved &= took > 0;
		npass++;
		left = false;
		oldest_left = UINT64_MAX;
		for (i = 0; i < nr; i++) {
			if (rings[i].r_tail == rings[i].r_n)
				continue;
			left = true;
			if (head(&rings[i]) < oldest_left)
				oldest_left = head(&rings[i]);
		}
		if (left && oldest_left + SLACK < newest)
			order = false;
	} while (left && npass < 100000);
	return dtt_check(!left && order && moved,
	    "%s: %u rings, %u slots a pass: all taken in %u passes, each "
	    "took some (%s), oldest first (%s)", what, nr, budget, npass,
	    moved ? "yes" : "no", order ? "yes" : "no");
}

/*
 * The held events only go once an older record is taken: every pass
 * takes its budget of young records, all held; then an older one comes
 * (a loader's, handed over late).  Whether some pass can still take it,
 * with the reader's ring empty the whole time (room stays the same).
 */
static bool
pinned(unsigned int room)
{
	unsigned int held = 0, budget, reserve = 0, p;

	for (p = 0; p < 64; p++) {
		budget = dti_budget_room(room, held, &reserve);
		held += budget;
	}
	return dtt_check(held < room && reserve > 0,
	    "room %u, every pass's records held: %u held, a reserve of %u "
	    "for the older record", room, held, reserve);
}

int
main(void)
{
	uint64_t h[4] = { 50, 30, 0, 30 }, bound;
	bool done[4] = { false, false, true, false };
	unsigned int b, reserve;
	bool ok = true;

	dtt_check(dti_pick(h, done, 4, 5, &bound) == 1 && bound == 35,
	    "pick: the oldest, the first of equals, up to the next's + slack");
	done[1] = done[3] = true;
	dtt_check(dti_pick(h, done, 4, 5, &bound) == 0 &&
	    bound == UINT64_MAX, "pick: the last ring left has no bound");
	done[0] = true;
	dtt_check(dti_pick(h, done, 4, 5, &bound) == -1, "pick: none left");
	h[0] = 0;
	done[0] = done[1] = false;
	dtt_check(dti_pick(h, done, 4, 5, &bound) == 0 && bound == 35,
	    "pick: a ring with nothing to order by goes first");

	b = dti_budget_room(4096, 0, &reserve);
	dtt_check(b + reserve == 4096 && reserve == 4096 / DTI_RESERVE_DIV,
	    "room 4096, nothing held: %u and a reserve of %u", b, reserve);
	b = dti_budget_room(4096, 4090, &reserve);
	dtt_check(b == 0 && reserve == 6, "room 4096, 4090 held: %u, %u",
	    b, reserve);
	b = dti_budget_room(2048, 4096, &reserve);
	dtt_check(b == 0 && reserve == 0, "more held than room: nothing");
	pinned(4096);
	pinned(16);
	/* Fewer slots than DTI_RESERVE_DIV: a reserve of one all the same. */
	pinned(7);
	pinned(1);

	for (b = 1; b < NR && ok; b += 2)
		ok = cut_passes(NR, b, "fewer slots than rings");
	cut_passes(4, 64, "four rings");
	cut_passes(NR, 1000, "a pass's worth for all");
	return dtt_done();
}
