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
 * btrace: run-time values, their text forms and the scratch arena that
 * holds the temporaries of one event.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

#define CHUNK	(64 * 1024)

struct tchunk {
	struct tchunk	*tc_next;
	size_t		 tc_used, tc_size;
	max_align_t	 tc_data[];
};
static struct tchunk	*tchunks;

void *
xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (p == NULL) {
		perror("btrace");
		exit(1);
	}
	return p;
}

void *
xcalloc(size_t n, size_t len)
{
	void *p = calloc(n ? n : 1, len ? len : 1);

	if (p == NULL) {
		perror("btrace");
		exit(1);
	}
	return p;
}

char *
xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(xmalloc(len), s, len);
}

void *
tmp_alloc(size_t len)
{
	struct tchunk *tc = tchunks;
	size_t need = (len + 15) & ~(size_t)15;

	if (tc == NULL || tc->tc_size - tc->tc_used < need) {
		size_t size = need > CHUNK ? need : CHUNK;

		tc = xmalloc(sizeof(*tc) + size);
		tc->tc_size = size;
		tc->tc_used = 0;
		tc->tc_next = tchunks;
		tchunks = tc;
	}
	tc->tc_used += need;
	return (char *)tc->tc_data + tc->tc_used - need;
}

char *
tmp_strdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(tmp_alloc(len), s, len);
}

char *
tmp_vis(const char *s, size_t len)
{
	static const char cesc[] = "\a\b\t\n\v\f\r";
	static const char cname[] = "abtnvfr";
	char *out = tmp_alloc(4 * len + 1), *o = out;
	const char *e;
	unsigned char c;
	size_t i;

	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (c >= 0x20 && c != 0x7f)
			*o++ = (char)c;
		else if (c != 0 && (e = strchr(cesc, c)) != NULL) {
			*o++ = '\\';
			*o++ = cname[e - cesc];
		} else {
			*o++ = '\\';
			*o++ = (char)('0' + (c >> 6));
			*o++ = (char)('0' + ((c >> 3) & 7));
			*o++ = (char)('0' + (c & 7));
		}
	}
	*o = '\0';
	return out;
}

char *
tmp_printf(const char *fmt, ...)
{
	char small[256], *buf;
	va_list ap;
	int len;

	if (fmt == NULL)
		return tmp_strdup("");
	va_start(ap, fmt);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (len < 0)
		len = 0;
	buf = tmp_alloc(len + 1);
	if ((size_t)len < sizeof(small)) {
		memcpy(buf, small, len + 1);
		return buf;
	}
	va_start(ap, fmt);
	vsnprintf(buf, len + 1, fmt, ap);
	va_end(ap);
	return buf;
}

struct tmp_mark
tmp_mark(void)
{
	struct tmp_mark m;

	m.tm_chunk = tchunks;
	m.tm_used = tchunks != NULL ? tchunks->tc_used : 0;
	return m;
}

/* Free what was allocated since the mark: a loop's last iteration. */
void
tmp_release(struct tmp_mark m)
{
	struct tchunk *tc;

	while (tchunks != NULL && tchunks != m.tm_chunk) {
		tc = tchunks;
		tchunks = tc->tc_next;
		free(tc);
	}
	if (tchunks != NULL)
		tchunks->tc_used = m.tm_used;
}

/* Free all temporaries but the newest chunk, which is reused. */
void
tmp_reset(void)
{
	struct tchunk *tc, *next;

	if (tchunks == NULL)
		return;
	for (tc = tchunks->tc_next; tc != NULL; tc = next) {
		next = tc->tc_next;
		free(tc);
	}
	tchunks->tc_next = NULL;
	tchunks->tc_used = 0;
}

/*
 * Built whole by an initializer, not a memset and two stores: GCC
 * stored the memset in 16-byte halves and read them back 8 bytes astride
 * one, a failed store forwarding on every call, a fifth of btrace's time
 * per event (perf annotate).  The struct has no padding to leave
 * unset.
 */
_Static_assert(sizeof(struct bt_value) == sizeof(enum bt_vtype) +
    sizeof(int) + sizeof(long) + 2 * sizeof(void *) + sizeof(size_t),
    "struct bt_value has no padding");

struct bt_value
val_int(long v)
{
	return (struct bt_value){ .v_type = VT_INT, .v_int = v };
}

struct bt_value
val_str(const char *s)
{
	return (struct bt_value){ .v_type = VT_STR, .v_str = s };
}

/* Deep copy into malloc'ed memory, for values kept across events. */
void
val_copy(struct bt_value *dst, const struct bt_value *src)
{
	size_t i;

	*dst = *src;
	if (src->v_type == VT_STR)
		dst->v_str = xstrdup(src->v_str);
	else if (src->v_type == VT_TUPLE) {
		dst->v_tup = xcalloc(src->v_ntup, sizeof(*dst->v_tup));
		for (i = 0; i < src->v_ntup; i++)
			val_copy(&dst->v_tup[i], &src->v_tup[i]);
	}
}

