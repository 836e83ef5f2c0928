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
 * ring_fuzz DTD [SEED [ROUNDS]]
 *
 * dtd against a hostile tracee.  The test connects to a private dtd's
 * ingest socket as a traced process would, receives its ring, and then:
 *  1. checks the table is read-only and the ring cannot be shrunk;
 *  2. commits records that are valid or broken in one random way each,
 *     some claiming another process's tid (init's: discarded, counted
 *     as misnamed), some with a strings slot of
 *     random bytes (never in an event: getpid reads no string), some
 *     such slots alone (garbage), some with a deep user stack's
 *     continuation slots (udt_rec_more), whole or one of them forged
 *     (the record arrives, its slots are garbage), some pads alone
 *     (skipped, neither): dtd must emit exactly the
 *     valid ones, stamped with our pid, and count the rest as garbage;
 *     a reserved slot left uncommitted must be skipped, not wait forever;
 *  3. overwrites the whole ring, header included, with random bytes for
 *     ROUNDS rounds, and sends random handshakes;
 *  4. proves dtd still serves: a second fake tracee's valid record
 *     arrives, the counters answer, and dtd exits 0 on SIGTERM.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NRECS	4000

struct fake {
	int			 f_sock;
	struct udt_ring_hdr	*f_ring;
	uint32_t		 f_nslots;
	uint64_t		 f_ticket;	/* next ticket to write */
	uint32_t		 f_wflags;	/* udt_welcome.uw_flags */
	int			 f_ringfd, f_tabfd;
};

static uint64_t	rng_state;
static uint32_t	nsysprobes;	/* 2 * calls of the syscall provider */
static uint32_t	getpid_entry;	/* provider-local index */
static pid_t	mytid;

static uint64_t
rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static int
fake_connect(const char *sock, struct fake *f)
{
	struct udt_welcome w;
	int fds[2];

	memset(f, 0, sizeof(*f));
	if ((f->f_sock = dtt_tracee_hello(sock, nsysprobes, &w, fds)) < 0)
		return -1;
	f->f_ringfd = fds[0];
	f->f_tabfd = fds[1];
	f->f_nslots = w.uw_nslots;
	f->f_wflags = w.uw_flags;
	f->f_ring = dtt_ring_map(fds[0], &w);
	return f->f_ring == NULL ? -1 : 0;
}

static struct udt_rec *
slot(struct fake *f, uint64_t t)
{
	return (struct udt_rec *)(void *)((char *)f->f_ring +
	    UDT_RING_HDRSIZE + (t % f->f_nslots) * UDT_SLOT_SIZE);
}

static void
valid_rec(struct udt_rec *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(r, 0, sizeof(*r));
	r->ur_probe = (uint16_t)getpid_entry;
	r->ur_flags = UDT_R_COMM;
	r->ur_tid = mytid;
	r->ur_sec = ts.tv_sec;
	r->ur_nsec = ts.tv_nsec;
	memcpy(r->ur_comm, "ring_fuzz", 10);
}

/*
 * A strings slot (udt_rec_str) of random bytes at ticket t, committed:
 * getpid reads no string, so dtd must never put any of it in an event.
 */
static void
commit_str(struct fake *f, uint64_t t)
{
	struct udt_rec_str *rs = (struct udt_rec_str *)(void *)slot(f, t);
	size_t i;

	rs->us_probe = (uint16_t)getpid_entry;
	rs->us_flags = UDT_R_STRDATA;
	for (i = 0; i < UDT_STR_SIZE; i++)
		rs->us_str[i] = (uint8_t)rnd();
	if (rnd() % 2)
		rs->us_str[0] = 1;	/* a plausible first entry */
	__atomic_store_n(&rs->us_seq, t + 1, __ATOMIC_RELEASE);
}

/*
 * A record with a deep user stack of 20 to UDT_DEEP_MAX frames and its
 * continuation slots, committed as a hook commits them (the slots
 * first); broken: one slot forged in a random way, so dtd takes none of
 * them.  Returns the garbage dtd must count: the slots it cannot take,
 * but for pads, which it skips.
 */
