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
 * Unit tests of the device core, driven directly through dt_dev.h the
 * way a front end drives it: every ioctl error path, the size-probing
 * protocols, read completion, parking, cancellation, truncation, ring
 * overflow and the counters.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_softc.h"
#include "unit_check.h"


/* Read completions, by token (an index into this table). */
#define NTOK	8
static pthread_mutex_t	tok_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	tok_cv = PTHREAD_COND_INITIALIZER;
static struct tok {
	int	done;
	int	ncalls;
	int	error;
	size_t	len;
	char	buf[64 * sizeof(struct dt_evt)];
} toks[NTOK];

static void
read_done(void *token, const void *buf, size_t len, int error)
{
	struct tok *t = token;

	pthread_mutex_lock(&tok_mtx);
	t->ncalls++;
	t->done = 1;
	t->error = error;
	t->len = len;
	if (len > sizeof(t->buf))
		len = sizeof(t->buf);
	if (buf != NULL)
		memcpy(t->buf, buf, len);
	pthread_cond_broadcast(&tok_cv);
	pthread_mutex_unlock(&tok_mtx);
}

/* dcf_poll_done: a token's completion, error 1 when ready. */
static void
poll_done(void *ph, bool ready)
{
	read_done(ph, NULL, 0, ready);
}

static void
tok_reset(struct tok *t)
{
	pthread_mutex_lock(&tok_mtx);
	memset(t, 0, sizeof(*t));
	pthread_mutex_unlock(&tok_mtx);
}

/* Wait for a completion, at most secs: a condition, not a sleep. */
static int
tok_wait(struct tok *t, int secs)
{
	struct timespec ts;
	int done;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&tok_mtx);
	while (!t->done &&
	    pthread_cond_timedwait(&tok_cv, &tok_mtx, &ts) != ETIMEDOUT)
		continue;
	done = t->done;
	pthread_mutex_unlock(&tok_mtx);
	return done;
}

/* User memory for the embedded pointers: this process, checked. */
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
static const struct dt_cred user = { 1000, 1000, 2 };

static void
ua_allow(void *p, size_t len)
{
	ua_lo = p;
	ua_hi = (char *)p + len;
}

static int
req(struct dt_softc *sc, const struct dt_cred *cr, unsigned long cmd,
    uint32_t pbn, uint64_t flags, uint64_t nsecs)
{
	struct dtioc_req dtrq = { pbn, 0, flags, nsecs };

	return dt_dev_ioctl(sc, cr, cmd, &dtrq, &ua);
}

static int
record(struct dt_softc *sc, const struct dt_cred *cr, int on)
{
	return dt_dev_ioctl(sc, cr, DTIOCRECORD, &on, &ua);
}

static struct dtioc_stat
stats(struct dt_softc *sc)
{
	struct dtioc_stat st;

	memset(&st, 0xff, sizeof(st));
	if (dt_dev_ioctl(sc, &user, DTIOCGSTATS, &st, &ua) != 0)
		memset(&st, 0xff, sizeof(st));	/* fails every user */
	return st;
}

static void
conf_init(unsigned int ncpus, unsigned int ringsize)
{
	struct dt_dev_conf conf = { .dcf_ncpus = ncpus,
	    .dcf_ringsize = ringsize, .dcf_read_done = read_done,
	    .dcf_poll_done = poll_done };

	CHECK(dt_dev_init(&conf) == 0);
}

static void
test_encodings(void)
{
	unsigned long canon, cmds[] = { DTIOCGPLIST, DTIOCGSTATS,
	    DTIOCRECORD, DTIOCPRBENABLE, DTIOCPRBDISABLE, DTIOCGARGS,
	    DTIOCRDVNODE };
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		canon = 0;
		CHECK(dt_ioctl_argsize(cmds[i], &canon) > 0 &&
		    canon == cmds[i]);
		canon = 0;
		CHECK(dt_ioctl_argsize(DTIOC_OPENBSD(cmds[i]), &canon) > 0 &&
		    canon == cmds[i]);
	}
	CHECK(dt_ioctl_argsize(0x40204402UL, &canon) == 32 &&
	    canon == DTIOCGSTATS);
	CHECK(dt_ioctl_argsize(0x80184404UL, &canon) == 24 &&
	    canon == DTIOCPRBENABLE);
	/* 7 was DTIOCGETAUXBASE: retired, so unknown. */
	CHECK(dt_ioctl_argsize(_IOWR('D', 7, struct dtioc_rdvn), NULL) < 0);
	CHECK(dt_ioctl_argsize(0xC0104407UL, NULL) < 0);
	CHECK(dt_ioctl_argsize(_IOR('D', 2, int), NULL) < 0);
	CHECK(dt_ioctl_argsize(0x5401, NULL) < 0);	/* TCGETS */
}

static void
test_plist(void)
{
	struct dtioc_probe_info *dtpi;
	struct dtioc_probe dtpr;
	struct dt_softc *sc;
	size_t need, i;
	uint32_t n;
	int badpad = 0;

	CHECK(dt_dev_open(&user, &sc) == 0);
	n = dt_dev_nprobes();
	CHECK(n >= 2);

	memset(&dtpr, 0, sizeof(dtpr));
	CHECK(dt_dev_ioctl(sc, &user, DTIOCGPLIST, &dtpr, &ua) == 0);
	need = dtpr.dtpr_size;
	CHECK(need == n * sizeof(struct dtioc_probe_info));

	dtpi = malloc(need);
	memset(dtpi, 0xa5, need);
	ua_allow(dtpi, need);
	dtpr.dtpr_probes = dtpi;
	CHECK(dt_dev_ioctl(sc, &user, DTIOC_OPENBSD(DTIOCGPLIST), &dtpr,
	    &ua) == 0);
	CHECK(dtpr.dtpr_size == need);
	for (i = 0; i < n; i++) {
		const char *e = (const char *)&dtpi[i];

		badpad |= dtpi[i].dtpi_pbn != i + 1;
		/* Bytes after each NUL, and the tail pad, are zero. */
		for (size_t b = strlen(dtpi[i].dtpi_prov) + 5; b < 21; b++)
			badpad |= e[b];
		for (size_t b = 53; b < 56; b++)
			badpad |= e[b];
	}
	CHECK(badpad == 0);
	CHECK(strcmp(dtpi[0].dtpi_prov, "profile") == 0 &&
	    strcmp(dtpi[0].dtpi_func, "hz") == 0 &&
	    strcmp(dtpi[0].dtpi_name, "97") == 0 && dtpi[0].dtpi_nargs == 0);
	CHECK(strcmp(dtpi[1].dtpi_prov, "interval") == 0 &&
	    strcmp(dtpi[1].dtpi_func, "hz") == 0 &&
	    strcmp(dtpi[1].dtpi_name, "1") == 0);

	/* Too small: what fits is copied, then ENOSPC. */
	memset(dtpi, 0, need);
	dtpr.dtpr_size = sizeof(struct dtioc_probe_info) + 10;
	CHECK(dt_dev_ioctl(sc, &user, DTIOCGPLIST, &dtpr, &ua) == ENOSPC);
	CHECK(dtpi[0].dtpi_pbn == 1 && dtpi[1].dtpi_pbn == 0);

	/* A buffer the caller cannot write. */
	dtpr.dtpr_size = need;
	dtpr.dtpr_probes = (void *)(uintptr_t)8;
	CHECK(dt_dev_ioctl(sc, &user, DTIOCGPLIST, &dtpr, &ua) == EFAULT);
	free(dtpi);
	dt_dev_close(sc);
}

static void
test_gargs(void)
{
	struct dtioc_arg_info dtai[DTMAXARGTYPES];
	struct dtioc_arg dtar;
	struct dt_softc *sc;

	CHECK(dt_dev_open(&user, &sc) == 0);
	ua_allow(dtai, sizeof(dtai));
	memset(&dtar, 0, sizeof(dtar));
	CHECK(dt_dev_ioctl(sc, &user, DTIOCGARGS, &dtar, &ua) == EINVAL);
	dtar.dtar_pbn = dt_dev_nprobes() + 1;
	CHECK(dt_dev_ioctl(sc, &user, DTIOCGARGS, &dtar, &ua) == EINVAL);
	dtar.dtar_pbn = 1;
	dtar.dtar_size = sizeof(dtai);
	dtar.dtar_args = dtai;
	CHECK(dt_dev_ioctl(sc, &user, DTIOCGARGS, &dtar, &ua) == 0);
	CHECK(dtar.dtar_size == 0);
	dt_dev_close(sc);
}

