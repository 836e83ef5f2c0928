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
 * One record of a tracee's ring, once the drain thread has copied it out
 * of shared memory: whether to believe it, and the dt_evt it becomes.
 * Every field was written by the tracee, so each is checked against what
 * a hook or the timer fallback can produce (udt_wire.h) before any is
 * used as a number of frames, a probe or a CPU; and a batch of them is
 * emitted only while the process that got the ring still runs the image
 * it connected with.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_ingest_var.h"

int
dt_ingest_valid(const struct udt_rec *r)
{
	int isret, i;

	if ((r->ur_flags & ~UDT_R_ALL) != 0)
		return 0;
	if (r->ur_probe == UDT_PROBE_PROFILE) {
		/* Only from a tracee we told to sample; see udt_wire.h. */
		if (dti_sample_put == NULL || !(r->ur_flags & UDT_R_PROF) ||
		    (r->ur_flags & (UDT_R_ARGS | UDT_R_RET)) ||
		    r->ur_error != 0 || r->ur_args[0] < 0 ||
		    r->ur_args[0] >= DT_INGEST_DELTA_MAX ||
		    (uint64_t)r->ur_args[1] < DT_TIMER_NSECS_MIN ||
		    (uint64_t)r->ur_args[1] > DT_TIMER_NSECS_MAX)
			return 0;
		for (i = 2; i < UDT_NARGS; i++)
			if (r->ur_args[i] != 0)
				return 0;
	} else if (r->ur_probe >= DT_SYS_NPROBES ||
	    (r->ur_flags & UDT_R_PROF))
		return 0;
	isret = r->ur_probe < DT_SYS_NPROBES && (r->ur_probe & 1);
	if (isret != ((r->ur_flags & UDT_R_RET) != 0))
		return 0;
	if (isret && (r->ur_flags & UDT_R_ARGS))
		return 0;
	/* Strings: entry records of syscall probes only. */
	if ((r->ur_flags & UDT_R_STR) &&
	    (isret || (r->ur_flags & UDT_R_PROF)))
		return 0;
	if (isret && (r->ur_error < 0 || r->ur_error > 4095 ||
	    (r->ur_error != 0 && r->ur_args[0] != -1)))
		return 0;
	/* Deeper than ur_stack: a syscall record's udt_rec_more slots. */
	if (r->ur_nframes > ((r->ur_flags & UDT_R_PROF) ? UDT_STACK_MAX :
	    UDT_DEEP_MAX) ||
	    (r->ur_nframes != 0) != ((r->ur_flags & UDT_R_STACK) != 0))
		return 0;
	if (r->ur_cpu >= dt_dev_ncpus() || r->ur_tid <= 0)
		return 0;
	if (r->ur_flags & UDT_R_TSC) {
		if (r->ur_sec != 0 || r->ur_nsec < 0 ||
		    !dt_tsc_near((uint64_t)r->ur_nsec))
			return 0;
	} else if (r->ur_sec < 0 || r->ur_nsec < 0 ||
	    r->ur_nsec >= 1000000000)
		return 0;
	return 1;
}

/*
 * The string area a tracee wrote (udt_rec_str.us_str) into ev, if every
 * entry is one the hook can write for this probe (dtvar.h's layout, an
 * argument the call reads as a string, in order, each NUL-terminated,
 * within the area); else ev's area stays empty.  Returns whether it was
 * taken.
 */
int
dt_ingest_strings(const struct udt_rec *r, const uint8_t *area,
    struct dt_evt *ev)
{
	const struct systab_ent *se;
	size_t off = 0, len;
	unsigned int arg, last = 0;

	if (r->ur_probe / 2 >= SYSTAB_COUNT || (r->ur_probe & 1))
		return 0;
	se = &systab[r->ur_probe / 2];
	while (off < UDT_STR_SIZE && area[off] != 0) {
		if (off + DTEV_STR_HDR + 1 > UDT_STR_SIZE ||
		    (area[off] & ~(DTEV_STR_ARG | DTEV_STR_TRUNC |
		    DTEV_STR_FAULT)) != 0)
			return 0;
		arg = area[off] & DTEV_STR_ARG;
		len = area[off + 1];
		if (arg <= last || arg > se->se_nargs ||
		    !(se->se_strargs & (1u << (arg - 1))) ||
		    off + DTEV_STR_HDR + len + 1 > UDT_STR_SIZE ||
		    area[off + DTEV_STR_HDR + len] != '\0')
			return 0;
		last = arg;
		off += DTEV_STR_HDR + len + 1;
	}
	if (off == 0)
		return 0;
	/* Nothing after the list: the rest reads as zero. */
	memcpy(DTEV_STR_AREA(ev), area, off);
	return 1;
}

