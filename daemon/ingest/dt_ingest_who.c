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
 * Which thread a record names, and its comm: the tracee writes both, so
 * neither is believed as written.  A tid must not be a live thread of
 * another process: /proc/PID/task/TID must exist, or TID must be a child
 * of the process (a vfork child writes through its parent's ring until
 * it execs; its comm is then the process's), or, once the thread
 * is gone (a short thread, or the whole process, exited before the drain
 * looked), no task TID may live elsewhere.  A record naming another
 * process's thread (tid 1, say) is discarded and counted.  A tid that
 * names nobody alive stays the tracee's word.  The comm of an event is
 * dtd's, or the process's name when it attached (what a record made
 * before an exec and drained after it was made under): read from
 * /proc/PID/task/TID/comm when the tid is first seen,
 * read again when a record claims another (the thread renamed itself),
 * at most once per drain pass per thread, and written over what the
 * tracee claimed.  A thread gone before its first record was drained
 * has no comm left to read: the one it wrote stays its word.
 *
 * The threads seen are cached per process, so a record costs a lookup
 * in a small table, a thread a few system calls the first time it is
 * seen.  Tracees in another pid namespace write tids of that namespace,
 * which dtd cannot check against its own /proc: their tids and comms
 * stay their word.
 *
 * The drain thread only ([D]).
 */
#include <sys/stat.h>

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_proc.h"

uint64_t	dti_pass;		/* [D] drain passes so far */

/*
 * The comm of dp's thread tid now, false when it is gone; of dp's
 * process itself for kid, one of its children (see dti_tid_ours()).
 */
static bool
dti_task_comm(const struct dti_proc *dp, pid_t tid, bool kid,
    char comm[UDT_COMMLEN])
{
	return dt_proc_comm(dp->dp_pid, kid ? dp->dp_pid : tid, comm,
	    UDT_COMMLEN) == 0;
}

void
dti_who_init(struct dti_proc *dp)
{
	char path[64];
	struct stat a, b;

	memset(dp->dp_tids, 0, sizeof(dp->dp_tids));
	dp->dp_tidnext = 0;
	/* Its name before any exec: records drained later keep it. */
	if (!dti_task_comm(dp, dp->dp_pid, false, dp->dp_comm0))
		memset(dp->dp_comm0, 0, sizeof(dp->dp_comm0));
	/* Unknown counts as foreign: its tids are not ours to judge. */
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)dp->dp_pid);
	dp->dp_foreign = !(stat(path, &a) == 0 &&
	    stat("/proc/self/ns/pid", &b) == 0 && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev);
}

/*
 * May tid write into dp's ring?  Yes if it is a thread of dp's process
 * now; yes if it is a child of that process (*kid): a vfork child, or
 * any CLONE_VM child, writes through its parent's mapping of the ring
 * until it execs, and the drain may come after the exec; no if a task
 * tid lives anywhere else; yes if it lives nowhere (the tracee's word,
 * naming nobody).
 */
static bool
dti_tid_ours(const struct dti_proc *dp, pid_t tid, bool *kid)
{
	struct dt_proc_stat ps;
	char path[64];
	int error;

	*kid = false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)dp->dp_pid,
	    (int)tid);
	if (access(path, F_OK) == 0)
		return true;
	/* /proc/TID resolves any live task, leader or not. */
	if ((error = dt_proc_stat(tid, &ps)) == ESRCH)
		return true;
	*kid = error == 0 && ps.ps_ppid == dp->dp_pid;
	return *kid;
}

static struct dti_tid *
dti_tid_find(struct dti_proc *dp, pid_t tid)
{
	unsigned int i;

	for (i = 0; i < DTI_NTIDS; i++)
		if (dp->dp_tids[i].dt_tid == tid)
			return &dp->dp_tids[i];
	return NULL;
}

