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
 * pid_target N M K [churn | RATE]: a process whose known calls a pid
 * filter counts (pidpush_test.c, run-device-linux.sh's pidpush,
 * bench/tracepoint/pid_bench.sh).  It starts a
 * thread, says "ready" on stdout, and waits for a line on stdin; then
 * it makes N getppid() calls, the early thread M, and a thread started
 * only then K, and exits once both threads are done.  With churn, a
 * third thread starts and joins threads that make no getppid() without
 * pause until the line comes: the start of a trace meets threads being
 * made.  With RATE, each thread holds its calls to RATE a second, in
 * bursts of 100 between looks at the clock.  Raw system calls, so no libc caching or wrapper choice changes
 * the count.
 */
#include <sys/syscall.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PT_BURST	100

static pthread_barrier_t	 pt_gate;
static atomic_bool		 pt_churning = true;
static long			 pt_rate;	/* 0: flat out */

static void
pt_calls(long n)
{
	struct timespec next;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < n; i++) {
		(void)syscall(SYS_getppid);
		if (pt_rate == 0 || (i + 1) % PT_BURST != 0)
			continue;
		/* the pace: where the next burst is due */
		next.tv_nsec += PT_BURST * 1000000000L / pt_rate;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}

static void *
pt_early(void *arg)
{
	pthread_barrier_wait(&pt_gate);
	pt_calls(*(long *)arg);
	return NULL;
}

static void *
pt_late(void *arg)
{
	pt_calls(*(long *)arg);
	return NULL;
}

static void *
pt_nothing(void *arg)
{
	return arg;
}

static void *
pt_churn(void *arg)
{
	pthread_t t;

	while (atomic_load(&pt_churning))
		if (pthread_create(&t, NULL, pt_nothing, NULL) == 0)
			pthread_join(t, NULL);
	return arg;
}

int
main(int argc, char *argv[])
{
	pthread_t early, late, churn;
	int churning = argc == 5 && strcmp(argv[4], "churn") == 0;
	long n, m, k;
	char c;

	if (argc != 4 && argc != 5)
		return 2;
	if (argc == 5 && !churning && (pt_rate = atol(argv[4])) <= 0)
		return 2;
	n = atol(argv[1]);
	m = atol(argv[2]);
	k = atol(argv[3]);
	if (pthread_barrier_init(&pt_gate, NULL, 2) != 0 ||
	    pthread_create(&early, NULL, pt_early, &m) != 0)
		return 1;
	if (churning && pthread_create(&churn, NULL, pt_churn, NULL) != 0)
		return 1;
	if (write(STDOUT_FILENO, "ready\n", 6) != 6 ||
	    read(STDIN_FILENO, &c, 1) != 1)
		return 1;
	atomic_store(&pt_churning, false);
	if (churning)
		pthread_join(churn, NULL);
	pthread_barrier_wait(&pt_gate);
	pt_calls(n);
	if (pthread_create(&late, NULL, pt_late, &k) != 0)
		return 1;
	pthread_join(late, NULL);
	pthread_join(early, NULL);
	return 0;
}
