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
 * Images of patched objects (issue 20).  Writing the patches into an
 * object's text costs a copy of every page they touch, in every process
 * (77 pages of libc and the loader, some 270 us of each exec here), and
 * the trampolines are written afresh too.  Instead, the constructor's
 * pass keeps, for an object it rewrites, an image: a copy of the
 * object's file with its text patched, followed by the trampolines, in
 * the user's cache (<cache>/userdt/images/<hex>/<the object's name>).
 * A later start maps the image's text over the object's, MAP_PRIVATE
 * at the offset the loader used, and the trampolines likewise: page
 * cache pages shared by every process, read faults, no copies.  The
 * mapping names a file with the object's own name, symbols and build-id.
 *
 * That needs bytes that are the same in every process.  An imaged
 * object's trampolines lie in a region of their own at a fixed distance
 * from it (a few spots tried in order, MAP_FIXED_NOREPLACE; the image
 * is named by the spot), so every rel32 is the same; their headers name
 * their sites relatively (udt_rw_emit_tramp()); what is absolute (the
 * library's entry, udt_rw_brk, TLS offsets) is in the region's first
 * page, this process's own, which the code reaches RIP-relatively.
 *
 * What is used is what today's pass would write, checked:
 *  - the image is found only under a name made of this library's
 *    build-id, the object's plan key (udt_rw_plan.c: build-id, and its
 *    file's size, mtime, ctime, inode, device) and the region's spot
 *    and size, and its footer must say the same; it is a regular file
 *    of the user's, written by nobody else, one link, not a symlink, in
 *    the cache's directory (the plan's rules, udt_rw_plan_file.c);
 *  - the pass stages its patches and builds its trampolines exactly as
 *    without an image: each trampoline is compared with the image's and
 *    mended where it differs (a copy of that page); the image's text is
 *    mapped only if the footer's sum of its patches is the sum of the
 *    patches staged (not under a tracer that made the pass trap
 *    nothing, say), all of them within it; then they are taken as
 *    written without reading the text again (udt_rw_flush(): each read
 *    a fault);
 *  - never over the text of a traced process (a debugger's breakpoints
 *    may be there), nor over text with a page changed already (an
 *    earlier preload's hooks: udt_img_touched());
 *  - an image is written only from the file whose key the plan has,
 *    its bytes plus the patches the pass staged, and the trampolines it
 *    built, once all its patches are written, and only if that text is
 *    the one in memory (not a file renamed over it since); written
 *    with pwrite, never through a shared mapping (a write fault that
 *    finds no blocks is a SIGBUS); synced before its rename; never on
 *    a noexec, network or FUSE file system (an empty file says so),
 *    nor mapped from a network or FUSE one (a cache copied there);
 *  - a failed mmap of the image's text that removed the object's
 *    (udt_img_gone()) is tried once more, else the process exits
 *    with a word: it must not run on without text.
 * The rest of the image's text (the object's bytes between the sites)
 * is trusted as the plan is: whoever can write the user's cache can
 * already run code as the user (doc/threat-model.md).
 *
 * Where anything does not fit (the spot taken, no image, a bad one, a
 * segment more, text relocations, a pass that flushed early), the
 * object is patched as without images, silently unless
 * USERDT_IMAGES=debug; USERDT_IMAGES=0 turns images off.
 *
 * Concurrency: the constructor's pass only [w]; raw system calls.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <userdt/udt_cachefs.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"
#include "udt_rw_plan.h"
#include "udt_rw_img.h"
#include "udt_cat.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define UDT_IMG_VERSION	2
#define UDT_IMG_BELOW	(32UL << 20)	/* the first spot: this far below */
#define UDT_IMG_NSPOT	2

_Static_assert(sizeof(struct udt_plan_key) <=
    sizeof(((struct udt_rw_img *)0)->ri_key), "ri_key");

/* Counts for USERDT_IMAGES=debug and the tests [w]. */
size_t	udt_rw_img_used, udt_rw_img_saved;
int	udt_rw_img_traced;					/* [w] */
static int	udt_img_on = -1, udt_img_debug, udt_img_flush;	/* [w] */
int	udt_img_failsave;					/* [w] */
/*
 * The file system of a cache file found not to be a network or FUSE
 * one (udt_rw_fs_remote()), by its device: the same device is the same
 * super block, whose type does not change, so the next file there (the
 * images after the plan) needs no statfs of its own.  Within one start
 * only: a device number outlives its mount (udt_cachefs.h).  0: none
 * yet.  [w]
 */
