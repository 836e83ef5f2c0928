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
 * The FUSE-file device opened as a stream.
 *
 * The kernel gives every open of a regular file a position lock, taken
 * with an uninterruptible mutex by read(2) whenever the open file
 * description is shared (threads, or parent and child after fork): two
 * readers of one descriptor queue on it, and the second sleeps in D
 * state, deaf to the signals that must end a dt(4) read with EINTR.  A
 * reply with FOPEN_STREAM (Linux 5.2) drops that lock, as a character
 * device has none.  libfuse 3.14 has no field for the flag, so dtd
 * answers the device's OPEN itself, on the session's descriptor, with
 * exactly what libfuse would have sent plus FOPEN_STREAM.  Loop thread.
 */
#include <sys/uio.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "dt_fe.h"

bool
dt_fe_stream_open(struct fuse_session *se, const struct fuse_buf *fbuf,
    size_t len)
{
	const struct fuse_in_header *ih = fbuf->mem;
	struct fuse_out_header oh;
	struct fuse_open_out oo;
	struct dt_softc *sc;
	struct dt_cred dc;
	struct iovec iov[2];
	ssize_t n;
	int error;

	if ((fbuf->flags & FUSE_BUF_IS_FD) || fbuf->mem == NULL ||
	    len < sizeof(*ih) || ih->opcode != FUSE_OPEN ||
	    ih->nodeid != FUSE_ROOT_ID)
		return false;
	/* The caller as the kernel stamped the request. */
	dc.dc_uid = ih->uid;
	dc.dc_gid = ih->gid;
	dc.dc_pid = (pid_t)ih->pid;
	error = dt_dev_open(&dc, &sc);

	memset(&oh, 0, sizeof(oh));
	memset(&oo, 0, sizeof(oo));
	oh.unique = ih->unique;
	oh.error = -error;
	oh.len = sizeof(oh);
	iov[0].iov_base = &oh;
	iov[0].iov_len = sizeof(oh);
	iov[1].iov_base = &oo;
	iov[1].iov_len = sizeof(oo);
	if (error == 0) {
		oo.fh = (uint64_t)(uintptr_t)sc;
		/* Records are not file data: no page cache, no offsets. */
		oo.open_flags = FOPEN_DIRECT_IO | FOPEN_NONSEEKABLE |
		    FOPEN_STREAM;
		oh.len += sizeof(oo);
	}
	do
		n = writev(fuse_session_fd(se), iov, error == 0 ? 2 : 1);
	while (n == -1 && errno == EINTR);
	/* Its caller was killed meanwhile: no release will come. */
	if (n == -1 && error == 0)
		dt_dev_close(sc);
	return true;
}
