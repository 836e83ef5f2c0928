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
 * soak DTD [SECONDS [SEED]]
 *
 * A private dtd (the build's: under -Db_sanitize, an ASan/UBSan one)
 * under random abuse through its real device file and ingest socket for
 * SECONDS (else $USERDT_SOAK_SECONDS, else 20), from SOAK_PROCS
 * processes of SOAK_THREADS threads each.  Every step is one of:
 *
 *  - the device: open; an ioctl of each number in both encodings
 *    (Linux's and OpenBSD's), with sound arguments, random ones, and
 *    bad pointers (NULL, a page that is not mapped, a read-only page
 *    for what dtd writes back, a kernel address) both as the argument
 *    and inside it, or a random number; a read of a random size, into a
 *    good or a bad buffer, ended by a timer signal when no event comes;
 *    a close, recording or not, sometimes while another read waits;
 *  - the ingest socket: a hello that is short, cut off, of a wrong
 *    magic or version, random bytes, or a maps query cut short, then
 *    closed at once or after a while;
 *  - a flood of hellos dtd answers at once (statistics), never read;
 *  - a forged ring: a child says a real hello, maps its ring and writes
 *    garbage into it (random slots, random commits, a random header,
 *    records valid but for one field), then exits.
 *
 * At the end dtd must be alive, hold as many descriptors as it did
 * after a first round of each kind (waited for, bounded), have grown by
 * no more than SOAK_RSS_MB of resident memory (plus the sanitizer's
 * quarantine when it runs under ASan), exit 0 on SIGTERM, and have
 * written no sanitizer report.  The counts reached are printed.  The
 * seed is printed too; pass it to replay a run's choices (the timing
 * is the machine's).  tests/soak/README.md tells how to run it long.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define SOAK_PROCS	2
#define SOAK_THREADS	3
#define SOAK_OPENS	4		/* a thread's opens at once */
#define SOAK_SECONDS	20
#define SOAK_RSS_MB	128		/* growth allowed, sanitizer aside */
#define SOAK_QUAR_MB	256		/* ASan's default quarantine */
#define SOAK_SCRATCH	16384		/* any _IOC_SIZE fits */
#define SOAK_PLIST	4096		/* probes we keep */

/* What every process reached, in memory they share. */
struct soak_counts {
	atomic_ulong	sc_opens, sc_ioctls, sc_reads, sc_closes;
	atomic_ulong	sc_events;	/* read whole */
	atomic_ulong	sc_malformed;	/* bad ingest connections */
	atomic_ulong	sc_early;	/* hellos answered at once */
	atomic_ulong	sc_rings;	/* forged rings */
	atomic_ulong	sc_slots;	/* of them, slots forged */
	atomic_ulong	sc_failed;	/* the soak's own failures */
};

static struct soak_counts *counts;
static struct dtt_dtd	 dd;
static uint64_t		 deadline;	/* CLOCK_MONOTONIC ns */
static uint32_t		 nsys;		/* syscall probes, as tracees say */
static uint32_t		 pbns[SOAK_PLIST];	/* the device's probes */
static size_t		 npbns;
static uint32_t		 firsts[16];	/* a probe of each provider */
static size_t		 nfirsts;
static char		*page_none;	/* PROT_NONE: any access faults */
static char		*page_ro;	/* PROT_READ: writes fault */

/* xorshift64*: each thread its own, from the seed. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static unsigned int
pick(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rnd(s) % n);
}

static void
rnd_fill(uint64_t *s, void *buf, size_t len)
{
	unsigned char *p = buf;
	uint64_t v;
	size_t i;

	for (i = 0; i < len; i += 8) {
		v = rnd(s);
		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

static bool
time_left(void)
{
	return dtt_clock_ns(CLOCK_MONOTONIC) < deadline;
}

/*
 * A pointer dtd may be told to read or write: n bytes of ours (buf,
 * only when n fits it), or one that faults.  Never one into memory of
 * ours that n does not cover: dtd would write there.
 */
static void *
some_ptr(uint64_t *s, void *buf, size_t cap, size_t *n)
{
	switch (pick(s, 6)) {
	case 0:
		return NULL;
	case 1:
		return page_none;
	case 2:
		return page_ro;
	case 3:
		return (void *)(uintptr_t)0xffff888000000000ULL;
	case 4:
		return (void *)(uintptr_t)1;
	default:
		if (*n > cap)
			*n = cap;
		return buf;
	}
}

/* --- the device ----------------------------------------------------- */

static const unsigned long soak_cmds[] = {
	DTIOCGPLIST, DTIOCGSTATS, DTIOCRECORD, DTIOCPRBENABLE,
	DTIOCPRBDISABLE, DTIOCGARGS, DTIOCRDVNODE,
	_IO('D', 7),		/* retired: ENOTTY */
};
#define SOAK_NCMDS	(sizeof(soak_cmds) / sizeof(soak_cmds[0]))

static bool
known_cmd(unsigned long cmd)
{
	size_t i;

	for (i = 0; i < SOAK_NCMDS; i++)
		if (cmd == soak_cmds[i] || cmd == DTIOC_OPENBSD(soak_cmds[i]))
			return true;
	return false;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

struct soak_thr {
	pthread_t	 st_thr;
	uint64_t	 st_seed;
	int		 st_fds[SOAK_OPENS];
	timer_t		 st_timer;
	bool		 st_timer_ok;
	unsigned char	*st_scratch;	/* the ioctl argument */
	unsigned char	*st_buf;	/* what embedded pointers name */
	struct dt_evt	*st_evs;
};

/* One ioctl on fd, of a real number in either encoding or a random one. */
static void
dev_ioctl(struct soak_thr *t, int fd)
{
	uint64_t *s = &t->st_seed;
	unsigned char *a = t->st_scratch;
	unsigned long cmd;
	void *arg = a;
	size_t n;

	rnd_fill(s, a, 256);
	if (pick(s, 8) == 0) {
		/* A number nobody defined (never a real one: see some_ptr) */
		do
			cmd = (unsigned long)(uint32_t)rnd(s);
		while (known_cmd(cmd));
	} else {
		cmd = soak_cmds[pick(s, SOAK_NCMDS)];
		if (pick(s, 2))
			cmd = DTIOC_OPENBSD(cmd);
	}
	switch (cmd & 0xff) {
	case 1: {	/* GPLIST */
		struct dtioc_probe *p = (void *)a;

		n = pick(s, 4) == 0 ? (size_t)rnd(s) :
		    pick(s, 64) * sizeof(struct dtioc_probe_info);
		p->dtpr_probes = some_ptr(s, t->st_buf, SOAK_SCRATCH, &n);
		p->dtpr_size = n;
		break;
	}
	case 3:		/* RECORD */
		*(int *)(void *)a = pick(s, 3) ? (int)pick(s, 2) : (int)rnd(s);
		break;
	case 4:		/* PRBENABLE, PRBDISABLE */
	case 5: {
		struct dtioc_req *r = (void *)a;

		if (npbns > 0 && pick(s, 4) != 0)
			r->dtrq_pbn = pbns[pick(s, (unsigned int)npbns)];
		if (pick(s, 2))
			r->dtrq_evtflags &= 0xff;
		if (pick(s, 2))
			r->dtrq_nsecs = pick(s, 3) == 0 ? 0 :
			    1000000ULL * (1 + pick(s, 100));
		break;
	}
	case 6: {	/* GARGS */
		struct dtioc_arg *r = (void *)a;

		if (npbns > 0 && pick(s, 2))
			r->dtar_pbn = pbns[pick(s, (unsigned int)npbns)];
		n = pick(s, 4) == 0 ? (size_t)rnd(s) :
		    pick(s, 16) * sizeof(struct dtioc_arg_info);
		r->dtar_args = some_ptr(s, t->st_buf, SOAK_SCRATCH, &n);
		r->dtar_size = n;
		break;
	}
	case 8: {	/* RDVNODE: its pointers are the target's addresses */
		struct dtioc_rdvn *r = (void *)a;

		if (pick(s, 2))
			r->dtrv_pid = pick(s, 2) ? getpid() : dd.dd_pid;
		if (pick(s, 2))
			r->dtrv_va = (char *)(uintptr_t)&dev_ioctl;
		break;
	}
	default:
		break;
	}
	/* The argument itself: ours, or one that faults. */
	n = SOAK_SCRATCH;
	if (pick(s, 6) == 0)
		arg = some_ptr(s, a, SOAK_SCRATCH, &n);
	(void)ioctl(fd, cmd, arg);
	atomic_fetch_add(&counts->sc_ioctls, 1);
}

/* A read of a random size, ended by the thread's timer if nothing comes. */
static void
dev_read(struct soak_thr *t, int fd)
{
	uint64_t *s = &t->st_seed;
	struct itimerspec its;
	size_t n;
	void *buf;
	ssize_t r;

	if (!t->st_timer_ok)
		return;
	switch (pick(s, 4)) {
	case 0:
		n = pick(s, 2 * sizeof(struct dt_evt));
		break;
	case 1:
		n = sizeof(struct dt_evt);
		break;
	default:
		n = sizeof(struct dt_evt) * (1 + pick(s, 64));
		break;
	}
	buf = pick(s, 5) == 0 ? some_ptr(s, t->st_evs,
	    64 * sizeof(struct dt_evt), &n) : t->st_evs;
	if (buf == t->st_evs && n > 64 * sizeof(struct dt_evt))
		n = 64 * sizeof(struct dt_evt);
	/*
	 * Periodic: a thread kept off the CPU past the first expiry (a busy
	 * machine) would get that signal before it blocks and then read
	 * forever; the next one ends the read.
	 */
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 1000000 * (long)(1 + pick(s, 20));
	its.it_interval = its.it_value;
	timer_settime(t->st_timer, 0, &its, NULL);
	r = read(fd, buf, n);
	memset(&its, 0, sizeof(its));
	timer_settime(t->st_timer, 0, &its, NULL);
	if (r > 0)
		atomic_fetch_add(&counts->sc_events,
		    (unsigned long)r / sizeof(struct dt_evt));
	atomic_fetch_add(&counts->sc_reads, 1);
}

static void
dev_step(struct soak_thr *t)
{
	uint64_t *s = &t->st_seed;
	unsigned int i = pick(s, SOAK_OPENS);
	int *fdp = &t->st_fds[i];

	if (*fdp == -1) {
		if ((*fdp = open(dd.dd_dev, pick(s, 2) ? O_RDONLY :
		    O_RDWR | O_NONBLOCK)) != -1) {
			fcntl(*fdp, F_SETFD, FD_CLOEXEC);
			atomic_fetch_add(&counts->sc_opens, 1);
		}
		return;
	}
	switch (pick(s, 10)) {
	case 0:
		close(*fdp);
		*fdp = -1;
		atomic_fetch_add(&counts->sc_closes, 1);
		break;
	case 1:
	case 2:
		dev_read(t, *fdp);
		break;
	default:
		dev_ioctl(t, *fdp);
		break;
	}
}

/* --- the ingest socket ----------------------------------------------- */

/* A connection that is anything but a sound first message. */
static void
ing_malformed(struct soak_thr *t)
{
	uint64_t *s = &t->st_seed;
	struct {
		struct udt_hello	h;
		struct udt_maps_req	rq;
		unsigned char		tail[64];
	} m;
	size_t len;
	int fd;

	if ((fd = dtt_connect(dd.dd_sock)) == -1)
		return;
	rnd_fill(s, &m, sizeof(m));
	m.h.uh_magic = UDT_MAGIC;
	m.h.uh_version = UDT_VERSION;
	m.h.uh_nprobes = nsys;
	len = sizeof(m.h);
	switch (pick(s, 7)) {
	case 0:		/* cut off */
		len = pick(s, sizeof(m.h));
		m.h.uh_flags = UDT_HELLO_TRACEE;
		break;
	case 1:
		m.h.uh_magic = (uint32_t)rnd(s);
		break;
	case 2:
		m.h.uh_version = (uint32_t)rnd(s);
		break;
	case 3:		/* a maps query cut short */
		m.h.uh_flags = UDT_HELLO_MAPS;
		len += pick(s, sizeof(m.rq));
		break;
	case 4:		/* flags nobody defined, random probes */
		m.h.uh_nprobes = (uint32_t)rnd(s);
		break;
	case 5:		/* random bytes, random length */
		rnd_fill(s, &m, sizeof(m));
		len = pick(s, sizeof(m));
		break;
	default:	/* a tracee's, with more behind it */
		m.h.uh_flags = UDT_HELLO_TRACEE;
		len = sizeof(m);
		break;
	}
	if (len > 0)
		(void)send(fd, &m, len, MSG_NOSIGNAL);
	/* Left open a while (dtd closes it after 1 s), or not. */
	if (pick(s, 4) == 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		(void)poll(&pfd, 1, 1 + (int)pick(s, 50));
	}
	close(fd);
	atomic_fetch_add(&counts->sc_malformed, 1);
}

/* A burst of hellos dtd answers at once; nobody reads the answers. */
static void
ing_early(struct soak_thr *t)
{
	uint64_t *s = &t->st_seed;
	struct {
		struct udt_hello	h;
		struct udt_maps_req	rq;
	} m;
	unsigned int i, n = 10 + pick(s, 50);
	int fd;

	for (i = 0; i < n && time_left(); i++) {
		if ((fd = dtt_connect(dd.dd_sock)) == -1)
			continue;
		memset(&m, 0, sizeof(m));
		m.h.uh_magic = UDT_MAGIC;
		m.h.uh_version = UDT_VERSION;
		m.h.uh_flags = UDT_HELLO_STATS;
		if (pick(s, 4) == 0) {
			m.h.uh_flags = UDT_HELLO_MAPS;
			m.rq.umr_pid = pick(s, 2) ? (int32_t)rnd(s) :
			    (int32_t)dd.dd_pid;
		}
		(void)send(fd, &m, m.h.uh_flags == UDT_HELLO_MAPS ?
		    sizeof(m) : sizeof(m.h), MSG_NOSIGNAL);
		close(fd);
		atomic_fetch_add(&counts->sc_early, 1);
	}
}

/* In a child: a real hello, then garbage into the ring; exit code. */
static int
forge_ring(uint64_t seed)
{
	uint64_t s = seed, end, t, head;
	struct udt_welcome w;
	struct udt_ring_hdr *rh;
	struct udt_rec *slot;
	struct timespec ts;
	int fds[2], sock;
	unsigned long nslots = 0;

	if ((sock = dtt_tracee_hello(dd.dd_sock, nsys, &w, fds)) == -1)
		return 1;
	if ((rh = dtt_ring_map(fds[0], &w)) == NULL)
		return 2;
	end = dtt_clock_ns(CLOCK_MONOTONIC) + 1000000ULL * (5 + pick(&s, 50));
	head = 0;
	while (dtt_clock_ns(CLOCK_MONOTONIC) < end) {
		t = head++;
		slot = (struct udt_rec *)(void *)((char *)rh +
		    UDT_RING_HDRSIZE + (t % w.uw_nslots) * UDT_SLOT_SIZE);
		switch (pick(&s, 6)) {
		case 0:		/* a random header, now and then */
			rnd_fill(&s, (char *)rh + 8, 64);
			break;
		case 1:		/* reserved, never committed */
			break;
		default:	/* a record, a field or all of it garbage */
			rnd_fill(&s, (char *)slot + 8, UDT_SLOT_SIZE - 8);
			if (pick(&s, 2)) {
				clock_gettime(CLOCK_REALTIME, &ts);
				slot->ur_probe = (uint16_t)pick(&s, nsys + 2);
				slot->ur_flags &= 0xff;
				slot->ur_tid = getpid();
				slot->ur_sec = ts.tv_sec;
				slot->ur_nsec = ts.tv_nsec;
				slot->ur_nframes %= UDT_STACK_MAX + 2;
			}
			break;
		}
		__atomic_store_n(&rh->rh_head, pick(&s, 16) ? head :
		    rnd(&s), __ATOMIC_RELEASE);
		__atomic_store_n(&slot->ur_seq, pick(&s, 8) ? t + 1 :
		    rnd(&s), __ATOMIC_RELEASE);
		nslots++;
		/* Room for the drain, or a ring flooded past its tail. */
		if (pick(&s, 4) == 0)
			sched_yield();
	}
	atomic_fetch_add(&counts->sc_slots, nslots);
	return 0;
}

static void
ing_forge(struct soak_thr *t)
{
	uint64_t seed = rnd(&t->st_seed);
	int status;
	pid_t pid;

	if ((pid = fork()) == -1)
		return;
	if (pid == 0)
		_exit(forge_ring(seed));
	status = dtt_wait(pid, DTT_EXIT_MS);
	if (status == -1)
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	if (dtt_exited0(status))
		atomic_fetch_add(&counts->sc_rings, 1);
	else
		atomic_fetch_add(&counts->sc_failed, 1);
}

/* --- the threads ----------------------------------------------------- */

static void
soak_step(struct soak_thr *t)
{
	unsigned int r = pick(&t->st_seed, 100);

	if (r < 70)
		dev_step(t);
	else if (r < 88)
		ing_malformed(t);
	else if (r < 95)
		ing_early(t);
	else
		ing_forge(t);
}

static void *
soak_thread(void *arg)
{
	struct soak_thr *t = arg;
	struct sigevent sev;
	size_t i;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
#else
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
#endif
	t->st_timer_ok = timer_create(CLOCK_MONOTONIC, &sev,
	    &t->st_timer) == 0;
	for (i = 0; i < SOAK_OPENS; i++)
		t->st_fds[i] = -1;
	while (time_left())
		soak_step(t);
	for (i = 0; i < SOAK_OPENS; i++)
		if (t->st_fds[i] != -1) {
			close(t->st_fds[i]);
			atomic_fetch_add(&counts->sc_closes, 1);
		}
	if (t->st_timer_ok)
		timer_delete(t->st_timer);
	return NULL;
}

/* One process of SOAK_THREADS threads; its exit status. */
static int
soak_proc(uint64_t seed)
{
	static struct soak_thr thr[SOAK_THREADS];
	struct sigaction sa;
	int i, made = 0;

	/* No SA_RESTART: the timer's signal ends a waiting read. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	for (i = 0; i < SOAK_THREADS; i++) {
		thr[i].st_seed = seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		thr[i].st_scratch = calloc(1, SOAK_SCRATCH);
		thr[i].st_buf = calloc(1, SOAK_SCRATCH);
		thr[i].st_evs = calloc(64, sizeof(struct dt_evt));
		if (thr[i].st_scratch == NULL || thr[i].st_buf == NULL ||
		    thr[i].st_evs == NULL ||
		    pthread_create(&thr[i].st_thr, NULL, soak_thread,
		    &thr[i]) != 0)
			break;
		made++;
	}
	for (i = 0; i < made; i++)
		pthread_join(thr[i].st_thr, NULL);
	return made == SOAK_THREADS ? 0 : 1;
}

/* --- checks on dtd --------------------------------------------------- */

static int
fd_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
fd_show(pid_t pid)
{
	char path[300], link[256];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid,
		    de->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) < 0)
			n = 0;
		link[n] = '\0';
		printf("#   fd %s -> %s\n", de->d_name, link);
	}
	closedir(d);
}

