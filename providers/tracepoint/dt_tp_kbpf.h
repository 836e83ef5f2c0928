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
 * Counts by key in the kernel (issue 22): a pcb whose aggregations are
 * count()s keyed by the pid, thread, name or CPU of the current task
 * (and the probe), under no filter or one of equalities of those, needs
 * no record either, only how many events each key had.  A small eBPF
 * program, attached to the tracepoint, evaluates the filter, builds the
 * key and counts it in a per-CPU hash map that dtd drains at each
 * DTIOCAGGREAD (dt_aggctr) and at the stop.  bpftrace counts so; a
 * sampled event's buffer drops beside other work.  Root only; the
 * counting event (dt_tp_count.h) keeps the rules it can take.
 */
#ifndef DT_TP_KBPF_H
#define DT_TP_KBPF_H

#include <sys/types.h>

#include <linux/bpf.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt_prov.h"

struct dt_tp_probe;

/*
 * The map's key: what the program read of the task, each field zero
 * where it is no key; kk_gen the generation it counted in (dtd drains
 * one while the program counts in the other).
 */
struct dt_kbpf_key {
	char		 kk_comm[16];	/* NUL padded, the kernel's */
	uint32_t	 kk_pid;	/* the thread group's */
	uint32_t	 kk_tid;
	uint32_t	 kk_cpu;
	uint32_t	 kk_gen;	/* bit 0; DT_KBPF_IDLE */
};

/*
 * The idle task, whose kernel name is swapper/N: dtd names it idleN, of
 * its CPU (dt_tp_task_comm()), so the program keys it by kk_cpu and
 * this bit, kk_comm empty, and dtd spells the name.
 */
#define DT_KBPF_IDLE	0x2

/*
 * A workqueue worker, whose /proc name is longer than the kernel's 16
 * bytes ("kworker/..." and its work's): the program keys it by its tid
 * and pid as well and sets this bit; dtd names it as a record would be
 * (dt_tp_task_kname()) and folds the rest away.  Another kernel thread
 * whose full name the kernel cut to 15 bytes is keyed by those 15 (the
 * program cannot tell a kernel thread from a user thread so named).
 */
#define DT_KBPF_TASK	0x4

/*
 * A process the syscall groups' exec program saw exec and that is not
 * (yet) a tracee nor decided (kbs_youngfd): the program keys its tgid in
 * kk_pid, sets this bit and the image's exec count (mod 4096) in
 * DT_KBPF_EXECMASK, so that dtd can decide at the drain whether these
 * calls were the starting library's, hidden (that image attached), or
 * the program's (dt_tp_ksysbpf.c).  The young hash's value: dtd sets
 * ky_decided once the image's calls are known to be the program's (or
 * it attached), the exec program clears it at the next exec, and the
 * exit program sets it when the process ends (its exec count goes on in
 * a process that takes the pid).
 */
#define DT_KBPF_YOUNG		0x8
#define DT_KBPF_EXECSHIFT	4
#define DT_KBPF_EXECMASK	0xfff0
struct dt_kbpf_young {
	uint64_t	 ky_born;	/* the exec's CLOCK_MONOTONIC ns */
	uint32_t	 ky_exec;	/* its execs before this one */
	uint32_t	 ky_decided;	/* not 0: not young */
};

/*
 * The record's own condition to be an event (tpp_kcount, ftrace's
 * "FIELD OP NUMBER"), read from the raw record the program gets.
 */
struct dt_kbpf_cond {
	uint16_t		 kc_off;	/* in the record */
	uint8_t			 kc_size;	/* 1, 2, 4 or 8 */
	bool			 kc_signed;
	uint8_t			 kc_jmp;	/* BPF_J* keeping the event */
	int64_t			 kc_val;
};

/* A record's number field as the reader's argument (dt_prov_tp.c). */
struct dt_kbpf_field {
	uint16_t		 kf_off;	/* in the record */
	uint8_t			 kf_size;	/* 1, 2, 4 or 8; 0: reads 0 */
	bool			 kf_signed;
};

