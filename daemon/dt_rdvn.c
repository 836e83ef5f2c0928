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
 * DTIOCRDVNODE without a kernel: the map entry comes from
 * /proc/PID/maps, the file size from the mapping itself
 * (/proc/PID/map_files, which also works for a file deleted since it was
 * mapped), falling back to the path.
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dt_softc.h"

int
dt_rdvn_lookup(struct dtioc_rdvn *dtrv)
{
	char path[64], line[4096], perms[8], file[4096];
	uintmax_t start, end, off, va;
	struct stat st;
	FILE *fp;
	int found = 0, n;

	if (dtrv->dtrv_pid <= 0)
		return ESRCH;
	va = (uintmax_t)(uintptr_t)dtrv->dtrv_va;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)dtrv->dtrv_pid);
	fp = fopen(path, "re");
	if (fp == NULL)
		return ESRCH;
	while (fgets(line, sizeof(line), fp) != NULL) {
		file[0] = '\0';
		n = sscanf(line, "%jx-%jx %7s %jx %*s %*s %4095[^\n]",
		    &start, &end, perms, &off, file);
		if (n < 4 || va < start || va >= end)
			continue;
		found = 1;
		break;
	}
	fclose(fp);
	/* Not mapped, not executable, or not backed by a file: dt(4)'s ENOENT. */
	if (!found || strchr(perms, 'x') == NULL || file[0] != '/')
		return ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%jx-%jx",
	    (int)dtrv->dtrv_pid, start, end);
	if (stat(path, &st) == -1) {
		/* " (deleted)" suffixes cannot be stat'ed: give up cleanly. */
		if (stat(file, &st) == -1)
			return ENOENT;
	}
	dtrv->dtrv_start = (caddr_t)(uintptr_t)start;
	dtrv->dtrv_offset = (caddr_t)(uintptr_t)off;
	dtrv->dtrv_len = (size_t)st.st_size;
	/*
	 * A daemon cannot install a descriptor in its caller; -1 says so
	 * to a client that did not come through the client shim.
	 */
	dtrv->dtrv_fd = -1;
	return 0;
}
