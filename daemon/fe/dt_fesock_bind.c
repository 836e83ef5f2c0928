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
 * The device socket's file, made as the device node is: root's (dtd's
 * user's without root), the node's group and mode from its first instant,
 * in a directory nobody else can change, never through a symbolic link,
 * and replacing only a dead dtd's socket (dt_sockfile.c makes it as it
 * makes the ingest socket).
 *
 * Main thread only, at start and stop ([I]).
 */
#include <sys/socket.h>

#include "dt_fesock.h"
#include "dt_sockfile.h"
#include "dtd.h"

static struct dt_sockfile fesock_file = DT_SOCKFILE_INIT("device socket");

int
dt_fesock_bind(const char *path, int *fdp)
{
	/*
	 * The node's group and mode; accepted sockets inherit SO_PASSCRED,
	 * so every request carries its sender.
	 */
	return dt_sockfile_listen(&fesock_file, path, 0, dtd_dev_mode(),
	    dtd_dev_gid(), SOCK_NONBLOCK, true, fdp);
}

void
dt_fesock_unbind(void)
{
	dt_sockfile_close(&fesock_file);
}
