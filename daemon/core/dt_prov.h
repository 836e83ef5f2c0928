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
 * How providers plug into the device core, after dt(4)'s dt_provider:
 * a provider is an ops table plus an init function that registers its
 * probes; the core creates a pcb (probe control block) for every probe an
 * open enables and, while that open records, links the pcb on the probe's
 * RCU list, where the provider's event sources find it.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after creation
 *	[K]	the core's configuration lock (dt_dev_lock)
 *	[r]	RCU: written under [K], read under rcu_read_lock()
 *	[a]	atomic operations
 */
#ifndef DT_PROV_H
#define DT_PROV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu.h>
#include <urcu/rculist.h>

#include <dev/dt/dtvar.h>

/* dt(4)'s limits on a profile/interval period: 200 us .. UINT32_MAX s. */
#define DT_TIMER_NSECS_MIN	200000ULL
#define DT_TIMER_NSECS_MAX	((uint64_t)UINT32_MAX * 1000000000ULL)

struct dt_softc;
struct dt_pcb;
struct dt_probe;
struct dt_aggspec;

struct dt_provider {
	const char	*dtpv_name;			/* [I] "syscall" */
	/*
	 * DTIOCPRBENABLE: validate the request and create the pcbs of dtp
	 * for sc with dt_pcb_alloc().  Returns 0 or an errno (EINVAL,
	 * ENOMEM).  Called under [K].  NULL: one pcb, cpu-less.
	 */
	int		(*dtpv_alloc)(struct dt_probe *, struct dt_softc *,
			    const struct dtioc_req *);
	/*
	 * DTIOCRECORD on/off, once per pcb after it was linked on, or
	 * before it is unlinked from, the probe's list: arm or disarm what
	 * feeds it (a timer, perf, the tracees' enable table).  Called
	 * under [K]; must not wait for event producers.  NULL: nothing.
	 */
	void		(*dtpv_start)(struct dt_pcb *);
	void		(*dtpv_stop)(struct dt_pcb *);
	/*
	 * DTIOCPRBDISABLE.  dt(4) keeps the pcbs until close and only
	 * lets kprobe undo its patch here; ours have nothing to undo.
	 */
	int		(*dtpv_dealloc)(struct dt_probe *, struct dt_softc *,
			    const struct dtioc_req *);
	/*
	 * Free provider state hung on a pcb (dp_priv).  Called under [K]
	 * after an RCU grace period, so no producer can still see it.
	 */
	void		(*dtpv_free)(struct dt_pcb *);
	/*
	 * DTIOCPRBAGG of a DTF_F_TREE count (dtvar.h), its probe's first:
	 * make dp's events of pid's tree, from its next exec, counted by
	 * the kernel under dp's filter taken whole, in place of events,
	 * from dp's start on.  0, or an errno (EOPNOTSUPP: not so).  Called
	 * under [K], before recording.  NULL: EOPNOTSUPP.
	 */
	int		(*dtpv_treecount)(struct dt_pcb *, pid_t);
	/*
	 * dt_dev_fini(), once per provider after every open is closed:
	 * stop threads the provider started.  NULL: nothing.
	 */
	void		(*dtpv_fini)(void);
};

struct dt_probe {
	struct cds_list_head	 dtp_pcbs;	/* [r] recording pcbs */
	const struct dt_provider *dtp_prov;	/* [I] */
	uint32_t		 dtp_pbn;	/* [I] 1..N */
	uint8_t			 dtp_nargs;	/* [I] */
	char			 dtp_func[DTNAMESIZE];	/* [I] */
	char			 dtp_name[DTNAMESIZE];	/* [I] */
	/*
	 * [I] DTIOCGARGS types, tracepoints only; NULL elsewhere.  One
	 * per argument, dtp_nargs of them: OpenBSD's btrace sizes its
	 * DTIOCGARGS buffer and its -l line by dtpi_nargs, and a Linux
	 * event has up to DTMAXFUNCARGS, more than dt(4)'s DTMAXARGTYPES.
	 */
	const char		*dtp_argtype[DTMAXFUNCARGS];
	_Atomic int		 dtp_recording;	/* [a] # recording pcbs */
	/*
	 * [a] # of them that put into rings (no dp_agg): counted before
	 * such a pcb is linked, uncounted after it is unlinked.  With none,
	 * the sequencer has nothing to order (dt_seq_emit()).
	 */
	_Atomic int		 dtp_ringpcbs;
	_Atomic uint64_t	 dtp_evtflags;	/* [a] union of their flags */
	/*
	 * [I] DTEVT_FUNCARGS when dtev_args carries entry arguments that
	 * only a pcb asking for FUNCARGS may see (syscall entry); 0 when
	 * the union is always copied (return values, tracepoint args).
	 */
	uint64_t		 dtp_argsflag;
	/*
	 * [I] Its events may carry DTEVT_STRINGS in the kstack area
	 * (dtvar.h); for the other probes a pcb's DTEVT_STRINGS means
	 * nothing, and its kstack is what DTEVT_KSTACK says.
	 */
	bool			 dtp_strings;
	/*
	 * [I] Its events carry the hook's duration + 1 in dtev_retval[1]
	 * (syscall returns, dt_ingest_rec.c), for DTF_LAT's fold alone: no
	 * ring copy shows it, where dt(4) has the call's second value,
	 * which Linux never returns.
	 */
	bool			 dtp_lat;
	int			 dtp_sysnum;	/* [I] provider-defined */
	void			*dtp_priv;	/* [I] provider-defined */
};

