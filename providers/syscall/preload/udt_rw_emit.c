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
 * What the rewriter writes: trampolines for the windows it proved, a
 * stub for each site it traps (the calls its handler makes in place),
 * the patches over the sites, and the jump from the loader's r_brk to
 * udt_rw_brk().  Regions of trampolines lie within a rel32 jump of
 * their object; the patches are staged and written at the end of the
 * pass (udt_rw_flush(), in udt_rw_flush.c).
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before other threads exist
 *	[a]	atomic
 *	[w]	a pass of the rewriter (udt_rw_obj.h)
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"

/*
 * Every trampoline and its site, for udt_rw_site_of(): staged by a pass
 * [w], published at its end (udt_rw_tab.c).
 */
static struct udt_rw_stage udt_rw_trampstage;		/* [w] */
static struct udt_rw_tab *udt_rw_tramptab;		/* [a] */

/*
 * Code is built in a buffer, then put where it runs (udt_rw_image_land()):
 * where it will run, less where it is built.  [w]
 */
static intptr_t	udt_rw_vd;

/* The loader's debugger hook, where new objects are rewritten. */
uintptr_t	udt_rw_ld_lo, udt_rw_ld_hi;	/* [I] the loader's text */
uintptr_t	udt_rw_brkat;			/* [I] r_brk, if hooked */

/*
 * The first region a process carves, from the library's own zeroed
 * arrays (.lbss): the loader maps those anyway, and next to the
 * libraries it loads with us, so a start's trampolines cost no mapping
 * of their own (one system call fewer an exec).  Taken by one pass,
 * never given back; a later region is mapped (udt_rw_region()).
 */
static UDT_LBSS uint8_t	udt_rw_pool0[UDT_RW_POOLSZ]
    __attribute__((aligned(4096)));
static bool		udt_rw_pool0_taken;		/* [w] */

/*
 * Reserve trampoline space within a rel32 jump of all of [lo, hi).  Each
 * candidate is a hint, not a demand: where it is taken, the kernel puts
 * the mapping elsewhere, which for a library is most often next to the
 * others and so within reach too; a mapping out of reach is given back.
 */
static uint8_t *
udt_rw_region(uintptr_t lo, uintptr_t hi, size_t len)
{
	const uintptr_t step = 1UL << 20, reach = (1UL << 31) - (1UL << 24);
	uintptr_t at, a, b;
	long p;
	int k;

	at = (uintptr_t)udt_rw_pool0;
	a = at < lo ? at : lo;
	b = at + sizeof(udt_rw_pool0) > hi ? at + sizeof(udt_rw_pool0) : hi;
	if (!udt_rw_pool0_taken && len <= sizeof(udt_rw_pool0) &&
	    b - a <= reach) {
		udt_rw_pool0_taken = true;
		return udt_rw_pool0;
	}
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
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p < 0 && p > -4096)
			return NULL;
		a = (uintptr_t)p < lo ? (uintptr_t)p : lo;
		b = (uintptr_t)p + len > hi ? (uintptr_t)p + len : hi;
		if ((uintptr_t)p >= 65536 && b - a <= reach)
			return (uint8_t *)p;
		udt_sys2(SYS_munmap, p, len);
	}
	return NULL;
}

/*
 * Room for len bytes of code within a rel32 jump of all of [lo, hi): from
 * a region of this pass where one is in reach, else a new one.  Regions
 * stay writable until the pass seals them (udt_rw_seal()), so the
 * objects of a pass share a few, each mapped and protected once.
 */
