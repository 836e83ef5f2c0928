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
 * The program's view of SIGTRAP and SIGSYS, apart from the handler in
 * udt_sud.c: the library keeps both unblocked for real in every thread
 * (a trap or a dispatch to a blocked one kills), so every call of the
 * program that sets or reads a mask, or an action, of either must be
 * answered from here, whether the handler caught it or a rewritten site
 * made it (udt_sud_guard()).
 */
#include <sys/uio.h>
#include <sys/syscall.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_sud.h"

/*
 * The program's view of our signals' mask.  The library needs SIGTRAP
 * (its int3 sites) and SIGSYS (dispatch) unblocked in every thread, since
 * the kernel kills a thread whose trap or dispatch raises a blocked one;
 * a program that blocks them (to read them from a signalfd or sigwait())
 * must still see them blocked, and find there a SIGTRAP or SIGSYS that
 * was sent to it.  So the real mask keeps them unblocked, and each thread
 * keeps what the program asked for in udt_sig_view: rt_sigprocmask
 * reports and changes it (udt_sig_procmask()), the temporary masks of
 * rt_sigsuspend, ppoll and pselect6 replace it while they wait.  A signal
 * of ours that is not the library's own (kill(2), raise(), tgkill(), a
 * sigqueue()) and arrives while the view blocks it is queued again,
 * siginfo and all, on the thread that took it, and really blocked there
 * (udt_sig_hold()): it waits, pending, for the program's signalfd,
 * sigwait() or sigpending(), or for the program to unblock it.  Such a
 * thread may not trap (SIGTRAP: every int3 site goes back to its system
 * call) nor be dispatched (SIGSYS: dispatch is off for it until the
 * signal is gone, udt_sig_release()).
 *
 * Invariant, outside the few instructions that change them: the real
 * mask blocks exactly udt_sig_held of ours, and udt_sig_held is part of
 * udt_sig_view.  Per thread, so a fork child inherits both with the mask
 * and a new thread starts with none, as glibc's start_thread sets its
 * mask through rt_sigprocmask.
 */
__thread uint64_t udt_sig_view		/* [t] blocked, for it */
    __attribute__((tls_model("initial-exec")));
__thread uint64_t udt_sig_held		/* [t] really blocked */
    __attribute__((tls_model("initial-exec")));
__thread unsigned int udt_sig_nhold	/* [t] holds made */
    __attribute__((tls_model("initial-exec")));

/*
 * n bytes of the program's memory at p into v, or of v to p, without
 * faulting on a bad pointer (the kernel's EFAULT, not our SIGSEGV): 0,
 * or -EFAULT as the kernel would say.  Where p lies on this thread's
 * stack just above us, in a live frame (libc's wrappers pass a local of
 * their own), a plain copy; else two system calls: the pid asked
 * afresh, since a vfork child (posix_spawn's) shares the cached tid of
 * a parent it may not name (Yama), and process_vm_readv or _writev.
 * The window spans our frames and a signal frame below the program's;
 * a bad pointer inside it past the stack's end would still fault.
 * Functions of their own, so that a stack tells their calls from the
 * program's (syscall-coverage).  n a multiple of 8.
 */
#define UDT_SIG_STACKWIN	16384

static int
udt_sig_onstack(const void *p, size_t n)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0),
	    a = (uintptr_t)p;

	return a >= sp && a + n >= a && a + n <= sp + UDT_SIG_STACKWIN &&
	    a % 8 == 0;
}

static void
udt_sig_words(uint64_t *d, const uint64_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n / 8; i++)
		d[i] = s[i];
}

static int __attribute__((noinline))
udt_sig_copyin(void *v, const void *p, size_t n)
{
	struct iovec l = { v, n }, r = { (void *)(uintptr_t)p, n };

	if (udt_sig_onstack(p, n)) {
		udt_sig_words(v, p, n);
		return 0;
	}
	return udt_sys6(SYS_process_vm_readv, udt_sys0(SYS_getpid),
	    (long)&l, 1, (long)&r, 1, 0) == (long)n ? 0 : -EFAULT;
}

