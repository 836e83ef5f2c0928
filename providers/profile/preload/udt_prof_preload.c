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
 * The profile provider's timer fallback inside a traced process: the
 * part of libuserdt-preload that turns dtd's profile period into
 * per-thread CPU-time samplers (udt_prof.c) and their samples into ring
 * records (UDT_PROBE_PROFILE, see udt_wire.h).
 *
 * How a tracee learns that profiling started or stopped, even in a busy
 * user-mode loop that never enters a hook: a watcher thread, started
 * only when dtd's welcome says UDT_W_PTIMER, sleeps in FUTEX_WAIT on
 * tb_prof_gen in the enable table; dtd stores the period, bumps the word
 * and FUTEX_WAKEs it (a shared futex: the table is one memfd mapped in
 * both processes).  Chosen over a signal from dtd to every attached pid
 * because a signal would interrupt the program's own system calls
 * (EINTR from the calls SA_RESTART does not restart), run our code on an
 * arbitrary thread of the program in signal context, where starting
 * timers, reading /proc/self/task and taking a lock are not allowed, and
 * compete with the program's handlers and masks for a signal number.
 * The watcher runs with every signal blocked, names itself
 * "userdt-prof", costs nothing while it sleeps, and wakes every
 * UDT_PT_BACKSTOP seconds anyway, in case a reconnection moved the
 * process to a new table just as it went to sleep on the old one.
 * Processes attached to a dtd that uses perf have no watcher at all.
 *
 * Samples are taken with SIGPROF, the signal whose meaning this is:
 * programs that do not profile themselves leave it alone, and udt_prof.c
 * passes every SIGPROF that is not one of its own timers' to the
 * program's previous handler.  A program that sets SIGPROF to SIG_DFL
 * while we sample would be killed by the next sample: a known limit.
 *
 * Lifecycle:
 *	start	the constructor attaches (udt_attach.c), then
 *		udt_ptimer_init() starts the watcher if dtd asked for it
 *	threads	pthread_create() is hooked: in a process with a watcher the
 *		new thread arms its own timer first thing and deletes it on
 *		its way out; threads that exist when sampling starts are
 *		found in /proc/self/task
 *	fork	the sampler lock is held across fork() (so a child never
 *		copies a half-installed handler), udt_fork_child() forgets
 *		the parent's samplers (timers are not inherited); the
 *		atfork child handler starts a new
 *		watcher, which arms the child's timers if profiling is on.
 *		A child of _Fork() or syscall(SYS_fork) runs no atfork
 *		handler: it is not sampled until it execs (known limit)
 *	exec	timers and threads are gone; the new image's constructor
 *		starts over
 *	dtd	a clean exit zeroes every period and wakes the watchers; a
 *		restarted dtd adopts the table, sets tb_reconnect and wakes
 *		the watcher, which reconnects on the program's behalf
 *
 * The unwinder (udt_cfi.c) takes no lock and allocates nothing: a fork
 * while another thread was mid-sample leaves the child nothing held.
 *
 * Known limits: threads made by a raw clone(2) are not sampled until
 * sampling restarts; a process that attached while dtd was absent or in
 * perf mode has no watcher until it forks or execs.
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before other threads exist
 *	[w]	the watcher thread only (reset in a fork child)
 *	[a]	atomic operations
 */
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <userdt/udt_wire.h>

#include "udt_prof.h"
#include "udt_host.h"

#define UDT_PT_SIGNO	SIGPROF
#define UDT_PT_BACKSTOP	2		/* s between unprompted looks */
#define UDT_PT_STACK	(128 * 1024)	/* the watcher's stack */

typedef int	udt_pt_create_t(pthread_t *, const pthread_attr_t *,
		    void *(*)(void *), void *);

struct udt_pt_start {
	void		*(*ps_fn)(void *);
	void		*ps_arg;
};

static udt_pt_create_t	*udt_pt_real_create;	/* [a] */
static int		 udt_pt_watching;	/* [a] a watcher runs */
static uint64_t		 udt_pt_cur;		/* [w] period armed, 0 */

