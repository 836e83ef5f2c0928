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
 * The hook's aggregations (userdt/udt_sagg.h): an event of a probe
 * whose enable byte says UDT_EN_AGG is folded into the accumulators of
 * the slots dtd named for it, after the ring, and not recorded.  Runs
 * where hooks run (signal handlers, fork children, threads starting and
 * ending), inside udt_rec_enter()'s nesting (a handler that interrupts
 * a fold does not fold: it counts as recursive): no lock, no
 * allocation, no system call, a bounded loop per slot (a compare and
 * swap retried only when another thread moved the word), and every
 * byte of the table read as possibly corrupt.  Whatever the hook cannot
 * fold exactly as dtd would fold the record is recorded instead; a
 * fold is all or nothing across the probe's slots, so an event is never
 * both folded into one and recorded for another.
 *
 * A slot keyed by the user stack (UDT_SK_USTACK) takes the stack the
 * caller walked where a record's is walked (udt_emit()): the fold asks
 * for it first (-1), before it claims anything, so that the rules with
 * no stack never pay for a walk; the stack's index in the tracee's
 * table of stacks (udt_sagg_stkid()) is then a word of the entry's key.
 *
 * A call's duration (UDT_FF_LAT): the entry of a call dtd marked keeps
 * a stamp in its thread's memory (udt_sagg_stamp()), which its return
 * takes (udt_sagg_lat()) for its slots or its record; no lock, no system
 * call: the TSC, or the vDSO's clock where dtd takes no TSC stamps (the
 * system call only where records take it too: libc's clock not found).
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/single_threaded.h>

#include <userdt/udt_sagg.h>

#include "systab.h"
#include "udt_preload.h"
#include "udt_rw.h"
#include "udt_sys.h"

int	udt_sagg_off;		/* [I] USERDT_SRCAGG=0: always record */

/* The hist class of v, as dt_agg.c's and btrace's hist(). */
static inline unsigned int
udt_sagg_pow2(int64_t v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	return 2 + (63 - (unsigned int)__builtin_clzll((uint64_t)v));
}

/*
 * *w += n: a locked add once the process may have more than one thread
 * (udt_rw_mt, glibc's __libc_single_threaded, as the entry's count),
 * else a plain one, which no handler of this thread can split (it
 * would not fold: udt_rec_enter()'s nesting) and dtd never writes.
 */
static inline void
udt_sagg_add(uint64_t *w, uint64_t n, int mt, int order)
{
	if (mt)
		(void)__atomic_fetch_add(w, n, order);
	else
		__atomic_store_n(w, __atomic_load_n(w, __ATOMIC_RELAXED) + n,
		    order);
}

/*
 * *w = max(*w, u), atomically: dtd takes the extremes with an exchange.
 * No store, and no locked instruction, when *w is already as large.
 */
