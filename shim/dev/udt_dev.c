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
 * The client's half of the device socket: opens, requests and replies.
 *
 * read(2) waits in the client, in recv(2) on the socket, so the kernel
 * treats it as OpenBSD treats a read sleeping with PCATCH: a stop and
 * continue, or a handler with SA_RESTART, restarts the wait; a handler
 * without ends it with EINTR, and then dtd is told to give the read up
 * (CANCEL) and its answer taken, so that the stream stays in step and no
 * record is lost: the records that won the race are returned instead.
 *
 * Locks used to protect the fields below:
 *	[I]	immutable after udev_init()
 *	[t]	udev_tab_mtx
 *	[c]	uc_mtx of the open
 *	[a]	atomic
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_devsock.h>

#include "udt_dev.h"

#define UDEV_MAXFD	65536	/* descriptors above are never the device */

struct udev_conn {
	pthread_mutex_t	 uc_mtx;
	_Atomic(pthread_t) uc_owner;	/* [a] the thread holding uc_mtx */
	_Atomic bool	 uc_owned;	/* [a] */
	unsigned int	 uc_refs;	/* [t] descriptors naming it */
	int		 uc_oflags;	/* [c] F_GETFL's answer */
	uint32_t	 uc_seq;	/* [c] last request's */
	bool		 uc_notified;	/* [c] a NOTIFY came */
};

struct udev_real	 udev_real;			/* [I] */
static char		 udev_path[4096];		/* [I] USERDT_DEVICE */
static struct sockaddr_un udev_sun;			/* [I] the socket */
static bool		 udev_on;			/* [I] */
static pthread_once_t	 udev_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t	 udev_tab_mtx = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct udev_conn *) udev_fds[UDEV_MAXFD]; /* [a], [t] */

#define REAL(name)	udev_real.ur_##name = dlsym(RTLD_NEXT, #name)

static void
udev_init_once(void)
{
	const char *dev = getenv("USERDT_DEVICE");
	const char *sock = getenv("USERDT_DEVICE_SOCKET");

	REAL(open);
	REAL(openat);
	REAL(close);
	REAL(read);
	REAL(ioctl);
	REAL(fcntl);
	REAL(dup);
	REAL(dup2);
	REAL(dup3);
	REAL(fstat);
	REAL(fstatat);
	REAL(poll);
	REAL(ppoll);
	REAL(faccessat);
	if (dev == NULL || dev[0] == '\0')
		dev = "/dev/dt";
	/* Without a socket, or with names too long, the library is inert. */
	if (sock == NULL || sock[0] == '\0' || strlen(dev) >=
	    sizeof(udev_path) || strlen(sock) >= sizeof(udev_sun.sun_path))
		return;
	strcpy(udev_path, dev);
	udev_sun.sun_family = AF_UNIX;
	strcpy(udev_sun.sun_path, sock);
	udev_on = true;
}

void
udev_init(void)
{
	(void)pthread_once(&udev_once, udev_init_once);
}

bool
udev_is_path(const char *path)
{
	udev_init();
	return udev_on && path != NULL && strcmp(path, udev_path) == 0;
}

static struct udev_conn *
udev_conn(int fd)
{
	if (fd < 0 || fd >= UDEV_MAXFD)
		return NULL;
	return atomic_load_explicit(&udev_fds[fd], memory_order_acquire);
}

bool
udev_is_fd(int fd)
{
	return udev_conn(fd) != NULL;
}

/* Take the open's lock; EDEADLK when this thread holds it (a handler). */
static int
udev_lock(struct udev_conn *uc)
{
	if (atomic_load(&uc->uc_owned) &&
	    pthread_equal(atomic_load(&uc->uc_owner), pthread_self()))
		return EDEADLK;
	pthread_mutex_lock(&uc->uc_mtx);
	atomic_store(&uc->uc_owner, pthread_self());
	atomic_store(&uc->uc_owned, true);
	return 0;
}

static void
udev_unlock(struct udev_conn *uc)
{
	atomic_store(&uc->uc_owned, false);
	pthread_mutex_unlock(&uc->uc_mtx);
}

