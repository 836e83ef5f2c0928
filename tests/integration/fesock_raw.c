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
 * stop: OpenBSD btrace 1.98's read loop (as itest_stop.c has it), run in
 * a child with libuserdt-dev.so preloaded, through SIGSTOP, SIGTSTP and
 * an SA_RESTART signal: over the socket the read waits in the child, so
 * none of them may end it (OpenBSD's PCATCH sleep, and better than the
 * FUSE front end, whose reads return 0 at a stop and EINTR at any caught
 * signal); SIGINT still ends it with EINTR, a newline and exit 0.  The
 * child marks each read(2) it begins on a pipe; every wait is on the
 * child's state in /proc or that pipe, bounded.
 *
 * garbage: malformed frames on raw connections get their errors, broken
 * ones an ERROR frame and the end of the stream, and dtd keeps serving
 * an open made before them and new ones, and exits 0.
 */
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fesock_test.h"

#define NSEC_PER_SEC	1000000000ULL
#define STOP_WAIT_MS	20000

static volatile sig_atomic_t	quit_pending;
static struct dt_evt		buf_poll[64];
static int			loop_mark = -1;

static void
on_quit(int sig)
{
	(void)sig;
	quit_pending = 1;
}

static void
on_usr1(int sig)
{
	(void)sig;
	(void)!write(loop_mark, "U", 1);
}

/*
 * poll(2) and select(2) on a second open: not readable while nothing is
 * recorded, then, interval firing every 10 ms, each wakes when a record
 * arrives (dtd's notification) and a read finds it.  Exits 3 if not.
 */
static void
loop_poll(const char *dev, uint32_t pbn)
{
	struct pollfd pfd;
	struct timeval tv = { 0, 0 };
	fd_set rs;
	int fd;

	if ((fd = open(dev, O_RDONLY | O_CLOEXEC)) == -1)
		err(2, "open %s", dev);
	pfd.fd = fd;
	pfd.events = POLLIN;
	FD_ZERO(&rs);
	FD_SET(fd, &rs);
	if (poll(&pfd, 1, 0) != 0 || select(fd + 1, &rs, NULL, NULL, &tv) !=
	    0)
		errx(3, "poll or select: readable with nothing recorded");
	if (dtt_enable(fd, pbn, 0, 10 * 1000000ULL) != 0 ||
	    dtt_record(fd, 1) != 0)
		errx(2, "cannot enable interval and record");
	if (poll(&pfd, 1, DTT_EXIT_MS) != 1 || !(pfd.revents & POLLIN) ||
	    dtt_read(fd, buf_poll, 64, DTT_EXIT_MS) < 1)
		errx(3, "poll: no record woke it");
	FD_ZERO(&rs);
	FD_SET(fd, &rs);
	tv.tv_sec = DTT_EXIT_MS / 1000;
	if (select(fd + 1, &rs, NULL, NULL, &tv) != 1 || !FD_ISSET(fd, &rs) ||
	    dtt_read(fd, buf_poll, 64, DTT_EXIT_MS) < 1)
		errx(3, "select: no record woke it");
	close(fd);
}

/*
 * fesock_test loop DEV MARKFD: the child, with the library preloaded.
 * Checks what a client sees of the descriptor (a character device,
 * O_RDONLY, a dup that works, poll and select), enables interval at one
 * hour, records and loops as btrace does, writing "R" to MARKFD before
 * each read(2).
 */
