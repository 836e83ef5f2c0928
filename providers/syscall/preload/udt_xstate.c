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
 * The vector state beyond xmm0-15 around code that is not ours.  A
 * rewritten site's call must leave every register as the kernel would,
 * and udt_rw_entry.S keeps only what this library's own code touches
 * (it is built for plain x86-64: xmm0-15).  glibc's string functions
 * on an AVX-512 machine use ymm16-31 and the mask registers, its AVX2
 * ones the upper halves of ymm0-15, and libunwind calls them: a program
 * that kept a value there across an inline `syscall` would find it
 * changed.  udt_xsave()/udt_xrstor() bracket such calls with XSAVE and
 * XRSTOR of the components the kernel enabled (XCR0): AVX, the opmask
 * registers, ZMM_Hi256, Hi16_ZMM.  Nothing else of the state is ours to
 * change.
 *
 * What the CPU has is learnt at the first save, not at every start: a
 * cpuid is a trap to the hypervisor on a virtual machine (six of them
 * cost a traced exec 80 us here), and a program that never has a stack
 * taken never saves.
 *
 * Locks used to protect the globals below:
 *	[a]	atomic; racing first saves find the same value
 */
#include <cpuid.h>
#include <stdint.h>
#include <string.h>

#include "udt_preload.h"

#define UDT_X_AVX	(1u << 2)
#define UDT_X_OPMASK	(1u << 5)
#define UDT_X_ZMMHI	(1u << 6)
#define UDT_X_HI16	(1u << 7)
#define UDT_X_WANT	(UDT_X_AVX | UDT_X_OPMASK | UDT_X_ZMMHI | UDT_X_HI16)
#define UDT_X_KNOWN	(1u << 31)	/* udt_xmask computed */
#define UDT_X_HDR	512	/* the XSAVE header, after the legacy area */

static uint32_t	udt_xmask;	/* [a] components saved, and UDT_X_KNOWN */

static uint32_t
udt_xstate_learn(void)
{
	unsigned int a, b, c, d, i, end = 0, mask;
	uint32_t xcr0, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) ||
	    __get_cpuid_max(0, NULL) < 0xd)
		return 0;
	__asm__ volatile("xgetbv" : "=a" (xcr0), "=d" (hi) : "c" (0));
	mask = xcr0 & UDT_X_WANT;
	/* Where each component lies in XSAVE's standard form. */
	for (i = 2; i < 8; i++) {
		if (!(mask & (1u << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if (a + b > end)
			end = a + b;
	}
	return end > UDT_XSAVE_SIZE ? 0 : mask;
}

/* The components to save: computed once, by whichever save is first. */
static uint32_t
udt_xstate_mask(void)
{
	uint32_t m = __atomic_load_n(&udt_xmask, __ATOMIC_RELAXED);

	if (m == 0) {
		m = udt_xstate_learn() | UDT_X_KNOWN;
		__atomic_store_n(&udt_xmask, m, __ATOMIC_RELAXED);
	}
	return m & ~UDT_X_KNOWN;
}

void
udt_xsave(struct udt_xsave *xs)
{
	uint32_t m = udt_xstate_mask();

	if (m == 0)
		return;
	/* XRSTOR refuses a header whose reserved bytes are not zero. */
	memset(xs->xs_area + UDT_X_HDR, 0, 64);
	__asm__ volatile("xsave64 %0" : "+m" (xs->xs_area)
	    : "a" (m), "d" (0) : "memory");
}

void
udt_xrstor(const struct udt_xsave *xs)
{
	/* Known: the save before it learnt it. */
	uint32_t m = __atomic_load_n(&udt_xmask, __ATOMIC_RELAXED) &
	    ~UDT_X_KNOWN;

	if (m == 0)
		return;
	__asm__ volatile("xrstor64 %0" : : "m" (xs->xs_area),
	    "a" (m), "d" (0) : "memory");
}
