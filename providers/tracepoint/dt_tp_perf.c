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
 * perf_event_open(2) for kernel tracepoints (dt_tp_perf.h), and for the
 * kprobe provider's events, which differ only in their attr.
 *
 * An event is freed only by the reader, between two rounds, after it was
 * taken off the live list and out of the epoll set: whatever pointer a
 * round holds stays valid to its end, and no later round can see it.
 * Its final drain happens then too, so records written before the close
 * still reach the opens that record the probe.
 *
 * Switch records (DT_TPEV_SWITCHES) come from a dummy software event
 * per CPU with context_switch set, whose records perf writes into the
 * tracepoint's buffer of the same CPU (PERF_EVENT_IOC_SET_OUTPUT): one
 * CPU's records are then in the order they were written.  Across CPUs
 * the reader merges the buffers by time, taking the oldest head first,
 * and leaves in the buffers what is younger than DT_TPEV_HOLD_MS: perf
 * stamps a record just before it writes it, so by then every CPU's
 * earlier records are in.  on__cpu needs this order: its stacks are
 * those its thread's switch out, maybe on another CPU, left behind.
 * The buffers' records are read in dt_tp_rec.c.
 */
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu.h>

#include <dev/dt/dtvar.h>

#include "dt_clock.h"
#include "dt_perfev.h"
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_tp_perf.h"
#include "dt_tp_perf_var.h"

static pthread_mutex_t	 dt_tpev_mtx = PTHREAD_MUTEX_INITIALIZER;
/*
 * Held by the reader while it hands records to callbacks, so that
 * dt_tpev_cut() reads its time between two records, never during one's
 * delivery.  Taken before dt_tpev_mtx, never while waiting for [K].
 */
static pthread_mutex_t	 dt_tpev_cbmtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_tpev	*dt_tpev_live;		/* [t] */
static struct dt_tpev	*dt_tpev_dead;		/* [t] */
static struct dt_perf_loop dt_tpev_rdr = DT_PERF_LOOP_INIT; /* [t] */
int			 dt_tpev_clockid = DT_PERF_CLOCK_UNKNOWN; /* [a] */
static int		 dt_tpev_pmuclock = DT_PERF_CLOCK_UNKNOWN; /* [a] */
struct dt_tpev_stats	 dt_tpev_counters;	/* [a] */
static struct dt_source	*_Atomic dt_tpev_seq;	/* [t] set once, [a] read */

static void
dt_tpev_attr(struct perf_event_attr *attr, const struct dt_tpev_pmu *pmu,
    uint64_t evtflags, size_t datasize)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = pmu->tpm_type;
	attr->config = pmu->tpm_config;
	attr->config1 = pmu->tpm_config1;
	attr->config2 = pmu->tpm_config2;
	attr->sample_period = 1;
	/* A kprobe's raw record too: one parser, a few bytes more. */
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	if (pmu->tpm_regs != 0) {
		attr->sample_type |= PERF_SAMPLE_REGS_INTR;
		attr->sample_regs_intr = pmu->tpm_regs;
	}
	if (evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) {
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr->sample_max_stack = DT_TPEV_MAXSTACK;
		attr->exclude_callchain_kernel = !(evtflags & DTEVT_KSTACK);
		attr->exclude_callchain_user = !(evtflags & DTEVT_USTACK);
	}
	attr->disabled = 1;
	/*
	 * Renames and execs, so that a thread's name is known when its
	 * records are read after it exited.  In order with this CPU's
	 * samples, and a read merged across CPUs (switch records) gives
	 * them at their time.
	 */
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->mmap = (evtflags & DT_TPEV_MMAPS) != 0;
	/*
	 * and each exit of the tree, so that what is kept by pid can be
	 * dropped: the comm records bring them already (the kernel sends
	 * task records to any event with comm, mmap or task set); asked
	 * for by name all the same, and read only by such an event.
	 */
	attr->task = (evtflags & DT_TPEV_MMAPS) != 0;
	/*
	 * With their time, though: a name from an exec on another CPU,
	 * read after this CPU's, must not undo a later one (kpload's
	 * reads were counted as taskset's, its exec's name read first).
	 */
	attr->sample_id_all = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(datasize / 4);
}