static int __attribute__((noinline))
udt_sig_copyout(void *p, const void *v, size_t n)
{
	struct iovec l = { (void *)(uintptr_t)v, n }, r = { p, n };

	if (udt_sig_onstack(p, n)) {
		udt_sig_words(p, v, n);
		return 0;
	}
	return udt_sys6(SYS_process_vm_writev, udt_sys0(SYS_getpid),
	    (long)&l, 1, (long)&r, 1, 0) == (long)n ? 0 : -EFAULT;
}

/* *p, 8 bytes: only where the program blocks one of ours. */
static int
udt_sig_peek(const void *p, uint64_t *v)
{
	return udt_sig_copyin(v, p, sizeof(*v));
}

int
udt_clone3_flags(const long *a, uint64_t *flags)
{
	/* The flags lead struct clone_args; under 8 bytes it is EINVAL. */
	if ((unsigned long)a[1] < sizeof(*flags))
		return -1;
	return udt_sig_peek((const void *)a[0], flags) == 0 ? 0 : -1;
}

/*
 * The program's view of ours is now v, and the real mask blocks real of
 * ours: a held signal the program unblocked is let go (its handler, or
 * its default action, gets it at once, through udt_sud_foreign()), what
 * it blocked stays unblocked for real.  This thread.
 */
static void __attribute__((noinline))
udt_sig_setview(uint64_t v, uint64_t real)
{
	uint64_t held, un;

	udt_sig_view = v;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* A handler may hold one in between: and, not load and store. */
	held = __atomic_and_fetch(&udt_sig_held, v, __ATOMIC_RELAXED);
	un = (real & ~held) & udt_sud_ours;
	if (un != 0)
		(void)udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &un, NULL, 8);
}

/*
 * A held signal that is no longer pending was taken by the program (its
 * signalfd, sigwait()): unblock it for real, so that the thread may trap
 * and be dispatched again.  One system call, only while one is held.
 * This thread.
 */
void __attribute__((noinline))
udt_sig_release(void)
{
	uint64_t pend = 0, gone;

	if (udt_sig_held == 0 ||
	    udt_sys2(SYS_rt_sigpending, &pend, 8) != 0)
		return;
	gone = udt_sig_held & ~pend;
	if (gone == 0)
		return;
	(void)__atomic_and_fetch(&udt_sig_held, ~gone, __ATOMIC_RELAXED);
	(void)udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &gone, NULL, 8);
}

/*
 * The program's own system calls that no guard saw (a thread clone's
 * parent let through until its next hook, a new thread's first calls
 * before its dispatch is on, sites left undispatched) may have blocked
 * ours for real: that is its view, and the real mask unblocks them
 * again.  One system call.  This thread.
 */
void
udt_sud_resync(void)
{
	uint64_t cur, extra;

	if (udt_sud_ours == 0 ||
	    udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8) != 0)
		return;
	extra = cur & udt_sud_ours & ~udt_sig_held;
	if (extra == 0)
		return;
	udt_sud_viewgain(extra);
	udt_sig_view |= extra;
	(void)udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &extra, NULL, 8);
}

/*
 * pthread_create() gives its caller back the mask it had (glibc blocks
 * every signal around the clone and then sets the old mask again); where
 * the clone is let through, so is that last call, and the view would
 * keep every signal blocked: a SIGSYS or SIGTRAP sent later would be
 * held, and dispatch turned off for the thread.  One of ours that came
 * while the view was stale was held for it: let in at the end.  One
 * slot: a handler that runs the program's own create in between (before
 * glibc's block or after its restore) saves and gives back a view of
 * the same mask.
 */
static __thread uint64_t udt_sig_cview		/* [t] */
    __attribute__((tls_model("initial-exec")));

void
udt_sig_create_begin(void)
{
	udt_sig_cview = udt_sig_view;
}

void
udt_sig_create_end(void)
{
	udt_sig_after(udt_sig_cview);
}

