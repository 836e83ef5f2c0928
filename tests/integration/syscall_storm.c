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
 * syscall_storm DTD DTRUN TRACEE [ustack]
 *
 * Recursion: syscall_tracee storm makes getpid() calls in a thread that
 * signals keep interrupting, with handlers that call getpid() too.  A
 * handler that lands while its thread is writing a record must not
 * deadlock or corrupt the ring; its event is dropped and counted as
 * recursive.  Every event must be accounted for exactly:
 * generated == read + dropped + recursive, from the device's own
 * DTIOCGSTATS: events lost in the tracee's full ring are part of its
 * dropevt.  With ustack, the records carry user stacks: a handler that
 * lands during the walk, most of a record's time then, is accounted
 * for the same way (it once went uncounted).  Events that never come
 * fail the check once the reads go quiet, not the test's timeout.
 */
#include <sys/wait.h>
#include <err.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NCALLS	"200000"

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct dtioc_stat st;
	struct udt_stats us;
	struct dt_evt *evs = NULL;
	char line[128];
	char *targv[] = { argc > 2 ? argv[2] : NULL, "-s", NULL,
	    argc > 3 ? argv[3] : NULL, "storm", NCALLS, NULL };
	long calls = 0, handled = 0, sent = 0, got = 0, n, k, bad = 0;
	int ustk = argc == 5 && strcmp(argv[4], "ustack") == 0;
	uint64_t gen, acc = 0;
	uint32_t pbn;
	size_t npi;
	FILE *out;
	int fd = -1, status;
	pid_t tpid;

	if (argc != 4 && !(argc == 5 && strcmp(argv[4], "ustack") == 0)) {
		fprintf(stderr, "usage: syscall_storm DTD DTRUN TRACEE "
		    "[ustack]\n");
		return 2;
	}
	if (st_setup(&dd, "udt-syscall", argv[1], NULL, &fd, &pi, &npi) != 0 ||
	    (evs = calloc(4096, sizeof(*evs))) == NULL) {
		warn("setup");
		goto out;
	}
	pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	/* The ioctls leave errno set when they fail. */
	if (pbn == 0 ||
	    dtt_enable(fd, pbn, DTEVT_EXECNAME | DTEVT_FUNCARGS |
	    (ustk ? DTEVT_USTACK : 0), 0) ||
	    dtt_enable(fd, pbn + 1, DTEVT_EXECNAME |
	    (ustk ? DTEVT_USTACK : 0), 0) || dtt_record(fd, 1)) {
		warn("tracing getpid");
		goto out;
	}

	targv[2] = dd.dd_sock;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	while (fgets(line, sizeof(line), out) != NULL)
		sscanf(line, "S %ld %ld %ld", &calls, &handled, &sent);
	fclose(out);
	/* Its stdout closed: it exits.  Signal 0 waits, SIGKILL past that. */
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	gen = 2 * (uint64_t)(calls + handled);
	if (!dtt_check(dtt_exited0(status) &&
	    calls > 0, "tracee made %ld calls, its handlers %ld (%ld signals)",
	    calls, handled, sent))
		goto out;

	for (;;) {
		if (dtt_stats(fd, &st) != 0 ||
		    st_ingest_stats(dd.dd_sock, &us) != 0)
			goto out;
		acc = (uint64_t)got + st.dtst_dropevt + st.dtst_recurevt;
		if (acc >= gen)
			break;
		/*
		 * Ten seconds with nothing more: what is missing never comes.
		 * The counts as they are after that wait, not before it.
		 */
		if ((n = dtt_read(fd, evs, 4096, 10000)) <= 0) {
			if (n < 0)
				warn("read");
			if (dtt_stats(fd, &st) == 0 &&
			    st_ingest_stats(dd.dd_sock, &us) == 0)
				acc = (uint64_t)got + st.dtst_dropevt +
				    st.dtst_recurevt;
			break;
		}
		for (k = 0; k < n; k++)
			if (evs[k].dtev_pid != tpid ||
			    strcmp(evs[k].dtev_comm, "syscall_tracee") != 0 ||
			    (evs[k].dtev_pbn == pbn + 1 &&
			    evs[k].dtev_retval[0] != tpid))
				bad++;
		got += n;
	}
	dtt_check(bad == 0, "%ld events read, all getpid of the tracee", got);
	dtt_check(acc == gen && (uint64_t)got == st.dtst_readevt &&
	    st.dtst_dropevt >= us.us_lost,
	    "generated %llu == read %llu + dropped %llu + recursive %llu "
	    "(of the drops, %llu in the tracee's ring)",
	    (unsigned long long)gen,
	    (unsigned long long)st.dtst_readevt,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)st.dtst_recurevt,
	    (unsigned long long)us.us_lost);
	dtt_check(st.dtst_recurevt > 0 && us.us_garbage == 0,
	    "handlers interrupted recording %llu times, no garbage",
	    (unsigned long long)st.dtst_recurevt);
out:
	st_teardown(&dd, fd);
	free(pi);
	free(evs);
	status = dtt_done();
	return status || dtt_npass < 5;
}
