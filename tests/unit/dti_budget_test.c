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
 * The lossless drain's budget (dt_ingest_budget.c), pass by pass as the
 * drain thread runs it (dti_drain_main()): every tracee with records
 * waiting gets some of every few passes' budget, however many tracees
 * there are for it.  Each pass started at the list's head: with fewer
 * slots than tracees, the first ones took them all, pass after pass,
 * and the last ones' threads waited past their bound and dropped.
 */
#include <limits.h>
#include <string.h>

#include "dt_ingest_budget.h"
#include "dtt.h"

#define NT	16

/*
 * npass passes over nt tracees whose rings never run dry, budget slots
 * each: the passes each tracee got nothing in, at most, in a row.
 */
static unsigned int
starved(unsigned int nt, unsigned int budget, unsigned int npass,
    unsigned int *took)
{
	struct dti_plan pl;
	unsigned int p, i, t, allow, dry[NT] = { 0 }, worst = 0;

	memset(&pl, 0, sizeof(pl));
	memset(took, 0, nt * sizeof(*took));
	for (p = 0; p < npass; p++) {
		dti_plan_begin(&pl, budget, nt);
		for (i = 0; i < nt; i++) {
			t = (dti_plan_first(&pl) + i) % nt;
			allow = dti_plan_allow(&pl);
			took[t] += allow;
			dti_plan_took(&pl, allow);
			dry[t] = allow == 0 ? dry[t] + 1 : 0;
			if (dry[t] > worst)
				worst = dry[t];
		}
	}
	return worst;
}

int
main(void)
{
	unsigned int took[NT], i, total, min, b, w;

	/* Enough for all: an even share each, every pass. */
	w = starved(4, 4000, 10, took);
	dtt_check(w == 0 && took[0] == 10000 && took[3] == 10000,
	    "4 tracees, 4000 slots: 1000 each a pass (%u, %u), none starved",
	    took[0], took[3]);

	/*
	 * Fewer slots than tracees: each tracee waits ceil(16 / b) - 1
	 * passes at most, and over many passes all get the same, to one.
	 */
	for (b = 1; b < NT; b++) {
		w = starved(NT, b, 160, took);
		for (i = 0, total = 0, min = UINT_MAX; i < NT; i++) {
			total += took[i];
			if (took[i] < min)
				min = took[i];
		}
		dtt_check(w <= (NT + b - 1) / b - 1 && total == 160 * b &&
		    min >= 10 * b - 1,
		    "16 tracees, %u slots a pass: at most %u passes without "
		    "(%u), the least served took %u of %u", b,
		    (NT + b - 1) / b - 1, w, min, 160 * b / NT);
	}

	/* Nothing free: nobody takes anything, and nothing breaks. */
	w = starved(3, 0, 4, took);
	dtt_check(took[0] == 0 && took[1] == 0 && took[2] == 0,
	    "no budget: nothing taken");

	/* No bound (a lossy reader, or none): every ring whole. */
	w = starved(3, UINT_MAX, 1, took);
	dtt_check(took[0] == UINT_MAX && took[2] == UINT_MAX,
	    "no bound: no share");
	return dtt_done();
}
