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
 * The counting program of dt_tp_kbpf.h, assembled by hand: a few dozen
 * instructions, straight-line but for forward jumps, so the verifier
 * walks it in one pass and no compiler or object loader is needed.
 *
 * What it does at each event of its tracepoint, in order:
 *	- reads the task's pid/tid, and its name where a key or the
 *	  filter needs it;
 *	- evaluates the pcb's filter (postfix, as dtd does, dt_probe.c),
 *	  each truth value in a stack slot of its own, and returns if false;
 *	- builds the key (dt_kbpf_key): a name the reader would not see as
 *	  spelled keys its pid too (dt_comm_plain()'s rule, byte by byte);
 *	- adds one to the key's count on this CPU, making the entry if new;
 *	  a full map's refusal adds one to the overflow counter instead.
 * Everything is immutable once built; no state but the caller's buffer.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "dt_tp_kbpf.h"

/* Frame: offsets from r10 */
#define FP_KEY		(-32)		/* struct dt_kbpf_key */
#define FP_COMM		(-48)		/* the task's name */
#define FP_ONE		(-56)		/* a new entry's count */
#define FP_ZERO		(-64)		/* index 0 of the array maps */
#define FP_TRUTH(i)	(-64 - 8 * ((int)(i) + 1))	/* filter stack */
#define FP_SYSID	(-64 - 8 * (DTF_MAXTERMS + 1))	/* the call's */
#define FP_TGID		(FP_SYSID - 8)			/* the process's */
#define FP_NARGS	(FP_TGID - 8)			/* want's value */
#define FP_NOW		(FP_NARGS - 24)			/* dt_kbpf_young */

#define KA_NLABELS	64
#define KA_NFIX		256

struct dt_kbpf_asm {
	struct bpf_insn	*ka_insn;
	unsigned int	 ka_n;
	bool		 ka_full;		/* something did not fit */
	int		 ka_label[KA_NLABELS];	/* insn, -1 unbound */
	unsigned int	 ka_nlabel;
	struct {
		unsigned int	 kf_insn;
		unsigned int	 kf_label;
	}		 ka_fix[KA_NFIX];
	unsigned int	 ka_nfix;
};

static void
ka_ins(struct dt_kbpf_asm *a, uint8_t code, uint8_t dst, uint8_t src,
    int16_t off, int32_t imm)
{
	struct bpf_insn *i;

	if (a->ka_n >= DT_KBPF_MAXINSNS) {
		a->ka_full = true;
		return;
	}
	i = &a->ka_insn[a->ka_n++];
	memset(i, 0, sizeof(*i));
	i->code = code;
	i->dst_reg = dst & 0xf;
	i->src_reg = src & 0xf;
	i->off = off;
	i->imm = imm;
}

static unsigned int
ka_label(struct dt_kbpf_asm *a)
{
	if (a->ka_nlabel >= KA_NLABELS) {
		a->ka_full = true;
		return 0;
	}
	a->ka_label[a->ka_nlabel] = -1;
	return a->ka_nlabel++;
}

static void
ka_bind(struct dt_kbpf_asm *a, unsigned int l)
{
	a->ka_label[l] = (int)a->ka_n;
}

/* A jump to label l, its offset set by ka_resolve(). */
static void
ka_jmp(struct dt_kbpf_asm *a, uint8_t code, uint8_t dst, uint8_t src,
    int32_t imm, unsigned int l)
{
	if (a->ka_nfix >= KA_NFIX) {
		a->ka_full = true;
		return;
	}
	a->ka_fix[a->ka_nfix].kf_insn = a->ka_n;
	a->ka_fix[a->ka_nfix++].kf_label = l;
	ka_ins(a, code, dst, src, 0, imm);
}

#define JMP_IMM(a, op, d, imm, l)	ka_jmp(a, BPF_JMP | (op) | BPF_K, d, 0, imm, l)
#define JMP_REG(a, op, d, s, l)		ka_jmp(a, BPF_JMP | (op) | BPF_X, d, s, 0, l)
#define JA(a, l)			ka_jmp(a, BPF_JMP | BPF_JA, 0, 0, 0, l)
#define MOV64_IMM(a, d, imm)		ka_ins(a, BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, imm)
#define MOV64_REG(a, d, s)		ka_ins(a, BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_REG(a, d, s)		ka_ins(a, BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU64_IMM(a, op, d, imm)	ka_ins(a, BPF_ALU64 | (op) | BPF_K, d, 0, 0, imm)
#define ALU64_REG(a, op, d, s)		ka_ins(a, BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define LDX(a, sz, d, s, off)		ka_ins(a, BPF_LDX | (sz) | BPF_MEM, d, s, off, 0)
#define STX(a, sz, d, s, off)		ka_ins(a, BPF_STX | (sz) | BPF_MEM, d, s, off, 0)
#define ST_IMM(a, sz, d, off, imm)	ka_ins(a, BPF_ST | (sz) | BPF_MEM, d, 0, off, imm)
#define XADD64(a, d, s, off)		ka_ins(a, BPF_STX | BPF_DW | BPF_ATOMIC, d, s, off, BPF_ADD)
#define CALL(a, fn)			ka_ins(a, BPF_JMP | BPF_CALL, 0, 0, 0, fn)
#define EXIT(a)				ka_ins(a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static void
ka_ld_imm64(struct dt_kbpf_asm *a, uint8_t d, uint64_t v)
{
	ka_ins(a, BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(uint32_t)v);
	ka_ins(a, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

static void
ka_ld_map(struct dt_kbpf_asm *a, uint8_t d, int fd)
{
	ka_ins(a, BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd);
	ka_ins(a, 0, 0, 0, 0, 0);
}

/* r2 = r10 + off: a pointer into the frame for a helper. */
static void
ka_fp(struct dt_kbpf_asm *a, uint8_t d, int off)
{
	MOV64_REG(a, d, BPF_REG_10);
	ALU64_IMM(a, BPF_ADD, d, off);
}

/* All jumps are forward; false for a label never bound. */
static bool
ka_resolve(struct dt_kbpf_asm *a)
{
	unsigned int i, at;
	int to;

	for (i = 0; i < a->ka_nfix; i++) {
		at = a->ka_fix[i].kf_insn;
		to = a->ka_label[a->ka_fix[i].kf_label];
		if (to < 0 || to <= (int)at || to - (int)at - 1 > INT16_MAX)
			return false;
		a->ka_insn[at].off = (int16_t)(to - (int)at - 1);
	}
	return true;
}

/*
 * Into r0 the size-byte number at off of the record in base, sign
 * extended where signed, as dt_tp_num() reads it.  A size other than
 * 1, 2, 4 or 8 (BPF_W is 0: no table test tells) fails the program.
 */
static void
ka_ldnum(struct dt_kbpf_asm *a, uint8_t base, uint16_t off, uint8_t size,
    bool sign)
{
	static const uint8_t sz[9] = { 0, BPF_B, BPF_H, 0, BPF_W, 0, 0, 0,
	    BPF_DW };

	if (size != 1 && size != 2 && size != 4 && size != 8) {
		a->ka_full = true;
		return;
	}
	LDX(a, sz[size], BPF_REG_0, base, (int16_t)off);
	if (sign && size < 8) {
		ALU64_IMM(a, BPF_LSH, BPF_REG_0, 64 - 8 * size);
		ALU64_IMM(a, BPF_ARSH, BPF_REG_0, 64 - 8 * size);
	}
}

/*
 * Into r0 the number of term t as dt_evt_field() gives the reader: r6
 * holds the pid and tid, r7 the record (kbs_valoff not 0), FP_NARGS one
 * more than the call's arguments.  r1 to r5 lost.
 */
static void
ka_value(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s,
    const struct dtioc_filter_term *t)
{
	const struct dt_kbpf_field *kf;
	unsigned int f = t->dtft_field, n, ok, done;
	bool vals = s->kbs_nsys != 0 && s->kbs_valoff != 0 && s->kbs_args;

	switch (f) {
	case DTF_PID:
		MOV64_REG(a, BPF_REG_0, BPF_REG_6);
		ALU64_IMM(a, BPF_RSH, BPF_REG_0, 32);
		break;
	case DTF_TID:
		MOV32_REG(a, BPF_REG_0, BPF_REG_6);
		ka_ld_imm64(a, BPF_REG_1, s->kbs_tidoff);
		ALU64_REG(a, BPF_ADD, BPF_REG_0, BPF_REG_1);
		break;
	case DTF_CPU:
		CALL(a, BPF_FUNC_get_smp_processor_id);
		break;
	case DTF_RETVAL:
	case DTF_ERRNO:
		/* an entry has none: dt_tp_ksys_build() leaves them 0 */
		if (!vals || s->kbs_dir != 1) {
			MOV64_IMM(a, BPF_REG_0, 0);
			break;
		}
		ok = ka_label(a);
		done = ka_label(a);
		LDX(a, BPF_DW, BPF_REG_0, BPF_REG_7, (int16_t)s->kbs_valoff);
		/* -4095 to -1 is an error: -1 and its number */
		JMP_IMM(a, BPF_JSGE, BPF_REG_0, 0, ok);
		JMP_IMM(a, BPF_JSLE, BPF_REG_0, -4096, ok);
		if (f == DTF_RETVAL)
			MOV64_IMM(a, BPF_REG_0, -1);
		else
			ka_ins(a, BPF_ALU64 | BPF_NEG, BPF_REG_0, 0, 0, 0);
		JA(a, done);
		ka_bind(a, ok);
		if (f == DTF_ERRNO)
			MOV64_IMM(a, BPF_REG_0, 0);
		ka_bind(a, done);
		break;
	default:
		/*
		 * An argument: the register, for one of the call's own
		 * (dt_tp_ksys_build() copies its probe's count, at most 6).
		 */
		n = f - DTF_ARG0;
		MOV64_IMM(a, BPF_REG_0, 0);
		/* a tracepoint's field, as dt_tp_generic() reads it */
		if (s->kbs_nsys == 0 && s->kbs_targs && s->kbs_args &&
		    n < DTMAXFUNCARGS && (kf = &s->kbs_targ[n])->kf_size != 0) {
			ka_ldnum(a, BPF_REG_7, kf->kf_off, kf->kf_size,
			    kf->kf_signed);
			break;
		}
		if (!vals || s->kbs_dir != 0 || n >= 6)
			break;
		done = ka_label(a);
		LDX(a, BPF_W, BPF_REG_1, BPF_REG_10, FP_NARGS);
		JMP_IMM(a, BPF_JLE, BPF_REG_1, (int32_t)n + 1, done);
		LDX(a, BPF_DW, BPF_REG_0, BPF_REG_7,
		    (int16_t)(s->kbs_valoff + 8 * n));
		ka_bind(a, done);
		break;
	}
	if (t->dtft_flags & DTF_F_INT32) {
		ALU64_IMM(a, BPF_LSH, BPF_REG_0, 32);
		ALU64_IMM(a, BPF_ARSH, BPF_REG_0, 32);
	}
}

/* Comparison t, its truth into slot sp; r6 holds the pid and tid. */
static void
ka_cmp(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s,
    const struct dtioc_filter_term *t, unsigned int sp)
{
	uint64_t w[2] = { 0, 0 };
	size_t len;
	bool eq = t->dtft_op == DTF_OP_EQ;
	unsigned int done = ka_label(a);

	if (t->dtft_field == DTF_COMM) {
		len = strnlen(t->dtft_str, DTMAXCOMLEN);
		/* dt_kbpf_filter_ok() refused a longer one */
		if (len >= sizeof(w)) {
			a->ka_full = true;
			return;
		}
		/* the helper pads the name with NULs: 16 bytes compare */
		memcpy(w, t->dtft_str, len);
		MOV64_IMM(a, BPF_REG_2, eq ? 0 : 1);
		LDX(a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_COMM);
		ka_ld_imm64(a, BPF_REG_1, w[0]);
		JMP_REG(a, BPF_JNE, BPF_REG_0, BPF_REG_1, done);
		LDX(a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_COMM + 8);
		ka_ld_imm64(a, BPF_REG_1, w[1]);
		JMP_REG(a, BPF_JNE, BPF_REG_0, BPF_REG_1, done);
		MOV64_IMM(a, BPF_REG_2, eq ? 1 : 0);
	} else {
		static const uint8_t jop[] = {
			[DTF_OP_EQ] = BPF_JEQ, [DTF_OP_NE] = BPF_JNE,
			[DTF_OP_LT] = BPF_JSLT, [DTF_OP_LE] = BPF_JSLE,
			[DTF_OP_GT] = BPF_JSGT, [DTF_OP_GE] = BPF_JSGE,
		};

		/* signed 64 bits, as dt_filter_cmp() compares */
		ka_value(a, s, t);
		ka_ld_imm64(a, BPF_REG_1, (uint64_t)t->dtft_val);
		MOV64_IMM(a, BPF_REG_2, 1);
		JMP_REG(a, jop[t->dtft_op], BPF_REG_0, BPF_REG_1, done);
		MOV64_IMM(a, BPF_REG_2, 0);
	}
	ka_bind(a, done);
	STX(a, BPF_DW, BPF_REG_10, BPF_REG_2, FP_TRUTH(sp));
}

/* The filter: falls through when it keeps the event, else to out. */
static void
ka_filter(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s,
    unsigned int out)
{
	const struct dtioc_filter *f = s->kbs_filter;
	const struct dtioc_filter_term *t;
	unsigned int i, sp = 0;

	for (i = 0; i < f->dtfl_nterms; i++) {
		t = &f->dtfl_terms[i];
		switch (t->dtft_op) {
		case DTF_OP_AND:
		case DTF_OP_OR:
			/* dt_filter_check() saw two values there */
			LDX(a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_TRUTH(sp - 2));
			LDX(a, BPF_DW, BPF_REG_1, BPF_REG_10, FP_TRUTH(sp - 1));
			ALU64_REG(a, t->dtft_op == DTF_OP_AND ? BPF_AND :
			    BPF_OR, BPF_REG_0, BPF_REG_1);
			STX(a, BPF_DW, BPF_REG_10, BPF_REG_0, FP_TRUTH(sp - 2));
			sp--;
			continue;
		case DTF_OP_CONST:
			ST_IMM(a, BPF_DW, BPF_REG_10, FP_TRUTH(sp),
			    t->dtft_val != 0);
			break;
		default:
			ka_cmp(a, s, t, sp);
			break;
		}
		sp++;
	}
	LDX(a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_TRUTH(0));
	JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, out);
}

/* The record's condition, on the context in r1: else to out. */
static void
ka_cond(struct dt_kbpf_asm *a, const struct dt_kbpf_cond *c,
    unsigned int out)
{
	unsigned int keep = ka_label(a);

	ka_ldnum(a, BPF_REG_1, c->kc_off, c->kc_size, c->kc_signed);
	ka_ld_imm64(a, BPF_REG_2, (uint64_t)c->kc_val);
	JMP_REG(a, c->kc_jmp, BPF_REG_0, BPF_REG_2, keep);
	JA(a, out);
	ka_bind(a, keep);
}

/*
 * raw_syscalls: the call number into r8 and its slot, on to out unless
 * a pcb wants it.  The context in r1, lost.
 */
static void
ka_sysid(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s,
    unsigned int out)
{
	LDX(a, BPF_DW, BPF_REG_8, BPF_REG_1, (int16_t)s->kbs_idoff);
	JMP_IMM(a, BPF_JGE, BPF_REG_8, (int32_t)s->kbs_nsys, out);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_8, FP_SYSID);
	ka_ld_map(a, BPF_REG_1, s->kbs_wantfd);
	ka_fp(a, BPF_REG_2, FP_SYSID);
	CALL(a, BPF_FUNC_map_lookup_elem);
	JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, out);
	LDX(a, BPF_W, BPF_REG_0, BPF_REG_0, 0);
	JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, out);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_NARGS);
}

