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
 * A pid filter evaluated where the event happens (issue 22).  ftrace
 * has no tgid, so a pushed pid == N cannot be an ftrace filter; instead
 * a pcb whose filter has that conjunct gets perf events of its own on
 * N's threads (dt_tpev_open_threads(): one buffer per CPU for all of
 * them), inherited by every thread they create, not by the processes
 * they fork.  The kernel then writes the records of N's threads alone,
 * so dtd's CPU follows N's events, not the machine's.  The rest of the
 * pcb's filter is the events' ftrace filter where it translates; dtd
 * still applies the whole filter, as btrace does after it.
 *
 * An event happens in N exactly when it happens while one of N's
 * threads is current, which is what a per-task event sees: the same
 * events dtd's pid comparison keeps (dtev_pid is current's tgid).
 *
 * Exactness at the start: a thread created while the events are being
 * opened may have inherited its creator's, or not.  So the threads are
 * listed, the events opened on them, and the list read again: a thread
 * that appeared between the two is unknown either way, and the whole
 * is closed and tried again; after DT_TP_PID_TRIES (a process making
 * threads without pause) the pcb goes to the shared event, and dtd
 * filters alone, as before; so too past DT_TP_PID_MAXTIDS threads, or
 * where perf refuses (USERDT_TEST_PIDFOLLOW=refuse: always, for the
 * tests).  A thread listed the first time was in the process before
 * any event was opened, so it has no inherited copy: no event twice.
 * Left open: a clone whose copy of its creator's events was taken
 * before they were opened and which joins the thread group only after
 * the second listing (the few microseconds of copy_process() between
 * the two, in a clone that started before the events existed); that
 * thread's events would be missing.
 *
 * The pcb takes no record of the probe's shared event (dp_srccount, as
 * a counted or tree pcb), and its own records go to it alone, only
 * while it records (pe_live), as dt_tp_tree.c's.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tp_pid_start()
 *	[K]	the core's configuration lock
 *	[R]	the perf reader thread, inside rcu_read_lock()
 */
#include <linux/perf_event.h>

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_tp_filt.h"
#include "dt_tp_perf.h"
#include "dt_tp_var.h"

#define DT_TP_PID_TRIES	4	/* listings that must agree, at most */
#define DT_TP_PID_MAXTIDS 256	/* threads followed (fds: x CPUs) */

struct dt_tp_pidev {
	struct dt_tp_pidev	*pe_next;	/* [K] on dt_tp_pidevs */
	struct dt_pcb		*pe_dp;		/* [I] used while pe_live */
	_Atomic bool		 pe_live;	/* [a] started and not stopped */
	/* [a] events not yet released, and one for the pcb until stopped */
	_Atomic unsigned int	 pe_refs;
	const struct dt_tp_probe *pe_tpp;	/* [I] */
	struct dt_tp_src	*pe_src;	/* [I] */
	struct dt_tpev		*pe_ev;		/* [K] NULL: none open */
	unsigned int		 pe_ncpu;	/* [I] */
	/* [a] per CPU, the losses the callback counted to pe_dp */
	_Atomic uint64_t	 pe_lost[];
};

static struct dt_tp_pidev *dt_tp_pidevs;	/* [K] started ones */
static int dt_tp_pid_lasterr;			/* [K] said once */

static int
dt_tp_pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * pid's threads into tids[DT_TP_PID_MAXTIDS], sorted, pid itself
 * first: their count, or -1 (no such process, pid a thread but not a
 * process, too many threads).
 */
