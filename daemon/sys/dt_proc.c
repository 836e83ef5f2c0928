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
 * /proc/PID/stat, status and auxv, and a process's threads.  See
 * dt_proc.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_auxv.h>

#include "dt_proc.h"

/* The unsigned decimal field at *pp, which moves past it and a space. */
static int
dt_proc_num(char **pp, uint64_t *v)
{
	char *p = *pp, *ep;

	if (*p < '0' || *p > '9')
		return EIO;
	errno = 0;
	*v = strtoull(p, &ep, 10);
	if (errno != 0 || (*ep != ' ' && *ep != '\n' && *ep != '\0'))
		return EIO;
	*pp = *ep == ' ' ? ep + 1 : ep;
	return 0;
}

/* Skip n space-separated fields. */
static int
dt_proc_skip(char **pp, int n)
{
	while (n-- > 0) {
		if ((*pp = strchr(*pp, ' ')) == NULL)
			return EIO;
		(*pp)++;
	}
	return 0;
}

/* The stat file at path, a process's or one of its threads'. */
static int
dt_proc_stat_at(const char *path, struct dt_proc_stat *ps)
{
	char buf[1024], *p, *lp;
	uint64_t ppid, flags, ut, st;
	size_t len;
	int error;

	if (dt_proc_read1(path, buf, sizeof(buf)) == -1)
		return errno == ENOENT || errno == ESRCH ? ESRCH : errno;
	/* comm may hold anything, parentheses too: the last ')' ends it. */
	if ((lp = strchr(buf, '(')) == NULL ||
	    (p = strrchr(buf, ')')) == NULL || p < lp || p[1] != ' ')
		return EIO;
	len = (size_t)(p - lp - 1);
	if (len >= sizeof(ps->ps_comm))
		len = sizeof(ps->ps_comm) - 1;
	memcpy(ps->ps_comm, lp + 1, len);
	p += 2;
	ps->ps_state = *p;
	/* Fields: state 3, ppid 4, flags 9, utime 14, stime 15, start 22. */
	if ((error = dt_proc_skip(&p, 1)) != 0 ||
	    (error = dt_proc_num(&p, &ppid)) != 0 ||
	    (error = dt_proc_skip(&p, 4)) != 0 ||
	    (error = dt_proc_num(&p, &flags)) != 0 ||
	    (error = dt_proc_skip(&p, 4)) != 0 ||
	    (error = dt_proc_num(&p, &ut)) != 0 ||
	    (error = dt_proc_num(&p, &st)) != 0 ||
	    (error = dt_proc_skip(&p, 6)) != 0 ||
	    (error = dt_proc_num(&p, &ps->ps_start)) != 0)
		return error;
	ps->ps_ppid = (pid_t)ppid;
	ps->ps_flags = (unsigned int)flags;
	ps->ps_cpu = ut + st;
	return 0;
}

int
dt_proc_stat(pid_t pid, struct dt_proc_stat *ps)
{
	return dt_proc_task_stat(pid, 0, ps);
}

int
dt_proc_task_stat(pid_t pid, pid_t tid, struct dt_proc_stat *ps)
{
	char path[64];

	memset(ps, 0, sizeof(*ps));
	if (pid <= 0 || tid < 0)
		return ESRCH;
	if (tid == 0)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
		    (int)pid, (int)tid);
	return dt_proc_stat_at(path, ps);
}

/* The value of status line "\nName:\t" in buf, or NULL. */
static char *
dt_proc_field(char *buf, const char *name)
{
	char *p = strstr(buf, name);

	return p == NULL ? NULL : p + strlen(name);
}

/*
 * A decimal status value at p, which must end the line: a file cut short
 * by the buffer ends with a value that may be cut too.
 */
static int
dt_proc_dec(const char *p, int64_t max, int64_t *v)
{
	char *ep;

	if (p == NULL || *p < '0' || *p > '9')
		return EIO;
	errno = 0;
	*v = strtoll(p, &ep, 10);
	if (errno != 0 || *v > max || *ep != '\n')
		return EIO;
	return 0;
}

