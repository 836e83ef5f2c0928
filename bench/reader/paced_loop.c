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
 * The traced loop of reader_bench.sh: N getppid() calls held to RATE
 * calls a second (0: flat out), in bursts of 250 between looks at the
 * clock, then its own CPU time (the process's, in seconds) into OUTFILE:
 * the program's stdout is btrace's under -c, and btrace's CPU time as
 * its shell sees it includes this child's, which the bench takes off.
 * With WALLFILE, also the seconds from its first call to its last into
 * it: whether a tracer that makes threads wait for room (lossless) held
 * the loop back from its pace (maxrate_bench.sh).
 *
 * usage: paced_loop RATE N OUTFILE [WALLFILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BURST	250

int
main(int argc, char *argv[])
{
	struct timespec start, next, cpu, end;
	long rate, n, i, j;
	double per;
	FILE *f;

	if ((argc != 4 && argc != 5) || (rate = strtol(argv[1], NULL, 10)) < 0 ||
	    (n = strtol(argv[2], NULL, 10)) <= 0)
		return 2;
	per = rate > 0 ? 1e9 * BURST / (double)rate : 0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < n; i += BURST) {
		for (j = 0; j < BURST && i + j < n; j++)
			(void)getppid();
		if (rate == 0)
			continue;
		/* the schedule, not the last wake: a late burst catches up */
		double t = per * (double)(i / BURST + 1);
		next.tv_sec = start.tv_sec + (time_t)(t / 1e9);
		next.tv_nsec = start.tv_nsec + (long)(t - (double)(long)(t /
		    1e9) * 1e9);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	if ((f = fopen(argv[3], "w")) == NULL)
		return 1;
	fprintf(f, "%.4f\n", (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	if (fclose(f) != 0)
		return 1;
	if (argc == 4)
		return 0;
	if ((f = fopen(argv[4], "w")) == NULL)
		return 1;
	fprintf(f, "%.6f\n", (double)(end.tv_sec - start.tv_sec) +
	    (double)(end.tv_nsec - start.tv_nsec) / 1e9);
	return fclose(f) == 0 ? 0 : 1;
}
