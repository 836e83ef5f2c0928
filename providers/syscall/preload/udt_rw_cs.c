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
 * Capstone as the rewriter calls it: through the table of its module
 * (udt_cs_mod.h), mapped at the first decoding (udt_rw_csload.c), its
 * memory from the rewriter's scratch (below).
 *
 * Concurrency contract: the rewriter's pass alone [w].
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "udt_cs_mod.h"
#include "udt_rw_cs.h"

/*
 * Capstone's memory, from the rewriter's pass scratch: its cs_open()
 * and cs_malloc() then cost no malloc (whose first use in a process is
 * a getrandom, two brk and a 2 MB heap mapping, system calls and
 * memory the traced program would not have had).  A bump arena, given
 * back whole with the scratch at the end of the pass; Capstone is
 * closed before.  [w]: the pass alone.
 */
static uint8_t	*udt_rw_cs_base;			/* [w] */
static size_t	 udt_rw_cs_len, udt_rw_cs_used;		/* [w] */

static void *
udt_rw_cs_malloc(size_t n)
{
	size_t *p;

	n = (n + 15) & ~(size_t)15;
	if (udt_rw_cs_base == NULL || n + 16 > udt_rw_cs_len - udt_rw_cs_used)
		return NULL;
	p = (size_t *)(void *)(udt_rw_cs_base + udt_rw_cs_used);
	udt_rw_cs_used += n + 16;
	*p = n;
	return (uint8_t *)p + 16;
}

static void *
udt_rw_cs_calloc(size_t n, size_t m)
{
	void *p;

	if (m != 0 && n > SIZE_MAX / m)
		return NULL;
	if ((p = udt_rw_cs_malloc(n * m)) != NULL)
		memset(p, 0, n * m);
	return p;
}

static void *
udt_rw_cs_realloc(void *old, size_t n)
{
	void *p;
	size_t was;

	if (old == NULL)
		return udt_rw_cs_malloc(n);
	was = *(size_t *)(void *)((uint8_t *)old - 16);
	if (n <= was)
		return old;
	if ((p = udt_rw_cs_malloc(n)) != NULL)
		memcpy(p, old, was);
	return p;
}

static void
udt_rw_cs_free(void *p)
{
	(void)p;
}

static int
udt_rw_cs_arena(const struct udt_cs_ops *ops, void *base, size_t len)
{
	cs_opt_mem mem = {
		.malloc = udt_rw_cs_malloc,
		.calloc = udt_rw_cs_calloc,
		.realloc = udt_rw_cs_realloc,
		.free = udt_rw_cs_free,
		.vsnprintf = vsnprintf,
	};

	udt_rw_cs_base = base;
	udt_rw_cs_len = len;
	udt_rw_cs_used = 0;
	return ops->co_option(0, CS_OPT_MEM, (size_t)&mem) == CS_ERR_OK ?
	    0 : -1;
}

int
udt_rw_cs_open(void *arena, size_t len, csh *hp, cs_insn **cip)
{
	const struct udt_cs_ops *ops;

	if ((ops = udt_rw_csload()) == NULL ||
	    udt_rw_cs_arena(ops, arena, len) != 0 ||
	    ops->co_open(CS_ARCH_X86, CS_MODE_64, hp) != CS_ERR_OK)
		return -1;
	if (ops->co_option(*hp, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK ||
	    (*cip = ops->co_malloc(*hp)) == NULL) {
		ops->co_close(hp);
		return -1;
	}
	return 0;
}

bool
udt_rw_cs_next(csh h, const uint8_t **code, size_t *size, uint64_t *addr,
    cs_insn *ci)
{
	return udt_rw_csload()->co_disasm_iter(h, code, size, addr, ci);
}

void
udt_rw_cs_close(csh *hp, cs_insn *ci)
{
	const struct udt_cs_ops *ops = udt_rw_csload();

	ops->co_free(ci, 1);
	ops->co_close(hp);
}

int
udt_rw_cs_group(const cs_insn *ci, uint8_t group)
{
	const cs_detail *d = ci->detail;
	uint8_t i;

	if (d == NULL)
		return 0;
	for (i = 0; i < d->groups_count; i++)
		if (d->groups[i] == group)
			return 1;
	return 0;
}
