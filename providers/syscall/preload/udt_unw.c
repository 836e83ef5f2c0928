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
 * User stacks of the program, never of the tracer: see udt_unw.h.  The
 * walk itself is udt_cfi.c's.
 */
#include <stddef.h>
#include <ucontext.h>

#include "udt_cfi.h"
#include "udt_unw.h"

/* The tracer's code, cut from stacks (udt_unw_ours()).  [I] */
static uintptr_t	  udt_unw_lo, udt_unw_hi;
static uintptr_t	(*udt_unw_site)(uintptr_t);
/* The walking thread's tid, cached by the record (udt_unw_self()).  [I] */
static int	(*udt_unw_tid)(void);
/* The disassembler module's text (udt_unw_ours_also()): hi last.  [a] */
static uintptr_t	  udt_unw_xlo, udt_unw_xhi;

void
udt_unw_ours(uintptr_t lo, uintptr_t hi, uintptr_t (*site)(uintptr_t))
{
	udt_unw_lo = lo;
	udt_unw_hi = hi;
	udt_unw_site = site;
}

void
udt_unw_self(int (*tid)(void))
{
	udt_unw_tid = tid;
}

void
udt_unw_ours_also(uintptr_t lo, uintptr_t hi)
{
	__atomic_store_n(&udt_unw_xlo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_unw_xhi, hi, __ATOMIC_RELEASE);
}

static inline __attribute__((always_inline)) int
udt_unw_is_ours(uintptr_t pc)
{
	return (pc >= udt_unw_lo && pc < udt_unw_hi) ||
	    (pc < __atomic_load_n(&udt_unw_xhi, __ATOMIC_ACQUIRE) &&
	    pc >= __atomic_load_n(&udt_unw_xlo, __ATOMIC_RELAXED));
}

int
udt_unw_load(void)
{
	static int done;	/* [a] */

	/* Loads nothing: finds the vDSO's unwind tables, once. */
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL) == 0)
		udt_cfi_init();
	return 0;
}

/* Not inlined: the walk starts in this frame, which stays live under it. */
int __attribute__((noinline))
udt_unw_here(void **ips, int max)
{
	struct udt_cfi_cur cur;
	int n = 0;

	if (max <= 0)
		return 0;
	UDT_CFI_HERE(&cur);
	do
		ips[n++] = (void *)(uintptr_t)cur.cc_reg[UDT_CFI_RA];
	while (n < max && udt_cfi_step(&cur) > 0);
	return n;
}

/*
 * udt_unw_here() into d, past the leaf's frames in [lo, hi).  A few
 * more steps than max, for the frames cut (udt_ustack()'s).
 */
unsigned int __attribute__((noinline))
udt_unw_here_dst(const struct udt_pcdst *d, unsigned int max, uintptr_t lo,
    uintptr_t hi)
{
	struct udt_cfi_cur cur;
	unsigned int n = 0, steps = 0;
	uintptr_t pc;

	if (max == 0)
		return 0;
	UDT_CFI_HERE(&cur);
	cur.cc_self = udt_unw_tid != NULL ? udt_unw_tid() : 0;
	do {
		pc = (uintptr_t)cur.cc_reg[UDT_CFI_RA];
		if (n == 0 && pc >= lo && pc < hi)
			continue;
		udt_pcdst_put(d, n++, pc);
	} while (n < max && ++steps < max + 8 && udt_cfi_step(&cur) > 0);
	return n;
}

/*
 * The context a signal interrupted, as the program's: a PC in a
 * trampoline stands for its site (the trampoline's instructions are the
 * site's function's, copied, on the same stack: the site's CFI unwinds
 * them, but for the few between the red zone's steps); a PC in this
 * library is unwound through (the entry's CFI leads to the site) and
 * its frames cut, up to the first that is not ours.  No stack of the
 * program ever shows a frame of the tracer.
 */
static inline __attribute__((always_inline)) unsigned int
udt_unw_stack_in(void *uc, const struct udt_pcdst *d, unsigned int max)
{
	struct udt_cfi_cur cur;
	uintptr_t pc, site;
	unsigned int n = 0;
	int ours = 1;

	if (max == 0)
		return 0;
	udt_cfi_from_uc(&cur, uc);
	cur.cc_self = udt_unw_tid != NULL ? udt_unw_tid() : 0;
	pc = (uintptr_t)cur.cc_reg[UDT_CFI_RA];
	if (!udt_unw_is_ours(pc)) {
		if (udt_unw_site != NULL && (site = udt_unw_site(pc)) != pc)
			cur.cc_reg[UDT_CFI_RA] = site;
		ours = 0;
	}
	do {
		pc = (uintptr_t)cur.cc_reg[UDT_CFI_RA];
		if (pc == 0)
			break;
		if (ours && udt_unw_is_ours(pc))
			continue;
		ours = 0;
		udt_pcdst_put(d, n++, pc);
	} while (n < max && udt_cfi_step(&cur) > 0);
	return n;
}

unsigned int
udt_unw_stack(void *uc, uintptr_t *pcs, unsigned int max)
{
	const struct udt_pcdst d = { .pd_pc0 = (uint64_t *)(void *)pcs,
	    .pd_n0 = max };

	return udt_unw_stack_in(uc, &d, max);
}

unsigned int
udt_unw_stack_dst(void *uc, const struct udt_pcdst *d, unsigned int max)
{
	return udt_unw_stack_in(uc, d, max);
}