int
fs_loop_child(int argc, char *argv[])
{
	static struct dt_evt buf[64];
	struct dtioc_stat dst;
	struct sigaction sa;
	struct stat st, pst;
	uint32_t pbn;
	ssize_t rlen;
	int fd, fd2, on = 1;

	if (argc != 4)
		errx(2, "usage: fesock_test loop DEV MARKFD");
	loop_mark = atoi(argv[3]);
	/*
	 * A process group of its own whose parent is in another group of
	 * the session: not orphaned, so SIGTSTP stops it as in a shell.
	 */
	setpgid(0, 0);
	if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) == -1)
		err(2, "open %s", argv[2]);
	if (fstat(fd, &st) == -1 || !S_ISCHR(st.st_mode) ||
	    stat(argv[2], &pst) == -1 || !S_ISCHR(pst.st_mode))
		errx(3, "fstat and stat: not a character device");
	if (fcntl(fd, F_GETFL) != O_RDONLY ||
	    !(fcntl(fd, F_GETFD) & FD_CLOEXEC))
		errx(3, "fcntl: not O_RDONLY and close-on-exec");
	if ((fd2 = dup(fd)) == -1 || ioctl(fd2, DTIOCGSTATS, &dst) != 0 ||
	    close(fd2) != 0)
		errx(3, "a dup of the device does not answer DTIOCGSTATS");
	/* DTIOCGPLIST's array comes back through its pointer. */
	if ((pbn = dtt_probe(fd, "interval", "hz", "1")) == 0)
		errx(2, "no interval:hz:1");
	loop_poll(argv[2], pbn);
	if (dtt_enable(fd, pbn, 0, 3600 * NSEC_PER_SEC) != 0 ||
	    dtt_record(fd, on) != 0)
		errx(2, "cannot enable interval and record");

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_quit;
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		err(2, "sigaction");
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL))
		err(2, "sigaction");

	/* btrace.c 1.98's loop, its checks and messages. */
	while (!quit_pending) {
		(void)!write(loop_mark, "R", 1);
		rlen = read(fd, buf, sizeof(struct dt_evt) * 64);
		if (rlen == -1) {
			if (errno == EINTR && quit_pending) {
				printf("\n");
				break;
			}
			err(1, "read");
		}
		if ((rlen % sizeof(struct dt_evt)) != 0)
			err(1, "incorrect read");
	}
	(void)dtt_record(fd, 0);
	close(fd);
	return 0;
}

/* The state letter of /proc/PID/stat, or 0 once pid is gone. */
static char
proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2];
}

/* Whether pid sleeps in recvfrom(2) (45 on amd64): read's wait. */
static bool
proc_in_recv(pid_t pid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strncmp(buf, "45 ", 3) == 0 && proc_state(pid) == 'S';
}

