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
 * tracefs: finding it, mounting it, reading an event's id and format.
 * The format files are the kernel's own description of each record, so
 * field offsets are never assumed: a kernel that moves a field still
 * decodes right, one that drops it leaves the probe unpublished.
 *
 * Locks used to protect the globals in this file:
 *	[o]	dt_tracefs_once
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_proc.h"
#include "dt_tracefs.h"

#define DT_TRACEFS_MNT	"/sys/kernel/tracing"
#define DT_TRACEFS_DBG	"/sys/kernel/debug/tracing"
#define DT_TP_FMTMAX	65536	/* format files are a few KB */

static pthread_once_t	 dt_tracefs_once = PTHREAD_ONCE_INIT;
static const char	*dt_tracefs_root;	/* [o] NULL: none */
static int		 dt_tracefs_error;	/* [o] */

static int
dt_tracefs_has_events(const char *root)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", root);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void
dt_tracefs_find(void)
{
	if (dt_tracefs_has_events(DT_TRACEFS_MNT)) {
		dt_tracefs_root = DT_TRACEFS_MNT;
		return;
	}
	if (dt_tracefs_has_events(DT_TRACEFS_DBG)) {
		dt_tracefs_root = DT_TRACEFS_DBG;
		return;
	}
	/*
	 * Nobody mounted it: do what perf and bpftrace users do by hand.
	 * It stays mounted after we exit, like theirs; it costs nothing.
	 */
	if (mount("nodev", DT_TRACEFS_MNT, "tracefs", 0, NULL) == -1 &&
	    errno != EBUSY) {
		dt_tracefs_error = errno;
		return;
	}
	if (dt_tracefs_has_events(DT_TRACEFS_MNT))
		dt_tracefs_root = DT_TRACEFS_MNT;
	else
		dt_tracefs_error = ENOENT;
}

int
dt_tracefs_init(void)
{
	pthread_once(&dt_tracefs_once, dt_tracefs_find);
	return dt_tracefs_root != NULL ? 0 : dt_tracefs_error;
}

const char *
dt_tracefs_dir(void)
{
	return dt_tracefs_init() == 0 ? dt_tracefs_root : NULL;
}

/*
 * The type DTIOCGARGS reports, within its 16 bytes: strings read as
 * "char *", qualifiers go, pointers are "void *", and a name too long
 * for the field says its size and sign instead.
 */
static void
dt_tp_pubtype(struct dt_tp_field *f, const char *type)
{
	char t[128];
	const char *p;
	size_t n;

	if (f->dtf_kind != DT_TPF_NUM) {
		snprintf(f->dtf_type, sizeof(f->dtf_type), "char *");
		return;
	}
	if (strchr(type, '*') != NULL) {
		snprintf(f->dtf_type, sizeof(f->dtf_type), "void *");
		return;
	}
	p = type;
	while (strncmp(p, "const ", 6) == 0 || strncmp(p, "volatile ", 9) == 0)
		p = strchr(p, ' ') + 1;
	snprintf(t, sizeof(t), "%s", p);
	if ((n = strlen(t)) < sizeof(f->dtf_type)) {
		memcpy(f->dtf_type, t, n + 1);
		return;
	}
	snprintf(f->dtf_type, sizeof(f->dtf_type), "%sint%u_t",
	    f->dtf_signed ? "" : "u", (unsigned int)f->dtf_size * 8);
}

/*
 * One "field:TYPE NAME;	offset:N;	size:N;	signed:N;" line; *end
 * where the field ends in the record, the whole array's.
 */
static int
dt_tp_parse_field(const char *line, struct dt_tp_field *f, unsigned int *end)
{
	char decl[128], type[128], *name, *br;
	const char *p, *e;
	unsigned int off, size, sgn;
	size_t n;

	if ((p = strstr(line, "field:")) == NULL)
		return EINVAL;
	p += 6;
	if ((e = strchr(p, ';')) == NULL || (n = (size_t)(e - p)) == 0 ||
	    n >= sizeof(decl))
		return EINVAL;
	memcpy(decl, p, n);
	decl[n] = '\0';
	if ((p = strstr(e, "offset:")) == NULL ||
	    sscanf(p, "offset:%u;", &off) != 1 ||
	    (p = strstr(p, "size:")) == NULL ||
	    sscanf(p, "size:%u;", &size) != 1 ||
	    (p = strstr(p, "signed:")) == NULL ||
	    sscanf(p, "signed:%u;", &sgn) != 1)
		return EINVAL;
	if (off > UINT16_MAX || size > UINT16_MAX || size == 0)
		return EINVAL;
	*end = off + size;
	while (n > 0 && isspace((unsigned char)decl[n - 1]))
		decl[--n] = '\0';
	if ((name = strrchr(decl, ' ')) == NULL)
		return EINVAL;
	*name++ = '\0';
	snprintf(type, sizeof(type), "%s", decl);
	memset(f, 0, sizeof(*f));
	f->dtf_off = (uint16_t)off;
	f->dtf_size = (uint16_t)size;
	f->dtf_signed = sgn != 0;
	if ((br = strchr(name, '[')) != NULL) {
		/* An array: chars are a string, others give element 0. */
		*br = '\0';
		if (strcmp(type, "char") == 0 ||
		    strcmp(type, "unsigned char") == 0)
			f->dtf_kind = DT_TPF_CHARS;
		else {
			unsigned long cnt = strtoul(br + 1, NULL, 10);

			if (cnt > 0 && size % cnt == 0)
				f->dtf_size = (uint16_t)(size / cnt);
		}
	}
	if (strncmp(type, "__data_loc ", 11) == 0)
		f->dtf_kind = DT_TPF_DATALOC;
	else if (strncmp(type, "__rel_loc ", 10) == 0)
		f->dtf_kind = DT_TPF_RELLOC;
	if (f->dtf_kind == DT_TPF_NUM && f->dtf_size > 8)
		f->dtf_size = 8;
	snprintf(f->dtf_name, sizeof(f->dtf_name), "%s", name);
	dt_tp_pubtype(f, type);
	return 0;
}

