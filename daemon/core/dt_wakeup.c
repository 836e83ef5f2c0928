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
 * The deferred wakeup, as dt(4) defers its own through a soft interrupt:
 * producers only queue the softc whose reads are parked, and one thread
 * serves the queue, so no producer ever replies to a reader itself.  It
 * sits below dt_dev.c, which hands it the serve routine at start, so the
 * event path (dt_probe.c) reaches it without calling up into the device.
 *
 * Locks used to protect the globals in this file:
 *	[I]	immutable between dt_wakeup_start() and dt_wakeup_end()
 *	[w]	dt_wakeup_mtx
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "dt_clock.h"
#include "dt_softc.h"

#define DT_WAKEUP_MINWAIT	100000ULL	/* ns: a tick's least wait */

static pthread_mutex_t	 dt_wakeup_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 dt_wakeup_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t	 dt_wakeup_donecv = PTHREAD_COND_INITIALIZER;
static struct dt_softc	*dt_wakeup_head;	/* [w] softcs to serve */
static struct dt_softc	**dt_wakeup_tail = &dt_wakeup_head; /* [w] */
static struct dt_softc	*dt_wakeup_cur;		/* [w] being served */
static int		 dt_wakeup_stop;	/* [w] */
static unsigned int	 dt_wakeup_held;	/* [w] producers' batches */
static pthread_t	 dt_wakeup_thread;	/* [I] */
static void	(*dt_wakeup_serve)(struct dt_softc *);	/* [I] */

/*
 * Nothing to serve: wait, with a deadline while the sequencer holds
 * events, and release what D frees when it passes (no source may mark
 * for a while).  Under [w], which it drops around the release.
 */
static void
dt_wakeup_idle(void)
{
	struct timespec ts;
	uint64_t wait;

	wait = dt_seq_wait_ns();
	if (wait == UINT64_MAX) {
		pthread_cond_wait(&dt_wakeup_cv, &dt_wakeup_mtx);
		return;
	}
	if (wait > 0) {
		/* The sequencer's clock may be a test's: only the span. */
		if (wait < DT_WAKEUP_MINWAIT)
			wait = DT_WAKEUP_MINWAIT;
		if (wait > DT_SEQ_DELAY_NS)
			wait = DT_SEQ_DELAY_NS;
		ts = dt_clock_ts(dt_clock_ns(CLOCK_MONOTONIC) + wait);
		if (pthread_cond_clockwait(&dt_wakeup_cv, &dt_wakeup_mtx,
		    CLOCK_MONOTONIC, &ts) != ETIMEDOUT)
			return;
	}
	pthread_mutex_unlock(&dt_wakeup_mtx);
	dt_seq_tick();
	pthread_mutex_lock(&dt_wakeup_mtx);
}

static void *
dt_wakeup_main(void *arg)
{
	struct dt_softc *sc;

	(void)arg;
	/* dt_seq_tick() emits to probes' pcbs, an RCU read-side walk. */
	rcu_register_thread();
	pthread_mutex_lock(&dt_wakeup_mtx);
	for (;;) {
		while ((dt_wakeup_head == NULL || dt_wakeup_held > 0) &&
		    !dt_wakeup_stop)
			dt_wakeup_idle();
		if (dt_wakeup_head == NULL)
			break;
		sc = dt_wakeup_head;
		dt_wakeup_head = sc->ds_wnext;
		if (dt_wakeup_head == NULL)
			dt_wakeup_tail = &dt_wakeup_head;
		sc->ds_wnext = NULL;
		/* Clear first: an event during the serve queues sc again. */
		atomic_store(&sc->ds_wakeup, 0);
		dt_wakeup_cur = sc;
		pthread_mutex_unlock(&dt_wakeup_mtx);

		dt_wakeup_serve(sc);

		pthread_mutex_lock(&dt_wakeup_mtx);
		dt_wakeup_cur = NULL;
		pthread_cond_broadcast(&dt_wakeup_donecv);
	}
	pthread_mutex_unlock(&dt_wakeup_mtx);
	rcu_unregister_thread();
	return NULL;
}

void
dt_wakeup_schedule(struct dt_softc *sc)
{
	/*
	 * Every put of a release finds the reader parked: a look first,
	 * not a locked exchange per event on a line the wakeup thread
	 * writes.  Seen set, sc is queued and its serve clears the flag
	 * before it looks at the rings, so it sees this put.
	 */
	if (atomic_load(&sc->ds_wakeup) || atomic_exchange(&sc->ds_wakeup, 1))
		return;
	pthread_mutex_lock(&dt_wakeup_mtx);
	*dt_wakeup_tail = sc;
	dt_wakeup_tail = &sc->ds_wnext;
	/*
	 * Within a producer's batch the thread would only wake to find it
	 * held and sleep again: dt_wakeup_release() signals at its end.
	 */
	if (dt_wakeup_held == 0)
		pthread_cond_signal(&dt_wakeup_cv);
	pthread_mutex_unlock(&dt_wakeup_mtx);
}

void
dt_wakeup_kick(void)
{
	pthread_mutex_lock(&dt_wakeup_mtx);
	pthread_cond_signal(&dt_wakeup_cv);
	pthread_mutex_unlock(&dt_wakeup_mtx);
}

void
dt_wakeup_hold(void)
{
	pthread_mutex_lock(&dt_wakeup_mtx);
	dt_wakeup_held++;
	pthread_mutex_unlock(&dt_wakeup_mtx);
}

void
dt_wakeup_release(void)
{
	pthread_mutex_lock(&dt_wakeup_mtx);
	if (--dt_wakeup_held == 0 && dt_wakeup_head != NULL)
		pthread_cond_signal(&dt_wakeup_cv);
	pthread_mutex_unlock(&dt_wakeup_mtx);
}

void
dt_wakeup_forget(struct dt_softc *sc)
{
	struct dt_softc **scp;

	pthread_mutex_lock(&dt_wakeup_mtx);
	for (scp = &dt_wakeup_head; *scp != NULL; scp = &(*scp)->ds_wnext) {
		if (*scp == sc) {
			*scp = sc->ds_wnext;
			if (*scp == NULL)
				dt_wakeup_tail = scp;
			break;
		}
	}
	while (dt_wakeup_cur == sc)
		pthread_cond_wait(&dt_wakeup_donecv, &dt_wakeup_mtx);
	pthread_mutex_unlock(&dt_wakeup_mtx);
}

int
dt_wakeup_start(void (*serve)(struct dt_softc *))
{
	dt_wakeup_serve = serve;
	dt_wakeup_stop = 0;
	return pthread_create(&dt_wakeup_thread, NULL, dt_wakeup_main, NULL);
}

void
dt_wakeup_end(void)
{
	pthread_mutex_lock(&dt_wakeup_mtx);
	dt_wakeup_stop = 1;
	pthread_cond_signal(&dt_wakeup_cv);
	pthread_mutex_unlock(&dt_wakeup_mtx);
	pthread_join(dt_wakeup_thread, NULL);
}
