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
 * The tracees' own counters: events their ring had no room for
 * (rh_lost) and events their hooks refused to record because they ran
 * inside another (rh_recur).  Nobody but the tracee sees those events,
 * so the counts are its word; they reach every reader's dropevt and
 * recurevt, so a hostile tracee must not make them say anything.  A lost
 * or recursive event is a hooked call the tracee made, which takes it
 * at least DTI_EVENT_NS of CPU: a tracee may claim no more of them than
 * its CPU time since it attached pays for.  What it claims beyond that
 * is counted as forged, never charged, until the budget its CPU time
 * earns later pays for it: a tracee that starts flat out (with its
 * rewrite plans cached) may lose and recurse before a tick of its CPU
 * shows, and those claims were true.  /proc counts CPU time in
 * ticks, and a tracee may be gone before dtd looks at all (dtd was
 * stopped while it ran): for that lag it may claim DTI_BUDGET_LAG more,
 * but nothing before the ring could have produced it.  A ring overflows
 * only once it held a whole ring of records, which dtd then takes, so
 * until dtd has taken nslots of them the tracee earns one claim per
 * record, and the rest of the lag only after (a free 2^20 for every new
 * tracee let a few hundred fake ones push a reader's dropevt past 300
 * million with no event at all).  The charge goes to the opens that
 * record the probe named, as dt(4) charges the probe's own opens.
 */
#include <string.h>

#include <urcu.h>
#include <urcu/rculist.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_proc.h"

#define DTI_EVENT_NS	10		/* CPU time of one hooked call, at
					   least (a vDSO clock_gettime
					   through its hook) */
#define DTI_BUDGET_LAG	(1ULL << 20)	/* claims before a tick shows, at
					   most one per record drained */
#define DTI_BUDGET_MAX	(1ULL << 40)	/* no overflow, ever */

static void
dti_budget_add(struct dti_proc *dp, uint64_t ticks)
{
	uint64_t add = ticks * (dt_proc_tick_ns() / DTI_EVENT_NS);

	if (ticks > DTI_BUDGET_MAX / (dt_proc_tick_ns() / DTI_EVENT_NS) ||
	    dp->dp_budget + add > DTI_BUDGET_MAX)
		dp->dp_budget = DTI_BUDGET_MAX;
	else
		dp->dp_budget += add;
	if (ticks > DTI_BUDGET_MAX / (dt_proc_tick_ns() / DTI_EVENT_NS) ||
	    dp->dp_fbudget + add > DTI_BUDGET_MAX)
		dp->dp_fbudget = DTI_BUDGET_MAX;
	else
		dp->dp_fbudget += add;
}

void
dti_budget_init(struct dti_proc *dp, uint64_t cpu)
{
	/* What it spent before it attached earns nothing. */
	dp->dp_cpu = cpu;
	dp->dp_budget = 0;
	dp->dp_fbudget = DTI_BUDGET_LAG;
	dp->dp_lag = DTI_BUDGET_LAG;
	dp->dp_paid_tail = dp->dp_tail0 = dp->dp_tail;
}

/*
 * Earn from the records dtd took since the last look: one claim each,
 * and once a whole ring of them came (the ring could have overflowed),
 * what is left of the lag.
 */
static void
dti_budget_records(struct dti_proc *dp)
{
	uint64_t n = dp->dp_tail - dp->dp_paid_tail;

	if (dp->dp_lag == 0)
		return;
	if (dp->dp_tail - dp->dp_tail0 >= dp->dp_nslots)
		n = dp->dp_lag;
	dp->dp_paid_tail = dp->dp_tail;
	if (n > dp->dp_lag)
		n = dp->dp_lag;
	dp->dp_lag -= n;
	dp->dp_budget += n;
}

