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
 * Which processes' system calls the preload library records, for the
 * kernel feed (dt_ksys.h): the kernel's copy of their events is dropped,
 * so that a call is counted once, with the hook's strings and stacks.
 */
#ifndef DT_SYS_KERN_H
#define DT_SYS_KERN_H

#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

/* dt_ksys_traced_fn: the kernel feed's reader thread only. */
bool	dt_sys_kern_traced(pid_t pid, uint64_t ns);
/* dt_ksys_exec_fn: the same thread. */
void	dt_sys_kern_exec(pid_t pid);

/*
 * The ingest sinks (dt_ingest.h) that tell it of each tracee: attach on
 * the accept thread, exit (ns: CLOCK_REALTIME it left the list at) on
 * the drain thread.  Each takes dt_sys_kern.c's lock briefly.
 */
void	dt_sys_kern_attach(pid_t pid, bool foreign);
void	dt_sys_kern_exit(pid_t pid, uint64_t ns);

/*
 * Whether a record of probe p of process pid made at ns (CLOCK_REALTIME)
 * is older than pid's entry in the kernel program's tracee map
 * (dt_ksys_tgid(), at its first image's attach): a launched image's
 * loader calls, which the launcher hands to the library, made while the
 * program still counted pid; for an image the program saw exec (young),
 * only the entry of that exec.  The ingest drain thread; takes the lock
 * briefly.
 */
bool	dt_sys_kern_before(pid_t pid, uint64_t ns, unsigned int p);

#endif /* DT_SYS_KERN_H */
