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
 * Per-user workers (dt_worker.h).
 *
 * Locks used to protect the fields below:
 *	[I]	set by dt_wq_new()
 *	[q]	q_mtx of the queue
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu.h>

#include "dt_clock.h"
#include "dt_worker.h"

#define DT_WQ_IDLE_NS	5000000000ULL	/* a worker idle this long ends */

struct dt_wkey {
	struct dt_wkey	*k_next;	/* [q] */
	struct dt_wq	*k_wq;		/* [I] */
	uint32_t	 k_key;		/* [I] */
	struct dt_work	*k_head;	/* [q] waiting, oldest first */
	struct dt_work	**k_tail;	/* [q] */
	unsigned int	 k_n;		/* [q] jobs waiting */
	uint64_t	 k_since;	/* [q] its job began, ns; 0: none */
	pthread_cond_t	 k_cv;		/* [q] a job came, or stop */
};

struct dt_wq {
	pthread_mutex_t	 q_mtx;
	pthread_cond_t	 q_gone;	/* [q] a worker ended */
	struct dt_wkey	*q_keys;	/* [q] one per live worker */
	unsigned int	 q_nthr;	/* [q] live workers */
	unsigned int	 q_qmax;	/* [I] */
	bool		 q_stop;	/* [q] */
	char		 q_name[16];	/* [I] */
};

struct dt_wq *
dt_wq_new(const char *name, unsigned int qmax)
{
	struct dt_wq *wq;

	if ((wq = calloc(1, sizeof(*wq))) == NULL)
		return NULL;
	pthread_mutex_init(&wq->q_mtx, NULL);
	pthread_cond_init(&wq->q_gone, NULL);
	wq->q_qmax = qmax;
	snprintf(wq->q_name, sizeof(wq->q_name), "%s", name);
	return wq;
}

/* [q] */
static struct dt_wkey *
dt_wq_find(struct dt_wq *wq, uint32_t key)
{
	struct dt_wkey *k;

	for (k = wq->q_keys; k != NULL; k = k->k_next)
		if (k->k_key == key)
			return k;
	return NULL;
}

/* [q] Unlink and free k, whose worker is ending. */
static void
dt_wq_unkey(struct dt_wq *wq, struct dt_wkey *k)
{
	struct dt_wkey **kp;

	for (kp = &wq->q_keys; *kp != k; kp = &(*kp)->k_next)
		;
	*kp = k->k_next;
	pthread_cond_destroy(&k->k_cv);
	free(k);
	wq->q_nthr--;
	pthread_cond_broadcast(&wq->q_gone);
}

static void *
dt_wq_main(void *arg)
{
	struct dt_wkey *k = arg;
	struct dt_wq *wq = k->k_wq;
	struct dt_work *wk;
	struct timespec ts;
	bool cancel;

	/* Jobs may reach the providers, some of which read under RCU. */
	rcu_register_thread();
	pthread_mutex_lock(&wq->q_mtx);
	for (;;) {
		if (k->k_head == NULL) {
			if (wq->q_stop)
				break;
			ts = dt_clock_ts(dt_clock_ns(CLOCK_MONOTONIC) +
			    DT_WQ_IDLE_NS);
			if (pthread_cond_clockwait(&k->k_cv, &wq->q_mtx,
			    CLOCK_MONOTONIC, &ts) != 0 && k->k_head == NULL)
				break;
			continue;
		}
		wk = k->k_head;
		if ((k->k_head = wk->wk_next) == NULL)
			k->k_tail = &k->k_head;
		k->k_n--;
		cancel = wq->q_stop;
		k->k_since = dt_clock_ns(CLOCK_MONOTONIC);
		pthread_mutex_unlock(&wq->q_mtx);
		wk->wk_fn(wk, cancel);
		pthread_mutex_lock(&wq->q_mtx);
		k->k_since = 0;
	}
	dt_wq_unkey(wq, k);
	pthread_mutex_unlock(&wq->q_mtx);
	rcu_unregister_thread();
	return NULL;
}

/* [q] A worker for key, with its thread started. */
static int
dt_wq_spawn(struct dt_wq *wq, uint32_t key, struct dt_wkey **kp)
{
	pthread_attr_t attr;
	sigset_t all, old;
	struct dt_wkey *k;
	pthread_t thr;
	int error;

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return ENOMEM;
	k->k_wq = wq;
	k->k_key = key;
	k->k_tail = &k->k_head;
	pthread_cond_init(&k->k_cv, NULL);
	if ((error = pthread_attr_init(&attr)) != 0)
		goto fail;
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Signals are the main thread's to take (a signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	error = pthread_create(&thr, &attr, dt_wq_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (error != 0)
		goto fail;
	(void)pthread_setname_np(thr, wq->q_name);
	k->k_next = wq->q_keys;
	wq->q_keys = k;
	wq->q_nthr++;
	*kp = k;
	return 0;
fail:
	pthread_cond_destroy(&k->k_cv);
	free(k);
	return error;
}

int
dt_wq_submit(struct dt_wq *wq, uint32_t key, struct dt_work *wk)
{
	struct dt_wkey *k;
	int error = 0;

	pthread_mutex_lock(&wq->q_mtx);
	if (wq->q_stop)
		error = ESHUTDOWN;
	else if ((k = dt_wq_find(wq, key)) == NULL)
		error = dt_wq_spawn(wq, key, &k);
	else if (k->k_n >= wq->q_qmax)
		error = EAGAIN;
	if (error == 0) {
		wk->wk_next = NULL;
		*k->k_tail = wk;
		k->k_tail = &wk->wk_next;
		k->k_n++;
		pthread_cond_signal(&k->k_cv);
	}
	pthread_mutex_unlock(&wq->q_mtx);
	return error;
}

bool
dt_wq_stalled(struct dt_wq *wq, uint32_t key, uint64_t ns)
{
	struct dt_wkey *k;
	bool stalled = false;

	pthread_mutex_lock(&wq->q_mtx);
	if ((k = dt_wq_find(wq, key)) != NULL && k->k_since != 0)
		stalled = dt_clock_ns(CLOCK_MONOTONIC) - k->k_since > ns;
	pthread_mutex_unlock(&wq->q_mtx);
	return stalled;
}

unsigned int
dt_wq_stop(struct dt_wq *wq, unsigned int ms)
{
	struct dt_wkey *k;
	struct timespec ts;
	unsigned int left;

	ts = dt_clock_ts(dt_clock_ns(CLOCK_MONOTONIC) +
	    (uint64_t)ms * 1000000);
	pthread_mutex_lock(&wq->q_mtx);
	wq->q_stop = true;
	for (k = wq->q_keys; k != NULL; k = k->k_next)
		pthread_cond_signal(&k->k_cv);
	while (wq->q_nthr > 0 && pthread_cond_clockwait(&wq->q_gone,
	    &wq->q_mtx, CLOCK_MONOTONIC, &ts) == 0)
		continue;
	left = wq->q_nthr;
	pthread_mutex_unlock(&wq->q_mtx);
	return left;
}

void
dt_wq_free(struct dt_wq *wq)
{
	bool idle;

	if (wq == NULL)
		return;
	pthread_mutex_lock(&wq->q_mtx);
	idle = wq->q_stop && wq->q_nthr == 0;
	pthread_mutex_unlock(&wq->q_mtx);
	/* A stuck worker still uses it: left to it, dtd is ending. */
	if (!idle)
		return;
	pthread_cond_destroy(&wq->q_gone);
	pthread_mutex_destroy(&wq->q_mtx);
	free(wq);
}
