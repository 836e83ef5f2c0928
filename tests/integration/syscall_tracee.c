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
 *	One thread calls getpid() N times, and on until its ring counts a
 *	recursion (20 s at most), while signals whose handler also calls
 *	getpid() rain on it; prints "S <calls> <handler calls> <signals>".
 *
 * syscall_tracee jump
 *	One thread calls getpid() while signals rain on it; a handler
 *	that finds it interrupted this library's code (the preload
 *	library, from /proc/self/maps) either leaves by siglongjmp() or
 *	makes a child with _Fork() that goes on from there and exits 0.
 *	Then the thread calls getppid() every 0.5 ms for 600 ms, with a
 *	5 ms pause at 400 ms; the calls after the pause are counted.
 *	Prints "J <jumps> <forks> <children that failed> <signals>
 *	<calls after the pause> <sec> <nsec>", the last two the realtime
 *	clock in the middle of the pause.
 *
 * syscall_tracee stdio PATH N
 *	Only libc's own system calls, none through an exported wrapper:
 *	N times fopen(PATH) and fclose() in the main thread, in a second
 *	thread and in a fork child, a system("true") (posix_spawn), and a
 *	line through stdio.  Then, last, with write(2) itself, the one
 *	call the hooks see too: "S <child pid> 2" (two writes in all).
 *
 * syscall_tracee burst N
 *	Forks N children as fast as it can (each attaches to dtd from the
 *	fork), prints "C <pid>" for each, then lets them all call getpid()
 *	once and exit; "S <N>" when every child exited 0.
 *
 * syscall_tracee loop IDX
 *	Prints "ready", then serves commands on stdin: "w K" makes K writes
 *	of IDX + 1 bytes to /dev/null and answers "done K" ("g K": K
 *	getppid calls, flat out, the same way); "q" prints the
 *	total and exits with status 10 + IDX.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "userdt/udt_wire.h"

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

static long long
ts_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + b->tv_nsec -
	    a->tv_nsec;
}

#define STORM_NS	20000000000LL	/* give up on a recursion after that */

static volatile sig_atomic_t	storm_done;
static long			storm_handled, storm_calls, storm_iter;
static const volatile uint64_t	*storm_recur;	/* the ring's count */

static void
on_storm(int sig)
{
	(void)sig;
	(void)getpid();
	__atomic_add_fetch(&storm_handled, 1, __ATOMIC_RELAXED);
}

/*
 * The recursion count in the header of our ring: the mapping of the
 * memfd dtd gave the library.  NULL when untraced.
 */
static const volatile uint64_t *
storm_find_recur(void)
{
	char line[4096];
	uintmax_t lo;
	FILE *f;
	const struct udt_ring_hdr *rh = NULL;

	if ((f = fopen("/proc/self/maps", "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, UDT_RING_MEMFD) != NULL &&
		    sscanf(line, "%jx-", &lo) == 1) {
			rh = (const struct udt_ring_hdr *)(uintptr_t)lo;
			break;
		}
	fclose(f);
	if (rh == NULL || rh->rh_magic != UDT_MAGIC)
		return NULL;
	return &rh->rh_recur_total;
}

/*
 * A faster recording is a narrower window for a signal to land in:
 * past the n calls, go on until one has (the ring says so), so that
 * the test's recursion check does not hang on luck.
 */
static volatile pid_t	storm_pid, storm_tid;

static void *
storm_worker(void *arg)
{
	struct timespec t0, now;
	long i, n = *(long *)arg;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	storm_tid = (pid_t)syscall(SYS_gettid);
	for (i = 0;; i++) {
		if (i >= n && (i & 1023) == 0) {
			if (storm_recur == NULL || *storm_recur != 0)
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (ts_ns(&t0, &now) >= STORM_NS)
				break;
		}
		(void)getpid();
		__atomic_store_n(&storm_iter, i + 1, __ATOMIC_RELAXED);
	}
	storm_calls = i;
	storm_done = 1;
	return NULL;
}

/*
 * A thread calls getpid() at least n times while the main thread pelts
 * it with signals whose handler calls getpid() too; some land while the
 * thread is recording.  Prints "S <calls> <handler calls> <signals>".
 */
static int
storm(long n)
{
	struct sigaction sa;
	pthread_t thr;
	long sent = 0, h, it;

	storm_recur = storm_find_recur();
	storm_pid = (pid_t)syscall(SYS_gettid);	/* the main thread's: the pid */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_storm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&thr, NULL, storm_worker, &n) != 0)
		return 2;
	/*
	 * tgkill, not pthread_kill(), which calls getpid() itself: the
	 * count of getpid calls must be the program's own.
	 */
	while (storm_tid == 0)
		sched_yield();
	/*
	 * One at a time: the next once the handler took this one and the
	 * thread's own loop went on after it.  Sent faster than the
	 * handlers run (a slow machine, a user stack walked in each), a
	 * signal waits at every return to the thread's own code, which then
	 * makes no progress for seconds: a livelock, in which a record
	 * reserved stays uncommitted past any bound.
	 */
	while (!storm_done) {
		h = __atomic_load_n(&storm_handled, __ATOMIC_RELAXED);
		it = __atomic_load_n(&storm_iter, __ATOMIC_RELAXED);
		syscall(SYS_tgkill, storm_pid, storm_tid, SIGUSR1);
		sent++;
		while (!storm_done &&
		    (__atomic_load_n(&storm_handled, __ATOMIC_RELAXED) == h ||
		    __atomic_load_n(&storm_iter, __ATOMIC_RELAXED) == it))
			sched_yield();
	}
	pthread_join(thr, NULL);
	printf("S %ld %ld %ld\n", storm_calls, storm_handled, sent);
	return 0;
}

