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
 * btrace: printf() of bt(5), with the conversions of printf(1) as
 * OpenBSD's btrace offers them.  The format's escapes were handled once by
 * the lexer and are not interpreted again.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

struct pf_args {
	struct bt_expr		*pa_next;
	struct bt_expr		*pa_last;	/* the argument just read */
	struct bt_evt_ctx	*pa_ec;
	int			 pa_used;
};

/*
 * An unset variable or map value is the integer 0, as in OpenBSD's
 * btrace ("%s" prints 0); a missing $N stays empty.
 */
static void
unset_is_zero(const struct bt_expr *e, struct bt_value *v)
{
	if (v->v_type != VT_NIL)
		return;
	if (e->be_kind == E_GVAR || e->be_kind == E_LVAR ||
	    e->be_kind == E_MAPGET) {
		memset(v, 0, sizeof(*v));
		v->v_type = VT_INT;
		v->v_int = 0;
	}
}

static int
next_arg(struct pf_args *pa, struct bt_value *v)
{
	if (pa->pa_next == NULL) {
		memset(v, 0, sizeof(*v));
		return 0;
	}
	*v = expr_eval(pa->pa_next, pa->pa_ec);
	unset_is_zero(pa->pa_next, v);
	pa->pa_last = pa->pa_next;
	pa->pa_next = pa->pa_next->be_next;
	pa->pa_used++;
	return 1;
}

/*
 * argN whose DTIOCGARGS type is a string (a Linux tracepoint's string
 * field) prints as the string the event carries.  Numbers stay numbers
 * everywhere else, and OpenBSD's probes, which have no string type,
 * print as on OpenBSD.
 */
static void
str_arg(const struct pf_args *pa, struct bt_value *v)
{
	const struct bt_expr *e = pa->pa_last;
	struct dt_evt *ev = pa->pa_ec != NULL ? pa->pa_ec->ec_evt : NULL;
	const char *s;
	int n;

	if (e == NULL || ev == NULL || e->be_kind != E_BUILTIN ||
	    e->be_op < B_ARG0 || e->be_op > B_ARG9)
		return;
	n = e->be_op - B_ARG0;
	if (dev_strarg(ev, n) && (s = evt_argstr(ev, n)) != NULL)
		*v = val_str(s);
}

/* A string where a number is wanted: convert as printf(1) does. */
static long
arg_long(struct pf_args *pa, int *isunsigned)
{
	struct bt_value v;
	const char *s;
	char *ep;
	long l;

	*isunsigned = 0;
	next_arg(pa, &v);
	if (v.v_type == VT_INT) {
		*isunsigned = (v.v_flags & VF_UNSIGNED) != 0;
		return v.v_int;
	}
	if (v.v_type == VT_NIL)
		return 0;
	s = val2str(&v);
	errno = 0;
	l = strtol(s, &ep, 0);
	if (*ep != '\0' || ep == s) {
		/* a warning, once per event: one line, with the position */
		fprintf(stderr, "%s:%d:%d: %s: %s\n", g_filename != NULL ?
		    g_filename : g_progname, pa->pa_last->be_pos.p_line,
		    pa->pa_last->be_pos.p_col, s, ep == s ?
		    "expected numeric value" : "not completely converted");
	}
	return l;
}

/* Returns 1 when "\c" ends all of the printf's output. */
static int
print_escaped(FILE *out, const char *s)
{
	int c, n;

	for (; *s != '\0'; s++) {
		if (*s != '\\') {
			fputc(*s, out);
			continue;
		}
		s++;
		switch (*s) {
		case 'n':	fputc('\n', out);	break;
		case 't':	fputc('\t', out);	break;
		case 'r':	fputc('\r', out);	break;
		case 'a':	fputc('\a', out);	break;
		case 'b':	fputc('\b', out);	break;
		case 'f':	fputc('\f', out);	break;
		case 'v':	fputc('\v', out);	break;
		case '\\':	fputc('\\', out);	break;
		case 'c':	return 1;
		case '0':
			for (c = 0, n = 0; n < 3 && s[1] >= '0' && s[1] <= '7';
			    n++)
				c = c * 8 + (*++s - '0');
			fputc(c, out);
			break;
		case '\0':
			fputc('\\', out);
			return 0;
		default:
			fputc('\\', out);
			fputc(*s, out);
		}
	}
	return 0;
}

