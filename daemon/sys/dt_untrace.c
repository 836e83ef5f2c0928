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
 * User stacks without the tracer: see dt_untrace.h.
 */
#include <sys/types.h>
#include <sys/uio.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "dt_clock.h"
#include "dt_pidmaps.h"
#include "dt_untrace.h"

/* Whether m is the preload library's text, by its file name. */
static int
dt_untrace_lib(const struct dt_pm_map *m)
{
	const char *b;

	if (m == NULL || m->pm_path == NULL)
		return 0;
	b = strrchr(m->pm_path, '/');
	b = b != NULL ? b + 1 : m->pm_path;
	return strncmp(b, UDT_LIB_PREFIX, sizeof(UDT_LIB_PREFIX) - 1) == 0;
}

/*
 * Whether m is code the library calls into for its own work: libc and
 * the loader (its NEEDED), what its unwinder loads (dlmopen), the vDSO.
 * A sample whose frames above the library's are all such code is the
 * library's work, not the program's (dt_untrace_pcs()).
 */
static int
dt_untrace_libuse(const struct dt_pm_map *m)
{
	static const char *const uses[] = { "libc.so", "ld-linux",
	    "libunwind", "liblzma", "libgcc_s", "[vdso]" };
	const char *b;
	size_t i;

	if (m == NULL || m->pm_path == NULL)
		return 0;
	b = strrchr(m->pm_path, '/');
	b = b != NULL ? b + 1 : m->pm_path;
	for (i = 0; i < sizeof(uses) / sizeof(uses[0]); i++)
		if (strncmp(b, uses[i], strlen(uses[i])) == 0)
			return 1;
	return 0;
}

/* len bytes of pid's memory at va into buf: how many could be read. */
static size_t
dt_untrace_read(pid_t pid, uint64_t va, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)va, len };
	ssize_t n;

	n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	return n > 0 ? (size_t)n : 0;
}

/*
 * The site of the trampoline of pid that holds pc, or 0: the nearest
 * header below pc, 8-byte aligned, within a trampoline's length.  The
 * bytes below pc are read in two pieces, pc's page first, so that a
 * trampoline at the start of its mapping is found without reading the
 * unmapped page below.
 */
static uint64_t
dt_untrace_site(pid_t pid, uint64_t pc)
{
	uint64_t buf[(UDT_TRAMP_MAX + UDT_TRAMP_HDR) / 8 + 1];
	uint64_t top = pc & ~(uint64_t)7, lo, page = pc & ~(uint64_t)4095;
	uint64_t from, w[2];
	size_t n, i;

	lo = top - sizeof(buf);
	if (pc < sizeof(buf) + 4096)
		return 0;
	/* The part in pc's page, then the rest, if the first had none. */
	for (from = lo > page ? lo : page; ; from = lo) {
		n = dt_untrace_read(pid, from, (char *)buf + (from - lo),
		    top - from) / 8;
		for (i = n; i-- > 1; ) {
			w[0] = buf[(from - lo) / 8 + i - 1];
			w[1] = buf[(from - lo) / 8 + i];
			/*
			 * The site, from the header's own address (the
			 * magic says relative: udt_wire.h).
			 */
			if (w[0] == UDT_TRAMP_MAGIC && w[1] != 0 &&
			    pc - (from + 8 * (i + 1)) < UDT_TRAMP_MAX)
				return from + 8 * (i - 1) + w[1];
		}
		if (from == lo || n * 8 != top - from)
			return 0;
		/* The header may straddle the page boundary: read again. */
	}
}

