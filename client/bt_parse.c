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
 * btrace: recursive-descent parser of bt(5) with C operator precedence.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bt_parser.h"

struct bt_token		*toks;
size_t			 ntoks, tix;
int			 perrors;
jmp_buf			 perr_jmp;
struct bt_rule		*cur_rule;	/* rule being parsed */
int			 cur_beginend;	/* rule has BEGIN or END */
int			 in_filter;
int			 loop_depth;
int			 nesting;	/* of blocks and parentheses */

static struct bt_stmt	*parse_stmt(void);
static void		 unknown_name(struct bt_token *, int)
			    __attribute__((noreturn));

struct bt_token *
peek(size_t ahead)
{
	if (tix + ahead < ntoks)
		return &toks[tix + ahead];
	return &toks[ntoks - 1];
}

int
ptype(size_t ahead)
{
	return peek(ahead)->tk_type;
}

int
isident(size_t ahead, const char *word)
{
	struct bt_token *tk = peek(ahead);

	return tk->tk_type == T_IDENT && strcmp(tk->tk_str, word) == 0;
}

struct bt_token *
next(void)
{
	struct bt_token *tk = peek(0);

	if (tix < ntoks - 1)
		tix++;
	return tk;
}

/* Report a syntax error at `tk' and abandon the current rule. */
void
perror_at(struct bt_token *tk, const char *msg)
{
	bt_posmsg(&tk->tk_pos, "%s", msg);
	perrors++;
	longjmp(perr_jmp, 1);
}

void
syntax_error(void)
{
	perror_at(peek(0), "syntax error");
}

/* A semantic error: reported, but parsing goes on. */
void
semantic_error(const struct bt_pos *pos, const char *fmt, const char *arg)
{
	bt_posmsg(pos, fmt, arg);
	perrors++;
}

static void
printf_report(const struct bt_pos *pos, const char *msg)
{
	bt_posmsg(pos, "%s", msg);
}

struct bt_token *
expect(int type)
{
	if (ptype(0) != type)
		syntax_error();
	return next();
}

static struct bt_expr *
enew(enum bt_ekind kind, struct bt_token *tk)
{
	struct bt_expr *e = palloc(sizeof(*e));

	e->be_kind = kind;
	e->be_pos = tk->tk_pos;
	return e;
}

static struct bt_var *
var_get(const char *name, int local)
{
	struct bt_var **head, *bv;

	head = local ? &cur_rule->br_locals : &g_vars;
	for (bv = *head; bv != NULL; bv = bv->bv_next)
		if (strcmp(bv->bv_name, name) == 0)
			return bv;
	bv = palloc(sizeof(*bv));
	bv->bv_name = pstrdup(name);
	bv->bv_local = local;
	bv->bv_order = -1;
	bv->bv_next = *head;
	*head = bv;
	return bv;
}

/* A global becomes a map or a scalar at first use; mixing is an error. */
static void
var_use(struct bt_var *bv, int asmap, struct bt_token *tk)
{
	if (bv->bv_local)
		return;
	if (bv->bv_ismap == 0) {
		bv->bv_ismap = asmap ? 1 : -1;
		return;
	}
	if ((bv->bv_ismap > 0) != (asmap != 0)) {
		semantic_error(&tk->tk_pos, "'@%s' is used both as a map and "
		    "as a variable", bv->bv_name);
	}
}

static const struct {
	const char	*bi_name;
	int		 bi_id;
} builtins[] = {
	{ "pid", B_PID }, { "tid", B_TID }, { "comm", B_COMM },
	{ "cpu", B_CPU }, { "nsecs", B_NSECS }, { "elapsed", B_ELAPSED },
	{ "kstack", B_KSTACK }, { "ustack", B_USTACK }, { "arg0", B_ARG0 },
	{ "arg1", B_ARG1 }, { "arg2", B_ARG2 }, { "arg3", B_ARG3 },
	{ "arg4", B_ARG4 }, { "arg5", B_ARG5 }, { "arg6", B_ARG6 },
	{ "arg7", B_ARG7 }, { "arg8", B_ARG8 }, { "arg9", B_ARG9 },
	{ "retval", B_RETVAL }, { "probe", B_PROBE }, { "errno", B_ERRNO },
	{ "cpid", B_CPID }, { "uid", B_UID }, { "gid", B_GID },
	{ "cgroup", B_CGROUP },
};

