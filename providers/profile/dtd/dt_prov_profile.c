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
 * The profile provider: one probe, profile:hz:97, whose label is fixed
 * as in dt(4); the real period comes with DTIOCPRBENABLE in dtrq_nsecs.
 * Enabling it creates one pcb per CPU, each sampling its own CPU.
 *
 * While a pcb records, a perf CPU-clock event on its CPU with its period
 * feeds it (dt_perf.c), so opens sampling at different rates each get
 * their own.
 *
 * In timer mode (dt_ptimer.h: perf refused, or --profile timer) the
 * traced processes sample themselves instead, one CPU-time timer per
 * thread, and one period serves every open: the smallest of the
 * recording pcbs, since a thread has one timer.  An open asking for a
 * longer period gets every sample whose accumulated CPU time on its CPU
 * reaches its period (dt_ptimer_put), so each open still sees about one
 * event per period of CPU time per CPU, at the granularity of the
 * smallest period.
 *
 * Locks used to protect variables in this file:
 *	[K]	the core's configuration lock (every dtpv_* callback)
 *	[D]	the ingest drain thread (dt_ptimer_put), under RCU
 *	[a]	atomic operations
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_perf.h"
#include "dt_ingest.h"
#include "dt_ptimer.h"
#include "dt_dev.h"
#include "dt_prov.h"

/* A pcb's state in timer mode, on dp_priv (perf mode hangs its own). */
struct dt_ptimer_pcb {
	bool		dtp_started;	/* [K] between dtpv_start and stop */
	uint64_t	dtp_acc;	/* [D] CPU time owed, ns */
};

static int	dt_prov_profile_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	dt_ptimer_update(struct dt_pcb *, bool);
static void	dt_prov_profile_start(struct dt_pcb *);
static void	dt_prov_profile_stop(struct dt_pcb *);
static void	dt_prov_profile_free(struct dt_pcb *);
static void	dt_prov_profile_fini(void);

static const struct dt_provider dt_prov_profile = {
	.dtpv_name	= "profile",
	.dtpv_alloc	= dt_prov_profile_alloc,
	.dtpv_start	= dt_prov_profile_start,
	.dtpv_stop	= dt_prov_profile_stop,
	/* Perf mode: a pcb is stopped before it is freed, dp_priv NULL. */
	.dtpv_free	= dt_prov_profile_free,
	.dtpv_fini	= dt_prov_profile_fini,
};

static int	dt_prov_profile_lasterr;	/* [K] last error reported */
static struct dt_probe *dt_prov_profile_probe;	/* [I] after init */
static atomic_bool dt_ptimer_on;		/* [a] set once at start */
static uint64_t	dt_ptimer_cur;			/* [K] period tracees use */

int
dt_prov_profile_init(void)
{
	if ((dt_prov_profile_probe = dt_dev_alloc_probe("hz", "97",
	    &dt_prov_profile, 0)) == NULL)
		return -1;
	return 1;
}

static int
dt_prov_profile_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	struct dt_pcb *dp;
	unsigned int cpu;

	if (dtrq->dtrq_nsecs < DT_TIMER_NSECS_MIN ||
	    dtrq->dtrq_nsecs > DT_TIMER_NSECS_MAX)
		return EINVAL;
	for (cpu = 0; cpu < dt_dev_ncpus(); cpu++) {
		/* close frees what was made */
		if ((dp = dt_pcb_alloc(dtp, sc, dtrq->dtrq_evtflags &
		    (DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK |
		    DTEVT_DEEPSTACK),
		    dtrq->dtrq_nsecs, (int)cpu)) == NULL)
			return ENOMEM;
		/* Timer mode's state, before DTIOCRECORD publishes dp. */
		if (dt_ptimer_enabled() && (dp->dp_priv = calloc(1,
		    sizeof(struct dt_ptimer_pcb))) == NULL)
			return ENOMEM;
	}
	return 0;
}

void
dt_ptimer_enable(void)
{
	atomic_store(&dt_ptimer_on, true);
	dt_ingest_sink_samples(dt_ptimer_put, dt_ptimer_count);
}

bool
dt_ptimer_enabled(void)
{
	return atomic_load_explicit(&dt_ptimer_on, memory_order_relaxed);
}

/*
 * Timer mode, dtpv_start (on) or dtpv_stop (off) of dp, under [K]: mark
 * dp and give the tracees the smallest period of the started pcbs, or 0
 * when none is left.  Stops run for every pcb of an open before any is
 * unlinked, hence the per-pcb mark rather than list membership.
 */
