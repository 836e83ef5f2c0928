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
 * The profile provider's fallback where perf_event_open(2) is refused:
 * sampling inside a traced process, on each thread's own CPU time.  A
 * POSIX timer per thread on that thread's CPU clock sends it a signal
 * every period it runs; the handler unwinds the interrupted user stack
 * with the library's unwinder and hands the sample to a callback (which puts it into
 * the tracee's ring to dtd).  There is no kernel stack this way.
 *
 * Concurrency contract: udt_prof_start(), udt_prof_stop() and
 * udt_prof_thread_add() are serialised by an internal lock and must not
 * be called from a signal handler.  The callback runs in signal-handler
 * context on the sampled thread: it must be async-signal-safe.
 */
#ifndef UDT_PROF_H
#define UDT_PROF_H

#include <sys/types.h>
#include <stdint.h>
#include <time.h>

#include "udt_host.h"

#define UDT_PROF_THREADS_MAX	4096	/* threads sampled at once */

typedef void	udt_prof_cb_t(const struct udt_prof_sample *, void *);

/*
 * Sample every thread of the process (as listed in /proc/self/task)
 * every nsecs of its CPU time with signal signo, calling cb(sample, arg)
 * from the handler.  Returns 0 or an errno: EBUSY when already started,
 * EINVAL for nsecs 0 or a bad signal, what sigaction(2), timer_create(2)
 * or opendir(3) said.  On error nothing is left armed.
 */
int	udt_prof_start(uint64_t nsecs, int signo, udt_prof_cb_t *cb,
	    void *arg);

/*
 * Sample one more thread, one created after udt_prof_start() (from a
 * thread-creation hook, or by the new thread itself).  0, or an errno:
 * ESRCH when not started, ENOSPC when UDT_PROF_THREADS_MAX live threads
 * are sampled (slots of threads that exited without
 * udt_prof_thread_del() are taken back).  A thread that is sampled
 * already (udt_prof_start() found it while it was being created) keeps
 * its one timer: 0.
 */
int	udt_prof_thread_add(pid_t tid);

/*
 * Forget thread tid, which is exiting: delete its timer and free its
 * slot.  Called by the thread itself on its way out (a cleanup handler
 * of the thread-creation hook); no-op when tid is not sampled.
 */
void	udt_prof_thread_del(pid_t tid);

/*
 * fork()'s prepare and parent handlers (pthread_atfork): hold the lock
 * across the fork, so a child never copies the process halfway through
 * udt_prof_start() or udt_prof_stop().  The kernel copies the signal
 * actions before the memory: without the lock a child could inherit
 * "handler installed" in memory and SIG_DFL in its actions, and die of
 * its first sample.  Not for _Fork(), whose child runs no handlers.
 */
void	udt_prof_fork_prepare(void);
void	udt_prof_fork_parent(void);

/*
 * In a fork child: the timers were not inherited (POSIX) and the lock
 * may have been held by a thread that does not exist here, so start
 * over, stopped, keeping the installed handler.  Only the calling
 * thread exists; async-signal-safe (no lock, no system call), so it may
 * run after _Fork() as well as in an atfork child handler.
 */
void	udt_prof_fork_child(void);

/*
 * Disarm and delete every timer and restore the signal's previous
 * action.  A signal already queued is consumed by the restored action,
 * so keep a handler for signo in place if that would kill the process
 * (the default action of SIGPROF does): udt_prof_stop() leaves its own
 * handler installed, ignoring late samples, when the previous action
 * was SIG_DFL.
 */
void	udt_prof_stop(void);

#endif /* UDT_PROF_H */
