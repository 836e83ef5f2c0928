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
 * The profile provider's timer fallback, daemon side (design: "where perf
 * is refused it falls back to per-thread CPU-time timers inside
 * preloaded processes").  The seams between the files that take part:
 *
 *	dt_profile_svc.c	decides the mode at start (dt_ptimer_enable)
 *	dt_prov_profile.c	DTIOCRECORD: the smallest period of every
 *				recording pcb goes to the tracees; samples
 *				go to the pcb of their CPU (dt_ptimer_put)
 *	daemon/ingest		writes the period into every tracee's table
 *				and wakes its watcher (dt_ingest_ptimer_set);
 *				validates sample records and hands them to
 *				the sink dt_ptimer_enable() registered
 *
 * In the tracee, providers/profile/udt_prof_preload.c arms a CPU-time
 * timer per thread and writes one record per sample (udt_wire.h,
 * UDT_PROBE_PROFILE).
 */
#ifndef DT_PTIMER_H
#define DT_PTIMER_H

#include <stdbool.h>
#include <stdint.h>

struct dt_evt;

/*
 * Switch the profile provider to the timer fallback: later DTIOCRECORDs
 * set the tracees' period instead of opening perf events, and the ingest
 * socket tells every tracee to watch its table (UDT_W_PTIMER).  Called
 * once by dtd's profile service on the main thread, before the ingest
 * service starts and before the device is published.
 */
void	dt_ptimer_enable(void);

/* Whether dt_ptimer_enable() ran.  Any thread. */
bool	dt_ptimer_enabled(void);

/*
 * One validated sample of a traced thread: ev is complete (pid, tid,
 * comm, tsp, ustack; kstack empty), taken on cpu; it stands for
 * (1 + missed) periods of period ns of that thread's CPU time.  Put it
 * into the ring of cpu of every open recording profile whose period is
 * due, counting missed periods as skipped ticks.  Called by the ingest
 * drain thread only (registered with liburcu); takes rcu_read_lock().
 */
void	dt_ptimer_put(unsigned int cpu, const struct dt_evt *ev,
	    uint64_t missed, uint64_t period);

/*
 * Charge n samples a tracee lost (its ring was full: dropevt) or dropped
 * as recursive (recurevt) to every open recording profile, on CPU 0 as
 * the syscall provider does, since the tracee does not say where.  Same
 * caller as dt_ptimer_put().
 */
void	dt_ptimer_count(uint64_t n, bool recursive);

#endif /* DT_PTIMER_H */
