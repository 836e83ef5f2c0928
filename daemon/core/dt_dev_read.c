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
 * The device's read side: read(2) and poll(2) of an open, as dt(4)'s
 * dtread() and dtpoll().  A read that finds nothing parks its token on
 * the open (ds_parked) and completes when events come (the wakeup
 * thread's dt_softc_wakeup() serves it), is cancelled (a signal in the
 * client), or the open closes.  The front ends complete it through
 * dt_conf.dcf_read_done, once per token.
 *
 * Locks: an open's ds_mtx (dt_softc.h) around its parked reads and its
 * read buffer; the rings' own (dt_ring.h) inside it.
 */
#include <sys/uio.h>

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dt_softc.h"
/*
 * --openbsd-strict: dt(4) numbers threads from THREAD_PID_OFFSET, so
 * dtev_tid = tid + 100000 (dt-abi 1 and 4.5).  Every record of the n
 * bytes in buf that holds its dtev_tid, a truncated last one too.
 */
static void
dt_softc_tid_offset(char *buf, size_t n)
{
	const size_t at = offsetof(struct dt_evt, dtev_tid);
	size_t off;
	pid_t tid;

	for (off = 0; off + at + sizeof(tid) <= n;
	    off += sizeof(struct dt_evt)) {
		memcpy(&tid, buf + off + at, sizeof(tid));
		tid += DT_TID_OFFSET_OPENBSD;
		memcpy(buf + off + at, &tid, sizeof(tid));
	}
}

/*
 * --abi 1.14: the n bytes of whole records in buf as dt_dev.c 1.14's
 * 296-byte records (no user stack, a 17-byte comm), cut at resid as
 * dt(4) cuts the last record.  Returns the bytes.
 */
static size_t
dt_softc_to14(char *buf, size_t n, size_t resid)
{
	struct dt_evt ev;
	struct dt14_evt ev14;
	size_t i, nrec = n / sizeof(struct dt_evt);

	/* In place, front to back: record i moves down to i * 296. */
	for (i = 0; i < nrec; i++) {
		memcpy(&ev, buf + i * sizeof(ev), sizeof(ev));
		memset(&ev14, 0, sizeof(ev14));
		ev14.dtev_pbn = ev.dtev_pbn;
		ev14.dtev_cpu = ev.dtev_cpu;
		ev14.dtev_pid = ev.dtev_pid;
		ev14.dtev_tid = ev.dtev_tid;
		ev14.dtev_tsp = ev.dtev_tsp;
		ev14.dtev_kstack = ev.dtev_kstack;
		memcpy(ev14.dtev_comm, ev.dtev_comm, DT14_MAXCOMLEN - 1);
		memcpy(ev14.dt14_args, &ev._args, sizeof(ev14.dt14_args));
		memcpy(buf + i * sizeof(ev14), &ev14, sizeof(ev14));
	}
	n = nrec * sizeof(struct dt14_evt);
	return n < resid ? n : resid;
}

/* Fill ds_buf with up to resid bytes of records.  Under [m]. */
static size_t
dt_softc_take(struct dt_softc *sc, size_t resid)
{
	unsigned int cpu;
	size_t want = resid, nrec, n;

	if (dt_abi == DT_ABI_1_14) {
		/*
		 * Whole records to convert, one per 1.14 record wanted (a
		 * part of one counts), and no more than the 32 that 1.14
		 * copied through its queue of two rings (dt-abi 7).
		 */
		nrec = (resid + sizeof(struct dt14_evt) - 1) /
		    sizeof(struct dt14_evt);
		if (nrec > DT14_READMAX)
			nrec = DT14_READMAX;
		want = nrec * sizeof(struct dt_evt);
	}
	/* Ties go to a rotating first ring, as dt(4)'s walk starts. */
	cpu = sc->ds_lastcpu;
	sc->ds_lastcpu = (cpu + 1) % sc->ds_nrings;
	if (dt_strict) {
		/* dt(4) 1.48: FIFO per CPU, ring after ring (dt-abi 4.4). */
		n = dt_ring_walk(sc->ds_rings, sc->ds_nrings, cpu, sc->ds_buf,
		    want);
		dt_softc_tid_offset(sc->ds_buf, n);
	} else
		n = dt_ring_merge(sc->ds_rings, sc->ds_nrings, cpu,
		    sc->ds_buf, want);
	if (dt_abi == DT_ABI_1_14)
		n = dt_softc_to14(sc->ds_buf, n, resid);
	return n;
}

