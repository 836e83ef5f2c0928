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
 * btrace_bench DTD DTRUN BTRACE [REPS [SECS [RATE,RATE,...]]]	(root)
 *
 * How many events a second btrace consumes, and who gives up first when
 * it cannot: btrace, dtd, or the tracee's ring.  The event source is
 * this program in a loop of getppid() (a libc wrapper that always
 * enters the kernel), run for SECS seconds (default 2) under dtrun by
 * "btrace -c" against a private dtd, paced to each RATE calls a second
 * in turn (default 0.25M, 0.5M, 1M, 1.5M, 2M, and 0: flat out), REPS
 * times each (default 3), with two scripts:
 *
 *	syscall:getppid:entry { @[comm] = count(); }
 *	syscall:getppid:entry { @[ustack] = count(); }	(symbolised)
 *
 * For each run it compares what the loop made (it counts its own calls)
 * with what btrace's map counted, what the device says btrace read and
 * dropped (btrace -v), and what dtd moved out of the tracee's ring and
 * lost because that ring was full (dtd's ingest counters).  After its
 * last call the loop waits until btrace has drained, so a backlog is
 * counted as latency and only a real loss as a loss.  It takes the CPU
 * time of btrace and of dtd, during the loop (% of a core) and in all
 * (ns an event): on two cores a looping tracee leaves dtd and btrace
 * one core to share, so CPU per event says who limits, CPU % does not.
 *
 * btrace -c keeps only its command's process tree (the loop runs in a
 * forked child, followed through the kernel's process connector): each
 * script also runs flat out with -A, which keeps every process's events,
 * so that the filter's share of the cost shows as a ratio.
 *
 * Then "bpftrace -c" runs the same scripts on the loop without our
 * library, flat out: tracepoint:syscalls:sys_enter_getppid with
 * /pid == cpid/, as btrace -c sees its command only.  The loop alone
 * gives the cost of a bare call.  Medians are printed, and ratios: ours
 * to bpftrace, traced to untraced.  It asserts nothing: a benchmark on
 * a noisy machine prints, a reader judges.  BTRACE_BENCH_VERBOSE=1
 * prints every run; BTRACE_BENCH_RING=N gives dtd --ring-size N;
 * BTRACE_BENCH_LOSSLESS=1 or 0 runs btrace --lossless or --no-lossless
 * (unset: btrace's default for -c, lossless; -A runs lossless only when
 * asked, as btrace's default is then off).  A
 * full run with the defaults takes under 2 minutes.
 *
 * The goal it shows (issue 5): btrace is never the bottleneck below a
 * million events a second.
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "syscall_util.h"

#define MAXREPS		15
#define MAXRATES	12
#define BURST		500	/* calls between clock checks and naps */
#define EXIT_MS		30000	/* a tracer's exit once its load is done */
#define BPF_QUIET_MS	3000	/* bpftrace silent after SIGINT: stuck */
#define BPFTRACE	"/usr/bin/bpftrace"
#define TRACEFS		"/sys/kernel/tracing"

static const char *scripts[2][2] = {
	{ "syscall:getppid:entry { @[comm] = count(); }",
	  "tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }" },
	{ "syscall:getppid:entry { @[ustack] = count(); }",
	  "tracepoint:syscalls:sys_enter_getppid { @[ustack] = count(); }" },
};
static const char *script_name[2] = { "@[comm]", "@[ustack]" };

static char		 self[PATH_MAX];
static const char	*dtrun, *btrace;
static struct dtt_dtd	 dd;
static int		 nreps = 3;
static double		 secs = 2;
static long		 rates[MAXRATES] = {
	250000, 500000, 1000000, 1500000, 2000000, 0
};
static int		 nrates = 6;
static int		 lossless = -1;	/* btrace's -L: -1, its default */
static int		 verbose;	/* $BTRACE_BENCH_VERBOSE: every run */

/* What one run measured; -1 where it does not apply. */
struct run {
	double	r_calls;	/* the loop's own count */
	double	r_wall;		/* the loop's seconds */
	double	r_span;		/* seconds from the loop's start to the
				   tracer's last event */
	double	r_t0;		/* when the loop started (now_s()) */
	double	r_ns;		/* ns per call of the loop */
	double	r_counted;	/* sum of the map's counts */
	double	r_read;		/* device: events read by btrace */
	double	r_drop;		/* device: dropped (reader behind) */
	double	r_lost;		/* dtd: tracee ring full */
	double	r_rec;		/* dtd: records moved to the device */
	double	r_tcpu;		/* tracer CPU % during the loop */
	double	r_dcpu;		/* dtd CPU % during the loop */
	double	r_tns;		/* tracer CPU ns per event, whole run */
	double	r_dns;		/* dtd CPU ns per event, whole run */
};

static double
now_s(void)
{
	return (double)dtt_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

static double
dabs(double x)
{
	return x < 0 ? -x : x;
}

static double
tv_ns(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e9 + (double)tv->tv_usec * 1e3;
}

/* --- the traced loop --------------------------------------------------- */

#define L_HOLD	1	/* after the last call, read stdin to its end */
#define L_FORK	2	/* run in a child, a fresh pid */

/*
 * loop SECS RATE FD FLAGS: getppid() for SECS seconds, RATE calls a
 * second in bursts of BURST (0: flat out).  Says "start" on FD before
 * the first call and "done CALLS WALL CPU_NS" after the last, CPU_NS
 * being what the looping process used.  L_HOLD keeps it alive until its
 * stdin ends: bpftrace symbolises stacks when it prints, and btrace
 * must be given the time to drain.  L_FORK loops in a child: under
 * "btrace -c" the shell exec's us in its own pid, and btrace, which
 * caches a pid's memory maps, would look our stacks up in the shell's.
 */
static int
loop(double s, long rate, int fd, int flags)
{
	struct timespec next;
	struct rusage ru;
	double t0, t1, end;
	long i;
	volatile pid_t sink;
	char buf[128];
	int n, status;
	pid_t pid;

	if (flags & L_FORK) {
		if ((pid = fork()) == -1)
			return 1;
		if (pid > 0) {
			close(fd);
			while (waitpid(pid, &status, 0) == -1)
				if (errno != EINTR)
					return 1;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		}
	}
	if (write(fd, "start\n", 6) != 6)
		return 1;
	t0 = now_s();
	end = t0 + s;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0;;) {
		sink = getppid();
		if (++i % BURST != 0)
			continue;
		if (now_s() >= end)
			break;
		if (rate > 0) {
			next.tv_nsec += (long)(BURST * 1e9 / (double)rate);
			while (next.tv_nsec >= 1000000000) {
				next.tv_nsec -= 1000000000;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
			    NULL);
		}
	}
	t1 = now_s();
	(void)sink;
	getrusage(RUSAGE_SELF, &ru);
	n = snprintf(buf, sizeof(buf), "done %ld %.6f %.0f\n", i, t1 - t0,
	    tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime));
	if (write(fd, buf, (size_t)n) != n)
		return 1;
	close(fd);
	while ((flags & L_HOLD) && read(0, buf, sizeof(buf)) > 0)
		continue;
	return 0;
}

/* --- measuring ----------------------------------------------------------- */


/*
 * dtd's ingestion counters: records it moved from tracee rings to the
 * device, and those it lost because a tracee's ring was full; 0 or -1.
 */
static int
ingest(double *records, double *lost)
{
	struct udt_stats us;

	if (st_ingest_stats(dd.dd_sock, &us) != 0)
		return -1;
	*records = (double)us.us_records;
	*lost = (double)us.us_lost;
	return 0;
}

/*
 * After the loop's last call, wait until dtd has moved every record out
 * of the tracee's ring and btrace has read and counted what dtd gave it:
 * btrace stops using CPU and dtd's record count stops moving.  Stopping
 * btrace earlier would cut off its backlog, which is latency, not loss.
 * The time that took, from the loop's start, is when btrace finished.
 */
static double
drain(pid_t tracer)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	double rec = -1, lost, cpu = -1, nrec, ncpu, t = now_s();
	int still = 0, i;

	for (i = 0; i < 1000 && still < 5; i++) {
		nanosleep(&ts, NULL);
		nrec = 0;
		ingest(&nrec, &lost);
		ncpu = (double)dtt_cpu_ns(tracer);
		/*
		 * Idle: no new records, and btrace blocked in read(2) (under
		 * 1% of a core); dtd's drain thread polls, so dtd never is.
		 */
		if (nrec == rec && ncpu - cpu < 1e5) {
			still++;
		} else {
			still = 0;
			t = now_s();
		}
		if (verbose > 1)
			fprintf(stderr, "drain %.3f: records %.0f cpu %.0f\n",
			    now_s(), nrec, ncpu);
		rec = nrec;
		cpu = ncpu;
	}
	return t;
}

