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
static void __attribute__((noreturn))
dev_err(const char *what)
{
	if (errno == EPERM || errno == EACCES)
		err(1, "%s (enabling probes and recording need root)", what);
	err(1, "%s", what);
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
static int
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
	int timer;

	/*
	 * -p and -c keep the events of some processes; an interval event
	 * belongs to no process (dtd's timer makes it), so both keep it:
	 * interval:s:1 { exit(); } ends a run whatever is traced.
	 */
	timer = ev->dtev_pbn > 0 && ev->dtev_pbn <= dt_ndtpi &&
	    strncmp(dt_dtpis[ev->dtev_pbn - 1].dtpi_prov, "interval",
	    DTNAMESIZE) == 0;
	if (g_pidfilter > 0 && !timer && ev->dtev_pid != g_pidfilter) {
		g_filtered++;
		return 0;
	}
	if (g_treefilter && !timer &&
	    !ptree_member(ev->dtev_pid, &ev->dtev_tsp,
	    ev->dtev_pbn > 0 && ev->dtev_pbn <= dt_ndtpi &&
	    strncmp(dt_dtpis[ev->dtev_pbn - 1].dtpi_prov, "syscall",
	    DTNAMESIZE) == 0)) {
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
			/* patterns that overlap run the rule once */
			break;
		}
	}
	return 0;
}

/*
 * DTEVT_DEEPSTACK (dtvar.h): an event whose st_count says more frames
 * than it holds waits here, one per CPU, for the continuation records
 * that follow it among that CPU's records (other CPUs' may come between,
 * and a read may end in the middle); then its rules run with the whole
 * stacks in g_deep.
 */
struct deep_pend {
	struct dt_evt		 dp_ev;
	struct deep_stacks	 dp_st;
	unsigned int		 dp_need;	/* frames still to come */
	unsigned int		 dp_got;
	int			 dp_busy;
};
#define DEEP_NCPU	1024
static struct deep_pend	*deep_pend;

static int
deep_run(int fd, struct deep_pend *dp)
{
	int halt;

	dp->dp_busy = 0;
	g_deep_ev = &dp->dp_ev;
	g_deep = &dp->dp_st;
	halt = rules_apply(fd, &dp->dp_ev);
	g_deep_ev = NULL;
	g_deep = NULL;
	return halt;
}

/* The frames of stacktrace st into a deep stack's array. */
static unsigned int
deep_head(unsigned long *to, const struct stacktrace *st)
{
	unsigned int n = st->st_count < STACKTRACE_MAX ? st->st_count :
	    STACKTRACE_MAX;

	memcpy(to, st->st_pc, n * sizeof(*to));
	return n;
}

/* One record read: run its rules now, or when its stacks are whole. */
static int
record_apply(int fd, struct dt_evt *ev)
{
	struct deep_pend *dp;
	const uint64_t *pcs;
	unsigned int kx, ux, i, w;
	int halt = 0;

	if (deep_pend == NULL || ev->dtev_cpu >= DEEP_NCPU) {
		if (ev->dtev_pbn & DTEV_PBN_MORE)
			return 0;
		return rules_apply(fd, ev);
	}
	dp = &deep_pend[ev->dtev_cpu];
	if (ev->dtev_pbn & DTEV_PBN_MORE) {
		if (!dp->dp_busy || ev->dtev_tid != dp->dp_ev.dtev_tid ||
		    (ev->dtev_pbn & ~DTEV_PBN_MORE) != dp->dp_ev.dtev_pbn)
			return 0;	/* its event was not ours to wait for */
		pcs = DTEV_MORE_PCS(ev);
		kx = dp->dp_ev.dtev_kstack.st_count > STACKTRACE_MAX ?
		    dp->dp_ev.dtev_kstack.st_count - STACKTRACE_MAX : 0;
		for (i = 0; i < DTEV_MORE_NPC && dp->dp_need > 0; i++) {
			w = dp->dp_got++;
			if (w < kx)
				dp->dp_st.dk_k[STACKTRACE_MAX + w] = pcs[i];
			else
				dp->dp_st.dk_u[STACKTRACE_MAX + w - kx] =
				    pcs[i];
			dp->dp_need--;
		}
		return dp->dp_need == 0 ? deep_run(fd, dp) : 0;
	}
	/* a record of this CPU before the rest came: run it as it is */
	if (dp->dp_busy) {
		kx = dp->dp_st.dk_kn > STACKTRACE_MAX ?
		    dp->dp_st.dk_kn - STACKTRACE_MAX : 0;
		kx = dp->dp_got < kx ? dp->dp_got : kx;
		ux = dp->dp_got - kx;
		if (dp->dp_st.dk_kn > STACKTRACE_MAX + kx)
			dp->dp_st.dk_kn = STACKTRACE_MAX + kx;
		if (dp->dp_st.dk_un > STACKTRACE_MAX + ux)
			dp->dp_st.dk_un = STACKTRACE_MAX + ux;
		if ((halt = deep_run(fd, dp)) != 0)
			return halt;
	}
	if (ev->dtev_kstack.st_count <= STACKTRACE_MAX &&
	    ev->dtev_ustack.st_count <= STACKTRACE_MAX)
		return rules_apply(fd, ev);
	kx = ev->dtev_kstack.st_count > DTEV_DEEP_MAX ? DTEV_DEEP_MAX :
	    ev->dtev_kstack.st_count;
	ux = ev->dtev_ustack.st_count > DTEV_DEEP_MAX ? DTEV_DEEP_MAX :
	    ev->dtev_ustack.st_count;
	dp->dp_ev = *ev;
	deep_head(dp->dp_st.dk_k, &ev->dtev_kstack);
	deep_head(dp->dp_st.dk_u, &ev->dtev_ustack);
	dp->dp_st.dk_kn = kx;
	dp->dp_st.dk_un = ux;
	dp->dp_need = (kx > STACKTRACE_MAX ? kx - STACKTRACE_MAX : 0) +
	    (ux > STACKTRACE_MAX ? ux - STACKTRACE_MAX : 0);
	dp->dp_got = 0;
	dp->dp_busy = 1;
	return 0;
}

