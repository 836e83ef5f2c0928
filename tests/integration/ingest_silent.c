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
 * ingest_silent DTD
 *
 * Clients of the ingest socket that connect and say nothing, or half a
 * hello, from root and from another user, must not hold up a tracee's
 * handshake: a traced program gives up after 2 s and runs untraced.
 * With 50 such connections from root and 40 from nobody waiting, a
 * tracee's handshake and a stats query must be answered at once, and
 * the silent connections closed by dtd in the end.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NSILENT		40	/* per user */
#define NPARTIAL	10	/* root's, with half a hello */
#define NOBODY		65534
#define FAST_MS		1000	/* half the preload library's patience */

/* Milliseconds since t0, a dtt_clock_ns(CLOCK_MONOTONIC). */
static double
ms_since(uint64_t t0)
{
	return (double)(dtt_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;
}

/*
 * Wait up to ms for dtd to close fd: 1 when it did (EOF, or a reset when
 * it closed with our bytes unread).
 */
static int
closed_within(int fd, int ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	ssize_t n;
	char c;

	if (poll(&pfd, 1, ms) != 1)
		return 0;
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n == -1 && errno == ECONNRESET);
}

int
main(int argc, char *argv[])
{
	static int silent[NSILENT + NPARTIAL];
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct udt_welcome w;
	struct udt_stats us;
	uint64_t t0;
	uint32_t magic = UDT_MAGIC, nsys = 0;
	size_t npi, i;
	int fd = -1, sfd, fds[2], go[2] = { -1, -1 }, up[2], n, status;
	char c;
	pid_t kid = -1;
	double ms;

	if (argc != 2) {
		fprintf(stderr, "usage: ingest_silent DTD\n");
		return 2;
	}
	if (st_setup(&dd, "udt-silent", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	for (i = 0; i < npi; i++)
		if (strcmp(pi[i].dtpi_prov, "syscall") == 0)
			nsys++;

	/* Another user's silent connections, held by a child. */
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0)
		goto out;
	if ((kid = fork()) == 0) {
		static int mine[NSILENT];

		close(go[1]);
		close(up[0]);
		if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(1);
		for (n = 0; n < NSILENT; n++)
			if ((mine[n] = dtt_connect(dd.dd_sock)) == -1)
				_exit(1);
		(void)write(up[1], "u", 1);
		(void)read(go[0], &c, 1);	/* until the parent is done */
		/* Not kept forever either: 2 when dtd left one open. */
		for (n = 0; n < NSILENT; n++)
			if (!closed_within(mine[n], 5000))
				_exit(2);
		_exit(0);
	}
	close(go[0]);
	go[0] = -1;
	close(up[1]);
	n = (int)read(up[0], &c, 1);
	close(up[0]);
	if (!dtt_check(kid > 0 && n == 1, "%d silent connections from uid %d",
	    NSILENT, NOBODY))
		goto out;

	/* Root's: silent ones, then ones that stop after the magic. */
	for (n = 0; n < NSILENT + NPARTIAL; n++) {
		if ((silent[n] = dtt_connect(dd.dd_sock)) == -1)
			break;
		if (n >= NSILENT &&
		    send(silent[n], &magic, sizeof(magic), 0) != sizeof(magic))
			break;
	}
	if (!dtt_check(n == NSILENT + NPARTIAL, "%d silent and %d half "
	    "hellos from root", NSILENT, NPARTIAL))
		goto out;

	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	sfd = dtt_tracee_hello(dd.dd_sock, nsys, &w, fds);
	ms = ms_since(t0);
	dtt_check(sfd >= 0 && fds[0] >= 0 && fds[1] >= 0 && ms < FAST_MS,
	    "a tracee's handshake answered in %.1f ms", ms);
	if (sfd >= 0) {
		close(sfd);
		close(fds[0]);
		close(fds[1]);
	}
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	n = st_ingest_stats(dd.dd_sock, &us);
	ms = ms_since(t0);
	dtt_check(n == 0 && ms < FAST_MS, "a stats query answered in %.1f ms",
	    ms);

	/* Not kept forever: dtd closes the ones that never finished. */
	for (n = 0; n < NSILENT + NPARTIAL; n++)
		if (!closed_within(silent[n], 5000))
			break;
	dtt_check(n == NSILENT + NPARTIAL, "dtd closed all %d of them "
	    "(%d did not)", NSILENT + NPARTIAL, NSILENT + NPARTIAL - n);
out:
	for (n = 0; n < NSILENT + NPARTIAL; n++)
		if (silent[n] > 0)
			close(silent[n]);
	if (go[1] >= 0)
		close(go[1]);
	if (kid > 0) {
		status = dtt_stop(kid, 0, DTT_EXIT_MS);
		dtt_check(dtt_exited0(status), "dtd closed the other user's %d "
		    "too (child's status %#x)", NSILENT, status);
	}
	st_teardown(&dd, fd);
	free(pi);
	status = dtt_done();
	return status || dtt_npass < 7;
}
