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
 * bench_test inject|strict|abi14 DTD [CLIENT14]
 *
 * The test bench for clients of dt(4) (issue 23), through a real device
 * file of a private dtd (FUSE-file, temporary path, stopped by pid):
 *
 *   inject	--inject and --inject-file: each injectable error reaches
 *		the client (the Nth open, allowdt 0, an ioctl by command,
 *		a read's errno, a short read), and injected drops,
 *		recursion and skipped ticks land in DTIOCGSTATS exactly.
 *   strict	--openbsd-strict: tid + 100000, 16-slot rings (15 events
 *		per CPU, the rest dropped), per-CPU FIFO reads, and 1.48's
 *		skiptick/recurevt of the last CPU.
 *   abi14	--abi 1.14: CLIENT14, built against dtvar-1.14.h alone,
 *		enables a probe with a pid filter and must get only the
 *		events of that pid, in 296-byte records.
 *
 * Events are made deterministic by playing a traced process by hand: the
 * test says hello on dtd's ingest socket and writes getpid entry records
 * into its ring with chosen CPUs and time stamps, then waits (bounded)
 * until dtd has dispatched them (its ingest counters).
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

static struct dtt_dtd	dd;
static const char	*dtd_path;
static uint32_t		nsys;		/* syscall probes (the hello) */
static uint32_t		getpid_pbn;	/* syscall:sys%20:entry */
static uint32_t		getpid_idx;	/* its index in a ring's record */
static char		injpath[192];	/* --inject-file */

/* The tracee part of this process: its ring. */
struct tracee {
	int			 sock, fds[2];
	struct udt_welcome	 w;
	struct udt_ring_hdr	*rh;
	uint64_t		 next;		/* next ticket */
};

static int
tracee_open(struct tracee *t)
{
	memset(t, 0, sizeof(*t));
	t->sock = dtt_tracee_hello(dd.dd_sock, nsys, &t->w, t->fds);
	if (t->sock == -1)
		return -1;
	if ((t->rh = dtt_ring_map(t->fds[0], &t->w)) == NULL)
		return -1;
	return 0;
}

static void
tracee_close(struct tracee *t)
{
	if (t->rh != NULL)
		munmap(t->rh, t->w.uw_ringsize);
	if (t->sock > 0) {
		close(t->fds[0]);
		close(t->fds[1]);
		close(t->sock);
	}
	t->rh = NULL;
	t->sock = -1;
}

/* Commit a getpid entry record on cpu, stamped base + nsec. */
static void
tracee_put(struct tracee *t, unsigned int cpu, long nsec)
{
	struct udt_rec *s = (struct udt_rec *)(void *)((char *)t->rh +
	    UDT_RING_HDRSIZE + (t->next % t->w.uw_nslots) * UDT_SLOT_SIZE);
	static struct timespec base;
	struct udt_rec r;

	if (base.tv_sec == 0)
		clock_gettime(CLOCK_REALTIME, &base);
	memset(&r, 0, sizeof(r));
	r.ur_probe = (uint16_t)getpid_idx;
	r.ur_tid = gettid();
	r.ur_cpu = cpu;
	r.ur_sec = base.tv_sec;
	r.ur_nsec = nsec;
	memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
	if (__atomic_load_n(&t->rh->rh_head, __ATOMIC_RELAXED) < t->next + 1)
		__atomic_store_n(&t->rh->rh_head, t->next + 1,
		    __ATOMIC_RELAXED);
	__atomic_store_n(&s->ur_seq, t->next + 1, __ATOMIC_RELEASE);
	t->next++;
}

/* dtd's count of records dispatched, or 0 on error. */
static uint64_t
dispatched(void)
{
	struct udt_stats us;

	return st_ingest_stats(dd.dd_sock, &us) == 0 ? us.us_records : 0;
}

/* Wait (10 s at most) until dtd dispatched n records more than base. */
static bool
wait_dispatched(uint64_t base, uint64_t n)
{
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) + 10000000000ULL;
	struct timespec ts = { 0, 1000000 };

	while (dispatched() < base + n) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		nanosleep(&ts, NULL);	/* dtd's drain: no event to wait on */
	}
	return true;
}

