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
 * The sequence btrace(8) drives the device with, for interval:hz:1 at
 * 10 Hz, and what each record must hold.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define SEQ_WANT	6		/* events to collect */
#define SEQ_PERIOD_MS	100ULL

/* Bytes after the NUL of a fixed string must all be NUL. */
static bool
nul_padded(const char *s, size_t len)
{
	size_t i = strnlen(s, len);

	if (i == len)
		return false;
	for (; i < len; i++)
		if (s[i] != '\0')
			return false;
	return true;
}

static bool
zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len-- > 0)
		if (*c++ != 0)
			return false;
	return true;
}

static void
seq_plist(struct itest *it, int fd, bool bsd)
{
	struct dtioc_probe dtpr = { 0, NULL };
	struct dtioc_probe_info *pi;
	size_t i, n, bad_pbn = 0, bad_pad = 0;
	const char *e = encname(bsd);
	size_t need;
	int r;

	r = dtioc(fd, DTIOCGPLIST, &dtpr, bsd);
	dtt_check(r == 0 && dtpr.dtpr_size > 0 &&
	    dtpr.dtpr_size % sizeof(*pi) == 0,
	    "%s: GPLIST size 0 returns the needed size (%zu)", e,
	    dtpr.dtpr_size);
	need = dtpr.dtpr_size;
	if (need == 0 || need % sizeof(*pi) != 0)
		return;
	/* Garbage first, so padding dtd leaves alone shows up. */
	pi = malloc(need);
	memset(pi, 0xa5, need);
	dtpr.dtpr_probes = pi;
	if (!dtt_check(dtioc(fd, DTIOCGPLIST, &dtpr, bsd) == 0 &&
	    dtpr.dtpr_size == need, "%s: GPLIST with %zu bytes", e, need)) {
		free(pi);
		return;
	}
	n = need / sizeof(*pi);
	dtt_check(n == it->it_nprobes, "%s: %zu probes, as before", e, n);
	for (i = 0; i < n; i++) {
		if (pi[i].dtpi_pbn != i + 1)
			bad_pbn++;
		if (!nul_padded(pi[i].dtpi_prov, DTNAMESIZE) ||
		    !nul_padded(pi[i].dtpi_func, DTNAMESIZE) ||
		    !nul_padded(pi[i].dtpi_name, DTNAMESIZE) ||
		    !zero((char *)&pi[i] + 53, sizeof(pi[i]) - 53))
			bad_pad++;
	}
	dtt_check(bad_pbn == 0, "%s: pbn 1..%zu contiguous in list order "
	    "(%zu out of place)", e, n, bad_pbn);
	dtt_check(bad_pad == 0, "%s: names NUL-padded, struct padding zero "
	    "(%zu bad entries)", e, bad_pad);
	dtt_check(strcmp(pi[0].dtpi_prov, "profile") == 0 &&
	    strcmp(pi[0].dtpi_func, "hz") == 0 &&
	    strcmp(pi[0].dtpi_name, "97") == 0 && pi[0].dtpi_nargs == 0,
	    "%s: pbn 1 is profile:hz:97, nargs 0 (got %.16s:%.16s:%.16s "
	    "nargs %u)", e, pi[0].dtpi_prov, pi[0].dtpi_func,
	    pi[0].dtpi_name, pi[0].dtpi_nargs);
	dtt_check(n >= 2 && strcmp(pi[1].dtpi_prov, "interval") == 0 &&
	    strcmp(pi[1].dtpi_func, "hz") == 0 &&
	    strcmp(pi[1].dtpi_name, "1") == 0 && pi[1].dtpi_nargs == 0,
	    "%s: pbn 2 is interval:hz:1, nargs 0", e);
	free(pi);
}

/* Is tid a thread of pid? */
static bool
thread_of(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* The comm of thread tid of pid, "" if unknown. */
static void
thread_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64];
	FILE *fp;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
	    (int)tid);
	if ((fp = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)len, fp) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

