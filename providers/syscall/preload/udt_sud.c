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
 * All-calls mode (USERDT_ALLCALLS=1, dtrun -a): every system call of the
 * traced program, not only those made through libc's exported wrappers,
 * by Linux's Syscall User Dispatch.  The hooks see calls through the
 * wrappers only: stdio's writes, fopen()'s openat and whatever libc does
 * for itself go past them.  With dispatch on, a system call made from
 * anywhere but this library's own text raises SIGSYS instead of entering
 * the kernel; the handler records the entry, makes the call itself, from
 * this library, records the return and puts the result where the
 * program expects it.  The hooks then record nothing themselves (the
 * call they pass on is caught like any other), so each call is seen once.
 *
 * The price: a signal per system call, a microsecond or two, which is why
 * it is a mode and not the default.  Still far below ptrace's.
 *
 * In the default mode the same handler takes the SIGTRAP of a trapped
 * site's int3 (udt_rw_trap.c), the call's number still in rax: SIGTRAP
 * is then guarded as SIGSYS is, and the program's own action kept aside.
 * Dispatch itself is on only for threads that record in a process with
 * sites neither rewritten nor trapped.
 *
 * Calls that cannot be made from inside a signal handler are made where
 * they were, after the handler returned, by udt_sud_stub in this text:
 *	rt_sigreturn	(a handler of the program returning: the frame is
 *			the program's, not ours)
 *	fork, vfork, clone and clone3 without CLONE_SETTLS (posix_spawn's
 *			too), execve, execveat (the
 *			child or the new image must not start inside our
 *			handler, with its signal mask)
 * and thread-creating clones (new stack and TLS: the stub could not find
 * its way back there) are made in place with dispatch let through for
 * the thread until its next hooked call (pthread_create() is one).
 * rt_sigprocmask is made against the program's saved mask, so that the
 * mask sigreturn restores is the one the program asked for.  SIGSYS is
 * never let be blocked (a dispatch to a blocked SIGSYS kills): not by
 * sigprocmask, not in the masks of the program's handlers (rt_sigaction),
 * not in the temporary masks of rt_sigsuspend, ppoll and pselect6, not
 * during our own handler (SA_NODEFER).  rt_sigaction for SIGSYS is kept
 * for the program: its handler gets the SIGSYS that are not ours.  Those
 * guards, and the program's view of the masks, are in udt_sud_sig.c.
 *
 * Dispatch is per thread and not inherited.  In all-calls mode the
 * constructor turns it on for the first thread, the pthread_create() hook
 * for new ones, the fork child handler for the child; in the default mode
 * the same where sites are left to it and a probe is on then
 * (udt_sud_wanted()), else a thread turns it on when it first records
 * (udt_rw_slow()).  Raw clone(2) threads, and C11 thrd_create()'s (glibc
 * calls its pthread_create() within, past the hook), run without it
 * until they record.
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before other threads exist
 *	[t]	per thread (TLS), read by the kernel at every system call
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "udt_preload.h"
#include "udt_rw.h"
#include "udt_sys.h"
#include "udt_sud.h"
#include "systab.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH	59
#define PR_SYS_DISPATCH_ON		1
#define SYSCALL_DISPATCH_FILTER_ALLOW	0
#define SYSCALL_DISPATCH_FILTER_BLOCK	1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH		2	/* si_code of SIGSYS */
#endif
#define UDT_CLONE_SETTLS		0x00080000
#define UDT_CLONE_VM			0x00000100
#define UDT_CLONE_VFORK			0x00004000
#ifndef SI_KERNEL
#define SI_KERNEL			0x80	/* si_code of an int3's SIGTRAP */
#endif

int			 udt_sud_active;	/* [I] dispatch may be had */
uint64_t		 udt_sud_ours;		/* [I] signals we handle */
int			 udt_sud_all;		/* [I] all-calls mode */
static int		 udt_sud_dispenv;	/* [I] USERDT_DISPATCH=1 */
/*
 * A deferred call's way back to the program, for udt_sud_stub.  Not one
 * per thread but a few: a child made with CLONE_VM and no thread pointer
 * of its own (vfork, posix_spawn's clone, a raw clone thread) runs on
 * its parent's TLS.  Both come back through the stub, in either order,
 * and a vfork child defers calls of its own (its execve) while its
 * parent's vfork is still to return.  So each entry belongs to the
 * thread (Linux tid) that deferred the call; a child takes its parent's,
 * and a shared entry is freed by whichever of the two comes back last.
 */