/*
 * Reap pid within ms (SIGKILL after that), with its resource usage,
 * which on Linux includes the children it reaped.  Its wait status or -1.
 */
static int
reap(pid_t pid, int ms, struct rusage *ru)
{
	struct pollfd pfd;
	int status, pidfd;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd != -1) {
		pfd.fd = pidfd;
		pfd.events = POLLIN;
		while (poll(&pfd, 1, ms) == -1 && errno == EINTR)
			continue;
		if (!(pfd.revents & POLLIN)) {
			fprintf(stderr, "btrace_bench: pid %d hangs, killed\n",
			    (int)pid);
			kill(pid, SIGKILL);
		}
		close(pidfd);
	}
	while (wait4(pid, &status, 0, ru) == -1)
		if (errno != EINTR)
			return -1;
	return status;
}

/*
 * The loop's two lines from fp: at "start" the CPU times of the tracer
 * and of dtd are taken, at "done" again; -1 if the loop died first.
 */
static int
follow(FILE *fp, pid_t tracer, struct run *r, double *tracee_cpu)
{
	char line[128];
	double t0 = 0, d0 = 0, t1, d1, w0 = 0;

	r->r_t0 = now_s();

	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strcmp(line, "start\n") == 0) {
			t0 = (double)dtt_cpu_ns(tracer);
			d0 = (double)dtt_cpu_ns(dd.dd_pid);
			w0 = r->r_t0 = now_s();
		} else if (sscanf(line, "done %lf %lf %lf", &r->r_calls,
		    &r->r_wall, tracee_cpu) == 3) {
			t1 = (double)dtt_cpu_ns(tracer);
			d1 = (double)dtt_cpu_ns(dd.dd_pid);
			w0 = now_s() - w0;
			r->r_tcpu = (t1 - t0) / w0 / 1e7;
			r->r_dcpu = (d1 - d0) / w0 / 1e7;
			r->r_ns = r->r_wall * 1e9 / r->r_calls;
			r->r_span = r->r_wall;
			return 0;
		}
	}
	return -1;
}

