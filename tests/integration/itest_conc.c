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
 * Opens that must not see each other, reads that signals and shutdown
 * end, and OpenBSD's ring capacity.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static int
enable(int fd, uint32_t pbn, uint64_t nsecs)
{
	struct dtioc_req dtrq;

	memset(&dtrq, 0, sizeof(dtrq));
	dtrq.dtrq_pbn = pbn;
	dtrq.dtrq_nsecs = nsecs;
	return dtioc(fd, DTIOCPRBENABLE, &dtrq, false);
}

static int
record(int fd, int on)
{
	return dtioc(fd, DTIOCRECORD, &on, false);
}

static uint64_t
readevt(int fd)
{
	struct dtioc_stat dtst;

	if (dtioc(fd, DTIOCGSTATS, &dtst, false) != 0)
		return UINT64_MAX;
	return dtst.dtst_readevt;
}

/*
 * A read that gets nothing must block until the signal that ends it
 * with EINTR, at once.  Returns whether it did; *late is how long after
 * the signal the read returned.
 */
static bool
read_until_signal(int fd, unsigned int ms, uint64_t *late)
{
	static char buf[64 * sizeof(struct dt_evt)];
	uint64_t t0, t1;
	ssize_t n;
	int error;

	itest_alarms = 0;
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	arm(ms);
	n = read(fd, buf, sizeof(buf));
	error = errno;
	t1 = dtt_clock_ns(CLOCK_MONOTONIC);
	disarm();
	*late = t1 - t0 > ms * NSEC_PER_MSEC ? t1 - t0 - ms * NSEC_PER_MSEC :
	    0;
	return n == -1 && error == EINTR && itest_alarms > 0;
}

void
itest_concurrent(struct itest *it)
{
	struct dt_evt evs[64];
	uint64_t late = 0, ra;
	long na, nb;
	int a, b;

	if ((a = itest_open(it)) == -1)
		return;
	if ((b = itest_open(it)) == -1) {
		close(a);
		return;
	}
	dtt_check(enable(a, it->it_interval, 20 * NSEC_PER_MSEC) == 0 &&
	    record(a, 1) == 0, "two opens: A enables interval, records");
	/* Per open: neither EEXIST nor EBUSY from A's state. */
	dtt_check(enable(b, it->it_interval, 50 * NSEC_PER_MSEC) == 0,
	    "two opens: B enables the same probe while A records");
	na = read_events(a, evs, 64, 3, sizeof(evs), 10000);
	dtt_check(na >= 3, "two opens: A reads its events (%ld)", na);
	dtt_check(read_until_signal(b, 300, &late),
	    "two opens: B, not recording, gets none (its read blocks)");
	ra = readevt(a);
	dtt_check(ra == (uint64_t)na, "two opens: A's readevt %llu == %ld",
	    (unsigned long long)ra, na);
	dtt_check(readevt(b) == 0, "two opens: B's readevt 0");
	dtt_check(record(a, 0) == 0, "two opens: A stops");
	dtt_check(record(b, 1) == 0, "two opens: B records now");
	nb = read_events(b, evs, 64, 2, sizeof(evs), 10000);
	dtt_check(nb >= 2, "two opens: B reads its own events (%ld)", nb);
	dtt_check(record(b, 0) == 0 && readevt(a) == ra &&
	    readevt(b) == (uint64_t)nb,
	    "two opens: counters stayed apart (A %llu, B %llu)",
	    (unsigned long long)readevt(a), (unsigned long long)readevt(b));
	close(a);
	close(b);
}

void
itest_eintr(struct itest *it)
{
	struct dt_evt evs[8];
	uint64_t late = 0;
	long n;
	int fd;

	if ((fd = itest_open(it)) == -1)
		return;
	dtt_check(read_until_signal(fd, 200, &late) &&
	    late < 500 * NSEC_PER_MSEC,
	    "EINTR: a blocked read ends with EINTR %llu ms after SIGALRM",
	    (unsigned long long)(late / NSEC_PER_MSEC));
	/* Twice: the first interrupt left nothing behind. */
	dtt_check(read_until_signal(fd, 100, &late) &&
	    late < 500 * NSEC_PER_MSEC,
	    "EINTR: again, %llu ms late", (unsigned long long)(late /
	    NSEC_PER_MSEC));
	dtt_check(readevt(fd) == 0, "EINTR: GSTATS still answers");
	dtt_check(enable(fd, it->it_interval, 10 * NSEC_PER_MSEC) == 0 &&
	    record(fd, 1) == 0, "EINTR: the open still enables and records");
	n = read_events(fd, evs, 8, 2, sizeof(evs), 10000);
	dtt_check(n >= 2, "EINTR: and reads events afterwards (%ld)", n);
	record(fd, 0);
	close(fd);
}

