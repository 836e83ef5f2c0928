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
 * conform_test DTD CC TOOLSDIR INCDIR REGISTRY
 *
 * The conformance kit as a client author builds it: dtconform compiled
 * with CC -std=c99 -pedantic from its sources and the installed-style
 * header alone, then run against a private dtd (FUSE-file, temporary
 * path, stopped by pid) with the registry of deviations.  It must pass
 * with exactly the registered deviations (dtconform fails a registered
 * check that passes), and print KTAP: the version line, a plan, one
 * result line per check numbered in order, "# TODO" on each expected
 * failure.
 */
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"

static struct dtt_dtd	dd;

static bool
run(char *const argv[], const char *out, int *status)
{
	int fd = -1;
	pid_t pid;

	if (out != NULL && (fd = open(out, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0644)) == -1)
		return false;
	pid = dtt_spawn(argv, NULL, -1, fd, -1, -1);
	if (fd != -1)
		close(fd);
	if (pid == -1)
		return false;
	if ((*status = dtt_wait(pid, 60000)) == -1) {
		dtt_stop(pid, SIGKILL, 5000);
		return false;
	}
	return true;
}

int
main(int argc, char *argv[])
{
	char bin[128], out[128], src[256], os[256], incarg[256], err[256];
	char line[1024];
	unsigned int plan = 0, n = 0, ntodo = 0, bad = 0, num;
	bool version = false, totals = false;
	FILE *fp;
	int status;

	if (argc != 6) {
		fprintf(stderr, "usage: conform_test DTD CC TOOLSDIR INCDIR "
		    "REGISTRY\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("SKIP: needs root (FUSE mounts)\n");
		return 77;
	}
	if (dtt_dtd_init(&dd, "conform") != 0)
		return 1;
	snprintf(bin, sizeof(bin), "%s/dtconform", dd.dd_dir);
	snprintf(out, sizeof(out), "%s/ktap", dd.dd_dir);
	snprintf(src, sizeof(src), "%s/dtconform.c", argv[3]);
	snprintf(os, sizeof(os), "%s/dt_os_linux.c", argv[3]);
	snprintf(incarg, sizeof(incarg), "-I%s", argv[4]);

	dtt_tag("build");
	{
		char *cc[] = { argv[2], "-std=c99", "-pedantic", "-Wall",
		    "-Wextra", "-Werror", incarg, "-o", bin, src, os, NULL };

		dtt_check(run(cc, NULL, &status) && dtt_exited0(status),
		    "cc -std=c99 -pedantic builds dtconform");
	}

	dtt_tag("run");
	if (dtt_dtd_start(&dd, argv[1], NULL, err, sizeof(err)) <= 0) {
		dtt_check(false, "dtd starts: %s", err);
		goto out;
	}
	{
		char *conform[] = { bin, "-f", dd.dd_dev, "-r", argv[5],
		    NULL };

		dtt_check(run(conform, out, &status) && dtt_exited0(status),
		    "dtconform passes with the registered deviations");
	}
	dtt_dtd_stop(&dd, SIGTERM);

	dtt_tag("ktap");
	if ((fp = fopen(out, "r")) == NULL) {
		dtt_check(false, "output");
		goto out;
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		fputs(line, stdout);
		if (strcmp(line, "TAP version 13\n") == 0 && n == 0 &&
		    plan == 0)
			version = true;
		else if (sscanf(line, "1..%u", &plan) == 1)
			continue;
		else if (strncmp(line, "# Totals:", 9) == 0)
			totals = strstr(line, " fail:0 ") != NULL &&
			    strstr(line, " xpass:0 ") != NULL;
		else if (line[0] == '#')
			continue;
		else if (sscanf(line, "ok %u ", &num) == 1 ||
		    sscanf(line, "not ok %u ", &num) == 1) {
			if (num != ++n)
				bad++;
			if (strncmp(line, "not ok", 6) == 0) {
				if (strstr(line, " # TODO ") == NULL)
					bad++;
				else
					ntodo++;
			}
		} else
			bad++;
	}
	fclose(fp);
	dtt_check(version, "the first line is 'TAP version 13'");
	dtt_check(plan > 0 && n == plan && bad == 0,
	    "%u results for a plan of %u, %u lines out of place", n, plan,
	    bad);
	dtt_check(ntodo > 0 && totals, "%u known deviations, none failed "
	    "or passed unexpectedly", ntodo);
out:
	dtt_dtd_fini(&dd, true);
	return dtt_done();
}
