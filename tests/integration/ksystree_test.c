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
 * A syscall probe's kernel copy of one process tree (DTEVT_TREE on a
 * syscall probe, dtvar.h; providers/tracepoint/dt_tp_ksystree.c),
 * through a real device file, against a dtd of our own.  Root only
 * (perf).
 *   ksystree_test abi DTD STATIC	the ABI: no tree, EINVAL; open A
 *				with the bit gets every getppid() of a
 *				static program it names as its tree
 *				(return values: its parent, us), once,
 *				and none of the same program run outside
 *				the tree; open B on the same tree without
 *				the bit (DTEVT_LAUNCHED alone) none; open
 *				C, system-wide, both programs', once
 *				(A stopped and started again before its
 *				root's exec); a tree gone before the
 *				start, said by dtd for that tree; a
 *				perf buffer that overflowed charged to
 *				an open with two probes of a direction
 *				once per lost record
 *   ksystree_test btrace DTD BTRACE STATIC DYN
 *				btrace -c of the static program counts
 *				its calls exactly, nothing lost, their
 *				return values its parent's pid, and says
 *				the kernel reads them; also after it
 *				mapped code of its own, after it ran
 *				more execs than any ring would keep, and
 *				timed from entry to return; a dynamic
 *				program it runs counted once; btrace -c
 *				of a dynamic program does not ask for
 *				the bit (BTRACE_HOOKEDTREE=0: the tree
 *				of ksysarm_test.c off); with no tree
 *				named, the static
 *				program said not traced
 *
 * Knowing every event of a target was read: its exit_group is its last
 * system call, and a reader gets events in time order across sources
 * (design decision 18), so once it is read nothing older is on its way.
 */
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "systab.h"

#define KT_NCALLS	3000	/* tp_static's getppid() calls */
#define KT_NEVS		4096
#define KT_READ_MS	30000
#define KT_RUN_MS	60000
#define KT_NLOST	100000	/* calls while dtd stands still */

static struct dtt_dtd	 kt_dd;
static const char	*kt_static;
static pid_t		 kt_gone;	/* run_gone()'s tree */

struct kt_probes {
	uint32_t	kp_ent, kp_ret, kp_exit;
};

/* What one open read of the root and the outsider. */
struct kt_count {
	uint64_t	kc_ent[2];	/* getppid entries: root, outsider */
	uint64_t	kc_ret;		/* root's returns giving our pid */
	uint64_t	kc_badret;	/* root's returns giving another */
	bool		kc_exit[2];	/* their exit_group came */
};

/* The syscall probe of call name, entry or return: its pbn, or 0. */
static uint32_t
kt_probe(int fd, const char *name, const char *dir)
{
	char func[DTNAMESIZE];

	snprintf(func, sizeof(func), "sys%%%d", systab_lookup(name));
	return dtt_probe(fd, "syscall", func, dir);
}

/*
 * A child held on a pipe (its write end in *go), then exec'ing argv,
 * with in and out as its standard input and output (-1: ours).
 */
static pid_t
kt_held_io(int *go, char *const argv[], int in, int out)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		if ((in != -1 && dup2(in, 0) == -1) ||
		    (out != -1 && dup2(out, 1) == -1))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static pid_t
kt_held(int *go, char *const argv[])
{
	return kt_held_io(go, argv, -1, -1);
}

static void
kt_release(int *go, pid_t pid, const char *what)
{
	int st;

	(void)!write(*go, "g", 1);
	close(*go);
	*go = -1;
	st = dtt_wait(pid, KT_RUN_MS);
	dtt_check(st != -1 && dtt_exited0(st), "%s ran", what);
}

/*
 * Read fd until the exit of pids[0] (and of pids[1] with both) came,
 * counting into kc.  False on a timeout or an error.
 */
static bool
kt_read(int fd, const struct kt_probes *kp, const pid_t pids[2], bool both,
    struct kt_count *kc)
{
	static struct dt_evt evs[KT_NEVS];
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    KT_READ_MS * 1000000ULL;
	long k, r;
	int i;

	memset(kc, 0, sizeof(*kc));
	while (!kc->kc_exit[0] || (both && !kc->kc_exit[1])) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		if ((r = dtt_read(fd, evs, KT_NEVS, 1000)) == -1) {
			if (errno == ETIMEDOUT)
				continue;
			return false;
		}
		for (k = 0; k < r; k++)
			for (i = 0; i < 2; i++) {
				if (evs[k].dtev_pid != pids[i])
					continue;
				if (evs[k].dtev_pbn == kp->kp_ent)
					kc->kc_ent[i]++;
				else if (evs[k].dtev_pbn == kp->kp_exit)
					kc->kc_exit[i] = true;
				else if (evs[k].dtev_pbn == kp->kp_ret && i == 0) {
					if (evs[k].dtev_retval[0] == getpid())
						kc->kc_ret++;
					else
						kc->kc_badret++;
				}
			}
	}
	return true;
}

