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
 * sec_test's modes on what opens and readers may do, and on tracees
 * that change image (see sec_test.c).
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "sec_test.h"

#define NOPENS		100000

/* As the user: open the device until it fails; n opened, errno after. */
static int
open_many(void *arg)
{
	const char *dev = arg;
	int n = 0, e;

	while (n < 10000 && dtt_open(dev) != -1)
		n++;
	e = errno;
	/* The count back as the exit status: n is 256 if the cap holds. */
	return n == 256 && e == EMFILE ? 0 : n == 0 ? 1 : 2;
}

/*
 * A child holding up to n opens of dev (a process may hold only so many
 * descriptors): reports how many on res, closes them all at EOF on cmd,
 * then reports a byte.
 */
static void
opens_child(const char *dev, int n, int cmd, int res)
{
	int *fds, i, got;
	char c;

	if ((fds = calloc((size_t)n, sizeof(*fds))) == NULL)
		_exit(1);
	for (got = 0; got < n; got++)
		if ((fds[got] = dtt_open(dev)) == -1)
			break;
	if (write(res, &got, sizeof(got)) != (ssize_t)sizeof(got))
		_exit(1);
	while (read(cmd, &c, 1) == -1 && errno == EINTR)
		continue;
	for (i = 0; i < got; i++)
		close(fds[i]);
	c = 'c';
	_exit(write(res, &c, 1) == 1 ? 0 : 1);
}

void
run_opens(void)
{
	struct dtt_dtd dd;
	struct rlimit rl;
	char *args[] = { "--no-ksyms", "--ring-size", "2", NULL };
	char gid[16];
	char *gargs[] = { "--no-ksyms", "--group", gid, "--ring-size", "16",
	    NULL };
	uint64_t t0, topen, tclose;
	pid_t kids[64];
	int cmd[2], res[2], per, nkids, k, n = 0, got, e, fd, done = 0;
	char c;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	per = rl.rlim_cur > 1100 ? (int)rl.rlim_cur - 100 : 1000;
	nkids = (NOPENS + per - 1) / per;
	if (!dtt_check(nkids <= 64 && dtt_dtd_init(&dd, "udt-sec") == 0 &&
	    pipe2(cmd, O_CLOEXEC) == 0 && pipe2(res, O_CLOEXEC) == 0 &&
	    dtt_dtd_start(&dd, sec_dtd, args, NULL, 0) != -1,
	    "a private dtd, --ring-size 2; %d processes to hold %d opens",
	    nkids, NOPENS))
		goto out;
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	fflush(stdout);
	for (k = 0; k < nkids; k++) {
		if ((kids[k] = fork()) == 0) {
			close(cmd[1]);
			close(res[0]);
			opens_child(dd.dd_dev, k < nkids - 1 ? per :
			    NOPENS - per * (nkids - 1), cmd[0], res[1]);
		}
	}
	close(cmd[0]);
	close(res[1]);
	for (k = 0; k < nkids; k++) {
		if (read(res[0], &got, sizeof(got)) != (ssize_t)sizeof(got))
			break;
		n += got;
	}
	topen = dtt_clock_ns(CLOCK_MONOTONIC) - t0;
	/* EOF on cmd: every child closes its opens. */
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	close(cmd[1]);
	while (done < nkids && read(res[0], &c, 1) == 1)
		done++;
	tclose = dtt_clock_ns(CLOCK_MONOTONIC) - t0;
	close(res[0]);
	for (k = 0; k < nkids; k++)
		dtt_wait(kids[k], DTT_EXIT_MS);
	dtt_check(n == NOPENS, "root opened the device %d times in %.2f s",
	    n, (double)topen / 1e9);
	/* Quadratic, 100000 closes took minutes; linear, seconds. */
	dtt_check(done == nkids && tclose < 30000000000ULL,
	    "and closed them in %.2f s", (double)tclose / 1e9);
	fd = dtt_open(dd.dd_dev);
	dtt_check(fd != -1, "the device still opens");
	if (fd != -1)
		close(fd);
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped");

	snprintf(gid, sizeof(gid), "%d", (int)sec_user.du_gid);
	if (!dtt_check(dtt_dtd_start(&dd, sec_dtd, gargs, NULL, 0) != -1,
	    "a private dtd, --group %s", gid))
		goto out;
	e = as_user(open_many, dd.dd_dev);
	dtt_check(e == 0, "%s, a group member, gets 256 opens, then EMFILE "
	    "(%s)", sec_user.du_name, e == 0 ? "yes" : e == 1 ? "none" :
	    "another count or errno");
	fd = dtt_open(dd.dd_dev);
	dtt_check(fd != -1, "root still opens the device");
	if (fd != -1)
		close(fd);
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped");
out:
	dtt_dtd_fini(&dd, true);
}

