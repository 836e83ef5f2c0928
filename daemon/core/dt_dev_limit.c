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
 * What opens may hold: dt(4) allocates an open's per-CPU rings when the
 * device is opened, and fails with ENOMEM when the kernel has no memory
 * left.  dtd's rings are its own memory, so it keeps the sum of every
 * open's rings under a cap (--max-memory; by default the machine's RAM:
 * rings are committed only as events pass through them, so the cap
 * counts what they may come to hold, and a quarter of RAM would refuse
 * a second default-sized open on a small machine) and refuses an open
 * beyond it with ENOMEM, and no user but
 * root may hold more than dcf_maxopens opens (EMFILE), so that one
 * member of the device's group cannot take all of it; the last quarter
 * of the memory is root's, so the group together cannot lock root out.
 * Refusals are logged with the memory in use.
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_limit_init() before any open
 *	[l]	dt_limit_lock
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dt_pidmaps.h"
#include "dt_softc.h"

#define DT_LIMIT_NHASH		64	/* uid buckets */

struct dt_uidopens {
	LIST_ENTRY(dt_uidopens)	 du_link;	/* [l] */
	uid_t			 du_uid;	/* [l] */
	unsigned int		 du_opens;	/* [l] */
};

static pthread_mutex_t	 dt_limit_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, dt_uidopens) dt_limit_uids[DT_LIMIT_NHASH];	/* [l] */
static uint64_t		 dt_limit_mem;		/* [l] rings' bytes now */
static uint64_t		 dt_limit_umem;		/* [l] of them, not root's */
static uint64_t		 dt_limit_maxmem;	/* [I] */
static unsigned int	 dt_limit_maxopens;	/* [I] */

void
dt_limit_init(uint64_t maxmem, unsigned int maxopens)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	if (maxmem == 0)
		maxmem = pages > 0 && psize > 0 ?
		    (uint64_t)pages * (uint64_t)psize : 1ULL << 30;
	dt_limit_maxmem = maxmem;
	dt_limit_maxopens = maxopens != 0 ? maxopens : DT_OPENS_DEFAULT;
}

uint64_t
dt_limit_maxmem_get(void)
{
	return dt_limit_maxmem;
}

static struct dt_uidopens *
dt_limit_find(uid_t uid, int create)
{
	struct dt_uidopens *du;
	unsigned int h = (unsigned int)uid % DT_LIMIT_NHASH;

	LIST_FOREACH(du, &dt_limit_uids[h], du_link)
		if (du->du_uid == uid)
			return du;
	if (!create || (du = calloc(1, sizeof(*du))) == NULL)
		return NULL;
	du->du_uid = uid;
	LIST_INSERT_HEAD(&dt_limit_uids[h], du, du_link);
	return du;
}

/* Take mem bytes for cr if the caps allow.  0 or ENOMEM.  Under [l]. */
static int
dt_limit_take(const struct dt_cred *cr, uint64_t mem, const char *what)
{
	uint64_t max = cr->dc_uid == 0 ? dt_limit_maxmem :
	    dt_limit_maxmem / 4 * 3;
	uint64_t used = cr->dc_uid == 0 ? dt_limit_mem : dt_limit_umem;

	if (mem > max || used > max - mem ||
	    dt_limit_mem > dt_limit_maxmem - mem) {
		fprintf(stderr, "dtd: %s by uid %u refused (ENOMEM): it "
		    "needs %llu bytes, %llu of --max-memory %llu are in use "
		    "(%llu by users other than root, who may use %llu); the "
		    "mappings kept of traced processes take %llu more, "
		    "within --maps-memory\n",
		    what, (unsigned)cr->dc_uid, (unsigned long long)mem,
		    (unsigned long long)dt_limit_mem,
		    (unsigned long long)dt_limit_maxmem,
		    (unsigned long long)dt_limit_umem,
		    (unsigned long long)(dt_limit_maxmem / 4 * 3),
		    (unsigned long long)dt_pm_bytes());
		return ENOMEM;
	}
	dt_limit_mem += mem;
	if (cr->dc_uid != 0)
		dt_limit_umem += mem;
	return 0;
}

static void
dt_limit_give(const struct dt_cred *cr, uint64_t mem)
{
	dt_limit_mem -= mem;
	if (cr->dc_uid != 0)
		dt_limit_umem -= mem;
}

int
dt_limit_open(const struct dt_cred *cr, uint64_t mem)
{
	struct dt_uidopens *du = NULL;
	int error = 0;

	pthread_mutex_lock(&dt_limit_lock);
	if (cr->dc_uid != 0) {
		if ((du = dt_limit_find(cr->dc_uid, 1)) == NULL) {
			error = ENOMEM;
			goto out;
		}
		if (du->du_opens >= dt_limit_maxopens) {
			fprintf(stderr, "dtd: open by uid %u refused (EMFILE): "
			    "it holds %u opens, the most one user may\n",
			    (unsigned)cr->dc_uid, du->du_opens);
			error = EMFILE;
			goto out;
		}
	}
	if ((error = dt_limit_take(cr, mem, "open")) != 0)
		goto out;
	if (du != NULL)
		du->du_opens++;
out:
	if (du != NULL && du->du_opens == 0) {
		LIST_REMOVE(du, du_link);
		free(du);
	}
	pthread_mutex_unlock(&dt_limit_lock);
	return error;
}

void
dt_limit_close(const struct dt_cred *cr, uint64_t mem)
{
	struct dt_uidopens *du;

	pthread_mutex_lock(&dt_limit_lock);
	dt_limit_give(cr, mem);
	if (cr->dc_uid != 0 && (du = dt_limit_find(cr->dc_uid, 0)) != NULL &&
	    --du->du_opens == 0) {
		LIST_REMOVE(du, du_link);
		free(du);
	}
	pthread_mutex_unlock(&dt_limit_lock);
}

int
dt_limit_charge(const struct dt_cred *cr, uint64_t mem)
{
	int error;

	pthread_mutex_lock(&dt_limit_lock);
	error = dt_limit_take(cr, mem, "memory beyond an open's rings");
	pthread_mutex_unlock(&dt_limit_lock);
	return error;
}

void
dt_limit_uncharge(const struct dt_cred *cr, uint64_t mem)
{
	pthread_mutex_lock(&dt_limit_lock);
	dt_limit_give(cr, mem);
	pthread_mutex_unlock(&dt_limit_lock);
}

uint64_t
dt_limit_mem_used(void)
{
	uint64_t mem;

	pthread_mutex_lock(&dt_limit_lock);
	mem = dt_limit_mem;
	pthread_mutex_unlock(&dt_limit_lock);
	return mem;
}
