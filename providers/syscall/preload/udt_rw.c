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
 * enter udt_rw_entry (udt_rw_entry.S) and come back: the cost of a
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
 * dispatch (udt_rw_saw()).  The bytes are written once a pass has proved
 * them all, each object's pages made writable once (udt_rw_flush()).
 *
 * This file finds and proves the sites; udt_rw_pass.c runs a pass over
 * the loaded objects, udt_rw_eh.c reads the unwind tables, udt_rw_emit.c
 * writes trampolines, stubs and patches, udt_rw_trap.c keeps the
 * trapped sites and says whether dispatch is still needed, and
 * udt_rw_image.c keeps an image of each patched object, which later
 * starts map instead of writing the same pages again: it holds only
 * what this pass writes, and is used only where the pass stages the
 * very patches it holds.
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
#include "udt_rw_obj.h"
#include "udt_rw_cs.h"

int	udt_rw_active;

/* USERDT_REWRITE=debug: what was found and rewritten, on stderr. */
int	udt_rw_debug;
size_t	udt_rw_nsys, udt_rw_nwin, udt_rw_ndone, udt_rw_ntrapped;

/*
 * Sites left to dispatch (USERDT_REWRITE=debug prints the count): every
 * `syscall' byte pair where it cannot be told whether it is one (outside
 * every function of the unwind tables, in an object without them, in a
 * function the disassembler cannot decode whole), and calls that could
 * be neither rewritten nor trapped (no room, no SIGTRAP handler).
 */
size_t	udt_rw_nleft;

/* USERDT_REWRITE=debug: a site not rewritten, what became of it, why. */
void
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
void
udt_rw_say(const char *why, uintptr_t at)
{
	udt_rw_tell("left to dispatch", why, at);
}

void *
udt_rw_alloc(size_t len)
{
	long p = udt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p < 0 && p > -4096 ? NULL : (void *)p;
}

/*
 * Room for one more site to trap in o (udt_rw_obj.h): 0, or -1 past
 * UDT_RW_MAXSITE.
 */
int
udt_rw_trap_room(struct udt_rw_obj *o)
{
	if (o->ro_ntrap == UDT_RW_MAXSITE)
		return -1;
	if (o->ro_trap == o->ro_trap0 && o->ro_ntrap == UDT_RW_NTRAP0) {
		memcpy(o->ro_trapbig, o->ro_trap0, sizeof(o->ro_trap0));
		o->ro_trap = o->ro_trapbig;
	}
	return 0;
}

/*
 * A proven system call instruction with no window: trapped (its first
 * byte int3) when o is committed, or left to dispatch past the limit.
 */
