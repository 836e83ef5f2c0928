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
 * A kernel program's counts (dt_tp_kbpf.h) and their drain, for the
 * tracepoints' programs (dt_tp_kbpf.c) and the syscall groups'
 * (dt_tp_ksysbpf.c) alike.
 *
 * Exact drain: an entry read and deleted while a program adds to it
 * would lose the add.  So the key carries a generation: at each read
 * dtd flips the generation every program of the open reads (dac_flip),
 * waits once until no program that read an old one still runs
 * (dac_wait: MEMBARRIER_CMD_GLOBAL is an RCU grace period, and a
 * tracepoint's programs run with preemption off), then reads and
 * deletes the old generations' entries, which no one touches any more
 * (dac_sync).  One dac_wait for all: dt_aggctr waits once per distinct
 * hook, so every drain here shares dt_kbpf_wait.  The map holds twice
 * the open's table, the two generations' worth, at most KD_MAXENT;
 * past that, the program counts what it could not put (the overflow
 * counter), which dtd reports as a full table's.  The last drain,
 * after the detach and a grace period, takes all.
 *
 * Locks used to protect struct members in this file (dt_tp_kbpf.h):
 *	[I]	immutable after dt_kbpf_drain_attach()
 *	[K]	the core's configuration lock
 *	[c]	the core's counter registry lock (dt_aggctr's dac_sync)
 *	[a]	atomic
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/membarrier.h>
#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_perfev.h"
#include "dt_tp_kbpf.h"
#include "dt_tp_task.h"
#include "dt_tp_var.h"

/* Keys a drain's buffer first holds; doubled as the walk needs. */
#define KD_KEYS0	1024
/*
 * The map's entries at most, both generations: past it the program
 * counts overflow, said.  What one entry may cost the kernel, charged
 * to the open's memory (dt_limit_charge()) before the map is made: its
 * bucket, the element with its key, and a value for each CPU.
 */
#define KD_MAXENT	65536
#define KD_ENTBYTES(ncpu)	(16 + 64 + sizeof(struct dt_kbpf_key) + \
				 8 * (uint64_t)(ncpu))
/* The initial pid namespace's inode (PROC_PID_INIT_INO). */
#define KD_INITPIDNS	0xEFFFFFFCU
/*
 * A per-CPU value is copied out for every possible CPU: room past our
 * count of them, should the kernel count more than its list says.
 */
#define KD_SPARECPUS	64
/* Causes dt_kbpf_say() remembers. */
#define KD_NSAID	16

/*
 * Say why who's counts are sampled after all, once per cause whoever
 * it stops (an open's probes of one cause would each say it): the last
 * KD_NSAID causes are remembered, one that came back after as many
 * others is said again.  [K].
 */
void
dt_kbpf_say(const char *who, const char *what, const char *why)
{
	static char said[KD_NSAID][256];	/* [K] */
	static unsigned int next;		/* [K] */
	char line[sizeof(said[0])];
	unsigned int i;

	snprintf(line, sizeof(line), "%s: %s", what, why);
	for (i = 0; i < KD_NSAID; i++)
		if (strcmp(line, said[i]) == 0)
			return;
	memcpy(said[next], line, sizeof(said[0]));
	next = (next + 1) % KD_NSAID;
	fprintf(stderr, "dtd: %s: no count in the kernel (%s), sampled\n",
	    who, line);
}

/*
 * Whether dtd's pid namespace is the initial one, the only one the
 * program's ids are dtd's in: it reads the initial namespace's pid and
 * tid, perf's records (and the ingest's tracees) are dtd's namespace's;
 * and whether the kernel has the barrier the drain waits with.  [K].
 */
bool
dt_kbpf_usable(const char *who)
{
	struct stat st;
	int mc;

	if (stat("/proc/self/ns/pid", &st) != 0 ||
	    st.st_ino != KD_INITPIDNS) {
		dt_kbpf_say(who, "pid namespace", "not the initial one");
		return false;
	}
	mc = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (mc == -1 || !(mc & MEMBARRIER_CMD_GLOBAL)) {
		dt_kbpf_say(who, "membarrier", "no global barrier");
		return false;
	}
	return true;
}

/* The generation the program counts in, from now on. [c] or [K]. */
static void
dt_kbpf_setgen(struct dt_kbpf_drain *kd, uint32_t gen)
{
	(void)dt_kbpf_put(kd->kd_gen, 0, gen);
	kd->kd_cur = gen;
}

/* Sum of a per-CPU value read into kd_vals; false if gone. [c]. */
static bool
dt_kbpf_lookup(struct dt_kbpf_drain *kd, int fd, const void *key,
    uint64_t *sum)
{
	union bpf_attr a;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)kd->kd_vals;
	if (dt_kbpf_bpf(BPF_MAP_LOOKUP_ELEM, &a) != 0)
		return false;
	for (*sum = 0, i = 0; i < kd->kd_ncpu; i++)
		*sum += kd->kd_vals[i];
	return true;
}

