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
 * Ingestion of traced processes' events (design decision 6).
 *
 * An accept thread serves the ingest socket and the tracees' beside it
 * (its loop, which never waits on one client, in dt_ingest_accept.c) and
 * hands each whole hello, or tracee's connection, to a worker of its
 * user (dt_ingest_dispatch()): for every traced process that connects
 * that creates a ring and an enable table (sealed memfds),
 * records the peer's pid from SO_PEERCRED and a pidfd, and hands both
 * memfds over with SCM_RIGHTS, the table read-only (dt_ingest_serve.c).
 * A drain thread (dt_ingest_drain.c) polls every ring, validates each
 * record (the ring is the tracee's memory: every byte is untrusted, bad
 * records are counted and dropped, never followed), expands it into a
 * dt_evt with the pid dtd knows, and emits it to every open that records
 * the probe (those two steps in dt_ingest_rec.c).  A process that
 * exited, or that exec'd and connected again, is drained one last time
 * and freed.  What is left here: the state they share, the controls
 * (enables, sinks, the profile timer), and the threads' start and stop.
 *
 * At start a new dtd adopts the tables of processes whose previous dtd
 * died (dt_ingest_adopt.c), so that each reconnects on its next hooked
 * call; in a thread of its own, while the device is already served.
 *
 * Tracees may stamp records with the time stamp counter, which
 * dt_ingest_tsc.c turns into CLOCK_REALTIME.
 *
 * When the profile provider's timer fallback registered its sink, the
 * same rings carry profile samples (UDT_PROBE_PROFILE), validated as
 * strictly and handed to it, and the tables carry the sampling period,
 * which dt_ingest_ptimer_set() writes and announces with a futex wake.
 *
 * Locks used to protect the globals in this file (and in
 * dt_ingest_drain.c, dt_ingest_serve.c, dt_ingest_var.h):
 *	[I]	set by dt_ingest_begin() before the threads exist,
 *		or for a proc before it is linked on dti_procs
 *	[L]	dti_lock
 *	[D]	the drain thread only (it alone unlinks and frees procs)
 *	[W]	dti_idle_lock
 *	[a]	atomic operations
 */
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_dev.h"
#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_pidmaps.h"

struct dt_probe	*(*dti_probe)(unsigned int);
bool	(*dti_kall)(unsigned int);
bool	(*dti_kbefore)(pid_t, uint64_t, unsigned int);
void	(*dti_sample_put)(unsigned int, const struct dt_evt *, uint64_t,
	    uint64_t);
void	(*dti_sample_lost)(uint64_t, bool);
void	(*dti_attach[DT_INGEST_MAXSINKS])(pid_t, bool);
unsigned int	dti_nattach;
void	(*dti_exit[DT_INGEST_MAXSINKS])(pid_t, uint64_t);
unsigned int	dti_nexit;

pthread_mutex_t	 dti_lock = PTHREAD_MUTEX_INITIALIZER;
struct dti_proc	*dti_procs;		/* [L], head read [a] */
uint8_t		 dti_enab[DT_SYS_NPROBES];	/* [L] master */
uint32_t	 dti_lossless;		/* [L] master of tb_lossless */
uint64_t	 dti_prof_nsecs;	/* [L] master, timer mode */
atomic_uint	 dti_nenab;		/* [L] writes, [a] reads:
					   probes enabled, + 1 for
					   timer-mode profiling */

static int		 dti_listen = -1;	/* [I] */
static int		 dti_tlisten = -1;	/* [I] the tracees' */
static int		 dti_wake[2] = { -1, -1 };	/* [I] stop pipe */
atomic_int	 dti_stop;		/* [a] */
struct dt_source	*dti_seq;		/* [I] */
static pthread_t	 dti_accept_thr, dti_drain_thr;	/* [I] */
static int		 dti_running;		/* [I] */
char		 dti_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
unsigned int	 dti_uid_max;		/* [I] tracees of one user */
bool		 dti_eager;		/* [I] UDT_W_EAGER */

struct dti_stats	 dti_stats;

/* One source of events turned on or off.  Under [L]. */
static void
dti_nenab_adj(bool was, bool is)
{
	if (is && !was)
		atomic_fetch_add(&dti_nenab, 1);
	else if (was && !is)
		atomic_fetch_sub(&dti_nenab, 1);
}

atomic_uint		 dti_ncounting;
atomic_int		 dti_count_ended;
atomic_uint		 dti_nsysenab;

