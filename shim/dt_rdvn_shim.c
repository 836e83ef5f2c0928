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
 * else the path /proc/PID/maps names, following no link, and only ever
 * a regular file: udt_mapsq_open()).  DTIOCRDVNODE is root-only, and
 * root may open map_files.  A traced process that has exited has no
 * /proc/PID left, but dtd kept its mappings and answers for it: then the
 * shim asks dtd for the file's name too, with the maps query on its
 * ingest socket (USERDT_SOCKET, udt_wire.h), and opens that.
 *
 *	LD_PRELOAD=/usr/lib/userdt/libdtshim.so btrace script.bt
 *
 * Every other ioctl goes straight through at the cost of one compare.
 */
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

#include "udt_mapsq.h"

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
		/* Root's open of a name the process chose: see udt_mapsq.h. */
		fd = udt_mapsq_open(pid, (uint64_t)s, (uint64_t)e,
		    file[0] == '/' ? file : NULL);
		break;
	}
	fclose(fp);
	return fd;
}

struct dtshim_kept {
	uintptr_t	dk_start;
	int		dk_fd;
};

static int
dtshim_kept_one(void *arg, const struct udt_maps_ent *e, const char *path)
{
	struct dtshim_kept *dk = arg;

	if (e->ume_start != dk->dk_start)
		return 0;
	dk->dk_fd = udt_mapsq_open(0, 0, 0, path);
	return 1;
}

/*
 * The file dtd says was mapped at start in pid, which has exited; opened
 * read-only, or -1.
 */
static int
dtshim_open_kept(pid_t pid, uintptr_t start)
{
	struct dtshim_kept dk = { start, -1 };

	(void)udt_mapsq(NULL, pid, dtshim_kept_one, &dk);
	return dk.dk_fd;
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
