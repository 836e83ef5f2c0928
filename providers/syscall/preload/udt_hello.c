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
 * The handshake with dtd (udt_hello.h): who it is, that it answers, and
 * what it hands over, the ring, the table and its look at the process;
 * and, once, telling the user why a process runs untraced.
 *
 * Raw system calls only but in udt_tell_untraced(): attach runs in fork
 * children and in signal handlers.
 */
#include <sys/types.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <userdt/udt_userdir.h>

#include "udt_preload.h"
#include "udt_hello.h"
#include "udt_sys.h"
#include "systab.h"
#include "udt_rw_plan.h"
#include "udt_cat.h"

struct sockaddr_un	 udt_sun;
int			 udt_sun_ok;
struct sockaddr_un	 udt_sunt;
int			 udt_sunt_ok;
uid_t			 udt_sun_fixed = (uid_t)-1;
/* The constructor's first attach, which takes dtd's status look. [w] */
int			 udt_ctor_status;

/*
 * The handshake's three descriptors: one close_range(2) when they are
 * lo..lo + 2 (no gap below them: the usual case), else one close each.
 */
static void
udt_close3(int a, int b, int c)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	lo = c < lo ? c : lo;
	hi = c > hi ? c : hi;
	if (lo >= 0 && hi - lo == 2 && a != b && b != c && a != c &&
	    (udt_close_defer(lo, hi) == 0 ||
	    udt_sys3(SYS_close_range, lo, hi, 0) == 0))
		return;
	udt_close(a);
	udt_close(b);
	udt_close(c);
}

/*
 * Why the last handshake failed, when that is worth telling the user
 * (udt_init() does, once): someone else's socket, a dtd that does not
 * answer.  NULL when dtd is simply absent (no socket, nobody listening):
 * the program runs on and a dtd started later pulls it in.  [a]
 */
static const char	*udt_untraced;		/* [a] the reason, a sentence */
static const char	*udt_untraced_word;	/* [a] for UDT_UNTRACED_ENV */
/* The socket the last handshake tried: its path goes with the reason. */
static const struct sockaddr_un *udt_sun_tried;	/* [a] */
/*
 * dtd did not answer a handshake, here or in an image before us (the
 * environment says so): look at its state before waiting, and wait only
 * UDT_HELLO_FIRST_MS, so a stopped dtd costs each exec and fork a look
 * at /proc, not the whole wait.  Cleared when a handshake succeeds.
 */
int			 udt_dtd_slow;		/* [a] */
/*
 * The euid the constructor's status read said, for its own handshake
 * alone; (uid_t)-1 otherwise.  The constructor's thread.  [w]
 */
uid_t			 udt_ctor_euid = (uid_t)-1;

#define UDT_HELLO_FIRST_MS	100	/* a dtd that runs answers in it */
#define UDT_HELLO_WAIT_MS	2000	/* a busy one, at most */

static void
udt_untraced_set(const char *why, const char *word)
{
	__atomic_store_n(&udt_untraced, why, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_untraced_word, word, __ATOMIC_RELAXED);
}

