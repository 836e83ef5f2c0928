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
 * has no tgid, so a pushed pid == N cannot be an ftrace filter.  Two
 * roads, the first where it can be taken:
 *
 * The program's (dt_tp_pid_bpf()): an eBPF program on the tracepoint
 * compares current's tgid with N and writes N's records whole into BPF
 * output events of the pcb's own (one buffer per CPU), which the reader
 * reads as it reads a tracepoint's.  The comparison is dtd's own, made
 * in the kernel: every hit of N, none of another process, nothing to
 * inherit, so nothing a thread made at any pace can miss.  Root, dtd in
 * the initial pid namespace, records of a fixed size of at most
 * DT_KBPF_PIDMAX bytes (raw_syscalls' and most; not those with strings
 * of their own, __data_loc).
 *
 * The threads' (what follows): a pcb whose filter has that conjunct
 * gets perf events of its own on N's threads (dt_tpev_open_threads():
 * one buffer per CPU for all of them), inherited by every thread they
 * create, not by the processes they fork.  The kernel then writes the records of N's threads alone,
 * so dtd's CPU follows N's events, not the machine's.  The rest of the
 * pcb's filter is the events' ftrace filter where it translates; dtd
 * still applies the whole filter, as btrace does after it.
 *
 * An event happens in N exactly when it happens while one of N's
 * threads is current, and a per-task event sees it while it is attached
 * to that thread: the events dtd's pid comparison keeps (dtev_pid is
 * current's tgid), but for a thread's last ones.  The kernel detaches a
 * task's events early in do_exit() (perf_event_exit_task(), before
 * exit_notify()), and what the dying thread does after that while still
 * current (signal_generate of the SIGCHLD exit_notify() sends, the
 * kfree()s of release_task(), a timer or an interrupt that hits it) is
 * seen by the shared event and dtd's comparison, not here (measured on
 * 6.18, a process's thread exits: signal_generate 0 here, 1 shared;
 * kfree 47 here, 76 shared; dt_tp_pcnt.c's counters the same).  Exact,
 * then, only for probes that cannot fire in a task past that point:
 * raw_syscalls:sys_enter and sys_exit qualify, a task past
 * perf_event_exit_task() making no system call.
 *
 * Exactness at the start: a thread created while the events are being
 * opened may have inherited its creator's, or not.  So the threads are
 * listed, the events opened on them, and the list read again: a thread
 * that appeared between the two is unknown either way, and the whole
 * is closed and tried again; after DT_TP_PID_TRIES (a process making
 * threads without pause) the pcb goes to the shared event, and dtd
 * filters alone, as before; so too past DT_TP_PID_MAXTIDS threads
 * (E2BIG), past the budget below, or where perf refuses
 * (USERDT_TEST_PIDFOLLOW=refuse: always, for the tests).  A thread
 * listed the first time was in the process before any event was
 * opened, so it has no inherited copy: no event twice.
 * Left open: a clone whose copy of its creator's events was taken
 * before they were opened and which joins the thread group only after
 * the second listing (the few microseconds of copy_process() between
 * the two, in a clone that started before the events existed); that
 * thread's events would be missing.
 * Also open, and the kernel's: on 6.18 here, the per-thread events of
 * a thread that makes short-lived threads without pause sometimes stop
 * writing, its own records and those of the threads it makes from
 * then on, with no lost record, no POLLHUP on its descriptors and
 * nothing in PERF_FORMAT_LOST (2026-12-02: pid-push-churn under ASan
 * missed 4 to 197 of the 200 threads made after the cut in about 1 run
 * of 100; a program of a few perf calls alone, without dtd, an owner's
 * buffers per CPU and the maker's events SET_OUTPUT to them, showed
 * 5 ms windows with none of the maker's records in 5 of 25 runs).
 * Likely the context switch's swap of a parent's and a child's cloned
 * perf contexts, which leaves the parent's own events in the child's
 * context when the child exits; not proven.  PERF_SAMPLE_READ, which
 * turns that swap off since 6.12, stalled the same program.  The
 * program's road needs no inheritance, and is taken first for that.
 *
 * The buffers' owner is any listed thread perf still takes: a main
 * thread that called pthread_exit() lingers in the list, but perf
 * refuses it (ESRCH).
 *
 * The switch-over is cut by the events' time, not by when the reader
 * drains a record: the pcb was linked (dt_record_start()) before its
 * own events were on, so until then the probe's shared event, if
 * another open holds it, brings it the process's events.  Once its
 * own events are on, a time T in the records' clock is read while the
 * reader hands no record over (dt_tpev_cut()): every record the shared
 * path handed it before was stamped before T; from then on the shared
 * path gives it only records stamped before T (dp_srcuntil), its own
 * only those stamped at T or after (pe_cut).  Every event of N from T
 * on has its own record, as its events were on before T.  Both
 * compare perf's own stamps (ts_ptime), of the same clock (the
 * tracepoints' kind shares it, dt_perf_open_pid()), not the realtime
 * derived from each event's offset.  Left open: perf stamps the
 * shared and the own record of one hit each on its own, the own first
 * (6.18: 150 ns apart, 1.4 us on a cold first hit; a task's events
 * join the CPU's list at its head when it is switched in): a hit whose
 * own stamp is before T and shared one at T or after reaches the pcb
 * by neither (the other order: by both).  One hit at most per thread
 * running at T; the cut by drain time lost or doubled the whole start.
 * Exact would pair the two records of a hit (same CPU, same tid), or
 * put both in one buffer, where their order is the writes'.
 *
 * A budget caps what all pcbs take together (dt_tp_pid_charge()):
 * threads x CPUs descriptors each, shared with the profile provider's
 * pid samplers (dt_perf_fds_charge()), and a buffer per CPU.  A pcb past
 * it goes to the shared event, said once.  The longer-term design is
 * one buffer set per (open, pid) shared by all its tracepoints' events
 * (PERF_EVENT_IOC_SET_OUTPUT across them, told apart by
 * PERF_SAMPLE_IDENTIFIER): `tracepoint:*:*` would then cost threads x
 * CPUs descriptors per tracepoint but one set of buffers.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tp_pid_start()
 *	[K]	the core's configuration lock
 *	[R]	the perf reader thread, inside rcu_read_lock()
 *	[a]	atomic operations
 */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_perfev.h"
#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_tp_filt.h"
#include "dt_tp_kbpf.h"
#include "dt_tp_perf.h"
#include "dt_tp_var.h"

/* buffers (one per CPU, DT_TPEV_TPAGES: 1 MiB each) of all pcbs */
#define DT_TP_PID_MAXBUFS 256

struct dt_tp_pidev {
	struct dt_tp_pidev	*pe_next;	/* [K] on dt_tp_pidevs */
	struct dt_pcb		*pe_dp;		/* [I] used while pe_live */
	_Atomic bool		 pe_live;	/* [a] started and not stopped */
	/* [a] events not yet released, and one for the pcb until stopped */
	_Atomic unsigned int	 pe_refs;
	const struct dt_tp_probe *pe_tpp;	/* [I] */
	struct dt_tp_src	*pe_src;	/* [I] */
	struct dt_tpev		*pe_ev;		/* [K] NULL: none open */
	/* [I] before pe_live: its records before this time are not dp's */
	uint64_t		 pe_cut;
	/* [K] the program's road (dt_tp_pid_bpf()), -1 on the threads' */
	int			 pe_kev, pe_kprog, pe_kmap;
	unsigned int		 pe_fds, pe_bufs; /* [K] charged */
	unsigned int		 pe_ncpu;	/* [I] */
	/* [a] per CPU, the losses the callback counted to pe_dp */
	_Atomic uint64_t	 pe_lost[];
};

static struct dt_tp_pidev *dt_tp_pidevs;	/* [K] started ones */
static int dt_tp_pid_lasterr;			/* [K] said once */
static int dt_tp_pid_saidprog;			/* [K] said once */
static long dt_tp_pid_bufs;			/* [K] charged in all */

int
dt_tp_pid_list(pid_t pid, pid_t *tids)
{
	pid_t *all;
	size_t n;

	if ((all = dt_proc_tids(pid, &n)) == NULL)
		return -ESRCH;
	if (n > DT_TP_PID_MAXTIDS) {
		free(all);
		return -E2BIG;
	}
	memcpy(tids, all, n * sizeof(*tids));
	free(all);
	return (int)n;
}

/*
 * Charge pe's m threads x CPUs descriptors to the budget all pcbs of
 * every provider share (dt_perf_fds_charge()), and its buffers to this
 * file's: false, nothing charged, past either.  [K].
 */
static bool
dt_tp_pid_charge(struct dt_tp_pidev *pe, int m)
{
	long fds = (long)m * (long)pe->pe_ncpu;

	if (dt_tp_pid_bufs + pe->pe_ncpu > DT_TP_PID_MAXBUFS ||
	    !dt_perf_fds_charge(fds))
		return false;
	dt_tp_pid_bufs += pe->pe_ncpu;
	pe->pe_fds = (unsigned int)fds;
	pe->pe_bufs = pe->pe_ncpu;
	return true;
}

/* What pe charged, back to the budget.  [K]. */
static void
dt_tp_pid_uncharge(struct dt_tp_pidev *pe)
{
	dt_perf_fds_uncharge(pe->pe_fds);
	dt_tp_pid_bufs -= pe->pe_bufs;
	pe->pe_fds = pe->pe_bufs = 0;
}

/* dt_tpev_fn: a record of pe's events.  [R]. */
static void
dt_tp_pid_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_tp_pidev *pe = arg;
	struct dt_pcb *dp;
	struct dt_evt ev, evs;
	bool strings;

	/* pe_live's acquire: pe_cut is set before it */
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
	/* before the cut: the shared event's, handed to dp already */
	if (s->ts_ptime < pe->pe_cut)
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

/*
 * Close pe's event: the reader drains it, then releases pe.  The
 * program first: its event's close detaches it, and what it wrote
 * before is still read.  [K].
 */
static void
dt_tp_pid_close(struct dt_tp_pidev *pe)
{
	int *fds[] = { &pe->pe_kev, &pe->pe_kprog, &pe->pe_kmap };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] != -1) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (pe->pe_ev != NULL)
		dt_tpev_close(pe->pe_ev);
	pe->pe_ev = NULL;
	dt_tp_pid_uncharge(pe);
}

