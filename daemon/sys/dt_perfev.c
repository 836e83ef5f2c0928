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

/* perf_event_open(2) as dtd's readers use it: see dt_perfev.h. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include <dev/dt/dtvar.h>

#include "dt_clock.h"
#include "dt_perfev.h"

/* The pid followers' budget.  [f]: dt_perf_fds_mtx. */
static pthread_mutex_t	dt_perf_fds_mtx = PTHREAD_MUTEX_INITIALIZER;
/* [f] -1: not yet known */
static long		dt_perf_fds_cap = -1;
static long		dt_perf_fds_used;	/* [f] charged in all */

bool
dt_perf_fds_charge(long n)
{
	struct rlimit rl;
	const char *test;
	bool ok;

	pthread_mutex_lock(&dt_perf_fds_mtx);
	/* dtd raised its soft limit before any pcb could start */
	if (dt_perf_fds_cap == -1) {
		if ((test = getenv("USERDT_TEST_PIDFDS")) != NULL)
			dt_perf_fds_cap = atol(test);
		else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			dt_perf_fds_cap = (long)(rl.rlim_cur / 2) -
			    DT_PERF_FDKEEP;
		else
			dt_perf_fds_cap = 65536;
	}
	if ((ok = n <= dt_perf_fds_cap - dt_perf_fds_used))
		dt_perf_fds_used += n;
	pthread_mutex_unlock(&dt_perf_fds_mtx);
	return ok;
}

void
dt_perf_fds_uncharge(long n)
{
	pthread_mutex_lock(&dt_perf_fds_mtx);
	dt_perf_fds_used -= n;
	pthread_mutex_unlock(&dt_perf_fds_mtx);
}

int
dt_perf_open_clock(struct perf_event_attr *attr, int cpu, int *clk,
    int64_t *tsoff)
{
	return dt_perf_open_pid(attr, -1, cpu, clk, tsoff);
}

int
dt_perf_open_pid(struct perf_event_attr *attr, pid_t pid, int cpu, int *clk,
    int64_t *tsoff)
{
	static const int clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
	    DT_PERF_CLOCK_PERF };
	int fd = -1, known;
	size_t i;

	known = uatomic_read(clk);
	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		if (known != DT_PERF_CLOCK_UNKNOWN && clocks[i] != known)
			continue;
		attr->use_clockid = clocks[i] != DT_PERF_CLOCK_PERF;
		attr->clockid = attr->use_clockid ? clocks[i] : 0;
		fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
		    PERF_FLAG_FD_CLOEXEC);
		if (fd != -1 || errno != EINVAL)
			break;
	}
	if (fd == -1)
		return -1;
	if (known == DT_PERF_CLOCK_UNKNOWN)
		uatomic_set(clk, clocks[i]);
	if (tsoff != NULL)
		*tsoff = clocks[i] == CLOCK_REALTIME ? 0 :
		    dt_clock_offset(CLOCK_REALTIME, CLOCK_MONOTONIC);
	return fd;
}

bool
dt_perf_comm_rec(const char *body, size_t len, pid_t *pid, pid_t *tid,
    const char **name)
{
	uint32_t v;

	/* pid, tid, the name NUL-padded to 8 bytes. */
	if (len < 9 || memchr(body + 8, '\0', len - 8) == NULL)
		return false;
	memcpy(&v, body, 4);
	*pid = (pid_t)v;
	memcpy(&v, body + 4, 4);
	*tid = (pid_t)v;
	*name = body + 8;
	return true;
}

uint64_t
dt_perf_comm_time(const char *body, size_t len)
{
	size_t off;
	uint64_t ns;

	if (len < 9)
		return 0;
	/* The name's NUL, padded to 8 bytes, then pid, tid and the time. */
	off = 8 + ((strnlen(body + 8, len - 8) + 1 + 7) & ~(size_t)7);
	if (len < off + 16)
		return 0;
	memcpy(&ns, body + off + 8, 8);
	return ns;
}

void
dt_perf_callchain(const char *pcs, uint64_t nr, struct stacktrace *k,
    struct stacktrace *u)
{
	struct stacktrace *st = NULL;
	uint64_t i, pc;

	for (i = 0; i < nr; i++) {
		memcpy(&pc, pcs + i * 8, 8);
		if (pc >= (uint64_t)PERF_CONTEXT_MAX) {
			if (pc == (uint64_t)PERF_CONTEXT_KERNEL)
				st = k;
			else if (pc == (uint64_t)PERF_CONTEXT_USER)
				st = u;
			else
				st = NULL;
			continue;
		}
		if (st != NULL && st->st_count < STACKTRACE_MAX)
			st->st_pc[st->st_count++] = pc;
	}
}

