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
 * The library's frames cut from user stacks (daemon/sys/dt_untrace.c),
 * against a fake /proc (pm_fake.c): of processes the cache does not know
 * yet (a tracee in its constructors), and of cached ones, where the
 * library's frames stand under libc's or a signal handler's.  No root
 * needed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "dt_pidmaps.h"
#include "dt_untrace.h"
#include "dtt.h"
#include "pm_fake.h"

/* A process the cache does not know, with or without the library. */
static void
fake_tracee(pid_t pid, const char *path, int withlib)
{
	char maps[1024];

	fake_stat(pid, 'S', 777);
	snprintf(maps, sizeof(maps),
	    "400000-402000 r-xp 00000000 08:01 7 /usr/bin/prog\n"
	    "%s",
	    withlib ? "7f0000001000-7f0000005000 r-xp 00001000 08:01 9 " : "");
	if (withlib)
		snprintf(maps + strlen(maps), sizeof(maps) - strlen(maps),
		    "%s\n", path);
	fake_maps(pid, maps);
}

static unsigned int
untrace3(pid_t pid, uint64_t *leaf)
{
	struct stacktrace st;

	memset(&st, 0, sizeof(st));
	st.st_pc[0] = 0x7f0000001100;	/* in the library, if mapped */
	st.st_pc[1] = 0x7f0000004ff0;
	st.st_pc[2] = 0x400100;		/* the program */
	st.st_count = 3;
	dt_ustack_untrace(pid, &st);
	*leaf = st.st_pc[0];
	return st.st_count;
}

static void
test_untrace_unknown(void)
{
	struct timespec ts = { 0, 6 * 1000 * 1000 };
	char path[160];
	uint64_t leaf;
	unsigned int i, n;

	dtt_tag("untrace");
	snprintf(path, sizeof(path), "%s/" UDT_LIB_PREFIX ".so", root);
	fake_file(path, 4096);

	fake_tracee(4301, path, 1);
	dtt_check(untrace3(4301, &leaf) == 1 && leaf == 0x400100,
	    "not in the cache, the library mapped: its frames cut");
	fake_tracee(4302, path, 0);
	dtt_check(untrace3(4302, &leaf) == 3 && leaf == 0x7f0000001100,
	    "not in the cache, no library: the stack as it was");
	/* The loader maps the library after a first sample was read. */
	fake_tracee(4302, path, 1);
	nanosleep(&ts, NULL);
	dtt_check(untrace3(4302, &leaf) == 1 && leaf == 0x400100,
	    "a young process read again: the library found, cut");
	fake_gone(4301);
	fake_gone(4302);

	/*
	 * Four pids of one set of the table (64 sets) stay in it: each
	 * found with the library, which then leaves their maps, is still
	 * cut (a read that found it stands for a second).  A fifth takes
	 * the way of the one read longest ago, which is read again.
	 */
	for (i = 0; i < 5; i++)
		fake_tracee(5000 + 64 * i, path, 1);
	for (i = 0; i < 4; i++)
		(void)untrace3(5000 + 64 * i, &leaf);
	for (i = 0; i < 5; i++)
		fake_tracee(5000 + 64 * i, path, 0);
	for (i = 0, n = 0; i < 4; i++)
		n += untrace3(5000 + 64 * i, &leaf) == 1;
	dtt_check(n == 4, "four pids of one set kept: %u of 4 cut", n);
	(void)untrace3(5000 + 64 * 4, &leaf);
	dtt_check(untrace3(5000, &leaf) == 3,
	    "a fifth took the oldest way: read again, no library now");
	for (i = 0; i < 5; i++)
		fake_gone(5000 + 64 * i);
	unlink(path);
}

/* A cached tracee's stack pcs[n], untraced: the count left, in pcs. */
static unsigned int
untrace_n(pid_t pid, const uint64_t *pcs, unsigned int n, uint64_t *out)
{
	struct stacktrace st;

	memset(&st, 0, sizeof(st));
	memcpy(st.st_pc, pcs, n * sizeof(pcs[0]));
	st.st_count = n;
	dt_ustack_untrace(pid, &st);
	memcpy(out, st.st_pc, sizeof(st.st_pc[0]) * n);
	return st.st_count;
}

/*
 * The library's frames under others: its own work over libc (dropped,
 * or cut to the site under the entry), a program's signal handler
 * delivered in the entry (the library cut out of the middle).
 */
