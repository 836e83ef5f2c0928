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
 * dtd's cache of traced processes' mappings (daemon/sys/dt_pidmaps.c) and
 * DTIOCRDVNODE's answers from it (daemon/core/dt_rdvn.c), against a fake /proc
 * in a temporary directory (pm_fake.c): snapshots, processes that exit,
 * zombies, pids that change hands, the LRU bound, a tracker's re-reads and
 * their rate limit, /proc files that make no sense.  No root needed.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_pidmaps.h"
#include "dt_softc.h"
#include "dtt.h"
#include "pm_fake.h"

static char	lib[128];	/* a file of LIBSIZE bytes to "map" */
#define LIBSIZE	12345

/* A process with the usual kinds of mappings around two of lib's. */
static void
fake_proc(pid_t pid, unsigned long long stime, unsigned long base)
{
	char maps[2048];

	fake_stat(pid, 'S', stime);
	snprintf(maps, sizeof(maps),
	    "%lx-%lx r--p 00000000 08:01 42 %s\n"
	    "%lx-%lx r-xp 00001000 08:01 42 %s\n"
	    "%lx-%lx rw-p 00000000 00:00 0 [heap]\n"
	    "%lx-%lx r-xp 00000000 00:00 0 \n"
	    "%lx-%lx r-xp 00000000 00:00 0 [vdso]\n",
	    base, base + 0x1000, lib,
	    base + 0x1000, base + 0x3000, lib,
	    base + 0x10000, base + 0x20000,
	    base + 0x20000, base + 0x21000,
	    base + 0x30000, base + 0x32000);
	fake_maps(pid, maps);
}

static int
rdvn(pid_t pid, unsigned long va, struct dtioc_rdvn *dtrv)
{
	memset(dtrv, 0, sizeof(*dtrv));
	dtrv->dtrv_pid = pid;
	dtrv->dtrv_va = (caddr_t)va;
	return dt_rdvn_lookup(dtrv);
}

static void
test_snapshot(void)
{
	struct dt_pm_snap *s, *prev;
	const struct dt_pm_map *m;
	struct dtioc_rdvn dtrv;

	dtt_tag("snapshot");
	fake_proc(100, 5000, 0x400000);
	s = dt_pm_snapshot(100, 0);
	if (!dtt_check(s != NULL, "a live process reads (%s)",
	    s ? "ok" : strerror(errno)))
		return;
	dtt_check(s->ps_n == 3, "three executable mappings: %zu", s->ps_n);
	dtt_check(s->ps_stime == 5001, "start time kept: %llu",
	    (unsigned long long)s->ps_stime);
	m = dt_pm_find(s, 0x401234);
	dtt_check(m != NULL && m->pm_start == 0x401000 &&
	    m->pm_end == 0x403000 && m->pm_off == 0x1000 &&
	    m->pm_path != NULL && strcmp(m->pm_path, lib) == 0 &&
	    m->pm_size == LIBSIZE, "text mapping: start, end, offset, path, size");
	dtt_check(dt_pm_find(s, 0x400100) == NULL, "read-only mapping left out");
	dtt_check(dt_pm_find(s, 0x410100) == NULL, "heap left out");
	m = dt_pm_find(s, 0x430010);
	dtt_check(m != NULL && m->pm_path == NULL, "[vdso] known, no file");
	dtt_check(dt_pm_find(s, 0x403000) == NULL, "end is exclusive");
	dt_pm_put(s);

	dtt_check(rdvn(100, 0x401234, &dtrv) == 0 &&
	    dtrv.dtrv_start == (caddr_t)0x401000 &&
	    dtrv.dtrv_offset == (caddr_t)0x1000 && dtrv.dtrv_len == LIBSIZE &&
	    dtrv.dtrv_fd == -1, "RDVNODE live: start, offset, size, fd -1");
	dtt_check(rdvn(100, 0x430010, &dtrv) == ENOENT, "RDVNODE [vdso]: ENOENT");
	dtt_check(rdvn(100, 0x400100, &dtrv) == ENOENT,
	    "RDVNODE not executable: ENOENT");
	dtt_check(rdvn(101, 0x401234, &dtrv) == ESRCH,
	    "RDVNODE unknown pid: ESRCH");

	/*
	 * Sizes are stat'ed once per mapping: a read with an earlier
	 * snapshot takes them from it, a mapping it lacks is stat'ed.
	 */
	prev = dt_pm_cached(100);
	if (truncate(lib, LIBSIZE + 1) != 0)
		err(2, "truncate");
	s = dt_pm_read(100, prev);
	m = s != NULL ? dt_pm_find(s, 0x401234) : NULL;
	dtt_check(m != NULL && m->pm_size == LIBSIZE,
	    "a known mapping's size comes from the earlier snapshot");
	dt_pm_put(s);
	s = dt_pm_read(100, NULL);
	m = s != NULL ? dt_pm_find(s, 0x401234) : NULL;
	dtt_check(m != NULL && m->pm_size == LIBSIZE + 1,
	    "without one it is stat'ed");
	dt_pm_put(s);
	fake_proc(100, 5000, 0x600000);
	s = dt_pm_read(100, prev);
	m = s != NULL ? dt_pm_find(s, 0x601234) : NULL;
	dtt_check(m != NULL && m->pm_size == LIBSIZE + 1,
	    "a mapping the earlier snapshot lacks is stat'ed");
	dt_pm_put(s);
	dt_pm_put(prev);
	if (truncate(lib, LIBSIZE) != 0)
		err(2, "truncate");
	fake_proc(100, 5000, 0x400000);

	/* It exits: the cache answers. */
	fake_gone(100);
	errno = 0;
	dtt_check(dt_pm_read(100, NULL) == NULL && errno == ESRCH,
	    "gone: no read");
	s = dt_pm_current(100);
	dtt_check(s != NULL && s->ps_stime == 5001 &&
	    dt_pm_find(s, 0x401234) != NULL, "gone: the cache answers");
	dt_pm_put(s);
	dtt_check(rdvn(100, 0x402ffe, &dtrv) == 0 &&
	    dtrv.dtrv_start == (caddr_t)0x401000 &&
	    dtrv.dtrv_len == LIBSIZE, "RDVNODE after exit: from the cache");
	dtt_check(rdvn(100, 0x500000, &dtrv) == ENOENT,
	    "RDVNODE after exit, unmapped: ENOENT");
}

