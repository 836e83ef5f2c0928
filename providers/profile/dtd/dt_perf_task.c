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
 * Task mode of the profile sampler: a dtd without root samples the
 * threads of its user's traced processes through perf, where
 * perf_event_paranoid (2 or less) lets a user do so for their own
 * processes, user space only.  No signal reaches the tracee, unlike the
 * timer fallback, and its stacks are walked by the kernel.
 *
 * perf cannot sample a CPU for a user, only tasks; dt(4) hands samples
 * out per CPU.  So each recording pcb keeps its own ring on a disabled
 * event on dtd itself for its CPU, and every traced thread gets an event
 * on that CPU whose output is redirected there
 * (PERF_EVENT_IOC_SET_OUTPUT).  The event is inherited by the threads
 * the thread starts later (inherit_thread: not by forked children, which
 * attach as tracees of their own) and removed at exec (the new image
 * attaches again), so every thread is sampled once: those alive when
 * the pcb starts, and those started since by one of them.  A process
 * that attaches waits for its welcome meanwhile; in one already running
 * (a pcb starting, a tracee attaching again after a dtd restart) a
 * thread started in the instant between the listing of its process's
 * threads and the opening of its creator's event is missed.
 *
 * Events of processes that ended are closed when the next tracee
 * attaches, and all of a pcb's when it stops.  A process that attaches
 * again (it exec'd) has its events opened anew.
 *
 * Locks:
 *	[t]	dt_perf_task_mtx: the list of task-mode samplers and each
 *		one's events
 *	[a]	atomic operations
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_ingest.h"
#include "dt_perf.h"
#include "dt_perf_var.h"
#include "dt_perfev.h"
#include "dt_proc.h"


static pthread_mutex_t	 dt_perf_task_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_perf_src *dt_perf_tsrcs;	/* [t] recording, task mode */
static atomic_bool	 dt_perf_task_mode;	/* [a] set once, at start */

bool
dt_perf_task_on(void)
{
	return atomic_load_explicit(&dt_perf_task_mode, memory_order_relaxed);
}

/*
 * A traced thread's event: inherited by the threads it starts, not by
 * its fork children (they attach themselves), gone at its exec (the new
 * image attaches again).  What the probe must find the kernel takes.
 */
static void
dt_perf_task_inherit(struct perf_event_attr *attr)
{
	attr->inherit = 1;
	attr->inherit_thread = 1;
	attr->remove_on_exec = 1;
}

/* A pid filter's: the process is the same after an exec. */
static void
dt_perf_pid_inherit(struct perf_event_attr *attr)
{
	attr->inherit = 1;
	attr->inherit_thread = 1;
}

int
dt_perf_task_probe(void)
{
	struct perf_event_attr attr;
	int fd;

	atomic_store(&dt_perf_task_mode, true);
	dt_perf_attr(&attr, 1000000000ULL, 0);
	dt_perf_task_inherit(&attr);
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, 0, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd == -1) {
		int error = errno;

		atomic_store(&dt_perf_task_mode, false);
		return error;
	}
	close(fd);
	dt_ingest_sink_attach(dt_perf_tracee);
	dt_ingest_sink_eager();
	return 0;
}

/*
 * tid of pid an event on src's CPU writing into src's ring, enabled.
 * false when it could not be (the thread ended, a descriptor limit).
 * [t]
 */
static bool
dt_perf_task_open(struct dt_perf_src *src, pid_t pid, pid_t tid)
{
	struct perf_event_attr attr = src->dps_attr;
	struct dt_perf_task *t;
	int fd;

	if (src->dps_ntasks == src->dps_taskcap) {
		size_t cap = src->dps_taskcap ? 2 * src->dps_taskcap : 16;

		if ((t = reallocarray(src->dps_tasks, cap, sizeof(*t))) ==
		    NULL)
			return false;
		src->dps_tasks = t;
		src->dps_taskcap = cap;
	}
	/* The ring's event's clock and flags: SET_OUTPUT wants them. */
	if (src->dps_pid != 0)
		dt_perf_pid_inherit(&attr);
	else
		dt_perf_task_inherit(&attr);
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, (int)src->dps_cpu,
	    -1, PERF_FLAG_FD_CLOEXEC);
	if (fd == -1)
		return false;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, src->dps_fd) == -1 ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == -1) {
		close(fd);
		return false;
	}
	t = &src->dps_tasks[src->dps_ntasks++];
	t->dpt_pid = pid;
	t->dpt_tid = tid;
	t->dpt_fd = fd;
	return true;
}

/*
 * The threads of pid, now, into *tidsp (the caller frees it), sorted;
 * how many.  None when it is gone, is a thread but not a process (a
 * pid == N of a thread would sample all its process's threads), or
 * memory ran out (dt_proc_tids()).
 */
static size_t
dt_perf_task_tids(pid_t pid, pid_t **tidsp)
{
	size_t n;

	*tidsp = dt_proc_tids(pid, &n);
	return *tidsp != NULL ? n : 0;
}

/*
 * Each of pid's n threads tids gets an event on src, which has none of
 * pid's (a new src, or dt_perf_task_prune() closed them).  [t]
 */
static void
dt_perf_task_add(struct dt_perf_src *src, pid_t pid, const pid_t *tids,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		(void)dt_perf_task_open(src, pid, tids[i]);
}

/*
 * Close the events of src's processes that ended, and all of pid's: an
 * image that attaches again exec'd, which removed them.  Not those of a
 * thread that ended in a process that lives: closing an event frees the
 * copies the threads it started inherited, which sample on.  [t]
 */
