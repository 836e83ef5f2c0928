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
 * fork_storm: the rest of a busy machine, as btrace -c sees it: forks
 * as fast as one process can make them, each child gone at once, until
 * killed.  Every fork is announced on the kernel's process connector to
 * every listener; no exec, so that the storm costs the announcements
 * and little else.  Writes "go\n" on stdout once it forks, so that a
 * test waits for the storm rather than sleeping.
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int
main(void)
{
	pid_t pid;
	int said = 0;

	for (;;) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
				;
		if (!said) {
			said = 1;
			printf("go\n");
			fflush(stdout);
		}
	}
}
