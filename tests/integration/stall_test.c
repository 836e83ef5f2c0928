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
 * No thread of dtd that serves everyone waits on what one user controls
 * (doc/threat-model.md, "Which thread waits on what").  An ordinary
 * user (a throwaway one) runs a tiny FUSE filesystem of their own whose
 * reads and flushes never answer until the test lets them go, and
 * points dtd at it:
 *
 *	drain	a tracee says its ring is at a page of that mount: dtd's
 *		look at its memory waits there, root's tracee's events
 *		still arrive, and SIGTERM still stops dtd at once
 *	ioctl	a --group member's DTIOCGSTATS with its argument in such a
 *		page: root's DTIOCGPLIST is still answered at once
 *	exec	a process held inside exec (a close-on-exec file of that
 *		mount whose flush never answers) says hello: root's tracee
 *		is still welcomed at once
 *
 * Each mode starts its own dtd on a temporary path and stops it by pid.
 * Every wait is on a condition with a deadline; the filesystem's gate is
 * opened (and the mount goes with its server) whatever happened.
 */
#define FUSE_USE_VERSION	35

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "dtt.h"
#include "syscall_util.h"

#define STALL_FILESIZE	(1 << 20)
/*
 * How long what must happen is waited for.  A stalled thread of dtd
 * stays stalled until the test opens the gate, so a long bound tells a
 * stall as surely as a short one, and a machine loaded by the rest of
 * the suite (seen: 5 s passed once) does not fail it; each wait ends
 * as soon as what it waits for is there.  The hello's latency is
 * checked apart ("within a second").
 */
#define STALL_WAIT_MS	30000

static struct dtt_user	 st_user;
static const char	*st_dtd;
static uint32_t		 st_nsys, st_getpid;	/* as a tracee says them */

/* --- the user's filesystem ------------------------------------------ */

/*
 * One file, "f", of STALL_FILESIZE zeroes.  Its reads and flushes wait
 * on fs_gate (the test holds the write end) and say so on fs_got first:
 * until the test closes the gate, every request behind them waits too
 * (one loop thread).
 */
static int	fs_gate = -1, fs_got = -1;	/* the server's ends */
static bool	fs_open;			/* the gate is open */

static void
fs_wait(void)
{
	char c;

	if (fs_open)
		return;
	(void)write(fs_got, "r", 1);
	while (read(fs_gate, &c, 1) > 0)
		continue;
	fs_open = true;
}

static void
fs_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = STALL_FILESIZE;
	}
}

static void
fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, "f") != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = 2;
	fs_stat(2, &e.attr);
	e.attr_timeout = e.entry_timeout = 3600;
	fuse_reply_entry(req, &e);
}

static void
fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	fs_stat(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void
fs_open_(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	/* The page cache would answer a second fault without us. */
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void
fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	static char zero[128 * 1024];

	(void)ino;
	(void)fi;
	fs_wait();
	if (off >= STALL_FILESIZE)
		size = 0;
	else if (size > (size_t)(STALL_FILESIZE - off))
		size = (size_t)(STALL_FILESIZE - off);
	if (size > sizeof(zero))
		size = sizeof(zero);
	fuse_reply_buf(req, zero, size);
}

static void
fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fs_wait();
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.lookup		= fs_lookup,
	.getattr	= fs_getattr,
	.open		= fs_open_,
	.read		= fs_read,
	.flush		= fs_flush,
};

/*
 * As the user: serve the filesystem on mnt until SIGTERM (or the
 * kernel ends it); "m" on readyfd once mounted.  auto_unmount: the
 * mount goes with this process however it ends.
 */
static int
fs_serve(const char *mnt, int readyfd)
{
	char *argv[] = { "stall_fs", "-o", "auto_unmount", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_session *se;
	int rv;

	if ((se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), NULL)) ==
	    NULL)
		return 10;
	if (fuse_set_signal_handlers(se) != 0 ||
	    fuse_session_mount(se, mnt) != 0)
		return 11;
	if (write(readyfd, "m", 1) != 1)
		return 12;
	close(readyfd);
	rv = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return rv < 0 ? 13 : 0;
}

