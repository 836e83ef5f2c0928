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
 * A process's executable mappings read from /proc into a snapshot
 * (dt_pidmaps.h), for the cache in dt_pidmaps.c.  Everything read is
 * checked before it is believed: lines that do not parse, empty or
 * overlapping ranges are skipped, and a process whose start time changed
 * while it was read (the pid changed hands) yields nothing.  No lock:
 * snapshots are immutable once made and counted by reference.
 *
 *	[I]	set by dt_pm_setup() while no other thread uses the cache
 *	[a]	atomic operations
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_pidmaps.h"
#include "dt_proc.h"

static char		 pm_proc[64] = "/proc";	/* [I] */
static atomic_uint_fast64_t pm_seq;		/* [a] reads begun */

void
dt_pm_read_setup(const char *procroot)
{
	snprintf(pm_proc, sizeof(pm_proc), "%s",
	    procroot != NULL ? procroot : "/proc");
}

/* The start time in a process's stat text (dt_pm_stime()'s answer). */
static uint64_t
pm_stime_of(const char *buf)
{
	unsigned long long v = 0;
	const char *p;
	char *ep;
	int field;

	/* comm may hold anything, parentheses too: the last ')' ends it */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return 0;		/* exited: nothing mapped any more */
	/* state is field 3, starttime field 22 */
	for (field = 3; field < 22; field++) {
		if ((p = strchr(p, ' ')) == NULL)
			return 0;
		p++;
	}
	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	v = strtoull(p, &ep, 10);
	if (errno != 0 || (*ep != ' ' && *ep != '\n' && *ep != '\0'))
		return 0;
	/* a process started at boot has starttime 0: never "none" */
	return (uint64_t)v + 1;
}

uint64_t
dt_pm_stime(pid_t pid)
{
	char path[128], buf[1024];

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%d/stat", pm_proc, (int)pid);
	/* Raw: stdio's fstat and second read, twice an attach. */
	if (dt_proc_read1(path, buf, sizeof(buf)) < 0)
		return 0;
	return pm_stime_of(buf);
}

/*
 * The same through fd, open on the process's stat: one open for the
 * snapshot's look before and after (the kernel makes the text anew at
 * offset 0).
 */
static uint64_t
pm_stime_fd(int fd)
{
	char buf[1024];
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf) - 1, 0)) == -1 &&
	    errno == EINTR)
		;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return pm_stime_of(buf);
}

/*
 * The size of the file m maps (0 when unknown), and its identity when
 * the stat was of the very mapping.
 */
static void
pm_filestat(pid_t pid, struct dt_pm_map *m)
{
	char path[128];
	struct stat st;

	m->pm_size = 0;
	m->pm_exact = 0;
	/* map_files: the very file mapped, even renamed or unlinked */
	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64,
	    pm_proc, (int)pid, m->pm_start, m->pm_end);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		m->pm_size = (uint64_t)st.st_size;
		m->pm_exact = 1;
		m->pm_dev = (uint64_t)st.st_dev;
		m->pm_ino = (uint64_t)st.st_ino;
		m->pm_mtime = (int64_t)st.st_mtim.tv_sec;
		m->pm_mtimens = (int64_t)st.st_mtim.tv_nsec;
		m->pm_ctime = (int64_t)st.st_ctim.tv_sec;
		m->pm_ctimens = (int64_t)st.st_ctim.tv_nsec;
		return;
	}
	/* The name is the process's: a link it planted is not its file. */
	if (lstat(m->pm_path, &st) == 0 && S_ISREG(st.st_mode))
		m->pm_size = (uint64_t)st.st_size;
}

static void
pm_free_maps(struct dt_pm_map *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(maps[i].pm_path);
	free(maps);
}

/*
 * A number in base (16, lower case, or 10) at *p, then the character
 * sep: 0 with *p past sep, -1 when the line is not so.  No more than 16
 * digits: a field the kernel writes fits.
 */
