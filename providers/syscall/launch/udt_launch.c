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

/* Find the preload library and hand it to a program: see udt_launch.h. */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_userdir.h>
#include <userdt/udt_wire.h>

#include "udt_launch.h"

/* meson sets all five; these only let the file compile on its own. */
#ifndef UDT_LAUNCH_INSTALLED
#define UDT_LAUNCH_INSTALLED	"/usr/local/lib/userdt/libuserdt-preload.so"
#endif
#ifndef UDT_LAUNCH_BINDIR
#define UDT_LAUNCH_BINDIR	"bin"
#endif
#ifndef UDT_LAUNCH_LIBREL
#define UDT_LAUNCH_LIBREL	"lib/userdt/libuserdt-preload.so"
#endif
#ifndef UDT_LAUNCH_BUILDROOT
#define UDT_LAUNCH_BUILDROOT	""
#endif
#ifndef UDT_LAUNCH_BUILT
#define UDT_LAUNCH_BUILT	""
#endif

/*
 * Whether the running executable lies below the build root.  An
 * installed copy never does, so it never picks up a library from a build
 * tree that may since have moved on.
 */
static bool
udt_launch_in_tree(void)
{
	char exe[PATH_MAX], root[PATH_MAX];
	size_t len;
	ssize_t n;

	if (UDT_LAUNCH_BUILDROOT[0] == '\0')
		return false;
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return false;
	exe[n] = '\0';
	/* /proc/self/exe is resolved; the configured root may not be. */
	if (realpath(UDT_LAUNCH_BUILDROOT, root) == NULL)
		return false;
	len = strlen(root);
	return strncmp(exe, root, len) == 0 && exe[len] == '/';
}

/*
 * The library installed beside the running executable: when it runs from
 * PREFIX/BINDIR, PREFIX/LIBREL, into buf.  Whether that file is readable.
 * This is what makes an installed tree work wherever it lies (under a
 * DESTDIR, unpacked from a package into another root); bindir or libdir
 * configured outside the prefix (absolute) leave nothing to derive.
 */
static bool
udt_launch_beside(char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	size_t dlen, blen = strlen(UDT_LAUNCH_BINDIR);
	ssize_t n;

	if (UDT_LAUNCH_BINDIR[0] == '/' || UDT_LAUNCH_LIBREL[0] == '/' ||
	    blen == 0)
		return false;
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return false;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return false;
	*slash = '\0';
	/* exe now holds the directory: it must end in "/" BINDIR. */
	dlen = strlen(exe);
	if (dlen < blen + 1 || exe[dlen - blen - 1] != '/' ||
	    strcmp(exe + dlen - blen, UDT_LAUNCH_BINDIR) != 0)
		return false;
	exe[dlen - blen - 1] = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", exe, UDT_LAUNCH_LIBREL) >= len)
		return false;
	return access(buf, R_OK) == 0;
}

