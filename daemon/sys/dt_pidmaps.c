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
 * (dt_pidmaps.h).  /proc is read without the cache lock: reading a maps
 * file takes the target's mmap lock and may wait for it, and nobody else
 * must wait behind that.  Everything read from /proc is checked before it
 * is believed: lines that do not parse, empty or overlapping ranges are
 * skipped, and a process whose start time changed while it was read (the
 * pid changed hands) yields nothing.
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_pm_setup() while no other thread uses the cache
 *	[m]	pm_lock
 *	[a]	atomic operations
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_clock.h"
#include "dt_pidmaps.h"

#define PM_NHASH	1024		/* buckets, a power of two */

struct pm_ent {
	struct pm_ent		*pe_hnext;	/* [m] hash chain */
	struct pm_ent		*pe_prev;	/* [m] LRU, head most recent */
	struct pm_ent		*pe_next;	/* [m] */
	pid_t			 pe_pid;	/* [m] */
	struct dt_pm_snap	*pe_snap;	/* [m] holds a reference */
};

static pthread_mutex_t	 pm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pm_ent	*pm_hash[PM_NHASH];	/* [m] */
static struct pm_ent	*pm_head, *pm_tail;	/* [m] LRU list */
static atomic_uint	 pm_count;		/* [m] writes, [a] reads */
static char		 pm_proc[64] = "/proc";	/* [I] */
static unsigned int	 pm_max = DT_PM_MAXPIDS;	/* [I] */
static atomic_uint_fast64_t pm_seq;		/* [a] reads begun */

void
dt_pm_setup(const char *procroot, unsigned int maxpids)
{
	snprintf(pm_proc, sizeof(pm_proc), "%s",
	    procroot != NULL ? procroot : "/proc");
	pm_max = maxpids != 0 ? maxpids : DT_PM_MAXPIDS;
}

/* --- reading /proc ---------------------------------------------------- */

uint64_t
dt_pm_stime(pid_t pid)
{
	char path[128], buf[1024], *p, *ep;
	unsigned long long v = 0;
	size_t len;
	FILE *fp;
	int field;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%d/stat", pm_proc, (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[len] = '\0';
	/* comm may hold anything, parentheses too: the last ')' ends it */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return 0;		/* exited: nothing mapped any more */
	/* state is field 3, starttime field 22 */
	for (field = 3; field < 22; field++) {
		if ((p = strchr(p, ' ')) == NULL)
			return 0;
		p++;
	}
	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	v = strtoull(p, &ep, 10);
	if (errno != 0 || (*ep != ' ' && *ep != '\n' && *ep != '\0'))
		return 0;
	/* a process started at boot has starttime 0: never "none" */
	return (uint64_t)v + 1;
}

/* The size of the file mapped at [start, end), 0 when unknown. */
static uint64_t
pm_filesize(pid_t pid, uint64_t start, uint64_t end, const char *file)
{
	char path[128];
	struct stat st;

	/* map_files: the very file mapped, even renamed or unlinked */
	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64,
	    pm_proc, (int)pid, start, end);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	/* The name is the process's: a link it planted is not its file. */
	if (lstat(file, &st) == 0 && S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	return 0;
}

static void
pm_free_maps(struct dt_pm_map *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(maps[i].pm_path);
	free(maps);
}

/*
 * Parse one line of a maps file into m (path malloc'ed or NULL).
 * 1: an executable mapping, 0: anything else, -1: out of memory.
 */
static int
pm_parse(const char *line, struct dt_pm_map *m)
{
	uint64_t start, end, off;
	char perms[8];
	const char *file;
	size_t len;
	int n = -1;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
	    " %*x:%*x %*u%n", &start, &end, perms, &off, &n) != 4 || n < 0)
		return 0;
	if (strlen(perms) != 4 || perms[2] != 'x' || end <= start)
		return 0;
	file = line + n;
	file += strspn(file, " ");
	len = strcspn(file, "\n");
	memset(m, 0, sizeof(*m));
	m->pm_start = start;
	m->pm_end = end;
	m->pm_off = off;
	/* [vdso], anonymous JIT code: executable, but no file */
	if (len > 0 && file[0] == '/' && (m->pm_path = strndup(file, len)) ==
	    NULL)
		return -1;
	return 1;
}

/*
 * m is a mapping prev has too (same range, offset and file): the file
 * it maps has not changed since prev was read.  *j walks prev's sorted
 * maps alongside the caller's.
 */