/*
 * pe's events on was[m], sorted, their buffers owned by the first
 * thread perf takes (one gone, or a main thread after pthread_exit(),
 * is ESRCH); was is sorted again at the return.  0 or an errno.  [K].
 */
static int
dt_tp_pid_open(struct dt_tp_pidev *pe, pid_t *was, int m)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT,
	    .tpm_config = (uint64_t)pe->pe_src->tps_fmt.dtfm_id };
	pid_t t;
	int k, error = ESRCH;

	for (k = 0; k < m && error == ESRCH; k++) {
		t = was[0];
		was[0] = was[k];
		was[k] = t;
		/* released with the event, or before a failed open returns */
		atomic_fetch_add(&pe->pe_refs, 1);
		pe->pe_ev = dt_tpev_open_threads(&pmu, pe->pe_dp->dp_evtflags &
		    (DTEVT_KSTACK | DTEVT_USTACK), was, (unsigned int)m,
		    dt_tp_pid_cb, pe, dt_tp_pid_release, &error);
		t = was[0];
		was[0] = was[k];
		was[k] = t;
		if (pe->pe_ev != NULL)
			return 0;
	}
	return error;
}

/*
 * One try: events on pid's threads, kept when a second listing finds no
 * thread the first did not.  0, or an errno (EAGAIN: the threads
 * changed, try again; EBUSY: past the budget).  [K].
 */