static void
kt_nothing_lost(int fd, const char *who)
{
	struct dtioc_stat st;
	int error;

	error = dtt_stats(fd, &st);
	dtt_check(error == 0 && st.dtst_dropevt == 0, "%s lost nothing "
	    "(%llu, %s)", who, error ? 0ULL :
	    (unsigned long long)st.dtst_dropevt, strerror(error));
}

/*
 * A new open that records kp's probes with flags each (fret ~0: not
 * the return), on tree (0: none): fd or -1.  Without a tree its getppid
 * entries are those of processes named tp_static alone, filtered below
 * dtd (a busy machine's others would fill its rings).
 */
static int
kt_open(const struct kt_probes *kp, pid_t tree, uint64_t fent,
    uint64_t fret, uint64_t fexit)
{
	struct dtioc_tree t;
	struct dtioc_filter f;
	int fd, error = 0;

	if ((fd = dtt_open(kt_dd.dd_dev)) == -1) {
		dtt_check(false, "open: %s", strerror(errno));
		return -1;
	}
	memset(&t, 0, sizeof(t));
	t.dttr_pid = tree;
	memset(&f, 0, sizeof(f));
	f.dtfl_pbn = kp->kp_ent;
	f.dtfl_nterms = 1;
	f.dtfl_terms[0].dtft_op = DTF_OP_EQ;
	f.dtfl_terms[0].dtft_field = DTF_COMM;
	snprintf(f.dtfl_terms[0].dtft_str, sizeof(f.dtfl_terms[0].dtft_str),
	    "tp_static");
	if ((tree > 0 && ioctl(fd, DTIOCTREE, &t) == -1 && (error = errno)) ||
	    (error = dtt_enable(fd, kp->kp_ent, fent, 0)) != 0 ||
	    (tree == 0 && ioctl(fd, DTIOCPRBFILTER, &f) == -1 &&
	    (error = errno)) ||
	    (fret != ~0ULL && (error = dtt_enable(fd, kp->kp_ret, fret,
	    0)) != 0) ||
	    (error = dtt_enable(fd, kp->kp_exit, fexit, 0)) != 0 ||
	    (error = dtt_record(fd, 1)) != 0) {
		dtt_check(false, "tree, enable, record: %s", strerror(error));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A tree gone before the start: its events cannot be opened, which dtd
 * says, and the start and dtd go on.
 */
static pid_t
run_gone(const struct kt_probes *kp)
{
	struct dtioc_stat st;
	struct dtioc_tree t;
	pid_t pid;
	int fd, error;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	if (pid == -1 || (fd = dtt_open(kt_dd.dd_dev)) == -1) {
		dtt_check(false, "fork, open: %s", strerror(errno));
		return -1;
	}
	memset(&t, 0, sizeof(t));
	t.dttr_pid = pid;
	error = ioctl(fd, DTIOCTREE, &t) == -1 ? errno : 0;
	if (error == 0)
		error = dtt_enable(fd, kp->kp_ent, DTEVT_TREE, 0);
	if (error == 0)
		error = dtt_enable(fd, kp->kp_ret, DTEVT_TREE, 0);
	kill(pid, SIGKILL);
	dtt_wait(pid, KT_RUN_MS);
	if (error == 0)
		error = dtt_record(fd, 1);
	dtt_check(error == 0, "a tree gone before the start: recording "
	    "starts (%s)", strerror(error));
	dtt_check(dtt_stats(fd, &st) == 0, "dtd answers after it");
	close(fd);
	return pid;
}

/*
 * An open with two probes of one direction (getppid's entry, exit's)
 * while perf's buffer overflows (dtd stopped): each record perf lost is
 * charged once to the open, so what it read and what it lost add up to
 * the calls made, not more.  The records lost are said by perf only
 * with the next one it writes: after dtd goes on, the root makes one
 * more call ("ping") at a time until the sum is reached.
 */
static void
run_lost(const struct kt_probes *kp)
{
	static struct dt_evt evs[KT_NEVS];
	struct dtioc_stat st;
	char n[32], c;
	char *argv[] = { (char *)kt_static, n, "pings", NULL };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, go = -1, fd = -1;
	uint64_t ent = 0, want = KT_NLOST, deadline;
	pid_t pid = -1;
	long r, k;
	bool stopped = false;

	snprintf(n, sizeof(n), "%d", KT_NLOST);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    (pid = kt_held_io(&go, argv, in[0], out[1])) == -1) {
		dtt_check(false, "pipes, fork: %s", strerror(errno));
		goto out;
	}
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	if ((fd = kt_open(kp, pid, DTEVT_TREE, ~0ULL, DTEVT_TREE)) == -1)
		goto out;
	(void)!write(go, "g", 1);
	close(go);
	go = -1;
	/* its calls while no one reads perf's buffer */
	stopped = kill(kt_dd.dd_pid, SIGSTOP) == 0;
	if (!dtt_check(stopped && write(in[1], "g", 1) == 1 &&
	    read(out[0], &c, 1) == 1 && c == 'd', "the root's calls made "
	    "while dtd stood still"))
		goto out;
	kill(kt_dd.dd_pid, SIGCONT);
	stopped = false;
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + KT_READ_MS * 1000000ULL;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < deadline) {
		/* "done\n" then one "p" a ping */
		if (write(in[1], "p", 1) != 1)
			break;
		do
			r = read(out[0], &c, 1);
		while (r == 1 && c != 'p');
		if (r != 1)
			break;
		want++;
		if ((r = dtt_read(fd, evs, KT_NEVS, 1000)) == -1 &&
		    errno != ETIMEDOUT)
			break;
		for (k = 0; k < r; k++)
			if (evs[k].dtev_pid == pid &&
			    evs[k].dtev_pbn == kp->kp_ent)
				ent++;
		if (dtt_stats(fd, &st) != 0 || ent + st.dtst_dropevt >= want)
			break;
	}
	dtt_check(dtt_stats(fd, &st) == 0 && st.dtst_dropevt > 0 &&
	    ent + st.dtst_dropevt == want, "an open with two probes of a "
	    "direction: %llu read, %llu lost, of %llu calls",
	    (unsigned long long)ent, (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)want);
out:
	if (stopped)
		kill(kt_dd.dd_pid, SIGCONT);
	if (go != -1)
		close(go);
	for (k = 0; k < 2; k++) {
		if (in[k] != -1)
			close(in[k]);
		if (out[k] != -1)
			close(out[k]);
	}
	if (pid > 0)
		dtt_wait(pid, KT_RUN_MS);
	if (fd != -1)
		close(fd);
}