/* raw_syscalls: the process's tgid (of r6) at FP_TGID. */
static void
ka_tgid(struct dt_kbpf_asm *a)
{
	MOV64_REG(a, BPF_REG_0, BPF_REG_6);
	ALU64_IMM(a, BPF_RSH, BPF_REG_0, 32);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_TGID);
}

/* raw_syscalls: on to out for a process the library records. */
static void
ka_traced(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s,
    unsigned int out)
{
	ka_ld_map(a, BPF_REG_1, s->kbs_tracedfd);
	ka_fp(a, BPF_REG_2, FP_TGID);
	CALL(a, BPF_FUNC_map_lookup_elem);
	JMP_IMM(a, BPF_JNE, BPF_REG_0, 0, out);
}

/* r0: the young hash's entry of the tgid at FP_TGID; on to miss if none. */
static void
ka_ylook(struct dt_kbpf_asm *a, int youngfd, unsigned int miss)
{
	ka_ld_map(a, BPF_REG_1, youngfd);
	ka_fp(a, BPF_REG_2, FP_TGID);
	CALL(a, BPF_FUNC_map_lookup_elem);
	JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, miss);
}

/*
 * A program's end: 0 would make perf_trace_run_bpf_submit() skip the
 * record for every perf event of the tracepoint, anyone's; 1 lets them
 * have it (our counting events keep no buffer).  Its length, 0 if it
 * did not fit.
 */
