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
 * Where a dtd that runs without root puts its ingest socket by default,
 * so that dtd, btrace and dtrun of one user agree on it with nothing
 * said: the user's runtime directory ($XDG_RUNTIME_DIR, which pam_systemd
 * makes theirs alone, 0700), else a directory of their own in /tmp, named
 * by uid.  dtd makes the "userdt" directory 0700 and refuses one that is
 * not the user's, so a name planted in /tmp by someone else is an error,
 * never used.  Header-only: dtd, the launchers and tests share it.
 */
#ifndef USERDT_UDT_USERDIR_H
#define USERDT_UDT_USERDIR_H

#include <sys/stat.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define UDT_USERDIR_SOCK	"ingest.sock"

/*
 * Set, to a word saying why, by the first part of userdt that told the
 * user a program runs untraced (the launcher, or the preload library in
 * an earlier image): every process that inherits it keeps quiet about
 * the same, and the library takes "noanswer" and "stopped" to mean that
 * dtd did not answer an earlier image, so it does not wait for it again.
 */
#define UDT_UNTRACED_ENV	"USERDT_UNTRACED"

/*
 * The default ingest socket of uid's own dtd into buf: 0, or -1 when it
 * does not fit.  Any thread; reads the environment.
 */
static inline int
udt_user_sockpath(char *buf, size_t len, uid_t uid)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	/* Only an absolute name: a relative one depends on the cwd. */
	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(buf, len, "%s/userdt/" UDT_USERDIR_SOCK, xdg);
	else
		n = snprintf(buf, len, "/tmp/userdt-%u/" UDT_USERDIR_SOCK,
		    (unsigned int)uid);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * Whether uid may trust the ingest socket whose lstat(2) is *sock (NULL:
 * no socket there yet), in the directory whose lstat(2) is *dir: NULL
 * when it may, else why not.  Only uid itself and root may own either,
 * neither may be a symbolic link, and nobody else may write the
 * directory unless it is sticky (then nobody else can rename or remove
 * a name in it that is uid's or root's): otherwise another user could
 * stand in for dtd, learn what uid traces and choose what it records.
 * The peer that answers is checked too (udt_user_peer_ok()): a name
 * checked here can still be swapped before connect(2).  Pure: the
 * launchers and the preload library (which may not call libc there)
 * share it.
 */
static inline const char *
udt_user_distrust(const struct stat *dir, const struct stat *sock, uid_t uid)
{
	if (S_ISLNK(dir->st_mode))
		return "its directory is a symbolic link";
	if (!S_ISDIR(dir->st_mode))
		return "its directory is not a directory";
	if (dir->st_uid != uid && dir->st_uid != 0)
		return "its directory belongs to another user";
	if ((dir->st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (dir->st_mode & S_ISVTX) == 0)
		return "others can write its directory";
	if (sock == NULL)
		return NULL;
	if (S_ISLNK(sock->st_mode))
		return "it is a symbolic link";
	if (!S_ISSOCK(sock->st_mode))
		return "it is not a socket";
	if (sock->st_uid != uid && sock->st_uid != 0)
		return "it belongs to another user";
	return NULL;
}

/*
 * The launcher's word on the socket's directory, for its whole tree:
 * "UID:PATH" when every directory from / down to PATH's own was, as it
 * looked, one nobody but UID and root can change (udt_user_fixed()).
 * Such a path names the same directory until UID or root changes it: a
 * name in it cannot be removed, renamed or replaced by anyone else, nor
 * can one above it, sticky or not (a sticky /tmp lets UID remove its own
 * directory there, and another user then make the name).  So the
 * library, whose euid is UID, skips its own look at the directory (one
 * newfstatat a start); the peer is still checked (udt_user_peer_ok()),
 * which is what stands between it and another user's listener anyway,
 * and what still holds where the word is wrong: a process of the tree
 * in another mount namespace or under chroot(2), where PATH may name
 * another directory (a sandbox's bind mount), or after UID or root made
 * the directory another's.  There the listener gets a connection (our
 * credentials by SO_PEERCRED), never a byte; a full backlog gets the
 * look before the library waits for room (udt_connect_dtd()).  Any
 * other euid, PATH or a set-id exec: the library looks, as without.
 */
#define UDT_SOCKDIR_ENV		"USERDT_SOCKDIR"

/*
 * Whether the directory whose lstat(2) is *dir can be changed only by
 * uid and root: one of theirs, not a link, that nobody else may write
 * (its group bits are an ACL's mask, if it has one).  Pure.
 */
static inline int
udt_user_fixed(const struct stat *dir, uid_t uid)
{
	return S_ISDIR(dir->st_mode) && (dir->st_uid == uid ||
	    dir->st_uid == 0) && (dir->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/*
 * Whether a process of uid may talk to the peer whose SO_PEERCRED uid is
 * peer: its own dtd, or root's.  Pure.
 */
static inline int
udt_user_peer_ok(uid_t peer, uid_t uid)
{
	return peer == uid || peer == 0;
}

#endif /* USERDT_UDT_USERDIR_H */
