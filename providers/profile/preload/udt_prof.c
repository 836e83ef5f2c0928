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
 * Per-thread CPU-time sampling inside a traced process: see udt_prof.h.
 *
 * Locks used to protect the globals below:
 *	[l]	udt_prof_lock
 *	[a]	atomic operations; the signal handler only reads them
 */
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "udt_prof.h"

/*
 * Optional guard around the handler's own calls (clock_gettime(),
 * syscall(SYS_gettid), the callback), defined by a host library that
 * hooks those functions, as the preload library does, so its hooks do
 * not take them for the program's.  Weak: absent in a plain program.
 * enter returns a state that leave restores (handlers nest).
 */
extern int	udt_prof_guard_enter(void) __attribute__((weak));
extern void	udt_prof_guard_leave(int) __attribute__((weak));

/* The kernel's CPU clock id of one thread: MAKE_THREAD_CPUCLOCK(). */
#define UDT_THREAD_CPUCLOCK(tid)	\
	((clockid_t)((~(unsigned int)(tid)) << 3) | 4 | 2)

struct udt_prof_timer {
	pid_t		upt_tid;
	timer_t		upt_timer;
};

/* Error-checking: a fork from a handler that interrupted a holder. */
static pthread_mutex_t	 udt_prof_lock =
			    PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static bool		 udt_prof_forklocked;	/* [l] prepare took it */
/* Apart from the small variables (udt_sys.h's UDT_LBSS). */
static struct udt_prof_timer udt_prof_timers[UDT_PROF_THREADS_MAX]
    __attribute__((section(".lbss")));	/* [l] */
static unsigned int	 udt_prof_ntimers;	/* [l] */
static bool		 udt_prof_started;	/* [l] */
static bool		 udt_prof_installed;	/* [l] our handler is set */
static int		 udt_prof_signo;	/* [l] */
static uint64_t		 udt_prof_nsecs;	/* [l] */
static struct sigaction	 udt_prof_oldact;	/* [l]; the handler reads it */
static int		 udt_prof_active;	/* [a] handler samples */
static udt_prof_cb_t	*udt_prof_cb;		/* [a] */
static void		*udt_prof_arg;		/* [a] */

/*
 * Signal handler: unwind from the interrupted context, not from here,
 * so the first frame is the PC the thread was running.  Async-signal-
 * safe: the library's unwinder (udt_cfi.c) locks and allocates nothing.
 */
static void
udt_prof_handler(int sig, siginfo_t *si, void *ucv)
{
	struct udt_prof_sample s;
	udt_prof_cb_t *cb;
	bool mine;
	int saved = errno, guard = 0;

	mine = si->si_code == SI_TIMER &&
	    si->si_value.sival_ptr == (void *)&udt_prof_timers;
	if (!mine) {
		/* Someone else's signal: give it to whoever had it. */
		if ((udt_prof_oldact.sa_flags & SA_SIGINFO) &&
		    udt_prof_oldact.sa_sigaction != NULL)
			udt_prof_oldact.sa_sigaction(sig, si, ucv);
		else if (!(udt_prof_oldact.sa_flags & SA_SIGINFO) &&
		    udt_prof_oldact.sa_handler != SIG_DFL &&
		    udt_prof_oldact.sa_handler != SIG_IGN)
			udt_prof_oldact.sa_handler(sig);
		errno = saved;
		return;
	}
	/* A late one, queued before udt_prof_stop(). */
	if (!__atomic_load_n(&udt_prof_active, __ATOMIC_ACQUIRE)) {
		errno = saved;
		return;
	}
	if (udt_prof_guard_enter != NULL)
		guard = udt_prof_guard_enter();
	memset(&s, 0, sizeof(s));
	s.ups_tid = (pid_t)syscall(SYS_gettid);
	s.ups_cpu = (unsigned int)sched_getcpu();
	clock_gettime(CLOCK_REALTIME, &s.ups_tsp);
	s.ups_missed = si->si_overrun > 0 ? (unsigned int)si->si_overrun : 0;
	s.ups_nframes = udt_unw_stack(ucv, s.ups_pc, UDT_PROF_STACK_MAX);
	cb = __atomic_load_n(&udt_prof_cb, __ATOMIC_ACQUIRE);
	if (cb != NULL)
		cb(&s, __atomic_load_n(&udt_prof_arg, __ATOMIC_RELAXED));
	if (udt_prof_guard_leave != NULL)
		udt_prof_guard_leave(guard);
	errno = saved;
}

