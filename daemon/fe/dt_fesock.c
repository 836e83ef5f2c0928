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
 * The socket front end: connections and frames (protocol in
 * <userdt/udt_devsock.h>); the requests are dt_fesock_req.c's.
 *
 * Every byte a client sends is hostile: a frame is read into a buffer of
 * the largest legal size, checked, and a bad one costs only its own
 * connection.  Replies never block: what the socket does not take at
 * once waits in the connection's queue for the loop thread, and a client
 * that does not read its replies stops being read from.  Ioctls run on a
 * worker of their caller's uid, as the FUSE-file front end's do:
 * DTIOCRDVNODE reads a process's maps, which waits on that process's
 * mmap lock (doc/threat-model.md); a connection closed meanwhile is
 * released when its last ioctl is done.
 *
 * Locks used to protect the globals below (the connection's fields:
 * dt_fesock_conn.h):
 *	[I]	immutable while the loop runs
 *	[L]	the loop thread only
 *	[r]	fesock_reap_mtx
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
#include "dt_fesock_conn.h"
#include "dt_worker.h"
#include "dtd.h"

static int			 fesock_lfd = -1;	/* [I] listening */
static int			 fesock_epfd = -1;	/* [I] */
static int			 fesock_evfd = -1;	/* [I] stop */
static int			 fesock_reapfd = -1;	/* [I] jobs ended */
struct dt_wq			*dt_fesock_wq;		/* [I] */
static pthread_mutex_t		 fesock_reap_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct fesock_conn	*fesock_reap;		/* [r] to release */
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
	/* A dead stream: wake the loop, whose flush then closes it. */
	if (fc->fc_outq != NULL || fc->fc_dead)
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
void
dt_fesock_put(struct fesock_conn *fc, const struct udt_ds_hdr *dh,
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

void
dt_fesock_hdr(struct udt_ds_hdr *dh, uint16_t op, uint32_t seq, int error,
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
void
dt_fesock_reply(struct fesock_conn *fc, const struct udt_ds_hdr *rq, int error,
    uint64_t arg, const void *p1, size_t len1, const void *p2, size_t len2)
{
	struct udt_ds_hdr dh;

	if (error != 0)
		len1 = len2 = 0;
	dt_fesock_hdr(&dh, (uint16_t)(rq->dh_op | UDT_DS_REPLY), rq->dh_seq, error,
	    arg, len1 + len2);
	pthread_mutex_lock(&fc->fc_mtx);
	dt_fesock_put(fc, &dh, p1, len1, p2, len2);
	pthread_mutex_unlock(&fc->fc_mtx);
}

/* A reply with a payload whatever its errno (an ioctl's array). */
void
dt_fesock_reply_data(struct fesock_conn *fc, const struct udt_ds_hdr *rq,
    int error, const void *p1, size_t len1, const void *p2, size_t len2)
{
	struct udt_ds_hdr dh;

	dt_fesock_hdr(&dh, (uint16_t)(rq->dh_op | UDT_DS_REPLY), rq->dh_seq, error,
	    0, len1 + len2);
	pthread_mutex_lock(&fc->fc_mtx);
	dt_fesock_put(fc, &dh, p1, len1, p2, len2);
	pthread_mutex_unlock(&fc->fc_mtx);
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
			dt_fesock_hdr(&err, UDT_DS_ERROR, dh->dh_seq, EBADMSG, 0,
			    0);
			pthread_mutex_lock(&fc->fc_mtx);
			dt_fesock_put(fc, &err, NULL, 0, NULL, 0);
			pthread_mutex_unlock(&fc->fc_mtx);
			return false;
		}
		if (fc->fc_inlen < sizeof(*dh) ||
		    fc->fc_inlen < sizeof(*dh) + dh->dh_len)
			continue;
		dt_fesock_request(fc, dh, fc->fc_in + sizeof(*dh));
		fc->fc_inlen = 0;
	}
	return true;
}

/*
 * Release a closed connection whose ioctls are all done.  Loop thread,
 * or the main thread once the loop has ended.
 */
