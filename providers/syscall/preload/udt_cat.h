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

#ifndef UDT_CAT_H
#define UDT_CAT_H

#include <stddef.h>

/*
 * Names and messages built in the tracee without libc's printf, whose
 * pages would be faulted in at every start for one path.  No state, no
 * system call, errno untouched: any thread, a signal handler, the
 * constructor.
 *
 * udt_cat(): s after d's first at bytes, NUL-terminated, within max
 * bytes: the new length, or (size_t)-1 if it does not fit (and from then
 * on, so a chain of them is checked once at its end).
 * udt_catu(): the same of v in decimal.
 */
size_t	 udt_cat(char *, size_t, size_t, const char *);
size_t	 udt_catu(char *, size_t, size_t, unsigned long);

#endif /* UDT_CAT_H */
