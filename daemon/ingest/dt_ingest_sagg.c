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
 * Aggregations folded in the tracees (userdt/udt_sagg.h): the slots'
 * descriptions in every tracee's table, which slot stands for which
 * aggregation of which pcb, and the merge of what the tracees folded
 * into the opens' tables (dt_pcb_fold_src()).  A slot is taken by the
 * syscall provider when a pcb that can be folded in the tracees starts
 * and given back when it stops, after a last merge; a slot taken anew
 * starts dtd's readings of every tracee from what is there, and tags
 * its keyed entries anew (udt_sagg.h), so nothing an earlier user left
 * reaches the new one.
 *
 * What a tracee folded is its word, as its counts are
 * (dt_ingest_ctr.c): a tracee could as well have made the calls.  So a
 * merge believes at most DT_INGEST_DELTA_MAX events of a slot a look,
 * never reads a bucket past its own copy of the slot's description,
 * and takes a min above the max, or an extreme missing, as forged: all
 * of it counted in us_forged and folded nowhere.  A look costs dtd at
 * most UDT_SAGG_NSPEC slots of UDT_SAGG_NBUCKETS words a tracee, and
 * only for the slots in use whose count moved, plus one pass over the
 * keyed entries the tracee ever claimed when a keyed slot's did, each
 * that moved with at most UDT_STACK_MAX frames of its user stack
 * (dts_ustack()): an index past the table or a depth past a record's
 * is forged; a stack not ready, another user's, or changed while read
 * leaves its entry for the next look, which reads that slot's entries
 * whether its count moved or not (dp_sagg_skip), and at the slot's last
 * merge counts what is still left as dropped: never silently lost.  The
 * frames are folded as a
 * record's would be, interned in the open's stack table, whose own
 * bounds hold; a tracee whose stacks filled its table says how many
 * events it recorded instead (sa_nostk, dt_pcb_count_srcstk()).
 *
 * Locks: [L] the ingest lock (dti_tabs_apply(), dti_procs_apply()) for
 * the master and every table; [S] dts_mtx, for the slots' owners and the
 * merges (taken before [L]); [a] atomic.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_sagg.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_proc.h"

_Static_assert(UDT_FF_RETVAL == DTF_RETVAL && UDT_FF_ERRNO == DTF_ERRNO &&
    UDT_FF_ARG0 == DTF_ARG0 && UDT_FF_INT32 == DTF_F_INT32,
    "dtvar.h's numbers are the wire's");
_Static_assert(UDT_SG_COUNT == DTA_COUNT && UDT_SG_LHIST == DTA_LHIST &&
    UDT_SG_HIST == DTA_HIST, "dtvar.h's functions are the wire's");
_Static_assert(UDT_SAGG_HIST_NB == DT_AGG_HIST_NB, "hist's buckets");

/* Who a slot folds for. */
struct dts_slot {
	struct dt_pcb		*ds_pcb;	/* [S] NULL: free */
	const struct dt_aggspec	*ds_as;		/* [S] one of ds_pcb's */
	struct udt_sagg_spec	 ds_spec;	/* [S] as written */
	uint32_t		 ds_seq;	/* [S] its ss_seq: the tag of
						   its keyed entries */
};

static pthread_mutex_t	 dts_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dts_slot	 dts_slots[UDT_SAGG_NSPEC];	/* [S] */
static struct udt_sagg_tab dts_master;			/* [L] */
static _Atomic uint32_t	 dts_used;	/* [S] written, [a] read: slots
					   taken */
static _Atomic unsigned int dts_nstamped;	/* [S] written, [a] read:
						   calls marked for stamps */

static struct udt_sagg_tab *
dts_area(struct udt_tab *tab)
{
	return (struct udt_sagg_tab *)(void *)((char *)tab + UDT_SAGG_OFF);
}

static struct udt_sagg_acc *
dts_acc(const struct dti_proc *dp, unsigned int s)
{
	return (struct udt_sagg_acc *)(void *)((char *)dp->dp_ring +
	    UDT_SAGG_ACC_OFF(dp->dp_nslots)) + s;
}

/*
 * dp's shadow of slot s, made if it has none; NULL without the memory
 * (the look is left for the next).  [S]
 */
static struct dti_sagg_shadow *
dts_shadow(struct dti_proc *dp, unsigned int s)
{
	if (dp->dp_sagg[s] == NULL)
		dp->dp_sagg[s] = calloc(1, sizeof(*dp->dp_sagg[s]));
	return dp->dp_sagg[s];
}

static struct udt_sagg_kent *
dts_kent(const struct dti_proc *dp)
{
	return (struct udt_sagg_kent *)(void *)((char *)dp->dp_ring +
	    UDT_SAGG_KENT_OFF(dp->dp_nslots));
}

