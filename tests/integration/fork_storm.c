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
 *
 * Dies with its parent (PR_SET_PDEATHSIG): a test killed by its runner
 * runs no cleanup, and a storm left behind would fork on every core.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	pid_t pid;
	int said = 0;

	if (argc != 2)
		errx(1, "usage: fork_storm parent-pid");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		err(1, "prctl PR_SET_PDEATHSIG");
	/*
	 * The parent may have gone before the prctl, when no signal would
	 * come: its pid comes from itself, as ours may have been reparented
	 * before the first getppid().
	 */
	if (getppid() != (pid_t)strtol(argv[1], NULL, 10))
		return 1;
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
