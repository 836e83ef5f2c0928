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
 * The thread cache of dt_tp_task.h.  A slot per tid hash; the process
 * of a thread does not change while it lives, its name does (prctl,
 * exec), so names are re-read from /proc after a second unless a record
 * brought a fresher one.
 *
 * Locks used to protect the globals in this file:
 *	[R]	the tracepoint reader thread
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dev/dt/dtvar.h>

#include "dt_clock.h"
#include "dt_proc.h"
#include "dt_tp_perf.h"
#include "dt_tp_task.h"

#define DT_TP_TASKSLOTS	8192		/* power of 2 */
#define DT_TP_COMMTTL	1000000000ULL	/* ns a name is trusted */

struct dt_tp_task {
	pid_t		tt_tid;			/* [R] 0: empty */
	pid_t		tt_tgid;		/* [R] */
	uint64_t	tt_stamp;		/* [R] name's age, 0: none */
	uint64_t	tt_cns;			/* [R] its last rename's time */
	char		tt_prev[DTMAXCOMLEN];	/* [R] its name before that */
	char		tt_comm[DTMAXCOMLEN];	/* [R] */
};

static struct dt_tp_task dt_tp_tasks[DT_TP_TASKSLOTS];	/* [R] */

static struct dt_tp_task *
dt_tp_task_slot(pid_t tid)
{
	return &dt_tp_tasks[(unsigned int)tid & (DT_TP_TASKSLOTS - 1)];
}

void
dt_tp_task_note(pid_t tid, pid_t tgid, const char *comm)
{
	struct dt_tp_task *t = dt_tp_task_slot(tid);

	if (tid <= 0)
		return;
	if (t->tt_tid != tid || t->tt_tgid != tgid) {
		t->tt_tid = tid;
		t->tt_tgid = tgid;
		t->tt_stamp = 0;
		t->tt_cns = 0;
	}
	if (comm != NULL) {
		strncpy(t->tt_comm, comm, DTMAXCOMLEN - 1);
		t->tt_comm[DTMAXCOMLEN - 1] = '\0';
		t->tt_stamp = dt_clock_ns(CLOCK_MONOTONIC_COARSE);
	}
}

void
dt_tp_task_rename(pid_t tid, pid_t tgid, const char *comm, uint64_t ns)
{
	struct dt_tp_task *t = dt_tp_task_slot(tid);

	if (tid <= 0 || comm == NULL)
		return;
	if (t->tt_tid == tid && t->tt_tgid == tgid && ns != 0 &&
	    ns < t->tt_cns)
		return;
	if (t->tt_tid == tid && t->tt_tgid == tgid && t->tt_stamp != 0)
		memcpy(t->tt_prev, t->tt_comm, DTMAXCOMLEN);
	else
		memset(t->tt_prev, 0, DTMAXCOMLEN);
	dt_tp_task_note(tid, tgid, comm);
	t->tt_cns = ns;
}

int
dt_tp_task_status(pid_t tid, pid_t *tgid, char *comm)
{
	char path[64], buf[1024], *p, *e;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (dt_proc_read(path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "\nTgid:\t")) == NULL)
		return -1;
	*tgid = (pid_t)atoi(p + 7);
	memset(comm, 0, DTMAXCOMLEN);
	if (strncmp(buf, "Name:\t", 6) == 0) {
		p = buf + 6;
		e = strchr(p, '\n');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len > DTMAXCOMLEN - 1)
			len = DTMAXCOMLEN - 1;
		memcpy(comm, p, len);
	}
	return 0;
}

/* Fill t for tid from /proc/TID/status: Name and Tgid.  0 or -1. */
static int
dt_tp_task_read(struct dt_tp_task *t, pid_t tid)
{
	pid_t tgid;
	char comm[DTMAXCOMLEN];

	if (dt_tp_task_status(tid, &tgid, comm) != 0)
		return -1;
	if (t->tt_tid != tid)
		t->tt_cns = 0;
	t->tt_tid = tid;
	t->tt_tgid = tgid;
	memcpy(t->tt_comm, comm, sizeof(t->tt_comm));
	t->tt_stamp = dt_clock_ns(CLOCK_MONOTONIC_COARSE);
	return 0;
}

