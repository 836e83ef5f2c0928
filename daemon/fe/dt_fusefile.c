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
 * The FUSE-file front end, for kernels without CUSE: a lowlevel FUSE
 * filesystem whose root inode is a regular file, mounted over a regular
 * file at the device path.  open, read, ioctl and close on that path
 * reach dtd like on a character device.
 *
 * Plain FUSE ioctls are restricted: the kernel copies the argument only
 * as the Linux direction bits and size say and cannot be asked for more.
 * So dtd, as root, reads and writes the caller's memory itself through
 * process_vm_readv/writev, with the calling thread's id from the request;
 * that also serves the OpenBSD encoding, whose direction bits the kernel
 * reads backwards, and the pointers embedded in DTIOCGPLIST/DTIOCGARGS.
 * Without root (dtd_unpriv.c) the callers are dtd's own user's
 * processes, whose memory it may reach the same way; libfuse mounts
 * through the set-uid fusermount3 then.
 *
 * Concurrency: every callback runs on the one loop thread; read
 * completions arrive from elsewhere (dt_fe.c), and ioctls run and reply
 * on a worker of their caller's uid (fusefile_ioctl()).
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_fe.h"
#include "dt_path.h"
#include "dt_worker.h"
#include "dtd.h"

#define FUSEFILE_ATTR_TIMEOUT	3600.0	/* the attributes never change */

static time_t	fusefile_mtime;		/* [I] when dtd started serving */

/* The caller's memory, as its thread tid sees it.  0 or EFAULT. */
static int
fusefile_peek(pid_t tid, uint64_t uaddr, void *dst, size_t len)
{
	struct iovec liov = { dst, len };
	struct iovec riov = { (void *)(uintptr_t)uaddr, len };

	if (len == 0)
		return 0;
	/* 0: a caller in another pid namespace, which we cannot reach. */
	if (tid <= 0)
		return EFAULT;
	if (process_vm_readv(tid, &liov, 1, &riov, 1, 0) != (ssize_t)len)
		return EFAULT;
	return 0;
}

static int
fusefile_poke(pid_t tid, uint64_t uaddr, const void *src, size_t len)
{
	struct iovec liov = { (void *)(uintptr_t)src, len };
	struct iovec riov = { (void *)(uintptr_t)uaddr, len };

	if (len == 0)
		return 0;
	if (tid <= 0)
		return EFAULT;
	/* A short write means part of the range is not writable. */
	if (process_vm_writev(tid, &liov, 1, &riov, 1, 0) != (ssize_t)len)
		return EFAULT;
	return 0;
}

/* dt_uaccess for the embedded pointers: ua_arg is the caller's tid. */
static int
fusefile_copyout(void *arg, uint64_t uaddr, const void *src, size_t len)
{
	return fusefile_poke(*(pid_t *)arg, uaddr, src, len);
}

static void
fusefile_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSE_ROOT_ID;
	st->st_nlink = 1;
	st->st_uid = dtd_dev_uid();
	/* default_permissions makes the kernel enforce exactly this. */
	st->st_gid = dtd_dev_gid();
	st->st_mode = S_IFREG | dtd_dev_mode();
	st->st_atime = st->st_mtime = st->st_ctime = fusefile_mtime;
}

static void
fusefile_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/*
	 * One read(2) of up to DT_READ_MAX must arrive as one request: a
	 * second chunk would block although the first returned records.
	 * libfuse sizes max_pages from max_write.
	 */
	conn->max_read = DT_READ_MAX;
	conn->max_write = DT_READ_MAX;
}

static void
fusefile_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		(void)fuse_reply_err(req, ENOENT);
		return;
	}
	fusefile_stat(&st);
	(void)fuse_reply_attr(req, &st, FUSEFILE_ATTR_TIMEOUT);
}

