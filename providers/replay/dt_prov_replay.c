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
 * The replay provider: dtd --replay FILE.  The file's probes are the
 * device's probes, under the file's provider names; its events go to
 * every open that enabled their probe, through the core's ring put, so
 * evtflags a client did not ask for are zeroed exactly as for live
 * events, and DTIOCGSTATS counts reads and drops as it always does.
 *
 * Each open replays the whole file from its first event on its own
 * cursor, so two clients (or two runs) see the same records.  The events
 * of the probes an open enabled go out in file order once all its pcbs
 * are started (DTIOCRECORD 1):
 *
 *   fast	all at once, from the last dtpv_start(); a ring that fills
 *		drops the rest as a live ring would (rings are
 *		--ring-size deep, 65536 by default).
 *   real	from a feeder thread per open, at the recorded intervals
 *		(dtev_tsp), counted from DTIOCRECORD 1.
 *   step	as fast; dtd adds the fault injection rule "read * short
 *		RECORD", so each read returns one record.
 *
 * A later DTIOCRECORD 1 goes on from where the open's cursor stopped.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_replay_load() / creation
 *	[K]	the core's configuration lock: every dtpv_* call holds it
 *	[o]	ro_mtx of the open
 *	[f]	the feeder thread's while ro_running, else [K]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_clock.h"
#include "dt_prov.h"
#include "dt_prov_replay.h"
#include "dt_replay_file.h"

static struct rp_file		 rp_file;	/* [I] */
static bool			 rp_strict;	/* [I] */
static enum dt_replay_pace	 rp_pace;	/* [I] */
static const char		*rp_path;	/* [I] */
static struct dt_provider	*rp_provs;	/* [I] one per name */
static size_t			 rp_nprovs;	/* [I] */

/* One open that enabled replayed probes. */
struct rp_open {
	struct rp_open		*ro_next;	/* [K] rp_opens */
	struct dt_softc		*ro_sc;		/* [I] */
	struct dt_pcb		**ro_pcbs;	/* [K] by pbn - 1; NULL: off */
	unsigned int		 ro_npcbs;	/* [K] */
	unsigned int		 ro_nstarted;	/* [K] */
	size_t			 ro_cursor;	/* [f] next item */
	bool			 ro_running;	/* [K] the feeder exists */
	pthread_t		 ro_thread;	/* [K] */
	pthread_mutex_t		 ro_mtx;
	pthread_cond_t		 ro_cv;		/* [o] ro_stop changed */
	bool			 ro_stop;	/* [o] feeder: leave */
};

static struct rp_open	*rp_opens;		/* [K] */

static int	rp_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	rp_start(struct dt_pcb *);
static void	rp_stop(struct dt_pcb *);
static int	rp_dealloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	rp_free(struct dt_pcb *);

int
dt_replay_load(const char *path, bool strict, enum dt_replay_pace pace,
    char *err, size_t errlen)
{
	FILE *fp;
	int error;

	if ((fp = fopen(path, "r")) == NULL) {
		error = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(error));
		return error;
	}
	error = rp_file_parse(fp, path, &rp_file, err, errlen);
	fclose(fp);
	rp_strict = strict;
	rp_pace = pace;
	rp_path = path;
	return error;
}

unsigned int
dt_replay_ncpus(void)
{
	return rp_file.rpf_maxcpu + 1;
}

void
dt_replay_unload(void)
{
	rp_file_free(&rp_file);
	free(rp_provs);
	rp_provs = NULL;
	rp_nprovs = 0;
}

/* The provider table entry for name, made on first use.  Init only. */
static const struct dt_provider *
rp_provider(const char *name)
{
	size_t i;

	for (i = 0; i < rp_nprovs; i++)
		if (strcmp(rp_provs[i].dtpv_name, name) == 0)
			return &rp_provs[i];
	/* rp_provs never moves once probes point at it: sized in init. */
	rp_provs[rp_nprovs].dtpv_name = name;
	rp_provs[rp_nprovs].dtpv_alloc = rp_alloc;
	rp_provs[rp_nprovs].dtpv_start = rp_start;
	rp_provs[rp_nprovs].dtpv_stop = rp_stop;
	rp_provs[rp_nprovs].dtpv_dealloc = rp_dealloc;
	rp_provs[rp_nprovs].dtpv_free = rp_free;
	return &rp_provs[rp_nprovs++];
}

static bool
rp_is(const struct dt_probe *dtp, const char *prov)
{
	return strcmp(dtp->dtp_prov->dtpv_name, prov) == 0;
}

