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
 * The syscall provider: syscall:sys%N:entry and syscall:sys%N:return for
 * every call in the generated systab, in N order (design decision 5).
 * Events come from the preload library in traced processes through
 * dt_ingest.c, and from the kernel's system call tracepoints for every
 * other process (dt_ksys.h, fed by the tracepoint provider; which
 * processes are whose: dt_sys_kern.c); this file registers the probes
 * and turns DTIOCRECORD into enable bytes in the tracees' tables and
 * into the kernel feed's set of calls.
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_prov_syscall_init() during dt_dev_init()
 *	[s]	dt_sys_mtx
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <userdt/udt_sagg.h>
#include <userdt/udt_wire.h>

#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_ksys.h"
#include "dt_sys_agg.h"
#include "dt_sys_filt.h"
#include "dt_sys_kern.h"

/*
 * dt(4) masks syscall requests to the common flags and FUNCARGS; ours
 * keeps userdt's DTEVT_STRINGS, DTEVT_LOSSLESS, DTEVT_LAUNCHED,
 * DTEVT_DEEPSTACK and DTEVT_TREE too (dtvar.h).
 */
#define DT_SYS_EVTFLAGS	\
	(DTEVT_EXECNAME | DTEVT_USTACK | DTEVT_KSTACK | DTEVT_FUNCARGS | \
	 DTEVT_STRINGS | DTEVT_LOSSLESS | DTEVT_LAUNCHED | DTEVT_DEEPSTACK | \
	 DTEVT_TREE)

/*
 * The enable byte's bit for each counted set of flags (KSTACK: none),
 * set while a started pcb asks for all of the set's.
 */
static const struct {
	uint64_t	evt;
	uint8_t		en;
} dt_sys_flags[] = {
	{ DTEVT_EXECNAME, DTEVT_EXECNAME },
	{ DTEVT_USTACK, DTEVT_USTACK },
	{ DTEVT_KSTACK, 0 },
	{ DTEVT_FUNCARGS, DTEVT_FUNCARGS },
	{ DTEVT_STRINGS, UDT_EN_STR },
	/* Deep user stacks: the hooks walk further (udt_wire.h). */
	{ DTEVT_USTACK | DTEVT_DEEPSTACK, UDT_EN_DEEP },
	/* Not a probe's: the tracees' tb_lossless, while any pcb asks. */
	{ DTEVT_LOSSLESS, 0 },
};
#define DT_SYS_NFLAGS	(sizeof(dt_sys_flags) / sizeof(dt_sys_flags[0]))

static struct dt_probe	*dt_sys_probes[DT_SYS_NPROBES];	/* [I] */

static pthread_mutex_t	 dt_sys_mtx = PTHREAD_MUTEX_INITIALIZER;
static unsigned int	 dt_sys_nrec[DT_SYS_NPROBES];	/* [s] started pcbs */
/* [s] started pcbs asking for each DTEVT_* bit */
static unsigned int	 dt_sys_nflag[DT_SYS_NPROBES][DT_SYS_NFLAGS];
static unsigned int	 dt_sys_nlossless;	/* [s] started, LOSSLESS */
/* [s] started pcbs that only count (dt_pcb_count_only()) */
static unsigned int	 dt_sys_ncount[DT_SYS_NPROBES];
/*
 * [s] started pcbs whose aggregations the hooks fold (dt_sys_agg.c),
 * and the union of their slots; a pcb's own slots on its dp_priv.
 */
static unsigned int	 dt_sys_nagg[DT_SYS_NPROBES];
static uint32_t		 dt_sys_amask[DT_SYS_NPROBES];
/* [s] started pcbs that take no kernel event (DTEVT_LAUNCHED) */
static unsigned int	 dt_sys_nlaunched[DT_SYS_NPROBES];
/* [s] its pcbs whose kernel part a kernel program counts (dp_knot) */
static unsigned int	 dt_sys_nkbpf[DT_SYS_NPROBES];
/* [s] set, [a] read: every pcb recording it is one of those */
static atomic_bool	 dt_sys_kall[DT_SYS_NPROBES];
/*
 * [s] started pcbs folding the durations of a call's returns
 * (DTF_LAT), by call: its entry probe is then marked for the hooks'
 * stamps (udt_sagg.h), whether or not an open records it.
 */
static unsigned int	 dt_sys_nlat[DT_SYS_NPROBES / 2];

