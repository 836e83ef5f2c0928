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
 * perf_event_open(2) sampling for the profile provider.
 *
 * Lifetime of a sampler without ever waiting for the reader: dt_perf_stop
 * marks it stopped, removes its descriptor from the epoll set and queues
 * it on the dead list; the reader frees dead samplers only between two
 * epoll_wait() rounds, after it finished with every pointer the previous
 * round returned, and no later round can return a removed descriptor.
 * The pcb is touched only inside an RCU read-side section and only while
 * the sampler is not marked stopped: the core stops a pcb before its
 * grace period and frees it after, so a reader that saw "not stopped"
 * still holds a live pcb.
 */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu.h>

#include "dt_clock.h"
#include "dt_perf.h"
#include "dt_perf_var.h"
#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_untrace.h"

#define DT_PERF_PAGES		64	/* data pages per event, power of 2 */
#define DT_PERF_WAKE_NS		10000000ULL	/* reader latency goal */
#define DT_PERF_MAXEVENTS	64
#define DT_PERF_MAXSTACK	64	/* frames perf walks per sample */
/* with DTEVT_DEEPSTACK: both parts whole (+ their context markers) */
#define DT_PERF_DEEPSTACK	(2 * DTEV_DEEP_MAX + 2)
#define DT_PERF_COMMTTL_NS	1000000000ULL	/* re-read comm after */
#define DT_PERF_COMMSLOTS	4096	/* power of 2 */


/* Last known name of a thread, refreshed from /proc after a TTL. */
struct dt_perf_comm {
	pid_t		dpc_tid;		/* [R] 0: empty */
	pid_t		dpc_pid;		/* [R] */
	uint64_t	dpc_stamp;		/* [R] CLOCK_MONOTONIC ns */
	char		dpc_comm[DTMAXCOMLEN];	/* [R] */
};

static pthread_mutex_t	 dt_perf_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_perf_loop dt_perf_rdr = DT_PERF_LOOP_INIT; /* [p] */
static struct dt_perf_src *dt_perf_dead;	/* [p] to free */
static struct dt_perf_src *dt_perf_live;	/* [p] started, not stopped */
static struct dt_source	*dt_perf_seq;		/* [p] set once */
static int		 dt_perf_refuse;	/* [a] errno, 0: allowed */
static int		 dt_perf_clockid = DT_PERF_CLOCK_UNKNOWN; /* [a] */
static struct dt_perf_stats dt_perf_counters;	/* [a] */
static struct dt_perf_comm dt_perf_comms[DT_PERF_COMMSLOTS];	/* [R] */
static union dt_perf_wrap dt_perf_wrap;	/* [R] */

/* perf's walk limit for deep stacks: the sysctl's, at most ours. */
static uint16_t
dt_perf_maxstack(void)
{
	static _Atomic unsigned int cached;
	unsigned int v = atomic_load(&cached);
	FILE *f;

	if (v != 0)
		return (uint16_t)v;
	v = DT_PERF_DEEPSTACK;
	if ((f = fopen("/proc/sys/kernel/perf_event_max_stack", "re")) !=
	    NULL) {
		unsigned int sys;

		if (fscanf(f, "%u", &sys) == 1 && sys > 0 && sys < v)
			v = sys;
		fclose(f);
	}
	atomic_store(&cached, v);
	return (uint16_t)v;
}

