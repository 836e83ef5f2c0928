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
 * Filters at the source: the part of a probe's rule filters that dtd
 * can evaluate before a ring put (dtvar.h, DTIOCPRBFILTER).
 *
 * What is pushed may only remove events every rule of the probe would
 * reject, never one a rule would keep: btrace still applies each filter
 * whole, so the output does not depend on what was pushed (design
 * decision 19).  A sub-expression dtd cannot evaluate stands for "true"
 * (keep): dropped from an &&, it makes an || unpushable.  Negation is
 * taken down to the comparisons, which dtd evaluates exactly, or as
 * "keep" where it cannot tell (comm it does not see as btrace would).
 *
 * Single-threaded, as the rest of btrace's setup.
 */
#include <sys/ioctl.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

static int	push_any;	/* a filter was pushed: -v reports dtd's count */
static int	push_loose;	/* what was pushed keeps more than the filter */
static int	push_unsure;	/* comm as DTF_F_UNSURE (push_exact()) */

/* The comparison that is true exactly when op's is false. */
static int
push_negop(int op)
{
	switch (op) {
	case DTF_OP_EQ:	return DTF_OP_NE;
	case DTF_OP_NE:	return DTF_OP_EQ;
	case DTF_OP_LT:	return DTF_OP_GE;
	case DTF_OP_LE:	return DTF_OP_GT;
	case DTF_OP_GT:	return DTF_OP_LE;
	default:	return DTF_OP_LT;	/* GE */
	}
}

/* c OP field as field OP' c. */
static int
push_mirror(int op)
{
	switch (op) {
	case DTF_OP_LT:	return DTF_OP_GT;
	case DTF_OP_LE:	return DTF_OP_GE;
	case DTF_OP_GT:	return DTF_OP_LT;
	case DTF_OP_GE:	return DTF_OP_LE;
	default:	return op;
	}
}

static int
push_cmpop(int op)
{
	switch (op) {
	case OP_EQ:	return DTF_OP_EQ;
	case OP_NE:	return DTF_OP_NE;
	case OP_LT:	return DTF_OP_LT;
	case OP_LE:	return DTF_OP_LE;
	case OP_GT:	return DTF_OP_GT;
	case OP_GE:	return DTF_OP_GE;
	}
	return 0;
}

/* An integer literal, negative ones as the parser may leave them. */
static int
push_intconst(const struct bt_expr *e, long *v)
{
	if (e->be_kind == E_INT) {
		*v = e->be_int;
		return 1;
	}
	if (e->be_kind == E_UNOP && e->be_op == OP_NEG &&
	    e->be_left->be_kind == E_INT) {
		*v = (long)(0UL - (unsigned long)e->be_left->be_int);
		return 1;
	}
	return 0;
}

/*
 * The dtd field of builtin e on probe pbn, with its flags: 0 when dtd
 * has none that reads as btrace's (uid, gid, cgroup: /proc at read
 * time; nsecs; stacks; probe is folded by the caller).
 */
static int
push_field(int fd, const struct bt_expr *e, uint32_t pbn, uint8_t *flags)
{
	struct dt_evt ev;
	const char *type;
	int n;

	*flags = 0;
	if (e->be_kind != E_BUILTIN)
		return 0;
	switch (e->be_op) {
	case B_PID:	return DTF_PID;
	case B_TID:	return DTF_TID;
	case B_CPU:	return DTF_CPU;
	case B_RETVAL:	return DTF_RETVAL;
	case B_ERRNO:	return DTF_ERRNO;
	case B_COMM:	return DTF_COMM;
	}
	if (e->be_op < B_ARG0 || e->be_op > B_ARG9)
		return 0;
	n = e->be_op - B_ARG0;
	/* an "int" argument reads as a C int would (builtin()) */
	dtai_cache(fd, &dt_dtpis[pbn - 1]);
	memset(&ev, 0, sizeof(ev));
	ev.dtev_pbn = pbn;
	type = dev_argstr(&ev, n);
	if (type != NULL && strcmp(type, "int") == 0)
		*flags = DTF_F_INT32;
	return DTF_ARG0 + n;
}

static int
push_emit(struct dtioc_filter *f, struct dtioc_filter_term t)
{
	if (f->dtfl_nterms == DTF_MAXTERMS)
		return 0;
	f->dtfl_terms[f->dtfl_nterms++] = t;
	return 1;
}

static int
push_const(struct dtioc_filter *f, int truth)
{
	struct dtioc_filter_term t;

	memset(&t, 0, sizeof(t));
	t.dtft_op = DTF_OP_CONST;
	t.dtft_val = truth;
	return push_emit(f, t);
}

