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
 * The loader's calls, handed from the launcher to the preload library.
 *
 * The dynamic loader runs before the library: what it does (opening
 * ld.so.cache and the libraries, reading their headers, mmap, mprotect,
 * arch_prctl...) no hook can see.  The launcher (dtrun, btrace -c,
 * udt_ltrace.c) traces the new image with ptrace from its execve until
 * the library's constructor makes the handover call below, keeping each
 * call it saw as a udt_lrec; then it writes them into the library's
 * memory and detaches.  The library writes those the enable table asks
 * for into its ring once it is attached (udt_loader.c), as its own
 * records: dtd stamps the pid from the connection as for every other.
 *
 * The handover is prctl(UDT_LREC_PRCTL, buf, len) made twice by the
 * constructor, and only in the process the launcher named in
 * UDT_LREC_ENV:
 *	buf 0: the launcher makes the call return the bytes it needs (the
 *	       kernel's answer to an unknown option, -EINVAL, when no
 *	       launcher is there)
 *	buf:   the launcher fills buf (a udt_lbuf) and detaches; the call
 *	       then fails with EINVAL as it always does
 * Both sides come from the same build: no versioning beyond the magic.
 */
#ifndef UDT_LREC_H
#define UDT_LREC_H

#include <stdint.h>

#include <userdt/udt_wire.h>

/* The pid of the process whose loader the launcher traces. */
#define UDT_LREC_ENV		"USERDT_LAUNCH"

/*
 * Images exec'd later in the traced tree.  The launcher's tracer stays
 * on as a helper as long as the launched process lives, listening on an
 * abstract Unix socket that UDT_LFOLLOW_ENV names to the whole tree as
 * "PID:NAME:Y": the helper's pid (checked against the socket's peer),
 * the socket's name after UDT_LFOLLOW_SOCK (16 hex digits), and "1"
 * when Yama wants the tracee to name its tracer (PR_SET_PTRACER).  A
 * process about to exec while a probe of the syscall provider is on
 * connects, sends its tid and its wishes (two ints; UDT_LFOLLOW_WANT)
 * and waits for the answer (an int: 0, the helper follows it; else an
 * errno).  With no such probe on it does not ask: nothing could record
 * the loader's calls, and following them costs two ptrace stops each
 * (issue 20); a helper still answers a library that asks wanting
 * nothing (UDT_LT_CHECK: checked, then let go at its exec).  An enable
 * that lands between the exec and the new image's attach misses that
 * loader's calls, as it misses any call made before it.  The helper
 * seizes the asker and checks its exec (set-id, static) as for the
 * first image; when the new image's environment still names
 * both the library and the helper, it renames that variable in place,
 * on the new stack, to UDT_LFOLLOW_MARK (same length): the new image's
 * library then makes the handover below and puts the name back, so
 * the program sees the environment it was given.
 */
#define UDT_LFOLLOW_ENV		"USERDT_LTRACER"
#define UDT_LFOLLOW_MARK	"USERDT_LFOLLOW"
#define UDT_LFOLLOW_SOCK	"userdt-lt."
#define UDT_LFOLLOW_HEX		16
#define UDT_LFOLLOW_WANT	0x1	/* its loader's calls may be recorded */

/* No prctl option Linux knows: "udtl". */
#define UDT_LREC_PRCTL		0x7564746c

#define UDT_LREC_MAGIC		0x6c726563u	/* "lrec" */

/*
 * A loader makes tens of calls, a few hundred with a long library path.
 * An image that makes this many without the handover is not loading the
 * library (it failed to load, or the image removed it from LD_PRELOAD):
 * the launcher lets it go rather than trace it for its whole life.
 */
#define UDT_LREC_MAX		16384

/* lr_flags */
#define UDT_LR_RET		0x01	/* a return: lr_args[0] the result */
#define UDT_LR_STR		0x02	/* lr_str holds the string arguments */

/* One call's entry or return, as the launcher saw it stop. */
struct udt_lrec {
	uint16_t	lr_idx;		/* systab index */
	uint8_t		lr_flags;	/* UDT_LR_* */
	uint8_t		lr_pad;
	int32_t		lr_tid;
	uint32_t	lr_cpu;		/* where the tracee last ran */
	int32_t		lr_error;	/* errno of a failed call, else 0 */
	int64_t		lr_sec;		/* CLOCK_REALTIME at the stop */
	int64_t		lr_nsec;
	int64_t		lr_args[UDT_NARGS];	/* entry: registers */
	char		lr_comm[UDT_COMMLEN];
	uint8_t		lr_str[UDT_STR_SIZE];	/* dtvar.h's string area */
};

struct udt_lbuf {
	uint32_t	lb_magic;	/* UDT_LREC_MAGIC */
	uint32_t	lb_count;	/* records that follow */
	struct udt_lrec	lb_rec[];
};

#endif /* UDT_LREC_H */
