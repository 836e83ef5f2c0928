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
 * openat_wait count [fail]: say "ready" on stdout, wait for a byte on
 * stdin, then make count openat calls and exit.  Started before a
 * tracer, so that none of its start is counted: its openat calls after
 * the byte are count exactly.  With fail, each round also makes an
 * openat that fails (ENOENT) and a close that fails (EBADF), for
 * filters of arguments and return values.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	char c;
	int i, n, fd, fail;

	if (argc < 2 || argc > 3 || (n = atoi(argv[1])) < 0 ||
	    (argc == 3 && strcmp(argv[2], "fail") != 0)) {
		fprintf(stderr, "usage: openat_wait count [fail]\n");
		return 2;
	}
	fail = argc == 3;
	if (write(1, "ready\n", 6) != 6 || read(0, &c, 1) != 1)
		return 1;
	for (i = 0; i < n; i++) {
		if ((fd = openat(AT_FDCWD, "/dev/null", O_RDONLY)) == -1) {
			perror("openat");
			return 1;
		}
		close(fd);
		if (fail && (openat(AT_FDCWD, "/nonexistent/openat_wait",
		    O_RDONLY) != -1 || errno != ENOENT ||
		    close(-1) != -1 || errno != EBADF)) {
			fprintf(stderr, "openat_wait: a call meant to fail "
			    "did not\n");
			return 1;
		}
	}
	return 0;
}
