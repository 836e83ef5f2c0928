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
 * syscall_deep DTD DTRUN TRACEE
 *
 * Deep user stacks of the syscall provider (DTEVT_DEEPSTACK, dtvar.h;
 * udt_rec_more, udt_wire.h).  TRACEE (deep_getppid) recurses 40 deep
 * and calls getppid there 3 times.  Two opens of the device record
 * syscall:getppid:entry with user stacks: one asks for deep stacks and
 * gets each stack whole, its first 19 frames in the event and the rest
 * in the continuation records after it (all 40 levels, and main below);
 * the other asks as OpenBSD's btrace does and gets exactly 19 frames and
 * no continuation record, the same 19.
 *
 * Then a fake tracee (this process, through the ingest socket) commits
 * deep records, good and forged: a record whose continuation slots are
 * whole arrives whole; one that claims more frames than UDT_DEEP_MAX is
 * garbage; one whose slots are missing, out of order or of another
 * probe arrives with its first 19 frames, its stray slots garbage; a
 * lone pad slot is skipped.  dtd lives on.
 */
#include <sys/mman.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "syscall_util.h"

#define DEPTH	40
#define TIMES	3
#define NEV	4096

/* One event of an open with its whole user stack. */
struct deep {
	struct dt_evt	d_ev;
	unsigned int	d_n;		/* frames in d_pc */
	uint64_t	d_pc[DTEV_DEEP_MAX];
	unsigned int	d_nmore;	/* continuation records seen */
	int		d_zero;		/* the last one's unused words 0 */
};

struct seen {
	struct deep	s_d[16];
	int		s_n;
	int		s_stray;	/* continuation records unclaimed */
};

static struct dt_evt	evs[NEV];

/*
 * Events of pid for pbn read from fd until want arrived, with their
 * continuation records gathered per CPU (dtvar.h: they follow their
 * event among that CPU's records).
 */
static void
collect(int fd, pid_t pid, uint32_t pbn, int want, struct seen *s)
{
	struct deep *pend[256] = { NULL };
	struct deep *d;
	const uint64_t *pcs;
	unsigned int cpu, i;
	long n, k;

	memset(s, 0, sizeof(*s));
	while (s->s_n < want && (n = dtt_read(fd, evs, NEV, 10000)) > 0)
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];

			cpu = ev->dtev_cpu % 256;
			if (ev->dtev_pid != pid ||
			    (ev->dtev_pbn & ~DTEV_PBN_MORE) != pbn)
				continue;
			if (!(ev->dtev_pbn & DTEV_PBN_MORE)) {
				pend[cpu] = NULL;
				if (s->s_n == 16)
					continue;
				d = &s->s_d[s->s_n++];
				d->d_ev = *ev;
				d->d_n = ev->dtev_ustack.st_count <
				    STACKTRACE_MAX ? ev->dtev_ustack.st_count :
				    STACKTRACE_MAX;
				for (i = 0; i < d->d_n; i++)
					d->d_pc[i] = ev->dtev_ustack.st_pc[i];
				d->d_zero = 1;
				if (ev->dtev_ustack.st_count > STACKTRACE_MAX)
					pend[cpu] = d;
				continue;
			}
			if ((d = pend[cpu]) == NULL) {
				s->s_stray++;
				continue;
			}
			d->d_nmore++;
			pcs = DTEV_MORE_PCS(ev);
			for (i = 0; i < DTEV_MORE_NPC; i++) {
				if (d->d_n < d->d_ev.dtev_ustack.st_count &&
				    d->d_n < DTEV_DEEP_MAX)
					d->d_pc[d->d_n++] = pcs[i];
				else if (pcs[i] != 0)
					d->d_zero = 0;
			}
			if (d->d_n >= d->d_ev.dtev_ustack.st_count)
				pend[cpu] = NULL;
		}
}

/* How often the stack's most frequent return address appears. */
static unsigned int
maxrepeat(const struct deep *d)
{
	unsigned int i, j, c, best = 0;

	for (i = 0; i < d->d_n; i++) {
		for (c = 0, j = 0; j < d->d_n; j++)
			if (d->d_pc[j] == d->d_pc[i])
				c++;
		if (c > best)
			best = c;
	}
	return best;
}

