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
 * Aggregations at the source through the device (dtvar.h, DTIOCPRBAGG,
 * DTIOCAGGREAD), with a private dtd and a traced agg_calls (N getppid
 * calls, then N / 100 closes of 100000 + i % 37):
 *
 *	agg-ioctl	malformed specs and reads get EINVAL, the rest of
 *			the protocol its errors, and dtd stays up
 *	agg-opens	three opens of one probe: one folds, one reads
 *			its events, one a table too small; each gets its
 *			own, exactly, with nothing lost
 *	agg-count	a keyless count() alone on a probe: the tracee
 *			counts in its ring's header and records nothing;
 *			the count is exact, and a second open that reads
 *			the probe's events turns the records back on
 *	agg-stacks	profile:hz:97 keyed by kstack: stacks interned
 *			once, entries by id, DTIOCAGGSTACKS returns them,
 *			no record read; a stack table of one stack says
 *			what it could not hold
 *	agg-kcount	a count of raw_syscalls:sys_enter kept by the
 *			kernel's per-CPU counters: a size query's struct,
 *			its dtgr_kcount now set, passed back as it is
 *			reads the table (dtgr_kcount is output only)
 *
 * usage: agg_itest DTD DTRUN AGG_CALLS ioctl|opens|count|stacks|kcount
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NCALLS		20000
#define NCLOSE		(NCALLS / 100)
/*
 * As btrace -c asks: every call waited for, and the launched processes'
 * alone (the kernel's copy of the machine's calls is another test's).
 */
#define AGG_FLAGS	(DTEVT_LOSSLESS | DTEVT_LAUNCHED)

static struct dtt_dtd	 dd;

static int
agg_spec(int fd, struct dtioc_aggspec *as)
{
	return ioctl(fd, DTIOCPRBAGG, as) == -1 ? errno : 0;
}

static int
agg_read(int fd, struct dtioc_aggread *rd)
{
	return ioctl(fd, DTIOCAGGREAD, rd) == -1 ? errno : 0;
}

static void
spec_init(struct dtioc_aggspec *as, uint32_t pbn, int func)
{
	memset(as, 0, sizeof(*as));
	as->dtas_pbn = pbn;
	as->dtas_func = (uint8_t)func;
}