static int
pm_num(const char **p, int base, char sep, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d, nd = 0;

	for (;; s++, nd++) {
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		if (nd == 16)
			return -1;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (nd == 0 || *s != sep)
		return -1;
	*v = x;
	*p = s + 1;
	return 0;
}

/*
 * Parse one line of a maps file into m (path malloc'ed or NULL).
 * 1: an executable mapping, 0: anything else, -1: out of memory.
 * By hand, not sscanf(): dtd reads a new tracee's maps at its attach,
 * every exec of a traced tree, and sscanf() took most of that.
 */
static int
pm_parse(const char *line, struct dt_pm_map *m)
{
	uint64_t start, end, off, dev;
	const char *p = line, *perms, *file;
	size_t len, nd;

	if (pm_num(&p, 16, '-', &start) != 0 || pm_num(&p, 16, ' ', &end) !=
	    0)
		return 0;
	perms = p;
	if (strnlen(perms, 5) < 5 || perms[4] != ' ')
		return 0;
	p += 5;
	if (pm_num(&p, 16, ' ', &off) != 0 || pm_num(&p, 16, ':', &dev) != 0 ||
	    pm_num(&p, 16, ' ', &dev) != 0)
		return 0;
	/* The kernel puts a space after the inode; a copy may end there. */
	for (nd = 0; *p >= '0' && *p <= '9'; p++)
		nd++;
	if (nd == 0 || (*p != ' ' && *p != '\n' && *p != '\0'))
		return 0;
	if (perms[2] != 'x' || end <= start)
		return 0;
	file = p;
	file += strspn(file, " ");
	len = strcspn(file, "\n");
	memset(m, 0, sizeof(*m));
	m->pm_start = start;
	m->pm_end = end;
	m->pm_off = off;
	/* [vdso], anonymous JIT code: executable, but no file */
	if (len > 0 && file[0] == '/' && (m->pm_path = strndup(file, len)) ==
	    NULL)
		return -1;
	return 1;
}

/*
 * m is a mapping prev has too (same range, offset and file): the file
 * it maps has not changed since prev was read.  *j walks prev's sorted
 * maps alongside the caller's.
 */
static const struct dt_pm_map *
pm_same(const struct dt_pm_snap *prev, size_t *j, const struct dt_pm_map *m)
{
	const struct dt_pm_map *o;

	if (prev == NULL)
		return NULL;
	while (*j < prev->ps_n && prev->ps_maps[*j].pm_start < m->pm_start)
		(*j)++;
	if (*j == prev->ps_n)
		return NULL;
	o = &prev->ps_maps[*j];
	if (o->pm_start != m->pm_start || o->pm_end != m->pm_end ||
	    o->pm_off != m->pm_off || o->pm_path == NULL ||
	    strcmp(o->pm_path, m->pm_path) != 0)
		return NULL;
	return o;
}

/*
 * The maps file at path, whole lines only, NUL-terminated, malloc'ed:
 * NULL with errno ESRCH when it cannot be opened, else dt_proc_slurp()'s
 * (ENOMEM; EFBIG past PM_MAPS_MAX, far beyond the kernel's default limit
 * of 65530 mappings).  Raw reads of 32 kB and up: a small process's maps
 * take one read and the one that says the end, where stdio's 1 kB buffer
 * took five calls and an fstat, at every traced exec.
 */
#define PM_MAPS_MAX	(64U << 20)

static char *
pm_slurp(const char *path)
{
	size_t len;
	char *buf;

	if ((buf = dt_proc_slurp(path, PM_MAPS_MAX, &len)) == NULL) {
		if (errno == ENOENT || errno == ESRCH || errno == EACCES)
			errno = ESRCH;
		return NULL;
	}
	/* A line cut at the end is not a line. */
	while (len > 0 && buf[len - 1] != '\n')
		len--;
	buf[len] = '\0';
	return buf;
}

/* Whether the process of pidfd has not ended (nor become a zombie). */
static int
pm_pidfd_lives(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int n;

	while ((n = poll(&pfd, 1, 0)) == -1 && errno == EINTR)
		;
	return n == 0;
}

/*
 * dt_pm_read() and dt_pm_read_pidfd(): the process is the same from
 * before the maps are read to after if its start time (sfd, open on its
 * stat) did not change, or (sfd -1) if pidfd's process still lives: a
 * pid is not reused before its process is reaped, and its pidfd polls
 * readable from its exit on.
 */
static struct dt_pm_snap *
pm_read(pid_t pid, uint64_t stime, int sfd, int pidfd,
    const struct dt_pm_snap *prev)
{
	const struct dt_pm_map *o;
	size_t j = 0;
	struct dt_pm_snap *snap = NULL;
	struct dt_pm_map *maps = NULL, m, *nm;
	size_t n = 0, cap = 0, i;
	char path[128], *text = NULL, *line, *nl;
	int error = ESRCH, rv, same;
	uint64_t seq = atomic_fetch_add(&pm_seq, 1);

	snprintf(path, sizeof(path), "%s/%d/maps", pm_proc, (int)pid);
	if ((text = pm_slurp(path)) == NULL) {
		error = errno;
		if (sfd != -1)
			close(sfd);
		errno = error;
		return NULL;
	}
	for (line = text; *line != '\0' && n < DT_PM_MAXMAPS; line = nl + 1) {
		/* One line at a time, as it was read: pm_slurp() ends each. */
		/* A NUL in the text (a copy of /proc, not the kernel's) ends it. */
		if ((nl = strchr(line, '\n')) == NULL)
			break;
		*nl = '\0';
		if ((rv = pm_parse(line, &m)) == 0)
			continue;
		if (rv < 0)
			goto nomem;
		/* the kernel lists them in order: anything else is bad */
		if (n > 0 && m.pm_start < maps[n - 1].pm_end) {
			free(m.pm_path);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nm = reallocarray(maps, cap, sizeof(*maps))) ==
			    NULL) {
				free(m.pm_path);
				goto nomem;
			}
			maps = nm;
		}
		maps[n++] = m;
	}
	free(text);
	text = NULL;

	/* The same process from before the first read to after the last. */
	same = sfd != -1 ? pm_stime_fd(sfd) == stime : pm_pidfd_lives(pidfd);
	if (sfd != -1)
		close(sfd);
	sfd = -1;
	if (n == 0 || !same)
		goto fail;
	/* Sizes: a stat per mapping prev does not already know. */
	if (prev != NULL && prev->ps_stime != stime)
		prev = NULL;
	for (i = 0; i < n; i++) {
		if (maps[i].pm_path == NULL)
			continue;
		/* A size kept from before; an identity never is. */
		if ((o = pm_same(prev, &j, &maps[i])) != NULL)
			maps[i].pm_size = o->pm_size;
		else
			pm_filestat(pid, &maps[i]);
	}
	if ((snap = malloc(sizeof(*snap) + n * sizeof(*maps))) == NULL)
		goto nomem;
	atomic_init(&snap->ps_ref, 1);
	snap->ps_stime = stime;
	snap->ps_seq = seq;
	snap->ps_n = n;
	memcpy(snap->ps_maps, maps, n * sizeof(*maps));
	/* What the heap gave, not what was asked: the budget is memory. */
	snap->ps_bytes = malloc_usable_size(snap) + DT_PM_MALLOC_OVH;
	for (i = 0; i < n; i++)
		if (maps[i].pm_path != NULL)
			snap->ps_bytes += malloc_usable_size(maps[i].pm_path) +
			    DT_PM_MALLOC_OVH;
	free(maps);
	return snap;
