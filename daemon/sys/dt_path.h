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
 * Where dtd may create names that others use (the device file, the
 * ingest socket): a directory nobody but root can change, or a sticky
 * one of root's (/tmp), where others may add names but not rename or
 * remove root's.  Anywhere else a user could swap the name dtd checked
 * for one of their choosing between the check and the use.  A dtd
 * without root (dtd_unpriv.c) may also use its own user's directories:
 * only that user, whom it serves anyway, could swap a name there.
 */
#ifndef DT_PATH_H
#define DT_PATH_H

#include <sys/stat.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

/*
 * Split path into its directory (into dir, dirsize bytes: "." for a bare
 * name, "/" at the root) and its last component (into base, basesize
 * bytes), which must name a file: not empty, ".", ".." or too long.
 * Returns 0, EINVAL (not a file name) or ENAMETOOLONG.  Any thread.
 */
int	dt_path_split(const char *path, char *dir, size_t dirsize,
	    char *base, size_t basesize);

static inline bool
dt_dir_safe(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) ||
	    (st->st_uid != 0 && st->st_uid != geteuid()))
		return false;
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return true;
	return (st->st_mode & S_ISVTX) != 0;
}

#endif /* DT_PATH_H */
