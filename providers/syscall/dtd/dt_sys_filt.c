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
 * Filters at the source in the hooks (issue 22): what the opens that
 * record a syscall probe pushed (DTIOCPRBFILTER), folded by the core
 * (dt_fsrc_*()) into what a hook can compare exactly as dtd will, and
 * handed to the tracees' tables (userdt/udt_filt.h).  A hook knows the
 * pid dtd stamps, the tid and comm it writes, the arguments of an entry
 * (past the call's count dtd reads 0: not pushed) and the result and
 * errno of a return; not the CPU (dtd's is the ring's).
 *
 * Under the core's configuration lock (dtpv_start, dtpv_stop).
 */
#include <string.h>

#include <userdt/udt_filt.h>

#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_sys_filt.h"

/* dt_fsrc_can_fn for a syscall probe, arg its wire index. */
static bool
dt_sys_filt_can(const struct dt_probe *dtp, const struct dtioc_filter_term *t,
    void *arg)
{
	unsigned int p = (unsigned int)(uintptr_t)arg;
	bool isret = p & 1;

	switch (t->dtft_field) {
	case DTF_PID:
	case DTF_TID:
		return true;
	case DTF_COMM:
		/* a longer name is no comm's: != would need it whole */
		return (t->dtft_op == DTF_OP_EQ || t->dtft_op == DTF_OP_NE) &&
		    strnlen(t->dtft_str, DTMAXCOMLEN) < UDT_COMMLEN;
	case DTF_RETVAL:
	case DTF_ERRNO:
		return isret;
	case DTF_CPU:
		return false;
	}
	return !isret && t->dtft_field >= DTF_ARG0 &&
	    t->dtft_field - DTF_ARG0 < dtp->dtp_nargs &&
	    t->dtft_field - DTF_ARG0 < UDT_NARGS;
}

void
dt_sys_filt_update(unsigned int p, struct dt_probe *dtp,
    const struct dt_pcb *skip)
{
	struct dt_fsrc fs;
	struct udt_fprog prog;
	struct udt_fterm *ut;
	unsigned int i;

	dt_fsrc_init(&fs);
	dt_fsrc_or_probe(&fs, dtp, skip, 0, dt_sys_filt_can,
	    (void *)(uintptr_t)p);
	memset(&prog, 0, sizeof(prog));
	switch (fs.fs_kind) {
	case DT_FSRC_ALL:
		dt_ingest_filter(p, NULL);
		return;
	case DT_FSRC_NONE:
		prog.fp_nterms = 1;
		prog.fp_terms[0].ft_op = UDT_FOP_CONST;
		break;
	default:
		if (fs.fs_nterms > UDT_FILT_MAXTERMS) {
			dt_ingest_filter(p, NULL);
			return;
		}
		prog.fp_nterms = fs.fs_nterms;
		for (i = 0; i < fs.fs_nterms; i++) {
			ut = &prog.fp_terms[i];
			/* dtvar.h's numbers are the wire's */
			ut->ft_op = fs.fs_terms[i].dtft_op;
			ut->ft_field = fs.fs_terms[i].dtft_field;
			ut->ft_flags = fs.fs_terms[i].dtft_flags;
			ut->ft_val = fs.fs_terms[i].dtft_val;
			memcpy(ut->ft_comm, fs.fs_terms[i].dtft_str,
			    UDT_COMMLEN);
			ut->ft_comm[UDT_COMMLEN - 1] = '\0';
		}
		break;
	}
	dt_ingest_filter(p, &prog);
}