/* What the program is made of (dt_tp_kbpfasm.c). */
struct dt_kbpf_spec {
	const struct dt_kbpf_cond *kbs_cond;	/* NULL: each record */
	uint32_t		 kbs_fields;	/* 1 << DTF_* of the key */
	bool			 kbs_comm;	/* names recorded:
						   DTEVT_EXECNAME */
	const struct dtioc_filter *kbs_filter;	/* NULL: none */
	uint64_t		 kbs_tidoff;	/* the reader's tid less
						   the kernel's */
	int			 kbs_mapfd;	/* the counts */
	int			 kbs_genfd;	/* the generation, [0] */
	int			 kbs_ovffd;	/* per CPU: refused by a full
						   map, [0] */
	/*
	 * raw_syscalls (dt_tp_ksysbpf.c): the call number, a u64 at
	 * kbs_idoff of the record, below kbs_nsys, keyed in kk_gen's bits
	 * DT_KBPF_SYSSHIFT and up; only a number kbs_wantfd's [number]
	 * is not 0 for, of a process kbs_tracedfd (a hash by tgid) has
	 * not.  kbs_nsys 0: no such thing.
	 */
	uint32_t		 kbs_nsys;
	uint16_t		 kbs_idoff;
	int			 kbs_wantfd;
	int			 kbs_tracedfd;
	/* not -1: a hash by tgid of the young processes (DT_KBPF_YOUNG) */
	int			 kbs_youngfd;
	/*
	 * raw_syscalls' values for the filter (dt_kbpf_valfilter_ok()): a
	 * record's args[6] (kbs_dir 0, sys_enter) or ret (1, sys_exit), a
	 * u64 each from kbs_valoff; 0: none.  kbs_wantfd's [number] is
	 * then 1 + the call's argument count, past which an argument
	 * reads 0; kbs_args: the reader sees the arguments and return
	 * values at all (the pcbs asked for them, dt_evt_field()).
	 */
	uint16_t		 kbs_valoff;
	uint8_t			 kbs_dir;
	bool			 kbs_args;
	/*
	 * A tracepoint whose arguments are its fields in order (no
	 * decoder, kbs_nsys 0): argument i is kbs_targ[i], as dt_tp_num()
	 * reads it; kbs_targs false: no argument is the program's.
	 */
	bool			 kbs_targs;
	struct dt_kbpf_field	 kbs_targ[DTMAXFUNCARGS];
};

#define DT_KBPF_SYSSHIFT	16

#define DT_KBPF_MAXINSNS	1024

/*
 * Whether the program can evaluate f exactly: comparisons of the pid,
 * thread or a name (equal or not) with a constant, joined by && and ||;
 * names only where they are recorded (comm) and spelled plainly.  Any
 * thread.
 */
bool	dt_kbpf_filter_ok(const struct dtioc_filter *f, bool comm);

/*
 * The same for a program that reads the record's values: a syscall
 * group's (kbs_nsys, kbs_valoff not 0 where vals), or a tracepoint's of
 * fields in order (kbs_targs where vals): also the CPU, the arguments,
 * the return value and errno where vals (a tracepoint's last two read
 * 0, as its records give them), and every comparison (<, <=, >, >=,
 * signed, 32 bits where DTF_F_INT32) of the numbers.  Never the
 * probe's number: a group's program counts many probes.  Any thread.
 */
bool	dt_kbpf_valfilter_ok(const struct dtioc_filter *f, bool comm,
	    bool vals);

/*
 * s's program into insns[DT_KBPF_MAXINSNS]: its length, or 0 when it
 * would not fit.  Any thread.
 */
unsigned int dt_kbpf_prog(const struct dt_kbpf_spec *s,
	    struct bpf_insn *insns);

/*
 * The syscall groups' exec program (sched:sched_process_exec) into
 * insns[DT_KBPF_MAXINSNS]: it puts the execing process's tgid in hash
 * youngfd, a struct dt_kbpf_young, its exec count one more than the
 * entry's before and not decided.  dt_kbpf_exitprog()
 * (sched:sched_process_exit): a thread group leader's exit marks its
 * entry decided.  Their length, 0 on failure.  Any thread.
 */
