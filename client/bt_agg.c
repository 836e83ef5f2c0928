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
 * Aggregations at the source (dtvar.h, DTIOCPRBAGG, DTIOCAGGREAD): a
 * rule that only folds event fields into maps, on probes no other rule
 * needs events of, is handed to dtd, which folds the events where they
 * are put instead of sending each one here.  btrace merges dtd's table
 * into its maps before it prints or changes one, so the output is what
 * the same events would have given through read(2).  Which rules and
 * statements dtd can fold, and their specs, are bt_aggspec.c's.
 *
 * Single-threaded: the main loop, its rules and the end.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btrace.h"

/* How long the end of a command may wait for dtd's sources to drain. */
#define AGG_SETTLE_MS	5000
/* Between merges of dtd's table while user stacks are keys (agg_tick()). */
#define AGG_TICK_MS	100

/* What dtd's aggregation id stands for. */
struct agg_id {
	struct bt_rule		*ai_rule;
	struct bt_stmt		*ai_stmt;
	uint32_t		 ai_pbn;
	int			 ai_bycomm;	/* -c: keyed by comm to tell
						   the shell before its exec */
	int			 ai_tree;	/* -c: counted for the tree
						   by the kernel (DTF_F_TREE) */
};

static int		 agg_fd = -1;
static int		 agg_tree;	/* dtd took DTIOCTREE: -c's shell */
static struct agg_id	*agg_ids;	/* by id - 1 */
static uint32_t		 agg_nids;
static uint32_t		 agg_size;	/* entries of dtd's table */
static struct dtioc_aggent *agg_buf;
static uint64_t		 agg_overflow;	/* said so far */
static uint64_t		 agg_stkover;	/* of which the stack table's */
static uint32_t		 agg_stksize;	/* stacks of dtd's stack table */
static int		 agg_stacks;	/* some aggregation keys by one */
static int		 agg_ustacks;	/* by a user stack: a tracee may
					   fold it (dtsx_srcstk) */
static int		 agg_ticking;	/* agg_sync() from agg_tick() */
static char		 agg_mycomm[DTMAXCOMLEN]; /* -c's shell's, before */
static uint64_t		 agg_folded;
static uint64_t		 agg_kcounted;	/* of agg_folded, the kernel's */
static int		 agg_nrules;

/*
 * -c keeps a process's events from its exec of the command on: its
 * events from before (btrace's helper, under btrace's name) are not the
 * command's, and a folded entry has no time to tell them by.  Syscall
 * probes under -c take the launched processes' events only
 * (DTEVT_LAUNCHED), interval's belong to no process: those fold as they
 * are.  Profile's fold keyed by comm too, and the shell's entries under
 * btrace's name are left out (agg_keep()): dtd names a sample's thread
 * from its cache, which exec's PERF_RECORD_COMM updates, so a sample of
 * the shell in the moment between its release and its exec is left out
 * unless dtd first met the thread after the exec (then counted: rare, a
 * sample or none).  Other providers' events under -c are read as they
 * were: a tracepoint names its thread as it reads it, late enough to
 * miss the launcher's own fork before the exec every run.
 */
static int
agg_prov_bycomm(const char *prov)
{
	return strncmp(prov, "profile", DTNAMESIZE) == 0;
}

/* Whether dtd may fold prov's events under -c at all. */
static int
agg_prov_cmd(const char *prov)
{
	return strncmp(prov, "syscall", DTNAMESIZE) == 0 ||
	    strncmp(prov, "interval", DTNAMESIZE) == 0 ||
	    agg_prov_bycomm(prov);
}

static int
agg_nopush(void)
{
	const char *env = getenv("BTRACE_NOPUSH");

	return env != NULL && *env != '\0' && strcmp(env, "0") != 0;
}

