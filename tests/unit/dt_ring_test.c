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
 * dt_ring_merge() against a producer that puts in time order across
 * rings, as the sequencer does: every read, and the reads one after
 * another, hand out the records in time order.  A read that looked at
 * the rings one at a time could take a younger record put into a later
 * ring and miss an older one put into an earlier ring in between (a
 * block request's completion read before its issue: the biolat test's
 * 46 of 67 pairs in CI).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "dt_ring.h"
#include "dtt.h"

#define RT_NRINGS	4
#define RT_SIZE		64
#define RT_PUTS		2000000

static struct dt_ring	 rt_rings[RT_NRINGS];
static atomic_bool	 rt_done;
static atomic_ulong	 rt_dropped;

/* Records stamped 1, 2, 3... into ring 0, 1, 2, 3, 0... as one thread. */
static void *
rt_producer(void *arg)
{
	struct dt_evt ev;
	unsigned long t;

	(void)arg;
	memset(&ev, 0, sizeof(ev));
	for (t = 1; t <= RT_PUTS; t++) {
		ev.dtev_tsp.tv_sec = (long)(t / 1000000000UL);
		ev.dtev_tsp.tv_nsec = (long)(t % 1000000000UL);
		/* A full ring drops, as it would in dtd: order still holds. */
		if (dt_ring_put(&rt_rings[t % RT_NRINGS], 1, t % RT_NRINGS, 0,
		    &ev) != 0)
			atomic_fetch_add(&rt_dropped, 1);
	}
	atomic_store(&rt_done, true);
	return NULL;
}

int
main(void)
{
	struct dt_evt buf[RT_SIZE];
	pthread_t pt;
	unsigned long last = 0, t, nread = 0, behind = 0, firstbad = 0;
	size_t n, i;
	bool done;
	unsigned int r;

	for (r = 0; r < RT_NRINGS; r++)
		if (!dtt_check(dt_ring_init(&rt_rings[r], RT_SIZE) == 0,
		    "ring %u of %d slots", r, RT_SIZE))
			return dtt_done();
	if (!dtt_check(pthread_create(&pt, NULL, rt_producer, NULL) == 0,
	    "a producer thread"))
		return dtt_done();
	do {
		done = atomic_load(&rt_done);
		n = dt_ring_merge(rt_rings, RT_NRINGS, 0, (char *)buf,
		    sizeof(buf)) / sizeof(buf[0]);
		for (i = 0; i < n; i++) {
			t = (unsigned long)buf[i].dtev_tsp.tv_sec *
			    1000000000UL + (unsigned long)buf[i].dtev_tsp.tv_nsec;
			if (t < last && behind++ == 0)
				firstbad = t;
			if (t > last)
				last = t;
		}
		nread += n;
	} while (!done || n > 0);
	pthread_join(pt, NULL);
	dtt_check(nread + atomic_load(&rt_dropped) == RT_PUTS,
	    "%lu read and %lu dropped of %d put", nread,
	    atomic_load(&rt_dropped), RT_PUTS);
	dtt_check(nread > 0, "the reader took records while they were put");
	if (!dtt_check(behind == 0, "reads in time order across %d rings",
	    RT_NRINGS))
		fprintf(stderr, "%lu records came after a younger one, the "
		    "first stamped %lu\n", behind, firstbad);
	for (r = 0; r < RT_NRINGS; r++)
		dt_ring_fini(&rt_rings[r]);
	return dtt_done();
}
