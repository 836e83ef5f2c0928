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
 * A listening socket's file that dtd makes as root and that users may
 * reach: the ingest socket and the device socket.  The one careful way
 * to make and remove it, so that both follow the same rules.
 */
#ifndef DT_SOCKFILE_H
#define DT_SOCKFILE_H

#include <sys/types.h>

#include <limits.h>
#include <stdbool.h>

/*
 * One socket file.  Main thread only, at start and stop ([I]): set by
 * dt_sockfile_listen(), cleared by dt_sockfile_close().
 */
struct dt_sockfile {
	const char	*sf_what;		/* [I] its name in messages */
	int		 sf_dirfd;		/* [I] O_PATH, the directory */
	char		 sf_base[NAME_MAX + 1];	/* [I] the name in it */
	dev_t		 sf_dev;		/* [I] the socket we bound */
	ino_t		 sf_ino;
	char		 sf_made[PATH_MAX];	/* [I] the directory we made,
						   or "" */
	dev_t		 sf_made_dev;		/* [I] and its identity */
	ino_t		 sf_made_ino;
};

#define DT_SOCKFILE_INIT(what)	{ .sf_what = (what), .sf_dirfd = -1 }

/*
 * Put a listening stream socket at path, in a directory that is safe
 * (dt_dir_safe()) and held open, never through a symbolic link at
 * either name, with mode from its first instant (given to the socket
 * before bind(); dtd runs with umask 0), replacing only a socket of
 * dtd's user that nobody answers on (a dead dtd's).  dirmode not 0:
 * make the directory with that mode when it is missing (it goes again
 * at dt_sockfile_close() if still empty).  gid not (gid_t)-1: the file's
 * group, set by its name in the directory held before anyone may
 * connect.  sockflags is or'ed into the socket's type (SOCK_NONBLOCK);
 * passcred sets SO_PASSCRED, which the accepted sockets inherit.  0 and
 * the descriptor in *fdp, or an errno said on stderr.  Main thread.
 */
int	dt_sockfile_listen(struct dt_sockfile *, const char *path,
	    mode_t dirmode, mode_t mode, gid_t gid, int sockflags,
	    bool passcred, int *fdp);

/*
 * Whether a dtd answers on the socket at path (a busy one too): a look
 * that makes nothing, for the refusal dtd makes before it starts
 * (dtd_claim_check()).  A name that is no socket, or one nobody answers
 * on, is dt_sockfile_listen()'s to refuse or replace.  Any thread.
 */
bool	dt_sockfile_answers(const char *path);

/*
 * Remove the socket file if its name still names the socket we bound
 * (a second dtd's stays), and the directory we made if it is empty and
 * still ours; close the directory.  Idempotent.  Main thread.
 */
void	dt_sockfile_close(struct dt_sockfile *);

#endif /* DT_SOCKFILE_H */
