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
 * Ingestion of traced processes' events (design decision 6).
 *
 * An accept thread serves the ingest socket (its loop, which never waits
 * on one client, in dt_ingest_accept.c) and hands each whole hello to a
 * worker of its user (dt_ingest_dispatch()): for every traced process
 * that connects that creates a ring and an enable table (sealed memfds),
 * records the peer's pid from SO_PEERCRED and a pidfd, and hands both
 * memfds over with SCM_RIGHTS, the table read-only.  A drain thread polls
 * every ring, validates each record (the ring is the tracee's memory:
 * every byte is untrusted, bad records are counted and dropped, never
 * followed), expands it into a dt_evt with the pid dtd knows, and emits
 * it to every open that records the probe (those two steps in
 * dt_ingest_rec.c).  A process that exited, or
 * that exec'd and connected again, is drained one last time and freed.
 *
 * At start a new dtd adopts the tables of processes whose previous dtd
 * died (dt_ingest_adopt.c), so that each reconnects on its next hooked
 * call; in a thread of its own, while the device is already served.
 *
 * Tracees may stamp records with the time stamp counter, which
 * dt_ingest_tsc.c turns into CLOCK_REALTIME.
 *
 * When the profile provider's timer fallback registered its sink, the
 * same rings carry profile samples (UDT_PROBE_PROFILE), validated as
 * strictly and handed to it, and the tables carry the sampling period,
 * which dt_ingest_ptimer_set() writes and announces with a futex wake.
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_ingest_begin() before the threads exist,
 *		or for a proc before it is linked on dti_procs
 *	[L]	dti_lock
 *	[D]	the drain thread only (it alone unlinks and frees procs)
 *	[W]	dti_idle_lock
 *	[a]	atomic operations
 */
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_ring.h"
#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_pidmaps.h"

struct dt_probe	*(*dti_probe)(unsigned int);
void	(*dti_sample_put)(unsigned int, const struct dt_evt *, uint64_t,
	    uint64_t);
void	(*dti_sample_lost)(uint64_t, bool);
void	(*dti_attach[DT_INGEST_MAXSINKS])(pid_t);
unsigned int	dti_nattach;
void	(*dti_exit[DT_INGEST_MAXSINKS])(pid_t, uint64_t);
unsigned int	dti_nexit;

#define DTI_IDLE_MIN	20000		/* ns: first idle sleep */
#define DTI_IDLE_MAX	1000000		/* ns: longest idle sleep */
#define DTI_IDLE_OFF	100000000	/* ns: the same, nothing enabled */
#define DTI_REAP_NSEC	10000000ULL	/* look for exited tracees */


static pthread_mutex_t	 dti_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dti_proc	*dti_procs;		/* [L], head read [a] */
static uint8_t		 dti_enab[DT_SYS_NPROBES];	/* [L] master */
static uint32_t		 dti_lossless;	/* [L] master of tb_lossless */
static uint64_t		 dti_prof_nsecs;	/* [L] master, timer mode */
static atomic_uint	 dti_nenab;		/* [L] writes, [a] reads:
						   probes enabled, + 1 for
						   timer-mode profiling */

/*
 * The drain thread's sleep, cut short by dti_kick(): when a tracee
 * attaches or a probe is enabled, polling starts again at once.
 */
static pthread_mutex_t	 dti_idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 dti_idle_cv = PTHREAD_COND_INITIALIZER;
static atomic_uint	 dti_kicks;		/* [W] writes, [a] reads */

static int		 dti_listen = -1;	/* [I] */
static int		 dti_wake[2] = { -1, -1 };	/* [I] stop pipe */
static atomic_int	 dti_stop;		/* [a] */
struct dt_source	*dti_seq;		/* [I] */
static pthread_t	 dti_accept_thr, dti_drain_thr;	/* [I] */
static int		 dti_running;		/* [I] */
static char		 dti_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static unsigned int	 dti_uid_max;		/* [I] tracees of one user */
static bool		 dti_eager;		/* [I] UDT_W_EAGER */

struct dti_stats	 dti_stats;

/* The drain thread sees everything stored before (dt_ingest_var.h). */
void
dti_kick(void)
{
	pthread_mutex_lock(&dti_idle_lock);
	atomic_fetch_add(&dti_kicks, 1);
	pthread_cond_broadcast(&dti_idle_cv);
	pthread_mutex_unlock(&dti_idle_lock);
}

/* One source of events turned on or off.  Under [L]. */
static void
dti_nenab_adj(bool was, bool is)
{
	if (is && !was)
		atomic_fetch_add(&dti_nenab, 1);
	else if (was && !is)
		atomic_fetch_sub(&dti_nenab, 1);
}

atomic_uint		 dti_ncounting;
atomic_int		 dti_count_ended;

void
dt_ingest_enable(unsigned int p, uint8_t en)
{
	struct dti_proc *dp;

	if (p >= DT_SYS_NPROBES)
		return;
	pthread_mutex_lock(&dti_lock);
	if (!(dti_enab[p] & UDT_EN_COUNT) && (en & UDT_EN_COUNT))
		atomic_fetch_add(&dti_ncounting, 1);
	else if ((dti_enab[p] & UDT_EN_COUNT) && !(en & UDT_EN_COUNT) &&
	    atomic_fetch_sub(&dti_ncounting, 1) == 1)
		atomic_store(&dti_count_ended, 1);
	dti_nenab_adj(dti_enab[p] != 0, en != 0);
	dti_enab[p] = en;
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		__atomic_store_n(&dp->dp_tab->tb_enab[p], en,
		    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dti_lock);
	if (en != 0)
		dti_kick();
}

void
dti_tabs_apply(void (*fn)(struct udt_tab *, void *), void *arg)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	fn(NULL, arg);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		fn(dp->dp_tab, arg);
	pthread_mutex_unlock(&dti_lock);
}