void
dt_perf_attr(struct perf_event_attr *attr, uint64_t nsecs,
    uint64_t evtflags)
{
	uint64_t wake;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = nsecs;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	/* Walking stacks nobody reads is most of a sample's cost. */
	if (evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) {
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
		/*
		 * Kernel and user frames share this budget and we keep 19
		 * of each: walk less than the default 127, enough that a
		 * deep kernel stack still leaves 19 user frames.
		 */
		attr->sample_max_stack = DT_PERF_MAXSTACK;
		/*
		 * DTEVT_DEEPSTACK: as deep as perf walks by default (the
		 * sysctl kernel.perf_event_max_stack bounds what may be
		 * asked; more is EOVERFLOW), shared by both parts.
		 */
		if (evtflags & DTEVT_DEEPSTACK)
			attr->sample_max_stack = dt_perf_maxstack();
		attr->exclude_callchain_kernel = !(evtflags & DTEVT_KSTACK);
		attr->exclude_callchain_user = !(evtflags & DTEVT_USTACK);
	}
	/* Task mode: what perf_event_paranoid 2 lets a user sample. */
	if (dt_perf_task_on()) {
		attr->exclude_kernel = 1;
		attr->exclude_hv = 1;
		attr->exclude_callchain_kernel = 1;
	}
	attr->disabled = 1;
	attr->comm = (evtflags & DTEVT_EXECNAME) != 0;
	attr->comm_exec = attr->comm;
	/* Batch wakeups at fast rates, one per sample at slow ones. */
	wake = DT_PERF_WAKE_NS / (nsecs ? nsecs : 1);
	attr->wakeup_events = (uint32_t)(wake > 1 ? wake : 1);
}

/*
 * The event that holds cpu's ring: system wide, or in task mode or for
 * a pid filter (tasks) one on dtd itself that stays disabled (the
 * threads' events write into its ring).  *attr is what it was opened
 * with.
 */
static int
dt_perf_open(struct perf_event_attr *attr, uint64_t nsecs, uint64_t evtflags,
    int cpu, bool tasks, int64_t *tsoff, clockid_t *clk)
{
	int fd;

	dt_perf_attr(attr, nsecs, evtflags);
	if ((fd = dt_perf_open_pid(attr, tasks || dt_perf_task_on() ?
	    getpid() : -1, cpu, &dt_perf_clockid, tsoff)) == -1)
		return -1;
	/* perf's own clock is sched_clock, about CLOCK_MONOTONIC. */
	*clk = attr->use_clockid && attr->clockid == CLOCK_REALTIME ?
	    CLOCK_REALTIME : CLOCK_MONOTONIC;
	return fd;
}

const char *
dt_perf_clock(void)
{
	switch (uatomic_read(&dt_perf_clockid)) {
	case CLOCK_REALTIME:
		return "realtime";
	case CLOCK_MONOTONIC:
		return "monotonic+offset";
	case DT_PERF_CLOCK_PERF:
		return "perf+offset";
	default:
		return "unknown";
	}
}

int
dt_perf_probe(void)
{
	struct perf_event_attr attr;
	int64_t off;
	clockid_t clk;
	int fd;

	if ((fd = dt_perf_open(&attr, 1000000000ULL, DTEVT_KSTACK |
	    DTEVT_USTACK, 0, false, &off, &clk)) == -1)
		return errno;
	close(fd);
	return 0;
}

/*
 * Name of a thread as OpenBSD would record it; idle has no task.
 * Reader thread only (the cache is [R]).
 */
static void
dt_perf_comm(pid_t pid, pid_t tid, unsigned int cpu, char *comm)
{
	struct dt_perf_comm *c;
	uint64_t now;

	if (tid == 0) {
		/* OpenBSD's per-CPU idle threads are named idle0, idle1... */
		snprintf(comm, DTMAXCOMLEN, "idle%u", cpu);
		return;
	}
	c = &dt_perf_comms[(unsigned int)tid & (DT_PERF_COMMSLOTS - 1)];
	now = dt_clock_ns(CLOCK_MONOTONIC);
	if (c->dpc_tid == tid && c->dpc_pid == pid &&
	    now - c->dpc_stamp < DT_PERF_COMMTTL_NS) {
		memcpy(comm, c->dpc_comm, DTMAXCOMLEN);
		return;
	}
	if (dt_proc_comm(pid, tid, c->dpc_comm, DTMAXCOMLEN) != 0 &&
	    (c->dpc_tid != tid || c->dpc_pid != pid)) {
		/* Gone before we looked: an empty name, as a stale one lies. */
		memset(c->dpc_comm, 0, DTMAXCOMLEN);
	}
	c->dpc_tid = tid;
	c->dpc_pid = pid;
	c->dpc_stamp = now;
	memcpy(comm, c->dpc_comm, DTMAXCOMLEN);
}