static uint64_t	udt_img_fsok;

void
udt_img_say(const char *a, const char *b, const char *c)
{
	if (udt_img_debug)
		udt_rw_cache_say("image: ", a, b, c);
}

static int
udt_img_enabled(void)
{
	const char *env;

	if (udt_img_on < 0) {
		env = getenv(UDT_RW_IMAGE_ENV);
		udt_img_on = env == NULL || strcmp(env, "0") != 0;
		udt_img_debug = env != NULL && (strcmp(env, "debug") == 0 ||
		    strcmp(env, "debug-flush") == 0 ||
		    strcmp(env, "debug-failsave") == 0);
		udt_img_flush = env != NULL &&
		    strcmp(env, "debug-flush") == 0;
		/* The tests': a save whose write fails (ENOSPC, say). */
		udt_img_failsave = env != NULL &&
		    strcmp(env, "debug-failsave") == 0;
	}
	return udt_img_on;
}

/*
 * The most patches the constructor's pass stages before it flushes:
 * max, or few under USERDT_IMAGES=debug-flush, for the tests of a pass
 * that flushes early (udt_rw_seal()).
 */
size_t
udt_rw_image_maxpatch(size_t max)
{
	return udt_img_enabled() && udt_img_flush ? 100 : max;
}

/* Whether the object's text needs relocating: its image would lack it. */
static int
udt_img_textrel(const struct dl_phdr_info *info)
{
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *d;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		    d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS &&
			    (d->d_un.d_val & DF_TEXTREL)))
				return 1;
	}
	return 0;
}

/* The image's path for spot k: 0, or -1 when it does not fit. */
int
udt_img_path(const struct udt_rw_img *ri, char *path, size_t max, int dironly)
{
	const char *base = strrchr(ri->ri_path, '/') + 1;
	uint64_t h = 0x452821e638d01377ULL;
	char hex[17];
	size_t n, cut;
	int i;

	h = udt_plan_hash(h, udt_plan.pl_self, udt_plan.pl_selflen);
	h = udt_plan_hash(h, ri->ri_key, sizeof(struct udt_plan_key));
	h = udt_plan_hash(h ^ (uint64_t)ri->ri_k ^
	    ((uint64_t)ri->ri_notrap << 8), &ri->ri_len, sizeof(ri->ri_len));
	for (i = 0; i < 16; i++)
		hex[i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
	hex[16] = '\0';
	/* pl_dir is .../userdt/plans: the images are its sibling's. */
	n = udt_cat(path, 0, max, udt_plan.pl_dir);
	if (n == (size_t)-1 || n < 6)
		return -1;
	cut = n - 5;
	path[cut] = '\0';
	n = udt_cat(path, cut, max, "images/");
	n = udt_cat(path, n, max, hex);
	if (!dironly) {
		n = udt_cat(path, n, max, "/");
		n = udt_cat(path, n, max, base);
	}
	return n == (size_t)-1 ? -1 : 0;
}

uint64_t
udt_img_footsum(struct udt_img_foot *f)
{
	uint64_t s = f->if_sum, h;

	f->if_sum = 0;
	h = udt_plan_hash(0x3c6ef372fe94f82bULL, f, sizeof(*f));
	f->if_sum = s;
	return h;
}

/* The sum of n staged patches, by their place in the object. */
uint64_t
udt_img_psum(const struct udt_rw_obj *o, const struct udt_rw_img *ri,
    const struct udt_rw_patch *rp, size_t n)
{
	uint64_t h = 0x510e527fade682d1ULL, at;
	uint8_t b[UDT_RW_PATCHMAX];
	size_t k;

	for (k = 0; k < n; k++) {
		at = UDT_RW_PAT(o, &rp[k]) - ri->ri_addr;
		h = udt_plan_hash(h, &at, sizeof(at));
		udt_rw_patch_bytes(&rp[k], b);
		h = udt_plan_hash(h ^ rp[k].rp_len, b, rp[k].rp_len);
	}
	return h;
}

void
udt_img_foot_fill(const struct udt_rw_img *ri, struct udt_img_foot *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->if_magic, "UDTIMG1", 8);
	f->if_version = UDT_IMG_VERSION;
	f->if_selflen = udt_plan.pl_selflen;
	memcpy(f->if_self, udt_plan.pl_self, sizeof(f->if_self));
	memcpy(&f->if_key, ri->ri_key, sizeof(f->if_key));
	f->if_off = (int64_t)((uintptr_t)ri->ri_base - ri->ri_addr);
	f->if_len = ri->ri_len;
	f->if_objlen = (f->if_key.pk_size + 4095) & ~(uint64_t)4095;
	f->if_tlo = ri->ri_tlo - ri->ri_addr;
	f->if_thi = ri->ri_thi - ri->ri_addr;
	f->if_toff = ri->ri_toff;
	f->if_spot = ri->ri_k;
	f->if_notrap = ri->ri_notrap;
}

