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
 * btrace: matching the script's probes with the device's: names, Linux
 * syscall aliases, wildcard patterns (an extension) and what is said
 * when nothing matches.
 */
#include <err.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"
#include "systab.h"

/*
 * The probe of bp's provider whose "func:name" is closest to bp's, by
 * the names -l shows and, for a system call, Linux's: NULL when none is
 * close (did_you_mean()).  The answer lives until the next call.
 */
static const char *
probe_near(struct bt_probe *bp)
{
	static char best[2 * (DTNAMESIZE + 1) + 1];
	char want[128], (*cands)[2 * (DTNAMESIZE + 1) + 1];
	const char **cp, *near, *lname;
	size_t i, n = 0;

	if (bp->bp_name == NULL)
		return NULL;
	snprintf(want, sizeof(want), "%s:%s", bp->bp_func, bp->bp_name);
	cands = xcalloc(2 * dt_ndtpi + 1, sizeof(*cands));
	cp = xcalloc(2 * dt_ndtpi + 1, sizeof(*cp));
	for (i = 0; i < dt_ndtpi; i++) {
		if (strncmp(bp->bp_prov, dt_dtpis[i].dtpi_prov,
		    DTNAMESIZE) != 0)
			continue;
		snprintf(cands[n], sizeof(cands[n]), "%s:%.16s",
		    dtpi_func(&dt_dtpis[i]), dt_dtpis[i].dtpi_name);
		cp[n] = cands[n];
		n++;
		if ((lname = pi_linux_name(&dt_dtpis[i])) != NULL) {
			snprintf(cands[n], sizeof(cands[n]), "%s:%.16s",
			    lname, dt_dtpis[i].dtpi_name);
			cp[n] = cands[n];
			n++;
		}
	}
	near = did_you_mean(want, cp, n);
	if (near != NULL)
		snprintf(best, sizeof(best), "%s", near);
	free(cp);
	free(cands);
	return near != NULL ? best : NULL;
}

/* A probe that is not found: is its provider known at all? */
void
probe_notfound(struct bt_probe *bp, const char *name)
{
	char (*names)[DTNAMESIZE + 1], msg[512];
	const char **provs;
	const char *near;
	size_t i, j, n = 0;

	names = xcalloc(dt_ndtpi + 1, sizeof(*names));
	provs = xcalloc(dt_ndtpi + 1, sizeof(*provs));
	for (i = 0; i < dt_ndtpi; i++) {
		if (strncmp(bp->bp_prov, dt_dtpis[i].dtpi_prov,
		    DTNAMESIZE) == 0) {
			free(provs);
			free(names);
			near = probe_near(bp);
			if (near != NULL)
				errx(1, "probe '%s' not found, did you mean "
				    "'%s:%s'?", name, bp->bp_prov, near);
			errx(1, "probe '%s' not found", name);
		}
		for (j = 0; j < n; j++)
			if (strncmp(provs[j], dt_dtpis[i].dtpi_prov,
			    DTNAMESIZE) == 0)
				break;
		if (j == n) {
			memcpy(names[n], dt_dtpis[i].dtpi_prov, DTNAMESIZE);
			provs[n] = names[n];
			n++;
		}
	}
	near = did_you_mean(bp->bp_prov, provs, n);
	snprintf(msg, sizeof(msg), "unknown provider '%s' in probe '%s'%s%s%s"
	    "%s", bp->bp_prov, name, near != NULL ? ", did you mean '" : "",
	    near != NULL ? near : "", near != NULL ? "'?" : "",
	    check_missing_prov(bp->bp_prov));
	free(provs);
	free(names);
	errx(1, "%s", msg);
}

/* Syscall probes are named sys%N on the device; show the call's name. */
const char *
dtpi_func(const struct dtioc_probe_info *pi)
{
	static char func[DTNAMESIZE + 1];
	const char *name;
	char *ep;
	long n;

	memcpy(func, pi->dtpi_func, DTNAMESIZE);
	func[DTNAMESIZE] = '\0';
	if (strncmp(pi->dtpi_prov, "syscall", DTNAMESIZE) != 0 ||
	    strncmp(func, "sys%", 4) != 0)
		return func;
	errno = 0;
	n = strtol(func + 4, &ep, 10);
	if (*ep != '\0' || ep == func + 4 || n < 1 || n > 65535)
		return func;
	name = syscall_name((unsigned int)n);
	return name != NULL ? name : func;
}

