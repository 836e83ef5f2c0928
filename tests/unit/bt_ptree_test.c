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
 * btrace -c's tree (client/bt_ptree.c) judging a folded entry of dtd's
 * table (ptree_member_upto()): btrace takes in the forks after the read,
 * so a pid forked anew since is known and must be judged as its holder
 * before, to the nanosecond: a tree member's entry kept after an
 * outsider took its pid, an outsider's left out after a tree member took
 * its.  The connector is not opened: its announcements are fed here as
 * bt_ptree_cn.c feeds them, under pt_mtx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <errno.h>

#include "btrace.h"
#include "bt_ptree.h"
#include "udt_mapsq.h"

int		 g_verbose;
const char	*g_progname = "bt_ptree_test";

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL)
		abort();
	return p;
}

int	pt_cn_open(void) { return -1; }
size_t	pt_cn_drain(void) { return 0; }
int	pt_cn_start(void) { return 0; }
void	pt_cn_stop(void) { }

#define MS		1000000ULL
#define SHELL		1000
#define KID		2000	/* the tree's, then an outsider's */
#define OUTPID		3000	/* an outsider's, then the tree's */
#define STRANGER	9999	/* a launched program's, no kin of the tree */
/* Gone from /proc (above any pid_max but the largest), known to "dtd". */
#define GONE		4190001	/* a child of GONEPAR */
#define GONEPAR		4190002	/* a subshell of the tree's shell */
#define REUSED		4190003	/* dtd knows a later holder only */
#define UNKNOWN		4190004	/* dtd knows nothing */

static int	fails;
static uint64_t	t0;		/* the test's start, realtime ns */
static int	kin_asks;

/* dtd's answers (udt_kinq()): what the hellos would have noted. */
int
udt_kinq(const char *sock, pid_t pid, pid_t *ppid, uint64_t *start)
{
	(void)sock;
	kin_asks++;
	switch (pid) {
	case GONE:
		*ppid = GONEPAR;
		*start = t0 + 400 * MS;
		return 0;
	case GONEPAR:
		*ppid = SHELL;
		*start = t0 + 390 * MS;
		return 0;
	case REUSED:
		*ppid = SHELL;
		*start = t0 + 900 * MS;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

static struct timespec
ts_of(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / 1000000000ULL);
	ts.tv_nsec = (long)(ns % 1000000000ULL);
	return ts;
}

static void
expect(const char *what, pid_t pid, uint64_t upto, int want)
{
	struct timespec ts = ts_of(upto);
	int got = ptree_member_upto(pid, &ts, 1);

	if (got != want) {
		printf("FAIL: %s: pid %d %s, not %s\n", what, (int)pid,
		    got ? "the tree's" : "an outsider's",
		    want ? "the tree's" : "an outsider's");
		fails++;
	} else
		printf("ok: %s\n", what);
}

static void
fork_at(pid_t parent, pid_t child, uint64_t ns)
{
	pthread_mutex_lock(&pt_mtx);
	pt_fork(parent, child, ns);
	pthread_mutex_unlock(&pt_mtx);
}

int
main(void)
{
	struct timespec now;
	uint64_t t;

	ptree_shell(SHELL);
	clock_gettime(CLOCK_REALTIME, &now);
	t = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	pthread_mutex_lock(&pt_mtx);
	pt_exec(SHELL, t + 1 * MS);
	pthread_mutex_unlock(&pt_mtx);

	fork_at(SHELL, KID, t + 10 * MS);
	expect("a child of the tree", KID, t + 11 * MS, 1);
	expect("a pid the tree never had", 4000, t + 11 * MS, 0);

	/* the child exits, an outsider takes its pid 100 ms on */
	fork_at(STRANGER, KID, t + 110 * MS);
	expect("the child's entry read 1 ms before the outsider's fork",
	    KID, t + 109 * MS, 1);
	expect("the child's entry read 1 ns before the outsider's fork",
	    KID, t + 110 * MS - 1, 1);
	expect("the outsider's entry, read after its fork", KID,
	    t + 111 * MS, 0);

	/* an outsider's pid taken by a child of the tree */
	fork_at(STRANGER, OUTPID, t + 200 * MS);
	expect("an outsider's pid", OUTPID, t + 201 * MS, 0);
	fork_at(SHELL, OUTPID, t + 300 * MS);
	expect("the outsider's entry read 1 ms before the tree's fork",
	    OUTPID, t + 299 * MS, 0);
	expect("the tree's entry, read after its fork", OUTPID,
	    t + 301 * MS, 1);

	/*
	 * Forks missed (an overflow; without a connector at all, always):
	 * /proc, then dtd's word for what /proc has forgotten.
	 */
	t0 = t;
	pthread_mutex_lock(&pt_mtx);
	pt_overflow();
	pthread_mutex_unlock(&pt_mtx);
	expect("a process gone with its parent, both noted by dtd", GONE,
	    t + 401 * MS, 1);
	expect("its parent, placed on the way", GONEPAR, t + 402 * MS, 1);
	expect("a pid dtd knows only of a later holder", REUSED,
	    t + 500 * MS, 0);
	expect("a pid dtd knows nothing of", UNKNOWN, t + 500 * MS, 0);
	if (kin_asks < 3) {
		printf("FAIL: dtd asked %d times, not at least 3\n",
		    kin_asks);
		fails++;
	}

	ptree_close();
	return fails != 0;
}
