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
 * Filters at the source, in the kernel (issue 22): a Linux event's perf
 * events get an ftrace filter (PERF_EVENT_IOC_SET_FILTER) made of the
 * filters its recording pcbs pushed (DTIOCPRBFILTER), so that records
 * no open wants are never written, read or woken for.  The filter is
 * the OR over every pcb of every probe the event feeds (dt_fsrc_*() in
 * dt_prov.h), in what ftrace can compare exactly as dtd would:
 *
 *  - tid: common_pid, the kernel's thread id (dtev_tid);
 *  - comm: ftrace's comm, the current thread's name at the event, what
 *    dtd's task cache reports (an "idleN" comm is dtd's name for the
 *    idle task, whose kernel name is swapper/N: that comparison keeps
 *    pid 0 too), on events that have no comm field of their own;
 *  - a Linux-named probe's argument N: its field N, an integer (not an
 *    array) compared with a constant its type can hold, so that ftrace's
 *    comparison in the field's type is dtd's in 64 bits;
 *  - a system call probe's arg0 (raw_syscalls:sys_enter, sys_exit, in
 *    OpenBSD's numbers) equal or not to N: field id among the Linux
 *    numbers that N stands for (systab), the numbers being a function
 *    of id.
 *
 * The rest (pid: ftrace has no tgid; cpu; the other decoded arguments
 * of OpenBSD probes, an order of system call numbers) is taken as
 * true.  sched_switch is never filtered: it
 * feeds on__cpu's stacks and names and the task cache.
 *
 * The kernel sets a perf event's filter once (a second set fails with
 * EEXIST), so a filter that must keep more after an open started
 * reopens the event, closed first as a reopen for stacks is: a gap,
 * never an event twice.  One that could keep less after an open
 * stopped stays as it is until the next reopen: it still keeps all the
 * remaining opens want.  Where the kernel refuses a filter, the event
 * goes unfiltered and dtd filters alone; USERDT_TEST_KFILTER=refuse
 * makes every filter one the kernel refuses, for the tests.
 *
 * Locks: [K], the core's configuration lock (the dtpv_* callbacks).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_prov.h"
#include "dt_tp_filt.h"
#include "dt_tp_var.h"
#include "systab.h"

/* A page: what the kernel copies of a filter string. */
#define DT_TPF_MAXLEN	4096

/* A string ftrace compares as written: no glob, quote or escape. */
static bool
dt_tpf_plain(const char *s)
{
	size_t i;

	if (s[0] == '\0')
		return false;
	for (i = 0; i < DTMAXCOMLEN && s[i] != '\0'; i++)
		if (!isprint((unsigned char)s[i]) || strchr("\"\\*?[]!", s[i]))
			return false;
	return true;
}

/* Whether a comparison with c means in field f what it means in dtd. */
static bool
dt_tpf_fits(const struct dt_tp_field *f, const struct dtioc_filter_term *t)
{
	unsigned int bits = f->dtf_size * 8;
	int64_t c = t->dtft_val;
	bool eq = t->dtft_op == DTF_OP_EQ || t->dtft_op == DTF_OP_NE;
	size_t i;

	if (f->dtf_kind != DT_TPF_NUM || strchr(f->dtf_type, '[') != NULL ||
	    f->dtf_size == 0 || f->dtf_size > 8)
		return false;
	for (i = 0; f->dtf_name[i] != '\0'; i++)
		if (!isalnum((unsigned char)f->dtf_name[i]) &&
		    f->dtf_name[i] != '_')
			return false;
	/* as a C int: exact only where the field is no wider, or is one */
	if ((t->dtft_flags & DTF_F_INT32) &&
	    !(f->dtf_size < 4 || (f->dtf_size == 4 && f->dtf_signed)))
		return false;
	if (bits == 64)
		return f->dtf_signed || eq;
	if (f->dtf_signed)
		return c >= -(INT64_C(1) << (bits - 1)) &&
		    c < (INT64_C(1) << (bits - 1));
	return c >= 0 && c < (INT64_C(1) << bits);
}

