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
 * The tracepoint provider's perf side: one Linux tracepoint opened on
 * every CPU (PERF_TYPE_TRACEPOINT, the tracefs id), its records drained
 * by one reader thread and handed, decoded into a dt_tp_sample, to the
 * provider's callback.  perf wakes the reader when a CPU's buffer is a
 * quarter full (a watermark, not an event count), and the reader drains
 * every open event every DT_TPEV_FLUSH_MS as well so that a slow event
 * still arrives promptly.  Nothing runs while no event is open.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tpev_open()
 *	[t]	dt_tpev_mtx: the live and dead lists, the reader's lifecycle
 *	[R]	the reader thread only
 *	[a]	atomic operations
 */
#ifndef DT_TP_PERF_H
#define DT_TP_PERF_H

#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

/*
 * dt_tpev_open()'s flag for context-switch records beside the
 * tracepoint's (beyond every DTEVT_* bit): each CPU's switches in, as
 * samples with ts_swin, the tracepoint's and these handed over in time
 * order across all CPUs.  perf writes a switch-in record for every
 * switch, where a sched_switch record can be missing (a switch away from
 * the idle task on CPUs other than 0 on the kernels we test on).
 */
#define DT_TPEV_SWITCHES	(1ULL << 32)

/*
 * dt_tpev_open_task()'s flag for the executable files each exec of the
 * tree maps (perf's mmap records), as samples with ts_mmap: after an
 * exec's record, a dynamic image's show its loader's file beside its
 * own, a static image's its own alone; and each task's exit, as
 * samples with ts_exit.
 */
#define DT_TPEV_MMAPS		(1ULL << 33)

/*
 * dt_tpev_open_task()'s flag for one of many small events (one static
 * image's, dt_tp_ksysarm.c): DT_TPEV_SMALLPAGES data pages per CPU, not
 * DT_TPEV_PAGES, so that their sum stays bounded; what does not fit
 * between two reads is lost, and said so (ts_lost), as on any event.
 */
#define DT_TPEV_SMALL		(1ULL << 35)

/*
 * dt_tpev_open_task()'s flag for a task that already made its exec and
 * is held before its first instruction (a launcher's helper's exec
 * stop): the event is left off at the open, on neither at once nor at
 * a next exec, until dt_tpev_enable(), so that the pid can be checked
 * again once it is open (dt_tp_ksysarm.c) and a process that took the
 * pid in between has not one record written into the buffers.
 */
#define DT_TPEV_OFF		(1ULL << 36)

struct stacktrace;

/* One record of an event, as the provider's callback sees it. */
struct dt_tp_sample {
	unsigned int	 ts_cpu;
	pid_t		 ts_pid;	/* current's tgid, 0 when idle */
	pid_t		 ts_tid;
	uint64_t	 ts_ns;		/* CLOCK_REALTIME */
	/*
	 * The stamp as perf wrote it, in the records' own clock: what
	 * dt_tpev_cut()'s time compares with.  Every event of a kind
	 * shares the clock, but each its realtime offset, taken at its
	 * open: ts_ns of two events may differ by the drift between.
	 * 0 on a lost record without its time, and on task records.
	 */
	uint64_t	 ts_ptime;
	/* innermost first; empty, never NULL, where there are none */
	const struct stacktrace *ts_kstack;
	const struct stacktrace *ts_ustack;
	const void	*ts_raw;	/* the tracepoint's record */
	size_t		 ts_rawlen;
	/* dt_tpev_open_pmu()'s registers, in its mask's bit order */
	const uint64_t	*ts_regs;
	unsigned int	 ts_nregs;	/* 0: none (a kernel thread's) */
	uint64_t	 ts_lost;	/* > 0: only a count of lost records */
	/*
	 * On a lost record: the stamp (as ts_ptime) of the sample its
	 * buffer gave before it, 0 for none since the open; the records
	 * were lost after that one, maybe long before the lost record
	 * itself was put (perf puts it only once a record fits again).
	 */
	uint64_t	 ts_pfrom;
	/* A rename or exec: only ts_pid/ts_tid's new name, NUL-ended */
	const char	*ts_comm;
	/* An executable mapping (DT_TPEV_MMAPS): only its file's name */
	const char	*ts_mmap;
	bool		 ts_exec;	/* ts_comm is an exec's */
	bool		 ts_exit;	/* (DT_TPEV_MMAPS) only: ts_pid/ts_tid
					   exited at ts_ns */
	bool		 ts_swin;	/* a switch in: ts_pid/ts_tid came
					   in, no raw record, no stacks */
	bool		 ts_swev;	/* the event gives switches in */
};