/* Write the rule file by rename, so dtd never reads half of it. */
static void
rules(const char *text)
{
	char tmp[256];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", injpath);
	if ((f = fopen(tmp, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0 || rename(tmp, injpath) != 0)
		dtt_check(false, "write %s: %s", injpath, strerror(errno));
}

/* A private dtd with extra options; the probe list learnt. */
static int
start(const char *name, char *const extra[])
{
	struct dtioc_probe_info *pi;
	/*
	 * The launched tracee's events alone: the cases count each event
	 * their rules inject or lose, where the kernel's view of every
	 * other process (dtd's default as root) adds the machine's.
	 */
	char *args[12] = { "--no-ksyms", "--syscall-scope", "launched" };
	size_t npi, i;
	uint32_t first;
	int fd;

	for (i = 0; extra != NULL && extra[i] != NULL && i + 4 < 12; i++)
		args[i + 3] = extra[i];
	if (dtt_dtd_start(&dd, dtd_path, args, NULL, 0) == -1 ||
	    (fd = dtt_open(dd.dd_dev)) == -1 ||
	    (pi = dtt_plist(fd, &npi)) == NULL) {
		dtt_check(false, "%s: a private dtd and its device (%s)", name,
		    strerror(errno));
		return -1;
	}
	nsys = dtt_nsys(pi, npi, &first);
	getpid_pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	getpid_idx = getpid_pbn - first;
	free(pi);
	close(fd);
	return dtt_check(getpid_pbn != 0, "%s: dtd serves syscall:getpid",
	    name) ? 0 : -1;
}

static void
stop(void)
{
	if (dd.dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped, exit status 0");
}

/* An open that records getpid's entry. */
static int
open_recording(void)
{
	int fd = dtt_open(dd.dd_dev);

	if (fd == -1 || dtt_enable(fd, getpid_pbn, DTEVT_EXECNAME, 0) != 0 ||
	    dtt_record(fd, 1) != 0) {
		dtt_check(false, "an open recording getpid (%s)",
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

static void
test_inject_open(void)
{
	int fd[4], fds, e[4], i;

	rules("# the 2nd and 4th opens fail\nopen 2 EPERM\nopen 4 ENOMEM\n");
	for (i = 0; i < 4; i++) {
		fd[i] = dtt_open(dd.dd_dev);
		e[i] = fd[i] == -1 ? errno : 0;
	}
	dtt_check(e[0] == 0 && e[1] == EPERM && e[2] == 0 && e[3] == ENOMEM,
	    "open 2 EPERM, open 4 ENOMEM: %s, %s, %s, %s", strerror(e[0]),
	    strerror(e[1]), strerror(e[2]), strerror(e[3]));

	rules("allowdt 0\n");
	fds = dtt_open(dd.dd_dev);
	dtt_check(fds == -1 && errno == EPERM, "allowdt 0: open fails with "
	    "EPERM (%s)", fds == -1 ? strerror(errno) : "opened");
	if (fds != -1)
		close(fds);
	{
		struct dtioc_stat st;

		dtt_check(fd[0] != -1 && dtt_stats(fd[0], &st) == 0,
		    "allowdt 0: an open made before still works");
	}
	rules("");
	fds = dtt_open(dd.dd_dev);
	dtt_check(fds != -1, "allowdt back (empty file): open works (%s)",
	    fds == -1 ? strerror(errno) : "ok");
	if (fds != -1)
		close(fds);
	rules("open 1 bogus\n");
	fds = dtt_open(dd.dd_dev);
	dtt_check(fds != -1, "a bad rule file leaves the rules as they were "
	    "(%s)", fds == -1 ? strerror(errno) : "ok");
	if (fds != -1)
		close(fds);
	for (i = 0; i < 4; i++)
		if (fd[i] != -1)
			close(fd[i]);
}

static void
test_inject_ioctl(void)
{
	struct dtioc_stat st;
	int fd, r[4];

	rules("ioctl GSTATS 2-3 EIO\nioctl DTIOCPRBENABLE 1 EBUSY\n"
	    "ioctl RECORD %2 EFAULT\n");
	if ((fd = dtt_open(dd.dd_dev)) == -1) {
		dtt_check(false, "ioctl: open (%s)", strerror(errno));
		return;
	}
	r[0] = dtt_stats(fd, &st);
	r[1] = dtt_stats(fd, &st);
	/* The OpenBSD encoding is the same command, counted together. */
	r[2] = ioctl(fd, DTIOC_OPENBSD(DTIOCGSTATS), &st) == -1 ? errno : 0;
	r[3] = dtt_stats(fd, &st);
	dtt_check(r[0] == 0 && r[1] == EIO && r[2] == EIO && r[3] == 0,
	    "ioctl GSTATS 2-3 EIO: %d %d %d %d", r[0], r[1], r[2], r[3]);
	r[0] = dtt_enable(fd, getpid_pbn, 0, 0);
	r[1] = dtt_enable(fd, getpid_pbn, 0, 0);
	dtt_check(r[0] == EBUSY && r[1] == 0, "ioctl PRBENABLE 1 EBUSY: "
	    "%s then %s", strerror(r[0]), strerror(r[1]));
	/* RECORD 0 always succeeds on dt(4): only the rule fails it. */
	r[0] = dtt_record(fd, 0);
	r[1] = dtt_record(fd, 0);
	r[2] = dtt_record(fd, 0);
	r[3] = dtt_record(fd, 0);
	dtt_check(r[0] == 0 && r[1] == EFAULT && r[2] == 0 && r[3] == EFAULT,
	    "ioctl RECORD %%2 EFAULT: every second one fails");
	close(fd);
}

static void
test_inject_read(void)
{
	struct dt_evt evs[8];
	struct dtioc_stat st;
	struct tracee t;
	uint64_t base;
	ssize_t n[4];
	int e[4], fd, i;

	rules("read 1 EINTR\nread 2 short 100\nread 3 EIO\n");
	if ((fd = open_recording()) == -1)
		return;
	if (!dtt_check(tracee_open(&t) == 0, "read: a tracee's ring")) {
		close(fd);
		return;
	}
	base = dispatched();
	for (i = 0; i < 3; i++)
		tracee_put(&t, 0, 1000 + i);
	if (dtt_check(wait_dispatched(base, 3), "read: 3 events dispatched")) {
		/* Events are waiting: no read below blocks. */
		for (i = 0; i < 4; i++) {
			n[i] = read(fd, evs, sizeof(evs));
			e[i] = n[i] == -1 ? errno : 0;
		}
		dtt_check(n[0] == -1 && e[0] == EINTR, "read 1 EINTR (%s)",
		    strerror(e[0]));
		dtt_check(n[1] == 100, "read 2 short 100: %zd bytes", n[1]);
		dtt_check(n[2] == -1 && e[2] == EIO, "read 3 EIO (%s)",
		    strerror(e[2]));
		dtt_check(n[3] == 2 * (ssize_t)sizeof(struct dt_evt),
		    "read 4: the other two records (%zd bytes)", n[3]);
		i = dtt_stats(fd, &st);
		dtt_check(i == 0 && st.dtst_readevt == 3,
		    "readevt 3: the short read consumed its record (%llu)",
		    (unsigned long long)st.dtst_readevt);
	}
	tracee_close(&t);
	close(fd);
}

static void
test_inject_events(void)
{
	struct dt_evt evs[16];
	struct dtioc_stat st;
	struct tracee t;
	uint64_t base;
	long got;
	int fd, i, ok;

	rules("drop 1-3\nrecur 4\nskiptick 5 7\n");
	if ((fd = open_recording()) == -1)
		return;
	if (!dtt_check(tracee_open(&t) == 0, "events: a tracee's ring")) {
		close(fd);
		return;
	}
	base = dispatched();
	for (i = 1; i <= 10; i++)
		tracee_put(&t, 0, 1000 + i);
	if (dtt_check(wait_dispatched(base, 10),
	    "events: 10 events dispatched")) {
		dtt_check(dtt_record(fd, 0) == 0, "events: RECORD 0");
		got = dtt_read(fd, evs, 16, 5000);
		for (ok = got == 6, i = 0; ok && i < 6; i++)
			ok = evs[i].dtev_tsp.tv_nsec == 1005 + i;
		dtt_check(ok, "events 1-4 lost, 5-10 read (%ld read)", got);
		i = dtt_stats(fd, &st);
		dtt_check(i == 0 && st.dtst_readevt == 6 &&
		    st.dtst_dropevt == 3 && st.dtst_recurevt == 1 &&
		    st.dtst_skiptick == 7, "stats: read 6, dropped 3, "
		    "recursive 1, skipped ticks 7 (%llu %llu %llu %llu)",
		    (unsigned long long)st.dtst_readevt,
		    (unsigned long long)st.dtst_dropevt,
		    (unsigned long long)st.dtst_recurevt,
		    (unsigned long long)st.dtst_skiptick);
	}
	tracee_close(&t);
	close(fd);
}

static void
run_inject(void)
{
	char *extra[] = { "--inject-file", injpath, "--inject",
	    "ioctl 15 1 EIO", NULL };

	dtt_tag("inject");
	if (dtt_dtd_init(&dd, "udt-inject") == -1) {
		dtt_check(false, "a temporary directory");
		return;
	}
	snprintf(injpath, sizeof(injpath), "%s/inject", dd.dd_dir);
	if (start("inject", extra) == 0) {
		test_inject_open();
		test_inject_ioctl();
		test_inject_read();
		test_inject_events();
	}
	stop();
	unlink(injpath);
	dtt_dtd_fini(&dd, true);
}

/* Wait (bounded) until fd's dropevt reaches n. */
static bool
wait_dropped(int fd, uint64_t n)
{
	struct timespec ts = { 0, 1000000 };
	struct dtioc_stat st;
	int i;

	for (i = 0; i < 10000; i++) {
		if (dtt_stats(fd, &st) == 0 && st.dtst_dropevt >= n)
			return st.dtst_dropevt == n;
		nanosleep(&ts, NULL);
	}
	return false;
}

static void
run_strict(void)
{
	char *extra[] = { "--openbsd-strict", "--inject-file", injpath, NULL };
	struct dt_evt evs[64];
	struct dtioc_stat st;
	struct tracee t = { .sock = -1 };
	uint64_t base;
	unsigned int changes, last;
	long got;
	int fd = -1, i, ok;

	dtt_tag("strict");
	/* dtd's rings: one per configured CPU, as dt_dev_init() counts. */
	last = (unsigned int)sysconf(_SC_NPROCESSORS_CONF) - 1;
	if (last == 0) {
		dtt_check(true, "one CPU: the per-CPU checks need two (skipped)");
		return;
	}
	if (dtt_dtd_init(&dd, "udt-strict") == -1) {
		dtt_check(false, "a temporary directory");
		return;
	}
	snprintf(injpath, sizeof(injpath), "%s/inject", dd.dd_dir);
	if (start("strict", extra) != 0 || (fd = open_recording()) == -1 ||
	    !dtt_check(tracee_open(&t) == 0, "a tracee's ring"))
		goto out;

	/* 16 slots: 15 events wait, the other 5 are dropped. */
	for (i = 1; i <= 20; i++)
		tracee_put(&t, 0, 1000 + i);
	dtt_check(wait_dropped(fd, 5), "20 events on one CPU, unread: "
	    "5 dropped");
	got = dtt_read(fd, evs, 64, 5000);
	for (ok = got == 15, i = 0; ok && i < 15; i++)
		ok = evs[i].dtev_tsp.tv_nsec == 1001 + i &&
		    evs[i].dtev_tid == gettid() + 100000;
	dtt_check(ok, "the first 15 read, in order, dtev_tid = tid + 100000 "
	    "(%ld read, tid %d)", got, got > 0 ? evs[0].dtev_tid : 0);

	/* Alternate CPUs in time: the read goes CPU by CPU, FIFO each. */
	base = dispatched();
	for (i = 1; i <= 10; i++)
		tracee_put(&t, (unsigned int)i % 2, 2000 + i);
	if (dtt_check(wait_dispatched(base, 10), "10 events on 2 CPUs")) {
		got = dtt_read(fd, evs, 64, 5000);
		changes = 0;
		for (ok = got == 10, i = 1; ok && i < got; i++) {
			if (evs[i].dtev_cpu != evs[i - 1].dtev_cpu)
				changes++;
			else
				ok = evs[i].dtev_tsp.tv_nsec >
				    evs[i - 1].dtev_tsp.tv_nsec;
		}
		dtt_check(ok && changes == 1, "one read: per-CPU FIFO, one "
		    "CPU after the other, not merged by time (%ld read, %u "
		    "changes of CPU)", got, changes);
	}
	close(fd);
	fd = -1;

	/* 1.48 reports the last CPU's recurevt, not the sum. */
	rules("recur 1-3\nskiptick 4 5\n");
	if ((fd = open_recording()) == -1)
		goto out;
	base = dispatched();
	tracee_put(&t, last, 3001);
	tracee_put(&t, last, 3002);
	tracee_put(&t, 0, 3003);
	tracee_put(&t, 0, 3004);
	if (dtt_check(wait_dispatched(base, 4), "4 more events")) {
		i = dtt_stats(fd, &st);
		dtt_check(i == 0 && st.dtst_recurevt == 2 &&
		    st.dtst_skiptick == 0, "recurevt 2, skiptick 0: the last "
		    "CPU's (CPU %u had 2 recursive, CPU 0 1 and 5 skipped "
		    "ticks): %llu, %llu", last,
		    (unsigned long long)st.dtst_recurevt,
		    (unsigned long long)st.dtst_skiptick);
	}
out:
	tracee_close(&t);
	if (fd != -1)
		close(fd);
	stop();
	unlink(injpath);
	dtt_dtd_fini(&dd, true);
}

/*
 * A child that plays a traced process: waits for the go byte, writes n
 * records, waits until dtd dispatched them, exits 0.
 */
static pid_t
spawn_tracee(int n, int *gofd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	fflush(stdout);
	if ((pid = fork()) != 0) {
		close(p[0]);
		*gofd = p[1];
		return pid;
	}
	close(p[1]);
	{
		struct tracee t;
		uint64_t base;
		int i;

		if (read(p[0], &c, 1) != 1 || tracee_open(&t) != 0)
			_exit(2);
		base = dispatched();
		for (i = 0; i < n; i++)
			tracee_put(&t, 0, 5000 + i);
		_exit(wait_dispatched(base, (uint64_t)n) ? 0 : 3);
	}
}

static void
run_abi14(const char *client)
{
	char *extra[] = { "--abi", "1.14", NULL };
	char pidarg[16], line[256], *argv[5];
	struct tracee t = { .sock = -1 };
	FILE *out = NULL;
	pid_t kid, cpid = -1;
	uint64_t base;
	int gofd = -1, status, i;
	bool ready;

	dtt_tag("abi14");
	if (dtt_dtd_init(&dd, "udt-abi14") == -1) {
		dtt_check(false, "a temporary directory");
		return;
	}
	if (start("abi14", extra) != 0)
		goto out;
	if ((kid = spawn_tracee(5, &gofd)) == -1) {
		dtt_check(false, "fork: %s", strerror(errno));
		goto out;
	}
	snprintf(pidarg, sizeof(pidarg), "%d", (int)kid);
	argv[0] = (char *)client;
	argv[1] = dd.dd_dev;
	argv[2] = pidarg;
	argv[3] = "5";
	argv[4] = NULL;
	ready = false;
	if ((out = st_spawn_out(argv, &cpid)) != NULL)
		while (fgets(line, sizeof(line), out) != NULL) {
			if ((ready = strcmp(line, "ready\n") == 0))
				break;
			line[strcspn(line, "\n")] = '\0';
			dtt_check(strncmp(line, "ok", 2) == 0, "client: %s",
			    line);
		}
	if (!dtt_check(ready, "the 1.14 client records, filtered on pid %s",
	    pidarg))
		goto kill;
	/* Ours first, in time: a filter that let them through shows. */
	if (!dtt_check(tracee_open(&t) == 0, "our own tracee's ring"))
		goto kill;
	base = dispatched();
	for (i = 0; i < 5; i++)
		tracee_put(&t, 0, 4000 + i);
	dtt_check(wait_dispatched(base, 5), "5 events of pid %d dispatched",
	    (int)getpid());
	dtt_check(write(gofd, "g", 1) == 1, "the child tracee writes");
	status = dtt_wait(kid, 20000);
	dtt_check(dtt_exited0(status), "5 events of pid %d dispatched",
	    (int)kid);
	kid = -1;
	while (fgets(line, sizeof(line), out) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		dtt_check(strncmp(line, "ok", 2) == 0, "client: %s", line);
	}
kill:
	if (gofd != -1)
		close(gofd);
	if (kid > 0)
		dtt_stop(kid, SIGKILL, 5000);
	if (out != NULL)
		fclose(out);
	if (cpid > 0)
		dtt_check(dtt_exited0(dtt_wait(cpid, 20000)),
		    "the 1.14 client exited 0");
out:
	tracee_close(&t);
	stop();
	dtt_dtd_fini(&dd, true);
}

int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_test inject|strict|abi14 DTD "
		    "[CLIENT14]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	dtd_path = argv[2];
	if (strcmp(argv[1], "inject") == 0)
		run_inject();
	else if (strcmp(argv[1], "strict") == 0)
		run_strict();
	else if (strcmp(argv[1], "abi14") == 0 && argc == 4)
		run_abi14(argv[3]);
	else
		return 2;
	return dtt_done();
}
