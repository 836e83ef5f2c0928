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
 * The syscall probes' kernel part counted in the kernel (issue 22,
 * dt_ksys.h's dt_ksys_kcount_fn): a syscall pcb that only counts by the
 * task (dt_pcb_kkey_ok(), a filter dt_kbpf_filter_ok() takes) needs no
 * record of raw_syscalls through perf, whose buffers drop beside a busy
 * machine, only how many calls each key had.
 *
 * One program per group: the pcbs of one open and one direction with
 * the same key and filter (an open's `syscall:*:entry` is one group of
 * some 400 pcbs), hung on one counting event of sys_enter or sys_exit
 * (dt_tp_kbpf.c says why one is enough).  It refuses first the calls no
 * pcb of the group wants (an array by Linux number that dtd sets as the
 * pcbs start), then the processes the preload library records (a hash
 * of their tgids, shared by all groups), and counts the rest by key and
 * call number in a per-CPU hash that dt_aggctr drains by generation,
 * as dt_tp_kbpf.c does; each key's call number names the pcb (probe)
 * it folds into.
 *
 * The tracee hash follows dt_sys_kern.c's attach and exit sinks: a
 * tgid is in it from its first image's attach (the accept thread,
 * before the tracee is welcomed and makes a hooked call) to its last
 * image's exit.  Where the sampled feed's dt_ksys_traced() looks back
 * in time (a record read late is judged by when it was made), the
 * program judges each call as it is made; what that changes is in
 * doc/design.md ("syscall probes counted in the kernel").
 *
 * All pcbs of an open stop together (dt_dev.c's stop loop): the first
 * stop of a group detaches its program and folds the last counts into
 * every pcb of it, all still there; the last frees it.
 *
 * Locks used to protect struct members and globals in this file:
 *	[I]	immutable after the group's creation
 *	[K]	the core's configuration lock
 *	[c]	the core's counter registry lock (dt_aggctr's dac_sync)
 *	[T]	dt_ksb_tmtx
 *	[a]	atomic
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/membarrier.h>
#include <linux/perf_event.h>

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_ksys.h"
#include "dt_tp_kbpf.h"
#include "dt_tp_ksys.h"
#include "dt_tp_var.h"
#include "dt_softc.h"
#include "systab.h"

#define KSB_SPARECPUS	64	/* as dt_tp_kbpf.c's */
#define KSB_MAXTRACED	65536	/* tracees the hash holds at once */

struct dt_ksb {
	struct dt_aggctr	 ksb_ctr;	/* first: dac_sync's cast */
	struct dt_ksb		*ksb_next;	/* [K] on dt_ksbs */
	const struct dt_softc	*ksb_sc;	/* [I] the open */
	unsigned int		 ksb_dir;	/* [I] 0 entry, 1 return */
	uint32_t		 ksb_fields;	/* [I] 1 << DTF_* */
	bool			 ksb_comm;	/* [I] names recorded */
	struct dtioc_filter	*ksb_filter;	/* [I] a copy, or NULL */
	int			 ksb_map;	/* [I] the counts */
	int			 ksb_gen;	/* [I] the generation */
	int			 ksb_ovf;	/* [I] the overflow */
	int			 ksb_want;	/* [I] by Linux number */
	int			 ksb_prog;	/* [I] */
	int			 ksb_ev;	/* [K] -1 once detached */
	uint32_t		 ksb_cur;	/* [c] generation counted in */
	_Atomic bool		 ksb_final;	/* [a] detached: take all */
	uint64_t		 ksb_lost;	/* [c] overflow folded */
	uint32_t		 ksb_nent;	/* [I] the map's entries */
	struct dt_kbpf_key	*ksb_keys;	/* [c] a drain's */
	uint64_t		*ksb_vals;	/* [c] one a CPU */
	unsigned int		 ksb_npcb;	/* [K] */
	/* [K] set, [a] read by the drain: each number's pcb */
	struct dt_pcb *_Atomic	 ksb_pcb[SYSTAB_LINUX_MAX];
};

static struct dt_ksb	*dt_ksbs;		/* [K] */
static unsigned int	 dt_ksb_idoff[2];	/* [I] the call number's */
static unsigned int	 dt_ksb_ncpu;		/* [K] set once, [c] read */

static pthread_mutex_t	 dt_ksb_tmtx = PTHREAD_MUTEX_INITIALIZER;
static int		 dt_ksb_traced = -1;	/* [T] the tgid hash */
static pid_t		*dt_ksb_tgids;		/* [T] what it holds */
static size_t		 dt_ksb_ntgid, dt_ksb_maxtgid;	/* [T] */
static uint64_t		 dt_ksb_trefused;	/* [T] tracees counted twice */

