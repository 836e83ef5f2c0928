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
 * btrace -c of a dynamic command that starts a statically linked
 * program later (issue 22): the launcher's helper holds each static
 * image at its exec until dtd has opened the kernel's copy of its
 * calls (DTTR_F_HOOKED, providers/tracepoint/dt_tp_ksysarm.c).  Against
 * a dtd of our own, stopped by its pid; root only (perf).
 *   ksysarm_test static DTD BTRACE STATIC DYN
 *			a shell running DYN then STATIC: STATIC's calls
 *			exactly (their return values its parent's pid),
 *			DYN's once (the hooks'), nothing dropped, the
 *			shell's as many as the hooks alone count; under
 *			a latency the hooks time, STATIC's calls said as
 *			dropped (no hook's duration); STATIC
 *			starting a shell that execs STATIC again (a
 *			static image's dynamic child: covered, once);
 *			two STATICs at once in the background
 *   ksysarm_test vfork DTD BTRACE STATIC SPAWN
 *			STATIC exec'd from a vfork(2) child and from
 *			posix_spawn(3)'s, SPAWN's own calls once; from a
 *			child forked before its parent's exec of STATIC,
 *			one of 71 children
 *   ksysarm_test dynamic DTD BTRACE DYN SPAWN
 *			a shell running DYN alone: counted once, and dtd
 *			says at its exit that no kernel record of the
 *			tree reached it (its counters, not a time); a
 *			question for a process the asker does not hold
 *			refused; for one it holds, a dynamic image in
 *			the tree (ENOEXEC), one outside it (ENOENT) and
 *			one of two threads (EPERM), asked by SPAWN from
 *			inside a tree
 *   ksysarm_test bound DTD BTRACE STATIC
 *			with at most two images followed at once
 *			(USERDT_TEST_KARM_MAX), three STATICs alive
 *			together: the third said not traced, the two
 *			others' calls exactly; with a return's event
 *			that will not open (USERDT_TEST_KARM_FAIL), an
 *			image not followed at all, not by entries alone
 *   ksysarm_test refuse DTD BTRACE STATIC
 *			the pid found another's after the open
 *			(USERDT_TEST_KARM_STILL, once): not one record
 *			reached the open, said not traced; with room
 *			for one direction's descriptors in the pid
 *			followers' budget (USERDT_TEST_PIDFDS): entries
 *			followed, twice (the first's given back),
 *			entries and returns refused, said not traced
 *   ksysarm_test setid DTD BTRACE SPAWN DYN LIB STATIC
 *			a set-gid copy of SPAWN (group 65533, mode
 *			02710, made in a directory beside SPAWN: the
 *			build's, not a nosuid mount; removed too when
 *			the test is ended by a signal) started later
 *			by a shell: its
 *			calls exactly, with its group, said read from
 *			the kernel, nothing dropped; the dynamic child
 *			it starts with its own ids again (its loader
 *			took LD_PRELOAD out) exactly, by the same feed;
 *			one that gets the library LIB back, exactly
 *			once (the hooks');
 *			started by an image of the tree whose branch a
 *			static image's feed covers, still counted (its
 *			exec dropped that feed), and with
 *			fs.suid_dumpable 1 (its exec keeps that feed;
 *			restored on every path) counted once, not
 *			twice; a question for it held by SPAWN, the
 *			child's ids and SPAWN's 65534 but for its
 *			set-id group, refused (EPERM), then as root
 *			answered (0) and its calls counted
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "ksysarm.h"

#define KA_RUN_MS	60000

struct dtt_dtd		 ka_dd;

/* btrace -v -d DEV -c cmd -e script: its status; its output in out. */
int
ka_btrace(const char *btrace, const char *cmd, const char *script,
    char *out, size_t len)
{
	char *argv[] = { (char *)btrace, "-v", "-d", ka_dd.dd_dev, "-c",
	    (char *)cmd, "-e", (char *)script, NULL };
	char path[256];

	snprintf(path, sizeof(path), "%s/btrace.out", ka_dd.dd_dir);
	return dtt_run_capture(argv, KA_RUN_MS, path, true, out, len);
}

const char ka_count[] = "syscall:getppid:entry { @[comm] = count(); }";

/*
 * btrace -c cmd counting getppid() by comm: whether it exited 0 with
 * nothing dropped and want[i] calls of names[i] each (-1: none).
 */
static void
ka_expect(const char *btrace, const char *cmd, const char *what,
    const char *const names[], const long want[], unsigned int n)
{
	static char out[65536];
	char key[64];
	unsigned int i;
	unsigned int nfail = dtt_nfail;
	long v;
	int status;

	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	dtt_check(dtt_exited0(status), "%s: btrace exits 0", what);
	dtt_check(strstr(out, "\n0 events dropped\n") != NULL,
	    "%s: nothing dropped", what);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "@[%s]: ", names[i]);
		v = dtt_line_value(out, key);
		dtt_check(v == want[i], "%s: %ld getppid() of %s, want %ld",
		    what, v, names[i], want[i]);
	}
	if (dtt_nfail != nfail)
		fprintf(stderr, "%s", out);
}

static void
run_static(const char *btrace, const char *st, const char *dyn)
{
	static char out[65536];
	const char *names[] = { "tp_static", "tp_target" };
	char cmd[2048], key[64];
	long want[2], v, ppid;
	int status;

	/* the static program's return values: its parent's pid, the shell */
	snprintf(cmd, sizeof(cmd), "sh -c '%s getppid 100; %s %d ppid; true'",
	    dyn, st, KA_NCALLS);
	status = ka_btrace(btrace, cmd, "syscall:getppid:entry "
	    "{ @[comm] = count(); } syscall:getppid:return "
	    "/comm == \"tp_static\"/ { @r[retval] = count(); }", out,
	    sizeof(out));
	v = dtt_line_value(out, "@[tp_static]: ");
	ppid = dtt_line_value(out, "ppid ");
	snprintf(key, sizeof(key), "@r[%ld]: ", ppid);
	if (!dtt_check(dtt_exited0(status) && v == KA_NCALLS &&
	    dtt_line_value(out, "@[tp_target]: ") == 100 && ppid > 0 &&
	    dtt_line_value(out, key) == KA_NCALLS &&
	    strstr(out, "\n0 events dropped\n") != NULL, "btrace -c of a "
	    "shell running DYN then STATIC: %ld getppid() of STATIC, want "
	    "%d, all %d returning its parent %ld (%ld); DYN's %ld, want 100; "
	    "nothing dropped", v, KA_NCALLS, KA_NCALLS, ppid,
	    dtt_line_value(out, key), dtt_line_value(out, "@[tp_target]: ")))
		fprintf(stderr, "%s", out);

	/* the shell's own calls: what the hooks alone counted, once */
	{
		long sh = dtt_line_value(out, "@[sh]: "), sh0;

		setenv("BTRACE_HOOKEDTREE", "0", 1);
		status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
		unsetenv("BTRACE_HOOKEDTREE");
		sh0 = dtt_line_value(out, "@[sh]: ");
		if (!dtt_check(dtt_exited0(status) && sh > 0 && sh == sh0 &&
		    dtt_line_value(out, "@[tp_static]: ") == -1, "the shell's "
		    "getppid(): %ld, the hooks' alone %ld (where STATIC's "
		    "went unseen)", sh, sh0))
			fprintf(stderr, "%s", out);
	}

	/* a static image's dynamic child exec'ing it again: covered */
	snprintf(cmd, sizeof(cmd), "sh -c '%s 500 spawn 1 /bin/sh -c \"%s "
	    "getppid 50; exec %s 200\"; true'", st, dyn, st);
	want[0] = 700;
	want[1] = 50;
	ka_expect(btrace, cmd, "STATIC starting a shell that runs DYN and "
	    "execs STATIC", names, want, 2);

	/*
	 * A latency the hooks time (bt_lat.c's fold): the static
	 * program's returns carry no hook's duration, and their loss is
	 * said as drops, not kept silent.
	 */
	snprintf(cmd, sizeof(cmd), "sh -c '%s getppid 100; %s %d; true'",
	    dyn, st, KA_NCALLS);
	status = ka_btrace(btrace, cmd, "syscall:getppid:entry "
	    "{ @s[tid] = nsecs; } syscall:getppid:return /@s[tid]/ "
	    "{ @l[comm] = hist(nsecs - @s[tid]); delete(@s[tid]); } "
	    "END { clear(@s); }", out, sizeof(out));
	if (!dtt_check(dtt_exited0(status) &&
	    strstr(out, "@l[tp_target]:") != NULL &&
	    strstr(out, "@l[tp_static]:") == NULL &&
	    strstr(out, "\n3000 events dropped\n") != NULL, "a latency "
	    "folded by the hooks: DYN's timed, STATIC's %d calls said "
	    "dropped", KA_NCALLS))
		fprintf(stderr, "%s", out);

	/* two at once, from a shell's background jobs */
	snprintf(cmd, sizeof(cmd), "sh -c '%s 1000 & %s 1000 & wait'", st,
	    st);
	want[0] = 2000;
	ka_expect(btrace, cmd, "two STATICs in the background", names, want,
	    1);
}

static void
run_vfork(const char *btrace, const char *st, const char *spawn)
{
	const char *names[] = { "tp_static", "kt_spawn" };
	const long want[] = { KA_NCALLS, 100 };
	long want2[1];
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s 100 vfork %s %d", spawn, st, KA_NCALLS);
	ka_expect(btrace, cmd, "STATIC from a vfork child", names, want, 2);
	snprintf(cmd, sizeof(cmd), "%s 100 spawn %s %d", spawn, st, KA_NCALLS);
	ka_expect(btrace, cmd, "STATIC from posix_spawn", names, want, 2);

	/*
	 * A child forked before its parent's static exec did not inherit
	 * the parent's events, even when the parent had more children
	 * than dtd keeps: its own static exec gets its own feed.
	 */
	snprintf(cmd, sizeof(cmd), "%s 0 kids 70 %s", spawn, st);
	want2[0] = 1500;
	ka_expect(btrace, cmd, "STATIC from a child forked before its "
	    "parent's static exec, among 71", names, want2, 1);
}

/*
 * A UDT_HELLO_KARM naming pid, as a helper would ask, with more flags:
 * dtd's errno (0: done), or -1 when it did not answer.
 */
static int
ka_askf(pid_t pid, uint32_t more)
{
	struct {
		struct udt_hello	h;
		struct udt_maps_req	r;
	} q;
	struct udt_maps_hdr h;
	struct timeval tv = { 5, 0 };
	int fd, rv = -1;

	memset(&q, 0, sizeof(q));
	q.h.uh_magic = UDT_MAGIC;
	q.h.uh_version = UDT_VERSION;
	q.h.uh_flags = UDT_HELLO_KARM | more;
	q.r.umr_pid = pid;
	if ((fd = dtt_connect(ka_dd.dd_sock)) == -1)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, &q, sizeof(q)) == (ssize_t)sizeof(q) &&
	    recv(fd, &h, sizeof(h), MSG_WAITALL) == (ssize_t)sizeof(h) &&
	    h.umh_magic == UDT_MAGIC && h.umh_count == 0)
		rv = (int)h.umh_error;
	close(fd);
	return rv;
}

