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
 * Aggregations at the source: a spec per DTIOCPRBAGG, one bounded table
 * per open, folded on the put path, read (and emptied) by DTIOCAGGREAD.
 * See dt_agg.h for the locks and dtvar.h for what a client sees.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dt_agg.h"
#include "dt_prov.h"
#include "dt_softc.h"

static uint32_t
dt_agg_keybit(uint8_t field)
{
	switch (field) {
	case DTF_PID:		return DTA_K_PID;
	case DTF_TID:		return DTA_K_TID;
	case DTF_CPU:		return DTA_K_CPU;
	case DTF_PBN:		return DTA_K_PBN;
	case DTF_COMM:		return DTA_K_COMM;
	case DTF_RETVAL:	return DTA_K_RETVAL;
	case DTF_ERRNO:		return DTA_K_ERRNO;
	case DTF_KSTACK:	return DTA_K_KSTACK;
	case DTF_USTACK:	return DTA_K_USTACK;
	}
	if (field >= DTF_ARG0 && field < DTF_ARG0 + DTMAXFUNCARGS)
		return DTA_K_ARG0 << (field - DTF_ARG0);
	return 0;
}

/* Whether spec is one dt_agg_put() can run: 0 or EINVAL. */
static int
dt_agg_check(const struct dtioc_aggspec *s, uint32_t *keys)
{
	uint32_t bit;
	unsigned int i;

	*keys = 0;
	if (s->dtas_func < DTA_COUNT || s->dtas_func > DTA_LHIST ||
	    s->dtas_nkeys > DTA_MAXKEYS ||
	    (s->dtas_vflags & ~(DTF_F_INT32 | DTF_F_TREE)) != 0)
		return EINVAL;
	for (i = 0; i < s->dtas_nkeys; i++) {
		bit = dt_agg_keybit(s->dtas_keys[i]);
		if (bit == 0 || (*keys & bit) != 0)
			return EINVAL;
		*keys |= bit;
	}
	for (; i < DTA_MAXKEYS; i++)
		if (s->dtas_keys[i] != 0)
			return EINVAL;
	/* a stack table's size means something with a stack key alone */
	if ((*keys & DTA_K_STACKS) == 0 && s->dtas_stksize != 0)
		return EINVAL;
	if (s->dtas_func == DTA_COUNT) {
		/* the tree's counter counts events of its probe alone */
		if (s->dtas_vfield != 0 || (s->dtas_vflags & ~DTF_F_TREE) ||
		    ((s->dtas_vflags & DTF_F_TREE) && (*keys & ~DTA_K_PBN)))
			return EINVAL;
	} else if (s->dtas_vflags & DTF_F_TREE)
		return EINVAL;
	else if (s->dtas_vfield == DTF_LAT) {
		/* a duration is a whole number of ns: no narrowing */
		if (s->dtas_vflags != 0)
			return EINVAL;
	} else if (s->dtas_vfield == DTF_COMM ||
	    (dt_agg_keybit(s->dtas_vfield) & ~DTA_K_STACKS) == 0)
		return EINVAL;
	if (s->dtas_func == DTA_LHIST) {
		if (s->dtas_lstep <= 0 || s->dtas_lmin >= s->dtas_lmax)
			return EINVAL;
	} else if (s->dtas_lmin != 0 || s->dtas_lmax != 0 ||
	    s->dtas_lstep != 0)
		return EINVAL;
	return 0;
}

static int
dt_agg_tab_new(struct dt_softc *sc, uint32_t size, struct dt_aggtab **tabp)
{
	struct dt_aggtab *tab;
	uint32_t nh = 1;
	uint64_t mem;

	if (size == 0)
		size = DTA_AGGSIZE_DEF;
	if (size > DTA_AGGSIZE_MAX)
		size = DTA_AGGSIZE_MAX;
	/* at most half full: probes stay short */
	while (nh < 2 * size)
		nh <<= 1;
	mem = (uint64_t)size * sizeof(struct dtioc_aggent) +
	    (uint64_t)nh * sizeof(uint32_t);
	if (dt_limit_charge(&sc->ds_cred, mem) != 0)
		return ENOMEM;
	tab = calloc(1, sizeof(*tab));
	if (tab != NULL) {
		tab->dat_ents = calloc(size, sizeof(*tab->dat_ents));
		tab->dat_hash = calloc(nh, sizeof(*tab->dat_hash));
		tab->dat_specs = calloc(DTA_MAXAGGS, sizeof(*tab->dat_specs));
	}
	if (tab == NULL || tab->dat_ents == NULL || tab->dat_hash == NULL ||
	    tab->dat_specs == NULL) {
		if (tab != NULL) {
			free(tab->dat_ents);
			free(tab->dat_hash);
			free(tab->dat_specs);
		}
		free(tab);
		dt_limit_uncharge(&sc->ds_cred, mem);
		return ENOMEM;
	}
	pthread_mutex_init(&tab->dat_mtx, NULL);
	tab->dat_size = size;
	tab->dat_hmask = nh - 1;
	*tabp = tab;
	return 0;
}

