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
 * The ingest socket's maps query (UDT_HELLO_MAPS, udt_wire.h): a pid's
 * executable file mappings with their paths, live or as dtd kept them
 * (dt_pidmaps.h), for btrace to symbolise the stacks of processes that
 * have exited.  Root only, like DTIOCRDVNODE, whose answer it completes
 * with the file names.
 */
#include <sys/socket.h>
#include <sys/uio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_ksys.h"
#include "dt_pidmaps.h"

static void
dti_maps_error(int fd, int error)
{
	struct udt_maps_hdr h;

	memset(&h, 0, sizeof(h));
	h.umh_magic = UDT_MAGIC;
	h.umh_version = UDT_VERSION;
	h.umh_error = (uint32_t)error;
	(void)send(fd, &h, sizeof(h), MSG_NOSIGNAL);
}

/*
 * A serve worker, after the hello and the request, with the
 * connection's send timeout set; no lock held (dt_pm_current() reads
 * /proc).
 */
/* The length of m's path if it goes on the wire, else 0. */
static size_t
dti_maps_pathlen(const struct dt_pm_map *m)
{
	size_t len;

	if (m->pm_path == NULL ||
	    (len = strlen(m->pm_path)) >= UDT_MAPS_PATHMAX)
		return 0;
	return len;
}

void
dt_ingest_maps(int fd, uid_t uid, const struct udt_maps_req *rq)
{
	struct udt_maps_hdr h;
	struct udt_maps_ent e;
	const struct dt_pm_map *m;
	struct dt_pm_snap *snap;
	struct iovec iov[2];
	struct msghdr msg;
	size_t i, len;
	uint32_t sent;
	ssize_t want;

	/* Root's, or a dtd without root's own user's (dtd_unpriv.c). */
	if (uid != 0 && uid != geteuid()) {
		dti_maps_error(fd, EPERM);
		return;
	}
	if (rq->umr_pid <= 0 || (snap = dt_pm_current(rq->umr_pid)) == NULL) {
		dti_maps_error(fd, rq->umr_pid > 0 && errno == ENOMEM ?
		    ENOMEM : ESRCH);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.umh_magic = UDT_MAGIC;
	h.umh_version = UDT_VERSION;
	for (i = 0; i < snap->ps_n && h.umh_count < UDT_MAPS_MAXENT; i++)
		if (dti_maps_pathlen(&snap->ps_maps[i]) != 0)
			h.umh_count++;
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		goto out;
	for (i = 0, sent = 0; i < snap->ps_n && sent < h.umh_count; i++) {
		m = &snap->ps_maps[i];
		if ((len = dti_maps_pathlen(m)) == 0)
			continue;
		sent++;
		memset(&e, 0, sizeof(e));
		e.ume_start = m->pm_start;
		e.ume_end = m->pm_end;
		e.ume_off = m->pm_off;
		e.ume_size = m->pm_size;
		e.ume_pathlen = (uint32_t)len;
		iov[0].iov_base = &e;
		iov[0].iov_len = sizeof(e);
		iov[1].iov_base = m->pm_path;
		iov[1].iov_len = len;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = 2;
		want = (ssize_t)(sizeof(e) + len);
		/* a reader that stops reading costs us the send timeout */
		if (sendmsg(fd, &msg, MSG_NOSIGNAL) != want)
			break;
	}
out:
	dt_pm_put(snap);
}

/*
 * The helper waits for this answer with the process stopped: whatever
 * dt_ksys_arm() decided, it gets one (the helper's own timeout covers
 * a dtd that never answers).
 */
void
dt_ingest_karm(int fd, const struct ucred *cr, const struct udt_hello *hp,
    const struct udt_maps_req *rq)
{
	/* two questions in one: neither is answered */
	if (hp->uh_flags & UDT_HELLO_MAPS) {
		dti_maps_error(fd, EINVAL);
		return;
	}
	dti_maps_error(fd, dt_ksys_arm(cr->pid, cr->uid, cr->gid,
	    rq->umr_pid));
}
