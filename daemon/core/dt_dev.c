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
 * arrive from providers through dt_probe.c.
 *
 * Locks used to protect the globals in this file:
 *	[I]	immutable after dt_dev_init()
 *	[K]	dt_dev_lock
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_agg.h"
#include "dt_proc.h"
#include "dt_softc.h"

static pthread_mutex_t	 dt_dev_lock = PTHREAD_MUTEX_INITIALIZER;
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

/*
 * The canonical (Linux-encoded) commands and their argument sizes.  An
 * OpenBSD-encoded number differs only by swapped direction bits.
 */
struct dt_ioctl_ent {
	unsigned long	cmd;
	size_t		size;
};

static const struct dt_ioctl_ent dt_ioctls[] = {
	{ DTIOCGPLIST,		sizeof(struct dtioc_probe) },
	{ DTIOCGSTATS,		sizeof(struct dtioc_stat) },
	{ DTIOCRECORD,		sizeof(int) },
	{ DTIOCPRBENABLE,	sizeof(struct dtioc_req) },
	{ DTIOCPRBDISABLE,	sizeof(struct dtioc_req) },
	{ DTIOCGARGS,		sizeof(struct dtioc_arg) },
	{ DTIOCRDVNODE,		sizeof(struct dtioc_rdvn) },
	/* userdt's extensions (dtvar.h) */
	{ DTIOCPRBFILTER,	sizeof(struct dtioc_filter) },
	{ DTIOCGSTATSX,		sizeof(struct dtioc_statx) },
	{ DTIOCPRBAGG,		sizeof(struct dtioc_aggspec) },
	{ DTIOCAGGREAD,		sizeof(struct dtioc_aggread) },
	{ DTIOCAGGSTACKS,	sizeof(struct dtioc_aggstkread) },
};

/*
 * --abi 1.14: dt_dev.c 1.14 knew four commands, two of them with the
 * older argument sizes (dt-abi 3, "Historical numbers"); 5 and up were
 * ENOTTY then.
 */
static const struct dt_ioctl_ent dt14_ioctls[] = {
	{ DTIOCGPLIST,		sizeof(struct dtioc_probe) },
	{ DT14IOCGSTATS,	sizeof(struct dt14_stat) },
	{ DTIOCRECORD,		sizeof(int) },
	{ DT14IOCPRBENABLE,	sizeof(struct dt14_req) },
};

int
dt_ioctl_argsize(unsigned long cmd, unsigned long *canon)
{
	const struct dt_ioctl_ent *tab = dt_ioctls;
	size_t i, n = sizeof(dt_ioctls) / sizeof(dt_ioctls[0]);

	if (dt_abi == DT_ABI_1_14) {
		tab = dt14_ioctls;
		n = sizeof(dt14_ioctls) / sizeof(dt14_ioctls[0]);
	}
	/* ioctl(2) passes an int-sized request on Linux: ignore the rest. */
	cmd &= 0xffffffffUL;
	for (i = 0; i < n; i++) {
		if (cmd == tab[i].cmd || cmd == DTIOC_OPENBSD(tab[i].cmd)) {
			if (canon != NULL)
				*canon = tab[i].cmd;
			return (int)tab[i].size;
		}
	}
	return -1;
}

size_t
dt_dev_recsize(void)
{
	return dt_abi == DT_ABI_1_14 ? sizeof(struct dt14_evt) :
	    sizeof(struct dt_evt);
}

