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
#define UDT_RWF_ERRNO		136
#define UDT_RWF_XMM		144
#define UDT_RW_FRAMESZ		(144 + 256)
/*
 * The entry's site frame (udt_rw_entry.S): from its rbp, the program's
 * rbp, the site, the way back into the trampoline, the red zone the
 * trampoline stepped over; the site's rsp is this far above rbp.
 */
#define UDT_RW_SITECFA		(8 + 8 + 8 + 128)

/*
 * What the entry's counting path (udt_rw_entry.S) reads of the shared
 * structures, asserted against their C definitions in udt_rw_call.c:
 * struct udt_tab's tb_magic and tb_reconnect, the filter table's
 * ft_probe[] (userdt/udt_filt.h), struct udt_ring_hdr's rh_count[], and
 * struct udt_thread's depth, its stack, ut_inlib, ut_armed, ut_traced,
 * ut_vfork.
 */
#define UDT_RW_MAGIC		0x75647464	/* UDT_MAGIC */
#define UDT_RW_TB_MAGIC		0
#define UDT_RW_TB_RECONNECT	8
#define UDT_RW_FT_PROBE		(4096 + 8)	/* UDT_FILT_OFF + ft_probe */
#define UDT_RW_RH_COUNT		12544
#define UDT_RW_UT_NEST		0
#define UDT_RW_UT_NEST_SP	8
#define UDT_RW_UT_INLIB		32
#define UDT_RW_UT_ARMED		37
#define UDT_RW_UT_TRACED	38
#define UDT_RW_UT_VFORK		52
/*
 * A call's two enable bytes (entry low, return high) as one word: it
 * takes the counting path when each byte is 0 or exactly UDT_EN_ON |
 * UDT_EN_COUNT, i.e. no bit outside UDT_RW_EN_COUNT2 and, in each byte,
 * both of its bits or neither.
 */
#define UDT_RW_EN_COUNT		0xc0		/* UDT_EN_ON | UDT_EN_COUNT */
#define UDT_RW_EN_NOTCOUNT2	0x3f3f

#ifndef __ASSEMBLER__
#include <sys/syscall.h>
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
	long		rw_errno;	/* the program's, while a plain
				   recorded call runs (udt_rw_rec_entry) */
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
_Static_assert(__builtin_offsetof(struct udt_rw_frame, rw_errno) ==
    UDT_RWF_ERRNO, "frame");
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
 * [a] Set, for good, before the first clone that may start a thread
 * running beside its caller on this memory (CLONE_VM without
 * CLONE_VFORK, which holds the caller until the child leaves it; any
 * clone3), and from the start, or from when it stops being so, unless
 * every clone is seen: every site rewritten or trapped, or dispatch on
 * (udt_init(), udt_rw_incomplete(), udt_rw_untrap(), udt_sud_off()).
 * Until then, and while glibc says so too (__libc_single_threaded,
 * which its pthread_create clears), the process has one thread: the
 * entry counts with a plain add, one instruction, which no signal
 * handler of that thread can split, and no locked one, which after a
 * system call costs some 30 ns here (bench/btrace/agg_bench.sh).
 */
extern int	udt_rw_mt;

/*
 * From the constructor, single-threaded, before dispatch is turned on:
 * fill udt_rw_idx[] (udt_rw_setup()) and rewrite the system call sites
 * of every loaded object that can be proven safe (udt_rw_init()).
 */
void	udt_rw_setup(void);
void	udt_rw_init(void);

/*
 * Lookup tables (udt_rw_tab.c): (key, value) pairs staged by a pass of
 * the rewriter, published sorted at its end (entries whose keys, or
 * values if byval, fall in one of the gone ranges dropped; a new copy
 * only if anything changed), found by the largest key <= a key.
 * Stage and publish: the pass only.  udt_rw_tab_floor(): any thread,
 * async-signal-safe; 0 with the entry, -1 for none.
 */
struct udt_rw_tab;
struct udt_rw_stage {
	uintptr_t	(*st_e)[2];
	size_t		st_n, st_max;
	size_t		st_first;	/* entries first made room for; 0: 4096 */
};
int	udt_rw_stage_put(struct udt_rw_stage *, uintptr_t, uintptr_t);
int	udt_rw_tab_publish(struct udt_rw_tab **, struct udt_rw_stage *, int,
	    const uintptr_t (*)[2], size_t);
int	udt_rw_tab_floor(struct udt_rw_tab *const *, uintptr_t, uintptr_t *,
	    uintptr_t *);

