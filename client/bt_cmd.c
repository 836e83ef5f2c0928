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
 * btrace -c: the command's life.  btrace forks a supervisor that leads a
 * process group of its own and is a child subreaper; the supervisor forks
 * the shell, which waits at a gate until tracing is on.  So:
 *  - cpid (the shell's pid) is known before BEGIN runs, and nothing the
 *    command does happens before its events can be recorded;
 *  - when btrace dies, even by SIGKILL, the supervisor's parent-death
 *    signal makes it SIGKILL the whole group (PDEATHSIG alone would reach
 *    only the shell, not what a compound command started), and orphans
 *    of the command are re-parented to the supervisor, inside the group;
 *  - a command run from a terminal gets the terminal's foreground while
 *    it runs, so that it can read it (a background group stops on
 *    SIGTTIN), and btrace takes it back afterwards.
 */
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"
#include "udt_launch.h"

const char		*g_command;	/* -c */
int			 g_cmdout = -1;	/* -o: the command's stdout */
pid_t			 g_cpid;	/* the shell -c started */
/* dtd reads the tree's calls no hook records from the kernel */
int			 g_cmdktree;	/* UDT_LAUNCH_KTREE_*, 0: not */

/* How long a command may take to end after the group's SIGTERM. */
#define CMD_GRACE_MS	2000

static volatile pid_t	 sup_pid = -1;	/* btrace's child, the group */
static int		 gate_fd = -1;	/* closing it releases the shell */
static int		 tty_handed;	/* the command has the terminal */

/*
 * The supervisor never execs: close what is btrace's own (the device,
 * the fork listener: all close-on-exec) so that it holds none of it, and
 * keep what btrace inherited for the command.
 */
static void
close_own(int keep1, int keep2)
{
	DIR *d;
	struct dirent *de;
	int fd, dfd, fl;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (fd < 3 || fd == dfd || fd == keep1 || fd == keep2 ||
		    fd == g_cmdout)
			continue;
		if ((fl = fcntl(fd, F_GETFD)) != -1 && (fl & FD_CLOEXEC))
			close(fd);
	}
	closedir(d);
}

static pid_t		 sup_parent;	/* btrace, from the supervisor */

/*
 * The terminal's interrupt and quit reach only its foreground group, the
 * command's: btrace, in the background, would never hear them, and a
 * command that ignores or handles SIGINT would keep the run going.  The
 * supervisor passes them on, so that Ctrl-C ends the run whatever the
 * command does with it, as bpftrace's.
 */
static void
sup_fwd(int sig)
{
	int save = errno;

	kill(sup_parent, sig);
	errno = save;
}

static void
sup_hup(int sig)
{
	(void)sig;
	/* btrace is gone: the whole group, the supervisor included */
	kill(0, SIGKILL);
	_exit(128 + SIGKILL);
}

/* The shell: wait for btrace to start tracing, then run the command. */
static void __attribute__((noreturn))
shell_run(const char *lib, int gate)
{
	char go = 0;
	sigset_t none;
	ssize_t n;

	signal(SIGHUP, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGTTOU, SIG_DFL);
	signal(SIGTTIN, SIG_DFL);
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* EOF without the byte: btrace ended before tracing started */
	do
		n = read(gate, &go, 1);
	while (n == -1 && errno == EINTR);
	if (n != 1 || (go != 'g' && go != 'k' && go != 'a'))
		_exit(127);
	close(gate);
	if (g_cmdout != -1) {
		dup2(g_cmdout, 1);
		close(g_cmdout);
	}
	if (udt_launch_env(lib, NULL) == -1)
		_exit(127);
	/*
	 * 'k': the helper's word on a static image is the kernel's copy
	 * of the tree's; 'a': it asks dtd for one at each static exec
	 */
	udt_launch_ktree(go == 'k' ? UDT_LAUNCH_KTREE_ROOT : go == 'a' ?
	    UDT_LAUNCH_KTREE_EXEC : 0);
	/* The shell's loader too; said once if ptrace is refused. */
	(void)udt_launch_trace(g_progname, "/bin/sh");
	execl("/bin/sh", "sh", "-c", g_command, (char *)NULL);
	fprintf(stderr, "%s: /bin/sh: %s\n", g_progname, strerror(errno));
	_exit(127);
}

/*
 * The supervisor: reap what it is given (the shell, orphans of the
 * command) and exit with the shell's status once the shell has ended.
 */
static void __attribute__((noreturn))
supervise(const char *lib, int gate, int info, pid_t parent)
{
	struct sigaction sa;
	pid_t sh, pid;
	int status = 0;

	setpgid(0, 0);
	sup_parent = parent;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* from the start: btrace's own handlers are inherited until now */
	sa.sa_handler = sup_fwd;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = sup_hup;
	sigaction(SIGHUP, &sa, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGHUP) == -1 || getppid() != parent)
		sup_hup(SIGHUP);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sh = fork();
	if (sh == -1)
		_exit(127);
	if (sh == 0)
		shell_run(lib, gate);
	close(gate);
	/* btrace ends the group; the terminal's signals go to btrace */
	signal(SIGTERM, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	if (write(info, &sh, sizeof(sh)) != (ssize_t)sizeof(sh))
		_exit(127);
	close(info);
	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid == sh)
			break;
		if (pid == -1 && errno != EINTR)
			break;
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 +
	    WTERMSIG(status));
}

