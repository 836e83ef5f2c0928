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
 * The tracepoint provider: Linux kernel tracepoints through perf
 * (design decision 16), published twice over:
 *
 *  - under OpenBSD's names (dt_prov_static.c's tracepoint:FUNC:NAME)
 *    wherever Linux has the event, with OpenBSD's arguments built from
 *    the Linux fields (dt_tp_obsd[] below says how, one decoder each);
 *  - under Linux's names, tracepoint:SUBSYSTEM:EVENT, for the events
 *    people trace most (dt_tp_linux[]), arguments the event's fields in
 *    order, strings carried as DTEVT_STRINGS entries (dtvar.h).
 *
 * Several probes can feed on one Linux event (sched_switch gives
 * on__cpu, off__cpu, sleep, stop, enqueue and dequeue): the event is a
 * source, opened on every CPU while any pcb of any of its probes records
 * and closed with the last (dt_tp_perf.c).  Probes are registered at
 * dt_dev_init() in the tables' order, leaving out the ones this kernel
 * cannot feed, so the list is the same on every start of one kernel.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_prov_tracepoint_init()
 *	[K]	the core's configuration lock (the dtpv_* callbacks)
 *	[R]	the perf reader thread, inside rcu_read_lock()
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <userdt/udt_tpname.h>

#include "dt_prov.h"
#include "dt_tp_count.h"
#include "dt_tp_kbpf.h"
#include "dt_tp_filt.h"
#include "dt_tp_perf.h"
#include "dt_tp_ksys.h"
#include "dt_tp_kt.h"
#include "dt_tp_stk.h"
#include "dt_tp_task.h"
#include "dt_tp_var.h"

/* What a tracepoint pcb keeps of its request (dt(4) masks nothing). */
#define DT_TP_EVTFLAGS	(DTEVT_EXECNAME | DTEVT_USTACK | DTEVT_KSTACK | \
			 DTEVT_FUNCARGS | DTEVT_STRINGS | DTEVT_TREE)

/*
 * Linux events published under their own names (shortened to fit by
 * userdt/udt_tpname.h's rule), in this order.  A name OpenBSD's table
 * already took (raw_syscalls:sys_enter) keeps OpenBSD's meaning.
 */
static const struct {
	const char	*tl_sys;
	const char	*tl_event;
} dt_tp_linux[] = {
	{ "sched", "sched_switch" },
	{ "sched", "sched_wakeup" },
	{ "sched", "sched_wakeup_new" },
	{ "sched", "sched_process_fork" },
	{ "sched", "sched_process_exec" },
	{ "sched", "sched_process_exit" },
	{ "sched", "sched_migrate_task" },
	{ "signal", "signal_generate" },
	{ "signal", "signal_deliver" },
	{ "block", "block_rq_insert" },
	{ "block", "block_rq_issue" },
	{ "block", "block_rq_complete" },
	{ "block", "block_bio_queue" },
	{ "net", "net_dev_queue" },
	{ "net", "net_dev_xmit" },
	{ "net", "netif_receive_skb" },
	{ "net", "netif_rx" },
	{ "timer", "timer_start" },
	{ "timer", "timer_expire_entry" },
	{ "timer", "timer_expire_exit" },
	{ "timer", "hrtimer_start" },
	{ "timer", "hrtimer_expire_entry" },
	{ "timer", "hrtimer_expire_exit" },
	{ "irq", "irq_handler_entry" },
	{ "irq", "irq_handler_exit" },
	{ "irq", "softirq_entry" },
	{ "irq", "softirq_exit" },
	{ "exceptions", "page_fault_user" },
	{ "exceptions", "page_fault_kernel" },
	{ "kmem", "kmalloc" },
	{ "kmem", "kfree" },
	{ "kmem", "mm_page_alloc" },
	{ "kmem", "mm_page_free" },
	{ "task", "task_newtask" },
	{ "task", "task_rename" },
	{ "tcp", "tcp_retransmit_skb" },
};
#define DT_TP_NLINUX	(sizeof(dt_tp_linux) / sizeof(dt_tp_linux[0]))

static int	dt_prov_tp_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	dt_prov_tp_start(struct dt_pcb *);
static void	dt_prov_tp_stop(struct dt_pcb *);
static void	dt_prov_tp_free(struct dt_pcb *);
static int	dt_prov_tp_treecount(struct dt_pcb *, pid_t);
static void	dt_prov_tp_fini(void);

