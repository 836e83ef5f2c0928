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
 * sec_trust MODE DTD [ARGS...]
 *
 * Whom the parts of userdt trust, played by throwaway ordinary users
 * against a private dtd:
 *
 *   fdleak	a flood of hellos that carry the tracee flag but are
 *		answered early (stats, maps, a wrong version) leaves dtd's
 *		descriptor count where it was, and a tracee is still welcomed
 *
 * Each mode starts its own dtd on a temporary path and stops it by pid.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"

static struct dtt_user	st_user;	/* the ordinary user who attacks */
static const char	*st_dtd;

/* Entries of /proc/PID/fd, or -1. */
static int
count_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The syscall probes a tracee says it has, from dtd's list; 0 if none. */
static uint32_t
nsys_of(const struct dtt_dtd *dd)
{
	struct dtioc_probe_info *pi;
	uint32_t n = 0;
	size_t np;
	int fd;

	if ((fd = dtt_open(dd->dd_dev)) == -1)
		return 0;
	if ((pi = dtt_plist(fd, &np)) != NULL)
		n = dtt_nsys(pi, np, NULL);
	free(pi);
	close(fd);
	return n;
}

#define FDLEAK_EACH	1000	/* hellos of each early-answered kind */

struct fdleak_arg {
	const char	*sock;
	uint32_t	 nsys;
};

/*
 * As the user: FDLEAK_EACH hellos of each kind that dtd answers before
 * any ring, each flagged as a tracee's, every answer read to its end
 * (dtd closed the connection, so it is done with it).  0, or an errno.
 */
static int
fdleak_flood(void *arg)
{
	const struct fdleak_arg *fa = arg;
	struct {
		struct udt_hello	h;
		struct udt_maps_req	rq;
	} m;
	char buf[4096];
	size_t len;
	ssize_t n;
	int i, fd;

	for (i = 0; i < 3 * FDLEAK_EACH; i++) {
		memset(&m, 0, sizeof(m));
		m.h.uh_magic = UDT_MAGIC;
		m.h.uh_version = UDT_VERSION;
		m.h.uh_nprobes = fa->nsys;
		len = sizeof(m.h);
		switch (i % 3) {
		case 0:
			m.h.uh_flags = UDT_HELLO_TRACEE | UDT_HELLO_STATS;
			break;
		case 1:
			m.h.uh_flags = UDT_HELLO_TRACEE | UDT_HELLO_MAPS;
			m.rq.umr_pid = (int32_t)getpid();
			len = sizeof(m);
			break;
		default:
			m.h.uh_flags = UDT_HELLO_TRACEE;
			m.h.uh_version = UDT_VERSION + 1;
			break;
		}
		if ((fd = dtt_connect(fa->sock)) == -1)
			return errno;
		if (send(fd, &m, len, MSG_NOSIGNAL) != (ssize_t)len) {
			close(fd);
			return EIO;
		}
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			;
		close(fd);
		if (n < 0)
			return errno;
	}
	return 0;
}

/* As the user: a tracee's handshake (0 when welcomed). */
static int
hello_as_user(void *arg)
{
	const struct fdleak_arg *fa = arg;
	struct udt_welcome w;
	int fds[2], fd;

	if ((fd = dtt_tracee_hello(fa->sock, fa->nsys, &w, fds)) == -1)
		return errno ? errno : EPROTO;
	close(fds[0]);
	close(fds[1]);
	close(fd);
	return 0;
}

static void
run_fdleak(void)
{
	struct dtt_dtd dd;
	struct fdleak_arg fa;
	char *args[] = { "--no-ksyms", NULL };
	int before, after, e;

	if (!dtt_check(dtt_dtd_init(&dd, "udt-trust") == 0 &&
	    dtt_dtd_start(&dd, st_dtd, args, NULL, 0) != -1, "a private dtd"))
		goto out;
	fa.sock = dd.dd_sock;
	fa.nsys = nsys_of(&dd);
	if (!dtt_check(fa.nsys != 0, "dtd lists %u syscall probes", fa.nsys))
		goto out;
	/* One served tracee first: whatever dtd keeps for good is open. */
	e = dtt_user_run(&st_user, hello_as_user, &fa);
	dtt_check(e == 0, "%s's tracee is welcomed (%s)", st_user.du_name,
	    e > 0 ? strerror(e) : e == 0 ? "yes" : "no child");
	before = count_fds(dd.dd_pid);
	e = dtt_user_run(&st_user, fdleak_flood, &fa);
	dtt_check(e == 0, "%s says %d early-answered tracee hellos "
	    "(%s)", st_user.du_name, 3 * FDLEAK_EACH,
	    e > 0 ? strerror(e) : e == 0 ? "all answered" : "no child");
	after = count_fds(dd.dd_pid);
	/* A little slack for what dtd's other threads hold for a moment. */
	dtt_check(before > 0 && after >= 0 && after <= before + 4,
	    "dtd's descriptors: %d before, %d after", before, after);
	e = dtt_user_run(&st_user, hello_as_user, &fa);
	dtt_check(e == 0, "a tracee is still welcomed after (%s)",
	    e > 0 ? strerror(e) : e == 0 ? "yes" : "no child");
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped");
out:
	dtt_dtd_fini(&dd, true);
}

int
main(int argc, char *argv[])
{
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: sec_trust fdleak DTD\n");
		return 2;
	}
	st_dtd = argv[2];
	if (!dtt_check(dtt_user_add(&st_user) == 0, "a throwaway user %s",
	    st_user.du_name))
		return dtt_done();
	if (strcmp(argv[1], "fdleak") == 0)
		run_fdleak();
	else
		dtt_check(false, "no test mode '%s'", argv[1]);
	dtt_user_del(&st_user);
	status = dtt_done();
	return status || dtt_npass < 2;
}
