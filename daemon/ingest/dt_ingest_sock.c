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
 * The ingest socket's file.  Tracees of every user connect to it, so it
 * is mode 0666 in a directory of root's; dtd makes that directory when
 * it is missing (root, 0755), refuses one that is someone else's or
 * that others can write unless sticky, and never follows a symbolic
 * link at either name (dt_sockfile.c makes it as it makes the device
 * socket).
 *
 * A dtd without root serves its own user alone (dtd_unpriv.c): the
 * directory it makes is theirs, 0700, the socket 0600, and an existing
 * one must be theirs; the accept loop closes other users' connections.
 *
 * Main thread only, at start and stop ([I]).
 */
#include <unistd.h>

#include "dt_ingest.h"
#include "dt_sockfile.h"

static struct dt_sockfile dti_sockfile = DT_SOCKFILE_INIT("ingest socket");

int
dt_ingest_listen(const char *path, int *fdp)
{
	bool root = geteuid() == 0;

	/* Tracees need no privilege: anyone may connect. */
	return dt_sockfile_listen(&dti_sockfile, path, root ? 0755 : 0700,
	    root ? 0666 : 0600, (gid_t)-1, 0, false, fdp);
}

void
dt_ingest_unlisten(void)
{
	dt_sockfile_close(&dti_sockfile);
}
