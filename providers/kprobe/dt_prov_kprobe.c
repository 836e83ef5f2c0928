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
 * The kprobe provider, dt_prov_kprobe.c's probes on Linux:
 * kprobe:FUNC:entry and kprobe:FUNC:return for every function the
 * running kernel lets a kprobe on (dt_kp_list.c), through perf's kprobe
 * PMU, one perf event per CPU, system wide, read by the tracepoint
 * provider's perf reader (dt_tp_perf.h), so that its events reach the
 * rings in time order with the tracepoints'.
 *
 * entry carries x86-64's six argument registers as arg0..arg5 (dt(4)
 * gives a function's arguments with DTEVT_FUNCARGS); return carries the
 * return value, %rax, as retval.  A kernel without the kprobe PMU (no
 * CONFIG_KPROBE_EVENTS, or not x86-64) has no kprobe probes.
 *
 * Registration is one probe pair per function and nothing else: a
 * probe's perf side exists only once an open enabled it.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_prov_kprobe_init()
 *	[K]	the core's configuration lock (the dtpv_* callbacks)
 *	[R]	the perf reader thread, inside rcu_read_lock()
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_proc.h"
#include "dt_prov.h"
#include "dt_tp_perf.h"
#include "dt_tp_task.h"
#include "dt_kp_list.h"

#define DT_KP_PMU	"/sys/bus/event_source/devices/kprobe"

/* What a kprobe pcb keeps of its request: dt(4) masks to 0xF. */
#define DT_KP_EVTFLAGS	(DTEVT_EXECNAME | DTEVT_USTACK | DTEVT_KSTACK | \
			 DTEVT_FUNCARGS)

/* x86-64's argument registers in call order, asm/perf_regs.h's bits. */
#define DT_KP_REG_AX	0
#define DT_KP_REG_CX	2
#define DT_KP_REG_DX	3
#define DT_KP_REG_SI	4
#define DT_KP_REG_DI	5
#define DT_KP_REG_R8	16
#define DT_KP_REG_R9	17
#define DT_KP_NARGS	6

static const int dt_kp_argregs[DT_KP_NARGS] = {
	DT_KP_REG_DI, DT_KP_REG_SI, DT_KP_REG_DX, DT_KP_REG_CX,
	DT_KP_REG_R8, DT_KP_REG_R9
};

/* An enabled probe's perf side, kept until dtd ends (the reader's arg). */
struct dt_kp_probe {
	struct dt_kp_probe	*kpp_next;	/* [K] dt_kp_enabled */
	struct dt_probe		*kpp_dtp;	/* [I] */
	const char		*kpp_func;	/* [I] the full name */
	bool			 kpp_ret;	/* [I] a return probe */
	uint64_t		 kpp_regs;	/* [I] sampled registers */
	struct dt_tpev		*kpp_ev;	/* [K] open while kpp_nrec */
	uint64_t		 kpp_evflags;	/* [K] stacks kpp_ev walks */
	unsigned int		 kpp_nrec;	/* [K] started pcbs */
	unsigned int		 kpp_nk, kpp_nu; /* [K] of which want stacks */
	int			 kpp_lasterr;	/* [K] last error logged */
};

static int	dt_prov_kp_alloc(struct dt_probe *, struct dt_softc *,
		    const struct dtioc_req *);
static void	dt_prov_kp_start(struct dt_pcb *);
static void	dt_prov_kp_stop(struct dt_pcb *);
static void	dt_prov_kp_fini(void);

static const struct dt_provider dt_prov_kprobe = {
	.dtpv_name	= "kprobe",
	.dtpv_alloc	= dt_prov_kp_alloc,
	.dtpv_start	= dt_prov_kp_start,
	.dtpv_stop	= dt_prov_kp_stop,
	.dtpv_fini	= dt_prov_kp_fini,
};

/*
 * [I] The names longer than a probe's 15 characters, NUL-ended, one
 * after the other: what a long name's probes keep of the list, which goes
 * once they are registered (a short name's probe is its own full name).
 */
static char			*dt_kp_longnames;
static uint32_t			 dt_kp_type;		/* [I] the PMU's */
static uint64_t			 dt_kp_retbit;		/* [I] in config */
static struct dt_kp_probe	*dt_kp_enabled;		/* [K] */

/*
 * The kprobe PMU: its type, and the config bit of a return probe
 * (format/retprobe, "config:N").  false when this kernel has none.
 */
static bool
dt_kp_pmu(void)
{
	char buf[64];
	const char *p;
	unsigned long bit;

	if (dt_proc_read(DT_KP_PMU "/type", buf, sizeof(buf)) <= 0)
		return false;
	dt_kp_type = (uint32_t)strtoul(buf, NULL, 10);
	if (dt_proc_read(DT_KP_PMU "/format/retprobe", buf, sizeof(buf)) <= 0 ||
	    strncmp(buf, "config:", 7) != 0)
		return false;
	p = buf + 7;
	bit = strtoul(p, NULL, 10);
	if (bit > 63)
		return false;
	dt_kp_retbit = 1ULL << bit;
	return true;
}

