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
 * A DWARF CFI unwinder for amd64: see udt_cfi.h.  What it reads follows
 * the LSB's .eh_frame_hdr and .eh_frame (CIE and FDE with their "z"
 * augmentations, pointer encodings) and DWARF 4's call frame
 * instructions and the expression operators CFI uses: glibc's PLT
 * entries, its __restore_rt (a signal frame, "S", described with
 * expressions over the kernel's ucontext) and hand-written assembly.
 *
 * Locks used to protect the globals below:
 *	[I]	set by udt_cfi_init() before any unwind, fixed after
 */
#include <sys/auxv.h>
#include <sys/uio.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "udt_cfi.h"
#include "udt_cfi_dw.h"
#include "udt_sys.h"

#define UDT_CFI_PAGE	4096ULL
#define UDT_CFI_SAVED	4	/* DW_CFA_remember_state depth */

/* The vDSO's .eh_frame_hdr and text, which _dl_find_object() may not
 * know.  [I] */
static uintptr_t	udt_cfi_vdso_lo, udt_cfi_vdso_hi, udt_cfi_vdso_hdr;
/* The disassembler module's (udt_cfi_also()): hi published last.  [a] */
static uintptr_t	udt_cfi_also_lo, udt_cfi_also_hi, udt_cfi_also_hdr;

enum { UR_SAME, UR_UNDEF, UR_OFF, UR_VALOFF, UR_REG, UR_EXPR, UR_VALEXPR };

struct udt_cfi_rule {
	int		 ur_how;
	int64_t		 ur_val;	/* offset, or register */
	const uint8_t	*ur_expr;	/* with ur_val its length */
};

struct udt_cfi_row {
	struct udt_cfi_rule	cr_reg[UDT_CFI_NREG];
	int		 cr_cfareg;	/* -1: cr_cfaexpr */
	int64_t		 cr_cfaoff;
	const uint8_t	*cr_cfaexpr;
	uint64_t	 cr_cfalen;
};

struct udt_cfi_cie {
	uint64_t	 ci_calign;
	int64_t		 ci_dalign;
	uint64_t	 ci_ra;
	uint8_t		 ci_fdeenc;
	bool		 ci_aug;	/* "z": FDEs carry augmentation data */
	bool		 ci_signal;	/* "S" */
	const uint8_t	*ci_ins, *ci_end;
};

/* Stack memory: a page is proven readable once per cursor. */
UDT_CFI_RAW int
udt_cfi_read(struct udt_cfi_cur *c, uint64_t addr, uint64_t *v)
{
	struct iovec local, remote;
	uint64_t page = addr & ~(UDT_CFI_PAGE - 1);
	unsigned int i;

	if (addr < UDT_CFI_PAGE || addr > UINT64_MAX - 8)
		return -1;
	if (((addr + 7) & ~(UDT_CFI_PAGE - 1)) == page)
		for (i = 0; i < c->cc_npage && i < UDT_CFI_NPAGE; i++)
			if (c->cc_page[i] == page) {
				memcpy(v, (const void *)addr, sizeof(*v));
				return 0;
			}
	local.iov_base = v;
	local.iov_len = sizeof(*v);
	remote.iov_base = (void *)addr;
	remote.iov_len = sizeof(*v);
	if (udt_sys6(SYS_process_vm_readv, c->cc_self != 0 ? c->cc_self :
	    udt_sys0(SYS_getpid), (long)&local, 1, (long)&remote, 1, 0) !=
	    (long)sizeof(*v))
		return -1;
	c->cc_page[c->cc_npage++ % UDT_CFI_NPAGE] = page;
	return 0;
}

UDT_CFI_RAW uint64_t
udt_cfi_uleb(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned int shift = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	return v;
}

UDT_CFI_RAW int64_t
udt_cfi_sleb(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	while (p < end) {
		b = *p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*pp = p;
	return (int64_t)v;
}

/* A fixed-size little-endian field, unaligned. */
UDT_CFI_RAW uint64_t
udt_cfi_fixed(const uint8_t **pp, const uint8_t *end, unsigned int n,
    bool sign, bool *bad)
{
	uint64_t v = 0;

	if (end - *pp < (ptrdiff_t)n) {
		*bad = true;
		return 0;
	}
	memcpy(&v, *pp, n);
	if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);
	*pp += n;
	return v;
}

/* An encoded pointer (DW_EH_PE_*); base is datarel's. */
static UDT_CFI_RAW int
udt_cfi_ptr(const uint8_t **pp, const uint8_t *end, uint8_t enc,
    uint64_t base, uint64_t *v)
{
	uintptr_t at = (uintptr_t)*pp;
	bool bad = false;

	if (enc == 0xff)		/* DW_EH_PE_omit */
		return -1;
	switch (enc & 0x0f) {
	case 0x00: *v = udt_cfi_fixed(pp, end, 8, false, &bad); break;
	case 0x01: *v = udt_cfi_uleb(pp, end); break;
	case 0x02: *v = udt_cfi_fixed(pp, end, 2, false, &bad); break;
	case 0x03: *v = udt_cfi_fixed(pp, end, 4, false, &bad); break;
	case 0x04: *v = udt_cfi_fixed(pp, end, 8, false, &bad); break;
	case 0x09: *v = (uint64_t)udt_cfi_sleb(pp, end); break;
	case 0x0a: *v = udt_cfi_fixed(pp, end, 2, true, &bad); break;
	case 0x0b: *v = udt_cfi_fixed(pp, end, 4, true, &bad); break;
	case 0x0c: *v = udt_cfi_fixed(pp, end, 8, true, &bad); break;
	default: return -1;
	}
	if (bad)
		return -1;
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: *v += at; break;	/* pcrel */
	case 0x30: *v += base; break;	/* datarel */
	default: return -1;
	}
	/* DW_EH_PE_indirect is only a personality's, never followed */
	return 0;
}

