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

/* Code mapped after the tracee started (life_tracee.c dlopen()s it). */
#include <sys/syscall.h>
#include <unistd.h>

void	life_lib_calls(void);

void
life_lib_calls(void)
{
	static char buf[1004];
	long r;
	int i;

	for (i = 0; i < 7; i++)
		__asm__ volatile ("syscall" : "=a" (r)
		    : "a" ((long)SYS_write), "D" (-1L), "S" (0L),
		      "d" (1003L)
		    : "rcx", "r11", "memory");
	for (i = 0; i < 2; i++)
		r = write(-1, buf, sizeof(buf));
	(void)r;
}