static struct udev_conn *
udev_conn_new(int oflags)
{
	struct udev_conn *uc;

	if ((uc = calloc(1, sizeof(*uc))) == NULL)
		return NULL;
	pthread_mutex_init(&uc->uc_mtx, NULL);
	uc->uc_oflags = oflags & (O_ACCMODE | O_NONBLOCK | O_APPEND);
	return uc;
}

/* Name fd the device's open uc (which it holds a reference of).  [t] */
static void
udev_set(int fd, struct udev_conn *uc)
{
	struct udev_conn *old;

	old = atomic_exchange_explicit(&udev_fds[fd], uc,
	    memory_order_acq_rel);
	if (old != NULL && --old->uc_refs == 0) {
		pthread_mutex_destroy(&old->uc_mtx);
		free(old);
	}
}

void
udev_dup(int oldfd, int newfd)
{
	struct udev_conn *uc;

	if (newfd < 0 || newfd >= UDEV_MAXFD)
		return;
	pthread_mutex_lock(&udev_tab_mtx);
	uc = udev_conn(oldfd);
	if (uc != NULL)
		uc->uc_refs++;
	udev_set(newfd, uc);
	pthread_mutex_unlock(&udev_tab_mtx);
}

void
udev_forget(int fd)
{
	if (fd < 0 || fd >= UDEV_MAXFD || udev_conn(fd) == NULL)
		return;
	pthread_mutex_lock(&udev_tab_mtx);
	udev_set(fd, NULL);
	pthread_mutex_unlock(&udev_tab_mtx);
}

bool
udev_probe_fd(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	struct udev_conn *uc;

	udev_init();
	if (!udev_on || fd < 0 || fd >= UDEV_MAXFD)
		return false;
	if (udev_conn(fd) != NULL)
		return true;
	/* A socket connected to dtd's device socket is an open of it. */
	memset(&sun, 0, sizeof(sun));
	if (getpeername(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    sun.sun_family != AF_UNIX || len <= offsetof(struct sockaddr_un,
	    sun_path) || strncmp(sun.sun_path, udev_sun.sun_path,
	    sizeof(sun.sun_path)) != 0)
		return false;
	if ((uc = udev_conn_new(O_RDONLY)) == NULL)
		return false;
	pthread_mutex_lock(&udev_tab_mtx);
	uc->uc_refs = 1;
	if (udev_conn(fd) == NULL)
		udev_set(fd, uc);
	else
		free(uc);
	pthread_mutex_unlock(&udev_tab_mtx);
	return true;
}

/*
 * Send one request with our credentials, which dtd judges it by: the
 * effective ids, as a kernel's device would see them.  0 or an errno.
 */
static int
udev_send(int fd, uint16_t op, uint16_t flags, uint32_t seq, uint64_t arg,
    const void *payload, size_t len)
{
	union {
		struct cmsghdr	cm;
		char		buf[CMSG_SPACE(sizeof(struct ucred))];
	} cbuf;
	struct udt_ds_hdr dh;
	struct ucred uc;
	struct cmsghdr *cm;
	struct msghdr msg;
	struct iovec iov[2];
	size_t total = sizeof(dh) + len, sent = 0;
	ssize_t n;

	memset(&dh, 0, sizeof(dh));
	dh.dh_magic = UDT_DS_MAGIC;
	dh.dh_op = op;
	dh.dh_flags = flags;
	dh.dh_seq = seq;
	dh.dh_len = (uint32_t)len;
	dh.dh_arg = arg;
	uc.pid = getpid();
	uc.uid = geteuid();
	uc.gid = getegid();
	while (sent < total) {
		memset(&msg, 0, sizeof(msg));
		iov[0].iov_base = (char *)&dh + (sent < sizeof(dh) ? sent :
		    sizeof(dh));
		iov[0].iov_len = sent < sizeof(dh) ? sizeof(dh) - sent : 0;
		iov[1].iov_base = (char *)(uintptr_t)payload +
		    (sent > sizeof(dh) ? sent - sizeof(dh) : 0);
		iov[1].iov_len = len - (sent > sizeof(dh) ? sent - sizeof(dh) :
		    0);
		msg.msg_iov = iov;
		msg.msg_iovlen = 2;
		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(uc));
		memcpy(CMSG_DATA(cm), &uc, sizeof(uc));
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		/* A set-uid program's euid it may not claim: its real one. */
		if (n == -1 && errno == EPERM && uc.uid != getuid()) {
			uc.uid = getuid();
			uc.gid = getgid();
			continue;
		}
		if (n <= 0)
			return EIO;	/* dtd is gone: as a dead device */
		sent += (size_t)n;
	}
	return 0;
}

