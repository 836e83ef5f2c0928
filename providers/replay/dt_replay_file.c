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
 * The parser of dtrecord(1)'s format.  Files are also written by hand,
 * so every mistake is reported with its line, and nothing is guessed:
 * an unknown word is an error, not a skipped line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dt_replay_file.h"

struct rp_parse {
	const char	*rp_name;
	unsigned long	 rp_line;
	char		*rp_err;
	size_t		 rp_errlen;
};

static int
rp_fail(struct rp_parse *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(ps->rp_err, ps->rp_errlen, "%s:%lu: ", ps->rp_name,
	    ps->rp_line);
	if (n < 0 || (size_t)n >= ps->rp_errlen)
		return EINVAL;
	va_start(ap, fmt);
	vsnprintf(ps->rp_err + n, ps->rp_errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return EINVAL;
}

static char *
rp_skipws(char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The next blank-separated word of *pp, NUL-terminated in place. */
static char *
rp_word(char **pp)
{
	char *p = rp_skipws(*pp), *w;

	if (*p == '\0')
		return NULL;
	w = p;
	while (*p != '\0' && *p != ' ' && *p != '\t')
		p++;
	if (*p != '\0')
		*p++ = '\0';
	*pp = p;
	return w;
}

/* A whole number: decimal, 0x hex or 0 octal; a leading '-' is allowed. */
static bool
rp_num(const char *s, uint64_t *v)
{
	char *end;

	if (*s == '\0')
		return false;
	errno = 0;
	if (*s == '-')
		*v = (uint64_t)strtoll(s, &end, 0);
	else
		*v = strtoull(s, &end, 0);
	return errno == 0 && *end == '\0';
}

static bool
rp_num_max(const char *s, uint64_t max, uint64_t *v)
{
	return s != NULL && *s != '-' && rp_num(s, v) && *v <= max;
}

/*
 * A quoted value at p (just after the '"'): decode \\ \" \n \t \ooo
 * \xHH into out (at most outlen - 1 bytes, NUL-terminated).  Returns
 * the byte after the closing quote, or NULL.
 */
static char *
rp_quoted(char *p, char *out, size_t outlen)
{
	size_t n = 0;
	unsigned int c;
	int i;

	for (;;) {
		if (*p == '\0')
			return NULL;
		if (*p == '"')
			break;
		c = (unsigned char)*p++;
		if (c == '\\') {
			c = (unsigned char)*p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case '\\': case '"': break;
			case 'x':
				c = 0;
				for (i = 0; i < 2 && isxdigit((unsigned char)*p);
				    i++, p++)
					c = c * 16 + (unsigned int)(isdigit(
					    (unsigned char)*p) ? *p - '0' :
					    (tolower((unsigned char)*p) - 'a' +
					    10));
				if (i == 0)
					return NULL;
				break;
			default:
				if (c < '0' || c > '7')
					return NULL;
				c -= '0';
				for (i = 0; i < 2 && *p >= '0' && *p <= '7';
				    i++, p++)
					c = c * 8 + (unsigned int)(*p - '0');
				if (c > 255)
					return NULL;
				break;
			}
		}
		if (n + 1 >= outlen)
			return NULL;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return p + 1;
}

/* A list of numbers separated by commas, at most max of them. */
static int
rp_list(char *s, uint64_t *v, unsigned int max, unsigned int *n)
{
	char *tok, *save;

	*n = 0;
	if (*s == '\0')
		return 0;
	for (tok = strtok_r(s, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (*n == max || !rp_num(tok, &v[*n]))
			return -1;
		(*n)++;
	}
	return 0;
}

/* COUNT:pc,pc,... or pc,pc,... (COUNT: how many are given). */
static int
rp_stack(char *s, struct stacktrace *st)
{
	uint64_t v[STACKTRACE_MAX], count;
	unsigned int n, i;
	char *colon = strchr(s, ':');

	if (colon != NULL) {
		*colon = '\0';
		if (!rp_num_max(s, STACKTRACE_MAX, &count))
			return -1;
		s = colon + 1;
	}
	if (rp_list(s, v, STACKTRACE_MAX, &n) != 0)
		return -1;
	st->st_count = (unsigned int)(colon != NULL ? count : n);
	for (i = 0; i < n; i++)
		st->st_pc[i] = (unsigned long)v[i];
	return 0;
}

/* SEC[.FRACTION], the fraction's digits a decimal fraction of a second. */
static int
rp_tsp(const char *s, struct timespec *ts)
{
	uint64_t sec = 0;
	long nsec = 0;
	int digits = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s))
		sec = sec * 10 + (uint64_t)(*s++ - '0');
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s) && digits < 9) {
			nsec = nsec * 10 + (*s++ - '0');
			digits++;
		}
		if (digits == 0 || isdigit((unsigned char)*s))
			return -1;
		for (; digits < 9; digits++)
			nsec *= 10;
	}
	if (*s != '\0')
		return -1;
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = nsec;
	return 0;
}

