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
 * The maps query's client (providers/syscall/launch/udt_mapsq.c) against a fake
 * dtd that signals the asking thread while it waits for the answer: once
 * before any byte of it, once with half its header received.  A
 * caller with a handler that does not restart (btrace's SIGCHLD when its
 * -c command ends) must still get the whole answer: the receive it was
 * in ends short, and the client goes on.  Also a refusal and a truncated
 * answer, which must fail with the errno the header names and EPROTO.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <err.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "udt_mapsq.h"

enum fake_mode { FAKE_SIGNAL_FIRST, FAKE_SIGNAL_MIDDLE, FAKE_REFUSE,
    FAKE_TRUNCATE };

struct fake {
	int		 fk_lfd;
	enum fake_mode	 fk_mode;
	pthread_t	 fk_client;
	pid_t		 fk_client_tid;
	int		 fk_req_pid;	/* what the client asked for */
};

static atomic_int	handled;
static const char	*paths[2] = { "/usr/lib/one.so", "/usr/bin/two" };

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* The client thread's state letter from /proc: 'S' once it blocks. */
static char
thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if ((f = fopen(path, "r")) == NULL)
		return '?';
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return '?';
	return p[2];
}

#define WAIT_NS	10000000000ULL	/* for the client to block, to handle */

/*
 * Signal the client once it sleeps in its receive (the only wait left
 * once its request is in), and return after its handler ran; 0, or -1
 * when either took past WAIT_NS (the client failed some other way).
 */
static int
interrupt_client(struct fake *fk)
{
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) + WAIT_NS;
	int before = atomic_load(&handled);

	while (thread_state(fk->fk_client_tid) != 'S')
		if (dtt_clock_ns(CLOCK_MONOTONIC) >= deadline)
			return -1;
		else
			sched_yield();
	pthread_kill(fk->fk_client, SIGUSR1);
	while (atomic_load(&handled) == before)
		if (dtt_clock_ns(CLOCK_MONOTONIC) >= deadline)
			return -1;
		else
			sched_yield();
	return 0;
}

static void *
fake_dtd(void *arg)
{
	struct fake *fk = arg;
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;
	struct udt_maps_hdr h;
	struct udt_maps_ent e;
	struct pollfd pfd = { fk->fk_lfd, POLLIN, 0 };
	int fd = -1, i;

	/* A client that never connects ends the fake, not the test. */
	if (poll(&pfd, 1, (int)(WAIT_NS / 1000000)) != 1 ||
	    (fd = accept(fk->fk_lfd, NULL, NULL)) == -1 ||
	    recv(fd, &q, sizeof(q), MSG_WAITALL) != (ssize_t)sizeof(q)) {
		if (fd != -1)
			close(fd);
		return NULL;
	}
	fk->fk_req_pid = q.h.uh_flags == UDT_HELLO_MAPS ? q.r.umr_pid : -1;
	if (fk->fk_mode == FAKE_SIGNAL_FIRST && interrupt_client(fk) != 0)
		goto out;
	memset(&h, 0, sizeof(h));
	h.umh_magic = UDT_MAGIC;
	h.umh_version = UDT_VERSION;
	if (fk->fk_mode == FAKE_REFUSE)
		h.umh_error = ESRCH;
	else
		h.umh_count = 2;
	/*
	 * Half the header, then the signal: the receive that waits for all
	 * of it returns short, with part of it in the buffer.
	 */
	if (fk->fk_mode == FAKE_SIGNAL_MIDDLE) {
		(void)send(fd, &h, sizeof(h) / 2, MSG_NOSIGNAL);
		if (interrupt_client(fk) != 0)
			goto out;
		(void)send(fd, (char *)&h + sizeof(h) / 2,
		    sizeof(h) - sizeof(h) / 2, MSG_NOSIGNAL);
	} else
		(void)send(fd, &h, sizeof(h), MSG_NOSIGNAL);
	for (i = 0; i < 2 && fk->fk_mode != FAKE_REFUSE; i++) {
		memset(&e, 0, sizeof(e));
		e.ume_start = 0x400000 + 0x100000 * (uint64_t)i;
		e.ume_end = e.ume_start + 0x1000;
		e.ume_pathlen = (uint32_t)strlen(paths[i]);
		(void)send(fd, &e, sizeof(e), MSG_NOSIGNAL);
		if (fk->fk_mode == FAKE_TRUNCATE)
			break;
		(void)send(fd, paths[i], strlen(paths[i]), MSG_NOSIGNAL);
	}
out:
	close(fd);
	return NULL;
}