static void
test_errors(void)
{
	struct dtioc_rdvn dtrv;
	struct dt_softc *sc;
	uint32_t nprobes = dt_dev_nprobes();
	int junk = 0;

	CHECK(dt_dev_open(&root, &sc) == 0);
	/* Unknown command: ENOTTY, before the privilege check. */
	CHECK(dt_dev_ioctl(sc, &user, _IO('D', 7), &junk, &ua) == ENOTTY);
	CHECK(dt_dev_ioctl(sc, &user, 0xdeadbeef, &junk, &ua) == ENOTTY);

	/* EPERM before any validation. */
	CHECK(req(sc, &user, DTIOCPRBENABLE, 0, 0, 0) == EPERM);
	CHECK(req(sc, &user, DTIOCPRBENABLE, 2, 0, 100000000) == EPERM);
	CHECK(req(sc, &user, DTIOCPRBDISABLE, 2, 0, 0) == EPERM);
	CHECK(record(sc, &user, 1) == EPERM);
	memset(&dtrv, 0, sizeof(dtrv));
	CHECK(dt_dev_ioctl(sc, &user, DTIOCRDVNODE, &dtrv, &ua) == EPERM);

	CHECK(record(sc, &root, 0) == 0);		/* not recording: no-op */
	CHECK(record(sc, &root, 1) == ENOENT);		/* nothing enabled */
	CHECK(req(sc, &root, DTIOCPRBENABLE, 0, 0, 0) == ENOENT);
	CHECK(req(sc, &root, DTIOCPRBENABLE, nprobes + 1, 0, 0) == ENOENT);
	CHECK(req(sc, &root, DTIOCPRBDISABLE, nprobes + 1, 0, 0) == ENOENT);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 199999) == EINVAL);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0,
	    DT_TIMER_NSECS_MAX + 1) == EINVAL);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 1, 0, 0) == EINVAL);
	CHECK(req(sc, &root, DTIOC_OPENBSD(DTIOCPRBENABLE), 2, 0,
	    200000000) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 200000000) == EEXIST);
	CHECK(record(sc, &root, 1) == 0);
	CHECK(record(sc, &root, 1) == EBUSY);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 1, 0, 1000000) == EBUSY);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 0, 0, 0) == EBUSY);
	CHECK(req(sc, &root, DTIOCPRBDISABLE, 2, 0, 0) == EBUSY);
	CHECK(record(sc, &root, 0) == 0);
	CHECK(req(sc, &root, DTIOCPRBDISABLE, 2, 0, 0) == 0);
	/* Disable keeps the pcb (dt(4)): recording may start again. */
	CHECK(record(sc, &root, 1) == 0);
	CHECK(dt_dev_probe(2)->dtp_recording == 1);
	dt_dev_close(sc);
	/* close stopped and unlinked it */
	CHECK(dt_dev_probe(2)->dtp_recording == 0);
	CHECK(cds_list_empty(&dt_dev_probe(2)->dtp_pcbs));
}

static void
test_rdvnode(void)
{
	struct dtioc_rdvn dtrv;
	struct dt_softc *sc;
	int local = 0;

	CHECK(dt_dev_open(&root, &sc) == 0);
	memset(&dtrv, 0, sizeof(dtrv));
	dtrv.dtrv_pid = getpid();
	dtrv.dtrv_va = (caddr_t)(uintptr_t)test_rdvnode;
	CHECK(dt_dev_ioctl(sc, &root, DTIOCRDVNODE, &dtrv, &ua) == 0);
	CHECK((uintptr_t)dtrv.dtrv_start <= (uintptr_t)test_rdvnode);
	CHECK(dtrv.dtrv_len > 0);
	dtrv.dtrv_va = (caddr_t)&local;		/* stack: not executable */
	CHECK(dt_dev_ioctl(sc, &root, DTIOCRDVNODE, &dtrv, &ua) == ENOENT);
	dtrv.dtrv_va = (caddr_t)(uintptr_t)16;	/* unmapped */
	CHECK(dt_dev_ioctl(sc, &root, DTIOCRDVNODE, &dtrv, &ua) == ENOENT);
	dtrv.dtrv_pid = 0x7ffffff0;
	CHECK(dt_dev_ioctl(sc, &root, DTIOCRDVNODE, &dtrv, &ua) == ESRCH);
	dt_dev_close(sc);
}

/* The interval provider end to end: real ticks from the clock thread. */
static void
test_interval_read(void)
{
	struct dt_softc *sc, *other;
	struct dt_evt *ev;
	struct dtioc_stat st;
	struct timespec t0, t1;
	size_t i, n;
	int bad = 0;

	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(dt_dev_open(&root, &other) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, DTEVT_EXECNAME, 1000000) == 0);
	clock_gettime(CLOCK_REALTIME, &t0);
	CHECK(record(sc, &root, 1) == 0);

	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
	CHECK(tok_wait(&toks[0], 5));
	CHECK(record(sc, &root, 0) == 0);
	clock_gettime(CLOCK_REALTIME, &t1);
	CHECK(toks[0].ncalls == 1 && toks[0].error == 0);
	CHECK(toks[0].len > 0 && toks[0].len % sizeof(struct dt_evt) == 0);
	n = toks[0].len / sizeof(struct dt_evt);
	ev = (struct dt_evt *)toks[0].buf;
	for (i = 0; i < n; i++) {
		bad |= ev[i].dtev_pbn != 2;
		bad |= ev[i].dtev_pid != getpid();
		bad |= ev[i].dtev_tid == getpid() || ev[i].dtev_tid == 0;
		bad |= strcmp(ev[i].dtev_comm, "dtd") != 0;
		bad |= ev[i].dtev_kstack.st_count != 0;
		bad |= ev[i].dtev_tsp.tv_sec < t0.tv_sec ||
		    ev[i].dtev_tsp.tv_sec > t1.tv_sec;
	}
	CHECK(bad == 0);

	/* Drain, then the counters add up. */
	tok_reset(&toks[1]);
	dt_dev_read(sc, sizeof(toks[1].buf), &toks[1]);
	if (!toks[1].done)
		CHECK(dt_dev_read_cancel(sc, &toks[1], EINTR));
	st = stats(sc);
	CHECK(st.dtst_readevt == n + (toks[1].error ? 0 :
	    toks[1].len / sizeof(struct dt_evt)));
	CHECK(st.dtst_dropevt == 0);

	/* The other open saw nothing and parks. */
	st = stats(other);
	CHECK(st.dtst_readevt == 0 && st.dtst_dropevt == 0);
	tok_reset(&toks[2]);
	dt_dev_read(other, 456, &toks[2]);
	CHECK(!toks[2].done);
	dt_dev_close(other);			/* parked read: EIO */
	CHECK(toks[2].done && toks[2].error == EIO && toks[2].ncalls == 1);
	dt_dev_close(sc);
}

