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
 * The launcher's tracer, one tracee at a time (udt_ltrace.c), for the
 * helper process that runs it (udt_lhelp.c).  All of it runs in the
 * helper's one thread: no locks.
 */
#ifndef UDT_LTRACE_H
#define UDT_LTRACE_H

#include <sys/types.h>

#include <stddef.h>

struct udt_lt;

/*
 * A tracee the helper has just seized (PTRACE_SEIZE with
 * udt_lt_options(), then PTRACE_INTERRUPT).  follow UDT_LT_LAUNCH: the
 * launched process, which execs the command next ($PATH search and
 * all); UDT_LT_FOLLOW: a process of the traced tree that asked before
 * its exec, whose new image is followed only if its environment still
 * preloads lib; UDT_LT_CHECK: one that asked with nothing enabled, whose
 * exec is checked (set-id, static) and then let go.  The loader's calls
 * for lib, the preload library, are left out.  prog names the launcher
 * in messages.  NULL when out of memory.
 */
#define UDT_LT_LAUNCH	0
#define UDT_LT_FOLLOW	1
#define UDT_LT_CHECK	2

struct udt_lt	*udt_lt_new(const char *prog, pid_t tid, int follow,
		    const char *lib);
void		 udt_lt_free(struct udt_lt *);
pid_t		 udt_lt_pid(const struct udt_lt *);
/* An exec made a non-leader thread the leader: it is pid now. */
void		 udt_lt_repid(struct udt_lt *, pid_t pid);
long		 udt_lt_options(void);

/*
 * What waitpid() said of the tracee: handled, and the tracee resumed
 * as the kernel would have it.  1 when the helper is done with it
 * (detached, or gone), else 0.
 */
int		 udt_lt_stop(struct udt_lt *, int status);

/*
 * For a launched command whose loader is not followed (nothing to
 * record): say on stderr, as a followed one's tracer would, when the
 * file execvp(3) would run for file is set-id or statically linked, so
 * runs untraced.  The launcher, before its exec.
 */
void		 udt_lt_precheck(const char *prog, const char *file);

/*
 * udt_limage.c, for the tracer.  udt_li_setid(): whether executing
 * path gives the process other credentials (set-id bits that change
 * its ids; file capabilities, not for root).  udt_li_dynamic(): whether
 * the image pid runs asks for a loader, 1, 0 (static) or -1 (cannot
 * tell), its path into exe.  udt_li_say_static() and
 * udt_li_say_setid(): say so on stderr, once for each image: seen
 * non-zero (why NULL) when dtd reads its calls from the kernel, else
 * why not (error: dtd's errno when it was asked and refused, or 0; why:
 * UDT_LI_NOLIB, or what stopped it).  udt_li_ktree():
 * what udt_launch_ktree() set.  udt_li_karmsetid(): whether a set-id
 * exec is let happen under ptrace and held at its stop for dtd (root's
 * helper of a hooked tree), rather than let go before it.
 */
int		 udt_li_setid(const char *path);
int		 udt_li_dynamic(pid_t pid, char *exe, size_t len);
#define UDT_LI_NOLIB \
	"the preload library is not loaded into a set-id program"
void		 udt_li_say_static(const char *prog, const char *exe,
		    int seen, int error);
void		 udt_li_say_setid(const char *prog, const char *path,
		    const char *why);
int		 udt_li_ktree(void);
int		 udt_li_karmsetid(void);

#endif /* UDT_LTRACE_H */
