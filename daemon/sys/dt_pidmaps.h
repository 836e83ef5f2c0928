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
 * The executable mappings of traced processes, kept after they exit
 * (design decision 9): DTIOCRDVNODE and btrace's symbols must resolve the
 * user stacks of a process that is gone by the time its events are read.
 *
 * A snapshot is one reading of /proc/PID/maps (executable mappings only,
 * with the file sizes), immutable once made and reference counted, so
 * readers use it without a lock.  The cache maps a pid to its latest
 * snapshot, tagged with the process's start time (/proc/PID/stat field
 * 22) so that a pid reused by another process is never confused with the
 * one it names.  It holds at most a bounded number of pids and a bounded
 * number of bytes, in total and per user (the uid that attached the
 * process): a process that maps thousands of files under long names costs
 * megabytes, and a user who starts such processes by the hundred must
 * not grow dtd without end, nor push out everyone else's.  Beyond a
 * bound the cache forgets an entry: of the user over their own budget,
 * else of the user holding the most (bytes or pids); within a user,
 * the least recently used of the processes no tracker follows any more
 * (exited or detached) first, then the least recently used of those
 * still attached.  Each forgetting is counted (dt_pm_evicted(), the
 * ingest socket's statistics) and logged, the log rate-limited.
 *
 * An exec keeps pid and start time: the cache describes the newest image
 * dtd saw, and a stack recorded before the exec resolves against it.
 */
#ifndef DT_PIDMAPS_H
#define DT_PIDMAPS_H

/* What malloc adds to each block it hands out (glibc: its size word). */
#define DT_PM_MALLOC_OVH	sizeof(size_t)

#include <sys/types.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define DT_PM_MAXPIDS	4096	/* default bound on cached pids */
#define DT_PM_MAXMAPS	4096	/* executable mappings kept per snapshot */
/*
 * Default byte budget of the cache: a 64th of what opens' rings may
 * hold (--max-memory, itself the machine's RAM by default), within
 * [DT_PM_BUDGET_MIN, DT_PM_BUDGET_MAX]; a user may hold an eighth of
 * it, at least DT_PM_UBUDGET_MIN.  An honest process's executable
 * mappings cost a few kilobytes to a few tens of them (a hundred
 * libraries under ordinary names), so even the smallest budget keeps
 * hundreds of a user's exited processes.
 */
#define DT_PM_BUDGET_MIN	(32ULL << 20)
#define DT_PM_BUDGET_MAX	(1ULL << 30)
#define DT_PM_UBUDGET_MIN	(4ULL << 20)

struct dt_pm_map {
	uint64_t	 pm_start, pm_end;	/* [start, end) */
	uint64_t	 pm_off;		/* file offset of pm_start */
	uint64_t	 pm_size;		/* file size when read */
	char		*pm_path;		/* NULL: not backed by a file */
	/*
	 * The mapped file's identity, from a stat of the very mapping
	 * (/proc/PID/map_files, root) made by this read: what a traced
	 * process's library keys its plans and images by (udt_tab's
	 * tb_xfiles).  pm_exact 0: not known so (no map_files, a size
	 * copied from an earlier read).
	 */
	int		 pm_exact;
	uint64_t	 pm_dev, pm_ino;
	int64_t		 pm_mtime, pm_mtimens, pm_ctime, pm_ctimens;
};

struct dt_pm_snap {
	atomic_uint	 ps_ref;		/* [a] */
	uint64_t	 ps_stime;		/* start time, clock ticks */
	uint64_t	 ps_seq;		/* order its read began in */
	uint64_t	 ps_bytes;		/* heap it holds, all told */
	size_t		 ps_n;			/* sorted, disjoint */
	struct dt_pm_map ps_maps[];
};

/*
 * Read pid's executable mappings now.  A new snapshot (one reference),
 * or NULL with errno: ESRCH (no such process, a zombie, or the pid
 * changed hands while being read), ENOMEM.  File sizes are taken from
 * prev (NULL: none), an earlier snapshot of the same process, for the
 * mappings it has too, and stat'ed for the others only.  Any thread, no
 * lock held: it reads /proc and may sleep on the target's mmap lock.
 */
struct dt_pm_snap	*dt_pm_read(pid_t pid, const struct dt_pm_snap *prev);
/*
 * The same for a process the caller holds a pidfd of, with stime, its
 * start time as dt_pm_stime() gives it, read by pid while pidfd's
 * process lived: a poll of pidfd after the read, not a second read of
 * its stat, says the maps were its own (an attach's four calls become
 * one).  Any thread, no lock held.
 */
struct dt_pm_snap	*dt_pm_read_pidfd(pid_t pid, uint64_t stime, int pidfd,
			    const struct dt_pm_snap *prev);

/*
 * The start time of the process now called pid, 0 when there is none
 * (or it is a zombie).  Any thread, no lock.
 */
uint64_t	dt_pm_stime(pid_t pid);

/* Take and drop a reference; put frees on the last.  Any thread. */
struct dt_pm_snap	*dt_pm_hold(struct dt_pm_snap *);
void	dt_pm_put(struct dt_pm_snap *);

/* The mapping of snap that contains va, or NULL.  Any thread, no lock. */
const struct dt_pm_map	*dt_pm_find(const struct dt_pm_snap *, uint64_t va);

/*
 * Read pid now and make that its cached snapshot, charged to uid,
 * replacing an older one (the same process mapped more, or exec'd) or
 * the entry of another process that had the same pid.  Returns the new
 * snapshot with one reference for the caller (kept in the cache too
 * unless it alone is beyond a budget), or NULL with errno as
 * dt_pm_read().  Any thread (the ingest serve workers and drain thread
 * call it); reads /proc without the cache lock, then takes it briefly.
 */
struct dt_pm_snap	*dt_pm_snapshot(pid_t pid, uid_t uid);

/*
 * The cached snapshot of pid with one reference, or NULL.  Marks it
 * recently used.  Any thread; takes the cache lock briefly.
 */
struct dt_pm_snap	*dt_pm_cached(pid_t pid);

/*
 * What to believe about pid's mappings now: the live /proc/PID/maps when
 * pid is alive and is the process the cache knows under that pid (or the
 * cache knows none), else the cached snapshot of the process that had
 * it.  One reference, or NULL with errno ESRCH (unknown pid) or ENOMEM.
 * Any thread, no lock held; used by DTIOCRDVNODE and the ingest socket's
 * maps query.
 */
struct dt_pm_snap	*dt_pm_current(pid_t pid);

/*
 * Keeping one attached process's snapshot current, for the ingest
 * threads.  The owner of the tracker (the thread that drains the
 * process's ring) checks the frames of every user stack against the
 * snapshot; a frame outside it (a library loaded since, code generated
 * since) reads the maps again, at most once per pt_wait, which doubles
 * while the new reads find nothing new (a frame-pointer walk through
 * code without frame pointers yields addresses no read will find) and
 * falls back to DT_PM_WAIT_MIN when one does.  Reads that find another
 * process under the pid are dropped.
 */
#define DT_PM_WAIT_MIN	1000000ULL	/* ns */
#define DT_PM_WAIT_MAX	1000000000ULL	/* ns */
#define DT_PM_KNOWNBITS	6		/* 64 pcs remembered as found */

/* [o]: the owner; the cache's own snapshot is under its lock. */
struct dt_pm_track {
	struct dt_pm_snap	*pt_snap;	/* [o] newest read, or NULL */
	uint64_t		 pt_stime;	/* [o] at attach, 0: unknown */
	uint64_t		 pt_next;	/* [o] monotonic ns: no read before */
	uint64_t		 pt_wait;	/* [o] ns */
	pid_t			 pt_pid;	/* [o] whom it follows */
	uid_t			 pt_uid;	/* [o] whom the cache charges */
	int			 pt_pinned;	/* [o] counted in the cache
						   entry's attached */
	uint64_t		 pt_known[1 << DT_PM_KNOWNBITS];
					/* [o] pcs found in pt_snap, by hash */
};

/*
 * Snapshot pid (also into the cache, charged to uid) while it waits for
 * its handshake, so a process that exits right after still resolves;
 * the cache entry counts as attached (forgotten after the exited ones)
 * until dt_pm_track_fini().  The thread that creates the tracker,
 * before any other thread sees it.
 */
void	dt_pm_track_attach(struct dt_pm_track *, pid_t pid, uid_t uid);
/*
 * The same, read as dt_pm_read_pidfd() does when pidfd is not -1 and
 * stime not 0 (else as dt_pm_track_attach()).
 */
void	dt_pm_track_attach_pidfd(struct dt_pm_track *, pid_t pid, uid_t uid,
	    int pidfd, uint64_t stime);
/*
 * One user stack of pid (n return addresses, zeros ignored): a few
 * compares when every frame is known, else may read /proc (see above).
 * The owner only.
 */
void	dt_pm_track_stack(struct dt_pm_track *, pid_t pid,
	    const uint64_t *pcs, unsigned int n);
/*
 * Drop the tracker's snapshot; the cache keeps its own, now as the
 * entry of a process nobody follows (the first to be forgotten).  The
 * owner.
 */
void	dt_pm_track_fini(struct dt_pm_track *);

/*
 * Tests and shutdown.  dt_pm_setup() changes where /proc is read
 * (NULL: "/proc") and the bound on pids (0: DT_PM_MAXPIDS), only while
 * no other thread uses the cache.  dt_pm_clear() empties the cache; any
 * thread (snapshots still referenced live on until put).
 */
void	dt_pm_setup(const char *procroot, unsigned int maxpids);
/* Its half for dt_pidmaps_read.c: where /proc is. */
void	dt_pm_read_setup(const char *procroot);
void	dt_pm_clear(void);
/* Pids cached now.  Any thread. */
unsigned int	dt_pm_count(void);

/*
 * The byte budgets: total and per user (0: the defaults above, from
 * maxmem, the bound on opens' rings, 0 for unknown).  A per-user budget
 * above the total is the total.  dtd's main thread at start, or tests,
 * while no other thread uses the cache; the effective values are
 * returned in *totalp and *userp (NULL: not wanted).
 */
void	dt_pm_budget(uint64_t total, uint64_t user, uint64_t maxmem,
	    uint64_t *totalp, uint64_t *userp);
/*
 * Bytes the cache holds now (snapshots and entries), those of uid, and
 * entries forgotten to keep within the bounds since start.  Any thread.
 */
uint64_t	dt_pm_bytes(void);
uint64_t	dt_pm_user_bytes(uid_t uid);
uint64_t	dt_pm_evicted(void);

#endif /* DT_PIDMAPS_H */