static uint64_t
dt_agg_tab_mem(const struct dt_aggtab *tab)
{
	return (uint64_t)tab->dat_size * sizeof(struct dtioc_aggent) +
	    ((uint64_t)tab->dat_hmask + 1) * sizeof(uint32_t);
}

/* Whether dp is the one pcb of its probe in sc. */
static bool
dt_agg_onepcb(const struct dt_softc *sc, const struct dt_pcb *dp)
{
	const struct dt_pcb *p;

	for (p = sc->ds_pcbs; p != NULL; p = p->dp_snext)
		if (p != dp && p->dp_dtp == dp->dp_dtp)
			return false;
	return true;
}

int
dt_agg_spec(struct dt_softc *sc, struct dtioc_aggspec *spec)
{
	struct dt_aggtab *tab;
	struct dt_aggspec *as, **asp;
	struct dt_aggstk *stk;
	struct dt_pcb *dp;
	uint32_t keys, stksize;
	unsigned int n = 0;
	bool tree;
	int error;

	if (sc->ds_recording)
		return EBUSY;
	if ((error = dt_agg_check(spec, &keys)) != 0)
		return error;
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp->dtp_pbn == spec->dtas_pbn)
			break;
	if (dp == NULL)
		return ENOENT;
	/* only a traced process's hook measures a call's duration */
	if (spec->dtas_vfield == DTF_LAT &&
	    (strcmp(dp->dp_dtp->dtp_prov->dtpv_name, "syscall") != 0 ||
	    strncmp(dp->dp_dtp->dtp_name, "return", DTNAMESIZE) != 0))
		return EINVAL;
	/*
	 * A thread keeps one stamp, which stands for one script's
	 * @s[tid]: another open's timed call made inside this one's (a
	 * signal handler's) would take it where this script's events
	 * pair the outer call (udt_sagg.h).  So one open times calls at
	 * a time; a second is refused on its first duration, before any
	 * of its own is taken, and reads its events whole (bt_lat.c).
	 */
	if (spec->dtas_vfield == DTF_LAT && dt_dev_lat_other(sc))
		return EBUSY;
	for (as = dp->dp_agg; as != NULL; as = as->das_next)
		n++;
	if (n >= DTA_PCBAGGS)
		return ENOSPC;
	/*
	 * A tree's count is kept by the kernel in place of every event
	 * of the probe: all of its aggregations are such counts, or none.
	 */
	tree = (spec->dtas_vflags & DTF_F_TREE) != 0;
	if (tree && sc->ds_tree == 0)
		return EINVAL;
	if (dp->dp_agg != NULL &&
	    tree != ((dp->dp_agg->das_req.dtas_vflags & DTF_F_TREE) != 0))
		return EINVAL;
	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	if (tab == NULL) {
		if ((error = dt_agg_tab_new(sc, spec->dtas_aggsize, &tab)) != 0)
			return error;
		atomic_store_explicit(&sc->ds_agg, tab, memory_order_release);
	}
	if (tab->dat_nspecs >= DTA_MAXAGGS)
		return ENOSPC;
	/* first: a failure after the stack table is made would leave it */
	if ((as = calloc(1, sizeof(*as))) == NULL)
		return ENOMEM;
	stk = atomic_load_explicit(&tab->dat_stk, memory_order_relaxed);
	if ((keys & DTA_K_STACKS) != 0 && stk == NULL) {
		stksize = spec->dtas_stksize;
		if ((error = dt_aggstk_new(sc, &stksize, &stk)) != 0) {
			free(as);
			return error;
		}
		/* no producer folds yet: not recording (EBUSY above) */
		atomic_store_explicit(&tab->dat_stk, stk, memory_order_release);
	}
	/* last: nothing after it fails, nothing to undo */
	if (tree && dp->dp_agg == NULL) {
		error = EOPNOTSUPP;
		if (dp->dp_dtp->dtp_prov->dtpv_treecount != NULL &&
		    dt_agg_onepcb(sc, dp))
			error = dp->dp_dtp->dtp_prov->dtpv_treecount(dp,
			    sc->ds_tree);
		if (error != 0) {
			free(as);
			return error;
		}
	}
	as->das_req = *spec;
	as->das_req.dtas_id = ++tab->dat_nspecs;
	as->das_req.dtas_aggsize = tab->dat_size;
	as->das_keys = keys;
	tab->dat_specs[as->das_req.dtas_id - 1] = as;
	/*
	 * Every pcb of the probe (a provider may make one per CPU) shares
	 * one chain: the first pcb's; appended, so ids fold in order.
	 */
	for (asp = &dp->dp_agg; *asp != NULL; asp = &(*asp)->das_next)
		continue;
	*asp = as;
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp->dtp_pbn == spec->dtas_pbn && dp->dp_agg == NULL)
			dp->dp_agg = as;
	spec->dtas_id = as->das_req.dtas_id;
	spec->dtas_aggsize = tab->dat_size;
	spec->dtas_stksize = (keys & DTA_K_STACKS) != 0 ? stk->dsk_size : 0;
	return 0;
}

