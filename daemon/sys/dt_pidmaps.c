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
 * The executable mappings of traced processes, cached past their exit
 * (dt_pidmaps.h); dt_pidmaps_read.c reads them from /proc.  /proc is
 * read without the cache lock: reading a maps file takes the target's
 * mmap lock and may wait for it, and nobody else must wait behind that.
 *
 * What the cache holds is charged to users (pm_user): bytes and entries,
 * each user's entries on a list of their own in the order of use, so
 * that one user's churn is paid from that user's entries (pm_fit()).
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_pm_setup() or dt_pm_budget() while no other thread
 *		uses the cache
 *	[m]	pm_lock
 *	[a]	atomic operations
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_clock.h"
#include "dt_pidmaps.h"

#define PM_NHASH	1024		/* buckets, a power of two */
#define PM_NUSERS	64		/* uid buckets */
#define PM_ENT_BYTES	(sizeof(struct pm_ent) + DT_PM_MALLOC_OVH)

struct pm_user;

struct pm_ent {
	struct pm_ent		*pe_hnext;	/* [m] hash chain; once
						   forgotten, pm_forget()'s */
	struct pm_ent		*pe_prev;	/* [m] LRU, head most recent */
	struct pm_ent		*pe_next;	/* [m] */
	TAILQ_ENTRY(pm_ent)	 pe_ulink;	/* [m] its user's, same order */
	struct pm_user		*pe_user;	/* [m] charged to */
	pid_t			 pe_pid;	/* [m] */
	uid_t			 pe_uid;	/* [m] pe_user's, once forgotten */
	struct dt_pm_snap	*pe_snap;	/* [m] holds a reference */
	uint64_t		 pe_bytes;	/* [m] charged: snap and entry */
	unsigned int		 pe_attached;	/* [m] trackers following it */
	const char		*pe_why;	/* [m] the bound that forgot it */
};

TAILQ_HEAD(pm_ents, pm_ent);

struct pm_user {
	LIST_ENTRY(pm_user)	 pu_link;	/* [m] pm_users chain */
	struct pm_ents		 pu_ents;	/* [m] most recently used first */
	uid_t			 pu_uid;	/* [m] */
	unsigned int		 pu_n;		/* [m] entries */
	uint64_t		 pu_bytes;	/* [m] their pe_bytes */
};

static pthread_mutex_t	 pm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pm_ent	*pm_hash[PM_NHASH];	/* [m] */
static struct pm_ent	*pm_head, *pm_tail;	/* [m] LRU list */
static LIST_HEAD(, pm_user) pm_users[PM_NUSERS];	/* [m] */
static atomic_uint	 pm_count;		/* [m] writes, [a] reads */
static atomic_uint_fast64_t pm_bytes;		/* [m] writes, [a] reads */
static atomic_uint_fast64_t pm_evicted;		/* [a] entries forgotten */
static unsigned int	 pm_max = DT_PM_MAXPIDS;	/* [I] */
static uint64_t		 pm_budget = DT_PM_BUDGET_MIN;	/* [I] bytes */
static uint64_t		 pm_ubudget = DT_PM_UBUDGET_MIN; /* [I] a user */

void
dt_pm_setup(const char *procroot, unsigned int maxpids)
{
	dt_pm_read_setup(procroot);
	pm_max = maxpids != 0 ? maxpids : DT_PM_MAXPIDS;
}

/* --- the cache ------------------------------------------------------- */

/* [m] The user that entries are charged to, made on demand. */
static struct pm_user *
pm_user_get(uid_t uid, struct pm_user **spare)
{
	struct pm_user *pu;
	unsigned int h = (unsigned int)uid % PM_NUSERS;

	LIST_FOREACH(pu, &pm_users[h], pu_link)
		if (pu->pu_uid == uid)
			return pu;
	if ((pu = *spare) == NULL)
		return NULL;
	*spare = NULL;
	memset(pu, 0, sizeof(*pu));
	pu->pu_uid = uid;
	TAILQ_INIT(&pu->pu_ents);
	LIST_INSERT_HEAD(&pm_users[h], pu, pu_link);
	return pu;
}

/* [m] Charge pe (not yet charged) to pu, as its most recently used. */
static void
pm_user_link(struct pm_ent *pe, struct pm_user *pu)
{
	pe->pe_user = pu;
	TAILQ_INSERT_HEAD(&pu->pu_ents, pe, pe_ulink);
	pu->pu_n++;
	pu->pu_bytes += pe->pe_bytes;
}