static int	dt_prov_syscall_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static int	dt_sys_index(const struct dt_pcb *);
static void	dt_prov_syscall_start(struct dt_pcb *);
static void	dt_prov_syscall_stop(struct dt_pcb *);

static const struct dt_provider dt_prov_syscall = {
	.dtpv_name	= "syscall",
	.dtpv_alloc	= dt_prov_syscall_alloc,
	.dtpv_start	= dt_prov_syscall_start,
	.dtpv_stop	= dt_prov_syscall_stop,
};

/* The ingest transport's sink: [I] once init ran, any thread. */
static struct dt_probe *
dt_syscall_probe(unsigned int p)
{
	return p < DT_SYS_NPROBES ? dt_sys_probes[p] : NULL;
}

/*
 * dt_ingest_sink_kcopied()'s kall: every open recording p has it
 * counted by the kernel program (dt_sys_kall); the drain thread.
 * Where another open records p too, the records are kept and the
 * program's open counts a launched image's loader calls, and all of a
 * tracee's in another pid namespace, twice (doc/design.md).
 */
static bool
dt_sys_kall_p(unsigned int p)
{
	return p < DT_SYS_NPROBES &&
	    atomic_load_explicit(&dt_sys_kall[p], memory_order_relaxed);
}

int
dt_prov_syscall_init(void)
{
	struct dt_probe *dtp;
	char func[DTNAMESIZE];
	unsigned int i;

	_Static_assert(DT_SYS_NPROBES <= UDT_PROBE_PROFILE, "enable table");
	for (i = 0; i < SYSTAB_COUNT; i++) {
		snprintf(func, sizeof(func), "sys%%%u", systab[i].se_num);
		dtp = dt_dev_alloc_probe(func, "entry", &dt_prov_syscall,
		    systab[i].se_nargs);
		if (dtp == NULL)
			goto nomem;
		dtp->dtp_sysnum = systab[i].se_num;
		dtp->dtp_priv = (void *)(uintptr_t)(2 * i);
		/* Entry arguments only for pcbs that asked for FUNCARGS. */
		dtp->dtp_argsflag = DTEVT_FUNCARGS;
		dtp->dtp_strings = true;
		dt_sys_probes[2 * i] = dtp;

		dtp = dt_dev_alloc_probe(func, "return", &dt_prov_syscall, 0);
		if (dtp == NULL)
			goto nomem;
		dtp->dtp_sysnum = systab[i].se_num;
		dtp->dtp_priv = (void *)(uintptr_t)(2 * i + 1);
		/* Return values are always there, as in dt(4). */
		dtp->dtp_argsflag = 0;
		dtp->dtp_lat = true;
		dt_sys_probes[2 * i + 1] = dtp;
	}
	dt_ingest_sink_probes(dt_syscall_probe);
	dt_ksys_owner(dt_sys_kern_traced, dt_sys_kern_exec);
	dt_ksys_tree_owner(dt_sys_index);
	/* Told of each tracee as it comes and goes, when the kernel feeds. */
	if (dt_ksys_scope_all()) {
		dt_ingest_sink_attach(dt_sys_kern_attach);
		dt_ingest_sink_exit(dt_sys_kern_exit);
		dt_ingest_sink_kcopied(dt_sys_kall_p, dt_sys_kern_before);
	}
	return DT_SYS_NPROBES;
nomem:
	errno = ENOMEM;
	return -1;
}

static int
dt_prov_syscall_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	uint64_t flags = dtrq->dtrq_evtflags & DT_SYS_EVTFLAGS;

	/*
	 * The tree's calls no hook records, from the kernel (dtvar.h):
	 * on an open with a tree, where the kernel feed knows the hooks'
	 * processes.  The hooks' events and those alone: never the
	 * system-wide feed's too, which would count the tree's twice.
	 */
	if (flags & DTEVT_TREE) {
		if (dt_sc_tree(sc) == 0)
			return EINVAL;
		if (!dt_ksys_tree_can())
			return EOPNOTSUPP;
		flags |= DTEVT_LAUNCHED;
	}
	if (dt_pcb_alloc(dtp, sc, flags, 0, -1) == NULL)
		return ENOMEM;
	return 0;
}

/* dt_ksys_index_fn: the wire index of a tree's syscall pcb.  [K] */
static int
dt_sys_index(const struct dt_pcb *dp)
{
	if (dp->dp_dtp->dtp_prov != &dt_prov_syscall ||
	    !(dp->dp_evtflags & DTEVT_TREE))
		return -1;
	return (int)(uintptr_t)dp->dp_dtp->dtp_priv;
}

