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
 * pidreuse: the user's tracee writes its last records and exits, is
 * reaped, and its pid goes to a process of root's before dtd drains the
 * ring.  dtd judges a non-root tracee's image by the owner of /proc/PID
 * (a set-id exec makes it root's); that owner is now another process's,
 * and the tracee's records, all written before it exited, must still
 * reach the reader.  Under load a reused pid is chance (pid_max 32768, a
 * parallel build): here dtd is stopped (SIGSTOP) across the exit, and
 * the pid is taken back at once with clone3's set_tid (root's
 * CAP_SYS_ADMIN), so the case is the same every run.  The tracee renames
 * itself before its last records: dtd, which reads a thread's name from
 * /proc when a record's differs, must not take the new process's name
 * for the tracee's.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "sec_test.h"

#define REUSE_RECS	100	/* written after dtd was stopped */
#define REUSE_COMM	"renamed"	/* the tracee's name for them */
#define REUSE_SQUAT	"squatter"	/* the name of root's process */

/*
 * clone3's arguments up to set_tid_size (CLONE_ARGS_SIZE_VER1, Linux
 * 5.5), spelled here: older headers lack the struct, newer glibc may
 * declare it too.
 */
struct reuse_clone_args {
	uint64_t	ca_flags;
	uint64_t	ca_pidfd;
	uint64_t	ca_child_tid;
	uint64_t	ca_parent_tid;
	uint64_t	ca_exit_signal;
	uint64_t	ca_stack;
	uint64_t	ca_stack_size;
	uint64_t	ca_tls;
	uint64_t	ca_set_tid;
	uint64_t	ca_set_tid_size;
};

/*
 * As the user: get a ring, commit one record (which root waits to read:
 * dtd has then proven the ring this image's), wait for root's go on
 * gofd, take the name REUSE_COMM, commit REUSE_RECS more and exit.
 */
static int
reuse_tracee(const char *sock, int gofd)
{
	struct udt_ring_hdr *rh;
	struct udt_welcome w;
	int fds[2], fd, i;
	pid_t pid = getpid();
	char c;

	if ((fd = dtt_tracee_hello(sock, sec_nsys, &w, fds)) == -1)
		return 1;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 2;
	commit_rec(rh, w.uw_nslots, 0, pid, "sec_test");
	if (read(gofd, &c, 1) != 1)
		return 3;
	if (prctl(PR_SET_NAME, REUSE_COMM) != 0)
		return 4;
	for (i = 1; i <= REUSE_RECS; i++)
		commit_rec(rh, w.uw_nslots, (uint64_t)i, pid, REUSE_COMM);
	return 0;
}

/*
 * A child of root's with exactly pid, named REUSE_SQUAT, which lives
 * until we close hold[1]; its pid, or -1 (errno EEXIST: another process
 * took pid first).  The child runs on a copy of our stack, as fork's
 * does, and calls nothing of libc's but system calls' wrappers.
 */
static pid_t
reuse_pid(pid_t pid, const int hold[2])
{
	struct reuse_clone_args ca;
	uint64_t want = (uint64_t)pid;
	long r;
	char c;

	memset(&ca, 0, sizeof(ca));
	ca.ca_exit_signal = SIGCHLD;
	ca.ca_set_tid = (uint64_t)(uintptr_t)&want;
	ca.ca_set_tid_size = 1;
	if ((r = syscall(SYS_clone3, &ca, sizeof(ca))) == 0) {
		close(hold[1]);
		(void)prctl(PR_SET_NAME, REUSE_SQUAT);
		while (read(hold[0], &c, 1) == -1 && errno == EINTR)
			continue;
		_exit(0);
	}
	return (pid_t)r;
}

/* Whether dtd (our child) has stopped, every thread of it. */
static bool
dtd_stopped(pid_t dtd)
{
	int status;

	return waitpid(dtd, &status, WUNTRACED) == dtd && WIFSTOPPED(status);
}

