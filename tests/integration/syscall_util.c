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

/* What the syscall provider's tests share: see syscall_util.h. */
#include <sys/socket.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

void
st_teardown(struct dtt_dtd *dd, int fd)
{
	if (fd >= 0)
		close(fd);
	if (dd->dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(dd, SIGTERM)),
		    "dtd stopped, exit status 0");
	if (dtt_dtd_fini(dd, true) == -1)
		warn("%s", dd->dd_dir);
}

int
st_setup(struct dtt_dtd *dd, const char *name, const char *dtd,
    char *const extra[], int *fdp, struct dtioc_probe_info **pip,
    size_t *npip)
{
	/*
	 * No kernel symbols: nothing here reads them.  The library's events
	 * alone: these tests check each event their tracee's ring carried,
	 * and count them, where the kernel's view of every other process
	 * (dtd's default as root) would add events of the machine's;
	 * syscall-all and syscall-all-launch test that view.  extra comes
	 * later and wins.
	 */
	char *args[10] = { "--no-ksyms", "--syscall-scope", "launched" };
	size_t i;

	*fdp = -1;
	*pip = NULL;
	for (i = 0; extra != NULL && extra[i] != NULL && i + 4 < 10; i++)
		args[i + 3] = extra[i];
	if (dtt_dtd_init(dd, name) == -1 ||
	    dtt_dtd_start(dd, dtd, args, NULL, 0) == -1 ||
	    (*fdp = dtt_open(dd->dd_dev)) == -1 ||
	    (*pip = dtt_plist(*fdp, npip)) == NULL) {
		dtt_check(false, "setup: a private dtd and its device (%s)",
		    strerror(errno));
		return -1;
	}
	return 0;
}

FILE *
st_spawn_out(char *const argv[], pid_t *pidp)
{
	FILE *out;
	int p[2];

	*pidp = -1;
	if (pipe2(p, O_CLOEXEC) != 0)
		return NULL;
	*pidp = dtt_spawn(argv, NULL, -1, p[1], -1, -1);
	close(p[1]);
	if (*pidp == -1 || (out = fdopen(p[0], "r")) == NULL) {
		close(p[0]);
		return NULL;
	}
	return out;
}

int
st_ingest_stats(const char *sock, struct udt_stats *st)
{
	struct udt_hello h = { UDT_MAGIC, UDT_VERSION, 0, UDT_HELLO_STATS };
	int fd, rc = -1;

	if ((fd = dtt_connect(sock)) < 0)
		return -1;
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) &&
	    recv(fd, st, sizeof(*st), MSG_WAITALL) == (ssize_t)sizeof(*st) &&
	    st->us_magic == UDT_MAGIC)
		rc = 0;
	close(fd);
	return rc;
}