/* Power-of-two class, as btrace's hist() and bpftrace's. */
int64_t
dt_agg_pow2(int64_t v)
{
	uint64_t u = (uint64_t)v;
	int64_t k = 0;

	if (v < 0)
		return -1;
	if (v == 0)
		return 0;
	while (u > 1) {
		u >>= 1;
		k++;
	}
	return k + 1;
}

/*
 * The key of src for as, and its value, as dp's reader would see the
 * record in ring cpu (the fields dt_evt_copy() keeps for dp_evtflags).
 */
static void
dt_agg_key(const struct dt_pcb *dp, const struct dt_aggspec *as,
    unsigned int cpu, const struct dt_evt *src, const int32_t *stkid,
    struct dtioc_aggent *k, int64_t *vp)
{
	bool args = (dp->dp_dtp->dtp_argsflag & ~dp->dp_evtflags) == 0;
	uint32_t keys = as->das_keys;
	const struct dtioc_aggspec *s = &as->das_req;
	unsigned int n;
	int64_t v = 0;

	memset(k, 0, DTA_KEYLEN);
	k->dtae_id = s->dtas_id;
	if (keys & DTA_K_PID)
		k->dtae_pid = src->dtev_pid;
	if (keys & DTA_K_TID)
		k->dtae_tid = src->dtev_tid +
		    (dt_strict ? DT_TID_OFFSET_OPENBSD : 0);
	if (keys & DTA_K_CPU)
		k->dtae_cpu = cpu;
	if (keys & DTA_K_PBN)
		k->dtae_pbn = dp->dp_dtp->dtp_pbn;
	if (keys & DTA_K_KSTACK)
		k->dtae_kstack = (uint16_t)stkid[0];
	if (keys & DTA_K_USTACK)
		k->dtae_ustack = (uint16_t)stkid[1];
	if ((keys & DTA_K_COMM) && (dp->dp_evtflags & DTEVT_EXECNAME)) {
		/* up to the NUL, as the ring's copy: the rest stays zero */
		memcpy(k->dtae_comm, src->dtev_comm,
		    strnlen(src->dtev_comm, DTMAXCOMLEN - 1));
	}
	if ((keys & DTA_K_COMM) && !dt_comm_plain(k->dtae_comm))
		k->dtae_pid = src->dtev_pid;
	if (args) {
		if (keys & DTA_K_RETVAL)
			k->dtae_retval = src->dtev_retval[0];
		if (keys & DTA_K_ERRNO)
			k->dtae_error = src->dtev_error;
		for (n = 0; n < DTMAXFUNCARGS; n++)
			if (keys & (DTA_K_ARG0 << n))
				k->dtae_args[n] = (uint64_t)src->dtev_args[n];
	}
	if (s->dtas_vfield != 0)
		v = dt_evt_field(dp, cpu, s->dtas_vfield, s->dtas_vflags, src);
	if (s->dtas_func == DTA_HIST)
		k->dtae_bucket = dt_agg_pow2(v);
	else if (s->dtas_func == DTA_LHIST) {
		if (v < s->dtas_lmin)
			k->dtae_bkind = -1;
		else if (v >= s->dtas_lmax)
			k->dtae_bkind = 1;
		else
			k->dtae_bucket = (int64_t)(((uint64_t)(v /
			    s->dtas_lstep) + 1) * (uint64_t)s->dtas_lstep);
	}
	*vp = v;
}