/*
 * The key=value words of an event or stats line, one at a time: *key and
 * *val point into the line (a quoted value decoded into qbuf).  Returns
 * 1, 0 at the end, -1 for a malformed word.
 */
static int
rp_pair(char **pp, char **key, char **val, char *qbuf, size_t qlen)
{
	char *p = rp_skipws(*pp), *eq;

	if (*p == '\0')
		return 0;
	*key = p;
	while (*p != '\0' && *p != '=' && *p != ' ' && *p != '\t')
		p++;
	if (*p != '=')
		return -1;
	eq = p;
	*eq = '\0';
	p++;
	if (*p == '"') {
		if ((p = rp_quoted(p + 1, qbuf, qlen)) == NULL)
			return -1;
		if (*p != '\0' && *p != ' ' && *p != '\t')
			return -1;
		*val = qbuf;
	} else {
		*val = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
	}
	if (*p != '\0')
		*p++ = '\0';
	*pp = p;
	return 1;
}

static int
rp_event(struct rp_parse *ps, struct rp_file *rf, char *p, struct rp_item *it)
{
	struct dt_evt *ev = &it->rpi_ev;
	char qbuf[256], *key, *val, *w;
	uint64_t v, list[DTMAXFUNCARGS];
	unsigned int n, i;
	int r;

	memset(it, 0, sizeof(*it));
	it->rpi_kind = RP_EVENT;
	if ((w = rp_word(&p)) == NULL || !rp_num_max(w, UINT32_MAX, &v) ||
	    v == 0 || v > rf->rpf_nprobes)
		return rp_fail(ps, "event: '%s' is not a probe listed above",
		    w ? w : "");
	ev->dtev_pbn = (unsigned int)v;
	while ((r = rp_pair(&p, &key, &val, qbuf, sizeof(qbuf))) == 1) {
		if (strcmp(key, "cpu") == 0) {
			if (!rp_num_max(val, 4095, &v))
				return rp_fail(ps, "cpu: 0..4095");
			ev->dtev_cpu = (unsigned int)v;
			if (v > rf->rpf_maxcpu)
				rf->rpf_maxcpu = (unsigned int)v;
		} else if (strcmp(key, "pid") == 0 ||
		    strcmp(key, "tid") == 0) {
			if (!rp_num(val, &v) || (int64_t)v < INT32_MIN ||
			    (int64_t)v > INT32_MAX)
				return rp_fail(ps, "%s: not a pid", key);
			if (key[0] == 'p')
				ev->dtev_pid = (pid_t)(int64_t)v;
			else
				ev->dtev_tid = (pid_t)(int64_t)v;
		} else if (strcmp(key, "tsp") == 0) {
			if (rp_tsp(val, &ev->dtev_tsp) != 0)
				return rp_fail(ps, "tsp: SECONDS.NANOSECONDS");
		} else if (strcmp(key, "comm") == 0) {
			if (strlen(val) >= DTMAXCOMLEN)
				return rp_fail(ps, "comm: at most %d bytes",
				    DTMAXCOMLEN - 1);
			memcpy(ev->dtev_comm, val, strlen(val));
		} else if (strcmp(key, "args") == 0) {
			if (rp_list(val, list, DTMAXFUNCARGS, &n) != 0)
				return rp_fail(ps, "args: up to %d numbers",
				    DTMAXFUNCARGS);
			for (i = 0; i < n; i++)
				ev->dtev_args[i] = (long)list[i];
		} else if (strcmp(key, "retval") == 0) {
			if (rp_list(val, list, 2, &n) != 0)
				return rp_fail(ps, "retval: one or two "
				    "numbers");
			for (i = 0; i < n; i++)
				ev->dtev_retval[i] = (long)list[i];
		} else if (strcmp(key, "error") == 0) {
			if (!rp_num(val, &v))
				return rp_fail(ps, "error: a number");
			ev->dtev_error = (int)v;
		} else if (strcmp(key, "kstack") == 0) {
			if (rp_stack(val, &ev->dtev_kstack) != 0)
				return rp_fail(ps, "kstack: [COUNT:]PC,...");
		} else if (strcmp(key, "ustack") == 0) {
			if (rp_stack(val, &ev->dtev_ustack) != 0)
				return rp_fail(ps, "ustack: [COUNT:]PC,...");
		} else
			return rp_fail(ps, "event: unknown field '%s'", key);
	}
	if (r < 0)
		return rp_fail(ps, "event: malformed NAME=VALUE");
	return 0;
}

