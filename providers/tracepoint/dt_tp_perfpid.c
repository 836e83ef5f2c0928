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
 * The events of one process's (a pid filter's, dt_tp_pid.c): on its
 * threads (dt_tpev_open_threads()) or as a program's output
 * (dt_tpev_open_out()), opened by dt_tp_perf.c's dt_tpev_open_on() and
 * read by its reader as the shared events are.
 *
 * Locks: dt_tp_perf_var.h's.
 */
#include <sys/ioctl.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_perfev.h"
#include "dt_tp_perf.h"
#include "dt_tp_perf_var.h"

/*
 * The other threads' events of dt_tpev_open_threads(), tids[1..n-1] on
 * every CPU ev has a buffer on, writing into it.  A thread gone before
 * it is reached is left out (ESRCH): it makes no event any more.
 * 0 or an errno.  [I], before the reader knows ev.
 */
int
dt_tpev_open_xtids(struct dt_tpev *ev, struct perf_event_attr *attr,
    const pid_t *tids, unsigned int n, int *clk)
{
	struct dt_tpev_cpu *c;
	unsigned int i, j;
	int fd;

	if (n < 2)
		return 0;
	if ((ev->tpe_xfds = malloc((size_t)(n - 1) * ev->tpe_ncpu *
	    sizeof(int))) == NULL)
		return ENOMEM;
	ev->tpe_nxfds = (n - 1) * ev->tpe_ncpu;
	for (i = 0; i < ev->tpe_nxfds; i++)
		ev->tpe_xfds[i] = -1;
	for (j = 1; j < n; j++)
		for (i = 0; i < ev->tpe_ncpu; i++) {
			c = &ev->tpe_cpus[i];
			if (c->tpc_meta == NULL)
				continue;
			if ((fd = dt_perf_open_pid(attr, tids[j], (int)i, clk,
			    NULL)) == -1) {
				if (errno == ESRCH)
					break;
				return errno;
			}
			ev->tpe_xfds[(j - 1) * ev->tpe_ncpu + i] = fd;
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->tpc_fd) ==
			    -1)
				return errno;
		}
	return 0;
}

struct dt_tpev *
dt_tpev_open_threads(const struct dt_tpev_pmu *pmu, uint64_t evtflags,
    const pid_t *tids, unsigned int n, dt_tpev_fn fn, void *arg,
    void (*release)(void *), int *error)
{
	if (n == 0) {
		if (release != NULL)
			release(arg);
		*error = EINVAL;
		return NULL;
	}
	return dt_tpev_open_on(pmu, evtflags, tids, n, true, fn, arg,
	    release, error);
}

struct dt_tpev *
dt_tpev_open_out(int id, uint64_t evtflags, dt_tpev_fn fn, void *arg,
    void (*release)(void *), int *tpfd, int *error)
{
	struct dt_tpev_pmu pmu = { .tpm_type = PERF_TYPE_SOFTWARE,
	    .tpm_config = PERF_COUNT_SW_BPF_OUTPUT };
	struct perf_event_attr attr;
	struct dt_tpev *ev;
	pid_t all = -1;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int i;

	/*
	 * The tracepoint's event first, through the clock rules: a BPF
	 * output event takes CLOCK_REALTIME, which a tracepoint's refuses
	 * (not NMI-safe), and the two kinds must share one clock.
	 */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	*tpfd = -1;
	for (i = 0; i < (n > 0 ? n : 1) && *tpfd == -1; i++)
		if ((*tpfd = dt_perf_open_pid(&attr, -1, i, &dt_tpev_clockid,
		    NULL)) == -1 && errno != ENODEV)
			break;
	if (*tpfd == -1) {
		*error = errno;
		if (release != NULL)
			release(arg);
		return NULL;
	}
	ev = dt_tpev_open_on(&pmu, evtflags | DT_TPEV_OUT, &all, 1, false,
	    fn, arg, release, error);
	if (ev == NULL) {
		close(*tpfd);
		*tpfd = -1;
	}
	return ev;
}

int
dt_tpev_fd(const struct dt_tpev *ev, unsigned int cpu)
{
	if (cpu >= ev->tpe_ncpu || ev->tpe_cpus[cpu].tpc_meta == NULL)
		return -1;
	return ev->tpe_cpus[cpu].tpc_fd;
}