static const struct dt_provider dt_prov_tp = {
	.dtpv_name	= "tracepoint",
	.dtpv_alloc	= dt_prov_tp_alloc,
	.dtpv_start	= dt_prov_tp_start,
	.dtpv_stop	= dt_prov_tp_stop,
	.dtpv_free	= dt_prov_tp_free,
	.dtpv_treecount	= dt_prov_tp_treecount,
	.dtpv_fini	= dt_prov_tp_fini,
};

static struct dt_tp_src	 dt_tp_srcs[DT_TP_MAXSRCS];	/* [I] */
static unsigned int	 dt_tp_nsrcs;			/* [I] */
static struct dt_tp_probe dt_tp_probes[DT_TP_MAXOBSD + DT_TP_NLINUX]; /* [I] */
static unsigned int	 dt_tp_nprobes;			/* [I] */
static struct dt_tp_src	*dt_tp_switch;	/* [I] sched_switch, if decoded */

/* The source called sys:event, read from tracefs on first use. */
static struct dt_tp_src *
dt_tp_src_get(const char *sys, const char *event)
{
	struct dt_tp_src *src;
	unsigned int i;
	int error;

	for (i = 0; i < dt_tp_nsrcs; i++) {
		src = &dt_tp_srcs[i];
		if (strcmp(src->tps_sys, sys) == 0 &&
		    strcmp(src->tps_event, event) == 0)
			return src->tps_fmt.dtfm_id > 0 ? src : NULL;
	}
	if (dt_tp_nsrcs == DT_TP_MAXSRCS)
		return NULL;
	src = &dt_tp_srcs[dt_tp_nsrcs++];
	snprintf(src->tps_sys, sizeof(src->tps_sys), "%s", sys);
	snprintf(src->tps_event, sizeof(src->tps_event), "%s", event);
	if ((error = dt_tracefs_format(sys, event, &src->tps_fmt)) != 0) {
		src->tps_fmt.dtfm_id = 0;
		if (error != ENOENT)
			fprintf(stderr, "dtd: tracepoint: %s:%s: %s\n", sys,
			    event, strerror(error));
		return NULL;
	}
	return src;
}

/* Link tpp to src; false when src feeds too many probes already. */
static bool
dt_tp_link(struct dt_tp_probe *tpp, struct dt_tp_src *src)
{
	if (src->tps_nprobes == DT_TP_SRCPROBES)
		return false;
	src->tps_probes[src->tps_nprobes++] = tpp;
	tpp->tpp_srcs[tpp->tpp_nsrcs++] = src;
	return true;
}

/* A known source with the fields its decoders read, or NULL. */
static struct dt_tp_src *
dt_tp_known_get(int k)
{
	const struct dt_tp_srcdef *d = &dt_tp_known[k];
	struct dt_tp_src *src;
	unsigned int i;

	if ((src = dt_tp_src_get(d->tsd_sys, d->tsd_event)) == NULL)
		return NULL;
	for (i = 0; i < DT_TP_SRCFIELDS && d->tsd_fields[i] != NULL; i++)
		if ((src->tps_f[i] = dt_tp_field(&src->tps_fmt,
		    d->tsd_fields[i])) == NULL)
			return NULL;
	if (k == DT_S_SWITCH)
		dt_tp_switch = src;
	return src;
}

static int
dt_tp_init_obsd(void)
{
	const struct dt_tp_obsd *tob;
	struct dt_tp_src *srcs[DT_TP_PROBESRCS];
	struct dt_tp_probe *tpp;
	unsigned int i, j, n;
	bool ok;

	for (i = 0; i < dt_tp_nobsd && i < DT_TP_MAXOBSD; i++) {
		tob = &dt_tp_obsd[i];
		/* Every source the mapping reads, or no probe. */
		ok = true;
		for (n = 0; n < DT_TP_PROBESRCS && tob->tob_srcs[n] >= 0; n++)
			if ((srcs[n] = dt_tp_known_get(tob->tob_srcs[n])) ==
			    NULL) {
				ok = false;
				break;
			}
		if (!ok || n == 0)
			continue;
		tpp = &dt_tp_probes[dt_tp_nprobes];
		memset(tpp, 0, sizeof(*tpp));
		tpp->tpp_decode = tob->tob_decode;
		tpp->tpp_nostack = tob->tob_nostack;
		tpp->tpp_switchin = tob->tob_switchin;
		tpp->tpp_kcount = tob->tob_kcount;
		for (j = 0; j < n; j++)
			if (!dt_tp_link(tpp, srcs[j]))
				return ENOMEM;
		/* no Linux-named probe reads it: the names are the same */
		if (tob->tob_srcs[0] == DT_S_SYSENTER ||
		    tob->tob_srcs[0] == DT_S_SYSEXIT)
			srcs[0]->tps_sysnum = true;
		if ((tpp->tpp_dtp = dt_dev_alloc_probe(tob->tob_func,
		    tob->tob_name, &dt_prov_tp, tob->tob_nargs)) == NULL)
			return ENOMEM;
		for (j = 0; j < DTMAXARGTYPES; j++)
			tpp->tpp_dtp->dtp_argtype[j] = tob->tob_types[j];
		tpp->tpp_dtp->dtp_priv = tpp;
		dt_tp_nprobes++;
	}
	return 0;
}