/* Put events by hand into a 16-slot ring: dt(4)'s 15-event capacity. */
static void
test_ring16(void)
{
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt src, *ev;
	struct dtioc_stat st;
	int i, drops = 0;

	conf_init(2, DT_RINGSIZE_OPENBSD);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, DTEVT_EXECNAME, 1000000000) == 0);
	dp = sc->ds_pcbs;
	CHECK(dp != NULL);

	memset(&src, 0, sizeof(src));
	src.dtev_pid = 42;
	src.dtev_tid = 43;
	strcpy(src.dtev_comm, "a-command-name-that-is-l");	/* 24 chars */
	src.dtev_kstack.st_count = 3;
	src.dtev_ustack.st_count = 4;
	src.dtev_args[0] = 7;

	rcu_register_thread();
	rcu_read_lock();
	for (i = 0; i < 20; i++)
		drops += dt_pcb_ring_put(dp, 0, &src) != 0;
	CHECK(dt_pcb_ring_put(dp, 3, &src) == 0);	/* cpu 3 -> ring 1 */
	dt_pcb_count_skiptick(dp, 0, 2);
	dt_pcb_count_skiptick(dp, 1, 3);
	dt_pcb_count_recurevt(dp, 1, 5);
	rcu_read_unlock();
	CHECK(drops == 5);

	st = stats(sc);
	CHECK(st.dtst_dropevt == 5 && st.dtst_readevt == 0);
	CHECK(st.dtst_skiptick == 5 && st.dtst_recurevt == 5);

	/* A short buffer: whole records then one truncated, consumed. */
	tok_reset(&toks[0]);
	dt_dev_read(sc, 2 * sizeof(struct dt_evt) + 100, &toks[0]);
	CHECK(toks[0].done && toks[0].len == 2 * sizeof(struct dt_evt) + 100);
	st = stats(sc);
	CHECK(st.dtst_readevt == 3);

	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
	CHECK(toks[0].done && toks[0].len == 13 * sizeof(struct dt_evt));
	ev = (struct dt_evt *)toks[0].buf;
	/* Only EXECNAME was asked: no stacks, no args; comm truncated. */
	CHECK(ev[0].dtev_pbn == 2 && ev[0].dtev_pid == 42 &&
	    ev[0].dtev_tid == 43);
	CHECK(ev[0].dtev_kstack.st_count == 0 &&
	    ev[0].dtev_ustack.st_count == 0);
	CHECK(strcmp(ev[0].dtev_comm, "a-command-name-that-is-") == 0);
	/* interval's args are not FUNCARGS-gated: copied as given. */
	CHECK(ev[0].dtev_args[0] == 7);
	/* Rotating start: whichever ring came first, both were drained. */
	st = stats(sc);
	CHECK(st.dtst_readevt == 16);

	/* FUNCARGS gating, as a syscall entry probe would have it. */
	dt_dev_probe(2)->dtp_argsflag = DTEVT_FUNCARGS;
	rcu_read_lock();
	CHECK(dt_pcb_ring_put(dp, 0, &src) == 0);
	rcu_read_unlock();
	dt_dev_probe(2)->dtp_argsflag = 0;
	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
	CHECK(toks[0].done && toks[0].len == sizeof(struct dt_evt));
	CHECK(ev[0].dtev_args[0] == 0);

	/* Stacks reach a reader bounded and zero past st_count. */
	{
		struct dt_softc *ssc;
		struct dt_evt bad = src;

		CHECK(dt_dev_open(&root, &ssc) == 0);
		CHECK(req(ssc, &root, DTIOCPRBENABLE, 1, DTEVT_KSTACK |
		    DTEVT_USTACK, 1000000) == 0);
		bad.dtev_kstack.st_count = 1000;
		memset(bad.dtev_kstack.st_pc, 0xee,
		    sizeof(bad.dtev_kstack.st_pc));
		bad.dtev_ustack.st_count = 2;
		memset(bad.dtev_ustack.st_pc, 0xee,
		    sizeof(bad.dtev_ustack.st_pc));
		rcu_read_lock();
		CHECK(dt_pcb_ring_put(ssc->ds_pcbs, 0, &bad) == 0);
		rcu_read_unlock();
		tok_reset(&toks[0]);
		dt_dev_read(ssc, sizeof(toks[0].buf), &toks[0]);
		CHECK(toks[0].done && toks[0].len == sizeof(struct dt_evt));
		CHECK(ev[0].dtev_kstack.st_count == STACKTRACE_MAX);
		CHECK(ev[0].dtev_ustack.st_count == 2 &&
		    ev[0].dtev_ustack.st_pc[1] != 0 &&
		    ev[0].dtev_ustack.st_pc[2] == 0 &&
		    ev[0].dtev_ustack.st_pc[STACKTRACE_MAX - 1] == 0);
		CHECK(ev[0].dtev_comm[0] == '\0');	/* not asked */
		dt_dev_close(ssc);
	}

	/* Park, then a put from a producer wakes the reader. */
	tok_reset(&toks[1]);
	dt_dev_read(sc, sizeof(toks[1].buf), &toks[1]);
	CHECK(!toks[1].done);
	rcu_read_lock();
	dt_pcb_ring_put(dp, 1, &src);
	rcu_read_unlock();
	CHECK(tok_wait(&toks[1], 5));
	CHECK(toks[1].len == sizeof(struct dt_evt) && toks[1].ncalls == 1);
	CHECK(!dt_dev_read_cancel(sc, &toks[1], EINTR));

	/* Cancel: EINTR once; a second cancel finds nothing. */
	tok_reset(&toks[2]);
	dt_dev_read(sc, 456, &toks[2]);
	CHECK(!toks[2].done);
	CHECK(dt_dev_read_cancel(sc, &toks[2], EINTR));
	CHECK(toks[2].done && toks[2].error == EINTR && toks[2].ncalls == 1);
	CHECK(!dt_dev_read_cancel(sc, &toks[2], EINTR));

	/*
	 * Cancel without an error (the reader only stops): an empty
	 * completion, no error, once.
	 */
	tok_reset(&toks[2]);
	dt_dev_read(sc, 456, &toks[2]);
	CHECK(!toks[2].done);
	CHECK(dt_dev_read_cancel(sc, &toks[2], 0));
	CHECK(toks[2].done && toks[2].error == 0 && toks[2].len == 0 &&
	    toks[2].ncalls == 1);
	CHECK(!dt_dev_read_cancel(sc, &toks[2], 0));

	/*
	 * poll: nothing ready; the handle kept is woken by the next
	 * record, which stays for the read; a newer handle lets the older
	 * go; close lets the last go.
	 */
	tok_reset(&toks[2]);
	tok_reset(&toks[3]);
	CHECK(!dt_dev_poll(sc, NULL));
	CHECK(!dt_dev_poll(sc, &toks[2]));
	CHECK(!toks[2].done);
	rcu_read_lock();
	dt_pcb_ring_put(dp, 1, &src);
	rcu_read_unlock();
	CHECK(tok_wait(&toks[2], 5));
	CHECK(toks[2].error == 1 && toks[2].ncalls == 1);
	CHECK(dt_dev_poll(sc, &toks[3]));
	CHECK(toks[3].done && toks[3].error == 0);
	tok_reset(&toks[2]);
	dt_dev_read(sc, sizeof(toks[2].buf), &toks[2]);
	CHECK(toks[2].done && toks[2].len == sizeof(struct dt_evt));
	tok_reset(&toks[2]);
	tok_reset(&toks[4]);
	CHECK(!dt_dev_poll(sc, &toks[2]));
	CHECK(!dt_dev_poll(sc, &toks[4]));
	CHECK(toks[2].done && toks[2].error == 0 && !toks[4].done);

	/* Parked reads at shutdown complete with EIO. */
	tok_reset(&toks[3]);
	dt_dev_read(sc, 456, &toks[3]);
	rcu_unregister_thread();
	dt_dev_fini();
	CHECK(toks[3].done && toks[3].error == EIO);
	CHECK(toks[4].done && toks[4].error == 0 && toks[4].ncalls == 1);
}

/*
 * A read hands out the oldest record at the rings' heads first: records
 * of two CPUs come interleaved in time, each CPU's still in its order,
 * one out of time order on its CPU included.
 */

/* A comparison term of a filter at the source. */
static struct dtioc_filter_term
fterm(uint8_t op, uint8_t field, int64_t val, const char *str)
{
	struct dtioc_filter_term t;

	memset(&t, 0, sizeof(t));
	t.dtft_op = op;
	t.dtft_field = field;
	t.dtft_val = val;
	if (str != NULL)
		snprintf(t.dtft_str, sizeof(t.dtft_str), "%s", str);
	return t;
}

static int
setfilter(struct dt_softc *sc, uint32_t pbn, const struct dtioc_filter_term *t,
    uint32_t n)
{
	static struct dtioc_filter f;

	memset(&f, 0, sizeof(f));
	f.dtfl_pbn = pbn;
	f.dtfl_nterms = n;
	memcpy(f.dtfl_terms, t, n * sizeof(*t));
	return dt_dev_ioctl(sc, &root, DTIOCPRBFILTER, &f, &ua);
}

/* The tags (dtev_tsp.tv_nsec) of the events sc can read now, as a mask. */
static unsigned long
read_tags(struct dt_softc *sc)
{
	struct dt_evt *ev = (struct dt_evt *)toks[0].buf;
	unsigned long mask = 0;
	size_t i;

	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
	if (!toks[0].done)
		return ~0UL;
	for (i = 0; i < toks[0].len / sizeof(*ev); i++)
		mask |= 1UL << ev[i].dtev_tsp.tv_nsec;
	return mask;
}

