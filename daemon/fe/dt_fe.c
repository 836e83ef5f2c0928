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
 * The libfuse side of the device that both front ends share.
 *
 * A read the core cannot answer at once is parked in the core with its
 * fuse_req_t as token, and the loop thread goes on; the core's wakeup
 * thread, a cancel or a close replies later.  The core guarantees one
 * completion per token and libfuse keeps an interrupted request alive
 * while its interrupt callback runs, so every read is replied to exactly
 * once.
 */
#include <sys/signalfd.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_fe.h"
#include "dt_fesock.h"

/*
 * Set on the loop thread while it registers an interrupt callback:
 * libfuse calls the callback right away, under its session lock, when
 * the interrupt came first.  Cancelling then would take the core's softc
 * lock under libfuse's, the reverse of the wakeup thread's order, and
 * there is nothing parked to cancel yet anyway.
 */
static __thread bool	dt_fe_registering;

void
dt_fe_cred(fuse_req_t req, struct dt_cred *dc)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	dc->dc_uid = ctx->uid;
	dc->dc_gid = ctx->gid;
	dc->dc_pid = ctx->pid;
}

void
dt_fe_read_done(void *token, const void *buf, size_t len, int error)
{
	fuse_req_t req = token;

	if (dt_fesock_token(token)) {
		dt_fesock_read_done(token, buf, len, error);
		return;
	}
	/* A reply to a caller that is gone fails harmlessly with ENOENT. */
	if (error != 0)
		(void)fuse_reply_err(req, error);
	else
		(void)fuse_reply_buf(req, buf, len);
}

bool
dt_fe_read_iov(void *token, const struct iovec *iov, unsigned int niov,
    size_t len)
{
	(void)len;
	/* The socket front end sends from one buffer: staged. */
	if (dt_fesock_token(token))
		return false;
	/* Written to /dev/fuse, copied by the kernel, before it returns. */
	(void)fuse_reply_iov(token, iov, (int)niov);
	return true;
}

void
dt_fe_poll_done(void *arg, bool ready)
{
	struct fuse_pollhandle *ph = arg;

	if (dt_fesock_token(arg)) {
		dt_fesock_poll_done(arg, ready);
		return;
	}
	/* The kernel then asks again, and finds the record. */
	if (ready)
		(void)fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

void
dt_fe_poll(fuse_req_t req, struct fuse_file_info *fi,
    struct fuse_pollhandle *ph)
{
	/* Never POLLOUT: dt(4) has no write. */
	(void)fuse_reply_poll(req, dt_dev_poll(dt_fe_softc(fi), ph) ?
	    POLLIN | POLLRDNORM : 0);
}

void
dt_fe_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct dt_softc *sc;
	struct dt_cred dc;
	int error;

	dt_fe_cred(req, &dc);
	error = dt_dev_open(&dc, &sc);
	if (error != 0) {
		(void)fuse_reply_err(req, error);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)sc;
	/* Records are not file data: no page cache, no offsets. */
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fi->keep_cache = 0;
	/*
	 * An open whose caller was killed meanwhile will never be
	 * released: undo it here.
	 */
	if (fuse_reply_open(req, fi) == -ENOENT)
		dt_dev_close(sc);
}

void
dt_fe_release(fuse_req_t req, struct fuse_file_info *fi)
{
	dt_dev_close(dt_fe_softc(fi));
	(void)fuse_reply_err(req, 0);
}

/*
 * The value of the line "name:\tHEX" of a /proc status text; false if
 * absent.
 */
static bool
dt_fe_sigmask(const char *status, const char *name, uint64_t *mask)
{
	size_t len = strlen(name);
	const char *p;

	for (p = status; p != NULL; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return sscanf(p + len + 1, "%" SCNx64, mask) == 1;
	}
	return false;
}

/*
 * Whether the signals pending for thread tid include one its process
 * catches and the thread does not block: the read it interrupted must
 * then end with EINTR.  When the status cannot be read (tid 0: a caller
 * in another pid namespace), true, dt(4)'s answer to a caught signal.
 *
 * Why: Linux sends FUSE's INTERRUPT for any signal that wakes the
 * reader, a stop (SIGSTOP, SIGTSTP, ...) too, and from then on the
 * reader waits, killable only, for dtd's answer, so it cannot even stop
 * before dtd replies.  OpenBSD's read sleeps with PCATCH: a stop does not
 * end it, a handler with SA_RESTART restarts it, and OpenBSD's btrace
 * dies of any other EINTR.  The kernel's own way to restart
 * (-ERESTARTSYS and its kin) is refused from a daemon: fs/fuse/dev.c
 * rejects errors <= -512 (commit "fuse: reject internal errno", Linux
 * 5.14).  What is left is to look at the signals: they stay pending
 * while the reader waits for the answer.  Linux shows which signals a
 * process catches (SigCgt), not their SA_RESTART flag, so a caught
 * signal ends the read with EINTR whatever its flags.  A signal taken
 * meanwhile by another thread leaves nothing pending here: no error then
 * either.  Loop thread.
 */
