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
 * A program whose user stacks the stack tests compare with perf's: built
 * with frame pointers, its system calls made from named functions called
 * from main.  usage: stacks_tracee write N (N writes of 64 bytes to
 * stdout) | stacks_tracee sleep N (N sleeps of 20 ms).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void
stk_writer(long n)
{
	char b[64];
	long i;

	memset(b, 'x', sizeof(b));
	for (i = 0; i < n; i++)
		if (write(STDOUT_FILENO, b, sizeof(b)) != sizeof(b))
			exit(1);
}

__attribute__((noinline)) static void
stk_sleeper(long n)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	long i;

	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
}

int
main(int argc, char *argv[])
{
	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "write") == 0)
		stk_writer(atol(argv[2]));
	else if (strcmp(argv[1], "sleep") == 0)
		stk_sleeper(atol(argv[2]));
	else
		return 2;
	return 0;
}
