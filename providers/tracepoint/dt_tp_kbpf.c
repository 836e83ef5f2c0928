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
 * Counts by key in the kernel (dt_tp_kbpf.h): the maps, the program's
 * attachment and the drain.
 *
 * The program runs once per hit whatever perf events the tracepoint
 * has (its tracepoint's program list, not the event's), so it hangs on
 * one counting event, on the first CPU that opens one.  It returns 1:
 * the kernel reads 0 as "deliver this record to no perf event of the
 * tracepoint", every open's and every other user's, not only ours;
 * ours keeps no buffer, so 1 costs nothing.
 *
 * Exact drain: an entry read and deleted while a program adds to it
 * would lose the add.  So the key carries a generation: at each drain
 * dtd flips the generation the program reads, waits until no program
 * that read the old one still runs (MEMBARRIER_CMD_GLOBAL is an RCU
 * grace period, and a tracepoint's programs run with preemption off),
 * then reads and deletes the old generation's entries, which no one
 * touches any more.  The map holds twice the open's table, the two
 * generations' worth; past that, the program counts what it could not
 * put (the overflow counter), which dtd reports as a full table's.
 * The last drain, after the detach and a grace period, takes all.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tp_kbpf_start()
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

#define KB_LOGSIZE	65536
/* Keys a drain reads before it deletes them and reads on. */
#define KB_BATCH	1024
/*
 * The map's entries at most, both generations: past it the program
 * counts overflow, said.  What one entry may cost the kernel, charged
 * to the open's memory (dt_limit_charge()) before the map is made: its
 * bucket, the element with its key, and a value for each CPU.
 */
#define KB_MAXENT	65536
#define KB_ENTBYTES(ncpu)	(16 + 64 + sizeof(struct dt_kbpf_key) + \
				 8 * (uint64_t)(ncpu))
/* The map, the generation, the overflow, the program, the event. */
#define KB_NFDS		5
/* The initial pid namespace's inode (PROC_PID_INIT_INO). */
#define KB_INITPIDNS	0xEFFFFFFCU
/*
 * A per-CPU value is copied out for every possible CPU: room past our
 * count of them, should the kernel count more than its list says.
 */
#define KB_SPARECPUS	64

struct dt_tp_kbpf {
	struct dt_aggctr	 kb_ctr;	/* first: dac_sync's cast */
	struct dt_tp_kbpf	*kb_next;	/* [K] on dt_tp_kbpfs */
	int			 kb_map;	/* [I] the counts */
	int			 kb_gen;	/* [I] the generation */
	int			 kb_ovf;	/* [I] the overflow */
	int			 kb_prog;	/* [I] */
	int			 kb_ev;		/* [K] -1 once detached */
	uint32_t		 kb_cur;	/* [c] generation counted in */
	uint32_t		 kb_drain;	/* [c] generation flipped off */
	bool			 kb_flipped;	/* [c] kb_drain to drain */
	_Atomic bool		 kb_final;	/* [a] detached: take all */
	uint64_t		 kb_lost;	/* [c] overflow folded */
	uint64_t		 kb_misses;	/* [c] recursion misses folded */
	uint32_t		 kb_nent;	/* [I] the map's entries */
	const struct dt_cred	*kb_cred;	/* [I] charged kb_mem */
	uint64_t		 kb_mem;	/* [I] */
	bool			 kb_fds;	/* [I] KB_NFDS charged */
	struct dt_kbpf_key	*kb_keys;	/* [c] KB_BATCH, a drain's */
	uint64_t		*kb_vals;	/* [c] one a CPU */
};

static struct dt_tp_kbpf *dt_tp_kbpfs;		/* [K] started ones */
static unsigned int	  dt_kbpf_ncpu;		/* [K] possible CPUs */

bool
dt_tp_kbpf_off(void)
{
	const char *env = getenv("USERDT_KBPF");

	return env != NULL && strcmp(env, "0") == 0;
}

