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
 * The rewriter's staged patches written (udt_rw_emit.c stages them):
 * each object's text made writable once, in place or from its image
 * (udt_rw_image.c), through /proc/self/mem where it cannot be, and the
 * counts told what became of each site.  Apart from the code that
 * builds the trampolines and stages the patches, which it needs none of.
 *
 * Concurrency: a pass of the rewriter only [w] (udt_rw_obj.h); raw
 * system calls.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"

void
udt_rw_patch_bytes(const struct udt_rw_patch *rp, uint8_t b[UDT_RW_PATCHMAX])
{
	memset(b, 0xcc, UDT_RW_PATCHMAX);
	if (rp->rp_kind == UDT_RWP_TRAP)
		return;
	b[0] = 0xe9;
	memcpy(b + 1, &rp->rp_rel, 4);
}

/*
 * Whether the n bytes at a are b's: not by libc's memcmp, whose text an
 * image may have just been mapped over (a fault to run it again).
 */
static int
udt_rw_same(const volatile uint8_t *a, const uint8_t *b, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (a[k] != b[k])
			return 0;
	return 1;
}

/* The fallback: through /proc/self/mem, which ignores protections. */
static int
udt_rw_memwrite(struct udt_rw_obj *o, const struct udt_rw_patch *rp)
{
	uint8_t b[UDT_RW_PATCHMAX];

	if (o->ro_memfd < 0)
		o->ro_memfd = (int)udt_sys3(SYS_open, "/proc/self/mem",
		    O_RDWR | O_CLOEXEC, 0);
	if (o->ro_memfd < 0)
		return -1;
	udt_rw_patch_bytes(rp, b);
	return udt_sys4(SYS_pwrite64, o->ro_memfd, b, rp->rp_len,
	    UDT_RW_PAT(o, rp)) == (long)rp->rp_len ? 0 : -1;
}

/* A staged patch is in or not: the counts say what became of its site. */
static void
udt_rw_patched(const struct udt_rw_obj *o, const struct udt_rw_patch *rp,
    int ok)
{
	if (ok) {
		if (rp->rp_kind == UDT_RWP_WIN)
			udt_rw_active = 1;
		else if (rp->rp_kind == UDT_RWP_BRK) {
			udt_rw_brkat = UDT_RW_PAT(o, rp);
			udt_rw_ld_lo = o->ro_brklo;
			udt_rw_ld_hi = o->ro_brkhi;
		}
		return;
	}
	switch (rp->rp_kind) {
	case UDT_RWP_WIN:
		udt_rw_ndone--;
		udt_rw_nleft++;
		udt_rw_say("its jump could not be written", UDT_RW_PAT(o, rp));
		break;
	case UDT_RWP_TRAP:
		udt_rw_ntrapped--;
		udt_rw_nleft++;
		udt_rw_say("its int3 could not be written", UDT_RW_PAT(o, rp));
		break;
	default:
		break;
	}
}

/*
 * Write every staged patch: per segment, its pages that hold patches
 * made writable once (execute kept: nothing that runs there ever finds
 * its page without it, and none of its bytes but the sites' change),
 * the bytes stored, the protection put back; where that is refused (a
 * policy against writable code, a sealed mapping), through
 * /proc/self/mem, a system call a site, as before.
 *
 * An object whose image has its patches has the image's text mapped
 * over its own instead (udt_rw_image.c), in one system call, the region
 * sealed first like the patches; then every patch is found in place and
 * nothing is written.  An object without one, where images are on, has
 * one written once its patches are (udt_rw_image_save()).
 *
 * The single-thread rule of the pass holds: in the constructor no other
 * thread exists, at r_brk no thread can be in the new objects yet.  A
 * patch written with plain stores is not one write, so the signals of
 * this thread are held for the while: a handler must not run a site
 * half-written.  The constructor's pass holds none when the process had
 * no handler at start (SigCgt 0, the usual case after an exec): a signal
 * then runs no code of the program, only its default action or ours
 * (SIGTRAP's, installed by this pass), which runs this library's code
 * and raw system calls alone, never a site.  Nothing else runs in
 * between: only this code and raw system calls, no libc, whose text may
 * be what is written.
 */