/*
 * A directive as it may be shown in a message: control characters as
 * their escapes, so that "%z\n" stays on one line.
 */
static void
directive_text(char *buf, size_t size, const char *start, size_t len)
{
	size_t i, n = 0;
	int c;

	for (i = 0; i < len && n + 5 < size; i++) {
		c = (unsigned char)start[i];
		if (c == '\n')
			n += snprintf(buf + n, size - n, "\\n");
		else if (c == '\t')
			n += snprintf(buf + n, size - n, "\\t");
		else if (c < 0x20 || c == 0x7f)
			n += snprintf(buf + n, size - n, "\\%03o", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
}

/*
 * One pass over the format; returns -1 on a bad directive, 1 when "\c"
 * in a %b argument ends the printf.
 */
static int
format_once(FILE *out, const char *fmt, struct pf_args *pa,
    const struct bt_pos *pos)
{
	char spec[64], *sp;
	const char *p, *start;
	struct bt_value v;
	int width = 0, prec = 0, havew, havep, isu;
	long l;

	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%') {
			fputc(*p, out);
			continue;
		}
		start = p++;
		if (*p == '%') {
			fputc('%', out);
			continue;
		}
		sp = spec;
		*sp++ = '%';
		while (*p != '\0' && strchr("#-+ 0'", *p) != NULL &&
		    sp < spec + 8)
			*sp++ = *p++;
		havew = havep = 0;
		if (*p == '*') {
			p++;
			havew = 1;
			width = (int)arg_long(pa, &isu);
			*sp++ = '*';
		} else
			while (isdigit((unsigned char)*p) && sp < spec + 20)
				*sp++ = *p++;
		if (*p == '.') {
			*sp++ = *p++;
			if (*p == '*') {
				p++;
				havep = 1;
				prec = (int)arg_long(pa, &isu);
				*sp++ = '*';
			} else
				while (isdigit((unsigned char)*p) &&
				    sp < spec + 40)
					*sp++ = *p++;
		}
		/* length modifiers are accepted and ignored */
		while (*p != '\0' && strchr("hlLqjzt", *p) != NULL)
			p++;
		if (*p == '\0') {
			rt_error(pos, "missing format character");
			return -1;
		}
		switch (*p) {
		case 'd': case 'i': case 'o': case 'u': case 'x': case 'X':
			*sp++ = 'l';
			*sp++ = *p;
			*sp = '\0';
			l = arg_long(pa, &isu);
			if (havew && havep)
				fprintf(out, spec, width, prec, l);
			else if (havew)
				fprintf(out, spec, width, l);
			else if (havep)
				fprintf(out, spec, prec, l);
			else
				fprintf(out, spec, l);
			break;
		case 'p': {
			/*
			 * An extension (bpftrace's): an address as C's %p
			 * shows it, 0x and hex, its width and flags applying
			 * to the whole, as glibc's.
			 */
			char hex[24];

			l = arg_long(pa, &isu);
			snprintf(hex, sizeof(hex), "0x%lx", (unsigned long)l);
			*sp++ = 's';
			*sp = '\0';
			if (havew && havep)
				fprintf(out, spec, width, prec, hex);
			else if (havew)
				fprintf(out, spec, width, hex);
			else if (havep)
				fprintf(out, spec, prec, hex);
			else
				fprintf(out, spec, hex);
			break;
		}
		case 'c':
			*sp++ = 'c';
			*sp = '\0';
			next_arg(pa, &v);
			if (v.v_type == VT_STR || v.v_type == VT_TUPLE) {
				rt_error(pos, "%%c needs a number");
				return -1;
			}
			l = v.v_type == VT_INT ? v.v_int : 0;
			if (havew)
				fprintf(out, spec, width, (int)(unsigned char)l);
			else
				fprintf(out, spec, (int)(unsigned char)l);
			break;
		case 's':
		case 'b':
			*sp++ = 's';
			*sp = '\0';
			next_arg(pa, &v);
			str_arg(pa, &v);
			if (*p == 'b') {
				if (print_escaped(out, val2str(&v)))
					return 1;
				break;
			}
			if (havew && havep)
				fprintf(out, spec, width, prec, val2str(&v));
			else if (havew)
				fprintf(out, spec, width, val2str(&v));
			else if (havep)
				fprintf(out, spec, prec, val2str(&v));
			else
				fprintf(out, spec, val2str(&v));
			break;
		case 'a': case 'A': case 'e': case 'E': case 'f': case 'F':
		case 'g': case 'G': {
			double d;

			*sp++ = *p;
			*sp = '\0';
			next_arg(pa, &v);
			if (v.v_type == VT_STR)
				d = strtod(v.v_str, NULL);
			else
				d = v.v_type == VT_INT ? (double)v.v_int : 0.0;
			if (havew && havep)
				fprintf(out, spec, width, prec, d);
			else if (havew)
				fprintf(out, spec, width, d);
			else if (havep)
				fprintf(out, spec, prec, d);
			else
				fprintf(out, spec, d);
			break;
		}
		default:
			directive_text(spec, sizeof(spec), start,
			    (size_t)(p - start + 1));
			rt_error(pos, "%s: invalid directive", spec);
			return -1;
		}
	}
	return 0;
}

