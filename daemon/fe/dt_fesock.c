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
 * The socket front end: connections, frames and their translation into
 * the core's calls (protocol in <userdt/udt_devsock.h>).
 *
 * Every byte a client sends is hostile: a frame is read into a buffer of
 * the largest legal size, checked, and a bad one costs only its own
 * connection.  Replies never block: what the socket does not take at
 * once waits in the connection's queue for the loop thread, and a client
 * that does not read its replies stops being read from.
 *
 * Locks used to protect the fields below:
 *	[I]	immutable while the connection lives
 *	[L]	the loop thread only
 *	[o]	fc_mtx: the replies, which completions also send
 */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_devsock.h>

#include "dt_dev.h"
#include "dt_fe.h"
#include "dt_fesock.h"
#include "dtd.h"

#define FESOCK_READS	8		/* parked reads of one connection */
#define FESOCK_OUTMAX	(4 * 1024 * 1024) /* queued replies: stop reading */
#define FESOCK_CONNMAX	4096		/* connections at once */
#define FESOCK_FRAMEMAX	(sizeof(struct udt_ds_hdr) + UDT_DS_MAXPAYLOAD)

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
	struct fesock_rd	 fc_rd[FESOCK_READS];
} __attribute__((aligned(8)));

static int			 fesock_lfd = -1;	/* [I] listening */
static int			 fesock_epfd = -1;	/* [I] */
static int			 fesock_evfd = -1;	/* [I] stop */
static pthread_t		 fesock_thread;		/* [I] */
static bool			 fesock_running;	/* main thread */
static struct fesock_conn	*fesock_conns;		/* [L] */
static unsigned int		 fesock_nconns;		/* [L] */

/* The interest the connection's state asks for; under [o]. */
static void
fesock_interest(struct fesock_conn *fc)
{
	struct epoll_event ev = { .data.ptr = fc };
	uint32_t want = 0;

	if (fc->fc_closing)
		return;
	if (fc->fc_outbytes <= FESOCK_OUTMAX && !fc->fc_dead)
		want |= EPOLLIN;
	if (fc->fc_outq != NULL && !fc->fc_dead)
		want |= EPOLLOUT;
	if (want == fc->fc_events)
		return;
	ev.events = want;
	/* EPOLLHUP and EPOLLERR are reported whatever is asked. */
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_MOD, fc->fc_fd, &ev) == 0)
		fc->fc_events = want;
}

/*
 * Send what the queue holds, never waiting: false when the peer is gone.
 * Under [o].
 */
static bool
fesock_flush(struct fesock_conn *fc)
{
	struct fesock_out *fo;
	ssize_t n;

	while ((fo = fc->fc_outq) != NULL) {
		n = send(fc->fc_fd, fo->fo_buf + fo->fo_off,
		    fo->fo_len - fo->fo_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			fc->fc_dead = true;
			break;
		}
		fo->fo_off += (size_t)n;
		fc->fc_outbytes -= (size_t)n;
		if (fo->fo_off < fo->fo_len)
			continue;
		fc->fc_outq = fo->fo_next;
		if (fc->fc_outq == NULL)
			fc->fc_outtail = &fc->fc_outq;
		free(fo);
	}
	fesock_interest(fc);
	return !fc->fc_dead;
}

/*
 * Queue one frame (header, then len bytes of payload) and send what the
 * socket takes now.  Under [o]; any thread, the core's softc lock perhaps
 * held.  A frame that finds no memory is lost, and with it the stream:
 * the connection is treated as gone.
 */
static void
fesock_put(struct fesock_conn *fc, const struct udt_ds_hdr *dh,
    const void *p1, size_t len1, const void *p2, size_t len2)
{
	struct fesock_out *fo;
	size_t len = sizeof(*dh) + len1 + len2;

	if (fc->fc_closing || fc->fc_dead)
		return;
	if ((fo = malloc(sizeof(*fo) + len)) == NULL) {
		fc->fc_dead = true;
		fesock_interest(fc);
		return;
	}
	fo->fo_next = NULL;
	fo->fo_len = len;
	fo->fo_off = 0;
	memcpy(fo->fo_buf, dh, sizeof(*dh));
	if (len1 > 0)
		memcpy(fo->fo_buf + sizeof(*dh), p1, len1);
	if (len2 > 0)
		memcpy(fo->fo_buf + sizeof(*dh) + len1, p2, len2);
	*fc->fc_outtail = fo;
	fc->fc_outtail = &fo->fo_next;
	fc->fc_outbytes += len;
	(void)fesock_flush(fc);
}

