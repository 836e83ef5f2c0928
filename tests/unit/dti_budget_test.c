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
 * pass through dti_order_pass(), as the drain thread runs it
 * (dti_drain_oldest()), on rings of made-up stamps:
 *
 *  - a pass the budget cuts takes the oldest records of all the rings
 *    first: what it leaves is younger than what it took (but for the
 *    slack and the floors), so the mark lets what it took go.  Taken ring by ring, a
 *    cut pass took one tracee's young records and left another's old
 *    ones, which came late once the sequencer's bound let the young
 *    ones out; and with fewer slots than tracees, each pass starting at
 *    the list's head, the last tracees got nothing, pass after pass.
 *  - the budget keeps a reserve: when everything the passes took is
 *    held behind an older record that comes later, a pass can still
 *    take that record.  Without it, the held events filled the room
 *    and no pass could take anything until the bound D let them go.
 *    So does a pass whose held events fill the room, or more (the
 *    sequencer lets into the rings only what they have room for,
 *    dti_allow()): cut to what was left of the room, the reserve was
 *    nothing then, and the drain stood still until the sequencer's
 *    patient bound let the held events out before the older records.
 *  - a ring whose stamps are forged old does not take every pass: each
 *    other ring with records gets its floor.
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
static struct dti_plan	plan;
static uint64_t		newest;		/* the youngest record a pass took */
static bool		forger;		/* ring 0 refills as it is taken */

static uint64_t
head(const struct ring *r)
{
	return r->r_tail < r->r_n ? r->r_ts[r->r_tail] : 0;
}

/* struct dti_order's do_take, on the rings above, as dti_drain() does. */
static unsigned int
take(void *arg, unsigned int j, uint64_t bound, uint64_t *h, bool *more)
{
	struct ring *r = &rings[j];
	unsigned int n;

	(void)arg;
	for (n = 0; n < dti_plan_allow(&plan) && r->r_tail < r->r_n &&
	    (n == 0 || r->r_ts[r->r_tail] <= bound); n++) {
		if (r->r_ts[r->r_tail] > newest)
			newest = r->r_ts[r->r_tail];
		r->r_tail++;
		if (forger && j == 0 && r->r_tail == r->r_n)
			r->r_tail = 0;	/* it commits as fast as it is taken */
	}
	dti_plan_took(&plan, n);
	*more = r->r_tail < r->r_n;
	*h = head(r);
	return n;
}

/*
 * One cut pass over nr rings with budget slots, through
 * dti_order_pass() as dti_drain_oldest() runs it.  took[i]: what ring i
 * gave.  Returns records taken.
 */
static uint64_t		passlim = UINT64_MAX;	/* pass()'s lim */

static unsigned int
pass(unsigned int nr, unsigned int budget, unsigned int *took)
{
	static uint64_t h[NR];
	static bool done[NR], capped[NR];
	struct dti_order o = { .do_head = h, .do_done = done,
	    .do_capped = capped, .do_took = took, .do_n = nr,
	    .do_slack = SLACK, .do_take = take };
	unsigned int i, nwait = 0;

	newest = 0;
	dti_plan_begin(&plan, budget);
	for (i = 0; i < nr; i++) {
		h[i] = head(&rings[i]);
		if (rings[i].r_tail < rings[i].r_n)
			nwait++;
	}
	return dti_order_pass(&plan, &o, nwait, passlim);
}

static void
fill(unsigned int nr)
{
	unsigned int i, k;

	for (i = 0; i < nr; i++) {
		rings[i].r_tail = 0;
		rings[i].r_n = NREC / (i + 1);
		for (k = 0; k < rings[i].r_n; k++)
			rings[i].r_ts[k] = 1000 + i * 7 + (uint64_t)k * (i + 1) *
			    10;
	}
}

/*
 * nr rings, each a thread's stamps at its own pace, interleaved, and
 * passes of budget slots until all are taken: each pass takes some, and
 * of what it leaves, no more than the floors are older than what it
 * took, less the slack (the first rings of the list took them all, the
 * last ones' threads waited past their bound).
 */
static bool
cut_passes(unsigned int nr, unsigned int budget, const char *what)
{
	uint64_t oldest_left;
	unsigned int i, npass = 0, took[NR], n, before, over, worst = 0;
	bool left, moved = true;

	fill(nr);
	do {
		n = pass(nr, budget, took);
		moved &= n > 0;
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
		/* What was taken past the oldest left, and its slack. */
		over = 0;
		for (i = 0; i < nr && left; i++)
			for (before = rings[i].r_tail - took[i];
			    before < rings[i].r_tail; before++)
				if (rings[i].r_ts[before] > oldest_left + SLACK)
					over++;
		if (over > worst)
			worst = over;
	} while (left && npass < 100000);
	return dtt_check(!left && moved && worst <=
	    nr * dti_floor(budget, nr), "%s: %u rings, %u slots a pass: all "
	    "taken in %u passes, each took some (%s), at most the floors "
	    "(%u) out of order: %u", what, nr, budget, npass,
	    moved ? "yes" : "no", nr * dti_floor(budget, nr), worst);
}

/*
 * Ring 0 is a tracee that stamps every record older than anything
 * (1), and commits as fast as it is taken; the others are honest.
 * Oldest first alone, it took every pass's budget, and the others'
 * threads waited past UDT_WAIT_NSEC and dropped: now each honest ring
 * gets its floor every pass while it has records.
 */
