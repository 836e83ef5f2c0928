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
 * fesock_test: the device socket (dtd --device-socket) and
 * libuserdt-dev.so through real sockets, real programs and the
 * library preloaded.  fesock_test.c has main, the btrace and ordinary
 * user checks and what they share; fesock_raw.c the read loop through
 * job control and the malformed frames.  Single-threaded.
 */
#ifndef FESOCK_TEST_H
#define FESOCK_TEST_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <userdt/udt_devsock.h>

#include "dtt.h"

struct fs_ctx {
	const char	*fc_self;	/* this program, for its children */
	const char	*fc_dtd;
	const char	*fc_lib;	/* libuserdt-dev.so */
	const char	*fc_btrace;
	struct dtt_dtd	 fc_dd;
	char		 fc_devsock[160];	/* DIR/dt.sock */
	char		 fc_devpath[160];	/* DIR/nodev: never a file */
};

/*
 * An environment with the library preloaded (lib NULL: none) and each of
 * vars (NAME=VALUE, NULL-terminated) added; static, valid until the
 * next call.
 */
char	**fs_env(const char *lib, const char *const vars[]);
/*
 * The same with LD_PRELOAD=lib alone, the sanitizer told not to mind
 * coming second: for btrace -c, whose commands inherit LD_PRELOAD and
 * must not load a sanitizer's runtime behind the syscall library.
 */
char	**fs_env_bare(const char *lib, const char *const vars[]);

/*
 * Run argv with env, its stdout into out (NUL-terminated, outsz bytes
 * at most), stdin and stderr ours; the wait status, or -1 (did not end
 * within DTT_EXIT_MS, killed).
 */
int	fs_run(char *const argv[], char *const env[], char *out, size_t outsz);

/* The raw protocol: a connection, a request, its reply.  -1/errno. */
int	fs_connect(const char *sock);
int	fs_send(int fd, uint16_t op, uint16_t flags, uint32_t seq,
	    uint64_t arg, const void *payload, size_t len);
/*
 * The next frame within DTT_EXIT_MS: 0 and its header, payload (up to
 * max bytes kept, the rest dropped) in buf; EPIPE at end of stream;
 * ETIMEDOUT.
 */
int	fs_recv(int fd, struct udt_ds_hdr *dh, void *buf, size_t max);

void	fs_stop(struct fs_ctx *);		/* fesock_raw.c */
void	fs_garbage(struct fs_ctx *);
int	fs_loop_child(int argc, char *argv[]);

#endif /* FESOCK_TEST_H */
