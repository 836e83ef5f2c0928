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
 * The kernel's copy of a hooked tree's statically linked images (issue
 * 22): an open that named its tree with DTTR_F_HOOKED (btrace -c, whose
 * root runs /bin/sh under the preload library) has no feed on its root,
 * which would send every probed call of every hooked process of the
 * tree through perf only to be dropped here.  Instead each static image
 * of the tree gets one when it is exec'd, wherever in the tree that
 * happens (a shell's child, a make's tool, a vfork child): the
 * launcher's helper, which follows every exec a hooked process makes
 * (udt_lfollow.c), finds the image static at the exec's ptrace stop,
 * before its first instruction, and asks dtd (UDT_HELLO_KARM) before it
 * lets it run.  dt_ka_arm() then opens, for each such open whose tree
 * holds the process, a raw_syscalls sys_enter and sys_exit event on it,
 * on before it runs and inherited by what it forks, fed to
 * dt_tp_ksystree.c's callback with the image already judged static.
 * Every call of the image is counted from its first, once; the dynamic
 * processes of the tree pay nothing per call, their execs nothing more
 * than the helper's stop they had already.
 *
 * Set-id: an exec that changes a process's credentials (set-id bits,
 * file capabilities) runs in secure mode (AT_SECURE), whose loader
 * ignores LD_PRELOAD.  A root helper (only root's tracee gets new
 * credentials under ptrace; a non-root tracer's exec is given none)
 * holds such an image at its exec stop and asks as for a static one:
 * its feed is the copy of its calls, and of its children's, whose
 * secure-mode loader took LD_PRELOAD out of their environment (a child
 * that gets the library back is dropped here as a hook's, as a static
 * image's dynamic child is).  What a static image forks and execs is
 * judged by that callback as on a root's feed (a dynamic child's calls
 * come through perf and are dropped as the hooks').
 *
 * Dropped: the kernel takes a task's inherited perf events away at an
 * exec only when the new image is not dumpable (begin_new_exec()),
 * which a secure exec usually is but need not be (fs.suid_dumpable 1,
 * an LSM's AT_SECURE with the same ids), and a plain exec of a file
 * its user cannot read is too.  An image whose exec dropped them is
 * never taken as covered by an ancestor's feed; one whose exec kept
 * them is, set-id or not (dt_ka_dropped(), from /proc after the exec),
 * and the covering feed is told the held image is no hook's
 * (dt_kt_feed_held()): a set-id image's file names a loader, which the
 * feed's callback would otherwise take as the library's until the
 * ingest retires the hooked image's ring it replaced.
 *
 * Once: a process a live feed already covers (it, or the ancestor the
 * feed was opened on after the process's branch was forked from it) is
 * not given a second (a static image's dynamic child exec'ing another
 * static one).  An ancestor that had more than DT_KA_KIDS children at
 * its arm cannot say which were forked before: its feed is taken as
 * covering none of them, so such a child gets a feed of its own (its
 * calls perhaps twice, never not at all).  The tree is told by the
 * parents /proc gives, up to DT_KA_DEPTH, its root by pid and start
 * time: a process orphaned out of its branch before its exec is
 * re-parented to the nearest subreaper, btrace's, outside the tree, and
 * is not followed (ENOENT); only under a subreaper inside the tree
 * (a process of the tree that made itself one) can an orphan of a
 * covered branch be given a second feed (twice).
 *
 * Bounds: each feed is one event a direction, one fd and one ring per
 * CPU, pinned while it lives, and a tree can exec static images by the
 * thousand (make -j64 of a static compiler).  The first DT_KA_BIG
 * feeds an open has at once get the ring of any event (DT_TPEV_PAGES:
 * a static tool's burst of calls while the reader is off the CPU fits,
 * as with a root's feed), those after a small one (DT_TPEV_SMALL,
 * DT_TPEV_SMALLPAGES), which loses what a burst puts in it between two
 * reads, said as lost (ts_lost) as on any event; and an open has at
 * most dt_ka_max feeds at once (DT_KA_MAX; USERDT_TEST_KARM_MAX for
 * tests), past which the image is refused (ENOSPC) and the helper says
 * it is not traced (USERDT_TEST_KARM_FAIL=return: the return's open
 * fails, for tests).  So an open pins at most, per CPU, 2 * (DT_KA_BIG *
 * 129 + (DT_KA_MAX - DT_KA_BIG) * 17) pages (12 MB), and 2 * DT_KA_MAX
 * fds, which every open's feeds charge to the budget of the pid
 * followers (dt_perf_fds_charge(); past it, ENOSPC as at dt_ka_max)
 * lest a tree's static images take what pid filters are promised.
 * The longer road: PERF_EVENT_IOC_SET_OUTPUT of every
 * image's event into one ring per CPU and direction of the open (the
 * same CPU and clock, which these have), an fd per image but no pages;
 * not done, as the reader keys its rings by event (dt_tp_perf.c) and
 * closing an image's event would have to leave the shared ring mapped.
 *
 * Trust: the helper's word is a pid, and the work it costs dtd is
 * bounded before any file is read.  That pid must be traced by the
 * helper that asks (TracerPid), stopped, one thread (a process at its
 * exec stop has no other), with the helper's credentials, all four of
 * each, unless the helper is root (the socket's peer uid 0): a set-id
 * image's calls are another user's, whom a non-root helper could not
 * trace, and root's helper may hold anyone's; its ancestry must reach
 * the root of an open's tree; only then are its files read: for a
 * root helper its auxiliary vector (AT_SECURE, which the kernel keeps
 * out of the process's reach), else or when not secure the file it
 * runs, to find it static (/proc/PID/exe, never a path).
 * A pid is a process only with its start time: taken with the first
 * check, and read again, with the stop and the tracer, once the events
 * are open, still off (DT_TPEV_OFF): turned on only if the pid is the
 * held process's still, else closed, without pcbs, before any record
 * of the process that took the pid (killed while held, reused).  An
 * event lives until every process it covers has exited (dt_tpev_gone(),
 * swept at the next arm) or its open stops.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after creation
 *	[X]	dt_ka_mtx (taken after the core's configuration lock [K]
 *		in dt_ka_set(), alone in dt_ka_arm(), never the other way)
 *	[a]	atomic
 */
#include <linux/perf_event.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_clock.h"
#include "dt_ksys.h"
#include "dt_perfev.h"
#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_tp_kajudge.h"
#include "dt_tp_ksys.h"
#include "dt_tp_kt.h"
#include "dt_tp_perf.h"
#include "systab.h"

#define DT_KA_FILTERLEN	4096	/* a page: what the kernel takes */
#define DT_KA_MAX	64	/* feeds an open has at once, at most */
#define DT_KA_BIG	4	/* of them with a full ring */
/*
 * A held image's start is taken this long before the arm's clock read:
 * a record's time, from another clock, may land a little before it.
 * Its name, read from /proc while it is held, is the name at that read.
 */
#define DT_KA_ROOM_NS	1000000ULL

/* One static image's events, both directions. */
struct dt_ka_feed {
	struct dt_ka_feed	*af_next;		/* [X] */
	struct dt_ka_proc	 af_proc;		/* [I] */
	/*
	 * [I] its children at the arm, forked by the image before: they
	 * did not inherit the events; more than DT_KA_KIDS: which did is
	 * unknown, the feed covers none of them
	 */
	unsigned int		 af_nkids;
	struct dt_ka_proc	 af_kids[DT_KA_KIDS];
	struct dt_tpev		*af_ev[2];		/* [X] */
	/*
	 * [I] descriptors charged to dt_perf_fds_charge(), given back by
	 * dt_ka_close()
	 */
	long			 af_fds;
	/* [X] af_ev's callback states, while open */
	struct dt_kt_feed	*af_kf[2];
};

/* One open's, for a tree named with DTTR_F_HOOKED. */
struct dt_ka {
	struct dt_ka		*ka_next;		/* [X] */
	const struct dt_softc	*ka_sc;			/* [I] */
	struct dt_ka_proc	 ka_root;		/* [I] */
	unsigned int		 ka_non;		/* [X] started pcbs */
	/* [X] the Linux numbers of started pcbs, by direction */
	uint8_t			 ka_on[2][SYSTAB_LINUX_MAX / 8];
	struct dt_pcb		*ka_dp[2][SYSTAB_LINUX_MAX];	/* [X] */
	uint64_t		 ka_stacks[2];		/* [X] */
	struct dt_ka_feed	*ka_feeds;		/* [X] */
	unsigned int		 ka_nfeeds;		/* [X] on ka_feeds */
	bool			 ka_said;		/* [X] a failure said */
};

static pthread_mutex_t	 dt_ka_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_ka	*dt_kas;			/* [X] */
static atomic_uint	 dt_ka_nopen;			/* [a] on dt_kas */
static atomic_bool	 dt_ka_used;			/* [a] ever one */
static atomic_uint_fast64_t dt_ka_narmed;		/* [a] feeds opened */
static atomic_uint_fast64_t dt_ka_ncovered;		/* [a] not: covered */
static atomic_uint_fast64_t dt_ka_nfull;		/* [a] not: dt_ka_max */
static atomic_uint_fast64_t dt_ka_nsetid;		/* [a] set-id: opened */
static unsigned int	 dt_ka_max = DT_KA_MAX;	/* [I] */
static bool		 dt_ka_failret;		/* [I] a test's */
static unsigned int	 dt_ka_failstill;	/* [X] a test's */

/*
 * The reader drains what the events hold, then frees their feeds; the
 * descriptors go now (dt_tpev_close()), and so does their charge.  [X]
 */
static void
dt_ka_close(struct dt_ka_feed *af)
{
	unsigned int d;

	for (d = 0; d < 2; d++)
		if (af->af_ev[d] != NULL)
			dt_tpev_close(af->af_ev[d]);
	dt_perf_fds_uncharge(af->af_fds);
	free(af);
}

/* Close the feeds whose processes have all exited.  [X] */
static void
dt_ka_sweep(struct dt_ka *ka)
{
	struct dt_ka_feed **afp, *af;
	unsigned int d;
	bool gone;

	for (afp = &ka->ka_feeds; (af = *afp) != NULL; ) {
		gone = true;
		for (d = 0; d < 2; d++)
			if (af->af_ev[d] != NULL && !dt_tpev_gone(af->af_ev[d]))
				gone = false;
		if (!gone) {
			afp = &af->af_next;
			continue;
		}
		*afp = af->af_next;
		ka->ka_nfeeds--;
		dt_ka_close(af);
	}
}

/* dt_ksys_tree_fn of a hooked root's open.  [K] */
void
dt_ka_set(unsigned int p, struct dt_pcb *dp, bool on)
{
	char filter[DT_KA_FILTERLEN];
	struct dt_ka **kap, *ka;
	struct dt_ka_feed *af;
	struct dt_proc_stat ps;
	unsigned int lin, dir = p & 1;

	if (p / 2 >= SYSTAB_COUNT ||
	    (lin = systab[p / 2].se_linux) >= SYSTAB_LINUX_MAX)
		return;
	pthread_mutex_lock(&dt_ka_mtx);
	for (kap = &dt_kas; (ka = *kap) != NULL; kap = &ka->ka_next)
		if (ka->ka_sc == dp->dp_sc)
			break;
	if (!on) {
		if (ka == NULL)
			goto out;
		/* before the core's grace period, as dt_tp_ksystree.c's */
		for (af = ka->ka_feeds; af != NULL; af = af->af_next)
			if (af->af_kf[dir] != NULL)
				dt_kt_feed_pcb(af->af_kf[dir], lin, NULL);
		if (!(ka->ka_on[dir][lin / 8] & (1 << (lin % 8))))
			goto out;
		ka->ka_on[dir][lin / 8] &= ~(1 << (lin % 8));
		ka->ka_dp[dir][lin] = NULL;
		if (--ka->ka_non > 0)
			goto out;
		*kap = ka->ka_next;
		atomic_fetch_sub(&dt_ka_nopen, 1);
		while ((af = ka->ka_feeds) != NULL) {
			ka->ka_feeds = af->af_next;
			dt_ka_close(af);
		}
		free(ka);
		goto out;
	}
	if (ka == NULL) {
		if ((ka = calloc(1, sizeof(*ka))) == NULL) {
			fprintf(stderr, "dtd: syscall: raw_syscalls: cannot "
			    "follow the tree of %d: %s\n",
			    (int)dt_sc_tree(dp->dp_sc), strerror(ENOMEM));
			goto out;
		}
		ka->ka_sc = dp->dp_sc;
		ka->ka_root.kp_pid = dt_sc_tree(dp->dp_sc);
		/*
		 * The root by its start too: its pid, once it exited,
		 * is anyone's.  Gone already: no process has it as an
		 * ancestor (start times are never UINT64_MAX).
		 */
		ka->ka_root.kp_start = dt_proc_stat(ka->ka_root.kp_pid,
		    &ps) == 0 ? ps.ps_start : UINT64_MAX;
		ka->ka_next = dt_kas;
		dt_kas = ka;
		atomic_fetch_add(&dt_ka_nopen, 1);
		atomic_store(&dt_ka_used, true);
	}
	if (!(ka->ka_on[dir][lin / 8] & (1 << (lin % 8)))) {
		ka->ka_on[dir][lin / 8] |= 1 << (lin % 8);
		ka->ka_non++;
	}
	ka->ka_dp[dir][lin] = dp;
	ka->ka_stacks[dir] |= dp->dp_evtflags & (DTEVT_KSTACK | DTEVT_USTACK);
	/*
	 * A pcb started after a static image was armed (an open's start
	 * together: none) reaches it too, its call let through; a feed of
	 * the other direction alone does not grow one of this.
	 */
	dt_kt_idfilter(ka->ka_on[dir], filter, sizeof(filter));
	for (af = ka->ka_feeds; af != NULL; af = af->af_next) {
		if (af->af_kf[dir] == NULL)
			continue;
		(void)dt_tpev_filter(af->af_ev[dir], filter[0] != '\0' ?
		    filter : "id >= 0");
		dt_kt_feed_pcb(af->af_kf[dir], lin, dp);
	}
out:
	pthread_mutex_unlock(&dt_ka_mtx);
}

/*
 * The live feed of ka that covers the process anc[0] names, opened on
 * it or on an ancestor after the branch of anc[0] left it, or NULL.
 * [X]
 */
static struct dt_ka_feed *
dt_ka_covered(struct dt_ka *ka, const struct dt_ka_proc *anc,
    unsigned int n)
{
	struct dt_ka_feed *af;
	const struct dt_ka_proc *br;
	unsigned int k, i;
	bool before;

	for (af = ka->ka_feeds; af != NULL; af = af->af_next)
		for (k = 0; k < n; k++) {
			if (anc[k].kp_pid != af->af_proc.kp_pid ||
			    anc[k].kp_start != af->af_proc.kp_start)
				continue;
			if (k == 0)
				return af;
			/* which were forked before is unknown: not these */
			if (af->af_nkids > DT_KA_KIDS)
				continue;
			br = &anc[k - 1];	/* the branch anc[0] is on */
			before = false;
			for (i = 0; i < af->af_nkids; i++)
				if (af->af_kids[i].kp_pid == br->kp_pid &&
				    af->af_kids[i].kp_start == br->kp_start)
					before = true;
			if (!before)
				return af;
		}
	return NULL;
}

/*
 * Tell af's callbacks that pid's image, held now at its exec, is no
 * hook's from now on: a set-id image's loader ignored LD_PRELOAD, but
 * its file has one (PT_INTERP), and the ingest retires the ring of the
 * hooked image before it later than the exec, so the callback alone
 * would drop its first calls as the hook's, or all of a short run's.
 * False when a callback could not take it.  [X]
 */
static bool
dt_ka_held_by(struct dt_ka_feed *af, pid_t pid, uint64_t now)
{
	unsigned int d;
	bool ok = true;

	for (d = 0; d < 2; d++)
		if (af->af_kf[d] != NULL &&
		    !dt_kt_feed_held(af->af_kf[d], pid, now))
			ok = false;
	return ok;
}

/*
 * Say once an open why an image of its tree went without a feed: a
 * tree of many static images would say it for each.  [X]
 */
static void
dt_ka_say(struct dt_ka *ka, pid_t pid, bool secure, int error)
{
	if (ka->ka_said)
		return;
	ka->ka_said = true;
	if (error == ENOSPC)
		fprintf(stderr, "dtd: syscall: raw_syscalls: the tree of %d "
		    "has %u static images followed at once already: %d and "
		    "those after it while so are not traced\n",
		    (int)ka->ka_root.kp_pid, dt_ka_max, (int)pid);
	else if (error == EMLINK)
		fprintf(stderr, "dtd: syscall: raw_syscalls: the perf "
		    "descriptors pid followers may hold are taken: %d in the "
		    "tree of %d and those after it while so are not "
		    "traced\n", (int)pid, (int)ka->ka_root.kp_pid);
	else
		fprintf(stderr, "dtd: syscall: raw_syscalls: cannot follow "
		    "the %s image of %d in the tree of %d: %s\n",
		    secure ? "set-id" : "static", (int)pid,
		    (int)ka->ka_root.kp_pid, strerror(error));
}

/*
 * Charge fds descriptors of a feed to the budget the pid followers
 * share (dt_perf_fds_charge()): a tree's static images by the thousand
 * would otherwise take what the pid filters and profiles are promised.
 * Past it, the gone feeds of every open go first (an exited image's
 * fds are held until a sweep) and it is asked again.  [X]
 */
static bool
dt_ka_charge(long fds)
{
	struct dt_ka *ka;

	if (dt_perf_fds_charge(fds))
		return true;
	for (ka = dt_kas; ka != NULL; ka = ka->ka_next)
		dt_ka_sweep(ka);
	return dt_perf_fds_charge(fds);
}

/*
 * Open ka's events on the static (secure: set-id) image of anc[0],
 * which helper holds, judged at ns: 0, or the errno that left it
 * without any.  Every
 * direction that has a started pcb, or none: a feed of entries alone
 * would count calls whose returns go unseen, while the helper says the
 * image is read from the kernel.  [X]
 */
static int
dt_ka_open(struct dt_ka *ka, pid_t helper, const struct dt_ka_proc *anc,
    const struct dt_ka_proc *kids, unsigned int nkids, uint64_t ns,
    const char *comm, bool secure)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT };
	char filter[DT_KA_FILTERLEN];
	struct dt_ka_feed *af;
	struct dt_kt_feed *kf;
	unsigned int d, lin, ndir = 0, nopen = 0;
	uint64_t small = 0;
	long ncpu;
	int error = 0;

	/*
	 * The gone first, where the count decides: only the live count
	 * against the bounds.  Not always: after the open (dt_ka_arm())
	 * is cheaper when all are gone.
	 */
	if (ka->ka_nfeeds >= DT_KA_BIG || ka->ka_nfeeds >= dt_ka_max)
		dt_ka_sweep(ka);
	if (ka->ka_nfeeds >= dt_ka_max) {
		atomic_fetch_add(&dt_ka_nfull, 1);
		error = ENOSPC;
		goto fail;
	}
	if ((af = calloc(1, sizeof(*af))) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	/* an event a direction, a descriptor a CPU: dt_tpev_open_on()'s */
	for (d = 0; d < 2; d++)
		for (lin = 0; lin < SYSTAB_LINUX_MAX; lin++)
			if (ka->ka_dp[d][lin] != NULL) {
				ndir++;
				break;
			}
	if ((ncpu = sysconf(_SC_NPROCESSORS_CONF)) <= 0)
		ncpu = 1;
	if (!dt_ka_charge((long)ndir * ncpu)) {
		free(af);
		atomic_fetch_add(&dt_ka_nfull, 1);
		error = EMLINK;		/* said as the budget; ENOSPC told */
		goto fail;
	}
	/* from here on dt_ka_close() gives it back, on every path */
	af->af_fds = (long)ndir * ncpu;
	af->af_proc = anc[0];
	if (ka->ka_nfeeds >= DT_KA_BIG)
		small = DT_TPEV_SMALL;
	af->af_nkids = nkids;
	memcpy(af->af_kids, kids, (nkids > DT_KA_KIDS ? DT_KA_KIDS : nkids) *
	    sizeof(kids[0]));
	for (d = 0; d < 2 && error == 0; d++) {
		dt_kt_idfilter(ka->ka_on[d], filter, sizeof(filter));
		for (lin = 0; lin < SYSTAB_LINUX_MAX; lin++)
			if (ka->ka_dp[d][lin] != NULL)
				break;
		if (lin == SYSTAB_LINUX_MAX)
			continue;
		if (d == 1 && dt_ka_failret) {
			error = EMFILE;
			break;
		}
		if ((kf = dt_kt_feed_new(d, ka->ka_root.kp_pid)) == NULL ||
		    !dt_kt_feed_static(kf, anc[0].kp_pid, ns, comm,
		    ns + DT_KA_ROOM_NS)) {
			if (kf != NULL)
				dt_kt_feed_release(kf);
			error = ENOMEM;
			break;
		}
		for (; lin < SYSTAB_LINUX_MAX; lin++)
			if (ka->ka_dp[d][lin] != NULL)
				dt_kt_feed_pcb(kf, lin, ka->ka_dp[d][lin]);
		pmu.tpm_config = (uint64_t)dt_tp_ksys_evid(d);
		/*
		 * kf is the event's from here on: after a failure, gone.
		 * Off until dt_ka_still() has said the pid is still the
		 * held process's: on whatever had it by the open, not one
		 * record of another process's is written.
		 */
		af->af_ev[d] = dt_tpev_open_task(&pmu, ka->ka_stacks[d] |
		    DT_TPEV_MMAPS | DT_TPEV_OFF | small,
		    anc[0].kp_pid, dt_kt_feed_cb, kf, dt_kt_feed_release,
		    &error);
		if (af->af_ev[d] == NULL) {
			if (error == 0)
				error = ENODEV;
			break;
		}
		af->af_kf[d] = kf;
		nopen++;
		/* held at its exec: no call of it before the filter is in */
		if (filter[0] != '\0')
			(void)dt_tpev_filter(af->af_ev[d], filter);
	}
	if (error == 0 && nopen == 0)
		error = ENOENT;		/* no started pcb: nothing to feed */
	/*
	 * The events are on whatever task had the pid at the open: if it
	 * is not the one held (killed while held, its pid reused), they
	 * would feed a stranger's calls.  Its start time now, and still
	 * held by the helper, say it was; only then on, both directions
	 * while it is still held (no call seen half).
	 * USERDT_TEST_KARM_STILL: a test's first checks said failed.
	 */
	if (error == 0 && (dt_ka_failstill > 0 ||
	    !dt_ka_still(helper, &anc[0]))) {
		if (dt_ka_failstill > 0)
			dt_ka_failstill--;
		error = ESRCH;
	}
	for (d = 0; d < 2 && error == 0; d++)
		if (af->af_ev[d] != NULL)
			error = dt_tpev_enable(af->af_ev[d]);
	if (error != 0) {
		/*
		 * The reader's last drain of the closed events hands the
		 * callback what they hold: with no pcb it reaches no one
		 * (a direction enabled before the other's failed).
		 */
		for (d = 0; d < 2; d++)
			if (af->af_kf[d] != NULL)
				for (lin = 0; lin < SYSTAB_LINUX_MAX; lin++)
					dt_kt_feed_pcb(af->af_kf[d], lin, NULL);
		dt_ka_close(af);
		goto fail;
	}
	af->af_next = ka->ka_feeds;
	ka->ka_feeds = af;
	ka->ka_nfeeds++;
	return 0;
fail:
	if (error != ESRCH)
		dt_ka_say(ka, anc[0].kp_pid, secure, error);
	/* the helper's word: the bound of either kind, not traced */
	return error == EMLINK ? ENOSPC : error;
}

/*
 * Whether an open's tree has the process of ancestry anc (its root by
 * pid and start time among them): where in anc, or n.  [X]
 */
static unsigned int
dt_ka_root(const struct dt_ka *ka, const struct dt_ka_proc *anc,
    unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		if (anc[k].kp_pid == ka->ka_root.kp_pid &&
		    anc[k].kp_start == ka->ka_root.kp_start)
			break;
	return k;
}

/* Whether any open's tree has the process of ancestry anc.  No lock. */
static bool
dt_ka_intree(const struct dt_ka_proc *anc, unsigned int n)
{
	const struct dt_ka *ka;
	bool in = false;

	pthread_mutex_lock(&dt_ka_mtx);
	for (ka = dt_kas; ka != NULL && !in; ka = ka->ka_next)
		in = dt_ka_root(ka, anc, n) < n;
	pthread_mutex_unlock(&dt_ka_mtx);
	return in;
}

/*
 * dt_ksys_arm_fn: an ingest serve worker, no lock held.  The cheap
 * checks first, the file and the children only for a process of a
 * tree: anyone may ask, as often as the ingest queue of its user lets
 * it (dt_ingest.c).
 */
static int
dt_ka_arm(pid_t helper, uid_t uid, gid_t gid, pid_t pid)
{
	struct dt_ka_proc anc[DT_KA_DEPTH], kids[DT_KA_KIDS];
	char path[64], comm[32];
	struct dt_ka *ka;
	struct dt_ka_feed *af;
	unsigned int n, nkids;
	uint64_t ns, now, start;
	int error, rv = ENOENT;
	bool secure, dropped;

	if (pid <= 0)
		return EINVAL;
	/*
	 * A peer outside dtd's pid namespace has no pid here (0), and a
	 * process whose tracer is outside it says TracerPid 0: that pair
	 * would pass as held.
	 */
	if (helper <= 0)
		return EPERM;
	if ((error = dt_ka_held(helper, uid, gid, pid, &start)) != 0)
		return error;
	/*
	 * The helper says the image's calls are read from the kernel only
	 * on 0: so 0 only when an open has them, else why not.
	 */
	if (atomic_load(&dt_ka_nopen) == 0)
		return ENOENT;
	/* a few stat files: bounded by DT_KA_DEPTH */
	if ((n = dt_ka_ancestry(pid, anc)) == 0 || anc[0].kp_start != start)
		return ESRCH;
	if (!dt_ka_intree(anc, n))
		return ENOENT;
	/*
	 * A non-root helper's tracee is never secure (the kernel gives it
	 * no credentials under ptrace): its vector is not read.  Unread,
	 * a root helper's is taken as not secure: a static image is still
	 * followed, a dynamic one left to its hooks.
	 */
	secure = uid == 0 && dt_proc_secure(pid) == 1;
	if (!secure && !dt_kt_exe_static(pid))
		return ENOEXEC;
	/* the kernel's choice at the exec: not the same as secure */
	dropped = dt_ka_dropped(pid);
	nkids = dt_ka_kids(pid, kids);
	/* held at its exec: the new image's name, already set */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (dt_proc_read(path, comm, sizeof(comm)) <= 0)
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	/*
	 * Its calls start after the helper's answer; a record's time, from
	 * another clock, may land a little before now: a millisecond's room.
	 */
	now = dt_clock_ns(CLOCK_REALTIME);
	ns = now - DT_KA_ROOM_NS;
	pthread_mutex_lock(&dt_ka_mtx);
	for (ka = dt_kas; ka != NULL; ka = ka->ka_next) {
		/* the opens may have changed since dt_ka_intree() */
		if (dt_ka_root(ka, anc, n) == n)
			continue;
		if (!dropped && (af = dt_ka_covered(ka, anc, n)) != NULL &&
		    dt_ka_held_by(af, pid, now)) {
			atomic_fetch_add(&dt_ka_ncovered, 1);
			rv = 0;
		} else if ((error = dt_ka_open(ka, helper, anc, kids, nkids,
		    ns, comm, secure)) == 0 || rv != 0) {
			rv = error;
			if (error == 0)
				atomic_fetch_add(secure ? &dt_ka_nsetid :
				    &dt_ka_narmed, 1);
		}
		/*
		 * The gone go after the new one is open: closing the last
		 * task event turns the kernel's perf hooks of the scheduler
		 * off, and the next open turns them on again through an RCU
		 * grace period (20-60 ms here), which the held exec would
		 * wait for.
		 */
		dt_ka_sweep(ka);
	}
	pthread_mutex_unlock(&dt_ka_mtx);
	return rv;
}

void
dt_ka_lat_said(struct dt_pcb *dp, unsigned int cpu)
{
	const struct dt_aggspec *as;

	/* fixed while dp records (dt_prov.h): read here without a lock */
	for (as = dt_aggspec_next(dp, NULL); as != NULL;
	    as = dt_aggspec_next(dp, as))
		if (dt_aggspec_req(as)->dtas_vfield == DTF_LAT) {
			dt_pcb_count_dropevt(dp, cpu, 1);
			return;
		}
}

/* From the provider's init: [I]. */
void
dt_ka_init(void)
{
	const char *v;

	/* a test's bound it can reach with a few processes */
	if ((v = getenv("USERDT_TEST_KARM_MAX")) != NULL && atoi(v) > 0 &&
	    atoi(v) < DT_KA_MAX)
		dt_ka_max = (unsigned int)atoi(v);
	/* a return's event that will not open, after the entry's did */
	v = getenv("USERDT_TEST_KARM_FAIL");
	dt_ka_failret = v != NULL && strcmp(v, "return") == 0;
	/* the first checks after an open find the pid another's */
	if ((v = getenv("USERDT_TEST_KARM_STILL")) != NULL && atoi(v) > 0)
		dt_ka_failstill = (unsigned int)atoi(v);
	dt_ksys_tree_arm(dt_ka_arm);
}

/* The provider's fini, every open closed: the counters are final. */
void
dt_ka_fini(void)
{
	uint64_t taken, hooked;

	if (!atomic_load(&dt_ka_used))
		return;
	dt_kt_counts(&taken, &hooked);
	/* the set-id count last: what the static counts said stays so */
	fprintf(stderr, "dtd: syscall: hooked trees: %llu static execs "
	    "followed, %llu covered already, %llu refused at the bound; "
	    "kernel feeds of trees: %llu calls given, %llu of hooked "
	    "processes dropped; set-id execs followed: %llu\n",
	    (unsigned long long)atomic_load(&dt_ka_narmed),
	    (unsigned long long)atomic_load(&dt_ka_ncovered),
	    (unsigned long long)atomic_load(&dt_ka_nfull),
	    (unsigned long long)taken, (unsigned long long)hooked,
	    (unsigned long long)atomic_load(&dt_ka_nsetid));
}
