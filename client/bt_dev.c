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
 * btrace: driving /dev/dt the way OpenBSD's btrace does: probe list and
 * argument caches, enabling probes, the read loop and the teardown.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"
#include "systab.h"
#include "udt_launch.h"

/*
 * Events per read(2).  OpenBSD's btrace reads 64; on Linux every read is a
 * round trip through FUSE, so fewer, larger reads carry more events per
 * second (bench/btrace): a read of 1024 returns what is there, at least one.
 */
#define NREAD	1024

#define DEV_FUSE_MAGIC	0x65735546	/* statfs f_type of a FUSE mount */

const char		*g_devpath = "/dev/dt";
int			 g_verbose;
pid_t			 g_pidfilter;
const char		*g_command;	/* -c */
struct dtioc_probe_info	*dt_dtpis;
size_t			 dt_ndtpi;
volatile sig_atomic_t	 g_quit;

static struct dtioc_arg_info **dt_args;
static size_t		*dt_nargs;
static volatile pid_t	 child_pid = -1;
static pid_t		 child_pgid = -1;	/* the command's group */
static volatile sig_atomic_t child_done;
static volatile sig_atomic_t loop_done;	/* no more timers */
static int		 need_comm;	/* a rule reads comm */

/*
 * Is fd a dt device?  A character device (CUSE, or a real dt(4)) or a
 * regular file on a FUSE mount (dtd's FUSE-file front end) that answers
 * DTIOCGSTATS; anything else would only fail later with an ioctl's name
 * and ENOTTY, which does not say that the path is wrong.  A plain file
 * is never sent an ioctl.
 */
static void
dev_check(int fd)
{
	struct dtioc_stat st;
	struct statfs sfs;
	struct stat sb;

	if (fstat(fd, &sb) == -1)
		err(1, "%s", g_devpath);
	if (S_ISREG(sb.st_mode) && fstatfs(fd, &sfs) == 0 &&
	    sfs.f_type != DEV_FUSE_MAGIC)
		errx(1, "%s: not a dt device", g_devpath);
	if (!S_ISCHR(sb.st_mode) && !S_ISREG(sb.st_mode))
		errx(1, "%s: not a dt device", g_devpath);
	if (ioctl(fd, DTIOCGSTATS, &st) == -1 && (errno == ENOTTY ||
	    errno == EINVAL))
		errx(1, "%s: not a dt device", g_devpath);
}

int
dev_open(void)
{
	int fd;

	fd = open(g_devpath, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		int e = errno;

		if (e == ENOENT || e == ENXIO || e == ENOTCONN ||
		    e == ECONNABORTED)
			errx(1, "could not open %s: %s (is dtd running? start "
			    "it with: dtd%s%s)", g_devpath, strerror(e),
			    strcmp(g_devpath, "/dev/dt") != 0 ?
			    " --device " : "", strcmp(g_devpath, "/dev/dt")
			    != 0 ? g_devpath : "");
		if (e == EACCES || e == EPERM)
			errx(1, "could not open %s: %s (opening the device "
			    "needs root or dtd's --group; tracing needs root)",
			    g_devpath, strerror(e));
		errno = e;
		err(1, "could not open %s", g_devpath);
	}
	dev_check(fd);
	return fd;
}

/* Say that recording, or enabling a probe, needs root. */
static void __attribute__((noreturn))
dev_err(const char *what)
{
	if (errno == EPERM || errno == EACCES)
		err(1, "%s (enabling probes and recording need root)", what);
	err(1, "%s", what);
}

/* A probe that is not found: is its provider known at all? */
static void __attribute__((noreturn))
probe_notfound(struct bt_probe *bp, const char *name)
{
	char (*names)[DTNAMESIZE + 1], msg[256];
	const char **provs;
	const char *near;
	size_t i, j, n = 0;

	names = xcalloc(dt_ndtpi + 1, sizeof(*names));
	provs = xcalloc(dt_ndtpi + 1, sizeof(*provs));
	for (i = 0; i < dt_ndtpi; i++) {
		if (strncmp(bp->bp_prov, dt_dtpis[i].dtpi_prov,
		    DTNAMESIZE) == 0) {
			free(provs);
			free(names);
			errx(1, "probe '%s' not found", name);
		}
		for (j = 0; j < n; j++)
			if (strncmp(provs[j], dt_dtpis[i].dtpi_prov,
			    DTNAMESIZE) == 0)
				break;
		if (j == n) {
			memcpy(names[n], dt_dtpis[i].dtpi_prov, DTNAMESIZE);
			provs[n] = names[n];
			n++;
		}
	}
	near = did_you_mean(bp->bp_prov, provs, n);
	snprintf(msg, sizeof(msg), "unknown provider '%s' in probe '%s'%s%s%s",
	    bp->bp_prov, name, near != NULL ? ", did you mean '" : "",
	    near != NULL ? near : "", near != NULL ? "'?" : "");
	free(provs);
	free(names);
	errx(1, "%s", msg);
}