static void
dt_perf_task_prune(struct dt_perf_src *src, pid_t pid)
{
	size_t i = 0;

	while (i < src->dps_ntasks) {
		struct dt_perf_task *t = &src->dps_tasks[i];

		if (t->dpt_pid != pid && (kill(t->dpt_pid, 0) == 0 ||
		    errno != ESRCH)) {
			i++;
			continue;
		}
		close(t->dpt_fd);
		*t = src->dps_tasks[--src->dps_ntasks];
	}
}

int
dt_perf_task_begin(struct dt_perf_src *src)
{
	pid_t *pids = NULL, *np, *tids;
	size_t i, n, max = 0, ntids;

	pthread_mutex_lock(&dt_perf_task_mtx);
	/*
	 * Linked first: a tracee attaching from now on is added by
	 * dt_perf_tracee(), one attached before is in the list below, and
	 * one in both gets its events again there (dt_perf_task_prune()).
	 */
	src->dps_tnext = dt_perf_tsrcs;
	dt_perf_tsrcs = src;
	/* As many as there are: more may attach between two looks. */
	while ((n = dt_ingest_tracees(pids, max)) > max) {
		max = n + n / 4;
		if ((np = reallocarray(pids, max, sizeof(*pids))) == NULL) {
			dt_perf_tsrcs = src->dps_tnext;
			pthread_mutex_unlock(&dt_perf_task_mtx);
			free(pids);
			return ENOMEM;
		}
		pids = np;
	}
	for (i = 0; i < n; i++) {
		ntids = dt_perf_task_tids(pids[i], &tids);
		dt_perf_task_add(src, pids[i], tids, ntids);
		free(tids);
	}
	pthread_mutex_unlock(&dt_perf_task_mtx);
	free(pids);
	return 0;
}

void
dt_perf_task_end(struct dt_perf_src *src)
{
	struct dt_perf_src **sp;
	size_t i;

	pthread_mutex_lock(&dt_perf_task_mtx);
	for (sp = &dt_perf_tsrcs; *sp != NULL; sp = &(*sp)->dps_tnext)
		if (*sp == src) {
			*sp = src->dps_tnext;
			break;
		}
	/* Their inherited copies go with them. */
	for (i = 0; i < src->dps_ntasks; i++)
		close(src->dps_tasks[i].dpt_fd);
	free(src->dps_tasks);
	src->dps_tasks = NULL;
	src->dps_ntasks = src->dps_taskcap = 0;
	dt_perf_fds_uncharge(src->dps_fdcharge);
	src->dps_fdcharge = 0;
	pthread_mutex_unlock(&dt_perf_task_mtx);
}

void
dt_perf_tracee(pid_t pid, bool foreign)
{
	struct dt_perf_src *src;
	pid_t *tids = NULL;
	size_t n = 0;

	(void)foreign;	/* its pid is dtd's whatever its namespace */
	pthread_mutex_lock(&dt_perf_task_mtx);
	/* Its threads listed once for all the CPUs' samplers. */
	if (dt_perf_tsrcs != NULL)
		n = dt_perf_task_tids(pid, &tids);
	for (src = dt_perf_tsrcs; src != NULL; src = src->dps_tnext) {
		dt_perf_task_prune(src, pid);
		dt_perf_task_add(src, pid, tids, n);
	}
	pthread_mutex_unlock(&dt_perf_task_mtx);
	free(tids);
}

#define DT_PERF_PID_TRIES	4	/* listings that must agree, at most */
#define DT_PERF_PID_MAXTIDS	256	/* threads followed (fds: x CPUs) */

int
dt_perf_pid_begin(struct dt_perf_src *src)
{
	pid_t *was, *now;
	size_t m, n, i;
	int try, error = EAGAIN;
	bool same;

	pthread_mutex_lock(&dt_perf_task_mtx);
	for (try = 0; try < DT_PERF_PID_TRIES && error == EAGAIN; try++) {
		if ((m = dt_perf_task_tids(src->dps_pid, &was)) == 0) {
			error = ESRCH;
			break;
		}
		if (m > DT_PERF_PID_MAXTIDS) {
			free(was);
			error = E2BIG;
			break;
		}
		/* a descriptor a thread, this pcb's CPU: the budget first */
		if (!dt_perf_fds_charge((long)m)) {
			free(was);
			error = EBUSY;
			break;
		}
		src->dps_fdcharge = (long)m;
		/* was is sorted (dt_proc_tids()): now is compared to it */
		error = 0;
		for (i = 0; i < m && error == 0; i++)
			/* a thread that ended makes no sample any more */
			if (!dt_perf_task_open(src, src->dps_pid, was[i]) &&
			    errno != ESRCH)
				error = errno != 0 ? errno : ENOMEM;
		n = error == 0 ? dt_perf_task_tids(src->dps_pid, &now) : 0;
		same = n > 0 && dt_proc_tids_within(now, n, was, m);
		free(was);
		if (error == 0 && !same)
			error = n == 0 ? ESRCH : EAGAIN;
		if (n > 0)
			free(now);
		if (error == 0)
			break;
		/* Their inherited copies go with them: none is left. */
		for (i = 0; i < src->dps_ntasks; i++)
			close(src->dps_tasks[i].dpt_fd);
		src->dps_ntasks = 0;
		dt_perf_fds_uncharge(src->dps_fdcharge);
		src->dps_fdcharge = 0;
	}
	if (error != 0) {
		free(src->dps_tasks);
		src->dps_tasks = NULL;
		src->dps_taskcap = 0;
	}
	pthread_mutex_unlock(&dt_perf_task_mtx);
	return error;
}
