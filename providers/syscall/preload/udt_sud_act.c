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
 * The program's own actions for SIGSYS and SIGTRAP, kept aside while
 * ours are in the kernel (udt_sud.c forwards the signals that are not
 * ours to them): ours put in at start, or for SIGSYS when first needed,
 * and the program's made real again for the image an exec starts.
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before other threads exist
 *	[a]	atomic
 *	[t]	per thread (TLS)
 *	[k]	udt_sud_klock
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_sud.h"

static struct udt_ksigaction udt_sud_prog;	/* [k] the program's SIGSYS */
static struct udt_ksigaction udt_trap_prog;	/* [k] the program's SIGTRAP */

/*
 * SIGSYS's handler goes into the kernel when something first needs it,
 * not at every start (one call): a thread that turns dispatch on, the
 * program's own action for SIGSYS (kept aside, as always), a mask of
 * the program's view that blocks SIGSYS (one sent then must be held as
 * it would wait untraced, not take the default action; a first
 * pthread_create() blocks every signal).  Until then the kernel's action
 * is the program's, so a SIGSYS (seccomp's, kill's) does to it what it
 * does untraced.  The constructor installs it at once in all-calls
 * mode, and where SIGSYS was caught or blocked before it ran.
 *
 * A vfork child shares our memory but not our handlers: what it puts
 * in its own table is not said in udt_sud_kin, and dispatch, which a
 * SIGSYS on the default action would kill, asks the kernel every time
 * (udt_sud_install(0)).  A raw clone with CLONE_VM and neither
 * CLONE_VFORK nor CLONE_SIGHAND that installs it could make udt_sud_kin
 * say so wrongly for the view's case: such a child is not told apart.
 */
static int		 udt_sud_kfixed;	/* [I] ours since the ctor */
static int		 udt_sud_kin;		/* [a] ours since, said */
static int		 udt_sud_klock;		/* [a] an install under way */
static __thread int	 udt_sud_kmine		/* [t] this thread's, nested */
    __attribute__((tls_model("initial-exec")));

/* The program's action for one of our signals. */
struct udt_ksigaction *
udt_sud_progact(int sig)
{
	return sig == SIGTRAP ? &udt_trap_prog : &udt_sud_prog;
}

/* Our action for SIGSYS or SIGTRAP, as the kernel gets it. */
void
udt_sud_ouract(struct udt_ksigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->ka_handler = udt_sud_handler;
	/* SA_NODEFER: see udt_sud_handler(); ours are never blocked. */
	sa->ka_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER | UDT_SA_RESTORER;
	sa->ka_restorer = udt_sud_restorer;
}

/*
 * The install's lock: a few stores around one system call; what the
 * program asked to be told goes to its memory after the lock is given
 * back (a bad pointer faults outside it).  A handler that interrupts
 * its own thread inside it goes on without it (the thread's flag):
 * spinning there would wait for ever.  One that jumps out of it
 * (siglongjmp) leaves it taken: after UDT_KLOCK_SPINS the next taker
 * breaks it, which two threads in at once cost only a race between
 * their answers.  A fork child, whose other threads are gone, starts
 * with it free (udt_sud_forked()).
 */
#define UDT_KLOCK_SPINS	(1UL << 22)	/* tens of ms of pause */

int
udt_sud_klock_take(void)
{
	unsigned long n = 0;

	if (udt_sud_kmine)
		return 0;
	udt_sud_kmine = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	while (__atomic_exchange_n(&udt_sud_klock, 1, __ATOMIC_ACQUIRE) &&
	    ++n < UDT_KLOCK_SPINS)
		__builtin_ia32_pause();
	return 1;
}