/*
 * Processes the cache does not know: one nobody traces, or a tracee whose
 * library has not attached yet.  The library's constructors run before
 * its attach's handshake puts the process in the cache, and a sample
 * taken there (its first page faults, say) showed the library's frames.
 * Their stacks are checked against the library's text found by a read of
 * their mappings, kept in a small table: while dtd has known the pid for
 * less than DT_UT_YOUNG_NS, a read that found no library is made again
 * after DT_UT_AGAIN_NS, then twice as long each time (a sample may come
 * before the loader mapped it, which it does first), and after that it
 * stands, so an untraced process costs eight reads at most; one that
 * found it is made again each DT_UT_YOUNG_NS (an exec may have taken it
 * away).  The table is DT_UT_NWAYS-way associative, a new pid taking
 * its set's least recently read way, and all reads together are held to
 * DT_UT_MAXREADS a second: any user's processes reach this (a sample of
 * each), and a read, a stat of every file mapped, runs on the threads
 * that drain every reader's events.  A process over the budget keeps its
 * stack as it is until a read is allowed.
 *
 * A slot is written under dt_ut_mtx, its us_gen odd while it changes;
 * readers take no lock and try again when us_gen moved.
 */
#define DT_UT_NSETS	64
#define DT_UT_NWAYS	4
#define DT_UT_NRANGE	2		/* the library's mappings kept */
#define DT_UT_YOUNG_NS	1000000000ULL
#define DT_UT_AGAIN_NS	5000000ULL
#define DT_UT_MAXREADS	64		/* a second, all processes */

struct dt_ut_slot {
	unsigned int	 us_gen;	/* [a] odd while written */
	pid_t		 us_pid;	/* [g] 0: free */
	uint64_t	 us_first;	/* [g] monotonic ns first looked at */
	uint64_t	 us_read;	/* [g] monotonic ns of the last read */
	uint64_t	 us_again;	/* [g] ns from it to the next, no library */
	uint64_t	 us_lo[DT_UT_NRANGE];	/* [g] the library's text, */
	uint64_t	 us_hi[DT_UT_NRANGE];	/* lo == hi: none */
};

static struct dt_ut_slot dt_ut_tab[DT_UT_NSETS][DT_UT_NWAYS];
static pthread_mutex_t dt_ut_mtx = PTHREAD_MUTEX_INITIALIZER;
static uint64_t	dt_ut_window;		/* [m] monotonic ns it began */
static unsigned int dt_ut_nreads;	/* [m] reads in it */

/* A consistent copy of slot us into *c.  Any thread, no lock. */
static void
dt_ut_load(const struct dt_ut_slot *us, struct dt_ut_slot *c)
{
	unsigned int g, i;

	for (;;) {
		g = __atomic_load_n(&us->us_gen, __ATOMIC_ACQUIRE);
		if (g & 1)
			continue;
		c->us_pid = __atomic_load_n(&us->us_pid, __ATOMIC_RELAXED);
		c->us_first = __atomic_load_n(&us->us_first, __ATOMIC_RELAXED);
		c->us_read = __atomic_load_n(&us->us_read, __ATOMIC_RELAXED);
		c->us_again = __atomic_load_n(&us->us_again, __ATOMIC_RELAXED);
		for (i = 0; i < DT_UT_NRANGE; i++) {
			c->us_lo[i] = __atomic_load_n(&us->us_lo[i],
			    __ATOMIC_RELAXED);
			c->us_hi[i] = __atomic_load_n(&us->us_hi[i],
			    __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&us->us_gen, __ATOMIC_RELAXED) == g)
			return;
	}
}

