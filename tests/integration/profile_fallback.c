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
 * profile_fallback DTD DTRUN SPIN
 *
 * The profile provider's timer fallback end to end (dtd --profile timer):
 * the fallback mode yields user stacks for the same program the perf
 * tests profile.  profile_spin, pinned to one CPU and run under the
 * preload library, spins in profile_spin_here() without entering a hook;
 * two opens record profile at 10 ms and 20 ms of CPU time for about
 * 1.5 s.  Every sample must name the tracee (pid, tid, comm), carry a
 * user stack whose innermost frame is in profile_spin_here() (most of
 * them) and no kernel stack, come on the tracee's CPU, stamped inside
 * the window, at the rate of the CPU time it used (within 30%), with
 * nothing dropped; after DTIOCRECORD 0 the tracee's timers go away and
 * nothing more arrives.  dtd must say it runs in timer mode.
 *
 * Then profile_spin family, started while profile records, spins in
 * short-lived threads (one of each pair leaves by pthread_exit) and in
 * fork children: it must exit 0, and samples must come from many of its
 * threads and from its children, most in profile_spin_here.
 *
 * Then a fake tracee (this process, through the ingest socket) commits
 * profile sample records, valid ones and ones broken in one way each:
 * exactly the valid ones must arrive, on the CPU they name, thinned for
 * an open with a longer period, with missed periods counted as skipped
 * ticks, and every broken one counted as garbage.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "profile_itest.h"
#include "syscall_util.h"

#define PERIOD_NS	10000000ULL	/* 100 Hz of CPU time */
#define PERIOD2_NS	20000000ULL	/* the second open's */
#define WINDOW_NS	1500000000ULL
#define QUIET_MS	500		/* read after stop: nothing comes */
#define TIMERS_MS	5000		/* the tracee's timers must go */
#define READ_MS		2000		/* a recording open gets samples */
#define COLLECT_MAX	4096		/* samples kept per open */
#define FAMILY_NS	5000000ULL	/* 200 Hz for the threads' test */

/* The file's text, whole, in buf; 0 or -1. */
static int
slurp(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* How many POSIX timers pid has (/proc/PID/timers), -1 if unknown. */
static int
ntimers(pid_t pid)
{
	char path[64], buf[8192], *p;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/timers", (int)pid);
	if (slurp(path, buf, sizeof(buf)) == -1)
		return -1;
	for (p = buf; (p = strstr(p, "ID:")) != NULL; p += 3)
		n++;
	return n;
}

/* Poll until pid has want timers (or none, want 0), at most ms. */
static int
wait_timers(pid_t pid, bool some, unsigned int ms)
{
	struct timespec tick = { 0, 5000000 };
	unsigned int waited;
	int n = -1;

	for (waited = 0; waited <= ms; waited += 5) {
		n = ntimers(pid);
		if (n < 0 || (some ? n > 0 : n == 0))
			return n;
		nanosleep(&tick, NULL);
	}
	return n;
}

/* The last CPU we may run on: the tracee is pinned there. */
static int
last_cpu(void)
{
	cpu_set_t set;
	int i, cpu = -1;

	if (sched_getaffinity(0, sizeof(set), &set) == -1)
		return -1;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;
	return cpu;
}

struct tally {
	size_t		t_n;		/* samples */
	size_t		t_who;		/* with the tracee's pid/tid/comm */
	size_t		t_ustack;	/* with a user stack */
	size_t		t_inspin;	/* innermost in profile_spin_here */
	size_t		t_main;		/* next frame in main */
	size_t		t_kstack;	/* with a kernel stack */
	size_t		t_cpu;		/* on the tracee's CPU */
	size_t		t_time;		/* stamped inside the window */
	size_t		t_pbn;		/* of profile:hz:97 */
};

/* The comm the kernel gives the program: its file name, 15 chars. */
static char	spin_comm[16];

static void
tally(struct tally *t, const struct pt_evs *e, pid_t pid, uint32_t pbn,
    int cpu, uint64_t spin, uint64_t spinsz, uint64_t mainpc,
    uint64_t mainsz, uint64_t t0, uint64_t t1)
{
	const struct dt_evt *ev;
	uint64_t ns;
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < e->pe_n; i++) {
		ev = &e->pe_evs[i];
		t->t_n++;
		if (ev->dtev_pid == pid && ev->dtev_tid == pid &&
		    strcmp(ev->dtev_comm, spin_comm) == 0)
			t->t_who++;
		else if (t->t_n - t->t_who <= 3)
			printf("# sample of pid %d tid %d comm %s\n",
			    ev->dtev_pid, ev->dtev_tid, ev->dtev_comm);
		if (ev->dtev_ustack.st_count > 0 &&
		    ev->dtev_ustack.st_count <= STACKTRACE_MAX)
			t->t_ustack++;
		if (ev->dtev_ustack.st_count >= 1 &&
		    ev->dtev_ustack.st_pc[0] >= spin &&
		    ev->dtev_ustack.st_pc[0] < spin + spinsz)
			t->t_inspin++;
		if (ev->dtev_ustack.st_count >= 2 &&
		    ev->dtev_ustack.st_pc[1] >= mainpc &&
		    ev->dtev_ustack.st_pc[1] < mainpc + mainsz)
			t->t_main++;
		if (ev->dtev_kstack.st_count != 0)
			t->t_kstack++;
		if ((int)ev->dtev_cpu == cpu)
			t->t_cpu++;
		ns = pt_evt_ns(ev);
		if (ns >= t0 && ns <= t1)
			t->t_time++;
		if (ev->dtev_pbn == pbn)
			t->t_pbn++;
	}
}

