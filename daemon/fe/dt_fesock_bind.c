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
 * The device socket's file, made as the device node is: root's (dtd's
 * user's without root), the node's group and mode from its first instant,
 * in a directory nobody else can change, never through a symbolic link,
 * and replacing only a dead dtd's socket.
 *
 * Main thread only, at start and stop ([I]).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dt_fesock.h"
#include "dt_path.h"
#include "dtd.h"

static int	fesock_dirfd = -1;		/* [I] O_PATH, the directory */
static char	fesock_base[NAME_MAX + 1];	/* [I] the name in it */
static dev_t	fesock_dev;			/* [I] the socket we bound */
static ino_t	fesock_ino;

/*
 * Make the socket file: in a directory that is safe (dt_path.h), never
 * through a link, with the device node's mode from its first instant
 * (dtd's umask is 0), replacing only a dead dtd's socket.
 */
int
dt_fesock_bind(const char *path, int *fdp)
{
	char dir[PATH_MAX];
	struct sockaddr_un sun;
	struct stat st;
	mode_t mode = dtd_dev_mode();
	int error, fd = -1, on = 1;

	if ((error = dt_path_split(path, dir, sizeof(dir), fesock_base,
	    sizeof(fesock_base))) != 0) {
		fprintf(stderr, "dtd: --device-socket %s: %s\n", path,
		    error == EINVAL ? "not a file name" : strerror(error));
		return error;
	}
	fesock_dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fesock_dirfd == -1 || fstat(fesock_dirfd, &st) == -1)
		goto fail_errno;
	if (!dt_dir_safe(&st)) {
		fprintf(stderr, "dtd: %s: refusing the device socket in a "
		    "directory others can write (owner %d, mode %04o)\n", dir,
		    (int)st.st_uid, (unsigned)(st.st_mode & 07777));
		return EPERM;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
	    "/proc/self/fd/%d/%s", fesock_dirfd, fesock_base) >=
	    sizeof(sun.sun_path)) {
		fprintf(stderr, "dtd: --device-socket %s: name too long\n",
		    path);
		error = ENAMETOOLONG;
		goto fail;
	}
	if (fstatat(fesock_dirfd, fesock_base, &st, AT_SYMLINK_NOFOLLOW) ==
	    0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			fprintf(stderr, "dtd: %s exists and is not a socket "
			    "of dtd's user; refusing to replace it\n", path);
			error = EEXIST;
			goto fail;
		}
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1)
			goto fail_errno;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			fprintf(stderr, "dtd: another dtd serves %s\n", path);
			error = EADDRINUSE;
			goto fail;
		}
		close(fd);
		fd = -1;
		if (unlinkat(fesock_dirfd, fesock_base, 0) == -1 &&
		    errno != ENOENT)
			goto fail_errno;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		goto fail_errno;
	/* Accepted sockets inherit it: every request carries its sender. */
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == -1 ||
	    fchmod(fd, mode) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    fstatat(fesock_dirfd, fesock_base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		goto fail_errno;
	fesock_dev = st.st_dev;
	fesock_ino = st.st_ino;
	/*
	 * The group of --group, by name in the directory we hold (nobody
	 * else can change it: dt_dir_safe()); until then the file is only
	 * stricter, dtd's group.
	 */
	if (st.st_gid != dtd_dev_gid() && fchownat(fesock_dirfd, fesock_base,
	    (uid_t)-1, dtd_dev_gid(), AT_SYMLINK_NOFOLLOW) == -1)
		goto fail_errno;
	if ((st.st_mode & 0777) != mode) {
		fprintf(stderr, "dtd: %s: mode %04o, not %04o\n", path,
		    (unsigned)(st.st_mode & 07777), (unsigned)mode);
		error = EPERM;
		goto fail;
	}
	if (listen(fd, 128) == -1)
		goto fail_errno;
	*fdp = fd;
	return 0;

fail_errno:
	error = errno;
	fprintf(stderr, "dtd: --device-socket %s: %s\n", path, strerror(error));
fail:
	if (fd != -1)
		close(fd);
	dt_fesock_unbind();
	return error;
}

void
dt_fesock_unbind(void)
{
	struct stat st;

	if (fesock_dirfd == -1)
		return;
	if (fesock_ino != 0 && fstatat(fesock_dirfd, fesock_base, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == fesock_dev &&
	    st.st_ino == fesock_ino)
		(void)unlinkat(fesock_dirfd, fesock_base, 0);
	close(fesock_dirfd);
	fesock_dirfd = -1;
	fesock_ino = 0;
}

