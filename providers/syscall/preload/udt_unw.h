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
 * User stacks, with the library's own unwinder (udt_cfi.h).
 *
 * The library loads no unwinder into the program: libunwind, opened by
 * the constructor until issue 20, put itself and its liblzma into every
 * traced process's link map (a python's later dlopen of liblzma found
 * it there and made fewer calls than untraced), with about 30 calls
 * and hundreds of page faults per exec.  udt_cfi.c reads the objects'
 * own unwind tables in place instead.
 *
 * Concurrency contract: udt_unw_load() before any other thread exists
 * (the constructor; the sampler's start again, harmlessly); the others
 * from any thread and any context, signal handlers included.
 */
#ifndef UDT_UNW_H
#define UDT_UNW_H

#include <userdt/udt_wire.h>

#include "udt_host.h"	/* udt_unw_load(), udt_unw_stack(), udt_unw_here() */

/*
 * Where a walk puts its return addresses: frames [0, pd_n0) at pd_pc0,
 * the next ones UDT_MORE_NPC a slot in pd_more[] (a deep user stack's
 * continuation slots, udt_wire.h), so that the frames of a deep stack go
 * straight into the ring, not through the signal stack.  pd_more[k] is
 * only written when the walk's max reaches that far.
 */
struct udt_pcdst {
	uint64_t		*pd_pc0;
	unsigned int		 pd_n0;
	struct udt_rec_more	*pd_more[UDT_MORE_MAXSLOTS];
};

static inline void
udt_pcdst_put(const struct udt_pcdst *d, unsigned int i, uint64_t pc)
{
	if (__builtin_expect(i < d->pd_n0, 1))
		d->pd_pc0[i] = pc;
	else {
		i -= d->pd_n0;
		d->pd_more[i / UDT_MORE_NPC]->um_pc[i % UDT_MORE_NPC] = pc;
	}
}

/*
 * udt_unw_stack() into d; max at most pd_n0 plus UDT_MORE_NPC for each
 * of d's slots.
 */
unsigned int	udt_unw_stack_dst(void *uc, const struct udt_pcdst *d,
		    unsigned int max) UDT_HOST_HIDDEN;
/*
 * The calling thread's return addresses into d, innermost first, from
 * the first outside [lo, hi) (this library's text, cut from the leaf):
 * how many, at most max.  Same contract as udt_unw_here().
 */
unsigned int	udt_unw_here_dst(const struct udt_pcdst *d, unsigned int max,
		    uintptr_t lo, uintptr_t hi) UDT_HOST_HIDDEN;

/*
 * The tracer's code, which udt_unw_stack() keeps out of stacks: the
 * library's text [lo, hi), whose frames are cut from the leaf down to
 * the first of the program's, and site(), which gives the site a PC in
 * a trampoline stands for (else the PC itself).  The constructor, before
 * any other thread exists; site() must be async-signal-safe.
 */
void	udt_unw_ours(uintptr_t, uintptr_t, uintptr_t (*)(uintptr_t));
/*
 * The calling thread's tid, as the record caches it (udt_gettid()): the
 * walk reads memory through it, a system call fewer a stack.  The
 * constructor, before any other thread exists; async-signal-safe.
 */
void	udt_unw_self(int (*)(void));
/*
 * More of the tracer's text, cut likewise: the disassembler module's,
 * mapped by a pass (udt_rw_csload.c) when threads may run.  Once.
 */
void	udt_unw_ours_also(uintptr_t, uintptr_t);

#endif /* UDT_UNW_H */