static uint8_t *
udt_rw_room(struct udt_rw_obj *o, uintptr_t lo, uintptr_t hi, size_t len)
{
	const uintptr_t reach = (1UL << 31) - (1UL << 24);
	struct udt_rw_pool *rp;
	uint8_t *q;
	uintptr_t a, b;
	size_t i;

	len = (len + 63) & ~(size_t)63;
	/* The object's fixed region, past its footer (udt_rw_image.c). */
	if (o->ro_fixlen > 0) {
		if (o->ro_fixlen - o->ro_fixused < len)
			return NULL;
		o->ro_fixused += len;
		return o->ro_fix + o->ro_fixused - len;
	}
	/* The spare room of an image's region's first page, if in reach. */
	if ((q = udt_rw_image_room(o, lo, hi, len)) != NULL)
		return q;
	for (i = 0; i < o->ro_npool; i++) {
		rp = &o->ro_pool[i];
		a = (uintptr_t)rp->rp_base < lo ? (uintptr_t)rp->rp_base : lo;
		b = (uintptr_t)rp->rp_base + rp->rp_len > hi ?
		    (uintptr_t)rp->rp_base + rp->rp_len : hi;
		if (rp->rp_len - rp->rp_used >= len && b - a <= reach)
			goto carve;
	}
	if (o->ro_npool == UDT_RW_MAXPOOL)
		return NULL;
	rp = &o->ro_pool[o->ro_npool];
	rp->rp_len = len > UDT_RW_POOLSZ ? (len + 4095) & ~(size_t)4095 :
	    UDT_RW_POOLSZ;
	if ((rp->rp_base = udt_rw_region(lo, hi, rp->rp_len)) == NULL)
		return NULL;
	rp->rp_used = 0;
	o->ro_npool++;
	udt_rw_cover((uintptr_t)rp->rp_base,
	    (uintptr_t)rp->rp_base + rp->rp_len);
carve:
	rp->rp_used += len;
	return rp->rp_base + rp->rp_used - len;
}

/*
 * The pass's regions made executable, before any site jumps there (an
 * image's that cannot be, a copy: udt_rw_image_unshare()).  Returns -1
 * if one cannot be: then no staged patch may be written.
 */
