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
 * btrace: the script's rules put on the device and run: each probe
 * enabled once with what all its rules need, BEGIN before the first
 * event, each event handed to the rules of its probe (with its deep
 * stacks gathered first), END and the maps after the last.  Apart from
 * bt_dev.c's read loop, which only moves records from the device to
 * record_apply(); what the rules ask of each event (comm, deep stacks)
 * is learnt and used here.
 */
#include <sys/ioctl.h>
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"
#include "udt_launch.h"

static int		 need_comm;	/* a rule reads comm */

static void
fake_event(struct dt_evt *ev, unsigned int pbn)
{
	memset(ev, 0, sizeof(*ev));
	ev->dtev_pbn = pbn;
	snprintf(ev->dtev_comm, sizeof(ev->dtev_comm), "%s", g_progname);
	ev->dtev_pid = getpid();
	ev->dtev_tid = gettid();
	clock_gettime(CLOCK_REALTIME, &ev->dtev_tsp);
}

/* What rules_apply() asks of an event's provider, per event. */
#define PK_UNSEEN	0
#define PK_OTHER	1
#define PK_INTERVAL	2
#define PK_SYSCALL	3

static unsigned char	*prov_kinds;	/* dt_ndtpi, by pbn - 1 */

/*
 * The provider of probe pbn, compared by name once per probe: two
 * string compares per event were a tenth of btrace's CPU at 2M events/s
 * (bench/reader).  dt_dtpis is read once (dtpi_cache()) and never
 * changes.
 */
static int
prov_kind(unsigned int pbn)
{
	const char *prov;
	unsigned char *k;

	if (pbn == 0 || pbn > dt_ndtpi)
		return PK_OTHER;
	if (prov_kinds == NULL)
		prov_kinds = xcalloc(dt_ndtpi, sizeof(*prov_kinds));
	k = &prov_kinds[pbn - 1];
	if (*k == PK_UNSEEN) {
		prov = dt_dtpis[pbn - 1].dtpi_prov;
		if (strncmp(prov, "interval", DTNAMESIZE) == 0)
			*k = PK_INTERVAL;
		else if (strncmp(prov, "syscall", DTNAMESIZE) == 0)
			*k = PK_SYSCALL;
		else
			*k = PK_OTHER;
	}
	return *k;
}

static int
rules_apply(int fd, struct dt_evt *ev)
{
	struct bt_rule *r;
	struct bt_probe *bp;
	int timer;

	/*
	 * -p and -c keep the events of some processes; an interval event
	 * belongs to no process (dtd's timer makes it), so both keep it:
	 * interval:s:1 { exit(); } ends a run whatever is traced.
	 */
	timer = prov_kind(ev->dtev_pbn) == PK_INTERVAL;
	if (g_pidfilter > 0 && !timer && ev->dtev_pid != g_pidfilter) {
		g_filtered++;
		return 0;
	}
	if (g_treefilter && !timer &&
	    !ptree_member(ev->dtev_pid, &ev->dtev_tsp,
	    prov_kind(ev->dtev_pbn) == PK_SYSCALL)) {
		g_filtered++;
		return 0;
	}
	if (need_comm)
		comm_note(ev);
	for (r = g_rules; r != NULL; r = r->br_next) {
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE ||
			    bp->bp_pbn != ev->dtev_pbn)
				continue;
			if (ev->dtev_pbn == 0 || ev->dtev_pbn > dt_ndtpi)
				continue;
			dtai_cache(fd, &dt_dtpis[ev->dtev_pbn - 1]);
			if (rule_eval(r, ev, 0))
				return 1;
			/* patterns that overlap run the rule once */
			break;
		}
	}
	return 0;
}

/*
 * DTEVT_DEEPSTACK (dtvar.h): an event whose st_count says more frames
 * than it holds waits here, one per CPU, for the continuation records
 * that follow it among that CPU's records (other CPUs' may come between,
 * and a read may end in the middle); then its rules run with the whole
 * stacks in g_deep.
 */