/* Put tgid in the hash or take it out.  [T] */
static void
dt_ksb_tput(pid_t pid, bool on)
{
	union bpf_attr a;
	uint32_t k = (uint32_t)pid, v = 1;

	if (dt_ksb_traced == -1)
		return;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)dt_ksb_traced;
	a.key = (uint64_t)(uintptr_t)&k;
	if (!on) {
		(void)dt_kbpf_bpf(BPF_MAP_DELETE_ELEM, &a);
		return;
	}
	a.value = (uint64_t)(uintptr_t)&v;
	a.flags = BPF_ANY;
	if (dt_kbpf_bpf(BPF_MAP_UPDATE_ELEM, &a) != 0) {
		/*
		 * Then both the hooks and the program count it: said, by
		 * a count at each power of two, so that no later one is
		 * silent and a full map does not flood the log.
		 */
		dt_ksb_trefused++;
		if ((dt_ksb_trefused & (dt_ksb_trefused - 1)) == 0)
			fprintf(stderr, "dtd: syscall: the kernel program's "
			    "tracee map refused pid %d (%s), %llu tracees "
			    "so far: their calls may count twice\n", (int)pid,
			    strerror(errno),
			    (unsigned long long)dt_ksb_trefused);
	}
}

/* dt_ksys_tgid_fn: the ingest accept or drain thread. */
static void
dt_ksb_tgid(pid_t pid, bool on)
{
	pid_t *t;
	size_t i, max;

	pthread_mutex_lock(&dt_ksb_tmtx);
	for (i = 0; i < dt_ksb_ntgid; i++)
		if (dt_ksb_tgids[i] == pid)
			break;
	if (on && i == dt_ksb_ntgid) {
		if (dt_ksb_ntgid == dt_ksb_maxtgid) {
			max = dt_ksb_maxtgid == 0 ? 64 : 2 * dt_ksb_maxtgid;
			if ((t = realloc(dt_ksb_tgids, max * sizeof(*t))) ==
			    NULL)
				goto put;	/* the map alone, if made */
			dt_ksb_tgids = t;
			dt_ksb_maxtgid = max;
		}
		dt_ksb_tgids[dt_ksb_ntgid++] = pid;
	} else if (!on && i < dt_ksb_ntgid)
		dt_ksb_tgids[i] = dt_ksb_tgids[--dt_ksb_ntgid];
put:
	dt_ksb_tput(pid, on);
	pthread_mutex_unlock(&dt_ksb_tmtx);
}

/* The tgid hash, made once with the tracees listed so far.  [K] */
static int
dt_ksb_tmap(void)
{
	size_t i;
	int fd;

	pthread_mutex_lock(&dt_ksb_tmtx);
	if (dt_ksb_traced == -1 &&
	    (fd = dt_kbpf_map(BPF_MAP_TYPE_HASH, sizeof(uint32_t),
	    sizeof(uint32_t), KSB_MAXTRACED, "udt_ktraced")) != -1) {
		dt_ksb_traced = fd;
		/*
		 * dtd's own calls (its drains' bpf() and membarrier) are
		 * none of the program's, as the sampled feed drops them.
		 */
		dt_ksb_tput(getpid(), true);
		for (i = 0; i < dt_ksb_ntgid; i++)
			dt_ksb_tput(dt_ksb_tgids[i], true);
	}
	fd = dt_ksb_traced;
	pthread_mutex_unlock(&dt_ksb_tmtx);
	return fd;
}

static void
dt_ksb_say(unsigned int dir, const char *what, const char *why)
{
	static char said[256];
	char line[sizeof(said)];

	snprintf(line, sizeof(line), "%s: %s", what, why);
	if (strcmp(line, said) == 0)
		return;
	memcpy(said, line, sizeof(said));
	fprintf(stderr, "dtd: syscall: raw_syscalls:%s: no count in the "
	    "kernel (%s), sampled\n", dir == 0 ? "sys_enter" : "sys_exit",
	    line);
}

/* The generation the program counts in, from now on. [c] or [K]. */
static void
dt_ksb_setgen(struct dt_ksb *g, uint32_t gen)
{
	union bpf_attr a;
	uint32_t zero = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)g->ksb_gen;
	a.key = (uint64_t)(uintptr_t)&zero;
	a.value = (uint64_t)(uintptr_t)&gen;
	a.flags = BPF_ANY;
	(void)dt_kbpf_bpf(BPF_MAP_UPDATE_ELEM, &a);
	g->ksb_cur = gen;
}

