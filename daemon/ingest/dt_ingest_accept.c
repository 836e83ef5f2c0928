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
 * The ingest socket's accept loop.  Every user may connect (tracees are
 * unprivileged), so a client that connects and says nothing, or says
 * half of it, must hold up nobody else: a traced program gives up its
 * handshake after 2 s and runs untraced.  Connections therefore wait
 * here, all in one poll set, while their first message comes in, read
 * as it arrives without blocking; only a whole one goes on to
 * dt_ingest_dispatch(), which has it answered by a worker of its user.
 *
 * A tracee sends its hello right after connect(), so a connection is
 * read as soon as it is accepted, and whoever has a whole hello is
 * served before anyone is turned away: a burst of well-behaved tracees
 * (a program forking hundreds of children at once) is never dropped for
 * having arrived together.  A waiting connection is closed after
 * DTI_PENDING_MS; when its user has DTI_PENDING_UID others waiting, its
 * own oldest goes if it has waited DTI_PENDING_GRACE_MS (younger ones
 * may still be on their way to sending); when DTI_PENDING_MAX wait in
 * all, the oldest of the user with the most waiting goes: a flood of
 * silent connections from one user costs that user its own.  Every
 * connection closed so is counted and logged (dt_ingest_refused()).
 *
 * The tracee socket beside it (UDT_TRACEE_FMT) takes only tracees of
 * dtd's own version and systab (its name says them), who send nothing:
 * each connection is handed to a worker as it is accepted.  On the
 * ingest socket a tracee's connect woke this thread, most often on the
 * tracee's own CPU, before the tracee could send its hello: the thread
 * slept again and the hello woke it a second time.  A flood of
 * connections there costs what a flood of hellos did.
 *
 * Everything here runs on the accept thread; the pending table is its
 * own, no lock.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux 6.5; glibc 2.36 does not name it */
#endif

#include "dt_clock.h"
#include "dt_ingest.h"

#define DTI_PENDING_MAX	256	/* connections waiting for a hello */
#define DTI_PENDING_UID	16	/* of them, from one user, past grace */
#define DTI_PENDING_GRACE_MS 100	/* a tracee's hello on its way */
#define DTI_PENDING_MS	1000	/* longest wait for a whole hello */
#define DTI_ACCEPT_MAX	32	/* accepts per wakeup, then serve */

struct dti_pending {
	int			pn_fd;
	struct ucred		pn_cred;
	int			pn_pidfd;	/* SO_PEERPIDFD, or -1 */
	uint64_t		pn_since;	/* ms, CLOCK_MONOTONIC */
	size_t			pn_got;		/* bytes in pn_buf */
	union {
		struct {
			struct udt_hello	hello;
			struct udt_maps_req	req;
		}			m;
		char			buf[1];
	} pn_u;
};

/* The bytes come in one stream: no hole between the two. */
_Static_assert(offsetof(struct dti_pending, pn_u.m.req) ==
    offsetof(struct dti_pending, pn_u.m.hello) + sizeof(struct udt_hello),
    "hello and request back to back");

static struct dti_pending	dti_pn[DTI_PENDING_MAX];	/* accept thr */
static int			dti_npn;			/* accept thr */
static int			dti_spare = -1;	/* accept thr: for EMFILE */
static uid_t			dti_euid;	/* accept thr: dtd's own */

static uint64_t
dti_ms(void)
{
	return dt_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

/* Close pending connection i; why (counted, logged) unless it left. */
static void
dti_pn_drop(int i, const char *why)
{
	if (why != NULL)
		dt_ingest_refused(&dti_pn[i].pn_cred, why);
	close(dti_pn[i].pn_fd);
	if (dti_pn[i].pn_pidfd != -1)
		close(dti_pn[i].pn_pidfd);
	dti_pn[i] = dti_pn[--dti_npn];
}

/* Bytes of the first message: the hello, and a maps query's request. */
static size_t
dti_pn_want(const struct dti_pending *pn)
{
	size_t want = sizeof(pn->pn_u.m.hello);

	if (pn->pn_got >= want && (pn->pn_u.m.hello.uh_flags &
	    (UDT_HELLO_MAPS | UDT_HELLO_KARM | UDT_HELLO_KIN)))
		want += sizeof(pn->pn_u.m.req);
	return want;
}

/*
 * Take what arrived on pending connection i.  1: the message is whole;
 * 0: wait for more; -1: the peer left, sent too much or is not ours.
 */
static int
dti_pn_read(int i)
{
	struct dti_pending *pn = &dti_pn[i];
	size_t want;
	ssize_t n;

	for (;;) {
		want = dti_pn_want(pn);
		if (pn->pn_got == want)
			return 1;
		n = recv(pn->pn_fd, pn->pn_u.buf + pn->pn_got,
		    want - pn->pn_got, MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		pn->pn_got += (size_t)n;
		/* Not ours at all: no need to wait for the rest. */
		if (pn->pn_got >= sizeof(pn->pn_u.m.hello.uh_magic) &&
		    pn->pn_u.m.hello.uh_magic != UDT_MAGIC)
			return -1;
	}
}

/*
 * The peer's pidfd, for a hello that becomes a tracee: from the socket
 * (SO_PEERPIDFD, Linux 6.5), which names the process that connected even
 * if its pid was reused since.  Without one (an older kernel,
 * ENOPROTOOPT; no descriptor left, EMFILE) *pidfdp is -1 and serve opens
 * one by pid, or refuses the hello, counted.  False when the peer is
 * gone (EINVAL, ESRCH: it has no process any more): a pid opened in its
 * place could be another's, so the connection is closed as a peer that
 * left.
 */
static bool
dti_peer_pidfd(int fd, int *pidfdp)
{
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, pidfdp, &len) == 0)
		return true;
	*pidfdp = -1;
	return errno != EINVAL && errno != ESRCH;
}

