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
 * The disassembler's module (udt_cs_mod.h): Capstone's amd64 part, the
 * libc it calls, and the table of entry points that is the module's
 * ELF entry.  Built with -nostdlib -fno-builtin: nothing here may turn
 * into a call out of the module.
 *
 * The static archive holds every architecture Capstone knows, and its
 * cs_open() names each one's entry points, so all of them were linked:
 * a megabyte of relocated tables for M68K alone.  Defined here, the
 * other architectures' entry points keep the archive's members out of
 * the link: cs_open() of any of them fails with CS_ERR_ARCH; the
 * rewriter opens CS_ARCH_X86 only (udt_rw.c).
 *
 * Concurrency contract: the rewriter's pass alone calls in ([w] there);
 * the architectures' stubs are never called but by a cs_open() or
 * cs_option() of an architecture nobody opens.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "udt_cs_mod.h"

#define UDT_HIDDEN	__attribute__((visibility("hidden")))

#define UDT_CS_NOARCH(arch)						\
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

UDT_CS_NOARCH(ARM)
UDT_CS_NOARCH(AArch64)
UDT_CS_NOARCH(Mips)
UDT_CS_NOARCH(PPC)
UDT_CS_NOARCH(Sparc)
UDT_CS_NOARCH(SystemZ)
UDT_CS_NOARCH(XCore)
UDT_CS_NOARCH(M68K)
UDT_CS_NOARCH(TMS320C64x)
UDT_CS_NOARCH(M680X)
UDT_CS_NOARCH(EVM)

/* The entry points, at the module's ELF entry (-e udt_cs_ops). */
__attribute__((visibility("default"), used))
const struct udt_cs_ops udt_cs_ops = {
	.co_magic = UDT_CS_MAGIC,
	.co_size = sizeof(struct udt_cs_ops),
	.co_insnsize = sizeof(cs_insn),
	.co_detailsize = sizeof(cs_detail),
	.co_version = (CS_API_MAJOR << 8) | CS_API_MINOR,
	.co_open = cs_open,
	.co_option = cs_option,
	.co_malloc = cs_malloc,
	.co_disasm_iter = cs_disasm_iter,
	.co_free = cs_free,
	.co_close = cs_close,
};

/* --- the libc Capstone's amd64 part calls ------------------------------ */

UDT_HIDDEN void *
memcpy(void *d, const void *s, size_t n)
{
	uint8_t *dp = d;
	const uint8_t *sp = s;

	while (n-- > 0)
		*dp++ = *sp++;
	return d;
}

UDT_HIDDEN void *
memmove(void *d, const void *s, size_t n)
{
	uint8_t *dp = d;
	const uint8_t *sp = s;

	if (dp <= sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n-- > 0)
		dp[n] = sp[n];
	return d;
}

UDT_HIDDEN void *
memset(void *d, int c, size_t n)
{
	uint8_t *dp = d;

	while (n-- > 0)
		*dp++ = (uint8_t)c;
	return d;
}

UDT_HIDDEN size_t
strlen(const char *s)
{
	const char *p = s;

	while (*p != '\0')
		p++;
	return (size_t)(p - s);
}

UDT_HIDDEN int
strcmp(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

UDT_HIDDEN char *
strncpy(char *d, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i] != '\0'; i++)
		d[i] = s[i];
	for (; i < n; i++)
		d[i] = '\0';
	return d;
}

static void
udt_cs_swap(uint8_t *a, uint8_t *b, size_t size)
{
	uint8_t t;

	while (size-- > 0) {
		t = *a;
		*a++ = *b;
		*b++ = t;
	}
}

static void
udt_cs_sift(uint8_t *base, size_t i, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	size_t c;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && cmp(base + (c + 1) * size, base + c * size) > 0)
			c++;
		if (cmp(base + i * size, base + c * size) >= 0)
			return;
		udt_cs_swap(base + i * size, base + c * size, size);
	}
}

/*
 * Capstone sorts a table of its own the first time it prints an
 * instruction.  A heap sort: no memory, no system call (glibc's asks
 * the kernel for the machine's memory size first, a call the traced
 * program never made).
 */
UDT_HIDDEN void
qsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	uint8_t *base = v;
	size_t i;

	for (i = n / 2; i-- > 0; )
		udt_cs_sift(base, i, n, size, cmp);
	for (i = n; i-- > 1; ) {
		udt_cs_swap(base, base + i * size, size);
		udt_cs_sift(base, 0, i, size, cmp);
	}
}

/*
 * Capstone's defaults for its memory and printing, replaced by the
 * library's (CS_OPT_MEM, udt_rw_cs.c) before any cs_open(): never
 * called.  Refusing is the safe answer if one were.
 */
UDT_HIDDEN void *
malloc(size_t n)
{
	(void)n;
	return NULL;
}

UDT_HIDDEN void *
calloc(size_t n, size_t m)
{
	(void)n;
	(void)m;
	return NULL;
}

UDT_HIDDEN void *
realloc(void *p, size_t n)
{
	(void)p;
	(void)n;
	return NULL;
}

UDT_HIDDEN void
free(void *p)
{
	(void)p;
}

UDT_HIDDEN int
vsnprintf(char *s, size_t n, const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
	if (n > 0)
		*s = '\0';
	return -1;
}

/* The archive was built with the stack protector. */
UDT_HIDDEN __attribute__((noreturn)) void
__stack_chk_fail(void)
{
	__builtin_trap();
}
