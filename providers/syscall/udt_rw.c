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
 * Rewriting system call sites.  Syscall User Dispatch (udt_sud.c) sees
 * every system call of a thread, but at the price of a signal each.  To
 * make the common calls cheap, the constructor rewrites the `syscall'
 * instructions of every loaded object into jumps to trampolines that
 * call udt_rw_entry (udt_rw_entry.S) and come back: the cost of a
 * function call instead of a signal.  A call that is proven an
 * instruction but has no safe window around it is trapped: its first
 * byte becomes int3, a signal where it runs (udt_rw_trap.c).  Only what
 * cannot be told an instruction stays as it was, for dispatch.
 *
 * A `syscall' is two bytes and a jump five, so a site is the system
 * call and its neighbours: a window of whole instructions around it,
 * copied into the trampoline before and after the call.  A window is
 * rewritten only when it is proven safe:
 *
 *  - it lies in a function the object's unwind table (.eh_frame_hdr)
 *    names, decoded by Capstone from that function's first byte, so
 *    the instruction boundaries are the real ones;
 *  - its other instructions are position independent (no branch, no
 *    RIP-relative operand, no system call or interrupt);
 *  - nothing can land strictly inside it: no direct branch of its
 *    function or of the functions within a short jump of it, no rel32
 *    branch or call anywhere in the object (every byte position is
 *    read as if it were one: false alarms only cost a site), no start
 *    of a function; and its function has no indirect jump (a jump
 *    table could land anywhere in it) and no exception landing pads,
 *    and is no signal trampoline.
 *
 * A trap needs the first of these alone: one byte has no inside.
 *
 * Rewriting happens while no thread can be inside a window as it
 * changes: in the constructor, while the process has a single thread,
 * and for the objects a dlopen() maps, at the loader's r_brk, before any
 * of their code runs (udt_rw_hook(), udt_rw_brk()).  Processes that
 * already run threads, and code made some other way, are left to
 * dispatch (udt_rw_saw()).  The bytes are written through /proc/self/mem, which
 * leaves the mappings' protections alone.
 *
 * The flags register is not preserved across a rewritten call (the
 * kernel preserves it): compilers treat every inline system call as
 * clobbering the flags, and no hand-written site found in glibc reads
 * them afterwards.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"

#define UDT_RW_MAXWIN	4	/* instructions on either side of a call */
#define UDT_RW_NEAR	130	/* a short jump's reach, and some */
#define UDT_RW_MAXINSN	32768	/* a function longer is left alone */
#define UDT_RW_MAXSITE	16384	/* sites in one object */
#define UDT_RW_TRAMPSZ	192	/* the most a trampoline takes */
#define UDT_RW_HDRSZ	64	/* a region's constants */
#define UDT_RW_STUBSZ	64	/* a trapped site's stub */

int	udt_rw_active;

/* USERDT_REWRITE=debug: what was found and rewritten, on stderr. */
int	udt_rw_debug;
static size_t	udt_rw_nsys, udt_rw_nwin, udt_rw_ndone, udt_rw_ntrapped;

/*
 * Sites left to dispatch (USERDT_REWRITE=debug prints the count): system
 * call instructions of decoded functions that were not rewritten, and
 * every `syscall' byte pair where it cannot be told whether it is one:
 * outside every function of the unwind tables, or in a function that is
 * not decoded (a signal trampoline, landing pads, a jump table, an
 * instruction the disassembler does not know).
 */
static size_t	udt_rw_nleft;

/* USERDT_REWRITE=debug: a site not rewritten, what became of it, why. */
static void
udt_rw_tell(const char *what, const char *why, uintptr_t at)
{
	char buf[160];
	int len;

	if (!udt_rw_debug)
		return;
	len = snprintf(buf, sizeof(buf), "userdt: %s: %#lx: %s\n", what,
	    (unsigned long)at, why);
	udt_sys3(SYS_write, 2, buf, len);
}

/* USERDT_REWRITE=debug: a site left to dispatch, and why. */
static void
udt_rw_say(const char *why, uintptr_t at)
{
	udt_rw_tell("left to dispatch", why, at);
}

/* One decoded instruction of the function being looked at. */
struct udt_rw_insn {
	uintptr_t	ri_addr;
	uint8_t		ri_size;
	uint8_t		ri_reloc;	/* may run anywhere */
	uint8_t		ri_syscall;
	long		ri_movimm;	/* mov $imm,%eax: imm, else -1 */
};

/* A window that will be rewritten. */
struct udt_rw_win {
	uintptr_t	rw_start, rw_sys, rw_end;
	long		rw_nr;		/* the number, where it is constant */
	uintptr_t	rw_tramp;
	int		rw_bad;
};

/*
 * Every trampoline and its site, for udt_rw_site_of(): staged by a pass
 * [w], published at its end (udt_rw_tab.c).
 */
static struct udt_rw_stage udt_rw_trampstage;
static struct udt_rw_tab *udt_rw_tramptab;

/* The loader's debugger hook, where new objects are rewritten. */
uintptr_t	udt_rw_ld_lo, udt_rw_ld_hi;	/* [I] the loader's text */
static uintptr_t udt_rw_brkat;			/* [I] r_brk, if hooked */

/* The object being rewritten: its unwind table, decoded. */
struct udt_rw_obj {
	uintptr_t	ro_lo, ro_hi;		/* executable bytes */
	const uint8_t	*ro_hdr;		/* .eh_frame_hdr */
	const int32_t	*ro_tab;		/* (loc, fde) pairs */
	size_t		ro_nfde;
	csh		ro_cs;
	cs_insn		*ro_ci;
	struct udt_rw_insn *ro_insn;		/* scratch */
	uintptr_t	*ro_tgt;		/* scratch: branch targets */
	size_t		ro_ntgt, ro_maxtgt;
	/*
	 * Each function's direct branch targets, decoded once: the
	 * neighbours of one site are the neighbours of the next.
	 * ro_memo[i]: index into ro_arena, -1 not decoded yet, -2 cannot
	 * be; ro_memon[i]: how many.
	 */
	int32_t		*ro_memo;
	uint32_t	*ro_memon;
	uintptr_t	*ro_memotail;	/* where its decoding stopped */
	uintptr_t	*ro_arena;
	size_t		ro_narena, ro_maxarena;
	struct udt_rw_win *ro_win;
	size_t		ro_nwin;
	uintptr_t	*ro_trap;		/* sites to trap (udt_rw_trap.c) */
	size_t		ro_ntrap;
	int		ro_memfd;		/* /proc/self/mem */
	int		ro_indirect;		/* last decode: see there */
	const uintptr_t	(*ro_want)[2];		/* only objects in these */
	size_t		ro_nwant;
};