void
dti_procs_apply(void (*fn)(struct dti_proc *, void *), void *arg)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		fn(dp, arg);
	pthread_mutex_unlock(&dti_lock);
}

void
dt_ingest_lossless(bool on)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	dti_lossless = on;
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		__atomic_store_n(&dp->dp_tab->tb_lossless, dti_lossless,
		    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dti_lock);
}

void
dt_ingest_tab_announce(struct udt_tab *tab)
{
	__atomic_add_fetch(&tab->tb_prof_gen, 1, __ATOMIC_RELEASE);
	(void)syscall(SYS_futex, &tab->tb_prof_gen, FUTEX_WAKE, INT_MAX,
	    NULL, NULL, 0);
}

/*
 * Period first, then the announcement.  Under [L] (or at the end, when
 * no other thread runs), so two changes never interleave.
 */
static void
dti_prof_store(struct udt_tab *tab, uint64_t nsecs)
{
	__atomic_store_n(&tab->tb_prof_nsecs, nsecs, __ATOMIC_RELAXED);
	dt_ingest_tab_announce(tab);
}

void
dt_ingest_sink_probes(struct dt_probe *(*probe)(unsigned int))
{
	dti_probe = probe;
}

void
dt_ingest_sink_samples(void (*put)(unsigned int, const struct dt_evt *,
    uint64_t, uint64_t), void (*lost)(uint64_t, bool))
{
	dti_sample_put = put;
	dti_sample_lost = lost;
}

/*
 * A sink registered again (the device core initialised once more, as
 * its tests do) is there once.  More than DT_INGEST_MAXSINKS is a
 * programming error of dtd's own providers, caught at its start, never
 * a tracee's doing.
 */
void
dt_ingest_sink_attach(void (*attach)(pid_t))
{
	unsigned int i;

	for (i = 0; i < dti_nattach; i++)
		if (dti_attach[i] == attach)
			return;
	if (dti_nattach == DT_INGEST_MAXSINKS)
		abort();
	dti_attach[dti_nattach++] = attach;
}

void
dt_ingest_sink_eager(void)
{
	dti_eager = true;
}

void
dt_ingest_sink_exit(void (*leave)(pid_t, uint64_t))
{
	unsigned int i;

	for (i = 0; i < dti_nexit; i++)
		if (dti_exit[i] == leave)
			return;
	if (dti_nexit == DT_INGEST_MAXSINKS)
		abort();
	dti_exit[dti_nexit++] = leave;
}

const char *
dt_ingest_sockpath(void)
{
	return dti_path;
}

void
dt_ingest_ptimer_set(uint64_t nsecs)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	dti_nenab_adj(dti_prof_nsecs != 0, nsecs != 0);
	dti_prof_nsecs = nsecs;
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		dti_prof_store(dp->dp_tab, nsecs);
	pthread_mutex_unlock(&dti_lock);
	if (nsecs != 0)
		dti_kick();
}

/* --- the drain side -------------------------------------------------- */

static struct udt_rec	 dti_batch[DTI_BATCH];	/* [D] copied, not emitted */
static struct udt_rec_str dti_bstr[DTI_BATCH];	/* [D] their strings */
static uint8_t		 dti_bhas[DTI_BATCH];	/* [D] dti_bstr[i] is there */
static struct dti_deep	 dti_bdeep;		/* [D] their deep frames */

/*
 * Give slots back to the producers, and wake those that wait for them in
 * lossless mode (rh_wait, udt_wire.h): the tail first, then the flag,
 * both sequentially consistent, as the producers store the flag before
 * they look at the tail.  The drain thread.
 */
static void
dti_tail_publish(struct udt_ring_hdr *rh, uint64_t tail)
{
	__atomic_store_n(&rh->rh_tail, tail, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rh->rh_wait, __ATOMIC_SEQ_CST) != 0 &&
	    __atomic_exchange_n(&rh->rh_wait, 0, __ATOMIC_SEQ_CST) != 0)
		(void)syscall(SYS_futex, &rh->rh_tail, FUTEX_WAKE, INT_MAX,
		    NULL, NULL, 0);
}

/*
 * Consume what is committed in dp's ring.  Returns records consumed.
 * final: the process has exited or exec'd, so no slot will ever be
 * committed again: skip the uncommitted ones at once instead of after
 * UDT_STUCK_NSEC, or everything committed behind one of them is lost.
 */
