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
 * btrace: a rule read before the run, not on an event: what its probes
 * must have the device record (rule_evtflags()), and its args.NAME made
 * argument numbers once its probes are known (rule_argnames()).  Apart
 * from bt_eval.c because it walks the same tree for the setup alone.
 */
#include <stdint.h>

#include "btrace.h"

static uint64_t
expr_flags(struct bt_expr *e)
{
	uint64_t fl = 0;

	for (; e != NULL; e = e->be_next) {
		if (e->be_kind == E_BUILTIN) {
			if (e->be_op == B_COMM)
				fl |= DTEVT_EXECNAME;
			else if (e->be_op == B_KSTACK)
				fl |= DTEVT_KSTACK;
			else if (e->be_op == B_USTACK)
				fl |= DTEVT_USTACK;
			if ((e->be_op == B_KSTACK || e->be_op == B_USTACK) &&
			    e->be_int > STACKTRACE_MAX)
				fl |= DTEVT_DEEPSTACK;
			else if ((e->be_op >= B_ARG0 && e->be_op <= B_ARG9) ||
			    e->be_op == B_ARGNAME)
				fl |= DTEVT_FUNCARGS;
		}
		/* str(argN): the string, where a syscall event has one. */
		if (e->be_kind == E_STRFN && e->be_left != NULL &&
		    e->be_left->be_kind == E_BUILTIN &&
		    e->be_left->be_op >= B_ARG0 && e->be_left->be_op <= B_ARG9)
			fl |= DTEVT_STRINGS;
		fl |= expr_flags(e->be_left);
		fl |= expr_flags(e->be_right);
		fl |= expr_flags(e->be_third);
	}
	return fl;
}

static uint64_t
stmt_flags(struct bt_stmt *s)
{
	uint64_t fl = 0;

	for (; s != NULL; s = s->bs_next) {
		fl |= expr_flags(s->bs_keys);
		fl |= expr_flags(s->bs_expr);
		fl |= stmt_flags(s->bs_body);
		fl |= stmt_flags(s->bs_else);
	}
	return fl;
}

static void
expr_argnames(struct bt_expr *e, int (*resolve)(const char *,
    const struct bt_pos *))
{
	int n;

	for (; e != NULL; e = e->be_next) {
		if (e->be_kind == E_BUILTIN && e->be_op == B_ARGNAME &&
		    (n = resolve(e->be_str, &e->be_pos)) >= 0 &&
		    n <= B_ARG9 - B_ARG0)
			e->be_op = B_ARG0 + n;
		expr_argnames(e->be_left, resolve);
		expr_argnames(e->be_right, resolve);
		expr_argnames(e->be_third, resolve);
	}
}

static void
stmt_argnames(struct bt_stmt *s, int (*resolve)(const char *,
    const struct bt_pos *))
{
	for (; s != NULL; s = s->bs_next) {
		expr_argnames(s->bs_keys, resolve);
		expr_argnames(s->bs_expr, resolve);
		stmt_argnames(s->bs_body, resolve);
		stmt_argnames(s->bs_else, resolve);
	}
}

void
rule_argnames(struct bt_rule *r, int (*resolve)(const char *,
    const struct bt_pos *))
{
	expr_argnames(r->br_filter, resolve);
	stmt_argnames(r->br_action, resolve);
}

/* What the device must record for this rule's probes. */
uint64_t
rule_evtflags(struct bt_rule *r)
{
	return expr_flags(r->br_filter) | stmt_flags(r->br_action);
}
