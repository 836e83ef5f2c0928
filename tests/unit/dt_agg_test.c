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
 * Aggregations at the source in the device core (dt_agg.c), driven
 * directly: what each function folds, hist and lhist buckets, comm keys
 * the reader would not see as spelled, an open's table apart from
 * another's ring, producers racing a reader that empties the table
 * as it reads: every event is in exactly one read, and stacks as keys:
 * interned once by id, as deep as the record would be, a new generation
 * of ids after each emptying read, a full stack table counted; and a
 * kernel counter's counts as dtgr_kcount says them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_prov.h"
#include "dt_softc.h"
#include "unit_check.h"


static char	*ua_lo, *ua_hi;

static int
ua_copyout(void *arg, uint64_t uaddr, const void *src, size_t len)
{
	char *p = (char *)(uintptr_t)uaddr;

	(void)arg;
	if (p < ua_lo || p > ua_hi || len > (size_t)(ua_hi - p))
		return EFAULT;
	memcpy(p, src, len);
	return 0;
}

static const struct dt_uaccess ua = { ua_copyout, NULL };
static const struct dt_cred root = { 0, 0, 1 };

static void
read_done(void *token, const void *buf, size_t len, int error)
{
	(void)token, (void)buf, (void)len, (void)error;
}

static void
poll_done(void *ph, bool ready)
{
	(void)ph, (void)ready;
}

static int
enable(struct dt_softc *sc, uint32_t pbn, uint64_t flags)
{
	struct dtioc_req dtrq = { pbn, 0, flags, 1000000000 };

	return dt_dev_ioctl(sc, &root, DTIOCPRBENABLE, &dtrq, &ua);
}

static int
record(struct dt_softc *sc, int on)
{
	return dt_dev_ioctl(sc, &root, DTIOCRECORD, &on, &ua);
}

static int
spec(struct dt_softc *sc, uint32_t pbn, int func, uint8_t key, uint8_t val,
    uint32_t size)
{
	struct dtioc_aggspec as;

	memset(&as, 0, sizeof(as));
	as.dtas_pbn = pbn;
	as.dtas_func = (uint8_t)func;
	if (key != 0) {
		as.dtas_nkeys = 1;
		as.dtas_keys[0] = key;
	}
	as.dtas_vfield = val;
	as.dtas_aggsize = size;
	if (func == DTA_LHIST) {
		as.dtas_lmin = 0;
		as.dtas_lmax = 100;
		as.dtas_lstep = 10;
	}
	return dt_dev_ioctl(sc, &root, DTIOCPRBAGG, &as, &ua);
}

static struct dtioc_aggent	ents[4096];

/* Read (and empty) sc's table into ents: entries, or -1. */
static long
aggread(struct dt_softc *sc, uint64_t *overflow)
{
	struct dtioc_aggread rd;

	memset(&rd, 0, sizeof(rd));
	rd.dtgr_size = sizeof(ents);
	rd.dtgr_ents = ents;
	rd.dtgr_flags = DTA_RD_CLEAR;
	ua_lo = (char *)ents;
	ua_hi = (char *)ents + sizeof(ents);
	if (dt_dev_ioctl(sc, &root, DTIOCAGGREAD, &rd, &ua) != 0)
		return -1;
	if (overflow != NULL)
		*overflow = rd.dtgr_overflow;
	return rd.dtgr_nents;
}

static const struct dtioc_aggent *
find(long n, uint32_t id, int64_t arg0, int64_t bucket, int bkind)
{
	long i;

	for (i = 0; i < n; i++)
		if (ents[i].dtae_id == id &&
		    ents[i].dtae_args[0] == (uint64_t)arg0 &&
		    ents[i].dtae_bucket == bucket &&
		    ents[i].dtae_bkind == bkind)
			return &ents[i];
	return NULL;
}

static void
conf_init(unsigned int ncpus)
{
	struct dt_dev_conf conf = { .dcf_ncpus = ncpus, .dcf_ringsize = 64,
	    .dcf_read_done = read_done, .dcf_poll_done = poll_done };

	CHECK(dt_dev_init(&conf) == 0);
}