static void
fesock_hdr(struct udt_ds_hdr *dh, uint16_t op, uint32_t seq, int error,
    uint64_t arg, size_t len)
{
	memset(dh, 0, sizeof(*dh));
	dh->dh_magic = UDT_DS_MAGIC;
	dh->dh_op = op;
	dh->dh_seq = seq;
	dh->dh_error = error;
	dh->dh_arg = arg;
	dh->dh_len = (uint32_t)len;
}

/* The reply to a request: an errno alone, or a payload.  Loop thread. */
static void
fesock_reply(struct fesock_conn *fc, const struct udt_ds_hdr *rq, int error,
    uint64_t arg, const void *p1, size_t len1, const void *p2, size_t len2)
{
	struct udt_ds_hdr dh;

	if (error != 0)
		len1 = len2 = 0;
	fesock_hdr(&dh, (uint16_t)(rq->dh_op | UDT_DS_REPLY), rq->dh_seq, error,
	    arg, len1 + len2);
	pthread_mutex_lock(&fc->fc_mtx);
	fesock_put(fc, &dh, p1, len1, p2, len2);
	pthread_mutex_unlock(&fc->fc_mtx);
}

/* A reply with a payload whatever its errno (an ioctl's array). */
static void
fesock_reply_data(struct fesock_conn *fc, const struct udt_ds_hdr *rq,
    int error, const void *p1, size_t len1, const void *p2, size_t len2)
{
	struct udt_ds_hdr dh;

	fesock_hdr(&dh, (uint16_t)(rq->dh_op | UDT_DS_REPLY), rq->dh_seq, error,
	    0, len1 + len2);
	pthread_mutex_lock(&fc->fc_mtx);
	fesock_put(fc, &dh, p1, len1, p2, len2);
	pthread_mutex_unlock(&fc->fc_mtx);
}

void
dt_fesock_read_done(void *token, const void *buf, size_t len, int error)
{
	struct fesock_rd *fr = (void *)((uintptr_t)token & ~DT_FESOCK_TAG);
	struct fesock_conn *fc = fr->fr_conn;
	struct udt_ds_hdr dh;

	pthread_mutex_lock(&fc->fc_mtx);
	fesock_hdr(&dh, UDT_DS_READ | UDT_DS_REPLY, fr->fr_seq, error, 0,
	    error == 0 ? len : 0);
	fr->fr_busy = false;
	fesock_put(fc, &dh, buf, error == 0 ? len : 0, NULL, 0);
	pthread_mutex_unlock(&fc->fc_mtx);
}

void
dt_fesock_poll_done(void *ph, bool ready)
{
	struct fesock_conn *fc = (void *)((uintptr_t)ph & ~DT_FESOCK_TAG);
	struct udt_ds_hdr dh;

	/* A handle let go needs nothing: the client asks again. */
	if (!ready)
		return;
	pthread_mutex_lock(&fc->fc_mtx);
	fesock_hdr(&dh, UDT_DS_NOTIFY, 0, 0, 0, 0);
	fesock_put(fc, &dh, NULL, 0, NULL, 0);
	pthread_mutex_unlock(&fc->fc_mtx);
}

/* ua_copyout of an ioctl: into the staging of the pointed-to array. */
struct fesock_stage {
	uint64_t	 fs_uaddr;
	size_t		 fs_len;
	size_t		 fs_high;	/* bytes written from the start */
	unsigned char	*fs_buf;
};

