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
 * The hook's filter (userdt/udt_filt.h): before it records an event, a
 * hook evaluates the program dtd wrote for the probe in the table, and
 * an event it rejects is only counted.  Runs where hooks run (signal
 * handlers, fork children, threads starting and ending): no lock, no
 * allocation, no recursion, no system call, at most UDT_FILT_MAXTERMS
 * steps, and every byte of the table read as possibly corrupt: whatever
 * is not a sane program, or is being rewritten, keeps the event.
 */
#include <stddef.h>
#include <stdint.h>

#include <userdt/udt_filt.h>

#include "udt_preload.h"

/* dtd's comm as a reader would see it, as dt_probe.c tells. */
static int
udt_filt_plain(const char *comm)
{
	unsigned int i;

	if (comm == NULL || comm[0] == '\0')
		return 0;
	for (i = 0; i < UDT_COMMLEN && comm[i] != '\0'; i++)
		if (comm[i] < 0x20 || comm[i] > 0x7e || comm[i] == '\\')
			return 0;
	return 1;
}

/* One comparison; 1 when the event passes it, or it cannot tell. */
static int
udt_filt_cmp(const struct udt_fterm *t, const struct udt_fctx *c)
{
	uint8_t op = __atomic_load_n(&t->ft_op, __ATOMIC_RELAXED);
	uint8_t field = __atomic_load_n(&t->ft_field, __ATOMIC_RELAXED);
	int64_t val = __atomic_load_n(&t->ft_val, __ATOMIC_RELAXED), v;
	unsigned int i, n;
	int eq;

	switch (field) {
	case UDT_FF_PID:
		if (c->fc_pid <= 0)
			return 1;
		v = c->fc_pid;
		break;
	case UDT_FF_TID:
		v = c->fc_tid;
		break;
	case UDT_FF_COMM:
		if (!udt_filt_plain(c->fc_comm))
			return 1;
		eq = 1;
		for (i = 0; i < UDT_COMMLEN; i++) {
			char a = c->fc_comm[i], b = __atomic_load_n(
			    &t->ft_comm[i], __ATOMIC_RELAXED);

			if (a != b) {
				eq = 0;
				break;
			}
			if (a == '\0')
				break;
		}
		if (op == UDT_FOP_EQ)
			return eq;
		if (op == UDT_FOP_NE)
			return !eq;
		return 1;
	case UDT_FF_RETVAL:
		if (!c->fc_isret)
			return 1;
		v = c->fc_rv;
		break;
	case UDT_FF_ERRNO:
		if (!c->fc_isret)
			return 1;
		v = c->fc_error;
		break;
	default:
		n = (unsigned int)field - UDT_FF_ARG0;
		if (c->fc_isret || field < UDT_FF_ARG0 || n >= UDT_NARGS ||
		    c->fc_args == NULL)
			return 1;
		/* dtd reads 0 past the call's count (dt_ingest_emit()) */
		v = n < c->fc_nargs ? c->fc_args[n] : 0;
		break;
	}
	if (__atomic_load_n(&t->ft_flags, __ATOMIC_RELAXED) & UDT_FF_INT32)
		v = (int32_t)(uint32_t)(uint64_t)v;
	switch (op) {
	case UDT_FOP_EQ:	return v == val;
	case UDT_FOP_NE:	return v != val;
	case UDT_FOP_LT:	return v < val;
	case UDT_FOP_LE:	return v <= val;
	case UDT_FOP_GT:	return v > val;
	case UDT_FOP_GE:	return v >= val;
	}
	return 1;
}

/* The program's verdict: 1 keep (or cannot tell), 0 reject. */
static int
udt_filt_run(const struct udt_fprog *fp, const struct udt_fctx *c)
{
	const struct udt_fterm *t;
	uint32_t n = __atomic_load_n(&fp->fp_nterms, __ATOMIC_RELAXED), i;
	uint64_t stack = 0;
	unsigned int sp = 0;
	int a, b;

	if (n == 0 || n > UDT_FILT_MAXTERMS)
		return 1;
	for (i = 0; i < n; i++) {
		t = &fp->fp_terms[i];
		switch (__atomic_load_n(&t->ft_op, __ATOMIC_RELAXED)) {
		case UDT_FOP_AND:
		case UDT_FOP_OR:
			if (sp < 2)
				return 1;
			a = (int)(stack >> (sp - 1) & 1);
			b = (int)(stack >> (sp - 2) & 1);
			sp -= 2;
			a = __atomic_load_n(&t->ft_op, __ATOMIC_RELAXED) ==
			    UDT_FOP_AND ? a && b : a || b;
			break;
		case UDT_FOP_CONST:
			a = __atomic_load_n(&t->ft_val, __ATOMIC_RELAXED) != 0;
			break;
		default:
			a = udt_filt_cmp(t, c);
			break;
		}
		if (sp >= 63)
			return 1;
		stack = (stack & ~(1ULL << sp)) | ((uint64_t)(a != 0) << sp);
		sp++;
	}
	return sp == 1 ? (int)(stack & 1) : 1;
}

int
udt_filt_on(const struct udt_tab *tab, unsigned int probe)
{
	const struct udt_ftab *ft;

	if (__atomic_load_n(&tab->tb_magic, __ATOMIC_RELAXED) != UDT_MAGIC ||
	    probe >= UDT_NPROBES_MAX)
		return 0;
	ft = (const struct udt_ftab *)(const void *)((const char *)tab +
	    UDT_FILT_OFF);
	return __atomic_load_n(&ft->ft_probe[probe], __ATOMIC_RELAXED) != 0;
}

int
udt_filt_reject(const struct udt_tab *tab, unsigned int probe,
    const struct udt_fctx *c)
{
	const struct udt_ftab *ft;
	const struct udt_fprog *fp;
	uint32_t e, seq, slot;
	int keep;

	/* the static zero table, a retired one: no filter area */
	if (__atomic_load_n(&tab->tb_magic, __ATOMIC_RELAXED) != UDT_MAGIC ||
	    probe >= UDT_NPROBES_MAX)
		return 0;
	ft = (const struct udt_ftab *)(const void *)((const char *)tab +
	    UDT_FILT_OFF);
	if ((e = __atomic_load_n(&ft->ft_probe[probe], __ATOMIC_ACQUIRE)) ==
	    0 || (slot = (e & 0xff) - 1) >= UDT_FILT_NPROG)
		return 0;
	fp = &ft->ft_prog[slot];
	seq = __atomic_load_n(&fp->fp_seq, __ATOMIC_ACQUIRE);
	if ((seq & 1) || (seq & 0xffffff) != e >> 8)
		return 0;
	keep = udt_filt_run(fp, c);
	/* Rewritten meanwhile: what was read may be anything. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&fp->fp_seq, __ATOMIC_RELAXED) != seq)
		return 0;
	return !keep;
}
