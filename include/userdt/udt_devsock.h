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
 * The device socket: dt(4) over a unix stream socket (dtd --device-socket,
 * daemon/fe/dt_fesock.c), for clients that cannot reach the device
 * through the kernel (no /dev/fuse, another pid namespace).
 * libuserdt-dev.so (shim/dev/) speaks it for an unmodified client.
 *
 * One connection is one open(2) of the device; closing it is close(2).
 * Every frame is a struct udt_ds_hdr and dh_len bytes of payload, in
 * host order (the two ends share a machine).  The client sends each
 * request with its credentials (SCM_CREDENTIALS, its euid); dtd judges
 * every request by the credentials the kernel stamped on it, as the
 * other front ends judge the caller of each system call.
 *
 *	request		dh_arg		payload		reply
 *	OPEN		open flags	-		dh_error
 *	IOCTL		command		argument bytes	struct udt_ds_ioret,
 *			(either		(_IOC_SIZE of	the argument, the
 *			encoding)	the command)	pointed-to buffer
 *	READ		bytes wanted	-		the records
 *	POLL		UDT_DS_ARM?	-		dh_arg: 1 if readable
 *	CANCEL		seq of a READ	-		(none: the READ's)
 *
 * A reply has the request's dh_seq and dh_op | UDT_DS_REPLY, and dh_error
 * 0 or an errno (then no payload, but for an IOCTL whose array dt(4)
 * filled before failing: its struct udt_ds_ioret with dr_argsz 0, and
 * the array).  A READ is answered when records are
 * ready, as dt(4)'s read blocks; meanwhile the client waits in recv(2),
 * so signals act on it as on OpenBSD's sleeping read, and a CANCEL makes
 * dtd answer the READ at once (EINTR, or the records that won the race).
 * After a POLL that found nothing, flagged UDT_DS_ARM, dtd sends one
 * NOTIFY (dh_seq 0) when a record arrives, so that poll(2) on the socket
 * wakes: a client skips NOTIFY frames wherever it meets them.
 *
 * A well-framed bad request (unknown op, wrong payload, no OPEN first)
 * gets its error and the connection goes on; a broken frame (bad magic,
 * dh_len past UDT_DS_MAXPAYLOAD) gets an ERROR frame (EBADMSG) and the
 * connection is closed, since the stream cannot be resynchronised.
 */
#ifndef UDT_DEVSOCK_H
#define UDT_DEVSOCK_H

#include <stdint.h>

#define UDT_DS_MAGIC		0x31534455U	/* "UDS1" */
#define UDT_DS_MAXPAYLOAD	4096		/* of a request */

#define UDT_DS_OPEN		1
#define UDT_DS_IOCTL		2
#define UDT_DS_READ		3
#define UDT_DS_POLL		4
#define UDT_DS_CANCEL		5
#define UDT_DS_NOTIFY		6		/* dtd to client only */
#define UDT_DS_ERROR		7		/* dtd to client only */
#define UDT_DS_REPLY		0x8000

/* dh_flags */
#define UDT_DS_FAULT		0x0001	/* IOCTL: the argument was unreadable */
#define UDT_DS_ARM		0x0002	/* POLL: notify when readable */

struct udt_ds_hdr {
	uint32_t	dh_magic;
	uint16_t	dh_op;
	uint16_t	dh_flags;
	uint32_t	dh_seq;
	uint32_t	dh_len;		/* payload bytes that follow */
	uint64_t	dh_arg;
	int32_t		dh_error;	/* replies: 0 or an errno */
	uint32_t	dh_pad;		/* zero */
};

/*
 * Head of a successful IOCTL reply.  Then dr_argsz bytes, the argument as
 * dt(4) copies it out (none for a command that returns nothing), then
 * dr_buflen bytes the client copies to dr_uaddr, the array an embedded
 * pointer of the argument names (DTIOCGPLIST's dtpr_probes, DTIOCGARGS's
 * dtar_args), an address of the client's own.
 */
struct udt_ds_ioret {
	uint64_t	dr_uaddr;
	uint32_t	dr_argsz;
	uint32_t	dr_buflen;
};

_Static_assert(sizeof(struct udt_ds_hdr) == 32, "udt_ds_hdr");
_Static_assert(sizeof(struct udt_ds_ioret) == 16, "udt_ds_ioret");

#endif /* UDT_DEVSOCK_H */