int
agg_tree_name(int fd, int hooked)
{
	struct dtioc_tree t;

	/* an older dtd, OpenBSD's: -c's tracepoints read as events */
	if (!g_treefilter || agg_nopush())
		return 0;
	memset(&t, 0, sizeof(t));
	t.dttr_pid = g_cpid;
	/* a dtd without DTTR_F_HOOKED refuses the bit: the tree alone */
	if (hooked) {
		t.dttr_flags = DTTR_F_HOOKED;
		if (ioctl(fd, DTIOCTREE, &t) == 0) {
			agg_tree = 1;
			return 2;
		}
		t.dttr_flags = 0;
	}
	agg_tree = ioctl(fd, DTIOCTREE, &t) == 0;
	return agg_tree;
}

int
agg_wants_comm(const struct bt_rule *r, const char *prov)
{
	struct bt_stmt *s[DTA_PCBAGGS];
	struct dtioc_aggspec as;
	int n, i;

	if (g_command == NULL || g_allprocs || agg_nopush() ||
	    !agg_prov_bycomm(prov))
		return 0;
	if ((n = agg_stmts(r->br_action, s, 0)) <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!agg_stmt_spec(s[i], &as))
			return 0;
	return 1;
}

/*
 * -c's tracepoint counts, which the kernel can keep for the command's
 * tree alone (DTIOCTREE, DTF_F_TREE): whether r's aggregations are all
 * count()s keyed by nothing but the probe, on a tracepoint.  The tree
 * counted is the shell from its exec on and all it forks from then,
 * which is what ptree_member() keeps of the events.
 */
static int
agg_tree_probe(struct bt_rule *r, const char *prov)
{
	struct bt_stmt *stmts[DTA_PCBAGGS];
	const struct bt_expr *k;
	int n, i;

	if (!agg_tree || strncmp(prov, "tracepoint", DTNAMESIZE) != 0 ||
	    (n = agg_stmts(r->br_action, stmts, 0)) <= 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (stmts[i]->bs_kind != S_AGG ||
		    agg_func(stmts[i]->bs_agg) != DTA_COUNT ||
		    agg_var_used(stmts[i]->bs_var))
			return 0;
		for (k = stmts[i]->bs_keys; k != NULL; k = k->be_next)
			if (agg_field(k) != DTF_PBN)
				return 0;
	}
	return 1;
}

/*
 * Whether r's aggregations on bp may be handed to dtd, before any
 * filter is: *bycomm when they are keyed by the name too.
 */
static int
agg_probe_ok(struct bt_rule *r, const struct bt_probe *bp, int *bycomm)
{
	struct dtioc_aggspec as;
	struct bt_stmt *stmts[DTA_PCBAGGS];
	int n, i;

	const char *prov = dt_dtpis[bp->bp_pbn - 1].dtpi_prov;

	*bycomm = 0;
	/*
	 * A tracepoint whose events are the tree's alone (DTEVT_TREE) is
	 * folded as a launched process's are, keyed by pid; a tree's
	 * count, where it fits, better still: no record at all.
	 */
	if (g_treefilter && !agg_prov_cmd(prov) && (agg_tree_probe(r, prov) ||
	    !(bp->bp_req.dtrq_evtflags & DTEVT_TREE)))
		return agg_tree_probe(r, prov);
	if (g_treefilter && agg_prov_bycomm(prov)) {
		/* enabled with comm (agg_wants_comm()), room for the key */
		if (!(bp->bp_req.dtrq_evtflags & DTEVT_EXECNAME))
			return 0;
		n = agg_stmts(r->br_action, stmts, 0);
		for (i = 0; i < n; i++) {
			(void)agg_stmt_spec(stmts[i], &as);
			if (!agg_haskey(&as, DTF_COMM) &&
			    as.dtas_nkeys == DTA_MAXKEYS)
				return 0;
		}
		*bycomm = 1;
	}
	return 1;
}