struct deep_pend {
	struct dt_evt		 dp_ev;
	struct deep_stacks	 dp_st;
	unsigned int		 dp_need;	/* frames still to come */
	unsigned int		 dp_got;
	int			 dp_busy;
};
#define DEEP_NCPU	1024
static struct deep_pend	*deep_pend;

static int
deep_run(int fd, struct deep_pend *dp)
{
	int halt;

	dp->dp_busy = 0;
	g_deep_ev = &dp->dp_ev;
	g_deep = &dp->dp_st;
	halt = rules_apply(fd, &dp->dp_ev);
	g_deep_ev = NULL;
	g_deep = NULL;
	return halt;
}

/* The frames of stacktrace st into a deep stack's array. */
static unsigned int
deep_head(unsigned long *to, const struct stacktrace *st)
{
	unsigned int n = st->st_count < STACKTRACE_MAX ? st->st_count :
	    STACKTRACE_MAX;

	memcpy(to, st->st_pc, n * sizeof(*to));
	return n;
}

/* One record read: run its rules now, or when its stacks are whole. */
int
record_apply(int fd, struct dt_evt *ev)
{
	struct deep_pend *dp;
	const uint64_t *pcs;
	unsigned int kx, ux, i, w;
	int halt = 0;

	if (deep_pend == NULL || ev->dtev_cpu >= DEEP_NCPU) {
		if (ev->dtev_pbn & DTEV_PBN_MORE)
			return 0;
		return rules_apply(fd, ev);
	}
	dp = &deep_pend[ev->dtev_cpu];
	if (ev->dtev_pbn & DTEV_PBN_MORE) {
		if (!dp->dp_busy || ev->dtev_tid != dp->dp_ev.dtev_tid ||
		    (ev->dtev_pbn & ~DTEV_PBN_MORE) != dp->dp_ev.dtev_pbn)
			return 0;	/* its event was not ours to wait for */
		pcs = DTEV_MORE_PCS(ev);
		kx = dp->dp_ev.dtev_kstack.st_count > STACKTRACE_MAX ?
		    dp->dp_ev.dtev_kstack.st_count - STACKTRACE_MAX : 0;
		for (i = 0; i < DTEV_MORE_NPC && dp->dp_need > 0; i++) {
			w = dp->dp_got++;
			if (w < kx)
				dp->dp_st.dk_k[STACKTRACE_MAX + w] = pcs[i];
			else
				dp->dp_st.dk_u[STACKTRACE_MAX + w - kx] =
				    pcs[i];
			dp->dp_need--;
		}
		return dp->dp_need == 0 ? deep_run(fd, dp) : 0;
	}
	/* a record of this CPU before the rest came: run it as it is */
	if (dp->dp_busy) {
		kx = dp->dp_st.dk_kn > STACKTRACE_MAX ?
		    dp->dp_st.dk_kn - STACKTRACE_MAX : 0;
		kx = dp->dp_got < kx ? dp->dp_got : kx;
		ux = dp->dp_got - kx;
		if (dp->dp_st.dk_kn > STACKTRACE_MAX + kx)
			dp->dp_st.dk_kn = STACKTRACE_MAX + kx;
		if (dp->dp_st.dk_un > STACKTRACE_MAX + ux)
			dp->dp_st.dk_un = STACKTRACE_MAX + ux;
		if ((halt = deep_run(fd, dp)) != 0)
			return halt;
	}
	if (ev->dtev_kstack.st_count <= STACKTRACE_MAX &&
	    ev->dtev_ustack.st_count <= STACKTRACE_MAX)
		return rules_apply(fd, ev);
	kx = ev->dtev_kstack.st_count > DTEV_DEEP_MAX ? DTEV_DEEP_MAX :
	    ev->dtev_kstack.st_count;
	ux = ev->dtev_ustack.st_count > DTEV_DEEP_MAX ? DTEV_DEEP_MAX :
	    ev->dtev_ustack.st_count;
	dp->dp_ev = *ev;
	deep_head(dp->dp_st.dk_k, &ev->dtev_kstack);
	deep_head(dp->dp_st.dk_u, &ev->dtev_ustack);
	dp->dp_st.dk_kn = kx;
	dp->dp_st.dk_un = ux;
	dp->dp_need = (kx > STACKTRACE_MAX ? kx - STACKTRACE_MAX : 0) +
	    (ux > STACKTRACE_MAX ? ux - STACKTRACE_MAX : 0);
	dp->dp_got = 0;
	dp->dp_busy = 1;
	return 0;
}