/*
 * The program's rt_sigprocmask itself, in a function of its own, so that
 * a stack (strace -k, syscall-coverage) tells it from the library's
 * calls around it.
 */
static long __attribute__((noinline))
udt_sig_progmask(long how, const uint64_t *set, uint64_t *oset)
{
	return udt_sys4(SYS_rt_sigprocmask, how, set, oset, 8);
}

/*
 * rt_sigprocmask(how, set, oset, sz) for the program, on the thread's
 * live mask: what it sets and reads of SIGTRAP and SIGSYS is its view.
 * Where the view is the real mask (nothing of ours blocked that is not
 * held, the common case) the kernel's answer is right as it is and the
 * real mask is read back for what the program blocked; else the set is
 * read first (the kernel then writes what was blocked of ours into
 * oset, which is corrected).  Bad pointers and a bad how fail as
 * untraced.  This thread, any context.
 */
static long
udt_sig_procmask(long how, const uint64_t *set, uint64_t *oset, long sz)
{
	uint64_t view, s = 0, cur = 0, nv;
	int same;
	long r;

	if (sz != 8 || udt_sud_ours == 0)
		return udt_sys4(SYS_rt_sigprocmask, how, set, oset, sz);
	udt_sig_release();
	view = udt_sig_view;
	/* One held: it may be let go here, see below. */
	same = view == udt_sig_held && udt_sig_held == 0;
	if (!same && set != NULL && udt_sig_peek(set, &s) != 0)
		return -EFAULT;
	/*
	 * A held signal this unblocks comes the moment the kernel's mask
	 * lets it, inside the call: the view must not block it by then,
	 * or udt_sud_foreign() would hold it again, for good.
	 */
	if (!same && set != NULL) {
		nv = how == SIG_BLOCK ? view | (s & udt_sud_ours) :
		    how == SIG_UNBLOCK ? view & ~s :
		    how == SIG_SETMASK ? s & udt_sud_ours : view;
		/* Ours in the kernel before the view may hold one for it. */
		udt_sud_viewgain(nv);
		udt_sig_view = view & nv;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	r = udt_sig_progmask(how, set, oset);
	if (r != 0) {
		udt_sig_view = view;
		return r;
	}
	if (!same && oset != NULL)
		*oset = (*oset & ~udt_sud_ours) | view;
	if (set == NULL)
		return 0;
	(void)udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8);
	if (same)
		nv = cur & udt_sud_ours;
	else if (how == SIG_BLOCK)
		nv = view | (s & udt_sud_ours);
	else if (how == SIG_UNBLOCK)
		nv = view & ~s;
	else
		nv = s & udt_sud_ours;
	/* Blocked for real until setview: ours there before it unblocks. */
	udt_sud_viewgain(nv);
	udt_sig_setview(nv, cur & udt_sud_ours);
	return 0;
}

/*
 * For a call that waits with the temporary mask *m in force (rt_sigsuspend,
 * ppoll, pselect6): the mask the kernel gets, into *tm (ours unblocked
 * but for those held that *m blocks too), and the view while it waits.
 * Returns the view to give back with udt_sig_after().  This thread.
 */
static uint64_t
udt_sig_during(const uint64_t *m, uint64_t *tm)
{
	uint64_t ov = udt_sig_view, v = *m & udt_sud_ours;

	udt_sud_viewgain(v);
	*tm = (*m & ~udt_sud_ours) | (v & udt_sig_held);
	udt_sig_view = v;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return ov;
}

void
udt_sig_after(uint64_t ov)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	udt_sig_view = ov;
	/* Held while it waited, for a view that does not block it. */
	if (udt_sig_held & ~ov)
		udt_sig_setview(ov, udt_sig_held);
}

