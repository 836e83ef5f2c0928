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
 * argument caches, enabling probes, the read loop and the teardown (the
 * rules' side of the last three in bt_dev_rules.c).
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/types.h>

#include <linux/magic.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"

/*
 * Events per read(2).  OpenBSD's btrace reads 64; on Linux every read is a
 * round trip through FUSE, so fewer, larger reads carry more events per
 * second (bench/btrace): a read of 1024 returns what is there, at least one.
 * But FUSE pins every page of the buffer asked for, whatever the read
 * returns: 1024 records are 114 pages pinned and unpinned per read, a
 * third of btrace's CPU when reads come back with a few dozen events.
 * So a read asks for twice what the last one returned, from NREAD_MIN up
 * to NREAD (rd_want()).
 */
#define NREAD		1024
#define NREAD_MIN	32

const char		*g_devpath = "/dev/dt";
int			 g_verbose;
pid_t			 g_pidfilter;
int			 g_allprocs;	/* -A: -c keeps every process */
/*
 * -L: ask syscall probes for DTEVT_LOSSLESS (dtvar.h), so that traced
 * threads wait for room rather than drop.  On by default for -c, whose
 * command is ours to slow down, as strace always does; off for a
 * system-wide or -p reader, which must not slow programs it did not
 * start.  main() resolves -1 (not said) to one of the two.
 */
int			 g_lossless = -1;
int			 g_treefilter;	/* only the -c command's tree */
struct dtioc_probe_info	*dt_dtpis;
size_t			 dt_ndtpi;
volatile sig_atomic_t	 g_quit;

static struct dtioc_arg_info **dt_args;
static size_t		*dt_nargs;
static volatile sig_atomic_t child_done;	/* -c or -p: it ended */
static volatile sig_atomic_t loop_done;	/* no more timers */

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
	    sfs.f_type != FUSE_SUPER_MAGIC)
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
void __attribute__((noreturn))
dev_err(const char *what)
{
	if (errno == EPERM || errno == EACCES)
		err(1, "%s (enabling probes and recording need root)", what);
	err(1, "%s", what);
}

void
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

void
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

/*
 * Whether argument n of the event's probe is a string by DTIOCGARGS
 * (a Linux tracepoint's string field: "char *"); OpenBSD's probes and
 * the syscall provider report none.
 */
int
dev_strarg(struct dt_evt *ev, int n)
{
	const char *t = dev_argstr(ev, n);

	return t != NULL && strncmp(t, "char *", DTNAMESIZE) == 0;
}

