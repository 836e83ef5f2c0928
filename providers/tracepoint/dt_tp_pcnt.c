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
 * A pushed pid whose pcb only counts (issue 22): counted in the kernel.
 * dt_tp_pid.c follows process N with sampled events on its threads:
 * one record an event, which dtd reads and folds, and which a process
 * making calls flat out writes faster than dtd drains (perf drops).  A
 * pcb whose aggregations are count()s keyed by nothing but the pid
 * (N, constant) and the probe (the pcb's), whose filter, N's pid known,
 * translates whole to ftrace's, needs only how many events there were:
 * one counting perf event per thread of N (no buffer, no record),
 * inherited by the threads they make (inherit + inherit_thread), never
 * by the processes they fork.  A cpu or tid key needs a record: those
 * stay sampled (dt_tp_pid.c).
 *
 * Taken only where no kernel program counts the pcb (dt_tp_kbpf.c,
 * tried first: not root, USERDT_KBPF=0, a kernel without bpf(2), or a
 * filter term the program does not take, such as an argument's): this
 * kernel's inherited counters are not exact for a thread that makes
 * threads without pause (2026-12-02, 6.18, a counter on a process whose
 * maker thread made 3000 threads of one getppid() each beside 1000 of
 * main's, two busy processes beside: 4002 counted in 3 runs of 60, 4000
 * in the others), which is the sampled events' failing as dt_tp_pid.c
 * tells it; a program compares the pid on every hit instead.
 *
 * A counter's read() is its own count, what each exited inherited copy
 * folded into it at its exit, and what each live copy counted so far
 * (perf_event_read_value(): pidcount_test's inherit checks it on this
 * kernel).  A counter whose thread exited keeps its count on its
 * descriptor: all are kept open until the stop, read a last time, and
 * only then closed.
 *
 * What a counter sees is what dt_tp_pid.c's sampled events see: a
 * thread's events up to perf_event_exit_task() early in its exit, not
 * those it makes after (the SIGCHLD's signal_generate, release_task()'s
 * kfree()s, a timer or interrupt hit), which the shared event and dtd's
 * pid comparison count (dt_tp_pid.c has the numbers).  Exact only for
 * a probe no task fires past that point: raw_syscalls' sys_enter and
 * sys_exit (no system call is made after it).  A cheap exact fix would
 * need the kernel to keep the events to the end of do_exit(); not done.
 *
 * Exactness at the start is dt_tp_pid.c's: threads listed, counters
 * opened, listed again, all closed and tried again if a thread
 * appeared between (DT_TP_PID_TRIES); past DT_TP_PID_MAXTIDS threads,
 * the budget of descriptors (one a thread here, dt_perf_fds_charge(),
 * shared with the pid samplers), or where perf refuses, nothing is
 * said and dt_tp_pid.c tries, which says why it too cannot.  The same
 * clone left open there is left open here.
 *
 * The switch-over from the shared event: the pcb was linked before its
 * counters were on, so until the switch the probe's shared event, if
 * another open holds it, brings it the records of N it keeps.  At a
 * time T of that event's clock, read while its reader hands no record
 * over (dt_tpev_cut()), the shared event gives the pcb only its records
 * stamped before T (dp_srcuntil), and each counter's value is read as
 * its base: what it counts beyond is the pcb's.  No event is counted
 * twice: a hit's counter is incremented before its shared record is
 * stamped (a task's events join the CPU's list at its head when it is
 * switched in, dt_tp_pid.c), so a hit the shared record gives the pcb
 * (stamped before T) was counted before the base was read.  Lost: a hit
 * of a thread stamped at T or after and counted before that thread's
 * base was read, the few microseconds of the reads (one a thread, in
 * order), as dt_tpcnt_start() loses a hit between its switch
 * (dp_srccount) and a CPU's base read.  No shared event open, nothing
 * comes that way: the switch is the base reads alone.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tp_pcnt_start()
 *	[K]	the core's configuration lock
 *	[c]	the core's counter registry lock (dt_aggctr's dac_sync);
 *		[K] before the counter is registered
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_perfev.h"
#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_tp_count.h"
#include "dt_tp_filt.h"
#include "dt_tp_perf.h"
#include "dt_tp_var.h"

struct dt_tp_pcthr {
	int		 pct_fd;	/* [I] -1: gone before its open */
	uint64_t	 pct_last;	/* [c] value folded so far */
};

struct dt_tp_pcnt {
	struct dt_aggctr	 pc_ctr;	/* first: dac_sync's cast */
	struct dt_tp_pcnt	*pc_next;	/* [K] on dt_tp_pcnts */
	pid_t			 pc_pid;	/* [I] the process */
	unsigned int		 pc_fds;	/* [K] charged */
	unsigned int		 pc_nthr;	/* [K] set by the tries,
						   fixed from dt_aggctr_add()
						   until dt_aggctr_del() (read
						   under [c] then), zeroed
						   after it */
	struct dt_tp_pcthr	 pc_thr[DT_TP_PID_MAXTIDS];
};

static struct dt_tp_pcnt *dt_tp_pcnts;		/* [K] started ones */

/* dac_sync: fold what the counters counted since the last call. [c]. */
static void
dt_tp_pcnt_sync(struct dt_aggctr *c)
{
	struct dt_tp_pcnt *pc = (struct dt_tp_pcnt *)c;
	struct dt_tp_pcthr *t;
	uint64_t v, n = 0;
	unsigned int i;

	for (i = 0; i < pc->pc_nthr; i++) {
		t = &pc->pc_thr[i];
		/* a counter's read fails only for a bad descriptor */
		if (t->pct_fd == -1 ||
		    read(t->pct_fd, &v, sizeof(v)) != (ssize_t)sizeof(v) ||
		    v <= t->pct_last)
			continue;
		n += v - t->pct_last;
		t->pct_last = v;
	}
	dt_pcb_fold_pcount(c->dac_dp, n, pc->pc_pid);
}

/* Close pc's counters, and give back what they were charged.  [K]. */
static void
dt_tp_pcnt_close(struct dt_tp_pcnt *pc)
{
	unsigned int i;

	for (i = 0; i < pc->pc_nthr; i++)
		if (pc->pc_thr[i].pct_fd != -1)
			close(pc->pc_thr[i].pct_fd);
	pc->pc_nthr = 0;
	dt_perf_fds_uncharge(pc->pc_fds);
	pc->pc_fds = 0;
}

/*
 * Counters of tracepoint id under filter ("": none) on tids[m], on from
 * their open: 0, or an errno (ESRCH: every thread gone).  A thread gone
 * since its listing (ESRCH) makes no more events and its count is none:
 * it has no counter.  [K].
 */
static int
dt_tp_pcnt_open(struct dt_tp_pcnt *pc, int id, const char *filter,
    const pid_t *tids, int m)
{
	struct perf_event_attr attr;
	int fd, k, nopen = 0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	/* sample_period 0: a counter; the threads it makes, not forks */
	attr.inherit = 1;
	attr.inherit_thread = 1;
	/*
	 * Enabled only once filtered: an enabled counter counts every
	 * event of the thread until SET_FILTER lands.
	 */
	attr.disabled = 1;
	for (k = 0; k < m; k++) {
		pc->pc_thr[k].pct_fd = -1;
		pc->pc_thr[k].pct_last = 0;
	}
	pc->pc_nthr = (unsigned int)m;
	for (k = 0; k < m; k++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, tids[k], -1, -1,
		    PERF_FLAG_FD_CLOEXEC);
		if (fd == -1) {
			if (errno == ESRCH)
				continue;
			return errno;
		}
		pc->pc_thr[k].pct_fd = fd;
		if ((filter[0] != '\0' &&
		    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) == -1) ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == -1)
			return errno;
		nopen++;
	}
	return nopen == 0 ? ESRCH : 0;
}

