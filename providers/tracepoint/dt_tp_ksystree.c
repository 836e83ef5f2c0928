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
 * whose file asks for no loader (no PT_INTERP, read once from the
 * first file the exec maps, DT_TPEV_MMAPS: static) is no library's
 * from its exec on, though the ingest transport retires its traced
 * predecessor's ring later, and dt_ksys_traced() says so until then
 * (btrace -c's shell exec'ing a static command): its calls are the
 * kernel's.  The judgement is the file's, not the mappings': a static
 * image's later code (a JIT's, a dlopen()'d NSS module's) would look
 * like a loader, and a kernel filter hides the calls that would say
 * when the exec's own mappings ended.  One judgement a process, by
 * pid, for as long as it lives (and DT_KT_GRACE_NS after its exit, for
 * its records read late from other CPUs), then dropped: a long-lived
 * static image keeps its own however many execs follow, and a pid
 * reused without an exec inherits none.  A reopen starts a feed with
 * none: an image exec'd before it goes by dt_ksys_traced().  The
 * system-wide feed (dt_tp_ksys.c) gives nothing to these pcbs
 * (DTEVT_TREE implies DTEVT_LAUNCHED), so no call is counted twice.
 * perf's lost records, whose they were being unknown, are charged once
 * to the open (every pcb of a feed is the same open's).  A tree named
 * with DTTR_F_HOOKED has no root feed: dt_tp_ksysarm.c opens one on
 * each static image the launcher's helper holds at its exec, with the
 * same callback, the image judged already (dt_kt_feed_static()).
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
 *	[R]	the perf reader thread only (dt_tp_perf.h)
 */
#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_ksys.h"
#include "dt_prov.h"
#include "dt_tp_ksys.h"
#include "dt_tp_kt.h"
#include "dt_tp_perf.h"
#include "dt_tp_task.h"
#include "systab.h"

#define DT_KT_FILTERLEN	4096	/* a page: what the kernel takes */

/*
 * An image is forgotten this long after its process's exit: records of
 * its last calls read from another CPU's buffer after the exit's still
 * find it (a round drains every CPU every DT_TPEV_FLUSH_MS).
 */
#define DT_KT_GRACE_NS	(2 * 1000000000ULL)
#define DT_KT_MINBUCKETS 64

/*
 * One process of the tree that exec'd, by pid: its image and the one
 * before (a call read late, from another CPU, may be the old image's).
 */
struct dt_kt_img {
	struct dt_kt_img	*ki_next;	/* [R] on its bucket */
	pid_t			 ki_pid;	/* [R] */
	uint64_t		 ki_exec;	/* [R] its latest exec's time */
	uint64_t		 ki_exit;	/* [R] UINT64_MAX: alive */
	uint64_t		 ki_file;	/* [R] its file's hash, 0: none */
	enum dt_kt_kind		 ki_kind;	/* [R] */
	uint64_t		 ki_pexec;	/* [R] the image before: exec */
	enum dt_kt_kind		 ki_pkind;	/* [R] its kind */
	/* [R] a name no exec record brought (dt_kt_feed_static()) */
	char			 ki_comm[16];
	uint64_t		 ki_cns;	/* [R] when ki_comm was read */
	/*
	 * [R] 0, or a time its image ran no hook's, held by the arm
	 * (dt_kt_feed_held()): kept until an exec after it
	 */
	uint64_t		 ki_held;
};

/*
 * The arm's word on an image it found covered by this feed: pid's
 * image at ns (CLOCK_REALTIME) is no hook's.  Handed to the reader
 * through a ring of DT_KT_HELD: one writer at a time (the arm's lock).
 */
#define DT_KT_HELD	64
struct dt_kt_held {
	pid_t			 kh_pid;
	uint64_t		 kh_ns;
};

/* What the reader's callback reads: one event's. */
struct dt_kt_feed {
	unsigned int		 kf_dir;	/* [I] 0 entry, 1 return */
	pid_t			 kf_root;	/* [I] the tree's */
	/* [a] the started pcb of each Linux number, NULL: none */
	struct dt_pcb *_Atomic	 kf_dp[SYSTAB_LINUX_MAX];
	/*
	 * The images of the tree's live processes (and of those gone
	 * less than DT_KT_GRACE_NS), hashed by pid, as many as memory
	 * allows: one that finds none is counted (kf_nomem) and said,
	 * and its calls go by dt_ksys_traced() alone.
	 */
	struct dt_kt_img	**kf_bucket;	/* [R] */
	size_t			 kf_nbucket;	/* [R] a power of two, or 0 */
	size_t			 kf_nimg;	/* [R] */
	uint64_t		 kf_latest;	/* [R] the newest time seen */
	uint64_t		 kf_nomem;	/* [R] images not kept */
	/* written before kf_nheld's release, read after its acquire */
	struct dt_kt_held	 kf_held[DT_KT_HELD];
	atomic_uint		 kf_nheld;	/* [a] the arm's, under its lock */
	atomic_uint		 kf_took;	/* [a] the reader's */
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
	unsigned int		 kt_non;	/* [K] started pcbs counted */
	/* [K] the numbers whose pcb's start was counted in kt_non */
	uint8_t			 kt_on[SYSTAB_LINUX_MAX / 8];
	uint8_t			 kt_keep[SYSTAB_LINUX_MAX / 8];	/* [K] */
};

static struct dt_kt	*dt_kts;		/* [K] */

/* What every feed did with its calls, for dtd's last words.  [a] */
static atomic_uint_fast64_t dt_kt_ntaken;	/* given to a pcb */
static atomic_uint_fast64_t dt_kt_nhooked;	/* dropped: a hook's */

static size_t
dt_kt_hash(const struct dt_kt_feed *kf, pid_t pid)
{
	return ((uint32_t)pid * 2654435761U) & (kf->kf_nbucket - 1);
}

/* Process pid's image, or NULL.  [R] */
static struct dt_kt_img *
dt_kt_img(const struct dt_kt_feed *kf, pid_t pid)
{
	struct dt_kt_img *ki;

	if (kf->kf_nbucket == 0)
		return NULL;
	for (ki = kf->kf_bucket[dt_kt_hash(kf, pid)]; ki != NULL;
	    ki = ki->ki_next)
		if (ki->ki_pid == pid)
			return ki;
	return NULL;
}

/* Forget the images whose process is gone past the grace.  [R] */
static void
dt_kt_sweep(struct dt_kt_feed *kf)
{
	struct dt_kt_img **kip, *ki;
	size_t i;

	for (i = 0; i < kf->kf_nbucket; i++)
		for (kip = &kf->kf_bucket[i]; (ki = *kip) != NULL; ) {
			if (ki->ki_exit != UINT64_MAX &&
			    ki->ki_exit + DT_KT_GRACE_NS < kf->kf_latest) {
				*kip = ki->ki_next;
				free(ki);
				kf->kf_nimg--;
				continue;
			}
			kip = &ki->ki_next;
		}
}

/*
 * Room for one more image: first the gone ones swept, then twice the
 * buckets.  A table that cannot grow still takes it (longer chains).
 * [R]
 */
static bool
dt_kt_room(struct dt_kt_feed *kf)
{
	struct dt_kt_img **nb, *ki;
	size_t n, i, h;

	if (kf->kf_nimg < kf->kf_nbucket)
		return true;
	dt_kt_sweep(kf);
	if (kf->kf_nbucket > 0 && kf->kf_nimg < kf->kf_nbucket / 2)
		return true;
	n = kf->kf_nbucket == 0 ? DT_KT_MINBUCKETS : kf->kf_nbucket * 2;
	if ((nb = calloc(n, sizeof(*nb))) == NULL)
		return kf->kf_nbucket > 0;
	for (i = 0; i < kf->kf_nbucket; i++)
		while ((ki = kf->kf_bucket[i]) != NULL) {
			kf->kf_bucket[i] = ki->ki_next;
			h = ((uint32_t)ki->ki_pid * 2654435761U) & (n - 1);
			ki->ki_next = nb[h];
			nb[h] = ki;
		}
	free(kf->kf_bucket);
	kf->kf_bucket = nb;
	kf->kf_nbucket = n;
	return true;
}

/*
 * A new image of pid on its bucket, alive, nothing else known, or NULL
 * when there is no memory for it.  [R], or the caller's before the
 * hand-over.
 */
static struct dt_kt_img *
dt_kt_img_new(struct dt_kt_feed *kf, pid_t pid)
{
	struct dt_kt_img *ki;
	size_t b;

	if (!dt_kt_room(kf) || (ki = calloc(1, sizeof(*ki))) == NULL)
		return NULL;
	ki->ki_pid = pid;
	ki->ki_exit = UINT64_MAX;
	b = dt_kt_hash(kf, pid);
	ki->ki_next = kf->kf_bucket[b];
	kf->kf_bucket[b] = ki;
	kf->kf_nimg++;
	return ki;
}

/* One image not kept: counted, said once.  [R] */
static void
dt_kt_nomem(struct dt_kt_feed *kf)
{
	if (kf->kf_nomem++ == 0)
		fprintf(stderr, "dtd: syscall: the tree of %d: an image not "
		    "kept (%s): its calls may be lost\n", (int)kf->kf_root,
		    strerror(ENOMEM));
}

/*
 * The last judgements, by process, exec and file: the entry's feed and
 * the return's each see every exec's mappings, and would each read the
 * file (twice the work on the reader of every tracepoint, and two
 * verdicts that could differ if the file changed between the reads,
 * entries without their returns).  Both callbacks run on the one reader
 * thread, so the second finds the first's.  [R]
 */
#define DT_KT_MEMO	16
#define DT_KT_MEMO_NS	1000000ULL	/* one exec's two stamps, at most */
static struct {
	pid_t			 km_pid;
	uint64_t		 km_exec;	/* the exec's time */
	uint64_t		 km_file;	/* the path's hash */
	enum dt_kt_kind		 km_kind;
} dt_kt_memo[DT_KT_MEMO];			/* [R] */
static unsigned int	 dt_kt_memonext;	/* [R] */

static enum dt_kt_kind
dt_kt_judge(pid_t pid, uint64_t exec, uint64_t file, const char *path)
{
	unsigned int i;

	/*
	 * Each event stamps its own copy of the exec's comm record: the
	 * two feeds' times of one exec differ by the microseconds between
	 * the copies.  One pid's two execs of one file that close would
	 * run the same file anyway.
	 */
	for (i = 0; i < DT_KT_MEMO; i++)
		if (dt_kt_memo[i].km_pid == pid &&
		    dt_kt_memo[i].km_file == file &&
		    (exec > dt_kt_memo[i].km_exec ? exec -
		    dt_kt_memo[i].km_exec : dt_kt_memo[i].km_exec - exec) <
		    DT_KT_MEMO_NS)
			return dt_kt_memo[i].km_kind;
	i = dt_kt_memonext++ % DT_KT_MEMO;
	dt_kt_memo[i].km_pid = pid;
	dt_kt_memo[i].km_exec = exec;
	dt_kt_memo[i].km_file = file;
	dt_kt_memo[i].km_kind = dt_kt_elf(pid, path);
	return dt_kt_memo[i].km_kind;
}

/*
 * What an exec of the tree runs, by the first file it maps (the
 * image's own, mapped by the exec) and, when that cannot be read, by a
 * second file beside it (a loader).  An exit of the tree: its image
 * kept DT_KT_GRACE_NS more.  [R]
 */
static void
dt_kt_note(struct dt_kt_feed *kf, const struct dt_tp_sample *s)
{
	struct dt_kt_img *ki;
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */
	const char *c;

	if (s->ts_ns > kf->kf_latest)
		kf->kf_latest = s->ts_ns;
	if (s->ts_exit) {
		/* the process's, not a thread's; not an older image's */
		if (s->ts_pid == s->ts_tid &&
		    (ki = dt_kt_img(kf, s->ts_pid)) != NULL &&
		    ki->ki_exec < s->ts_ns)
			ki->ki_exit = s->ts_ns;
		return;
	}
	if (s->ts_comm != NULL && s->ts_exec) {
		if ((ki = dt_kt_img(kf, s->ts_pid)) == NULL) {
			if ((ki = dt_kt_img_new(kf, s->ts_pid)) == NULL) {
				dt_kt_nomem(kf);
				return;
			}
		} else if (s->ts_ns <= ki->ki_exec)
			return;		/* read late: an older exec */
		else if (ki->ki_exit == UINT64_MAX) {
			/* the same process: its old image is the one before */
			ki->ki_pexec = ki->ki_exec;
			ki->ki_pkind = ki->ki_kind;
		} else {
			/* a pid reused: nothing of the old one's applies */
			ki->ki_pexec = 0;
			ki->ki_pkind = DT_KT_UNKNOWN;
		}
		ki->ki_exec = s->ts_ns;
		ki->ki_exit = UINT64_MAX;
		if (ki->ki_held != 0 && s->ts_ns > ki->ki_held)
			ki->ki_held = 0;	/* an image after the held one */
		ki->ki_file = 0;
		ki->ki_kind = DT_KT_UNKNOWN;
		return;
	}
	/* files only: not [vdso], not anonymous code */
	if (s->ts_mmap == NULL || s->ts_mmap[0] != '/' ||
	    strncmp(s->ts_mmap, "//anon", 6) == 0 ||
	    (ki = dt_kt_img(kf, s->ts_pid)) == NULL ||
	    ki->ki_exec > s->ts_ns || ki->ki_exit != UINT64_MAX)
		return;
	if (ki->ki_file == 0) {
		for (c = s->ts_mmap; *c != '\0'; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ULL;
		ki->ki_file = h | 1;
		ki->ki_kind = dt_kt_judge(s->ts_pid, ki->ki_exec, ki->ki_file,
		    s->ts_mmap);
		return;
	}
	if (ki->ki_kind != DT_KT_BYMAP)
		return;		/* decided by the file: later maps are code */
	for (c = s->ts_mmap; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	if ((h | 1) != ki->ki_file)
		ki->ki_kind = DT_KT_DYNAMIC;
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
	struct dt_kt_img *ki = dt_kt_img(kf, pid);
	enum dt_kt_kind kind = DT_KT_UNKNOWN;

	/* held by the arm: its loader ignored LD_PRELOAD (secure) */
	if (ki != NULL && ki->ki_held != 0 && ki->ki_held <= ns &&
	    ns <= ki->ki_exit)
		return false;
	/* after its exit (a pid reused, no exec seen): nothing known */
	if (ki != NULL) {
		if (ki->ki_exec < ns && ns <= ki->ki_exit)
			kind = ki->ki_kind;
		else if (ki->ki_pexec != 0 && ki->ki_pexec < ns &&
		    ns <= ki->ki_exec)
			kind = ki->ki_pkind;
	}
	/* BYMAP still: no second file beside its own, no loader */
	if (kind == DT_KT_STATIC || kind == DT_KT_BYMAP)
		return false;
	/* another ABI's numbers would be read as x86-64's: none */
	if (kind == DT_KT_FOREIGN)
		return true;
	return dt_ksys_traced(pid, ns);
}

/* The arm's words not yet taken, into the images.  [R] */
static void
dt_kt_took(struct dt_kt_feed *kf)
{
	unsigned int n = atomic_load_explicit(&kf->kf_nheld,
	    memory_order_acquire);
	unsigned int t = atomic_load_explicit(&kf->kf_took,
	    memory_order_relaxed);
	const struct dt_kt_held *kh;
	struct dt_kt_img *ki;

	for (; t != n; t++) {
		kh = &kf->kf_held[t % DT_KT_HELD];
		/* its exec record, read later, is the same image's */
		if ((ki = dt_kt_img(kf, kh->kh_pid)) == NULL &&
		    (ki = dt_kt_img_new(kf, kh->kh_pid)) == NULL) {
			dt_kt_nomem(kf);
			continue;
		}
		ki->ki_held = kh->kh_ns;
	}
	/* release: the slots are the writer's again only after the reads */
	atomic_store_explicit(&kf->kf_took, t, memory_order_release);
}

/* dt_tpev_fn: a record of the tree's event.  [R] */
void
dt_kt_feed_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_kt_feed *kf = arg;
	struct dt_kt_img *ki;
	struct dt_pcb *dp;
	struct dt_evt ev;
	unsigned int i;
	long id;

	/*
	 * Whose call a lost record was is unknown, but every pcb of the
	 * feed is the same open's, and a pcb's count is its open's: one
	 * charge, to any of them, not one per pcb.
	 */
	if (s->ts_lost > 0) {
		for (i = 0; i < SYSTAB_LINUX_MAX; i++)
			if ((dp = atomic_load_explicit(&kf->kf_dp[i],
			    memory_order_acquire)) != NULL) {
				dt_pcb_count_dropevt(dp, s->ts_cpu, s->ts_lost);
				break;
			}
		return;
	}
	if (atomic_load_explicit(&kf->kf_nheld, memory_order_relaxed) !=
	    atomic_load_explicit(&kf->kf_took, memory_order_relaxed))
		dt_kt_took(kf);
	dt_kt_note(kf, s);
	if (s->ts_mmap != NULL || s->ts_exit)
		return;
	/* names feed every event's comm; an exec may be a tracee's */
	if (dt_tp_ksys_note(s))
		return;
	if ((id = dt_tp_ksys_call(kf->kf_dir, s)) < 0 ||
	    (dp = atomic_load_explicit(&kf->kf_dp[id],
	    memory_order_acquire)) == NULL)
		return;
	/* The library's processes: its hooks give their calls. */
	if (dt_kt_traced(kf, s->ts_pid, s->ts_ns)) {
		atomic_fetch_add_explicit(&dt_kt_nhooked, 1,
		    memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&dt_kt_ntaken, 1, memory_order_relaxed);
	/* read once the process is gone, /proc would have no name */
	if ((ki = dt_kt_img(kf, s->ts_pid)) != NULL && ki->ki_comm[0] != '\0') {
		/*
		 * At the time it was read, not the image's start: a
		 * system-wide feed's record of the exec itself may be
		 * later than that, and would keep its older stamp, stale
		 * once the image has run a second (a spawner's calls after
		 * its children), its /proc gone by the read: no name.
		 */
		dt_tp_task_rename(s->ts_pid, s->ts_pid, ki->ki_comm,
		    ki->ki_cns);
		ki->ki_comm[0] = '\0';
	}
	dt_tp_ksys_build(kf->kf_dir, dp->dp_dtp, dp->dp_evtflags, s, &ev);
	if (kf->kf_dir == 1)
		dt_ka_lat_said(dp, s->ts_cpu);
	dt_seq_put(dt_tpev_source(), dp, s->ts_cpu, &ev);
}

void
dt_kt_feed_release(void *arg)
{
	struct dt_kt_feed *kf = arg;
	struct dt_kt_img *ki;
	size_t i;

	for (i = 0; i < kf->kf_nbucket; i++)
		while ((ki = kf->kf_bucket[i]) != NULL) {
			kf->kf_bucket[i] = ki->ki_next;
			free(ki);
		}
	free(kf->kf_bucket);
	free(kf);
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

void
dt_kt_idfilter(const uint8_t *bits, char *buf, size_t len)
{
	unsigned int i, n = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (i = 0; i < SYSTAB_LINUX_MAX; i++) {
		if (!(bits[i / 8] & (1 << (i % 8))))
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
	dt_kt_idfilter(kt->kt_keep, filter, sizeof(filter));
	if ((kf = calloc(1, sizeof(*kf))) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	kf->kf_dir = kt->kt_dir;
	kf->kf_root = dt_sc_tree(dp->dp_sc);
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
	    dt_sc_tree(dp->dp_sc), dt_kt_feed_cb, kf, dt_kt_feed_release,
	    &error);
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
	/*
	 * Said for each open (its tree's pid names it), not once per
	 * daemon: the start goes on (dt(4) has no such failure), so this
	 * line is all that tells an open its tree's calls are not read.
	 */
	kt->kt_failed = true;
	fprintf(stderr, "dtd: syscall: raw_syscalls:%s: cannot open for the "
	    "tree of %d: %s\n", kt->kt_dir == 0 ? "sys_enter" : "sys_exit",
	    (int)dt_sc_tree(dp->dp_sc), strerror(error));
}

/* dt_ksys_tree_fn.  [K] */
static void
dt_kt_set(unsigned int p, struct dt_pcb *dp, bool on)
{
	struct dt_kt **ktp, *kt;
	unsigned int lin;
	uint64_t more;

	/* a hooked root: no feed of its own, one per static exec */
	if (dt_sc_treeflags(dp->dp_sc) & DTTR_F_HOOKED) {
		dt_ka_set(p, dp, on);
		return;
	}
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
		/*
		 * Only a start that was counted: one that found no memory
		 * for kt was not, and kt may be another pcb's since.
		 */
		if (!(kt->kt_on[lin / 8] & (1 << (lin % 8))))
			return;
		kt->kt_on[lin / 8] &= ~(1 << (lin % 8));
		if (--kt->kt_non > 0)
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
			fprintf(stderr, "dtd: syscall: raw_syscalls: cannot "
			    "open for the tree of %d: %s\n",
			    (int)dt_sc_tree(dp->dp_sc), strerror(ENOMEM));
			return;
		}
		kt->kt_sc = dp->dp_sc;
		kt->kt_dir = p & 1;
		kt->kt_next = dt_kts;
		dt_kts = kt;
	}
	/* an open's pcb of a number per direction: one bit each */
	if (!(kt->kt_on[lin / 8] & (1 << (lin % 8)))) {
		kt->kt_on[lin / 8] |= 1 << (lin % 8);
		kt->kt_non++;
	}
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

struct dt_kt_feed *
dt_kt_feed_new(unsigned int dir, pid_t root)
{
	struct dt_kt_feed *kf;

	if ((kf = calloc(1, sizeof(*kf))) == NULL)
		return NULL;
	kf->kf_dir = dir;
	kf->kf_root = root;
	return kf;
}

bool
dt_kt_feed_static(struct dt_kt_feed *kf, pid_t pid, uint64_t ns,
    const char *comm, uint64_t cns)
{
	struct dt_kt_img *ki;

	if ((ki = dt_kt_img_new(kf, pid)) == NULL)
		return false;
	ki->ki_exec = ns;
	/* judged: the image's later mappings (a JIT's) change nothing */
	ki->ki_file = 1;
	ki->ki_kind = DT_KT_STATIC;
	snprintf(ki->ki_comm, sizeof(ki->ki_comm), "%s", comm);
	ki->ki_cns = cns;
	return true;
}

bool
dt_kt_feed_held(struct dt_kt_feed *kf, pid_t pid, uint64_t ns)
{
	unsigned int n = atomic_load_explicit(&kf->kf_nheld,
	    memory_order_relaxed);

	if (n - atomic_load_explicit(&kf->kf_took, memory_order_acquire) >=
	    DT_KT_HELD)
		return false;
	kf->kf_held[n % DT_KT_HELD].kh_pid = pid;
	kf->kf_held[n % DT_KT_HELD].kh_ns = ns;
	atomic_store_explicit(&kf->kf_nheld, n + 1, memory_order_release);
	return true;
}

void
dt_kt_feed_pcb(struct dt_kt_feed *kf, unsigned int lin, struct dt_pcb *dp)
{
	if (lin < SYSTAB_LINUX_MAX)
		atomic_store_explicit(&kf->kf_dp[lin], dp,
		    memory_order_release);
}

void
dt_kt_counts(uint64_t *taken, uint64_t *hooked)
{
	*taken = atomic_load(&dt_kt_ntaken);
	*hooked = atomic_load(&dt_kt_nhooked);
}

void
dt_tp_ksystree_init(void)
{
	dt_ksys_tree_feed(dt_kt_set);
	dt_ka_init();
}