static int
ka_ask(pid_t pid)
{
	return ka_askf(pid, 0);
}

/*
 * Whoever asks must hold the process it names at a ptrace stop: dtd
 * takes no one's word for a pid, and answers each.
 */
static void
run_lies(void)
{
	pid_t kid;
	int e1, e2, e3, e4, e5;

	if ((kid = fork()) == 0) {
		pause();
		_exit(0);
	}
	e1 = ka_ask(getpid());
	e2 = ka_ask(1);
	e3 = ka_ask(kid);
	e4 = ka_ask(-5);
	/* a maps query too: two questions, neither answered */
	e5 = ka_askf(kid, UDT_HELLO_MAPS);
	kill(kid, SIGKILL);
	(void)waitpid(kid, NULL, 0);
	dtt_check(e1 == EPERM && e2 == EPERM && e3 == EPERM && e4 == EINVAL &&
	    e5 == EINVAL, "UDT_HELLO_KARM for itself, pid 1, an untraced "
	    "child, -5, and with UDT_HELLO_MAPS: %s, %s, %s, %s, %s; want "
	    "EPERM thrice, then EINVAL twice", strerror(e1), strerror(e2),
	    strerror(e3), strerror(e4), strerror(e5));
}

static void
run_dynamic(const char *btrace, const char *dyn)
{
	const char *names[] = { "tp_target" };
	const long want[] = { 100000 };
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "sh -c '%s getppid 100000; true'", dyn);
	ka_expect(btrace, cmd, "a shell running DYN alone", names, want, 1);
}

