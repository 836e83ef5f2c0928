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
 * The rewrite-plan cache's file (udt_rw_plan.c applies plans,
 * udt_rw_plan_rec.c records them, udt_rw_plan_file.c reads and writes
 * them): its layout, and the pass's state they share.  Only the
 * constructor's pass uses them [w].
 */
#ifndef UDT_RW_PLAN_H
#define UDT_RW_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "udt_rw_obj.h"

#define UDT_PLAN_VERSION	4	/* 2: the key's ctime; 3: the hash; 4: CRC */
#define UDT_PLAN_MAX		(512 * 1024)	/* bytes of a plan file */
/*
 * An object with no more read-only bytes than this is named by their hash,
 * a larger one by its file's stat.  Hashing is bound by memory, about
 * 7 GB/s here (a page-cache page is in no cache of this CPU): the
 * loader's 190 kB took 28 us of every start, a stat 1-2.
 */
#define UDT_PLAN_SMALL		(64 * 1024)	/* hashed, not stat'd */
#define UDT_PLAN_WINB		32		/* bytes of a window kept */
#define UDT_PLAN_MAXOBJ		256		/* objects of a plan */
/*
 * Executable segments of an object's entry: what the applying pass keeps
 * of the checking pass's reads (udt_plan_fit()) is on the stack.  An
 * object with more is decoded at every start, not recorded.
 */
#define UDT_PLAN_MAXSEG		8

#define UDT_PLAN_STAT		1	/* key: the file's stat */
#define UDT_PLAN_HASH		2	/* key: its read-only bytes */

/*
 * What names an object: a plan is for this object and no other.  A
 * file's ctime is in its key because its mtime alone can be set back
 * (utimensat) after its bytes are changed in place; the ctime cannot.
 */
struct udt_plan_key {
	uint32_t	pk_kind;
	uint32_t	pk_bidlen;
	uint8_t		pk_bid[32];
	uint64_t	pk_size, pk_mtime, pk_mtimens, pk_ino, pk_dev;
	uint64_t	pk_ctime, pk_ctimens;
	uint64_t	pk_hash;
};

struct udt_plan_hdr {
	char		ph_magic[8];
	uint32_t	ph_version, ph_nobj;
	uint64_t	ph_len;
	uint64_t	ph_sum;
	uint32_t	ph_selflen, ph_pad;
	uint8_t		ph_self[32];
};

/* An object: po_nseg segments follow, po_len bytes in all. */
struct udt_plan_obj {
	struct udt_plan_key po_key;
	uint32_t	po_len, po_nseg;
	uint32_t	po_unknown, po_pad;	/* no unwind table */
	uint64_t	po_dnleft;		/* then: left to dispatch */
};

/* An executable segment: its windows, then its trapped sites. */
#define UDT_PLAN_BRKSEG		UDT_RW_PLAN_BRKSEG
#define UDT_PLAN_BRKHOOK	UDT_RW_PLAN_BRKHOOK
struct udt_plan_seg {
	uint64_t	ps_lo, ps_hi;		/* from the load address */
	uint32_t	ps_nwin, ps_ntrap;
	uint64_t	ps_dnsys, ps_dnwin, ps_dnleft;
	uint32_t	ps_flags, ps_pad;
	uint64_t	ps_brk;			/* from the load address */
	uint8_t		ps_brkb[8];
};

struct udt_plan_win {
	uint64_t	pw_start, pw_sys, pw_end;	/* from the segment */
	int64_t		pw_nr;
	uint32_t	pw_bad, pw_pad;
	uint8_t		pw_b[UDT_PLAN_WINB];
};

struct udt_plan_trap {
	uint64_t	pt_at;				/* from the segment */
	uint8_t		pt_b[8];
};

/* The pass's cache [w]. */
struct udt_plan_state {
	int		pl_debug;		/* USERDT_PLAN_CACHE=debug */
	uint32_t	pl_euid;
	uint8_t		pl_self[32];
	uint32_t	pl_selflen;
	int		pl_xdg;			/* the base is XDG_CACHE_HOME */
	char		pl_name[40];
	size_t		pl_inlen;		/* a valid plan read, or 0 */
	size_t		pl_outlen, pl_nobj, pl_nnew;
	size_t		pl_cur;			/* the entry being recorded */
	int		pl_rec;			/* recording it */
	struct udt_plan_key pl_key;		/* the object's, if pl_keyok */
	int		pl_keyok;
	size_t		pl_nused;
	/* The launcher's judged cache mount (UDT_CACHEFS_ENV), or 0. */
	uint64_t	pl_cachefs;
	/*
	 * Last, after the scalars: of each of these a start touches the
	 * first few dozen bytes, so what it touches of the state lies
	 * within some 1.5 kB, not over three pages.
	 */
	char		pl_dir[512];		/* .../userdt/plans */
	char		pl_base[512];		/* its owner's: HOME or XDG */
	/*
	 * The entries of udt_plan_in used (offset, length): copied into
	 * the plan written only if one is written, which most starts do
	 * not, so they cost no copy and no page.  32 bits: within
	 * UDT_PLAN_MAX, and half the bss's room.
	 */
	uint32_t	pl_used[UDT_PLAN_MAXOBJ][2];
};
extern struct udt_plan_state udt_plan;

extern uint8_t	*udt_plan_in;			/* the plan read, mapped */
extern uint8_t	udt_plan_out[UDT_PLAN_MAX];	/* the plan to write */

void	 udt_plan_say(const char *, const char *, const char *);
/*
 * "DIR/.tmp.HEX" into tmp (max bytes), HEX the time stamp counter's: a
 * name no other writer of the caches has, to create O_EXCL and rename.
 * 0, or -1 when it does not fit.  No libc.
 */
int	 udt_plan_tmpname(char *tmp, size_t max, const char *dir);
/*
 * "userdt: WHAT PROG: a b c" on stderr, by a raw write (NULL parts left
 * out): the caches' debug lines (USERDT_PLAN_CACHE=debug,
 * USERDT_IMAGES=debug).  Any thread, no lock, no libc stdio.
 */
void	 udt_rw_cache_say(const char *what, const char *a, const char *b,
	    const char *c);
/*
 * Whether the cache file fd, on device dev, is on a network or FUSE file
 * system (or cannot be told), where a file mapped may go from under the
 * mapping (udt_rw_image.c): 1, or 0 (remembered for dev).  mnt is its
 * mount's unique id if statx said it (else 0): the launcher's judged one
 * needs no look.  The constructor's pass.
 */
int	 udt_rw_fs_remote(long fd, uint64_t dev, uint64_t mnt);
uint64_t udt_plan_hash(uint64_t, const void *, size_t);
/* Which step udt_plan_hash() takes here, to seed the plan's name. */
uint64_t udt_plan_kind(void);
void	 udt_plan_read(const char *);
int	 udt_plan_mkdirs(const char *);
void	 udt_plan_write(void);

#endif /* UDT_RW_PLAN_H */
