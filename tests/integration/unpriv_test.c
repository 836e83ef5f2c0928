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
 * unpriv_test DTD BTRACE DTRUN PRELOAD SPIN
 *
 * dtd without root, as the README tells a user to try it: two throwaway
 * ordinary users, A and B, made here.  A starts dtd --device DIR/dt with
 * nothing else (the ingest socket goes to the default in A's runtime
 * directory), then traces a command of A's with btrace -d DIR/dt -c,
 * naming no socket: syscall, interval and profile probes must all
 * deliver, profile through perf where perf_event_paranoid lets A sample
 * A's own processes, sampling every thread and child of the command and
 * nothing untraced.  dtrun, naming no socket either, must attach to A's dtd.
 * B can neither open the device nor connect to the socket, and a
 * process of B's pointed at it runs untraced; even root's connection
 * is closed, and root cannot open the device.  dtd says once what is
 * unavailable, refuses options that need root, and leaves nothing
 * behind when stopped.
 *
 * The programs are copied into the test's directory first: the build
 * tree may lie where A cannot reach it (a clone in /root).  Root only,
 * and /dev/fuse must be open to ordinary users (scripts/deps.sh).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "syscall_util.h"

static struct dtt_user	ua, ub;
static char		dir[64] = "/tmp/unpriv.XXXXXX";
static char		xdg[128], dev[128], sock[160], errpath[128];
static char		bin_dtd[128], bin_btrace[128], bin_dtrun[128];
static char		bin_lib[128], bin_spin[128];
static char		env_xdg[160], env_lib[160];
static char *const	env_a[] = { "PATH=/usr/bin:/bin", env_xdg, env_lib,
			    NULL };

/* Copy src to dst, mode 0755: 0 or -1. */
static int
copy(const char *src, const char *dst)
{
	char buf[65536];
	ssize_t n;
	int in, out, rc = -1;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	while (out != -1 && (n = read(in, buf, sizeof(buf))) >= 0) {
		if (n == 0) {
			rc = 0;
			break;
		}
		if (write(out, buf, (size_t)n) != n)
			break;
	}
	close(in);
	if (out != -1 && (close(out) != 0 || fchmodat(AT_FDCWD, dst, 0755,
	    0) != 0))
		rc = -1;
	return rc;
}

/*
 * Run argv as u with env, stdout and stderr on out and err (-1: ours),
 * and keep (-1: none) as descriptor 3: the pid, or -1.
 */
static pid_t
spawn_as(const struct dtt_user *u, char *const argv[], char *const env[],
    int out, int err, int keep)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) != 0)
		return pid;
	if (dtt_user_become(u) == -1)
		_exit(126);
	if ((out != -1 && dup2(out, STDOUT_FILENO) == -1) ||
	    (err != -1 && dup2(err, STDERR_FILENO) == -1) ||
	    (keep != -1 && dup2(keep, 3) == -1))
		_exit(126);
	execve(argv[0], argv, env);
	_exit(127);
}

/* Run argv as u to its end (bounded): its wait status, or -1. */
static int
run_as(const struct dtt_user *u, char *const argv[], char *const env[],
    int out, int err)
{
	pid_t pid = spawn_as(u, argv, env, out, err, -1);

	return pid == -1 ? -1 : dtt_wait(pid, 60000);
}

static int
try_open(void *arg)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return errno;
	close(fd);
	return 0;
}

static int
try_connect(void *arg)
{
	int fd = dtt_connect(arg);

	if (fd == -1)
		return errno;
	close(fd);
	return 0;
}

/* The tracees attached so far, asked as A (whose dtd answers only A). */
static int
attached_a(void *arg)
{
	struct udt_stats st;

	(void)arg;
	if (st_ingest_stats(sock, &st) != 0)
		return 254;
	return st.us_attached > 250 ? 250 : (int)st.us_attached;
}

