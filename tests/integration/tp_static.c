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
 * A statically linked program (no preload library can see it): N
 * getppid(2) calls, paced so that a system-wide trace keeps up, then
 * exit.  tp_test counts its raw_syscalls events.  With "wait": started
 * before the trace, it first reads a byte from its standard input, says
 * "done" on its standard output after its calls, and stays until its
 * input closes, so that its name is still in /proc when its events are
 * read (tp_test sysall).  With "ppid": says "ppid P" on its standard
 * output after its calls, P what the last of them returned
 * (ksystree_test).  With "pings": as "wait", then, for each byte
 * read after "done", one more getppid() and a "p" written.  With
 * "jit": maps anonymous code and a file's (/bin/sh) executable first,
 * as a JIT or a static dlopen() would.  With "spawn K PROG ARGS...":
 * runs PROG K times, one after the other, first (ksystree_test).  With
 * "fifo": first puts a FIFO where its own file was (argv[0] must name
 * it), so that whoever opens the exec's path would wait for a writer.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct timespec ts = { 0, 200000 };
	long n, i, ppid = 0;
	char c, buf[32], tmp[4096];
	int pings = argc > 2 && strcmp(argv[2], "pings") == 0;
	int wait = pings || (argc > 2 && strcmp(argv[2], "wait") == 0);
	int say = argc > 2 && strcmp(argv[2], "ppid") == 0;
	int len, fd, st;
	pid_t pid;

	n = argc > 1 ? atol(argv[1]) : 1000;
	if (wait && read(0, &c, 1) != 1)
		return 1;
	if (argc > 2 && strcmp(argv[2], "jit") == 0) {
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE |
		    MAP_ANONYMOUS, -1, 0) == MAP_FAILED ||
		    (fd = open("/bin/sh", O_RDONLY | O_CLOEXEC)) == -1 ||
		    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		    0) == MAP_FAILED)
			return 1;
		close(fd);
	}
	if (argc > 2 && strcmp(argv[2], "fifo") == 0) {
		if (snprintf(tmp, sizeof(tmp), "%s.fifo", argv[0]) >=
		    (int)sizeof(tmp) || mkfifo(tmp, 0600) == -1 ||
		    rename(tmp, argv[0]) == -1)
			return 1;
	}
	if (argc > 4 && strcmp(argv[2], "spawn") == 0)
		for (i = atol(argv[3]); i > 0; i--) {
			if ((pid = fork()) == 0) {
				execv(argv[4], argv + 4);
				_exit(127);
			}
			if (pid == -1 || waitpid(pid, &st, 0) != pid ||
			    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				return 1;
		}
	for (i = 0; i < n; i++) {
		ppid = getppid();
		if (i % 100 == 99)
			nanosleep(&ts, NULL);
	}
	if (say) {
		len = snprintf(buf, sizeof(buf), "ppid %ld\n", ppid);
		if (write(1, buf, (size_t)len) != len)
			return 1;
	}
	if (wait) {
		if (write(1, "done\n", 5) != 5)
			return 1;
		while (read(0, &c, 1) > 0)
			if (pings && (getppid() == -1 ||
			    write(1, "p", 1) != 1))
				return 1;
	}
	return 0;
}