void
udt_rw_flush(struct udt_rw_obj *o)
{
	const uint64_t all = ~0ULL;
	uint64_t old;
	size_t i, j, k;
	uintptr_t lo, hi, plo, phi, at;
	uint64_t caught = ~0ULL;
	struct udt_rw_img *img;
	uint8_t b[UDT_RW_PATCHMAX];
	int held, hold, prot, w, there, ok;

	if (udt_rw_seal(o) != 0) {
		for (k = 0; k < o->ro_npatch; k++)
			udt_rw_patched(o, &o->ro_patch[k], 0);
		o->ro_npatch = 0;
	}
	if (o->ro_npatch == 0)
		return;
	if (o->ro_want == NULL)
		(void)udt_proc_status(NULL, &caught, NULL, NULL);
	hold = caught != 0;
	held = !hold ||
	    udt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8) == 0;
	for (i = 0; i < o->ro_npatch; i = j) {
		const struct udt_rw_seg *sg = &o->ro_seg[o->ro_patch[i].rp_seg];

		plo = UINTPTR_MAX;
		phi = 0;
		for (j = i; j < o->ro_npatch &&
		    o->ro_patch[j].rp_seg == o->ro_patch[i].rp_seg; j++) {
			at = UDT_RW_PAT(o, &o->ro_patch[j]);
			lo = at & ~(uintptr_t)4095;
			hi = (at + o->ro_patch[j].rp_len + 4095) &
			    ~(uintptr_t)4095;
			if (lo < sg->sg_lo || hi > sg->sg_hi)
				continue;
			plo = lo < plo ? lo : plo;
			phi = hi > phi ? hi : phi;
		}
		img = sg->sg_img > 0 && !o->ro_noimg ?
		    &o->ro_img[sg->sg_img - 1] : NULL;
		/*
		 * An image's text, its patches the ones staged: all in
		 * place, not read again (each read a fault on a page the
		 * program may never run).  Else nothing to write only if
		 * every patch is there already: the text is mapped still
		 * (udt_rw_image_text() maps it again, or exits, if its
		 * failed mmap removed it).
		 */
		there = img != NULL && img->ri_state == UDT_RW_IMG_MAP &&
		    held && udt_rw_image_text(o, img, &o->ro_patch[i], j - i)
		    == 0;
		for (k = i; !there && k < j; k++) {
			at = UDT_RW_PAT(o, &o->ro_patch[k]);
			udt_rw_patch_bytes(&o->ro_patch[k], b);
			if (!udt_rw_same((const volatile uint8_t *)at, b,
			    o->ro_patch[k].rp_len))
				break;
		}
		there = there || k == j;
		prot = sg->sg_prot;
		w = held && !there && plo < phi && ((prot & PROT_WRITE) ||
		    udt_sys3(SYS_mprotect, plo, phi - plo, prot | PROT_WRITE)
		    == 0);
		ok = held;
		for (k = i; k < j; k++) {
			const struct udt_rw_patch *rp = &o->ro_patch[k];
			uintptr_t at = UDT_RW_PAT(o, rp);
			volatile uint8_t *d = (volatile uint8_t *)at;
			size_t n;

			if (there)
				udt_rw_patched(o, rp, 1);
			else if (w && at >= plo && at + rp->rp_len <= phi) {
				udt_rw_patch_bytes(rp, b);
				for (n = 0; n < rp->rp_len; n++)
					d[n] = b[n];
				udt_rw_patched(o, rp, 1);
			} else if (udt_rw_memwrite(o, rp) == 0)
				udt_rw_patched(o, rp, 1);
			else {
				udt_rw_patched(o, rp, 0);
				ok = 0;
			}
		}
		if (w && !(prot & PROT_WRITE))
			(void)udt_sys3(SYS_mprotect, plo, phi - plo, prot);
		if (img != NULL && img->ri_state == UDT_RW_IMG_SAVE && ok)
			udt_rw_image_save(o, img, &o->ro_patch[i], j - i);
	}
	if (hold && held)
		(void)udt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
	o->ro_npatch = 0;
}
