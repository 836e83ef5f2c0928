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
 * Fault injection (dtd --inject, --inject-file; the rule syntax is in
 * dtd(8)): the test bench's way to make the device fail as a kernel
 * might, so that a client's error paths can be tested in CI.
 *
 * Every rule fires by a count, never by time, so a test is repeatable:
 * opens are counted over dtd since the rules in force last changed;
 * ioctls (per command and in all), reads and events are counted per
 * open.  An open takes the rule set in force when it was made and keeps
 * it for its life, so that a change of rules never shifts the counts of
 * an open in progress; a changed --inject-file is noticed at the next
 * open(2), which is deterministic for a client that changes the file
 * and then opens (no signal, no wait).
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_inject_open()
 *	[a]	atomic operations
 */
#ifndef DT_INJECT_H
#define DT_INJECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dt_inj_set;

#define DT_INJ_NCMD	16	/* ioctl numbers 'D' 0..15 counted apart */

/* What an open's rules may do, so the event path looks at one word. */
#define DT_INJ_IOCTL	0x01
#define DT_INJ_READ	0x02
#define DT_INJ_EVENT	0x04

/* One open's share of the injection: its rules and its counts. */
struct dt_inj_open {
	struct dt_inj_set	*dio_set;	/* [I] NULL: no rule */
	unsigned int		 dio_ops;	/* [I] DT_INJ_* its rules use */
	_Atomic uint64_t	 dio_ioctl[DT_INJ_NCMD]; /* [a] by number */
	_Atomic uint64_t	 dio_ioctls;	/* [a] every ioctl */
	_Atomic uint64_t	 dio_reads;	/* [a] reads that reached us */
	_Atomic uint64_t	 dio_events;	/* [a] events offered */
};

/* What dt_inject_event() decided for one event. */
enum dt_inj_verdict {
	DT_INJ_PUT,		/* store it (after *nskip skipped ticks) */
	DT_INJ_DROP,		/* lose it as a full ring does: dropevt */
	DT_INJ_RECUR,		/* lose it as a recursive event: recurevt */
};

/*
 * Check rules (--inject's text) without using them: 0, or EINVAL with a
 * message in err.  Any thread.
 */
int	dt_inject_check(const char *rules, char *err, size_t errlen);

/*
 * From dt_dev_init(), once, before any open: the rules of --inject
 * (NULL: none) and the file of --inject-file (NULL: none), both kept by
 * reference.  0, or EINVAL (message on stderr).
 */
int	dt_inject_init(const char *rules, const char *path);
void	dt_inject_fini(void);

/*
 * An open(2): count it, re-read the file if any, and decide.  0 with
 * dio set up (its set referenced), or the errno the open fails with
 * (EPERM for "allowdt 0" as dt(4) answers with kern.allowdt = 0, or a
 * rule's error), dio then untouched.  Any thread.
 */
int	dt_inject_open(struct dt_inj_open *dio);
/* Let go of dio's set.  dt_dev_close() only. */
void	dt_inject_close(struct dt_inj_open *dio);

/*
 * An ioctl of number nr ('D' nr) on the open: 0, or the errno it fails
 * with.  Any thread.
 */
int	dt_inject_ioctl(struct dt_inj_open *dio, unsigned int nr);

/*
 * A read of *resid bytes on the open: 0 (*resid perhaps made smaller: a
 * short read), or the errno it fails with.  Any thread.
 */
int	dt_inject_read(struct dt_inj_open *dio, size_t *resid);

/*
 * An event offered to the open's rings: what to do with it, and in
 * *nskip the skipped ticks to count first.  Lock-free; event path.
 */
enum dt_inj_verdict	dt_inject_event(struct dt_inj_open *dio,
			    uint64_t *nskip);

#endif /* DT_INJECT_H */
