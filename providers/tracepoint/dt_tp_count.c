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
 * Counts in the kernel: one counting perf event per CPU for one pcb
 * (dt_tp_count.h).  A counter's value only grows while it is open, so
 * what it counted since the last read is its value less the last one.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_tpcnt_start()
 *	[c]	the core's counter registry lock (dt_aggctr's dac_sync)
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_tp_count.h"
#include "dt_tp_filt.h"
#include "dt_tp_var.h"

struct dt_tpcnt_cpu {
	int		 tcc_fd;	/* [I] -1: offline */
	uint64_t	 tcc_last;	/* [c] value folded so far */
};

struct dt_tpcnt {
	struct dt_aggctr	 tcn_ctr;	/* first: dac_sync's cast */
	unsigned int		 tcn_ncpu;	/* [I] */
	bool			 tcn_tree;	/* [I] a tree's, one counter */
	struct dt_tpcnt_cpu	 tcn_cpus[];
};

/* dac_sync: fold what each CPU's counter counted since the last call. */
static void
dt_tpcnt_sync(struct dt_aggctr *c)
{
	struct dt_tpcnt *tc = (struct dt_tpcnt *)c;
	struct dt_tpcnt_cpu *cc;
	uint64_t v;
	unsigned int i;

	for (i = 0; i < tc->tcn_ncpu; i++) {
		cc = &tc->tcn_cpus[i];
		/* a counter's read fails only for a bad descriptor */
		if (cc->tcc_fd == -1 ||
		    read(cc->tcc_fd, &v, sizeof(v)) != (ssize_t)sizeof(v) ||
		    v <= cc->tcc_last)
			continue;
		dt_pcb_fold_kcount(c->dac_dp, i, v - cc->tcc_last);
		cc->tcc_last = v;
	}
}

static void
dt_tpcnt_close(struct dt_tpcnt *tc)
{
	unsigned int i;

	for (i = 0; i < tc->tcn_ncpu; i++)
		if (tc->tcn_cpus[i].tcc_fd != -1)
			close(tc->tcn_cpus[i].tcc_fd);
	free(tc);
}

/* tc's counters of tracepoint id under filter ("": none), disabled. */
static int
dt_tpcnt_open(struct dt_tpcnt *tc, int id, const char *filter)
{
	struct perf_event_attr attr;
	unsigned int i, nopen = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.disabled = 1;	/* sample_period 0: a counter */
	for (i = 0; i < tc->tcn_ncpu; i++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)i, -1,
		    PERF_FLAG_FD_CLOEXEC);
		if (fd == -1) {
			/* an offline CPU has nothing to count */
			if (errno == ENODEV)
				continue;
			return errno;
		}
		tc->tcn_cpus[i].tcc_fd = fd;
		if (filter[0] != '\0' &&
		    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) == -1)
			return errno;
		nopen++;
	}
	return nopen == 0 ? ENODEV : 0;
}

bool
dt_tpcnt_off(void)
{
	const char *env = getenv("USERDT_KCOUNT");

	return env != NULL && strcmp(env, "0") == 0;
}

int
dt_tpcnt_tree(struct dt_pcb *dp, const struct dt_tp_probe *tpp,
    struct dt_tp_src *src, pid_t pid)
{
	struct perf_event_attr attr;
	struct dt_tpcnt *tc;
	char *filter;
	int fd;

	if (dt_tpcnt_off() || tpp->tpp_kcount == NULL || tpp->tpp_nsrcs != 1 ||
	    dp->dp_fop != 0 || dp->dp_priv != NULL ||
	    (filter = dt_tp_filt_pcb(src, dp, tpp->tpp_kcount, 0)) == NULL)
		return EOPNOTSUPP;
	if ((tc = calloc(1, sizeof(*tc) + sizeof(tc->tcn_cpus[0]))) == NULL) {
		free(filter);
		return ENOMEM;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)src->tps_fmt.dtfm_id;
	/*
	 * Off until the root's exec, then in it and in all it forks: what
	 * it forked before (a launcher's helper) inherits it off, until an
	 * exec of its own would turn its copy on (the helper never execs).
	 */
	attr.disabled = 1;
	attr.inherit = 1;
	attr.enable_on_exec = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd == -1 || (filter[0] != '\0' &&
	    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) == -1)) {
		if (fd != -1)
			close(fd);
		free(filter);
		free(tc);
		return EOPNOTSUPP;
	}
	free(filter);
	tc->tcn_ncpu = 1;
	tc->tcn_tree = true;
	tc->tcn_cpus[0].tcc_fd = fd;
	tc->tcn_ctr.dac_dp = dp;
	tc->tcn_ctr.dac_sync = dt_tpcnt_sync;
	dp->dp_priv = tc;
	return 0;
}

