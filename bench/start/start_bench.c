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
 * start_bench DTD DTRUN [REPS [EXECS]]
 *
 * What tracing costs a program that starts (issue 20), with dtd running
 * and nothing enabled, against the same untraced; medians of REPS
 * (default 5) runs, the configurations interleaved in each, printed as
 * ratios of one run.  Traced twice: "cold", the rewrite-plan cache off
 * (USERDT_PLAN_CACHE=0: every exec decodes its objects, as a first run
 * does), and "warm", the cache on in a directory of the bench's own
 * (XDG_CACHE_HOME), filled by one run of each command before:
 *	dtrun /bin/true		EXECS (default 200) runs of `dtrun /bin/true`
 *				one after the other: the launcher, its
 *				loader tracer and the library, per exec
 *	in a traced tree	one traced process (this program, "spawn")
 *				runs /bin/true EXECS times, as a shell or
 *				make would: per exec, and each child's
 *				minor faults and max RSS (wait4's rusage)
 *	calls per image		strace -f of `dtrun -L /bin/true`: the calls
 *				of the /bin/true image from its execve on,
 *				less the untraced image's (the launcher's
 *				ptrace is refused under strace, hence -L);
 *				a process under strace neither maps nor
 *				writes images (udt_rw_image.c): these are
 *				the calls without them
 *	make -j2		32 small C files compiled and linked in a
 *				temporary directory, under dtrun and under
 *				bpftrace counting every system call (skipped
 *				with a note without bpftrace): wall time and
 *				CPU (the build's, the tracer's daemon's)
 * `start_bench project DIR` writes the make -j2 project into DIR and
 * exits, for the benchmarks that trace its build (bench/btrace).
 * START_BENCH_AB=LIB adds every traced configuration again with another
 * build of the preload library (USERDT_PRELOAD=LIB), say the one before
 * a change: before and after in one run; START_BENCH_AB_DTRUN=DTRUN also
 * takes that build's launcher (and so its helper) for it.
 * START_BENCH_AB_DTD=DTD (with or without START_BENCH_AB) runs that
 * configuration against a second dtd, another build of it, whose CPU
 * it counts: a change to dtd before and after in one run.
 * START_BENCH_MAKE_REPS=N runs the make N times a configuration (default
 * REPS, at most 3): a build's CPU varies more than an exec's.
 * Not a test: it asserts nothing, it prints.  Root (dtd, bpftrace).
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"

#define MAXREPS		32
#define NFILES		32
#define NCONF		5	/* untraced, cold, warm, warm (AB), bpftrace */
#define C_AB		3
#define C_BPF		4

extern char **environ;

static const char *confname[NCONF] = { "untraced", "traced cold",
    "traced warm", "warm (AB)", "bpftrace" };

static double
now_ns(void)
{
	return (double)dtt_clock_ns(CLOCK_MONOTONIC);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	if (n <= 0)
		return -1;
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
tv_ns(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e9 + (double)tv->tv_usec * 1e3;
}

/* CPU of every child reaped so far (we are their subreaper). */
static double
children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime);
}

/* Our children that outlive a run: dtd, bpftrace, the AB's dtd. */
static pid_t	keep[3] = { -1, -1, -1 };

/*
 * Reap what a run left behind (the launcher's helper, reparented to us),
 * keep[] aside: its CPU is counted, not its rusage.
 */
static void
reap_rest(void)
{
	char path[64];
	long pid;
	FILE *f;
	int more;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	    (int)getpid());
	do {
		more = 0;
		if ((f = fopen(path, "r")) == NULL)
			return;
		while (fscanf(f, "%ld", &pid) == 1)
			if ((pid_t)pid != keep[0] && (pid_t)pid != keep[1] &&
			    (pid_t)pid != keep[2]) {
				waitpid((pid_t)pid, NULL, 0);
				more = 1;
			}
		fclose(f);
	} while (more);
}

/*
 * Run argv with env, output to /dev/null (or out), and reap it and
 * whatever it left behind (the launcher's helper, reparented to us):
 * its exit status, its own rusage in *ru.
 */
