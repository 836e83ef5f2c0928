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
 * A pushed pid filter evaluated in the kernel (issue 22,
 * providers/tracepoint/dt_tp_pid.c), through a real device file,
 * against a dtd of our own.  Root only (perf on other processes).
 *   pidpush_test tp DTD TARGET	tracepoint:raw_syscalls:sys_enter,
 *				open A pushing pid == the target's (as
 *				btrace -p does), open B comm == its name
 *				(the shared event's kernel filter), while a
 *				noisy process makes system calls flat out:
 *				each open counts exactly the target's
 *				getppid() calls, its main thread's, an
 *				early thread's and one it starts after the
 *				opens record, nothing is lost, no event of
 *				another process reaches open A, and dtd
 *				read about twice the target's records, far
 *				fewer than the noise made calls
 *   pidpush_test churn DTD TARGET	open A alone, while the target
 *				makes threads without pause during the
 *				start, each calling getppid() once: whether
 *				dtd follows its threads or filters its pid
 *				itself (said), the count is exact, no
 *				thread is seen twice, and every thread from
 *				the first seen to the last made is seen
 *				(filtering, but for what dtd says it
 *				dropped, the exit's record maybe among it)
 *   pidpush_test cut DTD TARGET	on task:task_rename, open B
 *				unfiltered first, so that the shared event
 *				is on, then open A pushing the pid while a
 *				thread of the target renames itself with
 *				numbers: A sees each number from its first
 *				to the last made exactly once (the
 *				switch-over from the shared event to A's
 *				own, dt_tp_pid.c), but for the one hit at
 *				the switch, which perf may stamp either
 *				side of it
 *   pidpush_test budget DTD TARGET	two opens pushing the pid, under
 *				a budget of descriptors for one
 *				(USERDT_TEST_PIDFDS): the second goes to
 *				the shared event, said once, and both count
 *				exactly (both push comm == the target's
 *				too, as in many)
 *   pidpush_test gone DTD TARGET	open A alone, the target's main
 *				thread gone (pthread_exit()) before it
 *				starts: dtd follows the other threads, the
 *				count is exact
 *   pidpush_test gonelate DTD TARGET	the same, the main thread gone
 *				just after A started: once dtd saw its
 *				events hang up, the buffers they owned are
 *				still in dtd's epoll set (another thread's
 *				event on each CPU: their watermarks still
 *				wake dtd), and the count is exact
 *   pidpush_test many DTD TARGET	open A alone, the target with more
 *				threads than dtd follows: dtd says so
 *				(E2BIG), filters the pid itself, and the
 *				count is exact (A pushes comm == the
 *				target's too: the machine's calls stay in
 *				the kernel, as in refused)
 *   pidpush_test refused DTD TARGET	as tp where dtd cannot follow the
 *				threads (USERDT_TEST_PIDFOLLOW=refuse): it
 *				says so and filters the pid itself, with
 *				the same exact counts (no noise: it would
 *				overflow perf's buffers)
 *
 * tp, churn and cut take dtd's first road, the pid compared in a kernel
 * program of the open's own (checked: dtd holds one more program while
 * A records); budget, gone, gonelate and many ask for the threads'
 * (USERDT_TEST_PIDFOLLOW=threads), which is what they test, and check
 * that it holds none.  The threads' road under churn is not run: the
 * kernel's inherited events there can stop writing unsaid (dt_tp_pid.c).
 *
 * Knowing every event of the target was read: its exit_group is its
 * last system call, and a reader gets events in time order across CPUs
 * (design decision 18), so once it is read nothing older is on its way.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"
#include "systab.h"

#define PP_MAIN		500	/* getppid() calls of the main thread */
#define PP_EARLY	300	/* of a thread started before the opens */
#define PP_LATE		200	/* of one started after they record */
/* all of them: their records fit one perf buffer, lost by no late read */
#define PP_CALLS	(PP_MAIN + PP_EARLY + PP_LATE)
#define PP_NEVS		4096
#define PP_NOISE	1000000	/* noisy calls made first */
#define PP_READ_MS	30000
#define PP_MAXNUM	(1L << 24)	/* renames' numbers told apart */
#define PP_MAXTIDS	(1L << 20)	/* getppid() callers remembered */

enum pp_mode { PP_TP, PP_CHURNS, PP_REFUSED, PP_CUT, PP_BUDGET, PP_GONE,
    PP_GONELATE, PP_MANY };
#define PP_MAXFDS	1024	/* perf events in dtd's epoll sets */

/* What an open read of the target (pp_count()). */
struct pp_got {
	uint64_t	 calls;		/* getppid() calls */
	uint64_t	 stray;		/* events of other processes */
	uint64_t	 nnum;		/* numbered renames, distinct */
	uint64_t	 dup;		/* numbered renames seen again */
	long long	 lo, hi;	/* least and most number, -1: none */
};

static const char	*pp_dtd, *pp_target;
static struct dtt_dtd	 pp_dd;
static unsigned char	 pp_seen[PP_MAXNUM / 8];
static pid_t		 pp_tids[PP_MAXTIDS];	/* getppid()'s callers */
static uint64_t		 pp_tidns[PP_MAXTIDS];	/* and when, realtime ns */
static long		 pp_ntids;
/* the target's other events, to tell a thread missed whole (churn) */
static pid_t		 pp_otids[PP_MAXTIDS];
static uint64_t		 pp_otidns[PP_MAXTIDS];
static long		 pp_notids;

/*
 * Enable pbn on a new open with filter f[n] (none: n 0), the flags
 * flags, and record: the fd, or -1.
 */
static int
pp_open(uint32_t pbn, const struct dtioc_filter_term *f, uint32_t n,
    uint64_t flags)
{
	struct dtioc_filter fl;
	int fd, error;

	if ((fd = dtt_open(pp_dd.dd_dev)) == -1) {
		dtt_check(false, "open: %s", strerror(errno));
		return -1;
	}
	memset(&fl, 0, sizeof(fl));
	fl.dtfl_pbn = pbn;
	fl.dtfl_nterms = n;
	if (n > 0)
		memcpy(fl.dtfl_terms, f, n * sizeof(*f));
	if ((error = dtt_enable(fd, pbn, flags, 0)) != 0 ||
	    (n > 0 && ioctl(fd, DTIOCPRBFILTER, &fl) == -1 &&
	    (error = errno)) ||
	    (error = dtt_record(fd, 1)) != 0) {
		dtt_check(false, "enable, filter, record: %s",
		    strerror(error));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The target (pid_target.c), started and ready, its stdin in *go, its
 * stdout in *outp unless NULL: its pid, or -1.
 */
static pid_t
pp_spawn(int *go, int *outp, const char *how, const char *file)
{
	char n[16], m[16], k[16];
	char *argv[] = { (char *)pp_target, n, m, k, (char *)how,
	    (char *)file, NULL };
	int in[2], out[2];
	char buf[8];
	pid_t pid;

	snprintf(n, sizeof(n), "%d", PP_MAIN);
	snprintf(m, sizeof(m), "%d", PP_EARLY);
	snprintf(k, sizeof(k), "%d", PP_LATE);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		return -1;
	pid = dtt_spawn(argv, NULL, in[0], out[1], -1, -1);
	close(in[0]);
	close(out[1]);
	if (pid == -1 || read(out[0], buf, 6) != 6 ||
	    memcmp(buf, "ready\n", 6) != 0) {
		dtt_check(false, "target ready");
		close(out[0]);
		close(in[1]);
		return -1;
	}
	if (outp != NULL)
		*outp = out[0];
	else
		close(out[0]);
	*go = in[1];
	return pid;
}

/* A rename's number v, in g and pp_seen. */
static void
pp_number(struct pp_got *g, long long v)
{
	if (v < 0 || v >= PP_MAXNUM)
		return;
	if (pp_seen[v / 8] & (1 << (v % 8))) {
		g->dup++;
		return;
	}
	pp_seen[v / 8] |= (unsigned char)(1 << (v % 8));
	g->nnum++;
	if (g->lo == -1 || v < g->lo)
		g->lo = v;
	if (v > g->hi)
		g->hi = v;
}

/* Whether target, a child not yet reaped, has exited. */
static bool
pp_exited(pid_t target)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)target, &si, WEXITED | WNOHANG |
	    WNOWAIT) == 0 && si.si_pid == target;
}