static void
run_ioctl(int fd, uint32_t pbn, uint32_t other)
{
	struct dtioc_aggspec as;
	struct dtioc_aggread rd;
	struct dtioc_stat st;
	struct dtioc_statx sx;
	int bad = 0, e;

	dtt_check(dtt_enable(fd, pbn, DTEVT_FUNCARGS | DTEVT_EXECNAME, 0) == 0,
	    "getppid's entry enabled");
	/* each of these is malformed */
	spec_init(&as, pbn, 0);
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_LHIST + 1);
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_nkeys = DTA_MAXKEYS + 1;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_nkeys = 2;
	as.dtas_keys[0] = as.dtas_keys[1] = DTF_PID;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_nkeys = 1;
	as.dtas_keys[0] = 99;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_keys[1] = DTF_PID;	/* past dtas_nkeys */
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_vfield = DTF_ARG0;	/* count has no value */
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_SUM);
	as.dtas_vfield = DTF_COMM;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_SUM);
	as.dtas_vfield = DTF_ARG0 + DTMAXFUNCARGS;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_SUM);
	as.dtas_vfield = DTF_ARG0;
	as.dtas_vflags = 0x80;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_LHIST);
	as.dtas_vfield = DTF_ARG0;
	as.dtas_lmin = 0, as.dtas_lmax = 10, as.dtas_lstep = 0;
	bad += agg_spec(fd, &as) != EINVAL;
	as.dtas_lmin = 10, as.dtas_lmax = 10, as.dtas_lstep = 1;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_HIST);
	as.dtas_vfield = DTF_ARG0;
	as.dtas_lstep = 1;		/* lhist's alone */
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_stksize = 1;
	bad += agg_spec(fd, &as) != EINVAL;
	/* a duration: a return probe's alone, never narrowed, no key */
	spec_init(&as, pbn, DTA_HIST);
	as.dtas_vfield = DTF_LAT;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn + 1, DTA_HIST);
	as.dtas_vfield = DTF_LAT;
	as.dtas_vflags = DTF_F_INT32;
	bad += agg_spec(fd, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_nkeys = 1;
	as.dtas_keys[0] = DTF_LAT;
	bad += agg_spec(fd, &as) != EINVAL;
	dtt_check(bad == 0, "17 malformed specs: EINVAL");

	memset(&rd, 0, sizeof(rd));
	dtt_check(agg_read(fd, &rd) == 0 && rd.dtgr_size == 0 &&
	    rd.dtgr_nents == 0, "no table yet: an empty read");
	spec_init(&as, other, DTA_COUNT);
	dtt_check(agg_spec(fd, &as) == ENOENT, "a probe not enabled: ENOENT");
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_aggsize = 1u << 30;
	e = agg_spec(fd, &as);
	dtt_check(e == 0 && as.dtas_id == 1 &&
	    as.dtas_aggsize == DTA_AGGSIZE_MAX,
	    "a count: id %u, table %u (cut to DTA_AGGSIZE_MAX)", as.dtas_id,
	    as.dtas_aggsize);
	rd.dtgr_flags = 0x100;
	dtt_check(agg_read(fd, &rd) == EINVAL, "an unknown read flag: EINVAL");
	memset(&rd, 0, sizeof(rd));
	rd.dtgr_kcount = 1;
	dtt_check(agg_read(fd, &rd) == 0 && rd.dtgr_kcount == 0,
	    "dtgr_kcount set on input: ignored, set on output");
	memset(&sx, 0xff, sizeof(sx));
	dtt_check(ioctl(fd, DTIOCGSTATSX, &sx) == 0 && sx.dtsx_srcstk == 0 &&
	    sx.dtsx_spare == 0, "DTIOCGSTATSX: no stack recorded, spare 0");
	dtt_check(dtt_record(fd, 1) == 0, "recording");
	spec_init(&as, pbn, DTA_COUNT);
	dtt_check(agg_spec(fd, &as) == EBUSY, "a spec while recording: EBUSY");
	dtt_check(dtt_record(fd, 0) == 0, "stopped");
	spec_init(&as, pbn, DTA_COUNT);
	for (e = 0, bad = 1; bad < DTA_PCBAGGS && e == 0; bad++)
		e = agg_spec(fd, &as);
	dtt_check(e == 0 && agg_spec(fd, &as) == ENOSPC,
	    "the %dth aggregation of one probe: ENOSPC", DTA_PCBAGGS + 1);
	dtt_check(kill(dd.dd_pid, 0) == 0 && dtt_stats(fd, &st) == 0,
	    "dtd is still up and answers");
}

/* Every event stamped before t has reached fd's table. */
static bool
agg_settled(int fd, uint64_t t)
{
	struct dtioc_aggread rd;
	struct timespec nap = { 0, 1000000 };
	int i;

	/* dtd has nothing to block on for it: bounded looks */
	for (i = 0; i < 10000; i++) {
		memset(&rd, 0, sizeof(rd));
		if (agg_read(fd, &rd) != 0)
			return false;
		if (rd.dtgr_done >= t)
			return true;
		nanosleep(&nap, NULL);
	}
	return false;
}

static struct dtioc_aggent *
agg_all(int fd, uint32_t size, struct dtioc_aggread *rd)
{
	struct dtioc_aggent *e = calloc(size, sizeof(*e));

	memset(rd, 0, sizeof(*rd));
	rd->dtgr_size = (size_t)size * sizeof(*e);
	rd->dtgr_ents = e;
	rd->dtgr_flags = DTA_RD_CLEAR;
	if (e == NULL || agg_read(fd, rd) != 0) {
		free(e);
		return NULL;
	}
	return e;
}