int
dt_prov_kprobe_init(void)
{
	struct dt_kp_list kl;
	struct dt_probe *dtp;
	const char *f, *full;
	char *lp;
	size_t i, len, need = 0;
	int error, n;

	dt_kp_enabled = NULL;
#if !defined(__x86_64__)
	/* The argument registers below are x86-64's. */
	return 0;
#endif
	/* perf's kprobe PMU is root's; so is the list of functions. */
	if (geteuid() != 0) {
		fprintf(stderr, "dtd: kprobe: not root: no kprobe probes\n");
		return 0;
	}
	if (!dt_kp_pmu()) {
		fprintf(stderr, "dtd: kprobe: this kernel has no kprobe PMU "
		    "(%s): no kprobe probes\n", DT_KP_PMU);
		return 0;
	}
	if ((error = dt_kp_list_read(&kl)) != 0) {
		fprintf(stderr, "dtd: kprobe: no list of kernel functions "
		    "(%s): no kprobe probes\n", strerror(error));
		return 0;
	}
	/* No probe, no dt_prov_kp_fini(): nothing may be left to free. */
	if (kl.kl_n == 0) {
		fprintf(stderr, "dtd: kprobe: no kernel function in %s: no "
		    "kprobe probes\n", kl.kl_from);
		dt_kp_list_free(&kl);
		return 0;
	}
	for (i = 0; i < kl.kl_n; i++)
		if ((len = strlen(kl.kl_names[i])) > DTNAMESIZE - 1)
			need += len + 1;
	if ((lp = dt_kp_longnames = malloc(need + 1)) == NULL)
		goto nomem;
	for (i = 0; i < kl.kl_n; i++) {
		f = kl.kl_names[i];
		/* dt(4)'s: entry with the arguments, return with none. */
		if ((dtp = dt_dev_alloc_probe(f, "entry", &dt_prov_kprobe,
		    DT_KP_NARGS)) == NULL)
			goto nomem;
		full = dtp->dtp_func;
		if ((len = strlen(f)) > DTNAMESIZE - 1) {
			memcpy(lp, f, len + 1);
			full = lp;
			lp += len + 1;
		}
		dtp->dtp_argsflag = DTEVT_FUNCARGS;
		dtp->dtp_sysnum = -1;
		dtp->dtp_priv = (void *)(uintptr_t)full;
		if ((dtp = dt_dev_alloc_probe(f, "return", &dt_prov_kprobe,
		    0)) == NULL)
			goto nomem;
		dtp->dtp_sysnum = -1;
		dtp->dtp_priv = (void *)(uintptr_t)full;
	}
	if (kl.kl_ambiguous > 0)
		fprintf(stderr, "dtd: kprobe: %zu functions from %s, %zu left "
		    "out whose first %d characters name another\n",
		    kl.kl_n, kl.kl_from, kl.kl_ambiguous, DTNAMESIZE - 1);
	n = (int)(2 * kl.kl_n);
	dt_kp_list_free(&kl);
	return n;
nomem:
	dt_kp_list_free(&kl);
	errno = ENOMEM;
	return -1;
}

static int
dt_prov_kp_alloc(struct dt_probe *dtp, struct dt_softc *sc,
    const struct dtioc_req *dtrq)
{
	if (dt_pcb_alloc(dtp, sc, dtrq->dtrq_evtflags & DT_KP_EVTFLAGS, 0,
	    -1) == NULL)
		return ENOMEM;
	return 0;
}

/* perf's lost records: lost for every open recording the probe.  [R] */
static void
dt_kp_lost(struct dt_kp_probe *kpp, const struct dt_tp_sample *s)
{
	struct dt_pcb *dp;

	cds_list_for_each_entry_rcu(dp, &kpp->kpp_dtp->dtp_pcbs, dp_pnext)
		dt_pcb_count_dropevt(dp, s->ts_cpu, s->ts_lost);
}

/* dt_tpev_fn: one hit of the kprobe.  [R] */
static void
dt_kp_sample_cb(void *arg, const struct dt_tp_sample *s)
{
	struct dt_kp_probe *kpp = arg;
	struct dt_probe *dtp = kpp->kpp_dtp;
	struct dt_evt ev;
	uint64_t flags;
	unsigned int i;

	if (s->ts_lost > 0) {
		dt_kp_lost(kpp, s);
		return;
	}
	if (s->ts_comm != NULL) {
		dt_tp_task_rename(s->ts_tid, s->ts_pid, s->ts_comm,
		    s->ts_ns);
		return;
	}
	if (s->ts_swin || atomic_load_explicit(&dtp->dtp_recording,
	    memory_order_relaxed) == 0)
		return;
	flags = atomic_load_explicit(&dtp->dtp_evtflags, memory_order_relaxed);
	dt_tp_evt_begin(&ev, s, flags, true);
	/* The sample's registers come in their bits' order. */
	if (kpp->kpp_ret) {
		if (s->ts_nregs >= 1)
			ev.dtev_retval[0] = (register_t)s->ts_regs[0];
	} else if (s->ts_nregs == DT_KP_NARGS) {
		/* cx dx si di r8 r9, as the mask's bits 2 3 4 5 16 17. */
		static const unsigned int at[DT_KP_NARGS] = { 3, 2, 1, 0, 4, 5 };

		for (i = 0; i < DT_KP_NARGS; i++)
			ev.dtev_args[i] = (register_t)s->ts_regs[at[i]];
	}
	/* In time order with the tracepoints' and the other sources'. */
	dt_seq_emit(dt_tpev_source(), dtp, s->ts_cpu, &ev);
}