static void
fusefile_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
    int to_set, struct fuse_file_info *fi)
{
	struct stat st;

	(void)ino;
	(void)attr;
	(void)fi;
	/* The mode is dtd's --group policy: not for chmod to change. */
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
	    FUSE_SET_ATTR_GID)) {
		(void)fuse_reply_err(req, EPERM);
		return;
	}
	/* O_TRUNC and touch on a character device are no-ops. */
	fusefile_stat(&st);
	(void)fuse_reply_attr(req, &st, FUSEFILE_ATTR_TIMEOUT);
}

static void
fusefile_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	dt_fe_open(req, fi);
}

static void
fusefile_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi)
{
	(void)ino;
	(void)off;
	dt_fe_read(req, size, DT_READ_MAX, fi);
}

static void
fusefile_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
    off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)buf;
	(void)size;
	(void)off;
	(void)fi;
	/* dt(4) has no write entry point. */
	(void)fuse_reply_err(req, ENODEV);
}

static void
fusefile_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
    struct fuse_pollhandle *ph)
{
	(void)ino;
	dt_fe_poll(req, fi, ph);
}

static void
fusefile_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	dt_fe_release(req, fi);
}

/*
 * An ioctl whose copies reach into its caller's memory: a page there may
 * be one of the caller's own FUSE mount whose read never answers, and
 * process_vm_readv/writev then waits, unkillably, until it does.  So the
 * copies and the ioctl run on a worker of the caller's uid (dt_worker.h)
 * and reply from there (libfuse's replies are thread-safe): one caller's
 * stall delays only its own user's later ioctls, and the loop goes on
 * serving everyone else.
 */
struct fusefile_job {
	struct dt_work		 fj_work;
	fuse_req_t		 fj_req;
	struct dt_softc		*fj_sc;
	struct dt_cred		 fj_dc;
	unsigned int		 fj_cmd;
	unsigned long		 fj_canon;
	uint64_t		 fj_uarg;
	size_t			 fj_argsz;
	size_t			 fj_outbufsz;
	bool			 fj_in;		/* the kernel copied it in */
	union dt_ioctl_arg	 fj_u;
};

#define FUSEFILE_JOBS_UID	64	/* ioctls of one uid waiting */

static struct dt_wq	*fusefile_wq;	/* [I] */

/* A worker of the caller's uid; dt_fusefile_main() stops them. */
static void
fusefile_ioctl_run(struct dt_work *wk, bool cancel)
{
	struct fusefile_job *fj = (struct fusefile_job *)(void *)wk;
	union dt_ioctl_arg *u = &fj->fj_u;
	struct dt_uaccess ua;
	size_t outsz;
	int error;

	if (cancel) {
		(void)fuse_reply_err(fj->fj_req, EIO);
		goto out;
	}
	/*
	 * The argument as OpenBSD's sys_ioctl() hands it to the driver:
	 * copied in for IOC_IN, zeroes for a pure IOC_OUT.  The kernel has
	 * already copied it when the Linux bits agree with ours.
	 */
	if ((_IOC_DIR(fj->fj_canon) & _IOC_WRITE) && !fj->fj_in &&
	    fusefile_peek(fj->fj_dc.dc_pid, fj->fj_uarg, u, fj->fj_argsz) !=
	    0) {
		(void)fuse_reply_err(fj->fj_req, EFAULT);
		goto out;
	}

	ua.ua_copyout = fusefile_copyout;
	ua.ua_arg = &fj->fj_dc.dc_pid;
	error = dt_dev_ioctl(fj->fj_sc, &fj->fj_dc, fj->fj_cmd, u, &ua);
	if (error != 0) {
		/* No copy-out on error, as dt(4). */
		(void)fuse_reply_err(fj->fj_req, error);
		goto out;
	}

	/*
	 * Copy out only for IOC_OUT, so a request in read-only memory
	 * works.  Write it ourselves, and hand the same bytes to the kernel
	 * when it also copies out (its copy runs after ours and wins).
	 */
	outsz = 0;
	if (_IOC_DIR(fj->fj_canon) & _IOC_READ) {
		if (fusefile_poke(fj->fj_dc.dc_pid, fj->fj_uarg, u,
		    fj->fj_argsz) != 0) {
			(void)fuse_reply_err(fj->fj_req, EFAULT);
			goto out;
		}
		outsz = fj->fj_outbufsz < fj->fj_argsz ? fj->fj_outbufsz :
		    fj->fj_argsz;
	}
	(void)fuse_reply_ioctl(fj->fj_req, 0, outsz ? u : NULL, outsz);
out:
	free(fj);
}