/*
 * Read what pending connection i has sent: serve it when its message is
 * whole, close it when the peer left or is not ours.  1 when i left the
 * table (the last entry moved to i), 0 when it still waits.
 */
static int
dti_pn_settle(int i)
{
	struct dti_pending pn;
	int n;

	if ((n = dti_pn_read(i)) == 0)
		return 0;
	if (n < 0) {
		dti_pn_drop(i, NULL);
		return 1;
	}
	pn = dti_pn[i];
	dti_pn[i] = dti_pn[--dti_npn];
	/*
	 * Not for the counters a launcher asks for before each command
	 * (two calls less there), nor a maps query: neither uses a pidfd.
	 */
	if (!(pn.pn_u.m.hello.uh_flags & (UDT_HELLO_STATS |
	    UDT_HELLO_MAPS | UDT_HELLO_KARM | UDT_HELLO_KIN)) &&
	    !dti_peer_pidfd(pn.pn_fd, &pn.pn_pidfd)) {
		close(pn.pn_fd);
		return 1;
	}
	/* Served by a worker of its user: it may wait on the tracee. */
	dt_ingest_dispatch(pn.pn_fd, &pn.pn_cred, pn.pn_pidfd,
	    &pn.pn_u.m.hello, &pn.pn_u.m.req);
	return 1;
}

/* Settle every waiting connection of uid (all when uid is -1). */
static void
dti_pn_settle_all(uid_t uid)
{
	int i;

	/* Downwards: settling i moves the last, already seen, to i. */
	for (i = dti_npn; i-- > 0;)
		if (uid == (uid_t)-1 || dti_pn[i].pn_cred.uid == uid)
			(void)dti_pn_settle(i);
}

/* How many of uid's wait, and the oldest of them (-1 if none). */
static int
dti_pn_count(uid_t uid, int *oldestp)
{
	int i, n = 0, oldest = -1;

	for (i = 0; i < dti_npn; i++) {
		if (dti_pn[i].pn_cred.uid != uid)
			continue;
		n++;
		if (oldest < 0 || dti_pn[i].pn_since < dti_pn[oldest].pn_since)
			oldest = i;
	}
	*oldestp = oldest;
	return n;
}

/*
 * Make room for a connection of uid by the rules above, having served
 * first whoever can be.
 */
static void
dti_pn_room(uid_t uid, uint64_t now)
{
	int i, n, oldest, most = 0, victim = -1;

	if (dti_pn_count(uid, &oldest) >= DTI_PENDING_UID) {
		dti_pn_settle_all(uid);
		if (dti_pn_count(uid, &oldest) >= DTI_PENDING_UID &&
		    now - dti_pn[oldest].pn_since >= DTI_PENDING_GRACE_MS)
			dti_pn_drop(oldest, "its user has too many connections "
			    "waiting");
	}
	if (dti_npn < DTI_PENDING_MAX)
		return;
	dti_pn_settle_all((uid_t)-1);
	if (dti_npn < DTI_PENDING_MAX)
		return;
	/* The heaviest user pays, never one with a single connection. */
	for (i = 0; i < dti_npn; i++) {
		n = dti_pn_count(dti_pn[i].pn_cred.uid, &oldest);
		if (n > most) {
			most = n;
			victim = oldest;
		}
	}
	dti_pn_drop(victim, "too many connections waiting");
}

/*
 * A new connection joins the wait and is read at once.  Its pidfd is
 * taken once its hello is whole (dti_pn_settle()): the socket's peer is
 * fixed at connect, whenever it is asked for.
 */
static void
dti_pn_add(int fd, const struct ucred *cr)
{
	uint64_t now = dti_ms();

	dti_pn_room(cr->uid, now);
	memset(&dti_pn[dti_npn], 0, sizeof(dti_pn[dti_npn]));
	dti_pn[dti_npn].pn_fd = fd;
	dti_pn[dti_npn].pn_pidfd = -1;
	dti_pn[dti_npn].pn_cred = *cr;
	dti_pn[dti_npn].pn_since = now;
	dti_npn++;
	(void)dti_pn_settle(dti_npn - 1);
}