/* Sum of the counts of a map's printed entries: lines "...]: N". */
static double
map_sum(FILE *fp)
{
	char line[4096], *p;
	double sum = 0;

	rewind(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if ((p = strstr(line, "]: ")) != NULL)
			sum += strtod(p + 3, NULL);
	return sum;
}

/* From btrace -v's statistics: N in the line "N events what". */
static double
stat_line(FILE *fp, const char *what)
{
	char line[256], word[32];
	double v = -1, n;

	rewind(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%lf events %31s", &n, word) == 2 &&
		    strcmp(word, what) == 0)
			v = n;
	return v;
}

static void
run_init(struct run *r)
{
	r->r_calls = r->r_wall = r->r_ns = r->r_counted = r->r_read = -1;
	r->r_span = r->r_t0 = r->r_rec = -1;
	r->r_drop = r->r_lost = r->r_tcpu = r->r_dcpu = r->r_tns = -1;
	r->r_dns = -1;
}

/*
 * Copy what comes on fd to fp until its end (1) or until ms pass without
 * a byte (0).  The loop holds bpftrace's stdout too, so the end may
 * only come once the loop is let go.
 */
static int
slurp(int fd, FILE *fp, int ms)
{
	struct pollfd pfd;
	char buf[4096];
	ssize_t n;

	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, ms) == -1) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd.revents == 0)
			return 0;
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			return 1;
		fwrite(buf, 1, (size_t)n, fp);
	}
}

