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
 * btrace: the top of the grammar: rules, probes and their timer units,
 * recovery after syntax errors, and the order maps are printed at exit.
 */
#include <ctype.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bt_parser.h"

struct bt_rule		*g_rules;
struct bt_var		*g_vars;
int			 g_nprobes;

static int		 nvars;

static uint64_t
unit_to_nsecs(struct bt_token *utk, struct bt_token *ntk)
{
	static const struct {
		const char	*u_name;
		uint64_t	 u_mult;
		long		 u_max;
	} units[] = {
		{ "hz", 0, 1000000L },
		{ "us", 1000ULL, LONG_MAX / 1000 },
		{ "ms", 1000000ULL, LONG_MAX / 1000000 },
		{ "s", 1000000000ULL, LONG_MAX / 1000000000 },
	};
	long v = ntk->tk_int;
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(units[i].u_name, utk->tk_str) != 0)
			continue;
		snprintf(buf, sizeof(buf), "%ld", v);
		if (v < 1) {
			semantic_error(&ntk->tk_pos, "Number is invalid: %s",
			    buf);
			return 0;
		}
		if (v > units[i].u_max) {
			semantic_error(&ntk->tk_pos, "Number is too large: %s",
			    buf);
			return 0;
		}
		if (units[i].u_mult == 0)
			return 1000000000ULL / (uint64_t)v;
		return (uint64_t)v * units[i].u_mult;
	}
	/* reported where the probe ends, as OpenBSD's parser does */
	semantic_error(&ntk->tk_pos, "Invalid unit: %s", utk->tk_str);
	return 0;
}

/* Where a token starts in the script: words and numbers end at p_off. */
static size_t
tok_start(const struct bt_token *tk)
{
	size_t off = tk->tk_pos.p_off;

	if (tk->tk_type != T_IDENT && tk->tk_type != T_INT)
		return off;
	while (off > 0 && (isalnum((unsigned char)g_source[off - 1]) ||
	    g_source[off - 1] == '_'))
		off--;
	return off;
}

static int
wildtok(int type)
{
	return type == '*' || type == '?';
}

/*
 * A probe name component: any word or number, keywords included, or,
 * as an extension, a pattern of words and wildcards written without
 * blanks (*open*, sys*, *).  Sets *wild when it is a pattern; returns
 * its first token, whose tk_str is the whole text when wild.
 */
static struct bt_token *
probe_part(int *wild)
{
	struct bt_token *first = peek(0), *last;
	size_t start, end;
	char *s;
	int n = 0;

	*wild = 0;
	if (ptype(0) != T_IDENT && ptype(0) != T_INT && !wildtok(ptype(0)))
		syntax_error();
	start = tok_start(first);
	do {
		last = next();
		n++;
		if (wildtok(last->tk_type))
			*wild = 1;
	} while ((ptype(0) == T_IDENT || ptype(0) == T_INT ||
	    wildtok(ptype(0))) && tok_start(peek(0)) == last->tk_pos.p_off + 1);
	if (!*wild) {
		if (n > 1)
			perror_at(peek(0), "syntax error");
		return first;
	}
	end = last->tk_pos.p_off + 1;
	s = palloc(end - start + 1);
	memcpy(s, g_source + start, end - start);
	s[end - start] = '\0';
	first->tk_str = s;
	return first;
}

/*
 * bpftrace's probe types that userdt does not have, and what it offers
 * instead; NULL for a provider that is not one.  kprobe and kretprobe
 * are OpenBSD's kprobe provider's (parse_kprobe()).
 */
static const char *
bpftrace_type(const char *prov)
{
	static const struct {
		const char	*bt_type;
		const char	*bt_what;
	} types[] = {
		{ "kfunc", "BTF function probes: use kprobe:FUNC:entry "
		    "instead" },
		{ "kretfunc", "BTF function probes: use kprobe:FUNC:return "
		    "instead" },
		{ "fentry", "BTF function probes: use kprobe:FUNC:entry "
		    "instead" },
		{ "fexit", "BTF function probes: use kprobe:FUNC:return "
		    "instead" },
		{ "rawtracepoint", "raw tracepoints: use "
		    "tracepoint:SUBSYSTEM:EVENT instead" },
		{ "uprobe", "user function probes: sample user stacks "
		    "(profile:hz:N with ustack) or trace the program's system "
		    "calls (-c command) instead" },
		{ "uretprobe", "user function probes: sample user stacks or "
		    "trace the program's system calls (-c command) instead" },
		{ "usdt", "user static probes: sample user stacks or trace "
		    "the program's system calls (-c command) instead" },
		{ "software", "perf software events: sample with "
		    "profile:hz:N (CPU clock) or time with interval:UNIT:N "
		    "instead" },
		{ "hardware", "perf hardware counters: sample with "
		    "profile:hz:N (CPU clock) instead" },
		{ "watchpoint", "memory watchpoints" },
		{ "asyncwatchpoint", "memory watchpoints" },
		{ "iter", "kernel object iterators" },
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(prov, types[i].bt_type) == 0)
			return types[i].bt_what;
	return NULL;
}

