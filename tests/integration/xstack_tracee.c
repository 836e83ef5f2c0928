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
 * xstack_tracee N: a program linked with an executable stack, which
 * copies a getppid() made by a bare `syscall` instruction onto its stack
 * and calls it N times, then a thread of its does the same on its own
 * (executable) stack: code no object of the link map holds, mapped
 * before any library starts, whose calls only dispatch can see.  The
 * test (syscall_xstack.py) counts them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mov $110, %eax (getppid); syscall; ret */
static const unsigned char code[] = {
	0xb8, 0x6e, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3
};

/* N calls from code copied onto the calling thread's own stack. */
static void *
calls(void *arg)
{
	unsigned char buf[64] __attribute__((aligned(16)));
	long (*fn)(void);
	long i, n = *(long *)arg;

	memcpy(buf, code, sizeof(code));
	/* The compiler sees no reader of buf but the call: keep the copy. */
	__asm__ volatile("" : : "r"(buf) : "memory");
	fn = (long (*)(void))(void *)buf;
	for (i = 0; i < n; i++)
		if (fn() <= 0)
			return NULL;
	return arg;
}

int
main(int argc, char *argv[])
{
	pthread_t th;
	void *ok;
	long n;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) <= 0)
		return 2;
	/* The first thread's, then a thread's started after the library. */
	if (calls(&n) == NULL || pthread_create(&th, NULL, calls, &n) != 0 ||
	    pthread_join(th, &ok) != 0 || ok == NULL)
		return 1;
	printf("%ld\n", 2 * n);
	return 0;
}