#define JUMP_JUMPS	10
#define JUMP_FORKS	4
#define JUMP_NS		10000000000LL	/* give up on hits after that */

static uintptr_t		jump_lo, jump_hi;	/* the preload's code */
static sigjmp_buf		jump_buf;
static volatile sig_atomic_t	jump_armed, jump_stop, jump_child;
static volatile long		jump_jumps, jump_forks, jump_badkids;
static long			jump_after;	/* the worker's, then main's */
static struct timespec		jump_mid;

#define JUMP_TAIL_NS	600000000LL	/* the getppid() phase */
#define JUMP_GAP_NS	400000000LL	/* the pause, after a stall of the
					   ring (UDT_STUCK_NSEC) is over */
#define JUMP_GAP_LEN	5000000LL
#define JUMP_PACE_NS	500000LL

/* The executable mapping of the library named by LD_PRELOAD. */
static int
jump_find_lib(void)
{
	char line[4096], perms[8], path[4096];
	uintmax_t lo, hi;
	FILE *f;

	if ((f = fopen("/proc/self/maps", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		path[0] = '\0';
		if (sscanf(line, "%jx-%jx %7s %*s %*s %*s %4095s", &lo, &hi,
		    perms, path) == 4 && strchr(perms, 'x') != NULL &&
		    strstr(path, "libuserdt-preload") != NULL) {
			jump_lo = (uintptr_t)lo;
			jump_hi = (uintptr_t)hi;
		}
	}
	fclose(f);
	return jump_lo != 0 ? 0 : -1;
}

static void
on_jump(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	int status;
	pid_t pid;

	(void)sig;
	(void)si;
	/* Not before jump_buf is set: thread start runs our code too. */
	if (!jump_armed || jump_child || pc < jump_lo || pc >= jump_hi)
		return;
	if (jump_forks < JUMP_FORKS && jump_forks <= jump_jumps) {
		/* The child returns into the interrupted recording. */
		if ((pid = _Fork()) == 0) {
			jump_child = 1;
			return;
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    status != 0)
			jump_badkids++;
		jump_forks++;
		return;
	}
	if (jump_jumps < JUMP_JUMPS) {
		jump_jumps++;
		siglongjmp(jump_buf, 1);
	}
}

/*
 * After the storm, getppid() at a steady pace: an abandoned slot that
 * the thread could not give up (a jump inside udt_reserve()) stalls its
 * ring for UDT_STUCK_NSEC, and the events of that time may be lost; the
 * ones after the pause must all arrive.
 */
static void *
jump_worker(void *arg)
{
	struct timespec t0, last, now;
	long long el;

	(void)arg;
	(void)sigsetjmp(jump_buf, 1);
	jump_armed = 1;
	while (!jump_stop) {
		(void)getpid();
		if (jump_child)
			_exit(0);
	}
	clock_gettime(CLOCK_REALTIME, &t0);
	jump_mid = t0;
	jump_mid.tv_nsec += (long)(JUMP_GAP_NS % 1000000000LL +
	    JUMP_GAP_LEN / 2);
	jump_mid.tv_sec += (time_t)(JUMP_GAP_NS / 1000000000LL +
	    jump_mid.tv_nsec / 1000000000L);
	jump_mid.tv_nsec %= 1000000000L;
	last = t0;
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &now);
		if ((el = ts_ns(&t0, &now)) >= JUMP_TAIL_NS)
			break;
		if (ts_ns(&last, &now) < JUMP_PACE_NS ||
		    (el >= JUMP_GAP_NS && el < JUMP_GAP_NS + JUMP_GAP_LEN))
			continue;
		(void)getppid();
		last = now;
		if (el >= JUMP_GAP_NS + JUMP_GAP_LEN)
			jump_after++;
	}
	return NULL;
}

