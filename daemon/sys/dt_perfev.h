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
 * perf_event_open(2) as dtd's readers use it (the profile provider's
 * sampler, the tracepoint provider's reader): opening an event stamped
 * with the realtime clock where the kernel allows, a reader thread on an
 * epoll set, whole records out of an event's mmap ring, callchains and
 * comm records.  No state of its own beyond what the caller passes.
 */
#ifndef DT_PERFEV_H
#define DT_PERFEV_H

#include <sys/epoll.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct stacktrace;

#define DT_PERF_CLOCK_UNKNOWN	(-2)	/* no event of the kind opened yet */
#define DT_PERF_CLOCK_PERF	(-1)	/* perf's own: no use_clockid */

/*
 * perf_event_open(2) of attr, system wide on cpu, its records stamped
 * with the realtime clock OpenBSD stamps events with; where the kernel
 * refuses that for this kind of event (it does for tracepoints), with
 * the monotonic clock or perf's own, *tsoff (unless NULL: an event
 * whose records share another's ring) the realtime offset taken now
 * (a later settimeofday is not followed).  *clk caches the kind's
 * answer: DT_PERF_CLOCK_UNKNOWN has it found and set (atomically),
 * anything else is the only clock tried.  attr's use_clockid and
 * clockid say the clock chosen.  fd, or -1 with errno.  Any thread.
 */
int	dt_perf_open_clock(struct perf_event_attr *, int cpu, int *clk,
	    int64_t *tsoff);

/*
 * A reader thread, started on first use, that waits in epoll_wait on
 * pl_epfd, whose set holds (as data.ptr NULL) the eventfd pl_evfd that
 * others write to wake it.  Each provider has one, under its own lock
 * ([o]).  The reader reads pl_epfd and pl_evfd unlocked: they are set
 * before it starts and closed only after it was joined.
 */
struct dt_perf_loop {
	int		pl_epfd;	/* [o] -1: none */
	int		pl_evfd;	/* [o] wakes the reader */
	int		pl_quit;	/* [a] the reader should end */
	bool		pl_running;	/* [o] the reader exists */
	pthread_t	pl_thread;	/* [o] */
};
#define DT_PERF_LOOP_INIT	{ .pl_epfd = -1, .pl_evfd = -1 }

/*
 * Start fn(pl) as pl's reader, unless it runs: 0, or an errno with
 * nothing started.  [o] held.
 */
int	dt_perf_loop_start(struct dt_perf_loop *pl, void *(*fn)(void *));
/* Wake the reader from epoll_wait.  Any thread. */
void	dt_perf_loop_kick(struct dt_perf_loop *pl);
/* The reader's: whether ev is the eventfd's; if so, it is emptied. */
bool	dt_perf_loop_woken(struct dt_perf_loop *pl,
	    const struct epoll_event *ev);
/*
 * Stop pl's reader, whose [o] is mtx (not held on entry): false when no
 * reader ran, mtx released; else asks it to end, wakes it, joins it
 * without mtx (the reader takes it) and closes the set, then returns true
 * with mtx held, so the caller can take what the reader left (its dead
 * list) before it unlocks.
 */
bool	dt_perf_loop_stop(struct dt_perf_loop *pl, pthread_mutex_t *mtx);

/* A record split by the ring's end, copied whole: a reader's own. */
union dt_perf_wrap {
	struct perf_event_header h;
	char	b[65536];		/* header.size is 16 bits */
};

/*
 * The whole record at tail of the ring meta maps, below head: its
 * header in *h, and a pointer to it, into the ring or, when it wraps,
 * into wrap (valid until the next call with wrap).  NULL when no record
 * is whole there: none, or torn (the kernel broke its own ring).
 */
const struct perf_event_header *dt_perf_rec_at(
	    const struct perf_event_mmap_page *meta, uint64_t tail,
	    uint64_t head, struct perf_event_header *h,
	    union dt_perf_wrap *wrap);

/*
 * The nr frames of a PERF_SAMPLE_CALLCHAIN at pcs into k and u, which
 * come in empty: each part starts with the interrupted PC, innermost
 * first, as dt(4) records, and its context marker says whether it is
 * the kernel's or the user's.  STACKTRACE_MAX frames each at most.
 */
void	dt_perf_callchain(const char *pcs, uint64_t nr, struct stacktrace *k,
	    struct stacktrace *u);

/*
 * The same into arrays of max frames each (DTEVT_DEEPSTACK's deeper
 * stacks), *kn and *un their counts; k or u NULL: that part is skipped.
 */
void	dt_perf_callchain_deep(const char *pcs, uint64_t nr, uint64_t *k,
	    unsigned int *kn, uint64_t *u, unsigned int *un, unsigned int max);

/*
 * The body (len bytes) of a PERF_RECORD_COMM, a rename or an exec: its
 * pid, tid and name, which the kernel pads with NULs.  false when it is
 * too short or its name unterminated.
 */
bool	dt_perf_comm_rec(const char *body, size_t len, pid_t *pid,
	    pid_t *tid, const char **name);
/*
 * The time of a PERF_RECORD_COMM, from its sample_id (an event opened
 * with sample_id_all and PERF_SAMPLE_TID | PERF_SAMPLE_TIME, without
 * PERF_SAMPLE_IDENTIFIER); 0 when it carries none.
 */
uint64_t dt_perf_comm_time(const char *body, size_t len);

/*
 * perf_event_open(2) of attr for pid (-1: every process) on cpu, with the
 * clock rules of dt_perf_open_clock().  Any thread.
 */
int	dt_perf_open_pid(struct perf_event_attr *, pid_t pid, int cpu,
	    int *clk, int64_t *tsoff);

/*
 * The budget of descriptors the perf events that follow a pid's threads
 * take (threads x CPUs a pcb: the tracepoint provider's dt_tp_pid.c, the
 * profile's dt_perf_task.c; threads a pcb: dt_tp_pcnt.c's counters),
 * over every pcb of them: half of dtd's
 * RLIMIT_NOFILE as raised at start, less DT_PERF_FDKEEP for the
 * clients, the tracees' handshakes and the shared events
 * (USERDT_TEST_PIDFDS: the cap, for the tests).  dt_perf_fds_charge():
 * whether n more fit, charged if so; dt_perf_fds_uncharge(): n back.
 * Any thread.
 */
#define DT_PERF_FDKEEP	1024
bool	dt_perf_fds_charge(long n);
void	dt_perf_fds_uncharge(long n);

#endif /* DT_PERFEV_H */
