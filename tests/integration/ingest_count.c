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
 * ingest_count DTD DTRUN TRACEE forge|overflow|nofile|stuck|stuck-busy|
 *     stuck-asleep|lossless|lossless-stopped|lossless-slow
 *
 * The counters tracees report reach every reader's dropevt and
 * recurevt (DTIOCGSTATS), so:
 *
 *   forge	an ordinary user's fake tracee writes huge lost and
 *		recursion counts into its ring's header, again and again;
 *		root's reader must see no more than that tracee's CPU time
 *		could have produced, and dtd count the rest as forged.
 *   overflow	a real tracee's ring overflows while dtd is stopped
 *		(SIGSTOP): every event it generated is read or counted in
 *		dropevt, exactly, and the drops are the ring's losses.
 *   nofile	dtd with 1024 descriptors: one ordinary user's 1000
 *		tracees attach up to that user's cap (a quarter) and the
 *		rest are refused and logged, while another user's tracee
 *		still attaches.
 *   stuck	root's tracee commits records around one it reserved and
 *		never committed (a thread stopped between reserve and
 *		commit): dtd skips that slot after UDT_STUCK_NSEC, and the
 *		reader's dropevt counts it, so read + dropped is every
 *		call made.
 *   stuck-busy	the same slot claimed (udt_wire.h) by a thread that runs
 *		for STUCK_CLAIM_NS, past UDT_STUCK_NSEC, before it commits
 *		(a producer preempted or throttled): dtd waits for it,
 *		every record is read, none dropped.
 *   stuck-asleep
 *		claimed by a thread that sleeps that long (in a handler
 *		that waits, say): skipped after UDT_STUCK_NSEC as an
 *		unclaimed one.
 *   lossless	a reader with DTEVT_LOSSLESS, reading as it comes, gets
 *		every one of a flat-out getppid loop's calls, as many as
 *		the loop counted itself: none lost, in the tracee's ring
 *		or in the reader's.
 *   lossless-stopped
 *		the same with dtd stopped (SIGSTOP): the loop still ends,
 *		within a generous multiple of the tracee's bound
 *		(UDT_WAIT_NSEC), since it waits once, then drops.
 *   lossless-slow
 *		the same with a reader slower than the loop: a small
 *		device ring, a short read every LL_SLOW_PAUSE.  Such a
 *		reader is what a loaded machine makes of btrace; dtd
 *		once held the tracees for 5 ms at a time and then let a
 *		ring's worth through into the reader's full ring, which
 *		cost a read() latency histogram up to a quarter of its
 *		pairs.  Still none lost.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <err.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define FORGE_ROUNDS	50
#define FORGE_STEP	((1u << 24) - 1)	/* under dtd's own step cap */
#define EVENT_NS	10			/* dtd's price of an event */
#define BUDGET_BASE	(1ULL << 20)
#define NWRITES		100000

static struct dtt_dtd	dd;
static uint32_t		nsys;		/* syscall probes */
static uint32_t		getpid_idx;	/* getpid's entry among them */

/* The sum of the ingest stats' forged count, or -1. */
static int64_t
forged(void)
{
	struct udt_stats us;

	return st_ingest_stats(dd.dd_sock, &us) == 0 ? (int64_t)us.us_forged :
	    -1;
}

/*
 * As the user: a fake tracee that claims FORGE_STEP more lost and
 * recursive events of getpid's entry and return (which root records),
 * FORGE_ROUNDS times, each time until
 * dtd has looked (its forged count moved).  Writes its CPU time in ns
 * to the pipe.
 */
