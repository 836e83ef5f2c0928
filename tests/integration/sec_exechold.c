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
 * sec_exechold DTD
 *
 * The exec announces in a ring (rh_exec: udt_wire.h) are the tracee's
 * word, and dtd's drain reads them at every pass (dt_ingest_exec.c).  A
 * fake tracee of a throwaway ordinary user writes every kind of value
 * in all of them, a few passes' worth each: stamps from the epoch, from far in the future, raw TSC values that are not
 * near the clock, the largest values, a stamp kept just young enough to
 * hold, tids of nobody and negative ones.  Meanwhile root records dtd's
 * interval timer and getpid's entry (which keeps the drain marking):
 * its events keep coming, in time order, none of them held past the
 * sequencer's bound by much (a second here, against the 50 ms the
 * bound is), and dtd ends cleanly.  Under UBSan a conversion of a wild
 * stamp would be reported.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "syscall_util.h"

#define PHASE_NS	(150 * 1000000ULL)	/* one kind of value */
#define NPHASES		8
#define LAG_MAX_NS	(1000 * 1000000ULL)	/* liveness, not speed */
#define MAXEVS		256

static uint64_t
now_rt(void)
{
	return dtt_clock_ns(CLOCK_REALTIME);
}

/* Phase p's value of rh_exec_ts and rh_exec_tid, at realtime rt. */
static void
phase_value(int p, uint64_t rt, uint64_t *ts, int32_t *tid)
{
	*tid = (int32_t)getpid();
	switch (p) {
	case 0:	*ts = 1;				break;
	case 1:	*ts = rt + 3600 * 1000000000ULL;	break;
	case 2:	*ts = (1ULL << 63) | 12345;		break;
	case 3:	*ts = UINT64_MAX;			break;
	case 4:	*ts = rt - 40 * 1000000ULL;		break;	/* holds */
	case 5:	*ts = rt; *tid = -7;			break;
	case 6:	*ts = rt - 1000000ULL; *tid = 0x7fffffff;	break;
	default: *ts = (1ULL << 63) | __builtin_ia32_rdtsc(); break;
	}
}

struct fake_arg {
	const char	*sock;
	uint32_t	 nsys;
	int		 go;	/* write end: closed by root when done */
};

/* As the user: attach, then write each phase's values until told. */
static int
fake_tracee(void *arg)
{
	const struct fake_arg *fa = arg;
	struct udt_welcome w;
	struct udt_ring_hdr *rh;
	uint64_t t0, ts;
	unsigned int i;
	int32_t tid;
	int fds[2];

	if (dtt_tracee_hello(fa->sock, fa->nsys, &w, fds) == -1)
		return 3;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 4;
	if (write(fa->go, "a", 1) != 1)
		return 5;
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		uint64_t el = dtt_clock_ns(CLOCK_MONOTONIC) - t0;

		if (el >= NPHASES * PHASE_NS)
			break;
		/* Every announce, each with the phase's kind of value. */
		for (i = 0; i < UDT_EXEC_NANN; i++) {
			phase_value((int)(el / PHASE_NS), now_rt(), &ts, &tid);
			/* nobody's, likely; phase 6's INT32_MAX stays */
			if (tid > 0 && tid <= INT32_MAX - UDT_EXEC_NANN && i > 0)
				tid += (int32_t)i;
			__atomic_store_n(&rh->rh_exec[i].ua_tid, tid,
			    __ATOMIC_RELAXED);
			__atomic_store_n(&rh->rh_exec[i].ua_ts, ts,
			    __ATOMIC_RELEASE);
		}
		usleep(500);
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtt_user u;
	struct dtioc_probe_info *pi = NULL;
	struct dt_evt *evs = NULL;
	struct fake_arg fa;
	char *args[] = { "--no-ksyms", NULL };
	uint64_t last = 0, lag, maxlag = 0, t0;
	uint32_t first, ipbn, gpbn;
	long n, k, total = 0, back = 0;
	size_t npi;
	int fd = -1, p[2] = { -1, -1 }, status;
	pid_t fake = -1;
	char c;

	if (argc != 2) {
		fprintf(stderr, "usage: sec_exechold DTD\n");
		return 2;
	}
	if (!dtt_check(dtt_user_add(&u) == 0, "a throwaway user %s",
	    u.du_name))
		return dtt_done();
	if (!dtt_check(dtt_dtd_init(&dd, "udt-exechold") == 0 &&
	    dtt_dtd_start(&dd, argv[1], args, NULL, 0) != -1, "a private dtd"))
		goto out;
	if (!dtt_check((fd = dtt_open(dd.dd_dev)) != -1 &&
	    (pi = dtt_plist(fd, &npi)) != NULL, "the device and its probes"))
		goto out;
	fa.sock = dd.dd_sock;
	fa.nsys = dtt_nsys(pi, npi, &first);
	ipbn = dtt_pbn(pi, npi, "interval", "hz", "1");
	gpbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	if (!dtt_check(ipbn != 0 && gpbn != 0 &&
	    dtt_enable(fd, ipbn, 0, 10000000ULL) == 0 &&
	    dtt_enable(fd, gpbn, 0, 0) == 0 && dtt_record(fd, 1) == 0,
	    "root records interval:hz:100 and getpid's entry"))
		goto out;
	if (!dtt_check(pipe(p) == 0, "pipe"))
		goto out;
	fflush(stdout);
	if ((fake = fork()) == 0) {
		close(p[0]);
		fa.go = p[1];
		_exit(dtt_user_become(&u) == -1 ? 2 : fake_tracee(&fa));
	}
	close(p[1]);
	p[1] = -1;
	if (!dtt_check(fake > 0 && read(p[0], &c, 1) == 1,
	    "%s's fake tracee attached", u.du_name))
		goto out;
	if ((evs = calloc(MAXEVS, sizeof(*evs))) == NULL)
		goto out;
	/* A phase more than the fake's, so the last one is seen through. */
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	while (dtt_clock_ns(CLOCK_MONOTONIC) - t0 < (NPHASES + 1) * PHASE_NS) {
		n = dtt_read(fd, evs, MAXEVS, 200);
		if (n < 0 && errno == ETIMEDOUT)
			continue;
		if (n < 0)
			break;
		for (k = 0; k < n; k++) {
			uint64_t ns = (uint64_t)evs[k].dtev_tsp.tv_sec *
			    1000000000ULL + (uint64_t)evs[k].dtev_tsp.tv_nsec;

			if (evs[k].dtev_pbn != ipbn)
				continue;
			if (ns < last)
				back++;
			last = ns;
			lag = now_rt() - ns;
			if (lag > maxlag)
				maxlag = lag;
			total++;
		}
	}
	status = dtt_wait(fake, 5000);
	fake = -1;
	dtt_check(status != -1 && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0, "the fake tracee wrote every phase (%d)",
	    status);
	/* 100 Hz for 1.35 s: a third of them is plenty for "they came". */
	dtt_check(total >= 40, "%ld interval events read while it wrote", total);
	dtt_check(back == 0, "in time order (%ld steps back)", back);
	dtt_check(maxlag < LAG_MAX_NS, "none read more than %llu ms after it "
	    "happened (%llu ms)", (unsigned long long)(LAG_MAX_NS / 1000000),
	    (unsigned long long)(maxlag / 1000000));
	close(fd);
	fd = -1;
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped "
	    "cleanly");
out:
	if (fake > 0)
		dtt_stop(fake, SIGKILL, 1000);
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	if (fd != -1)
		close(fd);
	free(evs);
	free(pi);
	dtt_dtd_fini(&dd, true);
	dtt_user_del(&u);
	return dtt_done();
}