/* A signal mask: sixteen hex digits ending the line. */
static int
dt_proc_mask(const char *p, uint64_t *v)
{
	char *ep;

	if (p == NULL ||
	    !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
		return EIO;
	errno = 0;
	*v = strtoull(p, &ep, 16);
	if (errno != 0 || ep - p != 16 || *ep != '\n')
		return EIO;
	return 0;
}

/* Four ids, tab-separated, ending the line (Uid:, Gid:). */
static int
dt_proc_ids4(const char *p, uint32_t *v)
{
	char *ep;
	unsigned long long x;
	int i;

	if (p == NULL)
		return EIO;
	for (i = 0; i < 4; i++) {
		if (*p < '0' || *p > '9')
			return EIO;
		errno = 0;
		x = strtoull(p, &ep, 10);
		if (errno != 0 || x > UINT32_MAX ||
		    *ep != (i < 3 ? '\t' : '\n'))
			return EIO;
		v[i] = (uint32_t)x;
		p = ep + 1;
	}
	return 0;
}

int
dt_proc_status(pid_t pid, struct dt_proc_status *pst)
{
	char path[64], buf[4096], *p, *ep;
	int64_t thr, tracer, tgid, id = -1;
	uint32_t ids[4];
	int error, i;

	memset(pst, 0, sizeof(*pst));
	if (pid <= 0)
		return ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (dt_proc_read1(path, buf, sizeof(buf)) == -1)
		return errno == ENOENT || errno == ESRCH ? ESRCH : errno;
	/* One id a namespace level, the process's own last. */
	if ((p = dt_proc_field(buf, "\nNStgid:\t")) == NULL)
		return EIO;
	for (;;) {
		errno = 0;
		id = strtoll(p, &ep, 10);
		if (ep == p || errno != 0 || id <= 0 || id > INT32_MAX)
			return EIO;
		if (*ep != '\t')
			break;
		p = ep + 1;
	}
	if (*ep != '\n')
		return EIO;
	if ((error = dt_proc_dec(dt_proc_field(buf, "\nThreads:\t"),
	    INT32_MAX, &thr)) != 0 ||
	    (error = dt_proc_dec(dt_proc_field(buf, "\nTracerPid:\t"),
	    INT32_MAX, &tracer)) != 0 ||
	    (error = dt_proc_mask(dt_proc_field(buf, "\nSigBlk:\t"),
	    &pst->pst_sigblk)) != 0 ||
	    (error = dt_proc_mask(dt_proc_field(buf, "\nSigCgt:\t"),
	    &pst->pst_sigcgt)) != 0)
		return error;
	if (thr < 1)
		return EIO;
	if ((p = dt_proc_field(buf, "\nState:\t")) == NULL || *p == '\0' ||
	    p[1] != ' ')
		return EIO;
	pst->pst_state = *p;
	if ((error = dt_proc_dec(dt_proc_field(buf, "\nTgid:\t"),
	    INT32_MAX, &tgid)) != 0)
		return error;
	pst->pst_tgid = (pid_t)tgid;
	if ((error = dt_proc_ids4(dt_proc_field(buf, "\nUid:\t"), ids)) != 0)
		return error;
	for (i = 0; i < 4; i++)
		pst->pst_uid[i] = (uid_t)ids[i];
	if ((error = dt_proc_ids4(dt_proc_field(buf, "\nGid:\t"), ids)) != 0)
		return error;
	for (i = 0; i < 4; i++)
		pst->pst_gid[i] = (gid_t)ids[i];
	pst->pst_threads = (int)thr;
	pst->pst_tracer = (pid_t)tracer;
	pst->pst_nspid = (pid_t)id;
	return 0;
}

static int
dt_proc_tidcmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The parser and its bound are the launcher's too (udt_auxv.h). */
int
dt_proc_secure(pid_t pid)
{
	uint64_t v[UDT_AUXV_WORDS];
	char path[64];
	ssize_t n;
	int secure;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((n = dt_proc_read(path, (char *)v, sizeof(v))) == -1)
		return -1;
	if ((secure = udt_auxv_secure(v, (size_t)n)) == -1)
		errno = EIO;
	return secure;
}

pid_t *
dt_proc_tids(pid_t pid, size_t *np)
{
	char path[64], buf[512], *p, *ep;
	struct dirent *de;
	pid_t *tids = NULL, *nt;
	size_t n = 0, cap = 0;
	long v;
	DIR *d;

	*np = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (pid <= 0 || dt_proc_read(path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "\nTgid:\t")) == NULL ||
	    (v = strtol(p + 7, &ep, 10)) != pid || *ep != '\n') {
		errno = ESRCH;
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL) {
		errno = ESRCH;
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if ((v = strtol(de->d_name, &ep, 10)) <= 0 || *ep != '\0')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			if ((nt = reallocarray(tids, cap, sizeof(*nt))) ==
			    NULL) {
				closedir(d);
				free(tids);
				errno = ENOMEM;
				return NULL;
			}
			tids = nt;
		}
		tids[n++] = (pid_t)v;
	}
	closedir(d);
	if (n == 0) {
		free(tids);
		errno = ESRCH;
		return NULL;
	}
	qsort(tids, n, sizeof(*tids), dt_proc_tidcmp);
	*np = n;
	return tids;
}

