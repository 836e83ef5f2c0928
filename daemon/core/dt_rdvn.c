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
 * DTIOCRDVNODE without a kernel: the map entry comes from the process's
 * mappings as dt_pidmaps.c knows them, /proc/PID/maps while the process
 * lives, else what dtd kept of a traced process that has exited (design
 * decision 9); the file size from the mapping itself (/proc/PID/map_files,
 * which also works for a file deleted since it was mapped) or its path.
 */
#include <errno.h>
#include <stdint.h>

#include "dt_pidmaps.h"
#include "dt_softc.h"

/* Any front-end thread, no lock held: dt_pm_current() reads /proc. */
int
dt_rdvn_lookup(struct dtioc_rdvn *dtrv)
{
	const struct dt_pm_map *m;
	struct dt_pm_snap *snap;
	int error = 0;

	if (dtrv->dtrv_pid <= 0)
		return ESRCH;
	if ((snap = dt_pm_current(dtrv->dtrv_pid)) == NULL)
		return errno == ENOMEM ? ENOMEM : ESRCH;
	m = dt_pm_find(snap, (uint64_t)(uintptr_t)dtrv->dtrv_va);
	/* Not mapped, not executable, or not backed by a file: dt(4)'s ENOENT. */
	if (m == NULL || m->pm_path == NULL || m->pm_size == 0)
		error = ENOENT;
	else {
		dtrv->dtrv_start = (caddr_t)(uintptr_t)m->pm_start;
		dtrv->dtrv_offset = (caddr_t)(uintptr_t)m->pm_off;
		dtrv->dtrv_len = (size_t)m->pm_size;
		/*
		 * A daemon cannot install a descriptor in its caller; -1 says
		 * so to a client that did not come through the client shim.
		 */
		dtrv->dtrv_fd = -1;
	}
	dt_pm_put(snap);
	return error;
}
