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
 * A clock as one 64-bit count of nanoseconds, the form dtd compares and
 * subtracts times in (deadlines, rate limits, TSC calibration).  Any
 * thread, any context clock_gettime(2) allows.
 */
#ifndef DT_CLOCK_H
#define DT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
dt_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * clk - base, read as tightly as user space can: base, clk, base again,
 * the tightest of eight tries, clk's reading set against the middle of
 * base's two.  Two reads in a row would put any delay between them (a
 * preemption, a descheduled vCPU, a sanitizer's interceptor) into the
 * offset, and every stamp converted with it would carry that delay: a
 * kernel event stamped on one clock and a tracee's on another, a few
 * hundred ns apart, would swap.  Error: half the tightest window, tens of
 * ns.  Any thread.
 */
static inline int64_t
dt_clock_offset(clockid_t clk, clockid_t base)
{
	uint64_t a, b, t, best = UINT64_MAX;
	int64_t off = 0;
	int i;

	for (i = 0; i < 8; i++) {
		a = dt_clock_ns(base);
		t = dt_clock_ns(clk);
		b = dt_clock_ns(base);
		if (b < a || b - a >= best)
			continue;
		best = b - a;
		off = (int64_t)(t - (a + (b - a) / 2));
	}
	if (best == UINT64_MAX)
		off = (int64_t)(dt_clock_ns(clk) - dt_clock_ns(base));
	return off;
}

/* The same count back as a timespec: a deadline for a wait, a stamp. */
static inline struct timespec
dt_clock_ts(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / 1000000000ULL);
	ts.tv_nsec = (long)(ns % 1000000000ULL);
	return ts;
}

#endif /* DT_CLOCK_H */