/* Hand dtd r's aggregations on bp: 1 when the probe is folded there. */
static int
agg_probe(int fd, struct bt_rule *r, const struct bt_probe *bp)
{
	struct dtioc_aggspec as;
	struct bt_stmt *stmts[DTA_PCBAGGS], *s;
	uint32_t pbn = bp->bp_pbn;
	int first = 1, n, i, bycomm, tree;

	if (!agg_probe_ok(r, bp, &bycomm))
		return 0;
	/* what else -c folds is keyed by pid or belongs to no process */
	tree = g_treefilter && !agg_prov_cmd(dt_dtpis[pbn - 1].dtpi_prov) &&
	    agg_tree_probe(r, dt_dtpis[pbn - 1].dtpi_prov);
	/*
	 * a timed call's /@s[tid]/: the hooks skip a return unstamped.
	 * Pushed before the spec, which dtd may refuse: an exact filter
	 * left behind changes no output (btrace applies it whole too).
	 */
	if (r->br_filter != NULL && !lat_rule(r) &&
	    !push_exact(fd, r->br_filter, pbn,
	    (bp->bp_req.dtrq_evtflags & DTEVT_EXECNAME) != 0))
		return 0;
	/* none, in place of -p's pid alone (push_probe()): push_exact() */
	if (r->br_filter == NULL && g_pidfilter > 0 && !lat_rule(r))
		(void)push_exact(fd, NULL, pbn, 0);
	n = agg_stmts(r->br_action, stmts, 0);
	for (i = 0; i < n; i++) {
		s = stmts[i];
		(void)agg_stmt_spec(s, &as);
		if (bycomm && !agg_haskey(&as, DTF_COMM))
			as.dtas_keys[as.dtas_nkeys++] = DTF_COMM;
		agg_vflags(fd, &as, pbn);
		if (tree) {
			/* the pid key agg_stmt_spec() added for -c */
			as.dtas_nkeys = 0;
			memset(as.dtas_keys, 0, sizeof(as.dtas_keys));
			as.dtas_vflags |= DTF_F_TREE;
		}
		as.dtas_pbn = pbn;
		as.dtas_aggsize = agg_size;
		if (agg_haskey(&as, DTF_KSTACK) || agg_haskey(&as, DTF_USTACK)) {
			as.dtas_stksize = agg_stksize;
			agg_stacks = 1;
		}
		if (agg_haskey(&as, DTF_USTACK))
			agg_ustacks = 1;
		if (ioctl(fd, DTIOCPRBAGG, &as) == -1) {
			/* OpenBSD's dt(4), an older dtd: events as before */
			if (first)
				return 0;
			/* half the rule in dtd would lose the other half */
			err(1, "DTIOCPRBAGG");
		}
		first = 0;
		agg_size = as.dtas_aggsize;
		if (as.dtas_stksize != 0)
			agg_stksize = as.dtas_stksize;
		if (as.dtas_id != agg_nids + 1)
			errx(1, "DTIOCPRBAGG: id %u, not %u", as.dtas_id,
			    agg_nids + 1);
		agg_ids = realloc(agg_ids, (agg_nids + 1) * sizeof(*agg_ids));
		if (agg_ids == NULL)
			err(1, NULL);
		agg_ids[agg_nids].ai_rule = r;
		agg_ids[agg_nids].ai_stmt = s;
		agg_ids[agg_nids].ai_pbn = pbn;
		agg_ids[agg_nids].ai_bycomm = bycomm;
		agg_ids[agg_nids].ai_tree = tree;
		agg_nids++;
	}
	return 1;
}

/*
 * A call's latency's return rules (bt_lat.c), before any other rule:
 * all of them taken by dtd, or none.  The fold of one call beside
 * another's events would not pair as the script does (a handler's
 * call inside a timed one), and dtd cannot give a duration back; so a
 * refusal (another open timing calls, an older dtd) must come on the
 * first, while nothing is yet taken.  One taken and a later one not
 * (dtd out of room) has no way back: an error.  1 when all were.
 */