/* A comparison of a builtin with a literal, or 0. */
static int
push_cmp(int fd, const struct bt_expr *e, uint32_t pbn, int neg,
    struct dtioc_filter *f)
{
	const struct bt_expr *fe = e->be_left, *ce = e->be_right;
	struct dtioc_filter_term t;
	struct dtioc_probe_info *pi;
	int op = push_cmpop(e->be_op), field;
	uint8_t flags;
	long v;

	if (op == 0)
		return 0;
	if (fe->be_kind != E_BUILTIN) {
		fe = e->be_right;
		ce = e->be_left;
		op = push_mirror(op);
	}
	if (fe->be_kind != E_BUILTIN)
		return 0;
	if (neg)
		op = push_negop(op);
	memset(&t, 0, sizeof(t));
	t.dtft_op = (uint8_t)op;
	if (fe->be_op == B_PROBE) {
		/* one probe per filter: probe == "..." is known now */
		if (ce->be_kind != E_STR ||
		    (op != DTF_OP_EQ && op != DTF_OP_NE))
			return 0;
		pi = &dt_dtpis[pbn - 1];
		v = strcmp(tmp_printf("%.16s:%s:%.16s", pi->dtpi_prov,
		    dtpi_func(pi), pi->dtpi_name), ce->be_str) == 0;
		return push_const(f, op == DTF_OP_EQ ? v : !v);
	}
	if ((field = push_field(fd, fe, pbn, &flags)) == 0)
		return 0;
	t.dtft_field = (uint8_t)field;
	t.dtft_flags = flags;
	if (field == DTF_COMM) {
		/* strcmp() equality with a string dtd can hold whole */
		if (ce->be_kind != E_STR ||
		    (op != DTF_OP_EQ && op != DTF_OP_NE) ||
		    strlen(ce->be_str) >= sizeof(t.dtft_str))
			return 0;
		memcpy(t.dtft_str, ce->be_str, strlen(ce->be_str) + 1);
		/*
		 * dtd keeps a comm it cannot see as btrace would: loose,
		 * unless it sends those events here, to the rule's filter.
		 */
		if (push_unsure)
			t.dtft_flags |= DTF_F_UNSURE;
		else
			push_loose = 1;
		return push_emit(f, t);
	}
	/* a string on either side makes btrace compare strings */
	if (!push_intconst(ce, &v))
		return 0;
	t.dtft_val = v;
	return push_emit(f, t);
}

/*
 * Append to f a program that is true whenever e (negated if neg) is
 * true on probe pbn: 1, or 0 with f as it was when e cannot be pushed.
 */
static int
push_expr(int fd, const struct bt_expr *e, uint32_t pbn, int neg,
    struct dtioc_filter *f)
{
	struct dtioc_filter_term t;
	uint32_t n0 = f->dtfl_nterms;
	int and, l, r;
	uint8_t flags;
	long v;

	memset(&t, 0, sizeof(t));
	switch (e->be_kind) {
	case E_INT:
		return push_const(f, (e->be_int != 0) != neg);
	case E_UNOP:
		if (e->be_op == OP_NOT)
			return push_expr(fd, e->be_left, pbn, !neg, f);
		if (push_intconst(e, &v))
			return push_const(f, (v != 0) != neg);
		return 0;
	case E_BUILTIN:
		/* an integer builtin as a condition: != 0 */
		if (e->be_op == B_COMM ||
		    push_field(fd, e, pbn, &flags) == 0)
			return 0;
		t.dtft_op = neg ? DTF_OP_EQ : DTF_OP_NE;
		t.dtft_field = (uint8_t)push_field(fd, e, pbn, &t.dtft_flags);
		return push_emit(f, t);
	case E_BINOP:
		break;
	default:
		return 0;
	}
	if (e->be_op != OP_LAND && e->be_op != OP_LOR) {
		if (push_cmp(fd, e, pbn, neg, f))
			return 1;
		f->dtfl_nterms = n0;
		return 0;
	}
	/* De Morgan: !(a && b) is !a || !b */
	and = (e->be_op == OP_LAND) != neg;
	l = push_expr(fd, e->be_left, pbn, neg, f);
	if (!l && !and)
		return 0;
	r = push_expr(fd, e->be_right, pbn, neg, f);
	if (!and && !r) {
		f->dtfl_nterms = n0;
		return 0;
	}
	if (!l || !r)
		push_loose = 1;
	if (l && r) {
		t.dtft_op = and ? DTF_OP_AND : DTF_OP_OR;
		if (!push_emit(f, t)) {
			/* no room for the operator: keep the left side */
			f->dtfl_nterms = n0;
			push_loose = 1;
			if (!and)
				return 0;
			return push_expr(fd, e->be_left, pbn, neg, f);
		}
	}
	return l || r;
}