struct dt_pcb {
	struct cds_list_head	 dp_pnext;	/* [r] on dtp_pcbs */
	struct dt_pcb		*dp_snext;	/* [K] on the softc's list */
	struct rcu_head		 dp_rcu;
	struct dt_softc		*dp_sc;		/* [I] the open it fills */
	struct dt_probe		*dp_dtp;	/* [I] */
	uint64_t		 dp_evtflags;	/* [I] masked DTEVT_* */
	uint64_t		 dp_nsecs;	/* [I] timer period */
	int			 dp_cpu;	/* [I] timer CPU, -1 for none */
	/*
	 * [I] dt_dev.c 1.14's in-kernel filter (--abi 1.14 only): keep an
	 * event if its pid or tid (as the reader sees it) is, or is not,
	 * dp_fval.  DT14_OP_NONE: keep all.  Set before the pcb records.
	 */
	uint8_t			 dp_fop;
	uint8_t			 dp_fvar;
	uint32_t		 dp_fval;
	/*
	 * [K] userdt's filter at the source (DTIOCPRBFILTER), or NULL:
	 * set, replaced and freed only while the open does not record (no
	 * producer can see the pcb then), read-only while it records.
	 * Evaluated by dt_pcb_ring_put() and dt_pcb_ring_put_deep().
	 */
	struct dtioc_filter	*dp_filter;
	bool			 dp_fcomm;	/* [K] as dp_filter: it
						   compares comm */
	/*
	 * [K] userdt's aggregations at the source (DTIOCPRBAGG, dt_agg.h),
	 * or NULL: same rules as dp_filter.  An event the filter keeps is
	 * folded into the open's table instead of a ring slot, unless the
	 * filter could not judge it (a comm dtd does not see as the reader
	 * would): that one takes a ring slot, and the reader's filter
	 * decides (DTF_F_UNSURE, dtvar.h).
	 */
	struct dt_aggspec	*dp_agg;
	/*
	 * [K] set, [a] read: the source counts this pcb's events itself
	 * and folds the counts (a kernel counter, dt_aggctr in dt_agg.h),
	 * so no event of its stream goes to it, and its filter asks the
	 * stream for nothing.  Set by dtpv_start; cleared only by the next
	 * start of recording, before the pcb is linked: after dtpv_stop
	 * records the stream still holds must not reach it either.  A
	 * tree's count (DTF_F_TREE) has it set from before it is linked.
	 */
	_Atomic bool		 dp_srccount;
	/*
	 * [K] set, [a] read: with dp_srccount, the source still hands the
	 * pcb its stream's events stamped before this time (the source's
	 * own clock), for a switch-over at that time to events or counters
	 * of the pcb's own (dt_tp_pid.c, dt_tp_pcnt.c); 0: none, the stream
	 * gives it nothing.
	 * Reset with dp_srccount.
	 */
	_Atomic uint64_t	 dp_srcuntil;
	/*
	 * [K] set, [a] read: the kernel's copy of a syscall probe's events
	 * (dt_ksys.h's feed) is not for this pcb, which a kernel program
	 * counts (dt_ksys_kcount()); unlike dp_srccount, the hooks' events
	 * of the library's processes still come to it.  Cleared with
	 * dp_srccount.
	 */
	_Atomic bool		 dp_knot;
	void			*dp_priv;	/* [K] provider state */
};

/*
 * Register a probe: pbn is the next number.  Called from provider init
 * functions only, during dt_dev_init().  Returns the probe or NULL
 * (ENOMEM).
 */
struct dt_probe	*dt_dev_alloc_probe(const char *func, const char *name,
		    const struct dt_provider *, uint8_t nargs);

/* Probe by number, NULL when out of range.  Any thread, no lock. */
struct dt_probe	*dt_dev_probe(uint32_t pbn);
uint32_t	 dt_dev_nprobes(void);