static struct udt_sagg_klist *
dts_klist(const struct dti_proc *dp)
{
	return (struct udt_sagg_klist *)(void *)((char *)dp->dp_ring +
	    UDT_SAGG_KLIST_OFF(dp->dp_nslots));
}

static struct udt_sagg_stk *
dts_stk(const struct dti_proc *dp)
{
	return (struct udt_sagg_stk *)(void *)((char *)dp->dp_ring +
	    UDT_SAGG_STK_OFF(dp->dp_nslots));
}

/*
 * The user stack ref (an entry's ke_stk) of slot s's user of tag q in
 * dp's table, copied into sk: 1 when taken (no frame for ref 0); 0 when
 * not whole yet (not ready, another's, or changed while read: the entry
 * waits for the next look); -1 when no honest tracee wrote it (an index
 * past the table, no frame or more than a record holds).  Its state,
 * owner, tag and depth read before the frames and again after them, so
 * that a stack a hook is writing is never taken half-written.  [S]
 */
static int
dts_ustack(const struct dti_proc *dp, uint32_t s, uint32_t q, uint32_t ref,
    struct dt_srckey *sk)
{
	struct udt_sagg_stk *u;
	uint32_t n, i;

	sk->sk_nupc = 0;
	if (ref == 0)
		return 1;
	if (--ref >= UDT_SAGG_NSTK)
		return -1;
	u = dts_stk(dp) + ref;
	if (__atomic_load_n(&u->us_state, __ATOMIC_ACQUIRE) != 2 ||
	    __atomic_load_n(&u->us_seq, __ATOMIC_ACQUIRE) != q ||
	    __atomic_load_n(&u->us_slot, __ATOMIC_RELAXED) != s)
		return 0;
	n = __atomic_load_n(&u->us_nframes, __ATOMIC_RELAXED);
	if (n == 0 || n > UDT_STACK_MAX || n > STACKTRACE_MAX)
		return -1;
	for (i = 0; i < n; i++)
		sk->sk_upc[i] = __atomic_load_n(&u->us_pc[i],
		    __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&u->us_state, __ATOMIC_RELAXED) != 2 ||
	    __atomic_load_n(&u->us_seq, __ATOMIC_RELAXED) != q ||
	    __atomic_load_n(&u->us_slot, __ATOMIC_RELAXED) != s ||
	    __atomic_load_n(&u->us_nframes, __ATOMIC_RELAXED) != n)
		return 0;
	sk->sk_nupc = n;
	return 1;
}

_Static_assert(sizeof(((struct dt_srckey *)0)->sk_comm) == UDT_COMMLEN,
    "a source key's name is the tracee's");

/*
 * The name e's events go under, judged once per entry and thread as a
 * record's is (dti_who()): the process's name at its attach stands (made
 * before an exec); while the thread lives, /proc's, which corrects a lie
 * and follows a rename since; a thread gone keeps its word.  Copied once
 * from the tracee's memory, NUL-terminated.  [S]
 */
static void
dts_comm_judge(const struct dti_proc *dp, const struct udt_sagg_kent *e,
    pid_t tid, char out[UDT_COMMLEN])
{
	char said[UDT_COMMLEN], now[UDT_COMMLEN];
	unsigned int i;

	for (i = 0; i < UDT_COMMLEN; i++)
		said[i] = __atomic_load_n(&e->ke_comm[i], __ATOMIC_RELAXED);
	said[UDT_COMMLEN - 1] = '\0';
	memcpy(out, said, UDT_COMMLEN);
	if (dp->dp_foreign || (dp->dp_comm0[0] != '\0' &&
	    strncmp(said, dp->dp_comm0, UDT_COMMLEN) == 0))
		return;
	if (dt_proc_comm(dp->dp_pid, tid, now, sizeof(now)) == 0)
		memcpy(out, now, UDT_COMMLEN);
}

/*
 * The keyed entries of the slots of mask in dp's table: each one's steps
 * since dtd's last reading of it, merged under its key.  One pass over
 * the entries the tracee listed (udt_sagg_klist), at most
 * UDT_SAGG_NKENT of them whatever it says, for all the slots: a look
 * costs the entries in use.  An entry counts only under its slot's
 * current tag; a listed index is read as the tracee's word, and one
 * listed twice moved only once.  Every field of the key is copied once
 * and judged on the copy: a thread named must be the process's (judged
 * once per entry and tid), a CPU one there is.  An entry whose stack is
 * not whole yet marks its slot in dp_sagg_skip for the next look; at
 * the last (last true) its steps are counted as dropped instead, for
 * the slot's pcb and in dti_stats.lost.  [S]
 */
