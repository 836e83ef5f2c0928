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
 * The constructor's one look at /proc/self/status, for the rewriter
 * and dispatch (udt_sud.c), neither of which may ask the kernel again:
 * dtd's reading of it in the welcome, or the file's when dtd said
 * nothing.
 */
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <userdt/udt_wire.h>

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

/*
 * What the status says, once: read by the constructor's thread, from the
 * welcome or the file, before any other thread may ask.  [I]
 */
static int	udt_st_done, udt_st_told, udt_st_nthr = -1;
static uint64_t	udt_st_cgt = ~0ULL, udt_st_blk = ~0ULL;
static long	udt_st_tpid = -1, udt_st_pid = -1;

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
 * The pid getpid() would give, from the status text: the last of
 * NStgid's ids (getpid() is the thread group's) is the one in the
 * process's own namespace whichever namespace /proc belongs to.  A field
 * missing or odd leaves it unknown (-1), and the caller asks the kernel.
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
}

/*
 * dtd's reading of the status, in the constructor's welcome (udt_wire.h's
 * uw_st*): taken instead of the file, two system calls fewer at every
 * traced start.  dtd read it while this thread waited for the welcome, so
 * a thread count of 1 is this thread alone, and the leader's mask, this
 * thread's.  The constructor's thread, before anyone asked; 0 if taken.
 */
int
udt_proc_status_told(const struct udt_welcome *w)
{
	if (udt_st_done || !(w->uw_stflags & UDT_WST_OK) ||
	    w->uw_threads < 1 || w->uw_nspid <= 0 || w->uw_tracer < 0)
		return -1;
	udt_st_done = 1;
	udt_st_told = 1;
	udt_st_nthr = w->uw_threads;
	udt_st_cgt = w->uw_sigcgt;
	udt_st_blk = w->uw_sigblk;
	udt_st_tpid = w->uw_tracer;
	udt_st_pid = w->uw_nspid;
	return 0;
}

/*
 * One read of the status serves the rewriter (one thread? a tracer?) and
 * dispatch (which handlers may have our signals in their masks), so none
 * of them asks the kernel again; none at all when dtd said it in the
 * welcome.  The constructor's thread.
 */
int
udt_proc_status(int *threads, uint64_t *caught, uint64_t *blocked,
    long *tracer)
{
	char buf[4096], *p;
	const char *q;
	long fd, n;

	if (!udt_st_done) {
		udt_st_done = 1;
		fd = udt_sys3(SYS_open, "/proc/self/status", O_RDONLY |
		    O_CLOEXEC, 0);
		n = fd < 0 ? -1 : udt_sys3(SYS_read, fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			if ((p = strstr(buf, "\nThreads:\t")) != NULL)
				udt_st_nthr = atoi(p + 10);
			if ((q = strstr(buf, "\nSigCgt:\t")) != NULL) {
				q += 9;
				udt_st_cgt = udt_hex(&q);
			}
			if ((q = strstr(buf, "\nSigBlk:\t")) != NULL) {
				q += 9;
				udt_st_blk = udt_hex(&q);
			}
			if ((p = strstr(buf, "\nTracerPid:\t")) != NULL)
				udt_st_tpid = atol(p + 12);
			udt_st_ids(buf);
		}
		if (fd >= 0)
			udt_sys1(SYS_close, fd);
	}
	if (threads != NULL)
		*threads = udt_st_nthr;
	if (caught != NULL)
		*caught = udt_st_cgt;
	if (blocked != NULL)
		*blocked = udt_st_blk;
	if (tracer != NULL)
		*tracer = udt_st_tpid;
	return udt_st_nthr < 0 ? -1 : 0;
}

int
udt_proc_status_dtd(void)
{
	return udt_st_told && udt_st_nthr == 1;
}

/* getpid()'s answer as the status said it, or -1. */
int32_t
udt_proc_pid(void)
{
	return udt_st_pid > 0 ? (int32_t)udt_st_pid : -1;
}