/* [m] Take pe off its user's account; a user left with none is freed. */
static void
pm_user_unlink(struct pm_ent *pe)
{
	struct pm_user *pu = pe->pe_user;

	TAILQ_REMOVE(&pu->pu_ents, pe, pe_ulink);
	pu->pu_n--;
	pu->pu_bytes -= pe->pe_bytes;
	pe->pe_user = NULL;
	if (pu->pu_n == 0) {
		LIST_REMOVE(pu, pu_link);
		free(pu);
	}
}

/* [m] pe now holds bytes (its snapshot and itself). */
static void
pm_charge(struct pm_ent *pe, uint64_t bytes)
{
	pe->pe_user->pu_bytes += bytes - pe->pe_bytes;
	atomic_store(&pm_bytes, atomic_load(&pm_bytes) + bytes -
	    pe->pe_bytes);
	pe->pe_bytes = bytes;
}

static unsigned int
pm_bucket(pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) >> 22 & (PM_NHASH - 1);
}

/* [m] */
static struct pm_ent *
pm_lookup(pid_t pid)
{
	struct pm_ent *pe;

	for (pe = pm_hash[pm_bucket(pid)]; pe != NULL; pe = pe->pe_hnext)
		if (pe->pe_pid == pid)
			return pe;
	return NULL;
}

/* [m] Take pe off the LRU list. */
static void
pm_lru_unlink(struct pm_ent *pe)
{
	if (pe->pe_prev != NULL)
		pe->pe_prev->pe_next = pe->pe_next;
	else
		pm_head = pe->pe_next;
	if (pe->pe_next != NULL)
		pe->pe_next->pe_prev = pe->pe_prev;
	else
		pm_tail = pe->pe_prev;
	pe->pe_prev = pe->pe_next = NULL;
}

/* [m] Put pe first on the LRU list. */
static void
pm_lru_front(struct pm_ent *pe)
{
	pe->pe_next = pm_head;
	pe->pe_prev = NULL;
	if (pm_head != NULL)
		pm_head->pe_prev = pe;
	pm_head = pe;
	if (pm_tail == NULL)
		pm_tail = pe;
}

/* [m] pe was used: first on the LRU list and on its user's. */
static void
pm_touch(struct pm_ent *pe)
{
	pm_lru_unlink(pe);
	pm_lru_front(pe);
	TAILQ_REMOVE(&pe->pe_user->pu_ents, pe, pe_ulink);
	TAILQ_INSERT_HEAD(&pe->pe_user->pu_ents, pe, pe_ulink);
}

/*
 * [m] Unhash, unlist and uncharge pe; the caller frees it and puts its
 * snapshot.
 */
static void
pm_remove(struct pm_ent *pe)
{
	struct pm_ent **pp;

	for (pp = &pm_hash[pm_bucket(pe->pe_pid)]; *pp != pe;
	    pp = &(*pp)->pe_hnext)
		;
	*pp = pe->pe_hnext;
	pe->pe_hnext = NULL;
	pm_lru_unlink(pe);
	pe->pe_uid = pe->pe_user->pu_uid;
	atomic_store(&pm_bytes, atomic_load(&pm_bytes) - pe->pe_bytes);
	pm_user_unlink(pe);
	atomic_fetch_sub(&pm_count, 1);
}

/*
 * [m] The entry of pu to forget first, never keep: the least recently
 * used that no tracker follows (its process exited, or detached), else
 * the least recently used of all.  NULL when pu has none but keep.
 */
static struct pm_ent *
pm_victim(struct pm_user *pu, const struct pm_ent *keep)
{
	struct pm_ent *pe, *any = NULL;

	TAILQ_FOREACH_REVERSE(pe, &pu->pu_ents, pm_ents, pe_ulink) {
		if (pe == keep)
			continue;
		if (pe->pe_attached == 0)
			return pe;
		if (any == NULL)
			any = pe;
	}
	return any;
}

/*
 * [m] The user holding the most bytes (by_count: entries) that has an
 * entry other than keep, or NULL: whoever holds most pays for a bound
 * they all passed together.
 */
static struct pm_user *
pm_biggest(int by_count, const struct pm_ent *keep)
{
	struct pm_user *pu, *big = NULL;
	uint64_t v, bigv = 0;
	unsigned int h;

	for (h = 0; h < PM_NUSERS; h++)
		LIST_FOREACH(pu, &pm_users[h], pu_link) {
			if (pu->pu_n <= (keep != NULL &&
			    keep->pe_user == pu ? 1u : 0u))
				continue;
			v = by_count ? pu->pu_n : pu->pu_bytes;
			if (big == NULL || v > bigv) {
				big = pu;
				bigv = v;
			}
		}
	return big;
}