static void
dts_take_keyed(struct dti_proc *dp, uint32_t mask, bool last)
{
	struct dts_slot *sl;
	struct udt_sagg_kent *kt = dts_kent(dp), *e;
	struct udt_sagg_klist *kl = dts_klist(dp);
	struct dti_sagg_kshadow *ks;
	struct dt_srckey sk;
	uint64_t c, dc, sum, mn, mx;
	uint32_t n, j, i, s, q;
	unsigned int w;
	bool kid;
	int us;
	static long ncpu;

	if (ncpu == 0 && (ncpu = sysconf(_SC_NPROCESSORS_CONF)) <= 0)
		ncpu = 1;
	/* nothing claimed, nothing to read (the last merge asks anyway) */
	if (dp->dp_skent == NULL &&
	    __atomic_load_n(&kl->kl_n, __ATOMIC_RELAXED) == 0)
		return;
	/*
	 * Without the memory nothing is read: the slots stay marked, for
	 * the next look, and the last one's counts are its word alone.
	 */
	if (dp->dp_skent == NULL &&
	    (dp->dp_skent = calloc(UDT_SAGG_NKENT, sizeof(*ks))) == NULL) {
		dp->dp_sagg_skip |= mask;
		return;
	}
	/* marked again below for what stays left */
	dp->dp_sagg_skip &= ~mask;
	/* the slots' counts, read before (acquire), cover these claims */
	n = __atomic_load_n(&kl->kl_n, __ATOMIC_ACQUIRE);
	if (n > UDT_SAGG_NKENT)
		n = UDT_SAGG_NKENT;
	for (j = 0; j < n; j++) {
		i = __atomic_load_n(&kl->kl_idx[j], __ATOMIC_RELAXED);
		if (i == 0 || --i >= UDT_SAGG_NKENT)
			continue;
		e = &kt[i];
		if (__atomic_load_n(&e->ke_state, __ATOMIC_ACQUIRE) != 2)
			continue;
		/* the tag first: the key and the counters' zeroes before it */
		q = __atomic_load_n(&e->ke_seq, __ATOMIC_ACQUIRE);
		s = __atomic_load_n(&e->ke_slot, __ATOMIC_RELAXED);
		if (s >= UDT_SAGG_NSPEC || !(mask & (1u << s)) ||
		    q != dts_slots[s].ds_seq)
			continue;
		sl = &dts_slots[s];
		ks = &dp->dp_skent[i];
		if (ks->ks_seq != q) {
			/* claimed anew for this user: counted from zero */
			memset(ks, 0, sizeof(*ks));
			ks->ks_seq = q;
		}
		c = __atomic_load_n(&e->ke_count, __ATOMIC_ACQUIRE);
		if ((dc = c - ks->ks_count) == 0)
			continue;
		memset(&sk, 0, sizeof(sk));
		/* the stack first: one not whole yet leaves the steps be */
		if ((sl->ds_spec.ss_keys & UDT_SK_USTACK) &&
		    (us = dts_ustack(dp, s, q, __atomic_load_n(&e->ke_stk,
		    __ATOMIC_RELAXED), &sk)) <= 0) {
			if (us == 0 && !last) {
				dp->dp_sagg_skip |= 1u << s;
				continue;
			}
			ks->ks_count = c;
			if (us < 0 || dc >= DT_INGEST_DELTA_MAX) {
				atomic_fetch_add(&dti_stats.forged, dc);
				continue;
			}
			/* the last look: never folded, so told */
			atomic_fetch_add(&dti_stats.lost, dc);
			dt_pcb_count_dropevt(sl->ds_pcb, 0, dc);
			continue;
		}
		ks->ks_count = c;
		sum = __atomic_load_n(&e->ke_sum, __ATOMIC_RELAXED);
		sum -= ks->ks_sum;
		ks->ks_sum += sum;
		mn = __atomic_exchange_n(&e->ke_min, 0, __ATOMIC_ACQUIRE);
		mx = __atomic_exchange_n(&e->ke_max, 0, __ATOMIC_ACQUIRE);
		sk.sk_pid = dp->dp_pid;
		sk.sk_tid = __atomic_load_n(&e->ke_tid, __ATOMIC_RELAXED);
		sk.sk_cpu = __atomic_load_n(&e->ke_cpu, __ATOMIC_RELAXED);
		sk.sk_bucket = __atomic_load_n(&e->ke_bucket,
		    __ATOMIC_RELAXED);
		for (w = 0; w < DT_SRCKEY_NWORDS && w < UDT_NARGS; w++)
			sk.sk_a[w] = __atomic_load_n(&e->ke_a[w],
			    __ATOMIC_RELAXED);
		if (dc >= DT_INGEST_DELTA_MAX ||
		    ((sl->ds_spec.ss_keys & UDT_SK_CPU) &&
		    sk.sk_cpu >= (unsigned long)ncpu)) {
			atomic_fetch_add(&dti_stats.forged, dc);
			continue;
		}
		if ((sl->ds_spec.ss_keys & (UDT_SK_TID | UDT_SK_COMM)) &&
		    ks->ks_tid != sk.sk_tid) {
			/*
			 * Not a child's either: the key says this pid,
			 * and a child sharing the ring is another one.
			 */
			if (!dti_tid_ours(dp, sk.sk_tid, &kid) || kid) {
				atomic_fetch_add(&dti_stats.misnamed, dc);
				continue;
			}
			ks->ks_tid = sk.sk_tid;
			if (sl->ds_spec.ss_keys & UDT_SK_COMM)
				dts_comm_judge(dp, e, sk.sk_tid, ks->ks_comm);
		}
		if (sl->ds_spec.ss_keys & UDT_SK_COMM)
			memcpy(sk.sk_comm, ks->ks_comm, sizeof(sk.sk_comm));
		switch (sl->ds_spec.ss_func) {
		case UDT_SG_COUNT:
		case UDT_SG_HIST:
		case UDT_SG_LHIST:
			/* no value: as dt_agg_fold()'s 0 */
			mn = UDT_SAGG_MINV(0);
			mx = UDT_SAGG_MAXV(0);
			break;
		}
		if (mn == 0 || mx == 0) {
			/* as dts_take(): values taken before their counts */
			if (!ks->ks_has) {
				atomic_fetch_add(&dti_stats.forged, dc);
				continue;
			}
			if (mn == 0)
				mn = UDT_SAGG_MINV(ks->ks_min);
			if (mx == 0)
				mx = UDT_SAGG_MAXV(ks->ks_max);
		}
		if (UDT_SAGG_FROM_MINV(mn) > UDT_SAGG_FROM_MAXV(mx)) {
			atomic_fetch_add(&dti_stats.forged, dc);
			continue;
		}
		ks->ks_has = true;
		ks->ks_min = UDT_SAGG_FROM_MINV(mn);
		ks->ks_max = UDT_SAGG_FROM_MAXV(mx);
		if (dt_pcb_fold_src(sl->ds_pcb, sl->ds_as, &sk, dc,
		    (int64_t)sum, ks->ks_min, ks->ks_max) != 0)
			atomic_fetch_add(&dti_stats.forged, dc);
	}
}