static inline void
udt_sagg_umax(uint64_t *w, uint64_t u)
{
	uint64_t cur = __atomic_load_n(w, __ATOMIC_RELAXED);

	while (cur < u && !__atomic_compare_exchange_n(w, &cur, u, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		continue;
}

/*
 * The words of dt_evt's union of arguments and result for this event as
 * dtd fills it from the record: an entry's arguments (0 past the
 * call's count), or a return's value, 0, and errno zero-extended.
 */
static inline void
udt_sagg_words(unsigned int probe, const long *args, int isret, long rv,
    int error, int64_t *a)
{
	unsigned int nargs, n;

	for (n = 0; n < UDT_NARGS; n++)
		a[n] = 0;
	if (isret) {
		a[0] = rv;
		a[2] = (int64_t)(uint32_t)error;
	} else if (args != NULL) {
		nargs = probe / 2 < SYSTAB_COUNT ?
		    systab[probe / 2].se_nargs : 0;
		for (n = 0; n < UDT_NARGS && n < nargs; n++)
			a[n] = args[n];
	}
}

/*
 * The value of field (UDT_FF_*) as dtd reads it from the words a: the
 * return value is word 0, errno word 2's low half.  *ok 0: no field.
 */
static inline int64_t
udt_sagg_value(unsigned int field, unsigned int flags, const int64_t *a,
    const int64_t *lat, int *ok)
{
	int64_t v;

	switch (field) {
	case 0:
		return 0;
	case UDT_FF_LAT:
		/* no stamp: the caller folds nothing (*ok 2) */
		if (lat == NULL) {
			*ok = 2;
			return 0;
		}
		v = *lat;
		break;
	case UDT_FF_RETVAL:
		v = a[0];
		break;
	case UDT_FF_ERRNO:
		v = (int32_t)(uint32_t)(uint64_t)a[2];
		break;
	default:
		if (field < UDT_FF_ARG0 || field >= UDT_FF_ARG0 + UDT_NARGS) {
			*ok = 0;
			return 0;
		}
		v = a[field - UDT_FF_ARG0];
		break;
	}
	if (flags & UDT_FF_INT32)
		v = (int32_t)(uint32_t)(uint64_t)v;
	return v;
}

/*
 * Slot sp's index and value for this event: 0 on success, -1 when the
 * slot is not one the hook can read as sane and unchanged, 1 when it
 * folds a duration this return has none of.
 */
static int
udt_sagg_look(const struct udt_sagg_spec *sp, const int64_t *a,
    const int64_t *lat, unsigned int *idxp, int64_t *vp,
    unsigned int *funcp,
    unsigned int *keysp, uint32_t *seqp)
{
	uint32_t seq = __atomic_load_n(&sp->ss_seq, __ATOMIC_ACQUIRE);
	unsigned int func, field, flags, nb, keys;
	int64_t lq0, lmin, lmax, lstep, v, q;
	unsigned int idx = 0;
	int ok = 1;

	if (seq & 1)
		return -1;
	func = __atomic_load_n(&sp->ss_func, __ATOMIC_RELAXED);
	field = __atomic_load_n(&sp->ss_vfield, __ATOMIC_RELAXED);
	flags = __atomic_load_n(&sp->ss_vflags, __ATOMIC_RELAXED);
	nb = __atomic_load_n(&sp->ss_nbuckets, __ATOMIC_RELAXED);
	lq0 = __atomic_load_n(&sp->ss_lq0, __ATOMIC_RELAXED);
	lmin = __atomic_load_n(&sp->ss_lmin, __ATOMIC_RELAXED);
	lmax = __atomic_load_n(&sp->ss_lmax, __ATOMIC_RELAXED);
	lstep = __atomic_load_n(&sp->ss_lstep, __ATOMIC_RELAXED);
	keys = __atomic_load_n(&sp->ss_keys, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&sp->ss_seq, __ATOMIC_RELAXED) != seq)
		return -1;
	if (func < UDT_SG_COUNT || func > UDT_SG_LHIST ||
	    (func == UDT_SG_COUNT) != (field == 0) ||
	    (keys & ~(unsigned int)(((UDT_SK_ARG0 << UDT_NARGS) - 1) |
	    UDT_SK_COMM | UDT_SK_USTACK)) != 0)
		return -1;
	v = udt_sagg_value(field, flags, a, lat, &ok);
	if (!ok)
		return -1;
	if (ok == 2)
		return 1;
	if (func == UDT_SG_HIST) {
		idx = udt_sagg_pow2(v);
		if (nb != UDT_SAGG_HIST_NB)
			return -1;
	} else if (func == UDT_SG_LHIST) {
		if (lstep <= 0 || lmin >= lmax || nb < 3 ||
		    nb > UDT_SAGG_NBUCKETS)
			return -1;
		if (v < lmin)
			idx = 0;
		else if (v >= lmax)
			idx = nb - 1;
		else {
			/* C's division, as dtd's bucket; q >= lq0 */
			q = v / lstep;
			if (q < lq0 || (uint64_t)(q - lq0) >= nb - 2)
				return -1;
			idx = 1 + (unsigned int)(q - lq0);
		}
	}
	*idxp = idx;
	*vp = v;
	*funcp = func;
	*keysp = keys;
	*seqp = seq;
	return 0;
}

/* The key's words of e. */
static inline uint64_t *
udt_sagg_kwords(struct udt_sagg_kent *e)
{
	return (uint64_t *)(void *)((char *)e + UDT_SAGG_KEY_OFF);
}

/*
 * Whether e, ready, belongs to a user its slot no longer has: dtd moved
 * the slot's ss_seq past e's tag.  Wrapping order, so that a hook late
 * with an older ss_seq never takes a current user's entry for stale.
 * A slot being written (odd) is judged in use; an entry naming no slot
 * (the process wrote it) is stale.
 */
static int
udt_sagg_stale(const struct udt_sagg_tab *sg, uint32_t es, uint32_t eq)
{
	uint32_t cur;

	if (es >= UDT_SAGG_NSPEC)
		return 1;
	cur = __atomic_load_n(&sg->sg_spec[es].ss_seq, __ATOMIC_ACQUIRE);
	return (cur & 1) == 0 && (int32_t)(cur - eq) > 0;
}

/*
 * A state and the tag after it, one word: a claim over compares both.
 * may_alias: the word is read where the two halves are written apart.
 */
typedef uint64_t udt_sagg_pair_t __attribute__((may_alias));

_Static_assert(__builtin_offsetof(struct udt_sagg_stk, us_seq) == 4 &&
    __builtin_offsetof(struct udt_sagg_kent, ke_seq) == 4 &&
    _Alignof(struct udt_sagg_stk) == 8 &&
    _Alignof(struct udt_sagg_kent) == 8,
    "the state and its tag: one aligned word");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the state is the pair's low half"
#endif

/*
 * Claim over a stack or an entry whose tag eq the caller found stale
 * (udt_sagg_stale()): its state and tag together, from (2, eq) to (1,
 * eq).  A state alone compared would let a hook that read eq and lost
 * the race to another claim over still succeed once that claim had
 * made it its user's (a new tag, state 2 again): the stack would sit
 * claimed until the late hook saw the new tag and gave it back, and
 * dtd, which takes only a ready one, would skip the entries naming it
 * meanwhile.  With the tag in the compare, the late hook fails when the
 * claim it lost to wrote its user's tag (dtd's tags are unique across
 * slots, dts_nextseq()).  Not quite always: a claim over by a hook whose
 * own user is gone by then writes that stale tag, and if it equals eq
 * the old pair is back and the late hook succeeds.  What that costs is
 * what udt_sagg_kinit() already accepts: one event of a gone user in a
 * fresh entry; a stack is not held claimed by it, and no current
 * user's entry is touched.  Any thread or handler: one
 * compare-and-swap, no lock.
 */
static int
udt_sagg_claimover(uint32_t *state, uint32_t eq)
{
	udt_sagg_pair_t *w = (udt_sagg_pair_t *)(void *)state;
	uint64_t old = 2 | (uint64_t)eq << 32, new = 1 | (uint64_t)eq << 32;

	return __atomic_compare_exchange_n(w, &old, new, 0, __ATOMIC_ACQUIRE,
	    __ATOMIC_RELAXED);
}

/*
 * Make u, claimed (us_state 1, ours alone), the stack pc[0 .. n) of slot
 * s's user of ss_seq seq: the frames and the owner, then the tag with
 * release, then ready.  Nothing names u yet: no entry reads it before
 * this hook's, which comes after.
 */
static unsigned int
udt_sagg_sinit(struct udt_sagg_stk *u, unsigned int x, unsigned int s,
    uint32_t seq, const uint64_t *pc, unsigned int n)
{
	unsigned int i;

	/* the frames after the claim, as dtd reads them before the state */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		__atomic_store_n(&u->us_pc[i], pc[i], __ATOMIC_RELAXED);
	__atomic_store_n(&u->us_nframes, n, __ATOMIC_RELAXED);
	__atomic_store_n(&u->us_slot, s, __ATOMIC_RELAXED);
	__atomic_store_n(&u->us_seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&u->us_state, 2, __ATOMIC_RELEASE);
	return x + 1;
}

/*
 * The index + 1 of the stack pc[0 .. n) of slot s's user of ss_seq seq
 * in the table st, claimed if new (a free stack, or a stale one claimed
 * over, as udt_sagg_kentry() claims an entry); 0 for no frame; -1 when
 * the UDT_SAGG_SPROBE stacks from its hash are all others' (or being
 * written): the event is then recorded.  Word by word, as the entries.
 *
 * A stack claimed by a hook that never publishes it (a signal handler
 * that left the fold by siglongjmp() between the claim and
 * udt_sagg_sinit()'s last store) stays in state 1 for the process's
 * life: no hook may tell it from one being written, so none takes it
 * over.  It is one stack fewer in the table; no entry names it, and
 * events whose hash leads only to it and others' are recorded, counted
 * in sa_nostk.  As udt_sagg_kentry()'s entries.
 */
static int
udt_sagg_stkid(const struct udt_sagg_tab *sg, struct udt_sagg_stk *st,
    unsigned int s, uint32_t seq, const uint64_t *pc, unsigned int n)
{
	struct udt_sagg_stk *u;
	unsigned int i, k, x;
	uint64_t h;
	uint32_t state, uq, us;

	if (n == 0)
		return 0;
	if (n > UDT_STACK_MAX)
		n = UDT_STACK_MAX;
	h = 0x9e3779b97f4a7c15ULL ^ n;
	for (i = 0; i < n; i++)
		h ^= pc[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	for (k = 0; k < UDT_SAGG_SPROBE; k++) {
		x = (unsigned int)(h + k) % UDT_SAGG_NSTK;
		u = &st[x];
		state = __atomic_load_n(&u->us_state, __ATOMIC_ACQUIRE);
		if (state == 0 && __atomic_compare_exchange_n(&u->us_state,
		    &state, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			return (int)udt_sagg_sinit(u, x, s, seq, pc, n);
		if (state != 2)
			continue;
		uq = __atomic_load_n(&u->us_seq, __ATOMIC_ACQUIRE);
		us = __atomic_load_n(&u->us_slot, __ATOMIC_RELAXED);
		if (uq == seq && us == s) {
			if (__atomic_load_n(&u->us_nframes,
			    __ATOMIC_RELAXED) != n)
				continue;
			for (i = 0; i < n; i++)
				if (__atomic_load_n(&u->us_pc[i],
				    __ATOMIC_RELAXED) != pc[i])
					break;
			if (i == n)
				return (int)x + 1;
			continue;
		}
		if (!udt_sagg_stale(sg, us, uq) ||
		    !udt_sagg_claimover(&u->us_state, uq))
			continue;
		return (int)udt_sagg_sinit(u, x, s, seq, pc, n);
	}
	return -1;
}

/*
 * Make e, claimed (ke_state 1, ours alone), the entry of key kw for the
 * user of ss_seq seq: counters from zero, then the key, then the tag
 * with release, which dtd reads before the rest; ready last.  A late
 * hook of e's earlier user may still add to it: an event in flight
 * while its slot changed hands, as the accumulators' may.
 */
static struct udt_sagg_kent *
udt_sagg_kinit(struct udt_sagg_kent *e, const uint64_t *kw, uint32_t seq)
{
	uint64_t *ew = udt_sagg_kwords(e);
	unsigned int i;

	__atomic_store_n(&e->ke_count, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ke_sum, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ke_min, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ke_max, 0, __ATOMIC_RELAXED);
	for (i = 0; i < UDT_SAGG_KEY_WORDS; i++)
		ew[i] = kw[i];
	__atomic_store_n(&e->ke_seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&e->ke_state, 2, __ATOMIC_RELEASE);
	return e;
}

/*
 * The entry of slot s's key for this event in the keyed table kt, for
 * the slot's user of ss_seq seq, claimed if new: a free entry, or a
 * stale one claimed over (udt_sagg_kstale()); NULL when the
 * UDT_SAGG_KPROBE entries from its hash are all other keys' (or being
 * written): the event is then recorded.  An entry claimed from free is
 * listed in kl for dtd.  Word by word, never memcmp() or memcpy():
 * libc's use vector registers this library does not keep
 * (udt_xstate.c), and a key is eight words.  An entry claimed by a
 * hook that a handler's siglongjmp() took out before udt_sagg_kinit()'s
 * last store stays in state 1 for good, one entry fewer; its events
 * were never counted in it (the count comes after the claim), and
 * later ones of its key go to another entry or are recorded.
 */
static struct udt_sagg_kent *
udt_sagg_kentry(const struct udt_sagg_tab *sg, struct udt_sagg_kent *kt,
    struct udt_sagg_klist *kl, unsigned int s, uint32_t seq,
    unsigned int keys, unsigned int idx, const int64_t *a,
    unsigned int stk)
{
	struct udt_sagg_kent k, *e;
	uint64_t *kw = udt_sagg_kwords(&k), *ew, h;
	unsigned int i, n, w, x;
	uint32_t st, c, eq;

	for (i = 0; i < UDT_SAGG_KEY_WORDS; i++)
		kw[i] = 0;
	k.ke_slot = s;
	k.ke_bucket = idx;
	/*
	 * A name goes with its thread, which dtd judges it by as it judges
	 * a record's (a renamed thread's, or a lie): one entry a thread.
	 */
	if (keys & (UDT_SK_TID | UDT_SK_COMM))
		k.ke_tid = udt_gettid();
	if (keys & UDT_SK_CPU)
		k.ke_cpu = (uint32_t)udt_getcpu();
	if (keys & UDT_SK_COMM)
		udt_getcomm(k.ke_comm);
	/*
	 * Shifts and adds a word (hash_combine's), one multiply at the end,
	 * over the words that can be other than 0: the hash is a chain of
	 * steps each waiting for the last, the largest part of a fold.
	 */
	h = kw[0] + 0x9e3779b97f4a7c15ULL;
	h ^= kw[1] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	if (keys & UDT_SK_COMM)
		for (w = 0; w < UDT_COMMLEN / 8; w++)
			h ^= kw[2 + w] + 0x9e3779b97f4a7c15ULL + (h << 6) +
			    (h >> 2);
	for (w = 0; w < UDT_NARGS; w++)
		if ((keys & (UDT_SK_ARG0 << w)) ||
		    (w == 0 && (keys & UDT_SK_RETVAL)) ||
		    (w == 2 && (keys & UDT_SK_ERRNO))) {
			k.ke_a[w] = a[w];
			h ^= (uint64_t)a[w] + 0x9e3779b97f4a7c15ULL +
			    (h << 6) + (h >> 2);
		}
	if (keys & UDT_SK_USTACK) {
		k.ke_stk = stk;
		h ^= kw[UDT_SAGG_KEY_WORDS - 1] + 0x9e3779b97f4a7c15ULL +
		    (h << 6) + (h >> 2);
	}
	h *= 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	for (n = 0; n < UDT_SAGG_KPROBE; n++) {
		x = (unsigned int)(h + n) & (UDT_SAGG_NKENT - 1);
		e = &kt[x];
		ew = udt_sagg_kwords(e);
		st = __atomic_load_n(&e->ke_state, __ATOMIC_ACQUIRE);
		if (st == 0 && __atomic_compare_exchange_n(&e->ke_state, &st,
		    1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
			/* once per entry: listed before its first count */
			c = __atomic_fetch_add(&kl->kl_n, 1, __ATOMIC_RELAXED);
			if (c < UDT_SAGG_NKENT)
				__atomic_store_n(&kl->kl_idx[c],
				    (uint16_t)(x + 1), __ATOMIC_RELAXED);
			return udt_sagg_kinit(e, kw, seq);
		}
		/* another's, or being written (a failed claim read which) */
		if (st != 2)
			continue;
		if ((eq = __atomic_load_n(&e->ke_seq, __ATOMIC_ACQUIRE)) ==
		    seq) {
			for (i = 0; i < UDT_SAGG_KEY_WORDS; i++)
				if (ew[i] != kw[i])
					break;
			if (i == UDT_SAGG_KEY_WORDS)
				return e;
			continue;
		}
		if (!udt_sagg_stale(sg, __atomic_load_n(&e->ke_slot,
		    __ATOMIC_RELAXED), eq) ||
		    !udt_sagg_claimover(&e->ke_state, eq))
			continue;
		return udt_sagg_kinit(e, kw, seq);
	}
	return NULL;
}

/*
 * Now on the clock records use: a TSC value (*tsc 1) or CLOCK_REALTIME
 * in ns, through the vDSO or, when libc's clock_gettime was not found,
 * the system call, as a record's time stamp is taken (udt_emit()): a
 * call the events would pair is timed as well.  -1 when the clock
 * fails.  at not negative: a time the caller has already (a loader's
 * record's, CLOCK_REALTIME ns), taken as it is.
 */
static int64_t
udt_sagg_now(int64_t at, int *tsc)
{
	struct timespec ts;

	if (at >= 0) {
		*tsc = 0;
		return at;
	}
	*tsc = __atomic_load_n(&udt_use_tsc, __ATOMIC_RELAXED);
	if (*tsc)
		return (int64_t)(__builtin_ia32_rdtsc() &
		    0x7fffffffffffffffULL);
	if (udt_real_clock_gettime_fn != NULL) {
		if (udt_real_clock_gettime_fn(CLOCK_REALTIME, &ts) != 0)
			return -1;
	} else if (udt_sys2(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const struct udt_sagg_tab *
udt_sagg_tab(const struct udt_tab *tab)
{
	const struct udt_sagg_tab *sg;

	if (tab == NULL)
		return NULL;
	sg = (const struct udt_sagg_tab *)(const void *)((const char *)tab +
	    UDT_SAGG_OFF);
	if (__atomic_load_n(&sg->sg_magic, __ATOMIC_RELAXED) !=
	    UDT_SAGG_MAGIC)
		return NULL;
	return sg;
}

/*
 * Not turned off by USERDT_SRCAGG=0: the return records its duration
 * then (udt_emit()), which dtd folds as the hook would have.
 */
int
udt_sagg_stamp(const struct udt_tab *tab, unsigned int probe, int64_t at)
{
	const struct udt_sagg_tab *sg = udt_sagg_tab(tab);
	/*
	 * A vfork child's in a stamp of its own (udt_lat_here()); its
	 * return, which it records rather than folds (udt_emit()),
	 * carries its duration to dtd's fold.
	 */
	struct udt_lat *l = udt_lat_here(&udt_thread);
	unsigned int call = probe / 2, st;
	int64_t now;
	int tsc;
	uint8_t seq;

	if (sg == NULL || probe % 2 != 0 || call >= UDT_NPROBES_MAX / 2)
		return 0;
	st = __atomic_load_n(&sg->sg_stamp[call], __ATOMIC_ACQUIRE);
	if (!(st & UDT_SST_STAMP))
		return 0;
	now = udt_sagg_now(at, &tsc);
	/*
	 * ul_call cleared before the fields and set after them, the
	 * compiler kept to that order: a handler's return in between
	 * finds no stamp.  A handler's stamp in between (ul_seq moved)
	 * came after this one, as the script's @s[tid] = nsecs would:
	 * this one is gone, and so is the handler's once its return took
	 * it.
	 */
	__atomic_store_n(&l->ul_call, 0, __ATOMIC_RELAXED);
	seq = (uint8_t)(__atomic_load_n(&l->ul_seq, __ATOMIC_RELAXED) + 1);
	__atomic_store_n(&l->ul_seq, seq, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (now < 0)
		return (st & UDT_SST_ONLY) != 0;
	l->ul_t = now;
	l->ul_tsc = (uint8_t)tsc;
	l->ul_gen = __atomic_load_n(&sg->sg_latgen[call], __ATOMIC_ACQUIRE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&l->ul_seq, __ATOMIC_RELAXED) != seq)
		return (st & UDT_SST_ONLY) != 0;
	__atomic_store_n(&l->ul_call, call + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* one between the check and the store: the fields are its */
	if (__atomic_load_n(&l->ul_seq, __ATOMIC_RELAXED) != seq)
		__atomic_store_n(&l->ul_call, 0, __ATOMIC_RELAXED);
	return (st & UDT_SST_ONLY) != 0;
}

int
udt_sagg_lat(const struct udt_tab *tab, unsigned int probe, int64_t at,
    int64_t *ns)
{
	const struct udt_sagg_tab *sg = udt_sagg_tab(tab);
	struct udt_lat *l = udt_lat_here(&udt_thread);
	unsigned int call;
	uint64_t d, mult;
	int64_t now, t0;
	int tsc, tsc0;
	uint16_t gen;
	uint8_t seq;

	seq = __atomic_load_n(&l->ul_seq, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	call = __atomic_load_n(&l->ul_call, __ATOMIC_RELAXED);
	if (call == 0 || sg == NULL || probe % 2 != 1 ||
	    probe / 2 >= UDT_NPROBES_MAX / 2)
		return 0;
	/*
	 * Only the return of a call whose entry is marked, one a script
	 * times, takes the stamp: another rule's return (a handler's call
	 * inside the timed one) leaves the script's @s[tid] as it is.
	 */
	if (!(__atomic_load_n(&sg->sg_stamp[probe / 2], __ATOMIC_ACQUIRE) &
	    UDT_SST_STAMP))
		return 0;
	/*
	 * Taken once, whatever it is: the script deletes its entry.  The
	 * fields read before it is cleared; a handler's stamp in between
	 * (ul_seq moved) came after this one's entry and took its place,
	 * as in the script's @s[tid], and its return took that: none left.
	 */
	t0 = l->ul_t;
	tsc0 = l->ul_tsc;
	gen = l->ul_gen;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&l->ul_call, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&l->ul_seq, __ATOMIC_RELAXED) != seq)
		return 0;
	if (call != probe / 2 + 1 ||
	    gen != __atomic_load_n(&sg->sg_latgen[call - 1],
	    __ATOMIC_ACQUIRE))
		return 0;
	now = udt_sagg_now(at, &tsc);
	if (now < 0 || tsc != tsc0 || now < t0)
		return 0;
	d = (uint64_t)(now - t0);
	if (tsc) {
		/* ticks times ns a tick in 32.32: as dtd converts them */
		mult = __atomic_load_n(&sg->sg_tsc_mult, __ATOMIC_RELAXED);
		if (mult == 0)
			return 0;
		d = (uint64_t)(((unsigned __int128)d * mult) >> 32);
	}
	*ns = (int64_t)(d & 0x7fffffffffffffffULL);
	return 1;
}

int
udt_sagg_fold(const struct udt_tab *tab, struct udt_ring_hdr *r,
    unsigned int probe, const long *args, int isret, long rv, int error,
    const int64_t *lat, const uint64_t *stk, unsigned int nframes)
{
	const struct udt_sagg_tab *sg;
	struct udt_sagg_acc *acc, *a;
	struct udt_sagg_kent *kt, *ke[UDT_SAGG_NSPEC];
	struct udt_sagg_klist *kl;
	struct udt_sagg_stk *st;
	int sid;
	unsigned int idx[UDT_SAGG_NSPEC], func[UDT_SAGG_NSPEC], s, n = 0;
	unsigned int slot[UDT_SAGG_NSPEC], keys;
	uint32_t seq;
	int64_t val[UDT_SAGG_NSPEC], w[UDT_NARGS], v;
	uint64_t *cnt, *sum, *mn, *mx;
	uint32_t mask;
	int mt, nolat = 0, rc;

	if (udt_sagg_off || tab == NULL || probe >= UDT_NPROBES_MAX)
		return 0;
	sg = (const struct udt_sagg_tab *)(const void *)((const char *)tab +
	    UDT_SAGG_OFF);
	if (__atomic_load_n(&sg->sg_magic, __ATOMIC_RELAXED) !=
	    UDT_SAGG_MAGIC)
		return 0;
	mask = __atomic_load_n(&sg->sg_probe[probe], __ATOMIC_ACQUIRE);
	if (mask == 0)
		return 0;
	udt_sagg_words(probe, args, isret, rv, error, w);
	acc = (struct udt_sagg_acc *)(void *)((char *)r +
	    UDT_SAGG_ACC_OFF(r->rh_nslots));
	kt = (struct udt_sagg_kent *)(void *)((char *)r +
	    UDT_SAGG_KENT_OFF(r->rh_nslots));
	kl = (struct udt_sagg_klist *)(void *)((char *)r +
	    UDT_SAGG_KLIST_OFF(r->rh_nslots));
	st = (struct udt_sagg_stk *)(void *)((char *)r +
	    UDT_SAGG_STK_OFF(r->rh_nslots));
	/*
	 * A stack to walk first, before any entry is claimed: the walk is
	 * the caller's (its frames are the record's), and a fold asked
	 * again claims the same entries.
	 */
	if (stk == NULL)
		for (s = 0; s < UDT_SAGG_NSPEC; s++)
			if ((mask & (1u << s)) &&
			    (__atomic_load_n(&sg->sg_spec[s].ss_keys,
			    __ATOMIC_RELAXED) & UDT_SK_USTACK))
				return -1;
	/*
	 * All the slots first, their keyed entries claimed: an event is
	 * folded whole or recorded.  An entry claimed for an event then
	 * recorded stays with no count.
	 */
	for (; mask != 0; mask &= mask - 1) {
		s = (unsigned int)__builtin_ctz(mask);
		if (s >= UDT_SAGG_NSPEC)
			return 0;
		if ((rc = udt_sagg_look(&sg->sg_spec[s], w, lat, &idx[n],
		    &val[n], &func[n], &keys, &seq)) < 0)
			return 0;
		if (rc > 0) {
			nolat = 1;
			continue;
		}
		sid = 0;
		if (keys & UDT_SK_USTACK) {
			/* changed since the look above: the record's then */
			if (stk == NULL)
				return 0;
			if ((sid = udt_sagg_stkid(sg, st, s, seq, stk,
			    nframes)) < 0) {
				/* no room: recorded, and said */
				udt_sagg_add(&acc[s].sa_nostk, 1,
				    __atomic_load_n(&udt_rw_mt,
				    __ATOMIC_RELAXED) != 0 ||
				    !__libc_single_threaded,
				    __ATOMIC_RELAXED);
				return 0;
			}
		}
		ke[n] = NULL;
		if (keys != 0 && (ke[n] = udt_sagg_kentry(sg, kt, kl, s, seq,
		    keys, idx[n], w, (unsigned int)sid)) == NULL)
			return 0;
		slot[n++] = s;
	}
	/*
	 * A return with no stamp of its own: its durations' slots skip
	 * it, as the script would; another slot of the probe's (another
	 * open's) has it recorded, and dtd's fold of the record skips it
	 * for the durations' (no duration in it).
	 */
	if (nolat && n > 0)
		return 0;
	mt = __atomic_load_n(&udt_rw_mt, __ATOMIC_RELAXED) != 0 ||
	    !__libc_single_threaded;
	for (s = 0; s < n; s++) {
		a = &acc[slot[s]];
		v = val[s];
		if (ke[s] != NULL) {
			cnt = &ke[s]->ke_count;
			sum = &ke[s]->ke_sum;
			mn = &ke[s]->ke_min;
			mx = &ke[s]->ke_max;
		} else {
			cnt = &a->sa_count;
			sum = &a->sa_sum;
			mn = &a->sa_min;
			mx = &a->sa_max;
		}
		switch (func[s]) {
		case UDT_SG_COUNT:
			break;
		case UDT_SG_HIST:
		case UDT_SG_LHIST:
			/* a keyed entry's bucket is in its key */
			if (ke[s] == NULL)
				udt_sagg_add(&a->sa_bucket[idx[s]], 1, mt,
				    __ATOMIC_RELAXED);
			break;
		default:
			/* all three, as dtd keeps them for every function */
			udt_sagg_add(sum, (uint64_t)v, mt, __ATOMIC_RELAXED);
			udt_sagg_umax(mn, UDT_SAGG_MINV(v));
			udt_sagg_umax(mx, UDT_SAGG_MAXV(v));
			break;
		}
		/* last, with release: dtd reads the rest after it */
		udt_sagg_add(cnt, 1, mt, __ATOMIC_RELEASE);
		/* the slot's count says to dtd an entry of it moved */
		if (ke[s] != NULL)
			udt_sagg_add(&a->sa_count, 1, mt, __ATOMIC_RELEASE);
	}
	return 1;
}
