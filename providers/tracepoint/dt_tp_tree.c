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
 * One process tree's tracepoint events (DTEVT_TREE, dtvar.h): a pcb of
 * its own perf event, opened on the tree's root, inherited by what it
 * forks, so the kernel selects the tree's records and nothing else
 * reaches dtd for it.  btrace -c asks for it: a command's events on a
 * busy machine are then a few among the machine's no longer.
 *
 * The pcb takes no record of the probe's shared event (dp_srccount, set
 * by the core before it is linked), and the shared event is not opened
 * for it.  Its own event's records go to it alone, and only while it
 * records (tt_live): a record the reader drains after the stop (the
 * close's last drain) reaches no pcb, as the shared event's records do
 * not reach a stopped pcb either, nor a later start of the same pcb,
 * which has an event of its own.  The stop clears tt_live before the
 * core's grace period, so a callback that saw it set still has its pcb.
 * The state the callback reads is freed by the reader once done with
 * the event (dt_tpev_open_task()'s release).
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tp_tree_start()
 *	[K]	the core's configuration lock
 *	[R]	the perf reader thread, inside rcu_read_lock()
 */
#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dev/dt/dtvar.h>

#include "dt_prov.h"
#include "dt_tp_filt.h"
#include "dt_tp_perf.h"
#include "dt_tp_task.h"
#include "dt_tp_var.h"

struct dt_tp_tree {
	struct dt_tp_tree	*tt_next;	/* [K] on dt_tp_trees */
	struct dt_pcb		*tt_dp;		/* [I] used while tt_live */
	_Atomic bool		 tt_live;	/* [a] dt_tp_tree_stop() not yet */
	const struct dt_tp_probe *tt_tpp;	/* [I] */
	struct dt_tp_src	*tt_src;	/* [I] */
	struct dt_tpev		*tt_ev;		/* [K] NULL once closed */
};

static struct dt_tp_tree *dt_tp_trees;		/* [K] open ones */
static int dt_tp_tree_lasterr;			/* [K] said once */

int
dt_tp_tree_ok(const struct dt_tp_probe *tpp, const struct dt_softc *sc)
{
	if (dt_sc_tree(sc) == 0)
		return EINVAL;
	/* on__cpu's switch records are per CPU: no task's to inherit */
	if (tpp->tpp_nsrcs != 1 || tpp->tpp_switchin)
		return EOPNOTSUPP;
	return 0;
}

/* dt_tpev_fn: a record of tt's event.  [R]. */
static void
dt_tp_tree_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_tp_tree *tt = arg;
	struct dt_pcb *dp;
	struct dt_evt ev, evs;
	bool strings;

	/* as the shared event's (dt_tp_sample_cb()), to tt's pcb alone */
	if (!atomic_load(&tt->tt_live))
		dp = NULL;
	else
		dp = tt->tt_dp;
	if (s->ts_lost > 0) {
		if (dp != NULL)
			dt_pcb_count_dropevt(dp, s->ts_cpu, s->ts_lost);
		return;
	}
	/* names feed the cache every event's comm comes from */
	if (dt_tp_sample_note(tt->tt_src, s) || s->ts_swin || dp == NULL)
		return;
	if (!dt_tp_build(tt->tt_tpp, tt->tt_src, s, dp->dp_evtflags, &ev,
	    &evs, &strings))
		return;
	dt_seq_put(dt_tpev_source(), dp, s->ts_cpu, strings ? &evs : &ev);
}

static void
dt_tp_tree_release(void *arg)
{
	free(arg);
}

void
dt_tp_tree_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp)
{
	struct dt_tp_src *src = tpp->tpp_srcs[0];
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_TRACEPOINT,
	    .tpm_config = (uint64_t)src->tps_fmt.dtfm_id };
	struct dt_tp_tree *tt;
	struct dt_tpev *ev;
	char *filt;
	int error;

	if ((tt = calloc(1, sizeof(*tt))) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	tt->tt_dp = dp;
	tt->tt_tpp = tpp;
	tt->tt_src = src;
	/* tt is the event's from here on: after a failure, gone */
	ev = dt_tpev_open_task(&pmu, dp->dp_evtflags &
	    (DTEVT_KSTACK | DTEVT_USTACK), dt_sc_tree(dp->dp_sc),
	    dt_tp_tree_cb, tt, dt_tp_tree_release, &error);
	if (ev == NULL)
		goto fail;
	tt->tt_ev = ev;
	/* before the root's exec enables the event: no record yet */
	atomic_store(&tt->tt_live, true);
	/*
	 * The pcb's own filter, where the kernel takes it whole: dtd
	 * and the reader apply it again, so one it refuses keeps more
	 * records, never fewer events.
	 */
	if ((filt = dt_tp_filt_pcb(src, dp, "", 0)) != NULL) {
		if (filt[0] != '\0')
			(void)dt_tpev_filter(tt->tt_ev, filt);
		free(filt);
	}
	tt->tt_next = dt_tp_trees;
	dt_tp_trees = tt;
	return;
fail:
	if (error != dt_tp_tree_lasterr)
		fprintf(stderr, "dtd: tracepoint: %s:%s: cannot open for the "
		    "tree of %d: %s\n", src->tps_sys, src->tps_event,
		    (int)dt_sc_tree(dp->dp_sc), strerror(error));
	dt_tp_tree_lasterr = error;
}

void
dt_tp_tree_stop(struct dt_pcb *dp)
{
	struct dt_tp_tree **ttp, *tt;

	for (ttp = &dt_tp_trees; (tt = *ttp) != NULL; ttp = &tt->tt_next)
		if (tt->tt_dp == dp) {
			*ttp = tt->tt_next;
			atomic_store(&tt->tt_live, false);
			/* the reader drains it, then frees it and tt */
			dt_tpev_close(tt->tt_ev);
			return;
		}
}