static int
fesock_copyout(void *arg, uint64_t uaddr, const void *src, size_t len)
{
	struct fesock_stage *fs = arg;
	uint64_t off;

	if (len == 0)
		return 0;
	if (uaddr < fs->fs_uaddr || fs->fs_buf == NULL)
		return EFAULT;
	off = uaddr - fs->fs_uaddr;
	if (off > fs->fs_len || len > fs->fs_len - off)
		return EFAULT;
	memcpy(fs->fs_buf + off, src, len);
	if (off + len > fs->fs_high)
		fs->fs_high = (size_t)(off + len);
	return 0;
}

/*
 * IOCTL: the argument as OpenBSD's sys_ioctl() hands it to the driver,
 * copied in for IOC_IN, zeroes for a pure IOC_OUT; the pointed-to array
 * staged here and sent back for the client to copy.  Loop thread.
 */
static void
fesock_ioctl(struct fesock_conn *fc, const struct udt_ds_hdr *rq,
    const unsigned char *payload, const struct dt_cred *dc)
{
	union dt_ioctl_arg u;
	struct fesock_stage fs = { .fs_buf = NULL };
	struct dt_uaccess ua = { fesock_copyout, &fs };
	struct udt_ds_ioret dr;
	unsigned long canon;
	unsigned char *out;
	size_t argsz;
	int size, error;

	size = dt_ioctl_argsize((unsigned long)rq->dh_arg, &canon);
	if (size < 0 || (size_t)size > sizeof(u)) {
		fesock_reply(fc, rq, ENOTTY, 0, NULL, 0, NULL, 0);
		return;
	}
	memset(&u, 0, sizeof(u));
	if (_IOC_DIR(canon) & _IOC_WRITE) {
		if ((rq->dh_flags & UDT_DS_FAULT) || rq->dh_len < (size_t)size) {
			fesock_reply(fc, rq, EFAULT, 0, NULL, 0, NULL, 0);
			return;
		}
		memcpy(&u, payload, (size_t)size);
	}
	if (dt_ioctl_outbuf(canon, &u, &fs.fs_uaddr, &fs.fs_len) &&
	    (fs.fs_buf = calloc(1, fs.fs_len)) == NULL) {
		fesock_reply(fc, rq, ENOMEM, 0, NULL, 0, NULL, 0);
		return;
	}
	error = dt_dev_ioctl(fc->fc_sc, dc, (unsigned long)rq->dh_arg, &u,
	    &ua);
	/*
	 * The argument is copied out on success only; what the array got
	 * is the caller's either way (DTIOCGPLIST's ENOSPC fills it).
	 */
	argsz = error == 0 && (_IOC_DIR(canon) & _IOC_READ) ? (size_t)size :
	    0;
	memset(&dr, 0, sizeof(dr));
	dr.dr_uaddr = fs.fs_uaddr;
	dr.dr_argsz = (uint32_t)argsz;
	dr.dr_buflen = (uint32_t)fs.fs_high;
	/* One payload: the head, the argument, the array. */
	if ((out = malloc(sizeof(dr) + argsz)) == NULL) {
		fesock_reply(fc, rq, ENOMEM, 0, NULL, 0, NULL, 0);
		free(fs.fs_buf);
		return;
	}
	memcpy(out, &dr, sizeof(dr));
	memcpy(out + sizeof(dr), &u, argsz);
	if (error == 0 || fs.fs_high > 0)
		fesock_reply_data(fc, rq, error, out, sizeof(dr) + argsz,
		    fs.fs_buf, fs.fs_high);
	else
		fesock_reply(fc, rq, error, 0, NULL, 0, NULL, 0);
	free(out);
	free(fs.fs_buf);
}

/* READ: park it in the core under a free slot's token.  Loop thread. */
static void
fesock_read(struct fesock_conn *fc, const struct udt_ds_hdr *rq)
{
	struct fesock_rd *fr = NULL;
	size_t i, resid;

	pthread_mutex_lock(&fc->fc_mtx);
	for (i = 0; i < FESOCK_READS; i++) {
		if (!fc->fc_rd[i].fr_busy) {
			fr = &fc->fc_rd[i];
			fr->fr_busy = true;
			fr->fr_seq = rq->dh_seq;
			break;
		}
	}
	pthread_mutex_unlock(&fc->fc_mtx);
	if (fr == NULL) {
		/* More reads at once than any client of one open makes. */
		fesock_reply(fc, rq, EAGAIN, 0, NULL, 0, NULL, 0);
		return;
	}
	/*
	 * dt(4) cuts the last record only at the caller's end: where our
	 * bound is shorter, whole records.
	 */
	resid = (size_t)rq->dh_arg;
	if (rq->dh_arg > DT_READ_MAX)
		resid = DT_READ_MAX - DT_READ_MAX % dt_dev_recsize();
	dt_dev_read(fc->fc_sc, resid, (void *)((uintptr_t)fr | DT_FESOCK_TAG));
}