/* ev's thread and time (realtime ns) kept in tids[], ns[], if room. */
static void
pp_keep(pid_t *tids, uint64_t *ns, long *n, const struct dt_evt *ev)
{
	if (*n >= PP_MAXTIDS)
		return;
	ns[*n] = (uint64_t)ev->dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
	tids[(*n)++] = ev->dtev_tid;
}

/*
 * Read fd until target's exit came, into *g.  False on a timeout or an
 * error.  lossy: the open may drop (dtd filtering the pid from the
 * machine's records, its drops said), the exit's record among them:
 * then also done once target had exited before a read whose whole
 * wait brought nothing (dtd drains perf at least every 20 ms,
 * DT_TPEV_FLUSH_MS) and the open has said it dropped.
 */
static bool
pp_count(int fd, pid_t target, struct pp_got *g, bool lossy)
{
	static struct dt_evt evs[PP_NEVS];
	int getppid_num = systab_lookup("getppid"), exit_num =
	    systab_lookup("exit");
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PP_READ_MS * 1000000ULL;
	struct dtioc_stat st;
	bool exited = false, gone;
	long k, r;

	memset(g, 0, sizeof(*g));
	pp_ntids = pp_notids = 0;
	while (!exited) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		/* before the read: what it waits for then is all there is */
		gone = lossy && pp_exited(target);
		if ((r = dtt_read(fd, evs, PP_NEVS, 1000)) == -1) {
			if (errno != ETIMEDOUT)
				return false;
			if (gone && dtt_stats(fd, &st) == 0 &&
			    st.dtst_dropevt > 0) {
				fprintf(stderr, "# no exit read: among the "
				    "drops\n");
				return true;
			}
			continue;
		}
		for (k = 0; k < r; k++) {
			if (evs[k].dtev_pid != target)
				g->stray++;
			else if (evs[k].dtev_args[0] == exit_num)
				exited = true;
			else if (evs[k].dtev_args[0] != getppid_num)
				pp_keep(pp_otids, pp_otidns, &pp_notids,
				    &evs[k]);
			else {
				g->calls++;
				pp_keep(pp_tids, pp_tidns, &pp_ntids, &evs[k]);
			}
		}
	}
	return true;
}