/*
 * -p keeps one process's events, an interval's too (rules_apply()):
 * AND pid == its pid into f where there is room, else leave f as the
 * rules' alone, which keeps more.
 */
static void
push_pid(struct dtioc_filter *f)
{
	struct dtioc_filter_term t, and;
	uint32_t n = f->dtfl_nterms;

	if (g_pidfilter <= 0 || strncmp(dt_dtpis[f->dtfl_pbn - 1].dtpi_prov,
	    "interval", DTNAMESIZE) == 0)
		return;
	memset(&t, 0, sizeof(t));
	t.dtft_op = DTF_OP_EQ;
	t.dtft_field = DTF_PID;
	t.dtft_val = g_pidfilter;
	memset(&and, 0, sizeof(and));
	and.dtft_op = DTF_OP_AND;
	if (!push_emit(f, t) || (n > 0 && !push_emit(f, and)))
		f->dtfl_nterms = n;
}

void
push_probe(int fd, uint32_t pbn)
{
	struct dtioc_filter f;
	struct dtioc_filter_term or;
	struct bt_rule *r;
	struct bt_probe *bp;
	const char *env = getenv("BTRACE_NOPUSH");
	int nrules = 0, whole = 1;

	if (env != NULL && *env != '\0' && strcmp(env, "0") != 0)
		return;
	if (pbn == 0 || pbn > dt_ndtpi)
		return;
	memset(&f, 0, sizeof(f));
	memset(&or, 0, sizeof(or));
	or.dtft_op = DTF_OP_OR;
	f.dtfl_pbn = pbn;
	/* the OR of every rule's pushable part: one without, nothing */
	for (r = g_rules; r != NULL; r = r->br_next) {
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_type == P_PROBE && bp->bp_pbn == pbn)
				break;
		if (bp == NULL)
			continue;
		if (r->br_filter == NULL ||
		    !push_expr(fd, r->br_filter, pbn, 0, &f) ||
		    (nrules++ > 0 && !push_emit(&f, or))) {
			whole = 0;
			break;
		}
	}
	if (!whole || nrules == 0)
		f.dtfl_nterms = 0;
	push_pid(&f);
	if (f.dtfl_nterms == 0)
		return;
	if (ioctl(fd, DTIOCPRBFILTER, &f) == -1) {
		/* OpenBSD's dt(4), an older dtd: btrace filters alone */
		if (errno != ENOTTY && errno != EINVAL)
			warn("DTIOCPRBFILTER");
		return;
	}
	push_any = 1;
	if (g_verbose > 1)
		fprintf(stderr, "debug: probe pbn %u: %u filter terms pushed "
		    "to dtd\n", pbn, f.dtfl_nterms);
}

void
push_report(int fd)
{
	struct dtioc_statx sx;

	if (!push_any)
		return;
	memset(&sx, 0, sizeof(sx));
	if (ioctl(fd, DTIOCGSTATSX, &sx) == -1) {
		warn("DTIOCGSTATSX");
		return;
	}
	fprintf(stderr, "%llu events filtered by dtd\n",
	    (unsigned long long)sx.dtsx_filtevt);
}

int
push_exact(int fd, const struct bt_expr *e, uint32_t pbn, int execname)
{
	struct dtioc_filter f;
	int ok;

	if (pbn == 0 || pbn > dt_ndtpi)
		return 0;
	memset(&f, 0, sizeof(f));
	f.dtfl_pbn = pbn;
	push_loose = 0;
	push_unsure = execname != 0;
	ok = e == NULL || push_expr(fd, e, pbn, 0, &f);
	push_unsure = 0;
	if (!ok || push_loose)
		return 0;
	/*
	 * -p's process too, exact as well: the entries are keyed by pid.
	 * A syscall rule with no filter of its own gets none, not pid's
	 * alone: the hooks count and fold only unfiltered events
	 * themselves (dt(4)), where a filter would make every call a
	 * record.  Any other probe's gets pid's alone, which the kernel
	 * selects by the process's threads (tracepoints, profile) instead
	 * of handing dtd every process's events.
	 */
	if (e != NULL || strncmp(dt_dtpis[pbn - 1].dtpi_prov, "syscall",
	    DTNAMESIZE) != 0)
		push_pid(&f);
	/* the probe's filter already, when push_probe() got there */
	if (ioctl(fd, DTIOCPRBFILTER, &f) == -1)
		return 0;
	push_any = 1;
	return 1;
}
