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
 * The stack table of aggregations keyed by stacks (DTF_KSTACK,
 * DTF_USTACK): each distinct stack interned once under an id the table's
 * entries carry, so a profile's thousands of samples of a few hundred
 * stacks cost a few hundred stacks, not a ring slot each.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dt_agg.h"
#include "dt_softc.h"

static uint64_t
dt_aggstk_mem(uint32_t size, uint32_t nh)
{
	return 2 * ((uint64_t)size * sizeof(struct dtioc_aggstack) +
	    (uint64_t)nh * sizeof(uint32_t));
}

int
dt_aggstk_new(struct dt_softc *sc, uint32_t *sizep, struct dt_aggstk **stkp)
{
	struct dt_aggstk *stk;
	uint32_t size = *sizep, nh = 1;
	uint64_t mem;
	bool ok = true;
	int i;

	if (size == 0)
		size = DTA_STKSIZE_DEF;
	if (size > DTA_STKSIZE_MAX)
		size = DTA_STKSIZE_MAX;
	/* at most half full: probes stay short */
	while (nh < 2 * size)
		nh <<= 1;
	mem = dt_aggstk_mem(size, nh);
	if (dt_limit_charge(&sc->ds_cred, mem) != 0)
		return ENOMEM;
	/* calloc: a page of stacks costs memory once a stack lands in it */
	if ((stk = calloc(1, sizeof(*stk))) != NULL) {
		for (i = 0; i < 2; i++) {
			stk->dsk_gen[i].sg_stks = calloc(size,
			    sizeof(struct dtioc_aggstack));
			stk->dsk_gen[i].sg_hash = calloc(nh, sizeof(uint32_t));
			if (stk->dsk_gen[i].sg_stks == NULL ||
			    stk->dsk_gen[i].sg_hash == NULL)
				ok = false;
		}
	}
	if (stk == NULL || !ok) {
		if (stk != NULL)
			for (i = 0; i < 2; i++) {
				free(stk->dsk_gen[i].sg_stks);
				free(stk->dsk_gen[i].sg_hash);
			}
		free(stk);
		dt_limit_uncharge(&sc->ds_cred, mem);
		return ENOMEM;
	}
	stk->dsk_cur = stk->dsk_rd = &stk->dsk_gen[0];
	stk->dsk_size = size;
	stk->dsk_hmask = nh - 1;
	*sizep = size;
	*stkp = stk;
	return 0;
}

/* FNV-1a over the frames and their number. */
static uint32_t
dt_aggstk_hash(const uint64_t *pc, unsigned int n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ n;
	unsigned int i;

	for (i = 0; i < n; i++)
		h = (h ^ pc[i]) * 0x100000001b3ULL;
	return (uint32_t)(h ^ (h >> 32));
}

int32_t
dt_aggstk_intern(struct dt_aggstk *stk, const uint64_t *pc, unsigned int n)
{
	struct dt_stkgen *g = stk->dsk_cur;
	struct dtioc_aggstack *s;
	uint32_t h, id;

	if (n == 0)
		return 0;
	if (n > DTEV_DEEP_MAX)
		n = DTEV_DEEP_MAX;
	for (h = dt_aggstk_hash(pc, n) & stk->dsk_hmask;; h = (h + 1) &
	    stk->dsk_hmask) {
		if ((id = g->sg_hash[h]) == 0)
			break;
		s = &g->sg_stks[id - 1];
		if (s->dtak_count == n &&
		    memcmp(s->dtak_pc, pc, n * sizeof(*pc)) == 0)
			return (int32_t)id;
	}
	/* the caller counts the events refused, in the table's unit */
	if (g->sg_n == stk->dsk_size)
		return -1;
	s = &g->sg_stks[g->sg_n++];
	s->dtak_id = g->sg_n;
	s->dtak_count = n;
	memcpy(s->dtak_pc, pc, n * sizeof(*pc));
	g->sg_hash[h] = g->sg_n;
	return (int32_t)g->sg_n;
}

void
dt_aggstk_mark(struct dt_aggstk *stk, bool clear)
{
	stk->dsk_rd = stk->dsk_cur;
	if (!clear)
		return;
	/* the entries just read name dsk_rd's ids: the next fold starts over */
	stk->dsk_cur = stk->dsk_rd == &stk->dsk_gen[0] ? &stk->dsk_gen[1] :
	    &stk->dsk_gen[0];
	memset(stk->dsk_cur->sg_hash, 0,
	    ((size_t)stk->dsk_hmask + 1) * sizeof(uint32_t));
	stk->dsk_cur->sg_n = 0;
}

int
dt_aggstk_read(struct dt_softc *sc, struct dtioc_aggstkread *rd,
    const struct dt_uaccess *ua)
{
	struct dt_aggtab *tab;
	struct dt_aggstk *stk = NULL;
	struct dt_stkgen *g;
	struct dtioc_aggstack *copy = NULL;
	size_t room = rd->dtsr_size / sizeof(struct dtioc_aggstack);
	uint32_t first = rd->dtsr_first, n = 0;
	int error = 0;

	if (first == 0 || rd->dtsr_pad != 0 || rd->dtsr_spare != 0)
		return EINVAL;
	rd->dtsr_nstks = rd->dtsr_total = 0;
	rd->dtsr_overflow = 0;
	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	if (tab != NULL)
		stk = atomic_load_explicit(&tab->dat_stk, memory_order_acquire);
	if (stk == NULL) {
		rd->dtsr_size = 0;
		return 0;
	}
	/*
	 * Staged: no allocation, no copy to the caller under [t].  Sized
	 * by what the generation holds past first, not by the table: a
	 * read of a few stacks must not cost dsk_size KiB.  Folds may add
	 * stacks meanwhile; the copy below takes no more than room.
	 */
	pthread_mutex_lock(&tab->dat_mtx);
	g = stk->dsk_rd;
	if (first > g->sg_n)
		room = 0;
	else if (room > g->sg_n - (first - 1))
		room = g->sg_n - (first - 1);
	pthread_mutex_unlock(&tab->dat_mtx);
	if (room != 0 && (copy = malloc(room * sizeof(*copy))) == NULL)
		return ENOMEM;
	pthread_mutex_lock(&tab->dat_mtx);
	g = stk->dsk_rd;
	rd->dtsr_total = g->sg_n;
	rd->dtsr_overflow = stk->dsk_overflow;
	if (first <= g->sg_n) {
		n = g->sg_n - (first - 1);
		if (n > room)
			n = (uint32_t)room;
		if (n > 0)
			memcpy(copy, &g->sg_stks[first - 1], n * sizeof(*copy));
	}
	pthread_mutex_unlock(&tab->dat_mtx);
	if (n > 0)
		error = ua->ua_copyout(ua->ua_arg,
		    (uint64_t)(uintptr_t)rd->dtsr_stks, copy,
		    n * sizeof(*copy));
	free(copy);
	if (error == 0) {
		rd->dtsr_nstks = n;
		rd->dtsr_size = n * sizeof(struct dtioc_aggstack);
	}
	return error;
}

void
dt_aggstk_free(struct dt_softc *sc, struct dt_aggstk *stk)
{
	int i;

	if (stk == NULL)
		return;
	dt_limit_uncharge(&sc->ds_cred,
	    dt_aggstk_mem(stk->dsk_size, stk->dsk_hmask + 1));
	for (i = 0; i < 2; i++) {
		free(stk->dsk_gen[i].sg_stks);
		free(stk->dsk_gen[i].sg_hash);
	}
	free(stk);
}