/* Print a child's saved stderr on ours. */
static void
replay(FILE *fp)
{
	char line[512];

	rewind(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		fputs(line, stderr);
}

/*
 * One run of "btrace -c" on the loop at rate, with -A if all; 0 or -1.
 * The loop holds on btrace's stdin after its last call until the
 * pipeline has drained.
 */
static int
run_btrace(int script, long rate, int all, struct run *r)
{
	char cmd[PATH_MAX * 3];
	char *argv[] = { (char *)btrace, "-v", "-d", dd.dd_dev, "-c", cmd,
	    "-e", (char *)scripts[script][0], NULL, NULL, NULL };
	struct rusage ru;
	FILE *out, *err, *rep;
	double rec0 = 0, lost0 = -1, rec1, lost1, dtd0, tracee_cpu = 0;
	int rp[2], hp[2], status, ok;
	pid_t pid;

	run_init(r);
	/* Before -e's script: flags after it would be its arguments. */
	if (lossless >= 0) {
		memmove(&argv[7], &argv[6], 3 * sizeof(argv[0]));
		argv[6] = lossless ? "--lossless" : "--no-lossless";
	}
	if (all)
		argv[lossless >= 0 ? 9 : 8] = "-A";
	if ((out = tmpfile()) == NULL || (err = tmpfile()) == NULL)
		return -1;
	if (pipe2(rp, O_CLOEXEC) == -1 || pipe2(hp, O_CLOEXEC) == -1)
		return -1;
	/* The loop's report descriptor keeps its number through btrace. */
	snprintf(cmd, sizeof(cmd), "exec %s -s %s %s loop %.3f %ld %d %d",
	    dtrun, dd.dd_sock, self, secs, rate, rp[1], L_HOLD | L_FORK);
	ingest(&rec0, &lost0);
	dtd0 = (double)dtt_cpu_ns(dd.dd_pid);
	pid = dtt_spawn(argv, NULL, hp[0], fileno(out), fileno(err), rp[1]);
	close(rp[1]);
	close(hp[0]);
	if (pid == -1 || (rep = fdopen(rp[0], "r")) == NULL) {
		close(hp[1]);
		return -1;
	}
	ok = follow(rep, pid, r, &tracee_cpu) == 0;
	fclose(rep);
	if (ok)
		r->r_span = drain(pid) - r->r_t0;
	close(hp[1]);
	status = reap(pid, EXIT_MS, &ru);
	r->r_dns = (double)dtt_cpu_ns(dd.dd_pid) - dtd0;
	if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "btrace_bench: btrace %s failed (status "
		    "%#x):\n", scripts[script][0], status);
		replay(err);
		fclose(out);
		fclose(err);
		r->r_calls = -1;
		return -1;
	}
	r->r_counted = map_sum(out);
	r->r_read = stat_line(err, "read");
	r->r_drop = stat_line(err, "dropped");
	if (lost0 >= 0 && ingest(&rec1, &lost1) == 0) {
		r->r_lost = lost1 - lost0;
		r->r_rec = rec1 - rec0;
		/*
		 * A dtd that charges tracee ring losses to the device's
		 * dropevt counts them twice here: whichever sum matches
		 * what the loop made says which dtd this is.
		 */
		if (r->r_drop >= r->r_lost && dabs(r->r_counted + r->r_drop -
		    r->r_calls) < dabs(r->r_counted + r->r_drop + r->r_lost -
		    r->r_calls))
			r->r_drop -= r->r_lost;
	}
	/* btrace's usage includes the loop's, which it reaped. */
	r->r_tns = (tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime) - tracee_cpu) /
	    (r->r_read > 0 ? r->r_read : 1);
	r->r_dns /= r->r_calls > 0 ? r->r_calls : 1;
	if (verbose)
		fprintf(stderr, "btrace%s %s rate %ld: calls %.0f in %.3f s, "
		    "counted %.0f in %.3f s, records %.0f read %.0f "
		    "dropped %.0f lost %.0f cpu %.0f%% dtd %.0f%%\n",
		    all ? " -A" : "", script_name[script], rate, r->r_calls,
		    r->r_wall,
		    r->r_counted, r->r_span, r->r_rec, r->r_read, r->r_drop,
		    r->r_lost, r->r_tcpu, r->r_dcpu);
	fclose(out);
	fclose(err);
	return 0;
}