/*
 * Whether the kernel's counting program (dt_ksys.h) saw the call of r
 * whenever it was made, its process never a tracee of the program's
 * map at the time: a CLONE_VM child writing through its parent's ring
 * (owner) as itself (dti_who(): a vfork or posix_spawn child before
 * its exec), which never attaches; and a fork child's return from the
 * fork, which the kernel reports from ret_from_fork before the child
 * runs a hook and attaches (ret 0 on the thread that is the process:
 * a new thread's tid is not its pid).
 */
static bool
dt_ingest_kseen(pid_t pid, pid_t owner, const struct udt_rec *r)
{
	unsigned int lin;

	if (pid != owner)
		return true;
	if (!(r->ur_probe & 1) || r->ur_probe / 2 >= SYSTAB_COUNT ||
	    r->ur_tid != pid || r->ur_error != 0 || r->ur_args[0] != 0)
		return false;
	lin = systab[r->ur_probe / 2].se_linux;
	return lin == SYS_fork || lin == SYS_vfork || lin == SYS_clone ||
	    lin == SYS_clone3;
}

void
dt_ingest_emit(pid_t pid, pid_t owner, bool foreign, const struct udt_rec *r,
    const uint8_t *strs, const uint64_t *deep, unsigned int ndeep)
{
	struct dt_probe *dtp = NULL;
	struct dt_deepstack u;
	struct dt_evt ev;
	unsigned int i, nf;

	/* Validated: a profile sample has UDT_PROBE_PROFILE, no probe. */
	if (!(r->ur_flags & UDT_R_PROF) &&
	    (dtp = dti_probe_at(r->ur_probe)) == NULL)
		return;
	/*
	 * Only what a ring's copy (dt_evt_copy()) or a fold may read is
	 * cleared: the two stacks' frames, two thirds of the record, are
	 * read only up to st_count, but the string area, which a probe with
	 * strings hands out whole.  Clearing the whole record was a
	 * tenth of dtd's samples at two million events a second (inline
	 * rep stosq).  A profile sample
	 * goes to another provider's code: cleared whole.
	 */
	if (r->ur_flags & UDT_R_PROF)
		memset(&ev, 0, sizeof(ev));
	else {
		memset(&ev, 0, offsetof(struct dt_evt, dtev_kstack.st_pc));
		ev.dtev_kstack.st_count = 0;
		ev.dtev_ustack.st_count = 0;
		memset(ev.dtev_comm, 0, sizeof(ev) -
		    offsetof(struct dt_evt, dtev_comm));
		if (dtp->dtp_strings)
			memset(DTEV_STR_AREA(&ev), 0, DTEV_STR_SIZE);
	}
	ev.dtev_pid = pid;
	ev.dtev_tid = r->ur_tid;
	if (r->ur_flags & UDT_R_TSC)
		ev.dtev_tsp = dt_clock_ts((uint64_t)dt_tsc_realtime(
		    (uint64_t)r->ur_nsec));
	else {
		ev.dtev_tsp.tv_sec = r->ur_sec;
		ev.dtev_tsp.tv_nsec = r->ur_nsec;
	}
	/*
	 * The calls a kernel program counted, asked of a probe it counts
	 * for every open alone: all of a foreign tracee's (not in its
	 * skip map, dt_sys_kern_attach()), those kseen, those before the
	 * attach.
	 */
	if (!(r->ur_flags & UDT_R_PROF) && dti_kall != NULL &&
	    dti_kall(r->ur_probe) && (foreign ||
	    dt_ingest_kseen(pid, owner, r) ||
	    dti_kbefore(pid, (uint64_t)ev.dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev.dtev_tsp.tv_nsec, r->ur_probe)))
		return;
	if (r->ur_flags & UDT_R_COMM) {
		memcpy(ev.dtev_comm, r->ur_comm, UDT_COMMLEN);
		ev.dtev_comm[UDT_COMMLEN - 1] = '\0';
	}
	if (r->ur_flags & UDT_R_STACK) {
		/* The drain leaves no record deeper than its ur_stack. */
		nf = r->ur_nframes < UDT_STACK_MAX ? r->ur_nframes :
		    UDT_STACK_MAX;
		ev.dtev_ustack.st_count = nf;
		for (i = 0; i < nf; i++)
			ev.dtev_ustack.st_pc[i] = r->ur_stack[i];
	}
	if (r->ur_flags & UDT_R_PROF) {
		/* Validated: args[0] missed periods, args[1] the period. */
		dti_sample_put(r->ur_cpu, &ev, (uint64_t)r->ur_args[0],
		    (uint64_t)r->ur_args[1]);
		return;
	}
	if (strs != NULL)
		(void)dt_ingest_strings(r, strs, &ev);
	if (r->ur_flags & UDT_R_ARGS) {
		/* Registers past nargs hold whatever the caller left. */
		for (i = 0; i < dtp->dtp_nargs && i < UDT_NARGS; i++)
			ev.dtev_args[i] = r->ur_args[i];
	} else if (r->ur_flags & UDT_R_RET) {
		/*
		 * Linux returns one value; ur_args[1] is the hook's
		 * duration + 1, kept for DTF_LAT's fold (dt_evt_field()).
		 */
		ev.dtev_retval[0] = r->ur_args[0];
		ev.dtev_retval[1] = r->ur_args[1];
		ev.dtev_error = r->ur_error;
	}
	/* In time order with every other source's (dt_prov.h). */
	if (deep == NULL || ndeep == 0 || !(r->ur_flags & UDT_R_STACK) ||
	    r->ur_nframes != UDT_STACK_MAX) {
		dt_seq_emit(dti_seq, dtp, r->ur_cpu, &ev);
		return;
	}
	if (ndeep > DTEV_DEEP_MAX - UDT_STACK_MAX)
		ndeep = DTEV_DEEP_MAX - UDT_STACK_MAX;
	u.ds_count = UDT_STACK_MAX + ndeep;
	memcpy(u.ds_pc, r->ur_stack, UDT_STACK_MAX * sizeof(u.ds_pc[0]));
	memcpy(u.ds_pc + UDT_STACK_MAX, deep, ndeep * sizeof(u.ds_pc[0]));
	dt_seq_emit_deep(dti_seq, dtp, r->ur_cpu, &ev, &u);
}