/*
 * Two names of one syscall probe, OpenBSD's and Linux's (exit and
 * exit_group, pread and pread64): no OpenBSD script has both, and the
 * rules are accepted as a pattern's are, with a word on stderr, since
 * whoever wrote both probably took them for two calls.
 */
static int
probe_alias(struct bt_probe *first, struct bt_probe *bp)
{
	char fname[96];

	if (first->bp_name == NULL || bp->bp_name == NULL ||
	    strcmp(bp->bp_prov, "syscall") != 0 ||
	    strcmp(first->bp_func, bp->bp_func) == 0)
		return 0;
	snprintf(fname, sizeof(fname), "%s", probe_name(first));
	fflush(stdout);
	fprintf(stderr, "%s:%d:%d: '%s' and '%s' (line %d) are one probe: "
	    "both rules run on its events%s\n", g_filename != NULL ?
	    g_filename : g_progname, bp->bp_pos.p_line, bp->bp_pos.p_col,
	    probe_name(bp), fname, first->bp_pos.p_line,
	    strcmp(first->bp_func, "exit") == 0 ||
	    strcmp(bp->bp_func, "exit") == 0 ? " (exit is OpenBSD's name of "
	    "Linux's exit_group; Linux's exit, which ends one thread, is "
	    "syscall:__threxit)" : "");
	return 1;
}

/*
 * Several rules may name one probe (bpftrace's habit; OpenBSD's btrace
 * stops at dt(4)'s EEXIST): it is enabled once, by its first rule, with
 * the events' fields that all its rules need, and rules_apply() runs
 * each rule on its events in script order.  Only a script OpenBSD
 * rejects gets here, so no accepted script changes.  A timer probe at
 * two rates cannot be one enabling: that stays OpenBSD's error.
 */
static void
probes_share(void)
{
	struct bt_rule *r, *r2;
	struct bt_probe *bp, *bp2;

	for (r = g_rules; r != NULL; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_pbn == 0)
				continue;
			for (r2 = g_rules; r2 != NULL; r2 = r2->br_next)
				for (bp2 = r2->br_probes; bp2 != NULL;
				    bp2 = bp2->bp_next) {
					if (bp2 == bp)
						goto next;	/* none before */
					if (bp2->bp_type != P_PROBE ||
					    bp2->bp_pbn != bp->bp_pbn ||
					    bp2->bp_shared ||
					    bp2->bp_nsecs != bp->bp_nsecs)
						continue;
					if (!bp->bp_wild && !bp2->bp_wild)
						(void)probe_alias(bp2, bp);
					bp2->bp_req.dtrq_evtflags |=
					    bp->bp_req.dtrq_evtflags;
					/*
					 * a tracepoint's strings take its
					 * kernel stack's space: one rule's
					 * kstack wins over another's %s
					 */
					if ((bp2->bp_req.dtrq_evtflags &
					    DTEVT_KSTACK) && strncmp(dt_dtpis[
					    bp->bp_pbn - 1].dtpi_prov,
					    "syscall", DTNAMESIZE) != 0)
						bp2->bp_req.dtrq_evtflags &=
						    ~(uint64_t)DTEVT_STRINGS;
					bp->bp_shared = 1;
					goto next;
				}
next:			;
		}
}

/*
 * args.NAME of the rule being set up: the argument number that NAME is
 * in each of its probes (tracefs, bt_tpfields.c), which must be one.
 */
static struct bt_rule *argname_rule;

