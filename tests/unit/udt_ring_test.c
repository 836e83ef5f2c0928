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
 * The preload library's check for room in a ring (udt_ring_room(),
 * udt_preload.h) against tickets from a head read before a preemption:
 * a ticket dtd already drained past is no full ring.  Taken as one, a
 * lossy ring counted an event lost with the ring empty, and a lossless
 * one waited out its whole bound (500 ms) for room it had, then dropped:
 * srcagg-tracee's records run lost 1 to 56 000 events of 800 000 that
 * way under load.
 */
#include <stdlib.h>
#include <string.h>

#include "udt_preload.h"
#include "dtt.h"

#define NSLOTS	64

struct udt_tab *udt_tab;
static int waits;

/* The lossless wait, which a ticket behind the tail must never reach. */
int
udt_ring_wait(struct udt_ring_hdr *r, uint64_t last, uint64_t mask)
{
	(void)r;
	(void)last;
	(void)mask;
	waits++;
	return 0;
}

static void
check_room(struct udt_ring_hdr *r, uint64_t tail, uint64_t last, int want,
    const char *what)
{
	uint64_t lost = r->rh_lost_total;
	int got;

	r->rh_tail = r->rh_ptail = tail;
	waits = 0;
	got = udt_ring_room(r, last, NSLOTS - 1, 3);
	dtt_check(got == want && (r->rh_lost_total - lost) == (want ? 0 : 1),
	    "%s: tail %llu ticket %llu: %s (%d), %llu lost", what,
	    (unsigned long long)tail, (unsigned long long)last,
	    got ? "room" : "full", got,
	    (unsigned long long)(r->rh_lost_total - lost));
}

int
main(void)
{
	static struct udt_tab tab;
	struct udt_ring_hdr *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return 2;
	r->rh_nslots = NSLOTS;
	udt_tab = &tab;

	dtt_tag("lossy");
	check_room(r, 1000, 1000, 1, "empty ring, the next ticket");
	check_room(r, 1000, 1000 + NSLOTS - 1, 1, "the last free slot");
	check_room(r, 1000, 1000 + NSLOTS, 0, "a lap ahead: full");
	check_room(r, 1000, 10, 1, "a ticket far behind the tail");
	check_room(r, 1000, 999, 1, "a ticket just behind the tail");
	/* Tickets near the 64-bit wrap. */
	check_room(r, 5, UINT64_MAX - 2, 1, "behind the tail across the wrap");
	check_room(r, UINT64_MAX - 2, UINT64_MAX - 2 + NSLOTS, 0,
	    "a lap ahead across the wrap");

	dtt_tag("lossless");
	tab.tb_lossless = 1;
	check_room(r, 1000, 10, 1, "a ticket behind the tail");
	dtt_check(waits == 0, "it did not wait (%d waits)", waits);
	check_room(r, 1000, 1000 + NSLOTS, 0, "a lap ahead");
	dtt_check(waits == 1, "a full ring waits (%d waits)", waits);
	free(r);
	return dtt_done();
}
