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
 * The launcher's helper's question to dtd at the exec stop of an image
 * no hook sees, statically linked or exec'd in secure mode
 * (UDT_HELLO_KARM, udt_wire.h): open the kernel's copy of this
 * process's calls before it runs.  The helper
 * holds the process meanwhile, so the question is bounded as a maps
 * query is (udt_mapsq_ask(): two seconds for a dtd that does not
 * answer): the program waits at most that, once, for a dtd that is
 * stuck.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <userdt/udt_auxv.h>
#include <userdt/udt_wire.h>

#include "udt_launch.h"
#include "udt_mapsq.h"

int
udt_karmq(pid_t pid)
{
	struct udt_maps_hdr h;
	uint64_t deadline = udt_mapsq_deadline();
	int fd, rv = -1, error;

	if ((fd = udt_mapsq_dial(NULL)) == -1)
		return -1;
	/* An arm answers with no entry. */
	if (udt_mapsq_ask(fd, UDT_HELLO_KARM, pid, &h, deadline) == 0) {
		if (h.umh_count == 0)
			rv = 0;
		else
			errno = EPROTO;
	}
	error = errno;
	close(fd);
	errno = error;
	return rv;
}

/*
 * The kernel's own word, from the vector it saved at the exec: the
 * process cannot write it, and the loader decides by it alone.  Read
 * by dtd's parser (udt_auxv.h), so that the two never judge one image
 * differently.
 */
int
udt_karmq_secure(pid_t pid)
{
	uint64_t v[UDT_AUXV_WORDS];
	char path[64];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((size_t)got < sizeof(v) && (n = read(fd, (char *)v + got,
	    sizeof(v) - (size_t)got)) > 0)
		got += n;
	close(fd);
	return udt_auxv_secure(v, (size_t)got);
}