struct stall_fs {
	char	 sf_dir[64];	/* the user's: holds mnt */
	char	 sf_mnt[96];	/* the mount */
	char	 sf_file[112];	/* mnt/f */
	pid_t	 sf_pid;	/* its server */
	int	 sf_gate;	/* write end: close to let requests go */
	int	 sf_got;	/* read end: a request began waiting */
};

/* Wait up to ms for fd to be readable; true if it is. */
static bool
readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms) == 1;
}

static bool
stall_fs_start(struct stall_fs *sf)
{
	int gate[2], got[2], ready[2];
	char c;

	memset(sf, 0, sizeof(*sf));
	sf->sf_gate = sf->sf_got = -1;
	snprintf(sf->sf_dir, sizeof(sf->sf_dir), "/tmp/udt-stall.XXXXXX");
	if (!dtt_check(mkdtemp(sf->sf_dir) != NULL &&
	    chown(sf->sf_dir, st_user.du_uid, st_user.du_gid) == 0,
	    "a directory of the user's"))
		return false;
	snprintf(sf->sf_mnt, sizeof(sf->sf_mnt), "%s/mnt", sf->sf_dir);
	snprintf(sf->sf_file, sizeof(sf->sf_file), "%s/f", sf->sf_mnt);
	if (mkdir(sf->sf_mnt, 0755) != 0 ||
	    chown(sf->sf_mnt, st_user.du_uid, st_user.du_gid) != 0 ||
	    pipe2(gate, O_CLOEXEC) != 0 || pipe2(got, O_CLOEXEC) != 0 ||
	    pipe2(ready, O_CLOEXEC) != 0)
		return dtt_check(false, "the filesystem's pipes");
	fflush(stdout);
	if ((sf->sf_pid = fork()) == 0) {
		close(gate[1]);
		close(got[0]);
		close(ready[0]);
		fs_gate = gate[0];
		fs_got = got[1];
		if (dtt_user_become(&st_user) == -1)
			_exit(255);
		_exit(fs_serve(sf->sf_mnt, ready[1]));
	}
	close(gate[0]);
	close(got[1]);
	close(ready[1]);
	sf->sf_gate = gate[1];
	sf->sf_got = got[0];
	c = 0;
	if (readable(ready[0], STALL_WAIT_MS))
		(void)read(ready[0], &c, 1);
	close(ready[0]);
	return dtt_check(c == 'm', "the user mounts a FUSE filesystem of "
	    "theirs on %s", sf->sf_mnt);
}

/* A request of the filesystem waits at the gate (within ms). */
static bool
stall_fs_waiting(struct stall_fs *sf, int ms)
{
	char c;

	return readable(sf->sf_got, ms) && read(sf->sf_got, &c, 1) == 1;
}

/* Let every request go, stop the server (the mount goes with it). */
static void
stall_fs_end(struct stall_fs *sf)
{
	if (sf->sf_gate != -1)
		close(sf->sf_gate);
	sf->sf_gate = -1;
	if (sf->sf_pid > 0)
		dtt_check(dtt_stop(sf->sf_pid, SIGTERM, DTT_EXIT_MS) != -1,
		    "the filesystem's server stopped");
	sf->sf_pid = 0;
	if (sf->sf_got != -1)
		close(sf->sf_got);
	sf->sf_got = -1;
	if (sf->sf_dir[0] != '\0') {
		(void)rmdir(sf->sf_mnt);
		dtt_check(rmdir(sf->sf_dir) == 0, "the mount and its "
		    "directory are gone");
	}
}

static void
close_pair(int p[2])
{
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	p[0] = p[1] = -1;
}

/* --- dtd and tracees ------------------------------------------------- */

/*
 * A private dtd (extra options, or NULL) whose device fd records
 * getpid's entry with comm: fd, or -1.
 */
