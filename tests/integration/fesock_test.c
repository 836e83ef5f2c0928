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
 * usage: fesock_test btrace|unpriv|stop|garbage|itest DTD LIBDEV PROGRAM
 *
 * btrace: one dtd serves its FUSE-file device and its socket at once;
 * our btrace lists the same probes and prints the same for a script
 * against a traced command (-c) through the two; then reads events
 * through the socket from a pid namespace of its own, and from outside
 * the pid namespace of a dtd started in one.
 * unpriv: an ordinary user, given the device's group, opens root's
 * device through the socket but may not record (EPERM, as through the
 * node); then, in a user and mount namespace of theirs with an empty
 * /dev (no /dev/fuse), runs their own dtd, which serves the socket
 * alone, and btrace reads its events through /dev/dt, a path that does
 * not exist there.
 * stop, garbage: fesock_raw.c.
 * itest (PROGRAM is dt-itest): dt-itest's checks of dt(4) through the
 * library and a dtd that serves the socket alone.
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fesock_test.h"

#define FS_ENVMAX	1024

char **
fs_env(const char *lib, const char *const vars[])
{
	static char *env[FS_ENVMAX], *pre;
	char **base;
	size_t n = 0, i;

	free(pre);
	pre = NULL;
	if ((base = dtt_preload_env(lib, &pre)) == NULL)
		return NULL;
	for (i = 0; base[i] != NULL && n < FS_ENVMAX - 16; i++)
		env[n++] = base[i];
	free(base);
	for (i = 0; vars != NULL && vars[i] != NULL && n < FS_ENVMAX - 1; i++)
		env[n++] = (char *)vars[i];
	env[n] = NULL;
	return env;
}

char **
fs_env_bare(const char *lib, const char *const vars[])
{
	static char *env[FS_ENVMAX], pre[PATH_MAX + 16], asan[1024];
	extern char **environ;
	const char *opts = getenv("ASAN_OPTIONS");
	size_t n = 0, i;

	for (i = 0; environ[i] != NULL && n < FS_ENVMAX - 16; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
			env[n++] = environ[i];
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", lib);
	snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
	    opts != NULL ? opts : "", opts != NULL && opts[0] != '\0' ? ":" : "");
	env[n++] = pre;
	env[n++] = asan;
	for (i = 0; vars != NULL && vars[i] != NULL && n < FS_ENVMAX - 1; i++)
		env[n++] = (char *)vars[i];
	env[n] = NULL;
	return env;
}