void
dt_perf_callchain_deep(const char *pcs, uint64_t nr, uint64_t *k,
    unsigned int *kn, uint64_t *u, unsigned int *un, unsigned int max)
{
	uint64_t *to = NULL, i, pc;
	unsigned int *n = NULL;

	*kn = *un = 0;
	for (i = 0; i < nr; i++) {
		memcpy(&pc, pcs + i * 8, 8);
		if (pc >= (uint64_t)PERF_CONTEXT_MAX) {
			if (pc == (uint64_t)PERF_CONTEXT_KERNEL)
				to = k, n = kn;
			else if (pc == (uint64_t)PERF_CONTEXT_USER)
				to = u, n = un;
			else
				to = NULL;
			continue;
		}
		if (to != NULL && *n < max)
			to[(*n)++] = pc;
	}
}

const struct perf_event_header *
dt_perf_rec_at(const struct perf_event_mmap_page *meta, uint64_t tail,
    uint64_t head, struct perf_event_header *h, union dt_perf_wrap *wrap)
{
	const char *data = (const char *)meta + meta->data_offset;
	uint64_t size = meta->data_size, o, first;

	if (tail >= head || head - tail < sizeof(*h))
		return NULL;
	o = tail % size;
	if (o + sizeof(*h) <= size)
		memcpy(h, data + o, sizeof(*h));
	else {
		first = size - o;
		memcpy(h, data + o, first);
		memcpy((char *)h + first, data, sizeof(*h) - first);
	}
	if (h->size < sizeof(*h) || h->size > head - tail)
		return NULL;
	if (o + h->size <= size)
		return (const struct perf_event_header *)(data + o);
	first = size - o;
	memcpy(wrap->b, data + o, first);
	memcpy(wrap->b + first, data, h->size - first);
	return &wrap->h;
}

static void	dt_perf_loop_end(struct dt_perf_loop *);

/* The set and its eventfd; on failure neither.  [o] held. */
static int
dt_perf_loop_open(struct dt_perf_loop *pl)
{
	struct epoll_event ev;
	int error;

	if ((pl->pl_epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return errno;
	if ((pl->pl_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		error = errno;
		goto fail;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (epoll_ctl(pl->pl_epfd, EPOLL_CTL_ADD, pl->pl_evfd, &ev) == -1) {
		error = errno;
		goto fail;
	}
	return 0;
fail:
	dt_perf_loop_end(pl);
	return error;
}

int
dt_perf_loop_start(struct dt_perf_loop *pl, void *(*fn)(void *))
{
	int error;

	if (pl->pl_running)
		return 0;
	if ((error = dt_perf_loop_open(pl)) != 0)
		return error;
	uatomic_set(&pl->pl_quit, 0);
	if ((error = pthread_create(&pl->pl_thread, NULL, fn, pl)) != 0) {
		dt_perf_loop_end(pl);
		return error;
	}
	pl->pl_running = true;
	return 0;
}

void
dt_perf_loop_kick(struct dt_perf_loop *pl)
{
	uint64_t one = 1;

	if (write(pl->pl_evfd, &one, sizeof(one)) == -1) {
		/* EAGAIN: the counter is full, so a wakeup is pending. */
	}
}

bool
dt_perf_loop_woken(struct dt_perf_loop *pl, const struct epoll_event *ev)
{
	uint64_t v;

	if (ev->data.ptr != NULL)
		return false;
	/* Nonblocking: EAGAIN when nothing is left to empty. */
	if (read(pl->pl_evfd, &v, sizeof(v)) == -1) {
		/* Level-triggered: a wakeup not emptied comes again. */
	}
	return true;
}

/* Ask the reader to end and wake it; false when none runs.  [o] held. */
static bool
dt_perf_loop_quit(struct dt_perf_loop *pl, pthread_t *t)
{
	if (!pl->pl_running)
		return false;
	uatomic_set(&pl->pl_quit, 1);
	dt_perf_loop_kick(pl);
	*t = pl->pl_thread;
	return true;
}

/* Close the set and its eventfd, after the join.  [o] held. */
static void
dt_perf_loop_end(struct dt_perf_loop *pl)
{
	if (pl->pl_evfd != -1)
		close(pl->pl_evfd);
	if (pl->pl_epfd != -1)
		close(pl->pl_epfd);
	pl->pl_evfd = pl->pl_epfd = -1;
	pl->pl_running = false;
}

bool
dt_perf_loop_stop(struct dt_perf_loop *pl, pthread_mutex_t *mtx)
{
	pthread_t t;

	pthread_mutex_lock(mtx);
	if (!dt_perf_loop_quit(pl, &t)) {
		pthread_mutex_unlock(mtx);
		return false;
	}
	pthread_mutex_unlock(mtx);
	pthread_join(t, NULL);
	pthread_mutex_lock(mtx);
	dt_perf_loop_end(pl);
	return true;
}
