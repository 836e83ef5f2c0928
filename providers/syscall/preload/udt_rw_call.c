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
 * A system call from a rewritten site, when it needs more than the
 * entry's few instructions: a probe of it is enabled, or the call
 * changes what the library must know (a fork child needs its own ring,
 * prctl renames the thread), or it must be made on the program's own
 * stack (rt_sigreturn, vfork, a clone that shares memory), which the
 * trampoline then does itself.
 *
 * Runs on the program's stack below its red zone, in any context the
 * program makes system calls in (signal handlers, fork children): no
 * lock, no allocation, errno left as the program had it.
 */
#include <sys/syscall.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include <dev/dt/dtvar.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_sud.h"
#include "systab.h"

#include <userdt/udt_filt.h>

/* The layout udt_rw_entry.S's counting path reads. */
_Static_assert(UDT_RW_MAGIC == UDT_MAGIC, "magic");
_Static_assert(offsetof(struct udt_tab, tb_magic) == UDT_RW_TB_MAGIC, "tab");
_Static_assert(offsetof(struct udt_tab, tb_reconnect) == UDT_RW_TB_RECONNECT,
    "tab");
_Static_assert(UDT_FILT_OFF + offsetof(struct udt_ftab, ft_probe) ==
    UDT_RW_FT_PROBE, "ftab");
_Static_assert(sizeof(((struct udt_ftab *)0)->ft_probe[0]) == 4, "ftab");
_Static_assert(offsetof(struct udt_ring_hdr, rh_count) == UDT_RW_RH_COUNT,
    "ring");
_Static_assert(sizeof(((struct udt_ring_hdr *)0)->rh_count[0]) == 4, "ring");
_Static_assert(offsetof(struct udt_thread, ut_nest) == UDT_RW_UT_NEST,
    "thread");
_Static_assert(sizeof(udt_thread.ut_nest) == 4, "thread");
_Static_assert(offsetof(struct udt_thread, ut_nest_sp) == UDT_RW_UT_NEST_SP,
    "thread");
_Static_assert(offsetof(struct udt_thread, ut_inlib) == UDT_RW_UT_INLIB,
    "thread");
_Static_assert(sizeof(udt_thread.ut_inlib) == 4, "thread");
_Static_assert(offsetof(struct udt_thread, ut_armed) == UDT_RW_UT_ARMED,
    "thread");
_Static_assert(offsetof(struct udt_thread, ut_traced) == UDT_RW_UT_TRACED,
    "thread");
_Static_assert(offsetof(struct udt_thread, ut_vfork) == UDT_RW_UT_VFORK,
    "thread");
_Static_assert(sizeof(udt_thread.ut_vfork) == 4, "thread");
_Static_assert(UDT_RW_EN_COUNT == (UDT_EN_ON | UDT_EN_COUNT), "enable");
_Static_assert(UDT_RW_EN_NOTCOUNT2 == (~(UDT_RW_EN_COUNT * 0x101) & 0xffff),
    "enable");

#define UDT_CLONE_VM		0x00000100
#define UDT_CLONE_VFORK		0x00004000
#define UDT_PR_SET_NAME		15

/* [I] set by udt_rw_setup() before any site is rewritten. */
short	udt_rw_idx[UDT_RW_NR];
__thread long udt_rw_ipnr;

/*
 * Which calls the entry may not make on its own (UDT_RW_C): those that
 * run code of ours afterwards, or that must be made in place.
 */
void
udt_rw_setup(void)
{
	unsigned int nr;

	for (nr = 0; nr < UDT_RW_NR; nr++)
		udt_rw_idx[nr] = nr < SYSTAB_LINUX_MAX &&
		    systab_linux_index[nr] >= 0 ? systab_linux_index[nr] :
		    UDT_RW_PLAIN;
	udt_rw_idx[SYS_rt_sigreturn] = UDT_RW_C;
	udt_rw_idx[SYS_clone] = UDT_RW_C;
	udt_rw_idx[SYS_clone3] = UDT_RW_C;
	udt_rw_idx[SYS_fork] = UDT_RW_C;
	udt_rw_idx[SYS_vfork] = UDT_RW_C;
	udt_rw_idx[SYS_prctl] = UDT_RW_C;
	/* The launcher's helper follows the new image (udt_lfollow.c). */
	udt_rw_idx[SYS_execve] = UDT_RW_C;
	udt_rw_idx[SYS_execveat] = UDT_RW_C;
	/*
	 * A vfork child's exit waits for dtd's drain, whatever is enabled:
	 * its last records (a failed exec's return) are stamped with its pid
	 * only while it lives (udt_exec_drain()).  Once a process or thread.
	 */
	udt_rw_idx[SYS_exit_group] = UDT_RW_C;
	udt_rw_idx[SYS_exit] = UDT_RW_C;
	/* SIGSYS is dispatch's: udt_sud_guard(). */
	udt_rw_idx[SYS_rt_sigprocmask] = UDT_RW_C;
	udt_rw_idx[SYS_rt_sigaction] = UDT_RW_C;
	udt_rw_idx[SYS_rt_sigsuspend] = UDT_RW_C;
	udt_rw_idx[SYS_ppoll] = UDT_RW_C;
	udt_rw_idx[SYS_pselect6] = UDT_RW_C;
	/* New code ends udt_rw_complete: udt_rw_saw(). */
	for (nr = 0; nr < UDT_RW_NR; nr++)
		if (udt_rw_maps(nr))
			udt_rw_idx[nr] = UDT_RW_C;
}

