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
 * btrace: maps (hash tables keyed by typed values), their aggregations
 * and histograms, and how OpenBSD's btrace prints them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

#define BAR_LEN		52	/* width of a histogram bar */
#define LABEL_LEN	20	/* bucket label and count, right aligned */

struct hbucket {
	long		 hb_key;	/* pow2: exponent class; lhist: bound */
	long		 hb_count;
};

struct hist {
	struct hbucket	*h_b;
	size_t		 h_n, h_cap;
	long		 h_under, h_over;	/* lhist: below min, from max */
	long		 h_lmin, h_lmax;
};

struct mentry {
	struct bt_value	 me_key;
	struct bt_value	 me_val;
	long		 me_cnt;	/* avg: number of values */
	struct hist	*me_hist;
	uint64_t	 me_hash;
	struct mentry	*me_next;
};

struct map {
	struct mentry	**m_tab;
	size_t		 m_nbuckets;
	size_t		 m_len;
};

struct map *
map_new(void)
{
	struct map *m = xcalloc(1, sizeof(*m));

	m->m_nbuckets = 64;
	m->m_tab = xcalloc(m->m_nbuckets, sizeof(*m->m_tab));
	return m;
}

static void
me_free(struct mentry *me)
{
	val_free(&me->me_key);
	val_free(&me->me_val);
	if (me->me_hist != NULL) {
		free(me->me_hist->h_b);
		free(me->me_hist);
	}
	free(me);
}

void
map_clear(struct map *m)
{
	struct mentry *me, *next;
	size_t i;

	for (i = 0; i < m->m_nbuckets; i++) {
		for (me = m->m_tab[i]; me != NULL; me = next) {
			next = me->me_next;
			me_free(me);
		}
		m->m_tab[i] = NULL;
	}
	m->m_len = 0;
}

void
map_free(struct map *m)
{
	if (m == NULL)
		return;
	map_clear(m);
	free(m->m_tab);
	free(m);
}

size_t
map_len(struct map *m)
{
	return m != NULL ? m->m_len : 0;
}

/* Find key's entry; with create, make it, and say so in *created. */
static struct mentry *
mfind2(struct map *m, const struct bt_value *key, int create, int *created)
{
	uint64_t h = val_hash(key);
	struct mentry *me, **tab;
	size_t i, nb;

	if (created != NULL)
		*created = 0;
	for (me = m->m_tab[h % m->m_nbuckets]; me != NULL; me = me->me_next)
		if (me->me_hash == h && val_equal(&me->me_key, key))
			return me;
	if (!create)
		return NULL;
	if (created != NULL)
		*created = 1;
	if (m->m_len >= m->m_nbuckets * 2) {
		nb = m->m_nbuckets * 4;
		tab = xcalloc(nb, sizeof(*tab));
		for (i = 0; i < m->m_nbuckets; i++) {
			struct mentry *next;

			for (me = m->m_tab[i]; me != NULL; me = next) {
				next = me->me_next;
				me->me_next = tab[me->me_hash % nb];
				tab[me->me_hash % nb] = me;
			}
		}
		free(m->m_tab);
		m->m_tab = tab;
		m->m_nbuckets = nb;
	}
	me = xcalloc(1, sizeof(*me));
	val_copy(&me->me_key, key);
	me->me_hash = h;
	me->me_next = m->m_tab[h % m->m_nbuckets];
	m->m_tab[h % m->m_nbuckets] = me;
	m->m_len++;
	return me;
}

static struct mentry *
mfind(struct map *m, const struct bt_value *key, int create)
{
	return mfind2(m, key, create, NULL);
}

/* The value an entry shows: avg is computed, the rest is stored. */
static struct bt_value
me_value(struct mentry *me)
{
	if (me->me_cnt > 0)
		return val_int(me->me_val.v_int / me->me_cnt);
	return me->me_val;
}

struct bt_value *
map_lookup(struct map *m, const struct bt_value *key)
{
	struct mentry *me = mfind(m, key, 0);
	struct bt_value *v;

	if (me == NULL)
		return NULL;
	if (me->me_cnt > 0) {
		v = tmp_alloc(sizeof(*v));
		*v = me_value(me);
		return v;
	}
	return &me->me_val;
}

