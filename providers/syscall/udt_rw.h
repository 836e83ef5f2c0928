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
 * Rewritten system call sites (udt_rw.c) and their entry (udt_rw_entry.S):
 * the layout the assembly and the C side share.  Included by both.
 */
#ifndef UDT_RW_H
#define UDT_RW_H

/* Linux numbers udt_rw_idx[] covers (systab.h's SYSTAB_LINUX_MAX). */
#define UDT_RW_NR		512

/* udt_rw_idx[nr]: >= 0 the probe index, else one of these. */
#define UDT_RW_PLAIN		(-1)	/* no probe: made in the entry */
#define UDT_RW_C		(-2)	/* always through udt_rw_slow() */

/* struct udt_rw_frame, byte offsets. */
#define UDT_RWF_NR		0
#define UDT_RWF_A0		8
#define UDT_RWF_A1		16
#define UDT_RWF_A2		24
#define UDT_RWF_A3		32
#define UDT_RWF_A4		40
#define UDT_RWF_A5		48
#define UDT_RWF_RBX		56
#define UDT_RWF_RBP		64
#define UDT_RWF_R12		72
#define UDT_RWF_R13		80
#define UDT_RWF_R14		88
#define UDT_RWF_R15		96
#define UDT_RWF_RET		104
#define UDT_RWF_INPLACE		112
#define UDT_RWF_RV		120
#define UDT_RWF_SP		128
#define UDT_RWF_XMM		144
#define UDT_RW_FRAMESZ		(144 + 256)

#ifndef __ASSEMBLER__
#include <stdint.h>

/*
 * What the entry saved of the program's registers at a rewritten site.
 * rw_ret is the return address into the trampoline (which says where
 * the site is), rw_inplace what the C side answers: 1 for a call the
 * trampoline must make itself.
 */
struct udt_rw_frame {
	long		rw_nr;
	long		rw_a[6];
	long		rw_rbx, rw_rbp, rw_r12, rw_r13, rw_r14, rw_r15;
	uintptr_t	rw_ret;
	long		rw_inplace;
	long		rw_rv;
	uintptr_t	rw_sp;		/* the program's rsp at the site; in
				   udt_rw_post, the words pushed for it */
	long		rw_pad;
	uint8_t		rw_xmm[256];
};

_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_a) == UDT_RWF_A0,
    "frame");
_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_rbx) ==
    UDT_RWF_RBX, "frame");
_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_ret) ==
    UDT_RWF_RET, "frame");
_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_inplace) ==
    UDT_RWF_INPLACE, "frame");
_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_rv) ==
    UDT_RWF_RV, "frame");
_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_xmm) ==
    UDT_RWF_XMM, "frame");
_Static_assert(sizeof(struct udt_rw_frame) == UDT_RW_FRAMESZ, "frame");

/* USERDT_REWRITE=0 in the environment: leave every site to dispatch. */
#define UDT_RW_ENV	"USERDT_REWRITE"

extern short	udt_rw_idx[UDT_RW_NR];

/*
 * [t] The number + 1 of the call udt_rw_slow() left to the trampoline to
 * make in place, for its return probe (udt_rw_post); 0: none.
 */
extern __thread long udt_rw_ipnr
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
extern int	udt_rw_active;		/* [I] sites were rewritten */

/*
 * From the constructor, single-threaded, before dispatch is turned on:
 * fill udt_rw_idx[] (udt_rw_setup()) and rewrite the system call sites
 * of every loaded object that can be proven safe (udt_rw_init()).
 */
void	udt_rw_setup(void);
void	udt_rw_init(void);

/*
 * Trapped sites (udt_rw_trap.c).  From the constructor: udt_rw_trap_put()
 * a site whose first byte is now int3 and its stub (`syscall; jmp site +
 * 2', for a call made in place), udt_rw_cover() an executable range gone
 * through or made, udt_rw_trap_done() once all are, with the count of
 * sites left to dispatch.  udt_rw_trap_stub(): the stub of a trapped
 * site, else 0; any thread, async-signal-safe.
 */
int	udt_rw_trap_put(uintptr_t, uintptr_t);
void	udt_rw_cover(uintptr_t, uintptr_t);
void	udt_rw_trap_done(size_t);
size_t	udt_rw_trap_count(void);
uintptr_t udt_rw_trap_stub(uintptr_t);

/*
 * [a] Every system call site of the process is rewritten or trapped:
 * a traced thread needs no dispatch.  udt_rw_saw(nr, a, r), after any
 * call of the program: executable memory made since ends it.  Any
 * thread, async-signal-safe.  USERDT_DISPATCH=1 keeps it 0.
 */
#define UDT_RW_DISPATCH_ENV	"USERDT_DISPATCH"
extern int	udt_rw_complete;
extern int	udt_rw_debug;		/* [I] USERDT_REWRITE=debug */
void	udt_rw_saw(long, const long *, long);

/* The system call instruction a trampoline's return address stands for. */
uintptr_t	udt_rw_site_of(uintptr_t);

void	udt_rw_entry(void);
void	udt_rw_post(void);
long	udt_rw_slow(struct udt_rw_frame *);
void	udt_rw_slow_post(struct udt_rw_frame *);
#endif

#endif /* UDT_RW_H */
