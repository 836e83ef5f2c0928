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
 * The drain thread, apart from the handshake and the controls of
 * dt_ingest.c because it is the one hot loop of the ingest path, and
 * everything in it is the drain thread's own ([D]): it polls every ring,
 * copies committed records out in batches for dt_ingest_rec.c to check
 * and emit, gives the slots back, holds the rings back while a lossless
 * reader is behind, tells the sequencer how far it got, and alone
 * unlinks and frees the procs of processes that exited or exec'd.  How
 * far a pass may go while a lossless reader is behind, and the mark, are
 * dt_ingest_hold.c's.  The lock annotations are dt_ingest.c's.
 */
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_ingest_budget.h"
#include "dt_ingest_var.h"
#include "dt_untrace.h"
#include "dt_pidmaps.h"

#define DTI_IDLE_MIN	20000		/* ns: first idle sleep */
#define DTI_IDLE_MAX	1000000		/* ns: longest idle sleep */
#define DTI_IDLE_OFF	100000000	/* ns: the same, nothing enabled */
#define DTI_PASS_NS	200000		/* ns: least time from a pass that
					   took records to the next */
#define DTI_REAP_NSEC	10000000ULL	/* look for exited tracees */

/*
 * The drain thread's sleep, cut short by dti_kick(): when a tracee
 * attaches or a probe is enabled, polling starts again at once.
 *
 * With nothing enabled it also ends when a tracee exits: the drain
 * sleeps in an epoll set that holds an eventfd, which dti_kick()
 * writes, and each tracee's pidfd (dti_wait_exit(), one-shot).  So it
 * needs no poll at all to see a tracee go, and a traced tree costs the
 * drain one wakeup a process, at its exit, instead of a back-off's few.
 * With something enabled the passes poll anyway, and an exit is only
 * noted for the reap that comes at their pace (DTI_REAP_NSEC).
 * Without the set (dt_ingest_begin() never ran: unit tests), the
 * condition variable alone, and exits are found by the periodic reap.
 */
static pthread_mutex_t	 dti_idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 dti_idle_cv = PTHREAD_COND_INITIALIZER;
static atomic_uint	 dti_kicks;		/* [W] writes but the drain's
					   own, [a] reads */
static int		 dti_epfd = -1;		/* [I] the drain's set */
static int		 dti_evfd = -1;		/* [I] kicks, in the set */
static atomic_bool	 dti_asleep;		/* [D] writes, [a] reads */
/* [D] writes, [a] reads: the set cannot be waited on (a sandbox that
   refuses ppoll): the condition variable from then on */
static atomic_bool	 dti_setbroken;
static bool		 dti_exitseen;		/* [D] a pidfd fired */

static void	dti_wait_end(void);

/* The epoll data of the eventfd; a pidfd's is DTI_EV_EXIT. */
#define DTI_EV_KICK	1
#define DTI_EV_EXIT	2

/*
 * The drain thread sees everything stored before (dt_ingest_var.h).
 * The eventfd is written only while the drain may sleep in the set: a
 * kick while it runs costs no system call.  Both sides are sequentially
 * consistent: the drain says it sleeps, then reads dti_kicks; a kicker
 * adds, then reads dti_asleep; one of them sees the other.
 */
void
dti_kick(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&dti_idle_lock);
	atomic_fetch_add(&dti_kicks, 1);
	pthread_cond_broadcast(&dti_idle_cv);
	pthread_mutex_unlock(&dti_idle_lock);
	if (dti_evfd >= 0 && atomic_load(&dti_asleep))
		(void)write(dti_evfd, &one, sizeof(one));
}