void
dt_ingest_enable(unsigned int p, uint8_t en)
{
	struct dti_proc *dp;

	if (p >= DT_SYS_NPROBES)
		return;
	pthread_mutex_lock(&dti_lock);
	if (!(dti_enab[p] & UDT_EN_COUNT) && (en & UDT_EN_COUNT))
		atomic_fetch_add(&dti_ncounting, 1);
	else if ((dti_enab[p] & UDT_EN_COUNT) && !(en & UDT_EN_COUNT) &&
	    atomic_fetch_sub(&dti_ncounting, 1) == 1)
		atomic_store(&dti_count_ended, 1);
	dti_nenab_adj(dti_enab[p] != 0, en != 0);
	if (en != 0 && dti_enab[p] == 0)
		atomic_fetch_add(&dti_nsysenab, 1);
	else if (en == 0 && dti_enab[p] != 0)
		atomic_fetch_sub(&dti_nsysenab, 1);
	dti_enab[p] = en;
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		__atomic_store_n(&dp->dp_tab->tb_enab[p], en,
		    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dti_lock);
	if (en != 0)
		dti_kick();
}

void
dti_tabs_apply(void (*fn)(struct udt_tab *, void *), void *arg)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	fn(NULL, arg);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		fn(dp->dp_tab, arg);
	pthread_mutex_unlock(&dti_lock);
}

void
dti_procs_apply(void (*fn)(struct dti_proc *, void *), void *arg)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		fn(dp, arg);
	pthread_mutex_unlock(&dti_lock);
}

size_t
dt_ingest_tracees(pid_t *pids, size_t max)
{
	struct dti_proc *dp;
	size_t n = 0;

	pthread_mutex_lock(&dti_lock);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		if (!dp->dp_dead && !atomic_load(&dp->dp_retired)) {
			if (n < max)
				pids[n] = dp->dp_pid;
			n++;
		}
	pthread_mutex_unlock(&dti_lock);
	return n;
}

void
dt_ingest_lossless(bool on)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	dti_lossless = on;
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		__atomic_store_n(&dp->dp_tab->tb_lossless, dti_lossless,
		    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dti_lock);
	/* a pass now lifts the room the last lossless reader bounded */
	if (!on)
		dti_kick();
}

void
dt_ingest_tab_announce(struct udt_tab *tab)
{
	__atomic_add_fetch(&tab->tb_prof_gen, 1, __ATOMIC_RELEASE);
	(void)syscall(SYS_futex, &tab->tb_prof_gen, FUTEX_WAKE, INT_MAX,
	    NULL, NULL, 0);
}

/*
 * Period first, then the announcement.  Under [L] (or at the end, when
 * no other thread runs), so two changes never interleave.
 */
static void
dti_prof_store(struct udt_tab *tab, uint64_t nsecs)
{
	__atomic_store_n(&tab->tb_prof_nsecs, nsecs, __ATOMIC_RELAXED);
	dt_ingest_tab_announce(tab);
}

void
dt_ingest_sink_probes(struct dt_probe *(*probe)(unsigned int))
{
	dti_probe = probe;
}

void
dt_ingest_sink_kcopied(bool (*kall)(unsigned int),
    bool (*before)(pid_t, uint64_t, unsigned int))
{
	dti_kbefore = before;
	dti_kall = kall;
}

void
dt_ingest_sink_samples(void (*put)(unsigned int, const struct dt_evt *,
    uint64_t, uint64_t), void (*lost)(uint64_t, bool))
{
	dti_sample_put = put;
	dti_sample_lost = lost;
}

/*
 * A sink registered again (the device core initialised once more, as
 * its tests do) is there once.  More than DT_INGEST_MAXSINKS is a
 * programming error of dtd's own providers, caught at its start, never
 * a tracee's doing.
 */
void
dt_ingest_sink_attach(void (*attach)(pid_t, bool))
{
	unsigned int i;

	for (i = 0; i < dti_nattach; i++)
		if (dti_attach[i] == attach)
			return;
	if (dti_nattach == DT_INGEST_MAXSINKS)
		abort();
	dti_attach[dti_nattach++] = attach;
}

void
dt_ingest_sink_eager(void)
{
	dti_eager = true;
}

void
dt_ingest_sink_exit(void (*leave)(pid_t, uint64_t))
{
	unsigned int i;

	for (i = 0; i < dti_nexit; i++)
		if (dti_exit[i] == leave)
			return;
	if (dti_nexit == DT_INGEST_MAXSINKS)
		abort();
	dti_exit[dti_nexit++] = leave;
}

const char *
dt_ingest_sockpath(void)
{
	return dti_path;
}

void
dt_ingest_ptimer_set(uint64_t nsecs)
{
	struct dti_proc *dp;

	pthread_mutex_lock(&dti_lock);
	dti_nenab_adj(dti_prof_nsecs != 0, nsecs != 0);
	dti_prof_nsecs = nsecs;
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		dti_prof_store(dp->dp_tab, nsecs);
	pthread_mutex_unlock(&dti_lock);
	if (nsecs != 0)
		dti_kick();
}