/*
 * A vfork child shares our TLS but has a mask and pending signals of its
 * own: its sigprocmask (posix_spawn's child sets the one it was asked
 * for) rewrote udt_sig_view, its udt_sig_release(), finding none of our
 * held signals pending on it, cleared udt_sig_held, and a signal it
 * held itself set a bit there, while this thread's kernel mask is as it
 * was.  A thread whose held SIGTRAP is forgotten traps with it blocked,
 * which kills.  The view first, the one saved at the call, so that a
 * hold from here on is judged by it; then the held ones, what the
 * kernel's mask blocks of ours, read only where there may be one
 * (nothing held at the call, nothing now, no hold made in between: the
 * mask blocks none of ours, as then).  A handler that holds one between
 * the read and the store makes the exchange fail, and the mask is read
 * again.  Then the view is set as any change of it is, so that a held
 * one it does not block is let in.  Not undone: a signal the kernel
 * gave this thread as the vfork returned, before this, was judged by
 * the child's view.
 */
void
udt_sig_vfork_back(uint64_t view, uint64_t held, unsigned int nhold)
{
	uint64_t old, cur;

	udt_sig_view = view;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (held == 0 && nhold == udt_sig_nhold &&
	    __atomic_load_n(&udt_sig_held, __ATOMIC_RELAXED) == 0)
		return;
	do {
		old = __atomic_load_n(&udt_sig_held, __ATOMIC_RELAXED);
		if (udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur,
		    8) != 0)
			return;
	} while (!__atomic_compare_exchange_n(&udt_sig_held, &old,
	    cur & udt_sud_ours, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	udt_sig_setview(view, cur & udt_sud_ours);
}

/*
 * rt_sigprocmask for the program, from the handler: made with the
 * program's own mask in place (so "how" and the old set mean what they
 * mean to it, and bad pointers fail as they would), the result kept in
 * the frame sigreturn restores, and our mask put back.
 */
long
udt_sud_sigmask(ucontext_t *uc, const long *a)
{
	uint64_t hmask, pmask, *fmask = (uint64_t *)(void *)&uc->uc_sigmask;
	long r;

	udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &hmask, 8);
	pmask = *fmask;
	udt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &pmask, NULL, 8);
	r = udt_sig_procmask(a[0], (const uint64_t *)a[1], (uint64_t *)a[2],
	    a[3]);
	udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &pmask, 8);
	udt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &hmask, NULL, 8);
	*fmask = pmask;
	return r;
}

/*
 * The temporary mask of rt_sigsuspend, ppoll or pselect6 in a[], if it
 * has one: where it is, else NULL; *psdp for pselect6's.
 */
static const uint64_t *
udt_sud_waitmask(long nr, const long *a)
{
	const struct udt_sud_psd *psd;

	switch (nr) {
	case SYS_rt_sigsuspend:
		return a[1] == 8 ? (const uint64_t *)a[0] : NULL;
	case SYS_ppoll:
		return a[4] == 8 ? (const uint64_t *)a[3] : NULL;
	case SYS_pselect6:
		psd = (const void *)a[5];
		return psd != NULL && psd->ps_len == 8 ? psd->ps_set : NULL;
	default:
		return NULL;
	}
}

/*
 * Point a[]'s temporary mask at a copy in *tmp that leaves our signals
 * unblocked (a dispatch or trap while it waits, in a handler it runs,
 * must not meet them blocked) but those held, and make the program's
 * view its mask while it waits: the view to give back, for
 * udt_sig_after().
 */
uint64_t
udt_sud_waitguard(long nr, long *a, struct udt_sud_tmp *tmp)
{
	const uint64_t *m = udt_sud_waitmask(nr, a);
	uint64_t ov;

	if (m == NULL)
		return udt_sig_view;
	ov = udt_sig_during(m, &tmp->st_mask);
	if (nr == SYS_pselect6) {
		tmp->st_psd.ps_set = &tmp->st_mask;
		tmp->st_psd.ps_len = 8;
		a[5] = (long)&tmp->st_psd;
	} else
		a[nr == SYS_ppoll ? 3 : 0] = (long)&tmp->st_mask;
	return ov;
}

/*
 * rt_sigaction of the program.  For SIGSYS (and SIGTRAP where sites are
 * trapped) its action is kept aside for udt_sud_foreign().  For any
 * other signal, ours leave the handler's mask: a system call in a
 * handler running with SIGSYS blocked would be dispatched to a blocked
 * SIGSYS, and a trapped one raise a blocked SIGTRAP, which the kernel
 * turns into death.
 */
