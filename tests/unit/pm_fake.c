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

/* The fake /proc of pm_fake.h. */
#include <sys/stat.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pm_fake.h"

char	root[64];

void
put(const char *file, const char *fmt, ...)
{
	va_list ap;
	FILE *fp;

	if ((fp = fopen(file, "w")) == NULL) {
		perror(file);
		exit(2);
	}
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fclose(fp);
}

/* /proc/PID/stat: starttime (field 22) stime, state st. */
void
fake_stat(pid_t pid, char st, unsigned long long stime)
{
	char dir[128], file[160];

	snprintf(dir, sizeof(dir), "%s/%d", root, (int)pid);
	(void)mkdir(dir, 0755);
	snprintf(file, sizeof(file), "%s/stat", dir);
	/* a comm with a space and a parenthesis, as a process may have */
	put(file, "%d (a) b) %c 1 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 "
	    "%llu 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 "
	    "0 0 0 0 0\n", (int)pid, st, stime);
}

void
fake_maps(pid_t pid, const char *text)
{
	char file[160];

	snprintf(file, sizeof(file), "%s/%d/maps", root, (int)pid);
	put(file, "%s", text);
}

void
fake_gone(pid_t pid)
{
	char file[160];

	snprintf(file, sizeof(file), "%s/%d/stat", root, (int)pid);
	unlink(file);
	snprintf(file, sizeof(file), "%s/%d/maps", root, (int)pid);
	unlink(file);
	snprintf(file, sizeof(file), "%s/%d", root, (int)pid);
	rmdir(file);
}

void
fake_root(const char *name)
{
	snprintf(root, sizeof(root), "/tmp/%s.XXXXXX", name);
	if (mkdtemp(root) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
}

void
fake_root_remove(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

void
fake_file(const char *path, off_t len)
{
	FILE *fp;

	if ((fp = fopen(path, "w")) == NULL || ftruncate(fileno(fp), len)) {
		perror(path);
		exit(2);
	}
	fclose(fp);
}
