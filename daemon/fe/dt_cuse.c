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
 * The CUSE front end: a real character device, created by the kernel's
 * cuse module under /dev.
 *
 * Ioctls are unrestricted, so nothing is copied until dtd asks, in
 * rounds of fuse_reply_ioctl_retry():
 *   round 1  the argument struct: in if dt(4) copies it in (IOC_IN),
 *            out if it copies it back (IOC_OUT); the first request of an
 *            unrestricted ioctl carries neither, whatever the encoding;
 *   round 2  DTIOCGPLIST and DTIOCGARGS with a non-zero size only: the
 *            buffer behind the embedded pointer joins the out iov;
 *   last     the core runs; what it writes through the embedded pointer
 *            is staged and sent after the struct in one reply.
 * The kernel moves at most CUSE_IOCTL_MAX bytes in an ioctl's rounds
 * (its max_pages, 32 pages for CUSE) and fails a bigger retry with
 * ENOMEM before we see it: a probe list longer than that (the kprobe
 * provider's 50000 probes) skips round 2 and is written into the caller
 * with process_vm_writev(), as the FUSE-file front end writes all.  That
 * write may wait, unkillably, on a caller whose buffer is backed by a
 * FUSE file it serves itself: it runs, with the ioctl, on a worker of
 * the caller's uid (dt_worker.h), so only that user's later big lists
 * wait, and the loop goes on serving everyone.
 * The core's answer is in the last request, built from that request's
 * own copy of the struct, so a caller that changes its struct between
 * rounds only gets another round.
 *
 * Concurrency: every callback runs on the one loop thread; only read
 * completions arrive from elsewhere (dt_fe.c).
 */
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_fe.h"
#include <cuse_lowlevel.h>
#include "dt_worker.h"
#include "dtd.h"

/* libfuse's CUSE_INIT answers max_read 128 KiB; the kernel's default too. */
#define CUSE_CHUNK_MAX		(128 * 1024)
#define CUSE_NODE_WAIT_MS	5000	/* for udev to create the node */
#define CUSE_IOCTL_MAX		(32 * 4096)	/* the kernel's, per ioctl */
#define CUSE_JOBS_UID		8	/* big lists of one uid waiting */

/* Loop thread only. */
static struct fuse_session	*cuse_se;
static int			 cuse_error;	/* startup failure */
static struct dt_wq		*cuse_wq;	/* [I] after setup */

/* Where the core's copy-out through the embedded pointer lands. */
struct cuse_stage {
	uint64_t	 cs_uaddr;	/* caller's buffer */
	size_t		 cs_len;	/* its size, as retried */
	size_t		 cs_used;	/* bytes from cs_uaddr on written */
	unsigned char	*cs_buf;
};

static int
cuse_copyout(void *arg, uint64_t uaddr, const void *src, size_t len)
{
	struct cuse_stage *cs = arg;
	uint64_t off;

	if (len == 0)
		return 0;
	/* Only the buffer the kernel was told about can be written. */
	if (uaddr < cs->cs_uaddr)
		return EFAULT;
	off = uaddr - cs->cs_uaddr;
	if (off > cs->cs_len || len > cs->cs_len - off)
		return EFAULT;
	memcpy(cs->cs_buf + off, src, len);
	if (off + len > cs->cs_used)
		cs->cs_used = off + len;
	return 0;
}

/* A staged buffer too big for the kernel's rounds, into tid's memory. */
static int
cuse_poke(pid_t tid, const struct cuse_stage *cs)
{
	struct iovec liov = { cs->cs_buf, cs->cs_used };
	struct iovec riov = { (void *)(uintptr_t)cs->cs_uaddr, cs->cs_used };

	if (cs->cs_used == 0)
		return 0;
	/* 0: a caller in another pid namespace, which we cannot reach. */
	if (tid <= 0)
		return EFAULT;
	if (process_vm_writev(tid, &liov, 1, &riov, 1, 0) !=
	    (ssize_t)cs->cs_used)
		return EFAULT;
	return 0;
}

/* An ioctl whose staged buffer goes by cuse_poke(), on a worker. */
struct cuse_job {
	struct dt_work		 cj_work;
	fuse_req_t		 cj_req;
	struct dt_softc		*cj_sc;
	struct dt_cred		 cj_dc;
	int			 cj_cmd;
	size_t			 cj_argsz;
	size_t			 cj_need_out;
	struct cuse_stage	 cj_cs;
	union dt_ioctl_arg	 cj_u, cj_orig;
};

/*
 * The ioctl, the write into the caller and the reply; cancelled at stop
 * with EIO.  A worker of the caller's uid; the softc stays, as the
 * caller's ioctl holds its file until the reply.
 */
static void
cuse_ioctl_direct(struct dt_work *wk, bool cancel)
{
	struct cuse_job *cj = (struct cuse_job *)(void *)wk;
	struct dt_uaccess ua;
	struct iovec iov;
	int error;

	if (cancel) {
		(void)fuse_reply_err(cj->cj_req, EIO);
		goto out;
	}
	ua.ua_copyout = cuse_copyout;
	ua.ua_arg = &cj->cj_cs;
	error = dt_dev_ioctl(cj->cj_sc, &cj->cj_dc, (unsigned int)cj->cj_cmd,
	    &cj->cj_u, &ua);
	if (cuse_poke(cj->cj_dc.dc_pid, &cj->cj_cs) != 0)
		error = EFAULT;
	if (error == 0) {
		iov.iov_base = &cj->cj_u;
		iov.iov_len = cj->cj_need_out;
		(void)fuse_reply_ioctl_iov(cj->cj_req, 0, &iov, 1);
	} else {
		/* As below: the caller's own struct, with the error. */
		iov.iov_base = &cj->cj_orig;
		iov.iov_len = cj->cj_argsz;
		(void)fuse_reply_ioctl_iov(cj->cj_req, -error, &iov, 1);
	}
out:
	free(cj->cj_cs.cs_buf);
	free(cj);
}

static void
cuse_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
    unsigned int flags, const void *in_buf, size_t in_bufsz,
    size_t out_bufsz)
{
	union dt_ioctl_arg u, orig;
	struct cuse_stage cs = { 0, 0, 0, NULL };
	struct iovec in_iov, out_iov[2], iov[2];
	struct dt_uaccess ua;
	struct dt_cred dc;
	struct cuse_job *cj;
	unsigned long canon;
	size_t argsz, need_in, need_out;
	uint64_t ubuf;
	size_t ulen;
	bool copyin, copyout, hasbuf, direct;
	int error, size;

	if (flags & FUSE_IOCTL_COMPAT) {
		(void)fuse_reply_err(req, ENOSYS);
		return;
	}
	size = dt_ioctl_argsize((unsigned int)cmd, &canon);
	if (size < 0 || (size_t)size > sizeof(u)) {
		(void)fuse_reply_err(req, ENOTTY);
		return;
	}
	argsz = (size_t)size;
	copyin = (_IOC_DIR(canon) & _IOC_WRITE) != 0;
	copyout = (_IOC_DIR(canon) & _IOC_READ) != 0;
	in_iov.iov_base = arg;
	in_iov.iov_len = argsz;
	out_iov[0] = in_iov;

	/* Round 1: the struct. */
	need_in = copyin ? argsz : 0;
	need_out = copyout ? argsz : 0;
	if (in_bufsz < need_in || out_bufsz < need_out) {
		(void)fuse_reply_ioctl_retry(req, &in_iov, copyin ? 1 : 0,
		    out_iov, copyout ? 1 : 0);
		return;
	}
	/* IOC_OUT only (DTIOCGSTATS): the driver sees zeroes. */
	memset(&u, 0, sizeof(u));
	if (copyin)
		memcpy(&u, in_buf, argsz);
	orig = u;

	/* Round 2: the buffer behind the embedded pointer. */
	hasbuf = dt_ioctl_outbuf(canon, &u, &ubuf, &ulen);
	direct = hasbuf && ulen > CUSE_IOCTL_MAX - argsz;
	if (hasbuf && !direct && out_bufsz != argsz + ulen) {
		out_iov[1].iov_base = (void *)(uintptr_t)ubuf;
		out_iov[1].iov_len = ulen;
		(void)fuse_reply_ioctl_retry(req, &in_iov, 1, out_iov, 2);
		return;
	}
	if (hasbuf) {
		cs.cs_uaddr = ubuf;
		cs.cs_len = ulen;
		cs.cs_buf = calloc(1, ulen);
		if (cs.cs_buf == NULL) {
			(void)fuse_reply_err(req, ENOMEM);
			return;
		}
	}

	dt_fe_cred(req, &dc);
	if (direct) {
		if ((cj = calloc(1, sizeof(*cj))) == NULL) {
			free(cs.cs_buf);
			(void)fuse_reply_err(req, ENOMEM);
			return;
		}
		cj->cj_work.wk_fn = cuse_ioctl_direct;
		cj->cj_req = req;
		cj->cj_sc = dt_fe_softc(fi);
		cj->cj_dc = dc;
		cj->cj_cmd = cmd;
		cj->cj_argsz = argsz;
		cj->cj_need_out = need_out;
		cj->cj_cs = cs;
		cj->cj_u = u;
		cj->cj_orig = orig;
		if ((error = dt_wq_submit(cuse_wq, (uint32_t)dc.dc_uid,
		    &cj->cj_work)) != 0) {
			free(cs.cs_buf);
			free(cj);
			(void)fuse_reply_err(req, error);
		}
		return;
	}
	ua.ua_copyout = cuse_copyout;
	ua.ua_arg = &cs;
	error = dt_dev_ioctl(dt_fe_softc(fi), &dc, (unsigned int)cmd, &u, &ua);

	if (error == 0) {
		iov[0].iov_base = &u;
		iov[0].iov_len = need_out;
		iov[1].iov_base = cs.cs_buf;
		iov[1].iov_len = cs.cs_used;
		(void)fuse_reply_ioctl_iov(req, 0, iov, cs.cs_used ? 2 : 1);
	} else if (cs.cs_used > 0) {
		/*
		 * DTIOCGPLIST's ENOSPC: dt(4) leaves the entries it copied
		 * and the struct as it was.  The kernel copies reply data
		 * before it returns a negative result, and the data must
		 * start with the struct: send the caller's own back.
		 */
		iov[0].iov_base = &orig;
		iov[0].iov_len = argsz;
		iov[1].iov_base = cs.cs_buf;
		iov[1].iov_len = cs.cs_used;
		(void)fuse_reply_ioctl_iov(req, -error, iov, cs.cs_used ? 2 : 1);
	} else
		(void)fuse_reply_err(req, error);
	free(cs.cs_buf);
}