static bool
forged_old(unsigned int nr, unsigned int budget)
{
	unsigned int i, p, took[NR], sum[NR] = { 0 }, f, had[NR];
	bool fair = true;

	fill(nr);
	for (i = 0; i < NREC; i++)
		rings[0].r_ts[i] = 1;
	rings[0].r_n = NREC;
	forger = true;
	f = dti_floor(budget, nr);
	for (p = 0; p < 16; p++) {
		for (i = 1; i < nr; i++)
			had[i] = rings[i].r_n - rings[i].r_tail;
		pass(nr, budget, took);
		for (i = 1; i < nr; i++) {
			sum[i] += took[i];
			if (took[i] < (had[i] < f ? had[i] : f))
				fair = false;
		}
	}
	forger = false;
	if (f * nr <= budget)
		return dtt_check(fair, "a ring stamped old beside %u honest "
		    "ones, %u slots a pass: each honest ring took its floor "
		    "(%u) or all it had, every pass", nr - 1, budget, f);
	/* Fewer slots than floors: the floors go oldest first, in turn. */
	for (i = 1, f = UINT_MAX; i < nr; i++)
		if (sum[i] < f)
			f = sum[i];
	return dtt_check(f > 0, "a ring stamped old beside %u honest "
	    "ones, %u slots a pass: each honest ring took %u or more in 16 "
	    "passes", nr - 1, budget, f);
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

/*
 * A pass under an exec's hold takes nothing stamped past it, the floors
 * neither: it would only be held, in the room.
 */
static bool
held_exec(unsigned int nr)
{
	unsigned int took[NR], i;
	uint64_t lim = 1000 + 500;

	fill(nr);
	passlim = lim;
	pass(nr, 1000, took);
	passlim = UINT64_MAX;
	for (i = 0; i < nr; i++)
		if (rings[i].r_tail > 0 &&
		    rings[i].r_ts[rings[i].r_tail - 1] > lim)
			break;
	return dtt_check(i == nr && newest > 0 && newest <= lim,
	    "an exec's hold: nothing taken past it (newest %llu, "
	    "hold %llu)", (unsigned long long)newest,
	    (unsigned long long)lim);
}

/*
 * Held events fill the room, or more, younger than records still in the
 * tracees' rings: a pass still takes the oldest of those, up to
 * DTI_HELD_MAX held.
 */
static bool
filled(unsigned int room)
{
	unsigned int b, reserve, want = room / DTI_RESERVE_DIV;

	if (want == 0)
		want = 1;
	b = dti_budget_room(room, room, &reserve);
	if (!dtt_check(b == 0 && reserve == want, "room %u, all of it held: "
	    "%u and a reserve of %u", room, b, reserve))
		return false;
	b = dti_budget_room(room, 2 * room, &reserve);
	return dtt_check(b == 0 && reserve == want, "room %u, twice that "
	    "held: %u and a reserve of %u", room, b, reserve);
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
	dtt_check(b == 0 && reserve == 4096 / DTI_RESERVE_DIV,
	    "room 4096, 4090 held: %u, %u", b, reserve);
	filled(4096);
	filled(16);
	filled(7);
	b = dti_budget_room(4096, DTI_HELD_MAX - 10, &reserve);
	dtt_check(b == 0 && reserve == 10, "10 short of the most held: "
	    "%u, a reserve of %u", b, reserve);
	b = dti_budget_room(4096, DTI_HELD_MAX, &reserve);
	dtt_check(b == 0 && reserve == 0, "the most held: nothing");
	/*
	 * What the sequencer lets into the rings: their free space less
	 * the headroom, half a ring when that is not known.
	 */
	dtt_check(dti_allow(4096, 4095) == 4095 - 512 &&
	    dti_allow(4096, 600) == 600 - 512 && dti_allow(4096, 512) == 0 &&
	    dti_allow(4096, 0) == 0 && dti_allow(4096, UINT_MAX) == 2048 &&
	    dti_allow(16, 15) == 13, "allow: the free space less an eighth "
	    "of the ring, half the ring when not known");
	/*
	 * Past half the ring, a pass leaves the headroom free whatever
	 * the reader read.
	 */
	for (b = 2048 + 512; b <= 4095; b += 65)
		ok &= dti_room(4096, b) + (4095 - b) <= 4095 - 4096 / 8;
	dtt_check(ok && dti_room(4096, 4095) == 4095 - 512 &&
	    dti_room(4096, UINT_MAX) == 2048 && dti_room(4096, 2100) ==
	    2048 && dti_room(4, 3) == 3, "room: the free space less an "
	    "eighth of the ring, at least half the ring");
	ok = true;
	pinned(4096);
	pinned(16);
	/* Fewer slots than DTI_RESERVE_DIV: a reserve of one all the same. */
	pinned(7);
	pinned(1);

	for (b = 1; b < NR && ok; b += 2)
		ok = cut_passes(NR, b, "fewer slots than rings");
	cut_passes(4, 64, "four rings");
	cut_passes(NR, 1000, "a pass's worth for all");
	forged_old(4, 4096);
	forged_old(NR, 100);
	forged_old(NR, 3);
	held_exec(4);
	held_exec(NR);
	return dtt_done();
}
