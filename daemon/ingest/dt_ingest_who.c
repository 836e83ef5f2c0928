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
 * The process a record is stamped with is the one that connected (its
 * socket's peer), but for a vfork child: a process that is a child of
 * that one and shares its memory (kcmp(2) KCMP_VM), which it does from
 * its vfork until its exec or exit, writes through the parent's ring and
 * gets its own pid, as the kernel would give it.  No forgery: while the
 * child shares the memory, whatever wrote in its name could have made
 * it do the same.  The sharing is looked at per batch, after the batch
 * was copied, so every record in it was written while it still held (a
 * process's memory is shared from the clone on, never again once left,
 * and a pid is not reused while its process lives); the library has a
 * vfork child wait for the drain before it execs or exits
 * (udt_exec_drain()).  A child no longer sharing it, or a kernel without
 * kcmp, gets the parent's pid, as a thread of it would.
 *
 * The threads seen are cached per process, so a record costs a lookup
 * in a small table, a thread a few system calls the first time it is
 * seen.  Tracees in another pid namespace write tids of that namespace,
 * which dtd cannot check against its own /proc: their tids and comms
 * stay their word.
 *
 * The drain thread only ([D]), but for the looks at a tracee's memory
 * below, which its user's worker makes ([k]: the worker while the look is
 * BUSY, the drain thread once it is DONE).
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_proc.h"

#define DTI_KCMP_VM	1		/* linux/kcmp.h */

uint64_t	dti_pass;		/* [D] drain passes so far */
uint64_t	dti_nbatch;		/* [D] batches flushed so far */

/*
 * The comm of dp's thread tid now, false when it is gone; of dp's
 * process itself for kid, one of its children (see dti_tid_ours()).
 */
static bool
dti_task_comm(const struct dti_proc *dp, pid_t tid, bool kid,
    char comm[UDT_COMMLEN])
{
	/*
	 * Read, then asked whether the process was reaped: its pid may be
	 * another's by then, and that process's name would replace the
	 * one the records carry.
	 */
	return dt_proc_comm(dp->dp_pid, kid ? dp->dp_pid : tid, comm,
	    UDT_COMMLEN) == 0 && !dti_reaped(dp->dp_pidfd);
}

/*
 * dtd's own pid namespace: it never moves, so one stat for its life,
 * not one an attach.  Any thread; two that race both stat the same.
 */
static int
dti_who_ourns(const struct stat *a)
{
	static _Atomic uint64_t ns_ino, ns_dev;	/* [a] ns_ino 0: not yet */
	uint64_t ino = atomic_load_explicit(&ns_ino, memory_order_acquire);
	struct stat b;

	if (ino == 0) {
		if (stat("/proc/self/ns/pid", &b) != 0 || b.st_ino == 0)
			return 0;
		atomic_store_explicit(&ns_dev, (uint64_t)b.st_dev,
		    memory_order_relaxed);
		atomic_store_explicit(&ns_ino, (uint64_t)b.st_ino,
		    memory_order_release);
		ino = (uint64_t)b.st_ino;
	}
	return (uint64_t)a->st_ino == ino && (uint64_t)a->st_dev ==
	    atomic_load_explicit(&ns_dev, memory_order_relaxed);
}

void
dti_who_init(struct dti_proc *dp, const char *comm0)
{
	char path[64];
	struct stat a;
	size_t len;

	memset(dp->dp_tids, 0, sizeof(dp->dp_tids));
	dp->dp_tidnext = 0;
	/*
	 * Its name before any exec: records drained later keep it.  From
	 * the stat text serve read anyway (one open less an attach), cut
	 * where the comm file's line would end, so that it compares with
	 * the names read from there (dti_task_comm()).
	 */
	memset(dp->dp_comm0, 0, sizeof(dp->dp_comm0));
	if (comm0 != NULL) {
		len = strcspn(comm0, "\n");
		if (len > sizeof(dp->dp_comm0) - 1)
			len = sizeof(dp->dp_comm0) - 1;
		memcpy(dp->dp_comm0, comm0, len);
	}
	/* Unknown counts as foreign: its tids are not ours to judge. */
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)dp->dp_pid);
	dp->dp_foreign = !(stat(path, &a) == 0 && dti_who_ourns(&a));
}