/*
 * dtd's descriptors back to want (want < 0: until the count held for
 * half a second): it closes a dead tracee's once its drain notices (a
 * pidfd's poll), a worker's once idle.  There is nothing to wait on
 * from outside, so look every 20 ms, for 10 s at most.
 */
static int
fd_settle(pid_t pid, int want)
{
	struct timespec ts = { 0, 20000000 };
	int n = -1, last = -1, same = 0, i;

	for (i = 0; i < 500; i++) {
		n = fd_count(pid);
		if (want >= 0 ? n <= want : (n == last && ++same == 25))
			break;
		if (n != last)
			same = 0;
		last = n;
		nanosleep(&ts, NULL);
	}
	return n;
}

static uint64_t
rss_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = strtoull(line + 6, NULL, 10);
	fclose(fp);
	return kb;
}

static bool
maps_has(pid_t pid, const char *what)
{
	char path[64], line[512];
	bool found = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		found = strstr(line, what) != NULL;
	fclose(fp);
	return found;
}

/* The first sanitizer report in dtd's stderr, or NULL. */
static const char *
sanitizer_report(const char *log)
{
	static const char *marks[] = { "AddressSanitizer",
	    "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:",
	    "ThreadSanitizer" };
	size_t i;

	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strstr(log, marks[i]) != NULL)
			return marks[i];
	return NULL;
}