static void *
udt_rw_alloc(size_t len)
{
	long p = udt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p < 0 && p > -4096 ? NULL : (void *)p;
}

/*
 * A proven system call instruction with no window: trapped (its first
 * byte int3) when o is committed, or left to dispatch past the limit.
 */
static void
udt_rw_trap(struct udt_rw_obj *o, uintptr_t at, const char *why)
{
	if (o->ro_ntrap == UDT_RW_MAXSITE) {
		udt_rw_nleft++;
		udt_rw_say(why, at);
		return;
	}
	udt_rw_tell("trapped", why, at);
	o->ro_trap[o->ro_ntrap++] = at;
}

/* DWARF pointer encodings as .eh_frame uses them. */
static int
udt_rw_encsize(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c:
		return 8;
	case 0x02: case 0x0a:
		return 2;
	case 0x03: case 0x0b:
		return 4;
	default:
		return -1;
	}
}

static int64_t
udt_rw_read(const uint8_t *p, uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
	case 0x0c: { int64_t v; memcpy(&v, p, 8); return v; }
	case 0x02: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 0x0a: { int16_t v; memcpy(&v, p, 2); return v; }
	case 0x03: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { int32_t v; memcpy(&v, p, 4); return v; }
	}
}

static const uint8_t *
udt_rw_uleb(const uint8_t *p, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	do {
		if (shift < 64)
			*v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	return p;
}

/*
 * Function i of the table: its range, and whether it has a language
 * specific data area (exception landing pads).  0 on success, 1 for a
 * signal return trampoline (range set), -1 when it cannot be read.
 */
static int
udt_rw_fde(const struct udt_rw_obj *o, size_t i, uintptr_t *lo,
    uintptr_t *hi, int *lsda)
{
	const uint8_t *fde = o->ro_hdr + o->ro_tab[2 * i + 1], *cie, *p;
	uint32_t len, cieoff;
	uint8_t fenc = 0, lenc = 0xff;
	const char *aug;
	uint64_t v;
	int hasz = 0, n, sig = 0;

	*lo = (uintptr_t)(o->ro_hdr + o->ro_tab[2 * i]);
	memcpy(&len, fde, 4);
	memcpy(&cieoff, fde + 4, 4);
	if (len == 0 || len == 0xffffffffu)
		return -1;
	cie = fde + 4 - cieoff;
	aug = (const char *)cie + 9;
	if (cie[8] != 1 && cie[8] != 3)
		return -1;
	p = (const uint8_t *)aug + strlen(aug) + 1;
	p = udt_rw_uleb(p, &v);			/* code alignment */
	p = udt_rw_uleb(p, &v);			/* data alignment (sleb) */
	if (cie[8] == 1)
		p++;
	else
		p = udt_rw_uleb(p, &v);
	for (; *aug != '\0'; aug++) {
		switch (*aug) {
		case 'z':
			hasz = 1;
			p = udt_rw_uleb(p, &v);
			break;
		case 'R':
			fenc = *p++;
			break;
		case 'L':
			lenc = *p++;
			break;
		case 'P':
			if ((n = udt_rw_encsize(*p)) < 0)
				return -1;
			p += 1 + n;
			break;
		case 'S':
			/*
			 * A signal frame's return trampoline: its table
			 * entry starts a byte early (unwinders look up pc
			 * - 1), and unwinders and debuggers recognise the
			 * trampoline by its bytes.  Never touched, never
			 * decoded from its entry (1).
			 */
			sig = 1;
			break;
		default:
			return -1;
		}
	}
	if ((n = udt_rw_encsize(fenc)) < 0)
		return -1;
	*hi = *lo + (uintptr_t)udt_rw_read(fde + 8 + n, fenc);
	*lsda = 0;
	if (hasz && lenc != 0xff) {
		p = udt_rw_uleb(fde + 8 + 2 * n, &v);
		if (v > 0 && (n = udt_rw_encsize(lenc)) > 0)
			*lsda = udt_rw_read(p, lenc) != 0;
	}
	return sig;
}

/* The function containing pc, or -1. */
static long
udt_rw_find(const struct udt_rw_obj *o, uintptr_t pc)
{
	size_t lo = 0, hi = o->ro_nfde, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if ((uintptr_t)(o->ro_hdr + o->ro_tab[2 * mid]) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? -1 : (long)lo - 1;
}

static void
udt_rw_target(struct udt_rw_obj *o, uintptr_t t)
{
	if (o->ro_ntgt < o->ro_maxtgt)
		o->ro_tgt[o->ro_ntgt++] = t;
	else
		o->ro_ntgt = o->ro_maxtgt + 1;	/* overflow: trust none */
}

/*
 * Decode function [lo, hi) into o->ro_insn, adding its direct branch
 * targets to o->ro_tgt.  Returns the instruction count, or -1 when it
 * cannot be decoded whole, *stop (unless NULL) then where decoding
 * stopped; o->ro_indirect says whether it has a jump whose target
 * nobody can tell (a jump table, perhaps).
 */
static long
udt_rw_decode(struct udt_rw_obj *o, uintptr_t lo, uintptr_t hi,
    uintptr_t *stop)
{
	const uint8_t *code = (const uint8_t *)lo;
	size_t size = hi - lo;
	uint64_t addr = lo;
	cs_insn *ci = o->ro_ci;
	long n = 0;
	int indirect = 0;

	if (stop != NULL)
		*stop = lo;
	if (lo < o->ro_lo || hi > o->ro_hi || hi <= lo)
		return -1;
	while (size > 0) {
		struct udt_rw_insn *ri;
		cs_x86 *x;
		int j, branch, reloc = 1;

		if (n >= UDT_RW_MAXINSN ||
		    !cs_disasm_iter(o->ro_cs, &code, &size, &addr, ci)) {
			if (stop != NULL)
				*stop = (uintptr_t)addr;
			return -1;
		}
		x = &ci->detail->x86;
		branch = cs_insn_group(o->ro_cs, ci, CS_GRP_JUMP) ||
		    cs_insn_group(o->ro_cs, ci, CS_GRP_CALL) ||
		    cs_insn_group(o->ro_cs, ci, CS_GRP_BRANCH_RELATIVE);
		if (branch || cs_insn_group(o->ro_cs, ci, CS_GRP_RET) ||
		    cs_insn_group(o->ro_cs, ci, CS_GRP_INT) ||
		    cs_insn_group(o->ro_cs, ci, CS_GRP_IRET) ||
		    ci->id == X86_INS_SYSCALL || ci->id == X86_INS_SYSENTER)
			reloc = 0;
		for (j = 0; j < x->op_count; j++) {
			if (x->operands[j].type == X86_OP_MEM &&
			    x->operands[j].mem.base == X86_REG_RIP)
				reloc = 0;
		}
		if (branch) {
			if (x->op_count == 1 && x->operands[0].type ==
			    X86_OP_IMM)
				udt_rw_target(o, (uintptr_t)x->operands[0].imm);
			else if (cs_insn_group(o->ro_cs, ci, CS_GRP_JUMP) &&
			    !(x->op_count == 1 && x->operands[0].type ==
			    X86_OP_MEM && x->operands[0].mem.base ==
			    X86_REG_RIP))
				indirect = 1;	/* a jump table, perhaps */
		}
		ri = &o->ro_insn[n++];
		ri->ri_addr = (uintptr_t)ci->address;
		ri->ri_size = (uint8_t)ci->size;
		ri->ri_reloc = (uint8_t)reloc;
		ri->ri_syscall = ci->id == X86_INS_SYSCALL;
		ri->ri_movimm = -1;
		if (ci->id == X86_INS_MOV && x->op_count == 2 &&
		    x->operands[0].type == X86_OP_REG &&
		    (x->operands[0].reg == X86_REG_EAX ||
		    x->operands[0].reg == X86_REG_RAX) &&
		    x->operands[1].type == X86_OP_IMM)
			ri->ri_movimm = (long)x->operands[1].imm;
	}
	o->ro_indirect = indirect;
	if (stop != NULL)
		*stop = hi;
	return n;
}

/* Whether any known target lies strictly inside (lo, hi). */
static int
udt_rw_hit(const struct udt_rw_obj *o, size_t from, uintptr_t lo,
    uintptr_t hi)
{
	size_t i;

	if (o->ro_ntgt > o->ro_maxtgt)
		return 1;
	for (i = from; i < o->ro_ntgt; i++)
		if (o->ro_tgt[i] > lo && o->ro_tgt[i] < hi)
			return 1;
	return 0;
}

/* Bytes [p, q) read as if each could start a short jump into (lo, hi). */
static int
udt_rw_short(uintptr_t p, uintptr_t q, uintptr_t lo, uintptr_t hi)
{
	const uint8_t *b;
	uintptr_t t;

	for (; p + 1 < q; p++) {
		b = (const uint8_t *)p;
		if (*b == 0xeb || (*b >= 0x70 && *b <= 0x7f) ||
		    (*b >= 0xe0 && *b <= 0xe3)) {
			t = p + 2 + (uintptr_t)(intptr_t)(int8_t)b[1];
			if (t > lo && t < hi)
				return 1;
		}
	}
	return 0;
}

/*
 * Whether a direct branch of function i, [flo, fhi), lands strictly
 * inside (lo, hi): decoded the first time it is asked, remembered after.
 * Where the disassembler stops short (an instruction it does not know,
 * as Capstone 4 does not know wrpkru), the branches before are known
 * and the rest of the function, as far as [a, b) (a short jump's reach
 * of the window), is read like padding, as if each byte could start a
 * short jump.
 */
static int
udt_rw_memo_hit(struct udt_rw_obj *o, long i, uintptr_t flo, uintptr_t fhi,
    uintptr_t lo, uintptr_t hi, uintptr_t a, uintptr_t b)
{
	size_t mark = o->ro_ntgt, k, n;
	uintptr_t t0, t1;

	if (o->ro_memo[i] == -1) {
		(void)udt_rw_decode(o, flo, fhi, &o->ro_memotail[i]);
		if (o->ro_ntgt > o->ro_maxtgt ||
		    o->ro_narena + (o->ro_ntgt - mark) > o->ro_maxarena)
			o->ro_memo[i] = -2;
		else {
			n = o->ro_ntgt - mark;
			memcpy(o->ro_arena + o->ro_narena, o->ro_tgt + mark,
			    n * sizeof(*o->ro_arena));
			o->ro_memo[i] = (int32_t)o->ro_narena;
			o->ro_memon[i] = (uint32_t)n;
			o->ro_narena += n;
		}
		o->ro_ntgt = mark;
	}
	if (o->ro_memo[i] < 0)
		return 1;
	for (k = 0; k < o->ro_memon[i]; k++) {
		uintptr_t t = o->ro_arena[o->ro_memo[i] + (int32_t)k];

		if (t > lo && t < hi)
			return 1;
	}
	t0 = o->ro_memotail[i] > a ? o->ro_memotail[i] : a;
	t1 = fhi < b ? fhi : b;
	return t0 < t1 && udt_rw_short(t0, t1, lo, hi);
}

/*
 * Short jumps from code next to window (lo, hi) of function fi: the
 * functions within reach are decoded exactly; bytes no function covers
 * (padding, code without unwind information) are read as if each could
 * start a short jump.
 */
static int
udt_rw_near(struct udt_rw_obj *o, long fi, uintptr_t lo, uintptr_t hi)
{
	uintptr_t a = lo > o->ro_lo + UDT_RW_NEAR ? lo - UDT_RW_NEAR : o->ro_lo;
	uintptr_t b = hi + UDT_RW_NEAR < o->ro_hi ? hi + UDT_RW_NEAR : o->ro_hi;
	uintptr_t flo, fhi, cur = a;
	long i;
	int lsda, sig;

	for (i = fi; i > 0; i--) {
		if (udt_rw_fde(o, (size_t)i - 1, &flo, &fhi, &lsda) < 0)
			return 1;
		if (fhi <= a)
			break;
	}
	for (; (size_t)i < o->ro_nfde; i++) {
		if ((sig = udt_rw_fde(o, (size_t)i, &flo, &fhi, &lsda)) < 0)
			return 1;
		if (flo >= b)
			break;
		/* A signal trampoline's bytes are read like padding. */
		if (sig)
			continue;
		if (flo > cur && udt_rw_short(cur, flo, lo, hi))
			return 1;
		if (i != fi && udt_rw_memo_hit(o, i, flo, fhi, lo, hi, a, b))
			return 1;
		if (fhi > cur)
			cur = fhi;
	}
	if (cur < b && udt_rw_short(cur, b, lo, hi))
		return 1;
	return 0;
}

/*
 * The smallest window of at least five bytes around instruction k of n
 * whose other instructions may run elsewhere and in which no target of
 * this function lands.
 */
static int
udt_rw_window(const struct udt_rw_obj *o, long n, long k, long *ip,
    long *jp)
{
	const struct udt_rw_insn *ri = o->ro_insn;
	long i, j, best = -1, bi = 0, bj = 0;
	uintptr_t len;

	for (i = k; i >= 0 && i > k - UDT_RW_MAXWIN; i--) {
		if (i < k && !ri[i].ri_reloc)
			break;
		for (j = k; j < n && j < k + UDT_RW_MAXWIN; j++) {
			if (j > k && !ri[j].ri_reloc)
				break;
			len = ri[j].ri_addr + ri[j].ri_size - ri[i].ri_addr;
			if (len < 5)
				continue;
			if (udt_rw_hit(o, 0, ri[i].ri_addr, ri[j].ri_addr +
			    ri[j].ri_size))
				break;
			if (best < 0 || (long)len < best) {
				best = (long)len;
				bi = i;
				bj = j;
			}
			break;
		}
	}
	if (best < 0)
		return -1;
	*ip = bi;
	*jp = bj;
	return 0;
}

/*
 * Find the windows of one object's function fi, [lo, hi), which holds a
 * call.  Where no window can be, the call is trapped: all of them in a
 * function whose every byte a jump may land on (why: a signal
 * trampoline, landing pads, a jump table).  Returns why the function
 * cannot be decoded, or NULL.
 */
static const char *
udt_rw_function(struct udt_rw_obj *o, long fi, uintptr_t lo, uintptr_t hi,
    const char *why)
{
	struct udt_rw_insn *ri = o->ro_insn;
	struct udt_rw_win w[64];
	long n, k, i, j, nr, m;
	size_t nw = 0, x;

	o->ro_ntgt = 0;
	if ((n = udt_rw_decode(o, lo, hi, NULL)) < 0)
		return "cannot decode its function";
	if (why == NULL && o->ro_indirect)
		why = "an indirect jump in its function";
	for (k = 0; k < n; k++) {
		if (!ri[k].ri_syscall)
			continue;
		udt_rw_nsys++;
		if (why != NULL) {
			udt_rw_trap(o, ri[k].ri_addr, why);
			continue;
		}
		if (nw == sizeof(w) / sizeof(w[0])) {
			udt_rw_trap(o, ri[k].ri_addr, "too many in one function");
			continue;
		}
		if (udt_rw_window(o, n, k, &i, &j) != 0) {
			udt_rw_trap(o, ri[k].ri_addr, "no window");
			continue;
		}
		nr = -1;
		for (m = i; m < k; m++)
			if (ri[m].ri_movimm >= 0)
				nr = ri[m].ri_movimm;
		/*
		 * rt_sigreturn must run on the signal frame the program's
		 * stack pointer is at: the handler's way (udt_sud.c).
		 */
		if (nr == SYS_rt_sigreturn) {
			udt_rw_trap(o, ri[k].ri_addr, "rt_sigreturn");
			continue;
		}
		/* Two jumps cannot share bytes. */
		if (nw > 0 && ri[i].ri_addr < w[nw - 1].rw_end) {
			udt_rw_trap(o, ri[k].ri_addr, "its window meets the "
			    "one before");
			continue;
		}
		w[nw].rw_start = ri[i].ri_addr;
		w[nw].rw_sys = ri[k].ri_addr;
		w[nw].rw_end = ri[j].ri_addr + ri[j].ri_size;
		w[nw].rw_nr = nr;
		w[nw].rw_bad = 0;
		nw++;
	}
	/* Neighbours' short jumps: decoding them reuses the scratch. */
	for (x = 0; x < nw; x++) {
		if (o->ro_nwin == UDT_RW_MAXSITE) {
			udt_rw_trap(o, w[x].rw_sys, "too many in one object");
			continue;
		}
		if (udt_rw_near(o, fi, w[x].rw_start, w[x].rw_end)) {
			udt_rw_trap(o, w[x].rw_sys, "a short jump nearby");
			continue;
		}
		udt_rw_nwin++;
		o->ro_win[o->ro_nwin++] = w[x];
	}
	return NULL;
}

/*
 * Windows w[nw] (sorted) into which a rel32 jump or call of the object,
 * real or not, or a function's start lands: rw_bad.
 */
static void
udt_rw_far(struct udt_rw_obj *o, struct udt_rw_win *w, size_t nw)
{
	const uint8_t *p = (const uint8_t *)o->ro_lo;
	const uint8_t *end = (const uint8_t *)o->ro_hi;
	size_t lo, hi, mid, i;
	uintptr_t t;
	int32_t rel;

	if (nw == 0)
		return;
	for (; p + 6 <= end; p++) {
		if (*p == 0xe8 || *p == 0xe9) {
			memcpy(&rel, p + 1, 4);
			t = (uintptr_t)p + 5 + (intptr_t)rel;
		} else if (*p == 0x0f && (p[1] & 0xf0) == 0x80) {
			memcpy(&rel, p + 2, 4);
			t = (uintptr_t)p + 6 + (intptr_t)rel;
		} else
			continue;
		if (t <= w[0].rw_start || t >= w[nw - 1].rw_end)
			continue;
		lo = 0;
		hi = nw;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (w[mid].rw_start < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && t < w[lo - 1].rw_end)
			w[lo - 1].rw_bad = 1;
	}
	for (i = 0; i < o->ro_nfde; i++) {
		t = (uintptr_t)(o->ro_hdr + o->ro_tab[2 * i]);
		for (lo = 0; lo < nw; lo++)
			if (t > w[lo].rw_start && t < w[lo].rw_end)
				w[lo].rw_bad = 1;
	}
}

/* Reserve trampoline space within a rel32 jump of all of [lo, hi). */
static uint8_t *
udt_rw_region(uintptr_t lo, uintptr_t hi, size_t len)
{
	const uintptr_t step = 1UL << 20, reach = (1UL << 31) - (1UL << 24);
	uintptr_t at;
	long p;
	int k;

	for (k = 0; k < 2048; k++) {
		if (k & 1)
			at = ((hi + step - 1) & ~(step - 1)) +
			    (uintptr_t)(k / 2) * step;
		else
			at = (lo & ~(step - 1)) - (uintptr_t)(k / 2 + 1) * step;
		if (at < 65536 || (at >= hi && at + len - lo > reach) ||
		    (at < lo && (at + len > lo || hi - at > reach)))
			continue;
		p = udt_sys6(SYS_mmap, (long)at, (long)len,
		    PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (long)at)
			return (uint8_t *)p;
		if (p >= 0 || p < -4095)
			udt_sys2(SYS_munmap, p, len);
	}
	return NULL;
}

static uint8_t *
udt_rw_put(uint8_t *q, const void *b, size_t n)
{
	memcpy(q, b, n);
	return q + n;
}

static uint8_t *
udt_rw_rel32(uint8_t *q, uintptr_t to)
{
	int32_t rel = (int32_t)(to - ((uintptr_t)q + 4));

	return udt_rw_put(q, &rel, 4);
}

static const uint8_t udt_rw_below[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 };
static const uint8_t udt_rw_callrip[] = { 0xff, 0x15 };

/*
 * A call made in place, at q: dispatch let through for it, then the
 * return probe.  The region's constants at hdr (entry, post, the
 * dispatch selector's TLS offset, udt_rw_ipnr's).  Returns its end.
 */
static uint8_t *
udt_rw_emit_inplace(uint8_t *q, const uint8_t *hdr, long rnr)
{
	static const uint8_t above8[] = { 0x48, 0x8d, 0xa4, 0x24, 0x88, 0, 0, 0 };
	static const uint8_t ldtp[] = { 0x4c, 0x8b, 0x1d };	/* mov (rip),%r11 */
	static const uint8_t allow[] = { 0x64, 0x41, 0xc6, 0x03, 0x00 };
	static const uint8_t block[] = { 0x64, 0x41, 0xc6, 0x03, 0x01 };
	static const uint8_t sysc[] = { 0x0f, 0x05 };
	static const uint8_t pushtls[] = { 0x64, 0x41, 0xff, 0x33 };
	int32_t nr;

	q = udt_rw_put(q, ldtp, 3);
	q = udt_rw_rel32(q, (uintptr_t)hdr + 16);
	q = udt_rw_put(q, allow, sizeof(allow));
	q = udt_rw_put(q, sysc, 2);
	q = udt_rw_put(q, ldtp, 3);
	q = udt_rw_rel32(q, (uintptr_t)hdr + 16);
	q = udt_rw_put(q, block, sizeof(block));
	/*
	 * The return probe, in both processes or threads: the call's
	 * number + 1 pushed, known here or left in the thread's
	 * udt_rw_ipnr by udt_rw_slow() (0 in a child with a thread pointer
	 * of its own, which then records nothing).
	 */
	q = udt_rw_put(q, udt_rw_below, sizeof(udt_rw_below));
	if (rnr >= 0) {
		nr = (int32_t)rnr + 1;
		*q++ = 0x68;			/* push $nr + 1 */
		q = udt_rw_put(q, &nr, 4);
	} else {
		q = udt_rw_put(q, ldtp, 3);
		q = udt_rw_rel32(q, (uintptr_t)hdr + 24);
		q = udt_rw_put(q, pushtls, sizeof(pushtls));
	}
	q = udt_rw_put(q, udt_rw_callrip, 2);
	q = udt_rw_rel32(q, (uintptr_t)hdr + 8);
	return udt_rw_put(q, above8, sizeof(above8));
}

/* One trampoline at q for window w (see udt_rw_emit_inplace()). */
static uint8_t *
udt_rw_emit_tramp(uint8_t *q, const uint8_t *hdr, const struct udt_rw_win *w)
{
	static const uint8_t above[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0 };
	uint8_t *jr;

	q = udt_rw_put(q, (const void *)w->rw_start, w->rw_sys - w->rw_start);
	q = udt_rw_put(q, udt_rw_below, sizeof(udt_rw_below));
	q = udt_rw_put(q, udt_rw_callrip, 2);
	q = udt_rw_rel32(q, (uintptr_t)hdr);
	q = udt_rw_put(q, above, sizeof(above));
	*q++ = 0xe3;				/* jrcxz: done */
	jr = q++;
	q = udt_rw_emit_inplace(q, hdr, w->rw_nr);
	*jr = (uint8_t)(q - (jr + 1));
	q = udt_rw_put(q, (const void *)(w->rw_sys + 2), w->rw_end -
	    (w->rw_sys + 2));
	*q++ = 0xe9;
	q = udt_rw_rel32(q, w->rw_end);
	return q;
}

static int
udt_rw_poke(struct udt_rw_obj *o, uintptr_t at, const uint8_t *b, size_t n)
{
	if (o->ro_memfd < 0)
		o->ro_memfd = (int)udt_sys3(SYS_open, "/proc/self/mem",
		    O_RDWR | O_CLOEXEC, 0);
	if (o->ro_memfd < 0)
		return -1;
	return udt_sys4(SYS_pwrite64, o->ro_memfd, b, n, at) == (long)n ?
	    0 : -1;
}

/*
 * Trap o's sites without a window: each gets a stub in the region at q
 * for the calls the handler makes in place, then its int3.  Returns how
 * many were trapped.
 */
static size_t
udt_rw_commit_traps(struct udt_rw_obj *o, uint8_t *q)
{
	static const uint8_t int3 = 0xcc;
	size_t i, n = 0;

	if (udt_sud_trap_init() != 0)
		return 0;
	for (i = 0; i < o->ro_ntrap; i++, q += UDT_RW_STUBSZ) {
		if (udt_rw_trap_put(o->ro_trap[i], (uintptr_t)q) != 0)
			break;
		/* Its entry is harmless: the site holds no int3. */
		if (udt_rw_poke(o, o->ro_trap[i], &int3, 1) != 0)
			break;
		n++;
	}
	return n;
}

/*
 * Build the trampolines of o's windows and jump to them; trap the sites
 * without one (bad windows among them).  Returns how many of the sites
 * found are neither.
 */
static size_t
udt_rw_commit(struct udt_rw_obj *o)
{
	uint8_t *reg, *q, *stubs, patch[16];
	size_t i, len, nok = 0, ntrap;
	uintptr_t tpoff;
	int32_t rel;

	for (i = 0; i < o->ro_nwin; i++) {
		if (!o->ro_win[i].rw_bad)
			nok++;
		else
			udt_rw_trap(o, o->ro_win[i].rw_sys,
			    "a far jump into its window");
	}
	if (nok == 0 && o->ro_ntrap == 0)
		return 0;
	len = (UDT_RW_HDRSZ + nok * UDT_RW_TRAMPSZ +
	    o->ro_ntrap * UDT_RW_STUBSZ + 4095) & ~(size_t)4095;
	if ((reg = udt_rw_region(o->ro_lo, o->ro_hi, len)) == NULL)
		return nok + o->ro_ntrap;
	tpoff = (uintptr_t)&udt_thread.ut_sud -
	    (uintptr_t)__builtin_thread_pointer();
	((uintptr_t *)(void *)reg)[0] = (uintptr_t)udt_rw_entry;
	((uintptr_t *)(void *)reg)[1] = (uintptr_t)udt_rw_post;
	((uintptr_t *)(void *)reg)[2] = tpoff;
	((uintptr_t *)(void *)reg)[3] = (uintptr_t)&udt_rw_ipnr -
	    (uintptr_t)__builtin_thread_pointer();
	q = reg + UDT_RW_HDRSZ;
	for (i = 0; i < o->ro_nwin; i++) {
		struct udt_rw_win *w = &o->ro_win[i];

		if (w->rw_bad)
			continue;
		w->rw_tramp = (uintptr_t)q;
		q = udt_rw_emit_tramp(q, reg, w);
	}
	/* A trapped site's stub: its calls made in place, then back. */
	stubs = q;
	for (i = 0; i < o->ro_ntrap; i++, q = stubs + i * UDT_RW_STUBSZ) {
		q = udt_rw_emit_inplace(q, reg, -1);
		*q++ = 0xe9;
		(void)udt_rw_rel32(q, o->ro_trap[i] + 2);
	}
	if (udt_sys3(SYS_mprotect, reg, len, PROT_READ | PROT_EXEC) != 0) {
		udt_sys2(SYS_munmap, reg, len);
		return nok + o->ro_ntrap;
	}
	udt_rw_cover((uintptr_t)reg, (uintptr_t)reg + len);
	ntrap = udt_rw_commit_traps(o, stubs);
	udt_rw_ntrapped += ntrap;
	for (i = 0; i < o->ro_nwin; i++) {
		struct udt_rw_win *w = &o->ro_win[i];
		uintptr_t t = w->rw_tramp;

		if (w->rw_bad)
			continue;
		len = w->rw_end - w->rw_start;
		memset(patch, 0xcc, sizeof(patch));
		patch[0] = 0xe9;
		rel = (int32_t)(t - (w->rw_start + 5));
		memcpy(patch + 1, &rel, 4);
		if (udt_rw_poke(o, w->rw_start, patch, len) != 0)
			break;
		/* Without it, only a user stack shows the trampoline. */
		(void)udt_rw_stage_put(&udt_rw_trampstage, t, w->rw_sys);
		udt_rw_ndone++;
		udt_rw_active = 1;
		nok--;
	}
	return nok + o->ro_ntrap - ntrap;
}

/*
 * Every `syscall' byte pair in the executable segments of an object that
 * cannot be looked at: left to dispatch.
 */
static int
udt_rw_unknown(struct dl_phdr_info *info, const char *why)
{
	const ElfW(Phdr) *ph;
	const uint8_t *p, *end;
	uintptr_t self = (uintptr_t)udt_rw_unknown;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		if (self >= (uintptr_t)p && self < (uintptr_t)end)
			continue;		/* this library */
		for (; p + 1 < end; p++)
			if (p[0] == 0x0f && p[1] == 0x05) {
				udt_rw_nleft++;
				udt_rw_say(why, (uintptr_t)p);
			}
	}
	return 0;
}

/*
 * A `syscall' byte pair at p outside every function of the unwind table.
 * Hand-written code ends a function's unwind entry at a system call whose
 * child runs on another stack (glibc's clone and clone3): when p is where
 * function fi ends, decoded whole, p starts an instruction, and is
 * trapped.  Anything else is unknown, left to dispatch.
 */
static void
udt_rw_after(struct udt_rw_obj *o, long fi, uintptr_t p)
{
	uintptr_t flo, fhi;
	int lsda, sig;

	if (fi >= 0 && (sig = udt_rw_fde(o, (size_t)fi, &flo, &fhi,
	    &lsda)) >= 0 && fhi == p) {
		o->ro_ntgt = 0;
		if (udt_rw_decode(o, flo + (sig != 0), fhi, NULL) >= 0) {
			udt_rw_nsys++;
			udt_rw_trap(o, p, "where its function's unwind entry "
			    "ends");
			return;
		}
	}
	udt_rw_nleft++;
	udt_rw_say("outside the unwind table's functions", p);
}

/* Whether an executable segment of the object meets a wanted range. */
static int
udt_rw_wanted(const struct udt_rw_obj *o, const struct dl_phdr_info *info)
{
	const ElfW(Phdr) *ph;
	uintptr_t lo, hi;
	size_t k;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = info->dlpi_addr + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		for (k = 0; k < o->ro_nwant; k++)
			if (lo < o->ro_want[k][1] && o->ro_want[k][0] < hi)
				return 1;
	}
	return 0;
}