/*
 * Two names of one syscall probe, OpenBSD's and Linux's (exit and
 * exit_group, pread and pread64): no OpenBSD script has both, and the
 * rules are accepted as a pattern's are, with a word on stderr, since
 * whoever wrote both probably took them for two calls.
 */
static int
probe_alias(struct bt_probe *first, struct bt_probe *bp)
{
	char fname[96];

	if (first->bp_name == NULL || bp->bp_name == NULL ||
	    strcmp(bp->bp_prov, "syscall") != 0 ||
	    strcmp(first->bp_func, bp->bp_func) == 0)
		return 0;
	snprintf(fname, sizeof(fname), "%s", probe_name(first));
	fflush(stdout);
	fprintf(stderr, "%s:%d:%d: '%s' and '%s' (line %d) are one probe: "
	    "both rules run on its events%s\n", g_filename != NULL ?
	    g_filename : g_progname, bp->bp_pos.p_line, bp->bp_pos.p_col,
	    probe_name(bp), fname, first->bp_pos.p_line,
	    strcmp(first->bp_func, "exit") == 0 ||
	    strcmp(bp->bp_func, "exit") == 0 ? " (exit is OpenBSD's name of "
	    "Linux's exit_group; Linux's exit, which ends one thread, is "
	    "syscall:__threxit)" : "");
	return 1;
}

/*
 * Several rules may name one probe (bpftrace's habit; OpenBSD's btrace
 * stops at dt(4)'s EEXIST): it is enabled once, by its first rule, with
 * the events' fields that all its rules need, and rules_apply() runs
 * each rule on its events in script order.  Only a script OpenBSD
 * rejects gets here, so no accepted script changes.  A timer probe at
 * two rates cannot be one enabling: that stays OpenBSD's error.
 */
static void
probes_share(void)
{
	struct bt_rule *r, *r2;
	struct bt_probe *bp, *bp2;

	for (r = g_rules; r != NULL; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_pbn == 0)
				continue;
			for (r2 = g_rules; r2 != NULL; r2 = r2->br_next)
				for (bp2 = r2->br_probes; bp2 != NULL;
				    bp2 = bp2->bp_next) {
					if (bp2 == bp)
						goto next;	/* none before */
					if (bp2->bp_type != P_PROBE ||
					    bp2->bp_pbn != bp->bp_pbn ||
					    bp2->bp_shared ||
					    bp2->bp_nsecs != bp->bp_nsecs)
						continue;
					if (!bp->bp_wild && !bp2->bp_wild)
						(void)probe_alias(bp2, bp);
					bp2->bp_req.dtrq_evtflags |=
					    bp->bp_req.dtrq_evtflags;
					/*
					 * a tracepoint's strings take its
					 * kernel stack's space: one rule's
					 * kstack wins over another's %s
					 */
					if ((bp2->bp_req.dtrq_evtflags &
					    DTEVT_KSTACK) && strncmp(dt_dtpis[
					    bp->bp_pbn - 1].dtpi_prov,
					    "syscall", DTNAMESIZE) != 0)
						bp2->bp_req.dtrq_evtflags &=
						    ~(uint64_t)DTEVT_STRINGS;
					bp->bp_shared = 1;
					goto next;
				}
next:			;
		}
}