unsigned int dt_kbpf_execprog(int youngfd, struct bpf_insn *insns);

/*
 * A pid filter's program (dt_tp_pid.c) for tracepoint id, whose records
 * are size bytes (dtfm_fixsize), into insns[DT_KBPF_MAXINSNS]: each hit
 * of process pid (the kernel's tgid) is written whole, as a raw sample,
 * into the BPF output event of its CPU, perf event array outfd's; the
 * hits of other processes go on as before.  Its length, 0 for a record
 * past DT_KBPF_PIDMAX bytes.  Any thread.
 */
#define DT_KBPF_PIDMAX	256
unsigned int dt_kbpf_pidprog(pid_t pid, int id, unsigned int size, int outfd,
	    struct bpf_insn *insns);
unsigned int dt_kbpf_exitprog(int youngfd, struct bpf_insn *insns);

/*
 * dp's events of tpp counted by such a program, at dtpv_start: true,
 * dp_srccount set and the counts registered (dt_aggctr); false where it
 * cannot (dp folds other than such counts, its filter is not one the
 * program takes, tpp's records are not one event each, the kernel
 * refuses, USERDT_KBPF=0): nothing done, the refusal of a program said
 * once.  dt_tp_kbpf_stop(): the program detached, the last counts
 * folded, all closed; false when dp has none.  [K].
 */
bool	dt_tp_kbpf_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp);
bool	dt_tp_kbpf_stop(struct dt_pcb *dp);

/*
 * USERDT_KBPF=0: no program, for comparisons.  Any thread.
 * USERDT_TEST_KBPF=refuse: every program one the verifier refuses, for
 * the tests of the fallback.
 */
bool	dt_tp_kbpf_off(void);

/*
 * For the syscall probes' programs (dt_tp_ksysbpf.c), under [K]:
 * dt_kbpf_bpf(): the bpf(2) call.  dt_kbpf_cpus(): the possible CPUs
 * (a per-CPU value's count), 0 unknown.  dt_kbpf_map(): a map, a hash
 * (per-CPU or not: the counts and the tracee hash) allocated as keys
 * come, so that an unused one pins nothing.  dt_kbpf_put(): a map's u32 value at u32
 * key set, 0 or -1 (errno).  dt_kbpf_load(): s's program, or -1 with
 * *why the verifier's reason; dt_kbpf_load_insns() the same of n
 * instructions already made, named name.  dt_kbpf_event(): a counting event of
 * tracepoint id on the first CPU that opens one, for a program to
 * hang on.  dt_kbpf_misses(): the runs of program prog the kernel
 * skipped since it was loaded (its recursion guard: another BPF program
 * ran on that CPU), or 0 where it cannot tell.
 */
int	dt_kbpf_bpf(int cmd, union bpf_attr *a);
unsigned int dt_kbpf_cpus(void);
int	dt_kbpf_map(uint32_t type, uint32_t ksize, uint32_t vsize,
	    uint32_t n, const char *name);
int	dt_kbpf_put(int fd, uint32_t key, uint32_t val);
int	dt_kbpf_load(const struct dt_kbpf_spec *s, char *why, size_t whylen);
int	dt_kbpf_load_insns(const struct bpf_insn *insns, unsigned int n,
	    const char *name, char *why, size_t whylen);
int	dt_kbpf_event(int id);
uint64_t dt_kbpf_misses(int prog);

/*
 * One program's counts and their drain (dt_tp_kbpfdrain.c), shared by
 * a tracepoint's program (dt_tp_kbpf.c) and a syscall group's
 * (dt_tp_ksysbpf.c): the maps, the charges, the attachment, the
 * generation flip and the drain.  Embedded first in its user's
 * structure.
 */
