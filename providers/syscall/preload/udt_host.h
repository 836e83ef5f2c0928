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
 * The preload library as the profile timer sampler (providers/profile/
 * preload/) sees it: all it may use of the library, and the one way the
 * library calls it back (udt_host_register()).  Nothing else of
 * udt_preload.h crosses, and nothing of the profile half is included
 * here or anywhere in the syscall half.  Implemented in udt_host.c and
 * udt_unw.c.
 */
#ifndef UDT_HOST_H
#define UDT_HOST_H

#include <stdbool.h>
#include <stdint.h>
/*
 * Only the type: the hooks file, which includes this through
 * udt_preload.h, defines functions named like libc's and must see no
 * declaration of them (<time.h> declares clock_gettime()).
 */
#include <bits/types/struct_timespec.h>

/* The library's raw system calls are the host's too: no hook sees them. */
#include "udt_sys.h"

#define UDT_HOST_EXPORT	__attribute__((visibility("default")))
#define UDT_HOST_HIDDEN	__attribute__((visibility("hidden")))

struct udt_tab;

/* A sample of the timer fallback, as the sampler hands it over. */
#define UDT_PROF_STACK_MAX	19	/* STACKTRACE_MAX */
struct udt_prof_sample {
	int		ups_tid;	/* sampled thread (a pid_t) */
	unsigned int	ups_cpu;	/* CPU it ran on */
	struct timespec	ups_tsp;	/* CLOCK_REALTIME */
	unsigned int	ups_missed;	/* periods the timer overran */
	unsigned int	ups_nframes;
	uintptr_t	ups_pc[UDT_PROF_STACK_MAX];	/* innermost first */
};

/*
 * The calling thread's calls from here to udt_host_leave() are the
 * library's own: not recorded, not counted, and in all-calls mode let
 * through undispatched.  Returns the state leave restores (they nest).
 * Any thread, signal context included (thread-local state only).
 */
int	udt_host_enter(void) UDT_HOST_HIDDEN;
void	udt_host_leave(int) UDT_HOST_HIDDEN;

/*
 * One profile sample into the process's ring, taken every period ns of
 * the thread's CPU time; dropped (and counted recursive) when it
 * interrupted the thread's own recording.  The sampled thread, in its
 * signal handler: no lock, no allocation.
 */
void	udt_host_sample(const struct udt_prof_sample *, uint64_t period)
	    UDT_HOST_HIDDEN;

/*
 * The enable table now (acquire), whether dtd samples in timer mode
 * (UDT_W_PTIMER), and a reconnection to a new dtd (after a restart, when
 * the table says tb_reconnect).  Any thread but signal context.
 */
struct udt_tab *udt_host_tab(void) UDT_HOST_HIDDEN;
bool	udt_host_timer_mode(void) UDT_HOST_HIDDEN;
void	udt_host_reattach(void) UDT_HOST_HIDDEN;

/* The calling thread's id, cached.  Any thread, signal context too. */
int	udt_host_tid(void) UDT_HOST_HIDDEN;

/*
 * Threads.  udt_host_wrap_threads(): must pthread_create() wrap each new
 * thread's start (where new threads turn dispatch on: udt_sud_wanted())?
 * udt_host_thread_begin(): a wrapped thread's first code.
 * udt_host_thread_creating(), udt_host_thread_created(): in the creating
 * thread, before and after the real pthread_create(), whose clone and
 * the mask calls after it went through undispatched.
 */
bool	udt_host_wrap_threads(void) UDT_HOST_HIDDEN;
/*
 * The next pthread_create() after the library's, as the constructor
 * found it with the hooks' real functions, before the program ran
 * (udt_resolve_all()): NULL before that.  A dlsym() of it later, after
 * the constructor's rewrite mapped libc's and the loader's images,
 * faulted their pages again (issue 20).
 */
void	*udt_host_next_pthread_create(void) UDT_HOST_HIDDEN;
void	udt_host_thread_begin(void) UDT_HOST_HIDDEN;
void	udt_host_thread_creating(void) UDT_HOST_HIDDEN;
void	udt_host_thread_created(void) UDT_HOST_HIDDEN;

/*
 * The library's unwinder (udt_unw.c, udt_cfi.c), which loads nothing.
 * udt_unw_load(): ready it (the vDSO's tables); always 0; not from a
 * signal handler, idempotent.
 * udt_unw_stack(): return addresses of the context a signal interrupted
 * (the handler's third argument), innermost first, starting with its
 * PC: how many, at most max.
 * udt_unw_here(): return addresses of the calling thread's stack,
 * innermost first (the first is in this library): how many, at most max.
 * The last two: any thread, any context, signal handlers included.
 */
int	udt_unw_load(void) UDT_HOST_HIDDEN;
unsigned int	udt_unw_stack(void *uc, uintptr_t *pcs, unsigned int max)
	    UDT_HOST_HIDDEN;
int	udt_unw_here(void **ips, int max) UDT_HOST_HIDDEN;

/*
 * A part of the library that runs on the library's own life (the
 * profile timer sampler) registers here, from a constructor that runs
 * before the library's (a priority below 65535), so the library calls
 * it without naming it.  uhc_attached: the library's constructor, after
 * its first attach (start the watcher thread when dtd asked for it).
 * uhc_fork_child: the library's fork handler in any fork child, async-
 * signal-safe (forget the parent's samplers).  One client; NULL members
 * are skipped.
 */
struct udt_host_client {
	void	(*uhc_attached)(void);
	void	(*uhc_fork_child)(void);
};
void	udt_host_register(const struct udt_host_client *) UDT_HOST_HIDDEN;

#endif /* UDT_HOST_H */
