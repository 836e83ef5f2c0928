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
 * What the tracepoint provider's files share (dt_prov_tp.c: sources,
 * probes, the perf callback; dt_tp_obsd.c: OpenBSD's names and their
 * decoders).  Private to the provider.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_prov_tracepoint_init()
 *	[K]	the core's configuration lock (the dtpv_* callbacks)
 *	[R]	the perf reader thread, inside rcu_read_lock()
 */
#ifndef DT_TP_VAR_H
#define DT_TP_VAR_H

#include <stdbool.h>
#include <stdint.h>

#include "dt_prov.h"
#include "dt_tp_perf.h"
#include "dt_tracefs.h"

#define DT_TP_MAXSRCS	64
#define DT_TP_SRCPROBES	8	/* probes one source feeds */
#define DT_TP_PROBESRCS	3	/* sources one probe feeds on */
#define DT_TP_SRCFIELDS	6	/* fields a decoder names */

#define DT_TP_MAXOBSD	32	/* OpenBSD mappings at most */

struct dt_tp_probe;

/* One Linux tracepoint and the probes it feeds. */
struct dt_tp_src {
	char			 tps_sys[DT_TP_NAMELEN];	/* [I] */
	char			 tps_event[DT_TP_NAMELEN];	/* [I] */
	struct dt_tp_format	 tps_fmt;	/* [I] */
	/* [I] fields the OpenBSD decoders read, by their index */
	const struct dt_tp_field *tps_f[DT_TP_SRCFIELDS];
	struct dt_tp_probe	*tps_probes[DT_TP_SRCPROBES];	/* [I] */
	unsigned int		 tps_nprobes;	/* [I] */
	/*
	 * [I] a system call's source (raw_syscalls), whose probes' arg0
	 * is OpenBSD's number of its field id (dt_tp_obsd.c's dt_tp_sys()):
	 * arg0 == N is, in ftrace's words, id among the Linux numbers
	 * that N stands for (dt_tp_filt.c).
	 */
	bool			 tps_sysnum;
	struct dt_tpev		*tps_ev;	/* [K] open while tps_nrec */
	uint64_t		 tps_evflags;	/* [K] stacks tps_ev walks */
	unsigned int		 tps_nrec;	/* [K] started pcbs */
	unsigned int		 tps_nk, tps_nu; /* [K] of which want stacks */
	unsigned int		 tps_nsw;	/* [K] of which want switches */
	int			 tps_lasterr;	/* [K] last error logged */
	char			*tps_kfilt;	/* [K] tps_ev's kernel filter */
	int			 tps_kfilt_err;	/* [K] last refusal logged */
};

/*
 * Build the event of probe tpp from a sample of src into ev, whose
 * identity, time and stacks are already the sample's.  Returns false
 * when this sample is not an event of the probe.  [R].
 */
typedef bool	(*dt_tp_decode_fn)(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);

struct dt_tp_probe {
	struct dt_probe		*tpp_dtp;	/* [I] */
	dt_tp_decode_fn		 tpp_decode;	/* [I] NULL: fields in order */
	struct dt_tp_src	*tpp_srcs[DT_TP_PROBESRCS];	/* [I] */
	unsigned int		 tpp_nsrcs;	/* [I] */
	bool			 tpp_nostack;	/* [I] decoder gives stacks */
	/* [I] fed by switch-in records where the source has them */
	bool			 tpp_switchin;
	bool			 tpp_strings;	/* [I] has string fields */
	/*
	 * [I] The ftrace filter under which each record of its one source
	 * is one event ("": every record), for a count in the kernel
	 * (dt_tp_count.h); NULL: none says so.
	 */
	const char		*tpp_kcount;
};

/* A source by name, and the fields its decoders need, in order. */
struct dt_tp_srcdef {
	const char	*tsd_sys;
	const char	*tsd_event;
	const char	*tsd_fields[DT_TP_SRCFIELDS];
};

enum {
	DT_S_SWITCH, DT_S_WAKEUP, DT_S_WAKEUP_NEW, DT_S_FORK,
	DT_S_SYSENTER, DT_S_SYSEXIT, DT_S_PFUSER, DT_S_PFKERNEL,
	DT_S_KMALLOC, DT_S_KFREE, DT_S_NKNOWN
};

/* Field indices in tps_f for each known source. */
enum { F_PREV_COMM, F_PREV_PID, F_PREV_STATE, F_NEXT_COMM, F_NEXT_PID };
enum { F_WK_PID, F_WK_CPU };
enum { F_CHILD_PID };
enum { F_SC_ID, F_SC_RET };
enum { F_PF_ADDR, F_PF_ERR };
enum { F_KM_PTR, F_KM_BYTES, F_KM_GFP };