/*
 * Probe p's enable byte from its opens' counts, with the slots its
 * events fold into (*amask) and the kernel feed's flags.  [s]
 */
static uint8_t
dt_sys_en(unsigned int p, uint32_t *amask, uint64_t *evtflags)
{
	uint8_t en = 0;
	size_t i;

	*amask = 0;
	*evtflags = 0;
	if (dt_sys_nrec[p] > 0) {
		en = UDT_EN_ON;
		for (i = 0; i < DT_SYS_NFLAGS; i++)
			if (dt_sys_nflag[p][i] > 0) {
				en |= dt_sys_flags[i].en;
				*evtflags |= dt_sys_flags[i].evt;
			}
	}
	/*
	 * Every open that records it only counts: the hooks count in
	 * their rings' headers and record nothing (UDT_EN_COUNT).  The
	 * kernel's feed is unchanged: its events are folded one by one.
	 * What a kernel program may count too (a fork child's return, a
	 * vfork child's calls, dt_ingest_kseen()) the hooks record all the
	 * same (udt_emit(), udt_rw_entry.S), for the ingest to drop.
	 */
	if (dt_sys_nrec[p] > 0 && dt_sys_ncount[p] == dt_sys_nrec[p])
		en = UDT_EN_ON | UDT_EN_COUNT;
	/*
	 * Every open that records it folds only what the hooks can: they
	 * fold it into their slots (UDT_EN_AGG), or record as the other
	 * bits say when they cannot.  The slots are named before the byte
	 * says so, and no longer named before they are given back.  Not
	 * while a kernel program counts one of its pcbs (dt_sys_nkbpf):
	 * a foreign tracee's folds would pass no drop of what the program
	 * counts of it (all its calls), as its records do.
	 */
	else if (dt_sys_nrec[p] > 0 && dt_sys_nagg[p] == dt_sys_nrec[p] &&
	    dt_sys_nkbpf[p] == 0) {
		en |= UDT_EN_AGG;
		*amask = dt_sys_amask[p];
	}
	return en;
}

/*
 * Entry probe p of a call whose returns' durations are folded: the
 * stamp's mark, with UDT_SST_ONLY when no open records the entry, and
 * UDT_EN_AGG in its byte, which takes the hook to the stamp
 * (udt_sagg_stamp()); with UDT_EN_ON alone beside it, the hook records
 * nothing.  A new generation only when the mark comes or goes
 * (newgen): an open of the entry coming or going leaves the stamps of
 * the calls in flight good.  [s]
 */
static uint8_t
dt_sys_stamp(unsigned int p, uint8_t en, bool newgen)
{
	uint8_t flags = 0;

	if (p % 2 != 0 || p / 2 >= UDT_NPROBES_MAX / 2 ||
	    (dt_sys_nlat[p / 2] == 0 && !newgen))
		return en;
	if (dt_sys_nlat[p / 2] > 0) {
		flags = UDT_SST_STAMP;
		if (dt_sys_nrec[p] == 0) {
			flags |= UDT_SST_ONLY;
			en = UDT_EN_ON;
		}
		en |= UDT_EN_AGG;
	}
	dt_ingest_sagg_stamp(p / 2, flags, newgen);
	return en;
}

/*
 * The byte tracees test: on while any open records the probe, with the
 * union of what those opens want, so that a tracee only pays for the
 * stack, comm or strings when someone reads them.  KSTACK has no
 * user-space meaning and is left out.  The kernel feed gets the same
 * on/off and the union of the flags (the stacks it asks perf for), for
 * the processes no hook records (OpenBSD's syscall probes see every
 * process).  Called under the core's lock.
 */
