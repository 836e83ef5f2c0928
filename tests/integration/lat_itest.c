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
 * A call's duration folded by the hooks (dtvar.h's DTF_LAT) through the
 * device, with a private dtd: a traced lat_reads blocks in a readv() of
 * its standard input before the return probe is enabled with a hist of
 * DTF_LAT alone (its entry probe not enabled by anyone), then makes N
 * readv() calls.  The call whose entry came before the enable has no
 * stamp: it is folded nowhere, as a script pairing entry and return by
 * thread would skip it; the N others are, exactly, with no record.  A
 * call in flight keeps its stamp while another call's fold comes and
 * goes (run_gen()).
 *
 * usage: lat_itest DTD DTRUN LAT_READS
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NCALLS		5000
#define LAT_FLAGS	(DTEVT_LOSSLESS | DTEVT_LAUNCHED)

static struct dtt_dtd	 dd;

/* Whether pid is inside a readv() (x86-64's 19) of descriptor 0. */
static bool
in_readv(pid_t pid)
{
	char path[64], buf[64];
	FILE *f;
	bool in = false;

	snprintf(path, sizeof(path), "/proc/%ld/syscall", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) != NULL)
		in = strncmp(buf, "19 0x0 ", 7) == 0;
	fclose(f);
	return in;
}

/* dtd put every event stamped before t: bounded looks. */
static bool
settled(int fd, uint64_t t)
{
	struct dtioc_aggread rd;
	struct timespec nap = { 0, 1000000 };
	int i;

	for (i = 0; i < 10000; i++) {
		memset(&rd, 0, sizeof(rd));
		if (ioctl(fd, DTIOCAGGREAD, &rd) == -1)
			return false;
		if (rd.dtgr_done >= t)
			return true;
		nanosleep(&nap, NULL);
	}
	return false;
}

/*
 * The calls fd's table holds, its size entries read once: their counts'
 * sum in *np, and in *overp what it could not hold.  false if the read
 * failed.
 */
static bool
table_count(int fd, uint32_t size, uint64_t *np, uint64_t *overp)
{
	struct dtioc_aggread rd;
	struct dtioc_aggent *e;
	uint32_t i;
	bool ok;

	*np = 0;
	if ((e = calloc(size, sizeof(*e))) == NULL)
		return false;
	memset(&rd, 0, sizeof(rd));
	rd.dtgr_size = (size_t)size * sizeof(*e);
	rd.dtgr_ents = e;
	if ((ok = ioctl(fd, DTIOCAGGREAD, &rd) == 0)) {
		for (i = 0; i < rd.dtgr_nents; i++)
			*np += e[i].dtae_count;
		if (overp != NULL)
			*overp = rd.dtgr_overflow;
	}
	free(e);
	return ok;
}

/*
 * lat_reads under dtrun, ncalls readv()s of its standard input behind a
 * gate: its pid in *pidp (dtrun's, which execs it), the traced
 * process's pid it prints returned, or -1; in[1] opens the gate.
 */
static pid_t
lat_spawn(const char *dtrun, const char *reads, int ncalls, int in[2],
    int out[2], pid_t *pidp)
{
	char num[16], line[32];
	char *argv[] = { (char *)dtrun, "-s", dd.dd_sock, (char *)reads, num,
	    "0", "gate", NULL };
	ssize_t len;

	snprintf(num, sizeof(num), "%d", ncalls);
	*pidp = -1;
	if (!dtt_check(pipe2(in, O_CLOEXEC) == 0 &&
	    pipe2(out, O_CLOEXEC) == 0, "pipes"))
		return -1;
	*pidp = dtt_spawn(argv, NULL, in[0], out[1], -1, -1);
	close(out[1]);
	out[1] = -1;
	len = *pidp > 0 ? read(out[0], line, sizeof(line) - 1) : -1;
	if (!dtt_check(len > 0, "lat_reads started"))
		return -1;
	line[len] = '\0';
	return (pid_t)strtol(line, NULL, 10);
}

/* A case's end: its lat_reads stopped; its pipes and opens closed. */
static void
lat_end(pid_t pid, int in[2], int out[2], int fda, int fdb)
{
	int i;

	if (pid > 0)
		(void)dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	for (i = 0; i < 2; i++) {
		if (in[i] != -1)
			close(in[i]);
		if (out[i] != -1)
			close(out[i]);
	}
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
}

