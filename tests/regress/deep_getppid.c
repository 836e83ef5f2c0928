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
 * deep_getppid [depth [times]]: recurse to depth (40) and call getppid(2)
 * there, times (3) over, so that the syscall provider's user stacks of
 * getppid are that deep.  Unoptimised, frame pointers, no tail calls
 * (meson.build): every level keeps its frame.
 */
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

static void
recurse(int depth)
{
	if (depth > 1)
		recurse(depth - 1);
	else
		sink += (unsigned long)getppid();
	sink++;		/* no tail call: every level keeps its frame */
}

int
main(int argc, char *argv[])
{
	int depth = argc > 1 ? atoi(argv[1]) : 40;
	int times = argc > 2 ? atoi(argv[2]) : 3;

	while (times-- > 0)
		recurse(depth);
	return 0;
}
