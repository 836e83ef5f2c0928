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
 * Aggregations in traced processes (issue 22): part of the private wire
 * (udt_wire.h).  For a syscall probe whose recording opens all only
 * aggregate, keyed by nothing but the pid and the probe, a value the
 * hook knows exactly (an entry's argument, a return's value or errno),
 * with no filter, dtd describes each aggregation in a slot of the table
 * memfd (UDT_SAGG_OFF, read-only to the tracee) and names the slots of
 * probe p in sg_probe[p]; the enable byte says UDT_EN_AGG.  The hook
 * then folds the event into the slots' accumulators after its ring
 * (UDT_SAGG_ACC_OFF) with atomic operations, and records nothing: no
 * time stamp, no slot.  The pid is the one dtd knows from the socket;
 * the probe is the slot's.
 *
 * Accumulators (udt_sagg_acc) start zeroed (the memfd is) and zero
 * means "nothing": min and max are kept as order-preserving unsigned
 * images (UDT_SAGG_MAXV(v) grows with v, UDT_SAGG_MINV(v) shrinks), so
 * both fold by an unsigned maximum whose neutral element is 0.  A hook
 * folds the sum and the extremes (or the bucket) first and adds to
 * sa_count last, with release; plainly while its process has one
 * thread, atomically after.  dtd never writes the counters: it reads
 * sa_count (acquire) and, when it moved since its last reading, the
 * sum and the buckets, and folds the steps; so every event it counts
 * has its value in what it takes, and a value folded but not yet
 * counted is taken one look early (its count comes with the next).  The
 * extremes it takes with an exchange to 0 (a hook's compare-and-swap
 * then starts them afresh), so that each look has those of its own
 * events; a count that moved with an extreme already taken reuses the
 * last one dtd took of that slot: the event's value was in it.
 *
 * Keys (ss_keys): an aggregation keyed by the thread, the CPU, an
 * argument, the return value, errno or the user stack too folds into
 * entries of a table after the accumulators (udt_sagg_kent,
 * UDT_SAGG_NKENT of them, shared by all slots), keyed by the slot, those
 * fields and the bucket.  A hook
 * hashes the key and looks at UDT_SAGG_KPROBE entries from there: one
 * ready (ke_state 2) with its key, or a free one it claims (a
 * compare-and-swap of ke_state 0 to 1, the key written, then 2 with
 * release); one another thread is writing it passes (the same key may
 * then be in two entries, which dtd folds into one).  With none, the
 * event is recorded.  The slot's sa_count is added to as well: dtd reads
 * the entries when it moved, or one waited for its stack.  The words of
 * dt_evt's union of arguments and result (ke_a: a return's value is
 * word 0, its errno word 2) are kept as the record would carry them,
 * those the key needs and no other; dtd takes errno as word 2's low
 * half.
 *
 * An entry belongs to one user of its slot: ke_seq is the slot's ss_seq
 * the hook read when it claimed the entry, and a hook matches only
 * entries of its own ss_seq.  Once dtd has moved the slot's ss_seq past
 * an entry's (a new user took the slot, or its user gave it back), the
 * entry is stale: a hook that finds it in its way claims it over (one
 * compare-and-swap of ke_state and ke_seq together, 2 and the stale tag
 * to 1 and the same, which fails once another hook claimed it first:
 * dtd's tags are unique across slots, so no claim writes one a hook
 * could find stale), zeroes its counters, writes its key, then ke_seq
 * with release, then ke_state 2.  dtd folds only the entries whose
 * ke_seq is their slot's current one, and starts its reading of an
 * entry afresh when that tag changed.  So a table is never filled by
 * the keys of users gone, and an old key never counts for a new user.
 * An entry goes from free to claimed once in a process's life; the
 * hook then lists its index (udt_sagg_klist), so that dtd reads the
 * entries in use, not the whole table.
 *
 * User stacks (UDT_SK_USTACK): the hook walks the event's user stack
 * as a record's (at most UDT_STACK_MAX frames; with UDT_EN_DEEP in the
 * byte, or no stack to walk, it records) and interns it in the table of
 * stacks after the list (udt_sagg_stk, UDT_SAGG_NSTK of them, shared by
 * all slots), whose index + 1 is the entry's ke_stk (0: no frame).  A
 * stack belongs to one user of one slot as an entry does: us_slot and
 * us_seq say whose, and a hook takes a stack only of its own slot and
 * ss_seq, claims a free one (us_state 0 to 1), or claims over one whose
 * user is gone (us_state and us_seq together, as an entry), and writes
 * the frames, then us_seq with release, then us_state 2, before any
 * entry names it.  A stack is written once for its user: dtd, which
 * reads only the entries of its slots' current users, reads only stacks
 * no hook writes any more; it takes one whose state, owner and tag it
 * read before the frames and again after them (acquire), and leaves an
 * entry for its next look while they do not hold (at the slot's last
 * merge, its steps are counted as dropped).  With the
 * UDT_SAGG_SPROBE stacks from the frames' hash all other stacks (or
 * being written), the event is recorded, and counted in the slot's
 * sa_nostk (the tracee's word, reported in dtsx_srcstk, never folded).
 *
 * Changes: dtd writes a slot's description between two increments of
 * ss_seq (odd while written) and only while no probe names the slot; a
 * hook reads ss_seq, the description, ss_seq again, and records the
 * event instead when it was odd or moved.  Nothing of this is trusted
 * by dtd: it takes counts as the tracee's word (a tracee could make the
 * calls), bounded by DT_INGEST_DELTA_MAX a look, and checks min <= max
 * and every bucket index against its own copy of the description; a
 * stack index past the table, or a stack of no frame or more than a
 * record holds, makes its entry's steps forged, and the frames of a
 * stack are copied once a look and interned in dtd's own table, whose
 * bounds (dtas_stksize) hold whatever a tracee writes there.  The
 * hook trusts the table no more: a slot it cannot read as sane makes it
 * record.
 *
 * Durations (UDT_FF_LAT, dtvar.h's DTF_LAT): a return probe's slot may
 * fold the call's duration.  dtd marks the entry probe of such a call in
 * sg_stamp (its enable byte then has UDT_EN_AGG, with UDT_EN_ON alone
 * when no open records the entry: UDT_SST_ONLY, stamped and not
 * recorded); the hook's entry keeps its time stamp, the call and the
 * call's sg_latgen in its thread's memory, and the return of a marked
 * call takes it (once; another rule's return, a handler's call inside
 * the timed one, leaves it, as it leaves the script's map), pairing it
 * when the call and generation match: the stamps' difference, in ns on
 * events' own clock (a TSC difference times sg_tsc_mult, 32.32 fixed
 * point: the rate dtd reads records' TSC times with, written when it
 * marks an entry and at each recalibration while one is marked, so that
 * durations follow the clock's slew as nsecs does), is the value,
 * folded or carried in the return's record (ur_args[1]).  A return with
 * no stamp of its own is folded nowhere (and not recorded when its
 * probe's slots are all durations'): the script would have found no
 * entry stored for it.  dtd moves a call's sg_latgen whenever it marks
 * or unmarks that call's entry, so that a stamp of an earlier enable
 * never pairs with a later return; one a call, so that a fold of another
 * call starting or stopping leaves this one's stamps in flight good.  16
 * bits: a stamp held across a multiple of 65536 marks of its call would
 * pair again.  A vfork child keeps its stamp apart from its waiting
 * parent's (the preload library's udt_lat_here()).  One stamp a thread
 * stands for one script's @s[tid], which the marks of every open share:
 * with two opens timing calls at once, a call of the other's made
 * inside a timed call (a signal handler's) would take the stamp in its
 * place, and the timed call's return be skipped where that script's
 * events pair it.  So dtd takes durations from one open at a time
 * (dt_agg_spec() refuses another's, EBUSY) and the second reads its
 * events.
 *
 * What stays inexact.  The events' nsecs is CLOCK_REALTIME: a step of
 * the wall clock (date -s, an NTP step) during a call is in the events'
 * duration, which a step back makes negative; the fold's TSC difference
 * has none of it (without the TSC, its stamps are CLOCK_REALTIME too,
 * and a step back makes it skip the call).  And the hooks stamp a
 * little off where a record takes its time, so a duration near a power
 * of two may land in the neighbouring bucket from run to run, either
 * way.  "The same output" is thus the same keys and counts, with each
 * duration as the events would measure it within that jitter.
 *
 * Locks used to protect struct members in this file:
 *	[d]	written by dtd only, under its ingest lock
 *	[p]	the tracee adds, dtd reads
 *	[p,d,a]	the tracee folds, dtd exchanges, atomically
 */
#ifndef USERDT_UDT_SAGG_H
#define USERDT_UDT_SAGG_H

#include <stdint.h>

#include "udt_filt.h"
#include "udt_wire.h"

#define UDT_SAGG_OFF		20992	/* in the table memfd */
#define UDT_SAGG_NSPEC		32	/* aggregations at once, all probes */
#define UDT_SAGG_NBUCKETS	120	/* hist: 66; lhist: its range + 2 */
#define UDT_SAGG_MAGIC		0x75646167u	/* "udag" */
#define UDT_SAGG_NKENT		512	/* keyed entries, all slots */
#define UDT_SAGG_KPROBE		16	/* entries a hook looks at */
#define UDT_SAGG_NSTK		256	/* user stacks, all slots */
/*
 * Stacks a hook looks at: with 16, 100 stacks hashed into the 256 left
 * one out in 918 tables of 10^6 (simulated; srcustk-reuse saw it); with
 * 32, in none.  Only a crowded table pays the longer look.
 */
#define UDT_SAGG_SPROBE		32

/* ss_keys: the fields an aggregation keys on beside pid and probe. */
#define UDT_SK_TID		0x0001
#define UDT_SK_CPU		0x0002
#define UDT_SK_RETVAL		0x0004	/* word 0 */
#define UDT_SK_ERRNO		0x0008	/* word 2, its low half */
#define UDT_SK_ARG0		0x0010	/* << n: word n */
#define UDT_SK_USTACK		0x4000	/* the user stack: ke_stk */
#define UDT_SK_COMM		0x8000	/* the thread's name; ke_tid too */

/* ss_vfield beside udt_filt.h's UDT_FF_*: the call's duration, ns. */
#define UDT_FF_LAT		10

/* sg_stamp[call]: the entry keeps a stamp for the return's duration. */
#define UDT_SST_STAMP		0x01
#define UDT_SST_ONLY		0x02	/* and nothing else: not recorded */

/* ss_func: dtvar.h's DTA_* by value. */
#define UDT_SG_COUNT		1
#define UDT_SG_SUM		2
#define UDT_SG_MIN		3
#define UDT_SG_MAX		4
#define UDT_SG_AVG		5
#define UDT_SG_HIST		6
#define UDT_SG_LHIST		7

/* hist's buckets: index pow2 class + 1, -1 (v < 0) .. 64. */
#define UDT_SAGG_HIST_NB	66

struct udt_sagg_spec {
	uint32_t	ss_seq;		/* [d,a] odd while written */
	uint8_t		ss_func;	/* [d] UDT_SG_* */
	uint8_t		ss_vfield;	/* [d] UDT_FF_RETVAL, UDT_FF_ERRNO,
					   UDT_FF_ARG0 + n; 0: count */
	uint8_t		ss_vflags;	/* [d] UDT_FF_INT32 */
	uint8_t		ss_nbuckets;	/* [d] hist, lhist: indexes used */
	int64_t		ss_lq0;		/* [d] lhist: ss_lmin / ss_lstep */
	int64_t		ss_lmin;	/* [d] lhist, as dtas_lmin */
	int64_t		ss_lmax;	/* [d] */
	int64_t		ss_lstep;	/* [d] > 0 */
	uint16_t	ss_keys;	/* [d] UDT_SK_*, 0: accumulators */
	uint8_t		ss_pad[6];
};

struct udt_sagg_tab {
	uint32_t	sg_magic;	/* [d] UDT_SAGG_MAGIC */
	uint32_t	sg_pad;
	/* [d,a] bit s: probe p's events fold into slot s */
	uint32_t	sg_probe[UDT_NPROBES_MAX];
	struct udt_sagg_spec sg_spec[UDT_SAGG_NSPEC];
	uint64_t	sg_tsc_mult;	/* [d,a] ns a TSC tick, 32.32 */
	uint8_t		sg_stamp[UDT_NPROBES_MAX / 2];	/* [d,a] UDT_SST_* */
	/* [d,a] by call: moved when its mark comes or goes */
	uint16_t	sg_latgen[UDT_NPROBES_MAX / 2];
};

/*
 * One slot's accumulators.  lhist's indexes: 0 below ss_lmin, 1 +
 * (v / ss_lstep - ss_lq0) within, ss_nbuckets - 1 from ss_lmax on.
 */
struct udt_sagg_acc {
	uint64_t	sa_count;	/* [p] events, last */
	uint64_t	sa_sum;		/* [p] wrapping */
	uint64_t	sa_min;		/* [p,d,a] max of UDT_SAGG_MINV */
	uint64_t	sa_max;		/* [p,d,a] max of UDT_SAGG_MAXV */
	uint64_t	sa_nostk;	/* [p] events recorded: no stack
					   free (UDT_SK_USTACK) */
	uint64_t	sa_pad[3];
	uint64_t	sa_bucket[UDT_SAGG_NBUCKETS];	/* [p] */
};

/* A keyed entry: ke_slot .. ke_stk are its key, zero where not keyed. */
struct udt_sagg_kent {
	uint32_t	ke_state;	/* [p,a] 0 free, 1 written, 2 ready */
	uint32_t	ke_seq;		/* [p,a] its slot's ss_seq at the
					   claim, stored after the key */
	uint32_t	ke_slot;	/* [p] set before ke_state 2 */
	int32_t		ke_tid;		/* [p] UDT_SK_TID */
	uint32_t	ke_cpu;		/* [p] UDT_SK_CPU */
	uint32_t	ke_bucket;	/* [p] hist, lhist: the index */
	char		ke_comm[UDT_COMMLEN];	/* [p] UDT_SK_COMM, NUL
						   padded */
	int64_t		ke_a[UDT_NARGS];	/* [p] the union's words */
	uint32_t	ke_stk;		/* [p] UDT_SK_USTACK: its stack's
					   index + 1, 0: no frame */
	uint32_t	ke_pad2;
	uint64_t	ke_count;	/* [p] events, last */
	uint64_t	ke_sum;		/* [p] wrapping */
	uint64_t	ke_min;		/* [p,d,a] max of UDT_SAGG_MINV */
	uint64_t	ke_max;		/* [p,d,a] max of UDT_SAGG_MAXV */
};

/*
 * The entries claimed from free, in the order they were: kl_n is added
 * to (atomically) before the index is stored, so dtd reads at most
 * UDT_SAGG_NKENT of them and skips an index not yet stored.
 */
struct udt_sagg_klist {
	uint32_t	kl_n;		/* [p,a] claims from free so far */
	uint32_t	kl_pad[15];
	uint16_t	kl_idx[UDT_SAGG_NKENT];	/* [p] index + 1; 0: not yet */
};

/*
 * A user stack of one slot's user, as the record would carry it: its
 * first us_nframes (at most UDT_STACK_MAX) return addresses.
 */
struct udt_sagg_stk {
	uint32_t	us_state;	/* [p,a] 0 free, 1 written, 2 ready */
	uint32_t	us_seq;		/* [p,a] its slot's ss_seq at the
					   claim, stored after the frames */
	uint32_t	us_slot;	/* [p] set before us_state 2 */
	uint32_t	us_nframes;	/* [p] 1 .. UDT_STACK_MAX */
	uint64_t	us_pc[UDT_STACK_MAX];	/* [p] innermost first */
	uint64_t	us_pad[3];
};

/* The key, ke_slot .. ke_stk: whole words, hashed and compared as such. */
#define UDT_SAGG_KEY_OFF	8
#define UDT_SAGG_KEY_WORDS	((__builtin_offsetof(struct udt_sagg_kent, \
				    ke_count) - UDT_SAGG_KEY_OFF) / 8)