int
udt_rw_seal(struct udt_rw_obj *o)
{
	size_t i;
	int r = 0;

	for (i = 0; i < o->ro_npool; i++)
		if (udt_sys3(SYS_mprotect, o->ro_pool[i].rp_base,
		    o->ro_pool[i].rp_len, PROT_READ | PROT_EXEC) != 0 &&
		    udt_rw_image_unshare(o, o->ro_pool[i].rp_base,
		    o->ro_pool[i].rp_len) != 0)
			r = -1;
	o->ro_npool = 0;
	/*
	 * Nothing more is carved from a sealed region: after an early
	 * flush the rest of the pass gets new ones (udt_rw_room()), the
	 * images' first pages included (udt_rw_image_room()).
	 */
	for (i = 0; i < o->ro_nimg; i++)
		o->ro_img[i].ri_p0used = 4096;
	o->ro_fixlen = 0;
	o->ro_fiximg = NULL;
	return r;
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
	int32_t rel = (int32_t)(to - ((uintptr_t)q + (uintptr_t)udt_rw_vd +
	    4));

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

/*
 * One trampoline for window w, its header at q, 8-byte aligned (see
 * udt_rw_emit_inplace()); its code starts at *startp.  Returns its end.
 */
static uint8_t *
udt_rw_emit_tramp(uint8_t *q, const uint8_t *hdr, const struct udt_rw_win *w,
    uintptr_t *startp)
{
	static const uint8_t above[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0 };
	static const uint8_t leaback[] = { 0x4c, 0x8d, 0x1d, 17, 0, 0, 0 };
	static const uint8_t leasite[] = { 0x4c, 0x8d, 0x1d };
	static const uint8_t pushback[] = { 0x41, 0x53 };	/* push %r11 */
	static const uint8_t jmprip[] = { 0xff, 0x25 };
	const uint64_t magic = UDT_TRAMP_MAGIC;
	uint64_t site;
	uint8_t *jr;

	/*
	 * What dtd reads to find the site of a sample in here: the site
	 * from the header's own address, the same in every process where
	 * the region lies at a fixed distance from its object.
	 */
	site = (uint64_t)(w->rw_sys - ((uintptr_t)q + (uintptr_t)udt_rw_vd));
	q = udt_rw_put(q, &magic, 8);
	q = udt_rw_put(q, &site, 8);
	*startp = (uintptr_t)q + (uintptr_t)udt_rw_vd;
	q = udt_rw_put(q, (const void *)w->rw_start, w->rw_sys - w->rw_start);
	q = udt_rw_put(q, udt_rw_below, sizeof(udt_rw_below));
	/*
	 * A call to the entry, as a push of the way back and a jump: the
	 * entry comes back with an indirect jump, not a `ret` (see
	 * udt_rw_entry.S), and a call left unpaired would throw the
	 * return predictor off.  Then the site's address, which the entry
	 * makes the return address of a frame, for unwinders.  r11: the
	 * system call clobbers it anyway.
	 */
	q = udt_rw_put(q, leaback, sizeof(leaback));	/* lea 17(%rip),%r11 */
	q = udt_rw_put(q, pushback, sizeof(pushback));
	q = udt_rw_put(q, leasite, sizeof(leasite));	/* lea site(%rip),%r11 */
	q = udt_rw_rel32(q, w->rw_sys);
	q = udt_rw_put(q, pushback, sizeof(pushback));
	q = udt_rw_put(q, jmprip, sizeof(jmprip));
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

/*
 * The executable segment ph of an object, before its patches are
 * staged: its own pages end where the next segment's first page starts
 * (the loader maps segments in order, so that one's protection won).
 * Returns -1 when it cannot be kept, its patches are then not staged.
 */
int
udt_rw_segment(struct udt_rw_obj *o, struct dl_phdr_info *info, int ph)
{
	const ElfW(Phdr) *p = &info->dlpi_phdr[ph];
	struct udt_rw_seg *sg;
	uintptr_t lo = info->dlpi_addr + p->p_vaddr, q;
	int i;

	if (o->ro_nseg == o->ro_maxseg && o->ro_seg == o->ro_seg0 &&
	    o->ro_maxsegbig > o->ro_maxseg) {
		memcpy(o->ro_segbig, o->ro_seg0, sizeof(o->ro_seg0));
		o->ro_seg = o->ro_segbig;
		o->ro_maxseg = o->ro_maxsegbig;
	}
	if (o->ro_nseg == o->ro_maxseg) {
		/* An image's patches are all staged, or it is not made. */
		o->ro_noimg = 1;
		udt_rw_flush(o);
		o->ro_nseg = 0;
	}
	if (o->ro_maxseg == 0)
		return -1;
	sg = &o->ro_seg[o->ro_nseg++];
	sg->sg_lo = lo & ~(uintptr_t)4095;
	sg->sg_hi = (lo + p->p_memsz + 4095) & ~(uintptr_t)4095;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		q = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr) &
		    ~(uintptr_t)4095;
		if (q > sg->sg_lo && q < sg->sg_hi)
			sg->sg_hi = q;
	}
	sg->sg_img = 0;
	sg->sg_prot = ((p->p_flags & PF_R) ? PROT_READ : 0) |
	    ((p->p_flags & PF_W) ? PROT_WRITE : 0) |
	    ((p->p_flags & PF_X) ? PROT_EXEC : 0);
	return 0;
}

/*
 * Stage n bytes b for at, in the segment last named (udt_rw_segment()):
 * an int3, or a jump padded with int3s (udt_rw_patch).
 */