static int
agg_lat_push(int fd)
{
	struct bt_rule *r;
	int n = 0, bycomm;

	/* what agg_probe() could turn down before asking dtd */
	for (r = g_rules; r != NULL; r = r->br_next)
		if (lat_rule(r) && (!agg_rule_ok(r) ||
		    !agg_probe_ok(r, r->br_probes, &bycomm)))
			return 0;
	for (r = g_rules; r != NULL; r = r->br_next) {
		if (!lat_rule(r))
			continue;
		if (!agg_probe(fd, r, r->br_probes)) {
			if (n > 0)
				errx(1, "DTIOCPRBAGG: a call's latency "
				    "taken in part");
			return 0;
		}
		n++;
		agg_nrules++;
	}
	return n > 0;
}

int
agg_pushable(void)
{
	/*
	 * Folded in dtd, an entry is judged as btrace reads dtd's table,
	 * at the end or at a print: with -c's tree read from /proc alone,
	 * a process gone by then cannot be placed, and every one of the
	 * command's children that had ended was left out.  Its events,
	 * read as they come, are judged while it or its parent lives.
	 */
	return !agg_nopush() && !(g_treefilter && ptree_proc_only());
}

void
agg_push(int fd)
{
	const char *env;
	struct bt_rule *r;
	struct bt_probe *bp;
	int nrule = 0, any, lat;

	if (!agg_pushable()) {
		if (g_verbose && !agg_nopush())
			fprintf(stderr, "rules aggregated by btrace: the "
			    "command's tree is read from /proc, which cannot "
			    "place a process gone before dtd's table is "
			    "read\n");
		return;
	}
	if ((env = getenv("BTRACE_AGGSIZE")) != NULL)
		agg_size = (uint32_t)strtoul(env, NULL, 10);
	if ((env = getenv("BTRACE_STKSIZE")) != NULL)
		agg_stksize = (uint32_t)strtoul(env, NULL, 10);
	/* the -c shell's name until its exec: btrace's, as it forked */
	(void)prctl(PR_GET_NAME, agg_mycomm);
	agg_mycomm[DTMAXCOMLEN - 1] = '\0';
	lat = agg_lat_push(fd);
	for (r = g_rules; r != NULL; r = r->br_next) {
		nrule++;
		if (lat_rule(r)) {
			if (lat && g_verbose)
				fprintf(stderr, "rule %d: aggregated in dtd\n",
				    nrule);
			continue;
		}
		if (!agg_rule_ok(r))
			continue;
		any = 0;
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_wild != 2 && bp->bp_pbn != 0 &&
			    !bp->bp_shared && agg_probe(fd, r, bp))
				any = 1;
		if (!any)
			continue;
		agg_nrules++;
		if (g_verbose)
			fprintf(stderr, "rule %d: aggregated in dtd\n", nrule);
	}
	lat_finish(fd, lat);
	if (agg_nids == 0)
		return;
	agg_fd = fd;
	agg_buf = calloc(agg_size, sizeof(*agg_buf));
	if (agg_buf == NULL)
		err(1, NULL);
}