/*
 * A traced process's handshake, done by hand: the ring dtd hands out,
 * mapped read-write, and the welcome's flags.  NULL on failure.
 */
static struct udt_ring_hdr *
fake_attach(const char *sock, uint32_t nprobes, uint32_t *flags)
{
	struct udt_welcome w;
	struct udt_ring_hdr *ring;
	int fd, fds[2];

	if ((fd = dtt_tracee_hello(sock, nprobes, &w, fds)) == -1)
		return NULL;
	ring = dtt_ring_map(fds[0], &w);
	*flags = w.uw_flags;
	close(fds[0]);
	close(fds[1]);
	close(fd);
	return ring;
}

/* A valid sample: cpu, missed periods, the period it was taken at. */
static void
fake_sample(struct udt_rec *r, unsigned int cpu, int64_t missed,
    int64_t period)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(r, 0, sizeof(*r));
	r->ur_probe = UDT_PROBE_PROFILE;
	r->ur_flags = UDT_R_PROF | UDT_R_COMM | UDT_R_STACK;
	r->ur_nframes = 3;
	r->ur_cpu = cpu;
	r->ur_tid = (int32_t)syscall(SYS_gettid);
	r->ur_sec = ts.tv_sec;
	r->ur_nsec = ts.tv_nsec;
	r->ur_args[0] = missed;
	r->ur_args[1] = period;
	memcpy(r->ur_comm, "fake", 5);
	r->ur_stack[0] = 0x1000;
	r->ur_stack[1] = 0x2000;
	r->ur_stack[2] = 0x3000;
}

