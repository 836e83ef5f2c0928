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
 * The launcher's helper: the process that traces the dynamic loader of
 * the launched command, and then of every image a process of its tree
 * execs, for as long as the launched process lives (udt_lrec.h has the
 * protocol, udt_ltrace.c the tracing of one image).
 *
 * The process about to exec the command stays the command (same pid,
 * parent, group and terminal): it forks the helper, which it never sees
 * again, by a double fork, so the program has no child it did not make
 * and no SIGCHLD it did not ask for.  The helper seizes it, which Yama's
 * ptrace_scope 1 allows once the tracee names it (PR_SET_PTRACER, taken
 * back before the exec so the program keeps no exception).
 *
 * Later images: a process of the tree asks, just before its execve and
 * while a syscall probe is on, on an abstract Unix socket the
 * environment names; the helper seizes the asking thread (the socket's
 * peer pid must own it, and be of our user) and answers.  A process asks
 * again before each exec, so nothing is traced between them, and forks
 * cost nothing.  Yama's scope 1 is met
 * the same way: the asker names the helper for the moment it asks.
 *
 * Said once on stderr: ptrace refused, for the launched command (by the
 * launcher) or for any later image (by the helper, once in its life).
 *
 * The helper is single-threaded: one poll over the socket, a signalfd
 * for its tracees' stops and a pidfd of the launched process; when that
 * process is gone it stops listening, lets its tracees go as their
 * loaders finish, and exits.
 */
#include <sys/poll.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_userdir.h>
#include <userdt/udt_wire.h>

#include "udt_launch.h"
#include "udt_lrec.h"
#include "udt_ltrace.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif

/* The helper's state; its one thread. */
struct udt_lh {
	const char	 *lh_prog;	/* the launcher's name, for messages */
	char		 *lh_lib;	/* the library LD_PRELOAD names */
	int		  lh_listen;	/* the socket; -1 once the root is gone */
	int		  lh_sigfd;	/* SIGCHLD: a tracee stopped */
	int		  lh_root;	/* pidfd of the launched process */
	struct udt_lt	**lh_lt;	/* tracees */
	unsigned int	  lh_n, lh_cap;
	int		  lh_refused;	/* said so already */
};

static int
udt_lh_add(struct udt_lh *lh, struct udt_lt *lt)
{
	struct udt_lt **p;
	unsigned int cap;

	if (lh->lh_n == lh->lh_cap) {
		cap = lh->lh_cap == 0 ? 8 : 2 * lh->lh_cap;
		if ((p = realloc(lh->lh_lt, cap * sizeof(*p))) == NULL)
			return -1;
		lh->lh_lt = p;
		lh->lh_cap = cap;
	}
	lh->lh_lt[lh->lh_n++] = lt;
	return 0;
}

static int
udt_lh_find(const struct udt_lh *lh, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < lh->lh_n; i++)
		if (udt_lt_pid(lh->lh_lt[i]) == pid)
			return (int)i;
	return -1;
}

static void
udt_lh_drop(struct udt_lh *lh, unsigned int i)
{
	udt_lt_free(lh->lh_lt[i]);
	lh->lh_lt[i] = lh->lh_lt[--lh->lh_n];
}

/* Seize tid and stop it once, so that its stops come here from now. */
static int
udt_lh_seize(pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, udt_lt_options()) == -1)
		return errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == -1)
		return errno;
	return 0;
}

/*
 * One question on the socket: a thread of the peer about to exec.  The
 * peer may be anyone on the machine: only one of our user is served,
 * and only about a thread of its own; one that says nothing in time is
 * dropped, so no one holds the helper up.
 */