static void
run_opens(int fa, uint32_t ppid, uint32_t clo, const char *dtrun,
    const char *calls)
{
	char n[16];
	char *argv[] = { (char *)dtrun, "-s", dd.dd_sock, (char *)calls, n,
	    NULL };
	struct dtioc_aggspec ac, as, ao;
	struct dtioc_aggread rd;
	struct dtioc_filter f;
	struct dtioc_aggent *e = NULL, *o = NULL;
	struct dtioc_stat st, sb;
	struct dt_evt *evs = NULL;
	struct pollfd pfd;
	uint64_t cnt = 0, sum = 0, want = 0, ocnt = 0, aclo;
	unsigned int akeys = 0, cn;
	long got = 0, k, r;
	int fb = -1, fc = -1, status, i, e2, bad = 0;
	pid_t pid;

	snprintf(n, sizeof(n), "%d", NCALLS);
	for (i = 0; i < NCLOSE; i++)
		want += 100000 + i % 37;
	if ((fb = dtt_open(dd.dd_dev)) == -1 ||
	    (fc = dtt_open(dd.dd_dev)) == -1 ||
	    (evs = calloc(4096, sizeof(*evs))) == NULL)
		goto out;
	/* A: getppid counted by pid, close's arg0 summed by arg0 */
	memset(&f, 0, sizeof(f));
	f.dtfl_nterms = 1;
	f.dtfl_terms[0].dtft_op = DTF_OP_GE;
	f.dtfl_terms[0].dtft_field = DTF_ARG0;
	f.dtfl_terms[0].dtft_val = 100000;
	spec_init(&ac, ppid, DTA_COUNT);
	ac.dtas_nkeys = 1;
	ac.dtas_keys[0] = DTF_PID;
	spec_init(&as, clo, DTA_SUM);
	as.dtas_nkeys = 1;
	as.dtas_keys[0] = DTF_ARG0;
	as.dtas_vfield = DTF_ARG0;
	f.dtfl_pbn = clo;
	if (!dtt_check(dtt_enable(fa, ppid, AGG_FLAGS, 0) == 0 &&
	    dtt_enable(fa, clo, DTEVT_FUNCARGS | AGG_FLAGS, 0) == 0 &&
	    ioctl(fa, DTIOCPRBFILTER, &f) == 0 && agg_spec(fa, &ac) == 0 &&
	    agg_spec(fa, &as) == 0 && ac.dtas_id == 1 && as.dtas_id == 2,
	    "A folds getppid and close"))
		goto out;
	/* B: getppid's events, read */
	if (!dtt_check(dtt_enable(fb, ppid, AGG_FLAGS, 0) == 0,
	    "B reads getppid"))
		goto out;
	/* C: close's arg0 counted in a table of 8 */
	spec_init(&ao, clo, DTA_COUNT);
	ao.dtas_nkeys = 1;
	ao.dtas_keys[0] = DTF_ARG0;
	ao.dtas_aggsize = 8;
	if (!dtt_check(dtt_enable(fc, clo, DTEVT_FUNCARGS | AGG_FLAGS, 0) == 0 &&
	    ioctl(fc, DTIOCPRBFILTER, &f) == 0 &&
	    agg_spec(fc, &ao) == 0 && ao.dtas_aggsize == 8,
	    "C counts close in a table of 8"))
		goto out;
	if (!dtt_check(dtt_record(fa, 1) == 0 && dtt_record(fb, 1) == 0 &&
	    dtt_record(fc, 1) == 0, "all three record"))
		goto out;
	pid = dtt_spawn(argv, NULL, -1, -1, -1, -1);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (!dtt_check(pid > 0 && dtt_exited0(status), "agg_calls %d ran",
	    NCALLS))
		goto out;
	if (!dtt_check(agg_settled(fa, dtt_clock_ns(CLOCK_REALTIME)),
	    "dtd says it put every event"))
		goto out;
	/* all of it is in B's rings now: read until they are empty */
	pfd.fd = fb;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, 0) == 1 && (r = dtt_read(fb, evs, 4096,
	    10000)) > 0)
		for (k = 0; k < r; k++)
			got += evs[k].dtev_pid == pid;
	e = agg_all(fa, ac.dtas_aggsize, &rd);
	if (!dtt_check(e != NULL, "A's table read"))
		goto out;
	for (i = 0; i < (int)rd.dtgr_nents; i++) {
		if (e[i].dtae_id == 1 && e[i].dtae_pid == pid)
			cnt = e[i].dtae_count;
		if (e[i].dtae_id == 2) {
			akeys++;
			sum += (uint64_t)e[i].dtae_sum;
			ocnt += e[i].dtae_count;
			if (e[i].dtae_sum != (int64_t)(e[i].dtae_count *
			    e[i].dtae_args[0]))
				bad++;
		}
	}
	/*
	 * A loss before the fan-out (a tracee's ring full while a slow,
	 * sanitized dtd lags past the lossless wait's bound) is every
	 * open's alike and counted; in a release build there is none.
	 */
	dtt_check(dtt_stats(fa, &st) == 0 && dtt_stats(fb, &sb) == 0,
	    "stats of A and B");
	dtt_check(cnt == (uint64_t)got && (cnt == NCALLS ||
	    (st.dtst_dropevt > 0 && sb.dtst_dropevt > 0)),
	    "A folded %llu getppid calls of %d, B read %ld (dropped: %llu "
	    "and %llu, counted)", (unsigned long long)cnt, NCALLS, got,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)sb.dtst_dropevt);
	dtt_check(bad == 0 && rd.dtgr_overflow == 0 && (ocnt == NCLOSE ?
	    sum == want : st.dtst_dropevt > 0),
	    "A summed %llu closes' arg0: %llu (want %llu)",
	    (unsigned long long)ocnt, (unsigned long long)sum,
	    (unsigned long long)want);
	free(e);
	e = agg_all(fa, ac.dtas_aggsize, &rd);
	dtt_check(e != NULL && rd.dtgr_nents == 0, "A's table empty after "
	    "a read that cleared it");
	pfd.fd = fa;
	dtt_check(st.dtst_readevt == 0 && poll(&pfd, 1, 0) == 0,
	    "nothing of A's reached its rings");
	/* C: the size protocol, then 8 keys and the rest (of the closes A
	 * folded too) counted over */
	aclo = ocnt;
	cn = akeys < 8 ? akeys : 8;
	memset(&rd, 0, sizeof(rd));
	e2 = agg_read(fc, &rd);
	dtt_check(e2 == 0 && rd.dtgr_size == cn * sizeof(struct dtioc_aggent),
	    "C's size asked: %zu bytes for %u entries", rd.dtgr_size, cn);
	o = calloc(8, sizeof(*o));
	rd.dtgr_size = sizeof(*o);
	rd.dtgr_ents = o;
	rd.dtgr_flags = DTA_RD_CLEAR;
	dtt_check(o != NULL && (cn < 2 || agg_read(fc, &rd) == ENOSPC),
	    "C read into one entry: ENOSPC");
	free(o);
	o = agg_all(fc, 8, &rd);
	for (ocnt = 0, i = 0; o != NULL && i < (int)rd.dtgr_nents; i++)
		ocnt += o[i].dtae_count;
	dtt_check(o != NULL && rd.dtgr_nents == cn &&
	    (akeys <= 8 || rd.dtgr_overflow > 0) &&
	    ocnt + rd.dtgr_overflow == aclo && rd.dtgr_aggevt == ocnt,
	    "C: 8 keys, %llu counted, %llu over the table",
	    (unsigned long long)ocnt, (unsigned long long)rd.dtgr_overflow);