/*
 * A tree's counter (dt_tpcnt_tree()) counts for dp from now on.  It is
 * never turned on or off by hand: an ioctl would reach every inherited
 * copy, the helper's that must stay off among them.  A start takes its
 * value as the base, a stop its last (dt_tpcnt_stop()); between them,
 * unregistered, what it counts is no one's.
 */
static bool
dt_tpcnt_tree_start(struct dt_pcb *dp)
{
	struct dt_tpcnt *tc = dp->dp_priv;
	struct dt_tpcnt_cpu *cc = &tc->tcn_cpus[0];

	atomic_store(&dp->dp_srccount, true);
	if (read(cc->tcc_fd, &cc->tcc_last, sizeof(uint64_t)) !=
	    (ssize_t)sizeof(uint64_t))
		cc->tcc_last = 0;
	dt_aggctr_add(&tc->tcn_ctr);
	return true;
}

bool
dt_tpcnt_start(struct dt_pcb *dp, const struct dt_tp_probe *tpp,
    struct dt_tp_src *src)
{
	struct dt_tpcnt *tc;
	unsigned int i, ncpu;
	char *filter;
	long n;

	if (dp->dp_priv != NULL)
		return dt_tpcnt_tree_start(dp);
	if (dt_tpcnt_off() || tpp->tpp_kcount == NULL ||
	    tpp->tpp_nsrcs != 1 || !dt_pcb_kcount_ok(dp) ||
	    (filter = dt_tp_filt_pcb(src, dp, tpp->tpp_kcount, 0)) == NULL)
		return false;
	n = sysconf(_SC_NPROCESSORS_CONF);
	ncpu = n > 0 ? (unsigned int)n : 1;
	if ((tc = calloc(1, sizeof(*tc) + ncpu * sizeof(tc->tcn_cpus[0]))) ==
	    NULL) {
		free(filter);
		return false;
	}
	tc->tcn_ncpu = ncpu;
	for (i = 0; i < ncpu; i++)
		tc->tcn_cpus[i].tcc_fd = -1;
	tc->tcn_ctr.dac_dp = dp;
	tc->tcn_ctr.dac_sync = dt_tpcnt_sync;
	/* refused (policy, a filter): the sampled event, which says why */
	if (dt_tpcnt_open(tc, src->tps_fmt.dtfm_id, filter) != 0) {
		free(filter);
		dt_tpcnt_close(tc);
		return false;
	}
	free(filter);
	for (i = 0; i < ncpu; i++)
		if (tc->tcn_cpus[i].tcc_fd != -1 && ioctl(tc->tcn_cpus[i].tcc_fd,
		    PERF_EVENT_IOC_ENABLE, 0) == -1) {
			dt_tpcnt_close(tc);
			return false;
		}
	/*
	 * From here no event of the stream goes to dp; the counts start
	 * at what the counters say now, so no event is counted twice
	 * (one in the few instructions between is counted by neither, as
	 * one between two pcbs' starts is by only one of them).
	 */
	atomic_store(&dp->dp_srccount, true);
	for (i = 0; i < ncpu; i++)
		if (tc->tcn_cpus[i].tcc_fd != -1 &&
		    read(tc->tcn_cpus[i].tcc_fd, &tc->tcn_cpus[i].tcc_last,
		    sizeof(uint64_t)) != (ssize_t)sizeof(uint64_t))
			tc->tcn_cpus[i].tcc_last = 0;
	dt_aggctr_add(&tc->tcn_ctr);
	dp->dp_priv = tc;
	return true;
}

void
dt_tpcnt_stop(struct dt_pcb *dp)
{
	struct dt_tpcnt *tc = dp->dp_priv;
	unsigned int i;

	if (tc == NULL)
		return;
	/* a tree's stays on, its root's exec perhaps passed: see above */
	if (tc->tcn_tree) {
		dt_aggctr_del(&tc->tcn_ctr);
		return;
	}
	for (i = 0; i < tc->tcn_ncpu; i++)
		if (tc->tcn_cpus[i].tcc_fd != -1)
			(void)ioctl(tc->tcn_cpus[i].tcc_fd,
			    PERF_EVENT_IOC_DISABLE, 0);
	/* the last read: every event up to the stop is the open's */
	dt_aggctr_del(&tc->tcn_ctr);
	dt_tpcnt_close(tc);
	/*
	 * dp_srccount stays set: dp is still on its probe's list, and a
	 * record another open's sampled event still holds of an event the
	 * counter counted must not reach dp (dt_record_start() clears it).
	 */
	dp->dp_priv = NULL;
}

void
dt_tpcnt_free(struct dt_pcb *dp)
{
	struct dt_tpcnt *tc = dp->dp_priv;

	if (tc != NULL && tc->tcn_tree) {
		dt_tpcnt_close(tc);
		dp->dp_priv = NULL;
	}
}
