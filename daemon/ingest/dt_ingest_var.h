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
 * What the files of the ingest path share (dt_ingest.c, its drain thread
 * in dt_ingest_drain.c and dt_ingest_hold.c, its hellos' answers in
 * dt_ingest_serve.c, its counters in dt_ingest_ctr.c): a traced
 * process's state and the path's counters.  Private to
 * daemon/ingest/dt_ingest*.c; the lock annotations are dt_ingest.c's.
 */
#ifndef DT_INGEST_VAR_H
#define DT_INGEST_VAR_H

#include <sys/types.h>
#include <sys/un.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include <userdt/udt_sagg.h>
#include <userdt/udt_wire.h>

#include "dt_pidmaps.h"
#include "dt_untrace.h"
#include "dt_prov.h"
#include "dt_worker.h"

/*
 * The sinks dt_ingest_sink_*() registered: [I] once the ingest threads
 * run.  NULL: nobody takes that kind.
 */
extern struct dt_probe	*(*dti_probe)(unsigned int);
extern bool	(*dti_kall)(unsigned int);
extern bool	(*dti_kbefore)(pid_t, uint64_t, unsigned int);
extern void	(*dti_sample_put)(unsigned int, const struct dt_evt *, uint64_t,
		    uint64_t);
extern void	(*dti_sample_lost)(uint64_t, bool);
/* [I] The attach and exit sinks (dt_ingest.h), the first dti_n* used. */
extern void	(*dti_attach[DT_INGEST_MAXSINKS])(pid_t, bool);
extern unsigned int	dti_nattach;
extern void	(*dti_exit[DT_INGEST_MAXSINKS])(pid_t, uint64_t);
extern unsigned int	dti_nexit;
/* [I] The drain's source for the sequencer (dt_prov.h), or NULL. */
extern struct dt_source	*dti_seq;

/*
 * dt_ingest.c's state, which the drain (dt_ingest_drain.c) and the
 * hellos' answers (dt_ingest_serve.c) use too.  dti_procs: the attached
 * tracees; dti_enab, dti_lossless, dti_prof_nsecs: the master copy of
 * what their tables say; dti_nenab: probes enabled, + 1 for timer-mode
 * profiling; dti_path ([I]): the socket's; dti_uid_max: how many
 * tracees one user may have attached; dti_eager: welcome with
 * UDT_W_EAGER.
 */
extern pthread_mutex_t	 dti_lock;
extern struct dti_proc	*dti_procs;		/* [L], head read [a] */
extern uint8_t		 dti_enab[DT_SYS_NPROBES];	/* [L] */
extern uint32_t		 dti_lossless;		/* [L] */
extern uint64_t		 dti_prof_nsecs;	/* [L] */
extern atomic_uint	 dti_nenab;		/* [L] writes, [a] reads */
extern atomic_int	 dti_stop;		/* [a] the threads end */
extern char		 dti_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
extern unsigned int	 dti_uid_max;		/* [I] */
extern bool		 dti_eager;		/* [I] */

/*
 * The drain thread (dt_ingest_drain.c), started by dt_ingest_begin().
 * dti_free(): a proc's resources, once unlisted; the drain thread, or
 * dt_ingest_end() after it ended.
 */
void	*dti_drain_main(void *);
void	 dti_free(struct dti_proc *);

/*
 * Between the drain (dt_ingest_drain.c) and its lossless hold and mark
 * (dt_ingest_hold.c), each a pass's step as the files tell; all of it
 * the drain thread's own.  dti_drain(): take what is committed in dp's
 * ring, within dti_plan unless final.  dti_low(): dp_lowrt after its
 * drain, lossless.  dti_hold(): whether the pass leaves the rings alone,
 * and its budget; dti_allow_set(), dti_patience(): what the sequencer
 * is told of that.  dti_drain_oldest(): a pass under a budget, oldest
 * first.  dti_low_mark(), dti_seq_mark(): the mark at the pass's end.
 * [D]
 */
