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
 * The probe registry and the event path from providers into the rings.
 * The registry is written only during dt_dev_init() and is read-only
 * afterwards, so lookups take no lock.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dt_agg.h"
#include "dt_softc.h"

static struct dt_probe	**dt_probes;	/* [I] after init, index pbn - 1 */
static uint32_t		  dt_nprobes;	/* [I] after init */

void
dt_strncpy0(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

struct dt_probe *
dt_dev_alloc_probe(const char *func, const char *name,
    const struct dt_provider *dtpv, uint8_t nargs)
{
	struct dt_probe *dtp, **np;

	np = reallocarray(dt_probes, dt_nprobes + 1, sizeof(*np));
	if (np == NULL)
		return NULL;
	dt_probes = np;
	dtp = calloc(1, sizeof(*dtp));
	if (dtp == NULL)
		return NULL;
	CDS_INIT_LIST_HEAD(&dtp->dtp_pcbs);
	dtp->dtp_prov = dtpv;
	dtp->dtp_nargs = nargs;
	dt_strncpy0(dtp->dtp_func, func, sizeof(dtp->dtp_func));
	dt_strncpy0(dtp->dtp_name, name, sizeof(dtp->dtp_name));
	dt_probes[dt_nprobes++] = dtp;
	dtp->dtp_pbn = dt_nprobes;
	return dtp;
}

/* Called by dt_dev_fini() only, once no open is left. */
void
dt_probe_free_all(void)
{
	uint32_t i;

	for (i = 0; i < dt_nprobes; i++)
		free(dt_probes[i]);
	free(dt_probes);
	dt_probes = NULL;
	dt_nprobes = 0;
}

struct dt_probe *
dt_dev_probe(uint32_t pbn)
{
	if (pbn == 0 || pbn > dt_nprobes)
		return NULL;
	return dt_probes[pbn - 1];
}

uint32_t
dt_dev_nprobes(void)
{
	return dt_nprobes;
}

struct dt_probe *
dt_dev_probe_lookup(const char *prov, const char *func, const char *name)
{
	struct dt_probe *dtp;
	uint32_t i;

	for (i = 0; i < dt_nprobes; i++) {
		dtp = dt_probes[i];
		if (strcmp(dtp->dtp_prov->dtpv_name, prov) == 0 &&
		    strcmp(dtp->dtp_func, func) == 0 &&
		    strcmp(dtp->dtp_name, name) == 0)
			return dtp;
	}
	return NULL;
}

pid_t
dt_sc_tree(const struct dt_softc *sc)
{
	return sc->ds_tree;
}

uint32_t
dt_sc_treeflags(const struct dt_softc *sc)
{
	return sc->ds_treeflags;
}

const struct dt_cred *
dt_sc_cred(const struct dt_softc *sc)
{
	return &sc->ds_cred;
}

int32_t
dt_tid_offset(void)
{
	return dt_strict ? DT_TID_OFFSET_OPENBSD : 0;
}

struct dt_pcb *
dt_pcb_alloc(struct dt_probe *dtp, struct dt_softc *sc, uint64_t evtflags,
    uint64_t nsecs, int cpu)
{
	struct dt_pcb *dp, **dpp;

	dp = calloc(1, sizeof(*dp));
	if (dp == NULL)
		return NULL;
	CDS_INIT_LIST_HEAD(&dp->dp_pnext);
	dp->dp_sc = sc;
	dp->dp_dtp = dtp;
	dp->dp_evtflags = evtflags;
	dp->dp_nsecs = nsecs;
	dp->dp_cpu = cpu;
	/* Keep enable order: providers start in the order btrace asked. */
	for (dpp = &sc->ds_pcbs; *dpp != NULL; dpp = &(*dpp)->dp_snext)
		continue;
	*dpp = dp;
	return dp;
}

/*
 * --abi 1.14: whether dt_dev.c 1.14 would have recorded src for dp.  It
 * left out the tracing program's own events, then applied the pcb's
 * pid/tid filter; the tid compared is the one the reader sees.
 */
static bool
dt_pcb_keep14(const struct dt_pcb *dp, const struct dt_evt *src)
{
	uint32_t var = 0;

	if (dp->dp_sc->ds_tracer != 0 && src->dtev_pid == dp->dp_sc->ds_tracer)
		return false;
	switch (dp->dp_fvar) {
	case DT14_FV_PID:
		var = (uint32_t)src->dtev_pid;
		break;
	case DT14_FV_TID:
		var = (uint32_t)src->dtev_tid +
		    (dt_strict ? DT_TID_OFFSET_OPENBSD : 0);
		break;
	}
	switch (dp->dp_fop) {
	case DT14_OP_EQ:
		return var == dp->dp_fval;
	case DT14_OP_NE:
		return var != dp->dp_fval;
	}
	return true;
}

bool
dt_comm_plain(const char *comm)
{
	size_t i;

	if (comm[0] == '\0')
		return false;
	for (i = 0; i < DTMAXCOMLEN && comm[i] != '\0'; i++)
		if (comm[i] < 0x20 || comm[i] > 0x7e || comm[i] == '\\')
			return false;
	return true;
}

int64_t
dt_evt_field(const struct dt_pcb *dp, unsigned int cpu, unsigned int field,
    unsigned int flags, const struct dt_evt *src)
{
	bool args = (dp->dp_dtp->dtp_argsflag & ~dp->dp_evtflags) == 0;
	int64_t v;

	switch (field) {
	case DTF_PID:
		v = src->dtev_pid;
		break;
	case DTF_TID:
		/* the reader's tid: dt_softc_tid_offset() under strict */
		v = (int64_t)src->dtev_tid +
		    (dt_strict ? DT_TID_OFFSET_OPENBSD : 0);
		break;
	case DTF_CPU:
		v = cpu;
		break;
	case DTF_PBN:
		v = dp->dp_dtp->dtp_pbn;
		break;
	case DTF_RETVAL:
		v = args ? src->dtev_retval[0] : 0;
		break;
	case DTF_ERRNO:
		v = args ? src->dtev_error : 0;
		break;
	case DTF_LAT:
		/* a hook's duration + 1 (dt_ingest_rec.c); the caller
		   checked there is one */
		v = src->dtev_retval[1] - 1;
		break;
	default:	/* DTF_ARG0 + n, checked by the caller's check */
		v = args ? src->dtev_args[field - DTF_ARG0] : 0;
		break;
	}
	if (flags & DTF_F_INT32)
		v = (int32_t)(uint32_t)(uint64_t)v;
	return v;
}

/*
 * One comparison of a filter on src as dp's reader would see it (in
 * ring cpu): true when the event passes.  A comparison dtd cannot judge
 * passes and sets *unsure.  Lock-free, no allocation.
 */
static bool
dt_filter_cmp(const struct dt_pcb *dp, unsigned int cpu,
    const struct dtioc_filter_term *t, const struct dt_evt *src,
    bool *unsure)
{
	int64_t v;
	bool eq;

	if (t->dtft_field == DTF_COMM) {
		/* Unknown to us, so not ours to reject. */
		if (!(dp->dp_evtflags & DTEVT_EXECNAME) ||
		    !dt_comm_plain(src->dtev_comm)) {
			*unsure = true;
			return true;
		}
		eq = strncmp(src->dtev_comm, t->dtft_str, DTMAXCOMLEN) == 0;
		return t->dtft_op == DTF_OP_EQ ? eq : !eq;
	}
	v = dt_evt_field(dp, cpu, t->dtft_field, t->dtft_flags, src);
	switch (t->dtft_op) {
	case DTF_OP_EQ:
		return v == t->dtft_val;
	case DTF_OP_NE:
		return v != t->dtft_val;
	case DTF_OP_LT:
		return v < t->dtft_val;
	case DTF_OP_LE:
		return v <= t->dtft_val;
	case DTF_OP_GT:
		return v > t->dtft_val;
	default:
		return v >= t->dtft_val;
	}
}

/*
 * Whether dp's filter at the source keeps src (put into ring cpu); when
 * it does, *unsure says whether a comparison it could not judge took
 * part (the program is monotone, negations being in its comparisons: a
 * rejection with such comparisons taken as true is a sure one).  The
 * program was checked by dt_filter_check(): at most DTF_MAXTERMS steps,
 * the stack a bit mask.  Inside rcu_read_lock(), any thread.
 */
static bool
dt_filter_keep(const struct dt_pcb *dp, unsigned int cpu,
    const struct dt_evt *src, bool *unsure)
{
	const struct dtioc_filter *f = dp->dp_filter;
	const struct dtioc_filter_term *t;
	uint64_t stack = 0;
	unsigned int sp = 0, i;
	bool a, b;

	for (i = 0; i < f->dtfl_nterms; i++) {
		t = &f->dtfl_terms[i];
		switch (t->dtft_op) {
		case DTF_OP_AND:
		case DTF_OP_OR:
			a = stack >> (sp - 1) & 1;
			b = stack >> (sp - 2) & 1;
			sp -= 2;
			a = t->dtft_op == DTF_OP_AND ? a && b : a || b;
			break;
		case DTF_OP_CONST:
			a = t->dtft_val != 0;
			break;
		default:
			a = dt_filter_cmp(dp, cpu, t, src, unsure);
			break;
		}
		stack = (stack & ~(1ULL << sp)) | ((uint64_t)a << sp);
		sp++;
	}
	return stack & 1;
}

int
dt_filter_check(const struct dtioc_filter *f)
{
	const struct dtioc_filter_term *t;
	unsigned int sp = 0, i;

	if (f->dtfl_nterms > DTF_MAXTERMS)
		return EINVAL;
	for (i = 0; i < f->dtfl_nterms; i++) {
		t = &f->dtfl_terms[i];
		switch (t->dtft_op) {
		case DTF_OP_AND:
		case DTF_OP_OR:
			if (sp < 2)
				return EINVAL;
			sp--;
			continue;
		case DTF_OP_CONST:
			sp++;
			continue;
		case DTF_OP_EQ:
		case DTF_OP_NE:
			break;
		case DTF_OP_LT:
		case DTF_OP_LE:
		case DTF_OP_GT:
		case DTF_OP_GE:
			if (t->dtft_field == DTF_COMM)
				return EINVAL;
			break;
		default:
			return EINVAL;
		}
		if ((t->dtft_field < DTF_PID || t->dtft_field > DTF_ERRNO) &&
		    (t->dtft_field < DTF_ARG0 ||
		    t->dtft_field >= DTF_ARG0 + DTMAXFUNCARGS))
			return EINVAL;
		if ((t->dtft_flags & ~(t->dtft_field == DTF_COMM ?
		    DTF_F_UNSURE : DTF_F_INT32)) != 0)
			return EINVAL;
		if (t->dtft_field == DTF_COMM &&
		    memchr(t->dtft_str, '\0', DTMAXCOMLEN) == NULL)
			return EINVAL;
		sp++;
	}
	return f->dtfl_nterms == 0 || sp == 1 ? 0 : EINVAL;
}

/*
 * Whether src reaches dp's rings at all: --abi 1.14's filter, then
 * userdt's filter at the source, which counts what it rejects; *unsure
 * as dt_filter_keep() says it.
 */
static bool
dt_pcb_keep(struct dt_pcb *dp, unsigned int cpu, const struct dt_evt *src,
    bool *unsure)
{
	struct dt_softc *sc = dp->dp_sc;

	*unsure = false;
	if (dt_abi == DT_ABI_1_14 && !dt_pcb_keep14(dp, src))
		return false;
	if (dp->dp_filter != NULL &&
	    !dt_filter_keep(dp, cpu % sc->ds_nrings, src, unsure)) {
		dt_ring_count_filtered(&sc->ds_rings[cpu % sc->ds_nrings], 1);
		return false;
	}
	return true;
}

bool
dt_filter_hascomm(const struct dtioc_filter *f)
{
	unsigned int i;

	for (i = 0; i < f->dtfl_nterms; i++)
		if (f->dtfl_terms[i].dtft_field == DTF_COMM &&
		    (f->dtfl_terms[i].dtft_op == DTF_OP_EQ ||
		    f->dtfl_terms[i].dtft_op == DTF_OP_NE))
			return true;
	return false;
}

bool
dt_pcb_folds(const struct dt_pcb *dp, const struct dt_evt *src)
{
	return dp->dp_agg != NULL && (!dp->dp_fcomm ||
	    ((dp->dp_evtflags & DTEVT_EXECNAME) &&
	    dt_comm_plain(src->dtev_comm)));
}

bool
dt_probe_folds(struct dt_probe *dtp, const struct dt_evt *src)
{
	struct dt_pcb *dp;
	bool folds = true;

	rcu_read_lock();
	cds_list_for_each_entry_rcu(dp, &dtp->dtp_pcbs, dp_pnext)
		if (!dt_pcb_folds(dp, src)) {
			folds = false;
			break;
		}
	rcu_read_unlock();
	return folds;
}

/*
 * dt_pcb_ring_put() of an event dt_pcb_keep() kept, followed by its
 * nmore continuation records (DTEVT_DEEPSTACK) when more is not NULL.
 */
static int
dt_pcb_ring_put_kept(struct dt_pcb *dp, unsigned int cpu,
    const struct dt_evt *src, const struct dt_evt *more, unsigned int nmore)
{
	struct dt_softc *sc = dp->dp_sc;
	uint64_t flags = dp->dp_evtflags, nskip;
	int error;

	cpu %= sc->ds_nrings;
	/*
	 * Injected losses go to the counters a real loss goes to, so
	 * DTIOCGSTATS accounts for them exactly as for real ones.
	 */
	switch (dt_inject_event(&sc->ds_inj, &nskip)) {
	case DT_INJ_DROP:
		dt_ring_count(&sc->ds_rings[cpu], 1, 0, 0);
		return ENOBUFS;
	case DT_INJ_RECUR:
		dt_ring_count(&sc->ds_rings[cpu], 0, 0, 1);
		return ENOBUFS;
	case DT_INJ_PUT:
		if (nskip != 0)
			dt_ring_count(&sc->ds_rings[cpu], 0, nskip, 0);
		break;
	}
	if ((dp->dp_dtp->dtp_argsflag & ~dp->dp_evtflags) == 0)
		flags |= DT_RING_ARGS;
	if (dp->dp_dtp->dtp_lat)
		flags |= DT_RING_NORV1;
	/* A kernel stack is never passed off as strings. */
	if (!dp->dp_dtp->dtp_strings)
		flags &= ~(uint64_t)DTEVT_STRINGS;
	if (more != NULL)
		error = dt_ring_put_more(&sc->ds_rings[cpu],
		    dp->dp_dtp->dtp_pbn, cpu, flags, src, more, nmore);
	else
		error = dt_ring_put(&sc->ds_rings[cpu], dp->dp_dtp->dtp_pbn,
		    cpu, flags, src);
	if (error == 0 && dt_seq_putting_late())
		dt_ring_count_late(&sc->ds_rings[cpu]);
	/*
	 * A reader sets ds_sleeping before it looks at the rings under
	 * their locks, and we look at it after our unlock: one of us sees
	 * the other, so no wakeup is lost (see dt_dev_read()).
	 */
	if (atomic_load_explicit(&sc->ds_sleeping, memory_order_relaxed))
		dt_wakeup_schedule(sc);
	return error;
}

int
dt_pcb_ring_put(struct dt_pcb *dp, unsigned int cpu, const struct dt_evt *src)
{
	bool unsure;

	/* Filtered out: as if the probe had not fired for this open. */
	if (!dt_pcb_keep(dp, cpu, src, &unsure))
		return 0;
	/*
	 * Aggregated at the source: folded, no ring slot.  An event the
	 * filter could not judge goes to the reader as a record, and the
	 * reader's own filter decides (DTF_F_UNSURE).
	 */
	if (dp->dp_agg != NULL && !unsure)
		return dt_agg_put(dp, cpu, src, NULL, NULL);
	return dt_pcb_ring_put_kept(dp, cpu, src, NULL, 0);
}

/*
 * The first STACKTRACE_MAX frames of ds, with its whole depth; ds NULL:
 * st as the provider filled it (a syscall event's kernel stack is its
 * string area, dtvar.h).
 */
static void
dt_deep_head(struct stacktrace *st, const struct dt_deepstack *ds,
    bool deep)
{
	unsigned int n = 0;

	if (ds == NULL) {
		if (st->st_count > STACKTRACE_MAX)
			st->st_count = STACKTRACE_MAX;
		return;
	}
	memset(st, 0, sizeof(*st));
	n = ds->ds_count < DTEV_DEEP_MAX ? ds->ds_count : DTEV_DEEP_MAX;
	memcpy(st->st_pc, ds->ds_pc, (n < STACKTRACE_MAX ? n :
	    STACKTRACE_MAX) * sizeof(st->st_pc[0]));
	st->st_count = deep ? n : (n < STACKTRACE_MAX ? n : STACKTRACE_MAX);
}

int
dt_pcb_ring_put_deep(struct dt_pcb *dp, unsigned int cpu,
    const struct dt_evt *src, const struct dt_deepstack *k,
    const struct dt_deepstack *u)
{
	struct dt_evt ev, more[DTEV_MORE_RECS(DTEV_DEEP_MAX, DTEV_DEEP_MAX)];
	uint64_t flags = dp->dp_evtflags;
	unsigned int nmore, w = 0, i;
	uint64_t *pcs;
	bool unsure;

	/*
	 * No deep stack: the plain put (the ring cuts src's stacks to
	 * STACKTRACE_MAX as dt_deep_head() would), so callers need not
	 * tell the two apart.
	 */
	if (k == NULL && u == NULL)
		return dt_pcb_ring_put(dp, cpu, src);
	/* Filtered out, with its continuation records: nothing to build. */
	if (!dt_pcb_keep(dp, cpu, src, &unsure))
		return 0;
	if (dp->dp_agg != NULL && !unsure)
		return dt_agg_put(dp, cpu, src, k, u);
	ev = *src;
	dt_deep_head(&ev.dtev_kstack, k, flags & DTEVT_DEEPSTACK);
	dt_deep_head(&ev.dtev_ustack, u, flags & DTEVT_DEEPSTACK);
	nmore = DTEV_MORE_RECS((flags & DTEVT_KSTACK) ?
	    ev.dtev_kstack.st_count : 0, (flags & DTEVT_USTACK) ?
	    ev.dtev_ustack.st_count : 0);
	if (!(flags & DTEVT_DEEPSTACK) || nmore == 0)
		return dt_pcb_ring_put_kept(dp, cpu, &ev, NULL, 0);

	/* the frames past the first STACKTRACE_MAX: kernel's, then user's */
	memset(more, 0, nmore * sizeof(more[0]));
	for (i = 0; i < nmore; i++) {
		more[i].dtev_pid = src->dtev_pid;
		more[i].dtev_tid = src->dtev_tid;
		more[i].dtev_tsp = src->dtev_tsp;
	}
	if (flags & DTEVT_KSTACK)
		for (i = STACKTRACE_MAX; i < ev.dtev_kstack.st_count; i++, w++) {
			pcs = DTEV_MORE_PCS(&more[w / DTEV_MORE_NPC]);
			pcs[w % DTEV_MORE_NPC] = k->ds_pc[i];
		}
	if (flags & DTEVT_USTACK)
		for (i = STACKTRACE_MAX; i < ev.dtev_ustack.st_count; i++, w++) {
			pcs = DTEV_MORE_PCS(&more[w / DTEV_MORE_NPC]);
			pcs[w % DTEV_MORE_NPC] = u->ds_pc[i];
		}
	/* Injected losses, arguments and strings as any other event's. */
	return dt_pcb_ring_put_kept(dp, cpu, &ev, more, nmore);
}

bool
dt_probe_wanted(struct dt_probe *dtp, unsigned int cpu,
    const struct dt_evt *src)
{
	struct dt_pcb *dp;
	bool want = false, unsure;

	rcu_read_lock();
	cds_list_for_each_entry_rcu(dp, &dtp->dtp_pcbs, dp_pnext) {
		if (dt_abi == DT_ABI_1_14 && !dt_pcb_keep14(dp, src))
			continue;
		if (dp->dp_filter == NULL || dt_filter_keep(dp,
		    cpu % dp->dp_sc->ds_nrings, src, &unsure)) {
			want = true;
			break;
		}
	}
	if (!want)
		cds_list_for_each_entry_rcu(dp, &dtp->dtp_pcbs, dp_pnext)
			(void)dt_pcb_keep(dp, cpu, src, &unsure);
	rcu_read_unlock();
	return want;
}

bool
dt_pcb_wanted(struct dt_pcb *dp, unsigned int cpu, const struct dt_evt *src)
{
	bool unsure;

	return dt_pcb_keep(dp, cpu, src, &unsure);
}

unsigned int
dt_probe_emit(struct dt_probe *dtp, unsigned int cpu, const struct dt_evt *src)
{
	return dt_probe_emit_deep(dtp, cpu, src, NULL);
}

unsigned int
dt_probe_emit_deep(struct dt_probe *dtp, unsigned int cpu,
    const struct dt_evt *src, const struct dt_deepstack *u)
{
	struct dt_pcb *dp;
	unsigned int drops = 0;

	rcu_read_lock();
	cds_list_for_each_entry_rcu(dp, &dtp->dtp_pcbs, dp_pnext) {
		if (dt_pcb_ring_put_deep(dp, cpu, src, NULL, u) != 0)
			drops++;
	}
	rcu_read_unlock();
	return drops;
}

void
dt_pcb_count_skiptick(struct dt_pcb *dp, unsigned int cpu, uint64_t n)
{
	struct dt_softc *sc = dp->dp_sc;

	dt_ring_count(&sc->ds_rings[cpu % sc->ds_nrings], 0, n, 0);
}

void
dt_pcb_count_recurevt(struct dt_pcb *dp, unsigned int cpu, uint64_t n)
{
	struct dt_softc *sc = dp->dp_sc;

	dt_ring_count(&sc->ds_rings[cpu % sc->ds_nrings], 0, 0, n);
}

void
dt_pcb_count_dropevt(struct dt_pcb *dp, unsigned int cpu, uint64_t n)
{
	struct dt_softc *sc = dp->dp_sc;

	dt_ring_count(&sc->ds_rings[cpu % sc->ds_nrings], n, 0, 0);
}

void
dt_pcb_count_filtevt(struct dt_pcb *dp, unsigned int cpu, uint64_t n)
{
	struct dt_softc *sc = dp->dp_sc;

	dt_ring_count_filtered(&sc->ds_rings[cpu % sc->ds_nrings], n);
}
