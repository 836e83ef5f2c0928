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
 * The kernel feed's view of the traced processes (dt_sys_kern.h).
 *
 * The ingest transport knows the attached tracees; asking it for every
 * kernel event would take its lock a million times a second, so the
 * reader keeps a snapshot, sorted, refreshed at most every
 * DT_SK_REFRESH_NS, and decides by it:
 *
 *  - a process attached at the last refresh is the library's: all of
 *    its kernel events are dropped, whenever they happened (the
 *    launcher's loader calls made before the attach are the library's
 *    too, recorded later with their real times);
 *  - a process that has left the list (it exited; or it exec'd an image
 *    that does not attach, a static binary) is remembered with the time
 *    of the refresh that missed it: its events up to then are dropped,
 *    since they were made while it was, or may have been, attached;
 *    those after are the kernel's alone.  Kept DT_SK_GONE_NS, far
 *    longer than an event stays in perf's buffers before the reader
 *    hands it over (a 20 ms round).
 *
 * The windows this leaves, each no wider than a refresh plus a perf
 * round (about 20 ms), and where a call is missed, never counted twice
 * (but the first): a process's calls before it attaches, drained after
 * it did, are the kernel's and dropped (the library records only the
 * loader's); the first calls of an image that stops being traced (a
 * static binary exec'd by a traced process), until the refresh that
 * sees it gone, are dropped; a pid reused within that time loses its
 * first calls the same way.  The one way to count twice: a launched
 * process's loader calls, when perf's buffer is drained between its
 * execve and its attach (a few milliseconds), are the kernel's and later
 * the library's.
 *
 * Locks used to protect the globals in this file:
 *	[R]	the kernel feed's reader thread (dt_ksys_traced_fn)
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_ingest.h"
#include "dt_sys_kern.h"

#define DT_SK_REFRESH_NS	2000000ULL	/* 2 ms */
#define DT_SK_GONE_NS		500000000ULL	/* 0.5 s */
#define DT_SK_MAXGONE		4096

struct dt_sk_gone {
	pid_t		sg_pid;
	uint64_t	sg_ns;		/* CLOCK_REALTIME it was missed at */
};

static pid_t		*dt_sk_cur;		/* [R] sorted */
static size_t		 dt_sk_ncur, dt_sk_maxcur;	/* [R] */
static pid_t		*dt_sk_new;		/* [R] the next snapshot */
static struct dt_sk_gone dt_sk_gone[DT_SK_MAXGONE];	/* [R] */
static size_t		 dt_sk_ngone;		/* [R] */
static uint64_t		 dt_sk_last;		/* [R] CLOCK_MONOTONIC */

static uint64_t
dt_sk_clock(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int
dt_sk_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static bool
dt_sk_attached(pid_t pid)
{
	return dt_sk_ncur > 0 && bsearch(&pid, dt_sk_cur, dt_sk_ncur,
	    sizeof(pid_t), dt_sk_cmp) != NULL;
}

/* Take a new snapshot at realtime now.  [R] */
static void
dt_sk_refresh(uint64_t now)
{
	size_t n, i, j;
	pid_t *p;

	for (;;) {
		n = dt_ingest_tracees(dt_sk_new, dt_sk_maxcur);
		if (n <= dt_sk_maxcur)
			break;
		/* More than fit: grow both, keep the old snapshot. */
		if ((p = realloc(dt_sk_new, 2 * n * sizeof(pid_t))) == NULL)
			return;
		dt_sk_new = p;
		if ((p = realloc(dt_sk_cur, 2 * n * sizeof(pid_t))) == NULL)
			return;
		dt_sk_cur = p;
		dt_sk_maxcur = 2 * n;
	}
	qsort(dt_sk_new, n, sizeof(pid_t), dt_sk_cmp);
	/* Forget the gone that are old enough, then add the new gone. */
	for (i = j = 0; i < dt_sk_ngone; i++)
		if (now - dt_sk_gone[i].sg_ns < DT_SK_GONE_NS)
			dt_sk_gone[j++] = dt_sk_gone[i];
	dt_sk_ngone = j;
	for (i = j = 0; i < dt_sk_ncur; i++) {
		while (j < n && dt_sk_new[j] < dt_sk_cur[i])
			j++;
		if (j < n && dt_sk_new[j] == dt_sk_cur[i])
			continue;
		if (dt_sk_ngone == DT_SK_MAXGONE) {
			/* Full: the oldest goes (it is the first). */
			memmove(dt_sk_gone, dt_sk_gone + 1,
			    (DT_SK_MAXGONE - 1) * sizeof(dt_sk_gone[0]));
			dt_sk_ngone--;
		}
		dt_sk_gone[dt_sk_ngone].sg_pid = dt_sk_cur[i];
		dt_sk_gone[dt_sk_ngone].sg_ns = now;
		dt_sk_ngone++;
	}
	p = dt_sk_cur;
	dt_sk_cur = dt_sk_new;
	dt_sk_new = p;
	dt_sk_ncur = n;
}

bool
dt_sys_kern_traced(pid_t pid, uint64_t ns)
{
	uint64_t mono = dt_sk_clock(CLOCK_MONOTONIC);
	size_t i;

	if (dt_sk_last == 0 || mono - dt_sk_last >= DT_SK_REFRESH_NS) {
		dt_sk_refresh(dt_sk_clock(CLOCK_REALTIME));
		dt_sk_last = mono;
	}
	if (dt_sk_attached(pid))
		return true;
	for (i = 0; i < dt_sk_ngone; i++)
		if (dt_sk_gone[i].sg_pid == pid && ns <= dt_sk_gone[i].sg_ns)
			return true;
	return false;
}