/*
 * A PERF_RECORD_COMM: a rename or exec, fresher than any cache entry.
 * Reader thread only.
 */
static void
dt_perf_comm_update(const char *rec, size_t len)
{
	struct dt_perf_comm *c;
	const char *name;
	pid_t pid, tid;

	if (!dt_perf_comm_rec(rec, len, &pid, &tid, &name) || tid == 0)
		return;
	c = &dt_perf_comms[(unsigned int)tid & (DT_PERF_COMMSLOTS - 1)];
	c->dpc_tid = tid;
	c->dpc_pid = pid;
	c->dpc_stamp = dt_clock_ns(CLOCK_MONOTONIC);
	memset(c->dpc_comm, 0, DTMAXCOMLEN);
	memcpy(c->dpc_comm, name, strnlen(name, DTMAXCOMLEN - 1));
}

/*
 * A PERF_RECORD_SAMPLE laid out per dt_perf_attr(): ip, pid/tid, time,
 * cpu/res, then the callchain when asked.  Reader thread only, inside
 * rcu_read_lock() on a pcb not stopped.
 */
static void
dt_perf_sample(struct dt_perf_src *src, struct dt_pcb *dp, const char *rec,
    size_t len)
{
	struct dt_evt ev;
	uint64_t time, nr, ns, missed, last;
	uint32_t pid, tid;
	size_t off = 0;

	if (len < 32)
		return;
	/* rec + 0 is the IP, which the callchain repeats. */
	memcpy(&pid, rec + 8, 4);
	memcpy(&tid, rec + 12, 4);
	memcpy(&time, rec + 16, 8);
	off = 32;

	/*
	 * A late timer (a stolen virtual CPU, a long irq-off section) is
	 * pushed forward by whole periods and the missed ones never become
	 * samples: count them as dt(4) counts the clock ticks it skipped.
	 */
	last = uatomic_read(&src->dps_lastts);
	/* A traced thread's clock runs only while it does: no lateness. */
	if (time > last && !dt_perf_task_on() && src->dps_pid == 0) {
		missed = (time - last + src->dps_nsecs / 2) / src->dps_nsecs;
		if (missed > 1) {
			dt_pcb_count_skiptick(dp, src->dps_cpu, missed - 1);
			uatomic_add(&dt_perf_counters.dps_skipped, missed - 1);
		}
	}
	uatomic_set(&src->dps_lastts, time);

	memset(&ev, 0, sizeof(ev));
	ev.dtev_pid = (pid_t)pid;
	ev.dtev_tid = (pid_t)tid;
	/*
	 * perf says -1 for a thread whose id is already gone: a tick of
	 * its exit.  Its process still has one: the tick is the process's,
	 * as a reader that wants a thread id can take it.
	 */
	if (ev.dtev_tid == -1 && ev.dtev_pid > 0)
		ev.dtev_tid = ev.dtev_pid;
	ns = time + (uint64_t)src->dps_tsoff;
	ev.dtev_tsp = dt_clock_ts(ns);
	if (dp->dp_evtflags & DTEVT_EXECNAME)
		dt_perf_comm((pid_t)pid, (pid_t)tid, src->dps_cpu,
		    ev.dtev_comm);

	if (dp->dp_evtflags & (DTEVT_KSTACK | DTEVT_USTACK) &&
	    off + 8 <= len) {
		memcpy(&nr, rec + off, 8);
		off += 8;
		if (nr > (len - off) / 8)
			nr = (len - off) / 8;
		if (dp->dp_evtflags & DTEVT_DEEPSTACK) {
			struct dt_deepstack k, u;

			dt_perf_callchain_deep(rec + off, nr, k.ds_pc,
			    &k.ds_count, u.ds_pc, &u.ds_count,
			    DTEV_DEEP_MAX);
			dt_ustack_untrace_deep((pid_t)pid, u.ds_pc,
			    &u.ds_count);
			dt_pcb_ring_put_deep(dp, src->dps_cpu, &ev, &k, &u);
			uatomic_inc(&dt_perf_counters.dps_samples);
			return;
		}
		dt_perf_callchain(rec + off, nr, &ev.dtev_kstack,
		    &ev.dtev_ustack);
		dt_ustack_untrace((pid_t)pid, &ev.dtev_ustack);
	}
	/* In time order with the other CPUs' samples and sources. */
	dt_seq_put(dt_perf_seq, dp, src->dps_cpu, &ev);
	uatomic_inc(&dt_perf_counters.dps_samples);
}

