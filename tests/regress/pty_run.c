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
 * pty_run [-u MARK] INPUT PROGRAM [ARG ...]: run PROGRAM on a new
 * pseudo-terminal as its controlling terminal, in the terminal's
 * foreground as an interactive shell would run it, with INPUT typed on
 * the terminal (at once with a newline, or with -u as it is, once MARK
 * has been written there: a Ctrl-C typed when the program is ready for
 * it); copy what it writes
 * there to stdout and exit with its status.
 */
#include <sys/wait.h>

#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <utmp.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct termios tio;
	char buf[4096], seen[8192];
	const char *mark = NULL;
	size_t nseen = 0, keep;
	ssize_t n;
	pid_t pid;
	int master, slave, status, typed = 0;

	if (argc > 3 && strcmp(argv[1], "-u") == 0) {
		mark = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || (mark != NULL && (*mark == '\0' ||
	    strlen(mark) >= sizeof(seen) / 2))) {
		fprintf(stderr, "usage: pty_run [-u mark] input program "
		    "[arg ...]\n");
		return 2;
	}
	if (openpty(&master, &slave, NULL, NULL, NULL) == -1) {
		perror("openpty");
		return 2;
	}
	/* what is typed is not echoed into the output compared */
	if (tcgetattr(slave, &tio) == 0) {
		tio.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(slave, TCSANOW, &tio);
	}
	if ((pid = fork()) == -1) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		close(master);
		if (login_tty(slave) == -1)
			_exit(127);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	close(slave);
	/* the line waits in the terminal until the program reads it */
	if (mark == NULL && (write(master, argv[1], strlen(argv[1])) == -1 ||
	    write(master, "\n", 1) == -1))
		perror("write");
	for (;;) {
		n = read(master, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* EIO: the terminal's last user is gone */
		fwrite(buf, 1, (size_t)n, stdout);
		fflush(stdout);
		if (mark == NULL || typed)
			continue;
		/* the mark may come in pieces: keep the tail it could span */
		if (nseen + (size_t)n >= sizeof(seen)) {
			keep = strlen(mark);
			memmove(seen, seen + nseen - keep, keep);
			nseen = keep;
		}
		if ((size_t)n > sizeof(seen) - 1 - nseen)
			n = (ssize_t)(sizeof(seen) - 1 - nseen);
		memcpy(seen + nseen, buf, (size_t)n);
		nseen += (size_t)n;
		seen[nseen] = '\0';
		if (memmem(seen, nseen, mark, strlen(mark)) != NULL) {
			typed = 1;
			if (write(master, argv[1], strlen(argv[1])) == -1)
				perror("write");
		}
	}
	if (waitpid(pid, &status, 0) == -1)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 +
	    WTERMSIG(status);
}
