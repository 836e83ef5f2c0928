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
 * btrace: the parser's statements (blocks, assignments, map functions,
 * control flow) over the expressions of bt_parse_expr.c.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bt_parser.h"

static struct bt_stmt	*parse_stmt(void);

/* printf_check()'s way of saying what is wrong with a format. */
static void
printf_report(const struct bt_pos *pos, const char *msg)
{
	bt_posmsg(pos, "%s", msg);
}

static struct bt_stmt *
snew(enum bt_skind kind, struct bt_token *tk)
{
	struct bt_stmt *s = palloc(sizeof(*s));

	s->bs_kind = kind;
	s->bs_pos = tk->tk_pos;
	return s;
}

/* A block: { stmts } or one statement. */
struct bt_stmt *
parse_block(void)
{
	struct bt_stmt *head = NULL, **tail = &head;
	struct bt_token *tk = peek(0);
	struct bt_stmt *s;

	if (++nesting > MAXDEPTH)
		perror_at(tk, "too deeply nested");
	if (tk->tk_type != '{') {
		s = parse_stmt();
		if (ptype(0) == ';')
			next();
		nesting--;
		return s;
	}
	next();
	while (ptype(0) != '}') {
		if (ptype(0) == ';') {
			next();
			continue;
		}
		if (ptype(0) == T_EOF)
			syntax_error();
		s = parse_stmt();
		*tail = s;
		while (*tail != NULL)
			tail = &(*tail)->bs_next;
	}
	next();
	nesting--;
	s = snew(S_BLOCK, tk);
	s->bs_body = head;
	return s;
}

static const struct {
	const char	*ag_name;
	int		 ag_id;
	int		 ag_nargs;
} aggs[] = {
	{ "count", A_COUNT, 0 }, { "sum", A_SUM, 1 }, { "min", A_MIN, 1 },
	{ "max", A_MAX, 1 }, { "avg", A_AVG, 1 }, { "hist", A_HIST, 1 },
	{ "lhist", A_LHIST, 4 }, { "stats", A_STATS, 1 },
};

static int
agg_class(int agg)
{
	switch (agg) {
	case A_AVG:
		return A_AVG;
	case A_STATS:
		return A_STATS;
	case A_HIST:
		return A_HIST;
	case A_LHIST:
		return A_LHIST;
	default:
		return A_VALUE;
	}
}

static void
map_class(struct bt_var *bv, int agg, struct bt_token *tk)
{
	int cls = agg_class(agg);

	if (bv->bv_agg == A_NONE)
		bv->bv_agg = cls;
	else if (bv->bv_agg != cls)
		semantic_error(&tk->tk_pos, "'@%s' mixes different kinds of "
		    "aggregation", bv->bv_name);
}

/* Errors point at the closing parenthesis, as OpenBSD's. */
static void
lhist_check(struct bt_stmt *s, int nargs)
{
	struct bt_expr *a;
	long v[3] = { 0, 0, 0 };
	int i = 0;

	if (nargs > 4)
		perror_at(peek(0), "too many arguments");
	if (nargs < 4) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%d", 4 - nargs);
		bt_posmsg(&peek(0)->tk_pos, "%s missing arguments", buf);
		perrors++;
		longjmp(perr_jmp, 1);
	}
	for (a = s->bs_expr->be_next; a != NULL; a = a->be_next, i++) {
		if (a->be_kind != E_INT)
			perror_at(peek(0), "type invalid");
		v[i] = a->be_int;
	}
	if (v[0] < 0)
		perror_at(peek(0), "negative minimum");
	if (v[1] <= v[0]) {
		char msg[96];

		snprintf(msg, sizeof(msg), "maximum smaller than minimum "
		    "(%ld < %ld)", v[1], v[0]);
		perror_at(peek(0), msg);
	}
	if (v[2] <= 0)
		perror_at(peek(0), "step must be positive");
	if (s->bs_var->bv_agg == A_LHIST && s->bs_var->bv_lstep != 0 &&
	    (s->bs_var->bv_lmin != v[0] || s->bs_var->bv_lmax != v[1] ||
	    s->bs_var->bv_lstep != v[2]))
		perror_at(peek(0), "lhist ranges of one map differ");
	s->bs_var->bv_lmin = v[0];
	s->bs_var->bv_lmax = v[1];
	s->bs_var->bv_lstep = v[2];
}