struct dti_plan;
extern struct dti_plan	dti_plan;	/* [D] */
unsigned int	dti_drain(struct dti_proc *dp, int final, uint64_t bound);
void	dti_low(struct dti_proc *dp, uint64_t first, bool woke);
bool	dti_hold(uint64_t now, unsigned int *budget);
void	dti_allow_set(bool any, bool hold);
void	dti_patience(bool on);
unsigned int	dti_drain_oldest(struct dti_proc *procs, unsigned int k,
		    uint64_t lim);
void	dti_low_mark(const struct dti_proc *procs, uint64_t now,
	    uint64_t *rt);
void	dti_seq_mark(uint64_t rt);

/* The probe of wire index p, NULL for none.  Any ingest thread. */
static inline struct dt_probe *
dti_probe_at(unsigned int p)
{
	return dti_probe != NULL ? dti_probe(p) : NULL;
}

/*
 * Records of a batch dtd discards (a ring retired, dti_flush()): lost
 * for every open recording each one's probe, as its dropevt says, so a
 * reader is told what it missed.  Each took a ring slot the tracee
 * wrote: no more than the events it could have had.  The drain thread.
 */
void	dti_charge_discarded(const struct udt_rec *batch, unsigned int nb);

/* A thread of a tracee seen in its records (dt_ingest_who.c). */
#define DTI_NTIDS	32
struct dti_tid {
	pid_t			 dt_tid;	/* 0: free */
	char			 dt_comm[UDT_COMMLEN];	/* dtd's reading */
	uint64_t		 dt_pass;	/* dti_pass of that reading */
	bool			 dt_known;	/* dt_comm is dtd's reading */
	bool			 dt_kid;	/* a child of the process */
	bool			 dt_vm;		/* and it shares the process's
						   memory: a vfork child */
	uint64_t		 dt_vmbatch;	/* dti_nbatch dt_vm was seen in */
};

/*
 * The reads of a tracee's memory (dtd's descriptor of /proc/PID/mem) that
 * the drain thread needs, made by the worker of the tracee's user
 * (dt_ingest_who.c): such a read waits for the tracee's mmap lock, and
 * for any page at an address the tracee chose, a page of a FUSE mount
 * that never answers included.  Shared by the proc and, while a look is
 * queued or runs, by the worker; freed with the last reference.
 */
#define DTI_CK_IDLE	0	/* the drain thread's to fill and queue */
#define DTI_CK_BUSY	1	/* queued or running: the worker's */
#define DTI_CK_DONE	2	/* answered: the drain thread's to read */
struct dti_chk {
	struct dt_work		 ck_work;	/* [q] while BUSY */
	atomic_int		 ck_refs;	/* [a] */
	atomic_int		 ck_state;	/* [a] DTI_CK_* */
	int			 ck_memfd;	/* [I] dp_memfd, owned here */
	int			 ck_mapsfd;	/* [k] /proc/PID/maps of the
						   same image until the ring
						   is proven, then -1 */
	uint64_t		 ck_ino;	/* [I] the ring memfd's inode */
	dev_t			 ck_dev;	/* [I] and device */
	uint64_t		 ck_proof;	/* [I] dp_proof */
	uint64_t		 ck_self;	/* [D] while IDLE: where the
						   tracee says it mapped the
						   ring; 0: no proof needed */
	bool			 ck_selfok;	/* [D] while IDLE: an address
						   a ring may be at */
	bool			 ck_ended;	/* [k] the memory has ended */
	bool			 ck_holds;	/* [k] the ring is mapped at
						   ck_self */
	bool			 ck_cancel;	/* [k] never looked */
};

#define DTI_BATCH	256		/* records between tail updates */

/*
 * The frames past UDT_STACK_MAX of a batch's records (udt_rec_more,
 * dt_ingest_deep.c): record i's dd_n[i] frames from dd_pc[dd_off[i]].
 * Every record of a batch has ur_nframes <= UDT_STACK_MAX once copied;
 * its depth is that plus dd_n[i].  A batch ends before dd_pc could not
 * hold a record's worth (DTI_DEEP_ROOM).
 */
#define DTI_DEEP_NPC	4096
#define DTI_DEEP_EXTRA	(UDT_DEEP_MAX - UDT_STACK_MAX)
#define DTI_DEEP_ROOM(dd) ((dd)->dd_used <= DTI_DEEP_NPC - DTI_DEEP_EXTRA)