static uint64_t
filtered(struct dt_softc *sc)
{
	struct dtioc_statx sx;

	memset(&sx, 0xff, sizeof(sx));
	if (dt_dev_ioctl(sc, &user, DTIOCGSTATSX, &sx, &ua) != 0)
		return ~0ULL;
	return sx.dtsx_filtevt;
}

static uint64_t
lateevts(struct dt_softc *sc)
{
	struct dtioc_statx sx;

	memset(&sx, 0xff, sizeof(sx));
	if (dt_dev_ioctl(sc, &root, DTIOCGSTATSX, &sx, &ua) != 0)
		return ~0ULL;
	return sx.dtsx_lateevt;
}

/*
 * Filters at the source: each open of one probe gets exactly what its
 * own filter keeps, what a filter rejected takes no slot and is counted
 * apart from drops, and malformed programs are refused.
 */
static void
test_filter(void)
{
	struct dt_softc *a, *b, *c, *d;
	struct dtioc_filter_term t[DTF_MAXTERMS + 1];
	struct dt_evt src[8];
	struct dtioc_stat st;
	unsigned long cmd;
	unsigned int i;
	int on = 1;

	conf_init(2, 64);
	CHECK(dt_dev_open(&root, &a) == 0);
	CHECK(dt_dev_open(&root, &b) == 0);
	CHECK(dt_dev_open(&root, &c) == 0);
	CHECK(dt_dev_open(&root, &d) == 0);
	CHECK(req(a, &root, DTIOCPRBENABLE, 2, DTEVT_EXECNAME, 1000000000) == 0);
	CHECK(req(b, &root, DTIOCPRBENABLE, 2, DTEVT_EXECNAME, 1000000000) == 0);
	CHECK(req(c, &root, DTIOCPRBENABLE, 2, DTEVT_EXECNAME, 1000000000) == 0);
	/* d does not record comm: a comm comparison cannot reject there */
	CHECK(req(d, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);

	/* both encodings; the extension is unknown to --abi 1.14 alone */
	cmd = 0;
	CHECK(dt_ioctl_argsize(DTIOC_OPENBSD(DTIOCPRBFILTER), &cmd) ==
	    (int)sizeof(struct dtioc_filter) && cmd == DTIOCPRBFILTER);
	CHECK(dt_ioctl_argsize(DTIOC_OPENBSD(DTIOCGSTATSX), &cmd) ==
	    (int)sizeof(struct dtioc_statx) && cmd == DTIOCGSTATSX);

	/* malformed programs */
	t[0] = fterm(DTF_OP_EQ, DTF_PID, 1, NULL);
	t[1] = fterm(DTF_OP_AND, 0, 0, NULL);
	CHECK(setfilter(a, 2, t, 2) == EINVAL);		/* underflow */
	t[1] = fterm(DTF_OP_EQ, DTF_TID, 1, NULL);
	CHECK(setfilter(a, 2, t, 2) == EINVAL);		/* two left */
	t[1] = fterm(DTF_OP_LT, DTF_COMM, 0, "x");
	CHECK(setfilter(a, 2, t + 1, 1) == EINVAL);	/* comm < */
	t[1] = fterm(DTF_OP_EQ, DTF_ARG0 + DTMAXFUNCARGS, 0, NULL);
	CHECK(setfilter(a, 2, t + 1, 1) == EINVAL);	/* no arg10 */
	t[1] = fterm(42, DTF_PID, 0, NULL);
	CHECK(setfilter(a, 2, t + 1, 1) == EINVAL);	/* no such op */
	t[1] = fterm(DTF_OP_EQ, DTF_COMM, 0, NULL);
	memset(t[1].dtft_str, 'x', sizeof(t[1].dtft_str));
	CHECK(setfilter(a, 2, t + 1, 1) == EINVAL);	/* no NUL */
	t[1] = fterm(DTF_OP_EQ, DTF_PID, 0, NULL);
	t[1].dtft_flags = 0x80;
	CHECK(setfilter(a, 2, t + 1, 1) == EINVAL);	/* unknown flag */
	for (i = 0; i < DTF_MAXTERMS + 1; i++)
		t[i] = fterm(DTF_OP_CONST, 0, 1, NULL);
	{
		static struct dtioc_filter big;

		memset(&big, 0, sizeof(big));
		big.dtfl_pbn = 2;
		big.dtfl_nterms = DTF_MAXTERMS + 1;
		CHECK(dt_dev_ioctl(a, &root, DTIOCPRBFILTER, &big, &ua) ==
		    EINVAL);
	}
	t[0] = fterm(DTF_OP_EQ, DTF_PID, 1, NULL);
	CHECK(setfilter(a, 1, t, 1) == ENOENT);		/* not enabled */
	CHECK(dt_dev_ioctl(a, &user, DTIOCPRBFILTER, t, &ua) == EPERM);

	/* a: pid == 42 && comm == "dd" */
	t[0] = fterm(DTF_OP_EQ, DTF_PID, 42, NULL);
	t[1] = fterm(DTF_OP_EQ, DTF_COMM, 0, "dd");
	t[2] = fterm(DTF_OP_AND, 0, 0, NULL);
	CHECK(setfilter(a, 2, t, 3) == 0);
	/* b: (int)arg0 == -1 || tid >= 50; set twice, the last one holds */
	t[0] = fterm(DTF_OP_EQ, DTF_PID, 7, NULL);
	CHECK(setfilter(b, 2, t, 1) == 0);
	t[0] = fterm(DTF_OP_EQ, DTF_ARG0, -1, NULL);
	t[0].dtft_flags = DTF_F_INT32;
	t[1] = fterm(DTF_OP_GE, DTF_TID, 50, NULL);
	t[2] = fterm(DTF_OP_OR, 0, 0, NULL);
	CHECK(setfilter(b, 2, t, 3) == 0);
	/* c: none (set, then removed) */
	CHECK(setfilter(c, 2, t, 3) == 0);
	CHECK(setfilter(c, 2, t, 0) == 0);
	/* d: comm != "dd" && cpu == 1 && probe == 2 */
	t[0] = fterm(DTF_OP_NE, DTF_COMM, 0, "dd");
	t[1] = fterm(DTF_OP_EQ, DTF_CPU, 1, NULL);
	t[2] = fterm(DTF_OP_AND, 0, 0, NULL);
	t[3] = fterm(DTF_OP_EQ, DTF_PBN, 2, NULL);
	t[4] = fterm(DTF_OP_AND, 0, 0, NULL);
	CHECK(setfilter(d, 2, t, 5) == 0);

	/* tag i in tv_nsec */
	memset(src, 0, sizeof(src));
	for (i = 0; i < 8; i++) {
		src[i].dtev_tsp.tv_nsec = i;
		src[i].dtev_pid = 42;
		src[i].dtev_tid = 43;
		strcpy(src[i].dtev_comm, "dd");
	}
	src[1].dtev_pid = 41;				/* a: no */
	strcpy(src[2].dtev_comm, "ls");			/* a: no */
	src[3].dtev_comm[0] = '\0';			/* a: unknown, yes */
	strcpy(src[4].dtev_comm, "d\td");		/* a: escaped, yes */
	src[5].dtev_args[0] = 0xffffffffL;		/* b: (int) -1 */
	src[6].dtev_tid = 50;				/* b: yes */
	src[7].dtev_args[0] = -1;			/* b: (int) -1 */

	rcu_register_thread();
	rcu_read_lock();
	for (i = 0; i < 8; i++) {
		CHECK(dt_pcb_ring_put(a->ds_pcbs, i, &src[i]) == 0);
		CHECK(dt_pcb_ring_put(b->ds_pcbs, i, &src[i]) == 0);
		CHECK(dt_pcb_ring_put(c->ds_pcbs, i, &src[i]) == 0);
		/* cpu i goes to ring i % 2: the reader's cpu */
		CHECK(dt_pcb_ring_put(d->ds_pcbs, i, &src[i]) == 0);
	}
	rcu_read_unlock();

	CHECK(read_tags(a) == 0x01UL + 0x08 + 0x10 + 0x20 + 0x40 + 0x80);
	CHECK(read_tags(b) == 0xe0UL);
	CHECK(read_tags(c) == 0xffUL);
	/* d saw no comm: only cpu decides (odd tags' rings) */
	CHECK(read_tags(d) == 0xaaUL);
	CHECK(filtered(a) == 2 && filtered(b) == 5 && filtered(c) == 0 &&
	    filtered(d) == 4);
	st = stats(a);
	CHECK(st.dtst_readevt == 6 && st.dtst_dropevt == 0);

	/* no change while recording */
	CHECK(dt_dev_ioctl(c, &root, DTIOCRECORD, &on, &ua) == 0);
	CHECK(setfilter(c, 2, t, 5) == EBUSY);
	on = 0;
	CHECK(dt_dev_ioctl(c, &root, DTIOCRECORD, &on, &ua) == 0);

	dt_dev_close(a);
	dt_dev_close(b);
	dt_dev_close(c);
	dt_dev_close(d);
	rcu_unregister_thread();
	dt_dev_fini();
}

static void
test_merge(void)
{
	/* cpu, time: ring 1 holds 7 before 6. */
	static const int put[][2] = { { 0, 1 }, { 0, 4 }, { 0, 8 },
	    { 1, 2 }, { 1, 3 }, { 1, 7 }, { 1, 6 }, { 1, 9 } };
	static const int64_t want[] = { 1, 2, 3, 4, 7, 6, 8, 9 };
	struct dt_softc *sc;
	struct dt_evt src, *ev = (struct dt_evt *)toks[0].buf;
	size_t i, n = sizeof(want) / sizeof(want[0]);
	int inorder = 1;

	conf_init(2, DT_RINGSIZE_OPENBSD);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);
	memset(&src, 0, sizeof(src));
	rcu_register_thread();
	rcu_read_lock();
	for (i = 0; i < n; i++) {
		src.dtev_tsp.tv_sec = 100 + put[i][1] / 2;
		src.dtev_tsp.tv_nsec = put[i][1] % 2;
		src.dtev_args[0] = put[i][1];
		CHECK(dt_pcb_ring_put(sc->ds_pcbs, (unsigned int)put[i][0],
		    &src) == 0);
	}
	rcu_read_unlock();
	/* Two reads, so both rotations of the first ring are seen. */
	tok_reset(&toks[0]);
	dt_dev_read(sc, 3 * sizeof(struct dt_evt), &toks[0]);
	CHECK(toks[0].done && toks[0].len == 3 * sizeof(struct dt_evt));
	for (i = 0; i < 3; i++)
		inorder &= ev[i].dtev_args[0] == want[i];
	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
	CHECK(toks[0].done && toks[0].len == (n - 3) * sizeof(struct dt_evt));
	for (i = 3; i < n; i++)
		inorder &= ev[i - 3].dtev_args[0] == want[i];
	CHECK(inorder);
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
}