static unsigned int
dti_drain(struct dti_proc *dp, int final)
{
	struct udt_ring_hdr *rh = dp->dp_ring;
	const char *slots = (const char *)rh + UDT_RING_HDRSIZE;
	uint64_t mask = dp->dp_nslots - 1, head, seq, now;
	unsigned int n = 0, nb = 0, published = 0;

	/*
	 * A batch waiting for the look at its image: the ring waits with it
	 * (its tracee's own cost), the other rings do not.
	 */
	if (!dti_held_settle(dp, final))
		return 0;
	/*
	 * At most one ring's worth per call: a tracee that keeps committing
	 * (or forges ur_seq ahead of us) must not hold the drain thread on
	 * its ring forever while every other ring and dti_stop wait.
	 */
	while (n <= mask) {
		const struct udt_rec *s = (const void *)(slots +
		    (dp->dp_tail & mask) * UDT_SLOT_SIZE);

		seq = __atomic_load_n(&s->ur_seq, __ATOMIC_ACQUIRE);
		if (seq == ((dp->dp_tail + 1) | UDT_SEQ_VOID)) {
			/* Given up by its producer: no record in it. */
			atomic_fetch_add(&dti_stats.garbage, 1);
			dp->dp_stuck = 0;
			dp->dp_tail++;
			n++;
			continue;
		}
		if (seq != dp->dp_tail + 1) {
			/*
			 * Not committed yet, or never will be: a producer
			 * that died or left a signal handler between reserve
			 * and commit.  After UDT_STUCK_NSEC without progress,
			 * if later tickets were handed out, skip the slot.
			 * rh_head is only read then: it is the producers'
			 * hot line, reading it on every pass would bounce it.
			 */
			now = dt_clock_ns(CLOCK_MONOTONIC);
			if (!final && (dp->dp_stuck == 0 ||
			    now - dp->dp_stuck < UDT_STUCK_NSEC)) {
				if (dp->dp_stuck == 0)
					dp->dp_stuck = now;
				break;
			}
			head = __atomic_load_n(&rh->rh_head, __ATOMIC_RELAXED);
			if (head == dp->dp_tail ||
			    head - dp->dp_tail > mask + 1) {
				dp->dp_stuck = now;
				break;
			}
			atomic_fetch_add(&dti_stats.garbage, 1);
			dp->dp_stuck = 0;
			dp->dp_tail++;
			n++;
			/* Its event is lost: a reader's dropevt says so. */
			dti_abandoned(dp, s);
			continue;
		}
		dp->dp_stuck = 0;
		/*
		 * The lines the record uses, not the whole slot: those the
		 * producer left alone then stay out of this CPU's cache, and
		 * its next lap need not fetch them back.
		 */
		memcpy(&dti_batch[nb], s, UDT_REC_HEAD);
		if (dti_batch[nb].ur_flags & UDT_R_STACK)
			memcpy(dti_batch[nb].ur_stack, s->ur_stack,
			    sizeof(s->ur_stack));
		dp->dp_tail++;
		if (dt_ingest_valid(&dti_batch[nb])) {
			dti_bhas[nb] = 0;
			if (dti_batch[nb].ur_flags & UDT_R_STR) {
				/*
				 * Its strings are the next ticket's slot,
				 * committed before the record: there now, or
				 * never (a forger, or a producer interrupted in
				 * between), and then the slot is left to the
				 * checks above as any other (so is the one
				 * after a record that is not valid).
				 */
				const struct udt_rec_str *rs = (const void *)
				    (slots + (dp->dp_tail & mask) *
				    UDT_SLOT_SIZE);

				if (__atomic_load_n(&rs->us_seq,
				    __ATOMIC_ACQUIRE) == dp->dp_tail + 1) {
					memcpy(&dti_bstr[nb], rs,
					    sizeof(dti_bstr[nb]));
					if (dti_bstr[nb].us_flags ==
					    UDT_R_STRDATA &&
					    dti_bstr[nb].us_probe ==
					    dti_batch[nb].ur_probe) {
						dti_bhas[nb] = 1;
						dp->dp_tail++;
						n++;
					}
				}
			}
			/*
			 * A deep user stack's frames, in the slots after
			 * (udt_wire.h): taken whole, or the record keeps its
			 * first UDT_STACK_MAX and the slots go to the checks.
			 */
			n += dti_deep_take(slots, mask, &dp->dp_tail,
			    &dti_batch[nb], &dti_bdeep, nb);
			nb++;
		} else if (!dti_deep_pad(&dti_batch[nb]))
			atomic_fetch_add(&dti_stats.garbage, 1);
		/*
		 * A record with strings or a deep stack took more slots: nb
		 * and the deep frames' room bound the batch.  n moves by
		 * more than one then, so the slots since the last publish,
		 * not a multiple of DTI_BATCH, say when the tail goes out.
		 */
		if (++n - published >= DTI_BATCH || nb == DTI_BATCH ||
		    !DTI_DEEP_ROOM(&dti_bdeep)) {
			dti_flush(dp, dti_batch, dti_bstr, dti_bhas, &dti_bdeep,
			    nb, final);
			nb = 0;
			dti_bdeep.dd_used = 0;
			dti_tail_publish(rh, dp->dp_tail);
			published = n;
			if (dp->dp_held != NULL)
				return n;
		}
	}
	dti_flush(dp, dti_batch, dti_bstr, dti_bhas, &dti_bdeep, nb, final);
	dti_bdeep.dd_used = 0;
	if (n > 0)
		dti_tail_publish(rh, dp->dp_tail);
	return n;
}

static void
dti_free(struct dti_proc *dp)
{
	munmap(dp->dp_ring, UDT_RING_SIZE(dp->dp_nslots));
	munmap(dp->dp_tab, UDT_TAB_SIZE);
	dti_sagg_free(dp);
	if (dp->dp_pidfd >= 0)
		close(dp->dp_pidfd);
	dti_held_free(dp->dp_held);
	/* A look still running keeps the memory's descriptor till it ends. */
	if (dp->dp_chk != NULL)
		dti_chk_put(dp->dp_chk);
	else if (dp->dp_memfd >= 0)
		close(dp->dp_memfd);
	dt_pm_track_fini(&dp->dp_maps);
	free(dp);
}

/*
 * A table dtd no longer keeps current.  A fork child of its image still
 * reads its enable bytes until it has something to record and attaches
 * (udt_fork_child() in the preload library): every byte on, so that the
 * child's next call attaches and reads a live table from then on, as a
 * restarted dtd's adoption does.  Nothing else maps it any more: its
 * image exited or exec'd.
 */
static void
dti_orphan(struct udt_tab *tab)
{
	__atomic_store_n(&tab->tb_reconnect, 1, __ATOMIC_RELEASE);
	memset(tab->tb_enab, UDT_EN_ON, sizeof(tab->tb_enab));
}

/* Mark procs whose process has exited; their rings get a last drain. */
static void
dti_reap(void)
{
	struct dti_proc *dp;
	struct pollfd pfd;

	for (dp = __atomic_load_n(&dti_procs, __ATOMIC_ACQUIRE); dp != NULL;
	    dp = dp->dp_next) {
		if (dp->dp_dead)
			continue;
		pfd.fd = dp->dp_pidfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 1)
			dp->dp_dead = 1;
	}
}