/* Earn what dp's CPU time since the last look pays for. */
static void
dti_budget_refresh(struct dti_proc *dp)
{
	struct dt_proc_stat ps;

	/*
	 * A dead or exec'd tracee: what it earned stays.  A pidfd does not
	 * pin the pid: once the tracee is reaped its pid may be another
	 * process's, whose CPU time is not the tracee's to earn by; asked
	 * after the read, a tracee not reaped then held it at the read.
	 */
	if (dt_proc_stat(dp->dp_pid, &ps) != 0 || ps.ps_cpu <= dp->dp_cpu ||
	    dti_reaped(dp->dp_pidfd))
		return;
	dti_budget_add(dp, ps.ps_cpu - dp->dp_cpu);
	dp->dp_cpu = ps.ps_cpu;
}

/* Up to n of dp's claims, as far as its budget goes; the rest is owed. */
static uint64_t
dti_budget_take(struct dti_proc *dp, uint64_t n)
{
	if (n > dp->dp_budget) {
		dp->dp_owed = true;
		n = dp->dp_budget;
	}
	dp->dp_budget -= n;
	return n;
}

/* Charge n events of syscall probe p to every open recording it. */
static void
dti_charge(unsigned int p, uint64_t n,
    void (*count)(struct dt_pcb *, unsigned int, uint64_t))
{
	struct dt_probe *dtp;
	struct dt_pcb *pcb;

	if ((dtp = dti_probe_at(p)) == NULL)
		return;
	rcu_read_lock();
	cds_list_for_each_entry_rcu(pcb, &dtp->dtp_pcbs, dp_pnext)
		count(pcb, 0, n);
	rcu_read_unlock();
}

void
dti_charge_discarded(const struct udt_rec *batch, unsigned int nb)
{
	unsigned int i;

	for (i = 0; i < nb; i++)
		if (!(batch[i].ur_flags & UDT_R_PROF))
			dti_charge(batch[i].ur_probe, 1, dt_pcb_count_dropevt);
}

/*
 * How far a counter of the tracee moved since *last that its budget pays
 * for: *last follows as far as that, the rest is owed to a later look.
 * 0 when it did not move, or the step is too large to believe (forged).
 */
static uint32_t
dti_delta(struct dti_proc *dp, const uint32_t *ctr, uint32_t *last)
{
	uint32_t cur = __atomic_load_n(ctr, __ATOMIC_RELAXED);
	uint32_t delta = cur - *last, paid;

	if (delta >= DT_INGEST_DELTA_MAX) {
		*last = cur;
		atomic_fetch_add(&dti_stats.forged, delta);
		return 0;
	}
	paid = (uint32_t)dti_budget_take(dp, delta);
	*last += paid;
	dp->dp_owed_n += delta - paid;
	return paid;
}

/*
 * Events the tracee's hooks filtered since the last look (rh_filt): as
 * filtered for every open recording each probe, within dp_fbudget.
 */
static void
dti_filtered(struct dti_proc *dp)
{
	struct udt_ring_hdr *rh = dp->dp_ring;
	uint32_t cur, delta;
	uint64_t ft;
	unsigned int p;

	ft = __atomic_load_n(&rh->rh_filt_total, __ATOMIC_RELAXED);
	if (ft == dp->dp_filt_total)
		return;
	dp->dp_filt_total = ft;
	for (p = 0; p < DT_SYS_NPROBES; p++) {
		cur = __atomic_load_n(&rh->rh_filt[p], __ATOMIC_RELAXED);
		delta = cur - dp->dp_filt[p];
		if (delta == 0)
			continue;
		dp->dp_filt[p] = cur;
		if (delta > dp->dp_fbudget)
			dti_budget_refresh(dp);
		if (delta > dp->dp_fbudget) {
			atomic_fetch_add(&dti_stats.forged,
			    delta - dp->dp_fbudget);
			delta = (uint32_t)dp->dp_fbudget;
		}
		dp->dp_fbudget -= delta;
		if (delta != 0)
			dti_charge(p, delta, dt_pcb_count_filtevt);
	}
}

/*
 * The tracee's recursion and ring-full counters: attribute what changed
 * since the last look to the opens recording each probe, so the device's
 * recurevt and dropevt account for events that never reached dtd.
 */