/* Probe 2 (interval, no argsflag): every function, one key kind. */
static void
test_funcs(void)
{
	const struct dtioc_aggent *e;
	struct dt_softc *a, *b;
	struct dtioc_stat st;
	struct dt_evt src;
	uint64_t over = 0;
	int64_t vals[] = { -5, 0, 1, 3, 4, 9, 250, 99, 100, 3 };
	long n;
	unsigned int i;

	conf_init(2);
	CHECK(dt_dev_open(&root, &a) == 0);
	CHECK(dt_dev_open(&root, &b) == 0);
	CHECK(enable(a, 2, DTEVT_FUNCARGS | DTEVT_EXECNAME) == 0);
	CHECK(enable(b, 2, DTEVT_FUNCARGS) == 0);
	CHECK(spec(a, 2, DTA_COUNT, DTF_COMM, 0, 0) == 0);
	CHECK(spec(a, 2, DTA_SUM, DTF_CPU, DTF_ARG0, 0) == 0);
	CHECK(spec(a, 2, DTA_MIN, 0, DTF_ARG0, 0) == 0);
	CHECK(spec(a, 2, DTA_MAX, 0, DTF_ARG0, 0) == 0);
	CHECK(spec(a, 2, DTA_HIST, 0, DTF_ARG0, 0) == 0);
	CHECK(spec(a, 2, DTA_LHIST, 0, DTF_ARG0, 0) == 0);
	CHECK(record(a, 1) == 0 && record(b, 1) == 0);
	rcu_register_thread();
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		memset(&src, 0, sizeof(src));
		src.dtev_pid = 7;
		src.dtev_args[0] = vals[i];
		/* one comm the reader sees escaped: keyed by its pid too */
		strcpy(src.dtev_comm, i == 0 ? "a\tb" : "prog");
		rcu_read_lock();
		CHECK(dt_pcb_ring_put(a->ds_pcbs, i % 2, &src) == 0);
		CHECK(dt_pcb_ring_put(b->ds_pcbs, i % 2, &src) == 0);
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	n = aggread(a, &over);
	CHECK(over == 0);
	/* count by comm: 9 "prog", one "a\tb" with its pid */
	for (i = 0; i < (unsigned int)n; i++)
		if (ents[i].dtae_id == 1 &&
		    strcmp(ents[i].dtae_comm, "prog") == 0)
			CHECK(ents[i].dtae_count == 9 && ents[i].dtae_pid == 0);
		else if (ents[i].dtae_id == 1)
			CHECK(ents[i].dtae_count == 1 && ents[i].dtae_pid == 7);
	/* sum by cpu: even indexes on 0, odd on 1 */
	for (i = 0; i < (unsigned int)n; i++)
		if (ents[i].dtae_id == 2)
			CHECK(ents[i].dtae_sum == (ents[i].dtae_cpu == 0 ?
			    -5 + 1 + 4 + 250 + 100 : 0 + 3 + 9 + 99 + 3));
	CHECK((e = find(n, 3, 0, 0, 0)) != NULL && e->dtae_min == -5 &&
	    e->dtae_count == 10);
	CHECK((e = find(n, 4, 0, 0, 0)) != NULL && e->dtae_max == 250);
	/* hist: -1 for -5, 0 for 0, 1 for 1, 2 for 3 and 3, 3 for 4 ... */
	CHECK((e = find(n, 5, 0, -1, 0)) != NULL && e->dtae_count == 1);
	CHECK((e = find(n, 5, 0, 2, 0)) != NULL && e->dtae_count == 2);
	CHECK((e = find(n, 5, 0, 8, 0)) != NULL && e->dtae_count == 1);
	/* lhist 0..100 by 10: -5 under, 100 and 250 over, 3 3 1 0 4 9 */
	CHECK((e = find(n, 6, 0, 0, -1)) != NULL && e->dtae_count == 1);
	CHECK((e = find(n, 6, 0, 0, 1)) != NULL && e->dtae_count == 2);
	CHECK((e = find(n, 6, 0, 10, 0)) != NULL && e->dtae_count == 6);
	CHECK((e = find(n, 6, 0, 100, 0)) != NULL && e->dtae_count == 1);
	CHECK(aggread(a, NULL) == 0);		/* emptied by the read */
	/* nothing dropped for a; b, which does not fold, has no table */
	CHECK(dt_dev_ioctl(a, &root, DTIOCGSTATS, &st, &ua) == 0 &&
	    st.dtst_dropevt == 0);
	CHECK(aggread(b, NULL) == 0);
	dt_dev_close(a);
	dt_dev_close(b);
	dt_dev_fini();
}

static struct dtioc_aggstack	stks[64];