struct udt_sud_defer {
	pid_t		sd_tid;		/* [t] who deferred it; 0: free */
	int		sd_flags;	/* [t] UDT_SD_SHARED, UDT_SD_VFORK */
	int		sd_back;	/* [a] UDT_SD_PARENT, UDT_SD_CHILD */
	unsigned long	sd_seq;		/* [t] the newest is the child's */
	long		sd_nr;		/* [t] number + 1 (udt_rw_post's) */
	uintptr_t	sd_ret;		/* [t] where the program's call returns */
	struct udt_sud_xsig sd_x;	/* [t] an exec's, udt_sud_exec_pre() */
};
#define UDT_SD_SHARED	0x1		/* the child shares our memory */
#define UDT_SD_VFORK	0x2		/* and we wait for its exec or exit */
#define UDT_SD_PARENT	0x1		/* the caller came back */
#define UDT_SD_CHILD	0x2		/* the child came back */
#define UDT_SUD_NDEFER	8
static __thread struct udt_sud_defer udt_sud_defer[UDT_SUD_NDEFER]
    __attribute__((tls_model("initial-exec")));
static __thread unsigned long udt_sud_seq
    __attribute__((tls_model("initial-exec")));
/*
 * A ptrace tracer (gdb, strace) is there: the library raises no signal of
 * its own.  Dispatch stays off unless asked for (USERDT_ALLCALLS=1,
 * USERDT_DISPATCH=1), the int3 sites are gone (udt_rw_untrap()).
 */
int			 udt_sud_traced;	/* [a] */

/* Dispatch asked for by name, which a tracer does not turn off. */
static int
udt_sud_forced(void)
{
	return udt_sud_all || udt_sud_dispenv;
}

/*
 * In this library's text, so that its system calls are let through:
 * the restorer of our handler (rt_sigreturn), and the place a deferred
 * call is made, returning where the program's system call instruction
 * would have.  rcx and r11 are the syscall instruction's to clobber.
 */
void	udt_sud_stub(void) UDT_HIDDEN;
__asm__(
	".text\n"
	".globl udt_sud_stub\n"
	".hidden udt_sud_stub\n"
	".type udt_sud_stub, @function\n"
	"udt_sud_stub:\n"
	"	syscall\n"
	"	leaq -128(%rsp), %rsp\n"	/* the red zone, as a trampoline */
	"	pushq $0\n"			/* the way back, udt_sud_take()'s */
	"	pushq $-1\n"			/* UDT_RW_NR_SUD */
	"	call udt_rw_post\n"		/* the return probe, both sides */
	"	addq $8, %rsp\n"
	"	popq %r11\n"
	"	leaq 128(%rsp), %rsp\n"
	"	jmp *%r11\n"
	".size udt_sud_stub, .-udt_sud_stub\n"
	".globl udt_sud_restorer\n"
	".hidden udt_sud_restorer\n"
	".type udt_sud_restorer, @function\n"
	"udt_sud_restorer:\n"
	"	movl $15, %eax\n"		/* rt_sigreturn */
	"	syscall\n"
	"	hlt\n"
	".size udt_sud_restorer, .-udt_sud_restorer\n");
void	udt_sud_restorer(void) UDT_HIDDEN;

/*
 * One call, made here, with its probes when they are enabled; user
 * stacks from uc, the program's context (udt_ustack()).  Dispatch is on
 * during the call, as the program ran with it.
 */
