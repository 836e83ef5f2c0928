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
 * Bounded string building for the tracee (udt_cat.h).  No globals.
 */
#include "udt_cat.h"

size_t
udt_cat(char *d, size_t at, size_t max, const char *s)
{
	if (at == (size_t)-1)
		return at;
	while (*s != '\0') {
		if (at + 1 >= max)
			return (size_t)-1;
		d[at++] = *s++;
	}
	d[at] = '\0';
	return at;
}

size_t
udt_catu(char *d, size_t at, size_t max, unsigned long v)
{
	char tmp[21];
	size_t n = sizeof(tmp) - 1;

	tmp[n] = '\0';
	do
		tmp[--n] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	return udt_cat(d, at, max, &tmp[n]);
}
