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
 * The device's ioctls: which commands there are and the size of each
 * one's argument (for the front ends, which copy it in before the core
 * sees it), and each one's handling.  Apart from dt_dev.c's opens and
 * closes so that the whole of what a caller may ask of an open, and who
 * may ask it, reads in one place; the lock annotations are dt_dev.c's
 * and dt_softc.h's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dt_agg.h"
#include "dt_proc.h"
#include "dt_softc.h"

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
	{ DTIOCTREE,		sizeof(struct dtioc_tree) },
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
	struct dt_aggtab *tab;
	unsigned int i;

	dt_ioctl_get_stats(sc, &st);
	memset(sx, 0, sizeof(*sx));
	/* made by the first DTIOCPRBAGG, never freed before the close */
	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	if (tab != NULL)
		sx->dtsx_srcstk = atomic_load_explicit(&tab->dat_srcstk,
		    memory_order_relaxed);
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
	/* a tree's counter carries the filter it was opened with */
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp->dtp_pbn == f->dtfl_pbn && dp->dp_agg != NULL &&
		    (dp->dp_agg->das_req.dtas_vflags & DTF_F_TREE))
			return EBUSY;
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
		dp->dp_fcomm = nf != NULL && dt_filter_hascomm(nf);
	}
	return 0;
}

/*
 * DTIOCTREE: the root of the tree DTF_F_TREE counts (dtvar.h).  Only
 * while not recording: a count's counter is opened on it by the
 * DTIOCPRBAGG that asks for it.  Under [K].
 */
/* Whether process pid lives in dtd's own pid namespace. */
static bool
dt_ioctl_ourns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat("/proc/self/ns/pid", &a) == 0 && stat(path, &b) == 0 &&
	    a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static int
dt_ioctl_tree(struct dt_softc *sc, const struct dt_cred *cr,
    const struct dtioc_tree *t)
{
	struct dt_pcb *dp;

	if (sc->ds_recording)
		return EBUSY;
	/* counters are open on the tree named first: one tree an open */
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if ((dp->dp_agg != NULL &&
		    (dp->dp_agg->das_req.dtas_vflags & DTF_F_TREE)) ||
		    (dp->dp_evtflags & DTEVT_TREE))
			return EBUSY;
	/* a caller in another pid namespace names pids we do not see */
	if (cr->dc_pid == 0 || !dt_ioctl_ourns(cr->dc_pid))
		return EOPNOTSUPP;
	if (t->dttr_pid <= 0 || (t->dttr_flags & ~DTTR_F_HOOKED) != 0 ||
	    t->dttr_spare != 0)
		return EINVAL;
	if (kill(t->dttr_pid, 0) == -1 && errno == ESRCH)
		return ESRCH;
	sc->ds_tree = t->dttr_pid;
	sc->ds_treeflags = t->dttr_flags;
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
	case DTIOCTREE:
		error = dt_ioctl_tree(sc, cr, arg);
		break;
	default:
		error = ENOTTY;
		break;
	}
	pthread_mutex_unlock(&dt_dev_lock);
	return error;
}