/*
 * Processes the asker does hold, while an open's tree exists: a dynamic
 * image of the tree is not a static one to follow (ENOEXEC), one of no
 * tree is no open's (ENOENT), whatever it runs, and one of two threads
 * is at no exec stop (EPERM): dtd reads no file of either.
 */
static void
run_held(const char *btrace, const char *spawn)
{
	static char out[65536];
	const char *p;
	char cmd[2048];
	pid_t kid;
	int status, e1 = -2, e2 = -2, e3 = -2;

	if ((kid = fork()) == 0)
		for (;;)
			pause();
	snprintf(cmd, sizeof(cmd), "%s 10 ask %d", spawn, (int)kid);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	kill(kid, SIGKILL);
	(void)waitpid(kid, NULL, 0);
	if ((p = strstr(out, "asked ")) != NULL)
		(void)sscanf(p, "asked %d %d %d", &e1, &e2, &e3);
	if (!dtt_check(dtt_exited0(status) && e1 == ENOEXEC && e2 == ENOENT &&
	    e3 == EPERM, "UDT_HELLO_KARM from a tree for a held dynamic "
	    "image of it, for a held process of no tree, and for one of two "
	    "threads: %d, %d, %d; want ENOEXEC (%d), ENOENT (%d), EPERM (%d)",
	    e1, e2, e3, ENOEXEC, ENOENT, EPERM))
		fprintf(stderr, "%s", out);
}

