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
 * udt_mapsq: the client side of dtd's maps query (UDT_HELLO_MAPS in
 * userdt/udt_wire.h), shared by btrace, which symbolises the stacks of
 * traced processes that have exited, and by the DTIOCRDVNODE client
 * shim, which opens their files.
 */
#ifndef UDT_MAPSQ_H
#define UDT_MAPSQ_H

#include <sys/types.h>
#include <stdint.h>

#include <userdt/udt_wire.h>

/*
 * Called once per mapping, in address order, with its entry and its path
 * (NUL-terminated, absolute).  Return 0 to go on, anything else to stop
 * the query there (udt_mapsq() then returns that value).
 */
typedef int	udt_mapsq_fn(void *arg, const struct udt_maps_ent *,
		    const char *path);

/*
 * Connect to the dtd at ingest socket sock (NULL: $USERDT_SOCKET, else
 * UDT_SOCKET_DEFAULT), with one-second send and receive timeouts so
 * that a stopped dtd never hangs the caller: the descriptor, or -1 with
 * errno.  A signal the thread handles does not cut it short; gives up
 * after about two seconds.  Any thread.
 */
int	udt_mapsq_dial(const char *sock);

/*
 * Ask the dtd at ingest socket sock (NULL: $USERDT_SOCKET, else
 * UDT_SOCKET_DEFAULT) for the executable file mappings it knows of pid,
 * alive or kept after it exited.  0 when every entry was passed to fn,
 * fn's non-zero value when it stopped, -1 with errno: dtd's refusal
 * (ESRCH, EPERM: root only), EPROTO for a malformed answer, or what the
 * socket said.  Waits at most about two seconds for dtd; a signal
 * the calling thread handles does not cut the query short.  Any thread;
 * allocates nothing.
 */
int	udt_mapsq(const char *sock, pid_t pid, udt_mapsq_fn *fn, void *arg);

/*
 * Ask the dtd at ingest socket sock (as udt_mapsq()) for the parent it
 * noted of pid (UDT_HELLO_KIN): 0 with *ppid and *start (when that
 * process started, CLOCK_REALTIME ns, 0 unknown), or -1 with errno:
 * ENOENT when dtd knows nothing of it (never a tracee nor one's parent,
 * forgotten, or another user's), EPROTO from a dtd without the question
 * or a malformed answer, or what the socket said.  Waits at most about
 * two seconds.  Any thread.
 */
int	udt_kinq(const char *sock, pid_t pid, pid_t *ppid, uint64_t *start);

/*
 * The question itself, for udt_mapsq() and the helper's other ones
 * (udt_karmq()): a hello with flags about pid on fd, a dialled socket,
 * and the checked header of dtd's answer into *h: 0, or -1 with errno
 * (dtd's refusal, EPROTO, ETIMEDOUT past deadline, monotonic ns:
 * udt_mapsq_deadline(), two seconds from now).  Any thread.
 */
int	udt_mapsq_ask(int fd, uint32_t flags, pid_t pid,
	    struct udt_maps_hdr *h, uint64_t deadline);
uint64_t udt_mapsq_deadline(void);

/*
 * The file mapped at [start, end) in pid, opened read-only and
 * close-on-exec for reading its ELF, or -1 with errno.  Its readers run
 * as root and the name is the mapping process's to choose: a FIFO named
 * "lib.so (deleted)" would hang a plain open(2), a link would make root
 * open any file or device.  So: /proc/PID/map_files/START-END while pid
 * lives and we may (root), which is the very file mapped; else path
 * (from /proc/PID/maps or dtd's kept maps, pid gone) without following
 * any link in it.  Either way only a regular file is opened, never
 * waiting, and it must still be the file looked at (EPERM otherwise).
 * Any thread.
 */
int	udt_mapsq_open(pid_t pid, uint64_t start, uint64_t end,
	    const char *path);

#endif /* UDT_MAPSQ_H */
