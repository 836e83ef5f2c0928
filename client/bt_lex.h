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
 * btrace: tokens shared by the lexer and the parser.
 */
#ifndef BT_LEX_H
#define BT_LEX_H

#include "btrace.h"

enum bt_tok {
	T_EOF = 0,
	/* single characters stand for themselves: { } ( ) [ ] , ; : etc */
	T_INT = 256, T_STR, T_IDENT, T_GVAR, T_LVAR, T_PARG, T_NARGS,
	T_EQ, T_NE, T_LE, T_GE, T_LAND, T_LOR, T_SHL, T_SHR, T_INC, T_DEC,
	T_ADDEQ, T_SUBEQ, T_MULEQ, T_DIVEQ, T_MODEQ, T_ANDEQ, T_OREQ,
	T_XOREQ, T_SHLEQ, T_SHREQ, T_ERROR,
};

struct bt_token {
	int			 tk_type;
	long			 tk_int;
	char			*tk_str;
	struct bt_pos		 tk_pos;
};

/* Lex the whole script; returns the number of errors. */
int			 bt_lex(struct bt_token **, size_t *);
void			*palloc(size_t);
char			*pstrdup(const char *);

#endif /* BT_LEX_H */
