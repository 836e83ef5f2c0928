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
 * A system call's latency folded where the call is made (dtvar.h's
 * DTF_LAT): the script
 *
 *	syscall:read:entry { @s[tid] = nsecs; }
 *	syscall:read:return /@s[tid]/ {
 *		@h = hist(nsecs - @s[tid]); delete(@s[tid]);
 *	}
 *
 * reads two events a call to keep a map btrace alone has.  Its output
 * is that of an aggregation of the call's duration on the return
 * probe, which the hooks measure (they stamp the entry themselves):
 * when nothing else can see @s, the entry probe is not enabled and the
 * return's aggregation is handed to dtd with the duration as its value
 * (bt_agg.c).
 *
 * What nothing else seeing @s takes: the entry rule (any number of
 * syscall entry probes, no filter) does nothing but @s[tid] = nsecs;
 * every call of those has a return rule of its own probe, filtered on
 * @s[tid] alone, that does nothing but aggregate nsecs - @s[tid] into
 * a map of keys the fold supports and delete(@s[tid]); an END rule
 * clears @s (`END { clear(@s); }`, as bpftrace's own latency tools end)
 * and uses it for nothing else; no other rule names @s, and no other
 * rule names those probes.  Only for -c's
 * command (DTEVT_LAUNCHED): the kernel's events of other processes
 * carry no stamp of the hooks'.  Not for calls that do not return as
 * they entered (fork-like, exec-like, exits, sigreturn).  A count()
 * takes no value, so it is not folded (it would need the stamp too).
 * A vfork or posix_spawn child's calls are timed in the child, on a
 * stamp of its own beside its waiting parent's (udt_preload.h's
 * udt_lat_here()), as the events pair them under the child's tid.
 *
 * Why the END rule: run as events, @s at the end holds the entries of
 * threads still inside a call when the script ends (a thread blocked in
 * a read when its process exits, a descendant still reading after the
 * command exited), and btrace prints them; folded, @s is empty.  A
 * script that clears @s at its end prints the same either way; one
 * that does not is read as events.
 *
 * Single-threaded, as the rest of btrace's setup.
 */
#include <sys/ioctl.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

/* Calls that return elsewhere or not at all, or run the entry's twice. */
static const char *const lat_inplace[] = {
	"clone", "clone3", "fork", "vfork", "execve", "execveat", "exit",
	"exit_group", "rt_sigreturn",
};

static struct bt_var	*lat_map;	/* @s, when the pattern is found */
static struct bt_rule	*lat_entry;	/* its entry rule */

static int
lat_is_tid(const struct bt_expr *k)
{
	return k != NULL && k->be_next == NULL && k->be_kind == E_BUILTIN &&
	    k->be_op == B_TID;
}

/* e is @m[tid]. */
static int
lat_is_get(const struct bt_expr *e, const struct bt_var *m)
{
	return e != NULL && e->be_kind == E_MAPGET && e->be_var == m &&
	    lat_is_tid(e->be_left);
}

/* Whether e or anything below or after it names bv. */
static int
lat_expr_names(const struct bt_expr *e, const struct bt_var *bv)
{
	for (; e != NULL; e = e->be_next)
		if (e->be_var == bv || lat_expr_names(e->be_left, bv) ||
		    lat_expr_names(e->be_right, bv) ||
		    lat_expr_names(e->be_third, bv))
			return 1;
	return 0;
}

static int
lat_stmt_names(const struct bt_stmt *s, const struct bt_var *bv)
{
	for (; s != NULL; s = s->bs_next)
		if (s->bs_var == bv || lat_expr_names(s->bs_keys, bv) ||
		    lat_expr_names(s->bs_expr, bv) ||
		    lat_stmt_names(s->bs_body, bv) ||
		    lat_stmt_names(s->bs_else, bv))
			return 1;
	return 0;
}

/* Whether statement s itself (not those after it) names bv. */
static int
lat_one_names(const struct bt_stmt *s, const struct bt_var *bv)
{
	return s->bs_var == bv || lat_expr_names(s->bs_keys, bv) ||
	    lat_expr_names(s->bs_expr, bv) ||
	    lat_stmt_names(s->bs_body, bv) || lat_stmt_names(s->bs_else, bv);
}

/*
 * Whether the statements s, blocks opened, use m only to clear it, at
 * their top (not under a condition or a loop): 1 when one does, 0 when
 * none names m, -1 when one names it otherwise.
 */
static int
lat_clears(const struct bt_stmt *s, const struct bt_var *m)
{
	int rv = 0, r;

	for (; s != NULL; s = s->bs_next) {
		if (s->bs_kind == S_BLOCK) {
			if ((r = lat_clears(s->bs_body, m)) < 0)
				return -1;
			rv |= r;
		} else if (s->bs_kind == S_CLEAR && s->bs_var == m &&
		    s->bs_keys == NULL)
			rv = 1;
		else if (lat_one_names(s, m))
			return -1;
	}
	return rv;
}