void
map_store(struct map *m, const struct bt_value *key,
    const struct bt_value *val)
{
	struct mentry *me = mfind(m, key, 1);
	struct bt_value copy;

	/* copy first: val may point into this very entry */
	val_copy(&copy, val);
	val_free(&me->me_val);
	me->me_val = copy;
	me->me_cnt = 0;
}

void
map_delete(struct map *m, const struct bt_value *key)
{
	uint64_t h = val_hash(key);
	struct mentry **mep, *me;

	for (mep = &m->m_tab[h % m->m_nbuckets]; (me = *mep) != NULL;
	    mep = &me->me_next) {
		if (me->me_hash == h && val_equal(&me->me_key, key)) {
			*mep = me->me_next;
			me_free(me);
			m->m_len--;
			return;
		}
	}
}

void
map_zero(struct map *m)
{
	struct mentry *me;
	size_t i, j;

	for (i = 0; i < m->m_nbuckets; i++) {
		for (me = m->m_tab[i]; me != NULL; me = me->me_next) {
			val_free(&me->me_val);
			me->me_val = val_int(0);
			me->me_cnt = 0;
			if (me->me_hist != NULL) {
				me->me_hist->h_under = me->me_hist->h_over = 0;
				for (j = 0; j < me->me_hist->h_n; j++)
					me->me_hist->h_b[j].hb_count = 0;
			}
		}
	}
}

static void
hist_inc(struct hist *h, long key, long n)
{
	size_t lo = 0, hi = h->h_n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (h->h_b[mid].hb_key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < h->h_n && h->h_b[lo].hb_key == key) {
		h->h_b[lo].hb_count += n;
		return;
	}
	if (h->h_n == h->h_cap) {
		h->h_cap = h->h_cap ? h->h_cap * 2 : 16;
		h->h_b = realloc(h->h_b, h->h_cap * sizeof(*h->h_b));
		if (h->h_b == NULL) {
			perror("btrace");
			exit(1);
		}
	}
	memmove(&h->h_b[lo + 1], &h->h_b[lo], (h->h_n - lo) *
	    sizeof(*h->h_b));
	h->h_b[lo].hb_key = key;
	h->h_b[lo].hb_count = n;
	h->h_n++;
}

/* Power-of-two class: -1 negative, 0 zero, k+1 for [2^k, 2^(k+1)). */
static long
pow2_class(long v)
{
	unsigned long u = (unsigned long)v;
	long k = 0;

	if (v < 0)
		return -1;
	if (v == 0)
		return 0;
	while (u > 1) {
		u >>= 1;
		k++;
	}
	return k + 1;
}

void
map_agg(struct bt_var *bv, const struct bt_value *key, int agg, long v)
{
	struct map_part p = { 1, v, v, v, 0, 0 };

	if (agg == A_HIST)
		p.mp_bucket = pow2_class(v);
	else if (agg == A_LHIST) {
		/* out of range: counted in (..., min) or [max, ...) */
		if (v < bv->bv_lmin)
			p.mp_bkind = -1;
		else if (v >= bv->bv_lmax)
			p.mp_bkind = 1;
		else	/* the bucket's upper bound; wraps only past LONG_MAX */
			p.mp_bucket = (long)(((unsigned long)(v /
			    bv->bv_lstep) + 1) * (unsigned long)bv->bv_lstep);
	}
	map_merge(bv, key, agg, &p);
}

