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
 * dt-itest's driver and the helpers every check uses.
 *
 *   dt-itest DEVICE [DTD-PID]     all checks of one running dtd
 *   dt-itest --ring16 DEVICE PID  dtd runs with --ring-size 16
 *   dt-itest --block-read DEVICE  block in read(2); exit 0 if it fails
 *
 * Exit status: 0 when every check passed.
 */
#include <sys/ioctl.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

volatile sig_atomic_t	itest_alarms;

int
dtioc(int fd, unsigned long cmd, void *arg, bool bsd)
{
	if (bsd)
		cmd = DTIOC_OPENBSD(cmd);
	return ioctl(fd, cmd, arg) == -1 ? errno : 0;
}

const char *
encname(bool bsd)
{
	return bsd ? "openbsd" : "linux";
}

int
itest_open(const struct itest *it)
{
	int fd;

	fd = open(it->it_dev, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		dtt_check(false, "open %s: %s", it->it_dev, strerror(errno));
	return fd;
}

struct dtioc_probe_info *
itest_plist(int fd, bool bsd, size_t *n)
{
	struct dtioc_probe dtpr = { 0, NULL };
	struct dtioc_probe_info *pi;

	if (dtioc(fd, DTIOCGPLIST, &dtpr, bsd) != 0 || dtpr.dtpr_size == 0)
		return NULL;
	pi = malloc(dtpr.dtpr_size);
	if (pi == NULL)
		return NULL;
	dtpr.dtpr_probes = pi;
	if (dtioc(fd, DTIOCGPLIST, &dtpr, bsd) != 0) {
		free(pi);
		return NULL;
	}
	*n = dtpr.dtpr_size / sizeof(*pi);
	return pi;
}

static void
on_alarm(int sig)
{
	(void)sig;
	itest_alarms++;
}

void
arm(unsigned int ms)
{
	struct itimerval itv;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = 0;	/* no SA_RESTART: read(2) must see EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&itv, 0, sizeof(itv));
	itv.it_value.tv_sec = ms / 1000;
	itv.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &itv, NULL);
}

void
disarm(void)
{
	struct itimerval itv;

	memset(&itv, 0, sizeof(itv));
	setitimer(ITIMER_REAL, &itv, NULL);
}

long
read_events(int fd, struct dt_evt *evs, size_t max, size_t want,
    size_t bufsz, unsigned int ms)
{
	static char buf[1024 * 1024];
	size_t got = 0, k;
	ssize_t n;

	if (bufsz > sizeof(buf))
		bufsz = sizeof(buf);
	arm(ms);
	while (got < want) {
		n = read(fd, buf, bufsz);
		if (n == -1) {
			int error = errno;

			disarm();
			return -error;
		}
		if (n == 0 || n % sizeof(struct dt_evt) != 0) {
			disarm();
			dtt_check(false, "read returned %zd bytes, not whole "
			    "records", n);
			return -EIO;
		}
		for (k = 0; k < (size_t)n / sizeof(struct dt_evt); k++) {
			if (got < max)
				memcpy(&evs[got], buf + k *
				    sizeof(struct dt_evt), sizeof(*evs));
			got++;
		}
	}
	disarm();
	return (long)(got < max ? got : max);
}

/* GPLIST once to find the pbns every other check needs. */
static bool
itest_setup(struct itest *it)
{
	struct dtioc_probe_info *pi;
	size_t i, n = 0;
	int fd;

	if ((fd = itest_open(it)) == -1)
		return false;
	pi = itest_plist(fd, false, &n);
	close(fd);
	if (!dtt_check(pi != NULL && n >= 2, "probe list readable (%zu probes)",
	    n))
		return false;
	for (i = 0; i < n; i++) {
		if (strcmp(pi[i].dtpi_prov, "profile") == 0 &&
		    it->it_profile == 0)
			it->it_profile = pi[i].dtpi_pbn;
		if (strcmp(pi[i].dtpi_prov, "interval") == 0 &&
		    it->it_interval == 0)
			it->it_interval = pi[i].dtpi_pbn;
	}
	it->it_nprobes = (uint32_t)n;
	free(pi);
	return dtt_check(it->it_profile != 0 && it->it_interval != 0,
	    "profile is pbn %u, interval is pbn %u", it->it_profile,
	    it->it_interval);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: dt-itest device [dtd-pid]\n"
	    "       dt-itest --ring16 device dtd-pid\n"
	    "       dt-itest --block-read device\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct itest it;
	bool ring16 = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&it, 0, sizeof(it));
	if (argc == 3 && strcmp(argv[1], "--block-read") == 0)
		return itest_block_read(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "--ring16") == 0) {
		ring16 = true;
		argc--;
		argv++;
	}
	if (argc < 2 || argc > 3 || (ring16 && argc != 3))
		usage();
	it.it_dev = argv[1];
	if (argc == 3)
		it.it_dtd = (pid_t)atoi(argv[2]);

	if (itest_setup(&it)) {
		if (ring16)
			itest_ring16(&it);
		else {
			itest_seq(&it, false);
			itest_seq(&it, true);
			itest_errors(&it, false);
			itest_errors(&it, true);
			itest_badptr(&it, false);
			itest_badptr(&it, true);
			itest_rdvnode(&it, false);
			itest_rdvnode(&it, true);
			itest_concurrent(&it);
			itest_eintr(&it);
			/*
			 * Through libuserdt-dev.so the read waits in recv(2)
			 * and job control acts as on OpenBSD, not as these
			 * checks of FUSE expect: fesock-stop checks it there.
			 */
			if (getenv("USERDT_DEVICE_SOCKET") == NULL)
				itest_stopcont(&it);
			else
				printf("skip - stop: checked by fesock-stop "
				    "through the device socket\n");
			itest_poll(&it);
			itest_thread(&it);
			itest_bigread(&it);
			itest_unpriv(&it);
		}
	}
	return dtt_done();
}
