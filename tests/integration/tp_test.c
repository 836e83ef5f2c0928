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
 * The tracepoint provider through a real device file, against a dtd of
 * our own (FUSE-file front end).  Root only: perf system wide.
 *   tp_test sleep DTD TARGET		on__cpu/off__cpu/sleep of a sleeper
 *   tp_test wakeup DTD TARGET		wakeup names the woken process
 *   tp_test fork DTD TARGET		fork names each child
 *   tp_test comm DTD TARGET		comm of a process gone when read
 *   tp_test syscalls DTD STATIC	raw_syscalls of a static binary
 *   tp_test sysall DTD STATIC	syscall probes without a launcher: a
 *					static binary started before, exactly
 *					(and as bpftrace counts it, if there)
 *   tp_test syslaunch DTD BTRACE DYN
 *					btrace -c: each call of a traced
 *					program once
 *   tp_test fault DTD TARGET		uvm:fault for pages that must fault
 *   tp_test args DTD TARGET		DTIOCGPLIST order, DTIOCGARGS types
 *   tp_test nargs DTD BTRACE		DTIOCGARGS gives dtpi_nargs types for
 *					every probe, btrace -l prints them
 *   tp_test exec DTD TARGET		a Linux event's string argument
 *   tp_test idle DTD TARGET		no perf event, no reader wakeup while
 *					nothing records
 *
 * Knowing every event of the target was read: after the target is
 * reaped at time T, this process causes every probe's event on each CPU
 * (tp_mark); one stamped after T comes after every earlier event of
 * that probe on that CPU (they arrive in order), so once each probe has
 * shown one on each CPU, nothing of the target is still on its way.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "systab.h"

#define TP_MAXCPU	256
#define TP_MAXEV	200000
#define TP_RUN_MS	60000
#define TP_NSLEEP	300
#define TP_NFORK	20
#define TP_NSYS		3000
#define TP_NPAGES	2048

struct tp_probe {
	const char	*tp_func;
	const char	*tp_name;
	uint64_t	 tp_flags;
	uint32_t	 tp_pbn;
};

static const char	*tp_dtd, *tp_target;
static struct dtt_dtd	 tp_dd;
static int		 tp_ncpu;
/* The target's events, in read order, and what it wrote. */
static struct dt_evt	*tp_evs;
static size_t		 tp_nevs;
static char		 tp_out[65536];
static uint64_t		 tp_dropped;
/*
 * When set, tp_run() pushes a filter to dtd with each probe: the
 * events of processes named as this one (its marks) or as the target.
 * For probes that fire for every process's calls, so that a machine
 * making millions of them (a parallel build beside the test) does not
 * fill the rings with events the test would throw away.  What the
 * filter keeps is what the test counts: the path below it is the same.
 * The probes must record the name (DTEVT_EXECNAME): a filter compares
 * what the reader sees.
 */
static bool		 tp_ownfilter;