static bool
dt_fe_sig_caught(pid_t tid)
{
	char path[64], buf[8192];
	uint64_t pnd, shd, blk, ign, cgt;
	size_t len = 0;
	ssize_t n;
	int fd;

	if (tid <= 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return true;
	while (len < sizeof(buf) - 1 &&
	    (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	if (!dt_fe_sigmask(buf, "SigPnd", &pnd) ||
	    !dt_fe_sigmask(buf, "ShdPnd", &shd) ||
	    !dt_fe_sigmask(buf, "SigBlk", &blk) ||
	    !dt_fe_sigmask(buf, "SigIgn", &ign) ||
	    !dt_fe_sigmask(buf, "SigCgt", &cgt))
		return true;
	return ((pnd | shd) & ~blk & ~ign & cgt) != 0;
}

/*
 * libfuse's interrupt callback: req is alive for the whole call.  End
 * the read as the signal asks: EINTR for one the caller catches;
 * otherwise with the records ready, or none, so that a stopped reader
 * stops and, continued, finds its read(2) returned 0 and reads again.
 */
static void
dt_fe_interrupt(fuse_req_t req, void *arg)
{
	if (dt_fe_registering)
		return;
	/* false: the records won the race and were already replied. */
	(void)dt_dev_read_cancel(arg, req,
	    dt_fe_sig_caught(fuse_req_ctx(req)->pid) ? EINTR : 0);
}

void
dt_fe_read(fuse_req_t req, size_t size, size_t chunkmax,
    struct fuse_file_info *fi)
{
	struct dt_softc *sc = dt_fe_softc(fi);
	const size_t recsz = dt_dev_recsize();
	size_t slack = 4096;	/* an unaligned buffer pins one page less */

	if (size > DT_READ_MAX)
		size = DT_READ_MAX;
	if (slack > chunkmax / 2)
		slack = chunkmax / 2;
	if (size + slack > chunkmax && size >= recsz)
		size -= size % recsz;

	dt_fe_registering = true;
	fuse_req_interrupt_func(req, dt_fe_interrupt, sc);
	dt_fe_registering = false;
	/*
	 * Later interrupts are processed on this thread too, so none can
	 * slip in before dt_dev_read() parks the token.  One seen before
	 * this request will not come again: answer it here, as
	 * dt_fe_interrupt() would have.
	 */
	if (!fuse_req_interrupted(req)) {
		dt_dev_read(sc, size, req);
		return;
	}
	if (dt_fe_sig_caught(fuse_req_ctx(req)->pid)) {
		(void)fuse_reply_err(req, EINTR);
		return;
	}
	/*
	 * The records ready, or none.  req may be replied (and freed) by
	 * the time dt_dev_read() returns; the cancel only compares it with
	 * what is parked, and no new request can take its memory before
	 * this loop thread goes on.
	 */
	dt_dev_read(sc, size, req);
	(void)dt_dev_read_cancel(sc, req, 0);
}

int
dt_fe_loop(struct fuse_session *se, bool stream)
{
	struct fuse_buf fbuf = { .mem = NULL };
	struct signalfd_siginfo ssi;
	struct pollfd pfd[2];
	sigset_t set;
	int error = 0, res, sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd == -1)
		return errno;

	pfd[0].fd = fuse_session_fd(se);
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	while (!fuse_session_exited(se)) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			error = errno;
			break;
		}
		if (pfd[1].revents & POLLIN) {
			if (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
				break;
			continue;
		}
		if (pfd[0].revents == 0)
			continue;
		/*
		 * POLLERR too: the kernel ended the session (someone
		 * unmounted it); receive says so with 0.
		 */
		res = fuse_session_receive_buf(se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res < 0) {
			error = -res;
			break;
		}
		if (res == 0) {
			fprintf(stderr, "dtd: the kernel ended the FUSE "
			    "session (unmounted?)\n");
			error = ENOTCONN;
			break;
		}
		if (stream && dt_fe_stream_open(se, &fbuf, (size_t)res))
			continue;
		fuse_session_process_buf(se, &fbuf);
	}
	free(fbuf.mem);
	close(sfd);
	return error;
}
