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
 * libunwind's local unwinder, opened at run time.
 *
 * The preload library does not name libunwind as a dependency: the
 * dynamic loader of every traced program would open and map it and its
 * liblzma before the library starts, calls the program would seem to
 * make (the launcher's tracer records the loader's calls as the
 * program's).  The library's constructor opens it instead, RTLD_LOCAL,
 * with the library's own calls, which are not recorded; a program that
 * has libunwind itself shares the one copy, as it did before.
 *
 * Concurrency contract: udt_unw_load() must not be called from a signal
 * handler (dlopen is not async-signal-safe); it is idempotent and may
 * race with itself.  The other functions may be called from any thread
 * and any context, signal handlers included, once udt_unw_load() has
 * returned 0 in some thread that happened before; before that (or if
 * it failed) they fail as libunwind does (UNW_EUNSPEC, or 0 frames).
 */
#ifndef UDT_UNW_H
#define UDT_UNW_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "udt_host.h"	/* udt_unw_load(), udt_unw_stack(), udt_unw_here() */

int	udt_unw_set_caching_policy(unw_caching_policy_t);
int	udt_unw_init_local2(unw_cursor_t *, unw_context_t *, int);
int	udt_unw_get_reg(unw_cursor_t *, int, unw_word_t *);
int	udt_unw_step(unw_cursor_t *);
int	udt_unw_backtrace(void **, int);

/*
 * The tracer's code, which udt_unw_stack() keeps out of stacks: the
 * library's text [lo, hi), whose frames are cut from the leaf down to
 * the first of the program's, and site(), which gives the site a PC in
 * a trampoline stands for (else the PC itself).  The constructor, before
 * any other thread exists; site() must be async-signal-safe.
 */
void	udt_unw_ours(uintptr_t, uintptr_t, uintptr_t (*)(uintptr_t));

#endif /* UDT_UNW_H */
