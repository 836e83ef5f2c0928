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
 * What the tracepoint provider costs, in two workloads, REPS runs of
 * each, medians, tracers alternated so that drift hits all of them:
 *
 *  1. dtd's CPU per million events: a getppid(2) loop of CALLS calls
 *     (this program, "loop") with tracepoint:raw_syscalls:sys_enter
 *     recorded by a plain reader of the device in this process; dtd's
 *     CPU (every thread, schedstat) before and after, divided by the
 *     events it delivered.  Beside it, the loop's time a call untraced,
 *     traced so, and with bpftrace counting raw_syscalls:sys_enter.
 *  2. A sched-heavy workload: ROUNDS round trips of one byte over two
 *     pipes between two processes ("pingpong"), its time a round trip
 *     untraced, with btrace -c counting tracepoint:sched:on__cpu and
 *     off__cpu, and with bpftrace -c counting sched:sched_switch; dtd's
 *     CPU over the btrace run, and the counts each tracer printed.
 *  3. A filter the kernel evaluates: btrace -c running the loop under
 *     tracepoint:raw_syscalls:sys_enter /comm == "x"/ (another
 *     program's calls), pushed (the kernel's tracepoint filter) and with
 *     BTRACE_NOPUSH=1; dtd's CPU over each run, and their ratio.
 *
 *	tp_bench DTD BTRACE [REPS [CALLS [ROUNDS]]]	(root)
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"

#define MAXREPS		15
#define MAXCPU		256
#define BPFTRACE	"/usr/bin/bpftrace"

static char		 tb_self[PATH_MAX];
static char		*tb_btrace;
static struct dtt_dtd	 tb_dd;
static pid_t		 tb_dtd;
static int		 tb_ncpu;
static int		 tb_null = -1;	/* bpftrace's chatter goes here */

/* --- the workloads, run as children of ours ---------------------------- */

static int
loop(long n)
{
	long i;

	for (i = 0; i < n; i++)
		(void)getppid();
	return 0;
}