void
udt_rw_trap(struct udt_rw_obj *o, uintptr_t at, const char *why)
{
	if (udt_rw_trap_room(o) != 0) {
		udt_rw_nleft++;
		udt_rw_say(why, at);
		return;
	}
	udt_rw_tell("trapped", why, at);
	o->ro_trap[o->ro_ntrap++] = at;
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
	/*
	 * Capstone is opened at the first decoding: a pass whose objects
	 * all had plans (udt_rw_plan.c) never opens it.
	 */
	if (o->ro_ci == NULL) {
		if (o->ro_csfail || udt_rw_cs_open(o->ro_csmem, UDT_RW_CSMEM,
		    &o->ro_cs, &o->ro_ci) != 0) {
			o->ro_csfail = 1;
			return -1;
		}
		ci = o->ro_ci;
	}
	while (size > 0) {
		struct udt_rw_insn *ri;
		cs_x86 *x;
		int j, branch, reloc = 1;

		if (n >= UDT_RW_MAXINSN ||
		    !udt_rw_cs_next(o->ro_cs, &code, &size, &addr, ci)) {
			if (stop != NULL)
				*stop = (uintptr_t)addr;
			return -1;
		}
		x = &ci->detail->x86;
		branch = udt_rw_cs_group(ci, CS_GRP_JUMP) ||
		    udt_rw_cs_group(ci, CS_GRP_CALL) ||
		    udt_rw_cs_group(ci, CS_GRP_BRANCH_RELATIVE);
		if (branch || udt_rw_cs_group(ci, CS_GRP_RET) ||
		    udt_rw_cs_group(ci, CS_GRP_INT) ||
		    udt_rw_cs_group(ci, CS_GRP_IRET) ||
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
			else if (udt_rw_cs_group(ci, CS_GRP_JUMP) &&
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
int
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

/* The window of w[nw] (sorted) strictly inside which t lands: rw_bad. */
static void
udt_rw_within(struct udt_rw_win *w, size_t nw, uintptr_t t)
{
	size_t lo = 0, hi = nw, mid;

	if (t <= w[0].rw_start || t >= w[nw - 1].rw_end)
		return;
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

/*
 * Windows w[nw] (sorted) into which a rel32 jump or call of the object,
 * real or not, or a function's start lands: rw_bad.
 */
void
udt_rw_far(struct udt_rw_obj *o, struct udt_rw_win *w, size_t nw)
{
	const uint8_t *p = (const uint8_t *)o->ro_lo;
	const uint8_t *end = (const uint8_t *)o->ro_hi;
	uintptr_t t;
	int32_t rel;
	size_t i;

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
		udt_rw_within(w, nw, t);
	}
	/* A binary search each, not a pass over the windows: libc has
	 * thousands of functions and hundreds of windows, every exec. */
	for (i = 0; i < o->ro_nfde; i++)
		udt_rw_within(w, nw, (uintptr_t)(o->ro_hdr + o->ro_tab[2 * i]));
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

/*
 * One loaded object: find, prove and rewrite its sites.  Returns 0, 1
 * when it has no unwind table (every pair left to dispatch), -1 when
 * what it found is not all the decoder could have (no memory).
 */
static int
udt_rw_decode_object(struct udt_rw_obj *o, struct dl_phdr_info *info)
{
	const ElfW(Phdr) *ph;
	const uint8_t *hdr = NULL, *p;
	uintptr_t self = (uintptr_t)udt_rw_decode_object, flo, fhi;
	const char *why = NULL;
	long fi, last = -1;
	size_t memo, c0[3];
	int i, lsda, sig, brk;

	o->ro_decoded = 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
	}
	/* .eh_frame_hdr version 1, a sorted table of datarel sdata4 pairs. */
	if (hdr == NULL || hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b ||
	    udt_rw_encsize(hdr[1]) < 0)
		return udt_rw_unknown(info, "no unwind table"), 1;
	o->ro_hdr = hdr;
	p = hdr + 4 + udt_rw_encsize(hdr[1]);
	o->ro_nfde = (uint32_t)udt_rw_read(p, 0x03);
	o->ro_tab = (const int32_t *)(const void *)(p + 4);
	memo = o->ro_nfde * (sizeof(*o->ro_memotail) + sizeof(*o->ro_memo) +
	    sizeof(*o->ro_memon));
	if (o->ro_nfde == 0)
		return udt_rw_unknown(info, "no unwind table"), 1;
	/* The pass's scratch holds most objects' memo: no mmap each. */
	if (memo <= o->ro_memomax)
		o->ro_memotail = o->ro_memobuf;
	else if ((o->ro_memotail = udt_rw_alloc(memo)) == NULL)
		return udt_rw_unknown(info, "no unwind table"), -1;
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
		(void)udt_rw_segment(o, info, i);
		/* ro_win's windows, never a plan's left from before. */
		o->ro_wplan = NULL;
		o->ro_nwin = 0;
		o->ro_ntrap = 0;
		c0[0] = udt_rw_nsys;
		c0[1] = udt_rw_nwin;
		c0[2] = udt_rw_nleft;
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
		/* Its region fixed, for an image, before anything is staged. */
		udt_rw_image_seg(o, info, i);
		/* Proven on the bytes as the loader left them. */
		brk = 0;
		if (o->ro_want == NULL && _r_debug.r_brk >= o->ro_lo &&
		    _r_debug.r_brk + 5 <= o->ro_hi)
			brk = UDT_RW_PLAN_BRKSEG | (udt_rw_hook(o,
			    _r_debug.r_brk) == 0 ? UDT_RW_PLAN_BRKHOOK : 0);
		udt_rw_far(o, o->ro_win, o->ro_nwin);
		udt_rw_plan_seg(o, info, i, c0, brk);
		udt_rw_nleft += udt_rw_commit(o);
	}
	if (o->ro_memotail != o->ro_memobuf)
		udt_sys2(SYS_munmap, o->ro_memotail, memo);
	return 0;
}

/*
 * One loaded object: its plan applied if the cache has one that fits
 * (udt_rw_plan.c), else decoded, and what the decoder concluded kept.
 */
int
udt_rw_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct udt_rw_obj *o = arg;
	const ElfW(Phdr) *ph;
	uintptr_t self = (uintptr_t)udt_rw_object, lo, hi;
	size_t nleft0;
	int i, r, nx = 0, ours = 0;

	(void)size;
	if (o->ro_want != NULL && !udt_rw_wanted(o, info))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = info->dlpi_addr + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		udt_rw_cover(lo, hi);
		nx++;
		ours |= self >= lo && self < hi;
	}
	/*
	 * This library, one code segment, which the decoder skips: neither
	 * a plan nor its memo (pages of the scratch touched, then given
	 * back with a system call) for nothing.
	 */
	if (ours && nx == 1) {
		o->ro_nobj++;
		return 0;
	}
	o->ro_fixlen = 0;
	o->ro_fiximg = NULL;
	if (udt_rw_plan_apply(o, info, o->ro_nobj++ == 0) == 0)
		return 0;
	udt_rw_plan_begin(o);
	nleft0 = udt_rw_nleft;
	r = udt_rw_decode_object(o, info);
	/* Capstone not opened: what was left is not the decoder's word. */
	udt_rw_plan_end(o, r >= 0 && !o->ro_csfail, r == 1, nleft0);
	return 0;
}