void
run_memory(void)
{
	struct dtt_dtd dd;
	struct dtioc_stat st;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t per = (uint64_t)(ncpus > 0 ? ncpus : 1) * 1024 *
	    sizeof(struct dt_evt);
	char max[32], err[256], log[4096];
	char *args[] = { "--no-ksyms", "--ring-size", "1024", "--max-memory",
	    max, NULL };
	int fds[4] = { -1, -1, -1, -1 }, fd = -1, i, ok, lfd;
	ssize_t n;

	/* Room for three opens' rings and a half. */
	snprintf(max, sizeof(max), "%llu", (unsigned long long)(3 * per +
	    per / 2));
	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0 &&
	    dtt_dtd_start(&dd, sec_dtd, args, err, sizeof(err)) != -1,
	    "a private dtd, --max-memory %s (%llu bytes an open)", max,
	    (unsigned long long)per))
		goto out;
	for (i = 0; i < 3; i++)
		fds[i] = dtt_open(dd.dd_dev);
	dtt_check(fds[0] != -1 && fds[1] != -1 && fds[2] != -1,
	    "three opens fit");
	fds[3] = dtt_open(dd.dd_dev);
	dtt_check(fds[3] == -1 && errno == ENOMEM, "the fourth fails with "
	    "ENOMEM (%s)", fds[3] == -1 ? strerror(errno) : "it opened");
	for (i = 0, ok = 0; i < 3; i++) {
		size_t np;
		struct dtioc_probe_info *pi = NULL;

		ok += fds[i] != -1 && dtt_stats(fds[i], &st) == 0 &&
		    (pi = dtt_plist(fds[i], &np)) != NULL && np > 0;
		free(pi);
	}
	dtt_check(ok == 3, "the three keep working (stats, probe list)");
	close(fds[0]);
	fds[0] = -1;
	fd = dtt_open(dd.dd_dev);
	dtt_check(fd != -1, "one closed, the next open fits again");
	if ((lfd = open(dd.dd_err, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(lfd, log, sizeof(log) - 1);
		log[n > 0 ? n : 0] = '\0';
		close(lfd);
	} else
		log[0] = '\0';
	dtt_check(strstr(log, "refused (ENOMEM)") != NULL &&
	    strstr(log, "in use") != NULL, "dtd logged the refusal with the "
	    "memory in use");
out:
	for (i = 0; i < 4; i++)
		if (fds[i] != -1)
			close(fds[i]);
	if (fd != -1)
		close(fd);
	if (dd.dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped");
	dtt_dtd_fini(&dd, true);
}

struct reader {
	pthread_t	r_thr;
	int		r_fd;
	_Atomic pid_t	r_tid;
	_Atomic int	r_done;
	ssize_t		r_n;
	int		r_errno;
};

static void
on_usr1(int sig)
{
	(void)sig;
}

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	struct dt_evt ev;

	r->r_tid = gettid();
	r->r_n = read(r->r_fd, &ev, sizeof(ev));
	r->r_errno = errno;
	r->r_done = 1;
	return NULL;
}

/* The state letter of our thread tid in /proc, or '?'. */
static char
thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' ? p[2] : '?';
}

