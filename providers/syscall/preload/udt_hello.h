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
 * The handshake with dtd (udt_hello.c) and what the rest of the start
 * (udt_attach.c) shares with it.
 */
#ifndef UDT_HELLO_H
#define UDT_HELLO_H

#include <sys/types.h>
#include <sys/un.h>
#include <stddef.h>
#include <stdint.h>

#include "udt_preload.h"

/*
 * dtd's ingest socket, and the tracees' beside it (UDT_TRACEE_FMT:
 * udt_sunt_ok where its name fits), set once by the constructor.  [I]
 */
extern struct sockaddr_un	udt_sun UDT_HIDDEN;
extern int			udt_sun_ok UDT_HIDDEN;
extern struct sockaddr_un	udt_sunt UDT_HIDDEN;
extern int			udt_sunt_ok UDT_HIDDEN;
/*
 * The euid for which the launcher found udt_sun's directory fixed
 * (UDT_SOCKDIR_ENV), or (uid_t)-1: set once by the constructor.  [I]
 */
extern uid_t			udt_sun_fixed UDT_HIDDEN;
/*
 * udt_sun_fixed from the environment, for the socket path udt_sun holds
 * (udt_sun_ok).  The constructor, before its handshake; libc.
 */
void	udt_sun_fixed_init(void) UDT_HIDDEN;
/*
 * dtd did not answer a handshake, here or in an image before us: the
 * next waits briefly, after a look at its state.  [a]
 */
extern int			udt_dtd_slow UDT_HIDDEN;
/*
 * For the constructor's first handshake alone: the euid the exec gave
 * ((uid_t)-1: ask the kernel), and whether dtd's look at the status
 * stands for the library's own (udt_proc_status_told()).  The
 * constructor's thread; a fork child clears them.  [w]
 */
extern uid_t			udt_ctor_euid UDT_HIDDEN;
extern int			udt_ctor_status UDT_HIDDEN;
/*
 * Descriptors kept open to the constructor's end, closed in one call
 * (udt_close_defer()): on while it is alone.  [w]
 */
extern int			udt_defer_on UDT_HIDDEN;

/*
 * Connect, say hello, take the welcome: 0 with *tabp and *ringp mapped,
 * the welcome's flags and dtd's pid for this process, every descriptor
 * closed (or deferred); -1 with nothing left open or mapped, the reason
 * kept for udt_tell_untraced() when it is worth telling.  Whoever
 * attaches (udt_attach_locked(): one thread at a time); raw calls only.
 */
int	udt_connect_dtd(struct udt_tab **tabp, struct udt_ring_hdr **ringp,
	    uint32_t *flagsp, int32_t *pidp) UDT_HIDDEN;
/*
 * Begin the constructor's handshake at the tracees' socket: the looks,
 * the connection, dtd now making the welcome, which the constructor's
 * udt_connect_dtd() waits for and takes.  dtd looks at the process
 * meanwhile (its status, its maps, its text's pages): between the two
 * the constructor may map nothing executable and write no text, and
 * starts no thread.  The constructor, once, after udt_ctor_euid and the
 * socket's names are set; every other handshake is begun and ended in
 * udt_connect_dtd() at once.
 */
void	udt_hello_begin(void) UDT_HIDDEN;
/*
 * Tell the user once per process tree why process pid runs untraced,
 * said being UDT_UNTRACED_ENV as inherited.  Constructor only: libc.
 */
void	udt_tell_untraced(const char *said, pid_t pid) UDT_HIDDEN;

/* A descriptor closed, if any; the shared mapping of fd, or NULL. */
void	udt_close(int fd) UDT_HIDDEN;
void	*udt_map(int fd, size_t len, int prot) UDT_HIDDEN;

#endif /* UDT_HELLO_H */