static int
udt_rw_poke(struct udt_rw_obj *o, uintptr_t at, const uint8_t *b, size_t n,
    int kind)
{
	struct udt_rw_patch *rp;
	int32_t rel = 0;
	size_t k;

	if (o->ro_nseg == 0 || n == 0 || n > UDT_RW_PATCHMAX ||
	    at < o->ro_seg[o->ro_nseg - 1].sg_lo ||
	    at - o->ro_seg[o->ro_nseg - 1].sg_lo > UINT32_MAX)
		return -1;
	if (kind == UDT_RWP_TRAP) {
		if (n != 1 || b[0] != 0xcc)
			return -1;
	} else {
		if (n < 5 || b[0] != 0xe9)
			return -1;
		for (k = 5; k < n; k++)
			if (b[k] != 0xcc)
				return -1;
		memcpy(&rel, b + 1, 4);
	}
	if (o->ro_npatch == o->ro_maxpatch) {
		o->ro_noimg = 1;
		udt_rw_flush(o);
	}
	if (o->ro_npatch == o->ro_maxpatch)
		return -1;
	rp = &o->ro_patch[o->ro_npatch++];
	rp->rp_off = (uint32_t)(at - o->ro_seg[o->ro_nseg - 1].sg_lo);
	rp->rp_rel = rel;
	rp->rp_seg = (uint16_t)(o->ro_nseg - 1);
	rp->rp_len = (uint8_t)n;
	rp->rp_kind = (uint8_t)kind;
	return 0;
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

	for (i = 0; i < o->ro_ntrap; i++, q += UDT_RW_STUBSZ) {
		if (udt_rw_trap_put(o->ro_trap[i], (uintptr_t)q) != 0)
			break;
		/* Its entry is harmless: the site holds no int3. */
		if (udt_rw_poke(o, o->ro_trap[i], &int3, 1, UDT_RWP_TRAP) !=
		    0)
			break;
		n++;
	}
	return n;
}

/*
 * A region's constants at reg: what its code reaches RIP-relatively,
 * this process's addresses and offsets.
 */
static void
udt_rw_hdr(uint8_t *reg)
{
	uintptr_t *h = (uintptr_t *)(void *)reg;

	h[0] = (uintptr_t)udt_rw_entry;
	h[1] = (uintptr_t)udt_rw_post;
	h[2] = (uintptr_t)&udt_thread.ut_sud -
	    (uintptr_t)__builtin_thread_pointer();
	h[3] = (uintptr_t)&udt_rw_ipnr - (uintptr_t)__builtin_thread_pointer();
	h[UDT_RW_HDR_BRK / 8] = (uintptr_t)udt_rw_brk;
}

/*
 * Window i of the segment being committed (ro_win, or the plan's:
 * ro_wplan, checked as read), into tmp if need be; NULL when it no
 * longer fits.
 */
static const struct udt_rw_win *
udt_rw_win_at(const struct udt_rw_obj *o, size_t i, struct udt_rw_win *tmp)
{
	if (o->ro_wplan == NULL)
		return &o->ro_win[i];
	return udt_rw_plan_win(o, i, tmp) == 0 ? tmp : NULL;
}

/*
 * Whether w's bytes meet a trap's two among ro_trap[0, nt), sorted and
 * apart (udt_plan_fit()): a trap in [rw_start - 1, rw_end).
 */