static int
dt_tp_init_linux(void)
{
	struct dt_tp_probe *tpp;
	struct dt_tp_src *src;
	const struct dt_tp_field *f;
	char name[DTNAMESIZE];
	unsigned int i, j, nargs;

	for (i = 0; i < DT_TP_NLINUX; i++) {
		udt_tp_shorten(dt_tp_linux[i].tl_sys, dt_tp_linux[i].tl_event,
		    name);
		if (dt_dev_probe_lookup("tracepoint", dt_tp_linux[i].tl_sys,
		    name) != NULL)
			continue;
		if ((src = dt_tp_src_get(dt_tp_linux[i].tl_sys,
		    dt_tp_linux[i].tl_event)) == NULL)
			continue;
		tpp = &dt_tp_probes[dt_tp_nprobes];
		memset(tpp, 0, sizeof(*tpp));
		if (!dt_tp_link(tpp, src))
			return ENOMEM;
		tpp->tpp_kcount = "";	/* fields in order: a record each */
		nargs = src->tps_fmt.dtfm_nfields;
		if (nargs > DTMAXFUNCARGS)
			nargs = DTMAXFUNCARGS;
		if ((tpp->tpp_dtp = dt_dev_alloc_probe(dt_tp_linux[i].tl_sys,
		    name, &dt_prov_tp, (uint8_t)nargs)) == NULL)
			return ENOMEM;
		for (j = 0; j < nargs; j++) {
			f = &src->tps_fmt.dtfm_fields[j];
			tpp->tpp_dtp->dtp_argtype[j] = f->dtf_type;
			if (f->dtf_kind != DT_TPF_NUM)
				tpp->tpp_strings = true;
		}
		tpp->tpp_dtp->dtp_priv = tpp;
		tpp->tpp_dtp->dtp_strings = tpp->tpp_strings;
		dt_tp_nprobes++;
	}
	return 0;
}

int
dt_prov_tracepoint_init(void)
{
	uint32_t before = dt_dev_nprobes();
	int error;

	dt_tp_nprobes = 0;
	dt_tp_nsrcs = 0;
	memset(dt_tp_srcs, 0, sizeof(dt_tp_srcs));
	dt_tp_switch = NULL;
	if ((error = dt_tracefs_init()) != 0) {
		fprintf(stderr, "dtd: tracepoint: no tracefs (%s): no "
		    "tracepoint probes\n", strerror(error));
		return 0;
	}
	/* The syscall probes' view of every process (dt_tp_ksys.c). */
	dt_tp_ksys_init();
	if ((error = dt_tp_init_obsd()) != 0 ||
	    (error = dt_tp_init_linux()) != 0) {
		errno = error;
		return -1;
	}
	return (int)(dt_dev_nprobes() - before);
}

static int
dt_prov_tp_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	int error;

	if ((dtrq->dtrq_evtflags & DTEVT_TREE) &&
	    (error = dt_tp_tree_ok(dtp->dtp_priv, sc)) != 0)
		return error;
	if (dt_pcb_alloc(dtp, sc, dtrq->dtrq_evtflags & DT_TP_EVTFLAGS, 0,
	    -1) == NULL)
		return ENOMEM;
	return 0;
}

/* The numeric fields of a sample.  [R]. */
uint64_t
dt_tp_f(const struct dt_tp_src *src, int i, const struct dt_tp_sample *s)
{
	return dt_tp_num(src->tps_f[i], s->ts_raw, s->ts_rawlen);
}

