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
 * The hooks: one exported function per libc system call wrapper named
 * in syscalls.tsv, plus syscall(3).  On x86-64 every such wrapper takes
 * at most six integer or pointer arguments, all in registers, so one
 * definition taking six longs forwards any of them unchanged, variadic
 * ones included (the real function is called through a variadic
 * pointer, which sets %al as a variadic callee may expect).
 *
 * With no probe of the call enabled a hook costs a load of the enable
 * pointer, a 16-bit load of the call's two enable bytes, one branch that
 * is always taken the same way, and a tail call to libc.
 *
 * This file must not see libc's prototypes of the functions it defines:
 * it includes nothing that declares them.
 */
#include <errno.h>

#include "udt_preload.h"
#include "systab.h"

/*
 * Everything but the common case sits in a cold function with the hook's
 * signature: probes enabled, or libc not resolved yet (a hook running
 * before our constructor).  The hook reaches it with a tail jump, so the
 * fast path needs no stack frame at all.  The cold functions go to a
 * section of their own, after the hooks (the compiler's .text.unlikely
 * comes first in the library's text, where its 50 kB pushed what a start
 * runs over one more 64 kB block: meson.build).
 */
#define UDT_COLD							\
	__attribute__((noinline, cold, section(".text.udt_cold")))
/*
 * What a start runs of this file (the constructor's look-ups, a fork
 * child's check), with the library's other start code, before the rest
 * of the library's text.
 */
#define UDT_START	__attribute__((section(".text.hot.udt_start")))
/*
 * The hooks' real functions, in one array: its table of names for
 * udt_resolve_all() then needs no relocation, which in the library's
 * RELRO took 5 kB, a page more written at every start (issue 20).
 *
 * The hooks' of systab_hooks.inc first, then these, each with the name
 * it is looked up by: one list makes both the array's indices and the
 * names (udt_rnames), so they cannot pair wrongly.  fork_for_vfork is
 * fork, which a traced vfork() runs (below).
 */
#define UDT_REAL_MORE(X)						\
	X(fork_for_vfork, "fork")					\
	X(_Fork, "_Fork")						\
	X(pthread_setname_np, "pthread_setname_np")			\
	X(pthread_create, "pthread_create")				\
	X(syscall, "syscall")
#define UDT_RI(sym, ...)	udt_ri_##sym,
#define UDT_ONE(sym, ...)	+ 1
enum {
#define UDT_HOOK(sym, idx, rt)		UDT_RI(sym)
#define UDT_HOOK_CUSTOM(sym, idx, rt)	UDT_RI(sym)
#include "systab_hooks.inc"
#undef UDT_HOOK
#undef UDT_HOOK_CUSTOM
	UDT_REAL_MORE(UDT_RI)
	UDT_NREAL
};
/* The hooks' count and the list's, each counted on its own. */
enum {
	UDT_NHOOKS = 0
#define UDT_HOOK(sym, idx, rt)		UDT_ONE(sym)
#define UDT_HOOK_CUSTOM(sym, idx, rt)	UDT_ONE(sym)
#include "systab_hooks.inc"
#undef UDT_HOOK
#undef UDT_HOOK_CUSTOM
	,
	UDT_NMORE = 0 UDT_REAL_MORE(UDT_ONE)
};
_Static_assert(UDT_NREAL == UDT_NHOOKS + UDT_NMORE &&
    (int)udt_ri_fork_for_vfork == (int)UDT_NHOOKS, "udt_realv's indices");
static udt_fn_t udt_realv[UDT_NREAL];			/* [a] */
#define UDT_REAL(sym)	udt_realv[udt_ri_##sym]
#define udt_real_vfork			UDT_REAL(vfork)
#define udt_real_prctl			UDT_REAL(prctl)
#define udt_real_clock_gettime		UDT_REAL(clock_gettime)
#define udt_real_fork_for_vfork		UDT_REAL(fork_for_vfork)
#define udt_real__Fork			UDT_REAL(_Fork)
#define udt_real_pthread_setname_np	UDT_REAL(pthread_setname_np)
#define udt_real_pthread_create		UDT_REAL(pthread_create)
#define udt_real_syscall		UDT_REAL(syscall)