/* Find a probe by provider/func/name, NULL if absent.  Any thread. */
struct dt_probe	*dt_dev_probe_lookup(const char *prov, const char *func,
		    const char *name);

/*
 * The root of the process tree sc named (DTIOCTREE), 0 for none.  Under
 * [K]: it changes only then, and not once a pcb depends on it.
 */
pid_t		 dt_sc_tree(const struct dt_softc *);
/* Its DTTR_F_* (dtvar.h), as dt_sc_tree(). */
uint32_t	 dt_sc_treeflags(const struct dt_softc *);
/* Who opened sc, whose user a provider's resources are charged to.  [I] */
const struct dt_cred *dt_sc_cred(const struct dt_softc *);
/*
 * What the events' thread ids are shifted by: OpenBSD's
 * THREAD_PID_OFFSET under --openbsd-strict, else 0.  [I]
 */
int32_t		 dt_tid_offset(void);
/*
 * Other memory of cr's opens than their rings (a read's buffer, a
 * kernel map): 0 or ENOMEM, logged; given back by dt_limit_uncharge().
 * Any thread.
 */
int		 dt_limit_charge(const struct dt_cred *cr, uint64_t mem);
void		 dt_limit_uncharge(const struct dt_cred *cr, uint64_t mem);

/*
 * Create a pcb of dtp for sc (from dtpv_alloc, under [K]), with the
 * flags the provider accepts (already masked) and cpu.  Returns NULL on
 * ENOMEM.  The core links it on the softc and frees it at close.
 */
struct dt_pcb	*dt_pcb_alloc(struct dt_probe *, struct dt_softc *,
		    uint64_t evtflags, uint64_t nsecs, int cpu);

/*
 * Put one event into the ring of dp's open for cpu.  src is a complete
 * event as the provider saw it; the core copies only what dp_evtflags
 * asks for (the rest of the record is zero), sets dtev_pbn and dtev_cpu,
 * and counts a drop if the ring is full.  Wakes a parked reader through
 * the deferred wakeup.  Callable from any thread inside rcu_read_lock(),
 * on a pcb found on dtp_pcbs (or from dtpv_start/stop); cheap: one ring
 * lock, one copy, no allocation.  Returns 0 or ENOBUFS (dropped).
 * An event dp's filter at the source rejects (dp_filter) takes no
 * slot: it is counted as filtered and 0 is returned.
 */
int	dt_pcb_ring_put(struct dt_pcb *, unsigned int cpu,
	    const struct dt_evt *src);

/*
 * Whether src, if dp's filter keeps it, is folded rather than put into
 * a ring (dp_agg), known without evaluating the filter: yes unless the
 * filter compares comm and src's comm is one dtd cannot judge, for the
 * sequencer's fast path of folded events.  Any thread; dp found as for
 * dt_pcb_ring_put().
 */
bool	dt_pcb_folds(const struct dt_pcb *, const struct dt_evt *src);

/*
 * Whether every open of dtp folds src (dt_pcb_folds()): nothing of it
 * reaches a ring, so nothing to order.  Any thread; takes the RCU read
 * lock itself.
 */
bool	dt_probe_folds(struct dt_probe *, const struct dt_evt *src);

/*
 * A stack as a provider walked it, up to DTEV_DEEP_MAX frames, for
 * dt_pcb_ring_put_deep().
 */
struct dt_deepstack {
	unsigned int	 ds_count;
	uint64_t	 ds_pc[DTEV_DEEP_MAX];
};

/*
 * dt_pcb_ring_put() of an event with stacks deeper than a struct
 * stacktrace holds (k and u): an open that asked for DTEVT_DEEPSTACK
 * gets them whole, its event followed by the continuation records
 * dtvar.h describes; any other gets the first STACKTRACE_MAX frames,
 * as from dt_pcb_ring_put().  k or u NULL: src's own stack (or a
 * syscall event's string area) stands, at most STACKTRACE_MAX frames.
 * Same contract, one copy of each record.
 */
int	dt_pcb_ring_put_deep(struct dt_pcb *, unsigned int cpu,
	    const struct dt_evt *src, const struct dt_deepstack *k,
	    const struct dt_deepstack *u);

/*
 * Put src into every recording pcb of dtp: the usual producer call.
 * Takes rcu_read_lock() itself.  The calling thread must be registered
 * with liburcu (rcu_register_thread()).  Returns the number of opens that
 * dropped the event.
 */
unsigned int	dt_probe_emit(struct dt_probe *, unsigned int cpu,
		    const struct dt_evt *src);