static int
dt_tp_pid_list(pid_t pid, pid_t *tids)
{
	char path[64], buf[512], *p;
	struct dirent *de;
	DIR *d;
	long v;
	int n = 0, i;

	/* the kernel shows a thread's tid as a directory of its own */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (dt_proc_read(path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "\nTgid:\t")) == NULL || atoi(p + 7) != pid)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (n == DT_TP_PID_MAXTIDS) {
			n = -1;
			break;
		}
		v = strtol(de->d_name, NULL, 10);
		tids[n++] = (pid_t)v;
	}
	closedir(d);
	if (n <= 0)
		return -1;
	qsort(tids, (size_t)n, sizeof(*tids), dt_tp_pid_cmp);
	/* pid first: the buffers' owner, whose absence says "gone" */
	for (i = 0; i < n && tids[i] != pid; i++)
		;
	if (i == n)
		return -1;
	memmove(&tids[1], &tids[0], (size_t)i * sizeof(*tids));
	tids[0] = pid;
	return n;
}

/* Whether every thread of now[n] is among was[m] (was[1..] sorted). */
static bool
dt_tp_pid_subset(const pid_t *now, int n, const pid_t *was, int m)
{
	int i;

	for (i = 0; i < n; i++)
		if (now[i] != was[0] && (m < 2 || bsearch(&now[i], &was[1],
		    (size_t)m - 1, sizeof(*was), dt_tp_pid_cmp) == NULL))
			return false;
	return true;
}

/* dt_tpev_fn: a record of pe's events.  [R]. */
static void
dt_tp_pid_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_tp_pidev *pe = arg;
	struct dt_pcb *dp;
	struct dt_evt ev, evs;
	bool strings;

	dp = atomic_load(&pe->pe_live) ? pe->pe_dp : NULL;
	if (s->ts_lost > 0) {
		if (dp == NULL)
			return;
		/* before the count: dt_tp_pid_stop() takes it off */
		if (s->ts_cpu < pe->pe_ncpu)
			atomic_fetch_add(&pe->pe_lost[s->ts_cpu], s->ts_lost);
		dt_pcb_count_dropevt(dp, s->ts_cpu, s->ts_lost);
		return;
	}
	if (dt_tp_sample_note(pe->pe_src, s) || s->ts_swin || dp == NULL)
		return;
	if (!dt_tp_build(pe->pe_tpp, pe->pe_src, s, dp->dp_evtflags, &ev,
	    &evs, &strings))
		return;
	dt_seq_put(dt_tpev_source(), dp, s->ts_cpu, strings ? &evs : &ev);
}

/* One event, or the pcb, is done with pe: the last frees it. */
static void
dt_tp_pid_release(void *arg)
{
	struct dt_tp_pidev *pe = arg;

	if (atomic_fetch_sub(&pe->pe_refs, 1) == 1)
		free(pe);
}

/* Close pe's event: the reader drains it, then releases pe.  [K]. */
static void
dt_tp_pid_close(struct dt_tp_pidev *pe)
{
	if (pe->pe_ev != NULL)
		dt_tpev_close(pe->pe_ev);
	pe->pe_ev = NULL;
}

/*
 * One try: events on pid's threads, kept when a second listing finds no
 * thread the first did not.  0, or an errno (EAGAIN: the threads
 * changed, try again).  [K].
 */
static int
dt_tp_pid_try(struct dt_tp_pidev *pe, pid_t pid, pid_t *was, pid_t *now)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT,
	    .tpm_config = (uint64_t)pe->pe_src->tps_fmt.dtfm_id };
	int m, n, error;

	if ((m = dt_tp_pid_list(pid, was)) == -1)
		return ESRCH;
	/* released with the event, or before a failed open returns */
	atomic_fetch_add(&pe->pe_refs, 1);
	if ((pe->pe_ev = dt_tpev_open_threads(&pmu, pe->pe_dp->dp_evtflags &
	    (DTEVT_KSTACK | DTEVT_USTACK), was, (unsigned int)m,
	    dt_tp_pid_cb, pe, dt_tp_pid_release, &error)) == NULL)
		return error;
	if ((n = dt_tp_pid_list(pid, now)) != -1 &&
	    dt_tp_pid_subset(now, n, was, m))
		return 0;
	/* pe_live never set: no record of these went anywhere */
	dt_tp_pid_close(pe);
	return n == -1 ? ESRCH : EAGAIN;
}