struct dti_deep {
	unsigned int		 dd_used;	/* of dd_pc */
	uint8_t			 dd_n[DTI_BATCH];
	uint16_t		 dd_off[DTI_BATCH];
	uint64_t		 dd_pc[DTI_DEEP_NPC];
};

/*
 * Take the frames past UDT_STACK_MAX of r, a valid record copied from
 * the ticket *tail - 1 of dp's ring, from its udt_rec_more slots at
 * *tail on, into dd as record nb's, if each is committed, in place and
 * says so; then *tail moves past them and the number of slots is
 * returned.  Otherwise 0, nothing taken (the slots are left to the
 * drain's usual checks): r keeps its first UDT_STACK_MAX frames.
 * Either way r's ur_nframes is at most UDT_STACK_MAX after.  The drain
 * thread.
 */
unsigned int	dti_deep_take(const char *slots, uint64_t mask,
		    uint64_t *tail, struct udt_rec *r, struct dti_deep *dd,
		    unsigned int nb);

/*
 * Whether r, a slot's head copied out, is a continuation slot a hook
 * reserved and left unused (UDT_R_STKPAD), of a probe there is, in a
 * place one can be: skipped, neither a record nor garbage.
 */
bool	dti_deep_pad(const struct udt_rec *r);

/* A batch copied, waiting for a look at the image (dti_flush()). */
struct dti_held {
	unsigned int		 dh_nb;
	struct udt_rec		*dh_recs;
	struct udt_rec_str	*dh_strs;
	uint8_t			*dh_has;
	struct dti_deep		*dh_deep;	/* or NULL: no deep frames */
	uint64_t		 dh_rt;		/* its oldest stamp; 0: none */
	uint64_t		 dh_since;	/* CLOCK_MONOTONIC, held then */
};

/*
 * What dtd last read of one slot of a tracee's accumulators
 * (udt_sagg_acc): the counters it takes the steps of, and the extremes
 * it last took (sh_has), for the values it took before their counts.
 */
struct dti_sagg_shadow {
	uint64_t		 sh_count;
	uint64_t		 sh_nostk;	/* sa_nostk */
	uint64_t		 sh_sum;
	uint64_t		 sh_bucket[UDT_SAGG_NBUCKETS];
	int64_t			 sh_min;
	int64_t			 sh_max;
	bool			 sh_has;
};

/*
 * What dtd last read of one keyed entry (udt_sagg_kent), and the tid it
 * last judged the process's (ks_tid, 0: none), for the user of the tag
 * ks_seq (its slot's ss_seq; 0: none yet): a new tag starts it afresh.
 */
struct dti_sagg_kshadow {
	uint32_t		 ks_seq;
	uint64_t		 ks_count;
	uint64_t		 ks_sum;
	int64_t			 ks_min;
	int64_t			 ks_max;
	int32_t			 ks_tid;	/* judged; 0: not yet */
	bool			 ks_has;
	char			 ks_comm[UDT_COMMLEN];	/* UDT_SK_COMM: the name
							   judged for ks_tid */
};