/* Break r in way k (1..NBROKEN); 0 leaves it valid. */
#define NBROKEN	15
static void
fake_break(struct udt_rec *r, int k)
{
	switch (k) {
	case 1: r->ur_probe = 0; break;			/* a syscall's */
	case 2: r->ur_flags &= ~UDT_R_PROF; break;
	case 3: r->ur_flags |= UDT_R_ARGS; break;
	case 4: r->ur_flags |= UDT_R_RET; break;
	case 5: r->ur_error = 1; break;
	case 6: r->ur_args[0] = -1; break;
	case 7: r->ur_args[0] = 1 << 24; break;		/* absurd miss */
	case 8: r->ur_args[1] = 1000; break;		/* below 200 us */
	case 9: r->ur_args[1] = 0; break;
	case 10: r->ur_args[2] = 5; break;
	case 11: r->ur_cpu = 100000; break;
	case 12: r->ur_nframes = UDT_STACK_MAX + 1; break;
	case 13: r->ur_nframes = 0; break;		/* STACK set */
	case 14: r->ur_flags |= 0x40; break;
	case 15: r->ur_tid = 0; break;
	}
}

/*
 * The hostile tracee: opens at 10 and 30 ms; 30 valid samples on CPU 0
 * at 10 ms (the first one missed 2 periods) and NBROKEN broken ones
 * between them.  The 10 ms open gets all 30 and 2 skipped ticks; the
 * 30 ms open one per 30 ms of the 320 ms they stand for: 10, none
 * skipped; dtd counts NBROKEN more garbage.
 */