int
dt_kbpf_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/*
 * The possible CPUs, as a per-CPU map's value holds them: the count of
 * /sys/devices/system/cpu/possible's list ("0-3", "0,2-5").  [K].
 */
unsigned int
dt_kbpf_cpus(void)
{
	FILE *f;
	char buf[256], *p, *e;
	unsigned long lo, hi;
	unsigned int n = 0;

	if (dt_kbpf_ncpu != 0)
		return dt_kbpf_ncpu;
	if ((f = fopen("/sys/devices/system/cpu/possible", "re")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	for (p = buf; *p >= '0' && *p <= '9'; p = e + (*e == ',')) {
		lo = hi = strtoul(p, &e, 10);
		if (*e == '-')
			hi = strtoul(e + 1, &e, 10);
		if (hi < lo || hi - lo >= 65536)
			return 0;
		n += (unsigned int)(hi - lo + 1);
	}
	return dt_kbpf_ncpu = n;
}

int
dt_kbpf_map(uint32_t type, uint32_t ksize, uint32_t vsize, uint32_t n,
    const char *name)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ksize;
	a.value_size = vsize;
	a.max_entries = n;
	/*
	 * A hash's entries made as keys come: twice a large table,
	 * preallocated, would pin what the run may never use (an entry
	 * the kernel cannot allocate counts as overflow, said).
	 */
	if (type == BPF_MAP_TYPE_PERCPU_HASH)
		a.map_flags = BPF_F_NO_PREALLOC;
	strncpy(a.map_name, name, sizeof(a.map_name) - 1);
	return dt_kbpf_bpf(BPF_MAP_CREATE, &a);
}

/*
 * Load s's program: its descriptor, or -1 with *why the verifier's last
 * line (or the error) for the one line dtd says.  [K].
 */
int
dt_kbpf_load(const struct dt_kbpf_spec *s, char *why, size_t whylen)
{
	struct bpf_insn *insns;
	union bpf_attr a;
	char *log = NULL, *l, *end;
	const char *test;
	unsigned int n;
	int fd, error;

	snprintf(why, whylen, "too long");
	if ((insns = calloc(DT_KBPF_MAXINSNS, sizeof(*insns))) == NULL ||
	    (n = dt_kbpf_prog(s, insns)) == 0) {
		free(insns);
		return -1;
	}
	/* for the tests: a first instruction the verifier refuses */
	test = getenv("USERDT_TEST_KBPF");
	if (test != NULL && strcmp(test, "refuse") == 0) {
		memset(&insns[0], 0, sizeof(insns[0]));
		insns[0].code = BPF_ALU64 | BPF_MOV | BPF_X;
		insns[0].dst_reg = BPF_REG_0;
		insns[0].src_reg = BPF_REG_8;	/* never written */
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t)"Dual BSD/GPL";
	strncpy(a.prog_name, "udt_kcount", sizeof(a.prog_name) - 1);
	if ((fd = dt_kbpf_bpf(BPF_PROG_LOAD, &a)) >= 0) {
		free(insns);
		return fd;
	}
	error = errno;
	snprintf(why, whylen, "%s", strerror(error));
	/* again with the verifier's log, only to say why */
	if (error != EPERM && (log = calloc(1, KB_LOGSIZE)) != NULL) {
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = KB_LOGSIZE;
		a.log_level = 1;
		if ((fd = dt_kbpf_bpf(BPF_PROG_LOAD, &a)) >= 0) {
			/* a refusal that went away: take it */
			free(log);
			free(insns);
			return fd;
		}
		/* the last line but the verifier's statistics */
		end = log + strnlen(log, KB_LOGSIZE - 1);
		for (;;) {
			while (end > log && end[-1] == '\n')
				*--end = '\0';
			l = strrchr(log, '\n');
			l = l != NULL ? l + 1 : log;
			if (l == log || (strncmp(l, "processed ", 10) != 0 &&
			    strncmp(l, "verification time", 17) != 0))
				break;
			end = l;
		}
		if (*l != '\0')
			snprintf(why, whylen, "%s: %s", strerror(error), l);
	}
	free(log);
	free(insns);
	errno = error;
	return -1;
}

/* The generation the program counts in, from now on. [c] or [K]. */
static void
dt_kbpf_setgen(struct dt_tp_kbpf *kb, uint32_t gen)
{
	union bpf_attr a;
	uint32_t zero = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)kb->kb_gen;
	a.key = (uint64_t)(uintptr_t)&zero;
	a.value = (uint64_t)(uintptr_t)&gen;
	a.flags = BPF_ANY;
	(void)dt_kbpf_bpf(BPF_MAP_UPDATE_ELEM, &a);
	kb->kb_cur = gen;
}