/*
 * The ABI.  Open A's getppid entries ask for DTEVT_TREE alone (which
 * implies DTEVT_LAUNCHED: else the system-wide feed that open C keeps
 * open would give A the root's calls twice and the outsider's).
 */
static void
run_abi(void)
{
	static struct dt_evt evs[KT_NEVS];
	struct kt_probes kp;
	struct kt_count ca, cc;
	char n[32];
	char *argv[] = { (char *)kt_static, n, NULL };
	pid_t pids[2] = { -1, -1 };
	int fda = -1, fdb = -1, fdc = -1, go[2] = { -1, -1 }, fd, error;
	uint64_t bgot = 0;
	long r, k;

	if ((fd = dtt_open(kt_dd.dd_dev)) == -1)
		return (void)dtt_check(false, "open: %s", strerror(errno));
	kp.kp_ent = kt_probe(fd, "getppid", "entry");
	kp.kp_ret = kt_probe(fd, "getppid", "return");
	kp.kp_exit = kt_probe(fd, "exit", "entry");
	if (!dtt_check(kp.kp_ent != 0 && kp.kp_ret != 0 && kp.kp_exit != 0,
	    "syscall getppid entry, return and exit entry listed")) {
		close(fd);
		return;
	}
	error = dtt_enable(fd, kp.kp_ent, DTEVT_TREE | DTEVT_LAUNCHED, 0);
	dtt_check(error == EINVAL, "DTEVT_TREE on a syscall probe with no "
	    "tree: EINVAL (%s)", strerror(error));
	close(fd);

	snprintf(n, sizeof(n), "%d", KT_NCALLS);
	if ((pids[0] = kt_held(&go[0], argv)) == -1 ||
	    (pids[1] = kt_held(&go[1], argv)) == -1)
		goto out;
	if ((fda = kt_open(&kp, pids[0], DTEVT_TREE, DTEVT_TREE |
	    DTEVT_LAUNCHED, DTEVT_TREE)) == -1 ||
	    (fdb = kt_open(&kp, pids[0], DTEVT_LAUNCHED, ~0ULL,
	    DTEVT_TREE)) == -1 ||
	    (fdc = kt_open(&kp, 0, DTEVT_EXECNAME, ~0ULL, 0)) == -1)
		goto out;
	/*
	 * A stop and a start again while its root can still exec: the
	 * feed closed, then a new one, which alone counts what follows.
	 */
	error = dtt_record(fda, 0);
	if (error == 0)
		error = dtt_record(fda, 1);
	dtt_check(error == 0, "open A stops and starts again: %s",
	    strerror(error));
	/* the outsider first: had A any of it, A would read it first */
	kt_release(&go[1], pids[1], "the outsider");
	kt_release(&go[0], pids[0], "the tree's root");
	if (dtt_check(kt_read(fda, &kp, pids, false, &ca),
	    "open A read the root's exit"))
		dtt_check(ca.kc_ent[0] == KT_NCALLS && ca.kc_ent[1] == 0 &&
		    ca.kc_ret == KT_NCALLS && ca.kc_badret == 0,
		    "open A (the tree's): %llu getppid of the root, want %d; "
		    "%llu returns giving our pid, %llu another, want %d, 0; "
		    "%llu of the outsider, want 0",
		    (unsigned long long)ca.kc_ent[0], KT_NCALLS,
		    (unsigned long long)ca.kc_ret,
		    (unsigned long long)ca.kc_badret, KT_NCALLS,
		    (unsigned long long)ca.kc_ent[1]);
	if (dtt_check(kt_read(fdc, &kp, pids, true, &cc),
	    "open C read both exits"))
		dtt_check(cc.kc_ent[0] == KT_NCALLS &&
		    cc.kc_ent[1] == KT_NCALLS, "open C (system-wide): %llu "
		    "and %llu getppid, want %d each",
		    (unsigned long long)cc.kc_ent[0],
		    (unsigned long long)cc.kc_ent[1], KT_NCALLS);
	/*
	 * B's exit entry has the bit: B saw the root's end, after which
	 * nothing older of it can come.  Then the stop puts what the
	 * sequencer held for B: whatever B got is in its rings.
	 */
	{
		struct kt_count cb;

		if (dtt_check(kt_read(fdb, &kp, pids, false, &cb),
		    "open B read the root's exit"))
			bgot = cb.kc_ent[0] + cb.kc_ent[1];
	}
	dtt_check(dtt_record(fdb, 0) == 0, "open B stops");
	while ((r = dtt_read(fdb, evs, KT_NEVS, 0)) > 0)
		for (k = 0; k < r; k++)
			if (evs[k].dtev_pbn == kp.kp_ent &&
			    (evs[k].dtev_pid == pids[0] ||
			    evs[k].dtev_pid == pids[1]))
				bgot++;
	dtt_check(bgot == 0, "open B (the tree, no bit on getppid): %llu "
	    "getppid, want 0", (unsigned long long)bgot);
	kt_nothing_lost(fda, "open A");
	kt_nothing_lost(fdc, "open C");
	pids[0] = pids[1] = -1;
	kt_gone = run_gone(&kp);
	run_lost(&kp);
out:
	for (k = 0; k < 2; k++) {
		if (go[k] != -1)
			close(go[k]);
		if (pids[k] > 0)
			dtt_wait(pids[k], KT_RUN_MS);
	}
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
	if (fdc != -1)
		close(fdc);
}

