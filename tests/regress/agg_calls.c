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
 * With THREADS, that many more threads make N getppid() calls each at
 * the same time as the first: counts at the source must add up across
 * threads too.  With AGG_NAME=1 in the environment, each of them first
 * names itself agg-wI (prctl): keys by name follow each thread's.
 *
 * usage: agg_calls N [THREADS]
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define AGG_MAXTHREADS	16

static long	agg_n;

static void *
agg_loop(void *arg)
{
	const char *e = getenv("AGG_NAME");
	char name[32];
	long i;

	if (arg != NULL && e != NULL && e[0] == '1') {
		snprintf(name, sizeof(name), "agg-w%u",
		    (unsigned int)((long)arg - 1) % 100);
		(void)prctl(PR_SET_NAME, name);
	}
	for (i = 0; i < agg_n; i++)
		(void)getppid();
	return arg;
}

int
main(int argc, char *argv[])
{
	pthread_t th[AGG_MAXTHREADS];
	long n, i, nth = 0;

	if (argc < 2 || argc > 3 || (n = strtol(argv[1], NULL, 10)) <= 0)
		return 2;
	if (argc == 3 && ((nth = strtol(argv[2], NULL, 10)) < 0 ||
	    nth > AGG_MAXTHREADS))
		return 2;
	agg_n = n;
	for (i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, agg_loop,
		    (void *)(i + 1)) != 0)
			return 1;
	(void)agg_loop(NULL);
	for (i = 0; i < nth; i++)
		(void)pthread_join(th[i], NULL);
	for (i = 0; i < n / 100; i++)
		(void)close((int)(100000 + i % 37));
	return 0;
}