/*
 * CANCEL: the client's read(2) took a signal.  The slot is only compared
 * by the core, and only this thread reuses it, so a completion racing
 * with us is harmless: the records are then on their way.
 */
static void
fesock_cancel(struct fesock_conn *fc, uint32_t seq)
{
	struct fesock_rd *fr = NULL;
	size_t i;

	pthread_mutex_lock(&fc->fc_mtx);
	for (i = 0; i < FESOCK_READS; i++)
		if (fc->fc_rd[i].fr_busy && fc->fc_rd[i].fr_seq == seq)
			fr = &fc->fc_rd[i];
	pthread_mutex_unlock(&fc->fc_mtx);
	if (fr != NULL)
		(void)dt_dev_read_cancel(fc->fc_sc,
		    (void *)((uintptr_t)fr | DT_FESOCK_TAG), EINTR);
}

/* One whole, well-framed request.  Loop thread. */
static void
fesock_request(struct fesock_conn *fc, const struct udt_ds_hdr *rq,
    const unsigned char *payload)
{
	struct dt_cred dc = fc->fc_incred;
	bool ready;
	int error;

	/* A frame sent in parts by two processes is nobody's. */
	if (fc->fc_inmixed) {
		fesock_reply(fc, rq, EPERM, 0, NULL, 0, NULL, 0);
		return;
	}
	if (rq->dh_op == UDT_DS_OPEN) {
		if (fc->fc_sc != NULL)
			error = EBUSY;
		else if (rq->dh_len != 0)
			error = EINVAL;
		/* Without root, dtd's own user alone (dtd_unpriv.c). */
		else if (dtd_conf.dcf_unpriv && dc.dc_uid != dtd_conf.dcf_uid)
			error = EACCES;
		else
			error = dt_dev_open(&dc, &fc->fc_sc);
		fesock_reply(fc, rq, error, 0, NULL, 0, NULL, 0);
		return;
	}
	if (fc->fc_sc == NULL) {
		if (rq->dh_op != UDT_DS_CANCEL)
			fesock_reply(fc, rq, EBADF, 0, NULL, 0, NULL, 0);
		return;
	}
	switch (rq->dh_op) {
	case UDT_DS_IOCTL:
		fesock_ioctl(fc, rq, payload, &dc);
		break;
	case UDT_DS_READ:
		if (rq->dh_len != 0)
			fesock_reply(fc, rq, EINVAL, 0, NULL, 0, NULL, 0);
		else
			fesock_read(fc, rq);
		break;
	case UDT_DS_POLL:
		ready = dt_dev_poll(fc->fc_sc, (rq->dh_flags & UDT_DS_ARM) ?
		    (void *)((uintptr_t)fc | DT_FESOCK_TAG) : NULL);
		fesock_reply(fc, rq, 0, ready, NULL, 0, NULL, 0);
		break;
	case UDT_DS_CANCEL:
		fesock_cancel(fc, (uint32_t)rq->dh_arg);
		break;
	default:
		fesock_reply(fc, rq, EOPNOTSUPP, 0, NULL, 0, NULL, 0);
		break;
	}
}

/*
 * The sender of bytes just received: the credentials the kernel stamped
 * on them, else (a kernel that stamped none) the peer's at connect.
 */
static void
fesock_sender(struct fesock_conn *fc, struct msghdr *msg, struct dt_cred *dc)
{
	struct cmsghdr *cm;
	struct ucred uc;

	*dc = fc->fc_peer;
	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_CREDENTIALS ||
		    cm->cmsg_len < CMSG_LEN(sizeof(uc)))
			continue;
		memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
		dc->dc_uid = uc.uid;
		dc->dc_gid = uc.gid;
		/* 0 when the sender's pid is not in our namespace. */
		dc->dc_pid = uc.pid;
	}
}

