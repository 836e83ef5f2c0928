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
 * btrace -c: which events belong to the command's process tree.
 *
 * The tree is learnt from the kernel's process connector: every fork in
 * the system is announced on a netlink socket at the moment it happens,
 * before the child can make an event.  btrace listens from before the
 * command is forked and drains the socket before it looks at each batch
 * of events, so a child's fork is always known before its first event,
 * however short the child's life (/proc would have forgotten it).
 *
 * A pid that leaves the tree and is reused by an outsider is told apart
 * by time: each entry remembers when its holder was forked and what the
 * pid was before, and an event older than the fork belongs to the old
 * holder.
 *
 * Where the connector cannot be had (no CONFIG_PROC_EVENTS, another
 * network namespace) or has overflowed, a pid not seen fork is looked up
 * in /proc by its parent chain, the supervisor being a subreaper so that
 * orphans still chain to it.
 *
 * Only the command's processes are its tree (design decision 17): not
 * the supervisor, a parent of the tree whose own events are btrace's, nor
 * the launcher's helper, which the shell forks before it executes the
 * command (udt_launch_trace()): the connector says when the shell
 * executes, and what it forked or did before is not the command's.
 */
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"

/* How far an event's time stamp may lag the fork of its process. */
#define CLOCK_SLACK	20000000ULL

/* pt_ent.pe_member */
#define PT_OUT		0	/* an outsider */
#define PT_IN		1	/* the command's */
#define PT_PARENT	2	/* its forks are the command's, not itself */

struct pt_ent {
	pid_t		 pe_pid;	/* 0: free slot */
	char		 pe_member;	/* PT_* */
	char		 pe_prev;	/* the pid's previous holder's */
	uint64_t	 pe_since;	/* realtime ns of the fork, 0 unknown */
};

static struct pt_ent	*tab;
static size_t		 tabsize, tabused;
static int		 cn_fd = -1;
static int		 cn_lost;	/* forks missed: /proc decides */
static int64_t		 mono2real;	/* realtime - monotonic, ns */
static pid_t		 shell_pid;	/* ptree_shell() */
static int		 shell_execd;	/* it executed the command */
static uint64_t		 shell_exec_ns;	/* when, realtime ns */

static uint64_t
ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static struct pt_ent *
pt_slot(pid_t pid, int insert)
{
	size_t i, mask;

	if (pid <= 0)
		return NULL;	/* 0 marks a free slot */
	if (tabused * 2 >= tabsize && insert) {
		struct pt_ent *old = tab;
		size_t n = tabsize;

		tabsize = tabsize ? tabsize * 2 : 256;
		tab = xcalloc(tabsize, sizeof(*tab));
		tabused = 0;
		for (i = 0; i < n; i++)
			if (old[i].pe_pid != 0)
				*pt_slot(old[i].pe_pid, 1) = old[i];
		free(old);
	}
	if (tabsize == 0)
		return NULL;
	mask = tabsize - 1;
	for (i = ((size_t)pid * 2654435761u) & mask;; i = (i + 1) & mask) {
		if (tab[i].pe_pid == pid)
			return &tab[i];
		if (tab[i].pe_pid == 0) {
			if (!insert)
				return NULL;
			tab[i].pe_pid = pid;
			tabused++;
			return &tab[i];
		}
	}
}

static void
pt_set(pid_t pid, int member, uint64_t since)
{
	struct pt_ent *pe = pt_slot(pid, 1);

	if (pe == NULL)
		return;
	pe->pe_prev = pe->pe_member;
	pe->pe_member = (char)member;
	pe->pe_since = since;
}

/* Listen to forks; before the command is forked.  0, or -1 (errno). */
int
ptree_open(void)
{
	struct sockaddr_nl sa;
	struct {
		struct nlmsghdr			 h;
		struct cn_msg			 c;
		enum proc_cn_mcast_op		 op;
	} __attribute__((packed)) msg;
	int fd, sz = 8 << 20;
	struct timespec rt, mt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	mono2real = (int64_t)(ns_of(&rt) - ns_of(&mt));
	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    NETLINK_CONNECTOR);
	if (fd == -1)
		goto fail;
	/* a fork storm elsewhere must not push the command's forks out */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = CN_IDX_PROC;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.h.nlmsg_len = sizeof(msg);
	msg.h.nlmsg_type = NLMSG_DONE;
	msg.c.id.idx = CN_IDX_PROC;
	msg.c.id.val = CN_VAL_PROC;
	msg.c.len = sizeof(msg.op);
	msg.op = PROC_CN_MCAST_LISTEN;
	if (send(fd, &msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		goto fail;
	cn_fd = fd;
	return 0;
fail:
	if (fd != -1)
		close(fd);
	cn_lost = 1;
	if (g_verbose > 1)
		fprintf(stderr, "debug: no process connector (%s): the "
		    "command's tree is read from /proc\n", strerror(errno));
	return -1;
}

/*
 * The tree's roots, alive now (their own forks, announced later, are
 * older than this): the supervisor, a parent only, and the shell.
 */
void
ptree_root(pid_t pid)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	pt_set(pid, PT_PARENT, ns_of(&now));
}

