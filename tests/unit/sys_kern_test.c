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
 * The kernel feed's view of the tracees (dt_sys_kern.c), driven as
 * ingest and the reader drive it, in one thread: which kernel events
 * are the library's.  The case of issue 22 first: a tracee that
 * attaches and exits before the reader looks at all.  dt_sys_kern.c is
 * built into this test alone, with the one ingest function it calls.
 */
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_ingest.h"
#include "dt_sys_kern.h"
#include "systab.h"
#include "dtt.h"

#define SEC	1000000000ULL
#define T0	(1700000000ULL * SEC)	/* a CLOCK_REALTIME, any */

const char *
dt_ingest_sockpath(void)
{
	return "/nonexistent/sk-test.sock";
}

/*
 * What the kernel program's tracee map would hold (dt_ksys_tgid()); a
 * tracee attaching while sk_young is set is one whose exec it saw.
 */
static pid_t	sk_tgid[8];
static int	sk_ntgid, sk_tgidbad;
static bool	sk_young;

bool
dt_ksys_tgid(pid_t pid, bool on)
{
	int i;

	for (i = 0; i < sk_ntgid; i++)
		if (sk_tgid[i] == pid)
			break;
	if (on == (i < sk_ntgid))
		sk_tgidbad++;	/* told twice, or of one it never had */
	else if (on && sk_ntgid < 8)
		sk_tgid[sk_ntgid++] = pid;
	else if (!on)
		sk_tgid[i] = sk_tgid[--sk_ntgid];
	return on && sk_young;
}

static bool
sk_inmap(pid_t pid)
{
	int i;

	for (i = 0; i < sk_ntgid; i++)
		if (sk_tgid[i] == pid)
			return true;
	return false;
}

/*
 * A child that waits on stdin, exec'd with env; its pid, once its new
 * image (and environment) is in place: the close-on-exec end of a pipe
 * it holds closes at the exec.
 */
