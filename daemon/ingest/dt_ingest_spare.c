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
 * A tracee's ring and table, made before its hello comes.  A tracee
 * waits for its welcome with its start held (udt_await()), and making the
 * pair is a dozen system calls (a reservation, two memfds with their
 * mode, size, seals and mapping, the table's read-only descriptor) and
 * two page faults: a spare, made after each welcome is sent by a thread
 * that runs when a CPU is idle, takes them off the next one's wait.
 *
 * A spare is never anyone's before it is handed out, and handed out once:
 * a ring a tracee had is never given again (its fork children may still
 * map it), so spares are only ever fresh.  One at a time: a traced tree
 * starts its processes one after the other, and the serve workers of
 * several users refill it as they go.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"
#include "dt_ingest_var.h"

#define DTI_NRTS	1

static pthread_mutex_t	 dti_rts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dti_rt	 dti_rts[DTI_NRTS];	/* [dti_rts_lock] */
static unsigned int	 dti_nrts;		/* [dti_rts_lock] */

/*
 * A sealed memfd of size bytes, mapped read-write in dtd at at, which
 * must be in a reservation of dtd's own (dti_span()).  The seals
 * keep a tracee holding the descriptor from shrinking it under dtd's
 * mapping (which would turn dtd's next access into SIGBUS).  mode is the
 * inode's (root's): a memfd is born 0777, and anyone holding a
 * descriptor, even a read-only one, may open it again through
 * /proc/self/fd/N with what the mode allows.
 */
static int
dti_memfd(const char *name, size_t size, mode_t mode, void *at)
{
	void *p;
	int fd;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
	    != 0)
		goto fail;
	p = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
	    0);
	if (p == MAP_FAILED)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * A new pair of UDT_NSLOTS_DEFAULT slots into rt: 0, or -1 with nothing
 * held.  Both in one span of dtd's address space, the table right after
 * the ring: the drain unmaps them in one call (dti_unmap()), one TLB
 * shootdown across dtd's CPUs at the tracee's exit, not two.  The ring
 * is the tracee's to write.  The table is dtd's word to the tracee:
 * 0400, so a tracee that is not root can neither open its read-only
 * descriptor again for writing nor map it writable.  No write seal:
 * F_SEAL_FUTURE_WRITE would also stop the next dtd, after a restart,
 * from mapping the table to set tb_reconnect (dt_ingest_adopt.c), and
 * root, who alone passes the mode, can write any process's memory
 * anyway.  Any thread.
 */
static int
dti_rt_make(struct dti_rt *rt)
{
	uint32_t nslots = UDT_NSLOTS_DEFAULT;
	char path[64];

	memset(rt, 0, sizeof(*rt));
	rt->rt_ringfd = rt->rt_tabfd = rt->rt_rofd = -1;
	rt->rt_span = mmap(NULL, dti_span(nslots), PROT_NONE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rt->rt_span == MAP_FAILED) {
		rt->rt_span = NULL;
		return -1;
	}
	rt->rt_nslots = nslots;
	rt->rt_ringfd = dti_memfd(UDT_RING_MEMFD, UDT_RING_SIZE(nslots), 0600,
	    rt->rt_span);
	rt->rt_tabfd = dti_memfd(UDT_TAB_MEMFD, UDT_TAB_SIZE, 0400,
	    (char *)rt->rt_span + dti_ringspan(nslots));
	if (rt->rt_ringfd < 0 || rt->rt_tabfd < 0)
		goto fail;
	/* The tracee gets the table through a read-only descriptor. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rt->rt_tabfd);
	if ((rt->rt_rofd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto fail;
	/*
	 * The first page of each, which every welcome writes (the ring's
	 * header, the table's words): a fault each, a page allocated and
	 * zeroed, here rather than in the tracee's wait.  The rest stays
	 * unallocated until written (dti_copy_fresh()).
	 */
	*(volatile char *)rt->rt_span = 0;
	*((volatile char *)rt->rt_span + dti_ringspan(nslots)) = 0;
	return 0;
fail:
	dti_rt_free(rt);
	return -1;
}