/*
 * Called by the reader thread, inside rcu_read_lock(), for each record
 * of an event, in order per CPU; with DT_TPEV_SWITCHES in time order
 * across CPUs (records held back until DT_TPEV_HOLD_MS old, so that no
 * CPU's can still be on its way with an earlier time).  The sample's
 * memory lasts the call.
 */
typedef void	(*dt_tpev_fn)(void *arg, const struct dt_tp_sample *);

struct dt_tpev;

/*
 * Open tracepoint id on every CPU, with kernel and/or user callchains
 * as evtflags' DTEVT_KSTACK/DTEVT_USTACK say, and switch records with
 * DT_TPEV_SWITCHES (where the kernel refuses them, the event goes
 * without, and its samples say so: ts_swev false), and start feeding fn.
 * Returns the event, or NULL with *error set (EACCES/EPERM: refused;
 * ENOENT: no such id).  CPUs that are offline are skipped.  Any thread,
 * never waits for the reader; starts it on first use.
 */
struct dt_tpev	*dt_tpev_open(int id, uint64_t evtflags, dt_tpev_fn fn,
		    void *arg, int *error);

/*
 * Another PMU's event, opened and read as dt_tpev_open()'s tracepoint
 * is, by the same reader: tpm_type the PMU's type (sysfs
 * event_source/devices/PMU/type), the configs as its format says (the
 * kprobe PMU's: config the retprobe bit, config1 a pointer to the
 * function's name, read during the call only, config2 an offset), and
 * tpm_regs the registers each sample carries (PERF_SAMPLE_REGS_INTR,
 * asm/perf_regs.h's bits, 8 at most; 0: none).  Same contract as
 * dt_tpev_open().
 */
struct dt_tpev_pmu {
	uint32_t	 tpm_type;
	uint64_t	 tpm_config;
	uint64_t	 tpm_config1;
	uint64_t	 tpm_config2;
	uint64_t	 tpm_regs;
};
struct dt_tpev	*dt_tpev_open_pmu(const struct dt_tpev_pmu *, uint64_t evtflags,
		    dt_tpev_fn fn, void *arg, int *error);

/*
 * dt_tpev_open_pmu()'s event for one process tree only: opened on
 * process pid, off until its next exec enables it, then inherited by
 * every process it forks from then on, with no switch records.  arg is
 * the event's from the call on: release (NULL: none) is called with it
 * exactly once, when fn can no longer be called for the event (by the
 * reader after dt_tpev_close(); before or after the return of an open
 * that failed).  Same contract otherwise.
 */
struct dt_tpev	*dt_tpev_open_task(const struct dt_tpev_pmu *, uint64_t evtflags,
		    pid_t pid, dt_tpev_fn fn, void *arg, void (*release)(void *),
		    int *error);

/*
 * dt_tpev_open_pmu()'s event for the threads tids[0..n-1] of one
 * process (a pid filter's, dt_tp_pid.c): opened on each of them on
 * every CPU, on at the return, inherited by the threads they create
 * from then on but not by the processes they fork (where the kernel
 * cannot tell them apart, by those too), no switch records.  Each CPU's
 * records of every thread share one buffer, larger than a system-wide
 * event's, owned by tids[0]'s: ESRCH when that thread is gone (the
 * caller may name another first); a thread that exits before it is
 * reached is skipped.  Where the owner's thread ends first, the reader
 * waits on another thread's event of each CPU, which wakes it for the
 * same buffer.  Same contract as dt_tpev_open_task().
 */
struct dt_tpev	*dt_tpev_open_threads(const struct dt_tpev_pmu *,
		    uint64_t evtflags, const pid_t *tids, unsigned int n,
		    dt_tpev_fn fn, void *arg, void (*release)(void *),
		    int *error);

/*
 * What the kernel lost of dt_tpev_open_threads()'s ev on CPU cpu since
 * the open, records it wrote a lost record for or not (perf writes one
 * only before the next record that fits: a last burst's losses are
 * never told); 0 where the kernel does not count (before 6.0).  The
 * owner's thread, before dt_tpev_close().
 */