bool
dti_reaped(int pidfd)
{
	/*
	 * Signal 0 reaches a zombie, whose pid nobody else can have yet;
	 * ESRCH only once it was reaped.  EPERM (an unprivileged dtd,
	 * another user's process) says it still exists.
	 */
	return pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL,
	    0) == -1 && errno == ESRCH;
}

bool
dt_ingest_image_ok(pid_t pid, uid_t uid, gid_t gid, gid_t rgid, int pidfd,
    bool gone_ok)
{
	char path[32];
	struct stat st;

	/* Root's tracee may be anything root runs. */
	if (uid == 0)
		return true;
	/*
	 * The directory /proc/PID has the process's effective uid and gid
	 * whatever its dumpable state: root's after a set-uid root exec,
	 * the program's group after a set-gid one, while its uid stays
	 * the user's (then, with the old memory kept alive by a CLONE_VM
	 * child, the group alone told of the exec).  A tracee that is not
	 * set-id (the loader ignores LD_PRELOAD in those) may take no
	 * group but its effective one at connect and its real one
	 * (setgid(getgid()), where a parent gave it two) without privilege,
	 * and a set-id exec into either gains nothing.
	 */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0)
		return gone_ok && errno == ENOENT;
	if (st.st_uid == uid && (st.st_gid == gid || st.st_gid == rgid))
		return true;
	/*
	 * Another owner or group, but maybe of another process: once ours is
	 * reaped its pid is free, and under a fork storm or a parallel
	 * build pid_max (32768 is common) wraps fast enough that one of
	 * root's processes had it by the final pass (a non-root tracee's
	 * last records discarded, 2 runs in 160 beside a build).  Asked
	 * after the stat: a process not reaped then held the pid at the
	 * stat, and the owner seen was its own, a set-id zombie's too.
	 * Reaped, it is gone as if the stat had found nothing.  Without a
	 * pidfd (-1; no served tracee lacks one: dt_ingest_serve() falls
	 * back from SO_PEERPIDFD to pidfd_open(), then refuses) the owner
	 * alone answers, as it did before.
	 */
	return gone_ok && dti_reaped(pidfd);
}

