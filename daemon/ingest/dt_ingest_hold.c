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
 * The drain thread's dealings with the lossless readers and the
 * sequencer, apart from the drain proper (dt_ingest_drain.c) because
 * they are a policy of their own over the same passes: when a pass
 * leaves the rings alone so that the tracees wait for a reader instead
 * of its ring dropping, how much it may take and in what order when it
 * does not, how far back that keeps the mark, and what the sequencer is
 * told of it.  The drain copies whatever it is let; this file decides
 * what that is, and is read and changed with dt_ingest_budget.c and
 * the sequencer, not with the copying.  Everything here is the drain
 * thread's own ([D]); the lock annotations are dt_ingest.c's.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_ring.h"
#include "dt_ingest.h"
#include "dt_ingest_budget.h"
#include "dt_ingest_var.h"

/*
 * Slots the rest of this pass may still take from the tracees' rings
 * while a lossless reader is on (dti_hold(), dt_ingest_budget.h);
 * dpl_budget UINT_MAX: no bound.
 */
struct dti_plan	dti_plan = { .dpl_budget = UINT_MAX };	/* [D] */

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
void
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

void
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
bool
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
void
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
unsigned int
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
void
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
void
dti_patience(bool on)
{
	static bool told;	/* [D] */

	if (dti_seq != NULL && on != told) {
		dt_source_patient(dti_seq, on);
		told = on;
	}
}
