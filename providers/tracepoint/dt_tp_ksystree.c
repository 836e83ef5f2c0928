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
 * One process tree's system calls from the kernel, for the syscall
 * probes an open enabled with DTEVT_TREE (dtvar.h, dt_ksys.h): the
 * calls of the tree's processes that no hook records, a statically
 * linked command's, which btrace -c would otherwise not see at all.
 *
 * One raw_syscalls:sys_enter and one sys_exit event per open, not one
 * per pcb (the kernel evaluates every event of a tracepoint at every
 * call: a script's hundred probes would cost a hundred evaluations a
 * call), opened on the tree's root as dt_tp_tree.c's (its exec enables
 * them, what it forks inherits them), under a kernel filter on the
 * calls the open's tree pcbs record (past DT_KT_MAXIDS of them, or
 * when the filter does not fit a page, every call of the tree).  The
 * pcbs of an open start together (DTIOCRECORD), so the first start
 * opens the event for the calls of those that follow (dt_ksys_index()
 * on dp_snext) and the others find theirs already kept; one that does
 * not (or wants more stacks) reopens it, closed first: a gap, never an
 * event twice.  A stop leaves the filter as it is; the last closes.
 *
 * A record goes to the open's started pcb of its call alone, unless
 * its process is one the library records (dt_ksys_traced()): its hooks
 * give those, with strings.  An image a process of the tree exec'd
 * that mapped no loader beside its own file (DT_TPEV_MMAPS: static) is
 * no library's from its exec on, though the ingest transport retires
 * its traced predecessor's ring later, and dt_ksys_traced() says so
 * until then (btrace -c's shell exec'ing a static command): its calls
 * are the kernel's, by the latest DT_KT_NIMG execs the feed saw.  The
 * system-wide feed (dt_tp_ksys.c) gives
 * nothing to these pcbs (DTEVT_TREE implies DTEVT_LAUNCHED), so no call
 * is counted twice.  perf's lost records are charged to every started
 * pcb of the direction, whose they were being unknown.
 *
 * Lifetime: the callback's state (struct dt_kt_feed) is its event's,
 * freed by the reader once done with it (dt_tpev_open_task()'s
 * release).  A stop clears its pcb's slot before the core's grace
 * period, so a callback that saw it set still has its pcb, and records
 * drained after the stop (or after a reopen, from the old event) reach
 * no pcb, nor a later start of the same one, which has a feed of its
 * own.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after creation
 *	[K]	the core's configuration lock (dt_ksys_tree_fn)
 *	[a]	atomic: written under [K], read by the perf reader thread
 */
#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_ksys.h"
#include "dt_prov.h"
#include "dt_tp_ksys.h"
#include "dt_tp_perf.h"
#include "systab.h"

#define DT_KT_MAXIDS	64	/* numbers a filter names, at most */
#define DT_KT_FILTERLEN	4096	/* a page: what the kernel takes */

#define DT_KT_NIMG	64	/* the tree's latest execs kept */

/* An image a process of the tree exec'd, by what it mapped. */
struct dt_kt_img {
	pid_t			 ki_pid;	/* [R] 0: a free slot */
	uint64_t		 ki_exec;	/* [R] its exec's time */
	uint64_t		 ki_file;	/* [R] its file's hash, 0: none */
	bool			 ki_loader;	/* [R] another file: ld.so */
};

/* What the reader's callback reads: one event's. */
struct dt_kt_feed {
	unsigned int		 kf_dir;	/* [I] 0 entry, 1 return */
	/* [a] the started pcb of each Linux number, NULL: none */
	struct dt_pcb *_Atomic	 kf_dp[SYSTAB_LINUX_MAX];
	struct dt_kt_img	 kf_img[DT_KT_NIMG];	/* [R] */
	unsigned int		 kf_nextimg;	/* [R] the slot to take */
};

/* One open's feed of one direction. */
struct dt_kt {
	struct dt_kt		*kt_next;	/* [K] on dt_kts */
	const struct dt_softc	*kt_sc;		/* [I] */
	unsigned int		 kt_dir;	/* [I] */
	struct dt_tpev		*kt_ev;		/* [K] NULL: not open */
	struct dt_kt_feed	*kt_feed;	/* [K] kt_ev's, while open */
	uint64_t		 kt_evflags;	/* [K] stacks kt_ev walks */
	bool			 kt_all;	/* [K] kt_ev keeps every call */
	bool			 kt_failed;	/* [K] said; not retried */
	unsigned int		 kt_non;	/* [K] started pcbs */
	uint8_t			 kt_keep[SYSTAB_LINUX_MAX / 8];	/* [K] */
};

static struct dt_kt	*dt_kts;		/* [K] */
static int		 dt_kt_lasterr;		/* [K] said once */