static unsigned int
ka_finish(struct dt_kbpf_asm *a)
{
	MOV64_IMM(a, BPF_REG_0, 1);
	EXIT(a);
	if (a->ka_full || !ka_resolve(a))
		return 0;
	return a->ka_n;
}

/*
 * raw_syscalls: r9 not 0 for a process the exec program saw start and
 * that is not decided: its key's DT_KBPF_YOUNG and exec count.  Asked
 * before ka_traced(): an attach puts the tgid in the tracee hash before
 * it marks the entry decided, so a call never falls between the two.
 */
static void
ka_young(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s)
{
	unsigned int old = ka_label(a);

	MOV64_IMM(a, BPF_REG_9, 0);
	ka_ylook(a, s->kbs_youngfd, old);
	LDX(a, BPF_W, BPF_REG_1, BPF_REG_0,
	    (int16_t)offsetof(struct dt_kbpf_young, ky_decided));
	JMP_IMM(a, BPF_JNE, BPF_REG_1, 0, old);
	LDX(a, BPF_W, BPF_REG_9, BPF_REG_0,
	    (int16_t)offsetof(struct dt_kbpf_young, ky_exec));
	ALU64_IMM(a, BPF_LSH, BPF_REG_9, DT_KBPF_EXECSHIFT);
	ALU64_IMM(a, BPF_AND, BPF_REG_9, DT_KBPF_EXECMASK);
	ALU64_IMM(a, BPF_OR, BPF_REG_9, DT_KBPF_YOUNG);
	ka_bind(a, old);
}