/* FNV-1a over the key bytes. */
static uint32_t
dt_agg_hash(const struct dtioc_aggent *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < DTA_KEYLEN; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return (uint32_t)(h ^ (h >> 32));
}

/*
 * The entry of key k in tab, made (its min and max v) if new; NULL when
 * a full table has no room for it.  Under [t].
 */
static struct dtioc_aggent *
dt_agg_entry(struct dt_aggtab *tab, const struct dtioc_aggent *k, int64_t v)
{
	struct dtioc_aggent *e;
	uint32_t h, i;

	for (h = dt_agg_hash(k) & tab->dat_hmask;; h = (h + 1) &
	    tab->dat_hmask) {
		if ((i = tab->dat_hash[h]) == 0)
			break;
		e = &tab->dat_ents[i - 1];
		if (memcmp(e, k, DTA_KEYLEN) == 0)
			return e;
	}
	if (tab->dat_n == tab->dat_size)
		return NULL;
	e = &tab->dat_ents[tab->dat_n++];
	memcpy(e, k, DTA_KEYLEN);
	e->dtae_count = 0;
	e->dtae_sum = 0;
	e->dtae_min = v;
	e->dtae_max = v;
	tab->dat_hash[h] = tab->dat_n;
	return e;
}

/* Fold n events of value v into tab under [t]; false when refused. */
static bool
dt_agg_fold(struct dt_aggtab *tab, const struct dtioc_aggent *k, int64_t v,
    uint64_t n)
{
	/* The sum wraps as the C of an int64_t += would, without its UB. */
	return dt_agg_fold_ent(tab, k, n, (int64_t)(n * (uint64_t)v), v, v);
}

bool
dt_agg_fold_ent(struct dt_aggtab *tab, const struct dtioc_aggent *k,
    uint64_t n, int64_t sum, int64_t min, int64_t max)
{
	struct dtioc_aggent *e;

	if ((e = dt_agg_entry(tab, k, min)) == NULL) {
		tab->dat_overflow += n;
		return false;
	}
	e->dtae_count += n;
	e->dtae_sum = (int64_t)((uint64_t)e->dtae_sum + (uint64_t)sum);
	if (min < e->dtae_min)
		e->dtae_min = min;
	if (max > e->dtae_max)
		e->dtae_max = max;
	tab->dat_aggevt += n;
	return true;
}

/*
 * The frames of src's kernel (kernel) or user stack as dp's record would
 * carry them, into pc[DTEV_DEEP_MAX]: the deep stack ds when the
 * provider walked one and the open asked for DTEVT_DEEPSTACK, else at
 * most STACKTRACE_MAX (dt_stack_copy()'s); none when dp_evtflags did not
 * ask for the stack, or when a syscall event's kstack holds strings.
 */
static unsigned int
dt_agg_frames(const struct dt_pcb *dp, const struct dt_evt *src,
    const struct dt_deepstack *ds, bool kernel, uint64_t *pc)
{
	const struct stacktrace *st;
	unsigned int n, i;

	if ((dp->dp_evtflags & (kernel ? DTEVT_KSTACK : DTEVT_USTACK)) == 0)
		return 0;
	/* strings where the kernel stack would be: as dt_pcb_ring_put_kept() */
	if (kernel && (dp->dp_evtflags & DTEVT_STRINGS) &&
	    dp->dp_dtp->dtp_strings)
		return 0;
	if (ds != NULL) {
		n = ds->ds_count < DTEV_DEEP_MAX ? ds->ds_count :
		    DTEV_DEEP_MAX;
		if (!(dp->dp_evtflags & DTEVT_DEEPSTACK) && n > STACKTRACE_MAX)
			n = STACKTRACE_MAX;
		memcpy(pc, ds->ds_pc, n * sizeof(*pc));
		return n;
	}
	st = kernel ? &src->dtev_kstack : &src->dtev_ustack;
	n = st->st_count < STACKTRACE_MAX ? st->st_count : STACKTRACE_MAX;
	for (i = 0; i < n; i++)
		pc[i] = st->st_pc[i];
	return n;
}

