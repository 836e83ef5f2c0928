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
 * Fault injection: the rules' parser, the rule set in force, and the
 * decisions for opens, ioctls, reads and events.  See dt_inject.h.
 *
 * Locks used to protect the globals in this file:
 *	[I]	immutable after dt_inject_init()
 *	[n]	dt_inj_mtx
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_inject.h"
#include "dt_proc.h"

enum dt_inj_op {
	OP_OPEN,
	OP_IOCTL,
	OP_READ,
	OP_DROP,
	OP_RECUR,
	OP_SKIPTICK,
};

/* Which counts fire: lo..hi, or every multiple of every. */
struct dt_inj_when {
	uint64_t	lo, hi;
	uint64_t	every;		/* 0: use lo..hi */
};

struct dt_inj_rule {
	enum dt_inj_op		 op;
	struct dt_inj_when	 when;
	int			 nr;	/* ioctl 'D' number, -1: any */
	int			 error;	/* 0: a short read (arg bytes) */
	uint64_t		 arg;	/* short read size, skipped ticks */
};

struct dt_inj_set {
	_Atomic unsigned int	 refs;		/* [a] */
	bool			 allowdt_off;	/* [I] "allowdt 0" */
	unsigned int		 ops;		/* [I] DT_INJ_* of its rules */
	unsigned int		 nrules;	/* [I] */
	struct dt_inj_rule	 rules[];	/* [I] first match wins */
};

#define DT_INJ_FILEMAX	65536	/* a rule file's bytes, at most */

static pthread_mutex_t	 dt_inj_mtx = PTHREAD_MUTEX_INITIALIZER;
static const char	*dt_inj_rules;		/* [I] --inject */
static const char	*dt_inj_path;		/* [I] --inject-file */
static struct dt_inj_set *dt_inj_cur;		/* [n] in force, or NULL */
static char		*dt_inj_text;		/* [n] the file as last read */
static uint64_t		 dt_inj_nopens;		/* [n] since dt_inj_cur */

static const struct {
	const char	*name;
	int		 error;
} dt_inj_errnos[] = {
	{ "EPERM", EPERM },	{ "ENOENT", ENOENT },	{ "ESRCH", ESRCH },
	{ "EINTR", EINTR },	{ "EIO", EIO },		{ "ENXIO", ENXIO },
	{ "E2BIG", E2BIG },	{ "EBADF", EBADF },	{ "EAGAIN", EAGAIN },
	{ "ENOMEM", ENOMEM },	{ "EACCES", EACCES },	{ "EFAULT", EFAULT },
	{ "EBUSY", EBUSY },	{ "EEXIST", EEXIST },	{ "ENODEV", ENODEV },
	{ "EINVAL", EINVAL },	{ "ENFILE", ENFILE },	{ "EMFILE", EMFILE },
	{ "ENOTTY", ENOTTY },	{ "ENOSPC", ENOSPC },	{ "EROFS", EROFS },
	{ "EMSGSIZE", EMSGSIZE }, { "EOPNOTSUPP", EOPNOTSUPP },
	{ "ENOTSUP", ENOTSUP },	{ "ENOBUFS", ENOBUFS },	{ "ETIMEDOUT", ETIMEDOUT },
	{ "EOVERFLOW", EOVERFLOW }, { "ENOSYS", ENOSYS },
};

/* The ioctls by the name dt(4) gives them, with or without DTIOC. */
static const struct {
	const char	*name;
	int		 nr;
} dt_inj_cmds[] = {
	{ "GPLIST", 1 },	{ "GSTATS", 2 },	{ "RECORD", 3 },
	{ "PRBENABLE", 4 },	{ "PRBDISABLE", 5 },	{ "GARGS", 6 },
	{ "GETAUXBASE", 7 },	{ "RDVNODE", 8 },
};

/* A decimal number without sign; false if s is not one. */
static bool
dt_inj_number(const char *s, uint64_t *n)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	*n = strtoull(s, &end, 10);
	return *end == '\0' && errno == 0;
}

/* N, N-M, N-, *, or %K: counts are 1-based. */
static bool
dt_inj_parse_when(const char *s, struct dt_inj_when *w)
{
	char buf[64], *dash;

	memset(w, 0, sizeof(*w));
	if (strcmp(s, "*") == 0) {
		w->lo = 1;
		w->hi = UINT64_MAX;
		return true;
	}
	if (s[0] == '%')
		return dt_inj_number(s + 1, &w->every) && w->every > 0;
	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	if ((dash = strchr(buf, '-')) != NULL)
		*dash++ = '\0';
	if (!dt_inj_number(buf, &w->lo) || w->lo == 0)
		return false;
	if (dash == NULL)
		w->hi = w->lo;
	else if (*dash == '\0')
		w->hi = UINT64_MAX;
	else if (!dt_inj_number(dash, &w->hi) || w->hi < w->lo)
		return false;
	return true;
}