/*
 * Runs of records a reply takes straight from the rings, at most: the
 * kernel's IOV_MAX (1024) less the FUSE header libfuse puts first.
 * Where the CPUs' events interleave closely a run is about a record,
 * and a smaller cap made a large read come back short.
 */
#define DT_READ_NIOV	1023

/*
 * Complete token's read with up to resid bytes of records, as
 * dt_softc_take() would give them, and return the bytes; 0: none was
 * ready, and the read is not completed.  A front end that can (its
 * dcf_read_iov) takes them from the rings' slots: the staging copy into
 * ds_buf, every byte of every read, was a tenth of dtd's samples at
 * two million events a second, and the reply copies them anyway.
 * Under [m].
 */
static size_t
dt_softc_reply(struct dt_softc *sc, void *token, size_t resid)
{
	struct iovec iov[DT_READ_NIOV];
	unsigned int cpu, nrun, i;
	size_t n, done;

	if (dt_strict || dt_abi == DT_ABI_1_14 ||
	    dt_conf.dcf_read_iov == NULL) {
		if ((n = dt_softc_take(sc, resid)) > 0)
			dt_conf.dcf_read_done(token, sc->ds_buf, n, 0);
		return n;
	}
	/* Ties go to a rotating first ring, as dt_softc_take()'s. */
	cpu = sc->ds_lastcpu;
	sc->ds_lastcpu = (cpu + 1) % sc->ds_nrings;
	dt_ring_merge_begin(sc->ds_rings, sc->ds_nrings);
	n = dt_ring_merge_runs(sc->ds_rings, sc->ds_nrings, cpu, iov,
	    DT_READ_NIOV, &nrun, resid);
	/* Counted first: the reader may ask for the counts at once. */
	dt_ring_merge_count(sc->ds_rings, sc->ds_nrings);
	if (n > 0 && !dt_conf.dcf_read_iov(token, iov, nrun, n)) {
		/* Not this token's front end: staged as before. */
		for (i = 0, done = 0; i < nrun; i++) {
			memcpy(sc->ds_buf + done, iov[i].iov_base,
			    iov[i].iov_len);
			done += iov[i].iov_len;
		}
		dt_conf.dcf_read_done(token, sc->ds_buf, n, 0);
	}
	/* After the reply: until here the slots were the reply's. */
	dt_ring_merge_end(sc->ds_rings, sc->ds_nrings);
	return n;
}

/* Whether a read would find a record now.  Under [m]. */
static bool
dt_softc_readable(struct dt_softc *sc)
{
	unsigned int i;

	for (i = 0; i < sc->ds_nrings; i++)
		if (dt_ring_readable(&sc->ds_rings[i]))
			return true;
	return false;
}

/* Nobody waits any more: producers need not schedule wakeups.  [m] */
static void
dt_softc_awake(struct dt_softc *sc)
{
	if (sc->ds_parked == NULL && sc->ds_pollh == NULL)
		atomic_store_explicit(&sc->ds_sleeping, 0,
		    memory_order_relaxed);
}

/*
 * Complete parked reads, oldest first, while events last; then wake the
 * poller if records are left for it.  Under [m].
 */
void
dt_softc_serve(struct dt_softc *sc)
{
	struct dt_parked *dpk;
	size_t n;

	while ((dpk = sc->ds_parked) != NULL) {
		n = dt_softc_reply(sc, dpk->dpk_token, dpk->dpk_resid);
		if (n == 0)
			break;
		sc->ds_parked = dpk->dpk_next;
		if (sc->ds_parked == NULL)
			sc->ds_parkedtail = &sc->ds_parked;
		dt_softc_awake(sc);
		free(dpk);
	}
	if (sc->ds_pollh != NULL && sc->ds_parked == NULL &&
	    dt_softc_readable(sc)) {
		dt_conf.dcf_poll_done(sc->ds_pollh, true);
		sc->ds_pollh = NULL;
		dt_softc_awake(sc);
	}
}

