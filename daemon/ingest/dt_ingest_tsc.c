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
 * Tracees' time stamp counter values to CLOCK_REALTIME (UDT_W_TSC): a
 * tracee reads the TSC (a few ns) instead of calling clock_gettime().
 * Calibrated once at start against CLOCK_MONOTONIC, refined by the drain
 * thread over a baseline of 100 to 200 ms; each drain pass takes a
 * fresh (TSC, realtime) pair and converts records relative to it, so an
 * event a few milliseconds old carries at most the error of a few
 * milliseconds' worth of ticks.  MONOTONIC, not MONOTONIC_RAW: the rate
 * must be realtime's, which NTP slews (by up to 500 ppm, 2.5 us over 5 ms,
 * more than a system call takes), and the baseline rolls so that the rate
 * follows the slew of now, not the average since start.
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_tsc_calibrate() before the ingest threads exist
 *	[D]	the drain thread only
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dt_clock.h"
#include "dt_ingest.h"

static int		 dti_tsc_ok;		/* [I] */
static uint64_t		 dti_tsc0, dti_mono0;	/* [D] rate baseline start */
static uint64_t		 dti_tsc1, dti_mono1;	/* [D] the next baseline start */
static double		 dti_tsc_ns;		/* [D] ns per tick */
static uint64_t		 dti_ref_tsc;		/* [D] this pass's pair */
static int64_t		 dti_ref_rt;		/* [D] */
static int64_t		 dti_tsc_span;		/* [D] ticks in 10 s */
static uint64_t		 dti_tsc_10ms;		/* [I] ticks in 10 ms */
static uint64_t		 dti_rate_tsc;		/* [D] last rate refresh */
static _Atomic uint64_t	 dti_tsc_mult;		/* [D] written, [a] read:
						   dti_tsc_ns in 32.32 */

/*
 * A TSC value and clk read as closely together as we can.  The pair's
 * error is up to half the ticks between the two TSC reads, and a drain
 * thread preempted (or a vCPU descheduled) between them would shift every
 * record of a pass by a scheduling slice, putting hook stamps after the
 * kernel's stamps of the same calls: keep the tightest of a few tries.
 */
static void
dti_tsc_pair(clockid_t clk, uint64_t *tsc, uint64_t *ns)
{
	uint64_t a, b, t, best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		a = __builtin_ia32_rdtsc();
		t = dt_clock_ns(clk);
		b = __builtin_ia32_rdtsc();
		if (b < a || b - a >= best)
			continue;
		best = b - a;
		*tsc = a + (b - a) / 2;
		*ns = t;
	}
	if (best == UINT64_MAX) {
		/* The TSC ran backwards eight times: no better pair. */
		*tsc = __builtin_ia32_rdtsc();
		*ns = dt_clock_ns(clk);
	}
}

/*
 * Offer TSC stamps only where the kernel itself trusts the TSC as its
 * clock source (invariant and in step across CPUs).  Sleeps 20 ms once,
 * at start, to measure its rate.
 */
void
dt_tsc_calibrate(void)
{
	struct timespec pause = { 0, 20000000 };
	char src[32] = "";
	uint64_t tsc1, mono1, rt1;
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/"
	    "current_clocksource", "re");
	if (f == NULL)
		return;
	if (fgets(src, sizeof(src), f) == NULL)
		src[0] = '\0';
	fclose(f);
	if (strcmp(src, "tsc\n") != 0)
		return;
	dti_tsc_pair(CLOCK_MONOTONIC, &dti_tsc0, &dti_mono0);
	nanosleep(&pause, NULL);
	dti_tsc_pair(CLOCK_MONOTONIC, &tsc1, &mono1);
	if (tsc1 <= dti_tsc0 || mono1 <= dti_mono0)
		return;
	dti_tsc_ns = (double)(mono1 - dti_mono0) / (double)(tsc1 - dti_tsc0);
	dti_tsc1 = dti_tsc0;
	dti_mono1 = dti_mono0;
	/* Between 100 MHz and 20 GHz, or something is wrong. */
	if (dti_tsc_ns < 0.05 || dti_tsc_ns > 10)
		return;
	dti_tsc_span = (int64_t)(10e9 / dti_tsc_ns);
	dti_tsc_10ms = (uint64_t)(1e7 / dti_tsc_ns);
	dti_rate_tsc = tsc1;
	dti_tsc_pair(CLOCK_REALTIME, &dti_ref_tsc, &rt1);
	dti_ref_rt = (int64_t)rt1;
	atomic_store(&dti_tsc_mult, (uint64_t)(dti_tsc_ns * 4294967296.0));
	dti_tsc_ok = 1;
}

/* Start of a drain pass: a fresh reference pair, a better rate. */
void
dt_tsc_ref(void)
{
	uint64_t mono, tsc, rt;

	if (!dti_tsc_ok)
		return;
	dti_tsc_pair(CLOCK_REALTIME, &dti_ref_tsc, &rt);
	dti_ref_rt = (int64_t)rt;
	/*
	 * The rate moves by parts in ten million from one pass to the
	 * next: a busy drain (thousands of passes a second) refreshes it
	 * every 10 ms of ticks, not every pass.
	 */
	if (dti_ref_tsc - dti_rate_tsc < dti_tsc_10ms)
		return;
	dti_tsc_pair(CLOCK_MONOTONIC, &tsc, &mono);
	dti_rate_tsc = tsc;
	if (tsc > dti_tsc0 && mono > dti_mono0) {
		dti_tsc_ns = (double)(mono - dti_mono0) /
		    (double)(tsc - dti_tsc0);
		atomic_store(&dti_tsc_mult,
		    (uint64_t)(dti_tsc_ns * 4294967296.0));
		/* the hooks' durations at the rate records are read at */
		dt_ingest_sagg_rate();
	}
	/*
	 * Roll the baseline: start a new one every 100 ms, use it once it
	 * is that old, so the rate is that of the last 100 to 200 ms: long
	 * enough that two pairs' error (tens of ns) makes a rate error of a
	 * few in ten million, ns over a record drained 20 ms late; short
	 * enough to follow a slew that changes every few seconds.
	 */
	if (mono - dti_mono1 >= 100000000ULL) {
		if (dti_mono1 != dti_mono0) {
			dti_tsc0 = dti_tsc1;
			dti_mono0 = dti_mono1;
		}
		dti_tsc1 = tsc;
		dti_mono1 = mono;
	}
}

int
dt_tsc_ok(void)
{
	return dti_tsc_ok;
}

/* Within 10 s of the current reference, from a dtd that offered TSC. */
int
dt_tsc_near(uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - dti_ref_tsc);

	return dti_tsc_ok && d <= dti_tsc_span && d >= -dti_tsc_span;
}

int64_t
dt_tsc_realtime(uint64_t tsc)
{
	return dti_ref_rt + (int64_t)((double)(int64_t)(tsc - dti_ref_tsc) *
	    dti_tsc_ns);
}

uint64_t
dt_tsc_mult(void)
{
	return atomic_load(&dti_tsc_mult);
}