/*
 * What an argument is known to be before the run: 'i' a number, 's' a
 * string, 't' a tuple, '?' only known when it is evaluated.
 */
static int
static_type(const struct bt_expr *e)
{
	switch (e->be_kind) {
	case E_INT:
		return 'i';
	case E_STR:
	case E_STRFN:
	case E_STRFTIME:
	case E_KSYM:
	case E_USYM:
		return 's';
	case E_TUPLE:
		return 't';
	case E_BUILTIN:
		switch (e->be_op) {
		case B_COMM: case B_PROBE: case B_KSTACK: case B_USTACK:
			return 's';
		case B_PID: case B_TID: case B_CPU: case B_NSECS:
		case B_ELAPSED: case B_RETVAL: case B_NARGS: case B_ERRNO:
		case B_CPID: case B_UID: case B_GID: case B_CGROUP:
			return 'i';
		default:
			return '?';
		}
	default:
		return '?';
	}
}

static const char *
type_name(int t)
{
	return t == 's' ? "a string" : "a tuple";
}

/*
 * Check a printf whose format is a literal against its arguments before
 * the run: the directives (as format_once reads them), their count and
 * what each needs.  The format is reused while arguments remain, as
 * printf(1) does, so the arguments must fill whole passes.  Reports with
 * report(pos, message); returns the number of errors.
 */