#define UDT_SAGG_KENT_OFF(nslots)	\
	(UDT_SAGG_ACC_OFF(nslots) +	\
	    UDT_SAGG_NSPEC * sizeof(struct udt_sagg_acc))
#define UDT_SAGG_KLIST_OFF(nslots)	\
	(UDT_SAGG_KENT_OFF(nslots) +	\
	    UDT_SAGG_NKENT * sizeof(struct udt_sagg_kent))
#define UDT_SAGG_STK_OFF(nslots)	\
	(UDT_SAGG_KLIST_OFF(nslots) + sizeof(struct udt_sagg_klist))

#define UDT_SAGG_MAXV(v)	((uint64_t)(v) ^ (1ULL << 63))
#define UDT_SAGG_MINV(v)	(~UDT_SAGG_MAXV(v))
/* Back from the images; 0 ("nothing") is the caller's to rule out. */
#define UDT_SAGG_FROM_MAXV(u)	((int64_t)((u) ^ (1ULL << 63)))
#define UDT_SAGG_FROM_MINV(u)	UDT_SAGG_FROM_MAXV(~(u))

_Static_assert(sizeof(struct udt_sagg_spec) == 48, "udt_sagg_spec size");
_Static_assert(sizeof(struct udt_sagg_kent) == 128, "udt_sagg_kent size");
_Static_assert(__builtin_offsetof(struct udt_sagg_kent, ke_comm) ==
    UDT_SAGG_KEY_OFF + 16, "the name: the key's words 2 and 3");