nomem:
	error = ENOMEM;
fail:
	if (sfd != -1)
		close(sfd);
	free(text);
	pm_free_maps(maps, n);
	errno = error;
	return NULL;
}

struct dt_pm_snap *
dt_pm_read(pid_t pid, const struct dt_pm_snap *prev)
{
	char path[128];
	uint64_t stime;
	int sfd;

	if (pid <= 0) {
		errno = ESRCH;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%d/stat", pm_proc, (int)pid);
	if ((sfd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		errno = ESRCH;
		return NULL;
	}
	if ((stime = pm_stime_fd(sfd)) == 0) {
		close(sfd);
		errno = ESRCH;
		return NULL;
	}
	return pm_read(pid, stime, sfd, -1, prev);
}

struct dt_pm_snap *
dt_pm_read_pidfd(pid_t pid, uint64_t stime, int pidfd,
    const struct dt_pm_snap *prev)
{
	if (pid <= 0 || stime == 0 || pidfd < 0) {
		errno = ESRCH;
		return NULL;
	}
	return pm_read(pid, stime, -1, pidfd, prev);
}

struct dt_pm_snap *
dt_pm_hold(struct dt_pm_snap *snap)
{
	if (snap != NULL)
		atomic_fetch_add(&snap->ps_ref, 1);
	return snap;
}

void
dt_pm_put(struct dt_pm_snap *snap)
{
	size_t i;

	if (snap == NULL || atomic_fetch_sub(&snap->ps_ref, 1) != 1)
		return;
	for (i = 0; i < snap->ps_n; i++)
		free(snap->ps_maps[i].pm_path);
	free(snap);
}

const struct dt_pm_map *
dt_pm_find(const struct dt_pm_snap *snap, uint64_t va)
{
	size_t lo = 0, hi, mid;

	if (snap == NULL)
		return NULL;
	hi = snap->ps_n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (va < snap->ps_maps[mid].pm_start)
			hi = mid;
		else if (va >= snap->ps_maps[mid].pm_end)
			lo = mid + 1;
		else
			return &snap->ps_maps[mid];
	}
	return NULL;
}
