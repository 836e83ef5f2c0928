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
 * dtd without root: an ordinary user traces their own processes.  What
 * changes is decided here, once, before anything starts, so the rest of
 * dtd reads it from dtd_conf:
 *
 *  - the device is a FUSE mount made through fusermount3 (libfuse runs
 *    it), without allow_other: the kernel lets nobody but this user in,
 *    root included, and the file is theirs, 0600.  CUSE needs root.
 *  - the ingest socket is theirs, 0600, in a 0700 directory of theirs
 *    (udt_userdir.h), and dtd closes any connection whose peer is
 *    another user: only their processes are traced.
 *  - profile samples only the traced processes' threads, user stacks
 *    only: perf's system-wide sampling would see everyone's processes,
 *    and kernel stacks are root's.  perf samples them as tasks where
 *    perf_event_paranoid allows it (2 or less), else the processes
 *    sample themselves (timer mode).  interval and syscall work as with
 *    root.
 *  - no kernel symbol image unless --ksyms names one: kallsyms shows an
 *    ordinary user no addresses.
 *
 * Options that cannot work without root are errors, said at once; what
 * is unavailable is said once, in one message.  Root's dtd is untouched:
 * dtd_unpriv_setup() returns at once for uid 0.
 *
 * Main thread only, before any other thread exists.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_userdir.h>

#include "dtd.h"

/*
 * path made absolute against the current directory: fusermount3 resolves
 * the mount point itself, and a daemonised dtd runs in /.  Never freed:
 * dtd_conf holds it for dtd's life.
 */
static const char *
unpriv_abs(const char *opt, const char *path)
{
	char cwd[PATH_MAX], *abs;

	if (path == NULL || path[0] == '/')
		return path;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		dtd_fatal("%s %s: the current directory: %s", opt, path,
		    strerror(errno));
	if (asprintf(&abs, "%s/%s", cwd, path) == -1)
		dtd_fatal("%s: %s", opt, strerror(ENOMEM));
	return abs;
}

void
dtd_unpriv_setup(bool device_set, bool ingest_set)
{
	static char sock[PATH_MAX];

	dtd_conf.dcf_uid = geteuid();
	if (dtd_conf.dcf_uid == 0)
		return;
	dtd_conf.dcf_unpriv = true;
	dtd_conf.dcf_ugid = getegid();

	if (!device_set && dtd_conf.dcf_frontend != DTD_FE_SOCKET)
		dtd_fatal("not root: /dev/dt is root's; name a device "
		    "file of yours, e.g. --device ~/dt");
	if (dtd_conf.dcf_frontend == DTD_FE_CUSE)
		dtd_fatal("--frontend cuse needs root (CUSE makes a node "
		    "in /dev); without root the device is a FUSE mount");
	if (dtd_conf.dcf_frontend != DTD_FE_SOCKET)
		dtd_conf.dcf_frontend = DTD_FE_FUSE;
	if (dtd_conf.dcf_group_set)
		dtd_fatal("--group needs root: without root the device "
		    "is yours alone");
	/*
	 * --profile perf and auto sample the traced processes' threads
	 * (dt_perf_task.c), as far as perf_event_paranoid lets this user.
	 */
	if (!dtd_conf.dcf_ksyms_set)
		dtd_conf.dcf_ksyms = NULL;

	if (!ingest_set) {
		if (udt_user_sockpath(sock, sizeof(sock), dtd_conf.dcf_uid)
		    == -1)
			dtd_fatal("XDG_RUNTIME_DIR is too long for the "
			    "ingest socket; name one with --ingest");
		dtd_conf.dcf_ingest = sock;
	}
	dtd_conf.dcf_device = unpriv_abs("--device", dtd_conf.dcf_device);
	dtd_conf.dcf_devsock = unpriv_abs("--device-socket",
	    dtd_conf.dcf_devsock);
	dtd_conf.dcf_ingest = unpriv_abs("--ingest", dtd_conf.dcf_ingest);
	dtd_conf.dcf_ksyms = unpriv_abs("--ksyms", dtd_conf.dcf_ksyms);

	fprintf(stderr, "dtd: running without root (uid %u): only your own "
	    "processes can connect to %s and be traced, only you can open "
	    "%s.  Unavailable without root: other users' processes, kernel "
	    "stacks, sampling whole CPUs (profile samples only the traced "
	    "processes' user stacks), kernel symbols (/dev/ksyms), CUSE, and "
	    "adopting processes a previous dtd traced.\n",
	    (unsigned int)dtd_conf.dcf_uid, dtd_conf.dcf_ingest,
	    dtd_conf.dcf_frontend == DTD_FE_SOCKET ? dtd_conf.dcf_devsock :
	    dtd_conf.dcf_device);
}
