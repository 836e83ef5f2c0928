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
 * The hook's filter (providers/syscall/preload/udt_filt.c) on tables
 * built here: what a program keeps and rejects, as dtd reads the
 * record (pid unknown in a vfork child, comm a reader would not see,
 * arguments past the call's count, a return's value and errno), and
 * that no table, however corrupt, makes it reject without a sane
 * program or read outside the table (AddressSanitizer watches that in
 * the sanitized build): random filter areas, every probe, every
 * context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <userdt/udt_filt.h>

#include "udt_preload.h"
#include "dtt.h"

static union {
	struct udt_tab	tab;
	unsigned char	bytes[UDT_TAB_SIZE];
} ft_mem;

static struct udt_ftab *
ft_area(void)
{
	return (struct udt_ftab *)(void *)(ft_mem.bytes + UDT_FILT_OFF);
}

static struct udt_fterm
ft_cmp(uint8_t op, uint8_t field, int64_t val, const char *comm)
{
	struct udt_fterm t;

	memset(&t, 0, sizeof(t));
	t.ft_op = op;
	t.ft_field = field;
	t.ft_val = val;
	if (comm != NULL)
		snprintf(t.ft_comm, sizeof(t.ft_comm), "%s", comm);
	return t;
}

/* Program slot for probe, as dtd writes it (seq 2). */
static void
ft_set(unsigned int probe, unsigned int slot, const struct udt_fterm *t,
    unsigned int n)
{
	struct udt_ftab *ft = ft_area();
	struct udt_fprog *fp = &ft->ft_prog[slot];

	ft->ft_magic = UDT_FILT_MAGIC;
	memset(fp, 0, sizeof(*fp));
	memcpy(fp->fp_terms, t, n * sizeof(*t));
	fp->fp_nterms = n;
	fp->fp_seq = 2;
	ft->ft_probe[probe] = UDT_FILT_ENTRY(slot, 2);
}

static struct udt_fctx
ft_ctx(int64_t pid, const char *comm, const long *args, int isret,
    int64_t rv, int64_t error)
{
	struct udt_fctx c;

	memset(&c, 0, sizeof(c));
	c.fc_pid = pid;
	c.fc_tid = pid;
	c.fc_comm = comm;
	c.fc_args = args;
	c.fc_nargs = 3;
	c.fc_isret = isret;
	c.fc_rv = rv;
	c.fc_error = error;
	return c;
}

static void
ft_semantics(void)
{
	long args[6] = { 7, 100, -1, 55, 66, 77 };
	struct udt_fterm p[5];
	struct udt_fctx c;

	ft_mem.tab.tb_magic = UDT_MAGIC;
	/* pid == 5 || (arg1 > 3 && comm == "ab") on entry probe 10 */
	p[0] = ft_cmp(UDT_FOP_EQ, UDT_FF_PID, 5, NULL);
	p[1] = ft_cmp(UDT_FOP_GT, UDT_FF_ARG0 + 1, 3, NULL);
	p[2] = ft_cmp(UDT_FOP_EQ, UDT_FF_COMM, 0, "ab");
	p[3] = ft_cmp(UDT_FOP_AND, 0, 0, NULL);
	p[4] = ft_cmp(UDT_FOP_OR, 0, 0, NULL);
	ft_set(10, 3, p, 5);
	c = ft_ctx(5, "zz", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 10, &c), "pid 5 kept");
	c = ft_ctx(6, "zz", args, 0, 0, 0);
	dtt_check(udt_filt_reject(&ft_mem.tab, 10, &c), "pid 6, zz rejected");
	c = ft_ctx(6, "ab", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 10, &c), "pid 6, ab kept");
	c = ft_ctx(0, "zz", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 10, &c),
	    "pid unknown (a vfork child): kept");
	c = ft_ctx(6, "", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 10, &c), "empty comm kept");
	c = ft_ctx(6, "a\\b", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 10, &c),
	    "a comm the reader sees escaped: kept");
	c = ft_ctx(6, "zz", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 11, &c), "probe 11: none");

	/* arguments past the call's count read 0, as dtd's record */
	p[0] = ft_cmp(UDT_FOP_EQ, UDT_FF_ARG0 + 4, 0, NULL);
	ft_set(12, 4, p, 1);
	c = ft_ctx(6, "zz", args, 0, 0, 0);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 12, &c), "arg4 of 3 is 0");
	/* an int argument: its low 32 bits, signed */
	p[0] = ft_cmp(UDT_FOP_EQ, UDT_FF_ARG0 + 2, -1, NULL);
	p[0].ft_flags = UDT_FF_INT32;
	args[2] = 0xffffffffL;
	ft_set(14, 5, p, 1);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 14, &c), "(int)arg2 == -1");

	/* a return: retval and errno */
	p[0] = ft_cmp(UDT_FOP_LT, UDT_FF_RETVAL, 0, NULL);
	p[1] = ft_cmp(UDT_FOP_EQ, UDT_FF_ERRNO, 9, NULL);
	p[2] = ft_cmp(UDT_FOP_AND, 0, 0, NULL);
	ft_set(13, 6, p, 3);
	c = ft_ctx(6, "zz", NULL, 1, -1, 9);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 13, &c), "EBADF kept");
	c = ft_ctx(6, "zz", NULL, 1, 0, 0);
	dtt_check(udt_filt_reject(&ft_mem.tab, 13, &c), "success rejected");

	/* being rewritten, or written for another: kept */
	ft_area()->ft_prog[6].fp_seq = 3;
	dtt_check(!udt_filt_reject(&ft_mem.tab, 13, &c), "odd seq: kept");
	ft_area()->ft_prog[6].fp_seq = 4;
	dtt_check(!udt_filt_reject(&ft_mem.tab, 13, &c),
	    "another program's seq: kept");
	/* the static zero table: no area */
	ft_mem.tab.tb_magic = 0;
	ft_area()->ft_prog[6].fp_seq = 2;
	dtt_check(!udt_filt_reject(&ft_mem.tab, 13, &c),
	    "a table without magic: kept");
	ft_mem.tab.tb_magic = UDT_MAGIC;
	dtt_check(udt_filt_reject(&ft_mem.tab, 13, &c), "and back");
	/* a stack left with two values, an unknown operator: kept */
	p[2] = ft_cmp(UDT_FOP_CONST, 0, 0, NULL);
	ft_set(15, 7, p, 3);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 15, &c), "two left: kept");
	p[0] = ft_cmp(77, UDT_FF_PID, 6, NULL);
	ft_set(16, 8, p, 1);
	dtt_check(!udt_filt_reject(&ft_mem.tab, 16, &c), "bad op: kept");
	p[0] = ft_cmp(UDT_FOP_CONST, 0, 0, NULL);
	ft_set(17, 9, p, 1);
	dtt_check(udt_filt_reject(&ft_mem.tab, 17, &c), "const 0 rejects");
}

