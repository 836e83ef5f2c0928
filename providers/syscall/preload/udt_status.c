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

/*
 * One read of /proc/self/status serves the rewriter (one thread? a
 * tracer?) and dispatch (which handlers may have our signals in their
 * masks), so none of them asks the kernel again.  The constructor's
 * thread.
 */
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
		if (fd >= 0)
			udt_sys1(SYS_close, fd);
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
		}
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