static uint64_t
tsp_ns(const struct dt_evt *ev)
{
	return (uint64_t)ev->dtev_tsp.tv_sec * NSEC_PER_SEC +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

static void
seq_events(struct itest *it, const struct dt_evt *evs, size_t n,
    uint64_t t0, uint64_t t1, uint64_t skip, bool bsd)
{
	const uint64_t period = SEQ_PERIOD_MS * NSEC_PER_MSEC;
	uint64_t span;
	const char *e = encname(bsd);
	size_t i, bad_pbn = 0, bad_cpu = 0, bad_pid = 0, bad_tid = 0;
	size_t bad_comm = 0, bad_zero = 0, bad_win = 0, bad_order = 0;
	uint64_t t, prev = 0, gap, mingap = UINT64_MAX, maxgap = 0;
	char comm[32];

	for (i = 0; i < n; i++) {
		const struct dt_evt *ev = &evs[i];

		if (ev->dtev_pbn != it->it_interval)
			bad_pbn++;
		if (ev->dtev_cpu != 0)
			bad_cpu++;
		if (it->it_dtd != 0 && ev->dtev_pid != it->it_dtd)
			bad_pid++;
		if (ev->dtev_tid == 0 || (it->it_dtd != 0 &&
		    !thread_of(it->it_dtd, ev->dtev_tid)))
			bad_tid++;
		/* The process' name, or the thread's own if dtd named it. */
		thread_comm(ev->dtev_pid, ev->dtev_tid, comm, sizeof(comm));
		if (!nul_padded(ev->dtev_comm, DTMAXCOMLEN) ||
		    (strcmp(ev->dtev_comm, "dtd") != 0 &&
		    strcmp(ev->dtev_comm, comm) != 0))
			bad_comm++;
		if (!zero(&ev->dtev_kstack, sizeof(ev->dtev_kstack)) ||
		    !zero(&ev->dtev_ustack, sizeof(ev->dtev_ustack)) ||
		    !zero(&ev->_args, sizeof(ev->_args)))
			bad_zero++;
		t = tsp_ns(ev);
		if (ev->dtev_tsp.tv_nsec < 0 ||
		    ev->dtev_tsp.tv_nsec >= (long)NSEC_PER_SEC ||
		    t < t0 || t > t1)
			bad_win++;
		if (i > 0) {
			if (t < prev)
				bad_order++;
			gap = t - prev;
			if (gap < mingap)
				mingap = gap;
			if (gap > maxgap)
				maxgap = gap;
		}
		prev = t;
	}
	dtt_check(bad_pbn == 0, "%s: %zu events, all of pbn %u (%zu not)", e, n,
	    it->it_interval, bad_pbn);
	dtt_check(bad_cpu == 0, "%s: interval events on cpu 0 (%zu not)", e,
	    bad_cpu);
	dtt_check(it->it_dtd == 0 || bad_pid == 0, "%s: pid is dtd's %d "
	    "(%zu not; first %d)", e, (int)it->it_dtd, bad_pid,
	    n ? evs[0].dtev_pid : 0);
	dtt_check(bad_tid == 0, "%s: tid non-zero and a thread of dtd (%zu not; "
	    "first %d)", e, bad_tid, n ? evs[0].dtev_tid : 0);
	dtt_check(bad_comm == 0, "%s: comm is dtd's (%zu not; first '%.24s')",
	    e, bad_comm, n ? evs[0].dtev_comm : "");
	dtt_check(bad_zero == 0, "%s: no kstack, ustack or args unasked (%zu "
	    "not)", e, bad_zero);
	dtt_check(bad_win == 0, "%s: CLOCK_REALTIME stamps inside the run "
	    "(%zu outside)", e, bad_win);
	dtt_check(bad_order == 0, "%s: stamps non-decreasing (%zu not)", e,
	    bad_order);
	/*
	 * The interval fires on a grid of periods and a late wake-up is
	 * not replayed but counted in skiptick, so each event lies within
	 * one period after its grid point: n events and skip missed
	 * periods span more than n - 2 periods and less than
	 * n + skip periods, however loaded the machine.  A gap alone says
	 * nothing: a late tick makes the next one look early.
	 */
	span = n >= 2 ? prev - tsp_ns(&evs[0]) : 0;
	dtt_check(n >= 2 && span > (n - 2) * period &&
	    span < (n + skip) * period,
	    "%s: %zu ticks + %llu skipped span %llu ms on a %llu ms grid "
	    "(gaps %llu..%llu ms)", e, n, (unsigned long long)skip,
	    (unsigned long long)(span / NSEC_PER_MSEC),
	    (unsigned long long)(period / NSEC_PER_MSEC),
	    (unsigned long long)(mingap / NSEC_PER_MSEC),
	    (unsigned long long)(maxgap / NSEC_PER_MSEC));
}

void
itest_seq(struct itest *it, bool bsd)
{
	struct dt_evt evs[64];
	struct dtioc_arg dtar;
	struct dtioc_req dtrq;
	struct dtioc_stat dtst;
	const char *e = encname(bsd);
	uint64_t t0, t1;
	long n;
	int fd, on, r;

	if ((fd = itest_open(it)) == -1)
		return;
	seq_plist(it, fd, bsd);

	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = it->it_profile;
	dtt_check(dtioc(fd, DTIOCGARGS, &dtar, bsd) == 0 && dtar.dtar_size == 0,
	    "%s: GARGS of profile gives size 0", e);

	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = it->it_interval;
	dtrq.dtrq_evtflags = DTEVT_EXECNAME;
	dtrq.dtrq_nsecs = SEQ_PERIOD_MS * NSEC_PER_MSEC;
	if (!dtt_check(dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd) == 0,
	    "%s: PRBENABLE interval 100 ms, EXECNAME", e))
		goto out;
	t0 = dtt_clock_ns(CLOCK_REALTIME);
	on = 1;
	if (!dtt_check(dtioc(fd, DTIOCRECORD, &on, bsd) == 0, "%s: RECORD 1", e))
		goto out;
	/* btrace's buffer: 64 records. */
	n = read_events(fd, evs, 64, SEQ_WANT, 64 * sizeof(struct dt_evt),
	    10000);
	t1 = dtt_clock_ns(CLOCK_REALTIME);
	dtt_check(n >= SEQ_WANT, "%s: read blocks until events: %ld records%s%s",
	    e, n, n < 0 ? ", error " : "", n < 0 ? strerror((int)-n) : "");
	on = 0;
	dtt_check(dtioc(fd, DTIOCRECORD, &on, bsd) == 0, "%s: RECORD 0", e);
	dtt_check(dtioc(fd, DTIOCPRBDISABLE, &dtrq, bsd) == 0,
	    "%s: PRBDISABLE", e);
	memset(&dtst, 0xff, sizeof(dtst));
	r = dtioc(fd, DTIOCGSTATS, &dtst, bsd);
	dtt_check(r == 0 && n > 0 &&
	    dtst.dtst_readevt == (uint64_t)n && dtst.dtst_dropevt == 0 &&
	    dtst.dtst_recurevt == 0,
	    "%s: GSTATS readevt %llu == %ld read, dropevt %llu == 0", e,
	    (unsigned long long)dtst.dtst_readevt, n,
	    (unsigned long long)dtst.dtst_dropevt);
	if (n > 0)
		seq_events(it, evs, (size_t)n, t0, t1, dtst.dtst_skiptick,
		    bsd);
out:
	dtt_check(close(fd) == 0, "%s: close", e);
}