/*
 * One try: counters on pid's threads, kept when a second listing finds
 * no thread the first did not.  0, or an errno (EAGAIN: the threads
 * changed; EBUSY: past the budget).  Nothing stays open on an error.
 * [K].
 */
static int
dt_tp_pcnt_try(struct dt_tp_pcnt *pc, int id, const char *filter,
    pid_t *was, pid_t *now)
{
	int m, n = 0, error;

	if ((m = dt_tp_pid_list(pc->pc_pid, was)) < 0)
		return -m;
	if (!dt_perf_fds_charge(m))
		return EBUSY;
	pc->pc_fds = (unsigned int)m;
	if ((error = dt_tp_pcnt_open(pc, id, filter, was, m)) == 0 &&
	    (n = dt_tp_pid_list(pc->pc_pid, now)) > 0 &&
	    dt_proc_tids_within(now, (size_t)n, was, (size_t)m))
		return 0;
	dt_tp_pcnt_close(pc);
	if (error != 0)
		return error;
	return n < 0 ? -n : EAGAIN;
}

/* Each counter's value now as its base: the pcb's counts start here. */
static void
dt_tp_pcnt_base(struct dt_tp_pcnt *pc)
{
	struct dt_tp_pcthr *t;
	unsigned int i;

	for (i = 0; i < pc->pc_nthr; i++) {
		t = &pc->pc_thr[i];
		if (t->pct_fd != -1 && read(t->pct_fd, &t->pct_last,
		    sizeof(t->pct_last)) != (ssize_t)sizeof(t->pct_last))
			t->pct_last = 0;
	}
}

