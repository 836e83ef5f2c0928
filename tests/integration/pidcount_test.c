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
 * btrace -p's counts of a kernel tracepoint kept by the kernel (issue
 * 22, providers/tracepoint/dt_tp_pcnt.c), through a real device file,
 * against a dtd of our own.  Root only (perf on other processes).
 *   pidcount_test inherit	no dtd: what dt_tp_pcnt.c counts on, on
 *				this kernel: a per-task counter with
 *				inherit + inherit_thread reads its own
 *				count, its live copies' and its exited
 *				ones', a copy's copy's too, goes on after
 *				its own thread exited, and counts no fork
 *   pidcount_test count DTD TARGET BTRACE	three btrace -p at once on
 *				a target making getppid() flat out (a
 *				thread listed at the start and exiting
 *				first, main, a thread made after the start
 *				and one it makes), beside a noisy process
 *				and an open that holds the shared event (the
 *				switch-over by time): /arg0 == 39/ counted
 *				as @, @[probe] and @[pid], each exactly
 *				the target's calls, none dropped, and dtd
 *				read no record of them
 *   pidcount_test across DTD TARGET BTRACE	the target calling flat
 *				out across btrace's start, an open holding
 *				the shared event: @[pid] keyed by the
 *				target's pid, at most its calls, at least
 *				those it made after btrace said go
 *   pidcount_test tid DTD TARGET BTRACE	@[tid] (no counter knows a
 *				thread), at a paced rate: sampled, exact
 *   pidcount_test off DTD TARGET BTRACE	USERDT_KCOUNT=0: @ sampled as
 *				before, exact at a paced rate
 *   pidcount_test budget DTD TARGET BTRACE	USERDT_TEST_PIDFDS: a
 *				budget of the target's two threads counts;
 *				one descriptor less, dtd says it cannot
 *				follow them and filters the pid itself,
 *				exact at a paced rate
 *
 * The calls are made only after every btrace said "go" from BEGIN,
 * which runs after its DTIOCRECORD returned: the counters were on by
 * then, so the switch-over's window holds none of them; but in across,
 * whose calls are under way as btrace starts.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"

#define PC_MAIN		400000	/* flat out: main's getppid() calls */
#define PC_EARLY	100000	/* the early thread's */
#define PC_LATE		50000	/* the late thread's, its nested one's */
#define PC_PACED	3000	/* each thread's, paced */
#define PC_RATE		"20000"	/* a second, a thread */
#define PC_NBT		3
#define PC_MS		120000
#define PC_ACROSS	200000	/* across: the calls after the mark */

static const char	*pc_dtd, *pc_target, *pc_btrace;
static struct dtt_dtd	 pc_dd;

/* --- inherit: the kernel's counters, no dtd --- */

/* Each thread's go, and the one step each says it reached. */
static sem_t		 pc_go_o, pc_go_c, pc_go_g, pc_step;
static pid_t		 pc_otid;
static pthread_t	 pc_c, pc_g;

/* n getppid() calls, raw: no libc caching. */
static void
pc_calls(long n)
{
	while (n-- > 0)
		(void)syscall(SYS_getppid);
}

/* tracefs's id of raw_syscalls:sys_enter, or -1. */
static int
pc_tp_id(void)
{
	static const char *paths[] = {
	    "/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
	    "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id" };
	unsigned int i;
	FILE *f;
	int id;

	for (i = 0; i < 2; i++)
		if ((f = fopen(paths[i], "r")) != NULL) {
			if (fscanf(f, "%d", &id) != 1)
				id = -1;
			fclose(f);
			if (id >= 0)
				return id;
		}
	return -1;
}

/* A counter's read(), or -1. */
static long long
pc_read(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ?
	    (long long)v : -1;
}

/* A copy's copy made after the owner exited: 4 calls. */
static void *
pc_h(void *arg)
{
	pc_calls(4);
	return arg;
}