static int
forge_child(int wfd)
{
	struct udt_welcome w;
	struct udt_ring_hdr *rh;
	struct rusage ru;
	int64_t f0, f;
	uint64_t cpu;
	uint32_t p;
	int fds[2], sock, r, k;

	if ((sock = dtt_tracee_hello(dd.dd_sock, nsys, &w, fds)) == -1)
		return 1;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 2;
	for (r = 0; r < FORGE_ROUNDS; r++) {
		f0 = forged();
		for (p = getpid_idx; p < getpid_idx + 2; p++) {
			__atomic_add_fetch(&rh->rh_lost[p], FORGE_STEP,
			    __ATOMIC_RELAXED);
			__atomic_add_fetch(&rh->rh_recur[p], FORGE_STEP,
			    __ATOMIC_RELAXED);
		}
		__atomic_add_fetch(&rh->rh_lost_total, 1, __ATOMIC_RELEASE);
		/* dtd's next look, seen in its count (bounded). */
		for (k = 0; k < 100000; k++)
			if ((f = forged()) != f0 || f < 0)
				break;
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
	    1000000000ULL + ((uint64_t)ru.ru_utime.tv_usec +
	    (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
	if (write(wfd, &cpu, sizeof(cpu)) != (ssize_t)sizeof(cpu))
		return 3;
	close(sock);
	return 0;
}

static void
run_forge(int fd, uint32_t pbn)
{
	struct dtt_user du;
	struct dtioc_stat st;
	uint64_t cpu = 0, bound, claimed;
	int64_t fg;
	int p[2], status;
	pid_t pid;

	if (!dtt_check(dtt_user_add(&du) == 0, "a throwaway user %s",
	    du.du_name))
		return;
	if (!dtt_check(dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) == 0 &&
	    dtt_enable(fd, pbn + 1, DTEVT_EXECNAME, 0) == 0 &&
	    dtt_record(fd, 1) == 0, "root records getpid") ||
	    pipe2(p, O_CLOEXEC) != 0)
		goto out;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(p[0]);
		if (dtt_user_become(&du) == -1)
			_exit(255);
		_exit(forge_child(p[1]));
	}
	close(p[1]);
	if (read(p[0], &cpu, sizeof(cpu)) != (ssize_t)sizeof(cpu))
		cpu = 0;
	close(p[0]);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (!dtt_check(dtt_exited0(status), "%s's fake tracee forged its "
	    "counters %d times (status %#x)", du.du_name, FORGE_ROUNDS, status))
		goto out;
	claimed = 4ULL * FORGE_ROUNDS * FORGE_STEP;
	/* Both counters share the budget; a tick of slack for /proc. */
	bound = BUDGET_BASE + (cpu + 10000000ULL) / EVENT_NS;
	if (!dtt_check(dtt_stats(fd, &st) == 0, "DTIOCGSTATS"))
		goto out;
	dtt_check(st.dtst_dropevt + st.dtst_recurevt <= bound,
	    "root's dropevt %llu + recurevt %llu <= %llu, what %llu ns of the "
	    "tracee's CPU pays for (it claimed %llu)",
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)st.dtst_recurevt, (unsigned long long)bound,
	    (unsigned long long)cpu, (unsigned long long)claimed);
	fg = forged();
	dtt_check(fg >= 0 && (uint64_t)fg + bound >= claimed,
	    "dtd counted %lld of them as forged", (long long)fg);
out:
	dtt_user_del(&du);
}

/*
 * The writes, and the tracee's three replies on stdout (ready, done,
 * total), each one write(2) of stdio's, which every call is seen.  The
 * writes and "done" are made while dtd is stopped: at least those past
 * the ring's 32768 slots are lost.
 */
#define NGEN		(NWRITES + 3)