int
dt_tracefs_parse(const char *text, struct dt_tp_format *fm)
{
	struct dt_tp_field f;
	const char *line, *nl;
	char buf[512];
	size_t n;
	unsigned int end, fix = 0;
	bool dyn = false;

	fm->dtfm_nfields = 0;
	for (line = text; *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = line + strlen(line);
		n = (size_t)(nl - line);
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, line, n);
		buf[n] = '\0';
		if (strstr(buf, "field:") != NULL) {
			if (dt_tp_parse_field(buf, &f, &end) != 0)
				return EINVAL;
			fix = end > fix ? end : fix;
			dyn |= f.dtf_kind == DT_TPF_DATALOC ||
			    f.dtf_kind == DT_TPF_RELLOC;
			if (strncmp(f.dtf_name, "common_", 7) != 0 &&
			    fm->dtfm_nfields < DT_TP_MAXFIELDS)
				fm->dtfm_fields[fm->dtfm_nfields++] = f;
		}
		if (*nl == '\0')
			break;
	}
	fm->dtfm_fixsize = dyn || fix > UINT16_MAX ? 0 : (uint16_t)fix;
	return 0;
}

int
dt_tracefs_format(const char *sys, const char *event,
    struct dt_tp_format *fm)
{
	char path[512], *buf;
	int error;

	if ((error = dt_tracefs_init()) != 0)
		return error;
	if ((buf = malloc(DT_TP_FMTMAX)) == NULL)
		return ENOMEM;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dt_tracefs_root,
	    sys, event);
	if (dt_proc_read(path, buf, 32) <= 0) {
		error = errno == 0 || errno == ENOTDIR ? ENOENT : errno;
		goto out;
	}
	fm->dtfm_id = atoi(buf);
	snprintf(path, sizeof(path), "%s/events/%s/%s/format",
	    dt_tracefs_root, sys, event);
	if (dt_proc_read(path, buf, DT_TP_FMTMAX) <= 0) {
		error = errno ? errno : EINVAL;
		goto out;
	}
	error = dt_tracefs_parse(buf, fm);
out:
	free(buf);
	return error;
}

const struct dt_tp_field *
dt_tp_field(const struct dt_tp_format *fm, const char *name)
{
	unsigned int i;

	for (i = 0; i < fm->dtfm_nfields; i++)
		if (strcmp(fm->dtfm_fields[i].dtf_name, name) == 0)
			return &fm->dtfm_fields[i];
	return NULL;
}

uint64_t
dt_tp_num(const struct dt_tp_field *f, const void *raw, size_t len)
{
	const unsigned char *p = raw;
	uint64_t v = 0;
	size_t n;

	if (f == NULL || f->dtf_kind != DT_TPF_NUM ||
	    (size_t)f->dtf_off + f->dtf_size > len)
		return 0;
	n = f->dtf_size;
	memcpy(&v, p + f->dtf_off, n);	/* little-endian: low bytes */
	if (f->dtf_signed && n < 8 && (v >> (n * 8 - 1)) & 1)
		v |= ~0ULL << (n * 8);
	return v;
}

size_t
dt_tp_str(const struct dt_tp_field *f, const void *raw, size_t len,
    const char **s)
{
	const char *p = raw;
	uint32_t loc;
	size_t off, max;

	*s = "";
	if (f == NULL || (size_t)f->dtf_off + f->dtf_size > len)
		return 0;
	switch (f->dtf_kind) {
	case DT_TPF_CHARS:
		off = f->dtf_off;
		max = f->dtf_size;
		break;
	case DT_TPF_DATALOC:
	case DT_TPF_RELLOC:
		if (f->dtf_size < 4)
			return 0;
		memcpy(&loc, p + f->dtf_off, 4);
		off = loc & 0xffff;
		max = loc >> 16;
		if (f->dtf_kind == DT_TPF_RELLOC)
			off += (size_t)f->dtf_off + 4;
		break;
	default:
		return 0;
	}
	if (off > len || max > len - off)
		return 0;
	*s = p + off;
	return strnlen(*s, max);
}
