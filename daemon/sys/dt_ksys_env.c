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
 * Whether an image will attach to this dtd, read from its environment:
 * the kernel feed's pending execs (dt_sys_kern.c) and the counting
 * program's young processes (dt_tp_ksysbpf.c) ask the same.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_ksys.h"

#define DT_KSYS_LIBNAME		"libuserdt-preload"	/* in LD_PRELOAD */

bool
dt_ksys_will_attach(pid_t pid, char *buf, size_t size)
{
	const char *sock = dt_ingest_sockpath(), *e, *end, *named = NULL;
	char path[64];
	bool lib = false;
	ssize_t n;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	while (len < size &&
	    (n = read(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	close(fd);
	/* An entry cut at the end is left out: the variables come first. */
	for (e = buf, end = buf + len; e < end;
	    e += strnlen(e, (size_t)(end - e)) + 1) {
		if (memchr(e, '\0', (size_t)(end - e)) == NULL)
			break;
		if (strncmp(e, "LD_PRELOAD=", 11) == 0)
			lib = strstr(e + 11, DT_KSYS_LIBNAME) != NULL;
		else if (strncmp(e, UDT_SOCKET_ENV "=",
		    sizeof(UDT_SOCKET_ENV)) == 0)
			named = e + sizeof(UDT_SOCKET_ENV);
	}
	if (!lib)
		return false;
	/* The library's own choice (udt_attach.c): unset or empty, default. */
	if (named == NULL || *named == '\0')
		named = UDT_SOCKET_DEFAULT;
	return strcmp(named, sock) == 0;
}
