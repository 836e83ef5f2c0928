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
 * The library's half of following an exec (udt_lrec.h): just before
 * this process execs, it asks the launcher's helper to trace the new
 * image's loader, as the launcher had the first image's traced.  The
 * helper seizes the asking thread and answers; the new image's library
 * takes the loader's calls from it (udt_loader.c).
 *
 * Called on the way to every execve and execveat the library sees, and
 * asks only while a syscall probe is on (udt_lfollow_want()): from
 * udt_rw_slow() and from dispatch's handler, so from signal handlers,
 * vfork children and any thread, with no lock held: raw system calls,
 * nothing allocated, nothing of the program touched but environ, read.
 * Its calls are the library's own (this function is kept out of line
 * so that a user stack says so).
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "systab.h"
#include "udt_lrec.h"
#include "udt_preload.h"
#include "udt_sys.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif

extern char **environ;

/*
 * Whether any probe of the syscall provider is on: only then can the
 * new image's loader calls be recorded, and only then does the helper
 * need to follow them call by call.  Byte loads, no vector code.
 */
int
udt_lfollow_want(void)
{
	const uint8_t *e = __atomic_load_n(&udt_enab, __ATOMIC_RELAXED);
	unsigned int i;

	for (i = 0; i < 2 * SYSTAB_COUNT; i++)
		if (__atomic_load_n(&e[i], __ATOMIC_RELAXED) != 0)
			return 1;
	return 0;
}

int __attribute__((noinline))
udt_lfollow_exec(int want)
{
	static const char pre[] = UDT_LFOLLOW_ENV "=";
	struct sockaddr_un sun;
	struct ucred cr;
	struct timeval tv = { 2, 0 };
	socklen_t crlen = sizeof(cr);
	const char *v = NULL;
	char **e;
	long pid = 0, r = -1;
	int fd, i, ask[2], ans = -1, yama, follows = 0;
	size_t off;

	/*
	 * Nothing to follow for: not even asked.  The helper would seize
	 * this thread only to check the new image and let it go at its
	 * exec stop, a round trip and two ptrace stops (about 1 ms an
	 * exec) for a warning that a statically linked image's calls go
	 * unseen, which matters once a syscall probe is on, and then the
	 * helper follows and says it.
	 */
	if (!want)
		return 0;
	for (e = environ; e != NULL && *e != NULL && v == NULL; e++)
		if (udt_sys_prefix(*e, pre))
			v = *e + sizeof(pre) - 1;
	if (v == NULL)
		return 0;
	/* "PID:HEX:Y" */
	for (; *v >= '0' && *v <= '9' && pid < (1L << 30); v++)
		pid = pid * 10 + (*v - '0');
	if (pid <= 0 || *v++ != ':')
		return 0;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	off = 1;
	memcpy(sun.sun_path + off, UDT_LFOLLOW_SOCK,
	    sizeof(UDT_LFOLLOW_SOCK) - 1);
	off += sizeof(UDT_LFOLLOW_SOCK) - 1;
	for (i = 0; i < UDT_LFOLLOW_HEX; i++, v++) {
		if (!((*v >= '0' && *v <= '9') || (*v >= 'a' && *v <= 'f')))
			return 0;
		sun.sun_path[off++] = *v;
	}
	if (*v++ != ':')
		return 0;
	yama = *v == '1';

	fd = (int)udt_sys3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
	    0);
	if (fd < 0)
		return 0;
	/* The helper, and no one who took its name after it left. */
	if (udt_sys3(SYS_connect, fd, &sun,
	    offsetof(struct sockaddr_un, sun_path) + off) != 0 ||
	    udt_sys5(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, &cr,
	    &crlen) != 0 || cr.pid != (pid_t)pid)
		goto out;
	(void)udt_sys5(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv));
	if (yama)
		(void)udt_sys5(SYS_prctl, PR_SET_PTRACER, pid, 0, 0, 0);
	ask[0] = (int)udt_sys0(SYS_gettid);
	ask[1] = UDT_LFOLLOW_WANT;
	if (udt_sys6(SYS_sendto, fd, (long)ask, sizeof(ask), MSG_NOSIGNAL, 0,
	    0) == (long)sizeof(ask))
		do
			r = udt_sys6(SYS_recvfrom, fd, (long)&ans, sizeof(ans),
			    MSG_WAITALL, 0, 0);
		while (r == -EINTR);
	follows = r == (long)sizeof(ans) && ans == 0;
	/* The helper has seized us, or will not: no exception is kept. */
	if (yama)
		(void)udt_sys5(SYS_prctl, PR_SET_PTRACER, 0, 0, 0, 0);
out:
	udt_sys1(SYS_close, fd);
	return follows;
}
