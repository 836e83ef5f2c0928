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
 * An image's text mapped over its object's (udt_rw_image.c says what an
 * image is and what is checked before): only the pages from the first
 * patch's to the last's, only where none of them is a private copy
 * already, in one mmap; the object's text never left unmapped.
 *
 * Concurrency: the constructor's pass only [w]; raw system calls.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"
#include "udt_rw_plan.h"
#include "udt_rw_img.h"
#include "udt_cat.h"

/*
 * Whether dtd read the pages of the mapping that holds [lo, hi) at the
 * handshake and found none a private copy (udt_tab.tb_xclean).  Its
 * look is this process's when its status said one thread: that thread
 * has waited for the welcome since, then run only this constructor,
 * which writes no object's text before its image is mapped.  Not seen:
 * what another process writes into the text after dtd's look (a uprobe
 * registered then, a debugger that attaches after the status dtd read,
 * which is also what udt_rw_img_traced knows, a writer of
 * /proc/PID/mem), lost in this process when the image goes over it.
 * The library's own read narrowed that window to its mmap; dtd's
 * widens it to the rest of the handshake and the pass (a few hundred
 * microseconds), for three calls of every start.
 */
static int
udt_img_clean_dtd(uintptr_t lo, uintptr_t hi)
{
	const struct udt_tab *tab = __atomic_load_n(&udt_tab, __ATOMIC_ACQUIRE);
	uint32_t i, n;

	if (tab == NULL || !udt_proc_status_dtd() ||
	    (n = tab->tb_xmaps_n) == 0 || n > UDT_XMAPS_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (tab->tb_xmaps[i][0] <= lo && hi <= tab->tb_xmaps[i][1])
			return (int)((tab->tb_xclean[i / 64] >> (i % 64)) & 1);
	return 0;
}

/*
 * Whether a page of [lo, hi) is a private copy already, or cannot be
 * told: a change made to the text before this constructor (an earlier
 * preload's hook, a breakpoint), which the image mapped over it would
 * undo.  dtd's look at the handshake, else /proc/self/pagemap: a page
 * present or swapped that is not a file's.  No page is read (no fault).
 */
static int
udt_img_touched(struct udt_rw_obj *o, uintptr_t lo, uintptr_t hi)
{
	uint64_t e[512];
	const uint64_t inmem = 3ULL << 62, file = 1ULL << 61;
	size_t i, n;
	long fd, r;

	if (udt_img_clean_dtd(lo, hi))
		return 0;
	/* Open for the pass, closed with the images (udt_rw_image_end()). */
	if (o->ro_pagemap == 0) {
		fd = udt_sys3(SYS_open, "/proc/self/pagemap", O_RDONLY |
		    O_CLOEXEC, 0);
		if (fd < 0)
			return 1;
		o->ro_pagemap = fd + 1;
	}
	fd = o->ro_pagemap - 1;
	for (; lo < hi; lo += n * 4096) {
		n = (hi - lo) / 4096;
		n = n > 512 ? 512 : n;
		r = udt_sys4(SYS_pread64, fd, e, n * 8, (long)(lo / 4096 * 8));
		if (r != (long)(n * 8))
			return 1;
		for (i = 0; i < n; i++)
			if ((e[i] & inmem) != 0 && (e[i] & file) == 0)
				return 1;
	}
	return 0;
}

/*
 * The image's text over the object's pages [lo, hi) of it: the address,
 * or -errno.
 */
static long
udt_img_textmap(const struct udt_rw_img *ri, uintptr_t lo, uintptr_t hi)
{
	return udt_sys6(SYS_mmap, (long)lo, (long)(hi - lo), ri->ri_tprot,
	    MAP_PRIVATE | MAP_FIXED, ri->ri_fd, (long)(ri->ri_toff + (lo -
	    ri->ri_tlo)));
}

/*
 * Whether the object's text [lo, hi) is unmapped, its first page or its
 * last (mincore's ENOMEM): a MAP_FIXED mmap that failed may have removed
 * it.
 */
static int
udt_img_gone(uintptr_t lo, uintptr_t hi)
{
	unsigned char v;

	return udt_sys3(SYS_mincore, lo, 4096, &v) == -ENOMEM ||
	    udt_sys3(SYS_mincore, hi - 4096, 4096, &v) == -ENOMEM;
}

/* The object's text gone and not mapped again: one line, and out. */
static _Noreturn void
udt_img_die(const struct udt_rw_img *ri)
{
	char buf[700];
	size_t n;

	n = udt_cat(buf, 0, sizeof(buf), "userdt: image: ");
	n = udt_cat(buf, n, sizeof(buf), program_invocation_short_name);
	n = udt_cat(buf, n, sizeof(buf), ": the text of ");
	n = udt_cat(buf, n, sizeof(buf), ri->ri_path);
	n = udt_cat(buf, n, sizeof(buf), " was unmapped by a failed "
	    "mmap of its image and cannot be mapped again; exiting\n");
	if (n == (size_t)-1)
		n = udt_cat(buf, 0, sizeof(buf), "userdt: image: an "
		    "object's text was unmapped by a failed mmap of its "
		    "image; exiting\n");
	udt_sys3(SYS_write, 2, buf, n);
	for (;;)
		udt_sys1(SYS_exit_group, 127);
}

int
udt_rw_image_text(struct udt_rw_obj *o, struct udt_rw_img *ri,
    const struct udt_rw_patch *rp, size_t n)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0, at;
	size_t k;
	long p;

	/* Every patch where the mapping goes: else it would be lost. */
	for (k = 0; k < n; k++) {
		at = UDT_RW_PAT(o, &rp[k]);
		if (at < ri->ri_tlo || at + rp[k].rp_len > ri->ri_thi)
			break;
		lo = at < lo ? at : lo;
		hi = at + rp[k].rp_len > hi ? at + rp[k].rp_len : hi;
	}
	/*
	 * Only the pages from the first patch's to the last's: the image
	 * is the object's file but for the patches, so the pages around
	 * them would be the same bytes, and what the program and its
	 * loader ran there before (the string functions at the end of a
	 * libc's text, say) would be faulted in again.
	 */
	lo &= ~(uintptr_t)4095;
	hi = (hi + 4095) & ~(uintptr_t)4095;
	if (k == n && lo >= hi)
		goto out;
	if (k < n || n != ri->ri_npatch ||
	    udt_img_psum(o, ri, rp, n) != ri->ri_psum) {
		udt_img_say(ri->ri_path, ": text not mapped: its patches are "
		    "not the ones staged", NULL);
		goto out;
	}
	/*
	 * A tracer's breakpoints (gdb's, the loader's probes) may be in
	 * the text already, as may another preload's hooks: kept.
	 */
	if (udt_rw_img_traced) {
		udt_img_say(ri->ri_path, ": text not mapped: traced", NULL);
		goto out;
	}
	if (udt_img_touched(o, lo, hi)) {
		udt_img_say(ri->ri_path, ": text not mapped: changed already "
		    "(or its pages cannot be told)", NULL);
		goto out;
	}
	if (ri->ri_nrepair > 0)
		udt_img_say(ri->ri_path, ": trampolines mended", NULL);
	/*
	 * Over the loader's mapping of the same file offsets: the same
	 * bytes but the patches, in one call, from this library's text
	 * (libc's mmap may be among the sites).
	 */
	p = udt_img_textmap(ri, lo, hi);
	if (p != (long)lo && udt_img_gone(lo, hi)) {
		/*
		 * Failed after the kernel had removed the old mapping
		 * (ENOMEM on some kernels, a file system's ->mmap error):
		 * no text at all, which the fallback would read.  The
		 * image was verified: once more, else out now, with a
		 * word, rather than run on without text.
		 */
		p = udt_img_textmap(ri, lo, hi);
		if (p != (long)lo && udt_img_gone(lo, hi))
			udt_img_die(ri);
	}
	if (p != (long)lo) {
		udt_img_say(ri->ri_path, ": text not mapped", NULL);
		goto out;
	}
	udt_rw_img_used++;
	udt_img_say(ri->ri_path, ": used", NULL);
	/* Closed with the others' at the end (udt_rw_image_end()). */
	ri->ri_state = 0;
	return 0;
out:
	ri->ri_state = 0;
	return -1;
}