static int
rp_stats(struct rp_parse *ps, char *p, struct rp_item *it)
{
	char qbuf[32], *key, *val;
	uint64_t v;
	int r;

	memset(it, 0, sizeof(*it));
	it->rpi_kind = RP_STATS;
	while ((r = rp_pair(&p, &key, &val, qbuf, sizeof(qbuf))) == 1) {
		if (!rp_num_max(val, UINT64_MAX, &v))
			return rp_fail(ps, "stats: %s: a number", key);
		if (strcmp(key, "readevt") == 0)
			continue;	/* the reader's own count */
		else if (strcmp(key, "dropevt") == 0)
			it->rpi_dropevt = v;
		else if (strcmp(key, "skiptick") == 0)
			it->rpi_skiptick = v;
		else if (strcmp(key, "recurevt") == 0)
			it->rpi_recurevt = v;
		else
			return rp_fail(ps, "stats: unknown counter '%s'", key);
	}
	if (r < 0)
		return rp_fail(ps, "stats: malformed NAME=VALUE");
	return 0;
}

static int
rp_name(struct rp_parse *ps, const char *what, const char *w, char *dst)
{
	if (w == NULL || *w == '\0')
		return rp_fail(ps, "probe: %s missing", what);
	if (strlen(w) >= DTNAMESIZE)
		return rp_fail(ps, "probe: %s '%s' longer than %d", what, w,
		    DTNAMESIZE - 1);
	strcpy(dst, w);
	return 0;
}

static int
rp_probe(struct rp_parse *ps, struct rp_file *rf, char *p)
{
	struct rp_probe *rpp, *np;
	uint64_t v;
	char *w;
	int error;

	w = rp_word(&p);
	if (!rp_num_max(w, UINT32_MAX, &v) || v != rf->rpf_nprobes + 1)
		return rp_fail(ps, "probe: number %u expected (probes are "
		    "listed 1, 2, 3... in order)", rf->rpf_nprobes + 1);
	np = reallocarray(rf->rpf_probes, rf->rpf_nprobes + 1, sizeof(*np));
	if (np == NULL)
		return ENOMEM;
	rf->rpf_probes = np;
	rpp = &np[rf->rpf_nprobes];
	memset(rpp, 0, sizeof(*rpp));
	rpp->rpp_pbn = (uint32_t)v;
	if ((error = rp_name(ps, "provider", rp_word(&p), rpp->rpp_prov)) ||
	    (error = rp_name(ps, "function", rp_word(&p), rpp->rpp_func)) ||
	    (error = rp_name(ps, "name", rp_word(&p), rpp->rpp_name)))
		return error;
	w = rp_word(&p);
	if (!rp_num_max(w, 255, &v))
		return rp_fail(ps, "probe: NARGS 0..255 expected");
	rpp->rpp_nargs = (uint8_t)v;
	if (rp_word(&p) != NULL)
		return rp_fail(ps, "probe: too many words");
	rf->rpf_nprobes++;
	return 0;
}