static int
st_dtd_start(struct dtt_dtd *dd, char *const extra[])
{
	struct dtioc_probe_info *pi = NULL;
	uint32_t pbn, first;
	size_t npi;
	int fd = -1;

	if (st_setup(dd, "udt-stall", st_dtd, extra, &fd, &pi, &npi) != 0)
		return fd == -1 ? -1 : (close(fd), -1);
	st_nsys = dtt_nsys(pi, npi, &first);
	pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	free(pi);
	st_getpid = pbn - first;
	if (pbn == 0 || dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) != 0 ||
	    dtt_record(fd, 1) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Commit a valid getpid entry record of tid at ticket t. */
static void
st_commit(struct udt_ring_hdr *rh, uint32_t nslots, uint64_t t, pid_t tid)
{
	struct udt_rec *s = (struct udt_rec *)(void *)((char *)rh +
	    UDT_RING_HDRSIZE + (t % nslots) * UDT_SLOT_SIZE);
	struct udt_rec r;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(&r, 0, sizeof(r));
	r.ur_probe = (uint16_t)st_getpid;
	r.ur_tid = tid;
	r.ur_sec = ts.tv_sec;
	r.ur_nsec = ts.tv_nsec;
	/* All but the sequence word, which commits the slot last. */
	memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
	if (__atomic_load_n(&rh->rh_head, __ATOMIC_RELAXED) < t + 1)
		__atomic_store_n(&rh->rh_head, t + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ur_seq, t + 1, __ATOMIC_RELEASE);
}

/*
 * Root's tracee (this process): n records through a fresh ring must
 * reach fd within STALL_WAIT_MS.  The hello itself must be answered
 * within that too.
 */
static void
root_flows(const struct dtt_dtd *dd, int fd, int n, const char *while_)
{
	struct udt_ring_hdr *rh = NULL;
	struct udt_welcome w;
	struct dt_evt evs[64];
	uint64_t t0, deadline;
	int fds[2], sfd, seen = 0, k;
	long got;

	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	sfd = dtt_tracee_hello(dd->dd_sock, st_nsys, &w, fds);
	if (!dtt_check(sfd != -1 && (rh = dtt_ring_map(fds[0], &w)) != NULL,
	    "root's tracee is welcomed while %s (%llu ms)", while_,
	    (unsigned long long)((dtt_clock_ns(CLOCK_MONOTONIC) - t0) /
	    1000000)))
		goto out;
	dtt_check(dtt_clock_ns(CLOCK_MONOTONIC) - t0 < 1000000000ULL,
	    "within a second");
	for (k = 0; k < n; k++)
		st_commit(rh, w.uw_nslots, (uint64_t)k, getpid());
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + STALL_WAIT_MS * 1000000ULL;
	while (seen < n && dtt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	    (got = dtt_read(fd, evs, 64, 500)) >= 0)
		for (k = 0; k < got; k++)
			seen += evs[k].dtev_pid == getpid();
	dtt_check(seen == n, "root's %d events arrive while %s (%d did, in "
	    "%llu ms)", n, while_, seen, (unsigned long long)
	    ((dtt_clock_ns(CLOCK_MONOTONIC) - t0) / 1000000));
out:
	if (rh != NULL)
		munmap(rh, w.uw_ringsize);
	if (sfd != -1) {
		close(fds[0]);
		close(fds[1]);
		close(sfd);
	}
}

/* Stop dtd by pid with SIGTERM; it must be gone within ms. */
static void
dtd_stops(struct dtt_dtd *dd, int fd, int ms, const char *while_)
{
	uint64_t t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	int status;

	if (fd != -1)
		close(fd);
	status = dtt_stop(dd->dd_pid, SIGTERM, ms);
	dtt_check(status != -1, "SIGTERM stops dtd while %s (%llu ms)",
	    while_, (unsigned long long)((dtt_clock_ns(CLOCK_MONOTONIC) -
	    t0) / 1000000));
	if (status == -1)
		(void)dtt_stop(dd->dd_pid, SIGKILL, DTT_EXIT_MS);
	dd->dd_pid = 0;
}

/* --- drain: a ring "at" a page of the user's mount ------------------- */

struct drain_arg {
	const char	*da_sock;
	const char	*da_file;
	int		 da_go;		/* read end: exit when closed */
};

/*
 * As the user: a tracee that says its ring is at a page of the mount
 * (where dtd's look for the ring's proof waits), then commits a record
 * so that dtd looks.
 */
static int
drain_tracee(void *arg)
{
	struct drain_arg *da = arg;
	struct udt_ring_hdr *rh;
	struct udt_welcome w;
	void *page;
	int fds[2], fd, ffd;
	char c;

	if ((ffd = open(da->da_file, O_RDONLY | O_CLOEXEC)) == -1)
		return 1;
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ffd, 0);
	if (page == MAP_FAILED)
		return 2;
	if ((fd = dtt_tracee_hello(da->da_sock, st_nsys, &w, fds)) == -1)
		return 3;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 4;
	__atomic_store_n(&rh->rh_self, (uint64_t)(uintptr_t)page,
	    __ATOMIC_RELEASE);
	st_commit(rh, w.uw_nslots, 0, getpid());
	(void)read(da->da_go, &c, 1);
	return 0;
}