static struct bt_expr *
parse_args(int *nargs)
{
	struct bt_expr *head = NULL, **tail = &head;

	*nargs = 0;
	if (ptype(0) == ')')
		return NULL;
	for (;;) {
		*tail = parse_expr();
		tail = &(*tail)->be_next;
		(*nargs)++;
		if (ptype(0) != ',')
			break;
		next();
	}
	return head;
}

/* The key list of @m[k1, k2]. */
static struct bt_expr *
parse_keys(void)
{
	struct bt_expr *keys;
	int n;

	expect('[');
	if (ptype(0) == '(' ) {
		/* @m[(1, 2)] builds a tuple value, not a key list */
		size_t save = tix;
		struct bt_expr *e = parse_expr();

		if (e->be_kind == E_TUPLE)
			semantic_error(&e->be_pos,
			    "tuple cannot be used as map key%s", "");
		tix = save;
	}
	keys = parse_args(&n);
	if (n == 0)
		syntax_error();
	expect(']');
	return keys;
}

/* Tuple members after a variable: $t.0, @t.1.2 */
static struct bt_expr *
parse_members(struct bt_expr *e)
{
	struct bt_expr *m;

	while (ptype(0) == '.' && ptype(1) == T_INT) {
		next();
		m = enew(E_TMEMBER, next());
		m->be_left = e;
		m->be_int = toks[tix - 1].tk_int;
		m->be_depth = e->be_depth + 1;
		if (m->be_depth > MAXDEPTH)
			perror_at(&toks[tix - 1], "expression too complex");
		e = m;
	}
	return e;
}

int
parg_number(const char *s, long *v)
{
	char *ep;

	errno = 0;
	*v = strtol(s, &ep, 10);
	return *s != '\0' && *ep == '\0' && errno == 0;
}