void
dti_discard(struct dti_proc *dp, const char *why, uint64_t nb)
{
	if (!atomic_exchange(&dp->dp_retired, 1))
		fprintf(stderr, "dtd: ingest: pid %d %s: its ring is "
		    "retired, what is left in it discarded\n",
		    (int)dp->dp_pid, why);
	atomic_fetch_add(&dti_stats.gdiscard, nb);
}

static const char *
dti_verdict_why(enum dti_verdict v)
{
	switch (v) {
	case DTI_V_EXEC:
		return "exec'd another image";
	case DTI_V_UNHELD:
		return "does not map the ring it was given (it exec'd before "
		    "dtd looked?)";
	case DTI_V_LATER:
		return "has memory dtd could not read in time before it ended";
	default:
		return NULL;
	}
}

/*
 * A look not answered by the final pass: for a ring already proven its
 * image's, the answer could only be that image's (an exec is memory
 * that ended while the process did not; it ended as the process did),
 * so the batch is not lost to the look's lateness.  An unproven ring
 * stays unproven: its memory is gone.
 */
static enum dti_verdict
dti_final_look(const struct dti_proc *dp, enum dti_verdict v, int final)
{
	return v == DTI_V_LATER && final && dp->dp_proven ? DTI_V_SAME : v;
}

/* Records emitted under one hold of the sequencer's lock, at most. */
#define DTI_SEQ_RUN	64

/*
 * Emit the nb records of a batch judged to be dp's image's.  Who made
 * each record is asked first (it may read /proc); then the records go
 * to the sequencer DTI_SEQ_RUN at a time under one lock
 * (dt_seq_batch_begin()): its lock and unlock per event were several
 * percent of dtd's profile at a million events a second.  Records of the
 * profile timer go alone: dt_ptimer_put()'s pushes would do, but it is
 * another provider's code, and nothing it may grow into has to know it
 * runs under the sequencer's lock.
 */
static void
dti_emit_batch(struct dti_proc *dp, struct udt_rec *batch,
    const struct udt_rec_str *bstr, const uint8_t *bhas,
    const struct dti_deep *bdeep, unsigned int nb)
{
	const uint64_t *deep;
	unsigned int i, nd, run = 0, nours = 0;
	pid_t pid[DTI_BATCH];
	bool ours[DTI_BATCH], prof;

	if (nb == 0)
		return;
	if (nb > DTI_BATCH)
		abort();	/* every batch comes from dti_batch[] */
	/* A new batch: a vfork child's sharing is looked at again. */
	dti_nbatch++;
	for (i = 0; i < nb; i++) {
		if (!(ours[i] = dti_who(dp, &batch[i], &pid[i])))
			continue;
		nours++;
		/* Mappings first, while the tracee may still live. */
		if (batch[i].ur_flags & UDT_R_STACK)
			dt_pm_track_stack(&dp->dp_maps, dp->dp_pid,
			    batch[i].ur_stack, batch[i].ur_nframes);
		if (bdeep != NULL && bdeep->dd_n[i] != 0)
			dt_pm_track_stack(&dp->dp_maps, dp->dp_pid,
			    &bdeep->dd_pc[bdeep->dd_off[i]], bdeep->dd_n[i]);
	}
	/*
	 * Counted first, the batch at once: whoever reads one of its events
	 * sees it counted.  An atomic add per record waited, as a locked
	 * instruction does, for the stores of the event before it: several
	 * percent of dtd's CPU at two million events a second.
	 */
	if (nours > 0)
		atomic_fetch_add_explicit(&dti_stats.records, nours,
		    memory_order_relaxed);
	for (i = 0; i < nb; i++) {
		if (!ours[i])
			continue;
		deep = NULL;
		nd = 0;
		if (bdeep != NULL && bdeep->dd_n[i] != 0) {
			deep = &bdeep->dd_pc[bdeep->dd_off[i]];
			nd = bdeep->dd_n[i];
		}
		prof = (batch[i].ur_flags & UDT_R_PROF) != 0;
		if (prof || run == DTI_SEQ_RUN) {
			dt_seq_batch_end();
			run = 0;
		}
		if (!prof && run++ == 0)
			dt_seq_batch_begin();
		dt_ingest_emit(pid[i], dp->dp_pid, dp->dp_foreign, &batch[i],
		    bhas[i] ? bstr[i].us_str : NULL, deep, nd);
	}
	dt_seq_batch_end();
}

