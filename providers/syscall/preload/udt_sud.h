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
 * What the SIGSYS and SIGTRAP handler (udt_sud.c) and the program's view
 * of those signals (udt_sud_sig.c) share.  Private to udt_sud*.c; the
 * lock annotations are udt_sud.c's.
 */
#ifndef UDT_SUD_H
#define UDT_SUD_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "udt_preload.h"

#define UDT_SIGBIT(sig)			(1ULL << ((sig) - 1))

/* The kernel's struct sigaction for rt_sigaction(2). */
struct udt_ksigaction {
	void		(*ka_handler)(int, siginfo_t *, void *);
	unsigned long	ka_flags;
	void		(*ka_restorer)(void);
	uint64_t	ka_mask;
};

#define UDT_SA_RESTORER	0x04000000	/* the kernel's SA_RESTORER */

/* The program's action for one of our signals. */
struct udt_ksigaction *udt_sud_progact(int) UDT_HIDDEN;

/*
 * SIGSYS's handler, put into the kernel lazily (udt_sud_act.c says when).
 * udt_sud_install(trust): ours there, 0, or -1; trust takes our
 * memory's word that it is (not for dispatch: a vfork child's table is
 * not ours).  udt_sud_viewgain(v): ours there if the view v of the
 * program's mask blocks SIGSYS.  While that is lazy (udt_sud_lazy()),
 * the program's rt_sigaction of SIGSYS (udt_sud_sigaction()) is made,
 * under udt_sud_klock_take() and _give(), as a set of ours
 * (udt_sud_ouract()), or of its own ignore or default action where
 * udt_sud_kin_said() says ours is not there yet, followed by
 * udt_sud_kafter(what was there, its action, a copy of the old one to
 * give it), or as a query whose answer udt_sud_kanswer() corrects in
 * place; the program's memory is written
 * after the lock is given back.  Any thread, any context: one system
 * call at most, under a lock a handler that interrupts it on its own
 * thread passes.
 */
void	udt_sud_handler(int, siginfo_t *, void *) UDT_HIDDEN;
void	udt_sud_restorer(void) UDT_HIDDEN;
/* Dispatch off for this thread (a tracer, a SIGSYS held, an exec's). */
void	udt_sud_off(void) UDT_HIDDEN;
/*
 * udt_sud_kfix(): the constructor put ours in (udt_sud_catch()).
 * udt_sud_kwait(): until no other thread's install is under way
 * (udt_sud_foreign(), before it reads the program's SIGSYS action).
 */
void	udt_sud_kfix(void) UDT_HIDDEN;
/*
 * udt_sud_catch(sig, prog, lazy): our handler for sig from the
 * constructor on (lazily for SIGSYS, udt_sud_act.c says when), the
 * program's action kept in *prog; 0, or -1.  The constructor's thread.
 */
int	udt_sud_catch(int, struct udt_ksigaction *, int) UDT_HIDDEN;
void	udt_sud_kwait(void) UDT_HIDDEN;
int	udt_sud_lazy(void) UDT_HIDDEN;
int	udt_sud_install(int) UDT_HIDDEN;
int	udt_sud_kin_said(void) UDT_HIDDEN;
void	udt_sud_viewgain(uint64_t) UDT_HIDDEN;
void	udt_sud_ouract(struct udt_ksigaction *) UDT_HIDDEN;
int	udt_sud_klock_take(void) UDT_HIDDEN;
void	udt_sud_klock_give(int) UDT_HIDDEN;
void	udt_sud_kafter(const struct udt_ksigaction *,
	    const struct udt_ksigaction *, struct udt_ksigaction *) UDT_HIDDEN;
void	udt_sud_kanswer(struct udt_ksigaction *) UDT_HIDDEN;

/*
 * The program's view of our signals' mask, and the ones of ours really
 * blocked (udt_sud_sig.c).  This thread.
 */
extern __thread uint64_t udt_sig_view UDT_HIDDEN	/* [t] */
    __attribute__((tls_model("initial-exec")));
extern __thread uint64_t udt_sig_held UDT_HIDDEN	/* [t] */
    __attribute__((tls_model("initial-exec")));
/* Unblock for real a held signal the program took.  This thread. */
void	udt_sig_release(void) UDT_HIDDEN;
/* The view back after a wait with a temporary mask.  This thread. */
void	udt_sig_after(uint64_t) UDT_HIDDEN;
/*
 * Holds made on this thread (udt_sig_hold()), a count that only grows:
 * a vfork parent's look at its held ones is spared where none was made.
 */
extern __thread unsigned int udt_sig_nhold UDT_HIDDEN	/* [t] */
    __attribute__((tls_model("initial-exec")));
/*
 * A vfork parent, back: its view as it was at the call (view), the held
 * ones as its own mask has them (held, nhold: those held, and the count
 * of holds, then).  The thread that vforked.
 */
void	udt_sig_vfork_back(uint64_t view, uint64_t held, unsigned int nhold)
	    UDT_HIDDEN;

/*
 * The handler's guards (udt_sud_sig.c): rt_sigprocmask against the
 * program's mask in uc, rt_sigaction, and the temporary mask of
 * rt_sigsuspend, ppoll and pselect6 (the view to give back with
 * udt_sig_after()).
 */
long	udt_sud_sigmask(ucontext_t *, const long *) UDT_HIDDEN;
long	udt_sud_sigaction(const long *) UDT_HIDDEN;
uint64_t udt_sud_waitguard(long, long *, struct udt_sud_tmp *) UDT_HIDDEN;

#endif /* UDT_SUD_H */
