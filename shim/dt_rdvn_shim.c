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
 * libdtshim.so: lets an unmodified dt(4) client (OpenBSD's btrace built on
 * Linux) receive the descriptor DTIOCRDVNODE promises.  dtd cannot put a
 * descriptor into its caller, so it answers with dtrv_fd = -1 and the
 * mapping's start, offset and size; preloaded into the client, this shim
 * completes the answer in the client itself by opening the very file
 * mapped there (/proc/PID/map_files, which survives a rename or unlink,
 * else the path /proc/PID/maps names).  DTIOCRDVNODE is root-only, and
 * root may open map_files.  A traced process that has exited has no
 * /proc/PID left, but dtd kept its mappings and answers for it: then the
 * shim asks dtd for the file's name too, with the maps query on its
 * ingest socket (USERDT_SOCKET, udt_wire.h), and opens that.
 *
 *	LD_PRELOAD=/usr/lib/userdt/libdtshim.so btrace script.bt
 *
 * Every other ioctl goes straight through at the cost of one compare.
 */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

typedef int (*ioctl_fn)(int, unsigned long, ...);

/* The file mapped at start in pid, opened read-only, or -1. */
static int
dtshim_open_mapping(pid_t pid, uintptr_t start)
{
	char path[64], line[4096], file[4096];
	uintmax_t s, e;
	FILE *fp;
	int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		file[0] = '\0';
		if (sscanf(line, "%jx-%jx %*s %*s %*s %*s %4095[^\n]",
		    &s, &e, file) < 2 || s != start)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%jx-%jx",
		    (int)pid, s, e);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd == -1 && file[0] == '/')
			fd = open(file, O_RDONLY | O_CLOEXEC);
		break;
	}
	fclose(fp);
	return fd;
}

/*
 * The file dtd says was mapped at start in pid, which has exited; opened
 * read-only, or -1.
 */
static int
dtshim_open_kept(pid_t pid, uintptr_t start)
{
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;
	struct timeval tv = { 1, 0 };
	struct sockaddr_un sun;
	struct udt_maps_hdr h;
	struct udt_maps_ent e;
	char file[4096];
	const char *sock;
	uint32_t i;
	int s, fd = -1;

	if ((sock = getenv(UDT_SOCKET_ENV)) == NULL || *sock == '\0')
		sock = UDT_SOCKET_DEFAULT;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&q, 0, sizeof(q));
	q.h.uh_magic = UDT_MAGIC;
	q.h.uh_version = UDT_VERSION;
	q.h.uh_flags = UDT_HELLO_MAPS;
	q.r.umr_pid = pid;
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    send(s, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ||
	    recv(s, &h, sizeof(h), MSG_WAITALL) != (ssize_t)sizeof(h) ||
	    h.umh_magic != UDT_MAGIC || h.umh_error != 0)
		goto out;
	for (i = 0; i < h.umh_count; i++) {
		if (recv(s, &e, sizeof(e), MSG_WAITALL) != (ssize_t)sizeof(e) ||
		    e.ume_pathlen >= sizeof(file) || recv(s, file,
		    e.ume_pathlen, MSG_WAITALL) != (ssize_t)e.ume_pathlen)
			break;
		file[e.ume_pathlen] = '\0';
		if (e.ume_start == start && file[0] == '/') {
			fd = open(file, O_RDONLY | O_CLOEXEC);
			break;
		}
	}
out:
	close(s);
	return fd;
}

int
ioctl(int fd, unsigned long request, ...)
{
	static ioctl_fn real_ioctl;
	struct dtioc_rdvn *dtrv;
	va_list ap;
	void *arg;
	int rv, saved;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (real_ioctl == NULL) {
		real_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
		if (real_ioctl == NULL) {
			errno = ENOSYS;
			return -1;
		}
	}
	rv = real_ioctl(fd, request, arg);
	if (rv != 0 || (request & 0xffffffffUL) != DTIOCRDVNODE)
		return rv;

	dtrv = arg;
	if (dtrv->dtrv_fd >= 0)
		return rv;		/* a transport that could do it did */
	saved = errno;
	dtrv->dtrv_fd = dtshim_open_mapping(dtrv->dtrv_pid,
	    (uintptr_t)dtrv->dtrv_start);
	if (dtrv->dtrv_fd == -1)
		dtrv->dtrv_fd = dtshim_open_kept(dtrv->dtrv_pid,
		    (uintptr_t)dtrv->dtrv_start);
	if (dtrv->dtrv_fd == -1)
		return -1;		/* errno from open: ENOENT, EMFILE, ... */
	errno = saved;
	return 0;
}
