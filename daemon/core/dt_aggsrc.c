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
 * Aggregations folded by the source (dt_prov.h): what a traced
 * process's hook can fold for a pcb exactly as dt_agg_put() would fold
 * its record, and the merge of what it folded into the open's table,
 * the one DTIOCAGGREAD serves.  The source knows the pid (dtd's, from
 * the tracee's socket), the probe (its slot's), the thread, its CPU,
 * its name (the thread's word, judged by dtd as a record's is), the
 * event's arguments, return value and errno, and its user stack (a
 * syscall hook's, walked as the record's; never deeper than
 * STACKTRACE_MAX, never the kernel's: the records keep those).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "dt_agg.h"
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_softc.h"

/*
 * Keys a source knows as the record would carry them: the arguments a
 * source key holds (dt_srckey), no more.
 */
#define DTA_K_SRCARGS	(DTA_K_RETVAL | DTA_K_ERRNO | \
			 (DTA_K_ARG0 * ((1u << DT_SRCKEY_NWORDS) - 1)))
#define DTA_K_SRC	(DTA_K_PID | DTA_K_PBN | DTA_K_TID | DTA_K_CPU | \
			 DTA_K_COMM | DTA_K_SRCARGS | DTA_K_USTACK)

bool
dt_pcb_srcagg_ok(const struct dt_pcb *dp)
{
	const struct dt_aggspec *as;
	const struct dtioc_aggspec *s;

	if (dp->dp_agg == NULL || dp->dp_filter != NULL || dp->dp_fop != 0)
		return false;
	for (as = dp->dp_agg; as != NULL; as = as->das_next) {
		s = &as->das_req;
		if ((as->das_keys & ~(uint32_t)DTA_K_SRC) != 0)
			return false;
		/*
		 * A stack the record would not carry (the empty one), or
		 * deeper than a source keeps: left to the records.
		 */
		if ((as->das_keys & DTA_K_USTACK) &&
		    (dp->dp_evtflags & (DTEVT_USTACK | DTEVT_DEEPSTACK)) !=
		    DTEVT_USTACK)
			return false;
		/*
		 * Without its arguments an event's values read 0: a key or
		 * a value of them is left to dtd.  Counts by the thread,
		 * its name or the CPU need none (an entry probe's, whose
		 * script reads no argument).
		 */
		if ((dp->dp_dtp->dtp_argsflag & ~dp->dp_evtflags) != 0 &&
		    (s->dtas_func != DTA_COUNT ||
		    (as->das_keys & DTA_K_SRCARGS) != 0))
			return false;
		if (s->dtas_func != DTA_COUNT && s->dtas_vfield != DTF_RETVAL &&
		    s->dtas_vfield != DTF_ERRNO && s->dtas_vfield != DTF_LAT &&
		    (s->dtas_vfield < DTF_ARG0 ||
		    s->dtas_vfield >= DTF_ARG0 + DT_SRCKEY_NWORDS))
			return false;
	}
	return true;
}

const struct dt_aggspec *
dt_aggspec_next(const struct dt_pcb *dp, const struct dt_aggspec *as)
{
	return as == NULL ? dp->dp_agg : as->das_next;
}

const struct dtioc_aggspec *
dt_aggspec_req(const struct dt_aggspec *as)
{
	return &as->das_req;
}

uint64_t
dt_agg_lhist_nb(const struct dtioc_aggspec *s)
{
	int64_t q0, q1;

	if (s->dtas_func != DTA_LHIST || s->dtas_lstep <= 0 ||
	    s->dtas_lmin >= s->dtas_lmax)
		return 0;
	/* C's division, as dt_agg_key()'s: monotonic, q1 >= q0 */
	q0 = s->dtas_lmin / s->dtas_lstep;
	q1 = (s->dtas_lmax - 1) / s->dtas_lstep;
	if ((uint64_t)q1 - (uint64_t)q0 >= UINT64_MAX - 3)
		return UINT64_MAX;
	return (uint64_t)q1 - (uint64_t)q0 + 3;
}

/*
 * The key of as's entry for sk (and bucket index i of a hist or lhist),
 * as dt_agg_key() makes it of the record, the name comm of up to clen
 * bytes; false for an index past as's buckets.  dt_aggsrc_key(): named
 * sk_comm.
 */
static bool
dt_aggsrc_key_named(const struct dt_pcb *dp, const struct dt_aggspec *as,
    const struct dt_srckey *sk, const char *comm, size_t clen, uint64_t i,
    struct dtioc_aggent *k)
{
	const struct dtioc_aggspec *s = &as->das_req;
	uint32_t keys = as->das_keys;
	uint64_t want;
	unsigned int n;

