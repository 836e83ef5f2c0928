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
 * perf_event_open(2) for kernel tracepoints (dt_tp_perf.h).
 *
 * An event is freed only by the reader, between two rounds, after it was
 * taken off the live list and out of the epoll set: whatever pointer a
 * round holds stays valid to its end, and no later round can see it.
 * Its final drain happens then too, so records written before the close
 * still reach the opens that record the probe.
 */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu.h>

#include <dev/dt/dtvar.h>

#include "dt_clock.h"
#include "dt_tp_perf.h"

#define DT_TPEV_PAGES		128	/* data pages per CPU, power of 2 */
#define DT_TPEV_FLUSH_MS	20	/* drain at least this often */
#define DT_TPEV_MAXSTACK	64	/* frames perf walks per record */
#define DT_TPEV_MAXEVENTS	64

struct dt_tpev;

/* One CPU's perf event: what epoll hands back. */
struct dt_tpev_cpu {
	struct dt_tpev		*tpc_ev;	/* [I] */
	int			 tpc_fd;	/* [t] -1: offline or closed */
	struct perf_event_mmap_page *tpc_meta;	/* [I] */
};

struct dt_tpev {
	struct dt_tpev		*tpe_next;	/* [t] live or dead list */
	dt_tpev_fn		 tpe_fn;	/* [I] */
	void			*tpe_arg;	/* [I] */
	int64_t			 tpe_tsoff;	/* [I] realtime - perf clock */
	size_t			 tpe_mmlen;	/* [I] */
	bool			 tpe_chain;	/* [I] records carry stacks */
	unsigned int		 tpe_ncpu;	/* [I] */
	struct dt_tpev_cpu	 tpe_cpus[];	/* [I] */
};

static pthread_mutex_t	 dt_tpev_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_tpev	*dt_tpev_live;		/* [t] */
static struct dt_tpev	*dt_tpev_dead;		/* [t] */
static bool		 dt_tpev_running;	/* [t] */
static pthread_t	 dt_tpev_thread;	/* [t] */
/* [t], set before the reader starts, which reads them unlocked. */
static int		 dt_tpev_epfd = -1;
static int		 dt_tpev_evfd = -1;
static int		 dt_tpev_quit;		/* [a] */
#define DT_TPEV_CLOCK_UNKNOWN	(-2)
#define DT_TPEV_CLOCK_PERF	(-1)
static int		 dt_tpev_clockid = DT_TPEV_CLOCK_UNKNOWN; /* [a] */
static struct dt_tpev_stats dt_tpev_counters;	/* [a] */
static union {				/* [R] a record split by the wrap */
	struct perf_event_header h;
	char	b[65536];
} dt_tpev_wrap;

static int
dt_tpev_syscall(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1,
	    PERF_FLAG_FD_CLOEXEC);
}

static void
dt_tpev_attr(struct perf_event_attr *attr, int id, uint64_t evtflags,
    int clk, size_t datasize)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = (uint64_t)id;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	if (evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) {
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr->sample_max_stack = DT_TPEV_MAXSTACK;
		attr->exclude_callchain_kernel = !(evtflags & DTEVT_KSTACK);
		attr->exclude_callchain_user = !(evtflags & DTEVT_USTACK);
	}
	attr->disabled = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(datasize / 4);
	if (clk != DT_TPEV_CLOCK_PERF) {
		attr->use_clockid = 1;
		attr->clockid = clk;
	}
}

/*
 * Open on one CPU with the clock OpenBSD stamps events with, or the
 * monotonic clock (or perf's own) plus the offset now.
 */
static int
dt_tpev_open_cpu(int id, uint64_t evtflags, int cpu, size_t datasize,
    int64_t *tsoff)
{
	static const int clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
	    DT_TPEV_CLOCK_PERF };
	struct perf_event_attr attr;
	int fd = -1, known;
	size_t i;

	known = uatomic_read(&dt_tpev_clockid);
	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		if (known != DT_TPEV_CLOCK_UNKNOWN && clocks[i] != known)
			continue;
		dt_tpev_attr(&attr, id, evtflags, clocks[i], datasize);
		fd = dt_tpev_syscall(&attr, cpu);
		if (fd != -1 || errno != EINVAL)
			break;
	}
	if (fd == -1)
		return -1;
	if (known == DT_TPEV_CLOCK_UNKNOWN)
		uatomic_set(&dt_tpev_clockid, clocks[i]);
	*tsoff = clocks[i] == CLOCK_REALTIME ? 0 : (int64_t)(dt_clock_ns(
	    CLOCK_REALTIME) - dt_clock_ns(CLOCK_MONOTONIC));
	return fd;
}

