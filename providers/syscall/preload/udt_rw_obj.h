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
 * The rewriter's own: what udt_rw.c (finding and proving sites),
 * udt_rw_pass.c (the pass), udt_rw_eh.c (the unwind tables),
 * udt_rw_emit.c (trampolines, stubs, patches) and udt_rw_image.c (images
 * of patched objects) share about the object a pass goes through.  Only
 * the pass uses it: the constructor, or udt_rw_brk() under the loader's
 * lock [w].
 */
#ifndef UDT_RW_OBJ_H
#define UDT_RW_OBJ_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>
#include <userdt/udt_wire.h>

#define UDT_RW_MAXWIN	4	/* instructions on either side of a call */
#define UDT_RW_NEAR	130	/* a short jump's reach, and some */
#define UDT_RW_MAXINSN	32768	/* a function longer is left alone */
#define UDT_RW_MAXSITE	16384	/* sites in one object */
/*
 * The most a trampoline's code takes (UDT_TRAMP_MAX), and the most
 * its slot does: the site's header before it (UDT_TRAMP_HDR) and the
 * padding that aligns the header.
 */
#define UDT_RW_TRAMPSZ	UDT_TRAMP_MAX
#define UDT_RW_SLOTSZ	(UDT_TRAMP_MAX + UDT_TRAMP_HDR + 8)
#define UDT_RW_HDRSZ	64	/* a region's constants */
/* Its words: udt_rw_entry, udt_rw_post, two TLS offsets, udt_rw_brk. */
#define UDT_RW_HDR_BRK	32
#define UDT_RW_STUBSZ	64	/* a trapped site's stub */
#define UDT_RW_CSMEM	(256 * 1024)	/* Capstone's arena */

/* One decoded instruction of the function being looked at. */
struct udt_rw_insn {
	uintptr_t	ri_addr;
	uint8_t		ri_size;
	uint8_t		ri_reloc;	/* may run anywhere */
	uint8_t		ri_syscall;
	long		ri_movimm;	/* mov $imm,%eax: imm, else -1 */
};

/* A window that will be rewritten. */
struct udt_rw_win {
	uintptr_t	rw_start, rw_sys, rw_end;
	long		rw_nr;		/* the number, where it is constant */
	uintptr_t	rw_tramp;
	int		rw_bad;
};

/*
 * Bytes a pass will write over a site (a jump, an int3) or the loader's
 * r_brk, staged until udt_rw_flush() writes them all: what the pass
 * proved is decided before any text changes, and the text of all the
 * objects is made writable once each, not written a system call a site.
 */
#define UDT_RWP_WIN	0		/* a jump to a window's trampoline */
#define UDT_RWP_TRAP	1		/* an int3 */
#define UDT_RWP_BRK	2		/* the loader's r_brk hook */
struct udt_rw_patch {
	uint32_t	rp_off;			/* from its segment's sg_lo */
	/*
	 * Its bytes, by kind (udt_rw_patch_bytes()): an int3, or a jump
	 * (e9, this rel32) and int3 padding to rp_len.  Twelve bytes a
	 * patch, not thirty-two with the bytes and the address: a libc's
	 * 577 are staged at every start, a page each 341 of them.
	 */
	int32_t		rp_rel;
	uint16_t	rp_seg;			/* index into ro_seg */
	uint8_t		rp_len;
	uint8_t		rp_kind;
};
/* Where patch rp goes. */
#define UDT_RW_PAT(o, rp)	((o)->ro_seg[(rp)->rp_seg].sg_lo + (rp)->rp_off)
#define UDT_RW_PATCHMAX	16		/* the most bytes a patch has */

/*
 * An executable segment the staged patches lie in: the pages that are
 * its own (a page it shares with the next segment has that one's
 * protection) and the protection the loader gave it.
 */
struct udt_rw_seg {
	uintptr_t	sg_lo, sg_hi;
	int		sg_prot;
	int		sg_img;			/* its image (ro_img) + 1, or 0 */
};

/* A region of trampolines a pass carves from (udt_rw_room()). */
#define UDT_RW_MAXPOOL	16
#define UDT_RW_POOLSZ	(1 << 20)
struct udt_rw_pool {
	uint8_t		*rp_base;
	size_t		rp_len, rp_used;
};

/*
 * An object whose trampolines lie at a fixed distance from it, so that
 * its patched text and trampolines are the same bytes in every process
 * and can be shared through an image file (udt_rw_image.c).  The
 * region: page 0 this process's constants (written here), page 1 the
 * image's footer, then the trampolines.
 */