static long
udt_sud_call(long nr, const long *a, void *uc)
{
	struct udt_thread *t = &udt_thread;
	void *ouc = t->ut_uc;
	unsigned int en = 0;
	long r, rv;
	int idx = -1, error;

	if (nr >= 0 && nr < SYSTAB_LINUX_MAX &&
	    (idx = systab_linux_index[nr]) >= 0)
		en = udt_enab16((unsigned int)idx);
	t->ut_uc = uc;
	if (en & 0xff)
		udt_emit(2 * (unsigned int)idx, en & 0xff, a, 0, 0, 0);
	/* A vfork child's last records, read while it shares the ring. */
	if ((nr == SYS_exit_group || nr == SYS_exit) && t->ut_vfork > 0)
		udt_exec_drain();
	/*
	 * The call itself, made from this library's text, passes with
	 * dispatch on: a handler of the program that runs while it blocks
	 * is then seen, and one that jumps out leaves dispatch on.
	 */
	t->ut_sud = SYSCALL_DISPATCH_FILTER_BLOCK;
	r = udt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	t->ut_sud = SYSCALL_DISPATCH_FILTER_ALLOW;
	if (udt_rw_maps(nr))
		udt_rw_saw(nr, a, r, (uintptr_t)((ucontext_t *)uc)->
		    uc_mcontext.gregs[REG_RIP] - 2);
	if (idx >= 0 && (en = udt_enab16((unsigned int)idx) >> 8) != 0) {
		error = r < 0 && r > -4096 ? (int)-r : 0;
		rv = error != 0 ? -1 : r;
		udt_emit(2 * (unsigned int)idx + 1, en, a, 1, rv, error);
	}
	t->ut_uc = ouc;
	return r;
}

/*
 * From the handler: remember how a call deferred to udt_sud_stub gets
 * back to the program at ret.  The entry is a free one, or, past
 * UDT_SUD_NDEFER pending, the oldest: never the thread's pending one,
 * which a signal handler's own deferred call, made between this
 * handler's sigreturn and the stub's call, would take from under it
 * (the stub then found nothing and exited 127).  A thread's entries are
 * taken newest first, as signal handlers nest.
 * Not inlined: its gettid is this library's own call, and a frame of its
 * own tells it apart from the program's calls the handler makes.
 */
static void __attribute__((noinline))
udt_sud_put(long nr, const long *a, uintptr_t ret,
    const struct udt_sud_xsig *x)
{
	struct udt_sud_defer *d = NULL;
	pid_t tid = (pid_t)udt_sys0(SYS_gettid);
	uint64_t flags;
	int i;

	for (i = 0; i < UDT_SUD_NDEFER && d == NULL; i++)
		if (udt_sud_defer[i].sd_tid == 0)
			d = &udt_sud_defer[i];
	if (d == NULL) {
		d = &udt_sud_defer[0];
		for (i = 1; i < UDT_SUD_NDEFER; i++)
			if (udt_sud_defer[i].sd_seq < d->sd_seq)
				d = &udt_sud_defer[i];
	}
	switch (nr) {
	case SYS_vfork:
		flags = UDT_CLONE_VM | UDT_CLONE_VFORK;
		break;
	case SYS_clone:
		flags = (uint64_t)a[0];
		break;
	case SYS_clone3:
		/* Unreadable: the call fails, makes no child. */
		if (udt_clone3_flags(a, &flags) != 0)
			flags = 0;
		break;
	default:
		flags = 0;
	}
	/* As udt_rw_slow() for one made in place. */
	if (flags & UDT_CLONE_VM)
		udt_sud_vfork_save();
	d->sd_tid = tid;
	d->sd_flags = (flags & UDT_CLONE_VM) == 0 ? 0 : UDT_SD_SHARED |
	    ((flags & UDT_CLONE_VFORK) != 0 ? UDT_SD_VFORK : 0);
	__atomic_store_n(&d->sd_back, 0, __ATOMIC_RELAXED);
	d->sd_seq = ++udt_sud_seq;
	d->sd_nr = nr + 1;
	d->sd_ret = ret;
	if (x != NULL)
		d->sd_x = *x;
	else
		memset(&d->sd_x, 0, sizeof(d->sd_x));
}

