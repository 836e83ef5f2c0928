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
 * btrace -c: the kernel's process connector, which announces every fork
 * and exec of the machine, not the command's alone.
 *
 * A busy machine forks thousands of times a second, and the socket's
 * buffer holds little of that: 16 MB for root (SO_RCVBUFFORCE, 8 MB
 * asked, doubled by the kernel), about 20000 announcements; for another
 * user net.core.rmem_max doubled, 416 kB by default, about 500.  Once
 * it is full the kernel drops announcements, the command's forks among
 * them, and a child that exits before btrace reads /proc is lost to the
 * tree.  Two things keep the buffer from filling:
 *
 * - Since Linux 6.6 the listen message may carry a mask of the events
 *   wanted (struct proc_input): forks and execs alone are sent, not the
 *   exits, nor the uid, sid and comm changes, which btrace never used.
 *   An older kernel ignores a listen message of that size, and would
 *   announce nothing: there the plain listen, and everything comes.
 *
 * - The device cannot be polled with the socket (its read blocks), and
 *   btrace blocks in it, or prints, for as long as the command likes: a
 *   thread that does nothing else drains the socket into the table as
 *   the announcements come (concurrency: bt_ptree.h).
 *
 * What can still be lost: the drain thread kept off the processors for
 * the time the machine takes to fill the buffer (a fraction of a second
 * under a fork storm of every core, with the mask; for another user than
 * root, milliseconds).  The kernel says so (ENOBUFS), and
 * bt_ptree.c says what it cost.
 */
#include <sys/socket.h>
#include <sys/utsname.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"
#include "bt_ptree.h"

/*
 * The listen message's payload with an event mask: the layout of the
 * kernel's struct proc_input (6.6), which older headers do not have.
 */
struct pt_cn_input {
	uint32_t	pi_op;		/* enum proc_cn_mcast_op */
	uint32_t	pi_events;	/* enum proc_cn_event bits */
};

/* Between two drains of the thread, ns. */
#define CN_PAUSE	10000000L
/*
 * What one announcement costs the socket's buffer (the kernel counts
 * the skb's truesize, not the payload), measured: 16 MB held 20164.
 */
#define CN_TRUESIZE	832

static int		 cn_fd = -1;
static int		 cn_stop[2] = { -1, -1 };
static pthread_t	 cn_thread;
static int		 cn_running;
static int64_t		 cn_mono2real;	/* realtime - monotonic, ns */
static size_t		 cn_room;	/* announcements the buffer holds */

static uint64_t
ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

/* Whether the running kernel takes an event mask (6.6 and later). */
static int
cn_masks(void)
{
	struct utsname u;
	int maj, min;

	if (getenv("BTRACE_CN_NOMASK") != NULL)
		return 0;	/* to measure the difference */
	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj > 6 || (maj == 6 && min >= 6);
}

/* Listen to forks and execs.  0, or -1 (errno). */
int
pt_cn_open(void)
{
	struct sockaddr_nl sa;
	struct {
		struct nlmsghdr		 h;
		struct cn_msg		 c;
		struct pt_cn_input	 in;
	} __attribute__((packed)) msg;
	struct timespec rt, mt;
	size_t len;
	socklen_t sl;
	const char *ask;
	int fd, sz = 8 << 20, forced;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	cn_mono2real = (int64_t)(ns_of(&rt) - ns_of(&mt));
	/*
	 * A smaller buffer on request: to see how an overflow is told
	 * without forking for seconds to fill 16 MB.
	 */
	if ((ask = getenv("BTRACE_CN_RCVBUF")) != NULL && atoi(ask) > 0)
		sz = atoi(ask);
	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    NETLINK_CONNECTOR);
	if (fd == -1)
		return -1;
	forced = setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz,
	    sizeof(sz)) == 0;
	if (!forced)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	/* what the kernel granted, doubled: rmem_max caps a plain SO_RCVBUF */
	sl = sizeof(sz);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, &sl) || sz <= 0)
		sz = 0;
	cn_room = (size_t)sz / CN_TRUESIZE;
	if (!forced && g_verbose > 0)
		fprintf(stderr, "%s: process connector: SO_RCVBUFFORCE refused "
		    "(not root): a buffer of %d bytes (net.core.rmem_max), "
		    "about %zu announcements; a fork storm may overflow it\n",
		    g_progname, sz, cn_room);
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = CN_IDX_PROC;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.c.id.idx = CN_IDX_PROC;
	msg.c.id.val = CN_VAL_PROC;
	msg.in.pi_op = PROC_CN_MCAST_LISTEN;
	/* the kernel tells the two messages apart by their size alone */
	if (cn_masks()) {
		msg.in.pi_events = PROC_EVENT_FORK | PROC_EVENT_EXEC;
		msg.c.len = sizeof(msg.in);
	} else
		msg.c.len = sizeof(msg.in.pi_op);
	len = sizeof(msg.h) + sizeof(msg.c) + msg.c.len;
	msg.h.nlmsg_len = (uint32_t)len;
	msg.h.nlmsg_type = NLMSG_DONE;
	if (send(fd, &msg, len, 0) != (ssize_t)len)
		goto fail;
	if (g_verbose > 1)
		fprintf(stderr, "debug: process connector: %s\n", msg.c.len ==
		    sizeof(msg.in) ? "forks and execs" : "every event");
	cn_fd = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