/* A string field's bytes as a comm (DTMAXCOMLEN, padded). */
void
dt_tp_fcomm(const struct dt_tp_src *src, int i,
    const struct dt_tp_sample *s, char *comm)
{
	const char *p;
	size_t n;

	n = dt_tp_str(src->tps_f[i], s->ts_raw, s->ts_rawlen, &p);
	if (n > DTMAXCOMLEN - 1)
		n = DTMAXCOMLEN - 1;
	memset(comm, 0, DTMAXCOMLEN);
	memcpy(comm, p, n);
}

/* Fields in order; strings give 0 here and travel in *evs's area. */
static void
dt_tp_generic(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev, struct dt_evt *evs)
{
	const struct dt_tp_field *f;
	unsigned char *a = evs != NULL ? DTEV_STR_AREA(evs) : NULL;
	const char *p;
	size_t len, room, off = 0, nstr = 0, share;
	unsigned int i;

	for (i = 0; i < tpp->tpp_dtp->dtp_nargs; i++) {
		f = &src->tps_fmt.dtfm_fields[i];
		if (f->dtf_kind == DT_TPF_NUM)
			ev->dtev_args[i] = (register_t)dt_tp_num(f, s->ts_raw,
			    s->ts_rawlen);
		else
			nstr++;
	}
	if (a == NULL || nstr == 0)
		return;
	memset(a, 0, DTEV_STR_SIZE);
	for (i = 0; i < tpp->tpp_dtp->dtp_nargs; i++) {
		f = &src->tps_fmt.dtfm_fields[i];
		if (f->dtf_kind == DT_TPF_NUM)
			continue;
		/* Space shared fairly; one byte left for the end mark. */
		room = DTEV_STR_SIZE - 1 - off;
		if (room < DTEV_STR_HDR + 1)
			break;
		share = room / nstr--;
		share = share > DTEV_STR_HDR + 1 ? share - DTEV_STR_HDR - 1 : 0;
		if (share > 255)
			share = 255;
		len = dt_tp_str(f, s->ts_raw, s->ts_rawlen, &p);
		a[off] = (unsigned char)(i + 1);
		if (len > share) {
			len = share;
			a[off] |= DTEV_STR_TRUNC;
		}
		a[off + 1] = (unsigned char)len;
		memcpy(a + off + DTEV_STR_HDR, p, len);
		a[off + DTEV_STR_HDR + len] = '\0';
		off += DTEV_STR_HDR + len + 1;
	}
}

/*
 * Whether the shared stream's record stamped ptime (ts_ptime) is for
 * dp: not while its source counts it, unless before the time its own
 * events took over (dp_srcuntil, dt_tp_pid.c).  [R].
 */
static bool
dt_tp_wants(struct dt_pcb *dp, uint64_t ptime)
{
	if (!atomic_load_explicit(&dp->dp_srccount, memory_order_relaxed))
		return true;
	return ptime < atomic_load_explicit(&dp->dp_srcuntil,
	    memory_order_relaxed);
}

/* Put ev, or evs to the opens that asked for strings.  [R], RCU read. */
static void
dt_tp_emit(struct dt_probe *dtp, unsigned int cpu, uint64_t ptime,
    const struct dt_evt *ev, const struct dt_evt *evs)
{
	struct dt_pcb *dp;

	/* In time order with the other buffers' and sources' events. */
	cds_list_for_each_entry_rcu(dp, &dtp->dtp_pcbs, dp_pnext)
		if (dt_tp_wants(dp, ptime))
			dt_seq_put(dt_tpev_source(), dp, cpu, evs != NULL &&
		    (dp->dp_evtflags & DTEVT_STRINGS) ? evs : ev);
}

/*
 * perf's lost records: lost for every open recording the source; for
 * one switched over to its own events, those that may have been lost
 * before the switch: after a sample stamped before it (ts_pfrom).  The
 * lost record's own stamp is when perf found room again, maybe long
 * after: judged by it, losses before the switch told after it were
 * said to no one.  A loss wholly after the switch but after a sample
 * before it is said to the open too: drops said too many, never too
 * few.
 */
static void
dt_tp_lost(struct dt_tp_src *src, const struct dt_tp_sample *s)
{
	struct dt_pcb *dp;
	unsigned int i;

	for (i = 0; i < src->tps_nprobes; i++)
		cds_list_for_each_entry_rcu(dp,
		    &src->tps_probes[i]->tpp_dtp->dtp_pcbs, dp_pnext)
			if (dt_tp_wants(dp, s->ts_pfrom))
				dt_pcb_count_dropevt(dp, s->ts_cpu,
				    s->ts_lost);
}

