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
 * The socket front end's requests, translated into the core's calls:
 * open, an ioctl (on a worker of the caller's uid, its pointed-to array
 * staged here and sent back), a read parked in the core under a token
 * and answered when it completes, its cancel, poll.  Thread rules per
 * function; the connection's fields as dt_fesock_conn.h says.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dt_fesock.h"
#include "dt_fesock_conn.h"
#include "dt_worker.h"
#include "dtd.h"

void
dt_fesock_read_done(void *token, const void *buf, size_t len, int error)
{
	struct fesock_rd *fr = (void *)((uintptr_t)token & ~DT_FESOCK_TAG);
	struct fesock_conn *fc = fr->fr_conn;
	struct udt_ds_hdr dh;

	pthread_mutex_lock(&fc->fc_mtx);
	dt_fesock_hdr(&dh, UDT_DS_READ | UDT_DS_REPLY, fr->fr_seq, error, 0,
	    error == 0 ? len : 0);
	fr->fr_busy = false;
	dt_fesock_put(fc, &dh, buf, error == 0 ? len : 0, NULL, 0);
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
	dt_fesock_hdr(&dh, UDT_DS_NOTIFY, 0, 0, 0, 0);
	dt_fesock_put(fc, &dh, NULL, 0, NULL, 0);
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
		dt_fesock_reply(fc, rq, ENOTTY, 0, NULL, 0, NULL, 0);
		return;
	}
	memset(&u, 0, sizeof(u));
	if (_IOC_DIR(canon) & _IOC_WRITE) {
		if ((rq->dh_flags & UDT_DS_FAULT) || rq->dh_len < (size_t)size) {
			dt_fesock_reply(fc, rq, EFAULT, 0, NULL, 0, NULL, 0);
			return;
		}
		memcpy(&u, payload, (size_t)size);
	}
	if (dt_ioctl_outbuf(canon, &u, &fs.fs_uaddr, &fs.fs_len) &&
	    (fs.fs_buf = calloc(1, fs.fs_len)) == NULL) {
		dt_fesock_reply(fc, rq, ENOMEM, 0, NULL, 0, NULL, 0);
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
		dt_fesock_reply(fc, rq, ENOMEM, 0, NULL, 0, NULL, 0);
		free(fs.fs_buf);
		return;
	}
	memcpy(out, &dr, sizeof(dr));
	memcpy(out + sizeof(dr), &u, argsz);
	if (error == 0 || fs.fs_high > 0)
		dt_fesock_reply_data(fc, rq, error, out, sizeof(dr) + argsz,
		    fs.fs_buf, fs.fs_high);
	else
		dt_fesock_reply(fc, rq, error, 0, NULL, 0, NULL, 0);
	free(out);
	free(fs.fs_buf);
}

/* An ioctl on its way to a worker, with its request copied. */
struct fesock_job {
	struct dt_work		 fj_work;
	struct fesock_conn	*fj_conn;
	struct dt_cred		 fj_dc;
	struct udt_ds_hdr	 fj_rq;
	unsigned char		 fj_payload[];
};

/* A worker of the caller's uid; dt_fesock_stop() stops them. */
static void
fesock_ioctl_run(struct dt_work *wk, bool cancel)
{
	struct fesock_job *fj = (struct fesock_job *)(void *)wk;
	struct fesock_conn *fc = fj->fj_conn;

	if (cancel)
		dt_fesock_reply(fc, &fj->fj_rq, EIO, 0, NULL, 0, NULL, 0);
	else
		fesock_ioctl(fc, &fj->fj_rq, fj->fj_payload, &fj->fj_dc);
	free(fj);
	dt_fesock_job_done(fc);
}

/* IOCTL: to a worker of the caller's uid.  Loop thread. */
static void
fesock_ioctl_queue(struct fesock_conn *fc, const struct udt_ds_hdr *rq,
    const unsigned char *payload, const struct dt_cred *dc)
{
	struct fesock_job *fj;
	int error;

	if ((fj = malloc(sizeof(*fj) + rq->dh_len)) == NULL) {
		dt_fesock_reply(fc, rq, ENOMEM, 0, NULL, 0, NULL, 0);
		return;
	}
	fj->fj_work.wk_fn = fesock_ioctl_run;
	fj->fj_conn = fc;
	fj->fj_dc = *dc;
	fj->fj_rq = *rq;
	memcpy(fj->fj_payload, payload, rq->dh_len);
	pthread_mutex_lock(&fc->fc_mtx);
	fc->fc_jobs++;
	pthread_mutex_unlock(&fc->fc_mtx);
	if ((error = dt_wq_submit(dt_fesock_wq, (uint32_t)dc->dc_uid,
	    &fj->fj_work)) != 0) {
		pthread_mutex_lock(&fc->fc_mtx);
		fc->fc_jobs--;
		pthread_mutex_unlock(&fc->fc_mtx);
		free(fj);
		/* Too many of this user's ioctls wait already. */
		dt_fesock_reply(fc, rq, error == EAGAIN ? EAGAIN : EIO, 0, NULL,
		    0, NULL, 0);
	}
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
		dt_fesock_reply(fc, rq, EAGAIN, 0, NULL, 0, NULL, 0);
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
void
dt_fesock_request(struct fesock_conn *fc, const struct udt_ds_hdr *rq,
    const unsigned char *payload)
{
	struct dt_cred dc = fc->fc_incred;
	bool ready;
	int error;

	/* A frame sent in parts by two processes is nobody's. */
	if (fc->fc_inmixed) {
		dt_fesock_reply(fc, rq, EPERM, 0, NULL, 0, NULL, 0);
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
		dt_fesock_reply(fc, rq, error, 0, NULL, 0, NULL, 0);
		return;
	}
	if (fc->fc_sc == NULL) {
		if (rq->dh_op != UDT_DS_CANCEL)
			dt_fesock_reply(fc, rq, EBADF, 0, NULL, 0, NULL, 0);
		return;
	}
	switch (rq->dh_op) {
	case UDT_DS_IOCTL:
		fesock_ioctl_queue(fc, rq, payload, &dc);
		break;
	case UDT_DS_READ:
		if (rq->dh_len != 0)
			dt_fesock_reply(fc, rq, EINVAL, 0, NULL, 0, NULL, 0);
		else
			fesock_read(fc, rq);
		break;
	case UDT_DS_POLL:
		ready = dt_dev_poll(fc->fc_sc, (rq->dh_flags & UDT_DS_ARM) ?
		    (void *)((uintptr_t)fc | DT_FESOCK_TAG) : NULL);
		dt_fesock_reply(fc, rq, 0, ready, NULL, 0, NULL, 0);
		break;
	case UDT_DS_CANCEL:
		fesock_cancel(fc, (uint32_t)rq->dh_arg);
		break;
	default:
		dt_fesock_reply(fc, rq, EOPNOTSUPP, 0, NULL, 0, NULL, 0);
		break;
	}
}
