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
 * The device core: dt(4)'s dt_dev.c without a kernel.  Opens, ioctls and
 * reads arrive from a front end (CUSE, FUSE-file) or a test; events
 * arrive from providers through dt_probe.c.  The ioctls are handled in
 * dt_dev_ioctl.c, the reads in dt_dev_read.c.
 *
 * Locks used to protect the globals in this file:
 *	[I]	immutable after dt_dev_init()
 *	[K]	dt_dev_lock
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_agg.h"
#include "dt_proc.h"
#include "dt_softc.h"

pthread_mutex_t		 dt_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, dt_softc) dt_softcs =	/* [K] every open */
    TAILQ_HEAD_INITIALIZER(dt_softcs);
struct dt_dev_conf	 dt_conf;		/* [I] */
bool			 dt_strict;		/* [I] */
enum dt_abi		 dt_abi;		/* [I] */

/* Registration order is pbn order (design decision 5). */
static int (*const dt_prov_inits[])(void) = {
	dt_prov_profile_init,
	dt_prov_interval_init,
	dt_prov_syscall_init,
	dt_prov_tracepoint_init,
	dt_prov_kprobe_init,
};

/* The wakeup thread's call: serve sc's parked reads under its lock. */
static void
dt_softc_wakeup(struct dt_softc *sc)
{
	pthread_mutex_lock(&sc->ds_mtx);
	dt_softc_serve(sc);
	pthread_mutex_unlock(&sc->ds_mtx);
}

size_t
dt_dev_recsize(void)
{
	return dt_abi == DT_ABI_1_14 ? sizeof(struct dt14_evt) :
	    sizeof(struct dt_evt);
}

int
dt_dev_init(const struct dt_dev_conf *conf)
{
	size_t i;
	long n;
	int error;

	dt_conf = *conf;
	dt_strict = conf->dcf_strict;
	dt_abi = (enum dt_abi)conf->dcf_abi;
	if (dt_abi != DT_ABI_1_48 && dt_abi != DT_ABI_1_14)
		return EINVAL;
	if (dt_conf.dcf_ncpus == 0) {
		n = sysconf(_SC_NPROCESSORS_CONF);
		dt_conf.dcf_ncpus = n > 0 ? (unsigned int)n : 1;
	}
	if (dt_conf.dcf_ringsize == 0)
		dt_conf.dcf_ringsize = DT_RINGSIZE_DEFAULT;
	if (dt_conf.dcf_ringsize < 2 || dt_conf.dcf_read_done == NULL)
		return EINVAL;

	if (dt_conf.dcf_providers != NULL) {
		if (dt_conf.dcf_providers() < 0)
			return errno ? errno : ENOMEM;
	} else {
		for (i = 0; i < sizeof(dt_prov_inits) / sizeof(dt_prov_inits[0]);
		    i++)
			if (dt_prov_inits[i]() < 0)
				return errno ? errno : ENOMEM;
	}

	dt_limit_init(dt_conf.dcf_maxmem, dt_conf.dcf_maxopens);
	if ((error = dt_inject_init(dt_conf.dcf_inject,
	    dt_conf.dcf_inject_file)) != 0)
		return error;
	return dt_wakeup_start(dt_softc_wakeup);
}

void
dt_dev_fini(void)
{
	const struct dt_provider *dtpv, *seen[16];
	size_t nseen = 0, j;
	uint32_t pbn;

	pthread_mutex_lock(&dt_dev_lock);
	while (!TAILQ_EMPTY(&dt_softcs)) {
		struct dt_softc *sc = TAILQ_FIRST(&dt_softcs);

		pthread_mutex_unlock(&dt_dev_lock);
		dt_dev_close(sc);
		pthread_mutex_lock(&dt_dev_lock);
	}
	pthread_mutex_unlock(&dt_dev_lock);

	dt_wakeup_end();
	dt_seq_fini();

	for (pbn = 1; pbn <= dt_dev_nprobes(); pbn++) {
		dtpv = dt_dev_probe(pbn)->dtp_prov;
		for (j = 0; j < nseen && seen[j] != dtpv; j++)
			continue;
		if (j < nseen || nseen == sizeof(seen) / sizeof(seen[0]))
			continue;
		seen[nseen++] = dtpv;
		if (dtpv->dtpv_fini != NULL)
			dtpv->dtpv_fini();
	}
	dt_probe_free_all();
	dt_inject_fini();
}

unsigned int
dt_dev_ncpus(void)
{
	return dt_conf.dcf_ncpus;
}

unsigned int
dt_dev_ringsize(void)
{
	return dt_conf.dcf_ringsize;
}

