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
 * The interval provider: interval:hz:1, firing on one CPU from a clock
 * thread in dtd, as dt(4) fires it from the primary CPU's clock
 * interrupt.  Every recording pcb has its own period and deadline; the
 * thread sleeps until the earliest one.  A period missed because dtd was
 * not scheduled in time is not replayed but counted in skiptick, as
 * dt(4)'s clockintr does.
 *
 * The event describes what ran when the timer fired: dtd's clock thread
 * (pid of dtd, tid of the thread, comm "dtd") on CPU 0, where the thread
 * pins itself.
 *
 * Locks used to protect the globals in this file:
 *	[c]	dt_clock_mtx
 *	[I]	set once by the clock thread before it signals dt_clock_cv
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_clock.h"
#include "dt_dev.h"
#include "dt_prov.h"

/* A recording interval pcb, hung on dp_priv. */
struct dt_clock {
	struct dt_clock	*dck_next;	/* [c] armed clocks */
	struct dt_pcb	*dck_pcb;	/* [I] */
	uint64_t	 dck_deadline;	/* [c] CLOCK_MONOTONIC ns */
};

static pthread_mutex_t	 dt_clock_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 dt_clock_cv;
static struct dt_clock	*dt_clocks;		/* [c] armed */
static int		 dt_clock_running;	/* [c] thread exists */
static int		 dt_clock_stop;		/* [c] */
static pthread_t	 dt_clock_thread;	/* [c] */

static int	dt_prov_interval_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	dt_prov_interval_start(struct dt_pcb *);
static void	dt_prov_interval_stop(struct dt_pcb *);
static void	dt_prov_interval_fini(void);

static const struct dt_provider dt_prov_interval = {
	.dtpv_name	= "interval",
	.dtpv_alloc	= dt_prov_interval_alloc,
	.dtpv_start	= dt_prov_interval_start,
	.dtpv_stop	= dt_prov_interval_stop,
	.dtpv_fini	= dt_prov_interval_fini,
};

int
dt_prov_interval_init(void)
{
	if (dt_dev_alloc_probe("hz", "1", &dt_prov_interval, 0) == NULL)
		return -1;
	return 1;
}

static int
dt_prov_interval_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	if (dtrq->dtrq_nsecs < DT_TIMER_NSECS_MIN ||
	    dtrq->dtrq_nsecs > DT_TIMER_NSECS_MAX)
		return EINVAL;
	if (dt_pcb_alloc(dtp, sc, dtrq->dtrq_evtflags &
	    (DTEVT_EXECNAME | DTEVT_KSTACK | DTEVT_USTACK),
	    dtrq->dtrq_nsecs, 0) == NULL)
		return ENOMEM;
	return 0;
}

/* Fire every clock that is due.  Under [c], inside rcu_read_lock(). */
static void
dt_clock_fire(struct dt_evt *ev, uint64_t now)
{
	struct dt_clock *dck;
	uint64_t late, nsecs;
	struct timespec ts;
	int cpu;

	cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ev->dtev_tsp = ts;
	for (dck = dt_clocks; dck != NULL; dck = dck->dck_next) {
		if (dck->dck_deadline > now)
			continue;
		nsecs = dck->dck_pcb->dp_nsecs;
		late = (now - dck->dck_deadline) / nsecs;
		dck->dck_deadline += (late + 1) * nsecs;
		/*
		 * Stamped as it is put, so no source of ours can still
		 * put anything younger later: no mark to publish, only
		 * the wait for the others' (dt_prov.h).
		 */
		dt_seq_put(NULL, dck->dck_pcb, (unsigned int)cpu, ev);
		if (late > 0)
			dt_pcb_count_skiptick(dck->dck_pcb, (unsigned int)cpu,
			    late);
	}
}

