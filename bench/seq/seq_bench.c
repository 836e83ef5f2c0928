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
 * seq_bench [reps [events]]
 *
 * The sequencer alone (daemon/core/dt_seq.c), driven as dtd's tracepoint
 * reader drives it: rounds of events from two CPUs' buffers, each round
 * marked when it is put, and the same events put straight into the rings
 * (what --openbsd-strict does) as the baseline.  Prints the thread CPU
 * time per event of each, as the median of reps, and their ratio: what
 * time order costs per event, apart from perf, FUSE and the reader.  A
 * second source that marks as often (the ingest drain) is the third case;
 * the fourth is the first with its pushes taking the lock once per 64
 * (dt_seq_batch_begin(), as the ingest drain pushes).
 *
 * The rings are large enough that nothing is dropped: the cost measured
 * is that of a put that lands.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu.h>

#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_softc.h"

#define MAXREPS		31
#define ROUND		512	/* events per reader round */
#define SPACING		500	/* ns between a CPU's events */
#define BATCH		64	/* pushes per lock, mode 3 */
#define NMODES		4

static const struct dt_cred	sb_root = { 0, 0, 1 };
static uint64_t			sb_now;		/* the fake clock */
static uint64_t			sb_base = 1000000000000ULL;
static struct dt_source		*sb_src[2];	/* the reader, the drain */

static int
sb_copyout(void *arg, uint64_t uaddr, const void *src, size_t len)
{
	(void)arg;
	memcpy((void *)(uintptr_t)uaddr, src, len);
	return 0;
}

static const struct dt_uaccess	sb_ua = { sb_copyout, NULL };

/* A read's completion: on the caller of dt_dev_read() when data is ready. */
struct sb_tok {
	bool	 st_done;
	size_t	 st_len;
};

static void
sb_read_done(void *token, const void *buf, size_t len, int error)
{
	struct sb_tok *t = token;

	(void)buf;
	t->st_len = error == 0 ? len : 0;
	__atomic_store_n(&t->st_done, true, __ATOMIC_RELEASE);
}

/* Read sc empty, so that its rings start again at their first slot. */
static void
sb_drain(struct dt_softc *sc)
{
	struct sb_tok t;

	for (;;) {
		memset(&t, 0, sizeof(t));
		dt_dev_read(sc, 256 * dt_dev_recsize(), &t);
		if (!__atomic_load_n(&t.st_done, __ATOMIC_ACQUIRE)) {
			dt_dev_read_cancel(sc, &t, 0);
			while (!__atomic_load_n(&t.st_done, __ATOMIC_ACQUIRE))
				;
			return;
		}
		if (t.st_len == 0)
			return;
	}
}

static uint64_t
sb_clock(void)
{
	return __atomic_load_n(&sb_now, __ATOMIC_RELAXED);
}

static uint64_t
sb_cputime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int
sb_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One run of n events: mode 0 straight into the rings, 1 through the
 * sequencer from one source, 2 from two sources taking turns by round,
 * 3 as 1 in batches of BATCH pushes under one lock.
 * Returns CPU ns per event, or 0 if something went wrong.
 */
