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

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define UDT_USERDIR_SOCK	"ingest.sock"

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

#endif /* USERDT_UDT_USERDIR_H */