static struct bt_expr *
parse_primary(void)
{
	struct bt_token *tk = peek(0);
	struct bt_expr *e;
	size_t i;
	int n;

	switch (tk->tk_type) {
	case T_INT:
		next();
		e = enew(E_INT, tk);
		e->be_int = tk->tk_int;
		return e;
	case T_STR:
		next();
		e = enew(E_STR, tk);
		e->be_str = tk->tk_str;
		return e;
	case T_PARG:
		next();
		if (tk->tk_int > g_argsused)
			g_argsused = (int)tk->tk_int;
		if (tk->tk_int <= g_nargs) {
			const char *s = g_vargs[tk->tk_int - 1];
			long v;

			if (parg_number(s, &v)) {
				e = enew(E_INT, tk);
				e->be_int = v;
			} else {
				e = enew(E_STR, tk);
				e->be_str = pstrdup(s);
			}
		} else
			e = enew(E_NIL, tk);
		return e;
	case T_NARGS:
		next();
		g_argsused = INT_MAX;	/* $# looks at them all */
		e = enew(E_INT, tk);
		e->be_int = g_nargs;
		return e;
	case T_LVAR:
		next();
		e = enew(E_LVAR, tk);
		e->be_var = var_get(tk->tk_str, 1);
		return parse_members(e);
	case T_GVAR:
		next();
		if (ptype(0) == '[') {
			e = enew(E_MAPGET, tk);
			e->be_var = var_get(tk->tk_str, 0);
			var_use(e->be_var, 1, tk);
			e->be_left = parse_keys();
			return e;
		}
		e = enew(E_GVAR, tk);
		e->be_var = var_get(tk->tk_str, 0);
		return parse_members(e);
	case '(':
		next();
		if (++nesting > MAXDEPTH)
			perror_at(tk, "too deeply nested");
		e = parse_expr();
		nesting--;
		if (ptype(0) == ',') {
			struct bt_expr *t = enew(E_TUPLE, tk), **tail;

			t->be_left = e;
			tail = &e->be_next;
			while (ptype(0) == ',') {
				next();
				*tail = parse_expr();
				tail = &(*tail)->be_next;
			}
			e = t;
		}
		expect(')');
		return e;
	case T_IDENT:
		for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
			if (strcmp(tk->tk_str, builtins[i].bi_name) != 0)
				continue;
			next();
			e = enew(E_BUILTIN, tk);
			e->be_op = builtins[i].bi_id;
			if (cur_beginend && e->be_op >= B_ARG0 &&
			    e->be_op <= B_ARG9)
				semantic_error(&tk->tk_pos, "the %s builtin "
				    "cannot be used with BEGIN or END probes",
				    tk->tk_str);
			if (e->be_op == B_CPID && g_command == NULL)
				semantic_error(&tk->tk_pos, "the %s builtin "
				    "needs a command (-c)", tk->tk_str);
			/*
			 * bpftrace's kstack(N), ustack(N): at most N frames;
			 * past dt(4)'s 19 btrace asks for userdt's deep
			 * stacks (DTEVT_DEEPSTACK).  A literal, as bpftrace
			 * wants, since the device is told before any event.
			 */
			if ((e->be_op == B_KSTACK || e->be_op == B_USTACK) &&
			    ptype(0) == '(') {
				struct bt_token *ntk;

				next();
				ntk = peek(0);
				if (ptype(0) != T_INT)
					perror_at(ntk, "the number of frames "
					    "must be an integer literal");
				if (ntk->tk_int < 1 ||
				    ntk->tk_int > DTEV_DEEP_MAX)
					perror_at(ntk, "the number of frames "
					    "must be from 1 to 127");
				e->be_int = ntk->tk_int;
				next();
				expect(')');
			}
			return e;
		}
		/*
		 * bpftrace's tracepoint fields by name, args.NAME or
		 * args->NAME: an argN once the probe is known (the names
		 * come from tracefs, rules_setup()).
		 */
		if (strcmp(tk->tk_str, "args") == 0 && (ptype(1) == '.' ||
		    (ptype(1) == '-' && ptype(2) == '>'))) {
			next();
			if (next()->tk_type == '-')
				next();
			if (ptype(0) != T_IDENT)
				perror_at(peek(0), "a field name must follow "
				    "args");
			e = enew(E_BUILTIN, tk);
			e->be_op = B_ARGNAME;
			e->be_str = pstrdup(next()->tk_str);
			if (cur_beginend)
				semantic_error(&tk->tk_pos, "the %s builtin "
				    "cannot be used with BEGIN or END probes",
				    "args");
			return e;
		}
		if (strcmp(tk->tk_str, "strftime") == 0 && ptype(1) == '(') {
			next();
			next();
			e = enew(E_STRFTIME, tk);
			e->be_left = parse_args(&n);
			if (n != 2)
				perror_at(tk, "strftime() takes a format and "
				    "a time in nanoseconds");
			if (e->be_left->be_kind != E_STR)
				perror_at(tk, "strftime()'s format must be a "
				    "string literal");
			expect(')');
			return e;
		}
		if (strcmp(tk->tk_str, "join") == 0 && ptype(1) == '(')
			perror_at(tk, "join() joins an array of strings, and "
			    "no dt(4) event carries one (a system call's "
			    "strings are its NUL-terminated arguments, "
			    "str(argN))");
		if (strcmp(tk->tk_str, "str") == 0 && ptype(1) == '(') {
			next();
			next();
			e = enew(E_STRFN, tk);
			e->be_left = parse_args(&n);
			if (n < 1 || n > 2)
				perror_at(tk, "str() takes one or two "
				    "arguments");
			expect(')');
			return e;
		}
		if ((strcmp(tk->tk_str, "ksym") == 0 ||
		    strcmp(tk->tk_str, "usym") == 0) && ptype(1) == '(') {
			next();
			next();
			e = enew(tk->tk_str[0] == 'k' ? E_KSYM : E_USYM, tk);
			e->be_left = parse_args(&n);
			if (n != 1)
				perror_at(tk, "takes one argument");
			expect(')');
			return e;
		}
		unknown_name(tk, ptype(1) == '(');
	default:
		syntax_error();
	}
}

/*
 * An identifier that names nothing: say so, with the known name it is
 * closest to when one is close.
 */
static void
unknown_name(struct bt_token *tk, int call)
{
	static const char *const funcs[] = {
		"count", "sum", "min", "max", "avg", "hist", "lhist",
		"printf", "print", "clear", "zero", "delete", "exit", "time",
		"str", "ksym", "usym", "stats", "strftime",
	};
	/* bpftrace's builtins and functions that bt(5) has not */
	static const char *const bpftrace_names[] = {
		"username", "curtask", "rand", "func",
		"args", "ctx", "sarg0", "sarg1", "sarg2", "cat",
		"system", "signal", "buf", "ntop", "kaddr",
		"uaddr", "reg", "macaddr", "override", "strncmp", "strcontains",
		"sizeof", "path", "len", "has_key", "offsetof", "pton",
		"kptr", "uptr", "cgroupid", "unwatch", "percpu_kaddr",
		"bswap", "skboutput", "socket_cookie", "numaid", "jiffies",
	};
	static char msg[160];
	const char *near;
	const char *cands[sizeof(funcs) / sizeof(funcs[0]) +
	    sizeof(builtins) / sizeof(builtins[0])];
	size_t i, n = 0;

	/* a call is likely a function, a bare word a builtin: try those first */
	if (call)
		for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
			cands[n++] = funcs[i];
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		cands[n++] = builtins[i].bi_name;
	if (!call)
		for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
			cands[n++] = funcs[i];
	near = did_you_mean(tk->tk_str, cands, n);
	if (near == NULL) {
		/* bpftrace's own: say that it is not a typo */
		for (i = 0; i < sizeof(bpftrace_names) /
		    sizeof(bpftrace_names[0]); i++)
			if (strcmp(tk->tk_str, bpftrace_names[i]) == 0) {
				snprintf(msg, sizeof(msg), "unknown %s "
				    "'%.64s': bpftrace has it, bt(5) does not",
				    call ? "function" : "builtin",
				    tk->tk_str);
				perror_at(tk, msg);
			}
	}
	snprintf(msg, sizeof(msg), "unknown %s '%.64s'%s%s%s",
	    call ? "function" : "builtin", tk->tk_str,
	    near != NULL ? ", did you mean '" : "", near != NULL ? near : "",
	    near != NULL ? "'" : "");
	perror_at(tk, msg);
}