/* Write c into slot us.  Under dt_ut_mtx. */
static void
dt_ut_store(struct dt_ut_slot *us, const struct dt_ut_slot *c)
{
	unsigned int g = us->us_gen, i;

	__atomic_store_n(&us->us_gen, g + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&us->us_pid, c->us_pid, __ATOMIC_RELAXED);
	__atomic_store_n(&us->us_first, c->us_first, __ATOMIC_RELAXED);
	__atomic_store_n(&us->us_read, c->us_read, __ATOMIC_RELAXED);
	__atomic_store_n(&us->us_again, c->us_again, __ATOMIC_RELAXED);
	for (i = 0; i < DT_UT_NRANGE; i++) {
		__atomic_store_n(&us->us_lo[i], c->us_lo[i], __ATOMIC_RELAXED);
		__atomic_store_n(&us->us_hi[i], c->us_hi[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&us->us_gen, g + 2, __ATOMIC_RELEASE);
}

/* Whether c, pid's slot, says its mappings are due for a read at now. */
static bool
dt_ut_due(const struct dt_ut_slot *c, uint64_t now)
{
	if (c->us_lo[0] != c->us_hi[0])
		return now - c->us_read >= DT_UT_YOUNG_NS;
	return now - c->us_first < DT_UT_YOUNG_NS &&
	    now - c->us_read >= c->us_again;
}

/*
 * pid's way of its set into *c (a copy), or, when it has none, the way
 * a new pid takes: a free one, else the one read longest ago.  Whether
 * pid had one.  Any thread, no lock.
 */
static bool
dt_ut_find(pid_t pid, struct dt_ut_slot **usp, struct dt_ut_slot *c)
{
	struct dt_ut_slot *set = dt_ut_tab[(unsigned int)pid % DT_UT_NSETS];
	struct dt_ut_slot w;
	uint64_t oldest = UINT64_MAX;
	unsigned int i;

	*usp = &set[0];
	for (i = 0; i < DT_UT_NWAYS; i++) {
		dt_ut_load(&set[i], &w);
		if (w.us_pid == pid) {
			*usp = &set[i];
			*c = w;
			return true;
		}
		if (w.us_pid == 0 ? oldest != 0 : w.us_read < oldest) {
			oldest = w.us_pid == 0 ? 0 : w.us_read;
			*usp = &set[i];
		}
	}
	return false;
}

/*
 * The library's text in pid, a process the cache does not know, into
 * lo[], hi[] (empty ranges: none), from the table or a read.  Any
 * thread, no lock held: the read is made outside dt_ut_mtx, by the one
 * caller that claimed it.
 */
static void
dt_ut_lib(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct dt_ut_slot *us, c;
	struct dt_pm_snap *s;
	uint64_t now = dt_clock_ns(CLOCK_MONOTONIC);
	size_t i;
	unsigned int n;

	memset(&c, 0, sizeof(c));
	if (dt_ut_find(pid, &us, &c) && !dt_ut_due(&c, now))
		goto out;
	pthread_mutex_lock(&dt_ut_mtx);
	if (dt_ut_find(pid, &us, &c) && !dt_ut_due(&c, now)) {
		pthread_mutex_unlock(&dt_ut_mtx);
		goto out;
	}
	if (now - dt_ut_window >= 1000000000ULL) {
		dt_ut_window = now;
		dt_ut_nreads = 0;
	}
	if (dt_ut_nreads >= DT_UT_MAXREADS) {
		/* Over the budget: what the table says, or nothing. */
		pthread_mutex_unlock(&dt_ut_mtx);
		if (c.us_pid != pid)
			memset(&c, 0, sizeof(c));
		goto out;
	}
	dt_ut_nreads++;
	if (c.us_pid != pid) {
		memset(&c, 0, sizeof(c));
		c.us_pid = pid;
		c.us_first = now;
		c.us_again = DT_UT_AGAIN_NS / 2;
	}
	c.us_again *= 2;
	c.us_read = now;		/* claimed: the others go on */
	dt_ut_store(us, &c);
	pthread_mutex_unlock(&dt_ut_mtx);

	memset(c.us_lo, 0, sizeof(c.us_lo));
	memset(c.us_hi, 0, sizeof(c.us_hi));
	if ((s = dt_pm_read(pid, NULL)) != NULL) {
		for (i = 0, n = 0; i < s->ps_n && n < DT_UT_NRANGE; i++) {
			if (!dt_untrace_lib(&s->ps_maps[i]))
				continue;
			c.us_lo[n] = s->ps_maps[i].pm_start;
			c.us_hi[n++] = s->ps_maps[i].pm_end;
		}
		dt_pm_put(s);
	}
	pthread_mutex_lock(&dt_ut_mtx);
	if (__atomic_load_n(&us->us_pid, __ATOMIC_RELAXED) == pid &&
	    us->us_read == now)
		dt_ut_store(us, &c);
	pthread_mutex_unlock(&dt_ut_mtx);
out:
	for (n = 0; n < DT_UT_NRANGE; n++) {
		lo[n] = c.us_lo[n];
		hi[n] = c.us_hi[n];
	}
}

/*
 * The traced images' ring headers by pid (dt_untrace_track()), looked at
 * only for a leaf the snapshot does not know.  The newest image of a
 * pid is at its chain's head.  [m] dt_um_mtx.
 */
#define DT_UM_NB	1024
static pthread_mutex_t	 dt_um_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct dt_untrace_ent *dt_um_tab[DT_UM_NB];	/* [m] */

void
dt_untrace_track(struct dt_untrace_ent *ent, pid_t pid,
    const struct udt_ring_hdr *hdr)
{
	struct dt_untrace_ent **b = &dt_um_tab[(unsigned int)pid % DT_UM_NB];

	ent->ue_pid = pid;
	ent->ue_hdr = hdr;
	pthread_mutex_lock(&dt_um_mtx);
	ent->ue_next = *b;
	*b = ent;
	pthread_mutex_unlock(&dt_um_mtx);
}

/*
 * What an image said it mapped, kept a while after its ring is gone: a
 * sample taken in its module is read from perf's buffers when the reader
 * gets to it, which on a busy machine may be after the process exited
 * and dtd freed its ring (a short-lived decoding start lasts 100 ms).
 * The newest DT_UM_NGONE, each for DT_UM_GONE_NS.  [m] dt_um_mtx.
 */
#define DT_UM_NGONE	64
#define DT_UM_GONE_NS	(5 * 1000000000ULL)
static struct dt_um_gone {
	pid_t		 ug_pid;	/* 0: free */
	uint64_t	 ug_lo, ug_hi;
	uint64_t	 ug_at;		/* monotonic ns it went */
} dt_um_gone[DT_UM_NGONE];
static unsigned int	 dt_um_ngone;	/* [m] the next slot to take */

void
dt_untrace_untrack(struct dt_untrace_ent *ent)
{
	struct dt_untrace_ent **b;
	struct dt_um_gone *g;
	uint64_t lo, hi;

	/* The header's last reading, while it is still mapped. */
	hi = __atomic_load_n(&ent->ue_hdr->rh_cshi, __ATOMIC_ACQUIRE);
	lo = __atomic_load_n(&ent->ue_hdr->rh_cslo, __ATOMIC_RELAXED);
	pthread_mutex_lock(&dt_um_mtx);
	for (b = &dt_um_tab[(unsigned int)ent->ue_pid % DT_UM_NB]; *b != NULL;
	    b = &(*b)->ue_next)
		if (*b == ent) {
			*b = ent->ue_next;
			break;
		}
	if (lo < hi && hi - lo <= (1ULL << 30)) {
		g = &dt_um_gone[dt_um_ngone++ % DT_UM_NGONE];
		g->ug_pid = ent->ue_pid;
		g->ug_lo = lo;
		g->ug_hi = hi;
		g->ug_at = dt_clock_ns(CLOCK_MONOTONIC);
	}
	pthread_mutex_unlock(&dt_um_mtx);
}

/* The newest departed image of pid's, gone lately.  Under dt_um_mtx. */
static bool
dt_um_gone_find(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	const struct dt_um_gone *g, *best = NULL;
	uint64_t now = dt_clock_ns(CLOCK_MONOTONIC);
	unsigned int i;

	for (i = 0; i < DT_UM_NGONE; i++) {
		g = &dt_um_gone[i];
		if (g->ug_pid == pid && now - g->ug_at < DT_UM_GONE_NS &&
		    (best == NULL || g->ug_at > best->ug_at))
			best = g;
	}
	if (best == NULL)
		return false;
	*lo = best->ug_lo;
	*hi = best->ug_hi;
	return true;
}

/*
 * The code pid's newest image says it mapped since its hello into *lo,
 * *hi (or said, if it is gone since lately: dt_um_gone); false: none.
 * Its word only: a tracee that lies hides frames of its own.
 */
static bool
dt_um_find(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct dt_untrace_ent *e;
	bool found = false;

	pthread_mutex_lock(&dt_um_mtx);
	for (e = dt_um_tab[(unsigned int)pid % DT_UM_NB]; e != NULL;
	    e = e->ue_next)
		if (e->ue_pid == pid) {
			*hi = __atomic_load_n(&e->ue_hdr->rh_cshi,
			    __ATOMIC_ACQUIRE);
			*lo = __atomic_load_n(&e->ue_hdr->rh_cslo,
			    __ATOMIC_RELAXED);
			found = *lo < *hi && *hi - *lo <= (1ULL << 30);
			break;
		}
	/* No image of it now: the newest gone, if lately. */
	if (e == NULL)
		found = dt_um_gone_find(pid, lo, hi);
	pthread_mutex_unlock(&dt_um_mtx);
	return found;
}

/* Whether pc is in one of the ranges lo[], hi[]. */
static bool
dt_ut_in(uint64_t pc, const uint64_t *lo, const uint64_t *hi)
{
	unsigned int n;

	for (n = 0; n < DT_UT_NRANGE; n++)
		if (pc >= lo[n] && pc < hi[n])
			return true;
	return false;
}

/* The first of pcs[from, n) not in the library's text, or n. */
static unsigned int
dt_ut_pastlib(const struct dt_pm_snap *s, const uint64_t *pcs,
    unsigned int from, unsigned int n)
{
	while (from < n && dt_untrace_lib(dt_pm_find(s, pcs[from])))
		from++;
	return from;
}

/* Whether every one of pcs[from, to) is in code the library uses. */
static bool
dt_ut_alluse(const struct dt_pm_snap *s, const uint64_t *pcs,
    unsigned int from, unsigned int to)
{
	while (from < to && dt_untrace_libuse(dt_pm_find(s, pcs[from])))
		from++;
	return from == to;
}

/* Whether pc is in the loader's text. */
static bool
dt_ut_loader(const struct dt_pm_snap *s, uint64_t pc)
{
	const struct dt_pm_map *m = dt_pm_find(s, pc);
	const char *b;

	if (m == NULL || m->pm_path == NULL)
		return false;
	b = strrchr(m->pm_path, '/');
	b = b != NULL ? b + 1 : m->pm_path;
	return strncmp(b, "ld-linux", 8) == 0;
}

/*
 * A trampoline (anonymous code, or code mapped since the snapshot)
 * stands for its site, under a run of the library's frames: pcs[k]
 * rewritten.  A frame of the library's entry is followed by its site
 * already.
 */
static void
dt_ut_site(pid_t pid, const struct dt_pm_snap *s, uint64_t *pcs,
    unsigned int k, unsigned int n)
{
	const struct dt_pm_map *m;
	uint64_t site;

	if (k < n && ((m = dt_pm_find(s, pcs[k])) == NULL ||
	    m->pm_path == NULL) && (site = dt_untrace_site(pid, pcs[k])) != 0)
		pcs[k] = site;
}

/* The work of both: pcs[*count], a user stack of pid, in place. */
static void
dt_untrace_pcs(pid_t pid, uint64_t *pcs, unsigned int *count)
{
	struct dt_pm_snap *s;
	unsigned int i = 0, j, k, n = *count, was = *count;
	uint64_t lo[DT_UT_NRANGE], hi[DT_UT_NRANGE];
	bool cut = false;

	if (n == 0 || pid <= 0)
		return;
	if ((s = dt_pm_cached(pid)) == NULL) {
		/*
		 * Not attached yet: the library's constructor, whose calls
		 * into libc or the loader (getenv, snprintf) have no map
		 * here to be told apart from the program's.  No code of
		 * the program runs under the library's frames there, so
		 * the stack is cut through its deepest one, not only its
		 * run at the leaf.  (A fork's child before its own hello
		 * could be in a handler of the program under the entry:
		 * those frames go too, in that short window.)
		 */
		dt_ut_lib(pid, lo, hi);
		for (k = n; k-- > 0; )
			if (dt_ut_in(pcs[k], lo, hi)) {
				i = k + 1;
				break;
			}
		goto out;
	}
	/* The library's frames, from the leaf down. */
	i = dt_ut_pastlib(s, pcs, 0, n);
	dt_ut_site(pid, s, pcs, i, n);
	/*
	 * The library's frames deeper down, under frames not its own.
	 * With only libc, the loader or the unwinder's objects above them
	 * (the entry's memcpy, udt_proc_status;strstr), those are the
	 * library's work too: cut with it, the sample stands at the site
	 * under it as one in the entry does.  With a frame of the
	 * program's above them, the program's code ran under a hook (a
	 * signal handler delivered in the entry): the library's run is cut
	 * out of the middle and the program's frames stay on both sides.
	 */
	for (j = i; j < n; j++) {
		if (!dt_untrace_lib(dt_pm_find(s, pcs[j])))
			continue;
		k = dt_ut_pastlib(s, pcs, j, n);
		dt_ut_site(pid, s, pcs, k, n);
		if (dt_ut_alluse(s, pcs, i, j)) {
			i = k;
			cut = true;
		} else {
			memmove(&pcs[j], &pcs[k], (n - k) * sizeof(pcs[0]));
			n -= k - j;
		}
		j = i > j ? i - 1 : j - 1;
	}
	/*
	 * Such a run cut with nothing left but the loader's frames (the
	 * library's constructor under _dl_init): work the program untraced
	 * never does.  Dropped whole.  A sample left standing at a site in
	 * libc, its walk ending there (code without frame pointers), is
	 * still the program's call, as one cut at the leaf alone.
	 */
	if (cut) {
		for (k = i; k < n && dt_ut_loader(s, pcs[k]); k++)
			continue;
		if (k == n)
			i = n;
	}
	/*
	 * Code the library mapped since the snapshot, which it said is its
	 * own (its disassembler's module), anywhere in the stack: the stack
	 * is the library's work (the module calls nothing of the program's,
	 * only libc's printing), and the walk under such code, which keeps
	 * no frame pointers, noise.  Dropped whole.
	 */
	if (i < n && dt_um_find(pid, &lo[0], &hi[0]))
		for (k = i; k < n; k++)
			if (pcs[k] >= lo[0] && pcs[k] < hi[0]) {
				i = n;
				break;
			}
	dt_pm_put(s);
out:
	if (i == 0 && n == was)
		return;
	for (k = 0; i < n; )
		pcs[k++] = pcs[i++];
	for (i = k; i < was; i++)
		pcs[i] = 0;
	*count = k;
}

/* st_pc's unsigned long is uint64_t here (LP64), so one walk does both. */
_Static_assert(_Generic((uint64_t)0, unsigned long: 1, default: 0),
    "uint64_t is unsigned long");

void
dt_ustack_untrace(pid_t pid, struct stacktrace *st)
{
	dt_untrace_pcs(pid, st->st_pc, &st->st_count);
}

void
dt_ustack_untrace_deep(pid_t pid, uint64_t *pcs, unsigned int *count)
{
	dt_untrace_pcs(pid, pcs, count);
}
