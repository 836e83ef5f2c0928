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
 * A dynamically linked starter of another program, as shells and
 * libraries start them (ksysarm_test.c):
 *   kt_spawn N vfork PROG ARGS...	N getppid(2) calls, then PROG from a
 *					vfork(2) child, waited for
 *   kt_spawn N spawn PROG ARGS...	the same through posix_spawn(3)
 *					(glibc's: clone(CLONE_VM|CLONE_VFORK))
 * Exits 0, or 1 when the start or PROG failed.
 */
#include <sys/wait.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int
main(int argc, char *argv[])
{
	long n, i;
	pid_t pid;
	int st;

	if (argc < 4)
		return 2;
	n = atol(argv[1]);
	for (i = 0; i < n; i++)
		(void)getppid();
	if (strcmp(argv[2], "vfork") == 0) {
		if ((pid = vfork()) == 0) {
			execv(argv[3], argv + 3);
			_exit(127);
		}
	} else if (strcmp(argv[2], "spawn") == 0) {
		if (posix_spawn(&pid, argv[3], NULL, NULL, argv + 3,
		    environ) != 0)
			return 1;
	} else
		return 2;
	if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}
