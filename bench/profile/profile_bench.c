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
 * What profiling costs dtd, next to perf record on the same workload in
 * the same run: a busy loop pinned on every CPU, sampled at 97 Hz and at
 * 4999 Hz with kernel and user stacks and names, for SECS seconds, REPS
 * times each; prints medians of dtd's CPU time and of perf record's (all
 * threads, from /proc/PID/task/.../schedstat), per second and per 1000
 * samples, and their ratio.  The client reading the device is not dtd
 * and is not counted; dtd serving its reads is.
 *
 *	profile_bench DTD [REPS [SECS]]		(root)
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "../../tests/integration/profile_itest.h"

#define MAXREPS	15
#define MAXCPU	256

static const char	*pt_dtd;	/* dtd binary */
static struct dtt_dtd	 pt_dd;		/* our dtd and its paths */


struct run {
	double	r_cpu_ms;	/* CPU time of the tracer */
	double	r_samples;
};

static int
run_dtd(pid_t dtd, unsigned int hz, unsigned int secs, struct run *r)
{
	struct pt_evs evs;
	uint64_t c0, c1;
	uint32_t pbn;
	int fd;

	if ((fd = dtt_open(pt_dd.dd_dev)) == -1) {
		dtt_check(false, "open %s: %s", pt_dd.dd_dev, strerror(errno));
		return -1;
	}
	if ((pbn = dtt_probe(fd, "profile", "hz", "97")) == 0)
		return -1;
	if (dtt_enable(fd, pbn, DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK,
	    NSEC_PER_SEC / hz) != 0)
		return -1;
	c0 = dtt_cpu_ns(dtd);
	if (dtt_record(fd, 1) != 0)
		return -1;
	if (pt_collect(&fd, &evs, 1, dtt_clock_ns(CLOCK_REALTIME) +
	    secs * NSEC_PER_SEC)) {
		close(fd);
		return -1;
	}
	dtt_record(fd, 0);
	c1 = dtt_cpu_ns(dtd);
	close(fd);
	r->r_cpu_ms = (double)(c1 - c0) / 1e6;
	r->r_samples = (double)evs.pe_n;
	free(evs.pe_evs);
	return 0;
}

/*
 * perf record runs secs + 2 s; its CPU time is taken over the middle
 * secs only (its startup and its build-id pass at exit are a fixed
 * cost that says nothing about sampling), its samples pro rata.  The
 * whole run's rusage is kept too.
 */