/*
 * From udt_rw_slow_post(), after udt_sud_stub made a deferred call that
 * returned rv: the call's number + 1 (udt_rw_post's), and in *back where
 * the program's call returns.  The thread that deferred it takes its own
 * newest entry; a child the call made has none and takes its parent's (the
 * newest it has not taken).  A child with memory of its own forgets
 * them all; one sharing its parent's frees the entry if the parent came
 * back first, else leaves that to it.  A vfork parent, back, frees what
 * its child left by exec'ing.  Only udt_sud_stub's caller;
 * async-signal-safe.
 */
long
udt_sud_take(long rv, uintptr_t *back, struct udt_sud_xsig *x)
{
	struct udt_sud_defer *e, *own = NULL, *newest = NULL, *d;
	pid_t tid = (pid_t)udt_sys0(SYS_gettid);
	long nr;
	int i, mine;

	for (i = 0; i < UDT_SUD_NDEFER; i++) {
		e = &udt_sud_defer[i];
		if (e->sd_tid == tid) {
			/* the newest: a handler's, over the call it landed in */
			if (own == NULL || e->sd_seq > own->sd_seq)
				own = e;
		} else if (e->sd_tid != 0 &&
		    !(__atomic_load_n(&e->sd_back, __ATOMIC_ACQUIRE) &
		    UDT_SD_CHILD) &&
		    (newest == NULL || e->sd_seq > newest->sd_seq))
			newest = e;
	}
	d = own != NULL ? own : newest;
	if (d == NULL) {
		/* Nothing deferred: cannot happen; stop rather than jump. */
		udt_sys1(SYS_exit_group, 127);
		__builtin_unreachable();
	}
	nr = d->sd_nr;
	*back = d->sd_ret;
	*x = d->sd_x;
	if (d == own && !(d->sd_flags & UDT_SD_SHARED)) {
		d->sd_tid = 0;
		return nr;
	}
	if (d != own && !(d->sd_flags & UDT_SD_SHARED)) {
		memset(udt_sud_defer, 0, sizeof(udt_sud_defer));
		return nr;
	}
	if (d == own && (d->sd_flags & UDT_SD_VFORK) && rv > 0)
		for (i = 0; i < UDT_SUD_NDEFER; i++)
			if (udt_sud_defer[i].sd_seq > d->sd_seq)
				udt_sud_defer[i].sd_tid = 0;
	mine = d == own ? UDT_SD_PARENT : UDT_SD_CHILD;
	/* A failed clone has no child to wait for. */
	if (d == own && rv < 0)
		mine |= UDT_SD_CHILD;
	if ((__atomic_or_fetch(&d->sd_back, mine, __ATOMIC_ACQ_REL) &
	    (UDT_SD_PARENT | UDT_SD_CHILD)) == (UDT_SD_PARENT | UDT_SD_CHILD))
		d->sd_tid = 0;
	return nr;
}

/*
 * The entry probe of a call the handler does not make itself (see
 * udt_sud_handler()): process-life calls are seen even so.  Their return
 * is not recorded: it happens in the program, after the handler.
 */
static void
udt_sud_entry(long nr, const long *a, void *uc)
{
	struct udt_thread *t = &udt_thread;
	void *ouc = t->ut_uc;
	unsigned int en;
	int idx;

	if (nr < 0 || nr >= SYSTAB_LINUX_MAX ||
	    (idx = systab_linux_index[nr]) < 0 ||
	    (en = udt_enab16((unsigned int)idx) & 0xff) == 0)
		return;
	t->ut_uc = uc;
	udt_emit(2 * (unsigned int)idx, en, a, 0, 0, 0);
	t->ut_uc = ouc;
}

/* The return probe of a call the handler made without udt_sud_call(). */
static void
udt_sud_return(long nr, const long *a, void *uc, long r)
{
	struct udt_thread *t = &udt_thread;
	void *ouc = t->ut_uc;
	unsigned int en;
	int idx, error;

	if (nr < 0 || nr >= SYSTAB_LINUX_MAX ||
	    (idx = systab_linux_index[nr]) < 0 ||
	    (en = udt_enab16((unsigned int)idx) >> 8) == 0)
		return;
	error = r < 0 && r > -4096 ? (int)-r : 0;
	t->ut_uc = uc;
	udt_emit(2 * (unsigned int)idx + 1, en, a, 1, error != 0 ? -1 : r,
	    error);
	t->ut_uc = ouc;
}

