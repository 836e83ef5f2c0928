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
 * sec_trust's squat mode (sec_trust.c says what it shows): user B
 * squats the victim V's socket directory or socket, and V's traced
 * program must run untraced, say why once, and send B not a byte.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "systab.h"
#include "sec_trust.h"

/* Well under the library's wait for room in a backlog (2000 ms). */
#define SQUAT_FULL_MS	1000

/*
 * A listener of another user's on a socket: lfd bound already (by us,
 * or by the user in the child), listened on as u, counting connections
 * and bytes until stop's other end closes; it reports "CONNS BYTES" on
 * report.  With full, it keeps its backlog full (of its own connections,
 * not counted) and accepts nothing until stop: a squatter that would
 * hold a connect(2) that waits for room.  Its pid, or -1.
 */
static pid_t
squat_listener(const struct dtt_user *u, int lfd, const char *path,
    int stop, int report, int stopw, int reportr, bool full)
{
	struct pollfd pfd[2];
	struct sockaddr_un sun;
	char buf[256];
	long conns = 0, bytes = 0, own = 0;
	ssize_t n;
	pid_t pid;
	int c;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) != 0)
		return pid;
	/* Our ends only: the parent's closing stopw is our signal. */
	close(stopw);
	close(reportr);
	if (dtt_user_become(u) == -1)
		_exit(126);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (lfd == -1) {
		if ((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
		    chmod(path, 0777) == -1)
			_exit(125);
	}
	if (listen(lfd, full ? 0 : 16) == -1)
		_exit(124);
	/* Until a connect(2) that does not wait is refused for room. */
	while (full && own < 64) {
		if ((c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1)
			_exit(121);
		if (connect(c, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
			if (errno != EAGAIN)
				_exit(120);
			close(c);
			break;
		}
		own++;
	}
	if (full && (own == 0 || own == 64))
		_exit(119);
	/* Ready: whoever connects from now on is counted. */
	if (write(report, "r", 1) != 1)
		_exit(123);
	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = stop;
	pfd[1].events = POLLIN;
	if (full) {
		/* Nothing taken until stop; then whatever queued. */
		while (poll(&pfd[1], 1, -1) < 0)
			;
		if (fcntl(lfd, F_SETFL, O_NONBLOCK) == -1)
			_exit(118);
		while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) != -1) {
			if (own > 0)
				own--;
			else
				conns++;
			while ((n = read(c, buf, sizeof(buf))) > 0)
				bytes += n;
			close(c);
		}
	}
	while (!full) {
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents != 0)
			break;
		if ((c = accept(lfd, NULL, NULL)) == -1)
			continue;
		conns++;
		/* What a tracee says comes at once, before it waits for us. */
		pfd[0].fd = c;
		while (poll(pfd, 1, 300) == 1 &&
		    (n = read(c, buf, sizeof(buf))) > 0)
			bytes += n;
		pfd[0].fd = lfd;
		close(c);
	}
	n = snprintf(buf, sizeof(buf), "%ld %ld", conns, bytes);
	_exit(write(report, buf, (size_t)n) == n ? 0 : 122);
}

/* The listener's word: connections and bytes it got; -1 if none. */
static int
squat_result(pid_t pid, int stop, int report, long *conns, long *bytes)
{
	char buf[64];
	ssize_t n;

	close(stop);
	n = read(report, buf, sizeof(buf) - 1);
	dtt_wait(pid, DTT_EXIT_MS);
	close(report);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%ld %ld", conns, bytes) == 2 ? 0 : -1;
}

static struct dtt_user	sq_b;	/* squat: the other user, who attacks */

/*
 * As u: mkdir path, mode.  Where only root may make it (our 0755
 * directory), root makes it u's.
 */
static int
mkdir_as(const struct dtt_user *u, const char *path, mode_t mode,
    bool byroot)
{
	pid_t pid;

	if (byroot)
		return mkdir(path, mode) == -1 || chmod(path, mode) == -1 ||
		    chown(path, u->du_uid, u->du_gid) == -1 ? -1 : 0;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (dtt_user_become(u) == -1 || mkdir(path, mode) == -1 ||
		    chmod(path, mode) == -1)
			_exit(1);
		_exit(0);
	}
	return pid == -1 || !dtt_exited0(dtt_wait(pid, DTT_EXIT_MS)) ? -1 : 0;
}

