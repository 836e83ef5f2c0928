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
 * Beside it, the tracees' socket (UDT_TRACEE_FMT), made alike.
 *
 * Main thread only, at start and stop ([I]).
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_sockfile.h"

static struct dt_sockfile dti_sockfile = DT_SOCKFILE_INIT("ingest socket");
static struct dt_sockfile dti_tsockfile = DT_SOCKFILE_INIT("tracee socket");

int
dt_ingest_listen(const char *path, int *fdp, int *tfdp)
{
	char tpath[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool root = geteuid() == 0;
	int error;

	/* Tracees need no privilege: anyone may connect. */
	if ((error = dt_sockfile_listen(&dti_sockfile, path, root ? 0755 :
	    0700, root ? 0666 : 0600, (gid_t)-1, 0, false, fdp)) != 0)
		return error;
	/*
	 * Where the name with the suffix does not fit, tracees say hello
	 * on the ingest socket (the library makes the same test).  A name
	 * taken by someone else, or by a dtd that answers, is refused as
	 * the ingest socket's would be: a tracee there would be sent away.
	 */
	*tfdp = -1;
	if ((size_t)snprintf(tpath, sizeof(tpath), UDT_TRACEE_FMT, path,
	    UDT_VERSION, (unsigned int)DT_SYS_NPROBES) >= sizeof(tpath))
		return 0;
	error = dt_sockfile_listen(&dti_tsockfile, tpath, root ? 0755 : 0700,
	    root ? 0666 : 0600, (gid_t)-1, 0, false, tfdp);
	/* Its name, bound through /proc/self/fd, may be too long alone. */
	if (error == ENAMETOOLONG) {
		*tfdp = -1;
		return 0;
	}
	if (error != 0) {
		close(*fdp);
		*fdp = -1;
		dt_sockfile_close(&dti_sockfile);
	}
	return error;
}

void
dt_ingest_unlisten(void)
{
	dt_sockfile_close(&dti_tsockfile);
	dt_sockfile_close(&dti_sockfile);
}