/*
 * Read pid's events until want have come, or none for a second (dtd
 * discarded the rest, or lost them); how many came, and in *named how
 * many of them carry the name REUSE_COMM.
 */
static int
reuse_count(int fd, pid_t pid, int want, int *named)
{
	struct dt_evt evs[64];
	int got = 0, k;
	long n;

	*named = 0;
	while (got < want && (n = dtt_read(fd, evs, 64, 1000)) > 0)
		for (k = 0; k < n; k++) {
			if (evs[k].dtev_pid != pid)
				continue;
			got++;
			*named += strcmp(evs[k].dtev_comm, REUSE_COMM) == 0;
		}
	return got;
}

void
run_pidreuse(void)
{
	struct dtt_dtd dd;
	struct dt_evt evs[64];
	struct udt_stats us0, us;
	struct stat st;
	char path[32];
	uint64_t deadline;
	int fd = -1, go[2] = { -1, -1 }, hold[2] = { -1, -1 }, seen = 0, k;
	int status, got, named;
	bool stopped = false, reaped = false;
	pid_t tracee = -1, squat = -1;
	long n;

	if (!dtt_check((fd = getpid_dtd(&dd)) != -1, "a private dtd; root "
	    "records getpid"))
		goto out;
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0)
		goto out;
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(fd);
		close(go[1]);
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(reuse_tracee(dd.dd_sock, go[0]));
	}
	close(go[0]);
	go[0] = -1;
	/* Its first record arrives: its ring is proven its image's. */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while (!seen && dtt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	    (n = dtt_read(fd, evs, 64, 5000)) > 0)
		for (k = 0; k < n; k++)
			seen |= evs[k].dtev_pid == tracee;
	if (!dtt_check(seen, "the tracee's first record arrives as pid %d",
	    (int)tracee) || st_ingest_stats(dd.dd_sock, &us0) != 0)
		goto out;

	/* dtd drains nothing until the pid is another's. */
	if (!dtt_check(kill(dd.dd_pid, SIGSTOP) == 0 &&
	    dtd_stopped(dd.dd_pid), "dtd stopped"))
		goto out;
	stopped = true;
	if (write(go[1], "g", 1) != 1)
		goto out;
	status = dtt_wait(tracee, DTT_EXIT_MS);
	reaped = status != -1;
	if (!dtt_check(dtt_exited0(status), "the tracee wrote %d records, "
	    "exited and was reaped (status %#x)", REUSE_RECS, status))
		goto out;
	squat = reuse_pid(tracee, hold);
	snprintf(path, sizeof(path), "/proc/%d", (int)tracee);
	if (!dtt_check(squat == tracee && stat(path, &st) == 0 &&
	    st.st_uid == 0, "pid %d is root's process's now (%s)",
	    (int)tracee, squat == tracee ? "clone3 set_tid" :
	    strerror(errno)))
		goto out;

	kill(dd.dd_pid, SIGCONT);
	stopped = false;
	memset(&us, 0, sizeof(us));
	got = reuse_count(fd, tracee, REUSE_RECS, &named);
	(void)st_ingest_stats(dd.dd_sock, &us);
	dtt_check(got == REUSE_RECS && us.us_garbage == us0.us_garbage,
	    "every record it wrote before it exited reaches the reader "
	    "(%d of %d; %llu discarded)", got, REUSE_RECS,
	    (unsigned long long)(us.us_garbage - us0.us_garbage));
	dtt_check(got > 0 && named == got, "each carries the name it was "
	    "written under, %s, not root's process's (%d of %d)", REUSE_COMM,
	    named, got);
out:
	if (stopped)
		kill(dd.dd_pid, SIGCONT);
	close_fds(hold, 2);
	if (squat > 0)
		dtt_wait(squat, DTT_EXIT_MS);
	/* A reaped tracee's pid is no longer ours to signal. */
	getpid_dtd_end(&dd, fd, reaped ? -1 : tracee);
	close_fds(go, 2);
}