void
map_merge(struct bt_var *bv, const struct bt_value *key, int agg,
    const struct map_part *p)
{
	struct mentry *me;
	unsigned long u;
	int isnew;

	if (bv->bv_map == NULL)
		bv->bv_map = map_new();
	me = mfind2(bv->bv_map, key, 1, &isnew);
	if (me->me_val.v_type != VT_INT) {
		val_free(&me->me_val);
		me->me_val = val_int(0);
		isnew = 1;
	}
	u = (unsigned long)me->me_val.v_int;
	switch (agg) {
	case A_COUNT:
		me->me_val.v_int = (long)(u + (unsigned long)p->mp_count);
		break;
	case A_SUM:
		me->me_val.v_int = (long)(u + (unsigned long)p->mp_sum);
		break;
	case A_MIN:
		if (isnew || p->mp_min < me->me_val.v_int)
			me->me_val.v_int = p->mp_min;
		break;
	case A_MAX:
		if (isnew || p->mp_max > me->me_val.v_int)
			me->me_val.v_int = p->mp_max;
		break;
	case A_AVG:
	case A_STATS:
		me->me_val.v_int = (long)(u + (unsigned long)p->mp_sum);
		me->me_cnt += p->mp_count;
		break;
	case A_HIST:
	case A_LHIST:
		if (me->me_hist == NULL)
			me->me_hist = xcalloc(1, sizeof(*me->me_hist));
		if (agg == A_LHIST) {
			me->me_hist->h_lmin = bv->bv_lmin;
			me->me_hist->h_lmax = bv->bv_lmax;
		}
		if (p->mp_bkind < 0)
			me->me_hist->h_under += p->mp_count;
		else if (p->mp_bkind > 0)
			me->me_hist->h_over += p->mp_count;
		else
			hist_inc(me->me_hist, p->mp_bucket, p->mp_count);
		break;
	}
}

static struct mentry **
entries(struct map *m, size_t *np)
{
	struct mentry **v, *me;
	size_t i, n = 0;

	v = tmp_alloc((m->m_len + 1) * sizeof(*v));
	for (i = 0; i < m->m_nbuckets; i++)
		for (me = m->m_tab[i]; me != NULL; me = me->me_next)
			v[n++] = me;
	*np = n;
	return v;
}

static int
cmp_key(const void *a, const void *b)
{
	const struct mentry *ma = *(struct mentry * const *)a;
	const struct mentry *mb = *(struct mentry * const *)b;

	return val_cmp(&ma->me_key, &mb->me_key);
}

/* By value, largest first; integers before strings; then by key. */
static int
cmp_val(const void *a, const void *b)
{
	const struct mentry *ma = *(struct mentry * const *)a;
	const struct mentry *mb = *(struct mentry * const *)b;
	struct bt_value va = me_value((struct mentry *)ma);
	struct bt_value vb = me_value((struct mentry *)mb);
	int c;

	if (va.v_type != vb.v_type)
		return va.v_type == VT_INT ? -1 : vb.v_type == VT_INT ? 1 :
		    va.v_type < vb.v_type ? -1 : 1;
	c = val_cmp(&va, &vb);
	if (c != 0)
		return -c;
	return val_cmp(&ma->me_key, &mb->me_key);
}

/* Make v, shallow-copied from a map entry, live in scratch memory. */
static void
val_scratch(struct bt_value *v)
{
	struct bt_value *t;
	size_t j;

	if (v->v_type == VT_STR)
		v->v_str = tmp_strdup(v->v_str);
	else if (v->v_type == VT_TUPLE) {
		t = tmp_alloc((v->v_ntup + 1) * sizeof(*t));
		for (j = 0; j < v->v_ntup; j++) {
			t[j] = v->v_tup[j];
			val_scratch(&t[j]);
		}
		v->v_tup = t;
	}
}

/* Snapshot of keys and values in key order, for `for' loops. */
void
map_keys(struct map *m, struct bt_value **keysp, struct bt_value **valsp,
    size_t *np)
{
	struct mentry **v;
	struct bt_value *keys, *vals;
	size_t n, i;

	v = entries(m, &n);
	qsort(v, n, sizeof(*v), cmp_key);
	keys = tmp_alloc((n + 1) * sizeof(*keys));
	vals = tmp_alloc((n + 1) * sizeof(*vals));
	for (i = 0; i < n; i++) {
		/* the loop body may delete entries: copy to scratch */
		keys[i] = v[i]->me_key;
		val_scratch(&keys[i]);
		vals[i] = me_value(v[i]);
		val_scratch(&vals[i]);
	}
	*keysp = keys;
	*valsp = vals;
	*np = n;
}

/* 1024-based suffixes of a power of two 2^p. */
static const char *
pow2_label(int p)
{
	static const char *sfx[] = { "", "K", "M", "G", "T", "P", "E" };
	int s = p / 10;

	if (s > 6)
		s = 6;
	return tmp_printf("%lu%s", 1UL << (p - s * 10), sfx[s]);
}