/*
 * A snapshot checked by a pidfd (a hello's): good while the pidfd's
 * process lives, nothing once it ended, whatever /proc still says, since
 * its pid may then be another's.  The pidfd is a child's of our own; the
 * maps are the fake /proc's.
 */
static void
test_pidfd(void)
{
	struct dt_pm_snap *s;
	struct dt_pm_track pt;
	pid_t kid;
	int pidfd;

	dtt_tag("pidfd");
	fake_proc(600, 13000, 0x400000);
	if ((kid = fork()) == 0) {
		pause();
		_exit(0);
	}
	pidfd = kid > 0 ? (int)syscall(SYS_pidfd_open, kid, 0) : -1;
	if (!dtt_check(pidfd >= 0, "a child and its pidfd"))
		return;
	s = dt_pm_read_pidfd(600, 13001, pidfd, NULL);
	dtt_check(s != NULL && s->ps_n == 3 && s->ps_stime == 13001 &&
	    dt_pm_find(s, 0x401000) != NULL,
	    "read while the pidfd's process lives, with the start time given");
	dt_pm_put(s);
	dtt_check(dt_pm_read_pidfd(600, 0, pidfd, NULL) == NULL &&
	    errno == ESRCH, "no start time: nothing");
	dt_pm_track_attach_pidfd(&pt, 600, 0, pidfd, 13001);
	dtt_check(pt.pt_snap != NULL && pt.pt_stime == 13001,
	    "a tracker attached by pidfd has the snapshot");
	dt_pm_track_fini(&pt);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	dtt_check(dt_pm_read_pidfd(600, 13001, pidfd, NULL) == NULL &&
	    errno == ESRCH,
	    "its process ended: nothing, though /proc still has the pid");
	close(pidfd);
	fake_gone(600);
}