/* A PERF_RECORD_SAMPLE laid out per dt_tpev_attr().  [R], RCU read. */
static void
dt_tpev_sample(struct dt_tpev *ev, const char *rec, size_t len,
    bool chain)
{
	uint64_t kpc[STACKTRACE_MAX], upc[STACKTRACE_MAX];
	struct dt_tp_sample s;
	uint64_t *cur = NULL, nr, pc, i, time;
	unsigned int *curn = NULL;
	uint32_t pid, tid, cpu, rawsize;
	size_t off;

	if (len < 24)
		return;
	memset(&s, 0, sizeof(s));
	memcpy(&pid, rec, 4);
	memcpy(&tid, rec + 4, 4);
	memcpy(&time, rec + 8, 8);
	memcpy(&cpu, rec + 16, 4);
	off = 24;
	if (chain) {
		if (off + 8 > len)
			return;
		memcpy(&nr, rec + off, 8);
		off += 8;
		if (nr > (len - off) / 8)
			return;
		for (i = 0; i < nr; i++, off += 8) {
			memcpy(&pc, rec + off, 8);
			if (pc >= (uint64_t)PERF_CONTEXT_MAX) {
				if (pc == (uint64_t)PERF_CONTEXT_KERNEL) {
					cur = kpc;
					curn = &s.ts_nk;
				} else if (pc == (uint64_t)PERF_CONTEXT_USER) {
					cur = upc;
					curn = &s.ts_nu;
				} else
					cur = NULL;
				continue;
			}
			if (cur != NULL && *curn < STACKTRACE_MAX)
				cur[(*curn)++] = pc;
		}
	}
	if (off + 4 > len)
		return;
	memcpy(&rawsize, rec + off, 4);
	off += 4;
	if (rawsize > len - off)
		return;
	s.ts_cpu = cpu;
	s.ts_pid = (pid_t)pid;
	s.ts_tid = (pid_t)tid;
	s.ts_ns = time + (uint64_t)ev->tpe_tsoff;
	s.ts_kpc = kpc;
	s.ts_upc = upc;
	s.ts_raw = rec + off;
	s.ts_rawlen = rawsize;
	ev->tpe_fn(ev->tpe_arg, &s);
	uatomic_inc(&dt_tpev_counters.tps_records);
}

