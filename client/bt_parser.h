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
 * btrace: state shared by the two halves of the parser, expressions and
 * statements (bt_parse.c) and rules and probes (bt_rules.c).
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

#endif /* BT_PARSER_H */
