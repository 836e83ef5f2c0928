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
 * The profile provider: one probe, profile:hz:97, whose label is fixed
 * as in dt(4); the real period comes with DTIOCPRBENABLE in dtrq_nsecs.
 * Enabling it creates one pcb per CPU, each sampling its own CPU.
 *
 * While a pcb records, a perf CPU-clock event on its CPU with its period
 * feeds it (dt_perf.c), so opens sampling at different rates each get
 * their own.
 *
 * Locks used to protect variables in this file:
 *	[K]	the core's configuration lock (every dtpv_* callback)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dt_perf.h"
#include "dt_softc.h"

static int	dt_prov_profile_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	dt_prov_profile_start(struct dt_pcb *);
static void	dt_prov_profile_stop(struct dt_pcb *);
static void	dt_prov_profile_fini(void);

static const struct dt_provider dt_prov_profile = {
	.dtpv_name	= "profile",
	.dtpv_alloc	= dt_prov_profile_alloc,
	.dtpv_start	= dt_prov_profile_start,
	.dtpv_stop	= dt_prov_profile_stop,
	/* A pcb is stopped before it is freed: nothing left for dtpv_free. */
	.dtpv_fini	= dt_prov_profile_fini,
};

static int	dt_prov_profile_lasterr;	/* [K] last error reported */

int
dt_prov_profile_init(void)
{
	if (dt_dev_alloc_probe("hz", "97", &dt_prov_profile, 0) == NULL)
		return -1;
	return 1;
}

static int
dt_prov_profile_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	unsigned int cpu;

	if (dtrq->dtrq_nsecs < DT_TIMER_NSECS_MIN ||
	    dtrq->dtrq_nsecs > DT_TIMER_NSECS_MAX)
		return EINVAL;
	for (cpu = 0; cpu < sc->ds_nrings; cpu++) {
		if (dt_pcb_alloc(dtp, sc, dtrq->dtrq_evtflags &
		    (DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK),
		    dtrq->dtrq_nsecs, (int)cpu) == NULL)
			return ENOMEM;	/* close frees what was made */
	}
	return 0;
}

/*
 * DTIOCRECORD on, under [K].  dt(4) cannot fail here either, so an event
 * that will not open leaves the pcb silent; say why once per cause, not
 * per CPU.  An offline CPU (ENODEV) simply has nothing to sample.
 */
static void
dt_prov_profile_start(struct dt_pcb *dp)
{
	int error;

	if ((error = dt_perf_start(dp)) == 0 || error == ENODEV)
		return;
	if (error != dt_prov_profile_lasterr)
		fprintf(stderr, "dtd: profile: cpu %d: cannot sample: %s\n",
		    dp->dp_cpu, strerror(error));
	dt_prov_profile_lasterr = error;
}

/* DTIOCRECORD off or close, under [K], before the pcb is unlinked. */
static void
dt_prov_profile_stop(struct dt_pcb *dp)
{
	dt_perf_stop(dp);
}

/* dt_dev_fini(): every open is closed, so every sampler is stopped. */
static void
dt_prov_profile_fini(void)
{
	dt_perf_shutdown();
}
