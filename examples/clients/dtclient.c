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
 * dtclient: a small client of dt(4), written from the manual page and
 * <dev/dt/dtvar.h> alone, to start your own from.  It does what every
 * client does, in order:
 *
 *	open(2)			the device
 *	DTIOCGPLIST		list the probes (ask the size, then fill)
 *	DTIOCPRBENABLE		each probe named on the command line
 *	DTIOCRECORD 1		start recording
 *	read(2)			whole struct dt_evt records, until a signal
 *	DTIOCRECORD 0		stop
 *	DTIOCGSTATS		this open's counters
 *	close(2)		disables everything this open enabled
 *
 * usage: dtclient [-d device] -l
 *        dtclient [-d device] [-t seconds] probe ...
 *
 * A probe is provider:function:name as -l prints it.  For the timers,
 * profile and interval, the function is a unit and the name a number,
 * as in btrace(8): profile:hz:100, interval:ms:250 (units hz, s, ms,
 * us).  Without -t it records until SIGINT or SIGTERM.
 *
 * Each event is printed on one line:
 *
 *	pbn=3 probe=interval:hz:100 pid=812 tid=815 comm=dtd time=1764151234.001002003
 *
 * and, at the end, the counters of DTIOCGSTATS:
 *
 *	stats: read=100 dropped=0 skipped=0 recursive=0
 *
 * Build: cc -std=c99 -o dtclient dtclient.c, with the header of the
 * userdt-dev package; for another prefix add its include directory
 * (cc -std=c99 $(pkg-config --cflags userdt) -o dtclient dtclient.c).
 * Enabling probes and recording need root, as dt(4) says.
 */

#define _POSIX_C_SOURCE 200809L

#include <sys/ioctl.h>
#include <sys/types.h>

#include <dev/dt/dtvar.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DEVICE	"/dev/dt"
#define NREAD		64	/* records per read(2), as btrace(8) */

/* Set by the signal handler; the read loop stops when it is set. */
static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: dtclient [-d device] -l\n"
	    "       dtclient [-d device] [-t seconds] probe ...\n");
	exit(2);
}

static void
die(const char *what)
{
	fprintf(stderr, "dtclient: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * The probe list, in DTIOCGPLIST's two rounds: a size of 0 asks for the
 * size of the whole list, then a buffer of that size is filled.  The
 * list cannot change while dtd runs, but a client that wants to be safe
 * retries on ENOSPC.
 */
static struct dtioc_probe_info *
probe_list(int fd, size_t *np)
{
	struct dtioc_probe pr;
	struct dtioc_probe_info *pi = NULL;

	for (;;) {
		memset(&pr, 0, sizeof(pr));
		if (ioctl(fd, DTIOCGPLIST, &pr) == -1)
			die("DTIOCGPLIST (size)");
		free(pi);
		if ((pi = malloc(pr.dtpr_size > 0 ? pr.dtpr_size : 1)) == NULL)
			die("malloc");
		pr.dtpr_probes = pi;
		if (ioctl(fd, DTIOCGPLIST, &pr) == 0)
			break;
		if (errno != ENOSPC)
			die("DTIOCGPLIST");
	}
	*np = pr.dtpr_size / sizeof(*pi);
	return pi;
}

/* "prov:func:name" of a probe; the fields are NUL-terminated. */
static void
probe_name(const struct dtioc_probe_info *p, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s:%.*s:%.*s", DTNAMESIZE, p->dtpi_prov,
	    DTNAMESIZE, p->dtpi_func, DTNAMESIZE, p->dtpi_name);
}

static int
is_timer(const char *prov)
{
	return strcmp(prov, "profile") == 0 || strcmp(prov, "interval") == 0;
}

/* A timer's period in nanoseconds from "unit" and "number", or 0. */
static uint64_t
timer_nsecs(const char *unit, const char *num)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(num, &end, 10);
	if (errno != 0 || end == num || *end != '\0' || n == 0)
		return 0;
	if (strcmp(unit, "hz") == 0)
		return 1000000000ULL / n;
	if (strcmp(unit, "s") == 0)
		return n * 1000000000ULL;
	if (strcmp(unit, "ms") == 0)
		return n * 1000000ULL;
	if (strcmp(unit, "us") == 0)
		return n * 1000ULL;
	return 0;
}

/*
 * Find the probe a command-line name means and fill the request that
 * enables it.  Timers match on the provider alone (the list has one
 * probe per timer provider); the unit and number only give the period.
 */
static const struct dtioc_probe_info *
probe_find(const struct dtioc_probe_info *pi, size_t n, const char *arg,
    struct dtioc_req *rq)
{
	char spec[3 * DTNAMESIZE + 3], *prov, *func, *name;
	size_t i;

	if (strlen(arg) >= sizeof(spec))
		return NULL;
	strcpy(spec, arg);
	prov = spec;
	if ((func = strchr(prov, ':')) == NULL)
		return NULL;
	*func++ = '\0';
	if ((name = strchr(func, ':')) == NULL)
		return NULL;
	*name++ = '\0';

	memset(rq, 0, sizeof(*rq));
	/* pid, tid, cpu and time are always there; comm is asked for. */
	rq->dtrq_evtflags = DTEVT_EXECNAME;
	if (is_timer(prov) && (rq->dtrq_nsecs = timer_nsecs(func, name)) == 0)
		return NULL;

