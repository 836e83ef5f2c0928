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

/* The functions a kprobe may attach to: see dt_kp_list.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_proc.h"
#include "dt_tracefs.h"
#include "dt_kp_list.h"

#define DT_KP_MAXFILE	(64 * 1024 * 1024)	/* kallsyms is a few MB */
#define DT_KP_KALLSYMS	"/proc/kallsyms"
#define DT_KP_BLACKLIST	"/sys/kernel/debug/kprobes/blacklist"


/* A C identifier: what perf's kprobe PMU can name (no .isra.0 clones). */
static bool
dt_kp_ident(const char *s)
{
	if (*s == '\0' || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s != '\0'; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') ||
		    (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static int
dt_kp_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A name's end: a blank or the line's end. */
static char *
dt_kp_field_end(char *p, const char *eol)
{
	while (p < eol && *p != ' ' && *p != '\t')
		p++;
	return p;
}

/*
 * Cut buf (len bytes) into names in place: the first field of each line,
 * or with kallsyms the third of a line whose type (the second) is text.
 * Padding and CFI stubs before functions are none.  Returns the names
 * in a new array, *np of them, or NULL (ENOMEM).  One pass, no
 * tokenizer: the file has tens of thousands of lines, and dtd's start
 * waits for it.
 */
static const char **
dt_kp_parse(char *buf, size_t len, bool kallsyms, size_t *np)
{
	const char **names = NULL, **nn;
	char *line, *eol, *end = buf + len, *name, *e;
	size_t n = 0, cap = 0;

	for (line = buf; line < end; line = eol + 1) {
		if ((eol = memchr(line, '\n', (size_t)(end - line))) == NULL)
			eol = end;
		name = line;
		if (kallsyms) {
			/* "ADDRESS TYPE NAME [MODULE]" */
			name = dt_kp_field_end(line, eol);
			if (eol - name < 4 || (name[1] != 't' && name[1] != 'T') ||
			    name[2] != ' ')
				continue;
			name += 3;
		}
		e = dt_kp_field_end(name, eol);
		*e = '\0';
		if (!dt_kp_ident(name) ||
		    strncmp(name, "__ftrace_invalid_address", 24) == 0 ||
		    strncmp(name, "__pfx_", 6) == 0 ||
		    strncmp(name, "__cfi_", 6) == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			if ((nn = reallocarray(names, cap, sizeof(*names))) ==
			    NULL) {
				free(names);
				return NULL;
			}
			names = nn;
		}
		names[n++] = name;
	}
	*np = n;
	return names;
}

/*
 * Leave out what the kprobe blacklist names (debugfs, when mounted): a
 * kprobe there is refused at open.  Best effort.
 */
static size_t
dt_kp_unlist(const char **names, size_t n)
{
	char *buf, *line, *next, *name;
	const char *key;
	size_t len, i, j;
	const char **hit;
	bool *drop;

	if ((buf = dt_proc_slurp(DT_KP_BLACKLIST, DT_KP_MAXFILE, &len)) == NULL)
		return n;
	/* Marked apart: names stays sorted and whole for bsearch(). */
	if ((drop = calloc(n > 0 ? n : 1, sizeof(*drop))) == NULL) {
		free(buf);
		return n;
	}
	for (line = buf; *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		/* "0xSTART-0xEND	NAME" */
		if ((name = strpbrk(line, " \t")) == NULL)
			continue;
		name += strspn(name, " \t");
		name[strcspn(name, " \t")] = '\0';
		key = name;
		if ((hit = bsearch(&key, names, n, sizeof(*names),
		    dt_kp_cmp)) != NULL)
			drop[hit - names] = true;
	}
	for (i = j = 0; i < n; i++)
		if (!drop[i])
			names[j++] = names[i];
	free(drop);
	free(buf);
	return j;
}

/*
 * Whether a's first 15 characters, dt(4)'s, are b's too: b's cut then
 * names a as well (a name of 15 is its own cut).
 */
static bool
dt_kp_samecut(const char *a, const char *b)
{
	return strncmp(a, b, DTNAMESIZE - 1) == 0;
}

int
dt_kp_list_read(struct dt_kp_list *kl)
{
	const char *dir, **names;
	char path[512];
	size_t len, n, i, j;
	bool kallsyms = false, cut;

	memset(kl, 0, sizeof(*kl));
	kl->kl_from = "available_filter_functions";
	if ((dir = dt_tracefs_dir()) != NULL) {
		snprintf(path, sizeof(path), "%s/available_filter_functions",
		    dir);
		kl->kl_buf = dt_proc_slurp(path, DT_KP_MAXFILE, &len);
	}
	if (kl->kl_buf == NULL) {
		kallsyms = true;
		kl->kl_from = DT_KP_KALLSYMS;
		if ((kl->kl_buf = dt_proc_slurp(DT_KP_KALLSYMS, DT_KP_MAXFILE, &len)) == NULL)
			return errno;
	}
	if ((names = dt_kp_parse(kl->kl_buf, len, kallsyms, &n)) == NULL) {
		dt_kp_list_free(kl);
		return ENOMEM;
	}
	qsort(names, n, sizeof(*names), dt_kp_cmp);
	/* Static functions of one name: one probe, as OpenBSD has. */
	for (i = j = 0; i < n; i++)
		if (j == 0 || strcmp(names[j - 1], names[i]) != 0)
			names[j++] = names[i];
	n = dt_kp_unlist(names, j);
	/*
	 * A name cut to 15 characters must still say which function: the
	 * names sharing a cut are next to each other once sorted.
	 */
	for (i = j = 0; i < n; i++) {
		cut = strlen(names[i]) > DTNAMESIZE - 1;
		if (cut && ((i > 0 && dt_kp_samecut(names[i - 1], names[i])) ||
		    (i + 1 < n && dt_kp_samecut(names[i + 1], names[i])))) {
			kl->kl_ambiguous++;
			continue;
		}
		names[j++] = names[i];
	}
	kl->kl_names = names;
	kl->kl_n = j;
	return 0;
}

void
dt_kp_list_free(struct dt_kp_list *kl)
{
	free(kl->kl_names);
	free(kl->kl_buf);
	memset(kl, 0, sizeof(*kl));
}
