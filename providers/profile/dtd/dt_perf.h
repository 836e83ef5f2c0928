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
 * The profile provider's sampler: a perf software CPU-clock event per
 * recording pcb, opened system wide on the pcb's CPU with the pcb's
 * period, so several opens sampling at different rates each get their
 * own.  One reader thread drains every event's mmap ring and turns the
 * samples into dt_evt records for the pcb's ring on that CPU.
 *
 * Locks used to protect struct members in dt_perf.c:
 *	[I]	immutable after dt_perf_start()
 *	[K]	the core's configuration lock (the dtpv_* callbacks)
 *	[p]	dt_perf_mtx, the reader thread's lifecycle and dead list
 *	[R]	the reader thread only
 *	[a]	atomic operations
 */
#ifndef DT_PERF_H
#define DT_PERF_H

#include <sys/epoll.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dt_perfev.h"

struct dt_pcb;
struct stacktrace;

/*
 * Whether perf sampling is available: opens and closes one event on CPU
 * 0.  Returns 0, or the errno perf_event_open(2) gave (EACCES and EPERM
 * mean refused by policy, ENOENT or ENOSYS a kernel without perf).  Any
 * thread, no lock.
 */
int	dt_perf_probe(void);

/*
 * Refuse every later dt_perf_start() with error (dtd chose not to use
 * perf).  Any thread; takes effect for starts that begin afterwards.
 */
void	dt_perf_disable(int error);

/*
 * Start sampling the pcb's CPU every dp_nsecs and feed its ring; hangs
 * the sampler on dp_priv.  Called from dtpv_start under [K]; starts the
 * reader thread the first time.  Never waits for the reader.  Returns 0
 * or an errno (the event could not be opened: ENODEV for an offline CPU,
 * EACCES/EPERM when refused; or what dt_perf_disable() set); on error
 * dp_priv stays NULL.
 */
int	dt_perf_start(struct dt_pcb *);

/*
 * Stop sampling for the pcb: disarm the event and hand it to the reader
 * thread to close once it can no longer be draining it; clears dp_priv.
 * Called from dtpv_stop under [K], before the pcb is unlinked; also
 * counts as skipped the periods since the last sample the reader saw,
 * which will never arrive.  After it returns the reader puts no
 * event for the pcb that it did not already hold inside an RCU read-side
 * section, so the core's grace period before freeing covers it.  Never
 * blocks on the reader.  No-op when dp_priv is NULL.
 */
void	dt_perf_stop(struct dt_pcb *);

/*
 * Stop the reader thread and release every stopped sampler.  Called at
 * shutdown, after the core stopped every pcb, from dtpv_fini and again
 * from dtd's service stop: idempotent.  Main thread, no lock held.  A
 * later dt_perf_start() starts a new reader.
 */
void	dt_perf_shutdown(void);

/* Counters since start, for dtd's log and the benchmark.  [a] */
struct dt_perf_stats {
	uint64_t	dps_samples;	/* samples put */
	uint64_t	dps_lost;	/* lost records' counts */
	uint64_t	dps_throttled;	/* periods missed while throttled */
	uint64_t	dps_wakeups;	/* reader thread wakeups */
	uint64_t	dps_skipped;	/* periods the timer fired late for */
};
void	dt_perf_stats(struct dt_perf_stats *);

/*
 * Task mode, for a dtd without root where perf_event_paranoid lets a user
 * sample its own processes (2 or less): each recording profile pcb's
 * ring is fed by an event on its CPU per thread of every traced process,
 * user space only, instead of one event for the whole CPU.
 *
 * dt_perf_task_probe(): try such an event on dtd itself; 0, and task
 * mode is on from then, or the errno perf answered.  Main thread, at
 * start, before any pcb records.
 * dt_perf_task_on(): is it on?  Any thread.
 * dt_perf_tracee(): a traced process attached: while any task-mode pcb
 * records, its threads get their events (and those they start later).
 * The ingest accept thread; takes the task list's lock.
 */
int	dt_perf_task_probe(void);
bool	dt_perf_task_on(void);
void	dt_perf_tracee(pid_t, bool);

/* The clock perf stamps samples with: CLOCK_REALTIME or a fallback. */
const char	*dt_perf_clock(void);

#endif /* DT_PERF_H */