int
dti_wait_begin(void)
{
	struct epoll_event ev;
	int error;

	/*
	 * Once per dtd, as the source: a serve worker stuck past
	 * dt_ingest_end() may still add a pidfd or kick.
	 */
	if (dti_epfd >= 0)
		return 0;
	if ((dti_epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (dti_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = DTI_EV_KICK;
	if (epoll_ctl(dti_epfd, EPOLL_CTL_ADD, dti_evfd, &ev) != 0)
		goto fail;
	return 0;
fail:
	error = errno;
	dti_wait_end();
	return error;
}

/* Undo a dti_wait_begin() that failed half-way. */
static void
dti_wait_end(void)
{
	if (dti_evfd >= 0)
		close(dti_evfd);
	if (dti_epfd >= 0)
		close(dti_epfd);
	dti_evfd = dti_epfd = -1;
}

bool
dti_wait_exit(int pidfd)
{
	struct epoll_event ev;

	if (dti_epfd < 0 || pidfd < 0 || atomic_load(&dti_setbroken))
		return false;
	memset(&ev, 0, sizeof(ev));
	/* Once: a dead tracee's pidfd stays readable until it is freed. */
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = DTI_EV_EXIT;
	return epoll_ctl(dti_epfd, EPOLL_CTL_ADD, pidfd, &ev) == 0;
}

static struct udt_rec	 dti_batch[DTI_BATCH];	/* [D] copied, not emitted */
static struct udt_rec_str dti_bstr[DTI_BATCH];	/* [D] their strings */
static uint8_t		 dti_bhas[DTI_BATCH];	/* [D] dti_bstr[i] is there */
static struct dti_deep	 dti_bdeep;		/* [D] their deep frames */

/*
 * Give slots back to the producers, and wake those that wait for them in
 * lossless mode (rh_wait, udt_wire.h): the tail first, then the flag,
 * both sequentially consistent, as the producers store the flag before
 * they look at the tail.  Whether it woke any.  The drain thread.
 */
static bool
dti_tail_publish(struct udt_ring_hdr *rh, uint64_t tail)
{
	__atomic_store_n(&rh->rh_tail, tail, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rh->rh_wait, __ATOMIC_SEQ_CST) != 0 &&
	    __atomic_exchange_n(&rh->rh_wait, 0, __ATOMIC_SEQ_CST) != 0) {
		(void)syscall(SYS_futex, &rh->rh_tail, FUTEX_WAKE, INT_MAX,
		    NULL, NULL, 0);
		return true;
	}
	return false;
}

/* As dt_ingest_rec.c gives its event (dt_ingest_var.h). */
uint64_t
dti_rec_rt(const struct udt_rec *r)
{
	if (r->ur_flags & UDT_R_TSC)
		return (uint64_t)dt_tsc_realtime((uint64_t)r->ur_nsec);
	return (uint64_t)r->ur_sec * 1000000000ULL + (uint64_t)r->ur_nsec;
}

bool
dti_committed(const struct dti_proc *dp, uint64_t t, uint64_t *ns)
{
	const struct udt_rec *s = (const void *)((const char *)dp->dp_ring +
	    UDT_RING_HDRSIZE + (t & (dp->dp_nslots - 1)) * UDT_SLOT_SIZE);
	uint64_t seq = __atomic_load_n(&s->ur_seq, __ATOMIC_ACQUIRE);
	struct udt_rec r;

	if (ns == NULL)
		return seq == t + 1 || seq == ((t + 1) | UDT_SEQ_VOID);
	*ns = 0;
	if (seq != t + 1)
		return seq == ((t + 1) | UDT_SEQ_VOID);
	memcpy(&r, s, UDT_REC_HEAD);
	if (dt_ingest_valid(&r))
		*ns = dti_rec_rt(&r);
	return true;
}

/*
 * Consume what is committed in dp's ring.  Returns records consumed.
 * final: the process has exited or exec'd, so no slot will ever be
 * committed again: skip the uncommitted ones at once instead of after
 * UDT_STUCK_NSEC, or everything committed behind one of them is lost.
 * Not final, at most what dti_plan allows, and after the first record
 * none stamped after bound (UINT64_MAX: no bound; dp_cut: it stopped
 * there with committed records left); lossless, dp_lowrt, from what
 * the pass took of the ring so far (dp_pfirst, dp_pwoke).
 */
unsigned int
dti_drain(struct dti_proc *dp, int final, uint64_t bound)
{
	struct udt_ring_hdr *rh = dp->dp_ring;
	const char *slots = (const char *)rh + UDT_RING_HDRSIZE;
	uint64_t mask = dp->dp_nslots - 1, head, seq, now, ns;
	unsigned int n = 0, nb = 0, published = 0;
	unsigned int budget = final ? UINT_MAX : dti_plan_allow(&dti_plan);

	dp->dp_cut = false;
	if (!final)
		dp->dp_lowrt = 0;
	/*
	 * The ring's proof asked for as soon as the tracee says where it
	 * mapped it, not at its first batch: a short tracee that ended
	 * before that look answered (a slow or busy dtd) lost what was
	 * left in its ring, the proof impossible once its memory is gone.
	 * Not waited for here; its verdict is taken again by the batch's.
	 */
	if (!final && !dp->dp_proven && dp->dp_chk != NULL &&
	    dp->dp_held == NULL &&
	    __atomic_load_n(&rh->rh_self, __ATOMIC_ACQUIRE) != 0)
		(void)dti_image_look(dp, false);
	/*
	 * A batch waiting for the look at its image: the ring waits with it
	 * (its tracee's own cost); the other rings are drained, and their
	 * events wait in the sequencer behind it DTI_HELD_MARK_NS at most
	 * (dti_held_rt()).
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

		/*
		 * Each record is one event an open (a probe is enabled once
		 * an open), and takes a slot or more: n slots are at most n
		 * events into any one ring.
		 */
		if (n >= budget) {
			dp->dp_cut = dti_committed(dp, dp->dp_tail, NULL);
			break;
		}
		/*
		 * Another ring's oldest record is older than this one: the
		 * pass takes that first (dti_drain_oldest()).
		 */
		if (n > 0 && bound != UINT64_MAX &&
		    dti_committed(dp, dp->dp_tail, &ns) && ns > bound) {
			dp->dp_cut = true;
			break;
		}

		seq = __atomic_load_n(&s->ur_seq, __ATOMIC_ACQUIRE);
		if (seq == ((dp->dp_tail + 1) | UDT_SEQ_VOID)) {
			/* Given up by its producer: no record in it. */
			atomic_fetch_add(&dti_stats.gvoid, 1);
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
			 * if later tickets were handed out, skip the slot,
			 * unless the thread that claimed it still runs and
			 * the ring is not filling behind it (UDT_STUCK_MAX_NSEC
			 * at most, dti_claim_waits()).
			 * rh_head is only read then: it is the producers'
			 * hot line, reading it on every pass would bounce it.
			 */
			now = dt_clock_ns(CLOCK_MONOTONIC);
			if (!final && (dp->dp_stuck == 0 ||
			    now - dp->dp_stuck < UDT_STUCK_NSEC ||
			    dti_claim_cached(dp, now))) {
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
			/* Claimed by a thread that runs: its commit comes. */
			if (!final &&
			    seq == ((dp->dp_tail + 1) | UDT_SEQ_BUSY) &&
			    now - dp->dp_stuck < UDT_STUCK_MAX_NSEC &&
			    dti_claim_waits(dp, s, head, now))
				break;
			atomic_fetch_add(&dti_stats.gstuck, 1);
			if (seq == ((dp->dp_tail + 1) | UDT_SEQ_BUSY))
				atomic_fetch_add(&dti_stats.gclaimed, 1);
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
			if (dp->dp_pfirst == 0 && !final &&
			    __atomic_load_n(&dti_lossless, __ATOMIC_RELAXED))
				dp->dp_pfirst = dti_rec_rt(&dti_batch[nb]);
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
		} else if (!dti_deep_pad(&dti_batch[nb])) {
			atomic_fetch_add(&dti_stats.ginvalid, 1);
		}
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
			dp->dp_pwoke |= dti_tail_publish(rh, dp->dp_tail);
			published = n;
			if (dp->dp_held != NULL)
				goto out;
		}
	}
	dti_flush(dp, dti_batch, dti_bstr, dti_bhas, &dti_bdeep, nb, final);
	dti_bdeep.dd_used = 0;
	if (n > 0)
		dp->dp_pwoke |= dti_tail_publish(rh, dp->dp_tail);
out:
	if (final)
		return n;
	dti_plan_took(&dti_plan, n);
	if (__atomic_load_n(&dti_lossless, __ATOMIC_RELAXED))
		dti_low(dp, dp->dp_pfirst, dp->dp_pwoke);
	return n;
}

void
dti_free(struct dti_proc *dp)
{
	/* Nobody reads its header for a stack's cut any more. */
	if (dp->dp_untrace.ue_hdr != NULL)
		dt_untrace_untrack(&dp->dp_untrace);
	/* The table follows the ring in one span (dt_ingest_serve.c). */
	munmap(dp->dp_ring, dti_span(dp->dp_nslots));
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
	bool sagg;

	/*
	 * A stop's last merge of a slot walks the list: no slot may be
	 * given back between a proc leaving it and its own last merge.
	 */
	sagg = dti_sagg_enter();
	pthread_mutex_lock(&dti_lock);
	for (dpp = &dti_procs; (dp = *dpp) != NULL;) {
		/*
		 * A ring a lossless pass left records in is drained by the
		 * passes to come, within their budgets: the last drain here
		 * takes whatever it holds.
		 */
		if ((dp->dp_dead || atomic_load(&dp->dp_retired)) &&
		    !dp->dp_cut) {
			*dpp = dp->dp_next;
			dp->dp_next = gone;
			gone = dp;
			atomic_fetch_sub(&dti_stats.procs, 1);
		} else
			dpp = &dp->dp_next;
	}
	pthread_mutex_unlock(&dti_lock);
	if (sagg)
		dti_sagg_leave(gone);
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
		dti_drain(dp, 1, UINT64_MAX);
		dti_counters(dp);
		dti_sagg_gone(dp);
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
	struct epoll_event evs[8];
	struct pollfd pfd;
	struct timespec ts;
	uint64_t end, now, v;
	int i, n;

	if (dti_epfd >= 0 && !atomic_load(&dti_setbroken)) {
		end = ns == 0 ? 0 : dt_clock_ns(CLOCK_MONOTONIC) + ns;
		atomic_store(&dti_asleep, true);
		while (atomic_load(&dti_kicks) == gen) {
			if (end != 0) {
				if ((now = dt_clock_ns(CLOCK_MONOTONIC)) >= end)
					break;
				ts.tv_sec = (time_t)((end - now) / 1000000000);
				ts.tv_nsec = (long)((end - now) % 1000000000);
			}
			/*
			 * ppoll for the time to the nanosecond on every
			 * kernel (epoll_pwait2 is 5.11's), then the set's
			 * events without a wait.  Any error but a signal:
			 * the condition variable from now on, with exits
			 * found by the periodic reap (never a spin).
			 */
			pfd.fd = dti_epfd;
			pfd.events = POLLIN;
			if ((n = ppoll(&pfd, 1, end != 0 ? &ts : NULL,
			    NULL)) > 0)
				n = epoll_wait(dti_epfd, evs, 8, 0);
			if (n < 0 && errno != EINTR) {
				fprintf(stderr, "dtd: ingest: the drain's "
				    "wait: %s: polling from now on\n",
				    strerror(errno));
				atomic_store(&dti_setbroken, true);
				atomic_store(&dti_asleep, false);
				dti_kick();
				return;
			}
			for (i = 0; i < n; i++) {
				if (evs[i].data.u64 == DTI_EV_KICK) {
					(void)read(dti_evfd, &v, sizeof(v));
					continue;
				}
				/*
				 * A tracee ended.  With nothing enabled, reap
				 * it now, as a kick.  Else passes come often
				 * and reap it at their pace: a kick would
				 * restart their back-off at its shortest, at
				 * every exit of a traced tree, and take the
				 * CPU its next images need to attach.
				 */
				dti_exitseen = true;
				if (atomic_load(&dti_nenab) == 0)
					atomic_fetch_add(&dti_kicks, 1);
			}
			if (n == 0 || (n < 0 && errno != EINTR))
				break;
		}
		atomic_store(&dti_asleep, false);
		return;
	}
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


void *
dti_drain_main(void *arg)
{
	struct dti_proc *dp, *procs;
	uint64_t idle = DTI_IDLE_MIN, lastreap = 0, now, rt, xrt, x;
	unsigned int n, gen, k, budget;
	int gone;
	bool hold, cut;

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
		/*
		 * An exit the set told of is reaped at once while nothing is
		 * enabled: that is what woke the pass.  With something
		 * enabled, passes come often, and the reap keeps its pace: a
		 * parent gone within it still hands the exec announce a child
		 * left in its ring to the child's new image when it attaches
		 * (dti_exec_inherit()), as before the set.
		 */
		if (now - lastreap >= DTI_REAP_NSEC || (dti_exitseen &&
		    atomic_load(&dti_nenab) == 0)) {
			dti_exitseen = false;
			dti_reap();
			lastreap = now;
		}
		procs = __atomic_load_n(&dti_procs, __ATOMIC_ACQUIRE);
		hold = dti_hold(now, &budget);
		dti_plan_begin(&dti_plan, hold ? UINT_MAX : budget);
		dti_allow_set(!hold && budget == UINT_MAX, hold);
		/*
		 * The tracees the pass sees: those listed by now.  One that
		 * attaches meanwhile goes in at the head, before them.
		 */
		xrt = rt;
		for (k = 0, dp = procs; dp != NULL; dp = dp->dp_next, k++) {
			/* Before the drain: see dti_exec_look(). */
			if ((x = dti_exec_look(dp, rt, now, !hold)) < xrt)
				xrt = x;
			dp->dp_pass = dti_pass;
			if (hold)
				continue;
			dp->dp_pfirst = 0;
			dp->dp_pwoke = false;
			if (budget == UINT_MAX)
				n += dti_drain(dp, 0, UINT64_MAX);
		}
		/*
		 * Nothing stamped past an exec's hold (xrt before rt): the
		 * mark stays behind it until the new image's first records
		 * are in, and what a pass took past it would only wait in
		 * the sequencer, taking room and the drain's time (four
		 * dd's, one slow to attach: 10000 held, the reserve's,
		 * pass after pass).
		 */
		if (!hold && budget != UINT_MAX)
			n += dti_drain_oldest(procs, k,
			    xrt < rt ? xrt : UINT64_MAX);
		cut = false;
		for (dp = procs; dp != NULL; dp = dp->dp_next) {
			dti_counters(dp);
			if (!hold && budget != UINT_MAX &&
			    (dp->dp_cut || dp->dp_lowrt != 0))
				cut = true;
			if (dp->dp_dead || atomic_load(&dp->dp_retired))
				gone = 1;
		}
		dti_patience(hold || cut);
		/* A dead proc's ring was drained above, after it died. */
		if (gone)
			dti_unlink_gone();
		/*
		 * Not while holding: the records left in the rings are older
		 * than rt, and a mark past them would let younger events of
		 * other sources out first.
		 */
		if (!hold) {
			/*
			 * An image listed during the pass took its exec's
			 * announce out of its parent's ring as it was listed
			 * (dti_exec_inherit(), under dti_lock): the pass saw
			 * neither the announce nor the image, and a mark past
			 * its exec let the others' younger events out before
			 * the loader's records it hands over on attach (the
			 * late events of order-exec, a pipeline's two execs).
			 * So the holds of the images the pass did not see
			 * (dp_pass), as the list is now under that lock,
			 * before the mark; undrained, their library's
			 * rh_ready does not end the hold.  Not procs below
			 * either: dti_unlink_gone() may have freed some.
			 */
			pthread_mutex_lock(&dti_lock);
			procs = dti_procs;
			for (dp = procs; dp != NULL; dp = dp->dp_next)
				if (dp->dp_pass != dti_pass &&
				    (x = dti_exec_look(dp, rt, now, false)) < xrt)
					xrt = x;
			/*
			 * Idle under the lock a tracee is listed under, which
			 * wakes the source (dt_ingest_serve.c): an idle set after
			 * that would say "done" up to the clock for a tracee
			 * whose calls no pass has looked at yet.
			 */
			if (procs == NULL && dti_seq != NULL)
				dt_source_idle(dti_seq);
			pthread_mutex_unlock(&dti_lock);
			dti_low_mark(procs, now, &xrt);
			if (procs != NULL)
				dti_seq_mark(xrt);
		}
		if (n > 0) {
			idle = DTI_IDLE_MIN;
			/*
			 * A busy tracee keeps every pass busy: begun at once,
			 * each took the few dozen records its predecessor
			 * left, and the reader's wakeup, its read and every
			 * thread's context switches went to as few events.
			 * So a pass that took records is followed by the next
			 * DTI_PASS_NS after it began, no sooner: a tracee's
			 * ring (UDT_NSLOTS_DEFAULT) holds ms of records at
			 * millions a second, and the sequencer holds each
			 * record DTI_SEQ_SLACK_NS anyway.
			 * Not while a lossless open budgets the passes
			 * (dti_hold(): its tracees wait for them), and a kick
			 * (a tracee left, an enable changed) ends the wait.
			 */
			x = dt_clock_ns(CLOCK_MONOTONIC) - now;
			if (budget == UINT_MAX && x < DTI_PASS_NS)
				dti_idle(gen, DTI_PASS_NS - x);
			continue;
		}
		/* Held back: the reader frees room within microseconds. */
		if (hold || budget == 0 || dti_plan.dpl_budget == 0) {
			dti_idle(gen, DTI_IDLE_MIN);
			idle = DTI_IDLE_MIN;
			continue;
		}
		/*
		 * Tracees cannot wake us without a system call in their hot
		 * path, so poll, backing off while nothing comes.  With no
		 * tracee there is nothing to poll until one attaches, unless
		 * the sequencer still holds some of the drain's events back
		 * for room in the rings, which each pass tells it
		 * (dti_allow_set()); with nothing enabled only the odd record
		 * of a hook that read its enable byte just before a disable,
		 * and exits to reap.
		 */
		if (procs == NULL && (dti_seq == NULL ||
		    dt_source_held(dti_seq) == 0)) {
			dti_idle(gen, 0);
			idle = DTI_IDLE_MIN;
			continue;
		}
		dti_idle(gen, idle);
		/*
		 * A kick (a tracee attached, left, an enable changed) starts
		 * the back-off again, from its shortest while something is
		 * enabled.  With nothing, rings stay empty but for the odd
		 * record of a hook that read its byte just before a disable,
		 * and exits wake the set (dti_wait_exit()): the longest
		 * sleep at once; a back-off from 1 ms woke this thread three
		 * to six times an exec of a traced tree.  Without the set,
		 * exits are reaped by polls: the longest that is enabled.
		 * Records drained set it to the shortest.
		 */
		if (atomic_load(&dti_kicks) != gen)
			idle = atomic_load(&dti_nenab) != 0 ? DTI_IDLE_MIN :
			    dti_epfd >= 0 ? DTI_IDLE_OFF : DTI_IDLE_MAX;
		else if (idle < (atomic_load(&dti_nenab) != 0 ?
		    DTI_IDLE_MAX : DTI_IDLE_OFF))
			idle *= 2;
	}
	rcu_unregister_thread();
	return NULL;
}
