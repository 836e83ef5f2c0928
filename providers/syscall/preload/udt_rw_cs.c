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
 * Capstone as linked into the library: amd64 alone, its memory from the
 * rewriter's scratch (the end of this file).
 *
 * The static archive holds every architecture Capstone knows, and its
 * cs_open() names each one's entry points, so all of them were linked:
 * tables of pointers (a megabyte for M68K alone) that the loader
 * relocated, and so copied and dirtied, in every traced process at every
 * exec, about 350 page faults and 1.3 MB of a process's memory for
 * nothing (issue 20).  Defined here, the other architectures' entry
 * points keep the archive's members out of the link: cs_open() of any of
 * them fails with CS_ERR_ARCH; the rewriter opens CS_ARCH_X86 only
 * (udt_rw.c).  A Capstone without one of these names links as before.
 *
 * Concurrency contract: none for the architectures' stubs; nothing
 * there is ever called but by a cs_open() or cs_option() of an
 * architecture the library never opens.  The arena: the pass alone [w].
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "udt_rw_cs.h"

#define UDT_RW_CS_NOARCH(arch)						\
cs_err arch##_global_init(void *);					\
cs_err arch##_option(void *, cs_opt_type, size_t);			\
cs_err									\
arch##_global_init(void *ud)						\
{									\
	(void)ud;							\
	return CS_ERR_ARCH;						\
}									\
cs_err									\
arch##_option(void *ud, cs_opt_type type, size_t value)			\
{									\
	(void)ud;							\
	(void)type;							\
	(void)value;							\
	return CS_ERR_ARCH;						\
}

UDT_RW_CS_NOARCH(ARM)
UDT_RW_CS_NOARCH(AArch64)
UDT_RW_CS_NOARCH(Mips)
UDT_RW_CS_NOARCH(PPC)
UDT_RW_CS_NOARCH(Sparc)
UDT_RW_CS_NOARCH(SystemZ)
UDT_RW_CS_NOARCH(XCore)
UDT_RW_CS_NOARCH(M68K)
UDT_RW_CS_NOARCH(TMS320C64x)
UDT_RW_CS_NOARCH(M680X)
UDT_RW_CS_NOARCH(EVM)

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

int
udt_rw_cs_arena(void *base, size_t len)
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
	return cs_option(0, CS_OPT_MEM, (size_t)&mem) == CS_ERR_OK ? 0 : -1;
}