/*
 * [m] Forget entries until the cache is within its bounds again, keep
 * (the entry just stored) last: its user's budget is its user's to pay,
 * the total budget and the bound on pids the biggest user's.  Forgotten
 * entries go on *gone (by pe_hnext), with why, for the caller to log
 * and free once the lock is dropped.  Whether keep stayed.
 */
static int
pm_fit(struct pm_ent *keep, struct pm_ent **gone)
{
	struct pm_user *pu;
	struct pm_ent *v;
	const char *why;

	for (;;) {
		pu = NULL;
		if (keep != NULL && keep->pe_user->pu_bytes > pm_ubudget) {
			pu = keep->pe_user;
			why = "its user's budget";
		} else if (atomic_load(&pm_bytes) > pm_budget) {
			pu = pm_biggest(0, keep);
			why = "the total budget";
		} else if (atomic_load(&pm_count) > pm_max) {
			pu = pm_biggest(1, keep);
			why = "the bound on pids";
		} else
			break;
		if ((v = pu != NULL ? pm_victim(pu, keep) : NULL) == NULL) {
			/* keep alone is beyond the bound: not kept either */
			if ((v = keep) == NULL)
				break;
			keep = NULL;
		}
		pm_remove(v);
		v->pe_why = why;
		v->pe_hnext = *gone;
		*gone = v;
	}
	return keep != NULL;
}

/*
 * Log, count and free what pm_fit() forgot.  No lock held: a log line
 * may wait for whoever reads dtd's stderr.
 */
static void
pm_forget(struct pm_ent *gone)
{
	struct pm_ent *pe;
	uint64_t n;

	while ((pe = gone) != NULL) {
		gone = pe->pe_hnext;
		n = atomic_fetch_add(&pm_evicted, 1) + 1;
		/* Every one counts; a churn must not flood the log too. */
		if (n <= 16 || (n & (n - 1)) == 0)
			fprintf(stderr, "dtd: kept maps: forgot pid %d of uid "
			    "%u (%llu bytes, %s) for %s; %llu bytes kept, "
			    "budget %llu, %llu a user (%llu forgotten so "
			    "far)\n", (int)pe->pe_pid, (unsigned)pe->pe_uid,
			    (unsigned long long)pe->pe_bytes,
			    pe->pe_attached ? "attached" : "exited",
			    pe->pe_why,
			    (unsigned long long)atomic_load(&pm_bytes),
			    (unsigned long long)pm_budget,
			    (unsigned long long)pm_ubudget,
			    (unsigned long long)n);
		dt_pm_put(pe->pe_snap);
		free(pe);
	}
}

/*
 * Make snap pid's cached snapshot, charged to uid.  With only_known,
 * only when the cache already holds pid under the same start time (and
 * uid is not used: the entry stays its user's).  Takes [m]; allocates,
 * logs and frees outside it.  Returns whether the cache holds snap or a
 * later read of the same process (which it keeps): 0 when neither (no
 * memory, not known with only_known, or snap alone is beyond a budget).
 */
static int
pm_store(pid_t pid, uid_t uid, struct dt_pm_snap *snap, int only_known)
{
	struct pm_ent *pe, *fresh = NULL, *gone = NULL;
	struct pm_user *spare = NULL, *pu;
	struct dt_pm_snap *old = NULL;
	int kept = 0;

	if (!only_known && ((fresh = calloc(1, sizeof(*fresh))) == NULL ||
	    (spare = malloc(sizeof(*spare))) == NULL)) {
		free(fresh);
		return 0;
	}
	pthread_mutex_lock(&pm_lock);
	if ((pe = pm_lookup(pid)) != NULL) {
		if (only_known && pe->pe_snap->ps_stime != snap->ps_stime)
			goto out;
		/*
		 * Never back in time: a read that began before the one
		 * cached may have seen the process mid-exec (the new image
		 * without its libraries yet) and ended late; stime does not
		 * change at an exec.
		 */
		if (pe->pe_snap->ps_stime == snap->ps_stime &&
		    pe->pe_snap->ps_seq > snap->ps_seq) {
			kept = 1;
			goto out;
		}
		/* newer maps of the same process, or the pid's new owner */
		old = pe->pe_snap;
		if (old->ps_stime != snap->ps_stime) {
			/* its trackers followed the old owner */
			pe->pe_attached = 0;
			if (pe->pe_user->pu_uid != uid &&
			    (pu = pm_user_get(uid, &spare)) != NULL) {
				pm_user_unlink(pe);
				pm_user_link(pe, pu);
			}
		}
		pe->pe_snap = dt_pm_hold(snap);
		pm_charge(pe, snap->ps_bytes + PM_ENT_BYTES);
		pm_touch(pe);
	} else if (fresh != NULL && (pu = pm_user_get(uid, &spare)) !=
	    NULL) {
		pe = fresh;
		fresh = NULL;
		pe->pe_pid = pid;
		pe->pe_snap = dt_pm_hold(snap);
		pe->pe_bytes = snap->ps_bytes + PM_ENT_BYTES;
		pe->pe_hnext = pm_hash[pm_bucket(pid)];
		pm_hash[pm_bucket(pid)] = pe;
		pm_lru_front(pe);
		pm_user_link(pe, pu);
		atomic_store(&pm_bytes, atomic_load(&pm_bytes) +
		    pe->pe_bytes);
		atomic_fetch_add(&pm_count, 1);
	}
	if (pe != NULL)
		kept = pm_fit(pe, &gone);
out:
	pthread_mutex_unlock(&pm_lock);
	free(fresh);
	free(spare);
	dt_pm_put(old);
	pm_forget(gone);
	return kept;
}