/*
 * The events dp's hooks recorded since the last look for want of a free
 * stack (sa_nostk) in slot s, said to its pcb: they are not lost (dtd
 * folds their records), only not folded where they happened.  The
 * tracee's word, as its counts: a wild step is forged.  [S]
 */
static void
dts_nostk(struct dti_proc *dp, unsigned int s)
{
	struct udt_sagg_acc *a = dts_acc(dp, s);
	struct dti_sagg_shadow *sh;
	uint64_t c, d;

	c = __atomic_load_n(&a->sa_nostk, __ATOMIC_RELAXED);
	if ((sh = dp->dp_sagg[s]) == NULL && c == 0)
		return;
	if (sh == NULL && (sh = dts_shadow(dp, s)) == NULL)
		return;
	if ((d = c - sh->sh_nostk) == 0)
		return;
	sh->sh_nostk = c;
	if (d >= DT_INGEST_DELTA_MAX)
		atomic_fetch_add(&dti_stats.forged, d);
	else
		dt_pcb_count_srcstk(dts_slots[s].ds_pcb, d);
}

/*
 * Take what dp's tracee folded in slot s since the last look, and merge
 * it for the slot's pcb: counts, sums and buckets as the way they moved
 * since dtd last read them (the tracee adds to them plainly while it
 * has one thread: dtd never writes them), the extremes by exchange.
 * True when s is keyed and moved: its entries are then the caller's to
 * take (dts_take_keyed()), with those of the other slots that did.
 * Under [S], dp listed or being freed by the drain thread; the drain
 * thread, or a stop's last merge under [L].
 */