/*
 * Calls of count-only probes (UDT_EN_COUNT), folded into the counting
 * opens' tables.  Unlike a loss, a count only says the tracee made its
 * own calls, which it could as well have recorded (forged) one by one:
 * no CPU budget, only DT_INGEST_DELTA_MAX a look against a wild write.
 * What moved while the probe was no longer counted goes to nobody
 * (dt_pcb_fold_count() folds only into count-only pcbs).  Read first
 * (dti_count_read(): the probes that moved into idx, their deltas into
 * delta), folded after the image's look (dti_counters()).
 */
static unsigned int
dti_count_read(struct dti_proc *dp, uint16_t *idx, uint32_t *delta,
    uint64_t *sum)
{
	struct udt_ring_hdr *rh = dp->dp_ring;
	uint32_t cur;
	unsigned int p, n = 0;

	static uint64_t until;		/* [D] */

	/*
	 * Nothing counts, nor did in the last thousand passes (the calls
	 * counted just before the last probe left the mode): 1024 loads
	 * a tracee a pass saved.
	 */
	if (atomic_exchange(&dti_count_ended, 0))
		until = dti_pass + 1000;
	if (atomic_load(&dti_ncounting) == 0 && dti_pass > until)
		return 0;
	for (p = 0; p < DT_SYS_NPROBES; p++) {
		cur = __atomic_load_n(&rh->rh_count[p], __ATOMIC_RELAXED);
		if ((delta[n] = cur - dp->dp_count[p]) == 0)
			continue;
		dp->dp_count[p] = cur;
		/* a wild step is counted as forged at the fold, not here */
		if (delta[n] < DT_INGEST_DELTA_MAX)
			*sum += delta[n];
		idx[n++] = (uint16_t)p;
	}
	return n;
}

static void
dti_count_calls(struct dti_proc *dp, const uint16_t *idx,
    const uint32_t *delta, unsigned int n)
{
	struct dt_probe *dtp;
	struct dt_pcb *pcb;
	unsigned int i, p;

	for (i = 0; i < n; i++) {
		p = idx[i];
		if (delta[i] >= DT_INGEST_DELTA_MAX) {
			atomic_fetch_add(&dti_stats.forged, delta[i]);
			continue;
		}
		if ((dtp = dti_probe_at(p)) == NULL)
			continue;
		/*
		 * A foreign tracee's calls are all a kernel program's, of
		 * a probe it counts for every open (its records are
		 * dropped alike, dt_ingest_emit()).
		 */
		if (dp->dp_foreign && dti_kall != NULL && dti_kall(p))
			continue;
		/* the pid is dtd's, from the socket: the count's key */
		rcu_read_lock();
		cds_list_for_each_entry_rcu(pcb, &dtp->dtp_pcbs, dp_pnext)
			dt_pcb_fold_count(pcb, 0, delta[i], dp->dp_pid);
		rcu_read_unlock();
	}
}

