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
 * The kprobe provider's list of kernel functions (dt_kp_list.c), read
 * from this machine's kernel, against the same file read here on its
 * own: every function of a name dt(4) can carry is there once, in name
 * order; a longer one is there exactly when its first 15 characters
 * name no other function; nothing else is.  The file is ftrace's
 * available_filter_functions, or where that is refused (our machines')
 * /proc/kallsyms.  Needs root; without it the list is empty and the
 * test fails, never skips.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dev/dt/dtvar.h>

#include "dt_kp_list.h"
#include "dt_tracefs.h"
#include "dtt.h"

/*
 * The file's function names, read here: identifiers, the first field
 * of ftrace's list, the third of kallsyms' lines of type t or T.
 */
static char **
names_of(const char *path, bool kallsyms, size_t *np)
{
	FILE *fp;
	char line[512], **v = NULL, *p, *s, type;
	size_t n = 0, cap = 0, len;

	if ((fp = fopen(path, "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), fp) != NULL) {
		s = line;
		if (kallsyms) {
			/* "ADDRESS TYPE NAME [MODULE]" */
			if ((s = strchr(line, ' ')) == NULL)
				continue;
			type = s[1];
			if ((type != 't' && type != 'T') || s[2] != ' ')
				continue;
			s += 3;
		}
		len = strcspn(s, " \t\n");
		s[len] = '\0';
		if (len == 0 || strspn(s, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != len ||
		    (s[0] >= '0' && s[0] <= '9') ||
		    strncmp(s, "__ftrace_invalid_address", 24) == 0 ||
		    strncmp(s, "__pfx_", 6) == 0 || strncmp(s, "__cfi_", 6) == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			if ((v = realloc(v, cap * sizeof(*v))) == NULL)
				abort();
		}
		if ((p = strdup(s)) == NULL)
			abort();
		v[n++] = p;
	}
	fclose(fp);
	*np = n;
	return v;
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Another name of the sorted all[n] that starts with all[i]'s first 15
 * characters: those are next to all[i].
 */
static bool
shares_cut(char **all, size_t n, size_t i)
{
	return (i > 0 && strncmp(all[i - 1], all[i], DTNAMESIZE - 1) == 0) ||
	    (i + 1 < n && strncmp(all[i + 1], all[i], DTNAMESIZE - 1) == 0);
}

/* Whether the kprobe blacklist (debugfs, where mounted) names s. */
static bool
blacklisted(const char *s)
{
	FILE *fp;
	char line[512], *name;
	bool hit = false;

	if ((fp = fopen("/sys/kernel/debug/kprobes/blacklist", "re")) == NULL)
		return false;
	while (!hit && fgets(line, sizeof(line), fp) != NULL) {
		if ((name = strpbrk(line, " \t")) == NULL)
			continue;
		name += strspn(name, " \t");
		name[strcspn(name, " \t\n")] = '\0';
		hit = strcmp(name, s) == 0;
	}
	fclose(fp);
	return hit;
}

int
main(void)
{
	struct dt_kp_list kl;
	char path[512], **all, *key;
	const char *dir;
	size_t n, i, j, nshort = 0, ncut = 0, nshared = 0, bad = 0;
	bool sorted = true, kallsyms;
	struct timespec t0, t1;
	int error;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	error = dt_kp_list_read(&kl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!dtt_check(error == 0, "dt_kp_list_read: %s", strerror(error)))
		return dtt_done();
	/* What dtd's start pays for the list, for the log. */
	printf("# %s read, sorted and cut in %.3f s\n", kl.kl_from,
	    (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	/* ftrace's list where it is readable, kallsyms where it is not. */
	kallsyms = strcmp(kl.kl_from, "available_filter_functions") != 0;
	if (!kallsyms && (dir = dt_tracefs_dir()) != NULL)
		snprintf(path, sizeof(path), "%s/available_filter_functions",
		    dir);
	else
		snprintf(path, sizeof(path), "%s", kl.kl_from);
	n = 0;
	all = names_of(path, kallsyms, &n);
	if (!dtt_check(all != NULL && n > 1000, "%s read here (%zu names)",
	    path, n))
		return dtt_done();
	qsort(all, n, sizeof(*all), cmp);
	for (i = j = 0; i < n; i++)
		if (j == 0 || strcmp(all[j - 1], all[i]) != 0)
			all[j++] = all[i];
		else
			free(all[i]);
	n = j;

	for (i = 1; i < kl.kl_n; i++)
		if (strcmp(kl.kl_names[i - 1], kl.kl_names[i]) >= 0)
			sorted = false;
	dtt_check(sorted, "%zu names, in order, each once", kl.kl_n);

	/* Each of the file's names: there exactly when it should be. */
	for (i = 0; i < n; i++) {
		bool want, found;

		if (strlen(all[i]) <= DTNAMESIZE - 1) {
			want = true;
			nshort++;
		} else if (shares_cut(all, n, i)) {
			want = false;
			nshared++;
		} else {
			want = true;
			ncut++;
		}
		key = all[i];
		found = bsearch(&key, kl.kl_names, kl.kl_n,
		    sizeof(*kl.kl_names), cmp) != NULL;
		/* The kernel refuses a kprobe there: rightly left out. */
		if (found != want && !found && blacklisted(all[i]))
			continue;
		if (found != want && bad++ < 5)
			printf("# %s: %s, expected %s\n", all[i],
			    found ? "listed" : "missing", want ? "listed" :
			    "left out");
	}
	dtt_check(bad == 0, "the file's %zu names: %zu short listed, %zu long "
	    "with a unique cut listed, %zu sharing a cut left out (%zu wrong)",
	    n, nshort, ncut, nshared, bad);
	dtt_check(kl.kl_n <= n && kl.kl_ambiguous == nshared &&
	    kl.kl_n == nshort + ncut - (n - kl.kl_n - kl.kl_ambiguous),
	    "nothing else listed (%zu + %zu sharing a cut + %zu blacklisted "
	    "= %zu)", kl.kl_n, kl.kl_ambiguous, n - kl.kl_n -
	    kl.kl_ambiguous, n);
	key = "vfs_read";
	dtt_check(bsearch(&key, kl.kl_names, kl.kl_n, sizeof(*kl.kl_names),
	    cmp) != NULL, "vfs_read listed");
	dt_kp_list_free(&kl);
	for (i = 0; i < n; i++)
		free(all[i]);
	free(all);
	return dtt_done();
}