static void
hostile(struct dtt_dtd *dd, uint32_t pbn)
{
	struct dtioc_probe_info *pi;
	struct udt_ring_hdr *ring;
	struct udt_stats us0, us1;
	struct dtioc_stat st[2];
	struct udt_rec rec, *slot;
	struct dt_evt evs[64];
	uint32_t nsys = 0, flags = 0;
	uint64_t ticket = 0;
	size_t i, npi;
	long got[2] = { 0, 0 }, bad = 0, r;
	int fds[2] = { -1, -1 }, k, j;
	pid_t self = getpid();
	char comm[32];
	FILE *f;

	dtt_tag("hostile");
	/* The comm its records claim ("fake") is replaced by dtd's reading. */
	comm[0] = '\0';
	if ((f = fopen("/proc/thread-self/comm", "re")) != NULL) {
		if (fgets(comm, sizeof(comm), f) == NULL)
			comm[0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	for (k = 0; k < 2; k++)
		if (!dtt_check((fds[k] = dtt_open(dd->dd_dev)) != -1,
		    "open %d", k))
			goto out;
	if (!dtt_check((pi = dtt_plist(fds[0], &npi)) != NULL, "probe list"))
		goto out;
	for (i = 0; i < npi; i++)
		if (strcmp(pi[i].dtpi_prov, "syscall") == 0)
			nsys++;
	free(pi);
	if (!dtt_check(dtt_enable(fds[0], pbn, DTEVT_EXECNAME | DTEVT_USTACK,
	    PERIOD_NS) == 0 && dtt_enable(fds[1], pbn, DTEVT_EXECNAME |
	    DTEVT_USTACK, 3 * PERIOD_NS) == 0 && dtt_record(fds[0], 1) == 0 &&
	    dtt_record(fds[1], 1) == 0, "recording at 10 and 30 ms"))
		goto out;
	/* Fetched first: argument evaluation order is unspecified. */
	memset(&us0, 0, sizeof(us0));
	r = st_ingest_stats(dd->dd_sock, &us0);
	if (!dtt_check(r == 0,
	    "ingest counters: %llu records, %llu garbage so far",
	    (unsigned long long)us0.us_records,
	    (unsigned long long)us0.us_garbage))
		goto out;
	dtt_check(us0.us_garbage == 0 && us0.us_lost == 0,
	    "the real tracee's samples were all valid, none lost");
	ring = fake_attach(dd->dd_sock, nsys, &flags);
	if (!dtt_check(ring != NULL && (flags & UDT_W_PTIMER),
	    "fake tracee attached, told to sample (flags %#x)", flags))
		goto out;
	for (k = 0; k < 30 + NBROKEN; k++) {
		j = k % 3 == 2 && k / 3 < NBROKEN ? k / 3 + 1 : 0;
		fake_sample(&rec, 0, k == 0 ? 2 : 0, (int64_t)PERIOD_NS);
		fake_break(&rec, j);
		slot = (struct udt_rec *)(void *)((char *)ring +
		    UDT_RING_HDRSIZE + (ticket % ring->rh_nslots) *
		    UDT_SLOT_SIZE);
		memcpy((char *)slot + 8, (char *)&rec + 8, sizeof(rec) - 8);
		__atomic_store_n(&ring->rh_head, ticket + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->ur_seq, ticket + 1, __ATOMIC_RELEASE);
		ticket++;
	}
	for (k = 0; k < 2; k++) {
		long want = k == 0 ? 30 : 10;

		while (got[k] < want &&
		    (r = dtt_read(fds[k], evs, 64, 10000)) > 0) {
			for (j = 0; j < r; j++)
				if (evs[j].dtev_pid != self ||
				    evs[j].dtev_cpu != 0 ||
				    evs[j].dtev_pbn != pbn ||
				    strcmp(evs[j].dtev_comm, comm) != 0 ||
				    evs[j].dtev_ustack.st_count != 3 ||
				    evs[j].dtev_ustack.st_pc[1] != 0x2000 ||
				    evs[j].dtev_kstack.st_count != 0)
					bad++;
			got[k] += r;
		}
		r = dtt_read(fds[k], evs, 64, QUIET_MS);
		dtt_check(got[k] == want && r == -1 && errno == ETIMEDOUT,
		    "%s open: %ld samples, %ld wanted, then nothing",
		    k == 0 ? "10 ms" : "30 ms", got[k], want);
		if (dtt_stats(fds[k], &st[k]) != 0)
			memset(&st[k], 0xff, sizeof(st[k]));
	}
	dtt_check(bad == 0 && comm[0] != '\0', "each names us, CPU 0, our "
	    "comm %s (not the \"fake\" written), its stack (%ld did not)",
	    comm, bad);
	dtt_check(st[0].dtst_skiptick == 2 && st[1].dtst_skiptick == 0,
	    "skipped ticks: %llu at 10 ms (2), %llu at 30 ms (0)",
	    (unsigned long long)st[0].dtst_skiptick,
	    (unsigned long long)st[1].dtst_skiptick);
	memset(&us1, 0, sizeof(us1));
	r = st_ingest_stats(dd->dd_sock, &us1);
	dtt_check(r == 0 && us1.us_garbage - us0.us_garbage == NBROKEN &&
	    us1.us_records - us0.us_records == 30,
	    "ingest: %llu more records (30), %llu more garbage (%d)",
	    (unsigned long long)(us1.us_records - us0.us_records),
	    (unsigned long long)(us1.us_garbage - us0.us_garbage), NBROKEN);
	munmap(ring, UDT_RING_SIZE(ring->rh_nslots));
out:
	for (k = 0; k < 2; k++)
		if (fds[k] != -1)
			close(fds[k]);
	dtt_tag(NULL);
}

/*
 * Read both opens in turn until the realtime deadline, each read under
 * dtt_read()'s watchdog, so a fallback that sends nothing fails here
 * instead of hanging.  0 or an errno.
 */
static int
collect(const int *fds, struct pt_evs *evs, uint64_t deadline)
{
	long r;
	int k;

	for (k = 0; k < 2; k++) {
		evs[k].pe_cap = COLLECT_MAX;
		evs[k].pe_n = 0;
		if ((evs[k].pe_evs = calloc(COLLECT_MAX,
		    sizeof(struct dt_evt))) == NULL)
			return ENOMEM;
	}
	while (dtt_clock_ns(CLOCK_REALTIME) < deadline) {
		for (k = 0; k < 2; k++) {
			if (evs[k].pe_n == evs[k].pe_cap)
				return ENOSPC;
			r = dtt_read(fds[k], evs[k].pe_evs + evs[k].pe_n,
			    evs[k].pe_cap - evs[k].pe_n, READ_MS);
			if (r < 0)
				return errno;
			evs[k].pe_n += (size_t)r;
		}
	}
	return 0;
}

/* Whether v is among the n in set; if not and there is room, add it. */
static bool
seen(int32_t *set, size_t *n, size_t max, int32_t v)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (set[i] == v)
			return true;
	if (*n < max)
		set[(*n)++] = v;
	return false;
}

/*
 * profile_spin MODE ARG under dtrun, past its first line: the run-time
 * addresses of its spin function and of main.  Its stdout, open while
 * it runs, or NULL (*pidp then -1, or a child the caller stops).
 */
static FILE *
spin_run(const char *dtrun, const char *sock, const char *spin,
    const char *mode, const char *arg, pid_t *pidp, uint64_t *spin_rt,
    uint64_t *main_rt)
{
	char *argv[] = { (char *)dtrun, "-s", (char *)sock, (char *)spin,
	    (char *)mode, (char *)arg, NULL };
	char line[128];
	unsigned long a, b;
	FILE *out;

	if ((out = st_spawn_out(argv, pidp)) == NULL)
		return NULL;
	if (fgets(line, sizeof(line), out) == NULL ||
	    sscanf(line, "%lx %lx", &a, &b) != 2) {
		fclose(out);
		return NULL;
	}
	*spin_rt = a;
	*main_rt = b;
	return out;
}

/*
 * Threads and fork children of a traced program, sampled while profile
 * was already recording when it started: the handshake hands over the
 * period, the pthread_create hook arms new threads, the atfork handler
 * a new watcher in each child.  The clock_gettime calls each spinning
 * thread makes (CPU time: the vDSO enters the kernel) are recorded too:
 * a thread the hook wrapped is still traced, in all-calls mode
 * (profile-fallback-allcalls) dispatched again after its clone went
 * through undispatched.
 */
static void
family(struct dtt_dtd *dd, uint32_t pbn, const char *dtrun,
    const char *spin, uint64_t spin_sz)
{
	struct dt_evt *evs = NULL;
	int32_t tids[512], pids[512], ctids[512];
	size_t ntids = 0, npids = 0, nctids = 0, n = 0, ns = 0, inspin = 0;
	size_t comm = 0, untraced = 0, i, k;
	uint64_t spin_rt = 0, main_rt = 0;
	uint32_t cg = 0;
	FILE *out = NULL;
	int fd = -1, status = -1;
	long r;
	pid_t pid = -1;

	dtt_tag("family");
	if (!dtt_check((fd = dtt_open(dd->dd_dev)) != -1, "open") ||
	    !dtt_check((evs = calloc(COLLECT_MAX, sizeof(*evs))) != NULL,
	    "memory") ||
	    /* OpenBSD's number: clock_gettime is sys%87. */
	    !dtt_check((cg = dtt_probe(fd, "syscall", "sys%87", "entry")) !=
	    0, "syscall:clock_gettime:entry exists") ||
	    !dtt_check(dtt_enable(fd, pbn, DTEVT_EXECNAME | DTEVT_USTACK,
	    FAMILY_NS) == 0 && dtt_enable(fd, cg, DTEVT_EXECNAME, 0) == 0 &&
	    dtt_record(fd, 1) == 0, "recording at %llu ns, and clock_gettime, "
	    "before the program starts", (unsigned long long)FAMILY_NS))
		goto out;
	out = spin_run(dtrun, dd->dd_sock, spin, "family", "2", &pid,
	    &spin_rt, &main_rt);
	if (!dtt_check(out != NULL, "profile_spin family runs"))
		goto out;
	/* Until it exits; its children are gone by then. */
	while (n < COLLECT_MAX) {
		r = dtt_read(fd, evs + n, COLLECT_MAX - n, READ_MS);
		if (r < 0)
			break;
		n += (size_t)r;
		if ((status = dtt_wait(pid, 0)) != -1) {
			pid = -pid;
			break;
		}
	}
	if (pid > 0)
		status = dtt_wait(pid, DTT_EXIT_MS);
	dtt_check(status != -1 && dtt_exited0(status), "it exited 0 (%#x)",
	    status);
	pid = pid < 0 ? -pid : pid;
	dtt_record(fd, 0);
	while (n < COLLECT_MAX &&
	    (r = dtt_read(fd, evs + n, COLLECT_MAX - n, QUIET_MS)) > 0)
		n += (size_t)r;
	for (i = 0; i < n; i++) {
		const struct dt_evt *ev = &evs[i];

		if (ev->dtev_pbn == cg) {
			if (ev->dtev_pid == pid)
				seen(ctids, &nctids, 512, ev->dtev_tid);
			continue;
		}
		ns++;
		if (ev->dtev_pid == pid)
			seen(tids, &ntids, 512, ev->dtev_tid);
		seen(pids, &npids, 512, ev->dtev_pid);
		if (strcmp(ev->dtev_comm, spin_comm) == 0)
			comm++;
		if (ev->dtev_ustack.st_count >= 1 &&
		    ev->dtev_ustack.st_pc[0] >= spin_rt &&
		    ev->dtev_ustack.st_pc[0] < spin_rt + spin_sz)
			inspin++;
	}
	/*
	 * Every thread it started spun, timing its CPU time: its calls
	 * seen.  The main thread only starts them.
	 */
	for (i = 0; i < ntids; i++) {
		if (tids[i] == pid)
			continue;
		for (k = 0; k < nctids && ctids[k] != tids[i]; k++)
			continue;
		untraced += k == nctids;
	}
	dtt_check(ntids > 1 && untraced == 0, "each of the %zu threads it "
	    "started and that were sampled has its clock_gettime calls "
	    "recorded (%zu has not)", ntids - 1, untraced);
	dtt_check(ns > 0 && comm == ns, "%zu samples, %zu named %s", ns, comm,
	    spin_comm);
	/* Two rounds at least, however loaded the machine. */
	dtt_check(ntids >= 4, "from %zu of its threads", ntids);
	dtt_check(npids >= 3, "from %zu processes: it and its fork children",
	    npids);
	dtt_check(inspin * 10 >= ns * 9, "%zu of %zu user stacks start in "
	    "profile_spin_here", inspin, ns);
out:
	if (out != NULL)
		fclose(out);
	if (pid > 0 && status == -1)
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	if (fd != -1)
		close(fd);
	free(evs);
	dtt_tag(NULL);
}

/* The checks on one open's samples; expect from the CPU time used. */
static void
check_open(const char *name, const struct tally *t, double expect)
{
	dtt_tag(name);
	dtt_check(t->t_n > 0 && t->t_pbn == t->t_n,
	    "%zu samples of profile:hz:97", t->t_n);
	dtt_check(t->t_who == t->t_n, "%zu of %zu name the tracee "
	    "(pid, tid, comm %s)", t->t_who, t->t_n, spin_comm);
	dtt_check(t->t_ustack == t->t_n, "%zu of %zu have a user stack",
	    t->t_ustack, t->t_n);
	dtt_check(t->t_inspin * 10 >= t->t_n * 9, "%zu of %zu user stacks "
	    "start in profile_spin_here", t->t_inspin, t->t_n);
	dtt_check(t->t_main * 10 >= t->t_n * 8, "%zu of %zu return into main "
	    "next", t->t_main, t->t_n);
	dtt_check(t->t_kstack == 0, "no kernel stacks (%zu)", t->t_kstack);
	dtt_check(t->t_cpu == t->t_n, "%zu of %zu on the tracee's CPU",
	    t->t_cpu, t->t_n);
	dtt_check(t->t_time == t->t_n, "%zu of %zu stamped inside the "
	    "recording window", t->t_time, t->t_n);
	dtt_check(t->t_n >= expect * 0.7 && t->t_n <= expect * 1.3,
	    "%zu samples for %.1f periods of CPU time (within 30%%)",
	    t->t_n, expect);
	dtt_tag(NULL);
}

int
main(int argc, char *argv[])
{
	char *extra[] = { "--profile", "timer", NULL };
	char errbuf[512], log[8192];
	struct dtt_dtd dd;
	struct pt_evs evs[2];
	struct tally ta[2];
	struct dtioc_stat st[2];
	struct dt_evt late[256];
	uint64_t spin_v, spin_sz, main_v, main_sz, spin_rt = 0, main_rt = 0;
	uint64_t cpu0, cpu1, t0, t1, tstop, bias;
	cpu_set_t set;
	FILE *out = NULL;
	int fds[2] = { -1, -1 }, cpu, i, n;
	long nlate[2] = { 0, 0 }, r;
	size_t badlate = 0;
	uint32_t pbn;
	pid_t pid = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: profile_fallback DTD DTRUN SPIN\n");
		return 2;
	}
	memset(evs, 0, sizeof(evs));
	snprintf(spin_comm, sizeof(spin_comm), "%s", strrchr(argv[3], '/') !=
	    NULL ? strrchr(argv[3], '/') + 1 : argv[3]);
	if (!dtt_check(pt_elf_func(argv[3], "profile_spin_here", &spin_v,
	    &spin_sz) == 0 && pt_elf_func(argv[3], "main", &main_v,
	    &main_sz) == 0, "symbols of %s", argv[3]))
		return dtt_done();
	if (!dtt_check(dtt_dtd_init(&dd, "ptimer") == 0, "temporary directory"))
		return dtt_done();
	errbuf[0] = '\0';
	r = dtt_dtd_start(&dd, argv[1], extra, errbuf, sizeof(errbuf));
	if (!dtt_check(r > 0, "dtd --profile timer started (%s)", errbuf))
		goto out;
	dtt_check(slurp(dd.dd_err, log, sizeof(log)) == 0 &&
	    strstr(log, "dtd: profile: timer mode") != NULL &&
	    strstr(log, "will not fire") == NULL,
	    "dtd says it runs in timer mode");

	for (i = 0; i < 2; i++)
		if (!dtt_check((fds[i] = dtt_open(dd.dd_dev)) != -1,
		    "open %s", dd.dd_dev))
			goto out;
	pbn = dtt_probe(fds[0], "profile", "hz", "97");
	if (!dtt_check(pbn != 0, "profile:hz:97 is probe %u", pbn))
		goto out;

	/* The tracee, pinned to one CPU (inherited), under the library. */
	if (!dtt_check((cpu = last_cpu()) >= 0, "a CPU to pin to"))
		goto out;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	{
		cpu_set_t old;

		sched_getaffinity(0, sizeof(old), &old);
		sched_setaffinity(0, sizeof(set), &set);
		out = spin_run(argv[2], dd.dd_sock, argv[3], "spin", "30",
		    &pid, &spin_rt, &main_rt);
		sched_setaffinity(0, sizeof(old), &old);
	}
	/* Its first line: it is past the constructor, spinning next. */
	if (!dtt_check(out != NULL, "profile_spin %d runs under dtrun on "
	    "CPU %d", (int)pid, cpu))
		goto out;
	bias = spin_rt - spin_v;
	dtt_check(main_rt - main_v == bias, "one load bias for both symbols");
	n = ntimers(pid);
	dtt_check(n == 0, "no timers in the tracee before recording (%d)",
	    n);

	if (!dtt_check(dtt_enable(fds[0], pbn, DTEVT_EXECNAME | DTEVT_USTACK |
	    DTEVT_KSTACK, PERIOD_NS) == 0 && dtt_enable(fds[1], pbn,
	    DTEVT_EXECNAME | DTEVT_USTACK | DTEVT_KSTACK, PERIOD2_NS) == 0,
	    "profile enabled at %llu and %llu ns",
	    (unsigned long long)PERIOD_NS, (unsigned long long)PERIOD2_NS))
		goto out;
	cpu0 = dtt_cpu_ns(pid);
	t0 = dtt_clock_ns(CLOCK_REALTIME);
	if (!dtt_check(dtt_record(fds[0], 1) == 0 && dtt_record(fds[1], 1) ==
	    0, "recording"))
		goto out;
	n = wait_timers(pid, true, TIMERS_MS);
	dtt_check(n > 0, "the busy tracee armed its timers (%d)", n);
	r = collect(fds, evs, dtt_clock_ns(CLOCK_REALTIME) + WINDOW_NS);
	dtt_check(r == 0, "read both opens for %.1f s: %s",
	    (double)WINDOW_NS / NSEC_PER_SEC, strerror((int)r));
	dtt_record(fds[0], 0);
	dtt_record(fds[1], 0);
	tstop = dtt_clock_ns(CLOCK_REALTIME);
	cpu1 = dtt_cpu_ns(pid);
	t1 = tstop;

	/* What was in the rings at RECORD 0 may still be read; then none. */
	for (i = 0; i < 2; i++) {
		while ((r = dtt_read(fds[i], late, 256, QUIET_MS)) > 0) {
			for (n = 0; n < r; n++)
				if (pt_evt_ns(&late[n]) > tstop)
					badlate++;
			nlate[i] += r;
		}
		dtt_check(r == -1 && errno == ETIMEDOUT, "open %d: nothing more "
		    "for %d ms after RECORD 0", i, QUIET_MS);
	}
	dtt_check(badlate == 0, "%ld read after RECORD 0, all taken before "
	    "it (%zu after)", nlate[0] + nlate[1], badlate);
	n = wait_timers(pid, false, TIMERS_MS);
	dtt_check(n == 0, "the busy tracee deleted its timers (%d)", n);

	for (i = 0; i < 2; i++)
		if (!dtt_check(dtt_stats(fds[i], &st[i]) == 0, "open %d: "
		    "stats", i))
			goto out;
	tally(&ta[0], &evs[0], pid, pbn, cpu, spin_rt, spin_sz, main_rt,
	    main_sz, t0, t1);
	tally(&ta[1], &evs[1], pid, pbn, cpu, spin_rt, spin_sz, main_rt,
	    main_sz, t0, t1);
	printf("# tracee ran %.3f s of CPU while recording; skipped ticks "
	    "%llu, %llu\n", (double)(cpu1 - cpu0) / NSEC_PER_SEC,
	    (unsigned long long)st[0].dtst_skiptick,
	    (unsigned long long)st[1].dtst_skiptick);
	check_open("10ms", &ta[0], (double)(cpu1 - cpu0) / PERIOD_NS);
	check_open("20ms", &ta[1], (double)(cpu1 - cpu0) / PERIOD2_NS);
	for (i = 0; i < 2; i++)
		dtt_check(st[i].dtst_dropevt == 0 && st[i].dtst_readevt ==
		    (uint64_t)evs[i].pe_n + (uint64_t)nlate[i],
		    "open %d: dropped %llu, read %llu", i,
		    (unsigned long long)st[i].dtst_dropevt,
		    (unsigned long long)st[i].dtst_readevt);
	dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	pid = -1;
	family(&dd, pbn, argv[2], argv[3], spin_sz);
	hostile(&dd, pbn);
out:
	if (out != NULL)
		fclose(out);
	if (pid > 0)
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	for (i = 0; i < 2; i++) {
		if (fds[i] != -1)
			close(fds[i]);
		free(evs[i].pe_evs);
	}
	if (dd.dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped cleanly");
	dtt_dtd_fini(&dd, true);
	return dtt_done();
}