bool
dt_dev_poll(struct dt_softc *sc, void *ph)
{
	void *old = NULL;
	bool ready;

	pthread_mutex_lock(&sc->ds_mtx);
	ready = sc->ds_parked == NULL && dt_softc_readable(sc);
	if (!ready && ph != NULL && !sc->ds_closing &&
	    dt_conf.dcf_poll_done != NULL) {
		old = sc->ds_pollh;
		sc->ds_pollh = ph;
		ph = NULL;
		/*
		 * As dt_dev_read() parks: announce, then look again, so an
		 * event put meanwhile is either seen here or wakes us.
		 */
		atomic_store_explicit(&sc->ds_sleeping, 1,
		    memory_order_relaxed);
		dt_softc_serve(sc);
	}
	if (old != NULL)
		dt_conf.dcf_poll_done(old, false);
	if (ph != NULL && dt_conf.dcf_poll_done != NULL)
		dt_conf.dcf_poll_done(ph, false);
	pthread_mutex_unlock(&sc->ds_mtx);
	return ready;
}

void
dt_dev_read(struct dt_softc *sc, size_t resid, void *token)
{
	struct dt_parked *dpk;
	int error;

	if (resid > DT_READ_MAX)
		resid = DT_READ_MAX;
	if (resid == 0) {
		/* OpenBSD never reaches the driver with an empty read. */
		dt_conf.dcf_read_done(token, NULL, 0, 0);
		return;
	}
	/* An injected error takes nothing from the rings. */
	if ((error = dt_inject_read(&sc->ds_inj, &resid)) != 0) {
		dt_conf.dcf_read_done(token, NULL, 0, error);
		return;
	}

	pthread_mutex_lock(&sc->ds_mtx);
	if (sc->ds_closing) {
		pthread_mutex_unlock(&sc->ds_mtx);
		dt_conf.dcf_read_done(token, NULL, 0, EIO);
		return;
	}
	/*
	 * The staging buffer, at the first read: an open that never reads
	 * (a flood of them) costs no megabyte each.
	 */
	if (sc->ds_buf == NULL) {
		if (dt_limit_charge(&sc->ds_cred, DT_READ_MAX) != 0) {
			pthread_mutex_unlock(&sc->ds_mtx);
			dt_conf.dcf_read_done(token, NULL, 0, ENOMEM);
			return;
		}
		if ((sc->ds_buf = malloc(DT_READ_MAX)) == NULL) {
			dt_limit_uncharge(&sc->ds_cred, DT_READ_MAX);
			pthread_mutex_unlock(&sc->ds_mtx);
			dt_conf.dcf_read_done(token, NULL, 0, ENOMEM);
			return;
		}
	}
	/* Earlier readers go first. */
	if (sc->ds_parked == NULL && dt_softc_reply(sc, token, resid) > 0) {
		pthread_mutex_unlock(&sc->ds_mtx);
		return;
	}
	dpk = malloc(sizeof(*dpk));
	if (dpk == NULL) {
		pthread_mutex_unlock(&sc->ds_mtx);
		dt_conf.dcf_read_done(token, NULL, 0, ENOMEM);
		return;
	}
	dpk->dpk_next = NULL;
	dpk->dpk_token = token;
	dpk->dpk_resid = resid;
	*sc->ds_parkedtail = dpk;
	sc->ds_parkedtail = &dpk->dpk_next;
	/*
	 * Announce the sleeper, then look at the rings again under their
	 * locks: an event put after our first look either is seen here or
	 * its producer sees ds_sleeping and schedules a wakeup.
	 */
	atomic_store_explicit(&sc->ds_sleeping, 1, memory_order_relaxed);
	dt_softc_serve(sc);
	pthread_mutex_unlock(&sc->ds_mtx);
}

bool
dt_dev_read_cancel(struct dt_softc *sc, void *token, int error)
{
	struct dt_parked **dpkp, *dpk;
	bool found = false;

	pthread_mutex_lock(&sc->ds_mtx);
	for (dpkp = &sc->ds_parked; (dpk = *dpkp) != NULL;
	    dpkp = &dpk->dpk_next) {
		if (dpk->dpk_token != token)
			continue;
		*dpkp = dpk->dpk_next;
		if (sc->ds_parkedtail == &dpk->dpk_next)
			sc->ds_parkedtail = dpkp;
		dt_softc_awake(sc);
		/* A parked read has its staging buffer (dt_dev_read()). */
		if (error == 0)
			dt_conf.dcf_read_done(token, sc->ds_buf,
			    dt_softc_take(sc, dpk->dpk_resid), 0);
		else
			dt_conf.dcf_read_done(token, NULL, 0, error);
		free(dpk);
		found = true;
		break;
	}
	pthread_mutex_unlock(&sc->ds_mtx);
	return found;
}

/* DTIOCGPLIST: the size-probing protocol of dt-abi 4.3. */