/* dt_pm_snapshot(), read as dt_pm_read_pidfd() when pidfd is not -1. */
static struct dt_pm_snap *
pm_snapshot(pid_t pid, uid_t uid, int pidfd, uint64_t stime)
{
	struct dt_pm_snap *snap, *cached;

	cached = dt_pm_cached(pid);
	snap = pidfd != -1 && stime != 0 ?
	    dt_pm_read_pidfd(pid, stime, pidfd, cached) :
	    dt_pm_read(pid, cached);
	dt_pm_put(cached);
	if (snap == NULL)
		return NULL;
	/* Not kept (beyond a budget, no memory): the caller's still. */
	(void)pm_store(pid, uid, snap, 0);
	return snap;
}

struct dt_pm_snap *
dt_pm_snapshot(pid_t pid, uid_t uid)
{
	return pm_snapshot(pid, uid, -1, 0);
}

struct dt_pm_snap *
dt_pm_cached(pid_t pid)
{
	struct dt_pm_snap *snap = NULL;
	struct pm_ent *pe;

	pthread_mutex_lock(&pm_lock);
	if ((pe = pm_lookup(pid)) != NULL) {
		snap = dt_pm_hold(pe->pe_snap);
		pm_touch(pe);
	}
	pthread_mutex_unlock(&pm_lock);
	return snap;
}

struct dt_pm_snap *
dt_pm_current(pid_t pid)
{
	struct dt_pm_snap *live, *cached;

	cached = dt_pm_cached(pid);
	live = dt_pm_read(pid, cached);
	if (live != NULL && (cached == NULL ||
	    live->ps_stime == cached->ps_stime)) {
		/* what we just read is the newest we know: keep it */
		if (cached != NULL)
			(void)pm_store(pid, 0, live, 1);
		dt_pm_put(cached);
		return live;
	}
	/* gone, a zombie, or someone else's pid now: what we kept */
	dt_pm_put(live);
	if (cached == NULL)
		errno = ESRCH;
	return cached;
}

/*
 * [o] Count the tracker in the attached of pid's entry (on > 0) or take
 * it out (on < 0), when the entry is still of the process it follows.
 * An entry forgotten and stored again meanwhile counts it no more: it is
 * then only forgotten a little earlier among its user's.
 */
static void
pm_pin(struct dt_pm_track *pt, pid_t pid, int on)
{
	struct pm_ent *pe;

	pthread_mutex_lock(&pm_lock);
	if ((pe = pm_lookup(pid)) != NULL &&
	    pe->pe_snap->ps_stime == pt->pt_stime) {
		if (on > 0) {
			pe->pe_attached++;
			pt->pt_pinned = 1;
		} else if (pe->pe_attached > 0)
			pe->pe_attached--;
	}
	pthread_mutex_unlock(&pm_lock);
}

/* --- one attached process ------------------------------------------ */

void
dt_pm_track_attach_pidfd(struct dt_pm_track *pt, pid_t pid, uid_t uid,
    int pidfd, uint64_t stime)
{
	memset(pt, 0, sizeof(*pt));
	pt->pt_wait = DT_PM_WAIT_MIN;
	pt->pt_uid = uid;
	pt->pt_pid = pid;
	pt->pt_snap = pm_snapshot(pid, uid, pidfd, stime);
	pt->pt_stime = pt->pt_snap != NULL ? pt->pt_snap->ps_stime :
	    pidfd != -1 && stime != 0 ? stime : dt_pm_stime(pid);
	if (pt->pt_snap != NULL)
		pm_pin(pt, pid, 1);
}