/* Sum of a per-CPU value; false if gone.  [c]. */
static bool
dt_ksb_lookup(struct dt_ksb *g, int fd, const void *key, uint64_t *sum)
{
	union bpf_attr a;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)g->ksb_vals;
	if (dt_kbpf_bpf(BPF_MAP_LOOKUP_ELEM, &a) != 0)
		return false;
	for (*sum = 0, i = 0; i < dt_ksb_ncpu; i++)
		*sum += g->ksb_vals[i];
	return true;
}

/*
 * dac_sync: fold the generation the program left (all, once detached)
 * into each key's pcb, by its call number.  [c].
 */
static void
dt_ksb_sync(struct dt_aggctr *c)
{
	struct dt_ksb *g = (struct dt_ksb *)c;
	bool all = atomic_load(&g->ksb_final);
	uint32_t old = g->ksb_cur, n = 0, i, id, zero = 0;
	struct dt_kbpf_key at, *k;
	struct dt_srckey sk;
	struct dt_pcb *dp;
	union bpf_attr a;
	bool walked = false;
	uint64_t v;

	if (!all)
		dt_ksb_setgen(g, old ^ 1);
	/* no program that read the old generation still runs */
	(void)syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)g->ksb_map;
		a.key = walked ? (uint64_t)(uintptr_t)&at : 0;
		a.next_key = (uint64_t)(uintptr_t)&at;
		if (n >= g->ksb_nent ||
		    dt_kbpf_bpf(BPF_MAP_GET_NEXT_KEY, &a) != 0)
			break;
		walked = true;
		if (all || (at.kk_gen & 1) == old)
			g->ksb_keys[n++] = at;
	}
	memset(&sk, 0, sizeof(sk));
	for (i = 0; i < n; i++) {
		k = &g->ksb_keys[i];
		if (!dt_ksb_lookup(g, g->ksb_map, k, &v))
			continue;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)g->ksb_map;
		a.key = (uint64_t)(uintptr_t)k;
		(void)dt_kbpf_bpf(BPF_MAP_DELETE_ELEM, &a);
		id = k->kk_gen >> DT_KBPF_SYSSHIFT;
		if (id >= SYSTAB_LINUX_MAX || (dp = atomic_load_explicit(
		    &g->ksb_pcb[id], memory_order_acquire)) == NULL)
			continue;
		sk.sk_pid = (pid_t)k->kk_pid;
		sk.sk_tid = (int32_t)k->kk_tid;
		sk.sk_cpu = k->kk_cpu;
		memcpy(sk.sk_comm, k->kk_comm, sizeof(sk.sk_comm));
		if (k->kk_gen & DT_KBPF_IDLE)
			snprintf(sk.sk_comm, sizeof(sk.sk_comm), "idle%u",
			    k->kk_cpu);
		dt_pcb_fold_kkey(dp, &sk, v);
	}
	if (dt_ksb_lookup(g, g->ksb_ovf, &zero, &v) && v > g->ksb_lost) {
		dt_pcb_fold_klost(c->dac_dp, v - g->ksb_lost);
		g->ksb_lost = v;
	}
}

static void
dt_ksb_free(struct dt_ksb *g)
{
	if (g->ksb_ev != -1)
		close(g->ksb_ev);
	if (g->ksb_prog != -1)
		close(g->ksb_prog);
	if (g->ksb_map != -1)
		close(g->ksb_map);
	if (g->ksb_gen != -1)
		close(g->ksb_gen);
	if (g->ksb_ovf != -1)
		close(g->ksb_ovf);
	if (g->ksb_want != -1)
		close(g->ksb_want);
	free(g->ksb_filter);
	free(g->ksb_keys);
	free(g->ksb_vals);
	free(g);
}

/* Whether filters f and h are the same.  Any thread. */
static bool
dt_ksb_samefilter(const struct dtioc_filter *f, const struct dtioc_filter *h)
{
	if (f == NULL || h == NULL)
		return f == h;
	return f->dtfl_nterms == h->dtfl_nterms &&
	    memcmp(f->dtfl_terms, h->dtfl_terms,
	    f->dtfl_nterms * sizeof(f->dtfl_terms[0])) == 0;
}