static int
dt_tp_pid_try(struct dt_tp_pidev *pe, pid_t pid, pid_t *was, pid_t *now)
{
	int m, n, error;

	if ((m = dt_tp_pid_list(pid, was)) < 0)
		return -m;
	if (!dt_tp_pid_charge(pe, m))
		return EBUSY;
	if ((error = dt_tp_pid_open(pe, was, m)) != 0) {
		dt_tp_pid_uncharge(pe);
		return error;
	}
	if ((n = dt_tp_pid_list(pid, now)) > 0 &&
	    dt_proc_tids_within(now, n, was, m))
		return 0;
	/* pe_live never set: no record of these went anywhere */
	dt_tp_pid_close(pe);
	return n < 0 ? -n : EAGAIN;
}

/* Whether dtd sees the kernel's pids: the program compares those. */
static bool
dt_tp_pid_initns(void)
{
	static int known = -1;
	struct stat st;

	/* PROC_PID_INIT_INO: the initial pid namespace's inode */
	if (known == -1)
		known = stat("/proc/self/ns/pid", &st) == 0 &&
		    st.st_ino == 0xEFFFFFFCU;
	return known == 1;
}

/*
 * The program's road: pid's hits of the tracepoint written whole by an
 * eBPF program into output events of pe's own (dt_kbpf_pidprog()), the
 * pid compared where the event happens, on the shared event's hits:
 * no thread listed, none inherited, so none missed, however fast the
 * process makes them, and the hits kept are exactly those dtd's own
 * comparison keeps (dtev_pid is current's tgid), a thread's last ones
 * too.  Root, a record of a fixed size, dtd in the initial pid
 * namespace (the program sees the kernel's pids).  0, or an errno:
 * EOPNOTSUPP where it does not apply, the threads' road then.  [K].
 */