/*
 * Replies straight from the rings' slots (dcf_read_iov): a front end's
 * copy of the runs, or a refusal, which sends the read to the staged
 * path.  [tok_mtx] for the copy.
 */
#define IOV_NEV		2100
static struct {
	int		 refuse;	/* the front end takes none */
	int		 ncalls;
	unsigned int	 niov;
	size_t		 len;
	struct dt_evt	 ev[IOV_NEV];
} iovr;

static bool
read_iov(void *token, const struct iovec *iov, unsigned int niov, size_t len)
{
	size_t at = 0;
	unsigned int i;

	if (iovr.refuse)
		return false;
	iovr.ncalls++;
	iovr.niov = niov;
	iovr.len = len;
	for (i = 0; i < niov; i++) {
		if (at + iov[i].iov_len <= sizeof(iovr.ev))
			memcpy((char *)iovr.ev + at, iov[i].iov_base,
			    iov[i].iov_len);
		at += iov[i].iov_len;
	}
	CHECK(at == len);
	read_done(token, NULL, len, 0);
	return true;
}

/*
 * Records of two CPUs whose times alternate, so that each run of a
 * reply is one record: read through dcf_read_iov they come in time
 * order, a reply at most 1023 runs (IOV_MAX less FUSE's header), the
 * rest at the next read; read by a front end that refuses, staged, the
 * same bytes.
 */
static void
test_read_iov(void)
{
	static struct dt_evt staged[64];
	struct dt_dev_conf conf = { .dcf_ncpus = 2, .dcf_ringsize = 2048,
	    .dcf_read_done = read_done, .dcf_read_iov = read_iov,
	    .dcf_poll_done = poll_done };
	struct dt_softc *sc;
	struct dt_evt src;
	size_t i, got = 0, n;
	int inorder = 1, same = 1;

	CHECK(dt_dev_init(&conf) == 0);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);
	memset(&src, 0, sizeof(src));
	rcu_register_thread();
	rcu_read_lock();
	for (i = 0; i < IOV_NEV; i++) {
		src.dtev_tsp.tv_sec = 100 + (time_t)(i / 1000);
		src.dtev_tsp.tv_nsec = (long)(i % 1000);
		src.dtev_args[0] = (uint64_t)i;
		CHECK(dt_pcb_ring_put(sc->ds_pcbs, (unsigned int)(i % 2),
		    &src) == 0);
	}
	rcu_read_unlock();
	/* Through the front end's iovecs: 1023 runs a reply at most. */
	iovr.refuse = 0;
	iovr.ncalls = 0;
	tok_reset(&toks[0]);
	dt_dev_read(sc, DT_READ_MAX, &toks[0]);
	CHECK(toks[0].done && iovr.ncalls == 1 && iovr.niov == 1023 &&
	    iovr.len == 1023 * sizeof(struct dt_evt));
	for (i = 0; i < iovr.len / sizeof(struct dt_evt); i++)
		inorder &= iovr.ev[i].dtev_args[0] == (long)(got + i);
	got += iovr.len / sizeof(struct dt_evt);
	tok_reset(&toks[0]);
	dt_dev_read(sc, DT_READ_MAX, &toks[0]);
	CHECK(toks[0].done && iovr.ncalls == 2 && iovr.niov == 1023);
	for (i = 0; i < iovr.len / sizeof(struct dt_evt); i++)
		inorder &= iovr.ev[i].dtev_args[0] == (long)(got + i);
	got += iovr.len / sizeof(struct dt_evt);
	/* Refused: the same records, staged. */
	iovr.refuse = 1;
	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(staged), &toks[0]);
	n = toks[0].len / sizeof(struct dt_evt);
	CHECK(toks[0].done && iovr.ncalls == 2 && n == IOV_NEV - got);
	memcpy(staged, toks[0].buf, n * sizeof(struct dt_evt));
	for (i = 0; i < n; i++)
		same &= staged[i].dtev_args[0] == (long)(got + i);
	CHECK(inorder);
	CHECK(same);
	CHECK(stats(sc).dtst_readevt == IOV_NEV);
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
}

/* The sequencer's clock, set by the test: no sleeping for D. */
static uint64_t	seq_fake_now;

static uint64_t
seq_now(void)
{
	return __atomic_load_n(&seq_fake_now, __ATOMIC_RELAXED);
}

static void
seq_ev(struct dt_evt *ev, uint64_t ns, long tag)
{
	memset(ev, 0, sizeof(*ev));
	ev->dtev_tsp.tv_sec = (time_t)(ns / 1000000000ULL);
	ev->dtev_tsp.tv_nsec = (long)(ns % 1000000000ULL);
	ev->dtev_args[0] = tag;
}

/*
 * Read what is there now (a parked read is cancelled empty) and check
 * that it is the tags want[0..n-1], in that order.
 */
static int
seq_read(struct dt_softc *sc, const long *want, size_t n)
{
	struct dt_evt *ev = (struct dt_evt *)toks[0].buf;
	size_t i, got;
	int ok;

	tok_reset(&toks[0]);
	dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
	if (!toks[0].done)
		dt_dev_read_cancel(sc, &toks[0], 0);
	got = toks[0].len / sizeof(struct dt_evt);
	ok = got == n;
	for (i = 0; ok && i < n; i++)
		ok = ev[i].dtev_args[0] == want[i];
	if (!ok) {
		printf("seq_read: got");
		for (i = 0; i < got; i++)
			printf(" %ld", ev[i].dtev_args[0]);
		printf(", want %zu\n", n);
	}
	return ok;
}

/*
 * The sequencer: two sources whose events interleave in time, pushed
 * each source's after the other's, to a probe on CPU 0 and a pcb on
 * CPU 1, come out in time order across two reads once both marked; a
 * source that goes silent holds the other back for D only, or for
 * DT_SEQ_PATIENT_NS if it says it is held back (dt_source_patient()),
 * but no longer; a late event goes at once
 * and is counted; a stop flushes what is held for the open.
 */