/* Sum of a per-CPU value read into kb_vals; false if gone. [c]. */
static bool
dt_kbpf_lookup(struct dt_tp_kbpf *kb, int fd, const void *key,
    uint64_t *sum)
{
	union bpf_attr a;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)kb->kb_vals;
	if (dt_kbpf_bpf(BPF_MAP_LOOKUP_ELEM, &a) != 0)
		return false;
	for (*sum = 0, i = 0; i < dt_kbpf_ncpu; i++)
		*sum += kb->kb_vals[i];
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
	struct dt_tp_kbpf *kb = (struct dt_tp_kbpf *)c;

	kb->kb_flipped = true;
	kb->kb_drain = kb->kb_cur;
	if (!atomic_load(&kb->kb_final))
		dt_kbpf_setgen(kb, kb->kb_cur ^ 1);
}

/*
 * dac_wait: no program that read a flipped generation still runs
 * (MEMBARRIER_CMD_GLOBAL is an RCU grace period, and a tracepoint's
 * programs run with preemption off); one for every pcb a read flips.
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
dt_kbpf_misses(struct dt_tp_kbpf *kb)
{
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)kb->kb_prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (dt_kbpf_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) != 0 ||
	    info.recursion_misses <= kb->kb_misses)
		return;
	dt_pcb_count_recurevt(kb->kb_ctr.dac_dp, 0,
	    info.recursion_misses - kb->kb_misses);
	kb->kb_misses = info.recursion_misses;
}

/* Read, delete and fold kb's keys kb_keys[0 .. n - 1]. [c]. */
static void
dt_kbpf_fold(struct dt_tp_kbpf *kb, uint32_t n)
{
	const struct dt_kbpf_key *k;
	char comm[DTMAXCOMLEN];
	struct dt_srckey sk;
	union bpf_attr a;
	uint32_t i;
	uint64_t v;

	memset(&sk, 0, sizeof(sk));
	for (i = 0; i < n; i++) {
		k = &kb->kb_keys[i];
		if (!dt_kbpf_lookup(kb, kb->kb_map, k, &v))
			continue;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)kb->kb_map;
		a.key = (uint64_t)(uintptr_t)k;
		(void)dt_kbpf_bpf(BPF_MAP_DELETE_ELEM, &a);
		sk.sk_pid = (pid_t)k->kk_pid;
		sk.sk_tid = (int32_t)k->kk_tid;
		sk.sk_cpu = k->kk_cpu;
		/* named as a record is (dt_tp_task.c) */
		if (k->kk_gen & DT_KBPF_IDLE) {
			memset(comm, 0, sizeof(comm));
			snprintf(comm, sizeof(comm), "idle%u", k->kk_cpu);
		} else
			dt_tp_task_kname(k->kk_comm, (pid_t)k->kk_pid,
			    (k->kk_gen & DT_KBPF_TASK) ? (pid_t)k->kk_tid : 0,
			    comm);
		dt_pcb_fold_kkey(kb->kb_ctr.dac_dp, &sk, comm, v);
	}
}

/*
 * dac_sync: fold the counts of the generation the program left (all,
 * once detached), and the overflow's and misses' growth.  The keys are
 * read a batch at a time, then deleted (a delete would restart the
 * walk), and the walk starts again until one finds no more: the map's
 * count of its entries is approximate, so none is left by a count.
 * [c].
 */
