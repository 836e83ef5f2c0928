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
 * The traced program of the syscall provider's tests, run under dtrun.
 *
 * syscall_tracee calls PATH N
 *	Makes a known list of calls and prints, for every event they must
 *	produce, one manifest line on stdout:
 *	    E <N> <pid> <tid> <comm> <count> <arg>...	entry probe
 *	    R <N> <pid> <tid> <comm> <count> <retval> <errno>	return probe
 *	N is the OpenBSD-style probe number (sys%N).  The calls: openat of
 *	PATH, a read of N bytes, close, an openat failing with ENOENT,
 *	fork with getppid in the child, getpid through syscall(3), vfork,
 *	_Fork and syscall(SYS_fork) children calling getppid,
 *	getpid from a signal handler, and
 *	writes to /dev/null from 8 renamed threads.  A line "X lo hi" gives
 *	the range of the program's code, where every user stack recorded
 *	for getpid must start.
 *
 * syscall_tracee storm N
 *	One thread calls getpid() N times while signals whose handler also
 *	calls getpid() rain on it; prints "S N <handler calls> <signals>".
 *
 * syscall_tracee loop IDX
 *	Prints "ready", then serves commands on stdin: "w K" makes K writes
 *	of IDX + 1 bytes to /dev/null and answers "done K"; "q" prints the
 *	total and exits with status 10 + IDX.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS	8
#define NWRITES		500

/* OpenBSD-style probe numbers, from openbsd-syscalls.tsv. */
#define SYS_FORK	2
#define SYS_READ	3
#define SYS_WRITE	4
#define SYS_CLOSE	6
#define SYS_GETPID	20
#define SYS_GETPPID	39
#define SYS_VFORK	66
#define SYS_OPENAT	321

static const char comm_main[] = "udt-tracee";

static volatile pid_t	sig_ret;
static volatile int	sig_err;
static int		devnull;
static char		wbuf[NTHREADS + 1];

struct worker {
	pthread_t	w_thr;
	int		w_idx;
	pid_t		w_tid;
	long		w_fail;
	char		w_comm[16];
};

static void
on_usr1(int sig)
{
	(void)sig;
	sig_ret = getpid();
	sig_err = errno;
}

static void *
worker(void *arg)
{
	struct worker *w = arg;
	int i;

	snprintf(w->w_comm, sizeof(w->w_comm), "udt-w%d", w->w_idx);
	pthread_setname_np(pthread_self(), w->w_comm);
	w->w_tid = gettid();
	for (i = 0; i < NWRITES; i++)
		if (write(devnull, wbuf, (size_t)w->w_idx + 1) !=
		    w->w_idx + 1)
			w->w_fail++;
	return NULL;
}