/* DTIOCAGGSTACKS of sc from id 1 into stks: how many, or -1. */
static long
stkread(struct dt_softc *sc, uint64_t *overflow)
{
	struct dtioc_aggstkread sr;

	memset(&sr, 0, sizeof(sr));
	sr.dtsr_first = 1;
	sr.dtsr_stks = stks;
	sr.dtsr_size = sizeof(stks);
	ua_lo = (char *)stks;
	ua_hi = (char *)stks + sizeof(stks);
	if (dt_dev_ioctl(sc, &root, DTIOCAGGSTACKS, &sr, &ua) != 0)
		return -1;
	if (overflow != NULL)
		*overflow = sr.dtsr_overflow;
	return sr.dtsr_nstks;
}

/* The count of sc's entry whose kernel stack is the n frames from base. */
static uint64_t
stkcount(long nents, long nstks, unsigned int n, uint64_t base)
{
	const struct dtioc_aggstack *st;
	long i;
	unsigned int j;

	for (i = 0; i < nents; i++) {
		if (ents[i].dtae_kstack == 0 || ents[i].dtae_kstack > nstks)
			continue;
		st = &stks[ents[i].dtae_kstack - 1];
		if (st->dtak_count != n)
			continue;
		for (j = 0; j < n && st->dtak_pc[j] == base + j; j++)
			continue;
		if (j == n)
			return ents[i].dtae_count;
	}
	return 0;
}

static int
stk_put(struct dt_softc *sc, unsigned int nk, uint64_t kbase,
    const struct dt_deepstack *deep)
{
	struct dt_evt src;
	unsigned int j;
	int error;

	memset(&src, 0, sizeof(src));
	src.dtev_pid = 9;
	src.dtev_kstack.st_count = nk;
	for (j = 0; j < nk && j < STACKTRACE_MAX; j++)
		src.dtev_kstack.st_pc[j] = kbase + j;
	src.dtev_ustack.st_count = 2;
	src.dtev_ustack.st_pc[0] = 0x401000;
	src.dtev_ustack.st_pc[1] = 0x401100;
	rcu_read_lock();
	if (deep != NULL)
		error = dt_pcb_ring_put_deep(sc->ds_pcbs, 0, &src, deep, NULL);
	else
		error = dt_pcb_ring_put(sc->ds_pcbs, 0, &src);
	rcu_read_unlock();
	return error;
}

