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
 * Filters handed further down than dtd (dt_prov.h, struct dt_fsrc): the
 * OR of the DTIOCPRBFILTER programs of a probe's recording pcbs, each
 * read as its own reader would (dt_probe.c's dt_filter_cmp()), with
 * what only dtd knows folded into constants, and what the source cannot
 * evaluate taken as true.  Every program is monotone (no negation), so
 * a comparison replaced by "true" only ever keeps more: the source never
 * drops an event some open's own filter keeps, and dtd still applies
 * each open's filter to what comes.
 */
#include <stdatomic.h>
#include <string.h>

#include "dt_softc.h"

/* A value on the folding stack: a constant, or terms of fs_terms. */
struct dt_fnode {
	int		fn_kind;	/* DT_FSRC_* */
	unsigned int	fn_start;	/* its first term, when SOME */
};

void
dt_fsrc_init(struct dt_fsrc *fs)
{
	fs->fs_kind = DT_FSRC_NONE;
	fs->fs_nterms = 0;
	fs->fs_loose = false;
	fs->fs_pid = 0;
}

/* Append a term; false when there is no room. */
static bool
dt_fsrc_emit(struct dt_fsrc *fs, const struct dtioc_filter_term *t)
{
	if (fs->fs_nterms == DT_FSRC_MAXTERMS)
		return false;
	fs->fs_terms[fs->fs_nterms++] = *t;
	return true;
}

/*
 * a OP b for the two nodes on top of the stack, whose terms (if any)
 * end fs_terms, a's before b's.  False when the operator has no room.
 */
static bool
dt_fsrc_join(struct dt_fsrc *fs, struct dt_fnode *a, const struct dt_fnode *b,
    uint8_t op)
{
	struct dtioc_filter_term t;
	int absorb = op == DTF_OP_AND ? DT_FSRC_NONE : DT_FSRC_ALL;

	if (a->fn_kind == absorb || b->fn_kind == absorb) {
		if (a->fn_kind == DT_FSRC_SOME)
			fs->fs_nterms = a->fn_start;
		else if (b->fn_kind == DT_FSRC_SOME)
			fs->fs_nterms = b->fn_start;
		a->fn_kind = absorb;
		return true;
	}
	if (a->fn_kind != DT_FSRC_SOME) {	/* the neutral constant */
		*a = *b;
		return true;
	}
	if (b->fn_kind != DT_FSRC_SOME)
		return true;
	memset(&t, 0, sizeof(t));
	t.dtft_op = op;
	return dt_fsrc_emit(fs, &t);
}

/* The value of t when dtd reads v in its field for this pcb's reader. */
static bool
dt_fsrc_val(const struct dtioc_filter_term *t, int64_t v)
{
	switch (t->dtft_op) {
	case DTF_OP_EQ:	return v == t->dtft_val;
	case DTF_OP_NE:	return v != t->dtft_val;
	case DTF_OP_LT:	return v < t->dtft_val;
	case DTF_OP_LE:	return v <= t->dtft_val;
	case DTF_OP_GT:	return v > t->dtft_val;
	default:	return v >= t->dtft_val;
	}
}

static bool
dt_fsrc_zero(const struct dtioc_filter_term *t)
{
	return dt_fsrc_val(t, 0);
}

/*
 * A comparison of dp's program as the source sees it: a node kind, and
 * in *out the term to emit when SOME.  A comparison taken as true for
 * want of a better answer makes fs loose.
 */
static int
dt_fsrc_term(struct dt_fsrc *fs, const struct dt_pcb *dp,
    const struct dtioc_filter_term *t, dt_fsrc_can_fn can, void *arg,
    struct dtioc_filter_term *out)
{
	struct dt_probe *dtp = dp->dp_dtp;
	bool args = (dtp->dtp_argsflag & ~dp->dp_evtflags) == 0;
	int64_t off;

	*out = *t;
	/* The reader's business, not a source's (dt_pcb_ring_put()). */
	out->dtft_flags &= (uint8_t)~DTF_F_UNSURE;
	switch (t->dtft_field) {
	case DTF_COMM:
		/* dtd passes a comm its reader does not get */
		if (!(dp->dp_evtflags & DTEVT_EXECNAME)) {
			fs->fs_loose = true;
			return DT_FSRC_ALL;
		}
		break;
	case DTF_TID:
		/* the source's tid is the kernel's */
		off = dt_strict ? DT_TID_OFFSET_OPENBSD : 0;
		if (t->dtft_val < INT32_MIN + off || t->dtft_val > INT32_MAX) {
			fs->fs_loose = true;
			return DT_FSRC_ALL;
		}
		out->dtft_val = t->dtft_val - off;
		break;
	case DTF_PID:
		/* a real pid reads the same as 32 or 64 bits */
		if (fs->fs_pid != 0)
			return dt_fsrc_val(t, fs->fs_pid) ? DT_FSRC_ALL :
			    DT_FSRC_NONE;
		break;
	case DTF_CPU:
		break;
	default:	/* arguments, return value, errno */
		if (!args)
			return dt_fsrc_zero(t) ? DT_FSRC_ALL : DT_FSRC_NONE;
		break;
	}
	if (can(dtp, out, arg))
		return DT_FSRC_SOME;
	fs->fs_loose = true;
	return DT_FSRC_ALL;
}

/*
 * dp's program, folded, as one node appended to fs.  Its operand stack
 * was checked by dt_filter_check(): at most DTF_MAXTERMS deep.
 */
static bool
dt_fsrc_pcb(struct dt_fsrc *fs, const struct dt_pcb *dp, dt_fsrc_can_fn can,
    void *arg, struct dt_fnode *res)
{
	const struct dtioc_filter *f = dp->dp_filter;
	const struct dtioc_filter_term *t;
	struct dtioc_filter_term nt;
	struct dt_fnode st[DTF_MAXTERMS];
	unsigned int sp = 0, i;

	for (i = 0; i < f->dtfl_nterms; i++) {
		t = &f->dtfl_terms[i];
		switch (t->dtft_op) {
		case DTF_OP_AND:
		case DTF_OP_OR:
			if (!dt_fsrc_join(fs, &st[sp - 2], &st[sp - 1],
			    t->dtft_op))
				return false;
			sp--;
			continue;
		case DTF_OP_CONST:
			st[sp].fn_kind = t->dtft_val != 0 ? DT_FSRC_ALL :
			    DT_FSRC_NONE;
			break;
		case DTF_OP_EQ:
		case DTF_OP_NE:
		case DTF_OP_LT:
		case DTF_OP_LE:
		case DTF_OP_GT:
		case DTF_OP_GE:
			if (t->dtft_field == DTF_PBN) {
				/* one probe: the comparison is known */
				nt = *t;
				nt.dtft_val = t->dtft_val -
				    (int64_t)dp->dp_dtp->dtp_pbn;
				st[sp].fn_kind = dt_fsrc_zero(&nt) ?
				    DT_FSRC_ALL : DT_FSRC_NONE;
				break;
			}
			st[sp].fn_kind = dt_fsrc_term(fs, dp, t, can, arg, &nt);
			st[sp].fn_start = fs->fs_nterms;
			if (st[sp].fn_kind == DT_FSRC_SOME &&
			    !dt_fsrc_emit(fs, &nt))
				return false;
			break;
		default:
			return false;
		}
		sp++;
	}
	if (sp != 1)
		return false;
	*res = st[0];
	return true;
}

void
dt_fsrc_or_probe(struct dt_fsrc *fs, struct dt_probe *dtp,
    const struct dt_pcb *skip, uint64_t skipflags, dt_fsrc_can_fn can,
    void *arg)
{
	struct dt_fnode acc, one;
	struct dt_pcb *dp;

	if (fs->fs_kind == DT_FSRC_ALL)
		return;
	acc.fn_kind = fs->fs_kind;
	acc.fn_start = 0;
	/* [K]: the pcb lists change under the caller's lock alone */
	cds_list_for_each_entry(dp, &dtp->dtp_pcbs, dp_pnext) {
		/* a pcb its source counts wants no event of the stream */
		if (dp == skip || (dp->dp_evtflags & skipflags) != 0 ||
		    atomic_load_explicit(&dp->dp_srccount,
		    memory_order_relaxed))
			continue;
		one.fn_start = fs->fs_nterms;
		if (dp->dp_filter == NULL || dp->dp_filter->dtfl_nterms == 0 ||
		    !dt_fsrc_pcb(fs, dp, can, arg, &one) ||
		    !dt_fsrc_join(fs, &acc, &one, DTF_OP_OR)) {
			dt_fsrc_init(fs);
			fs->fs_kind = DT_FSRC_ALL;
			fs->fs_loose = dp->dp_filter != NULL &&
			    dp->dp_filter->dtfl_nterms != 0;
			return;
		}
		if (acc.fn_kind == DT_FSRC_ALL)
			break;
	}
	fs->fs_kind = acc.fn_kind;
	if (fs->fs_kind != DT_FSRC_SOME)
		fs->fs_nterms = 0;
}

void
dt_fsrc_of_pcb(struct dt_fsrc *fs, const struct dt_pcb *dp,
    dt_fsrc_can_fn can, void *arg)
{
	dt_fsrc_of_pcb_in(fs, dp, 0, can, arg);
}

void
dt_fsrc_of_pcb_in(struct dt_fsrc *fs, const struct dt_pcb *dp, pid_t pid,
    dt_fsrc_can_fn can, void *arg)
{
	struct dt_fnode one;

	dt_fsrc_init(fs);
	fs->fs_pid = pid;
	if (dp->dp_filter == NULL || dp->dp_filter->dtfl_nterms == 0) {
		fs->fs_kind = DT_FSRC_ALL;
		return;
	}
	if (!dt_fsrc_pcb(fs, dp, can, arg, &one)) {
		dt_fsrc_init(fs);
		fs->fs_pid = pid;
		fs->fs_kind = DT_FSRC_ALL;
		fs->fs_loose = true;
		return;
	}
	fs->fs_kind = one.fn_kind;
	if (fs->fs_kind != DT_FSRC_SOME)
		fs->fs_nterms = 0;
}

/* The first term of the postfix subtree ending at term i, or -1. */
static int
dt_fsrc_pspan(const struct dtioc_filter *f, int i, int depth)
{
	uint8_t op = f->dtfl_terms[i].dtft_op;
	int r;

	if (op != DTF_OP_AND && op != DTF_OP_OR)
		return i;
	if (i < 2 || depth > DTF_MAXTERMS ||
	    (r = dt_fsrc_pspan(f, i - 1, depth + 1)) < 1)
		return -1;
	return dt_fsrc_pspan(f, r - 1, depth + 1);
}

/* N of a conjunct pid == N of the subtree ending at term i, or 0. */
static pid_t
dt_fsrc_pconj(const struct dtioc_filter *f, int i, int depth)
{
	const struct dtioc_filter_term *t = &f->dtfl_terms[i];
	pid_t n;
	int r;

	if (t->dtft_op == DTF_OP_AND) {
		if (i < 2 || depth > DTF_MAXTERMS ||
		    (r = dt_fsrc_pspan(f, i - 1, depth + 1)) < 1)
			return 0;
		if ((n = dt_fsrc_pconj(f, i - 1, depth + 1)) != 0)
			return n;
		return dt_fsrc_pconj(f, r - 1, depth + 1);
	}
	/* a pid as an int or as 64 bits: the same for a real one */
	if (t->dtft_op == DTF_OP_EQ && t->dtft_field == DTF_PID &&
	    t->dtft_val > 0 && t->dtft_val <= INT32_MAX)
		return (pid_t)t->dtft_val;
	return 0;
}

pid_t
dt_fsrc_pid(const struct dt_pcb *dp)
{
	const struct dtioc_filter *f = dp->dp_filter;

	if (f == NULL || f->dtfl_nterms == 0 ||
	    f->dtfl_nterms > DTF_MAXTERMS)
		return 0;
	return dt_fsrc_pconj(f, (int)f->dtfl_nterms - 1, 0);
}