struct dti_proc {
	struct dti_proc		*dp_next;	/* [L] writers; [D] reads */
	pid_t			 dp_pid;	/* [I] SO_PEERCRED */
	uid_t			 dp_uid;	/* [I] SO_PEERCRED */
	gid_t			 dp_gid;	/* [I] SO_PEERCRED */
	gid_t			 dp_rgid;	/* [I] its real gid then, or
						   dp_gid */
	int			 dp_pidfd;	/* [I] */
	int			 dp_memfd;	/* [I] /proc/PID/mem when it
						   attached, or -1; owned by
						   dp_chk once that is set */
	struct dti_chk		*dp_chk;	/* [I] the looks at that
						   memory; NULL without it */
	struct dti_held		*dp_held;	/* [D] a batch waiting for its
						   look, or NULL */
	bool			 dp_lookslow;	/* [D] a look kept the drain
						   waiting: never wait again */
	uint64_t		 dp_proof;	/* [I] the ring's rh_proof */
	bool			 dp_proven;	/* [D] its image mapped the
						   ring (dti_image_holds) */
	struct dt_untrace_ent	 dp_untrace;	/* [I] its header, for the
						   stack cut (dt_untrace.h) */
	struct udt_ring_hdr	*dp_ring;	/* [I] dtd's mapping */
	uint32_t		 dp_nslots;	/* [I] never reread from ring */
	struct udt_tab		*dp_tab;	/* [I] dtd's mapping */
	atomic_int		 dp_retired;	/* [a] same pid reconnected */
	int			 dp_dead;	/* [D] */
	uint64_t		 dp_tail;	/* [D] next ticket to read */
	uint64_t		 dp_stuck;	/* [D] tail stuck since */
	uint64_t		 dp_claimtk;	/* [D] the stuck ticket whose
						   claimer was looked at */
	uint64_t		 dp_claimat;	/* [D] then, ns (0: never) */
	bool			 dp_claimrun;	/* [D] and whether it ran */
	bool			 dp_cut;	/* [D] a lossless pass's budget
						   left records in the ring */
	uint64_t		 dp_lowrt;	/* [D] lossless: what is still
						   to come from the ring was
						   stamped no earlier, ns (0:
						   the pass's own promise) */
	uint64_t		 dp_pfirst;	/* [D] lossless: the stamp of
						   the first record the last
						   pass that drained took, 0:
						   none */
	bool			 dp_pwoke;	/* [D] and whether it woke
						   threads waiting for room */
	uint64_t		 dp_cpu;	/* [I] then [D]: its CPU time,
						   ticks, at the last look */
	uint64_t		 dp_budget;	/* [I] then [D]: lost and
						   recursive events it may
						   still claim */
	uint64_t		 dp_lag;	/* [I] then [D]: what records
						   drained may still earn */
	uint64_t		 dp_paid_tail;	/* [I] then [D]: dp_tail when
						   they last earned */
	uint64_t		 dp_tail0;	/* [I] dp_tail at attach */
	uint64_t		 dp_lost_total;	/* [D] last seen totals */
	uint64_t		 dp_recur_total;
	bool			 dp_owed;	/* [D] claims past the budget
						   wait for it (dti_counters()) */
	uint64_t		 dp_owed_n;	/* [D] how many, counted as
						   forged until paid */
	uint32_t		 dp_lost[DT_SYS_NPROBES];	/* [D] */
	uint32_t		 dp_recur[DT_SYS_NPROBES];	/* [D] */
	/*
	 * [I] then [D]: events its hooks filtered (rh_filt) it may still
	 * claim: its CPU time pays for them as for lost ones, and
	 * DTI_BUDGET_LAG at attach for those made before a tick shows;
	 * apart from dp_budget, so that filtering never shortens the
	 * account of what was lost.
	 */
	uint64_t		 dp_fbudget;
	uint64_t		 dp_filt_total;	/* [D] last seen rh_filt_total */
	uint32_t		 dp_filt[DT_SYS_NPROBES];	/* [D] */
	uint32_t		 dp_count[DT_SYS_NPROBES];	/* [D] rh_count */
	/* [S] its slots' readings (dt_ingest_sagg.c), NULL: none yet */
	struct dti_sagg_shadow	*dp_sagg[UDT_SAGG_NSPEC];
	/* [S] and of its keyed entries, UDT_SAGG_NKENT, NULL: none yet */
	struct dti_sagg_kshadow	*dp_skent;
	/*
	 * [S] slots with an entry left for a stack not ready: their
	 * entries are read again at the next look, moved or not
	 */
	uint32_t		 dp_sagg_skip;
	/*
	 * [S] its last merge made (dti_sagg_leave()): no look after it, in
	 * case its process still folds (a ring retired while it lives)
	 * into a slot given back and taken anew meanwhile
	 */
	bool			 dp_sagg_last;
	/*
	 * [a] no longer the image that attached (dt_ingest_image_ok()):
	 * nothing more of it is folded, counts nor tables; set by the
	 * drain thread, or by a reader's stop giving a slot back
	 */
	atomic_bool		 dp_imagebad;
	uint32_t		 dp_plost;	/* [D] profile samples */
	uint32_t		 dp_precur;	/* [D] */
	struct dt_pm_track	 dp_maps;	/* [I] then [D]: its mappings */
	struct dti_tid		 dp_tids[DTI_NTIDS];	/* [I] then [D] */
	unsigned int		 dp_tidnext;	/* [D] next entry to replace */
	bool			 dp_foreign;	/* [I] another pid namespace */
	char			 dp_comm0[UDT_COMMLEN];	/* [I] at attach */
	uint64_t		 dp_misnamed;	/* [D] records discarded */
	/*
	 * Exec holds (dt_ingest_exec.c).  dp_xraw: the stamp of the
	 * announce this image inherited (its exec), [I] then [D], 0 when
	 * none; dp_xsince: when the drain first held for it.  dp_oraw,
	 * dp_osince: each of its ring's announces (rh_exec) as last seen,
	 * and since when.
	 */
	uint64_t		 dp_xraw;
	uint64_t		 dp_xsince;	/* [D] CLOCK_MONOTONIC */
	uint64_t		 dp_oraw[UDT_EXEC_NANN];	/* [D] */
	uint64_t		 dp_osince[UDT_EXEC_NANN];	/* [D] */
	uint64_t		 dp_pass;	/* [D] the last pass that drained it */
};