static int
dt_tp_pid_bpf(struct dt_tp_pidev *pe, pid_t pid)
{
	const struct dt_tp_format *fm = &pe->pe_src->tps_fmt;
	struct bpf_insn *insns;
	char why[200];
	unsigned int i, n, ncpu;
	int error, fd;

	if (dt_tp_kbpf_off() || fm->dtfm_fixsize == 0 ||
	    fm->dtfm_fixsize > DT_KBPF_PIDMAX || !dt_tp_pid_initns() ||
	    (ncpu = dt_kbpf_cpus()) == 0)
		return EOPNOTSUPP;
	if (!dt_tp_pid_charge(pe, 1))
		return EBUSY;
	/* released with the event, or before a failed open returns */
	atomic_fetch_add(&pe->pe_refs, 1);
	pe->pe_ev = dt_tpev_open_out(fm->dtfm_id, pe->pe_dp->dp_evtflags &
	    (DTEVT_KSTACK | DTEVT_USTACK), dt_tp_pid_cb, pe,
	    dt_tp_pid_release, &pe->pe_kev, &error);
	if (pe->pe_ev == NULL) {
		dt_tp_pid_uncharge(pe);
		return error;
	}
	error = 0;
	if ((pe->pe_kmap = dt_kbpf_map(BPF_MAP_TYPE_PERF_EVENT_ARRAY,
	    sizeof(uint32_t), sizeof(uint32_t), ncpu, "udtpidout")) == -1)
		error = errno;
	for (i = 0; i < ncpu && error == 0; i++)
		if ((fd = dt_tpev_fd(pe->pe_ev, i)) != -1 &&
		    dt_kbpf_put(pe->pe_kmap, i, (uint32_t)fd) != 0)
			error = errno;
	if (error == 0 && ((insns = calloc(DT_KBPF_MAXINSNS,
	    sizeof(*insns))) == NULL))
		error = ENOMEM;
	else if (error == 0) {
		n = dt_kbpf_pidprog(pid, fm->dtfm_id, fm->dtfm_fixsize,
		    pe->pe_kmap, insns);
		if (n == 0)
			error = EOPNOTSUPP;
		else if ((pe->pe_kprog = dt_kbpf_load_insns(insns, n,
		    "udtpid", why, sizeof(why))) == -1) {
			error = EOPNOTSUPP;
			/* a refusal root does not expect is said, once */
			if (geteuid() == 0 && !dt_tp_pid_saidprog++)
				fprintf(stderr, "dtd: tracepoint: %s:%s: the pid "
				    "program refused (%s): its threads "
				    "followed\n", pe->pe_src->tps_sys,
				    pe->pe_src->tps_event, why);
		}
		free(insns);
	}
	/* hung last: every output it can write to is in the map */
	if (error == 0 && ioctl(pe->pe_kev, PERF_EVENT_IOC_SET_BPF,
	    pe->pe_kprog) == -1)
		error = errno;
	if (error != 0)
		dt_tp_pid_close(pe);
	return error;
}

