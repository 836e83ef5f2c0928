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
 * A rewriting pass: the constructor's over every loaded object, or the
 * loader hook's over those a dlopen() mapped.  Apart from the proofs of
 * udt_rw.c because it owns what a pass holds from start to end: the
 * scratch every object's decoding borrows, the plan cache, and the one
 * moment the text changes and the tables that name it are published.
 */
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"
#include "udt_rw_cs.h"

/*
 * The pass's scratch, one mapping: its pages are touched only as far as
 * they are used.
 */
#define UDT_RW_MAXTGT	65536
#define UDT_RW_MAXARENA	(1 << 20)
#define UDT_RW_MAXPATCH	(4 * UDT_RW_MAXSITE)
#define UDT_RW_MAXSEG	1024
#define UDT_RW_MEMOSZ	(1 << 20)
/* Where the staged patches begin. */
#define UDT_RW_PATCHOFF	(UDT_RW_CSMEM +					\
	UDT_RW_MAXINSN * sizeof(struct udt_rw_insn) +			\
	UDT_RW_MAXTGT * sizeof(uintptr_t) + UDT_RW_MAXARENA * sizeof(uintptr_t) + \
	UDT_RW_MAXSITE * sizeof(struct udt_rw_win) +			\
	UDT_RW_MAXSITE * sizeof(uintptr_t))
#define UDT_RW_SCRATCH	(UDT_RW_PATCHOFF +				\
	UDT_RW_MAXPATCH * sizeof(struct udt_rw_patch) +			\
	UDT_RW_MAXSEG * sizeof(struct udt_rw_seg) + UDT_RW_MEMOSZ)

/*
 * In the library's bss: a pass that applies plans alone (udt_rw_plan.c)
 * touches a few of its pages and asks the kernel for none; one that
 * decoded gives back what it touched.  [w]
 */
static UDT_LBSS uint8_t	udt_rw_scratch[UDT_RW_SCRATCH]
    __attribute__((aligned(4096)));

/* The constructor's pass: the vDSO, put off to the end (below).  [w] */
struct udt_rw_later {
	struct udt_rw_obj	*rl_o;
	struct dl_phdr_info	 rl_vdso;
	int			 rl_have;
};

/*
 * The constructor's pass takes the vDSO last: by then the regions of
 * the objects with images are there (udt_rw_image.c), and the vDSO's few
 * trampolines fit in one's first page, which the process writes anyway,
 * instead of a region of their own (a mapping, a protection, a page
 * copied).  Its program headers are in its own mapping: kept as they
 * are, they stay valid.
 */
static int
udt_rw_pass_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct udt_rw_later *rl = arg;
	uintptr_t eh = (uintptr_t)getauxval(AT_SYSINFO_EHDR);

	if (rl->rl_o->ro_want == NULL && !rl->rl_have && eh != 0 &&
	    (uintptr_t)info->dlpi_phdr >= eh &&
	    (uintptr_t)info->dlpi_phdr < eh + 4096 &&
	    size >= sizeof(rl->rl_vdso)) {
		memcpy(&rl->rl_vdso, info, sizeof(rl->rl_vdso));
		rl->rl_have = 1;
		return 0;
	}
	return udt_rw_object(info, size, rl->rl_o);
}