/*
 * The image mapped at the region: whether its footer says it was made
 * for this object, this library, this spot.  The footer's patch count
 * and sum are kept for udt_rw_image_text().
 */
static const char *
udt_img_check(struct udt_rw_img *ri)
{
	struct udt_img_foot want, got;

	memcpy(&got, ri->ri_base + UDT_IMG_FOOT, sizeof(got));
	udt_img_foot_fill(ri, &want);
	if (memcmp(got.if_magic, want.if_magic, 8) != 0 ||
	    got.if_version != want.if_version)
		return "not an image of this version";
	if (got.if_sum != udt_img_footsum(&got))
		return "its footer is not whole";
	if (got.if_selflen != want.if_selflen ||
	    memcmp(got.if_self, want.if_self, sizeof(got.if_self)) != 0)
		return "made by another library";
	if (memcmp(&got.if_key, &want.if_key, sizeof(got.if_key)) != 0)
		return "made for another object";
	if (got.if_off != want.if_off || got.if_len != want.if_len ||
	    got.if_spot != want.if_spot || got.if_notrap != want.if_notrap)
		return "made for another region";
	if (got.if_objlen != want.if_objlen || got.if_tlo != want.if_tlo ||
	    got.if_thi != want.if_thi || got.if_toff != want.if_toff)
		return "made for other segments";
	ri->ri_npatch = got.if_npatch;
	ri->ri_psum = got.if_psum;
	return NULL;
}

/*
 * Spot k of the region: below the object by UDT_IMG_BELOW (the gap
 * right below libc holds the ring by now), or right above its end (the
 * loader's, where the stack's gap lies).  The loader tries above first.
 */
static uintptr_t
udt_img_spot(int k, int loader, uintptr_t lo, uintptr_t hi, size_t len)
{
	if ((k == 0) == !loader)
		return lo > UDT_IMG_BELOW + len + 65536 ?
		    lo - UDT_IMG_BELOW - len : 0;
	return hi;
}

/*
 * Whether a file system may take a file from under a mapping of it: a
 * network one's, where another host can remove or replace it (ESTALE,
 * then SIGBUS in whatever runs the text), or a FUSE daemon's.
 */
int
udt_img_remote(const struct statfs *sf)
{
	return udt_fs_remote_type((uint32_t)sf->f_type);
}

int
udt_rw_fs_remote(long fd, uint64_t dev, uint64_t mnt)
{
	struct statfs sf;

	if (udt_img_fsok != 0 && udt_img_fsok == dev)
		return 0;
	/* On the mount the launcher judged (UDT_CACHEFS_ENV): no look. */
	if (mnt != 0 && mnt == udt_plan.pl_cachefs) {
		udt_img_fsok = dev;
		return 0;
	}
	if (udt_sys2(SYS_fstatfs, fd, &sf) != 0 || udt_img_remote(&sf))
		return 1;
	udt_img_fsok = dev;
	return 0;
}

/*
 * The image of ri at spot ri_k, if there is a usable one: mapped at the
 * region (MAP). Else the region anonymous there (SAVE).  Returns -1
 * when the spot is taken, 1 when an empty file of ours says that no
 * image can be used (udt_rw_image_save()): the object is patched in
 * place, without a region of its own.
 */
