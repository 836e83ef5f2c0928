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
 * The timer fallback of the profile provider (providers/profile/
 * preload/udt_prof.c) in this very process: threads spinning in a known
 * function are sampled on their CPU time, one thread armed at start and
 * one added later; samples must come at the rate of the CPU time used,
 * name the right threads and unwind from the interrupted function into
 * its caller; after stop nothing more arrives and the process lives on.
 * First, in fresh processes: a fork while another thread starts
 * sampling must give a child that can sample too, not one that dies of
 * its first SIGPROF (the atfork handlers of udt_prof.h); and threads
 * that were sampled from the start and left without saying so must not
 * keep their slots from new threads.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "profile_itest.h"
#include "udt_prof.h"

#define PERIOD_NS	10000000ULL	/* 100 Hz of CPU time */
#define BURN_NS		600000000ULL	/* per thread */
#define MAXSAMPLES	4096

/* Filled by the handler: async-signal-safe by construction. */
static struct udt_prof_sample	samples[MAXSAMPLES];
static unsigned int		nsamples;	/* atomic */

#define RACE_ROUNDS	12
#define RACE_VMAS	20000	/* slow fork()'s copy of the memory down */
#define RACE_CHILD_NS	3000000ULL
#define RACE_FIRST_NS	1000000000ULL	/* CPU a child waits for a sample */
#define CPU_NS()	dtt_clock_ns(CLOCK_THREAD_CPUTIME_ID)

static void
collect(const struct udt_prof_sample *s, void *arg)
{
	unsigned int i = __atomic_fetch_add(&nsamples, 1, __ATOMIC_RELAXED);

	(void)arg;
	if (i < MAXSAMPLES)
		samples[i] = *s;
}

volatile unsigned long	timer_sink;

__attribute__((noinline)) void
timer_spin_here(void)
{
	for (int i = 0; i < 100000; i++)
		timer_sink += (unsigned long)i;
}

struct burner {
	pid_t		b_tid;
	uint64_t	b_cpu;		/* CPU time burnt */
	pthread_barrier_t *b_go;
};

__attribute__((noinline)) static void *
timer_burn(void *arg)
{
	struct burner *b = arg;
	uint64_t t0;

	b->b_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(b->b_go);		/* tid published */
	pthread_barrier_wait(b->b_go);		/* sampling armed */
	t0 = CPU_NS();
	while (CPU_NS() - t0 < BURN_NS)
		timer_spin_here();
	b->b_cpu = CPU_NS() - t0;
	return NULL;
}

/* Run-time address range of a function of this executable. */
static bool
func_range(const char *name, void *rt, uintptr_t *lo, uintptr_t *hi)
{
	uint64_t val, size;

	if (pt_elf_func("/proc/self/exe", name, &val, &size) != 0)
		return false;
	*lo = (uintptr_t)rt;
	*hi = (uintptr_t)rt + size;
	return true;
}

/*
 * The periods tid's samples stand for: each is one, plus the periods its
 * timer overran by before the handler ran (ups_missed), which dtd counts
 * as skipped ticks.  On a loaded machine a thread's CPU time comes in
 * slices, and a timer can expire more than once in one.
 */
static unsigned long
count_tid(pid_t tid, unsigned long *nsamp)
{
	unsigned long n = 0;
	unsigned int i, max = nsamples < MAXSAMPLES ? nsamples : MAXSAMPLES;

	*nsamp = 0;
	for (i = 0; i < max; i++)
		if (samples[i].ups_tid == tid) {
			n += 1 + samples[i].ups_missed;
			(*nsamp)++;
		}
	return n;
}

