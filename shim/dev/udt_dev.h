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
 * libuserdt-dev.so: the device path served from dtd's device socket
 * (<userdt/udt_devsock.h>) inside an unmodified client, as umockdev
 * serves devices from a preload.  udt_dev.c speaks the protocol and
 * keeps which descriptors are the device; udt_dev_hooks.c interposes
 * libc's calls.  The descriptor a client holds is the connected socket
 * itself, so dup(2), fork(2) and close-on-exec behave as the kernel
 * makes them; the library only remembers that it is the device.
 *
 * Every function is callable from any thread.  Calls on one open are
 * serialised (a read(2) that waits holds off another thread's ioctl on
 * the same open until it returns); one a signal handler makes on the
 * open its thread is inside fails with EDEADLK.
 */
#ifndef UDT_DEV_H
#define UDT_DEV_H

#include <sys/types.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* The libc functions under ours (dlsym RTLD_NEXT). */
struct udev_real {
	int	(*ur_open)(const char *, int, ...);
	int	(*ur_openat)(int, const char *, int, ...);
	int	(*ur_close)(int);
	ssize_t	(*ur_read)(int, void *, size_t);
	int	(*ur_ioctl)(int, unsigned long, ...);
	int	(*ur_fcntl)(int, int, ...);
	int	(*ur_dup)(int);
	int	(*ur_dup2)(int, int);
	int	(*ur_dup3)(int, int, int);
	int	(*ur_fstat)(int, struct stat *);
	int	(*ur_fstatat)(int, const char *, struct stat *, int);
	int	(*ur_poll)(struct pollfd *, nfds_t, int);
	int	(*ur_ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		    const sigset_t *);
	int	(*ur_faccessat)(int, const char *, int, int);
};

extern struct udev_real	udev_real;

/* Resolve udev_real and read the environment, once. */
void	udev_init(void);

/* Whether path (as given to open or stat) names the served device. */
bool	udev_is_path(const char *path);

/* Whether fd is an open of the device; learns an inherited one lazily. */
bool	udev_is_fd(int fd);

/* A descriptor learnt of by its peer (after exec): check and remember. */
bool	udev_probe_fd(int fd);

/* open(2) of the device: a connected socket, or -1 with errno. */
int	udev_open(int flags);

/* A copy (dup) or the end (close, or overwritten by dup2) of a name. */
void	udev_dup(int oldfd, int newfd);
void	udev_forget(int fd);

ssize_t	udev_read(int fd, void *buf, size_t len);
int	udev_ioctl(int fd, unsigned long cmd, void *arg);

/* fcntl(2)'s F_GETFL and F_SETFL as the device has them. */
int	udev_getfl(int fd);
int	udev_setfl(int fd, int flags);

/* What stat(2) says of the device: a character device. */
int	udev_stat(struct stat *st);

/*
 * Readiness of the device's entries of fds (POLLIN when a record is
 * ready), asked of dtd; wait: arm a notification when none is.  The
 * count of ready device entries; the others untouched.
 */
int	udev_poll_query(struct pollfd *fds, nfds_t n, bool wait);

/* After the kernel's poll: take the notifications that woke it. */
void	udev_poll_taken(struct pollfd *fds, nfds_t n);

#endif /* UDT_DEV_H */