static bool
dt_inj_when_fires(const struct dt_inj_when *w, uint64_t n)
{
	if (w->every != 0)
		return n % w->every == 0;
	return n >= w->lo && n <= w->hi;
}

/* An errno by name (EPERM) or number (1..4095). */
static bool
dt_inj_parse_errno(const char *s, int *error)
{
	uint64_t n;
	size_t i;

	for (i = 0; i < sizeof(dt_inj_errnos) / sizeof(dt_inj_errnos[0]); i++)
		if (strcmp(s, dt_inj_errnos[i].name) == 0) {
			*error = dt_inj_errnos[i].error;
			return true;
		}
	if (!dt_inj_number(s, &n) || n == 0 || n > 4095)
		return false;
	*error = (int)n;
	return true;
}

/* GPLIST, DTIOCGPLIST, a number 0..15, or * (-1: any). */
static bool
dt_inj_parse_cmd(const char *s, int *nr)
{
	uint64_t n;
	size_t i;

	if (strcmp(s, "*") == 0) {
		*nr = -1;
		return true;
	}
	if (strncmp(s, "DTIOC", 5) == 0)
		s += 5;
	for (i = 0; i < sizeof(dt_inj_cmds) / sizeof(dt_inj_cmds[0]); i++)
		if (strcmp(s, dt_inj_cmds[i].name) == 0) {
			*nr = dt_inj_cmds[i].nr;
			return true;
		}
	if (!dt_inj_number(s, &n) || n >= DT_INJ_NCMD)
		return false;
	*nr = (int)n;
	return true;
}

/*
 * One rule of ntok words into r (or the allowdt setting into set):
 * NULL, or what is wrong with it.
 */
static const char *
dt_inj_parse_rule(char **tok, int ntok, struct dt_inj_rule *r,
    struct dt_inj_set *set)
{
	int i = 1;

	memset(r, 0, sizeof(*r));
	r->nr = -1;
	if (strcmp(tok[0], "allowdt") == 0) {
		if (ntok != 2 || (strcmp(tok[1], "0") != 0 &&
		    strcmp(tok[1], "1") != 0))
			return "allowdt takes 0 or 1";
		set->allowdt_off = tok[1][0] == '0';
		return "";	/* a setting, no rule */
	}
	if (strcmp(tok[0], "open") == 0)
		r->op = OP_OPEN;
	else if (strcmp(tok[0], "ioctl") == 0) {
		r->op = OP_IOCTL;
		if (ntok < 2 || !dt_inj_parse_cmd(tok[1], &r->nr))
			return "ioctl needs a command (GPLIST, ..., *)";
		i = 2;
	} else if (strcmp(tok[0], "read") == 0)
		r->op = OP_READ;
	else if (strcmp(tok[0], "drop") == 0)
		r->op = OP_DROP;
	else if (strcmp(tok[0], "recur") == 0)
		r->op = OP_RECUR;
	else if (strcmp(tok[0], "skiptick") == 0)
		r->op = OP_SKIPTICK;
	else
		return "unknown rule (open, ioctl, read, drop, recur, "
		    "skiptick, allowdt)";
	if (i >= ntok || !dt_inj_parse_when(tok[i], &r->when))
		return "bad count (N, N-M, N-, %K or *)";
	i++;
	switch (r->op) {
	case OP_OPEN:
	case OP_IOCTL:
		if (ntok != i + 1 || !dt_inj_parse_errno(tok[i], &r->error))
			return "needs one errno (EPERM, ... or a number)";
		break;
	case OP_READ:
		if (ntok == i + 2 && strcmp(tok[i], "short") == 0) {
			if (!dt_inj_number(tok[i + 1], &r->arg) ||
			    r->arg == 0)
				return "short needs a size in bytes, > 0";
			r->error = 0;
		} else if (ntok != i + 1 ||
		    !dt_inj_parse_errno(tok[i], &r->error))
			return "read needs an errno or short BYTES";
		break;
	case OP_DROP:
	case OP_RECUR:
		if (ntok != i)
			return "takes a count only";
		break;
	case OP_SKIPTICK:
		if (ntok != i + 1 || !dt_inj_number(tok[i], &r->arg) ||
		    r->arg == 0)
			return "skiptick needs a number of ticks, > 0";
		break;
	}
	return NULL;
}

/*
 * Parse each text of texts (NULL entries skipped) into one set, the
 * rules in order.  *setp: the set, or NULL when no rule and no setting
 * was given.  0, or EINVAL with "where: line N: why" in err.
 */
