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
 * With "signal", the writer first sends the reader a signal while the
 * reader is inside its readv() (its thread's /proc syscall file says
 * so), whose handler makes a write() of /dev/null: a call of another
 * probe that returns between the timed call's entry and its return.
 *
 * usage: lat_pipe OUT ROUNDS [signal]
 */
#include <sys/syscall.h>
#include <sys/uio.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LAT_MAXROUNDS	16

/* ns: about 1.34 times 2^21, 2^22, 2^23 and 2^24 */
static const long lat_hold[] = { 2800000, 5600000, 11200000, 22400000 };
#define LAT_NHOLD	(sizeof(lat_hold) / sizeof(lat_hold[0]))

static int	lat_data[2], lat_tok[2];	/* [0] read, [1] write */
static long	lat_rounds;
static int	lat_signal, lat_null;
static pid_t	lat_reader;			/* the main thread's tid */
static pthread_t lat_main;

static void
lat_handler(int sig)
{
	(void)sig;
	(void)write(lat_null, "x", 1);
}

/* Whether the reader is inside a readv() (x86-64's 19) of the pipe. */
static int
lat_in_readv(void)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall",
	    (long)lat_reader);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		exit(1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	snprintf(path, sizeof(path), "19 0x%x ", lat_data[0]);
	return strncmp(buf, path, strlen(path)) == 0;
}

static void *
lat_writer(void *arg)
{
	struct timespec ts;
	long i, n = lat_rounds * (long)LAT_NHOLD;
	char c;

	for (i = 0; i < n; i++) {
		if (read(lat_tok[0], &c, 1) != 1)
			exit(1);
		if (lat_signal) {
			/* the reader is on its way into the call */
			while (!lat_in_readv())
				sched_yield();
			if (pthread_kill(lat_main, SIGUSR1) != 0)
				exit(1);
		}
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
	struct sigaction sa;
	struct iovec iov;
	pthread_t th;
	FILE *out;
	long i, n;
	char c = 't';

	if (argc < 3 || argc > 4 ||
	    (lat_rounds = strtol(argv[2], NULL, 10)) <= 0 ||
	    lat_rounds > LAT_MAXROUNDS)
		return 2;
	if (argc == 4) {
		if (strcmp(argv[3], "signal") != 0)
			return 2;
		lat_signal = 1;
		lat_reader = (pid_t)syscall(SYS_gettid);
		lat_main = pthread_self();
		if ((lat_null = open("/dev/null", O_WRONLY)) == -1)
			return 1;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = lat_handler;
		sa.sa_flags = SA_RESTART;
		if (sigaction(SIGUSR1, &sa, NULL) != 0)
			return 1;
	}
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