static uint64_t
ev_ns(const struct dt_evt *ev)
{
	return (uint64_t)ev->dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

static int
pin(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < tp_ncpu; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* A busy loop at SCHED_IDLE on every CPU, so that none idles. */
static pid_t tp_spin[TP_MAXCPU];

static int
spinners_start(void)
{
	struct sched_param sp = { 0 };
	int c;

	if (dtt_busy_start(tp_spin, tp_ncpu, "tp_spin") == -1) {
		dtt_check(false, "spinners: %s", strerror(errno));
		return -1;
	}
	for (c = 0; c < tp_ncpu; c++)
		if (sched_setscheduler(tp_spin[c], SCHED_IDLE, &sp) == -1) {
			dtt_check(false, "SCHED_IDLE: %s", strerror(errno));
			return -1;
		}
	return 0;
}

static uint32_t
probe_pbn(int fd, const char *func, const char *name)
{
	uint32_t pbn = dtt_probe(fd, "tracepoint", func, name);

	dtt_check(pbn != 0, "tracepoint:%s:%s is listed", func, name);
	return pbn;
}

typedef bool	(*tp_keep_fn)(const struct dt_evt *, pid_t target);

static bool
keep_own(const struct dt_evt *ev, pid_t target)
{
	return ev->dtev_pid == target;
}

/*
 * Which events may prove a CPU done (tp_run()); NULL: any.  A probe fed
 * by several kernel events (uvm:fault: user and kernel page faults) has
 * a perf buffer a CPU for each, drained apart, so only an event from the
 * buffer the target's events went to proves anything about them.
 */
static bool (*tp_proof)(const struct dt_evt *);
static unsigned long tp_markpage;	/* tp_mark()'s fresh page */

/*
 * Things that fire every probe tp_run() may enable, done on CPU cpu
 * by this process: a sleep (switch, wakeup), a system call, a fork and
 * an exec, a fault on a fresh page.
 */
static void
tp_mark(int cpu)
{
	struct timespec ms1 = { 0, 1000000 };
	long pg = sysconf(_SC_PAGESIZE);
	char *p;
	pid_t kid;

	pin(cpu);
	nanosleep(&ms1, NULL);
	(void)getppid();
	/* The child execs, for sched:process_exec. */
	if ((kid = fork()) == 0) {
		execl(tp_target, tp_target, "sleep", "0", "0", (char *)NULL);
		_exit(127);
	}
	if (kid > 0)
		waitpid(kid, NULL, 0);
	p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		tp_markpage = (unsigned long)p;
		p[0] = 1;
		munmap(p, (size_t)pg);
	}
	pin(-1);
}

/*
 * DTIOCPRBFILTER: comm == ours || comm == the target's, which the kernel's
 * tracepoint filter takes (a pid would not translate: the kernel's is
 * the thread's), so that perf's buffers never hold the rest.  0 or errno.
 */
static int
tp_filter_own(int fd, uint32_t pbn)
{
	struct dtioc_filter f;
	char comm[DTMAXCOMLEN];
	const char *base = strrchr(tp_target, '/');

	if (prctl(PR_GET_NAME, comm) == -1)
		return errno;
	comm[sizeof(comm) - 1] = '\0';
	memset(&f, 0, sizeof(f));
	f.dtfl_pbn = pbn;
	f.dtfl_nterms = 3;
	f.dtfl_terms[0].dtft_op = DTF_OP_EQ;
	f.dtfl_terms[0].dtft_field = DTF_COMM;
	snprintf(f.dtfl_terms[0].dtft_str, sizeof(f.dtfl_terms[0].dtft_str),
	    "%s", comm);
	f.dtfl_terms[1].dtft_op = DTF_OP_EQ;
	f.dtfl_terms[1].dtft_field = DTF_COMM;
	/* The kernel's comm: the file's name, its first 15 bytes. */
	snprintf(f.dtfl_terms[1].dtft_str, sizeof(f.dtfl_terms[1].dtft_str),
	    "%.15s", base != NULL ? base + 1 : tp_target);
	f.dtfl_terms[2].dtft_op = DTF_OP_OR;
	return ioctl(fd, DTIOCPRBFILTER, &f) == -1 ? errno : 0;
}

/*
 * Enable probes, record, run argv, and keep the events keep() wants in
 * tp_evs and its output in tp_out.  Done when, for every probe, each
 * CPU delivered one of its events stamped after the target was reaped:
 * each probe's events of one CPU arrive in order.  Returns the target's
 * pid, or -1.
 */
static pid_t
tp_run(struct tp_probe *probes, size_t nprobes, char *const argv[],
    tp_keep_fn keep)
{
	static struct dt_evt evs[512];
	static bool proven[8][TP_MAXCPU];
	struct dtioc_stat st;
	uint64_t t = 0, deadline;
	size_t i, j, nproven = 0, outlen = 0;
	ssize_t r;
	long n;
	pid_t pid;
	int fd, p[2], status, c, error;

	tp_nevs = 0;
	memset(proven, 0, sizeof(proven));
	if (nprobes > 8)
		return -1;
	if ((fd = dtt_open(tp_dd.dd_dev)) == -1) {
		dtt_check(false, "open %s: %s", tp_dd.dd_dev, strerror(errno));
		return -1;
	}
	for (i = 0; i < nprobes; i++) {
		if ((probes[i].tp_pbn = probe_pbn(fd, probes[i].tp_func,
		    probes[i].tp_name)) == 0)
			return -1;
		if ((error = dtt_enable(fd, probes[i].tp_pbn,
		    probes[i].tp_flags, 0)) != 0) {
			dtt_check(false, "enable %s: %s", probes[i].tp_name,
			    strerror(error));
			return -1;
		}
		if (tp_ownfilter && (error = tp_filter_own(fd,
		    probes[i].tp_pbn)) != 0) {
			dtt_check(false, "filter %s: %s", probes[i].tp_name,
			    strerror(error));
			return -1;
		}
	}
	if (pipe2(p, O_CLOEXEC) == -1 || dtt_record(fd, 1) != 0) {
		dtt_check(false, "pipe, record: %s", strerror(errno));
		return -1;
	}
	if ((pid = dtt_spawn(argv, NULL, -1, p[1], -1, -1)) == -1) {
		dtt_check(false, "spawn %s: %s", argv[0], strerror(errno));
		return -1;
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + TP_RUN_MS * 1000000ULL;
	while (nproven < nprobes * (size_t)tp_ncpu) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline) {
			dtt_check(false, "target's events within %d ms",
			    TP_RUN_MS);
			break;
		}
		/* Its output, so that it never blocks on the pipe. */
		while ((r = read(p[0], tp_out + outlen,
		    sizeof(tp_out) - 1 - outlen)) > 0)
			outlen += (size_t)r;
		if (t == 0 && waitpid(pid, &status, WNOHANG) == pid) {
			dtt_check(dtt_exited0(status), "%s exits 0 (wait "
			    "status %#x)", argv[0], (unsigned int)status);
			t = dtt_clock_ns(CLOCK_REALTIME);
		}
		if (t != 0)
			for (c = 0; c < tp_ncpu; c++)
				for (j = 0; j < nprobes; j++)
					if (!proven[j][c]) {
						tp_mark(c);
						break;
					}
		n = dtt_read(fd, evs, sizeof(evs) / sizeof(evs[0]), 200);
		if (n < 0 && errno != ETIMEDOUT) {
			dtt_check(false, "read: %s", strerror(errno));
			break;
		}
		for (i = 0; n > 0 && i < (size_t)n; i++) {
			const struct dt_evt *ev = &evs[i];

			for (j = 0; t != 0 && j < nprobes; j++)
				if (ev->dtev_pbn == probes[j].tp_pbn &&
				    ev_ns(ev) > t && ev->dtev_cpu <
				    (unsigned int)tp_ncpu &&
				    !proven[j][ev->dtev_cpu] &&
				    (tp_proof == NULL || tp_proof(ev))) {
					proven[j][ev->dtev_cpu] = true;
					nproven++;
				}
			if (keep(ev, pid) && tp_nevs < TP_MAXEV)
				tp_evs[tp_nevs++] = *ev;
		}
	}
	while ((r = read(p[0], tp_out + outlen, sizeof(tp_out) - 1 -
	    outlen)) > 0)
		outlen += (size_t)r;
	tp_out[outlen] = '\0';
	close(p[0]);
	dtt_record(fd, 0);
	tp_dropped = dtt_stats(fd, &st) == 0 ? st.dtst_dropevt : ~0ULL;
	close(fd);
	return pid;
}

static int
cmp_ts(const void *a, const void *b)
{
	uint64_t x = ev_ns(a), y = ev_ns(b);

	return x < y ? -1 : x > y;
}

static bool
is_kaddr(uint64_t pc)
{
	return pc >= 0xffff800000000000ULL;
}

