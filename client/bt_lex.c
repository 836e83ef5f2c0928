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
 * btrace: lexer of the bt(5) language and the messages that point into
 * the script.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bt_lex.h"

#define MAXTOKLEN	1024	/* as OpenBSD's lexer buffer */

const char		*g_filename;
const char		*g_source;
size_t			 g_srclen;

/*
 * Everything the parser builds lives until exit; keeping the blocks on a
 * list keeps them reachable for leak checkers even when a rule with a
 * syntax error is abandoned half built.
 */
struct pblock {
	struct pblock	*pb_next;
	max_align_t	 pb_data[];
};
static struct pblock	*pblocks;

void *
palloc(size_t len)
{
	struct pblock *pb;

	pb = xcalloc(1, sizeof(*pb) + len);
	pb->pb_next = pblocks;
	pblocks = pb;
	return pb->pb_data;
}

char *
pstrdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(palloc(len), s, len);
}

/*
 * Print "file:line:col: message:", the script line and a caret under the
 * last character of the offending token.  The caret's column counts tabs
 * up to the next multiple of 8, so it lines up on a terminal.
 */
void
bt_posmsg(const struct bt_pos *pos, const char *fmt, ...)
{
	va_list ap;
	size_t start, i, off;
	int width = 0;

	fflush(stdout);
	fprintf(stderr, "%s:%d:%d: ", g_filename != NULL ? g_filename :
	    g_progname, pos->p_line, pos->p_col);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ":\n");

	off = pos->p_off;
	if (off > g_srclen)
		off = g_srclen;
	start = off - (pos->p_col > 0 ? (size_t)pos->p_col - 1 : 0);
	if (pos->p_col == 0)
		start = off;
	for (i = start; i < g_srclen && g_source[i] != '\n'; i++) {
		fputc(g_source[i], stderr);
		if (pos->p_col > 0 && i <= off)
			width = (g_source[i] == '\t') ? (width / 8 + 1) * 8 :
			    width + 1;
	}
	if (width == 0)
		width = 1;
	fprintf(stderr, "\n%*c\n", width, '^');
}

struct lexer {
	const char	*lx_buf;
	size_t		 lx_len;
	size_t		 lx_off;
	int		 lx_line;
	size_t		 lx_linestart;
	int		 lx_errors;
	struct bt_token	*lx_toks;
	size_t		 lx_ntoks, lx_cap;
};

static int
lpeek(struct lexer *lx, size_t ahead)
{
	if (lx->lx_off + ahead < lx->lx_len)
		return (unsigned char)lx->lx_buf[lx->lx_off + ahead];
	return EOF;
}

static int
lgetc(struct lexer *lx)
{
	int c = lpeek(lx, 0);

	if (c == EOF)
		return EOF;
	lx->lx_off++;
	if (c == '\n') {
		lx->lx_line++;
		lx->lx_linestart = lx->lx_off;
	}
	return c;
}

/* Position of the character just consumed. */
static struct bt_pos
lpos(struct lexer *lx)
{
	struct bt_pos pos;
	size_t last = lx->lx_off > 0 ? lx->lx_off - 1 : 0;

	pos.p_line = lx->lx_line;
	pos.p_off = last;
	pos.p_col = (int)(last - lx->lx_linestart) + 1;
	if (lx->lx_off == 0 || lx->lx_off <= lx->lx_linestart) {
		/* at the start of a line: nothing consumed on it yet */
		pos.p_off = lx->lx_off;
		pos.p_col = 0;
	}
	return pos;
}