/*
 * Fork the supervisor and the shell, held at the gate; returns the
 * supervisor's pid.  SIGCHLD is blocked by the caller until sup_pid is
 * set.
 */
pid_t
cmd_prepare(void)
{
	char lib[PATH_MAX];
	int gate[2], info[2];
	pid_t pid, parent = getpid();

	/* Warn only: ld.so skips a missing preload and runs it untraced. */
	if (udt_launch_lib(lib, sizeof(lib)) == -1)
		warnx("%s: %s; USERDT_PRELOAD names the preload library",
		    lib, strerror(errno));
	(void)udt_launch_prune();
	if (pipe2(gate, O_CLOEXEC) == -1 || pipe2(info, O_CLOEXEC) == -1)
		err(1, "pipe");
	/* nothing buffered may be written twice, by the forks too */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == -1)
		err(1, "fork");
	if (pid == 0) {
		close(gate[1]);
		close(info[0]);
		close_own(gate[0], info[1]);
		supervise(lib, gate[0], info[1], parent);
	}
	/* both sides set the group: whichever runs first, kill(-pid) works */
	setpgid(pid, pid);
	sup_pid = pid;
	close(gate[0]);
	close(info[1]);
	gate_fd = gate[1];
	if (read(info[0], &g_cpid, sizeof(g_cpid)) != (ssize_t)sizeof(g_cpid))
		errx(1, "-c: the command could not be started");
	close(info[0]);
	return pid;
}

int
cmd_untraced(void)
{
	char word[PATH_MAX];
	const char *p = g_command, *e;
	size_t n;

	/* "exec FILE ...": the shell's own, the same file */
	for (;;) {
		p += strspn(p, " \t");
		e = p + strcspn(p, " \t\n");
		if ((size_t)(e - p) != 4 || strncmp(p, "exec", 4) != 0)
			break;
		p = e;
	}
	n = (size_t)(e - p);
	/* what the shell would expand or run itself: not a file's name */
	if (n == 0 || n >= sizeof(word) ||
	    strcspn(p, "'\"\\$`;|&<>()*?[]{}~=#!") < n)
		return 0;
	memcpy(word, p, n);
	word[n] = '\0';
	return udt_launch_image(word);
}

/* Tracing is on: give the command the terminal and let it run. */
void
cmd_release(void)
{
	sigset_t ttou, omask;

	if (gate_fd == -1)
		return;
	fflush(stdout);
	/*
	 * From here btrace is in the background of its terminal: it must
	 * still write there (TOSTOP) and take the terminal back.
	 */
	signal(SIGTTOU, SIG_IGN);
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &omask);
		if (tcsetpgrp(STDIN_FILENO, sup_pid) == 0)
			tty_handed = 1;
		sigprocmask(SIG_SETMASK, &omask, NULL);
	}
	if (write(gate_fd, g_cmdktree == UDT_LAUNCH_KTREE_EXEC ? "a" :
	    g_cmdktree ? "k" : "g", 1) != 1)
		warn("-c: releasing the command");
	close(gate_fd);
	gate_fd = -1;
}

static void
tty_take_back(void)
{
	if (!tty_handed)
		return;
	tty_handed = 0;
	tcsetpgrp(STDIN_FILENO, getpgrp());
}

/* From the SIGCHLD handler: 1 when the command's group leader ended. */
int
cmd_reaped(void)
{
	pid_t pid = sup_pid;

	if (pid <= 0 || waitpid(pid, NULL, WNOHANG) != pid)
		return 0;
	sup_pid = -1;
	return 1;
}

static void	 cmd_reap(pid_t);

/*
 * The run is over.  A command still running has its whole group ended
 * (dash runs all but a last simple command as its children); a command
 * never released is told so by the gate's end of file.
 */
void
cmd_stop(void)
{
	pid_t pid = sup_pid;

	if (gate_fd != -1) {
		close(gate_fd);
		gate_fd = -1;
	}
	tty_take_back();
	if (pid <= 0)
		return;
	sup_pid = -1;
	kill(-pid, SIGTERM);
	cmd_reap(pid);
}

/*
 * Wait for the supervisor after the group's SIGTERM.  A command that
 * ignores SIGTERM as well would hold btrace forever: after a grace
 * period, or at once on another SIGINT or SIGTERM (a second Ctrl-C,
 * which the terminal now gives btrace), the group is killed.
 */
static void
cmd_reap(pid_t pid)
{
	struct timespec left = { CMD_GRACE_MS / 1000,
	    (CMD_GRACE_MS % 1000) * 1000000L }, t0, t1;
	sigset_t set, omask;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &omask);
	for (;;) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			goto out;	/* reaped, or not ours (error) */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		sig = sigtimedwait(&set, NULL, &left);
		if (sig == SIGINT || sig == SIGTERM ||
		    (sig == -1 && errno == EAGAIN))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left.tv_sec -= t1.tv_sec - t0.tv_sec;
		left.tv_nsec -= t1.tv_nsec - t0.tv_nsec;
		while (left.tv_nsec < 0) {
			left.tv_nsec += 1000000000L;
			left.tv_sec--;
		}
		if (left.tv_sec < 0)
			break;
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
out:
	sigprocmask(SIG_SETMASK, &omask, NULL);
}

/* The command has ended: the terminal is btrace's again. */
void
cmd_ended(void)
{
	tty_take_back();
}