	memset(k, 0, DTA_KEYLEN);
	k->dtae_id = s->dtas_id;
	if (keys & DTA_K_PID)
		k->dtae_pid = sk->sk_pid;
	if (keys & DTA_K_PBN)
		k->dtae_pbn = dp->dp_dtp->dtp_pbn;
	if (keys & DTA_K_TID)
		k->dtae_tid = sk->sk_tid +
		    (dt_strict ? DT_TID_OFFSET_OPENBSD : 0);
	if (keys & DTA_K_CPU)
		k->dtae_cpu = sk->sk_cpu % dp->dp_sc->ds_nrings;
	/* as dt_agg_key(): up to the NUL, and a name not plain keeps its pid */
	if ((keys & DTA_K_COMM) && (dp->dp_evtflags & DTEVT_EXECNAME))
		memcpy(k->dtae_comm, comm, strnlen(comm, clen - 1));
	if ((keys & DTA_K_COMM) && !dt_comm_plain(k->dtae_comm))
		k->dtae_pid = sk->sk_pid;
	/* dt_evt's union: the result is word 0, errno word 2's low half */
	if (keys & DTA_K_RETVAL)
		k->dtae_retval = sk->sk_a[0];
	if (keys & DTA_K_ERRNO)
		k->dtae_error = (int32_t)(uint32_t)(uint64_t)sk->sk_a[2];
	for (n = 0; n < DT_SRCKEY_NWORDS; n++)
		if (keys & (DTA_K_ARG0 << n))
			k->dtae_args[n] = (uint64_t)sk->sk_a[n];
	if (s->dtas_func == DTA_HIST) {
		if (i >= DT_AGG_HIST_NB)
			return false;
		k->dtae_bucket = (int64_t)i - 1;
	} else if (s->dtas_func == DTA_LHIST) {
		want = dt_agg_lhist_nb(s);
		if (i >= want)
			return false;
		if (i == 0)
			k->dtae_bkind = -1;
		else if (i == want - 1)
			k->dtae_bkind = 1;
		else
			k->dtae_bucket = (int64_t)(((uint64_t)(s->dtas_lmin /
			    s->dtas_lstep) + (i - 1) + 1) *
			    (uint64_t)s->dtas_lstep);
	}
	return true;
}

static bool
dt_aggsrc_key(const struct dt_pcb *dp, const struct dt_aggspec *as,
    const struct dt_srckey *sk, uint64_t i, struct dtioc_aggent *k)
{
	return dt_aggsrc_key_named(dp, as, sk, sk->sk_comm,
	    sizeof(sk->sk_comm), i, k);
}

int
dt_pcb_fold_src(struct dt_pcb *dp, const struct dt_aggspec *as,
    const struct dt_srckey *sk, uint64_t n, int64_t sum, int64_t min,
    int64_t max)
{
	const struct dt_aggspec *first;
	struct dt_aggtab *tab;
	struct dt_aggstk *stk;
	struct dtioc_aggent k;
	int32_t id;

	if (n == 0)
		return 0;
	if (!dt_aggsrc_key(dp, as, sk, sk->sk_bucket, &k))
		return EINVAL;
	/* the values themselves stay in the tracee: 0 (dtvar.h) */
	if (as->das_req.dtas_func == DTA_HIST ||
	    as->das_req.dtas_func == DTA_LHIST)
		sum = min = max = 0;
	tab = atomic_load_explicit(&dp->dp_sc->ds_agg, memory_order_acquire);
	stk = atomic_load_explicit(&tab->dat_stk, memory_order_acquire);
	pthread_mutex_lock(&tab->dat_mtx);
	if (as->das_keys & DTA_K_USTACK) {
		/* a spec with a stack key made the table: stk is set */
		id = dt_aggstk_intern(stk, sk->sk_upc,
		    sk->sk_nupc < STACKTRACE_MAX ? sk->sk_nupc :
		    STACKTRACE_MAX);
		if (id < 0) {
			/*
			 * As dt_agg_put(): each aggregation's events, and
			 * the events once, by the first keyed by a stack
			 * (every aggregation of the pcb folds every event).
			 */
			tab->dat_overflow += n;
			for (first = dp->dp_agg; first != NULL &&
			    !(first->das_keys & DTA_K_STACKS);
			    first = first->das_next)
				continue;
			if (first == as)
				stk->dsk_overflow += n;
			pthread_mutex_unlock(&tab->dat_mtx);
			return 0;
		}
		k.dtae_ustack = (uint16_t)id;
	}
	(void)dt_agg_fold_ent(tab, &k, n, sum, min, max);
	pthread_mutex_unlock(&tab->dat_mtx);
	return 0;
}

