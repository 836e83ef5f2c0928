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
 * The kernel counting program (dt_tp_kbpfasm.c): which filters it takes,
 * and every shape of it (each set of keys, names recorded or not, the
 * filters it takes, with and without the record's condition) well
 * formed: jumps forward and inside, 64-bit loads whole, an exit last.
 * As root, where the kernel has bpf(2), each is also handed to the
 * verifier, whose refusal fails the test with its last lines: the
 * regress cases load a few shapes, a refused shape would otherwise
 * only show as a rule quietly sampled.
 */
#include <sys/syscall.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_tp_kbpf.h"

static int npass, nfail;

static void
ok(bool c, const char *what)
{
	if (c)
		npass++;
	else {
		nfail++;
		printf("FAIL %s\n", what);
	}
}

static struct dtioc_filter_term
term(uint8_t op, uint8_t field, int64_t v, const char *s)
{
	struct dtioc_filter_term t;

	memset(&t, 0, sizeof(t));
	t.dtft_op = op;
	t.dtft_field = field;
	t.dtft_val = v;
	if (s != NULL)
		strncpy(t.dtft_str, s, sizeof(t.dtft_str) - 1);
	return t;
}

static void
filt(struct dtioc_filter *f, unsigned int n, const struct dtioc_filter_term *t)
{
	memset(f, 0, sizeof(*f));
	f->dtfl_nterms = n;
	memcpy(f->dtfl_terms, t, n * sizeof(*t));
}

/* Jumps forward within, LD_IMM64 whole, EXIT last. */
static bool
wellformed(const struct bpf_insn *in, unsigned int n)
{
	unsigned int i;
	int to;

	if (n == 0 || in[n - 1].code != (BPF_JMP | BPF_EXIT))
		return false;
	for (i = 0; i < n; i++) {
		if (in[i].code == (BPF_LD | BPF_DW | BPF_IMM)) {
			if (i + 1 >= n || in[i + 1].code != 0)
				return false;
			i++;
			continue;
		}
		if (BPF_CLASS(in[i].code) != BPF_JMP ||
		    BPF_OP(in[i].code) == BPF_CALL ||
		    BPF_OP(in[i].code) == BPF_EXIT)
			continue;
		to = (int)i + 1 + in[i].off;
		if (in[i].off < 0 || to >= (int)n)
			return false;
	}
	return true;
}

static int
mkmap(uint32_t type, uint32_t ks, uint32_t vs, uint32_t n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = n;
	return (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
}

/* The verifier's word on in: true when it loads. */
static bool
verify(const struct bpf_insn *in, unsigned int n, const char *what)
{
	static char log[1 << 16];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)in;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t)"Dual BSD/GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = '\0';
	if ((fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a))) >= 0) {
		close(fd);
		return true;
	}
	/* a log too small for a long program's trace is no refusal */
	if (errno == ENOSPC)
		return true;
	printf("verifier (%s): %s\n%s\n", what, strerror(errno),
	    strlen(log) > 600 ? log + strlen(log) - 600 : log);
	return false;
}