static int
assign_op(int tok)
{
	switch (tok) {
	case '=':	return 0;
	case T_ADDEQ:	return OP_ADD;
	case T_SUBEQ:	return OP_SUB;
	case T_MULEQ:	return OP_MUL;
	case T_DIVEQ:	return OP_DIV;
	case T_MODEQ:	return OP_MOD;
	case T_ANDEQ:	return OP_BAND;
	case T_OREQ:	return OP_BOR;
	case T_XOREQ:	return OP_XOR;
	case T_SHLEQ:	return OP_SHL;
	case T_SHREQ:	return OP_SHR;
	default:	return -1;
	}
}

/* @x = ..., @m[k] = ..., $x = ..., with compound and ++/-- forms. */
static struct bt_stmt *
parse_assign(void)
{
	struct bt_token *tk = next(), *optk;
	struct bt_var *bv;
	struct bt_expr *keys = NULL;
	struct bt_stmt *s;
	size_t i;
	int op, n;

	bv = var_get(tk->tk_str, tk->tk_type == T_LVAR);
	if (tk->tk_type == T_GVAR && ptype(0) == '[')
		keys = parse_keys();
	optk = peek(0);
	if (optk->tk_type == T_INC || optk->tk_type == T_DEC) {
		struct bt_expr *one;

		next();
		s = snew(keys != NULL ? S_MAPSTORE : S_STORE, optk);
		s->bs_op = optk->tk_type == T_INC ? OP_ADD : OP_SUB;
		one = enew(E_INT, optk);
		one->be_int = 1;
		s->bs_expr = one;
		goto done;
	}
	op = assign_op(optk->tk_type);
	if (op < 0)
		syntax_error();
	next();
	if (op == 0 && tk->tk_type == T_GVAR && ptype(0) == T_IDENT &&
	    ptype(1) == '(') {
		for (i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++)
			if (isident(0, aggs[i].ag_name))
				break;
		if (i < sizeof(aggs) / sizeof(aggs[0])) {
			struct bt_token *ftk = next();

			next();
			s = snew(S_AGG, ftk);
			s->bs_agg = aggs[i].ag_id;
			s->bs_var = bv;
			s->bs_keys = keys;
			s->bs_expr = parse_args(&n);
			var_use(bv, 1, tk);
			map_class(bv, s->bs_agg, ftk);
			if (s->bs_agg == A_LHIST)
				lhist_check(s, n);
			else if (n != aggs[i].ag_nargs)
				perror_at(ftk, n > aggs[i].ag_nargs ?
				    "too many arguments" :
				    "missing argument");
			expect(')');
			return s;
		}
	}
	s = snew(keys != NULL ? S_MAPSTORE : S_STORE, optk);
	s->bs_op = op;
	s->bs_expr = parse_expr();
done:
	s->bs_var = bv;
	s->bs_keys = keys;
	if (keys != NULL) {
		var_use(bv, 1, tk);
		map_class(bv, A_VALUE, tk);
	} else
		var_use(bv, 0, tk);
	return s;
}

/* clear(@m), zero(@m): the argument must name a map. */
static struct bt_stmt *
parse_mapfn(enum bt_skind kind, struct bt_token *tk)
{
	struct bt_stmt *s = snew(kind, tk);
	struct bt_token *vtk;

	expect('(');
	vtk = expect(T_GVAR);
	s->bs_var = var_get(vtk->tk_str, 0);
	var_use(s->bs_var, 1, vtk);
	expect(')');
	return s;
}

