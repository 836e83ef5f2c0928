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
 * The constructor's one read of /proc/self/status, apart from the
 * rewriter that reads it first: dispatch (udt_sud.c) asks it too, and
 * neither may ask the kernel again.
 */
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"

uint64_t
udt_hex(const char **pp)
{
	const char *p = *pp;
	uint64_t v = 0;

	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			v = v * 16 + (uint64_t)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			v = v * 16 + (uint64_t)(*p - 'a' + 10);
		else
			break;
	}
	*pp = p;
	return v;
}

static long	udt_st_pid = -1, udt_st_euid = -1;	/* [I] */

/* The decimal number at *pp, *pp moved past it: -1 if none or over 2^32. */
static long
udt_st_dec(const char **pp)
{
	const char *p = *pp;
	long v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((v = v * 10 + (*p - '0')) > (1L << 32))
			return -1;
	*pp = p;
	return v;
}

/*
 * The pid and effective uid getpid() and geteuid() would give, from the
 * status text: the last of NStgid's ids (getpid() is the thread group's)
 * is the one in the process's own namespace whichever namespace /proc
 * belongs to, and Uid's are mapped
 * into the reader's user namespace, which is ours.  A field missing or
 * odd leaves its value unknown (-1), and the caller asks the kernel.
 */
static void
udt_st_ids(const char *buf)
{
	const char *p;
	long v = -1;

	if ((p = strstr(buf, "\nNStgid:\t")) != NULL)
		for (p += 9; (v = udt_st_dec(&p)) >= 0 && *p == '\t'; p++)
			;
	if (p != NULL && v > 0 && v < (1L << 31) && *p == '\n')
		udt_st_pid = v;
	/* Real, then effective. */
	if ((p = strstr(buf, "\nUid:\t")) != NULL) {
		p += 6;
		if (udt_st_dec(&p) >= 0 && *p++ == '\t' &&
		    (v = udt_st_dec(&p)) >= 0 && v < (1L << 32) - 1 &&
		    *p == '\t')
			udt_st_euid = v;
	}
}

/*
 * One read of /proc/self/status serves the rewriter (one thread? a
 * tracer?) and dispatch (which handlers may have our signals in their
 * masks), so none of them asks the kernel again.  The constructor's
 * thread.
 */
/*
 * The status's descriptor, left open for the constructor to close with
 * its others (udt_close_defer()) when it asked first (udt_st_keep) and
 * the process has one thread: a call less.  [w]
 */
int	udt_st_keep;
static long udt_st_fd = -1;

long
udt_proc_status_fd(void)
{
	long fd = udt_st_fd;

	udt_st_fd = -1;
	return fd;
}

int
udt_proc_status(int *threads, uint64_t *caught, uint64_t *blocked,
    long *tracer)
{
	static int done, nthr = -1;		/* [I] */
	static uint64_t cgt = ~0ULL, blk = ~0ULL;	/* [I] */
	static long tpid = -1;			/* [I] */
	char buf[4096], *p;
	const char *q;
	long fd, n;

	if (!done) {
		done = 1;
		fd = udt_sys3(SYS_open, "/proc/self/status", O_RDONLY |
		    O_CLOEXEC, 0);
		n = fd < 0 ? -1 : udt_sys3(SYS_read, fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			if ((p = strstr(buf, "\nThreads:\t")) != NULL)
				nthr = atoi(p + 10);
			if ((q = strstr(buf, "\nSigCgt:\t")) != NULL) {
				q += 9;
				cgt = udt_hex(&q);
			}
			if ((q = strstr(buf, "\nSigBlk:\t")) != NULL) {
				q += 9;
				blk = udt_hex(&q);
			}
			if ((p = strstr(buf, "\nTracerPid:\t")) != NULL)
				tpid = atol(p + 12);
			udt_st_ids(buf);
		}
		if (fd >= 0 && udt_st_keep && nthr == 1)
			udt_st_fd = fd;
		else if (fd >= 0)
			udt_sys1(SYS_close, fd);
	}
	if (threads != NULL)
		*threads = nthr;
	if (caught != NULL)
		*caught = cgt;
	if (blocked != NULL)
		*blocked = blk;
	if (tracer != NULL)
		*tracer = tpid;
	return nthr < 0 ? -1 : 0;
}

int
udt_proc_ids(int32_t *pid, uint32_t *euid)
{
	if (udt_proc_status(NULL, NULL, NULL, NULL) != 0 || udt_st_pid < 0 ||
	    udt_st_euid < 0)
		return -1;
	*pid = (int32_t)udt_st_pid;
	*euid = (uint32_t)udt_st_euid;
	return 0;
}