/*
 * The FDE covering pc in the object whose .eh_frame_hdr is at hdr:
 * binary search of its sorted table (the linkers' encoding, datarel
 * sdata4 pairs).  Returns the FDE's address or 0.
 */
static UDT_CFI_RAW uintptr_t
udt_cfi_search(uintptr_t hdr, uint64_t pc)
{
	const uint8_t *p = (const uint8_t *)hdr, *end = p + 4 + 16;
	uint64_t ehframe, count;
	const int32_t *tab;
	size_t lo, hi, mid;
	int32_t ent[2];

	if (p[0] != 1 || p[3] != 0x3b)
		return 0;
	p += 4;
	if (udt_cfi_ptr(&p, end, ((const uint8_t *)hdr)[1], hdr,
	    &ehframe) != 0 ||
	    udt_cfi_ptr(&p, end, ((const uint8_t *)hdr)[2], hdr,
	    &count) != 0 || count == 0)
		return 0;
	tab = (const int32_t *)(const void *)p;
	lo = 0;
	hi = (size_t)count;
	/* the last entry whose initial location is at or below pc */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		memcpy(ent, tab + 2 * mid, sizeof(ent));
		if (hdr + (uint64_t)(int64_t)ent[0] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(ent, tab + 2 * lo, sizeof(ent));
	if (hdr + (uint64_t)(int64_t)ent[0] > pc)
		return 0;
	return (uintptr_t)(hdr + (uint64_t)(int64_t)ent[1]);
}

/* A CIE or FDE's length and the end it gives; NULL when unusable. */
static UDT_CFI_RAW const uint8_t *
udt_cfi_entry(const uint8_t **pp)
{
	uint32_t len;
	uint64_t len64;

	memcpy(&len, *pp, 4);
	*pp += 4;
	if (len == 0)
		return NULL;
	if (len == 0xffffffffU) {
		memcpy(&len64, *pp, 8);
		*pp += 8;
		return len64 > (1ULL << 32) ? NULL : *pp + len64;
	}
	return *pp + len;
}

static UDT_CFI_RAW int
udt_cfi_parse_cie(const uint8_t *p, struct udt_cfi_cie *ci)
{
	const uint8_t *end, *aug;
	uint64_t skip;
	uint32_t id;
	uint8_t ver;

	if ((end = udt_cfi_entry(&p)) == NULL)
		return -1;
	memcpy(&id, p, 4);
	p += 4;
	if (id != 0)
		return -1;
	ver = *p++;
	if (ver != 1 && ver != 3 && ver != 4)
		return -1;
	aug = p;
	while (p < end && *p != '\0')
		p++;
	if (p++ >= end)
		return -1;
	if (aug[0] == 'e' && aug[1] == 'h')
		p += 8;
	if (ver == 4)
		p += 2;			/* address and segment sizes */
	ci->ci_calign = udt_cfi_uleb(&p, end);
	ci->ci_dalign = udt_cfi_sleb(&p, end);
	ci->ci_ra = ver == 1 ? *p++ : udt_cfi_uleb(&p, end);
	ci->ci_fdeenc = 0x00;
	ci->ci_aug = aug[0] == 'z';
	ci->ci_signal = false;
	if (ci->ci_aug) {
		const uint8_t *data;
		uint64_t v;

		skip = udt_cfi_uleb(&p, end);
		data = p;
		for (aug++; *aug != '\0'; aug++) {
			switch (*aug) {
			case 'R':
				ci->ci_fdeenc = *data++;
				break;
			case 'L':
				data++;
				break;
			case 'P':
				/* the personality: read past, not used */
				if (udt_cfi_ptr(&data, end, (uint8_t)(*data++ &
				    0x7f), 0, &v) != 0)
					return -1;
				break;
			case 'S':
				ci->ci_signal = true;
				break;
			default:	/* 'B', 'G': nothing to read */
				break;
			}
		}
		p += skip;
	}
	if (p > end || ci->ci_ra >= UDT_CFI_NREG)
		return -1;
	ci->ci_ins = p;
	ci->ci_end = end;
	return 0;
}

/*
 * Runs CFA instructions from p to end, in row until the location passes
 * pc.  initial is the CIE's row (DW_CFA_restore), NULL while running the
 * CIE's own.
 */
static UDT_CFI_RAW int
udt_cfi_run(const struct udt_cfi_cie *ci, const uint8_t *p,
    const uint8_t *end, uint64_t loc, uint64_t pc, struct udt_cfi_row *row,
    const struct udt_cfi_row *initial)
{
	struct udt_cfi_row saved[UDT_CFI_SAVED];
	unsigned int nsaved = 0;
	uint64_t reg, delta;
	int64_t off;
	bool bad = false;
	uint8_t op;

	while (p < end) {
		op = *p++;
		reg = op & 0x3f;
		delta = 0;
		switch (op & 0xc0) {
		case 0x40:		/* DW_CFA_advance_loc */
			delta = reg;
			goto advance;
		case 0x80:		/* DW_CFA_offset */
			off = (int64_t)udt_cfi_uleb(&p, end) * ci->ci_dalign;
			if (reg < UDT_CFI_NREG)
				row->cr_reg[reg] = (struct udt_cfi_rule){ UR_OFF,
				    off, NULL };
			continue;
		case 0xc0:		/* DW_CFA_restore */
			if (reg < UDT_CFI_NREG && initial != NULL)
				row->cr_reg[reg] = initial->cr_reg[reg];
			continue;
		}
		switch (op) {
		case 0x00:		/* DW_CFA_nop */
			continue;
		case 0x01:		/* DW_CFA_set_loc */
			if (udt_cfi_ptr(&p, end, ci->ci_fdeenc, 0, &loc) != 0)
				return -1;
			if (loc > pc)
				return 0;
			continue;
		case 0x02:
			delta = udt_cfi_fixed(&p, end, 1, false, &bad);
			goto advance;
		case 0x03:
			delta = udt_cfi_fixed(&p, end, 2, false, &bad);
			goto advance;
		case 0x04:
			delta = udt_cfi_fixed(&p, end, 4, false, &bad);
			goto advance;
		case 0x05:		/* DW_CFA_offset_extended */
		case 0x14:		/* DW_CFA_val_offset */
		case 0x2f:		/* DW_CFA_GNU_negative_offset_extended */
			reg = udt_cfi_uleb(&p, end);
			off = (int64_t)udt_cfi_uleb(&p, end) * ci->ci_dalign;
			if (op == 0x2f)
				off = -off;
			if (reg < UDT_CFI_NREG)
				row->cr_reg[reg] = (struct udt_cfi_rule){
				    op == 0x14 ? UR_VALOFF : UR_OFF, off, NULL };
			continue;
		case 0x11:		/* DW_CFA_offset_extended_sf */
		case 0x15:		/* DW_CFA_val_offset_sf */
			reg = udt_cfi_uleb(&p, end);
			off = udt_cfi_sleb(&p, end) * ci->ci_dalign;
			if (reg < UDT_CFI_NREG)
				row->cr_reg[reg] = (struct udt_cfi_rule){
				    op == 0x15 ? UR_VALOFF : UR_OFF, off, NULL };
			continue;
		case 0x06:		/* DW_CFA_restore_extended */
		case 0x07:		/* DW_CFA_undefined */
		case 0x08:		/* DW_CFA_same_value */
			reg = udt_cfi_uleb(&p, end);
			if (reg >= UDT_CFI_NREG)
				continue;
			if (op == 0x06) {
				if (initial != NULL)
					row->cr_reg[reg] = initial->cr_reg[reg];
			} else
				row->cr_reg[reg] = (struct udt_cfi_rule){
				    op == 0x07 ? UR_UNDEF : UR_SAME, 0, NULL };
			continue;
		case 0x09:		/* DW_CFA_register */
			reg = udt_cfi_uleb(&p, end);
			off = (int64_t)udt_cfi_uleb(&p, end);
			if (reg < UDT_CFI_NREG)
				row->cr_reg[reg] = (struct udt_cfi_rule){
				    off < UDT_CFI_NREG ? UR_REG : UR_UNDEF, off,
				    NULL };
			continue;
		case 0x0a:		/* DW_CFA_remember_state */
			if (nsaved == UDT_CFI_SAVED)
				return -1;
			saved[nsaved++] = *row;
			continue;
		case 0x0b:		/* DW_CFA_restore_state */
			if (nsaved == 0)
				return -1;
			/* the CFA's rule with the registers' (DWARF 5) */
			*row = saved[--nsaved];
			continue;
		case 0x0c:		/* DW_CFA_def_cfa */
			row->cr_cfareg = (int)udt_cfi_uleb(&p, end);
			row->cr_cfaoff = (int64_t)udt_cfi_uleb(&p, end);
			continue;
		case 0x12:		/* DW_CFA_def_cfa_sf */
			row->cr_cfareg = (int)udt_cfi_uleb(&p, end);
			row->cr_cfaoff = udt_cfi_sleb(&p, end) * ci->ci_dalign;
			continue;
		case 0x0d:		/* DW_CFA_def_cfa_register */
			row->cr_cfareg = (int)udt_cfi_uleb(&p, end);
			continue;
		case 0x0e:		/* DW_CFA_def_cfa_offset */
			row->cr_cfaoff = (int64_t)udt_cfi_uleb(&p, end);
			continue;
		case 0x13:		/* DW_CFA_def_cfa_offset_sf */
			row->cr_cfaoff = udt_cfi_sleb(&p, end) * ci->ci_dalign;
			continue;
		case 0x0f:		/* DW_CFA_def_cfa_expression */
			row->cr_cfalen = udt_cfi_uleb(&p, end);
			row->cr_cfaexpr = p;
			row->cr_cfareg = -1;
			p += row->cr_cfalen;
			continue;
		case 0x10:		/* DW_CFA_expression */
		case 0x16:		/* DW_CFA_val_expression */
			reg = udt_cfi_uleb(&p, end);
			delta = udt_cfi_uleb(&p, end);
			if (reg < UDT_CFI_NREG)
				row->cr_reg[reg] = (struct udt_cfi_rule){
				    op == 0x10 ? UR_EXPR : UR_VALEXPR,
				    (int64_t)delta, p };
			p += delta;
			continue;
		case 0x2e:		/* DW_CFA_GNU_args_size */
			(void)udt_cfi_uleb(&p, end);
			continue;
		default:
			return -1;
		}
advance:
		if (bad)
			return -1;
		loc += delta * ci->ci_calign;
		if (loc > pc)
			return 0;
	}
	return p > end ? -1 : 0;
}

/* The .eh_frame_hdr covering pc, or 0. */
static UDT_CFI_RAW uintptr_t
udt_cfi_hdr(uint64_t pc)
{
	struct dl_find_object fo;

	if (pc >= udt_cfi_vdso_lo && pc < udt_cfi_vdso_hi)
		return udt_cfi_vdso_hdr;
	if (pc < __atomic_load_n(&udt_cfi_also_hi, __ATOMIC_ACQUIRE) &&
	    pc >= __atomic_load_n(&udt_cfi_also_lo, __ATOMIC_RELAXED))
		return __atomic_load_n(&udt_cfi_also_hdr, __ATOMIC_RELAXED);
	if (_dl_find_object((void *)(uintptr_t)pc, &fo) != 0)
		return 0;
	return (uintptr_t)fo.dlfo_eh_frame;
}

/* The row of pc's FDE at pc; signal says the CIE's "S". */
static UDT_CFI_RAW int
udt_cfi_find(uint64_t pc, struct udt_cfi_row *row, bool *signal)
{
	struct udt_cfi_row initial;
	struct udt_cfi_cie ci;
	const uint8_t *p, *end, *cie;
	uint64_t begin, range;
	uintptr_t hdr, fde;
	uint32_t ciep;
	int i;

	if ((hdr = udt_cfi_hdr(pc)) == 0 ||
	    (fde = udt_cfi_search(hdr, pc)) == 0)
		return -1;
	p = (const uint8_t *)fde;
	if ((end = udt_cfi_entry(&p)) == NULL)
		return -1;
	memcpy(&ciep, p, 4);
	if (ciep == 0)
		return -1;		/* a CIE, not an FDE */
	cie = p - ciep;
	p += 4;
	if (udt_cfi_parse_cie(cie, &ci) != 0 ||
	    udt_cfi_ptr(&p, end, ci.ci_fdeenc, hdr, &begin) != 0 ||
	    udt_cfi_ptr(&p, end, ci.ci_fdeenc & 0x0f, hdr, &range) != 0)
		return -1;
	if (pc < begin || pc - begin >= range)
		return -1;
	if (ci.ci_aug)
		p += udt_cfi_uleb(&p, end);	/* the LSDA's pointer */
	memset(&initial, 0, sizeof(initial));
	for (i = 0; i < UDT_CFI_NREG; i++)
		initial.cr_reg[i].ur_how = UR_SAME;
	initial.cr_cfareg = UDT_CFI_RSP;
	if (udt_cfi_run(&ci, ci.ci_ins, ci.ci_end, 0, UINT64_MAX, &initial,
	    NULL) != 0)
		return -1;
	*row = initial;
	if (udt_cfi_run(&ci, p, end, begin, pc, row, &initial) != 0)
		return -1;
	*signal = ci.ci_signal;
	return 0;
}

void
udt_cfi_init(void)
{
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	uintptr_t base = 0, lo = UINTPTR_MAX, hi = 0, hdr = 0;
	int i;

	if ((eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR)) == NULL)
		return;
	ph = (const ElfW(Phdr) *)(const void *)((const char *)eh +
	    eh->e_phoff);
	/* The vDSO is linked at 0 or at its address: the first load says. */
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			base = (uintptr_t)eh - (ph[i].p_vaddr - ph[i].p_offset);
			break;
		}
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			if (base + ph[i].p_vaddr < lo)
				lo = base + ph[i].p_vaddr;
			if (base + ph[i].p_vaddr + ph[i].p_memsz > hi)
				hi = base + ph[i].p_vaddr + ph[i].p_memsz;
		} else if (ph[i].p_type == PT_GNU_EH_FRAME)
			hdr = base + ph[i].p_vaddr;
	}
	if (hdr == 0 || lo >= hi)
		return;
	udt_cfi_vdso_hdr = hdr;
	udt_cfi_vdso_lo = lo;
	udt_cfi_vdso_hi = hi;
}