static uint64_t
udt_now_ms(void)
{
	struct timespec ts;

	if (udt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Whether process pid is stopped or dead (/proc/PID/stat's state T, t,
 * Z or X): a dtd in that state queues connections and never answers.
 * 0 when it runs or cannot be looked at (another pid namespace, hidepid).
 */
static int
udt_pid_stopped(pid_t pid)
{
	char path[32], buf[512];
	long fd, len;
	size_t n;
	char *p;

	if (pid <= 0)
		return 0;
	n = udt_cat(path, 0, sizeof(path), "/proc/");
	n = udt_catu(path, n, sizeof(path), (unsigned long)pid);
	if (udt_cat(path, n, sizeof(path), "/stat") == (size_t)-1)
		return 0;
	fd = udt_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	len = udt_sys3(SYS_read, fd, buf, sizeof(buf) - 1);
	udt_sys1(SYS_close, fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	/* The comm may hold anything, ")" too: the state follows the last. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2] == 'T' || p[2] == 't' || p[2] == 'Z' || p[2] == 'X';
}

/*
 * The word names the euid and the path it was said for: a process that
 * became another user, or a program that pointed its children at
 * another socket, finds no match and looks as without.
 */
void
udt_sun_fixed_init(void)
{
	const char *w = getenv(UDT_SOCKDIR_ENV);
	unsigned long uid = 0;
	const char *p;

	udt_sun_fixed = (uid_t)-1;
	/* A set-id exec's environment is its caller's word, not ours. */
	if (w == NULL || !udt_sun_ok || getauxval(AT_SECURE) != 0)
		return;
	for (p = w; *p >= '0' && *p <= '9' && uid <= 0xffffffffUL; p++)
		uid = uid * 10 + (unsigned long)(*p - '0');
	if (p == w || *p != ':' || uid >= 0xffffffffUL ||
	    strcmp(p + 1, udt_sun.sun_path) != 0)
		return;
	udt_sun_fixed = (uid_t)uid;
}

/*
 * Whether the socket at sun (udt_sun's, or the tracees' beside it), and
 * its directory, are ours or root's (udt_user_distrust()): 0; -1 when
 * the directory is not, or cannot be looked at; -2 when the socket in
 * it is not, or is not there.  The reason is set where there is one to
 * tell, not for what is missing (a missing socket in a directory only
 * we or root may write: the connect says so).  With word, the
 * launcher's word for uid (udt_sun_fixed, said of the directory both
 * sockets share) is taken and nothing looked at.  *dst holds the
 * directory's look when *dirdone says it was made (by a call for the
 * other socket), and is made and said there otherwise.
 */
static int
udt_sock_trusted(const struct sockaddr_un *sun, uid_t uid, int word,
    struct stat *dst, int *dirdone)
{
	char dir[sizeof(udt_sun.sun_path)];
	struct stat sst;
	const char *why;
	char *slash;

	/*
	 * The launcher found no one else can change the directory
	 * (UDT_SOCKDIR_ENV): what this look would find, short of a change
	 * by us or root.  The peer is checked all the same.
	 */
	if (word && uid == udt_sun_fixed)
		return 0;
	if (!*dirdone) {
		memcpy(dir, sun->sun_path, sizeof(dir));
		if ((slash = strrchr(dir, '/')) == NULL)
			memcpy(dir, ".", 2);
		else if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
		if (udt_sys4(SYS_newfstatat, AT_FDCWD, dir, dst,
		    AT_SYMLINK_NOFOLLOW) != 0)
			return -1;
		if ((why = udt_user_distrust(dst, NULL, uid)) != NULL) {
			udt_untraced_set(why, "untrusted");
			return -1;
		}
		*dirdone = 1;
	}
	/*
	 * A directory of ours or root's that no one else may write holds
	 * only what we or root put there: the socket needs no look of its
	 * own (the default /run/userdt, $XDG_RUNTIME_DIR/userdt), and who
	 * listens on it the peer's credentials tell.  A shared one (a
	 * sticky /tmp) may hold another user's.
	 */
	if ((dst->st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 0;
	if (udt_sys4(SYS_newfstatat, AT_FDCWD, sun->sun_path, &sst,
	    AT_SYMLINK_NOFOLLOW) != 0)
		return -2;
	if ((why = udt_user_distrust(dst, &sst, uid)) != NULL) {
		udt_untraced_set(why, "untrusted");
		return -2;
	}
	return 0;
}

/*
 * Wait for dtd's welcome on fd, dtd being pid: 0 when it came, -1 (the
 * reason set) when dtd is stopped or did not answer in time.  A dtd that
 * runs answers at once; one that was stopped (SIGSTOP, a debugger) or
 * died with its threads stuck accepts into the backlog and never
 * answers, which a look at its state tells in far less than the wait.
 */
static int
udt_await(long fd, pid_t pid)
{
	struct pollfd pfd = { (int)fd, POLLIN, 0 };
	uint64_t t0, now;
	int slow = __atomic_load_n(&udt_dtd_slow, __ATOMIC_RELAXED);
	int looked = 0, limit = slow ? UDT_HELLO_FIRST_MS : UDT_HELLO_WAIT_MS;
	long n;

	/*
	 * A dtd that runs answers within the first wait: no clock read
	 * (a system call) for it; the whole wait may be that much longer.
	 */
	if (!slow) {
		n = udt_sys3(SYS_poll, &pfd, 1, UDT_HELLO_FIRST_MS);
		if (n > 0)
			return 0;
		if (n < 0 && n != -EINTR)
			goto noanswer;
		if (n == 0 && !looked++ && udt_pid_stopped(pid))
			goto stopped;
	}
	t0 = udt_now_ms();
	for (;;) {
		if (slow && !looked++ && udt_pid_stopped(pid))
			break;
		now = udt_now_ms();
		if (now - t0 >= (uint64_t)limit)
			goto noanswer;
		n = udt_sys3(SYS_poll, &pfd, 1, !looked &&
		    now - t0 < UDT_HELLO_FIRST_MS ?
		    UDT_HELLO_FIRST_MS - (now - t0) : limit - (now - t0));
		if (n > 0)
			return 0;
		if (n < 0 && n != -EINTR)
			goto noanswer;
		if (n == 0 && !looked++ && udt_pid_stopped(pid))
			break;
	}
stopped:
	udt_untraced_set("dtd is stopped, its socket queues and never "
	    "answers", "stopped");
	__atomic_store_n(&udt_dtd_slow, 1, __ATOMIC_RELAXED);
	return -1;
noanswer:
	udt_untraced_set("dtd did not answer", "noanswer");
	__atomic_store_n(&udt_dtd_slow, 1, __ATOMIC_RELAXED);
	return -1;
}

/*
 * The first half of a handshake at sun: the looks, the connection, the
 * peer's credentials and, where hello_on is set, the hello.  0 with *fdp
 * the socket, dtd's pid in *peerp, the welcome now on its way; -1
 * otherwise, every descriptor closed but where sun has nothing for us
 * (no socket, no listener, one not ours in a shared directory): then
 * *backp is set and *fdp left open for another connect, the reason (if
 * any) set.  *fdp is a socket to connect (-1: make one); *dirp the
 * directory's look and *dirdone whether it was made
 * (udt_sock_trusted()).
 */
static int
udt_connect_open(const struct sockaddr_un *sun, int hello_on, long *fdp,
    struct stat *dirp, int *dirdone, int *backp, pid_t *peerp)
{
	struct udt_hello hello = {
		UDT_MAGIC, UDT_VERSION, 2 * SYSTAB_COUNT, UDT_HELLO_TRACEE
	};
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	uid_t uid = udt_ctor_euid != (uid_t)-1 ? udt_ctor_euid :
	    (uid_t)udt_sys0(SYS_geteuid);
	struct timeval tv;
	long fd = *fdp, n;
	int ms, r;

	*fdp = -1;
	__atomic_store_n(&udt_sun_tried, sun, __ATOMIC_RELAXED);
	if ((r = udt_sock_trusted(sun, uid, 1, dirp, dirdone)) != 0) {
		if (r == -2 && backp != NULL) {
			*backp = 1;
			*fdp = fd;
			return -1;
		}
		udt_close(fd);
		return -1;
	}
	/*
	 * First without waiting: a dtd with room in its backlog takes the
	 * connection at once, and nothing else on this socket can block
	 * (the hello is 16 bytes into an empty buffer, the welcome is
	 * polled for and read with MSG_DONTWAIT).
	 */
	if (fd < 0 && (fd = udt_sys3(SYS_socket, AF_UNIX, SOCK_STREAM |
	    SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return -1;
	n = udt_sys3(SYS_connect, fd, sun, sizeof(*sun));
	/* A failed connect leaves the socket as it was: connect it again. */
	if ((n == -ENOENT || n == -ECONNREFUSED) && backp != NULL) {
		*backp = 1;
		*fdp = fd;
		return -1;
	}
	if (n == -EAGAIN) {
		/*
		 * dtd's backlog is full: a burst of tracees (a program
		 * forking hundreds at once) waits its turn, a stopped
		 * dtd's full queue costs the wait once, then a short one.
		 * connect(2) on a blocking socket waits that long at most.
		 * Not for a listener the launcher's word let us skip the
		 * look at (a wrong word: another user's squatter, who may
		 * keep its backlog full to hold every start we make): the
		 * look first, one stat, on a full backlog only.
		 */
		udt_sys1(SYS_close, fd);
		if (uid == udt_sun_fixed &&
		    udt_sock_trusted(sun, uid, 0, dirp, dirdone) != 0)
			return -1;
		fd = udt_sys3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
		    0);
		if (fd < 0)
			return -1;
		ms = __atomic_load_n(&udt_dtd_slow, __ATOMIC_RELAXED) ?
		    UDT_HELLO_FIRST_MS : UDT_HELLO_WAIT_MS;
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		udt_sys5(SYS_setsockopt, fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		    sizeof(tv));
		n = udt_sys3(SYS_connect, fd, sun, sizeof(*sun));
	}
	if (n == -EAGAIN || n == -ETIMEDOUT) {
		udt_untraced_set("dtd's socket has a full queue: dtd does "
		    "not answer", "noanswer");
		__atomic_store_n(&udt_dtd_slow, 1, __ATOMIC_RELAXED);
		goto fail;
	}
	if (n != 0 || udt_sys5(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED,
	    &cr, &crlen) != 0)
		goto fail;
	if (!udt_user_peer_ok(cr.uid, uid)) {
		udt_untraced_set("another user's process listens on it",
		    "untrusted");
		goto fail;
	}
	if (hello_on && udt_sys6(SYS_sendto, fd, (long)&hello,
	    sizeof(hello), MSG_NOSIGNAL, 0, 0) != (long)sizeof(hello))
		goto fail;
	*fdp = fd;
	*peerp = cr.pid;
	return 0;
fail:
	udt_close(fd);
	return -1;
}

/*
 * The second half: wait on fd for the welcome of dtd, process peer, and
 * take what it hands over, as udt_connect_dtd() says.  fd is closed
 * (or deferred) either way.
 */
static int
udt_connect_finish(long fd, pid_t peer, struct udt_tab **tabp,
    struct udt_ring_hdr **ringp, uint32_t *flagsp, int32_t *pidp)
{
	struct udt_welcome w;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct iovec iov = { &w, sizeof(w) };
	struct msghdr msg;
	struct cmsghdr *c;
	struct udt_tab *tab = NULL;
	struct udt_ring_hdr *ring = NULL;
	int fds[2] = { -1, -1 };
	int tries;
	long n;

	if (udt_await(fd, peer) != 0)
		goto fail;
	__atomic_store_n(&udt_dtd_slow, 0, __ATOMIC_RELAXED);

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	for (tries = 0; tries < 8; tries++) {
		n = udt_sys3(SYS_recvmsg, fd, &msg,
		    MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n != -EINTR)
			break;
	}
	/*
	 * Take whatever descriptors arrived, even one of two (a process at
	 * its RLIMIT_NOFILE gets fewer, MSG_CTRUNC) or with a short reply:
	 * the fail path must close them, or they leak into the program.
	 */
	if (n >= 0) {
		for (c = CMSG_FIRSTHDR(&msg); c != NULL;
		    c = CMSG_NXTHDR(&msg, c)) {
			size_t nfd;

			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_RIGHTS ||
			    c->cmsg_len < CMSG_LEN(0))
				continue;
			nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds, CMSG_DATA(c),
			    (nfd < 2 ? nfd : 2) * sizeof(int));
		}
	}
	if (n != (long)sizeof(w))
		goto fail;
	if (w.uw_magic != UDT_MAGIC || w.uw_version != UDT_VERSION ||
	    w.uw_error != 0 || fds[0] < 0 || fds[1] < 0 ||
	    w.uw_nslots == 0 || (w.uw_nslots & (w.uw_nslots - 1)) != 0 ||
	    w.uw_ringsize != UDT_RING_SIZE(w.uw_nslots) ||
	    w.uw_tabsize != UDT_TAB_SIZE)
		goto fail;
	ring = udt_map(fds[0], w.uw_ringsize, PROT_READ | PROT_WRITE);
	tab = udt_map(fds[1], w.uw_tabsize, PROT_READ);
	/*
	 * The table's count of probes is the systab's of dtd's build: on
	 * the tracees' socket no hello told dtd ours.
	 */
	if (ring == NULL || tab == NULL || ring->rh_magic != UDT_MAGIC ||
	    ring->rh_nslots != w.uw_nslots || tab->tb_magic != UDT_MAGIC ||
	    tab->tb_nprobes != 2 * SYSTAB_COUNT)
		goto fail;
	/* Before any record: dtd judges them by it (udt_wire.h). */
	__atomic_store_n(&ring->rh_self, (uint64_t)(uintptr_t)ring,
	    __ATOMIC_RELEASE);
	/*
	 * The constructor's: dtd's look at its status stands for its own.
	 * Alone, it may keep its descriptors to its end: a thread an
	 * earlier constructor started could close one and have its number
	 * again for a file of its own, which the close at the end would
	 * take.
	 */
	if (udt_ctor_status && udt_proc_status_told(&w) == 0 &&
	    w.uw_threads == 1)
		udt_defer_on = 1;
	udt_close3(fds[0], fds[1], (int)fd);
	*tabp = tab;
	*ringp = ring;
	*flagsp = w.uw_flags;
	*pidp = w.uw_pid;
	return 0;
fail:
	if (ring != NULL)
		udt_sys2(SYS_munmap, ring, w.uw_ringsize);
	if (tab != NULL)
		udt_sys2(SYS_munmap, tab, w.uw_tabsize);
	udt_close(fds[0]);
	udt_close(fds[1]);
	udt_close(fd);
	return -1;
}

/*
 * One handshake at sun: as udt_connect_dtd(), with the hello where
 * hello_on is set; the rest as udt_connect_open() says.
 */
static int
udt_connect_at(const struct sockaddr_un *sun, int hello_on, long *fdp,
    struct stat *dirp, int *dirdone, int *backp,
    struct udt_tab **tabp, struct udt_ring_hdr **ringp, uint32_t *flagsp,
    int32_t *pidp)
{
	pid_t peer;
	long fd;

	if (udt_connect_open(sun, hello_on, fdp, dirp, dirdone, backp,
	    &peer) != 0)
		return -1;
	fd = *fdp;
	*fdp = -1;
	return udt_connect_finish(fd, peer, tabp, ringp, flagsp, pidp);
}

/*
 * A handshake begun (udt_hello_begin()): what udt_connect_open() left at
 * the tracees' socket, for udt_connect_dtd() to go on from.  Whoever
 * attaches, one at a time (udt_attach_locked()); begun apart from its
 * end by the constructor alone, before any other thread exists.
 */
static struct {
	int		 he_on;		/* begun, not yet taken */
	int		 he_r;		/* udt_connect_open()'s answer */
	int		 he_back;
	int		 he_dirdone;
	long		 he_fd;
	pid_t		 he_peer;
	struct stat	 he_dir;
} udt_begun;

void
udt_hello_begin(void)
{
	udt_untraced_set(NULL, NULL);
	udt_begun.he_on = 1;
	udt_begun.he_r = -1;
	udt_begun.he_back = 1;
	udt_begun.he_dirdone = 0;
	udt_begun.he_fd = -1;
	if (!udt_sun_ok || !udt_sunt_ok)
		return;
	udt_begun.he_back = 0;
	udt_begun.he_r = udt_connect_open(&udt_sunt, 0, &udt_begun.he_fd,
	    &udt_begun.he_dir, &udt_begun.he_dirdone, &udt_begun.he_back,
	    &udt_begun.he_peer);
}

/*
 * Handshake with dtd.  On success *tabp and *ringp are mapped and every
 * descriptor is closed again, so the traced program never sees one.
 * First at the tracees' socket, where the connection is the hello and
 * nothing is sent at all; at the ingest socket with a hello where that
 * one's name does not fit or it has nothing for us (no dtd of this
 * build: its name carries the version and the systab, so another
 * build's dtd, which has its own, refuses the hello before it spends
 * anything; or another user's socket at that name in a shared
 * directory, which the ingest socket's own look then judges).  The
 * hello is not sent before we know whom we talk to: a socket and
 * directory of our own or root's, a peer that is our own user or root,
 * so another user who made the name first is sent not a byte and
 * chooses nothing we record.  Where we looked at the directory, such a
 * user does not even get a connection.  Where the launcher's word
 * spared the look (UDT_SOCKDIR_ENV) and is wrong (another mount
 * namespace or a chroot, a directory loosened since), it does: its
 * SO_PEERCRED tells it our pid, uid and gid, and when it made the
 * connection it learns when we started; and by leaving its backlog full
 * it could have held our start for the whole blocking wait, so a full
 * backlog makes us look at the directory before that wait.  A fall back
 * costs one connect (the socket and the directory's look are reused).
 */
int
udt_connect_dtd(struct udt_tab **tabp, struct udt_ring_hdr **ringp,
    uint32_t *flagsp, int32_t *pidp)
{
	struct stat dir;
	const char *why, *word;
	long fd = -1;
	int dirdone = 0, r;

	/* The constructor's was begun before: on from where it is. */
	if (!udt_begun.he_on)
		udt_hello_begin();
	udt_begun.he_on = 0;
	if (!udt_sun_ok)
		return -1;
	if (udt_begun.he_r == 0)
		return udt_connect_finish(udt_begun.he_fd, udt_begun.he_peer,
		    tabp, ringp, flagsp, pidp);
	if (!udt_begun.he_back)
		return -1;
	fd = udt_begun.he_fd;
	dirdone = udt_begun.he_dirdone;
	if (dirdone)
		dir = udt_begun.he_dir;
	why = udt_untraced;
	word = udt_untraced_word;
	udt_untraced_set(NULL, NULL);
	r = udt_connect_at(&udt_sun, 1, &fd, &dir, &dirdone, NULL,
	    tabp, ringp, flagsp, pidp);
	/* Nothing to say of the ingest socket: what the tracees' said. */
	if (r != 0 && udt_untraced == NULL && why != NULL) {
		udt_untraced_set(why, word);
		__atomic_store_n(&udt_sun_tried, &udt_sunt, __ATOMIC_RELAXED);
	}
	return r;
}

/*
 * After the constructor's handshake: say why the program runs untraced
 * when that is not simply dtd's absence, once for the whole tree of
 * processes: said is UDT_UNTRACED_ENV as we inherited it, set to the
 * same word when the launcher or an earlier image told the user
 * already.  The variable is set for our children, and dropped again once
 * dtd answers, so a dtd that comes back is waited for in full and its
 * next failure told.
 * Constructor only: it calls libc.
 */
void
udt_tell_untraced(const char *said, pid_t pid)
{
	const char *why = udt_untraced, *word = udt_untraced_word;
	const struct sockaddr_un *sun = udt_sun_tried;
	char buf[512];
	int len;

	if (why == NULL) {
		if (udt_ring != NULL && udt_dtd_slow == 0 && said != NULL &&
		    (strcmp(said, "stopped") == 0 ||
		    strcmp(said, "noanswer") == 0))
			(void)unsetenv(UDT_UNTRACED_ENV);
		return;
	}
	if (said == NULL || strcmp(said, word) != 0) {
		len = snprintf(buf, sizeof(buf), "userdt: %s (pid %d) runs "
		    "untraced: %s: %s\n", program_invocation_short_name,
		    (int)pid, (sun != NULL ? sun : &udt_sun)->sun_path, why);
		if (len > 0)
			(void)udt_sys3(SYS_write, 2, buf,
			    (size_t)len < sizeof(buf) ? (size_t)len :
			    sizeof(buf) - 1);
		(void)setenv(UDT_UNTRACED_ENV, word, 1);
	}
}