int
dt_agg_put(struct dt_pcb *dp, unsigned int cpu, const struct dt_evt *src,
    const struct dt_deepstack *kds, const struct dt_deepstack *uds)
{
	struct dt_softc *sc = dp->dp_sc;
	struct dt_aggtab *tab;
	struct dt_aggstk *stk;
	struct dt_aggspec *as;
	struct dtioc_aggent k;
	uint64_t kpc[DTEV_DEEP_MAX], upc[DTEV_DEEP_MAX];
	unsigned int kn = 0, un = 0;
	uint32_t want = 0;
	int32_t id[2] = { 0, 0 };
	int64_t v;
	int error = 0;

	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	cpu %= sc->ds_nrings;
	for (as = dp->dp_agg; as != NULL; as = as->das_next)
		want |= as->das_keys;
	/* the frames gathered outside the lock: the walk is the cost */
	if (want & DTA_K_KSTACK)
		kn = dt_agg_frames(dp, src, kds, true, kpc);
	if (want & DTA_K_USTACK)
		un = dt_agg_frames(dp, src, uds, false, upc);
	stk = atomic_load_explicit(&tab->dat_stk, memory_order_acquire);
	pthread_mutex_lock(&tab->dat_mtx);
	if (want & DTA_K_STACKS) {
		/* a spec with a stack key made the table: stk is set */
		if (want & DTA_K_KSTACK)
			id[0] = dt_aggstk_intern(stk, kpc, kn);
		if (want & DTA_K_USTACK)
			id[1] = dt_aggstk_intern(stk, upc, un);
	}
	/* dsk_overflow counts events, not the aggregations they miss */
	if (id[0] < 0 || id[1] < 0)
		stk->dsk_overflow++;
	for (as = dp->dp_agg; as != NULL; as = as->das_next) {
		/* a stack the full stack table refused: not folded, counted */
		if (((as->das_keys & DTA_K_KSTACK) && id[0] < 0) ||
		    ((as->das_keys & DTA_K_USTACK) && id[1] < 0)) {
			tab->dat_overflow++;
			error = ENOBUFS;
			continue;
		}
		/*
		 * A return with no duration of its own (dtvar.h): the
		 * script would have skipped it.
		 */
		if (as->das_req.dtas_vfield == DTF_LAT &&
		    src->dtev_retval[1] <= 0)
			continue;
		dt_agg_key(dp, as, cpu, src, id, &k, &v);
		if (!dt_agg_fold(tab, &k, v, 1))
			error = ENOBUFS;
	}
	pthread_mutex_unlock(&tab->dat_mtx);
	return error;
}

/*
 * Keys a source that counts a process's calls of one probe knows: the
 * pid (dtd's, from the tracee's socket) and the probe (the pcb's).
 */
#define DTA_K_COUNTABLE	(DTA_K_PID | DTA_K_PBN)

/* Keys a per-CPU counter of one pcb's events knows. */
#define DTA_K_KCOUNT	(DTA_K_CPU | DTA_K_PBN)

/* Whether every aggregation of dp is a count keyed within keys. */
static bool
dt_pcb_counts_by(const struct dt_pcb *dp, uint32_t keys)
{
	const struct dt_aggspec *as;

	if (dp->dp_agg == NULL || dp->dp_fop != 0)
		return false;
	for (as = dp->dp_agg; as != NULL; as = as->das_next)
		if (as->das_req.dtas_func != DTA_COUNT ||
		    (as->das_keys & ~keys) != 0)
			return false;
	return true;
}