/*
 * A signal sig of ours sent to the program (si_code <= 0: kill, tgkill,
 * sigqueue) while its view blocks it: queued again on this thread with
 * its siginfo (to oneself the kernel takes any si_code, and keeps si_pid
 * and si_uid), blocked for real from here and after the handler returns,
 * so that it waits for the program as it would untraced.  Its thread
 * may no longer trap or be dispatched: SIGTRAP takes every int3 site
 * back to its system call for good (udt_rw_untrap()); SIGSYS turns
 * dispatch off for the thread until the signal is gone.  0, or -1 if it
 * could not be queued (then the program's action takes it now).
 */
/*
 * Dispatch off for this thread (a tracer, a SIGSYS held, an exec's): a
 * function of its own, so that a stack tells the call from the
 * program's.
 */
void __attribute__((noinline))
udt_sud_off(void)
{
	(void)udt_sys5(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0, 0, 0, 0);
	udt_thread.ut_armed = 0;
	/* Off now: int3 sites gone back want it on again (udt_rw_slow()). */
	udt_thread.ut_sbtry = 0;
	/*
	 * This thread's clones at sites neither rewritten nor trapped go
	 * unseen from now on: the entry's locked add (udt_rw_mt).
	 */
	__atomic_store_n(&udt_rw_mt, 1, __ATOMIC_RELAXED);
}

static int __attribute__((noinline))
udt_sig_hold(int sig, siginfo_t *si, ucontext_t *uc)
{
	uint64_t bit = UDT_SIGBIT(sig);

	/*
	 * Dispatch off where ut_armed says it is on, and also where it
	 * says off: a vfork child that failed to arm itself may have left
	 * it so in the TLS it shares with a parent whose dispatch is on,
	 * and dispatch with SIGSYS blocked kills.  A call where it was
	 * off, in a path taken once a held signal.
	 */
	if (sig == SIGTRAP)
		udt_rw_untrap(NULL);
	else if (udt_thread.ut_armed)
		udt_sud_off();
	else
		(void)udt_sys5(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0, 0,
		    0, 0);
	(void)udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &bit, NULL, 8);
	if (udt_sys4(SYS_rt_tgsigqueueinfo, udt_sys0(SYS_getpid),
	    udt_sys0(SYS_gettid), sig, si) != 0) {
		(void)udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit, NULL, 8);
		return -1;
	}
	*(uint64_t *)(void *)&uc->uc_sigmask |= bit;
	(void)__atomic_or_fetch(&udt_sig_held, bit, __ATOMIC_RELAXED);
	udt_sig_nhold++;
	return 0;
}

/*
 * Its default: die of it, core and all.  Also what an exception of the
 * program (its own int3, seccomp's SIGSYS) does to it untraced while it
 * blocks the signal: the kernel forces the default action.
 */
static void
udt_sud_die(int sig)
{
	struct udt_ksigaction dfl = { 0 };
	uint64_t bit = UDT_SIGBIT(sig);

	udt_sys4(SYS_rt_sigaction, sig, &dfl, NULL, 8);
	udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit, NULL, 8);
	/* This thread's, so a core shows the one that trapped. */
	udt_sys3(SYS_tgkill, udt_sys0(SYS_getpid), udt_sys0(SYS_gettid), sig);
}

/*
 * A SIGSYS or SIGTRAP that is not ours: the program's, as it asked.
 * Keeps to few locals: it runs on the program's stack, or its
 * alternate stack, below the kernel's frame (see README's stack use).
 * Its handler runs as the kernel would run it: the action reset first
 * where it asked (SA_RESETHAND), its sa_mask and, unless SA_NODEFER,
 * the signal blocked meanwhile, for real, or in the view for ours (a
 * trap or dispatch that raised a blocked one would kill), its context's
 * mask its view.  Our sigreturn puts the mask back, as the kernel's
 * would, and the view is what that context then says.
 */
