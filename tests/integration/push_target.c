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
 * push_target N [ARG]: N getppid() calls, then N close(ARG) calls
 * (ARG default -1, a descriptor that fails with EBADF), then exit: the
 * known calls push_test counts through filters at the source.  Raw
 * system calls, so no libc caching or wrapper choice changes the count.
 */
#include <sys/syscall.h>

#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	long n, arg, i;

	if (argc < 2)
		return 2;
	n = atol(argv[1]);
	arg = argc > 2 ? atol(argv[2]) : -1;
	for (i = 0; i < n; i++)
		(void)syscall(SYS_getppid);
	for (i = 0; i < n; i++)
		(void)syscall(SYS_close, arg);
	return 0;
}