/*
 * Corrupted areas: every probe's program rejects everything, then
 * random bytes of the area are overwritten.  The hook may reject only
 * where the entry it read names a program still intact (its seq, its
 * count, its one constant; other bytes mean nothing); it must never
 * crash or read outside the table; and most probes, untouched, still
 * reject.
 */
static void
ft_fuzz(void)
{
	static struct udt_ftab good;
	long args[6] = { 1, 2, 3, 4, 5, 6 };
	struct udt_fterm zero = ft_cmp(UDT_FOP_CONST, 0, 0, NULL);
	struct udt_fctx c[3];
	struct udt_ftab *ft = ft_area();
	unsigned int round, p, i, k, slot, bad = 0, rejected = 0;
	unsigned char *a = (unsigned char *)ft;
	size_t len = UDT_TAB_SIZE - UDT_FILT_OFF;
	uint32_t e;

	c[0] = ft_ctx(1, "a", args, 0, 0, 0);
	c[1] = ft_ctx(2, "b", NULL, 1, -1, 2);
	c[2] = ft_ctx(0, NULL, NULL, 0, 0, 0);
	for (p = 0; p < UDT_NPROBES_MAX; p++)
		ft_set(p, p % UDT_FILT_NPROG, &zero, 1);
	good = *ft;
	srandom(22);
	for (round = 0; round < 300; round++) {
		*ft = good;
		for (k = 0; k < 1 + round % 64; k++)
			a[(size_t)random() % len] = (unsigned char)random();
		for (p = 0; p < UDT_NPROBES_MAX + 8; p++)
			for (i = 0; i < 3; i++) {
				if (!udt_filt_reject(&ft_mem.tab, p, &c[i]))
					continue;
				rejected++;
				e = ft->ft_probe[p];
				slot = (e & 0xff) - 1;
				/* what the constant program consists of */
				if (p >= UDT_NPROBES_MAX ||
				    slot >= UDT_FILT_NPROG ||
				    (ft->ft_prog[slot].fp_seq & 0xffffff) != 2 ||
				    ft->ft_prog[slot].fp_nterms != 1 ||
				    ft->ft_prog[slot].fp_terms[0].ft_op !=
				    UDT_FOP_CONST ||
				    ft->ft_prog[slot].fp_terms[0].ft_val != 0)
					bad++;
			}
	}
	dtt_check(bad == 0, "corrupt tables: %u rejections, %u without an "
	    "intact program", rejected, bad);
	dtt_check(rejected > 300 * UDT_NPROBES_MAX,
	    "untouched programs still reject");
}

int
main(void)
{
	ft_semantics();
	ft_fuzz();
	return dtt_done();
}