static void
udt_sud_foreign(int sig, siginfo_t *si, void *uc)
{
	static const long none[6];
	struct udt_ksigaction *prog;
	void (*h)(int, siginfo_t *, void *);
	uint64_t mask, ov, *ucmask = (uint64_t *)(void *)
	    &((ucontext_t *)uc)->uc_sigmask;
	unsigned long flags;
	int took;

	/*
	 * Another thread's first install has ours in the kernel but not
	 * yet the action it found there kept aside: wait for it (bounded,
	 * as the lock).  Not our own thread's: it waits under us.
	 */
	if (sig == SIGSYS)
		udt_sud_kwait();
	if (udt_sig_view & UDT_SIGBIT(sig)) {
		if (si->si_code > 0) {
			udt_sud_die(sig);
			return;
		}
		if (udt_sig_hold(sig, si, uc) == 0)
			return;
	}
	/* One copy of the action, the reset on that very one. */
	prog = udt_sud_progact(sig);
	took = udt_sud_klock_take();
	h = prog->ka_handler;
	flags = prog->ka_flags;
	mask = prog->ka_mask;
	if ((flags & SA_RESETHAND) && h != (void *)SIG_DFL &&
	    h != (void *)SIG_IGN) {
		prog->ka_handler = (void *)SIG_DFL;
		udt_sud_pset();
	}
	udt_sud_klock_give(took);
	if (h == (void *)SIG_IGN)
		return;
	if (h == (void *)SIG_DFL) {
		udt_sud_die(sig);
		return;
	}
	mask |= (flags & SA_NODEFER) ? 0 : UDT_SIGBIT(sig);
	ov = udt_sig_view;
	udt_sud_viewgain(mask & udt_sud_ours);
	udt_sig_view |= mask & udt_sud_ours;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The context it is given says its view of ours. */
	*ucmask = (*ucmask & ~udt_sud_ours) | (ov & udt_sud_ours);
	mask &= ~udt_sud_ours;
	if (mask != 0)
		(void)udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &mask, NULL, 8);
	if (flags & SA_SIGINFO)
		h(sig, si, uc);
	else
		((void (*)(int))(void *)h)(sig);
	/*
	 * Its view after it is what its context says (a handler may change
	 * it there); held meanwhile and no longer blocked: let in now; the
	 * real mask our sigreturn sets holds ours only where held.
	 */
	udt_sig_after(*ucmask & udt_sud_ours);
	*ucmask = (*ucmask & ~udt_sud_ours) | udt_sig_held;
	/*
	 * Its handler returns here, not to its restorer: ours makes the
	 * rt_sigreturn that ends the signal, which is its.
	 */
	udt_sud_entry(SYS_rt_sigreturn, none, uc);
}

