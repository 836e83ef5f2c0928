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
 * The library's own unwinder: DWARF call frame information (the
 * .eh_frame_hdr and .eh_frame every amd64 object carries) walked in
 * place, with a frame-pointer step where an address has none.  It loads
 * nothing: a traced program's link map holds what the program asked for
 * and the library, no unwinder of ours (issue 20).
 *
 * Objects are found with _dl_find_object(), which glibc makes
 * async-signal-safe for unwinders, the vDSO through its ELF header
 * (udt_cfi_init()), and the library's disassembler module, which the
 * loader does not know, as udt_cfi_also() names it.  Stack memory, whatever a corrupt frame points at,
 * is read safely: a page is first read through process_vm_readv(2), a
 * raw call no hook sees, and read directly after that (udt_cfi.c).
 *
 * Concurrency contract: udt_cfi_init() once, from the constructor (or
 * before the first unwind: it is idempotent and racing callers store
 * the same); everything else on a cursor of the caller's own, from any
 * thread and any context, signal handlers included: no lock, no
 * allocation, no libc call but _dl_find_object().
 */
#ifndef UDT_CFI_H
#define UDT_CFI_H

#include <stdint.h>

/* DWARF's amd64 registers: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
 * r8..r15, then the return address column. */
#define UDT_CFI_RBX	3
#define UDT_CFI_RBP	6
#define UDT_CFI_RSP	7
#define UDT_CFI_R12	12
#define UDT_CFI_RA	16
#define UDT_CFI_NREG	17
#define UDT_CFI_NPAGE	4

struct udt_cfi_cur {
	uint64_t	cc_reg[UDT_CFI_NREG];
	uint32_t	cc_have;	/* bit r: cc_reg[r] is known */
	int		cc_exact;	/* cc_reg[RA] is the instruction to
					   run, not a return address */
	uint64_t	cc_page[UDT_CFI_NPAGE];	/* pages known readable */
	unsigned int	cc_npage;
	/*
	 * Whom process_vm_readv() reads: any thread of this process will
	 * do (they share the memory), so the walking thread's tid the
	 * record has already, not a getpid() a walk.  0: getpid().
	 */
	long		cc_self;
};

void	udt_cfi_init(void);
/*
 * Text [lo, hi) whose .eh_frame_hdr is at hdr, mapped by the library
 * itself (udt_rw_csload.c): once, from the rewriter's pass; readers see
 * all three or none.
 */
void	udt_cfi_also(uintptr_t lo, uintptr_t hi, uintptr_t hdr);

/* A cursor at the context a signal interrupted (a ucontext_t). */
void	udt_cfi_from_uc(struct udt_cfi_cur *, const void *uc);

/*
 * A cursor at the caller's own frame, as it runs: a macro, so that the
 * registers are the walking function's, whose frame stays live under
 * the walk.  Callee-saved registers, the stack and frame pointers, and
 * an address in the caller; the rest is not needed to leave a frame.
 */
#define UDT_CFI_HERE(c) do {						\
	uint64_t *udt_r_ = (c)->cc_reg;					\
	__asm__ volatile (						\
	    "movq %%rbx, 24(%0)\n\t"					\
	    "movq %%rbp, 48(%0)\n\t"					\
	    "movq %%rsp, 56(%0)\n\t"					\
	    "movq %%r12, 96(%0)\n\t"					\
	    "movq %%r13, 104(%0)\n\t"					\
	    "movq %%r14, 112(%0)\n\t"					\
	    "movq %%r15, 120(%0)\n\t"					\
	    "leaq 0(%%rip), %%rax\n\t"					\
	    "movq %%rax, 128(%0)"					\
	    : : "r" (udt_r_) : "rax", "memory");			\
	(c)->cc_have = (1u << UDT_CFI_RBX) | (1u << UDT_CFI_RBP) |	\
	    (1u << UDT_CFI_RSP) | (0xfu << UDT_CFI_R12) |		\
	    (1u << UDT_CFI_RA);						\
	(c)->cc_exact = 1;						\
	(c)->cc_npage = 0;						\
	(c)->cc_self = 0;						\
} while (0)

/*
 * One frame out: the caller's registers as far as the frame's CFI (or
 * its frame pointer) recovers them.  1 when there is a caller, 0 at the
 * outermost frame or where the walk cannot go on.
 */
int	udt_cfi_step(struct udt_cfi_cur *);

#endif /* UDT_CFI_H */
