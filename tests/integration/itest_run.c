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
 * dt-itest-run: the integration harness behind meson test.  Starts its
 * own dtd on a temporary directory (device, ingest socket and ksyms all
 * in it, through tests/lib/dtt), waits for its --ready-fd line, runs
 * dt-itest against it and stops dtd by pid, checking that it exits 0 and
 * leaves neither a mount nor a file behind.
 *
 *   dt-itest-run DTD DT-ITEST main     the checks, a second dtd on the
 *                                      same path, shutdown under a reader
 *   dt-itest-run DTD DT-ITEST stale    a killed dtd's mount is cleaned up,
 *                                      twice, and its file removed at the
 *                                      end; a file of root's is kept
 *   dt-itest-run DTD DT-ITEST ring16   --ring-size 16
 *
 * Every wait is bounded (poll on a pipe or a pidfd); nothing kills by
 * name.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dtt.h"

#define ITEST_MS	240000

static const char	*dtd_path, *itest_path;
static struct dtt_dtd	 dd;
static char		*device = dd.dd_dev;

/* Stop our dtd by SIGTERM; SIGKILL if it ignores that (a failure). */
static int
stop(void)
{
	pid_t pid = dd.dd_pid;
	int status;

	if ((status = dtt_dtd_stop(&dd, SIGTERM)) == -1)
		dtt_check(false, "pid %d did not exit within %d ms of SIGTERM",
		    (int)pid, DTT_EXIT_MS);
	return status;
}

/* Start dtd on device with extra options; its pid once ready, or -1. */
static pid_t
start_dtd(char *extra1, char *extra2)
{
	char *extra[] = { extra1, extra2, NULL };
	pid_t pid;

	pid = dtt_dtd_start(&dd, dtd_path, extra, NULL, 0);
	dtt_check(pid != -1, "dtd %d signalled ready", (int)pid);
	return pid;
}

/* Is path a mount point in our mount namespace? */
static bool
mounted(const char *path)
{
	char line[4096], mnt[4096];
	bool found = false;
	FILE *fp;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return true;	/* cannot tell: assume the worst */
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    strcmp(mnt, path) == 0)
			found = true;
	fclose(fp);
	return found;
}

static void
check_gone(const char *what)
{
	dtt_check(!mounted(device), "%s: no mount left on %s", what, device);
	dtt_check(access(device, F_OK) == -1 && errno == ENOENT,
	    "%s: %s removed", what, device);
}

/* The thread pid is blocked in read(2) (syscall 0) right now? */
static bool
in_read(pid_t pid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 2 && buf[0] == '0' && buf[1] == ' ';
}

/*
 * Run dt-itest with argv and wait for it; its wait status, -1 if it ran
 * out of time (then it is killed, not left behind).
 */
static int
run_itest(char *const argv[])
{
	pid_t pid;
	int status;

	if ((pid = dtt_spawn(argv, NULL, -1, -1, -1, -1)) == -1)
		return -1;
	if ((status = dtt_wait(pid, ITEST_MS)) == -1)
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	return status;
}