static void
test_seq(void)
{
	static const long first[] = { 1, 2, 3 }, second[] = { 4 },
	    third[] = { 5, 6, 7 }, late[] = { 2 }, stop[] = { 100, 101 };
	const uint64_t base = 1000000000000ULL;	/* 1000 s */
	struct dt_seq_stats st0, st;
	struct dt_source *a, *b;
	struct dt_probe *dtp;
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt ev;
	long t;

	seq_fake_now = base + 30000000ULL;	/* the events are 30 ms old */
	dt_seq_clock_set(seq_now, 50000000ULL);
	conf_init(2, 64);
	CHECK(dt_dev_open(&root, &sc) == 0);
	/* interval:hz:1, never firing while the test runs */
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000000ULL) == 0);
	CHECK(record(sc, &root, 1) == 0);
	dp = sc->ds_pcbs;
	dtp = dp->dp_dtp;
	rcu_register_thread();
	dt_seq_stats(&st0);
	CHECK((a = dt_source_add("test-a")) != NULL);
	CHECK((b = dt_source_add("test-b")) != NULL);
	dt_source_mark(a, base);
	dt_source_mark(b, base);

	/* a: 1 3 5 to the probe (CPU 0); b: 2 4 6 to the pcb (CPU 1). */
	rcu_read_lock();
	for (t = 1; t <= 5; t += 2) {
		seq_ev(&ev, base + (uint64_t)t * 1000, t);
		dt_seq_emit(a, dtp, 0, &ev);
	}
	for (t = 2; t <= 6; t += 2) {
		seq_ev(&ev, base + (uint64_t)t * 1000, t);
		dt_seq_put(b, dp, 1, &ev);
	}
	rcu_read_unlock();
	CHECK(!dt_dev_poll(sc, NULL));		/* all held */
	dt_source_mark(a, base + 4000);		/* b still at base */
	CHECK(!dt_dev_poll(sc, NULL));
	dt_source_mark(b, base + 3500);
	CHECK(seq_read(sc, first, 3));

	/* b moves on, a says nothing: 4 goes, 5 and 6 wait for a. */
	seq_ev(&ev, base + 7000, 7);
	rcu_read_lock();
	dt_seq_put(b, dp, 1, &ev);
	rcu_read_unlock();
	dt_source_mark(b, base + 10000);
	CHECK(seq_read(sc, second, 1));
	CHECK(seq_read(sc, NULL, 0));
	/*
	 * a is held back, not stuck (a drain behind a slow lossless
	 * reader): D later, 5 and 6 still wait for it, and 7 with them.
	 */
	dt_source_patient(a, true);
	__atomic_store_n(&seq_fake_now, base + 7000 + 50000000ULL,
	    __ATOMIC_RELAXED);
	dt_seq_tick();
	CHECK(seq_read(sc, NULL, 0));
	/* The wakeup thread sleeps until a's own bound, not spinning. */
	CHECK(dt_seq_wait_ns() == DT_SEQ_PATIENT_NS - 50000000ULL - 2000);
	/*
	 * But a says so on its tracees' word (a forged stamp, a reader that
	 * stays slow): DT_SEQ_PATIENT_NS later, b's 6 and 7 go, with 5.
	 */
	__atomic_store_n(&seq_fake_now, base + 7000 + DT_SEQ_PATIENT_NS - 1,
	    __ATOMIC_RELAXED);
	dt_seq_tick();
	CHECK(seq_read(sc, third, 2));
	__atomic_store_n(&seq_fake_now, base + 7000 + DT_SEQ_PATIENT_NS,
	    __ATOMIC_RELAXED);
	dt_seq_tick();
	CHECK(seq_read(sc, third + 2, 1));
	dt_source_patient(a, false);
	/* Back to D past 7, for the rest, which D must not free yet. */
	__atomic_store_n(&seq_fake_now, base + 7000 + 50000000ULL,
	    __ATOMIC_RELAXED);
	dt_seq_stats(&st);
	CHECK(st.dss_forced - st0.dss_forced == 3);

	/* Older than 7, which a reader had: at once, and counted. */
	CHECK(lateevts(sc) == 0);
	seq_ev(&ev, base + 2000, 2);
	rcu_read_lock();
	dt_seq_emit(a, dtp, 0, &ev);
	rcu_read_unlock();
	CHECK(seq_read(sc, late, 1));
	dt_seq_stats(&st);
	CHECK(st.dss_late - st0.dss_late == 1);
	/* ... and the open that got it is told (DTIOCGSTATSX). */
	CHECK(lateevts(sc) == 1);

	/* Held at the stop, for the pcb and for the probe: flushed. */
	dt_source_mark(b, base + 8000);
	dt_source_mark(a, base + 8000);
	rcu_read_lock();
	seq_ev(&ev, base + 101000, 101);
	dt_seq_emit(a, dtp, 0, &ev);
	seq_ev(&ev, base + 100000, 100);
	dt_seq_put(b, dp, 1, &ev);
	rcu_read_unlock();
	CHECK(!dt_dev_poll(sc, NULL));
	CHECK(record(sc, &root, 0) == 0);
	CHECK(seq_read(sc, stop, 2));
	dt_seq_stats(&st);
	/* The probe's stays for its other opens (none): D frees it. */
	CHECK(st.dss_held == 1);
	dt_source_idle(a);
	dt_source_idle(b);
	dt_seq_tick();
	dt_seq_stats(&st);
	CHECK(st.dss_held == 0 && st.dss_active == 0);
	CHECK(seq_read(sc, NULL, 0));
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
	dt_seq_clock_set(NULL, 0);
}

/* Every record readable now, tags into tags[] (up to max): how many. */
static size_t
seq_drain(struct dt_softc *sc, long *tags, uint64_t *ns, size_t max)
{
	struct dt_evt *ev = (struct dt_evt *)toks[0].buf;
	size_t i, got, n = 0;

	for (;;) {
		tok_reset(&toks[0]);
		dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
		if (!toks[0].done)
			dt_dev_read_cancel(sc, &toks[0], 0);
		got = toks[0].len / sizeof(struct dt_evt);
		if (got == 0)
			return n;
		for (i = 0; i < got && n < max; i++, n++) {
			tags[n] = ev[i].dtev_args[0];
			ns[n] = (uint64_t)ev[i].dtev_tsp.tv_sec * 1000000000ULL +
			    (uint64_t)ev[i].dtev_tsp.tv_nsec;
		}
	}
}

#define SEQ_MIX_N	1500

/*
 * In time order, every one, whatever the mix the sources push: runs of
 * events each no older than the last (the sequencer's FIFO) broken by
 * older ones (its heap), past several growths of what it holds, a
 * release in the middle, and a stop that flushes a mix.
 */
static void
test_seq_mixed(void)
{
	const uint64_t base = 2000000000000ULL;	/* 2000 s */
	static long tags[3 * SEQ_MIX_N];
	static uint64_t ns[3 * SEQ_MIX_N], pushed[3 * SEQ_MIX_N];
	uint64_t t = base + 1000000, mid, rng = 12345;
	struct dt_source *a;
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt ev;
	size_t i, n, total = 0, bad = 0;
	long tag = 0;
	int phase;

	seq_fake_now = base;
	dt_seq_clock_set(seq_now, 50000000000ULL);	/* D: never */
	conf_init(2, 4 * SEQ_MIX_N);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000000ULL) == 0);
	CHECK(record(sc, &root, 1) == 0);
	dp = sc->ds_pcbs;
	rcu_register_thread();
	CHECK((a = dt_source_add("test-mix")) != NULL);
	dt_source_mark(a, base);
	for (phase = 0; phase < 3; phase++) {
		rcu_read_lock();
		for (i = 0; i < SEQ_MIX_N; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			/* Seven in ten in order (some ties), the rest older. */
			if ((rng >> 33) % 10 < 7) {
				t += (rng >> 40) % 4;
				pushed[tag] = t;
			} else
				pushed[tag] = t - (rng >> 40) % 500;
			seq_ev(&ev, pushed[tag], tag);
			dt_seq_put(a, dp, (unsigned int)(tag & 1), &ev);
			tag++;
		}
		rcu_read_unlock();
		if (phase == 0) {
			/* Half of what is held goes; the rest stays. */
			mid = base + 1000000 + (t - base - 1000000) / 2;
			dt_source_mark(a, mid);
			n = seq_drain(sc, tags + total, ns + total,
			    3 * SEQ_MIX_N - total);
			CHECK(n > 0 && n < (size_t)tag);
			total += n;
			/* What comes next is younger than all released. */
			t += 1000;
		} else if (phase == 1) {
			/* All of it, and no later: the next are held. */
			dt_source_mark(a, t);
			n = seq_drain(sc, tags + total, ns + total,
			    3 * SEQ_MIX_N - total);
			total += n;
			CHECK(total == (size_t)tag);
			t += 1000;
		}
	}
	/* The third phase's, all held, go at the stop. */
	CHECK(record(sc, &root, 0) == 0);
	total += seq_drain(sc, tags + total, ns + total, 3 * SEQ_MIX_N - total);
	CHECK(total == (size_t)tag);
	/* Ties on two CPUs' rings come as the read's merge takes them. */
	for (i = 1; i < total; i++)
		if (ns[i] < ns[i - 1])
			bad++;
	if (bad > 0)
		printf("test_seq_mixed: %zu of %zu out of order\n", bad, total);
	CHECK(bad == 0);
	CHECK(lateevts(sc) == 0);
	dt_source_idle(a);
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
	dt_seq_clock_set(NULL, 0);
}

