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
 * The sequencer: events reach the rings in time-stamp order (design
 * decision 18).
 *
 * A ring receives events in the order they are put, and dtd's sources
 * put late and in batches: the ingest drain one tracee's records after
 * another's, the tracepoint reader one Linux event's buffers after
 * another's, the perf sampler every few milliseconds.  So events go
 * through here first.  Each source that puts late publishes a mark, "all
 * I put from now on is stamped at T or later"; the watermark W is the
 * oldest mark of the active sources, but never older than now - D, so a
 * stuck source delays the others by D at most; a source that says it is
 * held back, not stuck (dt_source_patient()), by DT_SEQ_PATIENT_NS at
 * most, and the others' marks still by D.  Events are held by (time
 * stamp, arrival) and released, oldest first, into the rings once W has
 * passed them, as many of a source's as it says the rings have room for
 * (dt_source_room()): every ring is then filled in time order, and
 * dt_ring_merge() keeps a read, and the next, in order across CPUs.
 *
 * Most events come in order (one busy tracee's drain, one CPU's perf
 * buffer), so the held ones are in two places: the run, a FIFO of
 * events each no older than the one before it, taken from its head in
 * O(1); and a heap for the others.  The oldest held event is the older
 * of the run's head and the heap's top.  Sifting a heap of thousands on
 * every release was a tenth of dtd's time under a flat-out tracee.
 *
 * Whoever pushes or marks releases, under dt_seq_mtx: no thread of our
 * own on the event path.  The wakeup thread releases what D frees when
 * no source marks (dt_seq_tick()).  An event that comes older than what
 * was released already is late: it goes at once and is counted.
 *
 * Lock order: [K] before [s] before a ring's lock and dt_wakeup_mtx.
 * Rings' locks are taken among themselves in index order only, by a
 * read that holds them all at once (dt_ring_merge()); a put holds one.
 * synchronize_rcu() is never called under [s] (a producer waits for [s]
 * inside its read-side section).
 *
 * Locks used to protect the globals in this file:
 *	[s]	dt_seq_mtx
 *	[a]	atomic operations
 *	[I]	set before any event flows (tests only)
 *	[t]	the thread's own (_Thread_local)
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_clock.h"
#include "dt_ring.h"
#include "dt_seq_var.h"

/* A source of events that come late (dt_prov.h). */
struct dt_source {
	struct dt_source	*dsrc_next;	/* [s] all sources */
	char			 dsrc_name[16];	/* [I] */
	uint64_t		 dsrc_mark;	/* [s] promise, ns */
	bool			 dsrc_active;	/* [s] */
	uint64_t		 dsrc_late;	/* [s] its late events */
	unsigned int		 dsrc_held;	/* [s] its events held now */
	unsigned int		 dsrc_room;	/* [s] dt_source_room(): of its
						   events, how many more may go;
						   UINT_MAX: no bound */
	bool			 dsrc_patient;	/* [s] dt_source_patient() */
};

static pthread_mutex_t	 dt_seq_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_source	*dt_seq_sources;	/* [s] */
static unsigned int	 dt_seq_nactive;	/* [s] active sources */
static uint64_t		 dt_seq_minmark;	/* [s] oldest active mark */
static uint64_t		 dt_seq_minstuck;	/* [s] of the not patient */
static uint64_t		 dt_seq_minpatient;	/* [s] of the patient */
static uint64_t		 dt_seq_last;		/* [s] newest released */
static uint64_t		 dt_seq_arrivals;	/* [s] */
struct dt_seq_stats	 dt_seq_counters;	/* [s] */
/* [a] When time frees the oldest held event, UINT64_MAX: none. */
static _Atomic uint64_t	 dt_seq_due = UINT64_MAX;
/* [a] A release pass is wanted (a source went idle). */
static _Atomic int	 dt_seq_pending;
static uint64_t		 dt_seq_delay = DT_SEQ_DELAY_NS;	/* [I] */
static uint64_t		 dt_seq_pdelay = DT_SEQ_PATIENT_NS;	/* [I] */
static uint64_t		(*dt_seq_clock)(void);		/* [I] */

static uint64_t
dt_seq_realtime(void)
{
	return dt_clock_ns(CLOCK_REALTIME);
}