/*
 * Whether r is an END rule that clears m and uses it for nothing else:
 * then no entry of m, one a thread still inside a call at the end
 * would have left, is ever printed, and the fold's empty m prints the
 * same.
 */
static int
lat_end_clears(const struct bt_rule *r, const struct bt_var *m)
{
	const struct bt_probe *bp;

	/* A filter may be false: the clear would not run (review). */
	if (r->br_probes == NULL || r->br_filter != NULL)
		return 0;
	for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
		if (bp->bp_type != P_END)
			return 0;
	return lat_clears(r->br_action, m) == 1;
}

/* Whether the statements s, or any below them, call exit(). */
static int
lat_has_exit(const struct bt_stmt *s)
{
	for (; s != NULL; s = s->bs_next)
		if (s->bs_kind == S_EXIT || lat_has_exit(s->bs_body) ||
		    lat_has_exit(s->bs_else))
			return 1;
	return 0;
}

/*
 * Whether some END rule calls exit(): btrace stops running END rules
 * there, so a clear after it, in that rule or a later one, may never
 * run (review).
 */
static int
lat_end_exits(void)
{
	const struct bt_rule *r;
	const struct bt_probe *bp;

	for (r = g_rules; r != NULL; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next)
			if (bp->bp_type == P_END && lat_has_exit(r->br_action))
				return 1;
	return 0;
}

/* The statements of an action, blocks opened, NOPs left out: at most 3. */
static int
lat_stmts(const struct bt_stmt *s, const struct bt_stmt **out, int n)
{
	for (; s != NULL && n >= 0; s = s->bs_next) {
		if (s->bs_kind == S_NOP)
			continue;
		if (s->bs_kind == S_BLOCK) {
			n = lat_stmts(s->bs_body, out, n);
			continue;
		}
		if (n == 3)
			return -1;
		out[n++] = s;
	}
	return n;
}

/* The one probe of a rule, a syscall's of name, matched; else NULL. */
static const struct bt_probe *
lat_probe(const struct bt_probe *bp, const char *name)
{
	const struct dtioc_probe_info *pi;
	size_t i;

	if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 || bp->bp_wild != 0 ||
	    bp->bp_shared)
		return NULL;
	pi = &dt_dtpis[bp->bp_pbn - 1];
	if (strncmp(pi->dtpi_prov, "syscall", DTNAMESIZE) != 0 ||
	    strncmp(pi->dtpi_name, name, DTNAMESIZE) != 0)
		return NULL;
	for (i = 0; i < sizeof(lat_inplace) / sizeof(lat_inplace[0]); i++)
		if (strcmp(dtpi_func(pi), lat_inplace[i]) == 0)
			return NULL;
	return bp;
}

/* Whether r is one of m's return rules: 1 with its aggregation. */
static int
lat_ret_rule(const struct bt_rule *r, const struct bt_var *m,
    const struct bt_stmt **aggp)
{
	const struct bt_stmt *s[3];
	const struct bt_expr *v;

	if (r->br_probes == NULL || r->br_probes->bp_next != NULL ||
	    lat_probe(r->br_probes, "return") == NULL ||
	    !lat_is_get(r->br_filter, m) ||
	    lat_stmts(r->br_action, s, 0) != 2)
		return 0;
	if (s[0]->bs_kind != S_AGG || s[0]->bs_agg == A_COUNT ||
	    s[0]->bs_var == m || lat_expr_names(s[0]->bs_keys, m))
		return 0;
	/* lhist's range follows in be_next: constants, the parser's */
	v = s[0]->bs_expr;
	if (v == NULL || v->be_kind != E_BINOP ||
	    v->be_op != OP_SUB || v->be_left->be_kind != E_BUILTIN ||
	    v->be_left->be_op != B_NSECS || !lat_is_get(v->be_right, m))
		return 0;
	if (s[1]->bs_kind != S_DELETE || s[1]->bs_var != m ||
	    !lat_is_tid(s[1]->bs_keys))
		return 0;
	*aggp = s[0];
	return 1;
}

/* Whether probes en and ret are one call's entry and return. */
static int
lat_pair(uint32_t en, uint32_t ret)
{
	const struct dtioc_probe_info *a, *b;

	if (en == 0 || ret == 0 || en > dt_ndtpi || ret > dt_ndtpi)
		return 0;
	a = &dt_dtpis[en - 1];
	b = &dt_dtpis[ret - 1];
	return strncmp(a->dtpi_prov, b->dtpi_prov, DTNAMESIZE) == 0 &&
	    strcmp(tmp_strdup(dtpi_func(a)), dtpi_func(b)) == 0;
}

/* Whether some rule but r names probe number pbn. */
static int
lat_probe_shared(const struct bt_rule *r, uint32_t pbn)
{
	const struct bt_rule *r2;
	const struct bt_probe *bp;

	for (r2 = g_rules; r2 != NULL; r2 = r2->br_next)
		for (bp = r2->br_probes; r2 != r && bp != NULL;
		    bp = bp->bp_next)
			if (bp->bp_type == P_PROBE && bp->bp_pbn == pbn)
				return 1;
	return 0;
}