static void
cuse_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	/*
	 * The kernel counts off from 0 in every read(2): a later chunk of
	 * a read bigger than one request.  dt_fe_read() makes the first
	 * one short, so this only happens when the kernel's limit is below
	 * ours; end the read(2) with what the first chunk got.
	 */
	if (off > 0) {
		(void)fuse_reply_buf(req, NULL, 0);
		return;
	}
	dt_fe_read(req, size, CUSE_CHUNK_MAX, fi);
}

static void
cuse_write(fuse_req_t req, const char *buf, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	(void)buf;
	(void)size;
	(void)off;
	(void)fi;
	/* dt(4) has no write entry point. */
	(void)fuse_reply_err(req, ENODEV);
}

/*
 * Wait up to CUSE_NODE_WAIT_MS for path to exist as a character device:
 * devtmpfs creates it before our CUSE_INIT reply returns, udev later.
 */
static int
cuse_wait_node(const char *path)
{
	char dir[PATH_MAX], *slash;
	struct timespec t0, t;
	struct pollfd pfd;
	struct stat st;
	char evbuf[4096];
	long left;
	int ifd, error = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir)
		*slash = '\0';
	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd != -1 && inotify_add_watch(ifd, dir, IN_CREATE | IN_ATTRIB |
	    IN_MOVED_TO) == -1) {
		close(ifd);
		ifd = -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (stat(path, &st) == 0) {
			if (S_ISCHR(st.st_mode))
				break;
			error = EEXIST;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = CUSE_NODE_WAIT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			error = ETIMEDOUT;
			break;
		}
		/* Without inotify, look again every 50 ms. */
		pfd.fd = ifd;
		pfd.events = POLLIN;
		if (poll(&pfd, ifd == -1 ? 0 : 1, ifd == -1 && left > 50 ?
		    50 : (int)left) > 0)
			while (read(ifd, evbuf, sizeof(evbuf)) > 0)
				continue;
	}
	if (ifd != -1)
		close(ifd);
	return error;
}