static void
dtpi_cache(int fd)
{
	struct dtioc_probe dtpr;

	if (dt_dtpis != NULL)
		return;
	memset(&dtpr, 0, sizeof(dtpr));
	if (ioctl(fd, DTIOCGPLIST, &dtpr))
		err(1, "DTIOCGPLIST");
	dt_ndtpi = dtpr.dtpr_size / sizeof(*dt_dtpis);
	dt_dtpis = xcalloc(dt_ndtpi, sizeof(*dt_dtpis));
	dtpr.dtpr_probes = dt_dtpis;
	if (ioctl(fd, DTIOCGPLIST, &dtpr))
		err(1, "DTIOCGPLIST");
	dt_args = xcalloc(dt_ndtpi, sizeof(*dt_args));
	dt_nargs = xcalloc(dt_ndtpi, sizeof(*dt_nargs));
}

static void
dtai_cache(int fd, struct dtioc_probe_info *pi)
{
	struct dtioc_arg dtar;
	size_t i = pi->dtpi_pbn - 1;

	if (dt_args[i] != NULL)
		return;
	dt_args[i] = xcalloc(pi->dtpi_nargs + 1, sizeof(**dt_args));
	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = pi->dtpi_pbn;
	dtar.dtar_size = pi->dtpi_nargs * sizeof(**dt_args);
	dtar.dtar_args = dt_args[i];
	if (ioctl(fd, DTIOCGARGS, &dtar))
		err(1, "DTIOCGARGS");
	dt_nargs[i] = dtar.dtar_size / sizeof(**dt_args);
	if (dt_nargs[i] > pi->dtpi_nargs)
		dt_nargs[i] = pi->dtpi_nargs;
}

/* The type of argument n of the event's probe, NULL when unknown. */
const char *
dev_argstr(struct dt_evt *ev, int n)
{
	size_t i = ev->dtev_pbn - 1;

	if (ev->dtev_pbn == 0 || i >= dt_ndtpi || dt_args == NULL ||
	    dt_args[i] == NULL || (size_t)n >= dt_nargs[i])
		return NULL;
	return dt_args[i][n].dtai_argtype;
}

/* Syscall probes are named sys%N on the device; show the call's name. */
const char *
dtpi_func(const struct dtioc_probe_info *pi)
{
	static char func[DTNAMESIZE + 1];
	const char *name;
	char *ep;
	long n;

	memcpy(func, pi->dtpi_func, DTNAMESIZE);
	func[DTNAMESIZE] = '\0';
	if (strncmp(pi->dtpi_prov, "syscall", DTNAMESIZE) != 0 ||
	    strncmp(func, "sys%", 4) != 0)
		return func;
	errno = 0;
	n = strtol(func + 4, &ep, 10);
	if (*ep != '\0' || ep == func + 4 || n < 1 || n > 65535)
		return func;
	name = syscall_name((unsigned int)n);
	return name != NULL ? name : func;
}

void
dev_list(int fd)
{
	struct dtioc_probe_info *pi;
	size_t i, j;

	dtpi_cache(fd);
	for (i = 0; i < dt_ndtpi; i++) {
		pi = &dt_dtpis[i];
		printf("%.16s:%s:%.16s", pi->dtpi_prov, dtpi_func(pi),
		    pi->dtpi_name);
		if (strncmp(pi->dtpi_prov, "tracepoint", DTNAMESIZE) == 0) {
			dtai_cache(fd, pi);
			printf("(");
			for (j = 0; j < dt_nargs[i]; j++)
				printf("%s%.16s", j > 0 ? ", " : "",
				    dt_args[i][j].dtai_argtype);
			printf(")");
		}
		printf("\n");
	}
}

/*
 * A syscall probe's function as the device names it: sys%N of the call
 * a name stands for, OpenBSD's name or Linux's (exit_group, pread64,
 * clone3); "" when the table knows neither.
 */