/* The copy's copy: 7 calls; later 3, and a thread of its own. */
static void *
pc_gfn(void *arg)
{
	pthread_t h;

	pc_calls(7);
	sem_post(&pc_step);
	sem_wait(&pc_go_g);
	pc_calls(3);
	if (pthread_create(&h, NULL, pc_h, NULL) != 0)
		exit(1);
	pthread_join(h, NULL);
	return arg;
}

/* The owner's copy: 20 calls and a thread; later 5, and it ends. */
static void *
pc_cfn(void *arg)
{
	pc_calls(20);
	if (pthread_create(&pc_g, NULL, pc_gfn, NULL) != 0)
		exit(1);
	sem_wait(&pc_go_c);
	pc_calls(5);
	return arg;
}

/* The owner: 10 calls, a fork that must not count, a thread; it ends. */
static void *
pc_ofn(void *arg)
{
	pid_t f;
	int st;

	pc_otid = (pid_t)syscall(SYS_gettid);
	sem_post(&pc_step);
	sem_wait(&pc_go_o);
	pc_calls(10);
	if ((f = fork()) == 0) {
		pc_calls(1000);
		_exit(0);
	}
	if (f == -1 || waitpid(f, &st, 0) != f ||
	    pthread_create(&pc_c, NULL, pc_cfn, NULL) != 0)
		exit(1);
	sem_wait(&pc_go_o);
	return arg;
}

static void
pc_expect(int fd, long long want, const char *what)
{
	long long v = pc_read(fd);

	dtt_check(v == want, "inherit: %s: %lld, want %lld", what, v, want);
}

/*
 * What dt_tp_pcnt.c counts on, on this kernel: only the threads'
 * getppid() calls count (the counter's filter), so what the sanitizer
 * or libc call meanwhile is no matter.
 */
static void
run_inherit(void)
{
	struct perf_event_attr attr;
	char filter[32];
	pthread_t o;
	int id, fd;

	if ((id = pc_tp_id()) == -1) {
		dtt_check(false, "tracefs lists raw_syscalls:sys_enter");
		return;
	}
	if (sem_init(&pc_go_o, 0, 0) == -1 || sem_init(&pc_go_c, 0, 0) == -1 ||
	    sem_init(&pc_go_g, 0, 0) == -1 || sem_init(&pc_step, 0, 0) == -1 ||
	    pthread_create(&o, NULL, pc_ofn, NULL) != 0)
		return;
	sem_wait(&pc_step);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.inherit = 1;
	attr.inherit_thread = 1;
	/*
	 * Enabled once filtered: the owner's futex entry, if it has not
	 * yet gone to sleep on pc_go_o, would count.
	 */
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, pc_otid, -1, -1,
	    PERF_FLAG_FD_CLOEXEC);
	snprintf(filter, sizeof(filter), "id == %d", SYS_getppid);
	if (!dtt_check(fd != -1 && ioctl(fd, PERF_EVENT_IOC_SET_FILTER,
	    filter) == 0 && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0,
	    "inherit: a counter on the owner (%s)",
	    strerror(errno))) {
		sem_post(&pc_go_o);
		sem_post(&pc_go_o);
		pthread_join(o, NULL);
		return;
	}
	sem_post(&pc_go_o);
	sem_wait(&pc_step);	/* the copy's copy made its 7 */
	pc_expect(fd, 37, "the owner's 10, its live copy's 20, that one's "
	    "live copy's 7; not a fork's 1000");
	sem_post(&pc_go_o);
	pthread_join(o, NULL);
	pc_expect(fd, 37, "the owner exited: its count stays");
	sem_post(&pc_go_c);
	pthread_join(pc_c, NULL);
	pc_expect(fd, 42, "an exited copy's folded in");
	sem_post(&pc_go_g);
	pthread_join(pc_g, NULL);
	pc_expect(fd, 49, "a thread made after the owner exited counts");
	close(fd);
}

