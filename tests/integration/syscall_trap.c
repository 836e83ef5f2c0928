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
 * syscall_trap DTD DTRUN TRACEE LIB: trapped sites and dispatch off.
 * Where every system call site is rewritten or trapped (udt_rw_trap.c),
 * a thread that records runs without Syscall User Dispatch, also after
 * a dlopen() (the loader's new objects are rewritten at its r_brk); once
 * it makes code of its own (a JIT's page) it has dispatch on.  Read from
 * outside, as the kernel has it: ptrace's
 * PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG at the three stops
 * trap_tracee.c makes.  The trapped calls (clone3 of a thread made
 * with every signal blocked, posix_spawn, rt_sigreturn) arrive, and the
 * program's own int3 reaches its SIGTRAP handler or kills it as untraced.
 */
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <err.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtt.h"
#include "syscall_util.h"

#ifndef PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG
#define PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG	0x4211
#endif

/* How often the tracee closes and opens its library again. */
#define RELOADS		20
#define STR(x)		STR1(x)
#define STR1(x)		#x

/* The kernel's struct ptrace_sud_config. */
struct sud_config {
	uint64_t	mode;		/* PR_SYS_DISPATCH_OFF 0, _ON 1 */
	uint64_t	selector, offset, len;
};

enum { P_WRITE, P_CLONE3, P_SIGRET, P_N };
static const int lnr[P_N] = { 1, 435, 15 };
static const char *const lname[P_N] = { "write", "clone3", "rt_sigreturn" };

/*
 * Wait for pid to stop itself, read its dispatch mode through ptrace,
 * let it go on.  The mode, or -1.
 */
static long
sud_mode(pid_t pid)
{
	struct sud_config c;
	long mode = -1;
	int st;

	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
		warnx("tracee did not stop (status %#x)", st);
		return -1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) {
		warn("PTRACE_SEIZE");
		return -1;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) == 0 &&
	    waitpid(pid, &st, __WALL) == pid &&
	    ptrace(PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG, pid,
	    (void *)sizeof(c), &c) == 0)
		mode = (long)c.mode;
	else
		warn("PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG");
	ptrace(PTRACE_DETACH, pid, 0, 0);
	kill(pid, SIGCONT);
	return mode;
}

int
main(int argc, char *argv[])
{
	static struct dt_evt evs[1024];
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	uint32_t pbn[P_N];
	char line[128];
	char *targv[] = { argv[2], "-s", NULL, argv[3], argv[4],
	    STR(RELOADS), NULL };
	long marks[5] = { 0 }, n, k, mode1, mode2, mode3, nlib = 0;
	long clone3_ret = 0, nsigret = 0;
	int owntrap = 0, blocked = 0, dfltrap = 0, done = 0, jalt = 0,
	    jaltoff = 0;
	pid_t tpid, thread = 0;
	sigset_t trap, omask;
	int fd = -1, i, status;
	size_t npi;
	FILE *out;

	if (argc != 5) {
		fprintf(stderr, "usage: syscall_trap DTD DTRUN TRACEE LIB\n");
		return 2;
	}
	if (st_setup(&dd, "udt-trap", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	for (i = 0; i < P_N; i++)
		if (st_enable_linux(fd, pi, npi, lnr[i], lname[i],
		    DTEVT_FUNCARGS, &pbn[i]) != 0)
			goto out;
	if (dtt_record(fd, 1) != 0)
		goto out;

	/*
	 * SIGTRAP blocked from before the tracee's exec: the library makes
	 * its trapped calls all the same.
	 */
	targv[2] = dd.dd_sock;
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	sigprocmask(SIG_BLOCK, &trap, &omask);
	out = st_spawn_out(targv, &tpid);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	if (out == NULL)
		goto out;
	mode1 = sud_mode(tpid);
	mode2 = sud_mode(tpid);
	mode3 = sud_mode(tpid);
	while (fgets(line, sizeof(line), out) != NULL) {
		sscanf(line, "own-trap %d", &owntrap);
		sscanf(line, "blocked %d", &blocked);
		sscanf(line, "dfl-trap %d", &dfltrap);
		sscanf(line, "jit-altstack %d", &jalt);
		sscanf(line, "jit-altstack-off %d", &jaltoff);
		if (strcmp(line, "done\n") == 0)
			done = 1;
	}
	fclose(out);
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	dtt_check(done && dtt_exited0(status), "the tracee ran to its end "
	    "(status %#x)", status);
	dtt_check(mode1 == 0, "no dispatch where every site is rewritten or "
	    "trapped (mode %ld)", mode1);
	dtt_check(mode2 == 0, "still none after dlopen(): the loader's new "
	    "object was rewritten (mode %ld)", mode2);
	dtt_check(mode3 == 1, "dispatch on once the program made code of its "
	    "own (mode %ld)", mode3);
	dtt_check(owntrap == 1, "the program's int3 reached its own SIGTRAP "
	    "handler, which sigaction() reports");
	dtt_check(blocked == 1, "pthread_create() and posix_spawn() with every "
	    "signal blocked, SIGTRAP since before the exec");
	dtt_check(dfltrap == 1, "an int3 with SIGTRAP's default action kills");
	dtt_check(jalt == 1 && jaltoff == 1, "a dispatched sigaltstack() "
	    "sets the thread's alternate stack, and takes it off (%d, %d)",
	    jalt, jaltoff);

	/* Until every expected event has come, or none for 3 s. */
	while ((n = dtt_read(fd, evs, 1024, 3000)) > 0) {
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];
			uint32_t p = ev->dtev_pbn;

			if (ev->dtev_pid != tpid)
				continue;
			if (p == pbn[P_WRITE] && ev->dtev_args[2] == 1003)
				nlib++;
			if (p == pbn[P_WRITE] && ev->dtev_args[2] >= 2001 &&
			    ev->dtev_args[2] <= 2004) {
				marks[ev->dtev_args[2] - 2000]++;
				if (ev->dtev_args[2] == 2002)
					thread = ev->dtev_tid;
			}
			if (p == pbn[P_CLONE3] + 1 && ev->dtev_tid == tpid &&
			    (long)ev->dtev_retval[0] > 0 && clone3_ret == 0)
				clone3_ret = (long)ev->dtev_retval[0];
			if (p == pbn[P_SIGRET])
				nsigret++;
		}
		if (marks[1] && marks[2] && marks[3] && marks[4] &&
		    nlib >= 7 * (1 + RELOADS) && clone3_ret && thread &&
		    nsigret >= 4)
			break;
	}
	dtt_check(marks[1] == 1 && marks[2] == 1 && marks[3] == 1, "the marks "
	    "of main, the thread, after dlopen (%ld %ld %ld)", marks[1],
	    marks[2], marks[3]);
	dtt_check(nlib == 7 * (1 + RELOADS), "the dlopen()ed library's inline "
	    "syscalls, rewritten, loaded %d times while a thread runs: %ld of "
	    "%d", 1 + RELOADS, nlib, 7 * (1 + RELOADS));
	dtt_check(marks[4] == 1, "the program's own code's syscall, "
	    "dispatched: %ld of 1", marks[4]);
	dtt_check(clone3_ret != 0 && clone3_ret == thread, "pthread_create()'s "
	    "clone3, a trapped site, returned the thread's tid (%ld, thread "
	    "%d)", clone3_ret, (int)thread);
	dtt_check(nsigret == 4, "rt_sigreturn of the program's four handlers "
	    "(%ld)", nsigret);
out:
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done() || dtt_npass < 15;
}
