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
 * The switch-out stacks of dt_tp_stk.h: a tid's slot is one of the
 * DT_TP_STKWAYS from its hash on, its own if it has one, else one
 * whose stacks were handed over already (or never held any), else the
 * first, taken from whichever thread had it.  So a thread loses its
 * stacks only when that many others of its hash are off a CPU with
 * theirs not handed over yet; with one slot, any thread of the same
 * hash (one tid in 4096) that switched out while a sleeper slept cost
 * the sleeper that on__cpu's stacks (suspected in tracepoint-sleep's
 * 288 stacks of 301 in one full run, not reproduced).  A collision
 * never gives a thread another's stacks: the slot says whose they are.
 * Allocated at the first switch-out with a stack, so a dtd whose opens
 * never ask for stacks at a switch pays nothing.
 *
 * Locks used to protect the globals in this file:
 *	[R]	the tracepoint reader thread
 */
#include <stdbool.h>
#include <stdlib.h>

#include "dt_tp_stk.h"

#define DT_TP_STKSLOTS	4096		/* power of 2 */
#define DT_TP_STKWAYS	4		/* slots a tid may take */

struct dt_tp_stk {
	pid_t			ts_tid;		/* [R] 0: empty */
	bool			ts_used;	/* [R] given to an on__cpu */
	struct stacktrace	ts_kstack;	/* [R] */
	struct stacktrace	ts_ustack;	/* [R] */
};

static struct dt_tp_stk	*dt_tp_stks;	/* [R] */

/*
 * tid's slot, NULL if it has none; or, with take, the slot it is to
 * take (its own, a free one, or the first of its ways).
 */
static struct dt_tp_stk *
dt_tp_stk_slot(pid_t tid, bool take)
{
	struct dt_tp_stk *t, *spare = NULL;
	unsigned int h = (unsigned int)tid, i;

	for (i = 0; i < DT_TP_STKWAYS; i++) {
		t = &dt_tp_stks[(h + i) & (DT_TP_STKSLOTS - 1)];
		if (t->ts_tid == tid)
			return t;
		if (spare == NULL && (t->ts_tid == 0 || t->ts_used))
			spare = t;
	}
	if (!take)
		return NULL;
	return spare != NULL ? spare : &dt_tp_stks[h & (DT_TP_STKSLOTS - 1)];
}

void
dt_tp_stk_off(pid_t tid, const struct dt_tp_sample *s)
{
	struct dt_tp_stk *t;

	if (tid <= 0 || (s->ts_kstack->st_count == 0 &&
	    s->ts_ustack->st_count == 0))
		return;
	/* Out of memory: on__cpu goes without stacks, as before tracing. */
	if (dt_tp_stks == NULL && (dt_tp_stks = calloc(DT_TP_STKSLOTS,
	    sizeof(*dt_tp_stks))) == NULL)
		return;
	t = dt_tp_stk_slot(tid, true);
	t->ts_tid = tid;
	t->ts_used = false;
	t->ts_kstack = *s->ts_kstack;
	t->ts_ustack = *s->ts_ustack;
}

void
dt_tp_stk_on(pid_t tid, struct dt_evt *ev)
{
	struct dt_tp_stk *t;

	ev->dtev_kstack.st_count = 0;
	ev->dtev_ustack.st_count = 0;
	if (tid <= 0 || dt_tp_stks == NULL)
		return;
	if ((t = dt_tp_stk_slot(tid, false)) == NULL || t->ts_used)
		return;
	t->ts_used = true;
	ev->dtev_kstack = t->ts_kstack;
	ev->dtev_ustack = t->ts_ustack;
}

void
dt_tp_stk_fini(void)
{
	free(dt_tp_stks);
	dt_tp_stks = NULL;
}
