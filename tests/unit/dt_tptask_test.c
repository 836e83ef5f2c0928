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
 * The tracepoint provider's thread names (dt_tp_task.c) for a task that
 * is gone when its records are read: the name a record of the kernel's
 * gave it (an exec, a rename) stays its name once /proc has none, past
 * the cache's one second too; a name only /proc gave is dropped then,
 * as it may predate an exec no record told.  Waits out that second
 * once: the cache's age is the clock's, nothing to wait on.
 */
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_tp_task.h"
#include "unit_check.h"


/* A child that waits until killed. */
static pid_t
child(void)
{
	pid_t pid;

	if ((pid = fork()) == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * A shell's child is the shell until its exec: its records from before
 * take the shell's name, whichever of the fork and the exec is read
 * first, however often the fork is read.  Pids past any live one.
 */
static void
forks(void)
{
	const pid_t sh = 4100001, c = 4100002, d = 4100003, thr = 4100004;
	char comm[DTMAXCOMLEN];
	pid_t live;

	dt_tp_task_rename(sh, sh, "shell", 1000);
	/* the fork, then the exec */
	dt_tp_task_fork(c, c, sh, sh, 2000);
	dt_tp_task_rename(c, c, "prog", 3000);
	dt_tp_task_comm(c, c, 0, 2500, comm);
	CHECK(strcmp(comm, "shell") == 0);
	dt_tp_task_comm(c, c, 0, 3500, comm);
	CHECK(strcmp(comm, "prog") == 0);
	/* the same fork read again, from another event's buffer */
	dt_tp_task_fork(c, c, sh, sh, 2000);
	dt_tp_task_comm(c, c, 0, 3500, comm);
	CHECK(strcmp(comm, "prog") == 0);
	dt_tp_task_comm(c, c, 0, 2500, comm);
	CHECK(strcmp(comm, "shell") == 0);
	/* the exec read first (another CPU's buffer), then the fork */
	dt_tp_task_rename(d, d, "prog2", 3000);
	dt_tp_task_fork(d, d, sh, sh, 2000);
	dt_tp_task_comm(d, d, 0, 2500, comm);
	CHECK(strcmp(comm, "shell") == 0);
	dt_tp_task_comm(d, d, 0, 3500, comm);
	CHECK(strcmp(comm, "prog2") == 0);
	/* a thread the shell made */
	dt_tp_task_fork(thr, sh, sh, sh, 2000);
	dt_tp_task_comm(sh, thr, 0, 2500, comm);
	CHECK(strcmp(comm, "shell") == 0);
	/* a maker the cache never saw: its name from /proc */
	if ((live = child()) == -1) {
		CHECK(0);
		return;
	}
	dt_tp_task_fork(4100005, 4100005, live, live, 2000);
	dt_tp_task_comm(4100005, 4100005, 0, 2500, comm);
	CHECK(strcmp(comm, "dt_tptask_test") == 0);
	reap(live);
	/* a maker neither cached nor in /proc: no name made up */
	dt_tp_task_fork(4100006, 4100006, 4100007, 4100007, 2000);
	dt_tp_task_comm(4100006, 4100006, 0, 2500, comm);
	CHECK(comm[0] == '\0');
}

int
main(void)
{
	struct timespec ttl = { .tv_sec = 1, .tv_nsec = 200000000 };
	char comm[DTMAXCOMLEN];
	pid_t named, read;

	if ((named = child()) == -1 || (read = child()) == -1) {
		perror("fork");
		return 1;
	}
	/* one named by a record, one by /proc while it runs */
	dt_tp_task_rename(named, named, "tp_static", 1000);
	dt_tp_task_comm(named, named, 0, 2000, comm);
	CHECK(strcmp(comm, "tp_static") == 0);
	dt_tp_task_comm(read, read, 0, 2000, comm);
	CHECK(strcmp(comm, "dt_tptask_test") == 0);
	reap(named);
	reap(read);
	nanosleep(&ttl, NULL);

	/* past the cache's second, both gone from /proc */
	dt_tp_task_comm(named, named, 0, 3000, comm);
	CHECK(strcmp(comm, "tp_static") == 0);
	dt_tp_task_comm(read, read, 0, 3000, comm);
	CHECK(comm[0] == '\0');
	/* a record older than the rename: still no other name */
	dt_tp_task_comm(named, named, 0, 500, comm);
	CHECK(strcmp(comm, "tp_static") == 0);
	/* the tid as another process's (a pid reused): not its name */
	dt_tp_task_comm(named + 1, named, 0, 3000, comm);
	CHECK(comm[0] == '\0');

	forks();

	return unit_done();
}
