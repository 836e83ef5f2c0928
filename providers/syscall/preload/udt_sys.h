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
 * Raw system calls for the preload library's own use.  The library
 * exports hooks named after the libc wrappers, so calling socket() or
 * close() from inside it would run its own hooks; these inline helpers
 * enter the kernel directly instead.  They return -errno like the kernel
 * and never touch errno, which makes them async-signal-safe and usable
 * in a fork child before anything else runs.
 */
#ifndef UDT_SYS_H
#define UDT_SYS_H

#include <sys/syscall.h>

static inline long
udt_sys6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;
	long ret;

	__asm__ volatile ("syscall"
	    : "=a" (ret)
	    : "a" (nr), "D" (a0), "S" (a1), "d" (a2), "r" (r10), "r" (r8),
	      "r" (r9)
	    : "rcx", "r11", "memory");
	return ret;
}

/*
 * For the library's large zeroed arrays (scratch, arenas, buffers): a
 * section of their own after the bss, so the small variables every
 * start touches share a few pages instead of one page each between
 * megabytes of arrays (a fault a page).  The toolchain's .lbss is a
 * NOBITS section of the same segment.
 */
#define UDT_LBSS	__attribute__((section(".lbss")))

/* Whether a raw call's return is an error (-4095..-1), not a value. */
static inline int
udt_sys_failed(long r)
{
	return r < 0 && r > -4096;
}

/*
 * Whether s begins with pre.  Not strncmp(): libc's uses vector
 * registers, and its callers run inside a rewritten site's call or a
 * handler, which must give them back as they were (udt_xstate.c).
 */
static inline int
udt_sys_prefix(const char *s, const char *pre)
{
	for (; *pre != '\0'; s++, pre++)
		if (*s != *pre)
			return 0;
	return 1;
}

#define udt_sys0(n)		udt_sys6((n), 0, 0, 0, 0, 0, 0)
#define udt_sys1(n, a)		udt_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define udt_sys2(n, a, b)	udt_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define udt_sys3(n, a, b, c)						\
	udt_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define udt_sys4(n, a, b, c, d)						\
	udt_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define udt_sys5(n, a, b, c, d, e)					\
	udt_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

#endif /* UDT_SYS_H */