static void
fusefile_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
    struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
    size_t in_bufsz, size_t out_bufsz)
{
	struct fusefile_job *fj;
	unsigned long canon;
	int error, size;

	(void)ino;
	size = dt_ioctl_argsize(cmd, &canon);
	if (size < 0 || (size_t)size > sizeof(fj->fj_u)) {
		(void)fuse_reply_err(req, ENOTTY);
		return;
	}
	if (flags & FUSE_IOCTL_COMPAT) {
		(void)fuse_reply_err(req, ENOSYS);
		return;
	}
	if ((fj = calloc(1, sizeof(*fj))) == NULL) {
		(void)fuse_reply_err(req, ENOMEM);
		return;
	}
	fj->fj_req = req;
	fj->fj_sc = dt_fe_softc(fi);
	dt_fe_cred(req, &fj->fj_dc);
	fj->fj_cmd = cmd;
	fj->fj_canon = canon;
	fj->fj_uarg = (uint64_t)(uintptr_t)arg;
	fj->fj_argsz = (size_t)size;
	fj->fj_outbufsz = out_bufsz;
	if ((_IOC_DIR(canon) & _IOC_WRITE) && in_bufsz >= fj->fj_argsz) {
		memcpy(&fj->fj_u, in_buf, fj->fj_argsz);
		fj->fj_in = true;
	}
	fj->fj_work.wk_fn = fusefile_ioctl_run;
	/*
	 * The softc stays: the caller's ioctl holds its file until the
	 * reply, so no RELEASE of it comes before.
	 */
	if ((error = dt_wq_submit(fusefile_wq, (uint32_t)fj->fj_dc.dc_uid,
	    &fj->fj_work)) != 0) {
		free(fj);
		/* Too many of this user's ioctls wait already. */
		(void)fuse_reply_err(req, error == EAGAIN ? EAGAIN : EIO);
	}
}

static const struct fuse_lowlevel_ops fusefile_ops = {
	.init		= fusefile_init,
	.getattr	= fusefile_getattr,
	.setattr	= fusefile_setattr,
	.open		= fusefile_open,
	.read		= fusefile_read,
	.write		= fusefile_write,
	.release	= fusefile_release,
	.ioctl		= fusefile_ioctl,
	.poll		= fusefile_poll,
};

/*
 * The device path, held by descriptors from the moment it is checked:
 * the directory and the file itself, so that neither the mount nor the
 * removal at the end goes through a name someone may have changed since.
 */
struct fusefile_path {
	int	 fp_dirfd;		/* O_PATH, the parent directory */
	int	 fp_fd;			/* O_PATH, the file mounted over */
	char	 fp_base[NAME_MAX + 1];	/* its name in fp_dirfd */
	bool	 fp_created;		/* we made it: remove it at the end */
	char	 fp_mnt[64];		/* /proc/self/fd/N of fp_fd */
};

/*
 * The file a dtd creates at the device path, by its marks: root's, empty,
 * one link, mode 0.  Nobody opens it through its own permissions (the
 * mount covers it), and no administrator's file looks like that.
 */
#define FUSEFILE_OURS(st)						\
	(S_ISREG((st)->st_mode) && ((st)->st_mode & 07777) == 0 &&	\
	    (st)->st_uid == 0 && (st)->st_size == 0 && (st)->st_nlink == 1)