static void
run_sleep(void)
{
	struct tp_probe pr[] = {
		{ "sched", "off__cpu", DTEVT_KSTACK | DTEVT_EXECNAME, 0 },
		{ "sched", "on__cpu", DTEVT_KSTACK | DTEVT_EXECNAME, 0 },
		{ "sched", "sleep", 0, 0 },
	};
	char n[16], us[16];
	char *argv[] = { (char *)tp_target, "sleep", n, us, NULL };
	unsigned long off = 0, on = 0, sl = 0, bad = 0, kst = 0, same = 0;
	const struct stacktrace *offst = NULL;
	uint32_t last = 0;
	size_t i;
	pid_t pid;

	snprintf(n, sizeof(n), "%d", TP_NSLEEP);
	snprintf(us, sizeof(us), "%d", 2000);
	/*
	 * On the last CPU: there sched_switch misses every switch away
	 * from the idle task, and a sleeper is woken mostly from idle.
	 */
	pin(tp_ncpu - 1);
	pid = tp_run(pr, 3, argv, keep_own);
	pin(-1);
	if (pid == -1)
		return;
	qsort(tp_evs, tp_nevs, sizeof(tp_evs[0]), cmp_ts);
	for (i = 0; i < tp_nevs; i++) {
		const struct dt_evt *ev = &tp_evs[i];

		if (ev->dtev_pbn == pr[2].tp_pbn) {
			sl++;
			continue;
		}
		/* After the exec: before it the child is still ours. */
		if (strcmp(ev->dtev_comm, "tp_target") != 0)
			continue;
		if (ev->dtev_pbn == pr[0].tp_pbn) {
			off++;
			if (ev->dtev_kstack.st_count > 0 &&
			    is_kaddr(ev->dtev_kstack.st_pc[0]))
				kst++;
			offst = &ev->dtev_kstack;
		} else {
			on++;
			/* Back where it went off, as dt(4) shows it. */
			if (offst != NULL && offst->st_count > 0 &&
			    memcmp(offst, &ev->dtev_kstack,
			    sizeof(*offst)) == 0)
				same++;
			offst = NULL;
		}
		/* Each thread's switches alternate: out, in, out... */
		if (ev->dtev_pbn == last)
			bad++;
		last = ev->dtev_pbn;
		if (ev->dtev_tid != pid)
			bad++;
	}
	dtt_check(tp_dropped == 0, "no event dropped (%llu)",
	    (unsigned long long)tp_dropped);
	dtt_check(off >= TP_NSLEEP && off <= TP_NSLEEP * 105 / 100 + 3,
	    "off__cpu %lu times for %d sleeps", off, TP_NSLEEP);
	/*
	 * On every CPU, whatever ran before: on__cpu comes from perf's
	 * switch records, which miss no switch.  Only the exit's switch
	 * out has no switch in after it.
	 */
	dtt_check(on <= off && on + 1 >= off, "on__cpu %lu times, "
	    "paired with off__cpu", on);
	dtt_check(bad == 0, "switches alternate on the target's tid "
	    "(%lu out of order)", bad);
	dtt_check(sl >= TP_NSLEEP && sl <= TP_NSLEEP * 105 / 100 + 3,
	    "sched:sleep %lu times for %d sleeps", sl, TP_NSLEEP);
	dtt_check(kst == off, "every off__cpu has a kernel stack (%lu/%lu)",
	    kst, off);
	dtt_check(same == on, "every on__cpu has the stack its off__cpu had "
	    "(%lu/%lu)", same, on);
}

static bool
keep_woken(const struct dt_evt *ev, pid_t target)
{
	return ev->dtev_args[1] == target;
}

/* Wakeups happen in the waker's context (a timer interrupt here). */
static void
run_wakeup(void)
{
	struct tp_probe pr[] = { { "sched", "wakeup", 0, 0 } };
	char n[16];
	char *argv[] = { (char *)tp_target, "sleep", n, "2000", NULL };
	unsigned long w = 0, bad = 0;
	size_t i;
	pid_t pid;

	snprintf(n, sizeof(n), "%d", TP_NSLEEP);
	/*
	 * The kernels we run on lose tracepoint records (perf record's
	 * too) made in the idle task's context, and a timer's wakeup of a
	 * sleeper runs there when its CPU idles.  Switch records make
	 * on__cpu whole; wakeup has nothing like them.  So no CPU idles
	 * here: a SCHED_IDLE spinner on each, which the woken sleeper
	 * preempts at once.
	 */
	if (spinners_start() == -1) {
		dtt_busy_stop(tp_spin, tp_ncpu);
		return;
	}
	pid = tp_run(pr, 1, argv, keep_woken);
	dtt_busy_stop(tp_spin, tp_ncpu);
	if (pid == -1)
		return;
	for (i = 0; i < tp_nevs; i++) {
		if (tp_evs[i].dtev_pbn != pr[0].tp_pbn)
			continue;
		w++;
		if (tp_evs[i].dtev_args[0] != pid ||
		    tp_evs[i].dtev_args[2] < 0 ||
		    tp_evs[i].dtev_args[2] >= tp_ncpu)
			bad++;
	}
	dtt_check(tp_dropped == 0, "no event dropped");
	dtt_check(w >= TP_NSLEEP && w <= TP_NSLEEP * 105 / 100 + 3,
	    "wakeup names the woken pid %lu times for %d sleeps", w,
	    TP_NSLEEP);
	dtt_check(bad == 0, "its tid is arg0, a CPU arg2 (%lu bad)", bad);
}

static void
run_fork(void)
{
	struct tp_probe pr[] = { { "sched", "fork", 0, 0 } };
	char n[16];
	char *argv[] = { (char *)tp_target, "fork", n, NULL };
	long kids[TP_NFORK];
	unsigned long seen[TP_NFORK] = { 0 }, other = 0;
	char *line, *save = NULL;
	size_t i, j, nk = 0;

	snprintf(n, sizeof(n), "%d", TP_NFORK);
	if (tp_run(pr, 1, argv, keep_own) == -1)
		return;
	for (line = strtok_r(tp_out, "\n", &save); line != NULL &&
	    nk < TP_NFORK; line = strtok_r(NULL, "\n", &save))
		kids[nk++] = atol(line);
	dtt_check(nk == TP_NFORK, "%zu children reported", nk);
	for (i = 0; i < tp_nevs; i++) {
		if (tp_evs[i].dtev_pbn != pr[0].tp_pbn)
			continue;
		for (j = 0; j < nk; j++)
			if (tp_evs[i].dtev_args[1] == kids[j] &&
			    tp_evs[i].dtev_args[0] == kids[j])
				break;
		if (j < nk)
			seen[j]++;
		else
			other++;
	}
	for (j = 0; j < nk && seen[j] == 1; j++)
		continue;
	dtt_check(nk > 0 && j == nk, "fork, in the parent, names each child "
	    "once (tid and pid)");
	dtt_check(other == 0, "and no other (%lu)", other);
}