int
printf_check(const struct bt_expr *args,
    void (*report)(const struct bt_pos *, const char *))
{
	const struct bt_expr *a, *fmt = args;
	const char *p, *start;
	char msg[128];
	char need[64];		/* per argument of one pass: 'i' 'c' 's' 'f' */
	char dir[64][24];	/* the directive that takes it */
	size_t nneed = 0, nargs = 0, i;
	int t, errors = 0;

	if (fmt == NULL || fmt->be_kind != E_STR)
		return 0;
	for (p = fmt->be_str; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		start = p++;
		if (*p == '%')
			continue;
		while (*p != '\0' && strchr("#-+ 0'", *p) != NULL)
			p++;
		if (*p == '*') {
			p++;
			if (nneed < sizeof(need)) {
				snprintf(dir[nneed], sizeof(dir[0]), "*");
				need[nneed++] = 'i';
			}
		} else
			while (isdigit((unsigned char)*p))
				p++;
		if (*p == '.') {
			p++;
			if (*p == '*') {
				p++;
				if (nneed < sizeof(need)) {
					snprintf(dir[nneed], sizeof(dir[0]),
					    ".*");
					need[nneed++] = 'i';
				}
			} else
				while (isdigit((unsigned char)*p))
					p++;
		}
		while (*p != '\0' && strchr("hlLqjzt", *p) != NULL)
			p++;
		if (*p == '\0') {
			report(&fmt->be_pos, "missing format character");
			return 1;
		}
		if (strchr("diouxXp", *p) != NULL)
			t = 'i';
		else if (*p == 'c')
			t = 'c';
		else if (*p == 's' || *p == 'b')
			t = 's';
		else if (strchr("aAeEfFgG", *p) != NULL)
			t = 'f';
		else {
			directive_text(dir[0], sizeof(dir[0]), start,
			    (size_t)(p - start + 1));
			snprintf(msg, sizeof(msg), "%s: invalid directive",
			    dir[0]);
			report(&fmt->be_pos, msg);
			return 1;
		}
		if (nneed < sizeof(need)) {
			directive_text(dir[nneed], sizeof(dir[0]), start,
			    (size_t)(p - start + 1));
			need[nneed++] = (char)t;
		}
	}
	for (a = fmt->be_next; a != NULL; a = a->be_next)
		nargs++;
	if (nargs < nneed || (nneed == 0 && nargs > 0) ||
	    (nneed > 0 && nargs % nneed != 0)) {
		snprintf(msg, sizeof(msg), "the format takes %zu argument%s%s, "
		    "%zu given", nneed, nneed == 1 ? "" : "s",
		    nneed > 0 && nargs > nneed ? " per pass" : "", nargs);
		report(&fmt->be_pos, msg);
		return 1;
	}
	for (a = fmt->be_next, i = 0; a != NULL; a = a->be_next, i++) {
		t = static_type(a);
		switch (need[i % nneed]) {
		case 'i':
		case 'c':
		case 'f':
			if (t != 's' && t != 't')
				continue;
			/* printf(1) reads a number from a numeric string */
			if (t == 's' && a->be_kind == E_STR &&
			    need[i % nneed] != 'c') {
				char *ep;

				if (need[i % nneed] == 'f')
					(void)strtod(a->be_str, &ep);
				else
					(void)strtol(a->be_str, &ep, 0);
				if (*a->be_str != '\0' && *ep == '\0')
					continue;
			}
			snprintf(msg, sizeof(msg), "%s needs a number, "
			    "not %s", dir[i % nneed], type_name(t));
			report(&a->be_pos, msg);
			errors++;
			break;
		default:
			break;
		}
	}
	return errors;
}

/*
 * -f json collects a printf's text in memory first.  A run-time error
 * leaves the stream open (the rule is abandoned): the next printf, or
 * exit, closes it.
 */
static FILE	*pf_out;
static char	*pf_buf;
static size_t	 pf_len;

static void
pf_close(void)
{
	if (pf_out != NULL)
		fclose(pf_out);
	free(pf_buf);
	pf_out = NULL;
	pf_buf = NULL;
}

void
bt_printf(struct bt_expr *args, struct bt_evt_ctx *ec)
{
	static int registered;
	struct pf_args pa;
	struct bt_value fv;
	const char *fmt;
	FILE *out = stdout;

	fv = expr_eval(args, ec);
	unset_is_zero(args, &fv);	/* printf(@unset) prints 0 */
	fmt = val2str(&fv);
	pa.pa_next = args->be_next;
	pa.pa_ec = ec;
	if (g_json) {
		if (!registered) {
			atexit(pf_close);
			registered = 1;
		}
		pf_close();
		if ((pf_out = open_memstream(&pf_buf, &pf_len)) != NULL)
			out = pf_out;
	}
	/* Like printf(1), the format is reused while arguments remain. */
	do {
		pa.pa_used = 0;
		if (format_once(out, fmt, &pa, &args->be_pos) != 0)
			break;
	} while (pa.pa_next != NULL && pa.pa_used > 0);
	if (out != stdout) {
		fclose(pf_out);
		pf_out = NULL;
		printf("{\"type\": \"printf\", \"data\": ");
		json_str(stdout, pf_buf);
		printf("}\n");
		free(pf_buf);
		pf_buf = NULL;
	}
}
