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
 * The rewriter's lookup tables: trampoline to site (udt_rw_site_of(), for
 * user stacks) and trapped site to stub (the SIGTRAP handler).  A pass
 * of the rewriter stages what it made and publishes a new sorted copy at
 * its end; readers, any thread and signal handlers among them, load the
 * pointer and search the copy it names, which never changes or goes
 * away (a few kB a dlopen()).
 *
 * Locks used to protect the fields below:
 *	[I]	immutable once published
 *	[w]	the rewriter's pass: the constructor, or udt_rw_brk() under
 *		the dynamic loader's lock
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"

struct udt_rw_tab {
	size_t		tb_n;			/* [I] */
	uintptr_t	tb_e[][2];		/* [I] (key, value) by key */
};

/*
 * The stages and tables live on: they come from one area in the
 * library's bss, its pages touched as they are used, so a process's
 * start pays no mmap for them (the loader mapped the bss already), not
 * one each and each growth.  What does not fit gets a mapping of its
 * own.  [w]
 */
#define UDT_RW_KEEPSZ	(1UL << 21)
static UDT_LBSS uint8_t udt_rw_keepbase[UDT_RW_KEEPSZ]
    __attribute__((aligned(4096)));
static size_t	 udt_rw_keepused;

static void *
udt_rw_keep(size_t len)
{
	len = (len + 63) & ~(size_t)63;
	if (UDT_RW_KEEPSZ - udt_rw_keepused < len)
		return udt_rw_alloc(len);
	udt_rw_keepused += len;
	return udt_rw_keepbase + udt_rw_keepused - len;
}

/* What udt_rw_keep() gave and nobody reads any more. */
static void
udt_rw_unkeep(void *p, size_t len)
{
	if ((uint8_t *)p < udt_rw_keepbase ||
	    (uint8_t *)p >= udt_rw_keepbase + UDT_RW_KEEPSZ)
		udt_sys2(SYS_munmap, p, len);
}

/*
 * A stage's entries follow room for a table's header, so that its first
 * publication sorts them where they are and hands them over (below): a
 * copy of a libc's sites is three pages more, a fault each.
 */
#define UDT_RW_TABHDR	offsetof(struct udt_rw_tab, tb_e)

int
udt_rw_stage_put(struct udt_rw_stage *s, uintptr_t key, uintptr_t val)
{
	uint8_t *m;
	size_t max;

	if (s->st_n == s->st_max) {
		/* A libc's sites fit the first of a stage of sites. */
		max = s->st_max != 0 ? 2 * s->st_max : s->st_first != 0 ?
		    s->st_first : 4096;
		if ((m = udt_rw_keep(UDT_RW_TABHDR + max * sizeof(*s->st_e)))
		    == NULL)
			return -1;
		if (s->st_n > 0) {
			memcpy(m + UDT_RW_TABHDR, s->st_e,
			    s->st_n * sizeof(*s->st_e));
			udt_rw_unkeep((uint8_t *)s->st_e - UDT_RW_TABHDR,
			    UDT_RW_TABHDR + s->st_max * sizeof(*s->st_e));
		}
		s->st_e = (void *)(m + UDT_RW_TABHDR);
		s->st_max = max;
	}
	s->st_e[s->st_n][0] = key;
	s->st_e[s->st_n][1] = val;
	s->st_n++;
	return 0;
}

/*
 * Sort e[n] by key, in place: a heap sort, which needs no memory and no
 * system call (glibc's qsort() asks the kernel for the machine's memory
 * size before it sorts a large array).
 */
static void
udt_rw_tab_sift(uintptr_t (*e)[2], size_t i, size_t n)
{
	uintptr_t t0, t1;
	size_t c;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && e[c + 1][0] > e[c][0])
			c++;
		if (e[i][0] >= e[c][0])
			return;
		t0 = e[i][0];
		t1 = e[i][1];
		e[i][0] = e[c][0];
		e[i][1] = e[c][1];
		e[c][0] = t0;
		e[c][1] = t1;
	}
}

