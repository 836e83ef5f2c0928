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
 * dtrecord: record what a dt(4) device answers (its probe table, the
 * events of the probes asked for, its counters) in the text format of
 * dtrecord(1), which dtd --replay serves back.  Portable: POSIX and
 * <dev/dt/dtvar.h>, plus dt_os.h's few lines, so the same file records
 * OpenBSD's dt(4) and userdt's dtd.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/types.h>
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_os.h"

#define NREAD	64	/* records a read, as btrace */

static volatile sig_atomic_t	 stopped;	/* a signal ends the reading */

static void
usage(void)
{
	fprintf(stderr, "usage: dtrecord [-f device] [-o file] [-n count] "
	    "[-t seconds] [-F flags]\n"
	    "                probe ...\n");
	exit(2);
}

static void
on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

static void
die(const char *what)
{
	fprintf(stderr, "dtrecord: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* execname,ustack,kstack,funcargs or a number. */
static uint64_t
parse_flags(char *s)
{
	uint64_t flags = 0;
	char *tok, *end;

	for (tok = strtok(s, ","); tok != NULL; tok = strtok(NULL, ",")) {
		if (strcmp(tok, "execname") == 0)
			flags |= DTEVT_EXECNAME;
		else if (strcmp(tok, "ustack") == 0)
			flags |= DTEVT_USTACK;
		else if (strcmp(tok, "kstack") == 0)
			flags |= DTEVT_KSTACK;
		else if (strcmp(tok, "funcargs") == 0)
			flags |= DTEVT_FUNCARGS;
		else {
			errno = 0;
			flags |= strtoull(tok, &end, 0);
			if (errno != 0 || *end != '\0' || end == tok) {
				fprintf(stderr, "dtrecord: -F: '%s'?\n", tok);
				exit(2);
			}
		}
	}
	return flags;
}

/* The whole probe table, DTIOCGPLIST's two steps. */
static struct dtioc_probe_info *
probe_list(int fd, size_t *n)
{
	struct dtioc_probe dtpr;
	struct dtioc_probe_info *dtpi;

	memset(&dtpr, 0, sizeof(dtpr));
	if (ioctl(fd, DTIOCGPLIST, &dtpr) == -1)
		die("DTIOCGPLIST");
	if ((dtpi = malloc(dtpr.dtpr_size ? dtpr.dtpr_size : 1)) == NULL)
		die("malloc");
	dtpr.dtpr_probes = dtpi;
	if (ioctl(fd, DTIOCGPLIST, &dtpr) == -1)
		die("DTIOCGPLIST");
	*n = dtpr.dtpr_size / sizeof(*dtpi);
	return dtpi;
}

/* A name as the file writes it: NUL-terminated within DTNAMESIZE. */
static const char *
name16(const char *s, char *buf)
{
	memcpy(buf, s, DTNAMESIZE);
	buf[DTNAMESIZE - 1] = '\0';
	return buf;
}

static void
write_args(FILE *out, int fd, const struct dtioc_probe_info *dtpi)
{
	struct dtioc_arg_info dtai[DTMAXFUNCARGS];
	struct dtioc_arg dtar;
	size_t i, n;
	char b[DTNAMESIZE];

	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = dtpi->dtpi_pbn;
	if (ioctl(fd, DTIOCGARGS, &dtar) == -1 || dtar.dtar_size == 0)
		return;
	if (dtar.dtar_size > sizeof(dtai))
		dtar.dtar_size = sizeof(dtai);
	memset(dtai, 0, sizeof(dtai));
	dtar.dtar_args = dtai;
	if (ioctl(fd, DTIOCGARGS, &dtar) == -1)
		return;
	n = dtar.dtar_size / sizeof(struct dtioc_arg);
	if (n == 0)
		return;
	fprintf(out, "argtypes %u", (unsigned int)dtpi->dtpi_pbn);
	for (i = 0; i < n && i < DTMAXFUNCARGS; i++)
		fprintf(out, "%s %s", i ? "," : "",
		    name16(dtai[i].dtai_argtype, b));
	fputc('\n', out);
}

/*
 * The probe named prov:func:name, and the period of a timer probe
 * (profile:hz:97, interval:ms:10: the provider's first probe, as btrace
 * matches them).  0 when absent.
 */
static uint32_t
find_probe(const struct dtioc_probe_info *dtpi, size_t n, char *spec,
    uint64_t *nsecs)
{
	char *prov, *func, *name, *end, b1[DTNAMESIZE], b2[DTNAMESIZE],
	    b3[DTNAMESIZE];
	unsigned long long v;
	size_t i;
	int timer;

	prov = spec;
	if ((func = strchr(prov, ':')) == NULL ||
	    (name = strchr(func + 1, ':')) == NULL)
		return 0;
	*func++ = '\0';
	*name++ = '\0';
	*nsecs = 0;
	timer = strcmp(prov, "profile") == 0 || strcmp(prov, "interval") == 0;
	if (timer) {
		errno = 0;
		v = strtoull(name, &end, 10);
		if (errno != 0 || *end != '\0' || v == 0)
			return 0;
		if (strcmp(func, "hz") == 0)
			*nsecs = 1000000000ULL / v;
		else if (strcmp(func, "us") == 0)
			*nsecs = v * 1000ULL;
		else if (strcmp(func, "ms") == 0)
			*nsecs = v * 1000000ULL;
		else if (strcmp(func, "s") == 0)
			*nsecs = v * 1000000000ULL;
		else
			return 0;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(prov, name16(dtpi[i].dtpi_prov, b1)) != 0)
			continue;
		if (timer || (strcmp(func, name16(dtpi[i].dtpi_func, b2)) ==
		    0 && strcmp(name, name16(dtpi[i].dtpi_name, b3)) == 0))
			return dtpi[i].dtpi_pbn;
	}
	return 0;
}

static void
write_stack(FILE *out, const char *key, const struct stacktrace *st)
{
	unsigned int i, n = st->st_count;

	if (n > STACKTRACE_MAX)
		n = STACKTRACE_MAX;
	/* Words past st_count too, should a device leave any. */
	for (i = n; i < STACKTRACE_MAX; i++)
		if (st->st_pc[i] != 0)
			n = i + 1;
	if (n == 0 && st->st_count == 0)
		return;
	fprintf(out, " %s=%u:", key, st->st_count);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%#lx", i ? "," : "", (unsigned long)st->st_pc[i]);
}

static void
write_event(FILE *out, const struct dt_evt *ev)
{
	const unsigned char *c;
	int i, n;

	fprintf(out, "event %u cpu=%u pid=%ld tid=%ld tsp=%lld.%09ld",
	    ev->dtev_pbn, ev->dtev_cpu, (long)ev->dtev_pid,
	    (long)ev->dtev_tid, (long long)ev->dtev_tsp.tv_sec,
	    (long)ev->dtev_tsp.tv_nsec);
	if (ev->dtev_comm[0] != '\0') {
		fputs(" comm=\"", out);
		for (c = (const unsigned char *)ev->dtev_comm;
		    c < (const unsigned char *)ev->dtev_comm + DTMAXCOMLEN &&
		    *c != '\0'; c++) {
			if (*c == '"' || *c == '\\')
				fprintf(out, "\\%c", *c);
			else if (*c < 0x20 || *c > 0x7e)
				fprintf(out, "\\%03o", *c);
			else
				fputc(*c, out);
		}
		fputc('"', out);
	}
	write_stack(out, "kstack", &ev->dtev_kstack);
	write_stack(out, "ustack", &ev->dtev_ustack);
	for (n = DTMAXFUNCARGS; n > 0 && ev->dtev_args[n - 1] == 0; n--)
		continue;
	if (n > 0) {
		fputs(" args=", out);
		for (i = 0; i < n; i++)
			fprintf(out, "%s%ld", i ? "," : "",
			    (long)ev->dtev_args[i]);
	}
	fputc('\n', out);
}

int
main(int argc, char *argv[])
{
	const char *dev = "/dev/dt", *outpath = NULL;
	struct dtioc_probe_info *dtpi;
	struct dtioc_req *reqs;
	struct dtioc_stat st;
	struct sigaction sa;
	struct dt_evt *buf;
	unsigned long long count = 0, seen = 0;
	unsigned int secs = 0;
	uint64_t flags = 0;
	size_t n, i, nreq;
	ssize_t got;
	FILE *out = stdout;
	char *end, b1[DTNAMESIZE], b2[DTNAMESIZE], b3[DTNAMESIZE];
	int ch, fd, on;

	while ((ch = getopt(argc, argv, "f:o:n:t:F:")) != -1) {
		switch (ch) {
		case 'f':
			dev = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'n':
			count = strtoull(optarg, &end, 10);
			if (*end != '\0' || count == 0)
				usage();
			break;
		case 't':
			secs = (unsigned int)strtoul(optarg, &end, 10);
			if (*end != '\0' || secs == 0)
				usage();
			break;
		case 'F':
			flags = parse_flags(optarg);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0)
		usage();

	if ((fd = open(dev, O_RDONLY)) == -1)
		die(dev);
	dtpi = probe_list(fd, &n);
	reqs = calloc((size_t)argc, sizeof(*reqs));
	buf = calloc(NREAD, sizeof(*buf));
	if (reqs == NULL || buf == NULL)
		die("calloc");
	for (nreq = 0; nreq < (size_t)argc; nreq++) {
		char spec[128];

		snprintf(spec, sizeof(spec), "%s", argv[nreq]);
		reqs[nreq].dtrq_pbn = find_probe(dtpi, n, spec,
		    &reqs[nreq].dtrq_nsecs);
		if (reqs[nreq].dtrq_pbn == 0) {
			fprintf(stderr, "dtrecord: probe '%s' not found\n",
			    argv[nreq]);
			return 1;
		}
		reqs[nreq].dtrq_evtflags = flags;
	}
	if (outpath != NULL && (out = fopen(outpath, "w")) == NULL)
		die(outpath);

	fprintf(out, "dtrecord 1\n");
	fprintf(out, "source %s %s\n", dt_os_name(), dev);
	for (i = 0; i < n; i++)
		fprintf(out, "probe %u %s %s %s %u\n",
		    (unsigned int)dtpi[i].dtpi_pbn,
		    name16(dtpi[i].dtpi_prov, b1),
		    name16(dtpi[i].dtpi_func, b2),
		    name16(dtpi[i].dtpi_name, b3),
		    (unsigned int)dtpi[i].dtpi_nargs);
	for (i = 0; i < n; i++)
		write_args(out, fd, &dtpi[i]);
	for (i = 0; i < nreq; i++) {
		if (ioctl(fd, DTIOCPRBENABLE, &reqs[i]) == -1)
			die("DTIOCPRBENABLE");
		fprintf(out, "enable %u %#llx %llu\n",
		    (unsigned int)reqs[i].dtrq_pbn,
		    (unsigned long long)reqs[i].dtrq_evtflags,
		    (unsigned long long)reqs[i].dtrq_nsecs);
	}

	/* No SA_RESTART: a signal must end a blocked read with EINTR. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (secs != 0)
		alarm(secs);

	on = 1;
	if (ioctl(fd, DTIOCRECORD, &on) == -1)
		die("DTIOCRECORD");
	while (!stopped && (count == 0 || seen < count)) {
		got = read(fd, buf, NREAD * sizeof(*buf));
		if (got == -1) {
			if (errno == EINTR)
				break;
			die("read");
		}
		if (got % (ssize_t)sizeof(*buf) != 0) {
			fprintf(stderr, "dtrecord: read %ld bytes, not whole "
			    "records\n", (long)got);
			return 1;
		}
		for (i = 0; i < (size_t)got / sizeof(*buf); i++, seen++)
			write_event(out, &buf[i]);
	}
	on = 0;
	if (ioctl(fd, DTIOCRECORD, &on) == -1)
		die("DTIOCRECORD");
	memset(&st, 0, sizeof(st));
	if (ioctl(fd, DTIOCGSTATS, &st) == -1)
		die("DTIOCGSTATS");
	fprintf(out, "stats readevt=%llu dropevt=%llu skiptick=%llu "
	    "recurevt=%llu\n", (unsigned long long)st.dtst_readevt,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)st.dtst_skiptick,
	    (unsigned long long)st.dtst_recurevt);
	for (i = 0; i < nreq; i++)
		if (ioctl(fd, DTIOCPRBDISABLE, &reqs[i]) == -1)
			die("DTIOCPRBDISABLE");
	close(fd);
	if (fflush(out) != 0 || (out != stdout && fclose(out) != 0))
		die(outpath ? outpath : "stdout");
	free(dtpi);
	free(reqs);
	free(buf);
	return 0;
}