static void
run_overflow(int fd, uint32_t pbn, const char *dtrun, const char *tracee)
{
	char *argv[] = { (char *)dtrun, "-s", dd.dd_sock, (char *)tracee,
	    "loop", "0", NULL };
	struct dt_evt *evs = NULL;
	struct dtioc_stat st;
	struct udt_stats us;
	char line[128];
	long got = 0, n, k, done = 0, total = -1, bad = 0;
	int in[2], out[2], status;
	FILE *tin = NULL, *tout = NULL;
	pid_t pid, r;

	if (!dtt_check(dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) == 0 &&
	    dtt_record(fd, 1) == 0, "root records write's entry") ||
	    (evs = calloc(4096, sizeof(*evs))) == NULL ||
	    pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto out;
	pid = dtt_spawn(argv, NULL, in[0], out[1], -1, -1);
	close(in[0]);
	close(out[1]);
	tin = fdopen(in[1], "w");
	tout = fdopen(out[0], "r");
	if (!dtt_check(pid > 0 && tin != NULL && tout != NULL &&
	    fgets(line, sizeof(line), tout) != NULL &&
	    strcmp(line, "ready\n") == 0, "a tracee ready under dtrun"))
		goto out;
	/*
	 * No drain: the tracee's ring (32768 slots) must overflow.  kill()
	 * returns before every thread of dtd has stopped; its reader may
	 * drain for a while yet (long enough under ASan to take thousands
	 * of events), so wait for the stop to be reported.
	 */
	kill(dd.dd_pid, SIGSTOP);
	while ((r = waitpid(dd.dd_pid, &status, WUNTRACED)) == -1 &&
	    errno == EINTR)
		continue;
	if (!dtt_check(r == dd.dd_pid && WIFSTOPPED(status),
	    "dtd stopped (SIGSTOP reported)"))
		goto out;
	fprintf(tin, "w %d\n", NWRITES);
	fflush(tin);
	if (fgets(line, sizeof(line), tout) != NULL)
		sscanf(line, "done %ld", &done);
	kill(dd.dd_pid, SIGCONT);
	fprintf(tin, "q\n");
	fflush(tin);
	if (fgets(line, sizeof(line), tout) != NULL)
		sscanf(line, "total %ld", &total);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (!dtt_check(done == NWRITES && total == NWRITES &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 10,
	    "%ld writes made while dtd was stopped", total))
		goto out;
	for (;;) {
		if (dtt_stats(fd, &st) != 0)
			break;
		if ((uint64_t)got + st.dtst_dropevt >= NGEN)
			break;
		if ((n = dtt_read(fd, evs, 4096, 10000)) <= 0) {
			/*
			 * The drops may have come during that wait (a
			 * loaded machine): the stats as they are now, not
			 * as they were before it.
			 */
			(void)dtt_stats(fd, &st);
			break;
		}
		for (k = 0; k < n; k++)
			if (evs[k].dtev_pid != pid || evs[k].dtev_pbn != pbn)
				bad++;
		got += n;
	}
	dtt_check(bad == 0 && st_ingest_stats(dd.dd_sock, &us) == 0,
	    "%ld events read, all the tracee's write entries", got);
	dtt_check((uint64_t)got + st.dtst_dropevt == NGEN &&
	    st.dtst_dropevt >= NWRITES + 1 - 32768 &&
	    st.dtst_dropevt == us.us_lost,
	    "generated %d == read %ld + dropped %llu; the drops are the "
	    "ring's %llu lost", NGEN, got,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)us.us_lost);
out:
	if (tin != NULL)
		fclose(tin);
	if (tout != NULL)
		fclose(tout);
	free(evs);
}

#define NLOSSLESS	1000000		/* getppid calls: 122 rings' worth */
/*
 * The slow reader's: a device ring of LL_SLOW_RING, LL_SLOW_READ
 * records a read, a pause of LL_SLOW_PAUSE between reads.  The pause is
 * the behaviour under test (a reader that falls behind), not a wait for
 * something: longer than the 5 ms dtd once held the tracees for, well
 * inside the 40 ms it takes as a reader that stopped (DTI_HOLD_NSEC).
 * About 100k records a second: the loop's calls take a second.
 */
#define NLL_SLOW	50000
#define LL_SLOW_RING	"4096"
#define LL_SLOW_READ	1024
#define LL_SLOW_PAUSE	10000000L	/* ns */
/* The stopped run's: a generous multiple of one bound, not a benchmark. */
#define LL_STOPPED_MAX	(200 * UDT_WAIT_NSEC)

/* Read a line of the tracee's if one is there now: 1, else 0. */
static int
ll_line(FILE *tout, char *line, size_t len)
{
	struct pollfd pfd = { fileno(tout), POLLIN, 0 };

	return poll(&pfd, 1, 0) == 1 && fgets(line, (int)len, tout) != NULL;
}