static inline int
udt_rw_probe(long nr)
{
	return nr >= 0 && nr < SYSTAB_LINUX_MAX ? systab_linux_index[nr] : -1;
}

/*
 * The program's context at the site, for a user stack that starts at
 * its system call instruction as dt(4)'s does (udt_ustack() unwinds
 * from ut_uc).
 */
static void
udt_rw_context(ucontext_t *uc, const struct udt_rw_frame *f)
{
	greg_t *g = uc->uc_mcontext.gregs;

	memset(uc, 0, sizeof(*uc));
	g[REG_RIP] = (greg_t)udt_rw_site_of(f->rw_ret);
	g[REG_RSP] = (greg_t)f->rw_sp;
	g[REG_RBP] = f->rw_rbp;
	g[REG_RBX] = f->rw_rbx;
	g[REG_R12] = f->rw_r12;
	g[REG_R13] = f->rw_r13;
	g[REG_R14] = f->rw_r14;
	g[REG_R15] = f->rw_r15;
	g[REG_RDI] = f->rw_a[0];
	g[REG_RSI] = f->rw_a[1];
	g[REG_RDX] = f->rw_a[2];
	g[REG_R10] = f->rw_a[3];
	g[REG_R8] = f->rw_a[4];
	g[REG_R9] = f->rw_a[5];
	g[REG_RAX] = f->rw_nr;
}

static void
udt_rw_emit1(const struct udt_rw_frame *f, int idx, unsigned int en,
    int isret, long r)
{
	int error;

	if (!isret)
		udt_emit(2 * (unsigned int)idx, en, f->rw_a, 0, 0, 0);
	else {
		error = r < 0 && r > -4096 ? (int)-r : 0;
		udt_emit(2 * (unsigned int)idx + 1, en, f->rw_a, 1,
		    error != 0 ? -1 : r, error);
	}
}

/*
 * With a user stack: the program's context for the unwinder.  Not
 * inlined: a ucontext_t is near a kilobyte, which a record without a
 * user stack, on a signal handler's alternate stack, must not pay.
 */
static void __attribute__((noinline))
udt_rw_emit_uc(const struct udt_rw_frame *f, int idx, unsigned int en,
    int isret, long r)
{
	struct udt_thread *t = &udt_thread;
	void *ouc = t->ut_uc;
	ucontext_t uc;

	udt_rw_context(&uc, f);
	t->ut_uc = &uc;
	udt_rw_emit1(f, idx, en, isret, r);
	t->ut_uc = ouc;
}

static void
udt_rw_emit(const struct udt_rw_frame *f, int idx, int isret, long r)
{
	unsigned int en = udt_enab16((unsigned int)idx);

	en = isret ? en >> 8 : en & 0xff;
	if (en == 0)
		return;
	if (en & DTEVT_USTACK)
		udt_rw_emit_uc(f, idx, en, isret, r);
	else
		udt_rw_emit1(f, idx, en, isret, r);
}

/*
 * The thread traces: from now on dispatch catches its calls from sites
 * that were neither rewritten nor trapped, if there are any.
 */
static inline void
udt_rw_arm(int idx)
{
	if (!udt_thread.ut_armed && udt_sud_active &&
	    udt_enab16((unsigned int)idx) != 0) {
		if (!__atomic_load_n(&udt_rw_complete, __ATOMIC_RELAXED))
			udt_sud_thread();
		else
			udt_thread.ut_traced = 1;
	}
}