void
udt_sud_klock_give(int took)
{
	if (!took)
		return;
	__atomic_store_n(&udt_sud_klock, 0, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	udt_sud_kmine = 0;
}

/*
 * A vfork child (posix_spawn's, a shell's) shares our memory: what it
 * sets of SIGSYS and SIGTRAP for itself (posix_spawn's child resets
 * every handled signal to its default before the exec) lands in the
 * actions kept aside for the program.  Its parent, the thread that
 * vforked, keeps them as they were before the call and puts them back
 * when it returns, unless a thread of its own set one meanwhile
 * (udt_sud_pgen): in place (udt_rw_slow()) or deferred (udt_sud_put()),
 * back in udt_rw_slow_post().
 */
struct udt_sud_vsave {
	struct udt_ksigaction	vs_sys, vs_trap;
	unsigned long		vs_gen;
	uint64_t		vs_view, vs_held;	/* udt_sig_view, _held */
	unsigned int		vs_nhold;	/* udt_sig_nhold */
};
/*
 * One a vfork depth; children nested deeper share the last (their
 * parents' saves are then lost).  Few: each is thread-local room in
 * every thread, and the loader's allocator makes that room beside the
 * program's objects (providers/syscall/README.md, Known limits).
 */
#define UDT_VSAVE_DEPTH	4
static __thread struct udt_sud_vsave udt_sud_vsave[UDT_VSAVE_DEPTH]	/* [t] */
    __attribute__((tls_model("initial-exec")));
static unsigned long	 udt_sud_pgen;	/* [a] sets not a vfork child's */

static struct udt_sud_vsave *
udt_sud_vslot(void)
{
	int d = udt_thread.ut_vfork;

	return &udt_sud_vsave[d < 0 ? 0 : d < UDT_VSAVE_DEPTH ? d :
	    UDT_VSAVE_DEPTH - 1];
}

void
udt_sud_vfork_save(void)
{
	struct udt_sud_vsave *vs = udt_sud_vslot();

	vs->vs_gen = __atomic_load_n(&udt_sud_pgen, __ATOMIC_ACQUIRE);
	vs->vs_sys = udt_sud_prog;
	vs->vs_trap = udt_trap_prog;
	vs->vs_view = udt_sig_view;
	vs->vs_held = udt_sig_held;
	vs->vs_nhold = udt_sig_nhold;
}

void
udt_sud_vfork_back(void)
{
	struct udt_sud_vsave *vs = udt_sud_vslot();
	int took;

	took = udt_sud_klock_take();
	if (vs->vs_gen == __atomic_load_n(&udt_sud_pgen, __ATOMIC_ACQUIRE)) {
		udt_sud_prog = vs->vs_sys;
		udt_trap_prog = vs->vs_trap;
	}
	udt_sud_klock_give(took);
	udt_sig_vfork_back(vs->vs_view, vs->vs_held, vs->vs_nhold);
}

void
udt_sud_pset(void)
{
	if (udt_thread.ut_vfork <= 0)
		__atomic_add_fetch(&udt_sud_pgen, 1, __ATOMIC_RELEASE);
}

/* Until no other thread holds the lock (udt_sud_foreign()). */
void
udt_sud_kwait(void)
{
	unsigned long n = 0;

	if (udt_sud_kmine)
		return;
	while (__atomic_load_n(&udt_sud_klock, __ATOMIC_ACQUIRE) &&
	    ++n < UDT_KLOCK_SPINS)
		__builtin_ia32_pause();
}

void
udt_sud_forked(void)
{
	__atomic_store_n(&udt_sud_klock, 0, __ATOMIC_RELAXED);
	udt_sud_kmine = 0;
}

/*
 * Whether SIGSYS's handler in the kernel is ours, as far as our memory
 * says it (trust: udt_sud_kin counts; not for dispatch, see above).
 */
static int
udt_sud_kours(int trust)
{
	return udt_sud_kfixed || (trust &&
	    __atomic_load_n(&udt_sud_kin, __ATOMIC_ACQUIRE));
}

void
udt_sud_kafter(const struct udt_ksigaction *was,
    const struct udt_ksigaction *act, struct udt_ksigaction *old)
{
	if (was->ka_handler != udt_sud_handler)
		udt_sud_prog = *was;
	*old = udt_sud_prog;
	if (act != NULL) {
		udt_sud_prog = *act;
		udt_sud_pset();
	}
	/* A vfork child's table is not ours (see above). */
	if (udt_thread.ut_vfork <= 0)
		__atomic_store_n(&udt_sud_kin, 1, __ATOMIC_RELEASE);
}

void
udt_sud_kanswer(struct udt_ksigaction *cur)
{
	if (cur->ka_handler == udt_sud_handler)
		*cur = udt_sud_prog;
}

/*
 * Our SIGSYS handler into the kernel for the library's own needs (the
 * program's rt_sigaction does it in its own call, udt_sud_sigaction()),
 * keeping what was there as the program's when it was not ours.
 */
static long
udt_sud_kput(void)
{
	struct udt_ksigaction sa, was;
	int took;
	long r;

	udt_sud_ouract(&sa);
	took = udt_sud_klock_take();
	r = udt_sys4(SYS_rt_sigaction, SIGSYS, &sa, &was, 8);
	if (r == 0)
		udt_sud_kafter(&was, NULL, &was);
	udt_sud_klock_give(took);
	return r;
}

int
udt_sud_kin_said(void)
{
	return udt_sud_kours(1);
}

int
udt_sud_install(int trust)
{
	if (udt_sud_kours(trust))
		return 0;
	return udt_sud_kput() == 0 ? 0 : -1;
}

void
udt_sud_viewgain(uint64_t v)
{
	if ((v & UDT_SIGBIT(SIGSYS)) && udt_sud_active && !udt_sud_kours(1))
		(void)udt_sud_kput();
}

int
udt_sud_lazy(void)
{
	return udt_sud_active && !udt_sud_kfixed;
}

void
udt_sud_kfix(void)
{
	udt_sud_kfixed = 1;
}


/*
 * Our handler for sig, the program's action kept aside in *prog.  The
 * guards keep sig out of the masks the program sets from now on; what it
 * set before (a mask inherited across exec, the handlers of libraries
 * initialised before us) loses it here.  The constructor's thread, the
 * only one.
 */
int
udt_sud_catch(int sig, struct udt_ksigaction *prog, int lazy)
{
	struct udt_ksigaction sa, h;
	uint64_t bit = UDT_SIGBIT(sig), caught, blocked, cur = 0;
	int s;

	if (udt_text_lo == 0)
		return -1;
	udt_sud_ouract(&sa);
	/*
	 * Blocked from before the exec (or by a library initialised before
	 * us): the program's view says so, the real mask does not.  A
	 * signal pending since (an exec keeps them) comes to
	 * udt_sud_foreign() at the unblock, which holds it: the view and
	 * our handler first, else it would take the action in the kernel
	 * (death, or an ignore that discards it).  The status read at
	 * start says whether it is (nothing of ours changed the mask
	 * since): no call when it is not, the usual case.  Lazily (SIGSYS,
	 * udt_sud_act.c): only where the status said that it is neither
	 * blocked nor caught, which leaves nothing to do here but keep it
	 * out of masks from now on.
	 */
	if (udt_proc_status(NULL, &caught, &blocked, NULL) != 0 ||
	    ((blocked | caught) & bit))
		lazy = 0;
	if (blocked & bit)
		udt_sig_view |= bit;
	/*
	 * Only a handler's mask can hold sig (an ignored or default action
	 * has none in force), so only the signals that have one are asked
	 * for it: since the exec, only constructors before ours set any.
	 */
	for (s = 1; s <= 64; s++) {
		if (s == SIGKILL || s == SIGSTOP || !(caught & UDT_SIGBIT(s)) ||
		    (udt_sud_ours & UDT_SIGBIT(s)) ||
		    udt_sys4(SYS_rt_sigaction, s, NULL, &h, 8) != 0 ||
		    !(h.ka_mask & bit))
			continue;
		h.ka_mask &= ~bit;
		if (udt_sys4(SYS_rt_sigaction, s, &h, NULL, 8) != 0)
			goto fail;
	}
	if (!lazy && udt_sys4(SYS_rt_sigaction, sig, &sa, prog, 8) != 0)
		goto fail;
	if (!lazy && sig == SIGSYS)
		udt_sud_kfix();
	udt_sud_ours |= bit;
	/* The old mask comes back with the change: one call, not two. */
	if ((blocked & bit) && udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit,
	    &cur, 8) == 0 && !(cur & bit))
		udt_sig_view &= ~bit;
	return 0;
fail:
	udt_sig_view &= ~bit;
	return -1;
}