/* Whether any argument of pi is a string by DTIOCGARGS. */
int
dtai_hasstr(int fd, struct dtioc_probe_info *pi)
{
	size_t i = pi->dtpi_pbn - 1, j;

	dtai_cache(fd, pi);
	for (j = 0; j < dt_nargs[i]; j++)
		if (strncmp(dt_args[i][j].dtai_argtype, "char *",
		    DTNAMESIZE) == 0)
			return 1;
	return 0;
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

/*
 * -l kprobe:... listed nothing, and the device has no kprobe at all:
 * say why once, rather than print nothing.
 */
static void
list_none(const char *pattern)
{
	char prov[64];
	size_t i;

	snprintf(prov, sizeof(prov), "%.*s", (int)strcspn(pattern, ":"),
	    pattern);
	if (fnmatch(prov, "kprobe", 0) != 0 &&
	    fnmatch(prov, "kretprobe", 0) != 0)
		return;
	for (i = 0; i < dt_ndtpi; i++)
		if (strncmp(dt_dtpis[i].dtpi_prov, "kprobe", DTNAMESIZE) == 0)
			return;
	fprintf(stderr, "%s: no probe matches '%s'%s\n", g_progname, pattern,
	    check_missing_prov("kprobe"));
}

void
dev_list(int fd)
{
	struct dtioc_probe_info *pi;
	const char *lname;
	size_t i, j, n = 0;

	dtpi_cache(fd);
	for (i = 0; i < dt_ndtpi; i++) {
		pi = &dt_dtpis[i];
		if (g_listpattern != NULL && !pi_listed(pi, g_listpattern))
			continue;
		n++;
		printf("%.16s:%s:%.16s", pi->dtpi_prov, dtpi_func(pi),
		    pi->dtpi_name);
		if (strncmp(pi->dtpi_prov, "tracepoint", DTNAMESIZE) == 0 &&
		    !g_verbose) {
			dtai_cache(fd, pi);
			printf("(");
			for (j = 0; j < dt_nargs[i]; j++)
				printf("%s%.16s", j > 0 ? ", " : "",
				    dt_args[i][j].dtai_argtype);
			printf(")");
		}
		/*
		 * A pattern may have matched by the Linux name: show it,
		 * after the name the device and OpenBSD's btrace use.
		 */
		if (g_listpattern != NULL && (lname = pi_linux_name(pi)) !=
		    NULL)
			printf(" (Linux: %s)", lname);
		printf("\n");
		/*
		 * -lv, as bpftrace's: one argument a line, its type and
		 * the name args.NAME takes (tracefs), else argN's.
		 */
		if (g_verbose && strncmp(pi->dtpi_prov, "tracepoint",
		    DTNAMESIZE) == 0) {
			const char *an;

			dtai_cache(fd, pi);
			for (j = 0; j < dt_nargs[i]; j++) {
				an = tp_argname(pi, (int)j);
				printf("    %.16s %s%s\n",
				    dt_args[i][j].dtai_argtype,
				    an != NULL ? an : "arg", an != NULL ? "" :
				    tmp_printf("%zu", j));
			}
		}
	}
	if (g_listpattern != NULL && n == 0)
		list_none(g_listpattern);
}

/*
 * The -c command or the -p process has ended.  Its last events may still
 * be on their way through dtd: read on for 100 ms more before stopping.
 * From a signal handler or the -p watcher thread.
 */
void
run_end_soon(void)
{
	struct itimerval it;

	if (loop_done)
		return;
	child_done = 1;
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 100000;
	it.it_interval.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * After the command ended: whether a read would still find a record now
 * (poll(2): dtd says so).  For at most END_PENDING_MS after the first
 * look, so that a device whose poll always says readable cannot keep a
 * run going.  The main loop.
 */
#define END_PENDING_MS	5000
static int
end_pending(int fd)
{
	static struct timespec first;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (first.tv_sec == 0 && first.tv_nsec == 0)
		first = now;
	else if ((now.tv_sec - first.tv_sec) * 1000 +
	    (now.tv_nsec - first.tv_nsec) / 1000000 > END_PENDING_MS)
		return 0;
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
}

/*
 * Events the device dropped (its rings were full) are said on stderr as
 * they are lost, as bpftrace does, at most once a second (with -f json,
 * as a lost_events object in the output); -v's totals stay as they are.
 */
static void
lost_check(int fd, int force)
{
	static uint64_t reported;
	static struct timespec last;
	struct dtioc_stat st;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (!force && now.tv_sec == last.tv_sec)
		return;
	last = now;
	memset(&st, 0, sizeof(st));
	if (ioctl(fd, DTIOCGSTATS, &st) == -1 || st.dtst_dropevt <= reported)
		return;
	if (g_json) {
		/* in the stream, where bpftrace's JSON readers look */
		printf("{\"type\": \"lost_events\", \"data\": "
		    "{\"events\": %llu}}\n",
		    (unsigned long long)(st.dtst_dropevt - reported));
		fflush(stdout);
	} else
		fprintf(stderr, "Lost %llu events\n",
		    (unsigned long long)(st.dtst_dropevt - reported));
	reported = st.dtst_dropevt;
}

/*
 * Events dtd let through after a later one (DTIOCGSTATSX's dtsx_lateevt,
 * a userdt extension: OpenBSD's device has no such counter and answers
 * ENOTTY, and its per-CPU reads never promised an order).  Told once, at
 * the end, on stderr: a script that pairs events needs to know.  bpftrace's
 * JSON has no such record, and a JSON reader's stderr is to stay quiet.
 */
static uint64_t
late_count(int fd)
{
	struct dtioc_statx sx;

	memset(&sx, 0, sizeof(sx));
	if (ioctl(fd, DTIOCGSTATSX, &sx) == -1)
		return 0;
	return sx.dtsx_lateevt;
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

	if (loop_done) {
		g_quit = sig;
		return;
	}

	if (sig == SIGCHLD) {
		if (cmd_reaped())
			run_end_soon();
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

/*
 * Records the next read asks for, after one that got: twice that,
 * so that a read is seldom full (a full one leaves records for another
 * round trip at once) while the pages pinned follow the events that
 * come; a burst reaches NREAD in five reads.
 */
static size_t
rd_want(size_t got)
{
	if (got >= NREAD / 2)
		return NREAD;
	return got * 2 > NREAD_MIN ? got * 2 : NREAD_MIN;
}

/*
 * A signal or exit() ended the run, with rules dtd folds: dtd still
 * holds events of the time before the end, in a tracee's ring, the
 * sequencer or a perf buffer.  Read on, at most END_DRAIN_MS, until it
 * has folded or put all of them (agg_settled()) and the ring is read up
 * to the end: the records it puts (an event whose comm it could not
 * judge, DTF_F_UNSURE; another rule's) are applied if stamped before
 * the end, and reading makes room for a lossless drain, which would
 * otherwise wait for it.  Records after the end are left, as the end of
 * a run without a fold leaves them.  After an exit() (halt) the records
 * are read and thrown away, only the fold counting: a lossless drain
 * holds the command's threads back while this reader's ring is over
 * half full, and a wait for the fold that did not read held them too.
 * And then it waits for dtd to have put every event of before the end
 * whatever it folds (agg_done()): one that comes late is in the late
 * count read next, not put after btrace stopped looking, unsaid (a run
 * without folded rules ended at once).
 */
#define END_DRAIN_MS	5000
static void
end_drain(int fd, struct dt_evt *buf, size_t want, int halt)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t t, ns, until;
	ssize_t len;
	size_t i;
	int settled = 0, past = 0;

	t = agg_clock_ns(CLOCK_REALTIME);
	until = agg_clock_ns(CLOCK_MONOTONIC) + END_DRAIN_MS * 1000000ULL;
	/*
	 * Once settled, what the ring holds of before the end is all
	 * there: read until it is empty or a record is past the end
	 * (records come in time order); before, read on whatever came,
	 * for a lossless drain's sake, folded events taking no record.
	 */
	while (agg_clock_ns(CLOCK_MONOTONIC) < until) {
		if (!settled)
			settled = halt ? agg_done(fd, t) : agg_settled(fd, t);
		if (settled && past)
			break;
		/* dtd has nothing to say "folded" with: a look a ms */
		if (poll(&pfd, 1, settled ? 0 : 1) != 1 ||
		    !(pfd.revents & POLLIN)) {
			if (settled)
				break;
			continue;
		}
		len = read(fd, buf, want * sizeof(buf[0]));
		if (len <= 0 || len % sizeof(struct dt_evt) != 0)
			continue;
		if (g_treefilter)
			ptree_sync();
		for (i = 0; i < (size_t)len / sizeof(struct dt_evt); i++) {
			ns = (uint64_t)buf[i].dtev_tsp.tv_sec * 1000000000ULL +
			    (uint64_t)buf[i].dtev_tsp.tv_nsec;
			if (ns >= t)
				past = 1;
			else if (!halt)
				halt = record_apply(fd, &buf[i]);
		}
	}
}

/*
 * Run the rules; fd is -1 when there are no probes.  Returns the exit
 * status.
 */
int
rules_run(int fd)
{
	static struct dt_evt buf[NREAD];
	struct pollfd pfd;
	int halt = 0, rterror, dev_gone = 0, tick, pr = 0;
	uint64_t late;
	ssize_t len;
	size_t i, want = NREAD_MIN;

	signals_setup();
	rules_setup(fd, &halt);
	rterror = g_rterror;
	if (g_evflush)
		fflush(stdout);
	if (g_pidfilter > 0 && !halt)
		watch_start();
	if (g_command != NULL && !halt) {
		cmd_release();
		if (g_nprobes == 0)
			command_wait();
	}

	/*
	 * Folded user stacks are merged while their processes live: the
	 * read waits at most a tick, in poll(2).  Not a timer's signal,
	 * which would also cut short the writes of the rules' output to a
	 * pipe or a terminal (EINTR, and stdio's stream in error).
	 */
	tick = !halt && g_nprobes > 0 ? agg_tick_ms() : 0;
	for (;;) {
		if (halt || g_nprobes == 0)
			break;
		agg_tick();
		/*
		 * The command ended a grace period ago: what is still in the
		 * device is its, whatever time this process took over the
		 * events before (symbols of a first stack can take long).
		 * What dtd still folds is waited for while reading on: the
		 * end's timer asks again every 20 ms.
		 */
		if (g_quit == SIGCHLD && !agg_settle_poll(fd))
			g_quit = 0;
		if (g_quit == SIGCHLD && end_pending(fd))
			g_quit = 0;
		/* As OpenBSD's loop: a newline only for a signal in read(2). */
		if (g_quit)
			break;
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (tick > 0 && (pr = poll(&pfd, 1, tick)) == 0)
			continue;
		len = tick > 0 && pr == -1 ? -1 :
		    read(fd, buf, want * sizeof(buf[0]));
		if (len == -1) {
			if (errno == EINTR && g_quit == SIGCHLD)
				continue;
			if (errno == EINTR && g_quit) {
				/* not in output for other programs to parse */
				if (!g_json && !g_folded)
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
		/*
		 * No record: a stop (Ctrl-Z) or a signal we do not catch
		 * ended the read (dt(4) in userdt); read again.  A device
		 * that went away answers EIO, ENOTCONN or ENODEV.
		 */
		if (len == 0)
			continue;
		if (len % sizeof(struct dt_evt) != 0)
			errx(1, "incorrect read");
		want = rd_want((size_t)len / sizeof(struct dt_evt));
		/* the forks behind these events are announced by now */
		if (g_treefilter)
			ptree_sync();
		for (i = 0; i < (size_t)len / sizeof(struct dt_evt); i++) {
			halt = record_apply(fd, &buf[i]);
			if (halt)
				break;
		}
		/* before read(2) may block: the batch's output is out */
		if (g_evflush)
			fflush(stdout);
		lost_check(fd, 0);
	}
	if (g_nprobes > 0 && !dev_gone) {
		/* the command's end settled already (agg_settle_poll()) */
		if (g_quit != SIGCHLD)
			end_drain(fd, buf, want, halt);
		lost_check(fd, 1);
		/* JSON readers take everything from the stream: not there. */
		if (!g_json && (late = late_count(fd)) > 0)
			fprintf(stderr, "%s: %llu events came out of time order "
			    "(the machine kept dtd from holding them long "
			    "enough)\n", g_progname, (unsigned long long)late);
	}
	signals_stop();
	cmd_ended();
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

		/*
		 * After what END printed, as on a terminal, also where
		 * both go to one file or pipe (stdout is then buffered).
		 */
		fflush(stdout);
		memset(&st, 0, sizeof(st));
		if (ioctl(fd, DTIOCGSTATS, &st))
			warn("DTIOCGSTATS");
		fprintf(stderr, "%llu events read\n",
		    (unsigned long long)st.dtst_readevt);
		fprintf(stderr, "%llu events dropped\n",
		    (unsigned long long)st.dtst_dropevt);
		fprintf(stderr, "%llu events filtered\n",
		    (unsigned long long)g_filtered);
		push_report(fd);
		agg_report();
		fprintf(stderr, "%llu clock ticks skipped\n",
		    (unsigned long long)st.dtst_skiptick);
		fprintf(stderr, "%llu recursive events dropped\n",
		    (unsigned long long)st.dtst_recurevt);
	}
	/* the run ended first: the command and its children go with it */
	cmd_stop();
	ptree_close();
	return rterror ? 1 : 0;
}
