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
 * A traced program whose calls are made by short children: KIDS forks,
 * at most PAR alive at once, each child making CALLS getppid() calls and
 * leaving.  The parent makes none, so a count of getppid under -c is
 * KIDS * CALLS exactly (and the -c shell's one), whenever btrace reads
 * dtd's table: children forked while btrace reads it are the tree's too.
 *
 * usage: agg_forks KIDS CALLS [PAR]
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	long kids, calls, par = 4, alive = 0, i, j;
	int status, bad = 0;
	pid_t pid;

	if (argc < 3 || argc > 4 || (kids = strtol(argv[1], NULL, 10)) <= 0 ||
	    (calls = strtol(argv[2], NULL, 10)) <= 0)
		return 2;
	if (argc == 4 && (par = strtol(argv[3], NULL, 10)) <= 0)
		return 2;
	for (i = 0; i < kids; i++) {
		if (alive == par) {
			while ((pid = wait(&status)) == -1 && errno == EINTR)
				;
			if (pid == -1)
				return 1;
			bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
			alive--;
		}
		if ((pid = fork()) == -1)
			return 1;
		if (pid == 0) {
			for (j = 0; j < calls; j++)
				(void)getppid();
			_exit(0);
		}
		alive++;
	}
	for (; alive > 0; alive--) {
		while ((pid = wait(&status)) == -1 && errno == EINTR)
			;
		if (pid == -1)
			return 1;
		bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	return bad;
}