static bool
dts_take(struct dti_proc *dp, unsigned int s)
{
	struct dts_slot *sl = &dts_slots[s];
	struct udt_sagg_acc *a = dts_acc(dp, s);
	struct dti_sagg_shadow *sh;
	struct dt_srckey sk;
	uint64_t c, dc, sum, mn, mx, b, db[UDT_SAGG_NBUCKETS];
	unsigned int i, nb, bad;
	bool wild;

	if (sl->ds_pcb != NULL && (sl->ds_spec.ss_keys & UDT_SK_USTACK))
		dts_nostk(dp, s);
	c = __atomic_load_n(&a->sa_count, __ATOMIC_ACQUIRE);
	if (sl->ds_pcb == NULL || ((sh = dp->dp_sagg[s]) == NULL && c == 0))
		return false;
	if (sh == NULL && (sh = dts_shadow(dp, s)) == NULL)
		return false;
	if ((dc = c - sh->sh_count) == 0)
		return false;
	sh->sh_count = c;
	/* a keyed slot's count only says that some entry of it moved */
	if (sl->ds_spec.ss_keys != 0)
		return true;
	memset(&sk, 0, sizeof(sk));
	sk.sk_pid = dp->dp_pid;
	/* a wild step: believe none of it, follow the words */
	wild = dc >= DT_INGEST_DELTA_MAX;
	if (wild)
		atomic_fetch_add(&dti_stats.forged, dc);
	switch (sl->ds_spec.ss_func) {
	case UDT_SG_COUNT:
		if (!wild)
			(void)dt_pcb_fold_src(sl->ds_pcb, sl->ds_as, &sk, dc,
			    0, 0, 0);
		return false;
	case UDT_SG_HIST:
	case UDT_SG_LHIST:
		/* ours, not the tracee's copy: never past what we wrote */
		nb = sl->ds_spec.ss_nbuckets;
		for (i = 0; i < nb; i++) {
			b = __atomic_load_n(&a->sa_bucket[i],
			    __ATOMIC_RELAXED);
			db[i] = b - sh->sh_bucket[i];
			sh->sh_bucket[i] = b;
			if (db[i] >= DT_INGEST_DELTA_MAX) {
				atomic_fetch_add(&dti_stats.forged, db[i]);
				db[i] = 0;
			}
		}
		if (wild)
			return false;
		bad = dt_pcb_fold_src_buckets(sl->ds_pcb, sl->ds_as,
		    dp->dp_pid, db, nb);
		if (bad != 0)
			atomic_fetch_add(&dti_stats.forged, bad);
		return false;
	}
	sum = __atomic_load_n(&a->sa_sum, __ATOMIC_RELAXED);
	mn = __atomic_exchange_n(&a->sa_min, 0, __ATOMIC_ACQUIRE);
	mx = __atomic_exchange_n(&a->sa_max, 0, __ATOMIC_ACQUIRE);
	dc = wild ? 0 : dc;
	sum -= sh->sh_sum;
	sh->sh_sum += sum;
	if (dc == 0)
		return false;
	if (mn == 0 || mx == 0) {
		/*
		 * Events whose values a look took just before their
		 * counts: those values are in the last extremes taken.
		 */
		if (!sh->sh_has) {
			atomic_fetch_add(&dti_stats.forged, dc);
			return false;
		}
		if (mn == 0)
			mn = UDT_SAGG_MINV(sh->sh_min);
		if (mx == 0)
			mx = UDT_SAGG_MAXV(sh->sh_max);
	}
	if (UDT_SAGG_FROM_MINV(mn) > UDT_SAGG_FROM_MAXV(mx)) {
		atomic_fetch_add(&dti_stats.forged, dc);
		return false;
	}
	sh->sh_has = true;
	sh->sh_min = UDT_SAGG_FROM_MINV(mn);
	sh->sh_max = UDT_SAGG_FROM_MAXV(mx);
	(void)dt_pcb_fold_src(sl->ds_pcb, sl->ds_as, &sk, dc, (int64_t)sum,
	    sh->sh_min, sh->sh_max);
	return false;
}

/*
 * A look at every slot in use of dp's table; at the last (last true),
 * what its entries still wait for is counted as dropped.  [S]
 */
static void
dts_look(struct dti_proc *dp, bool last)
{
	uint32_t used = atomic_load(&dts_used), keyed = 0;
	unsigned int s;

	for (s = 0; s < UDT_SAGG_NSPEC; s++)
		if ((used & (1u << s)) && dts_take(dp, s))
			keyed |= 1u << s;
	/* entries left at an earlier look: their counts may never move */
	keyed |= dp->dp_sagg_skip & used;
	if (keyed != 0)
		dts_take_keyed(dp, keyed, last);
	if (last)
		dp->dp_sagg_skip = 0;
}

void
dti_sagg_take(struct dti_proc *dp)
{
	/* dp_sagg_last: written by this thread (dti_sagg_leave()) */
	if (atomic_load(&dts_used) == 0 || dp->dp_sagg_last)
		return;
	pthread_mutex_lock(&dts_mtx);
	dts_look(dp, false);
	pthread_mutex_unlock(&dts_mtx);
}