_Static_assert(__builtin_offsetof(struct udt_sagg_kent, ke_slot) ==
    UDT_SAGG_KEY_OFF, "the key's start");
_Static_assert(__builtin_offsetof(struct udt_sagg_kent, ke_stk) + 8 ==
    __builtin_offsetof(struct udt_sagg_kent, ke_count),
    "the stack: the key's last word");
_Static_assert(sizeof(struct udt_sagg_acc) == 1024, "udt_sagg_acc size");
_Static_assert(sizeof(struct udt_sagg_stk) == 192, "udt_sagg_stk: 3 lines");
_Static_assert(sizeof(struct udt_sagg_klist) % 64 == 0, "stacks on lines");
_Static_assert(UDT_SAGG_NSPEC * sizeof(struct udt_sagg_acc) +
    UDT_SAGG_NKENT * sizeof(struct udt_sagg_kent) +
    sizeof(struct udt_sagg_klist) +
    UDT_SAGG_NSTK * sizeof(struct udt_sagg_stk) <= UDT_SAGG_ACC_SIZE,
    "accumulator area");
_Static_assert(UDT_SAGG_NSTK < UINT16_MAX, "ke_stk's indexes");
_Static_assert(UDT_SAGG_NKENT <= UINT16_MAX, "kl_idx's indexes");
_Static_assert(UDT_FILT_OFF + sizeof(struct udt_ftab) <= UDT_SAGG_OFF,
    "udt_sagg_tab after udt_ftab");
_Static_assert(UDT_SAGG_OFF + sizeof(struct udt_sagg_tab) <= UDT_TAB_SIZE,
    "udt_sagg_tab size");
_Static_assert(UDT_SAGG_NSPEC <= 32, "sg_probe's bits");

#endif /* USERDT_UDT_SAGG_H */