bool
dt_ioctl_outbuf(unsigned long canon, const void *arg, uint64_t *uaddr,
    size_t *len)
{
	const struct dtioc_probe *dtpr;
	const struct dtioc_arg *dtar;
	const struct dtioc_aggread *dtgr;
	const struct dtioc_aggstkread *dtsr;

	switch (canon) {
	case DTIOCGPLIST:
		dtpr = arg;
		*uaddr = (uint64_t)(uintptr_t)dtpr->dtpr_probes;
		*len = dtpr->dtpr_size;
		break;
	case DTIOCGARGS:
		dtar = arg;
		*uaddr = (uint64_t)(uintptr_t)dtar->dtar_args;
		*len = dtar->dtar_size;
		break;
	case DTIOCAGGREAD:
		dtgr = arg;
		*uaddr = (uint64_t)(uintptr_t)dtgr->dtgr_ents;
		*len = dtgr->dtgr_size;
		break;
	case DTIOCAGGSTACKS:
		dtsr = arg;
		*uaddr = (uint64_t)(uintptr_t)dtsr->dtsr_stks;
		*len = dtsr->dtsr_size;
		break;
	default:
		return false;
	}
	/* Never more than the whole answer: bounds a transport's staging. */
	if (canon == DTIOCGPLIST &&
	    *len > (size_t)dt_dev_nprobes() * sizeof(struct dtioc_probe_info))
		*len = (size_t)dt_dev_nprobes() *
		    sizeof(struct dtioc_probe_info);
	if (canon == DTIOCGARGS &&
	    *len > DTMAXFUNCARGS * sizeof(struct dtioc_arg_info))
		*len = DTMAXFUNCARGS * sizeof(struct dtioc_arg_info);
	if (canon == DTIOCAGGREAD &&
	    *len > DTA_AGGSIZE_MAX * sizeof(struct dtioc_aggent))
		*len = DTA_AGGSIZE_MAX * sizeof(struct dtioc_aggent);
	if (canon == DTIOCAGGSTACKS &&
	    *len > DTA_STKSIZE_MAX * sizeof(struct dtioc_aggstack))
		*len = DTA_STKSIZE_MAX * sizeof(struct dtioc_aggstack);
	return *len > 0;
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
static void
dt_record_start(struct dt_softc *sc)
{
	struct dt_pcb *dp;
	struct dt_probe *dtp;

	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext) {
		dtp = dp->dp_dtp;
		if (dp->dp_agg == NULL)
			atomic_fetch_add(&dtp->dtp_ringpcbs, 1);
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
static void
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

static int
dt_ioctl_list_probes(struct dtioc_probe *dtpr, const struct dt_uaccess *ua)
{
	struct dtioc_probe_info *dtpi;
	struct dt_probe *dtp;
	size_t need, room, n, i;
	int error;

	need = (size_t)dt_dev_nprobes() * sizeof(*dtpi);
	room = dtpr->dtpr_size;
	dtpr->dtpr_size = need;
	if (room == 0)
		return 0;
	n = room / sizeof(*dtpi);
	if (n > dt_dev_nprobes())
		n = dt_dev_nprobes();
	dtpi = calloc(n ? n : 1, sizeof(*dtpi));
	if (dtpi == NULL)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		dtp = dt_dev_probe((uint32_t)i + 1);
		dtpi[i].dtpi_pbn = dtp->dtp_pbn;
		dtpi[i].dtpi_nargs = dtp->dtp_nargs;
		dt_strncpy0(dtpi[i].dtpi_prov, dtp->dtp_prov->dtpv_name,
		    DTNAMESIZE);
		dt_strncpy0(dtpi[i].dtpi_func, dtp->dtp_func, DTNAMESIZE);
		dt_strncpy0(dtpi[i].dtpi_name, dtp->dtp_name, DTNAMESIZE);
	}
	error = 0;
	if (n > 0)
		error = ua->ua_copyout(ua->ua_arg,
		    (uint64_t)(uintptr_t)dtpr->dtpr_probes, dtpi,
		    n * sizeof(*dtpi));
	free(dtpi);
	if (error == 0 && n < dt_dev_nprobes())
		error = ENOSPC;
	return error;
}

/*
 * DTIOCGARGS: only probes with typed arguments (tracepoints) answer, and
 * with a type for each of their dtpi_nargs arguments.  dt(4)'s own never
 * have more than DTMAXARGTYPES; a Linux event may have up to
 * DTMAXFUNCARGS, and OpenBSD's btrace asks for, and prints, dtpi_nargs
 * types (fewer would leave it printing uninitialised memory).
 */
static int
dt_ioctl_get_args(struct dtioc_arg *dtar, const struct dt_uaccess *ua)
{
	struct dtioc_arg_info dtai[DTMAXFUNCARGS];
	struct dt_probe *dtp;
	size_t room, n, i;
	int error = 0;

	dtp = dt_dev_probe(dtar->dtar_pbn);
	if (dtp == NULL)
		return EINVAL;
	if (dtp->dtp_argtype[0] == NULL) {
		dtar->dtar_size = 0;
		return 0;
	}
	n = dtp->dtp_nargs < DTMAXFUNCARGS ? dtp->dtp_nargs : DTMAXFUNCARGS;
	room = dtar->dtar_size;
	/* dt(4) sizes the answer in dtioc_arg, which is 24 bytes too. */
	dtar->dtar_size = n * sizeof(struct dtioc_arg);
	if (room == 0)
		return 0;
	memset(dtai, 0, sizeof(dtai));
	for (i = 0; i < n; i++) {
		if (room < (i + 1) * sizeof(dtai[0])) {
			error = ENOSPC;
			break;
		}
		dtai[i].dtai_pbn = dtp->dtp_pbn;
		dtai[i].dtai_argn = (uint8_t)i;
		dt_strncpy0(dtai[i].dtai_argtype, dtp->dtp_argtype[i] ?
		    dtp->dtp_argtype[i] : "", DTNAMESIZE);
	}
	if (i > 0) {
		int cerr = ua->ua_copyout(ua->ua_arg,
		    (uint64_t)(uintptr_t)dtar->dtar_args, dtai,
		    i * sizeof(dtai[0]));
		if (cerr)
			return cerr;
	}
	dtar->dtar_size = i * sizeof(struct dtioc_arg);
	return error;
}

static void
dt_ioctl_get_stats(struct dt_softc *sc, struct dtioc_stat *st)
{
	struct dtioc_stat one;
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < sc->ds_nrings; i++) {
		if (!dt_strict) {
			dt_ring_stats(&sc->ds_rings[i], st);
			continue;
		}
		/*
		 * dt_dev.c 1.48 sums readevt and dropevt but assigns
		 * skiptick and recurevt in its loop over the CPUs, so
		 * they are the last CPU's (dt-abi 4.3, DTIOCGSTATS).
		 */
		memset(&one, 0, sizeof(one));
		dt_ring_stats(&sc->ds_rings[i], &one);
		st->dtst_readevt += one.dtst_readevt;
		st->dtst_dropevt += one.dtst_dropevt;
		st->dtst_skiptick = one.dtst_skiptick;
		st->dtst_recurevt = one.dtst_recurevt;
	}
}