static void
udt_lh_ask(struct udt_lh *lh)
{
	struct ucred cr;
	struct timeval tv = { 0, 200000 };
	struct udt_lt *lt;
	socklen_t len = sizeof(cr);
	int c, tid, err, ask[2];

	if ((c = accept4(lh->lh_listen, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1 ||
	    cr.uid != geteuid() ||
	    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    recv(c, ask, sizeof(ask), MSG_WAITALL) != (ssize_t)sizeof(ask)) {
		close(c);
		return;
	}
	tid = ask[0];
	if (tid <= 0 || syscall(SYS_tgkill, cr.pid, tid, 0) == -1)
		err = ESRCH;
	else if (udt_lh_find(lh, tid) >= 0)
		err = 0;	/* ours already: a launcher's own exec */
	else if ((lt = udt_lt_new(lh->lh_prog, tid,
	    (ask[1] & UDT_LFOLLOW_WANT) ? UDT_LT_FOLLOW : UDT_LT_CHECK,
	    lh->lh_lib)) == NULL)
		err = ENOMEM;
	else if (udt_lh_add(lh, lt) == -1) {
		/* Room first: a tracee seized is never one to let go. */
		udt_lt_free(lt);
		err = ENOMEM;
	} else if ((err = udt_lh_seize(tid)) != 0)
		udt_lh_drop(lh, lh->lh_n - 1);
	/*
	 * Said before the answer: the asker waits for it, so the message
	 * is on stderr before the program goes on, as the launcher's is.
	 */
	if (err != 0 && err != ESRCH && !lh->lh_refused) {
		lh->lh_refused = 1;
		fprintf(stderr, "%s: cannot trace the dynamic loader of a "
		    "program the command executes (ptrace: %s): its calls "
		    "before the preload library starts are not recorded\n",
		    lh->lh_prog, strerror(err));
	}
	(void)send(c, &err, sizeof(err), MSG_NOSIGNAL);
	close(c);
}

/* Every stop and exit waiting, each to its tracee. */
static void
udt_lh_reap(struct udt_lh *lh)
{
	unsigned long old;
	pid_t pid;
	int st, i;

	while ((pid = waitpid(-1, &st, __WALL | WNOHANG)) > 0) {
		i = udt_lh_find(lh, pid);
		/* A thread's exec made it the leader: it has the pid now. */
		if (i < 0 && WIFSTOPPED(st) &&
		    st >> 16 == PTRACE_EVENT_EXEC &&
		    ptrace(PTRACE_GETEVENTMSG, pid, 0, &old) == 0 &&
		    (i = udt_lh_find(lh, (pid_t)old)) >= 0)
			udt_lt_repid(lh->lh_lt[i], pid);
		if (i < 0)
			continue;
		if (udt_lt_stop(lh->lh_lt[i], st))
			udt_lh_drop(lh, (unsigned int)i);
	}
}

static void __attribute__((noreturn))
udt_lh_run(struct udt_lh *lh)
{
	struct pollfd pfd[3];
	struct signalfd_siginfo ssi;
	int n;

	for (;;) {
		udt_lh_reap(lh);
		if (lh->lh_listen == -1 && lh->lh_n == 0)
			break;
		pfd[0].fd = lh->lh_sigfd;
		pfd[1].fd = lh->lh_listen;
		pfd[2].fd = lh->lh_root;
		pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
		pfd[0].revents = pfd[1].revents = pfd[2].revents = 0;
		if ((n = poll(pfd, 3, -1)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents & POLLIN)
			while (read(lh->lh_sigfd, &ssi, sizeof(ssi)) > 0)
				;
		if (pfd[1].revents & POLLIN)
			udt_lh_ask(lh);
		if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			/* The launched process is gone: its tree is done. */
			close(lh->lh_root);
			lh->lh_root = -1;
			if (lh->lh_listen != -1)
				close(lh->lh_listen);
			lh->lh_listen = -1;
		}
	}
	_exit(0);
}

/*
 * The helper's start: seize the launched process when its loader is to
 * be followed, report, then serve.  sock: to the launcher; lfd: the
 * listening socket, or -1.
 */
static void __attribute__((noreturn))
udt_lh_start(int sock, pid_t pid, const char *prog, int lfd,
    const char *lib, bool follow)
{
	struct udt_lh lh;
	struct udt_lt *lt;
	sigset_t chld;
	pid_t me = getpid();
	char go;
	int err = 0;

	/*
	 * The terminal's signals are the program's: were the helper to
	 * die of them mid-way, the program would run on untraced.
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* Blocked, so a tracee's stop is queued for the signalfd. */
	sigprocmask(SIG_BLOCK, &chld, NULL);
	memset(&lh, 0, sizeof(lh));
	lh.lh_prog = prog;
	lh.lh_lib = lib != NULL ? strdup(lib) : NULL;
	lh.lh_listen = -1;
	lh.lh_root = -1;
	lt = NULL;
	if (follow && ((lt = udt_lt_new(prog, pid, UDT_LT_LAUNCH,
	    lh.lh_lib)) == NULL || udt_lh_add(&lh, lt) == -1))
		_exit(1);
	if (lfd >= 0 && listen(lfd, 64) == -1) {
		close(lfd);
		lfd = -1;
	}
	if (write(sock, &me, sizeof(me)) != (ssize_t)sizeof(me) ||
	    read(sock, &go, 1) != 1)
		_exit(1);
	if (follow)
		err = udt_lh_seize(pid);
	(void)write(sock, &err, sizeof(err));
	close(sock);
	if (err != 0)
		_exit(1);
	/*
	 * Nothing of the launcher's stays open here (a pipe a reader waits
	 * on to end, btrace's device): stderr only, for what we report, and
	 * the socket, moved next to it.
	 */
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	if (lfd >= 0 && lfd != STDERR_FILENO + 1) {
		if (dup3(lfd, STDERR_FILENO + 1, O_CLOEXEC) == -1)
			lfd = -1;
		else
			lfd = STDERR_FILENO + 1;
	}
	(void)close_range(STDERR_FILENO + 2, ~0U, 0);
	if (lfd < 0)
		(void)close(STDERR_FILENO + 1);
	lh.lh_listen = lfd;
	lh.lh_sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (lfd >= 0)
		lh.lh_root = (int)syscall(SYS_pidfd_open, pid, 0);
	if (lh.lh_sigfd == -1 || lh.lh_root == -1) {
		/* Only the launched process's loader, as a plain tracer. */
		if (lh.lh_listen != -1)
			close(lh.lh_listen);
		lh.lh_listen = -1;
		if (lh.lh_root != -1)
			close(lh.lh_root);
		lh.lh_root = -1;
		while (lt != NULL) {
			int st;
			pid_t w = waitpid(pid, &st, __WALL);

			if (w == -1 && errno == EINTR)
				continue;
			if (w == -1 || udt_lt_stop(lt, st))
				_exit(0);
		}
	}
	udt_lh_run(&lh);
}

/*
 * The socket a traced tree asks on, bound to a fresh abstract name put
 * in hex: -1 when none can be had (the launched image is traced all the
 * same).  The helper listens: a socket's peer credentials are those of
 * the process that called listen(2), which the asker checks.
 */
static int
udt_lh_listen(char *hex)
{
	struct sockaddr_un sun;
	unsigned char rnd[UDT_LFOLLOW_HEX / 2];
	socklen_t len;
	size_t i;
	int fd;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "%s%s",
	    UDT_LFOLLOW_SOCK, hex));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sun, len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether Yama wants a tracee to name its tracer (ptrace_scope 1). */
static int
udt_lh_yama(void)
{
	char c = '0';
	int fd;

	if ((fd = open("/proc/sys/kernel/yama/ptrace_scope",
	    O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/* The first entry of LD_PRELOAD: the library udt_launch_env() put. */
static char *
udt_lh_lib(void)
{
	const char *p = getenv("LD_PRELOAD");
	size_t n;
	char *lib;

	if (p == NULL)
		return NULL;
	n = strcspn(p, ": ");
	if (n == 0 || (lib = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(lib, p, n);
	lib[n] = '\0';
	return lib;
}

/*
 * Whether dtd has a probe of the syscall provider on (UDT_HELLO_STATS):
 * only then can the launched image's loader calls be recorded, and only
 * then is following them call by call (two ptrace stops a call: 3.4 ms
 * of a 5.6 ms `dtrun /bin/true` here) worth its cost.  A dtd that does
 * not answer at once, or an older one, is taken to want them.  A wrong
 * "no" only leaves the loader's calls unrecorded, and the library makes
 * the same checks of its dtd before it attaches.
 */
static bool
udt_lh_wanted(void)
{
	struct udt_hello h;
	struct udt_stats st;
	struct sockaddr_un sun;
	struct pollfd pfd;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	const char *sock = getenv(UDT_SOCKET_ENV), *said;
	bool want = true;
	int fd;

	/*
	 * A tree already told it runs untraced: by a socket not to be
	 * trusted, nothing to record; by a dtd slow to answer, no time
	 * spent asking it.
	 */
	if ((said = getenv(UDT_UNTRACED_ENV)) != NULL && *said != '\0')
		return strcmp(said, "untrusted") != 0;
	if (sock == NULL || *sock == '\0')
		sock = UDT_SOCKET_DEFAULT;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof(sun.sun_path))
		return true;
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	/* Never blocks: a full backlog or a silent dtd means "follow". */
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return true;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1)
		goto out;
	/* Another user's dtd: the library refuses it too. */
	if (cr.uid != 0 && cr.uid != geteuid()) {
		want = false;
		goto out;
	}
	memset(&h, 0, sizeof(h));
	h.uh_magic = UDT_MAGIC;
	h.uh_version = UDT_VERSION;
	h.uh_flags = UDT_HELLO_STATS;
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* dtd's accept thread answers at once (dt_ingest_dispatch()). */
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) &&
	    poll(&pfd, 1, 200) == 1 &&
	    recv(fd, &st, sizeof(st), MSG_WAITALL) == (ssize_t)sizeof(st) &&
	    st.us_magic == UDT_MAGIC)
		want = st.us_sysprobes != 0;
out:
	close(fd);
	return want;
}

int
udt_launch_trace(const char *prog, const char *file)
{
	const char *off;
	char val[64], hex[UDT_LFOLLOW_HEX + 1], *lib;
	pid_t self = getpid(), h1, h2 = -1;
	int sv[2], err = 0, st, lfd;
	bool follow;

	(void)unsetenv(UDT_LREC_ENV);
	/* An outer launcher's: this one's helper answers for our tree. */
	(void)unsetenv(UDT_LFOLLOW_ENV);
	if ((off = getenv(UDT_LAUNCH_LOADER_ENV)) != NULL &&
	    strcmp(off, "0") == 0)
		return -1;
	/*
	 * Not followed, the image is still looked at, for what runs
	 * untraced whatever is enabled later.
	 */
	if (!(follow = udt_lh_wanted()))
		udt_lt_precheck(prog, file);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		err = errno;
		goto fail;
	}
	lfd = udt_lh_listen(hex);
	/* Nothing to follow now, and no one to ask later: no helper. */
	if (!follow && lfd == -1)
		return -1;
	lib = udt_lh_lib();
	if ((h1 = fork()) == 0) {
		close(sv[0]);
		if (fork() == 0)
			udt_lh_start(sv[1], self, prog, lfd, lib, follow);
		_exit(0);
	}
	if (h1 == -1)
		err = errno;
	/* The helper's now, or no one's. */
	close(sv[1]);
	if (lfd != -1)
		close(lfd);
	free(lib);
	if (h1 == -1) {
		close(sv[0]);
		goto fail;
	}
	while (waitpid(h1, &st, 0) == -1 && errno == EINTR)
		;
	/* Set first: a tracer that seized waits for the handover it asks. */
	snprintf(val, sizeof(val), "%d", (int)self);
	if (follow && setenv(UDT_LREC_ENV, val, 1) == -1) {
		err = errno;
		close(sv[0]);
		goto fail;
	}
	if (read(sv[0], &h2, sizeof(h2)) != (ssize_t)sizeof(h2)) {
		err = ECHILD;
		close(sv[0]);
		goto fail;
	}
	/* Yama: only a named tracer may attach to a process not its child. */
	if (follow)
		(void)prctl(PR_SET_PTRACER, (unsigned long)h2, 0, 0, 0);
	if (write(sv[0], "g", 1) != 1 ||
	    read(sv[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
		err = ECHILD;
	if (follow)
		(void)prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	close(sv[0]);
	if (err != 0)
		goto fail;
	if (lfd != -1) {
		snprintf(val, sizeof(val), "%d:%s:%d", (int)h2, hex,
		    udt_lh_yama());
		(void)setenv(UDT_LFOLLOW_ENV, val, 1);
	}
	return 0;
fail:
	(void)unsetenv(UDT_LREC_ENV);
	fprintf(stderr, "%s: cannot trace the dynamic loader (ptrace: %s): "
	    "its calls before the preload library starts are not recorded\n",
	    prog, strerror(err));
	return -1;
}