/*
 * A recorded call with no needs of its own (udt_rw_idx[nr] >= 0) is
 * made by the entry itself, between these two: the entry record and
 * the program's errno kept; the return record and errno given back,
 * the result returned.  The system call is not made in here because
 * the kernel's return-stack mitigations (Safe RET against SRSO, RSB
 * filling) leave the return predictor with nothing of the program's:
 * every return after the call into a frame made before it is
 * mispredicted, about 7 ns each on our machines (bench/syscall's
 * "return after a system call").  The entry's own return is a jump.
 */
void
udt_rw_rec_entry(struct udt_rw_frame *f)
{
	int idx = udt_rw_idx[f->rw_nr];

	f->rw_errno = errno;
	udt_rw_arm(idx);
	udt_rw_emit(f, idx, 0, 0);
}

long
udt_rw_rec_return(struct udt_rw_frame *f)
{
	udt_rw_emit(f, udt_rw_idx[f->rw_nr], 1, f->rw_rv);
	errno = (int)f->rw_errno;
	return f->rw_rv;
}

int	udt_rw_mt;

void
udt_rw_mt_note(long nr, const long *a)
{
	/*
	 * Any clone3 may start a thread: its flags are behind a pointer
	 * of the program's, perhaps bad, which this must not touch (the
	 * kernel says EFAULT; we would fault).  A thread assumed costs
	 * only the locked add from then on.
	 */
	if (nr == SYS_clone3 || (nr == SYS_clone &&
	    ((uint64_t)a[0] & UDT_CLONE_VM) &&
	    !((uint64_t)a[0] & UDT_CLONE_VFORK)))
		__atomic_store_n(&udt_rw_mt, 1, __ATOMIC_RELAXED);
}

int
udt_vforklike(long nr, const long *a)
{
	uint64_t flags;

	if (nr == SYS_vfork)
		return 1;
	if (nr == SYS_clone)
		return (a[0] & (UDT_CLONE_VM | UDT_CLONE_VFORK)) ==
		    (UDT_CLONE_VM | UDT_CLONE_VFORK);
	if (nr == SYS_clone3 && udt_clone3_flags(a, &flags) == 0)
		return (flags & (UDT_CLONE_VM | UDT_CLONE_VFORK)) ==
		    (UDT_CLONE_VM | UDT_CLONE_VFORK);
	return 0;
}

long
udt_rw_slow(struct udt_rw_frame *f)
{
	struct udt_sud_tmp tmp;
	struct udt_sud_xsig x;
	long nr = f->rw_nr, r, a[6];
	int idx = udt_rw_probe(nr), saved = errno;

	memcpy(a, f->rw_a, sizeof(a));
	/*
	 * Int3 sites went back to their calls (a SIGTRAP the program
	 * blocks was sent to it): only dispatch sees those now, and among
	 * them are clone's and posix_spawn's, whose vfork child, unseen,
	 * would write its signal actions and mask over its parent's in the
	 * memory they share.  So every thread that makes a guarded call
	 * (posix_spawn's sigprocmask comes before its clone) turns its
	 * dispatch on, traced or not: once, since what refuses it (a
	 * tracer, a kernel or sandbox) stays, and again after it went off
	 * (udt_sud_off()); not while it holds a SIGSYS, which refuses it
	 * for now (one look whether the program took it meanwhile); not
	 * for calls after which nothing of the thread is left; not in a
	 * vfork child, which is armed as its parent was (udt_rw_slow_post())
	 * and would leave its parent's ut_armed saying on.
	 */
	if (__builtin_expect(__atomic_load_n(&udt_rw_sitesback,
	    __ATOMIC_RELAXED), 0) && !udt_thread.ut_armed &&
	    !udt_thread.ut_sbtry && udt_thread.ut_vfork <= 0 &&
	    nr != SYS_execve && nr != SYS_execveat && nr != SYS_exit &&
	    nr != SYS_exit_group && nr != SYS_rt_sigreturn &&
	    udt_sud_thread() == 0)
		udt_thread.ut_sbtry = 1;
	if (idx >= 0) {
		udt_rw_arm(idx);
		udt_rw_emit(f, idx, 0, 0);
	}
	udt_rw_mt_note(nr, a);
	/*
	 * What a vfork child may overwrite of ours, its parent's own: for
	 * every call that may make one (clone3's flags are read after it,
	 * udt_rw_slow_post(), one read a call).
	 */
	if (nr == SYS_vfork || nr == SYS_clone3 ||
	    (nr == SYS_clone && (a[0] & UDT_CLONE_VM)))
		udt_sud_vfork_save();
	switch (nr) {
	case SYS_rt_sigreturn:
	case SYS_vfork:
	case SYS_clone3:
		f->rw_inplace = 1;
		udt_rw_ipnr = nr + 1;
		errno = saved;
		return nr;
	case SYS_clone:
		if (a[0] & UDT_CLONE_VM) {
			f->rw_inplace = 1;
			udt_rw_ipnr = nr + 1;
			errno = saved;
			return nr;
		}
		break;
	}
	/*
	 * The signals first: their calls come before the helper is asked
	 * to follow, whose tracer counts the calls in between.
	 */
	if (nr == SYS_execve || nr == SYS_execveat) {
		udt_sud_exec_pre(&x, NULL);
		udt_exec_before();
	} else if ((nr == SYS_exit_group || nr == SYS_exit) &&
	    udt_thread.ut_vfork > 0)
		udt_exec_drain();
	if (udt_sud_ours == 0 || !udt_sud_guard(nr, a, &tmp, &r))
		r = udt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if ((nr == SYS_execve || nr == SYS_execveat) && r < 0) {
		udt_sud_exec_undo(&x);
		udt_exec_unmark();
	}
	if (udt_rw_maps(nr))
		udt_rw_saw(nr, a, r, f->rw_ret);
	if (r == 0 && udt_forklike(nr, a[0]))
		udt_fork_child();
	if (nr == SYS_prctl && a[0] == UDT_PR_SET_NAME && r == 0)
		udt_comm_invalidate();
	if (idx >= 0)
		udt_rw_emit(f, idx, 1, r);
	errno = saved;
	return r;
}