/*
 * args.NAME of the rule being set up: the argument number that NAME is
 * in each of its probes (tracefs, bt_tpfields.c), which must be one.
 */
static struct bt_rule *argname_rule;

static int
argname_resolve(const char *name, const struct bt_pos *pos)
{
	struct bt_probe *bp;
	int n, found = -2;

	for (bp = argname_rule->br_probes; bp != NULL; bp = bp->bp_next) {
		if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 ||
		    bp->bp_wild == 2)
			continue;
		n = tp_argindex(&dt_dtpis[bp->bp_pbn - 1], name);
		if (n < 0) {
			bt_posmsg(pos, "probe '%s' has no argument named "
			    "'%s'%s", probe_name(bp), name, strncmp(dt_dtpis[
			    bp->bp_pbn - 1].dtpi_prov, "tracepoint",
			    DTNAMESIZE) == 0 ? " (btrace -lv lists them)" :
			    " (names are a Linux tracepoint's fields)");
			exit(1);
		}
		if (found >= 0 && n != found) {
			bt_posmsg(pos, "'%s' is argument %d of one probe of "
			    "the rule and %d of another: name it by argN in "
			    "rules of their own", name, found, n);
			exit(1);
		}
		found = n;
	}
	return found;
}

/*
 * Enable bp with DTEVT_TREE set: 1 when dtd took it so.  Refused (a
 * probe or a dtd without that kind of the tree's events), the bit is
 * cleared again so the caller can enable it as it would without, and
 * 0; at -vv, why, what names what was not had.
 */
static int
enable_tree(int fd, struct bt_probe *bp, const char *what)
{
	bp->bp_req.dtrq_evtflags |= DTEVT_TREE;
	if (ioctl(fd, DTIOCPRBENABLE, &bp->bp_req) == 0)
		return 1;
	bp->bp_req.dtrq_evtflags &= ~(uint64_t)DTEVT_TREE;
	if (g_verbose > 1)
		fprintf(stderr, "debug: probe '%s': not %s: %s\n",
		    probe_name(bp), what, strerror(errno));
	return 0;
}