/*
 * May tid write into dp's ring?  No if no task can have it (0 or less:
 * gettid() never says so); yes if dp lives in another pid namespace,
 * whose tids dtd cannot judge; yes if it is a thread of dp's process
 * now; yes if it is a child of that process (*kid): a vfork child, or
 * any CLONE_VM child, writes through its parent's mapping of the ring
 * until it execs, and the drain may come after the exec; no if a task
 * tid lives anywhere else, or /proc cannot say; yes if it lives nowhere
 * (the tracee's word, naming nobody).  Reads /proc only: any thread.
 */
bool
dti_tid_ours(const struct dti_proc *dp, pid_t tid, bool *kid)
{
	struct dt_proc_stat ps;
	char path[64];
	int error;

	*kid = false;
	if (tid <= 0)
		return false;
	if (dp->dp_foreign)
		return true;
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

/* Whether kid, a child of dp's process, shares its memory now. */
static bool
dti_tid_vm(const struct dti_proc *dp, pid_t kid)
{
	return syscall(SYS_kcmp, dp->dp_pid, kid, DTI_KCMP_VM, 0, 0) == 0;
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
dti_who(struct dti_proc *dp, struct udt_rec *r, pid_t *pidp)
{
	struct dti_tid *t;
	char comm[UDT_COMMLEN];
	pid_t tid = r->ur_tid;
	bool kid = false;

	*pidp = dp->dp_pid;
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
		t->dt_vmbatch = 0;
		t->dt_known = !dp->dp_foreign &&
		    dti_task_comm(dp, tid, kid, t->dt_comm);
	}
	if (t->dt_kid) {
		if (t->dt_vmbatch != dti_nbatch) {
			t->dt_vmbatch = dti_nbatch;
			t->dt_vm = dti_tid_vm(dp, tid);
		}
		if (t->dt_vm)
			*pidp = tid;
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

/*
 * Whether process pid is ending: gone, a zombie, or in do_exit().  Its
 * stat first, its pidfd after: a process that has not ended by then
 * held the pid at the read, so the flags read were its own; asked the
 * other way round, it could end and be reaped in between, and the
 * flags be those of whoever took its pid (a live process: an exec, its
 * last records discarded).
 */
static bool
dti_exiting(const struct dti_proc *dp)
{
	struct pollfd pfd = { .fd = dp->dp_pidfd, .events = POLLIN };
	struct dt_proc_stat ps;
	bool gone;

	gone = dt_proc_stat(dp->dp_pid, &ps) != 0 ||
	    (ps.ps_flags & DTI_PF_EXITING) != 0;
	return gone || (dp->dp_pidfd >= 0 && poll(&pfd, 1, 0) == 1);
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
 * owner of /proc/PID (dt_ingest_image_ok()).
 *
 * The pid that connected is only the tracee's word until its image shows
 * the ring: a process can connect, fork a helper that keeps the socket,
 * and exec before the helper says hello, so that dtd opens the new
 * image's memory and sees no exec.  The ring the helper then gets is not
 * mapped in that image.  dtd asks the image's own map (/proc/PID/maps,
 * opened with its memory, so of the same image) whether the mapping at
 * rh_self, where the tracee says it mapped the ring, is the ring's
 * memfd, by its inode: only a process holding the ring's descriptor can
 * have mapped it there.  Where the tracee published no address, or
 * something else is mapped there, the records are not that image's.
 * dtd never reads the memory at that address: the tracee chooses it,
 * and a page of a FUSE mount there would hold the reader in the kernel,
 * unkillably, until the mount's server answers.
 *
 * The reads still wait on the tracee, for its mmap lock (killably), so
 * they run on the worker of the tracee's user (dt_worker.h), never on
 * the drain thread, which waits for the answer a bounded time at most
 * and otherwise holds the batch and goes on with the other rings: a
 * stalled look stops only that tracee's ring.
 */
static struct dt_wq	*dti_look_wq;		/* [I] */
static pthread_mutex_t	 dti_look_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 dti_look_cv = PTHREAD_COND_INITIALIZER;

int
dti_look_begin(void)
{
	/* Each proc has one look at most in the queue. */
	if (dti_look_wq == NULL &&
	    (dti_look_wq = dt_wq_new("dtd-look", UINT_MAX)) == NULL)
		return ENOMEM;
	return 0;
}

void
dti_look_end(void)
{
	/* A stuck look ends with dtd; it holds only its dti_chk. */
	if (dti_look_wq != NULL && dt_wq_stop(dti_look_wq, 100) != 0)
		fprintf(stderr, "dtd: ingest: a look at a tracee's memory is "
		    "still waiting on it; leaving it\n");
	dt_wq_free(dti_look_wq);
	dti_look_wq = NULL;
}

struct dti_chk *
dti_chk_new(struct dti_proc *dp, int mapsfd, int ringfd)
{
	struct dti_chk *ck;
	struct stat st;

	if (fstat(ringfd, &st) != 0 || (ck = calloc(1, sizeof(*ck))) == NULL)
		return NULL;
	atomic_init(&ck->ck_refs, 1);
	atomic_init(&ck->ck_state, DTI_CK_IDLE);
	ck->ck_memfd = dp->dp_memfd;
	ck->ck_mapsfd = mapsfd;
	ck->ck_proof = dp->dp_proof;
	ck->ck_ino = (uint64_t)st.st_ino;
	ck->ck_dev = st.st_dev;
	return ck;
}

void
dti_chk_put(struct dti_chk *ck)
{
	if (ck == NULL || atomic_fetch_sub(&ck->ck_refs, 1) != 1)
		return;
	close(ck->ck_memfd);
	if (ck->ck_mapsfd >= 0)
		close(ck->ck_mapsfd);
	free(ck);
}

/*
 * PROCMAP_QUERY (Linux 6.11): one mapping of a maps file's image, by
 * address, without the text.  Older headers do not have it.
 */
struct dti_procmap_query {
	uint64_t	size;
	uint64_t	query_flags;
	uint64_t	query_addr;
	uint64_t	vma_start;
	uint64_t	vma_end;
	uint64_t	vma_flags;
	uint64_t	vma_page_size;
	uint64_t	vma_offset;
	uint64_t	inode;
	uint32_t	dev_major;
	uint32_t	dev_minor;
	uint32_t	vma_name_size;
	uint32_t	build_id_size;
	uint64_t	vma_name_addr;
	uint64_t	build_id_addr;
};
#define DTI_PROCMAP_QUERY	_IOWR('f', 17, struct dti_procmap_query)

/* The maps line of a mapping that starts at start, into line. */
static bool
dti_maps_line(int fd, uint64_t start, char *line, size_t len)
{
	char buf[4096], want[24];
	size_t have = 0, wl;
	ssize_t n;
	char *nl;

	wl = (size_t)snprintf(want, sizeof(want), "%" PRIx64 "-", start);
	if (lseek(fd, 0, SEEK_SET) != 0)
		return false;
	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n')) != NULL) {
			*nl = '\0';
			if (strncmp(buf, want, wl) == 0) {
				wl = strlen(buf) < len ? strlen(buf) : len - 1;
				memcpy(line, buf, wl);
				line[wl] = '\0';
				return true;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		/* A line longer than the buffer is no mapping of ours. */
		if (have == sizeof(buf) - 1)
			have = 0;
	}
}

/* Is the ring's memfd mapped at ck_self in the image of ck_mapsfd? */
static bool
dti_ring_mapped(const struct dti_chk *ck)
{
	struct dti_procmap_query q;
	unsigned int maj, min;
	unsigned long long ino;
	char line[512];

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_addr = ck->ck_self;
	if (ioctl(ck->ck_mapsfd, DTI_PROCMAP_QUERY, &q) == 0)
		return q.vma_start == ck->ck_self && q.vma_offset == 0 &&
		    q.inode == ck->ck_ino && q.dev_major == major(ck->ck_dev) &&
		    q.dev_minor == minor(ck->ck_dev);
	if (errno != ENOTTY && errno != EINVAL)
		return false;
	/* An older kernel: the text, "start-end perms off maj:min ino". */
	if (!dti_maps_line(ck->ck_mapsfd, ck->ck_self, line, sizeof(line)) ||
	    sscanf(line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &min, &ino) != 3)
		return false;
	return ino == ck->ck_ino && maj == major(ck->ck_dev) &&
	    min == minor(ck->ck_dev);
}

/* The look itself: the worker of the tracee's user. */
static void
dti_look_run(struct dt_work *wk, bool cancel)
{
	struct dti_chk *ck = (struct dti_chk *)(void *)((char *)wk -
	    offsetof(struct dti_chk, ck_work));
	char c;

	ck->ck_cancel = cancel;
	if (!cancel) {
		/* Page 0, which nobody maps: no page is ever read. */
		ck->ck_ended = pread(ck->ck_memfd, &c, 1, 0) == 0;
		ck->ck_holds = ck->ck_self == 0 || (ck->ck_selfok &&
		    ck->ck_mapsfd >= 0 && dti_ring_mapped(ck));
	}
	pthread_mutex_lock(&dti_look_mtx);
	atomic_store_explicit(&ck->ck_state, DTI_CK_DONE,
	    memory_order_release);
	pthread_cond_broadcast(&dti_look_cv);
	pthread_mutex_unlock(&dti_look_mtx);
	dti_kick();
	dti_chk_put(ck);
}

bool
dti_look_stuck(const struct dti_proc *dp)
{
	return dti_look_wq != NULL && dt_wq_stalled(dti_look_wq,
	    (uint32_t)dp->dp_uid, DTI_LOOK_WAIT_NS);
}

enum dti_verdict
dti_image_look(struct dti_proc *dp, bool wait)
{
	struct dti_chk *ck = dp->dp_chk;
	struct timespec ts;
	uint64_t self;
	int state;

	if (ck == NULL)
		return DTI_V_SAME;
	state = atomic_load_explicit(&ck->ck_state, memory_order_acquire);
	if (state == DTI_CK_IDLE) {
		self = dp->dp_proven ? 0 : __atomic_load_n(&dp->dp_ring->rh_self,
		    __ATOMIC_ACQUIRE);
		ck->ck_self = self;
		/* User addresses stay below 2^47 (2^56 with 5-level paging). */
		ck->ck_selfok = !dp->dp_proven && self != 0 &&
		    self % 4096 == 0 && self < (1ULL << 56);
		if (!dp->dp_proven && !ck->ck_selfok)
			ck->ck_self = 1;	/* no proof can be found */
		atomic_store(&ck->ck_state, DTI_CK_BUSY);
		atomic_fetch_add(&ck->ck_refs, 1);
		ck->ck_work.wk_fn = dti_look_run;
		if (dti_look_wq == NULL || dt_wq_submit(dti_look_wq,
		    (uint32_t)dp->dp_uid, &ck->ck_work) != 0) {
			atomic_fetch_sub(&ck->ck_refs, 1);
			atomic_store(&ck->ck_state, DTI_CK_IDLE);
			return DTI_V_LATER;
		}
		state = DTI_CK_BUSY;
	}
	if (state == DTI_CK_BUSY && wait && !dp->dp_lookslow &&
	    !dt_wq_stalled(dti_look_wq, (uint32_t)dp->dp_uid,
	    DTI_LOOK_WAIT_NS)) {
		ts = dt_clock_ts(dt_clock_ns(CLOCK_MONOTONIC) +
		    DTI_LOOK_WAIT_NS);
		pthread_mutex_lock(&dti_look_mtx);
		while (atomic_load(&ck->ck_state) != DTI_CK_DONE &&
		    pthread_cond_clockwait(&dti_look_cv, &dti_look_mtx,
		    CLOCK_MONOTONIC, &ts) == 0)
			continue;
		pthread_mutex_unlock(&dti_look_mtx);
		/* Slow once: its next batches are held, not waited for. */
		if (atomic_load(&ck->ck_state) != DTI_CK_DONE)
			dp->dp_lookslow = true;
	}
	if (atomic_load_explicit(&ck->ck_state, memory_order_acquire) !=
	    DTI_CK_DONE)
		return DTI_V_LATER;
	atomic_store(&ck->ck_state, DTI_CK_IDLE);
	if (ck->ck_cancel)
		return DTI_V_LATER;
	if (ck->ck_ended && !dti_exiting(dp))
		return DTI_V_EXEC;
	if (!dp->dp_proven) {
		if (!ck->ck_holds)
			return DTI_V_UNHELD;
		dp->dp_proven = true;
		/* Asked once per ring: a descriptor less to keep. */
		if (ck->ck_mapsfd >= 0)
			close(ck->ck_mapsfd);
		ck->ck_mapsfd = -1;
	}
	return DTI_V_SAME;
}