/* argtypes PBN TYPE, TYPE...: types hold blanks ("void *"), not commas. */
static int
rp_argtypes(struct rp_parse *ps, struct rp_file *rf, char *p)
{
	struct rp_probe *rpp;
	char *w, *tok, *save, *end;
	uint64_t v;

	w = rp_word(&p);
	if (!rp_num_max(w, UINT32_MAX, &v) || v == 0 || v > rf->rpf_nprobes)
		return rp_fail(ps, "argtypes: a probe listed above expected");
	rpp = &rf->rpf_probes[v - 1];
	if (rpp->rpp_ntypes != 0)
		return rp_fail(ps, "argtypes: probe %u has them already",
		    (unsigned int)v);
	for (tok = strtok_r(p, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		tok = rp_skipws(tok);
		end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (*tok == '\0' || strlen(tok) >= DTNAMESIZE)
			return rp_fail(ps, "argtypes: a type is 1..%d bytes",
			    DTNAMESIZE - 1);
		if (rpp->rpp_ntypes == DTMAXFUNCARGS)
			return rp_fail(ps, "argtypes: at most %d",
			    DTMAXFUNCARGS);
		if ((rpp->rpp_types[rpp->rpp_ntypes] = strdup(tok)) == NULL)
			return ENOMEM;
		rpp->rpp_ntypes++;
	}
	if (rpp->rpp_ntypes == 0)
		return rp_fail(ps, "argtypes: no type");
	return 0;
}

static int
rp_enable(struct rp_parse *ps, struct rp_file *rf, char *p)
{
	struct rp_enable *ne, *rpe;
	uint64_t pbn, flags, nsecs;

	if (!rp_num_max(rp_word(&p), UINT32_MAX, &pbn) ||
	    !rp_num_max(rp_word(&p), UINT64_MAX, &flags) ||
	    !rp_num_max(rp_word(&p), UINT64_MAX, &nsecs) ||
	    rp_word(&p) != NULL)
		return rp_fail(ps, "enable: PBN EVTFLAGS NSECS expected");
	ne = reallocarray(rf->rpf_enables, rf->rpf_nenables + 1, sizeof(*ne));
	if (ne == NULL)
		return ENOMEM;
	rf->rpf_enables = ne;
	rpe = &ne[rf->rpf_nenables++];
	rpe->rpe_pbn = (uint32_t)pbn;
	rpe->rpe_evtflags = flags;
	rpe->rpe_nsecs = nsecs;
	return 0;
}

static int
rp_item_add(struct rp_file *rf, size_t *cap, struct rp_item **it)
{
	struct rp_item *ni;

	if (rf->rpf_nitems == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		ni = reallocarray(rf->rpf_items, *cap, sizeof(*ni));
		if (ni == NULL)
			return ENOMEM;
		rf->rpf_items = ni;
	}
	*it = &rf->rpf_items[rf->rpf_nitems];
	return 0;
}

static int
rp_line(struct rp_parse *ps, struct rp_file *rf, char *line, bool *seen,
    size_t *cap)
{
	struct rp_item *it;
	char *p = line, *kw;
	int error;

	kw = rp_word(&p);
	if (!*seen) {
		if (kw == NULL || strcmp(kw, "dtrecord") != 0 ||
		    (kw = rp_word(&p)) == NULL || strcmp(kw, "1") != 0)
			return rp_fail(ps, "'dtrecord 1' expected first");
		*seen = true;
		return 0;
	}
	if (strcmp(kw, "probe") == 0)
		return rp_probe(ps, rf, p);
	if (strcmp(kw, "argtypes") == 0)
		return rp_argtypes(ps, rf, p);
	if (strcmp(kw, "enable") == 0)
		return rp_enable(ps, rf, p);
	if (strcmp(kw, "abi") == 0 || strcmp(kw, "ncpus") == 0 ||
	    strcmp(kw, "source") == 0)
		return 0;	/* said for people; nothing to serve */
	if (strcmp(kw, "event") == 0 || strcmp(kw, "stats") == 0) {
		if ((error = rp_item_add(rf, cap, &it)) != 0)
			return error;
		error = kw[0] == 'e' ? rp_event(ps, rf, p, it) :
		    rp_stats(ps, p, it);
		if (error == 0)
			rf->rpf_nitems++;
		return error;
	}
	return rp_fail(ps, "unknown line '%s'", kw);
}

int
rp_file_parse(FILE *fp, const char *name, struct rp_file *rf, char *err,
    size_t errlen)
{
	struct rp_parse ps = { name, 0, err, errlen };
	char *line = NULL, *p;
	size_t linecap = 0, cap = 0, len;
	bool seen = false;
	int error = 0;

	memset(rf, 0, sizeof(*rf));
	while (getline(&line, &linecap, fp) != -1) {
		ps.rp_line++;
		len = strlen(line);
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		p = rp_skipws(line);
		if (*p == '\0' || *p == '#')
			continue;
		if ((error = rp_line(&ps, rf, p, &seen, &cap)) != 0)
			break;
	}
	if (error == 0 && ferror(fp))
		error = rp_fail(&ps, "read error");
	if (error == 0 && !seen)
		error = rp_fail(&ps, "empty: 'dtrecord 1' expected");
	if (error == 0 && rf->rpf_nprobes == 0)
		error = rp_fail(&ps, "no probe");
	if (error == ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	free(line);
	if (error != 0)
		rp_file_free(rf);
	return error;
}

void
rp_file_free(struct rp_file *rf)
{
	uint32_t i;
	unsigned int j;

	for (i = 0; i < rf->rpf_nprobes; i++)
		for (j = 0; j < rf->rpf_probes[i].rpp_ntypes; j++)
			free(rf->rpf_probes[i].rpp_types[j]);
	free(rf->rpf_probes);
	free(rf->rpf_enables);
	free(rf->rpf_items);
	memset(rf, 0, sizeof(*rf));
}