/*
 * len bytes of the stream into buf.  With intr, a signal before the
 * first byte returns EINTR; once a frame has begun it is taken whole.
 * 0, EINTR, EFAULT (buf), or EIO (dtd gone).
 */
static int
udev_recv(int fd, void *buf, size_t len, bool intr)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, (char *)buf + got, len - got, MSG_WAITALL);
		if (n == -1 && errno == EINTR) {
			if (intr && got == 0)
				return EINTR;
			continue;
		}
		if (n == -1 && errno == EFAULT)
			return EFAULT;
		if (n <= 0)
			return EIO;
		got += (size_t)n;
	}
	return 0;
}

/* Throw len bytes of the stream away.  0 or EIO. */
static int
udev_skip(int fd, size_t len)
{
	char junk[4096];
	size_t n;

	while (len > 0) {
		n = len < sizeof(junk) ? len : sizeof(junk);
		if (udev_recv(fd, junk, n, false) != 0)
			return EIO;
		len -= n;
	}
	return 0;
}

/*
 * The header of the reply to request seq of op, skipping NOTIFYs (noted)
 * and anything stale.  intr as udev_recv().  0, EINTR or EIO.  [c]
 */
static int
udev_reply(int fd, struct udev_conn *uc, uint16_t op, uint32_t seq,
    struct udt_ds_hdr *dh, bool intr)
{
	int error;

	for (;;) {
		if ((error = udev_recv(fd, dh, sizeof(*dh), intr)) != 0)
			return error;
		if (dh->dh_magic != UDT_DS_MAGIC || dh->dh_op == UDT_DS_ERROR)
			return EIO;
		if (dh->dh_op == UDT_DS_NOTIFY) {
			uc->uc_notified = true;
			continue;
		}
		if (dh->dh_op == (op | UDT_DS_REPLY) && dh->dh_seq == seq)
			return 0;
		if (udev_skip(fd, dh->dh_len) != 0)
			return EIO;
	}
}

int
udev_open(int flags)
{
	struct udt_ds_hdr dh;
	struct udev_conn *uc;
	int fd, error;

	udev_init();
	fd = socket(AF_UNIX, SOCK_STREAM | ((flags & O_CLOEXEC) ?
	    SOCK_CLOEXEC : 0), 0);
	if (fd == -1)
		return -1;
	while (connect(fd, (struct sockaddr *)&udev_sun, sizeof(udev_sun)) ==
	    -1) {
		if (errno == EINTR)
			continue;
		/* A socket nobody serves: no device, as ENXIO says. */
		error = errno == ECONNREFUSED ? ENXIO : errno;
		goto fail;
	}
	if (fd >= UDEV_MAXFD) {
		error = EMFILE;
		goto fail;
	}
	if ((uc = udev_conn_new(flags)) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	if ((error = udev_send(fd, UDT_DS_OPEN, 0, 1, (uint64_t)flags, NULL,
	    0)) == 0 && (error = udev_reply(fd, uc, UDT_DS_OPEN, 1, &dh,
	    false)) == 0)
		error = dh.dh_error;
	if (error != 0) {
		pthread_mutex_destroy(&uc->uc_mtx);
		free(uc);
		goto fail;
	}
	uc->uc_seq = 1;
	uc->uc_refs = 1;
	pthread_mutex_lock(&udev_tab_mtx);
	udev_set(fd, uc);
	pthread_mutex_unlock(&udev_tab_mtx);
	return fd;
fail:
	udev_real.ur_close(fd);
	errno = error;
	return -1;
}

ssize_t
udev_read(int fd, void *buf, size_t len)
{
	struct udev_conn *uc = udev_conn(fd);
	struct udt_ds_hdr dh;
	uint32_t seq;
	int error;

	if (uc == NULL) {
		errno = EBADF;
		return -1;
	}
	if ((error = udev_lock(uc)) != 0) {
		errno = error;
		return -1;
	}
	seq = ++uc->uc_seq;
	if ((error = udev_send(fd, UDT_DS_READ, 0, seq, len, NULL, 0)) != 0)
		goto out;
	error = udev_reply(fd, uc, UDT_DS_READ, seq, &dh, true);
	if (error == EINTR) {
		/* A handler without SA_RESTART ran: give the read up. */
		if ((error = udev_send(fd, UDT_DS_CANCEL, 0, ++uc->uc_seq, seq,
		    NULL, 0)) != 0 || (error = udev_reply(fd, uc, UDT_DS_READ,
		    seq, &dh, false)) != 0)
			goto out;
	}
	if (error != 0)
		goto out;
	if ((error = dh.dh_error) != 0)
		goto out;
	if (dh.dh_len > len) {
		error = EIO;
		goto out;
	}
	/* A bad buffer loses the records, as a failing copyout does. */
	if ((error = udev_recv(fd, buf, dh.dh_len, false)) == EFAULT)
		(void)udev_skip(fd, dh.dh_len);
out:
	udev_unlock(uc);
	if (error != 0) {
		errno = error;
		return -1;
	}
	return (ssize_t)dh.dh_len;
}

/*
 * Our own memory, with EFAULT for an address we cannot touch instead of
 * a fault, as the kernel's copyin and copyout give.
 */
static int
udev_copy(void *dst, const void *src, size_t len, bool out)
{
	struct iovec local, remote;
	ssize_t n;

	if (len == 0)
		return 0;
	local.iov_base = out ? (void *)(uintptr_t)src : dst;
	remote.iov_base = out ? dst : (void *)(uintptr_t)src;
	local.iov_len = remote.iov_len = len;
	n = out ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0) :
	    process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n == -1 && (errno == ENOSYS || errno == EPERM)) {
		/* Refused by a sandbox: trust the pointer, as libc would. */
		memcpy(dst, src, len);
		return 0;
	}
	return EFAULT;
}