#define UDT_RW_MAXIMG	8
#define UDT_RW_IMG_SAVE	1		/* no image: write one after */
#define UDT_RW_IMG_MAP	2		/* the image's region is mapped */
struct udt_rw_img {
	int		ri_state;		/* UDT_RW_IMG_*, 0: dropped */
	int		ri_fd;			/* the image, while MAP */
	uint8_t		*ri_base;		/* the region */
	size_t		ri_len;
	uintptr_t	ri_addr;		/* the object's load address */
	uintptr_t	ri_tlo, ri_thi;		/* its text's own pages */
	uint64_t	ri_toff;		/* their file offset */
	int		ri_tprot;
	int		ri_k;			/* which spot (udt_rw_image.c) */
	int		ri_notrap;		/* made where nothing is trapped */
	size_t		ri_nrepair;		/* trampoline bytes mended */
	size_t		ri_p0used;		/* of the region's first page */
	const char	*ri_path;		/* the object's file */
	uint64_t	ri_npatch, ri_psum;	/* its footer's, if MAP */
	uint8_t		ri_key[sizeof(uint64_t) * 16];	/* udt_plan_key */
};

/* The object being rewritten: its unwind table, decoded. */
struct udt_rw_obj {
	uintptr_t	ro_lo, ro_hi;		/* executable bytes */
	const uint8_t	*ro_hdr;		/* .eh_frame_hdr */
	const int32_t	*ro_tab;		/* (loc, fde) pairs */
	size_t		ro_nfde;
	csh		ro_cs;
	cs_insn		*ro_ci;
	struct udt_rw_insn *ro_insn;		/* scratch */
	uintptr_t	*ro_tgt;		/* scratch: branch targets */
	size_t		ro_ntgt, ro_maxtgt;
	/*
	 * Each function's direct branch targets, decoded once: the
	 * neighbours of one site are the neighbours of the next.
	 * ro_memo[i]: index into ro_arena, -1 not decoded yet, -2 cannot
	 * be; ro_memon[i]: how many.
	 */
	int32_t		*ro_memo;
	uint32_t	*ro_memon;
	uintptr_t	*ro_memotail;	/* where its decoding stopped */
	uintptr_t	*ro_memobuf;	/* the pass's room for them */
	size_t		ro_memomax;
	uintptr_t	*ro_arena;
	size_t		ro_narena, ro_maxarena;
	struct udt_rw_win *ro_win;
	size_t		ro_nwin;
	/*
	 * Where the windows of the segment being committed come from a
	 * plan (udt_rw_plan.c): its entries, read as they are committed
	 * (udt_rw_plan_win()) instead of copied into ro_win, 48 bytes a
	 * window, seven pages of scratch for a libc, a fault each at every
	 * start; and the segment's size their checks need.  NULL: ro_win.
	 */
	const uint8_t	*ro_wplan;
	size_t		ro_wmemsz;
	uintptr_t	*ro_trap;		/* sites to trap (udt_rw_trap.c) */
	size_t		ro_ntrap;
	/*
	 * The first few sites to trap and segments with patches are held
	 * here, in the pass's frame, the rest in the scratch (ro_trapbig,
	 * ro_segbig), moved there when these are full: a start with
	 * plans touches the scratch for neither, two pages, a fault each.
	 */
#define UDT_RW_NTRAP0	32
#define UDT_RW_NSEG0	8
	uintptr_t	ro_trap0[UDT_RW_NTRAP0];
	uintptr_t	*ro_trapbig;
	int		ro_memfd;		/* /proc/self/mem */
	struct udt_rw_patch *ro_patch;		/* staged, see above */
	size_t		ro_npatch, ro_maxpatch;
	struct udt_rw_seg *ro_seg;
	size_t		ro_nseg, ro_maxseg;
	struct udt_rw_seg ro_seg0[UDT_RW_NSEG0];
	struct udt_rw_seg *ro_segbig;
	size_t		ro_maxsegbig;
	struct udt_rw_pool ro_pool[UDT_RW_MAXPOOL];
	size_t		ro_npool;
	uintptr_t	ro_brklo, ro_brkhi;	/* the loader's text, when
						   r_brk's hook is staged */
	int		ro_indirect;		/* last decode: see there */
	const uintptr_t	(*ro_want)[2];		/* only objects in these */
	size_t		ro_nwant;
	int		ro_plan;		/* the plan cache is on */
	int		ro_csfail;		/* Capstone could not open */
	int		ro_decoded;		/* the scratch was used */
	void		*ro_csmem;		/* its memory (udt_rw_cs.c) */
	size_t		ro_nobj;		/* objects seen: the first is
						   the program */
	/* The object's fixed region, when it has one (ro_fixlen > 0). */
	uint8_t		*ro_fix;
	size_t		ro_fixlen, ro_fixused;
	struct udt_rw_img *ro_fiximg;		/* its image, or NULL */
	struct udt_rw_img ro_img[UDT_RW_MAXIMG];
	size_t		ro_nimg;
	int		ro_noimg;		/* images off for this pass */
	long		ro_pagemap;		/* its fd + 1, or 0 */
};

/* Counts for USERDT_REWRITE=debug, and what is left to dispatch [w]. */
extern size_t	udt_rw_nsys, udt_rw_nwin, udt_rw_ndone, udt_rw_ntrapped;
extern size_t	udt_rw_nleft;
extern uintptr_t udt_rw_brkat;		/* [I] r_brk, if hooked */