void
dt_pcb_count_srcstk(struct dt_pcb *dp, uint64_t n)
{
	struct dt_aggtab *tab;

	tab = atomic_load_explicit(&dp->dp_sc->ds_agg, memory_order_acquire);
	if (tab != NULL)
		atomic_fetch_add_explicit(&tab->dat_srcstk, n,
		    memory_order_relaxed);
}

unsigned int
dt_pcb_fold_src_buckets(struct dt_pcb *dp, const struct dt_aggspec *as,
    pid_t pid, const uint64_t *n, unsigned int nb)
{
	struct dt_srckey sk;
	struct dt_aggtab *tab;
	struct dtioc_aggent k;
	unsigned int i, bad = 0;

	memset(&sk, 0, sizeof(sk));
	sk.sk_pid = pid;
	tab = atomic_load_explicit(&dp->dp_sc->ds_agg, memory_order_acquire);
	pthread_mutex_lock(&tab->dat_mtx);
	for (i = 0; i < nb; i++) {
		if (n[i] == 0)
			continue;
		if (!dt_aggsrc_key(dp, as, &sk, i, &k)) {
			bad++;
			continue;
		}
		(void)dt_agg_fold_ent(tab, &k, n[i], 0, 0, 0);
	}
	pthread_mutex_unlock(&tab->dat_mtx);
	return bad;
}

/* Keys a kernel program reads of the current task, and the probe. */
#define DTA_K_KKEY	(DTA_K_PID | DTA_K_TID | DTA_K_CPU | DTA_K_PBN | \
			 DTA_K_COMM)

bool
dt_pcb_kkey_ok(const struct dt_pcb *dp, uint32_t *fields)
{
	const struct dt_aggspec *as;
	uint32_t keys;

	if (dp->dp_agg == NULL || dp->dp_fop != 0)
		return false;
	keys = dp->dp_agg->das_keys & ~(uint32_t)DTA_K_PBN;
	for (as = dp->dp_agg; as != NULL; as = as->das_next)
		/*
		 * One key for all: the kernel's table then holds no more
		 * keys than each aggregation has, which the open's bounds.
		 */
		if (as->das_req.dtas_func != DTA_COUNT ||
		    (as->das_keys & ~(uint32_t)DTA_K_KKEY) != 0 ||
		    (as->das_keys & ~(uint32_t)DTA_K_PBN) != keys)
			return false;
	*fields = ((keys & DTA_K_PID) ? 1u << DTF_PID : 0) |
	    ((keys & DTA_K_TID) ? 1u << DTF_TID : 0) |
	    ((keys & DTA_K_CPU) ? 1u << DTF_CPU : 0) |
	    ((keys & DTA_K_COMM) ? 1u << DTF_COMM : 0);
	return true;
}

void
dt_pcb_fold_kkey(struct dt_pcb *dp, const struct dt_srckey *sk,
    const char *comm, uint64_t n)
{
	const struct dt_aggspec *as;
	struct dt_aggtab *tab;
	struct dtioc_aggent k;

	if (n == 0)
		return;
	tab = atomic_load_explicit(&dp->dp_sc->ds_agg, memory_order_acquire);
	pthread_mutex_lock(&tab->dat_mtx);
	for (as = dp->dp_agg; as != NULL; as = as->das_next) {
		(void)dt_aggsrc_key_named(dp, as, sk, comm, DTMAXCOMLEN, 0,
		    &k);
		/* dat_aggevt's unit, as dt_pcb_fold_n() counts a counter's */
		if (dt_agg_fold_ent(tab, &k, n, 0, 0, 0))
			tab->dat_kcount += n;
	}
	pthread_mutex_unlock(&tab->dat_mtx);
}

void
dt_pcb_fold_klost(struct dt_pcb *dp, uint64_t n)
{
	const struct dt_aggspec *as;
	struct dt_aggtab *tab;

	if (n == 0)
		return;
	tab = atomic_load_explicit(&dp->dp_sc->ds_agg, memory_order_acquire);
	pthread_mutex_lock(&tab->dat_mtx);
	/* as dt_agg_put() counts: each aggregation the events missed */
	for (as = dp->dp_agg; as != NULL; as = as->das_next)
		tab->dat_overflow += n;
	pthread_mutex_unlock(&tab->dat_mtx);
}

uint32_t
dt_pcb_agg_size(const struct dt_pcb *dp)
{
	struct dt_aggtab *tab;

	tab = atomic_load_explicit(&dp->dp_sc->ds_agg, memory_order_acquire);
	return tab != NULL ? tab->dat_size : 0;
}
