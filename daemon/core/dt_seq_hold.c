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
 * The sequencer's held events (dt_seq.c decides what is held and when it
 * goes; dt_seq_var.h): a run, the FIFO of events each no older than the
 * one before it, and a heap for the others, both of small entries that
 * name a slot holding the event itself; the free slots' stack; and the
 * deep user stacks held events own, copied and charged while held.
 *
 * Locks used to protect the globals in this file:
 *	[s]	dt_seq_mtx (dt_seq.c): every function here runs under it
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dt_seq_var.h"

#define DT_SEQ_MINCAP	256		/* first store, in events */

struct dt_seq_ent	*dt_seq_heap;		/* [s] dt_seq_cap */
struct dt_seq_ent	*dt_seq_run;		/* [s] dt_seq_cap, a ring */
struct dt_seq_slot	*dt_seq_slots;		/* [s] dt_seq_cap */
uint32_t		*dt_seq_freeslots;	/* [s] stack of free slots */
uint32_t		 dt_seq_n;		/* [s] held: hn + rn */
uint32_t		 dt_seq_hn;		/* [s] in the heap */
uint32_t		 dt_seq_rn;		/* [s] in the run */
uint32_t		 dt_seq_rhead;		/* [s] the run's oldest */
uint32_t		 dt_seq_cap;		/* [s] */
static uint64_t		 dt_seq_charged;	/* [s] bytes, dt_limit */

/* dtd's own memory, charged as root's: no user's open owns it. */
static const struct dt_cred dt_seq_cred = { .dc_uid = 0 };

/* The bytes of a held copy of u: its frames only. */
static size_t
dt_seq_deep_size(const struct dt_deepstack *u)
{
	return offsetof(struct dt_deepstack, ds_pc) +
	    u->ds_count * sizeof(u->ds_pc[0]);
}

/*
 * A copy of u to hold, charged as the store is; NULL without the memory
 * (the event then goes with the frames dtev_ustack holds).  [s]
 */
struct dt_deepstack *
dt_seq_deep_dup(const struct dt_deepstack *u)
{
	struct dt_deepstack *d;
	size_t sz;

	if (u == NULL || u->ds_count > DTEV_DEEP_MAX)
		return NULL;
	sz = dt_seq_deep_size(u);
	if (dt_limit_charge(&dt_seq_cred, sz) != 0) {
		dt_seq_counters.dss_deepcut++;
		return NULL;
	}
	if ((d = malloc(sz)) == NULL) {
		dt_limit_uncharge(&dt_seq_cred, sz);
		dt_seq_counters.dss_deepcut++;
		return NULL;
	}
	memcpy(d, u, sz);
	return d;
}

/* Free a held slot's deep stack.  [s] */
void
dt_seq_deep_free(struct dt_seq_slot *ss)
{
	if (ss->dss_deep == NULL)
		return;
	dt_limit_uncharge(&dt_seq_cred, dt_seq_deep_size(ss->dss_deep));
	free(ss->dss_deep);
	ss->dss_deep = NULL;
}

static void
dt_seq_sift_up(uint32_t i)
{
	struct dt_seq_ent e = dt_seq_heap[i];
	uint32_t p;

	while (i > 0) {
		p = (i - 1) / 2;
		if (!dt_seq_less(&e, &dt_seq_heap[p]))
			break;
		dt_seq_heap[i] = dt_seq_heap[p];
		i = p;
	}
	dt_seq_heap[i] = e;
}

void
dt_seq_sift_down(uint32_t i)
{
	struct dt_seq_ent e = dt_seq_heap[i];
	uint32_t c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= dt_seq_hn)
			break;
		if (c + 1 < dt_seq_hn &&
		    dt_seq_less(&dt_seq_heap[c + 1], &dt_seq_heap[c]))
			c++;
		if (!dt_seq_less(&dt_seq_heap[c], &e))
			break;
		dt_seq_heap[i] = dt_seq_heap[c];
		i = c;
	}
	dt_seq_heap[i] = e;
}

/* Hold e: at the run's tail when no older than it, else in the heap.  [s] */
void
dt_seq_hold(const struct dt_seq_ent *e)
{
	if (dt_seq_rn == 0 || e->dse_ns >= dt_seq_runent(dt_seq_rn - 1)->
	    dse_ns) {
		*dt_seq_runent(dt_seq_rn++) = *e;
	} else {
		dt_seq_heap[dt_seq_hn] = *e;
		dt_seq_sift_up(dt_seq_hn++);
	}
	dt_seq_n++;
}