struct dti_stats {
	atomic_uint_fast64_t	attached, records, lost, recur;
	atomic_uint_fast64_t	adopted, refused;
	atomic_uint_fast64_t	forged;	/* lost/recur claims over budget */
	/*
	 * Garbage (dti_garbage(), their sum): slots given up by their
	 * producers (void), skipped uncommitted (of them, claimed by a
	 * thread: UDT_SEQ_BUSY), records not valid, rings discarded.
	 */
	atomic_uint_fast64_t	gvoid, gstuck, gclaimed, ginvalid, gdiscard;
	atomic_uint_fast64_t	misnamed;	/* records naming another
						   process's thread */
	atomic_uint		procs;
};
extern struct dti_stats	dti_stats;	/* [a] */

/* The garbage counted so far, of every kind.  Any thread. */
static inline uint64_t
dti_garbage(void)
{
	return atomic_load(&dti_stats.gvoid) + atomic_load(&dti_stats.gstuck) +
	    atomic_load(&dti_stats.ginvalid) + atomic_load(&dti_stats.gdiscard);
}

/*
 * Exec holds.  dti_exec_inherit(): at dp's attach, under [L], with op
 * each proc already listed: dp takes over the exec op's ring announces
 * for dp's pid (its own older image's, or a vfork child's that shared
 * op's ring).  dti_exec_look(): the drain thread, for each listed proc
 * before its drain: the CLOCK_REALTIME time before which its records
 * may still come (an exec on its way, or a new image whose loader's
 * records are not in yet), UINT64_MAX when none.  drained: the pass
 * drains dp right after; else its library's rh_ready does not end the
 * hold (the loader's records are in its ring, not taken yet).
 */
void	dti_exec_inherit(struct dti_proc *dp, struct dti_proc *op);
uint64_t dti_exec_look(struct dti_proc *dp, uint64_t rt, uint64_t now,
	    bool drained);

/*
 * Run fn on every listed proc under the ingest lock, as dti_tabs_apply()
 * runs on their tables.  Any thread but one holding that lock.
 */
void	dti_procs_apply(void (*fn)(struct dti_proc *, void *), void *arg);

/*
 * Aggregations in the tracees (dt_ingest_sagg.c).  dti_sagg_copy(): the
 * master's slots into a new tracee's table, under the ingest lock.
 * dti_sagg_take(): merge what dp's tracee folded since the last look
 * into the opens' tables; the drain thread (dti_counters()).
 */
void	dti_sagg_copy(struct udt_tab *tab);
void	dti_sagg_take(struct dti_proc *dp);
/*
 * Whether dp's tracee folded anything into its table since the last
 * look (a slot's count moved, or entries wait).  The drain thread.
 */
bool	dti_sagg_moved(struct dti_proc *dp);
/*
 * Retire dp, saying why once, and count n things of it discarded
 * (records, or calls counted in its header).  The drain thread.
 */
void	dti_discard(struct dti_proc *dp, const char *why, uint64_t n);
#define DTI_WHY_IMAGE	"is no longer the image that attached (a set-id exec?)"
/*
 * dp's process is gone, its last look taken: what its entries still
 * wait for (dp_sagg_skip) never comes, and is counted as dropped.  The
 * drain thread, dp unlisted.
 */