/*
 * A young process's key (r9 not 0) names its tgid and r9's bits,
 * whatever the rest keys: dtd decides at the drain.
 */
static void
ka_youngkey(struct dt_kbpf_asm *a)
{
	unsigned int old = ka_label(a);

	JMP_IMM(a, BPF_JEQ, BPF_REG_9, 0, old);
	MOV64_REG(a, BPF_REG_0, BPF_REG_6);
	ALU64_IMM(a, BPF_RSH, BPF_REG_0, 32);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 16);
	LDX(a, BPF_W, BPF_REG_0, BPF_REG_10, FP_KEY + 28);
	ALU64_REG(a, BPF_OR, BPF_REG_0, BPF_REG_9);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 28);
	ka_bind(a, old);
}

/* The idle task (tid 0) keyed as dtd names it: DT_KBPF_IDLE. */
static void
ka_idle(struct dt_kbpf_asm *a)
{
	unsigned int busy = ka_label(a);

	MOV32_REG(a, BPF_REG_0, BPF_REG_6);
	JMP_IMM(a, BPF_JNE, BPF_REG_0, 0, busy);
	ST_IMM(a, BPF_DW, BPF_REG_10, FP_KEY, 0);
	ST_IMM(a, BPF_DW, BPF_REG_10, FP_KEY + 8, 0);
	CALL(a, BPF_FUNC_get_smp_processor_id);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 24);
	MOV64_REG(a, BPF_REG_0, BPF_REG_7);
	ALU64_IMM(a, BPF_OR, BPF_REG_0, DT_KBPF_IDLE);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 28);
	ka_bind(a, busy);
}