/* Probe 2: @[kstack] = count(), and a table of one stack. */
static void
test_stacks(void)
{
	static struct dt_deepstack deep;
	struct dt_softc *a, *c, *d;
	struct dtioc_aggspec as;
	uint64_t over = 0, sover = 0;
	long n, ns;
	unsigned int i;

	conf_init(2);
	CHECK(dt_dev_open(&root, &a) == 0);
	CHECK(dt_dev_open(&root, &c) == 0);
	CHECK(dt_dev_open(&root, &d) == 0);
	CHECK(enable(a, 2, DTEVT_KSTACK) == 0);
	CHECK(enable(c, 2, DTEVT_KSTACK | DTEVT_DEEPSTACK) == 0);
	CHECK(enable(d, 2, DTEVT_KSTACK | DTEVT_USTACK) == 0);
	/* interval's pcbs keep the four flags; profile's keep deep stacks */
	c->ds_pcbs->dp_evtflags |= DTEVT_DEEPSTACK;
	CHECK(spec(a, 2, DTA_COUNT, DTF_KSTACK, 0, 0) == 0);
	CHECK(spec(c, 2, DTA_COUNT, DTF_KSTACK, 0, 0) == 0);
	memset(&as, 0, sizeof(as));
	as.dtas_pbn = 2;
	as.dtas_func = DTA_COUNT;
	as.dtas_nkeys = 2;
	as.dtas_keys[0] = DTF_USTACK;
	as.dtas_keys[1] = DTF_PID;
	as.dtas_stksize = 1;
	/* the stack table is made on the first spec with a stack key */
	CHECK(dt_dev_ioctl(d, &root, DTIOCPRBAGG, &as, &ua) == 0 &&
	    as.dtas_stksize == 1);
	CHECK(spec(d, 2, DTA_COUNT, DTF_KSTACK, 0, 0) == 0);
	CHECK(record(a, 1) == 0 && record(c, 1) == 0 && record(d, 1) == 0);
	deep.ds_count = 40;
	for (i = 0; i < 40; i++)
		deep.ds_pc[i] = 0x9000 + i;
	rcu_register_thread();
	for (i = 0; i < 5; i++)
		CHECK(stk_put(a, 3, 0x1000, NULL) == 0);
	for (i = 0; i < 3; i++)
		CHECK(stk_put(a, 4, 0x2000, NULL) == 0);
	for (i = 0; i < 2; i++)
		CHECK(stk_put(a, 0, 0, NULL) == 0);
	CHECK(stk_put(a, 40, 0x9000, &deep) == 0);
	CHECK(stk_put(c, 40, 0x9000, &deep) == 0);
	/* the kernel stacks find the one stack taken: refused, said */
	CHECK(stk_put(d, 3, 0x1000, NULL) == ENOBUFS);
	CHECK(stk_put(d, 3, 0x1000, NULL) == ENOBUFS);
	CHECK(stk_put(d, 4, 0x2000, NULL) == ENOBUFS);
	rcu_unregister_thread();

	n = aggread(a, &over);
	ns = stkread(a, &sover);
	/* 3 distinct stacks (the empty one is id 0), 4 entries */
	CHECK(n == 4 && ns == 3 && over == 0 && sover == 0);
	CHECK(stkcount(n, ns, 3, 0x1000) == 5);
	CHECK(stkcount(n, ns, 4, 0x2000) == 3);
	/* a record without DEEPSTACK holds 19 frames: keyed so */
	CHECK(stkcount(n, ns, STACKTRACE_MAX, 0x9000) == 1);
	for (i = 0; i < (unsigned int)n; i++)
		if (ents[i].dtae_kstack == 0)
			CHECK(ents[i].dtae_count == 2);
	/* emptied: the next events start a new generation of ids */
	rcu_register_thread();
	CHECK(stk_put(a, 4, 0x2000, NULL) == 0);
	rcu_unregister_thread();
	n = aggread(a, NULL);
	ns = stkread(a, NULL);
	CHECK(n == 1 && ns == 1 && ents[0].dtae_kstack == 1 &&
	    stkcount(n, ns, 4, 0x2000) == 1);

	/* the open that asked for deep stacks: all 40 frames */
	n = aggread(c, NULL);
	ns = stkread(c, NULL);
	CHECK(n == 1 && ns == 1 && stkcount(n, ns, 40, 0x9000) == 1);

	/*
	 * One stack: the first kernel stack took it (interned before the
	 * user stack), so the ustack aggregation refused all three events
	 * and the kstack one the third: 4 folds refused (the table's
	 * count), 3 events (the stack table's).
	 */
	n = aggread(d, &over);
	ns = stkread(d, &sover);
	CHECK(ns == 1 && sover == 3 && over == 4);
	CHECK(n == 1 && ents[0].dtae_id == 2 && ents[0].dtae_kstack == 1 &&
	    ents[0].dtae_count == 2 && stkcount(n, ns, 3, 0x1000) == 2);
	dt_dev_close(a);
	dt_dev_close(c);
	dt_dev_close(d);
	dt_dev_fini();
}

/* Producers racing a reader that empties the table: none lost. */
#define NPROD		2
#define NPERPROD	200000
#define NKEYS		64
static struct dt_pcb *race_pcb;