void
dti_rt_free(struct dti_rt *rt)
{
	if (rt->rt_span != NULL)
		munmap(rt->rt_span, dti_span(rt->rt_nslots));
	if (rt->rt_ringfd >= 0)
		close(rt->rt_ringfd);
	if (rt->rt_tabfd >= 0)
		close(rt->rt_tabfd);
	if (rt->rt_rofd >= 0)
		close(rt->rt_rofd);
	memset(rt, 0, sizeof(*rt));
	rt->rt_ringfd = rt->rt_tabfd = rt->rt_rofd = -1;
}

int
dti_rt_take(struct dti_rt *rt)
{
	pthread_mutex_lock(&dti_rts_lock);
	if (dti_nrts > 0) {
		*rt = dti_rts[--dti_nrts];
		pthread_mutex_unlock(&dti_rts_lock);
		return 0;
	}
	pthread_mutex_unlock(&dti_rts_lock);
	return dti_rt_make(rt);
}

/*
 * The spare's maker: a thread of its own at SCHED_IDLE, so that it runs
 * only on a CPU nothing else wants.  Made by the serve worker right after
 * a welcome, the spare held up the very tracee it had just answered,
 * woken on the worker's CPU (its wait's end 35 us late became 140).
 */
static pthread_cond_t	 dti_rts_cv = PTHREAD_COND_INITIALIZER;
static pthread_t	 dti_rts_thr;
static bool		 dti_rts_run;		/* [dti_rts_lock] */
static bool		 dti_rts_stop;	/* [dti_rts_lock] */

static void *
dti_rts_main(void *arg)
{
	struct sched_param sp = { 0 };
	struct dti_rt rt;

	(void)arg;
	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	(void)pthread_setname_np(pthread_self(), "dtd-spare");
	pthread_mutex_lock(&dti_rts_lock);
	for (;;) {
		while (!dti_rts_stop && dti_nrts == DTI_NRTS)
			pthread_cond_wait(&dti_rts_cv, &dti_rts_lock);
		if (dti_rts_stop)
			break;
		pthread_mutex_unlock(&dti_rts_lock);
		if (dti_rt_make(&rt) != 0) {
			/* Out of descriptors or memory: the serve makes its own. */
			pthread_mutex_lock(&dti_rts_lock);
			while (!dti_rts_stop && dti_nrts == 0)
				pthread_cond_wait(&dti_rts_cv,
				    &dti_rts_lock);
			continue;
		}
		pthread_mutex_lock(&dti_rts_lock);
		dti_rts[dti_nrts++] = rt;
	}
	pthread_mutex_unlock(&dti_rts_lock);
	return NULL;
}

void
dti_rt_refill(void)
{
	pthread_mutex_lock(&dti_rts_lock);
	if (!dti_rts_run && !dti_rts_stop)
		dti_rts_run = pthread_create(&dti_rts_thr, NULL,
		    dti_rts_main, NULL) == 0;
	if (dti_nrts < DTI_NRTS)
		pthread_cond_signal(&dti_rts_cv);
	pthread_mutex_unlock(&dti_rts_lock);
}

void
dti_rt_drop(void)
{
	bool run;

	pthread_mutex_lock(&dti_rts_lock);
	dti_rts_stop = true;
	run = dti_rts_run;
	dti_rts_run = false;
	pthread_cond_broadcast(&dti_rts_cv);
	pthread_mutex_unlock(&dti_rts_lock);
	if (run)
		pthread_join(dti_rts_thr, NULL);
	pthread_mutex_lock(&dti_rts_lock);
	while (dti_nrts > 0)
		dti_rt_free(&dti_rts[--dti_nrts]);
	/* A device core started again (its tests) makes spares again. */
	dti_rts_stop = false;
	pthread_mutex_unlock(&dti_rts_lock);
}