/* Whether dp's tracee folded anything since the last look.  [S] */
static bool
dts_moved(struct dti_proc *dp, uint32_t used)
{
	struct dti_sagg_shadow *sh;
	uint64_t c;
	unsigned int s;

	if ((dp->dp_sagg_skip & used) != 0)
		return true;
	for (s = 0; s < UDT_SAGG_NSPEC; s++) {
		if (!(used & (1u << s)) || dts_slots[s].ds_pcb == NULL)
			continue;
		c = __atomic_load_n(&dts_acc(dp, s)->sa_count,
		    __ATOMIC_ACQUIRE);
		sh = dp->dp_sagg[s];
		if (sh != NULL ? c != sh->sh_count : c != 0)
			return true;
	}
	return false;
}

/*
 * Whether dp's tables may be folded: not if its image was found changed
 * (dti_counters()), nor if a look now finds it changed where anything
 * moved; the ring is then retired.  For the looks no drain pass made
 * before them: a process's last, and a slot given back.  [S]
 */
static bool
dts_judged(struct dti_proc *dp)
{
	if (atomic_load(&dp->dp_imagebad))
		return false;
	if (dp->dp_uid == 0 || !dts_moved(dp, atomic_load(&dts_used)) ||
	    dt_ingest_image_ok(dp->dp_pid, dp->dp_uid, dp->dp_gid,
	    dp->dp_rgid, dp->dp_pidfd, true))
		return true;
	atomic_store(&dp->dp_imagebad, true);
	dti_discard(dp, DTI_WHY_IMAGE, 0);
	return false;
}

bool
dti_sagg_moved(struct dti_proc *dp)
{
	uint32_t used;
	bool moved;

	if ((used = atomic_load(&dts_used)) == 0 || dp->dp_sagg_last)
		return false;
	pthread_mutex_lock(&dts_mtx);
	moved = dts_moved(dp, used);
	pthread_mutex_unlock(&dts_mtx);
	return moved;
}

void
dti_sagg_gone(struct dti_proc *dp)
{
	uint32_t mask;

	/*
	 * Unlisted already: no last merge writes its mask any more, so
	 * the usual exit, with nothing left, takes no lock.
	 */
	if (dp->dp_sagg_skip == 0)
		return;
	pthread_mutex_lock(&dts_mtx);
	if (atomic_load(&dp->dp_imagebad)) {
		dp->dp_sagg_skip = 0;
		pthread_mutex_unlock(&dts_mtx);
		return;
	}
	/* its slots given back since were read by their last merge */
	mask = dp->dp_sagg_skip & atomic_load(&dts_used);
	if (mask != 0)
		dts_take_keyed(dp, mask, true);
	dp->dp_sagg_skip = 0;
	pthread_mutex_unlock(&dts_mtx);
}

bool
dti_sagg_enter(void)
{
	/*
	 * No slot in use: one taken from now on starts every reading
	 * afresh (dts_restart()), and a process that has ended folds
	 * nothing more for it.
	 */
	if (atomic_load(&dts_used) == 0)
		return false;
	pthread_mutex_lock(&dts_mtx);
	return true;
}

void
dti_sagg_leave(struct dti_proc *gone)
{
	struct dti_proc *dp;

	/*
	 * As dti_sagg_take() then dti_sagg_gone() would do after the
	 * proc's last drain: nothing is folded into its table any more,
	 * so that drain adds nothing here, and both find nothing after.
	 */
	for (dp = gone; dp != NULL; dp = dp->dp_next) {
		/* a set-id exec's: nothing more of it (dti_counters()) */
		if (dts_judged(dp))
			dts_look(dp, true);
		else
			dp->dp_sagg_skip = 0;
		dp->dp_sagg_last = true;
	}
	pthread_mutex_unlock(&dts_mtx);
}

void
dti_sagg_copy(struct udt_tab *tab)
{
	dti_copy_fresh(dts_area(tab), &dts_master, sizeof(dts_master));
}

/* What one change does to a table (or the master, with tab NULL). [L] */
struct dts_change {
	int			 dc_slot;	/* -1: sg_probe[dc_probe]; -2:
						   sg_stamp[dc_probe] */
	const struct udt_sagg_spec *dc_spec;	/* NULL: ss_seq alone */
	unsigned int		 dc_probe;
	uint32_t		 dc_mask;
	uint32_t		 dc_seq;	/* the slot's new, even; -2: the
						   call's new sg_latgen */
	uint8_t			 dc_stamp;	/* -2: UDT_SST_* */
};

