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
 * syscall_signals DTD DTRUN TRACEE [GDB]: a traced program behaves as
 * untraced under debuggers and signal masks (signals_tracee.c).
 *
 * - A program that blocks SIGTRAP and SIGSYS and reads them from a
 *   signalfd (and by sigwait()) exits 23 traced as untraced: in the
 *   default mode, with dispatch on (USERDT_DISPATCH=1) and in
 *   all-calls mode, getppid recorded so that its thread traces.
 * - clone3 with a struct it cannot read and with a size under 8 bytes
 *   fails with EFAULT and EINVAL traced as untraced, in the same modes
 *   and under gdb: the library reads its flags without faulting.
 * - Under gdb, both ways round (dtrun traces gdb and its inferior; gdb
 *   runs dtrun and the program it execs), the program runs to its exit
 *   without a signal of the library's stopping it.
 * - SIGSYS as the program's own, traced as untraced in each mode: a
 *   handler of its own that it reads back and sends itself SIGSYS to;
 *   a handler's sa_mask and SA_RESETHAND applied as the kernel would;
 *   SIGSYS blocked, sent by kill(), held pending until the unblock,
 *   then its default action (death) or its handler; a handler kept
 *   after a posix_spawn whose child reset it; ignored across exec
 *   and still after a thread's start (which installs the library's
 *   handler where it was not yet); ignored, a thread started, sent
 *   (the view of the mask after pthread_create() where its clone and
 *   glibc's mask calls after it go through undispatched); blocked and
 *   pending across exec, the default action (the next image's library
 *   must not let it in); SIGTRAP and SIGSYS blocked, ignored and
 *   pending across a failed exec, an exec, posix_spawn and an exec into
 *   an image without the library; handlers with every signal in their
 *   masks making system calls from code of its own
 *   (dispatched).
 * - rt_sigaction of SIGUSR1, SIGTRAP and SIGSYS with a bad pointer for
 *   the action or the old one fails with EFAULT, as untraced.
 * - A signal handler on an alternate stack needs at most what the
 *   README and dtrun(1) say more of it traced than untraced
 *   (UDT_ALTSTACK_SYS, UDT_ALTSTACK_TRAP), and runs on a stack that much
 *   larger.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

/*
 * What the library may add to a handler's alternate stack use (README,
 * dtrun(1)): a system call the handler makes, UDT_ALTSTACK_SYS more;
 * its return (rt_sigreturn, an int3 site), one more kernel signal frame
 * and UDT_ALTSTACK_TRAP.  The frame is bounded here by what the smallest
 * handler needs untraced, which is mostly the kernel's frame.
 */
#define UDT_ALTSTACK_SYS	1280
#define UDT_ALTSTACK_TRAP	256

static char	*dtrun, *tracee, *sock;

/* Run argv, output to a pipe read into buf; its wait status, or -1. */
static int
run(char *const argv[], char *buf, size_t size)
{
	size_t have = 0;
	ssize_t n;
	pid_t pid;
	int p[2], st;

	buf[0] = '\0';
	if (pipe(p) != 0)
		return -1;
	pid = dtt_spawn(argv, NULL, -1, p[1], p[1], -1);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	while (have + 1 < size &&
	    (n = read(p[0], buf + have, size - 1 - have)) > 0)
		have += (size_t)n;
	buf[have] = '\0';
	close(p[0]);
	st = dtt_wait(pid, 60000);
	if (st == -1)
		st = dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	return st;
}

static int
exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

/*
 * The tracee's mode arg (what it does: `what`), untraced (env NULL) or
 * traced with env=1: it exits 23, as untraced, either way.
 */
static void
as_untraced(const char *arg, const char *what, const char *mode,
    const char *env)
{
	char *untraced[] = { tracee, (char *)arg, NULL };
	char *traced[] = { dtrun, "-s", sock, tracee, (char *)arg, NULL };
	char out[4096];
	int st;

	if (env == NULL) {
		st = run(untraced, out, sizeof(out));
		dtt_check(exited(st, 23), "%s, untraced: exit 23 (status %#x)",
		    what, st);
		return;
	}
	setenv(env, "1", 1);
	st = run(traced, out, sizeof(out));
	unsetenv(env);
	dtt_check(exited(st, 23), "%s, traced (%s): exit 23 as untraced "
	    "(status %#x%s%s)", what, mode, st, *out ? ": " : "", out);
}

/*
 * SIGSYS cases of the tracee (arg): as untraced, exit 23, or death by
 * SIGSYS after "held" (dies).
 */
static void
sys_case(const char *arg, const char *what, const char *mode,
    const char *env, int dies)
{
	char *untraced[] = { tracee, (char *)arg, NULL };
	char *traced[] = { dtrun, "-s", sock, tracee, (char *)arg, NULL };
	const char *cgt, *seen;
	char out[4096];
	int st, ok;

	if (env != NULL)
		setenv(env, "1", 1);
	st = run(env == NULL ? untraced : traced, out, sizeof(out));
	if (env != NULL)
		unsetenv(env);
	if (dies)
		ok = st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS &&
		    strstr(out, "held\n") != NULL;
	else
		ok = exited(st, 23);
	dtt_check(ok, "%s, %s: %s as untraced (status %#x: %s)", what, mode,
	    dies ? "dies of SIGSYS at the unblock" : "exit 23", st, out);
	/*
	 * In the default mode, where every site of the start is rewritten
	 * or trapped, SIGSYS is the program's until something needs ours
	 * (one call a start fewer); all-calls mode takes it at once.
	 */
	cgt = env == NULL || strcmp(env, "SYSCALL_SIGNALS_DEFAULT") == 0 ?
	    "cgt-sys 0\n" : strcmp(env, "USERDT_ALLCALLS") == 0 ?
	    "cgt-sys 1\n" : NULL;
	/* Every SIGSYS case says it first (cgtsys()). */
	if (cgt != NULL) {
		seen = strstr(out, "cgt-sys");
		dtt_check(seen != NULL && strstr(out, cgt) != NULL, "%s, %s: "
		    "SIGSYS caught as the program began: %.9s (want %.9s)",
		    what, mode, seen != NULL ? seen : "nothing", cgt);
	}
}

static void
under_gdb(char *gdb)
{
	char *dtgdb[] = { dtrun, "-s", sock, gdb, "-nx", "-q", "-batch",
	    "-ex", "run", "--args", tracee, "plain", NULL };
	char *gdbdt[] = { gdb, "-nx", "-q", "-batch", "-ex", "run",
	    "--args", dtrun, "-s", sock, tracee, "plain", NULL };
	static char out[65536];
	int st;

	st = run(dtgdb, out, sizeof(out));
	dtt_check(exited(st, 0) && strstr(out, "exited with code 027") !=
	    NULL && strstr(out, "received signal") == NULL, "dtrun gdb "
	    "PROG: the inferior runs to its exit 23 (status %#x): %s", st,
	    out);
	st = run(gdbdt, out, sizeof(out));
	dtt_check(exited(st, 0) && strstr(out, "exited with code 027") !=
	    NULL && strstr(out, "received signal") == NULL, "gdb dtrun "
	    "PROG: the inferior runs to its exit 23 (status %#x): %s", st,
	    out);
}

/* The alternate stack the tracee's handler used at depth, or 0. */
static unsigned long
altused(int traced, unsigned long depth)
{
	char d[32], out[256];
	char *u[] = { tracee, "alt", d, NULL };
	char *t[] = { dtrun, "-s", sock, tracee, "alt", d, NULL };
	unsigned long used = 0;
	int st;

	snprintf(d, sizeof(d), "%lu", depth);
	st = run(traced ? t : u, out, sizeof(out));
	if (!exited(st, 0) || sscanf(out, "used %lu", &used) != 1)
		warnx("alt %lu: status %#x, %s", depth, st, out);
	return used;
}

static void
altstack(void)
{
	static const unsigned long depths[] = { 0, 1024, 2048, 3072, 4096,
	    8192 };
	char s[32], d[32], out[256];
	char *t[] = { dtrun, "-s", sock, tracee, "altsz", s, d, NULL };
	unsigned long u, tr, frame = 0, bound;
	size_t i;
	int st;

	for (i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		u = altused(0, depths[i]);
		tr = altused(1, depths[i]);
		if (i == 0)
			frame = u;
		bound = u + UDT_ALTSTACK_SYS;
		if (bound < 2 * frame + UDT_ALTSTACK_TRAP)
			bound = 2 * frame + UDT_ALTSTACK_TRAP;
		printf("# alternate stack, handler at depth %lu: %lu bytes "
		    "untraced, %lu traced (+%ld)\n", depths[i], u, tr,
		    (long)(tr - u));
		dtt_check(u != 0 && tr != 0 && tr <= bound, "a handler at "
		    "depth %lu needs at most max(%lu + %d, 2 x %lu + %d) = %lu "
		    "bytes of alternate stack traced: %lu", depths[i], u,
		    UDT_ALTSTACK_SYS, frame, UDT_ALTSTACK_TRAP, bound, tr);
		/* And runs on just that much, an unmapped page below. */
		snprintf(s, sizeof(s), "%lu", bound);
		snprintf(d, sizeof(d), "%lu", depths[i]);
		st = run(t, out, sizeof(out));
		dtt_check(exited(st, 0), "traced, on an alternate stack of %s "
		    "bytes (status %#x)", s, st);
	}
}

int
main(int argc, char *argv[])
{
	/* The library's modes, by the variable that picks each. */
	static const struct {
		const char	*name, *env;
	} modes[] = {
		{ "untraced", NULL },
		{ "default mode", "SYSCALL_SIGNALS_DEFAULT" },
		{ "dispatch on", "USERDT_DISPATCH" },
		{ "all-calls mode", "USERDT_ALLCALLS" },
	};
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct stat sb;
	uint32_t pbn;
	size_t npi, i;
	int fd = -1;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: syscall_signals DTD DTRUN TRACEE "
		    "[GDB]\n");
		return 2;
	}
	dtrun = argv[2];
	tracee = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (st_setup(&dd, "udt-signals", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	sock = dd.dd_sock;
	/* A recorded call makes the tracee's thread trace (and dispatch). */
	if (st_enable_linux(fd, pi, npi, 110, "getppid", DTEVT_FUNCARGS,
	    &pbn) != 0 || dtt_record(fd, 1) != 0)
		goto out;
	/* No lazy binding in a handler: its cost is not the library's. */
	setenv("LD_BIND_NOW", "1", 1);
	unsetenv("USERDT_DISPATCH");
	unsetenv("USERDT_ALLCALLS");
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		as_untraced("sigfd", "signalfd program", modes[i].name,
		    modes[i].env);
		/* clone3's bad struct and short size: EFAULT, EINVAL */
		as_untraced("clone3", "clone3 with a bad struct",
		    modes[i].name, modes[i].env);
		/* made in the SIGSYS handler, undone by its sigreturn */
		as_untraced("altset", "sigaltstack set and taken off",
		    modes[i].name, modes[i].env);
		/* a handler's deferred call inside the program's */
		as_untraced("defer2", "deferred calls nested by a handler",
		    modes[i].name, modes[i].env);
		sys_case("sysown", "a SIGSYS handler of its own, kill()",
		    modes[i].name, modes[i].env, 0);
		sys_case("jitmask", "full-mask handlers call from a JIT page",
		    modes[i].name, modes[i].env, 0);
		sys_case("sysign", "SIGSYS ignored across exec, a thread",
		    modes[i].name, modes[i].env, 0);
		/*
		 * Blocked and ignored across execs, a posix_spawn; not
		 * a pending SIGSYS in all-calls mode, where a thread
		 * holding one runs undispatched (a known limit, below).
		 */
		as_untraced(i == 3 ? "sigexect" : "sigexec", "SIGTRAP and "
		    "SIGSYS blocked and ignored across exec", modes[i].name,
		    modes[i].env);
		/* its handler's sa_mask and SA_RESETHAND, as the kernel's */
		as_untraced("sysmask", "a SIGSYS handler's mask and "
		    "SA_RESETHAND", modes[i].name, modes[i].env);
		as_untraced("sysmask2", "a SIGSYS handler with every signal "
		    "in its mask, sent it again", modes[i].name, modes[i].env);
		/* a bad pointer is EFAULT, not the library's SIGSEGV */
		as_untraced("sigfault", "rt_sigaction with bad pointers",
		    modes[i].name, modes[i].env);
		/* ignored, then a thread: glibc's mask calls let through */
		as_untraced("systhr", "SIGSYS ignored, a thread, kill()",
		    modes[i].name, modes[i].env);
		/* blocked and pending across exec, the default action */
		as_untraced("sysheld", "SIGSYS blocked and pending across "
		    "exec", modes[i].name, modes[i].env);
		/*
		 * posix_spawn's child resets the handler in its parent's
		 * memory: the parent keeps its own.
		 */
		sys_case("sysspawn", "a SIGSYS handler, posix_spawn",
		    modes[i].name, modes[i].env, 0);
		/*
		 * A vfork child's mask is its own: the parent's view of
		 * ours, and a SIGTRAP it holds, stay (a held one's int3
		 * sites gone back, its posix_spawn's clone among them).
		 */
		as_untraced("vforkview", "SIGTRAP and SIGSYS blocked, a vfork "
		    "child unblocks them", modes[i].name, modes[i].env);
		as_untraced("heldspawnt", "SIGTRAP blocked and pending across "
		    "a posix_spawn that unblocks it", modes[i].name,
		    modes[i].env);
		/*
		 * Not in all-calls mode, where a thread holding a SIGSYS
		 * runs without dispatch and nothing else sees its
		 * sigprocmask: the unblock finds the view still blocking,
		 * and the signal is held again (a known limit, said).
		 */
		if (i == 3) {
			printf("# SIGSYS held and unblocked: not checked in "
			    "all-calls mode (its unblock goes unseen)\n");
			continue;
		}
		sys_case("sysblock", "SIGSYS blocked, kill(), unblocked",
		    modes[i].name, modes[i].env, 1);
		sys_case("sysblockh", "SIGSYS blocked, kill(), its handler",
		    modes[i].name, modes[i].env, 0);
		as_untraced("heldspawn", "SIGSYS blocked and pending across "
		    "a posix_spawn that unblocks it", modes[i].name,
		    modes[i].env);
	}
	if (argc == 5 && stat(argv[4], &sb) == 0)
		under_gdb(argv[4]);
	else
		/* Not a skip: scripts/deps.sh installs gdb. */
		dtt_check(false, "gdb is there to run the debugger checks");
	altstack();
out:
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done();
}