/*
 * The dummy event whose PERF_RECORD_SWITCH_CPU_WIDE records go into
 * outfd's buffer (same CPU, same clock, as perf requires).  fd or -1.
 */
static int
dt_tpev_open_switch(int cpu, int clk, int outfd)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU;
	attr.sample_id_all = 1;
	attr.context_switch = 1;
	attr.disabled = 1;
	if ((fd = dt_perf_open_clock(&attr, cpu, &clk, NULL)) == -1)
		return -1;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, outfd) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
dt_tpev_release(struct dt_tpev *ev)
{
	unsigned int i;

	if (ev->tpe_release != NULL)
		ev->tpe_release(ev->tpe_arg);
	for (i = 0; i < ev->tpe_nxfds; i++)
		if (ev->tpe_xfds[i] != -1)
			close(ev->tpe_xfds[i]);
	free(ev->tpe_xfds);
	for (i = 0; i < ev->tpe_ncpu; i++) {
		if (ev->tpe_cpus[i].tpc_meta != NULL)
			munmap(ev->tpe_cpus[i].tpc_meta, ev->tpe_mmlen);
		if (ev->tpe_cpus[i].tpc_swfd != -1)
			close(ev->tpe_cpus[i].tpc_swfd);
		if (ev->tpe_cpus[i].tpc_fd != -1)
			close(ev->tpe_cpus[i].tpc_fd);
	}
	free(ev);
}

/*
 * c's descriptor hung up: out of the epoll set, or the reader spins; for
 * a pid's threads, the next thread's event of c's CPU in its place, as
 * every thread's writes wake the waiters of all that share the buffer,
 * so its watermark still wakes the reader.  [t].
 */
static void
dt_tpev_repoll(struct dt_tpev_cpu *c)
{
	struct dt_tpev *ev = c->tpc_ev;
	unsigned int i = (unsigned int)(c - ev->tpe_cpus);
	struct epoll_event eev = { .events = EPOLLIN, .data.ptr = c };
	int fd;

	if (c->tpc_pollfd != -1)
		(void)epoll_ctl(dt_tpev_rdr.pl_epfd, EPOLL_CTL_DEL,
		    c->tpc_pollfd, NULL);
	c->tpc_pollfd = -1;
	while (c->tpc_pollrow < ev->tpe_nxfds / ev->tpe_ncpu) {
		fd = ev->tpe_xfds[c->tpc_pollrow++ * ev->tpe_ncpu + i];
		if (fd != -1 && epoll_ctl(dt_tpev_rdr.pl_epfd, EPOLL_CTL_ADD,
		    fd, &eev) == 0) {
			c->tpc_pollfd = fd;
			return;
		}
	}
}

/* What a round drains of the live events (dt_tpev_round()). */
#define DT_TPEV_R_NONE		0	/* none: only the closed ones */
#define DT_TPEV_R_PLAIN		1	/* those without switch records */
#define DT_TPEV_R_ALL		2	/* all, below their watermarks too */

/*
 * Between rounds: drain what closed events still hold, then free them.
 * Also drain the live ones that round asks for.  Returns whether any
 * event is live, and in *switches whether one has switch records.  [R].
 */
static bool
dt_tpev_round(int round, bool *switches)
{
	struct dt_tpev *ev, *next, *dead, **snap = NULL;
	size_t n = 0;
	bool live;

	pthread_mutex_lock(&dt_tpev_mtx);
	dead = dt_tpev_dead;
	dt_tpev_dead = NULL;
	live = dt_tpev_live != NULL;
	*switches = false;
	for (ev = dt_tpev_live; ev != NULL; ev = ev->tpe_next)
		*switches |= ev->tpe_switches;
	if (round != DT_TPEV_R_NONE) {
		for (ev = dt_tpev_live; ev != NULL; ev = ev->tpe_next)
			n++;
		if (n > 0 && (snap = calloc(n, sizeof(*snap))) != NULL) {
			n = 0;
			for (ev = dt_tpev_live; ev != NULL; ev = ev->tpe_next)
				if (round == DT_TPEV_R_ALL ||
				    !ev->tpe_switches)
					snap[n++] = ev;
		} else
			n = 0;
	}
	pthread_mutex_unlock(&dt_tpev_mtx);

	if (n == 0 && dead == NULL) {
		free(snap);
		return live;
	}
	/* The round reaches parked readers whole (dt_wakeup_hold()). */
	dt_wakeup_hold();
	pthread_mutex_lock(&dt_tpev_cbmtx);
	rcu_read_lock();
	/* Only this thread frees, and not before the next round. */
	dt_tpev_drain_round(snap, n, dead);
	rcu_read_unlock();
	pthread_mutex_unlock(&dt_tpev_cbmtx);
	dt_wakeup_release();
	free(snap);
	for (ev = dead; ev != NULL; ev = next) {
		next = ev->tpe_next;
		dt_tpev_release(ev);
	}
	return live;
}