/*
 * A workqueue worker, whose /proc name carries its work (DT_KBPF_TASK),
 * keys the task's tid and pid too.  Only a worker: any thread's 15-byte
 * name would key the tid of every user thread so named, whose /proc name
 * is never longer than the kernel's (a browser's "ThreadPoolForeg"), a
 * map entry a thread and a /proc read each at every drain; and whether
 * the task is a kernel thread (PF_KTHREAD) takes the task's layout,
 * which the program does not know.
 */
static void
ka_task(struct dt_kbpf_asm *a)
{
	static const char kw[8] = "kworker/";
	unsigned int done = ka_label(a);
	uint64_t w;

	memcpy(&w, kw, sizeof(w));
	LDX(a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_COMM);
	ka_ld_imm64(a, BPF_REG_1, w);
	JMP_REG(a, BPF_JNE, BPF_REG_0, BPF_REG_1, done);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_6, FP_KEY + 20);
	MOV64_REG(a, BPF_REG_0, BPF_REG_6);
	ALU64_IMM(a, BPF_RSH, BPF_REG_0, 32);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 16);
	LDX(a, BPF_W, BPF_REG_0, BPF_REG_10, FP_KEY + 28);
	ALU64_IMM(a, BPF_OR, BPF_REG_0, DT_KBPF_TASK);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 28);
	ka_bind(a, done);
}

/* A name dt_comm_plain() refuses also keys the pid: into the key. */
static void
ka_commpid(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s)
{
	unsigned int plain = ka_label(a), odd = ka_label(a), i;

	if (s->kbs_comm) {
		for (i = 0; i < 16; i++) {
			LDX(a, BPF_B, BPF_REG_0, BPF_REG_10, FP_COMM + (int)i);
			JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, i == 0 ? odd : plain);
			JMP_IMM(a, BPF_JLT, BPF_REG_0, 0x20, odd);
			JMP_IMM(a, BPF_JGT, BPF_REG_0, 0x7e, odd);
			JMP_IMM(a, BPF_JEQ, BPF_REG_0, '\\', odd);
		}
		JA(a, plain);
	}
	ka_bind(a, odd);
	MOV64_REG(a, BPF_REG_0, BPF_REG_6);
	ALU64_IMM(a, BPF_RSH, BPF_REG_0, 32);
	STX(a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 16);
	ka_bind(a, plain);
}

