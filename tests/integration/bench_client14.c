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
 * bench_client14 DEVICE PID N: a client of dt_dev.c 1.14's ABI, built
 * against <dev/dt/dtvar-1.14.h> alone, as one written for OpenBSD of
 * 2021 would be.  Checks 1.14's errors, enables syscall:sys%20:entry
 * (getpid) filtered on pid PID, records, says "ready", then reads until
 * N events came: each a 296-byte record of PID.  One line per check on
 * stdout ("ok ..." or "FAIL ..."); exit 0 when all passed.  A watchdog
 * (alarm) bounds the whole run.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar-1.14.h>

static int	nfail;

static void
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - 1.14 client: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		nfail++;
}

static int
dtioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) == -1 ? errno : 0;
}

int
main(int argc, char *argv[])
{
	struct dtioc_probe_info *dtpi;
	struct dtioc_probe dtpr;
	struct dtioc_req dtrq;
	struct dtioc_stat dtst;
	struct dt_evt evs[64];
	uint32_t pbn = 0, interval = 0;
	char big[64];
	size_t i, n;
	long want, got = 0;
	ssize_t len;
	pid_t pid;
	int fd, on = 1, bad = 0;

	if (argc != 4)
		return 2;
	pid = (pid_t)atoi(argv[2]);
	want = atol(argv[3]);
	alarm(30);
	if ((fd = open(argv[1], O_RDONLY | O_CLOEXEC)) == -1) {
		check(false, "open %s: %s", argv[1], strerror(errno));
		return 1;
	}
	memset(&dtpr, 0, sizeof(dtpr));
	if (dtioc(fd, DTIOCGPLIST, &dtpr) != 0 || dtpr.dtpr_size == 0 ||
	    (dtpi = malloc(dtpr.dtpr_size)) == NULL) {
		check(false, "DTIOCGPLIST size");
		return 1;
	}
	dtpr.dtpr_probes = dtpi;
	check(dtioc(fd, DTIOCGPLIST, &dtpr) == 0, "DTIOCGPLIST, 56-byte "
	    "entries");
	n = dtpr.dtpr_size / sizeof(*dtpi);
	for (i = 0; i < n; i++) {
		if (strcmp(dtpi[i].dtpi_prov, "syscall") == 0 &&
		    strcmp(dtpi[i].dtpi_func, "sys%20") == 0 &&
		    strcmp(dtpi[i].dtpi_name, "entry") == 0)
			pbn = dtpi[i].dtpi_pbn;
		if (strcmp(dtpi[i].dtpi_prov, "interval") == 0)
			interval = dtpi[i].dtpi_pbn;
	}
	check(pbn != 0 && interval != 0, "getpid's entry and interval "
	    "listed");

	/* What 1.14 did not know, or refused. */
	memset(big, 0, sizeof(big));
	check(dtioc(fd, _IOW('D', 5, struct dtioc_req), big) == ENOTTY,
	    "no DTIOCPRBDISABLE in 1.14: ENOTTY");
	check(dtioc(fd, _IOR('D', 2, char[32]), big) == ENOTTY,
	    "1.48's 32-byte DTIOCGSTATS: ENOTTY");
	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = pbn;
	dtrq.dtrq_filter.dtf_operand = (enum dt_operand)7;
	check(dtioc(fd, DTIOCPRBENABLE, &dtrq) == EINVAL,
	    "a bad filter operand: EINVAL");
	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = interval;
	dtrq.dtrq_rate = 1000;
	check(dtioc(fd, DTIOCPRBENABLE, &dtrq) == EOPNOTSUPP,
	    "interval at 1000 Hz, above hz: EOPNOTSUPP");

	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = pbn;
	dtrq.dtrq_filter.dtf_operand = DT_OP_EQ;
	dtrq.dtrq_filter.dtf_variable = DT_FV_PID;
	dtrq.dtrq_filter.dtf_value = (unsigned int)pid;
	dtrq.dtrq_evtflags = DTEVT_EXECNAME;
	check(dtioc(fd, DTIOCPRBENABLE, &dtrq) == 0 &&
	    dtioc(fd, DTIOCRECORD, &on) == 0,
	    "getpid's entry with pid == %d, recording", (int)pid);
	if (nfail)
		return 1;
	printf("ready\n");
	fflush(stdout);

	while (got < want) {
		len = read(fd, evs, sizeof(evs));
		if (len <= 0 || len % (ssize_t)sizeof(struct dt_evt) != 0) {
			check(false, "read: %zd (%s)", len,
			    len == -1 ? strerror(errno) : "not whole records");
			return 1;
		}
		for (i = 0; i < (size_t)len / sizeof(struct dt_evt); i++) {
			if (evs[i].dtev_pid != pid ||
			    evs[i].dtev_pbn != pbn)
				bad++;
			got++;
		}
	}
	check(got == want && bad == 0, "%ld events of 296 bytes, all of pid "
	    "%d (%d of another)", got, (int)pid, bad);
	memset(&dtst, 0xff, sizeof(dtst));
	on = dtioc(fd, DTIOCGSTATS, &dtst);
	check(on == 0 &&
	    dtst.dtst_readevt == (uint64_t)want && dtst.dtst_dropevt == 0,
	    "16-byte DTIOCGSTATS: %llu read, %llu dropped",
	    (unsigned long long)dtst.dtst_readevt,
	    (unsigned long long)dtst.dtst_dropevt);
	check(dtioc(fd, DTIOC_OPENBSD(DTIOCGSTATS), &dtst) == 0,
	    "DTIOCGSTATS in OpenBSD's encoding");
	free(dtpi);
	close(fd);
	return nfail ? 1 : 0;
}