void	dti_sagg_gone(struct dti_proc *dp);
/*
 * dti_sagg_enter(): before the drain thread unlists gone procs, true
 * when a slot is in use, [S] then held.  dti_sagg_leave(): the last
 * merge of each of gone (linked by dp_next, unlisted meanwhile), then
 * [S] released; a stop's last merge (dt_ingest_sagg_give()) walks the
 * list only, and would miss a proc between the two.  The drain thread,
 * no lock held at enter; the procs' processes ended or exec'd.
 */
bool	dti_sagg_enter(void);
void	dti_sagg_leave(struct dti_proc *gone);
/* dp's readings, when it is freed: the drain thread, dp unlisted. */
void	dti_sagg_free(struct dti_proc *dp);

/*
 * A new proc's counter budget, from its CPU time so far, cpu, in clock
 * ticks (dt_ingest_ctr.c).  [I], before it is linked.
 */
void	dti_budget_init(struct dti_proc *, uint64_t cpu);
/*
 * Take what dp's tracee says it lost or counted as recursive since the
 * last look into the opens' dropevt and recurevt, as far as its budget
 * goes.  The drain thread.
 */
void	dti_counters(struct dti_proc *);
/*
 * The drain gave up on slot s of dp's ring (already past dp_tail): its
 * producer reserved it and never committed (stopped for UDT_STUCK_NSEC,
 * or gone).  The event it was to hold is lost: charged to the dropevt
 * of the opens recording its probe, within dp's budget.  The drain
 * thread.
 */
struct udt_rec;
void	dti_abandoned(struct dti_proc *dp, const struct udt_rec *s);
/*
 * Whether the drain waits more for dp's stuck slot s, claimed by a
 * thread (UDT_SEQ_BUSY), the ring's head at head, at now (monotonic ns):
 * dt_ingest_claim.c.  The drain thread.
 */
bool	dti_claim_waits(struct dti_proc *dp, const struct udt_rec *s,
	    uint64_t head, uint64_t now);
/*
 * Whether the last look at dp's stuck slot, within DTI_CLAIM_LOOK_NS,
 * found its claimer running: the drain waits on without reading the
 * ring's head (the producers' hot line).  The drain thread.
 */
bool	dti_claim_cached(const struct dti_proc *dp, uint64_t now);

/*
 * Does process pid, held by pidfd (or -1), still run the image uid and
 * gid connected with (its real gid rgid then being a group it may take
 * again without privilege)?  False when it exec'd a set-id (or capable)
 * program since, so its records could be another's word; gone_ok: a process
 * that is gone, reaped, its pid perhaps another's now, answers true
 * (its final records were committed before it exited).  Any thread.
 */
bool	dt_ingest_image_ok(pid_t pid, uid_t uid, gid_t gid, gid_t rgid,
	    int pidfd, bool gone_ok);
/*
 * Whether the process of pidfd was reaped, so that its pid may be
 * another's: what a look at /proc/PID saw before the call was its own
 * if not.  false for a zombie, or without a pidfd (-1).  Any thread.
 */
bool	dti_reaped(int pidfd);

/*
 * Emit the nb valid records in batch, copied from dp's ring, if
 * dt_ingest_image_ok(), dti_image_same() and dti_image_holds() still
 * hold; else discard them as garbage and retire dp (dt_ingest_rec.c).
 * The drain thread.
 */
struct udt_rec;
void	dti_flush(struct dti_proc *dp, struct udt_rec *batch,
	    const struct udt_rec_str *bstr, const uint8_t *bhas,
	    const struct dti_deep *bdeep, unsigned int nb, int final);

/*
 * Who a record says wrote it (dt_ingest_who.c).  dti_who_init(): [I],
 * before dp is linked; notes dp's pid namespace, and comm0, the
 * process's comm as /proc/PID/stat said it while it waits for its
 * welcome (NULL: it could not be read).  dti_who():
 * false when r's tid is a live thread of another process (counted in
 * misnamed, logged once per proc: never emit it); else true, with r's
 * comm, if it carries one, replaced by dtd's reading of the thread's
 * (unless the thread was gone when first seen), and *pidp the pid to
 * stamp: dp's, or a vfork child's own (see there).
 * dti_pass: the drain pass, which bounds the rereads of a comm to one a
 * pass per thread; dti_nbatch: the batch being flushed, after whose copy
 * a child's sharing of dp's memory is looked at.  The drain thread.
 */