/* Split path into its directory (opened) and last component. */
static int
fusefile_open_dir(const char *path, struct fusefile_path *fp)
{
	char dir[PATH_MAX];
	struct stat st;
	int error;

	if ((error = dt_path_split(path, dir, sizeof(dir), fp->fp_base,
	    sizeof(fp->fp_base))) != 0) {
		fprintf(stderr, "dtd: %s: %s\n", path, error == EINVAL ?
		    "not a file name" : strerror(error));
		return error;
	}
	/* The directories on the way are the operator's to choose. */
	fp->fp_dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fp->fp_dirfd == -1 || fstat(fp->fp_dirfd, &st) == -1) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s\n", dir, strerror(error));
		return error;
	}
	if (!dt_dir_safe(&st)) {
		fprintf(stderr, "dtd: %s: refusing a device in a directory "
		    "others can write (owner %d, mode %04o; it must be "
		    "root's, and sticky if others may write it)\n", dir,
		    (int)st.st_uid, (unsigned)(st.st_mode & 07777));
		return EPERM;
	}
	return 0;
}

/*
 * A user's stale mount: only the set-uid fusermount3 may take it down
 * (lazily, as umount2 above).  0 or an errno.
 */
static int
fusefile_user_umount(const char *path)
{
	char *argv[] = { "fusermount3", "-u", "-z", "--", (char *)path,
	    NULL };
	extern char **environ;
	int status;
	pid_t pid;

	if ((errno = posix_spawnp(&pid, argv[0], NULL, NULL, argv,
	    environ)) != 0)
		return errno;
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : EPERM;
}

/*
 * What at the device path (st, in the directory dst) the front end
 * refuses as it stands: a live dtd's mount, a symbolic link, anything
 * but a regular file (a CUSE dtd's device, say).  0, or an errno and the
 * message.
 */
static int
fusefile_refuse(const char *path, const struct stat *st,
    const struct stat *dst)
{
	if (st->st_dev != dst->st_dev) {
		fprintf(stderr, "dtd: %s is already served (a mount point): "
		    "is another dtd running?\n", path);
		return EBUSY;
	}
	if (S_ISLNK(st->st_mode)) {
		fprintf(stderr, "dtd: %s is a symbolic link; refusing to "
		    "follow it (the device would hide its target)\n", path);
		return ELOOP;
	}
	if (!S_ISREG(st->st_mode)) {
		fprintf(stderr, "dtd: %s exists and is not a regular file; "
		    "the FUSE-file front end mounts over a regular file\n",
		    path);
		return EEXIST;
	}
	return 0;
}

/*
 * Whether the front end can take path as it stands, by looks alone: the
 * refusal dtd makes before it starts anything (dtd_claim_check()).  A
 * dead dtd's mount is not refused here, fusefile_prepare() takes it
 * down.  0, or an errno and the message.
 */
int
dt_fusefile_check(const char *path)
{
	struct fusefile_path fp = { .fp_dirfd = -1, .fp_fd = -1 };
	struct stat st, dst;
	struct statx stx;
	int error;

	if ((error = fusefile_open_dir(path, &fp)) == 0 &&
	    fstat(fp.fp_dirfd, &dst) == 0 &&
	    /* Past the attribute cache, as fusefile_prepare(). */
	    statx(fp.fp_dirfd, fp.fp_base, AT_SYMLINK_NOFOLLOW |
	    AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &stx) == 0 &&
	    fstatat(fp.fp_dirfd, fp.fp_base, &st, AT_SYMLINK_NOFOLLOW) == 0)
		error = fusefile_refuse(path, &st, &dst);
	if (fp.fp_dirfd != -1)
		close(fp.fp_dirfd);
	return error;
}

/*
 * Make path ready to be mounted over: clean up the mount a killed dtd
 * left (the kernel answers ENOTCONN on it), refuse a path a live dtd
 * serves, create the file if absent.  Never follows a symbolic link at
 * the last component, and refuses a file that is not root's: dtd would
 * otherwise lay its mount over whatever someone planted there.  0 or an
 * errno, with the message printed.
 */