static long
commit_deep(struct fake *f, int broken)
{
	struct udt_rec r, *s = slot(f, f->f_ticket);
	struct udt_rec_more *m;
	unsigned int nf, ns, k, i, bad;
	long garbage = 0;

	valid_rec(&r);
	nf = UDT_STACK_MAX + 1 + (unsigned int)(rnd() % (UDT_DEEP_MAX -
	    UDT_STACK_MAX));
	ns = UDT_MORE_SLOTS(nf);
	r.ur_flags |= UDT_R_STACK;
	r.ur_nframes = (uint8_t)nf;
	for (i = 0; i < UDT_STACK_MAX; i++)
		r.ur_stack[i] = rnd();
	bad = broken ? (unsigned int)(rnd() % ns) : ns;
	for (k = 0; k < ns; k++) {
		m = (struct udt_rec_more *)(void *)slot(f, f->f_ticket + 1 + k);
		m->um_probe = (uint16_t)getpid_entry;
		m->um_flags = UDT_R_STKDATA;
		m->um_idx = (uint8_t)k;
		for (i = 0; i < UDT_MORE_NPC; i++)
			m->um_pc[i] = rnd();
		if (k == bad)
			switch (rnd() % 4) {
			case 0:
				m->um_idx = (uint8_t)(k + 1 + rnd() % 200);
				break;
			case 1:
				m->um_probe ^= (uint16_t)(1 + rnd() % 0xfffe);
				break;
			case 2:
				m->um_flags = UDT_R_STKPAD;
				break;
			default:
				m->um_flags = (uint8_t)(0x80 | rnd());
				if (m->um_flags == UDT_R_STKDATA)
					m->um_flags = UDT_R_STRDATA;
				break;
			}
		if (broken && m->um_flags != UDT_R_STKPAD)
			garbage++;
		__atomic_store_n(&m->um_seq, f->f_ticket + 1 + k + 1,
		    __ATOMIC_RELEASE);
	}
	r.ur_seq = 0;
	memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
	__atomic_store_n(&f->f_ring->rh_head, f->f_ticket + 1 + ns,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&s->ur_seq, f->f_ticket + 1, __ATOMIC_RELEASE);
	f->f_ticket += 1 + ns;
	return garbage;
}

/*
 * Commit one record at the next ticket; returns 1 when it is valid, 0
 * when it is garbage, COMMIT_MISNAMED when it names another process's
 * thread, COMMIT_NONE for a pad, neither.  *extra: garbage slots that
 * came with a valid record.
 */
#define COMMIT_MISNAMED	2
#define COMMIT_NONE	3
static int
commit_one(struct fake *f, int kind, long *extra)
{
	struct udt_rec r, *s = slot(f, f->f_ticket);
	int valid = 0;

	*extra = 0;
	if (kind == 15 || kind == 16) {
		/* A deep stack's record, its slots whole or one forged. */
		*extra = commit_deep(f, kind == 16);
		return 1;
	}
	if (kind == 17) {
		/* A pad alone, as a hook leaves one unused: skipped. */
		struct udt_rec_more *m = (struct udt_rec_more *)(void *)s;

		m->um_probe = (uint16_t)getpid_entry;
		m->um_flags = UDT_R_STKPAD;
		m->um_idx = (uint8_t)(rnd() % UDT_MORE_MAXSLOTS);
		__atomic_store_n(&f->f_ring->rh_head, f->f_ticket + 1,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&m->um_seq, f->f_ticket + 1,
		    __ATOMIC_RELEASE);
		f->f_ticket++;
		return COMMIT_NONE;
	}

	if (kind == 11) {
		/* A record with its strings slot: valid, two tickets. */
		valid_rec(&r);
		r.ur_flags |= UDT_R_STR;
		commit_str(f, f->f_ticket + 1);
		r.ur_seq = 0;
		memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
		__atomic_store_n(&f->f_ring->rh_head, f->f_ticket + 2,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&s->ur_seq, f->f_ticket + 1,
		    __ATOMIC_RELEASE);
		f->f_ticket += 2;
		return 1;
	}
	if (kind == 12) {
		/* A strings slot alone: garbage. */
		__atomic_store_n(&f->f_ring->rh_head, f->f_ticket + 1,
		    __ATOMIC_RELAXED);
		commit_str(f, f->f_ticket);
		f->f_ticket++;
		return 0;
	}

	valid_rec(&r);
	switch (kind) {
	case 0:
		valid = 1;
		break;
	case 1:
		/* Someone else's thread (init's): never emitted. */
		r.ur_tid = 1;
		valid = COMMIT_MISNAMED;
		break;
	case 2:
		r.ur_probe = (uint16_t)(nsysprobes + rnd() % 60000);
		break;
	case 3:
		r.ur_flags = (uint8_t)(0x10 | rnd());
		break;
	case 4:
		r.ur_flags |= UDT_R_RET;	/* return data on an entry */
		break;
	case 5:
		/* Deeper than any stack: garbage, whatever follows. */
		r.ur_flags |= UDT_R_STACK;
		r.ur_nframes = (uint8_t)(UDT_DEEP_MAX + 1 +
		    rnd() % (255 - UDT_DEEP_MAX));
		break;
	case 6:
		r.ur_cpu = (uint32_t)(1000000 + rnd() % 1000);
		break;
	case 7:
		r.ur_tid = -(int32_t)(rnd() % 1000);
		break;
	case 8:
		r.ur_nsec = 1000000000 + (int64_t)(rnd() % 1000);
		break;
	case 9:
		r.ur_probe = (uint16_t)(getpid_entry + 1);	/* return */
		r.ur_flags = UDT_R_RET;
		r.ur_error = 5000 + (int32_t)(rnd() % 1000);
		break;
	case 10:
		/* A time stamp counter value far from now. */
		r.ur_flags |= UDT_R_TSC;
		r.ur_sec = 0;
		r.ur_nsec = (int64_t)(rnd() >> 1);
		break;
	default:
		{
			uint64_t *p = (uint64_t *)(void *)&r;
			size_t i;

			for (i = 1; i < sizeof(r) / 8; i++)
				p[i] = rnd();
			/* Random bytes that happen to be valid are rare. */
			r.ur_probe = (uint16_t)(nsysprobes + 1);
		}
		break;
	}
	r.ur_seq = 0;
	memcpy((char *)s + 8, (char *)&r + 8, sizeof(r) - 8);
	__atomic_store_n(&f->f_ring->rh_head, f->f_ticket + 1,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&s->ur_seq, f->f_ticket + 1, __ATOMIC_RELEASE);
	f->f_ticket++;
	return valid;
}