/* n events of process pid on cpu into every count of dp; kern: a counter's. */
static void
dt_pcb_fold_n(struct dt_pcb *dp, unsigned int cpu, uint64_t n, pid_t pid,
    bool kern)
{
	struct dt_softc *sc = dp->dp_sc;
	const struct dt_aggspec *as;
	struct dt_aggtab *tab;
	struct dtioc_aggent k;

	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	pthread_mutex_lock(&tab->dat_mtx);
	for (as = dp->dp_agg; as != NULL; as = as->das_next) {
		memset(&k, 0, DTA_KEYLEN);
		k.dtae_id = as->das_req.dtas_id;
		if (as->das_keys & DTA_K_PID)
			k.dtae_pid = pid;
		/* the ring a put would have used: dt_agg_key()'s CPU */
		if (as->das_keys & DTA_K_CPU)
			k.dtae_cpu = cpu % sc->ds_nrings;
		if (as->das_keys & DTA_K_PBN)
			k.dtae_pbn = dp->dp_dtp->dtp_pbn;
		/* dat_aggevt's unit, so that it is a part of it */
		if (dt_agg_fold(tab, &k, 0, n) && kern)
			tab->dat_kcount += n;
	}
	pthread_mutex_unlock(&tab->dat_mtx);
}

bool
dt_pcb_count_only(const struct dt_pcb *dp)
{
	return dp->dp_filter == NULL &&
	    dt_pcb_counts_by(dp, DTA_K_COUNTABLE);
}

void
dt_pcb_fold_count(struct dt_pcb *dp, unsigned int cpu, uint64_t n,
    pid_t pid)
{
	if (n != 0 && dt_pcb_count_only(dp))
		dt_pcb_fold_n(dp, cpu, n, pid, false);
}

bool
dt_pcb_kcount_ok(const struct dt_pcb *dp)
{
	return dt_pcb_counts_by(dp, DTA_K_KCOUNT);
}

void
dt_pcb_fold_kcount(struct dt_pcb *dp, unsigned int cpu, uint64_t n)
{
	if (n != 0)
		dt_pcb_fold_n(dp, cpu, n, 0, true);
}

bool
dt_pcb_pcount_ok(const struct dt_pcb *dp)
{
	return dt_pcb_counts_by(dp, DTA_K_COUNTABLE);
}

void
dt_pcb_fold_pcount(struct dt_pcb *dp, uint64_t n, pid_t pid)
{
	if (n != 0)
		dt_pcb_fold_n(dp, 0, n, pid, true);
}

/*
 * The counters sources keep in place of events, every open's: few, and
 * read only at DTIOCAGGREAD, so one list under one lock.
 */
static pthread_mutex_t	 dt_aggctr_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_aggctr	*dt_aggctrs;		/* [c] */

void
dt_aggctr_add(struct dt_aggctr *c)
{
	pthread_mutex_lock(&dt_aggctr_mtx);
	c->dac_next = dt_aggctrs;
	dt_aggctrs = c;
	pthread_mutex_unlock(&dt_aggctr_mtx);
}

void
dt_aggctr_del(struct dt_aggctr *c)
{
	struct dt_aggctr **cp;

	pthread_mutex_lock(&dt_aggctr_mtx);
	for (cp = &dt_aggctrs; *cp != NULL; cp = &(*cp)->dac_next)
		if (*cp == c) {
			*cp = c->dac_next;
			/* what it counted up to its stop is the open's */
			if (c->dac_flip != NULL) {
				c->dac_flip(c);
				(void)c->dac_wait();
			}
			c->dac_sync(c);
			break;
		}
	pthread_mutex_unlock(&dt_aggctr_mtx);
}

/* Distinct waits one read makes: only the kernel program has one. */
#define DT_AGGCTR_NWAIT	4

/*
 * Fold what sc's counters counted so far: a read then holds it.  The
 * waiting ones are flipped first and wait once, together (dt_prov.h).
 */