static int
fusefile_prepare(const char *path, struct fusefile_path *fp)
{
	char self[64 + NAME_MAX];
	struct stat st, dst, fst;
	struct statx stx;
	int error;

	if ((error = fusefile_open_dir(path, fp)) != 0)
		return error;
	(void)fstat(fp->fp_dirfd, &dst);
	/* Names below go through the directory we checked, not path. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d/%s", fp->fp_dirfd,
	    fp->fp_base);
	/*
	 * Forced past the attribute cache: a dead dtd's mount keeps
	 * answering stat(2) from attributes cached for an hour, and only
	 * a request that reaches the connection says ENOTCONN.
	 */
	if (statx(fp->fp_dirfd, fp->fp_base, AT_SYMLINK_NOFOLLOW |
	    AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &stx) == -1 &&
	    errno == ENOTCONN) {
		fprintf(stderr, "dtd: %s: removing the stale mount of a dead "
		    "dtd\n", path);
		if (dtd_conf.dcf_unpriv)
			error = fusefile_user_umount(path);
		else if (umount2(self, MNT_DETACH | UMOUNT_NOFOLLOW) == -1)
			error = errno;
		else
			error = 0;
		if (error != 0) {
			fprintf(stderr, "dtd: %s: cannot unmount: %s\n", path,
			    strerror(error));
			return error;
		}
	}
	if (fstatat(fp->fp_dirfd, fp->fp_base, &st, AT_SYMLINK_NOFOLLOW) ==
	    -1) {
		error = errno;
		if (error != ENOENT) {
			fprintf(stderr, "dtd: %s: %s\n", path,
			    strerror(error));
			return error;
		}
		/*
		 * O_EXCL: a name planted meanwhile fails, never followed.
		 * Mode 0 marks it as a dtd's (FUSEFILE_OURS()); the mount's
		 * own attributes are what callers see.  Without root the
		 * set-uid fusermount3 opens it as our user first: ours, 0600.
		 */
		fp->fp_fd = openat(fp->fp_dirfd, fp->fp_base, O_WRONLY |
		    O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    dtd_conf.dcf_unpriv ? 0600 : 0);
		if (fp->fp_fd == -1) {
			error = errno;
			fprintf(stderr, "dtd: cannot create %s: %s\n", path,
			    strerror(error));
			return error;
		}
		fp->fp_created = true;
		goto opened;
	}
	if ((error = fusefile_refuse(path, &st, &dst)) != 0)
		return error;
	fp->fp_fd = openat(fp->fp_dirfd, fp->fp_base, O_PATH | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fp->fp_fd == -1) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s\n", path, strerror(error));
		return error;
	}
opened:
	/* What we hold is what we checked, or what we just created. */
	if (fstat(fp->fp_fd, &fst) == -1) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s\n", path, strerror(error));
		return error;
	}
	if (!S_ISREG(fst.st_mode) || (!fp->fp_created &&
	    (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino))) {
		fprintf(stderr, "dtd: %s changed while dtd checked it\n",
		    path);
		return EAGAIN;
	}
	if (fst.st_uid != dtd_dev_uid()) {
		fprintf(stderr, "dtd: %s belongs to uid %d, not %s; "
		    "refusing to mount over it\n", path, (int)fst.st_uid,
		    dtd_conf.dcf_unpriv ? "yours" : "root");
		return EPERM;
	}
	/*
	 * A file another dtd created and could not remove (it was killed,
	 * its mount was cleaned up above or by hand) is ours now: removed
	 * at the end like one we made, so no empty file is left for a
	 * client to mistake for the device.
	 */
	if (!fp->fp_created && FUSEFILE_OURS(&fst)) {
		fprintf(stderr, "dtd: %s: taking over the file a dead dtd "
		    "left\n", path);
		fp->fp_created = true;
	}
	/*
	 * libfuse mounts on, and at the end unmounts, this name: the
	 * kernel resolves it to the very file we hold.
	 */
	snprintf(fp->fp_mnt, sizeof(fp->fp_mnt), "/proc/self/fd/%d",
	    fp->fp_fd);
	return 0;
}

/* Close what fusefile_prepare() opened; remove the file if we made it. */
static void
fusefile_release_path(const char *path, struct fusefile_path *fp)
{
	if (fp->fp_fd != -1)
		close(fp->fp_fd);
	if (fp->fp_created &&
	    unlinkat(fp->fp_dirfd, fp->fp_base, 0) == -1)
		fprintf(stderr, "dtd: cannot remove %s: %s\n", path,
		    strerror(errno));
	if (fp->fp_dirfd != -1)
		close(fp->fp_dirfd);
}