/*
 * An event every open's filter rejects is counted as filtered and never
 * held: the sequencer (its lock, a heap slot, a copy) does not see it.
 */
static void
test_seq_prefilter(void)
{
	struct dtioc_filter_term ft = fterm(DTF_OP_CONST, 0, 0, NULL);
	struct dt_seq_stats st0, st;
	struct dt_source *a;
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt ev;

	conf_init(2, 64);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000000ULL) == 0);
	CHECK(setfilter(sc, 2, &ft, 1) == 0);
	CHECK(record(sc, &root, 1) == 0);
	dp = sc->ds_pcbs;
	rcu_register_thread();
	CHECK((a = dt_source_add("test-pre")) != NULL);
	dt_source_mark(a, 1000);
	dt_seq_stats(&st0);
	seq_ev(&ev, 2000, 1);
	rcu_read_lock();
	dt_seq_emit(a, dp->dp_dtp, 0, &ev);
	dt_seq_put(a, dp, 1, &ev);
	rcu_read_unlock();
	dt_seq_stats(&st);
	CHECK(st.dss_events == st0.dss_events && st.dss_held == 0);
	CHECK(filtered(sc) == 2);
	CHECK(seq_read(sc, NULL, 0));
	dt_source_idle(a);
	CHECK(record(sc, &root, 0) == 0);
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
}

/*
 * A source's room (dt_source_room(), a lossless drain's): of its events
 * the rings get as many as it says, oldest first, the rest stay held in
 * order whatever W and D say, and the wakeup thread is not kept
 * spinning on them; a new room lets more go; an event that would go
 * straight through counts too, and waits when there is none.
 */
static void
test_seq_room(void)
{
	static const long two[] = { 1, 2 }, three[] = { 3, 4, 5 },
	    six[] = { 6 }, seven[] = { 7 };
	const uint64_t base = 4000000000000ULL;	/* 4000 s */
	struct dt_source *a;
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt ev;
	long t;

	seq_fake_now = base;
	dt_seq_clock_set(seq_now, 50000000ULL);
	conf_init(2, 64);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000000ULL) == 0);
	CHECK(record(sc, &root, 1) == 0);
	dp = sc->ds_pcbs;
	rcu_register_thread();
	CHECK((a = dt_source_add("test-room")) != NULL);
	dt_source_mark(a, base);
	rcu_read_lock();
	for (t = 1; t <= 5; t++) {
		seq_ev(&ev, base + (uint64_t)t * 1000, t);
		dt_seq_put(a, dp, 1, &ev);
	}
	rcu_read_unlock();
	dt_source_room(a, 2);
	dt_source_mark(a, base + 10000);
	CHECK(seq_read(sc, two, 2));
	/* D long past: still held, and nothing for the wakeup thread. */
	__atomic_store_n(&seq_fake_now, base + 1000000000ULL,
	    __ATOMIC_RELAXED);
	dt_seq_tick();
	CHECK(seq_read(sc, NULL, 0));
	CHECK(dt_seq_wait_ns() == UINT64_MAX);
	dt_source_room(a, 4);
	CHECK(seq_read(sc, three, 3));
	/* Past the mark, nothing held: straight through, and counted. */
	dt_source_mark(a, base + 20000);
	rcu_read_lock();
	seq_ev(&ev, base + 11000, 6);
	dt_seq_put(a, dp, 1, &ev);
	seq_ev(&ev, base + 12000, 7);
	dt_seq_put(a, dp, 1, &ev);
	rcu_read_unlock();
	CHECK(seq_read(sc, six, 1));
	dt_source_room(a, UINT_MAX);
	CHECK(seq_read(sc, seven, 1));
	CHECK(lateevts(sc) == 0);
	dt_source_idle(a);
	CHECK(record(sc, &root, 0) == 0);
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
	dt_seq_clock_set(NULL, 0);
}

#define SEQ_BATCH_N	40

/*
 * The batch tests' device: an open recording probe 2, a source named
 * name marked at mark, and a read parked on toks[1].  The caller is
 * registered with RCU until seq_batch_done().
 */
static struct dt_softc *
seq_batch_open(uint64_t base, uint64_t mark, const char *name,
    struct dt_source **ap)
{
	struct dt_softc *sc;

	seq_fake_now = base;
	dt_seq_clock_set(seq_now, 50000000000ULL);	/* D: never */
	conf_init(2, 256);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000000ULL) == 0);
	CHECK(record(sc, &root, 1) == 0);
	rcu_register_thread();
	CHECK((*ap = dt_source_add(name)) != NULL);
	dt_source_mark(*ap, mark);
	tok_reset(&toks[1]);
	dt_dev_read(sc, sizeof(toks[1].buf), &toks[1]);
	CHECK(!toks[1].done);
	return sc;
}

/* No event late; the device closed, as seq_batch_open() found it. */
static void
seq_batch_done(struct dt_softc *sc, struct dt_source *a)
{
	CHECK(lateevts(sc) == 0);
	dt_source_idle(a);
	CHECK(record(sc, &root, 0) == 0);
	rcu_unregister_thread();
	dt_dev_close(sc);
	dt_dev_fini();
	dt_seq_clock_set(NULL, 0);
}

/*
 * Pushes under one lock (dt_seq_batch_begin(), the ingest drain's) are
 * held as single ones are, older ones among them too; the release that
 * frees them serves a parked read once, after its last put, so the read
 * returns all of them, in time order.
 */
static void
test_seq_batch(void)
{
	const uint64_t base = 3000000000000ULL;	/* 3000 s */
	struct dt_evt *got = (struct dt_evt *)toks[1].buf;
	struct dt_seq_stats st0, st;
	struct dt_source *a;
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt ev;
	uint64_t ns, prev = 0;
	size_t i, n;
	bool seen[SEQ_BATCH_N] = { false };

	sc = seq_batch_open(base, base, "test-batch", &a);
	dp = sc->ds_pcbs;
	dt_seq_stats(&st0);
	rcu_read_lock();
	dt_seq_batch_begin();
	for (i = 0; i < SEQ_BATCH_N; i++) {
		/* every fifth older than the one before it: the heap */
		ns = base + 1000 + 10 * i - (i % 5 == 4 ? 25 : 0);
		seq_ev(&ev, ns, (long)i);
		dt_seq_put(a, dp, (unsigned int)(i & 1), &ev);
	}
	dt_seq_batch_end();
	rcu_read_unlock();
	dt_seq_stats(&st);
	CHECK(st.dss_held == SEQ_BATCH_N &&
	    st.dss_events == st0.dss_events + SEQ_BATCH_N);
	CHECK(!toks[1].done);
	dt_source_mark(a, base + 1000000);
	CHECK(tok_wait(&toks[1], 5));
	n = toks[1].len / sizeof(struct dt_evt);
	if (n != SEQ_BATCH_N)
		printf("test_seq_batch: %zu of %d in the parked read\n", n,
		    SEQ_BATCH_N);
	CHECK(n == SEQ_BATCH_N);
	for (i = 0; i < n; i++) {
		ns = (uint64_t)got[i].dtev_tsp.tv_sec * 1000000000ULL +
		    (uint64_t)got[i].dtev_tsp.tv_nsec;
		CHECK(ns >= prev);
		prev = ns;
		CHECK(got[i].dtev_args[0] >= 0 &&
		    got[i].dtev_args[0] < SEQ_BATCH_N &&
		    !seen[got[i].dtev_args[0]]);
		if (got[i].dtev_args[0] >= 0 &&
		    got[i].dtev_args[0] < SEQ_BATCH_N)
			seen[got[i].dtev_args[0]] = true;
	}
	seq_batch_done(sc, a);
}