out:
	free(e);
	free(o);
	free(evs);
	if (fb != -1)
		close(fb);
	if (fc != -1)
		close(fc);
}

/* One run of agg_calls under dtrun: its pid, or -1. */
static pid_t
run_calls(const char *dtrun, const char *calls, int n)
{
	char num[16];
	char *argv[] = { (char *)dtrun, "-s", dd.dd_sock, (char *)calls, num,
	    NULL };
	pid_t pid;

	snprintf(num, sizeof(num), "%d", n);
	pid = dtt_spawn(argv, NULL, -1, -1, -1, -1);
	if (pid <= 0 || !dtt_exited0(dtt_wait(pid, DTT_EXIT_MS)))
		return -1;
	return pid;
}

static void
run_count(int fa, uint32_t ppid, const char *dtrun, const char *calls)
{
	struct dtioc_aggspec ac;
	struct dtioc_aggread rd;
	struct dtioc_aggent *e = NULL;
	struct udt_stats u0, u1;
	struct dtioc_stat st;
	struct dt_evt *evs = NULL;
	struct pollfd pfd;
	uint64_t cnt = 0;
	long got = 0, k, r;
	int fb = -1;
	pid_t pid;

	spec_init(&ac, ppid, DTA_COUNT);
	if (!dtt_check(dtt_enable(fa, ppid, AGG_FLAGS, 0) == 0 &&
	    agg_spec(fa, &ac) == 0 && dtt_record(fa, 1) == 0,
	    "A counts getppid, no key, no filter"))
		return;
	if (!dtt_check(st_ingest_stats(dd.dd_sock, &u0) == 0,
	    "ingest counters before"))
		return;
	pid = run_calls(dtrun, calls, NCALLS);
	if (!dtt_check(pid > 0 && agg_settled(fa,
	    dtt_clock_ns(CLOCK_REALTIME)), "agg_calls %d ran, dtd settled",
	    NCALLS))
		return;
	e = agg_all(fa, ac.dtas_aggsize, &rd);
	if (e != NULL && rd.dtgr_nents == 1 && e[0].dtae_id == 1)
		cnt = e[0].dtae_count;
	free(e);
	memset(&u1, 0, sizeof(u1));
	k = st_ingest_stats(dd.dd_sock, &u1);
	dtt_check(k == 0 && u1.us_records - u0.us_records < NCALLS / 100,
	    "the tracee recorded %llu records for %d calls",
	    (unsigned long long)(u1.us_records - u0.us_records), NCALLS);
	dtt_check(cnt == NCALLS, "counted in its ring's header: %llu of %d",
	    (unsigned long long)cnt, NCALLS);

	/* B reads the events: the hooks record again, A counts them */
	if ((fb = dtt_open(dd.dd_dev)) == -1 ||
	    (evs = calloc(4096, sizeof(*evs))) == NULL ||
	    !dtt_check(dtt_enable(fb, ppid, AGG_FLAGS, 0) == 0 &&
	    dtt_record(fb, 1) == 0, "B reads getppid"))
		goto out;
	pid = run_calls(dtrun, calls, NCALLS);
	if (!dtt_check(pid > 0 && agg_settled(fa,
	    dtt_clock_ns(CLOCK_REALTIME)), "agg_calls ran again"))
		goto out;
	pfd.fd = fb;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, 0) == 1 && (r = dtt_read(fb, evs, 4096,
	    10000)) > 0)
		for (k = 0; k < r; k++)
			got += evs[k].dtev_pid == pid;
	e = agg_all(fa, ac.dtas_aggsize, &rd);
	cnt = e != NULL && rd.dtgr_nents == 1 ? e[0].dtae_count : 0;
	free(e);
	/* a loss before the fan-out (a slow, sanitized dtd) is counted */
	memset(&st, 0, sizeof(st));
	k = dtt_stats(fb, &st);
	dtt_check(k == 0 && got == (long)cnt && (cnt == NCALLS ||
	    st.dtst_dropevt > 0), "B read %ld events, A counted %llu "
	    "(B dropped %llu, counted)", got, (unsigned long long)cnt,
	    (unsigned long long)st.dtst_dropevt);