void
rules_setup(int fd, int *halt)
{
	struct dtioc_probe_info *pi;
	struct bt_rule *r;
	struct bt_probe *bp;
	struct dt_evt ev;
	int on = 1, tree = 0, ktree = 0, sysprobes = 0, kind;
	const char *hooked;

	for (r = g_rules; r != NULL; r = r->br_next) {
		r->br_evtflags = rule_evtflags(r);
		if (r->br_evtflags & DTEVT_EXECNAME)
			need_comm = 1;
		if ((r->br_evtflags & DTEVT_DEEPSTACK) && deep_pend == NULL)
			deep_pend = xcalloc(DEEP_NCPU, sizeof(*deep_pend));
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_wild == 2)
				continue;
			dtpi_cache(fd);
			if (bp->bp_wild && bp->bp_pbn == 0) {
				/* its matches follow it in the list */
				probe_expand(bp);
				continue;
			}
			if (bp->bp_wild)
				pi = &dt_dtpis[bp->bp_pbn - 1];
			else if ((pi = probe_find(bp)) == NULL)
				probe_notfound(bp, probe_name(bp));
			bp->bp_pbn = pi->dtpi_pbn;
			if (strncmp(pi->dtpi_prov, "syscall", DTNAMESIZE) == 0)
				sysprobes = 1;
			memset(&bp->bp_req, 0, sizeof(bp->bp_req));
			bp->bp_req.dtrq_pbn = pi->dtpi_pbn;
			bp->bp_req.dtrq_nsecs = bp->bp_nsecs;
			bp->bp_req.dtrq_evtflags = r->br_evtflags;
			/*
			 * userdt's strings (dtvar.h): syscall probes, and
			 * tracepoints with a string field, whose arguments
			 * printf's %s shows as strings: asked for whenever
			 * the rule reads arguments, unless it wants the
			 * kernel stack, whose space the strings take.
			 */
			if (strncmp(pi->dtpi_prov, "tracepoint",
			    DTNAMESIZE) == 0 && dtai_hasstr(fd, pi)) {
				if ((r->br_evtflags & (DTEVT_FUNCARGS |
				    DTEVT_KSTACK)) == DTEVT_FUNCARGS)
					bp->bp_req.dtrq_evtflags |=
					    DTEVT_STRINGS;
			} else if (strncmp(pi->dtpi_prov, "syscall",
			    DTNAMESIZE) != 0)
				bp->bp_req.dtrq_evtflags &= ~(uint64_t)
				    DTEVT_STRINGS;
			else {
				if (g_lossless > 0)
					bp->bp_req.dtrq_evtflags |=
					    DTEVT_LOSSLESS;
				/*
				 * -c follows one command, launched whole:
				 * the kernel's copy of the rest of the
				 * machine's calls would only fill the rings
				 * (the tree filter is set later, below).
				 */
				if (g_command != NULL && !g_allprocs)
					bp->bp_req.dtrq_evtflags |=
					    DTEVT_LAUNCHED;
			}
			/* -c: folded in dtd, keyed by comm (bt_agg.c) */
			if (agg_wants_comm(r, pi->dtpi_prov))
				bp->bp_req.dtrq_evtflags |= DTEVT_EXECNAME;
			if (g_verbose > 1)
				fprintf(stderr, "debug: probe '%s' pbn %u "
				    "evtflags %#llx nsecs %llu\n",
				    probe_name(bp), pi->dtpi_pbn,
				    (unsigned long long)
				    bp->bp_req.dtrq_evtflags,
				    (unsigned long long)bp->bp_nsecs);
		}
	}

	probes_share();
	for (r = g_rules; r != NULL; r = r->br_next) {
		argname_rule = r;
		rule_argnames(r, argname_resolve);
	}
	/* what will stay silent, said before anything runs */
	check_probes();

	/* the command exists, held at its gate, before BEGIN: cpid */
	if (g_command != NULL) {
		sigset_t chld, omask;

		g_treefilter = !g_allprocs;
		if (g_treefilter)
			ptree_open();
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, &omask);
		ptree_root(cmd_prepare());
		ptree_shell(g_cpid);
		sigprocmask(SIG_SETMASK, &omask, NULL);
		/*
		 * A static command: no hook sees its calls, the kernel's
		 * feed of the tree does, from the root's exec.  Any other,
		 * under a shell the library enters: the static images it
		 * starts later are fed from their own execs, which the
		 * launcher's helper holds for dtd (DTTR_F_HOOKED), so the
		 * hooked processes never go through the kernel's events;
		 * a dtd without that, the hooks' alone, as before.  A
		 * set-id command too when we are root: the kernel drops a
		 * process's perf events at an exec that changes its
		 * credentials, so a root's feed would lose it, but root's
		 * helper holds that exec for dtd as a static one's.
		 * Without root it would lose its credentials under the
		 * helper, and under an LSM that restricts a traced domain
		 * change its exec could fail: the helper lets it go
		 * untraced instead (udt_launch_setid_held()).
		 */
		kind = cmd_untraced();
		if (kind == UDT_LAUNCH_SETID && udt_launch_setid_held())
			kind = 0;
		hooked = getenv("BTRACE_HOOKEDTREE");
		/* "0": as before; "root": a root's feed whatever it runs */
		tree = agg_tree_name(fd, sysprobes && kind == 0 &&
		    (hooked == NULL || (strcmp(hooked, "0") != 0 &&
		    strcmp(hooked, "root") != 0)) &&
		    udt_launch_image("/bin/sh") == 0);
		if (tree == 2)
			ktree = UDT_LAUNCH_KTREE_EXEC;
		else if (tree && (kind == UDT_LAUNCH_STATIC ||
		    (hooked != NULL && strcmp(hooked, "root") == 0)))
			ktree = UDT_LAUNCH_KTREE_ROOT;
	}

	fake_event(&ev, 0);
	g_start_nsecs = (uint64_t)ev.dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev.dtev_tsp.tv_nsec;
	for (r = g_rules; r != NULL && !*halt; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_type == P_BEGIN) {
				*halt = rule_eval(r, &ev, 1);
				break;
			}

	if (g_nprobes == 0)
		return;
	/*
	 * A call's latency timed by the hooks: its entry not enabled.
	 * Not with the kernel's feed of a static command's calls: its
	 * events carry no hook's stamp to fold, so the entries must come
	 * here and be paired with their returns, as without the fold.
	 * With a hooked root's (DTTR_F_HOOKED) the fold stays, so the
	 * hooked processes' calls cost what they did: the static images
	 * it starts have their calls counted, not timed.
	 */
	if (ktree != UDT_LAUNCH_KTREE_ROOT)
		lat_plan();
	for (r = g_rules; r != NULL; r = r->br_next) {
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 ||
			    bp->bp_shared || bp->bp_latent)
				continue;
			/*
			 * -c: a tracepoint's events of the command's tree
			 * alone, selected by the kernel; refused (a probe
			 * fed by switch records, an older dtd), all of
			 * them, filtered here by ptree_member().
			 */
			if (tree && strncmp(dt_dtpis[bp->bp_pbn - 1].dtpi_prov,
			    "tracepoint", DTNAMESIZE) == 0 &&
			    enable_tree(fd, bp, "the tree's alone")) {
				push_probe(fd, bp->bp_pbn);
				continue;
			}
			/*
			 * -c of a static command: a syscall probe takes the
			 * kernel's copy of the tree's calls no hook records
			 * too; refused (an older dtd, one without the
			 * kernel's feed), the hooks' alone, as before.
			 */
			if (ktree && strncmp(dt_dtpis[bp->bp_pbn - 1].dtpi_prov,
			    "syscall", DTNAMESIZE) == 0 &&
			    enable_tree(fd, bp, "the kernel's of the tree")) {
				g_cmdktree = ktree;
				if (g_verbose > 1)
					fprintf(stderr, "debug: probe '%s' "
					    "evtflags %#llx: the kernel's of "
					    "the tree too\n", probe_name(bp),
					    (unsigned long long)
					    bp->bp_req.dtrq_evtflags);
				push_probe(fd, bp->bp_pbn);
				continue;
			}
			if (ioctl(fd, DTIOCPRBENABLE, &bp->bp_req)) {
				if (errno == EEXIST)
					errx(1, "Cannot register multiple "
					    "probes of the same type: '%s'",
					    probe_name(bp));
				dev_err("DTIOCPRBENABLE");
			}
			push_probe(fd, bp->bp_pbn);
		}
	}
	agg_push(fd);
	if (ioctl(fd, DTIOCRECORD, &on))
		dev_err("DTIOCRECORD");
}

void
rules_teardown(int fd, int gone)
{
	struct bt_rule *r;
	struct bt_probe *bp;
	struct dt_evt ev;
	int off = 0;

	if (g_nprobes > 0 && !gone) {
		if (ioctl(fd, DTIOCRECORD, &off))
			err(1, "DTIOCRECORD");
		for (r = g_rules; r != NULL; r = r->br_next)
			for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
				if (bp->bp_type == P_PROBE &&
				    bp->bp_pbn != 0 && !bp->bp_shared &&
				    !bp->bp_latent &&
				    ioctl(fd, DTIOCPRBDISABLE, &bp->bp_req))
					err(1, "DTIOCPRBDISABLE");
	}
	fake_event(&ev, (unsigned int)-1);
	g_rterror = 0;
	for (r = g_rules; r != NULL && !g_rterror; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_type == P_END) {
				if (rule_eval(r, &ev, 1) && !g_rterror)
					goto out;
				break;
			}
out:
	maps_print_all();
}