unsigned int
dt_dev_lossless_room(void)
{
	struct dt_softc *sc;
	unsigned int i, r, room = UINT_MAX;

	if (pthread_mutex_trylock(&dt_dev_lock) != 0)
		return UINT_MAX;
	TAILQ_FOREACH(sc, &dt_softcs, ds_entry)
		for (i = 0; i < sc->ds_nrings; i++)
			if ((r = dt_ring_room(&sc->ds_rings[i])) < room)
				room = r;
	pthread_mutex_unlock(&dt_dev_lock);
	return room;
}

bool
dt_dev_all_pressed(void)
{
	struct dt_softc *sc;
	unsigned int i, nrec = 0;
	bool all = true;

	if (pthread_mutex_trylock(&dt_dev_lock) != 0)
		return false;
	TAILQ_FOREACH(sc, &dt_softcs, ds_entry) {
		if (!sc->ds_recording)
			continue;
		nrec++;
		for (i = 0; i < sc->ds_nrings; i++)
			if (dt_ring_is_pressed(&sc->ds_rings[i]))
				break;
		if (i == sc->ds_nrings) {
			all = false;
			break;
		}
	}
	pthread_mutex_unlock(&dt_dev_lock);
	return all && nrec > 0;
}

/* The bytes of one open's rings, what the memory cap counts. */
static uint64_t
dt_dev_ringmem(void)
{
	return (uint64_t)dt_conf.dcf_ncpus * dt_conf.dcf_ringsize *
	    sizeof(struct dt_evt);
}

/*
 * The process (tgid) of thread tid, from /proc; 0 when unknown (a
 * caller in another pid namespace, or gone).
 */
static pid_t
dt_dev_tgid(pid_t tid)
{
	char path[64], buf[2048], *p;
	long v;

	if (tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (dt_proc_read(path, buf, sizeof(buf)) < 0 ||
	    (p = strstr(buf, "\nTgid:")) == NULL)
		return 0;
	v = strtol(p + 6, NULL, 10);
	return v > 0 ? (pid_t)v : 0;
}

int
dt_dev_open(const struct dt_cred *cr, struct dt_softc **scp)
{
	struct dt_inj_open inj = { .dio_set = NULL };
	struct dt_softc *sc;
	unsigned int i;
	int error;

	/* Fault injection first: dt(4) checks kern.allowdt before all. */
	if ((error = dt_inject_open(&inj)) != 0)
		return error;
	if ((error = dt_limit_open(cr, dt_dev_ringmem())) != 0) {
		dt_inject_close(&inj);
		return error;
	}
	sc = calloc(1, sizeof(*sc) + dt_conf.dcf_ncpus * sizeof(sc->ds_rings[0]));
	if (sc == NULL) {
		dt_limit_close(cr, dt_dev_ringmem());
		dt_inject_close(&inj);
		return ENOMEM;
	}
	sc->ds_inj.dio_set = inj.dio_set;
	sc->ds_inj.dio_ops = inj.dio_ops;
	sc->ds_cred = *cr;
	/* dt_dev.c 1.14 never recorded the tracing program's own events. */
	if (dt_abi == DT_ABI_1_14)
		sc->ds_tracer = dt_dev_tgid(cr->dc_pid);
	sc->ds_nrings = dt_conf.dcf_ncpus;
	sc->ds_parkedtail = &sc->ds_parked;
	pthread_mutex_init(&sc->ds_mtx, NULL);
	for (i = 0; i < sc->ds_nrings; i++) {
		if (dt_ring_init(&sc->ds_rings[i], dt_conf.dcf_ringsize)) {
			while (i-- > 0)
				dt_ring_fini(&sc->ds_rings[i]);
			dt_inject_close(&sc->ds_inj);
			free(sc);
			dt_limit_close(cr, dt_dev_ringmem());
			return ENOMEM;
		}
	}

	pthread_mutex_lock(&dt_dev_lock);
	TAILQ_INSERT_TAIL(&dt_softcs, sc, ds_entry);
	pthread_mutex_unlock(&dt_dev_lock);
	*scp = sc;
	return 0;
}

/* DTIOCRECORD 1: link every pcb where producers find it.  Under [K]. */
void
dt_record_start(struct dt_softc *sc)
{
	struct dt_pcb *dp;
	struct dt_probe *dtp;

	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext) {
		dtp = dp->dp_dtp;
		if (dp->dp_agg == NULL)
			atomic_fetch_add(&dtp->dtp_ringpcbs, 1);
		/*
		 * A source counts it again only if dtpv_start says so; a
		 * tree's count is counted from the DTIOCPRBAGG that asked,
		 * and no other open's sampled event may reach it between;
		 * a tracepoint's tree events (DTEVT_TREE) come from its
		 * own.  A syscall probe's (DTEVT_LAUNCHED too, dtvar.h)
		 * add the kernel's to the hooks' stream, which it keeps.
		 */
		atomic_store(&dp->dp_srccount, (dp->dp_agg != NULL &&
		    (dp->dp_agg->das_req.dtas_vflags & DTF_F_TREE) != 0) ||
		    (dp->dp_evtflags & (DTEVT_TREE | DTEVT_LAUNCHED)) ==
		    DTEVT_TREE);
		atomic_store(&dp->dp_srcuntil, 0);
		atomic_store(&dp->dp_knot, false);
		cds_list_add_tail_rcu(&dp->dp_pnext, &dtp->dtp_pcbs);
		atomic_fetch_or(&dtp->dtp_evtflags, dp->dp_evtflags);
		atomic_fetch_add(&dtp->dtp_recording, 1);
	}
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp->dtp_prov->dtpv_start != NULL)
			dp->dp_dtp->dtp_prov->dtpv_start(dp);
	sc->ds_recording = 1;
}