static struct bt_expr *
parse_unary(void)
{
	struct bt_token *tk = peek(0);
	struct bt_expr *e;
	int op;

	switch (tk->tk_type) {
	case '-':	op = OP_NEG;	break;
	case '!':	op = OP_NOT;	break;
	case '~':	op = OP_BNOT;	break;
	case '+':
		next();
		return parse_unary();
	default:
		return parse_primary();
	}
	next();
	if (++nesting > MAXDEPTH)
		perror_at(tk, "too deeply nested");
	if (op == OP_NEG && ptype(0) == T_INT) {
		/* fold -N so that LONG_MIN can be written */
		e = parse_unary();
		nesting--;
		if (e->be_kind == E_INT) {
			e->be_int = (long)(0UL - (unsigned long)e->be_int);
			return e;
		}
	} else {
		e = parse_unary();
		nesting--;
	}
	{
		struct bt_expr *u = enew(E_UNOP, tk);

		u->be_op = op;
		u->be_left = e;
		return u;
	}
}

/* Binary operators by C precedence level, loosest first. */
static const struct binlevel {
	int	tok[5];
	int	op[5];
} levels[] = {
	{ { T_LOR }, { OP_LOR } },
	{ { T_LAND }, { OP_LAND } },
	{ { '|' }, { OP_BOR } },
	{ { '^' }, { OP_XOR } },
	{ { '&' }, { OP_BAND } },
	{ { T_EQ, T_NE }, { OP_EQ, OP_NE } },
	{ { '<', T_LE, '>', T_GE }, { OP_LT, OP_LE, OP_GT, OP_GE } },
	{ { T_SHL, T_SHR }, { OP_SHL, OP_SHR } },
	{ { '+', '-' }, { OP_ADD, OP_SUB } },
	{ { '*', '/', '%' }, { OP_MUL, OP_DIV, OP_MOD } },
};
#define NLEVELS	(sizeof(levels) / sizeof(levels[0]))

static struct bt_expr *
parse_binary(size_t level)
{
	struct bt_expr *e, *b;
	struct bt_token *tk;
	int i;

	if (level == NLEVELS)
		return parse_unary();
	e = parse_binary(level + 1);
	for (;;) {
		tk = peek(0);
		for (i = 0; i < 5 && levels[level].tok[i] != 0; i++)
			if (levels[level].tok[i] == tk->tk_type)
				break;
		if (i == 5 || levels[level].tok[i] == 0)
			return e;
		/* in a filter, "/ {" closes it */
		if (tk->tk_type == '/' && in_filter && ptype(1) == '{')
			return e;
		next();
		b = enew(E_BINOP, tk);
		b->be_op = levels[level].op[i];
		b->be_left = e;
		b->be_right = parse_binary(level + 1);
		b->be_depth = 1 + (e->be_depth > b->be_right->be_depth ?
		    e->be_depth : b->be_right->be_depth);
		if (b->be_depth > MAXDEPTH)
			perror_at(tk, "expression too complex");
		e = b;
	}
}

struct bt_expr *
parse_expr(void)
{
	struct bt_expr *e, *c;
	struct bt_token *tk;

	e = parse_binary(0);
	if (ptype(0) != '?')
		return e;
	tk = next();
	if (++nesting > MAXDEPTH)
		perror_at(tk, "too deeply nested");
	c = enew(E_COND, tk);
	c->be_left = e;
	c->be_right = parse_expr();
	expect(':');
	c->be_third = parse_expr();
	nesting--;
	return c;
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