static const char *
sys_devfunc(const char *name)
{
	static char func[DTNAMESIZE];
	int n;

	if ((n = systab_lookup(name)) < 1)
		return "";
	snprintf(func, sizeof(func), "sys%%%d", n);
	return func;
}

static struct dtioc_probe_info *
probe_find(struct bt_probe *bp)
{
	struct dtioc_probe_info *pi;
	const char *alias = "";
	size_t i;

	if (bp->bp_name != NULL && strcmp(bp->bp_prov, "syscall") == 0)
		alias = sys_devfunc(bp->bp_func);
	for (i = 0; i < dt_ndtpi; i++) {
		pi = &dt_dtpis[i];
		if (strncmp(bp->bp_prov, pi->dtpi_prov, DTNAMESIZE) != 0)
			continue;
		if (bp->bp_name == NULL)
			return pi;
		if (strncmp(bp->bp_func, dtpi_func(pi), DTNAMESIZE) != 0 &&
		    strncmp(bp->bp_func, pi->dtpi_func, DTNAMESIZE) != 0 &&
		    strncmp(alias, pi->dtpi_func, DTNAMESIZE) != 0)
			continue;
		if (strncmp(bp->bp_name, pi->dtpi_name, DTNAMESIZE) != 0)
			continue;
		if (g_verbose > 1)
			fprintf(stderr, "debug: matched probe %.16s:%s:%.16s\n",
			    pi->dtpi_prov, dtpi_func(pi), pi->dtpi_name);
		return pi;
	}
	return NULL;
}

static const char *
probe_name(struct bt_probe *bp)
{
	static char buf[96];

	if (bp->bp_name == NULL)
		snprintf(buf, sizeof(buf), "%s:%s:%ld", bp->bp_prov,
		    bp->bp_func, bp->bp_number);
	else
		snprintf(buf, sizeof(buf), "%s:%s:%s", bp->bp_prov,
		    bp->bp_func, bp->bp_name);
	return buf;
}

static void
on_signal_inner(int sig);

/* The loop reads errno after read(2): the handler must not change it. */
static void
on_signal(int sig)
{
	int save = errno;

	on_signal_inner(sig);
	errno = save;
}

static void
on_signal_inner(int sig)
{
	struct itimerval it;
	pid_t pid;

	if (loop_done) {
		g_quit = sig;
		return;
	}

	if (sig == SIGCHLD) {
		if (child_pid <= 0)
			return;
		pid = waitpid(child_pid, NULL, WNOHANG);
		if (pid != child_pid)
			return;
		child_pid = -1;
		/*
		 * Its last events may still be on their way through dtd:
		 * read on for 100 ms more before stopping.
		 */
		child_done = 1;
		memset(&it, 0, sizeof(it));
		it.it_value.tv_usec = 100000;
		it.it_interval.tv_usec = 20000;
		setitimer(ITIMER_REAL, &it, NULL);
		return;
	} else if (sig == SIGALRM) {
		if (child_done)
			g_quit = SIGCHLD;
		return;
	}
	g_quit = sig;
	/*
	 * The signal may land between the loop's check and read(2): keep
	 * interrupting until the loop has seen it.
	 */
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 20000;
	it.it_interval.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void
signals_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: read(2) returns EINTR */
	sa.sa_handler = on_signal;
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGALRM, &sa, NULL) || sigaction(SIGCHLD, &sa, NULL))
		err(1, "sigaction");
}

/*
 * After the loop nothing may interrupt the writes of END and the maps:
 * handlers restart system calls and arm no timer any more.
 */
static void
signals_stop(void)
{
	struct itimerval it;
	struct sigaction sa;

	loop_done = 1;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_signal;
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGALRM, &sa, NULL) || sigaction(SIGCHLD, &sa, NULL))
		err(1, "sigaction");
}

/*
 * -c: the command runs with the preload library that feeds dtd, in a
 * process group of its own so that ending the run ends everything the
 * shell started, and with a parent-death signal so that a btrace killed
 * outright does not leave it running.  SIGCHLD stays blocked until
 * child_pid is set: a command that exits at once is still seen.
 */