/*
 * dtd has judged the ring whose address is a page of the mount: by its
 * map (the record is discarded, counted as garbage, and nothing asked
 * the filesystem), or, were it to read that page, by a request waiting
 * at the gate.  Either within STALL_WAIT_MS; says which.
 */
static bool
ring_judged(const struct dtt_dtd *dd, struct stall_fs *sf)
{
	struct udt_stats us;
	uint64_t deadline;

	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + STALL_WAIT_MS * 1000000ULL;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
		if (stall_fs_waiting(sf, 0)) {
			printf("# dtd's look waits on the user's filesystem\n");
			return true;
		}
		if (st_ingest_stats(dd->dd_sock, &us) == 0 &&
		    us.us_garbage >= 1) {
			dtt_check(!stall_fs_waiting(sf, 0), "the ring is "
			    "refused by its map: dtd never read the page");
			return true;
		}
		(void)readable(sf->sf_got, 10);
	}
	return false;
}

static void
run_drain(void)
{
	struct dtt_dtd dd;
	struct stall_fs sf;
	struct drain_arg da;
	int fd = -1, go[2] = { -1, -1 };
	pid_t tracee = -1;

	memset(&dd, 0, sizeof(dd));
	if (!stall_fs_start(&sf) ||
	    !dtt_check((fd = st_dtd_start(&dd, NULL)) != -1, "a private dtd; "
	    "root records getpid") || pipe2(go, O_CLOEXEC) != 0)
		goto out;
	da.da_sock = dd.dd_sock;
	da.da_file = sf.sf_file;
	da.da_go = go[0];
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(go[1]);
		if (dtt_user_become(&st_user) == -1)
			_exit(255);
		_exit(drain_tracee(&da));
	}
	close(go[0]);
	go[0] = -1;
	if (!dtt_check(ring_judged(&dd, &sf), "dtd judged the user's ring"))
		goto out;
	root_flows(&dd, fd, 1000, "the user's tracee points at its mount");
	dtd_stops(&dd, fd, 3000, "the user's tracee points at its mount");
	fd = -1;
out:
	if (go[1] != -1)
		close(go[1]);
	stall_fs_end(&sf);
	if (tracee > 0)
		dtt_stop(tracee, SIGKILL, DTT_EXIT_MS);
	st_teardown(&dd, fd);
}

/* --- ioctl: a group member's argument in a page of the mount --------- */

struct ioctl_arg {
	const char	*ia_dev;
	const char	*ia_file;
};