/*
 * The Linux kernel's name of a syscall probe's call when it is not the
 * name -l shows (brk for OpenBSD's break, exit_group for exit), else NULL:
 * what a user who knows Linux looks for.
 */
const char *
pi_linux_name(const struct dtioc_probe_info *pi)
{
	const struct systab_ent *se;
	char func[DTNAMESIZE + 1], *ep;
	long n;

	if (strncmp(pi->dtpi_prov, "syscall", DTNAMESIZE) != 0)
		return NULL;
	memcpy(func, pi->dtpi_func, DTNAMESIZE);
	func[DTNAMESIZE] = '\0';
	if (strncmp(func, "sys%", 4) != 0)
		return NULL;
	n = strtol(func + 4, &ep, 10);
	if (*ep != '\0' || n < 1 || n > 65535 ||
	    (se = systab_by_num((unsigned int)n)) == NULL ||
	    se->se_linux_name[0] == '\0' ||
	    strcmp(se->se_linux_name, dtpi_func(pi)) == 0)
		return NULL;
	return se->se_linux_name;
}

/*
 * A syscall probe's function as the device names it: sys%N of the call
 * a name stands for, OpenBSD's name or Linux's (exit_group, pread64,
 * clone3); "" when the table knows neither.
 */
static const char *
sys_devfunc(const char *name)
{
	static char func[DTNAMESIZE];
	int n;

	if ((n = systab_lookup(name)) < 1)
		return "";
	snprintf(func, sizeof(func), "sys%%%d", n);
	return func;
}

/*
 * A kernel function's name longer than dt(4)'s 15 characters: dtd
 * lists it cut to 15 where the cut names no other function, so the
 * whole name finds it (OpenBSD's btrace finds none of them).
 */
static int
kprobe_cut(const struct bt_probe *bp, const struct dtioc_probe_info *pi)
{
	return strcmp(bp->bp_prov, "kprobe") == 0 &&
	    strlen(bp->bp_func) > DTNAMESIZE - 1 &&
	    strnlen(pi->dtpi_func, DTNAMESIZE) == DTNAMESIZE - 1 &&
	    strncmp(bp->bp_func, pi->dtpi_func, DTNAMESIZE - 1) == 0;
}

struct dtioc_probe_info *
probe_find(struct bt_probe *bp)
{
	struct dtioc_probe_info *pi;
	const char *alias = "";
	size_t i;

	if (bp->bp_name != NULL && strcmp(bp->bp_prov, "syscall") == 0)
		alias = sys_devfunc(bp->bp_func);
	for (i = 0; i < dt_ndtpi; i++) {
		pi = &dt_dtpis[i];
		if (strncmp(bp->bp_prov, pi->dtpi_prov, DTNAMESIZE) != 0)
			continue;
		if (bp->bp_name == NULL)
			return pi;
		if (strncmp(bp->bp_func, dtpi_func(pi), DTNAMESIZE) != 0 &&
		    strncmp(bp->bp_func, pi->dtpi_func, DTNAMESIZE) != 0 &&
		    strncmp(alias, pi->dtpi_func, DTNAMESIZE) != 0 &&
		    !kprobe_cut(bp, pi))
			continue;
		if (strncmp(bp->bp_name, pi->dtpi_name, DTNAMESIZE) != 0)
			continue;
		if (g_verbose > 1)
			fprintf(stderr, "debug: matched probe %.16s:%s:%.16s\n",
			    pi->dtpi_prov, dtpi_func(pi), pi->dtpi_name);
		return pi;
	}
	return NULL;
}

const char *
probe_name(struct bt_probe *bp)
{
	static char buf[96];

	if (bp->bp_name == NULL)
		snprintf(buf, sizeof(buf), "%s:%s:%ld", bp->bp_prov,
		    bp->bp_func, bp->bp_number);
	else
		snprintf(buf, sizeof(buf), "%s:%s:%s", bp->bp_prov,
		    bp->bp_func, bp->bp_name);
	return buf;
}