void
dt_pm_track_attach(struct dt_pm_track *pt, pid_t pid, uid_t uid)
{
	dt_pm_track_attach_pidfd(pt, pid, uid, -1, 0);
}

void
dt_pm_track_stack(struct dt_pm_track *pt, pid_t pid, const uint64_t *pcs,
    unsigned int n)
{
	struct dt_pm_snap *snap;
	unsigned int i;
	uint64_t miss, now, *known;

	/*
	 * The drain thread's hot path, once per stacked record: the same
	 * return addresses come back all the time, so one compare against
	 * those already found answers for most frames.
	 */
	for (i = 0; i < n; i++) {
		if (pcs[i] == 0)
			continue;
		known = &pt->pt_known[(pcs[i] * 0x9e3779b97f4a7c15ULL) >>
		    (64 - DT_PM_KNOWNBITS)];
		if (*known == pcs[i])
			continue;
		if (dt_pm_find(pt->pt_snap, pcs[i]) == NULL)
			break;
		*known = pcs[i];
	}
	if (i == n)
		return;
	now = dt_clock_ns(CLOCK_MONOTONIC);
	if (now < pt->pt_next)
		return;
	miss = pcs[i];
	if ((snap = dt_pm_read(pid, pt->pt_snap)) == NULL ||
	    (pt->pt_stime != 0 && snap->ps_stime != pt->pt_stime)) {
		/* gone (its last records drain now), or not ours any more */
		dt_pm_put(snap);
		pt->pt_next = now + DT_PM_WAIT_MAX;
		return;
	}
	(void)pm_store(pid, pt->pt_uid, snap, 0);
	if (dt_pm_find(snap, miss) != NULL)
		pt->pt_wait = DT_PM_WAIT_MIN;
	else if ((pt->pt_wait *= 2) > DT_PM_WAIT_MAX)
		pt->pt_wait = DT_PM_WAIT_MAX;
	pt->pt_next = now + pt->pt_wait;
	pt->pt_stime = snap->ps_stime;
	dt_pm_put(pt->pt_snap);
	pt->pt_snap = snap;
	memset(pt->pt_known, 0, sizeof(pt->pt_known));
}

void
dt_pm_track_fini(struct dt_pm_track *pt)
{
	if (pt->pt_pinned)
		pm_pin(pt, pt->pt_pid, -1);
	pt->pt_pinned = 0;
	dt_pm_put(pt->pt_snap);
	pt->pt_snap = NULL;
	memset(pt->pt_known, 0, sizeof(pt->pt_known));
}

void
dt_pm_clear(void)
{
	struct pm_ent *pe;

	pthread_mutex_lock(&pm_lock);
	while ((pe = pm_head) != NULL) {
		pm_remove(pe);
		dt_pm_put(pe->pe_snap);
		free(pe);
	}
	pthread_mutex_unlock(&pm_lock);
}

unsigned int
dt_pm_count(void)
{
	return atomic_load(&pm_count);
}

void
dt_pm_budget(uint64_t total, uint64_t user, uint64_t maxmem,
    uint64_t *totalp, uint64_t *userp)
{
	if (total == 0) {
		total = maxmem / 64;
		if (total < DT_PM_BUDGET_MIN)
			total = DT_PM_BUDGET_MIN;
		if (total > DT_PM_BUDGET_MAX)
			total = DT_PM_BUDGET_MAX;
	}
	if (user == 0 && (user = total / 8) < DT_PM_UBUDGET_MIN)
		user = DT_PM_UBUDGET_MIN;
	if (user > total)
		user = total;
	pm_budget = total;
	pm_ubudget = user;
	if (totalp != NULL)
		*totalp = total;
	if (userp != NULL)
		*userp = user;
}

uint64_t
dt_pm_bytes(void)
{
	return atomic_load(&pm_bytes);
}

uint64_t
dt_pm_user_bytes(uid_t uid)
{
	struct pm_user *pu;
	uint64_t bytes = 0;

	pthread_mutex_lock(&pm_lock);
	LIST_FOREACH(pu, &pm_users[(unsigned int)uid % PM_NUSERS], pu_link)
		if (pu->pu_uid == uid)
			bytes = pu->pu_bytes;
	pthread_mutex_unlock(&pm_lock);
	return bytes;
}

uint64_t
dt_pm_evicted(void)
{
	return atomic_load(&pm_evicted);
}