static void
run_main(void)
{
	char sock2[sizeof(dd.dd_dir) + 16], ksyms2[sizeof(dd.dd_dir) + 16];
	/*
	 * Its own socket and ksyms, so that only the device path can be
	 * why it refuses, and its teardown leaves the first one's alone.
	 */
	char *second[] = { (char *)dtd_path, "--foreground", "--frontend",
	    "fuse", "--device", device, "--ingest", sock2, "--ksyms", ksyms2,
	    NULL };
	char *argv[4];
	struct group *gr;
	char pidarg[16], gidarg[16], buf[256];
	struct pollfd pfd;
	int status, fds[2], i;
	ssize_t n;
	pid_t dtd, other, reader;

	snprintf(sock2, sizeof(sock2), "%s/ingest2.sock", dd.dd_dir);
	snprintf(ksyms2, sizeof(ksyms2), "%s/ksyms2", dd.dd_dir);
	gr = getgrnam("nogroup");
	snprintf(gidarg, sizeof(gidarg), "%d", gr != NULL ?
	    (int)gr->gr_gid : 65534);
	if ((dtd = start_dtd("--group", gidarg)) == -1)
		return;
	dtt_check(mounted(device), "%s is a mount point", device);

	/* A live dtd keeps its path: a second one must refuse. */
	status = -1;
	if ((other = dtt_spawn(second, NULL, -1, -1, -1, -1)) != -1 &&
	    (status = dtt_wait(other, DTT_EXIT_MS)) == -1)
		dtt_stop(other, SIGKILL, DTT_EXIT_MS);
	dtt_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0,
	    "a second dtd on the same path refuses to start (status %#x)",
	    status);

	snprintf(pidarg, sizeof(pidarg), "%d", (int)dtd);
	argv[0] = (char *)itest_path;
	argv[1] = device;
	argv[2] = pidarg;
	argv[3] = NULL;
	status = run_itest(argv);
	dtt_check(dtt_exited0(status), "dt-itest passed (status %#x)", status);

	/* Shutdown with a reader blocked in read(2). */
	if (pipe2(fds, O_CLOEXEC) == -1)
		return;
	argv[1] = "--block-read";
	argv[2] = device;
	reader = dtt_spawn(argv, NULL, -1, fds[1], -1, -1);
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	n = 0;
	if (poll(&pfd, 1, DTT_READY_MS) == 1)
		n = read(fds[0], buf, sizeof(buf) - 1);
	dtt_check(n > 0 && strncmp(buf, "reading", 7) == 0,
	    "reader opened the device");
	/* Not waitable: watch the reader enter read(2), 10 ms at a time. */
	for (i = 0; i < 500 && !in_read(reader); i++)
		poll(NULL, 0, 10);
	dtt_check(in_read(reader), "reader blocked in read(2)");
	status = stop();
	dtt_check(dtt_exited0(status), "dtd exited 0 on SIGTERM (status %#x)",
	    status);
	if ((status = dtt_wait(reader, DTT_EXIT_MS)) == -1)
		dtt_stop(reader, SIGKILL, DTT_EXIT_MS);
	n = read(fds[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	dtt_check(dtt_exited0(status), "the blocked reader got an error (%s)",
	    buf);
	close(fds[0]);
	check_gone("shutdown");
}

/*
 * Start dtd, let a client stat the device (the kernel caches its
 * attributes for an hour, so a later stat(2) of the dead mount does not
 * fail), and kill it.  The mount it leaves must answer ENOTCONN.
 */
static bool
start_and_kill(const char *what)
{
	struct stat st;

	if (start_dtd(NULL, NULL) == -1)
		return false;
	dtt_check(stat(device, &st) == 0 && st.st_dev != 0,
	    "%s: a client stats the live device", what);
	dtt_dtd_stop(&dd, SIGKILL);
	return dtt_check(open(device, O_RDONLY | O_CLOEXEC) == -1 &&
	    errno == ENOTCONN, "%s: the killed dtd left a dead mount "
	    "(ENOTCONN)", what);
}

/* The new dtd serves the device, and stops cleanly. */
static void
serve_and_stop(const char *what)
{
	struct dtioc_stat dtst;
	int fd, status;

	if (start_dtd(NULL, NULL) == -1)
		return;
	fd = dtt_open(device);
	dtt_check(fd != -1 && dtt_stats(fd, &dtst) == 0,
	    "%s: the new dtd serves the path", what);
	if (fd != -1)
		close(fd);
	status = stop();
	dtt_check(dtt_exited0(status), "%s: dtd exited 0 (status %#x)",
	    what, status);
}

static void
run_stale(void)
{
	static const char admin[] = "the administrator's\n";
	char buf[64];
	ssize_t n;
	int fd;

	/*
	 * Killed twice on one path, then started: it takes the dead mount
	 * over each time, and at its clean stop it removes the file the
	 * first dtd created, as if it had made it.
	 */
	if (!start_and_kill("first kill") || !start_and_kill("second kill"))
		return;
	serve_and_stop("after two kills");
	check_gone("after two kills");

	/* A file that was there before any dtd stays, and stays intact. */
	fd = open(device, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (!dtt_check(fd != -1 && write(fd, admin, sizeof(admin) - 1) ==
	    (ssize_t)sizeof(admin) - 1, "root's own file at %s", device))
		return;
	close(fd);
	if (!start_and_kill("root's file"))
		return;
	serve_and_stop("root's file");
	dtt_check(!mounted(device), "no mount left on %s", device);
	n = -1;
	if ((fd = open(device, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	dtt_check(n == (ssize_t)sizeof(admin) - 1 &&
	    memcmp(buf, admin, (size_t)n) == 0,
	    "root's own file is left as it was");
	unlink(device);
}

static void
run_ring16(void)
{
	char *argv[5];
	char pidarg[16];
	pid_t dtd;
	int status;

	if ((dtd = start_dtd("--ring-size", "16")) == -1)
		return;
	snprintf(pidarg, sizeof(pidarg), "%d", (int)dtd);
	argv[0] = (char *)itest_path;
	argv[1] = "--ring16";
	argv[2] = device;
	argv[3] = pidarg;
	argv[4] = NULL;
	status = run_itest(argv);
	dtt_check(dtt_exited0(status), "dt-itest --ring16 passed (status %#x)",
	    status);
	status = stop();
	dtt_check(dtt_exited0(status), "dtd exited 0 (status %#x)", status);
	check_gone("ring16");
}

int
main(int argc, char *argv[])
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4) {
		fprintf(stderr, "usage: dt-itest-run dtd dt-itest "
		    "main|stale|ring16\n");
		return 2;
	}
	dtd_path = argv[1];
	itest_path = argv[2];
	if (geteuid() != 0) {
		/* Not a skip: the suite needs root to mount FUSE. */
		fprintf(stderr, "dt-itest-run: FAIL: must run as root\n");
		return 1;
	}
	dtt_tag("harness");
	if (dtt_dtd_init(&dd, "dt-itest") == -1) {
		fprintf(stderr, "dt-itest-run: /tmp/dt-itest.XXXXXX: %s\n",
		    strerror(errno));
		return 1;
	}

	if (strcmp(argv[3], "main") == 0)
		run_main();
	else if (strcmp(argv[3], "stale") == 0)
		run_stale();
	else if (strcmp(argv[3], "ring16") == 0)
		run_ring16();
	else {
		fprintf(stderr, "dt-itest-run: unknown mode %s\n", argv[3]);
		dtt_dtd_fini(&dd, true);
		return 2;
	}
	/* Without "all": whatever dtd left behind keeps it non-empty. */
	if (dtt_dtd_fini(&dd, false) == -1)
		dtt_check(false, "%s left non-empty: %s", dd.dd_dir,
		    strerror(errno));
	return dtt_done();
}