bool
dt_proc_tids_within(const pid_t *now, size_t n, const pid_t *was, size_t m)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (bsearch(&now[i], was, m, sizeof(*was),
		    dt_proc_tidcmp) == NULL)
			return false;
	return true;
}

static ssize_t
dt_proc_readn(const char *path, char *buf, size_t size, int one)
{
	ssize_t n, done = 0;
	int fd, error;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((size_t)done < size - 1) {
		n = read(fd, buf + done, size - 1 - (size_t)done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && done == 0) {
			/* ESRCH: the process went between open and read */
			error = errno;
			close(fd);
			errno = error;
			return -1;
		}
		if (n <= 0)
			break;
		done += n;
		if (one)
			break;
	}
	close(fd);
	buf[done] = '\0';
	return done;
}

ssize_t
dt_proc_read(const char *path, char *buf, size_t size)
{
	return dt_proc_readn(path, buf, size, 0);
}

ssize_t
dt_proc_read1(const char *path, char *buf, size_t size)
{
	return dt_proc_readn(path, buf, size, 1);
}

char *
dt_proc_slurp(const char *path, size_t max, size_t *lenp)
{
	size_t len = 0, cap = 32768;
	char *buf, *nb;
	ssize_t n;
	int fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((buf = malloc(cap)) == NULL)
		goto fail;
	for (;;) {
		if (cap - len < 4096 + 1) {
			if (cap >= max) {
				errno = EFBIG;
				goto fail;
			}
			if ((nb = realloc(buf, cap * 2)) == NULL)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*lenp = len;
	return buf;
fail:
	e = errno;
	free(buf);
	close(fd);
	errno = e;
	return NULL;
}

uint64_t
dt_proc_tick_ns(void)
{
	static uint64_t ns;
	long hz;

	if (ns == 0) {
		hz = sysconf(_SC_CLK_TCK);
		ns = 1000000000ULL / (uint64_t)(hz > 0 ? hz : 100);
	}
	return ns;
}

int
dt_proc_comm(pid_t pid, pid_t tid, char *comm, size_t size)
{
	char buf[64], path[64];
	size_t len;
	ssize_t n;
	int fd;

	/* A name and a newline: one read, not dt_proc_read()'s to EOF. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
	    (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	len = strcspn(buf, "\n");
	if (len > size - 1)
		len = size - 1;
	memset(comm, 0, size);
	memcpy(comm, buf, len);
	return 0;
}

int
dt_proc_private(int pmfd, uint64_t lo, uint64_t hi)
{
	/* Bits 63 and 62: present, swapped; 61: a file's page (pagemap). */
	const uint64_t inmem = 3ULL << 62, file = 1ULL << 61;
	uint64_t e[512];
	size_t i, n;
	ssize_t r;

	if (lo >= hi || (hi - lo) / 4096 > DT_PROC_PRIV_MAX)
		return -1;
	for (lo &= ~4095ULL; lo < hi; lo += n * 4096) {
		n = (hi - lo + 4095) / 4096;
		n = n > 512 ? 512 : n;
		r = pread(pmfd, e, n * sizeof(e[0]), (off_t)(lo / 4096 *
		    sizeof(e[0])));
		if (r != (ssize_t)(n * sizeof(e[0])))
			return -1;
		for (i = 0; i < n; i++)
			if ((e[i] & inmem) != 0 && (e[i] & file) == 0)
				return 1;
	}
	return 0;
}