/*
 * A batch whose events all go straight through (each in time order, at
 * or before the mark, nothing held): the parked read is served at the
 * batch's end, once, with all of them, not at its first put with one.
 */
static void
test_seq_batch_through(void)
{
	const uint64_t base = 4000000000000ULL;	/* 4000 s */
	struct dt_evt *got = (struct dt_evt *)toks[1].buf;
	struct dt_source *a;
	struct dt_softc *sc;
	struct dt_pcb *dp;
	struct dt_evt ev;
	struct timespec ts;
	size_t i, n;
	bool early = false;

	sc = seq_batch_open(base, base + 1000000, "test-through", &a);
	dp = sc->ds_pcbs;
	rcu_read_lock();
	dt_seq_batch_begin();
	for (i = 0; i < SEQ_BATCH_N; i++) {
		seq_ev(&ev, base + 1000 + 10 * i, (long)i);
		dt_seq_put(a, dp, (unsigned int)(i & 1), &ev);
		/*
		 * Served meanwhile (by the wakeup thread) is too early: after
		 * the first put, it is given 100 ms to show it would be.
		 */
		pthread_mutex_lock(&tok_mtx);
		if (i == 0) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			while (!toks[1].done && pthread_cond_timedwait(&tok_cv,
			    &tok_mtx, &ts) != ETIMEDOUT)
				continue;
		}
		early |= toks[1].done;
		pthread_mutex_unlock(&tok_mtx);
	}
	dt_seq_batch_end();
	rcu_read_unlock();
	CHECK(!early);
	CHECK(tok_wait(&toks[1], 5));
	n = toks[1].len / sizeof(struct dt_evt);
	if (n != SEQ_BATCH_N)
		printf("test_seq_batch_through: %zu of %d in the parked "
		    "read\n", n, SEQ_BATCH_N);
	CHECK(n == SEQ_BATCH_N);
	for (i = 0; i < n; i++)
		CHECK(got[i].dtev_args[0] == (long)i);
	seq_batch_done(sc, a);
}

/* Resident memory of this process, in bytes. */
static uint64_t
rss_bytes(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * A reader that keeps up keeps a big ring's memory small: with 524288
 * slots (240 MB) and more events than the ring holds passing in rounds
 * of 64, what the ring commits stays near one round's pages, since the
 * ring starts again at its first slot whenever it is emptied.  Without
 * that every slot is touched once, and the whole ring is committed.
 */
#define REWIND_SLOTS	524288
#define REWIND_ROUND	64
static void
test_rewind(void)
{
	struct dt_softc *sc;
	struct dt_evt src;
	uint64_t before, after, got = 0;
	unsigned int r, i;
	int allread = 1;

	conf_init(1, REWIND_SLOTS);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);
	memset(&src, 0, sizeof(src));
	rcu_register_thread();
	before = rss_bytes();
	for (r = 0; r < 2 * REWIND_SLOTS / REWIND_ROUND; r++) {
		rcu_read_lock();
		for (i = 0; i < REWIND_ROUND; i++)
			dt_pcb_ring_put(sc->ds_pcbs, 0, &src);
		rcu_read_unlock();
		tok_reset(&toks[0]);
		dt_dev_read(sc, REWIND_ROUND * sizeof(struct dt_evt), &toks[0]);
		allread &= toks[0].done &&
		    toks[0].len == REWIND_ROUND * sizeof(struct dt_evt);
		got += toks[0].len / sizeof(struct dt_evt);
	}
	after = rss_bytes();
	rcu_unregister_thread();
	CHECK(allread && got == 2 * (uint64_t)REWIND_SLOTS);
	CHECK(stats(sc).dtst_dropevt == 0);
	printf("rewind: %ju events through %u slots, resident +%ju KiB\n",
	    (uintmax_t)got, REWIND_SLOTS, (uintmax_t)(after - before) / 1024);
	CHECK(after < before + 16 * 1024 * 1024);
	dt_dev_close(sc);
	dt_dev_fini();
}

/* Producers racing a reader: every event is read or counted dropped. */
#define NPROD		2
#define NPERPROD	200000
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
	struct dtioc_stat st;
	uint64_t got = 0;
	uintptr_t i;
	int alive = NPROD;

	conf_init(2, 1024);
	CHECK(dt_dev_open(&root, &sc) == 0);
	CHECK(req(sc, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);
	race_pcb = sc->ds_pcbs;
	for (i = 0; i < NPROD; i++)
		pthread_create(&th[i], NULL, producer, (void *)i);
	while (alive > 0 || got < NPROD * NPERPROD) {
		tok_reset(&toks[0]);
		dt_dev_read(sc, sizeof(toks[0].buf), &toks[0]);
		if (!tok_wait(&toks[0], 1)) {
			/* producers finished and the rings are empty */
			CHECK(dt_dev_read_cancel(sc, &toks[0], EINTR));
			break;
		}
		got += toks[0].len / sizeof(struct dt_evt);
		if (got + stats(sc).dtst_dropevt == NPROD * NPERPROD)
			break;
	}
	for (i = 0; i < NPROD; i++)
		pthread_join(th[i], NULL);
	st = stats(sc);
	CHECK(st.dtst_readevt == got);
	CHECK(got + st.dtst_dropevt == NPROD * NPERPROD);
	printf("race: %ju read, %ju dropped\n", (uintmax_t)got,
	    (uintmax_t)st.dtst_dropevt);
	dt_dev_close(sc);
	dt_dev_fini();
}

/*
 * dt_dev_all_pressed(), what the ingest drain asks before it passes a
 * held-back lossless reader's tracees through: true only while some
 * open records and each that does has a pressed ring; another open
 * recording, pressed or not, or the ring read down, and it is false.
 */
static void
test_all_pressed(void)
{
	struct dt_softc *a, *b;
	struct dt_evt src;
	int i;

	conf_init(2, 16);
	CHECK(dt_dev_open(&root, &a) == 0);
	CHECK(dt_dev_open(&root, &b) == 0);
	CHECK(!dt_dev_all_pressed());		/* nobody records */
	CHECK(req(a, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);
	CHECK(req(b, &root, DTIOCPRBENABLE, 2, 0, 1000000000) == 0);
	/* As the syscall provider keeps it; interval's enable masks it. */
	a->ds_pcbs->dp_evtflags |= DTEVT_LOSSLESS;
	CHECK(record(a, &root, 1) == 0);
	CHECK(!dt_dev_all_pressed());		/* a's ring is empty */
	memset(&src, 0, sizeof(src));
	rcu_register_thread();
	rcu_read_lock();
	for (i = 0; i < 8; i++)
		CHECK(dt_pcb_ring_put(a->ds_pcbs, 1, &src) == 0);
	rcu_read_unlock();
	CHECK(dt_dev_all_pressed());		/* half of 16, less one */
	CHECK(record(b, &root, 1) == 0);
	CHECK(!dt_dev_all_pressed());		/* b would take a pass */
	CHECK(record(b, &root, 0) == 0);
	CHECK(dt_dev_all_pressed());
	tok_reset(&toks[0]);
	dt_dev_read(a, 2 * sizeof(struct dt_evt), &toks[0]);
	CHECK(toks[0].done && toks[0].len == 2 * sizeof(struct dt_evt));
	CHECK(!dt_dev_all_pressed());		/* read under half */
	rcu_unregister_thread();
	CHECK(record(a, &root, 0) == 0);
	dt_dev_close(b);
	dt_dev_close(a);
	dt_dev_fini();
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_encodings();

	conf_init(0, 0);
	test_plist();
	test_gargs();
	test_errors();
	test_rdvnode();
	test_interval_read();
	dt_dev_fini();

	test_ring16();
	test_filter();
	test_merge();
	test_read_iov();
	test_seq();
	test_seq_mixed();
	test_seq_prefilter();
	test_seq_room();
	test_seq_batch();
	test_seq_batch_through();
	test_rewind();
	test_race();
	test_all_pressed();

	return unit_done();
}