static void
dt_perf_record(struct dt_perf_src *src, struct dt_pcb *dp,
    const struct perf_event_header *h)
{
	const char *rec = (const char *)(h + 1);
	size_t len = h->size - sizeof(*h);
	uint64_t v, missed;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		dt_perf_sample(src, dp, rec, len);
		break;
	case PERF_RECORD_LOST:
		if (len < 16)
			break;
		memcpy(&v, rec + 8, 8);
		dt_pcb_count_skiptick(dp, src->dps_cpu, v);
		uatomic_add(&dt_perf_counters.dps_lost, v);
		break;
	case PERF_RECORD_THROTTLE:
		if (len >= 8)
			memcpy(&src->dps_throttled, rec, 8);
		break;
	case PERF_RECORD_UNTHROTTLE:
		if (len < 8 || src->dps_throttled == 0)
			break;
		memcpy(&v, rec, 8);
		missed = v > src->dps_throttled ?
		    (v - src->dps_throttled) / src->dps_nsecs : 0;
		src->dps_throttled = 0;
		if (missed > 0) {
			dt_pcb_count_skiptick(dp, src->dps_cpu, missed);
			uatomic_add(&dt_perf_counters.dps_throttled, missed);
		}
		break;
	case PERF_RECORD_COMM:
		dt_perf_comm_update(rec, len);
		break;
	default:
		break;
	}
}