static int
run(char *const argv[], char *const env[], int out, struct rusage *ru)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), st = -1, s;
	pid_t pid, w;

	pid = dtt_spawn(argv, env, null, out >= 0 ? out : null, null, -1);
	close(null);
	if (pid < 0)
		return -1;
	while ((w = wait4(pid, &s, 0, ru)) == -1 && errno == EINTR)
		continue;
	if (w == pid)
		st = s;
	reap_rest();
	return st;
}

/* --- spawn: the traced tree's process -------------------------------- */

/*
 * spawn N PROG: run PROG N times, one after the other, and print the
 * wall time per exec and each child's median minor faults and max RSS.
 */
static int
spawn(int n, char *prog)
{
	double flt[1024], rss[1024], t0;
	char *argv[] = { prog, NULL };
	struct rusage ru;
	int i, k = 0;

	if (n < 1 || n > 1024)
		return 2;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (run(argv, environ, -1, &ru) != 0)
			return 1;
		flt[k] = (double)ru.ru_minflt;
		rss[k++] = (double)ru.ru_maxrss;
	}
	printf("spawn %f %f %f\n", (now_ns() - t0) / n, median(flt, k),
	    median(rss, k));
	return 0;
}

/* --- environments ---------------------------------------------------- */

/* Ours without anything of a tracer, plus add, add2, add3 (or NULL). */
static char **
env_with(const char *add, const char *add2, const char *add3)
{
	char **e;
	int i, n = 0;

	for (i = 0; environ[i] != NULL; i++)
		;
	if ((e = calloc((size_t)i + 4, sizeof(*e))) == NULL)
		exit(1);
	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[i], "USERDT_", 7) != 0 &&
		    strncmp(environ[i], "XDG_CACHE_HOME=", 15) != 0)
			e[n++] = environ[i];
	if (add != NULL)
		e[n++] = (char *)add;
	if (add2 != NULL)
		e[n++] = (char *)add2;
	if (add3 != NULL)
		e[n++] = (char *)add3;
	e[n] = NULL;
	return e;
}

/* --- calls per image, by strace ---------------------------------------- */

/*
 * Lines of strace -f output from the successful execve of path on, in
 * that process; a call strace splits (unfinished, resumed) is one.
 */
static long
image_calls(const char *file, const char *path)
{
	char line[4096], want[PATH_MAX + 16];
	long n = 0;
	int pid = -1, p;
	FILE *f;

	if ((f = fopen(file, "r")) == NULL)
		return -1;
	snprintf(want, sizeof(want), "execve(\"%s\"", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *call;

		if (sscanf(line, "%d", &p) != 1)
			continue;
		call = line + strspn(line, "0123456789");
		call += strspn(call, " ");
		if (strncmp(call, "<...", 4) == 0 || strncmp(call, "---", 3) == 0 ||
		    strncmp(call, "+++", 3) == 0)
			continue;
		if (pid == -1 && strncmp(call, want, strlen(want)) == 0 &&
		    strstr(call, ") = 0") != NULL)
			pid = p;
		if (p == pid)
			n++;
	}
	fclose(f);
	return pid == -1 ? -1 : n;
}