bool
dt_tp_filt_task(const struct dtioc_filter_term *t)
{
	switch (t->dtft_field) {
	case DTF_TID:
		return true;
	case DTF_COMM:
		return dt_tpf_plain(t->dtft_str);
	}
	return false;
}

/* dt_fsrc_can_fn for the event src. */
static bool
dt_tpf_can(const struct dt_probe *dtp, const struct dtioc_filter_term *t,
    void *arg)
{
	const struct dt_tp_src *src = arg;
	const struct dt_tp_probe *tpp = dtp->dtp_priv;
	unsigned int n;

	switch (t->dtft_field) {
	case DTF_COMM:
		/*
		 * ftrace looks a name up among the event's own fields
		 * first: where the event has a comm (sched_wakeup's, the
		 * woken task's), "comm" is that one, not the current
		 * thread's that dtd compares.
		 */
		if (dt_tp_field(&src->tps_fmt, "comm") != NULL)
			return false;
		return dt_tp_filt_task(t);
	case DTF_TID:
		return dt_tp_filt_task(t);
	case DTF_PID:
	case DTF_CPU:
	case DTF_RETVAL:
	case DTF_ERRNO:
		return false;
	}
	n = t->dtft_field - DTF_ARG0;
	/*
	 * a number as a C int is the same for all a call's id makes, but
	 * for ids past INT32_MAX - 1024, negative: those are none of N's
	 */
	if (src->tps_sysnum && n == 0 && (t->dtft_op == DTF_OP_EQ ||
	    t->dtft_op == DTF_OP_NE) && tpp->tpp_nsrcs == 1 &&
	    tpp->tpp_srcs[0] == src)
		return !(t->dtft_flags & DTF_F_INT32) || t->dtft_val >= 0;
	/* fields in order: the probe's own event, undecoded */
	if (tpp->tpp_decode != NULL || tpp->tpp_nsrcs != 1 ||
	    tpp->tpp_srcs[0] != src || n >= dtp->dtp_nargs ||
	    n >= src->tps_fmt.dtfm_nfields)
		return false;
	return dt_tpf_fits(&src->tps_fmt.dtfm_fields[n], t);
}

/*
 * dt_fsrc_can_fn for a counter, which must keep exactly dtd's events:
 * dt_tpf_can() but the comms that mean another thing to ftrace (dtd
 * calls the idle task idleN, the kernel swapper/N; dt_tpf_cmp() keeps
 * every idle task's events for an idleN).
 */
static bool
dt_tpf_can_exact(const struct dt_probe *dtp,
    const struct dtioc_filter_term *t, void *arg)
{
	if (t->dtft_field == DTF_COMM &&
	    (strncmp(t->dtft_str, "idle", 4) == 0 ||
	    strncmp(t->dtft_str, "swapper", 7) == 0))
		return false;
	return dt_tpf_can(dtp, t, arg);
}

static const char *
dt_tpf_op(uint8_t op)
{
	switch (op) {
	case DTF_OP_EQ:	return "==";
	case DTF_OP_NE:	return "!=";
	case DTF_OP_LT:	return "<";
	case DTF_OP_LE:	return "<=";
	case DTF_OP_GT:	return ">";
	case DTF_OP_GE:	return ">=";
	case DTF_OP_AND: return "&&";
	default:	return "||";
	}
}

struct dt_tpf_buf {
	char	*tb_s;
	size_t	 tb_len, tb_size;
	bool	 tb_full;
};

static void
dt_tpf_put(struct dt_tpf_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
dt_tpf_put(struct dt_tpf_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->tb_full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->tb_s + b->tb_len, b->tb_size - b->tb_len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->tb_size - b->tb_len)
		b->tb_full = true;
	else
		b->tb_len += (size_t)n;
}

/*
 * arg0 ==, != t's N of a system call's source: id among (none of) the
 * Linux numbers dt_tp_sys() makes N of, SYSTAB_LINUX_ONLY + id where
 * the table has no entry.
 */