/* DTIOCGSTATSX: DTIOCGSTATS's counters, then the extensions'. */
static void
dt_ioctl_get_statsx(struct dt_softc *sc, struct dtioc_statx *sx)
{
	struct dtioc_stat st;
	unsigned int i;

	dt_ioctl_get_stats(sc, &st);
	memset(sx, 0, sizeof(*sx));
	sx->dtsx_readevt = st.dtst_readevt;
	sx->dtsx_dropevt = st.dtst_dropevt;
	sx->dtsx_skiptick = st.dtst_skiptick;
	sx->dtsx_recurevt = st.dtst_recurevt;
	for (i = 0; i < sc->ds_nrings; i++) {
		sx->dtsx_filtevt += dt_ring_filtered(&sc->ds_rings[i]);
		sx->dtsx_lateevt += dt_ring_late(&sc->ds_rings[i]);
	}
}

/*
 * DTIOCPRBFILTER: put a copy of the filter on every pcb of the probe
 * this open enabled (a provider may make one per CPU), replacing any
 * earlier one.  Only while not recording, so no producer reads
 * dp_filter as it changes.  Under [K].
 */
static int
dt_ioctl_probe_filter(struct dt_softc *sc, const struct dtioc_filter *f)
{
	struct dt_pcb *dp;
	struct dtioc_filter *nf;
	bool found = false;
	int error;

	if (sc->ds_recording)
		return EBUSY;
	if ((error = dt_filter_check(f)) != 0)
		return error;
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp->dtp_pbn == f->dtfl_pbn)
			found = true;
	if (!found)
		return ENOENT;
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext) {
		if (dp->dp_dtp->dtp_pbn != f->dtfl_pbn)
			continue;
		nf = NULL;
		if (f->dtfl_nterms != 0) {
			/* the terms in use only: a pcb keeps its own copy */
			nf = calloc(1, offsetof(struct dtioc_filter,
			    dtfl_terms[f->dtfl_nterms]));
			if (nf == NULL)
				return ENOMEM;
			memcpy(nf, f, offsetof(struct dtioc_filter,
			    dtfl_terms[f->dtfl_nterms]));
		}
		free(dp->dp_filter);
		dp->dp_filter = nf;
	}
	return 0;
}