/* udt_rw.c */
void	*udt_rw_alloc(size_t);
void	 udt_rw_tell(const char *, const char *, uintptr_t);
void	 udt_rw_say(const char *, uintptr_t);
void	 udt_rw_trap(struct udt_rw_obj *, uintptr_t, const char *);
int	 udt_rw_trap_room(struct udt_rw_obj *);
int	 udt_rw_near(struct udt_rw_obj *, long, uintptr_t, uintptr_t);
void	 udt_rw_far(struct udt_rw_obj *, struct udt_rw_win *, size_t);
/* A pass's dl_iterate_phdr() callback (udt_rw_pass.c): one object. */
int	 udt_rw_object(struct dl_phdr_info *, size_t, void *);

/* udt_rw_eh.c: .eh_frame_hdr and .eh_frame as the rewriter reads them. */
int	 udt_rw_encsize(uint8_t);
int64_t	 udt_rw_read(const uint8_t *, uint8_t);
int	 udt_rw_fde(const struct udt_rw_obj *, size_t, uintptr_t *,
	    uintptr_t *, int *);
long	 udt_rw_find(const struct udt_rw_obj *, uintptr_t);

/* udt_rw_emit.c */
size_t	 udt_rw_commit(struct udt_rw_obj *);
int	 udt_rw_segment(struct udt_rw_obj *, struct dl_phdr_info *, int);
void	 udt_rw_flush(struct udt_rw_obj *);
int	 udt_rw_seal(struct udt_rw_obj *);
void	 udt_rw_patch_bytes(const struct udt_rw_patch *,
	    uint8_t [UDT_RW_PATCHMAX]);
int	 udt_rw_hook(struct udt_rw_obj *, uintptr_t);
int	 udt_rw_hook_stage(struct udt_rw_obj *, uintptr_t);
int	 udt_rw_tramp_publish(const uintptr_t (*)[2], size_t);

/*
 * udt_rw_image.c: images of patched objects (USERDT_IMAGES=0 turns them
 * off).  udt_rw_image_seg(): an object's only code segment, its windows
 * and traps known, before anything of it is staged: its region fixed,
 * and its image's mapped if there is a good one.  udt_rw_image_text():
 * from udt_rw_flush(), the region sealed: the image's text mapped over
 * the object's if its patches are the ones staged (0), else -1.
 * udt_rw_image_save(): from udt_rw_flush(), the patches written.
 * udt_rw_image_land(): n bytes of code b for at in a region: stored, or
 * where an image put them, compared (and mended if they differ).
 */
#define UDT_RW_IMAGE_ENV	"USERDT_IMAGES"
extern size_t	udt_rw_img_used, udt_rw_img_saved;
extern int	udt_rw_img_traced;	/* TracerPid != 0 at start [w] */
void	 udt_rw_image_seg(struct udt_rw_obj *, struct dl_phdr_info *, int);
int	 udt_rw_image_text(struct udt_rw_obj *, struct udt_rw_img *,
	    const struct udt_rw_patch *, size_t);
void	 udt_rw_image_save(struct udt_rw_obj *, struct udt_rw_img *,
	    const struct udt_rw_patch *, size_t);
void	 udt_rw_image_land(struct udt_rw_obj *, uint8_t *, const uint8_t *,
	    size_t);
void	 udt_rw_image_end(struct udt_rw_obj *);
uint8_t	*udt_rw_image_room(struct udt_rw_obj *, uintptr_t, uintptr_t, size_t);
int	 udt_rw_image_unshare(struct udt_rw_obj *, uint8_t *, size_t);
size_t	 udt_rw_image_maxpatch(size_t);

/*
 * udt_rw_plan.c: the rewrite-plan cache of the constructor's pass.
 * udt_rw_plan_open() before it, udt_rw_plan_close() after it (writes
 * what was decoded); for each object udt_rw_plan_apply() (0: its plan
 * applied, nothing to decode), else udt_rw_plan_begin(), then for each
 * segment decoded udt_rw_plan_seg() before its sites are committed
 * (the counts before it in c0: nsys, nwin, nleft), then
 * udt_rw_plan_end().  USERDT_PLAN_CACHE=0 turns it off, =debug says
 * on stderr what became of each object's plan.
 */
#define UDT_RW_PLAN_ENV		"USERDT_PLAN_CACHE"
#define UDT_RW_PLAN_BRKSEG	1	/* r_brk lies in the segment */
#define UDT_RW_PLAN_BRKHOOK	2	/* and was hooked */
extern size_t	udt_rw_plan_used, udt_rw_plan_refused;
void	 udt_rw_plan_open(struct udt_rw_obj *);
int	 udt_rw_plan_apply(struct udt_rw_obj *, struct dl_phdr_info *, int);
void	 udt_rw_plan_begin(struct udt_rw_obj *);
void	 udt_rw_plan_seg(struct udt_rw_obj *, struct dl_phdr_info *, int,
	    const size_t [3], int);
void	 udt_rw_plan_end(struct udt_rw_obj *, int, int, size_t);
void	 udt_rw_plan_close(struct udt_rw_obj *);
int	 udt_rw_plan_win(const struct udt_rw_obj *, size_t,
	    struct udt_rw_win *);

#endif /* UDT_RW_OBJ_H */
