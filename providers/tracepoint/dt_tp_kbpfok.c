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
 * Which filters the counting programs of dt_tp_kbpf.h can evaluate
 * exactly (dt_kbpf_filter_ok(), dt_kbpf_valfilter_ok()): the checks
 * alone, apart from the assembler (dt_tp_kbpfasm.c) that relies on
 * them.  No state.
 */
#include <string.h>

#include "dt_tp_kbpf.h"

/* As dt_comm_plain(): what a reader sees spelled as it is. */
static bool
kf_plain(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '\\')
			return false;
	return true;
}

/*
 * Whether the program takes f (dt_kbpf_filter_ok(), and with sys
 * dt_kbpf_valfilter_ok()'s more).
 */
static bool
kf_filter_ok(const struct dtioc_filter *f, bool comm, bool sys, bool vals)
{
	const struct dtioc_filter_term *t;
	unsigned int i;

	if (f == NULL)
		return true;
	for (i = 0; i < f->dtfl_nterms && i < DTF_MAXTERMS; i++) {
		t = &f->dtfl_terms[i];
		switch (t->dtft_op) {
		case DTF_OP_AND:
		case DTF_OP_OR:
		case DTF_OP_CONST:
			continue;
		case DTF_OP_EQ:
		case DTF_OP_NE:
			break;
		case DTF_OP_LT:
		case DTF_OP_LE:
		case DTF_OP_GT:
		case DTF_OP_GE:
			if (!sys || t->dtft_field == DTF_COMM)
				return false;
			break;
		default:
			return false;
		}
		/* the reader's own: 32 bits, or a name dtd is unsure of */
		if ((t->dtft_flags & ~(DTF_F_INT32 | DTF_F_UNSURE)) != 0)
			return false;
		switch (t->dtft_field) {
		case DTF_PID:
		case DTF_TID:
			continue;
		case DTF_CPU:
			if (!sys)
				return false;
			continue;
		case DTF_RETVAL:
		case DTF_ERRNO:
			if (!vals)
				return false;
			continue;
		case DTF_COMM:
			/*
			 * dtd lets an unrecorded or odd name through unsure;
			 * the idle task's is idleN to dtd, swapper/N to the
			 * program
			 */
			/*
			 * and a name /proc may spell longer than the kernel
			 * (DT_KBPF_TASK): 15 bytes or more, or a worker's
			 */
			if (!comm || !kf_plain(t->dtft_str,
			    strnlen(t->dtft_str, DTMAXCOMLEN)) ||
			    strnlen(t->dtft_str, DTMAXCOMLEN) >= 15 ||
			    strncmp(t->dtft_str, "kworker/", 8) == 0 ||
			    strncmp(t->dtft_str, "idle", 4) == 0 ||
			    strncmp(t->dtft_str, "swapper", 7) == 0)
				return false;
			continue;
		default:
			if (!vals || t->dtft_field < DTF_ARG0 ||
			    t->dtft_field >= DTF_ARG0 + DTMAXFUNCARGS)
				return false;
			continue;
		}
	}
	return f->dtfl_nterms <= DTF_MAXTERMS;
}

bool
dt_kbpf_filter_ok(const struct dtioc_filter *f, bool comm)
{
	return kf_filter_ok(f, comm, false, false);
}

bool
dt_kbpf_valfilter_ok(const struct dtioc_filter *f, bool comm, bool vals)
{
	return kf_filter_ok(f, comm, true, vals);
}
