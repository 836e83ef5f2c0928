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
 * What of a rule dtd can fold (bt_agg.c): the aggregation spec of each
 * statement (DTIOCPRBAGG's), and whether a rule is one dtd may take
 * whole.  Reads the parsed program and the options, writes only the
 * caller's specs.
 *
 * Single-threaded: the main loop, its rules and the end.
 */
#include <string.h>

#include "btrace.h"

/* The DTF_* field of an event builtin, 0 when dtd has none for it. */
int
agg_field(const struct bt_expr *e)
{
	if (e->be_kind != E_BUILTIN)
		return 0;
	switch (e->be_op) {
	case B_PID:	return DTF_PID;
	case B_TID:	return DTF_TID;
	case B_CPU:	return DTF_CPU;
	case B_PROBE:	return DTF_PBN;
	case B_COMM:	return DTF_COMM;
	case B_RETVAL:	return DTF_RETVAL;
	case B_ERRNO:	return DTF_ERRNO;
	case B_KSTACK:	return DTF_KSTACK;	/* kstack(N) too: the */
	case B_USTACK:	return DTF_USTACK;	/* whole stack is kept */
	}
	if (e->be_op >= B_ARG0 && e->be_op <= B_ARG9)
		return DTF_ARG0 + (e->be_op - B_ARG0);
	return 0;
}

int
agg_func(int agg)
{
	switch (agg) {
	case A_COUNT:	return DTA_COUNT;
	case A_SUM:	return DTA_SUM;
	case A_MIN:	return DTA_MIN;
	case A_MAX:	return DTA_MAX;
	case A_AVG:
	case A_STATS:	return DTA_AVG;
	case A_HIST:	return DTA_HIST;
	case A_LHIST:	return DTA_LHIST;
	}
	return 0;
}

/* Whether e, or anything below or after it, reads bv. */
static int
expr_uses(const struct bt_expr *e, const struct bt_var *bv)
{
	for (; e != NULL; e = e->be_next)
		if (e->be_var == bv || expr_uses(e->be_left, bv) ||
		    expr_uses(e->be_right, bv) || expr_uses(e->be_third, bv))
			return 1;
	return 0;
}

/*
 * Whether some statement reads bv or writes it otherwise than by an
 * aggregation, a print, clear, zero or delete (which merge first).
 */
static int
stmt_uses(const struct bt_stmt *s, const struct bt_var *bv)
{
	for (; s != NULL; s = s->bs_next) {
		if (expr_uses(s->bs_keys, bv) || expr_uses(s->bs_expr, bv) ||
		    stmt_uses(s->bs_body, bv) || stmt_uses(s->bs_else, bv))
			return 1;
		if (s->bs_var == bv && s->bs_kind != S_AGG &&
		    s->bs_kind != S_PRINT && s->bs_kind != S_CLEAR &&
		    s->bs_kind != S_ZERO && s->bs_kind != S_DELETE)
			return 1;
	}
	return 0;
}

int
agg_var_used(const struct bt_var *bv)
{
	struct bt_rule *r;

	for (r = g_rules; r != NULL; r = r->br_next)
		if (expr_uses(r->br_filter, bv) || stmt_uses(r->br_action, bv))
			return 1;
	return 0;
}

int
agg_haskey(const struct dtioc_aggspec *as, int f)
{
	unsigned int i;

	for (i = 0; i < as->dtas_nkeys; i++)
		if (as->dtas_keys[i] == f)
			return 1;
	return 0;
}

/* The spec of one statement, or 0 when dtd cannot fold it. */
int
agg_stmt_spec(const struct bt_stmt *s, struct dtioc_aggspec *as)
{
	const struct bt_expr *k;
	int f;

	memset(as, 0, sizeof(*as));
	if (s->bs_kind != S_AGG || (as->dtas_func = (uint8_t)agg_func(
	    s->bs_agg)) == 0 || agg_var_used(s->bs_var))
		return 0;
	for (k = s->bs_keys; k != NULL; k = k->be_next) {
		if ((f = agg_field(k)) == 0)
			return 0;
		/* one aggregation is one probe's: its name needs no key */
		if (f == DTF_PBN)
			continue;
		if (agg_haskey(as, f))
			continue;
		if (as->dtas_nkeys == DTA_MAXKEYS)
			return 0;
		as->dtas_keys[as->dtas_nkeys++] = (uint8_t)f;
	}
	/*
	 * A user stack's addresses are its process's: keyed by pid too,
	 * an entry's stack is symbolised in its process, as an event's.
	 */
	if (agg_haskey(as, DTF_USTACK) && !agg_haskey(as, DTF_PID)) {
		if (as->dtas_nkeys == DTA_MAXKEYS)
			return 0;
		as->dtas_keys[as->dtas_nkeys++] = DTF_PID;
	}
	/*
	 * -p and -c keep one process's or one tree's events, which dtd
	 * cannot tell: keyed by pid too, each entry is kept or left out
	 * as its process's events would be (agg_keep()).
	 */
	if ((g_pidfilter > 0 || g_treefilter) && !agg_haskey(as, DTF_PID)) {
		if (as->dtas_nkeys == DTA_MAXKEYS)
			return 0;
		as->dtas_keys[as->dtas_nkeys++] = DTF_PID;
	}
	if (s->bs_agg != A_COUNT && lat_stmt(s))
		as->dtas_vfield = DTF_LAT;	/* nsecs - @s[tid] */
	else if (s->bs_agg != A_COUNT) {
		f = agg_field(s->bs_expr);
		if (f == 0 || f == DTF_COMM || f == DTF_PBN ||
		    f == DTF_KSTACK || f == DTF_USTACK)
			return 0;
		as->dtas_vfield = (uint8_t)f;
	}
	if (s->bs_agg == A_LHIST) {
		as->dtas_lmin = s->bs_var->bv_lmin;
		as->dtas_lmax = s->bs_var->bv_lmax;
		as->dtas_lstep = s->bs_var->bv_lstep;
	}
	return 1;
}

/* An argument the rule reads as a C int (builtin()): DTF_F_INT32. */
void
agg_vflags(int fd, struct dtioc_aggspec *as, uint32_t pbn)
{
	struct dt_evt ev;
	const char *type;

	as->dtas_vflags = 0;
	if (as->dtas_vfield < DTF_ARG0)
		return;
	dtai_cache(fd, &dt_dtpis[pbn - 1]);
	memset(&ev, 0, sizeof(ev));
	ev.dtev_pbn = pbn;
	type = dev_argstr(&ev, as->dtas_vfield - DTF_ARG0);
	if (type != NULL && strcmp(type, "int") == 0)
		as->dtas_vflags = DTF_F_INT32;
}

/*
 * The statements of a rule's action, blocks opened, empty ones left out,
 * into out[DTA_PCBAGGS]: how many, or -1 for more.
 */
int
agg_stmts(struct bt_stmt *s, struct bt_stmt **out, int n)
{
	for (; s != NULL && n >= 0; s = s->bs_next) {
		/* a timed call's delete(@s[tid]): nothing left to delete */
		if (s->bs_kind == S_NOP || lat_delete(s))
			continue;
		if (s->bs_kind == S_BLOCK) {
			n = agg_stmts(s->bs_body, out, n);
			continue;
		}
		if (n == DTA_PCBAGGS)
			return -1;
		out[n++] = s;
	}
	return n;
}

/* Whether r only aggregates, on probes of its own: 1 with its specs. */
int
agg_rule_ok(const struct bt_rule *r)
{
	const struct bt_rule *r2;
	const struct bt_probe *bp, *bp2;
	struct bt_stmt *s[DTA_PCBAGGS];
	struct dtioc_aggspec as;
	int n, i;

	if ((n = agg_stmts(r->br_action, s, 0)) <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!agg_stmt_spec(s[i], &as))
			return 0;
	for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
		if (bp->bp_type != P_PROBE)
			return 0;
		if (bp->bp_wild == 2)
			continue;
		for (r2 = g_rules; r2 != NULL; r2 = r2->br_next)
			for (bp2 = r2->br_probes; r2 != r && bp2 != NULL;
			    bp2 = bp2->bp_next)
				if (bp2->bp_type == P_PROBE &&
				    bp2->bp_wild != 2 &&
				    bp2->bp_pbn == bp->bp_pbn)
					return 0;
	}
	return 1;
}