/* dt_probe_emit() with dt_pcb_ring_put_deep() of user stack u. */
unsigned int	dt_probe_emit_deep(struct dt_probe *, unsigned int cpu,
		    const struct dt_evt *src, const struct dt_deepstack *u);

/*
 * Count timer periods missed (skiptick), recursive events (recurevt), or
 * events lost before they reached the core (dropevt: a tracee's own ring
 * was full), so DTIOCGSTATS accounts for every event.  Same contract as
 * dt_pcb_ring_put().
 */
void	dt_pcb_count_skiptick(struct dt_pcb *, unsigned int cpu, uint64_t n);
void	dt_pcb_count_recurevt(struct dt_pcb *, unsigned int cpu, uint64_t n);
void	dt_pcb_count_dropevt(struct dt_pcb *, unsigned int cpu, uint64_t n);
/*
 * n events a source filtered for dp before they reached dtd (a tracee's
 * hook, from the pushed filter below): dtsx_filtevt, as dtd's own
 * rejections.  Same contract.
 */
void	dt_pcb_count_filtevt(struct dt_pcb *, unsigned int cpu, uint64_t n);

/*
 * Filters at the source below dtd (the kernel's tracepoint filter, a
 * tracee's hook): what a source may drop for a probe, the OR over its
 * recording pcbs of their DTIOCPRBFILTER programs (a pcb without one
 * keeps every event: DT_FSRC_ALL).  Each program is read as dtd reads
 * it for that pcb's reader, with what only dtd knows folded into
 * constants (the probe's number; comm, arguments it does not get), tids
 * as the kernel gives them (no --openbsd-strict offset), and every
 * comparison the source cannot evaluate exactly (can() false) taken as
 * true.  With no negation in a program, the result keeps at least what
 * any pcb keeps: the source never drops an event one of them wants, and
 * dtd still applies each pcb's own filter.  The result is a postfix
 * program as dtvar.h's, with fields DTF_PID, DTF_TID, DTF_CPU,
 * DTF_COMM, DTF_RETVAL, DTF_ERRNO and DTF_ARG0 + n, or a constant.
 */
#define DT_FSRC_MAXTERMS	64

#define DT_FSRC_NONE	0	/* no event: nothing records it so */
#define DT_FSRC_ALL	1	/* every event: no filter at the source */
#define DT_FSRC_SOME	2	/* fs_terms */

struct dt_fsrc {
	int			 fs_kind;
	bool			 fs_loose;	/* some comparison taken
						   as true: keeps more than
						   the programs would */
	unsigned int		 fs_nterms;
	/*
	 * Input, 0: none.  The process every event the source sees is
	 * of (per-task counters on its threads, dt_tp_pcnt.c), so that
	 * a comparison of the pid is a constant (dt_fsrc_of_pcb_in()).
	 */
	pid_t			 fs_pid;
	struct dtioc_filter_term fs_terms[DT_FSRC_MAXTERMS];
};

/* Whether the source evaluates t exactly as dtd would, for dtp. */
typedef bool	(*dt_fsrc_can_fn)(const struct dt_probe *,
		    const struct dtioc_filter_term *t, void *arg);

/* fs keeps nothing (DT_FSRC_NONE), to OR probes into. */
void	dt_fsrc_init(struct dt_fsrc *);

/*
 * fs |= the filter of dtp's recording pcbs, but skip (a pcb being
 * stopped, still on the list; or NULL) and those asking for any of
 * skipflags (DTEVT_LAUNCHED: no kernel event goes to them).  Under [K],
 * from dtpv_start or dtpv_stop, where pcbs' filters do not change.
 * Past DT_FSRC_MAXTERMS terms, fs becomes DT_FSRC_ALL.
 */
void	dt_fsrc_or_probe(struct dt_fsrc *, struct dt_probe *,
	    const struct dt_pcb *skip, uint64_t skipflags, dt_fsrc_can_fn can,
	    void *arg);

/*
 * fs = dp's filter alone, read as dt_fsrc_or_probe() reads it, with
 * fs_loose false when the source evaluates it whole: it then keeps
 * exactly the events dtd's filter would.  Same caller as above.
 */
void	dt_fsrc_of_pcb(struct dt_fsrc *, const struct dt_pcb *,
	    dt_fsrc_can_fn can, void *arg);

/*
 * dt_fsrc_of_pcb() for a source that sees only process pid's events:
 * each comparison of the pid is folded into the constant it is for
 * them, so that pid == N is no loose term there.  Same caller.
 */
void	dt_fsrc_of_pcb_in(struct dt_fsrc *, const struct dt_pcb *, pid_t pid,
	    dt_fsrc_can_fn can, void *arg);