/* --abi 1.14: its DTIOCGSTATS had the first two counters only. */
static void
dt_ioctl_get_stats14(struct dt_softc *sc, struct dt14_stat *st14)
{
	struct dtioc_stat st;

	dt_ioctl_get_stats(sc, &st);
	st14->dtst_readevt = st.dtst_readevt;
	st14->dtst_dropevt = st.dtst_dropevt;
}

/* DTIOCPRBENABLE, checks in dt_dev.c 1.48's order.  Under [K]. */
static int
dt_ioctl_probe_enable(struct dt_softc *sc, const struct dtioc_req *dtrq)
{
	struct dt_probe *dtp;
	struct dt_pcb *dp;

	if (sc->ds_recording)
		return EBUSY;
	dtp = dt_dev_probe(dtrq->dtrq_pbn);
	if (dtp == NULL)
		return ENOENT;
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp == dtp)
			return EEXIST;
	if (dtp->dtp_prov->dtpv_alloc != NULL)
		return dtp->dtp_prov->dtpv_alloc(dtp, sc, dtrq);
	dp = dt_pcb_alloc(dtp, sc, dtrq->dtrq_evtflags &
	    (DTEVT_EXECNAME | DTEVT_USTACK | DTEVT_KSTACK | DTEVT_FUNCARGS),
	    0, -1);
	return dp == NULL ? ENOMEM : 0;
}

/*
 * --abi 1.14's DTIOCPRBENABLE, as dt_dev.c 1.14 checked it: the filter
 * (EINVAL), the probe (ENOENT), then a timer's rate in Hz, 1..hz, else
 * EOPNOTSUPP (dt-abi 7).  1.48's EBUSY and EEXIST stay (dtd(8) says
 * so).  The filter goes on the pcbs made, before they can record.
 * Under [K].
 */
static int
dt_ioctl_probe_enable14(struct dt_softc *sc, const struct dt14_req *rq)
{
	struct dtioc_req dtrq;
	struct dt_probe *dtp;
	struct dt_pcb *last, *dp;
	const char *prov;
	int error;

	if (rq->dtrq_filter.dtf_operand > DT14_OP_NE ||
	    rq->dtrq_filter.dtf_variable > DT14_FV_TID)
		return EINVAL;
	if ((dtp = dt_dev_probe(rq->dtrq_pbn)) == NULL)
		return ENOENT;
	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = rq->dtrq_pbn;
	dtrq.dtrq_evtflags = rq->dtrq_evtflags;
	/* 1.14 saved the kernel stack for USTACK too: it had no other. */
	if (dtrq.dtrq_evtflags & DTEVT_USTACK)
		dtrq.dtrq_evtflags = (dtrq.dtrq_evtflags &
		    ~(uint64_t)DTEVT_USTACK) | DTEVT_KSTACK;
	prov = dtp->dtp_prov->dtpv_name;
	if (strcmp(prov, "profile") == 0 || strcmp(prov, "interval") == 0) {
		if (rq->dtrq_rate == 0 || rq->dtrq_rate > DT14_HZ)
			return EOPNOTSUPP;
		/* It fired every hz / rate clock ticks. */
		dtrq.dtrq_nsecs = (uint64_t)(DT14_HZ / rq->dtrq_rate) *
		    (1000000000ULL / DT14_HZ);
	}
	for (last = sc->ds_pcbs; last != NULL && last->dp_snext != NULL;
	    last = last->dp_snext)
		continue;
	if ((error = dt_ioctl_probe_enable(sc, &dtrq)) != 0)
		return error;
	for (dp = last != NULL ? last->dp_snext : sc->ds_pcbs; dp != NULL;
	    dp = dp->dp_snext) {
		dp->dp_fop = (uint8_t)rq->dtrq_filter.dtf_operand;
		dp->dp_fvar = (uint8_t)rq->dtrq_filter.dtf_variable;
		dp->dp_fval = rq->dtrq_filter.dtf_value;
	}
	return 0;
}

