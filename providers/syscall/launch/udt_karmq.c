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
 * The launcher's helper's question to dtd at the exec stop of a
 * statically linked image (UDT_HELLO_KARM, udt_wire.h): open the
 * kernel's copy of this process's calls before it runs.  The helper
 * holds the process meanwhile, so the question is bounded as a maps
 * query is (about two seconds for a dtd that does not answer): the
 * program waits at most that, once, for a dtd that is stuck.
 */
#include <sys/socket.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "udt_launch.h"
#include "udt_mapsq.h"

int
udt_karmq(pid_t pid)
{
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;
	struct udt_maps_hdr h;
	ssize_t n;
	size_t got;
	int fd, rv = -1, error, tries;

	memset(&q, 0, sizeof(q));
	q.h.uh_magic = UDT_MAGIC;
	q.h.uh_version = UDT_VERSION;
	q.h.uh_flags = UDT_HELLO_KARM;
	q.r.umr_pid = pid;
	if ((fd = udt_mapsq_dial(NULL)) == -1)
		return -1;
	if (send(fd, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q))
		goto out;
	/* the dial's receive timeout bounds each wait; a few at most */
	for (got = 0, tries = 0; got < sizeof(h); ) {
		n = recv(fd, (char *)&h + got, sizeof(h) - got, MSG_WAITALL);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			errno = EPROTO;		/* dtd closed mid-answer */
		if (n == 0 || errno != EINTR || ++tries > 2)
			goto out;
	}
	if (h.umh_magic != UDT_MAGIC || h.umh_count != 0) {
		errno = EPROTO;
		goto out;
	}
	if (h.umh_error != 0) {
		errno = (int)h.umh_error;
		goto out;
	}
	rv = 0;
out:
	error = errno;
	close(fd);
	errno = error;
	return rv;
}