int
fs_run(char *const argv[], char *const env[], char *out, size_t outsz)
{
	size_t len = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	pid = dtt_spawn(argv, env, -1, p[1], -1, -1);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	/* EOF when it and its children have exited (or closed it). */
	while (len < outsz - 1 && (n = read(p[0], out + len,
	    outsz - 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	close(p[0]);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (status == -1)
		(void)dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	return status;
}

int
fs_connect(const char *sock)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
fs_send(int fd, uint16_t op, uint16_t flags, uint32_t seq, uint64_t arg,
    const void *payload, size_t len)
{
	struct udt_ds_hdr dh;
	char buf[sizeof(dh) + UDT_DS_MAXPAYLOAD];

	if (len > UDT_DS_MAXPAYLOAD) {
		errno = EMSGSIZE;
		return -1;
	}
	memset(&dh, 0, sizeof(dh));
	dh.dh_magic = UDT_DS_MAGIC;
	dh.dh_op = op;
	dh.dh_flags = flags;
	dh.dh_seq = seq;
	dh.dh_len = (uint32_t)len;
	dh.dh_arg = arg;
	memcpy(buf, &dh, sizeof(dh));
	if (len > 0)
		memcpy(buf + sizeof(dh), payload, len);
	if (send(fd, buf, sizeof(dh) + len, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof(dh) + len))
		return -1;
	return 0;
}

/* len bytes within the deadline: 0, EPIPE or ETIMEDOUT. */
static int
fs_recv_n(int fd, void *buf, size_t len, uint64_t end)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	uint64_t now;
	ssize_t n;

	while (got < len) {
		now = dtt_clock_ns(CLOCK_MONOTONIC) / 1000000;
		if (now >= end)
			return ETIMEDOUT;
		if (poll(&pfd, 1, (int)(end - now)) == 0)
			return ETIMEDOUT;
		n = recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return EPIPE;
		got += (size_t)n;
	}
	return 0;
}

int
fs_recv(int fd, struct udt_ds_hdr *dh, void *buf, size_t max)
{
	uint64_t end = dtt_clock_ns(CLOCK_MONOTONIC) / 1000000 + DTT_EXIT_MS;
	char junk[4096];
	size_t keep, left, n;
	int error;

	if ((error = fs_recv_n(fd, dh, sizeof(*dh), end)) != 0)
		return error;
	keep = dh->dh_len < max ? dh->dh_len : max;
	if ((error = fs_recv_n(fd, buf, keep, end)) != 0)
		return error;
	for (left = dh->dh_len - keep; left > 0; left -= n) {
		n = left < sizeof(junk) ? left : sizeof(junk);
		if ((error = fs_recv_n(fd, junk, n, end)) != 0)
			return error;
	}
	return 0;
}

/*
 * fs_run() from a new pid namespace, where argv's process is pid 1 and
 * dtd's pids mean nothing: its wait status (-1: it did not end) and
 * output.
 */
static int
fs_run_pidns(char *const argv[], char *const env[], char *out, size_t outsz)
{
	size_t len = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fflush(stdout);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		close(p[0]);
		if (unshare(CLONE_NEWPID) == -1)
			_exit(120);
		status = fs_run(argv, env, out, outsz);
		(void)!write(p[1], out, strlen(out));
		_exit(status == -1 ? 121 : WIFEXITED(status) ?
		    WEXITSTATUS(status) : 122);
	}
	close(p[1]);
	while (len < outsz - 1 && (n = read(p[0], out + len,
	    outsz - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(p[0]);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (status == -1)
		(void)dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	return status;
}

/* A dtd of our own with the socket beside its FUSE-file device. */
static bool
fs_dtd(struct fs_ctx *fc, const char *name, char *const more[])
{
	char *extra[16], err[512];
	size_t n = 0, i;

	if (!dtt_check(dtt_dtd_init(&fc->fc_dd, name) == 0, "%s: temporary "
	    "directory", name))
		return false;
	snprintf(fc->fc_devsock, sizeof(fc->fc_devsock), "%s/dt.sock",
	    fc->fc_dd.dd_dir);
	snprintf(fc->fc_devpath, sizeof(fc->fc_devpath), "%s/nodev",
	    fc->fc_dd.dd_dir);
	extra[n++] = "--device-socket";
	extra[n++] = fc->fc_devsock;
	extra[n++] = "--no-ksyms";
	for (i = 0; more != NULL && more[i] != NULL && n < 15; i++)
		extra[n++] = more[i];
	extra[n] = NULL;
	return dtt_check(dtt_dtd_start(&fc->fc_dd, fc->fc_dtd, extra, err,
	    sizeof(err)) > 0, "%s: dtd starts with --device-socket (%s)", name,
	    err);
}

/*
 * dtd in a pid namespace of its own, the client outside: the direction
 * in which FUSE's process_vm_readv finds no caller (pid 0) and every
 * pointer-carrying ioctl fails with EFAULT.  A child enters the new
 * namespace's parent side, starts dtd there (its pid 1) and stops it when
 * told; btrace runs out here.
 */
static void
fs_dtd_pidns(struct fs_ctx *fc, const char *devvar)
{
	static char out[4096];
	struct dtt_dtd dd;
	char sock[160], ev[256], c = 0;
	char *extra[] = { "--frontend", "socket", "--device-socket", sock,
	    "--no-ksyms", NULL };
	char *bt[] = { (char *)fc->fc_btrace, "-d", fc->fc_devpath, "-e",
	    "interval:hz:100 { @n = count(); if (@n == 3) { exit(); } }",
	    NULL };
	const char *vars[3] = { devvar, ev, NULL };
	int ready[2], go[2], status, s2 = -1;
	pid_t pid;

	if (!dtt_check(dtt_dtd_init(&dd, "fesock-pidns") == 0 &&
	    pipe2(ready, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0,
	    "btrace: a directory and pipes for a dtd in a pid namespace"))
		return;
	snprintf(sock, sizeof(sock), "%s/dt.sock", dd.dd_dir);
	snprintf(ev, sizeof(ev), "USERDT_DEVICE_SOCKET=%s", sock);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(ready[0]);
		close(go[1]);
		c = unshare(CLONE_NEWPID) == 0 &&
		    dtt_dtd_start(&dd, fc->fc_dtd, extra, NULL, 0) > 0 ?
		    'r' : 'f';
		(void)!write(ready[1], &c, 1);
		(void)!read(go[0], &c, 1);
		_exit(c == 'f' || dtt_dtd_stop(&dd, SIGTERM) != 0);
	}
	close(ready[1]);
	close(go[0]);
	if (pid != -1 && read(ready[0], &c, 1) == 1 && c == 'r')
		s2 = fs_run(bt, fs_env_bare(fc->fc_lib, vars), out, sizeof(out));
	close(go[1]);
	close(ready[0]);
	status = pid == -1 ? -1 : dtt_wait(pid, DTT_EXIT_MS);
	if (pid != -1 && status == -1)
		(void)dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	dtt_check(c == 'r' && dtt_exited0(s2) && strcmp(out, "@n: 3\n") == 0,
	    "btrace: with dtd in a pid namespace of its own, btrace reads its "
	    "interval events through the socket (\"%s\")", out);
	dtt_check(dtt_exited0(status), "btrace: and that dtd exits 0 "
	    "(status %#x)", status);
	dtt_dtd_fini(&dd, true);
}

static void
fs_btrace(struct fs_ctx *fc)
{
	static char fuse[65536], sock[65536];
	char ev1[256], ev2[256], ev3[256];
	const char *vars[4];
	char *cmd = "echo hi >/dev/null; echo there >/dev/null";
	/* The predicate goes to dtd (DTIOCPRBFILTER, then DTIOCGSTATSX). */
	char *script = "syscall:write:entry /arg2 > 1/ { printf(\"%s %d\\n\", "
	    "comm, arg2); }";
	char *lf[] = { (char *)fc->fc_btrace, "-d", fc->fc_dd.dd_dev, "-l",
	    NULL };
	char *ls[] = { (char *)fc->fc_btrace, "-d", fc->fc_devpath, "-l",
	    NULL };
	char *cf[] = { (char *)fc->fc_btrace, "-d", fc->fc_dd.dd_dev, "-c",
	    cmd, "-e", script, NULL };
	char *cs[] = { (char *)fc->fc_btrace, "-d", fc->fc_devpath, "-c",
	    cmd, "-e", script, NULL };
	char *is[] = { (char *)fc->fc_btrace, "-d", fc->fc_devpath, "-e",
	    "interval:hz:100 { @n = count(); if (@n == 3) { exit(); } }",
	    NULL };
	struct stat st;
	int s1, s2;

	if (!fs_dtd(fc, "fesock-btrace", NULL))
		return;
	/* The socket is the node's twin: root's, 0600 without --group. */
	if (lstat(fc->fc_devsock, &st) == -1)
		memset(&st, 0, sizeof(st));
	dtt_check(S_ISSOCK(st.st_mode) &&
	    (st.st_mode & 07777) == 0600 && st.st_uid == 0,
	    "btrace: the device socket is root's and 0600 (%04o)",
	    (unsigned)(st.st_mode & 07777));

	snprintf(ev1, sizeof(ev1), "USERDT_SOCKET=%s", fc->fc_dd.dd_sock);
	snprintf(ev2, sizeof(ev2), "USERDT_DEVICE=%s", fc->fc_devpath);
	snprintf(ev3, sizeof(ev3), "USERDT_DEVICE_SOCKET=%s",
	    fc->fc_devsock);
	vars[0] = ev1;
	vars[1] = NULL;
	s1 = fs_run(lf, fs_env(NULL, vars), fuse, sizeof(fuse));
	vars[1] = ev2;
	vars[2] = ev3;
	vars[3] = NULL;
	s2 = fs_run(ls, fs_env_bare(fc->fc_lib, vars), sock, sizeof(sock));
	dtt_check(dtt_exited0(s1) && dtt_exited0(s2) && strlen(fuse) > 100 &&
	    strcmp(fuse, sock) == 0, "btrace: -l lists the same %zu bytes "
	    "of probes through the socket as through FUSE", strlen(fuse));

	vars[1] = NULL;
	s1 = fs_run(cf, fs_env(NULL, vars), fuse, sizeof(fuse));
	vars[1] = ev2;
	s2 = fs_run(cs, fs_env_bare(fc->fc_lib, vars), sock, sizeof(sock));
	dtt_check(dtt_exited0(s1) && strcmp(fuse, "sh 3\nsh 6\n") == 0,
	    "btrace: -c through FUSE prints the command's two writes (\"%s\")",
	    fuse);
	dtt_check(dtt_exited0(s2) && strcmp(fuse, sock) == 0,
	    "btrace: -c through the socket prints the same (\"%s\")", sock);

	/* Where FUSE's process_vm_readv cannot reach: another pid space. */
	vars[1] = ev2;
	vars[2] = ev3;
	vars[3] = NULL;
	s2 = fs_run_pidns(is, fs_env_bare(fc->fc_lib, vars), sock,
	    sizeof(sock));
	dtt_check(dtt_exited0(s2) && strcmp(sock, "@n: 3\n") == 0,
	    "btrace: from a pid namespace of its own, btrace reads interval "
	    "events through the socket (\"%s\", status %#x)", sock, s2);
	dtt_check(dtt_dtd_stop(&fc->fc_dd, SIGTERM) == 0 &&
	    access(fc->fc_devsock, F_OK) == -1 && errno == ENOENT,
	    "btrace: dtd exits 0 and removes its socket");
	dtt_dtd_fini(&fc->fc_dd, true);
	fs_dtd_pidns(fc, ev2);
}

/* As the user with the device's group: open yes, record no. */
static int
fs_group_client(void *arg)
{
	struct fs_ctx *fc = arg;
	struct udt_ds_hdr dh;
	char buf[256];
	int fd, on = 1;

	if ((fd = fs_connect(fc->fc_devsock)) == -1)
		return 10;
	if (fs_send(fd, UDT_DS_OPEN, 0, 1, O_RDONLY, NULL, 0) == -1 ||
	    fs_recv(fd, &dh, buf, sizeof(buf)) != 0 || dh.dh_error != 0)
		return 11;
	if (fs_send(fd, UDT_DS_IOCTL, 0, 2, DTIOCRECORD, &on, sizeof(on)) ==
	    -1 || fs_recv(fd, &dh, buf, sizeof(buf)) != 0)
		return 12;
	return dh.dh_error == EPERM ? 0 : 13;
}

/* As the user without the group: the socket's mode keeps them out. */
static int
fs_nogroup_client(void *arg)
{
	struct fs_ctx *fc = arg;
	int fd;

	if ((fd = fs_connect(fc->fc_devsock)) != -1)
		return 20;
	return errno == EACCES ? 0 : 21;
}

static int
fs_write_file(const char *path, const char *text)
{
	int fd, ok;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * In a user and mount namespace of the user's, /dev an empty tmpfs: the
 * user's own dtd (auto front end: it must fall back to the socket) and
 * btrace through the preload.  Returns 0 or the step that failed.
 */
static int
fs_ns_client(void *arg)
{
	struct fs_ctx *fc = arg;
	char map[64], out[4096], ev[256];
	char *extra[] = { "--frontend", "auto", "--device-socket",
	    fc->fc_devsock, "--no-ksyms", NULL };
	char *bt[] = { (char *)fc->fc_btrace, "-e", "interval:hz:100 { @n = "
	    "count(); if (@n == 3) { exit(); } }", NULL };
	const char *vars[2] = { ev, NULL };
	uid_t uid = getuid();
	gid_t gid = getgid();
	int status;

	/* Dropping root made us undumpable: /proc/self would be root's. */
	if (prctl(PR_SET_DUMPABLE, 1) == -1 ||
	    unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
		return 30;
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
	if (fs_write_file("/proc/self/uid_map", map) == -1 ||
	    fs_write_file("/proc/self/setgroups", "deny") == -1)
		return 31;
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
	if (fs_write_file("/proc/self/gid_map", map) == -1)
		return 32;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount("none", "/dev", "tmpfs", 0, "mode=0755") == -1)
		return 33;
	if (access("/dev/fuse", F_OK) == 0 || access("/dev/dt", F_OK) == 0)
		return 34;
	/* Our ids as they were: dtd and btrace run without privilege. */
	if (dtt_dtd_start(&fc->fc_dd, fc->fc_dtd, extra, NULL, 0) <= 0)
		return 35;
	snprintf(ev, sizeof(ev), "USERDT_DEVICE_SOCKET=%s", fc->fc_devsock);
	status = fs_run(bt, fs_env(fc->fc_lib, vars), out, sizeof(out));
	if (dtt_dtd_stop(&fc->fc_dd, SIGTERM) != 0)
		return 37;
	if (!dtt_exited0(status) || strcmp(out, "@n: 3\n") != 0) {
		fprintf(stderr, "fesock: btrace wrote \"%s\", status %#x\n",
		    out, status);
		return 36;
	}
	return 0;
}

static void
fs_unpriv(struct fs_ctx *fc)
{
	struct dtt_user du;
	char gid[32], *more[] = { "--group", gid, NULL };
	int r;

	if (!dtt_check(dtt_user_add(&du) == 0, "unpriv: a throwaway user"))
		return;
	snprintf(gid, sizeof(gid), "%u", (unsigned)du.du_gid);
	if (fs_dtd(fc, "fesock-group", more)) {
		r = dtt_user_run(&du, fs_group_client, fc);
		dtt_check(r == 0, "unpriv: with the device's group, a user "
		    "opens root's device through the socket and DTIOCRECORD "
		    "says EPERM, as through the node (step %d)", r);
		dtt_dtd_stop(&fc->fc_dd, SIGTERM);
		dtt_dtd_fini(&fc->fc_dd, true);
	}
	if (fs_dtd(fc, "fesock-nogroup", NULL)) {
		r = dtt_user_run(&du, fs_nogroup_client, fc);
		dtt_check(r == 0, "unpriv: without it, connecting is EACCES, "
		    "as opening the 0600 node (step %d)", r);
		dtt_dtd_stop(&fc->fc_dd, SIGTERM);
		dtt_dtd_fini(&fc->fc_dd, true);
	}

	/* The user's own directory, for their dtd's socket and files. */
	if (dtt_check(dtt_dtd_init(&fc->fc_dd, "fesock-ns") == 0 &&
	    chown(fc->fc_dd.dd_dir, du.du_uid, du.du_gid) == 0,
	    "unpriv: the user's directory")) {
		snprintf(fc->fc_devsock, sizeof(fc->fc_devsock), "%s/dt.sock",
		    fc->fc_dd.dd_dir);
		r = dtt_user_run(&du, fs_ns_client, fc);
		dtt_check(r == 0, "unpriv: in a user namespace with no "
		    "/dev/fuse, the user's dtd serves the socket alone and "
		    "btrace reads its interval events through /dev/dt "
		    "(step %d)", r);
		dtt_dtd_fini(&fc->fc_dd, true);
	}
	dtt_user_del(&du);
}

static void
fs_itest(struct fs_ctx *fc)
{
	char *extra[] = { "--frontend", "socket", "--device-socket",
	    fc->fc_devsock, "--no-ksyms", NULL };
	char ev1[256], ev2[256], pid[16];
	const char *vars[3] = { ev1, ev2, NULL };
	char *argv[] = { (char *)fc->fc_btrace, fc->fc_devpath, pid, NULL };
	pid_t p;
	int status;

	if (!dtt_check(dtt_dtd_init(&fc->fc_dd, "fesock-itest") == 0,
	    "itest: temporary directory"))
		return;
	snprintf(fc->fc_devsock, sizeof(fc->fc_devsock), "%s/dt.sock",
	    fc->fc_dd.dd_dir);
	snprintf(fc->fc_devpath, sizeof(fc->fc_devpath), "%s/nodev",
	    fc->fc_dd.dd_dir);
	extra[3] = fc->fc_devsock;
	if (!dtt_check(dtt_dtd_start(&fc->fc_dd, fc->fc_dtd, extra, NULL, 0) >
	    0, "itest: dtd --frontend socket starts"))
		goto out;
	snprintf(ev1, sizeof(ev1), "USERDT_DEVICE=%s", fc->fc_devpath);
	snprintf(ev2, sizeof(ev2), "USERDT_DEVICE_SOCKET=%s", fc->fc_devsock);
	snprintf(pid, sizeof(pid), "%d", (int)fc->fc_dd.dd_pid);
	fflush(stdout);
	/* Its lines go to our stdout, for the log. */
	p = dtt_spawn(argv, fs_env(fc->fc_lib, vars), -1, -1, -1, -1);
	status = p == -1 ? -1 : dtt_wait(p, 240000);
	if (p != -1 && status == -1)
		(void)dtt_stop(p, SIGKILL, DTT_EXIT_MS);
	dtt_check(dtt_exited0(status), "itest: dt-itest passes through "
	    "libuserdt-dev.so (status %#x)", status);
	dtt_check(dtt_dtd_stop(&fc->fc_dd, SIGTERM) == 0, "itest: dtd exits 0");
out:
	dtt_dtd_fini(&fc->fc_dd, true);
}

int
main(int argc, char *argv[])
{
	struct fs_ctx fc;

	if (argc >= 2 && strcmp(argv[1], "loop") == 0)
		return fs_loop_child(argc, argv);
	if (argc != 5) {
		fprintf(stderr, "usage: fesock_test "
		    "btrace|unpriv|stop|garbage|itest DTD LIBDEV PROGRAM\n");
		return 2;
	}
	memset(&fc, 0, sizeof(fc));
	fc.fc_self = "/proc/self/exe";
	fc.fc_dtd = argv[2];
	fc.fc_lib = argv[3];
	fc.fc_btrace = argv[4];
	if (strcmp(argv[1], "btrace") == 0)
		fs_btrace(&fc);
	else if (strcmp(argv[1], "unpriv") == 0)
		fs_unpriv(&fc);
	else if (strcmp(argv[1], "stop") == 0)
		fs_stop(&fc);
	else if (strcmp(argv[1], "garbage") == 0)
		fs_garbage(&fc);
	else if (strcmp(argv[1], "itest") == 0)
		fs_itest(&fc);
	else {
		fprintf(stderr, "fesock_test: unknown mode %s\n", argv[1]);
		return 2;
	}
	return dtt_done();
}