void
dti_counters(struct dti_proc *dp)
{
	static uint16_t idx[DT_SYS_NPROBES];	/* [D] */
	static uint32_t moved[DT_SYS_NPROBES];	/* [D] */
	struct udt_ring_hdr *rh = dp->dp_ring;
	uint64_t lt, rt, sum = 0;
	uint32_t delta;
	unsigned int n, p;

	/*
	 * A set-id exec whose old memory a CLONE_VM child keeps alive (the
	 * new image has no library: secure mode) leaves the child writing
	 * counts and tables in the pid's name: judged as records are
	 * (dti_flush()), after the counts were read and when anything
	 * moved, one look a pass at most.  The tables' values are read
	 * again at their fold, after the look: a write in between is the
	 * window left.
	 */
	if (atomic_load(&dp->dp_imagebad))
		return;
	n = dti_count_read(dp, idx, moved, &sum);
	if ((n > 0 || dti_sagg_moved(dp)) && !dt_ingest_image_ok(dp->dp_pid,
	    dp->dp_uid, dp->dp_gid, dp->dp_rgid, dp->dp_pidfd, true)) {
		atomic_store(&dp->dp_imagebad, true);
		dti_discard(dp, DTI_WHY_IMAGE, sum);
		return;
	}
	dti_filtered(dp);
	dti_count_calls(dp, idx, moved, n);
	dti_sagg_take(dp);
	lt = __atomic_load_n(&rh->rh_lost_total, __ATOMIC_RELAXED);
	rt = __atomic_load_n(&rh->rh_recur_total, __ATOMIC_RELAXED);
	if (lt == dp->dp_lost_total && rt == dp->dp_recur_total &&
	    !dp->dp_owed)
		return;
	dp->dp_lost_total = lt;
	dp->dp_recur_total = rt;
	/* What was owed is looked at again below, and counted again. */
	dp->dp_owed = false;
	atomic_fetch_sub(&dti_stats.forged, dp->dp_owed_n);
	dp->dp_owed_n = 0;
	dti_budget_records(dp);
	dti_budget_refresh(dp);
	for (p = 0; p < DT_SYS_NPROBES; p++) {
		delta = dti_delta(dp, &rh->rh_lost[p], &dp->dp_lost[p]);
		if (delta != 0) {
			atomic_fetch_add(&dti_stats.lost, delta);
			dti_charge(p, delta, dt_pcb_count_dropevt);
		}
		delta = dti_delta(dp, &rh->rh_recur[p], &dp->dp_recur[p]);
		if (delta != 0) {
			atomic_fetch_add(&dti_stats.recur, delta);
			dti_charge(p, delta, dt_pcb_count_recurevt);
		}
	}

	/* The timer fallback's samples, to the opens recording profile. */
	if ((delta = dti_delta(dp, &rh->rh_lost[UDT_PROBE_PROFILE],
	    &dp->dp_plost))) {
		atomic_fetch_add(&dti_stats.lost, delta);
		if (dti_sample_lost != NULL)
			dti_sample_lost(delta, false);
	}
	if ((delta = dti_delta(dp, &rh->rh_recur[UDT_PROBE_PROFILE],
	    &dp->dp_precur))) {
		atomic_fetch_add(&dti_stats.recur, delta);
		if (dti_sample_lost != NULL)
			dti_sample_lost(delta, true);
	}
	atomic_fetch_add(&dti_stats.forged, dp->dp_owed_n);
}

/*
 * A reserved slot the drain gave up on holds an event the tracee's
 * program made (a system call on its way in or out) that no reader will
 * see: without a count, read + dropped fell short of the calls made
 * whenever a thread stopped (SIGSTOP, a debugger, a long page fault) for
 * UDT_STUCK_NSEC between reserve and commit.  Its probe is the one the
 * producer stored right after it reserved (udt_emit()); one stopped
 * before even that leaves the slot's last lap's, and a forger anything:
 * the tracee's word, so it is believed as a lost count is, within the
 * budget, which the skipped slot itself earns as a record drained does
 * (a ring overflows only once full: one claim per slot passed).
 */
void
dti_abandoned(struct dti_proc *dp, const struct udt_rec *s)
{
	unsigned int p = __atomic_load_n(&s->ur_probe, __ATOMIC_RELAXED);

	if (p >= DT_SYS_NPROBES && p != UDT_PROBE_PROFILE) {
		/* No probe's: nobody to tell; still a forged claim. */
		atomic_fetch_add(&dti_stats.forged, 1);
		return;
	}
	dti_budget_records(dp);
	if (dp->dp_budget == 0)
		dti_budget_refresh(dp);
	if (dti_budget_take(dp, 1) == 0)
		return;
	atomic_fetch_add(&dti_stats.lost, 1);
	if (p == UDT_PROBE_PROFILE) {
		if (dti_sample_lost != NULL)
			dti_sample_lost(1, false);
	} else
		dti_charge(p, 1, dt_pcb_count_dropevt);
}
