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
 * dtd's reading of a process's status for its library's start
 * (daemon/sys/dt_proc.c's dt_proc_status(), handed over in the welcome):
 * of this process, whose thread count, blocked mask, handlers and pid it
 * sets and knows, and of a child stopped under its tracer (this process).
 * The library believes what this says instead of its own reading, so
 * each field is checked against what the kernel was made to hold.  And
 * dt_proc_private(), dtd's look at a tracee's text pages for its images
 * (udt_tab.tb_xclean), of a file this process maps and copies a page of.
 */
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_proc.h"
#include "dtt.h"

static void
on_usr2(int sig)
{
	(void)sig;
}

static void *
idle(void *arg)
{
	int fd = *(int *)arg;
	char c;

	/* Until the main thread closes the pipe's write end. */
	(void)read(fd, &c, 1);
	return NULL;
}

/*
 * A private mapping of this test's own file, 4 pages (the file is larger):
 * read, it is the file's pages; one written, a private copy, which the
 * image over it would undo.
 */
static void
check_private(void)
{
	volatile unsigned char *m;
	unsigned char sink = 0;
	uint64_t lo;
	int fd, pm;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	m = fd < 0 ? MAP_FAILED : mmap(NULL, 4 * 4096, PROT_READ |
	    PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (!dtt_check(fd >= 0 && pm >= 0 && m != MAP_FAILED,
	    "a private mapping of this file, and its pagemap"))
		return;
	lo = (uint64_t)(uintptr_t)m;
	dtt_check(dt_proc_private(pm, lo, lo + 4 * 4096) == 0,
	    "not faulted in: no private page");
	sink = m[0] + m[4096] + m[2 * 4096] + m[3 * 4096];
	dtt_check(dt_proc_private(pm, lo, lo + 4 * 4096) == 0,
	    "read, the file's pages: no private page (%u)", sink);
	m[2 * 4096 + 7] = (unsigned char)(sink + 1);
	dtt_check(dt_proc_private(pm, lo, lo + 4 * 4096) == 1 &&
	    dt_proc_private(pm, lo + 2 * 4096, lo + 2 * 4096 + 1) == 1,
	    "a page written: a private copy");
	dtt_check(dt_proc_private(pm, lo, lo + 2 * 4096) == 0 &&
	    dt_proc_private(pm, lo + 3 * 4096, lo + 4 * 4096) == 0,
	    "the pages around it the file's still");
	dtt_check(dt_proc_private(pm, lo, lo + (DT_PROC_PRIV_MAX + 1) *
	    4096ULL) == -1 && dt_proc_private(pm, lo, lo) == -1,
	    "a range too long or empty: cannot be told");
	munmap((void *)m, 4 * 4096);
	close(fd);
	close(pm);
}

static uint64_t
bit(int sig)
{
	return 1ULL << (sig - 1);
}

int
main(void)
{
	struct dt_proc_status pst;
	struct sigaction sa;
	sigset_t set;
	pthread_t th;
	pid_t child, w;
	int p[2], st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) != 0)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGURG);
	sigaddset(&set, SIGRTMIN + 3);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return 1;

	st = dt_proc_status(getpid(), &pst);
	dtt_check(st == 0, "own status read");
	dtt_check(pst.pst_threads == 1, "one thread (%d)", pst.pst_threads);
	dtt_check(pst.pst_nspid == getpid(), "pid %d, getpid() %d",
	    (int)pst.pst_nspid, (int)getpid());
	dtt_check(pst.pst_tracer == 0, "no tracer (%d)", (int)pst.pst_tracer);
	dtt_check(pst.pst_state == 'R' && pst.pst_tgid == getpid() &&
	    pst.pst_uid[0] == getuid() && pst.pst_uid[1] == geteuid() &&
	    pst.pst_gid[0] == getgid() && pst.pst_gid[1] == getegid(),
	    "state %c, thread group %d, uids and gids its own",
	    pst.pst_state, (int)pst.pst_tgid);
	dtt_check((pst.pst_sigblk & (bit(SIGURG) | bit(SIGRTMIN + 3))) ==
	    (bit(SIGURG) | bit(SIGRTMIN + 3)) &&
	    !(pst.pst_sigblk & bit(SIGUSR2)),
	    "blocked mask %#llx: SIGURG and SIGRTMIN+3, not SIGUSR2",
	    (unsigned long long)pst.pst_sigblk);
	dtt_check((pst.pst_sigcgt & bit(SIGUSR2)) &&
	    !(pst.pst_sigcgt & bit(SIGURG)),
	    "handlers %#llx: SIGUSR2's, not SIGURG's",
	    (unsigned long long)pst.pst_sigcgt);

	if (pipe(p) != 0 || pthread_create(&th, NULL, idle, &p[0]) != 0)
		return 1;
	st = dt_proc_status(getpid(), &pst);
	dtt_check(st == 0 && pst.pst_threads == 2, "a second thread: %d",
	    pst.pst_threads);
	{
		pid_t *tids, other;
		size_t n;

		tids = dt_proc_tids(getpid(), &n);
		dtt_check(tids != NULL && n == 2 && tids[0] == getpid() &&
		    tids[1] > tids[0], "dt_proc_tids(): the two threads, "
		    "sorted (%zu)", n);
		other = tids != NULL && n == 2 ? tids[1] : 0;
		free(tids);
		tids = dt_proc_tids(other, &n);
		dtt_check(tids == NULL && errno == ESRCH, "a thread's tid is "
		    "no process: ESRCH");
		free(tids);
	}
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);

	/* A child that stops itself under this process as its tracer. */
	if ((child = fork()) == -1)
		return 1;
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	w = waitpid(child, &st, 0);
	if (!dtt_check(w == child && WIFSTOPPED(st),
	    "a child stopped under this process's ptrace (status %#x)", st))
		return dtt_done();
	st = dt_proc_status(child, &pst);
	dtt_check(st == 0 && pst.pst_tracer == getpid(), "a traced child's "
	    "tracer: %d, expected %d", (int)pst.pst_tracer, (int)getpid());
	dtt_check(st == 0 && pst.pst_state == 't' && pst.pst_tgid == child,
	    "at its ptrace stop: state %c", pst.pst_state);
	(void)ptrace(PTRACE_DETACH, child, NULL, NULL);
	kill(child, SIGCONT);
	(void)waitpid(child, &st, 0);

	dtt_check(dt_proc_status(child, &pst) == ESRCH,
	    "a reaped child: ESRCH");
	dtt_check(dt_proc_status(0, &pst) == ESRCH, "pid 0: ESRCH");
	check_private();
	return dtt_done();
}