/*
 * Whether slot i's thread still lives.  Threads found in /proc/self/task
 * that were not made through the creation hook leave without
 * udt_prof_thread_del(); the kernel then reports their timer disarmed,
 * interval included, which ours never are.  [l] held.
 */
static bool
udt_prof_alive(unsigned int i)
{
	struct itimerspec cur;

	return timer_gettime(udt_prof_timers[i].upt_timer, &cur) == 0 &&
	    (cur.it_interval.tv_sec != 0 || cur.it_interval.tv_nsec != 0);
}

/* Delete slot i's timer and free the slot.  [l] held. */
static void
udt_prof_forget(unsigned int i)
{
	timer_delete(udt_prof_timers[i].upt_timer);
	/* The handler never reads the array: reorder freely. */
	udt_prof_timers[i] = udt_prof_timers[--udt_prof_ntimers];
}

/* Arm a timer on tid's CPU clock.  [l] held. */
static int
udt_prof_arm(pid_t tid)
{
	struct udt_prof_timer *t;
	struct sigevent sev;
	struct itimerspec its;
	unsigned int i;

	/*
	 * Found by udt_prof_start() and added by its creation hook too; or
	 * the tid of a thread that left unseen, now reused.
	 */
	for (i = 0; i < udt_prof_ntimers; i++) {
		if (udt_prof_timers[i].upt_tid != tid)
			continue;
		if (udt_prof_alive(i))
			return 0;
		udt_prof_forget(i);
		break;
	}
	if (udt_prof_ntimers == UDT_PROF_THREADS_MAX) {
		/* Full: make room from the threads that left unseen. */
		for (i = udt_prof_ntimers; i-- > 0;)
			if (!udt_prof_alive(i))
				udt_prof_forget(i);
		if (udt_prof_ntimers == UDT_PROF_THREADS_MAX)
			return ENOSPC;
	}
	t = &udt_prof_timers[udt_prof_ntimers];
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = udt_prof_signo;
	sev._sigev_un._tid = tid;	/* glibc 2.36 names it no better */
	sev.sigev_value.sival_ptr = &udt_prof_timers;	/* ours, see handler */
	if (timer_create(UDT_THREAD_CPUCLOCK(tid), &sev, &t->upt_timer) == -1)
		return errno;
	its.it_interval.tv_sec = (time_t)(udt_prof_nsecs / 1000000000ULL);
	its.it_interval.tv_nsec = (long)(udt_prof_nsecs % 1000000000ULL);
	its.it_value = its.it_interval;
	if (timer_settime(t->upt_timer, 0, &its, NULL) == -1) {
		int error = errno;

		timer_delete(t->upt_timer);
		return error;
	}
	t->upt_tid = tid;
	udt_prof_ntimers++;
	return 0;
}

/* Delete every timer.  [l] held. */
static void
udt_prof_disarm(void)
{
	while (udt_prof_ntimers > 0)
		timer_delete(udt_prof_timers[--udt_prof_ntimers].upt_timer);
}

