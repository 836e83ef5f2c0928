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
 * syscall_allcalls DTD DTRUN TRACEE
 *
 * All-calls mode (dtrun -a, udt_sud.c): syscall_tracee stdio
 * makes its system calls only through libc's own paths (fopen, fclose,
 * stdio's writes, a thread, a fork child, system()).  The hooks alone see
 * none of its openat calls; with dispatch every one arrives, attributed
 * to the right process, with valid results, and the program runs as it
 * would untraced.
 */
#include <sys/wait.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NOPENS		7
#define SYS_WRITE	4
#define SYS_OPENAT	321

struct counts {
	long	c_open, c_openok, c_kidopen, c_stack;
	long	c_write;	/* to stdout, but for the marker */
	long	c_mark;		/* write(2) of the "S" line: the last */
};

/*
 * Run the tracee once and count its events until its last write, the
 * one through write(2) that the hooks record as well, has come (told
 * from stdio's by its length, that of the "S" line; and in
 * all-calls mode the fork child's opens too).  A process's events arrive
 * in the order it made them, so by then every earlier one of the tracee
 * is in: "none arrived" is a count, not a time-out.
 */
static int
run(struct dtt_dtd *dd, int fd, const char *dtrun, const char *tracee,
    const char *path, int allcalls, uint32_t pbn_open, uint32_t pbn_write,
    struct counts *c)
{
	static struct dt_evt evs[1024];
	char line[128], nbuf[16];
	char *targv[] = { (char *)dtrun, "-s", dd->dd_sock, (char *)tracee,
	    "stdio", (char *)path, nbuf, NULL, NULL };
	FILE *out;
	pid_t tpid, kid = -1;
	int status, lines = -1;
	size_t marklen;
	long n, k;

	snprintf(nbuf, sizeof(nbuf), "%d", NOPENS);
	/* dtrun -a, which sets USERDT_ALLCALLS=1 for the program. */
	if (allcalls) {
		memmove(&targv[2], &targv[1], 6 * sizeof(targv[0]));
		targv[1] = "-a";
	}
	unsetenv("USERDT_ALLCALLS");
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		return -1;
	while (fgets(line, sizeof(line), out) != NULL)
		sscanf(line, "S %d %d", &kid, &lines);
	fclose(out);
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	if (!dtt_check(dtt_exited0(status) && kid > 0 && lines == 2,
	    "%s: the program ran as untraced (child %d)",
	    allcalls ? "all calls" : "default", (int)kid))
		return -1;
	marklen = (size_t)snprintf(line, sizeof(line), "S %d %d\n",
	    (int)kid, lines);
	memset(c, 0, sizeof(*c));
	while (!(c->c_mark > 0 && c->c_kidopen >= NOPENS) &&
	    (n = dtt_read(fd, evs, 1024, 10000)) > 0) {
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];

			if (ev->dtev_pid == kid && ev->dtev_pbn == pbn_open)
				c->c_kidopen++;
			if (ev->dtev_pid != tpid)
				continue;
			if (ev->dtev_pbn == pbn_open)
				c->c_open++;
			/* syscall instruction, fopen's insides, the program */
			if (ev->dtev_pbn == pbn_open &&
			    ev->dtev_ustack.st_count >= 3)
				c->c_stack++;
			if (ev->dtev_pbn == pbn_open + 1 &&
			    ev->dtev_retval[0] >= 0 && ev->dtev_error == 0)
				c->c_openok++;
			if (ev->dtev_pbn == pbn_write &&
			    ev->dtev_args[0] == 1) {
				if ((size_t)ev->dtev_args[2] == marklen)
					c->c_mark++;
				else
					c->c_write++;
			}
		}
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct counts c;
	char path[160];
	uint32_t pbn_open, pbn_write;
	static const char *const mname[] = { "default", "all calls" };
	size_t npi;
	int fd = -1, tfd, mode;

	if (argc != 4) {
		fprintf(stderr, "usage: syscall_allcalls DTD DTRUN TRACEE\n");
		return 2;
	}
	if (st_setup(&dd, "udt-allcalls", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/opened", dd.dd_dir);
	if ((tfd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == -1)
		goto out;
	close(tfd);
	pbn_open = dtt_pbn(pi, npi, "syscall", "sys%321", "entry");
	pbn_write = dtt_pbn(pi, npi, "syscall", "sys%4", "entry");
	if (pbn_open == 0 || pbn_write == 0 ||
	    dtt_enable(fd, pbn_open, DTEVT_FUNCARGS | DTEVT_USTACK, 0) ||
	    dtt_enable(fd, pbn_open + 1, 0, 0) ||
	    dtt_enable(fd, pbn_write, DTEVT_FUNCARGS, 0) ||
	    dtt_record(fd, 1)) {
		warn("enable");
		goto out;
	}

	/*
	 * Both modes see every call: the default by rewritten sites (and
	 * dispatch for the rest), -a by dispatch alone.
	 */
	for (mode = 0; mode < 2; mode++) {
		if (run(&dd, fd, argv[2], argv[3], path, mode, pbn_open,
		    pbn_write, &c) != 0)
			continue;
		dtt_check(c.c_open == 2 * NOPENS && c.c_openok == 2 * NOPENS,
		    "%s: %ld openat entries, %ld successful returns, "
		    "%d wanted, from two threads", mname[mode], c.c_open,
		    c.c_openok, 2 * NOPENS);
		dtt_check(c.c_stack == c.c_open, "%s: %ld of %ld "
		    "openat entries carry a user stack from the call",
		    mname[mode], c.c_stack, c.c_open);
		dtt_check(c.c_kidopen == NOPENS, "%s: the fork child's "
		    "%ld openat under its own pid", mname[mode], c.c_kidopen);
		dtt_check(c.c_write == 1 && c.c_mark == 1, "%s: "
		    "stdio's write (%ld) and write(2)'s (%ld) to stdout",
		    mname[mode], c.c_write, c.c_mark);
	}
out:
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done() || dtt_npass < 10;
}