bool
dt_tp_sample_note(const struct dt_tp_src *src, const struct dt_tp_sample *s)
{
	char comm[DTMAXCOMLEN];
	pid_t next;

	if (s->ts_comm != NULL) {
		dt_tp_task_rename(s->ts_tid, s->ts_pid, s->ts_comm,
		    s->ts_ns);
		return true;
	}
	if (src != dt_tp_switch || s->ts_swin)
		return false;
	dt_tp_fcomm(src, F_PREV_COMM, s, comm);
	dt_tp_task_note(s->ts_tid, s->ts_pid, comm);
	dt_tp_stk_off(s->ts_tid, s);
	/*
	 * The incoming thread's name as the switch in that follows on this
	 * CPU will want it (a new thread has no earlier switch out, and
	 * /proc may already show its exec).
	 */
	if (s->ts_swev) {
		next = (pid_t)dt_tp_f(src, F_NEXT_PID, s);
		dt_tp_fcomm(src, F_NEXT_COMM, s, comm);
		dt_tp_task_note(next, dt_tp_task_tgid(next), comm);
	}
	return false;
}

/* dt_tpev_fn: a record of src, for each of its recording probes.  [R] */
static void
dt_tp_sample_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_tp_src *src = arg;
	struct dt_tp_probe *tpp;
	struct dt_evt ev, evs;
	uint64_t flags;
	unsigned int i;
	bool strings;

	if (s->ts_lost > 0) {
		dt_tp_lost(src, s);
		return;
	}
	if (dt_tp_sample_note(src, s))
		return;
	for (i = 0; i < src->tps_nprobes; i++) {
		tpp = src->tps_probes[i];
		if (atomic_load_explicit(&tpp->tpp_dtp->dtp_recording,
		    memory_order_relaxed) == 0)
			continue;
		/* Switches in feed their probes alone, where they exist. */
		if (s->ts_swin ? !tpp->tpp_switchin :
		    tpp->tpp_switchin && s->ts_swev)
			continue;
		flags = atomic_load_explicit(&tpp->tpp_dtp->dtp_evtflags,
		    memory_order_relaxed);
		if (!dt_tp_build(tpp, src, s, flags, &ev, &evs, &strings))
			continue;
		dt_tp_emit(tpp->tpp_dtp, s->ts_cpu, s->ts_ptime, &ev,
		    strings ? &evs : NULL);
	}
}

bool
dt_tp_build(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, uint64_t flags, struct dt_evt *ev,
    struct dt_evt *evs, bool *strings)
{
	dt_tp_evt_begin(ev, s, flags, !tpp->tpp_nostack);
	*strings = tpp->tpp_strings && (flags & DTEVT_STRINGS);
	if (tpp->tpp_decode != NULL)
		return tpp->tpp_decode(tpp, src, s, ev);
	if (*strings)
		*evs = *ev;
	dt_tp_generic(tpp, src, s, ev, *strings ? evs : NULL);
	if (*strings) {
		evs->_args = ev->_args;
		evs->dtev_kstack.st_count = 0;
	}
	return true;
}

/*
 * Open, reopen with more stacks or a filter that keeps more, or close
 * src's perf event after one of its pcbs (dp) started or stopped
 * (stopping).  dt(4) cannot fail a start: a source that will not open
 * leaves its probes silent, and we say why once per cause.  [K].
 */
static void
dt_tp_src_update(struct dt_tp_src *src, const struct dt_pcb *dp,
    bool stopping)
{
	uint64_t want = 0;
	char *filt;
	int error;

	if (src->tps_nrec == 0) {
		if (src->tps_ev != NULL)
			dt_tpev_close(src->tps_ev);
		src->tps_ev = NULL;
		src->tps_evflags = 0;
		dt_tp_filt_reset(src);
		return;
	}
	if (src->tps_nk > 0)
		want |= DTEVT_KSTACK;
	if (src->tps_nu > 0)
		want |= DTEVT_USTACK;
	if (src->tps_nsw > 0)
		want |= DT_TPEV_SWITCHES;
	/* What the remaining pcbs pushed, in the kernel's words. */
	filt = dt_tp_filt_build(src, stopping ? dp : NULL);
	if (src->tps_ev != NULL && (want & ~src->tps_evflags) == 0 &&
	    !dt_tp_filt_stale(src, filt, stopping)) {
		dt_tp_filt_apply(src, filt);
		return;
	}
	/* Closed first: a gap, never an event twice. */
	if (src->tps_ev != NULL)
		dt_tpev_close(src->tps_ev);
	dt_tp_filt_reset(src);
	src->tps_ev = dt_tpev_open(src->tps_fmt.dtfm_id, want,
	    dt_tp_sample_cb, src, &error);
	src->tps_evflags = want;
	if (src->tps_ev == NULL && error != src->tps_lasterr)
		fprintf(stderr, "dtd: tracepoint: %s:%s: cannot open: %s\n",
		    src->tps_sys, src->tps_event, strerror(error));
	src->tps_lasterr = src->tps_ev == NULL ? error : 0;
	dt_tp_filt_apply(src, filt);
}

