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
 * The kernel feed of the syscall probes (dt_ksys.h, issue 22): every
 * process's system calls from raw_syscalls:sys_enter and sys_exit, for
 * the processes the preload library does not trace, so that
 * syscall:NAME:entry counts every process as on OpenBSD.
 *
 * One perf event per CPU per direction, open while some syscall probe of
 * that direction records, with a kernel filter on the call numbers being
 * recorded ("id == 39 || ..."; past DT_TK_MAXIDS numbers, every call),
 * what their opens pushed (tid, comm: "(id == 39 && (comm == \"x\"))")
 * and on dtd's own pid, so that neither the machine's other calls nor
 * dtd's reading of them reach dtd.  The reader checks the number again
 * (a record may come before the filter took effect on its CPU) and
 * drops the events of processes the library records (dt_ksys_traced()).
 * Events carry what the kernel gives: the six registers at entry, the
 * result at return (-1 and errno for -4095..-1), pid, tid, CPU, time,
 * comm, and kernel or user stacks when asked (perf callchains); no
 * strings (DTEVT_STRINGS entries come from the library alone).
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by dt_tp_ksys_init() during dt_dev_init()
 *	[K]	the core's configuration lock (dt_ksys_set_fn)
 *	[R]	the perf reader thread, inside rcu_read_lock()
 *	[a]	atomic: written under [K], read by [R]
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_ksys.h"
#include "dt_tp_filt.h"
#include "dt_tp_ksys.h"
#include "dt_tp_task.h"
#include "dt_tp_var.h"
#include "systab.h"

#define DT_TK_MAXIDS	64	/* numbers a filter names, at most */
#define DT_TK_FILTERLEN	4096	/* a page: what the kernel takes */

struct dt_tk_dir {
	const char		*tk_event;	/* [I] sys_enter, sys_exit */
	struct dt_tp_format	 tk_fmt;	/* [I] */
	const struct dt_tp_field *tk_id;	/* [I] */
	const struct dt_tp_field *tk_val;	/* [I] args, ret */
	bool			 tk_ok;		/* [I] the kernel has it */
	struct dt_tpev		*tk_ev;		/* [K] open while tk_non */
	uint64_t		 tk_evflags;	/* [K] stacks tk_ev walks */
	unsigned int		 tk_non;	/* [K] calls recording */
	int			 tk_lasterr;	/* [K] last error logged */
	int			 tk_filterr;	/* [K] last refusal logged */
	char			 tk_filter[DT_TK_FILTERLEN];	/* [K] set */
	/* [a] the recording probe of each Linux number, NULL: none */
	struct dt_probe *_Atomic tk_probe[SYSTAB_LINUX_MAX];
	uint64_t		 tk_flags[SYSTAB_LINUX_MAX];	/* [K] */
};

static pid_t		dt_tk_self;		/* [I] dtd's pid */

static struct dt_tk_dir	dt_tk_dirs[2] = {	/* entry, return */
	{ .tk_event = "sys_enter" },
	{ .tk_event = "sys_exit" },
};

bool
dt_tp_ksys_note(const struct dt_tp_sample *s)
{
	if (s->ts_comm == NULL)
		return false;
	dt_tp_task_rename(s->ts_tid, s->ts_pid, s->ts_comm, s->ts_ns);
	/* Before this CPU's records of the new image. */
	if (s->ts_exec)
		dt_ksys_exec(s->ts_pid);
	return true;
}

long
dt_tp_ksys_call(unsigned int dir, const struct dt_tp_sample *s)
{
	const struct dt_tk_dir *d = &dt_tk_dirs[dir & 1];
	long id;

	if (s->ts_swin || s->ts_raw == NULL)
		return -1;
	id = (long)dt_tp_num(d->tk_id, s->ts_raw, s->ts_rawlen);
	return id >= 0 && id < SYSTAB_LINUX_MAX ? id : -1;
}