static void
test_zombie_reuse(void)
{
	struct dt_pm_snap *s, *held;
	struct dtioc_rdvn dtrv;

	dtt_tag("reuse");
	fake_proc(200, 7000, 0x400000);
	held = dt_pm_snapshot(200, 0);
	dtt_check(held != NULL, "snapshot");

	/* A zombie: stat there, maps empty. */
	fake_stat(200, 'Z', 7000);
	fake_maps(200, "");
	dtt_check(dt_pm_stime(200) == 0, "a zombie has no start time");
	dtt_check(rdvn(200, 0x401000, &dtrv) == 0 &&
	    dtrv.dtrv_start == (caddr_t)0x401000, "zombie: from the cache");

	/* Another process gets pid 200, mapped elsewhere. */
	fake_proc(200, 9000, 0x800000);
	s = dt_pm_current(200);
	dtt_check(s != NULL && s->ps_stime == 7001 &&
	    dt_pm_find(s, 0x401000) != NULL && dt_pm_find(s, 0x801000) == NULL,
	    "pid reused: the process the cache knows, not the newcomer");
	dt_pm_put(s);
	dtt_check(rdvn(200, 0x801000, &dtrv) == ENOENT,
	    "pid reused: RDVNODE does not answer from the newcomer");

	/* The newcomer attaches: now it owns the entry. */
	s = dt_pm_snapshot(200, 0);
	dt_pm_put(s);
	s = dt_pm_current(200);
	dtt_check(s != NULL && s->ps_stime == 9001 &&
	    dt_pm_find(s, 0x801000) != NULL, "newcomer attached: its maps");
	dt_pm_put(s);
	/* A reference taken before outlives the replaced entry. */
	dtt_check(held != NULL && dt_pm_find(held, 0x401000) != NULL,
	    "an old reference stays valid");
	dt_pm_put(held);
	fake_gone(200);
}

static void
test_track(void)
{
	struct dt_pm_track pt;
	struct dt_pm_snap *s;
	char maps[1024];
	uint64_t pcs[3] = { 0x401010, 0, 0x601010 };

	dtt_tag("track");
	fake_proc(300, 11000, 0x400000);
	dt_pm_track_attach(&pt, 300, 0);
	dtt_check(pt.pt_snap != NULL && pt.pt_stime == 11001,
	    "attach: snapshot and start time");
	dt_pm_track_stack(&pt, 300, pcs, 2);
	dtt_check(pt.pt_next == 0, "known frames: no read");

	/* It loads a library, then a stack shows a frame in it. */
	snprintf(maps, sizeof(maps),
	    "400000-401000 r--p 00000000 08:01 42 %s\n"
	    "401000-403000 r-xp 00001000 08:01 42 %s\n"
	    "600000-602000 r-xp 00000000 08:01 43 %s\n", lib, lib, lib);
	fake_maps(300, maps);
	dt_pm_track_stack(&pt, 300, pcs, 3);
	dtt_check(dt_pm_find(pt.pt_snap, 0x601010) != NULL,
	    "a frame outside: read again, found");
	s = dt_pm_cached(300);
	dtt_check(s != NULL && dt_pm_find(s, 0x601010) != NULL,
	    "the cache has the new read");
	dt_pm_put(s);

	dtt_check(pt.pt_wait == DT_PM_WAIT_MIN && pt.pt_next > 0,
	    "found: next read allowed after the shortest wait");

	/* Another library, but the next read is not due yet. */
	pcs[2] = 0x701010;
	strcat(maps, "700000-702000 r-xp 00000000 08:01 44 /lib/x.so\n");
	fake_maps(300, maps);
	pt.pt_next = dtt_clock_ns(CLOCK_MONOTONIC) + 10000000000ULL;
	dt_pm_track_stack(&pt, 300, pcs, 3);
	dtt_check(dt_pm_find(pt.pt_snap, 0x701010) == NULL,
	    "rate limited: no read before pt_next");
	pt.pt_next = 0;
	dt_pm_track_stack(&pt, 300, pcs, 3);
	dtt_check(dt_pm_find(pt.pt_snap, 0x701010) != NULL,
	    "read once due");

	/* Garbage frames no read finds: the wait doubles, up to a bound. */
	pcs[2] = 0xdead0000;
	pt.pt_next = 0;
	dt_pm_track_stack(&pt, 300, pcs, 3);
	dtt_check(pt.pt_wait == 2 * DT_PM_WAIT_MIN, "not found: wait doubled");
	for (int i = 0; i < 20; i++) {
		pt.pt_next = 0;
		dt_pm_track_stack(&pt, 300, pcs, 3);
	}
	dtt_check(pt.pt_wait == DT_PM_WAIT_MAX, "wait bounded: %llu",
	    (unsigned long long)pt.pt_wait);

	/* The pid changes hands: the tracker keeps what it had. */
	fake_proc(300, 12000, 0x900000);
	pt.pt_next = 0;
	dt_pm_track_stack(&pt, 300, pcs, 3);
	dtt_check(pt.pt_stime == 11001 &&
	    dt_pm_find(pt.pt_snap, 0x601010) != NULL,
	    "another process under the pid: its maps not taken");
	s = dt_pm_cached(300);
	dtt_check(s != NULL && s->ps_stime == 11001,
	    "nor stored in the cache");
	dt_pm_put(s);
	dt_pm_track_fini(&pt);
	fake_gone(300);
}