/* Bytes the assembler fills between functions with: nops, int3. */
static int
udt_rw_padbyte(uint8_t b)
{
	switch (b) {
	case 0x00: case 0x0f: case 0x1f: case 0x2e: case 0x40: case 0x44:
	case 0x66: case 0x80: case 0x84: case 0x90: case 0xcc:
		return 1;
	default:
		return 0;
	}
}

/*
 * The loader calls r_brk (_dl_debug_state) once the objects a dlopen()
 * maps are in its list, before it relocates them or runs any of their
 * code: there they are rewritten (udt_rw_brk()).  Its five first bytes
 * become a jump, proven as a window is: its `ret' and padding no
 * function covers, or `endbr64; ret'; nothing lands inside.  o: the
 * loader's text, in the constructor.
 */
static void
udt_rw_hook(struct udt_rw_obj *o, uintptr_t b)
{
	static const uint8_t endbr_ret[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	const uint8_t *c = (const uint8_t *)b;
	struct udt_rw_win w;
	uintptr_t flo, fhi, to = (uintptr_t)udt_rw_brk;
	uint8_t patch[5], *reg;
	long fi;
	int i, lsda;
	int32_t rel;

	if ((fi = udt_rw_find(o, b)) < 0 ||
	    udt_rw_fde(o, (size_t)fi, &flo, &fhi, &lsda) != 0 || flo != b)
		return;
	if (c[0] == 0xc3 && fhi == b + 1) {
		for (i = 1; i < 5; i++)
			if (!udt_rw_padbyte(c[i]))
				return;
	} else if (memcmp(c, endbr_ret, sizeof(endbr_ret)) != 0 ||
	    fhi < b + 5)
		return;
	memset(&w, 0, sizeof(w));
	w.rw_start = w.rw_sys = b;
	w.rw_end = b + 5;
	udt_rw_far(o, &w, 1);
	if (w.rw_bad || udt_rw_near(o, fi, b, b + 5))
		return;
	/* jmp *0(%rip), then the address: udt_rw_brk is further away. */
	if ((reg = udt_rw_region(o->ro_lo, o->ro_hi, 4096)) == NULL)
		return;
	reg[0] = 0xff;
	reg[1] = 0x25;
	memset(reg + 2, 0, 4);
	memcpy(reg + 6, &to, sizeof(to));
	if (udt_sys3(SYS_mprotect, reg, 4096, PROT_READ | PROT_EXEC) != 0) {
		udt_sys2(SYS_munmap, reg, 4096);
		return;
	}
	udt_rw_cover((uintptr_t)reg, (uintptr_t)reg + 4096);
	patch[0] = 0xe9;
	rel = (int32_t)((uintptr_t)reg - (b + 5));
	memcpy(patch + 1, &rel, 4);
	if (udt_rw_poke(o, b, patch, sizeof(patch)) != 0)
		return;
	udt_rw_brkat = b;
	udt_rw_ld_lo = o->ro_lo;
	udt_rw_ld_hi = o->ro_hi;
}

/* One loaded object: find, prove and rewrite its sites. */
static int
udt_rw_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct udt_rw_obj *o = arg;
	const ElfW(Phdr) *ph;
	const uint8_t *hdr = NULL, *p;
	uintptr_t self = (uintptr_t)udt_rw_object, flo, fhi;
	const char *why = NULL;
	long fi, last = -1;
	size_t memo;
	int i, lsda, sig;

	(void)size;
	if (o->ro_want != NULL && !udt_rw_wanted(o, info))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			udt_rw_cover(info->dlpi_addr + ph->p_vaddr,
			    info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
	}
	/* .eh_frame_hdr version 1, a sorted table of datarel sdata4 pairs. */
	if (hdr == NULL || hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b ||
	    udt_rw_encsize(hdr[1]) < 0)
		return udt_rw_unknown(info, "no unwind table");
	o->ro_hdr = hdr;
	p = hdr + 4 + udt_rw_encsize(hdr[1]);
	o->ro_nfde = (uint32_t)udt_rw_read(p, 0x03);
	o->ro_tab = (const int32_t *)(const void *)(p + 4);
	memo = o->ro_nfde * (sizeof(*o->ro_memotail) + sizeof(*o->ro_memo) +
	    sizeof(*o->ro_memon));
	if (o->ro_nfde == 0 || (o->ro_memotail = udt_rw_alloc(memo)) == NULL)
		return udt_rw_unknown(info, "no unwind table");
	o->ro_memo = (int32_t *)(void *)(o->ro_memotail + o->ro_nfde);
	o->ro_memon = (uint32_t *)(void *)(o->ro_memo + o->ro_nfde);
	memset(o->ro_memo, 0xff, o->ro_nfde * sizeof(*o->ro_memo));
	o->ro_narena = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		o->ro_lo = info->dlpi_addr + ph->p_vaddr;
		o->ro_hi = o->ro_lo + ph->p_memsz;
		if (self >= o->ro_lo && self < o->ro_hi)
			continue;		/* this library */
		o->ro_nwin = 0;
		o->ro_ntrap = 0;
		for (p = (const uint8_t *)o->ro_lo;
		    p + 1 < (const uint8_t *)o->ro_hi; p++) {
			if (p[0] != 0x0f || p[1] != 0x05)
				continue;
			fi = udt_rw_find(o, (uintptr_t)p);
			if (fi < 0 || (sig = udt_rw_fde(o, (size_t)fi, &flo,
			    &fhi, &lsda)) < 0 || (uintptr_t)p + 2 > fhi) {
				udt_rw_after(o, fi, (uintptr_t)p);
				continue;
			}
			/*
			 * A signal trampoline's entry starts a byte early:
			 * see udt_rw_fde().
			 */
			if (fi != last) {
				last = fi;
				why = udt_rw_function(o, fi, flo + (sig != 0),
				    fhi, sig ? "a signal trampoline" : lsda ?
				    "a function with landing pads" : NULL);
			}
			/* Each pair of a function not decoded counts. */
			if (why != NULL) {
				udt_rw_nleft++;
				udt_rw_say(why, (uintptr_t)p);
			}
		}
		udt_rw_far(o, o->ro_win, o->ro_nwin);
		udt_rw_nleft += udt_rw_commit(o);
		if (o->ro_want == NULL && _r_debug.r_brk >= o->ro_lo &&
		    _r_debug.r_brk + 5 <= o->ro_hi)
			udt_rw_hook(o, _r_debug.r_brk);
	}
	udt_sys2(SYS_munmap, o->ro_memotail, memo);
	return 0;
}