static void *
producer(void *arg)
{
	struct dt_evt src;
	uintptr_t cpu = (uintptr_t)arg;
	int i;

	memset(&src, 0, sizeof(src));
	rcu_register_thread();
	for (i = 0; i < NPERPROD; i++) {
		src.dtev_args[0] = i % NKEYS;
		rcu_read_lock();
		dt_pcb_ring_put(race_pcb, (unsigned int)cpu, &src);
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	return NULL;
}

static void
test_race(void)
{
	pthread_t th[NPROD];
	struct dt_softc *sc;
	uint64_t got = 0, sum = 0, over = 1, want = 0;
	long n, k, reads = 0;
	uintptr_t i;

	conf_init(2);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(enable(sc, 2, DTEVT_FUNCARGS) == 0);
	CHECK(spec(sc, 2, DTA_SUM, DTF_ARG0, DTF_ARG0, NKEYS) == 0);
	CHECK(record(sc, 1) == 0);
	race_pcb = sc->ds_pcbs;
	for (i = 0; i < NPROD; i++)
		pthread_create(&th[i], NULL, producer, (void *)i);
	for (;;) {
		int alive = got < NPROD * NPERPROD;

		if ((n = aggread(sc, &over)) < 0)
			break;
		reads++;
		for (k = 0; k < n; k++) {
			got += ents[k].dtae_count;
			sum += (uint64_t)ents[k].dtae_sum;
		}
		if (!alive)
			break;
	}
	for (i = 0; i < NPROD; i++)
		pthread_join(th[i], NULL);
	for (k = 0; k < NPERPROD; k++)
		want += (uint64_t)(k % NKEYS);
	CHECK(got == NPROD * NPERPROD);
	CHECK(sum == NPROD * want);
	CHECK(over == 0);
	printf("race: %ju events folded, read in %ld reads\n",
	    (uintmax_t)got, reads);
	/* a table of 8 for 64 keys: the rest counted, never lost */
	dt_dev_close(sc);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(enable(sc, 2, DTEVT_FUNCARGS) == 0);
	CHECK(spec(sc, 2, DTA_COUNT, DTF_ARG0, 0, 8) == 0);
	CHECK(record(sc, 1) == 0);
	race_pcb = sc->ds_pcbs;
	producer((void *)0);
	n = aggread(sc, &over);
	for (got = 0, k = 0; k < n; k++)
		got += ents[k].dtae_count;
	CHECK(n == 8 && got + over == NPERPROD && over > 0);
	dt_dev_close(sc);
	dt_dev_fini();
}

/* DTIOCAGGREAD of sc into rd, the table not emptied: 0 or an errno. */
static int
aggread_rd(struct dt_softc *sc, struct dtioc_aggread *rd)
{
	rd->dtgr_size = sizeof(ents);
	rd->dtgr_ents = ents;
	ua_lo = (char *)ents;
	ua_hi = (char *)ents + sizeof(ents);
	return dt_dev_ioctl(sc, &root, DTIOCAGGREAD, rd, &ua);
}

/*
 * Counts a kernel counter keeps (dt_pcb_fold_kcount()): dtgr_kcount in
 * dtgr_aggevt's unit, an event once for each count it went into, and
 * nothing of what a full table refused; output only, so a read's
 * struct passed back as it came is read again.
 */
static void
test_kcount(void)
{
	struct dtioc_aggread rd;
	struct dt_softc *a, *b;

	conf_init(2);
	CHECK(dt_dev_open(&root, &a) == 0);
	CHECK(dt_dev_open(&root, &b) == 0);
	CHECK(enable(a, 2, 0) == 0 && enable(b, 2, 0) == 0);
	/* a: two counts, keyless and by CPU; b: by CPU, a table of one */
	CHECK(spec(a, 2, DTA_COUNT, 0, 0, 0) == 0);
	CHECK(spec(a, 2, DTA_COUNT, DTF_CPU, 0, 0) == 0);
	CHECK(spec(b, 2, DTA_COUNT, DTF_CPU, 0, 1) == 0);
	CHECK(record(a, 1) == 0 && record(b, 1) == 0);
	CHECK(dt_pcb_kcount_ok(a->ds_pcbs) && dt_pcb_kcount_ok(b->ds_pcbs));
	dt_pcb_fold_kcount(a->ds_pcbs, 0, 5);
	dt_pcb_fold_kcount(b->ds_pcbs, 0, 3);
	dt_pcb_fold_kcount(b->ds_pcbs, 1, 4);	/* a new key: no room */
	memset(&rd, 0, sizeof(rd));
	CHECK(aggread_rd(a, &rd) == 0 && rd.dtgr_nents == 2 &&
	    rd.dtgr_aggevt == 10 && rd.dtgr_kcount == 10);
	/* the same struct again, dtgr_kcount as the read left it */
	CHECK(rd.dtgr_kcount != 0 && aggread_rd(a, &rd) == 0 &&
	    rd.dtgr_nents == 2 && rd.dtgr_kcount == 10);
	memset(&rd, 0, sizeof(rd));
	CHECK(dt_dev_ioctl(b, &root, DTIOCAGGREAD, &rd, &ua) == 0 &&
	    rd.dtgr_size == sizeof(struct dtioc_aggent) &&
	    rd.dtgr_kcount == 3);
	CHECK(aggread_rd(b, &rd) == 0 && rd.dtgr_nents == 1 &&
	    rd.dtgr_aggevt == 3 && rd.dtgr_kcount == 3 &&
	    rd.dtgr_overflow == 4);
	dt_dev_close(a);
	dt_dev_close(b);
	dt_dev_fini();
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_funcs();
	test_kcount();
	test_stacks();
	test_race();
	return unit_done();
}