void
dt_tp_task_fork(pid_t tid, pid_t tgid, pid_t ptid, pid_t ppid, uint64_t ns)
{
	struct dt_tp_task *t = dt_tp_task_slot(tid), *p;
	char comm[DTMAXCOMLEN];

	if (tid <= 0 || ptid <= 0 || tid == ptid || ns == 0)
		return;
	p = dt_tp_task_slot(ptid);
	/* a maker this cache has no name of: /proc's, cached for its next */
	if ((p->tt_tid != ptid || p->tt_tgid != ppid || p->tt_stamp == 0) &&
	    (dt_tp_task_read(p, ptid) != 0 || p->tt_tgid != ppid))
		return;
	if (ns < p->tt_cns && p->tt_prev[0] != '\0')
		memcpy(comm, p->tt_prev, DTMAXCOMLEN);
	else
		memcpy(comm, p->tt_comm, DTMAXCOMLEN);
	if (comm[0] == '\0')
		return;
	/*
	 * An exec or rename of it read before the fork (another CPU's
	 * buffer first): its name from before that is the maker's.
	 */
	if (t->tt_tid == tid && t->tt_tgid == tgid && t->tt_cns > ns) {
		if (t->tt_prev[0] == '\0')
			memcpy(t->tt_prev, comm, DTMAXCOMLEN);
		return;
	}
	dt_tp_task_rename(tid, tgid, comm, ns);
}

void
dt_tp_task_kname(const char *kcomm, pid_t pid, pid_t tid, char *comm)
{
	char esc[DTMAXCOMLEN], proc[DTMAXCOMLEN];
	size_t i, n = 0;
	pid_t tgid;

	/* as proc_task_name() escapes it: a newline and a backslash */
	memset(esc, 0, sizeof(esc));
	for (i = 0; i < 16 && kcomm[i] != '\0' && n < sizeof(esc) - 1; i++) {
		if (kcomm[i] == '\n' || kcomm[i] == '\\') {
			esc[n++] = '\\';
			if (n == sizeof(esc) - 1)
				break;
			esc[n++] = kcomm[i] == '\n' ? 'n' : '\\';
		} else
			esc[n++] = kcomm[i];
	}
	memcpy(comm, esc, DTMAXCOMLEN);
	/* the same thread, not renamed since: its longer name */
	if (tid > 0 && n > 0 && dt_tp_task_status(tid, &tgid, proc) == 0 &&
	    tgid == pid && strncmp(proc, esc, n) == 0)
		memcpy(comm, proc, DTMAXCOMLEN);
}

pid_t
dt_tp_task_tgid(pid_t tid)
{
	struct dt_tp_task *t = dt_tp_task_slot(tid);

	if (tid <= 0)
		return 0;
	if (t->tt_tid == tid)
		return t->tt_tgid;
	if (dt_tp_task_read(t, tid) == 0)
		return t->tt_tgid;
	return tid;
}

void
dt_tp_task_comm(pid_t pid, pid_t tid, unsigned int cpu, uint64_t ns,
    char *comm)
{
	struct dt_tp_task *t = dt_tp_task_slot(tid);

	memset(comm, 0, DTMAXCOMLEN);
	if (tid == 0) {
		snprintf(comm, DTMAXCOMLEN, "idle%u", cpu);
		return;
	}
	if (t->tt_tid != tid || t->tt_tgid != pid || t->tt_stamp == 0 ||
	    dt_clock_ns(CLOCK_MONOTONIC_COARSE) - t->tt_stamp > DT_TP_COMMTTL) {
		if (dt_tp_task_read(t, tid) != 0) {
			/*
			 * Gone.  A name a record of the kernel's gave it
			 * (an exec, a rename: tt_cns) stays its name: the
			 * feed that read that record reads its later ones
			 * too (a tree's spawner, its calls read after its
			 * exit, 100 execs of its children past the TTL).
			 * Otherwise no name rather than a stale one: a
			 * name read from /proc may predate an exec that
			 * no record told.
			 */
			if (t->tt_tid != tid || t->tt_tgid != pid ||
			    t->tt_cns == 0 || t->tt_comm[0] == '\0') {
				t->tt_tid = tid;
				t->tt_tgid = pid;
				t->tt_cns = 0;
				memset(t->tt_comm, 0, sizeof(t->tt_comm));
				memset(t->tt_prev, 0, sizeof(t->tt_prev));
			}
			t->tt_stamp = dt_clock_ns(CLOCK_MONOTONIC_COARSE);
		}
	}
	/* A record from before the rename read after it: the old name. */
	if (ns != 0 && ns < t->tt_cns && t->tt_prev[0] != '\0')
		memcpy(comm, t->tt_prev, DTMAXCOMLEN);
	else
		memcpy(comm, t->tt_comm, DTMAXCOMLEN);
}

void
dt_tp_evt_begin(struct dt_evt *ev, const struct dt_tp_sample *s,
    uint64_t flags, bool stacks)
{
	memset(ev, 0, sizeof(*ev));
	ev->dtev_pid = s->ts_pid;
	ev->dtev_tid = s->ts_tid;
	ev->dtev_tsp = dt_clock_ts(s->ts_ns);
	if (stacks) {
		ev->dtev_kstack = *s->ts_kstack;
		ev->dtev_ustack = *s->ts_ustack;
	}
	if (flags & DTEVT_EXECNAME)
		dt_tp_task_comm(s->ts_pid, s->ts_tid, s->ts_cpu, s->ts_ns,
		    ev->dtev_comm);
}