struct dt_tp_obsd {
	const char	*tob_func;
	const char	*tob_name;
	dt_tp_decode_fn	 tob_decode;
	int		 tob_srcs[DT_TP_PROBESRCS];	/* -1 ends */
	uint8_t		 tob_nargs;
	const char	*tob_types[DTMAXARGTYPES];
	bool		 tob_nostack;
	bool		 tob_switchin;	/* from switch-in records */
	const char	*tob_kcount;	/* tpp_kcount */
};

/* The known sources, by DT_S_*; OpenBSD's mappings, in its order. */
extern const struct dt_tp_srcdef	dt_tp_known[DT_S_NKNOWN];
extern const struct dt_tp_obsd		dt_tp_obsd[];
extern const unsigned int		dt_tp_nobsd;

/* Field i (tps_f) of a sample: a number, or a comm-sized string.  [R] */
uint64_t	dt_tp_f(const struct dt_tp_src *, int i,
		    const struct dt_tp_sample *);
void		dt_tp_fcomm(const struct dt_tp_src *, int i,
		    const struct dt_tp_sample *, char *comm);

/*
 * Probe tpp's event from a sample of src into ev, under evtflags flags;
 * with *strings set, evs holds it with the string fields (the event for
 * the opens that asked for DTEVT_STRINGS).  false: the sample is not an
 * event of tpp.  [R].
 */
bool		dt_tp_build(const struct dt_tp_probe *tpp,
		    const struct dt_tp_src *src, const struct dt_tp_sample *s,
		    uint64_t flags, struct dt_evt *ev, struct dt_evt *evs,
		    bool *strings);

/*
 * What a sample of src says of threads (a rename or exec record; a
 * sched_switch's names, the stacks off__cpu keeps), into the caches
 * every event's comm and on__cpu's stacks come from: true when the
 * sample was a rename, nothing else.  [R].
 */
bool		dt_tp_sample_note(const struct dt_tp_src *src,
		    const struct dt_tp_sample *s);

/*
 * One process tree's events for a pcb (DTEVT_TREE, dt_tp_tree.c).
 * dt_tp_tree_ok(): whether tpp can feed them, on an open with a tree
 * (0, EINVAL or EOPNOTSUPP), at DTIOCPRBENABLE.  dt_tp_tree_start():
 * open dp's events on its open's tree, at dtpv_start (a failure is said
 * once, and dp stays silent); dt_tp_tree_stop(): close them.  [K].
 */
int		dt_tp_tree_ok(const struct dt_tp_probe *tpp,
		    const struct dt_softc *sc);
void		dt_tp_tree_start(struct dt_pcb *dp, const struct dt_tp_probe *);
void		dt_tp_tree_stop(struct dt_pcb *dp);

/*
 * A pid filter's events (dt_tp_pid.c): dt_tp_pid_start() opens dp's
 * own events on the threads of the process its pushed filter keeps
 * (a conjunct pid == N), at dtpv_start; false where it does not (no
 * such conjunct, a probe that cannot, a process that will not hold
 * still or has too many threads, the budget spent), and dp goes to the
 * shared event.  dt_tp_pid_stop(): close
 * them; false when dp has none.  [K].
 */
bool		dt_tp_pid_start(struct dt_pcb *dp, const struct dt_tp_probe *);
bool		dt_tp_pid_stop(struct dt_pcb *dp);

#define DT_TP_PID_TRIES	4	/* listings that must agree, at most */
#define DT_TP_PID_MAXTIDS 256	/* threads followed (fds: x CPUs) */

/*
 * pid's threads into tids[DT_TP_PID_MAXTIDS], sorted (dt_proc_tids()):
 * their count, or -ESRCH (no such process, pid a thread but not a
 * process, no memory) or -E2BIG (more than DT_TP_PID_MAXTIDS threads).
 * Any thread.
 */
int		dt_tp_pid_list(pid_t pid, pid_t *tids);

/*
 * A pid filter's counts (dt_tp_pcnt.c): dt_tp_pcnt_start() counts dp's
 * events in the kernel, per-task counters on the threads of the
 * process its pushed filter keeps, inherited by the threads they make,
 * where dp only counts (dt_pcb_pcount_ok()) and the rest of its filter
 * translates whole; false where it does not (as dt_tp_pid_start()
 * refuses, USERDT_KCOUNT=0 too), nothing said, and dp goes on to
 * dt_tp_pid_start().  dt_tp_pcnt_stop(): the last counts folded, the
 * counters closed; false when dp has none.  [K].
 */
bool		dt_tp_pcnt_start(struct dt_pcb *dp, const struct dt_tp_probe *);
bool		dt_tp_pcnt_stop(struct dt_pcb *dp);

#endif /* DT_TP_VAR_H */
