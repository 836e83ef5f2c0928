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
 * The ingest socket's file.  Tracees of every user connect to it, so it
 * is mode 0666 in a directory of root's; dtd makes that directory when
 * it is missing (root, 0755), refuses one that is someone else's or
 * that others can write unless sticky, never follows a symbolic link at
 * either name, and gives the socket its mode on the descriptor before
 * bind(): nothing is ever changed through a path a user could redirect
 * (a chmod after bind() followed whatever the name meant by then, so the
 * owner of the directory could turn any root file 0666).
 *
 * A dtd without root serves its own user alone (dtd_unpriv.c): the
 * directory it makes is theirs, 0700, the socket 0600, and an existing
 * one must be theirs; the accept loop closes other users' connections.
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

#include "dt_ingest.h"
#include "dt_path.h"

static int	dti_sock_dirfd = -1;		/* [I] O_PATH, the directory */
static char	dti_sock_base[NAME_MAX + 1];	/* [I] the name in it */
static dev_t	dti_sock_dev;			/* [I] the socket we bound */
static ino_t	dti_sock_ino;
static char	dti_made_dir[PATH_MAX];		/* [I] the directory we made,
						   or "" */
static dev_t	dti_made_dev;			/* [I] and its identity */
static ino_t	dti_made_ino;

/* Open (making it if absent) and check the directory of path. */
static int
dti_sock_dir(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	int error;

	if ((error = dt_path_split(path, dir, sizeof(dir), dti_sock_base,
	    sizeof(dti_sock_base))) != 0) {
		fprintf(stderr, "dtd: ingest socket %s: %s\n", path,
		    error == EINVAL ? "not a file name" : strerror(error));
		return error;
	}
	/* Ours when we make it; an existing one is checked below. */
	dti_made_dir[0] = '\0';
	if (mkdir(dir, geteuid() == 0 ? 0755 : 0700) == 0) {
		fprintf(stderr, "dtd: made %s (%s) for the ingest socket\n",
		    dir, geteuid() == 0 ? "root, 0755" : "yours, 0700");
		strcpy(dti_made_dir, dir);
	} else if (errno != EEXIST) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s\n", dir, strerror(error));
		return error;
	}
	/* O_NOFOLLOW: a planted link to some root directory is refused. */
	dti_sock_dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (dti_sock_dirfd == -1 || fstat(dti_sock_dirfd, &st) == -1) {
		error = errno;
		fprintf(stderr, "dtd: %s: %s%s\n", dir, strerror(error),
		    error == ENOTDIR ? " (a symbolic link is refused)" : "");
		return error;
	}
	dti_made_dev = st.st_dev;
	dti_made_ino = st.st_ino;
	if (!dt_dir_safe(&st)) {
		fprintf(stderr, "dtd: %s: refusing it for the ingest socket: "
		    "owner %d, mode %04o (it must be root's, and sticky if "
		    "others may write it)\n", dir, (int)st.st_uid,
		    (unsigned)(st.st_mode & 07777));
		return EPERM;
	}
	return 0;
}

/* path as the directory we hold sees it: /proc/self/fd/N/NAME. */
static int
dti_sock_addr(struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if ((size_t)snprintf(sun->sun_path, sizeof(sun->sun_path),
	    "/proc/self/fd/%d/%s", dti_sock_dirfd, dti_sock_base) >=
	    sizeof(sun->sun_path))
		return ENAMETOOLONG;
	return 0;
}

int
dt_ingest_listen(const char *path, int *fdp)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t mode;
	int error, fd = -1;

	*fdp = -1;
	if ((error = dti_sock_dir(path)) != 0)
		goto fail;
	if ((error = dti_sock_addr(&sun)) != 0) {
		fprintf(stderr, "dtd: ingest socket name too long: %s\n",
		    path);
		goto fail;
	}
	if (fstatat(dti_sock_dirfd, dti_sock_base, &st,
	    AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			fprintf(stderr, "dtd: %s exists and is not a socket "
			    "of %s; refusing to replace it\n", path,
			    geteuid() == 0 ? "root's" : "yours");
			error = EEXIST;
			goto fail;
		}
		/* A socket nobody answers on is a dead dtd's: replace it. */
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			goto fail_errno;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			fprintf(stderr, "dtd: another dtd serves %s\n", path);
			error = EADDRINUSE;
			goto fail;
		}
		close(fd);
		fd = -1;
		if (unlinkat(dti_sock_dirfd, dti_sock_base, 0) == -1 &&
		    errno != ENOENT)
			goto fail_errno;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail_errno;
	/*
	 * Tracees need no privilege: anyone may connect (without root,
	 * only dtd's user).  bind() gives the file the socket inode's mode
	 * less the umask, and dtd runs with umask 0 (dtd.c), so this is the
	 * file's mode from its first instant.  bind() never follows a link
	 * nor replaces a name.
	 */
	mode = geteuid() == 0 ? 0666 : 0600;
	if (fchmod(fd, mode) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    fstatat(dti_sock_dirfd, dti_sock_base, &st,
	    AT_SYMLINK_NOFOLLOW) == -1)
		goto fail_errno;
	dti_sock_dev = st.st_dev;
	dti_sock_ino = st.st_ino;
	if ((st.st_mode & 0777) != mode) {
		fprintf(stderr, "dtd: %s: mode %04o, not %04o (umask?)\n",
		    path, (unsigned)(st.st_mode & 07777), (unsigned)mode);
		error = EPERM;
		dt_ingest_unlisten();
		goto fail;
	}
	if (listen(fd, 128) == -1)
		goto fail_errno;
	*fdp = fd;
	return 0;

fail_errno:
	error = errno;
	fprintf(stderr, "dtd: %s: %s\n", path, strerror(error));
fail:
	if (fd != -1)
		close(fd);
	dt_ingest_unlisten();
	return error;
}

void
dt_ingest_unlisten(void)
{
	struct stat st;

	if (dti_sock_dirfd == -1)
		return;
	/* Only our socket: a second dtd's stays. */
	if (dti_sock_ino != 0 && fstatat(dti_sock_dirfd, dti_sock_base, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dti_sock_dev &&
	    st.st_ino == dti_sock_ino)
		(void)unlinkat(dti_sock_dirfd, dti_sock_base, 0);
	close(dti_sock_dirfd);
	dti_sock_dirfd = -1;
	dti_sock_ino = 0;
	/*
	 * A directory we made goes with us, if its name still names it and
	 * nothing else was put in it (rmdir refuses then).
	 */
	if (dti_made_dir[0] != '\0' && lstat(dti_made_dir, &st) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_dev == dti_made_dev &&
	    st.st_ino == dti_made_ino)
		(void)rmdir(dti_made_dir);
	dti_made_dir[0] = '\0';
}