/*
 * Trapped sites (udt_rw_trap.c).  From a pass of the rewriter:
 * udt_rw_trap_put() a site whose first byte is now int3 and its stub
 * (the call made in place, its return recorded, then back to site + 2),
 * udt_rw_trap_publish() at its end (dropping what lay in the gone
 * ranges), udt_rw_cover() an executable range gone through or made.
 * udt_rw_trap_done(): the constructor's, after its pass, with the count
 * of sites left to dispatch.
 * udt_rw_trap_stub(): the stub of a trapped site, else 0; any thread,
 * async-signal-safe.
 */
int	udt_rw_trap_put(uintptr_t, uintptr_t);

/*
 * udt_rw_untrap(why): every int3 site back to its system call
 * instruction, for good (sites are no longer trapped, by any later pass
 * either: udt_rw_notrap), when an int3 of ours would do harm: a tracer
 * takes the SIGTRAP first (why names it, for USERDT_REWRITE=debug), or
 * a thread must keep SIGTRAP blocked for the program (NULL).  Any
 * thread, any context, async-signal-safe; once.
 * udt_rw_untrap_all(why): the same, then 0 when no int3 of ours is left
 * (-1: one could not be written back, or another thread's untrap is
 * still under way).
 * udt_rw_untrap_late(): after a pass published its int3s, the same for
 * them when an untrap came between its check and its publish; a pass's
 * thread, async-signal-safe.
 * udt_rw_tracer_check(): whether a ptrace tracer is there now
 * (TracerPid in /proc/self/status); if so, no traps (udt_rw_untrap())
 * and no dispatch unless asked for by name (udt_sud_traced).  From the
 * constructor before the rewriter's pass, and at each attach to dtd;
 * any thread, async-signal-safe.  udt_rw_tracer_seen(pid): the same,
 * TracerPid read already (the constructor's udt_proc_status()).
 */
extern int	udt_rw_notrap;		/* [a] */
/*
 * [a] An untrap took int3 sites back: their calls are dispatch's alone,
 * clone's and posix_spawn's among them (udt_rw_slow()).
 */
extern int	udt_rw_sitesback;
extern int	udt_sud_traced;		/* [a] */
void	udt_rw_untrap(const char *);
int	udt_rw_untrap_all(const char *);
void	udt_rw_untrap_late(void);
void	udt_rw_tracer_check(void);
void	udt_rw_tracer_seen(long);
int	udt_rw_trap_publish(const uintptr_t (*)[2], size_t);
void	udt_rw_cover(uintptr_t, uintptr_t);
void	udt_rw_trap_done(size_t);
uintptr_t udt_rw_trap_stub(uintptr_t);

/*
 * One pass of the rewriter over the loaded objects, or only those with
 * code in one of the ranges want[nwant]: the sites it left to dispatch,
 * (size_t)-1 if it could not run.  The constructor's thread, or the
 * loader's lock held (udt_rw_brk(), which the loader's r_brk jumps to;
 * udt_rw_ld_lo/hi: the loader's text).
 */
size_t	udt_rw_pass(const uintptr_t (*)[2], size_t);
/*
 * Between passes [w]: n bytes of the pass's scratch to borrow, the
 * first that a start with plans touched already (its staged patches),
 * so that a buffer there costs no page of its own.
 */
void	*udt_rw_pass_spare(size_t n);
void	udt_rw_brk(void);
extern uintptr_t udt_rw_ld_lo, udt_rw_ld_hi;

/*
 * [a] Every system call site of the process is rewritten or trapped:
 * a traced thread needs no dispatch.  udt_rw_saw(nr, a, r, at), after a
 * call of the program that may map code (udt_rw_maps(nr)), made at a
 * site or from a trampoline returning to at: executable memory ends it,
 * but for what the loader maps, which its r_brk rewrites.  Any thread, async-signal-safe.  USERDT_DISPATCH=1
 * keeps it 0.
 */
#define UDT_RW_DISPATCH_ENV	"USERDT_DISPATCH"
extern int	udt_rw_complete;
extern int	udt_rw_debug;		/* [I] USERDT_REWRITE=debug */
void	udt_rw_saw(long, const long *, long, uintptr_t);

static inline int
udt_rw_maps(long nr)
{
	return nr == SYS_mmap || nr == SYS_mprotect ||
	    nr == SYS_pkey_mprotect || nr == SYS_shmat;
}

/* The system call instruction a trampoline's return address stands for. */
uintptr_t	udt_rw_site_of(uintptr_t);

void	udt_rw_entry(void);
void	udt_rw_post(void);
long	udt_rw_slow(struct udt_rw_frame *);
void	udt_rw_slow_post(struct udt_rw_frame *);
void	udt_rw_rec_entry(struct udt_rw_frame *);
long	udt_rw_rec_return(struct udt_rw_frame *);
#endif

#endif /* UDT_RW_H */