/*
 * Read fd's task:task_rename events until target's counter named itself
 * "cend", its "c<number>" names into *g.  False on a timeout or an
 * error.
 */
static bool
pp_renames(int fd, pid_t target, struct pp_got *g)
{
	static struct dt_evt evs[PP_NEVS];
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PP_READ_MS * 1000000ULL;
	const unsigned char *a;
	char name[DTEV_STR_SIZE], *end;
	size_t off;
	bool done = false;
	long long v;
	long k, r;

	memset(g, 0, sizeof(*g));
	memset(pp_seen, 0, sizeof(pp_seen));
	g->lo = g->hi = -1;
	while (!done) {
		if (dtt_clock_ns(CLOCK_MONOTONIC) > deadline)
			return false;
		if ((r = dtt_read(fd, evs, PP_NEVS, 1000)) == -1) {
			if (errno == ETIMEDOUT)
				continue;
			return false;
		}
		for (k = 0; k < r; k++) {
			if (evs[k].dtev_pid != target) {
				g->stray++;
				continue;
			}
			/* newcomm, argument 2, among the strings */
			a = DTEV_STR_AREA(&evs[k]);
			name[0] = '\0';
			for (off = 0; off + DTEV_STR_HDR < DTEV_STR_SIZE &&
			    a[off] != 0; off += DTEV_STR_HDR + a[off + 1] + 1)
				if ((a[off] & DTEV_STR_ARG) == 3)
					memcpy(name, a + off + DTEV_STR_HDR,
					    (size_t)a[off + 1] + 1);
			if (strcmp(name, "cend") == 0)
				done = true;
			else if (name[0] == 'c' && (v = strtoll(name + 1, &end,
			    10)) >= 0 && *end == '\0' && end != name + 1)
				pp_number(g, v);
		}
	}
	return true;
}

/* Whether dtd's descriptor fd is what ("anon_inode:[perf_event]"). */
static bool
pp_fdis(const char *fd, const char *what)
{
	char path[PATH_MAX], link[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pp_dd.dd_pid, fd);
	if ((len = readlink(path, link, sizeof(link) - 1)) <= 0)
		return false;
	link[len] = '\0';
	return strcmp(link, what) == 0;
}

/*
 * The perf events dtd holds open now (fds NULL), or those in its epoll
 * sets, into fds[PP_MAXFDS]: how many, or -1.
 */
static int
pp_perf(int *fds)
{
	char path[64], info[PATH_MAX], line[256], tfd[16];
	struct dirent *de;
	int n = 0, t;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pp_dd.dd_pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (fds == NULL) {
			n += pp_fdis(de->d_name, "anon_inode:[perf_event]");
			continue;
		}
		if (!pp_fdis(de->d_name, "anon_inode:[eventpoll]"))
			continue;
		snprintf(info, sizeof(info), "/proc/%d/fdinfo/%s",
		    (int)pp_dd.dd_pid, de->d_name);
		if ((f = fopen(info, "r")) == NULL)
			continue;
		/* "tfd:       12 events: ..." a line each */
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "tfd: %d", &t) == 1 && n < PP_MAXFDS &&
			    snprintf(tfd, sizeof(tfd), "%d", t) > 0 &&
			    pp_fdis(tfd, "anon_inode:[perf_event]"))
				fds[n++] = t;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The eBPF programs dtd holds open now, or -1. */
