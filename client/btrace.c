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
 * btrace: command line, script loading and the order of a run.
 */
#include <sys/stat.h>

#include <err.h>
#include <limits.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "btrace.h"
#include "udt_launch.h"

int			 g_nargs;
int			 g_argsused;
char			**g_vargs;
const char		*g_progname = "btrace";
int			 g_json;
int			 g_folded;
int			 g_evflush;	/* fflush after each read's events */
const char		*g_listpattern;	/* -l PATTERN */
extern int		 g_exitcode;

static void
usage_to(FILE *fp)
{
	fprintf(fp, "usage: %s [-AhLlnv] [-c command] [-d device] "
	    "[-f text|json|folded] [-o file]\n"
	    "\t[-p pid] programfile | -e program [argument ...]\n"
	    "       %s -l [pattern]\n", g_progname, g_progname);
}

static void __attribute__((noreturn))
usage(void)
{
	usage_to(stderr);
	exit(1);
}

/* -h, --help: the usage and what each flag does, on stdout. */
static void __attribute__((noreturn))
help(void)
{
	usage_to(stdout);
	printf("\n"
	    "  -A          with -c, keep the events of every process\n"
	    "  -c command  run command (/bin/sh -c) traced, keep only the\n"
	    "              events of its process tree; end with it\n"
	    "  -d device   the dt(4) device (default $DT_DEVICE, /dev/dt)\n"
	    "  -e program  the program text, instead of programfile\n"
	    "  -f format   output: text (default), json or folded\n"
	    "  -h          print this help and exit\n"
	    "  -L, --lossless\n"
	    "              traced threads wait (0.5 s at most) for room\n"
	    "              rather than lose events; the default with -c\n"
	    "              (--no-lossless: lose rather than slow it down)\n"
	    "  -l          list the probes the device offers, or those that\n"
	    "              match pattern (wildcards * ? [...])\n"
	    "  -n          parse the program only\n"
	    "  -o file     write the output to file, not the standard output\n"
	    "  -p pid      only that process's events; end when it exits\n"
	    "  -v          statistics at exit; twice, debug output\n"
	    "programfile '-' is the standard input.  See btrace(8), bt(5).\n");
	exit(0);
}

/*
 * Read the script to its end: a pipe, /dev/stdin or a FIFO has no size to
 * go by.  "-" is the standard input.
 */
static char *
read_btfile(const char *filename, size_t *len)
{
	struct stat st;
	char *buf;
	size_t cap = 4096, n = 0, r;
	FILE *fp;

	if (strcmp(filename, "-") == 0)
		fp = stdin;
	else {
		if (stat(filename, &st))
			err(1, "can't stat '%s'", filename);
		if ((fp = fopen(filename, "r")) == NULL)
			err(1, "can't open '%s'", filename);
	}
	buf = xmalloc(cap);
	for (;;) {
		if (cap - n < 2) {
			char *nb;

			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL)
				err(1, "can't read '%s'", filename);
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n - 1, fp);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(fp))
		err(1, "can't read '%s'", filename);
	buf[n] = '\0';
	if (fp != stdin)
		fclose(fp);
	*len = n;
	return buf;
}

/*
 * -o: btrace's output goes to the file; the command (-c) keeps the
 * standard output btrace was given.
 */
static void
output_to(const char *path)
{
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) == -1)
		err(1, "can't open '%s'", path);
	if ((g_cmdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    dup2(fd, STDOUT_FILENO) == -1)
		err(1, "-o");
	close(fd);
}

/*
 * Output into a pipe is flushed once the events of each read are done,
 * before btrace waits for more, so that a reader sees it as it happens.
 * When stderr is that same pipe (OpenBSD's regress: btrace 2>&1 | diff)
 * stdout stays fully buffered as OpenBSD's, so that the combined stream
 * keeps OpenBSD's order.
 */
static int
flush_per_read(void)
{
	struct stat out, errst;

	if (fstat(STDOUT_FILENO, &out) == -1 ||
	    !(S_ISFIFO(out.st_mode) || S_ISSOCK(out.st_mode)))
		return 0;
	if (fstat(STDERR_FILENO, &errst) == 0 && errst.st_dev == out.st_dev &&
	    errst.st_ino == out.st_ino)
		return 0;
	return 1;
}

/*
 * What follows the script file is the script's ($1...), OpenBSD's rule:
 * say so when an argument looks like one of btrace's flags, or when the
 * script reads none of some.
 */
static void
script_args_check(void)
{
	long v;
	int i;

	for (i = 0; i < g_nargs; i++) {
		/* "-5" is a number; "-" alone, stdin's name, no flag */
		if (g_vargs[i][0] == '-' && g_vargs[i][1] != '\0' &&
		    !parg_number(g_vargs[i], &v))
			warnx("$%d is \"%s\": flags go before the script "
			    "file; after it, arguments are the script's",
			    i + 1, g_vargs[i]);
		else if (i + 1 > g_argsused)
			warnx("$%d (\"%s\") is not used by the script", i + 1,
			    g_vargs[i]);
	}
}

/*
 * --lossless and --no-lossless, among the flags before the script, as
 * the short flags getopt() knows: -L and -W (not documented: a long
 * flag's spelling).  An option's argument (-c '--lossless') is skipped.
 */