static void
real_tracee(struct dtt_dtd *dd, int fd, int fd2, uint32_t pbn,
    const char *dtrun, const char *tracee)
{
	static struct seen s1, s2;
	char depth[16], times[16];
	char *targv[7];
	FILE *out;
	pid_t tpid;
	int i, ok = 1;

	dtt_tag("tracee");
	snprintf(depth, sizeof(depth), "%d", DEPTH);
	snprintf(times, sizeof(times), "%d", TIMES);
	targv[0] = (char *)dtrun;
	targv[1] = "-s";
	targv[2] = dd->dd_sock;
	targv[3] = (char *)tracee;
	targv[4] = depth;
	targv[5] = times;
	targv[6] = NULL;
	if (!dtt_check((out = st_spawn_out(targv, &tpid)) != NULL,
	    "spawn the tracee"))
		return;
	fclose(out);
	dtt_check(dtt_exited0(dtt_stop(tpid, 0, DTT_EXIT_MS)),
	    "the tracee exits 0");
	collect(fd, tpid, pbn, TIMES, &s1);
	collect(fd2, tpid, pbn, TIMES, &s2);
	dtt_check(s1.s_n == TIMES && s2.s_n == TIMES,
	    "%d getppid entries each (%d deep, %d plain)", TIMES, s1.s_n,
	    s2.s_n);
	for (i = 0; i < s1.s_n; i++) {
		const struct deep *d = &s1.s_d[i];

		/* 40 levels, main, libc's start; far below DTEV_DEEP_MAX */
		ok &= dtt_check(d->d_ev.dtev_ustack.st_count >= DEPTH + 2 &&
		    d->d_ev.dtev_ustack.st_count < DTEV_DEEP_MAX &&
		    d->d_n == d->d_ev.dtev_ustack.st_count &&
		    d->d_nmore == DTEV_MORE_RECS(0, d->d_n) && d->d_zero,
		    "deep %d: %u frames, %u continuation records, all there",
		    i, d->d_ev.dtev_ustack.st_count, d->d_nmore);
		/* the recursion's return address, once per level but one */
		ok &= dtt_check(maxrepeat(d) == DEPTH - 1,
		    "deep %d: the recursive call's return address %u times "
		    "(%d)", i, maxrepeat(d), DEPTH - 1);
	}
	dtt_check(s1.s_stray == 0, "no stray continuation record");
	for (i = 0; i < s2.s_n; i++) {
		const struct deep *d = &s2.s_d[i];

		ok &= dtt_check(d->d_ev.dtev_ustack.st_count ==
		    STACKTRACE_MAX && d->d_nmore == 0,
		    "plain %d: exactly %u frames (%u)", i,
		    d->d_ev.dtev_ustack.st_count, STACKTRACE_MAX);
		ok &= dtt_check(i >= s1.s_n || memcmp(d->d_pc, s1.s_d[i].d_pc,
		    STACKTRACE_MAX * sizeof(uint64_t)) == 0,
		    "plain %d: the deep stack's first 19", i);
	}
	dtt_check(s2.s_stray == 0, "no continuation record for OpenBSD");
	(void)ok;
	dtt_tag(NULL);
}

/* The fake tracee's ring and next ticket. */
struct fake {
	struct udt_ring_hdr	*f_ring;
	uint64_t		 f_ticket;
	uint16_t		 f_probe;
};

static void *
fake_slot(struct fake *f, uint64_t t)
{
	return (char *)f->f_ring + UDT_RING_HDRSIZE +
	    (t % f->f_ring->rh_nslots) * UDT_SLOT_SIZE;
}

/*
 * Commit n slots at once, as a producer's one reservation: their bodies
 * (from bytes 8 on), then each one's sequence, the first last, as the
 * hook commits its record after its other slots.
 */
static void
fake_put(struct fake *f, const void *slots, unsigned int n)
{
	uint64_t t = f->f_ticket;
	unsigned int i;

	for (i = 0; i < n; i++)
		memcpy((char *)fake_slot(f, t + i) + 8,
		    (const char *)slots + i * UDT_SLOT_SIZE + 8,
		    UDT_SLOT_SIZE - 8);
	__atomic_store_n(&f->f_ring->rh_head, t + n, __ATOMIC_RELAXED);
	for (i = n; i-- > 0;)
		__atomic_store_n((uint64_t *)fake_slot(f, t + i), t + i + 1,
		    __ATOMIC_RELEASE);
	f->f_ticket = t + n;
}