static struct bt_stmt *
parse_stmt(void)
{
	struct bt_token *tk = peek(0);
	struct bt_stmt *s;
	int n;

	if (tk->tk_type == T_GVAR || tk->tk_type == T_LVAR)
		return parse_assign();
	if (tk->tk_type == '{')
		return parse_block();
	if (tk->tk_type != T_IDENT)
		syntax_error();

	if (isident(0, "if")) {
		next();
		s = snew(S_IF, tk);
		expect('(');
		s->bs_expr = parse_expr();
		expect(')');
		s->bs_body = parse_block();
		if (isident(0, "else")) {
			next();
			s->bs_else = parse_block();
		}
		return s;
	}
	if (isident(0, "while")) {
		next();
		s = snew(S_WHILE, tk);
		expect('(');
		s->bs_expr = parse_expr();
		expect(')');
		loop_depth++;
		s->bs_body = parse_block();
		loop_depth--;
		return s;
	}
	if (isident(0, "for")) {
		struct bt_token *ktk, *mtk;

		next();
		s = snew(S_FOR, tk);
		expect('(');
		ktk = expect(T_LVAR);
		expect(':');
		mtk = expect(T_GVAR);
		expect(')');
		s->bs_expr = enew(E_LVAR, ktk);
		s->bs_expr->be_var = var_get(ktk->tk_str, 1);
		s->bs_var = var_get(mtk->tk_str, 0);
		var_use(s->bs_var, 1, mtk);
		loop_depth++;
		s->bs_body = parse_block();
		loop_depth--;
		return s;
	}
	if (isident(0, "break") || isident(0, "continue")) {
		next();
		if (loop_depth == 0)
			perror_at(tk, "break or continue outside a loop");
		return snew(tk->tk_str[0] == 'b' ? S_BREAK : S_CONTINUE, tk);
	}
	if (ptype(1) != '(')
		syntax_error();
	if (isident(0, "printf")) {
		next();
		next();
		s = snew(S_PRINTF, tk);
		s->bs_expr = parse_args(&n);
		if (n == 0)
			syntax_error();
		expect(')');
		perrors += printf_check(s->bs_expr, printf_report);
		return s;
	}
	if (isident(0, "print")) {
		next();
		next();
		s = snew(S_PRINT, tk);
		if (ptype(0) == T_GVAR && ptype(1) != '[' &&
		    ptype(1) != '.') {
			struct bt_token *vtk = next();

			s->bs_var = var_get(vtk->tk_str, 0);
			if (ptype(0) == ',') {
				next();
				s->bs_expr = parse_args(&n);
				if (n > 2)
					perror_at(vtk, "too many arguments");
			}
		} else {
			s->bs_expr = parse_expr();
		}
		expect(')');
		return s;
	}
	if (isident(0, "clear")) {
		next();
		return parse_mapfn(S_CLEAR, tk);
	}
	if (isident(0, "zero")) {
		next();
		return parse_mapfn(S_ZERO, tk);
	}
	if (isident(0, "delete")) {
		struct bt_token *vtk;

		next();
		next();
		s = snew(S_DELETE, tk);
		vtk = expect(T_GVAR);
		s->bs_var = var_get(vtk->tk_str, 0);
		var_use(s->bs_var, 1, vtk);
		s->bs_keys = parse_keys();
		expect(')');
		return s;
	}
	if (isident(0, "exit")) {
		next();
		next();
		s = snew(S_EXIT, tk);
		s->bs_expr = parse_args(&n);
		if (n > 1)
			syntax_error();
		expect(')');
		return s;
	}
	if (isident(0, "time")) {
		next();
		next();
		s = snew(S_TIME, tk);
		s->bs_expr = parse_args(&n);
		if (n > 1)
			syntax_error();
		expect(')');
		return s;
	}
	unknown_name(tk, 1);
}

