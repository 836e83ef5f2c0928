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
 * The tracepoint reader's private state (dt_tp_perf.c, which opens the
 * perf events and runs the reader thread, and dt_tp_rec.c, which reads
 * their buffers).  Nothing outside the provider includes it.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after the event is opened
 *	[t]	dt_tpev_mtx (dt_tp_perf.c): the live and dead lists
 *	[R]	the reader thread only
 *	[a]	atomic operations
 */
#ifndef DT_TP_PERF_VAR_H
#define DT_TP_PERF_VAR_H

#include <linux/perf_event.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt_tp_perf.h"

#define DT_TPEV_PAGES		128	/* data pages per CPU, power of 2 */
#define DT_TPEV_SMALLPAGES	16	/* DT_TPEV_SMALL's, power of 2 */
/*
 * A process's (dt_tpev_open_threads()): every thread's records of a
 * CPU, bursts of a busy process held while the reader waits for a CPU;
 * 1 MiB a CPU and pcb, so dt_tp_pid.c caps their number over all pcbs
 */
#define DT_TPEV_TPAGES		256
#define DT_TPEV_FLUSH_MS	20	/* drain at least this often */
#define DT_TPEV_MAXSTACK	64	/* frames perf walks per record */
#define DT_TPEV_MAXEVENTS	64
#define DT_TPEV_HOLD_MS		2	/* merged records' minimum age */
#define DT_TPEV_MAXREGS		8	/* registers a sample carries */
#define DT_TPEV_AHEAD_NS	1000000000ULL	/* beyond: the clock went back */

struct dt_tpev;

/* One CPU's perf event: what epoll hands back. */
struct dt_tpev_cpu {
	struct dt_tpev		*tpc_ev;	/* [I] */
	int			 tpc_fd;	/* [t] -1: offline or closed */
	/*
	 * [t] the descriptor epoll waits on for this buffer (-1: none),
	 * and the row of tpe_xfds to try when it hangs up: a pid's
	 * thread that owned the buffer (tpc_fd) may exit first
	 */
	int			 tpc_pollfd;
	unsigned int		 tpc_pollrow;
	int			 tpc_swfd;	/* [t] switch records, or -1 */
	struct perf_event_mmap_page *tpc_meta;	/* [I] */
	uint64_t		 tpc_tail;	/* [R] merge: next record */
	uint64_t		 tpc_head;	/* [R] end of this pass */
	uint64_t		 tpc_ns;	/* [R] merge: tpc_tail's time */
	uint64_t		 tpc_last;	/* [R] the last sample's stamp
						   (ts_pfrom) */
	/* [a] written by the reader: its task and all it forked are gone */
	atomic_bool		 tpc_hup;
};

struct dt_tpev {
	struct dt_tpev		*tpe_next;	/* [t] live or dead list */
	dt_tpev_fn		 tpe_fn;	/* [I] */
	void			*tpe_arg;	/* [I] */
	void			(*tpe_release)(void *);	/* [I] tpe_arg's */
	int64_t			 tpe_tsoff;	/* [I] realtime - perf clock */
	size_t			 tpe_mmlen;	/* [I] */
	bool			 tpe_chain;	/* [I] records carry stacks */
	bool			 tpe_switches;	/* [I] switch records, merged */
	bool			 tpe_klost;	/* [I] the kernel counts losses
						   (PERF_FORMAT_LOST) */
	bool			 tpe_tasks;	/* [I] mmaps and exits asked for
						   (DT_TPEV_MMAPS) */
	unsigned int		 tpe_nregs;	/* [I] registers per sample */
	int			 tpe_clk;	/* [I] the records' clock */
	/*
	 * [t] dt_tpev_open_threads(): the other threads' events, each
	 * writing into the same CPU's buffer of tpe_cpus (-1: closed)
	 */
	int			*tpe_xfds;
	unsigned int		 tpe_nxfds;	/* [I] */
	unsigned int		 tpe_ncpu;	/* [I] */
	struct dt_tpev_cpu	 tpe_cpus[];	/* [I] */
};

extern struct dt_tpev_stats dt_tpev_counters;	/* [a] */

/*
 * Every CPU's buffer of ev, oldest record first across CPUs, leaving the
 * records younger than DT_TPEV_HOLD_MS for a later pass unless final
 * (the event is closed: nothing can come before them any more).  The
 * reader thread only, inside an RCU read-side section.
 */
void	dt_tpev_drain_merged(struct dt_tpev *ev, bool final);

/*
 * Everything ev's buffers hold, merged by time when ev has switch
 * records.  The reader thread only, inside an RCU read-side section.
 */
void	dt_tpev_drain_all(struct dt_tpev *ev, bool final);

/*
 * A round's drain: the buffers of the nev events of evs (live) and of
 * the dead list (closed) read as one stream, oldest record first across
 * events and CPUs, each up to where its head was when the round read
 * them all, one right after another; the renames of all of them first,
 * as dt_tpev_drain_all()'s; an event with switch records by
 * dt_tpev_drain_merged() on its own, before the others (its records are
 * not merged with theirs, as before).  Each buffer's room is given back
 * as soon as it is read to its head.  One
 * buffer after another, the events a round read took longer than the
 * sequencer's D on a slow machine (ASan, 6000 syscall records), and
 * the younger records of the first buffers went out before the older
 * ones of the last (a return before its entry).  The reader thread
 * only, inside an RCU read-side section.
 */
void	dt_tpev_drain_round(struct dt_tpev *const *evs, size_t nev,
	    struct dt_tpev *dead);

/*
 * dt_tp_perf.c's opens and their parts, for dt_tp_perfpid.c.
 * dt_tpev_open_on(): dt_tpev_open_task() (threads false: tids[0] the
 * tree's root, or -1 for every process) and dt_tpev_open_threads()
 * (threads); DT_TPEV_OUT among evtflags: dt_tpev_open_out()'s output
 * events.  dt_tpev_open_xtids(): dt_tpev_open_threads()'s other threads, into
 * ev's buffers, [I] before the reader knows ev.  dt_tpev_clockid: the
 * tracepoint kind's clock, set once by the first open ([a]).
 */
#define DT_TPEV_OUT		(1ULL << 37)
struct dt_tpev	*dt_tpev_open_on(const struct dt_tpev_pmu *, uint64_t evtflags,
		    const pid_t *tids, unsigned int ntids, bool threads,
		    dt_tpev_fn fn, void *arg, void (*release)(void *),
		    int *error);
int		 dt_tpev_open_xtids(struct dt_tpev *ev,
		    struct perf_event_attr *attr, const pid_t *tids,
		    unsigned int n, int *clk);
extern int	 dt_tpev_clockid;

#endif /* DT_TP_PERF_VAR_H */
