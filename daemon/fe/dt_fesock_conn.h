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
 * What the socket front end's two files share: a connection and its
 * replies (dt_fesock.c), the requests (dt_fesock_req.c).  Private to
 * daemon/fe.
 *
 * Locks used to protect the fields below:
 *	[I]	immutable while the connection lives
 *	[L]	the loop thread only
 *	[o]	fc_mtx: the replies, which completions also send
 *	[r]	the reap list's lock (dt_fesock.c)
 */
#ifndef DT_FESOCK_CONN_H
#define DT_FESOCK_CONN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <userdt/udt_devsock.h>

#include "dt_dev.h"

#define FESOCK_READS	8		/* parked reads of one connection */
#define FESOCK_OUTMAX	(4 * 1024 * 1024) /* queued replies: stop reading */
#define FESOCK_CONNMAX	4096		/* connections at once */
#define FESOCK_FRAMEMAX	(sizeof(struct udt_ds_hdr) + UDT_DS_MAXPAYLOAD)
#define FESOCK_JOBS_UID	64		/* ioctls of one uid waiting */

struct fesock_out {
	struct fesock_out	*fo_next;
	size_t			 fo_len;
	size_t			 fo_off;
	unsigned char		 fo_buf[];
};

struct fesock_conn;

/* A read parked in the core; its address (tagged) is the token. */
struct fesock_rd {
	struct fesock_conn	*fr_conn;	/* [I] */
	uint32_t		 fr_seq;	/* [o] */
	bool			 fr_busy;	/* [o] */
} __attribute__((aligned(8)));

struct fesock_conn {
	int			 fc_fd;			/* [I] */
	struct dt_cred		 fc_peer;		/* [I] at connect */
	struct dt_softc		*fc_sc;			/* [L] after OPEN */
	struct fesock_conn	*fc_next;		/* [L] all of them */
	unsigned char		 fc_in[FESOCK_FRAMEMAX]; /* [L] a frame */
	size_t			 fc_inlen;		/* [L] */
	struct dt_cred		 fc_incred;		/* [L] its sender */
	bool			 fc_inmixed;		/* [L] two senders */

	pthread_mutex_t		 fc_mtx;
	struct fesock_out	*fc_outq;		/* [o] */
	struct fesock_out	**fc_outtail;		/* [o] */
	size_t			 fc_outbytes;		/* [o] */
	uint32_t		 fc_events;		/* [o] epoll interest */
	bool			 fc_closing;		/* [o] */
	bool			 fc_dead;		/* [o] send failed */
	unsigned int		 fc_jobs;		/* [o] ioctls queued */
	bool			 fc_gone;		/* [L] closed */
	struct fesock_conn	*fc_reapnext;		/* [r] */
	struct fesock_rd	 fc_rd[FESOCK_READS];
} __attribute__((aligned(8)));

extern struct dt_wq	*dt_fesock_wq;	/* [I] ioctls' workers, by uid */

/* A frame's header. */
void	dt_fesock_hdr(struct udt_ds_hdr *, uint16_t op, uint32_t seq,
	    int error, uint64_t arg, size_t len);
/*
 * Queue a frame (header, then two pieces of payload) and send what the
 * socket takes now.  Under fc_mtx; any thread, the core's softc lock
 * perhaps held.
 */
void	dt_fesock_put(struct fesock_conn *, const struct udt_ds_hdr *,
	    const void *, size_t, const void *, size_t);
/*
 * The reply to rq: with error, no payload (dt_fesock_reply()) or the
 * payload regardless (dt_fesock_reply_data(), an ioctl's array).  Any
 * thread, fc_mtx not held.
 */
void	dt_fesock_reply(struct fesock_conn *, const struct udt_ds_hdr *rq,
	    int error, uint64_t arg, const void *, size_t, const void *,
	    size_t);
void	dt_fesock_reply_data(struct fesock_conn *, const struct udt_ds_hdr *rq,
	    int error, const void *, size_t, const void *, size_t);
/* An ioctl of fc's is done on its worker: release fc if it was closed. */
void	dt_fesock_job_done(struct fesock_conn *);

/*
 * One whole, well-framed request from the credentials dc stamped on it
 * (fc_inmixed: from two senders).  Loop thread.
 */
void	dt_fesock_request(struct fesock_conn *, const struct udt_ds_hdr *rq,
	    const unsigned char *payload);

#endif /* DT_FESOCK_CONN_H */