static const char *
bucket_label(long key, long step)
{
	if (step != 0)
		return tmp_printf("[%lu, %lu)", (unsigned long)key -
		    (unsigned long)step, (unsigned long)key);
	if (key < 0)
		return "(..., 0)";
	if (key == 0)
		return "[0]";
	return tmp_printf("[%s, %s)", pow2_label((int)key - 1),
	    pow2_label((int)key));
}

/* A histogram's rows in order, counts divided by div; *maxp the largest. */
static struct hrow *
hist_rows(struct hist *h, long div, size_t *np, long *maxp)
{
	struct hrow *rows;
	size_t i, n = 0;

	rows = tmp_alloc((h->h_n + 2) * sizeof(*rows));
	if (h->h_under > 0)
		rows[n++] = (struct hrow){ -1, h->h_lmin, h->h_under };
	for (i = 0; i < h->h_n; i++)
		rows[n++] = (struct hrow){ 0, h->h_b[i].hb_key,
		    h->h_b[i].hb_count };
	if (h->h_over > 0)
		rows[n++] = (struct hrow){ 1, h->h_lmax, h->h_over };
	*maxp = 0;
	for (i = 0; i < n; i++) {
		rows[i].hr_count /= div;
		if (rows[i].hr_count > *maxp)
			*maxp = rows[i].hr_count;
	}
	*np = n;
	return rows;
}

static void
hist_print(const char *header, struct hist *h, long step, long div)
{
	struct hrow *rows;
	const char *label;
	long max, val;
	size_t i, n;
	int bar, l;

	rows = hist_rows(h, div, &n, &max);
	printf("%s:\n", header);
	for (i = 0; i < n; i++) {
		if (rows[i].hr_kind < 0)
			label = tmp_printf("(..., %ld)", rows[i].hr_key);
		else if (rows[i].hr_kind > 0)
			label = tmp_printf("[%ld, ...)", rows[i].hr_key);
		else
			label = bucket_label(rows[i].hr_key, step);
		val = rows[i].hr_count;
		bar = max > 0 ? (int)((BAR_LEN * val) / max) : 0;
		l = (int)strlen(label);
		printf("%s%*ld |%.*s%*s|\n", label, LABEL_LEN - l, val, bar,
		    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
		    BAR_LEN - bar, "");
	}
}

/*
 * -f json: a map on one line, as bpftrace: {"@name": value} without
 * keys, else {"@name": {"key": value, ...}}; hist and lhist values are
 * bucket lists, avg maps are bpftrace's "stats".
 */
static void
map_print_json(struct bt_var *bv, struct mentry **v, size_t n, size_t top,
    long div)
{
	struct bt_value val;
	struct hrow *rows;
	int keyless = n == 1 && v[0]->me_key.v_type == VT_NIL;
	int hist = bv->bv_agg == A_HIST || bv->bv_agg == A_LHIST;
	size_t i, nrows, shown = 0;
	long max;

	printf("{\"type\": \"%s\", \"data\": {", hist ? "hist" :
	    bv->bv_agg == A_AVG || bv->bv_agg == A_STATS ? "stats" : "map");
	json_str(stdout, tmp_printf("@%s", bv->bv_name));
	printf(": %s", keyless ? "" : "{");
	for (i = 0; i < n && shown < top; i++) {
		if (hist && v[i]->me_hist == NULL) {
			if (keyless)
				printf("[]");
			continue;
		}
		if (!keyless) {
			printf("%s", shown > 0 ? ", " : "");
			json_key(&v[i]->me_key);
			printf(": ");
		}
		shown++;
		if (hist) {
			rows = hist_rows(v[i]->me_hist, div, &nrows, &max);
			json_hist(rows, nrows, bv->bv_agg == A_LHIST ?
			    bv->bv_lstep : 0, v[i]->me_hist->h_lmin,
			    v[i]->me_hist->h_lmax);
			continue;
		}
		if (bv->bv_agg == A_STATS) {
			printf("{\"count\": %ld, \"average\": %ld, "
			    "\"total\": %ld}", v[i]->me_cnt, v[i]->me_cnt ?
			    v[i]->me_val.v_int / v[i]->me_cnt : 0,
			    v[i]->me_val.v_int);
			continue;
		}
		val = me_value(v[i]);
		if (val.v_type == VT_INT && div != 1)
			val.v_int = div == -1 ? (long)(0UL -
			    (unsigned long)val.v_int) : val.v_int / div;
		json_value(&val);
	}
	printf("%s}}\n", keyless ? "" : "}");
}