void
val_free(struct bt_value *v)
{
	size_t i;

	if (v->v_type == VT_STR)
		free((char *)v->v_str);
	else if (v->v_type == VT_TUPLE) {
		for (i = 0; i < v->v_ntup; i++)
			val_free(&v->v_tup[i]);
		free(v->v_tup);
	}
	memset(v, 0, sizeof(*v));
}

int
val_equal(const struct bt_value *a, const struct bt_value *b)
{
	size_t i;

	if (a->v_type != b->v_type)
		return 0;
	switch (a->v_type) {
	case VT_NIL:
		return 1;
	case VT_INT:
		return a->v_int == b->v_int;
	case VT_STR:
		return strcmp(a->v_str, b->v_str) == 0;
	case VT_TUPLE:
		if (a->v_ntup != b->v_ntup)
			return 0;
		for (i = 0; i < a->v_ntup; i++)
			if (!val_equal(&a->v_tup[i], &b->v_tup[i]))
				return 0;
		return 1;
	}
	return 0;
}

/* Total order: nil < integers < strings < tuples, then by content. */
int
val_cmp(const struct bt_value *a, const struct bt_value *b)
{
	size_t i;
	int c;

	if (a->v_type != b->v_type)
		return a->v_type < b->v_type ? -1 : 1;
	switch (a->v_type) {
	case VT_NIL:
		return 0;
	case VT_INT:
		if (a->v_flags & VF_UNSIGNED)
			return (unsigned long)a->v_int <
			    (unsigned long)b->v_int ? -1 :
			    a->v_int != b->v_int;
		return a->v_int < b->v_int ? -1 : a->v_int > b->v_int;
	case VT_STR:
		c = strcmp(a->v_str, b->v_str);
		return c < 0 ? -1 : c > 0;
	case VT_TUPLE:
		for (i = 0; i < a->v_ntup && i < b->v_ntup; i++)
			if ((c = val_cmp(&a->v_tup[i], &b->v_tup[i])) != 0)
				return c;
		return a->v_ntup < b->v_ntup ? -1 : a->v_ntup > b->v_ntup;
	}
	return 0;
}

uint64_t
val_hash(const struct bt_value *v)
{
	uint64_t h = 1469598103934665603ULL + v->v_type;
	const unsigned char *p;
	size_t i;

	switch (v->v_type) {
	case VT_NIL:
		break;
	case VT_INT:
		h ^= (uint64_t)v->v_int;
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
		break;
	case VT_STR:
		for (p = (const unsigned char *)v->v_str; *p != '\0'; p++) {
			h ^= *p;
			h *= 1099511628211ULL;
		}
		break;
	case VT_TUPLE:
		for (i = 0; i < v->v_ntup; i++)
			h = (h * 31) ^ val_hash(&v->v_tup[i]);
		break;
	}
	return h;
}

/* Text of a key: tuple members joined by ", " as OpenBSD's map keys. */
const char *
val2key(const struct bt_value *v)
{
	char *s, *p;
	size_t i;

	if (v->v_type != VT_TUPLE)
		return val2str(v);
	s = tmp_strdup("");
	for (i = 0; i < v->v_ntup; i++) {
		p = tmp_printf("%s%s%s", s, i > 0 ? ", " : "",
		    val2str(&v->v_tup[i]));
		s = p;
	}
	return s;
}

const char *
val2str(const struct bt_value *v)
{
	switch (v->v_type) {
	case VT_NIL:
		return "";
	case VT_INT:
		if (v->v_flags & VF_UNSIGNED)
			return tmp_printf("%lu", (unsigned long)v->v_int);
		return tmp_printf("%ld", v->v_int);
	case VT_STR:
		return v->v_str;
	case VT_TUPLE:
		return tmp_printf("(%s)", val2key(v));
	}
	return "";
}

/*
 * Edit distance for did-you-mean suggestions: insertions, deletions,
 * substitutions and transpositions of neighbours (raed is one edit from
 * read), each counting one.
 */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, c, v;
	size_t d[64][64];

	if (la >= 64 || lb >= 64)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			c = a[i - 1] != b[j - 1];
			v = d[i - 1][j - 1] + c;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/*
 * The candidate closest to word, when it is close enough to be what was
 * meant, else NULL.  Close enough is relative to the word's length: one
 * edit in 4 to 6 letters, two in 7 to 9, three from 10; none in a word
 * of 3, where one edit makes another word altogether (cat is not max,
 * uid not pid).
 */
const char *
did_you_mean(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t i, d, len = strlen(word), bestd;

	bestd = (len > 0 ? (len - 1) / 3 : 0) + 1;
	if (bestd > 4)
		bestd = 4;
	for (i = 0; i < n; i++) {
		if (cands[i] == NULL || strcmp(cands[i], word) == 0)
			continue;
		d = edit_distance(word, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return best;
}