/*
 * The reader's promise to the sequencer after a round that began at rt
 * (CLOCK_REALTIME): what a buffer gets after the round read its head was
 * stamped at rt or later, less the slack from stamp to write; an event
 * with switch records also left what was younger than DT_TPEV_HOLD_MS.
 * A round that left some live events undrained promises nothing new.
 * [R].
 */
static void
dt_tpev_mark(bool live, int round, bool switches, uint64_t rt)
{
	struct dt_source *seq = atomic_load(&dt_tpev_seq);

	if (seq == NULL)
		return;
	if (!live)
		dt_source_idle(seq);
	else if (round == DT_TPEV_R_ALL)
		dt_source_mark(seq, rt - DT_SEQ_SLACK_NS -
		    (switches ? DT_TPEV_HOLD_MS * 1000000ULL : 0));
	else if (round == DT_TPEV_R_PLAIN && !switches)
		dt_source_mark(seq, rt - DT_SEQ_SLACK_NS);
}

struct dt_source *
dt_tpev_source(void)
{
	return atomic_load(&dt_tpev_seq);
}

static void *
dt_tpev_reader(void *arg)
{
	struct dt_perf_loop *pl = arg;
	struct epoll_event evs[DT_TPEV_MAXEVENTS];
	struct dt_tpev_cpu *c;
	uint64_t last = 0, now, rt;
	int n, i, timeout = -1;
	int round;
	bool live, switches;

	/* Named, so that a test can tell it sleeps while nothing is open. */
	pthread_setname_np(pthread_self(), "dtd-tp");
	rcu_register_thread();
	while (!uatomic_read(&pl->pl_quit)) {
		n = epoll_wait(pl->pl_epfd, evs, DT_TPEV_MAXEVENTS, timeout);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "dtd: tracepoint: epoll_wait: %s\n",
			    strerror(errno));
			break;
		}
		uatomic_inc(&dt_tpev_counters.tps_wakeups);
		/* Before any head is read: the round's mark (dt_tpev_mark()). */
		rt = dt_clock_ns(CLOCK_REALTIME);
		/*
		 * A buffer at its watermark: drain every live event's
		 * buffers, not only that one.  Events of two tracepoints
		 * that pair up (a block request's issue on one CPU, its
		 * completion on another) must reach the device in the same
		 * round, or a reader merging by time sees the completion
		 * first and the issue only after the other buffer fills.
		 * Events with switch records keep to their own wakeups and
		 * the flush, as their merge holds back what is young.
		 */
		round = DT_TPEV_R_NONE;
		pthread_mutex_lock(&dt_tpev_cbmtx);
		rcu_read_lock();
		for (i = 0; i < n; i++) {
			if (dt_perf_loop_woken(pl, &evs[i]))
				continue;
			c = evs[i].data.ptr;
			/*
			 * A tree's event whose every task has exited
			 * (dt_tpev_open_task()) says so at every wait from
			 * then on: out of the set, or the reader spins.
			 * Its records are drained by this round and the
			 * flushes, the last by its close.
			 */
			if (evs[i].events & (EPOLLHUP | EPOLLERR)) {
				pthread_mutex_lock(&dt_tpev_mtx);
				dt_tpev_repoll(c);
				/* gone when no other thread's event polls */
				if (c->tpc_pollfd == -1)
					atomic_store(&c->tpc_hup, true);
				pthread_mutex_unlock(&dt_tpev_mtx);
			}
			if (c->tpc_ev->tpe_switches)
				dt_tpev_drain_merged(c->tpc_ev, false);
			else
				round = DT_TPEV_R_PLAIN;
		}
		rcu_read_unlock();
		pthread_mutex_unlock(&dt_tpev_cbmtx);
		now = dt_clock_ns(CLOCK_MONOTONIC);
		if (now - last >= DT_TPEV_FLUSH_MS * 1000000ULL) {
			round = DT_TPEV_R_ALL;
			last = now;
		}
		/* Nothing open, nothing to flush: sleep until an open kicks. */
		live = dt_tpev_round(round, &switches);
		timeout = live ? DT_TPEV_FLUSH_MS : -1;
		dt_tpev_mark(live, round, switches, rt);
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * Switch records on every CPU the event is open on, or on none: a CPU
 * without them would lose its on__cpu.  [I], before the reader knows ev.
 */