/* After the kernel took our CUSE_INIT reply: set the node's policy. */
static void
cuse_init_done(void *userdata)
{
	const char *path = dtd_conf.dcf_device;
	gid_t gid = dtd_dev_gid();
	mode_t mode = dtd_dev_mode();
	int error;

	(void)userdata;
	error = cuse_wait_node(path);
	if (error != 0) {
		fprintf(stderr, "dtd: %s: %s\n", path, error == ETIMEDOUT ?
		    "the CUSE device node did not appear (name taken?)" :
		    "is not the character device CUSE created");
		goto fail;
	}
	if (chown(path, 0, gid) == -1 || chmod(path, mode) == -1) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s\n", path, strerror(error));
		goto fail;
	}
	dtd_ready();
	return;
fail:
	cuse_error = error;
	fuse_session_exit(cuse_se);
}

static const struct cuse_lowlevel_ops cuse_ops = {
	.init_done	= cuse_init_done,
	.open		= dt_fe_open,
	.read		= cuse_read,
	.write		= cuse_write,
	.release	= dt_fe_release,
	.ioctl		= cuse_ioctl,
	.poll		= dt_fe_poll,
};

/*
 * Whether the CUSE front end can make path: under /dev, with a CUSE in
 * the kernel, and nothing there yet (a live dtd's device, or a file that
 * is not ours).  Looks only; main thread.  0, or an errno and the
 * message.
 */
