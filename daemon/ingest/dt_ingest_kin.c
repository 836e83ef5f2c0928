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
 * Who is whose parent (UDT_HELLO_KIN, udt_wire.h), kept past the exits
 * that /proc forgets.  btrace -c without the kernel's process connector
 * (it needs CAP_NET_ADMIN) places an event's process in its command's
 * tree by the parent chain in /proc; a process gone with its parent
 * before btrace reads its events had no chain left, and its events were
 * left out.  Every tracee says its hello while its parent lives (the
 * parent waits for it, or has just forked it), and serve reads its stat
 * then: its parent is noted here, and so are the parents above it that
 * dtd never heard from (a subshell that only forks and waits), from
 * /proc while they live, up to a tracee already noted.
 *
 * A table of DTI_NKIN by pid, in sets of DTI_KIN_WAYS: a pid noted again
 * takes its own entry, a new one the set's oldest.  A pid reused since
 * is told by its start time, which the asker compares with its event's.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_ingest.h"
#include "dt_proc.h"

#define DTI_NKIN	8192		/* a power of two */
#define DTI_KIN_WAYS	4
#define DTI_KIN_DEPTH	4		/* ancestors read in /proc, at most */

struct dti_kin {
	pid_t		dk_pid;		/* 0: free */
	pid_t		dk_ppid;
	uid_t		dk_uid;		/* its owner's: who may ask */
	uint32_t	dk_seq;		/* when noted: the oldest goes */
	uint64_t	dk_start;	/* CLOCK_REALTIME ns */
};

static pthread_mutex_t	dti_kin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dti_kin	dti_kins[DTI_NKIN];	/* [dti_kin_lock] */
static uint32_t		dti_kin_seq;		/* [dti_kin_lock] */

/* pid's entry, or with put the one it is to take.  [dti_kin_lock] */
static struct dti_kin *
dti_kin_slot(pid_t pid, bool put)
{
	uint32_t h = (uint32_t)pid * 2654435761u;
	struct dti_kin *set, *old;
	int i;

	set = &dti_kins[((h >> 16) & (DTI_NKIN / DTI_KIN_WAYS - 1)) *
	    DTI_KIN_WAYS];
	for (i = 0, old = set; i < DTI_KIN_WAYS; i++) {
		if (set[i].dk_pid == pid)
			return &set[i];
		/* Wraps after 2^32 notes: an age, not a count. */
		if (set[i].dk_pid == 0 || (old->dk_pid != 0 &&
		    dti_kin_seq - set[i].dk_seq > dti_kin_seq - old->dk_seq))
			old = &set[i];
	}
	return put ? old : NULL;
}

/* A start in clock ticks since boot (/proc's starttime) as realtime ns. */
static uint64_t
dti_kin_start(uint64_t ticks)
{
	static long hz;
	uint64_t real, boot, since;

	if (hz <= 0 && (hz = sysconf(_SC_CLK_TCK)) <= 0)
		hz = 100;
	real = dt_clock_ns(CLOCK_REALTIME);
	boot = dt_clock_ns(CLOCK_BOOTTIME);
	since = ticks * (1000000000ULL / (uint64_t)hz);
	return since > boot || boot - since > real ? 0 : real - (boot - since);
}

static void
dti_kin_put(pid_t pid, pid_t ppid, uid_t uid, uint64_t start)
{
	struct dti_kin *dk;

	pthread_mutex_lock(&dti_kin_lock);
	dk = dti_kin_slot(pid, true);
	dk->dk_pid = pid;
	dk->dk_ppid = ppid;
	dk->dk_uid = uid;
	dk->dk_seq = dti_kin_seq++;
	dk->dk_start = start;
	pthread_mutex_unlock(&dti_kin_lock);
}

static bool
dti_kin_known(pid_t pid)
{
	bool known;

	pthread_mutex_lock(&dti_kin_lock);
	known = dti_kin_slot(pid, false) != NULL;
	pthread_mutex_unlock(&dti_kin_lock);
	return known;
}

void
dt_ingest_kin_note(pid_t pid, uid_t uid, const struct dt_proc_stat *ps)
{
	dti_kin_put(pid, ps->ps_ppid, uid, dti_kin_start(ps->ps_start));
}

void
dt_ingest_kin_above(pid_t ppid)
{
	struct dt_proc_stat aps;
	struct stat st;
	char path[32];
	pid_t p;
	int depth;

	/*
	 * Its parents that never said a hello, read while they live: the
	 * parent's stat may already be its successor's if it exited
	 * meanwhile, which its start time then says to the asker.
	 */
	for (p = ppid, depth = 0; p > 1 && depth < DTI_KIN_DEPTH &&
	    !dti_kin_known(p); depth++) {
		snprintf(path, sizeof(path), "/proc/%d", (int)p);
		if (stat(path, &st) != 0 || dt_proc_stat(p, &aps) != 0)
			break;
		dti_kin_put(p, aps.ps_ppid, st.st_uid,
		    dti_kin_start(aps.ps_start));
		p = aps.ps_ppid;
	}
}

void
dt_ingest_kin(int fd, const struct ucred *cr, const struct udt_maps_req *rq)
{
	struct udt_kin k;
	struct dti_kin *dk;

	memset(&k, 0, sizeof(k));
	k.uk_magic = UDT_MAGIC;
	k.uk_version = UDT_VERSION;
	k.uk_error = ENOENT;
	if (rq->umr_pid <= 0 || rq->umr_pad != 0)
		k.uk_error = EINVAL;
	else {
		pthread_mutex_lock(&dti_kin_lock);
		dk = dti_kin_slot(rq->umr_pid, false);
		/* Another user's process: as if dtd never knew it. */
		if (dk != NULL && (cr->uid == 0 || dk->dk_uid == cr->uid)) {
			k.uk_error = 0;
			k.uk_ppid = dk->dk_ppid;
			k.uk_start = dk->dk_start;
		}
		pthread_mutex_unlock(&dti_kin_lock);
	}
	/* A fresh socket's buffer takes it whole: never waits. */
	(void)send(fd, &k, sizeof(k), MSG_NOSIGNAL | MSG_DONTWAIT);
}
