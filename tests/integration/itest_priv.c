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
 * What a caller without root may do: open the node if its mode lets it
 * (the kernel enforces the mode dtd gives the node), read the probe list
 * and stats, and nothing that changes tracing (EPERM, checked by dtd on
 * the caller's credentials).  Runs in forked children that drop to
 * nobody; they send their counts back through a pipe.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define NOBODY		65534

static void
priv_child(struct itest *it, gid_t gid, bool may_open)
{
	struct dtioc_probe_info *pi;
	struct dtioc_rdvn dtrv;
	struct dtioc_stat dtst;
	struct dtioc_req dtrq;
	size_t n = 0;
	int fd, on, r;

	if (setgroups(0, NULL) == -1 || setgid(gid) == -1 ||
	    setuid(NOBODY) == -1) {
		dtt_check(false, "unpriv: cannot become uid %d gid %d: %s",
		    NOBODY, (int)gid, strerror(errno));
		return;
	}
	fd = open(it->it_dev, O_RDONLY | O_CLOEXEC);
	if (!may_open) {
		dtt_check(fd == -1 && errno == EACCES, "unpriv: gid %d may not "
		    "open the node: EACCES (%s)", (int)gid,
		    fd == -1 ? strerror(errno) : "opened");
		return;
	}
	if (!dtt_check(fd != -1, "unpriv: uid %d gid %d opens the node (%s)",
	    NOBODY, (int)gid, fd == -1 ? strerror(errno) : "ok"))
		return;
	pi = itest_plist(fd, false, &n);
	dtt_check(pi != NULL && n == it->it_nprobes, "unpriv: GPLIST (%zu)", n);
	free(pi);
	dtt_check(dtioc(fd, DTIOCGSTATS, &dtst, true) == 0, "unpriv: GSTATS");
	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = it->it_interval;
	dtrq.dtrq_nsecs = 100 * NSEC_PER_MSEC;
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, false);
	dtt_check(r == EPERM, "unpriv: PRBENABLE: EPERM (%s)", strerror(r));
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, true);
	dtt_check(r == EPERM, "unpriv: PRBENABLE, OpenBSD number: EPERM (%s)",
	    strerror(r));
	on = 1;
	r = dtioc(fd, DTIOCRECORD, &on, false);
	dtt_check(r == EPERM, "unpriv: RECORD: EPERM (%s)", strerror(r));
	r = dtioc(fd, DTIOCPRBDISABLE, &dtrq, false);
	dtt_check(r == EPERM, "unpriv: PRBDISABLE: EPERM (%s)", strerror(r));
	memset(&dtrv, 0, sizeof(dtrv));
	dtrv.dtrv_pid = getpid();
	dtrv.dtrv_va = (caddr_t)(uintptr_t)priv_child;
	r = dtioc(fd, DTIOCRDVNODE, &dtrv, false);
	dtt_check(r == EPERM, "unpriv: RDVNODE: EPERM (%s)", strerror(r));
	close(fd);
}

static void
priv_fork(struct itest *it, gid_t gid, bool may_open)
{
	unsigned int counts[2];
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) == -1) {
		dtt_check(false, "unpriv: pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == -1) {
		dtt_check(false, "unpriv: fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		dtt_npass = dtt_nfail = 0;
		priv_child(it, gid, may_open);
		counts[0] = dtt_npass;
		counts[1] = dtt_nfail;
		if (write(fds[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(1);
		fflush(stdout);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], counts, sizeof(counts)) != sizeof(counts)) {
		counts[0] = 0;
		counts[1] = 1;
		printf("FAIL - unpriv: the child died\n");
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	dtt_npass += counts[0];
	dtt_nfail += counts[1];
}

void
itest_unpriv(struct itest *it)
{
	struct stat st;
	gid_t other;
	int r;

	if (!dtt_check(geteuid() == 0, "unpriv: checks run as root"))
		return;
	r = stat(it->it_dev, &st);
	if (!dtt_check(r == 0 && st.st_uid == 0,
	    "unpriv: node owned by root, mode %04o gid %d",
	    (unsigned int)(st.st_mode & 07777), (int)st.st_gid))
		return;
	/* Never open to others; 0660 with --group, else 0600. */
	dtt_check((st.st_mode & 07777) == 0600 ||
	    ((st.st_mode & 07777) == 0660 && st.st_gid != 0),
	    "unpriv: mode is 0600, or 0660 for a group");
	other = st.st_gid == NOBODY - 1 ? NOBODY - 2 : NOBODY - 1;
	if ((st.st_mode & 060) == 060)
		priv_fork(it, st.st_gid, true);
	priv_fork(it, other, false);
}
