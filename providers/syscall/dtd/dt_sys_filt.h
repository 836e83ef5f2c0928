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

/* The hooks' filter of a syscall probe (dt_sys_filt.c). */
#ifndef DT_SYS_FILT_H
#define DT_SYS_FILT_H

struct dt_pcb;
struct dt_probe;

/*
 * Hand the tracees the filter of probe dtp (wire index p) for its
 * recording pcbs but skip (one being stopped, or NULL).  Under the
 * core's configuration lock, from dtpv_start/dtpv_stop.
 */
void	dt_sys_filt_update(unsigned int p, struct dt_probe *dtp,
	    const struct dt_pcb *skip);

#endif /* DT_SYS_FILT_H */
