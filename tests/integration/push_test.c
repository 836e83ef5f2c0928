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
 * Filters at the source below dtd (issue 22), through a real device
 * file, against a dtd of our own.  Root only (perf system wide).
 *   push_test kern DTD TARGET	tracepoint:raw_syscalls:sys_enter with
 *				two opens' pushed filters (comm; tid)
 *				while a noisy process makes system calls
 *				flat out: each open counts exactly its
 *				target's calls, nothing is lost, and dtd
 *				read far fewer perf records than the
 *				machine made calls (the kernel filtered)
 *   push_test refused DTD TARGET	the same where the kernel refuses
 *				the filter: dtd says so and filters
 *				alone, with the same exact counts
 *   push_test ksys DTD TARGET	the same through the syscall probes'
 *				kernel feed (targets under no launcher)
 *   push_test tree DTD TARGET	one open's events of a process tree
 *				alone (DTEVT_TREE), the kernel's choice,
 *				beside another open of the same probe
 *				that reads everyone
 *   push_test hook DTD TARGET PRELOAD	syscall:close:entry with two opens'
 *				filters (pid; arg0) over three traced
 *				processes: each open reads exactly its
 *				own, what it rejects is counted as
 *				filtered, and the hooks did not record
 *				the calls neither open wants
 *
 * Knowing every event of a target was read: its exit_group is its last
 * system call, and a reader gets events in time order across CPUs
 * (design decision 18), so once it is read nothing older is on its way.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "syscall_util.h"
#include "systab.h"

#define PT_NCALLS	500	/* a perf buffer holds them all */
#define PT_NEVS		4096
#define PT_NOISE	1000000	/* noisy calls made first */
#define PT_READ_MS	30000

static const char	*pt_dtd, *pt_target;
static struct dtt_dtd	 pt_dd;

