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
 * The kprobe provider where the kernel has kprobes (the VM's Debian
 * kernel; our machines' has none): through the device, DTIOCGPLIST
 * lists kprobe probes in the form OpenBSD's btrace reads (and DTIOCGARGS
 * answers for them as it expects), and kprobe:vfs_read:entry/return see
 * exactly the read(2) calls a child makes on a file, with vfs_read's
 * arguments and return value.
 *
 *   dt-kptest DEVICE
 *   kpreader FILE [N]	(dt-kptest under that name, or kpload: the
 *			btrace and bpftrace checks' workload)
 *   kpping FILE	(one read of a byte: whether a tracer is attached)
 *
 * The child's reads are all before a marker, a read of MARK_LEN bytes by
 * this process after the child was reaped: events reach a reader in time
 * order, so once the marker's return is read every event of the child's
 * has been too, and the counts can be exact.  Prints "ok - ..." or
 * "FAIL - ..." lines and "N passed, M failed".
 */
#include <sys/ioctl.h>
#include <libgen.h>
#include <poll.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#define NREADS		50	/* the child's read(2) calls */
#define READ_LEN	100	/* bytes each */
#define MARK_LEN	7	/* the marker's, unlike any other read here */
#define DEADLINE_S	60	/* for the events to come, on a slow guest */
#define EVBATCH		64

static int	npass, nfail;
static char	rbuf[READ_LEN];	/* the child's: same address as ours */

static void
check(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - kprobe: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		npass++;
	else
		nfail++;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The range of kernel function name in /proc/kallsyms: its address and
 * the next higher symbol's.  false when it is not there (or hidden).
 */
static int
ksym_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	FILE *fp;
	char line[256], sym[128], type;
	unsigned long long a;

	*lo = 0;
	*hi = UINT64_MAX;
	if ((fp = fopen("/proc/kallsyms", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) == 3 &&
		    strcmp(sym, name) == 0)
			*lo = a;
	if (*lo != 0) {
		rewind(fp);
		while (fgets(line, sizeof(line), fp) != NULL)
			if (sscanf(line, "%llx", &a) == 1 && a > *lo &&
			    a < *hi)
				*hi = a;
	}
	fclose(fp);
	return *lo != 0 && *hi != UINT64_MAX;
}

/* Whether name is a function of the kprobe list pi[n]. */
static int
listed(const struct dtioc_probe_info *pi, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(pi[i].dtpi_prov, "kprobe") == 0 &&
		    strcmp(pi[i].dtpi_func, name) == 0)
			return 1;
	return 0;
}

/*
 * The kprobe blacklist (init mounts debugfs before dtd starts): of its
 * names that ftrace's list has, and that fit in a probe's 15 characters,
 * none may be listed.  *ncand: how many such names there were.
 */
static int
blacklist_listed(const struct dtioc_probe_info *pi, size_t n, int *ncand)
{
	FILE *bl, *af;
	char line[256], name[128], fn[128];
	int bad = 0, inftrace;

	*ncand = 0;
	if ((bl = fopen("/sys/kernel/debug/kprobes/blacklist", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), bl) != NULL) {
		if (sscanf(line, "%*s %127s", name) != 1 ||
		    strlen(name) > DTNAMESIZE - 1)
			continue;
		inftrace = 0;
		/* Where dtd found tracefs: debugfs' copy, or its own mount. */
		if ((af = fopen("/sys/kernel/debug/tracing/"
		    "available_filter_functions", "re")) == NULL &&
		    (af = fopen("/sys/kernel/tracing/"
		    "available_filter_functions", "re")) == NULL)
			break;
		while (!inftrace && fgets(line, sizeof(line), af) != NULL)
			inftrace = sscanf(line, "%127s", fn) == 1 &&
			    strcmp(fn, name) == 0;
		fclose(af);
		if (!inftrace)
			continue;
		(*ncand)++;
		bad += listed(pi, n, name);
	}
	fclose(bl);
	return bad;
}

/*
 * The list as OpenBSD's btrace reads it (dt-abi.md, btrace -l and its
 * rules): it takes probe pbn from entry pbn - 1 and prints the three
 * names as C strings.  How many entries break that.
 */
static size_t
plist_unlike_openbsd(const struct dtioc_probe_info *pi, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		if (pi[i].dtpi_pbn != i + 1 ||
		    memchr(pi[i].dtpi_prov, '\0', DTNAMESIZE) == NULL ||
		    memchr(pi[i].dtpi_func, '\0', DTNAMESIZE) == NULL ||
		    memchr(pi[i].dtpi_name, '\0', DTNAMESIZE) == NULL ||
		    pi[i].dtpi_func[0] == '\0' || pi[i].dtpi_name[0] == '\0')
			bad++;
	return bad;
}

/*
 * DTIOCGARGS as OpenBSD's btrace asks it for every probe its rules
 * fire (and fails hard when it errs): size 0 for a kprobe, as dt(4)
 * answers every probe but a tracepoint.
 */
static int
args_none(int fd, uint32_t pbn)
{
	struct dtioc_arg_info ai[DTMAXARGTYPES];
	struct dtioc_arg dtar;

	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = pbn;
	dtar.dtar_size = sizeof(ai);
	dtar.dtar_args = ai;
	return ioctl(fd, DTIOCGARGS, &dtar) == 0 && dtar.dtar_size == 0;
}

static int
done(void)
{
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail == 0 && npass > 0 ? 0 : 1;
}

static int
enable(int fd, uint32_t pbn, uint64_t flags)
{
	struct dtioc_req dtrq;

	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = pbn;
	dtrq.dtrq_evtflags = flags;
	return ioctl(fd, DTIOCPRBENABLE, &dtrq);
}

/* The child: NREADS reads of READ_LEN bytes, nothing else that reads. */
static void
reader(const char *path)
{
	int fd, i;

	if ((fd = open(path, O_RDONLY)) == -1)
		_exit(2);
	for (i = 0; i < NREADS; i++)
		if (read(fd, rbuf, READ_LEN) != READ_LEN)
			_exit(3);
	_exit(0);
}

/*
 * For the btrace and bpftrace checks in init: nreads reads of READ_LEN
 * bytes and a marker of MARK_LEN from path, then stay until standard
 * input closes, so that dtd can still name us when it reads our events.
 * The wait is a poll(2), not a read: a tracer that stops a little after
 * the marker (bpftrace's exit() is asynchronous) must see no read of
 * ours beyond it.
 */
static int
kpreader(const char *path, int nreads)
{
	struct pollfd pfd;
	char buf[READ_LEN];
	int fd, i;

	if ((fd = open(path, O_RDONLY)) == -1)
		return 2;
	for (i = 0; i < nreads; i++)
		if (read(fd, buf, READ_LEN) != READ_LEN)
			return 3;
	if (read(fd, buf, MARK_LEN) != MARK_LEN)
		return 4;
	printf("done\n");
	fflush(stdout);
	pfd.fd = 0;
	pfd.events = POLLIN;
	/* Its writer's close makes a fifo POLLHUP; nothing is read. */
	while (poll(&pfd, 1, -1) == -1 && errno == EINTR)
		continue;
	return 0;
}

/* One read(2) of one byte: a ping that a tracer's rule can answer. */
static int
kpping(const char *path)
{
	char c;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return 2;
	return read(fd, &c, 1) == 1 ? 0 : 3;
}

int
main(int argc, char **argv)
{
	struct dtioc_probe dtpr;
	struct dtioc_probe_info *pi;
	struct dtioc_stat st;
	struct dt_evt evs[EVBATCH];
	struct sigaction sa;
	const char *path = "/tmp/kptest.data";
	char data[NREADS * READ_LEN], mark[MARK_LEN], comm[DTMAXCOMLEN] = "";
	uint32_t pbn_entry = 0, pbn_return = 0;
	size_t n, i, nkprobe = 0;
	ssize_t got;
	pid_t child, self = getpid();
	int fd, dfd, on, status, marker = 0, badargs = 0, badret = 0;
	int entries = 0, returns = 0, badcomm = 1, nocaller = 0;
	uint64_t klo, khi;
	int ncand;
	unsigned int k;
	uint8_t nargs_entry = 0, nargs_return = 0xff;
	double t0;

	if ((argc == 2 || argc == 3) &&
	    (strcmp(basename(argv[0]), "kpreader") == 0 ||
	    strcmp(basename(argv[0]), "kpload") == 0))
		return kpreader(argv[1], argc == 3 ? atoi(argv[2]) : NREADS);
	if (argc == 2 && strcmp(basename(argv[0]), "kpping") == 0)
		return kpping(argv[1]);
	if (argc != 2) {
		fprintf(stderr, "usage: dt-kptest DEVICE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((fd = open(argv[1], O_RDONLY)) == -1) {
		check(0, "open %s: %s", argv[1], strerror(errno));
		return done();
	}

	/* The list, sized first as btrace does. */
	t0 = now_s();
	memset(&dtpr, 0, sizeof(dtpr));
	if (ioctl(fd, DTIOCGPLIST, &dtpr) == -1 || dtpr.dtpr_size == 0) {
		check(0, "DTIOCGPLIST size: %s", strerror(errno));
		return done();
	}
	n = dtpr.dtpr_size / sizeof(*pi);
	if ((pi = calloc(n, sizeof(*pi))) == NULL)
		return 2;
	dtpr.dtpr_probes = pi;
	errno = 0;
	got = ioctl(fd, DTIOCGPLIST, &dtpr);
	check(got == 0, "DTIOCGPLIST of %zu probes in %.3f s, through the "
	    "device (%s)", n, now_s() - t0, strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(pi[i].dtpi_prov, "kprobe") != 0)
			continue;
		nkprobe++;
		if (strcmp(pi[i].dtpi_func, "vfs_read") != 0)
			continue;
		if (strcmp(pi[i].dtpi_name, "entry") == 0) {
			pbn_entry = pi[i].dtpi_pbn;
			nargs_entry = pi[i].dtpi_nargs;
		} else if (strcmp(pi[i].dtpi_name, "return") == 0) {
			pbn_return = pi[i].dtpi_pbn;
			nargs_return = pi[i].dtpi_nargs;
		}
	}
	/* Entry and return for thousands of functions on any kernel. */
	check(nkprobe >= 2000 && nkprobe % 2 == 0,
	    "%zu probes of provider \"kprobe\" listed", nkprobe);
	check(pbn_entry != 0 && pbn_return != 0, "kprobe:vfs_read:entry "
	    "(%u) and :return (%u) listed", pbn_entry, pbn_return);
	check(nargs_entry == 6 && nargs_return == 0, "entry has 6 arguments "
	    "(%u), return none (%u)", nargs_entry, nargs_return);
	check(plist_unlike_openbsd(pi, n) == 0, "every entry is probe "
	    "pbn - 1, its names C strings, as OpenBSD's btrace reads them "
	    "(%zu not)", plist_unlike_openbsd(pi, n));
	check(pbn_entry != 0 && args_none(fd, pbn_entry) &&
	    args_none(fd, pbn_return), "DTIOCGARGS of kprobe:vfs_read:entry "
	    "and :return: no types, as OpenBSD's btrace expects");
	on = blacklist_listed(pi, n, &ncand);
	check(on == 0 && ncand > 0, "none of the %d blacklisted functions "
	    "ftrace lists is listed (%d are)", ncand, on);
	if (pbn_entry == 0 || pbn_return == 0)
		return done();

	/* The file, written before anything records: write is not read. */
	if ((dfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    write(dfd, data, sizeof(data)) != (ssize_t)sizeof(data)) {
		check(0, "cannot write %s: %s", path, strerror(errno));
		return done();
	}
	close(dfd);

	on = ksym_range("ksys_read", &klo, &khi);
	check(on, "ksys_read at %llx..%llx in /proc/kallsyms",
	    (unsigned long long)klo,
	    (unsigned long long)khi);
	check(enable(fd, pbn_entry, DTEVT_EXECNAME | DTEVT_FUNCARGS |
	    DTEVT_KSTACK) == 0, "enable kprobe:vfs_read:entry");
	check(enable(fd, pbn_return, DTEVT_EXECNAME) == 0,
	    "enable kprobe:vfs_read:return");
	on = 1;
	if (ioctl(fd, DTIOCRECORD, &on) == -1) {
		check(0, "DTIOCRECORD 1: %s", strerror(errno));
		return done();
	}

	if ((child = fork()) == -1)
		return 2;
	if (child == 0)
		reader(path);
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child %d made %d reads of %d bytes (status 0x%x)", (int)child,
	    NREADS, READ_LEN, status);
	/* The marker: after every read of the child's. */
	if ((dfd = open(path, O_RDONLY)) == -1 ||
	    read(dfd, mark, MARK_LEN) != MARK_LEN)
		check(0, "marker read: %s", strerror(errno));
	close(dfd);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: read(2) ends */
	sigaction(SIGALRM, &sa, NULL);
	alarm(DEADLINE_S);
	while (!marker) {
		got = read(fd, evs, sizeof(evs));
		if (got <= 0) {
			check(0, "read of events: %s before the marker came",
			    got == 0 ? "end" : strerror(errno));
			break;
		}
		for (i = 0; i < (size_t)got / sizeof(evs[0]); i++) {
			struct dt_evt *ev = &evs[i];

			if (ev->dtev_pid == self && ev->dtev_pbn == pbn_return &&
			    ev->dtev_retval[0] == MARK_LEN) {
				marker = 1;
				/* We are alive: dtd knows our name. */
				badcomm = strcmp(ev->dtev_comm, "dt-kptest") != 0;
				snprintf(comm, sizeof(comm), "%s",
				    ev->dtev_comm);
				break;
			}
			if (ev->dtev_pid != child)
				continue;
			if (ev->dtev_pbn == pbn_entry) {
				entries++;
				/* vfs_read(file, buf, count, pos) */
				if (ev->dtev_args[1] != (register_t)(uintptr_t)
				    rbuf || ev->dtev_args[2] != READ_LEN ||
				    ev->dtev_args[0] == 0)
					badargs++;
				/* read(2) calls vfs_read from ksys_read. */
				for (k = 0; k < ev->dtev_kstack.st_count &&
				    k < STACKTRACE_MAX; k++)
					if (ev->dtev_kstack.st_pc[k] >= klo &&
					    ev->dtev_kstack.st_pc[k] < khi)
						break;
				if (k == ev->dtev_kstack.st_count ||
				    k == STACKTRACE_MAX)
					nocaller++;
			} else if (ev->dtev_pbn == pbn_return) {
				returns++;
				if (ev->dtev_retval[0] != READ_LEN)
					badret++;
			}
		}
	}
	alarm(0);
	on = 0;
	ioctl(fd, DTIOCRECORD, &on);

	check(marker, "the marker's return came");
	check(entries == NREADS, "the child's vfs_read entries: %d of %d",
	    entries, NREADS);
	check(returns == NREADS, "the child's vfs_read returns: %d of %d",
	    returns, NREADS);
	check(entries > 0 && badargs == 0, "entry arg1 = the buffer, arg2 = "
	    "%d bytes, arg0 a file (%d wrong)", READ_LEN, badargs);
	check(returns > 0 && badret == 0, "return retval = %d bytes read "
	    "(%d wrong)", READ_LEN, badret);
	check(entries > 0 && nocaller == 0, "entry's kstack has a return "
	    "address in ksys_read (%d without)", nocaller);
	check(marker && badcomm == 0, "the marker's comm is ours (\"%s\")",
	    comm);
	memset(&st, 0, sizeof(st));
	check(ioctl(fd, DTIOCGSTATS, &st) == 0 && st.dtst_dropevt == 0,
	    "no event dropped (%llu)", (unsigned long long)st.dtst_dropevt);
	close(fd);
	unlink(path);
	return done();
}