extern uint64_t	dti_pass;	/* [D] */

/*
 * Count-only probes (UDT_EN_COUNT): how many have it now ([L] writes,
 * [a] reads), and whether the last one lost it since the drain looked
 * ([a]): the drain then reads the tracees' rh_count a while longer, for
 * what was counted just before.
 */
extern atomic_uint	dti_ncounting;
extern atomic_int	dti_count_ended;
/*
 * Syscall probes on now ([L] writes, [a] reads): told to a launcher
 * that asks (UDT_HELLO_STATS), which follows its command's loader only
 * when some are.
 */
extern atomic_uint	dti_nsysenab;
extern uint64_t	dti_nbatch;	/* [D] */
void	dti_who_init(struct dti_proc *, const char *comm0);
/*
 * Whether dp's process still runs the image that attached and maps dp's
 * ring (rh_self, rh_proof in udt_wire.h), judged by a look at its memory
 * that begins after the call: DTI_V_SAME; DTI_V_EXEC, it exec'd since
 * (its memory ended while it runs on); DTI_V_UNHELD, its image never
 * showed the ring (it exec'd before dtd opened its memory);
 * DTI_V_LATER, no answer yet: the look runs on the worker of dp's user,
 * and the next call (wait false) takes its answer.  wait: wait for it up
 * to DTI_LOOK_WAIT_NS, unless that user's worker is stuck already.
 * Procs without a memory descriptor (root's) are always DTI_V_SAME.  The
 * drain thread, after copying records and before emitting them.
 */
enum dti_verdict { DTI_V_SAME, DTI_V_EXEC, DTI_V_UNHELD, DTI_V_LATER };
#define DTI_LOOK_WAIT_NS	2000000ULL
enum dti_verdict	dti_image_look(struct dti_proc *, bool wait);
/*
 * The looks' queue: dti_look_begin() in dt_ingest_begin() (0 or ENOMEM),
 * dti_look_end() in dt_ingest_end() after the drain thread ended (a
 * worker stuck in a look keeps its dti_chk and nothing else).
 * dti_chk_new(): dp's, taking dp_memfd and mapsfd, /proc/PID/maps opened
 * with it (NULL: out of memory; they are then still the caller's);
 * ringfd: dp's ring.  dti_chk_put(): drop a reference.  Any thread.
 */
int	dti_look_begin(void);
void	dti_look_end(void);
struct dti_chk	*dti_chk_new(struct dti_proc *, int mapsfd, int ringfd);
void	dti_chk_put(struct dti_chk *);
/*
 * Wake the drain thread if it sleeps (dt_ingest_drain.c).  Any thread,
 * any lock but its idle lock held.
 */
void	dti_kick(void);
/*
 * The set the drain thread sleeps in (dt_ingest_drain.c):
 * dti_wait_begin() in dt_ingest_begin() before the drain thread starts
 * (0 or an errno; made once, kept for dtd's life).  dti_wait_exit():
 * wake the drain once when the process of pidfd ends; any thread, for
 * a pidfd that stays open until its proc is freed (closing it takes it
 * out of the set).  false when it will not (no set, no memory): the
 * exit is then found only by the reap of a pass, which a kick starts.
 */
int	dti_wait_begin(void);
bool	dti_wait_exit(int pidfd);

/*
 * fn(NULL, arg) for dtd's master copy, then fn(tab, arg) for the table
 * of every attached tracee, under the ingest lock, as the enable bytes
 * are written; dti_filt_copy() gives a table the master's filters
 * (dt_ingest_filt.c), under the same lock as it is listed.
 */
void	dti_tabs_apply(void (*fn)(struct udt_tab *, void *), void *arg);
void	dti_filt_copy(struct udt_tab *);
/*
 * memcpy() into a table memfd just made, all zeros (dt_ingest_serve.c),
 * that leaves its pages alone where src is all zeros: each page written
 * costs a fault and a page dtd frees again at the tracee's exit, and
 * with nothing pushed most of a table stays zeros.  Any thread, for a
 * table no tracee has yet.
 */
