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
 * What the images' parts share: udt_rw_image.c finds, checks and
 * maps an image's region, udt_rw_imgtext.c its text over the object's,
 * udt_rw_imgsave.c writes one.  The constructor's pass only [w].
 */
#ifndef UDT_RW_IMG_H
#define UDT_RW_IMG_H

#include <sys/statfs.h>
#include <stddef.h>
#include <stdint.h>

#include "udt_rw_obj.h"
#include "udt_rw_plan.h"

/*
 * The region's second page holds the footer, just after the constants'
 * page and before the trampolines: read first, its fault maps the first
 * trampolines' pages with it (the kernel's fault-around), where a
 * footer in the last page, past the room kept for the longest
 * trampolines, was a fault of its own at every start (version 1).
 */
#define UDT_IMG_FOOT	4096

/* The image's region's second page: what it was made for. */
struct udt_img_foot {
	char		if_magic[8];		/* "UDTIMG1" */
	uint32_t	if_version, if_selflen;
	uint8_t		if_self[32];		/* the library's build-id */
	struct udt_plan_key if_key;		/* the object's */
	int64_t		if_off;			/* region - load address */
	uint64_t	if_len;			/* the region's length */
	uint64_t	if_objlen;		/* the object's, page-rounded */
	uint64_t	if_tlo, if_thi, if_toff;	/* its text's pages */
	uint64_t	if_npatch, if_psum;	/* the patches in it */
	int32_t		if_spot, if_notrap;	/* and whether it traps */
	uint64_t	if_sum;			/* of the footer, this 0 */
};

/* USERDT_IMAGES=debug-failsave: a save's write fails, for the tests. */
extern int	udt_img_failsave;				/* [w] */

/* "userdt: image: PROG: a b c" under USERDT_IMAGES=debug. */
void	 udt_img_say(const char *a, const char *b, const char *c);
/*
 * The image's path, or with dironly its directory's, into path (max
 * bytes): 0, or -1 when it does not fit.
 */
int	 udt_img_path(const struct udt_rw_img *ri, char *path, size_t max,
	    int dironly);
/* The footer's sum, its if_sum 0. */
uint64_t udt_img_footsum(struct udt_img_foot *f);
/* The sum of n staged patches rp of o, by their place in the object. */
uint64_t udt_img_psum(const struct udt_rw_obj *o,
	    const struct udt_rw_img *ri, const struct udt_rw_patch *rp,
	    size_t n);
/* What the image of ri is made for, all but its patches and sums. */
void	 udt_img_foot_fill(const struct udt_rw_img *ri,
	    struct udt_img_foot *f);
/* Whether sf is a network or FUSE file system's (or cannot be told). */
int	 udt_img_remote(const struct statfs *sf);

#endif /* UDT_RW_IMG_H */