/* The key of e as its statement's keys read an event with its fields. */
static struct bt_value
agg_key(const struct agg_id *ai, const struct dtioc_aggent *e)
{
	static struct deep_stacks dk;
	struct bt_evt_ctx ec;
	struct dt_evt ev;
	struct bt_value v;
	struct bt_expr *k;
	size_t n = 0, i;
	int deep = 0;

	memset(&ev, 0, sizeof(ev));
	/* a stack deeper than a record's is read whole, as g_deep's */
	dk.dk_kn = dk.dk_un = 0;
	if (e->dtae_kstack != 0)
		deep |= aggstk_fill(&ev, &dk, e->dtae_kstack, 1);
	if (e->dtae_ustack != 0)
		deep |= aggstk_fill(&ev, &dk, e->dtae_ustack, 0);
	ev.dtev_pbn = ai->ai_pbn;
	ev.dtev_cpu = e->dtae_cpu;
	ev.dtev_pid = e->dtae_pid;
	ev.dtev_tid = e->dtae_tid;
	memcpy(ev.dtev_comm, e->dtae_comm, DTMAXCOMLEN);
	/*
	 * Arguments, return value and errno share the event's union, and
	 * a field that is not a key is zero in the entry: only keys are
	 * written (two keys on one word hold the same bits).
	 */
	for (i = 0; i < DTMAXFUNCARGS; i++)
		if (e->dtae_args[i] != 0)
			ev.dtev_args[i] = (register_t)e->dtae_args[i];
	if (e->dtae_retval != 0)
		ev.dtev_retval[0] = e->dtae_retval;
	if (e->dtae_error != 0)
		ev.dtev_error = e->dtae_error;
	ec.ec_evt = &ev;
	ec.ec_fake = 0;
	ec.ec_rule = ai->ai_rule;
	memset(&v, 0, sizeof(v));
	if ((k = ai->ai_stmt->bs_keys) == NULL)
		return v;
	if (deep) {
		g_deep_ev = &ev;
		g_deep = &dk;
	}
	if (k->be_next == NULL)
		v = expr_eval(k, &ec);
	else {
		for (; k != NULL; k = k->be_next)
			n++;
		v.v_type = VT_TUPLE;
		v.v_ntup = n;
		v.v_tup = tmp_alloc(n * sizeof(*v.v_tup));
		for (i = 0, k = ai->ai_stmt->bs_keys; k != NULL;
		    k = k->be_next, i++)
			v.v_tup[i] = expr_eval(k, &ec);
	}
	g_deep_ev = NULL;
	g_deep = NULL;
	return v;
}

/*
 * Whether e's events are the run's: -p's process, or -c's tree, whose
 * membership is asked as of upto, when the read that gave e returned
 * (ptree_member_upto()).  A pid of the tree reused by an outsider before
 * that loses what it counted as a member in the same entry, and one that
 * dtd merged late: an edge btrace accepts, the entries having no time.
 */
static int
agg_keep(const struct dtioc_aggent *e, const struct agg_id *ai,
    const struct timespec *upto)
{
	const char *prov = dt_dtpis[ai->ai_pbn - 1].dtpi_prov;

	/*
	 * An interval event belongs to no process (dtd's timer makes it):
	 * -p and -c keep it, as they keep the event itself (bt_dev_rules.c).
	 */
	if (strncmp(prov, "interval", DTNAMESIZE) == 0)
		return 1;
	if (g_pidfilter > 0)
		return e->dtae_pid == g_pidfilter;
	/* the kernel counted the tree's alone */
	if (!g_treefilter || ai->ai_tree)
		return 1;
	/* the shell before its exec, btrace's code under btrace's name */
	if (ai->ai_bycomm && e->dtae_pid == ptree_shell_pid() &&
	    strncmp(e->dtae_comm, agg_mycomm, DTMAXCOMLEN) == 0)
		return 0;
	return ptree_member_upto(e->dtae_pid, upto,
	    strncmp(prov, "syscall", DTNAMESIZE) == 0);
}

/*
 * Whether dtd folds into bv: a delete(), clear() or zero() of any other
 * map needs no merge first.  One merge is a round trip to dtd, and a
 * rule that deletes from a map of its own at every event (a write's
 * start time by tid) made one per event: btrace fell behind its ring,
 * and a lossless drain, holding the command's threads back for that
 * reader, made them give up and drop (the README's demo).
 */
int
agg_folds(const struct bt_var *bv)
{
	uint32_t i;

	for (i = 0; i < agg_nids; i++)
		if (agg_ids[i].ai_stmt->bs_var == bv)
			return 1;
	return 0;
}