/* poll(2) of fd for ms: its revents, or -1 with errno. */
static int
poll_in(int fd, int ms)
{
	struct pollfd pfd = { fd, POLLIN | POLLOUT, 0 };
	int n;

	n = poll(&pfd, 1, ms);
	return n == -1 ? -1 : n == 0 ? 0 : pfd.revents;
}

/*
 * poll(2), userdt's: readable exactly when a read would not block,
 * never writable, and a poller waiting for the first record is woken
 * by it.
 */
void
itest_poll(struct itest *it)
{
	static struct dt_evt buf[64];
	uint64_t t0, t1;
	ssize_t n;
	int fd, r;

	if ((fd = itest_open(it)) == -1)
		return;
	dtt_check(poll_in(fd, 0) == 0, "poll: a new open is not readable");
	/* Not waitable: that nothing comes is what is checked. */
	dtt_check(poll_in(fd, 200) == 0, "poll: nor after 200 ms");
	if (!dtt_check(enable(fd, it->it_interval, 100 * NSEC_PER_MSEC) ==
	    0 && record(fd, 1) == 0, "poll: interval at 100 ms recording"))
		goto out;
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	r = poll_in(fd, 10000);
	t1 = dtt_clock_ns(CLOCK_MONOTONIC);
	dtt_check(r == (POLLIN | POLLRDNORM) || r == POLLIN,
	    "poll: the first record wakes the poller, readable, not "
	    "writable (revents %#x after %llu ms)", (unsigned)r,
	    (unsigned long long)((t1 - t0) / NSEC_PER_MSEC));
	arm(10000);
	n = read(fd, buf, sizeof(buf));
	disarm();
	dtt_check(n > 0 && n % sizeof(struct dt_evt) == 0,
	    "poll: and a read gets it (%zd bytes)", n);
	/* Stopped and read dry: not readable any more. */
	record(fd, 0);
	while (poll_in(fd, 0) > 0) {
		arm(10000);
		n = read(fd, buf, sizeof(buf));
		disarm();
		if (n <= 0)
			break;
	}
	dtt_check(poll_in(fd, 0) == 0, "poll: read dry, not readable");
out:
	close(fd);
}

/*
 * A read(2) bigger than one FUSE request, with more records pending than
 * fit in one: the kernel splits it, and a second request would block
 * with records already copied.  It must return whole records at once.
 */
void
itest_bigread(struct itest *it)
{
	struct timespec ts = { 0, 700 * 1000 * 1000 };
	/*
	 * Page-aligned, so the kernel's first request is 1 MiB exactly,
	 * which no whole number of records fills: the reply is short and
	 * the read ends there.  At some offsets (232 bytes into a page) the
	 * first request would be 2299 records exactly, a full reply, and
	 * the kernel would go on to a second request: where this buffer
	 * fell once depended on the size of the code linked before it.
	 */
	static char buf[4 * 1024 * 1024] __attribute__((aligned(4096)));
	struct dt_evt ev;
	uint64_t t0, t1;
	ssize_t n;
	int fd, error;

	if ((fd = itest_open(it)) == -1)
		return;
	if (!dtt_check(enable(fd, it->it_interval, 200 * 1000) == 0 &&
	    record(fd, 1) == 0, "big read: interval at 200 us recording"))
		goto out;
	dtt_check(read_events(fd, &ev, 1, 1, sizeof(ev), 10000) == 1,
	    "big read: first record");
	/* Not waitable: let a few thousand periods pass unread. */
	nanosleep(&ts, NULL);
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	arm(10000);
	n = read(fd, buf, sizeof(buf));
	error = errno;
	disarm();
	t1 = dtt_clock_ns(CLOCK_MONOTONIC);
	dtt_check(n > 0 && n % sizeof(struct dt_evt) == 0 && n <= 1024 * 1024,
	    "big read: 4 MiB buffer got %zd bytes (%zd records) in %llu ms%s%s",
	    n, n > 0 ? n / (ssize_t)sizeof(struct dt_evt) : 0,
	    (unsigned long long)((t1 - t0) / NSEC_PER_MSEC),
	    n == -1 ? ": " : "", n == -1 ? strerror(error) : "");
	record(fd, 0);
out:
	close(fd);
}

