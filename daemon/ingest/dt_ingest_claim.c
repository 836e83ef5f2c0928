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
 * A stuck slot's claim (udt_wire.h): whether the drain waits past
 * UDT_STUCK_NSEC for the thread that claimed it.  A file of its own: the
 * drain's one look at /proc, made only where a slot is stuck.  All of it
 * the drain thread's own ([D]).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_proc.h"

/*
 * Whether dp's stuck slot s, claimed (udt_wire.h), is worth waiting for
 * a while more: its ring not filling (more than half its slots taken:
 * the others' events would then be lost, or in lossless mode their
 * threads wait, to keep this one) and, in lossless mode, not for longer
 * than its producers wait for room (UDT_WAIT_NSEC: past that they drop
 * every event until the tail moves), and the thread that claimed it
 * still running: running or waiting to run, or in an uninterruptible
 * wait (a page fault's I/O).  One that sleeps (in a signal handler that
 * waits), is stopped or is gone may never commit soon: the slot is
 * skipped at UDT_STUCK_NSEC, as an unclaimed one.  A look at
 * /proc/PID/task/TID/stat, a thread of the ring's own process (a vfork
 * child's slot is not waited for), at most every DTI_CLAIM_LOOK_NS a
 * ring, and DTI_CLAIM_LOOKS a second in all: past that, the ring's last
 * answer, or none (tracees that claim slots and never commit them, many
 * at once, cost dtd no more than that).  Not in another pid namespace,
 * whose tids are not ours to look up.  The tid is the tracee's word: a
 * wrong one delays only its own ring, UDT_STUCK_MAX_NSEC at most.  The
 * drain thread.
 */
#define DTI_CLAIM_LOOK_NS	(50 * 1000 * 1000ULL)
#define DTI_CLAIM_LOOKS		200

static uint64_t	dti_claim_sec;		/* [D] the second counted, ns */
static unsigned int dti_claim_looks;	/* [D] looks made in it */

bool
dti_claim_cached(const struct dti_proc *dp, uint64_t now)
{
	return dp->dp_claimat != 0 && dp->dp_claimtk == dp->dp_tail &&
	    dp->dp_claimrun && now - dp->dp_claimat < DTI_CLAIM_LOOK_NS &&
	    now - dp->dp_stuck < UDT_STUCK_MAX_NSEC;
}

bool
dti_claim_waits(struct dti_proc *dp, const struct udt_rec *s, uint64_t head,
    uint64_t now)
{
	struct dt_proc_stat ps;
	int32_t tid;

	if (dp->dp_foreign || head - dp->dp_tail > dp->dp_nslots / 2 ||
	    (__atomic_load_n(&dti_lossless, __ATOMIC_RELAXED) &&
	    now - dp->dp_stuck >= UDT_WAIT_NSEC * 4 / 5))
		return false;
	if (dp->dp_claimat != 0 && dp->dp_claimtk == dp->dp_tail &&
	    now - dp->dp_claimat < DTI_CLAIM_LOOK_NS)
		return dp->dp_claimrun;
	if (now - dti_claim_sec >= 1000000000ULL) {
		dti_claim_sec = now;
		dti_claim_looks = 0;
	}
	if (dti_claim_looks >= DTI_CLAIM_LOOKS)
		return dp->dp_claimat != 0 && dp->dp_claimtk == dp->dp_tail &&
		    dp->dp_claimrun;
	tid = __atomic_load_n(&s->ur_tid, __ATOMIC_RELAXED);
	dp->dp_claimtk = dp->dp_tail;
	dp->dp_claimat = now;
	dp->dp_claimrun = false;
	if (tid <= 0)
		return false;
	dti_claim_looks++;
	if (dt_proc_task_stat(dp->dp_pid, tid, &ps) != 0)
		return false;
	dp->dp_claimrun = ps.ps_state == 'R' || ps.ps_state == 'D';
	return dp->dp_claimrun;
}

