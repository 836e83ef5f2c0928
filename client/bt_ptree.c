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
 * The tree is learnt from the kernel's process connector (bt_ptree_cn.c):
 * every fork in the system is announced on a netlink socket at the
 * moment it happens, before the child can make an event.  btrace listens
 * from before the command is forked, a thread drains the socket as it
 * fills, and the main thread drains what is left before it looks at each
 * batch of events, so a child's fork is always known before its first
 * event, however short the child's life (/proc would have forgotten it).
 *
 * A pid that leaves the tree and is reused by an outsider is told apart
 * by time: each entry remembers when its holder was forked and what the
 * pid was before, and an event older than the fork belongs to the old
 * holder.
 *
 * Where the connector cannot be had (no CONFIG_PROC_EVENTS, another
 * network namespace) or has overflowed, a pid not seen fork is looked up
 * in /proc by its parent chain, the supervisor being a subreaper so that
 * orphans still chain to it.  After an overflow, a process that has
 * exited before its first event is read is nowhere to be looked up:
 * neither dtd nor the kernel keeps a dead process's parent.  Its events
 * are left out and counted, and btrace says so at the end, never
 * silently: they may be the command's, or another launched program's.
 * An overflow may also have dropped the shell's exec (its later
 * children are then taken for the launcher's) or an outsider's fork of
 * a tree pid (its events then taken for the tree's): the words at the
 * end name the overflow, so that such a run is never taken for a whole
 * one.
 *
 * Only the command's processes are its tree (design decision 17): not
 * the supervisor, a parent of the tree whose own events are btrace's, nor
 * the launcher's helper, which the shell forks before it executes the
 * command (udt_launch_trace()): the connector says when the shell
 * executes, and what it forked or did before is not the command's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"
#include "bt_ptree.h"
#include "udt_mapsq.h"

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
	char		 pe_undecided;	/* gone unknown after an overflow */
	uint64_t	 pe_since;	/* realtime ns of the fork, 0 unknown */
};

/* error-checking: an exit under it finds it held (pt_report_atexit) */
pthread_mutex_t		 pt_mtx = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;

/* All under pt_mtx once the drain thread runs (bt_ptree.h). */
static struct pt_ent	*tab;
static size_t		 tabsize, tabused;
static int		 cn_lost;	/* forks missed: /proc decides */
static int		 pt_proconly;	/* no connector: /proc alone, always */
static unsigned long	 cn_overflows;	/* ENOBUFS seen */
static unsigned long	 undec_pids;	/* left out: pe_undecided */
static unsigned long	 undec_evts;
static unsigned long	 kin_asked;	/* parents dtd told (dtd_ppid()) */
static pid_t		 shell_pid;	/* ptree_shell() */
static int		 shell_execd;	/* it executed the command */
static uint64_t		 shell_exec_ns;	/* when, realtime ns */

static void		 pt_report_atexit(void);

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
	pe->pe_undecided = 0;
}

/* Listen to forks; before the command is forked.  0, or -1 (errno). */
int
ptree_open(void)
{
	static int hooked;

	if (!hooked && atexit(pt_report_atexit) == 0)
		hooked = 1;
	if (pt_cn_open() == 0)
		return 0;
	cn_lost = 1;
	pt_proconly = 1;
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
	pthread_mutex_lock(&pt_mtx);
	pt_set(pid, PT_PARENT, ns_of(&now));
	pthread_mutex_unlock(&pt_mtx);
}

void
ptree_shell(pid_t pid)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&pt_mtx);
	pt_set(pid, PT_IN, ns_of(&now));
	shell_pid = pid;
	shell_execd = 0;
	pthread_mutex_unlock(&pt_mtx);
	/* btrace forks no more: the socket drained as it fills */
	if (pt_cn_start() == -1 && g_verbose > 1)
		fprintf(stderr, "debug: no drain thread: the process "
		    "connector is read before each batch alone\n");
}

/* The connector's words, pt_mtx held (bt_ptree_cn.c). */
void
pt_exec(pid_t pid, uint64_t since)
{
	if (pid == shell_pid && shell_pid != 0 && !shell_execd) {
		shell_execd = 1;
		shell_exec_ns = since;
	}
}

void
pt_fork(pid_t parent, pid_t child, uint64_t since)
{
	struct pt_ent *pe = pt_slot(parent, 0);

	if (parent == shell_pid && shell_pid != 0 && !shell_execd)
		/* the launcher's helper, and what it forks */
		pt_set(child, PT_OUT, since);
	else if (pe != NULL && pe->pe_member != PT_OUT)
		pt_set(child, PT_IN, since);
	else if ((pe = pt_slot(child, 0)) != NULL && since > pe->pe_since)
		/* a tree pid reused by an outsider */
		pt_set(child, PT_OUT, since);
}