static void
run_lossless(int fd, uint32_t pbn, const char *dtrun, const char *tracee,
    int stopped, int slow)
{
	const struct timespec pause = { 0, LL_SLOW_PAUSE };
	const long ncalls = slow ? NLL_SLOW : NLOSSLESS;
	const size_t nread = slow ? LL_SLOW_READ : 4096;
	char *argv[] = { (char *)dtrun, "-s", dd.dd_sock, (char *)tracee,
	    "loop", "0", NULL };
	struct dt_evt *evs = NULL;
	struct dtioc_stat st;
	struct udt_stats us;
	char line[128];
	long got = 0, n, k, done = -1, total = -1, bad = 0;
	int in[2], out[2], status;
	FILE *tin = NULL, *tout = NULL;
	uint64_t t0, took;
	pid_t pid, r;

	if (!dtt_check(dtt_enable(fd, pbn, DTEVT_LOSSLESS, 0) == 0 &&
	    dtt_record(fd, 1) == 0, "root records getppid's entry, "
	    "lossless") ||
	    (evs = calloc(4096, sizeof(*evs))) == NULL ||
	    pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto out;
	pid = dtt_spawn(argv, NULL, in[0], out[1], -1, -1);
	close(in[0]);
	close(out[1]);
	tin = fdopen(in[1], "w");
	tout = fdopen(out[0], "r");
	if (!dtt_check(pid > 0 && tin != NULL && tout != NULL &&
	    fgets(line, sizeof(line), tout) != NULL &&
	    strcmp(line, "ready\n") == 0, "a tracee ready under dtrun"))
		goto out;
	if (stopped) {
		/* As ingest-overflow: the stop is reported, then it holds. */
		kill(dd.dd_pid, SIGSTOP);
		while ((r = waitpid(dd.dd_pid, &status, WUNTRACED)) == -1 &&
		    errno == EINTR)
			continue;
		if (!dtt_check(r == dd.dd_pid && WIFSTOPPED(status),
		    "dtd stopped (SIGSTOP reported)"))
			goto out;
	}
	if (!stopped) {
		/*
		 * One call read first: dtd drains a new tracee's ring only
		 * once it has looked at its image (dt_ingest_who.c), which
		 * may take longer than the tracee's bound.
		 */
		fprintf(tin, "g 1\n");
		fflush(tin);
		n = dtt_read(fd, evs, 4096, 10000);
		if (!dtt_check(n == 1 && fgets(line, sizeof(line), tout) !=
		    NULL, "the first call read: dtd drains the tracee"))
			goto out;
		got = n;	/* the loop's total counts it too */
	}
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	fprintf(tin, "g %ld\n", ncalls);
	fflush(tin);
	if (stopped) {
		if (fgets(line, sizeof(line), tout) != NULL)
			sscanf(line, "done %ld", &done);
		took = dtt_clock_ns(CLOCK_MONOTONIC) - t0;
		kill(dd.dd_pid, SIGCONT);
		dtt_check(done == ncalls && took < LL_STOPPED_MAX,
		    "with dtd stopped the loop ended in %llu ms (< %llu: it "
		    "waited once for %llu ms, then dropped)",
		    (unsigned long long)(took / 1000000),
		    (unsigned long long)(LL_STOPPED_MAX / 1000000),
		    (unsigned long long)(UDT_WAIT_NSEC / 1000000));
	} else {
		/* Read while it runs: the reader is the one that keeps up. */
		while (done < 0) {
			if (slow)
				nanosleep(&pause, NULL);
			if ((n = dtt_read(fd, evs, nread, 100)) > 0) {
				for (k = 0; k < n; k++)
					if (evs[k].dtev_pid != pid ||
					    evs[k].dtev_pbn != pbn)
						bad++;
				got += n;
			}
			if (ll_line(tout, line, sizeof(line)))
				sscanf(line, "done %ld", &done);
		}
	}
	fprintf(tin, "q\n");
	fflush(tin);
	if (fgets(line, sizeof(line), tout) != NULL)
		sscanf(line, "total %ld", &total);
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (!dtt_check(total == ncalls + !stopped && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 10, "the loop counted %ld getppid calls",
	    total) || stopped)
		goto out;
	/* The rest: until every call is read, or nothing comes for 2 s. */
	while (got < total) {
		if ((n = dtt_read(fd, evs, 4096, 2000)) <= 0)
			break;
		for (k = 0; k < n; k++)
			if (evs[k].dtev_pid != pid || evs[k].dtev_pbn != pbn)
				bad++;
		got += n;
	}
	if (!dtt_check(dtt_stats(fd, &st) == 0 &&
	    st_ingest_stats(dd.dd_sock, &us) == 0, "DTIOCGSTATS, dtd's stats"))
		goto out;
	dtt_check(bad == 0 && got == total && st.dtst_dropevt == 0,
	    "lossless: read %ld of the loop's %ld calls, %llu dropped "
	    "(%llu of them in the tracee's ring)", got, total,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)us.us_lost);
out:
	if (tin != NULL)
		fclose(tin);
	if (tout != NULL)
		fclose(tout);
	free(evs);
}