void
dt_tp_ksys_build(unsigned int dir, const struct dt_probe *dtp,
    uint64_t flags, const struct dt_tp_sample *s, struct dt_evt *ev)
{
	const struct dt_tk_dir *d = &dt_tk_dirs[dir & 1];
	uint64_t v;
	unsigned int i, off;
	long ret;

	dt_tp_evt_begin(ev, s, flags, true);
	if (d == &dt_tk_dirs[0]) {
		/* args is unsigned long[6]: the registers, as the hook's. */
		for (i = 0; i < dtp->dtp_nargs && i < 6; i++) {
			off = d->tk_val->dtf_off + 8 * i;
			if (off + 8 > s->ts_rawlen)
				break;
			memcpy(&v, (const char *)s->ts_raw + off, 8);
			ev->dtev_args[i] = (register_t)v;
		}
	} else {
		ret = (long)dt_tp_num(d->tk_val, s->ts_raw, s->ts_rawlen);
		if (ret < 0 && ret > -4096) {
			ev->dtev_retval[0] = -1;
			ev->dtev_error = (int32_t)-ret;
		} else
			ev->dtev_retval[0] = ret;
	}
}

int
dt_tp_ksys_evid(unsigned int dir)
{
	const struct dt_tk_dir *d = &dt_tk_dirs[dir & 1];

	return d->tk_ok ? d->tk_fmt.dtfm_id : -1;
}

/* A record of dir, for the probe recording its call.  [R] */
static void
dt_tk_sample(void *arg, const struct dt_tp_sample *s)
{
	struct dt_tk_dir *d = arg;
	struct dt_probe *dtp;
	struct dt_pcb *dp;
	struct dt_evt ev;
	uint64_t flags;
	unsigned int i;
	long id;

	if (s->ts_lost > 0) {
		/* Whose records perf lost is unknown: every recording one. */
		for (i = 0; i < SYSTAB_LINUX_MAX; i++)
			if ((dtp = atomic_load_explicit(&d->tk_probe[i],
			    memory_order_relaxed)) != NULL)
				cds_list_for_each_entry_rcu(dp,
				    &dtp->dtp_pcbs, dp_pnext)
					if (!(dp->dp_evtflags &
					    DTEVT_LAUNCHED) &&
					    !atomic_load_explicit(&dp->dp_knot,
					    memory_order_relaxed))
						dt_pcb_count_dropevt(dp,
						    s->ts_cpu, s->ts_lost);
		return;
	}
	if (dt_tp_ksys_note(s))
		return;
	if ((id = dt_tp_ksys_call((unsigned int)(d - dt_tk_dirs), s)) < 0 ||
	    (dtp = atomic_load_explicit(&d->tk_probe[id],
	    memory_order_acquire)) == NULL)
		return;
	/*
	 * dtd's own threads: the filter's common_pid is a thread's id, and
	 * names only the main thread's, while the readers' looks at /proc
	 * (naming the processes of these very events) are other threads'
	 * calls; dtd stands for the kernel, whose work no syscall probe
	 * shows on OpenBSD.
	 */
	if (s->ts_pid == dt_tk_self)
		return;
	/* The library's processes: its events, with strings and stacks. */
	if (dt_ksys_traced(s->ts_pid, s->ts_ns))
		return;
	flags = atomic_load_explicit(&dtp->dtp_evtflags, memory_order_relaxed);
	dt_tp_ksys_build((unsigned int)(d - dt_tk_dirs), dtp, flags, s, &ev);
	/*
	 * To every open recording dtp but those that asked for the
	 * launched processes' events alone (DTEVT_LAUNCHED, dtvar.h): a
	 * tree's (DTEVT_TREE, which implies it) has its own feed
	 * (dt_tp_ksystree.c), so none is counted twice; nor to those a
	 * kernel program counts (dp_knot, dt_tp_ksysbpf.c).
	 */
	rcu_read_lock();
	cds_list_for_each_entry_rcu(dp, &dtp->dtp_pcbs, dp_pnext)
		if (!(dp->dp_evtflags & DTEVT_LAUNCHED) &&
		    !atomic_load_explicit(&dp->dp_knot, memory_order_relaxed))
			dt_seq_put(dt_tpev_source(), dp, s->ts_cpu, &ev);
	rcu_read_unlock();
}

