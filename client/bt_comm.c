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
 * btrace: process names by pid, for comm.  Apart from the symbols of
 * bt_syms.c, which only free the cache at the end (syms_cleanup()):
 * a name is learnt from the events and /proc, not from the files a
 * stack names.
 */
#include <sys/types.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace.h"

/*
 * Process names by pid, for events whose comm came empty (a profile
 * sample of a process that exited before dtd read its name): the name
 * an earlier event carried, else /proc/PID/comm read when the pid was
 * first seen, else the pid itself in brackets.  Never empty.
 */
#define COMM_CACHE	4096

struct comm_ent {
	pid_t	ce_pid;
	char	ce_comm[DTMAXCOMLEN];
} *comm_cache;

static struct comm_ent *
comm_slot(pid_t pid)
{
	if (comm_cache == NULL)
		comm_cache = xcalloc(COMM_CACHE, sizeof(*comm_cache));
	return &comm_cache[(unsigned int)pid % COMM_CACHE];
}

static int
comm_read(pid_t pid, char *comm)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, comm, DTMAXCOMLEN - 1);
	close(fd);
	if (n <= 0)
		return -1;
	if (comm[n - 1] == '\n')
		n--;
	comm[n] = '\0';
	return n > 0 ? 0 : -1;
}

/* Every event: remember the name of its process. */
void
comm_note(const struct dt_evt *ev)
{
	struct comm_ent *ce;

	if (ev->dtev_pid <= 0)
		return;
	ce = comm_slot(ev->dtev_pid);
	if (ev->dtev_comm[0] != '\0') {
		ce->ce_pid = ev->dtev_pid;
		memcpy(ce->ce_comm, ev->dtev_comm, DTMAXCOMLEN);
		ce->ce_comm[DTMAXCOMLEN - 1] = '\0';
		return;
	}
	if (ce->ce_pid == ev->dtev_pid)
		return;
	ce->ce_pid = ev->dtev_pid;
	if (comm_read(ev->dtev_pid, ce->ce_comm) == -1)
		snprintf(ce->ce_comm, sizeof(ce->ce_comm), "[%d]",
		    (int)ev->dtev_pid);
}

/* The event's comm, or what is known of its pid when it came empty. */
void
comm_of(const struct dt_evt *ev, char *comm, size_t size)
{
	struct comm_ent *ce;

	snprintf(comm, size, "%.*s", DTMAXCOMLEN, ev->dtev_comm);
	if (comm[0] != '\0' || ev->dtev_pid <= 0)
		return;
	ce = comm_slot(ev->dtev_pid);
	if (ce->ce_pid != ev->dtev_pid)
		comm_note(ev);
	snprintf(comm, size, "%s", ce->ce_comm);
}
