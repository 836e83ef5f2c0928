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
 * DWARF expressions, as CFI uses them (DW_CFA_def_cfa_expression,
 * DW_CFA_expression, DW_CFA_val_expression): glibc's PLT entries compute
 * their CFA from the PC, its __restore_rt finds every register in the
 * kernel's ucontext.  Same contract as udt_cfi.h.
 */
#include <stddef.h>

#include "udt_cfi_dw.h"

#define UDT_CFI_DEPTH	16	/* expression stack */

/*
 * A DWARF expression over the cursor's registers, initial on the stack:
 * the operators CFI uses (no calls, no pieces, no TLS).
 */
UDT_CFI_RAW int
udt_cfi_expr(struct udt_cfi_cur *c, const uint8_t *p, uint64_t len,
    uint64_t initial, uint64_t *out)
{
	const uint8_t *end = p + len, *start = p;
	uint64_t st[UDT_CFI_DEPTH], a, b, reg;
	unsigned int n = 0, steps = 0;
	bool bad = false;
	int64_t off;
	uint8_t op;

#define PUSH(v)	do {							\
	uint64_t v_ = (v);						\
	if (n == UDT_CFI_DEPTH)						\
		return -1;						\
	st[n++] = v_;							\
} while (0)
#define NEED(k)	do { if (n < (k)) return -1; } while (0)
	st[n++] = initial;
	while (p < end) {
		if (++steps > 256)	/* a loop of DW_OP_bra */
			return -1;
		op = *p++;
		if (op >= 0x30 && op <= 0x4f) {		/* DW_OP_lit* */
			PUSH((uint64_t)(op - 0x30));
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) {		/* DW_OP_breg* */
			reg = op - 0x70;
			off = udt_cfi_sleb(&p, end);
			goto breg;
		}
		if (op >= 0x50 && op <= 0x6f) {		/* DW_OP_reg*: no value */
			return -1;
		}
		switch (op) {
		case 0x03:				/* DW_OP_addr */
			PUSH(udt_cfi_fixed(&p, end, 8, false, &bad));
			break;
		case 0x06:				/* DW_OP_deref */
			NEED(1);
			if (udt_cfi_read(c, st[n - 1], &st[n - 1]) != 0)
				return -1;
			break;
		case 0x94:				/* DW_OP_deref_size */
			NEED(1);
			a = udt_cfi_fixed(&p, end, 1, false, &bad);
			if (a == 0 || a > 8 ||
			    udt_cfi_read(c, st[n - 1], &b) != 0)
				return -1;
			st[n - 1] = a == 8 ? b : b & ((1ULL << (8 * a)) - 1);
			break;
		case 0x08: PUSH(udt_cfi_fixed(&p, end, 1, false, &bad)); break;
		case 0x09: PUSH(udt_cfi_fixed(&p, end, 1, true, &bad)); break;
		case 0x0a: PUSH(udt_cfi_fixed(&p, end, 2, false, &bad)); break;
		case 0x0b: PUSH(udt_cfi_fixed(&p, end, 2, true, &bad)); break;
		case 0x0c: PUSH(udt_cfi_fixed(&p, end, 4, false, &bad)); break;
		case 0x0d: PUSH(udt_cfi_fixed(&p, end, 4, true, &bad)); break;
		case 0x0e: PUSH(udt_cfi_fixed(&p, end, 8, false, &bad)); break;
		case 0x0f: PUSH(udt_cfi_fixed(&p, end, 8, true, &bad)); break;
		case 0x10: PUSH(udt_cfi_uleb(&p, end)); break;
		case 0x11: PUSH((uint64_t)udt_cfi_sleb(&p, end)); break;
		case 0x12:				/* DW_OP_dup */
			NEED(1);
			PUSH(st[n - 1]);
			break;
		case 0x13:				/* DW_OP_drop */
			NEED(1);
			n--;
			break;
		case 0x14:				/* DW_OP_over */
			NEED(2);
			PUSH(st[n - 2]);
			break;
		case 0x15:				/* DW_OP_pick */
			a = udt_cfi_fixed(&p, end, 1, false, &bad);
			NEED(a + 1);
			PUSH(st[n - 1 - a]);
			break;
		case 0x16:				/* DW_OP_swap */
			NEED(2);
			a = st[n - 1];
			st[n - 1] = st[n - 2];
			st[n - 2] = a;
			break;
		case 0x17:				/* DW_OP_rot */
			NEED(3);
			a = st[n - 1];
			st[n - 1] = st[n - 2];
			st[n - 2] = st[n - 3];
			st[n - 3] = a;
			break;
		case 0x19:				/* DW_OP_abs */
			NEED(1);
			if ((int64_t)st[n - 1] < 0)
				st[n - 1] = -st[n - 1];
			break;
		case 0x1f:				/* DW_OP_neg */
			NEED(1);
			st[n - 1] = -st[n - 1];
			break;
		case 0x20:				/* DW_OP_not */
			NEED(1);
			st[n - 1] = ~st[n - 1];
			break;
		case 0x23:				/* DW_OP_plus_uconst */
			NEED(1);
			st[n - 1] += udt_cfi_uleb(&p, end);
			break;
		case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e:
		case 0x21: case 0x22: case 0x24: case 0x25: case 0x26:
		case 0x27: case 0x29: case 0x2a: case 0x2b: case 0x2c:
		case 0x2d: case 0x2e:
			NEED(2);
			b = st[--n];
			a = st[n - 1];
			switch (op) {
			case 0x1a: a &= b; break;
			case 0x1b:			/* DW_OP_div, signed */
				if (b == 0)
					return -1;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case 0x1c: a -= b; break;
			case 0x1d:			/* DW_OP_mod */
				if (b == 0)
					return -1;
				a %= b;
				break;
			case 0x1e: a *= b; break;
			case 0x21: a |= b; break;
			case 0x22: a += b; break;
			case 0x24: a = b < 64 ? a << b : 0; break;
			case 0x25: a = b < 64 ? a >> b : 0; break;
			case 0x26:
				a = (uint64_t)((int64_t)a >> (b < 63 ? b : 63));
				break;
			case 0x27: a ^= b; break;
			case 0x29: a = a == b; break;
			case 0x2a: a = (int64_t)a >= (int64_t)b; break;
			case 0x2b: a = (int64_t)a > (int64_t)b; break;
			case 0x2c: a = (int64_t)a <= (int64_t)b; break;
			case 0x2d: a = (int64_t)a < (int64_t)b; break;
			case 0x2e: a = a != b; break;
			}
			st[n - 1] = a;
			break;
		case 0x28:				/* DW_OP_bra */
		case 0x2f:				/* DW_OP_skip */
			off = (int16_t)udt_cfi_fixed(&p, end, 2, true, &bad);
			if (op == 0x28) {
				NEED(1);
				if (st[--n] == 0)
					break;
			}
			if (off < start - p || off > end - p)
				return -1;
			p += off;
			break;
		case 0x90:				/* DW_OP_regx: no value */
			return -1;
		case 0x92:				/* DW_OP_bregx */
			reg = udt_cfi_uleb(&p, end);
			off = udt_cfi_sleb(&p, end);
breg:
			if (reg >= UDT_CFI_NREG || !(c->cc_have & (1u << reg)))
				return -1;
			PUSH(c->cc_reg[reg] + (uint64_t)off);
			break;
		case 0x96:				/* DW_OP_nop */
			break;
		default:
			return -1;
		}
		if (bad)
			return -1;
	}
#undef PUSH
#undef NEED
	if (n == 0)
		return -1;
	*out = st[n - 1];
	return 0;
}