static void
command_start(void)
{
	char lib[PATH_MAX];
	sigset_t chld, omask;
	pid_t pid, parent = getpid();

	/* Warn only: ld.so skips a missing preload and runs it untraced. */
	if (udt_launch_lib(lib, sizeof(lib)) == -1)
		warnx("%s: %s; USERDT_PRELOAD names the preload library",
		    lib, strerror(errno));
	/* what BEGIN printed comes before anything the command prints */
	fflush(stdout);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &omask);
	pid = fork();
	if (pid == -1)
		err(1, "fork");
	if (pid == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
		    getppid() != parent)
			_exit(127);
		if (udt_launch_env(lib, NULL) == -1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigprocmask(SIG_SETMASK, &omask, NULL);
		/* The shell's loader too; said once if ptrace is refused. */
		(void)udt_launch_trace(g_progname);
		execl("/bin/sh", "sh", "-c", g_command, (char *)NULL);
		fprintf(stderr, "%s: /bin/sh: %s\n", g_progname,
		    strerror(errno));
		_exit(127);
	}
	/* both sides set the group: whichever runs first, kill(-pid) works */
	setpgid(pid, pid);
	child_pid = pid;
	child_pgid = pid;
	sigprocmask(SIG_SETMASK, &omask, NULL);
}

/*
 * The run ended before the command: end its whole process group (dash
 * runs all but a last simple command as its children) and reap the shell.
 */
static void
command_stop(void)
{
	pid_t pid = child_pid;

	if (pid <= 0)
		return;
	child_pid = -1;
	kill(-child_pgid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/*
 * -c with no probe to read (BEGIN and END only): wait for the command,
 * or for a signal that ends the run.
 */
static void
command_wait(void)
{
	sigset_t all, omask;

	sigemptyset(&all);
	sigaddset(&all, SIGCHLD);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGALRM);
	sigprocmask(SIG_BLOCK, &all, &omask);
	while (!g_quit && !child_done)
		sigsuspend(&omask);
	sigprocmask(SIG_SETMASK, &omask, NULL);
}

static void
fake_event(struct dt_evt *ev, unsigned int pbn)
{
	memset(ev, 0, sizeof(*ev));
	ev->dtev_pbn = pbn;
	snprintf(ev->dtev_comm, sizeof(ev->dtev_comm), "%s", g_progname);
	ev->dtev_pid = getpid();
	ev->dtev_tid = gettid();
	clock_gettime(CLOCK_REALTIME, &ev->dtev_tsp);
}

static int
rules_apply(int fd, struct dt_evt *ev)
{
	struct bt_rule *r;
	struct bt_probe *bp;

	if (g_pidfilter > 0 && ev->dtev_pid != g_pidfilter) {
		g_filtered++;
		return 0;
	}
	if (need_comm)
		comm_note(ev);
	for (r = g_rules; r != NULL; r = r->br_next) {
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE ||
			    bp->bp_pbn != ev->dtev_pbn)
				continue;
			if (ev->dtev_pbn == 0 || ev->dtev_pbn > dt_ndtpi)
				continue;
			dtai_cache(fd, &dt_dtpis[ev->dtev_pbn - 1]);
			if (rule_eval(r, ev, 0))
				return 1;
		}
	}
	return 0;
}

static void
rules_setup(int fd, int *halt)
{
	struct dtioc_probe_info *pi;
	struct bt_rule *r;
	struct bt_probe *bp;
	struct dt_evt ev;
	int on = 1;

	for (r = g_rules; r != NULL; r = r->br_next) {
		r->br_evtflags = rule_evtflags(r);
		if (r->br_evtflags & DTEVT_EXECNAME)
			need_comm = 1;
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE)
				continue;
			dtpi_cache(fd);
			if ((pi = probe_find(bp)) == NULL)
				probe_notfound(bp, probe_name(bp));
			bp->bp_pbn = pi->dtpi_pbn;
			memset(&bp->bp_req, 0, sizeof(bp->bp_req));
			bp->bp_req.dtrq_pbn = pi->dtpi_pbn;
			bp->bp_req.dtrq_nsecs = bp->bp_nsecs;
			bp->bp_req.dtrq_evtflags = r->br_evtflags;
			/*
			 * userdt's strings: syscall and tracepoint probes
			 * only (dtvar.h).
			 */
			if (strcmp(bp->bp_prov, "syscall") != 0 &&
			    strcmp(bp->bp_prov, "tracepoint") != 0)
				bp->bp_req.dtrq_evtflags &= ~(uint64_t)
				    DTEVT_STRINGS;
			if (g_verbose > 1)
				fprintf(stderr, "debug: probe '%s' pbn %u "
				    "evtflags %#llx nsecs %llu\n",
				    probe_name(bp), pi->dtpi_pbn,
				    (unsigned long long)
				    bp->bp_req.dtrq_evtflags,
				    (unsigned long long)bp->bp_nsecs);
		}
	}

	fake_event(&ev, 0);
	g_start_nsecs = (uint64_t)ev.dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev.dtev_tsp.tv_nsec;
	for (r = g_rules; r != NULL && !*halt; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_type == P_BEGIN) {
				*halt = rule_eval(r, &ev, 1);
				break;
			}

	if (g_nprobes == 0)
		return;
	for (r = g_rules; r != NULL; r = r->br_next) {
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE)
				continue;
			if (ioctl(fd, DTIOCPRBENABLE, &bp->bp_req)) {
				if (errno == EEXIST)
					errx(1, "Cannot register multiple "
					    "probes of the same type: '%s'",
					    probe_name(bp));
				dev_err("DTIOCPRBENABLE");
			}
		}
	}
	if (ioctl(fd, DTIOCRECORD, &on))
		dev_err("DTIOCRECORD");
}