/* --- btrace -p --- */

/*
 * Up to n bytes of fd into buf, waiting at most ms in all: how many
 * came (fewer at EOF or the timeout), so that a hung peer fails the
 * test, which then stops its own dtd, rather than meson's timeout.
 */
static size_t
pc_read_to(int fd, char *buf, size_t n, int ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	uint64_t until = dtt_clock_ns(CLOCK_MONOTONIC) +
	    (uint64_t)ms * 1000000;
	uint64_t now;
	size_t got = 0;
	ssize_t r;

	while (got < n && (now = dtt_clock_ns(CLOCK_MONOTONIC)) < until) {
		if (poll(&pfd, 1, (int)((until - now) / 1000000) + 1) <= 0)
			continue;
		if ((r = read(fd, buf + got, n - got)) <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

struct pc_bt {
	pid_t	 pb_pid;
	int	 pb_out;		/* its stdout, "go" read */
	char	 pb_err[PATH_MAX];	/* its stderr */
};

/*
 * btrace -v -p pid (0: none) -e 'BEGIN { printf("go\n"); } rule', once
 * it said "go".
 */
static bool
pc_bt_start(struct pc_bt *b, pid_t pid, const char *rule, int n)
{
	char script[512], ps[16], go[3];
	char *argv[] = { (char *)pc_btrace, "-v", "-d", pc_dd.dd_dev, "-p",
	    ps, "-e", script, NULL };
	int out[2], err;

	/* 0: the whole machine's, no -p */
	if (pid == 0) {
		argv[4] = "-e";
		argv[5] = script;
		argv[6] = NULL;
	}
	snprintf(ps, sizeof(ps), "%d", (int)pid);
	snprintf(script, sizeof(script), "BEGIN { printf(\"go\\n\"); } %s",
	    rule);
	snprintf(b->pb_err, sizeof(b->pb_err), "%s/bt%d.err", pc_dd.dd_dir,
	    n);
	b->pb_pid = -1;
	if (pipe2(out, O_CLOEXEC) == -1)
		return false;
	if ((err = open(b->pb_err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		close(out[0]);
		close(out[1]);
		return false;
	}
	b->pb_pid = dtt_spawn(argv, NULL, -1, out[1], err, -1);
	close(out[1]);
	close(err);
	b->pb_out = out[0];
	if (dtt_check(b->pb_pid != -1 && pc_read_to(b->pb_out, go, 3,
	    PC_MS) == 3 && memcmp(go, "go\n", 3) == 0, "btrace %d (%s) says "
	    "go", n, rule))
		return true;
	/* not left running, nor unreaped: pc_bt_end() skips it */
	if (b->pb_pid != -1)
		(void)dtt_stop(b->pb_pid, SIGTERM, PC_MS);
	close(b->pb_out);
	b->pb_pid = -1;
	return false;
}

/* Its end with the target: its output and stderr into out, err. */
static void
pc_bt_end(struct pc_bt *b, char *out, size_t olen, char *err, size_t elen)
{
	ssize_t r;
	size_t n = 0;
	int st, fd;

	out[0] = err[0] = '\0';
	if (b->pb_pid == -1)
		return;
	while (n + 1 < olen && (r = read(b->pb_out, out + n, olen - n - 1)) >
	    0)
		n += (size_t)r;
	out[n] = '\0';
	close(b->pb_out);
	st = dtt_wait(b->pb_pid, PC_MS);
	dtt_check(dtt_exited0(st), "btrace exits 0 with the target");
	if ((fd = open(b->pb_err, O_RDONLY | O_CLOEXEC)) != -1) {
		r = read(fd, err, elen - 1);
		err[r > 0 ? r : 0] = '\0';
		close(fd);
	}
}

/* The value of the one line "key: N" or "key[...]: N" of out; -1: none. */
static long long
pc_value(const char *out, const char *key)
{
	const char *p = out, *c;
	long long v = -1;

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p += p != NULL) {
		if (strncmp(p, key, strlen(key)) != 0 ||
		    (c = strstr(p, ": ")) == NULL)
			continue;
		if (v != -1)
			return -2;	/* two lines */
		v = atoll(c + 2);
	}
	return v;
}

/* N of btrace -v's "N of them counted by the kernel", or -1. */
static long long
pc_kcounted(const char *err)
{
	const char *p = strstr(err, " of them counted by the kernel\n");

	if (p == NULL)
		return -1;
	while (p > err && p[-1] != '\n')
		p--;
	return atoll(p);
}

/*
 * The target (pid_target.c) with how, ready: its pid, its stdin in *go,
 * its stdout in *outp (NULL: closed).
 */
static pid_t
pc_spawn(int *go, int *outp, long n, long m, long k, const char *how)
{
	char ns[16], ms[16], ks[16], buf[6];
	char *argv[] = { (char *)pc_target, ns, ms, ks, (char *)how, NULL };
	int in[2], out[2];
	pid_t pid;

	snprintf(ns, sizeof(ns), "%ld", n);
	snprintf(ms, sizeof(ms), "%ld", m);
	snprintf(ks, sizeof(ks), "%ld", k);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		return -1;
	pid = dtt_spawn(argv, NULL, in[0], out[1], -1, -1);
	close(in[0]);
	close(out[1]);
	if (pid == -1 || pc_read_to(out[0], buf, 6, PC_MS) != 6 ||
	    memcmp(buf, "ready\n", 6) != 0) {
		dtt_check(false, "target ready");
		if (pid != -1)
			(void)dtt_stop(pid, SIGKILL, PC_MS);
		close(out[0]);
		close(in[1]);
		return -1;
	}
	if (outp != NULL)
		*outp = out[0];
	else
		close(out[0]);
	*go = in[1];
	return pid;
}

/* dtd's perf records, from its log once stopped: 0 when none said. */
static long long
pc_records(void)
{
	char line[512];
	long long n = 0, v;
	FILE *f;

	if ((f = fopen(pc_dd.dd_err, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "dtd: tracepoint: %lld records", &v) == 1)
			n = v;
	fclose(f);
	return n;
}

static bool
pc_dtd_start(void)
{
	char errbuf[4096];

	if (dtt_dtd_init(&pc_dd, "pidcount_test") == -1 ||
	    dtt_dtd_start(&pc_dd, pc_dtd, (char *[]){ "--no-ksyms", NULL },
	    errbuf, sizeof(errbuf)) == -1)
		return dtt_check(false, "dtd starts: %s", errbuf);
	return true;
}

/* The eBPF programs dtd holds open now, or -1. */
static int
pc_progs(void)
{
	char path[64], fd[PATH_MAX], link[64];
	struct dirent *de;
	ssize_t len;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pc_dd.dd_pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		snprintf(fd, sizeof(fd), "%s/%s", path, de->d_name);
		if ((len = readlink(fd, link, sizeof(link) - 1)) <= 0)
			continue;
		link[len] = '\0';
		n += strcmp(link, "anon_inode:bpf-prog") == 0;
	}
	closedir(d);
	return n;
}

/* dtd's programs before pc_run()'s btraces started, and once all had */
static int pc_progs0, pc_progs1;

/*
 * btrace -p on the target for each of rules[n], the target's calls
 * made once all said go: each btrace's output and stderr in outs,
 * errs.  The target's pid, or -1.
 */
static pid_t
pc_run(const char *how, long n, long m, long k, const char **rules,
    int nrules, char outs[][4096], char errs[][8192])
{
	struct pc_bt bt[PC_NBT];
	pid_t tpid;
	int go, i, st;

	if ((tpid = pc_spawn(&go, NULL, n, m, k, how)) == -1)
		return -1;
	pc_progs0 = pc_progs();
	for (i = 0; i < nrules; i++)
		if (!pc_bt_start(&bt[i], tpid, rules[i], i))
			break;
	nrules = i;
	pc_progs1 = pc_progs();
	dtt_check(write(go, "\n", 1) == 1, "target goes");
	close(go);
	st = dtt_wait(tpid, PC_MS);
	dtt_check(dtt_exited0(st), "target exits 0");
	for (i = 0; i < nrules; i++)
		pc_bt_end(&bt[i], outs[i], sizeof(outs[i]), errs[i],
		    sizeof(errs[i]));
	return tpid;
}

/* The shared event held by another open (a printf is no count). */
static bool
pc_sharer(struct pc_bt *b)
{
	return pc_bt_start(b, 0, "tracepoint:raw_syscalls:sys_enter "
	    "/tid == 1/ { printf(\"x\\n\"); }", PC_NBT);
}

static void
pc_sharer_end(struct pc_bt *b)
{
	static char sout[4096], serr[8192];

	(void)kill(b->pb_pid, SIGTERM);
	pc_bt_end(b, sout, sizeof(sout), serr, sizeof(serr));
}

/* The key of out's one line "@[K]: N", or -1. */
static long long
pc_key(const char *out)
{
	const char *p = strstr(out, "@[");

	return p != NULL && strstr(p + 2, "@[") == NULL ? atoll(p + 2) : -1;
}

/*
 * The target's calls, counted by the kernel: three rules at once, by
 * counters on the threads (a kernel program, tried first, takes no
 * arg0 term: dt_kbpf_filter_ok()).
 */
static void
run_count(void)
{
	static const char *rules[PC_NBT] = {
	    "tracepoint:raw_syscalls:sys_enter /arg0 == 39/ { @ = count(); }",
	    "tracepoint:raw_syscalls:sys_enter /arg0 == 39/ "
	    "{ @[probe] = count(); }",
	    "tracepoint:raw_syscalls:sys_enter /arg0 == 39/ "
	    "{ @[pid] = count(); }" };
	static char outs[PC_NBT][4096], errs[PC_NBT][8192];
	const long long want = PC_MAIN + PC_EARLY + 2 * PC_LATE;
	volatile uint64_t *calls;
	struct pc_bt sharer;
	long long v, recs;
	pid_t npid, tpid = -1;
	int i;

	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED || (npid = dtt_noise(calls, 100000)) == -1)
		return;
	/* the shared event on: the switch by time */
	if (pc_sharer(&sharer)) {
		tpid = pc_run("nest", PC_MAIN, PC_EARLY, PC_LATE, rules,
		    PC_NBT, outs, errs);
		pc_sharer_end(&sharer);
	}
	(void)dtt_stop(npid, SIGTERM, PC_MS);
	dtt_check(pc_progs1 == pc_progs0, "no kernel program: the counters "
	    "(%d programs, %d before)", pc_progs1, pc_progs0);
	for (i = 0; i < PC_NBT; i++) {
		/* the pid's line is the only one */
		v = pc_value(outs[i], i == 0 ? "@:" : i == 1 ?
		    "@[tracepoint:raw_syscalls:sys_enter]" : "@[");
		dtt_check(v == want, "%s: %lld, want %lld: %s%s", rules[i], v,
		    want, outs[i], errs[i]);
		dtt_check(strstr(errs[i], "\n0 events dropped\n") != NULL,
		    "%s: none dropped: %s", rules[i], errs[i]);
		dtt_check(pc_kcounted(errs[i]) == want, "%s: -v says the "
		    "kernel counted them: %s", rules[i], errs[i]);
	}
	/* the counter's pid, the process's, not a thread's or dtd's */
	dtt_check(tpid != -1 && pc_key(outs[2]) == tpid, "@[pid]'s key is "
	    "the target's %d: %s", (int)tpid, outs[2]);
	dtt_check(dtt_dtd_stop(&pc_dd, SIGTERM) != -1, "dtd stops");
	recs = pc_records();
	dtt_check(recs >= 0 && recs < want / 100, "dtd read %lld records of "
	    "%lld calls", recs, want);
}

/*
 * The start among the calls: the target calls flat out from before
 * btrace's start, with another open holding the shared event, so the
 * switch-over from it to the counters falls among them.  Told once
 * btrace said go, it notes how many calls it had made, makes
 * PC_ACROSS more, and says T (all its calls) and A (those entered
 * after it was told): btrace counts at most T, more being a call the
 * cut counted twice, and at least A, the counters being on before go.
 */
static void
run_across(void)
{
	static const char *rule = "tracepoint:raw_syscalls:sys_enter "
	    "/arg0 == 39/ { @[pid] = count(); }";
	static char outs[1][4096], errs[1][8192];
	struct pc_bt sharer, bt;
	char rep[64];
	long long t = -1, a = -1, v;
	size_t n;
	pid_t tpid;
	int go, out, st;

	if (!pc_sharer(&sharer))
		return;
	if ((tpid = pc_spawn(&go, &out, PC_ACROSS, 0, 0, "across")) != -1) {
		if (pc_bt_start(&bt, tpid, rule, 0)) {
			dtt_check(write(go, "\n", 1) == 1, "target told");
			n = pc_read_to(out, rep, sizeof(rep) - 1, PC_MS);
			rep[n] = '\0';
			dtt_check(sscanf(rep, "%lld %lld", &t, &a) == 2 &&
			    a >= PC_ACROSS - 1 && t > a, "target says its "
			    "calls: %s", rep);
		} else	/* untold, it would call on */
			(void)kill(tpid, SIGKILL);
		close(go);
		close(out);
		st = dtt_wait(tpid, PC_MS);
		if (st == -1)
			st = dtt_stop(tpid, SIGKILL, PC_MS);
		dtt_check(bt.pb_pid == -1 || dtt_exited0(st),
		    "target exits 0");
		if (bt.pb_pid != -1)
			pc_bt_end(&bt, outs[0], sizeof(outs[0]), errs[0],
			    sizeof(errs[0]));
	}
	pc_sharer_end(&sharer);
	if (tpid == -1 || bt.pb_pid == -1)
		return;
	v = pc_value(outs[0], "@[");
	dtt_check(v >= a && v <= t, "%s: %lld, between the %lld calls after "
	    "go and the %lld in all: %s%s", rule, v, a, t, outs[0], errs[0]);
	dtt_check(pc_key(outs[0]) == tpid, "@[pid]'s key is the target's "
	    "%d", (int)tpid);
	dtt_check(pc_kcounted(errs[0]) > 0, "-v says the kernel counted: %s",
	    errs[0]);
}

/*
 * A count the kernel does not keep, at a paced rate (perf's buffers
 * hold it): exact, from dtd's records.
 */
static void
run_sampled(const char *rule, const char *key, bool sum)
{
	static char outs[1][4096], errs[1][8192];
	/* RATE: main, early, late; no nested thread */
	const long long want = 3 * PC_PACED;
	long long v = 0, recs;
	const char *p;

	pc_run(PC_RATE, PC_PACED, PC_PACED, PC_PACED, &rule, 1, outs, errs);
	if (sum) {
		/* one line a thread: the calls of each, summed */
		for (p = outs[0]; (p = strstr(p, key)) != NULL; p++)
			v += atoll(strstr(p, ": ") + 2);
	} else
		v = pc_value(outs[0], key);
	dtt_check(v == want, "%s: %lld, want %lld: %s%s", rule, v, want,
	    outs[0], errs[0]);
	dtt_check(strstr(errs[0], "\n0 events dropped\n") != NULL,
	    "%s: none dropped: %s", rule, errs[0]);
	dtt_check(pc_kcounted(errs[0]) == 0, "%s: -v says the kernel counted "
	    "none: %s", rule, errs[0]);
	dtt_check(dtt_dtd_stop(&pc_dd, SIGTERM) != -1, "dtd stops");
	recs = pc_records();
	dtt_check(recs >= want, "sampled: dtd read %lld records", recs);
}

/*
 * A budget of two descriptors: the first btrace's counters (two
 * threads at its start) take it, the second's samplers find none left
 * (two threads on each CPU): it falls back, said, to the shared event.
 */
static void
run_budget(void)
{
	static const char *rules[2] = {
	    "tracepoint:raw_syscalls:sys_enter /arg0 == 39/ { @ = count(); }",
	    "tracepoint:raw_syscalls:sys_enter /arg0 == 39 && "
	    "comm == \"pid_target\"/ { @ = count(); }" };
	static char outs[2][4096], errs[2][8192];
	const long long want = 3 * PC_PACED;
	long long recs;
	int i;

	pc_run(PC_RATE, PC_PACED, PC_PACED, PC_PACED, rules, 2, outs, errs);
	for (i = 0; i < 2; i++) {
		dtt_check(pc_value(outs[i], "@:") == want, "%s: %lld, want "
		    "%lld: %s%s", rules[i], pc_value(outs[i], "@:"), want,
		    outs[i], errs[i]);
		dtt_check(strstr(errs[i], "\n0 events dropped\n") != NULL,
		    "%s: none dropped: %s", rules[i], errs[i]);
	}
	dtt_check(pc_kcounted(errs[0]) == want && pc_kcounted(errs[1]) == 0,
	    "the first counted by the kernel, the second not: %s%s", errs[0],
	    errs[1]);
	dtt_check(dtt_dtd_stop(&pc_dd, SIGTERM) != -1, "dtd stops");
	dtt_check(dtt_dtd_logsays(&pc_dd, "cannot follow"), "dtd says it "
	    "cannot follow the threads for the second");
	recs = pc_records();
	dtt_check(recs >= want, "the second sampled: dtd read %lld records",
	    recs);
}

int
main(int argc, char *argv[])
{
	const char *m = argc >= 2 ? argv[1] : "";

	if (argc == 2 && strcmp(m, "inherit") == 0) {
		dtt_tag(m);
		run_inherit();
		return dtt_done();
	}
	if (argc != 5 || (strcmp(m, "count") != 0 && strcmp(m, "tid") != 0 &&
	    strcmp(m, "off") != 0 && strcmp(m, "budget") != 0 &&
	    strcmp(m, "across") != 0)) {
		fprintf(stderr, "usage: pidcount_test inherit | "
		    "count|across|tid|off|budget dtd target btrace\n");
		return 2;
	}
	pc_dtd = argv[2];
	pc_target = argv[3];
	pc_btrace = argv[4];
	dtt_tag(m);
	if (strcmp(m, "off") == 0)
		setenv("USERDT_KCOUNT", "0", 1);
	if (strcmp(m, "budget") == 0)
		setenv("USERDT_TEST_PIDFDS", "2", 1);
	if (pc_dtd_start()) {
		if (strcmp(m, "count") == 0)
			run_count();
		else if (strcmp(m, "across") == 0)
			run_across();
		else if (strcmp(m, "tid") == 0)
			run_sampled("tracepoint:raw_syscalls:sys_enter "
			    "/arg0 == 39/ { @[tid] = count(); }", "@[", true);
		else if (strcmp(m, "off") == 0)
			run_sampled("tracepoint:raw_syscalls:sys_enter "
			    "/arg0 == 39/ { @ = count(); }", "@:", false);
		else
			run_budget();
	}
	if (pc_dd.dd_pid != 0)
		dtt_check(dtt_dtd_stop(&pc_dd, SIGTERM) != -1, "dtd stops");
	dtt_dtd_fini(&pc_dd, true);
	return dtt_done();
}
