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
 * The kernel feed's view of the traced processes (dt_sys_kern.h).
 *
 * The ingest transport tells this file of each tracee as it attaches
 * (accept thread, before the tracee is listed or makes a hooked call)
 * and as it leaves the list (drain thread, with the time it was
 * unlinked, after the process ended or its image was replaced), through
 * the sinks of dt_ingest.h.  No kernel event can then fall between two
 * looks, however short the tracee's life: the reader decides by
 *
 *  - a process attached now is the library's: all of its kernel events
 *    are dropped, whenever they happened (the launcher's loader calls
 *    made before the attach are the library's too, recorded later with
 *    their real times);
 *  - a process that left (it exited; or it exec'd an image that does
 *    not attach, a static binary; or its ring was retired) is kept with
 *    the time it left: its events up to then are dropped, since they
 *    were made while it was, or may have been, attached; those after
 *    are the kernel's alone.
 *
 * The attach comes before the exit for one image (ingest tells the
 * attach before listing it); an image exec'd by a tracee attaches
 * before the old one leaves, so a pid carries a count of its listed
 * images and leaves when the count falls to 0.
 *
 * How long a departed pid is kept: until the reader has handled kernel
 * events stamped DT_SK_GONE_NS past its exit (dt_sk_horizon), which is
 * far more than perf's CPUs stand apart in one reader round; measured
 * by the events the reader sees, not by the clock, so a reader that
 * falls behind keeps them as long as it is behind.  Memory is bounded:
 * at most DT_SK_MAXGONE are kept; past that the oldest is forgotten
 * early, counted in dt_sk_evicted (a flood of more than that many
 * tracee exits within the horizon may count their last calls twice).
 *
 * Before its attach, a launched process runs its loader (whose calls
 * the launcher's helper hands to the library, recorded later with
 * their real times) and the library's constructor: the reader may read
 * those calls before the attach is told.  So at each exec (perf's comm
 * record, before the new image's records on that CPU) the reader looks
 * at the image's environment: one that preloads the library and names
 * this dtd's socket (USERDT_SOCKET, or none when ours is the default)
 * is about to attach, and its events are dropped from then on, until
 * it attached (then as above), left, or DT_SK_PENDING_NS of event time
 * passed without an attach (a refused tracee: then the kernel's).
 *
 * The windows this leaves, and where a call is missed, never counted
 * twice: a launched process's calls before its exec record was read
 * (the launcher's fork child) that the reader reads after it; a
 * preloaded process that never attaches, for DT_SK_PENDING_NS; a pid
 * reused within a reap (10 ms) of the tracee's end loses its first
 * calls, and so do the first calls of a static image exec'd by a
 * tracee.  The one way to count twice: a launched process that moves
 * to another CPU between its exec and its attach, when the reader reads
 * that CPU's records of it before the exec's (one reader round).
 *
 * Reading /proc/PID/environ takes the process's mmap lock for a moment:
 * once per exec on the machine, while a syscall probe records.
 *
 * The reader takes no lock per event: it keeps a sorted copy of the
 * tables, refreshed when dt_sk_gen says they changed.
 *
 * Locks used to protect the globals in this file:
 *	[S]	dt_sk_lock (the ingest threads, and the reader's refresh)
 *	[R]	the kernel feed's reader thread (dt_ksys_traced_fn)
 *	[a]	atomic
 */
#include <sys/syscall.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_ksys.h"
#include "dt_sys_kern.h"
#include "systab.h"

#define DT_SK_GONE_NS		500000000ULL	/* 0.5 s of event time */
#define DT_SK_MAXGONE		4096
#define DT_SK_PENDING_NS	1000000000ULL	/* 1 s of event time */
#define DT_SK_MAXPEND		256
#define DT_SK_ENVMAX		(256 * 1024)	/* environ read, at most */

struct dt_sk_tr {
	pid_t		st_pid;
	unsigned int	st_n;		/* its listed images */
	uint64_t	st_ns;		/* CLOCK_REALTIME of its first */
	bool		st_foreign;	/* not in the program's map */
	bool		st_young;	/* its start hidden from the program */
};

struct dt_sk_pend {
	pid_t		sp_pid;
	uint64_t	sp_seen;	/* dt_sk_seen at its exec */
};

struct dt_sk_gone {
	pid_t		sg_pid;
	uint64_t	sg_ns;		/* CLOCK_REALTIME it left at */
};

static pthread_mutex_t	 dt_sk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dt_sk_tr	*dt_sk_tr;			/* [S] unsorted */
static size_t		 dt_sk_ntr, dt_sk_maxtr;	/* [S] */
static struct dt_sk_gone dt_sk_gone[DT_SK_MAXGONE];	/* [S] a ring */
static size_t		 dt_sk_gfirst, dt_sk_ngone;	/* [S] oldest, count */
static bool		 dt_sk_nomem;		/* [S] said once */
static atomic_uint	 dt_sk_gen;		/* [S] writes, [a] reads */
static _Atomic uint64_t	 dt_sk_horizon;		/* [R] writes, [a] reads */
static _Atomic uint64_t dt_sk_evicted;		/* [a] forgotten early */

static pid_t		*dt_sk_cur;		/* [R] sorted */
static size_t		 dt_sk_ncur, dt_sk_maxcur;	/* [R] */
static struct dt_sk_gone dt_sk_rgone[DT_SK_MAXGONE];	/* [R] sorted */
static size_t		 dt_sk_nrgone;		/* [R] */
static unsigned int	 dt_sk_rgen;		/* [R] dt_sk_gen copied */
static bool		 dt_sk_copied;		/* [R] once at least */
static uint64_t		 dt_sk_seen;		/* [R] latest event time */
static struct dt_sk_pend dt_sk_pend[DT_SK_MAXPEND];	/* [R] to attach */
static size_t		 dt_sk_npend;		/* [R] */
static char		 dt_sk_env[DT_SK_ENVMAX];	/* [R] */

/* Forget the departed the reader is past.  [S] */
static void
dt_sk_age(void)
{
	uint64_t h = atomic_load_explicit(&dt_sk_horizon,
	    memory_order_relaxed);

	while (dt_sk_ngone > 0 && dt_sk_gone[dt_sk_gfirst].sg_ns < h) {
		dt_sk_gfirst = (dt_sk_gfirst + 1) % DT_SK_MAXGONE;
		dt_sk_ngone--;
	}
}

void
dt_sys_kern_attach(pid_t pid, bool foreign)
{
	struct dt_sk_tr *t;
	struct timespec ts;
	size_t i, max;

	pthread_mutex_lock(&dt_sk_lock);
	for (i = 0; i < dt_sk_ntr; i++)
		if (dt_sk_tr[i].st_pid == pid)
			break;
	if (i == dt_sk_ntr) {
		if (dt_sk_ntr == dt_sk_maxtr) {
			max = dt_sk_maxtr == 0 ? 64 : 2 * dt_sk_maxtr;
			if ((t = realloc(dt_sk_tr, max * sizeof(*t))) == NULL) {
				/* Its calls will be counted twice: say so. */
				if (!dt_sk_nomem)
					fprintf(stderr, "dtd: syscall: out of "
					    "memory: the kernel feed may count "
					    "traced processes' calls twice\n");
				dt_sk_nomem = true;
				pthread_mutex_unlock(&dt_sk_lock);
				return;
			}
			dt_sk_tr = t;
			dt_sk_maxtr = max;
		}
		dt_sk_tr[i].st_pid = pid;
		dt_sk_tr[i].st_n = 0;
		dt_sk_ntr++;
	}
	/*
	 * The counting program skips it from now on, before the tracee
	 * is welcomed and makes a hooked call; under dt_sk_lock, so that
	 * its exit's removal cannot pass this.  Not one in another pid
	 * namespace: the ingest cannot tell which of its records the
	 * program sees anyway (a fork child's return, a vfork child's
	 * calls: its tids are not dtd's), so the program counts all its
	 * calls and the ingest drops all its records of the probes the
	 * program counts (dt_ingest_emit()).  A process keeps its pid
	 * namespace through exec: every image of it is foreign or none.
	 */
	if (dt_sk_tr[i].st_n++ == 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		dt_sk_tr[i].st_ns = (uint64_t)ts.tv_sec * 1000000000ULL +
		    (uint64_t)ts.tv_nsec;
		dt_sk_tr[i].st_foreign = foreign;
		dt_sk_tr[i].st_young = !foreign && dt_ksys_tgid(pid, true);
	}
	atomic_fetch_add_explicit(&dt_sk_gen, 1, memory_order_release);
	pthread_mutex_unlock(&dt_sk_lock);
}

void
dt_sys_kern_exit(pid_t pid, uint64_t ns)
{
	size_t i, j;

	pthread_mutex_lock(&dt_sk_lock);
	for (i = 0; i < dt_sk_ntr; i++)
		if (dt_sk_tr[i].st_pid == pid)
			break;
	/* Not there: its attach found no memory; nothing to undo. */
	if (i == dt_sk_ntr || --dt_sk_tr[i].st_n > 0) {
		pthread_mutex_unlock(&dt_sk_lock);
		return;
	}
	/* Its calls from here are no hook's: the program's again. */
	if (!dt_sk_tr[i].st_foreign)
		dt_ksys_tgid(pid, false);
	dt_sk_tr[i] = dt_sk_tr[--dt_sk_ntr];
	dt_sk_age();
	if (dt_sk_ngone == DT_SK_MAXGONE) {
		dt_sk_gfirst = (dt_sk_gfirst + 1) % DT_SK_MAXGONE;
		dt_sk_ngone--;
		atomic_fetch_add_explicit(&dt_sk_evicted, 1,
		    memory_order_relaxed);
	}
	j = (dt_sk_gfirst + dt_sk_ngone) % DT_SK_MAXGONE;
	dt_sk_gone[j].sg_pid = pid;
	dt_sk_gone[j].sg_ns = ns;
	dt_sk_ngone++;
	atomic_fetch_add_explicit(&dt_sk_gen, 1, memory_order_release);
	pthread_mutex_unlock(&dt_sk_lock);
}

bool
dt_sys_kern_before(pid_t pid, uint64_t ns, unsigned int p)
{
	bool before = false;
	unsigned int lin;
	size_t i;

	pthread_mutex_lock(&dt_sk_lock);
	for (i = 0; i < dt_sk_ntr; i++)
		if (dt_sk_tr[i].st_pid == pid) {
			before = ns < dt_sk_tr[i].st_ns;
			/*
			 * A young one's calls from its exec on were hidden
			 * from the program (dt_tp_ksysbpf.c): of those before
			 * the attach, only the entry of the exec that made it
			 * was the program's, made by the image before.
			 */
			if (before && dt_sk_tr[i].st_young) {
				lin = p / 2 < SYSTAB_COUNT ?
				    systab[p / 2].se_linux : SYSTAB_LINUX_MAX;
				before = !(p & 1) && (lin == SYS_execve ||
				    lin == SYS_execveat);
			}
			break;
		}
	pthread_mutex_unlock(&dt_sk_lock);
	return before;
}

static int
dt_sk_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* By pid, then latest departure first. */
static int
dt_sk_gcmp(const void *a, const void *b)
{
	const struct dt_sk_gone *x = a, *y = b;

	if (x->sg_pid != y->sg_pid)
		return (x->sg_pid > y->sg_pid) - (x->sg_pid < y->sg_pid);
	return (x->sg_ns < y->sg_ns) - (x->sg_ns > y->sg_ns);
}

/* Copy the tables, sorted, as of generation gen.  [R] */
static void
dt_sk_refresh(unsigned int gen)
{
	size_t i, max;
	pid_t *p;

	pthread_mutex_lock(&dt_sk_lock);
	if (dt_sk_ntr > dt_sk_maxcur) {
		max = 2 * dt_sk_ntr;
		if ((p = realloc(dt_sk_cur, max * sizeof(*p))) == NULL) {
			/* Keep the old copy; the next event tries again. */
			pthread_mutex_unlock(&dt_sk_lock);
			return;
		}
		dt_sk_cur = p;
		dt_sk_maxcur = max;
	}
	for (i = 0; i < dt_sk_ntr; i++)
		dt_sk_cur[i] = dt_sk_tr[i].st_pid;
	dt_sk_ncur = dt_sk_ntr;
	dt_sk_age();
	for (i = 0; i < dt_sk_ngone; i++)
		dt_sk_rgone[i] = dt_sk_gone[(dt_sk_gfirst + i) % DT_SK_MAXGONE];
	dt_sk_nrgone = dt_sk_ngone;
	pthread_mutex_unlock(&dt_sk_lock);
	/* qsort() takes no NULL, even for nothing to sort (UBSan says). */
	if (dt_sk_ncur > 0)
		qsort(dt_sk_cur, dt_sk_ncur, sizeof(pid_t), dt_sk_cmp);
	if (dt_sk_nrgone > 0)
		qsort(dt_sk_rgone, dt_sk_nrgone, sizeof(dt_sk_rgone[0]),
		    dt_sk_gcmp);
	dt_sk_rgen = gen;
	dt_sk_copied = true;
}

/* The latest departure of pid, or 0.  [R] */
static uint64_t
dt_sk_left(pid_t pid)
{
	size_t lo = 0, hi = dt_sk_nrgone, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (dt_sk_rgone[mid].sg_pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < dt_sk_nrgone && dt_sk_rgone[lo].sg_pid == pid ?
	    dt_sk_rgone[lo].sg_ns : 0;
}

/* Index of pid in dt_sk_pend, or dt_sk_npend.  [R] */
static size_t
dt_sk_pfind(pid_t pid)
{
	size_t i;

	for (i = 0; i < dt_sk_npend; i++)
		if (dt_sk_pend[i].sp_pid == pid)
			break;
	return i;
}

static void
dt_sk_pdel(size_t i)
{
	dt_sk_pend[i] = dt_sk_pend[--dt_sk_npend];
}

/* Whether the image pid exec'd will attach to this dtd.  [R] */
static bool
dt_sk_will_attach(pid_t pid)
{
	return dt_ksys_will_attach(pid, dt_sk_env, sizeof(dt_sk_env));
}

void
dt_sys_kern_exec(pid_t pid)
{
	size_t i = dt_sk_pfind(pid);

	/* Perf gives the exec once per event on its CPU: look once. */
	if (i < dt_sk_npend && dt_sk_pend[i].sp_seen == dt_sk_seen)
		return;
	if (!dt_sk_will_attach(pid)) {
		if (i < dt_sk_npend)
			dt_sk_pdel(i);
		return;
	}
	if (i == dt_sk_npend) {
		/* Full: the first goes (it may have attached long ago). */
		if (dt_sk_npend == DT_SK_MAXPEND)
			dt_sk_pdel(0);
		i = dt_sk_npend++;
	}
	dt_sk_pend[i].sp_pid = pid;
	dt_sk_pend[i].sp_seen = dt_sk_seen;
}

bool
dt_sys_kern_traced(pid_t pid, uint64_t ns)
{
	uint64_t left;
	unsigned int gen;
	size_t i;

	/* Acquire: the tables as the writer left them at gen. */
	gen = atomic_load_explicit(&dt_sk_gen, memory_order_acquire);
	if (!dt_sk_copied || gen != dt_sk_rgen)
		dt_sk_refresh(gen);
	if (ns > dt_sk_seen) {
		dt_sk_seen = ns;
		if (ns > DT_SK_GONE_NS)
			atomic_store_explicit(&dt_sk_horizon,
			    ns - DT_SK_GONE_NS, memory_order_relaxed);
	}
	if (dt_sk_ncur > 0 && bsearch(&pid, dt_sk_cur, dt_sk_ncur,
	    sizeof(pid_t), dt_sk_cmp) != NULL)
		return true;
	if (ns <= (left = dt_sk_left(pid)))
		return true;
	if (dt_sk_npend == 0 || (i = dt_sk_pfind(pid)) == dt_sk_npend)
		return false;
	/*
	 * Still to attach, unless it left since it exec'd (its image's
	 * events after that are the kernel's: a static image it exec'd, a
	 * pid reused) or waited too long (refused).
	 */
	if (dt_sk_pend[i].sp_seen < left ||
	    dt_sk_seen - dt_sk_pend[i].sp_seen > DT_SK_PENDING_NS) {
		dt_sk_pdel(i);
		return false;
	}
	return true;
}