/* ns a round trip on stdout, as "pingpong NS". */
static int
pingpong(long n)
{
	int ab[2], ba[2];
	uint64_t t0, t1;
	char c = 0;
	long i;
	pid_t kid;

	if (pipe(ab) == -1 || pipe(ba) == -1)
		return 1;
	if ((kid = fork()) == -1)
		return 1;
	if (kid == 0) {
		for (i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	t1 = dtt_clock_ns(CLOCK_MONOTONIC);
	if (waitpid(kid, NULL, 0) != kid)
		return 1;
	printf("pingpong %.1f\n", (double)(t1 - t0) / (double)n);
	return 0;
}

/* --- helpers ----------------------------------------------------------- */

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	if (n == 0)
		return -1;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
pin(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < tb_ncpu; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Run argv with its stdout to us; its output in out (NUL-ended), its
 * wall time in *ns, its stderr to err (-1: ours).  0 when it exited 0.
 */
static int
run(char *const argv[], char *out, size_t outlen, uint64_t *ns, int err)
{
	size_t len = 0;
	ssize_t r;
	uint64_t t0;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fflush(stdout);
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	pid = dtt_spawn(argv, NULL, -1, p[1], err, -1);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	while ((r = read(p[0], out + len, outlen - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	*ns = dtt_clock_ns(CLOCK_MONOTONIC) - t0;
	return dtt_exited0(status) ? 0 : -1;
}

/* The number after the first occurrence of key in s, or -1. */
static double
after(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p != NULL ? strtod(p + strlen(key), NULL) : -1;
}

/* --- 1. raw_syscalls:sys_enter ------------------------------------------ */

/*
 * The device reader: counts every event, and each CPU's first event of
 * ours stamped after tr_after (0: none wanted yet), which proves every
 * earlier event of that CPU was read (one CPU's events arrive in order).
 */
struct reader {
	int		 tr_fd;
	pid_t		 tr_self;
	_Atomic uint64_t tr_after;
	_Atomic uint64_t tr_events;
	_Atomic int	 tr_proven;
	_Atomic int	 tr_quit;
	bool		 tr_seen[MAXCPU];
};

static void *
reader(void *arg)
{
	static struct dt_evt evs[1024];
	struct reader *tr = arg;
	uint64_t after, ns;
	long n, i;

	while (!atomic_load(&tr->tr_quit)) {
		n = dtt_read(tr->tr_fd, evs, sizeof(evs) / sizeof(evs[0]),
		    100);
		if (n < 0 && errno != ETIMEDOUT && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		atomic_fetch_add(&tr->tr_events, (uint64_t)n);
		if ((after = atomic_load(&tr->tr_after)) == 0)
			continue;
		for (i = 0; i < n; i++) {
			ns = (uint64_t)evs[i].dtev_tsp.tv_sec * 1000000000ULL +
			    (uint64_t)evs[i].dtev_tsp.tv_nsec;
			if (evs[i].dtev_pid == tr->tr_self && ns > after &&
			    evs[i].dtev_cpu < MAXCPU &&
			    !tr->tr_seen[evs[i].dtev_cpu]) {
				tr->tr_seen[evs[i].dtev_cpu] = true;
				atomic_fetch_add(&tr->tr_proven, 1);
			}
		}
	}
	return NULL;
}

struct sysrun {
	double	sr_ns;		/* the loop's wall time a call */
	double	sr_events;	/* events dtd delivered */
	double	sr_cpu_ms;	/* dtd's CPU over them */
	double	sr_lost;	/* dropped in rings */
};

static int
sys_dtd(char *const argv[], long calls, struct sysrun *sr)
{
	struct reader tr;
	struct dtioc_stat st;
	pthread_t thr;
	char out[64];
	uint64_t c0, c1, ns, deadline;
	uint32_t pbn;
	int fd, c, rv = -1;

	memset(&tr, 0, sizeof(tr));
	if ((fd = dtt_open(tb_dd.dd_dev)) == -1)
		return -1;
	tr.tr_fd = fd;
	tr.tr_self = getpid();
	if ((pbn = dtt_probe(fd, "tracepoint", "raw_syscalls",
	    "sys_enter")) == 0 || dtt_enable(fd, pbn, 0, 0) != 0)
		goto out;
	if (pthread_create(&thr, NULL, reader, &tr) != 0)
		goto out;
	c0 = dtt_cpu_ns(tb_dtd);
	if (dtt_record(fd, 1) != 0 ||
	    run(argv, out, sizeof(out), &ns, -1) != 0)
		goto stop;
	/* Every CPU shows one of our calls after the loop ended. */
	atomic_store(&tr.tr_after, dtt_clock_ns(CLOCK_REALTIME));
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 30000000000ULL;
	while (atomic_load(&tr.tr_proven) < tb_ncpu &&
	    dtt_clock_ns(CLOCK_MONOTONIC) < deadline)
		for (c = 0; c < tb_ncpu; c++) {
			pin(c);
			(void)getppid();
		}
	pin(-1);
	c1 = dtt_cpu_ns(tb_dtd);
	if (atomic_load(&tr.tr_proven) < tb_ncpu)
		goto stop;
	dtt_record(fd, 0);
	if (dtt_stats(fd, &st) != 0)
		goto stop;
	sr->sr_ns = (double)ns / (double)calls;
	sr->sr_events = (double)(st.dtst_readevt + st.dtst_dropevt);
	sr->sr_lost = (double)st.dtst_dropevt;
	sr->sr_cpu_ms = (double)(c1 - c0) / 1e6;
	rv = 0;
stop:
	atomic_store(&tr.tr_quit, 1);
	pthread_join(thr, NULL);
out:
	close(fd);
	return rv;
}

/*
 * bpftrace with prog, until it says it attached: its pid, its output
 * in *outp.
 */
static pid_t
bpftrace_start(const char *prog, FILE **outp)
{
	char *argv[] = { BPFTRACE, "-e", (char *)prog, NULL };
	char buf[256];
	int p[2];
	pid_t pid;

	if (access(argv[0], X_OK) != 0 || pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = dtt_spawn(argv, NULL, -1, p[1], tb_null, -1);
	close(p[1]);
	if ((*outp = fdopen(p[0], "r")) == NULL) {
		close(p[0]);
		return -1;
	}
	while (fgets(buf, sizeof(buf), *outp) != NULL)
		if (strncmp(buf, "Attaching", 9) == 0)
			return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fclose(*outp);
	return -1;
}

static void
bpftrace_stop(pid_t pid, FILE *out)
{
	char buf[256];

	kill(pid, SIGINT);
	while (fgets(buf, sizeof(buf), out) != NULL)
		continue;
	fclose(out);
	waitpid(pid, NULL, 0);
}

static int
bench_sys(int reps, long calls)
{
	double base[MAXREPS], dtd[MAXREPS], bpf[MAXREPS], cpu[MAXREPS];
	double evs[MAXREPS], lost[MAXREPS], mb, md, mp;
	char nbuf[32], out[64];
	char *argv[] = { tb_self, "loop", nbuf, NULL };
	struct sysrun sr;
	uint64_t ns;
	int r, nbpf = 0;
	FILE *bout;
	pid_t bpid;

	snprintf(nbuf, sizeof(nbuf), "%ld", calls);
	for (r = 0; r < reps; r++) {
		if (run(argv, out, sizeof(out), &ns, -1) != 0)
			return -1;
		base[r] = (double)ns / (double)calls;
		if (sys_dtd(argv, calls, &sr) != 0) {
			fprintf(stderr, "tp_bench: raw_syscalls run failed\n");
			return -1;
		}
		dtd[r] = sr.sr_ns;
		evs[r] = sr.sr_events;
		lost[r] = sr.sr_lost;
		cpu[r] = sr.sr_cpu_ms * 1e6 / sr.sr_events;
		if ((bpid = bpftrace_start("tracepoint:raw_syscalls:sys_enter "
		    "{ @[comm] = count(); }", &bout)) > 0) {
			if (run(argv, out, sizeof(out), &ns, -1) == 0)
				bpf[nbpf++] = (double)ns / (double)calls;
			bpftrace_stop(bpid, bout);
		}
	}
	mb = median(base, reps);
	md = median(dtd, reps);
	mp = median(bpf, nbpf);
	printf("1. getppid loop of %ld calls, tracepoint:raw_syscalls:sys_enter "
	    "(every process), %d runs, medians\n", calls, reps);
	printf("  %-34s %8.1f ns/call\n", "untraced", mb);
	printf("  %-34s %8.1f ns/call  %5.2fx\n", "dtd, a device reader", md,
	    md / mb);
	if (nbpf > 0)
		printf("  %-34s %8.1f ns/call  %5.2fx\n",
		    "bpftrace @[comm] = count()", mp, mp / mb);
	printf("  dtd: %.0f events a run (%.0f dropped in rings), "
	    "%.1f ms of CPU per million events\n", median(evs, reps),
	    median(lost, reps), median(cpu, reps));
	return 0;
}

/* --- 3. a filter the kernel evaluates ----------------------------------- */

/*
 * btrace -c running the getppid loop under a raw_syscalls rule whose
 * filter wants another program's calls (comm == "x", none here): with
 * the filter pushed (btrace's default, the kernel's tracepoint filter)
 * and with BTRACE_NOPUSH=1 (every call crosses perf and dtd).  dtd's CPU
 * over each run and the loop's time a call; the two modes alternate.
 */
static int
bench_filter(int reps, long calls)
{
	double cpu[2][MAXREPS], per[2][MAXREPS], m[2], c[2];
	char cmd[PATH_MAX + 64], out[4096];
	char *a_bt[] = { NULL, "-d", tb_dd.dd_dev, "-c", cmd, "-e",
	    "tracepoint:raw_syscalls:sys_enter /comm == \"x\"/ "
	    "{ @ = count(); }", NULL };
	uint64_t ns, c0, c1;
	int r, mode;

	a_bt[0] = tb_btrace;
	snprintf(cmd, sizeof(cmd), "%s loop %ld", tb_self, calls);
	for (r = 0; r < reps; r++)
		for (mode = 0; mode < 2; mode++) {
			if (mode == 1)
				setenv("BTRACE_NOPUSH", "1", 1);
			c0 = dtt_cpu_ns(tb_dtd);
			if (run(a_bt, out, sizeof(out), &ns, tb_null) != 0) {
				unsetenv("BTRACE_NOPUSH");
				fprintf(stderr, "tp_bench: btrace run failed\n");
				return -1;
			}
			c1 = dtt_cpu_ns(tb_dtd);
			unsetenv("BTRACE_NOPUSH");
			cpu[mode][r] = (double)(c1 - c0) / 1e6;
			per[mode][r] = (double)ns / (double)calls;
		}
	for (mode = 0; mode < 2; mode++) {
		c[mode] = median(cpu[mode], reps);
		m[mode] = median(per[mode], reps);
	}
	printf("3. btrace -c getppid loop of %ld calls, "
	    "tracepoint:raw_syscalls:sys_enter /comm == \"x\"/, %d runs, "
	    "medians\n", calls, reps);
	printf("  %-34s %8.1f ms of dtd's CPU  %8.1f ns/call (btrace's run)\n",
	    "filter in the kernel", c[0], m[0]);
	printf("  %-34s %8.1f ms of dtd's CPU  %8.1f ns/call (btrace's run)\n",
	    "BTRACE_NOPUSH=1 (dtd filters)", c[1], m[1]);
	printf("  dtd's CPU, kernel filter / dtd's: %.3f\n",
	    c[1] > 0 ? c[0] / c[1] : 0);
	return 0;
}

/* --- 2. the pipe ping-pong ---------------------------------------------- */

static int
bench_sched(int reps, long rounds)
{
	double base[MAXREPS], bt[MAXREPS], bpf[MAXREPS], cpu[MAXREPS];
	double on[MAXREPS], off[MAXREPS], sw[MAXREPS], mb, mt, mp;
	char cmd[PATH_MAX + 64], nbuf[32], out[4096];
	char *a_base[] = { tb_self, "pingpong", nbuf, NULL };
	char *a_bt[] = { NULL, "-d", tb_dd.dd_dev, "-c", cmd, "-e",
	    "tracepoint:sched:on__cpu { @on = count(); } "
	    "tracepoint:sched:off__cpu { @off = count(); }", NULL };
	char *a_bpf[] = { BPFTRACE, "-c", cmd, "-e",
	    "tracepoint:sched:sched_switch { @sw = count(); }", NULL };
	uint64_t ns, c0, c1;
	int r, nbpf = 0;

	a_bt[0] = tb_btrace;
	snprintf(nbuf, sizeof(nbuf), "%ld", rounds);
	snprintf(cmd, sizeof(cmd), "%s pingpong %ld", tb_self, rounds);
	for (r = 0; r < reps; r++) {
		if (run(a_base, out, sizeof(out), &ns, -1) != 0 ||
		    (base[r] = after(out, "pingpong ")) <= 0)
			return -1;
		c0 = dtt_cpu_ns(tb_dtd);
		if (run(a_bt, out, sizeof(out), &ns, -1) != 0 ||
		    (bt[r] = after(out, "pingpong ")) <= 0) {
			fprintf(stderr, "tp_bench: btrace run failed: %s\n",
			    out);
			return -1;
		}
		c1 = dtt_cpu_ns(tb_dtd);
		on[r] = after(out, "@on: ");
		off[r] = after(out, "@off: ");
		cpu[r] = (double)(c1 - c0) / 1e6;
		if (access(BPFTRACE, X_OK) == 0 &&
		    run(a_bpf, out, sizeof(out), &ns, tb_null) == 0 &&
		    (bpf[nbpf] = after(out, "pingpong ")) > 0) {
			sw[nbpf] = after(out, "@sw: ");
			nbpf++;
		}
	}
	mb = median(base, reps);
	mt = median(bt, reps);
	mp = median(bpf, nbpf);
	printf("2. pipe ping-pong between two processes, %ld round trips, "
	    "%d runs, medians\n", rounds, reps);
	printf("  %-34s %8.1f ns/round trip\n", "untraced", mb);
	printf("  %-34s %8.1f ns/round trip  %5.2fx\n",
	    "btrace on__cpu + off__cpu count", mt, mt / mb);
	if (nbpf > 0)
		printf("  %-34s %8.1f ns/round trip  %5.2fx\n",
		    "bpftrace sched_switch count", mp, mp / mb);
	printf("  btrace counted %.0f on__cpu, %.0f off__cpu (system wide); "
	    "dtd's CPU %.1f ms a run, %.1f ms per million events\n",
	    median(on, reps), median(off, reps), median(cpu, reps),
	    median(cpu, reps) * 1e6 / (median(on, reps) + median(off, reps)));
	if (nbpf > 0)
		printf("  bpftrace counted %.0f sched_switch\n",
		    median(sw, nbpf));
	return 0;
}

int
main(int argc, char *argv[])
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	char err[1024];
	long calls = 2000000, rounds = 100000;
	int reps = 5, rv = 0;

	if (argc == 3 && strcmp(argv[1], "loop") == 0)
		return loop(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "pingpong") == 0)
		return pingpong(atol(argv[2]));
	if (argc < 3) {
		fprintf(stderr,
		    "usage: tp_bench DTD BTRACE [REPS [CALLS [ROUNDS]]]\n");
		return 2;
	}
	tb_btrace = argv[2];
	if (argc > 3)
		reps = atoi(argv[3]);
	if (argc > 4)
		calls = atol(argv[4]);
	if (argc > 5)
		rounds = atol(argv[5]);
	if (reps < 1 || reps > MAXREPS || calls < 1000 || rounds < 1000) {
		fprintf(stderr, "REPS 1..%d, CALLS and ROUNDS >= 1000\n",
		    MAXREPS);
		return 2;
	}
	if (realpath("/proc/self/exe", tb_self) == NULL ||
	    realpath(tb_btrace, err) == NULL ||
	    (tb_btrace = strdup(err)) == NULL) {
		perror("tp_bench");
		return 2;
	}
	tb_ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (tb_ncpu > MAXCPU)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	tb_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	/* bpftrace's maps want locked memory. */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	if (dtt_dtd_init(&tb_dd, "udt-tpbench") == -1 ||
	    (tb_dtd = dtt_dtd_start(&tb_dd, argv[1],
	    (char *[]){ "--no-ksyms", NULL }, err, sizeof(err))) == -1) {
		fprintf(stderr, "tp_bench: dtd: %s\n", err);
		dtt_dtd_fini(&tb_dd, true);
		return 1;
	}
	printf("%d CPUs; dtd's CPU from /proc/PID/task/*/schedstat\n",
	    tb_ncpu);
	if (bench_sys(reps, calls) != 0 || bench_sched(reps, rounds) != 0 ||
	    bench_filter(reps, calls) != 0)
		rv = 1;
	if (!dtt_exited0(dtt_dtd_stop(&tb_dd, SIGTERM))) {
		fprintf(stderr, "tp_bench: dtd did not exit cleanly\n");
		rv = 1;
	}
	dtt_dtd_fini(&tb_dd, true);
	return rv;
}