static void
test_bad(void)
{
	struct dt_pm_snap *s;
	char big[9000];

	dtt_tag("bad");
	fake_stat(400, 'S', 1);
	fake_maps(400, "garbage\n\n1234\nzz-yy r-xp 0 0:0 0 /x\n"
	    "500000-400000 r-xp 00000000 08:01 1 /backwards\n"
	    "400000-400000 r-xp 00000000 08:01 1 /empty\n"
	    "400000-401000 r-x 00000000 08:01 1 /shortperms\n"
	    "12345678901234567-12345678901234568 r-xp 0 08:01 1 /huge\n"
	    "400000-401000 r-xp 00000000 0801 1 /nodev\n"
	    "400000-401000 r-xp 00000000 08:01 /noinode\n"
	    "400000-401000 r-xp 0000000g 08:01 1 /badoffset\n"
	    "400000-401000 r-xp\n");
	errno = 0;
	dtt_check(dt_pm_snapshot(400, 0) == NULL && errno == ESRCH,
	    "maps of nonsense: nothing");
	dtt_check(dt_pm_cached(400) == NULL, "and nothing cached");

	/* A file that no machine has: its size must come out 0. */
	fake_maps(400, "401000-403000 r-xp 00000000 08:01 1 "
	    "/nonexistent-udt/a\n"
	    "402000-404000 r-xp 00000000 08:01 1 /overlaps\n"
	    "300000-301000 r-xp 00000000 08:01 1 /before\n"
	    "405000-406000 r-xp 00000000 08:01 1 /b\n");
	s = dt_pm_snapshot(400, 0);
	dtt_check(s != NULL && s->ps_n == 2 &&
	    strcmp(s->ps_maps[0].pm_path, "/nonexistent-udt/a") == 0 &&
	    strcmp(s->ps_maps[1].pm_path, "/b") == 0 &&
	    s->ps_maps[0].pm_size == 0,
	    "out-of-order lines skipped, missing file has size 0");
	dt_pm_put(s);

	/* A path longer than any line buffer. */
	memset(big, 'p', sizeof(big));
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	{
		char *text;

		if (asprintf(&text, "401000-403000 r-xp 00000000 08:01 1 %s\n",
		    big) == -1)
			exit(2);
		fake_maps(400, text);
		free(text);
	}
	s = dt_pm_snapshot(400, 0);
	dtt_check(s != NULL && s->ps_n == 1 &&
	    strlen(s->ps_maps[0].pm_path) == sizeof(big) - 1,
	    "a long path read whole");
	dt_pm_put(s);

	/* Stat files that do not parse: no process, whatever its maps. */
	fake_maps(400, "401000-403000 r-xp 00000000 08:01 1 "
	    "/nonexistent-udt/a\n");
	{
		char file[160];

		snprintf(file, sizeof(file), "%s/400/stat", root);
		put(file, "400 (no close paren S 1 1\n");
		dtt_check(dt_pm_stime(400) == 0, "stat without ')': no process");
		put(file, "400 (x) S 1 1 1\n");
		dtt_check(dt_pm_stime(400) == 0, "short stat: no process");
		put(file, "400 (x) S 1 1 1 0 -1 4 1 0 0 0 0 0 0 0 20 0 1 0 "
		    "12abc 1\n");
		dtt_check(dt_pm_stime(400) == 0, "bad start time: no process");
		put(file, "%s", "");
		dtt_check(dt_pm_stime(400) == 0, "empty stat: no process");
		errno = 0;
		dtt_check(dt_pm_snapshot(400, 0) == NULL && errno == ESRCH,
		    "no start time, no snapshot");
	}
	dtt_check(dt_pm_stime(-1) == 0 && dt_pm_stime(0) == 0,
	    "pids <= 0: none");
	dt_pm_clear();
	fake_gone(400);
}

