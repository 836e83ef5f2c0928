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
 * own dtd on a temporary device path, waits for its --ready-fd line,
 * runs dt-itest against it and stops dtd by pid, checking that it exits
 * 0 and leaves neither a mount nor the file behind.
 *
 *   dt-itest-run DTD DT-ITEST main     the checks, a second dtd on the
 *                                      same path, shutdown under a reader
 *   dt-itest-run DTD DT-ITEST stale    a killed dtd's mount is cleaned up
 *   dt-itest-run DTD DT-ITEST ring16   --ring-size 16
 *
 * Every wait is bounded (poll on a pipe or a pidfd); nothing kills by
 * name.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#define READY_MS	20000
#define EXIT_MS		20000
#define ITEST_MS	240000

static unsigned int	npass, nfail;
static const char	*dtd_path, *itest_path;
static char		 tmpdir[64], device[128];

static bool __attribute__((format(printf, 2, 3)))
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - harness: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
	return ok;
}

static pid_t
spawn(char *const argv[], int keepfd, int outfd)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (keepfd != -1)
			fcntl(keepfd, F_SETFD, 0);
		if (outfd != -1)
			dup2(outfd, STDOUT_FILENO);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Wait up to ms for pid to exit; its wait status, or -1 on timeout. */
static int
wait_exit(pid_t pid, int ms)
{
	struct pollfd pfd;
	int pidfd, status;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd != -1) {
		pfd.fd = pidfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, ms) != 1) {
			close(pidfd);
			return -1;
		}
		close(pidfd);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Stop pid by SIGTERM; SIGKILL if it ignores that (a failure). */
static int
stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	status = wait_exit(pid, EXIT_MS);
	if (status == -1) {
		check(false, "pid %d did not exit within %d ms of SIGTERM",
		    (int)pid, EXIT_MS);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	return status;
}