/* As the user: DTIOCGSTATS into a private, not yet read, page of it. */
static int
ioctl_member(void *arg)
{
	struct ioctl_arg *ia = arg;
	void *page;
	int dfd, ffd;

	if ((dfd = open(ia->ia_dev, O_RDONLY | O_CLOEXEC)) == -1)
		return 1;
	if ((ffd = open(ia->ia_file, O_RDONLY | O_CLOEXEC)) == -1)
		return 2;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ffd, 0);
	if (page == MAP_FAILED)
		return 3;
	/* Answered once the gate opens; the answer does not matter. */
	(void)ioctl(dfd, DTIOCGSTATS, page);
	return 0;
}

struct plist_arg {
	const char	*pa_dev;
	int		 pa_done;	/* write end: the answer came */
};

static void *
plist_thread(void *arg)
{
	struct plist_arg *pa = arg;
	struct dtioc_probe_info *pi;
	size_t n = 0;
	int fd;

	if ((fd = dtt_open(pa->pa_dev)) != -1) {
		pi = dtt_plist(fd, &n);
		free(pi);
		close(fd);
	}
	(void)write(pa->pa_done, n > 0 ? "y" : "n", 1);
	return NULL;
}

static void
run_ioctl(void)
{
	char gid[16];
	char *extra[] = { "--group", gid, NULL };
	struct dtt_dtd dd;
	struct stall_fs sf;
	struct ioctl_arg ia;
	struct plist_arg pa;
	pthread_t thr;
	uint64_t t0;
	int fd = -1, done[2] = { -1, -1 }, joined = 0;
	pid_t member = -1;
	char c = 0;

	memset(&dd, 0, sizeof(dd));
	snprintf(gid, sizeof(gid), "%u", (unsigned)st_user.du_gid);
	if (!stall_fs_start(&sf) ||
	    !dtt_check((fd = st_dtd_start(&dd, extra)) != -1, "a private dtd "
	    "open to the user's group") || pipe2(done, O_CLOEXEC) != 0)
		goto out;
	/* The user must reach the device through its directory. */
	(void)chmod(dd.dd_dir, 0755);
	ia.ia_dev = dd.dd_dev;
	ia.ia_file = sf.sf_file;
	fflush(stdout);
	if ((member = fork()) == 0) {
		if (dtt_user_become(&st_user) == -1)
			_exit(255);
		_exit(ioctl_member(&ia));
	}
	if (!dtt_check(stall_fs_waiting(&sf, STALL_WAIT_MS), "the group "
	    "member's DTIOCGSTATS waits on the user's filesystem"))
		goto out;
	pa.pa_dev = dd.dd_dev;
	pa.pa_done = done[1];
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	if (pthread_create(&thr, NULL, plist_thread, &pa) != 0)
		goto out;
	joined = 1;
	if (readable(done[0], STALL_WAIT_MS))
		(void)read(done[0], &c, 1);
	dtt_check(c == 'y', "root's DTIOCGPLIST is answered while a group "
	    "member's ioctl waits (%llu ms)", (unsigned long long)
	    ((dtt_clock_ns(CLOCK_MONOTONIC) - t0) / 1000000));
	root_flows(&dd, fd, 100, "a group member's ioctl waits");
out:
	/* Let everything go before anyone waits for it. */
	stall_fs_end(&sf);
	if (joined)
		pthread_join(thr, NULL);
	if (member > 0)
		dtt_check(dtt_wait(member, DTT_EXIT_MS) != -1,
		    "the member's ioctl ended once its page was read");
	close_pair(done);
	st_teardown(&dd, fd);
}

/* --- exec: a process held inside exec says hello ---------------------- */

struct exec_arg {
	const char	*ea_sock;
	const char	*ea_file;
	int		 ea_go;		/* read end: the helper may say hello */
	int		 ea_said;	/* write end: it did */
};

/*
 * As the user: connect, leave the connection to a forked helper, and
 * exec with a close-on-exec file of the mount open, whose flush holds
 * the exec (and the process's exec lock) until the gate opens.  The
 * helper says the hello once told: dtd then serves a process inside
 * exec.
 */
