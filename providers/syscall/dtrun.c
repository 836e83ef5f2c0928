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
 * dtrun [-s socket] command [arg ...]
 *
 * Run a command with the syscall provider's preload library, so that
 * dtd sees its system calls (and those of its children, which inherit
 * the environment).  The library is taken from beside dtrun when it is
 * there (a build tree), else from the install directory; USERDT_PRELOAD
 * overrides both.  The socket defaults to $USERDT_SOCKET, then to
 * /run/userdt/ingest.sock.
 */
#include <err.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#ifndef DTRUN_LIBDIR
#define DTRUN_LIBDIR	"/usr/local/lib"
#endif
#define DTRUN_LIBNAME	"libuserdt-preload.so"

static void
usage(void)
{
	fprintf(stderr, "usage: dtrun [-s socket] command [arg ...]\n");
	exit(2);
}

/* The library beside our own executable, if there is one. */
static int
dtrun_beside(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", exe, DTRUN_LIBNAME) >= len)
		return -1;
	return access(buf, R_OK);
}

int
main(int argc, char *argv[])
{
	char lib[PATH_MAX], *preload;
	const char *sock = NULL, *old;
	int ch;

	while ((ch = getopt(argc, argv, "+s:")) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();

	if (getenv("USERDT_PRELOAD") != NULL)
		snprintf(lib, sizeof(lib), "%s", getenv("USERDT_PRELOAD"));
	else if (dtrun_beside(lib, sizeof(lib)) != 0)
		snprintf(lib, sizeof(lib), "%s/%s", DTRUN_LIBDIR,
		    DTRUN_LIBNAME);
	if (access(lib, R_OK) != 0)
		err(1, "%s", lib);

	old = getenv("LD_PRELOAD");
	if (old != NULL && *old != '\0') {
		if (asprintf(&preload, "%s:%s", lib, old) == -1)
			err(1, "asprintf");
	} else if ((preload = strdup(lib)) == NULL)
		err(1, "strdup");
	if (setenv("LD_PRELOAD", preload, 1) != 0)
		err(1, "setenv");
	if (sock != NULL && setenv(UDT_SOCKET_ENV, sock, 1) != 0)
		err(1, "setenv");

	execvp(argv[0], argv);
	err(127, "%s", argv[0]);
}