static int
udt_rw_win_trapped(const struct udt_rw_obj *o, const struct udt_rw_win *w,
    size_t nt)
{
	size_t lo = 0, hi = nt, m;

	/* The first trap at or past rw_start - 1 (rw_start > 0: mapped). */
	while (lo < hi) {
		m = lo + (hi - lo) / 2;
		if (o->ro_trap[m] < w->rw_start - 1)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < nt && o->ro_trap[lo] < w->rw_end;
}

/*
 * Window i, read as udt_rw_win_at() reads it, if it starts at or past
 * *end, the end of the last window taken, and keeps off the plan's
 * traps, the first nt of ro_trap: then *end is its end.  NULL: neither
 * patched nor trapped.  The decoder leaves its windows sorted and
 * apart, and udt_plan_fit() checked a plan's so, and off its traps, but
 * they are read again here from a file that may have changed in place
 * since: two windows that share bytes would both be patched, one's
 * trampoline returning into the other's int3 padding, a SIGTRAP nobody
 * handles; a trap in a window would be an int3 inside its jump.
 */
static const struct udt_rw_win *
udt_rw_win_next(const struct udt_rw_obj *o, size_t i,
    struct udt_rw_win *tmp, uintptr_t *end, size_t nt)
{
	const struct udt_rw_win *w;

	if ((w = udt_rw_win_at(o, i, tmp)) == NULL || w->rw_start < *end ||
	    (nt > 0 && udt_rw_win_trapped(o, w, nt)))
		return NULL;
	*end = w->rw_end;
	return w;
}

/* The jump over w to its trampoline at t, staged, and t's site known. */
static int
udt_rw_jump(struct udt_rw_obj *o, const struct udt_rw_win *w, uintptr_t t)
{
	uint8_t patch[16];
	int32_t rel;

	memset(patch, 0xcc, sizeof(patch));
	patch[0] = 0xe9;
	rel = (int32_t)(t - (w->rw_start + 5));
	memcpy(patch + 1, &rel, 4);
	if (udt_rw_poke(o, w->rw_start, patch, w->rw_end - w->rw_start,
	    UDT_RWP_WIN) != 0)
		return -1;
	/* Without it, only a user stack shows the trampoline. */
	(void)udt_rw_stage_put(&udt_rw_trampstage, t, w->rw_sys);
	udt_rw_ndone++;
	return 0;
}

/*
 * Build the trampolines of o's windows and jump to them; trap the sites
 * without one (bad windows among them).  Returns how many of the sites
 * found are neither.
 *
 * Each window's jump is staged as its trampoline is built, from the one
 * read of it, when no flush can come in between (a flush seals the
 * region the trampolines are built in): then neither a window's
 * trampoline address nor the plan's windows are kept (udt_rw_obj.h).
 * Where a flush may come (a pass past its room for patches, the tests'
 * USERDT_IMAGES=debug-flush), the windows are kept in ro_win and every
 * patch staged once every trampoline is built.  Either way the traps
 * come first, then the jumps: the patches of one object come in one
 * order, whichever program starts, as an image's (udt_rw_image.c) sum
 * of them needs.
 */
size_t
udt_rw_commit(struct udt_rw_obj *o)
{
	uint8_t *reg, *q, *e, *stubs, buf[UDT_RW_SLOTSZ];
	const struct udt_rw_win *w;
	struct udt_rw_win tmp;
	size_t i, k, len, nok = 0, nroom, nbuilt = 0, ntrap, left = 0, nt;
	uintptr_t t, end;
	int now, stop;

	/*
	 * A plan's traps, before the second loop adds the bad windows':
	 * what its windows, read again, must keep off (udt_rw_win_next()).
	 */
	nt = o->ro_wplan != NULL ? o->ro_ntrap : 0;

	/*
	 * Each window a jump or a trap: past the room, keep them (no more
	 * than ro_nwin, at most UDT_RW_MAXSITE: udt_plan_fit()).
	 */
	if (o->ro_wplan != NULL && o->ro_npatch + 2 * o->ro_nwin +
	    o->ro_ntrap >= o->ro_maxpatch) {
		for (i = k = 0, end = 0; i < o->ro_nwin; i++)
			if ((w = udt_rw_win_next(o, i, &tmp, &end, nt)) != NULL)
				o->ro_win[k++] = *w;
			else
				left++;
		o->ro_wplan = NULL;
		o->ro_nwin = k;
	}
	/* Taken in order, each past the last, here as when built. */
	for (i = 0, end = 0; i < o->ro_nwin; i++) {
		if ((w = udt_rw_win_next(o, i, &tmp, &end, nt)) == NULL)
			left++;
		else if (!w->rw_bad)
			nok++;
		else
			udt_rw_trap(o, w->rw_sys,
			    "a far jump into its window");
	}
	/*
	 * SIGTRAP must be ours before any thread may block it: from the
	 * constructor, not from a later pass (threads then run).
	 */
	if (o->ro_ntrap > 0 && (__atomic_load_n(&udt_rw_notrap,
	    __ATOMIC_ACQUIRE) || (o->ro_want != NULL ?
	    !(udt_sud_ours & (1ULL << (SIGTRAP - 1))) :
	    udt_sud_trap_init() != 0))) {
		/* A tracer would take the SIGTRAP: udt_rw_untrap(). */
		for (i = 0; i < o->ro_ntrap; i++)
			udt_rw_say(udt_rw_notrap ? "not trapped (a tracer, or "
			    "SIGTRAP held)" : "no SIGTRAP handler",
			    o->ro_trap[i]);
		left += o->ro_ntrap;
		o->ro_ntrap = 0;
	}
	if (nok == 0 && o->ro_ntrap == 0)
		return left;
	now = o->ro_npatch + nok + o->ro_ntrap <= o->ro_maxpatch;
	len = nok * UDT_RW_SLOTSZ + o->ro_ntrap * UDT_RW_STUBSZ;
	/*
	 * In a fixed region the constants are its first page's, which
	 * is this process's alone; the code after it may be an image's.
	 */
	if (o->ro_fixlen > 0) {
		reg = o->ro_fix;
		if ((q = udt_rw_room(o, o->ro_lo, o->ro_hi, len)) == NULL)
			return left + nok + o->ro_ntrap;
	} else {
		if ((reg = udt_rw_room(o, o->ro_lo, o->ro_hi,
		    UDT_RW_HDRSZ + len)) == NULL)
			return left + nok + o->ro_ntrap;
		q = reg + UDT_RW_HDRSZ;
	}
	udt_rw_hdr(reg);
	/*
	 * A trapped site's stub: its calls made in place, then back.  The
	 * stubs first, so that the traps are staged before the jumps
	 * either way (their stage's few entries then lie before the
	 * trampolines' in the library's keep: udt_rw_tab.c).
	 */
	stubs = q;
	for (i = 0; i < o->ro_ntrap; i++) {
		q = stubs + i * UDT_RW_STUBSZ;
		udt_rw_vd = (intptr_t)((uintptr_t)q - (uintptr_t)buf);
		e = udt_rw_emit_inplace(buf, reg, -1);
		*e++ = 0xe9;
		e = udt_rw_rel32(e, o->ro_trap[i] + 2);
		udt_rw_image_land(o, q, buf, (size_t)(e - buf));
	}
	q = stubs + o->ro_ntrap * UDT_RW_STUBSZ;
	udt_rw_vd = 0;
	ntrap = now ? udt_rw_commit_traps(o, stubs) : 0;
	nroom = nok;
	/* Not staged now: the last loop jumps only to trampolines built. */
	for (i = 0; !now && i < o->ro_nwin; i++)
		o->ro_win[i].rw_tramp = 0;
	for (i = 0, stop = 0, end = 0; i < o->ro_nwin; i++) {
		if ((w = udt_rw_win_next(o, i, &tmp, &end, nt)) == NULL ||
		    w->rw_bad)
			continue;
		/* Its room: more only if the plan changed under us. */
		if (nbuilt++ == nroom)
			break;
		q = (uint8_t *)(((uintptr_t)q + 7) & ~(uintptr_t)7);
		udt_rw_vd = (intptr_t)((uintptr_t)q - (uintptr_t)buf);
		e = udt_rw_emit_tramp(buf, reg, w, &t);
		udt_rw_vd = 0;
		udt_rw_image_land(o, q, buf, (size_t)(e - buf));
		q += e - buf;
		if (!now)
			o->ro_win[i].rw_tramp = t;
		else if (!stop && udt_rw_jump(o, w, t) == 0)
			nok--;
		else
			stop = 1;
	}
	if (!now)
		ntrap = udt_rw_commit_traps(o, stubs);
	udt_rw_ntrapped += ntrap;
	/*
	 * In order, as built: a window the loops above did not take, or
	 * that got no trampoline (past nroom), has none to jump to.
	 */
	for (i = 0, end = 0; !now && i < o->ro_nwin; i++) {
		if ((w = udt_rw_win_next(o, i, &tmp, &end, nt)) == NULL ||
		    w->rw_bad || w->rw_tramp == 0)
			continue;
		if (udt_rw_jump(o, w, w->rw_tramp) != 0)
			break;
		nok--;
	}
	return left + nok + o->ro_ntrap - ntrap;
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
int
udt_rw_hook(struct udt_rw_obj *o, uintptr_t b)
{
	static const uint8_t endbr_ret[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	const uint8_t *c = (const uint8_t *)b;
	struct udt_rw_win w;
	uintptr_t flo, fhi;
	long fi;
	int i, lsda;

	if ((fi = udt_rw_find(o, b)) < 0 ||
	    udt_rw_fde(o, (size_t)fi, &flo, &fhi, &lsda) != 0 || flo != b)
		return -1;
	if (c[0] == 0xc3 && fhi == b + 1) {
		for (i = 1; i < 5; i++)
			if (!udt_rw_padbyte(c[i]))
				return -1;
	} else if (memcmp(c, endbr_ret, sizeof(endbr_ret)) != 0 ||
	    fhi < b + 5)
		return -1;
	memset(&w, 0, sizeof(w));
	w.rw_start = w.rw_sys = b;
	w.rw_end = b + 5;
	udt_rw_far(o, &w, 1);
	if (w.rw_bad || udt_rw_near(o, fi, b, b + 5))
		return -1;
	return udt_rw_hook_stage(o, b);
}

/*
 * The hook of r_brk at b, proven (udt_rw_hook(), or a plan that
 * recorded the same bytes): staged.  Returns 0, or -1 when it is not.
 */
int
udt_rw_hook_stage(struct udt_rw_obj *o, uintptr_t b)
{
	uintptr_t to = (uintptr_t)udt_rw_brk;
	uint8_t patch[5], *reg, buf[8], *e;
	int32_t rel;

	/*
	 * jmp *0(%rip), then the address: udt_rw_brk is further away.
	 * In a fixed region, the address is its constants' (udt_rw_hdr()):
	 * the library lies at another distance in every process.
	 */
	if ((reg = udt_rw_room(o, o->ro_lo, o->ro_hi, 14)) == NULL)
		return -1;
	if (o->ro_fixlen > 0) {
		udt_rw_hdr(o->ro_fix);
		udt_rw_vd = (intptr_t)((uintptr_t)reg - (uintptr_t)buf);
		buf[0] = 0xff;
		buf[1] = 0x25;
		e = udt_rw_rel32(buf + 2, (uintptr_t)o->ro_fix +
		    UDT_RW_HDR_BRK);
		udt_rw_vd = 0;
		udt_rw_image_land(o, reg, buf, (size_t)(e - buf));
	} else {
		reg[0] = 0xff;
		reg[1] = 0x25;
		memset(reg + 2, 0, 4);
		memcpy(reg + 6, &to, sizeof(to));
	}
	patch[0] = 0xe9;
	rel = (int32_t)((uintptr_t)reg - (b + 5));
	memcpy(patch + 1, &rel, 4);
	o->ro_brklo = o->ro_lo;
	o->ro_brkhi = o->ro_hi;
	return udt_rw_poke(o, b, patch, sizeof(patch), UDT_RWP_BRK);
}

/*
 * At the end of a pass: its trampolines for udt_rw_site_of(), without
 * those of sites in the gone ranges.
 */
int
udt_rw_tramp_publish(const uintptr_t (*gone)[2], size_t ngone)
{
	return udt_rw_tab_publish(&udt_rw_tramptab, &udt_rw_trampstage, 1,
	    gone, ngone);
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