void
pt_overflow(void)
{
	if (cn_overflows++ == 0)
		fprintf(stderr, "%s: the kernel dropped fork announcements "
		    "(its buffer was full): the command's tree is now "
		    "read from /proc and the parents dtd noted, and a "
		    "process of it neither can place will be left out "
		    "(said at the end)\n",
		    g_progname);
	cn_lost = 1;
}

/* Take in the forks announced so far. */
void
ptree_sync(void)
{
	pthread_mutex_lock(&pt_mtx);
	pt_cn_drain();
	pthread_mutex_unlock(&pt_mtx);
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

/*
 * The parent dtd noted of pid, gone from /proc (udt_kinq()): 0 when dtd
 * knows none, or only of a process that started after the event at
 * ns (the pid reused since), whose parent is then not the event's.
 */
static pid_t
dtd_ppid(pid_t pid, uint64_t ns, uint64_t slack)
{
	uint64_t start;
	pid_t ppid;

	if (udt_kinq(NULL, pid, &ppid, &start) == -1 || ppid <= 0)
		return 0;
	if (start != 0 && start > ns + slack)
		return 0;
	kin_asked++;
	return ppid;
}

/* How far up /proc is read for a pid's ancestry. */
#define PROC_DEPTH	64

/*
 * pid's ancestry from /proc, pid first, without pt_mtx: the drain thread
 * goes on meanwhile.  A process gone from /proc, with its parent, before
 * its events are read (no connector to have told its fork) is found in
 * what dtd noted at the hellos (dtd_ppid()), as are its gone parents
 * above it: ns and slack are the event's time and its lag.  The number
 * of pids in chain; *top: the parent of the last, 0 when it was gone, 1
 * or less at the root.
 */
static int
proc_chain(pid_t pid, uint64_t ns, uint64_t slack, pid_t *chain, pid_t *top)
{
	int n = 0;

	chain[n++] = pid;
	for (;;) {
		if ((*top = proc_ppid(chain[n - 1])) == 0)
			*top = dtd_ppid(chain[n - 1], ns, slack);
		if (*top <= 1 || n == PROC_DEPTH)
			return n;
		chain[n++] = *top;
	}
}

/*
 * Is the process that made an event at tsp in the command's tree?  sys:
 * a system call's, which from the shell before its exec can only be the
 * launcher's record of its execve, the command's start.  slack: how far
 * tsp may lag the fork of the process that made the event.  -1: only
 * /proc can tell (place()).
 */
static int
member(pid_t pid, const struct timespec *tsp, int sys, uint64_t slack)
{
	struct pt_ent *pe = pt_slot(pid, 0);

	/* The shell is btrace's code until it executes the command. */
	if (pid == shell_pid && !sys &&
	    (!shell_execd || ns_of(tsp) < shell_exec_ns))
		return 0;
	if (pe != NULL) {
		/*
		 * Found gone at pe_since: an event from before is its own,
		 * one after a later holder's, which /proc may place.
		 */
		if (pe->pe_undecided) {
			if (ns_of(tsp) <= pe->pe_since) {
				undec_evts++;
				return 0;
			}
			return -1;
		}
		/*
		 * Tracees' clocks are converted from their time stamp
		 * counters, and may lag a fork a little: only an event well
		 * before the fork is the old holder's.
		 */
		if (pe->pe_prev != pe->pe_member && pe->pe_since != 0 &&
		    ns_of(tsp) + slack < pe->pe_since)
			return pe->pe_prev == PT_IN;
		return pe->pe_member == PT_IN;
	}
	/* the connector saw every fork: a pid it did not is an outsider */
	return cn_lost ? -1 : 0;
}

/*
 * Place pid from its ancestry read in /proc (proc_chain()), unless the
 * connector placed it meanwhile.  pt_mtx held.
 */
static int
place(pid_t pid, const struct timespec *tsp, int sys, uint64_t slack,
    const pid_t *chain, int n, pid_t top)
{
	struct timespec now;
	struct pt_ent *pe;
	int i, m;

	if ((m = member(pid, tsp, sys, slack)) != -1)
		return m;
	if (n == 1 && top == 0) {
		/* gone, its parent with it: nothing can place it now */
		undec_evts++;
		clock_gettime(CLOCK_REALTIME, &now);
		if ((pe = pt_slot(pid, 1)) != NULL) {
			pe->pe_member = pe->pe_prev = PT_OUT;
			pe->pe_since = ns_of(&now);
			pe->pe_undecided = 1;
			undec_pids++;
		}
		return 0;
	}
	/* the nearest ancestor known decides; beyond the chain, outsiders */
	m = 0;
	for (i = 1; i < n; i++)
		if ((pe = pt_slot(chain[i], 0)) != NULL && !pe->pe_undecided) {
			m = pe->pe_member != PT_OUT;
			break;
		}
	/* the last, whose parent could not be read, is gone: not cached */
	if (i == n && top == 0)
		i--;
	while (--i >= 0)
		pt_set(chain[i], m ? PT_IN : PT_OUT, 0);
	return m;
}

/* Main thread; takes pt_mtx, never across the reads of /proc. */
static int
pt_member(pid_t pid, const struct timespec *tsp, int sys, uint64_t slack)
{
	pid_t chain[PROC_DEPTH], top;
	int m, n;

	pthread_mutex_lock(&pt_mtx);
	m = member(pid, tsp, sys, slack);
	pthread_mutex_unlock(&pt_mtx);
	if (m != -1)
		return m;
	n = proc_chain(pid, ns_of(tsp), slack, chain, &top);
	pthread_mutex_lock(&pt_mtx);
	m = place(pid, tsp, sys, slack, chain, n, top);
	pthread_mutex_unlock(&pt_mtx);
	return m;
}

/* An event's process, at the event's time stamp (a tracee's clock). */
int
ptree_member(pid_t pid, const struct timespec *tsp, int sys)
{
	return pt_member(pid, tsp, sys, CLOCK_SLACK);
}

/*
 * A folded entry's process: its events were all made by upto, read on
 * this process's realtime clock, which the forks' times are kept in
 * too, so no slack: a pid forked after upto (ptree_sync() since) is
 * judged as its holder before.  The entries have no time of their own,
 * so one of a pid reused before upto is its latest holder's whole,
 * though some of its events may be the one before's.
 */
int
ptree_member_upto(pid_t pid, const struct timespec *upto, int sys)
{
	return pt_member(pid, upto, sys, 0);
}

int
ptree_proc_only(void)
{
	return pt_proconly;
}

pid_t
ptree_shell_pid(void)
{
	pid_t pid;

	pthread_mutex_lock(&pt_mtx);
	pid = shell_pid;
	pthread_mutex_unlock(&pt_mtx);
	return pid;
}

/*
 * What the overflows, or /proc alone, cost, said once.  pt_mtx held, or
 * no thread.
 */
static void
pt_report(void)
{
	if (cn_overflows > 0)
		fprintf(stderr, "%s: the kernel dropped fork announcements "
		    "%lu time%s: %lu event%s of %lu process%s that had exited "
		    "before they could be placed %s left out (the command's, "
		    "or another launched program's)\n", g_progname,
		    cn_overflows, cn_overflows == 1 ? "" : "s", undec_evts,
		    undec_evts == 1 ? "" : "s", undec_pids,
		    undec_pids == 1 ? "" : "es", undec_evts == 1 ? "was" :
		    "were");
	else if (undec_evts > 0)
		fprintf(stderr, "%s: %lu event%s of %lu process%s that had "
		    "exited with their parents before they could be placed "
		    "in the command's tree, and whose parents dtd did not "
		    "know, %s left out (no process connector: the tree is "
		    "read from /proc)\n", g_progname, undec_evts,
		    undec_evts == 1 ? "" : "s", undec_pids,
		    undec_pids == 1 ? "" : "es", undec_evts == 1 ? "was" :
		    "were");
	if (g_verbose > 1 && kin_asked > 0)
		fprintf(stderr, "debug: %lu parent%s of processes gone from "
		    "/proc told by dtd\n", kin_asked, kin_asked == 1 ? "" :
		    "s");
	cn_overflows = undec_pids = undec_evts = kin_asked = 0;
}

/*
 * An exit through err() after the overflow skips ptree_close, and the
 * first message promised the cost at the end.  A drain holds pt_mtx for
 * a bounded time (bt_ptree_cn.c); an exit under it (xcalloc's, out of
 * memory) is told by the error-checking mutex, and reports as it is.
 */
static void
pt_report_atexit(void)
{
	int error;

	error = pthread_mutex_lock(&pt_mtx);
	pt_report();
	if (error == 0)
		pthread_mutex_unlock(&pt_mtx);
}

/* The thread stopped first: nothing else takes pt_mtx after. */
void
ptree_close(void)
{
	pt_cn_stop();
	pt_report();
	free(tab);
	tab = NULL;
	tabsize = tabused = 0;
}
