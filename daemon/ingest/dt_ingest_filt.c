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
 * The filters in the tracees' tables (userdt/udt_filt.h): dtd's master
 * copy, the programs shared by the probes that have the same, and their
 * writing into every attached tracee's table, sequence lock first.  A
 * program dtd hands out is checked as DTIOCPRBFILTER's are: operators,
 * fields and a stack that leaves one value, so a hook only ever meets a
 * sane one from us (and copes with any other).
 *
 * Locks: [L] the ingest lock (dti_tabs_apply()), for the master and
 * every table.
 */
#include <string.h>

#include <userdt/udt_filt.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"

static struct udt_ftab	 dtf_master;			/* [L] */
static unsigned int	 dtf_refs[UDT_FILT_NPROG];	/* [L] probes using */

/* The filter area of a tracee's table. */
static struct udt_ftab *
dtf_area(struct udt_tab *tab)
{
	return (struct udt_ftab *)(void *)((char *)tab + UDT_FILT_OFF);
}

/* Whether prog is one a hook evaluates as meant. */
static bool
dtf_valid(const struct udt_fprog *prog)
{
	const struct udt_fterm *t;
	unsigned int i, sp = 0;

	if (prog->fp_nterms == 0 || prog->fp_nterms > UDT_FILT_MAXTERMS)
		return false;
	for (i = 0; i < prog->fp_nterms; i++) {
		t = &prog->fp_terms[i];
		if (t->ft_op == UDT_FOP_AND || t->ft_op == UDT_FOP_OR) {
			if (sp < 2)
				return false;
			sp--;
			continue;
		}
		if (t->ft_op == UDT_FOP_CONST) {
			sp++;
			continue;
		}
		if (t->ft_op < UDT_FOP_EQ || t->ft_op > UDT_FOP_GE ||
		    (t->ft_flags & ~UDT_FF_INT32) != 0)
			return false;
		switch (t->ft_field) {
		case UDT_FF_COMM:
			if (t->ft_op != UDT_FOP_EQ && t->ft_op != UDT_FOP_NE)
				return false;
			if (memchr(t->ft_comm, '\0', UDT_COMMLEN) == NULL)
				return false;
			break;
		case UDT_FF_PID:
		case UDT_FF_TID:
		case UDT_FF_RETVAL:
		case UDT_FF_ERRNO:
			break;
		default:
			if (t->ft_field < UDT_FF_ARG0 ||
			    t->ft_field >= UDT_FF_ARG0 + UDT_NARGS)
				return false;
		}
		sp++;
	}
	return sp == 1;
}

/* What one change does to a table (or the master, with ft NULL). */
struct dtf_change {
	unsigned int		 dc_probe;
	int			 dc_slot;	/* -1: none */
	bool			 dc_write;	/* write dc_prog into dc_slot */
	const struct udt_fprog	*dc_prog;
	uint32_t		 dc_seq;	/* the slot's, once written */
};

static void
dtf_apply(struct udt_tab *tab, void *arg)
{
	struct dtf_change *dc = arg;
	struct udt_ftab *ft = tab != NULL ? dtf_area(tab) : &dtf_master;
	struct udt_fprog *fp;
	uint32_t seq;

	if (ft->ft_magic != UDT_FILT_MAGIC)
		ft->ft_magic = UDT_FILT_MAGIC;
	if (dc->dc_slot >= 0 && dc->dc_write) {
		fp = &ft->ft_prog[dc->dc_slot];
		/* The master's seq leads; every table follows it. */
		seq = tab != NULL ? dc->dc_seq - 2 :
		    __atomic_load_n(&fp->fp_seq, __ATOMIC_RELAXED);
		__atomic_store_n(&fp->fp_seq, seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		fp->fp_nterms = dc->dc_prog->fp_nterms;
		memcpy(fp->fp_terms, dc->dc_prog->fp_terms,
		    sizeof(fp->fp_terms));
		__atomic_store_n(&fp->fp_seq, seq + 2, __ATOMIC_RELEASE);
		if (tab == NULL)
			dc->dc_seq = seq + 2;
	}
	__atomic_store_n(&ft->ft_probe[dc->dc_probe], dc->dc_slot < 0 ? 0 :
	    UDT_FILT_ENTRY(dc->dc_slot, dc->dc_seq), __ATOMIC_RELEASE);
}

/* The slot holding prog already, else a free one to write, else -1. [L] */
static int
dtf_slot(const struct udt_fprog *prog, bool *write)
{
	int i, free_slot = -1;

	for (i = 0; i < UDT_FILT_NPROG; i++) {
		if (dtf_refs[i] == 0) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (dtf_master.ft_prog[i].fp_nterms == prog->fp_nterms &&
		    memcmp(dtf_master.ft_prog[i].fp_terms, prog->fp_terms,
		    prog->fp_nterms * sizeof(prog->fp_terms[0])) == 0) {
			*write = false;
			return i;
		}
	}
	*write = true;
	return free_slot;
}

/* The body of dt_ingest_filter(), under [L]. */
static void
dtf_set(struct udt_tab *tab, void *arg)
{
	struct dtf_change *dc = arg;
	uint32_t old;

	if (tab != NULL) {
		dtf_apply(tab, dc);
		return;
	}
	old = dtf_master.ft_probe[dc->dc_probe];
	if (dc->dc_prog != NULL && dtf_valid(dc->dc_prog))
		dc->dc_slot = dtf_slot(dc->dc_prog, &dc->dc_write);
	else
		dc->dc_slot = -1;
	if (dc->dc_slot >= 0 && !dc->dc_write)
		dc->dc_seq = dtf_master.ft_prog[dc->dc_slot].fp_seq;
	/* The old program's reference goes after: it may be the same. */
	if (dc->dc_slot >= 0)
		dtf_refs[dc->dc_slot]++;
	if (old != 0 && (old & 0xff) - 1 < UDT_FILT_NPROG)
		dtf_refs[(old & 0xff) - 1]--;
	dtf_apply(NULL, dc);
}

void
dt_ingest_filter(unsigned int p, const struct udt_fprog *prog)
{
	struct dtf_change dc;

	if (p >= DT_SYS_NPROBES)
		return;
	memset(&dc, 0, sizeof(dc));
	dc.dc_probe = p;
	dc.dc_prog = prog;
	dc.dc_slot = -1;
	dti_tabs_apply(dtf_set, &dc);
}

void
dti_filt_copy(struct udt_tab *tab)
{
	dti_copy_fresh(dtf_area(tab), &dtf_master, sizeof(dtf_master));
}