bool
dti_who(struct dti_proc *dp, struct udt_rec *r)
{
	struct dti_tid *t;
	char comm[UDT_COMMLEN];
	pid_t tid = r->ur_tid;
	bool kid = false;

	if ((t = dti_tid_find(dp, tid)) == NULL) {
		if (!dp->dp_foreign && tid != dp->dp_pid &&
		    !dti_tid_ours(dp, tid, &kid)) {
			atomic_fetch_add(&dti_stats.misnamed, 1);
			if (dp->dp_misnamed++ == 0)
				fprintf(stderr, "dtd: ingest: pid %d wrote a "
				    "record as tid %d, a thread of another "
				    "process: discarded\n", (int)dp->dp_pid,
				    (int)tid);
			return false;
		}
		/* Replaced in turn: an old entry costs a look again. */
		t = &dp->dp_tids[dp->dp_tidnext];
		dp->dp_tidnext = (dp->dp_tidnext + 1) % DTI_NTIDS;
		t->dt_tid = tid;
		t->dt_pass = dti_pass;
		/*
		 * Gone already (it renamed itself, recorded and exited
		 * before we looked): nothing is left to read, and the name
		 * it wrote stays its word.
		 */
		t->dt_kid = kid;
		t->dt_known = !dp->dp_foreign &&
		    dti_task_comm(dp, tid, kid, t->dt_comm);
	}
	if (!(r->ur_flags & UDT_R_COMM) || !t->dt_known)
		return true;
	/*
	 * The process's name when it attached: a record made before an
	 * exec and drained after it keeps the name it was made under,
	 * not the new image's.
	 */
	if (dp->dp_comm0[0] != '\0' &&
	    strncmp(r->ur_comm, dp->dp_comm0, UDT_COMMLEN) == 0)
		return true;
	if (strncmp(r->ur_comm, t->dt_comm, UDT_COMMLEN) != 0 &&
	    t->dt_pass != dti_pass) {
		/*
		 * Renamed since, or a lie: /proc says which, while the
		 * thread lives (after, as for one never seen alive, the
		 * name it wrote is its word).
		 */
		t->dt_pass = dti_pass;
		if (!dti_task_comm(dp, tid, t->dt_kid, comm)) {
			t->dt_known = false;
			return true;
		}
		memcpy(t->dt_comm, comm, UDT_COMMLEN);
	}
	memcpy(r->ur_comm, t->dt_comm, UDT_COMMLEN);
	return true;
}

#define DTI_PF_EXITING	0x00000004	/* task flag: in do_exit() */

/* Whether process pid is ending: gone, a zombie, or in do_exit(). */
static bool
dti_exiting(const struct dti_proc *dp)
{
	struct pollfd pfd = { .fd = dp->dp_pidfd, .events = POLLIN };
	struct dt_proc_stat ps;

	if (dp->dp_pidfd >= 0 && poll(&pfd, 1, 0) == 1)
		return true;
	return dt_proc_stat(dp->dp_pid, &ps) != 0 ||
	    (ps.ps_flags & DTI_PF_EXITING) != 0;
}

/*
 * An image's memory dies when the process execs or exits, and not
 * before; dtd opened it through /proc/PID/mem when the process attached,
 * so a read there returns 0 bytes (end of file) once it is gone, and
 * otherwise data or EIO (page 0 is not mapped).  Gone with the process
 * still running: it exec'd, and the ring it attached with is no longer
 * its image's; a child it forked may still hold it and write records
 * that would be stamped with the new image's pid.  The library waits,
 * before each exec, until dtd has drained what it wrote (udt_exec_drain),
 * so none of its own records are left to lose.  Gone because the
 * process is exiting: the ring's last records are its own.
 *
 * Root's tracees are not checked (root may write any process's memory),
 * nor those dtd could not open (an unprivileged dtd under Yama): those
 * have only their own user's images to name.  One whose old memory a
 * CLONE_VM child still shares (it lives on until that child execs or
 * exits too) is a known limit; a set-id exec is caught there by the
 * owner of /proc/PID (dt_ingest_image_ok()).  A process that exec'd
 * before dtd opened its memory: dti_image_holds().
 */
bool
dti_image_same(const struct dti_proc *dp)
{
	char c;

	if (dp->dp_memfd < 0 || pread(dp->dp_memfd, &c, 1, 0) != 0)
		return true;
	return dti_exiting(dp);
}

/*
 * The pid that connected is only the tracee's word until its image shows
 * the ring: a process can connect, fork a helper that keeps the socket,
 * and exec before the helper says hello, so that dtd opens the new
 * image's memory and dti_image_same() sees no exec.  The ring the helper
 * then gets is not mapped in that image, which holds dtd's random
 * rh_proof at rh_self only if it mapped the ring there, or if something
 * able to write its memory (its own code, or a ptracer with the rights
 * over it) put the word there: records then name a process whose memory
 * their writer controls anyway.  Where the tracee
 * published no address, or the read fails (nothing mapped there), the
 * records are not that image's.
 */
bool
dti_image_holds(struct dti_proc *dp)
{
	uint64_t self, v;

	if (dp->dp_proven || dp->dp_memfd < 0)
		return true;
	self = __atomic_load_n(&dp->dp_ring->rh_self, __ATOMIC_ACQUIRE);
	/* User addresses stay below 2^47 (2^56 with 5-level paging). */
	if (self == 0 || self % 4096 != 0 || self >= (1ULL << 56))
		return false;
	if (pread(dp->dp_memfd, &v, sizeof(v), (off_t)(self +
	    offsetof(struct udt_ring_hdr, rh_proof))) != (ssize_t)sizeof(v) ||
	    v != dp->dp_proof)
		return false;
	dp->dp_proven = true;
	return true;
}
