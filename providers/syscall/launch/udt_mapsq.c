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

/* The maps query's client: see udt_mapsq.h. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "udt_mapsq.h"


static uint64_t
udt_mapsq_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Send (out) or receive all of len, or -1.  The caller's signals
 * (btrace's SIGCHLD when its command ends, whatever the shim's host
 * handles) cut a call short: go on with the rest.  SO_RCVTIMEO and
 * SO_SNDTIMEO bound each wait; deadline (monotonic ns) bounds them all,
 * should signals keep coming.
 */
static int
udt_mapsq_io(int fd, void *buf, size_t len, int out, uint64_t deadline)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = out ? send(fd, p, len, MSG_NOSIGNAL) :
		    recv(fd, p, len, MSG_WAITALL);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0) {
			errno = EPROTO;		/* dtd closed mid-answer */
			return -1;
		}
		if (errno != EINTR)
			return -1;
		if (udt_mapsq_now() >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

int
udt_mapsq_dial(const char *sock)
{
	/* dtd answers from memory or /proc at once: never hang on it. */
	struct timeval tv = { 1, 0 };
	struct sockaddr_un sun;
	uint64_t deadline = udt_mapsq_now() + 2000000000ULL;
	int fd, error;

	if (sock == NULL && ((sock = getenv(UDT_SOCKET_ENV)) == NULL ||
	    *sock == '\0'))
		sock = UDT_SOCKET_DEFAULT;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/*
	 * A Unix socket's connect only waits for room in dtd's backlog; cut
	 * short by a signal it connected nothing and may be tried again.
	 */
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		if (errno != EINTR || udt_mapsq_now() >= deadline) {
			error = errno;
			close(fd);
			errno = error;
			return -1;
		}
	return fd;
}

/* A hello with flags and its request about pid, sent on fd. */
static int
udt_mapsq_send(int fd, uint32_t flags, pid_t pid, uint64_t deadline)
{
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;

	memset(&q, 0, sizeof(q));
	q.h.uh_magic = UDT_MAGIC;
	q.h.uh_version = UDT_VERSION;
	q.h.uh_flags = flags;
	q.r.umr_pid = pid;
	return udt_mapsq_io(fd, &q, sizeof(q), 1, deadline);
}

/* Close fd, keeping errno; rv. */
static int
udt_mapsq_close(int fd, int rv)
{
	int error = errno;

	close(fd);
	errno = error;
	return rv;
}

int
udt_mapsq_ask(int fd, uint32_t flags, pid_t pid, struct udt_maps_hdr *h,
    uint64_t deadline)
{
	if (udt_mapsq_send(fd, flags, pid, deadline) == -1 ||
	    udt_mapsq_io(fd, h, sizeof(*h), 0, deadline) == -1)
		return -1;
	if (h->umh_magic != UDT_MAGIC || h->umh_version != UDT_VERSION ||
	    h->umh_count > UDT_MAPS_MAXENT) {
		errno = EPROTO;
		return -1;
	}
	if (h->umh_error != 0) {
		errno = (int)h->umh_error;
		return -1;
	}
	return 0;
}

int
udt_kinq(const char *sock, pid_t pid, pid_t *ppid, uint64_t *start)
{
	struct udt_kin k;
	uint64_t deadline = udt_mapsq_deadline();
	int fd;

	if ((fd = udt_mapsq_dial(sock)) == -1)
		return -1;
	if (udt_mapsq_send(fd, UDT_HELLO_KIN, pid, deadline) == -1 ||
	    udt_mapsq_io(fd, &k, sizeof(k), 0, deadline) == -1)
		return udt_mapsq_close(fd, -1);
	if (k.uk_magic != UDT_MAGIC || k.uk_version != UDT_VERSION ||
	    (k.uk_error == 0 && k.uk_ppid < 0))
		errno = EPROTO;
	else if (k.uk_error != 0)
		errno = (int)k.uk_error;
	else {
		*ppid = k.uk_ppid;
		*start = k.uk_start;
		return udt_mapsq_close(fd, 0);
	}
	return udt_mapsq_close(fd, -1);
}

uint64_t
udt_mapsq_deadline(void)
{
	return udt_mapsq_now() + 2000000000ULL;
}

int
udt_mapsq(const char *sock, pid_t pid, udt_mapsq_fn *fn, void *arg)
{
	struct udt_maps_hdr h;
	struct udt_maps_ent e;
	char path[UDT_MAPS_PATHMAX];
	uint64_t deadline;
	uint32_t i;
	int fd, rv = -1;

	deadline = udt_mapsq_deadline();
	if ((fd = udt_mapsq_dial(sock)) == -1)
		return -1;
	if (udt_mapsq_ask(fd, UDT_HELLO_MAPS, pid, &h, deadline) == -1)
		goto out;
	for (i = 0; i < h.umh_count; i++) {
		if (udt_mapsq_io(fd, &e, sizeof(e), 0, deadline) == -1)
			goto out;
		/* Every byte is dtd's word, but a path is a path. */
		if (e.ume_pathlen == 0 || e.ume_pathlen >= sizeof(path) ||
		    e.ume_end <= e.ume_start) {
			errno = EPROTO;
			goto out;
		}
		if (udt_mapsq_io(fd, path, e.ume_pathlen, 0, deadline) == -1)
			goto out;
		path[e.ume_pathlen] = '\0';
		if (strlen(path) != e.ume_pathlen || path[0] != '/') {
			errno = EPROTO;
			goto out;
		}
		if ((rv = fn(arg, &e, path)) != 0)
			goto out;
	}
	rv = 0;
out:
	return udt_mapsq_close(fd, rv);
}

/*
 * Open what lstat() or stat() said, as *st, is a regular file: 0 with
 * *fdp, or -1.  fstat() must find the same file, else it changed
 * between the two looks: someone put another in its place.
 */
static int
udt_mapsq_same(int fd, const struct stat *st, int *fdp)
{
	struct stat now;

	if (fd == -1)
		return -1;
	if (fstat(fd, &now) == -1 || !S_ISREG(now.st_mode) ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	/* Only the open wanted it: whoever gets fd reads it as usual. */
	(void)fcntl(fd, F_SETFL, 0);
	*fdp = fd;
	return 0;
}

int
udt_mapsq_open(pid_t pid, uint64_t start, uint64_t end, const char *path)
{
	struct open_how how;
	struct stat st;
	char mf[96];
	int fd = -1;

	/*
	 * The very file mapped, whatever its name has become since.  stat
	 * before open: a mapping of a device or a FIFO is never opened.
	 */
	if (pid > 0 && end > start) {
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%"
		    PRIx64, (int)pid, start, end);
		if (stat(mf, &st) == 0) {
			if (!S_ISREG(st.st_mode)) {
				errno = EPERM;
				return -1;
			}
			if (udt_mapsq_same(open(mf, O_RDONLY | O_CLOEXEC |
			    O_NONBLOCK | O_NOCTTY), &st, &fd) == 0)
				return fd;
			return -1;
		}
		/* Gone, or map_files refused (not CAP_SYS_ADMIN): the name. */
	}
	if (path == NULL || path[0] != '/') {
		errno = ENOENT;
		return -1;
	}
	/*
	 * The kernel writes a mapping's name resolved, with no link in it:
	 * a link on the way, or a file that is not regular, was put there
	 * by someone who wants it opened.
	 */
	if (lstat(path, &st) == -1)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EPERM;
		return -1;
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd == -1 && errno == ENOSYS)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
		    O_NOFOLLOW);
	if (udt_mapsq_same(fd, &st, &fd) == 0)
		return fd;
	return -1;
}
