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
 * An image written (udt_rw_image.c says what an image is and what is
 * checked): the object's file copied, the patches staged written into
 * its text, the trampolines as built and the footer after it, synced
 * and renamed into place.  Apart from the reading half: a start with
 * its images cached never runs it.
 *
 * Concurrency: the constructor's pass only [w]; raw system calls.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"
#include "udt_rw_plan.h"
#include "udt_rw_img.h"

/* n bytes at off of fd, all: 0, or -1. */
static int
udt_img_pwrite(long fd, const void *b, size_t n, uint64_t off)
{
	long w;

	while (n > 0) {
		w = udt_sys4(SYS_pwrite64, fd, b, n, off);
		if (w == -EINTR)
			continue;
		if (w <= 0)
			return -1;
		b = (const uint8_t *)b + w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* n bytes at off of fd, all: 0, or -1 (short: the file is not whole). */
static int
udt_img_pread(long fd, void *b, size_t n, uint64_t off)
{
	long r;

	while (n > 0) {
		r = udt_sys4(SYS_pread64, fd, b, n, off);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			return -1;
		b = (uint8_t *)b + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* The object's file, still the one its key names, copied into fd. */
static int
udt_img_copy(const struct udt_rw_img *ri, long fd)
{
	const struct udt_plan_key *k = (const void *)ri->ri_key;
	struct stat st;
	long src, n;
	int64_t in = 0, out = 0;
	int r = -1;

	if ((src = udt_sys3(SYS_open, ri->ri_path, O_RDONLY | O_CLOEXEC |
	    O_NOCTTY, 0)) < 0)
		return -1;
	if (udt_sys2(SYS_fstat, src, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != k->pk_size ||
	    (uint64_t)st.st_ino != k->pk_ino ||
	    (uint64_t)st.st_dev != k->pk_dev ||
	    (uint64_t)st.st_mtim.tv_sec != k->pk_mtime ||
	    (uint64_t)st.st_mtim.tv_nsec != k->pk_mtimens ||
	    (uint64_t)st.st_ctim.tv_sec != k->pk_ctime ||
	    (uint64_t)st.st_ctim.tv_nsec != k->pk_ctimens)
		goto out;
	while ((uint64_t)in < k->pk_size) {
		n = udt_sys6(SYS_copy_file_range, src, (long)&in, fd,
		    (long)&out, (long)(k->pk_size - (uint64_t)in), 0);
		if (n == -EINTR)
			continue;
		if (n <= 0) {
			/* Another file system, an old kernel: sendfile. */
			if (udt_sys3(SYS_lseek, fd, out, SEEK_SET) != out)
				goto out;
			n = udt_sys4(SYS_sendfile, fd, src, &in,
			    k->pk_size - (uint64_t)in);
			if (n <= 0)
				goto out;
			out += n;
		}
	}
	r = 0;
out:
	udt_sys1(SYS_close, src);
	return r;
}

void
udt_rw_image_save(struct udt_rw_obj *o, struct udt_rw_img *ri,
    const struct udt_rw_patch *rp, size_t n)
{
	struct udt_img_foot f;
	struct statfs sf;
	char dir[700], tmp[760], path[760];
	uint64_t objlen;
	size_t k, tlen, plo, phi, wlo, whi;
	uintptr_t at;
	uint8_t b[UDT_RW_PATCHMAX];
	long fd, m;
	int same;

	ri->ri_state = 0;
	/*
	 * Traced: never mapped (udt_rw_image_text()), so not written.  An
	 * untrap since the image was named: its int3s are gone.
	 */
	if (udt_rw_img_traced || (__atomic_load_n(&udt_rw_notrap,
	    __ATOMIC_ACQUIRE) != 0) != ri->ri_notrap ||
	    udt_img_path(ri, dir, sizeof(dir), 1) != 0 ||
	    udt_img_path(ri, path, sizeof(path), 0) != 0 ||
	    udt_plan_mkdirs(dir) != 0)
		return;
	if (udt_plan_tmpname(tmp, sizeof(tmp), dir) != 0)
		return;
	/* Read-only: a write would reach every process that maps it. */
	fd = udt_sys3(SYS_open, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC | O_NOCTTY, 0400);
	if (fd < 0)
		return;
	udt_img_foot_fill(ri, &f);
	objlen = f.if_objlen;
	/*
	 * Code cannot be mapped from a noexec file system, and must not
	 * be from a network or FUSE one (udt_img_remote()): no image, and
	 * the empty file says so to later starts, which then neither map
	 * nor try again (udt_img_map()).  A start that finds an image
	 * checks its file system too (one fstatfs): a cache copied to a
	 * network file system carries its images there.
	 */
	if (udt_sys2(SYS_fstatfs, fd, &sf) != 0)
		goto fail;
	if ((sf.f_flags & ST_NOEXEC) || udt_img_remote(&sf)) {
		udt_sys1(SYS_close, fd);
		if (udt_sys2(SYS_rename, tmp, path) != 0)
			(void)udt_sys1(SYS_unlink, tmp);
		udt_img_say(path, (sf.f_flags & ST_NOEXEC) ? ": left empty, a "
		    "noexec file system" : ": left empty, a network or FUSE "
		    "file system", NULL);
		return;
	}
	if (udt_img_copy(ri, fd) != 0 ||
	    udt_sys2(SYS_ftruncate, fd, objlen + ri->ri_len) != 0)
		goto fail;
	/*
	 * The copy's text read into anonymous memory, patched there, and
	 * the pages with patches written back with pwrite: never stored
	 * through a shared mapping of the file, where a write fault that
	 * must allocate blocks (a reflinked copy on btrfs or XFS) and
	 * finds none (ENOSPC, EDQUOT) is a SIGBUS, blocked here, so fatal.
	 * Every failure is a return value, and the save is abandoned.
	 */
	tlen = ri->ri_thi - ri->ri_tlo;
	m = udt_sys6(SYS_mmap, 0, (long)tlen, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (udt_sys_failed(m))
		goto fail;
	if (udt_img_pread(fd, (void *)m, tlen, ri->ri_toff) != 0) {
		udt_sys2(SYS_munmap, m, tlen);
		goto fail;
	}
	for (k = 0; k < n; k++) {
		at = UDT_RW_PAT(o, &rp[k]);
		if (at < ri->ri_tlo || at + rp[k].rp_len > ri->ri_thi)
			break;
		udt_rw_patch_bytes(&rp[k], b);
		memcpy((uint8_t *)m + (at - ri->ri_tlo), b, rp[k].rp_len);
	}
	/*
	 * The copy's text, patched, must be the text this process runs:
	 * the key's build-id is read from memory but its stat from the
	 * path, and a package upgrade may have renamed a new file over
	 * the one the loader mapped (same size, say).  Any other change
	 * already made to the text (a debugger's, an earlier preload's)
	 * is refused here too.  Once, at save time: saving is rare.
	 */
	same = k == n && (ri->ri_tprot & PROT_READ) &&
	    memcmp((const void *)m, (const void *)ri->ri_tlo, tlen) == 0;
	/* The pages with patches, a run of them a call. */
	for (k = 0, wlo = whi = 0; same && k <= n; k++) {
		if (k < n) {
			at = UDT_RW_PAT(o, &rp[k]);
			plo = (at - ri->ri_tlo) & ~(size_t)4095;
			phi = (at - ri->ri_tlo + rp[k].rp_len + 4095) &
			    ~(size_t)4095;
			phi = phi > tlen ? tlen : phi;
			if (wlo < whi && plo <= whi && phi >= wlo) {
				wlo = plo < wlo ? plo : wlo;
				whi = phi > whi ? phi : whi;
				continue;
			}
		}
		if (wlo < whi && (udt_img_failsave || udt_img_pwrite(fd,
		    (const uint8_t *)m + wlo, whi - wlo, ri->ri_toff + wlo)
		    != 0)) {
			udt_img_say(ri->ri_path, ": its patches could not be "
			    "written", NULL);
			udt_sys2(SYS_munmap, m, tlen);
			goto fail;
		}
		if (k < n) {
			wlo = plo;
			whi = phi;
		}
	}
	udt_sys2(SYS_munmap, m, tlen);
	if (!same) {
		udt_img_say(ri->ri_path, ": its file is not the text mapped",
		    NULL);
		goto fail;
	}
	/* The trampolines as built; the constants' page stays zero. */
	if (udt_img_pwrite(fd, ri->ri_base + UDT_IMG_FOOT + 4096, ri->ri_len -
	    UDT_IMG_FOOT - 4096, objlen + UDT_IMG_FOOT + 4096) != 0)
		goto fail;
	f.if_npatch = n;
	f.if_psum = udt_img_psum(o, ri, rp, n);
	f.if_sum = udt_img_footsum(&f);
	if (udt_img_pwrite(fd, &f, sizeof(f), objlen + UDT_IMG_FOOT) != 0)
		goto fail;
	/*
	 * On the disk before its name: after a power loss a file of the
	 * right size but zeros would pass the footer's checks.
	 */
	if (udt_sys1(SYS_fdatasync, fd) != 0)
		goto fail;
	udt_sys1(SYS_close, fd);
	if (udt_sys2(SYS_rename, tmp, path) != 0) {
		(void)udt_sys1(SYS_unlink, tmp);
		return;
	}
	udt_rw_img_saved++;
	udt_img_say("written ", path, NULL);
	return;
fail:
	udt_sys1(SYS_close, fd);
	(void)udt_sys1(SYS_unlink, tmp);
	udt_img_say(ri->ri_path, ": no image written", NULL);
}