int
dt_prov_replay_init(void)
{
	struct rp_probe *rpp;
	struct dt_probe *dtp;
	uint32_t i;
	unsigned int j;

	rp_provs = calloc(rp_file.rpf_nprobes, sizeof(*rp_provs));
	if (rp_provs == NULL)
		return -1;
	for (i = 0; i < rp_file.rpf_nprobes; i++) {
		rpp = &rp_file.rpf_probes[i];
		dtp = dt_dev_alloc_probe(rpp->rpp_func, rpp->rpp_name,
		    rp_provider(rpp->rpp_prov), rpp->rpp_nargs);
		if (dtp == NULL)
			return -1;
		for (j = 0; j < rpp->rpp_ntypes; j++)
			dtp->dtp_argtype[j] = rpp->rpp_types[j];
		/*
		 * What the recorded provider copies without a flag: entry
		 * arguments of syscall and kprobe need FUNCARGS, the rest
		 * (return values, tracepoint arguments) always travel.
		 */
		if ((rp_is(dtp, "syscall") || rp_is(dtp, "kprobe")) &&
		    strcmp(rpp->rpp_name, "entry") == 0)
			dtp->dtp_argsflag = DTEVT_FUNCARGS;
		/* dtd's syscall strings live in the kstack area. */
		dtp->dtp_strings = rp_is(dtp, "syscall");
	}
	return (int)rp_file.rpf_nprobes;
}

/* Whether the file listed this request (strict mode).  [I] */
static bool
rp_expected(const struct dtioc_req *dtrq, bool exact)
{
	const struct rp_enable *rpe;
	size_t i;

	for (i = 0; i < rp_file.rpf_nenables; i++) {
		rpe = &rp_file.rpf_enables[i];
		if (rpe->rpe_pbn == dtrq->dtrq_pbn && (!exact ||
		    (rpe->rpe_evtflags == dtrq->dtrq_evtflags &&
		    rpe->rpe_nsecs == dtrq->dtrq_nsecs)))
			return true;
	}
	return false;
}

static struct rp_open *
rp_open_get(struct dt_softc *sc)
{
	struct rp_open *ro;

	for (ro = rp_opens; ro != NULL; ro = ro->ro_next)
		if (ro->ro_sc == sc)
			return ro;
	if ((ro = calloc(1, sizeof(*ro))) == NULL)
		return NULL;
	ro->ro_pcbs = calloc(rp_file.rpf_nprobes, sizeof(*ro->ro_pcbs));
	if (ro->ro_pcbs == NULL) {
		free(ro);
		return NULL;
	}
	ro->ro_sc = sc;
	pthread_mutex_init(&ro->ro_mtx, NULL);
	pthread_cond_init(&ro->ro_cv, NULL);
	ro->ro_next = rp_opens;
	rp_opens = ro;
	return ro;
}

/* DTIOCPRBENABLE.  Under [K]. */
static int
rp_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	struct rp_open *ro;
	struct dt_pcb *dp;
	uint64_t flags = dtrq->dtrq_evtflags;
	bool timer = rp_is(dtp, "profile") || rp_is(dtp, "interval");

	if (rp_strict && !rp_expected(dtrq, true)) {
		fprintf(stderr, "dtd: replay %s: unexpected DTIOCPRBENABLE "
		    "pbn %u evtflags %#llx nsecs %llu: EINVAL\n", rp_path,
		    dtrq->dtrq_pbn, (unsigned long long)dtrq->dtrq_evtflags,
		    (unsigned long long)dtrq->dtrq_nsecs);
		return EINVAL;
	}
	/* dt(4)'s checks and masks, by the recorded provider's name. */
	if (timer) {
		if (dtrq->dtrq_nsecs < DT_TIMER_NSECS_MIN ||
		    dtrq->dtrq_nsecs > DT_TIMER_NSECS_MAX)
			return EINVAL;
		flags &= DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK;
	} else if (rp_is(dtp, "syscall"))
		flags &= DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK |
		    DTEVT_FUNCARGS | DTEVT_STRINGS;
	else if (!rp_is(dtp, "tracepoint"))
		flags &= DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK |
		    DTEVT_FUNCARGS;
	if ((ro = rp_open_get(sc)) == NULL)
		return ENOMEM;
	dp = dt_pcb_alloc(dtp, sc, flags, timer ? dtrq->dtrq_nsecs : 0, -1);
	if (dp == NULL)
		return ENOMEM;
	dp->dp_priv = ro;
	ro->ro_pcbs[dtp->dtp_pbn - 1] = dp;
	ro->ro_npcbs++;
	return 0;
}

/* DTIOCPRBDISABLE: nothing to undo, as dt(4); strict checks it.  [K] */
static int
rp_dealloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	(void)dtp;
	(void)sc;
	if (rp_strict && !rp_expected(dtrq, false)) {
		fprintf(stderr, "dtd: replay %s: unexpected DTIOCPRBDISABLE "
		    "pbn %u: EINVAL\n", rp_path, dtrq->dtrq_pbn);
		return EINVAL;
	}
	return 0;
}

/*
 * Put one item into ro's rings.  From rp_start() under [K], or from the
 * feeder inside rcu_read_lock() while the pcbs record.
 */
