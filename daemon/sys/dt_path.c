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

/* Names dtd creates for others: see dt_path.h. */
#include <errno.h>
#include <string.h>

#include "dt_path.h"

int
dt_path_split(const char *path, char *dir, size_t dirsize, char *base,
    size_t basesize)
{
	const char *slash, *b;
	size_t n;

	if (strlen(path) >= dirsize)
		return ENAMETOOLONG;
	slash = strrchr(path, '/');
	b = slash == NULL ? path : slash + 1;
	if (b[0] == '\0' || strcmp(b, ".") == 0 || strcmp(b, "..") == 0 ||
	    strlen(b) >= basesize)
		return EINVAL;
	strcpy(base, b);
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else {
		n = (size_t)(slash - path);
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	return 0;
}
