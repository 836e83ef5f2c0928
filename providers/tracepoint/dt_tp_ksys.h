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

/*
 * Read raw_syscalls' formats and offer the feed (dt_ksys_feed()), as
 * root and where the kernel has them.  From dt_prov_tracepoint_init(),
 * after tracefs was found.
 */
void	dt_tp_ksys_init(void);

#endif /* DT_TP_KSYS_H */