static void
rp_put(struct rp_open *ro, const struct rp_item *it)
{
	struct dt_pcb *dp = NULL;
	uint32_t i;

	if (it->rpi_kind == RP_EVENT) {
		dp = ro->ro_pcbs[it->rpi_ev.dtev_pbn - 1];
		if (dp != NULL)
			dt_pcb_ring_put(dp, it->rpi_ev.dtev_cpu, &it->rpi_ev);
		return;
	}
	/* Counters of the recording's device: once, on the first ring. */
	for (i = 0; i < rp_file.rpf_nprobes && dp == NULL; i++)
		dp = ro->ro_pcbs[i];
	if (it->rpi_dropevt)
		dt_pcb_count_dropevt(dp, 0, it->rpi_dropevt);
	if (it->rpi_skiptick)
		dt_pcb_count_skiptick(dp, 0, it->rpi_skiptick);
	if (it->rpi_recurevt)
		dt_pcb_count_recurevt(dp, 0, it->rpi_recurevt);
}

static uint64_t
rp_tsp_ns(const struct rp_item *it)
{
	return (uint64_t)it->rpi_ev.dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)it->rpi_ev.dtev_tsp.tv_nsec;
}

/*
 * The feeder of --replay-pace real: each item at its recorded distance
 * from the first, on CLOCK_MONOTONIC from the start.  Leaves at the end
 * of the file or when rp_stop() says so; never takes [K].
 */
static void *
rp_feeder(void *arg)
{
	struct rp_open *ro = arg;
	const struct rp_item *it;
	uint64_t t0 = dt_clock_ns(CLOCK_MONOTONIC), base = 0, at, ts;
	struct timespec dl;
	bool stop = false, based = false;

	rcu_register_thread();
	while (!stop && ro->ro_cursor < rp_file.rpf_nitems) {
		it = &rp_file.rpf_items[ro->ro_cursor];
		if (it->rpi_kind == RP_EVENT) {
			ts = rp_tsp_ns(it);
			if (!based) {
				base = ts;
				based = true;
			}
			at = t0 + (ts > base ? ts - base : 0);
			dl = dt_clock_ts(at);
			pthread_mutex_lock(&ro->ro_mtx);
			while (!ro->ro_stop && pthread_cond_timedwait(
			    &ro->ro_cv, &ro->ro_mtx, &dl) != ETIMEDOUT)
				continue;
			pthread_mutex_unlock(&ro->ro_mtx);
		}
		/*
		 * Look at ro_stop inside the read-side section: once
		 * rp_stop() set it, the core's grace period after the
		 * unlink waits for a put already under way.
		 */
		rcu_read_lock();
		pthread_mutex_lock(&ro->ro_mtx);
		stop = ro->ro_stop;
		pthread_mutex_unlock(&ro->ro_mtx);
		if (!stop) {
			rp_put(ro, it);
			ro->ro_cursor++;
		}
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * DTIOCRECORD 1, once per pcb after all of the open's are linked: at
 * the last one, replay.  Under [K].
 */
static void
rp_start(struct dt_pcb *dp)
{
	struct rp_open *ro = dp->dp_priv;
	pthread_condattr_t attr;

	if (++ro->ro_nstarted < ro->ro_npcbs)
		return;
	if (rp_pace != DT_REPLAY_REAL) {
		for (; ro->ro_cursor < rp_file.rpf_nitems; ro->ro_cursor++)
			rp_put(ro, &rp_file.rpf_items[ro->ro_cursor]);
		return;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_destroy(&ro->ro_cv);
	pthread_cond_init(&ro->ro_cv, &attr);
	pthread_condattr_destroy(&attr);
	ro->ro_stop = false;
	if (pthread_create(&ro->ro_thread, NULL, rp_feeder, ro) == 0)
		ro->ro_running = true;
	else
		fprintf(stderr, "dtd: replay: no feeder thread: this open "
		    "gets no event\n");
}

/*
 * DTIOCRECORD 0 or close, once per pcb before the unlink: at the first,
 * stop the feeder.  Waiting for it is bounded by one ring put: it sleeps
 * on ro_cv, which we signal, and never takes [K].  Under [K].
 */
static void
rp_stop(struct dt_pcb *dp)
{
	struct rp_open *ro = dp->dp_priv;

	if (ro->ro_nstarted-- != ro->ro_npcbs || !ro->ro_running)
		return;
	pthread_mutex_lock(&ro->ro_mtx);
	ro->ro_stop = true;
	pthread_cond_signal(&ro->ro_cv);
	pthread_mutex_unlock(&ro->ro_mtx);
	pthread_join(ro->ro_thread, NULL);
	ro->ro_running = false;
}

/* Close, after the grace period, per pcb.  Under [K]. */
static void
rp_free(struct dt_pcb *dp)
{
	struct rp_open *ro = dp->dp_priv, **rop;

	ro->ro_pcbs[dp->dp_dtp->dtp_pbn - 1] = NULL;
	dp->dp_priv = NULL;
	if (--ro->ro_npcbs > 0)
		return;
	for (rop = &rp_opens; *rop != NULL; rop = &(*rop)->ro_next) {
		if (*rop == ro) {
			*rop = ro->ro_next;
			break;
		}
	}
	pthread_cond_destroy(&ro->ro_cv);
	pthread_mutex_destroy(&ro->ro_mtx);
	free(ro->ro_pcbs);
	free(ro);
}
