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

#include <sys/socket.h>
#include <sys/un.h>
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

void
st_teardown(struct dtt_dtd *dd, int fd)
{
	if (fd >= 0)
		close(fd);
	if (dd->dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(dd, SIGTERM)),
		    "dtd stopped, exit status 0");
	if (dtt_dtd_fini(dd, true) == -1)
		warn("%s", dd->dd_dir);
}

int
st_ingest_stats(const char *sock, struct udt_stats *st)
{
	struct udt_hello h = { UDT_MAGIC, UDT_VERSION, 0, UDT_HELLO_STATS };
	struct sockaddr_un sun;
	int fd, rc = -1;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
	    send(fd, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) &&
	    recv(fd, st, sizeof(*st), MSG_WAITALL) == (ssize_t)sizeof(*st) &&
	    st->us_magic == UDT_MAGIC)
		rc = 0;
	close(fd);
	return rc;
}