static void
fesock_finish(struct fesock_conn *fc)
{
	struct fesock_conn **fcp;
	struct fesock_out *fo;

	/* Parked reads and a kept poll end here, before fc goes. */
	if (fc->fc_sc != NULL)
		dt_dev_close(fc->fc_sc);
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

/*
 * close(2) of the device: at once, or when the last of its ioctls on a
 * worker is done (fesock_ioctl_run() hands it back).  Loop thread.
 */
static void
fesock_close(struct fesock_conn *fc)
{
	unsigned int jobs;

	pthread_mutex_lock(&fc->fc_mtx);
	fc->fc_closing = true;
	jobs = fc->fc_jobs;
	pthread_mutex_unlock(&fc->fc_mtx);
	fc->fc_gone = true;
	(void)epoll_ctl(fesock_epfd, EPOLL_CTL_DEL, fc->fc_fd, NULL);
	if (jobs == 0) {
		fesock_finish(fc);
		return;
	}
	/* The client sees the end now; the descriptor goes later. */
	(void)shutdown(fc->fc_fd, SHUT_RDWR);
}

void
dt_fesock_job_done(struct fesock_conn *fc)
{
	uint64_t one = 1;
	bool last;

	pthread_mutex_lock(&fc->fc_mtx);
	last = --fc->fc_jobs == 0 && fc->fc_closing;
	pthread_mutex_unlock(&fc->fc_mtx);
	/* Its close waited for us: the loop releases it now. */
	if (last) {
		pthread_mutex_lock(&fesock_reap_mtx);
		fc->fc_reapnext = fesock_reap;
		fesock_reap = fc;
		pthread_mutex_unlock(&fesock_reap_mtx);
		(void)!write(fesock_reapfd, &one, sizeof(one));
	}
}

/* Release the connections whose last ioctl ended.  Loop or main thread. */
static void
fesock_reaped(void)
{
	struct fesock_conn *fc;
	uint64_t n;

	(void)!read(fesock_reapfd, &n, sizeof(n));
	pthread_mutex_lock(&fesock_reap_mtx);
	while ((fc = fesock_reap) != NULL) {
		fesock_reap = fc->fc_reapnext;
		pthread_mutex_unlock(&fesock_reap_mtx);
		fesock_finish(fc);
		pthread_mutex_lock(&fesock_reap_mtx);
	}
	pthread_mutex_unlock(&fesock_reap_mtx);
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
	struct fesock_conn *fc, *next;
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
			if (evs[i].data.ptr == &fesock_reapfd) {
				fesock_reaped();
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
	/* Those with ioctls running go once the workers are stopped. */
	for (fc = fesock_conns; fc != NULL; fc = next) {
		next = fc->fc_next;
		if (!fc->fc_gone)
			fesock_close(fc);
	}
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
	fesock_reapfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fesock_epfd == -1 || fesock_evfd == -1 || fesock_reapfd == -1)
		goto fail_errno;
	if ((dt_fesock_wq = dt_wq_new("dtd-sockioctl", FESOCK_JOBS_UID)) ==
	    NULL) {
		errno = ENOMEM;
		goto fail_errno;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = &fesock_lfd;
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_ADD, fesock_lfd, &ev) == -1)
		goto fail_errno;
	ev.data.ptr = &fesock_evfd;
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_ADD, fesock_evfd, &ev) == -1)
		goto fail_errno;
	ev.data.ptr = &fesock_reapfd;
	if (epoll_ctl(fesock_epfd, EPOLL_CTL_ADD, fesock_reapfd, &ev) == -1)
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

	unsigned int stuck = 0;

	if (fesock_running) {
		(void)!write(fesock_evfd, &one, sizeof(one));
		pthread_join(fesock_thread, NULL);
		fesock_running = false;
	}
	/*
	 * The loop is gone: what its connections' ioctls hand back is
	 * released here.  One stuck on a process stays with its open.
	 */
	if (dt_fesock_wq != NULL) {
		stuck = dt_wq_stop(dt_fesock_wq, 1000);
		fesock_reaped();
		if (stuck != 0)
			fprintf(stderr, "dtd: %u device socket ioctl%s still "
			    "wait%s on a process\n", stuck, stuck == 1 ? "" :
			    "s", stuck == 1 ? "s" : "");
		dt_wq_free(dt_fesock_wq);
		dt_fesock_wq = NULL;
	}
	if (fesock_lfd != -1)
		close(fesock_lfd);
	if (fesock_epfd != -1)
		close(fesock_epfd);
	if (fesock_evfd != -1)
		close(fesock_evfd);
	if (fesock_reapfd != -1)
		close(fesock_reapfd);
	fesock_lfd = fesock_epfd = fesock_evfd = fesock_reapfd = -1;
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
