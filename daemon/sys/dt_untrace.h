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
 * User stacks without the tracer (design decision 17).  A perf callchain
 * of a traced process taken while it is in userdt's preload library (its
 * system call entry, its recording) or in one of the trampolines the
 * library generates for rewritten system call sites would show frames
 * the program does not have, and, inside a trampoline, hide the libc
 * function that made the call.  dt_ustack_untrace() rewrites such a
 * stack as the program would have had it untraced: the library's frames
 * cut from the leaf down (its entry keeps a frame whose return address is
 * the site: the kernel's frame-pointer walk goes on from there), a
 * trampoline's PC replaced by its site, read from the trampoline's
 * header (UDT_TRAMP_MAGIC, udt_wire.h) in the process's memory.
 */
#ifndef DT_UNTRACE_H
#define DT_UNTRACE_H

#include <sys/types.h>

#include <stdint.h>

struct stacktrace;

/*
 * Rewrite st, the user stack of pid, in place.  A process the mappings
 * cache does not know (not traced, or traced and not attached yet) has
 * its mappings read a few times in its first second, then once a second
 * while it has the library; a trampoline's header costs one or two
 * process_vm_readv(2).  Any thread, no lock held; may take the mappings
 * cache's lock, and this file's table lock, briefly.
 */
void	dt_ustack_untrace(pid_t pid, struct stacktrace *st);
/* The same for a deep stack (DTEVT_DEEPSTACK): pcs[*count]. */
void	dt_ustack_untrace_deep(pid_t pid, uint64_t *pcs, unsigned int *count);
/*
 * A traced image's ring header, where its library says what code of its
 * own it mapped after the hello, which the mappings cache's snapshot
 * does not hold (rh_cslo, rh_cshi: its disassembler's module): a stack
 * with a frame there is the library's work, and is dropped whole.
 * dt_untrace_track() lists ent for pid's image, reading hdr; the newest
 * image of a pid is the one looked at.  dt_untrace_untrack() takes ent
 * out, after which hdr is never read through it again: before the
 * header is unmapped.  What it said last is kept a few seconds for the
 * pid's samples still in perf's buffers.  The ingest (a hello served, a
 * tracee freed); a lock of this file's, briefly.
 */
struct udt_ring_hdr;
struct dt_untrace_ent {
	pid_t			 ue_pid;
	const struct udt_ring_hdr *ue_hdr;
	struct dt_untrace_ent	*ue_next;
};
void	dt_untrace_track(struct dt_untrace_ent *ent, pid_t pid,
	    const struct udt_ring_hdr *hdr);
void	dt_untrace_untrack(struct dt_untrace_ent *ent);

#endif /* DT_UNTRACE_H */