void
dti_held_free(struct dti_held *dh)
{
	if (dh == NULL)
		return;
	free(dh->dh_recs);
	free(dh->dh_strs);
	free(dh->dh_has);
	free(dh->dh_deep);
	free(dh);
}

/*
 * Keep a batch until the look at dp's image answers.  No more than the
 * ring it came from: one batch per proc, and the ring is not drained
 * meanwhile.  Its oldest stamp and the time it was held are taken now,
 * once: each pass's mark asks for them (dti_held_rt()).  false when out
 * of memory (the batch is then lost).
 */
static bool
dti_held_keep(struct dti_proc *dp, const struct udt_rec *batch,
    const struct udt_rec_str *bstr, const uint8_t *bhas,
    const struct dti_deep *bdeep, unsigned int nb)
{
	struct dti_held *dh;
	uint64_t ns;

	if ((dh = calloc(1, sizeof(*dh))) == NULL ||
	    (dh->dh_recs = malloc(nb * sizeof(*batch))) == NULL ||
	    (dh->dh_strs = malloc(nb * sizeof(*bstr))) == NULL ||
	    (dh->dh_has = malloc(nb)) == NULL) {
		dti_held_free(dh);
		return false;
	}
	/* Deep frames only when some record has them. */
	if (bdeep != NULL && bdeep->dd_used != 0) {
		if ((dh->dh_deep = malloc(sizeof(*bdeep))) == NULL) {
			dti_held_free(dh);
			return false;
		}
		memcpy(dh->dh_deep, bdeep, sizeof(*bdeep));
	}
	dh->dh_nb = nb;
	for (unsigned int i = 0; i < nb; i++)
		if ((ns = dti_rec_rt(&batch[i])) != 0 &&
		    (dh->dh_rt == 0 || ns < dh->dh_rt))
			dh->dh_rt = ns;
	dh->dh_since = dt_clock_ns(CLOCK_MONOTONIC);
	memcpy(dh->dh_recs, batch, nb * sizeof(*batch));
	memcpy(dh->dh_has, bhas, nb);
	/* Only the strings a record has: the rest is never read. */
	memset(dh->dh_strs, 0, nb * sizeof(*bstr));
	for (unsigned int i = 0; i < nb; i++)
		if (bhas[i])
			dh->dh_strs[i] = bstr[i];
	dp->dp_held = dh;
	return true;
}

/*
 * Lossless or not, a held batch's records, and those its ring holds from
 * its tail on, may be older than what the pass that held it let out:
 * a mark past them let younger events of other sources out first, the
 * held ones late once the look answered (a non-root tracee's last 2224
 * records of 20000 after a later process's call, or never read, the
 * reader gone at that call).  The tail's record is the oldest the ring
 * still holds but for the mark's slack (a writer's stamp before its
 * commit) or a lossless writer that stamped before it waited for room
 * (which dti_low() covers for a ring that is drained, not for one held:
 * it comes late, counted), so it alone is read, and the batch's stamp
 * was taken when it was held: a pass pays no more for a held batch than
 * for a ring.
 *
 * But the look runs on the tracee's user's worker, which a FUSE page
 * can stall for ever, and while honoured the hold pins every source's
 * events, for every reader, as long as the sequencer's D: so not once
 * that worker is stuck, nor past DTI_HELD_MARK_NS.  The records then
 * come late, and are counted, costing that user alone.
 */
