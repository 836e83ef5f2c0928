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
 * dt(4)'s error answers through the device: wrong requests, bad
 * pointers, and DTIOCRDVNODE's lookups.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static bool
is(int got, int want)
{
	return got == want;
}

static const char *
ename(int error)
{
	return error == 0 ? "success" : strerror(error);
}

void
itest_errors(struct itest *it, bool bsd)
{
	struct dtioc_probe_info *pi;
	struct dtioc_probe dtpr;
	struct dtioc_arg dtar;
	struct dtioc_req dtrq;
	const char *e = encname(bsd);
	int fd, on, r;

	if ((fd = itest_open(it)) == -1)
		return;
	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_nsecs = 100 * NSEC_PER_MSEC;

	dtrq.dtrq_pbn = 0;
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd);
	dtt_check(is(r, ENOENT), "%s: PRBENABLE pbn 0: ENOENT (%s)", e, ename(r));
	dtrq.dtrq_pbn = it->it_nprobes + 1;
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd);
	dtt_check(is(r, ENOENT), "%s: PRBENABLE pbn %u: ENOENT (%s)", e,
	    dtrq.dtrq_pbn, ename(r));
	on = 1;
	r = dtioc(fd, DTIOCRECORD, &on, bsd);
	dtt_check(is(r, ENOENT), "%s: RECORD 1 with nothing enabled: ENOENT (%s)",
	    e, ename(r));
	dtrq.dtrq_pbn = it->it_interval;
	dtrq.dtrq_nsecs = 199999;
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd);
	dtt_check(is(r, EINVAL), "%s: PRBENABLE interval 199999 ns: EINVAL (%s)",
	    e, ename(r));
	dtrq.dtrq_nsecs = 200000;
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd);
	dtt_check(is(r, 0), "%s: PRBENABLE interval 200000 ns (%s)", e, ename(r));
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd);
	dtt_check(is(r, EEXIST), "%s: PRBENABLE twice: EEXIST (%s)", e, ename(r));
	r = dtioc(fd, DTIOCRECORD, &on, bsd);
	dtt_check(is(r, 0), "%s: RECORD 1 (%s)", e, ename(r));
	r = dtioc(fd, DTIOCRECORD, &on, bsd);
	dtt_check(is(r, EBUSY), "%s: RECORD 1 while recording: EBUSY (%s)", e,
	    ename(r));
	dtrq.dtrq_pbn = it->it_profile;
	r = dtioc(fd, DTIOCPRBENABLE, &dtrq, bsd);
	dtt_check(is(r, EBUSY), "%s: PRBENABLE while recording: EBUSY (%s)", e,
	    ename(r));
	r = dtioc(fd, DTIOCPRBDISABLE, &dtrq, bsd);
	dtt_check(is(r, EBUSY), "%s: PRBDISABLE while recording: EBUSY (%s)", e,
	    ename(r));
	on = 0;
	r = dtioc(fd, DTIOCRECORD, &on, bsd);
	dtt_check(is(r, 0), "%s: RECORD 0 (%s)", e, ename(r));
	r = dtioc(fd, DTIOCRECORD, &on, bsd);
	dtt_check(is(r, 0), "%s: RECORD 0 when stopped is a no-op (%s)", e,
	    ename(r));

	/* 7 was DTIOCGETAUXBASE; the other is no command at all. */
	r = ioctl(fd, _IO('D', 7), NULL) == -1 ? errno : 0;
	dtt_check(is(r, ENOTTY), "%s: _IO('D', 7): ENOTTY (%s)", e, ename(r));
	r = ioctl(fd, bsd ? 0xc0104407UL : 0x1234abcdUL, &dtpr) == -1 ?
	    errno : 0;
	dtt_check(is(r, ENOTTY), "%s: %s: ENOTTY (%s)", e, bsd ?
	    "0xc0104407 (old GETAUXBASE)" : "0x1234abcd", ename(r));

	memset(&dtar, 0, sizeof(dtar));
	dtar.dtar_pbn = 0;
	r = dtioc(fd, DTIOCGARGS, &dtar, bsd);
	dtt_check(is(r, EINVAL), "%s: GARGS pbn 0: EINVAL (%s)", e, ename(r));
	dtar.dtar_pbn = it->it_nprobes + 1;
	r = dtioc(fd, DTIOCGARGS, &dtar, bsd);
	dtt_check(is(r, EINVAL), "%s: GARGS pbn N+1: EINVAL (%s)", e, ename(r));

	/* Too small: what fits is copied, the struct is not updated. */
	pi = calloc(2, sizeof(*pi));
	dtpr.dtpr_size = sizeof(*pi);
	dtpr.dtpr_probes = pi;
	r = dtioc(fd, DTIOCGPLIST, &dtpr, bsd);
	dtt_check(is(r, ENOSPC), "%s: GPLIST with room for 1 of %u: ENOSPC (%s)",
	    e, it->it_nprobes, ename(r));
	dtt_check(dtpr.dtpr_size == sizeof(*pi) && pi[0].dtpi_pbn == 1 &&
	    pi[1].dtpi_pbn == 0, "%s: ENOSPC copied entry 1 only, size left "
	    "at %zu (%zu)", e, sizeof(*pi), dtpr.dtpr_size);
	free(pi);
	dtt_check(close(fd) == 0, "%s: close", e);
}