/*
 * udt_prof.c's guard (see there): mark the handler's own calls, which go
 * through our hooks (clock_gettime, syscall), as the library's, so they
 * are neither recorded nor counted; in all-calls mode let them through
 * undispatched too, or each would trap into udt_sud.c to be ignored
 * there.  Signal context: TLS only.  The old state, packed, for leave.
 */
int
udt_prof_guard_enter(void)
{
	return udt_host_enter();
}

void
udt_prof_guard_leave(int old)
{
	udt_host_leave(old);
}

/*
 * One sample into the process's ring: the udt_prof callback, in the
 * SIGPROF handler of the sampled thread.  A sample that interrupts the
 * thread while it records a syscall event is dropped and counted as
 * recursive, as the hooks count theirs.  No lock, no allocation, no
 * system call unless the thread's comm is not cached yet (prctl).
 */
static void
udt_pt_sample(const struct udt_prof_sample *s, void *arg)
{
	udt_host_sample(s, (uint64_t)(uintptr_t)arg);	/* arg: the period */
}

/*
 * Make the process sample at nsecs (0: stop).  Watcher thread only.  A
 * start that fails (no memory for a timer) is retried on the next look.
 * The watcher does not sample itself: its CPU time is ours.
 */
static void
udt_pt_apply(uint64_t nsecs)
{
	if (nsecs == udt_pt_cur)
		return;
	if (udt_pt_cur != 0)
		udt_prof_stop();
	udt_pt_cur = 0;
	if (nsecs == 0 || udt_prof_start(nsecs, UDT_PT_SIGNO, udt_pt_sample,
	    (void *)(uintptr_t)nsecs) != 0)
		return;
	udt_pt_cur = nsecs;
	udt_prof_thread_del((pid_t)udt_host_tid());
}

/*
 * The watcher: look at the current table, follow its period, sleep
 * until dtd changes it.  Everything it calls goes past our hooks
 * unrecorded (udt_host_enter()), since none of it is the program's
 * doing.
 */
static void *
udt_pt_main(void *arg)
{
	struct udt_tab *tab;
	struct timespec ts;
	uint64_t nsecs;
	uint32_t gen;

	(void)arg;
	/* Never left: all this thread does is the library's. */
	(void)udt_host_enter();
	udt_sys2(SYS_prctl, PR_SET_NAME, "userdt-prof");
	for (;;) {
		tab = udt_host_tab();
		gen = __atomic_load_n(&tab->tb_prof_gen, __ATOMIC_ACQUIRE);
		/* A new dtd adopted us: reconnect, busy loop or not. */
		if (__atomic_load_n(&tab->tb_reconnect, __ATOMIC_RELAXED) !=
		    0) {
			udt_host_reattach();
			if (udt_host_tab() != tab)
				continue;
		}
		nsecs = 0;
		if (udt_host_timer_mode())
			nsecs = __atomic_load_n(&tab->tb_prof_nsecs,
			    __ATOMIC_RELAXED);
		udt_pt_apply(nsecs);
		if (udt_host_tab() != tab)
			continue;
		ts.tv_sec = UDT_PT_BACKSTOP;
		ts.tv_nsec = 0;
		/* Not FUTEX_PRIVATE: dtd wakes it from its own mapping. */
		udt_sys6(SYS_futex, (long)&tab->tb_prof_gen, FUTEX_WAIT,
		    (long)gen, (long)&ts, 0, 0);
	}
	return NULL;
}