long
udt_sud_sigaction(const long *a)
{
	struct udt_ksigaction *act = (void *)a[1], *old = (void *)a[2];
	struct udt_ksigaction copy, *prog;

	if (a[3] != 8)
		return -EINVAL;
	/*
	 * The program's action read without faulting (a bad pointer is its
	 * EFAULT, as untraced), before any lock: one call a set.  Its old
	 * one goes to the kernel's own call where that answers it, else
	 * is written the same way.
	 */
	if (act != NULL && udt_sig_copyin(&copy, act, sizeof(copy)) != 0)
		return -EFAULT;
	/*
	 * SIGSYS not yet ours in the kernel (udt_sud.c): a set makes ours
	 * its action there, in the program's own call; a query is the
	 * kernel's answer unless ours is there.
	 */
	if (a[0] == SIGSYS && udt_sud_lazy()) {
		struct udt_ksigaction sa, was;
		const struct udt_ksigaction *give = NULL;
		int took, own = 0;
		long r;

		udt_sud_ouract(&sa);
		took = udt_sud_klock_take();
		/*
		 * Ignored or default while ours is not there: the kernel
		 * keeps it as the program's (own), as untraced (an ignored
		 * SIGSYS stays so across exec; ours would become the
		 * default).  Any other: ours, the program's kept aside.
		 */
		if (act != NULL) {
			own = !udt_sud_kin_said() &&
			    (copy.ka_handler == (void *)SIG_IGN ||
			    copy.ka_handler == (void *)SIG_DFL);
			give = own ? &copy : &sa;
		}
		r = udt_sys4(SYS_rt_sigaction, SIGSYS, give, &was, 8);
		if (r == 0 && give == &sa)
			udt_sud_kafter(&was, &copy, &was);
		else if (r == 0)
			udt_sud_kanswer(&was);
		udt_sud_klock_give(took);
		if (r == 0 && old != NULL)
			r = udt_sig_copyout(old, &was, sizeof(was));
		return r;
	}
	if (a[0] > 0 && a[0] <= 64 && (udt_sud_ours & UDT_SIGBIT(a[0]))) {
		struct udt_ksigaction cur;
		int took;

		/*
		 * The kernel still sees the call (a query: ours stays), so
		 * that it counts where strace counts it.
		 */
		(void)udt_sys4(SYS_rt_sigaction, a[0], NULL, &cur, 8);
		/*
		 * Under the lock, as a handler's one-shot reset is made
		 * (udt_sud_foreign()); the program's memory written after
		 * it.
		 */
		took = udt_sud_klock_take();
		prog = udt_sud_progact((int)a[0]);
		cur = *prog;
		if (act != NULL) {
			*prog = copy;
			udt_sud_pset();
		}
		udt_sud_klock_give(took);
		return old != NULL ? udt_sig_copyout(old, &cur, sizeof(cur)) :
		    0;
	}
	if (act == NULL)
		return udt_sys4(SYS_rt_sigaction, a[0], NULL, old, 8);
	copy.ka_mask &= ~udt_sud_ours;
	return udt_sys4(SYS_rt_sigaction, a[0], &copy, old, 8);
}

int
udt_sud_guard(long nr, long *a, struct udt_sud_tmp *tmp, long *rp)
{
	uint64_t ov;

	switch (nr) {
	case SYS_rt_sigprocmask:
		*rp = udt_sig_procmask(a[0], (const uint64_t *)a[1],
		    (uint64_t *)a[2], a[3]);
		return 1;
	case SYS_rt_sigaction:
		*rp = udt_sud_sigaction(a);
		return 1;
	case SYS_rt_sigsuspend:
	case SYS_ppoll:
	case SYS_pselect6:
		ov = udt_sud_waitguard(nr, a, tmp);
		*rp = udt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		udt_sig_after(ov);
		return 1;
	default:
		return 0;
	}
}