void	dti_copy_fresh(void *dst, const void *src, size_t len);

/*
 * A proc's ring and table are mapped in dtd as one span, the table at
 * dti_ringspan() (the ring's size, to a whole page), so that freeing it
 * takes one munmap() of dti_span() bytes.  Any thread.
 */
static inline size_t
dti_ringspan(uint32_t nslots)
{
	size_t page = (size_t)getpagesize();

	return ((size_t)UDT_RING_SIZE(nslots) + page - 1) & ~(page - 1);
}

static inline size_t
dti_span(uint32_t nslots)
{
	return dti_ringspan(nslots) + UDT_TAB_SIZE;
}

/*
 * A ring and table for one tracee (dt_ingest_spare.c): the span mapped
 * in dtd (dti_span(), the table at dti_ringspan()), the ring's and the
 * table's memfds and the table's read-only descriptor.
 */
struct dti_rt {
	void		*rt_span;
	uint32_t	 rt_nslots;
	int		 rt_ringfd;
	int		 rt_tabfd;
	int		 rt_rofd;
};

/*
 * dti_rt_take(): a fresh pair into rt, the spare if one was made, else
 * made now; 0, or -1 with nothing held.  dti_rt_refill(): have the
 * spare made if there is none, by a thread at SCHED_IDLE (started at the
 * first call), after a welcome: its calls then cost no tracee its wait.
 * dti_rt_free(): let a pair go (unmapped, closed).  dti_rt_drop(): stop
 * that thread and let the spare go, at the ingest's end, after the serve
 * workers.  Any thread; the spare is under a lock of its own, never held
 * across a system call but the maker's condition wait.
 */
int	dti_rt_take(struct dti_rt *);
void	dti_rt_refill(void);
void	dti_rt_free(struct dti_rt *);
void	dti_rt_drop(void);
/*
 * A batch held for its look (dt_ingest_rec.c): settle it once the look
 * answered; false while it waits (dp's ring is not drained meanwhile).
 * final: the proc is about to be freed, so a batch still waiting is
 * discarded.  dti_held_free(): drop one unsettled.  The drain thread.
 */
bool	dti_held_settle(struct dti_proc *, int final);
void	dti_held_free(struct dti_held *);
/*
 * How long a held batch may keep the drain's mark behind it: well
 * within the sequencer's D, for the held batch pins every source's
 * events for every reader while it does.  Past it, or once the user's
 * look worker is stuck (dti_look_stuck()), the mark goes on without it
 * and its records come late, counted: a look that a user's FUSE page
 * can stall forever costs that user's events their order, not the
 * others their latency.
 */
#define DTI_HELD_MARK_NS	20000000ULL
/*
 * The oldest stamp the drain's mark must stay behind for dp's held
 * batch, at monotonic time now: the batch's (taken when it was held)
 * and that of the record at its ring's tail, not drained meanwhile.
 * 0: nothing held, nothing to order by, or no longer honoured.  [D]
 */
uint64_t	dti_held_rt(const struct dti_proc *, uint64_t now);
/* Whether dp's user's look worker is stuck in a look.  Any thread. */
bool	dti_look_stuck(const struct dti_proc *);
/* dt_ingest_drain.c: a valid record's realtime stamp, in ns.  [D] */
uint64_t	dti_rec_rt(const struct udt_rec *);
/*
 * dt_ingest_drain.c: whether ticket t of dp's ring is committed (or given
 * up); with ns, the stamp of the record there if valid, else 0.  [D]
 */
bool	dti_committed(const struct dti_proc *, uint64_t t, uint64_t *ns);
bool	dti_who(struct dti_proc *, struct udt_rec *, pid_t *);
/*
 * Whether tid may be one of dp's writers: its thread, or (*kid) a child
 * sharing its memory (dt_ingest_who.c).  Records and folded keys alike.
 */
bool	dti_tid_ours(const struct dti_proc *dp, pid_t tid, bool *kid);

#endif /* DT_INGEST_VAR_H */