static void
lerror(struct lexer *lx, const char *fmt, ...)
{
	struct bt_pos pos = lpos(lx);
	char msg[MAXTOKLEN + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bt_posmsg(&pos, "%s", msg);
	lx->lx_errors++;
}

static struct bt_token *
ltoken(struct lexer *lx, int type)
{
	struct bt_token *tk;

	if (lx->lx_ntoks == lx->lx_cap) {
		lx->lx_cap = lx->lx_cap ? lx->lx_cap * 2 : 256;
		lx->lx_toks = realloc(lx->lx_toks,
		    lx->lx_cap * sizeof(*lx->lx_toks));
		if (lx->lx_toks == NULL) {
			perror("btrace");
			exit(1);
		}
	}
	tk = &lx->lx_toks[lx->lx_ntoks++];
	memset(tk, 0, sizeof(*tk));
	tk->tk_type = type;
	tk->tk_pos = lpos(lx);
	return tk;
}

/* Skip blanks and comments; returns 0 at end of input. */
static int
lskip(struct lexer *lx)
{
	int c;

	for (;;) {
		c = lpeek(lx, 0);
		if (c == EOF)
			return 0;
		if (isspace(c)) {
			lgetc(lx);
			continue;
		}
		if (c == '/' && lpeek(lx, 1) == '/') {
			while ((c = lgetc(lx)) != EOF && c != '\n')
				;
			continue;
		}
		if (c == '#' && lx->lx_off == 0 && lpeek(lx, 1) == '!') {
			while ((c = lgetc(lx)) != EOF && c != '\n')
				;
			continue;
		}
		if (c == '/' && lpeek(lx, 1) == '*') {
			lgetc(lx);
			lgetc(lx);
			for (;;) {
				c = lgetc(lx);
				if (c == EOF) {
					lerror(lx, "unterminated comment");
					return 0;
				}
				if (c == '*' && lpeek(lx, 0) == '/') {
					lgetc(lx);
					break;
				}
			}
			continue;
		}
		return 1;
	}
}

static int
lstring(struct lexer *lx)
{
	char buf[MAXTOKLEN];
	size_t n = 0;
	int c, bad = 0;

	lgetc(lx);	/* opening quote */
	for (;;) {
		c = lgetc(lx);
		if (c == EOF) {
			buf[n] = '\0';
			lerror(lx, "\"%s\" invalid EOF", buf);
			return -1;
		}
		if (c == '"') {
			/* "a" "b" is one string, even across lines */
			size_t save = lx->lx_off, sls = lx->lx_linestart;
			int sl = lx->lx_line;

			if (lskip(lx) && lpeek(lx, 0) == '"') {
				lgetc(lx);
				continue;
			}
			lx->lx_off = save;
			lx->lx_linestart = sls;
			lx->lx_line = sl;
			break;
		}
		if (c == '\\') {
			c = lgetc(lx);
			switch (c) {
			case '\\':	c = '\\';	break;
			case '\'':	c = '\'';	break;
			case '"':	c = '"';	break;
			case 'a':	c = '\a';	break;
			case 'b':	c = '\b';	break;
			case 'e':	c = 033;	break;
			case 'f':	c = '\f';	break;
			case 'n':	c = '\n';	break;
			case 'r':	c = '\r';	break;
			case 't':	c = '\t';	break;
			case 'v':	c = '\v';	break;
			default:
				/* report it, then finish the string */
				if (!bad)
					lerror(lx, "'%c' unsupported escape",
					    c);
				bad = 1;
				if (c == EOF)
					return -1;
			}
		}
		if (n >= sizeof(buf) - 1) {
			if (!bad)
				lerror(lx, "line too long");
			bad = 1;
			continue;
		}
		buf[n++] = c;
	}
	buf[n] = '\0';
	if (bad)
		return -1;
	ltoken(lx, T_STR)->tk_str = pstrdup(buf);
	return 0;
}

/* Numbers follow C: decimal, 0x hexadecimal, 0 octal; nothing may trail. */
static int
lnumber(struct lexer *lx)
{
	char buf[MAXTOKLEN];
	size_t n = 0;
	char *ep;
	long v;
	int c;

	while ((c = lpeek(lx, 0)) != EOF && (isalnum(c) || c == '_')) {
		if (n >= sizeof(buf) - 1) {
			lerror(lx, "line too long");
			return -1;
		}
		buf[n++] = lgetc(lx);
	}
	buf[n] = '\0';
	errno = 0;
	if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
		v = (long)strtoul(buf + 2, &ep, 16);
	else if (buf[0] == '0')
		v = strtol(buf, &ep, 8);
	else
		v = strtol(buf, &ep, 10);
	if (*ep != '\0' || (buf[1] == 'x' && buf[2] == '\0') ||
	    (buf[1] == 'X' && buf[2] == '\0')) {
		lerror(lx, "invalid number '%s'", buf);
		return -1;
	}
	if (errno == ERANGE) {
		lerror(lx, "overflow");
		return -1;
	}
	ltoken(lx, T_INT)->tk_int = v;
	return 0;
}

static void
lword(struct lexer *lx, char *buf, size_t len)
{
	size_t n = 0;
	int c;

	while ((c = lpeek(lx, 0)) != EOF && (isalnum(c) || c == '_')) {
		lgetc(lx);
		if (n < len - 1)
			buf[n++] = c;
	}
	buf[n] = '\0';
}

static const struct {
	const char	*op_text;
	int		 op_tok;
} ops[] = {
	{ "<<=", T_SHLEQ }, { ">>=", T_SHREQ },
	{ "==", T_EQ }, { "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE },
	{ "&&", T_LAND }, { "||", T_LOR }, { "<<", T_SHL }, { ">>", T_SHR },
	{ "++", T_INC }, { "--", T_DEC }, { "+=", T_ADDEQ },
	{ "-=", T_SUBEQ }, { "*=", T_MULEQ }, { "/=", T_DIVEQ },
	{ "%=", T_MODEQ }, { "&=", T_ANDEQ }, { "|=", T_OREQ },
	{ "^=", T_XOREQ },
};

int
bt_lex(struct bt_token **toksp, size_t *ntoksp)
{
	struct lexer lx;
	char buf[MAXTOKLEN];
	size_t i;
	int c;

	memset(&lx, 0, sizeof(lx));
	lx.lx_buf = g_source;
	lx.lx_len = g_srclen;
	lx.lx_line = 1;

	while (lskip(&lx)) {
		c = lpeek(&lx, 0);
		if (c == '"') {
			lstring(&lx);
			continue;
		}
		if (isdigit(c)) {
			lnumber(&lx);
			continue;
		}
		if (isalpha(c) || c == '_') {
			lword(&lx, buf, sizeof(buf));
			ltoken(&lx, T_IDENT)->tk_str = pstrdup(buf);
			continue;
		}
		if (c == '@') {
			lgetc(&lx);
			c = lpeek(&lx, 0);
			if (c != EOF && isdigit(c)) {
				lgetc(&lx);
				lerror(&lx, "'@%c' is an invalid variable name",
				    c);
				continue;
			}
			lword(&lx, buf, sizeof(buf));
			ltoken(&lx, T_GVAR)->tk_str = pstrdup(buf);
			continue;
		}
		if (c == '$') {
			lgetc(&lx);
			c = lpeek(&lx, 0);
			if (c == '#') {
				lgetc(&lx);
				ltoken(&lx, T_NARGS);
			} else if (c != EOF && isdigit(c)) {
				char *ep;
				long v;

				lword(&lx, buf, sizeof(buf));
				errno = 0;
				v = strtol(buf, &ep, 10);
				if (*ep != '\0') {
					lerror(&lx, "'$%s' is invalid", buf);
					continue;
				}
				if (v < 1 || v > INT_MAX || errno == ERANGE) {
					lerror(&lx, "'$%s' is too %s", buf,
					    v < 1 ? "small" : "large");
					continue;
				}
				ltoken(&lx, T_PARG)->tk_int = v;
			} else if (c != EOF && (isalpha(c) || c == '_')) {
				lword(&lx, buf, sizeof(buf));
				ltoken(&lx, T_LVAR)->tk_str = pstrdup(buf);
			} else {
				if (c != EOF)
					lgetc(&lx);
				lerror(&lx, "'$%c' is an invalid variable name",
				    c == EOF ? ' ' : c);
			}
			continue;
		}
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			size_t l = strlen(ops[i].op_text);

			if (lx.lx_off + l <= lx.lx_len &&
			    memcmp(lx.lx_buf + lx.lx_off, ops[i].op_text,
			    l) == 0)
				break;
		}
		if (i < sizeof(ops) / sizeof(ops[0])) {
			size_t l = strlen(ops[i].op_text);

			while (l-- > 0)
				lgetc(&lx);
			ltoken(&lx, ops[i].op_tok);
			continue;
		}
		lgetc(&lx);
		if (strchr("{}()[],;:/?.+-*%&|^!~<>=", c) == NULL || c == 0) {
			lerror(&lx, "syntax error");
			continue;
		}
		ltoken(&lx, c);
	}
	/* The end of input sits after the last character. */
	lgetc(&lx);
	ltoken(&lx, T_EOF);
	if (lx.lx_len > 0 && lx.lx_buf[lx.lx_len - 1] != '\n') {
		struct bt_token *tk = &lx.lx_toks[lx.lx_ntoks - 1];

		tk->tk_pos.p_off = lx.lx_len - 1;
		tk->tk_pos.p_col = (int)(lx.lx_len - 1 - lx.lx_linestart) + 1;
	}
	*toksp = lx.lx_toks;
	*ntoksp = lx.lx_ntoks;
	return lx.lx_errors;
}