static void
test_lru(void)
{
	struct dt_pm_snap *s;
	pid_t pid;

	dtt_tag("lru");
	dt_pm_clear();
	dt_pm_setup(root, 3);
	for (pid = 500; pid < 503; pid++) {
		fake_proc(pid, (unsigned long long)pid, 0x400000);
		dt_pm_put(dt_pm_snapshot(pid, 0));
	}
	dtt_check(dt_pm_count() == 3, "three cached");
	/* 500 used again: 501 is now the least recently used */
	dt_pm_put(dt_pm_cached(500));
	fake_proc(503, 503, 0x400000);
	dt_pm_put(dt_pm_snapshot(503, 0));
	dtt_check(dt_pm_count() == 3, "still three after a fourth");
	for (pid = 500; pid < 504; pid++)
		fake_gone(pid);
	s = dt_pm_current(501);
	dtt_check(s == NULL && errno == ESRCH, "least recently used evicted");
	s = dt_pm_current(500);
	dtt_check(s != NULL, "recently used kept");
	dt_pm_put(s);
	s = dt_pm_current(503);
	dtt_check(s != NULL, "newest kept");
	dt_pm_put(s);
	/* A snapshot of the same pid again replaces, never adds. */
	fake_proc(503, 503, 0x400000);
	dt_pm_put(dt_pm_snapshot(503, 0));
	dt_pm_put(dt_pm_snapshot(503, 0));
	dtt_check(dt_pm_count() == 3, "same pid twice: one entry");
	fake_gone(503);
	dt_pm_clear();
	dtt_check(dt_pm_count() == 0, "cleared");
	dt_pm_setup(root, 0);
}

/*
 * A process with n executable mappings of files with 1000-byte names:
 * about n KB of the cache's memory.
 */
static void
fake_big(pid_t pid, unsigned long long stime, int n)
{
	static char maps[200 * 1100];
	char name[1001];
	size_t len = 0;
	int i;

	memset(name, 'x', sizeof(name) - 1);
	name[0] = '/';
	name[sizeof(name) - 1] = '\0';
	fake_stat(pid, 'S', stime);
	for (i = 0; i < n && i < 200; i++) {
		name[1] = (char)('a' + i % 26);
		len += (size_t)snprintf(maps + len, sizeof(maps) - len,
		    "%x-%x r-xp 00000000 08:01 42 %s\n", 0x400000 + i * 0x2000,
		    0x401000 + i * 0x2000, name);
	}
	fake_maps(pid, maps);
}

/* Whether pid's maps are still known, after its process is gone. */
static int
kept(pid_t pid)
{
	struct dt_pm_snap *s = dt_pm_current(pid);

	dt_pm_put(s);
	return s != NULL;
}