static int
pp_progs(void)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pp_dd.dd_pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += pp_fdis(de->d_name, "anon_inode:bpf-prog");
	closedir(d);
	return n;
}

/*
 * gonelate: the target's main thread gone, once dtd no longer polls
 * any of was[nwas], the buffers' owners, every buffer still polled
 * through another thread's event.  The target waits on *go meanwhile.
 */
static void
pp_gone(int out, const int *was, int nwas)
{
	static int now[PP_MAXFDS];
	uint64_t deadline = dtt_clock_ns(CLOCK_MONOTONIC) +
	    PP_READ_MS * 1000000ULL;
	char buf[8];
	int n, i, j, old = 0;

	if (read(out, buf, 5) != 5 || memcmp(buf, "gone\n", 5) != 0) {
		dtt_check(false, "the target's main thread is gone");
		return;
	}
	/*
	 * dtd's reader takes the hang-up in its own time, and nothing
	 * outside tells when: look again until none is left.
	 */
	do {
		if ((n = pp_perf(now)) == -1)
			break;
		for (old = 0, i = 0; i < n; i++)
			for (j = 0; j < nwas; j++)
				old += now[i] == was[j];
		if (old > 0)
			usleep(1000);
	} while (old > 0 && dtt_clock_ns(CLOCK_MONOTONIC) < deadline);
	dtt_check(n == nwas && old == 0, "dtd polls %d perf events, %d of "
	    "them the gone thread's, for %d buffers", n, old, nwas);
}

/* dtd's count of perf records, from its log at exit; -1 if none. */
static long long
pp_records(void)
{
	char line[512];
	long long n = -1, v;
	FILE *f;

	if ((f = fopen(pp_dd.dd_err, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "dtd: tracepoint: %lld records", &v) == 1)
			n = v;
		if (strstr(line, "threads of") != NULL ||
		    strstr(line, "filter") != NULL ||
		    strstr(line, "came late") != NULL)
			fprintf(stderr, "# %s", line);
	}
	fclose(f);
	return n;
}

static void
pp_nothing_lost(int fd, const char *what)
{
	struct dtioc_stat st;
	int error;

	error = dtt_stats(fd, &st);
	dtt_check(error == 0 && st.dtst_dropevt == 0, "%s lost nothing: %llu "
	    "(%s)", what, error ? 0ULL : (unsigned long long)st.dtst_dropevt,
	    strerror(error));
}

/* A churned thread: its tid, its life, its place in the order made. */
struct pp_made {
	pid_t		pm_tid;
	uint64_t	pm_ns;		/* before its clone */
	uint64_t	pm_end;		/* after its join */
	long		pm_at;
};

static int
pp_madecmp(const void *a, const void *b)
{
	const struct pp_made *x = a, *y = b;

	if (x->pm_tid != y->pm_tid)
		return x->pm_tid < y->pm_tid ? -1 : 1;
	return x->pm_ns < y->pm_ns ? -1 : x->pm_ns > y->pm_ns;
}

/*
 * The place in made (sorted) of the churned thread of tid at ns: the
 * last of the tid's made at or before ns, if not joined before it; -1
 * for none (a known thread's).
 */
