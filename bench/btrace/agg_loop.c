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
 * The traced loop of agg_bench.sh: N getppid() calls flat out, then
 * the loop's nanoseconds per call into OUTFILE (the program's stdout
 * is btrace's under -c): wall time, then the thread's CPU time, which
 * other programs sharing the machine's CPUs do not stretch.
 *
 * usage: agg_loop N OUTFILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct timespec a, b, ca, cb;
	long n, i;
	double ns, cns;
	FILE *f;

	if (argc != 3 || (n = strtol(argv[1], NULL, 10)) <= 0)
		return 2;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		(void)getppid();
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 +
	    (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
	cns = ((double)(cb.tv_sec - ca.tv_sec) * 1e9 +
	    (double)(cb.tv_nsec - ca.tv_nsec)) / (double)n;
	if ((f = fopen(argv[2], "w")) == NULL)
		return 1;
	fprintf(f, "%.2f %.2f\n", ns, cns);
	return fclose(f) == 0 ? 0 : 1;
}