void
udt_cfi_also(uintptr_t lo, uintptr_t hi, uintptr_t hdr)
{
	__atomic_store_n(&udt_cfi_also_lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_cfi_also_hdr, hdr, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_cfi_also_hi, hi, __ATOMIC_RELEASE);
}

void
udt_cfi_from_uc(struct udt_cfi_cur *c, const void *ucv)
{
	/* DWARF's register order in the kernel's gregs */
	static const int greg[UDT_CFI_NREG] = { REG_RAX, REG_RDX, REG_RCX,
	    REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8, REG_R9,
	    REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP };
	const ucontext_t *uc = ucv;
	int i;

	for (i = 0; i < UDT_CFI_NREG; i++)
		c->cc_reg[i] = (uint64_t)uc->uc_mcontext.gregs[greg[i]];
	c->cc_have = (1u << UDT_CFI_NREG) - 1;
	c->cc_exact = 1;
	c->cc_npage = 0;
	c->cc_self = 0;
}

/* No CFI for the PC: the frame-pointer chain, if it looks like one. */
static int
udt_cfi_fp(struct udt_cfi_cur *c)
{
	uint64_t fp = c->cc_reg[UDT_CFI_RBP], sp = c->cc_reg[UDT_CFI_RSP];
	uint64_t ra, up;

	if (!(c->cc_have & (1u << UDT_CFI_RBP)) || (fp & 7) != 0 ||
	    ((c->cc_have & (1u << UDT_CFI_RSP)) && (fp < sp ||
	    fp - sp > (1ULL << 24))))
		return 0;
	if (udt_cfi_read(c, fp, &up) != 0 || udt_cfi_read(c, fp + 8, &ra) != 0 ||
	    ra == 0 || (up != 0 && up <= fp))
		return 0;
	c->cc_reg[UDT_CFI_RBP] = up;
	c->cc_reg[UDT_CFI_RSP] = fp + 16;
	c->cc_reg[UDT_CFI_RA] = ra;
	c->cc_have = (1u << UDT_CFI_RBP) | (1u << UDT_CFI_RSP) |
	    (1u << UDT_CFI_RA);
	c->cc_exact = 0;
	return 1;
}