/*
 * As V: run argv with env, stderr to errpath; the wait status, or -1.
 */
static int
run_victim(char *const argv[], char *const env[], const char *errpath)
{
	int err, status;
	pid_t pid;

	if ((err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) == -1)
		return -1;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		if (dtt_user_become(&st_user) == -1 ||
		    dup2(err, STDERR_FILENO) == -1)
			_exit(126);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(err);
	if (pid == -1)
		return -1;
	status = dtt_wait(pid, 60000);
	return status;
}

/*
 * One squatting case: B's listener on sock (bound by B unless lfd is
 * given), V runs argv with env; V's program must exit 0, say why once
 * (a line holding want), and B must get nothing (no connection when
 * noconn).
 */
static void
squat_case(const char *what, int lfd, const char *sock, char *const argv[],
    char *const env[], const char *errpath, const char *want, bool noconn,
    bool full)
{
	char line[512], c;
	long conns = -1, bytes = -1;
	int stop[2], report[2], status;
	uint64_t t0, ms;
	pid_t lpid;
	bool ok;

	if (pipe2(stop, O_CLOEXEC) == -1 || pipe2(report, O_CLOEXEC) == -1)
		return;
	lpid = squat_listener(&sq_b, lfd, sock, stop[0], report[1], stop[1],
	    report[0], full);
	close(stop[0]);
	close(report[1]);
	if (lfd != -1)
		close(lfd);
	if (!dtt_check(lpid != -1 && read(report[0], &c, 1) == 1,
	    "%s: %s listens on %s", what, sq_b.du_name, sock)) {
		close(stop[1]);
		close(report[0]);
		if (lpid > 0)
			dtt_wait(lpid, DTT_EXIT_MS);
		return;
	}
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	status = run_victim(argv, env, errpath);
	ms = (dtt_clock_ns(CLOCK_MONOTONIC) - t0) / 1000000;
	find_line(errpath, "untraced", line, sizeof(line));
	dtt_check(dtt_exited0(status), "%s: %s's program ran (status %#x)",
	    what, st_user.du_name, status);
	/*
	 * A full backlog held the start for the library's whole wait for
	 * room (UDT_HELLO_WAIT_MS, 2 s; 0.14 s without it, measured):
	 * well under it, or the wait was made.
	 */
	if (full)
		dtt_check(ms < SQUAT_FULL_MS, "%s: it did not wait for room "
		    "in %s's backlog: %llu ms (under %d)", what, sq_b.du_name,
		    (unsigned long long)ms, SQUAT_FULL_MS);
	dtt_check(count_lines(errpath, "untraced") == 1 &&
	    strstr(line, want) != NULL, "%s: it said once why it runs "
	    "untraced: \"%s\"", what, line);
	ok = squat_result(lpid, stop[1], report[0], &conns, &bytes) == 0;
	dtt_check(ok && bytes == 0 && (!noconn || conns == 0),
	    "%s: %s's listener got %ld connections, %ld bytes", what,
	    sq_b.du_name, conns, bytes);
}

/*
 * In B's directory, whose socket is sock: a launcher's word on the
 * directory (UDT_SOCKDIR_ENV, into envword, which env holds) for another
 * path, or another euid, is not taken: the library looks.  One for this
 * very path (a word gone wrong: the launcher found it fixed for V, in
 * another mount namespace or before it was loosened) spares the look,
 * and the peer is what refuses B: a connection, never a byte.  And a B
 * who keeps its backlog full does not hold V's start for the wait for
 * room: the library looks then, and the directory tells.
 */