/* How many lines of out hold what. */
unsigned int
ka_lines(const char *out, const char *what)
{
	const char *p = out;
	unsigned int n = 0;

	while ((p = strstr(p, what)) != NULL) {
		n++;
		p += strlen(what);
	}
	return n;
}

/*
 * Three STATICs alive at once under a bound of two: each waits for a
 * byte on its FIFO before its calls and for the end of its input after
 * them, and says "done" in between, which the shell reads from each
 * before it ends any input: every one exec'd (and was asked for) while
 * the others lived.
 */
static void
run_bound(const char *btrace, const char *st)
{
	static char out[65536];
	char cmd[16384], abs[PATH_MAX];
	long v;
	int status;

	/* the shell runs it from dtd's directory, where the FIFOs are */
	if (realpath(st, abs) == NULL) {
		dtt_check(false, "STATIC's path: %s", strerror(errno));
		return;
	}
	st = abs;
	snprintf(cmd, sizeof(cmd), "sh -c 'cd %s && mkfifo i1 i2 i3 o1 o2 o3 "
	    "&& { %s 1000 wait <i1 >o1 & %s 1000 wait <i2 >o2 & "
	    "%s 1000 wait <i3 >o3 & "
	    "exec 3>i1 4>i2 5>i3 6<o1 7<o2 8<o3; echo >&3; echo >&4; "
	    "echo >&5; read a <&6; read b <&7; read c <&8; "
	    "exec 3>&- 4>&- 5>&-; wait; }; rm -f i1 i2 i3 o1 o2 o3'",
	    ka_dd.dd_dir, st, st, st);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	v = dtt_line_value(out, "@[tp_static]: ");
	if (!dtt_check(dtt_exited0(status) && v == 2000 &&
	    ka_lines(out, "its system calls are not traced") == 1 &&
	    ka_lines(out, "its system calls are read from the kernel") == 2 &&
	    strstr(out, "\n0 events dropped\n") != NULL, "three STATICs "
	    "at once, two followed at most: %ld getppid() of STATIC, want "
	    "2000; one said not traced, two read from the kernel; nothing "
	    "dropped", v))
		fprintf(stderr, "%s", out);

	/*
	 * Entries and returns, the returns' event failing: both or none,
	 * and the helper told so (not a count of entries alone, said as
	 * read from the kernel).
	 */
	snprintf(cmd, sizeof(cmd), "sh -c '%s 100; true'", st);
	status = ka_btrace(btrace, cmd, "syscall:getppid:entry "
	    "{ @[comm] = count(); } syscall:getppid:return "
	    "{ @r[comm] = count(); }", out, sizeof(out));
	if (!dtt_check(dtt_exited0(status) &&
	    dtt_line_value(out, "@[tp_static]: ") == -1 &&
	    dtt_line_value(out, "@r[tp_static]: ") == -1 &&
	    ka_lines(out, "its system calls are not traced") == 1, "STATIC "
	    "whose return event fails: not followed, and said so"))
		fprintf(stderr, "%s", out);
}

