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
 * The socket front end (dtd --device-socket): dt(4) over a unix stream
 * socket, one connection an open, in the protocol of
 * <userdt/udt_devsock.h>.  It needs no kernel help (no FUSE, no CUSE)
 * and no access to its callers' memory, so it serves a client in a
 * container without /dev/fuse or in another pid namespace.  It runs
 * beside the FUSE-file or CUSE front end, or alone (--frontend socket).
 *
 * One thread serves every connection; a read the core cannot answer at
 * once is parked in the core and answered later from whatever thread
 * completes it, so no reader holds a thread, in dtd or in the client's
 * place.
 */
#ifndef DT_FESOCK_H
#define DT_FESOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The core has one read completion and one poll completion for all
 * front ends: the tokens of this one have their low bit set (they point
 * to aligned structures), a libfuse request's never.
 */
#define DT_FESOCK_TAG	((uintptr_t)1)

static inline bool
dt_fesock_token(const void *token)
{
	return ((uintptr_t)token & DT_FESOCK_TAG) != 0;
}

/* dcf_read_done and dcf_poll_done for tagged tokens (dt_dev.h's rules). */
void	dt_fesock_read_done(void *, const void *, size_t, int);
void	dt_fesock_poll_done(void *, bool);

/*
 * Bind the socket at path (mode, owner and group those of the device
 * node, dtd.h) and start serving it on a thread of its own.  Main
 * thread, after dt_dev_init(); 0 or an errno, said on stderr.
 */
int	dt_fesock_start(const char *path);

/*
 * dt_fesock_bind.c: make the socket file at path and listen on it
 * (non-blocking, SO_PASSCRED), the descriptor in *fdp; 0 or an errno,
 * said on stderr.  dt_fesock_unbind(): remove the file if it is still
 * ours.  Main thread.
 */
int	dt_fesock_bind(const char *path, int *fdp);
void	dt_fesock_unbind(void);

/*
 * Stop serving: close every open made through the socket (parked reads
 * end with EIO), remove the socket file.  Main thread, before
 * dt_dev_fini(); idempotent.
 */
void	dt_fesock_stop(void);

/*
 * --frontend socket: the socket alone.  Say ready, wait for SIGTERM,
 * SIGINT or SIGHUP (blocked in every thread by dtd), then tear down.
 * Main thread; 0 or an errno.
 */
int	dt_fesock_main(void);

#endif /* DT_FESOCK_H */