/* Everything the kernel wrote since the last drain.  [R], RCU read. */
static void
dt_perf_drain(struct dt_perf_src *src, struct dt_pcb *dp)
{
	struct perf_event_mmap_page *meta = src->dps_meta;
	const struct perf_event_header *hp;
	struct perf_event_header h;
	uint64_t head, tail;

	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	/*
	 * dp stays valid to the end of our read-side section, but a stopped
	 * pcb wants nothing more: dt_perf_stop() has counted what is left
	 * as skipped.
	 */
	while (!uatomic_read(&src->dps_stopped) &&
	    (hp = dt_perf_rec_at(meta, tail, head, &h, &dt_perf_wrap)) !=
	    NULL) {
		dt_perf_record(src, dp, hp);
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

static void
dt_perf_release(struct dt_perf_src *src)
{
	if (src->dps_meta != NULL)
		munmap(src->dps_meta, src->dps_mmlen);
	close(src->dps_fd);
	free(src);
}

/* Free what dt_perf_stop() queued.  Reader only, between rounds. */
static void
dt_perf_reap(void)
{
	struct dt_perf_src *src, *next;

	pthread_mutex_lock(&dt_perf_mtx);
	src = dt_perf_dead;
	dt_perf_dead = NULL;
	pthread_mutex_unlock(&dt_perf_mtx);
	for (; src != NULL; src = next) {
		next = src->dps_dnext;
		dt_perf_release(src);
	}
}

/*
 * Every live sampler's buffer, then the reader's promise to the
 * sequencer: a sample written after this drain read its head was stamped
 * at rt (CLOCK_REALTIME, before the first head) or later, less the
 * slack from stamp to write.  With nothing live, it holds nothing back.
 * Returns whether a sampler is live.  [R].
 */
static bool
dt_perf_drain_all(uint64_t rt)
{
	struct dt_perf_src *src;
	bool live;

	/*
	 * Under [p], so no sampler leaves the list meanwhile; a stop waits
	 * for one drain at most, and takes no lock of ours after [p].
	 */
	pthread_mutex_lock(&dt_perf_mtx);
	for (src = dt_perf_live; src != NULL; src = src->dps_lnext) {
		rcu_read_lock();
		if (!uatomic_read(&src->dps_stopped))
			dt_perf_drain(src, src->dps_pcb);
		rcu_read_unlock();
	}
	live = dt_perf_live != NULL;
	if (dt_perf_seq != NULL) {
		if (live)
			dt_source_mark(dt_perf_seq, rt - DT_SEQ_SLACK_NS);
		else
			dt_source_idle(dt_perf_seq);
	}
	pthread_mutex_unlock(&dt_perf_mtx);
	return live;
}

static void *
dt_perf_reader(void *arg)
{
	struct dt_perf_loop *pl = arg;
	struct epoll_event evs[DT_PERF_MAXEVENTS];
	struct dt_perf_src *src;
	uint64_t last = 0, now, rt;
	int n, i, timeout = -1;

	rcu_register_thread();
	while (!uatomic_read(&pl->pl_quit)) {
		/*
		 * While a sampler is live, every buffer is drained at least
		 * each DT_PERF_WAKE_NS, a buffer's own wakeup aside: the
		 * sequencer holds the other sources' events until we mark.
		 */
		n = epoll_wait(pl->pl_epfd, evs, DT_PERF_MAXEVENTS, timeout);
		rt = dt_clock_ns(CLOCK_REALTIME);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "dtd: profile: epoll_wait: %s\n",
			    strerror(errno));
			break;
		}
		uatomic_inc(&dt_perf_counters.dps_wakeups);
		for (i = 0; i < n; i++) {
			/* The eventfd: a stop or the end. */
			if (dt_perf_loop_woken(pl, &evs[i]))
				continue;
			src = evs[i].data.ptr;
			rcu_read_lock();
			if (!uatomic_read(&src->dps_stopped))
				dt_perf_drain(src, src->dps_pcb);
			rcu_read_unlock();
		}
		now = dt_clock_ns(CLOCK_MONOTONIC);
		if (now - last >= DT_PERF_WAKE_NS || n == 0 || timeout == -1) {
			last = now;
			timeout = dt_perf_drain_all(rt) ?
			    (int)(DT_PERF_WAKE_NS / 1000000) : -1;
		}
		dt_perf_reap();
	}
	rcu_unregister_thread();
	return NULL;
}

/* USERDT_TEST_PIDFOLLOW=refuse: a pid filter's threads never followed. */
static bool
dt_perf_pid_refused(void)
{
	const char *test = getenv("USERDT_TEST_PIDFOLLOW");

	return test != NULL && strcmp(test, "refuse") == 0;
}

/* Take src off the live list.  [p] */
static void
dt_perf_unlive(struct dt_perf_src *src)
{
	struct dt_perf_src **srcp;

	for (srcp = &dt_perf_live; *srcp != NULL; srcp = &(*srcp)->dps_lnext)
		if (*srcp == src) {
			*srcp = src->dps_lnext;
			break;
		}
}

/*
 * dt_perf_start() system wide or in task mode (pid 0), or on the
 * threads of process pid alone.
 */