static void
run(int fd, uint32_t ret, const char *dtrun, const char *reads)
{
	struct timespec nap = { 0, 1000000 };
	struct dtioc_aggspec as;
	struct udt_stats u0, u1;
	uint64_t n = 0, over = 0;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, i;
	pid_t pid = -1, tracee;

	if ((tracee = lat_spawn(dtrun, reads, NCALLS, in, out, &pid)) <= 0)
		goto out;
	/* its first call entered before anything is enabled */
	for (i = 0; i < 10000 && !in_readv(tracee); i++)
		nanosleep(&nap, NULL);
	if (!dtt_check(in_readv(tracee), "lat_reads %ld in its first readv",
	    (long)tracee))
		goto out;
	memset(&as, 0, sizeof(as));
	as.dtas_pbn = ret;
	as.dtas_func = DTA_HIST;
	as.dtas_vfield = DTF_LAT;
	if (!dtt_check(dtt_enable(fd, ret, LAT_FLAGS, 0) == 0 &&
	    ioctl(fd, DTIOCPRBAGG, &as) == 0 && dtt_record(fd, 1) == 0,
	    "readv's return enabled, a hist of its durations"))
		goto out;
	if (!dtt_check(st_ingest_stats(dd.dd_sock, &u0) == 0,
	    "ingest counters before"))
		goto out;
	if (!dtt_check(write(in[1], "x", 1) == 1, "the gate opened"))
		goto out;
	if (!dtt_check(dtt_exited0(dtt_wait(pid, DTT_EXIT_MS)) &&
	    settled(fd, dtt_clock_ns(CLOCK_REALTIME)), "lat_reads ran"))
		goto out;
	pid = -1;
	if (!dtt_check(table_count(fd, as.dtas_aggsize, &n, &over),
	    "the table read"))
		goto out;
	dtt_check(n == NCALLS, "%llu calls timed: the %d after the enable, "
	    "not the one entered before", (unsigned long long)n, NCALLS);
	dtt_check(over == 0, "none the table could not hold");
	memset(&u1, 0, sizeof(u1));
	dtt_check(st_ingest_stats(dd.dd_sock, &u1) == 0 &&
	    u1.us_records - u0.us_records < 8, "%llu records for %d calls",
	    (unsigned long long)(u1.us_records - u0.us_records), NCALLS);
out:
	lat_end(pid, in, out, -1, -1);
	dtt_check(kill(dd.dd_pid, 0) == 0, "dtd is still up");
}

/*
 * A second open's durations are refused while one open folds some
 * (udt_sagg.h: a thread has one stamp for all), and the refusal leaves
 * the first open's stamps in flight good: the readv() lat_reads enters
 * behind its gate after the enable is timed, though a second open asked
 * to fold read()'s durations and closed meanwhile.
 */
#define GEN_CALLS	100

static void
run_gen(uint32_t ret, uint32_t other, const char *dtrun, const char *reads)
{
	struct timespec nap = { 0, 1000000 };
	struct dtioc_aggspec as, bs;
	int fda = -1, fdb = -1, in[2] = { -1, -1 }, out[2] = { -1, -1 }, i;
	uint64_t n = 0;
	pid_t pid = -1, tracee = -1;

	memset(&as, 0, sizeof(as));
	as.dtas_pbn = ret;
	as.dtas_func = DTA_HIST;
	as.dtas_vfield = DTF_LAT;
	bs = as;
	bs.dtas_pbn = other;
	if (!dtt_check((fda = dtt_open(dd.dd_dev)) != -1 &&
	    dtt_enable(fda, ret, LAT_FLAGS, 0) == 0 &&
	    ioctl(fda, DTIOCPRBAGG, &as) == 0 && dtt_record(fda, 1) == 0,
	    "gen: readv's durations folded"))
		goto out;
	if ((tracee = lat_spawn(dtrun, reads, GEN_CALLS, in, out, &pid)) <= 0)
		goto out;
	/* its first readv entered after the enable: stamped */
	for (i = 0; i < 10000 && !in_readv(tracee); i++)
		nanosleep(&nap, NULL);
	if (!dtt_check(in_readv(tracee), "gen: lat_reads %ld in its first "
	    "readv", (long)tracee))
		goto out;
	if (!dtt_check((fdb = dtt_open(dd.dd_dev)) != -1 &&
	    dtt_enable(fdb, other, LAT_FLAGS, 0) == 0 &&
	    ioctl(fdb, DTIOCPRBAGG, &bs) == -1 && errno == EBUSY &&
	    close(fdb) == 0,
	    "gen: a second open's durations of read() refused (EBUSY)"))
		goto out;
	fdb = -1;
	if (!dtt_check(write(in[1], "x", 1) == 1 &&
	    dtt_exited0(dtt_wait(pid, DTT_EXIT_MS)) &&
	    settled(fda, dtt_clock_ns(CLOCK_REALTIME)), "gen: lat_reads ran"))
		goto out;
	pid = -1;
	if (!dtt_check(table_count(fda, as.dtas_aggsize, &n, NULL),
	    "gen: the table read"))
		goto out;
	dtt_check(n == GEN_CALLS + 1, "gen: %llu calls timed, %d with the one "
	    "in flight while read's fold was refused",
	    (unsigned long long)n, GEN_CALLS + 1);
out:
	lat_end(pid, in, out, fda, fdb);
}

