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
 * Counts by key in the kernel (dt_tp_kbpf.h): the program, its event,
 * and a tracepoint pcb's start and stop.
 *
 * The program runs once per hit whatever perf events the tracepoint
 * has (its tracepoint's program list, not the event's), so it hangs on
 * one counting event, on the first CPU that opens one.  It returns 1:
 * the kernel reads 0 as "deliver this record to no perf event of the
 * tracepoint", every open's and every other user's, not only ours;
 * ours keeps no buffer, so 1 costs nothing.
 *
 * The maps, the charges and the drain are dt_tp_kbpfdrain.c's, shared
 * with the syscall groups' programs (dt_tp_ksysbpf.c).
 *
 * Locks used to protect struct members and globals in this file:
 *	[K]	the core's configuration lock
 */
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_tp_kbpf.h"
#include "dt_tp_var.h"

#define KB_LOGSIZE	65536

struct dt_tp_kbpf {
	struct dt_kbpf_drain	 kb_kd;		/* first: the hooks' cast */
	struct dt_tp_kbpf	*kb_next;	/* [K] on dt_tp_kbpfs */
};

static struct dt_tp_kbpf *dt_tp_kbpfs;		/* [K] started ones */
static unsigned int	  dt_kbpf_ncpu;		/* [K] possible CPUs */

bool
dt_tp_kbpf_off(void)
{
	const char *env = getenv("USERDT_KBPF");

	return env != NULL && strcmp(env, "0") == 0;
}

int
dt_kbpf_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/*
 * The possible CPUs, as a per-CPU map's value holds them: the count of
 * /sys/devices/system/cpu/possible's list ("0-3", "0,2-5").  [K].
 */
unsigned int
dt_kbpf_cpus(void)
{
	FILE *f;
	char buf[256], *p, *e;
	unsigned long lo, hi;
	unsigned int n = 0;

	if (dt_kbpf_ncpu != 0)
		return dt_kbpf_ncpu;
	if ((f = fopen("/sys/devices/system/cpu/possible", "re")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	for (p = buf; *p >= '0' && *p <= '9'; p = e + (*e == ',')) {
		lo = hi = strtoul(p, &e, 10);
		if (*e == '-')
			hi = strtoul(e + 1, &e, 10);
		if (hi < lo || hi - lo >= 65536)
			return 0;
		n += (unsigned int)(hi - lo + 1);
	}
	return dt_kbpf_ncpu = n;
}

int
dt_kbpf_map(uint32_t type, uint32_t ksize, uint32_t vsize, uint32_t n,
    const char *name)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ksize;
	a.value_size = vsize;
	a.max_entries = n;
	/*
	 * A hash's entries made as keys come: twice a large table,
	 * preallocated, would pin what the run may never use (an entry
	 * the kernel cannot allocate counts as overflow, said), and the
	 * tracee hash's 65536 would pin ~5 MB for dtd's life, charged to
	 * no open.  Its entries are put by dtd alone, whose bpf(2) says
	 * a refusal, counted (dt_tp_ksysbpf.c); the program only looks.
	 */
	if (type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_HASH)
		a.map_flags = BPF_F_NO_PREALLOC;
	strncpy(a.map_name, name, sizeof(a.map_name) - 1);
	return dt_kbpf_bpf(BPF_MAP_CREATE, &a);
}

int
dt_kbpf_put(int fd, uint32_t key, uint32_t val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&val;
	a.flags = BPF_ANY;
	return dt_kbpf_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

uint64_t
dt_kbpf_misses(int prog)
{
	struct bpf_prog_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return dt_kbpf_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 ?
	    info.recursion_misses : 0;
}

/*
 * Load n instructions as a tracepoint program named name: its
 * descriptor, or -1 with *why the verifier's last line (or the error)
 * for the one line dtd says.  [K].
 */
int
dt_kbpf_load_insns(const struct bpf_insn *insns, unsigned int n,
    const char *name, char *why, size_t whylen)
{
	union bpf_attr a;
	char *log = NULL, *l, *end;
	int fd, error;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t)"Dual BSD/GPL";
	strncpy(a.prog_name, name, sizeof(a.prog_name) - 1);
	if ((fd = dt_kbpf_bpf(BPF_PROG_LOAD, &a)) >= 0)
		return fd;
	error = errno;
	snprintf(why, whylen, "%s", strerror(error));
	/* again with the verifier's log, only to say why */
	if (error != EPERM && (log = calloc(1, KB_LOGSIZE)) != NULL) {
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = KB_LOGSIZE;
		a.log_level = 1;
		if ((fd = dt_kbpf_bpf(BPF_PROG_LOAD, &a)) >= 0) {
			/* a refusal that went away: take it */
			free(log);
			return fd;
		}
		/* the last line but the verifier's statistics */
		end = log + strnlen(log, KB_LOGSIZE - 1);
		for (;;) {
			while (end > log && end[-1] == '\n')
				*--end = '\0';
			l = strrchr(log, '\n');
			l = l != NULL ? l + 1 : log;
			if (l == log || (strncmp(l, "processed ", 10) != 0 &&
			    strncmp(l, "verification time", 17) != 0))
				break;
			end = l;
		}
		if (*l != '\0')
			snprintf(why, whylen, "%s: %s", strerror(error), l);
	}
	free(log);
	errno = error;
	return -1;
}

/* Load s's program: as dt_kbpf_load_insns().  [K]. */
int
dt_kbpf_load(const struct dt_kbpf_spec *s, char *why, size_t whylen)
{
	struct bpf_insn *insns;
	const char *test;
	unsigned int n;
	int fd, error;

	snprintf(why, whylen, "too long");
	if ((insns = calloc(DT_KBPF_MAXINSNS, sizeof(*insns))) == NULL ||
	    (n = dt_kbpf_prog(s, insns)) == 0) {
		free(insns);
		return -1;
	}
	/* for the tests: a first instruction the verifier refuses */
	test = getenv("USERDT_TEST_KBPF");
	if (test != NULL && strcmp(test, "refuse") == 0) {
		memset(&insns[0], 0, sizeof(insns[0]));
		insns[0].code = BPF_ALU64 | BPF_MOV | BPF_X;
		insns[0].dst_reg = BPF_REG_0;
		insns[0].src_reg = BPF_REG_8;	/* never written */
	}
	fd = dt_kbpf_load_insns(insns, n, "udt_kcount", why, whylen);
	error = errno;
	free(insns);
	errno = error;
	return fd;
}

/*
 * A counting event of tracepoint id for the program to hang on: the
 * first CPU's that opens (one is enough, see above).  [K].
 */
int
dt_kbpf_event(int id)
{
	struct perf_event_attr attr;
	unsigned int i;
	int fd = -1;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	for (i = 0; i < dt_kbpf_ncpu && fd == -1; i++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)i, -1,
		    PERF_FLAG_FD_CLOEXEC);
		/* an offline CPU: the next */
		if (fd == -1 && errno != ENODEV)
			break;
	}
	return fd;
}

