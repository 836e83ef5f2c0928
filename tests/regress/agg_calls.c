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
 * A traced program for aggregations at the source: N getppid() calls
 * flat out, then N / 100 close() calls of descriptors that are not
 * open (EBADF), whose argument takes 37 values, so keys and values of
 * arguments, return values and errno are known.
 *
 * usage: agg_calls N
 */
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	long n, i;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) <= 0)
		return 2;
	for (i = 0; i < n; i++)
		(void)getppid();
	for (i = 0; i < n / 100; i++)
		(void)close((int)(100000 + i % 37));
	return 0;
}
