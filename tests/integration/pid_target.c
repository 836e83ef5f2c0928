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
 * pid_target N M K [across | churn FILE | count | gone | gonelate | many |
 * nest | RATE]: a
 * process whose known calls a pid filter counts (pidpush_test.c,
 * run-device-linux.sh's pidpush, bench/tracepoint/pid_bench.sh).  It
 * starts a thread, says "ready" on stdout, and waits for a line on
 * stdin; then it makes N getppid() calls, the early thread M, and a
 * thread started only then K, and exits once both threads are done.
 *
 * With churn, a third thread starts and joins threads, each making one
 * getppid(), without pause until PT_CHURNMORE more after the line
 * came, and then the process writes their tids to FILE, one a line, in the
 * order they were made, each with the times (CLOCK_REALTIME, ns) just
 * before it was made and just after its join: the start of a trace meets
 * threads being made, and a reader can tell which of them it missed or
 * saw twice, even where a tid came back (the kernel's pids wrap at
 * pid_max, 32768 on some machines, and a slow start churns more).
 *
 * With count, main's N calls are a counter thread's renames instead:
 * started before "ready", it names itself "c" and i in decimal, i = 0,
 * 1, ..., PT_CRATE a second until N more after the line came, then
 * "cend" (task:task_rename): a trace starts while the process makes
 * events, each told apart.
 *
 * With gone, the main thread calls pthread_exit() before "ready", the
 * rest running on another thread; with gonelate, just after the line
 * came, and once it is gone the process says "gone" and waits for
 * another line before the N calls: the process lives on without the
 * thread
 * whose pid it bears, which then owns no perf event that can be opened,
 * or one whose thread ended in the middle of a trace.
 *
 * With many, PT_MANY threads more wait from before "ready" until the
 * calls are made: more than dtd follows.
 *
 * With nest, the thread started after the line starts another, which
 * makes K calls as well, beside its own K: a thread made by a thread
 * the trace did not list (pidcount_test.c).
 *
 * With across, main makes getppid() calls flat out from before "ready"
 * on, counting those that returned; at the line it notes that count c,
 * goes on for N more, stops, and writes "T A" on stdout: T its calls
 * in all, A = T - c - 1 the ones whose entry came after it read the
 * line (the call after the c-th may have entered before).  A trace
 * started in the middle of the calls counts at most T and, if on
 * before the line was written, at least A (pidcount_test.c).
 *
 * With RATE, each thread holds its calls to RATE a second, in bursts
 * of 100 between looks at the clock.  Raw system calls, so no libc
 * caching or wrapper choice changes the count.
 */
#include <sys/prctl.h>
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
#define PT_MAXCHURN	(1 << 20)	/* churned threads at most */
#define PT_CHURNMORE	200	/* churned after the line */
#define PT_MANY		300	/* many's idle threads */
#define PT_CRATE	50000	/* counted renames a second */
#define PT_CBURST	10	/* in bursts of */

static pthread_barrier_t	 pt_gate;
static long			 pt_rate;	/* 0: flat out */
static atomic_long		 pt_counted;	/* counted renames begun */
static atomic_long		 pt_countto = -1; /* their end, -1: none */
static pthread_barrier_t	 pt_counting;	/* the first counted one */
static long			 pt_n, pt_m, pt_k;	/* argv's N M K */
static bool			 pt_churning, pt_counting_on;
static const char		*pt_churnfile;	/* churn's FILE */
/* gone, gonelate: main leaves (pt_leave()) before "ready", after the line */
static bool			 pt_going, pt_late_going;
static pthread_t		 pt_main;
static pthread_barrier_t	 pt_left;	/* main may go */
static bool			 pt_many;
static bool			 pt_nest;	/* the late thread's own */
static pthread_barrier_t	 pt_idle;	/* many's threads may end */
static pid_t			*pt_churned;	/* their tids, in order */
static struct timespec		*pt_churnat;	/* each one's start, realtime */
static struct timespec		*pt_churnend;	/* and its join's end */
static atomic_long		 pt_nchurned;	/* threads churned */
static atomic_long		 pt_churnto = -1; /* their end, -1: none */

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

/* A thread of nest's late one: its calls at once. */
static void *
pt_nested(void *arg)
{
	pt_calls(*(long *)arg);
	return NULL;
}

static void *
pt_late(void *arg)
{
	pthread_t nested;
	bool nesting;

	nesting = pt_nest &&
	    pthread_create(&nested, NULL, pt_nested, arg) == 0;
	pt_calls(*(long *)arg);
	if (nesting)
		pthread_join(nested, NULL);
	else if (pt_nest)
		exit(1);
	return NULL;
}

static void *
pt_wait(void *arg)
{
	pthread_barrier_wait(&pt_idle);
	return arg;
}

/* One call, and its tid where the churn reads it after the join. */
static void *
pt_once(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	(void)syscall(SYS_getppid);
	return NULL;
}

static void *
pt_churn(void *arg)
{
	pthread_t t;
	long i, end;

	for (i = 0; ((end = atomic_load(&pt_churnto)) == -1 || i < end) &&
	    i < PT_MAXCHURN; ) {
		/* after the last one's join: when this tid is this one's */
		clock_gettime(CLOCK_REALTIME, &pt_churnat[i]);
		if (pthread_create(&t, NULL, pt_once, &pt_churned[i]) == 0) {
			pthread_join(t, NULL);
			clock_gettime(CLOCK_REALTIME, &pt_churnend[i]);
			atomic_store(&pt_nchurned, ++i);
		}
	}
	return arg;
}

/* Renames "c<i>" at PT_CRATE until pt_countto, then "cend". */
static void *
pt_count(void *arg)
{
	struct timespec next;
	char name[24];	/* PR_SET_NAME keeps 15: the numbers fit */
	long i, end;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; (end = atomic_load(&pt_countto)) == -1 || i < end; i++) {
		/* begun before the rename: those main counts from are after */
		atomic_store(&pt_counted, i + 1);
		snprintf(name, sizeof(name), "c%ld", i);
		(void)prctl(PR_SET_NAME, name);
		if (i == 0)
			pthread_barrier_wait(&pt_counting);
		/* short bursts: the trace's start falls among renames */
		if ((i + 1) % PT_CBURST != 0)
			continue;
		next.tv_nsec += PT_CBURST * 1000000000L / PT_CRATE;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	(void)prctl(PR_SET_NAME, "cend");
	return arg;
}

static atomic_long		 pt_acalls;	/* across's calls returned */
static atomic_long		 pt_aend = -1;	/* across's last, -1: none */

/* across's caller: flat out until its end is set and reached. */
static void *
pt_acaller(void *arg)
{
	long end;

	while ((end = atomic_load(&pt_aend)) == -1 ||
	    atomic_load(&pt_acalls) < end) {
		(void)syscall(SYS_getppid);
		atomic_fetch_add(&pt_acalls, 1);
	}
	return arg;
}

/* across: calls under way at "ready", N more after the line. */
static int
pt_across(void)
{
	pthread_t caller;
	long c, t;
	char buf[64], ch;
	int n;

	if (pthread_create(&caller, NULL, pt_acaller, NULL) != 0)
		return 1;
	/* calls made before "ready": the trace starts among them */
	while (atomic_load(&pt_acalls) == 0)
		continue;
	if (write(STDOUT_FILENO, "ready\n", 6) != 6 ||
	    read(STDIN_FILENO, &ch, 1) != 1)
		return 1;
	c = atomic_load(&pt_acalls);
	atomic_store(&pt_aend, c + pt_n);
	pthread_join(caller, NULL);
	t = atomic_load(&pt_acalls);
	n = snprintf(buf, sizeof(buf), "%ld %ld\n", t, t - c - 1);
	return write(STDOUT_FILENO, buf, (size_t)n) == n ? 0 : 1;
}

/*
 * The main thread goes (gone, gonelate) once body says so, where the
 * process lives on in its other threads.
 */
static void
pt_leave(void)
{
	if (!pt_going)
		return;
	pthread_barrier_wait(&pt_left);
	pthread_join(pt_main, NULL);
}

/* All from "ready" on: the process's exit status. */
static int
pt_run(void)
{
	pthread_t early, late, churn, count, idle[PT_MANY];
	long i;
	FILE *f;
	char c;

	if (pthread_barrier_init(&pt_gate, NULL, 2) != 0 ||
	    pthread_create(&early, NULL, pt_early, &pt_m) != 0)
		return 1;
	if (pt_churning && pthread_create(&churn, NULL, pt_churn, NULL) != 0)
		return 1;
	/* counting already when "ready" is said */
	if (pt_counting_on && (pthread_barrier_init(&pt_counting, NULL,
	    2) != 0 || pthread_create(&count, NULL, pt_count, NULL) != 0))
		return 1;
	if (pt_counting_on)
		pthread_barrier_wait(&pt_counting);
	if (pt_many && pthread_barrier_init(&pt_idle, NULL, PT_MANY + 1) != 0)
		return 1;
	for (i = 0; pt_many && i < PT_MANY; i++)
		if (pthread_create(&idle[i], NULL, pt_wait, NULL) != 0)
			return 1;
	if (!pt_late_going)
		pt_leave();
	if (write(STDOUT_FILENO, "ready\n", 6) != 6 ||
	    read(STDIN_FILENO, &c, 1) != 1)
		return 1;
	/* then "gone", and another line before the calls */
	if (pt_late_going) {
		pt_leave();
		if (write(STDOUT_FILENO, "gone\n", 5) != 5 ||
		    read(STDIN_FILENO, &c, 1) != 1)
			return 1;
	}
	if (pt_churning) {
		atomic_store(&pt_churnto, atomic_load(&pt_nchurned) +
		    PT_CHURNMORE);
		pthread_join(churn, NULL);
		if ((f = fopen(pt_churnfile, "w")) == NULL)
			return 1;
		for (i = 0; i < pt_nchurned; i++)
			fprintf(f, "%d %lld %lld\n", (int)pt_churned[i],
			    (long long)pt_churnat[i].tv_sec * 1000000000LL +
			    pt_churnat[i].tv_nsec,
			    (long long)pt_churnend[i].tv_sec * 1000000000LL +
			    pt_churnend[i].tv_nsec);
		if (fclose(f) != 0)
			return 1;
	}
	pthread_barrier_wait(&pt_gate);
	if (pt_counting_on) {
		atomic_store(&pt_countto, atomic_load(&pt_counted) + pt_n);
		pthread_join(count, NULL);
	} else
		pt_calls(pt_n);
	if (pthread_create(&late, NULL, pt_late, &pt_k) != 0)
		return 1;
	pthread_join(late, NULL);
	pthread_join(early, NULL);
	if (pt_many)
		pthread_barrier_wait(&pt_idle);
	for (i = 0; pt_many && i < PT_MANY; i++)
		pthread_join(idle[i], NULL);
	return 0;
}

/* pt_run() on a thread of its own: the last to end exits 0. */
static void *
pt_body(void *arg)
{
	int rc;

	if ((rc = pt_run()) != 0)
		exit(rc);
	return arg;
}

int
main(int argc, char *argv[])
{
	pthread_t body;
	const char *how = argc >= 5 ? argv[4] : "";

	pt_churning = argc == 6 && strcmp(how, "churn") == 0;
	pt_counting_on = argc == 5 && strcmp(how, "count") == 0;
	pt_late_going = argc == 5 && strcmp(how, "gonelate") == 0;
	pt_going = pt_late_going || (argc == 5 && strcmp(how, "gone") == 0);
	pt_many = argc == 5 && strcmp(how, "many") == 0;
	pt_nest = argc == 5 && strcmp(how, "nest") == 0;
	if (argc != 4 && argc != 5 && !pt_churning)
		return 2;
	if (argc == 5 && strcmp(how, "across") == 0) {
		pt_n = atol(argv[1]);
		return pt_across();
	}
	if (argc == 5 && !pt_counting_on && !pt_going && !pt_many &&
	    !pt_nest && (pt_rate = atol(how)) <= 0)
		return 2;
	if (pt_churning && ((pt_churned = calloc(PT_MAXCHURN,
	    sizeof(*pt_churned))) == NULL || (pt_churnat = calloc(PT_MAXCHURN,
	    sizeof(*pt_churnat))) == NULL || (pt_churnend = calloc(PT_MAXCHURN,
	    sizeof(*pt_churnend))) == NULL))
		return 1;
	pt_churnfile = pt_churning ? argv[5] : NULL;
	pt_n = atol(argv[1]);
	pt_m = atol(argv[2]);
	pt_k = atol(argv[3]);
	if (!pt_going)
		return pt_run();
	pt_main = pthread_self();
	if (pthread_barrier_init(&pt_left, NULL, 2) != 0 ||
	    pthread_create(&body, NULL, pt_body, NULL) != 0)
		return 1;
	pthread_barrier_wait(&pt_left);
	pthread_exit(NULL);
}