/*
 * The loop without our library, flat out, alone (script -1) or under
 * "bpftrace -c" (which starts it once the probe is attached) with the
 * script restricted to the loop's pid, as btrace -c sees only its
 * command; 0 or -1.
 */
static int
run_plain(int script, struct run *r)
{
	char cmd[PATH_MAX + 64], prog[256];
	char *bargv[] = { BPFTRACE, "-c", cmd, "-e", prog, NULL };
	char *largv[] = { self, "loop", cmd, "0", "1", "1", NULL };
	struct rusage ru;
	FILE *rep = NULL, *out = NULL, *err = NULL;
	double tracee_cpu;
	int bp[2], rp[2], hp[2], rc = -1;
	pid_t pid;
	const char *p;

	run_init(r);
	if (pipe2(rp, O_CLOEXEC) == -1 || pipe2(hp, O_CLOEXEC) == -1)
		return -1;
	if (script < 0) {
		snprintf(cmd, sizeof(cmd), "%.3f", secs);
		pid = dtt_spawn(largv, NULL, hp[0], rp[1], -1, -1);
		bp[0] = bp[1] = -1;
	} else {
		/* "probe { body }" becomes "probe /pid == cpid/ { body }" */
		p = strchr(scripts[script][1], '{');
		snprintf(prog, sizeof(prog), "%.*s/pid == cpid/ %s",
		    (int)(p - scripts[script][1]), scripts[script][1], p);
		snprintf(cmd, sizeof(cmd), "%s loop %.3f 0 %d 1", self, secs,
		    rp[1]);
		if (pipe2(bp, O_CLOEXEC) == -1 || (out = tmpfile()) == NULL ||
		    (err = tmpfile()) == NULL)
			return -1;
		pid = dtt_spawn(bargv, NULL, hp[0], bp[1], fileno(err), rp[1]);
		close(bp[1]);
	}
	close(rp[1]);
	close(hp[0]);
	if (pid != -1 && (rep = fdopen(rp[0], "r")) != NULL &&
	    follow(rep, script >= 0 ? pid : getpid(), r, &tracee_cpu) == 0)
		rc = 0;
	if (rep != NULL)
		fclose(rep);
	if (script >= 0) {
		/*
		 * It prints its maps at SIGINT, while the loop still holds,
		 * so that the loop's stacks can be symbolised.
		 */
		kill(pid, SIGINT);
		if (slurp(bp[0], out, BPF_QUIET_MS) == 0) {
			/*
			 * Still no end: bpftrace sometimes waits for its
			 * command (which waits for us), or missed the signal.
			 */
			close(hp[1]);
			hp[1] = -1;
			kill(pid, SIGINT);
			slurp(bp[0], out, EXIT_MS);
		}
		close(bp[0]);
		if (hp[1] != -1)
			close(hp[1]);
		reap(pid, EXIT_MS, &ru);
		/* Its CPU in all is mostly compiling the script: not shown. */
		r->r_counted = map_sum(out);
		if (rc == -1 || r->r_counted <= 0) {
			fprintf(stderr, "btrace_bench: bpftrace failed:\n");
			replay(err);
			rc = -1;
		}
		fclose(out);
		fclose(err);
	} else {
		close(hp[1]);
		if (pid != -1)
			reap(pid, EXIT_MS, &ru);
		r->r_tcpu = -1;
	}
	r->r_dcpu = -1;
	if (verbose)
		fprintf(stderr, "%s %s: calls %.0f counted %.0f ns %.1f\n",
		    script >= 0 ? "bpftrace" : "alone",
		    script >= 0 ? script_name[script] : "", r->r_calls,
		    r->r_counted, r->r_ns);
	return rc;
}