/*
 * Receive what the connection sent, frame by frame, and serve each.
 * Never reads past the frame in hand, so a receive holds one sender's
 * bytes of one frame.  false: close the connection.  Loop thread.
 */
static bool
fesock_input(struct fesock_conn *fc)
{
	union {
		struct cmsghdr	cm;
		char		buf[CMSG_SPACE(sizeof(struct ucred))];
	} cbuf;
	const struct udt_ds_hdr *dh = (const void *)fc->fc_in;
	struct udt_ds_hdr err;
	struct msghdr msg;
	struct iovec iov;
	struct dt_cred dc;
	size_t want;
	ssize_t n;
	bool room;
	int i;

	/* A bounded batch, so one busy client cannot starve the others. */
	for (i = 0; i < 64; i++) {
		pthread_mutex_lock(&fc->fc_mtx);
		room = fc->fc_outbytes <= FESOCK_OUTMAX && !fc->fc_dead;
		pthread_mutex_unlock(&fc->fc_mtx);
		if (!room)
			return true;
		want = sizeof(*dh);
		if (fc->fc_inlen >= sizeof(*dh))
			want += dh->dh_len;
		iov.iov_base = fc->fc_in + fc->fc_inlen;
		iov.iov_len = want - fc->fc_inlen;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		n = recvmsg(fc->fc_fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0)
			return false;	/* closed: close(2) of the device */
		fesock_sender(fc, &msg, &dc);
		if (fc->fc_inlen == 0) {
			fc->fc_incred = dc;
			fc->fc_inmixed = false;
		} else if (dc.dc_uid != fc->fc_incred.dc_uid ||
		    dc.dc_gid != fc->fc_incred.dc_gid ||
		    dc.dc_pid != fc->fc_incred.dc_pid)
			fc->fc_inmixed = true;
		fc->fc_inlen += (size_t)n;
		if (fc->fc_inlen == sizeof(*dh) && (dh->dh_magic !=
		    UDT_DS_MAGIC || dh->dh_len > UDT_DS_MAXPAYLOAD ||
		    (dh->dh_op & UDT_DS_REPLY))) {
			/* No way back into step: say so and hang up. */
			fesock_hdr(&err, UDT_DS_ERROR, dh->dh_seq, EBADMSG, 0,
			    0);
			pthread_mutex_lock(&fc->fc_mtx);
			fesock_put(fc, &err, NULL, 0, NULL, 0);
			pthread_mutex_unlock(&fc->fc_mtx);
			return false;
		}
		if (fc->fc_inlen < sizeof(*dh) ||
		    fc->fc_inlen < sizeof(*dh) + dh->dh_len)
			continue;
		fesock_request(fc, dh, fc->fc_in + sizeof(*dh));
		fc->fc_inlen = 0;
	}
	return true;
}

/* close(2) of the device.  Loop thread. */
static void
fesock_close(struct fesock_conn *fc)
{
	struct fesock_conn **fcp;
	struct fesock_out *fo;

	pthread_mutex_lock(&fc->fc_mtx);
	fc->fc_closing = true;
	pthread_mutex_unlock(&fc->fc_mtx);
	/* Parked reads and a kept poll end here, before fc goes. */
	if (fc->fc_sc != NULL)
		dt_dev_close(fc->fc_sc);
	(void)epoll_ctl(fesock_epfd, EPOLL_CTL_DEL, fc->fc_fd, NULL);
	close(fc->fc_fd);
	for (fcp = &fesock_conns; *fcp != NULL; fcp = &(*fcp)->fc_next) {
		if (*fcp == fc) {
			*fcp = fc->fc_next;
			break;
		}
	}
	fesock_nconns--;
	while ((fo = fc->fc_outq) != NULL) {
		fc->fc_outq = fo->fo_next;
		free(fo);
	}
	pthread_mutex_destroy(&fc->fc_mtx);
	free(fc);
}