uint64_t	dt_tpev_lost(struct dt_tpev *, unsigned int cpu);

/*
 * dt_tpev_open_pmu()'s event as the output of an eBPF program (a pid
 * filter's, dt_tp_pid.c): a BPF output event (PERF_COUNT_SW_BPF_OUTPUT)
 * on every CPU, with the buffers, the stacks and the renames of
 * dt_tpev_open_threads(), the tracepoint kind's clock (its records'
 * ts_ptime compares with a tracepoint's), its losses counted for
 * dt_tpev_lost(), no switch records.  A record the program writes is
 * handed to fn as the tracepoint's own would be, its raw bytes the
 * program's.  *tpfd: a counting event of tracepoint id on one CPU, the
 * caller's to hang the program on (PERF_EVENT_IOC_SET_BPF) and to close,
 * opened first so that both kinds take the clock a tracepoint can.
 * Same contract as dt_tpev_open_task().
 */
struct dt_tpev	*dt_tpev_open_out(int id, uint64_t evtflags, dt_tpev_fn fn,
		    void *arg, void (*release)(void *), int *tpfd, int *error);

/*
 * The descriptor of ev's event on CPU cpu, -1 where it has none (an
 * offline CPU), for a program's perf event array.  The owner's thread,
 * before dt_tpev_close(); the event stays ev's.
 */
int	dt_tpev_fd(const struct dt_tpev *ev, unsigned int cpu);

/*
 * Stop the event: disarm it now, and let the reader hand fn what the
 * buffers still hold and free it between two rounds.  Any thread, never
 * waits for the reader; fn may still be called for it until the reader
 * reaps it, so fn's arg must outlive that (the provider's are static).
 */
void	dt_tpev_close(struct dt_tpev *);

/*
 * Turn on every CPU's event of a dt_tpev_open_task() event opened with
 * DT_TPEV_OFF (PERF_EVENT_IOC_ENABLE): 0 or the first errno, where some
 * may be on (close it).  Only while nothing inherited it yet (its task
 * held since the open): an enable reaches every inherited copy.  The
 * owner's thread, before dt_tpev_close().
 */
int	dt_tpev_enable(struct dt_tpev *);

/*
 * Whether the task a dt_tpev_open_task() event was opened on and every
 * process it forked since have exited (perf says so on each CPU's
 * event): nothing more can come of it.  Any thread, before
 * dt_tpev_close(); it may lag the exits by a reader round.
 */
bool	dt_tpev_gone(const struct dt_tpev *);

/*
 * Set the kernel's filter (tracefs syntax, "id == 39 || id == 110") on
 * every CPU's event of ev (PERF_EVENT_IOC_SET_FILTER): records it
 * rejects are never written.  Returns 0 or the first errno.  The
 * owner's thread, between dt_tpev_open() and dt_tpev_close(); a record
 * written before the filter took effect on its CPU may still come.
 */
int	dt_tpev_filter(struct dt_tpev *, const char *filter);

/*
 * fn(arg, now), now the time in ev's records' clock (ts_ptime), read
 * while the reader hands no record of any event to any callback: every
 * record handed before was stamped before now (perf stamps a record
 * before it writes it), and every record handed after is handed after
 * fn returned.  fn must not wait for the reader.  false, fn not
 * called, where that clock is perf's own, which dtd cannot read.  The
 * owner's thread, between dt_tpev_open*() and dt_tpev_close().
 */
bool	dt_tpev_cut(struct dt_tpev *ev, void (*fn)(void *, uint64_t),
	    void *arg);

/* Stop the reader and free every event; at shutdown, idempotent. */
void	dt_tpev_shutdown(void);

/* Counters since start, for the benchmark and the log.  [a] */
struct dt_tpev_stats {
	uint64_t	tps_records;	/* samples handed to callbacks */
	uint64_t	tps_lost;	/* records perf lost */
	uint64_t	tps_wakeups;	/* reader rounds */
};
void	dt_tpev_stats(struct dt_tpev_stats *);

/*
 * The reader's source for the sequencer (dt_prov.h), NULL before the
 * first open.  It marks at the end of every round that drained all live
 * events, the round's start less the slack (and less DT_TPEV_HOLD_MS
 * while events with switch records leave their young records in the
 * buffers), and is idle while no event is open.  Any thread.
 */
struct dt_source *dt_tpev_source(void);

#endif /* DT_TP_PERF_H */