/* A kstack/ustack string: frames innermost first, then a trailer. */
static int
is_stack(const char *s)
{
	size_t len = strlen(s);

	return s[0] == '\n' && ((len >= 8 && strcmp(s + len - 8,
	    "\nkernel\n") == 0) || (len >= 10 && strcmp(s + len - 10,
	    "\nuserland\n") == 0));
}

/*
 * One frame as flame graph tools want it: the function without its
 * "+0xNN" offset, so that all of a function's samples make one frame.
 */
static const char *
fold_frame(const char *f)
{
	const char *plus = strrchr(f, '+');
	size_t i;

	if (plus == NULL || plus == f || strncmp(plus, "+0x", 3) != 0 ||
	    plus[3] == '\0')
		return f;
	for (i = 3; plus[i] != '\0'; i++)
		if (!isxdigit((unsigned char)plus[i]))
			return f;
	return tmp_printf("%.*s", (int)(plus - f), f);
}

/* Append one frame, never an empty one. */
static const char *
fold_add(const char *out, const char *frame)
{
	if (*frame == '\0')
		return out;
	return tmp_printf("%s%s%s", out, *out != '\0' ? ";" : "", frame);
}

/* Frames outermost first, joined by ';', as flame graph tools want. */
static const char *
fold_stack(const char *out, const char *s)
{
	char *copy = tmp_strdup(s), *lines[STACKTRACE_MAX + 2], *p;
	size_t n = 0, i;

	for (p = strtok(copy, "\n"); p != NULL; p = strtok(NULL, "\n"))
		if (n < sizeof(lines) / sizeof(lines[0]))
			lines[n++] = p;
	if (n > 0)
		n--;	/* the "kernel" or "userland" trailer */
	for (i = n; i > 0; i--)
		out = fold_add(out, fold_frame(lines[i - 1]));
	return out;
}

static const char *
fold_key(const struct bt_value *k)
{
	const char *s, *out = "";
	size_t i, n = k->v_type == VT_TUPLE ? k->v_ntup : 1;

	for (i = 0; i < n; i++) {
		s = val2str(k->v_type == VT_TUPLE ? &k->v_tup[i] : k);
		out = is_stack(s) ? fold_stack(out, s) : fold_add(out, s);
	}
	/* a sample with no frame at all (an empty stack) is still counted */
	return *out != '\0' ? out : "[unknown]";
}

struct folded {
	const char	*fo_line;
	struct bt_value	 fo_val;
};

static int
cmp_fold_line(const void *a, const void *b)
{
	return strcmp(((const struct folded *)a)->fo_line,
	    ((const struct folded *)b)->fo_line);
}

static int
cmp_fold_val(const void *a, const void *b)
{
	const struct folded *fa = a, *fb = b;

	if (fa->fo_val.v_type == VT_INT && fb->fo_val.v_type == VT_INT &&
	    fa->fo_val.v_int != fb->fo_val.v_int)
		return fa->fo_val.v_int < fb->fo_val.v_int ? 1 : -1;
	return strcmp(fa->fo_line, fb->fo_line);
}

/*
 * -f folded: "frame;frame;... value" lines, entries that fold to the
 * same frames (offsets dropped) summed into one line.
 */
static void
folded_print(struct mentry **v, size_t n, size_t top, long div)
{
	struct folded *fo = xcalloc(n ? n : 1, sizeof(*fo));
	size_t i, j;

	for (i = 0; i < n; i++) {
		fo[i].fo_line = fold_key(&v[i]->me_key);
		fo[i].fo_val = me_value(v[i]);
	}
	qsort(fo, n, sizeof(*fo), cmp_fold_line);
	for (i = 0, j = 0; i < n; i++) {
		if (j > 0 && strcmp(fo[j - 1].fo_line, fo[i].fo_line) == 0 &&
		    fo[j - 1].fo_val.v_type == VT_INT &&
		    fo[i].fo_val.v_type == VT_INT) {
			fo[j - 1].fo_val.v_int += fo[i].fo_val.v_int;
			continue;
		}
		fo[j++] = fo[i];
	}
	qsort(fo, j, sizeof(*fo), cmp_fold_val);
	for (i = 0; i < j && i < top; i++) {
		if (fo[i].fo_val.v_type == VT_INT && div != 1)
			fo[i].fo_val.v_int = div == -1 ? (long)(0UL -
			    (unsigned long)fo[i].fo_val.v_int) :
			    fo[i].fo_val.v_int / div;
		printf("%s %s\n", fo[i].fo_line, val2str(&fo[i].fo_val));
	}
	free(fo);
}