void
run_readers(void)
{
	struct sigaction sa;
	struct dtt_dtd dd;
	struct reader r[2];
	char *args[] = { "--no-ksyms", NULL };
	char st[2] = { '?', '?' };
	uint64_t deadline;
	int fd = -1, i, started = 0;

	memset(r, 0, sizeof(r));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: reads end EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0 &&
	    dtt_dtd_start(&dd, sec_dtd, args, NULL, 0) != -1 &&
	    (fd = dtt_open(dd.dd_dev)) != -1, "a private dtd and one open"))
		goto out;
	/* Nothing recorded: both reads block until a signal. */
	for (i = 0; i < 2; i++) {
		r[i].r_fd = fd;
		if (pthread_create(&r[i].r_thr, NULL, reader_main, &r[i]) != 0)
			break;
		started++;
	}
	if (!dtt_check(started == 2, "two threads read the one descriptor"))
		goto out;
	/* Asleep in read(2): S, interruptible; D on the position lock. */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
		for (i = 0; i < 2; i++)
			st[i] = r[i].r_tid != 0 ? thread_state(r[i].r_tid) :
			    '?';
		if (st[0] == 'S' && st[1] == 'S')
			break;
		usleep(1000);
	}
	dtt_check(st[0] == 'S' && st[1] == 'S', "both sleep interruptibly "
	    "(states %c and %c)", st[0], st[1]);
	for (i = 0; i < 2; i++)
		pthread_kill(r[i].r_thr, SIGUSR1);
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while ((!r[0].r_done || !r[1].r_done) &&
	    dtt_clock_ns(CLOCK_MONOTONIC) < deadline)
		usleep(1000);
	dtt_check(r[0].r_done && r[1].r_done && r[0].r_n == -1 &&
	    r[0].r_errno == EINTR && r[1].r_n == -1 && r[1].r_errno == EINTR,
	    "a signal to each ends both reads with EINTR (%zd %s, %zd %s)",
	    r[0].r_n, r[0].r_done ? strerror(r[0].r_errno) : "still asleep",
	    r[1].r_n, r[1].r_done ? strerror(r[1].r_errno) : "still asleep");
out:
	/* Whatever is left asleep: more signals, then dtd's EIO. */
	for (i = 0; i < started; i++) {
		deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 2000000000ULL;
		while (!r[i].r_done && dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
			pthread_kill(r[i].r_thr, SIGUSR1);
			usleep(10000);
		}
	}
	if (dd.dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped");
	for (i = 0; i < started; i++)
		pthread_join(r[i].r_thr, NULL);
	if (fd != -1)
		close(fd);
	dtt_dtd_fini(&dd, true);
}

int
st_ingest_stats_sec(const char *sock, struct udt_stats *st)
{
	struct udt_hello h = { UDT_MAGIC, UDT_VERSION, 0, UDT_HELLO_STATS };
	int fd, rc = -1;

	if ((fd = dtt_connect(sock)) < 0)
		return -1;
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) &&
	    recv(fd, st, sizeof(*st), MSG_WAITALL) == (ssize_t)sizeof(*st) &&
	    st->us_magic == UDT_MAGIC)
		rc = 0;
	close(fd);
	return rc;
}

uint32_t	sec_getpid;	/* getpid's entry, provider-local */

int
getpid_dtd(struct dtt_dtd *dd)
{
	struct dtioc_probe_info *pi = NULL;
	char *args[] = { "--no-ksyms", NULL };
	uint32_t pbn, first;
	size_t npi;
	int fd = -1;

	if (dtt_dtd_init(dd, "udt-sec") != 0 ||
	    dtt_dtd_start(dd, sec_dtd, args, NULL, 0) == -1 ||
	    (fd = dtt_open(dd->dd_dev)) == -1 ||
	    (pi = dtt_plist(fd, &npi)) == NULL)
		goto fail;
	sec_nsys = dtt_nsys(pi, npi, &first);
	pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	free(pi);
	sec_getpid = pbn - first;
	if (pbn == 0 || dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) != 0 ||
	    dtt_record(fd, 1) != 0)
		goto fail;
	return fd;
fail:
	if (fd != -1)
		close(fd);
	return -1;
}

void
getpid_dtd_end(struct dtt_dtd *dd, int fd)
{
	if (fd != -1)
		close(fd);
	if (dd->dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(dd, SIGTERM)),
		    "dtd stopped");
	dtt_dtd_fini(dd, true);
}

