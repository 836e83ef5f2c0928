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
 * deep_spin [depth [seconds]]: recurse to depth (40) and spin there on
 * the CPU for at most seconds (10), so that a profile's user stacks are
 * that deep.  Built with frame pointers, unoptimised, so that perf's
 * frame-pointer walk sees every level (meson.build).
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static void
spin(time_t until)
{
	unsigned long i;

	/* the clock read seldom: samples land here, not in the vDSO */
	while (time(NULL) < until)
		for (i = 0; i < 10000000; i++)
			sink++;
}

static void
recurse(int depth, time_t until)
{
	if (depth > 1)
		recurse(depth - 1, until);
	else
		spin(until);
	sink++;		/* no tail call: every level keeps its frame */
}

int
main(int argc, char *argv[])
{
	int depth = argc > 1 ? atoi(argv[1]) : 40;
	int secs = argc > 2 ? atoi(argv[2]) : 10;

	recurse(depth, time(NULL) + secs);
	return 0;
}
