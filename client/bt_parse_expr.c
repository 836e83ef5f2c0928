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
 * btrace: the parser's tokens, errors and expressions, recursive descent
 * with C's operator precedence; statements are bt_parse.c's.
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

struct bt_token *
expect(int type)
{
	if (ptype(0) != type)
		syntax_error();
	return next();
}

struct bt_expr *
enew(enum bt_ekind kind, struct bt_token *tk)
{
	struct bt_expr *e = palloc(sizeof(*e));

	e->be_kind = kind;
	e->be_pos = tk->tk_pos;
	return e;
}

struct bt_var *
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
void
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

struct bt_expr *
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
struct bt_expr *
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
void
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