static void
long_flags(int argc, char *argv[])
{
	static char on[] = "-L", off[] = "-W";
	const char *a;
	size_t k;
	int i;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0)
			return;
		if (strcmp(a, "--lossless") == 0) {
			argv[i] = on;
			continue;
		}
		if (strcmp(a, "--no-lossless") == 0) {
			argv[i] = off;
			continue;
		}
		/* Flags without an argument, then perhaps one with. */
		for (k = 1; a[k] != '\0' && strchr("AhLlnvW", a[k]) != NULL;
		    k++)
			continue;
		if (a[k] != '\0' && strchr("cdefop", a[k]) != NULL &&
		    a[k + 1] == '\0')
			i++;	/* the flag's argument is the next word */
	}
}

int
main(int argc, char *argv[])
{
	const char *filename = NULL, *env, *outfile = NULL, *sock;
	char sockbuf[PATH_MAX];
	char *script = NULL, *ep;
	size_t len = 0;
	int ch, error, showprobes = 0, noaction = 0, fd = -1, status;

	setlocale(LC_ALL, "");
	if ((env = getenv("DT_DEVICE")) != NULL && *env != '\0')
		g_devpath = env;

	/* '+': stop at the script, whose arguments may look like flags */
	opterr = 0;
	if (argc > 1 && strcmp(argv[1], "--help") == 0)
		help();
	long_flags(argc, argv);
	while ((ch = getopt(argc, argv, "+Ac:d:e:f:hLlno:p:Wv")) != -1) {
		switch (ch) {
		case 'h':
			help();
		case 'A':
			g_allprocs = 1;
			break;
		case 'c':
			g_command = optarg;
			break;
		case 'd':
			g_devpath = optarg;
			break;
		case 'e':
			script = optarg;
			len = strlen(script);
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				g_json = 1;
			else if (strcmp(optarg, "folded") == 0)
				g_folded = 1;
			else if (strcmp(optarg, "text") != 0)
				errx(1, "unknown output format '%s'", optarg);
			break;
		case 'L':
			g_lossless = 1;
			break;
		case 'W':	/* --no-lossless, from long_flags() */
			g_lossless = 0;
			break;
		case 'l':
			showprobes = 1;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'p':
			g_pidfilter = (pid_t)strtol(optarg, &ep, 10);
			if (*optarg == '\0' || *ep != '\0' || g_pidfilter <= 0)
				errx(1, "invalid pid '%s'", optarg);
			break;
		case 'v':
			if (g_verbose < 2)
				g_verbose++;
			break;
		default:
			/* BSD getopt's words, with our name, not argv[0] */
			if (strchr("cdefop", optopt) != NULL && optopt != 0)
				fprintf(stderr, "%s: option requires an "
				    "argument -- %c\n", g_progname, optopt);
			else
				fprintf(stderr, "%s: unknown option -- %c\n",
				    g_progname, optopt);
			usage();
		}
	}
	argc -= optind;
	argv += optind;

	/*
	 * -l PATTERN lists what matches; a file of that name is still a
	 * script, as OpenBSD's -l lists everything and then runs it.
	 */
	if (showprobes && script == NULL && argc > 0 &&
	    access(argv[0], F_OK) == -1) {
		g_listpattern = argv[0];
		argc--;
		argv++;
	}
	if (argc > 0 && script == NULL) {
		filename = argv[0];
		script = read_btfile(filename, &len);
		argc--;
		argv++;
	}
	g_nargs = argc;
	g_vargs = argv;

	if (script == NULL && !showprobes)
		usage();
	if (script != NULL) {
		error = bt_parse(script, len, filename, g_nargs, g_vargs);
		if (error)
			return error;
		if (g_rules == NULL)
			errx(1, "%s: empty program, nothing to trace",
			    filename != NULL ? filename : "-e");
		script_args_check();
	}
	if (noaction)
		return 0;
	if (g_lossless < 0)
		g_lossless = g_command != NULL && !g_allprocs &&
		    g_pidfilter == 0;
	if (g_pidfilter > 0)
		watch_open(g_pidfilter);
	/*
	 * Folded and JSON output are for programs to read: without -o, the
	 * command's own output goes to stderr, not into the stream.
	 */
	if (outfile != NULL)
		output_to(outfile);
	else if (g_command != NULL && (g_folded || g_json) &&
	    (g_cmdout = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) == -1)
		err(1, "-c");
	g_evflush = flush_per_read();

	/*
	 * A device of our own user's comes from our user's dtd, which runs
	 * without root: its ingest socket is where -c's command and the
	 * symbol lookups must go (udt_launch.h).
	 */
	if ((sock = udt_launch_sock(g_devpath, sockbuf, sizeof(sockbuf))) !=
	    NULL && setenv(UDT_SOCKET_ENV, sock, 1) == -1)
		err(1, "environment");
	if (showprobes || g_nprobes > 0)
		fd = dev_open();
	if (showprobes)
		dev_list(fd);
	status = 0;
	if (g_rules != NULL) {
		status = rules_run(fd);
		if (status == 0)
			status = g_exitcode;
	}
	if (fd != -1)
		close(fd);
	syms_cleanup();
	if (filename != NULL)
		free(script);
	return status;
}