static void
dt_kbpf_sync(struct dt_aggctr *c)
{
	struct dt_tp_kbpf *kb = (struct dt_tp_kbpf *)c;
	struct dt_pcb *dp = c->dac_dp;
	bool all = atomic_load(&kb->kb_final), walked;
	uint32_t n, zero = 0;
	struct dt_kbpf_key at;
	union bpf_attr a;
	uint64_t v;

	if (!kb->kb_flipped)
		return;
	kb->kb_flipped = false;
	do {
		for (n = 0, walked = false; n < KB_BATCH; walked = true) {
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)kb->kb_map;
			a.key = walked ? (uint64_t)(uintptr_t)&at : 0;
			a.next_key = (uint64_t)(uintptr_t)&at;
			if (dt_kbpf_bpf(BPF_MAP_GET_NEXT_KEY, &a) != 0)
				break;
			if (all || (at.kk_gen & 1) == kb->kb_drain)
				kb->kb_keys[n++] = at;
		}
		dt_kbpf_fold(kb, n);
	} while (n == KB_BATCH);
	if (dt_kbpf_lookup(kb, kb->kb_ovf, &zero, &v) && v > kb->kb_lost) {
		dt_pcb_fold_klost(dp, v - kb->kb_lost);
		kb->kb_lost = v;
	}
	dt_kbpf_misses(kb);
}

static void
dt_kbpf_free(struct dt_tp_kbpf *kb)
{
	if (kb->kb_ev != -1)
		close(kb->kb_ev);
	if (kb->kb_prog != -1)
		close(kb->kb_prog);
	if (kb->kb_map != -1)
		close(kb->kb_map);
	if (kb->kb_gen != -1)
		close(kb->kb_gen);
	if (kb->kb_ovf != -1)
		close(kb->kb_ovf);
	free(kb->kb_keys);
	free(kb->kb_vals);
	if (kb->kb_mem != 0)
		dt_limit_uncharge(kb->kb_cred, kb->kb_mem);
	if (kb->kb_fds)
		dt_perf_fds_uncharge(KB_NFDS);
	free(kb);
}

/*
 * A counting event of tracepoint id for the program to hang on: the
 * first CPU's that opens (one is enough, see above).  [K].
 */
int
dt_kbpf_event(int id)
{
	struct perf_event_attr attr;
	unsigned int i;
	int fd = -1;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	for (i = 0; i < dt_kbpf_ncpu && fd == -1; i++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)i, -1,
		    PERF_FLAG_FD_CLOEXEC);
		/* an offline CPU: the next */
		if (fd == -1 && errno != ENODEV)
			break;
	}
	return fd;
}

/*
 * Say why tpp's counts are sampled after all, once per cause: the last
 * KB_NSAID causes are remembered, one that came back after as many
 * others is said again.  [K].
 */
#define KB_NSAID	16
static void
dt_kbpf_say(const struct dt_tp_src *src, const char *what, const char *why)
{
	static char said[KB_NSAID][256];	/* [K] */
	static unsigned int next;		/* [K] */
	char line[sizeof(said[0])];
	unsigned int i;

	snprintf(line, sizeof(line), "%s: %s", what, why);
	for (i = 0; i < KB_NSAID; i++)
		if (strcmp(line, said[i]) == 0)
			return;
	memcpy(said[next], line, sizeof(said[0]));
	next = (next + 1) % KB_NSAID;
	fprintf(stderr, "dtd: tracepoint: %s:%s: no count in the kernel "
	    "(%s), sampled\n", src->tps_sys, src->tps_event, line);
}

/*
 * tpp_kcount ("" or "FIELD OP NUMBER") as the program reads it into c:
 * false for one it cannot.  [K].
 */