/* btrace -c of a shell running STATIC 100: whether as want says. */
static void
ka_refuse(const char *btrace, const char *st, bool ret, long want,
    const char *what)
{
	static char out[65536];
	char cmd[2048];
	int status;

	snprintf(cmd, sizeof(cmd), "sh -c '%s 100; true'", st);
	status = ka_btrace(btrace, cmd, ret ? "syscall:getppid:entry "
	    "{ @[comm] = count(); } syscall:getppid:return "
	    "{ @r[comm] = count(); }" : ka_count, out, sizeof(out));
	if (!dtt_check(dtt_exited0(status) &&
	    dtt_line_value(out, "@[tp_static]: ") == want &&
	    (!ret || dtt_line_value(out, "@r[tp_static]: ") == want) &&
	    ka_lines(out, want == -1 ? "its system calls are not traced" :
	    "its system calls are read from the kernel") == 1 &&
	    strstr(out, "\n0 events dropped\n") != NULL, "%s: %ld "
	    "getppid() of STATIC, want %ld", what,
	    dtt_line_value(out, "@[tp_static]: "), want))
		fprintf(stderr, "%s", out);
}

/*
 * dtd started with its first check after an open failing and room for
 * one event's descriptors (a descriptor a CPU) in the budget.
 */
static void
run_refuse(const char *btrace, const char *st)
{
	ka_refuse(btrace, st, false, -1, "the pid another's after the open");
	ka_refuse(btrace, st, false, 100, "entries, within the budget");
	ka_refuse(btrace, st, true, -1, "entries and returns, past it");
	ka_refuse(btrace, st, false, 100, "entries again: all given back");
}

