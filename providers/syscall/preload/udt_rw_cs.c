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
 * Capstone as linked into the library: amd64 alone.
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
 * Concurrency contract: none; nothing here is ever called but by a
 * cs_open() or cs_option() of an architecture the library never opens.
 */
#include <stddef.h>

#include <capstone/capstone.h>

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