int
main(void)
{
	static const char *names[] = { "none", "comm", "mixed", "const",
	    "14-byte comm" };
	struct bpf_insn *in;
	struct dtioc_filter f[5], bad, sysf, sysn, tpf;
	struct dtioc_filter_term t[10];
	struct dt_kbpf_cond cond;
	struct dt_kbpf_spec s;
	char what[128];
	uint32_t keys;
	unsigned int n, fi, c, k;
	int map, gen, ovf, out, want, traced, young;
	bool load;

	/* the filters it takes, and those it leaves to dtd */
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "x");
	filt(&f[1], 1, t);
	t[0] = term(DTF_OP_EQ, DTF_PID, 1, NULL);
	t[1] = term(DTF_OP_NE, DTF_TID, 2, NULL);
	t[2] = term(DTF_OP_NE, DTF_COMM, 0, "abc");
	t[3] = term(DTF_OP_AND, 0, 0, NULL);
	t[4] = term(DTF_OP_OR, 0, 0, NULL);
	filt(&f[2], 5, t);
	t[0] = term(DTF_OP_CONST, 0, 1, NULL);
	filt(&f[3], 1, t);
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "abcdefghijklmn");
	filt(&f[4], 1, t);
	for (fi = 1; fi < 5; fi++)
		ok(dt_kbpf_filter_ok(&f[fi], true), names[fi]);
	ok(dt_kbpf_filter_ok(NULL, false), "no filter");
	ok(!dt_kbpf_filter_ok(&f[1], false), "comm unrecorded refused");
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "a\\b");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "comm with a backslash refused");
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "empty comm refused");
	t[0] = term(DTF_OP_NE, DTF_COMM, 0, "idle1");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "idle's name refused");
	/* /proc's name of a workqueue worker: longer than the kernel's */
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "kworker/1:1-virtio_vsoc");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "a 16-byte or longer name refused");
	t[0] = term(DTF_OP_NE, DTF_COMM, 0, "abcdefghijklmnop");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "a 16-byte name refused");
	/* the kernel's cut of a longer name, or a worker's short one */
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "abcdefghijklmno");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "a 15-byte name refused");
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "kworker/1:1");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "a worker's name refused");
	t[0] = term(DTF_OP_EQ, DTF_COMM, 0, "swapper/0");
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "swapper's name refused");
	t[0] = term(DTF_OP_LT, DTF_PID, 5, NULL);
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "pid < 5 refused");
	t[0] = term(DTF_OP_EQ, DTF_CPU, 0, NULL);
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "cpu == 0 refused");
	t[0] = term(DTF_OP_EQ, DTF_ARG0, 0, NULL);
	filt(&bad, 1, t);
	ok(!dt_kbpf_filter_ok(&bad, true), "arg0 == 0 refused");

	/* a syscall group's program: the numbers, compared every way */
	ok(dt_kbpf_valfilter_ok(&bad, true, true), "sys: arg0 == 0 taken");
	ok(!dt_kbpf_valfilter_ok(&bad, true, false),
	    "sys: arg0 == 0 refused without the record's values");
	t[0] = term(DTF_OP_GE, DTF_ARG0 + DTMAXFUNCARGS - 1, 3, NULL);
	t[1] = term(DTF_OP_LT, DTF_RETVAL, 0, NULL);
	t[2] = term(DTF_OP_AND, 0, 0, NULL);
	t[3] = term(DTF_OP_GT, DTF_ERRNO, 1, NULL);
	t[4] = term(DTF_OP_LE, DTF_CPU, 64, NULL);
	t[5] = term(DTF_OP_AND, 0, 0, NULL);
	t[6] = term(DTF_OP_OR, 0, 0, NULL);
	filt(&sysf, 7, t);
	ok(dt_kbpf_valfilter_ok(&sysf, false, true),
	    "sys: args, retval, errno, cpu, each comparison taken");
	t[0] = term(DTF_OP_LE, DTF_CPU, 1, NULL);
	t[1] = term(DTF_OP_GE, DTF_PID, 2, NULL);
	t[2] = term(DTF_OP_AND, 0, 0, NULL);
	filt(&sysn, 3, t);
	ok(dt_kbpf_valfilter_ok(&sysn, false, false),
	    "sys: cpu and pid compared without the record's values");
	t[0] = term(DTF_OP_LT, DTF_COMM, 0, "x");
	filt(&bad, 1, t);
	ok(!dt_kbpf_valfilter_ok(&bad, true, true), "sys: comm < refused");
	t[0] = term(DTF_OP_EQ, DTF_PBN, 1, NULL);
	filt(&bad, 1, t);
	ok(!dt_kbpf_valfilter_ok(&bad, true, true),
	    "sys: the probe's number refused (one program, many probes)");
	t[0] = term(DTF_OP_EQ, DTF_ARG0 + DTMAXFUNCARGS, 0, NULL);
	filt(&bad, 1, t);
	ok(!dt_kbpf_valfilter_ok(&bad, true, true),
	    "sys: an argument past DTMAXFUNCARGS refused");
	t[0] = term(DTF_OP_EQ, DTF_ARG0, 0, NULL);
	t[0].dtft_flags = 0x80;
	filt(&bad, 1, t);
	ok(!dt_kbpf_valfilter_ok(&bad, true, true), "sys: unknown flag refused");

	/* every shape: well formed, and the verifier's if we may ask */
	if ((in = calloc(DT_KBPF_MAXINSNS, sizeof(*in))) == NULL)
		return 2;
	map = mkmap(BPF_MAP_TYPE_PERCPU_HASH, sizeof(struct dt_kbpf_key), 8,
	    64);
	gen = mkmap(BPF_MAP_TYPE_ARRAY, 4, 4, 1);
	ovf = mkmap(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1);
	load = map >= 0 && gen >= 0 && ovf >= 0;
	/* root has bpf(2): a test that loads nothing there proves nothing */
	if (!load && geteuid() == 0)
		ok(false, "root, yet no bpf(2) map");
	else if (!load)
		printf("# no bpf(2) here (%s): shapes checked, not loaded\n",
		    strerror(errno));
	/* raw_syscalls:sys_enter's id >= 0 */
	cond.kc_off = 8;
	cond.kc_size = 8;
	cond.kc_signed = true;
	cond.kc_jmp = BPF_JSGE;
	cond.kc_val = 0;
	for (k = 0; k < 16; k++)
		for (c = 0; c < 2; c++)
			for (fi = 0; fi < 5; fi++) {
				keys = ((k & 1) ? 1u << DTF_PID : 0) |
				    ((k & 2) ? 1u << DTF_TID : 0) |
				    ((k & 4) ? 1u << DTF_CPU : 0) |
				    ((k & 8) ? 1u << DTF_COMM : 0);
				memset(&s, 0, sizeof(s));
				s.kbs_fields = keys;
				s.kbs_comm = c || fi == 1 || fi == 2 ||
				    fi == 4;
				s.kbs_filter = fi == 0 ? NULL : &f[fi];
				s.kbs_cond = (k + fi) & 1 ? &cond : NULL;
				s.kbs_tidoff = fi == 2 ? 100000 : 0;
				s.kbs_mapfd = load ? map : 3;
				s.kbs_genfd = load ? gen : 4;
				s.kbs_ovffd = load ? ovf : 5;
				snprintf(what, sizeof(what), "keys %#x, comm "
				    "%d, filter %s, cond %d", keys,
				    s.kbs_comm, names[fi], s.kbs_cond != NULL);
				n = dt_kbpf_prog(&s, in);
				ok(wellformed(in, n), what);
				if (load && n > 0)
					ok(verify(in, n, what), what);
			}
	/*
	 * A syscall group's, both directions, arguments read or not, its
	 * filters of the record's values (32 bits and 64): the verifier
	 * takes the record's reads (args[6] from 16, ret at 16), the
	 * want's value read back from the frame.
	 */
	want = load ? mkmap(BPF_MAP_TYPE_ARRAY, 4, 4, 512) : 7;
	traced = load ? mkmap(BPF_MAP_TYPE_HASH, 4, 4, 64) : 8;
	young = load ? mkmap(BPF_MAP_TYPE_LRU_HASH, 4,
	    sizeof(struct dt_kbpf_young), 64) : 9;
	if (load && (want < 0 || traced < 0 || young < 0))
		ok(false, "the syscall group's maps");
	for (k = 0; k < 8 && want >= 0 && traced >= 0 && young >= 0; k++) {
		memset(&s, 0, sizeof(s));
		s.kbs_fields = 1u << DTF_PID;
		s.kbs_filter = (k & 4) ? &sysn : &sysf;
		s.kbs_mapfd = load ? map : 3;
		s.kbs_genfd = load ? gen : 4;
		s.kbs_ovffd = load ? ovf : 5;
		s.kbs_nsys = 512;
		s.kbs_idoff = 8;
		s.kbs_wantfd = want;
		s.kbs_tracedfd = traced;
		s.kbs_youngfd = young;
		s.kbs_dir = k & 1;
		s.kbs_args = (k & 2) != 0;
		s.kbs_valoff = (k & 4) ? 0 : 16;
		sysf.dtfl_terms[0].dtft_flags = (k & 2) ? DTF_F_INT32 : 0;
		snprintf(what, sizeof(what), "syscall program, dir %u, args "
		    "%d, values %d", s.kbs_dir, s.kbs_args, s.kbs_valoff);
		n = dt_kbpf_prog(&s, in);
		ok(wellformed(in, n), what);
		if (load && n > 0)
			ok(verify(in, n, what), what);
	}
	if (load) {
		close(want);
		close(traced);
		close(young);
	}
	/*
	 * A tracepoint's fields as its arguments: each size, signed or
	 * not, a string's slot reading 0, under the value filter.
	 */
	/* arguments 0 to 4: each size, and a string's */
	t[0] = term(DTF_OP_NE, DTF_ARG0, -1, NULL);
	for (c = 1; c < 5; c++) {
		t[2 * c - 1] = term(c % 2 ? DTF_OP_GE : DTF_OP_NE,
		    DTF_ARG0 + c, -1, NULL);
		t[2 * c] = term(DTF_OP_AND, 0, 0, NULL);
	}
	filt(&tpf, 9, t);
	ok(dt_kbpf_valfilter_ok(&tpf, true, true), "tracepoint fields taken");
	for (k = 0; k < 4; k++) {
		memset(&s, 0, sizeof(s));
		s.kbs_fields = 1u << DTF_COMM;
		s.kbs_comm = true;
		s.kbs_filter = k < 2 ? &tpf : &sysf;
		s.kbs_mapfd = load ? map : 3;
		s.kbs_genfd = load ? gen : 4;
		s.kbs_ovffd = load ? ovf : 5;
		s.kbs_targs = true;
		s.kbs_args = k % 2 == 0;
		for (c = 0; c < DTMAXFUNCARGS; c++) {
			static const uint8_t size[] = { 4, 0, 8, 2, 1 };

			s.kbs_targ[c].kf_size = size[c % 5];
			s.kbs_targ[c].kf_off = (uint16_t)(8 + 8 * c);
			s.kbs_targ[c].kf_signed = c % 2 == 0;
		}
		snprintf(what, sizeof(what), "tracepoint fields, args %d",
		    s.kbs_args);
		n = dt_kbpf_prog(&s, in);
		ok(wellformed(in, n), what);
		if (load && n > 0)
			ok(verify(in, n, what), what);
	}

	/*
	 * The pid filter's program, records of 8 bytes (the common fields
	 * alone) to the largest taken, in a perf event array; one past it
	 * refused.
	 */
	out = load ? mkmap(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 64) : 6;
	if (load && out < 0)
		ok(false, "a perf event array");
	for (k = 8; k <= DT_KBPF_PIDMAX && out >= 0;
	    k += k < 72 ? 4 : k < DT_KBPF_PIDMAX - 1 ? 61 : 1) {
		snprintf(what, sizeof(what), "pid program, %u bytes", k);
		n = dt_kbpf_pidprog(12345, 21, k, out, in);
		ok(wellformed(in, n), what);
		if (load && n > 0)
			ok(verify(in, n, what), what);
	}
	ok(dt_kbpf_pidprog(12345, 21, DT_KBPF_PIDMAX + 1, 6, in) == 0,
	    "pid program past DT_KBPF_PIDMAX refused");
	if (load && out >= 0)
		close(out);
	free(in);
	if (load) {
		close(map);
		close(gen);
		close(ovf);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail == 0 ? 0 : 1;
}