/* One more in map fd's entry at key (a frame offset); else to miss. */
static void
ka_add(struct dt_kbpf_asm *a, int fd, int key, unsigned int miss)
{
	ka_ld_map(a, BPF_REG_1, fd);
	ka_fp(a, BPF_REG_2, key);
	CALL(a, BPF_FUNC_map_lookup_elem);
	JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, miss);
	MOV64_IMM(a, BPF_REG_1, 1);
	XADD64(a, BPF_REG_0, BPF_REG_1, 0);
}

/* One more for the key built at FP_KEY, or for the overflow. */
static void
ka_count(struct dt_kbpf_asm *a, const struct dt_kbpf_spec *s,
    unsigned int out)
{
	unsigned int new = ka_label(a), ovf = ka_label(a);

	ka_add(a, s->kbs_mapfd, FP_KEY, new);
	JA(a, out);

	ka_bind(a, new);
	ST_IMM(a, BPF_DW, BPF_REG_10, FP_ONE, 1);
	ka_ld_map(a, BPF_REG_1, s->kbs_mapfd);
	ka_fp(a, BPF_REG_2, FP_KEY);
	ka_fp(a, BPF_REG_3, FP_ONE);
	MOV64_IMM(a, BPF_REG_4, BPF_NOEXIST);
	CALL(a, BPF_FUNC_map_update_elem);
	JMP_IMM(a, BPF_JEQ, BPF_REG_0, 0, out);
	/* another CPU made it meanwhile: add to that */
	JMP_IMM(a, BPF_JNE, BPF_REG_0, -EEXIST, ovf);
	ka_add(a, s->kbs_mapfd, FP_KEY, ovf);
	JA(a, out);

	/* full (E2BIG), a busy bucket, or no memory: never silently */
	ka_bind(a, ovf);
	ka_add(a, s->kbs_ovffd, FP_ZERO, out);
}