out:
	free(evs);
	if (fb != -1)
		close(fb);
}

static int
stk_read(int fd, struct dtioc_aggstkread *sr, struct dtioc_aggstack *buf,
    uint32_t first, uint32_t n)
{
	memset(sr, 0, sizeof(*sr));
	sr->dtsr_first = first;
	sr->dtsr_stks = buf;
	sr->dtsr_size = (size_t)n * sizeof(*buf);
	return ioctl(fd, DTIOCAGGSTACKS, sr) == -1 ? errno : 0;
}

/* Work for the profile to sample: system calls, so kernel stacks. */
static void
stk_spin(uint64_t ns)
{
	uint64_t end = dtt_clock_ns(CLOCK_MONOTONIC) + ns;

	while (dtt_clock_ns(CLOCK_MONOTONIC) < end)
		(void)getppid();
}

static void
run_stacks(int fa, struct dtioc_probe_info *pi, size_t npi)
{
	struct dtioc_aggspec as;
	struct dtioc_aggread rd;
	struct dtioc_aggstkread sr;
	struct dtioc_aggstack *stk;
	struct dtioc_aggent *e;
	struct dtioc_stat st;
	uint64_t sum = 0, t;
	uint32_t pbn, i, j, bad = 0;
	int fb;

	pbn = dtt_pbn(pi, npi, "profile", "hz", "97");
	fb = dtt_open(dd.dd_dev);
	if (!dtt_check(pbn != 0 && fb != -1 &&
	    dtt_enable(fa, pbn, DTEVT_KSTACK, 1000000000ULL / 97) == 0 &&
	    dtt_enable(fb, pbn, DTEVT_KSTACK, 1000000000ULL / 97) == 0,
	    "profile:hz:97 enabled with kstack on two opens"))
		return;
	spec_init(&as, pbn, DTA_SUM);
	as.dtas_vfield = DTF_KSTACK;	/* a stack is no value */
	bad += agg_spec(fa, &as) != EINVAL;
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_nkeys = 2;
	as.dtas_keys[0] = as.dtas_keys[1] = DTF_USTACK;
	bad += agg_spec(fa, &as) != EINVAL;
	dtt_check(bad == 0 && stk_read(fa, &sr, NULL, 0, 0) == EINVAL,
	    "a stack as a value, a stack key twice, stack id 0: EINVAL");
	dtt_check(stk_read(fa, &sr, NULL, 1, 0) == 0 && sr.dtsr_total == 0,
	    "no stack table yet: an empty read");
	spec_init(&as, pbn, DTA_COUNT);
	as.dtas_nkeys = 1;
	as.dtas_keys[0] = DTF_KSTACK;
	bad = agg_spec(fa, &as);
	dtt_check(bad == 0 && as.dtas_stksize == DTA_STKSIZE_DEF,
	    "@[kstack] = count(): a stack table of %u stacks",
	    as.dtas_stksize);
	as.dtas_stksize = 1;
	bad = agg_spec(fb, &as);
	dtt_check(bad == 0 && as.dtas_stksize == 1,
	    "another open's stack table of 1 stack");
	memset(&sr, 0, sizeof(sr));
	sr.dtsr_first = 1;
	sr.dtsr_spare = 1;
	dtt_check(ioctl(fa, DTIOCAGGSTACKS, &sr) == -1 && errno == EINVAL,
	    "DTIOCAGGSTACKS with dtsr_spare set: EINVAL");

	if (!dtt_check(dtt_record(fa, 1) == 0 && dtt_record(fb, 1) == 0,
	    "recording"))
		return;
	stk_spin(1000000000ULL);
	t = dtt_clock_ns(CLOCK_REALTIME);
	dtt_check(agg_settled(fa, t) && agg_settled(fb, t),
	    "dtd put every event stamped before the end");
	dtt_record(fa, 0);
	dtt_record(fb, 0);

	e = agg_all(fa, DTA_AGGSIZE_DEF, &rd);
	stk = calloc(DTA_STKSIZE_DEF, sizeof(*stk));
	if (!dtt_check(e != NULL && stk != NULL && stk_read(fa, &sr, stk, 1,
	    DTA_STKSIZE_DEF) == 0, "the table and its stacks read"))
		return;
	for (i = 0; i < rd.dtgr_nents; i++) {
		sum += e[i].dtae_count;
		bad += e[i].dtae_kstack > sr.dtsr_total;
	}
	dtt_check(rd.dtgr_aggevt > 50 && sum == rd.dtgr_aggevt &&
	    rd.dtgr_overflow == 0, "%llu samples folded in %u entries",
	    (unsigned long long)rd.dtgr_aggevt, rd.dtgr_nents);
	dtt_check(bad == 0 && sr.dtsr_nstks == sr.dtsr_total &&
	    sr.dtsr_total > 0 && sr.dtsr_total <= rd.dtgr_nents &&
	    sr.dtsr_overflow == 0, "every entry's stack id among the %u "
	    "stacks read", sr.dtsr_total);
	for (i = 0; i < sr.dtsr_nstks; i++) {
		bad += stk[i].dtak_id != i + 1 || stk[i].dtak_count == 0 ||
		    stk[i].dtak_count > STACKTRACE_MAX;
		for (j = 0; j < i; j++)
			bad += stk[j].dtak_count == stk[i].dtak_count &&
			    memcmp(stk[j].dtak_pc, stk[i].dtak_pc,
			    stk[i].dtak_count * sizeof(uint64_t)) == 0;
	}
	dtt_check(bad == 0, "stacks by id, each once, at most a record's");
	dtt_check(stk_read(fa, &sr, stk, sr.dtsr_total + 1, 4) == 0 &&
	    sr.dtsr_nstks == 0, "none past the last id");
	dtt_check(dtt_stats(fa, &st) == 0 && st.dtst_readevt == 0,
	    "no record took a ring slot");
	free(e);

	e = agg_all(fb, DTA_AGGSIZE_DEF, &rd);
	if (dtt_check(e != NULL && stk_read(fb, &sr, stk, 1, 4) == 0,
	    "the small table read")) {
		for (i = 0, sum = 0; i < rd.dtgr_nents; i++)
			sum += e[i].dtae_count;
		dtt_check(sr.dtsr_total == 1 && sr.dtsr_overflow > 0 &&
		    rd.dtgr_overflow == sr.dtsr_overflow &&
		    sum == rd.dtgr_aggevt, "one stack held, %llu samples of "
		    "others counted as the stack table's overflow",
		    (unsigned long long)sr.dtsr_overflow);
	}
	free(e);
	free(stk);
	close(fb);
	dtt_check(kill(dd.dd_pid, 0) == 0, "dtd is still up");
}

