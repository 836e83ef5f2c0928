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
 * Aggregations in the hooks (issue 22): a pcb whose aggregations a
 * traced process can fold exactly as dtd folds its records (keys and a
 * value the hook has: the thread, its name, the CPU, an entry's
 * arguments, the return value, errno, the user stack; dtd adds the pid
 * and the probe; dt_pcb_srcagg_ok()) gets a slot of the tracees'
 * tables for each of them (userdt/udt_sagg.h), described as dtd folds.
 * A duration (DTF_LAT) is measured by the hooks alone: its entry probe
 * is marked for stamps by the provider (dt_sys_update()).
 * Pure counts keep their own, cheaper, path (UDT_EN_COUNT) and take no
 * slot.  What does not fit (no slot left, an lhist of more buckets than
 * a slot holds) stays with the records.
 *
 * Under the provider's lock (dtpv_start, dtpv_stop).
 */
#include <string.h>

#include <userdt/udt_sagg.h>

#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_sys_agg.h"

/* as's description for a hook, false when a hook cannot fold it. */
static bool
dt_sys_agg_spec(const struct dt_aggspec *as, struct udt_sagg_spec *sp)
{
	const struct dtioc_aggspec *s = dt_aggspec_req(as);
	uint64_t nb;

	unsigned int i;
	uint8_t f;

	memset(sp, 0, sizeof(*sp));
	sp->ss_func = s->dtas_func;
	sp->ss_vflags = s->dtas_vflags;
	for (i = 0; i < s->dtas_nkeys && i < DTA_MAXKEYS; i++) {
		switch ((f = s->dtas_keys[i])) {
		case DTF_PID:
		case DTF_PBN:
			break;		/* dtd's own */
		case DTF_TID:
			sp->ss_keys |= UDT_SK_TID;
			break;
		case DTF_COMM:
			sp->ss_keys |= UDT_SK_COMM;
			break;
		case DTF_CPU:
			sp->ss_keys |= UDT_SK_CPU;
			break;
		case DTF_RETVAL:
			sp->ss_keys |= UDT_SK_RETVAL;
			break;
		case DTF_ERRNO:
			sp->ss_keys |= UDT_SK_ERRNO;
			break;
		case DTF_USTACK:
			/* dt_pcb_srcagg_ok(): no deeper than a record's */
			sp->ss_keys |= UDT_SK_USTACK;
			break;
		default:
			if (f < DTF_ARG0 || f >= DTF_ARG0 + UDT_NARGS)
				return false;
			sp->ss_keys |= UDT_SK_ARG0 << (f - DTF_ARG0);
			break;
		}
	}
	if (s->dtas_func != DTA_COUNT) {
		/* dtvar.h's field numbers are the wire's */
		if (s->dtas_vfield != DTF_RETVAL &&
		    s->dtas_vfield != DTF_ERRNO && s->dtas_vfield != DTF_LAT &&
		    (s->dtas_vfield < DTF_ARG0 ||
		    s->dtas_vfield >= DTF_ARG0 + UDT_NARGS))
			return false;
		sp->ss_vfield = s->dtas_vfield;
	}
	switch (s->dtas_func) {
	case DTA_HIST:
		sp->ss_nbuckets = UDT_SAGG_HIST_NB;
		break;
	case DTA_LHIST:
		nb = dt_agg_lhist_nb(s);
		if (nb < 3 || nb > UDT_SAGG_NBUCKETS)
			return false;
		sp->ss_nbuckets = (uint8_t)nb;
		sp->ss_lq0 = s->dtas_lmin / s->dtas_lstep;
		sp->ss_lmin = s->dtas_lmin;
		sp->ss_lmax = s->dtas_lmax;
		sp->ss_lstep = s->dtas_lstep;
		break;
	}
	return true;
}

bool
dt_sys_agg_lat(const struct dt_pcb *dp)
{
	const struct dt_aggspec *as;

	for (as = dt_aggspec_next(dp, NULL); as != NULL;
	    as = dt_aggspec_next(dp, as))
		if (dt_aggspec_req(as)->dtas_vfield == DTF_LAT)
			return true;
	return false;
}

uint32_t
dt_sys_agg_take(struct dt_pcb *dp)
{
	const struct dt_aggspec *as;
	struct udt_sagg_spec spec;
	uint32_t mask = 0;
	int s;

	if (!dt_pcb_srcagg_ok(dp) || dt_pcb_count_only(dp))
		return 0;
	for (as = dt_aggspec_next(dp, NULL); as != NULL;
	    as = dt_aggspec_next(dp, as))
		if (!dt_sys_agg_spec(as, &spec))
			return 0;
	for (as = dt_aggspec_next(dp, NULL); as != NULL;
	    as = dt_aggspec_next(dp, as)) {
		(void)dt_sys_agg_spec(as, &spec);
		if ((s = dt_ingest_sagg_take(dp, as, &spec)) < 0) {
			dt_ingest_sagg_give(mask);
			return 0;
		}
		mask |= 1u << s;
	}
	return mask;
}