/* The image process pid ran at ns: its latest exec before, or NULL. [R] */
static struct dt_kt_img *
dt_kt_img(struct dt_kt_feed *kf, pid_t pid, uint64_t ns)
{
	struct dt_kt_img *ki, *best = NULL;
	unsigned int i;

	for (i = 0; i < DT_KT_NIMG; i++) {
		ki = &kf->kf_img[i];
		if (ki->ki_pid == pid && ki->ki_exec <= ns &&
		    (best == NULL || ki->ki_exec > best->ki_exec))
			best = ki;
	}
	return best;
}

/*
 * What an exec of the tree mapped: the file of its image, then, for a
 * dynamic one, its loader's, before its first call returns.  [R]
 */
static void
dt_kt_note(struct dt_kt_feed *kf, const struct dt_tp_sample *s)
{
	struct dt_kt_img *ki;
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */
	const char *c;

	if (s->ts_comm != NULL && s->ts_exec) {
		ki = &kf->kf_img[kf->kf_nextimg++ % DT_KT_NIMG];
		memset(ki, 0, sizeof(*ki));
		ki->ki_pid = s->ts_pid;
		ki->ki_exec = s->ts_ns;
		return;
	}
	/* files only: not [vdso] and the like */
	if (s->ts_mmap == NULL || s->ts_mmap[0] != '/' ||
	    (ki = dt_kt_img(kf, s->ts_pid, s->ts_ns)) == NULL)
		return;
	for (c = s->ts_mmap; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	h |= 1;
	if (ki->ki_file == 0)
		ki->ki_file = h;
	else if (ki->ki_file != h)
		ki->ki_loader = true;
}

/*
 * Whether the library records pid's call at ns: not when pid runs an
 * image it exec'd that has no loader (static), whatever the ingest
 * transport still says of its old image, whose ring it retires later
 * than the exec.  [R]
 */
static bool
dt_kt_traced(struct dt_kt_feed *kf, pid_t pid, uint64_t ns)
{
	struct dt_kt_img *ki = dt_kt_img(kf, pid, ns);

	if (ki != NULL && ki->ki_exec < ns && ki->ki_file != 0 &&
	    !ki->ki_loader)
		return false;
	return dt_ksys_traced(pid, ns);
}

/* dt_tpev_fn: a record of the tree's event.  [R] */
static void
dt_kt_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_kt_feed *kf = arg;
	struct dt_pcb *dp;
	struct dt_evt ev;
	unsigned int i;
	long id;

	if (s->ts_lost > 0) {
		for (i = 0; i < SYSTAB_LINUX_MAX; i++)
			if ((dp = atomic_load_explicit(&kf->kf_dp[i],
			    memory_order_acquire)) != NULL)
				dt_pcb_count_dropevt(dp, s->ts_cpu, s->ts_lost);
		return;
	}
	dt_kt_note(kf, s);
	if (s->ts_mmap != NULL)
		return;
	/* names feed every event's comm; an exec may be a tracee's */
	if (dt_tp_ksys_note(s))
		return;
	if ((id = dt_tp_ksys_call(kf->kf_dir, s)) < 0 ||
	    (dp = atomic_load_explicit(&kf->kf_dp[id],
	    memory_order_acquire)) == NULL)
		return;
	/* The library's processes: its hooks give their calls. */
	if (dt_kt_traced(kf, s->ts_pid, s->ts_ns))
		return;
	dt_tp_ksys_build(kf->kf_dir, dp->dp_dtp, dp->dp_evtflags, s, &ev);
	dt_seq_put(dt_tpev_source(), dp, s->ts_cpu, &ev);
}

static void
dt_kt_release(void *arg)
{
	free(arg);
}

static void
dt_kt_want(struct dt_kt *kt, unsigned int p, uint64_t evtflags,
    uint64_t *stacks)
{
	unsigned int lin;

	if (p / 2 >= SYSTAB_COUNT || (p & 1) != kt->kt_dir ||
	    (lin = systab[p / 2].se_linux) >= SYSTAB_LINUX_MAX)
		return;
	kt->kt_keep[lin / 8] |= 1 << (lin % 8);
	*stacks |= evtflags & (DTEVT_KSTACK | DTEVT_USTACK);
}

/*
 * kt's filter: the numbers it keeps, or "" (every call) past
 * DT_KT_MAXIDS of them or a page.  [K]
 */