int
udev_ioctl(int fd, unsigned long cmd, void *arg)
{
	struct udev_conn *uc = udev_conn(fd);
	unsigned char in[UDT_DS_MAXPAYLOAD], *out = NULL;
	struct udt_ds_ioret dr;
	struct udt_ds_hdr dh;
	size_t size = _IOC_SIZE(cmd);
	uint16_t flags = 0;
	uint32_t seq;
	int error;

	if (uc == NULL)
		return EBADF;
	/*
	 * Whatever dt(4) takes, in either encoding, the command's size
	 * says; dtd knows which it serves and which are copied in.
	 */
	if (size > sizeof(in) || udev_copy(in, arg, size, false) != 0) {
		size = 0;
		flags |= UDT_DS_FAULT;
	}
	if ((error = udev_lock(uc)) != 0)
		return error;
	seq = ++uc->uc_seq;
	if ((error = udev_send(fd, UDT_DS_IOCTL, flags, seq, cmd & 0xffffffffUL,
	    in, size)) != 0 || (error = udev_reply(fd, uc, UDT_DS_IOCTL, seq,
	    &dh, false)) != 0)
		goto out;
	if (dh.dh_error != 0 && dh.dh_len == 0) {
		error = dh.dh_error;
		goto out;
	}
	if (dh.dh_len < sizeof(dr) || (out = malloc(dh.dh_len)) == NULL) {
		error = dh.dh_len < sizeof(dr) ? EIO : ENOMEM;
		(void)udev_skip(fd, dh.dh_len);
		goto out;
	}
	if ((error = udev_recv(fd, out, dh.dh_len, false)) != 0)
		goto out;
	memcpy(&dr, out, sizeof(dr));
	if ((uint64_t)sizeof(dr) + dr.dr_argsz + dr.dr_buflen != dh.dh_len) {
		error = EIO;
		goto out;
	}
	/*
	 * dt(4)'s order: the array (filled on an error too), then the
	 * argument (on success only).
	 */
	if ((error = udev_copy((void *)(uintptr_t)dr.dr_uaddr, out +
	    sizeof(dr) + dr.dr_argsz, dr.dr_buflen, true)) == 0)
		error = udev_copy(arg, out + sizeof(dr), dr.dr_argsz, true);
	if (dh.dh_error != 0)
		error = dh.dh_error;
out:
	udev_unlock(uc);
	free(out);
	return error;
}