/* Unlink and free procs that are dead or retired, already drained. */
static void
dti_unlink_gone(void)
{
	struct dti_proc **dpp, *dp, *gone = NULL;
	uint64_t now;
	unsigned int i;

	pthread_mutex_lock(&dti_lock);
	for (dpp = &dti_procs; (dp = *dpp) != NULL;) {
		if (dp->dp_dead || atomic_load(&dp->dp_retired)) {
			*dpp = dp->dp_next;
			dp->dp_next = gone;
			gone = dp;
			atomic_fetch_sub(&dti_stats.procs, 1);
		} else
			dpp = &dp->dp_next;
	}
	pthread_mutex_unlock(&dti_lock);
	if (gone != NULL && dti_nexit > 0) {
		/*
		 * Read after the pidfd said it ended (or after its ring was
		 * retired): no record of the process is later than now.
		 */
		now = dt_clock_ns(CLOCK_REALTIME);
		for (dp = gone; dp != NULL; dp = dp->dp_next)
			for (i = 0; i < dti_nexit; i++)
				dti_exit[i](dp->dp_pid, now);
	}
	while ((dp = gone) != NULL) {
		gone = dp->dp_next;
		/* Whatever was committed before it exited or exec'd. */
		dti_drain(dp, 1);
		dti_counters(dp);
		dti_orphan(dp->dp_tab);
		dti_free(dp);
	}
}

/*
 * Sleep for up to ns (0: until kicked), unless a kick came since the
 * pass that began when dti_kicks read gen.  The drain thread.
 */
static void
dti_idle(unsigned int gen, uint64_t ns)
{
	struct timespec ts;

	pthread_mutex_lock(&dti_idle_lock);
	if (ns == 0) {
		while (atomic_load(&dti_kicks) == gen)
			pthread_cond_wait(&dti_idle_cv, &dti_idle_lock);
	} else {
		ts = dt_clock_ts(dt_clock_ns(CLOCK_MONOTONIC) + ns);
		while (atomic_load(&dti_kicks) == gen &&
		    pthread_cond_clockwait(&dti_idle_cv, &dti_idle_lock,
		    CLOCK_MONOTONIC, &ts) == 0)
			continue;
	}
	pthread_mutex_unlock(&dti_idle_lock);
}

/*
 * The drain's promise to the sequencer (dt_prov.h), at a pass's end: a
 * record committed after the pass looked at its ring comes in a later
 * pass, and was stamped when the pass began or later, less the slack
 * between a hook's stamp and its commit (DTI_SEQ_SLACK_NS); rt is held
 * earlier while an exec's loader records may still come
 * (dti_exec_look()).  With no tracee or nothing enabled the drain holds
 * nothing back: its polls back off to 100 ms then, which would delay
 * every other source by D.  The drain thread.
 */
/*
 * A hook commits its record microseconds after it stamps it; 200 us
 * covers that but for a writer preempted in between (its record comes
 * late, counted).  Less than DT_SEQ_SLACK_NS: with syscalls alone the
 * slack is most of a record's wait, and btrace -c ends at its command's
 * exit, reading no record that is still held then.
 */
#define DTI_SEQ_SLACK_NS	200000ULL

static void
dti_seq_mark(const struct dti_proc *procs, uint64_t rt)
{
	if (dti_seq == NULL)
		return;
	if (procs == NULL || atomic_load(&dti_nenab) == 0)
		dt_source_idle(dti_seq);
	else
		dt_source_mark(dti_seq, rt - DTI_SEQ_SLACK_NS);
}

/*
 * Lossless backpressure: whether this pass leaves the tracees' rings
 * alone because a lossless open's device ring is half full or more
 * (dt_ring_pressed()): their threads then wait, bounded, for room, and
 * the reader's ring does not drop what they would have waited for.  As
 * long as some reader reads, however slowly (dt_ring_reads() moves):
 * the traced program then goes at the reader's pace, as under strace.
 * After DTI_HOLD_NSEC without a read, one pass through: so a reader
 * that does not read (stopped, or gone) costs the other opens (and the
 * lossy ones) a few ms of delay, never their events, and the drain
 * goes on (the reader's ring counts the drops).  Exited processes are
 * drained whatever this says (dti_unlink_gone()).  The drain thread.
 */
/*
 * Well within the tracees' bound: a pass through comes long before they
 * give up on a reader that stopped reading; the device ring, half empty
 * when the hold began, takes the pass's records (one ring's worth a
 * tracee at most).
 */
#define DTI_HOLD_NSEC	(40 * 1000 * 1000ULL)
_Static_assert(DTI_HOLD_NSEC * 4 <= UDT_WAIT_NSEC, "hold within the bound");
/*
 * While it holds, the ingest source's mark stays where it was: the
 * sequencer holds every other source's younger events as long, but no
 * longer than its bound D, after which it lets them go and the held
 * records would come late.
 */
_Static_assert(DTI_HOLD_NSEC < DT_SEQ_DELAY_NS, "hold within D");

static uint64_t	dti_hold_since;		/* the drain thread; 0: not holding */
static uint64_t	dti_hold_reads;		/* the drain thread: dt_ring_reads() */

static bool
dti_hold(uint64_t now)
{
	uint64_t reads;

	if (__atomic_load_n(&dti_lossless, __ATOMIC_RELAXED) == 0 ||
	    dt_ring_pressed() == 0) {
		dti_hold_since = 0;
		return false;
	}
	/* A read since the last look: the window starts again. */
	reads = dt_ring_reads();
	if (dti_hold_since == 0 || reads != dti_hold_reads) {
		dti_hold_since = now;
		dti_hold_reads = reads;
	}
	if (now - dti_hold_since < DTI_HOLD_NSEC)
		return true;
	/* One pass through, then hold again. */
	dti_hold_since = now;
	return false;
}