static void
udt_rw_tab_sort(uintptr_t (*e)[2], size_t n)
{
	uintptr_t t0, t1;
	size_t i, lo, hi, mid, moved = 0;

	/*
	 * Trampolines are laid out as their sites are committed, so a
	 * start's table comes in order but for a few: the vDSO's, staged
	 * last, lie in the first page of an image's region, below the
	 * rest.  Each of those few is moved into place (a binary search,
	 * one move); a heap sort of the whole cost a traced exec 40 us.
	 * Past a few, the heap sort: its cost is bounded.
	 */
	for (i = 1; i < n; i++) {
		if (e[i - 1][0] <= e[i][0])
			continue;
		if (++moved > 64)
			break;
		t0 = e[i][0];
		t1 = e[i][1];
		for (lo = 0, hi = i; lo < hi; ) {
			mid = (lo + hi) / 2;
			if (e[mid][0] <= t0)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(e[lo + 1], e[lo], (i - lo) * sizeof(e[0]));
		e[lo][0] = t0;
		e[lo][1] = t1;
	}
	if (i >= n)
		return;
	for (i = n / 2; i-- > 0; )
		udt_rw_tab_sift(e, i, n);
	for (i = n; i-- > 1; ) {
		t0 = e[0][0];
		t1 = e[0][1];
		e[0][0] = e[i][0];
		e[0][1] = e[i][1];
		e[i][0] = t0;
		e[i][1] = t1;
		udt_rw_tab_sift(e, 0, i);
	}
}

/* Whether entry e of a table lies in one of the gone ranges. */
static int
udt_rw_tab_gone(const uintptr_t e[2], int byval, const uintptr_t (*gone)[2],
    size_t ngone)
{
	uintptr_t x = e[byval ? 1 : 0];
	size_t k;

	for (k = 0; k < ngone; k++)
		if (x >= gone[k][0] && x < gone[k][1])
			return 1;
	return 0;
}

int
udt_rw_tab_publish(struct udt_rw_tab **tp, struct udt_rw_stage *s,
    int byval, const uintptr_t (*gone)[2], size_t ngone)
{
	const struct udt_rw_tab *old = __atomic_load_n(tp, __ATOMIC_RELAXED);
	struct udt_rw_tab *t;
	size_t i, n = 0, max = (old != NULL ? old->tb_n : 0) + s->st_n;

	/* Nothing new, nothing stale: the copy readers have stays. */
	for (i = 0; s->st_n == 0 && old != NULL && i < old->tb_n; i++)
		if (udt_rw_tab_gone(old->tb_e[i], byval, gone, ngone))
			break;
	if (s->st_n == 0 && (old == NULL || i == old->tb_n))
		return 0;
	/* The first: the stage's own memory becomes the table. */
	if (old == NULL) {
		t = (void *)((uint8_t *)s->st_e - UDT_RW_TABHDR);
		udt_rw_tab_sort(t->tb_e, s->st_n);
		t->tb_n = s->st_n;
		__atomic_store_n(tp, t, __ATOMIC_RELEASE);
		s->st_e = NULL;
		s->st_n = s->st_max = 0;
		return 0;
	}
	if ((t = udt_rw_keep(sizeof(*t) + max * sizeof(t->tb_e[0]))) ==
	    NULL)
		return -1;
	/* What lay in ranges mapped anew is stale. */
	for (i = 0; old != NULL && i < old->tb_n; i++)
		if (!udt_rw_tab_gone(old->tb_e[i], byval, gone, ngone)) {
			t->tb_e[n][0] = old->tb_e[i][0];
			t->tb_e[n++][1] = old->tb_e[i][1];
		}
	/* After a hand-over the stage may have no memory at all. */
	if (s->st_n > 0)
		memcpy(t->tb_e[n], s->st_e, s->st_n * sizeof(t->tb_e[0]));
	n += s->st_n;
	udt_rw_tab_sort(t->tb_e, n);
	t->tb_n = n;
	__atomic_store_n(tp, t, __ATOMIC_RELEASE);
	s->st_n = 0;
	return 0;
}

int
udt_rw_tab_floor(struct udt_rw_tab *const *tp, uintptr_t key,
    uintptr_t *kp, uintptr_t *vp)
{
	const struct udt_rw_tab *t = __atomic_load_n(tp, __ATOMIC_ACQUIRE);
	size_t lo = 0, hi, mid;

	if (t == NULL)
		return -1;
	hi = t->tb_n;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (t->tb_e[mid][0] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	*kp = t->tb_e[lo - 1][0];
	*vp = t->tb_e[lo - 1][1];
	return 0;
}