/*
 * N where dp's filter keeps only events of process N (a comparison
 * pid == N alone or ANDed with the rest, as btrace -p pushes it), so
 * that a source may select that process's events itself; 0 otherwise.
 * Same caller as above.
 */
pid_t	dt_fsrc_pid(const struct dt_pcb *);

/*
 * Aggregations at the source (dt_agg.c, dtvar.h's DTIOCPRBAGG).
 * dt_pcb_count_only(): every event dp keeps only adds one to counts
 * keyed by nothing but the pid and the probe (each of its aggregations
 * a count() so keyed, no filter, no --abi 1.14 filter), so a source may
 * count a process's calls of the probe instead of putting events.  Fixed while dp records; any thread that may see
 * dp.  dt_pcb_fold_count(): n such calls of process pid counted at the
 * source, folded as n puts would be (nothing for a pcb that is not
 * count-only).  Same contract as dt_pcb_ring_put().
 */
bool	dt_pcb_count_only(const struct dt_pcb *);
void	dt_pcb_fold_count(struct dt_pcb *, unsigned int cpu, uint64_t n,
	    pid_t pid);

/*
 * Counts a source keeps in place of events (dp_srccount): a counter the
 * kernel increments at each event its filter keeps, read by dtd.
 * dt_pcb_kcount_ok(): every aggregation of dp is a count() keyed by
 * nothing but the CPU and the probe, and dp has no --abi 1.14 filter,
 * so per-CPU counts of the events dp's filter keeps are all its table
 * needs; the provider still checks that its source evaluates the filter
 * whole (dt_fsrc_of_pcb()) and that each record is one event.  Under
 * [K].  dt_pcb_fold_kcount(): n such events on cpu, folded as n puts
 * would be; any thread.
 *
 * A dt_aggctr is such a counter: dac_sync() folds what it counted since
 * its last call (dt_pcb_fold_kcount()).  dt_aggctr_add() registers it
 * (dtpv_start, after dp_srccount is set, under [K]); from then on every
 * DTIOCAGGREAD of dp's open calls dac_sync() first, so a read holds
 * every event counted before it.  dt_aggctr_del() calls it a last time
 * and unregisters it (dtpv_stop, under [K]); once it returns no thread
 * calls dac_sync() for it.  dac_sync() is called with the registry's
 * lock held: it may take a table's lock, nothing else of the core.
 *
 * A counter whose drain must first wait for its writers (a kernel
 * program, dt_tp_kbpf.c) sets dac_flip and dac_wait too: a read calls
 * dac_flip() on each of its counters, then each distinct dac_wait()
 * once, then dac_sync() on those whose wait returned true, so one wait
 * serves all of them; a counter whose wait failed is left for the next
 * read, which flips it again.  dt_aggctr_del() syncs whatever the wait
 * said (no later read could).  Both under the registry's lock; NULL
 * for a counter that needs no wait.
 */
struct dt_aggctr {
	struct dt_aggctr	*dac_next;	/* [c] the registry's lock */
	struct dt_pcb		*dac_dp;	/* [I] */
	void			(*dac_sync)(struct dt_aggctr *);	/* [I] */
	void			(*dac_flip)(struct dt_aggctr *);	/* [I] */
	bool			(*dac_wait)(void);			/* [I] */
};
bool	dt_pcb_kcount_ok(const struct dt_pcb *);
void	dt_pcb_fold_kcount(struct dt_pcb *, unsigned int cpu, uint64_t n);

/*
 * dt_pcb_pcount_ok(): as dt_pcb_kcount_ok(), for a counter of one
 * process's events on no CPU in particular (per-task counters on its
 * threads, dt_tp_pcnt.c): every aggregation of dp a count() keyed by
 * nothing but the pid and the probe, which such a counter supplies (its
 * process's, the pcb's); not the CPU, nor the thread.  Under [K].  The
 * counts fold with dt_pcb_fold_count()'s dt_pcb_fold_n(), through
 * dt_pcb_fold_pcount(): n events of process pid, any thread.
 */
bool	dt_pcb_pcount_ok(const struct dt_pcb *);
void	dt_pcb_fold_pcount(struct dt_pcb *, uint64_t n, pid_t pid);
void	dt_aggctr_add(struct dt_aggctr *);
void	dt_aggctr_del(struct dt_aggctr *);