/*
 * A record with nframes frames (mark << 16) + i, and its slots, in buf
 * (getppid has no argument to carry a mark).
 */
static unsigned int
fake_deep(struct fake *f, void *buf, unsigned int nframes, int64_t mark)
{
	struct udt_rec *r = buf;
	struct udt_rec_more *m;
	struct timespec ts;
	unsigned int i, k, ns;

	ns = UDT_MORE_SLOTS(nframes);
	memset(buf, 0, (1 + ns) * UDT_SLOT_SIZE);
	clock_gettime(CLOCK_REALTIME, &ts);
	r->ur_probe = f->f_probe;
	r->ur_flags = UDT_R_ARGS | (nframes > 0 ? UDT_R_STACK : 0);
	r->ur_nframes = (uint8_t)nframes;
	r->ur_tid = gettid();
	r->ur_sec = ts.tv_sec;
	r->ur_nsec = ts.tv_nsec;
	for (i = 0; i < nframes && i < UDT_STACK_MAX; i++)
		r->ur_stack[i] = ((uint64_t)mark << 16) + i;
	for (k = 0; k < ns; k++) {
		m = (struct udt_rec_more *)(void *)((char *)buf +
		    (1 + k) * UDT_SLOT_SIZE);
		m->um_probe = f->f_probe;
		m->um_flags = UDT_R_STKDATA;
		m->um_idx = (uint8_t)k;
		for (i = 0; i < UDT_MORE_NPC; i++)
			if (UDT_STACK_MAX + k * UDT_MORE_NPC + i < nframes)
				m->um_pc[i] = ((uint64_t)mark << 16) +
				    UDT_STACK_MAX + k * UDT_MORE_NPC + i;
	}
	return 1 + ns;
}

/* Whether d is mark's event with n frames (mark << 16) + i. */
static int
fake_is(const struct deep *d, int64_t mark, unsigned int n)
{
	unsigned int i;

	if (d->d_ev.dtev_ustack.st_count != n || d->d_n != n)
		return 0;
	for (i = 0; i < n; i++)
		if (d->d_pc[i] != ((uint64_t)mark << 16) + i)
			return 0;
	return 1;
}