static int
run_perf(unsigned int hz, unsigned int secs, struct run *r,
    double *whole_ms)
{
	char freq[16], dur[16];
	char data[sizeof(pt_dd.dd_dir) + 16], errp[sizeof(pt_dd.dd_dir) + 16];
	char line[512];
	struct rusage ru;
	unsigned long n = 0;
	uint64_t c0, c1;
	int status, fd;
	FILE *fp;
	pid_t pid;
	char *p;

	snprintf(freq, sizeof(freq), "%u", hz);
	snprintf(dur, sizeof(dur), "%u", secs + 2);
	snprintf(data, sizeof(data), "%s/perf.data", pt_dd.dd_dir);
	snprintf(errp, sizeof(errp), "%s/perf.err", pt_dd.dd_dir);
	char *argv[] = { "perf", "record", "-e", "cpu-clock", "-F", freq,
	    "-a", "-g", "-o", data, "--", "sleep", dur, NULL };

	fflush(stdout);
	if ((pid = fork()) == 0) {
		fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, STDERR_FILENO);
		dup2(fd, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid == -1)
		return -1;
	/* A measurement window, not a wait for an event. */
	sleep(1);
	c0 = dtt_cpu_ns(pid);
	sleep(secs);
	c1 = dtt_cpu_ns(pid);
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	/* "[ perf record: Captured and wrote ... (N samples) ]" */
	if ((fp = fopen(errp, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if ((p = strstr(line, "(")) != NULL &&
		    strstr(line, "samples)") != NULL)
			n = strtoul(p + 1, NULL, 10);
	fclose(fp);
	unlink(data);
	unlink(errp);
	r->r_cpu_ms = (double)(c1 - c0) / 1e6;
	r->r_samples = (double)n * secs / (secs + 2);
	*whole_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	*whole_ms /= secs + 2;
	return n > 0 && c1 > c0 ? 0 : -1;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	static const unsigned int rates[] = { 97, 4999 };
	char *noksyms[] = { "--no-ksyms", NULL };
	pid_t busy[MAXCPU], dtd;
	struct run r;
	double ms[2][MAXREPS], per1k[2][MAXREPS], sps[2][MAXREPS];
	double m[2][3], whole[MAXREPS];
	char err[1024];
	unsigned int reps, secs, k;
	int ncpu, i, t, rv = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: profile_bench dtd [reps [secs]]\n");
		return 2;
	}
	pt_dtd = argv[1];
	reps = argc > 2 ? (unsigned int)atoi(argv[2]) : 5;
	secs = argc > 3 ? (unsigned int)atoi(argv[3]) : 3;
	if (reps < 1 || reps > MAXREPS || secs < 1) {
		fprintf(stderr, "profile_bench: reps 1..%d, secs >= 1\n",
		    MAXREPS);
		return 2;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAXCPU || dtt_dtd_init(&pt_dd, "profile_itest") == -1) {
		perror("profile_bench");
		return 2;
	}
	if ((dtd = dtt_dtd_start(&pt_dd, pt_dtd, noksyms, err,
	    sizeof(err))) == -1) {
		fprintf(stderr, "profile_bench: dtd: %s\n", err);
		dtt_dtd_fini(&pt_dd, true);
		return 1;
	}
	if (dtt_busy_start(busy, ncpu, "bench_busy") != 0) {
		fprintf(stderr, "profile_bench: busy loops failed\n");
		rv = 1;
		goto out;
	}
	printf("workload: %d pinned busy loops; %u runs of %u s per rate "
	    "and tracer, medians\n", ncpu, reps, secs);
	printf("perf: perf record -e cpu-clock -F HZ -a -g, over its steady "
	    "state; perf*: its whole run, startup and exit included\n");
	printf("%6s %-6s %10s %12s %16s\n", "Hz", "tracer", "samples/s",
	    "CPU ms/s", "CPU ms/1000 smp");
	for (k = 0; k < 2; k++) {
		for (i = 0; i < (int)reps; i++) {
			/* Alternate so drift in the machine hits both. */
			for (t = 0; t < 2; t++) {
				if ((t == 0 ? run_dtd(dtd, rates[k], secs, &r) :
				    run_perf(rates[k], secs, &r,
				    &whole[i])) != 0) {
					fprintf(stderr, "profile_bench: %s "
					    "run failed\n",
					    t == 0 ? "dtd" : "perf");
					rv = 1;
					goto out;
				}
				ms[t][i] = r.r_cpu_ms / secs;
				sps[t][i] = r.r_samples / secs;
				per1k[t][i] = r.r_cpu_ms * 1000 / r.r_samples;
			}
		}
		for (t = 0; t < 2; t++) {
			m[t][0] = median(sps[t], (int)reps);
			m[t][1] = median(ms[t], (int)reps);
			m[t][2] = median(per1k[t], (int)reps);
			printf("%6u %-6s %10.0f %12.2f %16.2f\n", rates[k],
			    t == 0 ? "dtd" : "perf", m[t][0], m[t][1],
			    m[t][2]);
		}
		printf("%6u %-6s %10s %12.2f %16s\n", rates[k], "perf*", "",
		    median(whole, (int)reps), "");
		printf("%6u %-6s %10.2f %12.2f %16.2f\n", rates[k],
		    "ratio", m[0][0] / m[1][0], m[0][1] / m[1][1],
		    m[0][2] / m[1][2]);
	}
out:
	dtt_busy_stop(busy, ncpu);
	if (!dtt_exited0(dtt_dtd_stop(&pt_dd, SIGTERM))) {
		fprintf(stderr, "profile_bench: dtd did not exit cleanly\n");
		rv = 1;
	}
	dtt_dtd_fini(&pt_dd, true);
	return rv;
}