static int
udt_img_map(struct udt_rw_img *ri)
{
	struct stat st;
	char path[700];
	const char *why = NULL;
	uint64_t objlen;
	long fd = -1, p;
	int ours;

	objlen = (((const struct udt_plan_key *)(const void *)ri->ri_key)->
	    pk_size + 4095) & ~(uint64_t)4095;
	if (udt_img_path(ri, path, sizeof(path), 0) == 0)
		fd = udt_sys3(SYS_open, path, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0);
	ours = fd >= 0 && udt_sys2(SYS_fstat, fd, &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_uid == udt_plan.pl_euid &&
	    (st.st_mode & 022) == 0 && st.st_nlink == 1;
	if (ours && st.st_size == 0) {
		/* Ours, empty: no image can be used here (noexec). */
		udt_sys1(SYS_close, fd);
		return 1;
	}
	if (fd >= 0 && (!ours ||
	    (uint64_t)st.st_size != objlen + ri->ri_len)) {
		udt_img_say("ignored ", path, ": not a file of ours, or "
		    "written by others, or not whole");
		udt_sys1(SYS_close, fd);
		fd = -1;
	} else if (fd < 0 && fd != -ENOENT)
		udt_img_say("ignored ", path, ": cannot be opened");
	/*
	 * On a network or FUSE file system, which the save refuses (a
	 * home directory copied there with its cache, rsync say): the file
	 * may go from under the text (SIGBUS).  Patched in place, as with
	 * the empty file, and not written again.
	 */
	if (fd >= 0 && udt_rw_fs_remote(fd, (uint64_t)st.st_dev, 0)) {
		udt_img_say("ignored ", path, ": on a network or FUSE file "
		    "system");
		udt_sys1(SYS_close, fd);
		return 1;
	}
	if (fd >= 0) {
		p = udt_sys6(SYS_mmap, (long)ri->ri_base, (long)ri->ri_len,
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED_NOREPLACE,
		    fd, (long)objlen);
		if (p == -EEXIST) {
			udt_sys1(SYS_close, fd);
			return -1;
		}
		if (p == (long)ri->ri_base) {
			if ((why = udt_img_check(ri)) == NULL) {
				ri->ri_fd = (int)fd;
				ri->ri_state = UDT_RW_IMG_MAP;
				return 0;
			}
			if (udt_img_debug) {
				char msg[760];
				size_t n;

				n = udt_cat(msg, 0, sizeof(msg), path);
				n = udt_cat(msg, n, sizeof(msg), ": ");
				n = udt_cat(msg, n, sizeof(msg), why);
				udt_img_say("refused ", n == (size_t)-1 ? path :
				    msg, NULL);
			}
			/* Anonymous instead, in place. */
			p = udt_sys6(SYS_mmap, (long)ri->ri_base,
			    (long)ri->ri_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			udt_sys1(SYS_close, fd);
			if (p != (long)ri->ri_base)
				return -1;
			ri->ri_state = UDT_RW_IMG_SAVE;
			return 0;
		}
		if (!udt_sys_failed(p))	/* a kernel that took it as a hint */
			udt_sys2(SYS_munmap, p, ri->ri_len);
		udt_sys1(SYS_close, fd);
	}
	p = udt_sys6(SYS_mmap, (long)ri->ri_base, (long)ri->ri_len,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (long)ri->ri_base) {
		if (!udt_sys_failed(p))
			udt_sys2(SYS_munmap, p, ri->ri_len);
		return -1;
	}
	ri->ri_state = UDT_RW_IMG_SAVE;
	return 0;
}

void
udt_rw_image_seg(struct udt_rw_obj *o, struct dl_phdr_info *info, int i)
{
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i], *q;
	const struct udt_rw_seg *sg;
	struct udt_rw_img *ri;
	struct udt_rw_pool *rp;
	const uintptr_t reach = (1UL << 31) - (1UL << 24);
	uintptr_t lo = UINTPTR_MAX, hi = 0, a, b, base;
	size_t len;
	int k, nx = 0, loader, r = -1;

	o->ro_fixlen = 0;
	o->ro_fiximg = NULL;
	/* Traced: never mapped (udt_rw_image_text()), so no region either. */
	if (!udt_img_enabled() || udt_rw_img_traced || o->ro_want != NULL ||
	    !o->ro_plan ||
	    o->ro_noimg || !udt_plan.pl_keyok ||
	    udt_plan.pl_key.pk_kind != UDT_PLAN_STAT ||
	    o->ro_nimg == UDT_RW_MAXIMG || o->ro_npool == UDT_RW_MAXPOOL ||
	    o->ro_nseg == 0 || o->ro_nwin + o->ro_ntrap == 0 ||
	    info->dlpi_name == NULL || info->dlpi_name[0] != '/' ||
	    udt_img_textrel(info))
		return;
	for (k = 0; k < info->dlpi_phnum; k++) {
		q = &info->dlpi_phdr[k];
		if (q->p_type != PT_LOAD)
			continue;
		nx += (q->p_flags & PF_X) != 0;
		a = (info->dlpi_addr + q->p_vaddr) & ~(uintptr_t)4095;
		b = (info->dlpi_addr + q->p_vaddr + q->p_memsz + 4095) &
		    ~(uintptr_t)4095;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	/* One code segment: one region, one text mapping. */
	if (nx != 1 || lo >= hi)
		return;
	sg = &o->ro_seg[o->ro_nseg - 1];
	ri = &o->ro_img[o->ro_nimg];
	memset(ri, 0, sizeof(*ri));
	ri->ri_fd = -1;
	ri->ri_addr = info->dlpi_addr;
	ri->ri_tlo = sg->sg_lo;
	ri->ri_thi = sg->sg_hi;
	ri->ri_tprot = sg->sg_prot;
	ri->ri_toff = ph->p_offset - (info->dlpi_addr + ph->p_vaddr -
	    sg->sg_lo);
	ri->ri_path = info->dlpi_name;
	/*
	 * Under a tracer nothing is trapped (udt_rw_untrap()): other
	 * patches, another image.
	 */
	ri->ri_notrap = __atomic_load_n(&udt_rw_notrap, __ATOMIC_ACQUIRE) != 0;
	memcpy(ri->ri_key, &udt_plan.pl_key, sizeof(udt_plan.pl_key));
	/* Constants, footer, the most the code takes (the hook's too). */
	len = 4096 + ((64 + (o->ro_nwin + o->ro_ntrap) * UDT_RW_SLOTSZ +
	    4095) & ~(size_t)4095) + 4096;
	ri->ri_len = len;
	loader = _r_debug.r_brk >= lo && _r_debug.r_brk < hi;
	for (k = 0; k < UDT_IMG_NSPOT; k++) {
		if ((base = udt_img_spot(k, loader, lo, hi, len)) == 0)
			continue;
		a = base < lo ? base : lo;
		b = base + len > hi ? base + len : hi;
		if (b - a > reach)
			continue;
		ri->ri_base = (uint8_t *)base;
		ri->ri_k = k;
		if ((r = udt_img_map(ri)) >= 0)
			break;
	}
	if (k == UDT_IMG_NSPOT || r > 0)
		return;
	o->ro_nimg++;
	o->ro_seg[o->ro_nseg - 1].sg_img = (int)o->ro_nimg;
	o->ro_fix = ri->ri_base;
	o->ro_fixlen = len;
	o->ro_fixused = UDT_IMG_FOOT + 4096;
	o->ro_fiximg = ri;
	/* Sealed with the pass's regions; nothing else carves from it. */
	rp = &o->ro_pool[o->ro_npool++];
	rp->rp_base = ri->ri_base;
	rp->rp_len = rp->rp_used = len;
	udt_rw_cover((uintptr_t)ri->ri_base, (uintptr_t)ri->ri_base + len);
}

void
udt_rw_image_land(struct udt_rw_obj *o, uint8_t *at, const uint8_t *b,
    size_t n)
{
	struct udt_rw_img *ri = o->ro_fiximg;

	if (ri != NULL && ri->ri_state == UDT_RW_IMG_MAP &&
	    memcmp(at, b, n) == 0)
		return;
	if (ri != NULL && ri->ri_state == UDT_RW_IMG_MAP)
		ri->ri_nrepair += n;
	memcpy(at, b, n);
}

/*
 * The region at base, an image's, could not be made executable (a
 * cache remounted noexec, a security module's rule on its file): its
 * bytes moved to anonymous memory at the same place and that made
 * executable, so that the object's patches and the others' stand.
 * Its text is then not mapped from the image either (that mmap fails
 * too: the patches are written).  Returns 0, or -1 if neither is.
 */
int
udt_rw_image_unshare(struct udt_rw_obj *o, uint8_t *base, size_t len)
{
	size_t k;
	long p;

	for (k = 0; k < o->ro_nimg; k++)
		if (o->ro_img[k].ri_base == base)
			break;
	if (k == o->ro_nimg)
		return -1;
	p = udt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (udt_sys_failed(p))
		return -1;
	memcpy((void *)p, base, len);
	if (udt_sys5(SYS_mremap, p, (long)len, (long)len, MREMAP_MAYMOVE |
	    MREMAP_FIXED, (long)base) != (long)base) {
		udt_sys2(SYS_munmap, p, len);
		return -1;
	}
	udt_img_say(o->ro_img[k].ri_path, ": its image's region cannot be "
	    "executable: a copy instead", NULL);
	return (int)udt_sys3(SYS_mprotect, base, len, PROT_READ | PROT_EXEC);
}

/*
 * Room for len bytes of code for an object that has no fixed region
 * (the vDSO), within a rel32 jump of all of [lo, hi): in the first page
 * of this pass's fixed regions, past their constants.  That page is the
 * process's own (written, never an image's) and sealed with its region.
 */
uint8_t *
udt_rw_image_room(struct udt_rw_obj *o, uintptr_t lo, uintptr_t hi,
    size_t len)
{
	const uintptr_t reach = (1UL << 31) - (1UL << 24);
	struct udt_rw_img *ri;
	uintptr_t a, b;
	size_t k;

	/* Sealed already, if the pass flushed early (udt_rw_seal()). */
	if (o->ro_fixlen > 0 || o->ro_noimg)
		return NULL;
	for (k = 0; k < o->ro_nimg; k++) {
		ri = &o->ro_img[k];
		if (ri->ri_p0used < UDT_RW_HDRSZ)
			ri->ri_p0used = UDT_RW_HDRSZ;
		a = (uintptr_t)ri->ri_base < lo ? (uintptr_t)ri->ri_base : lo;
		b = (uintptr_t)ri->ri_base + 4096 > hi ?
		    (uintptr_t)ri->ri_base + 4096 : hi;
		if (4096 - ri->ri_p0used >= len && b - a <= reach) {
			ri->ri_p0used += len;
			return ri->ri_base + ri->ri_p0used - len;
		}
	}
	return NULL;
}

/*
 * After the pass's flush: the images' descriptors and pagemap's closed,
 * in one call when they are all there is in their range (they were
 * opened one after the other, each the lowest free), or left to the
 * constructor's end when they follow the handshake's, which it closes
 * then with them (udt_close_defer()).
 */
void
udt_rw_image_end(struct udt_rw_obj *o)
{
	long lo = -1, hi = -1, fd, pm = o->ro_pagemap - 1;
	size_t k, n = 0;

	for (k = 0; k <= o->ro_nimg; k++) {
		if ((fd = k < o->ro_nimg ? o->ro_img[k].ri_fd : pm) < 0)
			continue;
		lo = lo < 0 || fd < lo ? fd : lo;
		hi = fd > hi ? fd : hi;
		n++;
	}
	if (n > 0 && (size_t)(hi - lo + 1) == n &&
	    (udt_close_defer((int)lo, (int)hi) == 0 ||
	    udt_sys3(SYS_close_range, lo, hi, 0) == 0))
		n = 0;
	for (k = 0; k < o->ro_nimg; k++) {
		if (n > 0 && o->ro_img[k].ri_fd >= 0)
			udt_sys1(SYS_close, o->ro_img[k].ri_fd);
		o->ro_img[k].ri_fd = -1;
	}
	if (n > 0 && pm >= 0)
		udt_sys1(SYS_close, pm);
	o->ro_pagemap = 0;
	o->ro_nimg = 0;
	o->ro_fixlen = 0;
	o->ro_fiximg = NULL;
}