/* Everything one CPU's buffer holds.  [R], RCU read. */
static void
dt_tpev_drain(struct dt_tpev_cpu *c)
{
	struct perf_event_mmap_page *meta = c->tpc_meta;
	const char *data = (const char *)meta + meta->data_offset;
	uint64_t size = meta->data_size, head, tail, o, first, lost;
	const struct perf_event_header *hp;
	struct perf_event_header h;
	struct dt_tp_sample s;

	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head) {
		o = tail % size;
		if (o + sizeof(h) <= size)
			memcpy(&h, data + o, sizeof(h));
		else {
			first = size - o;
			memcpy(&h, data + o, first);
			memcpy((char *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		if (o + h.size <= size)
			hp = (const struct perf_event_header *)(data + o);
		else {
			first = size - o;
			memcpy(dt_tpev_wrap.b, data + o, first);
			memcpy(dt_tpev_wrap.b + first, data, h.size - first);
			hp = &dt_tpev_wrap.h;
		}
		if (h.type == PERF_RECORD_SAMPLE)
			dt_tpev_sample(c->tpc_ev, (const char *)(hp + 1),
			    h.size - sizeof(h), c->tpc_ev->tpe_chain);
		else if (h.type == PERF_RECORD_LOST &&
		    h.size >= sizeof(h) + 16) {
			memcpy(&lost, (const char *)(hp + 1) + 8, 8);
			memset(&s, 0, sizeof(s));
			s.ts_lost = lost;
			s.ts_cpu = (unsigned int)(c - c->tpc_ev->tpe_cpus);
			c->tpc_ev->tpe_fn(c->tpc_ev->tpe_arg, &s);
			uatomic_add(&dt_tpev_counters.tps_lost, lost);
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void
dt_tpev_drain_all(struct dt_tpev *ev)
{
	unsigned int i;

	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_meta != NULL)
			dt_tpev_drain(&ev->tpe_cpus[i]);
}

static void
dt_tpev_release(struct dt_tpev *ev)
{
	unsigned int i;

	for (i = 0; i < ev->tpe_ncpu; i++) {
		if (ev->tpe_cpus[i].tpc_meta != NULL)
			munmap(ev->tpe_cpus[i].tpc_meta, ev->tpe_mmlen);
		if (ev->tpe_cpus[i].tpc_fd != -1)
			close(ev->tpe_cpus[i].tpc_fd);
	}
	free(ev);
}

/*
 * Between rounds: drain what closed events still hold, then free them.
 * Also every DT_TPEV_FLUSH_MS, drain the live ones below their
 * watermark.  [R].
 */
static void
dt_tpev_round(bool flush)
{
	struct dt_tpev *ev, *next, *dead, **snap = NULL;
	size_t n = 0, i;

	pthread_mutex_lock(&dt_tpev_mtx);
	dead = dt_tpev_dead;
	dt_tpev_dead = NULL;
	if (flush) {
		for (ev = dt_tpev_live; ev != NULL; ev = ev->tpe_next)
			n++;
		if (n > 0 && (snap = calloc(n, sizeof(*snap))) != NULL) {
			n = 0;
			for (ev = dt_tpev_live; ev != NULL; ev = ev->tpe_next)
				snap[n++] = ev;
		} else
			n = 0;
	}
	pthread_mutex_unlock(&dt_tpev_mtx);

	rcu_read_lock();
	/* Only this thread frees, and not before the next round. */
	for (i = 0; i < n; i++)
		dt_tpev_drain_all(snap[i]);
	for (ev = dead; ev != NULL; ev = ev->tpe_next)
		dt_tpev_drain_all(ev);
	rcu_read_unlock();
	free(snap);
	for (ev = dead; ev != NULL; ev = next) {
		next = ev->tpe_next;
		dt_tpev_release(ev);
	}
}

static void *
dt_tpev_reader(void *arg)
{
	struct epoll_event evs[DT_TPEV_MAXEVENTS];
	struct dt_tpev_cpu *c;
	uint64_t v, last = 0, now;
	int epfd = (int)(intptr_t)arg, n, i;

	rcu_register_thread();
	while (!uatomic_read(&dt_tpev_quit)) {
		n = epoll_wait(epfd, evs, DT_TPEV_MAXEVENTS,
		    DT_TPEV_FLUSH_MS);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "dtd: tracepoint: epoll_wait: %s\n",
			    strerror(errno));
			break;
		}
		uatomic_inc(&dt_tpev_counters.tps_wakeups);
		rcu_read_lock();
		for (i = 0; i < n; i++) {
			if ((c = evs[i].data.ptr) == NULL) {
				if (read(dt_tpev_evfd, &v, sizeof(v)) == -1 &&
				    errno != EAGAIN)
					break;
				continue;
			}
			dt_tpev_drain(c);
		}
		rcu_read_unlock();
		now = dt_clock_ns(CLOCK_MONOTONIC);
		dt_tpev_round(now - last >= DT_TPEV_FLUSH_MS * 1000000ULL);
		if (now - last >= DT_TPEV_FLUSH_MS * 1000000ULL)
			last = now;
	}
	rcu_unregister_thread();
	return NULL;
}

/* Start the reader on first use.  [t] held. */
static int
dt_tpev_spawn(void)
{
	struct epoll_event ev;
	int error;

	if (dt_tpev_running)
		return 0;
	if ((dt_tpev_epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return errno;
	if ((dt_tpev_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		error = errno;
		goto fail;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(dt_tpev_epfd, EPOLL_CTL_ADD, dt_tpev_evfd, &ev) == -1) {
		error = errno;
		goto fail;
	}
	uatomic_set(&dt_tpev_quit, 0);
	if ((error = pthread_create(&dt_tpev_thread, NULL, dt_tpev_reader,
	    (void *)(intptr_t)dt_tpev_epfd)) != 0)
		goto fail;
	dt_tpev_running = true;
	return 0;
fail:
	if (dt_tpev_evfd != -1)
		close(dt_tpev_evfd);
	close(dt_tpev_epfd);
	dt_tpev_evfd = dt_tpev_epfd = -1;
	return error;
}

static void
dt_tpev_kick(void)
{
	uint64_t one = 1;

	if (write(dt_tpev_evfd, &one, sizeof(one)) == -1) {
		/* EAGAIN: the counter is full, a wakeup is pending. */
	}
}

struct dt_tpev *
dt_tpev_open(int id, uint64_t evtflags, dt_tpev_fn fn, void *arg,
    int *error)
{
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
		*error = ENOMEM;
		return NULL;
	}
	ev->tpe_fn = fn;
	ev->tpe_arg = arg;
	ev->tpe_ncpu = ncpu;
	datasize = (size_t)DT_TPEV_PAGES * (size_t)getpagesize();
	mmlen = datasize + (size_t)getpagesize();
	ev->tpe_mmlen = mmlen;
	ev->tpe_chain = (evtflags & (DTEVT_KSTACK | DTEVT_USTACK)) != 0;
	*error = 0;
	for (i = 0; i < ncpu; i++) {
		c = &ev->tpe_cpus[i];
		c->tpc_ev = ev;
		c->tpc_fd = dt_tpev_open_cpu(id, evtflags, (int)i, datasize,
		    &ev->tpe_tsoff);
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

	pthread_mutex_lock(&dt_tpev_mtx);
	if ((*error = dt_tpev_spawn()) != 0) {
		pthread_mutex_unlock(&dt_tpev_mtx);
		dt_tpev_release(ev);
		return NULL;
	}
	for (i = 0; i < ncpu; i++) {
		c = &ev->tpe_cpus[i];
		if (c->tpc_meta == NULL)
			continue;
		memset(&eev, 0, sizeof(eev));
		eev.events = EPOLLIN;
		eev.data.ptr = c;
		if (epoll_ctl(dt_tpev_epfd, EPOLL_CTL_ADD, c->tpc_fd, &eev) ==
		    -1 && *error == 0)
			*error = errno;
		else if (ioctl(c->tpc_fd, PERF_EVENT_IOC_ENABLE, 0) == -1 &&
		    *error == 0)
			*error = errno;
	}
	if (*error != 0) {
		/* The reader may hold c pointers: it frees ev, not us. */
		for (i = 0; i < ncpu; i++)
			if (ev->tpe_cpus[i].tpc_fd != -1)
				epoll_ctl(dt_tpev_epfd, EPOLL_CTL_DEL,
				    ev->tpe_cpus[i].tpc_fd, NULL);
		ev->tpe_next = dt_tpev_dead;
		dt_tpev_dead = ev;
		dt_tpev_kick();
		pthread_mutex_unlock(&dt_tpev_mtx);
		return NULL;
	}
	ev->tpe_next = dt_tpev_live;
	dt_tpev_live = ev;
	pthread_mutex_unlock(&dt_tpev_mtx);
	return ev;
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
	if (!dt_tpev_running) {
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
		if ((fd = ev->tpe_cpus[i].tpc_fd) == -1)
			continue;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		epoll_ctl(dt_tpev_epfd, EPOLL_CTL_DEL, fd, NULL);
		close(fd);
		ev->tpe_cpus[i].tpc_fd = -1;
	}
	ev->tpe_next = dt_tpev_dead;
	dt_tpev_dead = ev;
	dt_tpev_kick();
	pthread_mutex_unlock(&dt_tpev_mtx);
}

void
dt_tpev_shutdown(void)
{
	struct dt_tpev *ev, *next;
	pthread_t t;

	pthread_mutex_lock(&dt_tpev_mtx);
	if (!dt_tpev_running) {
		pthread_mutex_unlock(&dt_tpev_mtx);
		return;
	}
	uatomic_set(&dt_tpev_quit, 1);
	dt_tpev_kick();
	t = dt_tpev_thread;
	pthread_mutex_unlock(&dt_tpev_mtx);

	pthread_join(t, NULL);

	pthread_mutex_lock(&dt_tpev_mtx);
	dt_tpev_running = false;
	ev = dt_tpev_dead;
	dt_tpev_dead = NULL;
	close(dt_tpev_evfd);
	close(dt_tpev_epfd);
	dt_tpev_evfd = dt_tpev_epfd = -1;
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