/* Enable pbn on a new open with filter t and record: the fd, or -1. */
static int
pt_open(uint32_t pbn, struct dtioc_filter_term t)
{
	struct dtioc_filter f;
	int fd, error;

	if ((fd = dtt_open(pt_dd.dd_dev)) == -1) {
		dtt_check(false, "open: %s", strerror(errno));
		return -1;
	}
	memset(&f, 0, sizeof(f));
	f.dtfl_pbn = pbn;
	f.dtfl_nterms = 1;
	f.dtfl_terms[0] = t;
	if ((error = dtt_enable(fd, pbn, DTEVT_EXECNAME, 0)) != 0 ||
	    (ioctl(fd, DTIOCPRBFILTER, &f) == -1 && (error = errno)) ||
	    (error = dtt_record(fd, 1)) != 0) {
		dtt_check(false, "enable, filter, record: %s",
		    strerror(error));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A new open recording syscall probes close (or another call; filter
 * t) and exit, with flags (DTEVT_LAUNCHED: the launched processes'
 * alone): the fd, or -1.
 */
static int
pt_open_sys(uint32_t pbn_close, uint32_t pbn_exit,
    struct dtioc_filter_term t, uint64_t flags)
{
	struct dtioc_filter f;
	int fd, error;

	if ((fd = dtt_open(pt_dd.dd_dev)) == -1) {
		dtt_check(false, "open: %s", strerror(errno));
		return -1;
	}
	memset(&f, 0, sizeof(f));
	f.dtfl_pbn = pbn_close;
	f.dtfl_nterms = 1;
	f.dtfl_terms[0] = t;
	/* comm as the reader gets it: else not dtd's to judge */
	if ((error = dtt_enable(fd, pbn_close, DTEVT_FUNCARGS |
	    DTEVT_EXECNAME | flags, 0)) != 0 || (error = dtt_enable(fd, pbn_exit, flags, 0)) != 0 ||
	    (ioctl(fd, DTIOCPRBFILTER, &f) == -1 && (error = errno)) ||
	    (error = dtt_record(fd, 1)) != 0) {
		dtt_check(false, "enable, filter, record: %s",
		    strerror(error));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A target making n calls of each kind (closes of fd), that waits on a
 * pipe before its exec (with env, or ours): its pid.
 */
static pid_t
pt_spawn(int *go, long n, long fd, char **env)
{
	char arg[32], farg[32];
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p) == -1)
		return -1;
	snprintf(arg, sizeof(arg), "%ld", n);
	snprintf(farg, sizeof(farg), "%ld", fd);
	if ((pid = fork()) == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		if (env != NULL)
			execle(pt_target, "push_target", arg, farg, (char *)NULL,
			    env);
		else
			execl(pt_target, "push_target", arg, farg,
			    (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/*
 * Opens A and B dropped no event.  Where the kernel refused the filter
 * (told), every system call of the machine reaches their rings, and
 * other work on it (a parallel test, a build) can overflow them: their
 * drops are said, and the exact counts checked before are what shows
 * that none of the targets' calls was among them.
 */
static void
pt_nothing_lost(int fda, int fdb, bool told)
{
	struct dtioc_stat sa, sb;
	int ea, eb;

	ea = dtt_stats(fda, &sa);
	eb = dtt_stats(fdb, &sb);
	if (told && ea == 0 && eb == 0) {
		printf("# dropped of the machine's calls: A %llu, B %llu\n",
		    (unsigned long long)sa.dtst_dropevt,
		    (unsigned long long)sb.dtst_dropevt);
		return;
	}
	dtt_check(ea == 0 && eb == 0 && sa.dtst_dropevt == 0 &&
	    sb.dtst_dropevt == 0, "nothing lost: A %llu, B %llu (%s, %s)",
	    ea ? 0ULL : (unsigned long long)sa.dtst_dropevt,
	    eb ? 0ULL : (unsigned long long)sb.dtst_dropevt, strerror(ea),
	    strerror(eb));
}

/* Let the target held at *go (pt_spawn()) run, and wait for it. */
static void
pt_release(int *go, pid_t pid, const char *what)
{
	int st;

	(void)write(*go, "x", 1);
	close(*go);
	*go = -1;
	st = dtt_wait(pid, PT_READ_MS);
	dtt_check(st != -1 && dtt_exited0(st), "%s ran", what);
}

/*
 * Read fd until the exit of every pid in pids[n] came; count their
 * getppid() events in got[].  False on a timeout or a read error.
 */
static bool
pt_count(int fd, const pid_t *pids, int n, uint64_t *got)
{
	static struct dt_evt evs[PT_NEVS];
	int getppid_num = systab_lookup("getppid"), exit_num =
	    systab_lookup("exit");
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PT_READ_MS * 1000000ULL;
	int exited = 0, i;
	long k, r;

	memset(got, 0, n * sizeof(*got));
	while (exited < n) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		if ((r = dtt_read(fd, evs, PT_NEVS, 1000)) == -1) {
			if (errno == ETIMEDOUT)
				continue;
			return false;
		}
		for (k = 0; k < r; k++)
			for (i = 0; i < n; i++) {
				if (evs[k].dtev_pid != pids[i])
					continue;
				if (evs[k].dtev_args[0] == getppid_num)
					got[i]++;
				else if (evs[k].dtev_args[0] == exit_num)
					exited++;
			}
	}
	return true;
}

/* dtd's count of perf records, from its log at exit; -1 if none. */
static long long
pt_records(void)
{
	char line[512];
	long long n = -1, v;
	FILE *f;

	if ((f = fopen(pt_dd.dd_err, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "dtd: tracepoint: %lld records", &v) == 1)
			n = v;
		/* what dtd said of its filters, for a failure's reader */
		if (strstr(line, "filter") != NULL)
			fprintf(stderr, "# %s", line);
	}
	fclose(f);
	return n;
}

/* The tracepoint reader's wakeups, from dtd's log at exit; -1 if none. */
static long long
pt_wakeups(void)
{
	char line[512];
	long long n = -1, a, b, v;
	FILE *f;

	if ((f = fopen(pt_dd.dd_err, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "dtd: tracepoint: %lld records, %lld lost by "
		    "perf, %lld reader wakeups", &a, &b, &v) == 3)
			n = v;
	fclose(f);
	return n;
}

/*
 * Open A keeps comm "push_target" (both targets), open B the second
 * target's thread alone (tid == its pid: it has one thread).
 */
static void
run_kern(bool refused)
{
	volatile uint64_t *calls;
	uint64_t gota[2], gotb[1], noise;
	pid_t pids[2], npid;
	int fda = -1, fdb = -1, go[2] = { -1, -1 }, i;
	uint32_t pbn;
	long long recs;

	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED)
		return;
	if ((fda = dtt_open(pt_dd.dd_dev)) == -1 || (pbn = dtt_probe(fda,
	    "tracepoint", "raw_syscalls", "sys_enter")) == 0) {
		dtt_check(false, "tracepoint:raw_syscalls:sys_enter listed");
		return;
	}
	close(fda);
	for (i = 0; i < 2; i++)
		if ((pids[i] = pt_spawn(&go[i], PT_NCALLS * (i + 1), -1,
		    NULL)) == -1)
			return;
	if ((fda = pt_open(pbn, dtt_term(DTF_OP_EQ, DTF_COMM, 0,
	    "push_target"))) == -1 || (fdb = pt_open(pbn,
	    dtt_term(DTF_OP_EQ, DTF_TID, pids[1], NULL))) == -1)
		goto out;
	/* Refused, the noise would overflow perf's buffers: paced off. */
	npid = refused ? -1 : dtt_noise(calls, PT_NOISE);
	pt_release(&go[0], pids[0], "target 0");
	pt_release(&go[1], pids[1], "target 1");
	dtt_check(pt_count(fda, pids, 2, gota), "open A read both exits");
	dtt_check(pt_count(fdb, &pids[1], 1, gotb), "open B read its exit");
	noise = *calls;
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	dtt_check(gota[0] == PT_NCALLS && gota[1] == 2 * PT_NCALLS,
	    "comm == push_target: %llu and %llu getppid, want %d and %d",
	    (unsigned long long)gota[0], (unsigned long long)gota[1],
	    PT_NCALLS, 2 * PT_NCALLS);
	dtt_check(gotb[0] == 2 * PT_NCALLS,
	    "tid == %d: %llu getppid, want %d", (int)pids[1],
	    (unsigned long long)gotb[0], 2 * PT_NCALLS);
	pt_nothing_lost(fda, fdb, refused);
	close(fda);
	close(fdb);
	fda = fdb = -1;
	dtt_check(dtt_dtd_stop(&pt_dd, SIGTERM) != -1, "dtd stops");
	recs = pt_records();
	if (refused) {
		dtt_check(dtt_dtd_logsays(&pt_dd, "kernel filter refused"),
		    "dtd says the kernel refused the filter");
		return;
	}
	/* the targets' calls and a few before the filter took hold */
	dtt_check(recs >= 3 * PT_NCALLS && (uint64_t)recs < noise / 10,
	    "dtd read %lld perf records, the noise made %llu calls", recs,
	    (unsigned long long)noise);
	dtt_check(!dtt_dtd_logsays(&pt_dd, "kernel filter refused"),
	    "filter taken");
	return;
out:
	for (i = 0; i < 2; i++)
		if (go[i] != -1) {
			close(go[i]);
			dtt_wait(pids[i], PT_READ_MS);
		}
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
}

/*
 * Read fd until the exit of root (> 0), or of outsider (outx), came.
 * tree[0] counts the getppid() events of processes named push_target
 * other than outsider, tree[1] outsider's; stray counts any event of
 * the noise or of ourselves.  False on a timeout or a read error.
 */
static bool
pt_tree_read(int fd, pid_t root, pid_t outsider, bool outx, pid_t noise,
    uint64_t tree[2], uint64_t *stray)
{
	static struct dt_evt evs[PT_NEVS];
	int getppid_num = systab_lookup("getppid"), exit_num =
	    systab_lookup("exit");
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PT_READ_MS * 1000000ULL;
	bool rootx = root <= 0;
	pid_t self = getpid();
	long k, r;

	tree[0] = tree[1] = *stray = 0;
	outx = !outx;
	while (!rootx || !outx) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		if ((r = dtt_read(fd, evs, PT_NEVS, 1000)) == -1) {
			if (errno == ETIMEDOUT)
				continue;
			return false;
		}
		for (k = 0; k < r; k++) {
			pid_t pid = evs[k].dtev_pid;

			if (pid == noise || pid == self)
				(*stray)++;
			if (evs[k].dtev_args[0] == exit_num) {
				rootx |= pid == root;
				outx |= pid == outsider;
			}
			if (evs[k].dtev_args[0] != getppid_num)
				continue;
			if (pid == outsider)
				tree[1]++;
			else if (strcmp(evs[k].dtev_comm, "push_target") == 0)
				tree[0]++;
		}
	}
	return true;
}

/*
 * DTEVT_TREE (dtvar.h): open A's tracepoint events are the tree's
 * alone.  The tree is a shell that runs the target twice (forked
 * children: inherited), beside a third target run outside it (same
 * name: only the tree tells them apart) and a flat-out noisy process.
 * Open B, with no tree, reads all three targets through its comm
 * filter.  Also the refusals: no tree, a switch-fed probe, a second
 * DTIOCTREE.
 */
static void
run_tree(void)
{
	volatile uint64_t *calls;
	struct dtioc_stat sa;
	struct dtioc_tree t;
	uint64_t gota[2], gotb[2], stra, strb, noise;
	pid_t root = -1, outsider = -1, npid = -1;
	int fda = -1, fdb = -1, go[2] = { -1, -1 }, p[2], error, i;
	uint32_t pbn, oncpu;
	char n[32], c;
	long long recs, wake;

	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED)
		return;
	if ((fda = dtt_open(pt_dd.dd_dev)) == -1 || (pbn = dtt_probe(fda,
	    "tracepoint", "raw_syscalls", "sys_enter")) == 0) {
		dtt_check(false, "tracepoint:raw_syscalls:sys_enter listed");
		goto out;
	}
	oncpu = dtt_probe(fda, "tracepoint", "sched", "on__cpu");
	error = dtt_enable(fda, pbn, DTEVT_TREE | DTEVT_EXECNAME, 0);
	dtt_check(error == EINVAL, "DTEVT_TREE with no tree: EINVAL (%s)",
	    strerror(error));
	/* the tree's root: a shell, held before its exec */
	snprintf(n, sizeof(n), "%d", PT_NCALLS);
	if (pipe(p) == -1)
		goto out;
	if ((root = fork()) == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		execl("/bin/sh", "sh", "-c", "\"$0\" \"$1\"; \"$0\" \"$1\"",
		    pt_target, n, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	go[0] = p[1];
	if (root == -1 || (outsider = pt_spawn(&go[1], PT_NCALLS, -1,
	    NULL)) == -1)
		goto out;
	memset(&t, 0, sizeof(t));
	t.dttr_pid = root;
	error = ioctl(fda, DTIOCTREE, &t) == -1 ? errno : 0;
	dtt_check(error == 0, "DTIOCTREE on the tree's root: %s",
	    strerror(error));
	if (oncpu != 0) {
		error = dtt_enable(fda, oncpu, DTEVT_TREE, 0);
		dtt_check(error == EOPNOTSUPP, "DTEVT_TREE on sched:on__cpu "
		    "(switch records): EOPNOTSUPP (%s)", strerror(error));
	}
	error = dtt_enable(fda, pbn, DTEVT_TREE | DTEVT_EXECNAME, 0);
	dtt_check(error == 0, "DTEVT_TREE on sys_enter: %s", strerror(error));
	error = ioctl(fda, DTIOCTREE, &t) == -1 ? errno : 0;
	dtt_check(error == EBUSY, "DTIOCTREE once a probe follows the tree: "
	    "EBUSY (%s)", strerror(error));
	if ((error = dtt_record(fda, 1)) != 0) {
		dtt_check(false, "record A: %s", strerror(error));
		goto out;
	}
	if ((fdb = pt_open(pbn, dtt_term(DTF_OP_EQ, DTF_COMM, 0,
	    "push_target"))) == -1)
		goto out;
	npid = dtt_noise(calls, PT_NOISE);
	/* the outsider after the tree: B's last event is its exit */
	pt_release(&go[0], root, "the tree");
	pt_release(&go[1], outsider, "the outsider");
	dtt_check(pt_tree_read(fda, root, outsider, false, npid, gota, &stra),
	    "open A read the tree's exit");
	dtt_check(pt_tree_read(fdb, -1, outsider, true, npid, gotb, &strb),
	    "open B read the outsider's exit");
	root = outsider = -1;
	noise = *calls;
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	npid = -1;
	dtt_check(gota[0] == 2 * PT_NCALLS && gota[1] == 0 && stra == 0,
	    "the tree's open: %llu getppid of the tree, want %d; %llu of the "
	    "outsider and %llu of the noise or ours, want 0",
	    (unsigned long long)gota[0], 2 * PT_NCALLS,
	    (unsigned long long)gota[1], (unsigned long long)stra);
	dtt_check(gotb[0] == 2 * PT_NCALLS && gotb[1] == PT_NCALLS &&
	    strb == 0, "the other open: %llu and %llu getppid, want %d and "
	    "%d; %llu events of the noise or ours, want 0",
	    (unsigned long long)gotb[0], (unsigned long long)gotb[1],
	    2 * PT_NCALLS, PT_NCALLS, (unsigned long long)strb);
	pt_nothing_lost(fda, fdb, false);
	close(fda);
	close(fdb);
	fda = fdb = -1;
	/*
	 * A tree gone before the start: its events cannot be opened, which
	 * dtd says, and the start and dtd go on (the open's state once
	 * used after its release).
	 */
	if ((root = fork()) == 0) {
		pause();
		_exit(0);
	}
	t.dttr_pid = root;
	if (root > 0 && (fda = dtt_open(pt_dd.dd_dev)) != -1) {
		error = ioctl(fda, DTIOCTREE, &t) == -1 ? errno : 0;
		if (error == 0)
			error = dtt_enable(fda, pbn, DTEVT_TREE, 0);
		kill(root, SIGKILL);
		dtt_wait(root, PT_READ_MS);
		root = -1;
		if (error == 0)
			error = dtt_record(fda, 1);
		dtt_check(error == 0, "a tree gone before the start: "
		    "recording starts (%s)", strerror(error));
		dtt_check(dtt_stats(fda, &sa) == 0, "dtd answers after it");
		close(fda);
		fda = -1;
	}
	dtt_check(dtt_dtd_stop(&pt_dd, SIGTERM) != -1, "dtd stops");
	recs = pt_records();
	dtt_check(recs >= 3 * PT_NCALLS && (uint64_t)recs < noise / 10,
	    "dtd read %lld perf records, the noise made %llu calls", recs,
	    (unsigned long long)noise);
	dtt_check(dtt_dtd_logsays(&pt_dd, "cannot open for the tree"),
	    "dtd says the gone tree's events could not be opened");
	/* a tree's events, all tasks gone, once woke the reader unending */
	wake = pt_wakeups();
	dtt_check(wake >= 0 && wake < 1000, "the reader woke %lld times",
	    wake);
	return;
out:
	for (i = 0; i < 2; i++)
		if (go[i] != -1)
			close(go[i]);
	if (root > 0)
		dtt_wait(root, PT_READ_MS);
	if (outsider > 0)
		dtt_wait(outsider, PT_READ_MS);
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
}

/*
 * Read fd until the syscall:exit:entry of each of pids[n] came;
 * close[i] counts pids[i]'s syscall:close:entry events with arg0 ==
 * fds[i], other the rest of close's.  False on a timeout or an error.
 */
static bool
pt_count_sys(int fd, uint32_t pbn_close, uint32_t pbn_exit,
    const pid_t *pids, const long *fds, int n, uint64_t *close_,
    uint64_t *other)
{
	static struct dt_evt evs[PT_NEVS];
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PT_READ_MS * 1000000ULL;
	int exited = 0, i;
	long k, r;
	bool mine;

	memset(close_, 0, n * sizeof(*close_));
	*other = 0;
	while (exited < n) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		if ((r = dtt_read(fd, evs, PT_NEVS, 1000)) == -1) {
			if (errno == ETIMEDOUT)
				continue;
			return false;
		}
		for (k = 0; k < r; k++) {
			mine = false;
			for (i = 0; i < n; i++) {
				if (evs[k].dtev_pid != pids[i])
					continue;
				if (evs[k].dtev_pbn == pbn_exit)
					exited++;
				else if (evs[k].dtev_pbn == pbn_close &&
				    evs[k].dtev_args[0] == fds[i]) {
					close_[i]++;
					mine = true;
				}
			}
			if (!mine && evs[k].dtev_pbn == pbn_close)
				(*other)++;
		}
	}
	return true;
}

/*
 * The hooks' filter: three preloaded targets close(1007) N times,
 * close(-1) 2N times, close(1009) 3N times.  Open A pushes pid == the
 * second, open B arg0 == 1007, on syscall:close:entry: each reads exactly its own, nothing
 * is lost, what each rejects is counted as filtered, and the hooks never
 * recorded the third's calls, which neither wants.
 */
static void
run_hook(const char *preload)
{
	/* descriptors no runtime (a sanitizer's) closes itself */
	static const long fds[3] = { 1007, -1, 1009 };
	struct dtioc_statx xa, xb;
	struct dtioc_filter_term ta, tb;
	struct udt_stats us;
	uint64_t cl[3], other;
	uint32_t pbn_close, pbn_exit;
	pid_t pids[3] = { -1, -1, -1 };
	int fda = -1, fdb = -1, fd, go[3] = { -1, -1, -1 }, st, i;
	char **env, *pre, func[DTNAMESIZE], aopt[512];
	const char *asan;

	setenv(UDT_SOCKET_ENV, pt_dd.dd_sock, 1);
	/*
	 * A sanitized target's leak check at its exit runs in a task that
	 * shares its memory (LeakSanitizer's tracer, a clone without
	 * CLONE_THREAD), whose closes of its own pipe the hooks record in
	 * the target's ring: not the calls counted here.
	 */
	asan = getenv("ASAN_OPTIONS");
	snprintf(aopt, sizeof(aopt), "%s%sdetect_leaks=0", asan != NULL ?
	    asan : "", asan != NULL && *asan != '\0' ? ":" : "");
	setenv("ASAN_OPTIONS", aopt, 1);
	if ((env = dtt_preload_env(preload, &pre)) == NULL)
		return;
	if ((fd = dtt_open(pt_dd.dd_dev)) == -1)
		return;
	snprintf(func, sizeof(func), "sys%%%d", systab_lookup("close"));
	pbn_close = dtt_probe(fd, "syscall", func, "entry");
	snprintf(func, sizeof(func), "sys%%%d", systab_lookup("exit"));
	pbn_exit = dtt_probe(fd, "syscall", func, "entry");
	close(fd);
	if (!dtt_check(pbn_close != 0 && pbn_exit != 0,
	    "syscall:close:entry and syscall:exit:entry listed"))
		return;
	for (i = 0; i < 3; i++)
		if ((pids[i] = pt_spawn(&go[i], PT_NCALLS * (i + 1), fds[i],
		    env)) == -1)
			goto out;
	ta = dtt_term(DTF_OP_EQ, DTF_PID, pids[1], NULL);
	tb = dtt_term(DTF_OP_EQ, DTF_ARG0, fds[0], NULL);
	/* the launched processes' alone: the machine's would fill rings */
	if ((fda = pt_open_sys(pbn_close, pbn_exit, ta, DTEVT_LAUNCHED)) ==
	    -1 || (fdb = pt_open_sys(pbn_close, pbn_exit, tb,
	    DTEVT_LAUNCHED)) == -1)
		goto out;
	for (i = 0; i < 3; i++) {
		(void)write(go[i], "x", 1);
		close(go[i]);
		go[i] = -1;
	}
	for (i = 0; i < 3; i++) {
		st = dtt_wait(pids[i], PT_READ_MS);
		dtt_check(st != -1 && dtt_exited0(st), "target %d ran", i);
	}
	if (dtt_check(pt_count_sys(fda, pbn_close, pbn_exit, pids, fds, 3,
	    cl, &other), "open A read the three exits"))
		dtt_check(cl[0] == 0 && cl[1] == 2 * PT_NCALLS && cl[2] == 0 &&
		    other == 0, "pid == %d: %llu, %llu, %llu (+%llu) closes, "
		    "want 0, %d, 0", (int)pids[1], (unsigned long long)cl[0],
		    (unsigned long long)cl[1], (unsigned long long)cl[2],
		    (unsigned long long)other, 2 * PT_NCALLS);
	if (dtt_check(pt_count_sys(fdb, pbn_close, pbn_exit, pids, fds, 3,
	    cl, &other), "open B read the three exits"))
		dtt_check(cl[0] == PT_NCALLS && cl[1] == 0 && cl[2] == 0 &&
		    other == 0, "arg0 == 1007: %llu, %llu, %llu (+%llu) closes, "
		    "want %d, 0, 0", (unsigned long long)cl[0],
		    (unsigned long long)cl[1], (unsigned long long)cl[2],
		    (unsigned long long)other, PT_NCALLS);
	memset(&xa, 0, sizeof(xa));
	memset(&xb, 0, sizeof(xb));
	if (dtt_check(ioctl(fda, DTIOCGSTATSX, &xa) == 0 &&
	    ioctl(fdb, DTIOCGSTATSX, &xb) == 0, "DTIOCGSTATSX")) {
		dtt_check(xa.dtsx_dropevt == 0 && xb.dtsx_dropevt == 0,
		    "nothing lost: A %llu, B %llu",
		    (unsigned long long)xa.dtsx_dropevt,
		    (unsigned long long)xb.dtsx_dropevt);
		/* the others' closes: one by dtd, the third's by the hook */
		dtt_check(xa.dtsx_filtevt >= 4 * PT_NCALLS &&
		    xb.dtsx_filtevt >= 5 * PT_NCALLS,
		    "filtered: A %llu (want >= %d), B %llu (want >= %d)",
		    (unsigned long long)xa.dtsx_filtevt, 4 * PT_NCALLS,
		    (unsigned long long)xb.dtsx_filtevt, 5 * PT_NCALLS);
	}
	/* what the hooks recorded: the first two's, not the third's */
	if (dtt_check(st_ingest_stats(pt_dd.dd_sock, &us) == 0,
	    "ingest stats"))
		dtt_check(us.us_records >= 3 * PT_NCALLS &&
		    us.us_records < 4 * PT_NCALLS,
		    "the hooks recorded %llu events, want %d to %d",
		    (unsigned long long)us.us_records, 3 * PT_NCALLS,
		    4 * PT_NCALLS - 1);
out:
	for (i = 0; i < 3; i++)
		if (go[i] != -1) {
			close(go[i]);
			dtt_wait(pids[i], PT_READ_MS);
		}
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
	free(pre);
	free(env);
}

/*
 * The syscall probes' kernel feed, with what was pushed: open A keeps
 * syscall:getppid:entry of tid == the first target's, open B of comm
 * "push_target" (both targets), neither under a launcher, while a child
 * makes getppid() flat out: exact counts, nothing lost, and dtd read
 * far fewer perf records than the noise made calls.
 */
static void
run_ksys(void)
{
	static const long zero[2] = { 0, 0 };
	volatile uint64_t *calls;
	uint64_t got[2], other, noise;
	uint32_t pbn_call, pbn_exit;
	pid_t pids[2] = { -1, -1 }, npid = -1;
	int fda = -1, fdb = -1, fd, go[2] = { -1, -1 }, i;
	char func[DTNAMESIZE];
	long long recs;

	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED || (fd = dtt_open(pt_dd.dd_dev)) == -1)
		return;
	snprintf(func, sizeof(func), "sys%%%d", systab_lookup("getppid"));
	pbn_call = dtt_probe(fd, "syscall", func, "entry");
	snprintf(func, sizeof(func), "sys%%%d", systab_lookup("exit"));
	pbn_exit = dtt_probe(fd, "syscall", func, "entry");
	close(fd);
	if (!dtt_check(pbn_call != 0 && pbn_exit != 0,
	    "syscall:getppid:entry and syscall:exit:entry listed"))
		return;
	for (i = 0; i < 2; i++)
		if ((pids[i] = pt_spawn(&go[i], PT_NCALLS * (i + 1), -1,
		    NULL)) == -1)
			goto out;
	if ((fda = pt_open_sys(pbn_call, pbn_exit, dtt_term(DTF_OP_EQ,
	    DTF_TID, pids[0], NULL), 0)) == -1 || (fdb = pt_open_sys(pbn_call,
	    pbn_exit, dtt_term(DTF_OP_EQ, DTF_COMM, 0, "push_target"), 0)) ==
	    -1)
		goto out;
	npid = dtt_noise(calls, PT_NOISE);
	pt_release(&go[0], pids[0], "target 0");
	pt_release(&go[1], pids[1], "target 1");
	if (dtt_check(pt_count_sys(fda, pbn_call, pbn_exit, pids, zero, 2,
	    got, &other), "open A read both exits"))
		dtt_check(got[0] == PT_NCALLS && got[1] == 0 && other == 0,
		    "tid == %d: %llu, %llu (+%llu) getppid, want %d, 0",
		    (int)pids[0], (unsigned long long)got[0],
		    (unsigned long long)got[1], (unsigned long long)other,
		    PT_NCALLS);
	if (dtt_check(pt_count_sys(fdb, pbn_call, pbn_exit, pids, zero, 2,
	    got, &other), "open B read both exits"))
		dtt_check(got[0] == PT_NCALLS && got[1] == 2 * PT_NCALLS &&
		    other == 0, "comm == push_target: %llu, %llu (+%llu) "
		    "getppid, want %d, %d", (unsigned long long)got[0],
		    (unsigned long long)got[1], (unsigned long long)other,
		    PT_NCALLS, 2 * PT_NCALLS);
	noise = *calls;
	dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	npid = -1;
	pt_nothing_lost(fda, fdb, false);
	close(fda);
	close(fdb);
	fda = fdb = -1;
	dtt_check(dtt_dtd_stop(&pt_dd, SIGTERM) != -1, "dtd stops");
	recs = pt_records();
	dtt_check(recs >= 3 * PT_NCALLS && (uint64_t)recs < noise / 10,
	    "dtd read %lld perf records, the noise made %llu calls", recs,
	    (unsigned long long)noise);
out:
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	for (i = 0; i < 2; i++)
		if (go[i] != -1) {
			close(go[i]);
			dtt_wait(pids[i], PT_READ_MS);
		}
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
}

int
main(int argc, char *argv[])
{
	char errbuf[4096];
	bool refused;

	if (!(argc == 4 && (strcmp(argv[1], "kern") == 0 ||
	    strcmp(argv[1], "refused") == 0 ||
	    strcmp(argv[1], "ksys") == 0 ||
	    strcmp(argv[1], "tree") == 0)) &&
	    !(argc == 5 && strcmp(argv[1], "hook") == 0)) {
		fprintf(stderr, "usage: push_test kern|refused|ksys|tree dtd "
		    "target\n"
		    "       push_test hook dtd target preload\n");
		return 2;
	}
	pt_dtd = argv[2];
	pt_target = argv[3];
	refused = strcmp(argv[1], "refused") == 0;
	dtt_tag(argv[1]);
	if (refused)
		setenv("USERDT_TEST_KFILTER", "refuse", 1);
	if (dtt_dtd_init(&pt_dd, "push_test") == -1 ||
	    dtt_dtd_start(&pt_dd, pt_dtd, (char *[]){ "--no-ksyms", NULL },
	    errbuf, sizeof(errbuf)) == -1) {
		dtt_check(false, "dtd starts: %s", errbuf);
		dtt_dtd_fini(&pt_dd, true);
		return dtt_done();
	}
	if (argc == 5)
		run_hook(argv[4]);
	else if (strcmp(argv[1], "ksys") == 0)
		run_ksys();
	else if (strcmp(argv[1], "tree") == 0)
		run_tree();
	else
		run_kern(refused);
	if (pt_dd.dd_pid != 0)
		dtt_check(dtt_dtd_stop(&pt_dd, SIGTERM) != -1, "dtd stops");
	dtt_dtd_fini(&pt_dd, true);
	return dtt_done();
}