/*
 * Aggregations a source folds itself (dt_aggsrc.c): a traced process's
 * hook keeps, for each aggregation of a pcb, the count, sum, min and max
 * of one value of its events (or a count per hist/lhist bucket) and dtd
 * merges them into the open's table.  dt_pcb_srcagg_ok(): every
 * aggregation of dp is keyed by the pid, the probe, the thread, its
 * name, the CPU, arguments, the return value, errno or the user stack
 * (not the kernel's; the user's only where dp asks for it and not
 * deeper than STACKTRACE_MAX) and folds an argument, the return value
 * or errno (or counts), dp has no filter and gets its events'
 * arguments; the provider still checks that the fields are ones its
 * source knows.  Fixed while dp records; under [K]
 * or any thread that may see dp.  dt_aggspec_next() walks dp's
 * aggregations (NULL: the first), dt_aggspec_req() reads one.
 */
bool	dt_pcb_srcagg_ok(const struct dt_pcb *);
const struct dt_aggspec *dt_aggspec_next(const struct dt_pcb *,
	    const struct dt_aggspec *);
const struct dtioc_aggspec *dt_aggspec_req(const struct dt_aggspec *);

/*
 * The buckets of an lhist() as a source counts them: index 0 below
 * dtas_lmin, 1 + (v / dtas_lstep - dtas_lmin / dtas_lstep) within,
 * the last from dtas_lmax on.  0 for a spec that is no lhist.  A hist()
 * has DT_AGG_HIST_NB: index class + 1, for the classes -1 .. 64.
 */
#define DT_AGG_HIST_NB	66
uint64_t dt_agg_lhist_nb(const struct dtioc_aggspec *);

/*
 * Merge what the source folded for as (one of dp's aggregations): n
 * events of the key sk (process sk_pid, and the fields as keys;
 * sk_bucket the index of a hist or lhist bucket; the user stack's
 * frames, interned in the open's stack table as a record's are, with a
 * full stack table's refusal counted as dt_agg_put() counts it) summing
 * to sum, from min to max (a hist's or lhist's entries keep their count
 * alone); 0, or EINVAL for a bucket index past as's (nothing folded:
 * the caller counts it as forged).  Or n[i] events in bucket i of nb of
 * as keyed by nothing but pid and probe, answering how many indexes
 * were past as's.  Same contract as dt_pcb_ring_put().
 * dt_pcb_count_srcstk(): n events of dp the source could not fold for
 * want of room for their stacks, recorded instead (dtsx_srcstk); any
 * thread.
 */
#define DT_SRCKEY_NWORDS	6	/* of dt_evt's union a source keeps */
struct dt_srckey {
	pid_t		 sk_pid;
	int32_t		 sk_tid;	/* as the kernel gives it */
	uint32_t	 sk_cpu;
	uint32_t	 sk_bucket;
	int64_t		 sk_a[DT_SRCKEY_NWORDS];	/* dt_evt's _args */
	char		 sk_comm[16];	/* NUL padded: the tracee's, judged */
	uint32_t	 sk_nupc;	/* <= STACKTRACE_MAX */
	uint64_t	 sk_upc[STACKTRACE_MAX];	/* the user stack */
};
int	dt_pcb_fold_src(struct dt_pcb *dp, const struct dt_aggspec *as,
	    const struct dt_srckey *sk, uint64_t n, int64_t sum, int64_t min,
	    int64_t max);
unsigned int dt_pcb_fold_src_buckets(struct dt_pcb *dp,
	    const struct dt_aggspec *as, pid_t pid, const uint64_t *n,
	    unsigned int nb);
void	dt_pcb_count_srcstk(struct dt_pcb *dp, uint64_t n);

/*
 * Counts a kernel program keeps by key (issue 22, dt_tp_kbpf.c): the
 * fields of the current task it reads, the pid, thread, name and CPU,
 * and the probe (the pcb's).  dt_pcb_kkey_ok(): every aggregation of dp
 * is a count() keyed by the same of those fields (DTA_K_PBN aside), dp
 * has no --abi 1.14 filter; *fields says which, as 1 << DTF_* bits.
 * The provider still judges dp's filter.  Under [K].
 * dt_pcb_fold_kkey(): n events of key sk (sk_pid, sk_tid and sk_cpu as
 * the kernel gave them; what is not a key ignored), named comm
 * (DTMAXCOMLEN bytes, NUL padded, as the sampled records name the task;
 * sk_comm unread) into every aggregation of dp, counted in dtgr_kcount;
 * dt_pcb_fold_klost(): n events a full kernel table refused, counted as
 * a full table's in dtgr_overflow.  Any thread, as dt_pcb_fold_src().
 * dt_pcb_agg_size(): the entries dp's open's table holds at most.
 */
bool	dt_pcb_kkey_ok(const struct dt_pcb *dp, uint32_t *fields);
void	dt_pcb_fold_kkey(struct dt_pcb *dp, const struct dt_srckey *sk,
	    const char *comm, uint64_t n);
void	dt_pcb_fold_klost(struct dt_pcb *dp, uint64_t n);
uint32_t dt_pcb_agg_size(const struct dt_pcb *dp);

