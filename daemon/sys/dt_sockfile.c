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
 * The listening socket files of dtd (dt_sockfile.h).  Nothing here is
 * ever changed through a path a user could redirect: the mode is given
 * on the descriptor before bind() (a chmod after bind() would follow
 * whatever the name meant by then, so the owner of the directory could
 * turn any root file 0666), the directory is held by an O_PATH
 * descriptor and reached through /proc/self/fd, and bind() never
 * follows a link nor replaces a name.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dt_path.h"
#include "dt_sockfile.h"

/* Open (making it if asked and absent) and check the directory. */
static int
dt_sockfile_dir(struct dt_sockfile *sf, const char *path, mode_t dirmode)
{
	char dir[PATH_MAX];
	struct stat st;
	int error;

	if ((error = dt_path_split(path, dir, sizeof(dir), sf->sf_base,
	    sizeof(sf->sf_base))) != 0) {
		fprintf(stderr, "dtd: %s %s: %s\n", sf->sf_what, path,
		    error == EINVAL ? "not a file name" : strerror(error));
		return error;
	}
	sf->sf_made[0] = '\0';
	if (dirmode != 0) {
		if (mkdir(dir, dirmode) == 0) {
			fprintf(stderr, "dtd: made %s (%s, %04o) for the %s\n",
			    dir, geteuid() == 0 ? "root" : "yours",
			    (unsigned)dirmode, sf->sf_what);
			strcpy(sf->sf_made, dir);
		} else if (errno != EEXIST) {
			error = errno;
			fprintf(stderr, "dtd: %s: %s\n", dir, strerror(error));
			return error;
		}
	}
	/* O_NOFOLLOW: a planted link to some root directory is refused. */
	sf->sf_dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (sf->sf_dirfd == -1 || fstat(sf->sf_dirfd, &st) == -1) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s%s\n", dir, strerror(error),
		    error == ENOTDIR ? " (a symbolic link is refused)" : "");
		return error;
	}
	sf->sf_made_dev = st.st_dev;
	sf->sf_made_ino = st.st_ino;
	if (!dt_dir_safe(&st)) {
		fprintf(stderr, "dtd: %s: refusing it for the %s: owner %d, "
		    "mode %04o (it must be root's or dtd's user's, and sticky "
		    "if others may write it)\n", dir, sf->sf_what,
		    (int)st.st_uid, (unsigned)(st.st_mode & 07777));
		return EPERM;
	}
	return 0;
}

bool
dt_sockfile_answers(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	bool live;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path) ||
	    lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode))
		return false;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	/* Non-blocking: a full backlog (EAGAIN) is a live dtd, busy. */
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return false;
	live = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 ||
	    errno == EAGAIN;
	close(fd);
	return live;
}

int
dt_sockfile_listen(struct dt_sockfile *sf, const char *path, mode_t dirmode,
    mode_t mode, gid_t gid, int sockflags, bool passcred, int *fdp)
{
	struct sockaddr_un sun;
	struct stat st;
	int error, fd = -1, on = 1;

	*fdp = -1;
	if ((error = dt_sockfile_dir(sf, path, dirmode)) != 0)
		goto fail;
	/* path as the directory we hold sees it. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
	    "/proc/self/fd/%d/%s", sf->sf_dirfd, sf->sf_base) >=
	    sizeof(sun.sun_path)) {
		fprintf(stderr, "dtd: %s %s: name too long\n", sf->sf_what,
		    path);
		error = ENAMETOOLONG;
		goto fail;
	}
	if (fstatat(sf->sf_dirfd, sf->sf_base, &st, AT_SYMLINK_NOFOLLOW) ==
	    0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			fprintf(stderr, "dtd: %s exists and is not a socket "
			    "of %s; refusing to replace it\n", path,
			    geteuid() == 0 ? "root's" : "yours");
			error = EEXIST;
			goto fail;
		}
		/* A socket nobody answers on is a dead dtd's: replace it. */
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
		if (unlinkat(sf->sf_dirfd, sf->sf_base, 0) == -1 &&
		    errno != ENOENT)
			goto fail_errno;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | sockflags,
	    0)) == -1)
		goto fail_errno;
	if ((passcred && setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on,
	    sizeof(on)) == -1) || fchmod(fd, mode) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    fstatat(sf->sf_dirfd, sf->sf_base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		goto fail_errno;
	sf->sf_dev = st.st_dev;
	sf->sf_ino = st.st_ino;
	/*
	 * By its name in the directory we hold (nobody else can change
	 * it: dt_dir_safe()); until then the file is only stricter, dtd's
	 * group.
	 */
	if (gid != (gid_t)-1 && st.st_gid != gid && fchownat(sf->sf_dirfd,
	    sf->sf_base, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) == -1)
		goto fail_errno;
	if ((st.st_mode & 0777) != mode) {
		fprintf(stderr, "dtd: %s: mode %04o, not %04o (umask?)\n",
		    path, (unsigned)(st.st_mode & 07777), (unsigned)mode);
		error = EPERM;
		goto fail;
	}
	if (listen(fd, 128) == -1)
		goto fail_errno;
	*fdp = fd;
	return 0;

fail_errno:
	error = errno;
	fprintf(stderr, "dtd: %s %s: %s\n", sf->sf_what, path,
	    strerror(error));
fail:
	if (fd != -1)
		close(fd);
	dt_sockfile_close(sf);
	return error;
}

void
dt_sockfile_close(struct dt_sockfile *sf)
{
	struct stat st;

	if (sf->sf_dirfd == -1)
		return;
	if (sf->sf_ino != 0 && fstatat(sf->sf_dirfd, sf->sf_base, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == sf->sf_dev &&
	    st.st_ino == sf->sf_ino)
		(void)unlinkat(sf->sf_dirfd, sf->sf_base, 0);
	close(sf->sf_dirfd);
	sf->sf_dirfd = -1;
	sf->sf_ino = 0;
	/*
	 * A directory we made goes with us, if its name still names it and
	 * nothing else was put in it (rmdir refuses then).
	 */
	if (sf->sf_made[0] != '\0' && lstat(sf->sf_made, &st) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_dev == sf->sf_made_dev &&
	    st.st_ino == sf->sf_made_ino)
		(void)rmdir(sf->sf_made);
	sf->sf_made[0] = '\0';
}