/* How many lines of file hold s. */
static int
count_lines(const char *file, const char *s)
{
	char line[1024];
	FILE *fp;
	int n = 0;

	if ((fp = fopen(file, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, s) != NULL)
			n++;
	fclose(fp);
	return n;
}

/* The value of btrace's map line "NAME: N" in file, or -1. */
static long
map_value(const char *file, const char *name)
{
	char line[1024];
	size_t len = strlen(name);
	long v = -1;
	FILE *fp;

	if ((fp = fopen(file, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, name, len) == 0 && line[len] == ':')
			v = strtol(line + len + 1, NULL, 10);
	fclose(fp);
	return v;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The library's disassembler module, from beside it to beside its copy. */
static int
copy_module(const char *lib)
{
	char from[4096], to[160];
	const char *slash = strrchr(lib, '/');

	snprintf(from, sizeof(from), "%.*s/libuserdt-preload-cs.so",
	    slash != NULL ? (int)(slash - lib) : 1, slash != NULL ? lib : ".");
	snprintf(to, sizeof(to), "%s/libuserdt-preload-cs.so", dir);
	return copy(from, to);
}

static bool
setup(char *argv[])
{
	if (!dtt_check(geteuid() == 0, "runs as root (it makes two users)"))
		return false;
	if (!dtt_check(access("/dev/fuse", F_OK) == 0 &&
	    (dtt_user_add(&ua) == 0) & (dtt_user_add(&ub) == 0),
	    "users %s and %s made", ua.du_name, ub.du_name))
		return false;
	if (!dtt_check(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0 &&
	    chown(dir, ua.du_uid, ua.du_gid) == 0,
	    "%s: A's, 0755", dir))
		return false;
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(dev, sizeof(dev), "%s/dt", dir);
	snprintf(sock, sizeof(sock), "%s/userdt/ingest.sock", xdg);
	snprintf(errpath, sizeof(errpath), "%s/dtd.err", dir);
	snprintf(bin_dtd, sizeof(bin_dtd), "%s/dtd", dir);
	snprintf(bin_btrace, sizeof(bin_btrace), "%s/btrace", dir);
	snprintf(bin_dtrun, sizeof(bin_dtrun), "%s/dtrun", dir);
	snprintf(bin_lib, sizeof(bin_lib), "%s/libuserdt-preload.so", dir);
	snprintf(bin_spin, sizeof(bin_spin), "%s/udtspin", dir);
	snprintf(env_xdg, sizeof(env_xdg), "XDG_RUNTIME_DIR=%s", xdg);
	snprintf(env_lib, sizeof(env_lib), "USERDT_PRELOAD=%s", bin_lib);
	/* A runtime directory as pam_systemd makes one: A's, 0700. */
	return dtt_check(mkdir(xdg, 0700) == 0 &&
	    chown(xdg, ua.du_uid, ua.du_gid) == 0 &&
	    copy(argv[1], bin_dtd) == 0 && copy(argv[2], bin_btrace) == 0 &&
	    copy(argv[3], bin_dtrun) == 0 && copy(argv[4], bin_lib) == 0 &&
	    copy_module(argv[4]) == 0 &&
	    copy(argv[5], bin_spin) == 0, "programs copied to %s", dir);
}

/* Options that need root are refused at once, with a reason. */
static void
check_refusals(void)
{
	static const struct {
		const char	*opt;
		const char	*why;
	} bad[] = {
		{ NULL,			"--device ~/dt" },
		{ "--frontend=cuse",	"needs root" },
		{ "--group=0",		"needs root" },
	};
	char path[160];
	size_t i;
	int fd, status;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { bin_dtd, "--foreground", "--device", dev,
		    (char *)bad[i].opt, NULL };

		if (bad[i].opt == NULL)
			argv[2] = NULL;
		snprintf(path, sizeof(path), "%s/refusal%zu", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		status = fd == -1 ? -1 : run_as(&ua, argv, env_a, -1, fd);
		if (fd != -1)
			close(fd);
		dtt_check(status != -1 && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 1 && count_lines(path, bad[i].why)
		    == 1, "dtd %s as A: exit 1, says '%s'",
		    bad[i].opt ? bad[i].opt : "without --device", bad[i].why);
	}
}

/* Start A's dtd: its pid, or -1. */
static pid_t
start_dtd(void)
{
	char *argv[] = { bin_dtd, "--foreground", "--device", dev,
	    "--ready-fd", "3", NULL };
	struct pollfd pfd;
	char buf[8] = "";
	int p[2], efd;
	pid_t pid;

	efd = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (efd == -1 || pipe2(p, O_CLOEXEC) == -1)
		return -1;
	pid = spawn_as(&ua, argv, env_a, -1, efd, p[1]);
	close(efd);
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	if (pid == -1 || poll(&pfd, 1, DTT_READY_MS) != 1 ||
	    read(p[0], buf, sizeof(buf) - 1) != 6 ||
	    strcmp(buf, "ready\n") != 0) {
		close(p[0]);
		if (pid != -1)
			(void)dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
		return -1;
	}
	close(p[0]);
	return pid;
}

/*
 * The device as A sees it (nobody else may even stat it): a mount, A's,
 * 0600.  0, or the errno of stat, or EINVAL.
 */
static int
device_a(void *arg)
{
	struct stat st, dst;

	(void)arg;
	if (stat(dev, &st) != 0 || stat(dir, &dst) != 0)
		return errno;
	return S_ISREG(st.st_mode) && st.st_uid == ua.du_uid &&
	    (st.st_mode & 07777) == 0600 && st.st_dev != dst.st_dev ? 0 :
	    EINVAL;
}

/* What A's dtd made, and that it said once what it cannot do. */
static void
check_files(void)
{
	struct stat st;
	char sdir[160];

	dtt_check(dtt_user_run(&ua, device_a, NULL) == 0,
	    "device as A sees it: a mount, A's, 0600");
	snprintf(sdir, sizeof(sdir), "%s/userdt", xdg);
	dtt_check(lstat(sdir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == ua.du_uid && (st.st_mode & 07777) == 0700,
	    "ingest directory %s: A's, 0700", sdir);
	dtt_check(lstat(sock, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_uid == ua.du_uid && (st.st_mode & 07777) == 0600,
	    "ingest socket in A's runtime directory: A's, 0600");
	dtt_check(count_lines(errpath, "running without root") == 1,
	    "dtd says once that it runs without root");
	dtt_check(count_lines(errpath, "kernel stacks") == 1 &&
	    count_lines(errpath, "/dev/ksyms") == 1 &&
	    count_lines(errpath, "CUSE") == 1 &&
	    count_lines(errpath, "other users' processes") == 1,
	    "... naming kernel stacks, /dev/ksyms, CUSE, other users");
}

/* A traces a command with btrace, naming no socket. */
static void
check_btrace(void)
{
	char cmd[256], out[160];
	char *argv[] = { bin_btrace, "-d", dev, "-c", cmd, "-e",
	    "syscall:write:entry /comm == \"udtspin\"/ { @w = count(); }\n"
	    "interval:hz:50 { @t = count(); }\n"
	    "profile:hz:100 /comm == \"udtspin\"/ { @p = count(); }",
	    NULL };
	long w, t, p;
	int fd, status;

	/* The shell forks first: a vfork must survive timer mode. */
	snprintf(cmd, sizeof(cmd), "true; %s spin 1", bin_spin);
	snprintf(out, sizeof(out), "%s/btrace.out", dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	status = fd == -1 ? -1 : run_as(&ua, argv, env_a, fd, -1);
	if (fd != -1)
		close(fd);
	w = map_value(out, "@w");
	t = map_value(out, "@t");
	p = map_value(out, "@p");
	dtt_check(dtt_exited0(status), "btrace -c as A exited 0");
	dtt_check(count_lines(out, "0x") == 1,
	    "the command ran to its end under btrace");
	dtt_check(w >= 1, "syscall:write:entry of A's command: %ld", w);
	/* 1 s at 50 Hz; the machine may be busy. */
	dtt_check(t >= 20, "interval:hz:50 over 1 s: %ld", t);
	/* 100 Hz of the command's CPU time, 1 s of spinning. */
	dtt_check(p >= 10, "profile:hz:100 of A's spinning command: %ld", p);
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/*
 * A's command runs children whose parent, a subshell, ends with them
 * while btrace is stopped: without the process connector (root's) btrace
 * reads the tree from /proc, where none of them is left once btrace goes
 * on; their parents are dtd's word (UDT_HELLO_KIN).  The command waits on
 * a FIFO for the go, so that btrace records before it is stopped, and
 * says on another when the subshell is over; the blocking opens and
 * reads are bounded by an alarm.
 */
static void
check_gone_kin(void)
{
	char cmd[512], out[160], err[160], go[160], done[160], buf[64];
	char *argv[] = { bin_btrace, "-d", dev, "-c", cmd, "-e",
	    "syscall:write:entry /comm == \"echo\"/ { @e = count(); }",
	    NULL };
	struct sigaction sa;
	int ofd = -1, efd = -1, fd, status = -1;
	ssize_t n;
	pid_t bt = -1;
	long e;

	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(done, sizeof(done), "%s/done", dir);
	snprintf(out, sizeof(out), "%s/kin.out", dir);
	snprintf(err, sizeof(err), "%s/kin.err", dir);
	if (!dtt_check(mkfifo(go, 0600) == 0 && chown(go, ua.du_uid,
	    ua.du_gid) == 0 && mkfifo(done, 0600) == 0 &&
	    chown(done, ua.du_uid, ua.du_gid) == 0, "two FIFOs for A"))
		return;
	snprintf(cmd, sizeof(cmd), "read x < %s; sh -c '/bin/echo a; "
	    "/bin/echo b; /bin/echo c'; echo done > %s", go, done);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	efd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if ((bt = spawn_as(&ua, argv, env_a, ofd, efd, -1)) == -1)
		goto out;
	/* Open once the command's shell reads: btrace records by then. */
	alarm(60);
	fd = open(go, O_WRONLY | O_CLOEXEC);
	alarm(0);
	if (!dtt_check(fd != -1, "the command waits for its go"))
		goto out;
	dtt_check(kill(bt, SIGSTOP) == 0, "btrace stopped");
	n = write(fd, "go\n", 3);
	close(fd);
	alarm(60);
	if ((fd = open(done, O_RDONLY | O_CLOEXEC)) != -1) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		close(fd);
	}
	alarm(0);
	dtt_check(fd != -1 && n == 0, "the subshell and its children ended "
	    "while btrace was stopped");
out:
	if (bt != -1) {
		kill(bt, SIGCONT);
		status = dtt_wait(bt, 60000);
	}
	if (ofd != -1)
		close(ofd);
	if (efd != -1)
		close(efd);
	e = map_value(out, "@e");
	dtt_check(dtt_exited0(status), "btrace -c as A exited 0");
	dtt_check(e == 3, "the three writes of echo processes gone with "
	    "their parent before btrace read them: %ld", e);
	dtt_check(count_lines(err, "left out") == 0, "none left out");
	signal(SIGALRM, SIG_DFL);
}

/*
 * How A's dtd samples: with perf, its user's traced threads, where
 * perf_event_paranoid lets a user sample their own processes (2 or
 * less), else with the timer fallback; either way it says so once.
 */
static void
check_profile_mode(void)
{
	char buf[16] = "";
	bool perf;
	FILE *fp;

	if ((fp = fopen("/proc/sys/kernel/perf_event_paranoid", "r")) !=
	    NULL) {
		if (fgets(buf, sizeof(buf), fp) == NULL)
			buf[0] = '\0';
		fclose(fp);
	}
	perf = buf[0] != '\0' && atoi(buf) <= 2;
	dtt_check(count_lines(errpath, perf ? "perf cpu-clock sampling of "
	    "your traced processes' threads" : "timer mode") == 1,
	    "perf_event_paranoid %.*s: dtd says once that profile samples "
	    "with %s", (int)strcspn(buf, "\n"), buf, perf ? "perf" :
	    "the timer fallback");
}

/*
 * profile as A: every thread of the traced command is sampled, those it
 * starts and ends as it goes and its fork children too, and nothing of
 * an untraced process of A's spinning at the same time.
 */
static void
check_profile(void)
{
	char cmd[256], prog[256], out[160], line[256];
	char *argv[] = { bin_btrace, "-d", dev, "-A", "-c", cmd, "-e", prog,
	    NULL };
	/* Longer than any run: killed while it spins. */
	char *spin[] = { bin_spin, "spin", "60", NULL };
	long npid[64], ntid[64], pid, tid, n, other = 0, total = 0;
	int fd, status, ustatus = -1, i, npids = 0, ntids = 0, k;
	pid_t untraced;
	FILE *fp;

	untraced = spawn_as(&ua, spin, env_a, -1, -1, -1);
	snprintf(cmd, sizeof(cmd), "%s family 1", bin_spin);
	snprintf(prog, sizeof(prog), "profile:hz:100 /comm == \"udtspin\"/ "
	    "{ @pt[pid, tid] = count(); }");
	snprintf(out, sizeof(out), "%s/profile.out", dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	status = fd == -1 ? -1 : run_as(&ua, argv, env_a, fd, -1);
	if (fd != -1)
		close(fd);
	if (untraced > 0)
		ustatus = dtt_stop(untraced, SIGKILL, DTT_EXIT_MS);
	dtt_check(dtt_exited0(status), "btrace -A -c 'udtspin family 1' as "
	    "A exited 0");
	if ((fp = fopen(out, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "@pt[%ld, %ld]: %ld", &pid, &tid, &n) != 3)
			continue;
		if (pid == untraced) {
			other += n;
			continue;
		}
		total += n;
		for (k = 0; k < npids && npid[k] != pid; k++)
			continue;
		if (k == npids && npids < 64)
			npid[npids++] = pid;
		for (i = 0; i < ntids && ntid[i] != tid; i++)
			continue;
		if (i == ntids && ntids < 64)
			ntid[ntids++] = tid;
	}
	fclose(fp);
	/*
	 * Rounds of two 50 ms threads and a 50 ms child, 15 samples each:
	 * one round's at least.  Threads beyond each process's first:
	 * started after the enable.
	 */
	dtt_check(total >= 15 && ntids >= npids + 2 && npids >= 2, "the "
	    "traced command's samples: %ld, of %d threads in %d processes "
	    "(the threads it started, its fork children)", total, ntids,
	    npids);
	/* It spun all along: no sample of it means none was taken. */
	dtt_check(untraced > 0 && ustatus != -1 && WIFSIGNALED(ustatus) &&
	    WTERMSIG(ustatus) == SIGKILL, "the untraced spinner (pid %d) "
	    "ran until the end", (int)untraced);
	dtt_check(other == 0, "none of the untraced spinner's (pid %d): %ld",
	    (int)untraced, other);
}

/*
 * What A's dtd cannot do without root, btrace says once on stderr rather
 * than printing nothing: kernel tracepoints, kernel stacks, profile of
 * the whole system.
 */
static void
check_unpriv_says(void)
{
	char out[160];
	char *tp[] = { bin_btrace, "-d", dev, "-e",
	    "tracepoint:sched:sched_switch { @ = count(); }", NULL };
	char *prof[] = { bin_btrace, "-d", dev, "-e",
	    "profile:hz:100 { @[kstack] = count(); }\n"
	    "interval:ms:100 { exit(); }", NULL };
	int fd, status;

	snprintf(out, sizeof(out), "%s/says.out", dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	status = fd == -1 ? -1 : run_as(&ua, tp, env_a, fd, fd);
	if (fd != -1)
		close(fd);
	dtt_check(status != -1 && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 1 && count_lines(out, "unknown provider "
	    "'tracepoint'") == 1 && count_lines(out, "runs without root") == 1,
	    "a tracepoint as A: unknown provider, because dtd runs without "
	    "root");
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	status = fd == -1 ? -1 : run_as(&ua, prof, env_a, fd, fd);
	if (fd != -1)
		close(fd);
	dtt_check(dtt_exited0(status), "profile without -c as A exited 0");
	dtt_check(count_lines(out, "carry no kernel stack") == 1,
	    "kstack as A: said once that there is no kernel stack");
	dtt_check(count_lines(out, "not the whole system") == 1,
	    "profile without -c as A: said once that only traced processes "
	    "are sampled");
}

/* dtrun, naming no socket, attaches to A's dtd. */
static void
check_dtrun(void)
{
	char *argv[] = { bin_dtrun, bin_spin, "spin", "0", NULL };
	int before, after, devnull, status;

	before = dtt_user_run(&ua, attached_a, NULL);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	status = run_as(&ua, argv, env_a, devnull, -1);
	close(devnull);
	after = dtt_user_run(&ua, attached_a, NULL);
	dtt_check(before >= 1 && before < 250 && dtt_exited0(status) &&
	    after == before + 1, "dtrun as A attached to A's dtd: %d, then "
	    "%d", before, after);
}

/* Nobody else gets in: not B, not even root. */
static void
check_others(void)
{
	char envsock[200], envpre[160];
	char *env_b[] = { "PATH=/usr/bin:/bin", envsock, envpre, NULL };
	char *argv[] = { bin_spin, "spin", "0", NULL };
	struct udt_stats st;
	int before, after, devnull, status, fd, e;

	dtt_check(dtt_user_run(&ub, try_open, dev) == EACCES,
	    "B cannot open A's device (EACCES)");
	dtt_check(dtt_user_run(&ub, try_connect, sock) == EACCES,
	    "B cannot connect to A's ingest socket (EACCES)");

	/* A process of B's aimed at A's socket runs, untraced. */
	snprintf(envsock, sizeof(envsock), "USERDT_SOCKET=%s", sock);
	snprintf(envpre, sizeof(envpre), "LD_PRELOAD=%s", bin_lib);
	before = dtt_user_run(&ua, attached_a, NULL);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	status = run_as(&ub, argv, env_b, devnull, -1);
	close(devnull);
	after = dtt_user_run(&ua, attached_a, NULL);
	dtt_check(dtt_exited0(status) && before >= 0 && before < 250 &&
	    after == before, "B's process ran untraced (%d attached before, "
	    "%d after)", before, after);

	/* Root passes the modes, not dtd's check nor the kernel's. */
	dtt_check(st_ingest_stats(sock, &st) == -1 &&
	    count_lines(errpath, "not dtd's user") >= 1,
	    "root's connection to A's socket closed, and logged");
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	e = errno;
	if (fd != -1)
		close(fd);
	dtt_check(fd == -1 && e == EACCES, "root cannot open A's device "
	    "(no allow_other): %s", fd == -1 ? strerror(e) : "opened");
}

int
main(int argc, char *argv[])
{
	struct stat st;
	pid_t pid = -1;
	int status;

	if (argc != 6) {
		fprintf(stderr, "usage: unpriv_test dtd btrace dtrun preload "
		    "spin\n");
		return 2;
	}
	if (!setup(argv))
		goto out;
	check_refusals();
	if (!dtt_check((pid = start_dtd()) != -1, "A's dtd --device %s is "
	    "ready", dev))
		goto out;
	check_files();
	check_profile_mode();
	check_btrace();
	check_gone_kin();
	check_profile();
	check_unpriv_says();
	check_dtrun();
	check_others();

	status = dtt_stop(pid, SIGTERM, DTT_EXIT_MS);
	pid = -1;
	dtt_check(dtt_exited0(status), "A's dtd stopped on SIGTERM, exit 0");
	dtt_check(lstat(dev, &st) == -1 && errno == ENOENT &&
	    lstat(sock, &st) == -1 && errno == ENOENT,
	    "the device and the socket are gone");
out:
	if (pid != -1)
		(void)dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	if (dtt_nfail > 0) {
		char line[1024];
		FILE *fp = fopen(errpath, "r");

		while (fp != NULL && fgets(line, sizeof(line), fp) != NULL)
			fprintf(stderr, "dtd: | %s", line);
		if (fp != NULL)
			fclose(fp);
	}
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dtt_user_del(&ua);
	dtt_user_del(&ub);
	return dtt_done();
}