void
ptree_shell(pid_t pid)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	pt_set(pid, PT_IN, ns_of(&now));
	shell_pid = pid;
	shell_execd = 0;
}

/* Take in the forks announced so far. */
void
ptree_sync(void)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *h;
	struct cn_msg *cm;
	struct proc_event ev;
	size_t avail;
	struct pt_ent *pe;
	uint64_t since;
	pid_t child;
	ssize_t n;

	if (cn_fd == -1)
		return;
	for (;;) {
		n = recv(cn_fd, buf, sizeof(buf), 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				if (!cn_lost)
					fprintf(stderr, "%s: too many forks "
					    "at once: the command's tree is "
					    "now read from /proc\n",
					    g_progname);
				cn_lost = 1;
				continue;
			}
			return;		/* EAGAIN: all read */
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		    h = NLMSG_NEXT(h, n)) {
			cm = NLMSG_DATA(h);
			/* the event sits 4-byte aligned; its u64 wants 8 */
			avail = h->nlmsg_len - NLMSG_HDRLEN - sizeof(*cm);
			if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(*cm))
				continue;
			memset(&ev, 0, sizeof(ev));
			memcpy(&ev, cm->data, avail < sizeof(ev) ? avail :
			    sizeof(ev));
			if (ev.what == PROC_EVENT_EXEC &&
			    ev.event_data.exec.process_tgid == shell_pid &&
			    shell_pid != 0 && !shell_execd) {
				shell_execd = 1;
				shell_exec_ns = ev.timestamp_ns +
				    (uint64_t)mono2real;
			}
			if (ev.what != PROC_EVENT_FORK)
				continue;
			/* a new thread is no new process */
			if (ev.event_data.fork.child_pid !=
			    ev.event_data.fork.child_tgid)
				continue;
			pe = pt_slot(ev.event_data.fork.parent_tgid, 0);
			child = ev.event_data.fork.child_tgid;
			since = ev.timestamp_ns + (uint64_t)mono2real;
			if (ev.event_data.fork.parent_tgid == shell_pid &&
			    shell_pid != 0 && !shell_execd)
				/* the launcher's helper, and what it forks */
				pt_set(child, PT_OUT, since);
			else if (pe != NULL && pe->pe_member != PT_OUT)
				pt_set(child, PT_IN, since);
			else if ((pe = pt_slot(child, 0)) != NULL &&
			    since > pe->pe_since)
				/* a tree pid reused by an outsider */
				pt_set(child, PT_OUT, since);
		}
	}
}

/* The parent of pid from /proc, 0 when it is gone. */
static pid_t
proc_ppid(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, ppid;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the comm in parentheses may hold anything: after the last ')' */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

static int
proc_member(pid_t pid, int depth)
{
	struct pt_ent *pe;
	pid_t ppid;
	int m;

	if ((pe = pt_slot(pid, 0)) != NULL)
		return pe->pe_member != PT_OUT;
	if (pid <= 1 || depth > 64 || (ppid = proc_ppid(pid)) == 0)
		return 0;	/* not cached: gone, or not known yet */
	m = proc_member(ppid, depth + 1);
	pt_set(pid, m ? PT_IN : PT_OUT, 0);
	return m;
}

/*
 * Is the process that made an event at tsp in the command's tree?  sys:
 * a system call's, which from the shell before its exec can only be the
 * launcher's record of its execve, the command's start.
 */
int
ptree_member(pid_t pid, const struct timespec *tsp, int sys)
{
	struct pt_ent *pe = pt_slot(pid, 0);

	/* The shell is btrace's code until it executes the command. */
	if (pid == shell_pid && !sys &&
	    (!shell_execd || ns_of(tsp) < shell_exec_ns))
		return 0;
	if (pe != NULL) {
		/*
		 * Tracees' clocks are converted from their time stamp
		 * counters, and may lag a fork a little: only an event well
		 * before the fork is the old holder's.
		 */
		if (pe->pe_prev != pe->pe_member && pe->pe_since != 0 &&
		    ns_of(tsp) + CLOCK_SLACK < pe->pe_since)
			return pe->pe_prev == PT_IN;
		return pe->pe_member == PT_IN;
	}
	/* the connector saw every fork: a pid it did not is an outsider */
	if (!cn_lost || !proc_member(pid, 0))
		return 0;
	return (pe = pt_slot(pid, 0)) != NULL && pe->pe_member == PT_IN;
}

pid_t
ptree_shell_pid(void)
{
	return shell_pid;
}

void
ptree_close(void)
{
	if (cn_fd != -1)
		close(cn_fd);
	cn_fd = -1;
	free(tab);
	tab = NULL;
	tabsize = tabused = 0;
}
