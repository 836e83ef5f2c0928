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
 * libuserdt-dev.so's entry points: the libc calls a dt(4) client makes on
 * the device, taken over for the path in USERDT_DEVICE (default /dev/dt)
 * and the descriptors opened through it; every other path and
 * descriptor goes straight to libc at the cost of a compare.
 *
 *	USERDT_DEVICE_SOCKET=/run/dt.sock LD_PRELOAD=libuserdt-dev.so btrace
 *
 * A descriptor inherited across execve(2) is not known until the new
 * program makes a dt(4) ioctl on it or fstat(2)s it, which checks its
 * peer (udev_probe_fd()).
 */
/*
 * Each name below is the symbol it defines: no redirection of open to
 * open64 and the like (all the same on amd64).
 */
#undef _FILE_OFFSET_BITS

#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/stat.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "udt_dev.h"

#define EXPORT	__attribute__((visibility("default")))

/* The mode argument of open(2), there only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)	do {					\
	va_list ap;							\
	mode = 0;							\
	if ((flags) & (O_CREAT | __O_TMPFILE)) {			\
		va_start(ap, flags);					\
		mode = va_arg(ap, int);					\
		va_end(ap);						\
	}								\
} while (0)

EXPORT int
open(const char *path, int flags, ...)
{
	int mode;

	OPEN_MODE(flags, mode);
	if (udev_is_path(path))
		return udev_open(flags);
	return udev_real.ur_open(path, flags, mode);
}

EXPORT int
open64(const char *path, int flags, ...)
{
	int mode;

	OPEN_MODE(flags, mode);
	if (udev_is_path(path))
		return udev_open(flags);
	return udev_real.ur_open(path, flags | O_LARGEFILE, mode);
}

EXPORT int
openat(int dirfd, const char *path, int flags, ...)
{
	int mode;

	OPEN_MODE(flags, mode);
	if (udev_is_path(path) && (path[0] == '/' || dirfd == AT_FDCWD))
		return udev_open(flags);
	return udev_real.ur_openat(dirfd, path, flags, mode);
}

EXPORT int
openat64(int dirfd, const char *path, int flags, ...)
{
	int mode;

	OPEN_MODE(flags, mode);
	if (udev_is_path(path) && (path[0] == '/' || dirfd == AT_FDCWD))
		return udev_open(flags);
	return udev_real.ur_openat(dirfd, path, flags | O_LARGEFILE, mode);
}

/* _FORTIFY_SOURCE's spellings. */
EXPORT int
__open_2(const char *path, int flags)
{
	return open(path, flags);
}

EXPORT int
__open64_2(const char *path, int flags)
{
	return open64(path, flags);
}

EXPORT int
__openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

EXPORT int
close(int fd)
{
	udev_init();
	udev_forget(fd);
	return udev_real.ur_close(fd);
}

/* Ranges closed at once; CLOSE_RANGE_CLOEXEC closes nothing yet. */
EXPORT int
close_range(unsigned int first, unsigned int last, int flags)
{
	static int (*real)(unsigned int, unsigned int, int);
	unsigned int fd;
	int r;

	udev_init();
	if (real == NULL)
		real = dlsym(RTLD_NEXT, "close_range");
	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	r = real(first, last, flags);
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		for (fd = first; fd <= last && fd < 65536; fd++)
			udev_forget((int)fd);
	return r;
}

EXPORT void
closefrom(int first)
{
	(void)close_range(first < 0 ? 0 : (unsigned int)first, ~0U, 0);
}

EXPORT ssize_t
read(int fd, void *buf, size_t len)
{
	udev_init();
	if (udev_is_fd(fd))
		return udev_read(fd, buf, len);
	return udev_real.ur_read(fd, buf, len);
}

EXPORT ssize_t
__read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		abort();
	return read(fd, buf, len);
}

EXPORT int
ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;
	int error, flags;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	udev_init();
	/* dt(4)'s commands are group 'D': only those learn a descriptor. */
	if (udev_is_fd(fd) || (_IOC_TYPE(cmd) == 'D' && udev_probe_fd(fd))) {
		switch (cmd & 0xffffffffUL) {
		case FIOCLEX:
		case FIONCLEX:
			/* The kernel's, for every descriptor. */
			break;
		case FIONBIO:
			flags = udev_getfl(fd);
			if ((error = udev_setfl(fd, (arg != NULL &&
			    *(int *)arg) ? flags | O_NONBLOCK :
			    flags & ~O_NONBLOCK)) != 0) {
				errno = error;
				return -1;
			}
			return 0;
		default:
			if ((error = udev_ioctl(fd, cmd, arg)) != 0) {
				errno = error;
				return -1;
			}
			return 0;
		}
	}
	return udev_real.ur_ioctl(fd, cmd, arg);
}

