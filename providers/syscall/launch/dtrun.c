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
 * dtrun [-aL] [-s socket] command [arg ...]
 *
 * Run a command with the syscall provider's preload library, so that
 * dtd sees its system calls (and those of its children, which inherit
 * the environment).  The library is the one built beside dtrun when dtrun
 * runs from its build tree, else the one installed with it (udt_launch.h
 * says where it looks); USERDT_PRELOAD overrides both.  The socket
 * defaults to $USERDT_SOCKET; else, for a user other than root whose own
 * dtd runs (dtd without root, udt_userdir.h), that dtd's socket; else
 * /run/userdt/ingest.sock.  -a turns on all-calls mode
 * (USERDT_ALLCALLS=1, udt_sud.c): libc's own system calls too, at the
 * price of a signal per call.  The calls the dynamic loader makes before
 * the library starts are traced with ptrace until it does (udt_ltrace.c);
 * -L leaves them out (USERDT_LOADER=0).
 */
#include <err.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "udt_launch.h"

static void
usage(void)
{
	fprintf(stderr, "usage: dtrun [-aL] [-s socket] command [arg ...]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	char lib[PATH_MAX], ubuf[PATH_MAX];
	const char *sock = NULL;
	int ch;

	while ((ch = getopt(argc, argv, "+aLs:")) != -1) {
		switch (ch) {
		case 'a':
			if (setenv("USERDT_ALLCALLS", "1", 1) == -1)
				err(1, "environment");
			break;
		case 'L':
			if (setenv(UDT_LAUNCH_LOADER_ENV, "0", 1) == -1)
				err(1, "environment");
			break;
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
	if (sock == NULL)
		sock = udt_launch_sock(NULL, ubuf, sizeof(ubuf));

	if (udt_launch_lib(lib, sizeof(lib)) == -1)
		err(1, "%s", lib);
	if (udt_launch_env(lib, sock) == -1)
		err(1, "environment");
	(void)udt_launch_prune();
	/* Refused ptrace is said once and costs nothing else. */
	(void)udt_launch_trace("dtrun", argv[0]);

	execvp(argv[0], argv);
	err(127, "%s", argv[0]);
}