static void
dt_tp_count(struct dt_pcb *dp, int delta)
{
	struct dt_tp_probe *tpp = dp->dp_dtp->dtp_priv;
	struct dt_tp_src *src;
	unsigned int i;

	for (i = 0; i < tpp->tpp_nsrcs; i++) {
		src = tpp->tpp_srcs[i];
		src->tps_nrec += delta;
		/* on__cpu's stacks too: they are the switch's, kept. */
		if (dp->dp_evtflags & DTEVT_KSTACK)
			src->tps_nk += delta;
		if (dp->dp_evtflags & DTEVT_USTACK)
			src->tps_nu += delta;
		if (tpp->tpp_switchin)
			src->tps_nsw += delta;
		dt_tp_src_update(src, dp, delta < 0);
	}
}

static void
dt_prov_tp_start(struct dt_pcb *dp)
{
	struct dt_tp_probe *tpp = dp->dp_dtp->dtp_priv;

	/*
	 * counted in the kernel: the sampled event is not for dp.  A
	 * tree's pcb is counted by its tree's counter alone, if any.
	 */
	if (tpp->tpp_nsrcs == 1 && (!(dp->dp_evtflags & DTEVT_TREE) ||
	    dp->dp_priv != NULL) && dt_tpcnt_start(dp, tpp, tpp->tpp_srcs[0]))
		return;
	if (dp->dp_evtflags & DTEVT_TREE) {
		dt_tp_tree_start(dp, tpp);
		return;
	}
	/*
	 * a pushed pid: counts by key in a kernel program (system-wide,
	 * the filter in it) where dp only counts, exact however the
	 * process makes threads; else counters on the process's threads
	 * (inherited: this kernel's inherited counters of a thread that
	 * makes threads without pause can count a hit twice, dt_tp_pcnt.c);
	 * else sampled events of its own (dt_tp_pid.c)
	 */
	if (dt_tp_kbpf_start(dp, tpp) || dt_tp_pcnt_start(dp, tpp) ||
	    dt_tp_pid_start(dp, tpp))
		return;
	dt_tp_count(dp, 1);
}

static void
dt_prov_tp_stop(struct dt_pcb *dp)
{
	/* a counted pcb's only state: the counters */
	if (dp->dp_priv != NULL) {
		dt_tpcnt_stop(dp);
		return;
	}
	if (dp->dp_evtflags & DTEVT_TREE) {
		dt_tp_tree_stop(dp);
		return;
	}
	if (dt_tp_kbpf_stop(dp) || dt_tp_pcnt_stop(dp) || dt_tp_pid_stop(dp))
		return;
	dt_tp_count(dp, -1);
}

static int
dt_prov_tp_treecount(struct dt_pcb *dp, pid_t pid)
{
	struct dt_tp_probe *tpp = dp->dp_dtp->dtp_priv;

	if (tpp->tpp_nsrcs != 1)
		return EOPNOTSUPP;
	return dt_tpcnt_tree(dp, tpp, tpp->tpp_srcs[0], pid);
}

/* A tree's counter outlives its pcb's stops (dt_tpcnt_tree()). */
static void
dt_prov_tp_free(struct dt_pcb *dp)
{
	dt_tpcnt_free(dp);
}

/* Every open is closed: stop the reader, and say what it saw. */
static void
dt_prov_tp_fini(void)
{
	struct dt_tpev_stats st;

	dt_tpev_shutdown();
	dt_tp_stk_fini();
	dt_ka_fini();
	dt_tpev_stats(&st);
	if (st.tps_records > 0 || st.tps_lost > 0)
		fprintf(stderr, "dtd: tracepoint: %llu records, %llu lost by "
		    "perf, %llu reader wakeups\n",
		    (unsigned long long)st.tps_records,
		    (unsigned long long)st.tps_lost,
		    (unsigned long long)st.tps_wakeups);
}