static uint64_t
dt_seq_now(void)
{
	return dt_seq_clock != NULL ? dt_seq_clock() : dt_seq_realtime();
}

static uint64_t
dt_seq_key(const struct dt_evt *ev)
{
	if (ev->dtev_tsp.tv_sec < 0)
		return 0;
	return (uint64_t)ev->dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

/* Recompute the oldest active marks, all, not patient, patient.  [s] */
static void
dt_seq_minmark_update(void)
{
	struct dt_source *s;
	uint64_t stuck = UINT64_MAX, patient = UINT64_MAX;

	for (s = dt_seq_sources; s != NULL; s = s->dsrc_next) {
		if (!s->dsrc_active)
			continue;
		if (s->dsrc_patient) {
			if (s->dsrc_mark < patient)
				patient = s->dsrc_mark;
		} else if (s->dsrc_mark < stuck)
			stuck = s->dsrc_mark;
	}
	dt_seq_minstuck = stuck;
	dt_seq_minpatient = patient;
	dt_seq_minmark = stuck < patient ? stuck : patient;
}

/* mark, but never older than now - delay (now 0: not applied). */
static uint64_t
dt_seq_bounded(uint64_t mark, uint64_t now, uint64_t delay)
{
	if (mark != UINT64_MAX && now > delay && now - delay > mark)
		return now - delay;
	return mark;
}

/*
 * The watermark: everything stamped at or before it may go.  With no
 * active source nothing holds anything back.  now == 0: the caller did
 * not read the clock, so D is not applied.  [s]
 */
static uint64_t
dt_seq_w(uint64_t now)
{
	uint64_t ws, wp;

	if (dt_seq_nactive == 0)
		return UINT64_MAX;
	/*
	 * A patient source's mark is old because a slow lossless reader
	 * holds its records back, and they come oldest first: D would let
	 * younger events out before them.  But it is the word of a drain
	 * that trusts its tracees' stamps, and a reader may be slow for
	 * ever: its own, longer bound, and none for the others' marks.
	 */
	ws = dt_seq_bounded(dt_seq_minstuck, now, dt_seq_delay);
	wp = dt_seq_bounded(dt_seq_minpatient, now, dt_seq_pdelay);
	return ws < wp ? ws : wp;
}

/*
 * This thread is in a batch of pushes (dt_seq_batch_begin()); it holds
 * [s] and a hold on the readers' wakeups from the batch's first push to
 * its end (a batch that pushes nothing, all of it folded or nobody's,
 * takes neither); and whether a push left events held where none were
 * (the wakeup thread is kicked at the batch's end, after the unlock).
 */
static _Thread_local bool dt_seq_batch_tls;	/* [t] */
static _Thread_local bool dt_seq_batch_locked;	/* [t] */
static _Thread_local bool dt_seq_batch_kick;	/* [t] */

/* Set by this thread around a late delivery: see dt_seq_putting_late(). */
static _Thread_local bool dt_seq_late_tls;

bool
dt_seq_putting_late(void)
{
	return dt_seq_late_tls;
}

/*
 * Put one event (with its deep user stack u, or NULL: the plain put)
 * where it goes.  A held one under [s]; a probe's from a thread
 * registered with RCU.
 */
static void
dt_seq_deliver(void *target, bool pcb, unsigned int cpu,
    const struct dt_evt *ev, const struct dt_deepstack *u)
{
	/* The stop path keeps a held pcb alive (dt_seq_detach()). */
	if (pcb)
		dt_pcb_ring_put_deep(target, cpu, ev, NULL, u);
	else
		dt_probe_emit_deep(target, cpu, ev, u);
}

/*
 * Whether one more of src's events may go into the rings now
 * (dt_source_room()); if so, it is counted.  [s]
 */
static bool
dt_seq_spend(struct dt_source *src)
{
	if (src == NULL || src->dsrc_room == UINT_MAX)
		return true;
	if (src->dsrc_room == 0)
		return false;
	src->dsrc_room--;
	return true;
}

/* A held slot leaves the store: its source holds one event less.  [s] */
static void
dt_seq_unheld(struct dt_seq_slot *ss)
{
	if (ss->dss_src != NULL)
		ss->dss_src->dsrc_held--;
	ss->dss_src = NULL;
}

/*
 * When time alone frees the oldest held event, for the wakeup thread:
 * once each mark behind it has its bound (D, or the patient's) behind it
 * too.  Never earlier, or the wakeup thread would spin on a tick that
 * frees nothing.  [s]
 */
static void
dt_seq_due_update(void)
{
	const struct dt_seq_ent *e;
	struct dt_source *src;
	uint64_t ns, due = 0;

	if (dt_seq_n == 0) {
		atomic_store_explicit(&dt_seq_due, UINT64_MAX,
		    memory_order_relaxed);
		return;
	}
	e = dt_seq_oldest();
	/* Its source's next dt_source_room() lets it go, not time. */
	src = dt_seq_slots[e->dse_slot].dss_src;
	if (src != NULL && src->dsrc_room == 0) {
		atomic_store_explicit(&dt_seq_due, UINT64_MAX,
		    memory_order_relaxed);
		return;
	}
	ns = e->dse_ns;
	if (dt_seq_minstuck < ns)
		due = ns + dt_seq_delay;
	if (dt_seq_minpatient < ns && ns + dt_seq_pdelay > due)
		due = ns + dt_seq_pdelay;
	if (due == 0)
		due = ns + dt_seq_delay;
	atomic_store_explicit(&dt_seq_due, due, memory_order_relaxed);
}

/*
 * Release, oldest first, every held event stamped at or before w, but
 * none from the first whose source lets no more go (dt_source_room())
 * on, unless force.  The parked reads are served after the last put,
 * not after the first: a release is a source's pass, hundreds of
 * events, and a reader woken at its first put read a few of them, came
 * back for the rest, and spent a FUSE round trip and two context
 * switches on every few events.  [s]
 */
static void
dt_seq_release(uint64_t w, bool force)
{
	const struct dt_seq_ent *e;
	struct dt_seq_slot *ss;
	uint64_t ns;

	if ((e = dt_seq_oldest()) == NULL || e->dse_ns > w) {
		dt_seq_due_update();
		return;
	}
	dt_wakeup_hold();
	/*
	 * Oldest first, most into one CPU's ring: each put keeps its ring's
	 * lock for the next (dt_ring_batch_begin()).  Nothing here waits
	 * for a reader.
	 */
	dt_ring_batch_begin();
	while ((e = dt_seq_oldest()) != NULL && e->dse_ns <= w) {
		if (!dt_seq_spend(dt_seq_slots[e->dse_slot].dss_src) &&
		    !force)
			break;
		ns = e->dse_ns;
		if (ns > dt_seq_minmark)
			dt_seq_counters.dss_forced++;
		ss = &dt_seq_slots[dt_seq_pop()];
		dt_seq_unheld(ss);
		if (ns > dt_seq_last)
			dt_seq_last = ns;
		dt_seq_deliver(ss->dss_target, ss->dss_pcb, ss->dss_cpu,
		    &ss->dss_ev, ss->dss_deep);
		/* tested here: most events have none, and this is per event */
		if (ss->dss_deep != NULL)
			dt_seq_deep_free(ss);
	}
	dt_ring_batch_end();
	dt_wakeup_release();
	dt_seq_due_update();
}

/*
 * A held copy of ev for target's probe: what a put or a fold may read of
 * it (dt_evt_copy(), dt_agg_put(), a filter), that is all but the stack
 * frames past each st_count, and the kernel stack's whole area when the
 * probe carries strings there (DTEVT_STRINGS).  Most events have no
 * stack: a third of the record, not the whole of it read and written
 * per event.  [s]
 */
static void
dt_seq_evt_hold(struct dt_evt *dst, const struct dt_evt *src,
    const struct dt_probe *dtp)
{
	unsigned int nk, nu;

	memcpy(dst, src, offsetof(struct dt_evt, dtev_kstack.st_pc));
	if (dtp->dtp_strings)
		nk = STACKTRACE_MAX;
	else
		nk = src->dtev_kstack.st_count < STACKTRACE_MAX ?
		    src->dtev_kstack.st_count : STACKTRACE_MAX;
	memcpy(dst->dtev_kstack.st_pc, src->dtev_kstack.st_pc,
	    nk * sizeof(src->dtev_kstack.st_pc[0]));
	nu = src->dtev_ustack.st_count < STACKTRACE_MAX ?
	    src->dtev_ustack.st_count : STACKTRACE_MAX;
	dst->dtev_ustack.st_count = src->dtev_ustack.st_count;
	memcpy(dst->dtev_ustack.st_pc, src->dtev_ustack.st_pc,
	    nu * sizeof(src->dtev_ustack.st_pc[0]));
	memcpy(dst->dtev_comm, src->dtev_comm,
	    sizeof(*dst) - offsetof(struct dt_evt, dtev_comm));
}

/* The common push: hold ev for target or let it through.  Any thread. */
static void
dt_seq_push(struct dt_source *src, void *target, bool pcb, unsigned int cpu,
    const struct dt_evt *ev, const struct dt_deepstack *u)
{
	struct dt_seq_slot *ss;
	struct dt_seq_ent e;
	uint64_t ns = dt_seq_key(ev), w;
	uint32_t slot;
	bool kick, batch = dt_seq_batch_tls;

	/*
	 * --openbsd-strict: an event is in its CPU's ring as soon as it
	 * happened, as on OpenBSD, and a reader takes the rings CPU by CPU
	 * anyway: nothing to hold.
	 */
	if (dt_strict) {
		dt_seq_deliver(target, pcb, cpu, ev, u);
		return;
	}
	if (!batch)
		pthread_mutex_lock(&dt_seq_mtx);
	else if (!dt_seq_batch_locked) {
		pthread_mutex_lock(&dt_seq_mtx);
		/*
		 * An event let straight through wakes its reader at its put:
		 * a batch of them woke it at the first, and it read one
		 * event a round trip.  Held to the batch's end.
		 */
		dt_wakeup_hold();
		dt_seq_batch_locked = true;
	}
	dt_seq_counters.dss_events++;
	if (ns < dt_seq_last) {
		/* Older than what a reader may have: as soon as we can. */
		dt_seq_counters.dss_late++;
		if (src != NULL)
			src->dsrc_late++;
		dt_seq_late_tls = true;
		/* Counted, but held it would only come later still. */
		(void)dt_seq_spend(src);
		dt_seq_deliver(target, pcb, cpu, ev, u);
		dt_seq_late_tls = false;
		if (!batch)
			pthread_mutex_unlock(&dt_seq_mtx);
		return;
	}
	/*
	 * The marks alone: no clock read per event (D is applied by the
	 * marks and the wakeup thread's ticks, which read it anyway).
	 */
	w = dt_seq_w(0);
	if (dt_seq_n == 0 && ns <= w && dt_seq_spend(src)) {
		/* In order, nothing before it: straight through. */
		dt_seq_last = ns;
		dt_seq_deliver(target, pcb, cpu, ev, u);
		if (!batch)
			pthread_mutex_unlock(&dt_seq_mtx);
		return;
	}
	if (dt_seq_n == dt_seq_cap && !dt_seq_grow()) {
		/* Full: the oldest goes whatever W says. */
		dt_seq_counters.dss_overflow++;
		if (dt_seq_n == 0) {
			/* No store at all (the memory cap): ev goes now. */
			if (ns > dt_seq_last)
				dt_seq_last = ns;
			dt_seq_deliver(target, pcb, cpu, ev, u);
			if (!batch)
				pthread_mutex_unlock(&dt_seq_mtx);
			return;
		}
		dt_seq_release(dt_seq_oldest()->dse_ns, true);
	}
	kick = dt_seq_n == 0;
	slot = dt_seq_freeslots[dt_seq_cap - dt_seq_n - 1];
	ss = &dt_seq_slots[slot];
	dt_seq_evt_hold(&ss->dss_ev, ev, pcb ?
	    ((struct dt_pcb *)target)->dp_dtp : target);
	ss->dss_deep = u != NULL ? dt_seq_deep_dup(u) : NULL;
	ss->dss_target = target;
	ss->dss_pcb = pcb;
	ss->dss_cpu = cpu;
	ss->dss_src = src;
	if (src != NULL)
		src->dsrc_held++;
	e.dse_ns = ns;
	e.dse_seq = dt_seq_arrivals++;
	e.dse_slot = slot;
	dt_seq_hold(&e);
	if (dt_seq_n > dt_seq_counters.dss_maxheld)
		dt_seq_counters.dss_maxheld = dt_seq_n;
	dt_seq_release(w, false);
	kick = kick && dt_seq_n > 0;
	if (batch) {
		dt_seq_batch_kick |= kick;
		return;
	}
	pthread_mutex_unlock(&dt_seq_mtx);
	/* The wakeup thread now waits with a deadline: D frees ev. */
	if (kick)
		dt_wakeup_kick();
}

void
dt_seq_batch_begin(void)
{
	/* --openbsd-strict: pushes take no lock, nothing to hold. */
	if (dt_strict)
		return;
	/* The lock at the first push: the emit work before it goes free. */
	dt_seq_batch_tls = true;
	dt_seq_batch_locked = false;
	dt_seq_batch_kick = false;
}

void
dt_seq_batch_end(void)
{
	bool kick = dt_seq_batch_kick;

	if (!dt_seq_batch_tls)
		return;
	dt_seq_batch_tls = false;
	dt_seq_batch_kick = false;
	if (!dt_seq_batch_locked)
		return;
	dt_seq_batch_locked = false;
	pthread_mutex_unlock(&dt_seq_mtx);
	/* Every event of the batch is in: one wakeup for them all. */
	dt_wakeup_release();
	/* The wakeup thread now waits with a deadline: D frees them. */
	if (kick)
		dt_wakeup_kick();
}

void
dt_seq_emit_deep(struct dt_source *src, struct dt_probe *dtp,
    unsigned int cpu, const struct dt_evt *ev, const struct dt_deepstack *u)
{
	/* Nobody records it: nothing to order (the usual idle probe). */
	if (atomic_load_explicit(&dtp->dtp_recording,
	    memory_order_relaxed) == 0)
		return;
	/*
	 * Only aggregations at the source (dt_agg.c) record it: a sum
	 * has no order, so nothing to hold.  A ring pcb counts itself before it
	 * is linked; one linked in the instant after this look may get
	 * this event ahead of older ones still held.  An event whose comm
	 * a filter cannot judge may become a record (dt_pcb_folds()):
	 * that one is ordered.
	 */
	if (atomic_load_explicit(&dtp->dtp_ringpcbs, memory_order_acquire)
	    == 0 && dt_probe_folds(dtp, ev)) {
		dt_seq_deliver(dtp, false, cpu, ev, u);
		return;
	}
	/* Every open's filter rejects it: counted, and nothing to order. */
	if (!dt_probe_wanted(dtp, cpu, ev))
		return;
	dt_seq_push(src, dtp, false, cpu, ev, u);
}

void
dt_seq_emit(struct dt_source *src, struct dt_probe *dtp, unsigned int cpu,
    const struct dt_evt *ev)
{
	dt_seq_emit_deep(src, dtp, cpu, ev, NULL);
}

void
dt_seq_put(struct dt_source *src, struct dt_pcb *dp, unsigned int cpu,
    const struct dt_evt *ev)
{
	/* folded, not put into a ring: nothing to order */
	if (dt_pcb_folds(dp, ev)) {
		dt_pcb_ring_put(dp, cpu, ev);
		return;
	}
	if (!dt_pcb_wanted(dp, cpu, ev))
		return;
	dt_seq_push(src, dp, true, cpu, ev, NULL);
}

struct dt_source *
dt_source_add(const char *name)
{
	struct dt_source *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	dt_strncpy0(s->dsrc_name, name, sizeof(s->dsrc_name));
	s->dsrc_room = UINT_MAX;
	pthread_mutex_lock(&dt_seq_mtx);
	s->dsrc_next = dt_seq_sources;
	dt_seq_sources = s;
	pthread_mutex_unlock(&dt_seq_mtx);
	return s;
}

/* Set src's mark, active; whether W may have moved forward.  [s] */
static bool
dt_source_set(struct dt_source *src, uint64_t ns)
{
	uint64_t old = dt_seq_w(0);

	if (!src->dsrc_active) {
		src->dsrc_active = true;
		dt_seq_nactive++;
	}
	src->dsrc_mark = ns;
	dt_seq_minmark_update();
	return dt_seq_w(0) > old || dt_seq_n > 0;
}

void
dt_source_mark(struct dt_source *src, uint64_t ns)
{
	pthread_mutex_lock(&dt_seq_mtx);
	if (dt_source_set(src, ns))
		dt_seq_release(dt_seq_w(dt_seq_now()), false);
	pthread_mutex_unlock(&dt_seq_mtx);
}

void
dt_source_room(struct dt_source *src, unsigned int n)
{
	pthread_mutex_lock(&dt_seq_mtx);
	src->dsrc_room = n;
	if (n > 0 && dt_seq_n > 0)
		dt_seq_release(dt_seq_w(dt_seq_now()), false);
	else
		dt_seq_due_update();
	pthread_mutex_unlock(&dt_seq_mtx);
}

void
dt_source_begin(struct dt_source *src, uint64_t ns)
{
	bool moved;

	pthread_mutex_lock(&dt_seq_mtx);
	moved = dt_source_set(src, ns);
	pthread_mutex_unlock(&dt_seq_mtx);
	if (moved) {
		atomic_store(&dt_seq_pending, 1);
		dt_wakeup_kick();
	}
}

void
dt_source_wake(struct dt_source *src, uint64_t ns)
{
	pthread_mutex_lock(&dt_seq_mtx);
	/* an active source's mark is already no later than its events */
	if (!src->dsrc_active)
		(void)dt_source_set(src, ns);
	pthread_mutex_unlock(&dt_seq_mtx);
}

void
dt_source_idle(struct dt_source *src)
{
	bool was;

	pthread_mutex_lock(&dt_seq_mtx);
	was = src->dsrc_active;
	if (was) {
		src->dsrc_active = false;
		dt_seq_nactive--;
		dt_seq_minmark_update();
		dt_seq_due_update();
	}
	pthread_mutex_unlock(&dt_seq_mtx);
	/* W moved forward: the wakeup thread releases (it is RCU's). */
	if (was) {
		atomic_store(&dt_seq_pending, 1);
		dt_wakeup_kick();
	}
}

void
dt_source_patient(struct dt_source *src, bool on)
{
	bool freed;

	pthread_mutex_lock(&dt_seq_mtx);
	freed = src->dsrc_patient && !on && src->dsrc_active;
	src->dsrc_patient = on;
	dt_seq_minmark_update();
	dt_seq_due_update();
	pthread_mutex_unlock(&dt_seq_mtx);
	/* D applies to its mark again: the wakeup thread releases. */
	if (freed) {
		atomic_store(&dt_seq_pending, 1);
		dt_wakeup_kick();
	}
}

uint64_t
dt_seq_wait_ns(void)
{
	uint64_t due, now;

	if (atomic_load(&dt_seq_pending))
		return 0;
	due = atomic_load_explicit(&dt_seq_due, memory_order_relaxed);
	if (due == UINT64_MAX)
		return UINT64_MAX;
	now = dt_seq_now();
	return due > now ? due - now : 0;
}

void
dt_seq_tick(void)
{
	atomic_store(&dt_seq_pending, 0);
	pthread_mutex_lock(&dt_seq_mtx);
	dt_seq_release(dt_seq_w(dt_seq_now()), false);
	dt_seq_shrink();
	pthread_mutex_unlock(&dt_seq_mtx);
}

/* Is i's event sc's?  Its pcb, or when for a probe, sc's pcb of it. */
static struct dt_pcb *
dt_seq_of(struct dt_softc *sc, const struct dt_seq_slot *ss)
{
	struct dt_pcb *dp;

	if (ss->dss_pcb) {
		dp = ss->dss_target;
		return dp->dp_sc == sc ? dp : NULL;
	}
	for (dp = sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		if (dp->dp_dtp == ss->dss_target)
			return dp;
	return NULL;
}

/* A held event into one pcb's rings, with its deep stack.  [s] */
static void
dt_seq_put_held(struct dt_pcb *dp, const struct dt_seq_slot *ss)
{
	dt_seq_deliver(dp, true, ss->dss_cpu, &ss->dss_ev, ss->dss_deep);
}

static int
dt_seq_cmp(const void *a, const void *b)
{
	return dt_seq_less(a, b) ? -1 : dt_seq_less(b, a) ? 1 : 0;
}

/* Is ss's event held for one of sc's pcbs?  [s] */
static bool
dt_seq_mine(const struct dt_softc *sc, const struct dt_seq_slot *ss)
{
	return ss->dss_pcb && ((struct dt_pcb *)ss->dss_target)->dp_sc == sc;
}

/*
 * Put into sc's rings, in order, what is held for it: its pcbs' events
 * leave the run and the heap, a probe's stay for its other opens
 * (probes_too: only before sc's pcbs are unlinked; later they would not
 * reach sc anyway).  [s]
 */
static void
dt_seq_flush_locked(struct dt_softc *sc, bool probes_too)
{
	const struct dt_seq_ent *e;
	struct dt_seq_ent *mine;
	struct dt_seq_slot *ss;
	struct dt_pcb *dp;
	uint32_t i, j, n = 0, k = 0;

	if (dt_seq_n == 0)
		return;
	/*
	 * Sorted: the heap's array is not in order, nor the run against
	 * it.  Without the memory to sort, heap then run (each one's first
	 * is its oldest).  The caller may be any thread, so no
	 * dt_probe_emit() (RCU) here: sc's pcb is alive under [K],
	 * unlinked or not.
	 */
	mine = calloc(dt_seq_n, sizeof(*mine));
	for (i = 0; i < dt_seq_n; i++) {
		e = i < dt_seq_hn ? &dt_seq_heap[i] :
		    dt_seq_runent(i - dt_seq_hn);
		ss = &dt_seq_slots[e->dse_slot];
		if (!ss->dss_pcb && !probes_too)
			continue;
		if ((dp = dt_seq_of(sc, ss)) == NULL)
			continue;
		if (mine != NULL)
			mine[n++] = *e;
		else {
			dt_seq_put_held(dp, ss);
			dt_seq_counters.dss_flushed++;
		}
	}
	if (mine != NULL)
		qsort(mine, n, sizeof(*mine), dt_seq_cmp);
	for (i = 0; i < n; i++) {
		ss = &dt_seq_slots[mine[i].dse_slot];
		dp = dt_seq_of(sc, ss);
		dt_seq_put_held(dp, ss);
		dt_seq_counters.dss_flushed++;
	}
	/*
	 * Drop the pcbs' events from the heap, restoring its order, and
	 * from the run, keeping its order.
	 */
	for (i = 0, j = 0; i < dt_seq_hn; i++) {
		ss = &dt_seq_slots[dt_seq_heap[i].dse_slot];
		if (dt_seq_mine(sc, ss)) {
			dt_seq_deep_free(ss);
			dt_seq_unheld(ss);
			dt_seq_freeslots[dt_seq_cap - dt_seq_n + k++] =
			    dt_seq_heap[i].dse_slot;
		} else
			dt_seq_heap[j++] = dt_seq_heap[i];
	}
	dt_seq_hn = j;
	for (i = dt_seq_hn / 2; i-- > 0;)
		dt_seq_sift_down(i);
	for (i = 0, j = 0; i < dt_seq_rn; i++) {
		e = dt_seq_runent(i);
		ss = &dt_seq_slots[e->dse_slot];
		if (dt_seq_mine(sc, ss)) {
			dt_seq_deep_free(ss);
			dt_seq_unheld(ss);
			dt_seq_freeslots[dt_seq_cap - dt_seq_n + k++] =
			    e->dse_slot;
		} else
			*dt_seq_runent(j++) = *e;
	}
	dt_seq_rn = j;
	if (dt_seq_rn == 0)
		dt_seq_rhead = 0;
	dt_seq_n = dt_seq_hn + dt_seq_rn;
	free(mine);
	dt_seq_due_update();
}

void
dt_seq_detach(struct dt_softc *sc, void (*unlink)(struct dt_softc *))
{
	pthread_mutex_lock(&dt_seq_mtx);
	dt_seq_flush_locked(sc, true);
	/* Under [s]: no release can reach sc between the flush and this. */
	unlink(sc);
	pthread_mutex_unlock(&dt_seq_mtx);
}

void
dt_seq_flush(struct dt_softc *sc)
{
	pthread_mutex_lock(&dt_seq_mtx);
	dt_seq_flush_locked(sc, false);
	pthread_mutex_unlock(&dt_seq_mtx);
}

void
dt_seq_stats(struct dt_seq_stats *st)
{
	pthread_mutex_lock(&dt_seq_mtx);
	*st = dt_seq_counters;
	st->dss_held = dt_seq_n;
	st->dss_active = dt_seq_nactive;
	pthread_mutex_unlock(&dt_seq_mtx);
}

unsigned int
dt_source_held(struct dt_source *src)
{
	unsigned int n;

	pthread_mutex_lock(&dt_seq_mtx);
	n = src->dsrc_held;
	pthread_mutex_unlock(&dt_seq_mtx);
	return n;
}

unsigned int
dt_source_held_oldest(struct dt_source *src, uint64_t *oldest)
{
	const struct dt_seq_ent *e;
	unsigned int n;

	pthread_mutex_lock(&dt_seq_mtx);
	n = src->dsrc_held;
	*oldest = (e = dt_seq_oldest()) != NULL ? e->dse_ns : UINT64_MAX;
	pthread_mutex_unlock(&dt_seq_mtx);
	return n;
}

uint64_t
dt_seq_done_ns(void)
{
	const struct dt_seq_ent *e;
	uint64_t done;

	pthread_mutex_lock(&dt_seq_mtx);
	done = dt_seq_nactive == 0 ? dt_seq_now() : dt_seq_minmark;
	/*
	 * Not past an event still held: an idle source's last pass (an
	 * exited tracee's final drain) may leave its events here, for the
	 * room or the bound, while nothing marks any more.
	 */
	if ((e = dt_seq_oldest()) != NULL && e->dse_ns <= done)
		done = e->dse_ns > 0 ? e->dse_ns - 1 : 0;
	pthread_mutex_unlock(&dt_seq_mtx);
	return done;
}

void
dt_seq_clock_set(uint64_t (*now)(void), uint64_t delay)
{
	dt_seq_clock = now;
	dt_seq_delay = delay != 0 ? delay : DT_SEQ_DELAY_NS;
	/* The patient's bound as many D's as the real one. */
	dt_seq_pdelay = DT_SEQ_PATIENT_NS / DT_SEQ_DELAY_NS * dt_seq_delay;
}

void
dt_seq_fini(void)
{
	struct dt_source *s;
	uint32_t i;

	pthread_mutex_lock(&dt_seq_mtx);
	/*
	 * Every open is closed: what is still held (a probe's events that
	 * no pcb records any more) has no reader, and goes.
	 */
	for (i = 0; i < dt_seq_n; i++)
		dt_seq_deep_free(&dt_seq_slots[i < dt_seq_hn ?
		    dt_seq_heap[i].dse_slot :
		    dt_seq_runent(i - dt_seq_hn)->dse_slot]);
	dt_seq_n = dt_seq_hn = dt_seq_rn = dt_seq_rhead = 0;
	if (dt_seq_counters.dss_late > 0 || dt_seq_counters.dss_overflow > 0) {
		fprintf(stderr, "dtd: order: %llu of %llu events came late "
		    "(after younger ones were released), %llu released early "
		    "for want of room, %llu after waiting %llu ms for a "
		    "silent source:", (unsigned long long)dt_seq_counters.
		    dss_late, (unsigned long long)dt_seq_counters.dss_events,
		    (unsigned long long)dt_seq_counters.dss_overflow,
		    (unsigned long long)dt_seq_counters.dss_forced,
		    (unsigned long long)(dt_seq_delay / 1000000));
		for (s = dt_seq_sources; s != NULL; s = s->dsrc_next)
			fprintf(stderr, " %s %llu late", s->dsrc_name,
			    (unsigned long long)s->dsrc_late);
		fprintf(stderr, "\n");
	}
	if (dt_seq_counters.dss_deepcut > 0)
		fprintf(stderr, "dtd: order: %llu held events lost their user "
		    "stack's frames past %d for want of memory\n",
		    (unsigned long long)dt_seq_counters.dss_deepcut,
		    STACKTRACE_MAX);
	/* A next dt_dev_init() (tests) starts counting afresh. */
	memset(&dt_seq_counters, 0, sizeof(dt_seq_counters));
	for (s = dt_seq_sources; s != NULL; s = s->dsrc_next) {
		s->dsrc_late = 0;
		s->dsrc_held = 0;
		s->dsrc_room = UINT_MAX;
	}
	dt_seq_store_free();
	dt_seq_last = 0;
	pthread_mutex_unlock(&dt_seq_mtx);
}