#define UDT_HOOK(sym, idx, rt)						\
static UDT_COLD long							\
udt_cold_##sym(long a0, long a1, long a2, long a3, long a4, long a5)	\
{									\
	long args[6] = { a0, a1, a2, a3, a4, a5 };			\
									\
	if (udt_enab16(idx) != 0 && !udt_sud_active)			\
		return udt_slow(idx, UDT_RT_##rt, &UDT_REAL(sym),	\
		    #sym, -1, args);					\
	return udt_resolve(&UDT_REAL(sym), #sym)(a0, a1, a2, a3, a4,	\
	    a5);							\
}									\
UDT_EXPORT long								\
sym(long a0, long a1, long a2, long a3, long a4, long a5)		\
{									\
	udt_fn_t fn;							\
									\
	fn = __atomic_load_n(&UDT_REAL(sym), __ATOMIC_RELAXED);	\
									\
	if (__predict_false(fn == NULL ||				\
	    (udt_enab16(idx) != 0 && !udt_sud_active)))		\
		return udt_cold_##sym(a0, a1, a2, a3, a4, a5);		\
	return fn(a0, a1, a2, a3, a4, a5);				\
}
#define UDT_HOOK_CUSTOM(sym, idx, rt)					\
enum { udt_idx_##sym = (idx) };
#include "systab_hooks.inc"
#undef UDT_HOOK
#undef UDT_HOOK_CUSTOM

/*
 * vfork: the child of a real vfork runs on its parent's stack frame, so
 * no wrapper may run code after it returns in the child.  Traced
 * processes get fork semantics instead, which POSIX allows for vfork;
 * the child gets its own ring through the fork handler.  The probes
 * still say vfork.
 *
 * With dispatch on (the default), the call is seen where it enters the
 * kernel, in place and in both processes (udt_rw_call.c): the program
 * gets the real vfork, by a jump, so that no frame of ours lies on the
 * stack the child shares.
 */
long	udt_vfork_hooked(void) UDT_HIDDEN;
udt_fn_t udt_vfork_real UDT_HIDDEN;
__asm__(
	".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	cmpl $0, udt_sud_active(%rip)\n"
	"	je udt_vfork_hooked\n"
	"	jmp *udt_vfork_real(%rip)\n"
	".size vfork, .-vfork\n");

long
udt_vfork_hooked(void)
{
	long args[6] = { 0 };

	if (__predict_false(udt_enab16(udt_idx_vfork) != 0))
		return udt_slow(udt_idx_vfork, UDT_RT_i,
		    &udt_real_fork_for_vfork, "fork", -1, args);
	return udt_resolve(&udt_real_fork_for_vfork, "fork")(0);
}

/* prctl: PR_SET_NAME changes the comm the records carry. */
#define UDT_PR_SET_NAME	15

UDT_EXPORT long
prctl(long a0, long a1, long a2, long a3, long a4)
{
	long args[6] = { a0, a1, a2, a3, a4, 0 };
	udt_fn_t fn;
	long r;

	if (udt_enab16(udt_idx_prctl) != 0)
		r = udt_slow(udt_idx_prctl, UDT_RT_i, &udt_real_prctl,
		    "prctl", -1, args);
	else {
		fn = __atomic_load_n(&udt_real_prctl, __ATOMIC_RELAXED);
		if (__predict_false(fn == NULL))
			fn = udt_resolve(&udt_real_prctl, "prctl");
		r = fn(a0, a1, a2, a3, a4);
	}
	if (a0 == UDT_PR_SET_NAME)
		udt_comm_invalidate();
	return r;
}

/*
 * _Fork(): glibc's async-signal-safe fork runs no atfork handlers, so
 * its child attaches here.  Not in the table: no probe of its own.
 */
UDT_EXPORT long
_Fork(void)
{
	long r = udt_resolve(&udt_real__Fork, "_Fork")(0);

	if (r == 0)
		udt_fork_child();
	return r;
}

/* Not a system call wrapper, but it renames a thread behind our back. */
UDT_EXPORT long
pthread_setname_np(long thread, long name)
{
	long r;

	r = udt_resolve(&udt_real_pthread_setname_np,
	    "pthread_setname_np")(thread, name);
	udt_comm_invalidate();
	return r;
}

/* Not hooked here: the profile half's (udt_host.h). */
UDT_START void *
udt_host_next_pthread_create(void)
{
	return (void *)__atomic_load_n(&udt_real_pthread_create,
	    __ATOMIC_ACQUIRE);
}

/*
 * syscall(3): the number selects the probes.  Seven integer arguments:
 * the seventh arrives on the stack exactly as a variadic caller put it.
 */

#define UDT_CLONE_VM	0x00000100	/* CLONE_VM */
#define UDT_SYS_CLONE	56
#define UDT_SYS_FORK	57
#define UDT_SYS_VFORK	58

UDT_START int
udt_forklike(long nr, long a0)
{
	return nr == UDT_SYS_FORK ||
	    (nr == UDT_SYS_CLONE && !(a0 & UDT_CLONE_VM));
}

UDT_EXPORT long
syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	udt_fn_t fn;
	long r;
	int idx;

	/* As vfork() does here, and for the same reason. */
	if (nr == UDT_SYS_VFORK)
		nr = UDT_SYS_FORK;

	if (nr >= 0 && nr < SYSTAB_LINUX_MAX &&
	    (idx = systab_linux_index[nr]) >= 0 &&
	    __predict_false(udt_enab16(idx) != 0)) {
		long args[6] = { a0, a1, a2, a3, a4, a5 };

		return udt_slow(idx, UDT_RT_l, &udt_real_syscall, "syscall",
		    nr, args);
	}
	fn = __atomic_load_n(&udt_real_syscall, __ATOMIC_RELAXED);
	if (__predict_false(fn == NULL))
		fn = udt_resolve(&udt_real_syscall, "syscall");
	r = fn(nr, a0, a1, a2, a3, a4, a5);
	if (r == 0 && udt_forklike(nr, a0))
		udt_fork_child();
	return r;
}

/* Every real function's name, in udt_realv's order. */
#define UDT_RNAME(sym, name)	name "\0"
static const char udt_rnames[] =
#define UDT_HOOK(sym, idx, rt)		#sym "\0"
#define UDT_HOOK_CUSTOM(sym, idx, rt)	#sym "\0"
#include "systab_hooks.inc"
#undef UDT_HOOK
#undef UDT_HOOK_CUSTOM
	UDT_REAL_MORE(UDT_RNAME);

/*
 * Resolve every hook up front, from the constructor, so that a hook
 * never needs the dynamic linker later (it may run in a signal handler
 * that interrupted dlopen).  Single-threaded context.
 */
UDT_START void
udt_resolve_all(void)
{
	udt_resolve_fast(udt_realv, udt_rnames, UDT_NREAL);
	udt_real_clock_gettime_fn = udt_real_clock_gettime;
	udt_vfork_real = udt_real_vfork;
}