static long
pp_made_at(const struct pp_made *made, long n, pid_t tid, uint64_t ns)
{
	long lo = 0, hi = n, mid;

	/* past the last (tid, start <= ns) */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (made[mid].pm_tid < tid || (made[mid].pm_tid == tid &&
		    made[mid].pm_ns <= ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && made[lo - 1].pm_tid == tid &&
	    made[lo - 1].pm_end >= ns ? lo - 1 : -1;
}

/*
 * The churned threads (their tids and starts in path, in the order
 * made) against the getppid() callers pp_count() kept: each seen at
 * most once, every one from the first seen on seen, and the others'
 * calls the known; but for lost events the device counted as dropped
 * (lost: 0 unless dtd filters the pid itself, see the caller).  A call
 * is the churned thread's whose tid made it while it lived: a tid comes
 * back once the kernel's pids wrap (pid_max 32768, and a slow start
 * churns more than that), and a known thread made late may have an old
 * churned one's.
 */
static void
pp_churned(const char *path, uint64_t lost)
{
	struct pp_made *made = NULL;
	unsigned char *cnt = NULL;
	long n = 0, i, j, first = -1, twice = 0, missed = 0, known = 0;
	long other = 0, firstmiss = -1, lastmiss = -1;
	long long ns, end;
	int v;
	FILE *f;

	made = calloc(PP_MAXTIDS, sizeof(*made));
	cnt = calloc(PP_MAXTIDS, 1);
	if (made == NULL || cnt == NULL || (f = fopen(path, "r")) == NULL) {
		dtt_check(false, "churned threads' tids: %s", strerror(errno));
		goto out;
	}
	while (n < PP_MAXTIDS && fscanf(f, "%d %lld %lld", &v, &ns, &end) ==
	    3) {
		made[n].pm_tid = (pid_t)v;
		made[n].pm_ns = (uint64_t)ns;
		made[n].pm_end = (uint64_t)end;
		made[n].pm_at = n;
		n++;
	}
	fclose(f);
	qsort(made, (size_t)n, sizeof(*made), pp_madecmp);
	for (i = 0; i < pp_ntids; i++) {
		/* outside every churned life of its tid: a known's */
		if ((j = pp_made_at(made, n, pp_tids[i], pp_tidns[i])) == -1)
			known++;
		else if (cnt[made[j].pm_at])
			twice++;
		else
			cnt[made[j].pm_at] = 1;
	}
	/* 2: a missed thread's other calls were read (clone's, exit's) */
	for (i = 0; i < pp_notids; i++)
		if ((j = pp_made_at(made, n, pp_otids[i], pp_otidns[i])) !=
		    -1 && cnt[made[j].pm_at] == 0)
			cnt[made[j].pm_at] = 2;
	for (i = 0; i < n; i++) {
		if (cnt[i] == 1 && first == -1)
			first = i;
		else if (cnt[i] != 1 && first != -1) {
			missed++;
			other += cnt[i] == 2;
			if (firstmiss == -1)
				firstmiss = i;
			lastmiss = i;
		}
	}
	if (missed > 0)
		fprintf(stderr, "# churn: missed %ld..%ld (%ld of them with "
		    "other calls read), %ld other calls of the target read\n",
		    firstmiss, lastmiss, other, pp_notids);
	dtt_check(twice == 0 && (uint64_t)missed <= lost && known <= PP_CALLS &&
	    (uint64_t)(PP_CALLS - known) + (uint64_t)missed <= lost,
	    "churn: of %ld threads made, from the first seen (%ld) on, %ld "
	    "missed, %ld seen twice; the known threads' %ld calls (%llu "
	    "dropped and said)", n, first, missed, twice, known,
	    (unsigned long long)lost);
out:
	free(made);
	free(cnt);
}

/*
 * The numbered renames g saw: each once, none missing from lo to hi,
 * but for one at most, the hit at the switch-over whose two records
 * perf stamped either side of its time (dt_tp_pid.c's "Left open":
 * each event's record of a hit is stamped on its own, measured 150 ns
 * to 1.4 us apart, the process's own first).  The cut it replaced
 * doubled or lost every event of the start, hundreds to thousands.
 */
static void
pp_numbers(const struct pp_got *g, const char *what)
{
	long long v, miss = -1, missed;

	for (v = g->lo; v >= 0 && v <= g->hi && miss == -1; v++)
		if (!(pp_seen[v / 8] & (1 << (v % 8))))
			miss = v;
	missed = g->lo == -1 ? 0 : g->hi - g->lo + 1 - (long long)g->nnum;
	if (g->dup + (uint64_t)missed == 1)
		fprintf(stderr, "# %s: one at the switch-over %s\n", what,
		    g->dup ? "seen twice" : "missed");
	dtt_check(g->lo != -1 && g->dup + (uint64_t)missed <= 1, "%s: %llu "
	    "seen twice, %llu of %lld..%lld seen once, the first missed "
	    "%lld", what, (unsigned long long)g->dup,
	    (unsigned long long)g->nnum, g->lo, g->hi, miss);
}

/* Which way dtd went for the pid, said in its log; false: neither. */
static bool
pp_path(const char *why, bool *followed)
{
	*followed = !dtt_dtd_logsays(&pp_dd, "cannot follow");
	return *followed || dtt_dtd_logsays(&pp_dd, why);
}

/* The last checks of mode m, dtd stopped, recs its perf records. */
static void
pp_after(enum pp_mode m, long long recs, uint64_t noise)
{
	bool followed;

	switch (m) {
	case PP_CHURNS:
		dtt_check(pp_path("Resource temporarily unavailable",
		    &followed), "churn: dtd said which way it went");
		fprintf(stderr, "# churn: dtd %s, read %lld records, the "
		    "noise made %llu calls\n", followed ? "followed the "
		    "threads" : "filtered the pid", recs,
		    (unsigned long long)noise);
		break;
	case PP_REFUSED:
		dtt_check(dtt_dtd_logsays(&pp_dd, "cannot follow the threads"),
		    "dtd says it filters the pid itself");
		break;
	case PP_CUT:
	case PP_GONE:
	case PP_GONELATE:
		dtt_check(!dtt_dtd_logsays(&pp_dd, "cannot follow"),
		    "dtd followed the target's threads");
		break;
	case PP_MANY:
		dtt_check(dtt_dtd_logsays(&pp_dd, "(Argument list too long)"),
		    "dtd says the target has too many threads (E2BIG)");
		break;
	case PP_BUDGET:
		dtt_check(dtt_dtd_logsays(&pp_dd, "past the budget"),
		    "dtd says the second open is past the budget");
		break;
	case PP_TP:
		/*
		 * Each open's records of the target (a few calls more than
		 * the getppid()), and none of the noise: the kernel chose,
		 * for A by the target's threads.
		 */
		dtt_check(recs >= 2 * PP_CALLS && recs < 2 * PP_CALLS + 2000 &&
		    (uint64_t)recs < noise / 10,
		    "dtd read %lld perf records, the noise made %llu calls",
		    recs, (unsigned long long)noise);
		dtt_check(!dtt_dtd_logsays(&pp_dd, "cannot follow"),
		    "dtd followed the target's threads");
		break;
	}
}

static void
run(enum pp_mode m)
{
	static const char *how[PP_MANY + 1] = { [PP_CHURNS] = "churn",
	    [PP_CUT] = "count", [PP_GONE] = "gone",
	    [PP_GONELATE] = "gonelate", [PP_MANY] = "many" };
	volatile uint64_t *calls;
	struct dtioc_filter_term fa[3], fb[1];
	struct pp_got ga, gb;
	uint64_t noise, want = PP_CALLS, lost = 0;
	pid_t tpid, npid = -1;
	int fda = -1, fdb = -1, go = -1, st;
	uint32_t pbn, pbnr = 0;
	long long recs;
	char churnf[PATH_MAX];
	static int was[PP_MAXFDS];
	int out = -1, nwas, progs;
	long ncpu;

	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED)
		return;
	*calls = 0;
	if ((fda = dtt_open(pp_dd.dd_dev)) == -1 || (pbn = dtt_probe(fda,
	    "tracepoint", "raw_syscalls", "sys_enter")) == 0) {
		dtt_check(false, "tracepoint:raw_syscalls:sys_enter listed");
		return;
	}
	if (m == PP_CUT && (pbnr = dtt_probe(fda, "tracepoint", "task",
	    "task_rename")) == 0) {
		dtt_check(false, "tracepoint:task:task_rename listed");
		close(fda);
		return;
	}
	close(fda);
	fda = -1;
	snprintf(churnf, sizeof(churnf), "%s/churned", pp_dd.dd_dir);
	if ((tpid = pp_spawn(&go, m == PP_GONELATE ? &out : NULL, how[m],
	    m == PP_CHURNS ? churnf : NULL)) == -1)
		return;
	/* what a full buffer would lose is no switch-over's */
	npid = m == PP_TP || m == PP_CHURNS ? dtt_noise(calls, PP_NOISE) : -1;
	/* btrace -p's push alone (bt_push.c push_pid()) */
	fa[0] = dtt_term(DTF_OP_EQ, DTF_PID, tpid, NULL);
	/*
	 * many's and budget's: where dtd falls back, the shared event is
	 * filtered by name in the kernel, the machine's calls left there
	 */
	fa[1] = dtt_term(DTF_OP_EQ, DTF_COMM, 0, "pid_target");
	fa[2] = dtt_term(DTF_OP_AND, 0, 0, NULL);
	fb[0] = dtt_term(DTF_OP_EQ, DTF_COMM, 0, "pid_target");
	progs = pp_progs();
	switch (m) {
	case PP_CUT:
		/* the shared event on, and the target's records in it */
		if ((fdb = pp_open(pbnr, NULL, 0, DTEVT_EXECNAME |
		    DTEVT_STRINGS)) == -1 || (fda = pp_open(pbnr, fa, 1,
		    DTEVT_EXECNAME | DTEVT_STRINGS)) == -1)
			goto out;
		break;
	case PP_BUDGET:
		if ((fda = pp_open(pbn, fa, 3, DTEVT_EXECNAME)) == -1 ||
		    (fdb = pp_open(pbn, fa, 3, DTEVT_EXECNAME)) == -1)
			goto out;
		/* A's own on 2 threads, B's the shared event's, each CPU */
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		dtt_check(pp_perf(NULL) == 3 * ncpu, "dtd holds %d perf "
		    "events, A's own and the shared event (want %ld)",
		    pp_perf(NULL), 3 * ncpu);
		break;
	case PP_CHURNS:
	case PP_GONE:
	case PP_GONELATE:
	case PP_MANY:
		if ((fda = pp_open(pbn, fa, m == PP_MANY ? 3 : 1,
		    DTEVT_EXECNAME)) == -1)
			goto out;
		break;
	default:
		if ((fda = pp_open(pbn, fa, 1, DTEVT_EXECNAME)) == -1 ||
		    (fdb = pp_open(pbn, fb, 1, DTEVT_EXECNAME)) == -1)
			goto out;
	}
	/*
	 * The road dtd took for A: its program (root, a record of a fixed
	 * size) where the test leaves it the choice, the threads' where
	 * it asks for them (USERDT_TEST_PIDFOLLOW=threads).
	 */
	if (m == PP_TP || m == PP_CHURNS || m == PP_CUT)
		dtt_check(pp_progs() == progs + 1, "dtd compares the pid in "
		    "a kernel program of A's own (%d programs, %d before)",
		    pp_progs(), progs);
	else if (m != PP_REFUSED)
		dtt_check(pp_progs() == progs, "dtd follows the threads, "
		    "no program (%d programs, %d before)", pp_progs(), progs);
	if (m == PP_GONELATE) {
		/* the buffers' owners: dtd polls one event a buffer */
		nwas = pp_perf(was);
		(void)write(go, "x", 1);
		pp_gone(out, was, nwas);
		close(out);
	}
	(void)write(go, "x", 1);
	close(go);
	go = -1;
	/* A read while the target runs: its numbers must not fill A's ring */
	if (m == PP_CUT)
		dtt_check(pp_renames(fda, tpid, &ga), "open A read the end");
	else
		dtt_check(pp_count(fda, tpid, &ga, m == PP_CHURNS),
		    m == PP_CHURNS ? "open A read the exit, or said it "
		    "dropped it" : "open A read the exit");
	st = dtt_wait(tpid, PP_READ_MS);
	dtt_check(st != -1 && dtt_exited0(st), "target ran");
	tpid = -tpid;
	if (fdb != -1 && m != PP_CUT)
		dtt_check(pp_count(fdb, -tpid, &gb, false),
		    "open B read the exit");
	/*
	 * Stopped before their drops are read, as btrace stops before its
	 * last look: what perf lost at the end and told in no lost record
	 * (the thread gone, or on another CPU, before its buffer had room
	 * again) is counted at the stop (dt_tp_pid_tail()).  Read before,
	 * a run that lost the last 2344 numbers said it lost nothing.
	 */
	dtt_check(dtt_record(fda, 0) == 0 && (fdb == -1 ||
	    dtt_record(fdb, 0) == 0), "the opens stop recording");
	noise = *calls;
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	npid = -1;
	/* the churned threads' calls too: pp_churned() tells them apart */
	if (m == PP_CHURNS)
		dtt_check(ga.stray == 0, "pid == %d: %llu events of others",
		    (int)-tpid, (unsigned long long)ga.stray);
	else if (m != PP_CUT)
		dtt_check(ga.calls == want && ga.stray == 0, "pid == %d: %llu "
		    "getppid (want %llu), %llu events of others", (int)-tpid,
		    (unsigned long long)ga.calls, (unsigned long long)want,
		    (unsigned long long)ga.stray);
	if (m == PP_CHURNS) {
		struct dtioc_stat st;

		/*
		 * Where dtd gave up following threads made without pause
		 * and filters the pid itself (its documented road), it
		 * reads the whole machine's events, the noise's flat-out
		 * calls among them, and under a slow build (ASan) perf may
		 * drop some.  On the program's road the kernel skips a
		 * run while another BPF program runs on that CPU (its
		 * recursion guard), which dtd counts as recursive drops.
		 * What either drops dtd must say: every call not seen is
		 * among the drops counted.
		 */
		memset(&st, 0, sizeof(st));
		dtt_check(dtt_stats(fda, &st) == 0, "open A's stats");
		lost = st.dtst_dropevt + st.dtst_recurevt;
		if (lost > 0)
			fprintf(stderr, "# churn: %llu dropped, %llu skipped "
			    "by the kernel\n",
			    (unsigned long long)st.dtst_dropevt,
			    (unsigned long long)st.dtst_recurevt);
		if (!dtt_dtd_logsays(&pp_dd, "cannot follow"))
			dtt_check(st.dtst_dropevt == 0, "open A: perf lost "
			    "nothing of the program's output: %llu",
			    (unsigned long long)st.dtst_dropevt);
	} else
		pp_nothing_lost(fda, "open A");
	if (m == PP_CHURNS)
		pp_churned(churnf, lost);
	if (m == PP_CUT) {
		pp_numbers(&ga, "renames");
		dtt_check(ga.lo > 0 && ga.nnum >= PP_MAIN && ga.stray == 0,
		    "A began while the target renamed: from %lld, %llu "
		    "renames, %llu events of others", ga.lo,
		    (unsigned long long)ga.nnum, (unsigned long long)ga.stray);
	}
	if (fdb != -1 && m != PP_CUT) {
		dtt_check(gb.calls == PP_CALLS, "open B: %llu getppid "
		    "(want %d)", (unsigned long long)gb.calls, PP_CALLS);
		pp_nothing_lost(fdb, "open B");
	}
	close(fda);
	fda = -1;
	if (fdb != -1)
		close(fdb);
	fdb = -1;
	dtt_check(dtt_dtd_stop(&pp_dd, SIGTERM) != -1, "dtd stops");
	recs = pp_records();
	pp_after(m, recs, noise);
	return;
out:
	if (go != -1)
		close(go);
	if (tpid > 0)
		dtt_stop(tpid, SIGKILL, DTT_EXIT_MS);
	if (npid > 0)
		dtt_stop(npid, SIGKILL, DTT_EXIT_MS);
	if (fda != -1)
		close(fda);
	if (fdb != -1)
		close(fdb);
}

int
main(int argc, char *argv[])
{
	static const char *modes[] = { [PP_TP] = "tp", [PP_CHURNS] = "churn",
	    [PP_REFUSED] = "refused", [PP_CUT] = "cut",
	    [PP_BUDGET] = "budget", [PP_GONE] = "gone",
	    [PP_GONELATE] = "gonelate", [PP_MANY] = "many" };
	char errbuf[4096], fds[32];
	long ncpu;
	int m;

	for (m = 0; argc == 4 && m <= PP_MANY; m++)
		if (strcmp(argv[1], modes[m]) == 0)
			break;
	if (argc != 4 || m > PP_MANY) {
		fprintf(stderr, "usage: pidpush_test tp|churn|refused|cut|"
		    "budget|gone|gonelate|many dtd target\n");
		return 2;
	}
	if (m == PP_REFUSED)
		setenv("USERDT_TEST_PIDFOLLOW", "refuse", 1);
	/* what they test is the threads' road: its budget, its owners */
	if (m == PP_BUDGET || m == PP_GONE || m == PP_GONELATE ||
	    m == PP_MANY)
		setenv("USERDT_TEST_PIDFOLLOW", "threads", 1);
	/* one open's: the target's main and early thread on every CPU */
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	snprintf(fds, sizeof(fds), "%ld", 2 * (ncpu > 0 ? ncpu : 1));
	if (m == PP_BUDGET)
		setenv("USERDT_TEST_PIDFDS", fds, 1);
	pp_dtd = argv[2];
	pp_target = argv[3];
	dtt_tag(argv[1]);
	if (dtt_dtd_init(&pp_dd, "pidpush_test") == -1 ||
	    dtt_dtd_start(&pp_dd, pp_dtd, (char *[]){ "--no-ksyms", NULL },
	    errbuf, sizeof(errbuf)) == -1) {
		dtt_check(false, "dtd starts: %s", errbuf);
		dtt_dtd_fini(&pp_dd, true);
		return dtt_done();
	}
	run((enum pp_mode)m);
	if (pp_dd.dd_pid != 0)
		dtt_check(dtt_dtd_stop(&pp_dd, SIGTERM) != -1, "dtd stops");
	dtt_dtd_fini(&pp_dd, true);
	return dtt_done();
}