/*
 * The name on the events of a process that is gone when dtd reads them,
 * where /proc no longer knows it: dtd is stopped while the target runs.
 * The target is forked before the device is open (closing the device at
 * its exec would wait for dtd), and pinned: its exec's name and its forks
 * are then in one CPU's buffer, in order.
 */
static void
run_comm(void)
{
	static struct dt_evt evs[512];
	unsigned long forks = 0, named = 0;
	uint64_t deadline;
	uint32_t pbn;
	pid_t pid;
	long n, i;
	int fd, go[2], status = -1;

	if (pipe2(go, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
		dtt_check(false, "pipe, fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		char c;

		if (pin(0) == -1 || read(go[0], &c, 1) != 1 ||
		    (fd = open("/dev/null", O_WRONLY)) == -1 ||
		    dup2(fd, STDOUT_FILENO) == -1)
			_exit(126);
		execl(tp_target, tp_target, "fork", "3", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	if ((fd = dtt_open(tp_dd.dd_dev)) == -1 ||
	    (pbn = probe_pbn(fd, "sched", "fork")) == 0 ||
	    !dtt_check(dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) == 0 &&
	    dtt_record(fd, 1) == 0, "enable fork, record")) {
		close(go[1]);
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
		return;
	}
	kill(tp_dd.dd_pid, SIGSTOP);
	if (write(go[1], "x", 1) == 1)
		status = dtt_wait(pid, TP_RUN_MS);
	kill(tp_dd.dd_pid, SIGCONT);
	close(go[1]);
	if (!dtt_check(dtt_exited0(status), "%s exits 0", tp_target))
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + TP_RUN_MS * 1000000ULL;
	while (forks < 3 && dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
		n = dtt_read(fd, evs, sizeof(evs) / sizeof(evs[0]), 200);
		for (i = 0; i < n; i++) {
			if (evs[i].dtev_pbn != pbn || evs[i].dtev_pid != pid)
				continue;
			forks++;
			named += strcmp(evs[i].dtev_comm, "tp_target") == 0;
		}
	}
	dtt_record(fd, 0);
	close(fd);
	dtt_check(forks == 3, "its 3 forks (%lu)", forks);
	dtt_check(named == forks, "each named tp_target, as at its exec "
	    "(%lu of %lu)", named, forks);
}

static void
run_syscalls(void)
{
	/* The name, which the filter (tp_ownfilter) compares. */
	struct tp_probe pr[] = {
		{ "raw_syscalls", "sys_enter", DTEVT_EXECNAME, 0 },
		{ "raw_syscalls", "sys_exit", DTEVT_EXECNAME, 0 },
	};
	char n[16];
	char *argv[] = { (char *)tp_target, n, NULL };
	unsigned long enter = 0, exitok = 0;
	int num = systab_lookup("getppid");
	size_t i;
	pid_t pid;

	snprintf(n, sizeof(n), "%d", TP_NSYS);
	if (!dtt_check(num == 39, "getppid is OpenBSD's 39"))
		return;
	tp_ownfilter = true;
	pid = tp_run(pr, 2, argv, keep_own);
	tp_ownfilter = false;
	if (pid == -1)
		return;
	for (i = 0; i < tp_nevs; i++) {
		const struct dt_evt *ev = &tp_evs[i];

		if (ev->dtev_args[0] != num)
			continue;
		if (ev->dtev_pbn == pr[0].tp_pbn)
			enter++;
		else if (ev->dtev_pbn == pr[1].tp_pbn &&
		    ev->dtev_args[1] == getpid())
			exitok++;
	}
	dtt_check(tp_dropped == 0, "no event dropped (%llu)",
	    (unsigned long long)tp_dropped);
	dtt_check(enter == TP_NSYS, "sys_enter: %lu getppid calls of %d",
	    enter, TP_NSYS);
	dtt_check(exitok == TP_NSYS, "sys_exit: %lu return our pid", exitok);
}

/*
 * The syscall probes' kernel feed (dt_tp_ksys.c).  Done when this
 * process, pinned to each CPU in turn after the target said it was
 * done, has seen its own getppid entry from every CPU: each CPU's
 * events come in order, and the reader merges them by time.
 */
static bool
sys_drain(int fd, uint32_t pbn, pid_t target, uint32_t pbent,
    uint32_t pbret, unsigned long *ent, unsigned long *ret,
    unsigned long *bad, uint64_t after)
{
	static struct dt_evt evs[512];
	static bool proven[TP_MAXCPU];
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    TP_RUN_MS * 1000000ULL;
	int c, nproven = 0;
	long n, i;

	memset(proven, 0, sizeof(proven));
	while (nproven < tp_ncpu) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return dtt_check(false, "own events within %d ms",
			    TP_RUN_MS);
		for (c = 0; c < tp_ncpu; c++)
			if (!proven[c]) {
				pin(c);
				(void)getppid();
				pin(-1);
			}
		if ((n = dtt_read(fd, evs, 512, 200)) < 0 &&
		    errno != ETIMEDOUT)
			return dtt_check(false, "read: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			const struct dt_evt *ev = &evs[i];

			if (ev->dtev_pid == getpid() && ev->dtev_pbn == pbn &&
			    ev_ns(ev) > after && ev->dtev_cpu <
			    (unsigned int)tp_ncpu && !proven[ev->dtev_cpu]) {
				proven[ev->dtev_cpu] = true;
				nproven++;
			}
			if (ev->dtev_pid != target)
				continue;
			if (ev->dtev_pbn == pbent)
				(*ent)++;
			else if (ev->dtev_pbn == pbret)
				(*ret)++;
			/* getppid returns us; a static binary's comm. */
			if (ev->dtev_tid != target ||
			    strcmp(ev->dtev_comm, "tp_static") != 0 ||
			    (ev->dtev_pbn == pbret &&
			    (ev->dtev_retval[0] != getpid() ||
			    ev->dtev_error != 0)))
				(*bad)++;
		}
	}
	return true;
}

/*
 * bpftrace's count of target's getppid calls, started before it calls:
 * -1 where bpftrace is missing or will not attach (then not compared).
 */
static pid_t
bpf_start(pid_t target, int *outfd, char *path, size_t len)
{
	char prog[200];
	/* The shell finds bpftrace in PATH; exec keeps its pid ours. */
	char *argv[] = { "/bin/sh", "-c", prog, NULL };
	char buf[256];
	uint64_t deadline;
	ssize_t r;
	pid_t pid;

	snprintf(prog, sizeof(prog), "exec bpftrace -e 'tracepoint:syscalls:"
	    "sys_enter_getppid /pid == %d/ { @ = count(); }'", (int)target);
	snprintf(path, len, "%s/bpftrace.out", tp_dd.dd_dir);
	if ((*outfd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	if ((pid = dtt_spawn(argv, NULL, -1, *outfd, *outfd, -1)) == -1)
		return -1;
	/* It says "Attaching 1 probe..." once its probe is in. */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 30000000000ULL;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
		r = pread(*outfd, buf, sizeof(buf) - 1, 0);
		buf[r > 0 ? r : 0] = '\0';
		if (strstr(buf, "Attaching") != NULL)
			return pid;
		if (dtt_wait(pid, 10) != -1) {
			/* It ended: no bpftrace here, or none that works. */
			fprintf(stderr, "%s", buf);
			return -1;
		}
	}
	dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	return -1;
}

static long
bpf_count(pid_t pid, int outfd)
{
	char buf[4096], *p;
	ssize_t r;
	long n = -1;

	if (dtt_stop(pid, SIGINT, 30000) == -1)
		return -1;
	r = pread(outfd, buf, sizeof(buf) - 1, 0);
	buf[r > 0 ? r : 0] = '\0';
	if ((p = strstr(buf, "@: ")) != NULL)
		n = atol(p + 3);
	return n;
}

/*
 * syscall:getppid:entry and return without a launcher: every call of a
 * static binary started before the trace, exactly once, as bpftrace
 * counts them, with comm, tid, result and errno.
 */
static void
run_sysall(void)
{
	char n[16], path[512], out[64];
	char *argv[] = { (char *)tp_target, n, "wait", NULL };
	unsigned long ent = 0, ret = 0, bad = 0;
	uint32_t pbent, pbret;
	int fd, in[2], op[2], bfd = -1;
	pid_t pid, bpid = -1;
	long bn;
	ssize_t r;
	size_t len = 0;
	uint64_t after;

	snprintf(n, sizeof(n), "%d", TP_NSYS);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(op, O_CLOEXEC) == -1)
		return (void)dtt_check(false, "pipe: %s", strerror(errno));
	/* Started first, outside any launcher; it waits for its input. */
	if ((pid = dtt_spawn(argv, NULL, in[0], op[1], -1, -1)) == -1)
		return (void)dtt_check(false, "spawn: %s", strerror(errno));
	close(in[0]);
	close(op[1]);
	if ((fd = dtt_open(tp_dd.dd_dev)) == -1)
		return (void)dtt_check(false, "open: %s", strerror(errno));
	pbent = dtt_probe(fd, "syscall", "sys%39", "entry");
	pbret = dtt_probe(fd, "syscall", "sys%39", "return");
	if (!dtt_check(pbent != 0 && pbret != 0, "syscall:getppid listed") ||
	    dtt_enable(fd, pbent, DTEVT_EXECNAME | DTEVT_FUNCARGS, 0) != 0 ||
	    dtt_enable(fd, pbret, DTEVT_EXECNAME, 0) != 0 ||
	    dtt_record(fd, 1) != 0) {
		dtt_check(false, "enable, record: %s", strerror(errno));
		goto out;
	}
	bpid = bpf_start(pid, &bfd, path, sizeof(path));
	if (bpid == -1)
		fprintf(stderr, "tp_test: no bpftrace to compare with\n");
	if (write(in[1], "g", 1) != 1)
		goto out;
	while (len < 5 && (r = read(op[0], out + len, 5 - len)) > 0)
		len += (size_t)r;
	if (!dtt_check(len == 5, "the target made its calls"))
		goto out;
	after = dtt_clock_ns(CLOCK_REALTIME);
	sys_drain(fd, pbent, pid, pbent, pbret, &ent, &ret, &bad, after);
	{
		struct dtioc_stat st;

		/*
		 * Said, not checked: the probe sees every process's
		 * getppid(), and another program of the machine calling it
		 * flat out (50838 dropped once, beside a helper's bench)
		 * fills perf's buffers with its own.  Whether the target's
		 * were lost the exact counts below say.
		 */
		if (dtt_stats(fd, &st) == 0)
			printf("# the machine's events dropped: %llu\n",
			    (unsigned long long)st.dtst_dropevt);
	}
	dtt_check(ent == TP_NSYS, "entry: %lu of its %d calls", ent, TP_NSYS);
	dtt_check(ret == TP_NSYS, "return: %lu of its %d calls", ret,
	    TP_NSYS);
	dtt_check(bad == 0, "comm, tid, result and errno right (%lu not)",
	    bad);
	if (bpid != -1) {
		/*
		 * Ours is exact (the target counts its own calls, above).
		 * bpftrace may start counting a little after it says it is
		 * attached (2700 of 3000 seen here), never the other way:
		 * it must not see a call we did not.
		 */
		bn = bpf_count(bpid, bfd);
		dtt_check(bn > 0 && bn <= (long)ent, "bpftrace counts %ld, we "
		    "%lu", bn, ent);
	}
out:
	if (bfd != -1)
		close(bfd);
	dtt_record(fd, 0);
	close(fd);
	close(in[1]);
	close(op[0]);
	dtt_check(dtt_exited0(dtt_wait(pid, 10000)), "the target exits 0");
}

/* The value after "@[NAME]: " in out, or -1. */
static long
map_value(const char *out, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "@[%s]: ", name);
	if ((p = strstr(out, key)) == NULL)
		return -1;
	return atol(p + strlen(key));
}

/*
 * The same script under btrace -c, which keeps its command's tree: a
 * dynamic program, which the library records, is counted once a call
 * (the kernel's copy goes).  tp_target is BTRACE here, DYN the program.
 * (A static program exec'd by the traced shell is counted by neither:
 * its pid stays the attached shell's until it exits; see
 * providers/syscall/dtd/dt_sys_kern.c.)
 */
static void
run_syslaunch(const char *dyn)
{
	char cmd[1024], outp[512], out[8192];
	char *argv[] = { (char *)tp_target, "-d", tp_dd.dd_dev, "-c", cmd,
	    "-e", "syscall:getppid:entry { @[comm] = count(); }", NULL };
	ssize_t r;
	size_t len = 0;
	pid_t pid;
	int fd, status;
	long v;

	/* The command's library finds this dtd. */
	setenv("USERDT_SOCKET", tp_dd.dd_sock, 1);
	snprintf(cmd, sizeof(cmd), "%s getppid %d", dyn, TP_NSYS);
	snprintf(outp, sizeof(outp), "%s/btrace.out", tp_dd.dd_dir);
	if ((fd = open(outp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return (void)dtt_check(false, "%s: %s", outp, strerror(errno));
	pid = dtt_spawn(argv, NULL, -1, fd, -1, -1);
	status = pid == -1 ? -1 : dtt_wait(pid, TP_RUN_MS);
	if (pid != -1 && status == -1)
		dtt_stop(pid, SIGTERM, DTT_EXIT_MS);
	while (len < sizeof(out) - 1 && (r = pread(fd, out + len,
	    sizeof(out) - 1 - len, (off_t)len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(fd);
	dtt_check(dtt_exited0(status), "btrace -c exits 0");
	v = map_value(out, "tp_target");
	if (!dtt_check(v == TP_NSYS, "btrace -c: %ld getppid entries of %d "
	    "calls", v, TP_NSYS))
		fprintf(stderr, "%s", out);
}

/* Our marker's user fault: from the buffer the target's faults use. */
static bool
proof_markfault(const struct dt_evt *ev)
{
	return ev->dtev_pid == getpid() &&
	    (unsigned long)ev->dtev_args[0] == tp_markpage;
}

static void
run_fault(void)
{
	struct tp_probe pr[] = { { "uvm", "fault", 0, 0 } };
	char n[16];
	char *argv[] = { (char *)tp_target, "fault", n, NULL };
	unsigned long addr = 0, len = 0, in = 0, bad = 0;
	size_t i;
	pid_t pid;

	snprintf(n, sizeof(n), "%d", TP_NPAGES);
	tp_proof = proof_markfault;
	pid = tp_run(pr, 1, argv, keep_own);
	tp_proof = NULL;
	if (pid == -1)
		return;
	if (!dtt_check(sscanf(tp_out, "%lx %lx", &addr, &len) == 2,
	    "the target's mapping"))
		return;
	for (i = 0; i < tp_nevs; i++) {
		const struct dt_evt *ev = &tp_evs[i];

		if ((unsigned long)ev->dtev_args[0] < addr ||
		    (unsigned long)ev->dtev_args[0] >= addr + len)
			continue;
		in++;
		/* Not present (VM_FAULT_INVALID), for writing. */
		if (ev->dtev_args[1] != 0 || ev->dtev_args[2] != 2)
			bad++;
	}
	dtt_check(tp_dropped == 0, "no event dropped");
	dtt_check(in >= TP_NPAGES && in <= TP_NPAGES + 16,
	    "uvm:fault %lu times in %d fresh pages", in, TP_NPAGES);
	dtt_check(bad == 0, "each a write to a missing page (%lu not)", bad);
}

/* A Linux event's string field, when the open asks for strings. */
static void
run_exec(void)
{
	struct tp_probe pr[] = { { "sched", "process_exec",
	    DTEVT_STRINGS | DTEVT_EXECNAME, 0 } };
	char *argv[] = { (char *)tp_target, "sleep", "1", "1", NULL };
	const unsigned char *a;
	size_t i, found = 0;

	if (tp_run(pr, 1, argv, keep_own) == -1)
		return;
	for (i = 0; i < tp_nevs; i++) {
		if (tp_evs[i].dtev_pbn != pr[0].tp_pbn)
			continue;
		a = DTEV_STR_AREA(&tp_evs[i]);
		/* filename is the first field: argument 0. */
		if (tp_evs[i].dtev_kstack.st_count == 0 &&
		    (a[0] & DTEV_STR_ARG) == 1 &&
		    a[1] == strlen(tp_target) &&
		    memcmp(a + DTEV_STR_HDR, tp_target, a[1]) == 0 &&
		    strcmp(tp_evs[i].dtev_comm, "tp_target") == 0)
			found++;
	}
	dtt_check(found == 1, "process_exec carries the path as arg0's "
	    "string (%zu)", found);
}

static void
check_args(int fd, const char *func, const char *name, size_t n,
    const char *const types[])
{
	struct dtioc_arg_info ai[DTMAXARGTYPES];
	struct dtioc_arg dtar;
	uint32_t pbn = probe_pbn(fd, func, name);
	size_t i, ok = 0;

	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = pbn;
	dtar.dtar_size = sizeof(ai);
	dtar.dtar_args = ai;
	if (!dtt_check(ioctl(fd, DTIOCGARGS, &dtar) == 0, "DTIOCGARGS %s",
	    name))
		return;
	for (i = 0; i < n && i < DTMAXARGTYPES; i++)
		ok += ai[i].dtai_pbn == pbn && ai[i].dtai_argn == i &&
		    strcmp(ai[i].dtai_argtype, types[i]) == 0;
	dtt_check(dtar.dtar_size == n * sizeof(struct dtioc_arg) && ok == n,
	    "%s:%s: %zu types as dt(4) gives them", func, name, n);
}

static void
run_args(void)
{
	static const char *const off[] = { "pid_t", "pid_t" };
	static const char *const wk[] = { "pid_t", "pid_t", "int" };
	static const char *const flt[] = { "vaddr_t", "vm_fault_t",
	    "vm_prot_t" };
	static const char *const sys[] = { "register_t" };
	static const char *const ex[] = { "char *", "pid_t", "pid_t" };
	struct dtioc_probe_info *pi;
	struct dtioc_arg_info ai[1];
	struct dtioc_arg dtar;
	size_t n, i, firsttp = 0, lastsys = 0;
	int fd;

	if ((fd = dtt_open(tp_dd.dd_dev)) == -1 ||
	    (pi = dtt_plist(fd, &n)) == NULL) {
		dtt_check(false, "open, GPLIST: %s", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(pi[i].dtpi_prov, "syscall") == 0)
			lastsys = pi[i].dtpi_pbn;
		if (firsttp == 0 && strcmp(pi[i].dtpi_prov, "tracepoint") == 0)
			firsttp = pi[i].dtpi_pbn;
	}
	dtt_check(firsttp > lastsys && lastsys > 2, "tracepoints come after "
	    "syscall (%zu > %zu), as in dt(4)", firsttp, lastsys);
	free(pi);
	check_args(fd, "sched", "off__cpu", 2, off);
	check_args(fd, "sched", "wakeup", 3, wk);
	check_args(fd, "sched", "fork", 3, wk);
	check_args(fd, "uvm", "fault", 3, flt);
	check_args(fd, "raw_syscalls", "sys_enter", 1, sys);
	check_args(fd, "sched", "process_exec", 3, ex);
	check_args(fd, "sched", "on__cpu", 0, NULL);
	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = probe_pbn(fd, "sched", "off__cpu");
	dtar.dtar_size = sizeof(ai);
	dtar.dtar_args = ai;
	dtt_check(ioctl(fd, DTIOCGARGS, &dtar) == -1 && errno == ENOSPC,
	    "DTIOCGARGS with room for one of two: ENOSPC");
	close(fd);
}

/*
 * What OpenBSD's btrace relies on for every probe of the list: it
 * allocates dtpi_nargs entries, asks DTIOCGARGS for that many and prints
 * as many types with -l.  A tracepoint must answer with exactly
 * dtpi_nargs named types (a Linux event may have up to DTMAXFUNCARGS,
 * more than dt(4)'s DTMAXARGTYPES); any other probe with none, as dt(4)
 * does.  Returns how many tracepoints have more than DTMAXARGTYPES.
 */
static size_t
nargs_ioctl(int fd, const struct dtioc_probe_info *pi, size_t n,
    size_t *bad)
{
	struct dtioc_arg_info ai[DTMAXFUNCARGS + 1];
	struct dtioc_arg dtar;
	size_t i, j, many = 0;
	bool tp, ok;

	for (i = 0; i < n; i++) {
		tp = strcmp(pi[i].dtpi_prov, "tracepoint") == 0;
		/* One spare entry: nothing may be written past nargs. */
		memset(ai, 0xa5, sizeof(ai));
		memset(&dtar, 0, sizeof(dtar));
		dtar.dtar_pbn = pi[i].dtpi_pbn;
		dtar.dtar_size = pi[i].dtpi_nargs * sizeof(ai[0]);
		dtar.dtar_args = ai;
		ok = pi[i].dtpi_nargs <= DTMAXFUNCARGS &&
		    ioctl(fd, DTIOCGARGS, &dtar) == 0 &&
		    dtar.dtar_size == (tp ? pi[i].dtpi_nargs : 0) *
		    sizeof(struct dtioc_arg) &&
		    ((unsigned char *)&ai[tp ? pi[i].dtpi_nargs : 0])[0] ==
		    0xa5;
		for (j = 0; ok && tp && j < pi[i].dtpi_nargs; j++)
			ok = ai[j].dtai_pbn == pi[i].dtpi_pbn &&
			    ai[j].dtai_argn == j &&
			    memchr(ai[j].dtai_argtype, '\0', DTNAMESIZE) !=
			    NULL && ai[j].dtai_argtype[0] != '\0';
		if (!ok) {
			if ((*bad)++ < 10)
				fprintf(stderr, "%s:%s:%s: %u args, "
				    "DTIOCGARGS size %zu\n", pi[i].dtpi_prov,
				    pi[i].dtpi_func, pi[i].dtpi_name,
				    pi[i].dtpi_nargs, dtar.dtar_size);
			continue;
		}
		if (tp && pi[i].dtpi_nargs > DTMAXARGTYPES)
			many++;
	}
	return many;
}

/*
 * Our btrace -l: one line per probe, "tracepoint:F:N(t, ...)" with one
 * non-empty type per argument.  Returns the lines that are not.
 */
static size_t
nargs_list(const struct dtioc_probe_info *pi, size_t n, size_t *seen)
{
	char out[sizeof(tp_dd.dd_dir) + 16], want[3 * DTNAMESIZE + 4];
	char *argv[] = { (char *)tp_target, "-d", tp_dd.dd_dev, "-l", NULL };
	char *buf = NULL, *line, *p, *save;
	size_t i, len = 0, cap = 0, bad = 0, commas;
	ssize_t r;
	pid_t pid;
	int fd, status;

	snprintf(out, sizeof(out), "%s/list.out", tp_dd.dd_dir);
	if ((fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return n;
	pid = dtt_spawn(argv, NULL, -1, fd, -1, -1);
	status = pid == -1 ? -1 : dtt_wait(pid, TP_RUN_MS);
	if (pid != -1 && status == -1)
		dtt_stop(pid, SIGTERM, DTT_EXIT_MS);
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap * 2 + 65536;
			if ((p = realloc(buf, cap)) == NULL)
				break;
			buf = p;
		}
		if ((r = pread(fd, buf + len, cap - len - 1, (off_t)len)) <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	unlink(out);
	if (buf == NULL || !dtt_check(dtt_exited0(status), "btrace -l exits "
	    "0")) {
		free(buf);
		return n;
	}
	buf[len] = '\0';
	*seen = 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "tracepoint:", 11) != 0)
			continue;
		(*seen)++;
		for (i = 0; i < n; i++) {
			snprintf(want, sizeof(want), "%.16s:%.16s:%.16s(",
			    pi[i].dtpi_prov, pi[i].dtpi_func,
			    pi[i].dtpi_name);
			if (strncmp(line, want, strlen(want)) == 0)
				break;
		}
		p = line + strlen(want);
		commas = 0;
		for (; i < n && *p != '\0' && *p != ')'; p++)
			if (*p == ',')
				commas++;
		if (i == n || strcmp(p, ")") != 0 ||
		    (pi[i].dtpi_nargs == 0 ? p != line + strlen(want) :
		    commas + 1 != pi[i].dtpi_nargs) ||
		    strstr(line, "(,") != NULL || strstr(line, ", ,") !=
		    NULL || strstr(line, ", )") != NULL) {
			if (bad++ < 10)
				fprintf(stderr, "btrace -l: %s\n", line);
		}
	}
	free(buf);
	return bad;
}

static void
run_nargs(void)
{
	struct dtioc_probe_info *pi;
	size_t n, i, ntp = 0, many, bad = 0, seen = 0;
	int fd;

	if ((fd = dtt_open(tp_dd.dd_dev)) == -1 ||
	    (pi = dtt_plist(fd, &n)) == NULL) {
		dtt_check(false, "open, GPLIST: %s", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++)
		ntp += strcmp(pi[i].dtpi_prov, "tracepoint") == 0;
	many = nargs_ioctl(fd, pi, n, &bad);
	dtt_check(bad == 0 && ntp > 0, "DTIOCGARGS: a type per argument "
	    "for each of %zu tracepoints, none for the other %zu probes "
	    "(%zu wrong)", ntp, n - ntp, bad);
	dtt_check(many > 0, "%zu tracepoints have more than %d arguments, "
	    "all typed", many, DTMAXARGTYPES);
	bad = nargs_list(pi, n, &seen);
	dtt_check(bad == 0 && seen == ntp, "btrace -l: %zu tracepoint lines "
	    "of %zu, each with its dtpi_nargs types (%zu wrong)", seen, ntp,
	    bad);
	free(pi);
	close(fd);
}

/* perf events dtd holds: none unless something records. */
static int
perf_fds(pid_t pid)
{
	char path[320], link[128];
	struct dirent *de;
	DIR *d;
	ssize_t r;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid,
		    de->d_name);
		if ((r = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[r] = '\0';
		n += strcmp(link, "anon_inode:[perf_event]") == 0;
	}
	closedir(d);
	return n;
}

/*
 * Times dtd's tracepoint reader thread (named dtd-tp) went to sleep, or
 * -1 while it does not exist.
 */
static long
reader_sleeps(pid_t pid)
{
	char path[320], buf[4096];
	struct dirent *de;
	const char *p;
	long n = -1;
	DIR *d;
	int fd;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while (n == -1 && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
		    (int)pid, de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		if (strncmp(buf, "Name:\tdtd-tp\n", 13) == 0 &&
		    (p = strstr(buf, "\nvoluntary_ctxt_switches:")) != NULL)
			n = atol(p + 26);
	}
	closedir(d);
	return n;
}

static void
run_idle(void)
{
	struct timespec ms50 = { 0, 50000000 }, ms300 = { 0, 300000000 };
	uint32_t pbn;
	long sl0, sl1;
	int fd, n, i;

	dtt_check(perf_fds(tp_dd.dd_pid) == 0, "no perf event at start");
	if ((fd = dtt_open(tp_dd.dd_dev)) == -1)
		return;
	pbn = probe_pbn(fd, "sched", "off__cpu");
	dtt_check(dtt_enable(fd, pbn, 0, 0) == 0, "enable off__cpu");
	dtt_check(perf_fds(tp_dd.dd_pid) == 0, "none while only enabled");
	dtt_check(dtt_record(fd, 1) == 0, "record");
	n = perf_fds(tp_dd.dd_pid);
	dtt_check(n == tp_ncpu, "one per CPU while recording (%d)", n);
	dtt_check(dtt_record(fd, 0) == 0, "stop");
	n = perf_fds(tp_dd.dd_pid);
	dtt_check(n == 0, "none after (%d)", n);
	/*
	 * Nothing open, so nothing to flush: once the reader has handled
	 * the close (its count stops moving), it sleeps for good.
	 */
	sl1 = reader_sleeps(tp_dd.dd_pid);
	for (i = 0; i < 20; i++) {
		nanosleep(&ms50, NULL);
		sl0 = sl1;
		if ((sl1 = reader_sleeps(tp_dd.dd_pid)) == sl0)
			break;
	}
	nanosleep(&ms300, NULL);
	sl0 = reader_sleeps(tp_dd.dd_pid);
	dtt_check(sl1 >= 0 && sl0 == sl1, "the reader sleeps while nothing "
	    "records (%ld wakeups in 300 ms)", sl0 - sl1);
	close(fd);
}

int
main(int argc, char *argv[])
{
	static const struct {
		const char	*name;
		void		(*fn)(void);
	} modes[] = {
		{ "sleep", run_sleep }, { "wakeup", run_wakeup },
		{ "fork", run_fork }, { "comm", run_comm },
		{ "syscalls", run_syscalls },
		{ "fault", run_fault }, { "exec", run_exec },
		{ "args", run_args }, { "idle", run_idle },
		{ "nargs", run_nargs }, { "sysall", run_sysall },
		{ "syslaunch", NULL },
	};
	char errbuf[4096];
	size_t i;

	if (argc != 4 && !(argc == 5 && strcmp(argv[1], "syslaunch") == 0)) {
		fprintf(stderr, "usage: tp_test mode dtd target\n");
		return 2;
	}
	tp_dtd = argv[2];
	tp_target = argv[3];
	tp_ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (tp_ncpu > TP_MAXCPU ||
	    tp_ncpu != (int)sysconf(_SC_NPROCESSORS_ONLN)) {
		dtt_check(false, "want 1..%d CPUs, all online", TP_MAXCPU);
		return dtt_done();
	}
	if ((tp_evs = calloc(TP_MAXEV, sizeof(*tp_evs))) == NULL)
		return 1;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			break;
	if (i == sizeof(modes) / sizeof(modes[0])) {
		fprintf(stderr, "tp_test: unknown mode %s\n", argv[1]);
		return 2;
	}
	dtt_tag(argv[1]);
	if (dtt_dtd_init(&tp_dd, "tp_test") == -1 ||
	    dtt_dtd_start(&tp_dd, tp_dtd, (char *[]){ "--no-ksyms",
	    "--syscall-scope", "all", NULL },
	    errbuf, sizeof(errbuf)) == -1) {
		dtt_check(false, "dtd starts: %s", errbuf);
		dtt_dtd_fini(&tp_dd, true);
		return dtt_done();
	}
	if (modes[i].fn != NULL)
		modes[i].fn();
	else
		run_syslaunch(argv[4]);
	dtt_check(dtt_dtd_stop(&tp_dd, SIGTERM) != -1, "dtd stops");
	dtt_dtd_fini(&tp_dd, true);
	free(tp_evs);
	return dtt_done();
}