/* --- printing ------------------------------------------------------------ */

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of the field at off of n runs, ignoring -1 (not measured). */
static double
med(const struct run *rs, int n, size_t off)
{
	double v[MAXREPS];
	int i, m = 0;

	for (i = 0; i < n; i++) {
		double x = *(const double *)(const void *)
		    ((const char *)&rs[i] + off);

		if (x >= 0)
			v[m++] = x;
	}
	if (m == 0)
		return -1;
	qsort(v, (size_t)m, sizeof(v[0]), cmp);
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

#define MED(rs, n, f)	med(rs, n, offsetof(struct run, f))

/* Per-run derived figures, so the medians are medians of ratios. */
struct row {
	double	w_made;		/* events made a second */
	double	w_took;		/* events counted by the map a second */
	double	w_loss;		/* share of events not counted, % */
	double	w_ns;		/* ns per call of the loop */
	double	w_tcpu, w_dcpu;	/* CPU % during the loop */
	double	w_tns, w_dns;	/* CPU ns per event */
	double	w_zero;		/* runs without a lost event */
};

static void
row_make(const struct run *rs, int n, struct row *w)
{
	struct run d[MAXREPS];
	int i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < n; i++) {
		run_init(&d[i]);
		if (rs[i].r_calls <= 0)
			continue;
		d[i].r_calls = rs[i].r_calls / rs[i].r_wall;
		if (rs[i].r_counted < 0)
			continue;
		d[i].r_counted = rs[i].r_counted / rs[i].r_span;
		d[i].r_drop = 100.0 * (1 - rs[i].r_counted / rs[i].r_calls);
		if (d[i].r_drop < 0)
			d[i].r_drop = 0;
		if (rs[i].r_counted >= rs[i].r_calls)
			w->w_zero++;
	}
	w->w_made = MED(d, n, r_calls);
	w->w_took = MED(d, n, r_counted);
	w->w_loss = MED(d, n, r_drop);
	w->w_ns = MED(rs, n, r_ns);
	w->w_tcpu = MED(rs, n, r_tcpu);
	w->w_dcpu = MED(rs, n, r_dcpu);
	w->w_tns = MED(rs, n, r_tns);
	w->w_dns = MED(rs, n, r_dns);
}

static void
fmt_num(char *buf, size_t len, double v, const char *f)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, f, v);
}

static void
row_print(const char *label, const struct row *w, int n,
    double drop, double lost)
{
	char made[16], took[16], loss[16], ns[16], tc[16], dc[16], tn[16];
	char dn[16], clean[16];

	if (w->w_took < 0)
		snprintf(clean, sizeof(clean), "-");
	else
		snprintf(clean, sizeof(clean), "%.0f/%d", w->w_zero, n);
	fmt_num(made, sizeof(made), w->w_made / 1e6, "%.3f");
	fmt_num(took, sizeof(took), w->w_took / 1e6, "%.3f");
	fmt_num(loss, sizeof(loss), w->w_loss, "%.2f");
	fmt_num(ns, sizeof(ns), w->w_ns, "%.0f");
	fmt_num(tc, sizeof(tc), w->w_tcpu, "%.0f");
	fmt_num(dc, sizeof(dc), w->w_dcpu, "%.0f");
	fmt_num(tn, sizeof(tn), w->w_tns, "%.0f");
	fmt_num(dn, sizeof(dn), w->w_dns, "%.0f");
	printf("  %-22s %7s %7s %7s %7s %7s %5s %5s %6s %6s",
	    label, made, took, loss, clean, ns, tc, dc, tn, dn);
	if (drop >= 0 || lost >= 0)
		printf("  %.0f/%.0f", drop, lost);
	printf("\n");
}

