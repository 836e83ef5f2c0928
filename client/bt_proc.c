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
 * btrace: uid, gid and cgroup of a traced process.  dt(4) events carry
 * none of them, so they are read from /proc when btrace handles the
 * event, and kept per pid for PROC_TTL_MS: a process that changes its
 * ids (setuid(2)) or its cgroup is seen at most that late, and one that
 * exited before its first event was handled is unknown (-1, cgroup 0).
 * bpftrace's uid and gid are the real ids, and its cgroup the inode
 * number of the process's cgroup v2 directory: the same here.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btrace.h"

#define PROC_SLOTS	1024
#define PROC_TTL_MS	1000

static struct proc_ent {
	pid_t		 pe_pid;
	uint64_t	 pe_when;	/* CLOCK_MONOTONIC ms, 0: never */
	long		 pe_uid, pe_gid, pe_cgroup;
} *proc_cache;

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Where cgroup v2 is mounted, from our mountinfo; /sys/fs/cgroup else. */
static const char *
cgroup2_root(void)
{
	static char root[256];
	char line[1024], mnt[256], fstype[64];
	FILE *fp;

	if (root[0] != '\0')
		return root;
	snprintf(root, sizeof(root), "/sys/fs/cgroup");
	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return root;
	while (fgets(line, sizeof(line), fp) != NULL) {
		const char *sep = strstr(line, " - ");

		if (sep == NULL || sscanf(sep, " - %63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2") != 0 ||
		    sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1)
			continue;
		snprintf(root, sizeof(root), "%s", mnt);
		break;
	}
	fclose(fp);
	return root;
}

static void
proc_read(struct proc_ent *pe)
{
	char path[64], line[4096], dir[4352];
	struct stat sb;
	FILE *fp;

	pe->pe_uid = pe->pe_gid = -1;
	pe->pe_cgroup = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pe->pe_pid);
	if ((fp = fopen(path, "re")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			if (strncmp(line, "Uid:", 4) == 0)
				pe->pe_uid = strtol(line + 4, NULL, 10);
			else if (strncmp(line, "Gid:", 4) == 0)
				pe->pe_gid = strtol(line + 4, NULL, 10);
		}
		fclose(fp);
	}
	/* "0::/path" is the v2 hierarchy's line */
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pe->pe_pid);
	if ((fp = fopen(path, "re")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			if (strncmp(line, "0::", 3) != 0)
				continue;
			line[strcspn(line, "\n")] = '\0';
			snprintf(dir, sizeof(dir), "%s%s", cgroup2_root(),
			    line + 3);
			if (stat(dir, &sb) == 0)
				pe->pe_cgroup = (long)sb.st_ino;
			break;
		}
		fclose(fp);
	}
}

static struct proc_ent *
proc_get(pid_t pid)
{
	struct proc_ent *pe;
	uint64_t now = mono_ms();

	if (proc_cache == NULL)
		proc_cache = xcalloc(PROC_SLOTS, sizeof(*proc_cache));
	pe = &proc_cache[(unsigned int)pid % PROC_SLOTS];
	if (pe->pe_pid != pid || pe->pe_when == 0 ||
	    now - pe->pe_when >= PROC_TTL_MS) {
		/* a gone process keeps what was read while it lived */
		struct proc_ent old = *pe;

		pe->pe_pid = pid;
		proc_read(pe);
		if (old.pe_pid == pid && old.pe_when != 0 && pe->pe_uid == -1)
			*pe = old;
		pe->pe_when = now;
	}
	return pe;
}

long
proc_uid(pid_t pid)
{
	return proc_get(pid)->pe_uid;
}

long
proc_gid(pid_t pid)
{
	return proc_get(pid)->pe_gid;
}

long
proc_cgroup(pid_t pid)
{
	return proc_get(pid)->pe_cgroup;
}