/* Timer probes take their rate from the script: no pattern stands for it. */
static int
timer_prov(const struct dtioc_probe_info *pi)
{
	return strncmp(pi->dtpi_prov, "profile", DTNAMESIZE) == 0 ||
	    strncmp(pi->dtpi_prov, "interval", DTNAMESIZE) == 0;
}

static int
part_match(const char *pat, const char *s)
{
	return fnmatch(pat, s, 0) == 0;
}

/*
 * Does the probe match prov:func:name patterns?  A syscall's function
 * matches by the name -l shows (OpenBSD's) or by Linux's, so that
 * *brk* finds OpenBSD's break as scripts' syscall:brk:entry does.
 */
static int
pi_match(const struct dtioc_probe_info *pi, const char *prov,
    const char *func, const char *name)
{
	char p[DTNAMESIZE + 1], n[DTNAMESIZE + 1];
	const char *lname;

	memcpy(p, pi->dtpi_prov, DTNAMESIZE);
	p[DTNAMESIZE] = '\0';
	memcpy(n, pi->dtpi_name, DTNAMESIZE);
	n[DTNAMESIZE] = '\0';
	if (!part_match(prov, p) || !part_match(name, n))
		return 0;
	if (part_match(func, dtpi_func(pi)))
		return 1;
	return (lname = pi_linux_name(pi)) != NULL && part_match(func, lname);
}

/*
 * -l PATTERN: "prov:func:name" with wildcards in any part; fewer parts
 * match any func and name (so "syscall" lists the provider, "*open*" a
 * function anywhere).
 */
int
pi_listed(const struct dtioc_probe_info *pi, const char *pattern)
{
	char buf[3 * (DTNAMESIZE + 1) + 64], *parts[3], *c;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", pattern);
	parts[0] = buf;
	for (c = buf; *c != '\0' && n < 2; c++)
		if (*c == ':') {
			*c = '\0';
			parts[++n] = c + 1;
		}
	if (n == 0) {
		/* one word: a provider, or a function of any provider */
		char full[3 * (DTNAMESIZE + 1)];

		const char *lname = pi_linux_name(pi);

		snprintf(full, sizeof(full), "%.16s:%s:%.16s",
		    pi->dtpi_prov, dtpi_func(pi), pi->dtpi_name);
		if (pi_match(pi, parts[0], "*", "*") ||
		    pi_match(pi, "*", parts[0], "*") ||
		    part_match(parts[0], full))
			return 1;
		if (lname == NULL)
			return 0;
		snprintf(full, sizeof(full), "%.16s:%s:%.16s",
		    pi->dtpi_prov, lname, pi->dtpi_name);
		return part_match(parts[0], full);
	}
	if (n == 1)
		return pi_match(pi, parts[0], parts[1], "*");
	return pi_match(pi, parts[0], parts[1], parts[2]);
}

/*
 * A wildcard probe stands for each probe it matches: a copy of it per
 * match follows it in its rule, and it keeps no probe number itself.
 */
void
probe_expand(struct bt_probe *bp)
{
	struct dtioc_probe_info *pi;
	struct bt_probe *copy, *after = bp;
	size_t i, n = 0;

	for (i = 0; i < dt_ndtpi; i++) {
		pi = &dt_dtpis[i];
		if (timer_prov(pi) ||
		    !pi_match(pi, bp->bp_prov, bp->bp_func, bp->bp_name))
			continue;
		copy = xcalloc(1, sizeof(*copy));
		*copy = *bp;
		copy->bp_pbn = pi->dtpi_pbn;
		copy->bp_next = after->bp_next;
		after->bp_next = copy;
		after = copy;
		n++;
		if (g_verbose > 1)
			fprintf(stderr, "debug: matched probe %.16s:%s:%.16s\n",
			    pi->dtpi_prov, dtpi_func(pi), pi->dtpi_name);
	}
	if (n == 0)
		errx(1, "no probe matches '%s'%s", probe_name(bp),
		    strcmp(bp->bp_prov, "profile") == 0 ||
		    strcmp(bp->bp_prov, "interval") == 0 ? " (timer probes "
		    "need a rate, as in profile:hz:97)" : "");
	bp->bp_pbn = 0;
	bp->bp_wild = 2;	/* the pattern itself: never enabled */
}