/*
 * Take in what the socket holds, up to the first announcement made
 * after the drain began: one reader is slower than a storm of every
 * processor, and a drain to the socket's end would hold pt_mtx, and the
 * main thread, for as long as the storm lasts.  Whatever was announced
 * before the start is queued ahead of that one, so a drain still knows
 * every fork made before it began (bt_ptree.h).  pt_mtx held.  The
 * number of announcements read.
 */
size_t
pt_cn_drain(void)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *h;
	struct cn_msg *cm;
	struct proc_event ev;
	struct timespec ts;
	uint64_t start;
	size_t avail, got = 0;
	ssize_t n;
	int late = 0;

	/* the clock of the kernel's stamps (ktime_get_ns) */
	if (cn_fd == -1)
		return 0;	/* no connector: /proc decides */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = ns_of(&ts);
	while (!late) {
		n = recv(cn_fd, buf, sizeof(buf), 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				pt_overflow();
				continue;
			}
			return got;	/* EAGAIN: all read */
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		    h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(*cm))
				continue;
			cm = NLMSG_DATA(h);
			got++;
			/* the event sits 4-byte aligned; its u64 wants 8 */
			avail = h->nlmsg_len - NLMSG_HDRLEN - sizeof(*cm);
			memset(&ev, 0, sizeof(ev));
			memcpy(&ev, cm->data, avail < sizeof(ev) ? avail :
			    sizeof(ev));
			if (ev.timestamp_ns > start)
				late = 1;
			if (ev.what == PROC_EVENT_EXEC)
				pt_exec(ev.event_data.exec.process_tgid,
				    ev.timestamp_ns + (uint64_t)cn_mono2real);
			/* a new thread is no new process */
			else if (ev.what == PROC_EVENT_FORK &&
			    ev.event_data.fork.child_pid ==
			    ev.event_data.fork.child_tgid)
				pt_fork(ev.event_data.fork.parent_tgid,
				    ev.event_data.fork.child_tgid,
				    ev.timestamp_ns + (uint64_t)cn_mono2real);
		}
	}
	return got;
}

/*
 * The drain thread: wakes for the socket, or to end.  All signals
 * blocked, so that the main thread's handlers (SIGCHLD, SIGINT) run
 * where they always did.
 */
static void *
cn_thread_main(void *arg)
{
	struct timespec pause = { 0, CN_PAUSE };
	struct pollfd pfd[2];
	size_t got;

	(void)arg;
	pfd[0].fd = cn_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = cn_stop[0];
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		pthread_mutex_lock(&pt_mtx);
		got = pt_cn_drain();
		pthread_mutex_unlock(&pt_mtx);
		/*
		 * A storm costs this thread a wakeup every CN_PAUSE rather
		 * than one a fork, while the buffer has room for a pause's
		 * worth: once a drain took a quarter of it or more (for a
		 * user whom rmem_max holds to 500 announcements, a storm of
		 * 12500 forks a second), four pauses would fill it, and the
		 * next drain comes as soon as there is an announcement.
		 */
		if (got < cn_room / 4)
			nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * Drain from now on in a thread; after btrace's last fork (the shell's),
 * so that no fork copies a process whose lock another thread holds.
 * 0 (also with no socket: nothing to drain), or -1: the main thread
 * alone drains, as before each batch.
 */
int
pt_cn_start(void)
{
	sigset_t all, old;
	int error;

	if (cn_fd == -1)
		return 0;	/* nothing to drain */
	if (cn_running || pipe2(cn_stop, O_CLOEXEC) == -1)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	error = pthread_create(&cn_thread, NULL, cn_thread_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (error) {
		close(cn_stop[0]);
		close(cn_stop[1]);
		cn_stop[0] = cn_stop[1] = -1;
		return -1;
	}
	cn_running = 1;
	return 0;
}

/* The thread gone, the socket closed.  pt_mtx not held. */
void
pt_cn_stop(void)
{
	if (cn_running) {
		while (write(cn_stop[1], "", 1) == -1 && errno == EINTR)
			;
		pthread_join(cn_thread, NULL);
		close(cn_stop[0]);
		close(cn_stop[1]);
		cn_stop[0] = cn_stop[1] = -1;
		cn_running = 0;
	}
	if (cn_fd != -1)
		close(cn_fd);
	cn_fd = -1;
}