/* Take sc's pcbs off their probes' lists.  Under [K] and [s]. */
static void
dt_record_unlink(struct dt_softc *sc)
{
	struct dt_pcb *dp, *odp;
	struct dt_probe *dtp;
	uint64_t flags;

	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext) {
		dtp = dp->dp_dtp;
		cds_list_del_rcu(&dp->dp_pnext);
		atomic_fetch_sub(&dtp->dtp_recording, 1);
		if (dp->dp_agg == NULL)
			atomic_fetch_sub(&dtp->dtp_ringpcbs, 1);
		flags = 0;
		cds_list_for_each_entry(odp, &dtp->dtp_pcbs, dp_pnext)
			flags |= odp->dp_evtflags;
		atomic_store(&dtp->dtp_evtflags, flags);
	}
}

/*
 * DTIOCRECORD 0: unlink every pcb and wait out a grace period, so no
 * event reaches sc's rings once this returns.  Under [K].
 */
void
dt_record_stop(struct dt_softc *sc)
{
	struct dt_pcb *dp;

	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp->dtp_prov->dtpv_stop != NULL)
			dp->dp_dtp->dtp_prov->dtpv_stop(dp);
	/*
	 * What the sequencer holds for sc and happened before the stop
	 * reaches sc's rings, in order, before its pcbs leave the probes.
	 */
	dt_seq_detach(sc, dt_record_unlink);
	synchronize_rcu();
	/* A producer that saw a pcb before the unlink put for it since. */
	dt_seq_flush(sc);
	sc->ds_recording = 0;
}

bool
dt_dev_lat_other(const struct dt_softc *sc)
{
	const struct dt_softc *sc2;
	const struct dt_aggtab *tab;
	uint32_t i;

	TAILQ_FOREACH(sc2, &dt_softcs, ds_entry) {
		tab = atomic_load_explicit(&sc2->ds_agg, memory_order_relaxed);
		if (sc2 == sc || tab == NULL)
			continue;
		for (i = 0; i < tab->dat_nspecs; i++)
			if (tab->dat_specs[i]->das_req.dtas_vfield == DTF_LAT)
				return true;
	}
	return false;
}

void
dt_dev_close(struct dt_softc *sc)
{
	struct dt_pcb *dp, *next;
	struct dt_parked *dpk;
	unsigned int i;

	pthread_mutex_lock(&dt_dev_lock);
	if (sc->ds_recording)
		dt_record_stop(sc);
	/* O(1): a user holding many opens must not make closes quadratic. */
	TAILQ_REMOVE(&dt_softcs, sc, ds_entry);
	/* dt_record_stop() waited out the producers that saw our pcbs. */
	for (dp = sc->ds_pcbs; dp != NULL; dp = next) {
		next = dp->dp_snext;
		if (dp->dp_dtp->dtp_prov->dtpv_free != NULL)
			dp->dp_dtp->dtp_prov->dtpv_free(dp);
		free(dp->dp_filter);
		free(dp);
	}
	sc->ds_pcbs = NULL;
	dt_agg_free(sc);
	pthread_mutex_unlock(&dt_dev_lock);

	dt_wakeup_forget(sc);

	pthread_mutex_lock(&sc->ds_mtx);
	sc->ds_closing = 1;
	while ((dpk = sc->ds_parked) != NULL) {
		sc->ds_parked = dpk->dpk_next;
		dt_conf.dcf_read_done(dpk->dpk_token, NULL, 0, EIO);
		free(dpk);
	}
	if (sc->ds_pollh != NULL) {
		dt_conf.dcf_poll_done(sc->ds_pollh, false);
		sc->ds_pollh = NULL;
	}
	pthread_mutex_unlock(&sc->ds_mtx);

	for (i = 0; i < sc->ds_nrings; i++)
		dt_ring_fini(&sc->ds_rings[i]);
	pthread_mutex_destroy(&sc->ds_mtx);
	dt_limit_close(&sc->ds_cred, dt_dev_ringmem());
	if (sc->ds_buf != NULL) {
		dt_limit_uncharge(&sc->ds_cred, DT_READ_MAX);
		free(sc->ds_buf);
	}
	dt_inject_close(&sc->ds_inj);
	free(sc);
}
