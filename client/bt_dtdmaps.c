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
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "btrace.h"

#define DTDMAPS_MAX	4096	/* entries believed in one answer */

static int
dtd_connect(void)
{
	struct timeval tv = { 1, 0 };
	struct sockaddr_un sun;
	const char *path;
	int fd;

	if ((path = getenv(UDT_SOCKET_ENV)) == NULL || *path == '\0')
		path = UDT_SOCKET_DEFAULT;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	/* dtd answers from memory or /proc at once; never hang on it */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
recv_all(int fd, void *buf, size_t len)
{
	return recv(fd, buf, len, MSG_WAITALL) == (ssize_t)len ? 0 : -1;
}

ssize_t
dtd_maps(pid_t pid, struct bt_umap **mapsp)
{
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;
	struct udt_maps_hdr h;
	struct udt_maps_ent e;
	struct bt_umap *maps = NULL;
	size_t i, n = 0;
	int fd;

	*mapsp = NULL;
	if ((fd = dtd_connect()) == -1)
		return -1;
	memset(&q, 0, sizeof(q));
	q.h.uh_magic = UDT_MAGIC;
	q.h.uh_version = UDT_VERSION;
	q.h.uh_flags = UDT_HELLO_MAPS;
	q.r.umr_pid = pid;
	if (send(fd, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ||
	    recv_all(fd, &h, sizeof(h)) == -1 || h.umh_magic != UDT_MAGIC ||
	    h.umh_error != 0 || h.umh_count > DTDMAPS_MAX)
		goto fail;
	maps = xcalloc(h.umh_count + 1, sizeof(*maps));
	for (i = 0; i < h.umh_count; i++) {
		if (recv_all(fd, &e, sizeof(e)) == -1 ||
		    e.ume_pathlen == 0 || e.ume_pathlen >= 4096 ||
		    e.ume_end <= e.ume_start)
			goto fail;
		maps[n].um_path = xcalloc(1, e.ume_pathlen + 1);
		maps[n].um_start = e.ume_start;
		maps[n].um_end = e.ume_end;
		maps[n].um_off = e.ume_off;
		n++;
		if (recv_all(fd, maps[n - 1].um_path, e.ume_pathlen) == -1 ||
		    memchr(maps[n - 1].um_path, '\0', e.ume_pathlen) != NULL)
			goto fail;
	}
	close(fd);
	*mapsp = maps;
	return (ssize_t)n;
fail:
	close(fd);
	for (i = 0; i < n; i++)
		free(maps[i].um_path);
	free(maps);
	return -1;
}