static const struct dt_pm_map *
pm_same(const struct dt_pm_snap *prev, size_t *j, const struct dt_pm_map *m)
{
	const struct dt_pm_map *o;

	if (prev == NULL)
		return NULL;
	while (*j < prev->ps_n && prev->ps_maps[*j].pm_start < m->pm_start)
		(*j)++;
	if (*j == prev->ps_n)
		return NULL;
	o = &prev->ps_maps[*j];
	if (o->pm_start != m->pm_start || o->pm_end != m->pm_end ||
	    o->pm_off != m->pm_off || o->pm_path == NULL ||
	    strcmp(o->pm_path, m->pm_path) != 0)
		return NULL;
	return o;
}

struct dt_pm_snap *
dt_pm_read(pid_t pid, const struct dt_pm_snap *prev)
{
	const struct dt_pm_map *o;
	size_t j = 0;
	struct dt_pm_snap *snap = NULL;
	struct dt_pm_map *maps = NULL, m, *nm;
	size_t n = 0, cap = 0, i, linecap = 0;
	uint64_t stime, stime2;
	char path[128], *line = NULL;
	FILE *fp;
	int error = ESRCH, rv;
	uint64_t seq = atomic_fetch_add(&pm_seq, 1);

	if ((stime = dt_pm_stime(pid)) == 0) {
		errno = ESRCH;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%d/maps", pm_proc, (int)pid);
	if ((fp = fopen(path, "re")) == NULL) {
		errno = ESRCH;
		return NULL;
	}
	while (getline(&line, &linecap, fp) != -1 && n < DT_PM_MAXMAPS) {
		if ((rv = pm_parse(line, &m)) == 0)
			continue;
		if (rv < 0)
			goto nomem;
		/* the kernel lists them in order: anything else is bad */
		if (n > 0 && m.pm_start < maps[n - 1].pm_end) {
			free(m.pm_path);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nm = reallocarray(maps, cap, sizeof(*maps))) ==
			    NULL) {
				free(m.pm_path);
				goto nomem;
			}
			maps = nm;
		}
		maps[n++] = m;
	}
	fclose(fp);
	fp = NULL;
	free(line);
	line = NULL;

	/* The same process from before the first read to after the last. */
	stime2 = dt_pm_stime(pid);
	if (n == 0 || stime2 != stime)
		goto fail;
	/* Sizes: a stat per mapping prev does not already know. */
	if (prev != NULL && prev->ps_stime != stime)
		prev = NULL;
	for (i = 0; i < n; i++) {
		if (maps[i].pm_path == NULL)
			continue;
		if ((o = pm_same(prev, &j, &maps[i])) != NULL)
			maps[i].pm_size = o->pm_size;
		else
			maps[i].pm_size = pm_filesize(pid, maps[i].pm_start,
			    maps[i].pm_end, maps[i].pm_path);
	}
	if ((snap = malloc(sizeof(*snap) + n * sizeof(*maps))) == NULL)
		goto nomem;
	atomic_init(&snap->ps_ref, 1);
	snap->ps_stime = stime;
	snap->ps_seq = seq;
	snap->ps_n = n;
	memcpy(snap->ps_maps, maps, n * sizeof(*maps));
	free(maps);
	return snap;
nomem:
	error = ENOMEM;
fail:
	if (fp != NULL)
		fclose(fp);
	free(line);
	pm_free_maps(maps, n);
	errno = error;
	return NULL;
}

struct dt_pm_snap *
dt_pm_hold(struct dt_pm_snap *snap)
{
	if (snap != NULL)
		atomic_fetch_add(&snap->ps_ref, 1);
	return snap;
}

void
dt_pm_put(struct dt_pm_snap *snap)
{
	size_t i;

	if (snap == NULL || atomic_fetch_sub(&snap->ps_ref, 1) != 1)
		return;
	for (i = 0; i < snap->ps_n; i++)
		free(snap->ps_maps[i].pm_path);
	free(snap);
}

const struct dt_pm_map *
dt_pm_find(const struct dt_pm_snap *snap, uint64_t va)
{
	size_t lo = 0, hi, mid;

	if (snap == NULL)
		return NULL;
	hi = snap->ps_n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (va < snap->ps_maps[mid].pm_start)
			hi = mid;
		else if (va >= snap->ps_maps[mid].pm_end)
			lo = mid + 1;
		else
			return &snap->ps_maps[mid];
	}
	return NULL;
}