static int
fcntl_common(int fd, int cmd, void *arg)
{
	int error, nfd;

	udev_init();
	if (!udev_is_fd(fd))
		return udev_real.ur_fcntl(fd, cmd, arg);
	switch (cmd) {
	case F_GETFL:
		return udev_getfl(fd);
	case F_SETFL:
		if ((error = udev_setfl(fd, (int)(intptr_t)arg)) != 0) {
			errno = error;
			return -1;
		}
		return 0;
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		if ((nfd = udev_real.ur_fcntl(fd, cmd, arg)) != -1)
			udev_dup(fd, nfd);
		return nfd;
	default:
		return udev_real.ur_fcntl(fd, cmd, arg);
	}
}

EXPORT int
fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

/* glibc's fcntl64 (large-file builds, 32-bit time) is the same call here. */
EXPORT int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

EXPORT int
dup(int fd)
{
	int nfd;

	udev_init();
	if ((nfd = udev_real.ur_dup(fd)) != -1 && udev_is_fd(fd))
		udev_dup(fd, nfd);
	return nfd;
}

EXPORT int
dup2(int fd, int nfd)
{
	int r;

	udev_init();
	if ((r = udev_real.ur_dup2(fd, nfd)) != -1 && r != fd)
		udev_dup(fd, r);	/* and nfd's old open is forgotten */
	return r;
}

EXPORT int
dup3(int fd, int nfd, int flags)
{
	int r;

	udev_init();
	if ((r = udev_real.ur_dup3(fd, nfd, flags)) != -1)
		udev_dup(fd, r);
	return r;
}

static int
stat_result(int error)
{
	if (error != 0) {
		errno = error;
		return -1;
	}
	return 0;
}

EXPORT int
fstat(int fd, struct stat *st)
{
	int r;

	udev_init();
	if (udev_is_fd(fd))
		return stat_result(udev_stat(st));
	r = udev_real.ur_fstat(fd, st);
	/* A socket may be an open inherited across exec. */
	if (r == 0 && S_ISSOCK(st->st_mode) && udev_probe_fd(fd))
		return stat_result(udev_stat(st));
	return r;
}

EXPORT int
fstat64(int fd, struct stat64 *st)
{
	return fstat(fd, (struct stat *)st);
}

EXPORT int
fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	udev_init();
	if (udev_is_path(path) && (path[0] == '/' || dirfd == AT_FDCWD))
		return stat_result(udev_stat(st));
	if (path[0] == '\0' && (flags & AT_EMPTY_PATH) &&
	    udev_is_fd(dirfd))
		return stat_result(udev_stat(st));
	return udev_real.ur_fstatat(dirfd, path, st, flags);
}

EXPORT int
fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

EXPORT int
stat(const char *path, struct stat *st)
{
	return fstatat(AT_FDCWD, path, st, 0);
}

EXPORT int
stat64(const char *path, struct stat64 *st)
{
	return fstatat(AT_FDCWD, path, (struct stat *)st, 0);
}

EXPORT int
lstat(const char *path, struct stat *st)
{
	return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

EXPORT int
lstat64(const char *path, struct stat64 *st)
{
	return fstatat(AT_FDCWD, path, (struct stat *)st,
	    AT_SYMLINK_NOFOLLOW);
}

/*
 * access(2) of the device: what connecting to the socket needs (write)
 * stands for every mode, as the node would be opened.
 */
EXPORT int
faccessat(int dirfd, const char *path, int mode, int flags)
{
	udev_init();
	if (udev_is_path(path) && (path[0] == '/' || dirfd == AT_FDCWD)) {
		struct stat st;

		if (mode == F_OK)
			return stat_result(udev_stat(&st));
		return udev_real.ur_faccessat(AT_FDCWD,
		    getenv("USERDT_DEVICE_SOCKET"), W_OK, flags);
	}
	return udev_real.ur_faccessat(dirfd, path, mode, flags);
}

EXPORT int
access(const char *path, int mode)
{
	return faccessat(AT_FDCWD, path, mode, 0);
}

/*
 * poll(2) and its kin: dtd says whether a record is ready; if none is and
 * the caller waits, dtd notifies the socket when one arrives, and the
 * kernel's poll waits on it with the caller's other descriptors.
 */
static bool
poll_any(const struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	for (i = 0; i < n; i++)
		if (udev_is_fd(fds[i].fd))
			return true;
	return false;
}

static int
poll_common(struct pollfd *fds, nfds_t n, const struct timespec *ts,
    const sigset_t *mask, bool zero)
{
	static const struct timespec none = { 0, 0 };
	struct pollfd *kfds;
	nfds_t i;
	int ready, r, saved;

	ready = udev_poll_query(fds, n, !zero);
	/*
	 * The kernel polls the rest (all of them, when nothing of the
	 * device is ready): the device's entries wait for the notification.
	 */
	if ((kfds = calloc(n ? n : 1, sizeof(*kfds))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(kfds, fds, n * sizeof(*kfds));
	for (i = 0; i < n; i++) {
		if (!udev_is_fd(fds[i].fd))
			continue;
		if (ready > 0 || (fds[i].events & (POLLIN | POLLRDNORM)) == 0)
			kfds[i].fd = -1;
		else
			kfds[i].events = POLLIN;
	}
	r = udev_real.ur_ppoll(kfds, n, ready > 0 ? &none : ts, mask);
	saved = errno;
	if (r == -1) {
		free(kfds);
		/* Interrupted with records ready: say so, not EINTR. */
		if (ready > 0)
			return ready;
		errno = saved;
		return -1;
	}
	udev_poll_taken(kfds, n);
	r = 0;
	for (i = 0; i < n; i++) {
		/* A device entry keeps dtd's answer when it had one. */
		if (!udev_is_fd(fds[i].fd))
			fds[i].revents = kfds[i].revents;
		else if (ready == 0)
			fds[i].revents = kfds[i].fd == -1 ? 0 :
			    kfds[i].revents;
		if (fds[i].revents != 0)
			r++;
	}
	free(kfds);
	return r;
}

EXPORT int
poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts;

	udev_init();
	if (!poll_any(fds, n))
		return udev_real.ur_poll(fds, n, timeout);
	ts.tv_sec = timeout / 1000;
	ts.tv_nsec = (long)(timeout % 1000) * 1000000L;
	return poll_common(fds, n, timeout < 0 ? NULL : &ts, NULL,
	    timeout == 0);
}

EXPORT int
__poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout);
}