static bool
dt_kbpf_cond(const struct dt_tp_src *src, const char *kc,
    struct dt_kbpf_cond *c, bool *any)
{
	static const struct {
		const char	*op;
		uint8_t		 jmp, ujmp;
	} ops[] = {
		{ ">=", BPF_JSGE, BPF_JGE }, { "<=", BPF_JSLE, BPF_JLE },
		{ "!=", BPF_JNE, BPF_JNE }, { "==", BPF_JEQ, BPF_JEQ },
		{ ">", BPF_JSGT, BPF_JGT }, { "<", BPF_JSLT, BPF_JLT },
	};
	const struct dt_tp_field *f;
	char name[DT_TP_NAMELEN], op[3], rest[2];
	long long v;
	unsigned int i;

	*any = false;
	if (kc[0] == '\0')
		return true;
	if (sscanf(kc, "%31s %2s %lld %1s", name, op, &v, rest) != 3 ||
	    (f = dt_tp_field(&src->tps_fmt, name)) == NULL ||
	    (f->dtf_size != 1 && f->dtf_size != 2 && f->dtf_size != 4 &&
	    f->dtf_size != 8) || f->dtf_off % f->dtf_size != 0 ||
	    f->dtf_off < 8)
		return false;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i].op) == 0)
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return false;
	c->kc_off = f->dtf_off;
	c->kc_size = (uint8_t)f->dtf_size;
	c->kc_signed = f->dtf_signed != 0;
	c->kc_jmp = c->kc_signed ? ops[i].jmp : ops[i].ujmp;
	c->kc_val = v;
	*any = true;
	return true;
}

/*
 * Whether dtd's pid namespace is the initial one: the program reads the
 * initial namespace's pid and tid, perf's records dtd's namespace's.
 * [K].
 */
static bool
dt_kbpf_initns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 &&
	    st.st_ino == KB_INITPIDNS;
}

