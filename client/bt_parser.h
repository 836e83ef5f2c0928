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
 * btrace: state shared by the parts of the parser: tokens, errors and
 * expressions (bt_parse_expr.c), statements (bt_parse.c), and rules and
 * probes (bt_rules.c).
 */
#ifndef BT_PARSER_H
#define BT_PARSER_H

#include <setjmp.h>

#include "bt_lex.h"

/*
 * Evaluation recurses over the tree: bound its height so that no script
 * can exhaust the stack.
 */
#define MAXDEPTH	1000

extern struct bt_token	*toks;
extern size_t		 ntoks, tix;
extern int		 perrors;
extern jmp_buf		 perr_jmp;	/* a syntax error abandons the rule */
extern struct bt_rule	*cur_rule;
extern int		 cur_beginend;
extern int		 in_filter;
extern int		 loop_depth;
extern int		 nesting;

struct bt_token		*peek(size_t);
int			 ptype(size_t);
int			 isident(size_t, const char *);
struct bt_token		*next(void);
struct bt_token		*expect(int);
void			 perror_at(struct bt_token *, const char *)
			    __attribute__((noreturn));
void			 syntax_error(void) __attribute__((noreturn));
void			 semantic_error(const struct bt_pos *, const char *,
			    const char *);
struct bt_expr		*parse_expr(void);
struct bt_stmt		*parse_block(void);

/* What statements take of expressions (bt_parse_expr.c). */
struct bt_expr		*enew(enum bt_ekind, struct bt_token *);
/* The variable named: a local ($x) or a global (@m), made at first use. */
struct bt_var		*var_get(const char *name, int local);
/* A global used as a map (asmap) or a scalar at tk: the first use says. */
void			 var_use(struct bt_var *, int asmap, struct bt_token *);
/* (a, b, ...) after a function's name: the list, its length in *nargs. */
struct bt_expr		*parse_args(int *nargs);
/* [k1, k2] after a map's name. */
struct bt_expr		*parse_keys(void);
/* tk names nothing (a function, when call): said, the rule abandoned. */
void			 unknown_name(struct bt_token *tk, int call)
			    __attribute__((noreturn));

#endif /* BT_PARSER_H */