/*
 * btrace -vv -d DEV -c cmd -e script: its status, and its standard
 * output and error (the command's too) in out.
 */
static int
kt_btrace(const char *btrace, const char *cmd, const char *script,
    char *out, size_t len)
{
	char *argv[] = { (char *)btrace, "-vv", "-d", kt_dd.dd_dev, "-c",
	    (char *)cmd, "-e", (char *)script, NULL };
	char path[256];

	snprintf(path, sizeof(path), "%s/btrace.out", kt_dd.dd_dir);
	return dtt_run_capture(argv, KT_RUN_MS, path, true, out, len);
}

/* Whether a "debug: probe" line of out shows DTEVT_TREE in evtflags. */
static bool
kt_treebit(const char *out)
{
	const char *p = out, *f;
	unsigned long long v;

	while ((p = strstr(p, "debug: probe '")) != NULL) {
		f = strstr(p, "evtflags ");
		p++;
		if (f == NULL || (strchr(p, '\n') != NULL &&
		    f > strchr(p, '\n')))
			continue;
		v = strtoull(f + 9, NULL, 16);
		if (v & DTEVT_TREE)
			return true;
	}
	return false;
}

/* The sum of the counts of histogram name's buckets in out, or -1. */
static long
kt_histsum(const char *out, const char *name)
{
	const char *p = strstr(out, name), *b;
	long sum = 0;

	if (p == NULL)
		return -1;
	for (p = strchr(p, '\n'); p != NULL && p[1] == '['; p = strchr(p + 1,
	    '\n')) {
		if ((b = strchr(p + 1, ')')) == NULL)
			return -1;
		sum += atol(b + 1);
	}
	return sum;
}

