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
 * order_test DTD DTRUN TRACEE threads|tracepoint
 *
 * Every event a reader gets comes in time-stamp order, across reads
 * (design decision 18, dt(4) READ):
 *
 * threads: two threads of a traced process, on CPUs 0 and 1, call
 * getppid() by turns; their entries come in time order, so their
 * threads alternate, through every read.
 *
 * tracepoint: a traced process calls getppid() while
 * tracepoint:raw_syscalls:sys_enter records every system call of the
 * machine: the tracee's events (through the ingest drain) and the
 * kernel's (through perf) come in one time order, and each getppid's
 * entry (stamped by the hook before the call) comes before the kernel's
 * sys_enter of that call.
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NTURNS	2000
#define MAXEVS	4096
#define DONE_SECS	20	/* reading on after the tracee is done */

static int
gap_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t
ev_ns(const struct dt_evt *ev)
{
	return (uint64_t)ev->dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct dt_evt *evs = NULL;
	char nbuf[16], line[64];
	char *targv[] = { argc > 2 ? argv[2] : NULL, "-s", NULL,
	    argc > 3 ? argv[3] : NULL, NULL, nbuf, NULL };
	uint32_t pbn = 0, tpbn = 0;
	struct dt_evt lastev = { 0 };
	uint64_t last = 0, inv = 0, total = 0, mine = 0, alt = 0, pairs = 0;
	uint64_t hookns = 0, ngap = 0, nearly = 0, early = 0;
	int64_t *gaps = NULL;
	pid_t tpid, lasttid = 0;
	long n, k, reads = 0;
	struct timespec now, donets = { 0, 0 };
	struct dtioc_stat st;
	struct dtioc_statx sx;
	bool tp, done = false, pending = false;
	size_t npi;
	FILE *out;
	int fd = -1, status;

	if (argc != 5 || (strcmp(argv[4], "threads") != 0 &&
	    strcmp(argv[4], "tracepoint") != 0)) {
		fprintf(stderr, "usage: order_test DTD DTRUN TRACEE "
		    "threads|tracepoint\n");
		return 2;
	}
	tp = strcmp(argv[4], "tracepoint") == 0;
	targv[4] = tp ? "serial" : "threads";
	snprintf(nbuf, sizeof(nbuf), "%d", NTURNS);
	if (st_setup(&dd, "udt-order", argv[1], NULL, &fd, &pi, &npi) != 0 ||
	    (evs = calloc(MAXEVS, sizeof(*evs))) == NULL ||
	    (gaps = calloc(NTURNS, sizeof(*gaps))) == NULL)
		goto out;
	if (!dtt_check(st_enable_linux(fd, pi, npi, SYS_getppid, "getppid",
	    0, &pbn) == 0, "getppid's entry enabled"))
		goto out;
	if (tp && !dtt_check((tpbn = dtt_pbn(pi, npi, "tracepoint",
	    "raw_syscalls", "sys_enter")) != 0 && dtt_enable(fd, tpbn, 0, 0) ==
	    0, "tracepoint:raw_syscalls:sys_enter enabled"))
		goto out;
	if (!dtt_check(dtt_record(fd, 1) == 0, "recording"))
		goto out;

	targv[2] = dd.dd_sock;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	/*
	 * Read while the tracee runs, in reads of at most MAXEVS: order
	 * must hold across reads, not only within one.
	 */
	while (!done || mine < 2 * NTURNS) {
		/*
		 * Bounded: with the machine's every system call on the
		 * tracepoint, a pair the rings dropped never completes.
		 */
		if (done && clock_gettime(CLOCK_MONOTONIC, &now) == 0 &&
		    now.tv_sec > donets.tv_sec + DONE_SECS)
			break;
		if ((n = dtt_read(fd, evs, MAXEVS, 3000)) <= 0)
			break;
		reads++;
		for (k = 0; k < n; k++) {
			total++;
			if (ev_ns(&evs[k]) < last) {
				if (inv++ < 10)
					printf("inversion: pbn %u pid %d cpu %u "
					    "%llu ns before pbn %u pid %d cpu %u "
					    "(read %ld)\n",
					    evs[k].dtev_pbn, evs[k].dtev_pid,
					    evs[k].dtev_cpu, (unsigned long long)
					    (last - ev_ns(&evs[k])),
					    lastev.dtev_pbn, lastev.dtev_pid,
					    lastev.dtev_cpu, reads);
			} else {
				last = ev_ns(&evs[k]);
				lastev = evs[k];
			}
			if (evs[k].dtev_pid != tpid)
				continue;
			if (evs[k].dtev_pbn == pbn) {
				mine++;
				if (evs[k].dtev_tid != lasttid)
					alt++;
				lasttid = evs[k].dtev_tid;
				hookns = ev_ns(&evs[k]);
				/*
				 * A kernel entry just before (the calls are
				 * 20 us and more apart) was this call's: the
				 * next call's must not pair with this hook.
				 * One long before was a call whose hook the
				 * rings dropped.
				 */
				pending = early == 0 || early + 10000 < hookns;
				if (!pending && ngap < NTURNS)
					gaps[ngap++] = (int64_t)early -
					    (int64_t)hookns;
				early = 0;
			} else if (tp && evs[k].dtev_pbn == tpbn &&
			    (evs[k].dtev_args[0] == 39 ||
			    evs[k].dtev_args[0] == SYS_getppid)) {
				if (pending) {
					/* The kernel's entry after the hook's. */
					pairs++;
					pending = false;
					if (ngap < NTURNS)
						gaps[ngap++] = (int64_t)
						    (ev_ns(&evs[k]) - hookns);
				} else {
					/*
					 * Before its hook's entry, which
					 * comes next: by how much shows
					 * there.
					 */
					nearly++;
					early = ev_ns(&evs[k]);
				}
			}
		}
		if (!done && fgets(line, sizeof(line), out) != NULL &&
		    (done = line[0] == 'D'))
			clock_gettime(CLOCK_MONOTONIC, &donets);
		/* The last call's sys_enter may come in the next read. */
		if (tp ? mine >= NTURNS && pairs >= mine : mine >= 2 * NTURNS)
			break;
	}
	fclose(out);
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	dtt_check(dtt_exited0(status), "the tracee exited 0");
	printf("%llu events in %ld reads, %llu of the tracee's getppid, "
	    "%llu out of time order\n", (unsigned long long)total, reads,
	    (unsigned long long)mine, (unsigned long long)inv);
	memset(&st, 0, sizeof(st));
	(void)dtt_stats(fd, &st);
	memset(&sx, 0, sizeof(sx));
	(void)ioctl(fd, DTIOCGSTATSX, &sx);
	/*
	 * Order holds within dtd's bound D.  A machine so busy that a source
	 * is held back longer than D (the test reads every process's calls,
	 * a million and more on a machine building in parallel) has dtd let
	 * that source's events through late rather than hold everyone, and
	 * count them for the reader (dtsx_lateevt): each such event is out
	 * of order once, so it may add one to inv.  Beyond those, a few in
	 * a thousand (the sanitized dtd's first round can outlast D on its
	 * own).  A merge that did not order, or a read that took a younger
	 * event of one ring without the older one of another, puts events
	 * out of order that dtd never said were late.
	 */
	dtt_check(inv * 1000 <= total + sx.dtsx_lateevt * 1000,
	    "every event in time-stamp order across reads (%llu of %llu not; "
	    "%llu dropped; %llu said late)", (unsigned long long)inv,
	    (unsigned long long)total, (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)sx.dtsx_lateevt);
	if (!tp) {
		dtt_check(mine == 2 * NTURNS, "%llu getppid entries of %d",
		    (unsigned long long)mine, 2 * NTURNS);
		/* Strict turns: every entry is the other thread's. */
		dtt_check(alt == mine, "the two threads' entries alternate "
		    "(%llu of %llu)", (unsigned long long)alt,
		    (unsigned long long)mine);
	} else {
		/*
		 * How far each kernel entry came after its hook's (negative:
		 * before), so that a failure says whether the clocks drifted
		 * or the events went astray.
		 */
		if (ngap > 0) {
			qsort(gaps, ngap, sizeof(*gaps), gap_cmp);
			printf("kernel entry after the hook's, ns: min %lld, "
			    "1%% %lld, median %lld, 99%% %lld, max %lld "
			    "(%llu pairs, %llu kernel entries first)\n",
			    (long long)gaps[0], (long long)gaps[ngap / 100],
			    (long long)gaps[ngap / 2],
			    (long long)gaps[ngap - 1 - ngap / 100],
			    (long long)gaps[ngap - 1],
			    (unsigned long long)ngap,
			    (unsigned long long)nearly);
		}
		/*
		 * Every process's calls are on the tracepoint: a machine
		 * busy enough to overflow a ring (drops, counted) may take
		 * some of the tracee's entries with them.
		 */
		dtt_check(mine == NTURNS || (st.dtst_dropevt > 0 &&
		    mine < NTURNS), "%llu getppid entries of %d (%llu events "
		    "dropped)", (unsigned long long)mine, NTURNS,
		    (unsigned long long)st.dtst_dropevt);
		/*
		 * A sys_enter the rings dropped (every process's calls are on
		 * the tracepoint, and the machine may be busy) cannot pair.
		 * The hook's stamp is the time stamp counter converted by dtd,
		 * the kernel's perf's realtime clock: dtd follows realtime's
		 * rate between its drain passes, so a clock that NTP slews
		 * (by 1%, a tracee's stamps drifted past the 100 ns between a
		 * hook and its call's kernel entry for one call in seven) still
		 * orders them; and the kernel's stamps are perf's monotonic
		 * clock plus an offset to realtime that dtd reads once, as a
		 * sandwich (two plain reads in a row, preempted between them,
		 * put every kernel entry of a run 850 ns early).  A merge
		 * that did not order would pair about half, or none.
		 */
		dtt_check((pairs + st.dtst_dropevt) * 100 >= mine * 99,
		    "each hook's entry "
		    "came before the kernel's sys_enter of its call (%llu of "
		    "%llu; %llu events dropped)", (unsigned long long)pairs,
		    (unsigned long long)mine,
		    (unsigned long long)st.dtst_dropevt);
	}
out:
	st_teardown(&dd, fd);
	free(pi);
	free(evs);
	free(gaps);
	status = dtt_done();
	return status;
}