static int
dt_inj_parse(const char *const texts[], const char *const names[], int n,
    struct dt_inj_set **setp, char *err, size_t errlen)
{
	struct dt_inj_set *set, *nset;
	char *copy, *line, *next, *tok[8], *p, *save;
	unsigned int cap = 8, lineno, lno;
	const char *why;
	int t, ntok;
	bool any = false;

	*setp = NULL;
	set = calloc(1, sizeof(*set) + cap * sizeof(set->rules[0]));
	if (set == NULL)
		return ENOMEM;
	for (t = 0; t < n; t++) {
		if (texts[t] == NULL)
			continue;
		if ((copy = strdup(texts[t])) == NULL) {
			free(set);
			return ENOMEM;
		}
		lineno = 1;
		for (line = copy; line != NULL; line = next) {
			/* Rules end at ';' or a newline. */
			lno = lineno;
			next = line + strcspn(line, ";\n");
			if (*next == '\0')
				next = NULL;
			else {
				if (*next == '\n')
					lineno++;
				*next++ = '\0';
			}
			if ((p = strchr(line, '#')) != NULL)
				*p = '\0';
			ntok = 0;
			for (p = strtok_r(line, " \t\r", &save); p != NULL;
			    p = strtok_r(NULL, " \t\r", &save)) {
				if (ntok == 8)
					break;
				tok[ntok++] = p;
			}
			if (ntok == 0)
				continue;
			if (set->nrules == cap) {
				cap *= 2;
				nset = realloc(set, sizeof(*set) +
				    cap * sizeof(set->rules[0]));
				if (nset == NULL) {
					free(copy);
					free(set);
					return ENOMEM;
				}
				set = nset;
			}
			why = ntok == 8 ? "too many words" :
			    dt_inj_parse_rule(tok, ntok,
			    &set->rules[set->nrules], set);
			if (why != NULL && why[0] != '\0') {
				snprintf(err, errlen, "%s: line %u (\"%s\"): "
				    "%s", names[t], lno, tok[0], why);
				free(copy);
				free(set);
				return EINVAL;
			}
			any = true;
			if (why != NULL)
				continue;	/* allowdt */
			switch (set->rules[set->nrules].op) {
			case OP_IOCTL:
				set->ops |= DT_INJ_IOCTL;
				break;
			case OP_READ:
				set->ops |= DT_INJ_READ;
				break;
			case OP_DROP:
			case OP_RECUR:
			case OP_SKIPTICK:
				set->ops |= DT_INJ_EVENT;
				break;
			case OP_OPEN:
				break;
			}
			set->nrules++;
		}
		free(copy);
	}
	if (!any) {
		free(set);
		return 0;
	}
	atomic_init(&set->refs, 1);
	*setp = set;
	return 0;
}

int
dt_inject_check(const char *rules, char *err, size_t errlen)
{
	const char *texts[1] = { rules }, *names[1] = { "--inject" };
	struct dt_inj_set *set;
	int error;

	error = dt_inj_parse(texts, names, 1, &set, err, errlen);
	free(set);
	return error;
}

static void
dt_inj_rele(struct dt_inj_set *set)
{
	if (set != NULL && atomic_fetch_sub(&set->refs, 1) == 1)
		free(set);
}

/*
 * Read --inject-file and, if it changed since the last look, put its
 * rules (then --inject's) in force and start counting opens afresh.  A
 * missing file has no rules; a bad one is reported once and leaves the
 * rules as they were.  Under [n].
 */
static void
dt_inj_reload(void)
{
	const char *texts[2], *names[2];
	struct dt_inj_set *set;
	char *buf, err[256];
	ssize_t len;
	int error;

	if (dt_inj_path == NULL)
		return;
	if ((buf = malloc(DT_INJ_FILEMAX)) == NULL)
		return;
	len = dt_proc_read(dt_inj_path, buf, DT_INJ_FILEMAX);
	if (len < 0) {
		if (errno != ENOENT)
			fprintf(stderr, "dtd: --inject-file %s: %s\n",
			    dt_inj_path, strerror(errno));
		buf[0] = '\0';
	}
	if (dt_inj_text != NULL && strcmp(dt_inj_text, buf) == 0) {
		free(buf);
		return;
	}
	free(dt_inj_text);
	dt_inj_text = buf;
	texts[0] = buf;
	names[0] = dt_inj_path;
	texts[1] = dt_inj_rules;
	names[1] = "--inject";
	error = dt_inj_parse(texts, names, 2, &set, err, sizeof(err));
	if (error != 0) {
		fprintf(stderr, "dtd: %s; the rules in force stay\n",
		    error == EINVAL ? err : strerror(error));
		return;
	}
	dt_inj_rele(dt_inj_cur);
	dt_inj_cur = set;
	dt_inj_nopens = 0;
}