/*
 * Whether the program reads number field f as dt_tp_num() does: an
 * aligned load of 1, 2, 4 or 8 bytes past the common fields.
 */
static bool
dt_kbpf_loadable(const struct dt_tp_field *f)
{
	return (f->dtf_size == 1 || f->dtf_size == 2 || f->dtf_size == 4 ||
	    f->dtf_size == 8) && f->dtf_off >= 8 &&
	    f->dtf_off % f->dtf_size == 0 &&
	    f->dtf_off + f->dtf_size <= INT16_MAX;
}

/*
 * tpp_kcount ("" or "FIELD OP NUMBER") as the program reads it into c:
 * false for one it cannot.  [K].
 */
static bool
dt_kbpf_cond(const struct dt_tp_src *src, const char *kc,
    struct dt_kbpf_cond *c, bool *any)
{
	static const struct {
		const char	*op;
		uint8_t		 jmp, ujmp;
	} ops[] = {
		{ ">=", BPF_JSGE, BPF_JGE }, { "<=", BPF_JSLE, BPF_JLE },
		{ "!=", BPF_JNE, BPF_JNE }, { "==", BPF_JEQ, BPF_JEQ },
		{ ">", BPF_JSGT, BPF_JGT }, { "<", BPF_JSLT, BPF_JLT },
	};
	const struct dt_tp_field *f;
	char name[DT_TP_NAMELEN], op[3], rest[2];
	long long v;
	unsigned int i;

	*any = false;
	if (kc[0] == '\0')
		return true;
	if (sscanf(kc, "%31s %2s %lld %1s", name, op, &v, rest) != 3 ||
	    (f = dt_tp_field(&src->tps_fmt, name)) == NULL ||
	    !dt_kbpf_loadable(f))
		return false;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i].op) == 0)
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return false;
	c->kc_off = f->dtf_off;
	c->kc_size = (uint8_t)f->dtf_size;
	c->kc_signed = f->dtf_signed != 0;
	c->kc_jmp = c->kc_signed ? ops[i].jmp : ops[i].ujmp;
	c->kc_val = v;
	*any = true;
	return true;
}