_Static_assert(DTI_HELD_MARK_NS * 2 <= DT_SEQ_DELAY_NS, "held within D");

uint64_t
dti_held_rt(const struct dti_proc *dp, uint64_t now)
{
	const struct dti_held *dh = dp->dp_held;
	uint64_t low, ns;

	/* now is the pass's, and the batch may have been held since */
	if (dh == NULL || (now > dh->dh_since &&
	    now - dh->dh_since > DTI_HELD_MARK_NS) || dti_look_stuck(dp))
		return 0;
	low = dh->dh_rt;
	if (dti_committed(dp, dp->dp_tail, &ns) && ns != 0 &&
	    (low == 0 || ns < low))
		low = ns;
	return low;
}

bool
dti_held_settle(struct dti_proc *dp, int final)
{
	struct dti_held *dh = dp->dp_held;
	enum dti_verdict v;
	const char *why;

	if (dh == NULL)
		return true;
	v = dti_final_look(dp, dti_image_look(dp, false), final);
	if (v == DTI_V_LATER && !final)
		return false;
	dp->dp_held = NULL;
	if ((why = dti_verdict_why(v)) != NULL) {
		dti_discard(dp, why, dh->dh_nb);
		dti_charge_discarded(dh->dh_recs, dh->dh_nb);
	} else
		dti_emit_batch(dp, dh->dh_recs, dh->dh_strs, dh->dh_has,
		    dh->dh_deep, dh->dh_nb);
	dti_held_free(dh);
	return true;
}

/*
 * Emit the nb valid records batch copied from dp's ring (with the strings
 * bstr[i] where bhas[i]), if the process that
 * got the ring still runs the image it connected with.  Checked after
 * the copy and before the emission: every record copied was committed
 * before the check, so none written after an exec (by a helper the
 * process forked to keep the ring) is stamped with its pid; those of the
 * last batch before the exec go with them, as garbage.  Per batch, not
 * once per drain of the ring: the tail is published after each batch,
 * and the library execs once the tail has reached what it wrote
 * (udt_exec_drain()), so a batch whose tail is out must be judged
 * already, or its records would be lost to an exec they preceded.  A
 * batch whose look has not answered in time is held (dp_held) and
 * judged by that same look later.  A retired proc is freed by the drain
 * thread.
 */
void
dti_flush(struct dti_proc *dp, struct udt_rec *batch,
    const struct udt_rec_str *bstr, const uint8_t *bhas,
    const struct dti_deep *bdeep, unsigned int nb, int final)
{
	const char *why = NULL;
	enum dti_verdict v;

	if (nb == 0)
		return;
	/*
	 * Two looks at an exec since, each blind where the other sees: the
	 * image's memory ends at any exec, but lives on while a CLONE_VM
	 * child shares it, and dtd may hold no descriptor to it; the owner
	 * of /proc/PID changes at a set-id exec whatever shares the memory.
	 * Then, once per ring, the proof that the image dtd opened maps it
	 * at all (an exec before the hello).  A process reaped since the
	 * last pass, final or not, has no /proc/PID: gone, it became no
	 * other image, and what its ring holds was written before (this
	 * once discarded every non-root tracee's last records, uncounted,
	 * whenever its parent reaped it before the drain's final pass); nor
	 * has one whose pid another process took since, which its pidfd
	 * tells (dt_ingest_image_ok()).
	 */
	if (!dt_ingest_image_ok(dp->dp_pid, dp->dp_uid, dp->dp_gid,
	    dp->dp_rgid, dp->dp_pidfd, true)) {
		why = DTI_WHY_IMAGE;
		atomic_store(&dp->dp_imagebad, true);
	} else {
		v = dti_final_look(dp, dti_image_look(dp, true), final);
		if (v == DTI_V_LATER && !final && dp->dp_held == NULL &&
		    dti_held_keep(dp, batch, bstr, bhas, bdeep, nb))
			return;
		why = dti_verdict_why(v);
	}
	if (why != NULL) {
		dti_discard(dp, why, nb);
		dti_charge_discarded(batch, nb);
		return;
	}
	dti_emit_batch(dp, batch, bstr, bhas, bdeep, nb);
}