/* dt_fsrc_can_fn: ftrace knows the thread, not what the hook makes of
   its arguments (an array field) or its result (errno folded). */
static bool
dt_tk_can(const struct dt_probe *dtp, const struct dtioc_filter_term *t,
    void *arg)
{
	(void)dtp;
	(void)arg;
	return dt_tp_filt_task(t);
}

/*
 * The filter for d's recording calls, and never dtd's own (its reads
 * of these very buffers would feed them): each call's number with what
 * its opens pushed (DTIOCPRBFILTER) where ftrace can compare it, and
 * no number whose opens all asked for the launched processes alone
 * (DTEVT_LAUNCHED).  Past DT_TK_MAXIDS numbers, or when the whole does
 * not fit, the numbers alone or none.  [K]
 */
static void
dt_tk_filter(struct dt_tk_dir *d, char *buf, size_t len, bool pushed)
{
	struct dt_probe *dtp;
	struct dt_fsrc fs;
	char *expr;
	size_t n;
	unsigned int i;
	bool first = true;

	n = (size_t)snprintf(buf, len, "common_pid != %d", (int)getpid());
	if (d->tk_non > DT_TK_MAXIDS)
		return;
	n += (size_t)snprintf(buf + n, len - n, " && (");
	for (i = 0; i < SYSTAB_LINUX_MAX && n < len; i++) {
		if ((dtp = atomic_load_explicit(&d->tk_probe[i],
		    memory_order_relaxed)) == NULL)
			continue;
		expr = NULL;
		if (pushed) {
			dt_fsrc_init(&fs);
			dt_fsrc_or_probe(&fs, dtp, NULL, DTEVT_LAUNCHED,
			    dt_tk_can, NULL);
			if (fs.fs_kind == DT_FSRC_NONE)
				continue;
			if (fs.fs_kind == DT_FSRC_SOME)
				expr = dt_tp_filt_expr(&fs, NULL);
		}
		if (expr != NULL)
			n += (size_t)snprintf(buf + n, len - n,
			    "%s(id == %u && (%s))", first ? "" : " || ", i,
			    expr);
		else
			n += (size_t)snprintf(buf + n, len - n, "%sid == %u",
			    first ? "" : " || ", i);
		free(expr);
		first = false;
	}
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s)",
		    first ? "common_pid < 0" : "");
	if (n >= len && pushed)
		dt_tk_filter(d, buf, len, false);
}

/* Open d's event on every CPU with stacks want, unfiltered.  [K] */
static void
dt_tk_open(struct dt_tk_dir *d, uint64_t want)
{
	int error;

	/* Closed first: a gap, never an event twice. */
	if (d->tk_ev != NULL)
		dt_tpev_close(d->tk_ev);
	d->tk_filter[0] = '\0';
	d->tk_ev = dt_tpev_open(d->tk_fmt.dtfm_id, want, dt_tk_sample, d,
	    &error);
	d->tk_evflags = want;
	if (d->tk_ev == NULL) {
		if (error != d->tk_lasterr)
			fprintf(stderr, "dtd: syscall: raw_syscalls:%s: cannot "
			    "open (%s): syscall probes see only processes "
			    "started under dtrun or btrace -c\n", d->tk_event,
			    strerror(error));
		d->tk_lasterr = error;
		return;
	}
	d->tk_lasterr = 0;
}

/*
 * dt_ksys_set_fn: open, reopen with more stacks, refilter or close the
 * direction's event after a syscall probe started or stopped recording.
 * dt(4) cannot fail a start: where the kernel's events will not open,
 * the probe sees the launcher's processes alone, said once per cause.
 * The kernel sets an event's filter once: a filter that keeps more (a
 * call, or an open, started) reopens the event; one that would keep
 * less (a probe stopped) waits for that.  A stopping pcb is still on
 * its probe's list, so the filter of a probe that still records does
 * not change at its stop.  [K]
 */
