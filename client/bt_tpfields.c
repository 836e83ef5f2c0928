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
 * btrace: the names of a Linux tracepoint's arguments, for args.NAME and
 * -lv.  dt(4)'s DTIOCGARGS gives types only, and OpenBSD's btrace reads
 * nothing else, so the names are read here from the event's format in
 * tracefs (root, as the tracepoints themselves), never through the
 * device: a tracepoint:SUBSYS:NAME probe whose name is a Linux event's,
 * shortened by dt(4)'s rule (dt.4), has the event's fields but the
 * common_ ones as arg0, arg1, ..., in order.  OpenBSD's own names
 * (sched:on__cpu, raw_syscalls:sys_enter, ...) carry OpenBSD's
 * arguments, not the fields: a probe whose argument count differs from
 * the event's has no names.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <userdt/udt_tpname.h>

#include "btrace.h"

#define TP_NAMELEN	64

struct tp_names {
	int		 tn_loaded;
	int		 tn_n;		/* -1: no names */
	char		 tn_name[DTMAXFUNCARGS][TP_NAMELEN];
};

static struct tp_names	*tp_cache;	/* by pbn - 1 */

/* The non-common fields' names of one event's format file. */
static int
tp_format(const char *path, struct tp_names *tn)
{
	char line[512], *f, *semi, *name, *br;
	FILE *fp;
	int n = 0;

	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if ((f = strstr(line, "field:")) == NULL ||
		    (semi = strchr(f, ';')) == NULL)
			continue;
		*semi = '\0';
		while (semi > f && semi[-1] == ' ')
			*--semi = '\0';
		if ((name = strrchr(f, ' ')) == NULL)
			continue;
		name++;
		if ((br = strchr(name, '[')) != NULL)
			*br = '\0';
		if (strncmp(name, "common_", 7) == 0)
			continue;
		if (n < DTMAXFUNCARGS)
			snprintf(tn->tn_name[n], TP_NAMELEN, "%s", name);
		n++;
	}
	fclose(fp);
	return n;
}

static const struct tp_names *
tp_load(const struct dtioc_probe_info *pi)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events",
		"/sys/kernel/debug/tracing/events",
	};
	struct tp_names *tn;
	char sys[DTNAMESIZE + 1], name[DTNAMESIZE + 1], s[DTNAMESIZE];
	char path[512];
	struct dirent *de;
	DIR *d = NULL;
	size_t i;
	int n;

	if (pi->dtpi_pbn == 0 || pi->dtpi_pbn > dt_ndtpi)
		return NULL;
	if (tp_cache == NULL)
		tp_cache = xcalloc(dt_ndtpi, sizeof(*tp_cache));
	tn = &tp_cache[pi->dtpi_pbn - 1];
	if (tn->tn_loaded)
		return tn->tn_n >= 0 ? tn : NULL;
	tn->tn_loaded = 1;
	tn->tn_n = -1;
	if (strncmp(pi->dtpi_prov, "tracepoint", DTNAMESIZE) != 0)
		return NULL;
	snprintf(sys, sizeof(sys), "%.16s", pi->dtpi_func);
	snprintf(name, sizeof(name), "%.16s", pi->dtpi_name);
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]) && d == NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", roots[i], sys);
		d = opendir(path);
	}
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		udt_tp_shorten(sys, de->d_name, s);
		if (strcmp(s, name) != 0)
			continue;
		snprintf(path + strlen(path), sizeof(path) - strlen(path),
		    "/%s/format", de->d_name);
		n = tp_format(path, tn);
		if (n > DTMAXFUNCARGS)
			n = DTMAXFUNCARGS;
		/* OpenBSD's meaning under a Linux event's name: no names */
		if (n == pi->dtpi_nargs)
			tn->tn_n = n;
		break;
	}
	closedir(d);
	return tn->tn_n >= 0 ? tn : NULL;
}

const char *
tp_argname(const struct dtioc_probe_info *pi, int n)
{
	const struct tp_names *tn = tp_load(pi);

	return tn != NULL && n >= 0 && n < tn->tn_n ? tn->tn_name[n] : NULL;
}

int
tp_argindex(const struct dtioc_probe_info *pi, const char *name)
{
	const struct tp_names *tn = tp_load(pi);
	int i;

	if (tn == NULL)
		return -1;
	for (i = 0; i < tn->tn_n; i++)
		if (strcmp(tn->tn_name[i], name) == 0)
			return i;
	return -1;
}
