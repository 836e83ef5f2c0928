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
 * Exec holds: the drain's mark (the sequencer's promise that no record
 * of the tracees is older) stays behind an exec until the new image's
 * first records are in.  The loader of an image the launcher's helper
 * follows makes its calls from the exec on, stamped as they happen, but
 * they reach a ring only once the new image's library has attached and
 * handed them over, a few milliseconds later; a mark that moved on in
 * between let the other sources' younger events out first, and the
 * loader's came late (a dozen a second under a shell script).
 *
 * The tracee announces the exec in its ring before making it (rh_exec:
 * udt_wire.h); the announce holds while the old image is listed, then
 * passes to the new image at its attach, which holds until its library
 * says the loader's records are in (rh_ready).
 * Both are the tracee's word: a stamp dtd cannot place holds nothing,
 * and no stamp holds longer than DTI_EXEC_HOLD_NS after dtd first saw
 * it, so the most a hostile tracee gets is the delay the drain's mark
 * may cause (the sequencer's D, or DT_SEQ_PATIENT_NS while a lossless
 * reader holds the drain back), never a lost or reordered event.
 */
#include <stdbool.h>
#include <stdint.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_prov.h"

/* Longer than a loader under ptrace takes; no longer than D. */
#define DTI_EXEC_HOLD_NS	DT_SEQ_DELAY_NS

#define DTI_EXEC_TSC		(1ULL << 63)

/*
 * An announce's stamp as CLOCK_REALTIME ns, or 0 when it cannot be placed: from
 * the future (past rt) or more than a hold before it.  The drain thread
 * (dt_tsc_realtime() reads its reference).
 */
static uint64_t
dti_exec_rt(uint64_t raw, uint64_t rt)
{
	uint64_t ns;
	int64_t t;

	if (raw & DTI_EXEC_TSC) {
		if (!dt_tsc_near(raw & ~DTI_EXEC_TSC))
			return 0;
		t = dt_tsc_realtime(raw & ~DTI_EXEC_TSC);
		if (t <= 0)
			return 0;
		ns = (uint64_t)t;
	} else
		ns = raw;
	/* A TSC's conversion may land a little ahead: take it as now. */
	if (ns > rt + DT_SEQ_SLACK_NS || ns + DTI_EXEC_HOLD_NS < rt)
		return 0;
	return ns < rt ? ns : rt;
}

void
dti_exec_inherit(struct dti_proc *dp, struct dti_proc *op)
{
	struct udt_exec_ann *a, *any = NULL;
	bool same = op->dp_pid == dp->dp_pid;
	unsigned int i;
	int32_t tid;

	if (dp->dp_xraw != 0)
		return;
	for (i = 0; i < UDT_EXEC_NANN; i++) {
		a = &op->dp_ring->rh_exec[i];
		tid = __atomic_load_n(&a->ua_tid, __ATOMIC_ACQUIRE);
		if (tid <= 0)
			continue;
		/*
		 * The announce under dp's pid: the old image's own, by its
		 * main thread, or a child of op's that announced in op's ring
		 * (vfork, or a fork child not attached yet), given back,
		 * since op lives on.
		 */
		if (tid == dp->dp_pid) {
			dp->dp_xraw = __atomic_load_n(&a->ua_ts,
			    __ATOMIC_RELAXED);
			if (!same)
				(void)__atomic_compare_exchange_n(&a->ua_tid,
				    &tid, 0, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
			return;
		}
		if (same && any == NULL)
			any = a;
	}
	/*
	 * Else, for the same process, the first there is: another of its
	 * threads may have made the exec (the kernel gives the caller the
	 * pid), though a child's announce, under its own pid, looks alike.
	 */
	if (any != NULL)
		dp->dp_xraw = __atomic_load_n(&any->ua_ts, __ATOMIC_RELAXED);
}

/*
 * The time raw holds the mark at, since first seen at *since; UINT64_MAX
 * when it holds nothing (any more).
 */
static uint64_t
dti_exec_hold(uint64_t raw, uint64_t *since, uint64_t rt, uint64_t now)
{
	uint64_t ns;

	if (*since == 0)
		*since = now;
	if (now - *since > DTI_EXEC_HOLD_NS ||
	    (ns = dti_exec_rt(raw, rt)) == 0)
		return UINT64_MAX;
	return ns;
}

uint64_t
dti_exec_look(struct dti_proc *dp, uint64_t rt, uint64_t now, bool drained)
{
	struct udt_ring_hdr *rh = dp->dp_ring;
	struct udt_exec_ann *a;
	uint64_t hold = UINT64_MAX, raw, ns;
	unsigned int i;
	int32_t tid;

	/*
	 * A retired image still holds for its own exec: the pass that
	 * saw it retired may not list the new image that retired it.
	 */
	if (dp->dp_dead)
		return UINT64_MAX;
	/*
	 * A new image: until its library set rh_ready, after which this
	 * pass's drain takes the loader's records (they were in before
	 * the flag), and the mark at the pass's end may pass them.
	 */
	if (dp->dp_xraw != 0) {
		if (drained &&
		    __atomic_load_n(&rh->rh_ready, __ATOMIC_ACQUIRE) != 0)
			dp->dp_xraw = 0;
		else
			hold = dti_exec_hold(dp->dp_xraw, &dp->dp_xsince, rt,
			    now);
	}
	/* Execs announced in its ring, its own or its children's. */
	for (i = 0; i < UDT_EXEC_NANN; i++) {
		a = &rh->rh_exec[i];
		if ((tid = __atomic_load_n(&a->ua_tid, __ATOMIC_ACQUIRE)) <= 0)
			continue;
		raw = __atomic_load_n(&a->ua_ts, __ATOMIC_RELAXED);
		if (raw != dp->dp_oraw[i]) {
			dp->dp_oraw[i] = raw;
			dp->dp_osince[i] = 0;
		}
		ns = dti_exec_hold(raw, &dp->dp_osince[i], rt, now);
		if (ns < hold)
			hold = ns;
		/* Held long enough (a static image never attaches): free. */
		if (ns == UINT64_MAX && now - dp->dp_osince[i] >
		    DTI_EXEC_HOLD_NS)
			(void)__atomic_compare_exchange_n(&a->ua_tid, &tid, 0,
			    0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return hold;
}