/* Print at most `top' entries, values divided by `div'. */
void
map_print(struct bt_var *bv, size_t top, long div)
{
	struct mentry **v;
	struct bt_value val;
	const char *name = bv->bv_name;
	size_t n, i;

	if (bv->bv_map == NULL || bv->bv_map->m_len == 0)
		return;
	v = entries(bv->bv_map, &n);
	if (bv->bv_agg == A_HIST || bv->bv_agg == A_LHIST) {
		long step = bv->bv_agg == A_LHIST ? bv->bv_lstep : 0;

		qsort(v, n, sizeof(*v), cmp_key);
		if (g_json) {
			map_print_json(bv, v, n, (size_t)-1, div);
			return;
		}
		/*
		 * Folded output is read by flame graph tools, which would
		 * take a histogram's bars for stacks: left out, and said.
		 */
		if (g_folded) {
			fflush(stdout);
			fprintf(stderr, "%s: -f folded: @%s is a histogram, "
			    "not printed (folded output holds stack counts; "
			    "-f text or json shows it)\n", g_progname, name);
			return;
		}
		for (i = 0; i < n; i++) {
			if (v[i]->me_hist == NULL)
				continue;
			if (v[i]->me_key.v_type == VT_NIL)
				hist_print(tmp_printf("@%s", name),
				    v[i]->me_hist, step, div);
			else
				hist_print(tmp_printf("@%s[%s]", name,
				    val2key(&v[i]->me_key)), v[i]->me_hist,
				    step, div);
		}
		return;
	}
	qsort(v, n, sizeof(*v), cmp_val);
	if (g_json) {
		map_print_json(bv, v, n, top, div);
		return;
	}
	if (g_folded && !(n == 1 && v[0]->me_key.v_type == VT_NIL)) {
		folded_print(v, n, top, div);
		return;
	}
	for (i = 0; i < n && i < top; i++) {
		/* bpftrace's line for stats(): the three, divided alike */
		if (bv->bv_agg == A_STATS) {
			long cnt = v[i]->me_cnt, tot = v[i]->me_val.v_int;
			long avg = cnt ? tot / cnt : 0;

			if (div == -1)
				avg = -avg, tot = -tot;
			else if (div != 1)
				avg /= div, tot /= div;
			val = val_str(tmp_printf("count %ld, average %ld, "
			    "total %ld", cnt, avg, tot));
		} else
			val = me_value(v[i]);
		if (val.v_type == VT_INT && div != 1)
			val.v_int = div == -1 ? (long)(0UL -
			    (unsigned long)val.v_int) : val.v_int / div;
		if (v[i]->me_key.v_type == VT_NIL)
			printf("@%s: %s\n", name, val2str(&val));
		else
			printf("@%s[%s]: %s\n", name,
			    val2key(&v[i]->me_key), val2str(&val));
	}
}

static int
cmp_order(const void *a, const void *b)
{
	const struct bt_var *va = *(struct bt_var * const *)a;
	const struct bt_var *vb = *(struct bt_var * const *)b;

	return va->bv_order - vb->bv_order;
}

/* At exit: every non-empty map, in the order OpenBSD would use. */
void
maps_print_all(void)
{
	struct bt_var *bv, **vars;
	size_t n = 0, i;

	agg_sync();
	for (bv = g_vars; bv != NULL; bv = bv->bv_next)
		n++;
	vars = xcalloc(n, sizeof(*vars));
	for (n = 0, bv = g_vars; bv != NULL; bv = bv->bv_next)
		if (bv->bv_ismap > 0)
			vars[n++] = bv;
	qsort(vars, n, sizeof(*vars), cmp_order);
	for (i = 0; i < n; i++) {
		map_print(vars[i], (size_t)-1, 1);
		if (vars[i]->bv_map != NULL)
			map_clear(vars[i]->bv_map);
		tmp_reset();
	}
	free(vars);
}