/* --- the cache ------------------------------------------------------- */

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

/* [m] Unhash and unlist pe; the caller frees it and puts its snapshot. */
static void
pm_remove(struct pm_ent *pe)
{
	struct pm_ent **pp;

	for (pp = &pm_hash[pm_bucket(pe->pe_pid)]; *pp != pe;
	    pp = &(*pp)->pe_hnext)
		;
	*pp = pe->pe_hnext;
	pm_lru_unlink(pe);
	atomic_fetch_sub(&pm_count, 1);
}

/*
 * Make snap pid's cached snapshot.  With only_known, only when the cache
 * already holds pid under the same start time.  Takes [m]; frees outside
 * it.  Returns whether the cache holds snap or a later read of the same
 * process (which it keeps): 0 only when neither (no memory, or not
 * known with only_known).
 */
static int
pm_store(pid_t pid, struct dt_pm_snap *snap, int only_known)
{
	struct pm_ent *pe, *fresh = NULL, *evict = NULL;
	struct dt_pm_snap *old = NULL;

	if (!only_known && (fresh = calloc(1, sizeof(*fresh))) == NULL)
		return 0;
	pthread_mutex_lock(&pm_lock);
	if ((pe = pm_lookup(pid)) != NULL) {
		if (only_known && pe->pe_snap->ps_stime != snap->ps_stime) {
			pthread_mutex_unlock(&pm_lock);
			return 0;
		}
		/*
		 * Never back in time: a read that began before the one
		 * cached may have seen the process mid-exec (the new image
		 * without its libraries yet) and ended late; stime does not
		 * change at an exec.
		 */
		if (pe->pe_snap->ps_stime == snap->ps_stime &&
		    pe->pe_snap->ps_seq > snap->ps_seq) {
			pthread_mutex_unlock(&pm_lock);
			free(fresh);
			return 1;
		}
		/* newer maps of the same process, or the pid's new owner */
		old = pe->pe_snap;
		pe->pe_snap = dt_pm_hold(snap);
		pm_lru_unlink(pe);
		pm_lru_front(pe);
	} else if (fresh != NULL) {
		pe = fresh;
		fresh = NULL;
		pe->pe_pid = pid;
		pe->pe_snap = dt_pm_hold(snap);
		pe->pe_hnext = pm_hash[pm_bucket(pid)];
		pm_hash[pm_bucket(pid)] = pe;
		pm_lru_front(pe);
		if (atomic_fetch_add(&pm_count, 1) + 1 > pm_max) {
			evict = pm_tail;
			pm_remove(evict);
		}
	}
	pthread_mutex_unlock(&pm_lock);
	free(fresh);
	dt_pm_put(old);
	if (evict != NULL) {
		dt_pm_put(evict->pe_snap);
		free(evict);
	}
	return pe != NULL;
}

struct dt_pm_snap *
dt_pm_snapshot(pid_t pid)
{
	struct dt_pm_snap *snap, *cached;

	cached = dt_pm_cached(pid);
	snap = dt_pm_read(pid, cached);
	dt_pm_put(cached);
	if (snap == NULL)
		return NULL;
	if (!pm_store(pid, snap, 0)) {
		dt_pm_put(snap);
		errno = ENOMEM;
		return NULL;
	}
	return snap;
}

struct dt_pm_snap *
dt_pm_cached(pid_t pid)
{
	struct dt_pm_snap *snap = NULL;
	struct pm_ent *pe;

	pthread_mutex_lock(&pm_lock);
	if ((pe = pm_lookup(pid)) != NULL) {
		snap = dt_pm_hold(pe->pe_snap);
		pm_lru_unlink(pe);
		pm_lru_front(pe);
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
			(void)pm_store(pid, live, 1);
		dt_pm_put(cached);
		return live;
	}
	/* gone, a zombie, or someone else's pid now: what we kept */
	dt_pm_put(live);
	if (cached == NULL)
		errno = ESRCH;
	return cached;
}

/* --- one attached process ------------------------------------------ */

void
dt_pm_track_attach(struct dt_pm_track *pt, pid_t pid)
{
	memset(pt, 0, sizeof(*pt));
	pt->pt_wait = DT_PM_WAIT_MIN;
	pt->pt_snap = dt_pm_snapshot(pid);
	pt->pt_stime = pt->pt_snap != NULL ? pt->pt_snap->ps_stime :
	    dt_pm_stime(pid);
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
	(void)pm_store(pid, snap, 0);
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