static void
dt_agg_sync(struct dt_softc *sc)
{
	bool (*wait[DT_AGGCTR_NWAIT])(void);
	bool ok[DT_AGGCTR_NWAIT];
	struct dt_aggctr *c;
	unsigned int i, nw = 0;

	pthread_mutex_lock(&dt_aggctr_mtx);
	for (c = dt_aggctrs; c != NULL; c = c->dac_next) {
		if (c->dac_dp->dp_sc != sc || c->dac_flip == NULL)
			continue;
		for (i = 0; i < nw && wait[i] != c->dac_wait; i++)
			continue;
		/* more kinds than room: that counter waits for a read */
		if (i == DT_AGGCTR_NWAIT)
			continue;
		c->dac_flip(c);
		if (i == nw)
			wait[nw++] = c->dac_wait;
	}
	for (i = 0; i < nw; i++)
		ok[i] = wait[i]();
	for (c = dt_aggctrs; c != NULL; c = c->dac_next) {
		if (c->dac_dp->dp_sc != sc)
			continue;
		if (c->dac_flip != NULL) {
			for (i = 0; i < nw && wait[i] != c->dac_wait; i++)
				continue;
			if (i == nw || !ok[i])
				continue;
		}
		c->dac_sync(c);
	}
	pthread_mutex_unlock(&dt_aggctr_mtx);
}

int
dt_agg_read(struct dt_softc *sc, struct dtioc_aggread *rd,
    const struct dt_uaccess *ua)
{
	struct dt_aggtab *tab;
	struct dt_aggstk *stk;
	struct dtioc_aggent *copy = NULL;
	size_t room = rd->dtgr_size, need;
	uint32_t n;
	int error;

	/* dtgr_kcount is output only: a size query's answer comes back */
	if ((rd->dtgr_flags & ~DTA_RD_CLEAR) != 0)
		return EINVAL;
	rd->dtgr_nents = 0;
	rd->dtgr_aggevt = rd->dtgr_overflow = rd->dtgr_kcount = 0;
	/* before the table is read: what it holds is at least this */
	rd->dtgr_done = dt_seq_done_ns();
	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	if (tab != NULL)
		dt_agg_sync(sc);
	if (tab == NULL) {
		rd->dtgr_size = 0;
		return 0;
	}
	/* staged at its largest first: no allocation under [t] */
	if (room != 0 && (copy = calloc(tab->dat_size, sizeof(*copy))) == NULL)
		return ENOMEM;
	pthread_mutex_lock(&tab->dat_mtx);
	n = tab->dat_n;
	need = (size_t)n * sizeof(struct dtioc_aggent);
	rd->dtgr_aggevt = tab->dat_aggevt;
	rd->dtgr_overflow = tab->dat_overflow;
	rd->dtgr_kcount = tab->dat_kcount;
	if (room == 0 || room < need) {
		pthread_mutex_unlock(&tab->dat_mtx);
		free(copy);
		rd->dtgr_size = need;
		return room == 0 ? 0 : ENOSPC;
	}
	memcpy(copy, tab->dat_ents, need);
	if ((stk = atomic_load_explicit(&tab->dat_stk,
	    memory_order_acquire)) != NULL)
		dt_aggstk_mark(stk, (rd->dtgr_flags & DTA_RD_CLEAR) != 0);
	if (rd->dtgr_flags & DTA_RD_CLEAR) {
		/* an event folded from now on lands in the next read */
		memset(tab->dat_hash, 0, ((size_t)tab->dat_hmask + 1) *
		    sizeof(*tab->dat_hash));
		tab->dat_n = 0;
	}
	pthread_mutex_unlock(&tab->dat_mtx);
	error = 0;
	if (n > 0)
		error = ua->ua_copyout(ua->ua_arg,
		    (uint64_t)(uintptr_t)rd->dtgr_ents, copy, need);
	free(copy);
	if (error == 0) {
		rd->dtgr_nents = n;
		rd->dtgr_size = need;
	}
	return error;
}

void
dt_agg_free(struct dt_softc *sc)
{
	struct dt_aggtab *tab;
	uint32_t i;

	tab = atomic_load_explicit(&sc->ds_agg, memory_order_acquire);
	if (tab == NULL)
		return;
	for (i = 0; i < tab->dat_nspecs; i++)
		free(tab->dat_specs[i]);
	dt_limit_uncharge(&sc->ds_cred, dt_agg_tab_mem(tab));
	pthread_mutex_destroy(&tab->dat_mtx);
	dt_aggstk_free(sc, atomic_load_explicit(&tab->dat_stk,
	    memory_order_relaxed));
	free(tab->dat_specs);
	free(tab->dat_hash);
	free(tab->dat_ents);
	free(tab);
	atomic_store_explicit(&sc->ds_agg, NULL, memory_order_relaxed);
}