/* "X lo hi": this executable's code, from /proc/self/maps. */
static void
text_range(void)
{
	char line[512], exe[256], *p;
	unsigned long lo, hi;
	ssize_t len;
	FILE *f;

	if ((len = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return;
	exe[len] = '\0';
	if ((f = fopen("/proc/self/maps", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		p = strchr(line, '/');
		if (p == NULL || strstr(line, " r-xp ") == NULL ||
		    strncmp(p, exe, strlen(exe)) != 0 ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		printf("X %lu %lu\n", lo, hi);
	}
	fclose(f);
}

static int
calls(const char *path, size_t n)
{
	struct worker ws[NTHREADS];
	struct timespec tb, ta;
	struct sigaction sa;
	char buf[4096], missing[128];
	pid_t pid, tid, child;
	int fd, r, err, status, i;

	if (n > sizeof(buf))
		return 2;
	/* Where our code is: the innermost ustack entry must be in it. */
	text_range();
	/* The comm every event of the main thread must carry. */
	prctl(PR_SET_NAME, comm_main);
	pid = getpid();
	tid = gettid();
	printf("E %d %d %d %s 1\n", SYS_GETPID, pid, tid, comm_main);
	printf("R %d %d %d %s 1 %d 0\n", SYS_GETPID, pid, tid, comm_main, pid);

	/* "T before after": the openat's events must be stamped in between. */
	clock_gettime(CLOCK_REALTIME, &tb);
	fd = openat(AT_FDCWD, path, O_RDONLY, 0);
	clock_gettime(CLOCK_REALTIME, &ta);
	if (fd < 0)
		return 3;
	printf("T %lld %lld\n",
	    (long long)tb.tv_sec * 1000000000 + tb.tv_nsec,
	    (long long)ta.tv_sec * 1000000000 + ta.tv_nsec);
	printf("E %d %d %d %s 1 %d %lu %d %d\n", SYS_OPENAT, pid, tid,
	    comm_main, AT_FDCWD, (unsigned long)path, O_RDONLY, 0);
	printf("R %d %d %d %s 1 %d 0\n", SYS_OPENAT, pid, tid, comm_main, fd);

	r = (int)read(fd, buf, n);
	printf("E %d %d %d %s 1 %d %lu %zu\n", SYS_READ, pid, tid, comm_main,
	    fd, (unsigned long)buf, n);
	printf("R %d %d %d %s 1 %d 0\n", SYS_READ, pid, tid, comm_main, r);

	r = close(fd);
	printf("E %d %d %d %s 1 %d\n", SYS_CLOSE, pid, tid, comm_main, fd);
	printf("R %d %d %d %s 1 %d 0\n", SYS_CLOSE, pid, tid, comm_main, r);

	snprintf(missing, sizeof(missing), "/nonexistent-udt/%d/x", pid);
	r = openat(AT_FDCWD, missing, O_RDONLY, 0);
	err = errno;
	if (r != -1 || err != ENOENT)
		return 4;
	printf("E %d %d %d %s 1 %d %lu %d %d\n", SYS_OPENAT, pid, tid,
	    comm_main, AT_FDCWD, (unsigned long)missing, O_RDONLY, 0);
	printf("R %d %d %d %s 1 -1 %d\n", SYS_OPENAT, pid, tid, comm_main,
	    err);

	fflush(stdout);
	child = fork();
	if (child == -1)
		return 5;
	if (child == 0) {
		pid_t me = getpid(), ppid;

		ppid = getppid();
		printf("R %d %d %d %s 1 0 0\n", SYS_FORK, me, gettid(),
		    comm_main);
		printf("E %d %d %d %s 1\n", SYS_GETPPID, me, gettid(),
		    comm_main);
		printf("R %d %d %d %s 1 %d 0\n", SYS_GETPPID, me, gettid(),
		    comm_main, ppid);
		printf("E %d %d %d %s 1\n", SYS_GETPID, me, gettid(),
		    comm_main);
		printf("R %d %d %d %s 1 %d 0\n", SYS_GETPID, me, gettid(),
		    comm_main, me);
		fflush(stdout);
		_exit(ppid == pid ? 0 : 1);
	}
	printf("E %d %d %d %s 1\n", SYS_FORK, pid, tid, comm_main);
	printf("R %d %d %d %s 1 %d 0\n", SYS_FORK, pid, tid, comm_main,
	    child);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 6;

	/* syscall(3) picks its probes by number. */
	r = (int)syscall(SYS_getpid);
	printf("E %d %d %d %s 1\n", SYS_GETPID, pid, tid, comm_main);
	printf("R %d %d %d %s 1 %d 0\n", SYS_GETPID, pid, tid, comm_main, r);

	/* vfork: the child only calls _exit, as vfork children must. */
	fflush(stdout);
	child = vfork();
	if (child == 0)
		_exit(0);
	if (child == -1 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 11;
	printf("E %d %d %d %s 1\n", SYS_VFORK, pid, tid, comm_main);
	printf("R %d %d %d %s 1 %d 0\n", SYS_VFORK, pid, tid, comm_main,
	    child);
	printf("R %d %d %d %s 1 0 0\n", SYS_VFORK, child, child, comm_main);

	/*
	 * Children made without atfork handlers: _Fork() and a raw fork
	 * through syscall(3).  Each must still get a ring of its own: its
	 * getppid carries its own pid.
	 */
	for (i = 0; i < 2; i++) {
		fflush(stdout);
		child = i == 0 ? _Fork() : (pid_t)syscall(SYS_fork);
		if (child == 0)
			_exit(getppid() == pid ? 0 : 1);
		if (child == -1 || waitpid(child, &status, 0) != child ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 12;
		printf("E %d %d %d %s 1\n", SYS_GETPPID, child, child,
		    comm_main);
		printf("R %d %d %d %s 1 %d 0\n", SYS_GETPPID, child, child,
		    comm_main, pid);
		if (i == 1) {
			printf("E %d %d %d %s 1\n", SYS_FORK, pid, tid,
			    comm_main);
			printf("R %d %d %d %s 1 %d 0\n", SYS_FORK, pid, tid,
			    comm_main, child);
			printf("R %d %d %d %s 1 0 0\n", SYS_FORK, child, child,
			    comm_main);
		}
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	if (sig_ret != pid)
		return 7;
	printf("E %d %d %d %s 1\n", SYS_GETPID, pid, tid, comm_main);
	printf("R %d %d %d %s 1 %d 0\n", SYS_GETPID, pid, tid, comm_main,
	    sig_ret);

	if ((devnull = open("/dev/null", O_WRONLY)) < 0)
		return 8;
	for (i = 0; i < NTHREADS; i++) {
		ws[i].w_idx = i;
		ws[i].w_fail = 0;
		if (pthread_create(&ws[i].w_thr, NULL, worker, &ws[i]) != 0)
			return 9;
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(ws[i].w_thr, NULL);
		if (ws[i].w_fail != 0)
			return 10;
		printf("E %d %d %d %s %d %d %lu %d\n", SYS_WRITE, pid,
		    ws[i].w_tid, ws[i].w_comm, NWRITES, devnull,
		    (unsigned long)wbuf, i + 1);
		printf("R %d %d %d %s %d %d 0\n", SYS_WRITE, pid, ws[i].w_tid,
		    ws[i].w_comm, NWRITES, i + 1);
	}
	fflush(stdout);
	return 0;
}

static volatile sig_atomic_t	storm_done;
static long			storm_handled;

static void
on_storm(int sig)
{
	(void)sig;
	__atomic_add_fetch(&storm_handled, 1, __ATOMIC_RELAXED);
	(void)getpid();
}

static void *
storm_worker(void *arg)
{
	long i, n = *(long *)arg;

	for (i = 0; i < n; i++)
		(void)getpid();
	storm_done = 1;
	return NULL;
}

/*
 * A thread calls getpid() n times while the main thread pelts it with
 * signals whose handler calls getpid() too; some land while the thread
 * is recording.  Prints "S <calls> <handler calls>".
 */
static int
storm(long n)
{
	struct sigaction sa;
	pthread_t thr;
	long sent = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_storm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&thr, NULL, storm_worker, &n) != 0)
		return 2;
	while (!storm_done) {
		pthread_kill(thr, SIGUSR1);
		sent++;
	}
	pthread_join(thr, NULL);
	printf("S %ld %ld %ld\n", n, storm_handled, sent);
	return 0;
}

static int
loop(int idx)
{
	char line[64];
	long total = 0, k, i;
	int fd;

	if ((fd = open("/dev/null", O_WRONLY)) < 0)
		return 2;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (line[0] == 'q') {
			printf("total %ld\n", total);
			fflush(stdout);
			return 10 + idx;
		}
		if (sscanf(line, "w %ld", &k) != 1)
			return 3;
		for (i = 0; i < k; i++)
			if (write(fd, line, (size_t)idx + 1) == idx + 1)
				total++;
		printf("done %ld\n", k);
		fflush(stdout);
	}
	return 4;
}

int
main(int argc, char *argv[])
{
	if (argc == 4 && strcmp(argv[1], "calls") == 0)
		return calls(argv[2], strtoul(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "loop") == 0)
		return loop(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "storm") == 0)
		return storm(strtol(argv[2], NULL, 10));
	fprintf(stderr, "usage: syscall_tracee calls PATH N | loop IDX | "
	    "storm N\n");
	return 2;
}