static void
test_budget(void)
{
	struct dt_pm_track pt;
	struct dt_pm_snap *s;
	uint64_t total, user, ev0, one;
	pid_t pid;
	int nkept;

	dtt_tag("budget");
	dt_pm_clear();
	dt_pm_budget(1 << 20, 400 << 10, 0, &total, &user);
	dtt_check(total == 1 << 20 && user == 400 << 10, "budgets as asked");

	/* root's process attaches, exits: before anyone's churn. */
	fake_big(700, 700, 100);
	dt_pm_put(dt_pm_snapshot(700, 0));
	one = dt_pm_bytes();
	dtt_check(one > 100 * 1000 && one < 200 * 1000,
	    "100 mappings, 1000-byte names: %llu bytes counted",
	    (unsigned long long)one);
	fake_gone(700);

	/* One user's churn: 20 such processes, each gone at once. */
	ev0 = dt_pm_evicted();
	for (pid = 600; pid < 620; pid++) {
		fake_big(pid, (unsigned long long)pid, 100);
		dt_pm_put(dt_pm_snapshot(pid, 1000));
		fake_gone(pid);
		dtt_check(dt_pm_user_bytes(1000) <= user &&
		    dt_pm_bytes() <= total, "within budgets after %d: user "
		    "%llu, all %llu", pid - 599,
		    (unsigned long long)dt_pm_user_bytes(1000),
		    (unsigned long long)dt_pm_bytes());
	}
	for (pid = 600, nkept = 0; pid < 620; pid++)
		nkept += kept(pid);
	dtt_check(nkept >= 2 && nkept <= 3 && kept(619) && kept(618) &&
	    !kept(600), "the user's newest kept (%d), its oldest forgotten",
	    nkept);
	dtt_check(dt_pm_evicted() - ev0 == (uint64_t)(20 - nkept),
	    "each forgetting counted (%llu)",
	    (unsigned long long)(dt_pm_evicted() - ev0));
	dtt_check(kept(700), "root's exited process still resolves");

	/* An attached process is forgotten after its user's exited ones. */
	fake_big(800, 800, 100);
	dt_pm_track_attach(&pt, 800, 1001);
	for (pid = 801; pid < 806; pid++) {
		fake_big(pid, (unsigned long long)pid, 100);
		dt_pm_put(dt_pm_snapshot(pid, 1001));
		fake_gone(pid);
	}
	dtt_check(kept(800) && kept(805) && !kept(801),
	    "attached kept, the oldest exited forgotten first");
	/* Those kept used since, so 800 is the least recently used. */
	for (pid = 801; pid < 806; pid++)
		(void)kept(pid);
	dt_pm_track_fini(&pt);
	fake_gone(800);
	fake_big(806, 806, 100);
	dt_pm_put(dt_pm_snapshot(806, 1001));
	fake_gone(806);
	dtt_check(!kept(800) && kept(806), "detached: the oldest goes next");

	/*
	 * Users 1002..1007, each within its own budget, together over the
	 * total: whoever holds most pays, never root.
	 */
	for (pid = 900; pid < 918; pid++) {
		fake_big(pid, (unsigned long long)pid, 100);
		dt_pm_put(dt_pm_snapshot(pid, 1002 + (pid - 900) % 6));
		fake_gone(pid);
		dtt_check(dt_pm_bytes() <= total, "total within budget (%llu)",
		    (unsigned long long)dt_pm_bytes());
	}
	dtt_check(kept(700), "root's exited process still resolves");

	/* A process beyond a user's budget alone: returned, not kept. */
	fake_big(950, 950, 200);
	dt_pm_budget(1 << 20, 100 << 10, 0, NULL, NULL);
	s = dt_pm_snapshot(950, 1010);
	dtt_check(s != NULL && s->ps_n == 200, "too big: still the caller's");
	dt_pm_put(s);
	fake_gone(950);
	dtt_check(!kept(950) && dt_pm_user_bytes(1010) == 0,
	    "but not kept");

	dt_pm_budget(0, 0, 0, &total, &user);
	dtt_check(total == DT_PM_BUDGET_MIN && user == DT_PM_UBUDGET_MIN,
	    "defaults without --max-memory: %llu, %llu a user",
	    (unsigned long long)total, (unsigned long long)user);
	dt_pm_budget(0, 0, 24ULL << 30, &total, &user);
	dtt_check(total == 384ULL << 20 && user == 48ULL << 20,
	    "24 GiB: 384 MiB, 48 a user");
	dt_pm_budget(0, 0, 1ULL << 40, &total, &user);
	dtt_check(total == DT_PM_BUDGET_MAX, "1 TiB: at most 1 GiB");
	dt_pm_budget(0, 0, 0, NULL, NULL);
	dt_pm_clear();
	dtt_check(dt_pm_bytes() == 0 && dt_pm_user_bytes(0) == 0,
	    "cleared: nothing counted");
}

int
main(void)
{
	fake_root("pidmaps");
	snprintf(lib, sizeof(lib), "%s/lib.so", root);
	fake_file(lib, LIBSIZE);
	dt_pm_setup(root, 0);

	test_snapshot();
	test_pidfd();
	test_zombie_reuse();
	test_track();
	test_bad();
	test_lru();
	test_budget();

	dt_pm_clear();
	fake_root_remove();
	return dtt_done();
}
