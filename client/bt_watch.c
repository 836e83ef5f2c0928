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
 * btrace -p: the traced process must exist, and the run ends when it
 * exits.  The read loop blocks in the device, which offers nothing to
 * poll(2) together with a pidfd: a thread waits on the pidfd instead and
 * tells the loop as the -c command's end does.
 */
#include <sys/syscall.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "btrace.h"

static int		 pidfd = -1;

/* Before anything else is done: say at once that there is no such pid. */
void
watch_open(pid_t pid)
{
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd == -1 && errno == ESRCH)
		errx(1, "-p %d: no such process", (int)pid);
	if (pidfd == -1)
		/* an old kernel: filter only, as OpenBSD's -p */
		warn("-p %d: pidfd_open (btrace will not end when it exits)",
		    (int)pid);
}

static void *
watch_thread(void *arg)
{
	struct pollfd pfd;

	(void)arg;
	pfd.fd = pidfd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, -1) == -1 && errno == EINTR)
		;
	run_end_soon();
	return NULL;
}

/* Tracing is on: start waiting for the process's end. */
void
watch_start(void)
{
	pthread_t t;
	sigset_t all, omask;

	if (pidfd == -1)
		return;
	/* signals stay the main thread's, whose read(2) they interrupt */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &omask);
	if (pthread_create(&t, NULL, watch_thread, NULL) != 0)
		warnx("-p: cannot watch the process's end");
	else
		pthread_detach(t);
	pthread_sigmask(SIG_SETMASK, &omask, NULL);
}