void
udt_sud_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	struct udt_thread *t = &udt_thread;
	struct udt_sud_xsig x, *xp;
	long nr, a[6], r;
	uint64_t flags;
	uintptr_t stub = 0;
	int saved = errno;

	/*
	 * A trapped site (udt_rw_trap.c): the int3 stands for the system
	 * call instruction it begins, so the program goes on after that,
	 * and the number is still in rax, as after a dispatch.
	 */
	if (sig == SIGTRAP && si->si_code == SI_KERNEL)
		stub = udt_rw_trap_stub((uintptr_t)g[REG_RIP] - 1);
	/*
	 * And still is: where a library that was closed had a trapped
	 * site, new code (a JIT's int3) may be now.  A site taken back
	 * (udt_rw_untrap()) since this int3 ran holds its system call
	 * again: run that.
	 */
	if (stub != 0 && *(const volatile uint16_t *)(uintptr_t)
	    (g[REG_RIP] - 1) == 0x050f) {
		g[REG_RIP] -= 1;
		errno = saved;
		return;
	}
	if (stub != 0 && *(const volatile uint16_t *)(uintptr_t)
	    (g[REG_RIP] - 1) != 0x05cc)
		stub = 0;
	if (sig == SIGTRAP ? stub == 0 : si->si_code != SYS_USER_DISPATCH) {
		udt_sud_foreign(sig, si, ucv);
		errno = saved;
		return;
	}
	/*
	 * Our own calls in here (libunwind's, libc's) go straight through.
	 * A handler of the program that interrupts us may turn dispatch
	 * back on (a hook does): then its calls come here, nested, which
	 * SA_NODEFER allows.  Each level leaves with dispatch on (BLOCK):
	 * the kernel dispatches only a call made while the selector read
	 * BLOCK, so that is what the program ran with.  Not the value read
	 * on entry: a raw clone thread shares our TLS, and its handler may
	 * have set ALLOW in between; put back, that would leave dispatch
	 * off for both threads for good.
	 */
	t->ut_sud = SYSCALL_DISPATCH_FILTER_ALLOW;
	/*
	 * A tracer came since dispatch was turned on: this call is made,
	 * and the thread runs without dispatch from now on (the tracer
	 * would stop at each SIGSYS).
	 */
	if (stub == 0 && __atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED) &&
	    !udt_sud_forced())
		udt_sud_off();
	if (stub != 0) {
		g[REG_RIP] += 1;
		nr = g[REG_RAX];
	} else
		nr = si->si_syscall;
	a[0] = g[REG_RDI];
	a[1] = g[REG_RSI];
	a[2] = g[REG_RDX];
	a[3] = g[REG_R10];
	a[4] = g[REG_R8];
	a[5] = g[REG_R9];
	udt_rw_mt_note(nr, a);
	switch (nr) {
	case SYS_clone:
	case SYS_clone3:
		/*
		 * clone3's flags read without faulting: a bad pointer is
		 * the program's EFAULT, deferred like any failing call.
		 */
		if (nr == SYS_clone)
			flags = (uint64_t)a[0];
		else if (udt_clone3_flags(a, &flags) != 0)
			flags = 0;
		if (!(flags & UDT_CLONE_SETTLS))
			goto deferred;
		/* As udt_rw_slow() and udt_sud_put(): back comes after. */
		if (flags & UDT_CLONE_VM)
			udt_sud_vfork_save();
		/*
		 * In place, let through until this thread's next hook; a
		 * trapped site's stub makes the call, records its return on
		 * both sides and jumps back (udt_rw_emit_inplace()).
		 */
		udt_sud_entry(nr, a, uc);
		g[REG_RAX] = nr;
		if (stub != 0) {
			udt_rw_ipnr = nr + 1;
			g[REG_RIP] = (greg_t)stub;
		} else
			g[REG_RIP] -= 2;
		errno = saved;
		return;
	case SYS_rt_sigreturn:
		/*
		 * After our own sigreturn, from our restorer: it never
		 * returns, so it leaves udt_sud_defer alone, which a deferred
		 * fork or exec interrupted on its way back still needs.
		 */
		udt_sud_entry(nr, a, uc);
		g[REG_RIP] = (greg_t)(uintptr_t)udt_sud_restorer;
		t->ut_sud = SYSCALL_DISPATCH_FILTER_BLOCK;
		errno = saved;
		return;
	case SYS_fork:
	case SYS_vfork:
	case SYS_execve:
	case SYS_execveat:
	deferred:
		/* After sigreturn, from udt_sud_stub, back to the program. */
		udt_sud_entry(nr, a, uc);
		xp = NULL;
		if (nr == SYS_execve || nr == SYS_execveat) {
			udt_sud_exec_pre(&x, uc);
			udt_exec_before();
			xp = &x;
		}
		udt_sud_put(nr, a, (uintptr_t)g[REG_RIP], xp);
		g[REG_RAX] = nr;
		g[REG_RIP] = (greg_t)(uintptr_t)udt_sud_stub;
		t->ut_sud = SYSCALL_DISPATCH_FILTER_BLOCK;
		errno = saved;
		return;
	case SYS_rt_sigprocmask:
		udt_sud_entry(nr, a, uc);
		r = udt_sud_sigmask(uc, a);
		udt_sud_return(nr, a, uc, r);
		break;
	case SYS_rt_sigaction:
		udt_sud_entry(nr, a, uc);
		r = udt_sud_sigaction(a);
		udt_sud_return(nr, a, uc, r);
		break;
	case SYS_sigaltstack:
		r = udt_sud_call(nr, a, uc);
		/*
		 * This handler's sigreturn puts back the alternate stack its
		 * frame saved, which would undo what the program just set:
		 * the frame gets the one now in force, as the kernel says it
		 * (whatever the call did, a failed one included).  The handler
		 * runs on the program's stack (no SA_ONSTACK), so SS_ONSTACK
		 * and EPERM were judged as untraced.  Not deferred: a deferred
		 * call's slot is the thread's one, which a signal handler's own
		 * deferred call would take from under it.
		 */
		if (a[0] != 0)
			(void)udt_sys2(SYS_sigaltstack, 0,
			    (long)&uc->uc_stack);
		break;
	case SYS_rt_sigsuspend:
	case SYS_ppoll:
	case SYS_pselect6: {
		struct udt_sud_tmp tmp;
		uint64_t ov = udt_sud_waitguard(nr, a, &tmp);

		r = udt_sud_call(nr, a, uc);
		udt_sig_after(ov);
		break;
	}
	default:
		r = udt_sud_call(nr, a, uc);
		break;
	}
	g[REG_RAX] = r;
	t->ut_sud = SYSCALL_DISPATCH_FILTER_BLOCK;
	errno = saved;
}