int
dt_fusefile_main(void)
{
	char opts[256];
	char *argv[] = { "dtd", "-o", opts, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	const char *path = dtd_conf.dcf_device;
	struct fusefile_path fp = { .fp_dirfd = -1, .fp_fd = -1 };
	struct fuse_session *se;
	unsigned int stuck;
	int error;

	/*
	 * Without root, fusermount3 opens /dev/fuse, but as the user: it
	 * must be open to them (0666, as udev makes it; not in a container
	 * without udev).
	 */
	if (access("/dev/fuse", R_OK | W_OK) == -1) {
		error = errno;
		if (dtd_conf.dcf_unpriv) {
			fprintf(stderr, "dtd: /dev/fuse: %s: without root, "
			    "FUSE needs /dev/fuse open to ordinary users (mode "
			    "0666, as udev sets it; where nothing did, root "
			    "can: chmod 0666 /dev/fuse)\n", strerror(error));
			return error;
		}
		fprintf(stderr, "dtd: /dev/fuse: %s: the FUSE-file front end "
		    "needs FUSE\n", strerror(error));
		return error;
	}
	fusefile_mtime = time(NULL);
	/*
	 * Without root, no allow_other: the kernel then lets only dtd's
	 * user in.  auto_unmount has libfuse use fusermount3 even where
	 * /dev/fuse is root's alone, and fusermount3 unmounts if dtd dies.
	 */
	snprintf(opts, sizeof(opts), "%s,default_permissions,"
	    "fsname=dtd,subtype=dtd,max_read=%u", dtd_conf.dcf_unpriv ?
	    "auto_unmount" : "allow_other", (unsigned int)DT_READ_MAX);

	if ((error = fusefile_prepare(path, &fp)) != 0)
		goto out;
	se = fuse_session_new(&args, &fusefile_ops, sizeof(fusefile_ops),
	    NULL);
	fuse_opt_free_args(&args);
	if (se == NULL) {
		fprintf(stderr, "dtd: cannot create the FUSE session\n");
		error = ENOMEM;
		goto out;
	}
	/*
	 * fusermount3 is another process: /proc/self/fd/N means nothing to
	 * it, so it gets the name, in a directory only this user can change
	 * (dt_dir_safe()).
	 */
	if (fuse_session_mount(se, dtd_conf.dcf_unpriv ? path : fp.fp_mnt) !=
	    0) {
		fprintf(stderr, "dtd: cannot mount the device on %s%s\n", path,
		    dtd_conf.dcf_unpriv ? " (without root, through "
		    "fusermount3 of the fuse3 package)" : "");
		fuse_session_destroy(se);
		error = EIO;
		goto out;
	}

	if ((fusefile_wq = dt_wq_new("dtd-ioctl", FUSEFILE_JOBS_UID)) ==
	    NULL) {
		fuse_session_unmount(se);
		fuse_session_destroy(se);
		error = ENOMEM;
		goto out;
	}
	dtd_ready();
	error = dt_fe_loop(se, true);
	/*
	 * Ioctls still running may reply while the session lives; one that
	 * waits on its caller's memory keeps the session (and dtd's exit,
	 * which waits for that thread) until the caller's page answers.
	 */
	stuck = dt_wq_stop(fusefile_wq, 1000);
	if (stuck != 0)
		fprintf(stderr, "dtd: %u ioctl%s still wait%s on the caller's "
		    "memory\n", stuck, stuck == 1 ? "" : "s",
		    stuck == 1 ? "s" : "");

	/*
	 * Parked reads get EIO while the session can still carry the
	 * reply; then unmount (lazily: clients may hold it open, they get
	 * ENOTCONN from now on) and remove what we created.
	 */
	dtd_teardown();
	fuse_session_unmount(se);
	if (stuck == 0)
		fuse_session_destroy(se);
	dt_wq_free(fusefile_wq);
out:
	fusefile_release_path(path, &fp);
	return error;
}