unsigned int
dt_kbpf_prog(const struct dt_kbpf_spec *s, struct bpf_insn *insns)
{
	static struct dt_kbpf_asm z;
	struct dt_kbpf_asm a = z;
	uint32_t keys = s->kbs_fields;
	unsigned int out, gen, i;
	bool comm = false;

	a.ka_insn = insns;
	out = ka_label(&a);
	gen = ka_label(&a);
	if ((keys & (1u << DTF_COMM)) && s->kbs_comm)
		comm = true;
	for (i = 0; s->kbs_filter != NULL && i < s->kbs_filter->dtfl_nterms;
	    i++)
		if (s->kbs_filter->dtfl_terms[i].dtft_op != DTF_OP_AND &&
		    s->kbs_filter->dtfl_terms[i].dtft_op != DTF_OP_OR &&
		    s->kbs_filter->dtfl_terms[i].dtft_op != DTF_OP_CONST &&
		    s->kbs_filter->dtfl_terms[i].dtft_field == DTF_COMM)
			comm = true;

	/* the record, for the filter's values (ka_value()) */
	if ((s->kbs_nsys != 0 && s->kbs_valoff != 0) || s->kbs_targs)
		MOV64_REG(&a, BPF_REG_7, BPF_REG_1);
	if (s->kbs_cond != NULL)
		ka_cond(&a, s->kbs_cond, out);
	/* the cheapest refusal first: a call no pcb counts */
	if (s->kbs_nsys != 0)
		ka_sysid(&a, s, out);
	ST_IMM(&a, BPF_W, BPF_REG_10, FP_ZERO, 0);
	ST_IMM(&a, BPF_W, BPF_REG_10, FP_ZERO + 4, 0);
	CALL(&a, BPF_FUNC_get_current_pid_tgid);
	MOV64_REG(&a, BPF_REG_6, BPF_REG_0);
	if (s->kbs_nsys != 0)
		ka_tgid(&a);
	if (s->kbs_nsys != 0 && s->kbs_youngfd != -1)
		ka_young(&a, s);
	if (s->kbs_nsys != 0)
		ka_traced(&a, s, out);
	if (comm) {
		ka_fp(&a, BPF_REG_1, FP_COMM);
		MOV64_IMM(&a, BPF_REG_2, 16);
		CALL(&a, BPF_FUNC_get_current_comm);
	}
	if (s->kbs_filter != NULL && s->kbs_filter->dtfl_nterms > 0)
		ka_filter(&a, s, out);

	for (i = 0; i < sizeof(struct dt_kbpf_key); i += 8)
		ST_IMM(&a, BPF_DW, BPF_REG_10, FP_KEY + (int)i, 0);
	/* the generation dtd is not draining */
	ka_ld_map(&a, BPF_REG_1, s->kbs_genfd);
	ka_fp(&a, BPF_REG_2, FP_ZERO);
	CALL(&a, BPF_FUNC_map_lookup_elem);
	MOV64_IMM(&a, BPF_REG_7, 0);
	JMP_IMM(&a, BPF_JEQ, BPF_REG_0, 0, gen);
	LDX(&a, BPF_W, BPF_REG_7, BPF_REG_0, 0);
	ka_bind(&a, gen);
	if (s->kbs_nsys != 0) {
		MOV64_REG(&a, BPF_REG_0, BPF_REG_8);
		ALU64_IMM(&a, BPF_LSH, BPF_REG_0, DT_KBPF_SYSSHIFT);
		ALU64_REG(&a, BPF_OR, BPF_REG_7, BPF_REG_0);
	}
	STX(&a, BPF_W, BPF_REG_10, BPF_REG_7, FP_KEY + 28);

	if ((keys & (1u << DTF_COMM)) && s->kbs_comm) {
		LDX(&a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_COMM);
		STX(&a, BPF_DW, BPF_REG_10, BPF_REG_0, FP_KEY);
		LDX(&a, BPF_DW, BPF_REG_0, BPF_REG_10, FP_COMM + 8);
		STX(&a, BPF_DW, BPF_REG_10, BPF_REG_0, FP_KEY + 8);
		ka_task(&a);
		ka_idle(&a);
	}
	if (keys & (1u << DTF_PID)) {
		MOV64_REG(&a, BPF_REG_0, BPF_REG_6);
		ALU64_IMM(&a, BPF_RSH, BPF_REG_0, 32);
		STX(&a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 16);
	} else if (keys & (1u << DTF_COMM))
		ka_commpid(&a, s);
	if (keys & (1u << DTF_TID))
		STX(&a, BPF_W, BPF_REG_10, BPF_REG_6, FP_KEY + 20);
	if (keys & (1u << DTF_CPU)) {
		CALL(&a, BPF_FUNC_get_smp_processor_id);
		STX(&a, BPF_W, BPF_REG_10, BPF_REG_0, FP_KEY + 24);
	}
	if (s->kbs_nsys != 0 && s->kbs_youngfd != -1)
		ka_youngkey(&a);
	ka_count(&a, s, out);

	ka_bind(&a, out);
	return ka_finish(&a);
}

unsigned int
dt_kbpf_execprog(int youngfd, struct bpf_insn *insns)
{
	static struct dt_kbpf_asm z;
	struct dt_kbpf_asm a = z;
	unsigned int first = ka_label(&a);

	a.ka_insn = insns;
	CALL(&a, BPF_FUNC_get_current_pid_tgid);
	ALU64_IMM(&a, BPF_RSH, BPF_REG_0, 32);
	STX(&a, BPF_W, BPF_REG_10, BPF_REG_0, FP_TGID);
	/* the image's exec count: one more than the last young image's */
	MOV64_IMM(&a, BPF_REG_6, 0);
	ka_ylook(&a, youngfd, first);
	LDX(&a, BPF_W, BPF_REG_6, BPF_REG_0,
	    (int16_t)offsetof(struct dt_kbpf_young, ky_exec));
	ALU64_IMM(&a, BPF_ADD, BPF_REG_6, 1);
	ka_bind(&a, first);
	STX(&a, BPF_W, BPF_REG_10, BPF_REG_6,
	    FP_NOW + (int)offsetof(struct dt_kbpf_young, ky_exec));
	ST_IMM(&a, BPF_W, BPF_REG_10,
	    FP_NOW + (int)offsetof(struct dt_kbpf_young, ky_decided), 0);
	CALL(&a, BPF_FUNC_ktime_get_ns);
	STX(&a, BPF_DW, BPF_REG_10, BPF_REG_0,
	    FP_NOW + (int)offsetof(struct dt_kbpf_young, ky_born));
	ka_ld_map(&a, BPF_REG_1, youngfd);
	ka_fp(&a, BPF_REG_2, FP_TGID);
	ka_fp(&a, BPF_REG_3, FP_NOW);
	MOV64_IMM(&a, BPF_REG_4, BPF_ANY);
	CALL(&a, BPF_FUNC_map_update_elem);
	return ka_finish(&a);
}

