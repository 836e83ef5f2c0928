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
 * dt_fsrc_pid() (dt_fsrc.c): the process a pushed filter keeps alone, as
 * btrace -p builds it (pid == N, alone or ANDed after the rule's terms),
 * and the filters that do not (an OR, a pid under an OR, another
 * comparison of pid, no filter, a malformed program).  And
 * dt_fsrc_of_pcb_in(): a pid comparison read as the constant it is for
 * a source that sees one process, where dt_fsrc_of_pcb() is loose.
 */
#include <stdio.h>
#include <string.h>

#include "dt_prov.h"
#include "unit_check.h"


static struct dtioc_filter_term
cmp(uint8_t op, uint8_t field, int64_t val)
{
	struct dtioc_filter_term t;

	memset(&t, 0, sizeof(t));
	t.dtft_op = op;
	t.dtft_field = field;
	t.dtft_val = val;
	return t;
}

static struct dtioc_filter_term
op(uint8_t o)
{
	return cmp(o, 0, 0);
}

/* dt_fsrc_pid() of the program terms[n]. */
static pid_t
pid_of(const struct dtioc_filter_term *terms, uint32_t n)
{
	static struct dtioc_filter f;
	struct dt_pcb dp;

	memset(&f, 0, sizeof(f));
	memcpy(f.dtfl_terms, terms, n * sizeof(*terms));
	f.dtfl_nterms = n;
	memset(&dp, 0, sizeof(dp));
	dp.dp_filter = &f;
	return dt_fsrc_pid(&dp);
}

/* A source that compares anything but the pid. */
static bool
can_nopid(const struct dt_probe *dtp, const struct dtioc_filter_term *t,
    void *arg)
{
	(void)dtp;
	(void)arg;
	return t->dtft_field != DTF_PID;
}

/* dt_fsrc_of_pcb_in() of terms[n] in process in (0: dt_fsrc_of_pcb()). */
static void
fsrc_in(const struct dtioc_filter_term *terms, uint32_t n, pid_t in,
    struct dt_fsrc *fs)
{
	static struct dtioc_filter f;
	static struct dt_probe dtp;
	struct dt_pcb dp;

	memset(&f, 0, sizeof(f));
	memcpy(f.dtfl_terms, terms, n * sizeof(*terms));
	f.dtfl_nterms = n;
	memset(&dp, 0, sizeof(dp));
	dp.dp_filter = &f;
	dp.dp_dtp = &dtp;
	if (in == 0)
		dt_fsrc_of_pcb(fs, &dp, can_nopid, NULL);
	else
		dt_fsrc_of_pcb_in(fs, &dp, in, can_nopid, NULL);
}

static void
check_in(void)
{
	struct dtioc_filter_term t[5];
	static struct dt_fsrc fs;

	/* -p alone: every event of the process, exactly */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 42);
	fsrc_in(t, 1, 42, &fs);
	CHECK(fs.fs_kind == DT_FSRC_ALL && !fs.fs_loose);
	fsrc_in(t, 1, 0, &fs);
	CHECK(fs.fs_kind == DT_FSRC_ALL && fs.fs_loose);
	/* another process: none of its events */
	fsrc_in(t, 1, 43, &fs);
	CHECK(fs.fs_kind == DT_FSRC_NONE && !fs.fs_loose);
	/* a rule's filter and -p's: the rule's term alone */
	t[0] = cmp(DTF_OP_EQ, DTF_TID, 7);
	t[1] = cmp(DTF_OP_EQ, DTF_PID, 42);
	t[2] = op(DTF_OP_AND);
	fsrc_in(t, 3, 42, &fs);
	CHECK(fs.fs_kind == DT_FSRC_SOME && !fs.fs_loose &&
	    fs.fs_nterms == 1 && fs.fs_terms[0].dtft_field == DTF_TID);
	/* pid != 42 || tid == 7, in 42: the tid alone; in 43: all */
	t[0] = cmp(DTF_OP_NE, DTF_PID, 42);
	t[1] = cmp(DTF_OP_EQ, DTF_TID, 7);
	t[2] = op(DTF_OP_OR);
	fsrc_in(t, 3, 42, &fs);
	CHECK(fs.fs_kind == DT_FSRC_SOME && !fs.fs_loose &&
	    fs.fs_nterms == 1);
	fsrc_in(t, 3, 43, &fs);
	CHECK(fs.fs_kind == DT_FSRC_ALL && !fs.fs_loose);
	/* as an int: the same for a real pid */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 42);
	t[0].dtft_flags = DTF_F_INT32;
	fsrc_in(t, 1, 42, &fs);
	CHECK(fs.fs_kind == DT_FSRC_ALL && !fs.fs_loose);
}