#define NOFILE		1024
#define NHOG		1000

/*
 * As user du: a tracee's hello; says y (welcomed) or n on wfd, then
 * holds its ring until rfd reaches EOF.
 */
static int
hog_child(const struct dtt_user *du, int wfd, int rfd, pid_t parent)
{
	struct udt_welcome w;
	int fds[2], sock;
	char c;

	if (dtt_user_become(du) == -1)
		return 255;
	/* Not left behind by a test that died (set after the uid change). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		return 254;
	sock = dtt_tracee_hello(dd.dd_sock, nsys, &w, fds);
	c = sock >= 0 ? 'y' : 'n';
	if (write(wfd, &c, 1) != 1)
		return 1;
	while (read(rfd, &c, 1) == -1 && errno == EINTR)
		continue;
	return 0;
}

/* Fork n tracees of du; count the welcomed ones.  -1 on failure. */
static long
hog_fork(const struct dtt_user *du, long n, const int go[2], pid_t *pids,
    int devfd)
{
	pid_t self = getpid();
	struct pollfd pfd;
	long i, yes = 0, got = 0;
	int done[2];
	char buf[256];
	ssize_t m;

	if (pipe2(done, O_CLOEXEC) != 0)
		return -1;
	fflush(stdout);
	for (i = 0; i < n; i++) {
		if ((pids[i] = fork()) == 0) {
			/* Root's device is not theirs; EOF on go needs go[1]. */
			close(done[0]);
			close(devfd);
			close(go[1]);
			_exit(hog_child(du, done[1], go[0], self));
		}
		if (pids[i] < 0)
			break;
	}
	close(done[1]);
	pfd.fd = done[0];
	pfd.events = POLLIN;
	while (got < i && poll(&pfd, 1, 60000) == 1) {
		if ((m = read(done[0], buf, sizeof(buf))) <= 0)
			break;
		got += m;
		while (m-- > 0)
			yes += buf[m] == 'y';
	}
	close(done[0]);
	return got == n ? yes : -1;
}

static void
run_nofile(const char *dtd)
{
	struct dtioc_probe_info *pi = NULL;
	struct dtt_user hog, other;
	struct udt_stats us;
	struct rlimit rl = { NOFILE, NOFILE };
	char *args[] = { "--no-ksyms", NULL };
	char err[256], log[65536];
	pid_t *pids = NULL, opid;
	long yes = -1, oyes = -1, i;
	size_t npi, m;
	int go[2] = { -1, -1 }, fd = -1, lfd;
	ssize_t n;

	hog.du_name[0] = other.du_name[0] = '\0';
	if (!dtt_check(dtt_user_add(&hog) == 0 && dtt_user_add(&other) == 0,
	    "two throwaway users %s and %s", hog.du_name, other.du_name) ||
	    (pids = calloc(NHOG, sizeof(*pids))) == NULL)
		goto out;
	/* dtd inherits it, and can raise its soft limit no further. */
	if (!dtt_check(setrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    dtt_dtd_init(&dd, "udt-nofile") == 0 &&
	    dtt_dtd_start(&dd, dtd, args, err, sizeof(err)) != -1 &&
	    (fd = dtt_open(dd.dd_dev)) != -1 &&
	    (pi = dtt_plist(fd, &npi)) != NULL,
	    "a private dtd with %d descriptors", NOFILE))
		goto out;
	for (i = 0; i < (long)npi; i++)
		nsys += strcmp(pi[i].dtpi_prov, "syscall") == 0;
	if (pipe2(go, O_CLOEXEC) != 0)
		goto out;
	yes = hog_fork(&hog, NHOG, go, pids, fd);
	dtt_check(yes > 0 && yes <= NOFILE / 4, "%s's %d tracees: %ld "
	    "attached, at most a quarter of dtd's descriptors", hog.du_name,
	    NHOG, yes);
	oyes = hog_fork(&other, 1, go, &opid, fd);
	dtt_check(oyes == 1, "%s's tracee still attaches", other.du_name);
	if (st_ingest_stats(dd.dd_sock, &us) != 0)
		memset(&us, 0, sizeof(us));
	dtt_check(us.us_refused >= (uint64_t)(NHOG - yes),
	    "dtd counted %llu refusals", (unsigned long long)us.us_refused);
	close(go[1]);
	go[1] = -1;
	for (i = 0; i < NHOG; i++)
		if (pids[i] > 0)
			dtt_wait(pids[i], DTT_EXIT_MS);
	if (oyes >= 0)
		dtt_wait(opid, DTT_EXIT_MS);
	/* The cap is in dtd's log. */
	if ((lfd = open(dd.dd_err, O_RDONLY | O_CLOEXEC)) != -1) {
		for (m = 0; m < sizeof(log) - 1; m += (size_t)n)
			if ((n = read(lfd, log + m, sizeof(log) - 1 - m)) <= 0)
				break;
		log[m] = '\0';
		close(lfd);
		dtt_check(strstr(log, "the most one user may") != NULL,
		    "dtd logged the cap");
	}
out:
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (fd >= 0)
		close(fd);
	if (dd.dd_pid > 0)
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped, exit status 0");
	dtt_dtd_fini(&dd, true);
	dtt_user_del(&hog);
	dtt_user_del(&other);
	free(pids);
	free(pi);
}

static struct udt_rec *
stuck_slot(struct udt_ring_hdr *rh, uint64_t t)
{
	return (struct udt_rec *)(void *)((char *)rh + UDT_RING_HDRSIZE +
	    (t % rh->rh_nslots) * UDT_SLOT_SIZE);
}

/*
 * Record t of getpid's entry into rh's slot, committed or not; its
 * ticket reserved first (head), as a producer's CAS does.
 */
static void
stuck_rec(struct udt_ring_hdr *rh, uint64_t t, int commit, int head)
{
	struct udt_rec *s = stuck_slot(rh, t);
	struct udt_rec r;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(&r, 0, sizeof(r));
	r.ur_probe = (uint16_t)getpid_idx;
	r.ur_flags = UDT_R_COMM;
	r.ur_tid = gettid();
	r.ur_sec = ts.tv_sec;
	r.ur_nsec = ts.tv_nsec;
	snprintf(r.ur_comm, sizeof(r.ur_comm), "stuck");
	memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
	if (head)
		__atomic_store_n(&rh->rh_head, t + 1, __ATOMIC_RELEASE);
	if (commit)
		__atomic_store_n(&s->ur_seq, t + 1, __ATOMIC_RELEASE);
}

/*
 * Root's tracee, by hand: STUCK_BEFORE records, one reserved and never
 * committed (STUCK_LEFT), or claimed by a thread that runs (STUCK_BUSY)
 * or sleeps (STUCK_ASLEEP) for STUCK_CLAIM_NS and then commits it, one
 * more; then waits for the parent to close the pipe.
 */
#define STUCK_BEFORE	3
#define STUCK_CLAIM_NS	700000000LL	/* past UDT_STUCK_NSEC, well
					   within UDT_STUCK_MAX_NSEC */
enum { STUCK_LEFT, STUCK_BUSY, STUCK_ASLEEP };

struct stuck_claim {
	struct udt_ring_hdr	*sc_rh;
	uint64_t		 sc_t;
	int			 sc_how;
	volatile int		 sc_claimed;
};

static void *
stuck_claimer(void *arg)
{
	struct stuck_claim *sc = arg;
	struct udt_rec *s = stuck_slot(sc->sc_rh, sc->sc_t);
	struct timespec nap = { STUCK_CLAIM_NS / 1000000000LL,
	    STUCK_CLAIM_NS % 1000000000LL };
	uint64_t t0;

	/*
	 * As udt_rec_claim(): tid and probe, then the claim, released; then
	 * the ticket reserved, here and after the claim, not before the
	 * thread was made: a start, or a preemption between the two,
	 * slower than UDT_STUCK_NSEC (a loaded machine) would otherwise
	 * find the slot skipped unclaimed.
	 */
	s->ur_tid = gettid();
	s->ur_probe = (uint16_t)getpid_idx;
	__atomic_store_n(&s->ur_seq, (sc->sc_t + 1) | UDT_SEQ_BUSY,
	    __ATOMIC_RELEASE);
	__atomic_store_n(&sc->sc_rh->rh_head, sc->sc_t + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sc->sc_claimed, 1, __ATOMIC_RELEASE);
	if (sc->sc_how == STUCK_BUSY) {
		t0 = dtt_clock_ns(CLOCK_MONOTONIC);
		while ((long long)(dtt_clock_ns(CLOCK_MONOTONIC) - t0) <
		    STUCK_CLAIM_NS)
			;
	} else
		(void)nanosleep(&nap, NULL);
	stuck_rec(sc->sc_rh, sc->sc_t, 1, 0);
	return NULL;
}

static int
stuck_child(int rfd, int how)
{
	struct stuck_claim sc;
	struct udt_welcome w;
	struct udt_ring_hdr *rh;
	pthread_t th;
	int fds[2], sock;
	uint64_t t;
	char c;

	if ((sock = dtt_tracee_hello(dd.dd_sock, nsys, &w, fds)) == -1)
		return 1;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 2;
	for (t = 0; t < STUCK_BEFORE; t++)
		stuck_rec(rh, t, 1, 1);
	if (how == STUCK_LEFT)
		stuck_rec(rh, t, 0, 1);
	else {
		sc.sc_rh = rh;
		sc.sc_t = t;
		sc.sc_how = how;
		sc.sc_claimed = 0;
		if (pthread_create(&th, NULL, stuck_claimer, &sc) != 0)
			return 3;
		while (!__atomic_load_n(&sc.sc_claimed, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	stuck_rec(rh, ++t, 1, 1);
	if (how != STUCK_LEFT)
		(void)pthread_join(th, NULL);
	(void)read(rfd, &c, 1);
	close(sock);
	return 0;
}

static void
run_stuck(int fd, uint32_t pbn, int how)
{
	struct dt_evt evs[16];
	struct dtioc_stat st;
	uint64_t t0;
	long n, got = 0, k, mine = 0, want, lost;
	int p[2], status;
	pid_t pid;

	/* The claimed slot of a thread that runs is read, late. */
	want = STUCK_BEFORE + (how == STUCK_BUSY ? 2 : 1);
	lost = how == STUCK_BUSY ? 0 : 1;

	if (!dtt_check(dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) == 0 &&
	    dtt_record(fd, 1) == 0, "root records getpid's entry") ||
	    pipe2(p, O_CLOEXEC) != 0)
		return;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(p[1]);
		_exit(stuck_child(p[0], how));
	}
	close(p[0]);
	/*
	 * The skip comes after UDT_STUCK_NSEC, the late commit after
	 * STUCK_CLAIM_NS: well within 8 s.  Read until the records come;
	 * the asleep one's, until 2 s go by with nothing: its late commit,
	 * after its skip, is not read.
	 */
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	while ((mine < want || how == STUCK_ASLEEP) &&
	    dtt_clock_ns(CLOCK_MONOTONIC) - t0 < 8000000000ULL &&
	    (n = dtt_read(fd, evs, 16, 2000)) > 0) {
		got += n;
		for (k = 0; k < n; k++)
			mine += evs[k].dtev_pid == pid;
	}
	close(p[1]);
	status = dtt_wait(pid, DTT_EXIT_MS);
	dtt_check(dtt_exited0(status), "the tracee committed %d records "
	    "around one %s (status %#x)", STUCK_BEFORE + 1,
	    how == STUCK_LEFT ? "left reserved" : how == STUCK_BUSY ?
	    "claimed by a thread that runs" : "claimed by one asleep", status);
	dtt_check(mine == want, "the %ld committed in time were read (%ld)",
	    want, mine);
	if (!dtt_check(dtt_stats(fd, &st) == 0, "DTIOCGSTATS"))
		return;
	dtt_check(st.dtst_dropevt == (uint64_t)lost, "%ld counted in dropevt "
	    "(%llu): read %ld + dropped = %d calls", lost,
	    (unsigned long long)st.dtst_dropevt, mine, STUCK_BEFORE + 2);
}

int
main(int argc, char *argv[])
{
	char *slowargs[] = { "--ring-size", LL_SLOW_RING, NULL };
	struct dtioc_probe_info *pi = NULL;
	size_t npi, i;
	int fd = -1, status;

	if (argc != 5 || (strcmp(argv[4], "forge") != 0 &&
	    strcmp(argv[4], "overflow") != 0 &&
	    strncmp(argv[4], "lossless", 8) != 0 &&
	    strcmp(argv[4], "nofile") != 0 &&
	    strncmp(argv[4], "stuck", 5) != 0)) {
		fprintf(stderr, "usage: ingest_count DTD DTRUN TRACEE "
		    "forge|overflow|nofile|stuck|stuck-busy|stuck-asleep|"
		    "lossless|lossless-stopped|lossless-slow\n");
		return 2;
	}
	if (strcmp(argv[4], "nofile") == 0) {
		run_nofile(argv[1]);
		return dtt_done() || dtt_npass < 6;
	}
	if (st_setup(&dd, "udt-count", argv[1], strcmp(argv[4],
	    "lossless-slow") == 0 ? slowargs : NULL, &fd, &pi, &npi) != 0)
		goto out;
	for (i = 0; i < npi; i++) {
		if (strcmp(pi[i].dtpi_prov, "syscall") != 0)
			continue;
		/* Provider-local index: the order of the list. */
		if (strcmp(pi[i].dtpi_func, "sys%20") == 0 &&
		    strcmp(pi[i].dtpi_name, "entry") == 0)
			getpid_idx = nsys;
		nsys++;
	}
	if (strcmp(argv[4], "forge") == 0)
		run_forge(fd, dtt_pbn(pi, npi, "syscall", "sys%20", "entry"));
	else if (strcmp(argv[4], "lossless") == 0 ||
	    strcmp(argv[4], "lossless-stopped") == 0 ||
	    strcmp(argv[4], "lossless-slow") == 0)
		run_lossless(fd, dtt_pbn(pi, npi, "syscall", "sys%39",
		    "entry"), argv[2], argv[3],
		    strcmp(argv[4], "lossless-stopped") == 0,
		    strcmp(argv[4], "lossless-slow") == 0);
	else if (strncmp(argv[4], "stuck", 5) == 0)
		run_stuck(fd, dtt_pbn(pi, npi, "syscall", "sys%20", "entry"),
		    strcmp(argv[4], "stuck-busy") == 0 ? STUCK_BUSY :
		    strcmp(argv[4], "stuck-asleep") == 0 ? STUCK_ASLEEP :
		    STUCK_LEFT);
	else
		run_overflow(fd, dtt_pbn(pi, npi, "syscall", "sys%4", "entry"),
		    argv[2], argv[3]);
out:
	st_teardown(&dd, fd);
	free(pi);
	status = dtt_done();
	return status || dtt_npass < 4;
}