int
dt_inject_init(const char *rules, const char *path)
{
	const char *texts[1] = { rules }, *names[1] = { "--inject" };
	char err[256];
	int error;

	dt_inj_rules = rules;
	dt_inj_path = path;
	pthread_mutex_lock(&dt_inj_mtx);
	error = dt_inj_parse(texts, names, 1, &dt_inj_cur, err, sizeof(err));
	if (error == EINVAL)
		fprintf(stderr, "dtd: %s\n", err);
	else if (error == 0)
		dt_inj_reload();
	pthread_mutex_unlock(&dt_inj_mtx);
	return error;
}

void
dt_inject_fini(void)
{
	pthread_mutex_lock(&dt_inj_mtx);
	dt_inj_rele(dt_inj_cur);
	dt_inj_cur = NULL;
	free(dt_inj_text);
	dt_inj_text = NULL;
	pthread_mutex_unlock(&dt_inj_mtx);
}

int
dt_inject_open(struct dt_inj_open *dio)
{
	struct dt_inj_set *set;
	unsigned int i;
	uint64_t n;
	int error = 0;

	pthread_mutex_lock(&dt_inj_mtx);
	dt_inj_reload();
	set = dt_inj_cur;
	n = ++dt_inj_nopens;
	if (set != NULL) {
		/* dt(4) checks kern.allowdt first, at every open. */
		if (set->allowdt_off)
			error = EPERM;
		for (i = 0; error == 0 && i < set->nrules; i++)
			if (set->rules[i].op == OP_OPEN &&
			    dt_inj_when_fires(&set->rules[i].when, n))
				error = set->rules[i].error;
	}
	if (error == 0 && set != NULL && set->ops != 0) {
		atomic_fetch_add(&set->refs, 1);
		dio->dio_set = set;
		dio->dio_ops = set->ops;
	}
	pthread_mutex_unlock(&dt_inj_mtx);
	return error;
}

void
dt_inject_close(struct dt_inj_open *dio)
{
	dt_inj_rele(dio->dio_set);
	dio->dio_set = NULL;
	dio->dio_ops = 0;
}

int
dt_inject_ioctl(struct dt_inj_open *dio, unsigned int nr)
{
	const struct dt_inj_rule *r;
	uint64_t nall, n = 0;
	unsigned int i;

	if (!(dio->dio_ops & DT_INJ_IOCTL))
		return 0;
	nall = atomic_fetch_add(&dio->dio_ioctls, 1) + 1;
	if (nr < DT_INJ_NCMD)
		n = atomic_fetch_add(&dio->dio_ioctl[nr], 1) + 1;
	for (i = 0; i < dio->dio_set->nrules; i++) {
		r = &dio->dio_set->rules[i];
		if (r->op != OP_IOCTL)
			continue;
		if (r->nr == -1 ? dt_inj_when_fires(&r->when, nall) :
		    ((unsigned int)r->nr == nr && n != 0 &&
		    dt_inj_when_fires(&r->when, n)))
			return r->error;
	}
	return 0;
}

int
dt_inject_read(struct dt_inj_open *dio, size_t *resid)
{
	const struct dt_inj_rule *r;
	unsigned int i;
	uint64_t n;

	if (!(dio->dio_ops & DT_INJ_READ))
		return 0;
	n = atomic_fetch_add(&dio->dio_reads, 1) + 1;
	for (i = 0; i < dio->dio_set->nrules; i++) {
		r = &dio->dio_set->rules[i];
		if (r->op != OP_READ || !dt_inj_when_fires(&r->when, n))
			continue;
		if (r->error != 0)
			return r->error;
		if (*resid > r->arg)
			*resid = (size_t)r->arg;
		return 0;
	}
	return 0;
}

enum dt_inj_verdict
dt_inject_event(struct dt_inj_open *dio, uint64_t *nskip)
{
	const struct dt_inj_rule *r;
	unsigned int i;
	uint64_t n;

	*nskip = 0;
	if (!(dio->dio_ops & DT_INJ_EVENT))
		return DT_INJ_PUT;
	n = atomic_fetch_add(&dio->dio_events, 1) + 1;
	for (i = 0; i < dio->dio_set->nrules; i++) {
		r = &dio->dio_set->rules[i];
		if (!dt_inj_when_fires(&r->when, n))
			continue;
		switch (r->op) {
		case OP_DROP:
			return DT_INJ_DROP;
		case OP_RECUR:
			return DT_INJ_RECUR;
		case OP_SKIPTICK:
			/* Ticks missed before this one; it is delivered. */
			*nskip = r->arg;
			return DT_INJ_PUT;
		default:
			break;
		}
	}
	return DT_INJ_PUT;
}
