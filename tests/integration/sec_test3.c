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
 * sec_test's modes on who a record says wrote it: its thread and name,
 * and whether its pid still runs the image that attached (see
 * sec_test.c).
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "sec_test.h"

static int	names_park[2] = { -1, -1 };	/* the thread waits on it */

static void *
names_thread(void *arg)
{
	char c;

	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return read(names_park[0], &c, 1) < 0 ? NULL : arg;
}

/*
 * As the user: a tracee that gets a ring and commits, each claiming
 * comm "systemd", a record as tid 1 (init's), one as itself, one as its
 * second thread; its tids and its comm go to outfd, then it waits for
 * root on gofd.
 */
static int
names_tracee(const char *sock, int outfd, int gofd)
{
	struct udt_welcome w;
	struct udt_ring_hdr *rh;
	volatile pid_t tid = 0;
	pthread_t thr;
	pid_t ids[2];
	int fds[2], fd;
	char c;

	if (pipe2(names_park, O_CLOEXEC) != 0 ||
	    pthread_create(&thr, NULL, names_thread, (void *)&tid) != 0)
		return 1;
	if ((fd = dtt_tracee_hello(sock, sec_nsys, &w, fds)) == -1)
		return 2;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 3;
	while (__atomic_load_n(&tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	ids[0] = getpid();
	ids[1] = tid;
	commit_rec(rh, w.uw_nslots, 0, 1, "systemd");
	commit_rec(rh, w.uw_nslots, 1, ids[0], "systemd");
	commit_rec(rh, w.uw_nslots, 2, ids[1], "systemd");
	if (write(outfd, ids, sizeof(ids)) != (ssize_t)sizeof(ids))
		return 4;
	if (read(gofd, &c, 1) < 0)
		return 5;
	close(names_park[1]);
	pthread_join(thr, NULL);
	return 0;
}

void
run_names(void)
{
	struct dtt_dtd dd;
	struct dt_evt evs[64];
	struct udt_stats us;
	char comm[32];
	uint64_t deadline;
	int fd, out[2] = { -1, -1 }, go[2] = { -1, -1 }, k;
	int self = 0, thread = 0, init = 0, lied = 0, other = 0;
	pid_t tracee = -1, ids[2];
	long n;

	if (!dtt_check((fd = getpid_dtd(&dd)) != -1, "a private dtd recording "
	    "getpid with comm") || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(go, O_CLOEXEC) != 0)
		goto out;
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(fd);
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(names_tracee(dd.dd_sock, out[1], go[0]));
	}
	close(out[1]);
	out[1] = -1;
	if (!dtt_check(read(out[0], ids, sizeof(ids)) == (ssize_t)sizeof(ids),
	    "%s's tracee committed its three records", sec_user.du_name))
		goto out;
	comm_of(ids[0], comm, sizeof(comm));
	/* Two of them must arrive; then the third has been judged too. */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while ((self == 0 || thread == 0) &&
	    dtt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	    (n = dtt_read(fd, evs, 64, 5000)) > 0)
		for (k = 0; k < n; k++) {
			if (evs[k].dtev_pid != ids[0]) {
				other++;
				continue;
			}
			self += evs[k].dtev_tid == ids[0];
			thread += evs[k].dtev_tid == ids[1];
			init += evs[k].dtev_tid == 1;
			lied += strcmp(evs[k].dtev_comm, "systemd") == 0 ||
			    strcmp(evs[k].dtev_comm, comm) != 0;
		}
	while ((n = dtt_read(fd, evs, 64, 200)) > 0)
		for (k = 0; k < n; k++)
			init += evs[k].dtev_pid == ids[0] &&
			    evs[k].dtev_tid == 1;
	dtt_check(self == 1 && thread == 1, "its records as itself (tid %d) "
	    "and as its other thread (tid %d) arrive (%d, %d)", (int)ids[0],
	    (int)ids[1], self, thread);
	dtt_check(init == 0, "its record as tid 1 does not (%d did)", init);
	dtt_check(lied == 0 && comm[0] != '\0', "every one it emitted bears "
	    "its real comm \"%s\", not \"systemd\" (%d did not)", comm, lied);
	dtt_check(other == 0, "no event of another pid (%d)", other);
	if (st_ingest_stats(dd.dd_sock, &us) != 0)
		us.us_misnamed = UINT64_MAX;
	dtt_check(us.us_misnamed == 1, "dtd counted one record naming another "
	    "process's thread (%llu)", (unsigned long long)us.us_misnamed);
	if (write(go[1], "g", 1) == 1)
		dtt_check(dtt_exited0(dtt_wait(tracee, DTT_EXIT_MS)),
		    "the tracee exited 0");
	tracee = -1;
out:
	getpid_dtd_end(&dd, fd, tracee);
	close_fds(out, 2);
	close_fds(go, 2);
}

#define SETUID_RECS	100
#define SETGID		2	/* setuid: set-gid root, not set-uid */

/* What the tracee's helper needs; the helper may share its memory. */
struct setuid_help {
	struct udt_ring_hdr	*sh_rh;
	uint32_t		 sh_nslots;
	pid_t			 sh_pid;	/* the tracee */
	int			 sh_setuid;	/* the program is set-uid */
	int			 sh_gofd;
	int			 sh_donefd;
	bool			 sh_counts;	/* in the header, not records */
};

/*
 * Whether pid's exec of the copy of sleep shows in /proc, as dtd sees
 * it, within 5 s: the program's comm, and for a set-uid one /proc/PID
 * root's (a set-gid one: its group root's).  Polled: neither change is
 * an event anything can wait on.
 */
static bool
exec_shown(pid_t pid, int setuid)
{
	struct stat st;
	char comm[32], path[32];
	int i;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	for (i = 0; i < 5000; i++) {
		comm_of(pid, comm, sizeof(comm));
		if (strcmp(comm, "sleep") == 0 && (!setuid ||
		    (stat(path, &st) == 0 && (setuid == SETGID ?
		    st.st_gid == 0 : st.st_uid == 0))))
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * A helper's SETUID_RECS records as pid's new image ("sleep"), at tickets
 * t0 on, the first last: dtd drains in ticket order and stops at a slot
 * not committed, so it sees all of them in one look or none.  Seen in
 * part, the ring would be retired after the first batch and the rest
 * never read, nor counted with what dtd discarded (none_arrive()).
 */
static void
exec_recs(struct udt_ring_hdr *rh, uint32_t nslots, uint64_t t0, pid_t pid)
{
	int i;

	for (i = SETUID_RECS - 1; i >= 0; i--)
		commit_rec(rh, nslots, t0 + (uint64_t)i, pid, "sleep");
}

/*
 * The helper: once the exec shows, commits SETUID_RECS records as the
 * program and says so on sh_donefd; then it lives on (and so does the
 * memory it may share) until root closes sh_gofd.
 */
static int
setuid_helper(void *arg)
{
	struct setuid_help *sh = arg;
	char c;

	if (!exec_shown(sh->sh_pid, sh->sh_setuid))
		return 4;
	if (sh->sh_counts)
		__atomic_fetch_add(&sh->sh_rh->rh_count[sec_getpid],
		    SETUID_RECS, __ATOMIC_RELEASE);
	else
		exec_recs(sh->sh_rh, sh->sh_nslots, 1, sh->sh_pid);
	if (write(sh->sh_donefd, "d", 1) != 1)
		return 5;
	return read(sh->sh_gofd, &c, 1) == 0 ? 0 : 6;
}

/*
 * As the user: the tracee.  Gets a ring, commits one record (counts one
 * call in its header, with counts), waits for root's go on gofd, starts
 * a helper that keeps the ring, and execs the program (set-uid root, or
 * the user's own).  The helper is forked, or with vm a CLONE_VM child,
 * which keeps the tracee's old memory alive past the exec: then only the
 * owner of /proc/PID tells dtd of it.
 */
static int
setuid_tracee(const char *sock, const char *prog, int setuid, int vm,
    bool counts, int gofd, int donefd)
{
	static char stack[65536] __attribute__((aligned(16)));
	struct setuid_help sh;
	struct udt_welcome w;
	int fds[2], fd;
	pid_t helper;
	char c;

	if ((fd = dtt_tracee_hello(sock, sec_nsys, &w, fds)) == -1)
		return 1;
	/* dtd binds the ring to this image: it asks for a drain at exec. */
	if (!counts && !(w.uw_flags & UDT_W_XDRAIN))
		return 8;
	if ((sh.sh_rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 2;
	sh.sh_nslots = w.uw_nslots;
	sh.sh_pid = getpid();
	sh.sh_setuid = setuid;
	sh.sh_gofd = gofd;
	sh.sh_donefd = donefd;
	sh.sh_counts = counts;
	if (counts)
		__atomic_fetch_add(&sh.sh_rh->rh_count[sec_getpid], 1,
		    __ATOMIC_RELEASE);
	else
		commit_rec(sh.sh_rh, sh.sh_nslots, 0, sh.sh_pid, "sec_test");
	if (read(gofd, &c, 1) != 1)
		return 3;
	if (vm)
		helper = clone(setuid_helper, stack + sizeof(stack),
		    CLONE_VM | SIGCHLD, &sh);
	else if ((helper = fork()) == 0)
		_exit(setuid_helper(&sh));
	if (helper == -1)
		return 7;
	close(donefd);
	execl(prog, "sleep", "30", (char *)NULL);
	return 6;
}

/*
 * A copy of sleep in dd's directory, set-uid root or not, at prog: false
 * (said) if it could not be made.
 */
static bool
sleep_copy(const struct dtt_dtd *dd, char *prog, size_t len, int setuid)
{
	char buf[4096];
	int src, dst;
	ssize_t n;

	snprintf(prog, len, "%s/sleep", dd->dd_dir);
	src = open("/bin/sleep", O_RDONLY | O_CLOEXEC);
	dst = open(prog, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	while (src != -1 && dst != -1 && (n = read(src, buf, sizeof(buf))) > 0)
		if (write(dst, buf, (size_t)n) != n)
			break;
	if (src != -1)
		close(src);
	if (dst != -1)
		close(dst);
	return dtt_check(chmod(prog, setuid == SETGID ? 02755 : setuid ?
	    04755 : 0755) == 0, "a %scopy of sleep", setuid == SETGID ?
	    "set-gid root " : setuid ? "set-uid root " : "");
}

/*
 * A helper has written SETUID_RECS records as tracee's: once dtd has
 * looked (its garbage count moved past us0's by as many), none may have
 * reached root's reader fd.
 */
static void
none_arrive(const struct dtt_dtd *dd, int fd, const struct udt_stats *us0,
    pid_t tracee)
{
	struct dt_evt evs[64];
	struct udt_stats us;
	uint64_t deadline;
	int after = 0, k;
	long n;

	memset(&us, 0, sizeof(us));
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
		if (st_ingest_stats(dd->dd_sock, &us) != 0 ||
		    us.us_garbage >= us0->us_garbage + SETUID_RECS)
			break;
		usleep(1000);
	}
	while ((n = dtt_read(fd, evs, 64, 200)) > 0)
		for (k = 0; k < n; k++)
			after += evs[k].dtev_pid == tracee;
	dtt_check(after == 0 && us.us_garbage >= us0->us_garbage + SETUID_RECS,
	    "none of them reached root's reader as pid %d (%d did; %llu "
	    "discarded)", (int)tracee, after,
	    (unsigned long long)(us.us_garbage - us0->us_garbage));
}

/*
 * Root's tracee is not bound to its image (root may write any process's
 * memory): dtd asks no drain of it before an exec, as it does of the
 * user's (setuid_tracee()).
 */
static void
root_nodrain(const struct dtt_dtd *dd)
{
	struct udt_welcome w;
	int fds[2], fd;

	fd = dtt_tracee_hello(dd->dd_sock, sec_nsys, &w, fds);
	dtt_check(fd != -1 && !(w.uw_flags & UDT_W_XDRAIN),
	    "root's tracee is not asked to drain before an exec");
	if (fd != -1) {
		close(fds[0]);
		close(fds[1]);
		close(fd);
	}
}

/*
 * setuid: the program the tracee execs is a set-uid root copy of sleep;
 * else a plain copy, which runs as the user: /proc/PID stays the user's,
 * and only the end of the image's memory tells dtd of the exec.  vm: the
 * helper shares the tracee's memory (setuid_tracee()).
 */
static void
run_execbind(int setuid, int vm)
{
	struct dtt_dtd dd;
	struct dt_evt evs[64];
	struct udt_stats us0;
	char prog[160];
	uint64_t deadline;
	int fd = -1, go[2] = { -1, -1 }, done[2] = { -1, -1 }, seen = 0, k;
	long n;
	char c;
	pid_t tracee = -1;

	if (!dtt_check((fd = getpid_dtd(&dd)) != -1, "a private dtd; root "
	    "records getpid"))
		goto out;
	root_nodrain(&dd);
	if (!sleep_copy(&dd, prog, sizeof(prog), setuid) ||
	    pipe2(go, O_CLOEXEC) != 0 || pipe(done) != 0)
		goto out;
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(fd);
		close(go[1]);
		close(done[0]);
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(setuid_tracee(dd.dd_sock, prog, setuid, vm, false,
		    go[0], done[1]));
	}
	close(go[0]);
	go[0] = -1;
	close(done[1]);
	done[1] = -1;
	/* Its own record, before the exec, arrives. */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while (!seen && dtt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	    (n = dtt_read(fd, evs, 64, 5000)) > 0)
		for (k = 0; k < n; k++)
			seen |= evs[k].dtev_pid == tracee;
	if (!dtt_check(seen, "the tracee's record before the exec arrives "
	    "as pid %d", (int)tracee) ||
	    st_ingest_stats(dd.dd_sock, &us0) != 0)
		goto out;
	if (write(go[1], "g", 1) != 1 ||
	    !dtt_check(read(done[0], &c, 1) == 1, "the tracee exec'd the "
	    "%sprogram; its %s helper wrote %d records as it",
	    setuid == SETGID ? "set-gid " : setuid ? "set-uid " : "",
	    vm ? "CLONE_VM" : "forked",
	    SETUID_RECS))
		goto out;
	none_arrive(&dd, fd, &us0, tracee);
out:
	getpid_dtd_end(&dd, fd, tracee);
	close_fds(go, 2);
	close_fds(done, 2);
}

/*
 * The tracee's calls counted in its ring's header (UDT_EN_COUNT) and
 * root's count-only table keyed by pid: the pid's count so far, or -1
 * if the table could not be read.
 */
static long
count_of(int fd, pid_t pid)
{
	struct dtioc_aggent e[16];
	struct dtioc_aggread rd;
	uint32_t i;
	long c = 0;

	memset(&rd, 0, sizeof(rd));
	rd.dtgr_size = sizeof(e);
	rd.dtgr_ents = e;
	if (ioctl(fd, DTIOCAGGREAD, &rd) != 0)
		return -1;
	for (i = 0; i < rd.dtgr_nents && i < 16; i++)
		if (e[i].dtae_pid == pid)
			c += (long)e[i].dtae_count;
	return c;
}

/*
 * The header's counts after a set-id exec: root counts getpid by pid,
 * count-only, so a tracee's calls reach it through the header alone;
 * the helper's, written as the set-id program, must not (judged as
 * records are), and are counted as discarded.
 */
static void
run_execcount(int setuid, int vm)
{
	struct dtioc_aggspec as;
	struct udt_stats us0, us;
	struct dtt_dtd dd;
	char prog[160];
	uint64_t deadline;
	int fd = -1, go[2] = { -1, -1 }, done[2] = { -1, -1 };
	long before = 0, after = -1;
	char c;
	pid_t tracee = -1;

	if (!dtt_check((fd = getpid_dtd(&dd)) != -1, "a private dtd; root "
	    "records getpid"))
		goto out;
	/* count-only from here: a second look at the probe, stopped first */
	memset(&as, 0, sizeof(as));
	as.dtas_pbn = sec_getpid_pbn;
	as.dtas_func = DTA_COUNT;
	as.dtas_nkeys = 1;
	as.dtas_keys[0] = DTF_PID;
	if (!dtt_check(dtt_record(fd, 0) == 0 &&
	    ioctl(fd, DTIOCPRBAGG, &as) == 0 && dtt_record(fd, 1) == 0,
	    "root counts getpid by pid") ||
	    !sleep_copy(&dd, prog, sizeof(prog), setuid) ||
	    pipe2(go, O_CLOEXEC) != 0 || pipe(done) != 0)
		goto out;
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(fd);
		close(go[1]);
		close(done[0]);
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(setuid_tracee(dd.dd_sock, prog, setuid, vm, true,
		    go[0], done[1]));
	}
	close(go[0]);
	go[0] = -1;
	close(done[1]);
	done[1] = -1;
	/* its own count, before the exec, arrives */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while ((before = count_of(fd, tracee)) == 0 &&
	    dtt_clock_ns(CLOCK_MONOTONIC) < deadline)
		usleep(1000);
	if (!dtt_check(before == 1, "the tracee's count before the exec "
	    "arrives as pid %d (%ld)", (int)tracee, before) ||
	    st_ingest_stats(dd.dd_sock, &us0) != 0)
		goto out;
	if (write(go[1], "g", 1) != 1 ||
	    !dtt_check(read(done[0], &c, 1) == 1, "the tracee exec'd the "
	    "%sprogram; its %s helper counted %d calls as it",
	    setuid == SETGID ? "set-gid " : "set-uid ",
	    vm ? "CLONE_VM" : "forked", SETUID_RECS))
		goto out;
	/* dtd looked once its garbage count moved, or in 5 s */
	memset(&us, 0, sizeof(us));
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	    st_ingest_stats(dd.dd_sock, &us) == 0 &&
	    us.us_garbage < us0.us_garbage + SETUID_RECS)
		usleep(1000);
	after = count_of(fd, tracee);
	dtt_check(after == 1 && us.us_garbage >= us0.us_garbage + SETUID_RECS,
	    "the %s helper's %d counts as the %sprogram reached no table "
	    "(pid %d: %ld; %llu discarded)", vm ? "CLONE_VM" : "forked",
	    SETUID_RECS, setuid == SETGID ? "set-gid " : "set-uid ",
	    (int)tracee, after,
	    (unsigned long long)(us.us_garbage - us0.us_garbage));
out:
	getpid_dtd_end(&dd, fd, tracee);
	close_fds(go, 2);
	close_fds(done, 2);
}

void
run_setuid(void)
{
	run_execcount(1, 1);
	run_execcount(SETGID, 1);
	run_execcount(1, 0);
	run_execbind(1, 0);
	run_execbind(1, 1);
	/*
	 * Set-gid: /proc/PID stays the user's, its group becomes the
	 * program's; with the memory shared, only the group tells.
	 */
	run_execbind(SETGID, 0);
	run_execbind(SETGID, 1);
}

/*
 * As the user: connect, leave the connection to a forked helper, exec
 * the user's own program.  The helper says hello only once the exec
 * shows, so dtd pins and opens the new image, gets the ring, publishes
 * where it mapped it (as the library does) and writes SETUID_RECS
 * records as the new image.  donefd: one byte once they are written.
 */
static int
early_tracee(const char *sock, const char *prog, int donefd)
{
	struct udt_ring_hdr *rh;
	struct udt_welcome w;
	int fds[2], fd, gofd[2];
	pid_t pid = getpid();
	char c;

	if ((fd = dtt_connect(sock)) == -1 || pipe(gofd) != 0)
		return 1;
	switch (fork()) {
	case -1:
		return 2;
	case 0:
		close(gofd[1]);
		/*
		 * The hello only after the exec: before it, dtd would open
		 * the old image and see the exec otherwise, and the case
		 * would not test what it is for.
		 */
		if (!exec_shown(pid, 0))
			_exit(8);
		if ((fd = dtt_tracee_greet(fd, sec_nsys, &w, fds)) == -1)
			_exit(3);
		if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
			_exit(4);
		exec_recs(rh, w.uw_nslots, 0, pid);
		if (write(donefd, "d", 1) != 1)
			_exit(5);
		/* Keeps the ring until root is done. */
		_exit(read(gofd[0], &c, 1) == 0 ? 0 : 6);
	}
	close(gofd[0]);
	close(donefd);
	execl(prog, "sleep", "30", (char *)NULL);
	return 7;
}

/*
 * exec between connect and hello: the pid the connection names runs
 * another image by the time dtd opens its memory, one that never maps
 * the ring (dti_image_holds() in dtd).
 */
static void
run_exec_early(void)
{
	struct dtt_dtd dd;
	struct udt_stats us0;
	char prog[160], c;
	int fd = -1, done[2] = { -1, -1 };
	pid_t tracee = -1;

	if (!dtt_check((fd = getpid_dtd(&dd)) != -1, "a private dtd; root "
	    "records getpid"))
		goto out;
	if (!sleep_copy(&dd, prog, sizeof(prog), 0) || pipe(done) != 0 ||
	    st_ingest_stats(dd.dd_sock, &us0) != 0)
		goto out;
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(fd);
		close(done[0]);
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(early_tracee(dd.dd_sock, prog, done[1]));
	}
	close(done[1]);
	done[1] = -1;
	if (!dtt_check(read(done[0], &c, 1) == 1, "the tracee connected and "
	    "exec'd; its helper said hello after the exec and wrote %d "
	    "records as the new image", SETUID_RECS))
		goto out;
	none_arrive(&dd, fd, &us0, tracee);
out:
	getpid_dtd_end(&dd, fd, tracee);
	close_fds(done, 2);
}

void
run_exec(void)
{
	run_execbind(0, 0);
	run_exec_early();
}
