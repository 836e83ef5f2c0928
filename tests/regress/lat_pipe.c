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
 * A traced program for the size of a latency folded at the source: its
 * main thread makes readv() calls of a pipe that block for a known time,
 * each measured by itself with clock_gettime() around the call, and
 * writes those durations in ns to OUT, one a line, once done.
 *
 * Each round the reader hands a token to a writer thread through a
 * second pipe, then reads; the writer, woken by the token, holds the
 * pipe for one of lat_hold's times (the thing measured, not a wait for
 * anything) and writes one byte.  The times sit near the middle of
 * hist()'s power-of-two buckets (2 to 32 ms), so that a call's bucket
 * does not hang on scheduling noise.  readv() alone is timed by the
 * scripts: neither the loader, libc's start nor the writer makes one.
 *
 * usage: lat_pipe OUT ROUNDS
 */
#include <sys/uio.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define LAT_MAXROUNDS	16

/* ns: about 1.34 times 2^21, 2^22, 2^23 and 2^24 */
static const long lat_hold[] = { 2800000, 5600000, 11200000, 22400000 };
#define LAT_NHOLD	(sizeof(lat_hold) / sizeof(lat_hold[0]))

static int	lat_data[2], lat_tok[2];	/* [0] read, [1] write */
static long	lat_rounds;

static void *
lat_writer(void *arg)
{
	struct timespec ts;
	long i, n = lat_rounds * (long)LAT_NHOLD;
	char c;

	for (i = 0; i < n; i++) {
		if (read(lat_tok[0], &c, 1) != 1)
			exit(1);
		ts.tv_sec = 0;
		ts.tv_nsec = lat_hold[i % LAT_NHOLD];
		while (nanosleep(&ts, &ts) == -1)
			continue;
		if (write(lat_data[1], &c, 1) != 1)
			exit(1);
	}
	return arg;
}

static int64_t
lat_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		exit(1);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
main(int argc, char *argv[])
{
	int64_t d[LAT_MAXROUNDS * LAT_NHOLD], t0;
	struct iovec iov;
	pthread_t th;
	FILE *out;
	long i, n;
	char c = 't';

	if (argc != 3 || (lat_rounds = strtol(argv[2], NULL, 10)) <= 0 ||
	    lat_rounds > LAT_MAXROUNDS)
		return 2;
	n = lat_rounds * (long)LAT_NHOLD;
	if (pipe(lat_data) != 0 || pipe(lat_tok) != 0 ||
	    pthread_create(&th, NULL, lat_writer, NULL) != 0)
		return 1;
	iov.iov_base = &c;
	iov.iov_len = 1;
	for (i = 0; i < n; i++) {
		if (write(lat_tok[1], &c, 1) != 1)
			return 1;
		t0 = lat_now();
		if (readv(lat_data[0], &iov, 1) != 1)
			return 1;
		d[i] = lat_now() - t0;
	}
	(void)pthread_join(th, NULL);
	if ((out = fopen(argv[1], "w")) == NULL)
		return 1;
	for (i = 0; i < n; i++)
		fprintf(out, "%lld\n", (long long)d[i]);
	return fclose(out) == 0 ? 0 : 1;
}
