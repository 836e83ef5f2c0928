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
 * syscall_vregs DTD DTRUN TRACEE: a call at a rewritten site gives back
 * every vector and mask register as the kernel does (vregs_tracee.c),
 * whatever the library does around it: nothing enabled (an execve
 * still asks the launcher's helper, in libc's string functions); then
 * getppid, access and execve recorded with user stacks (libunwind) and
 * strings.  The tracee's site must have been rewritten, not left to a
 * signal, which saves every register for free; the recorded runs'
 * events must have come, stacks and all.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "dtt.h"
#include "syscall_util.h"

#define ROUNDS	20	/* as vregs_tracee.c */

/* Run the tracee once: its level, its site's byte, its complaints. */
static int
run(struct dtt_dtd *dd, char *const dtrun, char *const tracee,
    const char *what)
{
	char *targv[] = { dtrun, "-s", dd->dd_sock, tracee, NULL };
	char line[128], level[16] = "?";
	unsigned int site = 0;
	int nbad = 0, done = 0, status;
	pid_t pid;
	FILE *out;

	if ((out = st_spawn_out(targv, &pid)) == NULL)
		return -1;
	while (fgets(line, sizeof(line), out) != NULL) {
		sscanf(line, "level %15s", level);
		sscanf(line, "site %x", &site);
		if (strncmp(line, "bad ", 4) == 0 && nbad++ < 4)
			warnx("%s: %s", what, line);
		if (strcmp(line, "done\n") == 0)
			done = 1;
	}
	fclose(out);
	status = dtt_stop(pid, 0, DTT_EXIT_MS);
	dtt_check(site == 0xe9, "%s: the tracee's site was rewritten "
	    "(first byte %02x)", what, site);
	dtt_check(done && nbad == 0 && dtt_exited0(status), "%s: every %s "
	    "register as it was after %d getppid, access and failed execve "
	    "(%d changed, status %#x)", what, level, ROUNDS, nbad, status);
	return pid;
}

/* The string of an event's first argument, or "". */
static const char *
arg0(const struct dt_evt *ev)
{
	const unsigned char *a = DTEV_STR_AREA(ev);

	return (a[0] & DTEV_STR_ARG) == 1 ? (const char *)a + DTEV_STR_HDR :
	    "";
}

int
main(int argc, char *argv[])
{
	static struct dt_evt evs[1024];
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	uint32_t pbn_ppid, pbn_acc, pbn_exec;
	long n, k, nppid = 0, nacc = 0, nexec = 0;
	int fd = -1;
	size_t npi;
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: syscall_vregs DTD DTRUN TRACEE\n");
		return 2;
	}
	if (st_setup(&dd, "udt-vregs", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	(void)run(&dd, argv[2], argv[3], "nothing enabled");

	if (st_enable_linux(fd, pi, npi, SYS_getppid, "getppid",
	    DTEVT_USTACK | DTEVT_EXECNAME, &pbn_ppid) != 0 ||
	    st_enable_linux(fd, pi, npi, SYS_access, "access",
	    DTEVT_USTACK | DTEVT_FUNCARGS | DTEVT_STRINGS, &pbn_acc) != 0 ||
	    st_enable_linux(fd, pi, npi, SYS_execve, "execve",
	    DTEVT_USTACK | DTEVT_FUNCARGS | DTEVT_STRINGS, &pbn_exec) != 0 ||
	    dtt_record(fd, 1) != 0)
		goto out;
	if ((pid = run(&dd, argv[2], argv[3], "recorded")) <= 0)
		goto out;
	/* Until every round's events have come, or none for 3 s. */
	while ((n = dtt_read(fd, evs, 1024, 3000)) > 0) {
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];

			if (ev->dtev_pid != pid || ev->dtev_ustack.st_count == 0)
				continue;
			if (ev->dtev_pbn == pbn_ppid)
				nppid++;
			else if (ev->dtev_pbn == pbn_acc &&
			    strcmp(arg0(ev), "/usr") == 0)
				nacc++;
			else if (ev->dtev_pbn == pbn_exec &&
			    strcmp(arg0(ev), "/nonexistent/userdt") == 0)
				nexec++;
		}
		if (nppid >= ROUNDS && nacc >= ROUNDS && nexec >= ROUNDS)
			break;
	}
	dtt_check(nppid == ROUNDS && nacc == ROUNDS && nexec == ROUNDS,
	    "recorded with user stacks: getppid %ld, access(\"/usr\") %ld, "
	    "execve(\"/nonexistent/userdt\") %ld of %d each", nppid, nacc,
	    nexec, ROUNDS);
out:
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done() || dtt_npass < 5;
}