/*
 * The probe's arguments as the program reads them into s (kbs_targ): its
 * fields in order, a number each where dt_tp_generic() gives one, 0
 * for a string.  False where one cannot be read as it does.  [K].
 */
static bool
dt_kbpf_fields(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    struct dt_kbpf_spec *s)
{
	const struct dt_tp_field *f;
	unsigned int i;

	for (i = 0; i < tpp->tpp_dtp->dtp_nargs && i < DTMAXFUNCARGS; i++) {
		f = &src->tps_fmt.dtfm_fields[i];
		if (f->dtf_kind != DT_TPF_NUM)
			continue;
		if (!dt_kbpf_loadable(f))
			return false;
		s->kbs_targ[i].kf_off = f->dtf_off;
		s->kbs_targ[i].kf_size = (uint8_t)f->dtf_size;
		s->kbs_targ[i].kf_signed = f->dtf_signed != 0;
	}
	s->kbs_targs = true;
	return true;
}

bool
dt_tp_kbpf_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp)
{
	struct dt_tp_src *src = tpp->tpp_srcs[0];
	const struct dtioc_filter *f = dp->dp_filter;
	struct dt_kbpf_spec s;
	struct dt_kbpf_cond cond;
	struct dt_tp_kbpf *kb;
	char who[sizeof(kb->kb_kd.kd_who)];
	bool anycond, comm = (dp->dp_evtflags & DTEVT_EXECNAME) != 0;
	uint32_t fields;

	/* each record one event under a condition the program reads */
	if (dt_tp_kbpf_off() || tpp->tpp_nsrcs != 1 ||
	    tpp->tpp_kcount == NULL || tpp->tpp_switchin ||
	    !dt_pcb_kkey_ok(dp, &fields) ||
	    !dt_kbpf_cond(src, tpp->tpp_kcount, &cond, &anycond))
		return false;
	if (f != NULL && f->dtfl_nterms == 0)
		f = NULL;
	memset(&s, 0, sizeof(s));
	/* fields in order: the arguments are the program's to read */
	if (tpp->tpp_decode == NULL && dt_kbpf_fields(tpp, src, &s)) {
		if (!dt_kbpf_valfilter_ok(f, comm, true))
			return false;
		s.kbs_args = (dp->dp_dtp->dtp_argsflag & ~dp->dp_evtflags) ==
		    0;
	} else if (!dt_kbpf_filter_ok(f, comm))
		return false;
	snprintf(who, sizeof(who), "tracepoint: %s:%s", src->tps_sys,
	    src->tps_event);
	if (!dt_kbpf_usable(who) || (kb = calloc(1, sizeof(*kb))) == NULL)
		return false;
	memcpy(kb->kb_kd.kd_who, who, sizeof(who));
	s.kbs_cond = anycond ? &cond : NULL;
	s.kbs_fields = fields;
	s.kbs_comm = comm;
	s.kbs_filter = f;
	if (!dt_kbpf_drain_init(&kb->kb_kd, dp, dt_pcb_agg_size(dp),
	    DT_KBPF_NFDS, "udt_k") ||
	    !dt_kbpf_drain_load(&kb->kb_kd, &s, src->tps_fmt.dtfm_id)) {
		dt_kbpf_drain_free(&kb->kb_kd);
		free(kb);
		return false;
	}
	/*
	 * No event of the stream goes to dp from here, and the program
	 * counts from its attach: one in between is counted by neither,
	 * as at dt_tpcnt_start()'s switch, never twice.
	 */
	atomic_store(&dp->dp_srccount, true);
	if (!dt_kbpf_drain_attach(&kb->kb_kd)) {
		atomic_store(&dp->dp_srccount, false);
		dt_kbpf_drain_free(&kb->kb_kd);
		free(kb);
		return false;
	}
	kb->kb_next = dt_tp_kbpfs;
	dt_tp_kbpfs = kb;
	return true;
}

bool
dt_tp_kbpf_stop(struct dt_pcb *dp)
{
	struct dt_tp_kbpf **kbp, *kb;

	for (kbp = &dt_tp_kbpfs; (kb = *kbp) != NULL; kbp = &kb->kb_next)
		if (kb->kb_kd.kd_ctr.dac_dp == dp) {
			*kbp = kb->kb_next;
			dt_kbpf_drain_stop(&kb->kb_kd);
			dt_kbpf_drain_free(&kb->kb_kd);
			free(kb);
			/* dp_srccount stays set, as dt_tpcnt_stop() leaves it */
			return true;
		}
	return false;
}