static void *
dti_drain_main(void *arg)
{
	struct dti_proc *dp, *procs;
	uint64_t idle = DTI_IDLE_MIN, lastreap = 0, now, rt, xrt, x;
	unsigned int n, gen;
	int gone;
	bool hold;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&dti_stop)) {
		n = 0;
		gone = 0;
		gen = atomic_load(&dti_kicks);
		rt = dt_clock_ns(CLOCK_REALTIME);
		now = dt_clock_ns(CLOCK_MONOTONIC);
		dti_pass++;
		dt_tsc_ref();
		if (now - lastreap >= DTI_REAP_NSEC) {
			dti_reap();
			lastreap = now;
		}
		procs = __atomic_load_n(&dti_procs, __ATOMIC_ACQUIRE);
		hold = dti_hold(now);
		xrt = rt;
		for (dp = procs; dp != NULL; dp = dp->dp_next) {
			/* Before the drain: see dti_exec_look(). */
			if ((x = dti_exec_look(dp, rt, now)) < xrt)
				xrt = x;
			if (!hold)
				n += dti_drain(dp, 0);
			dti_counters(dp);
			if (dp->dp_dead || atomic_load(&dp->dp_retired))
				gone = 1;
		}
		/* A dead proc's ring was drained above, after it died. */
		if (gone)
			dti_unlink_gone();
		/*
		 * Not while holding: the records left in the rings are older
		 * than rt, and a mark past them would let younger events of
		 * other sources out first.
		 */
		if (!hold)
			dti_seq_mark(procs, xrt);
		if (n > 0) {
			idle = DTI_IDLE_MIN;
			continue;
		}
		/* Held back: the reader frees room within microseconds. */
		if (hold) {
			dti_idle(gen, DTI_IDLE_MIN);
			idle = DTI_IDLE_MIN;
			continue;
		}
		/*
		 * Tracees cannot wake us without a system call in their hot
		 * path, so poll, backing off while nothing comes.  With no
		 * tracee there is nothing to poll until one attaches; with
		 * nothing enabled only the odd record of a hook that read
		 * its enable byte just before a disable, and exits to reap.
		 */
		if (procs == NULL) {
			dti_idle(gen, 0);
			idle = DTI_IDLE_MIN;
			continue;
		}
		dti_idle(gen, idle);
		if (atomic_load(&dti_kicks) != gen)
			idle = DTI_IDLE_MIN;
		else if (idle < (atomic_load(&dti_nenab) != 0 ?
		    DTI_IDLE_MAX : DTI_IDLE_OFF))
			idle *= 2;
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * Adoption opens every process's /proc/PID/maps, and such an open waits
 * while that process is in the middle of an exec (which may itself wait,
 * on a stopped FUSE mount say) or its memory lock is held: seen for 20 s
 * under the test suite.  So it runs beside the device being served, never
 * before it (nor before SIGTERM is heard), in a thread of its own.
 * Detached: the waits are killable, so one still waiting when dtd exits
 * ends with it; it touches only the tables it maps and dti_stats.
 */
static void *
dti_adopt_main(void *arg)
{
	(void)arg;
	atomic_fetch_add(&dti_stats.adopted, dt_ingest_adopt(dti_path));
	return NULL;
}

/* --- the accept side ------------------------------------------------- */

/*
 * A sealed memfd of size bytes, mapped read-write in dtd.  The seals
 * keep a tracee holding the descriptor from shrinking it under dtd's
 * mapping (which would turn dtd's next access into SIGBUS).  mode is the
 * inode's (root's): a memfd is born 0777, and anyone holding a
 * descriptor, even a read-only one, may open it again through
 * /proc/self/fd/N with what the mode allows.
 */
static int
dti_memfd(const char *name, size_t size, mode_t mode, void **mapp)
{
	void *p;
	int fd;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
	    != 0)
		goto fail;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	*mapp = p;
	return fd;
fail:
	close(fd);
	return -1;
}

void
dt_ingest_refused(const struct ucred *cr, const char *why)
{
	uint64_t n;

	n = atomic_fetch_add(&dti_stats.refused, 1) + 1;
	/* Every one counts; a flood must not flood the log too. */
	if (n <= 16 || (n & (n - 1)) == 0)
		fprintf(stderr, "dtd: ingest: closed pid %d (uid %u) before "
		    "its hello: %s (%llu so far)\n", (int)cr->pid,
		    (unsigned)cr->uid, why, (unsigned long long)n);
}

static void
dti_send_stats(int fd)
{
	struct udt_stats st;

	memset(&st, 0, sizeof(st));
	st.us_magic = UDT_MAGIC;
	st.us_procs = atomic_load(&dti_stats.procs);
	st.us_attached = atomic_load(&dti_stats.attached);
	st.us_records = atomic_load(&dti_stats.records);
	st.us_garbage = atomic_load(&dti_stats.garbage);
	st.us_lost = atomic_load(&dti_stats.lost);
	st.us_recur = atomic_load(&dti_stats.recur);
	st.us_adopted = atomic_load(&dti_stats.adopted);
	st.us_refused = atomic_load(&dti_stats.refused);
	st.us_forged = atomic_load(&dti_stats.forged);
	st.us_misnamed = atomic_load(&dti_stats.misnamed);
	st.us_maps_bytes = dt_pm_bytes();
	st.us_maps_evicted = dt_pm_evicted();
	(void)send(fd, &st, sizeof(st), MSG_NOSIGNAL);
}

static void
dti_send_error(int fd, int error)
{
	struct udt_welcome w;

	memset(&w, 0, sizeof(w));
	w.uw_magic = UDT_MAGIC;
	w.uw_version = UDT_VERSION;
	w.uw_error = (uint32_t)error;
	(void)send(fd, &w, sizeof(w), MSG_NOSIGNAL);
}

