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
 * unlinks and frees the procs of processes that exited or exec'd.  The
 * lock annotations are dt_ingest.c's.
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
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_ring.h"
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

/*
 * Slots the rest of this pass may still take from the tracees' rings
 * while a lossless reader is on (dti_hold(), dt_ingest_budget.h);
 * dpl_budget UINT_MAX: no bound.
 */
static struct dti_plan	dti_plan = { .dpl_budget = UINT_MAX };	/* [D] */

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
 * Lossless mode: how early what is still to come from dp's ring may be
 * stamped (dp_lowrt; 0: no earlier than the pass began, the drain's
 * usual promise, DTI_SEQ_SLACK_NS).  A pass the budget cut short leaves
 * records older than that in the ring, and a thread that waited for
 * room took its stamp before the wait: a mark past them would make them
 * late, after younger events of other tracees, and a late event sits
 * behind those in its CPU's ring, where a read may pass it for the same
 * thread's next event on another CPU.
 *
 * What is left after a drain is either in the ring, its first record at
 * the tail, or with threads this drain woke: a thread that found the
 * ring full stamped after the record before its ticket, which was at
 * the tail or after, so after the first record this drain took.  Each
 * bound is good to a slack or two (a thread's stamp before its reserve,
 * a ring's records in ticket order), which the mark takes off.  The
 * drain thread.
 */
static void
dti_low(struct dti_proc *dp, uint64_t first, bool woke)
{
	uint64_t ns;

	if (dti_committed(dp, dp->dp_tail, &ns))
		dp->dp_lowrt = ns != 0 ? ns : first;
	/*
	 * Whether or not the tail is committed: a ring is not in stamp
	 * order, and a woken thread's record, its ticket after the tail,
	 * may be stamped before the tail's.
	 */
	if (woke && first != 0 && (dp->dp_lowrt == 0 || first < dp->dp_lowrt))
		dp->dp_lowrt = first;
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
static unsigned int
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

static uint64_t	dti_marked;	/* [D] the rt of the last mark out */
static uint64_t	dti_marked_at;	/* [D] CLOCK_MONOTONIC when it last
					   moved on */

static void
dti_seq_mark(uint64_t rt)
{
	if (dti_seq == NULL)
		return;
	/* no tracee: idled under dti_lock by the pass (dti_drain_main()) */
	if (atomic_load(&dti_nenab) == 0)
		dt_source_idle(dti_seq);
	else
		dt_source_mark(dti_seq, rt - DTI_SEQ_SLACK_NS);
	if (rt > dti_marked)
		dti_marked_at = dt_clock_ns(CLOCK_MONOTONIC);
	dti_marked = rt;
}

/*
 * Lossless backpressure: whether this pass leaves the tracees' rings
 * alone because a lossless open's device ring is half full or more
 * (dt_ring_pressed()): their threads then wait, bounded, for room, and
 * the reader's ring does not drop what they would have waited for.  As
 * long as some reader reads, however slowly (dt_ring_reads() moves):
 * the traced program then goes at the reader's pace, as under strace.
 * After DTI_HOLD_NSEC without a read, one pass through if some open
 * that records is not held back: so a reader that does not read
 * (stopped, or gone) costs the other opens (and the lossy ones) a few
 * ms of delay, never their events, and the drain goes on (the reader's
 * ring counts the drops).  Exited processes are drained whatever this
 * says (dti_unlink_gone()).  The drain thread.
 */
/*
 * Well within the tracees' bound: a pass through comes long before they
 * give up on a reader that stopped reading.  The held-back reader's
 * ring, half empty when the hold began, does not take the pass's
 * records (a tracee's ring's worth each): it drops them, counted.
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
/* What the drain holds as patient leaves before waiting tracees drop. */
_Static_assert(DT_SEQ_PATIENT_NS < UDT_WAIT_NSEC / 2, "patience within wait");
/*
 * What the reserve may leave held (dti_budget_room()) leaves the store
 * room for the other sources' events, or a full store would let its
 * oldest go out of order.
 */
_Static_assert(DTI_HELD_MAX <= DT_SEQ_MAXHELD / 2, "held within the store");

static uint64_t	dti_hold_since;		/* the drain thread; 0: not holding */
static uint64_t	dti_hold_reads;		/* the drain thread: dt_ring_reads() */

/*
 * What a pass that does not hold may take while a lossless reader is on
 * (dti_plan): no ring is pressed, so every lossless open's ring has at
 * least half its slots free, rounded up, or what the fullest has free
 * when the device tells (dt_dev_lossless_room()), less a headroom for
 * the sources that cannot wait (dti_room()), and the pass takes no more
 * than that less what of the drain's own the sequencer still holds,
 * which reaches the rings before or with it, less the reserve
 * (dti_budget_room()).  Taking whole tracee rings instead, one after
 * another, overfilled a reader's ring that was only just under half
 * full: a small ring, or a few busy tracees, and a reader that fell
 * behind lost events, lossless or not.  Whichever ring of whichever open
 * each event goes to, none then lacks room for the drain's.  Other
 * sources' events are not the drain's to hold back: they are not
 * counted, or a busy one would starve the tracees; the headroom is
 * theirs.
 *
 * Half a ring as the room, with no reserve, could stop the drain: the
 * held events, younger than records still in the tracees' rings (an
 * exec'd image's loader's, handed over late, or records within the
 * mark's slack), could fill it, and then no pass could take the older
 * records that would let them go, however much the reader read: the
 * drain stood still until the sequencer's bound D released the held
 * ones, and the older records came late (four dd's behind btrace: most
 * passes for tens of ms).
 */
static unsigned int	dti_reserve;		/* [D] this pass's reserve */
static uint64_t		dti_oldest;		/* [D] the sequencer's oldest
						   held event when it began */

static unsigned int
dti_budget_of(void)
{
	unsigned int room, held = 0;

	room = dti_room(dt_dev_ringsize(), dt_dev_lossless_room());
	dti_oldest = UINT64_MAX;
	if (dti_seq != NULL)
		held = dt_source_held_oldest(dti_seq, &dti_oldest);
	return dti_budget_room(room, held, &dti_reserve);
}

/* Also the pass's budget, UINT_MAX: none. */
static bool
dti_hold(uint64_t now, unsigned int *budget)
{
	uint64_t reads;

	*budget = UINT_MAX;
	if (__atomic_load_n(&dti_lossless, __ATOMIC_RELAXED) == 0) {
		dti_hold_since = 0;
		return false;
	}
	if (dt_ring_pressed() == 0) {
		dti_hold_since = 0;
		*budget = dti_budget_of();
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
	/*
	 * A pass through is for the opens that do not wait on this
	 * reader; what it brings goes into the pressed rings too, a
	 * tracee's whole ring (UDT_NSLOTS_DEFAULT) into a ring with half
	 * of dt_dev_ringsize() free at most, and drops there.  With no
	 * other open to serve it only turned a wait into a loss: a reader
	 * kept off its CPU for 40 to 640 ms on a busy 2-core machine, not
	 * stopped, lost what its tracees would have waited for
	 * (sec-starve: 452 to 12671 of root's 20000 in a run, in one to
	 * ten passes through, while the hostile tracee's flood kept its
	 * ring pressed).  So then the hold goes on, looked at again after
	 * as long; the tracees' own bound (UDT_WAIT_NSEC, then they drop
	 * and count) is what a reader that really stopped costs them.
	 */
	if (dt_dev_all_pressed()) {
		dti_hold_since = now;
		return true;
	}
	/* One pass through, then hold again. */
	dti_hold_since = now;
	return false;
}

/*
 * The mark no later than what the rings may still give (dp_lowrt, or
 * what a held batch keeps back, less two slacks for its bounds;
 * dti_seq_mark() takes the third): a mark past it would let younger
 * events of other sources out first.  A forged stamp holds the others
 * back by D at most, as a silent source does, or by DT_SEQ_PATIENT_NS
 * while the drain says it is held back (dti_patience()).
 *
 * A held batch (dti_held_rt()) only keeps the mark where it was: what
 * it holds was copied at or after the pass whose mark is out, and any
 * time since 1970 is a valid stamp, so a lower one is the tracee's word
 * alone, and the mark it pulled down held every source's events for
 * every reader.  And only for DTI_HELD_MARK_NS: each batch's own
 * (dti_held_rt()), and the mark's since it last moved on, so that
 * batches held one after the other (a user's execs, each look just
 * short of stuck) cannot keep it where it is for longer.  now:
 * CLOCK_MONOTONIC.  The drain thread.
 */
static void
dti_low_mark(const struct dti_proc *procs, uint64_t now, uint64_t *rt)
{
	const struct dti_proc *dp;
	uint64_t low, held;
	bool hold = now <= dti_marked_at ||
	    now - dti_marked_at <= DTI_HELD_MARK_NS;

	for (dp = procs; dp != NULL; dp = dp->dp_next) {
		if (hold && (held = dti_held_rt(dp, now)) != 0) {
			held = held > 2 * DTI_SEQ_SLACK_NS ?
			    held - 2 * DTI_SEQ_SLACK_NS : DTI_SEQ_SLACK_NS;
			if (held < dti_marked)
				held = dti_marked;
			if (held < *rt)
				*rt = held;
		}
		if ((low = dp->dp_lowrt) == 0)
			continue;
		low = low > 2 * DTI_SEQ_SLACK_NS ?
		    low - 2 * DTI_SEQ_SLACK_NS : DTI_SEQ_SLACK_NS;
		if (low < *rt)
			*rt = low;
	}
}

/*
 * dti_drain_oldest()'s rings, their oldest stamps, done, done for their
 * share only, slots taken this pass: dti_onum each.
 */
static uint64_t		*dti_ohead;	/* [D] */
static bool		*dti_odone;	/* [D] */
static bool		*dti_ocapped;	/* [D] */
static unsigned int	*dti_otook;	/* [D] */
static struct dti_proc	**dti_oproc;	/* [D] */
static unsigned int	 dti_onum;	/* [D] */

/*
 * The stamp of the record at dp's tail; 0: none to order by.  Only the
 * order of a pass's turns: a ring is not in stamp order (a thread that
 * waited for room stamped before its wait and holds a later ticket), so
 * the mark does not rest on it alone (dti_low()).  [D]
 */
static uint64_t
dti_head_rt(const struct dti_proc *dp)
{
	uint64_t ns;

	return dti_committed(dp, dp->dp_tail, &ns) ? ns : 0;
}

/* Room in them for k rings; false without the memory.  [D] */
static bool
dti_oroom(unsigned int k)
{
	uint64_t *h;
	bool *d, *c;
	unsigned int *t;
	struct dti_proc **p;

	if (k <= dti_onum)
		return true;
	if ((h = realloc(dti_ohead, k * sizeof(*h))) != NULL)
		dti_ohead = h;
	if ((d = realloc(dti_odone, k * sizeof(*d))) != NULL)
		dti_odone = d;
	if ((c = realloc(dti_ocapped, k * sizeof(*c))) != NULL)
		dti_ocapped = c;
	if ((t = realloc(dti_otook, k * sizeof(*t))) != NULL)
		dti_otook = t;
	if ((p = realloc(dti_oproc, k * sizeof(*p))) != NULL)
		dti_oproc = p;
	if (h == NULL || d == NULL || c == NULL || t == NULL || p == NULL)
		return false;
	dti_onum = k;
	return true;
}

/* dti_drain_oldest()'s turn at ring j (struct dti_order).  [D] */
static unsigned int
dti_otake(void *arg, unsigned int j, uint64_t bound, uint64_t *head,
    bool *more)
{
	struct dti_proc *dp = dti_oproc[j];
	unsigned int got;

	(void)arg;
	got = dti_drain(dp, 0, bound);
	*more = dp->dp_held == NULL && dp->dp_cut;
	if (*more)
		*head = dti_head_rt(dp);
	return got;
}

/*
 * A pass under a budget (a lossless reader behind): the tracees' records
 * oldest first, whichever ring each is in, as far as the budget goes.
 * Taken ring by ring, a pass the budget cut took one tracee's young
 * records and left another's old ones: the young ones then waited in
 * the sequencer behind the mark the old ones held back (dti_low_mark()),
 * past its bound D when the reader was slow, and went out before the
 * old ones, which came late.  A late event sits behind younger ones in
 * its CPU's ring, and a read gave the same thread's next event, from
 * another CPU's ring, before it (four dd's behind btrace: a quarter of
 * the events late, a few returns read before their own entries).  Oldest
 * first, what a pass leaves is younger than what it took, but for the
 * slack of dti_pick(), so the mark lets what it took go at once.
 *
 * But the stamps are the tracees' word, and dtd serves every user: one
 * that stamps its records old, or fills its ring with void slots or
 * invalid records (nothing to order by, taken at once), would win every
 * turn and take every pass's budget, while the others' threads waited
 * past UDT_WAIT_NSEC and dropped.  So each ring with records waiting is
 * sure of a floor (dti_floor(), dti_order_pass()), a sixteenth of the
 * budget in all, and the rest goes oldest first to any.  What the
 * floors take may be younger than what another ring still holds, and
 * waits in the sequencer behind it, taking room: with a whole even
 * share instead, latpairs had up to 21163 of 160013 events late, with
 * a quarter once 14172.
 *
 * None stamped past lim is taken (UINT64_MAX: no limit).  Every
 * ring's dp_lowrt and dp_cut are set, taken from or not; the stuck
 * clock of a slot not committed runs only where a turn reaches it (its
 * head, 0, goes first).  Returns the slots consumed.  The drain thread.
 */
static unsigned int
dti_drain_oldest(struct dti_proc *procs, unsigned int k, uint64_t lim)
{
	struct dti_order o;
	struct dti_proc *dp;
	unsigned int i, n = 0, nwait = 0;

	if (!dti_oroom(k)) {
		/* No memory for the order: ring by ring, as the list goes. */
		for (i = 0, dp = procs; i < k; i++, dp = dp->dp_next)
			n += dti_drain(dp, 0, UINT64_MAX);
		return n;
	}
	/* The arrays as dti_oroom() left them. */
	o = (struct dti_order){ .do_head = dti_ohead, .do_done = dti_odone,
	    .do_capped = dti_ocapped, .do_took = dti_otook, .do_n = k,
	    .do_slack = DTI_SEQ_SLACK_NS, .do_take = dti_otake };
	for (i = 0, dp = procs; i < k; i++, dp = dp->dp_next) {
		dti_oproc[i] = dp;
		dti_ohead[i] = dti_head_rt(dp);
		if (dp->dp_tail != __atomic_load_n(&dp->dp_ring->rh_head,
		    __ATOMIC_ACQUIRE))
			nwait++;
	}
	n += dti_order_pass(&dti_plan, &o, nwait, lim);
	/*
	 * Then, from the reserve, the oldest records, which let what is
	 * held go.  Not only those stamped up to the oldest held event
	 * and the mark's three slacks (dti_low_mark()): the mark then moved
	 * past that one event alone, a record a pass, 200 ns of four dd's
	 * stamps for every 90 us, and behind held events that filled the
	 * room the drain crawled until the sequencer's patient bound let
	 * them out, before the older records, which came late.
	 */
	if (dti_reserve > 0 && dti_oldest != UINT64_MAX) {
		dti_plan_begin(&dti_plan, dti_reserve);
		n += dti_order_run(&dti_plan, &o, UINT_MAX, lim);
	}
	/*
	 * The rings the budget did not reach: what they hold bounds the
	 * mark as it would have had they been drained (dti_drain()).
	 */
	for (i = 0; i < k; i++) {
		dp = dti_oproc[i];
		if (dti_odone[i])
			continue;
		dp->dp_cut = dti_committed(dp, dp->dp_tail, NULL);
		dp->dp_lowrt = 0;
		dti_low(dp, dp->dp_pfirst, dp->dp_pwoke);
	}
	return n;
}

/*
 * Tell the sequencer how many of the drain's events the lossless
 * readers' rings can take until the next pass (dt_source_room(),
 * dti_allow()): what it holds may be more than they have room for, as
 * the reserve takes the oldest records whatever is held
 * (dti_budget_room()).  No bound while no reader asks for every event,
 * nor for a pass through (any: the rings count the drops).  The drain
 * thread.
 */
static void
dti_allow_set(bool any, bool hold)
{
	static unsigned int told = UINT_MAX;	/* [D] */
	unsigned int n, free;

	if (dti_seq == NULL)
		return;
	if (any || __atomic_load_n(&dti_lossless, __ATOMIC_RELAXED) == 0)
		n = UINT_MAX;
	else if ((free = dt_dev_lossless_room()) == UINT_MAX && hold)
		/* Half a ring is not there to assume: the next pass looks. */
		n = 0;
	else
		n = dti_allow(dt_dev_ringsize(), free);
	if (n == UINT_MAX && told == UINT_MAX)
		return;
	dt_source_room(dti_seq, n);
	told = n;
}

/*
 * Tell the sequencer whether the drain's mark is old because a lossless
 * reader holds its records back (dt_source_patient()): then they come,
 * oldest first, and the sequencer's bound D must not let younger events
 * out before them.  Only while a pass held, or its budget left records
 * in some ring or it woke threads whose records, stamped before their
 * wait, are still to come (dp_lowrt): a pass that took all there was
 * and woke no one leaves nothing behind its mark, and a reader merely
 * on must not lift D.  A pass through for a reader that stopped
 * reading is not held back; nor is a lossy drain.  Even so the
 * sequencer bounds it (DT_SEQ_PATIENT_NS): the stamps are the tracees'
 * word, one can stamp a record old and commit nothing after it, and a
 * reader may stay slow.  The drain thread.
 */
static void
dti_patience(bool on)
{
	static bool told;	/* [D] */

	if (dti_seq != NULL && on != told) {
		dt_source_patient(dti_seq, on);
		told = on;
	}
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