static void
dt_tpev_switches(struct dt_tpev *ev)
{
	struct dt_tpev_cpu *c;
	unsigned int i;

	for (i = 0; i < ev->tpe_ncpu; i++) {
		c = &ev->tpe_cpus[i];
		if (c->tpc_meta == NULL)
			continue;
		if ((c->tpc_swfd = dt_tpev_open_switch((int)i, ev->tpe_clk,
		    c->tpc_fd)) == -1)
			break;
	}
	ev->tpe_switches = i == ev->tpe_ncpu;
	if (ev->tpe_switches)
		return;
	fprintf(stderr, "dtd: tracepoint: no context-switch records (%s): "
	    "on__cpu from sched_switch alone\n", strerror(errno));
	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_swfd != -1) {
			close(ev->tpe_cpus[i].tpc_swfd);
			ev->tpe_cpus[i].tpc_swfd = -1;
		}
}

struct dt_tpev *
dt_tpev_open(int id, uint64_t evtflags, dt_tpev_fn fn, void *arg,
    int *error)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT,
	    .tpm_config = (uint64_t)id };

	return dt_tpev_open_pmu(&pmu, evtflags, fn, arg, error);
}

struct dt_tpev *
dt_tpev_open_pmu(const struct dt_tpev_pmu *pmu, uint64_t evtflags,
    dt_tpev_fn fn, void *arg, int *error)
{
	return dt_tpev_open_task(pmu, evtflags, -1, fn, arg, NULL, error);
}

struct dt_tpev *
dt_tpev_open_task(const struct dt_tpev_pmu *pmu, uint64_t evtflags,
    pid_t pid, dt_tpev_fn fn, void *arg, void (*release)(void *), int *error)
{
	return dt_tpev_open_on(pmu, evtflags, &pid, 1, false, fn, arg,
	    release, error);
}

/*
 * dt_tpev_open_task() (threads false: tids[0] the tree's root, or -1
 * for every process) and dt_tpev_open_threads() (threads).
 */