int
udt_prof_start(uint64_t nsecs, int signo, udt_prof_cb_t *cb, void *arg)
{
	struct sigaction sa;
	struct dirent *de;
	DIR *d;
	char *end;
	long tid;
	int error = 0;

	if (nsecs == 0 || signo <= 0 || signo >= NSIG || signo == SIGKILL ||
	    signo == SIGSTOP || cb == NULL)
		return EINVAL;
	/* The handler unwinds; no stacks (not an error) if this fails. */
	(void)udt_unw_load();
	pthread_mutex_lock(&udt_prof_lock);
	if (udt_prof_started) {
		pthread_mutex_unlock(&udt_prof_lock);
		return EBUSY;
	}
	if (udt_prof_installed && udt_prof_signo != signo) {
		/* A previous run left its handler on another signal. */
		sigaction(udt_prof_signo, &udt_prof_oldact, NULL);
		udt_prof_installed = false;
	}
	udt_prof_signo = signo;
	udt_prof_nsecs = nsecs;
	__atomic_store_n(&udt_prof_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_prof_cb, cb, __ATOMIC_RELEASE);
	/*
	 * Ask the kernel rather than trust udt_prof_installed: a _Fork()
	 * child may have copied the flag and the action out of step, and
	 * the program may have put its own handler over ours since (it
	 * then becomes the one we pass foreign signals to).
	 */
	if (sigaction(signo, NULL, &sa) == -1) {
		error = errno;
		goto out;
	}
	if (!(sa.sa_flags & SA_SIGINFO) ||
	    sa.sa_sigaction != udt_prof_handler) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = udt_prof_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		/*
		 * Not SIGSYS nor SIGTRAP: a system call dispatched or
		 * trapped by the preload library with them blocked would
		 * be fatal.
		 */
		sigdelset(&sa.sa_mask, SIGSYS);
		sigdelset(&sa.sa_mask, SIGTRAP);
		if (sigaction(signo, &sa, &udt_prof_oldact) == -1) {
			error = errno;
			goto out;
		}
		udt_prof_installed = true;
	}
	__atomic_store_n(&udt_prof_active, 1, __ATOMIC_RELEASE);

	if ((d = opendir("/proc/self/task")) == NULL) {
		error = errno;
		goto fail;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		tid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || tid <= 0)
			continue;
		/* A thread that exited since readdir: nothing to sample. */
		error = udt_prof_arm((pid_t)tid);
		if (error != 0 && error != EINVAL && error != ESRCH)
			break;
		error = 0;
	}
	closedir(d);
	if (error == 0) {
		udt_prof_started = true;
		goto out;
	}
fail:
	__atomic_store_n(&udt_prof_active, 0, __ATOMIC_RELEASE);
	udt_prof_disarm();
out:
	pthread_mutex_unlock(&udt_prof_lock);
	return error;
}

int
udt_prof_thread_add(pid_t tid)
{
	int error;

	pthread_mutex_lock(&udt_prof_lock);
	error = udt_prof_started ? udt_prof_arm(tid) : ESRCH;
	pthread_mutex_unlock(&udt_prof_lock);
	return error;
}

void
udt_prof_thread_del(pid_t tid)
{
	unsigned int i;

	pthread_mutex_lock(&udt_prof_lock);
	for (i = 0; i < udt_prof_ntimers; i++) {
		if (udt_prof_timers[i].upt_tid == tid) {
			udt_prof_forget(i);
			break;
		}
	}
	pthread_mutex_unlock(&udt_prof_lock);
}

void
udt_prof_fork_prepare(void)
{
	/* EDEADLK: this thread holds it below a signal handler. */
	udt_prof_forklocked = pthread_mutex_lock(&udt_prof_lock) == 0;
}

void
udt_prof_fork_parent(void)
{
	if (udt_prof_forklocked) {
		udt_prof_forklocked = false;
		pthread_mutex_unlock(&udt_prof_lock);
	}
}

void
udt_prof_fork_child(void)
{
	/* Assignment, not pthread_mutex_init(): no call, no lock state. */
	udt_prof_lock = (pthread_mutex_t)PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	udt_prof_forklocked = false;
	udt_prof_ntimers = 0;
	udt_prof_started = false;
	__atomic_store_n(&udt_prof_active, 0, __ATOMIC_RELEASE);
}

void
udt_prof_stop(void)
{
	pthread_mutex_lock(&udt_prof_lock);
	if (udt_prof_started) {
		__atomic_store_n(&udt_prof_active, 0, __ATOMIC_RELEASE);
		udt_prof_disarm();
		udt_prof_started = false;
		/*
		 * A timer signal may still be queued: only give the signal
		 * back if its old action was a handler, not the default
		 * that would end the process on it.
		 */
		if (udt_prof_oldact.sa_handler != SIG_DFL) {
			sigaction(udt_prof_signo, &udt_prof_oldact, NULL);
			udt_prof_installed = false;
		}
	}
	pthread_mutex_unlock(&udt_prof_lock);
}