EXPORT int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
    const sigset_t *mask)
{
	udev_init();
	if (!poll_any(fds, n))
		return udev_real.ur_ppoll(fds, n, ts, mask);
	return poll_common(fds, n, ts, mask, ts != NULL && ts->tv_sec == 0 &&
	    ts->tv_nsec == 0);
}

/* select(2) and pselect(2) as poll(2) over the descriptors in the sets. */
static int
select_common(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
    const struct timespec *ts, const sigset_t *mask)
{
	struct pollfd *fds;
	nfds_t n = 0, i;
	int fd, r;

	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	if ((fds = calloc((size_t)nfds + 1, sizeof(*fds))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (rd != NULL && FD_ISSET(fd, rd))
			ev |= POLLIN;
		if (wr != NULL && FD_ISSET(fd, wr))
			ev |= POLLOUT;
		if (ex != NULL && FD_ISSET(fd, ex))
			ev |= POLLPRI;
		if (ev == 0)
			continue;
		fds[n].fd = fd;
		fds[n++].events = ev;
	}
	r = poll_common(fds, n, ts, mask, ts != NULL && ts->tv_sec == 0 &&
	    ts->tv_nsec == 0);
	if (r >= 0) {
		r = 0;
		if (rd != NULL)
			FD_ZERO(rd);
		if (wr != NULL)
			FD_ZERO(wr);
		if (ex != NULL)
			FD_ZERO(ex);
		for (i = 0; i < n; i++) {
			short re = fds[i].revents;

			if (re & POLLNVAL) {
				errno = EBADF;
				r = -1;
				break;
			}
			if (rd != NULL && (re & (POLLIN | POLLHUP | POLLERR))) {
				FD_SET(fds[i].fd, rd);
				r++;
			}
			if (wr != NULL && (re & (POLLOUT | POLLERR))) {
				FD_SET(fds[i].fd, wr);
				r++;
			}
			if (ex != NULL && (re & POLLPRI)) {
				FD_SET(fds[i].fd, ex);
				r++;
			}
		}
	}
	free(fds);
	return r;
}

static bool
select_any(int nfds, const fd_set *rd, const fd_set *wr, const fd_set *ex)
{
	int fd;

	for (fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if (((rd != NULL && FD_ISSET(fd, rd)) ||
		    (wr != NULL && FD_ISSET(fd, wr)) ||
		    (ex != NULL && FD_ISSET(fd, ex))) && udev_is_fd(fd))
			return true;
	return false;
}

EXPORT int
select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	struct timespec ts;

	static int (*real)(int, fd_set *, fd_set *, fd_set *,
	    struct timeval *);

	udev_init();
	/* Linux's select updates *tv: the real one, for everyone else. */
	if (!select_any(nfds, rd, wr, ex)) {
		if (real == NULL)
			real = dlsym(RTLD_NEXT, "select");
		return real(nfds, rd, wr, ex, tv);
	}
	if (tv != NULL) {
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000;
	}
	return select_common(nfds, rd, wr, ex, tv ? &ts : NULL, NULL);
}

EXPORT int
pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
    const struct timespec *ts, const sigset_t *mask)
{
	static int (*real)(int, fd_set *, fd_set *, fd_set *,
	    const struct timespec *, const sigset_t *);

	udev_init();
	if (select_any(nfds, rd, wr, ex))
		return select_common(nfds, rd, wr, ex, ts, mask);
	if (real == NULL)
		real = dlsym(RTLD_NEXT, "pselect");
	return real(nfds, rd, wr, ex, ts, mask);
}
