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
 * Throwaway users for tests that attack dtd as an ordinary user: a fresh
 * name each run (no clash with a user left by a killed run, nor with
 * another test running at the same time), made with useradd and removed
 * with userdel, so nothing on the machine is borrowed or changed for
 * good.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"

/* Run a shadow-utils tool quietly; 0 when it exited 0. */
static int
dtt_user_tool(char *const argv[])
{
	int devnull, status;
	pid_t pid;

	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid = dtt_spawn(argv, NULL, -1, devnull, devnull, -1);
	if (devnull != -1)
		close(devnull);
	if (pid == -1)
		return -1;
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (!dtt_exited0(status)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
dtt_user_add(struct dtt_user *du)
{
	char *argv[] = { "/usr/sbin/useradd", "-M", "-U", "-s",
	    "/usr/sbin/nologin", "-d", "/nonexistent", du->du_name, NULL };
	struct passwd *pw;
	unsigned int r;
	int fd;

	memset(du, 0, sizeof(*du));
	/* Random, so two runs never pick the same name. */
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd == -1 || read(fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	snprintf(du->du_name, sizeof(du->du_name), "udt%08x", r);
	if (dtt_user_tool(argv) == -1) {
		du->du_name[0] = '\0';
		return -1;
	}
	if ((pw = getpwnam(du->du_name)) == NULL) {
		dtt_user_del(du);
		errno = ENOENT;
		return -1;
	}
	du->du_uid = pw->pw_uid;
	du->du_gid = pw->pw_gid;
	return 0;
}

void
dtt_user_del(struct dtt_user *du)
{
	char *argv[] = { "/usr/sbin/userdel", du->du_name, NULL };

	if (du->du_name[0] == '\0')
		return;
	(void)dtt_user_tool(argv);
	du->du_name[0] = '\0';
}

int
dtt_user_become(const struct dtt_user *du)
{
	if (setgroups(0, NULL) == -1 || setgid(du->du_gid) == -1 ||
	    setuid(du->du_uid) == -1)
		return -1;
	/* No way back: a test that thinks it dropped root must have. */
	if (setuid(0) != -1) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
dtt_user_run(const struct dtt_user *du, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (dtt_user_become(du) == -1)
			_exit(255);
		_exit(fn(arg) & 0xff);
	}
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
		return -1;
	return WEXITSTATUS(status);
}