struct dt_tpev *
dt_tpev_open_on(const struct dt_tpev_pmu *pmu, uint64_t evtflags,
    const pid_t *tids, unsigned int ntids, bool threads, dt_tpev_fn fn,
    void *arg, void (*release)(void *), int *error)
{
	pid_t pid = tids[0];
	struct perf_event_attr attr;
	bool out = (evtflags & DT_TPEV_OUT) != 0;
	int *clk = pmu->tpm_type == PERF_TYPE_TRACEPOINT || out ?
	    &dt_tpev_clockid : &dt_tpev_pmuclock;
	struct dt_tpev *ev;
	struct dt_tpev_cpu *c;
	struct epoll_event eev;
	size_t datasize, mmlen;
	unsigned int i, ncpu, nopen = 0;
	long n;

	n = sysconf(_SC_NPROCESSORS_CONF);
	ncpu = n > 0 ? (unsigned int)n : 1;
	if ((ev = calloc(1, sizeof(*ev) + ncpu * sizeof(ev->tpe_cpus[0]))) ==
	    NULL) {
		if (release != NULL)
			release(arg);
		*error = ENOMEM;
		return NULL;
	}
	ev->tpe_fn = fn;
	ev->tpe_arg = arg;
	/* Whoever frees ev, on any path, releases arg with it. */
	ev->tpe_release = release;
	ev->tpe_ncpu = ncpu;
	datasize = (size_t)(threads || out ? DT_TPEV_TPAGES :
	    (evtflags & DT_TPEV_SMALL) ? DT_TPEV_SMALLPAGES : DT_TPEV_PAGES) *
	    (size_t)getpagesize();
	mmlen = datasize + (size_t)getpagesize();
	ev->tpe_mmlen = mmlen;
	ev->tpe_chain = (evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) != 0;
	ev->tpe_tasks = (evtflags & DT_TPEV_MMAPS) != 0;
	ev->tpe_nregs = (unsigned int)__builtin_popcountll(pmu->tpm_regs);
	if (ev->tpe_nregs > DT_TPEV_MAXREGS) {
		/* no CPU's descriptors yet for dt_tpev_release() */
		if (release != NULL)
			release(arg);
		free(ev);
		*error = EINVAL;
		return NULL;
	}
	dt_tpev_attr(&attr, pmu, evtflags, datasize);
	if (pid != -1) {
		/*
		 * The tree: off until the root's exec, then on in it and in
		 * all it forks, whose records perf writes into these
		 * buffers (an inherited event's output is its parent's).
		 * Never enabled by hand: that would reach every inherited
		 * copy, a launcher's helper forked before the exec among
		 * them, which must stay off.  Switch records follow
		 * CPUs, not tasks: none here (dt_tp_tree_ok()).
		 */
		attr.inherit = 1;
		/* a task already past its exec, held there: on when said */
		attr.enable_on_exec = !threads && (evtflags & DT_TPEV_OFF) == 0;
		/*
		 * A pid filter's threads: the threads they create are the
		 * process's, the processes they fork are not.  What they
		 * lost, for dt_tpev_lost().  Not for the shared events:
		 * their losses are every open's, and one still unfiltered
		 * for an instant at its open fills with the machine's
		 * records (push-ksys).
		 */
		attr.inherit_thread = threads;
		attr.read_format = threads ? PERF_FORMAT_LOST : 0;
		evtflags &= ~DT_TPEV_SWITCHES;
	}
	if (out) {
		/* one pid's records, as a pid filter's threads' are */
		attr.read_format = PERF_FORMAT_LOST;
		evtflags &= ~DT_TPEV_SWITCHES;
	}
	*error = 0;
	for (i = 0; i < ncpu; i++) {
		c = &ev->tpe_cpus[i];
		c->tpc_ev = ev;
		c->tpc_swfd = -1;
		c->tpc_pollfd = -1;
		c->tpc_fd = dt_perf_open_pid(&attr, pid, (int)i, clk,
		    &ev->tpe_tsoff);
		/* a kernel before PERF_FORMAT_LOST (6.0): losses as told */
		if (c->tpc_fd == -1 && errno == EINVAL && attr.read_format) {
			attr.read_format = 0;
			c->tpc_fd = dt_perf_open_pid(&attr, pid, (int)i, clk,
			    &ev->tpe_tsoff);
		}
		/* a kernel before inherit_thread: forks too, dtd filters */
		if (c->tpc_fd == -1 && errno == EINVAL && attr.inherit_thread) {
			attr.inherit_thread = 0;
			c->tpc_fd = dt_perf_open_pid(&attr, pid, (int)i, clk,
			    &ev->tpe_tsoff);
		}
		if (c->tpc_fd == -1) {
			/* An offline CPU has nothing to trace. */
			if (errno != ENODEV && *error == 0)
				*error = errno;
			continue;
		}
		c->tpc_meta = mmap(NULL, mmlen, PROT_READ | PROT_WRITE,
		    MAP_SHARED, c->tpc_fd, 0);
		if (c->tpc_meta == MAP_FAILED) {
			c->tpc_meta = NULL;
			if (*error == 0)
				*error = errno;
			continue;
		}
		nopen++;
	}
	if (*error != 0 || nopen == 0) {
		if (*error == 0)
			*error = ENODEV;
		dt_tpev_release(ev);
		return NULL;
	}
	ev->tpe_klost = attr.read_format != 0;
	if (threads && (*error = dt_tpev_open_xtids(ev, &attr, tids, ntids,
	    clk)) != 0) {
		dt_tpev_release(ev);
		return NULL;
	}
	ev->tpe_clk = uatomic_read(clk);
	if (evtflags & DT_TPEV_SWITCHES)
		dt_tpev_switches(ev);

	pthread_mutex_lock(&dt_tpev_mtx);
	if ((*error = dt_perf_loop_start(&dt_tpev_rdr, dt_tpev_reader)) != 0) {
		pthread_mutex_unlock(&dt_tpev_mtx);
		dt_tpev_release(ev);
		return NULL;
	}
	for (i = 0; i < ncpu; i++) {
		c = &ev->tpe_cpus[i];
		if (c->tpc_meta == NULL)
			continue;
		eev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(dt_tpev_rdr.pl_epfd, EPOLL_CTL_ADD, c->tpc_fd,
		    &eev) == -1) {
			if (*error == 0)
				*error = errno;
			continue;
		}
		c->tpc_pollfd = c->tpc_fd;
		if ((pid == -1 || threads) &&
		    (ioctl(c->tpc_fd, PERF_EVENT_IOC_ENABLE, 0) == -1 ||
		    (c->tpc_swfd != -1 && ioctl(c->tpc_swfd,
		    PERF_EVENT_IOC_ENABLE, 0) == -1)) && *error == 0)
			*error = errno;
	}
	for (i = 0; i < ev->tpe_nxfds && *error == 0; i++)
		if (ev->tpe_xfds[i] != -1 && ioctl(ev->tpe_xfds[i],
		    PERF_EVENT_IOC_ENABLE, 0) == -1)
			*error = errno;
	if (*error != 0) {
		/* The reader may hold c pointers: it frees ev, not us. */
		for (i = 0; i < ncpu; i++)
			if (ev->tpe_cpus[i].tpc_pollfd != -1)
				epoll_ctl(dt_tpev_rdr.pl_epfd, EPOLL_CTL_DEL,
				    ev->tpe_cpus[i].tpc_pollfd, NULL);
		ev->tpe_next = dt_tpev_dead;
		dt_tpev_dead = ev;
		dt_perf_loop_kick(&dt_tpev_rdr);
		pthread_mutex_unlock(&dt_tpev_mtx);
		return NULL;
	}
	/*
	 * The first open makes the reader a source: what it puts from now
	 * on is at least this old, until its first round marks.
	 */
	if (atomic_load(&dt_tpev_seq) == NULL)
		atomic_store(&dt_tpev_seq, dt_source_add("tracepoint"));
	if (dt_tpev_live == NULL && atomic_load(&dt_tpev_seq) != NULL)
		dt_source_begin(atomic_load(&dt_tpev_seq),
		    dt_clock_ns(CLOCK_REALTIME) - DT_SEQ_SLACK_NS -
		    DT_TPEV_HOLD_MS * 1000000ULL);
	ev->tpe_next = dt_tpev_live;
	dt_tpev_live = ev;
	/* The reader may sleep with no timeout: ev wants its flushes. */
	dt_perf_loop_kick(&dt_tpev_rdr);
	pthread_mutex_unlock(&dt_tpev_mtx);
	return ev;
}

