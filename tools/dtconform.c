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
 * dtconform: does a dt(4) device behave as OpenBSD's dt_dev.c 1.48?
 * Each check has a stable name; results are KTAP as kselftests print
 * them.  With -r REGISTRY (userdt's deviations.tsv), a check the
 * registry lists for a known difference is expected to fail and prints
 * "not ok N name # TODO id"; if it passes instead the run fails, so a
 * difference that was fixed must leave the registry (Wine's todo_wine).
 * Checks that need root say "# SKIP" without it.  Portable: POSIX and
 * <dev/dt/dtvar.h>, plus dt_os.h.
 *
 * usage: dtconform [-f device] [-r registry]
 * Exit: 0 when every check passed, was skipped or failed as registered;
 * 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/types.h>
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_os.h"

enum { PASS, FAIL, SKIP };

static const char	*dev = "/dev/dt";
static struct dtioc_probe_info *plist;	/* the probe table */
static size_t		 nprobes;
static uint32_t		 pbn_interval, pbn_profile;
static int		 is_root;
static char		 why[256];	/* a failure's or skip's reason */

static int
result(int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return r;
}

#define EXPECT(cond, ...) do {						\
	if (!(cond))							\
		return result(FAIL, __VA_ARGS__);			\
} while (0)

#define NEED_ROOT() do {						\
	if (!is_root)							\
		return result(SKIP, "needs root");			\
} while (0)

static void
on_alarm(int sig)
{
	(void)sig;
}

static int
dev_open(void)
{
	int fd = open(dev, O_RDONLY);

	if (fd == -1) {
		fprintf(stderr, "dtconform: %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	return fd;
}

/* ioctl's errno, 0 for success. */
static int
xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) == -1 ? errno : 0;
}

static int
enable(int fd, uint32_t pbn, uint64_t flags, uint64_t nsecs)
{
	struct dtioc_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.dtrq_pbn = pbn;
	rq.dtrq_evtflags = flags;
	rq.dtrq_nsecs = nsecs;
	return xioctl(fd, DTIOCPRBENABLE, &rq);
}

static int
disable(int fd, uint32_t pbn)
{
	struct dtioc_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.dtrq_pbn = pbn;
	return xioctl(fd, DTIOCPRBDISABLE, &rq);
}

static int
record(int fd, int on)
{
	return xioctl(fd, DTIOCRECORD, &on);
}

/* One read ended by SIGALRM (no SA_RESTART) after secs: bytes or -1. */
static ssize_t
read_timed(int fd, void *buf, size_t len, unsigned int secs)
{
	ssize_t n;

	alarm(secs);
	n = read(fd, buf, len);
	alarm(0);
	return n;
}

static int
stats(int fd, struct dtioc_stat *st)
{
	memset(st, 0, sizeof(*st));
	return xioctl(fd, DTIOCGSTATS, st);
}

