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
 * A fake /proc in a temporary directory, for the tests of dtd's cache of
 * mappings (pidmaps_test.c, untrace_test.c): root is its path, set by
 * the test before the first call.  Single-threaded test code.
 */
#ifndef PM_FAKE_H
#define PM_FAKE_H

#include <sys/types.h>

extern char	root[64];

/* Write fmt's text to file; exit(2) if it cannot be opened. */
void	put(const char *file, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* /proc/PID/stat: starttime (field 22) stime, state st. */
void	fake_stat(pid_t pid, char st, unsigned long long stime);
/* /proc/PID/maps: text. */
void	fake_maps(pid_t pid, const char *text);
/* pid's directory gone, as when it is reaped. */
void	fake_gone(pid_t pid);
/* The fake /proc made under /tmp (name its prefix); exit(2) if not. */
void	fake_root(const char *name);
/* It and all in it removed: at the test's end. */
void	fake_root_remove(void);
/* A file of len bytes at path (exit(2) if it cannot be made). */
void	fake_file(const char *path, off_t len);

#endif /* PM_FAKE_H */