uint64_t
dt_tpev_lost(struct dt_tpev *ev, unsigned int cpu)
{
	uint64_t v[2], n = 0;
	unsigned int i;
	int fd;

	if (!ev->tpe_klost || cpu >= ev->tpe_ncpu)
		return 0;
	pthread_mutex_lock(&dt_tpev_mtx);
	for (i = cpu; i < ev->tpe_ncpu + ev->tpe_nxfds; i += ev->tpe_ncpu) {
		fd = i < ev->tpe_ncpu ? ev->tpe_cpus[i].tpc_fd :
		    ev->tpe_xfds[i - ev->tpe_ncpu];
		if (fd != -1 && read(fd, v, sizeof(v)) == (ssize_t)sizeof(v))
			n += v[1];
	}
	pthread_mutex_unlock(&dt_tpev_mtx);
	return n;
}

bool
dt_tpev_cut(struct dt_tpev *ev, void (*fn)(void *, uint64_t), void *arg)
{
	if (ev->tpe_clk == DT_PERF_CLOCK_PERF)
		return false;
	pthread_mutex_lock(&dt_tpev_cbmtx);
	fn(arg, dt_clock_ns(ev->tpe_clk));
	pthread_mutex_unlock(&dt_tpev_cbmtx);
	return true;
}