static int
dt_perf_start_on(struct dt_pcb *dp, pid_t pid)
{
	struct dt_perf_src *src;
	struct epoll_event ev;
	int error;

	if ((src = calloc(1, sizeof(*src))) == NULL)
		return ENOMEM;
	src->dps_pcb = dp;
	src->dps_cpu = (unsigned int)dp->dp_cpu;
	src->dps_nsecs = dp->dp_nsecs;
	src->dps_pid = pid;
	src->dps_fd = dt_perf_open(&src->dps_attr, dp->dp_nsecs,
	    dp->dp_evtflags, dp->dp_cpu, pid != 0, &src->dps_tsoff,
	    &src->dps_clock);
	if (src->dps_fd == -1) {
		error = errno;
		free(src);
		return error;
	}
	src->dps_mmlen = (size_t)(1 + DT_PERF_PAGES) * (size_t)getpagesize();
	src->dps_meta = mmap(NULL, src->dps_mmlen, PROT_READ | PROT_WRITE,
	    MAP_SHARED, src->dps_fd, 0);
	if (src->dps_meta == MAP_FAILED) {
		error = errno;
		src->dps_meta = NULL;
		dt_perf_release(src);
		return error;
	}

	/*
	 * The reader may take the first sample as soon as the event is in
	 * its poll set and enabled, before this function returns: the start
	 * it counts lateness from must be there first.  Set after, it was
	 * still 0 for such a sample (2 starts in 9000), whose whole time
	 * stamp (CLOCK_REALTIME, 1.7e18 ns) counted as skipped ticks:
	 * 9e12 at 5000 Hz.
	 */
	uatomic_set(&src->dps_lastts, dt_clock_ns(src->dps_clock));
	pthread_mutex_lock(&dt_perf_mtx);
	if ((error = dt_perf_loop_start(&dt_perf_rdr, dt_perf_reader)) == 0) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.ptr = src;
		if (epoll_ctl(dt_perf_rdr.pl_epfd, EPOLL_CTL_ADD, src->dps_fd,
		    &ev) == -1)
			error = errno;
	}
	if (error == 0) {
		/*
		 * The first sampler makes the reader a source, holding
		 * back from now until its first drain of all marks.
		 */
		if (dt_perf_seq == NULL)
			dt_perf_seq = dt_source_add("profile");
		if (dt_perf_live == NULL && dt_perf_seq != NULL)
			dt_source_begin(dt_perf_seq,
			    dt_clock_ns(CLOCK_REALTIME) - DT_SEQ_SLACK_NS);
		src->dps_lnext = dt_perf_live;
		dt_perf_live = src;
		/* The reader may wait with no timeout: it has one now. */
		dt_perf_loop_kick(&dt_perf_rdr);
	}
	pthread_mutex_unlock(&dt_perf_mtx);
	if (error != 0) {
		dt_perf_release(src);
		return error;
	}
	/* Task mode: the traced threads' events feed the ring instead. */
	if (pid != 0)
		error = dt_perf_pid_begin(src);
	else if (dt_perf_task_on())
		error = dt_perf_task_begin(src);
	else if (ioctl(src->dps_fd, PERF_EVENT_IOC_ENABLE, 0) == -1)
		error = errno;
	if (error != 0) {
		/* The reader may hold it: only it frees it. */
		pthread_mutex_lock(&dt_perf_mtx);
		dt_perf_unlive(src);
		epoll_ctl(dt_perf_rdr.pl_epfd, EPOLL_CTL_DEL, src->dps_fd,
		    NULL);
		uatomic_set(&src->dps_stopped, 1);
		src->dps_dnext = dt_perf_dead;
		dt_perf_dead = src;
		dt_perf_loop_kick(&dt_perf_rdr);
		pthread_mutex_unlock(&dt_perf_mtx);
		return error;
	}
	dp->dp_priv = src;
	return 0;
}