static void
test_untrace_deep(void)
{
	enum { PROG = 0x400100, MAIN = 0x400200, HANDLER = 0x400300,
	    LIBC = 0x7f0000100100, SITE = 0x7f0000100200,
	    RESTORE = 0x7f0000100300, LD = 0x7f0000300100,
	    LIB1 = 0x7f0000001100, LIB2 = 0x7f0000002100 };
	char path[160], maps[1024];
	uint64_t out[8];
	unsigned int n;

	dtt_tag("untrace-deep");
	snprintf(path, sizeof(path), "%s/" UDT_LIB_PREFIX ".so", root);
	fake_file(path, 4096);
	fake_stat(4401, 'S', 777);
	snprintf(maps, sizeof(maps),
	    "400000-402000 r-xp 00000000 08:01 7 /usr/bin/prog\n"
	    "7f0000001000-7f0000005000 r-xp 00001000 08:01 9 %s\n"
	    "7f0000100000-7f0000200000 r-xp 00000000 08:01 11 "
	    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	    "7f0000300000-7f0000330000 r-xp 00000000 08:01 12 "
	    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n", path);
	fake_maps(4401, maps);
	dt_pm_put(dt_pm_snapshot(4401, 0));

	{
		const uint64_t st[] = { LIBC, LIB1, LIB2, LD, LD };

		n = untrace_n(4401, st, 5, out);
		dtt_check(n == 0, "the library's constructor over libc, "
		    "under the loader: dropped (%u left)", n);
	}
	{
		const uint64_t st[] = { LIBC, LIB1, LIB2, SITE, MAIN };

		n = untrace_n(4401, st, 5, out);
		dtt_check(n == 2 && out[0] == SITE && out[1] == MAIN &&
		    out[2] == 0, "libc called by the entry: the site and its "
		    "callers (%u left)", n);
	}
	{
		const uint64_t st[] = { HANDLER, RESTORE, LIB1, LIB2, SITE,
		    MAIN };

		n = untrace_n(4401, st, 6, out);
		dtt_check(n == 4 && out[0] == HANDLER && out[1] == RESTORE &&
		    out[2] == SITE && out[3] == MAIN && out[4] == 0,
		    "a handler delivered in the entry: the library cut out of "
		    "the middle (%u left)", n);
	}
	{
		const uint64_t st[] = { LIB1, SITE, MAIN };

		n = untrace_n(4401, st, 3, out);
		dtt_check(n == 2 && out[0] == SITE && out[1] == MAIN,
		    "in the entry: at the site, as before (%u left)", n);
	}
	{
		const uint64_t st[] = { LIB1, SITE };

		n = untrace_n(4401, st, 2, out);
		dtt_check(n == 1 && out[0] == SITE,
		    "in the entry, the walk ending at the site: kept");
	}
	{
		const uint64_t st[] = { LIBC, LIB1, LIB2, SITE };

		n = untrace_n(4401, st, 4, out);
		dtt_check(n == 1 && out[0] == SITE, "libc called by the "
		    "entry, the walk ending at the site: kept (%u left)", n);
	}
	{
		const uint64_t st[] = { LIBC, PROG, MAIN };

		n = untrace_n(4401, st, 3, out);
		dtt_check(n == 3 && out[0] == LIBC && out[2] == MAIN,
		    "nothing of the library's: as it was");
	}
	fake_gone(4401);
	unlink(path);
}

/*
 * The library's disassembler module, mapped after the snapshot and said
 * in the ring's header (rh_cslo, rh_cshi): a stack with a frame there is
 * dropped whole, while the image is tracked and for a while after its
 * ring went (a sample read late, the process gone), not for another pid.
 */
static void
test_untrace_module(void)
{
	enum { MAIN = 0x400200, MOD = 0x7f0000600100, JUNK = 0x3334323564 };
	struct udt_ring_hdr hdr;
	struct dt_untrace_ent ent;
	uint64_t out[4];
	unsigned int n;

	dtt_tag("untrace-module");
	fake_stat(4501, 'S', 777);
	fake_stat(4502, 'S', 777);
	fake_maps(4501, "400000-402000 r-xp 00000000 08:01 7 /usr/bin/prog\n");
	fake_maps(4502, "400000-402000 r-xp 00000000 08:01 7 /usr/bin/prog\n");
	dt_pm_put(dt_pm_snapshot(4501, 0));
	dt_pm_put(dt_pm_snapshot(4502, 0));
	memset(&hdr, 0, sizeof(hdr));
	hdr.rh_cslo = 0x7f0000600000;
	hdr.rh_cshi = 0x7f0000700000;
	dt_untrace_track(&ent, 4501, &hdr);
	{
		const uint64_t st[] = { MOD, JUNK };

		n = untrace_n(4501, st, 2, out);
		dtt_check(n == 0, "a frame in the module, a walk of junk "
		    "above it: dropped (%u left)", n);
		n = untrace_n(4501, (const uint64_t[]){ MOD, MAIN }, 2, out);
		dtt_check(n == 0, "a frame in the module: dropped");
	}
	dt_untrace_untrack(&ent);
	/* What a freed ring said, unmapped after the untrack. */
	memset(&hdr, 0xa5, sizeof(hdr));
	n = untrace_n(4501, (const uint64_t[]){ MOD, JUNK }, 2, out);
	dtt_check(n == 0, "its ring gone, read late: still dropped "
	    "(%u left)", n);
	n = untrace_n(4502, (const uint64_t[]){ MOD, MAIN }, 2, out);
	dtt_check(n == 2 && out[0] == MOD, "another pid at that address: "
	    "as it was (%u left)", n);
	fake_gone(4501);
	fake_gone(4502);
}

int
main(void)
{
	fake_root("untrace");
	dt_pm_setup(root, 0);

	test_untrace_unknown();
	test_untrace_deep();
	test_untrace_module();

	dt_pm_clear();
	fake_root_remove();
	return dtt_done();
}