void
agg_sync(void)
{
	struct dtioc_aggread rd;
	const struct dtioc_aggent *e;
	const struct agg_id *ai;
	struct map_part p;
	struct bt_value key;
	struct tmp_mark mark;
	struct timespec now;
	static time_t said;
	uint32_t i;

	if (agg_fd == -1)
		return;
	memset(&rd, 0, sizeof(rd));
	rd.dtgr_size = (size_t)agg_size * sizeof(*agg_buf);
	rd.dtgr_ents = agg_buf;
	rd.dtgr_flags = DTA_RD_CLEAR;
	if (ioctl(agg_fd, DTIOCAGGREAD, &rd) == -1) {
		warn("DTIOCAGGREAD");
		return;
	}
	/*
	 * The tree taken in after the read, not before: every fork behind
	 * an entry was announced before the read returned, and the read
	 * empties dtd's table, so a child forked after an earlier look,
	 * judged an outsider, would have lost its counts for good.
	 */
	clock_gettime(CLOCK_REALTIME, &now);
	if (g_treefilter)
		ptree_sync();
	/* every stack id of these entries is in dtd's stack table now */
	if (agg_stacks)
		(void)aggstk_fetch(agg_fd);
	for (i = 0; i < rd.dtgr_nents; i++) {
		e = &agg_buf[i];
		if (e->dtae_id == 0 || e->dtae_id > agg_nids)
			continue;
		ai = &agg_ids[e->dtae_id - 1];
		if (!agg_keep(e, ai, &now)) {
			g_filtered += e->dtae_count;
			continue;
		}
		p.mp_count = (long)e->dtae_count;
		p.mp_sum = e->dtae_sum;
		p.mp_min = e->dtae_min;
		p.mp_max = e->dtae_max;
		p.mp_bucket = e->dtae_bucket;
		p.mp_bkind = e->dtae_bkind;
		mark = tmp_mark();
		key = agg_key(ai, e);
		map_merge(ai->ai_stmt->bs_var, &key, ai->ai_stmt->bs_agg, &p);
		tmp_release(mark);
	}
	agg_folded = rd.dtgr_aggevt;
	agg_kcounted = rd.dtgr_kcount;
	/*
	 * Never silently: said as lost events are, each table's apart, at
	 * most once a second as the run goes; what is left, at the end.
	 */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (agg_ticking && now.tv_sec == said)
		return;
	said = now.tv_sec;
	if (agg_stacks && aggstk_overflow() > agg_stkover) {
		fprintf(stderr, "%llu events not aggregated: dtd's stack "
		    "table is full (%u stacks; BTRACE_STKSIZE)\n",
		    (unsigned long long)(aggstk_overflow() - agg_stkover),
		    agg_stksize);
		agg_overflow += aggstk_overflow() - agg_stkover;
		agg_stkover = aggstk_overflow();
	}
	if (rd.dtgr_overflow > agg_overflow) {
		/*
		 * A kernel program's map refusing a key (full, its bucket
		 * busy, no memory) is folded here too, and dtd cannot
		 * tell those apart: say all that it may be.
		 */
		fprintf(stderr, "%llu events not aggregated: dtd's table is "
		    "full (%u entries; BTRACE_AGGSIZE)%s\n",
		    (unsigned long long)(rd.dtgr_overflow - agg_overflow),
		    agg_size, rd.dtgr_kcount == 0 ? "" : ", or the kernel's "
		    "count could not insert them (its map full, busy or out "
		    "of memory)");
		agg_overflow = rd.dtgr_overflow;
	}
}

int
agg_tick_ms(void)
{
	return agg_stacks ? AGG_TICK_MS : 0;
}

/*
 * Entries keyed by stacks are merged as the run goes, at most every
 * AGG_TICK_MS.  A user stack is symbolised in its process's mappings,
 * which btrace reads when it first meets the pid (bt_syms.c) and keeps:
 * an event's as it is read, a folded entry's as it is merged.  Merged
 * only at the end, the entries of a process gone by then would find no
 * mappings (dtd remembers those of the processes it traces, not of
 * every process a profile samples); merged as they come, a process met
 * once keeps its symbols after it exits.  And each read that empties
 * dtd's entries starts its stack table afresh (dtvar.h): it need hold
 * the distinct stacks of AGG_TICK_MS, not of the whole run, of every
 * process a machine-wide profile samples before btrace leaves out
 * those not of -c's command.
 */
