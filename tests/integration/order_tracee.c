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
 * order_tracee threads N | serial N
 *
 * The traced program of order_test.  threads: two threads, pinned to
 * CPUs 0 and 1, call getppid() by turns, N times each, so their calls
 * interleave in time strictly (the other thread's next call begins only
 * after this one returned).  serial: N calls of getppid() in a row, a
 * few microseconds apart.  Prints "D" at the end.
 */
#include <sys/syscall.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long		 nturns;
static atomic_long	 turn;		/* even: thread 0's, odd: thread 1's */

static void *
player(void *arg)
{
	long me = (long)arg, i;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)me, &set);
	/* Where the machine has one CPU the turns still interleave. */
	(void)sched_setaffinity(0, sizeof(set), &set);
	for (i = 0; i < nturns; i++) {
		while (atomic_load(&turn) != 2 * i + me)
			sched_yield();
		(void)getppid();
		atomic_fetch_add(&turn, 1);
	}
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_t th[2];
	struct timespec ts = { 0, 20000 };
	long i;

	if (argc != 3)
		return 2;
	nturns = strtol(argv[2], NULL, 10);
	if (strcmp(argv[1], "threads") == 0) {
		pthread_create(&th[0], NULL, player, (void *)0L);
		pthread_create(&th[1], NULL, player, (void *)1L);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
	} else if (strcmp(argv[1], "serial") == 0) {
		for (i = 0; i < nturns; i++) {
			(void)getppid();
			nanosleep(&ts, NULL);
		}
	} else
		return 2;
	printf("D\n");
	return 0;
}
