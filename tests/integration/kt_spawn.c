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
 * A dynamically linked starter of another program, as shells and
 * libraries start them (ksysarm_test.c):
 *   kt_spawn N vfork PROG ARGS...	N getppid(2) calls, then PROG from a
 *					vfork(2) child, waited for
 *   kt_spawn N spawn PROG ARGS...	the same through posix_spawn(3)
 *					(glibc's: clone(CLONE_VM|CLONE_VFORK))
 *   kt_spawn N spawnr PROG ARGS...	the same with POSIX_SPAWN_RESETIDS:
 *					a set-id copy's child gives up its
 *					effective ids before its exec
 *   kt_spawn N ask PID			N getppid(2) calls, then, as a
 *					launcher's helper would, asks the dtd
 *					at $USERDT_SOCKET (UDT_HELLO_KARM)
 *					for a child of its own (this dynamic
 *					image, in the tree), for PID (outside
 *					it), and for a child of two threads,
 *					each held at a ptrace stop; says
 *					"asked E1 E2 E3", the errnos
 *   kt_spawn N kids K STATIC		N getppid(2) calls, K children that
 *					wait, then an exec of "STATIC 1000
 *					wait"; one more child, once that
 *					runs (its "done"), execs "STATIC
 *					500": a child forked before its
 *					parent's static exec, one of more
 *					than dtd keeps (dt_tp_ksysarm.c)
 *   kt_spawn N egid			N getppid(2) calls, then says "egid
 *					E" (getegid(2)): a copy of this
 *					made set-gid runs so
 *   kt_spawn N askid SETID GID	N getppid(2) calls, then holds a
 *					child at its exec of "SETID 30 egid"
 *					(a copy set-gid to GID: a root
 *					tracer's tracee gets its group), the
 *					child's ids 65534 (GID a
 *					supplementary group, to run it), and
 *					asks the dtd at $USERDT_SOCKET for it
 *					twice, as uid and gid 65534 (its
 *					saved uid still root's), where only
 *					the child's set-id group differs,
 *					then as root again; says "asked E1
 *					E2", the errnos, once the child has
 *					run
 * Exits 0, or 1 when the start or PROG failed.
 */
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

extern char **environ;

/* dtd's errno for a UDT_HELLO_KARM naming pid, -1: no answer. */
static int
ask(pid_t pid)
{
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;
	struct udt_maps_hdr h;
	struct sockaddr_un sun;
	struct timeval tv = { 5, 0 };
	const char *path = getenv("USERDT_SOCKET");
	int fd, rv = -1;

	if (path == NULL || strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memset(&q, 0, sizeof(q));
	q.h.uh_magic = UDT_MAGIC;
	q.h.uh_version = UDT_VERSION;
	q.h.uh_flags = UDT_HELLO_KARM;
	q.r.umr_pid = pid;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
	    write(fd, &q, sizeof(q)) == (ssize_t)sizeof(q) &&
	    recv(fd, &h, sizeof(h), MSG_WAITALL) == (ssize_t)sizeof(h) &&
	    h.umh_magic == UDT_MAGIC && h.umh_count == 0)
		rv = (int)h.umh_error;
	close(fd);
	return rv;
}

static void *
idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* pid stopped under our ptrace, asked about, let go: the answer. */
static int
hold_ask(pid_t pid)
{
	int st, e = -1;

	if (ptrace(PTRACE_ATTACH, pid, 0, 0) == -1)
		return -1;
	if (waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st))
		e = ask(pid);
	(void)ptrace(PTRACE_DETACH, pid, 0, 0);
	return e;
}

/*
 * A child of ours, held by us at its exec of "setid 30 egid", asked
 * about as uid 65534, then as root; the answers in e, the child let go
 * and reaped.  -1 when it could not be held so.
 */
static int
setid_ask(const char *setid, gid_t gid, int e[2])
{
	pid_t pid;
	int st, rv = -1;

	if ((pid = fork()) == 0) {
		/*
		 * Not followed by the launcher's helper: we trace it.  Its
		 * ids the asker's, so that only the group its exec sets
		 * differs: a refusal is the set-id rule's, not a stranger's
		 * uid.  The copy's group among its groups, to execute it
		 * (mode 02710).
		 */
		(void)unsetenv("USERDT_LTRACER");
		if (setgroups(1, &gid) == -1 ||
		    setresgid(65534, 65534, 65534) == -1 ||
		    setresuid(65534, 65534, 65534) == -1 ||
		    ptrace(PTRACE_TRACEME, 0, 0, 0) == -1 ||
		    raise(SIGSTOP) != 0)
			_exit(1);
		execl(setid, setid, "30", "egid", (char *)NULL);
		_exit(127);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXEC) == -1 ||
	    ptrace(PTRACE_CONT, pid, 0, 0) == -1 ||
	    waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
	    st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
		goto out;
	/*
	 * Raw calls, this thread's credentials alone (libc's wrappers
	 * would signal every thread): the peer credentials dtd reads are
	 * those of the thread that connects, this one.  The saved uid
	 * stays root's, to come back.
	 */
	if (syscall(SYS_setresgid, 65534, 65534, 0) == -1 ||
	    syscall(SYS_setresuid, 65534, 65534, 0) == -1)
		goto out;
	e[0] = ask(pid);
	if (syscall(SYS_setresuid, 0, 0, 0) == -1 ||
	    syscall(SYS_setresgid, 0, 0, 0) == -1)
		_exit(1);	/* not root again: nothing of ours to run */
	e[1] = ask(pid);
	rv = 0;
out:
	(void)ptrace(PTRACE_DETACH, pid, 0, 0);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		rv = -1;
	return rv;
}

int
main(int argc, char *argv[])
{
	long n, i;
	pid_t pid;
	int st;

	if (argc < 3 || (argc < 4 && strcmp(argv[2], "egid") != 0))
		return 2;
	n = atol(argv[1]);
	for (i = 0; i < n; i++)
		(void)getppid();
	if (strcmp(argv[2], "egid") == 0) {
		char buf[64];
		int len;

		len = snprintf(buf, sizeof(buf), "egid %d\n", (int)getegid());
		return write(1, buf, (size_t)len) == len ? 0 : 1;
	} else if (strcmp(argv[2], "askid") == 0) {
		char buf[64];
		int len, e[2] = { -2, -2 };

		if (argc != 5 || setid_ask(argv[3], (gid_t)atol(argv[4]),
		    e) == -1)
			return 1;
		len = snprintf(buf, sizeof(buf), "asked %d %d\n", e[0], e[1]);
		return write(1, buf, (size_t)len) == len ? 0 : 1;
	} else if (strcmp(argv[2], "vfork") == 0) {
		if ((pid = vfork()) == 0) {
			execv(argv[3], argv + 3);
			_exit(127);
		}
	} else if (strcmp(argv[2], "spawn") == 0 ||
	    strcmp(argv[2], "spawnr") == 0) {
		posix_spawnattr_t at;

		if (posix_spawnattr_init(&at) != 0 ||
		    (argv[2][5] == 'r' && posix_spawnattr_setflags(&at,
		    POSIX_SPAWN_RESETIDS) != 0) ||
		    posix_spawn(&pid, argv[3], NULL, &at, argv + 3,
		    environ) != 0)
			return 1;
		(void)posix_spawnattr_destroy(&at);
	} else if (strcmp(argv[2], "ask") == 0) {
		char buf[64], c;
		int e1, e2, e3 = -1, len, fds[2];
		pthread_t t;
		pid_t two;

		if ((pid = fork()) == 0)
			for (;;)
				pause();
		if (pid == -1 || pipe(fds) == -1)
			return 1;
		e1 = hold_ask(pid);
		e2 = hold_ask((pid_t)atol(argv[3]));
		/* its second thread there before it says a byte */
		if ((two = fork()) == 0) {
			if (pthread_create(&t, NULL, idle, NULL) != 0 ||
			    write(fds[1], "t", 1) != 1)
				_exit(1);
			idle(NULL);
		}
		close(fds[1]);
		if (two != -1 && read(fds[0], &c, 1) == 1)
			e3 = hold_ask(two);
		kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		if (two != -1) {
			kill(two, SIGKILL);
			(void)waitpid(two, NULL, 0);
		}
		/* one write: btrace's output may interleave lines */
		len = snprintf(buf, sizeof(buf), "asked %d %d %d\n", e1, e2,
		    e3);
		return write(1, buf, (size_t)len) == len ? 0 : 1;
	} else if (strcmp(argv[2], "kids") == 0 && argc == 5) {
		int hold[2], in[2], out[2];
		char c, buf[8];

		if (pipe(hold) == -1 || pipe(in) == -1 || pipe(out) == -1)
			return 1;
		/* alive at the exec: on the list of its children then */
		for (i = atol(argv[3]); i > 0; i--) {
			if ((pid = fork()) == 0) {
				close(hold[1]);
				close(in[1]);
				close(out[0]);
				while (read(hold[0], &c, 1) > 0)
					continue;
				_exit(0);
			}
			if (pid == -1)
				return 1;
		}
		if ((pid = fork()) == 0) {
			/* the holders go at this exec; the parent at its end */
			(void)fcntl(hold[1], F_SETFD, FD_CLOEXEC);
			close(in[0]);
			close(out[1]);
			if (write(in[1], "x", 1) != 1 ||
			    read(out[0], buf, 5) != 5)
				_exit(1);
			close(out[0]);
			execl(argv[4], argv[4], "500", (char *)NULL);
			_exit(127);
		}
		if (pid == -1 || dup2(in[0], 0) == -1 || dup2(out[1], 1) == -1)
			return 1;
		close(hold[0]);
		close(hold[1]);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(argv[4], argv[4], "1000", "wait", (char *)NULL);
		return 1;
	} else
		return 2;
	if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}