int
main(int argc, char *argv[])
{
	char errbuf[4096], fds[32];
	bool dyn, bound, refuse, setid;
	long ncpu;

	refuse = argc == 5 && strcmp(argv[1], "refuse") == 0;
	bound = argc == 5 && (refuse || strcmp(argv[1], "bound") == 0);
	setid = argc == 8 && strcmp(argv[1], "setid") == 0;
	if (!bound && !setid && (argc != 6 ||
	    (strcmp(argv[1], "static") != 0 &&
	    strcmp(argv[1], "vfork") != 0 &&
	    strcmp(argv[1], "dynamic") != 0))) {
		fprintf(stderr, "usage: ksysarm_test static|vfork dtd btrace "
		    "static dyn|spawn\n"
		    "       ksysarm_test dynamic dtd btrace dyn spawn\n"
		    "       ksysarm_test bound|refuse dtd btrace static\n"
		    "       ksysarm_test setid dtd btrace spawn dyn lib "
		    "static\n");
		return 2;
	}
	dyn = strcmp(argv[1], "dynamic") == 0;
	dtt_tag(argv[1]);
	/* dtd's environment: a bound three processes pass */
	if (refuse) {
		/* as many as dtd's events take: sysconf's, every CPU */
		if ((ncpu = sysconf(_SC_NPROCESSORS_CONF)) <= 0)
			ncpu = 1;
		snprintf(fds, sizeof(fds), "%ld", ncpu);
		setenv("USERDT_TEST_PIDFDS", fds, 1);
		setenv("USERDT_TEST_KARM_STILL", "1", 1);
	} else if (bound) {
		setenv("USERDT_TEST_KARM_MAX", "2", 1);
		setenv("USERDT_TEST_KARM_FAIL", "return", 1);
	}
	if (dtt_dtd_init(&ka_dd, "ksysarm_test") == -1 ||
	    dtt_dtd_start(&ka_dd, argv[2], (char *[]){ "--no-ksyms", NULL },
	    errbuf, sizeof(errbuf)) == -1) {
		dtt_check(false, "dtd starts: %s", errbuf);
		dtt_dtd_fini(&ka_dd, true);
		return dtt_done();
	}
	/* The commands' library finds this dtd, and so does the helper. */
	setenv("USERDT_SOCKET", ka_dd.dd_sock, 1);
	if (setid)
		run_setid(argv[3], argv[4], argv[5], argv[6], argv[7]);
	else if (dyn) {
		run_dynamic(argv[3], argv[4]);
		run_lies();
		run_held(argv[3], argv[5]);
	} else if (refuse)
		run_refuse(argv[3], argv[4]);
	else if (bound)
		run_bound(argv[3], argv[4]);
	else if (strcmp(argv[1], "static") == 0)
		run_static(argv[3], argv[4], argv[5]);
	else
		run_vfork(argv[3], argv[4], argv[5]);
	dtt_check(dtt_dtd_stop(&ka_dd, SIGTERM) != -1, "dtd stops");
	/* the line dtd says at its exit, whole: its absence fails */
	if (dyn) {
		dtt_check(dtt_dtd_logsays(&ka_dd, "hooked trees: 0 static "
		    "execs followed, 0 covered already, 0 refused at the "
		    "bound; kernel feeds of trees: 0 calls given, 0 of "
		    "hooked processes dropped"), "dtd followed no exec and "
		    "no kernel record of the tree reached it");
		dtt_check(!dtt_dtd_logsays(&ka_dd, "dtd: tracepoint: "),
		    "dtd read no perf record at all");
	} else if (refuse) {
		dtt_check(dtt_dtd_logsays(&ka_dd, "hooked trees: 2 static "
		    "execs followed, 0 covered already, 1 refused at the "
		    "bound;"), "dtd followed two static execs and refused "
		    "one at the descriptors' bound");
		dtt_check(dtt_dtd_logsays(&ka_dd, "the perf descriptors pid "
		    "followers may hold are taken"), "dtd said the budget");
	} else if (bound) {
		dtt_check(dtt_dtd_logsays(&ka_dd, "hooked trees: 2 static "
		    "execs followed, 0 covered already, 1 refused at the "
		    "bound;"), "dtd followed two static execs and refused "
		    "one at the bound");
		dtt_check(dtt_dtd_logsays(&ka_dd, "has 2 static images "
		    "followed at once already"), "dtd said the bound");
		dtt_check(dtt_dtd_logsays(&ka_dd, "cannot follow the static "
		    "image of "), "dtd said the image it could not follow");
	} else if (setid)
		dtt_check(dtt_dtd_logsays(&ka_dd, "hooked trees: 2 static "
		    "execs followed, 1 covered already, 0 refused at the "
		    "bound;") && dtt_dtd_logsays(&ka_dd, "set-id execs "
		    "followed: 5\n"), "dtd followed two static execs and five "
		    "set-id ones, one set-id taken as covered (its exec kept "
		    "the feed)");
	else if (strcmp(argv[1], "static") == 0)
		dtt_check(dtt_dtd_logsays(&ka_dd, "hooked trees: 5 static "
		    "execs followed, 1 covered already, 0 refused at the "
		    "bound;"), "dtd followed the static execs: five, one "
		    "covered");
	else
		dtt_check(dtt_dtd_logsays(&ka_dd, "hooked trees: 4 static "
		    "execs followed, 0 covered already, 0 refused at the "
		    "bound;"), "dtd followed the static execs: four");
	dtt_dtd_fini(&ka_dd, true);
	return dtt_done();
}