/*
 * After kprobe or kretprobe: OpenBSD's kprobe:FUNC:entry|return, or
 * bpftrace's kprobe:FUNC and kretprobe:FUNC, which mean the same as
 * OpenBSD's entry and return.  bpftrace's kprobe:MODULE:FUNC and
 * kprobe:FUNC+OFFSET have no OpenBSD spelling: the device's list
 * says they are not there.
 */
static struct bt_probe *
parse_kprobe(struct bt_probe *bp, int ret)
{
	struct bt_token *ftk, *ntk;
	int fwild, nwild;

	bp->bp_type = P_PROBE;
	bp->bp_prov = "kprobe";
	expect(':');
	ftk = probe_part(&fwild);
	if (ftk->tk_type == T_INT)
		perror_at(ftk, "a kprobe's function is a name");
	bp->bp_func = ftk->tk_str;
	bp->bp_wild = fwild;
	if (!ret && ptype(0) == ':') {
		next();
		ntk = probe_part(&nwild);
		if (ntk->tk_type == T_INT)
			perror_at(ntk, "a kprobe's name is entry or return");
		bp->bp_name = ntk->tk_str;
		bp->bp_wild |= nwild;
	} else
		bp->bp_name = ret ? "return" : "entry";
	g_nprobes++;
	return bp;
}

static struct bt_probe *
parse_probe(void)
{
	struct bt_token *tk = peek(0), *ftk, *ntk;
	struct bt_probe *bp = palloc(sizeof(*bp));
	char buf[32];
	int pwild, fwild, nwild;

	bp->bp_pos = tk->tk_pos;
	if (isident(0, "BEGIN") || isident(0, "END")) {
		next();
		bp->bp_type = tk->tk_str[0] == 'B' ? P_BEGIN : P_END;
		cur_beginend = 1;
		return bp;
	}
	if (ptype(0) != T_IDENT && !wildtok(ptype(0)))
		syntax_error();
	tk = probe_part(&pwild);
	if (tk->tk_type == T_INT)
		syntax_error();
	if (!pwild && (strcmp(tk->tk_str, "kprobe") == 0 ||
	    strcmp(tk->tk_str, "kretprobe") == 0))
		return parse_kprobe(bp, tk->tk_str[1] == 'r');
	if (!pwild && bpftrace_type(tk->tk_str) != NULL) {
		static char msg[400];

		snprintf(msg, sizeof(msg), "'%s' is a bpftrace probe type; "
		    "userdt has no %s (btrace -l lists its probes)",
		    tk->tk_str, bpftrace_type(tk->tk_str));
		perror_at(tk, msg);
	}
	bp->bp_type = P_PROBE;
	bp->bp_prov = tk->tk_str;
	expect(':');
	ftk = probe_part(&fwild);
	expect(':');
	ntk = probe_part(&nwild);
	if (ftk->tk_type == T_INT && !fwild) {
		snprintf(buf, sizeof(buf), "%ld", ftk->tk_int);
		bp->bp_func = pstrdup(buf);
	} else
		bp->bp_func = ftk->tk_str;
	if (ntk->tk_type == T_INT && !nwild) {
		/* a timer probe: prov:unit:number */
		if (ftk->tk_type != T_IDENT || fwild || pwild)
			perror_at(ftk, "syntax error");
		bp->bp_number = ntk->tk_int;
		bp->bp_nsecs = unit_to_nsecs(ftk, ntk);
	} else if (nwild && ntk->tk_type == T_INT)
		perror_at(ntk, "a timer probe's rate cannot be a wildcard");
	else
		bp->bp_name = ntk->tk_str;
	bp->bp_wild = pwild || fwild || nwild;
	g_nprobes++;
	return bp;
}

static void
parse_rule(void)
{
	struct bt_rule *r = palloc(sizeof(*r)), **rp;
	struct bt_probe **ptail = &r->br_probes;

	cur_rule = r;
	cur_beginend = 0;
	for (;;) {
		*ptail = parse_probe();
		ptail = &(*ptail)->bp_next;
		if (ptype(0) != ',')
			break;
		next();
	}
	if (ptype(0) == '/') {
		next();
		in_filter = 1;
		r->br_filter = parse_expr();
		in_filter = 0;
		expect('/');
	}
	if (ptype(0) != '{')
		syntax_error();
	r->br_action = parse_block();
	for (rp = &g_rules; *rp != NULL; rp = &(*rp)->br_next)
		;
	*rp = r;
}

