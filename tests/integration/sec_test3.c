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
 * sec_test's modes on who a record says wrote it (see sec_test.c).
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "sec_test.h"

static int	names_park[2] = { -1, -1 };	/* the thread waits on it */

static void *
names_thread(void *arg)
{
	char c;

	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return read(names_park[0], &c, 1) < 0 ? NULL : arg;
}

/*
 * As the user: a tracee that gets a ring and commits, each claiming
 * comm "systemd", a record as tid 1 (init's), one as itself, one as its
 * second thread; its tids and its comm go to outfd, then it waits for
 * root on gofd.
 */
static int
names_tracee(const char *sock, int outfd, int gofd)
{
	struct udt_welcome w;
	struct udt_ring_hdr *rh;
	volatile pid_t tid = 0;
	pthread_t thr;
	pid_t ids[2];
	int fds[2], fd;
	char c;

	if (pipe2(names_park, O_CLOEXEC) != 0 ||
	    pthread_create(&thr, NULL, names_thread, (void *)&tid) != 0)
		return 1;
	if ((fd = dtt_tracee_hello(sock, sec_nsys, &w, fds)) == -1)
		return 2;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 3;
	while (__atomic_load_n(&tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	ids[0] = getpid();
	ids[1] = tid;
	commit_rec(rh, w.uw_nslots, 0, 1, "systemd");
	commit_rec(rh, w.uw_nslots, 1, ids[0], "systemd");
	commit_rec(rh, w.uw_nslots, 2, ids[1], "systemd");
	if (write(outfd, ids, sizeof(ids)) != (ssize_t)sizeof(ids))
		return 4;
	if (read(gofd, &c, 1) < 0)
		return 5;
	close(names_park[1]);
	pthread_join(thr, NULL);
	return 0;
}

void
run_names(void)
{
	struct dtt_dtd dd;
	struct dt_evt evs[64];
	struct udt_stats us;
	char comm[32];
	uint64_t deadline;
	int fd, out[2] = { -1, -1 }, go[2] = { -1, -1 }, k;
	int self = 0, thread = 0, init = 0, lied = 0, other = 0;
	pid_t tracee = -1, ids[2];
	long n;

	if (!dtt_check((fd = getpid_dtd(&dd)) != -1, "a private dtd recording "
	    "getpid with comm") || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(go, O_CLOEXEC) != 0)
		goto out;
	fflush(stdout);
	if ((tracee = fork()) == 0) {
		close(fd);
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(names_tracee(dd.dd_sock, out[1], go[0]));
	}
	close(out[1]);
	out[1] = -1;
	if (!dtt_check(read(out[0], ids, sizeof(ids)) == (ssize_t)sizeof(ids),
	    "%s's tracee committed its three records", sec_user.du_name))
		goto out;
	comm_of(ids[0], comm, sizeof(comm));
	/* Two of them must arrive; then the third has been judged too. */
	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 5000000000ULL;
	while ((self == 0 || thread == 0) &&
	    dtt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	    (n = dtt_read(fd, evs, 64, 5000)) > 0)
		for (k = 0; k < n; k++) {
			if (evs[k].dtev_pid != ids[0]) {
				other++;
				continue;
			}
			self += evs[k].dtev_tid == ids[0];
			thread += evs[k].dtev_tid == ids[1];
			init += evs[k].dtev_tid == 1;
			lied += strcmp(evs[k].dtev_comm, "systemd") == 0 ||
			    strcmp(evs[k].dtev_comm, comm) != 0;
		}
	while ((n = dtt_read(fd, evs, 64, 200)) > 0)
		for (k = 0; k < n; k++)
			init += evs[k].dtev_pid == ids[0] &&
			    evs[k].dtev_tid == 1;
	dtt_check(self == 1 && thread == 1, "its records as itself (tid %d) "
	    "and as its other thread (tid %d) arrive (%d, %d)", (int)ids[0],
	    (int)ids[1], self, thread);
	dtt_check(init == 0, "its record as tid 1 does not (%d did)", init);
	dtt_check(lied == 0 && comm[0] != '\0', "every one it emitted bears "
	    "its real comm \"%s\", not \"systemd\" (%d did not)", comm, lied);
	dtt_check(other == 0, "no event of another pid (%d)", other);
	if (st_ingest_stats_sec(dd.dd_sock, &us) != 0)
		us.us_misnamed = UINT64_MAX;
	dtt_check(us.us_misnamed == 1, "dtd counted one record naming another "
	    "process's thread (%llu)", (unsigned long long)us.us_misnamed);
	if (write(go[1], "g", 1) == 1)
		dtt_check(dtt_exited0(dtt_wait(tracee, DTT_EXIT_MS)),
		    "the tracee exited 0");
	tracee = -1;
out:
	if (tracee > 0)
		dtt_stop(tracee, SIGKILL, DTT_EXIT_MS);
	for (k = 0; k < 2; k++) {
		if (out[k] != -1)
			close(out[k]);
		if (go[k] != -1)
			close(go[k]);
	}
	getpid_dtd_end(&dd, fd);
}
