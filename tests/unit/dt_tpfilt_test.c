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
 * A system call probe's arg0 == N and != N in ftrace's words
 * (dt_tp_filt.c's dt_tpf_sysnum(), through dt_tp_filt_expr()): N is
 * OpenBSD's number, the records' field id Linux's, so the filter is id
 * among the Linux numbers that stand for N.  A number one id makes, a
 * Linux-only one (SYSTAB_LINUX_ONLY + id), one no id makes, numbers
 * past the table and past what an id can be.  A wrong translation
 * would have the kernel's counters count other calls, or none.
 */
#include <sys/syscall.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_prov.h"
#include "dt_tp_filt.h"
#include "dt_tp_var.h"
#include "systab.h"

static int npass, nfail;

/* arg0 op v of a system call source, in ftrace's words, against want. */
static void
check(uint8_t op, int64_t v, const char *want)
{
	static struct dt_fsrc fs;
	static struct dt_tp_src src;
	char *got;

	memset(&fs, 0, sizeof(fs));
	fs.fs_kind = DT_FSRC_SOME;
	fs.fs_nterms = 1;
	fs.fs_terms[0].dtft_op = op;
	fs.fs_terms[0].dtft_field = DTF_ARG0;
	fs.fs_terms[0].dtft_val = v;
	memset(&src, 0, sizeof(src));
	src.tps_sysnum = true;
	got = dt_tp_filt_expr(&fs, &src);
	if (got != NULL && strcmp(got, want) == 0)
		npass++;
	else {
		nfail++;
		printf("FAIL arg0 %s %lld: \"%s\", want \"%s\"\n",
		    op == DTF_OP_EQ ? "==" : "!=", (long long)v,
		    got != NULL ? got : "(null)", want);
	}
	free(got);
}

/* The Linux numbers (ids) whose N is v, at most max: how many. */
static int
ids_of(int64_t v, long *ids, int max)
{
	const struct systab_ent *se;
	long id;
	int n = 0;

	for (id = 0; id < SYSTAB_LINUX_MAX; id++)
		if ((se = systab_by_linux(id)) != NULL ?
		    (int64_t)se->se_num == v : SYSTAB_LINUX_ONLY + id == v) {
			if (n < max)
				ids[n] = id;
			n++;
		}
	return n;
}

int
main(void)
{
	const struct systab_ent *se;
	char want[256];
	long ids[4], id, lonly = -1;
	int64_t v, none = -1, multi = -1;
	int n;

	/* getppid: OpenBSD's 39, one Linux number, this machine's */
	se = systab_by_linux(SYS_getppid);
	if (se == NULL || se->se_num != 39 || ids_of(39, ids, 4) != 1) {
		printf("FAIL getppid is not 39 alone in systab\n");
		return 1;
	}
	snprintf(want, sizeof(want), "(id == %d)", SYS_getppid);
	check(DTF_OP_EQ, 39, want);
	snprintf(want, sizeof(want), "(id != %d)", SYS_getppid);
	check(DTF_OP_NE, 39, want);

	/* a Linux call OpenBSD has not: 1024 + its number */
	for (id = 0; id < SYSTAB_LINUX_MAX && lonly == -1; id++)
		if (systab_by_linux(id) == NULL)
			lonly = id;
	if (lonly != -1) {
		snprintf(want, sizeof(want), "(id == %ld)", lonly);
		check(DTF_OP_EQ, SYSTAB_LINUX_ONLY + lonly, want);
		snprintf(want, sizeof(want), "(id != %ld)", lonly);
		check(DTF_OP_NE, SYSTAB_LINUX_ONLY + lonly, want);
	}
	/* a number of one mapped call made Linux-only: no id makes it */
	snprintf(want, sizeof(want), "(common_pid < 0)");
	check(DTF_OP_EQ, SYSTAB_LINUX_ONLY + SYS_getppid, want);
	check(DTF_OP_NE, SYSTAB_LINUX_ONLY + SYS_getppid,
	    "(common_pid >= 0)");

	/* an OpenBSD number no Linux call stands for: never, or always */
	for (v = 1; v < SYSTAB_LINUX_ONLY && none == -1; v++)
		if (ids_of(v, ids, 4) == 0)
			none = v;
	if (none != -1) {
		check(DTF_OP_EQ, none, "(common_pid < 0)");
		check(DTF_OP_NE, none, "(common_pid >= 0)");
	}
	check(DTF_OP_EQ, -1, "(common_pid < 0)");
	check(DTF_OP_NE, -1, "(common_pid >= 0)");

	/* one OpenBSD number that several Linux calls stand for, if any */
	for (v = 0; v < SYSTAB_LINUX_ONLY && multi == -1; v++)
		if (ids_of(v, ids, 4) >= 2)
			multi = v;
	if (multi != -1) {
		n = ids_of(multi, ids, 4);
		snprintf(want, sizeof(want), "(id == %ld || id == %ld%s",
		    ids[0], ids[1], n == 2 ? ")" : "");
		if (n == 2)
			check(DTF_OP_EQ, multi, want);
		snprintf(want, sizeof(want), "(id != %ld && id != %ld%s",
		    ids[0], ids[1], n == 2 ? ")" : "");
		if (n == 2)
			check(DTF_OP_NE, multi, want);
	} else
		printf("no OpenBSD number stands for two Linux calls\n");

	/* past the table: each number 1024 + id is that id's */
	snprintf(want, sizeof(want), "(id == %d)", SYSTAB_LINUX_MAX);
	check(DTF_OP_EQ, SYSTAB_LINUX_ONLY + SYSTAB_LINUX_MAX, want);
	snprintf(want, sizeof(want), "(id != %d)", SYSTAB_LINUX_MAX);
	check(DTF_OP_NE, SYSTAB_LINUX_ONLY + SYSTAB_LINUX_MAX, want);
	check(DTF_OP_EQ, SYSTAB_LINUX_ONLY + 100000, "(id == 100000)");
	snprintf(want, sizeof(want), "(id == %lld)", (long long)INT32_MAX);
	check(DTF_OP_EQ, SYSTAB_LINUX_ONLY + (int64_t)INT32_MAX, want);
	/* past what an id (an int) can be: no id makes it */
	check(DTF_OP_EQ, SYSTAB_LINUX_ONLY + (int64_t)INT32_MAX + 1,
	    "(common_pid < 0)");
	check(DTF_OP_NE, INT64_MAX, "(common_pid >= 0)");
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