static void
squat_words(const char *sock, const char *dir, char *const env[],
    char *envword, size_t len, char *const argv[], const char *errpath)
{
	snprintf(envword, len, "USERDT_SOCKDIR=%u:%s/v/ingest.sock",
	    (unsigned int)st_user.du_uid, dir);
	/* The last listener's name, root's to remove. */
	unlink(sock);
	squat_case("B's directory, a word for another path", -1, sock,
	    argv, env, errpath, "belongs to another user", true, false);
	snprintf(envword, len, "USERDT_SOCKDIR=%u:%s",
	    (unsigned int)sq_b.du_uid, sock);
	unlink(sock);
	squat_case("B's directory, a word for another user", -1, sock,
	    argv, env, errpath, "belongs to another user", true, false);
	snprintf(envword, len, "USERDT_SOCKDIR=%u:%s",
	    (unsigned int)st_user.du_uid, sock);
	unlink(sock);
	squat_case("B's directory, a wrong word for it", -1, sock,
	    argv, env, errpath, "another user's process", false, false);
	unlink(sock);
	squat_case("B's directory, a wrong word, B's backlog full", -1, sock,
	    argv, env, errpath, "belongs to another user", true, true);
}

/* The tracees' socket's name beside the ingest socket at path. */
static void
tracee_name(char *path, size_t len)
{
	char base[160];

	snprintf(base, sizeof(base), "%s", path);
	if (snprintf(path, len, UDT_TRACEE_FMT, base, UDT_VERSION,
	    (unsigned int)(2 * SYSTAB_COUNT)) >= (int)len)
		path[0] = '\0';
}