int
dt_perf_start(struct dt_pcb *dp)
{
	static int lasterr;	/* [K] said once */
	pid_t pid;
	int error;

	if (dp->dp_priv != NULL || dp->dp_cpu < 0)
		return EINVAL;
	if ((error = uatomic_read(&dt_perf_refuse)) != 0)
		return error;
	/*
	 * A pushed pid (btrace -p): its threads' samples alone, never the
	 * machine's (issue 22); where that cannot be, every CPU's samples
	 * for dtd's filter, as before.  Task mode samples tracees alone.
	 */
	if (dt_perf_task_on() || (pid = dt_fsrc_pid(dp)) == 0)
		return dt_perf_start_on(dp, 0);
	error = dt_perf_pid_refused() ? EPERM : dt_perf_start_on(dp, pid);
	if (error == 0)
		return 0;
	if (error != lasterr)
		fprintf(stderr, "dtd: profile: cannot follow the threads of %d "
		    "(%s): dtd filters its pid\n", (int)pid, error == EBUSY ?
		    "past the budget of descriptors" : strerror(error));
	lasterr = error;
	return dt_perf_start_on(dp, 0);
}

void
dt_perf_stop(struct dt_pcb *dp)
{
	struct dt_perf_src *src = dp->dp_priv;
	uint64_t now, last;

	if (src == NULL)
		return;
	dp->dp_priv = NULL;
	ioctl(src->dps_fd, PERF_EVENT_IOC_DISABLE, 0);
	uatomic_set(&src->dps_stopped, 1);
	/*
	 * The periods since the last sample the reader saw will never
	 * arrive: a CPU whose timer stopped firing would otherwise go
	 * unnoticed.  A sample the reader puts while we read dps_lastts
	 * is counted twice: one at most, per CPU and stop.  In task mode
	 * its threads' events go, and their periods are no ticks.
	 */
	now = dt_clock_ns(src->dps_clock);
	last = uatomic_read(&src->dps_lastts);
	if (dt_perf_task_on() || src->dps_pid != 0)
		dt_perf_task_end(src);
	else if (now > last && (now - last) / src->dps_nsecs > 0) {
		dt_pcb_count_skiptick(dp, src->dps_cpu,
		    (now - last) / src->dps_nsecs);
		uatomic_add(&dt_perf_counters.dps_skipped,
		    (now - last) / src->dps_nsecs);
	}
	pthread_mutex_lock(&dt_perf_mtx);
	dt_perf_unlive(src);
	if (!dt_perf_rdr.pl_running) {
		/* No reader left to hold it. */
		pthread_mutex_unlock(&dt_perf_mtx);
		dt_perf_release(src);
		return;
	}
	epoll_ctl(dt_perf_rdr.pl_epfd, EPOLL_CTL_DEL, src->dps_fd, NULL);
	src->dps_dnext = dt_perf_dead;
	dt_perf_dead = src;
	dt_perf_loop_kick(&dt_perf_rdr);
	pthread_mutex_unlock(&dt_perf_mtx);
}

void
dt_perf_shutdown(void)
{
	struct dt_perf_src *src, *next;

	if (!dt_perf_loop_stop(&dt_perf_rdr, &dt_perf_mtx))
		return;
	src = dt_perf_dead;
	dt_perf_dead = NULL;
	pthread_mutex_unlock(&dt_perf_mtx);
	for (; src != NULL; src = next) {
		next = src->dps_dnext;
		dt_perf_release(src);
	}
}

void
dt_perf_disable(int error)
{
	uatomic_set(&dt_perf_refuse, error);
}

void
dt_perf_stats(struct dt_perf_stats *st)
{
	st->dps_samples = uatomic_read(&dt_perf_counters.dps_samples);
	st->dps_lost = uatomic_read(&dt_perf_counters.dps_lost);
	st->dps_throttled = uatomic_read(&dt_perf_counters.dps_throttled);
	st->dps_wakeups = uatomic_read(&dt_perf_counters.dps_wakeups);
	st->dps_skipped = uatomic_read(&dt_perf_counters.dps_skipped);
}