/* Read until n events of ours arrived; false on timeout or a bad one. */
static bool
read_ours(int fd, long n, long *bad)
{
	struct dt_evt evs[512];
	long got = 0, k, r;

	while (got < n) {
		if ((r = dtt_read(fd, evs, 512, 10000)) < 0) {
			warn("read");
			return false;
		}
		for (k = 0; k < r; k++) {
			if (evs[k].dtev_pid != getpid() ||
			    evs[k].dtev_kstack.st_count != 0 ||
			    DTEV_STR_AREA(&evs[k])[0] != 0 ||
			    strcmp(evs[k].dtev_comm, "ring_fuzz") != 0 ||
			    evs[k].dtev_tid != mytid)
				(*bad)++;
			got++;
		}
	}
	return true;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct udt_stats us;
	struct fake f = { 0 }, g;
	size_t npi, i;
	uint32_t first, pbn;
	long nvalid = 0, ngarbage = 0, nmisnamed = 0, bad = 0, rounds, extra;
	int fd = -1, k, s, status;
	void *p;

	if (argc < 2) {
		fprintf(stderr, "usage: ring_fuzz DTD [SEED [ROUNDS]]\n");
		return 2;
	}
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) :
	    (uint64_t)time(NULL) * 2654435761u + (uint64_t)getpid();
	if (rng_state == 0)
		rng_state = 1;
	rounds = argc > 3 ? strtol(argv[3], NULL, 0) : 200;
	printf("seed %llu, %ld rounds\n", (unsigned long long)rng_state,
	    rounds);
	signal(SIGPIPE, SIG_IGN);
	mytid = gettid();

	if (st_setup(&dd, "udt-syscall", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	nsysprobes = dtt_nsys(pi, npi, &first);
	pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	getpid_entry = pbn - first;
	/* The ioctls leave errno set when they fail. */
	if (pbn == 0 || dtt_enable(fd, pbn, DTEVT_EXECNAME | DTEVT_STRINGS,
	    0) != 0 ||
	    dtt_enable(fd, pbn + 1, DTEVT_EXECNAME, 0) != 0 ||
	    dtt_record(fd, 1) != 0) {
		warn("tracing getpid");
		goto out;
	}

	k = fake_connect(dd.dd_sock, &f);
	if (!dtt_check(k == 0, "fake tracee attached, %u slots", f.f_nslots))
		goto out;
	{
		char src[32] = "";
		FILE *cs = fopen("/sys/devices/system/clocksource/"
		    "clocksource0/current_clocksource", "r");

		if (cs != NULL && fgets(src, sizeof(src), cs) == NULL)
			src[0] = '\0';
		if (cs != NULL)
			fclose(cs);
		dtt_check(((f.f_wflags & UDT_W_TSC) != 0) ==
		    (strcmp(src, "tsc\n") == 0),
		    "TSC stamps offered (%u) exactly when the clock source is"
		    " the TSC", f.f_wflags & UDT_W_TSC);
	}
	p = mmap(NULL, UDT_TAB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    f.f_tabfd, 0);
	dtt_check(p == MAP_FAILED && errno == EACCES,
	    "enable table cannot be mapped writable");
	dtt_check(ftruncate(f.f_ringfd, 0) == -1 && errno == EPERM,
	    "ring cannot be shrunk under dtd");

	/* 2. one random fault per record, the last one valid. */
	for (i = 0; i < NRECS; i++) {
		k = i == NRECS - 1 ? 0 : (int)(rnd() % 18);
		switch (commit_one(&f, k, &extra)) {
		case 1:
			nvalid++;
			break;
		case COMMIT_MISNAMED:
			nmisnamed++;
			break;
		case COMMIT_NONE:
			break;
		default:
			ngarbage++;
		}
		ngarbage += extra;
	}
	dtt_check(read_ours(fd, nvalid, &bad) && bad == 0,
	    "%ld valid records arrived with our pid and comm", nvalid);
	memset(&us, 0, sizeof(us));
	k = st_ingest_stats(dd.dd_sock, &us);
	dtt_check(k == 0 &&
	    (long)us.us_records == nvalid && (long)us.us_garbage == ngarbage &&
	    (long)us.us_misnamed == nmisnamed,
	    "dtd counted %llu records, %llu garbage, %llu misnamed (want "
	    "%ld, %ld, %ld)", (unsigned long long)us.us_records,
	    (unsigned long long)us.us_garbage,
	    (unsigned long long)us.us_misnamed, nvalid, ngarbage, nmisnamed);

	/* A reserved slot never committed is skipped after a while. */
	f.f_ticket++;
	commit_one(&f, 0, &extra);
	bad = 0;
	dtt_check(read_ours(fd, 1, &bad) && bad == 0,
	    "the record after a slot left uncommitted arrived");
	memset(&us, 0, sizeof(us));
	k = st_ingest_stats(dd.dd_sock, &us);
	dtt_check(k == 0 && (long)us.us_garbage == ngarbage + 1,
	    "the uncommitted slot was counted as garbage");

	/* 3. chaos over the whole ring, header included. */
	for (k = 0; k < rounds; k++) {
		uint64_t *w = (uint64_t *)(void *)f.f_ring;
		size_t nw = (UDT_RING_HDRSIZE +
		    (size_t)f.f_nslots * UDT_SLOT_SIZE) / 8, j;

		for (j = 0; j < 4096; j++)
			w[rnd() % nw] = rnd() % 4 == 0 ?
			    f.f_ticket + rnd() % 8 : rnd();
		if (k % 50 == 0)
			for (j = 0; j < nw; j += 1 + rnd() % 64)
				w[j] = rnd();
		if (k % 20 == 0) {
			/* A handshake of random bytes. */
			struct sockaddr_un sun;
			uint64_t junk[8];

			memset(&sun, 0, sizeof(sun));
			sun.sun_family = AF_UNIX;
			/* dd_sock may be longer than a socket path can be. */
			if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
			    "%s", dd.dd_sock) >= sizeof(sun.sun_path))
				continue;
			for (j = 0; j < 8; j++)
				junk[j] = rnd();
			if (k % 40 == 0)
				junk[0] = UDT_MAGIC | (uint64_t)rnd() << 32;
			if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0) {
				if (connect(s, (struct sockaddr *)&sun,
				    sizeof(sun)) == 0)
					(void)send(s, junk, 1 + rnd() % 64, 0);
				close(s);
			}
		}
	}
	dtt_check(waitpid(dd.dd_pid, &status, WNOHANG) == 0,
	    "dtd survived %ld rounds of random ring bytes", rounds);

	/* 4. dtd still serves a well-behaved tracee. */
	if (dtt_check(fake_connect(dd.dd_sock, &g) == 0,
	    "second fake tracee attached")) {
		bad = 0;
		commit_one(&g, 0, &extra);
		dtt_check(read_ours(fd, 1, &bad) && bad == 0,
		    "its valid record arrived");
	}
	memset(&us, 0, sizeof(us));
	k = st_ingest_stats(dd.dd_sock, &us);
	dtt_check(k == 0 && us.us_garbage > 0,
	    "counters answer: %llu records, %llu garbage",
	    (unsigned long long)us.us_records,
	    (unsigned long long)us.us_garbage);
out:
	if (fd >= 0)
		close(fd);
	if (dd.dd_pid > 0) {
		status = dtt_dtd_stop(&dd, SIGTERM);
		dtt_check(dtt_exited0(status),
		    "dtd exited cleanly (status %#x)", status);
	}
	if (dtt_dtd_fini(&dd, true) == -1)
		warn("%s", dd.dd_dir);
	free(pi);
	k = dtt_done();
	return k || dtt_npass < 12;
}
