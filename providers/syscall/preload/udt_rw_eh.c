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
 * The unwind tables of a loaded object, as the rewriter reads them to
 * find its functions: .eh_frame_hdr's sorted table and each function's
 * entry in .eh_frame (its range, landing pads, signal trampolines).
 */
#include <stdint.h>
#include <string.h>

#include "udt_rw.h"
#include "udt_rw_obj.h"

/* DWARF pointer encodings as .eh_frame uses them. */
int
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

int64_t
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
int
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
			 * trampoline by its bytes.  Never rewritten, only
			 * trapped (the first byte of its call), decoded
			 * from a byte after its entry (1).
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
long
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