bool
dt_tp_kbpf_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp)
{
	struct dt_tp_src *src = tpp->tpp_srcs[0];
	const struct dtioc_filter *f = dp->dp_filter;
	struct dt_kbpf_spec s;
	struct dt_kbpf_cond cond;
	struct dt_tp_kbpf *kb;
	bool anycond;
	char why[200];
	uint32_t size, fields;
	int mc;

	/* each record one event under a condition the program reads */
	if (dt_tp_kbpf_off() || tpp->tpp_nsrcs != 1 ||
	    tpp->tpp_kcount == NULL || tpp->tpp_switchin ||
	    !dt_pcb_kkey_ok(dp, &fields) ||
	    !dt_kbpf_cond(src, tpp->tpp_kcount, &cond, &anycond))
		return false;
	if (f != NULL && f->dtfl_nterms == 0)
		f = NULL;
	if (!dt_kbpf_filter_ok(f, (dp->dp_evtflags & DTEVT_EXECNAME) != 0) ||
	    (size = dt_pcb_agg_size(dp)) == 0 || size > UINT32_MAX / 2 ||
	    dt_kbpf_cpus() == 0)
		return false;
	if (!dt_kbpf_initns()) {
		dt_kbpf_say(src, "pid namespace", "not the initial one");
		return false;
	}
	mc = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (mc == -1 || !(mc & MEMBARRIER_CMD_GLOBAL)) {
		dt_kbpf_say(src, "membarrier", "no global barrier");
		return false;
	}
	if ((kb = calloc(1, sizeof(*kb))) == NULL)
		return false;
	kb->kb_ev = kb->kb_prog = kb->kb_gen = kb->kb_ovf = -1;
	kb->kb_map = -1;
	kb->kb_nent = size < KB_MAXENT / 2 ? 2 * size : KB_MAXENT;
	kb->kb_cred = dt_sc_cred(dp->dp_sc);
	if (!dt_perf_fds_charge(KB_NFDS)) {
		dt_kbpf_say(src, "descriptors", "the budget is spent");
		dt_kbpf_free(kb);
		return false;
	}
	kb->kb_fds = true;
	if (dt_limit_charge(kb->kb_cred, (uint64_t)kb->kb_nent *
	    KB_ENTBYTES(dt_kbpf_ncpu)) != 0) {
		dt_kbpf_say(src, "map", "over the memory limit");
		dt_kbpf_free(kb);
		return false;
	}
	kb->kb_mem = (uint64_t)kb->kb_nent * KB_ENTBYTES(dt_kbpf_ncpu);
	kb->kb_map = dt_kbpf_map(BPF_MAP_TYPE_PERCPU_HASH,
	    sizeof(struct dt_kbpf_key), sizeof(uint64_t), kb->kb_nent,
	    "udt_kcount");
	if (kb->kb_map == -1 ||
	    (kb->kb_gen = dt_kbpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t),
	    sizeof(uint32_t), 1, "udt_kgen")) == -1 ||
	    (kb->kb_ovf = dt_kbpf_map(BPF_MAP_TYPE_PERCPU_ARRAY,
	    sizeof(uint32_t), sizeof(uint64_t), 1, "udt_kover")) == -1) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		dt_kbpf_say(src, "map", why);
		dt_kbpf_free(kb);
		return false;
	}
	if ((kb->kb_keys = calloc(KB_BATCH, sizeof(*kb->kb_keys))) ==
	    NULL || (kb->kb_vals = calloc(dt_kbpf_ncpu + KB_SPARECPUS,
	    sizeof(*kb->kb_vals))) == NULL) {
		dt_kbpf_free(kb);
		return false;
	}
	memset(&s, 0, sizeof(s));
	s.kbs_cond = anycond ? &cond : NULL;
	s.kbs_fields = fields;
	s.kbs_comm = (dp->dp_evtflags & DTEVT_EXECNAME) != 0;
	s.kbs_filter = f;
	s.kbs_tidoff = dt_tid_offset();
	s.kbs_mapfd = kb->kb_map;
	s.kbs_genfd = kb->kb_gen;
	s.kbs_ovffd = kb->kb_ovf;
	if ((kb->kb_prog = dt_kbpf_load(&s, why, sizeof(why))) == -1) {
		dt_kbpf_say(src, "program", why);
		dt_kbpf_free(kb);
		return false;
	}
	if ((kb->kb_ev = dt_kbpf_event(src->tps_fmt.dtfm_id)) == -1) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		dt_kbpf_say(src, "event", why);
		dt_kbpf_free(kb);
		return false;
	}
	kb->kb_ctr.dac_dp = dp;
	kb->kb_ctr.dac_sync = dt_kbpf_sync;
	kb->kb_ctr.dac_flip = dt_kbpf_flip;
	kb->kb_ctr.dac_wait = dt_kbpf_wait;
	dt_kbpf_setgen(kb, 0);
	/*
	 * No event of the stream goes to dp from here, and the program
	 * counts from its attach: one in between is counted by neither,
	 * as at dt_tpcnt_start()'s switch, never twice.
	 */
	atomic_store(&dp->dp_srccount, true);
	if (ioctl(kb->kb_ev, PERF_EVENT_IOC_SET_BPF, kb->kb_prog) == -1) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		dt_kbpf_say(src, "attach", why);
		atomic_store(&dp->dp_srccount, false);
		dt_kbpf_free(kb);
		return false;
	}
	dt_aggctr_add(&kb->kb_ctr);
	kb->kb_next = dt_tp_kbpfs;
	dt_tp_kbpfs = kb;
	return true;
}

bool
dt_tp_kbpf_stop(struct dt_pcb *dp)
{
	struct dt_tp_kbpf **kbp, *kb;

	for (kbp = &dt_tp_kbpfs; (kb = *kbp) != NULL; kbp = &kb->kb_next)
		if (kb->kb_ctr.dac_dp == dp) {
			*kbp = kb->kb_next;
			/* the event's close detaches the program */
			close(kb->kb_ev);
			kb->kb_ev = -1;
			atomic_store(&kb->kb_final, true);
			/* the last drain: every event up to the detach */
			dt_aggctr_del(&kb->kb_ctr);
			dt_kbpf_free(kb);
			/* dp_srccount stays set, as dt_tpcnt_stop() leaves it */
			return true;
		}
	return false;
}