/* Take the oldest held event off; its slot is freed.  n > 0.  [s] */
uint32_t
dt_seq_pop(void)
{
	const struct dt_seq_ent *e = dt_seq_oldest();
	uint32_t slot = e->dse_slot;

	if (e == &dt_seq_heap[0]) {
		if (--dt_seq_hn > 0) {
			dt_seq_heap[0] = dt_seq_heap[dt_seq_hn];
			dt_seq_sift_down(0);
		}
	} else {
		dt_seq_rhead = (dt_seq_rhead + 1) % dt_seq_cap;
		if (--dt_seq_rn == 0)
			dt_seq_rhead = 0;
	}
	dt_seq_n--;
	dt_seq_freeslots[dt_seq_cap - dt_seq_n - 1] = slot;
	return slot;
}

static uint64_t
dt_seq_bytes(uint32_t cap)
{
	return (uint64_t)cap * (2 * sizeof(struct dt_seq_ent) +
	    sizeof(struct dt_seq_slot) + sizeof(uint32_t));
}

/*
 * Make room for more held events, within DT_SEQ_MAXHELD and the memory
 * cap (the memory is charged as the rings' is).  Returns whether there
 * is room.  [s]
 */
bool
dt_seq_grow(void)
{
	struct dt_seq_ent *h, *r;
	struct dt_seq_slot *s;
	uint32_t *f, ncap, i;

	ncap = dt_seq_cap == 0 ? DT_SEQ_MINCAP : dt_seq_cap * 2;
	if (ncap > DT_SEQ_MAXHELD)
		return false;
	if (dt_limit_charge(&dt_seq_cred, dt_seq_bytes(ncap) -
	    dt_seq_charged) != 0)
		return false;
	/* The run's new ring, its entries from the old one's head on. */
	if ((r = calloc(ncap, sizeof(*r))) == NULL) {
		dt_limit_uncharge(&dt_seq_cred, dt_seq_bytes(ncap) -
		    dt_seq_charged);
		return false;
	}
	h = reallocarray(dt_seq_heap, ncap, sizeof(*h));
	if (h != NULL)
		dt_seq_heap = h;
	s = h == NULL ? NULL : reallocarray(dt_seq_slots, ncap, sizeof(*s));
	if (s != NULL)
		dt_seq_slots = s;
	f = s == NULL ? NULL : reallocarray(dt_seq_freeslots, ncap,
	    sizeof(*f));
	if (f == NULL) {
		/* What did grow stays unused until the next attempt. */
		free(r);
		dt_limit_uncharge(&dt_seq_cred, dt_seq_bytes(ncap) -
		    dt_seq_charged);
		return false;
	}
	dt_seq_freeslots = f;
	for (i = 0; i < dt_seq_rn; i++)
		r[i] = *dt_seq_runent(i);
	free(dt_seq_run);
	dt_seq_run = r;
	dt_seq_rhead = 0;
	/*
	 * The free stack holds the cap - n free slots at its bottom; all
	 * are in use now (we grow when full), so only the new ones.
	 */
	for (i = 0; i < ncap - dt_seq_cap; i++)
		dt_seq_freeslots[i] = dt_seq_cap + i;
	dt_seq_charged = dt_seq_bytes(ncap);
	dt_seq_cap = ncap;
	return true;
}

/* Give a large store (run, heap, slots) back once nothing is held.  [s] */
void
dt_seq_shrink(void)
{
	if (dt_seq_n != 0 || dt_seq_cap <= DT_SEQ_MINCAP * 16)
		return;
	dt_seq_store_free();
}

void
dt_seq_store_free(void)
{
	free(dt_seq_heap);
	free(dt_seq_run);
	free(dt_seq_slots);
	free(dt_seq_freeslots);
	dt_seq_heap = NULL;
	dt_seq_run = NULL;
	dt_seq_slots = NULL;
	dt_seq_freeslots = NULL;
	dt_seq_cap = 0;
	if (dt_seq_charged > 0)
		dt_limit_uncharge(&dt_seq_cred, dt_seq_charged);
	dt_seq_charged = 0;
}