/*
 * Adoption opens every process's /proc/PID/maps, and such an open waits
 * while that process is in the middle of an exec (which may itself wait,
 * on a stopped FUSE mount say) or its memory lock is held: seen for 20 s
 * under the test suite.  So it runs beside the device being served, never
 * before it (nor before SIGTERM is heard), in a thread of its own.
 * Detached: the waits are killable, so one still waiting when dtd exits
 * ends with it; it touches only the tables it maps and dti_stats.
 */
static void *
dti_adopt_main(void *arg)
{
	(void)arg;
	atomic_fetch_add(&dti_stats.adopted, dt_ingest_adopt(dti_path));
	return NULL;
}

/* --- the accept side ------------------------------------------------- */

static struct dt_wq	*dti_serve_wq;		/* [I] */

struct dti_job {
	struct dt_work		 j_work;
	int			 j_fd;
	int			 j_pidfd;
	struct ucred		 j_cred;
	struct udt_hello	 j_hello;
	struct udt_maps_req	 j_req;
	uint64_t		 j_since;	/* ns, CLOCK_MONOTONIC */
};

static void
dti_serve_run(struct dt_work *wk, bool cancel)
{
	struct dti_job *j = (struct dti_job *)(void *)wk;

	if (!cancel && dt_clock_ns(CLOCK_MONOTONIC) - j->j_since >
	    DTI_SERVE_STALE_MS * 1000000ULL) {
		dt_ingest_refused(&j->j_cred, "it waited too long behind its "
		    "user's other hellos");
		cancel = true;
	}
	if (cancel) {
		if (j->j_pidfd != -1)
			close(j->j_pidfd);
	} else
		dt_ingest_serve(j->j_fd, &j->j_cred, j->j_pidfd, &j->j_hello,
		    &j->j_req);
	close(j->j_fd);
	free(j);
}

void
dt_ingest_dispatch(int fd, const struct ucred *cr, int pidfd,
    const struct udt_hello *h, const struct udt_maps_req *rq)
{
	struct dti_job *j;
	struct stat st;
	char path[32];
	uint32_t key = (uint32_t)cr->uid;
	int error = ENOMEM;

	/*
	 * Counters read from atomics, answered here: a launcher asks before
	 * every command it starts (udt_lh_wanted()) and must not queue
	 * behind its user's tracees, whose hellos read their memory.
	 */
	if ((h->uh_flags & UDT_HELLO_STATS) && h->uh_version == UDT_VERSION) {
		dt_ingest_stats(fd);
		if (pidfd != -1)
			close(pidfd);
		close(fd);
		return;
	}
	/* Parents, from memory: no worker, no wait (dt_ingest_kin.c). */
	if ((h->uh_flags & UDT_HELLO_KIN) && h->uh_version == UDT_VERSION) {
		dt_ingest_kin(fd, cr, rq);
		if (pidfd != -1)
			close(pidfd);
		close(fd);
		return;
	}
	/*
	 * A maps query waits on the process it names: its owner's worker.
	 * A helper's question (UDT_HELLO_KARM) costs dtd its work for the
	 * asker, whoever the pid's owner: the asker's, so that no one
	 * fills another user's queue by naming that user's pids; one with
	 * both flags is refused when served (dt_ingest_karm()), on the
	 * asker's queue too.
	 */
	if ((h->uh_flags & (UDT_HELLO_MAPS | UDT_HELLO_KARM)) ==
	    UDT_HELLO_MAPS && rq->umr_pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d", (int)rq->umr_pid);
		if (stat(path, &st) == 0)
			key = (uint32_t)st.st_uid;
	}
	if ((j = calloc(1, sizeof(*j))) != NULL) {
		j->j_work.wk_fn = dti_serve_run;
		j->j_fd = fd;
		j->j_pidfd = pidfd;
		j->j_cred = *cr;
		j->j_hello = *h;
		j->j_since = dt_clock_ns(CLOCK_MONOTONIC);
		if (h->uh_flags & (UDT_HELLO_MAPS | UDT_HELLO_KARM))
			j->j_req = *rq;
		if ((error = dt_wq_submit(dti_serve_wq, key, &j->j_work)) == 0)
			return;
		free(j);
	}
	dt_ingest_refused(cr, error == EAGAIN ? "its user has too many hellos "
	    "being served" : "dtd cannot serve it now");
	if (pidfd != -1)
		close(pidfd);
	close(fd);
}

static void *
dti_accept_main(void *arg)
{
	(void)arg;
	dt_ingest_accept(dti_listen, dti_tlisten, dti_wake[0]);
	return NULL;
}

/* --- start and stop ------------------------------------------------- */