/* A new connection: an open to come.  Loop thread. */
static void
fesock_accept(void)
{
	struct epoll_event ev;
	struct fesock_conn *fc;
	struct ucred uc;
	socklen_t len = sizeof(uc);
	size_t i;
	int fd;

	fd = accept4(fesock_lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1 ||
	    fesock_nconns >= FESOCK_CONNMAX ||
	    (dtd_conf.dcf_unpriv && uc.uid != dtd_conf.dcf_uid) ||
	    (fc = aligned_alloc(8, sizeof(*fc))) == NULL) {
		close(fd);
		return;
	}
	memset(fc, 0, sizeof(*fc));
	fc->fc_fd = fd;
	fc->fc_peer.dc_uid = uc.uid;
	fc->fc_peer.dc_gid = uc.gid;
	fc->fc_peer.dc_pid = uc.pid;
	fc->fc_outtail = &fc->fc_outq;
	fc->fc_events = EPOLLIN;
	for (i = 0; i < FESOCK_READS; i++)
		fc->fc_rd[i].fr_conn = fc;
	pthread_mutex_init(&fc->fc_mtx, NULL);
	ev.events = EPOLLIN;
	ev.data.ptr = fc;
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_ADD, fd, &ev) == -1) {
		pthread_mutex_destroy(&fc->fc_mtx);
		free(fc);
		close(fd);
		return;
	}
	fc->fc_next = fesock_conns;
	fesock_conns = fc;
	fesock_nconns++;
}

static void *
fesock_main(void *arg)
{
	struct epoll_event evs[32];
	struct fesock_conn *fc;
	bool alive;
	int i, n;

	(void)arg;
	for (;;) {
		n = epoll_wait(fesock_epfd, evs, 32, -1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == &fesock_evfd)
				goto out;
			if (evs[i].data.ptr == &fesock_lfd) {
				fesock_accept();
				continue;
			}
			fc = evs[i].data.ptr;
			pthread_mutex_lock(&fc->fc_mtx);
			alive = fesock_flush(fc);
			pthread_mutex_unlock(&fc->fc_mtx);
			if (alive && (evs[i].events & (EPOLLIN | EPOLLHUP |
			    EPOLLERR)))
				alive = fesock_input(fc);
			if (!alive)
				fesock_close(fc);
		}
	}
out:
	while (fesock_conns != NULL)
		fesock_close(fesock_conns);
	return NULL;
}

int
dt_fesock_start(const char *path)
{
	struct epoll_event ev;
	int error;

	if ((error = dt_fesock_bind(path, &fesock_lfd)) != 0)
		return error;
	fesock_epfd = epoll_create1(EPOLL_CLOEXEC);
	fesock_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fesock_epfd == -1 || fesock_evfd == -1)
		goto fail_errno;
	ev.events = EPOLLIN;
	ev.data.ptr = &fesock_lfd;
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_ADD, fesock_lfd, &ev) == -1)
		goto fail_errno;
	ev.data.ptr = &fesock_evfd;
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_ADD, fesock_evfd, &ev) == -1)
		goto fail_errno;
	if ((error = pthread_create(&fesock_thread, NULL, fesock_main,
	    NULL)) != 0) {
		errno = error;
		goto fail_errno;
	}
	fesock_running = true;
	return 0;

fail_errno:
	error = errno;
	fprintf(stderr, "dtd: the device socket: %s\n", strerror(error));
	dt_fesock_stop();
	return error;
}

void
dt_fesock_stop(void)
{
	uint64_t one = 1;

	if (fesock_running) {
		(void)!write(fesock_evfd, &one, sizeof(one));
		pthread_join(fesock_thread, NULL);
		fesock_running = false;
	}
	if (fesock_lfd != -1)
		close(fesock_lfd);
	if (fesock_epfd != -1)
		close(fesock_epfd);
	if (fesock_evfd != -1)
		close(fesock_evfd);
	fesock_lfd = fesock_epfd = fesock_evfd = -1;
	dt_fesock_unbind();
}

int
dt_fesock_main(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	dtd_ready();
	while (sigwait(&set, &sig) != 0)
		continue;
	dtd_teardown();
	return 0;
}
