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
 * The rewrite-plan cache's recording half (udt_rw_plan.c applies plans,
 * and says what they are trusted for): what the decoder concluded of an
 * object the cache had no plan for, appended to the plan to write, then
 * written with the plans used, when a start decoded anything.
 *
 * Concurrency: the constructor's pass only [w]; raw system calls.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"
#include "udt_rw_plan.h"

/* Append n bytes to the plan being written; -1 past its room. */
static int
udt_plan_put(const void *b, size_t n)
{
	if (udt_plan.pl_outlen + n > UDT_PLAN_MAX)
		return -1;
	memcpy(udt_plan_out + udt_plan.pl_outlen, b, n);
	udt_plan.pl_outlen += n;
	return 0;
}

/* An object to decode: record what the decoder concludes. */
void
udt_rw_plan_begin(struct udt_rw_obj *o)
{
	struct udt_plan_obj po;

	udt_plan.pl_rec = 0;
	if (!o->ro_plan || !udt_plan.pl_keyok ||
	    udt_plan.pl_nobj + udt_plan.pl_nused >= UDT_PLAN_MAXOBJ)
		return;
	memset(&po, 0, sizeof(po));
	po.po_key = udt_plan.pl_key;
	udt_plan.pl_cur = udt_plan.pl_outlen;
	if (udt_plan_put(&po, sizeof(po)) == 0)
		udt_plan.pl_rec = 1;
}

/*
 * The segment's traps sorted, as udt_plan_fit() requires a plan's: the
 * decoder traps a function's sites as it gives up on them, not in
 * order.  By insertion: nearly sorted already (only within a function),
 * and nothing to allocate in the constructor.  Their order is nothing
 * to udt_rw_commit().
 */
static void
udt_plan_sorttraps(struct udt_rw_obj *o)
{
	uintptr_t t;
	size_t k, j;

	for (k = 1; k < o->ro_ntrap; k++) {
		t = o->ro_trap[k];
		for (j = k; j > 0 && o->ro_trap[j - 1] > t; j--)
			o->ro_trap[j] = o->ro_trap[j - 1];
		o->ro_trap[j] = t;
	}
}

/*
 * A segment decoded, its sites not committed yet: c0 the counts before
 * it, flags what became of r_brk (UDT_PLAN_BRK*).
 */
void
udt_rw_plan_seg(struct udt_rw_obj *o, struct dl_phdr_info *info, int i,
    const size_t c0[3], int flags)
{
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
	struct udt_plan_obj *po;
	struct udt_plan_seg ps;
	struct udt_plan_win pw;
	struct udt_plan_trap pt;
	size_t k;

	if (!udt_plan.pl_rec)
		return;
	po = (struct udt_plan_obj *)(void *)(udt_plan_out + udt_plan.pl_cur);
	if (po->po_nseg >= UDT_PLAN_MAXSEG)
		goto fail;
	memset(&ps, 0, sizeof(ps));
	ps.ps_lo = ph->p_vaddr;
	ps.ps_hi = ph->p_vaddr + ph->p_memsz;
	ps.ps_nwin = (uint32_t)o->ro_nwin;
	ps.ps_ntrap = (uint32_t)o->ro_ntrap;
	ps.ps_dnsys = udt_rw_nsys - c0[0];
	ps.ps_dnwin = udt_rw_nwin - c0[1];
	ps.ps_dnleft = udt_rw_nleft - c0[2];
	ps.ps_flags = (uint32_t)flags;
	if (flags & UDT_PLAN_BRKHOOK) {
		ps.ps_brk = _r_debug.r_brk - info->dlpi_addr;
		memcpy(ps.ps_brkb, (const void *)_r_debug.r_brk, 5);
	}
	if (udt_plan_put(&ps, sizeof(ps)) != 0)
		goto fail;
	udt_plan_sorttraps(o);
	for (k = 0; k < o->ro_nwin; k++) {
		const struct udt_rw_win *w = &o->ro_win[k];

		if (w->rw_end - w->rw_start > UDT_PLAN_WINB)
			goto fail;
		memset(&pw, 0, sizeof(pw));
		pw.pw_start = w->rw_start - o->ro_lo;
		pw.pw_sys = w->rw_sys - o->ro_lo;
		pw.pw_end = w->rw_end - o->ro_lo;
		pw.pw_nr = w->rw_nr;
		pw.pw_bad = (uint32_t)w->rw_bad;
		memcpy(pw.pw_b, (const void *)w->rw_start,
		    w->rw_end - w->rw_start);
		if (udt_plan_put(&pw, sizeof(pw)) != 0)
			goto fail;
	}
	for (k = 0; k < o->ro_ntrap; k++) {
		memset(&pt, 0, sizeof(pt));
		pt.pt_at = o->ro_trap[k] - o->ro_lo;
		memcpy(pt.pt_b, (const void *)o->ro_trap[k], 2);
		if (udt_plan_put(&pt, sizeof(pt)) != 0)
			goto fail;
	}
	po->po_nseg++;
	return;
fail:
	udt_plan.pl_rec = 0;
	udt_plan.pl_outlen = udt_plan.pl_cur;
}

/*
 * The object decoded: its entry kept, unless something of its decoding
 * was not the decoder's conclusion (no memory), or it had no unwind
 * table (unknown: the pairs left to dispatch since c0 recorded).
 */
void
udt_rw_plan_end(struct udt_rw_obj *o, int ok, int unknown, size_t nleft0)
{
	struct udt_plan_obj *po;

	(void)o;
	if (!udt_plan.pl_rec)
		return;
	udt_plan.pl_rec = 0;
	po = (struct udt_plan_obj *)(void *)(udt_plan_out + udt_plan.pl_cur);
	if (!ok || (unknown && po->po_nseg != 0)) {
		udt_plan.pl_outlen = udt_plan.pl_cur;
		return;
	}
	if (unknown) {
		po->po_unknown = 1;
		po->po_dnleft = udt_rw_nleft - nleft0;
	}
	po->po_len = (uint32_t)(udt_plan.pl_outlen - udt_plan.pl_cur);
	udt_plan.pl_nobj++;
	udt_plan.pl_nnew++;
}

/* After the pass: what was decoded is written, with the plans used. */
void
udt_rw_plan_close(struct udt_rw_obj *o)
{
	struct udt_plan_hdr h;
	size_t k;

	if (!o->ro_plan || udt_plan.pl_nnew == 0)
		return;
	o->ro_plan = 0;
	for (k = 0; k < udt_plan.pl_nused; k++)
		if (udt_plan_put(udt_plan_in + udt_plan.pl_used[k][0],
		    udt_plan.pl_used[k][1]) == 0)
			udt_plan.pl_nobj++;
	memset(&h, 0, sizeof(h));
	memcpy(h.ph_magic, "UDTPLAN", 8);
	h.ph_version = UDT_PLAN_VERSION;
	h.ph_nobj = (uint32_t)udt_plan.pl_nobj;
	h.ph_len = udt_plan.pl_outlen;
	h.ph_selflen = udt_plan.pl_selflen;
	memcpy(h.ph_self, udt_plan.pl_self, sizeof(h.ph_self));
	memcpy(udt_plan_out, &h, sizeof(h));
	h.ph_sum = udt_plan_hash(0, udt_plan_out, udt_plan.pl_outlen);
	memcpy(udt_plan_out, &h, sizeof(h));

	udt_plan_write();
}