/* One round of each kind, so dtd has made what it keeps for good. */
static void
warm_up(uint64_t seed)
{
	struct soak_thr t;
	int i;

	memset(&t, 0, sizeof(t));
	t.st_seed = seed;
	t.st_scratch = calloc(1, SOAK_SCRATCH);
	t.st_buf = calloc(1, SOAK_SCRATCH);
	t.st_evs = calloc(64, sizeof(struct dt_evt));
	if (t.st_scratch == NULL || t.st_buf == NULL || t.st_evs == NULL)
		goto out;
	for (i = 0; i < SOAK_OPENS; i++)
		t.st_fds[i] = -1;
	ing_malformed(&t);
	ing_early(&t);
	ing_forge(&t);
	/*
	 * Each provider's reader starts at its first use and stays (perf's
	 * and tracefs' loops, a descriptor pair each): start them now.
	 */
	if ((t.st_fds[0] = dtt_open(dd.dd_dev)) != -1) {
		for (i = 0; i < (int)nfirsts; i++)
			(void)dtt_enable(t.st_fds[0], firsts[i], 0, 10000000);
		(void)dtt_record(t.st_fds[0], 1);
		(void)dtt_record(t.st_fds[0], 0);
		close(t.st_fds[0]);
	}
out:
	free(t.st_scratch);
	free(t.st_buf);
	free(t.st_evs);
}