int
main(void)
{
	struct dtioc_filter_term t[DTF_MAXTERMS];
	struct dt_pcb dp;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* -p alone */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 42);
	CHECK(pid_of(t, 1) == 42);
	/* a rule's filter, then -p's: (tid > 1 && comm) && pid == 42 */
	t[0] = cmp(DTF_OP_GT, DTF_TID, 1);
	t[1] = cmp(DTF_OP_EQ, DTF_ARG0, 3);
	t[2] = op(DTF_OP_AND);
	t[3] = cmp(DTF_OP_EQ, DTF_PID, 42);
	t[4] = op(DTF_OP_AND);
	CHECK(pid_of(t, 5) == 42);
	/* the pid on the left of the AND, deeper */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 7);
	t[1] = cmp(DTF_OP_EQ, DTF_TID, 8);
	t[2] = op(DTF_OP_AND);
	t[3] = cmp(DTF_OP_NE, DTF_CPU, 0);
	t[4] = op(DTF_OP_AND);
	CHECK(pid_of(t, 5) == 7);
	/* an OR anywhere above it: other processes' events too */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 7);
	t[1] = cmp(DTF_OP_EQ, DTF_TID, 8);
	t[2] = op(DTF_OP_OR);
	CHECK(pid_of(t, 3) == 0);
	t[3] = cmp(DTF_OP_EQ, DTF_PID, 9);
	t[4] = op(DTF_OP_AND);
	CHECK(pid_of(t, 5) == 9);
	/* pid compared otherwise, or with no process */
	t[0] = cmp(DTF_OP_NE, DTF_PID, 7);
	CHECK(pid_of(t, 1) == 0);
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 0);
	CHECK(pid_of(t, 1) == 0);
	t[0] = cmp(DTF_OP_EQ, DTF_PID, -5);
	CHECK(pid_of(t, 1) == 0);
	t[0] = cmp(DTF_OP_EQ, DTF_PID, (int64_t)1 << 40);
	CHECK(pid_of(t, 1) == 0);
	t[0] = cmp(DTF_OP_EQ, DTF_TID, 7);
	CHECK(pid_of(t, 1) == 0);
	/* malformed: an AND with one operand, one with none */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 7);
	t[1] = op(DTF_OP_AND);
	CHECK(pid_of(t, 2) == 0);
	t[0] = op(DTF_OP_AND);
	CHECK(pid_of(t, 1) == 0);
	/* the longest program: a chain of ANDs, the pid first */
	t[0] = cmp(DTF_OP_EQ, DTF_PID, 11);
	for (i = 1; i + 1 < DTF_MAXTERMS; i += 2) {
		t[i] = cmp(DTF_OP_GE, DTF_ARG0 + 1, i);
		t[i + 1] = op(DTF_OP_AND);
	}
	CHECK(pid_of(t, DTF_MAXTERMS - 1) == 11);
	/* no filter */
	memset(&dp, 0, sizeof(dp));
	CHECK(dt_fsrc_pid(&dp) == 0);
	check_in();
	return unit_done();
}
