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
 * fork_spawn fork|spawn count [pidfile]: count fork() children that
 * _exit at once, or count posix_spawn()s of /bin/true, each waited for;
 * with pidfile, its pid ("p PID") and each child's ("c PID") written
 * there once they are done, so that a rule keyed by pid is checked
 * child by child (the file is written after the calls counted).  For
 * run-kbsys.sh: the calls a child makes before it runs a hook of its
 * own (a fork child's return) or without one (a spawn child's execve
 * through its parent's ring) are counted once.
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
	char *av[] = { "/bin/true", NULL };
	pid_t pid, *kids;
	FILE *f;
	int i, n;

	if ((argc != 3 && argc != 4) || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: fork_spawn fork|spawn count "
		    "[pidfile]\n");
		return 2;
	}
	if ((kids = calloc((size_t)n, sizeof(*kids))) == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		if (strcmp(argv[1], "fork") == 0) {
			if ((pid = fork()) == -1)
				return 1;
			if (pid == 0)
				_exit(0);
		} else if (posix_spawn(&pid, av[0], NULL, NULL, av,
		    environ) != 0)
			return 1;
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
		kids[i] = pid;
	}
	if (argc == 4) {
		if ((f = fopen(argv[3], "w")) == NULL)
			return 1;
		fprintf(f, "p %d\n", (int)getpid());
		for (i = 0; i < n; i++)
			fprintf(f, "c %d\n", (int)kids[i]);
		if (fclose(f) != 0)
			return 1;
	}
	free(kids);
	return 0;
}