void
itest_badptr(struct itest *it, bool bsd)
{
	struct dtioc_probe dtpr;
	struct dtioc_stat dtst;
	const char *e = encname(bsd);
	int fd, r;

	if ((fd = itest_open(it)) == -1)
		return;
	dtpr.dtpr_size = it->it_nprobes * sizeof(struct dtioc_probe_info);
	dtpr.dtpr_probes = (void *)1;
	r = dtioc(fd, DTIOCGPLIST, &dtpr, bsd);
	dtt_check(is(r, EFAULT), "%s: GPLIST into (void *)1: EFAULT (%s)", e,
	    ename(r));
	r = dtioc(fd, DTIOCGSTATS, (void *)8, bsd);
	dtt_check(is(r, EFAULT), "%s: GSTATS at (void *)8: EFAULT (%s)", e,
	    ename(r));
	r = dtioc(fd, DTIOCPRBENABLE, (void *)8, bsd);
	dtt_check(is(r, EFAULT), "%s: PRBENABLE from (void *)8: EFAULT (%s)", e,
	    ename(r));
	r = dtioc(fd, DTIOCGPLIST, NULL, bsd);
	dtt_check(is(r, EFAULT), "%s: GPLIST at NULL: EFAULT (%s)", e, ename(r));
	r = dtioc(fd, DTIOCGSTATS, &dtst, bsd);
	dtt_check(is(r, 0), "%s: dtd lives on: GSTATS works (%s)", e, ename(r));
	close(fd);
	/* And a new open too. */
	if ((fd = itest_open(it)) == -1)
		return;
	r = dtioc(fd, DTIOCGSTATS, &dtst, bsd);
	dtt_check(is(r, 0) && dtst.dtst_readevt == 0, "%s: a fresh open works, "
	    "readevt 0 (%s)", e, ename(r));
	close(fd);
}

/* Something in this executable's text, and in its writable data. */
static int __attribute__((noinline))
rdvn_target(int x)
{
	return x * 3 + 1;
}
static volatile int	rdvn_data = 42;