int
udev_getfl(int fd)
{
	struct udev_conn *uc = udev_conn(fd);
	int flags;

	if (uc == NULL || udev_lock(uc) != 0)
		return O_RDONLY;
	flags = uc->uc_oflags;
	udev_unlock(uc);
	return flags;
}

int
udev_setfl(int fd, int flags)
{
	struct udev_conn *uc = udev_conn(fd);
	int error;

	if (uc == NULL)
		return EBADF;
	/*
	 * Kept, not applied: dt(4)'s read blocks whatever O_NONBLOCK says,
	 * and ours waits on the socket in blocking mode.
	 */
	if ((error = udev_lock(uc)) != 0)
		return error;
	uc->uc_oflags = (uc->uc_oflags & O_ACCMODE) |
	    (flags & (O_NONBLOCK | O_APPEND));
	udev_unlock(uc);
	return 0;
}

int
udev_stat(struct stat *st)
{
	struct stat ss;

	udev_init();
	memset(st, 0, sizeof(*st));
	/* The socket file carries the device's owner, group and mode. */
	if (udev_real.ur_fstatat(AT_FDCWD, udev_sun.sun_path, &ss, 0) == -1)
		return errno;
	st->st_dev = ss.st_dev;
	st->st_ino = ss.st_ino;
	st->st_mode = S_IFCHR | (ss.st_mode & 07777);
	st->st_nlink = 1;
	st->st_uid = ss.st_uid;
	st->st_gid = ss.st_gid;
	st->st_rdev = makedev(0, 0);
	st->st_blksize = 4096;
	st->st_atim = ss.st_atim;
	st->st_mtim = ss.st_mtim;
	st->st_ctim = ss.st_ctim;
	return 0;
}

int
udev_poll_query(struct pollfd *fds, nfds_t n, bool wait)
{
	struct udev_conn *uc;
	struct udt_ds_hdr dh;
	uint32_t seq;
	nfds_t i;
	int ready = 0, error;

	for (i = 0; i < n; i++) {
		if ((uc = udev_conn(fds[i].fd)) == NULL)
			continue;
		fds[i].revents = 0;
		/* dt(4) has no write: never POLLOUT. */
		if ((fds[i].events & (POLLIN | POLLRDNORM)) == 0)
			continue;
		if (udev_lock(uc) != 0) {
			fds[i].revents = POLLERR;
			ready++;
			continue;
		}
		seq = ++uc->uc_seq;
		uc->uc_notified = false;
		error = udev_send(fds[i].fd, UDT_DS_POLL, wait ? UDT_DS_ARM : 0,
		    seq, 0, NULL, 0);
		if (error == 0)
			error = udev_reply(fds[i].fd, uc, UDT_DS_POLL, seq, &dh,
			    false);
		if (error != 0)
			fds[i].revents = POLLHUP;
		else if (dh.dh_arg != 0 || uc->uc_notified)
			fds[i].revents = fds[i].events & (POLLIN | POLLRDNORM);
		udev_unlock(uc);
		if (fds[i].revents != 0)
			ready++;
	}
	return ready;
}

void
udev_poll_taken(struct pollfd *fds, nfds_t n)
{
	struct udev_conn *uc;
	struct udt_ds_hdr dh;
	nfds_t i;
	ssize_t r;

	for (i = 0; i < n; i++) {
		if ((uc = udev_conn(fds[i].fd)) == NULL ||
		    (fds[i].revents & POLLIN) == 0)
			continue;
		/* Busy: a reader of the open will skip the NOTIFY itself. */
		if (pthread_mutex_trylock(&uc->uc_mtx) != 0)
			continue;
		r = recv(fds[i].fd, &dh, sizeof(dh), MSG_PEEK | MSG_DONTWAIT);
		if (r == (ssize_t)sizeof(dh) && dh.dh_magic == UDT_DS_MAGIC &&
		    dh.dh_op == UDT_DS_NOTIFY)
			(void)recv(fds[i].fd, &dh, sizeof(dh), MSG_DONTWAIT);
		pthread_mutex_unlock(&uc->uc_mtx);
		fds[i].revents = (fds[i].revents & (POLLHUP | POLLERR)) |
		    (fds[i].events & (POLLIN | POLLRDNORM));
	}
}