static double
sb_run(struct dt_softc *sc, int mode, long n)
{
	struct dt_source **src = sb_src;
	struct dt_pcb *dp;
	struct dt_evt ev;
	struct dtioc_stat st0, st;
	uint64_t base, t0, t1, ts;
	long i, r;
	int k;

	memset(&st0, 0, sizeof(st0));
	(void)dt_dev_ioctl(sc, &sb_root, DTIOCGSTATS, &st0, &sb_ua);
	dp = sc->ds_pcbs;
	memset(&ev, 0, sizeof(ev));
	/* Younger than every earlier run's: the sequencer remembers. */
	base = sb_base;
	sb_base += (uint64_t)n * SPACING + 1000000000ULL;
	if (mode > 0) {
		dt_source_mark(src[0], base);
		if (mode == 2)
			dt_source_mark(src[1], base);
	}
	t0 = sb_cputime();
	rcu_read_lock();
	for (r = 0; r * ROUND < n; r++) {
		k = mode == 2 ? (int)(r & 1) : 0;
		for (i = 0; i < ROUND && r * ROUND + i < n; i++) {
			/*
			 * Two CPUs' buffers read one after the other: CPU 0's
			 * half of the round, then CPU 1's, each in order, the
			 * two interleaved in time.
			 */
			unsigned int cpu = i < ROUND / 2 ? 0 : 1;
			long j = cpu == 0 ? i : i - ROUND / 2;

			ts = base + (uint64_t)(r * ROUND / 2 + j) * SPACING +
			    cpu * (SPACING / 2);
			ev.dtev_tsp.tv_sec = (time_t)(ts / 1000000000ULL);
			ev.dtev_tsp.tv_nsec = (long)(ts % 1000000000ULL);
			ev.dtev_args[0] = r * ROUND + i;
			if (mode == 3 && i % BATCH == 0)
				dt_seq_batch_begin();
			if (mode == 0)
				dt_pcb_ring_put(dp, cpu, &ev);
			else
				dt_seq_put(src[k], dp, cpu, &ev);
			if (mode == 3 && (i % BATCH == BATCH - 1 ||
			    i == ROUND - 1 || r * ROUND + i == n - 1))
				dt_seq_batch_end();
		}
		if (mode > 0) {
			/* The round is read: all later ones are younger. */
			ts = base + (uint64_t)((r + 1) * ROUND / 2) * SPACING;
			dt_source_mark(src[k], ts);
			if (mode == 2)
				dt_source_mark(src[k ^ 1], ts);
		}
	}
	rcu_read_unlock();
	if (mode > 0) {
		dt_source_idle(src[0]);
		dt_source_idle(src[1]);
	}
	t1 = sb_cputime();
	memset(&st, 0, sizeof(st));
	(void)dt_dev_ioctl(sc, &sb_root, DTIOCGSTATS, &st, &sb_ua);
	sb_drain(sc);
	if (st.dtst_dropevt != st0.dtst_dropevt) {
		fprintf(stderr, "seq_bench: %llu dropped: rings too small\n",
		    (unsigned long long)(st.dtst_dropevt - st0.dtst_dropevt));
		return 0;
	}
	return (double)(t1 - t0) / (double)n;
}

int
main(int argc, char *argv[])
{
	static const char *names[] = { "straight into the rings",
	    "sequencer, one source", "sequencer, two sources",
	    "one source, 64 a lock" };
	struct dtioc_req dtrq = { 2, 0, 0, 1000000000000ULL };
	struct dt_softc *sc;
	double v[NMODES][MAXREPS], med[NMODES];
	int on = 1;
	int reps = argc > 1 ? atoi(argv[1]) : 9, m, i;
	long n = argc > 2 ? atol(argv[2]) : 100000;
	struct dt_dev_conf conf = { .dcf_ncpus = 2, .dcf_ringsize = 0,
	    .dcf_read_done = sb_read_done };

	if (reps < 1 || reps > MAXREPS || n < ROUND) {
		fprintf(stderr, "usage: seq_bench [reps (1-%d) [events]]\n",
		    MAXREPS);
		return 2;
	}
	/* Slots for every event on either CPU, a power of two. */
	for (conf.dcf_ringsize = 1024; conf.dcf_ringsize < (unsigned)n;
	    conf.dcf_ringsize *= 2)
		;
	sb_now = sb_base;
	dt_seq_clock_set(sb_clock, 50000000ULL);
	if (dt_dev_init(&conf) != 0) {
		fprintf(stderr, "seq_bench: dt_dev_init failed\n");
		return 1;
	}
	rcu_register_thread();
	if ((sb_src[0] = dt_source_add("bench-tp")) == NULL ||
	    (sb_src[1] = dt_source_add("bench-ingest")) == NULL ||
	    dt_dev_open(&sb_root, &sc) != 0 ||
	    dt_dev_ioctl(sc, &sb_root, DTIOCPRBENABLE, &dtrq, &sb_ua) != 0 ||
	    dt_dev_ioctl(sc, &sb_root, DTIOCRECORD, &on, &sb_ua) != 0) {
		fprintf(stderr, "seq_bench: cannot open and record\n");
		return 1;
	}
	/* A first run of each commits the rings' pages: not counted. */
	for (m = 0; m < NMODES; m++)
		if (sb_run(sc, m, n) == 0)
			return 1;
	/* Interleaved, so that a change of load weighs on every case. */
	for (i = 0; i < reps; i++)
		for (m = 0; m < NMODES; m++)
			if ((v[m][i] = sb_run(sc, m, n)) == 0)
				return 1;
	on = 0;
	(void)dt_dev_ioctl(sc, &sb_root, DTIOCRECORD, &on, &sb_ua);
	dt_dev_close(sc);
	for (m = 0; m < NMODES; m++) {
		qsort(v[m], (size_t)reps, sizeof(v[m][0]), sb_cmp_d);
		med[m] = v[m][reps / 2];
	}
	printf("sequencer cost, %ld events per run, median of %d, thread "
	    "CPU time\n", n, reps);
	for (m = 0; m < NMODES; m++)
		printf("  %-26s %7.1f ns/event  %5.2fx\n", names[m], med[m],
		    med[m] / med[0]);
	rcu_unregister_thread();
	dt_dev_fini();
	return 0;
}