static pid_t
sk_child(char *const env[], int *wfd)
{
	int p[2], e[2], nul;
	pid_t pid;
	char c;

	if (pipe(p) == -1 || pipe2(e, O_CLOEXEC) == -1 ||
	    (pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		dup2(p[0], 0);
		/* ld.so says it cannot preload the fake library. */
		if ((nul = open("/dev/null", O_WRONLY)) != -1)
			dup2(nul, 2);
		close(p[1]);
		close(e[0]);
		execve("/bin/cat", (char *[]){ "cat", NULL }, env);
		_exit(127);
	}
	close(p[0]);
	close(e[1]);
	while (read(e[0], &c, 1) == -1 && errno == EINTR)
		continue;
	close(e[0]);
	*wfd = p[1];
	return pid;
}

/* The wire index of Linux call lin's entry (ret 0) or return. */
static unsigned int
sk_probe(unsigned int lin, unsigned int ret)
{
	unsigned int i;

	for (i = 0; i < SYSTAB_COUNT; i++)
		if (systab[i].se_linux == lin)
			return 2 * i + ret;
	dtt_check(false, "no such call in the table");
	return 0;
}

static uint64_t
sk_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char *argv[])
{
	char *ours[] = { "LD_PRELOAD=/nonexistent/libuserdt-preload.so",
	    "USERDT_SOCKET=/nonexistent/sk-test.sock", NULL };
	char *other[] = { "LD_PRELOAD=/nonexistent/libuserdt-preload.so",
	    "USERDT_SOCKET=/nonexistent/another.sock", NULL };
	uint64_t t;
	pid_t a, b;
	int wa, wb, i;
	bool all;

	(void)argc;
	dtt_tag(argv[0]);

	/* Issue 22: attached and gone before the reader's first event. */
	dt_sys_kern_attach(100, false);
	dt_sys_kern_exit(100, T0 + 10);
	dtt_check(dt_sys_kern_traced(100, T0 + 5),
	    "a quick tracee's call before its exit is the library's");
	dtt_check(dt_sys_kern_traced(100, T0 + 10),
	    "and one at the time it left");
	dtt_check(!dt_sys_kern_traced(100, T0 + 11),
	    "after it left, the pid's calls are the kernel's");
	dtt_check(!dt_sys_kern_traced(101, T0 + 5),
	    "another process's calls are the kernel's");

	/* Attached: every call, whenever it was made. */
	dt_sys_kern_attach(200, false);
	dtt_check(dt_sys_kern_traced(200, T0 + 1) &&
	    dt_sys_kern_traced(200, T0 + SEC / 5),
	    "an attached tracee's calls are the library's, any time");

	/* It exec'd a new image that attached before the old one left. */
	dt_sys_kern_attach(200, false);
	dt_sys_kern_exit(200, T0 + 20);
	dtt_check(dt_sys_kern_traced(200, T0 + 30),
	    "an exec'd image that attached again is still traced");
	dt_sys_kern_exit(200, T0 + 40);
	dtt_check(dt_sys_kern_traced(200, T0 + 40) &&
	    !dt_sys_kern_traced(200, T0 + 41),
	    "the pid leaves with its last image");

	/* The kernel program's tracee map: first attach to last exit. */
	dt_sys_kern_attach(250, false);
	dtt_check(sk_inmap(250), "the map has a tracee from its attach");
	dt_sys_kern_attach(250, false);
	dt_sys_kern_exit(250, T0 + 45);
	dtt_check(sk_inmap(250),
	    "and keeps it while an exec'd image is attached");
	dt_sys_kern_exit(250, T0 + 46);
	dtt_check(!sk_inmap(250) && !sk_inmap(100) && !sk_inmap(200) &&
	    sk_tgidbad == 0, "it leaves with its last image, told once");

	/*
	 * One in another pid namespace: never in the map (the program
	 * counts all its calls), the sampled feed's still.
	 */
	dt_sys_kern_attach(260, true);
	dtt_check(!sk_inmap(260) && dt_sys_kern_traced(260, T0 + SEC / 5),
	    "a foreign tracee is the library's but not in the map");
	dt_sys_kern_exit(260, T0 + 47);
	dtt_check(!sk_inmap(260) && sk_tgidbad == 0,
	    "and its exit tells the map nothing");

	/*
	 * What the program counted before an attach: all of a tracee
	 * whose exec it did not see; of a young one, only the entry of
	 * the exec that made it (the image before made that call).
	 */
	t = sk_realtime();
	dt_sys_kern_attach(270, false);
	sk_young = true;
	dt_sys_kern_attach(271, false);
	sk_young = false;
	dtt_check(dt_sys_kern_before(270, t - SEC, sk_probe(SYS_openat, 0)) &&
	    dt_sys_kern_before(270, t - SEC, sk_probe(SYS_execve, 0)),
	    "a tracee's records before its attach were the program's");
	dtt_check(!dt_sys_kern_before(271, t - SEC, sk_probe(SYS_openat, 0)) &&
	    !dt_sys_kern_before(271, t - SEC, sk_probe(SYS_execve, 1)),
	    "a young one's were not, its exec's return neither");
	dtt_check(dt_sys_kern_before(271, t - SEC, sk_probe(SYS_execve, 0)) &&
	    dt_sys_kern_before(271, t - SEC, sk_probe(SYS_execveat, 0)),
	    "but the entry of the exec that made it was");
	dtt_check(!dt_sys_kern_before(271, t + SEC, sk_probe(SYS_execve, 0)),
	    "and none after its attach");
	dt_sys_kern_exit(270, T0 + 48);
	dt_sys_kern_exit(271, T0 + 48);

	/* The departed are kept until the reader is 0.5 s past them. */
	dtt_check(dt_sys_kern_traced(100, T0 + 5),
	    "a departed pid is kept while events are recent");
	(void)dt_sys_kern_traced(999, T0 + 2 * SEC);
	dt_sys_kern_attach(300, false);	/* a change: the reader copies again */
	dt_sys_kern_exit(300, T0 + 2 * SEC);
	dtt_check(!dt_sys_kern_traced(100, T0 + 5),
	    "and forgotten once the reader is past them");
	dtt_check(dt_sys_kern_traced(300, T0 + 2 * SEC - 1),
	    "but not the recent ones");

	/* Bounded: a flood of exits keeps the latest 4096. */
	t = T0 + 3 * SEC;
	(void)dt_sys_kern_traced(999, t);
	for (i = 0; i < 5000; i++) {
		dt_sys_kern_attach(10000 + i, false);
		dt_sys_kern_exit(10000 + i, t + (uint64_t)i);
	}
	dtt_check(!dt_sys_kern_traced(10000, t - 1) &&
	    dt_sys_kern_traced(10000 + 4999, t + 4998) &&
	    dt_sys_kern_traced(10000 + 5000 - 4096, t),
	    "5000 exits at once: the latest 4096 kept");

	/*
	 * Launched: from its exec, an image that preloads the library and
	 * names our socket is the library's before it attached; one that
	 * names another dtd's is not.
	 */
	a = sk_child(ours, &wa);
	b = sk_child(other, &wb);
	if (a == -1 || b == -1) {
		dtt_check(false, "fork: %s", strerror(errno));
		return dtt_done();
	}
	t += SEC;
	(void)dt_sys_kern_traced(999, t);
	dt_sys_kern_exec(a);
	dt_sys_kern_exec(b);
	dtt_check(dt_sys_kern_traced(a, t + 1),
	    "a launched image is the library's from its exec");
	dtt_check(!dt_sys_kern_traced(b, t + 1),
	    "one for another dtd is the kernel's");
	dt_sys_kern_attach(a, false);
	dt_sys_kern_exit(a, t + 100);
	dtt_check(dt_sys_kern_traced(a, t + 50) &&
	    !dt_sys_kern_traced(a, t + 101),
	    "once it attached and left, the pid is the kernel's again");
	dt_sys_kern_exec(a);
	all = true;
	for (i = 0; i < 3; i++)
		all &= dt_sys_kern_traced(a, t + 200 + (uint64_t)i);
	dtt_check(all, "exec'd again, the library's again");
	(void)dt_sys_kern_traced(999, t + 3 * SEC);
	dtt_check(!dt_sys_kern_traced(a, t + 3 * SEC),
	    "a launched image that never attaches is the kernel's after 1 s");

	close(wa);
	close(wb);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	return dtt_done();
}