int
udt_launch_lib(char *buf, size_t len)
{
	const char *lib = getenv(UDT_LAUNCH_ENV);

	/*
	 * In a build tree, only the library built with us: an installed one
	 * may speak another version of the ingest protocol.
	 */
	if (lib == NULL || *lib == '\0') {
		if (udt_launch_in_tree())
			lib = UDT_LAUNCH_BUILT;
		else if (udt_launch_beside(buf, len))
			return 0;
		else
			lib = UDT_LAUNCH_INSTALLED;
	}
	if ((size_t)snprintf(buf, len, "%s", lib) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return access(buf, R_OK);
}

/*
 * UDT_SOCKDIR_ENV for the socket the tree will use, when every directory
 * on its path is fixed for us (udt_user_fixed()); else unset, so that a
 * word inherited from a launcher above us, for another euid or path,
 * is not passed on.  A launcher looks once, with stats the traced
 * processes would each pay for their one.
 */
static int
udt_launch_sockdir(void)
{
	const char *sock = getenv(UDT_SOCKET_ENV);
	char path[PATH_MAX], *slash;
	uid_t uid = geteuid();
	struct stat st;
	int fixed;
	char *val;

	if (sock == NULL || *sock == '\0')
		sock = UDT_SOCKET_DEFAULT;
	/* Each name looked at without a trailing slash: no link followed. */
	if (*sock != '/' || (size_t)snprintf(path, sizeof(path), "%s", sock)
	    >= sizeof(path) || strstr(path, "//") != NULL ||
	    strstr(path, "/./") != NULL || strstr(path, "/../") != NULL)
		return unsetenv(UDT_SOCKDIR_ENV);
	/* Each directory down to the socket's, / first. */
	fixed = lstat("/", &st) == 0 && udt_user_fixed(&st, uid);
	for (slash = strchr(path + 1, '/'); fixed && slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		fixed = lstat(path, &st) == 0 && udt_user_fixed(&st, uid);
		*slash = '/';
	}
	if (!fixed)
		return unsetenv(UDT_SOCKDIR_ENV);
	if (asprintf(&val, "%u:%s", (unsigned int)uid, sock) == -1)
		return -1;
	fixed = setenv(UDT_SOCKDIR_ENV, val, 1);
	free(val);
	return fixed;
}

int
udt_launch_env(const char *lib, const char *sock)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;
	int rc;

	if (old != NULL && *old != '\0') {
		if (asprintf(&val, "%s:%s", lib, old) == -1)
			return -1;
		rc = setenv("LD_PRELOAD", val, 1);
		free(val);
	} else
		rc = setenv("LD_PRELOAD", lib, 1);
	if (rc == 0 && sock != NULL)
		rc = setenv(UDT_SOCKET_ENV, sock, 1);
	if (rc == 0)
		rc = udt_launch_sockdir();
	if (rc == 0)
		rc = udt_launch_cachefs();
	return rc;
}

/*
 * Tell the user, once for the whole tree of processes (UDT_UNTRACED_ENV),
 * that what runs under us runs untraced, and why.
 */
static void
udt_launch_untraced(const char *sock, const char *why)
{
	const char *said = getenv(UDT_UNTRACED_ENV);

	if (said == NULL || *said == '\0')
		fprintf(stderr, "%s: %s: %s; not trusting it, the command "
		    "runs untraced\n", program_invocation_short_name, sock,
		    why);
	(void)setenv(UDT_UNTRACED_ENV, "untrusted", 1);
}

const char *
udt_launch_sock(const char *dev, char *buf, size_t len)
{
	const char *env = getenv(UDT_SOCKET_ENV);
	uid_t uid = geteuid();
	struct stat st, dst;
	const char *why;
	char *slash;

	if (env != NULL && *env != '\0')
		return NULL;
	if (dev != NULL) {
		/* dtd gives the device its own user (dt_fusefile.c). */
		if (stat(dev, &st) != 0 || st.st_uid == 0 || st.st_uid != uid)
			return NULL;
	} else if (uid == 0)
		return NULL;
	if (udt_user_sockpath(buf, len, uid) == -1)
		return NULL;
	/* Without a device, only a user's dtd that is there is ours to use. */
	if (dev == NULL && (lstat(buf, &st) != 0 || !S_ISSOCK(st.st_mode)))
		return NULL;
	/*
	 * The default name lies in /tmp when there is no runtime directory:
	 * anyone may have made it first.  Trust no one else's: what fails
	 * is said, and the library is still pointed there, so it refuses
	 * too (it checks again, and the peer) rather than attach to
	 * another dtd.  Nothing there yet is no one's: the library checks
	 * whatever appears when it connects.
	 */
	slash = strrchr(buf, '/');
	*slash = '\0';
	if (lstat(buf, &dst) != 0) {
		*slash = '/';
		return buf;
	}
	*slash = '/';
	why = udt_user_distrust(&dst, lstat(buf, &st) == 0 ? &st : NULL, uid);
	if (why != NULL)
		udt_launch_untraced(buf, why);
	return buf;
}