/* After an error skip to the end of the rule the error is in. */
static void
recover(size_t start)
{
	size_t i;
	int depth = 0;

	for (i = start; i < tix; i++) {
		if (toks[i].tk_type == '{')
			depth++;
		else if (toks[i].tk_type == '}')
			depth--;
	}
	if (tix == start) {
		/* nothing of the rule was consumed: drop one token */
		next();
	}
	if (depth <= 0) {
		while (ptype(0) != T_EOF && ptype(0) != '{')
			next();
		if (ptype(0) == T_EOF)
			return;
		next();
		depth = 1;
	}
	while (depth > 0 && ptype(0) != T_EOF) {
		if (ptype(0) == '{')
			depth++;
		else if (ptype(0) == '}')
			depth--;
		next();
	}
}

/* Number printing at exit: targets of rule-level statements first. */
static void
order_expr(struct bt_expr *e)
{
	for (; e != NULL; e = e->be_next) {
		if ((e->be_kind == E_MAPGET || e->be_kind == E_GVAR) &&
		    e->be_var->bv_order < 0 && e->be_var->bv_ismap > 0)
			e->be_var->bv_order = nvars++;
		order_expr(e->be_left);
		order_expr(e->be_right);
		order_expr(e->be_third);
	}
}

static void
order_stmts(struct bt_stmt *s, int toplevel)
{
	struct bt_expr *e;

	for (; s != NULL; s = s->bs_next) {
		if (s->bs_kind == S_BLOCK) {
			order_stmts(s->bs_body, toplevel);
			continue;
		}
		if (toplevel) {
			if ((s->bs_kind == S_MAPSTORE || s->bs_kind == S_AGG ||
			    s->bs_kind == S_DELETE) && s->bs_var->bv_order < 0)
				s->bs_var->bv_order = nvars++;
			if (s->bs_kind != S_AGG)
				for (e = s->bs_expr; e != NULL; e = e->be_next)
					if (e->be_kind == E_MAPGET &&
					    e->be_var->bv_order < 0)
						e->be_var->bv_order = nvars++;
			continue;
		}
		if (s->bs_var != NULL && !s->bs_var->bv_local &&
		    s->bs_var->bv_ismap > 0 && s->bs_var->bv_order < 0)
			s->bs_var->bv_order = nvars++;
		order_expr(s->bs_keys);
		order_expr(s->bs_expr);
		order_stmts(s->bs_body, 0);
		order_stmts(s->bs_else, 0);
	}
}

int
bt_parse(const char *src, size_t len, const char *filename, int nargs,
    char **vargs)
{
	struct bt_rule *r;
	struct bt_stmt *s;
	struct bt_var *bv;
	size_t start;

	(void)nargs;
	(void)vargs;
	g_source = src;
	g_srclen = len;
	g_filename = filename;
	perrors = bt_lex(&toks, &ntoks);
	if (perrors > 0)
		goto out;
	tix = 0;
	while (ptype(0) != T_EOF) {
		start = tix;
		in_filter = 0;
		loop_depth = 0;
		nesting = 0;
		if (setjmp(perr_jmp) != 0) {
			recover(start);
			continue;
		}
		parse_rule();
	}
	if (perrors > 0)
		goto out;

	/* Maps shown at exit follow OpenBSD's order, then the others. */
	for (r = g_rules; r != NULL; r = r->br_next)
		order_stmts(r->br_action->bs_body, 1);
	for (r = g_rules; r != NULL; r = r->br_next) {
		order_expr(r->br_filter);
		for (s = r->br_action->bs_body; s != NULL; s = s->bs_next)
			if (s->bs_kind == S_BLOCK || s->bs_kind == S_IF ||
			    s->bs_kind == S_FOR || s->bs_kind == S_WHILE ||
			    s->bs_kind == S_PRINT || s->bs_kind == S_CLEAR ||
			    s->bs_kind == S_ZERO || s->bs_kind == S_AGG) {
				struct bt_stmt save = *s;

				save.bs_next = NULL;
				order_stmts(&save, 0);
			}
	}
	for (bv = g_vars; bv != NULL; bv = bv->bv_next)
		if (bv->bv_ismap > 0 && bv->bv_order < 0)
			bv->bv_order = nvars++;
out:
	free(toks);
	toks = NULL;
	return perrors;
}
