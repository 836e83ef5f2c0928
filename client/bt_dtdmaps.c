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
 * btrace: the mappings of a traced process that has exited, from dtd.
 *
 * Why dtd, and why not DTIOCRDVNODE: once a process is gone its
 * /proc/PID/maps is too, and only dtd saw it while it lived (it reads the
 * maps of every traced process when it attaches, and again when its user
 * stacks leave them).  DTIOCRDVNODE would tell us start, offset and file
 * size of one address, but no file: the descriptor it promises cannot be
 * installed into us by a daemon, and the client shim that makes up for
 * that must itself ask dtd for the file's name once /proc/PID is gone.
 * Asking dtd directly with the maps query on its ingest socket
 * (udt_wire.h; the socket -c commands attach to, USERDT_SOCKET) names
 * the files of all mappings in one round trip, in the shape
 * /proc/PID/maps has, so the symbol code after it (ELF files cached by
 * path) is the same for live and dead processes.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace.h"
#include "udt_mapsq.h"

struct dtdmaps {
	struct bt_umap	*dm_maps;
	size_t		 dm_n, dm_cap;
};

static int
dtd_maps_one(void *arg, const struct udt_maps_ent *e, const char *path)
{
	struct dtdmaps *dm = arg;

	if (dm->dm_n == dm->dm_cap) {
		struct bt_umap *nm;

		dm->dm_cap = dm->dm_cap * 2 + 16;
		nm = xcalloc(dm->dm_cap, sizeof(*nm));
		if (dm->dm_n > 0)
			memcpy(nm, dm->dm_maps, dm->dm_n * sizeof(*nm));
		free(dm->dm_maps);
		dm->dm_maps = nm;
	}
	dm->dm_maps[dm->dm_n].um_start = e->ume_start;
	dm->dm_maps[dm->dm_n].um_end = e->ume_end;
	dm->dm_maps[dm->dm_n].um_off = e->ume_off;
	dm->dm_maps[dm->dm_n].um_path = xstrdup(path);
	dm->dm_n++;
	return 0;
}

ssize_t
dtd_maps(pid_t pid, struct bt_umap **mapsp)
{
	struct dtdmaps dm = { NULL, 0, 0 };
	size_t i;

	*mapsp = NULL;
	if (udt_mapsq(NULL, pid, dtd_maps_one, &dm) != 0) {
		for (i = 0; i < dm.dm_n; i++)
			free(dm.dm_maps[i].um_path);
		free(dm.dm_maps);
		return -1;
	}
	*mapsp = dm.dm_maps;		/* NULL when there were none */
	return (ssize_t)dm.dm_n;
}
