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
 * What the CUSE and FUSE-file front ends share: the libfuse side of
 * open, read and release, the read completion the core calls, and the
 * request loop.  Both front ends run one loop thread; replies also come
 * from the core's wakeup thread (libfuse's reply functions are
 * thread-safe), so no reader ever holds a thread.
 */
#ifndef DT_FE_H
#define DT_FE_H

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION	35
#endif

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

#include "dt_dev.h"

/* The caller of req as the core wants it.  Any thread. */
void	dt_fe_cred(fuse_req_t, struct dt_cred *);

/*
 * dcf_read_done: token is the fuse_req_t of a read; replies to it.  Runs
 * on whatever thread the core completes the read on, possibly under the
 * core's softc lock: it only talks to libfuse.
 */
void	dt_fe_read_done(void *, const void *, size_t, int);

/*
 * dcf_read_iov: the same reply from the rings' slots (fuse_reply_iov(),
 * which has the kernel copy them before it returns); false for a token
 * of the socket front end, which sends from one buffer.  Same threads
 * and rules as dt_fe_read_done().
 */
bool	dt_fe_read_iov(void *, const struct iovec *, unsigned int, size_t);

/*
 * dcf_poll_done: ph is a struct fuse_pollhandle; wakes its poller if
 * ready, then frees it.  Same threads and rules as dt_fe_read_done().
 */
void	dt_fe_poll_done(void *, bool);

/*
 * poll of the device: POLLIN when a record is ready; otherwise the
 * kernel's handle ph is kept and notified when one arrives.  Loop thread
 * only.
 */
void	dt_fe_poll(fuse_req_t, struct fuse_file_info *,
	    struct fuse_pollhandle *);

/*
 * open, read and release of the device.  Loop thread only.  chunkmax is
 * the largest read request the kernel sends this front end: a request of
 * about that size may be the first chunk of a bigger read(2), so it is
 * answered with whole records only and thus always short, which ends the
 * read(2) there instead of blocking in a second chunk.
 */
void	dt_fe_open(fuse_req_t, struct fuse_file_info *);
void	dt_fe_read(fuse_req_t, size_t, size_t, struct fuse_file_info *);
void	dt_fe_release(fuse_req_t, struct fuse_file_info *);

/* The softc an open stored in fi->fh. */
static inline struct dt_softc *
dt_fe_softc(const struct fuse_file_info *fi)
{
	return (struct dt_softc *)(uintptr_t)fi->fh;
}

/*
 * Serve requests of se on the calling thread until SIGTERM, SIGINT or
 * SIGHUP (which dtd blocks in every thread, so they queue on a
 * signalfd), until the kernel ends the session, or fuse_session_exit().
 * stream: the device is a regular file (FUSE-file), whose opens are
 * answered by dt_fe_stream_open().  Returns 0 or an errno.
 */
int	dt_fe_loop(struct fuse_session *, bool stream);

/*
 * If the len bytes received in fbuf are an OPEN of the device, open it
 * and reply with FOPEN_STREAM (dt_fe_stream.c); true when it did.
 */
bool	dt_fe_stream_open(struct fuse_session *, const struct fuse_buf *,
	    size_t len);

/*
 * Implemented by dtd.c.  dtd_ready(): the device is served; tell whoever
 * waits (--ready-fd, the parent of a daemonising dtd).  dtd_teardown():
 * stop the services and the core, which completes parked reads with EIO;
 * a front end calls it after its loop ended and while its session can
 * still reply, then removes the device.  Both main thread only,
 * idempotent.
 */
void	dtd_ready(void);
void	dtd_teardown(void);

#endif /* DT_FE_H */