bool
dt_tp_pid_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp)
{
	struct dt_tp_src *src = tpp->tpp_srcs[0];
	struct dt_tp_pidev *pe;
	pid_t pid, *was;
	const char *test;
	char *filt;
	long ncpu;
	int error = ENOMEM, try;

	/* on__cpu's switch records are per CPU, and follow no task */
	if (tpp->tpp_nsrcs != 1 || tpp->tpp_switchin ||
	    (pid = dt_fsrc_pid(dp)) == 0)
		return false;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if ((pe = calloc(1, sizeof(*pe) + (size_t)(ncpu > 0 ? ncpu : 1) *
	    sizeof(pe->pe_lost[0]))) == NULL)
		return false;
	pe->pe_ncpu = ncpu > 0 ? (unsigned int)ncpu : 1;
	pe->pe_dp = dp;
	pe->pe_tpp = tpp;
	pe->pe_src = src;
	atomic_store(&pe->pe_refs, 1);
	test = getenv("USERDT_TEST_PIDFOLLOW");
	if (test != NULL && strcmp(test, "refuse") == 0)
		error = EPERM;
	else if ((was = malloc(2 * DT_TP_PID_MAXTIDS * sizeof(*was))) !=
	    NULL) {
		error = EAGAIN;
		for (try = 0; try < DT_TP_PID_TRIES && error == EAGAIN; try++)
			error = dt_tp_pid_try(pe, pid, was,
			    was + DT_TP_PID_MAXTIDS);
		free(was);
	}
	if (error != 0) {
		if (error != dt_tp_pid_lasterr)
			fprintf(stderr, "dtd: tracepoint: %s:%s: cannot follow "
			    "the threads of %d (%s): dtd filters its pid\n",
			    src->tps_sys, src->tps_event, (int)pid,
			    strerror(error));
		dt_tp_pid_lasterr = error;
		dt_tp_pid_release(pe);
		return false;
	}
	/*
	 * The rest of dp's filter, where ftrace takes it; refused, the
	 * records are more, never the events fewer.
	 */
	if ((filt = dt_tp_filt_own(src, dp)) != NULL) {
		(void)dt_tpev_filter(pe->pe_ev, filt);
		free(filt);
	}
	/*
	 * The shared event's records stop reaching dp before its own
	 * start: an event in between reaches it by neither, never twice.
	 */
	atomic_store(&dp->dp_srccount, true);
	atomic_store(&pe->pe_live, true);
	pe->pe_next = dt_tp_pidevs;
	dt_tp_pidevs = pe;
	return true;
}

/*
 * What the kernel lost of pe's records and no lost record told (perf
 * writes one only before the next record that fits: a process's last
 * burst before the stop is where), dropped for pe's pcb.  A lost
 * record the reader counts as this runs is counted twice: drops said
 * too many then, never too few.  [K], while pe_live.
 */
static void
dt_tp_pid_tail(struct dt_tp_pidev *pe)
{
	uint64_t k, c;
	unsigned int i;

	for (i = 0; i < pe->pe_ncpu; i++) {
		k = dt_tpev_lost(pe->pe_ev, i);
		c = atomic_load(&pe->pe_lost[i]);
		if (k > c)
			dt_pcb_count_dropevt(pe->pe_dp, i, k - c);
	}
}

bool
dt_tp_pid_stop(struct dt_pcb *dp)
{
	struct dt_tp_pidev **pep, *pe;

	for (pep = &dt_tp_pidevs; (pe = *pep) != NULL; pep = &pe->pe_next)
		if (pe->pe_dp == dp) {
			*pep = pe->pe_next;
			dt_tp_pid_tail(pe);
			atomic_store(&pe->pe_live, false);
			/* the reader drains it; the last release frees pe */
			dt_tp_pid_close(pe);
			dt_tp_pid_release(pe);
			return true;
		}
	return false;
}
