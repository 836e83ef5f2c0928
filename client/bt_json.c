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
 * btrace: -f json, one object per line in bpftrace's layout, so that what
 * reads bpftrace's JSON reads ours: {"type": T, "data": D} with T one of
 * printf, time, value, map, stats (avg maps), hist (hist and lhist) and
 * lost_events.  Map keys are strings, a multi-key's members joined by ","
 * as bpftrace joins them; a histogram is a list of {"min", "max",
 * "count"} objects (bounds included), without gaps between its first and
 * last bucket.
 */
#include <stdio.h>

#include "btrace.h"

/* Length of the UTF-8 sequence at p, 0 if it is not a valid one. */
static size_t
utf8_len(const unsigned char *p)
{
	size_t n, i;
	unsigned long c;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	c = p[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* a NUL ends it here too */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates and past U+10FFFF are not text */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string.  Valid UTF-8 passes as it is; any other byte (a
 * string argument is whatever the process passed) becomes the code point
 * of the same number, so that every line stays valid JSON.
 */
void
json_str(FILE *out, const char *s)
{
	const unsigned char *p;
	size_t n;

	fputc('"', out);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':	fputs("\\\"", out);	break;
		case '\\':	fputs("\\\\", out);	break;
		case '\b':	fputs("\\b", out);	break;
		case '\f':	fputs("\\f", out);	break;
		case '\n':	fputs("\\n", out);	break;
		case '\r':	fputs("\\r", out);	break;
		case '\t':	fputs("\\t", out);	break;
		default:
			if (*p >= 0x20 && *p < 0x7f)
				fputc(*p, out);
			else if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
				fwrite(p, 1, n, out);
				p += n - 1;
			} else
				fprintf(out, "\\u%04x", *p);
		}
	}
	fputc('"', out);
}

/* A value: numbers as numbers, a tuple as an array, as bpftrace. */
void
json_value(const struct bt_value *v)
{
	size_t i;

	switch (v->v_type) {
	case VT_NIL:
		fputs("0", stdout);	/* unset is the integer 0 */
		break;
	case VT_INT:
		fputs(val2str(v), stdout);
		break;
	case VT_STR:
		json_str(stdout, v->v_str);
		break;
	case VT_TUPLE:
		fputc('[', stdout);
		for (i = 0; i < v->v_ntup; i++) {
			if (i > 0)
				fputc(',', stdout);
			json_value(&v->v_tup[i]);
		}
		fputc(']', stdout);
		break;
	}
}

/* A map key: always a string; a multi-key's members joined by ",". */
void
json_key(const struct bt_value *k)
{
	const char *s = "";
	size_t i;

	if (k->v_type != VT_TUPLE) {
		json_str(stdout, val2str(k));
		return;
	}
	for (i = 0; i < k->v_ntup; i++)
		s = tmp_printf("%s%s%s", s, i > 0 ? "," : "",
		    val2str(&k->v_tup[i]));
	json_str(stdout, s);
}

/* The lhist bucket after the one whose upper bound is key. */
static long
next_key(long key, long step)
{
	return step != 0 ? (long)((unsigned long)key + (unsigned long)step) :
	    key + 1;
}

static void
json_bucket(int first, int kind, long k, long step, long count)
{
	printf("%s{", first ? "" : ", ");
	if (kind < 0)
		printf("\"max\": %ld, ", k - 1);
	else if (kind > 0)
		printf("\"min\": %ld, ", k);
	else if (step != 0)
		printf("\"min\": %lu, \"max\": %lu, ",
		    (unsigned long)k - (unsigned long)step,
		    (unsigned long)k - 1);
	else if (k < 0)
		printf("\"max\": -1, ");
	else if (k == 0)
		printf("\"min\": 0, \"max\": 0, ");
	else if (k == 64)
		printf("\"min\": %lu, \"max\": %lu, ", 1UL << 63, ~0UL);
	else
		printf("\"min\": %lu, \"max\": %lu, ", 1UL << (k - 1),
		    (1UL << k) - 1);
	printf("\"count\": %ld}", count);
}

/*
 * A histogram's rows (in order, counts already divided) as bpftrace's
 * list: the buckets between two rows are there with a count of 0, and
 * an lhist with values below its min or from its max shows every bucket
 * of its range.  step is 0 for hist, whose keys are consecutive
 * classes; an lhist's keys are the buckets' upper bounds.
 */
void
json_hist(const struct hrow *rows, size_t n, long step, long lmin, long lmax)
{
	size_t i;
	long k, nk, end;

	fputc('[', stdout);
	for (i = 0; i < n; i++) {
		json_bucket(i == 0, rows[i].hr_kind, rows[i].hr_key, step,
		    rows[i].hr_count);
		if (i + 1 == n || rows[i].hr_kind > 0)
			continue;
		/* the empty buckets up to the next row */
		if (rows[i].hr_kind < 0)	/* from the range's first */
			k = (long)(((unsigned long)(lmin / step) + 1) *
			    (unsigned long)step);
		else
			k = next_key(rows[i].hr_key, step);
		if (rows[i + 1].hr_kind > 0)	/* through its last */
			end = (long)(((unsigned long)((lmax - 1) / step) +
			    2) * (unsigned long)step);
		else
			end = rows[i + 1].hr_key;
		for (; k < end; k = nk) {
			json_bucket(0, 0, k, step, 0);
			if ((nk = next_key(k, step)) <= k)
				break;	/* past LONG_MAX */
		}
	}
	fputc(']', stdout);
}
