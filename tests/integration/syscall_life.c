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
 * syscall_life DTD DTRUN TRACEE LIB: the default mode sees a process's
 * whole life through the device.  life_tracee.c makes system calls from
 * inline instructions in main, from a raw clone(2) thread, from a
 * library it dlopen()s, from a fork child and from an exec'd image, and
 * forks, vforks, posix_spawn()s and execs; every one must arrive, under
 * the right pid, with the right return values.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtt.h"
#include "syscall_util.h"

enum { P_WRITE, P_CLONE, P_CLONE3, P_VFORK, P_EXECVE, P_EXITG, P_N };
static const int lnr[P_N] = { 1, 56, 435, 58, 59, 231 };
static const char *const lname[P_N] = { "write", "clone", "clone3",
    "vfork", "execve", "exit_group" };

int
main(int argc, char *argv[])
{
	static struct dt_evt evs[1024];
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	uint32_t pbn[P_N];
	char line[128];
	char *targv[] = { argv[2], "-s", NULL, argv[3], argv[4], NULL };
	long marks[7] = { 0 }, n, k, nclone = 0;
	long kid_clone_ret = 0, par_clone_ret = 0, vf_par = 0, vf_kid = 0;
	long vf_entry = 0, spawn_ret = 0, exec_entry = 0, exitg = 0;
	long wrongpid = 0;
	pid_t tpid, fpid = 0, vpid = 0, spid = 0, epid = 0;
	int fd = -1, i, done = 0, status;
	size_t npi;
	FILE *out;

	if (argc != 5) {
		fprintf(stderr, "usage: syscall_life DTD DTRUN TRACEE LIB\n");
		return 2;
	}
	if (st_setup(&dd, "udt-life", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	for (i = 0; i < P_N; i++)
		if (st_enable_linux(fd, pi, npi, lnr[i], lname[i],
		    DTEVT_FUNCARGS, &pbn[i]) != 0 && pbn[i] != 0)
			goto out;
	if (dtt_record(fd, 1) != 0)
		goto out;

	targv[2] = dd.dd_sock;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	while (fgets(line, sizeof(line), out) != NULL) {
		sscanf(line, "fork %d", &fpid);
		sscanf(line, "vfork %d", &vpid);
		sscanf(line, "spawn %d", &spid);
		sscanf(line, "exec %d", &epid);
		if (strcmp(line, "done\n") == 0)
			done = 1;
	}
	fclose(out);
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	if (!dtt_check(done && dtt_exited0(status) && fpid > 0 && vpid > 0 &&
	    spid > 0 && epid > 0, "the tracee ran as untraced (fork %d, "
	    "vfork %d, spawn %d, exec %d)", (int)fpid, (int)vpid, (int)spid,
	    (int)epid))
		goto out;

	/* Until every expected event has come, or none for 3 s. */
	while ((n = dtt_read(fd, evs, 1024, 3000)) > 0) {
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];
			uint32_t p = ev->dtev_pbn;
			long rv = (long)ev->dtev_retval[0];

			if (pbn[P_WRITE] != 0 && p == pbn[P_WRITE] &&
			    ev->dtev_args[2] >= 1001 && ev->dtev_args[2] <= 1006) {
				long m = (long)ev->dtev_args[2] - 1000;
				pid_t want = m == 5 ? epid : m == 6 ? fpid : tpid;

				marks[m]++;
				if (ev->dtev_pid != want)
					wrongpid++;
			}
			if (pbn[P_CLONE] != 0 && p == pbn[P_CLONE] &&
			    ev->dtev_pid == tpid)
				nclone++;
			if (pbn[P_CLONE] != 0 && p == pbn[P_CLONE] + 1) {
				if (ev->dtev_pid == fpid && rv == 0)
					kid_clone_ret++;
				if (ev->dtev_pid == tpid && rv == fpid)
					par_clone_ret++;
			}
			if ((pbn[P_CLONE] != 0 && p == pbn[P_CLONE] + 1) ||
			    (pbn[P_CLONE3] != 0 && p == pbn[P_CLONE3] + 1))
				if (ev->dtev_pid == tpid && rv == spid)
					spawn_ret++;
			if (pbn[P_VFORK] != 0 && p == pbn[P_VFORK] &&
			    ev->dtev_pid == tpid)
				vf_entry++;
			if (pbn[P_VFORK] != 0 && p == pbn[P_VFORK] + 1) {
				if (ev->dtev_tid == vpid && rv == 0)
					vf_kid++;
				if (ev->dtev_pid == tpid && rv == vpid)
					vf_par++;
			}
			if (pbn[P_EXECVE] != 0 && p == pbn[P_EXECVE] &&
			    ev->dtev_pid == epid)
				exec_entry++;
			if (pbn[P_EXITG] != 0 && p == pbn[P_EXITG] &&
			    ev->dtev_pid == fpid && ev->dtev_args[0] == 3)
				exitg++;
		}
		if (marks[1] >= 3 && marks[2] >= 5 && marks[3] >= 7 &&
		    marks[4] >= 2 && marks[5] >= 1 && marks[6] >= 1 &&
		    kid_clone_ret && par_clone_ret && spawn_ret && vf_kid &&
		    vf_par && exec_entry && exitg)
			break;
	}
	dtt_check(marks[1] == 3, "inline syscalls in main: %ld of 3", marks[1]);
	dtt_check(marks[2] == 5, "a raw clone thread's syscalls: %ld of 5",
	    marks[2]);
	dtt_check(marks[3] == 7, "a dlopen()ed library's inline syscalls: %ld "
	    "of 7", marks[3]);
	dtt_check(marks[4] == 2, "libc calls from the dlopen()ed library: %ld "
	    "of 2", marks[4]);
	dtt_check(marks[5] == 1, "the exec'd image, from its start: %ld of 1",
	    marks[5]);
	dtt_check(marks[6] == 1, "the fork child: %ld of 1", marks[6]);
	dtt_check(wrongpid == 0, "every mark under its process's pid (%ld "
	    "not)", wrongpid);
	dtt_check(nclone >= 2, "clone entries of the tracee (fork, the raw "
	    "thread): %ld", nclone);
	dtt_check(kid_clone_ret == 1 && par_clone_ret == 1, "fork's clone "
	    "returns 0 in the child (%ld) and the child's pid in the parent "
	    "(%ld)", kid_clone_ret, par_clone_ret);
	dtt_check(spawn_ret == 1, "posix_spawn's clone returns the child's "
	    "pid (%ld)", spawn_ret);
	dtt_check(vf_entry == 1 && vf_par == 1 && vf_kid == 1, "vfork: entry "
	    "%ld, return %ld in the parent with the child's pid, %ld in the "
	    "child with 0", vf_entry, vf_par, vf_kid);
	dtt_check(exec_entry == 1, "execve's entry in the process that "
	    "execs (%ld)", exec_entry);
	dtt_check(exitg == 1, "exit_group(3) of the fork child (%ld)", exitg);
out:
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done() || dtt_npass < 13;
}