static void
dt_sys_update(unsigned int p, struct dt_pcb *dp, int delta)
{
	uint64_t evtflags = 0;
	uint8_t en = 0;
	size_t i;

	uint32_t amask = 0, slots, eamask;
	uint64_t eflags;
	bool lat;

	pthread_mutex_lock(&dt_sys_mtx);
	if (delta > 0)
		dp->dp_priv = (void *)(uintptr_t)dt_sys_agg_take(dp);
	slots = (uint32_t)(uintptr_t)dp->dp_priv;
	/*
	 * A return's durations: its entry is stamped before the return
	 * folds, and no longer once it does not.  Folded in the hooks'
	 * slots or not (none free): a recorded return carries its
	 * duration, which dtd folds from the record.
	 */
	lat = p % 2 == 1 && dt_sys_agg_lat(dp);
	if (lat && delta > 0) {
		dt_sys_nlat[p / 2]++;
		en = dt_sys_en(p - 1, &eamask, &eflags);
		dt_ingest_enable(p - 1, dt_sys_stamp(p - 1, en,
		    dt_sys_nlat[p / 2] == 1));
	}
	if (slots != 0) {
		dt_sys_nagg[p] += delta;
		if (delta > 0)
			dt_sys_amask[p] |= slots;
		else
			dt_sys_amask[p] &= ~slots;
	}
	dt_sys_nrec[p] += delta;
	if (dt_pcb_count_only(dp))
		dt_sys_ncount[p] += delta;
	if (dp->dp_evtflags & DTEVT_LAUNCHED)
		dt_sys_nlaunched[p] += delta;
	for (i = 0; i < DT_SYS_NFLAGS; i++)
		if ((dp->dp_evtflags & dt_sys_flags[i].evt) ==
		    dt_sys_flags[i].evt)
			dt_sys_nflag[p][i] += delta;
	/*
	 * A pcb that only counts by the task (dt_pcb_kkey_ok()) may have
	 * its kernel part counted in the kernel: no record of it then.
	 * Before the byte: the ingest drops what the program counts too
	 * (dt_sys_kall) from the first record the byte lets a hook write.
	 */
	if (delta > 0 && !(dp->dp_evtflags & DTEVT_LAUNCHED) &&
	    dt_ksys_kcount(p, dp, true))
		dt_sys_nkbpf[p]++;
	else if (delta < 0 && atomic_load(&dp->dp_knot)) {
		(void)dt_ksys_kcount(p, dp, false);
		dt_sys_nkbpf[p]--;
	}
	atomic_store_explicit(&dt_sys_kall[p], dt_sys_nkbpf[p] > 0 &&
	    dt_sys_nkbpf[p] == dt_sys_nrec[p], memory_order_relaxed);
	en = dt_sys_en(p, &amask, &evtflags);
	en = dt_sys_stamp(p, en, false);
	/* What they all reject, the hooks need not record. */
	dt_sys_filt_update(p, dp->dp_dtp, delta < 0 ? dp : NULL);
	if (amask != 0)
		dt_ingest_sagg_probe(p, amask);
	dt_ingest_enable(p, en);
	if (amask == 0)
		dt_ingest_sagg_probe(p, 0);
	if (lat && delta < 0) {
		dt_sys_nlat[p / 2]--;
		en = dt_sys_en(p - 1, &eamask, &eflags);
		dt_ingest_enable(p - 1, dt_sys_stamp(p - 1, en,
		    dt_sys_nlat[p / 2] == 0));
	}
	if (delta < 0 && slots != 0) {
		dt_ingest_sagg_give(slots);
		dp->dp_priv = NULL;
	}
	/*
	 * The kernel's feed only for an open that takes its events: one
	 * that asked for the launched processes' alone never does, and a
	 * raw_syscalls event costs every call on the machine (a traced
	 * flat-out getppid loop paid ~450 ns a call for it).
	 */
	dt_ksys_set(p, dp->dp_dtp, dt_sys_nrec[p] > dt_sys_nlaunched[p] +
	    dt_sys_nkbpf[p], evtflags);
	/* A tree's: the kernel's events of its tree, its own feed's. */
	if (dp->dp_evtflags & DTEVT_TREE)
		dt_ksys_tree(p, dp, delta > 0);
	if (dp->dp_evtflags & DTEVT_LOSSLESS) {
		dt_sys_nlossless += delta;
		/* On before the first record can find a ring full. */
		if (dt_sys_nlossless == (delta > 0 ? 1u : 0u))
			dt_ingest_lossless(delta > 0);
	}
	pthread_mutex_unlock(&dt_sys_mtx);
}

static void
dt_prov_syscall_start(struct dt_pcb *dp)
{
	dt_sys_update((unsigned int)(uintptr_t)dp->dp_dtp->dtp_priv, dp, 1);
}

static void
dt_prov_syscall_stop(struct dt_pcb *dp)
{
	dt_sys_update((unsigned int)(uintptr_t)dp->dp_dtp->dtp_priv, dp, -1);
}