/* A group for dp, made with its program attached: NULL when none. [K] */
static struct dt_ksb *
dt_ksb_new(struct dt_pcb *dp, unsigned int dir, uint32_t fields, bool comm,
    const struct dtioc_filter *f)
{
	struct dt_kbpf_spec s;
	struct dt_ksb *g;
	uint32_t size;
	char why[200];
	int tfd, id, mc;

	/*
	 * The CPUs a per-CPU value holds, set by the first group, before
	 * its drain is registered, and never again: a drain of an older
	 * group reads it under [c] alone.
	 */
	if (dt_ksb_ncpu == 0)
		dt_ksb_ncpu = dt_kbpf_cpus();
	if ((size = dt_pcb_agg_size(dp)) == 0 || size > UINT32_MAX / 2 ||
	    dt_ksb_ncpu == 0 ||
	    (id = dt_tp_ksys_evid(dir)) == -1)
		return NULL;
	mc = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (mc == -1 || !(mc & MEMBARRIER_CMD_GLOBAL)) {
		dt_ksb_say(dir, "membarrier", "no global barrier");
		return NULL;
	}
	if ((tfd = dt_ksb_tmap()) == -1) {
		dt_ksb_say(dir, "tracee map", strerror(errno));
		return NULL;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->ksb_ev = g->ksb_prog = g->ksb_gen = g->ksb_ovf = g->ksb_want = -1;
	g->ksb_sc = dp->dp_sc;
	g->ksb_dir = dir;
	g->ksb_fields = fields;
	g->ksb_comm = comm;
	g->ksb_nent = 2 * size;
	/* the core's holds its terms alone (dt_dev_ioctl.c) */
	if (f != NULL && (g->ksb_filter = calloc(1, sizeof(*f))) != NULL)
		memcpy(g->ksb_filter, f, offsetof(struct dtioc_filter,
		    dtfl_terms) + f->dtfl_nterms * sizeof(f->dtfl_terms[0]));
	g->ksb_map = dt_kbpf_map(BPF_MAP_TYPE_PERCPU_HASH,
	    sizeof(struct dt_kbpf_key), sizeof(uint64_t), g->ksb_nent,
	    "udt_kscount");
	if ((f != NULL && g->ksb_filter == NULL) || g->ksb_map == -1 ||
	    (g->ksb_gen = dt_kbpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t),
	    sizeof(uint32_t), 1, "udt_ksgen")) == -1 ||
	    (g->ksb_ovf = dt_kbpf_map(BPF_MAP_TYPE_PERCPU_ARRAY,
	    sizeof(uint32_t), sizeof(uint64_t), 1, "udt_ksover")) == -1 ||
	    (g->ksb_want = dt_kbpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t),
	    sizeof(uint32_t), SYSTAB_LINUX_MAX, "udt_kswant")) == -1) {
		dt_ksb_say(dir, "map", strerror(errno));
		dt_ksb_free(g);
		return NULL;
	}
	if ((g->ksb_keys = calloc(g->ksb_nent, sizeof(*g->ksb_keys))) ==
	    NULL || (g->ksb_vals = calloc(dt_ksb_ncpu + KSB_SPARECPUS,
	    sizeof(*g->ksb_vals))) == NULL) {
		dt_ksb_free(g);
		return NULL;
	}
	memset(&s, 0, sizeof(s));
	s.kbs_fields = fields;
	s.kbs_comm = comm;
	s.kbs_filter = g->ksb_filter;
	s.kbs_tidoff = dt_strict ? DT_TID_OFFSET_OPENBSD : 0;
	s.kbs_mapfd = g->ksb_map;
	s.kbs_genfd = g->ksb_gen;
	s.kbs_ovffd = g->ksb_ovf;
	s.kbs_nsys = SYSTAB_LINUX_MAX;
	s.kbs_idoff = (uint16_t)dt_ksb_idoff[dir];
	s.kbs_wantfd = g->ksb_want;
	s.kbs_tracedfd = tfd;
	if ((g->ksb_prog = dt_kbpf_load(&s, why, sizeof(why))) == -1) {
		dt_ksb_say(dir, "program", why);
		dt_ksb_free(g);
		return NULL;
	}
	if ((g->ksb_ev = dt_kbpf_event(id)) == -1) {
		dt_ksb_say(dir, "event", strerror(errno));
		dt_ksb_free(g);
		return NULL;
	}
	dt_ksb_setgen(g, 0);
	/* it counts nothing until a pcb's number is wanted */
	if (ioctl(g->ksb_ev, PERF_EVENT_IOC_SET_BPF, g->ksb_prog) == -1) {
		dt_ksb_say(dir, "attach", strerror(errno));
		dt_ksb_free(g);
		return NULL;
	}
	g->ksb_ctr.dac_dp = dp;
	g->ksb_ctr.dac_sync = dt_ksb_sync;
	dt_aggctr_add(&g->ksb_ctr);
	g->ksb_next = dt_ksbs;
	dt_ksbs = g;
	return g;
}