static void
realtime(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static int
ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

/* --- the checks ---------------------------------------------------- */

/* dt-abi 3: the numbers, in OpenBSD's encoding, from this header's. */
static int
c_ioctl_numbers(void)
{
	EXPECT(dt_os_cmd_openbsd(DTIOCGPLIST) == 0xC0104401UL &&
	    dt_os_cmd_openbsd(DTIOCGSTATS) == 0x40204402UL &&
	    dt_os_cmd_openbsd(DTIOCRECORD) == 0x80044403UL &&
	    dt_os_cmd_openbsd(DTIOCPRBENABLE) == 0x80184404UL &&
	    dt_os_cmd_openbsd(DTIOCPRBDISABLE) == 0x80184405UL &&
	    dt_os_cmd_openbsd(DTIOCGARGS) == 0xC0184406UL &&
	    dt_os_cmd_openbsd(DTIOCRDVNODE) == 0xC0284408UL,
	    "an ioctl number differs from dt-abi's");
	EXPECT(sizeof(struct dt_evt) == 456 &&
	    sizeof(struct dtioc_probe_info) == 56 &&
	    sizeof(struct dtioc_req) == 24 && sizeof(struct dtioc_stat) == 32,
	    "a structure's size differs");
	return PASS;
}

/* The OpenBSD encoding of an _IOR number works on the device. */
static int
c_ioctl_openbsd_encoding(void)
{
	struct dtioc_stat st;
	int fd = dev_open(), e;

	e = xioctl(fd, dt_os_cmd_openbsd(DTIOCGSTATS), &st);
	close(fd);
	EXPECT(e == 0, "DTIOCGSTATS 0x40204402: %s", strerror(e));
	return PASS;
}

/* dt(4) knows only its own encoding: Linux's _IOR number is ENOTTY. */
static int
c_ioctl_linux_encoding_enotty(void)
{
	struct dtioc_stat st;
	int fd = dev_open(), e;

	e = xioctl(fd, dt_os_cmd_linux(DTIOCGSTATS), &st);
	close(fd);
	EXPECT(e == ENOTTY, "DTIOCGSTATS 0x80204402: %s, not ENOTTY",
	    e ? strerror(e) : "accepted");
	return PASS;
}

/* 'D' 7 (retired DTIOCGETAUXBASE), 'D' 9 and another group: ENOTTY. */
static int
c_ioctl_enotty(void)
{
	unsigned char arg[64];
	int fd = dev_open(), e1, e2, e3;

	memset(arg, 0, sizeof(arg));
	e1 = xioctl(fd, 0xC0104407UL, arg);
	e2 = xioctl(fd, 0xC0104409UL, arg);
	e3 = xioctl(fd, 0xC0104501UL, arg);
	close(fd);
	EXPECT(e1 == ENOTTY && e2 == ENOTTY && e3 == ENOTTY,
	    "errors %d %d %d, not ENOTTY", e1, e2, e3);
	return PASS;
}

/* Size 0 returns the size needed, and nothing else. */
static int
c_gplist_size_probe(void)
{
	struct dtioc_probe pr;
	int fd = dev_open(), e;

	memset(&pr, 0, sizeof(pr));
	e = xioctl(fd, DTIOCGPLIST, &pr);
	close(fd);
	EXPECT(e == 0, "DTIOCGPLIST size 0: %s", strerror(e));
	EXPECT(pr.dtpr_size == nprobes * sizeof(struct dtioc_probe_info) &&
	    pr.dtpr_size > 0, "size %zu", pr.dtpr_size);
	return PASS;
}

/* A buffer for one probe of several: ENOSPC, the first entry copied. */
static int
c_gplist_enospc(void)
{
	struct dtioc_probe_info one[2];
	struct dtioc_probe pr;
	int fd = dev_open(), e;

	if (nprobes < 2)
		return result(SKIP, "one probe only");
	memset(one, 0xa5, sizeof(one));
	pr.dtpr_size = sizeof(one[0]);
	pr.dtpr_probes = one;
	e = xioctl(fd, DTIOCGPLIST, &pr);
	close(fd);
	EXPECT(e == ENOSPC, "error %d, not ENOSPC", e);
	EXPECT(one[0].dtpi_pbn == 1 && one[1].dtpi_pbn == 0xa5a5a5a5U,
	    "the copy: pbn %u, next %#x", one[0].dtpi_pbn, one[1].dtpi_pbn);
	return PASS;
}

/* Entry i is probe i + 1, names NUL-terminated (btrace relies on it). */
static int
c_gplist_order(void)
{
	size_t i;

	for (i = 0; i < nprobes; i++) {
		EXPECT(plist[i].dtpi_pbn == i + 1, "entry %zu has pbn %u", i,
		    plist[i].dtpi_pbn);
		EXPECT(plist[i].dtpi_prov[DTNAMESIZE - 1] == '\0' &&
		    plist[i].dtpi_func[DTNAMESIZE - 1] == '\0' &&
		    plist[i].dtpi_name[DTNAMESIZE - 1] == '\0' &&
		    plist[i].dtpi_prov[0] != '\0', "entry %zu's names", i);
	}
	EXPECT(pbn_profile == 1 && pbn_interval == 2,
	    "profile is %u, interval %u, not 1 and 2", pbn_profile,
	    pbn_interval);
	return PASS;
}

/* DTIOCGARGS: pbn 0 and past the end are EINVAL. */
static int
c_gargs_einval(void)
{
	struct dtioc_arg ar;
	int fd = dev_open(), e1, e2;

	memset(&ar, 0, sizeof(ar));
	e1 = xioctl(fd, DTIOCGARGS, &ar);
	ar.dtar_pbn = (uint32_t)nprobes + 1;
	e2 = xioctl(fd, DTIOCGARGS, &ar);
	close(fd);
	EXPECT(e1 == EINVAL && e2 == EINVAL, "errors %d %d, not EINVAL", e1,
	    e2);
	return PASS;
}

/* A probe without types (profile, interval): size 0, success. */
static int
c_gargs_untyped(void)
{
	struct dtioc_arg_info ai[DTMAXFUNCARGS];
	struct dtioc_arg ar;
	int fd = dev_open(), e;

	memset(&ar, 0, sizeof(ar));
	ar.dtar_pbn = pbn_interval;
	ar.dtar_size = sizeof(ai);
	ar.dtar_args = ai;
	e = xioctl(fd, DTIOCGARGS, &ar);
	close(fd);
	EXPECT(e == 0 && ar.dtar_size == 0, "interval: error %d, size %zu",
	    e, ar.dtar_size);
	return PASS;
}

/* The first probe with at least min types, or 0. */
static uint32_t
typed_probe(int fd, size_t min, size_t *ntypes)
{
	struct dtioc_arg ar;
	size_t i;

	for (i = 0; i < nprobes; i++) {
		if (plist[i].dtpi_nargs < min)
			continue;
		memset(&ar, 0, sizeof(ar));
		ar.dtar_pbn = plist[i].dtpi_pbn;
		if (xioctl(fd, DTIOCGARGS, &ar) == 0 &&
		    ar.dtar_size >= min * sizeof(struct dtioc_arg)) {
			*ntypes = ar.dtar_size / sizeof(struct dtioc_arg);
			return plist[i].dtpi_pbn;
		}
	}
	return 0;
}

/* A typed probe: size nargs * 24; a buffer for one of two is ENOSPC. */
static int
c_gargs_typed(void)
{
	struct dtioc_arg_info ai[DTMAXFUNCARGS];
	struct dtioc_arg ar;
	size_t n;
	uint32_t pbn;
	int fd = dev_open(), e;

	if ((pbn = typed_probe(fd, 2, &n)) == 0) {
		close(fd);
		return result(SKIP, "no probe with two typed arguments");
	}
	memset(&ar, 0, sizeof(ar));
	ar.dtar_pbn = pbn;
	ar.dtar_size = sizeof(ai[0]);
	ar.dtar_args = ai;
	memset(ai, 0, sizeof(ai));
	e = xioctl(fd, DTIOCGARGS, &ar);
	close(fd);
	EXPECT(e == ENOSPC, "probe %u, room for one type: error %d", pbn, e);
	EXPECT(ai[0].dtai_pbn == pbn && ai[0].dtai_argn == 0 &&
	    ai[0].dtai_argtype[0] != '\0', "the first type was not copied");
	return PASS;
}

/* dt(4)'s probes have at most DTMAXARGTYPES (5) types. */
static int
c_gargs_max_types(void)
{
	size_t n = 0;
	uint32_t pbn;
	int fd = dev_open();

	pbn = typed_probe(fd, DTMAXARGTYPES + 1, &n);
	close(fd);
	if (pbn == 0)
		return result(SKIP, "no probe has more than %d arguments",
		    DTMAXARGTYPES);
	EXPECT(n <= DTMAXARGTYPES, "probe %u gives %zu types", pbn, n);
	return PASS;
}

/* A new open's counters are zero. */
static int
c_stats_fresh(void)
{
	struct dtioc_stat st;
	int fd = dev_open(), e;

	memset(&st, 0xff, sizeof(st));
	e = stats(fd, &st);
	close(fd);
	EXPECT(e == 0 && st.dtst_readevt == 0 && st.dtst_dropevt == 0 &&
	    st.dtst_skiptick == 0 && st.dtst_recurevt == 0,
	    "error %d or a counter not zero", e);
	return PASS;
}

/* Without root, the four tracing ioctls are EPERM before validation. */
static int
c_eperm_nonroot(void)
{
	struct dtioc_rdvn rv;
	int fd, e1, e2, e3, e4;

	if (is_root)
		return result(SKIP, "runs as root");
	fd = dev_open();
	memset(&rv, 0, sizeof(rv));
	e1 = record(fd, 1);
	e2 = enable(fd, 0, 0, 0);
	e3 = disable(fd, 0);
	e4 = xioctl(fd, DTIOCRDVNODE, &rv);
	close(fd);
	EXPECT(e1 == EPERM && e2 == EPERM && e3 == EPERM && e4 == EPERM,
	    "errors %d %d %d %d", e1, e2, e3, e4);
	return PASS;
}

/* DTIOCRECORD 1 with nothing enabled: ENOENT; 0 when idle: success. */
static int
c_record_errors(void)
{
	int fd, e1, e2;

	NEED_ROOT();
	fd = dev_open();
	e1 = record(fd, 1);
	e2 = record(fd, 0);
	close(fd);
	EXPECT(e1 == ENOENT && e2 == 0, "errors %d %d", e1, e2);
	return PASS;
}

/* Enable: ENOENT (pbn 0, past the end), EEXIST, EINVAL (period). */
static int
c_enable_errors(void)
{
	int fd, e1, e2, e3, e4, e5, e6;

	NEED_ROOT();
	fd = dev_open();
	e1 = enable(fd, 0, 0, 0);
	e2 = enable(fd, (uint32_t)nprobes + 1, 0, 0);
	e3 = enable(fd, pbn_interval, 0, 100000);	/* < 200 us */
	e4 = enable(fd, pbn_interval, 0,
	    (uint64_t)UINT32_MAX * 1000000000ULL + 1);
	e5 = enable(fd, pbn_interval, 0, 1000000000ULL);
	e6 = enable(fd, pbn_interval, 0, 1000000000ULL);
	close(fd);
	EXPECT(e1 == ENOENT && e2 == ENOENT, "unknown pbn: %d %d", e1, e2);
	EXPECT(e3 == EINVAL && e4 == EINVAL, "bad period: %d %d", e3, e4);
	EXPECT(e5 == 0 && e6 == EEXIST, "twice: %d %d", e5, e6);
	return PASS;
}

/* Disable: ENOENT for pbn 0, success for one never enabled. */
static int
c_disable_errors(void)
{
	int fd, e1, e2;

	NEED_ROOT();
	fd = dev_open();
	e1 = disable(fd, 0);
	e2 = disable(fd, pbn_interval);
	close(fd);
	EXPECT(e1 == ENOENT && e2 == 0, "errors %d %d", e1, e2);
	return PASS;
}

/* While recording: enable, disable and a second record are EBUSY. */
static int
c_ebusy_recording(void)
{
	int fd, e0, e1, e2, e3, e4;

	NEED_ROOT();
	fd = dev_open();
	e0 = enable(fd, pbn_interval, 0, 1000000000ULL);
	if (e0 == 0)
		e0 = record(fd, 1);
	e1 = enable(fd, pbn_profile, 0, 10000000);
	e2 = disable(fd, pbn_interval);
	e3 = record(fd, 1);
	e4 = record(fd, 0);
	close(fd);
	EXPECT(e0 == 0, "setup: %s", strerror(e0));
	EXPECT(e1 == EBUSY && e2 == EBUSY && e3 == EBUSY && e4 == 0,
	    "errors %d %d %d %d", e1, e2, e3, e4);
	return PASS;
}

/*
 * Interval events: probe, CPU 0, a time between before and after, the
 * name with EXECNAME, nothing else asked for (stacks, args zero).
 */
static int
c_read_interval(void)
{
	struct dt_evt ev[4];
	struct timespec t0, t1;
	ssize_t n;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	realtime(&t0);
	e = enable(fd, pbn_interval, DTEVT_EXECNAME, 10000000);
	if (e == 0)
		e = record(fd, 1);
	n = e ? -1 : read_timed(fd, ev, sizeof(ev), 5);
	realtime(&t1);
	close(fd);
	EXPECT(e == 0, "setup: %s", strerror(e));
	EXPECT(n > 0 && n % (ssize_t)sizeof(ev[0]) == 0, "read %ld", (long)n);
	EXPECT(ev[0].dtev_pbn == pbn_interval, "pbn %u", ev[0].dtev_pbn);
	EXPECT(ev[0].dtev_cpu == 0, "cpu %u", ev[0].dtev_cpu);
	EXPECT(ts_le(&t0, &ev[0].dtev_tsp) && ts_le(&ev[0].dtev_tsp, &t1),
	    "dtev_tsp outside the read");
	EXPECT(ev[0].dtev_comm[0] != '\0', "no name with EXECNAME");
	EXPECT(ev[0].dtev_kstack.st_count == 0 &&
	    ev[0].dtev_ustack.st_count == 0 && ev[0].dtev_args[0] == 0,
	    "a field not asked for is set");
	return PASS;
}

/* Without EXECNAME the name is empty (every record is zeroed first). */
static int
c_read_evtflags_zero(void)
{
	struct dt_evt ev;
	ssize_t n;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	e = enable(fd, pbn_interval, 0, 10000000);
	if (e == 0)
		e = record(fd, 1);
	n = e ? -1 : read_timed(fd, &ev, sizeof(ev), 5);
	close(fd);
	EXPECT(n == (ssize_t)sizeof(ev), "read %ld (%s)", (long)n,
	    strerror(e ? e : errno));
	EXPECT(ev.dtev_comm[0] == '\0', "name '%.23s'", ev.dtev_comm);
	return PASS;
}

/*
 * A buffer smaller than a record gets a cut record, which counts as
 * read (dt-abi 4.4); readevt counts every record read.
 */
static int
c_read_truncated(void)
{
	struct dt_evt ev[2];
	struct dtioc_stat st;
	ssize_t n1, n2;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	e = enable(fd, pbn_interval, 0, 10000000);
	if (e == 0)
		e = record(fd, 1);
	n1 = e ? -1 : read_timed(fd, ev, 100, 5);
	n2 = e ? -1 : read_timed(fd, ev, sizeof(ev[0]), 5);
	if (e == 0)
		e = record(fd, 0);
	if (e == 0)
		e = stats(fd, &st);
	close(fd);
	EXPECT(e == 0, "setup: %s", strerror(e));
	EXPECT(n1 == 100 && n2 == (ssize_t)sizeof(ev[0]), "reads %ld %ld",
	    (long)n1, (long)n2);
	EXPECT(st.dtst_readevt == 2, "readevt %llu, not 2",
	    (unsigned long long)st.dtst_readevt);
	return PASS;
}

/* Profile: the probe, a CPU, args zero. */
static int
c_read_profile(void)
{
	struct dt_evt ev;
	ssize_t n;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	e = enable(fd, pbn_profile, DTEVT_EXECNAME, 10000000);
	if (e == 0)
		e = record(fd, 1);
	n = e ? -1 : read_timed(fd, &ev, sizeof(ev), 3);
	close(fd);
	EXPECT(e == 0, "setup: %s", strerror(e));
	if (n == -1 && errno == EINTR)
		return result(SKIP, "no profile sample in 3 s (nothing "
		    "sampled here)");
	EXPECT(n == (ssize_t)sizeof(ev), "read %ld", (long)n);
	EXPECT(ev.dtev_pbn == pbn_profile && ev.dtev_args[0] == 0,
	    "pbn %u", ev.dtev_pbn);
	return PASS;
}

/* dt(4)'s rings: 15 events a CPU wait, the next ones are dropped. */
static int
c_ring_15_per_cpu(void)
{
	struct dt_evt ev[64];
	struct dtioc_stat st;
	struct timespec ts = { 0, 200000000 };
	ssize_t n;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	e = enable(fd, pbn_interval, 0, 200000);	/* 5000 Hz */
	if (e == 0)
		e = record(fd, 1);
	nanosleep(&ts, NULL);	/* a clock's worth of ticks: no event */
	n = e ? -1 : read_timed(fd, ev, sizeof(ev), 5);
	if (e == 0)
		e = stats(fd, &st);
	close(fd);
	EXPECT(e == 0, "setup: %s", strerror(e));
	EXPECT(n > 0 && n <= 15 * (ssize_t)sizeof(ev[0]) &&
	    st.dtst_dropevt > 0, "%ld records waited, %llu dropped",
	    (long)(n / (ssize_t)sizeof(ev[0])),
	    (unsigned long long)st.dtst_dropevt);
	return PASS;
}

/* dtev_pid 1..99999 and dtev_tid 100001..624287 (THREAD_PID_OFFSET). */
static int
c_event_tid_range(void)
{
	struct dt_evt ev;
	ssize_t n;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	e = enable(fd, pbn_interval, 0, 10000000);
	if (e == 0)
		e = record(fd, 1);
	n = e ? -1 : read_timed(fd, &ev, sizeof(ev), 5);
	close(fd);
	EXPECT(n == (ssize_t)sizeof(ev), "read %ld", (long)n);
	EXPECT(ev.dtev_pid >= 0 && ev.dtev_pid <= 99999 &&
	    ev.dtev_tid > 100000 && ev.dtev_tid <= 624287,
	    "pid %ld tid %ld", (long)ev.dtev_pid, (long)ev.dtev_tid);
	return PASS;
}

/* DTIOCRDVNODE: ESRCH for no such process; a descriptor for ours. */
static int
c_rdvnode(void)
{
	struct dtioc_rdvn rv;
	int fd, e1, e2;

	NEED_ROOT();
	fd = dev_open();
	memset(&rv, 0, sizeof(rv));
	rv.dtrv_pid = 0x7ffffffe;
	e1 = xioctl(fd, DTIOCRDVNODE, &rv);
	memset(&rv, 0, sizeof(rv));
	rv.dtrv_pid = getpid();
	rv.dtrv_va = (char *)(size_t)&c_rdvnode;
	e2 = xioctl(fd, DTIOCRDVNODE, &rv);
	close(fd);
	EXPECT(e1 == ESRCH, "no process: error %d", e1);
	EXPECT(e2 == 0 && rv.dtrv_len > 0 && rv.dtrv_start != NULL &&
	    rv.dtrv_start <= rv.dtrv_va, "our text: error %d", e2);
	return PASS;
}

/* ... whose dtrv_fd is a descriptor of ours (OpenBSD installs one). */
static int
c_rdvnode_fd(void)
{
	struct dtioc_rdvn rv;
	int fd, e;

	NEED_ROOT();
	fd = dev_open();
	memset(&rv, 0, sizeof(rv));
	rv.dtrv_pid = getpid();
	rv.dtrv_va = (char *)(size_t)&c_rdvnode_fd;
	e = xioctl(fd, DTIOCRDVNODE, &rv);
	close(fd);
	EXPECT(e == 0, "error %d", e);
	EXPECT(rv.dtrv_fd >= 0 && fcntl(rv.dtrv_fd, F_GETFD) != -1,
	    "dtrv_fd %d", rv.dtrv_fd);
	close(rv.dtrv_fd);
	return PASS;
}

struct check {
	const char	*name;
	int		(*fn)(void);
};

/* Names are stable: the registry and CI logs refer to them. */
static const struct check checks[] = {
	{ "ioctl-numbers",		c_ioctl_numbers },
	{ "ioctl-openbsd-encoding",	c_ioctl_openbsd_encoding },
	{ "ioctl-linux-encoding-enotty", c_ioctl_linux_encoding_enotty },
	{ "ioctl-enotty",		c_ioctl_enotty },
	{ "gplist-size-probe",		c_gplist_size_probe },
	{ "gplist-enospc",		c_gplist_enospc },
	{ "gplist-order",		c_gplist_order },
	{ "gargs-einval",		c_gargs_einval },
	{ "gargs-untyped",		c_gargs_untyped },
	{ "gargs-typed-enospc",		c_gargs_typed },
	{ "gargs-max-types",		c_gargs_max_types },
	{ "stats-fresh",		c_stats_fresh },
	{ "eperm-nonroot",		c_eperm_nonroot },
	{ "record-errors",		c_record_errors },
	{ "enable-errors",		c_enable_errors },
	{ "disable-errors",		c_disable_errors },
	{ "ebusy-recording",		c_ebusy_recording },
	{ "read-interval",		c_read_interval },
	{ "read-evtflags-zero",		c_read_evtflags_zero },
	{ "read-truncated",		c_read_truncated },
	{ "read-profile",		c_read_profile },
	{ "ring-15-per-cpu",		c_ring_15_per_cpu },
	{ "event-tid-range",		c_event_tid_range },
	{ "rdvnode",			c_rdvnode },
	{ "rdvnode-fd",			c_rdvnode_fd },
};
#define NCHECKS	(sizeof(checks) / sizeof(checks[0]))

/* The registry's deviation id for check name, or NULL. */
static char	*registered[NCHECKS];

/*
 * deviations.tsv: id, OpenBSD's behaviour, ours, checks (comma list or
 * "-"), tab-separated; '#' lines are comments.
 */
static void
load_registry(const char *path)
{
	char line[4096], *f[4], *p, *tok, *save;
	FILE *fp;
	size_t i;
	int nf;

	if ((fp = fopen(path, "r")) == NULL) {
		fprintf(stderr, "dtconform: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		for (nf = 0, p = line; nf < 4 && p != NULL; nf++) {
			f[nf] = p;
			if ((p = strchr(p, '\t')) != NULL)
				*p++ = '\0';
		}
		if (nf != 4) {
			fprintf(stderr, "dtconform: %s: not 4 fields: %s\n",
			    path, line);
			exit(1);
		}
		/* The header line, and deviations no check can see. */
		if (strcmp(f[0], "id") == 0 || strcmp(f[3], "-") == 0)
			continue;
		for (tok = strtok_r(f[3], ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < NCHECKS; i++)
				if (strcmp(checks[i].name, tok) == 0)
					break;
			if (i == NCHECKS) {
				fprintf(stderr, "dtconform: %s: %s names no "
				    "check '%s'\n", path, f[0], tok);
				exit(1);
			}
			free(registered[i]);
			if ((registered[i] = malloc(strlen(f[0]) + 1)) ==
			    NULL)
				exit(1);
			strcpy(registered[i], f[0]);
		}
	}
	fclose(fp);
}

static void
load_probes(void)
{
	struct dtioc_probe pr;
	size_t i;
	int fd = dev_open();

	memset(&pr, 0, sizeof(pr));
	if (xioctl(fd, DTIOCGPLIST, &pr) != 0 || pr.dtpr_size == 0 ||
	    (plist = malloc(pr.dtpr_size)) == NULL) {
		fprintf(stderr, "dtconform: no probe list\n");
		exit(1);
	}
	pr.dtpr_probes = plist;
	if (xioctl(fd, DTIOCGPLIST, &pr) != 0) {
		fprintf(stderr, "dtconform: DTIOCGPLIST failed\n");
		exit(1);
	}
	nprobes = pr.dtpr_size / sizeof(*plist);
	for (i = 0; i < nprobes; i++) {
		if (pbn_profile == 0 && strcmp(plist[i].dtpi_prov,
		    "profile") == 0)
			pbn_profile = plist[i].dtpi_pbn;
		if (pbn_interval == 0 && strcmp(plist[i].dtpi_prov,
		    "interval") == 0)
			pbn_interval = plist[i].dtpi_pbn;
	}
	close(fd);
}

int
main(int argc, char *argv[])
{
	struct sigaction sa;
	unsigned int nfail = 0, npass = 0, nskip = 0, ntodo = 0, nxpass = 0;
	size_t i;
	int ch, r;

	while ((ch = getopt(argc, argv, "f:r:")) != -1) {
		switch (ch) {
		case 'f':
			dev = optarg;
			break;
		case 'r':
			load_registry(optarg);
			break;
		default:
			fprintf(stderr, "usage: dtconform [-f device] "
			    "[-r registry]\n");
			return 2;
		}
	}
	is_root = geteuid() == 0;
	/* No SA_RESTART: the alarm must end a blocked read with EINTR. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	load_probes();

	printf("TAP version 13\n");
	printf("1..%u\n", (unsigned int)NCHECKS);
	printf("# dtconform on %s, %s: %zu probes\n", dt_os_name(), dev,
	    nprobes);
	for (i = 0; i < NCHECKS; i++) {
		why[0] = '\0';
		r = checks[i].fn();
		if (r == SKIP) {
			printf("ok %zu %s # SKIP %s\n", i + 1, checks[i].name,
			    why);
			nskip++;
		} else if (registered[i] != NULL && r == FAIL) {
			printf("not ok %zu %s # TODO %s: %s\n", i + 1,
			    checks[i].name, registered[i], why);
			ntodo++;
		} else if (registered[i] != NULL) {
			printf("not ok %zu %s\n# %s passes: deviation %s is "
			    "fixed, remove it from the registry\n", i + 1,
			    checks[i].name, checks[i].name, registered[i]);
			nfail++;
		} else if (r == FAIL) {
			printf("not ok %zu %s\n# %s\n", i + 1, checks[i].name,
			    why);
			nfail++;
		} else {
			printf("ok %zu %s\n", i + 1, checks[i].name);
			npass++;
		}
	}
	printf("# Totals: pass:%u fail:%u xfail:%u xpass:%u skip:%u "
	    "error:0\n", npass, nfail, ntodo, nxpass, nskip);
	return nfail || nxpass ? 1 : 0;
}