/* The /proc/self/maps entry holding va: 0 or ENOENT. */
static int
rdvn_maps(uintptr_t va, uintmax_t *start, uintmax_t *off, char *path,
    size_t len)
{
	char line[4096], file[4096];
	uintmax_t s, e, o;
	FILE *fp;
	int n;

	if ((fp = fopen("/proc/self/maps", "re")) == NULL)
		return errno;
	while (fgets(line, sizeof(line), fp) != NULL) {
		file[0] = '\0';
		n = sscanf(line, "%jx-%jx %*s %jx %*s %*s %4095[^\n]", &s, &e,
		    &o, file);
		if (n >= 3 && va >= s && va < e) {
			fclose(fp);
			*start = s;
			*off = o;
			snprintf(path, len, "%s", file);
			return 0;
		}
	}
	fclose(fp);
	return ENOENT;
}

void
itest_rdvnode(struct itest *it, bool bsd)
{
	struct dtioc_rdvn dtrv;
	const char *e = encname(bsd);
	uintmax_t start = 0, off = 0;
	char path[4096], buf[32];
	struct stat st;
	long pidmax = 4194304;
	FILE *fp;
	int fd, r, stackvar = 0;

	if ((fd = itest_open(it)) == -1)
		return;
	(void)rdvn_target(rdvn_data);

	memset(&dtrv, 0, sizeof(dtrv));
	dtrv.dtrv_pid = getpid();
	dtrv.dtrv_va = (caddr_t)(uintptr_t)rdvn_target;
	r = dtioc(fd, DTIOCRDVNODE, &dtrv, bsd);
	dtt_check(is(r, 0), "%s: RDVNODE own text (%s)", e, ename(r));
	if (r == 0 && rdvn_maps((uintptr_t)rdvn_target, &start, &off, path,
	    sizeof(path)) == 0 && stat(path, &st) == 0) {
		dtt_check((uintmax_t)(uintptr_t)dtrv.dtrv_start == start &&
		    (uintmax_t)(uintptr_t)dtrv.dtrv_offset == off &&
		    dtrv.dtrv_len == (size_t)st.st_size,
		    "%s: RDVNODE start %p offset %p len %zu match maps "
		    "(%#jx %#jx %jd)", e, (void *)dtrv.dtrv_start,
		    (void *)dtrv.dtrv_offset, dtrv.dtrv_len, start, off,
		    (intmax_t)st.st_size);
	} else if (r == 0)
		dtt_check(false, "%s: cannot find own text in /proc/self/maps", e);

	if ((fp = fopen("/proc/sys/kernel/pid_max", "re")) != NULL) {
		if (fgets(buf, sizeof(buf), fp) != NULL)
			pidmax = atol(buf);
		fclose(fp);
	}
	/* Pids run below pid_max: that one never exists. */
	memset(&dtrv, 0, sizeof(dtrv));
	dtrv.dtrv_pid = (pid_t)pidmax;
	dtrv.dtrv_va = (caddr_t)(uintptr_t)rdvn_target;
	r = dtioc(fd, DTIOCRDVNODE, &dtrv, bsd);
	dtt_check(is(r, ESRCH), "%s: RDVNODE pid %ld: ESRCH (%s)", e, pidmax,
	    ename(r));

	dtrv.dtrv_pid = getpid();
	dtrv.dtrv_va = (caddr_t)(uintptr_t)0x1000;
	r = dtioc(fd, DTIOCRDVNODE, &dtrv, bsd);
	dtt_check(is(r, ENOENT), "%s: RDVNODE unmapped address: ENOENT (%s)", e,
	    ename(r));
	dtrv.dtrv_va = (caddr_t)(uintptr_t)&rdvn_data;
	r = dtioc(fd, DTIOCRDVNODE, &dtrv, bsd);
	dtt_check(is(r, ENOENT), "%s: RDVNODE writable data: ENOENT (%s)", e,
	    ename(r));
	dtrv.dtrv_va = (caddr_t)(uintptr_t)&stackvar;
	r = dtioc(fd, DTIOCRDVNODE, &dtrv, bsd);
	dtt_check(is(r, ENOENT), "%s: RDVNODE stack: ENOENT (%s)", e, ename(r));
	close(fd);
}