int
dt_cuse_check(const char *path)
{
	struct stat st;
	int error;

	if (strncmp(path, "/dev/", 5) != 0 || path[5] == '\0') {
		fprintf(stderr, "dtd: %s: the CUSE front end creates devices "
		    "under /dev only\n", path);
		return EINVAL;
	}
	if (access("/dev/cuse", R_OK | W_OK) == -1) {
		error = errno;
		fprintf(stderr, "dtd: /dev/cuse: %s: this kernel has no CUSE "
		    "(try --frontend fuse)\n", strerror(error));
		return error;
	}
	if (stat(path, &st) == 0 || errno != ENOENT) {
		fprintf(stderr, "dtd: %s already exists: is another dtd "
		    "running?\n", path);
		return EEXIST;
	}
	return 0;
}

int
dt_cuse_main(void)
{
	char devname[PATH_MAX + 16];
	const char *devinfo[] = { devname };
	char *argv[] = { "dtd", "-f", "-s", NULL };
	const char *path = dtd_conf.dcf_device;
	struct cuse_info ci;
	unsigned int stuck;
	int error, mt;

	/* Again: another dtd may have come since dtd_claim_check(). */
	if ((error = dt_cuse_check(path)) != 0)
		return error;
	snprintf(devname, sizeof(devname), "DEVNAME=%s", path + 5);

	memset(&ci, 0, sizeof(ci));
	ci.dev_info_argc = 1;
	ci.dev_info_argv = devinfo;
	ci.flags = CUSE_UNRESTRICTED_IOCTL;
	/* -f: dtd daemonises itself; -s: ours is a single-threaded loop. */
	if ((cuse_wq = dt_wq_new("dtd-ioctl", CUSE_JOBS_UID)) == NULL)
		return ENOMEM;
	cuse_se = cuse_lowlevel_setup(3, argv, &ci, &cuse_ops, &mt, NULL);
	if (cuse_se == NULL) {
		fprintf(stderr, "dtd: cannot set up the CUSE device %s\n",
		    path);
		dt_wq_free(cuse_wq);
		return EIO;
	}

	error = dt_fe_loop(cuse_se, false);
	if (cuse_error != 0)
		error = cuse_error;
	/*
	 * A worker stuck in a caller's memory is left behind: its reply
	 * would go to a session about to be torn down (dt_fusefile_main()
	 * does the same).
	 */
	stuck = dt_wq_stop(cuse_wq, 1000);
	if (stuck != 0)
		fprintf(stderr, "dtd: %u ioctl%s still wait%s on the caller's "
		    "memory\n", stuck, stuck == 1 ? "" : "s",
		    stuck == 1 ? "s" : "");

	/* Parked reads get EIO while the session still carries replies. */
	dtd_teardown();
	/*
	 * Closing /dev/cuse removes the device.  A stuck worker would reply
	 * into a freed session: leave it to the exit, which closes it too.
	 */
	if (stuck == 0)
		cuse_lowlevel_teardown(cuse_se);
	cuse_se = NULL;
	dt_wq_free(cuse_wq);
	return error;
}