/* Marks the child wrote so far, added to *reads and *usr1. */
static void
stop_marks(int rd, unsigned int *reads, unsigned int *usr1)
{
	char buf[64];
	ssize_t n, i;

	while ((n = read(rd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++) {
			if (buf[i] == 'R')
				(*reads)++;
			else if (buf[i] == 'U')
				(*usr1)++;
		}
}

/*
 * Wait until the child sleeps in recv (want 'S') after beginning its
 * first read(2) (an ioctl's reply is waited for in recv too), or is
 * stopped ('T'), and has written at least needu 'U' marks; false on a
 * timeout or if it ended.  /proc has no notification: look every ms.
 */
static bool
stop_wait(pid_t pid, int rd, char want, unsigned int *reads,
    unsigned int *usr1, unsigned int needu)
{
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t end = dtt_clock_ns(CLOCK_MONOTONIC) + STOP_WAIT_MS *
	    1000000ULL;
	char st;

	do {
		stop_marks(rd, reads, usr1);
		st = proc_state(pid);
		if (st == 'Z' || st == 0)
			return false;
		if (*usr1 >= needu && (want == 'T' ? st == 'T' || st == 't' :
		    *reads >= 1 && proc_in_recv(pid)))
			return true;
		nanosleep(&ms, NULL);
	} while (dtt_clock_ns(CLOCK_MONOTONIC) < end);
	return false;
}

void
fs_stop(struct fs_ctx *fc)
{
	static const int sigs[] = { SIGSTOP, SIGTSTP, SIGSTOP };
	char ev[256], mark[16], out[512];
	const char *vars[3] = { ev, NULL, NULL };
	char *argv[] = { (char *)fc->fc_self, "loop", fc->fc_devpath, mark,
	    NULL };
	char evd[256];
	unsigned int reads = 0, usr1 = 0, i;
	int p[2], o[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	bool ok;

	if (dtt_dtd_init(&fc->fc_dd, "fesock-stop") != 0) {
		dtt_check(false, "stop: temporary directory");
		return;
	}
	snprintf(fc->fc_devsock, sizeof(fc->fc_devsock), "%s/dt.sock",
	    fc->fc_dd.dd_dir);
	snprintf(fc->fc_devpath, sizeof(fc->fc_devpath), "%s/nodev",
	    fc->fc_dd.dd_dir);
	{
		char *extra[] = { "--frontend", "socket", "--device-socket",
		    fc->fc_devsock, "--no-ksyms", NULL };

		if (!dtt_check(dtt_dtd_start(&fc->fc_dd, fc->fc_dtd, extra,
		    NULL, 0) > 0, "stop: dtd --frontend socket starts"))
			goto out;
	}
	/* Nothing at the device path: the library serves it. */
	dtt_check(access(fc->fc_dd.dd_dev, F_OK) == -1,
	    "stop: --frontend socket mounts no FUSE device");
	snprintf(ev, sizeof(ev), "USERDT_DEVICE_SOCKET=%s", fc->fc_devsock);
	snprintf(evd, sizeof(evd), "USERDT_DEVICE=%s", fc->fc_devpath);
	vars[1] = evd;
	if (pipe2(p, O_CLOEXEC) == -1 || pipe2(o, O_CLOEXEC) == -1) {
		dtt_check(false, "stop: pipes");
		goto out;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	snprintf(mark, sizeof(mark), "%d", p[1]);
	fflush(stdout);
	pid = dtt_spawn(argv, fs_env(fc->fc_lib, vars), -1, o[1], o[1], p[1]);
	close(p[1]);
	close(o[1]);
	if (!dtt_check(pid != -1, "stop: the child runs"))
		goto out;

	ok = dtt_check(stop_wait(pid, p[0], 'S', &reads, &usr1, 0) &&
	    reads == 1, "stop: the child saw a character device, O_RDONLY, a "
	    "working dup, poll and select woken by records; the btrace loop "
	    "waits in its first read(2), in recv(2)");
	for (i = 0; ok && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		kill(pid, sigs[i]);
		ok = dtt_check(stop_wait(pid, p[0], 'T', &reads, &usr1, 0),
		    "stop: %s stops the reader", sigs[i] == SIGSTOP ?
		    "SIGSTOP" : "SIGTSTP");
		if (!ok)
			break;
		kill(pid, SIGCONT);
		ok = dtt_check(stop_wait(pid, p[0], 'S', &reads, &usr1, 0) &&
		    reads == 1, "stop: after SIGCONT it waits in the same "
		    "read(2), not ended (%u reads begun)", reads);
	}
	if (ok) {
		kill(pid, SIGUSR1);
		dtt_check(stop_wait(pid, p[0], 'S', &reads, &usr1, 1) &&
		    reads == 1, "stop: an SA_RESTART handler ran and the "
		    "read(2) restarted, as on OpenBSD (%u reads begun)", reads);
	}
	/* Ctrl-C: btrace's handler, EINTR, a newline, the end. */
	kill(pid, SIGINT);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (status == -1)
		status = dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	while (len < sizeof(out) - 1 && (n = read(o[0], out + len,
	    sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	dtt_check(dtt_exited0(status) && strcmp(out, "\n") == 0,
	    "stop: SIGINT ends it with EINTR as at Ctrl-C (status %#x, "
	    "wrote \"%s\")", status, out);
	close(o[0]);
	close(p[0]);
	dtt_check(dtt_dtd_stop(&fc->fc_dd, SIGTERM) == 0,
	    "stop: dtd exits 0");
out:
	dtt_dtd_fini(&fc->fc_dd, true);
}

/* OPEN on fd: its reply's errno, or -1 when none came. */
static int
raw_open(int fd, uint32_t seq)
{
	struct udt_ds_hdr dh;
	char buf[64];

	if (fs_send(fd, UDT_DS_OPEN, 0, seq, O_RDONLY, NULL, 0) == -1 ||
	    fs_recv(fd, &dh, buf, sizeof(buf)) != 0 ||
	    dh.dh_op != (UDT_DS_OPEN | UDT_DS_REPLY) || dh.dh_seq != seq)
		return -1;
	return dh.dh_error;
}

/* A request and its reply's errno (-1 if none or not its reply). */
static int
raw_call(int fd, uint16_t op, uint32_t seq, uint64_t arg, const void *p,
    size_t len, void *out, size_t outsz)
{
	struct udt_ds_hdr dh;

	if (fs_send(fd, op, 0, seq, arg, p, len) == -1 ||
	    fs_recv(fd, &dh, out, outsz) != 0 ||
	    dh.dh_op != (op | UDT_DS_REPLY) || dh.dh_seq != seq)
		return -1;
	return dh.dh_error;
}

/* DTIOCGPLIST's size probe: the size of the probe list, or 0. */
static size_t
raw_plist_size(int fd, uint32_t seq)
{
	struct dtioc_probe dtpr = { 0, NULL };
	char buf[sizeof(struct udt_ds_ioret) + sizeof(dtpr)];

	if (raw_call(fd, UDT_DS_IOCTL, seq, DTIOCGPLIST, &dtpr, sizeof(dtpr),
	    buf, sizeof(buf)) != 0)
		return 0;
	memcpy(&dtpr, buf + sizeof(struct udt_ds_ioret), sizeof(dtpr));
	return dtpr.dtpr_size;
}

/* A broken frame: an ERROR frame (EBADMSG), then the end of the stream. */
static bool
raw_broken(int fd)
{
	struct udt_ds_hdr dh;
	char buf[64];

	if (fs_recv(fd, &dh, buf, sizeof(buf)) != 0 ||
	    dh.dh_op != UDT_DS_ERROR || dh.dh_error != EBADMSG)
		return false;
	return fs_recv(fd, &dh, buf, sizeof(buf)) == EPIPE;
}

void
fs_garbage(struct fs_ctx *fc)
{
	char *extra[] = { "--frontend", "socket", "--device-socket",
	    fc->fc_devsock, "--no-ksyms", NULL };
	struct udt_ds_hdr dh;
	struct dtioc_req dtrq;
	unsigned char junk[512];
	char buf[256];
	size_t size, i, j, replies = 0;
	uint32_t seed = 23;
	int keep, fd, status;
	pid_t pid = -1;

	if (dtt_dtd_init(&fc->fc_dd, "fesock-garbage") != 0) {
		dtt_check(false, "garbage: temporary directory");
		return;
	}
	snprintf(fc->fc_devsock, sizeof(fc->fc_devsock), "%s/dt.sock",
	    fc->fc_dd.dd_dir);
	extra[3] = fc->fc_devsock;
	if (!dtt_check(dtt_dtd_start(&fc->fc_dd, fc->fc_dtd, extra, NULL, 0) >
	    0, "garbage: dtd --frontend socket starts"))
		goto out;

	/* An open made before the garbage, to use after it. */
	keep = fs_connect(fc->fc_devsock);
	dtt_check(keep != -1 && raw_open(keep, 1) == 0 &&
	    (size = raw_plist_size(keep, 2)) > 0, "garbage: an open answers "
	    "DTIOCGPLIST's size probe");

	fd = fs_connect(fc->fc_devsock);
	dtt_check(fd != -1 && raw_call(fd, UDT_DS_IOCTL, 1, DTIOCGSTATS, NULL,
	    0, buf, sizeof(buf)) == EBADF && raw_call(fd, UDT_DS_READ, 2, 456,
	    NULL, 0, buf, sizeof(buf)) == EBADF,
	    "garbage: a request before OPEN is EBADF");
	dtt_check(raw_open(fd, 3) == 0 && raw_open(fd, 4) == EBUSY,
	    "garbage: a second OPEN on one connection is EBUSY");
	dtt_check(raw_call(fd, 99, 5, 0, NULL, 0, buf, sizeof(buf)) ==
	    EOPNOTSUPP, "garbage: an unknown request is EOPNOTSUPP");
	dtt_check(raw_call(fd, UDT_DS_READ, 6, 456, "abcd", 4, buf,
	    sizeof(buf)) == EINVAL, "garbage: a READ with a payload is EINVAL");
	dtt_check(raw_call(fd, UDT_DS_IOCTL, 7, 0x4004ff01UL, "abcd", 4, buf,
	    sizeof(buf)) == ENOTTY, "garbage: an unknown ioctl is ENOTTY");
	memset(&dtrq, 0, sizeof(dtrq));
	dtt_check(raw_call(fd, UDT_DS_IOCTL, 8, DTIOCPRBENABLE, &dtrq, 8, buf,
	    sizeof(buf)) == EFAULT, "garbage: an ioctl argument cut short is "
	    "EFAULT");
	dtt_check(raw_call(fd, UDT_DS_IOCTL, 9, DTIOCGSTATS, NULL, 0, buf,
	    sizeof(buf)) == 0, "garbage: and the connection goes on serving");
	/*
	 * One frame, two senders sharing the connection (this process and
	 * a child): refused, whoever they are.
	 */
	memset(&dh, 0, sizeof(dh));
	dh.dh_magic = UDT_DS_MAGIC;
	dh.dh_op = UDT_DS_IOCTL;
	dh.dh_seq = 10;
	dh.dh_arg = DTIOCGSTATS;
	if (send(fd, &dh, 16, MSG_NOSIGNAL) == 16 && (pid = fork()) == 0)
		_exit(send(fd, (char *)&dh + 16, sizeof(dh) - 16, MSG_NOSIGNAL)
		    != (ssize_t)(sizeof(dh) - 16));
	status = pid > 0 ? dtt_wait(pid, DTT_EXIT_MS) : -1;
	dtt_check(dtt_exited0(status) && fs_recv(fd, &dh, buf, sizeof(buf)) ==
	    0 && dh.dh_seq == 10 && dh.dh_error == EPERM, "garbage: a frame "
	    "sent in parts by two processes is EPERM");
	close(fd);

	fd = fs_connect(fc->fc_devsock);
	memset(&dh, 0, sizeof(dh));
	dh.dh_magic = 0xdeadbeef;
	dtt_check(fd != -1 && send(fd, &dh, sizeof(dh), MSG_NOSIGNAL) ==
	    (ssize_t)sizeof(dh) && raw_broken(fd), "garbage: a bad magic gets "
	    "EBADMSG and the end of the stream");
	if (fd != -1)
		close(fd);
	fd = fs_connect(fc->fc_devsock);
	dh.dh_magic = UDT_DS_MAGIC;
	dh.dh_op = UDT_DS_IOCTL;
	dh.dh_len = 0xffffffffU;
	dtt_check(fd != -1 && send(fd, &dh, sizeof(dh), MSG_NOSIGNAL) ==
	    (ssize_t)sizeof(dh) && raw_broken(fd), "garbage: a length of 4 GB "
	    "gets EBADMSG and the end of the stream");
	if (fd != -1)
		close(fd);
	/* Half a header, then gone; then bytes from a fixed seed. */
	if ((fd = fs_connect(fc->fc_devsock)) != -1) {
		(void)send(fd, &dh, 16, MSG_NOSIGNAL);
		close(fd);
	}
	for (i = 0; i < 32; i++) {
		if ((fd = fs_connect(fc->fc_devsock)) == -1)
			break;
		for (j = 0; j < sizeof(junk); j++) {
			seed = seed * 1103515245U + 12345U;
			junk[j] = (unsigned char)(seed >> 16);
		}
		/* Now and then a valid head, so the body is parsed too. */
		if (i % 2 == 0)
			memcpy(junk, &(uint32_t){ UDT_DS_MAGIC }, 4);
		(void)send(fd, junk, sizeof(junk), MSG_NOSIGNAL);
		shutdown(fd, SHUT_WR);
		while (fs_recv(fd, &dh, buf, sizeof(buf)) == 0)
			replies++;
		close(fd);
	}
	dtt_check(i == 32 && replies >= 32, "garbage: 32 connections of "
	    "random bytes each got an answer (%zu frames) and an end", replies);
	dtt_check(kill(fc->fc_dd.dd_pid, 0) == 0 && keep != -1 &&
	    raw_plist_size(keep, 3) == size, "garbage: dtd still serves the "
	    "open made before, unchanged");
	fd = fs_connect(fc->fc_devsock);
	dtt_check(fd != -1 && raw_open(fd, 1) == 0 && raw_plist_size(fd, 2) ==
	    size, "garbage: and new opens");
	if (fd != -1)
		close(fd);
	if (keep != -1)
		close(keep);
	status = dtt_dtd_stop(&fc->fc_dd, SIGTERM);
	dtt_check(dtt_exited0(status), "garbage: dtd exits 0 (status %#x)",
	    status);
out:
	dtt_dtd_fini(&fc->fc_dd, true);
}
