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
 * Filters at the source in traced processes (issue 22): part of the
 * private wire (udt_wire.h), in the enable table's memfd at
 * UDT_FILT_OFF.  For a syscall probe whose recording opens all pushed a
 * filter (DTIOCPRBFILTER), dtd writes the OR of their programs, as the
 * hook can evaluate them, and the hook evaluates it before it records:
 * an event it rejects is one every such open would reject, and is only
 * counted (rh_filt).  dtd still applies each open's own filter to what
 * comes.
 *
 * A program is dtvar.h's postfix form (DTF_OP_*, fields DTF_PID,
 * DTF_TID, DTF_COMM, DTF_RETVAL, DTF_ERRNO, DTF_ARG0 + n, flag
 * DTF_F_INT32), at most UDT_FILT_MAXTERMS terms, read as the record
 * dtd makes of the event would read: pid the process dtd stamps, tid
 * the one the hook writes, comm the one it writes (a comm the reader
 * would not see as written, empty or not printable ASCII, passes),
 * arguments past the call's count 0.  Programs are shared by the
 * probes that have the same (syscall:*:entry /pid == 42/ needs one).
 *
 * The hook trusts none of it to be sane: a bad index, an unknown
 * operator or field, a stack that under- or overflows, a count past
 * UDT_FILT_MAXTERMS all mean "record" (a table is read-only to the
 * tracee, but a corrupt one must not crash it).  Changes are seen
 * through fp_seq, a sequence lock: dtd makes it odd, writes the terms,
 * makes it even again; ft_probe[p] names a program and the fp_seq it
 * was written under, so a program rewritten for another probe in
 * between is never taken for this one's.  A hook that sees fp_seq odd,
 * moved, or not the one ft_probe[p] names records the event.
 *
 * Locks used to protect struct members in this file:
 *	[d]	written by dtd only, under its ingest lock
 *	[a]	atomic operations
 */
#ifndef USERDT_UDT_FILT_H
#define USERDT_UDT_FILT_H

#include <stdint.h>

#include "udt_wire.h"

#define UDT_FILT_OFF		4096	/* in the table memfd */
#define UDT_FILT_NPROG		16	/* programs at once */
#define UDT_FILT_MAXTERMS	24
#define UDT_FILT_MAGIC		0x75646666u	/* "udff" */

/* DTF_OP_* and DTF_* (dev/dt/dtvar.h), by value. */
#define UDT_FOP_EQ		1
#define UDT_FOP_NE		2
#define UDT_FOP_LT		3
#define UDT_FOP_LE		4
#define UDT_FOP_GT		5
#define UDT_FOP_GE		6
#define UDT_FOP_AND		7
#define UDT_FOP_OR		8
#define UDT_FOP_CONST		9
#define UDT_FF_PID		1
#define UDT_FF_TID		2
#define UDT_FF_COMM		5
#define UDT_FF_RETVAL		6
#define UDT_FF_ERRNO		7
#define UDT_FF_ARG0		16
#define UDT_FF_INT32		0x01

struct udt_fterm {
	uint8_t		ft_op;		/* UDT_FOP_* */
	uint8_t		ft_field;	/* UDT_FF_* */
	uint8_t		ft_flags;	/* UDT_FF_INT32 */
	uint8_t		ft_pad[5];
	int64_t		ft_val;		/* comparisons, UDT_FOP_CONST */
	char		ft_comm[UDT_COMMLEN];	/* UDT_FF_COMM, NUL-ended */
};

struct udt_fprog {
	uint32_t	fp_seq;		/* [d,a] odd while written */
	uint32_t	fp_nterms;	/* [d] */
	struct udt_fterm fp_terms[UDT_FILT_MAXTERMS];	/* [d] */
};

struct udt_ftab {
	uint32_t	ft_magic;	/* [d] UDT_FILT_MAGIC */
	uint32_t	ft_pad;
	/*
	 * [d,a] 0: no filter for probe p (record every event); else
	 * program (e & 0xff) - 1, written under fp_seq e >> 8 (its low 24
	 * bits).
	 */
	uint32_t	ft_probe[UDT_NPROBES_MAX];
	struct udt_fprog ft_prog[UDT_FILT_NPROG];
};

#define UDT_FILT_ENTRY(slot, seq)	\
	((uint32_t)((slot) + 1) | ((uint32_t)(seq) & 0xffffff) << 8)

_Static_assert(sizeof(struct udt_fterm) == 32, "udt_fterm size");
_Static_assert(sizeof(struct udt_tab) <= UDT_FILT_OFF, "udt_tab before");
_Static_assert(UDT_FILT_OFF + sizeof(struct udt_ftab) <= UDT_TAB_SIZE,
    "udt_ftab size");

#endif /* USERDT_UDT_FILT_H */
