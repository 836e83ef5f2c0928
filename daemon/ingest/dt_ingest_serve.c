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
 * A tracee's hello answered, on the worker of its user
 * (dt_ingest_dispatch()): the one place a process becomes a tracee, so
 * the one place its word is weighed before dtd spends anything on it
 * (its version, its user's cap, its image), and where the ring and
 * table it gets are made so that it cannot harm dtd through them.  The
 * other hellos are answered from here too: dtd's counters, and a maps
 * query (dt_ingest_maps.c).  The lock annotations are dt_ingest.c's.
 */
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_ingest_var.h"
#include "dt_pidmaps.h"
#include "dt_proc.h"

void
dti_copy_fresh(void *dst, const void *src, size_t len)
{
	/* memcmp() against it: a loop over bytes showed in profiles. */
	static const unsigned char zeros[4096];
	const unsigned char *s = src;
	unsigned char *d = dst;
	size_t n;

	while (len > 0) {
		/* Up to the end of dst's page: the unit a write costs. */
		n = 4096 - ((uintptr_t)d & 4095);
		if (n > len)
			n = len;
		if (memcmp(s, zeros, n) != 0)
			memcpy(d, s, n);
		d += n;
		s += n;
		len -= n;
	}
}

/*
 * The log's rate limit is per kind of refusal (its text, digits left
 * out): a flood of one kind (a full hello queue) must not hide the
 * first of another (a user's tracee cap).  Kinds past DTI_NKINDS share
 * the last slot.
 */
#define DTI_NKINDS	16
static pthread_mutex_t	dti_kind_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t		dti_kind_hash[DTI_NKINDS];	/* [dti_kind_lock] */
static uint64_t		dti_kind_n[DTI_NKINDS];		/* [dti_kind_lock] */

static uint64_t
dti_kind_count(const char *why)
{
	uint32_t h = 2166136261u;
	uint64_t n;
	unsigned int i;

	for (; *why != '\0'; why++)
		if (*why < '0' || *why > '9')
			h = (h ^ (unsigned char)*why) * 16777619u;
	h |= 1;		/* 0 marks a free slot */
	pthread_mutex_lock(&dti_kind_lock);
	for (i = 0; i < DTI_NKINDS - 1; i++)
		if (dti_kind_hash[i] == h || dti_kind_hash[i] == 0)
			break;
	dti_kind_hash[i] = h;
	n = ++dti_kind_n[i];
	pthread_mutex_unlock(&dti_kind_lock);
	return n;
}

void
dt_ingest_refused(const struct ucred *cr, const char *why)
{
	uint64_t n, k;

	n = atomic_fetch_add(&dti_stats.refused, 1) + 1;
	/* Every one counts; a flood must not flood the log too. */
	k = dti_kind_count(why);
	if (k <= 16 || (k & (k - 1)) == 0)
		fprintf(stderr, "dtd: ingest: closed pid %d (uid %u) before "
		    "its hello: %s (%llu of this kind, %llu in all)\n",
		    (int)cr->pid, (unsigned)cr->uid, why,
		    (unsigned long long)k, (unsigned long long)n);
}

void
dt_ingest_stats(int fd)
{
	struct udt_stats st;

	memset(&st, 0, sizeof(st));
	st.us_magic = UDT_MAGIC;
	st.us_procs = atomic_load(&dti_stats.procs);
	st.us_attached = atomic_load(&dti_stats.attached);
	st.us_records = atomic_load(&dti_stats.records);
	st.us_garbage = dti_garbage();
	st.us_lost = atomic_load(&dti_stats.lost);
	st.us_recur = atomic_load(&dti_stats.recur);
	st.us_adopted = atomic_load(&dti_stats.adopted);
	st.us_refused = atomic_load(&dti_stats.refused);
	st.us_forged = atomic_load(&dti_stats.forged);
	st.us_misnamed = atomic_load(&dti_stats.misnamed);
	st.us_maps_bytes = dt_pm_bytes();
	st.us_maps_evicted = dt_pm_evicted();
	st.us_sysprobes = atomic_load(&dti_nsysenab);
	/* A fresh socket's buffer takes it whole: never waits. */
	(void)send(fd, &st, sizeof(st), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void
dti_send_error(int fd, int error)
{
	struct udt_welcome w;

	memset(&w, 0, sizeof(w));
	w.uw_magic = UDT_MAGIC;
	w.uw_version = UDT_VERSION;
	w.uw_error = (uint32_t)error;
	(void)send(fd, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/*
 * The executable mappings of the snapshot just read, for the tracee's
 * coverage check at its start (udt_tab.tb_xmaps): its own read of
 * /proc/self/maps, two calls, spared; its files' identities
 * (tb_xfiles), a stat each; and which file mappings have no private
 * page (tb_xclean), its pagemap's open and reads.  Only of a tracee with
 * one thread when all were read, that thread waiting for the welcome: it
 * maps nothing executable but its own after, which it knows, and writes
 * no text before its images are mapped.  Left unsaid when there are
 * more than the table lists.  The serving thread, before the table is
 * the tracee's.
 */
static void
dti_xmaps_tell(struct udt_tab *tab, pid_t pid, const struct dt_pm_snap *snap)
{
	const struct dt_pm_map *m;
	struct udt_xfile *xf;
	size_t i, nf = 0;
	uint64_t npg, budget = DT_PROC_PRIV_MAX;
	char path[64];
	int pmfd = -1;

	if (snap == NULL || snap->ps_n == 0 || snap->ps_n > UDT_XMAPS_MAX)
		return;
	for (i = 0; i < snap->ps_n; i++) {
		m = &snap->ps_maps[i];
		tab->tb_xmaps[i][0] = m->pm_start;
		tab->tb_xmaps[i][1] = m->pm_end;
		/*
		 * Whether its pages are the file's, for the library's images
		 * (udt_img_touched()): file mappings only (an image is of a
		 * file), DT_PROC_PRIV_MAX pages in all, so that a tracee
		 * with many or huge mappings costs the serving thread a
		 * bounded read (the rest unsaid: the library reads them).
		 * The pagemap's descriptor is opened at the first, a denied
		 * open (a tracee not dumpable) leaves all unsaid.
		 */
		npg = (m->pm_end - m->pm_start) / 4096;
		if (m->pm_path != NULL && npg <= budget && pmfd != -2) {
			budget -= npg;
			if (pmfd == -1) {
				snprintf(path, sizeof(path),
				    "/proc/%d/pagemap", (int)pid);
				if ((pmfd = open(path, O_RDONLY |
				    O_CLOEXEC)) < 0)
					pmfd = -2;
			}
			if (pmfd >= 0 && dt_proc_private(pmfd, m->pm_start,
			    m->pm_end) == 0)
				tab->tb_xclean[i / 64] |= 1ULL << (i % 64);
		}
		/*
		 * And the identity of the files among them, for the keys of
		 * its plans (a stat each it need not make): those stat'd
		 * as the very file mapped, in this read.
		 */
		if (!m->pm_exact || nf == UDT_XFILES_MAX)
			continue;
		xf = &tab->tb_xfiles[nf++];
		xf->xf_lo = m->pm_start;
		xf->xf_hi = m->pm_end;
		xf->xf_size = m->pm_size;
		xf->xf_dev = m->pm_dev;
		xf->xf_ino = m->pm_ino;
		xf->xf_mtime = m->pm_mtime;
		xf->xf_mtimens = m->pm_mtimens;
		xf->xf_ctime = m->pm_ctime;
		xf->xf_ctimens = m->pm_ctimens;
	}
	if (pmfd >= 0)
		close(pmfd);
	tab->tb_xfiles_n = (uint32_t)nf;
	tab->tb_xmaps_n = (uint32_t)snap->ps_n;
}

static int
dti_send_fds(int fd, const struct udt_welcome *w, int fd0, int fd1)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct iovec iov = { (void *)w, sizeof(*w) };
	struct msghdr msg;
	struct cmsghdr *c;
	int fds[2] = { fd0, fd1 };

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) ==
	    (ssize_t)sizeof(*w) ? 0 : -1;
}

/*
 * Does cr's user already have as many tracees attached as one user may?
 * Each holds a descriptor in dtd (its pidfd) and a ring: without a cap,
 * one user's thousand processes take the descriptors every other user's
 * tracees need.  Root's are not capped.  Refusals are counted and
 * logged.  The serve worker of cr's user, which serves that user's
 * hellos one at a time, so the count holds; takes [L].
 */
static bool
dti_uid_full(const struct ucred *cr)
{
	struct dti_proc *dp;
	unsigned int n = 0;
	char why[96];

	if (cr->uid == 0)
		return false;
	pthread_mutex_lock(&dti_lock);
	for (dp = dti_procs; dp != NULL; dp = dp->dp_next)
		if (dp->dp_uid == cr->uid && !dp->dp_dead &&
		    !atomic_load(&dp->dp_retired))
			n++;
	pthread_mutex_unlock(&dti_lock);
	if (n < dti_uid_max)
		return false;
	snprintf(why, sizeof(why), "its user has %u tracees attached, the "
	    "most one user may", n);
	dt_ingest_refused(cr, why);
	return true;
}

void
dt_ingest_serve(int fd, const struct ucred *crp, int peerfd,
    const struct udt_hello *hp, const struct udt_maps_req *rq)
{
	struct timeval tv = { 1, 0 };
	struct udt_welcome w;
	struct dti_proc *dp = NULL, *op;
	void *ring = NULL, *tab = NULL;
	struct dti_rt rt = { NULL, 0, -1, -1, -1 };
	int pidfd = -1, mapsfd = -1;
	struct dt_proc_stat ps;
	struct dt_proc_status pst;
	bool stok = false;
	bool xdrain, quiet, psok, watched;
	unsigned int i;
	uint32_t nslots;
	char path[64];

	/*
	 * Every answer but a ring's leaves here through fail_pidfd: the
	 * pidfd accept took is ours to close, whatever flags the peer
	 * set, or a flood of answered hellos eats dtd's descriptors.
	 */
	if (hp->uh_version != UDT_VERSION) {
		dti_send_error(fd, EPROTONOSUPPORT);
		goto fail_pidfd;
	}
	if (hp->uh_flags & UDT_HELLO_STATS) {
		dt_ingest_stats(fd);
		goto fail_pidfd;
	}
	if (hp->uh_flags & UDT_HELLO_KARM) {
		dt_ingest_karm(fd, crp, hp, rq);
		goto fail_pidfd;
	}
	if (hp->uh_flags & UDT_HELLO_MAPS) {
		/*
		 * A map may not fit the socket's buffer: it goes out at
		 * once, unless a peer does not read it.  The other answers
		 * are one small message on a socket that sent nothing yet,
		 * which always has room: sent without waiting, no timeout
		 * to set (a call less a hello).
		 */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		dt_ingest_maps(fd, crp->uid, rq);
		goto fail_pidfd;
	}
	if (!(hp->uh_flags & UDT_HELLO_TRACEE) ||
	    hp->uh_nprobes != DT_SYS_NPROBES) {
		/* A preload library from another build: other systab. */
		dti_send_error(fd, EPROTO);
		goto fail_pidfd;
	}

	if (dti_uid_full(crp)) {
		dti_send_error(fd, EUSERS);
		goto fail_pidfd;
	}
	pidfd = peerfd != -1 ? peerfd :
	    (int)syscall(SYS_pidfd_open, crp->pid, 0);
	peerfd = -1;
	if (pidfd < 0) {
		/* gone already; else refused, and said (EMFILE: dtd's) */
		if (errno != ESRCH) {
			dti_send_error(fd, errno);
			dt_ingest_refused(crp, "dtd could not hold a pidfd of "
			    "it");
		}
		return;
	}
	/*
	 * The image that connected must be the one we hand the ring to: a
	 * process that exec'd a set-id program since (a helper it forked
	 * keeping the socket) would have its records stamped with that
	 * program's pid.
	 */
	if (!dt_ingest_image_ok(crp->pid, crp->uid, crp->gid, crp->gid,
	    pidfd, false)) {
		dt_ingest_refused(crp, "it exec'd a set-id program after "
		    "connecting");
		dti_send_error(fd, EPERM);
		close(pidfd);
		return;
	}
	if ((dp = calloc(1, sizeof(*dp))) == NULL)
		goto fail;
	dp->dp_memfd = -1;
	/* Made before its hello came, mostly (dt_ingest_spare.c). */
	if (dti_rt_take(&rt) != 0)
		goto fail;
	nslots = rt.rt_nslots;
	ring = rt.rt_span;
	tab = (char *)rt.rt_span + dti_ringspan(nslots);

	dp->dp_pid = crp->pid;
	dp->dp_uid = crp->uid;
	dp->dp_gid = dp->dp_rgid = crp->gid;
	dp->dp_pidfd = pidfd;
	/* Its image's memory, which an exec ends (dti_image_same()). */
	if (crp->uid != 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)crp->pid);
		dp->dp_memfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	/* Its CPU so far (the budget's start) and its name, in one read. */
	psok = dt_proc_stat(crp->pid, &ps) == 0;
	/* Its parent, for a btrace that finds both gone (udt_kin). */
	if (psok)
		dt_ingest_kin_note(crp->pid, crp->uid, &ps);
	dti_budget_init(dp, psok ? ps.ps_cpu : 0);
	/* Unguessable: only the image's own memory may echo it. */
	if (dp->dp_memfd >= 0) {
		/* Its map, of the same image: where it maps the ring. */
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)crp->pid);
		mapsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (getrandom(&dp->dp_proof, sizeof(dp->dp_proof), 0) !=
		    (ssize_t)sizeof(dp->dp_proof))
			goto fail;
	}
	if (dp->dp_memfd >= 0 &&
	    (dp->dp_chk = dti_chk_new(dp, mapsfd, rt.rt_ringfd)) == NULL)
		goto fail;
	mapsfd = -1;
	dp->dp_ring = ring;
	dp->dp_nslots = nslots;
	dp->dp_tab = tab;
	dp->dp_ring->rh_magic = UDT_MAGIC;
	dp->dp_ring->rh_nslots = nslots;
	dp->dp_ring->rh_nprobes = DT_SYS_NPROBES;
	dp->dp_ring->rh_proof = dp->dp_proof;
	dp->dp_tab->tb_magic = UDT_MAGIC;
	dp->dp_tab->tb_nprobes = DT_SYS_NPROBES;
	memcpy(dp->dp_tab->tb_sock, dti_path, sizeof(dp->dp_tab->tb_sock));
	/*
	 * Its mappings now, while it waits for the welcome: a process that
	 * exits right after must still resolve (design decision 9).  The
	 * one step of a handshake that waits on something else: a read of
	 * /proc/PID/maps (the tracee's mmap lock) and a stat per mapped
	 * file, but for those of mappings the cache already holds under
	 * this pid (an exec'd image re-attaching).  Others wait that long
	 * in the poll set.
	 */
	/*
	 * Its start time from the stat read above (dt_pm_stime()'s form:
	 * starttime + 1, 0 for a zombie); its pidfd says after the read
	 * that the maps were its own.
	 */
	/*
	 * Its status, for its library's start, which then reads no
	 * /proc/self/status (udt_wire.h): it waits for the welcome from
	 * its hello on, so a thread count of 1 read now is that one
	 * thread, blocked, and holds for the maps read next, which the
	 * table then lists (dti_xmaps_tell()).  Unreadable or odd, the
	 * tracee reads both itself.
	 */
	stok = dt_proc_status(crp->pid, &pst) == 0;
	/* A group it may take again unprivileged: setgid(getgid()). */
	if (stok && pst.pst_gid[1] == crp->gid)
		dp->dp_rgid = pst.pst_gid[0];
	dt_pm_track_attach_pidfd(&dp->dp_maps, dp->dp_pid, dp->dp_uid,
	    dp->dp_pidfd, psok && ps.ps_state != 'Z' && ps.ps_state != 'X' ?
	    ps.ps_start + 1 : 0);
	dti_who_init(dp, psok ? ps.ps_comm : NULL);
	if (stok && pst.pst_threads == 1)
		dti_xmaps_tell(dp->dp_tab, dp->dp_pid, dp->dp_maps.pt_snap);

	/*
	 * Copy the enable bytes and join the list in one go, so no
	 * DTIOCRECORD between the two is missed.  An older image of the
	 * same process (it exec'd) is retired: drained once more, freed.
	 */
	/*
	 * Once listed, dp is the drain thread's, which frees it as soon as
	 * the process is seen gone (a tracee that gave up waiting): nothing
	 * below the unlock may touch it.
	 */
	xdrain = dp->dp_memfd >= 0;
	/*
	 * Before it is listed, so that the welcome comes after (the
	 * threads it starts after it was told are its own), and so that
	 * the drain, which may unlink it as soon as it is listed, tells
	 * its exit after its attach.
	 */
	for (i = 0; i < dti_nattach; i++)
		dti_attach[i](crp->pid, dp->dp_foreign);
	/* Where its library says what it maps after this (the stack cut). */
	dt_untrace_track(&dp->dp_untrace, dp->dp_pid, dp->dp_ring);
	pthread_mutex_lock(&dti_lock);
	/*
	 * Nothing enabled (dti_nenab is [L]): its ring stays empty until an
	 * enable, which kicks the drain itself, and the drain, with nothing
	 * enabled, tells the sequencer it holds nothing back at every pass
	 * whatever it drains.  So neither a pass now nor a wake of the
	 * source: both cost a traced tree a wakeup of the drain and of the
	 * sequencer's thread a process.  Unless an older image goes: its
	 * proc is freed by a pass; or its exit will not wake the drain,
	 * whose passes must then go on to reap it.
	 */
	quiet = atomic_load(&dti_nenab) == 0;
	dti_copy_fresh(dp->dp_tab->tb_enab, dti_enab, sizeof(dti_enab));
	dti_filt_copy(dp->dp_tab);
	dti_sagg_copy(dp->dp_tab);
	dp->dp_tab->tb_prof_nsecs = dti_prof_nsecs;
	dp->dp_tab->tb_lossless = dti_lossless;
	for (op = dti_procs; op != NULL; op = op->dp_next) {
		dti_exec_inherit(dp, op);
		if (op->dp_pid == dp->dp_pid) {
			atomic_store(&op->dp_retired, 1);
			quiet = false;
		}
	}
	dp->dp_next = dti_procs;
	__atomic_store_n(&dti_procs, dp, __ATOMIC_RELEASE);
	/*
	 * Its exit wakes the drain, which need not poll for it: watched
	 * once listed, so that a drain its exit wakes finds it to reap.
	 */
	watched = dti_wait_exit(dp->dp_pidfd);
	quiet = quiet && watched;
	/*
	 * An idle drain source (no tracee until now) is done with every
	 * time up to the clock, and stays so until the drain's next pass:
	 * a reader that asked after this one's calls and exit, and before
	 * that pass, had neither its counts nor its records.  Its records
	 * are stamped after the welcome below.
	 */
	if (dti_seq != NULL && !quiet)
		dt_source_wake(dti_seq, dt_clock_ns(CLOCK_REALTIME));
	pthread_mutex_unlock(&dti_lock);
	if (!quiet)
		dti_kick();
	atomic_fetch_add(&dti_stats.procs, 1);

	memset(&w, 0, sizeof(w));
	w.uw_magic = UDT_MAGIC;
	w.uw_version = UDT_VERSION;
	w.uw_nslots = nslots;
	w.uw_flags = (dt_tsc_ok() ? UDT_W_TSC : 0) |
	    (dti_sample_put != NULL ? UDT_W_PTIMER | UDT_W_EAGER : 0) |
	    (dti_eager ? UDT_W_EAGER : 0) |
	    (xdrain ? UDT_W_XDRAIN : 0);
	w.uw_ringsize = UDT_RING_SIZE(nslots);
	w.uw_tabsize = UDT_TAB_SIZE;
	w.uw_pid = crp->pid;
	if (stok) {
		w.uw_stflags = UDT_WST_OK;
		w.uw_nspid = pst.pst_nspid;
		w.uw_threads = pst.pst_threads;
		w.uw_tracer = pst.pst_tracer;
		w.uw_sigcgt = pst.pst_sigcgt;
		w.uw_sigblk = pst.pst_sigblk;
	}
	/* On failure the proc stays listed until its pidfd says it exited. */
	if (dti_send_fds(fd, &w, rt.rt_ringfd, rt.rt_rofd) == 0)
		atomic_fetch_add(&dti_stats.attached, 1);
	/* The span is dp's now, the drain's to unmap. */
	close(rt.rt_ringfd);
	close(rt.rt_tabfd);
	close(rt.rt_rofd);
	/* The next tracee's, while this one runs on. */
	dti_rt_refill();
	/* Its parents dtd never heard from, while they wait for it. */
	if (psok)
		dt_ingest_kin_above(ps.ps_ppid);
	return;
fail:
	/*
	 * Counted with the other refusals: a user's flood of hellos can hold
	 * enough of dtd's descriptors that a memfd fails here.
	 */
	dt_ingest_refused(crp, "dtd could not make its ring and table");
	dti_send_error(fd, ENOMEM);
	dti_rt_free(&rt);
	if (mapsfd >= 0)
		close(mapsfd);
	if (pidfd >= 0)
		close(pidfd);
	if (dp != NULL && dp->dp_chk != NULL)
		dti_chk_put(dp->dp_chk);
	else if (dp != NULL && dp->dp_memfd >= 0)
		close(dp->dp_memfd);
	free(dp);
	return;
fail_pidfd:
	if (peerfd != -1)
		close(peerfd);
}