static int
dti_send_fds(int fd, const struct udt_welcome *w, int fd0, int fd1)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct iovec iov = { (void *)w, sizeof(*w) };
	struct msghdr msg;
	struct cmsghdr *c;
	int fds[2] = { fd0, fd1 };

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*w) ? 0 : -1;
}

size_t
dt_ingest_tracees(pid_t *pids, size_t max)
{
	struct dti_proc *dp;
	size_t n = 0;

	pthread_mutex_lock(&dti_lock);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		if (!dp->dp_dead && !atomic_load(&dp->dp_retired)) {
			if (n < max)
				pids[n] = dp->dp_pid;
			n++;
		}
	pthread_mutex_unlock(&dti_lock);
	return n;
}

/*
 * Does cr's user already have as many tracees attached as one user may?
 * Each holds a descriptor in dtd (its pidfd) and a ring: without a cap,
 * one user's thousand processes take the descriptors every other user's
 * tracees need.  Root's are not capped.  Refusals are counted and
 * logged.  The serve worker of cr's user, which serves that user's
 * hellos one at a time, so the count holds; takes [L].
 */
static bool
dti_uid_full(const struct ucred *cr)
{
	struct dti_proc *dp;
	unsigned int n = 0;
	char why[96];

	if (cr->uid == 0)
		return false;
	pthread_mutex_lock(&dti_lock);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		if (dp->dp_uid == cr->uid && !dp->dp_dead &&
		    !atomic_load(&dp->dp_retired))
			n++;
	pthread_mutex_unlock(&dti_lock);
	if (n < dti_uid_max)
		return false;
	snprintf(why, sizeof(why), "its user has %u tracees attached, the "
	    "most one user may", n);
	dt_ingest_refused(cr, why);
	return true;
}

