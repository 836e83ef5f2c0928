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
 * A pushed pid filter evaluated in the kernel (issue 22,
 * providers/tracepoint/dt_tp_pid.c), through a real device file,
 * against a dtd of our own.  Root only (perf on other processes).
 *   pidpush_test tp DTD TARGET	tracepoint:raw_syscalls:sys_enter,
 *				open A pushing pid == the target's (as
 *				btrace -p does), open B comm == its name
 *				(the shared event's kernel filter), while a
 *				noisy process makes system calls flat out:
 *				each open counts exactly the target's
 *				getppid() calls, its main thread's, an
 *				early thread's and one it starts after the
 *				opens record, nothing is lost, no event of
 *				another process reaches open A, and dtd
 *				read about twice the target's records, far
 *				fewer than the noise made calls
 *   pidpush_test churn DTD TARGET	open A alone, while the target
 *				makes threads without pause during the
 *				start: whether dtd follows its threads or
 *				filters its pid itself, the count is exact
 *   pidpush_test refused DTD TARGET	as tp where dtd cannot follow the
 *				threads (USERDT_TEST_PIDFOLLOW=refuse): it
 *				says so and filters the pid itself, with
 *				the same exact counts (no noise: it would
 *				overflow perf's buffers)
 *
 * Knowing every event of the target was read: its exit_group is its
 * last system call, and a reader gets events in time order across CPUs
 * (design decision 18), so once it is read nothing older is on its way.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"
#include "systab.h"

#define PP_MAIN		500	/* getppid() calls of the main thread */
#define PP_EARLY	300	/* of a thread started before the opens */
#define PP_LATE		200	/* of one started after they record */
#define PP_CALLS	(PP_MAIN + PP_EARLY + PP_LATE)	/* a perf buffer holds them all */
#define PP_NEVS		4096
#define PP_NOISE	1000000	/* noisy calls made first */
#define PP_READ_MS	30000

static const char	*pp_dtd, *pp_target;
static struct dtt_dtd	 pp_dd;

/* Enable pbn on a new open with filter f[n] and record: the fd, or -1. */
static int
pp_open(uint32_t pbn, const struct dtioc_filter_term *f, uint32_t n)
{
	struct dtioc_filter fl;
	int fd, error;

	if ((fd = dtt_open(pp_dd.dd_dev)) == -1) {
		dtt_check(false, "open: %s", strerror(errno));
		return -1;
	}
	memset(&fl, 0, sizeof(fl));
	fl.dtfl_pbn = pbn;
	fl.dtfl_nterms = n;
	memcpy(fl.dtfl_terms, f, n * sizeof(*f));
	if ((error = dtt_enable(fd, pbn, DTEVT_EXECNAME, 0)) != 0 ||
	    (ioctl(fd, DTIOCPRBFILTER, &fl) == -1 && (error = errno)) ||
	    (error = dtt_record(fd, 1)) != 0) {
		dtt_check(false, "enable, filter, record: %s",
		    strerror(error));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The target (pid_target.c), started and ready, its stdin in *go: its
 * pid, or -1.
 */
static pid_t
pp_spawn(int *go, bool churn)
{
	char n[16], m[16], k[16];
	char *argv[] = { (char *)pp_target, n, m, k, churn ? "churn" : NULL,
	    NULL };
	int in[2], out[2];
	char buf[8];
	pid_t pid;

	snprintf(n, sizeof(n), "%d", PP_MAIN);
	snprintf(m, sizeof(m), "%d", PP_EARLY);
	snprintf(k, sizeof(k), "%d", PP_LATE);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		return -1;
	pid = dtt_spawn(argv, NULL, in[0], out[1], -1, -1);
	close(in[0]);
	close(out[1]);
	if (pid == -1 || read(out[0], buf, 6) != 6 ||
	    memcmp(buf, "ready\n", 6) != 0) {
		dtt_check(false, "target ready");
		close(out[0]);
		close(in[1]);
		return -1;
	}
	close(out[0]);
	*go = in[1];
	return pid;
}

/* A child making getppid() flat out, once it made PP_NOISE. */
static pid_t
pp_noise(volatile uint64_t *calls)
{
	pid_t pid;

	*calls = 0;
	if ((pid = fork()) == 0) {
		for (;;) {
			(void)syscall(SYS_getppid);
			(*calls)++;
		}
	}
	while (pid > 0 && *calls < PP_NOISE)
		sched_yield();
	return pid;
}

/*
 * Read fd until target's exit came; its getppid() events in *got, the
 * events of any other process in *stray.  False on a timeout or an
 * error.
 */
static bool
pp_count(int fd, pid_t target, uint64_t *got, uint64_t *stray)
{
	static struct dt_evt evs[PP_NEVS];
	int getppid_num = systab_lookup("getppid"), exit_num =
	    systab_lookup("exit");
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PP_READ_MS * 1000000ULL;
	bool exited = false;
	long k, r;

	*got = *stray = 0;
	while (!exited) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		if ((r = dtt_read(fd, evs, PP_NEVS, 1000)) == -1) {
			if (errno == ETIMEDOUT)
				continue;
			return false;
		}
		for (k = 0; k < r; k++) {
			if (evs[k].dtev_pid != target)
				(*stray)++;
			else if (evs[k].dtev_args[0] == getppid_num)
				(*got)++;
			else if (evs[k].dtev_args[0] == exit_num)
				exited = true;
		}
	}
	return true;
}

/* dtd's count of perf records, from its log at exit; -1 if none. */
static long long
pp_records(void)
{
	char line[512];
	long long n = -1, v;
	FILE *f;

	if ((f = fopen(pp_dd.dd_err, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "dtd: tracepoint: %lld records", &v) == 1)
			n = v;
		if (strstr(line, "threads of") != NULL ||
		    strstr(line, "filter") != NULL)
			fprintf(stderr, "# %s", line);
	}
	fclose(f);
	return n;
}

static void
pp_nothing_lost(int fd, const char *what)
{
	struct dtioc_stat st;
	int error;

	error = dtt_stats(fd, &st);
	dtt_check(error == 0 && st.dtst_dropevt == 0, "%s lost nothing: %llu "
	    "(%s)", what, error ? 0ULL : (unsigned long long)st.dtst_dropevt,
	    strerror(error));
}

static struct dtioc_filter_term
pp_term(uint8_t op, uint8_t field, int64_t val, const char *str)
{
	struct dtioc_filter_term t;

	memset(&t, 0, sizeof(t));
	t.dtft_op = op;
	t.dtft_field = field;
	t.dtft_val = val;
	if (str != NULL)
		snprintf(t.dtft_str, sizeof(t.dtft_str), "%s", str);
	return t;
}

static void
run(bool churn, bool refused)
{
	volatile uint64_t *calls;
	struct dtioc_filter_term fa[1], fb[1];
	uint64_t gota, gotb, straya, strayb, noise;
	pid_t tpid, npid = -1;
	int fda = -1, fdb = -1, go = -1, st;
	uint32_t pbn;
	long long recs;

	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED)
		return;
	if ((fda = dtt_open(pp_dd.dd_dev)) == -1 || (pbn = dtt_probe(fda,
	    "tracepoint", "raw_syscalls", "sys_enter")) == 0) {
		dtt_check(false, "tracepoint:raw_syscalls:sys_enter listed");
		return;
	}
	close(fda);
	fda = -1;
	if ((tpid = pp_spawn(&go, churn)) == -1)
		return;
	npid = refused ? -1 : pp_noise(calls);
	/* btrace -p's push alone (bt_push.c push_pid()) */
	fa[0] = pp_term(DTF_OP_EQ, DTF_PID, tpid, NULL);
	fb[0] = pp_term(DTF_OP_EQ, DTF_COMM, 0, "pid_target");
	if ((fda = pp_open(pbn, fa, 1)) == -1 ||
	    (!churn && (fdb = pp_open(pbn, fb, 1)) == -1))
		goto out;
	(void)write(go, "x", 1);
	close(go);
	go = -1;
	st = dtt_wait(tpid, PP_READ_MS);
	dtt_check(st != -1 && dtt_exited0(st), "target ran");
	tpid = -tpid;
	dtt_check(pp_count(fda, -tpid, &gota, &straya), "open A read the exit");
	if (fdb != -1)
		dtt_check(pp_count(fdb, -tpid, &gotb, &strayb),
		    "open B read the exit");
	noise = *calls;
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	npid = -1;
	dtt_check(gota == PP_CALLS && straya == 0, "pid == %d: %llu getppid "
	    "(want %d), %llu events of others", (int)-tpid,
	    (unsigned long long)gota, PP_CALLS, (unsigned long long)straya);
	pp_nothing_lost(fda, "open A");
	if (fdb != -1) {
		dtt_check(gotb == PP_CALLS, "comm == pid_target: %llu getppid "
		    "(want %d)", (unsigned long long)gotb, PP_CALLS);
		pp_nothing_lost(fdb, "open B");
	}
	close(fda);
	fda = -1;
	if (fdb != -1)
		close(fdb);
	fdb = -1;
	dtt_check(dtt_dtd_stop(&pp_dd, SIGTERM) != -1, "dtd stops");
	recs = pp_records();
	if (churn) {
		fprintf(stderr, "# churn: dtd read %lld records, the noise "
		    "made %llu calls\n", recs, (unsigned long long)noise);
		return;
	}
	if (refused) {
		dtt_check(dtt_dtd_logsays(&pp_dd, "cannot follow the threads"),
		    "dtd says it filters the pid itself");
		return;
	}
	/*
	 * Each open's records of the target (a few calls more than the
	 * getppid()), and none of the noise: the kernel chose, for A by
	 * the target's threads.
	 */
	dtt_check(recs >= 2 * PP_CALLS && recs < 2 * PP_CALLS + 2000 &&
	    (uint64_t)recs < noise / 10,
	    "dtd read %lld perf records, the noise made %llu calls", recs,
	    (unsigned long long)noise);
	dtt_check(!dtt_dtd_logsays(&pp_dd, "cannot follow"),
	    "dtd followed the target's threads");
	return;
out:
	if (go != -1)
		close(go);
	if (tpid > 0)
		dtt_stop(tpid, SIGKILL, DTT_EXIT_MS);
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
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

	if (argc != 4 || (strcmp(argv[1], "tp") != 0 &&
	    strcmp(argv[1], "churn") != 0 &&
	    strcmp(argv[1], "refused") != 0)) {
		fprintf(stderr, "usage: pidpush_test tp|churn|refused dtd "
		    "target\n");
		return 2;
	}
	refused = strcmp(argv[1], "refused") == 0;
	if (refused)
		setenv("USERDT_TEST_PIDFOLLOW", "refuse", 1);
	pp_dtd = argv[2];
	pp_target = argv[3];
	dtt_tag(argv[1]);
	if (dtt_dtd_init(&pp_dd, "pidpush_test") == -1 ||
	    dtt_dtd_start(&pp_dd, pp_dtd, (char *[]){ "--no-ksyms", NULL },
	    errbuf, sizeof(errbuf)) == -1) {
		dtt_check(false, "dtd starts: %s", errbuf);
		dtt_dtd_fini(&pp_dd, true);
		return dtt_done();
	}
	run(strcmp(argv[1], "churn") == 0, refused);
	if (pp_dd.dd_pid != 0)
		dtt_check(dtt_dtd_stop(&pp_dd, SIGTERM) != -1, "dtd stops");
	dtt_dtd_fini(&pp_dd, true);
	return dtt_done();
}
