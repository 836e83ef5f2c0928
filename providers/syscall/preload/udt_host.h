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
 * udt_prof_preload.c) sees it: all it may use of the library, and what
 * the library calls of it.  Nothing else of udt_preload.h crosses.
 * Implemented in udt_host.c.
 */
#ifndef UDT_HOST_H
#define UDT_HOST_H

#include <stdbool.h>
#include <stdint.h>

#define UDT_HOST_EXPORT	__attribute__((visibility("default")))
#define UDT_HOST_HIDDEN	__attribute__((visibility("hidden")))

struct udt_prof_sample;
struct udt_tab;

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
 * thread's start (all-calls mode does, for dispatch)?
 * udt_host_thread_begin(): a wrapped thread's first code.
 * udt_host_thread_created(): in the creating thread, after the clone,
 * which went through undispatched.
 */
bool	udt_host_wrap_threads(void) UDT_HOST_HIDDEN;
void	udt_host_thread_begin(void) UDT_HOST_HIDDEN;
void	udt_host_thread_created(void) UDT_HOST_HIDDEN;

/*
 * The sampler, called by the library.  udt_ptimer_init(): the
 * constructor, after its first attach; starts the watcher thread when
 * dtd asked for it.  udt_ptimer_fork_child(): from the library's fork
 * handler in any fork child, async-signal-safe: forget the parent's
 * samplers.
 */
void	udt_ptimer_init(void) UDT_HOST_HIDDEN;
void	udt_ptimer_fork_child(void) UDT_HOST_HIDDEN;

#endif /* UDT_HOST_H */