int
dt_ingest_begin(const char *path)
{
	struct sockaddr_un sun;
	struct rlimit rl;
	pthread_attr_t attr;
	pthread_t adopt;
	bool adopting = false;
	int error, fd;

	if (path == NULL || *path == '\0')
		path = UDT_SOCKET_DEFAULT;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "dtd: ingest socket path too long: %s\n", path);
		return ENAMETOOLONG;
	}
	snprintf(dti_path, sizeof(dti_path), "%s", path);
	/*
	 * A quarter of dtd's descriptors for one user's tracees, so three
	 * others can always attach too (dtd raised its soft limit to the
	 * hard one at start).  A tracee holds three until its ring is
	 * proven: its pidfd, its memory and its map.
	 */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 1024;
	dti_uid_max = rl.rlim_cur / 12 > 16 ?
	    (unsigned int)(rl.rlim_cur / 12) : 16;
	if ((error = dt_ingest_listen(path, &fd, &dti_tlisten)) != 0)
		return error;
	dti_listen = fd;
	if (pipe2(dti_wake, O_CLOEXEC) != 0) {
		error = errno;
		goto fail;
	}
	atomic_store(&dti_stop, 0);
	if ((error = dti_look_begin()) != 0 || (error = dti_wait_begin()) != 0)
		goto fail;
	if (dti_serve_wq == NULL && (dti_serve_wq = dt_wq_new("dtd-serve",
	    DTI_SERVE_UID)) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	dt_tsc_calibrate();
	/* Once per dtd: sources are never freed. */
	if (dti_seq == NULL)
		dti_seq = dt_source_add("ingest");
	if ((error = pthread_create(&dti_drain_thr, NULL, dti_drain_main,
	    NULL)) != 0)
		goto fail;
	if ((error = pthread_create(&dti_accept_thr, NULL, dti_accept_main,
	    NULL)) != 0) {
		atomic_store(&dti_stop, 1);
		dti_kick();
		pthread_join(dti_drain_thr, NULL);
		goto fail;
	}
	dti_running = 1;
	if (pthread_attr_init(&attr) == 0) {
		adopting = pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED) == 0 && pthread_create(&adopt,
		    &attr, dti_adopt_main, NULL) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!adopting)
		(void)dti_adopt_main(NULL);
	return 0;
fail:
	close(dti_listen);
	dti_listen = -1;
	if (dti_tlisten != -1)
		close(dti_tlisten);
	dti_tlisten = -1;
	dt_ingest_unlisten();
	return error;
}

void
dt_ingest_end(void)
{
	struct dti_proc *dp;

	if (!dti_running)
		return;
	atomic_store(&dti_stop, 1);
	dti_kick();
	(void)write(dti_wake[1], "x", 1);
	pthread_join(dti_accept_thr, NULL);
	/*
	 * A serve still waiting on its tracee (killably) may link a proc
	 * after the list below is freed: it is only leaked, dtd is ending.
	 */
	if (dt_wq_stop(dti_serve_wq, 1000) != 0)
		fprintf(stderr, "dtd: ingest: a hello is still waiting on its "
		    "process; leaving it\n");
	dt_wq_free(dti_serve_wq);
	dti_serve_wq = NULL;
	dti_rt_drop();
	pthread_join(dti_drain_thr, NULL);
	/* What the garbage was: a word for the log, where there was any. */
	if (dti_garbage() != 0)
		fprintf(stderr, "dtd: ingest: %llu slots of garbage: %llu "
		    "given up by their producers, %llu skipped uncommitted "
		    "(%llu of them claimed by a thread), %llu not valid, "
		    "%llu in rings discarded\n",
		    (unsigned long long)dti_garbage(),
		    (unsigned long long)atomic_load(&dti_stats.gvoid),
		    (unsigned long long)atomic_load(&dti_stats.gstuck),
		    (unsigned long long)atomic_load(&dti_stats.gclaimed),
		    (unsigned long long)atomic_load(&dti_stats.ginvalid),
		    (unsigned long long)atomic_load(&dti_stats.gdiscard));
	/* No more drains: the drain holds nothing back. */
	if (dti_seq != NULL)
		dt_source_idle(dti_seq);
	dti_look_end();
	close(dti_listen);
	if (dti_tlisten != -1)
		close(dti_tlisten);
	dti_tlisten = -1;
	close(dti_wake[0]);
	close(dti_wake[1]);
	dt_ingest_unlisten();
	pthread_mutex_lock(&dti_lock);
	while ((dp = dti_procs) != NULL) {
		dti_procs = dp->dp_next;
		/* Nobody drains this ring any more: stop its samplers. */
		if (dti_sample_put != NULL)
			dti_prof_store(dp->dp_tab, 0);
		dti_free(dp);
	}
	pthread_mutex_unlock(&dti_lock);
	dt_pm_clear();
	dti_running = 0;
}