static int
dt_ioctl_probe_disable(struct dt_softc *sc, const struct dtioc_req *dtrq)
{
	struct dt_probe *dtp;

	if (sc->ds_recording)
		return EBUSY;
	dtp = dt_dev_probe(dtrq->dtrq_pbn);
	if (dtp == NULL)
		return ENOENT;
	/* As dt(4): pcbs stay until close; only a provider may undo. */
	if (dtp->dtp_prov->dtpv_dealloc != NULL)
		return dtp->dtp_prov->dtpv_dealloc(dtp, sc, dtrq);
	return 0;
}

static int
dt_ioctl_record(struct dt_softc *sc, int on)
{
	if (!on) {
		if (sc->ds_recording)
			dt_record_stop(sc);
		return 0;
	}
	if (sc->ds_recording)
		return EBUSY;
	if (sc->ds_pcbs == NULL)
		return ENOENT;
	dt_record_start(sc);
	return 0;
}

int
dt_dev_ioctl(struct dt_softc *sc, const struct dt_cred *cr, unsigned long cmd,
    void *arg, const struct dt_uaccess *ua)
{
	unsigned long canon;
	int error;

	if (dt_ioctl_argsize(cmd, &canon) < 0)
		return ENOTTY;
	/* Before anything, root's check too: the device itself fails. */
	if ((error = dt_inject_ioctl(&sc->ds_inj, _IOC_NR(canon))) != 0)
		return error;

	switch (canon) {
	case DTIOCGPLIST:
		return dt_ioctl_list_probes(arg, ua);
	case DTIOCGARGS:
		return dt_ioctl_get_args(arg, ua);
	case DTIOCGSTATS:
		dt_ioctl_get_stats(sc, arg);
		return 0;
	case DT14IOCGSTATS:
		dt_ioctl_get_stats14(sc, arg);
		return 0;
	case DTIOCGSTATSX:
		dt_ioctl_get_statsx(sc, arg);
		return 0;
	case DTIOCAGGREAD:
		return dt_agg_read(sc, arg, ua);
	case DTIOCAGGSTACKS:
		return dt_aggstk_read(sc, arg, ua);
	}

	/*
	 * Everything else changes tracing: root only, before validation;
	 * without root, dtd's user is the one who may (and only they can
	 * reach the device).
	 */
	if (cr->dc_uid != 0 && cr->dc_uid != dt_conf.dcf_owner)
		return EPERM;

	if (canon == DTIOCRDVNODE)
		return dt_rdvn_lookup(arg);

	pthread_mutex_lock(&dt_dev_lock);
	switch (canon) {
	case DTIOCRECORD:
		error = dt_ioctl_record(sc, *(int *)arg);
		break;
	case DTIOCPRBENABLE:
		error = dt_ioctl_probe_enable(sc, arg);
		break;
	case DT14IOCPRBENABLE:
		error = dt_ioctl_probe_enable14(sc, arg);
		break;
	case DTIOCPRBDISABLE:
		error = dt_ioctl_probe_disable(sc, arg);
		break;
	case DTIOCPRBFILTER:
		error = dt_ioctl_probe_filter(sc, arg);
		break;
	case DTIOCPRBAGG:
		error = dt_agg_spec(sc, arg);
		break;
	default:
		error = ENOTTY;
		break;
	}
	pthread_mutex_unlock(&dt_dev_lock);
	return error;
}