static int
argname_resolve(const char *name, const struct bt_pos *pos)
{
	struct bt_probe *bp;
	int n, found = -2;

	for (bp = argname_rule->br_probes; bp != NULL; bp = bp->bp_next) {
		if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 ||
		    bp->bp_wild == 2)
			continue;
		n = tp_argindex(&dt_dtpis[bp->bp_pbn - 1], name);
		if (n < 0) {
			bt_posmsg(pos, "probe '%s' has no argument named "
			    "'%s'%s", probe_name(bp), name, strncmp(dt_dtpis[
			    bp->bp_pbn - 1].dtpi_prov, "tracepoint",
			    DTNAMESIZE) == 0 ? " (btrace -lv lists them)" :
			    " (names are a Linux tracepoint's fields)");
			exit(1);
		}
		if (found >= 0 && n != found) {
			bt_posmsg(pos, "'%s' is argument %d of one probe of "
			    "the rule and %d of another: name it by argN in "
			    "rules of their own", name, found, n);
			exit(1);
		}
		found = n;
	}
	return found;
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
		if ((r->br_evtflags & DTEVT_DEEPSTACK) && deep_pend == NULL)
			deep_pend = xcalloc(DEEP_NCPU, sizeof(*deep_pend));
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_wild == 2)
				continue;
			dtpi_cache(fd);
			if (bp->bp_wild && bp->bp_pbn == 0) {
				/* its matches follow it in the list */
				probe_expand(bp);
				continue;
			}
			if (bp->bp_wild)
				pi = &dt_dtpis[bp->bp_pbn - 1];
			else if ((pi = probe_find(bp)) == NULL)
				probe_notfound(bp, probe_name(bp));
			bp->bp_pbn = pi->dtpi_pbn;
			memset(&bp->bp_req, 0, sizeof(bp->bp_req));
			bp->bp_req.dtrq_pbn = pi->dtpi_pbn;
			bp->bp_req.dtrq_nsecs = bp->bp_nsecs;
			bp->bp_req.dtrq_evtflags = r->br_evtflags;
			/*
			 * userdt's strings (dtvar.h): syscall probes, and
			 * tracepoints with a string field, whose arguments
			 * printf's %s shows as strings: asked for whenever
			 * the rule reads arguments, unless it wants the
			 * kernel stack, whose space the strings take.
			 */
			if (strncmp(pi->dtpi_prov, "tracepoint",
			    DTNAMESIZE) == 0 && dtai_hasstr(fd, pi)) {
				if ((r->br_evtflags & (DTEVT_FUNCARGS |
				    DTEVT_KSTACK)) == DTEVT_FUNCARGS)
					bp->bp_req.dtrq_evtflags |=
					    DTEVT_STRINGS;
			} else if (strncmp(pi->dtpi_prov, "syscall",
			    DTNAMESIZE) != 0)
				bp->bp_req.dtrq_evtflags &= ~(uint64_t)
				    DTEVT_STRINGS;
			else {
				if (g_lossless > 0)
					bp->bp_req.dtrq_evtflags |=
					    DTEVT_LOSSLESS;
				/*
				 * -c follows one command, launched whole:
				 * the kernel's copy of the rest of the
				 * machine's calls would only fill the rings
				 * (the tree filter is set later, below).
				 */
				if (g_command != NULL && !g_allprocs)
					bp->bp_req.dtrq_evtflags |=
					    DTEVT_LAUNCHED;
			}
			/* -c: folded in dtd, keyed by comm (bt_agg.c) */
			if (agg_wants_comm(r, pi->dtpi_prov))
				bp->bp_req.dtrq_evtflags |= DTEVT_EXECNAME;
			if (g_verbose > 1)
				fprintf(stderr, "debug: probe '%s' pbn %u "
				    "evtflags %#llx nsecs %llu\n",
				    probe_name(bp), pi->dtpi_pbn,
				    (unsigned long long)
				    bp->bp_req.dtrq_evtflags,
				    (unsigned long long)bp->bp_nsecs);
		}
	}

	probes_share();
	for (r = g_rules; r != NULL; r = r->br_next) {
		argname_rule = r;
		rule_argnames(r, argname_resolve);
	}
	/* what will stay silent, said before anything runs */
	check_probes();

	/* the command exists, held at its gate, before BEGIN: cpid */
	if (g_command != NULL) {
		sigset_t chld, omask;

		g_treefilter = !g_allprocs;
		if (g_treefilter)
			ptree_open();
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, &omask);
		ptree_root(cmd_prepare());
		ptree_shell(g_cpid);
		sigprocmask(SIG_SETMASK, &omask, NULL);
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
			if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 ||
			    bp->bp_shared)
				continue;
			if (ioctl(fd, DTIOCPRBENABLE, &bp->bp_req)) {
				if (errno == EEXIST)
					errx(1, "Cannot register multiple "
					    "probes of the same type: '%s'",
					    probe_name(bp));
				dev_err("DTIOCPRBENABLE");
			}
			push_probe(fd, bp->bp_pbn);
		}
	}
	agg_push(fd);
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
				    bp->bp_pbn != 0 && !bp->bp_shared &&
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
		 */
		if (g_quit == SIGCHLD)
			agg_settle(fd);
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