int
main(int argc, char *argv[])
{
	static char log[1 << 20];
	struct dtioc_probe_info *pi = NULL;
	char err[512], *env;
	char *args[] = { "--no-ksyms", "--ring-size", "64", "--max-memory",
	    "64M", NULL };
	pid_t kids[SOAK_PROCS];
	uint64_t seed, rss0, rss1, bound;
	unsigned long secs = SOAK_SECONDS;
	size_t npi, i;
	int fd, fd0, fd1, status, lfd, nkids = 0, asan;
	ssize_t n;
	const char *rep;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: soak DTD [SECONDS [SEED]]\n");
		return 2;
	}
	if (argc > 2)
		secs = strtoul(argv[2], NULL, 10);
	else if ((env = getenv("USERDT_SOAK_SECONDS")) != NULL)
		secs = strtoul(env, NULL, 10);
	seed = argc > 3 ? strtoull(argv[3], NULL, 0) :
	    dtt_clock_ns(CLOCK_REALTIME) ^ (uint64_t)getpid() << 32;
	if (seed == 0)
		seed = 1;
	printf("# soak: %lu s, seed %#llx\n", secs, (unsigned long long)seed);

	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	page_none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	page_ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (counts == MAP_FAILED || page_none == MAP_FAILED ||
	    page_ro == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	if (!dtt_check(dtt_dtd_init(&dd, "udt-soak") == 0 &&
	    dtt_dtd_start(&dd, argv[1], args, err, sizeof(err)) != -1,
	    "a private dtd (%s)", err))
		goto out;
	if ((fd = dtt_open(dd.dd_dev)) != -1 &&
	    (pi = dtt_plist(fd, &npi)) != NULL) {
		nsys = dtt_nsys(pi, npi, NULL);
		for (i = 0; i < npi && npbns < SOAK_PLIST; i++) {
			pbns[npbns++] = pi[i].dtpi_pbn;
			if (nfirsts < 16 && (i == 0 || strcmp(pi[i].dtpi_prov,
			    pi[i - 1].dtpi_prov) != 0))
				firsts[nfirsts++] = pi[i].dtpi_pbn;
		}
	}
	free(pi);
	if (fd != -1)
		close(fd);
	if (!dtt_check(npbns > 0 && nsys > 0, "%zu probes, %u of syscall",
	    npbns, nsys))
		goto out;
	asan = maps_has(dd.dd_pid, "libasan");

	warm_up(seed ^ 0x5a5a5a5a);
	fd0 = fd_settle(dd.dd_pid, -1);
	rss0 = rss_kb(dd.dd_pid);
	printf("# dtd %d%s: %d descriptors, %llu KB resident after a warm-up\n",
	    (int)dd.dd_pid, asan ? " (ASan)" : "", fd0,
	    (unsigned long long)rss0);

	deadline = dtt_clock_ns(CLOCK_MONOTONIC) + secs * 1000000000ULL;
	fflush(stdout);
	for (i = 0; i < SOAK_PROCS; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(soak_proc(seed + 0x1000000ULL * (i + 1)));
		if (pid > 0)
			kids[nkids++] = pid;
	}
	for (i = 0; i < (size_t)nkids; i++) {
		/* Their deadline, then a forged ring's exit at most. */
		status = dtt_wait(kids[i], (int)(secs * 1000) + 2 * DTT_EXIT_MS);
		if (status == -1)
			dtt_stop(kids[i], SIGKILL, DTT_EXIT_MS);
		dtt_check(dtt_exited0(status), "soak process %d ran its course "
		    "(%#x)", kids[i], status);
	}
	printf("# reached: %lu opens, %lu ioctls, %lu reads (%lu events), "
	    "%lu closes; %lu malformed connections, %lu early-answered "
	    "hellos, %lu forged rings (%lu slots)\n",
	    atomic_load(&counts->sc_opens), atomic_load(&counts->sc_ioctls),
	    atomic_load(&counts->sc_reads), atomic_load(&counts->sc_events),
	    atomic_load(&counts->sc_closes),
	    atomic_load(&counts->sc_malformed),
	    atomic_load(&counts->sc_early), atomic_load(&counts->sc_rings),
	    atomic_load(&counts->sc_slots));
	dtt_check(atomic_load(&counts->sc_failed) == 0, "no forged ring's "
	    "child failed (%lu)", atomic_load(&counts->sc_failed));
	dtt_check(atomic_load(&counts->sc_ioctls) > 0 &&
	    atomic_load(&counts->sc_malformed) > 0 &&
	    atomic_load(&counts->sc_rings) > 0, "every kind of step ran");

	dtt_check(kill(dd.dd_pid, 0) == 0 &&
	    waitpid(dd.dd_pid, &status, WNOHANG) == 0, "dtd is alive");
	fd1 = fd_settle(dd.dd_pid, fd0);
	if (!dtt_check(fd1 == fd0, "dtd's descriptors back to %d (%d)", fd0,
	    fd1))
		fd_show(dd.dd_pid);
	rss1 = rss_kb(dd.dd_pid);
	bound = (SOAK_RSS_MB + (asan ? SOAK_QUAR_MB : 0)) * 1024ULL;
	dtt_check(rss1 <= rss0 + bound, "dtd resident %llu KB -> %llu KB, "
	    "within %llu KB more", (unsigned long long)rss0,
	    (unsigned long long)rss1, (unsigned long long)bound);
	/* Its leak check runs at exit: stop it before reading its log. */
	status = dtt_dtd_stop(&dd, SIGTERM);
	dtt_check(dtt_exited0(status), "dtd exits 0 on SIGTERM (%#x)", status);
	if ((lfd = open(dd.dd_err, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(lfd, log, sizeof(log) - 1);
		log[n > 0 ? n : 0] = '\0';
		close(lfd);
	}
	rep = sanitizer_report(log);
	if (!dtt_check(rep == NULL, "no sanitizer report in dtd's stderr (%s)",
	    rep != NULL ? rep : "none"))
		printf("%s", strstr(log, rep));
out:
	dtt_dtd_fini(&dd, true);
	return dtt_done();
}