struct dt_kbpf_drain {
	struct dt_aggctr	 kd_ctr;	/* first: the hooks' cast */
	/* [I] the pcb key k counts for, NULL none; NULL: dac_dp */
	struct dt_pcb		*(*kd_pcb)(struct dt_kbpf_drain *,
				    const struct dt_kbpf_key *k);
	char			 kd_who[96];	/* [I] what dtd names */
	unsigned int		 kd_ncpu;	/* [I] possible CPUs */
	int			 kd_map;	/* [I] the counts */
	int			 kd_gen;	/* [I] the generation */
	int			 kd_ovf;	/* [I] the overflow */
	int			 kd_prog;	/* [I] */
	int			 kd_ev;		/* [K] -1 once detached */
	uint32_t		 kd_cur;	/* [c] generation counted in */
	uint32_t		 kd_drain;	/* [c] generation flipped off */
	bool			 kd_flipped;	/* [c] kd_drain to drain */
	bool			 kd_all;	/* [c] the flip's: take all */
	_Atomic bool		 kd_final;	/* [a] detached: take all */
	uint64_t		 kd_lost;	/* [c] overflow folded */
	uint64_t		 kd_misses;	/* [c] recursion misses folded */
	uint32_t		 kd_nent;	/* [I] the map's entries */
	const struct dt_cred	*kd_cred;	/* [I] charged kd_mem */
	uint64_t		 kd_mem;	/* [I] */
	unsigned int		 kd_nfds;	/* [I] descriptors charged */
	uint64_t		*kd_vals;	/* [c] one a CPU */
	/*
	 * [I] NULL, or what a DT_KBPF_YOUNG key's count is: DT_KBPF_FOLD
	 * (*k rewritten as the program would have keyed it), _DROP, or
	 * _HOLD, kept in kd_held and asked again at the next drain; final:
	 * no hold.  The drain's caller, [c].
	 */
	int			 (*kd_young)(struct dt_kbpf_drain *,
				    struct dt_kbpf_key *k, bool final);
	struct dt_kbpf_held	*kd_held;	/* [c] */
	uint32_t		 kd_nheld, kd_maxheld;	/* [c] */
};

enum { DT_KBPF_FOLD, DT_KBPF_DROP, DT_KBPF_HOLD };

/* A DT_KBPF_YOUNG key's count held for a later drain. */
struct dt_kbpf_held {
	struct dt_kbpf_key	 kh_key;
	uint64_t		 kh_count;
};

/* The descriptors a drain holds: the three maps, the program, event. */
#define DT_KBPF_NFDS	5

/*
 * Under [K].  dt_kbpf_say(): say once why who's counts are sampled
 * after all.  dt_kbpf_usable(): whether a program can count at all
 * (dtd in the initial pid namespace, a global membarrier), said if
 * not.  dt_kbpf_drain_init(): kd for dp, whose table holds size
 * entries, with nfds descriptors charged (DT_KBPF_NFDS and any of the
 * user's own) and the map's worst case charged to the open's memory,
 * the maps named prefix and "count", "gen", "over"; false said (or out
 * of memory), kd then for dt_kbpf_drain_free() alone.
 * dt_kbpf_drain_load(): s's program with kd's maps loaded and a
 * counting event of tracepoint id opened for it, counting in
 * generation 0.  dt_kbpf_drain_attach(): the program attached to the
 * event and the drain registered (dt_aggctr, one grace period per read
 * for every drain of the open).  dt_kbpf_drain_stop(): detached and
 * drained a last time.  dt_kbpf_drain_free(): all closed, the charges
 * returned; not kd itself.
 */
void	dt_kbpf_say(const char *who, const char *what, const char *why);
bool	dt_kbpf_usable(const char *who);
bool	dt_kbpf_drain_init(struct dt_kbpf_drain *kd, struct dt_pcb *dp,
	    uint32_t size, unsigned int nfds, const char *prefix);
bool	dt_kbpf_drain_load(struct dt_kbpf_drain *kd, struct dt_kbpf_spec *s,
	    int id);
bool	dt_kbpf_drain_attach(struct dt_kbpf_drain *kd);
void	dt_kbpf_drain_stop(struct dt_kbpf_drain *kd);
void	dt_kbpf_drain_free(struct dt_kbpf_drain *kd);

#endif /* DT_TP_KBPF_H */