/*
 * dac_flip: the program counts in the other generation from now on; the
 * one it left is the next dac_sync()'s, once dac_wait() has returned
 * true.  Once detached nothing counts: the sync takes all.  A flip whose
 * wait failed is flipped back by the next: what it left is then drained
 * with the other's adds, one read later, never lost.  [c].
 */
static void
dt_kbpf_flip(struct dt_aggctr *c)
{
	struct dt_kbpf_drain *kd = (struct dt_kbpf_drain *)c;

	kd->kd_flipped = true;
	kd->kd_drain = kd->kd_cur;
	/*
	 * Decided here, not at the sync: a stop between this flip and its
	 * sync must not make the sync take the generation still counted in
	 * (a run in flight would add to an entry already deleted).
	 */
	kd->kd_all = atomic_load(&kd->kd_final);
	if (!kd->kd_all)
		dt_kbpf_setgen(kd, kd->kd_cur ^ 1);
}

/*
 * dac_wait: no program that read a flipped generation still runs
 * (MEMBARRIER_CMD_GLOBAL is an RCU grace period, and a tracepoint's
 * programs run with preemption off); one for every drain a read flips,
 * whichever file's.
 */
static bool
dt_kbpf_wait(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

/*
 * The runs the kernel skipped since the last call (another BPF program
 * ran on that CPU: its recursion guard), counted as the recursive
 * events they were; they may not all have passed the filter, so this
 * says as many or more than were lost, never fewer.  [c].
 */
static void
dt_kbpf_drain_misses(struct dt_kbpf_drain *kd)
{
	uint64_t m = dt_kbpf_misses(kd->kd_prog);

	if (m <= kd->kd_misses)
		return;
	dt_pcb_count_recurevt(kd->kd_ctr.dac_dp, 0, m - kd->kd_misses);
	kd->kd_misses = m;
}

/* k's count folded into its pcb's table, named as a record is. [c]. */
static void
dt_kbpf_fold(struct dt_kbpf_drain *kd, const struct dt_kbpf_key *k,
    uint64_t v)
{
	char comm[DTMAXCOMLEN];
	struct dt_srckey sk;
	struct dt_pcb *dp;

	dp = kd->kd_pcb != NULL ? kd->kd_pcb(kd, k) : kd->kd_ctr.dac_dp;
	if (dp == NULL)
		return;
	memset(&sk, 0, sizeof(sk));
	sk.sk_pid = (pid_t)k->kk_pid;
	sk.sk_tid = (int32_t)k->kk_tid;
	sk.sk_cpu = k->kk_cpu;
	/* named as a record is (dt_tp_task.c) */
	if (k->kk_gen & DT_KBPF_IDLE) {
		memset(comm, 0, sizeof(comm));
		snprintf(comm, sizeof(comm), "idle%u", k->kk_cpu);
	} else
		dt_tp_task_kname(k->kk_comm, (pid_t)k->kk_pid,
		    (k->kk_gen & DT_KBPF_TASK) ? (pid_t)k->kk_tid : 0, comm);
	dt_pcb_fold_kkey(dp, &sk, comm, v);
}

/*
 * k's count folded, or for a young process's key (DT_KBPF_YOUNG) what
 * kd_young says: folded as rewritten, dropped, or held for the next
 * drain (folded now if it cannot be held).  [c].
 */
static void
dt_kbpf_fold_young(struct dt_kbpf_drain *kd, const struct dt_kbpf_key *k,
    uint64_t v)
{
	struct dt_kbpf_key yk;
	struct dt_kbpf_held *h;
	uint32_t max;

	if (!(k->kk_gen & DT_KBPF_YOUNG) || kd->kd_young == NULL) {
		dt_kbpf_fold(kd, k, v);
		return;
	}
	yk = *k;
	switch (kd->kd_young(kd, &yk, kd->kd_all)) {
	case DT_KBPF_DROP:
		return;
	case DT_KBPF_HOLD:
		if (kd->kd_nheld == kd->kd_maxheld) {
			max = kd->kd_maxheld == 0 ? 16 : 2 * kd->kd_maxheld;
			if ((h = reallocarray(kd->kd_held, max, sizeof(*h))) ==
			    NULL) {
				/* no room to hold: as a last drain decides */
				yk = *k;
				if (kd->kd_young(kd, &yk, true) ==
				    DT_KBPF_FOLD)
					dt_kbpf_fold(kd, &yk, v);
				return;
			}
			kd->kd_held = h;
			kd->kd_maxheld = max;
		}
		kd->kd_held[kd->kd_nheld].kh_key = *k;
		kd->kd_held[kd->kd_nheld++].kh_count = v;
		return;
	default:
		dt_kbpf_fold(kd, &yk, v);
		return;
	}
}

/* The held counts asked again: folded, dropped or held on.  [c]. */
static void
dt_kbpf_held(struct dt_kbpf_drain *kd)
{
	struct dt_kbpf_key yk;
	uint32_t i, n = 0;

	for (i = 0; i < kd->kd_nheld; i++) {
		yk = kd->kd_held[i].kh_key;
		switch (kd->kd_young(kd, &yk, kd->kd_all)) {
		case DT_KBPF_HOLD:
			kd->kd_held[n++] = kd->kd_held[i];
			break;
		case DT_KBPF_FOLD:
			dt_kbpf_fold(kd, &yk, kd->kd_held[i].kh_count);
			break;
		default:
			break;
		}
	}
	kd->kd_nheld = n;
}

/*
 * The keys this sync takes, in one walk of the map, into *keys (dtd's
 * memory, grown as needed; the caller frees it); their number.  The
 * walk deletes nothing (a delete under it would restart it from the
 * first key), and no one adds a key it takes: the program counts only
 * in the current generation since the flip and its wait, and in none
 * once detached.  The map holds at most kd_nent entries, so a walk of
 * as many steps has seen them all.  Out of memory, the walk stops: the
 * keys it did not reach stay, for a later drain of their generation.
 * [c].
 */
static uint32_t
dt_kbpf_walk(struct dt_kbpf_drain *kd, struct dt_kbpf_key **keys)
{
	struct dt_kbpf_key at, *nk;
	uint32_t n = 0, cap = 0, step;
	union bpf_attr a;

	*keys = NULL;
	for (step = 0; step < kd->kd_nent; step++) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)kd->kd_map;
		a.key = step > 0 ? (uint64_t)(uintptr_t)&at : 0;
		a.next_key = (uint64_t)(uintptr_t)&at;
		if (dt_kbpf_bpf(BPF_MAP_GET_NEXT_KEY, &a) != 0)
			break;
		if (!kd->kd_all && (at.kk_gen & 1) != kd->kd_drain)
			continue;
		if (n == cap) {
			cap = cap == 0 ? KD_KEYS0 : 2 * cap;
			if (cap > kd->kd_nent)
				cap = kd->kd_nent;
			if ((nk = reallocarray(*keys, cap, sizeof(*nk))) ==
			    NULL)
				break;
			*keys = nk;
		}
		(*keys)[n++] = at;
	}
	return n;
}

