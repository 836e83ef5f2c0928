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
 * sec_test's modes on what opens and readers may do, and the helpers
 * of the modes with tracees of their own (see sec_test.c).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
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
	close_fds(fds, 4);
	st_teardown(&dd, fd);
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

uint32_t	sec_getpid;	/* getpid's entry, provider-local */
uint32_t	sec_getpid_pbn;	/* and its probe number */

int
getpid_dtd(struct dtt_dtd *dd)
{
	struct dtioc_probe_info *pi = NULL;
	uint32_t pbn, first;
	size_t npi;
	int fd = -1;

	if (st_setup(dd, "udt-sec", sec_dtd, NULL, &fd, &pi, &npi) != 0)
		goto fail;
	sec_nsys = dtt_nsys(pi, npi, &first);
	pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	free(pi);
	sec_getpid = pbn - first;
	sec_getpid_pbn = pbn;
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
close_fds(const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] != -1)
			close(fds[i]);
}

void
getpid_dtd_end(struct dtt_dtd *dd, int fd, pid_t tracee)
{
	if (tracee > 0)
		dtt_stop(tracee, SIGKILL, DTT_EXIT_MS);
	st_teardown(dd, fd);
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