/*
 * A client's usual two steps, the size then the read on the same
 * struct, once a kernel counter has counted: the size query sets
 * dtgr_kcount, which the read must take as the output it is.
 */
static void
run_kcount(int fd, const struct dtioc_probe_info *pi, size_t npi)
{
	struct dtioc_aggspec as;
	struct dtioc_aggread rd;
	struct dtioc_aggent *e = NULL;
	uint32_t pbn;
	int i, e1, e2;

	pbn = dtt_pbn(pi, npi, "tracepoint", "raw_syscalls", "sys_enter");
	spec_init(&as, pbn, DTA_COUNT);
	if (!dtt_check(pbn != 0 && dtt_enable(fd, pbn, 0, 0) == 0 &&
	    agg_spec(fd, &as) == 0 && dtt_record(fd, 1) == 0,
	    "a keyless count of raw_syscalls:sys_enter recording"))
		return;
	for (i = 0; i < 1000; i++)
		(void)syscall(SYS_getppid);
	memset(&rd, 0, sizeof(rd));
	e1 = agg_read(fd, &rd);
	dtt_check(e1 == 0 && rd.dtgr_kcount >= 1000 &&
	    rd.dtgr_kcount <= rd.dtgr_aggevt && rd.dtgr_size ==
	    sizeof(struct dtioc_aggent), "the size query: %zu bytes, %llu "
	    "of %llu folds the kernel's", rd.dtgr_size,
	    (unsigned long long)rd.dtgr_kcount,
	    (unsigned long long)rd.dtgr_aggevt);
	/* the same struct, dtgr_kcount as the query left it */
	if ((e = calloc(2, sizeof(*e))) != NULL) {
		rd.dtgr_size = 2 * sizeof(*e);
		rd.dtgr_ents = e;
	}
	e2 = e != NULL ? agg_read(fd, &rd) : ENOMEM;
	dtt_check(e2 == 0 && rd.dtgr_nents == 1 && e[0].dtae_count >= 1000 &&
	    rd.dtgr_kcount <= rd.dtgr_aggevt, "the read on the same struct: "
	    "%s, %u entries", strerror(e2), rd.dtgr_nents);
	dtt_check(dtt_record(fd, 0) == 0, "stopped");
	free(e);
}