static void
dt_tpf_sysnum(struct dt_tpf_buf *b, const struct dtioc_filter_term *t)
{
	const struct systab_ent *se;
	bool eq = t->dtft_op == DTF_OP_EQ;
	int64_t num, v = t->dtft_val;
	long id;
	int n = 0;

	dt_tpf_put(b, "(");
	for (id = 0; id < SYSTAB_LINUX_MAX; id++) {
		se = systab_by_linux(id);
		num = se != NULL ? (int64_t)se->se_num : SYSTAB_LINUX_ONLY + id;
		if (num == v)
			dt_tpf_put(b, "%sid %s %ld", n++ > 0 ?
			    (eq ? " || " : " && ") : "", eq ? "==" : "!=", id);
	}
	/* no table beyond: each number past it is one id's */
	if (v >= SYSTAB_LINUX_ONLY + SYSTAB_LINUX_MAX && v - SYSTAB_LINUX_ONLY <=
	    INT32_MAX)
		dt_tpf_put(b, "%sid %s %lld", n++ > 0 ? (eq ? " || " : " && ") :
		    "", eq ? "==" : "!=", (long long)(v - SYSTAB_LINUX_ONLY));
	/* no id makes it: never, or always */
	if (n == 0)
		dt_tpf_put(b, "common_pid %s 0", eq ? "<" : ">=");
	dt_tpf_put(b, ")");
}

/* One comparison, in ftrace's words. */
static void
dt_tpf_cmp(struct dt_tpf_buf *b, const struct dt_tp_src *src,
    const struct dtioc_filter_term *t)
{
	const struct dt_tp_field *f;
	const char *op = dt_tpf_op(t->dtft_op);

	switch (t->dtft_field) {
	case DTF_TID:
		dt_tpf_put(b, "common_pid %s %lld", op,
		    (long long)t->dtft_val);
		return;
	case DTF_COMM:
		if (t->dtft_op == DTF_OP_EQ &&
		    strncmp(t->dtft_str, "idle", 4) == 0)
			dt_tpf_put(b, "(comm == \"%s\" || common_pid == 0)",
			    t->dtft_str);
		else
			dt_tpf_put(b, "comm %s \"%s\"", op, t->dtft_str);
		return;
	}
	if (src->tps_sysnum) {
		dt_tpf_sysnum(b, t);
		return;
	}
	f = &src->tps_fmt.dtfm_fields[t->dtft_field - DTF_ARG0];
	if (!f->dtf_signed && t->dtft_val < 0)
		dt_tpf_put(b, "%s %s %llu", f->dtf_name, op,
		    (unsigned long long)t->dtft_val);
	else
		dt_tpf_put(b, "%s %s %lld", f->dtf_name, op,
		    (long long)t->dtft_val);
}

/*
 * The subtree of postfix program fs ending at term i, in infix; returns
 * the index of its first term.  Depth at most DT_FSRC_MAXTERMS.
 */
static unsigned int
dt_tpf_infix(struct dt_tpf_buf *b, const struct dt_tp_src *src,
    const struct dt_fsrc *fs, unsigned int i)
{
	const struct dtioc_filter_term *t = &fs->fs_terms[i];
	unsigned int first;
	size_t at;
	char *right;

	if (t->dtft_op != DTF_OP_AND && t->dtft_op != DTF_OP_OR) {
		dt_tpf_cmp(b, src, t);
		return i;
	}
	/* The right operand ends just before; print it, then the left. */
	at = b->tb_len;
	first = dt_tpf_infix(b, src, fs, i - 1);
	if (b->tb_full || (right = strndup(b->tb_s + at, b->tb_len - at)) ==
	    NULL) {
		b->tb_full = true;
		return first;
	}
	b->tb_len = at;
	b->tb_s[at] = '\0';
	dt_tpf_put(b, "(");
	first = dt_tpf_infix(b, src, fs, first - 1);
	dt_tpf_put(b, ") %s (%s)", dt_tpf_op(t->dtft_op), right);
	free(right);
	return first;
}