/*
 * After a call the trampoline made in place, or dispatch made after its
 * handler (udt_sud_stub: fork, vfork, execve, clones), in both processes
 * or threads.  A child that shares its parent's memory without a thread
 * pointer of its own (vfork, posix_spawn's clone) shares its cached
 * tid too: both forget it, so each records its own.
 */
void
udt_rw_slow_post(struct udt_rw_frame *f)
{
	struct udt_sud_xsig x;
	int idx, saved = errno;

	/* From udt_sud_stub: the number and the way back are udt_sud's. */
	if (f->rw_nr == UDT_RW_NR_SUD)
		f->rw_nr = udt_sud_take(f->rw_rv, (uintptr_t *)f->rw_sp + 1,
		    &x);
	else
		memset(&x, 0, sizeof(x));
	/*
	 * Pushed as number + 1: 0 is a thread that knows of no call.  Not
	 * reset: a vfork child shares it with its parent, whose return
	 * comes later.
	 */
	if (f->rw_nr-- <= 0) {
		udt_thread.ut_tid = 0;
		return;
	}
	idx = udt_rw_probe(f->rw_nr);
	if ((f->rw_nr == SYS_execve || f->rw_nr == SYS_execveat) &&
	    f->rw_rv < 0) {
		udt_sud_exec_undo(&x);
		udt_exec_unmark();
	}

	/*
	 * A vfork child says so in the TLS it shares with its parent, which
	 * is stopped until the child execs or exits and takes it back when
	 * it returns: a depth, since the child may vfork in turn.
	 */
	if (udt_vforklike(f->rw_nr, f->rw_a)) {
		/*
		 * The child starts with no stamp (its tid is new); its
		 * parent's, one depth down, is its parent's again when
		 * it returns (udt_lat_here()).
		 */
		if (f->rw_rv == 0) {
			udt_thread.ut_vfork++;
			udt_lat_here(&udt_thread)->ul_call = 0;
		} else if (f->rw_rv > 0) {
			if (udt_thread.ut_vfork > 0)
				udt_thread.ut_vfork--;
			/*
			 * Also for a child that never came back this way
			 * (posix_spawn's starts on a stack of its own).
			 */
			udt_sud_vfork_back();
		}
	}

	/* A fork dispatch made (udt_sud_stub): the child's own ring. */
	if (f->rw_rv == 0 && udt_forklike(f->rw_nr, f->rw_a[0]))
		udt_fork_child();
	else if (f->rw_rv == 0 && udt_thread.ut_armed) {
		/*
		 * A child sharing its parent's memory (vfork, posix_spawn)
		 * has no dispatch of its own: on, as its parent had it.
		 */
		udt_thread.ut_armed = 0;
		udt_sud_thread();
	}
	udt_thread.ut_tid = 0;
	if (idx >= 0)
		udt_rw_emit(f, idx, 1, f->rw_rv);
	udt_thread.ut_tid = 0;
	errno = saved;
}
