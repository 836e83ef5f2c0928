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
 * dtd's profile service: decides how the profile provider samples and
 * says so, and keeps /dev/ksyms (dtd_conf.dcf_ksyms) in place while dtd
 * runs, since OpenBSD's btrace reads kernel symbols from nowhere else.
 *
 * Concurrency contract: ds_start and ds_stop run once each on dtd's main
 * thread (struct dtd_service); nothing here is shared with other threads
 * except through dt_perf_disable(), which is atomic.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dt_ksyms.h"
#include "dt_perf.h"
#include "dt_proc.h"
#include "dt_ptimer.h"
#include "dtd.h"

static bool	dt_profile_ksyms_made;	/* [main] image to remove at stop */
static struct dt_ksyms_stats dt_profile_ksyms;	/* [main] which one */

static int
dt_profile_ksyms_start(void)
{
	struct dt_ksyms_stats *st = &dt_profile_ksyms;
	char err[512];
	int error;

	if (dtd_conf.dcf_ksyms == NULL)
		return 0;
	/*
	 * The image holds the kernel's addresses as root reads them, which
	 * kptr_restrict hides from everyone else: only the device's users
	 * may read it.
	 */
	error = dt_ksyms_write(DT_KALLSYMS, dtd_conf.dcf_ksyms, dtd_dev_uid(),
	    dtd_dev_gid(), dtd_dev_mode(), st, err, sizeof(err));
	if (error != 0 && dtd_conf.dcf_ksyms_set) {
		fprintf(stderr, "dtd: ksyms: %s (--no-ksyms to go without)\n",
		    err);
		return error;
	}
	/*
	 * The default place may be read-only (a container's /dev): kernel
	 * symbols are a convenience for OpenBSD's btrace, not worth the
	 * whole device.  A path the user named is another matter.
	 */
	if (error != 0) {
		fprintf(stderr, "dtd: ksyms: %s; going on without %s "
		    "(--ksyms PATH to put it elsewhere)\n", err,
		    dtd_conf.dcf_ksyms);
		return 0;
	}
	dt_profile_ksyms_made = true;
	if (st->dks_hidden)
		fprintf(stderr, "dtd: ksyms: %s hides kernel addresses "
		    "(kptr_restrict); %s has no symbols, kernel stacks print "
		    "as addresses\n", DT_KALLSYMS, dtd_conf.dcf_ksyms);
	return 0;
}

/* Perf refused or absent (--profile auto): the tracees sample. */
static void
dt_profile_timer(int error, const char *why)
{
	dt_perf_disable(error);
	dt_ptimer_enable();
	fprintf(stderr, "dtd: profile: timer mode (%s): preloaded processes "
	    "sample their threads' CPU time, user stacks only\n", why);
}

/*
 * Root's perf samples every CPU.  Without root perf samples only tasks,
 * the user's own, user space only, where perf_event_paranoid allows it
 * (2 or less): task mode.  Else the timer fallback (--profile perf: an
 * error).
 */
static int
dt_profile_start(void)
{
	char why[128], paranoid[16] = "?";
	int error;

	if ((error = dt_profile_ksyms_start()) != 0)
		return error;
	if (dtd_conf.dcf_profile == DTD_PROFILE_TIMER) {
		dt_profile_timer(EOPNOTSUPP, "--profile timer");
		return 0;
	}
	if (!dtd_conf.dcf_unpriv && (error = dt_perf_probe()) == 0) {
		fprintf(stderr, "dtd: profile: perf cpu-clock sampling, "
		    "%s timestamps\n", dt_perf_clock());
		return 0;
	}
	if (dtd_conf.dcf_unpriv && (error = dt_perf_task_probe()) == 0) {
		fprintf(stderr, "dtd: profile: perf cpu-clock sampling of "
		    "your traced processes' threads, user stacks only\n");
		return 0;
	}
	if (dtd_conf.dcf_unpriv) {
		(void)dt_proc_read("/proc/sys/kernel/perf_event_paranoid",
		    paranoid, sizeof(paranoid));
		paranoid[strcspn(paranoid, "\n")] = '\0';
		snprintf(why, sizeof(why), "perf refuses to sample your "
		    "processes: %s, perf_event_paranoid %s", strerror(error),
		    paranoid);
	} else
		snprintf(why, sizeof(why), "perf_event_open refused: %s",
		    strerror(error));
	if (dtd_conf.dcf_profile == DTD_PROFILE_PERF) {
		fprintf(stderr, "dtd: profile: --profile perf: %s\n", why);
		return error;
	}
	dt_profile_timer(error, why);
	return 0;
}

static void
dt_profile_stop(void)
{
	struct dt_perf_stats st;
	int error;

	/* The core's dtpv_fini already ran or will: idempotent. */
	dt_perf_shutdown();
	dt_perf_stats(&st);
	if (st.dps_samples > 0)
		fprintf(stderr, "dtd: profile: %llu samples in %llu wakeups; "
		    "missed: %llu lost by perf, %llu throttled, %llu late\n",
		    (unsigned long long)st.dps_samples,
		    (unsigned long long)st.dps_wakeups,
		    (unsigned long long)st.dps_lost,
		    (unsigned long long)st.dps_throttled,
		    (unsigned long long)st.dps_skipped);
	if (!dt_profile_ksyms_made)
		return;
	/* Another dtd may have installed its own since: leave that one. */
	if ((error = dt_ksyms_remove(dtd_conf.dcf_ksyms,
	    &dt_profile_ksyms)) != 0)
		fprintf(stderr, "dtd: ksyms: %s: %s\n", dtd_conf.dcf_ksyms,
		    strerror(error));
	dt_profile_ksyms_made = false;
}

const struct dtd_service dt_profile_service = {
	.ds_name	= "profile",
	.ds_start	= dt_profile_start,
	.ds_stop	= dt_profile_stop,
};