static void
rules_teardown(int fd, int gone)
{
	struct bt_rule *r;
	struct bt_probe *bp;
	struct dt_evt ev;
	int off = 0;

	if (g_nprobes > 0 && !gone) {
		if (ioctl(fd, DTIOCRECORD, &off))
			err(1, "DTIOCRECORD");
		for (r = g_rules; r != NULL; r = r->br_next)
			for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
				if (bp->bp_type == P_PROBE &&
				    ioctl(fd, DTIOCPRBDISABLE, &bp->bp_req))
					err(1, "DTIOCPRBDISABLE");
	}
	fake_event(&ev, (unsigned int)-1);
	g_rterror = 0;
	for (r = g_rules; r != NULL && !g_rterror; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_type == P_END) {
				if (rule_eval(r, &ev, 1) && !g_rterror)
					goto out;
				break;
			}
out:
	maps_print_all();
}

/*
 * Run the rules; fd is -1 when there are no probes.  Returns the exit
 * status.
 */
int
rules_run(int fd)
{
	static struct dt_evt buf[NREAD];
	int halt = 0, rterror, dev_gone = 0;
	ssize_t len;
	size_t i;

	signals_setup();
	rules_setup(fd, &halt);
	rterror = g_rterror;
	if (g_command != NULL && !halt) {
		command_start();
		if (g_nprobes == 0)
			command_wait();
	}

	while (!g_quit && !halt && g_nprobes > 0) {
		len = read(fd, buf, sizeof(buf));
		if (len == -1) {
			if (errno == EINTR && g_quit) {
				/* not in output for other programs to parse */
				if (g_quit != SIGCHLD && !g_json && !g_folded)
					printf("\n");
				break;
			}
			if (errno == EINTR)
				continue;
			/*
			 * dtd is gone (or the device failed): keep what was
			 * collected, run END and print the maps.
			 */
			warn("%s: read", g_devpath);
			dev_gone = 1;
			break;
		}
		if (len == 0) {
			/* dt(4) never ends a read empty: the device went away */
			warnx("%s: end of file", g_devpath);
			dev_gone = 1;
			break;
		}
		if (len % sizeof(struct dt_evt) != 0)
			errx(1, "incorrect read");
		for (i = 0; i < (size_t)len / sizeof(struct dt_evt); i++) {
			halt = rules_apply(fd, &buf[i]);
			if (halt)
				break;
		}
	}
	signals_stop();
	rterror |= g_rterror;
	if (dev_gone) {
		fprintf(stderr, "%s: the device stopped answering (did dtd "
		    "stop?): tracing ended; running END and printing what "
		    "was collected\n", g_progname);
		rterror = 1;
	}

	rules_teardown(fd, dev_gone);
	rterror |= g_rterror;

	if (g_verbose && fd != -1 && !dev_gone) {
		struct dtioc_stat st;

		memset(&st, 0, sizeof(st));
		if (ioctl(fd, DTIOCGSTATS, &st))
			warn("DTIOCGSTATS");
		fprintf(stderr, "%llu events read\n",
		    (unsigned long long)st.dtst_readevt);
		fprintf(stderr, "%llu events dropped\n",
		    (unsigned long long)st.dtst_dropevt);
		fprintf(stderr, "%llu events filtered\n",
		    (unsigned long long)g_filtered);
		fprintf(stderr, "%llu clock ticks skipped\n",
		    (unsigned long long)st.dtst_skiptick);
		fprintf(stderr, "%llu recursive events dropped\n",
		    (unsigned long long)st.dtst_recurevt);
	}
	/* the run ended first: the command and its children go with it */
	command_stop();
	return rterror ? 1 : 0;
}