static void *
dt_clock_main(void *arg)
{
	struct dt_clock *dck;
	struct dt_evt ev;
	struct timespec ts;
	cpu_set_t set;
	uint64_t next;

	(void)arg;
	rcu_register_thread();
	/* The primary CPU, as dt(4); stay wherever we are if refused. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
	pthread_setname_np(pthread_self(), "dtd");

	memset(&ev, 0, sizeof(ev));
	ev.dtev_pid = getpid();
	ev.dtev_tid = gettid();
	strncpy(ev.dtev_comm, "dtd", sizeof(ev.dtev_comm) - 1);

	pthread_mutex_lock(&dt_clock_mtx);
	while (!dt_clock_stop) {
		if (dt_clocks == NULL) {
			pthread_cond_wait(&dt_clock_cv, &dt_clock_mtx);
			continue;
		}
		next = UINT64_MAX;
		for (dck = dt_clocks; dck != NULL; dck = dck->dck_next)
			if (dck->dck_deadline < next)
				next = dck->dck_deadline;
		if (dt_clock_ns(CLOCK_MONOTONIC) < next) {
			ts = dt_clock_ts(next);
			pthread_cond_timedwait(&dt_clock_cv, &dt_clock_mtx,
			    &ts);
			continue;	/* re-evaluate: clocks may have changed */
		}
		rcu_read_lock();
		dt_clock_fire(&ev, dt_clock_ns(CLOCK_MONOTONIC));
		rcu_read_unlock();
	}
	pthread_mutex_unlock(&dt_clock_mtx);
	rcu_unregister_thread();
	return NULL;
}

/* Under [K]: the clock thread never takes it, so waiting on [c] is safe. */
static void
dt_prov_interval_start(struct dt_pcb *dp)
{
	pthread_condattr_t attr;
	struct dt_clock *dck;

	dck = calloc(1, sizeof(*dck));
	if (dck == NULL)
		return;	/* no memory: this open gets no ticks, as if idle */
	dck->dck_pcb = dp;
	dck->dck_deadline = dt_clock_ns(CLOCK_MONOTONIC) + dp->dp_nsecs;
	dp->dp_priv = dck;

	pthread_mutex_lock(&dt_clock_mtx);
	if (!dt_clock_running) {
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&dt_clock_cv, &attr);
		pthread_condattr_destroy(&attr);
		dt_clock_stop = 0;
		if (pthread_create(&dt_clock_thread, NULL, dt_clock_main,
		    NULL) == 0)
			dt_clock_running = 1;
	}
	dck->dck_next = dt_clocks;
	dt_clocks = dck;
	pthread_cond_signal(&dt_clock_cv);
	pthread_mutex_unlock(&dt_clock_mtx);
}

static void
dt_prov_interval_stop(struct dt_pcb *dp)
{
	struct dt_clock **dckp, *dck = dp->dp_priv;

	if (dck == NULL)
		return;
	/* Once unlinked under [c] the clock thread cannot be firing it. */
	pthread_mutex_lock(&dt_clock_mtx);
	for (dckp = &dt_clocks; *dckp != NULL; dckp = &(*dckp)->dck_next) {
		if (*dckp == dck) {
			*dckp = dck->dck_next;
			break;
		}
	}
	pthread_mutex_unlock(&dt_clock_mtx);
	dp->dp_priv = NULL;
	free(dck);
}

static void
dt_prov_interval_fini(void)
{
	pthread_mutex_lock(&dt_clock_mtx);
	if (!dt_clock_running) {
		pthread_mutex_unlock(&dt_clock_mtx);
		return;
	}
	dt_clock_stop = 1;
	pthread_cond_signal(&dt_clock_cv);
	pthread_mutex_unlock(&dt_clock_mtx);
	pthread_join(dt_clock_thread, NULL);
	pthread_mutex_lock(&dt_clock_mtx);
	dt_clock_running = 0;
	pthread_cond_destroy(&dt_clock_cv);
	pthread_mutex_unlock(&dt_clock_mtx);
}
