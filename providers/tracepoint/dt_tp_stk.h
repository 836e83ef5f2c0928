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
 * The stacks a thread left the CPU with.  dt(4) fires on__cpu in the
 * thread coming back, whose kernel stack is still the one it switched
 * out on; perf's sched_switch record is walked in the outgoing thread,
 * so the provider keeps each thread's last switch-out stacks and gives
 * them to its on__cpu, as OpenBSD's kstack and ustack there read.
 *
 * Every function here is for the perf reader thread only ([R]).
 */
#ifndef DT_TP_STK_H
#define DT_TP_STK_H

#include <sys/types.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

#include "dt_tp_perf.h"

/* Thread tid leaves a CPU at s: keep s's stacks for it. */
void	dt_tp_stk_off(pid_t tid, const struct dt_tp_sample *s);

/*
 * Thread tid is back: its stacks into ev, once.  A switch-out already
 * handed to an earlier on__cpu, or never seen (before tracing began,
 * or on another CPU's buffer not read yet), gives empty stacks rather
 * than another sleep's.
 */
void	dt_tp_stk_on(pid_t tid, struct dt_evt *ev);

/* Forget every thread's stacks and free the table (no reader runs). */
void	dt_tp_stk_fini(void);

#endif /* DT_TP_STK_H */