static void
dt_tk_set(unsigned int p, struct dt_probe *dtp, bool on, uint64_t evtflags)
{
	struct dt_tk_dir *d = &dt_tk_dirs[p & 1];
	const struct systab_ent *se;
	char filter[DT_TK_FILTERLEN];
	uint64_t want = 0;
	unsigned int i, lin;
	int error;

	if (p / 2 >= SYSTAB_COUNT || !d->tk_ok)
		return;
	se = &systab[p / 2];
	lin = se->se_linux;
	if (lin >= SYSTAB_LINUX_MAX)
		return;
	if ((atomic_load_explicit(&d->tk_probe[lin], memory_order_relaxed) !=
	    NULL) != on)
		d->tk_non += on ? 1 : -1;
	atomic_store_explicit(&d->tk_probe[lin], on ? dtp : NULL,
	    memory_order_release);
	d->tk_flags[lin] = on ? evtflags : 0;
	if (d->tk_non == 0) {
		if (d->tk_ev != NULL)
			dt_tpev_close(d->tk_ev);
		d->tk_ev = NULL;
		d->tk_evflags = 0;
		d->tk_filter[0] = '\0';
		return;
	}
	for (i = 0; i < SYSTAB_LINUX_MAX; i++)
		want |= d->tk_flags[i] & (DTEVT_KSTACK | DTEVT_USTACK);
	if (d->tk_ev == NULL || (want & ~d->tk_evflags) != 0)
		dt_tk_open(d, want);
	if (d->tk_ev == NULL)
		return;
	dt_tk_filter(d, filter, sizeof(filter), true);
	if (strcmp(filter, d->tk_filter) == 0)
		return;
	if (d->tk_filter[0] != '\0') {
		/* Still wider than what records now. */
		if (!on)
			return;
		dt_tk_open(d, want);
		if (d->tk_ev == NULL)
			return;
	}
	/* Unfiltered, the reader still keeps only the recording calls. */
	if ((error = dt_tpev_filter(d->tk_ev, filter)) != 0) {
		if (error != d->tk_filterr)
			fprintf(stderr, "dtd: syscall: raw_syscalls:%s: filter "
			    "refused (%s): every call is read\n", d->tk_event,
			    strerror(error));
		d->tk_filterr = error;
		return;
	}
	d->tk_filterr = 0;
	memcpy(d->tk_filter, filter, sizeof(filter));
}

void
dt_tp_ksys_init(void)
{
	struct dt_tk_dir *d;
	unsigned int i;
	bool any = false;

	/* OpenBSD's syscall probes are root's view; without root, none. */
	if (geteuid() != 0 || !dt_ksys_scope_all())
		return;
	dt_tk_self = getpid();
	for (i = 0; i < 2; i++) {
		d = &dt_tk_dirs[i];
		if (dt_tracefs_format("raw_syscalls", d->tk_event,
		    &d->tk_fmt) != 0)
			continue;
		d->tk_id = dt_tp_field(&d->tk_fmt, "id");
		d->tk_val = dt_tp_field(&d->tk_fmt, i == 0 ? "args" : "ret");
		d->tk_ok = d->tk_id != NULL && d->tk_val != NULL &&
		    (i == 1 || d->tk_val->dtf_size == 8);
		any |= d->tk_ok;
	}
	if (any)
		dt_ksys_feed(dt_tk_set);
	/* Counts in the kernel, where both directions can be read. */
	if (dt_tk_dirs[0].tk_ok && dt_tk_dirs[1].tk_ok)
		dt_tp_ksysbpf_init(dt_tk_dirs[0].tk_id->dtf_off,
		    dt_tk_dirs[1].tk_id->dtf_off, dt_tk_dirs[0].tk_val->dtf_off,
		    dt_tk_dirs[1].tk_val->dtf_size == 8 ?
		    dt_tk_dirs[1].tk_val->dtf_off : 0);
	/* A tree's own, where both directions can be read. */
	if (dt_tk_dirs[0].tk_ok && dt_tk_dirs[1].tk_ok)
		dt_tp_ksystree_init();
}