/*
 * Time order (dt_seq.c, design decision 18).  Providers put events
 * through the sequencer, which holds each until no source can still put
 * an older one, then puts it into the rings with dt_probe_emit() or
 * dt_pcb_ring_put(): every ring fills in time-stamp order, so a reader
 * gets events in order across CPUs, tracees, perf buffers and
 * providers, within a read and across reads.
 *
 * A source that puts events after they happened (a drain of buffers)
 * registers once and publishes marks: dt_source_mark(s, T) promises
 * that whatever it puts from then on is stamped T or later.  W, the
 * oldest mark of the active sources, frees the held events stamped at or
 * before it; an idle source (nothing open, nothing to drain) holds
 * nothing back.  A source silent for longer than DT_SEQ_DELAY_NS (D)
 * stops holding the others: W is never older than now - D, or than
 * now - DT_SEQ_PATIENT_NS for a source that says it is held back
 * (dt_source_patient()).  An event
 * that comes after a younger one was released is "late": it is put at
 * once and counted (dt_seq_stats(), dtd's log at exit).  A source whose
 * events are stamped as it puts them (interval) needs no mark.
 *
 * Times are CLOCK_REALTIME nanoseconds, as dtev_tsp.
 */
#define DT_SEQ_DELAY_NS		50000000ULL	/* D: a stuck source's hold */
/*
 * A patient source's hold: longer than D, as a slow lossless reader
 * keeps its records back for longer, but bounded, for its word is its
 * tracees' stamps and a reader may stay slow; well under UDT_WAIT_NSEC,
 * so that what it holds (which counts against a lossless pass's room)
 * leaves before honest tracees waiting for room give up and drop.
 */
#define DT_SEQ_PATIENT_NS	(3 * DT_SEQ_DELAY_NS)
/*
 * What a draining source takes off the time its pass began for its mark:
 * a record is stamped a little before it is committed where the drain
 * can see it (a tracee's hook, perf's output), by less than this unless
 * its writer was preempted in between (then it comes late).
 */
#define DT_SEQ_SLACK_NS		1000000ULL
#define DT_SEQ_MAXHELD		65536	/* beyond: the oldest goes early */

struct dt_source;

/*
 * Register a source (name for the log: "ingest", "tracepoint").  Idle
 * until its first mark.  Any thread, at init or first use; never freed.
 * NULL on ENOMEM (the caller then puts without marks).
 */
struct dt_source *dt_source_add(const char *name);

/*
 * Promise: every event src puts from now on is stamped ns or later;
 * src is active.  Releases what the new W frees, so only from a thread
 * registered with liburcu (the source's own reader thread).
 */
void	dt_source_mark(struct dt_source *src, uint64_t ns);

/*
 * dt_source_mark() for any thread (dtpv_start, under [K]): the release
 * it may allow is left to the wakeup thread.
 */
void	dt_source_begin(struct dt_source *src, uint64_t ns);

/*
 * src, idle, has something again whose events will be stamped ns or
 * later (a tracee just listed): active from now, at ns, so that the
 * time it is done with (dt_seq_done_ns()) is not the clock's until its
 * own thread marks.  No-op for an active src.  Any thread; releases
 * nothing (a mark that appears only holds more back).
 */
void	dt_source_wake(struct dt_source *src, uint64_t ns);

/*
 * Nothing open or nothing to drain: src holds nothing back until its
 * next mark.  Any thread; the wakeup thread releases what this frees.
 */
void	dt_source_idle(struct dt_source *src);

/*
 * Whether src is held back, not stuck (on): its mark is old because a
 * lossless reader reads slowly and its records wait for room, and they
 * will come, oldest first.  Then its mark holds W back for
 * DT_SEQ_PATIENT_NS at most instead of D (D let the younger events out
 * before those records, which then came late); the other sources' marks
 * keep D.  Any thread; the wakeup thread releases what turning it off
 * frees.
 */
void	dt_source_patient(struct dt_source *src, bool on);

/*
 * Of src's events, at most n more go into the rings until the next call
 * (UINT_MAX, as at first: no bound); the others stay held, in order, and
 * a release stops at the first of them whatever W says, until a call
 * lets more go.  A lossless drain's bound on what its readers' rings
 * get (dt_ingest_hold.c): so that it may hold more than they have room
 * for.  Releases what n lets go, so only from a registered thread (the
 * source's own).
 */
void	dt_source_room(struct dt_source *src, unsigned int n);