/*
 * Read, delete and fold keys[0 .. n - 1]: a key's count is folded only
 * once its delete succeeded, else a later drain would fold it again.  A
 * failed delete (a busy bucket, no memory) is tried again in another
 * pass over those that failed, until a pass deletes none; what is still
 * left then stays in the map, whole, for the next drain of its
 * generation (the program may add to it meanwhile: those adds are
 * drained with it, after a wait).  [c].
 */
static void
dt_kbpf_take(struct dt_kbpf_drain *kd, struct dt_kbpf_key *keys, uint32_t n)
{
	union bpf_attr a;
	uint32_t i, left, gone;
	uint64_t v;

	for (;;) {
		for (i = left = gone = 0; i < n; i++) {
			if (!dt_kbpf_lookup(kd, kd->kd_map, &keys[i], &v))
				continue;
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)kd->kd_map;
			a.key = (uint64_t)(uintptr_t)&keys[i];
			if (dt_kbpf_bpf(BPF_MAP_DELETE_ELEM, &a) != 0) {
				keys[left++] = keys[i];
				continue;
			}
			gone++;
			dt_kbpf_fold_young(kd, &keys[i], v);
		}
		if (left == 0 || gone == 0)
			break;
		n = left;
	}
}

/*
 * dac_sync: fold the counts of the generation the program left (all,
 * if the flip said so: detached), and the overflow's and misses'
 * growth.  [c].
 */
static void
dt_kbpf_sync(struct dt_aggctr *c)
{
	struct dt_kbpf_drain *kd = (struct dt_kbpf_drain *)c;
	struct dt_kbpf_key *keys;
	uint32_t n, zero = 0;
	uint64_t v;

	if (!kd->kd_flipped)
		return;
	kd->kd_flipped = false;
	if (kd->kd_nheld > 0)
		dt_kbpf_held(kd);
	n = dt_kbpf_walk(kd, &keys);
	dt_kbpf_take(kd, keys, n);
	free(keys);
	if (dt_kbpf_lookup(kd, kd->kd_ovf, &zero, &v) && v > kd->kd_lost) {
		dt_pcb_fold_klost(c->dac_dp, v - kd->kd_lost);
		kd->kd_lost = v;
	}
	dt_kbpf_drain_misses(kd);
}