size_t
udt_rw_pass(const uintptr_t (*want)[2], size_t nwant)
{
	struct udt_rw_obj o;
	struct udt_rw_later rl;
	size_t left = udt_rw_nleft;
	uint8_t *scr;

	memset(&o, 0, sizeof(o));
	o.ro_memfd = -1;
	o.ro_want = want;
	o.ro_nwant = nwant;
	scr = udt_rw_scratch;
	/* Largest alignment first. */
	o.ro_csmem = scr;
	scr += UDT_RW_CSMEM;
	o.ro_insn = (void *)scr;
	scr += UDT_RW_MAXINSN * sizeof(*o.ro_insn);
	o.ro_maxtgt = UDT_RW_MAXTGT;
	o.ro_tgt = (void *)scr;
	scr += o.ro_maxtgt * sizeof(*o.ro_tgt);
	o.ro_maxarena = UDT_RW_MAXARENA;
	o.ro_arena = (void *)scr;
	scr += o.ro_maxarena * sizeof(*o.ro_arena);
	o.ro_win = (void *)scr;
	scr += UDT_RW_MAXSITE * sizeof(*o.ro_win);
	o.ro_trap = o.ro_trap0;
	o.ro_trapbig = (void *)scr;
	scr += UDT_RW_MAXSITE * sizeof(*o.ro_trap);
	o.ro_maxpatch = want == NULL ?
	    udt_rw_image_maxpatch(UDT_RW_MAXPATCH) : UDT_RW_MAXPATCH;
	o.ro_patch = (void *)scr;	/* at UDT_RW_PATCHOFF */
	scr += o.ro_maxpatch * sizeof(*o.ro_patch);
	o.ro_maxsegbig = UDT_RW_MAXSEG;
	o.ro_segbig = (void *)scr;
	scr += o.ro_maxsegbig * sizeof(*o.ro_segbig);
	o.ro_seg = o.ro_seg0;
	o.ro_maxseg = UDT_RW_NSEG0;
	o.ro_memobuf = (void *)scr;
	o.ro_memomax = UDT_RW_MEMOSZ;
	/* The constructor's pass alone: later passes hold the loader's lock. */
	if (want == NULL && !udt_rw_debug)
		udt_rw_plan_open(&o);
	memset(&rl, 0, sizeof(rl));
	rl.rl_o = &o;
	dl_iterate_phdr(udt_rw_pass_object, &rl);
	if (rl.rl_have)
		(void)udt_rw_object(&rl.rl_vdso, sizeof(rl.rl_vdso), &o);
	if (o.ro_ci != NULL)
		udt_rw_cs_close(&o.ro_cs, o.ro_ci);
	/* The text changes only now, once, before the tables name it. */
	udt_rw_flush(&o);
	udt_rw_image_end(&o);
	if (udt_rw_tramp_publish(want, nwant) != 0 ||
	    udt_rw_trap_publish(want, nwant) != 0)
		left = (size_t)-1;
	udt_rw_untrap_late();
	if (left != (size_t)-1)
		left = udt_rw_nleft - left;
	udt_rw_plan_close(&o);
	if (o.ro_memfd >= 0)
		udt_sys1(SYS_close, o.ro_memfd);
	if (o.ro_decoded)
		(void)udt_sys3(SYS_madvise, udt_rw_scratch, UDT_RW_SCRATCH,
		    MADV_DONTNEED);
	return left;
}

void *
udt_rw_pass_spare(size_t n)
{
	if (n > UDT_RW_SCRATCH - UDT_RW_PATCHOFF)
		return NULL;
	return udt_rw_scratch + UDT_RW_PATCHOFF;
}

void
udt_rw_init(void)
{
	const char *env = getenv(UDT_RW_ENV);
	size_t left;
	long tracer;
	int nthr;

	if ((env != NULL && strcmp(env, "0") == 0) ||
	    udt_proc_status(&nthr, NULL, NULL, &tracer) != 0 || nthr != 1)
		return;
	udt_rw_debug = env != NULL && strcmp(env, "debug") == 0;
	/*
	 * gdb's or strace's: no int3 of ours they would take for theirs.
	 * The status just read says, without reading it again.
	 */
	udt_rw_tracer_seen(tracer);
	/* Its breakpoints may be in the text already: no image over it. */
	udt_rw_img_traced = tracer != 0;
	left = udt_rw_pass(NULL, 0);
	udt_rw_trap_done(left);
	if (udt_rw_debug) {
		char buf[200];
		int len = snprintf(buf, sizeof(buf), "userdt: %zu system call "
		    "instructions, %zu safe windows, %zu rewritten, %zu "
		    "trapped, %zu left to dispatch; dispatch %s%s\n",
		    udt_rw_nsys, udt_rw_nwin, udt_rw_ndone, udt_rw_ntrapped,
		    udt_rw_nleft, udt_rw_complete ? "not needed" : "needed",
		    udt_rw_brkat != 0 ? "; objects loaded later rewritten" :
		    "");

		udt_sys3(SYS_write, 2, buf, len);
	}
}