/*
 * The ordered dt_probe_emit() and dt_pcb_ring_put(): ev (copied) goes to
 * dtp's recording pcbs, or to dp, once W has passed its time stamp;
 * drops are counted in the rings then.  src is the putting source, for
 * the count of late events, or NULL.  A held event for a probe goes to
 * the pcbs recording it when it is released; one for a pcb is flushed
 * into the pcb's rings when its open stops recording.  Same callers as
 * the unordered calls: a registered thread, dt_seq_put() on a pcb found
 * on dtp_pcbs inside rcu_read_lock().  One lock, a copy of the event
 * while held, no allocation but the store's doubling (and a deep user
 * stack's copy, dt_seq_emit_deep()).
 */
void	dt_seq_emit(struct dt_source *src, struct dt_probe *dtp,
	    unsigned int cpu, const struct dt_evt *ev);
void	dt_seq_put(struct dt_source *src, struct dt_pcb *dp, unsigned int cpu,
	    const struct dt_evt *ev);
/*
 * dt_seq_emit() of an event whose user stack is u, deeper than ev's
 * dtev_ustack holds (dt_probe_emit_deep()); u NULL: dt_seq_emit().  u
 * is copied while the event is held; without the memory for the copy
 * the event goes with its first STACKTRACE_MAX frames.
 */
void	dt_seq_emit_deep(struct dt_source *src, struct dt_probe *dtp,
	    unsigned int cpu, const struct dt_evt *ev,
	    const struct dt_deepstack *u);

/*
 * A batch of pushes under one lock: from its first dt_seq_emit*() or
 * dt_seq_put() after dt_seq_batch_begin() to dt_seq_batch_end() the
 * calling thread holds the sequencer's lock, which its pushes take no
 * more, and the readers the batch's events go to are woken at its end,
 * once; each event is held, let through or released exactly as alone.
 * In between, the
 * thread may call nothing else of the sequencer's (dt_source_*() would
 * wait for itself), nor block, nor take [K] or a lock a holder of the
 * sequencer's waits for; keep batches short: every source's pushes and
 * marks wait meanwhile.  A registered thread (releases run
 * dt_probe_emit()).  Nothing nests; end what was begun.
 */
void	dt_seq_batch_begin(void);
void	dt_seq_batch_end(void);

struct dt_seq_stats {
	uint64_t	dss_events;	/* put through the sequencer */
	uint64_t	dss_late;	/* older than one already released */
	uint64_t	dss_forced;	/* released by D, before W */
	uint64_t	dss_overflow;	/* released early, store full */
	uint64_t	dss_flushed;	/* put by a stop */
	uint64_t	dss_deepcut;	/* held without their deep frames */
	uint64_t	dss_maxheld;	/* most held at once */
	uint64_t	dss_held;	/* held now */
	uint64_t	dss_active;	/* active sources now */
};
/* A snapshot of the counters.  Any thread. */
void	dt_seq_stats(struct dt_seq_stats *);

/*
 * Events of src the sequencer holds now: put, not yet in any ring.  A
 * lossless drain counts its own against the room it may fill
 * (dt_ingest_drain.c).  Any thread; takes [s].
 */
unsigned int	dt_source_held(struct dt_source *src);
/*
 * The same, and in *oldest the stamp of the oldest event held now, any
 * source's (UINT64_MAX: none): what goes first once the watermark
 * passes it.  Any thread; takes [s].
 */
unsigned int	dt_source_held_oldest(struct dt_source *src,
		    uint64_t *oldest);

/*
 * Tests: the clock the sequencer reads for now - D (NULL: the real
 * CLOCK_REALTIME) and D (0: DT_SEQ_DELAY_NS).  Before events flow.
 */
void	dt_seq_clock_set(uint64_t (*now)(void), uint64_t delay);

/*
 * Hold the serving of parked reads while a producer puts a batch of
 * events that belong together, and let it go after: a reader parked in
 * read(2) is otherwise served after the batch's first put and gets the
 * rest in a later read, where a merge by time cannot put them before
 * what it already returned (the tracepoint reader's rounds: a block
 * request's issue and its completion come from two events' buffers).
 * Wakeups scheduled meanwhile are served at the release.  Any thread;
 * holds nest; keep them short, since every open's parked reads wait.
 */
void	dt_wakeup_hold(void);
void	dt_wakeup_release(void);

/*
 * Provider init functions, called by dt_dev_init() in this order, which
 * is therefore the pbn order: profile, interval, syscall, tracepoint,
 * kprobe (dt(4)'s order).  Each
 * returns the number of probes it registered or -1 with errno set.
 */
int	dt_prov_profile_init(void);
int	dt_prov_interval_init(void);
int	dt_prov_syscall_init(void);
int	dt_prov_tracepoint_init(void);
int	dt_prov_kprobe_init(void);

#endif /* DT_PROV_H */