/* Whether the entry rule e and the rest of the script make the pattern. */
static int
lat_check(struct bt_rule *e)
{
	const struct bt_stmt *s[3], *agg;
	const struct bt_probe *bp;
	const struct bt_rule *r, *ret;
	struct bt_var *m;
	uint32_t want;
	int cleared = 0;

	if (e->br_filter != NULL || lat_stmts(e->br_action, s, 0) != 1 ||
	    s[0]->bs_kind != S_MAPSTORE || s[0]->bs_op != 0 ||
	    !lat_is_tid(s[0]->bs_keys) || s[0]->bs_expr == NULL ||
	    s[0]->bs_expr->be_kind != E_BUILTIN ||
	    s[0]->bs_expr->be_op != B_NSECS)
		return 0;
	m = s[0]->bs_var;
	for (bp = e->br_probes; bp != NULL; bp = bp->bp_next)
		if (lat_probe(bp, "entry") == NULL ||
		    lat_probe_shared(e, bp->bp_pbn))
			return 0;
	/*
	 * every rule naming m: e, a return rule of one of e's calls, or
	 * an END rule that clears m, of which there must be one
	 */
	for (r = g_rules; r != NULL; r = r->br_next) {
		if (r == e || (!lat_expr_names(r->br_filter, m) &&
		    !lat_stmt_names(r->br_action, m)))
			continue;
		if (lat_end_clears(r, m)) {
			cleared = 1;
			continue;
		}
		if (!lat_ret_rule(r, m, &agg) ||
		    lat_probe_shared(r, r->br_probes->bp_pbn))
			return 0;
		want = r->br_probes->bp_pbn;
		for (bp = e->br_probes; bp != NULL; bp = bp->bp_next)
			if (lat_pair(bp->bp_pbn, want))
				break;
		if (bp == NULL)
			return 0;
	}
	if (!cleared || lat_end_exits())
		return 0;
	/* and every call of e has its return rule: no entry left in m */
	for (bp = e->br_probes; bp != NULL; bp = bp->bp_next) {
		for (ret = g_rules; ret != NULL; ret = ret->br_next)
			if (ret != e && ret->br_probes != NULL &&
			    lat_pair(bp->bp_pbn, ret->br_probes->bp_pbn) &&
			    lat_ret_rule(ret, m, &agg))
				break;
		if (ret == NULL)
			return 0;
	}
	lat_map = m;
	lat_entry = e;
	return 1;
}

void
lat_plan(void)
{
	struct bt_rule *r;
	struct bt_probe *bp;

	if (!agg_pushable() || g_command == NULL || g_allprocs)
		return;
	for (r = g_rules; r != NULL; r = r->br_next)
		if (lat_check(r))
			break;
	if (lat_map == NULL)
		return;
	/* not enabled unless a return cannot be folded (lat_finish()) */
	for (bp = lat_entry->br_probes; bp != NULL; bp = bp->bp_next)
		bp->bp_latent = 1;
}

int
lat_rule(const struct bt_rule *r)
{
	const struct bt_stmt *agg;

	return lat_map != NULL && r != lat_entry &&
	    lat_ret_rule(r, lat_map, &agg);
}

int
lat_stmt(const struct bt_stmt *s)
{
	const struct bt_stmt *agg;
	const struct bt_rule *r;

	if (lat_map == NULL)
		return 0;
	for (r = g_rules; r != NULL; r = r->br_next)
		if (r != lat_entry && lat_ret_rule(r, lat_map, &agg) &&
		    agg == s)
			return 1;
	return 0;
}

int
lat_delete(const struct bt_stmt *s)
{
	/* only the return rules name the map beside its entry rule */
	return lat_map != NULL && s->bs_kind == S_DELETE &&
	    s->bs_var == lat_map;
}

void
lat_finish(int fd, int folded)
{
	struct bt_probe *bp;
	struct bt_rule *r;
	int nrule = 0;

	if (lat_map == NULL)
		return;
	/*
	 * None of the returns taken (agg_push() takes all or none):
	 * every entry as events, so that the whole script reads its
	 * events and pairs as it does.
	 */
	for (bp = lat_entry->br_probes; !folded && bp != NULL;
	    bp = bp->bp_next) {
		bp->bp_latent = 0;
		if (ioctl(fd, DTIOCPRBENABLE, &bp->bp_req))
			err(1, "DTIOCPRBENABLE");
		push_probe(fd, bp->bp_pbn);
	}
	for (r = g_rules; folded && r != NULL; r = r->br_next) {
		nrule++;
		if (r == lat_entry && g_verbose)
			fprintf(stderr, "rule %d: its calls timed by the "
			    "hooks\n", nrule);
	}
}