/* The number of threads the process has, from /proc/self/stat. */
static int
udt_rw_nthreads(void)
{
	char buf[1024], *p;
	long fd, n;
	int field = 2;		/* the comm's closing parenthesis ends field 2 */

	fd = udt_sys3(SYS_open, "/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	n = udt_sys3(SYS_read, fd, buf, sizeof(buf) - 1);
	udt_sys1(SYS_close, fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (; *p != '\0'; p++)
		if (*p == ' ' && ++field == 20)
			return atoi(p + 1);
	return -1;
}

size_t
udt_rw_pass(const uintptr_t (*want)[2], size_t nwant)
{
	struct udt_rw_obj o;
	size_t left = udt_rw_nleft;

	memset(&o, 0, sizeof(o));
	o.ro_memfd = -1;
	o.ro_want = want;
	o.ro_nwant = nwant;
	o.ro_maxtgt = 65536;
	o.ro_insn = udt_rw_alloc(UDT_RW_MAXINSN * sizeof(*o.ro_insn));
	o.ro_tgt = udt_rw_alloc(o.ro_maxtgt * sizeof(*o.ro_tgt));
	o.ro_maxarena = 1 << 20;
	o.ro_arena = udt_rw_alloc(o.ro_maxarena * sizeof(*o.ro_arena));
	o.ro_win = udt_rw_alloc(UDT_RW_MAXSITE * sizeof(*o.ro_win));
	o.ro_trap = udt_rw_alloc(UDT_RW_MAXSITE * sizeof(*o.ro_trap));
	if (o.ro_insn == NULL || o.ro_tgt == NULL || o.ro_win == NULL ||
	    o.ro_arena == NULL || o.ro_trap == NULL ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &o.ro_cs) != CS_ERR_OK) {
		left = (size_t)-1;
		goto out;
	}
	cs_option(o.ro_cs, CS_OPT_DETAIL, CS_OPT_ON);
	if ((o.ro_ci = cs_malloc(o.ro_cs)) != NULL) {
		dl_iterate_phdr(udt_rw_object, &o);
		cs_free(o.ro_ci, 1);
	} else
		left = (size_t)-1;
	cs_close(&o.ro_cs);
	if (udt_rw_tab_publish(&udt_rw_tramptab, &udt_rw_trampstage,
	    NULL, 0) != 0 || udt_rw_trap_publish(want, nwant) != 0)
		left = (size_t)-1;
	if (left != (size_t)-1)
		left = udt_rw_nleft - left;
out:
	if (o.ro_memfd >= 0)
		udt_sys1(SYS_close, o.ro_memfd);
	if (o.ro_insn != NULL)
		udt_sys2(SYS_munmap, o.ro_insn, UDT_RW_MAXINSN *
		    sizeof(*o.ro_insn));
	if (o.ro_tgt != NULL)
		udt_sys2(SYS_munmap, o.ro_tgt, o.ro_maxtgt * sizeof(*o.ro_tgt));
	if (o.ro_arena != NULL)
		udt_sys2(SYS_munmap, o.ro_arena, o.ro_maxarena *
		    sizeof(*o.ro_arena));
	if (o.ro_win != NULL)
		udt_sys2(SYS_munmap, o.ro_win, UDT_RW_MAXSITE *
		    sizeof(*o.ro_win));
	if (o.ro_trap != NULL)
		udt_sys2(SYS_munmap, o.ro_trap, UDT_RW_MAXSITE *
		    sizeof(*o.ro_trap));
	return left;
}

void
udt_rw_init(void)
{
	const char *env = getenv(UDT_RW_ENV);
	size_t left;

	if ((env != NULL && strcmp(env, "0") == 0) || udt_rw_nthreads() != 1)
		return;
	udt_rw_debug = env != NULL && strcmp(env, "debug") == 0;
	left = udt_rw_pass(NULL, 0);
	udt_rw_trap_done(left, udt_rw_brkat != 0);
	if (udt_rw_debug) {
		char buf[200];
		int len = snprintf(buf, sizeof(buf), "userdt: %zu system call "
		    "instructions, %zu safe windows, %zu rewritten, %zu "
		    "trapped, %zu left to dispatch; dispatch %s%s\n",
		    udt_rw_nsys, udt_rw_nwin, udt_rw_ndone, udt_rw_ntrapped,
		    udt_rw_nleft, udt_rw_complete ? "not needed" : "needed",
		    udt_rw_brkat != 0 ? "; objects loaded later rewritten" :
		    "");

		udt_sys3(SYS_write, 2, buf, len);
	}
}

uintptr_t
udt_rw_site_of(uintptr_t ret)
{
	uintptr_t lo, sys;

	if (udt_rw_tab_floor(&udt_rw_tramptab, ret, &lo, &sys) == 0 &&
	    ret < lo + UDT_RW_TRAMPSZ)
		return sys;
	return ret;
}