int
udt_cfi_step(struct udt_cfi_cur *c)
{
	struct udt_cfi_row row;
	uint64_t pc, cfa, v, nreg[UDT_CFI_NREG];
	uint32_t nhave = 0;
	bool signal = false;
	int i;

	if (!(c->cc_have & (1u << UDT_CFI_RA)) || c->cc_reg[UDT_CFI_RA] == 0)
		return 0;
	pc = c->cc_reg[UDT_CFI_RA] - (c->cc_exact ? 0 : 1);
	if (udt_cfi_find(pc, &row, &signal) != 0)
		return udt_cfi_fp(c);
	if (row.cr_cfareg == -1) {
		if (udt_cfi_expr(c, row.cr_cfaexpr, row.cr_cfalen, 0,
		    &cfa) != 0)
			return 0;
	} else {
		if (row.cr_cfareg < 0 || row.cr_cfareg >= UDT_CFI_NREG ||
		    !(c->cc_have & (1u << row.cr_cfareg)))
			return 0;
		cfa = c->cc_reg[row.cr_cfareg] + (uint64_t)row.cr_cfaoff;
	}
	for (i = 0; i < UDT_CFI_NREG; i++) {
		const struct udt_cfi_rule *r = &row.cr_reg[i];

		switch (r->ur_how) {
		case UR_SAME:
			if (!(c->cc_have & (1u << i)))
				continue;
			v = c->cc_reg[i];
			break;
		case UR_UNDEF:
			continue;
		case UR_OFF:
			if (udt_cfi_read(c, cfa + (uint64_t)r->ur_val, &v) != 0)
				return 0;
			break;
		case UR_VALOFF:
			v = cfa + (uint64_t)r->ur_val;
			break;
		case UR_REG:
			if (!(c->cc_have & (1u << r->ur_val)))
				continue;
			v = c->cc_reg[r->ur_val];
			break;
		case UR_EXPR:
		case UR_VALEXPR:
			if (udt_cfi_expr(c, r->ur_expr, (uint64_t)r->ur_val,
			    cfa, &v) != 0 || (r->ur_how == UR_EXPR &&
			    udt_cfi_read(c, v, &v) != 0))
				return 0;
			break;
		default:
			return 0;
		}
		nreg[i] = v;
		nhave |= 1u << i;
	}
	/* The caller's stack pointer is the CFA, unless a rule says. */
	if (row.cr_reg[UDT_CFI_RSP].ur_how == UR_SAME) {
		nreg[UDT_CFI_RSP] = cfa;
		nhave |= 1u << UDT_CFI_RSP;
	}
	if (!(nhave & (1u << UDT_CFI_RA)) || nreg[UDT_CFI_RA] == 0)
		return 0;	/* the outermost frame: _start, a thread's */
	/* A frame that does not move up the stack is a loop, unless it was
	 * a signal's, whose interrupted stack may be anywhere. */
	if (!signal && (c->cc_have & (1u << UDT_CFI_RSP)) &&
	    nreg[UDT_CFI_RSP] <= c->cc_reg[UDT_CFI_RSP])
		return 0;
	memcpy(c->cc_reg, nreg, sizeof(nreg));
	c->cc_have = nhave;
	c->cc_exact = signal;
	return 1;
}
