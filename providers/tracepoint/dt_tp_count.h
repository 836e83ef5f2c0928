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
 * Counts in the kernel (issue 22): a pcb whose aggregations are count()s
 * keyed by nothing but the CPU and the probe, and whose filter the
 * kernel evaluates whole, needs no event, only how many there were on
 * each CPU.  A counting perf event per CPU (no sample, no buffer, no
 * reader) with the pcb's own ftrace filter gives that exactly at any
 * rate, where a sampled event's buffer fills and drops beside other
 * work; bpftrace's count() in a map is as exact.  dtd reads the
 * counters at each DTIOCAGGREAD of the pcb's open and at its stop
 * (dt_aggctr in dt_prov.h).  All under the core's configuration lock,
 * from the provider's dtpv_start/dtpv_stop, but dt_tpcnt's sync.
 */
#ifndef DT_TP_COUNT_H
#define DT_TP_COUNT_H

#include "dt_prov.h"

struct dt_tp_probe;
struct dt_tp_src;
struct dt_tpcnt;

/*
 * Count dp's events of tpp, fed by src, in the kernel if that can be
 * exact: sets dp_srccount and registers the counters, whose events then
 * never reach dtd for dp.  false (nothing done) where it cannot: dp
 * folds other than counts, tpp's records are not one event each, dp's
 * filter does not translate whole, the kernel refused; dp's events then
 * come through src's sampled event as before.  USERDT_KCOUNT=0 turns it
 * off, for comparisons.
 */
bool	dt_tpcnt_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp,
	    struct dt_tp_src *src);

/*
 * dp stops: its counters are read a last time and closed; dp_srccount
 * stays set until dp records again (dt_record_start() clears it).  No-op
 * for a pcb dt_tpcnt_start() refused.
 */
void	dt_tpcnt_stop(struct dt_pcb *dp);

/* USERDT_KCOUNT=0: no count in the kernel, for comparisons.  Any thread. */
bool	dt_tpcnt_off(void);

/*
 * A tree's count (DTF_F_TREE, dtpv_treecount): dp's events of tpp made
 * by pid from its next exec on and by all it forks from then, counted
 * by one perf counter that those processes inherit, opened now, before
 * recording, so that a refusal is the client's to hear.  0, ENOMEM or
 * EOPNOTSUPP (as dt_tpcnt_start() refuses, or the kernel).  The counter
 * hangs on dp_priv: dt_tpcnt_start() and dt_tpcnt_stop() then start and
 * stop it, and dt_tpcnt_free(), at the pcb's end, closes it.
 */
int	dt_tpcnt_tree(struct dt_pcb *dp, const struct dt_tp_probe *tpp,
	    struct dt_tp_src *src, pid_t pid);
void	dt_tpcnt_free(struct dt_pcb *dp);

#endif /* DT_TP_COUNT_H */