/*
 * dt_tpev_cut()'s fn: the switch-over at t, under the lock the shared
 * event's reader hands records under, so that its next record sees
 * both stores; the bases right after, before the lock is let go.
 *
 * That is up to DT_TP_PID_MAXTIDS (256) counter reads under the one
 * dt_tpev_cbmtx every shared event's reader takes: some hundreds of
 * microseconds at most, a read of a counting event being a system call
 * that sums the thread's inherited copies.  Acceptable: it happens once
 * a start, the reader's buffers hold milliseconds of records meanwhile
 * (perf keeps writing them; nothing is lost for the wait); and the
 * reads are the window in which a hit is lost (stamped at t or after,
 * counted before its thread's base), which reading them after the lock
 * is let go, the reader racing on, would not shorten.
 */
static void
dt_tp_pcnt_cutfn(void *arg, uint64_t t)
{
	struct dt_tp_pcnt *pc = arg;
	struct dt_pcb *dp = pc->pc_ctr.dac_dp;

	atomic_store(&dp->dp_srcuntil, t);
	atomic_store(&dp->dp_srccount, true);
	dt_tp_pcnt_base(pc);
}

bool
dt_tp_pcnt_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp)
{
	struct dt_tp_src *src = tpp->tpp_srcs[0];
	struct dt_tp_pcnt *pc;
	const char *test;
	char *filter;
	pid_t pid, *was;
	int error = EAGAIN, try;

	if (dt_tpcnt_off() || tpp->tpp_kcount == NULL || tpp->tpp_nsrcs != 1 ||
	    tpp->tpp_switchin || (pid = dt_fsrc_pid(dp)) == 0 ||
	    !dt_pcb_pcount_ok(dp))
		return false;
	/* dt_tp_pid_start() hears the same and says so */
	test = getenv("USERDT_TEST_PIDFOLLOW");
	if (test != NULL && strcmp(test, "refuse") == 0)
		return false;
	if ((filter = dt_tp_filt_pcb(src, dp, tpp->tpp_kcount, pid)) == NULL)
		return false;
	if ((pc = calloc(1, sizeof(*pc))) == NULL ||
	    (was = malloc(2 * DT_TP_PID_MAXTIDS * sizeof(*was))) == NULL) {
		free(pc);
		free(filter);
		return false;
	}
	pc->pc_pid = pid;
	pc->pc_ctr.dac_dp = dp;
	pc->pc_ctr.dac_sync = dt_tp_pcnt_sync;
	for (try = 0; try < DT_TP_PID_TRIES && error == EAGAIN; try++)
		error = dt_tp_pcnt_try(pc, src->tps_fmt.dtfm_id, filter, was,
		    was + DT_TP_PID_MAXTIDS);
	free(was);
	free(filter);
	if (error != 0) {
		free(pc);
		return false;
	}
	/*
	 * The switch: by the shared event's time where it is open and
	 * its clock allows; else at once, as dt_tpcnt_start() switches
	 * (the records it has not handed over yet are lost to dp).
	 */
	if (src->tps_ev == NULL ||
	    !dt_tpev_cut(src->tps_ev, dt_tp_pcnt_cutfn, pc)) {
		atomic_store(&dp->dp_srcuntil, 0);
		atomic_store(&dp->dp_srccount, true);
		dt_tp_pcnt_base(pc);
	}
	dt_aggctr_add(&pc->pc_ctr);
	pc->pc_next = dt_tp_pcnts;
	dt_tp_pcnts = pc;
	return true;
}

bool
dt_tp_pcnt_stop(struct dt_pcb *dp)
{
	struct dt_tp_pcnt **pcp, *pc;
	unsigned int i;

	for (pcp = &dt_tp_pcnts; (pc = *pcp) != NULL; pcp = &pc->pc_next)
		if (pc->pc_ctr.dac_dp == dp) {
			*pcp = pc->pc_next;
			/* an inherited counter's copies go off with it */
			for (i = 0; i < pc->pc_nthr; i++)
				if (pc->pc_thr[i].pct_fd != -1)
					(void)ioctl(pc->pc_thr[i].pct_fd,
					    PERF_EVENT_IOC_DISABLE, 0);
			/* the last read: every event up to the stop */
			dt_aggctr_del(&pc->pc_ctr);
			dt_tp_pcnt_close(pc);
			/*
			 * dp_srccount stays set, as dt_tpcnt_stop() leaves
			 * it: a shared record still held must not reach dp.
			 */
			free(pc);
			return true;
		}
	return false;
}