int
main(int argc, char *argv[])
{
	struct dtioc_probe_info *pi = NULL;
	uint32_t ppid, clo;
	size_t npi;
	int fd = -1, status;

	if (argc != 5 || (strcmp(argv[4], "ioctl") != 0 &&
	    strcmp(argv[4], "opens") != 0 && strcmp(argv[4], "count") != 0 &&
	    strcmp(argv[4], "stacks") != 0 && strcmp(argv[4], "kcount") != 0)) {
		fprintf(stderr, "usage: agg_itest DTD DTRUN AGG_CALLS "
		    "ioctl|opens|count|stacks|kcount\n");
		return 2;
	}
	if (st_setup(&dd, "udt-agg", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	ppid = dtt_pbn(pi, npi, "syscall", "sys%39", "entry");
	clo = dtt_pbn(pi, npi, "syscall", "sys%6", "entry");
	if (!dtt_check(ppid != 0 && clo != 0, "getppid and close have probes"))
		goto out;
	if (strcmp(argv[4], "ioctl") == 0)
		run_ioctl(fd, ppid, clo);
	else if (strcmp(argv[4], "count") == 0)
		run_count(fd, ppid, argv[2], argv[3]);
	else if (strcmp(argv[4], "stacks") == 0)
		run_stacks(fd, pi, npi);
	else if (strcmp(argv[4], "kcount") == 0)
		run_kcount(fd, pi, npi);
	else
		run_opens(fd, ppid, clo, argv[2], argv[3]);
out:
	st_teardown(&dd, fd);
	free(pi);
	status = dtt_done();
	return status;
}
