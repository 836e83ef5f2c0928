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
 * dtd's stack table (dtvar.h, DTF_KSTACK and DTF_USTACK keys): the
 * stacks an aggregation folded in dtd is keyed by, fetched after each
 * read of the entries (whose ids they are) and put back into an event's
 * stacks, so that kstack and ustack
 * print through stack_str() as they do for an event read.
 *
 * Single-threaded: the main loop, its rules and the end.
 */
#include <sys/ioctl.h>

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

#define AGGSTK_CHUNK	256	/* stacks a DTIOCAGGSTACKS */

static struct dtioc_aggstack	*stk_tab;	/* by id - 1 */
static uint32_t			 stk_n, stk_cap;
static uint64_t			 stk_overflow;	/* dtd's, last read */

int
aggstk_fetch(int fd)
{
	struct dtioc_aggstkread rd;
	uint32_t want = AGGSTK_CHUNK;

	/* each read of the entries empties them: a new generation of ids */
	stk_n = 0;
	for (;;) {
		if (stk_n + want > stk_cap) {
			stk_cap = stk_n + want;
			stk_tab = realloc(stk_tab, stk_cap * sizeof(*stk_tab));
			if (stk_tab == NULL)
				err(1, NULL);
		}
		memset(&rd, 0, sizeof(rd));
		rd.dtsr_first = stk_n + 1;
		rd.dtsr_stks = &stk_tab[stk_n];
		rd.dtsr_size = want * sizeof(*stk_tab);
		if (ioctl(fd, DTIOCAGGSTACKS, &rd) == -1) {
			warn("DTIOCAGGSTACKS");
			return -1;
		}
		stk_overflow = rd.dtsr_overflow;
		stk_n += rd.dtsr_nstks;
		if (rd.dtsr_nstks == 0 || stk_n >= rd.dtsr_total)
			return 0;
		/* the rest in one more read, not a chunk a read */
		want = rd.dtsr_total - stk_n;
	}
}

uint64_t
aggstk_overflow(void)
{
	return stk_overflow;
}

int
aggstk_fill(struct dt_evt *ev, struct deep_stacks *dk, uint32_t id,
    int kernel)
{
	const struct dtioc_aggstack *s;
	struct stacktrace *st = kernel ? &ev->dtev_kstack : &ev->dtev_ustack;
	unsigned long *deep = kernel ? dk->dk_k : dk->dk_u;
	unsigned int n, i;

	/* 0, or an id not fetched (a failed read): the empty stack */
	if (id == 0 || id > stk_n)
		return 0;
	s = &stk_tab[id - 1];
	n = s->dtak_count < DTEV_DEEP_MAX ? s->dtak_count : DTEV_DEEP_MAX;
	/* as dtd's ring would carry it: st_count says the whole depth */
	st->st_count = n;
	for (i = 0; i < n && i < STACKTRACE_MAX; i++)
		st->st_pc[i] = (unsigned long)s->dtak_pc[i];
	for (i = 0; i < n; i++)
		deep[i] = (unsigned long)s->dtak_pc[i];
	if (kernel)
		dk->dk_kn = n;
	else
		dk->dk_un = n;
	return n > STACKTRACE_MAX;
}