int
dt_tpev_enable(struct dt_tpev *ev)
{
	unsigned int i;
	int error = 0;

	/* [t]: dt_tpev_close() may not take the descriptors meanwhile */
	pthread_mutex_lock(&dt_tpev_mtx);
	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_fd != -1 && ioctl(ev->tpe_cpus[i].tpc_fd,
		    PERF_EVENT_IOC_ENABLE, 0) == -1 && error == 0)
			error = errno;
	pthread_mutex_unlock(&dt_tpev_mtx);
	return error;
}

int
dt_tpev_filter(struct dt_tpev *ev, const char *filter)
{
	unsigned int i;
	int error = 0;

	pthread_mutex_lock(&dt_tpev_mtx);
	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_fd != -1 && ioctl(ev->tpe_cpus[i].tpc_fd,
		    PERF_EVENT_IOC_SET_FILTER, filter) == -1 && error == 0)
			error = errno;
	for (i = 0; i < ev->tpe_nxfds; i++)
		if (ev->tpe_xfds[i] != -1 && ioctl(ev->tpe_xfds[i],
		    PERF_EVENT_IOC_SET_FILTER, filter) == -1 && error == 0)
			error = errno;
	pthread_mutex_unlock(&dt_tpev_mtx);
	return error;
}

bool
dt_tpev_gone(const struct dt_tpev *ev)
{
	unsigned int i;

	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_meta != NULL &&
		    !atomic_load(&ev->tpe_cpus[i].tpc_hup))
			return false;
	return true;
}

void
dt_tpev_close(struct dt_tpev *ev)
{
	struct dt_tpev **evp;
	unsigned int i;
	int fd;

	pthread_mutex_lock(&dt_tpev_mtx);
	for (evp = &dt_tpev_live; *evp != NULL; evp = &(*evp)->tpe_next)
		if (*evp == ev) {
			*evp = ev->tpe_next;
			break;
		}
	if (!dt_tpev_rdr.pl_running) {
		pthread_mutex_unlock(&dt_tpev_mtx);
		dt_tpev_release(ev);
		return;
	}
	/*
	 * The descriptors go now, so that a stopped probe holds no perf
	 * event a moment later; the reader only reads the mappings, which
	 * keep the disabled events' buffers until it has drained them.
	 */
	for (i = 0; i < ev->tpe_ncpu; i++) {
		if (ev->tpe_cpus[i].tpc_pollfd != -1)
			epoll_ctl(dt_tpev_rdr.pl_epfd, EPOLL_CTL_DEL,
			    ev->tpe_cpus[i].tpc_pollfd, NULL);
		ev->tpe_cpus[i].tpc_pollfd = -1;
	}
	for (i = 0; i < ev->tpe_nxfds; i++)
		if ((fd = ev->tpe_xfds[i]) != -1) {
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			close(fd);
			ev->tpe_xfds[i] = -1;
		}
	for (i = 0; i < ev->tpe_ncpu; i++) {
		if ((fd = ev->tpe_cpus[i].tpc_swfd) != -1) {
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			close(fd);
			ev->tpe_cpus[i].tpc_swfd = -1;
		}
		if ((fd = ev->tpe_cpus[i].tpc_fd) == -1)
			continue;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		close(fd);
		ev->tpe_cpus[i].tpc_fd = -1;
	}
	ev->tpe_next = dt_tpev_dead;
	dt_tpev_dead = ev;
	dt_perf_loop_kick(&dt_tpev_rdr);
	pthread_mutex_unlock(&dt_tpev_mtx);
}

void
dt_tpev_shutdown(void)
{
	struct dt_tpev *ev, *next;

	if (!dt_perf_loop_stop(&dt_tpev_rdr, &dt_tpev_mtx))
		return;
	ev = dt_tpev_dead;
	dt_tpev_dead = NULL;
	pthread_mutex_unlock(&dt_tpev_mtx);
	for (; ev != NULL; ev = next) {
		next = ev->tpe_next;
		dt_tpev_release(ev);
	}
}

void
dt_tpev_stats(struct dt_tpev_stats *st)
{
	st->tps_records = uatomic_read(&dt_tpev_counters.tps_records);
	st->tps_lost = uatomic_read(&dt_tpev_counters.tps_lost);
	st->tps_wakeups = uatomic_read(&dt_tpev_counters.tps_wakeups);
}
