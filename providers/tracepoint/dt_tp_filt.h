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
 * The kernel's filter of a Linux event (dt_tp_filt.c).  All under the
 * core's configuration lock, from the provider's dtpv_start/dtpv_stop.
 */
#ifndef DT_TP_FILT_H
#define DT_TP_FILT_H

#include <stdbool.h>

#include "dt_prov.h"

struct dt_tp_src;

/*
 * The ftrace filter of src's recording pcbs but skip (malloc'd), or
 * NULL for none: one of them keeps every event, or nothing of theirs
 * translates.
 */
char	*dt_tp_filt_build(struct dt_tp_src *src, const struct dt_pcb *skip);

/*
 * fs (dt_prov.h) in ftrace's words (malloc'd), its arguments src's
 * fields; NULL when it keeps every event or does not fit a filter.
 * USERDT_TEST_KFILTER=refuse makes it one the kernel refuses.
 */
char	*dt_tp_filt_expr(const struct dt_fsrc *fs, const struct dt_tp_src *src);

/*
 * The ftrace filter (malloc'd) under which src's records of a probe are
 * exactly dp's events, own ("" for none) being the probe's own filter
 * (its records that are events); NULL when dp's filter does not
 * translate whole (dt_fsrc_of_pcb()'s fs_loose) or does not fit.  in
 * (0: none) is the process whose events alone the kernel gives the
 * filter (per-task events on its threads): its pid is then known.
 */
char	*dt_tp_filt_pcb(struct dt_tp_src *src, const struct dt_pcb *dp,
	    const char *own, pid_t in);

/*
 * The ftrace filter (malloc'd) of dp's filter alone, what ftrace cannot
 * compare taken as true: it keeps at least dp's events, for an event
 * of dp's own (dt_tp_pid.c), whose records dtd filters again.  NULL:
 * it would keep every record, or does not fit; none for sched_switch.
 */
char	*dt_tp_filt_own(struct dt_tp_src *src, const struct dt_pcb *dp);

/* Whether ftrace compares t (a tid, a comm) exactly as dtd does. */
bool	dt_tp_filt_task(const struct dtioc_filter_term *t);

/*
 * Whether src's open event must be reopened for want (NULL: none): its
 * filter, which the kernel will not replace, keeps less than want.
 * Never after a stop (stopping), whose filter keeps no more than the
 * one set.
 */
bool	dt_tp_filt_stale(const struct dt_tp_src *src, const char *want,
	    bool stopping);

/*
 * Set want (taken, freed here) on src's open event if it has no filter
 * yet; where the kernel refuses it, the event stays unfiltered (said
 * once per cause).
 */
void	dt_tp_filt_apply(struct dt_tp_src *src, char *want);

/* src's event was closed or reopened: it has no filter. */
void	dt_tp_filt_reset(struct dt_tp_src *src);

#endif /* DT_TP_FILT_H */