/*
 * dt_tpev_cut()'s fn: the switch-over at t, between two records the
 * reader hands over.  It runs under the lock the reader hands records
 * under: the reader's next record sees all four stores together.
 */
static void
dt_tp_pid_cutfn(void *arg, uint64_t t)
{
	struct dt_tp_pidev *pe = arg;

	pe->pe_cut = t;
	atomic_store(&pe->pe_dp->dp_srcuntil, t);
	atomic_store(&pe->pe_dp->dp_srccount, true);
	atomic_store(&pe->pe_live, true);
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
	pe->pe_kev = pe->pe_kprog = pe->pe_kmap = -1;
	test = getenv("USERDT_TEST_PIDFOLLOW");
	if (test != NULL && strcmp(test, "refuse") == 0)
		error = EPERM;
	else if ((test == NULL || strcmp(test, "threads") != 0) &&
	    ((error = dt_tp_pid_bpf(pe, pid)) == 0 || error == EBUSY))
		;	/* the program's road, or past the budget */
	else if ((was = malloc(2 * DT_TP_PID_MAXTIDS * sizeof(*was))) !=
	    NULL) {
		error = EAGAIN;
		for (try = 0; try < DT_TP_PID_TRIES && error == EAGAIN; try++)
			error = dt_tp_pid_try(pe, pid, was,
			    was + DT_TP_PID_MAXTIDS);
		free(was);
	}
	/*
	 * The rest of dp's filter, where ftrace takes it; refused, the
	 * records are more, never the events fewer.  Before the cut: a
	 * record before the filter took is one dtd filters.
	 */
	if (error == 0 && (filt = dt_tp_filt_own(src, dp)) != NULL) {
		(void)dt_tpev_filter(pe->pe_ev, filt);
		free(filt);
	}
	/* the cut: its own events are on, and every thread has them */
	if (error == 0 && !dt_tpev_cut(pe->pe_ev, dt_tp_pid_cutfn, pe)) {
		dt_tp_pid_close(pe);
		error = EOPNOTSUPP;
	}
	if (error != 0) {
		if (error != dt_tp_pid_lasterr)
			fprintf(stderr, "dtd: tracepoint: %s:%s: cannot follow "
			    "the threads of %d (%s): dtd filters its pid\n",
			    src->tps_sys, src->tps_event, (int)pid,
			    error == EBUSY ? "past the budget of descriptors "
			    "and buffers" : strerror(error));
		dt_tp_pid_lasterr = error;
		dt_tp_pid_release(pe);
		return false;
	}
	pe->pe_next = dt_tp_pidevs;
	dt_tp_pidevs = pe;
	return true;
}

/*
 * What the kernel lost of pe's records and no lost record told (perf
 * writes one only before the next record that fits: a process's last
 * burst before the stop is where), dropped for pe's pcb.  A lost
 * record the reader counts as this runs is counted twice: drops said
 * too many then, never too few.  Records still in the buffers when
 * pe_live goes false are not dp's any more (the stop's end), and not
 * counted as lost: what is excluded there is after the stop.  On the
 * program's road, the runs the kernel skipped (its recursion guard:
 * another BPF program ran on that CPU, any process's hit) are counted
 * as recursive drops: as many or more than pid lost, never fewer.  [K],
 * while pe_live.
 */
static void
dt_tp_pid_tail(struct dt_tp_pidev *pe)
{
	uint64_t k, c;
	unsigned int i;

	if (pe->pe_kprog != -1 && (k = dt_kbpf_misses(pe->pe_kprog)) > 0)
		dt_pcb_count_recurevt(pe->pe_dp, 0, k);

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
