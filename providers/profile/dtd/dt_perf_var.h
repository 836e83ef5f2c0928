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
 * What the profile sampler's two files share: dt_perf.c (the reader, and
 * sampling system wide) and dt_perf_task.c (task mode: a dtd without
 * root samples the threads of its user's traced processes).
 *
 * Locks:
 *	[p]	dt_perf_mtx (dt_perf.c)
 *	[t]	dt_perf_task_mtx (dt_perf_task.c)
 *	[R]	the reader thread
 *	[a]	atomic operations
 *	[I]	set before the sampler is published
 */
#ifndef DT_PERF_VAR_H
#define DT_PERF_VAR_H

#include <sys/types.h>

#include <linux/perf_event.h>

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct dt_pcb;

/* A traced thread's event on one CPU, its samples in the src's ring. */
struct dt_perf_task {
	pid_t		dpt_pid;	/* [t] its process */
	pid_t		dpt_tid;	/* [t] */
	int		dpt_fd;		/* [t] */
};

struct dt_perf_src {
	struct dt_perf_src	*dps_dnext;	/* [p] dead list */
	struct dt_perf_src	*dps_lnext;	/* [p] live list */
	struct dt_pcb		*dps_pcb;	/* [I] live while !stopped */
	int			 dps_fd;	/* [I] */
	unsigned int		 dps_cpu;	/* [I] ring to fill */
	uint64_t		 dps_nsecs;	/* [I] period */
	int64_t			 dps_tsoff;	/* [I] realtime - perf clock */
	struct perf_event_mmap_page *dps_meta;	/* [I] mmap'd ring */
	size_t			 dps_mmlen;	/* [I] */
	int			 dps_stopped;	/* [a] */
	uint64_t		 dps_throttled;	/* [R] throttle start, 0 */
	uint64_t		 dps_lastts;	/* [a] last sample, or start */
	clockid_t		 dps_clock;	/* [I] perf's timestamps */
	/*
	 * Task mode: dps_fd is a disabled event on dtd itself that only
	 * holds the ring; every traced thread gets an event on this CPU
	 * opened like it (dps_attr), whose output goes there, and which
	 * the threads it starts later inherit.
	 */
	struct perf_event_attr	 dps_attr;	/* [I] dps_fd's */
	/*
	 * [I] A pid filter's process (dt_perf_pid_begin()), 0: none.  As
	 * in task mode, dps_fd is on dtd and its threads' events write
	 * there; they are not linked for tracees, and stay across exec.
	 */
	pid_t			 dps_pid;
	struct dt_perf_src	*dps_tnext;	/* [t] task-mode list */
	struct dt_perf_task	*dps_tasks;	/* [t] NULL unless task mode */
	size_t			 dps_ntasks;	/* [t] */
	/* [t] descriptors charged to dt_perf_fds_charge(): a pid's */
	long			 dps_fdcharge;
	size_t			 dps_taskcap;	/* [t] */
};


/* The attr of a sampler of period nsecs for a pcb's evtflags. */
void	dt_perf_attr(struct perf_event_attr *, uint64_t nsecs,
	    uint64_t evtflags);

/*
 * Task mode.  dt_perf_task_begin(): src's ring is mapped and watched by
 * the reader; link src and give every thread of every traced process an
 * event on its CPU writing there, enabled; 0 or an errno (nothing left
 * linked or open then).  dt_perf_task_end(): close them and unlink src.
 * Both from dtpv_start/dtpv_stop, under the core's lock; they take [t].
 */
int	dt_perf_task_begin(struct dt_perf_src *);
void	dt_perf_task_end(struct dt_perf_src *);

/*
 * A pid filter's sampler (issue 22): src's ring (on dtd, dps_pid set)
 * gets the events of dps_pid's threads on its CPU, inherited by the
 * threads they create, not by the processes they fork.  The threads are
 * listed before and after; one that appeared between may or may not
 * have inherited its creator's event, so all are closed and it is tried
 * again.  0, or an errno (EAGAIN: the threads never held still; nothing
 * left open then).  Stopped by dt_perf_task_end().  As the above.
 */
int	dt_perf_pid_begin(struct dt_perf_src *);

#endif /* DT_PERF_VAR_H */