bool
dt_kbpf_drain_init(struct dt_kbpf_drain *kd, struct dt_pcb *dp,
    uint32_t size, unsigned int nfds, const char *prefix)
{
	char name[BPF_OBJ_NAME_LEN];

	kd->kd_map = kd->kd_gen = kd->kd_ovf = kd->kd_prog = -1;
	kd->kd_ev = -1;
	kd->kd_ctr.dac_dp = dp;
	if (size == 0 || size > UINT32_MAX / 2 ||
	    (kd->kd_ncpu = dt_kbpf_cpus()) == 0)
		return false;
	kd->kd_nent = size < KD_MAXENT / 2 ? 2 * size : KD_MAXENT;
	kd->kd_cred = dt_sc_cred(dp->dp_sc);
	if (!dt_perf_fds_charge(nfds)) {
		dt_kbpf_say(kd->kd_who, "descriptors", "the budget is spent");
		return false;
	}
	kd->kd_nfds = nfds;
	if (dt_limit_charge(kd->kd_cred, (uint64_t)kd->kd_nent *
	    KD_ENTBYTES(kd->kd_ncpu)) != 0) {
		dt_kbpf_say(kd->kd_who, "map", "over the memory limit");
		return false;
	}
	kd->kd_mem = (uint64_t)kd->kd_nent * KD_ENTBYTES(kd->kd_ncpu);
	snprintf(name, sizeof(name), "%scount", prefix);
	kd->kd_map = dt_kbpf_map(BPF_MAP_TYPE_PERCPU_HASH,
	    sizeof(struct dt_kbpf_key), sizeof(uint64_t), kd->kd_nent, name);
	snprintf(name, sizeof(name), "%sgen", prefix);
	if (kd->kd_map == -1 ||
	    (kd->kd_gen = dt_kbpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t),
	    sizeof(uint32_t), 1, name)) == -1)
		goto bad;
	snprintf(name, sizeof(name), "%sover", prefix);
	if ((kd->kd_ovf = dt_kbpf_map(BPF_MAP_TYPE_PERCPU_ARRAY,
	    sizeof(uint32_t), sizeof(uint64_t), 1, name)) == -1)
		goto bad;
	return (kd->kd_vals = calloc(kd->kd_ncpu + KD_SPARECPUS,
	    sizeof(*kd->kd_vals))) != NULL;
bad:
	dt_kbpf_say(kd->kd_who, "map", strerror(errno));
	return false;
}

bool
dt_kbpf_drain_load(struct dt_kbpf_drain *kd, struct dt_kbpf_spec *s,
    int id)
{
	char why[200];

	s->kbs_tidoff = dt_tid_offset();
	s->kbs_mapfd = kd->kd_map;
	s->kbs_genfd = kd->kd_gen;
	s->kbs_ovffd = kd->kd_ovf;
	if ((kd->kd_prog = dt_kbpf_load(s, why, sizeof(why))) == -1) {
		dt_kbpf_say(kd->kd_who, "program", why);
		return false;
	}
	if ((kd->kd_ev = dt_kbpf_event(id)) == -1) {
		dt_kbpf_say(kd->kd_who, "event", strerror(errno));
		return false;
	}
	dt_kbpf_setgen(kd, 0);
	return true;
}

bool
dt_kbpf_drain_attach(struct dt_kbpf_drain *kd)
{
	if (ioctl(kd->kd_ev, PERF_EVENT_IOC_SET_BPF, kd->kd_prog) == -1) {
		dt_kbpf_say(kd->kd_who, "attach", strerror(errno));
		return false;
	}
	kd->kd_ctr.dac_sync = dt_kbpf_sync;
	kd->kd_ctr.dac_flip = dt_kbpf_flip;
	kd->kd_ctr.dac_wait = dt_kbpf_wait;
	dt_aggctr_add(&kd->kd_ctr);
	return true;
}

void
dt_kbpf_drain_stop(struct dt_kbpf_drain *kd)
{
	/* the event's close detaches the program */
	close(kd->kd_ev);
	kd->kd_ev = -1;
	atomic_store(&kd->kd_final, true);
	/* the last drain: every event up to the detach */
	dt_aggctr_del(&kd->kd_ctr);
}

void
dt_kbpf_drain_free(struct dt_kbpf_drain *kd)
{
	if (kd->kd_ev != -1)
		close(kd->kd_ev);
	if (kd->kd_prog != -1)
		close(kd->kd_prog);
	if (kd->kd_map != -1)
		close(kd->kd_map);
	if (kd->kd_gen != -1)
		close(kd->kd_gen);
	if (kd->kd_ovf != -1)
		close(kd->kd_ovf);
	free(kd->kd_vals);
	free(kd->kd_held);
	if (kd->kd_mem != 0)
		dt_limit_uncharge(kd->kd_cred, kd->kd_mem);
	if (kd->kd_nfds != 0)
		dt_perf_fds_uncharge(kd->kd_nfds);
}
