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
 * syscall_jump DTD DTRUN TRACEE
 *
 * Signal handlers that do not return: syscall_tracee jump interrupts
 * the preload library while it records getpid() and, from the handler,
 * either siglongjmp()s out of it or forks with _Fork(), whose child
 * returns into the interrupted recording.  Afterwards the same thread's
 * getppid() calls must arrive (a depth left raised by the jump would
 * drop them all as recursive): all of those made after a pause that
 * outlasts a ring stall (see syscall_tracee.c), counted by time stamp;
 * and every child must exit 0 (one that lost the ring it was writing to
 * dies of SIGSEGV).
 */
#include <sys/wait.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define WAIT_S		10	/* for the getppid() events, after exit */

/*
 * The reader: drains the device all along, since the storm makes more
 * events than its rings hold, and counts the tracee's getppid() events.
 */
struct jreader {
	pthread_mutex_t	 jr_lock;
	pthread_cond_t	 jr_cond;
	int		 jr_fd;		/* [I] */
	uint32_t	 jr_pbn;	/* [I] getppid entry */
	struct dt_evt	*jr_evs;	/* [l] those events, for their times */
	size_t		 jr_nevs, jr_cap; /* [l] */
	int		 jr_stop;	/* [l] */
};

static void *
jreader_main(void *arg)
{
	struct jreader *jr = arg;
	struct dt_evt *evs;
	long n, k, mine;

	if ((evs = calloc(4096, sizeof(*evs))) == NULL)
		return NULL;
	for (;;) {
		pthread_mutex_lock(&jr->jr_lock);
		if (jr->jr_stop) {
			pthread_mutex_unlock(&jr->jr_lock);
			break;
		}
		pthread_mutex_unlock(&jr->jr_lock);
		/* A short wait, to look at jr_stop again. */
		if ((n = dtt_read(jr->jr_fd, evs, 4096, 100)) < 0) {
			if (errno == ETIMEDOUT)
				continue;
			warn("read");
			break;
		}
		pthread_mutex_lock(&jr->jr_lock);
		for (k = 0, mine = 0; k < n; k++) {
			/* By name: its pid may come after its events. */
			if (evs[k].dtev_pbn != jr->jr_pbn ||
			    strcmp(evs[k].dtev_comm, "syscall_tracee") != 0)
				continue;
			mine++;
			if (jr->jr_nevs == jr->jr_cap) {
				struct dt_evt *ne = reallocarray(jr->jr_evs,
				    jr->jr_cap * 2 + 64, sizeof(*ne));

				/* Losing one would fail the count, not pass it. */
				if (ne == NULL)
					err(1, "reader");
				jr->jr_evs = ne;
				jr->jr_cap = jr->jr_cap * 2 + 64;
			}
			jr->jr_evs[jr->jr_nevs++] = evs[k];
		}
		if (mine > 0)
			pthread_cond_signal(&jr->jr_cond);
		pthread_mutex_unlock(&jr->jr_lock);
	}
	free(evs);
	return NULL;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct dtioc_stat st;
	struct udt_stats us;
	struct jreader jr = { .jr_lock = PTHREAD_MUTEX_INITIALIZER,
	    .jr_cond = PTHREAD_COND_INITIALIZER };
	struct timespec deadline;
	pthread_t rthr;
	int reading = 0;
	char line[160];
	char *targv[] = { argc > 2 ? argv[2] : NULL, "-s", NULL,
	    argc > 3 ? argv[3] : NULL, "jump", NULL };
	long jumps = -1, forks = -1, badkids = -1, sent = 0, after = -1;
	long long midsec = 0;
	long midnsec = 0, got;
	size_t i;
	uint32_t pbn_pid, pbn_ppid;
	size_t npi;
	FILE *out;
	int fd = -1, status;
	pid_t tpid;

	if (argc != 4) {
		fprintf(stderr, "usage: syscall_jump DTD DTRUN TRACEE\n");
		return 2;
	}
	if (st_setup(&dd, "udt-jump", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	pbn_pid = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	pbn_ppid = dtt_pbn(pi, npi, "syscall", "sys%39", "entry");
	if (pbn_pid == 0 || pbn_ppid == 0 ||
	    dtt_enable(fd, pbn_pid, DTEVT_EXECNAME | DTEVT_FUNCARGS |
	    DTEVT_USTACK, 0) ||
	    dtt_enable(fd, pbn_ppid, DTEVT_EXECNAME, 0) || dtt_record(fd, 1)) {
		warn("tracing getpid and getppid");
		goto out;
	}

	jr.jr_fd = fd;
	jr.jr_pbn = pbn_ppid;
	if ((errno = pthread_create(&rthr, NULL, jreader_main, &jr)) != 0) {
		warn("reader thread");
		goto out;
	}
	reading = 1;
	targv[2] = dd.dd_sock;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	while (fgets(line, sizeof(line), out) != NULL)
		sscanf(line, "J %ld %ld %ld %ld %ld %lld %ld", &jumps, &forks,
		    &badkids, &sent, &after, &midsec, &midnsec);
	fclose(out);
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	if (!dtt_check(dtt_exited0(status), "tracee ran (%ld signals)", sent))
		goto out;
	/* Hits depend on timing; the tracee keeps trying for seconds. */
	dtt_check(jumps == 10 && forks == 4, "handlers left the library by "
	    "siglongjmp %ld times and forked in it %ld times", jumps, forks);
	dtt_check(badkids == 0, "every child forked inside a recording "
	    "exited 0 (%ld did not)", badkids);

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_S;
	pthread_mutex_lock(&jr.jr_lock);
	for (;;) {
		for (got = 0, i = 0; i < jr.jr_nevs; i++)
			if (jr.jr_evs[i].dtev_tsp.tv_sec > midsec ||
			    (jr.jr_evs[i].dtev_tsp.tv_sec == midsec &&
			    jr.jr_evs[i].dtev_tsp.tv_nsec >= midnsec))
				got++;
		if (got >= after || pthread_cond_timedwait(&jr.jr_cond,
		    &jr.jr_lock, &deadline) != 0)
			break;
	}
	pthread_mutex_unlock(&jr.jr_lock);
	if (dtt_stats(fd, &st) != 0 || st_ingest_stats(dd.dd_sock, &us) != 0)
		goto out;
	dtt_check(after > 0 && got == after, "after the jumps and a pause, "
	    "%ld of %ld getppid calls recorded (recursive %llu, dropped "
	    "%llu, in the tracee's ring %llu)", got, after,
	    (unsigned long long)st.dtst_recurevt,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)us.us_lost);
out:
	if (reading) {
		pthread_mutex_lock(&jr.jr_lock);
		jr.jr_stop = 1;
		pthread_mutex_unlock(&jr.jr_lock);
		pthread_join(rthr, NULL);
	}
	st_teardown(&dd, fd);
	free(jr.jr_evs);
	free(pi);
	status = dtt_done();
	return status || dtt_npass < 5;
}