/*
 * The hooks' durations ride in the return records when the hooks do not
 * fold (USERDT_SRCAGG=0): dtd folds them for the open that asked, and an
 * open that records the same return reads what dt(4) has there, a
 * second return value of 0, not the duration.
 */
#define RV1_CALLS	200

static void
run_rv1(uint32_t ret, const char *dtrun, const char *reads)
{
	static struct dt_evt evs[256];
	struct dtioc_aggspec as;
	int fda = -1, fdb = -1, in[2] = { -1, -1 }, out[2] = { -1, -1 };
	long n, k, got = 0, bad = 0;
	pid_t pid = -1, tracee = -1;

	memset(&as, 0, sizeof(as));
	as.dtas_pbn = ret;
	as.dtas_func = DTA_HIST;
	as.dtas_vfield = DTF_LAT;
	if (!dtt_check((fda = dtt_open(dd.dd_dev)) != -1 &&
	    (fdb = dtt_open(dd.dd_dev)) != -1 &&
	    dtt_enable(fda, ret, LAT_FLAGS, 0) == 0 &&
	    ioctl(fda, DTIOCPRBAGG, &as) == 0 &&
	    dtt_enable(fdb, ret, LAT_FLAGS, 0) == 0 &&
	    dtt_record(fda, 1) == 0 && dtt_record(fdb, 1) == 0,
	    "rv1: one open folds readv's durations, one records its returns"))
		goto out;
	/* the hooks fold nothing: the returns carry their durations */
	if (!dtt_check(setenv("USERDT_SRCAGG", "0", 1) == 0, "rv1: env"))
		goto out;
	tracee = lat_spawn(dtrun, reads, RV1_CALLS, in, out, &pid);
	(void)unsetenv("USERDT_SRCAGG");
	if (tracee <= 0)
		goto out;
	if (!dtt_check(write(in[1], "x", 1) == 1 &&
	    dtt_exited0(dtt_wait(pid, DTT_EXIT_MS)), "rv1: lat_reads ran"))
		goto out;
	pid = -1;
	/* its returns, each read once; the last comes with its exit */
	while (got < RV1_CALLS + 1 &&
	    (n = dtt_read(fdb, evs, 256, 2000)) > 0)
		for (k = 0; k < n; k++)
			if (evs[k].dtev_pid == tracee) {
				got++;
				bad += evs[k].dtev_retval[1] != 0;
			}
	dtt_check(got >= RV1_CALLS && bad == 0, "rv1: %ld returns read, "
	    "%ld with a second value that is not 0", got, bad);
out:
	lat_end(pid, in, out, fda, fdb);
}

int
main(int argc, char *argv[])
{
	struct dtioc_probe_info *pi = NULL;
	uint32_t ret, rd;
	size_t npi;
	int fd = -1, status;

	if (argc != 4) {
		fprintf(stderr, "usage: lat_itest DTD DTRUN LAT_READS\n");
		return 2;
	}
	if (st_setup(&dd, "udt-lat", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	/* OpenBSD's number of readv */
	ret = dtt_pbn(pi, npi, "syscall", "sys%120", "return");
	if (dtt_check(ret != 0, "readv has a return probe")) {
		run(fd, ret, argv[2], argv[3]);
		/* its durations taken from one open at a time */
		close(fd);
		fd = -1;
		run_rv1(ret, argv[2], argv[3]);
		/* OpenBSD's number of read */
		rd = dtt_pbn(pi, npi, "syscall", "sys%3", "return");
		if (dtt_check(rd != 0, "read has a return probe"))
			run_gen(ret, rd, argv[2], argv[3]);
	}
out:
	st_teardown(&dd, fd);
	free(pi);
	status = dtt_done();
	return status;
}