unsigned int
dt_kbpf_exitprog(int youngfd, struct bpf_insn *insns)
{
	static struct dt_kbpf_asm z;
	struct dt_kbpf_asm a = z;
	unsigned int out = ka_label(&a);

	a.ka_insn = insns;
	CALL(&a, BPF_FUNC_get_current_pid_tgid);
	MOV64_REG(&a, BPF_REG_1, BPF_REG_0);
	ALU64_IMM(&a, BPF_RSH, BPF_REG_1, 32);
	/* a thread's exit is not its process's */
	MOV32_REG(&a, BPF_REG_0, BPF_REG_0);
	JMP_REG(&a, BPF_JNE, BPF_REG_0, BPF_REG_1, out);
	STX(&a, BPF_W, BPF_REG_10, BPF_REG_1, FP_TGID);
	ka_ylook(&a, youngfd, out);
	/*
	 * Decided, not taken out: the pid's exec count goes on, so that a
	 * process that takes the pid and execs is never counted as an
	 * image that came before (the ring of young tracees that left).
	 */
	ST_IMM(&a, BPF_W, BPF_REG_0,
	    (int16_t)offsetof(struct dt_kbpf_young, ky_decided), 2);
	ka_bind(&a, out);
	return ka_finish(&a);
}

/*
 * The pid filter's program: a hit of process pid has its record copied
 * whole (size bytes from the context, which is the record) to the
 * frame and written into the output event of its CPU (map outfd, a
 * perf event array); any other hit, nothing.  The first 8 bytes of the
 * context are not the record's common fields but perf's pointer to the
 * registers, put there for the program (perf_trace_run_bpf_submit()):
 * the copy gets them back, common_type id and common_pid the thread,
 * flags and preempt count 0, as no reader here looks at them.
 */
unsigned int
dt_kbpf_pidprog(pid_t pid, int id, unsigned int size, int outfd,
    struct bpf_insn *insns)
{
	static struct dt_kbpf_asm z;
	struct dt_kbpf_asm a = z;
	unsigned int out = ka_label(&a), off, sz, len = (size + 7) & ~7U;
	uint8_t code;
	int base = -(int)len;

	a.ka_insn = insns;
	if (size < 8 || len > DT_KBPF_PIDMAX)
		return 0;
	MOV64_REG(&a, BPF_REG_6, BPF_REG_1);
	CALL(&a, BPF_FUNC_get_current_pid_tgid);
	MOV64_REG(&a, BPF_REG_7, BPF_REG_0);
	ALU64_IMM(&a, BPF_RSH, BPF_REG_0, 32);
	JMP_IMM(&a, BPF_JNE, BPF_REG_0, (int32_t)pid, out);
	/* common_pid, the thread, over common_type's word */
	ALU64_IMM(&a, BPF_LSH, BPF_REG_7, 32);
	ALU64_IMM(&a, BPF_OR, BPF_REG_7, id & 0xffff);
	STX(&a, BPF_DW, BPF_REG_10, BPF_REG_7, (int16_t)base);
	/*
	 * Loads aligned to their size, as a tracepoint's context allows,
	 * and none past the record: perf refuses to hang a program that
	 * reads beyond its event's fields (EACCES).
	 */
	for (off = 8; off < size; off += sz) {
		for (sz = 8; off % sz != 0 || off + sz > size; sz /= 2)
			;
		code = sz == 8 ? BPF_DW : sz == 4 ? BPF_W : sz == 2 ? BPF_H :
		    BPF_B;
		LDX(&a, code, BPF_REG_1, BPF_REG_6, (int16_t)off);
		STX(&a, code, BPF_REG_10, BPF_REG_1,
		    (int16_t)(base + (int)off));
	}
	MOV64_REG(&a, BPF_REG_1, BPF_REG_6);
	ka_ld_map(&a, BPF_REG_2, outfd);
	/* BPF_F_CURRENT_CPU, zero-extended: no bits above the index */
	ka_ins(&a, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, -1);
	ka_fp(&a, BPF_REG_4, base);
	MOV64_IMM(&a, BPF_REG_5, (int32_t)size);
	CALL(&a, BPF_FUNC_perf_event_output);
	ka_bind(&a, out);
	return ka_finish(&a);
}