void
run_squat(const char *dtrun, const char *preload)
{
	struct sockaddr_un sun;
	char dir[64] = "/tmp/udt-squat.XXXXXX", bdir[128], vdir[128];
	char sdir[128];
	char sock[160], lib[128], run[128], errpath[128], tmpsq[64];
	char mod[4096], modto[128] = "";
	const char *slash;
	char envsock[200], envlib[160], envpre[160];
	char *env_lib[] = { "PATH=/usr/bin:/bin", envsock, envpre, NULL };
	char envword[300], want[300];
	int i;
	char *env_word[] = { "PATH=/usr/bin:/bin", envsock, envpre, envword,
	    NULL };
	char *env_run[] = { "PATH=/usr/bin:/bin", envlib,
	    "USERDT_LOADER=0", NULL };
	char *argv_true[] = { "/bin/true", NULL };
	char *argv_run[] = { run, "/bin/true", NULL };
	int lfd;

	tmpsq[0] = '\0';
	if (!dtt_check(dtt_user_add(&sq_b) == 0, "a second user %s",
	    sq_b.du_name))
		return;
	if (!dtt_check(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0,
	    "a directory %s", dir))
		goto out;
	snprintf(lib, sizeof(lib), "%s/libuserdt-preload.so", dir);
	snprintf(run, sizeof(run), "%s/dtrun", dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	/* The library's disassembler module lives beside it. */
	slash = strrchr(preload, '/');
	snprintf(mod, sizeof(mod), "%.*s/libuserdt-preload-cs.so",
	    slash != NULL ? (int)(slash - preload) : 1,
	    slash != NULL ? preload : ".");
	snprintf(modto, sizeof(modto), "%s/libuserdt-preload-cs.so", dir);
	if (!dtt_check(copy_file(preload, lib) == 0 &&
	    copy_file(mod, modto) == 0 &&
	    copy_file(dtrun, run) == 0, "the library, its module and dtrun "
	    "copied there"))
		goto out;
	snprintf(envpre, sizeof(envpre), "LD_PRELOAD=%s", lib);
	snprintf(envlib, sizeof(envlib), "USERDT_PRELOAD=%s", lib);

	/* B's directory, B's socket, named to V's program. */
	snprintf(bdir, sizeof(bdir), "%s/b", dir);
	snprintf(sock, sizeof(sock), "%s/ingest.sock", bdir);
	snprintf(envsock, sizeof(envsock), "USERDT_SOCKET=%s", sock);
	if (dtt_check(mkdir_as(&sq_b, bdir, 0755, true) == 0, "%s makes %s",
	    sq_b.du_name, bdir)) {
		squat_case("B's directory", -1, sock, argv_true, env_lib,
		    errpath, "belongs to another user", true, false);
		squat_words(sock, dir, env_word, envword, sizeof(envword),
		    argv_true, errpath);
	}

	/*
	 * V's directory, a socket of V's in it, but B listens on it: only
	 * the peer's credentials tell.  Then the same at the tracees' name
	 * beside it (UDT_TRACEE_FMT), where a start sends nothing: the
	 * reason names that socket.
	 */
	snprintf(vdir, sizeof(vdir), "%s/v", dir);
	if (!dtt_check(mkdir(vdir, 0700) == 0 && chown(vdir, st_user.du_uid,
	    st_user.du_gid) == 0, "%s's directory", st_user.du_name))
		goto out;
	for (i = 0; i < 2; i++) {
		snprintf(sock, sizeof(sock), "%s/ingest.sock", vdir);
		if (i)
			tracee_name(sock, sizeof(sock));
		snprintf(want, sizeof(want), "%s: another user's process",
		    sock);
		snprintf(envsock, sizeof(envsock), "USERDT_SOCKET=%s/"
		    "ingest.sock", vdir);
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(sock) < sizeof(sun.sun_path))
			memcpy(sun.sun_path, sock, strlen(sock) + 1);
		lfd = -1;
		if (dtt_check((lfd = socket(AF_UNIX, SOCK_STREAM |
		    SOCK_CLOEXEC, 0)) != -1 && bind(lfd,
		    (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
		    chown(sock, st_user.du_uid, st_user.du_gid) == 0,
		    "a socket of %s's at %s, %s to listen", st_user.du_name,
		    sock, sq_b.du_name))
			squat_case(i ? "B's listener at the tracees' name" :
			    "B's listener", lfd, sock, argv_true, env_lib,
			    errpath, want, false, false);
		else if (lfd != -1)
			close(lfd);
		unlink(sock);
	}

	/*
	 * A shared directory (root's, sticky, anyone may write, as /tmp):
	 * the directory passes, the socket in it is B's.  The one case
	 * where the library looks at the socket itself: at either name.
	 */
	snprintf(sdir, sizeof(sdir), "%s/s", dir);
	snprintf(envsock, sizeof(envsock), "USERDT_SOCKET=%s/ingest.sock",
	    sdir);
	if (dtt_check(mkdir(sdir, 0755) == 0 && chmod(sdir, 01777) == 0,
	    "a shared directory %s", sdir)) {
		for (i = 0; i < 2; i++) {
			snprintf(sock, sizeof(sock), "%s/ingest.sock", sdir);
			if (i)
				tracee_name(sock, sizeof(sock));
			snprintf(want, sizeof(want), "%s: it belongs to another "
			    "user", sock);
			squat_case(i ? "a shared directory, the tracees' name" :
			    "a shared directory", -1, sock, argv_true, env_lib,
			    errpath, want, true, false);
			unlink(sock);
		}
	}
	rmdir(sdir);

	/*
	 * dtrun as V, naming no socket, no runtime directory: its default
	 * lies in /tmp, where B made the name first.
	 */
	snprintf(tmpsq, sizeof(tmpsq), "/tmp/userdt-%u",
	    (unsigned int)st_user.du_uid);
	snprintf(sock, sizeof(sock), "%s/ingest.sock", tmpsq);
	if (dtt_check(mkdir_as(&sq_b, tmpsq, 0755, false) == 0, "%s makes %s",
	    sq_b.du_name, tmpsq))
		squat_case("dtrun's default", -1, sock, argv_run, env_run,
		    errpath, "dtrun: ", true, false);
out:
	if (tmpsq[0] != '\0') {
		unlink(sock);
		rmdir(tmpsq);
	}
	if (strchr(dir, 'X') == NULL) {
		snprintf(sock, sizeof(sock), "%s/b/ingest.sock", dir);
		unlink(sock);
		snprintf(sock, sizeof(sock), "%s/v/ingest.sock", dir);
		unlink(sock);
		rmdir(bdir);
		rmdir(vdir);
		unlink(lib);
		unlink(modto);
		unlink(run);
		unlink(errpath);
		rmdir(dir);
	}
	dtt_user_del(&sq_b);
}
