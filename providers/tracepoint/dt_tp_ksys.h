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
 * The kernel feed of the syscall probes (dt_tp_ksys.c): raw_syscalls
 * through perf for the processes the preload library does not trace.
 */
#ifndef DT_TP_KSYS_H
#define DT_TP_KSYS_H

#include <stdbool.h>
#include <stdint.h>

struct dt_evt;
struct dt_probe;
struct dt_tp_sample;

/*
 * Read raw_syscalls' formats and offer the feed (dt_ksys_feed()), as
 * root and where the kernel has them.  From dt_prov_tracepoint_init(),
 * after tracefs was found.
 */
void	dt_tp_ksys_init(void);

/*
 * What the system-wide feed makes of a record of raw_syscalls'
 * direction dir (0 sys_enter, 1 sys_exit), for any reader of those
 * records (a tree's, dt_tp_ksystree.c), in the reader thread [R].  dt_tp_ksys_note(): a rename or exec record,
 * noted (the task cache; dt_ksys_exec()); true when it was one.
 * dt_tp_ksys_call(): the record's Linux call number, or -1 when it is
 * no call's.  dt_tp_ksys_build(): probe dtp's event of it under flags
 * into ev (the registers at entry, the result folded into retval and
 * errno at return; identity, time, comm and stacks).
 */
bool	dt_tp_ksys_note(const struct dt_tp_sample *s);
long	dt_tp_ksys_call(unsigned int dir, const struct dt_tp_sample *s);
void	dt_tp_ksys_build(unsigned int dir, const struct dt_probe *dtp,
	    uint64_t flags, const struct dt_tp_sample *s, struct dt_evt *ev);

/* The tracefs id of dir's event, -1 where the kernel has none.  [I] */
int	dt_tp_ksys_evid(unsigned int dir);

/*
 * Offer a tree's feed (dt_ksys_tree_feed()).  From dt_tp_ksys_init(),
 * where both directions are there.
 */
void	dt_tp_ksystree_init(void);

/*
 * Offer counts in a kernel program (dt_ksys_kcount_feed(),
 * dt_tp_ksysbpf.c): idoff[dir] is where each direction's record holds
 * the call number, valoff0 sys_enter's args[6] and valoff1 sys_exit's
 * 64-bit ret (0: a filter of them is not the program's).  From
 * dt_tp_ksys_init(), where both directions are there.
 */
void	dt_tp_ksysbpf_init(unsigned int idoff0, unsigned int idoff1,
	    unsigned int valoff0, unsigned int valoff1);

#endif /* DT_TP_KSYS_H */