struct got {
	int	g_n;
	int	g_ok;
};

static int
got_one(void *arg, const struct udt_maps_ent *e, const char *path)
{
	struct got *g = arg;

	if (g->g_n < 2 && strcmp(path, paths[g->g_n]) == 0 &&
	    e->ume_start == 0x400000 + 0x100000 * (uint64_t)g->g_n)
		g->g_ok++;
	g->g_n++;
	return 0;
}

/* One query against a fake in mode; its return, errno and entries. */
static int
query(const char *sock, enum fake_mode mode, struct got *g, int *errp)
{
	struct sockaddr_un sun;
	struct fake fk;
	pthread_t thr;
	int rv;

	memset(&fk, 0, sizeof(fk));
	memset(g, 0, sizeof(*g));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	unlink(sock);
	if ((fk.fk_lfd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(fk.fk_lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fk.fk_lfd, 4) == -1)
		err(1, "fake dtd");
	fk.fk_mode = mode;
	fk.fk_client = pthread_self();
	fk.fk_client_tid = gettid();
	if (pthread_create(&thr, NULL, fake_dtd, &fk) != 0)
		errx(1, "pthread_create");
	rv = udt_mapsq(sock, 4242, got_one, g);
	*errp = errno;
	pthread_join(thr, NULL);
	close(fk.fk_lfd);
	unlink(sock);
	if (rv == 0 && fk.fk_req_pid != 4242)
		rv = -2;
	return rv;
}

int
main(void)
{
	char dir[] = "/tmp/udt-mapsq.XXXXXX", sock[128];
	struct sigaction sa;
	struct got g;
	int rv, error, before;

	if (mkdtemp(dir) == NULL)
		err(1, "mkdtemp");
	snprintf(sock, sizeof(sock), "%s/ingest.sock", dir);
	/* As btrace's SIGCHLD: no SA_RESTART, so waits end with EINTR. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	before = atomic_load(&handled);
	rv = query(sock, FAKE_SIGNAL_FIRST, &g, &error);
	dtt_check(rv == 0 && g.g_n == 2 && g.g_ok == 2 &&
	    atomic_load(&handled) == before + 1,
	    "signal before the answer: %d (%s), %d entries, %d right", rv,
	    rv ? strerror(error) : "ok", g.g_n, g.g_ok);

	before = atomic_load(&handled);
	rv = query(sock, FAKE_SIGNAL_MIDDLE, &g, &error);
	dtt_check(rv == 0 && g.g_n == 2 && g.g_ok == 2 &&
	    atomic_load(&handled) == before + 1,
	    "signal within the header: %d (%s), %d entries, %d right", rv,
	    rv ? strerror(error) : "ok", g.g_n, g.g_ok);

	rv = query(sock, FAKE_REFUSE, &g, &error);
	dtt_check(rv == -1 && error == ESRCH && g.g_n == 0,
	    "a refusal: -1 with the header's errno (%s)", strerror(error));

	rv = query(sock, FAKE_TRUNCATE, &g, &error);
	dtt_check(rv == -1 && error == EPROTO && g.g_n == 0,
	    "an answer cut short: -1 with EPROTO (%s)", strerror(error));

	rmdir(dir);
	return dtt_done();
}