int
udt_sud_thread(void)
{
	struct udt_thread *t = &udt_thread;

	if (!udt_sud_active)
		return 0;
	if (__atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED) &&
	    !udt_sud_forced())
		return 0;
	/* A SIGSYS of the program's waits blocked: not until it is gone. */
	if (udt_sig_held & UDT_SIGBIT(SIGSYS)) {
		udt_sig_release();
		if (udt_sig_held & UDT_SIGBIT(SIGSYS))
			return -1;
	}
	udt_sud_resync();
	/*
	 * On with the selector letting every call through, then our SIGSYS
	 * handler into the kernel (dispatch to a SIGSYS on its default
	 * action would kill), then the selector blocks: a kernel or a
	 * sandbox that refuses dispatch costs no install.
	 */
	t->ut_sud = SYSCALL_DISPATCH_FILTER_ALLOW;
	if (udt_sys5(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH,
	    PR_SYS_DISPATCH_ON, udt_text_lo, udt_text_hi - udt_text_lo,
	    &t->ut_sud) != 0)
		return 0;
	if (udt_sud_install(0) != 0) {
		(void)udt_sys5(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0, 0,
		    0, 0);
		return 0;
	}
	t->ut_sud = SYSCALL_DISPATCH_FILTER_BLOCK;
	t->ut_armed = 1;
	return 0;
}

/*
 * Whether a thread's or process's first code, and the constructor's end,
 * turns dispatch on (udt_sud_start()): in all-calls mode, and where code
 * no pass went through is there (!udt_rw_complete) while a probe is on.  A thread that would turn it
 * on only at its first recorded call from a rewritten site
 * (udt_rw_arm()) could make every one of its traced calls from that
 * code (an executable stack's, a JIT's making system calls itself), and
 * none would be seen.  A probe enabled later still waits for that call.
 */
int
udt_sud_wanted(void)
{
	/* A debugger's: udt_sud_thread() would not turn it on. */
	if (!udt_sud_active || (__atomic_load_n(&udt_sud_traced,
	    __ATOMIC_RELAXED) && !udt_sud_forced()))
		return 0;
	return udt_sud_all || (!__atomic_load_n(&udt_rw_complete,
	    __ATOMIC_RELAXED) && udt_lfollow_want());
}

void
udt_sud_start(void)
{
	if (udt_sud_wanted())
		udt_sud_thread();
}

void
udt_sud_init(int all)
{
	/* Lazily unless all-calls mode turns dispatch on at once. */
	if (udt_sud_catch(SIGSYS, udt_sud_progact(SIGSYS), !all) != 0)
		return;
	udt_sud_active = 1;
	udt_sud_all = all;
	udt_sud_dispenv = getenv(UDT_RW_DISPATCH_ENV) != NULL;
	udt_sud_start();
}
