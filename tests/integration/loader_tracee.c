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
 * syscall_loader's program, built twice: dynamically linked (its loader
 * opens ld.so.cache and libc) and statically (no loader at all).  Its one
 * call of its own, write(2) of three bytes to stdout, tells the test
 * that every earlier event of the process is in.  With -t it runs
 * another program under its own ptrace (syscall_loader's refused case).
 */
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

/*
 * -t PROG: run PROG as a child this process traces (PTRACE_TRACEME),
 * so that no other tracer can have it, passing its signals on; its
 * exit status.  Built here, without sanitizers, because it runs inside
 * a traced tree, where the preload library comes first.
 */
static int
selftrace(char *argv[])
{
	pid_t pid;
	int st;

	if ((pid = fork()) == -1)
		return 126;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) == -1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	for (;;) {
		if (waitpid(pid, &st, 0) == -1)
			return 126;
		if (WIFEXITED(st))
			return WEXITSTATUS(st);
		if (WIFSIGNALED(st))
			return 128 + WTERMSIG(st);
		(void)ptrace(PTRACE_CONT, pid, 0,
		    WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st));
	}
}

int
main(int argc, char *argv[])
{
	if (argc > 2 && strcmp(argv[1], "-t") == 0)
		return selftrace(argv + 2);
	return write(STDOUT_FILENO, "ok\n", 3) == 3 ? 0 : 1;
}