static void
dts_apply(struct udt_tab *tab, void *arg)
{
	const struct dts_change *dc = arg;
	struct udt_sagg_tab *sg = tab != NULL ? dts_area(tab) : &dts_master;
	struct udt_sagg_spec *sp;

	if (sg->sg_magic != UDT_SAGG_MAGIC)
		sg->sg_magic = UDT_SAGG_MAGIC;
	if (dc->dc_slot == -2) {
		/*
		 * The rate, then the mark, then the generation that pairs.
		 * The rate read here, under [L] as dt_ingest_sagg_rate()
		 * reads it: the last to write writes the newest.
		 */
		__atomic_store_n(&sg->sg_tsc_mult, dt_tsc_mult(),
		    __ATOMIC_RELAXED);
		__atomic_store_n(&sg->sg_stamp[dc->dc_probe], dc->dc_stamp,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&sg->sg_latgen[dc->dc_probe],
		    (uint16_t)dc->dc_seq, __ATOMIC_RELEASE);
		return;
	}
	if (dc->dc_slot < 0) {
		__atomic_store_n(&sg->sg_probe[dc->dc_probe], dc->dc_mask,
		    __ATOMIC_RELEASE);
		return;
	}
	sp = &sg->sg_spec[dc->dc_slot];
	if (dc->dc_spec == NULL) {
		/* the slot's keyed entries stale: any hook may claim them */
		__atomic_store_n(&sp->ss_seq, dc->dc_seq, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&sp->ss_seq, dc->dc_seq - 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	sp->ss_func = dc->dc_spec->ss_func;
	sp->ss_vfield = dc->dc_spec->ss_vfield;
	sp->ss_vflags = dc->dc_spec->ss_vflags;
	sp->ss_nbuckets = dc->dc_spec->ss_nbuckets;
	sp->ss_lq0 = dc->dc_spec->ss_lq0;
	sp->ss_lmin = dc->dc_spec->ss_lmin;
	sp->ss_lmax = dc->dc_spec->ss_lmax;
	sp->ss_lstep = dc->dc_spec->ss_lstep;
	sp->ss_keys = dc->dc_spec->ss_keys;
	__atomic_store_n(&sp->ss_seq, dc->dc_seq, __ATOMIC_RELEASE);
}

/* A take's restart of one slot in every tracee. */
struct dts_restart {
	unsigned int		 dr_slot;
	bool			 dr_failed;	/* a shadow not made */
};

/*
 * Start slot s of dp afresh for a new user: what an earlier one left in
 * the counters is where dtd's reading starts; the extremes are taken
 * away.  dtd writes no counter: the tracee may add to them plainly, and
 * a store of ours could lose its adds.  So without the memory for a
 * reading, the take fails (dr_failed) and the rule records.  The keyed
 * entries need nothing: the take's new tag makes them stale.  [S][L]
 */
static void
dts_restart(struct dti_proc *dp, void *arg)
{
	struct dts_restart *dr = arg;
	unsigned int s = dr->dr_slot, i;
	struct udt_sagg_acc *a = dts_acc(dp, s);
	struct dti_sagg_shadow *sh;

	(void)__atomic_exchange_n(&a->sa_min, 0, __ATOMIC_RELAXED);
	(void)__atomic_exchange_n(&a->sa_max, 0, __ATOMIC_RELAXED);
	if ((sh = dts_shadow(dp, s)) == NULL) {
		dr->dr_failed = true;
		return;
	}
	sh->sh_count = __atomic_load_n(&a->sa_count, __ATOMIC_RELAXED);
	sh->sh_nostk = __atomic_load_n(&a->sa_nostk, __ATOMIC_RELAXED);
	sh->sh_sum = __atomic_load_n(&a->sa_sum, __ATOMIC_RELAXED);
	for (i = 0; i < UDT_SAGG_NBUCKETS; i++)
		sh->sh_bucket[i] = __atomic_load_n(&a->sa_bucket[i],
		    __ATOMIC_RELAXED);
	sh->sh_has = false;
}

void
dti_sagg_free(struct dti_proc *dp)
{
	unsigned int s;

	for (s = 0; s < UDT_SAGG_NSPEC; s++) {
		free(dp->dp_sagg[s]);
		dp->dp_sagg[s] = NULL;
	}
	free(dp->dp_skent);
	dp->dp_skent = NULL;
}

/*
 * A slot's next ss_seq, even, never one any slot had: the hooks claim a
 * stale stack or entry over by its state and tag together
 * (udt_sagg_claimover()), which holds only while no claim can write
 * the tag it found stale, another slot's user's included.  Past the
 * slot's own ones too, so that its hooks see it move forward.  [S]
 */
static uint32_t
dts_nextseq(void)
{
	static uint32_t last;	/* [S] the last tag handed out */

	last = (last | 1) + 1;
	return last;
}

int
dt_ingest_sagg_take(struct dt_pcb *dp, const struct dt_aggspec *as,
    const struct udt_sagg_spec *spec)
{
	struct dts_change dc;
	struct dts_restart dr;
	unsigned int s;

	pthread_mutex_lock(&dts_mtx);
	for (s = 0; s < UDT_SAGG_NSPEC; s++)
		if (dts_slots[s].ds_pcb == NULL)
			break;
	if (s == UDT_SAGG_NSPEC) {
		pthread_mutex_unlock(&dts_mtx);
		return -1;
	}
	/* No probe names it: a hook may only be late, and then records. */
	dr.dr_slot = s;
	dr.dr_failed = false;
	dti_procs_apply(dts_restart, &dr);
	if (dr.dr_failed) {
		/* the readings made stay unused: the slot is still free */
		pthread_mutex_unlock(&dts_mtx);
		return -1;
	}
	memset(&dc, 0, sizeof(dc));
	dc.dc_slot = (int)s;
	dc.dc_spec = spec;
	/* [S] keeps it: only a take or a give writes a slot's ss_seq */
	dc.dc_seq = dts_nextseq();
	dti_tabs_apply(dts_apply, &dc);
	dts_slots[s].ds_pcb = dp;
	dts_slots[s].ds_as = as;
	dts_slots[s].ds_spec = *spec;
	dts_slots[s].ds_seq = dc.dc_seq;
	atomic_fetch_or(&dts_used, 1u << s);
	pthread_mutex_unlock(&dts_mtx);
	return (int)s;
}

void
dt_ingest_sagg_probe(unsigned int p, uint32_t mask)
{
	struct dts_change dc;

	if (p >= DT_SYS_NPROBES)
		return;
	memset(&dc, 0, sizeof(dc));
	dc.dc_slot = -1;
	dc.dc_probe = p;
	dc.dc_mask = mask;
	dti_tabs_apply(dts_apply, &dc);
}

void
dt_ingest_sagg_stamp(unsigned int call, uint8_t flags, bool newgen)
{
	struct dts_change dc;

	if (call >= UDT_NPROBES_MAX / 2)
		return;
	memset(&dc, 0, sizeof(dc));
	dc.dc_slot = -2;
	dc.dc_probe = call;
	dc.dc_stamp = flags;
	/*
	 * This call's alone: a fold of another call coming or going leaves
	 * the stamps of this one's in flight good.
	 */
	pthread_mutex_lock(&dts_mtx);
	dc.dc_seq = (uint16_t)(__atomic_load_n(&dts_master.sg_latgen[call],
	    __ATOMIC_RELAXED) + (newgen ? 1 : 0));
	if (dts_master.sg_stamp[call] == 0 && flags != 0)
		atomic_fetch_add(&dts_nstamped, 1);
	else if (dts_master.sg_stamp[call] != 0 && flags == 0)
		atomic_fetch_sub(&dts_nstamped, 1);
	dti_tabs_apply(dts_apply, &dc);
	pthread_mutex_unlock(&dts_mtx);
}

/* The rate alone, in the master and every table. [L] */
static void
dts_rate(struct udt_tab *tab, void *arg)
{
	struct udt_sagg_tab *sg = tab != NULL ? dts_area(tab) : &dts_master;

	(void)arg;
	__atomic_store_n(&sg->sg_tsc_mult, dt_tsc_mult(), __ATOMIC_RELAXED);
}

void
dt_ingest_sagg_rate(void)
{
	/* nothing times a call: the next mark writes the rate */
	if (atomic_load(&dts_nstamped) == 0)
		return;
	dti_tabs_apply(dts_rate, NULL);
}

/*
 * The last merge of a slot given back, from every tracee: a keyed
 * slot's entries read whether its count moved or not (one left at an
 * earlier look may not have), and what cannot be folded now never will
 * be: dropped.  [S][L]
 */
static void
dts_last(struct dti_proc *dp, void *arg)
{
	unsigned int s = *(const unsigned int *)arg;

	if (dts_judged(dp) &&
	    (dts_take(dp, s) || dts_slots[s].ds_spec.ss_keys != 0))
		dts_take_keyed(dp, 1u << s, true);
	dp->dp_sagg_skip &= ~(1u << s);
}

void
dt_ingest_sagg_give(uint32_t mask)
{
	struct dts_change dc;
	unsigned int s;

	pthread_mutex_lock(&dts_mtx);
	for (s = 0; s < UDT_SAGG_NSPEC; s++) {
		if (!(mask & (1u << s)) || dts_slots[s].ds_pcb == NULL)
			continue;
		dti_procs_apply(dts_last, &s);
		/*
		 * Its entries free for any slot's user from now on, not
		 * only for the slot's next one.
		 */
		memset(&dc, 0, sizeof(dc));
		dc.dc_slot = (int)s;
		dc.dc_seq = dts_nextseq();
		dti_tabs_apply(dts_apply, &dc);
		memset(&dts_slots[s], 0, sizeof(dts_slots[s]));
		atomic_fetch_and(&dts_used, ~(1u << s));
	}
	pthread_mutex_unlock(&dts_mtx);
}