/* btrace -c cmd -e script: the count of key in its output. */
static long
kt_count(const char *btrace, const char *cmd, const char *script,
    const char *key, const char *what)
{
	static char out[65536];
	long v;
	int status;

	status = kt_btrace(btrace, cmd, script, out, sizeof(out));
	dtt_check(dtt_exited0(status), "btrace -c %s exits 0", what);
	if ((v = dtt_line_value(out, key)) == -1)
		fprintf(stderr, "%s", out);
	return v;
}

/*
 * What a static command does that the feed must still see, and a
 * dynamic one inside it it must leave to the hooks.
 */
static void
run_btrace_more(const char *btrace, const char *dyn)
{
	static char out[65536];
	const char *count = "syscall:getppid:entry { @[comm] = count(); }";
	char cmd[1024], path[512];
	long v, w;
	int status;

	snprintf(cmd, sizeof(cmd), "%s %d jit", kt_static, KT_NCALLS);
	v = kt_count(btrace, cmd, count, "@[tp_static]: ", "JIT");
	dtt_check(v == KT_NCALLS, "btrace -c STATIC that maps code of its "
	    "own: %ld getppid entries of %d calls", v, KT_NCALLS);

	/*
	 * A FIFO renamed over the exec's path: dtd judges the image by
	 * the file pid runs, never by opening the record's path, which
	 * held the tracepoints' reader in open(2) for good.
	 */
	snprintf(path, sizeof(path), "%s/kt_fifo", kt_dd.dd_dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", kt_static, path);
	if (system(cmd) != 0)
		dtt_check(0, "copy %s to %s", kt_static, path);
	snprintf(cmd, sizeof(cmd), "%s %d fifo", path, KT_NCALLS);
	v = kt_count(btrace, cmd, count, "@[kt_fifo]: ", "FIFO");
	dtt_check(v == KT_NCALLS, "btrace -c STATIC that puts a FIFO over "
	    "its own path: %ld getppid entries of %d calls", v, KT_NCALLS);
	unlink(path);

	snprintf(cmd, sizeof(cmd), "%s 1000 spawn 100 /bin/true", kt_static);
	v = kt_count(btrace, cmd, count, "@[tp_static]: ", "SPAWNER");
	dtt_check(v == 1000, "btrace -c STATIC after 100 execs: %ld getppid "
	    "entries of 1000 calls", v);

	snprintf(cmd, sizeof(cmd), "%s 1000 spawn 1 %s getppid 100",
	    kt_static, dyn);
	status = kt_btrace(btrace, cmd, count, out, sizeof(out));
	v = dtt_line_value(out, "@[tp_static]: ");
	w = dtt_line_value(out, "@[tp_target]: ");
	if (!dtt_check(dtt_exited0(status) && v == 1000 && w == 100,
	    "btrace -c STATIC running DYN: %ld and %ld getppid entries, "
	    "want 1000 and 100 (the hooks' once)", v, w))
		fprintf(stderr, "%s", out);

	/* entry to return, timed by btrace, not folded from hook stamps */
	snprintf(cmd, sizeof(cmd), "%s %d", kt_static, KT_NCALLS);
	status = kt_btrace(btrace, cmd, "syscall:getppid:entry "
	    "{ @s[tid] = nsecs; } syscall:getppid:return /@s[tid]/ "
	    "{ @l[comm] = hist(nsecs - @s[tid]); delete(@s[tid]); } "
	    "END { clear(@s); }", out, sizeof(out));
	/* (the shell's getppid() is the hooks': not the command's) */
	v = kt_histsum(out, "@l[tp_static]:");
	if (!dtt_check(dtt_exited0(status) && v == KT_NCALLS, "btrace -c "
	    "STATIC, latency: %ld calls timed of %d", v, KT_NCALLS))
		fprintf(stderr, "%s", out);

	/* no tree named, no feed: btrace must not say the kernel reads it */
	setenv("BTRACE_NOPUSH", "1", 1);
	status = kt_btrace(btrace, cmd, count, out, sizeof(out));
	unsetenv("BTRACE_NOPUSH");
	if (!dtt_check(dtt_exited0(status) && strstr(out, "statically "
	    "linked: its system calls are not traced") != NULL &&
	    strstr(out, "read from the kernel") == NULL, "btrace -c STATIC "
	    "with BTRACE_NOPUSH says its calls are not traced"))
		fprintf(stderr, "%s", out);
}

static void
run_btrace(const char *btrace, const char *dyn)
{
	static char out[65536];
	char cmd[1024], key[64];
	long v, ppid;
	unsigned int nfail = dtt_nfail;
	int status;

	/* The command's library finds this dtd. */
	setenv("USERDT_SOCKET", kt_dd.dd_sock, 1);
	snprintf(cmd, sizeof(cmd), "%s %d ppid", kt_static, KT_NCALLS);
	status = kt_btrace(btrace, cmd, "syscall:getppid:entry "
	    "{ @[comm] = count(); } syscall:getppid:return "
	    "/comm == \"tp_static\"/ { @r[retval] = count(); }", out,
	    sizeof(out));
	dtt_check(dtt_exited0(status), "btrace -c STATIC exits 0");
	v = dtt_line_value(out, "@[tp_static]: ");
	ppid = dtt_line_value(out, "ppid ");
	snprintf(key, sizeof(key), "@r[%ld]: ", ppid);
	dtt_check(v == KT_NCALLS, "btrace -c STATIC: %ld getppid entries of "
	    "%d calls", v, KT_NCALLS);
	dtt_check(ppid > 0 && dtt_line_value(out, key) == KT_NCALLS, "btrace -c "
	    "STATIC: %ld returns giving its parent's pid %ld, of %d",
	    dtt_line_value(out, key), ppid, KT_NCALLS);
	dtt_check(strstr(out, "\n0 events dropped\n") != NULL,
	    "btrace -c STATIC: nothing dropped");
	dtt_check(strstr(out, "the kernel's of the tree too") != NULL &&
	    kt_treebit(out), "btrace -c STATIC asked for DTEVT_TREE");
	dtt_check(strstr(out, "statically linked: its system calls are read "
	    "from the kernel") != NULL && strstr(out, "are not traced") ==
	    NULL, "btrace -c STATIC says the kernel reads its calls");
	if (dtt_nfail != nfail)
		fprintf(stderr, "%s", out);

	/*
	 * The root's feed is a static command's: a dynamic one's tree
	 * follows its static images from their execs (DTTR_F_HOOKED,
	 * ksysarm_test.c), which this turns off.
	 */
	snprintf(cmd, sizeof(cmd), "%s getppid 100", dyn);
	setenv("BTRACE_HOOKEDTREE", "0", 1);
	status = kt_btrace(btrace, cmd, "syscall:getppid:entry "
	    "{ @[comm] = count(); }", out, sizeof(out));
	unsetenv("BTRACE_HOOKEDTREE");
	dtt_check(dtt_exited0(status), "btrace -c DYN exits 0");
	v = dtt_line_value(out, "@[tp_target]: ");
	dtt_check(v == 100, "btrace -c DYN: %ld getppid entries of 100", v);
	if (!dtt_check(!kt_treebit(out) && strstr(out, "of the tree too") ==
	    NULL, "btrace -c DYN does not ask for DTEVT_TREE"))
		fprintf(stderr, "%s", out);
}

int
main(int argc, char *argv[])
{
	char errbuf[4096];

	if (!(argc == 4 && strcmp(argv[1], "abi") == 0) &&
	    !(argc == 6 && strcmp(argv[1], "btrace") == 0)) {
		fprintf(stderr, "usage: ksystree_test abi dtd static\n"
		    "       ksystree_test btrace dtd btrace static dynamic\n");
		return 2;
	}
	kt_static = argc == 4 ? argv[3] : argv[4];
	dtt_tag(argv[1]);
	if (dtt_dtd_init(&kt_dd, "ksystree_test") == -1 ||
	    dtt_dtd_start(&kt_dd, argv[2], (char *[]){ "--no-ksyms", NULL },
	    errbuf, sizeof(errbuf)) == -1) {
		dtt_check(false, "dtd starts: %s", errbuf);
		dtt_dtd_fini(&kt_dd, true);
		return dtt_done();
	}
	if (argc == 4)
		run_abi();
	else {
		run_btrace(argv[3], argv[5]);
		run_btrace_more(argv[3], argv[5]);
	}
	if (kt_dd.dd_pid != 0)
		dtt_check(dtt_dtd_stop(&kt_dd, SIGTERM) != -1, "dtd stops");
	if (argc == 4) {
		char what[64];

		snprintf(what, sizeof(what), "cannot open for the tree of %d:",
		    (int)kt_gone);
		dtt_check(kt_gone > 0 && dtt_dtd_logsays(&kt_dd, what),
		    "dtd says the gone tree's (%d) events could not be opened",
		    (int)kt_gone);
	}
	dtt_dtd_fini(&kt_dd, true);
	return dtt_done();
}