static udt_pt_create_t *
udt_pt_create_fn(void)
{
	udt_pt_create_t *fn;

	fn = __atomic_load_n(&udt_pt_real_create, __ATOMIC_ACQUIRE);
	if (fn == NULL) {
		/* Before the library's constructor: asked of the loader. */
		if ((fn = (udt_pt_create_t *)udt_host_next_pthread_create())
		    == NULL)
			fn = (udt_pt_create_t *)dlsym(RTLD_NEXT,
			    "pthread_create");
		__atomic_store_n(&udt_pt_real_create, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/*
 * Start the watcher, detached, with every signal blocked from its first
 * instruction on (the program's handlers never run on it).  Called by
 * the constructor and by the atfork child handler, not in signal
 * context.  On failure the process is simply not sampled.
 */
static void
udt_pt_spawn(void)
{
	udt_pt_create_t *create = udt_pt_create_fn();
	pthread_attr_t attr;
	pthread_t thr;
	sigset_t all, old;
	int host;

	if (create == NULL || pthread_attr_init(&attr) != 0)
		return;
	host = udt_host_enter();
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_attr_setstacksize(&attr, UDT_PT_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (create(&thr, &attr, udt_pt_main, NULL) == 0)
		__atomic_store_n(&udt_pt_watching, 1, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	udt_host_leave(host);
}

/* A thread made through the hook leaves: its timer goes with it. */
static void
udt_pt_thread_exit(void *arg)
{
	int host = udt_host_enter();

	udt_prof_thread_del((pid_t)(intptr_t)arg);
	udt_host_leave(host);
}

/*
 * A new thread's first code: arm its timer if the process samples
 * (ESRCH when it does not: then a later udt_prof_start() finds it in
 * /proc/self/task), run the program's start routine, and disarm on
 * return, pthread_exit() or cancellation.
 */
static void *
udt_pt_trampoline(void *v)
{
	struct udt_pt_start ps = *(struct udt_pt_start *)v;
	void *ret;
	pid_t tid;
	int host;

	free(v);
	udt_host_thread_begin();
	tid = (pid_t)udt_host_tid();
	host = udt_host_enter();
	(void)udt_prof_thread_add(tid);
	udt_host_leave(host);
	pthread_cleanup_push(udt_pt_thread_exit, (void *)(intptr_t)tid);
	ret = ps.ps_fn(ps.ps_arg);
	pthread_cleanup_pop(1);
	return ret;
}

/*
 * The program's pthread_create().  The start routine is wrapped while a
 * watcher runs (timer mode) or where every call is dispatched
 * (udt_host_wrap_threads(): all-calls mode, or code no pass went through
 * while a probe is on); else it costs a load and
 * the library's answer, then the call.  No memory for the wrapper: the
 * thread runs unsampled, and without dispatch until it records, never
 * fails for it.
 */
UDT_HOST_EXPORT int
pthread_create(pthread_t *restrict thr, const pthread_attr_t *restrict attr,
    void *(*fn)(void *), void *restrict arg)
{
	udt_pt_create_t *create = udt_pt_create_fn();
	struct udt_pt_start *ps;
	int error;

	if (__builtin_expect(!__atomic_load_n(&udt_pt_watching,
	    __ATOMIC_RELAXED) && !udt_host_wrap_threads(), 1) ||
	    (ps = malloc(sizeof(*ps))) == NULL)
		return create(thr, attr, fn, arg);
	ps->ps_fn = fn;
	ps->ps_arg = arg;
	udt_host_thread_creating();
	if ((error = create(thr, attr, udt_pt_trampoline, ps)) != 0)
		free(ps);
	/* Its clone went through undispatched: dispatch this thread again. */
	udt_host_thread_created();
	return error;
}

/* The host's fork handler, in any fork child: async-signal-safe. */
static void
udt_ptimer_fork_child(void)
{
	udt_prof_fork_child();
	udt_pt_cur = 0;
	__atomic_store_n(&udt_pt_watching, 0, __ATOMIC_RELAXED);
}

/* atfork child handler, after udt_fork_child() attached the child. */
static void
udt_pt_atfork_child(void)
{
	if (udt_host_timer_mode())
		udt_pt_spawn();
}

/* The host's constructor, after its first attach. */
static void
udt_ptimer_init(void)
{
	(void)udt_pt_create_fn();
	pthread_atfork(udt_prof_fork_prepare, udt_prof_fork_parent,
	    udt_pt_atfork_child);
	if (udt_host_timer_mode())
		udt_pt_spawn();
}

static const struct udt_host_client udt_ptimer_client = {
	.uhc_attached	= udt_ptimer_init,
	.uhc_fork_child	= udt_ptimer_fork_child,
};

/*
 * Before the library's constructor (which has no priority, so runs
 * after every constructor that has one): only a pointer is stored.
 */
__attribute__((constructor(200))) static void
udt_ptimer_register(void)
{
	udt_host_register(&udt_ptimer_client);
}