static void
dt_ptimer_update(struct dt_pcb *dp, bool on)
{
	struct dt_ptimer_pcb *tp = dp->dp_priv;
	struct dt_pcb *odp;
	uint64_t min = 0;

	tp->dtp_started = on;
	cds_list_for_each_entry(odp, &dp->dp_dtp->dtp_pcbs, dp_pnext) {
		tp = odp->dp_priv;
		if (!tp->dtp_started)
			continue;
		if (min == 0 || odp->dp_nsecs < min)
			min = odp->dp_nsecs;
	}
	if (min != dt_ptimer_cur) {
		dt_ptimer_cur = min;
		dt_ingest_ptimer_set(min);
	}
}

/*
 * The drain thread's put, in time order through the sequencer (the
 * drain's marks cover it: NULL, its source is the ingest's).  A pcb whose period is the tracee's takes
 * every sample; one with a longer period takes a sample each time the
 * CPU time the samples stand for reaches its period, and counts the
 * further periods that time covered as skipped ticks.
 */
void
dt_ptimer_put(unsigned int cpu, const struct dt_evt *ev, uint64_t missed,
    uint64_t period)
{
	struct dt_ptimer_pcb *tp;
	struct dt_pcb *dp;
	uint64_t due, span;

	if (dt_prov_profile_probe == NULL)
		return;
	/* Both come from a tracee: saturate rather than wrap. */
	if (__builtin_mul_overflow(period, missed + 1, &span))
		span = UINT64_MAX;
	rcu_read_lock();
	cds_list_for_each_entry_rcu(dp, &dt_prov_profile_probe->dtp_pcbs,
	    dp_pnext) {
		if (dp->dp_cpu != (int)cpu)
			continue;
		/* Set before dp was published (dt_prov_profile_alloc). */
		tp = dp->dp_priv;
		if (dp->dp_nsecs <= period) {
			dt_seq_put(NULL, dp, cpu, ev);
			if (missed > 0)
				dt_pcb_count_skiptick(dp, cpu, missed);
			continue;
		}
		if (__builtin_add_overflow(tp->dtp_acc, span, &tp->dtp_acc))
			tp->dtp_acc = UINT64_MAX;
		if (tp->dtp_acc < dp->dp_nsecs)
			continue;
		due = tp->dtp_acc / dp->dp_nsecs;
		tp->dtp_acc -= due * dp->dp_nsecs;
		dt_seq_put(NULL, dp, cpu, ev);
		if (due > 1)
			dt_pcb_count_skiptick(dp, cpu, due - 1);
	}
	rcu_read_unlock();
}

void
dt_ptimer_count(uint64_t n, bool recursive)
{
	struct dt_pcb *dp;

	if (dt_prov_profile_probe == NULL)
		return;
	rcu_read_lock();
	cds_list_for_each_entry_rcu(dp, &dt_prov_profile_probe->dtp_pcbs,
	    dp_pnext) {
		/* Once per open: its CPU 0 pcb. */
		if (dp->dp_cpu != 0)
			continue;
		if (recursive)
			dt_pcb_count_recurevt(dp, 0, n);
		else
			dt_pcb_count_dropevt(dp, 0, n);
	}
	rcu_read_unlock();
}

/*
 * DTIOCRECORD on, under [K].  dt(4) cannot fail here either, so an event
 * that will not open leaves the pcb silent; say why once per cause, not
 * per CPU.  An offline CPU (ENODEV) simply has nothing to sample.
 */
static void
dt_prov_profile_start(struct dt_pcb *dp)
{
	int error;

	if (dt_ptimer_enabled()) {
		dt_ptimer_update(dp, true);
		return;
	}
	if ((error = dt_perf_start(dp)) == 0 || error == ENODEV)
		return;
	if (error != dt_prov_profile_lasterr)
		fprintf(stderr, "dtd: profile: cpu %d: cannot sample: %s\n",
		    dp->dp_cpu, strerror(error));
	dt_prov_profile_lasterr = error;
}

/* DTIOCRECORD off or close, under [K], before the pcb is unlinked. */
static void
dt_prov_profile_stop(struct dt_pcb *dp)
{
	if (dt_ptimer_enabled())
		dt_ptimer_update(dp, false);
	else
		dt_perf_stop(dp);
}

/*
 * Under [K] after a grace period: no drain thread can still be in
 * dt_ptimer_put() with this pcb.  Perf mode left dp_priv NULL.
 */
static void
dt_prov_profile_free(struct dt_pcb *dp)
{
	if (dt_ptimer_enabled()) {
		free(dp->dp_priv);
		dp->dp_priv = NULL;
	}
}

/* dt_dev_fini(): every open is closed, so every sampler is stopped. */
static void
dt_prov_profile_fini(void)
{
	dt_perf_shutdown();
}