/*
 * Out of descriptors: a queued connection would keep the listening
 * socket readable and the loop spinning.  Spend the spare descriptor to
 * take it and close it at once, counted and logged, then take a spare
 * again.
 */
static void
dti_accept_nofile(int lfd)
{
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int fd;

	if (dti_spare != -1) {
		close(dti_spare);
		dti_spare = -1;
	}
	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) != -1) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0)
			memset(&cr, 0, sizeof(cr));
		dt_ingest_refused(&cr, "dtd is out of descriptors");
		close(fd);
	}
	dti_spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * A connection on the tracee socket: a tracee's hello of dtd's own
 * version, whole at connect, so served at once, with no wait in the
 * pending table and no second wakeup for it.
 */
static void
dti_tracee_take(int fd, const struct ucred *cr)
{
	static const struct udt_hello h = {
		.uh_magic = UDT_MAGIC,
		.uh_version = UDT_VERSION,
		.uh_nprobes = DT_SYS_NPROBES,
		.uh_flags = UDT_HELLO_TRACEE,
	};
	int pidfd;

	if (!dti_peer_pidfd(fd, &pidfd)) {
		close(fd);
		return;
	}
	/* No request: only a maps query or a helper's question has one. */
	dt_ingest_dispatch(fd, cr, pidfd, &h, NULL);
}

/*
 * Accept what is queued, up to DTI_ACCEPT_MAX: on the ingest socket into
 * the pending table, on the tracee socket (tracee) straight to a worker.
 */
static void
dti_accept_some(int lfd, bool tracee)
{
	struct ucred cr;
	socklen_t crlen;
	int fd, k;

	for (k = 0; k < DTI_ACCEPT_MAX; k++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			dti_accept_nofile(lfd);
			return;
		}
		if (fd < 0)
			return;
		crlen = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 ||
		    cr.pid <= 0) {
			close(fd);
			continue;
		}
		/* Without root, dtd serves its own user alone (dtd_unpriv.c). */
		if (dti_euid != 0 && cr.uid != dti_euid) {
			dt_ingest_refused(&cr, "not dtd's user (dtd runs "
			    "without root)");
			close(fd);
			continue;
		}
		if (tracee)
			dti_tracee_take(fd, &cr);
		else
			dti_pn_add(fd, &cr);
	}
}

/* The pending connections' entries in the poll set follow these. */
#define DTI_PFD_FIRST	3

void
dt_ingest_accept(int lfd, int tfd, int wakefd)
{
	static struct pollfd pfd[DTI_PFD_FIRST + DTI_PENDING_MAX];
	uint64_t now, left;
	int i, n, timeout, flags;

	/* accept4() until the queue is empty, never waiting on it. */
	if ((flags = fcntl(lfd, F_GETFL)) != -1)
		(void)fcntl(lfd, F_SETFL, flags | O_NONBLOCK);
	if (tfd != -1 && (flags = fcntl(tfd, F_GETFL)) != -1)
		(void)fcntl(tfd, F_SETFL, flags | O_NONBLOCK);
	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = wakefd;
	pfd[1].events = POLLIN;
	/* poll(2) passes over a negative descriptor. */
	pfd[2].fd = tfd;
	pfd[2].events = POLLIN;
	dti_euid = geteuid();
	dti_spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (;;) {
		now = dti_ms();
		timeout = -1;
		for (i = dti_npn; i-- > 0;) {
			if (now - dti_pn[i].pn_since >= DTI_PENDING_MS) {
				dti_pn_drop(i, "no whole hello in time");
				continue;
			}
			left = DTI_PENDING_MS - (now - dti_pn[i].pn_since);
			if (timeout < 0 || left < (uint64_t)timeout)
				timeout = (int)left;
		}
		for (i = 0; i < dti_npn; i++) {
			pfd[DTI_PFD_FIRST + i].fd = dti_pn[i].pn_fd;
			pfd[DTI_PFD_FIRST + i].events = POLLIN;
			pfd[DTI_PFD_FIRST + i].revents = 0;
		}
		n = poll(pfd, (nfds_t)(DTI_PFD_FIRST + dti_npn), timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || pfd[1].revents != 0)
			break;
		/* Downwards: settling i moves the last, already seen, to i. */
		for (i = dti_npn; i-- > 0;)
			if (pfd[DTI_PFD_FIRST + i].revents != 0)
				(void)dti_pn_settle(i);
		/* Tracees first: whole at once, and they wait on the answer. */
		if (pfd[2].revents & POLLIN)
			dti_accept_some(tfd, true);
		if (pfd[0].revents & POLLIN)
			dti_accept_some(lfd, false);
	}
	while (dti_npn > 0)
		dti_pn_drop(dti_npn - 1, NULL);
	if (dti_spare != -1)
		close(dti_spare);
	dti_spare = -1;
}