static void *
race_start(void *arg)
{
	int *done = arg;

	(void)udt_prof_start(1000000, SIGPROF, collect, NULL);
	__atomic_store_n(done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * One round, in a fresh single-threaded process whose SIGPROF is still
 * SIG_DFL: fork children back to back while a thread starts sampling;
 * each child samples itself until its first sample.  Exits 0 when every
 * child lived and sampled, 1 and a message otherwise.
 */
static void __attribute__((noreturn))
race_round(void)
{
	pthread_t t;
	pid_t pid;
	int done = 0, extra = 0, status, i;

	for (i = 0; i < RACE_VMAS; i++)
		(void)mmap(NULL, 4096, (i & 1) ? PROT_READ : PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_atfork(udt_prof_fork_prepare, udt_prof_fork_parent,
	    udt_prof_fork_child);
	pthread_create(&t, NULL, race_start, &done);
	while (extra < 2) {
		if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
			extra++;
		if ((pid = fork()) == -1)
			_exit(2);
		if (pid == 0) {
			uint64_t t0;

			__atomic_store_n(&nsamples, 0, __ATOMIC_RELAXED);
			if (udt_prof_start(1000000, SIGPROF, collect, NULL))
				_exit(3);
			/* Alive and sampled: its handler is in place. */
			t0 = CPU_NS();
			while (CPU_NS() - t0 < RACE_CHILD_NS ||
			    (__atomic_load_n(&nsamples, __ATOMIC_RELAXED) ==
			    0 && CPU_NS() - t0 < RACE_FIRST_NS))
				timer_spin_here();
			_exit(nsamples > 0 ? 0 : 4);
		}
		if ((status = dtt_stop(pid, 0, DTT_EXIT_MS)) != 0) {
			fprintf(stderr, "fork race: child status %#x\n",
			    status);
			_exit(1);
		}
	}
	_exit(0);
}

#define LEFT_THREADS	(UDT_PROF_THREADS_MAX - 1)	/* with main: full */

static pthread_barrier_t	left_go;

static void *
left_wait(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&left_go);		/* sampling started */
	return NULL;
}

struct left_new {
	pid_t	ln_tid;
	int	ln_error;
};

/* The new thread adds itself first thing, as the creation hook does. */
static void *
left_spin(void *arg)
{
	struct left_new *ln = arg;
	uint64_t t0;

	ln->ln_tid = (pid_t)syscall(SYS_gettid);
	ln->ln_error = udt_prof_thread_add(ln->ln_tid);
	t0 = CPU_NS();
	while (CPU_NS() - t0 < 20 * 1000000ULL)
		timer_spin_here();
	return NULL;
}

/*
 * In a fresh process: fill every slot with threads found at start, let
 * them all exit unannounced, then add one more thread: it must be armed
 * (not ENOSPC) and sampled.  Exits 0, or 1 with a message.
 */
static void __attribute__((noreturn))
left_round(void)
{
	static pthread_t thr[LEFT_THREADS];
	pthread_attr_t attr;
	struct left_new ln = { 0, -1 };
	pthread_t t;
	unsigned int i, n, mine = 0;
	int error;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&left_go, NULL, LEFT_THREADS + 1);
	for (i = 0; i < LEFT_THREADS; i++)
		if (pthread_create(&thr[i], &attr, left_wait, NULL) != 0) {
			fprintf(stderr, "left: thread %u not created\n", i);
			_exit(1);
		}
	if ((error = udt_prof_start(1000000, SIGPROF, collect, NULL)) != 0) {
		fprintf(stderr, "left: start: %s\n", strerror(error));
		_exit(1);
	}
	pthread_barrier_wait(&left_go);
	for (i = 0; i < LEFT_THREADS; i++)
		pthread_join(thr[i], NULL);
	__atomic_store_n(&nsamples, 0, __ATOMIC_RELAXED);
	if (pthread_create(&t, &attr, left_spin, &ln) != 0)
		_exit(1);
	pthread_join(t, NULL);
	error = ln.ln_error;
	udt_prof_stop();
	n = nsamples < MAXSAMPLES ? nsamples : MAXSAMPLES;
	for (i = 0; i < n; i++)
		if (samples[i].ups_tid == ln.ln_tid)
			mine++;
	if (error != 0 || mine == 0) {
		fprintf(stderr, "left: new thread: %s, %u samples\n",
		    strerror(error), mine);
		_exit(1);
	}
	_exit(0);
}

int
main(void)
{
	pthread_barrier_t go;
	struct burner b[2];
	pthread_t t[2];
	uintptr_t spin_lo = 0, spin_hi = 0, burn_lo = 0, burn_hi = 0;
	unsigned long n[2], ns, inspin = 0, fromburn = 0, badcpu = 0, ours = 0;
	unsigned int i, max, after, later;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	double want;
	int k, error;

	/* Before this process samples: the rounds start from SIG_DFL. */
	for (k = 0, error = 0; k < RACE_ROUNDS; k++) {
		pid_t pid = fork();
		int status = -1;

		if (pid == 0)
			race_round();
		if (pid == -1 || (status = dtt_stop(pid, 0, DTT_EXIT_MS)) != 0)
			error++;
	}
	dtt_check(error == 0, "fork while starting: %d of %d rounds lost "
	    "a child or failed", error, RACE_ROUNDS);
	{
		pid_t pid = fork();
		int status = -1;

		if (pid == 0)
			left_round();
		dtt_check(pid > 0 && (status = dtt_stop(pid, 0, DTT_EXIT_MS)) == 0,
		    "%d threads left unannounced: a new thread "
		    "gets a slot and samples", LEFT_THREADS);
	}

	dtt_check(udt_prof_start(0, SIGPROF, collect, NULL) == EINVAL,
	    "period 0 refused");
	dtt_check(udt_prof_start(PERIOD_NS, SIGKILL, collect, NULL) == EINVAL,
	    "SIGKILL refused");
	dtt_check(udt_prof_thread_add((pid_t)syscall(SYS_gettid)) == ESRCH,
	    "adding a thread before start: ESRCH");

	/* b[0] exists at start, b[1] is created after and added. */
	pthread_barrier_init(&go, NULL, 2);
	memset(b, 0, sizeof(b));
	b[0].b_go = b[1].b_go = &go;
	pthread_create(&t[0], NULL, timer_burn, &b[0]);
	pthread_barrier_wait(&go);
	error = udt_prof_start(PERIOD_NS, SIGPROF, collect, NULL);
	if (!dtt_check(error == 0, "start at 100 Hz: %s", strerror(error)))
		return 1;
	dtt_check(udt_prof_start(PERIOD_NS, SIGPROF, collect, NULL) == EBUSY,
	    "a second start: EBUSY");
	pthread_barrier_wait(&go);
	pthread_create(&t[1], NULL, timer_burn, &b[1]);
	pthread_barrier_wait(&go);
	dtt_check(udt_prof_thread_add(b[1].b_tid) == 0, "thread %d added",
	    (int)b[1].b_tid);
	pthread_barrier_wait(&go);
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	udt_prof_stop();
	after = __atomic_load_n(&nsamples, __ATOMIC_RELAXED);

	for (k = 0; k < 2; k++) {
		n[k] = count_tid(b[k].b_tid, &ns);
		want = (double)b[k].b_cpu / PERIOD_NS;
		dtt_check(n[k] >= want * 0.85 - 2 && n[k] <= want * 1.15 + 2,
		    "thread %d: %lu samples standing for %lu periods for %.3f s "
		    "of CPU, %.0f expected", (int)b[k].b_tid, ns, n[k],
		    (double)b[k].b_cpu / 1e9, want);
	}
	if (!dtt_check(func_range("timer_spin_here", (void *)timer_spin_here,
	    &spin_lo, &spin_hi) && func_range("timer_burn",
	    (void *)timer_burn, &burn_lo, &burn_hi), "symbols of this test"))
		return 1;
	max = nsamples < MAXSAMPLES ? nsamples : MAXSAMPLES;
	for (i = 0; i < max; i++) {
		const struct udt_prof_sample *s = &samples[i];

		if (s->ups_tid != b[0].b_tid && s->ups_tid != b[1].b_tid)
			continue;
		ours++;
		if (s->ups_cpu >= (unsigned int)ncpu)
			badcpu++;
		if (s->ups_nframes >= 1 && s->ups_pc[0] >= spin_lo &&
		    s->ups_pc[0] < spin_hi)
			inspin++;
		if (s->ups_nframes >= 2 && s->ups_pc[1] >= burn_lo &&
		    s->ups_pc[1] < burn_hi)
			fromburn++;
	}
	dtt_check(ours > 0 && badcpu == 0, "every sample names a valid CPU");
	dtt_check(inspin * 10 >= ours * 9 && ours > 0,
	    "%lu of %lu stacks start in timer_spin_here", inspin, ours);
	dtt_check(fromburn * 10 >= ours * 8 && ours > 0,
	    "%lu of %lu stacks return into timer_burn next", fromburn, ours);

	/* Stopped: burn more CPU here, nothing may arrive. */
	{
		uint64_t t0 = CPU_NS();

		while (CPU_NS() - t0 < 5 * PERIOD_NS)
			timer_spin_here();
	}
	later = __atomic_load_n(&nsamples, __ATOMIC_RELAXED);
	dtt_check(later == after, "no samples after stop (%u then %u)", after,
	    later);
	/* And a second run works, on the same signal. */
	error = udt_prof_start(PERIOD_NS, SIGPROF, collect, NULL);
	dtt_check(error == 0, "restart: %s", strerror(error));
	{
		uint64_t t0 = CPU_NS();

		while (CPU_NS() - t0 < 10 * PERIOD_NS)
			timer_spin_here();
	}
	udt_prof_stop();
	n[0] = count_tid((pid_t)syscall(SYS_gettid), &ns);
	dtt_check(n[0] >= 5, "the restarted run sampled the main thread (%lu)",
	    n[0]);
	return dtt_done();
}