void
commit_rec(struct udt_ring_hdr *rh, uint32_t nslots, uint64_t t, pid_t tid,
    const char *comm)
{
	struct udt_rec *s = (struct udt_rec *)(void *)((char *)rh +
	    UDT_RING_HDRSIZE + (t % nslots) * UDT_SLOT_SIZE);
	struct udt_rec r;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(&r, 0, sizeof(r));
	r.ur_probe = (uint16_t)sec_getpid;
	r.ur_flags = UDT_R_COMM;
	r.ur_tid = tid;
	r.ur_sec = ts.tv_sec;
	r.ur_nsec = ts.tv_nsec;
	snprintf(r.ur_comm, sizeof(r.ur_comm), "%s", comm);
	memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
	/* Only up: tickets may be committed out of order (exec_recs()). */
	if (__atomic_load_n(&rh->rh_head, __ATOMIC_RELAXED) < t + 1)
		__atomic_store_n(&rh->rh_head, t + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ur_seq, t + 1, __ATOMIC_RELEASE);
}

void
comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

#define SETUID_RECS	100

/* What the tracee's helper needs; the helper may share its memory. */
struct setuid_help {
	struct udt_ring_hdr	*sh_rh;
	uint32_t		 sh_nslots;
	pid_t			 sh_pid;	/* the tracee */
	int			 sh_setuid;	/* the program is set-uid */
	int			 sh_gofd;
	int			 sh_donefd;
};

/*
 * Whether pid's exec of the copy of sleep shows in /proc, as dtd sees
 * it, within 5 s: the program's comm, and for a set-uid one /proc/PID
 * root's.  Polled: neither change is an event anything can wait on.
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
		    (stat(path, &st) == 0 && st.st_uid == 0)))
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
	exec_recs(sh->sh_rh, sh->sh_nslots, 1, sh->sh_pid);
	if (write(sh->sh_donefd, "d", 1) != 1)
		return 5;
	return read(sh->sh_gofd, &c, 1) == 0 ? 0 : 6;
}

/*
 * As the user: the tracee.  Gets a ring, commits one record, waits for
 * root's go on gofd, starts a helper that keeps the ring, and execs the
 * program (set-uid root, or the user's own).  The helper is forked, or
 * with vm a CLONE_VM child, which keeps the tracee's old memory alive
 * past the exec: then only the owner of /proc/PID tells dtd of it.
 */
static int
setuid_tracee(const char *sock, const char *prog, int setuid, int vm,
    int gofd, int donefd)
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
	if (!(w.uw_flags & UDT_W_XDRAIN))
		return 8;
	if ((sh.sh_rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 2;
	sh.sh_nslots = w.uw_nslots;
	sh.sh_pid = getpid();
	sh.sh_setuid = setuid;
	sh.sh_gofd = gofd;
	sh.sh_donefd = donefd;
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
	return dtt_check(chmod(prog, setuid ? 04755 : 0755) == 0, "a %scopy "
	    "of sleep", setuid ? "set-uid root " : "");
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
		if (st_ingest_stats_sec(dd->dd_sock, &us) != 0 ||
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
		_exit(setuid_tracee(dd.dd_sock, prog, setuid, vm, go[0],
		    done[1]));
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
	    st_ingest_stats_sec(dd.dd_sock, &us0) != 0)
		goto out;
	if (write(go[1], "g", 1) != 1 ||
	    !dtt_check(read(done[0], &c, 1) == 1, "the tracee exec'd the "
	    "%sprogram; its %s helper wrote %d records as it",
	    setuid ? "set-uid " : "", vm ? "CLONE_VM" : "forked",
	    SETUID_RECS))
		goto out;
	none_arrive(&dd, fd, &us0, tracee);
out:
	if (tracee > 0)
		dtt_stop(tracee, SIGKILL, DTT_EXIT_MS);
	for (k = 0; k < 2; k++) {
		if (go[k] != -1)
			close(go[k]);
		if (done[k] != -1)
			close(done[k]);
	}
	getpid_dtd_end(&dd, fd);
}

void
run_setuid(void)
{
	run_execbind(1, 0);
	run_execbind(1, 1);
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
	    st_ingest_stats_sec(dd.dd_sock, &us0) != 0)
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
	if (tracee > 0)
		dtt_stop(tracee, SIGKILL, DTT_EXIT_MS);
	if (done[0] != -1)
		close(done[0]);
	getpid_dtd_end(&dd, fd);
}

void
run_exec(void)
{
	run_execbind(0, 0);
	run_exec_early();
}