	for (i = 0; i < n; i++) {
		if (strncmp(pi[i].dtpi_prov, prov, DTNAMESIZE) != 0)
			continue;
		if (!is_timer(prov) &&
		    (strncmp(pi[i].dtpi_func, func, DTNAMESIZE) != 0 ||
		    strncmp(pi[i].dtpi_name, name, DTNAMESIZE) != 0))
			continue;
		rq->dtrq_pbn = pi[i].dtpi_pbn;
		return &pi[i];
	}
	return NULL;
}

static void
print_event(const struct dt_evt *ev, const struct dtioc_probe_info *pi,
    size_t n)
{
	char probe[3 * DTNAMESIZE + 3] = "?";
	char comm[DTMAXCOMLEN + 1];
	size_t i;

	/* A real client would index or cache this; a scan reads best. */
	for (i = 0; i < n; i++) {
		if (pi[i].dtpi_pbn == ev->dtev_pbn) {
			probe_name(&pi[i], probe, sizeof(probe));
			break;
		}
	}
	/* dtev_comm holds a NUL within its DTMAXCOMLEN bytes; be careful. */
	memcpy(comm, ev->dtev_comm, DTMAXCOMLEN);
	comm[DTMAXCOMLEN] = '\0';

	printf("pbn=%u probe=%s pid=%d tid=%d comm=%s time=%lld.%09ld\n",
	    ev->dtev_pbn, probe, (int)ev->dtev_pid, (int)ev->dtev_tid,
	    comm[0] != '\0' ? comm : "-", (long long)ev->dtev_tsp.tv_sec,
	    (long)ev->dtev_tsp.tv_nsec);
}

int
main(int argc, char *argv[])
{
	const char *device = DEFAULT_DEVICE;
	struct dtioc_probe_info *pi;
	struct dtioc_stat st;
	struct dt_evt *buf;
	struct sigaction sa;
	char name[3 * DTNAMESIZE + 3];
	size_t n, i;
	unsigned long long nevents = 0;
	unsigned int seconds = 0;
	int ch, fd, list = 0, on;

	while ((ch = getopt(argc, argv, "d:lt:")) != -1) {
		switch (ch) {
		case 'd':
			device = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 't':
			seconds = (unsigned int)strtoul(optarg, NULL, 10);
			if (seconds == 0)
				usage();
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (list ? argc != 0 : argc == 0)
		usage();

	/* Reading needs no write access to the device. */
	if ((fd = open(device, O_RDONLY)) == -1)
		die(device);
	pi = probe_list(fd, &n);

	if (list) {
		for (i = 0; i < n; i++) {
			probe_name(&pi[i], name, sizeof(name));
			printf("%u %s\n", pi[i].dtpi_pbn, name);
		}
		free(pi);
		close(fd);
		return 0;
	}

	for (i = 0; i < (size_t)argc; i++) {
		struct dtioc_req rq;

		if (probe_find(pi, n, argv[i], &rq) == NULL) {
			fprintf(stderr, "dtclient: probe '%s' not found\n",
			    argv[i]);
			return 1;
		}
		if (ioctl(fd, DTIOCPRBENABLE, &rq) == -1)
			die(argv[i]);
	}

	/*
	 * No SA_RESTART: a caught signal ends a blocked read(2) with EINTR,
	 * as dt(4) says, and the loop below sees `stop'.  SIGALRM ends a
	 * run of -t seconds the same way.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	if (sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGALRM, &sa, NULL) == -1)
		die("sigaction");

	if ((buf = calloc(NREAD, sizeof(*buf))) == NULL)
		die("calloc");

	on = 1;
	if (ioctl(fd, DTIOCRECORD, &on) == -1)
		die("DTIOCRECORD");
	if (seconds > 0)
		alarm(seconds);

	/*
	 * A signal that lands between the test of `stop' and read(2) is
	 * seen at the next event's read; a client that must stop at once
	 * whatever the probes do blocks the signals and uses ppoll(2),
	 * which userdt's device supports and OpenBSD's does not.
	 */
	while (!stop) {
		ssize_t len;
		size_t k;

		/* A multiple of the record's size: whole records only. */
		len = read(fd, buf, NREAD * sizeof(*buf));
		if (len == -1) {
			if (errno == EINTR)
				continue;	/* `stop' is set: done */
			die("read");
		}
		/* 0: a stop signal (SIGTSTP...) woke us; read again. */
		if ((size_t)len % sizeof(*buf) != 0) {
			fprintf(stderr, "dtclient: read %zd bytes, not whole "
			    "records\n", len);
			return 1;
		}
		for (k = 0; k < (size_t)len / sizeof(*buf); k++) {
			print_event(&buf[k], pi, n);
			nevents++;
		}
		fflush(stdout);
	}

	on = 0;
	if (ioctl(fd, DTIOCRECORD, &on) == -1)
		die("DTIOCRECORD");

	if (ioctl(fd, DTIOCGSTATS, &st) == -1)
		die("DTIOCGSTATS");
	printf("stats: read=%llu dropped=%llu skipped=%llu recursive=%llu\n",
	    (unsigned long long)st.dtst_readevt,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)st.dtst_skiptick,
	    (unsigned long long)st.dtst_recurevt);
	fprintf(stderr, "dtclient: %llu events printed\n", nevents);

	free(buf);
	free(pi);
	close(fd);
	return 0;
}