static long
strace_calls(const char *dir, char *const cmd[], char *const env[])
{
	char out[PATH_MAX], *argv[16];
	int i, n = 0;

	snprintf(out, sizeof(out), "%s/strace.out", dir);
	argv[n++] = "/usr/bin/strace";
	argv[n++] = "-f";
	argv[n++] = "-qq";
	argv[n++] = "-o";
	argv[n++] = out;
	for (i = 0; cmd[i] != NULL && n < 15; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	if (access(argv[0], X_OK) != 0 || run(argv, env, -1, NULL) != 0)
		return -1;
	return image_calls(out, "/bin/true");
}

/* --- make -j2 of a small project -------------------------------------- */

static int
project(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;
	int i;

	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%02d.c", dir, i);
		if ((f = fopen(path, "w")) == NULL)
			return -1;
		fprintf(f, "#include <stdio.h>\n#include <string.h>\n"
		    "static int t%d[64];\n"
		    "int f%02d(const char *s) {\n"
		    "\tint i, h = %d;\n"
		    "\tfor (i = 0; i < 64 && s[i %% (strlen(s) + 1)]; i++)\n"
		    "\t\th = h * 31 + (t%d[i] ^= s[i %% (strlen(s) + 1)]);\n"
		    "\tprintf(\"%%d\\n\", h);\n\treturn h;\n}\n", i, i, i, i);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/main.c", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	for (i = 0; i < NFILES; i++)
		fprintf(f, "int f%02d(const char *);\n", i);
	fprintf(f, "int main(int argc, char **argv) {\n\tint h = 0;\n");
	for (i = 0; i < NFILES; i++)
		fprintf(f, "\th += f%02d(argv[argc - 1]);\n", i);
	fprintf(f, "\treturn h == 1;\n}\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/Makefile", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "SRCS = $(wildcard *.c)\nOBJS = $(SRCS:.c=.o)\n"
	    "prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
	    "%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n"
	    "clean:\n\trm -f prog $(OBJS)\n");
	fclose(f);
	return 0;
}

static pid_t
bpftrace_start(FILE **outp)
{
	char *argv[] = { "/usr/bin/bpftrace", "-e",
	    "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }", NULL };
	char buf[256];
	int p[2];
	pid_t pid;

	if (access(argv[0], X_OK) != 0 || pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = dtt_spawn(argv, NULL, -1, p[1], -1, -1);
	close(p[1]);
	*outp = fdopen(p[0], "r");
	/* It prints "Attaching N probes..." once the probe is live. */
	while (*outp != NULL && fgets(buf, sizeof(buf), *outp) != NULL)
		if (strncmp(buf, "Attaching", 9) == 0)
			return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void
bpftrace_stop(pid_t pid, FILE *out)
{
	char buf[256];

	kill(pid, SIGINT);
	while (out != NULL && fgets(buf, sizeof(buf), out) != NULL)
		continue;
	if (out != NULL)
		fclose(out);
	waitpid(pid, NULL, 0);
}

/* The launcher of configuration c into each traced command line. */
static void
launcher(char *dtrun, char **a, char **b, char **s, char **mk)
{
	a[0] = b[0] = s[0] = mk[0] = dtrun;
}

/* --- the table --------------------------------------------------------- */

static void
row(const char *what, const char *unit, const double *m, int have_ab)
{
	int c;

	printf("  %-30s", what);
	for (c = 0; c < NCONF; c++) {
		if (c == C_AB && !have_ab)
			continue;
		if (m[c] < 0)
			printf(" %12s", "-");
		else
			printf(" %12.2f", m[c]);
	}
	printf("  %s\n", unit);
}

static void
ratios(const char *what, const double *m, int have_ab)
{
	int c;

	printf("  %-30s", what);
	for (c = 0; c < NCONF; c++) {
		if (c == C_AB && !have_ab)
			continue;
		if (m[c] < 0 || m[0] <= 0)
			printf(" %12s", "-");
		else
			printf(" %11.2fx", m[c] / m[0]);
	}
	printf("\n");
}

static void
extra(const char *what, const char *unit, const double *m, int have_ab)
{
	int c;

	printf("  %-30s", what);
	for (c = 0; c < NCONF; c++) {
		if (c == C_AB && !have_ab)
			continue;
		if (m[c] < 0 || m[0] < 0)
			printf(" %12s", "-");
		else
			printf(" %+12.2f", m[c] - m[0]);
	}
	printf("  %s\n", unit);
}

/* spawn's line from a run of argv: wall ns per exec, faults, RSS (KB). */
static int
run_spawn(char *const argv[], char *const env[], double *wall, double *flt,
    double *rss)
{
	char line[256];
	int p[2], ok = -1;
	FILE *f;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if (run(argv, env, p[1], NULL) != 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	if ((f = fdopen(p[0], "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "spawn %lf %lf %lf", wall, flt, rss) == 3)
			ok = 0;
	fclose(f);
	return ok;
}

int
main(int argc, char *argv[])
{
	static double aw[NCONF][MAXREPS], ac[NCONF][MAXREPS];
	static double bw[NCONF][MAXREPS], bc[NCONF][MAXREPS];
	static double bf[NCONF][MAXREPS], br[NCONF][MAXREPS];
	static double mw[NCONF][MAXREPS], mc[NCONF][MAXREPS];
	int na[NCONF] = { 0 }, nb[NCONF] = { 0 }, nm[NCONF] = { 0 };
	double m_aw[NCONF], m_ac[NCONF], m_bw[NCONF], m_bc[NCONF];
	double m_bf[NCONF], m_br[NCONF], m_mw[NCONF], m_mc[NCONF];
	double calls[NCONF], t0, c0, d0, w, f, rss;
	char self[PATH_MAX], sockenv[PATH_MAX + 32], abenv[PATH_MAX + 32];
	char xdgenv[PATH_MAX + 32], absockenv[PATH_MAX + 32];
	char cachedir[PATH_MAX + 32];
	char nexec[16], proj[] = "/tmp/udt-startbench.XXXXXX";
	const char *ab = getenv("START_BENCH_AB");
	char *abdtrun = getenv("START_BENCH_AB_DTRUN");
	const char *abdtd = getenv("START_BENCH_AB_DTD");
	char **env[NCONF];
	struct dtt_dtd dd, abdd;
	pid_t dpid[NCONF];
	int nreps = 5, nexecs = 200, mreps, r, c, i, mounted = 0, have_bpf = 1;
	int have_ab = (ab != NULL && *ab != '\0') ||
	    (abdtd != NULL && *abdtd != '\0');
	pid_t bpid = -1, tracer;
	FILE *bout = NULL;

	if (argc == 4 && strcmp(argv[1], "spawn") == 0)
		return spawn(atoi(argv[2]), argv[3]);
	/* The make -j2 project alone, for bench/btrace/sys_bench.sh. */
	if (argc == 3 && strcmp(argv[1], "project") == 0)
		return project(argv[2]) == 0 ? 0 : 1;
	if (argc < 3) {
		fprintf(stderr,
		    "usage: start_bench DTD DTRUN [REPS [EXECS]]\n");
		return 2;
	}
	if (argc > 3)
		nreps = atoi(argv[3]);
	if (argc > 4)
		nexecs = atoi(argv[4]);
	if (nreps < 1 || nreps > MAXREPS || nexecs < 1 || nexecs > 1024) {
		fprintf(stderr, "REPS 1..%d, EXECS 1..1024\n", MAXREPS);
		return 2;
	}
	mreps = nreps < 3 ? nreps : 3;
	if (getenv("START_BENCH_MAKE_REPS") != NULL)
		mreps = atoi(getenv("START_BENCH_MAKE_REPS"));
	if (mreps < 1 || mreps > MAXREPS) {
		fprintf(stderr, "START_BENCH_MAKE_REPS 1..%d\n", MAXREPS);
		return 2;
	}
	if (realpath("/proc/self/exe", self) == NULL)
		return 1;
	snprintf(nexec, sizeof(nexec), "%d", nexecs);
	signal(SIGPIPE, SIG_IGN);
	/* The launcher's helper leaves its parent: reap it, count its CPU. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	if (dtt_dtd_init(&dd, "udt-start") == -1 ||
	    dtt_dtd_start(&dd, argv[1], (char *[]){ "--no-ksyms", NULL }, NULL,
	    0) == -1) {
		dtt_dtd_fini(&dd, true);
		return 1;
	}
	keep[0] = dd.dd_pid;
	memset(&abdd, 0, sizeof(abdd));
	if (abdtd != NULL && *abdtd != '\0' &&
	    (dtt_dtd_init(&abdd, "udt-startab") == -1 ||
	    dtt_dtd_start(&abdd, abdtd, (char *[]){ "--no-ksyms", NULL },
	    NULL, 0) == -1)) {
		dtt_dtd_fini(&abdd, true);
		dtt_dtd_fini(&dd, true);
		return 1;
	}
	keep[2] = abdd.dd_pid > 0 ? abdd.dd_pid : -1;
	/* The dtd each configuration's tracees talk to, whose CPU counts. */
	for (c = 0; c < NCONF; c++)
		dpid[c] = c == C_AB && abdd.dd_pid > 0 ? abdd.dd_pid :
		    dd.dd_pid;
	snprintf(sockenv, sizeof(sockenv), "USERDT_SOCKET=%s", dd.dd_sock);
	snprintf(absockenv, sizeof(absockenv), "USERDT_SOCKET=%s",
	    abdd.dd_pid > 0 ? abdd.dd_sock : dd.dd_sock);
	snprintf(abenv, sizeof(abenv), "USERDT_PRELOAD=%s", ab != NULL ? ab :
	    "");
	snprintf(xdgenv, sizeof(xdgenv), "XDG_CACHE_HOME=%s/cache", dd.dd_dir);
	env[0] = env[C_BPF] = env_with(NULL, NULL, NULL);
	env[1] = env_with(sockenv, "USERDT_PLAN_CACHE=0", NULL);
	env[2] = env_with(sockenv, xdgenv, NULL);
	/* Without START_BENCH_AB, the build's library, as the others. */
	env[C_AB] = env_with(absockenv, ab != NULL && *ab != '\0' ? abenv :
	    NULL, xdgenv);

	char *a_un[] = { "/bin/true", NULL };
	char *a_tr[] = { argv[2], "/bin/true", NULL };
	char *b_un[] = { self, "spawn", nexec, "/bin/true", NULL };
	char *b_tr[] = { argv[2], self, "spawn", nexec, "/bin/true", NULL };
	char *s_tr[] = { argv[2], "-L", "/bin/true", NULL };
	char *mk[] = { "/usr/bin/make", "-s", "-j2", "-C", proj, NULL };
	char *mk_tr[] = { argv[2], "/usr/bin/make", "-s", "-j2", "-C", proj,
	    NULL };
	char *mk_clean[] = { "/usr/bin/make", "-s", "-C", proj, "clean", NULL };

	printf("start_bench: %d reps of %d execs, configurations interleaved\n",
	    nreps, nexecs);
	/* The warm configurations' plans: one run of each command. */
	for (c = 2; c <= C_AB; c++) {
		if (c == C_AB && !have_ab)
			continue;
		launcher(c == C_AB && abdtrun != NULL ? abdtrun : argv[2],
		    a_tr, b_tr, s_tr, mk_tr);
		run(a_tr, env[c], -1, NULL);
		run((char *[]){ argv[2], self, "spawn", "1", "/bin/true",
		    NULL }, env[c], -1, NULL);
		run(s_tr, env[c], -1, NULL);
	}
	for (r = 0; r < nreps; r++) {
		for (c = 0; c <= C_AB; c++) {
			if (c == C_AB && !have_ab)
				continue;
			launcher(c == C_AB && abdtrun != NULL ? abdtrun :
			    argv[2], a_tr, b_tr, s_tr, mk_tr);
			c0 = children_cpu();
			d0 = (double)dtt_cpu_ns(dpid[c]);
			t0 = now_ns();
			for (i = 0; i < nexecs; i++)
				if (run(c == 0 ? a_un : a_tr, env[c], -1,
				    NULL) != 0)
					break;
			if (i == nexecs) {
				aw[c][na[c]] = (now_ns() - t0) / nexecs;
				ac[c][na[c]++] = (children_cpu() - c0 +
				    (c > 0 ? (double)dtt_cpu_ns(dpid[c]) -
				    d0 : 0)) / nexecs;
			}
			c0 = children_cpu();
			d0 = (double)dtt_cpu_ns(dpid[c]);
			if (run_spawn(c == 0 ? b_un : b_tr, env[c], &w, &f,
			    &rss) == 0) {
				bw[c][nb[c]] = w;
				bf[c][nb[c]] = f;
				br[c][nb[c]] = rss;
				bc[c][nb[c]++] = (children_cpu() - c0 +
				    (c > 0 ? (double)dtt_cpu_ns(dpid[c]) -
				    d0 : 0)) / nexecs;
			}
		}
	}
	for (c = 0; c < NCONF; c++) {
		calls[c] = -1;
		if (c == C_BPF || (c == C_AB && !have_ab))
			continue;
		launcher(c == C_AB && abdtrun != NULL ? abdtrun : argv[2],
		    a_tr, b_tr, s_tr, mk_tr);
		calls[c] = (double)strace_calls(dd.dd_dir, c == 0 ? a_un :
		    s_tr, env[c]);
	}

	/* make -j2: the project, then each configuration in turn. */
	if (mkdtemp(proj) == NULL || project(proj) != 0) {
		fprintf(stderr, "start_bench: project in %s: %s\n", proj,
		    strerror(errno));
		return 1;
	}
	{
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	if (access("/sys/kernel/tracing/events", F_OK) != 0 &&
	    mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		mounted = 1;
	for (r = 0; r < mreps; r++) {
		for (c = 0; c < NCONF; c++) {
			if ((c == C_AB && !have_ab) || (c == C_BPF && !have_bpf))
				continue;
			if (run(mk_clean, env[0], -1, NULL) != 0)
				break;
			launcher(c == C_AB && abdtrun != NULL ? abdtrun :
			    argv[2], a_tr, b_tr, s_tr, mk_tr);
			tracer = dpid[c];
			if (c == C_BPF) {
				if ((bpid = bpftrace_start(&bout)) < 0) {
					have_bpf = 0;
					continue;
				}
				tracer = keep[1] = bpid;
			}
			c0 = children_cpu();
			d0 = (double)dtt_cpu_ns(tracer);
			t0 = now_ns();
			i = run(c >= 1 && c <= C_AB ? mk_tr : mk, env[c], -1,
			    NULL);
			w = now_ns() - t0;
			f = (double)dtt_cpu_ns(tracer) - d0;
			if (c == C_BPF) {
				bpftrace_stop(bpid, bout);
				keep[1] = -1;
			}
			if (i != 0) {
				fprintf(stderr, "start_bench: make (%s) "
				    "failed\n", confname[c]);
				continue;
			}
			mw[c][nm[c]] = w;
			/* the build's CPU, and its tracer's daemon's */
			mc[c][nm[c]++] = children_cpu() - c0 + (c > 0 ? f : 0);
		}
	}
	if (mounted)
		umount("/sys/kernel/tracing");
	run((char *[]){ "/bin/rm", "-rf", proj, NULL }, env[0], -1, NULL);
	/* the warm runs' plans and images: dtt_dtd_fini() takes one level */
	snprintf(cachedir, sizeof(cachedir), "%s/cache", dd.dd_dir);
	run((char *[]){ "/bin/rm", "-rf", cachedir, NULL }, env[0], -1,
	    NULL);
	dtt_dtd_fini(&dd, true);
	if (abdd.dd_pid > 0 || abdd.dd_dir[0] != '\0')
		dtt_dtd_fini(&abdd, true);

	for (c = 0; c < NCONF; c++) {
		m_aw[c] = median(aw[c], na[c]) / 1e6;
		m_ac[c] = median(ac[c], na[c]) / 1e6;
		m_bw[c] = median(bw[c], nb[c]) / 1e6;
		m_bc[c] = median(bc[c], nb[c]) / 1e6;
		m_bf[c] = median(bf[c], nb[c]);
		m_br[c] = median(br[c], nb[c]) / 1024;
		m_mw[c] = median(mw[c], nm[c]) / 1e9;
		m_mc[c] = median(mc[c], nm[c]) / 1e9;
	}
	printf("\n  %-30s", "");
	for (c = 0; c < NCONF; c++)
		if (c != C_AB || have_ab)
			printf(" %12s", confname[c]);
	printf("\n");
	row("dtrun /bin/true, wall", "ms/exec", m_aw, have_ab);
	extra("  more than untraced", "ms/exec", m_aw, have_ab);
	ratios("  ratio", m_aw, have_ab);
	row("dtrun /bin/true, CPU", "ms/exec", m_ac, have_ab);
	ratios("  ratio", m_ac, have_ab);
	row("in a traced tree, wall", "ms/exec", m_bw, have_ab);
	extra("  more than untraced", "ms/exec", m_bw, have_ab);
	ratios("  ratio", m_bw, have_ab);
	row("in a traced tree, CPU", "ms/exec", m_bc, have_ab);
	ratios("  ratio", m_bc, have_ab);
	row("minor faults per process", "", m_bf, have_ab);
	extra("  more than untraced", "", m_bf, have_ab);
	row("max RSS per process", "MB", m_br, have_ab);
	extra("  more than untraced", "MB", m_br, have_ab);
	row("calls of the /bin/true image", "", calls, have_ab);
	extra("  more than untraced", "", calls, have_ab);
	row("make -j2, 32 files, wall", "s", m_mw, have_ab);
	ratios("  ratio", m_mw, have_ab);
	row("make -j2, CPU (+ tracer's)", "s", m_mc, have_ab);
	ratios("  ratio", m_mc, have_ab);
	if (!have_bpf)
		printf("  (bpftrace: not installed or not started; skipped)\n");
	printf("  medians: %d reps (make: %d); calls: one strace -f run\n",
	    nreps, mreps);
	return 0;
}
