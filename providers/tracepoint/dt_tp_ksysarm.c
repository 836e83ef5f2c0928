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
 * on at once and inherited by what it forks, fed to dt_tp_ksystree.c's
 * callback with the image already judged static.  Every call of the
 * image is counted from its first, once; the dynamic processes of the
 * tree pay nothing per call, their execs nothing more than the helper's
 * stop they had already.  What a static image forks and execs is judged
 * by that callback as on a root's feed (a dynamic child's calls come
 * through perf and are dropped as the hooks').
 *
 * Once: a process a live feed already covers (it, or the ancestor the
 * feed was opened on after the process's branch was forked from it) is
 * not given a second (a static image's dynamic child exec'ing another
 * static one).  The tree is told by the parents /proc gives, up to
 * DT_KA_DEPTH: a process orphaned out of its branch before its exec
 * (re-parented to the launcher's subreaper) is not followed, and one
 * orphaned out of a covered branch is given a second feed (twice).
 *
 * Trust: the helper's word is a pid.  That pid must be traced by the
 * helper that asks (TracerPid), stopped, with the helper's
 * credentials, all four of each (a set-id image is never followed:
 * the kernel would drop the events at its exec anyway), and it must
 * run a static image by the file it runs (/proc/PID/exe, never a path),
 * in the tree an open named.  An event lives until every process it
 * covers has exited (dt_tpev_gone(), swept at the next arm) or its open
 * stops.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after creation
 *	[X]	dt_ka_mtx (taken after the core's configuration lock [K]
 *		in dt_ka_set(), alone in dt_ka_arm(), never the other way)
 *	[a]	atomic
 */
#include <linux/perf_event.h>

#include <dirent.h>
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
#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_tp_ksys.h"
#include "dt_tp_kt.h"
#include "dt_tp_perf.h"
#include "systab.h"

#define DT_KA_DEPTH	64	/* ancestors looked at for the tree */
#define DT_KA_KIDS	64	/* children a process had at its arm */
#define DT_KA_MAXIDS	64	/* numbers a filter names, at most */
#define DT_KA_FILTERLEN	4096	/* a page: what the kernel takes */

/* A process, as /proc names it for as long as it lives. */
struct dt_ka_proc {
	pid_t		 kp_pid;
	uint64_t	 kp_start;	/* starttime, ticks since boot */
};

/* One static image's events, both directions. */
struct dt_ka_feed {
	struct dt_ka_feed	*af_next;		/* [X] */
	struct dt_ka_proc	 af_proc;		/* [I] */
	/*
	 * [I] its children at the arm, forked by the image before: they
	 * did not inherit the events; more than DT_KA_KIDS: the rest
	 * taken as covered
	 */
	unsigned int		 af_nkids;
	struct dt_ka_proc	 af_kids[DT_KA_KIDS];
	struct dt_tpev		*af_ev[2];		/* [X] */
	struct dt_kt_feed	*af_kf[2];		/* [X] af_ev's, while open */
};

/* One open's, for a tree named with DTTR_F_HOOKED. */
struct dt_ka {
	struct dt_ka		*ka_next;		/* [X] */
	const struct dt_softc	*ka_sc;			/* [I] */
	pid_t			 ka_root;		/* [I] */
	unsigned int		 ka_non;		/* [X] started pcbs */
	uint8_t			 ka_on[2][SYSTAB_LINUX_MAX / 8];	/* [X] */
	struct dt_pcb		*ka_dp[2][SYSTAB_LINUX_MAX];	/* [X] */
	uint64_t		 ka_stacks[2];		/* [X] */
	struct dt_ka_feed	*ka_feeds;		/* [X] */
	bool			 ka_said;		/* [X] a failure said */
};

static pthread_mutex_t	 dt_ka_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_ka	*dt_kas;			/* [X] */
static atomic_uint	 dt_ka_nopen;			/* [a] on dt_kas */
static atomic_bool	 dt_ka_used;			/* [a] ever one */
static atomic_uint_fast64_t dt_ka_narmed;		/* [a] feeds opened */
static atomic_uint_fast64_t dt_ka_ncovered;		/* [a] not: covered */

/*
 * The filter of ka's direction dir: "id == N || ...", or "" (every
 * call) past DT_KA_MAXIDS numbers or a page.  [X]
 */
static void
dt_ka_filter(const struct dt_ka *ka, unsigned int dir, char *buf,
    size_t len)
{
	unsigned int i, n = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (i = 0; i < SYSTAB_LINUX_MAX; i++) {
		if (!(ka->ka_on[dir][i / 8] & (1 << (i % 8))))
			continue;
		if (++n > DT_KA_MAXIDS) {
			buf[0] = '\0';
			return;
		}
		off += (size_t)snprintf(buf + off, len - off, "%sid == %u",
		    off == 0 ? "" : " || ", i);
		if (off >= len) {
			buf[0] = '\0';
			return;
		}
	}
}

/* The reader drains what the events hold, then frees their feeds.  [X] */
static void
dt_ka_close(struct dt_ka_feed *af)
{
	unsigned int d;

	for (d = 0; d < 2; d++)
		if (af->af_ev[d] != NULL)
			dt_tpev_close(af->af_ev[d]);
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
		ka->ka_root = dt_sc_tree(dp->dp_sc);
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
	dt_ka_filter(ka, dir, filter, sizeof(filter));
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
 * Whether pid is held by helper, at a ptrace stop, with helper's user
 * and group as all four of its ids (no set-id image), as its process's
 * leader: 0, else EPERM (ESRCH: gone).  /proc's word, not the helper's.
 */
static int
dt_ka_held(pid_t helper, uid_t uid, gid_t gid, pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long v[4];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (dt_proc_read(path, buf, sizeof(buf)) <= 0)
		return ESRCH;
	if ((p = strstr(buf, "\nState:\t")) == NULL || p[8] != 't' ||
	    (p = strstr(buf, "\nTgid:\t")) == NULL || atol(p + 7) != pid ||
	    (p = strstr(buf, "\nTracerPid:\t")) == NULL ||
	    atol(p + 12) != helper)
		return EPERM;
	if ((p = strstr(buf, "\nUid:\t")) == NULL || sscanf(p + 6,
	    "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return EPERM;
	for (i = 0; i < 4; i++)
		if (v[i] != (unsigned long)uid)
			return EPERM;
	if ((p = strstr(buf, "\nGid:\t")) == NULL || sscanf(p + 6,
	    "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return EPERM;
	for (i = 0; i < 4; i++)
		if (v[i] != (unsigned long)gid)
			return EPERM;
	return 0;
}

/* pid and its ancestors, nearest first, into anc: how many.  Any thread. */
static unsigned int
dt_ka_ancestry(pid_t pid, struct dt_ka_proc *anc)
{
	struct dt_proc_stat ps;
	unsigned int n = 0;

	while (pid > 0 && n < DT_KA_DEPTH && dt_proc_stat(pid, &ps) == 0) {
		anc[n].kp_pid = pid;
		anc[n].kp_start = ps.ps_start;
		n++;
		if (pid == 1)
			break;
		pid = ps.ps_ppid;
	}
	return n;
}

/*
 * pid's children now, from each thread's list (pid is stopped, so it
 * forks none meanwhile); DT_KA_KIDS + 1: more.  Any thread.
 */
static unsigned int
dt_ka_kids(pid_t pid, struct dt_ka_proc *kids)
{
	char path[96], buf[4096], *p, *e;
	struct dt_proc_stat ps;
	struct dirent *de;
	unsigned int n = 0;
	long k;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n <= DT_KA_KIDS) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children",
		    (int)pid, de->d_name);
		if (dt_proc_read(path, buf, sizeof(buf)) <= 0)
			continue;
		for (p = buf; n <= DT_KA_KIDS; p = e) {
			k = strtol(p, &e, 10);
			if (e == p || k <= 0)
				break;
			if (n == DT_KA_KIDS) {
				n++;	/* more: said by the count */
				break;
			}
			if (dt_proc_stat((pid_t)k, &ps) == 0) {
				kids[n].kp_pid = (pid_t)k;
				kids[n].kp_start = ps.ps_start;
				n++;
			}
		}
	}
	closedir(d);
	return n;
}

/*
 * Whether a live feed of ka covers the process anc[0] names: opened on
 * it, or on an ancestor after the branch of anc[0] left it.  [X]
 */
static bool
dt_ka_covered(const struct dt_ka *ka, const struct dt_ka_proc *anc,
    unsigned int n)
{
	const struct dt_ka_feed *af;
	unsigned int k, i;
	bool before;

	for (af = ka->ka_feeds; af != NULL; af = af->af_next)
		for (k = 0; k < n; k++) {
			if (anc[k].kp_pid != af->af_proc.kp_pid ||
			    anc[k].kp_start != af->af_proc.kp_start)
				continue;
			if (k == 0 || af->af_nkids > DT_KA_KIDS)
				return true;
			before = false;
			for (i = 0; i < af->af_nkids; i++)
				if (af->af_kids[i].kp_pid == anc[k - 1].kp_pid &&
				    af->af_kids[i].kp_start ==
				    anc[k - 1].kp_start)
					before = true;
			if (!before)
				return true;
		}
	return false;
}

/*
 * Open ka's events on the static image of anc[0], judged at ns: 0, or
 * the errno that left it without any.  [X]
 */
static int
dt_ka_open(struct dt_ka *ka, const struct dt_ka_proc *anc,
    const struct dt_ka_proc *kids, unsigned int nkids, uint64_t ns,
    const char *comm)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT };
	char filter[DT_KA_FILTERLEN];
	struct dt_ka_feed *af;
	struct dt_kt_feed *kf;
	unsigned int d, lin, nopen = 0;
	int error = ENOMEM;

	if ((af = calloc(1, sizeof(*af))) == NULL)
		goto fail;
	af->af_proc = anc[0];
	af->af_nkids = nkids;
	memcpy(af->af_kids, kids, (nkids > DT_KA_KIDS ? DT_KA_KIDS : nkids) *
	    sizeof(kids[0]));
	for (d = 0; d < 2; d++) {
		dt_ka_filter(ka, d, filter, sizeof(filter));
		for (lin = 0; lin < SYSTAB_LINUX_MAX; lin++)
			if (ka->ka_dp[d][lin] != NULL)
				break;
		if (lin == SYSTAB_LINUX_MAX)
			continue;
		if ((kf = dt_kt_feed_new(d, ka->ka_root)) == NULL ||
		    !dt_kt_feed_static(kf, anc[0].kp_pid, ns, comm)) {
			if (kf != NULL)
				dt_kt_feed_release(kf);
			error = ENOMEM;
			continue;
		}
		for (; lin < SYSTAB_LINUX_MAX; lin++)
			if (ka->ka_dp[d][lin] != NULL)
				dt_kt_feed_pcb(kf, lin, ka->ka_dp[d][lin]);
		pmu.tpm_config = (uint64_t)dt_tp_ksys_evid(d);
		/* kf is the event's from here on: after a failure, gone */
		af->af_ev[d] = dt_tpev_open_task(&pmu, ka->ka_stacks[d] |
		    DT_TPEV_MMAPS | DT_TPEV_NOW, anc[0].kp_pid, dt_kt_feed_cb,
		    kf, dt_kt_feed_release, &error);
		if (af->af_ev[d] == NULL)
			continue;
		af->af_kf[d] = kf;
		nopen++;
		/* held at its exec: no call of it before the filter is in */
		if (filter[0] != '\0')
			(void)dt_tpev_filter(af->af_ev[d], filter);
	}
	if (nopen == 0)
		goto fail;
	af->af_next = ka->ka_feeds;
	ka->ka_feeds = af;
	atomic_fetch_add(&dt_ka_narmed, 1);
	return 0;
fail:
	free(af);
	/* once an open: a tree of many static images would say it each */
	if (!ka->ka_said)
		fprintf(stderr, "dtd: syscall: raw_syscalls: cannot follow "
		    "the static image of %d in the tree of %d: %s\n",
		    (int)anc[0].kp_pid, (int)ka->ka_root, strerror(error));
	ka->ka_said = true;
	return error != 0 ? error : ENOMEM;
}

/* dt_ksys_arm_fn: an ingest serve worker, no lock held. */
static int
dt_ka_arm(pid_t helper, uid_t uid, gid_t gid, pid_t pid)
{
	struct dt_ka_proc anc[DT_KA_DEPTH], kids[DT_KA_KIDS];
	char path[64], comm[32];
	struct dt_ka *ka;
	unsigned int n, nkids, k;
	uint64_t ns;
	int error, rv = ENOENT;

	if (pid <= 0)
		return EINVAL;
	if ((error = dt_ka_held(helper, uid, gid, pid)) != 0)
		return error;
	/*
	 * The helper says the image's calls are read from the kernel only
	 * on 0: so 0 only when an open has them, else why not.
	 */
	if (atomic_load(&dt_ka_nopen) == 0)
		return ENOENT;
	if (!dt_kt_exe_static(pid))
		return ENOEXEC;
	n = dt_ka_ancestry(pid, anc);
	nkids = n > 0 ? dt_ka_kids(pid, kids) : 0;
	/* held at its exec: the new image's name, already set */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (dt_proc_read(path, comm, sizeof(comm)) <= 0)
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	/*
	 * Its calls start after the helper's answer; a record's time, from
	 * another clock, may land a little before now: a millisecond's room.
	 */
	ns = dt_clock_ns(CLOCK_REALTIME) - 1000000ULL;
	pthread_mutex_lock(&dt_ka_mtx);
	for (ka = dt_kas; ka != NULL && n > 0; ka = ka->ka_next) {
		for (k = 0; k < n; k++)
			if (anc[k].kp_pid == ka->ka_root)
				break;
		if (k == n)
			continue;
		if (dt_ka_covered(ka, anc, n)) {
			atomic_fetch_add(&dt_ka_ncovered, 1);
			rv = 0;
		} else if ((error = dt_ka_open(ka, anc, kids, nkids, ns,
		    comm)) == 0 || rv != 0)
			rv = error;
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
	fprintf(stderr, "dtd: syscall: hooked trees: %llu static execs "
	    "followed, %llu covered already; kernel feeds of trees: %llu "
	    "calls given, %llu of hooked processes dropped\n",
	    (unsigned long long)atomic_load(&dt_ka_narmed),
	    (unsigned long long)atomic_load(&dt_ka_ncovered),
	    (unsigned long long)taken, (unsigned long long)hooked);
}