static void
dt_kt_filter(const struct dt_kt *kt, char *buf, size_t len)
{
	unsigned int i, n = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (i = 0; i < SYSTAB_LINUX_MAX; i++) {
		if (!(kt->kt_keep[i / 8] & (1 << (i % 8))))
			continue;
		if (++n > DT_KT_MAXIDS) {
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

/*
 * (Re)open kt's event on the tree's root for the calls of its started
 * pcbs and of dp's open's tree pcbs from dp on, with their stacks.  The
 * old event, if any, is closed first and its feed reaches no pcb from
 * then on.  [K]
 */
static void
dt_kt_open(struct dt_kt *kt, struct dt_pcb *dp)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT };
	struct dt_kt_feed *kf, *old = kt->kt_feed;
	char filter[DT_KT_FILTERLEN];
	const struct dt_pcb *np;
	struct dt_pcb *sdp;
	uint64_t stacks = kt->kt_evflags;
	unsigned int i;
	int error, p;

	for (np = dp; np != NULL; np = np->dp_snext)
		if ((p = dt_ksys_index(np)) >= 0)
			dt_kt_want(kt, (unsigned int)p, np->dp_evtflags,
			    &stacks);
	dt_kt_filter(kt, filter, sizeof(filter));
	if ((kf = calloc(1, sizeof(*kf))) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	kf->kf_dir = kt->kt_dir;
	if (old != NULL) {
		/* the started pcbs move to the new feed, not both */
		for (i = 0; i < SYSTAB_LINUX_MAX; i++) {
			sdp = atomic_load_explicit(&old->kf_dp[i],
			    memory_order_relaxed);
			atomic_store_explicit(&old->kf_dp[i], NULL,
			    memory_order_release);
			atomic_store_explicit(&kf->kf_dp[i], sdp,
			    memory_order_relaxed);
		}
		/* the reader drains it, then frees it and old */
		dt_tpev_close(kt->kt_ev);
		kt->kt_ev = NULL;
		kt->kt_feed = NULL;
	}
	pmu.tpm_config = (uint64_t)dt_tp_ksys_evid(kt->kt_dir);
	/* kf is the event's from here on: after a failure, gone */
	kt->kt_ev = dt_tpev_open_task(&pmu, stacks | DT_TPEV_MMAPS,
	    dt_sc_tree(dp->dp_sc), dt_kt_cb, kf, dt_kt_release, &error);
	if (kt->kt_ev == NULL)
		goto fail;
	kt->kt_feed = kf;
	kt->kt_evflags = stacks;
	kt->kt_all = filter[0] == '\0';
	/* refused, every call of the tree comes: the callback sorts */
	if (!kt->kt_all && dt_tpev_filter(kt->kt_ev, filter) != 0)
		kt->kt_all = true;
	return;
fail:
	kt->kt_failed = true;
	if (error != dt_kt_lasterr)
		fprintf(stderr, "dtd: syscall: raw_syscalls:%s: cannot open "
		    "for the tree of %d: %s\n", kt->kt_dir == 0 ? "sys_enter" :
		    "sys_exit", (int)dt_sc_tree(dp->dp_sc), strerror(error));
	dt_kt_lasterr = error;
}

/* dt_ksys_tree_fn.  [K] */
static void
dt_kt_set(unsigned int p, struct dt_pcb *dp, bool on)
{
	struct dt_kt **ktp, *kt;
	unsigned int lin;
	uint64_t more;

	if (p / 2 >= SYSTAB_COUNT ||
	    (lin = systab[p / 2].se_linux) >= SYSTAB_LINUX_MAX)
		return;
	for (ktp = &dt_kts; (kt = *ktp) != NULL; ktp = &kt->kt_next)
		if (kt->kt_sc == dp->dp_sc && kt->kt_dir == (p & 1))
			break;
	if (!on) {
		if (kt == NULL)
			return;
		if (kt->kt_feed != NULL)
			atomic_store_explicit(&kt->kt_feed->kf_dp[lin], NULL,
			    memory_order_release);
		/* (0: a start that found no memory was not counted) */
		if (kt->kt_non > 0 && --kt->kt_non > 0)
			return;
		*ktp = kt->kt_next;
		/* the reader drains it, then frees its feed */
		if (kt->kt_ev != NULL)
			dt_tpev_close(kt->kt_ev);
		free(kt);
		return;
	}
	if (kt == NULL) {
		if ((kt = calloc(1, sizeof(*kt))) == NULL) {
			if (dt_kt_lasterr != ENOMEM)
				fprintf(stderr, "dtd: syscall: the tree's "
				    "feed: %s\n", strerror(ENOMEM));
			dt_kt_lasterr = ENOMEM;
			return;
		}
		kt->kt_sc = dp->dp_sc;
		kt->kt_dir = p & 1;
		kt->kt_next = dt_kts;
		dt_kts = kt;
	}
	kt->kt_non++;
	more = dp->dp_evtflags & (DTEVT_KSTACK | DTEVT_USTACK) &
	    ~kt->kt_evflags;
	if (!kt->kt_failed && (kt->kt_ev == NULL || more != 0 ||
	    (!kt->kt_all && !(kt->kt_keep[lin / 8] & (1 << (lin % 8))))))
		dt_kt_open(kt, dp);
	/* before the root's exec enables the event: no record lost */
	if (kt->kt_feed != NULL)
		atomic_store_explicit(&kt->kt_feed->kf_dp[lin], dp,
		    memory_order_release);
}

void
dt_tp_ksystree_init(void)
{
	dt_ksys_tree_feed(dt_kt_set);
}