/* Say whether number lin's calls are counted.  [K] */
static void
dt_ksb_want(struct dt_ksb *g, unsigned int lin, uint32_t on)
{
	union bpf_attr a;
	uint32_t k = lin;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)g->ksb_want;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&on;
	a.flags = BPF_ANY;
	(void)dt_kbpf_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

static bool
dt_ksb_start(unsigned int p, struct dt_pcb *dp)
{
	const struct dtioc_filter *f = dp->dp_filter;
	unsigned int dir = p & 1, lin;
	struct dt_ksb *g;
	uint32_t fields;
	bool comm = (dp->dp_evtflags & DTEVT_EXECNAME) != 0;

	if (dt_tp_kbpf_off() || p / 2 >= SYSTAB_COUNT ||
	    (lin = systab[p / 2].se_linux) >= SYSTAB_LINUX_MAX ||
	    !dt_pcb_kkey_ok(dp, &fields))
		return false;
	if (f != NULL && f->dtfl_nterms == 0)
		f = NULL;
	if (!dt_kbpf_filter_ok(f, comm))
		return false;
	for (g = dt_ksbs; g != NULL; g = g->ksb_next)
		if (g->ksb_sc == dp->dp_sc && g->ksb_dir == dir &&
		    g->ksb_fields == fields && g->ksb_comm == comm &&
		    g->ksb_ev != -1 && dt_ksb_samefilter(g->ksb_filter, f))
			break;
	if (g == NULL && (g = dt_ksb_new(dp, dir, fields, comm, f)) == NULL)
		return false;
	/*
	 * An open has one pcb a probe (dt_ioctl_probe_enable()'s EEXIST,
	 * and btrace shares a probe of several rules, never aggregated in
	 * dtd), so lin is free.  Were it not, dp would be sampled, and
	 * the ingest would keep the records it drops for the group's
	 * (dt_sys_kall false): the group's pcb would count them twice.
	 */
	if (atomic_load(&g->ksb_pcb[lin]) != NULL)
		return false;
	/*
	 * No kernel record goes to dp from here, and the program counts
	 * its number from the want: a call in between is counted by
	 * neither, never twice (as dt_tp_kbpf_start()).
	 */
	atomic_store_explicit(&g->ksb_pcb[lin], dp, memory_order_release);
	g->ksb_npcb++;
	atomic_store(&dp->dp_knot, true);
	dt_ksb_want(g, lin, 1);
	return true;
}

static void
dt_ksb_stop(unsigned int p, struct dt_pcb *dp)
{
	struct dt_ksb **gp, *g;
	unsigned int lin = systab[p / 2].se_linux;

	for (gp = &dt_ksbs; (g = *gp) != NULL; gp = &g->ksb_next)
		if (atomic_load(&g->ksb_pcb[lin]) == dp)
			break;
	if (g == NULL)
		return;
	if (g->ksb_ev != -1) {
		/* the open's first stop: the close detaches the program */
		close(g->ksb_ev);
		g->ksb_ev = -1;
		atomic_store(&g->ksb_final, true);
		/* the last drain, into every pcb of the group */
		dt_aggctr_del(&g->ksb_ctr);
	}
	atomic_store(&g->ksb_pcb[lin], NULL);
	if (--g->ksb_npcb > 0)
		return;
	*gp = g->ksb_next;
	dt_ksb_free(g);
	/* dp_knot stays set: dp is still on its probe's list */
}

/* dt_ksys_kcount_fn.  [K] */
static bool
dt_ksb_kcount(unsigned int p, struct dt_pcb *dp, bool on)
{
	if (on)
		return dt_ksb_start(p, dp);
	dt_ksb_stop(p, dp);
	return true;
}

void
dt_tp_ksysbpf_init(unsigned int idoff0, unsigned int idoff1)
{
	/* the number is a long at a 64-bit aligned place */
	if (idoff0 % 8 != 0 || idoff1 % 8 != 0 || idoff0 > INT16_MAX ||
	    idoff1 > INT16_MAX)
		return;
	dt_ksb_idoff[0] = idoff0;
	dt_ksb_idoff[1] = idoff1;
	dt_ksys_kcount_feed(dt_ksb_kcount, dt_ksb_tgid);
}