static int
jump(void)
{
	struct sigaction sa;
	struct timespec t0, t;
	pthread_t thr;
	long sent = 0;

	if (jump_find_lib() != 0) {
		fprintf(stderr, "syscall_tracee: no libuserdt-preload mapped\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_jump;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	if (pthread_create(&thr, NULL, jump_worker, NULL) != 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pthread_kill(thr, SIGUSR2);
		sent++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((jump_jumps < JUMP_JUMPS || jump_forks < JUMP_FORKS) &&
	    (t.tv_sec - t0.tv_sec) * 1000000000LL + t.tv_nsec - t0.tv_nsec <
	    JUMP_NS);
	jump_stop = 1;
	pthread_join(thr, NULL);
	printf("J %ld %ld %ld %ld %ld %lld %ld\n", (long)jump_jumps,
	    (long)jump_forks, (long)jump_badkids, sent, jump_after,
	    (long long)jump_mid.tv_sec, jump_mid.tv_nsec);
	return 0;
}

static const char	*stdio_path;
static long		 stdio_n;

static int
stdio_opens(void)
{
	FILE *f;
	long i;

	for (i = 0; i < stdio_n; i++) {
		if ((f = fopen(stdio_path, "re")) == NULL)
			return -1;
		fclose(f);
	}
	return 0;
}

static void *
stdio_thread(void *arg)
{
	*(int *)arg = stdio_opens();
	return NULL;
}

static int
stdio(const char *path, long n)
{
	pthread_t thr;
	pid_t pid;
	char line[64];
	int status, terr = -1, len;

	stdio_path = path;
	stdio_n = n;
	printf("opens\n");
	fflush(stdout);
	if (stdio_opens() != 0 ||
	    pthread_create(&thr, NULL, stdio_thread, &terr) != 0)
		return 2;
	pthread_join(thr, NULL);
	if (terr != 0)
		return 3;
	if ((pid = fork()) == 0)
		_exit(stdio_opens() == 0 ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 4;
	if (system("true") != 0)
		return 5;
	/* The exported wrapper: a marker that follows every other event. */
	len = snprintf(line, sizeof(line), "S %d 2\n", (int)pid);
	if (write(STDOUT_FILENO, line, (size_t)len) != len)
		return 6;
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
		/* g N: getppid flat out, counted here (the lossless tests). */
		if (sscanf(line, "g %ld", &k) == 1) {
			for (i = 0; i < k; i++)
				if (getppid() > 0)
					total++;
		} else if (sscanf(line, "w %ld", &k) != 1)
			return 3;
		else
			for (i = 0; i < k; i++)
				if (write(fd, line, (size_t)idx + 1) ==
				    idx + 1)
					total++;
		printf("done %ld\n", k);
		fflush(stdout);
	}
	return 4;
}

static int
burst(long n)
{
	int go[2], status, bad = 0;
	long i, made;
	char c;
	pid_t pid;

	if (n <= 0 || pipe(go) != 0)
		return 2;
	for (made = 0; made < n; made++) {
		if ((pid = fork()) == 0) {
			close(go[1]);
			/* EOF when the parent has made them all. */
			while (read(go[0], &c, 1) == -1 && errno == EINTR)
				continue;
			_exit(getpid() > 0 ? 0 : 1);
		}
		if (pid < 0)
			break;
		printf("C %d\n", (int)pid);
	}
	fflush(stdout);
	close(go[0]);
	close(go[1]);
	for (i = 0; i < made; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad++;
	if (made != n || bad != 0)
		return 3;
	printf("S %ld\n", n);
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc == 4 && strcmp(argv[1], "calls") == 0)
		return calls(argv[2], strtoul(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "loop") == 0)
		return loop(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "burst") == 0)
		return burst(strtol(argv[2], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "storm") == 0)
		return storm(strtol(argv[2], NULL, 10));
	if (argc == 2 && strcmp(argv[1], "jump") == 0)
		return jump();
	if (argc == 4 && strcmp(argv[1], "stdio") == 0)
		return stdio(argv[2], strtol(argv[3], NULL, 10));
	fprintf(stderr, "usage: syscall_tracee calls PATH N | loop IDX | "
	    "storm N | burst N | jump | stdio PATH N\n");
	return 2;
}