static void
forged(struct dtt_dtd *dd, int fd, int fd2, uint32_t pbn, uint32_t nsys,
    uint32_t first)
{
	static struct seen s1, s2;
	static uint64_t buf[(1 + UDT_MORE_MAXSLOTS + 1) * UDT_SLOT_SIZE / 8];
	struct udt_welcome w;
	struct udt_stats us0, us1;
	struct udt_rec_more *m;
	struct fake f;
	unsigned int n;
	int fds[2] = { -1, -1 }, sock;

	dtt_tag("forged");
	memset(&us0, 0, sizeof(us0));
	if (!dtt_check(st_ingest_stats(dd->dd_sock, &us0) == 0,
	    "ingest counters"))
		return;
	if (!dtt_check((sock = dtt_tracee_hello(dd->dd_sock, nsys, &w,
	    fds)) != -1, "fake tracee's hello"))
		return;
	f.f_ring = dtt_ring_map(fds[0], &w);
	f.f_ticket = 0;
	f.f_probe = (uint16_t)(pbn - first);
	if (!dtt_check(f.f_ring != NULL, "its ring mapped"))
		goto out;

	/* 1: whole, 50 frames in the record and 2 slots */
	n = fake_deep(&f, buf, 50, 1);
	fake_put(&f, buf, n);
	/* 2: more than UDT_DEEP_MAX: garbage, whatever follows */
	n = fake_deep(&f, buf, 50, 2);
	((struct udt_rec *)(void *)buf)->ur_nframes = UDT_DEEP_MAX + 1;
	fake_put(&f, buf, 1);
	((struct udt_rec *)(void *)buf)->ur_nframes = 255;
	fake_put(&f, buf, 1);
	/* 3: its second slot says it is the first: 19 frames, 2 garbage */
	n = fake_deep(&f, buf, 60, 3);
	m = (struct udt_rec_more *)(void *)((char *)buf + 2 * UDT_SLOT_SIZE);
	m->um_idx = 0;
	fake_put(&f, buf, n);
	/* 4: its slots never written: 19 frames, the next record whole */
	n = fake_deep(&f, buf, 60, 4);
	fake_put(&f, buf, 1);
	/* 5: its slot is another probe's: 19 frames, 1 garbage */
	n = fake_deep(&f, buf, 30, 5);
	m = (struct udt_rec_more *)(void *)((char *)buf + UDT_SLOT_SIZE);
	m->um_probe = (uint16_t)(f.f_probe + 2);
	fake_put(&f, buf, n);
	/* 6: a pad alone, as a hook leaves unused: skipped, not garbage */
	memset(buf, 0, UDT_SLOT_SIZE);
	m = (struct udt_rec_more *)(void *)buf;
	m->um_probe = f.f_probe;
	m->um_flags = UDT_R_STKPAD;
	fake_put(&f, buf, 1);
	/* 7: whole at UDT_DEEP_MAX, the last one */
	n = fake_deep(&f, buf, UDT_DEEP_MAX, 7);
	fake_put(&f, buf, n);

	collect(fd, getpid(), pbn, 5, &s1);
	collect(fd2, getpid(), pbn, 5, &s2);
	dtt_check(s1.s_n == 5 && s2.s_n == 5,
	    "5 events of the fake tracee each (%d deep, %d plain)",
	    s1.s_n, s2.s_n);
	if (s1.s_n == 5) {
		dtt_check(fake_is(&s1.s_d[0], 1, 50) && s1.s_d[0].d_zero,
		    "whole: 50 frames, each in place");
		dtt_check(fake_is(&s1.s_d[1], 3, 19) &&
		    fake_is(&s1.s_d[2], 4, 19) && fake_is(&s1.s_d[3], 5, 19),
		    "forged slots: the first 19 frames, nothing past them");
		dtt_check(fake_is(&s1.s_d[4], 7, UDT_DEEP_MAX),
		    "whole at %d frames", UDT_DEEP_MAX);
	}
	if (s2.s_n == 5)
		dtt_check(fake_is(&s2.s_d[0], 1, 19) &&
		    fake_is(&s2.s_d[4], 7, 19) && s2.s_stray == 0,
		    "OpenBSD's open: 19 frames of each, no continuation");
	/* Fetched first: argument evaluation order is unspecified. */
	memset(&us1, 0, sizeof(us1));
	if (st_ingest_stats(dd->dd_sock, &us1) != 0)
		memset(&us1, 0, sizeof(us1));
	dtt_check(us1.us_garbage - us0.us_garbage == 2 + 2 + 1 &&
	    us1.us_records - us0.us_records == 5,
	    "ingest: %llu more records (5), %llu more garbage (5); dtd lives",
	    (unsigned long long)(us1.us_records - us0.us_records),
	    (unsigned long long)(us1.us_garbage - us0.us_garbage));
	munmap(f.f_ring, UDT_RING_SIZE(f.f_ring->rh_nslots));
out:
	close(fds[0]);
	close(fds[1]);
	close(sock);
	dtt_tag(NULL);
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	uint32_t pbn, nsys, first = 0;
	size_t npi;
	int fd = -1, fd2 = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: syscall_deep DTD DTRUN TRACEE\n");
		return 2;
	}
	if (st_setup(&dd, "udt-deep", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	fd2 = dtt_open(dd.dd_dev);
	pbn = dtt_pbn(pi, npi, "syscall", "sys%39", "entry");	/* getppid */
	nsys = dtt_nsys(pi, npi, &first);
	if (!dtt_check(fd2 >= 0 && pbn != 0 && nsys != 0,
	    "second open, syscall:getppid:entry") ||
	    !dtt_check(dtt_enable(fd, pbn, DTEVT_USTACK | DTEVT_DEEPSTACK |
	    DTEVT_FUNCARGS, 0) == 0 && dtt_enable(fd2, pbn, DTEVT_USTACK |
	    DTEVT_FUNCARGS, 0) == 0 && dtt_record(fd, 1) == 0 &&
	    dtt_record(fd2, 1) == 0, "recording, deep and as OpenBSD"))
		goto out;
	real_tracee(&dd, fd, fd2, pbn, argv[2], argv[3]);
	forged(&dd, fd, fd2, pbn, nsys, first);
out:
	free(pi);
	if (fd2 >= 0)
		close(fd2);
	st_teardown(&dd, fd);
	return dtt_done();
}