/* Interrupted: take our dtd down with us, its mount is on our path. */
static void
on_fatal(int sig)
{
	if (dd.dd_pid > 0) {
		kill(dd.dd_pid, SIGTERM);
		waitpid(dd.dd_pid, NULL, 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
usage(void)
{
	fprintf(stderr, "usage: btrace_bench DTD DTRUN BTRACE "
	    "[REPS [SECS [RATE,...]]]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static struct run ours[2][MAXRATES][MAXREPS], bpf[2][MAXREPS];
	static struct run base[MAXREPS], nofilter[2][MAXREPS];
	struct row w, wb, wmax[2], wbpf[2], wall[2];
	char lib[PATH_MAX + 32], path[PATH_MAX], label[64], *s, *ep;
	double drop, lost, best[2];
	int i, j, k, mounted = 0, nbpf[2] = { 0, 0 }, nbase = 0;
	struct sigaction sa;
	char *dtdargs[3] = { NULL, NULL, NULL };
	int bpf_ok;

	if (argc == 6 && strcmp(argv[1], "loop") == 0)
		return loop(strtod(argv[2], NULL), strtol(argv[3], NULL, 10),
		    atoi(argv[4]), atoi(argv[5]));
	if (argc < 4 || argc > 7)
		usage();
	dtrun = argv[2];
	btrace = argv[3];
	if (argc > 4 && ((nreps = atoi(argv[4])) < 1 || nreps > MAXREPS))
		usage();
	if (argc > 5 && ((secs = strtod(argv[5], NULL)) < 0.1 || secs > 60))
		usage();
	if (argc > 6) {
		for (nrates = 0, s = argv[6]; nrates < MAXRATES; s = ep + 1) {
			rates[nrates++] = strtol(s, &ep, 10);
			if (ep == s || rates[nrates - 1] < 0)
				usage();
			if (*ep != ',')
				break;
		}
		if (*ep != '\0')
			usage();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (getuid() != 0) {
		fprintf(stderr, "btrace_bench: root needed (dtd, bpftrace)\n");
		return 2;
	}
	if (realpath("/proc/self/exe", self) == NULL)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if ((s = getenv("BTRACE_BENCH_VERBOSE")) != NULL)
		verbose = atoi(s) > 1 ? 2 : 1;

	/* btrace -c preloads USERDT_PRELOAD: the library beside dtrun. */
	snprintf(path, sizeof(path), "%s", dtrun);
	snprintf(lib, sizeof(lib), "%s/libuserdt-preload.so", dirname(path));
	setenv("USERDT_PRELOAD", lib, 1);

	/* bpftrace needs tracefs; unmount it only if we mounted it. */
	bpf_ok = access(BPFTRACE, X_OK) == 0;
	if (bpf_ok && access(TRACEFS "/events", F_OK) != 0) {
		if (mount("tracefs", TRACEFS, "tracefs", 0, NULL) == 0)
			mounted = 1;
		else
			bpf_ok = 0;
	}
	if ((s = getenv("BTRACE_BENCH_LOSSLESS")) != NULL && *s != '\0')
		lossless = atoi(s) != 0;
	/* A larger device ring tells latency (bursts) from throughput. */
	if ((s = getenv("BTRACE_BENCH_RING")) != NULL) {
		dtdargs[0] = "--ring-size";
		dtdargs[1] = s;
	}
	if (dtt_dtd_init(&dd, "btrace_bench") == -1 ||
	    dtt_dtd_start(&dd, argv[1], dtdargs, NULL, 0) == -1)
		return 1;
	setenv("USERDT_SOCKET", dd.dd_sock, 1);

	/*
	 * Repetitions outermost, so that the machine's drift (others build
	 * on it) hits every configuration alike.  dtd stays up while the
	 * loop runs alone or under bpftrace: idle, it polls a little.
	 */
	for (k = 0; k < nreps; k++) {
		for (i = 0; i < 2; i++) {
			for (j = 0; j < nrates; j++)
				run_btrace(i, rates[j], 0, &ours[i][j][k]);
			run_btrace(i, 0, 1, &nofilter[i][k]);
		}
		if (run_plain(-1, &base[nbase]) == 0)
			nbase++;
		for (i = 0; i < 2 && bpf_ok; i++)
			if (run_plain(i, &bpf[i][nbpf[i]]) == 0)
				nbpf[i]++;
	}
	dtt_dtd_stop(&dd, SIGTERM);
	dtt_dtd_fini(&dd, true);
	if (mounted)
		umount2(TRACEFS, MNT_DETACH);

	printf("btrace_bench: getppid() loop for %.1f s a run, median of %d "
	    "runs; dtd ring %s slots a CPU; btrace %s\n", secs, nreps,
	    dtdargs[1] != NULL ? dtdargs[1] : "default",
	    lossless < 0 ? "default (-c: lossless)" : lossless ?
	    "--lossless" : "--no-lossless");
	printf("  made/took: million events a second the loop made and the "
	    "map counted;\n  lost: %% not counted; clean: runs without a "
	    "loss; ns: per call of the loop;\n  cpu: %% of a core during the "
	    "loop; ns/ev: CPU per event in all;\n  dev/ring: events dropped "
	    "by the device (reader behind) / lost in the\n  tracee's ring "
	    "(dtd behind), summed over runs\n\n");
	printf("  %-22s %7s %7s %7s %7s %7s %5s %5s %6s %6s  %s\n", "rate",
	    "made", "took", "lost%", "clean", "ns", "cpu", "dtd", "ns/ev",
	    "dtd/ev", "dev/ring");
	row_make(base, nbase, &wb);
	row_print("loop alone", &wb, nbase, -1, -1);
	for (i = 0; i < 2; i++) {
		printf("  btrace %s\n", script_name[i]);
		best[i] = -1;
		for (j = 0; j < nrates; j++) {
			row_make(ours[i][j], nreps, &w);
			drop = lost = 0;
			for (k = 0; k < nreps; k++) {
				drop += ours[i][j][k].r_drop > 0 ?
				    ours[i][j][k].r_drop : 0;
				lost += ours[i][j][k].r_lost > 0 ?
				    ours[i][j][k].r_lost : 0;
			}
			if (rates[j] > 0)
				snprintf(label, sizeof(label),
				    "  paced %.2fM/s", rates[j] / 1e6);
			else
				snprintf(label, sizeof(label), "  flat out");
			row_print(label, &w, nreps, drop, lost);
			if (w.w_zero == nreps && w.w_made > best[i])
				best[i] = w.w_made;
			if (rates[j] == 0)
				wmax[i] = w;
		}
		row_make(nofilter[i], nreps, &wall[i]);
		row_print("  flat out, -A", &wall[i], nreps, -1, -1);
		if (bpf_ok && nbpf[i] > 0) {
			row_make(bpf[i], nbpf[i], &wbpf[i]);
			snprintf(label, sizeof(label), "  bpftrace flat out");
			row_print(label, &wbpf[i], nbpf[i], -1, -1);
		}
	}

	printf("\n  (bpftrace: cpu is its own process; its probe runs in the "
	    "loop, in the loop's ns)\n\n");
	for (i = 0; i < 2; i++) {
		printf("  %s: highest rate without a loss in every run: ",
		    script_name[i]);
		if (best[i] > 0)
			printf("%.2fM events/s\n", best[i] / 1e6);
		else
			printf("none\n");
		for (j = 0; j < nrates && rates[j] != 0; j++)
			continue;
		if (j == nrates)
			continue;
		printf("    flat out: btrace took %.3fM/s; the loop "
		    "%.0f ns/call = %.2fx alone", wmax[i].w_took / 1e6,
		    wmax[i].w_ns, wmax[i].w_ns / wb.w_ns);
		if (bpf_ok && nbpf[i] > 0)
			printf("\n    bpftrace took %.3fM/s, the loop %.0f "
			    "ns/call = %.2fx alone; ours/bpftrace: events "
			    "%.2fx, ns added to a call %.2fx\n",
			    wbpf[i].w_took / 1e6, wbpf[i].w_ns,
			    wbpf[i].w_ns / wb.w_ns,
			    wmax[i].w_took / wbpf[i].w_took,
			    (wmax[i].w_ns - wb.w_ns) /
			    (wbpf[i].w_ns - wb.w_ns));
		else
			printf("; bpftrace unavailable\n");
		printf("    the -c filter: events counted %.2fx, ns added to "
		    "a call %.2fx those of -A (every process kept)\n",
		    wmax[i].w_took / wall[i].w_took,
		    (wmax[i].w_ns - wb.w_ns) / (wall[i].w_ns - wb.w_ns));
		/*
		 * CPU per event, not CPU %, decides who limits: on two cores
		 * a looping tracee leaves dtd and btrace one core to share.
		 */
		printf("    CPU an event: btrace %.0f ns, dtd %.0f ns; at 1M "
		    "events/s btrace needs %.0f%% of a core, dtd %.0f%%\n"
		    "    -> %s\n", wmax[i].w_tns, wmax[i].w_dns,
		    wmax[i].w_tns / 10, wmax[i].w_dns / 10,
		    wmax[i].w_tns >= 1000 ? "btrace is the bottleneck below "
		    "1M events/s" : wmax[i].w_dns >= 1000 ? "dtd, not btrace, "
		    "is the bottleneck below 1M events/s" : "by CPU neither "
		    "is the bottleneck at 1M events/s; losses there are "
		    "bursts the rings did not absorb");
	}
	return 0;
}