void
agg_tick(void)
{
	static struct timespec last;
	struct timespec now;

	if (!agg_stacks)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - last.tv_sec) * 1000 +
	    (now.tv_nsec - last.tv_nsec) / 1000000 < AGG_TICK_MS)
		return;
	last = now;
	agg_ticking = 1;
	agg_sync();
	agg_ticking = 0;
}

uint64_t
agg_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int
agg_done(int fd, uint64_t t)
{
	struct dtioc_aggread rd;

	if (fd == -1)
		return 1;
	memset(&rd, 0, sizeof(rd));
	/* a device that does not know DTIOCAGGREAD folds nothing */
	return ioctl(fd, DTIOCAGGREAD, &rd) == -1 || rd.dtgr_done >= t;
}

int
agg_settled(int fd, uint64_t t)
{
	return agg_nrules == 0 || agg_done(fd, t);
}

/*
 * The command ended: what dtd folds never reaches
 * read(2) to say that dtd is still draining, and a starved drain may
 * not have put the last events into the rings yet either, so the run
 * waits until dtd has put every event stamped before the first look
 * (dtgr_done), at most AGG_SETTLE_MS.  dtd has nothing to block on for
 * that: one look a call, by a loop that reads on between looks.  A
 * lossless drain holds tracees back while a reader's ring is over half
 * full, so a reader that only waited for the fold stopped the very
 * drain it waited for (the README's demo: the traced program dropping
 * after the 500 ms bound, 60k events in a one-second run).  1 once
 * done.
 */
int
agg_settle_poll(int fd)
{
	static uint64_t t, until;
	static int settled;

	if (settled || fd == -1 || agg_nrules == 0)
		return 1;
	if (t == 0) {
		t = agg_clock_ns(CLOCK_REALTIME);
		until = agg_clock_ns(CLOCK_MONOTONIC) +
		    AGG_SETTLE_MS * 1000000ULL;
	}
	if (agg_settled(fd, t) || agg_clock_ns(CLOCK_MONOTONIC) >= until)
		settled = 1;
	return settled;
}

void
agg_report(void)
{
	struct dtioc_statx sx;

	if (agg_nrules == 0)
		return;
	fprintf(stderr, "%d rules aggregated in dtd\n", agg_nrules);
	fprintf(stderr, "%llu events aggregated by dtd\n",
	    (unsigned long long)agg_folded);
	/*
	 * Both in dtd's unit, an event once for each aggregation it went
	 * into: "of them", so the second is never read as the first's
	 * peer (a rule with two counts folds each event twice).
	 */
	fprintf(stderr, "%llu of them counted by the kernel\n",
	    (unsigned long long)agg_kcounted);
	fprintf(stderr, "%llu events dtd's table could not hold\n",
	    (unsigned long long)(agg_overflow - agg_stkover));
	if (agg_stacks)
		fprintf(stderr, "%llu events dtd's stack table could not "
		    "hold\n", (unsigned long long)agg_stkover);
	/*
	 * Not lost: their records were folded by dtd instead.  Said only
	 * where a tracee could have folded a stack (a kernel stack's
	 * rules would always say 0), and a device without the count
	 * (OpenBSD's) folds none in a tracee.
	 */
	memset(&sx, 0, sizeof(sx));
	if (agg_ustacks && ioctl(agg_fd, DTIOCGSTATSX, &sx) == 0)
		fprintf(stderr, "%llu events the tracees' stack tables could "
		    "not hold (recorded)\n",
		    (unsigned long long)sx.dtsx_srcstk);
}