/*
 * Open, reopen with more stacks, or close kpp's perf events after one of
 * its pcbs started or stopped.  dt(4) cannot fail a start: a probe the
 * kernel refuses stays silent, and we say why once per cause.  [K].
 */
static void
dt_kp_update(struct dt_kp_probe *kpp)
{
	struct dt_tpev_pmu pmu;
	uint64_t want = 0;
	int error;

	if (kpp->kpp_nrec == 0) {
		if (kpp->kpp_ev != NULL)
			dt_tpev_close(kpp->kpp_ev);
		kpp->kpp_ev = NULL;
		kpp->kpp_evflags = 0;
		return;
	}
	if (kpp->kpp_nk > 0)
		want |= DTEVT_KSTACK;
	if (kpp->kpp_nu > 0)
		want |= DTEVT_USTACK;
	if (kpp->kpp_ev != NULL && (want & ~kpp->kpp_evflags) == 0)
		return;
	/* Closed first: a gap, never an event twice. */
	if (kpp->kpp_ev != NULL)
		dt_tpev_close(kpp->kpp_ev);
	memset(&pmu, 0, sizeof(pmu));
	pmu.tpm_type = dt_kp_type;
	pmu.tpm_config = kpp->kpp_ret ? dt_kp_retbit : 0;
	pmu.tpm_config1 = (uint64_t)(uintptr_t)kpp->kpp_func;
	pmu.tpm_regs = kpp->kpp_regs;
	kpp->kpp_ev = dt_tpev_open_pmu(&pmu, want, dt_kp_sample_cb, kpp,
	    &error);
	kpp->kpp_evflags = want;
	if (kpp->kpp_ev == NULL && error != kpp->kpp_lasterr)
		fprintf(stderr, "dtd: kprobe: %s:%s: cannot open: %s\n",
		    kpp->kpp_func, kpp->kpp_ret ? "return" : "entry",
		    strerror(error));
	kpp->kpp_lasterr = kpp->kpp_ev == NULL ? error : 0;
}

/* dtp's perf side, made on its first start.  [K] */
static struct dt_kp_probe *
dt_kp_get(struct dt_probe *dtp)
{
	struct dt_kp_probe *kpp;
	unsigned int i;

	for (kpp = dt_kp_enabled; kpp != NULL; kpp = kpp->kpp_next)
		if (kpp->kpp_dtp == dtp)
			return kpp;
	if ((kpp = calloc(1, sizeof(*kpp))) == NULL)
		return NULL;
	kpp->kpp_dtp = dtp;
	kpp->kpp_func = dtp->dtp_priv;
	kpp->kpp_ret = strcmp(dtp->dtp_name, "return") == 0;
	if (kpp->kpp_ret)
		kpp->kpp_regs = 1ULL << DT_KP_REG_AX;
	else
		for (i = 0; i < DT_KP_NARGS; i++)
			kpp->kpp_regs |= 1ULL << dt_kp_argregs[i];
	kpp->kpp_next = dt_kp_enabled;
	dt_kp_enabled = kpp;
	return kpp;
}

static void
dt_kp_count(struct dt_pcb *dp, int delta)
{
	struct dt_kp_probe *kpp;

	if ((kpp = dt_kp_get(dp->dp_dtp)) == NULL) {
		fprintf(stderr, "dtd: kprobe: %s: %s\n", dp->dp_dtp->dtp_func,
		    strerror(ENOMEM));
		return;
	}
	if (delta < 0 && kpp->kpp_nrec == 0)
		return;		/* its start found no memory */
	kpp->kpp_nrec += delta;
	if (dp->dp_evtflags & DTEVT_KSTACK)
		kpp->kpp_nk += delta;
	if (dp->dp_evtflags & DTEVT_USTACK)
		kpp->kpp_nu += delta;
	dt_kp_update(kpp);
}

static void
dt_prov_kp_start(struct dt_pcb *dp)
{
	dt_kp_count(dp, 1);
}

static void
dt_prov_kp_stop(struct dt_pcb *dp)
{
	dt_kp_count(dp, -1);
}

/*
 * Every open is closed, so every event too: the shared reader frees
 * them when it stops (dt_tpev_shutdown() is idempotent), then ours go.
 */
static void
dt_prov_kp_fini(void)
{
	struct dt_kp_probe *kpp, *next;

	dt_tpev_shutdown();
	for (kpp = dt_kp_enabled; kpp != NULL; kpp = next) {
		next = kpp->kpp_next;
		free(kpp);
	}
	dt_kp_enabled = NULL;
	free(dt_kp_longnames);
	dt_kp_longnames = NULL;
}