struct thr_arg {
	struct itest	*ta_it;
	int		 ta_fd;
	size_t		 ta_n;		/* probes listed */
	int		 ta_gstats;	/* errno of GSTATS */
	struct dtioc_stat ta_dtst;
};

static void *
thr_main(void *arg)
{
	struct thr_arg *ta = arg;
	struct dtioc_probe_info *pi;

	pi = itest_plist(ta->ta_fd, false, &ta->ta_n);
	free(pi);
	memset(&ta->ta_dtst, 0xff, sizeof(ta->ta_dtst));
	ta->ta_gstats = dtioc(ta->ta_fd, DTIOCGSTATS, &ta->ta_dtst, true);
	return NULL;
}

/*
 * The FUSE-file front end reaches the caller's memory through the
 * calling thread's id: a thread other than the main one must work too.
 */
void
itest_thread(struct itest *it)
{
	struct thr_arg ta;
	pthread_t thr;
	int fd;

	if ((fd = itest_open(it)) == -1)
		return;
	memset(&ta, 0, sizeof(ta));
	ta.ta_it = it;
	ta.ta_fd = fd;
	if (!dtt_check(pthread_create(&thr, NULL, thr_main, &ta) == 0,
	    "thread: started"))
		goto out;
	pthread_join(thr, NULL);
	dtt_check(ta.ta_n == it->it_nprobes, "thread: GPLIST from a second "
	    "thread (%zu probes)", ta.ta_n);
	dtt_check(ta.ta_gstats == 0 && ta.ta_dtst.dtst_readevt == 0 &&
	    ta.ta_dtst.dtst_dropevt == 0, "thread: GSTATS (OpenBSD number) "
	    "written into a second thread's stack");
out:
	close(fd);
}

/*
 * With --ring-size 16 an open holds at most 15 unread events per CPU;
 * interval fires on CPU 0 only, so 15 in all, and the rest are drops.
 */
void
itest_ring16(struct itest *it)
{
	struct timespec ts = { 0, 1000 * 1000 };	/* a period */
	struct dtioc_stat dtst;
	struct dt_evt evs[64];
	long n1, n2;
	int fd, r, i;

	if ((fd = itest_open(it)) == -1)
		return;
	dtt_check(enable(fd, it->it_interval, NSEC_PER_MSEC) == 0 &&
	    record(fd, 1) == 0, "ring16: interval at 1 ms recording");
	n1 = read_events(fd, evs, 64, 1, sizeof(struct dt_evt), 10000);
	dtt_check(n1 == 1, "ring16: one record read (%ld)", n1);
	/* Unread until the ring is full: the first drop says so. */
	for (i = 0; i < 10000; i++) {
		memset(&dtst, 0, sizeof(dtst));
		if (dtioc(fd, DTIOCGSTATS, &dtst, false) != 0 ||
		    dtst.dtst_dropevt > 0)
			break;
		nanosleep(&ts, NULL);
	}
	dtt_check(record(fd, 0) == 0, "ring16: RECORD 0");
	n2 = read_events(fd, evs, 64, 1, sizeof(evs), 10000);
	dtt_check(n2 == 15, "ring16: the ring held 15 events (%ld)", n2);
	memset(&dtst, 0, sizeof(dtst));
	r = dtioc(fd, DTIOCGSTATS, &dtst, false);
	dtt_check(r == 0 &&
	    dtst.dtst_readevt == (uint64_t)(n1 + n2) &&
	    dtst.dtst_dropevt > 0, "ring16: readevt %llu, dropevt %llu > 0",
	    (unsigned long long)dtst.dtst_readevt,
	    (unsigned long long)dtst.dtst_dropevt);
	close(fd);
}

/*
 * For the shutdown check: block in read(2) on an open with nothing
 * enabled until dtd goes away.  Exit 0 if the read failed (as it must),
 * 1 if it returned anything, 2 if it could not start.
 */
int
itest_block_read(const char *dev)
{
	struct itest it = { .it_dev = dev };
	static char buf[64 * sizeof(struct dt_evt)];
	ssize_t n;
	int fd;

	if ((fd = itest_open(&it)) == -1)
		return 2;
	printf("reading\n");
	fflush(stdout);
	n = read(fd, buf, sizeof(buf));
	if (n == -1) {
		printf("read failed: %s\n", strerror(errno));
		return 0;
	}
	printf("read returned %zd\n", n);
	return 1;
}