void
dt_ingest_serve(int fd, const struct ucred *crp, int peerfd,
    const struct udt_hello *hp, const struct udt_maps_req *rq)
{
	struct timeval tv = { 1, 0 };
	struct udt_welcome w;
	struct dti_proc *dp = NULL, *op;
	void *ring = NULL, *tab = NULL;
	int ringfd = -1, tabfd = -1, rofd = -1, pidfd = -1, mapsfd = -1;
	bool xdrain;
	unsigned int i;
	uint32_t nslots = UDT_NSLOTS_DEFAULT;
	char path[64];

	/* Our answers go out at once, unless a peer does not read them. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/*
	 * Every answer but a ring's leaves here through fail_pidfd: the
	 * pidfd accept took is ours to close, whatever flags the peer
	 * set, or a flood of answered hellos eats dtd's descriptors.
	 */
	if (hp->uh_version != UDT_VERSION) {
		dti_send_error(fd, EPROTONOSUPPORT);
		goto fail_pidfd;
	}
	if (hp->uh_flags & UDT_HELLO_STATS) {
		dti_send_stats(fd);
		goto fail_pidfd;
	}
	if (hp->uh_flags & UDT_HELLO_MAPS) {
		dt_ingest_maps(fd, crp->uid, rq);
		goto fail_pidfd;
	}
	if (!(hp->uh_flags & UDT_HELLO_TRACEE) ||
	    hp->uh_nprobes != DT_SYS_NPROBES) {
		/* A preload library from another build: other systab. */
		dti_send_error(fd, EPROTO);
		goto fail_pidfd;
	}

	if (dti_uid_full(crp)) {
		dti_send_error(fd, EUSERS);
		goto fail_pidfd;
	}
	pidfd = peerfd != -1 ? peerfd :
	    (int)syscall(SYS_pidfd_open, crp->pid, 0);
	peerfd = -1;
	if (pidfd < 0)
		return;		/* gone already */
	/*
	 * The image that connected must be the one we hand the ring to: a
	 * process that exec'd a set-id program since (a helper it forked
	 * keeping the socket) would have its records stamped with that
	 * program's pid.
	 */
	if (!dt_ingest_image_ok(crp->pid, crp->uid, false)) {
		dt_ingest_refused(crp, "it exec'd a set-id program after "
		    "connecting");
		dti_send_error(fd, EPERM);
		close(pidfd);
		return;
	}
	if ((dp = calloc(1, sizeof(*dp))) == NULL)
		goto fail;
	dp->dp_memfd = -1;
	/*
	 * The ring is the tracee's to write.  The table is dtd's word to
	 * the tracee: 0400, so a tracee that is not root can neither open
	 * its read-only descriptor again for writing nor map it writable.
	 * No write seal: F_SEAL_FUTURE_WRITE would also stop the next dtd,
	 * after a restart, from mapping the table to set tb_reconnect
	 * (dt_ingest_adopt.c), and root, who alone passes the mode, can
	 * write any process's memory anyway.
	 */
	ringfd = dti_memfd(UDT_RING_MEMFD, UDT_RING_SIZE(nslots), 0600,
	    &ring);
	tabfd = dti_memfd(UDT_TAB_MEMFD, UDT_TAB_SIZE, 0400, &tab);
	if (ringfd < 0 || tabfd < 0)
		goto fail;
	/* The tracee gets the table through a read-only descriptor. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", tabfd);
	if ((rofd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto fail;

	dp->dp_pid = crp->pid;
	dp->dp_uid = crp->uid;
	dp->dp_pidfd = pidfd;
	/* Its image's memory, which an exec ends (dti_image_same()). */
	if (crp->uid != 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)crp->pid);
		dp->dp_memfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	dti_budget_init(dp);
	/* Unguessable: only the image's own memory may echo it. */
	if (dp->dp_memfd >= 0) {
		/* Its map, of the same image: where it maps the ring. */
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)crp->pid);
		mapsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (getrandom(&dp->dp_proof, sizeof(dp->dp_proof), 0) !=
		    (ssize_t)sizeof(dp->dp_proof))
			goto fail;
	}
	if (dp->dp_memfd >= 0 &&
	    (dp->dp_chk = dti_chk_new(dp, mapsfd, ringfd)) == NULL)
		goto fail;
	mapsfd = -1;
	dp->dp_ring = ring;
	dp->dp_nslots = nslots;
	dp->dp_tab = tab;
	dp->dp_ring->rh_magic = UDT_MAGIC;
	dp->dp_ring->rh_nslots = nslots;
	dp->dp_ring->rh_nprobes = DT_SYS_NPROBES;
	dp->dp_ring->rh_proof = dp->dp_proof;
	dp->dp_tab->tb_magic = UDT_MAGIC;
	dp->dp_tab->tb_nprobes = DT_SYS_NPROBES;
	memcpy(dp->dp_tab->tb_sock, dti_path, sizeof(dp->dp_tab->tb_sock));
	/*
	 * Its mappings now, while it waits for the welcome: a process that
	 * exits right after must still resolve (design decision 9).  The
	 * one step of a handshake that waits on something else: a read of
	 * /proc/PID/maps (the tracee's mmap lock) and a stat per mapped
	 * file, but for those of mappings the cache already holds under
	 * this pid (an exec'd image re-attaching).  Others wait that long
	 * in the poll set.
	 */
	dt_pm_track_attach(&dp->dp_maps, dp->dp_pid, dp->dp_uid);
	dti_who_init(dp);

	/*
	 * Copy the enable bytes and join the list in one go, so no
	 * DTIOCRECORD between the two is missed.  An older image of the
	 * same process (it exec'd) is retired: drained once more, freed.
	 */
	/*
	 * Once listed, dp is the drain thread's, which frees it as soon as
	 * the process is seen gone (a tracee that gave up waiting): nothing
	 * below the unlock may touch it.
	 */
	xdrain = dp->dp_memfd >= 0;
	/*
	 * Before it is listed, so that the welcome comes after (the
	 * threads it starts after it was told are its own), and so that
	 * the drain, which may unlink it as soon as it is listed, tells
	 * its exit after its attach.
	 */
	for (i = 0; i < dti_nattach; i++)
		dti_attach[i](crp->pid);
	pthread_mutex_lock(&dti_lock);
	memcpy(dp->dp_tab->tb_enab, dti_enab, sizeof(dti_enab));
	dti_filt_copy(dp->dp_tab);
	dti_sagg_copy(dp->dp_tab);
	dp->dp_tab->tb_prof_nsecs = dti_prof_nsecs;
	dp->dp_tab->tb_lossless = dti_lossless;
	for (op = dti_procs; op != NULL; op = op->dp_next) {
		dti_exec_inherit(dp, op);
		if (op->dp_pid == dp->dp_pid)
			atomic_store(&op->dp_retired, 1);
	}
	dp->dp_next = dti_procs;
	__atomic_store_n(&dti_procs, dp, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dti_lock);
	dti_kick();
	atomic_fetch_add(&dti_stats.procs, 1);

	memset(&w, 0, sizeof(w));
	w.uw_magic = UDT_MAGIC;
	w.uw_version = UDT_VERSION;
	w.uw_nslots = nslots;
	w.uw_flags = (dt_tsc_ok() ? UDT_W_TSC : 0) |
	    (dti_sample_put != NULL ? UDT_W_PTIMER | UDT_W_EAGER : 0) |
	    (dti_eager ? UDT_W_EAGER : 0) |
	    (xdrain ? UDT_W_XDRAIN : 0);
	w.uw_ringsize = UDT_RING_SIZE(nslots);
	w.uw_tabsize = UDT_TAB_SIZE;
	w.uw_pid = crp->pid;
	/* On failure the proc stays listed until its pidfd says it exited. */
	if (dti_send_fds(fd, &w, ringfd, rofd) == 0)
		atomic_fetch_add(&dti_stats.attached, 1);
	close(ringfd);
	close(tabfd);
	close(rofd);
	return;
fail:
	/*
	 * Counted with the other refusals: a user's flood of hellos can hold
	 * enough of dtd's descriptors that a memfd fails here.
	 */
	dt_ingest_refused(crp, "dtd could not make its ring and table");
	dti_send_error(fd, ENOMEM);
	if (ring != NULL)
		munmap(ring, UDT_RING_SIZE(nslots));
	if (tab != NULL)
		munmap(tab, UDT_TAB_SIZE);
	if (ringfd >= 0)
		close(ringfd);
	if (tabfd >= 0)
		close(tabfd);
	if (rofd >= 0)
		close(rofd);
	if (mapsfd >= 0)
		close(mapsfd);
	if (pidfd >= 0)
		close(pidfd);
	if (dp != NULL && dp->dp_chk != NULL)
		dti_chk_put(dp->dp_chk);
	else if (dp != NULL && dp->dp_memfd >= 0)
		close(dp->dp_memfd);
	free(dp);
	return;
fail_pidfd:
	if (peerfd != -1)
		close(peerfd);
}

static struct dt_wq	*dti_serve_wq;		/* [I] */

struct dti_job {
	struct dt_work		 j_work;
	int			 j_fd;
	int			 j_pidfd;
	struct ucred		 j_cred;
	struct udt_hello	 j_hello;
	struct udt_maps_req	 j_req;
	uint64_t		 j_since;	/* ns, CLOCK_MONOTONIC */
};