char *
dt_tp_filt_expr(const struct dt_fsrc *fs, const struct dt_tp_src *src)
{
	struct dt_tpf_buf b;
	const char *test;

	memset(&b, 0, sizeof(b));
	b.tb_size = DT_TPF_MAXLEN;
	if (fs->fs_kind == DT_FSRC_ALL || fs->fs_nterms > DT_FSRC_MAXTERMS ||
	    (fs->fs_kind == DT_FSRC_SOME && fs->fs_nterms == 0) ||
	    (b.tb_s = malloc(b.tb_size)) == NULL)
		return NULL;
	b.tb_s[0] = '\0';
	if (fs->fs_kind == DT_FSRC_NONE)
		dt_tpf_put(&b, "common_pid < 0");	/* no thread's */
	else
		(void)dt_tpf_infix(&b, src, fs, fs->fs_nterms - 1);
	test = getenv("USERDT_TEST_KFILTER");
	if (test != NULL && strcmp(test, "refuse") == 0)
		dt_tpf_put(&b, " && no_such_field_here == 1");
	if (b.tb_full) {
		free(b.tb_s);
		return NULL;
	}
	return b.tb_s;
}

char *
dt_tp_filt_build(struct dt_tp_src *src, const struct dt_pcb *skip)
{
	struct dt_fsrc *fs;
	unsigned int i;
	char *expr;

	if (src->tps_nsw > 0 || strcmp(src->tps_event, "sched_switch") == 0)
		return NULL;
	if ((fs = malloc(sizeof(*fs))) == NULL)
		return NULL;
	dt_fsrc_init(fs);
	for (i = 0; i < src->tps_nprobes; i++)
		dt_fsrc_or_probe(fs, src->tps_probes[i]->tpp_dtp, skip, 0,
		    dt_tpf_can, src);
	expr = dt_tp_filt_expr(fs, src);
	free(fs);
	return expr;
}

/* Whether two filters (NULL: none) are the same. */
static bool
dt_tpf_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

bool
dt_tp_filt_stale(const struct dt_tp_src *src, const char *want,
    bool stopping)
{
	/* Still a superset of what the remaining opens want. */
	if (stopping || src->tps_ev == NULL || src->tps_kfilt == NULL)
		return false;
	/* The kernel takes a first filter, never a second. */
	return !dt_tpf_same(src->tps_kfilt, want);
}

void
dt_tp_filt_apply(struct dt_tp_src *src, char *want)
{
	int error;

	if (src->tps_ev == NULL || want == NULL || src->tps_kfilt != NULL) {
		free(want);
		return;
	}
	if ((error = dt_tpev_filter(src->tps_ev, want)) != 0) {
		if (error != src->tps_kfilt_err)
			fprintf(stderr, "dtd: tracepoint: %s:%s: kernel "
			    "filter refused (%s): dtd filters alone\n",
			    src->tps_sys, src->tps_event, strerror(error));
		src->tps_kfilt_err = error;
		free(want);
		return;
	}
	src->tps_kfilt_err = 0;
	src->tps_kfilt = want;
}

void
dt_tp_filt_reset(struct dt_tp_src *src)
{
	free(src->tps_kfilt);
	src->tps_kfilt = NULL;
}

char *
dt_tp_filt_pcb(struct dt_tp_src *src, const struct dt_pcb *dp,
    const char *own, pid_t in)
{
	struct dt_fsrc *fs;
	char *expr = NULL, *both;

	if ((fs = malloc(sizeof(*fs))) == NULL)
		return NULL;
	dt_fsrc_of_pcb_in(fs, dp, in, dt_tpf_can_exact, src);
	if (fs->fs_loose) {
		free(fs);
		return NULL;
	}
	if (fs->fs_kind == DT_FSRC_ALL) {
		free(fs);
		return strdup(own);
	}
	expr = dt_tp_filt_expr(fs, src);
	free(fs);
	if (expr == NULL || own[0] == '\0')
		return expr;
	if (asprintf(&both, "(%s) && (%s)", own, expr) == -1)
		both = NULL;
	free(expr);
	return both;
}

char *
dt_tp_filt_own(struct dt_tp_src *src, const struct dt_pcb *dp)
{
	struct dt_fsrc *fs;
	char *expr;

	/* as for the shared event: names and stacks come from every one */
	if (strcmp(src->tps_event, "sched_switch") == 0 ||
	    (fs = malloc(sizeof(*fs))) == NULL)
		return NULL;
	dt_fsrc_of_pcb(fs, dp, dt_tpf_can, src);
	expr = dt_tp_filt_expr(fs, src);
	free(fs);
	return expr;
}