/* Start dtd on device with extra options; its pid once ready, or -1. */
static pid_t
start_dtd(const char *extra1, const char *extra2)
{
	char fdarg[16];
	char *argv[16];
	struct pollfd pfd;
	char buf[16];
	int fds[2], n = 0, status;
	ssize_t len;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
	argv[n++] = (char *)dtd_path;
	argv[n++] = "--foreground";
	argv[n++] = "--frontend";
	argv[n++] = "fuse";
	argv[n++] = "--device";
	argv[n++] = device;
	argv[n++] = "--ready-fd";
	argv[n++] = fdarg;
	if (extra1 != NULL)
		argv[n++] = (char *)extra1;
	if (extra2 != NULL)
		argv[n++] = (char *)extra2;
	argv[n] = NULL;
	pid = spawn(argv, fds[1], -1);
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	len = 0;
	if (poll(&pfd, 1, READY_MS) == 1)
		len = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	if (!check(len == 6 && memcmp(buf, "ready\n", 6) == 0,
	    "dtd %d signalled ready", (int)pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
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

static bool
exited0(int status)
{
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
check_gone(const char *what)
{
	check(!mounted(device), "%s: no mount left on %s", what, device);
	check(access(device, F_OK) == -1 && errno == ENOENT,
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

static void
run_main(void)
{
	char *second[] = { (char *)dtd_path, "--foreground", "--frontend",
	    "fuse", "--device", device, NULL };
	char *argv[4];
	struct group *gr;
	char pidarg[16], gidarg[16], buf[256];
	struct pollfd pfd;
	int status, fds[2], i;
	ssize_t n;
	pid_t dtd, other, reader;

	gr = getgrnam("nogroup");
	snprintf(gidarg, sizeof(gidarg), "%d", gr != NULL ?
	    (int)gr->gr_gid : 65534);
	if ((dtd = start_dtd("--group", gidarg)) == -1)
		return;
	check(mounted(device), "%s is a mount point", device);

	/* A live dtd keeps its path: a second one must refuse. */
	other = spawn(second, -1, -1);
	status = wait_exit(other, EXIT_MS);
	check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0,
	    "a second dtd on the same path refuses to start (status %#x)",
	    status);
	if (status == -1) {
		kill(other, SIGKILL);
		waitpid(other, &status, 0);
	}

	snprintf(pidarg, sizeof(pidarg), "%d", (int)dtd);
	argv[0] = (char *)itest_path;
	argv[1] = device;
	argv[2] = pidarg;
	argv[3] = NULL;
	status = wait_exit(spawn(argv, -1, -1), ITEST_MS);
	check(exited0(status), "dt-itest passed (status %#x)", status);

	/* Shutdown with a reader blocked in read(2). */
	if (pipe2(fds, O_CLOEXEC) == -1)
		return;
	argv[1] = "--block-read";
	argv[2] = device;
	reader = spawn(argv, -1, fds[1]);
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	n = 0;
	if (poll(&pfd, 1, READY_MS) == 1)
		n = read(fds[0], buf, sizeof(buf) - 1);
	check(n > 0 && strncmp(buf, "reading", 7) == 0,
	    "reader opened the device");
	/* Not waitable: watch the reader enter read(2), 10 ms at a time. */
	for (i = 0; i < 500 && !in_read(reader); i++)
		poll(NULL, 0, 10);
	check(in_read(reader), "reader blocked in read(2)");
	status = stop(dtd);
	check(exited0(status), "dtd exited 0 on SIGTERM (status %#x)",
	    status);
	status = wait_exit(reader, EXIT_MS);
	n = read(fds[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	check(exited0(status), "the blocked reader got an error (%s)", buf);
	if (status == -1) {
		kill(reader, SIGKILL);
		waitpid(reader, &status, 0);
	}
	close(fds[0]);
	check_gone("shutdown");
}

static void
run_stale(void)
{
	struct dtioc_stat dtst;
	struct stat st;
	pid_t dtd;
	int fd, status;

	if ((dtd = start_dtd(NULL, NULL)) == -1)
		return;
	kill(dtd, SIGKILL);
	waitpid(dtd, &status, 0);
	check(stat(device, &st) == -1 && errno == ENOTCONN,
	    "a killed dtd leaves a dead mount (ENOTCONN)");
	if ((dtd = start_dtd(NULL, NULL)) == -1)
		return;
	fd = open(device, O_RDONLY | O_CLOEXEC);
	check(fd != -1 && ioctl(fd, DTIOCGSTATS, &dtst) == 0,
	    "the new dtd serves the path");
	if (fd != -1)
		close(fd);
	status = stop(dtd);
	check(exited0(status), "dtd exited 0 (status %#x)", status);
	check(!mounted(device), "no mount left on %s", device);
	/* The killed dtd created the file; the new one found it there. */
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
	status = wait_exit(spawn(argv, -1, -1), ITEST_MS);
	check(exited0(status), "dt-itest --ring16 passed (status %#x)",
	    status);
	status = stop(dtd);
	check(exited0(status), "dtd exited 0 (status %#x)", status);
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
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dt-itest.XXXXXX");
	if (mkdtemp(tmpdir) == NULL || chmod(tmpdir, 0755) == -1) {
		fprintf(stderr, "dt-itest-run: %s: %s\n", tmpdir,
		    strerror(errno));
		return 1;
	}
	snprintf(device, sizeof(device), "%s/dt", tmpdir);

	if (strcmp(argv[3], "main") == 0)
		run_main();
	else if (strcmp(argv[3], "stale") == 0)
		run_stale();
	else if (strcmp(argv[3], "ring16") == 0)
		run_ring16();
	else {
		fprintf(stderr, "dt-itest-run: unknown mode %s\n", argv[3]);
		return 2;
	}
	if (rmdir(tmpdir) == -1)
		check(false, "%s left non-empty: %s", tmpdir, strerror(errno));
	printf("%u passed, %u failed\n", npass, nfail);
	return nfail == 0 && npass > 0 ? 0 : 1;
}