static void
dti_serve_run(struct dt_work *wk, bool cancel)
{
	struct dti_job *j = (struct dti_job *)(void *)wk;

	if (!cancel && dt_clock_ns(CLOCK_MONOTONIC) - j->j_since >
	    DTI_SERVE_STALE_MS * 1000000ULL) {
		dt_ingest_refused(&j->j_cred, "it waited too long behind its "
		    "user's other hellos");
		cancel = true;
	}
	if (cancel) {
		if (j->j_pidfd != -1)
			close(j->j_pidfd);
	} else
		dt_ingest_serve(j->j_fd, &j->j_cred, j->j_pidfd, &j->j_hello,
		    &j->j_req);
	close(j->j_fd);
	free(j);
}

void
dt_ingest_dispatch(int fd, const struct ucred *cr, int pidfd,
    const struct udt_hello *h, const struct udt_maps_req *rq)
{
	struct dti_job *j;
	struct stat st;
	char path[32];
	uint32_t key = (uint32_t)cr->uid;
	int error = ENOMEM;

	/* A maps query waits on the process it names: its owner's worker. */
	if ((h->uh_flags & UDT_HELLO_MAPS) && rq->umr_pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d", (int)rq->umr_pid);
		if (stat(path, &st) == 0)
			key = (uint32_t)st.st_uid;
	}
	if ((j = calloc(1, sizeof(*j))) != NULL) {
		j->j_work.wk_fn = dti_serve_run;
		j->j_fd = fd;
		j->j_pidfd = pidfd;
		j->j_cred = *cr;
		j->j_hello = *h;
		j->j_since = dt_clock_ns(CLOCK_MONOTONIC);
		if (h->uh_flags & UDT_HELLO_MAPS)
			j->j_req = *rq;
		if ((error = dt_wq_submit(dti_serve_wq, key, &j->j_work)) == 0)
			return;
		free(j);
	}
	dt_ingest_refused(cr, error == EAGAIN ? "its user has too many hellos "
	    "being served" : "dtd cannot serve it now");
	if (pidfd != -1)
		close(pidfd);
	close(fd);
}

static void *
dti_accept_main(void *arg)
{
	(void)arg;
	dt_ingest_accept(dti_listen, dti_wake[0]);
	return NULL;
}

/* --- start and stop ------------------------------------------------- */

int
dt_ingest_begin(const char *path)
{
	struct sockaddr_un sun;
	struct rlimit rl;
	pthread_attr_t attr;
	pthread_t adopt;
	bool adopting = false;
	int error, fd;

	if (path == NULL || *path == '\0')
		path = UDT_SOCKET_DEFAULT;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "dtd: ingest socket path too long: %s\n", path);
		return ENAMETOOLONG;
	}
	snprintf(dti_path, sizeof(dti_path), "%s", path);
	/*
	 * A quarter of dtd's descriptors for one user's tracees, so three
	 * others can always attach too (dtd raised its soft limit to the
	 * hard one at start).  A tracee holds three until its ring is
	 * proven: its pidfd, its memory and its map.
	 */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 1024;
	dti_uid_max = rl.rlim_cur / 12 > 16 ?
	    (unsigned int)(rl.rlim_cur / 12) : 16;
	if ((error = dt_ingest_listen(path, &fd)) != 0)
		return error;
	dti_listen = fd;
	if (pipe2(dti_wake, O_CLOEXEC) != 0) {
		error = errno;
		goto fail;
	}
	atomic_store(&dti_stop, 0);
	if ((error = dti_look_begin()) != 0)
		goto fail;
	if (dti_serve_wq == NULL && (dti_serve_wq = dt_wq_new("dtd-serve",
	    DTI_SERVE_UID)) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	dt_tsc_calibrate();
	/* Once per dtd: sources are never freed. */
	if (dti_seq == NULL)
		dti_seq = dt_source_add("ingest");
	if ((error = pthread_create(&dti_drain_thr, NULL, dti_drain_main,
	    NULL)) != 0)
		goto fail;
	if ((error = pthread_create(&dti_accept_thr, NULL, dti_accept_main,
	    NULL)) != 0) {
		atomic_store(&dti_stop, 1);
		dti_kick();
		pthread_join(dti_drain_thr, NULL);
		goto fail;
	}
	dti_running = 1;
	if (pthread_attr_init(&attr) == 0) {
		adopting = pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED) == 0 && pthread_create(&adopt,
		    &attr, dti_adopt_main, NULL) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!adopting)
		(void)dti_adopt_main(NULL);
	return 0;
fail:
	close(dti_listen);
	dti_listen = -1;
	dt_ingest_unlisten();
	return error;
}

void
dt_ingest_end(void)
{
	struct dti_proc *dp;

	if (!dti_running)
		return;
	atomic_store(&dti_stop, 1);
	dti_kick();
	(void)write(dti_wake[1], "x", 1);
	pthread_join(dti_accept_thr, NULL);
	/*
	 * A serve still waiting on its tracee (killably) may link a proc
	 * after the list below is freed: it is only leaked, dtd is ending.
	 */
	if (dt_wq_stop(dti_serve_wq, 1000) != 0)
		fprintf(stderr, "dtd: ingest: a hello is still waiting on its "
		    "process; leaving it\n");
	dt_wq_free(dti_serve_wq);
	dti_serve_wq = NULL;
	pthread_join(dti_drain_thr, NULL);
	/* No more drains: the drain holds nothing back. */
	if (dti_seq != NULL)
		dt_source_idle(dti_seq);
	dti_look_end();
	close(dti_listen);
	close(dti_wake[0]);
	close(dti_wake[1]);
	dt_ingest_unlisten();
	pthread_mutex_lock(&dti_lock);
	while ((dp = dti_procs) != NULL) {
		dti_procs = dp->dp_next;
		/* Nobody drains this ring any more: stop its samplers. */
		if (dti_sample_put != NULL)
			dti_prof_store(dp->dp_tab, 0);
		dti_free(dp);
	}
	pthread_mutex_unlock(&dti_lock);
	dt_pm_clear();
	dti_running = 0;
}