static int
exec_tracee(struct exec_arg *ea)
{
	struct udt_welcome w;
	int fds[2], sfd;
	pid_t helper;
	char c;

	if (open(ea->ea_file, O_RDONLY | O_CLOEXEC) == -1)
		return 1;
	if ((sfd = dtt_connect(ea->ea_sock)) == -1)
		return 2;
	if ((helper = fork()) == -1)
		return 3;
	if (helper == 0) {
		/* Never outlives the test by much. */
		alarm(30);
		if (read(ea->ea_go, &c, 1) != 1)
			_exit(4);
		(void)write(ea->ea_said, "s", 1);
		(void)dtt_tracee_greet(sfd, st_nsys, &w, fds);
		_exit(0);
	}
	close(ea->ea_said);
	close(sfd);
	execl("/bin/true", "true", (char *)NULL);
	return 5;
}

static void
run_exec(void)
{
	struct dtt_dtd dd;
	struct stall_fs sf;
	struct exec_arg ea;
	int fd = -1, go[2] = { -1, -1 }, said[2] = { -1, -1 };
	pid_t tracee = -1;
	char c = 0;

	memset(&dd, 0, sizeof(dd));
	if (!stall_fs_start(&sf) ||
	    !dtt_check((fd = st_dtd_start(&dd, NULL)) != -1, "a private dtd; "
	    "root records getpid") || pipe(go) != 0 || pipe(said) != 0)
		goto out;
	ea.ea_sock = dd.dd_sock;
	ea.ea_file = sf.sf_file;
	ea.ea_go = go[0];
	ea.ea_said = said[1];
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(go[1]);
		close(said[0]);
		if (dtt_user_become(&st_user) == -1)
			_exit(255);
		_exit(exec_tracee(&ea));
	}
	close(go[0]);
	go[0] = -1;
	close(said[1]);
	said[1] = -1;
	if (!dtt_check(stall_fs_waiting(&sf, STALL_WAIT_MS), "the user's "
	    "exec waits on the flush of a close-on-exec file of theirs"))
		goto out;
	if (write(go[1], "g", 1) == 1 && readable(said[0], STALL_WAIT_MS))
		(void)read(said[0], &c, 1);
	if (!dtt_check(c == 's', "its helper says hello for it"))
		goto out;
	root_flows(&dd, fd, 100, "a process held inside exec said hello");
	/* Another tracee of root's, after the first was served. */
	root_flows(&dd, fd, 100, "it still waits");
#ifndef __SANITIZE_ADDRESS__
	/*
	 * Not under LeakSanitizer: its check at exit stops every thread
	 * with ptrace, which waits for the worker's (killable) wait on the
	 * exec lock to end.
	 */
	dtd_stops(&dd, fd, 3000, "a process held inside exec said hello");
	fd = -1;
#endif
out:
	stall_fs_end(&sf);
	if (tracee > 0)
		dtt_check(dtt_wait(tracee, DTT_EXIT_MS) != -1,
		    "the user's exec ended once the gate opened");
	close_pair(go);
	close_pair(said);
	st_teardown(&dd, fd);
}

int
main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: stall_test drain|ioctl|exec DTD\n");
		return 2;
	}
	st_dtd = argv[2];
	/* A server or tracee that dies must not take us with it. */
	signal(SIGPIPE, SIG_IGN);
	if (!dtt_check(dtt_user_add(&st_user) == 0, "a throwaway user %s",
	    st_user.du_name))
		return dtt_done();
	if (strcmp(argv[1], "drain") == 0)
		run_drain();
	else if (strcmp(argv[1], "ioctl") == 0)
		run_ioctl();
	else if (strcmp(argv[1], "exec") == 0)
		run_exec();
	else
		dtt_check(false, "a mode: %s", argv[1]);
	dtt_user_del(&st_user);
	return dtt_done();
}