int
udt_sud_trap_init(void)
{
	if (udt_sud_ours & UDT_SIGBIT(SIGTRAP))
		return 0;
	return udt_sud_catch(SIGTRAP, udt_sud_progact(SIGTRAP), 0);
}

/*
 * What follows runs inside a rewritten site's call or the SIGSYS
 * handler: byte loops, not libc's string functions, whose vector
 * registers the call must give back as they were (udt_xstate.c).
 */

/*
 * This process's thread count and the signals it has handlers for, now,
 * from the status (an open, a few reads, a close): 0, or -1.  No thread
 * but this one can make another.  A line at a time through a small
 * buffer (this may run on the program's alternate signal stack); a line
 * longer than it (Cpus_allowed_list) is skipped.
 */
static int
udt_sud_status(int *threads, uint64_t *cgt)
{
	char buf[160];
	const char *q;
	size_t have = 0, i, j;
	long fd, n;
	int got = 0;

	fd = udt_sys3(SYS_open, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	while (got != 3 && (n = udt_sys3(SYS_read, fd, buf + have,
	    sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		for (;;) {
			for (i = 0; i < have && buf[i] != '\n'; i++)
				;
			if (i == have)
				break;
			buf[i] = '\0';
			if (udt_sys_prefix(buf, "Threads:\t")) {
				*threads = 0;
				for (q = buf + 9; *q >= '0' && *q <= '9'; q++)
					*threads = *threads * 10 + (*q - '0');
				got |= 1;
			} else if (udt_sys_prefix(buf, "SigCgt:\t")) {
				q = buf + 8;
				*cgt = udt_hex(&q);
				got |= 2;
			}
			for (j = i + 1; j < have; j++)
				buf[j - i - 1] = buf[j];
			have -= i + 1;
		}
		if (have == sizeof(buf) - 1)
			have = 0;
	}
	udt_sys1(SYS_close, fd);
	return got == 3 ? 0 : -1;
}

/*
 * Whether SIGTRAP may be blocked or ignored for this thread's exec: 0,
 * or -1.  A trap then kills the thread, and one can come only from a
 * handler of the program's that runs before the exec (its sigreturn is
 * a trapped site): none can where every signal with a handler of the
 * program's is blocked (cgt: the kernel's caught set; the program's own
 * SIGSYS handler, sysh, stands behind ours) as in a process that blocks
 * them all, or posix_spawn's child, which resets its handlers; else
 * every int3 site goes back to its call first, for good, as for a held
 * SIGTRAP; never from a vfork child, whose parent would lose them all.
 */
static int
udt_sud_xtrap(uint64_t want, ucontext_t *uc, uint64_t cgt, int sysh)
{
	uint64_t cur = 0, open;

	/* In the handler the program's mask is its frame's. */
	if (uc != NULL)
		cur = *(const uint64_t *)(const void *)&uc->uc_sigmask;
	else if (udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8) != 0)
		return -1;
	open = cgt & ~(cur | want) & ~udt_sud_ours;
	if (sysh && !((udt_sig_view | want) & UDT_SIGBIT(SIGSYS)))
		open |= UDT_SIGBIT(SIGSYS);
	if (open == 0)
		return 0;
	if (udt_thread.ut_vfork > 0)
		return -1;
	return udt_rw_untrap_all("the program blocks or ignores SIGTRAP "
	    "across an exec");
}

/*
 * The rare half of udt_sud_exec_pre(): the program blocks (want) or
 * ignores (ig) one of ours.  Apart, so that an exec that needs none of
 * it costs a handler on an alternate stack nothing more.
 */
static void __attribute__((noinline))
udt_sud_exec_make(struct udt_sud_xsig *x, ucontext_t *uc, uint64_t want,
    uint64_t ig, int sysh)
{
	struct udt_ksigaction ign, old;
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	uint64_t bit, cgt = 0;
	int nthr = 0, known = 0, took, sig, pend, solo;

	/*
	 * An ignore is the process's: only where no other thread can run
	 * into it (a vfork child's actions are its own copy).  The status,
	 * once, where that or SIGTRAP's safety needs it.
	 */
	solo = !__atomic_load_n(&udt_rw_mt, __ATOMIC_RELAXED) ||
	    udt_thread.ut_vfork > 0;
	if ((ig != 0 && !solo) || ((want | ig) & UDT_SIGBIT(SIGTRAP)))
		known = udt_sud_status(&nthr, &cgt) == 0;
	if (!solo && !(known && nthr == 1))
		ig = 0;
	if (((want | ig) & UDT_SIGBIT(SIGTRAP)) &&
	    (!known || udt_sud_xtrap(want, uc, cgt, sysh) != 0)) {
		want &= ~UDT_SIGBIT(SIGTRAP);
		ig &= ~UDT_SIGBIT(SIGTRAP);
	}
	/*
	 * Dispatch off while SIGSYS is blocked or ignored.  A vfork child
	 * shares the flag with its parent, whose dispatch stays on: only
	 * the call.
	 */
	if (((want | ig) & UDT_SIGBIT(SIGSYS)) && udt_thread.ut_armed) {
		if (udt_thread.ut_vfork > 0)
			(void)udt_sys5(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH,
			    0, 0, 0, 0);
		else
			udt_sud_off();
		x->xs_off = 1;
	}
	/* Blocked first: nothing of ours comes in between. */
	if (want != 0 && udt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &want, NULL,
	    8) == 0) {
		/* Deferred to udt_sud_stub: its sigreturn sets the frame's. */
		if (uc != NULL)
			*(uint64_t *)(void *)&uc->uc_sigmask |= want;
		x->xs_blk = want;
	}
	memset(&ign, 0, sizeof(ign));
	ign.ka_handler = (void *)SIG_IGN;
	for (sig = SIGTRAP; ig != 0 && sig <= SIGSYS; sig++) {
		bit = UDT_SIGBIT(sig);
		if (!(ig & bit))
			continue;
		/*
		 * Ignoring discards what is pending, which one blocked since
		 * the program ignored it is, untraced: taken out first and
		 * queued again after, siginfo and all.
		 */
		pend = ((x->xs_blk | udt_sig_held) & bit) &&
		    udt_sys4(SYS_rt_sigtimedwait, &bit, &si, &zero, 8) == sig;
		took = udt_sud_klock_take();
		if (udt_sys4(SYS_rt_sigaction, sig, &ign, &old, 8) == 0 &&
		    old.ka_handler == udt_sud_handler)
			x->xs_ign |= bit;
		udt_sud_klock_give(took);
		if (pend)
			(void)udt_sys4(SYS_rt_tgsigqueueinfo,
			    udt_sys0(SYS_getpid), udt_sys0(SYS_gettid), sig,
			    &si);
	}
}

/*
 * Across an exec the new image inherits the real mask and every ignored
 * action, and ours, a handler, becomes the default there: what the
 * program's view says of SIGTRAP and SIGSYS is made real just before
 * the call, so that the image it execs starts as it would untraced (a
 * library of ours there reads them back, udt_sud_catch()), and put
 * back if the exec fails.  A thread that blocks SIGTRAP or leaves it
 * ignored may not trap (udt_sud_xtrap() says when it can be so), nor
 * one that blocks or ignores SIGSYS be dispatched (the kernel kills
 * such a thread): dispatch goes off for the thread.  Where SIGTRAP
 * cannot be made so, and where another thread could meet an ignore (a
 * process's action), the image gets what it got before: SIGTRAP or
 * SIGSYS unblocked, their handlers the default (README's limits).
 */
void
udt_sud_exec_pre(struct udt_sud_xsig *x, void *ucp)
{
	uint64_t want, ig = 0;
	int took, sysh;

	memset(x, 0, sizeof(*x));
	if (udt_sud_ours == 0)
		return;
	took = udt_sud_klock_take();
	if (udt_trap_prog.ka_handler == (void *)SIG_IGN)
		ig |= UDT_SIGBIT(SIGTRAP);
	if (udt_sud_prog.ka_handler == (void *)SIG_IGN)
		ig |= UDT_SIGBIT(SIGSYS);
	sysh = udt_sud_prog.ka_handler != (void *)SIG_IGN &&
	    udt_sud_prog.ka_handler != (void *)SIG_DFL;
	udt_sud_klock_give(took);
	ig &= udt_sud_ours;
	want = udt_sig_view & udt_sud_ours & ~udt_sig_held;
	if ((want | ig) != 0)
		udt_sud_exec_make(x, ucp, want, ig, sysh);
}

void
udt_sud_exec_undo(const struct udt_sud_xsig *x)
{
	struct udt_ksigaction sa;
	uint64_t un;
	int took, sig;

	/* Ours back first: what came meanwhile is then held, not lost. */
	udt_sud_ouract(&sa);
	for (sig = SIGTRAP; x->xs_ign != 0 && sig <= SIGSYS; sig++) {
		if (!(x->xs_ign & UDT_SIGBIT(sig)))
			continue;
		took = udt_sud_klock_take();
		(void)udt_sys4(SYS_rt_sigaction, sig, &sa, NULL, 8);
		udt_sud_klock_give(took);
	}
	/* Not one held meanwhile: that stays blocked for the program. */
	un = x->xs_blk & ~udt_sig_held;
	if (un != 0)
		(void)udt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &un, NULL, 8);
	if (x->xs_off)
		udt_sud_thread();
}
