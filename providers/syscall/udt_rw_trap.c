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
 * Trapped sites, and whether a traced thread needs dispatch at all.
 *
 * Dispatch costs every call of a thread that has it on, rewritten or
 * not, tens of ns in the kernel's slow entry path.  It is there for the
 * sites the rewriter could not prove a window around.  Most of those are
 * proven instructions all the same (a function with a jump table decodes
 * whole; only what lands near the call is unknown), and a one-byte
 * patch has no inside for a jump to land in: their first byte becomes
 * int3, and the SIGTRAP handler (udt_sud.c) makes the call as dispatch's
 * SIGSYS handler does.  A trap costs what a dispatch costs, a signal,
 * but only where it is: these are cold paths (a robust mutex, the
 * posix_spawn child, a clone's, signal return).
 *
 * Once every `syscall' byte pair of every executable mapping is either
 * rewritten or trapped, nothing is left for dispatch to catch: the
 * process is complete, and its threads trace without dispatch.  New
 * executable memory (dlopen, a JIT) ends that for good: its sites are
 * neither, so a thread that records turns dispatch on, as it did before
 * there were traps: the one that made the memory at once, the others at
 * their next recorded call.  One of those that, before such a call, runs
 * a system call instruction of the new code is not seen: the price of
 * not interrupting every thread (a signal would break their blocking
 * calls).
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before other threads exist
 *	[a]	atomic
 */
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"

/* A trapped site and its stub: `syscall; jmp site + 2'. */
struct udt_rw_trapent {
	uintptr_t	te_site;
	uintptr_t	te_stub;
};

static struct udt_rw_trapent *udt_rw_traps;	/* [I] sorted by site */
static size_t		udt_rw_ntraps, udt_rw_maxtraps;	/* [I] */

/* Executable ranges the rewriter looked at, or made. */
struct udt_rw_range {
	uintptr_t	rr_lo, rr_hi;
};
#define UDT_RW_MAXRANGE	512
static struct udt_rw_range udt_rw_cov[UDT_RW_MAXRANGE];	/* [I] */
static size_t		udt_rw_ncov;			/* [I] */
static int		udt_rw_covfull;			/* [I] */

int	udt_rw_complete;				/* [a] */

int
udt_rw_trap_put(uintptr_t site, uintptr_t stub)
{
	if (udt_rw_ntraps == udt_rw_maxtraps) {
		size_t max = udt_rw_maxtraps == 0 ? 256 : 2 * udt_rw_maxtraps;
		long p = udt_sys6(SYS_mmap, 0, (long)(max * sizeof(*udt_rw_traps)),
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p < 0 && p > -4096)
			return -1;
		if (udt_rw_ntraps > 0) {
			memcpy((void *)p, udt_rw_traps,
			    udt_rw_ntraps * sizeof(*udt_rw_traps));
			udt_sys2(SYS_munmap, udt_rw_traps,
			    udt_rw_maxtraps * sizeof(*udt_rw_traps));
		}
		udt_rw_traps = (void *)p;
		udt_rw_maxtraps = max;
	}
	udt_rw_traps[udt_rw_ntraps].te_site = site;
	udt_rw_traps[udt_rw_ntraps].te_stub = stub;
	udt_rw_ntraps++;
	return 0;
}

static int
udt_rw_trapcmp(const void *a, const void *b)
{
	const struct udt_rw_trapent *x = a, *y = b;

	return x->te_site < y->te_site ? -1 : x->te_site > y->te_site;
}

uintptr_t
udt_rw_trap_stub(uintptr_t site)
{
	size_t lo = 0, hi = udt_rw_ntraps, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (udt_rw_traps[mid].te_site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < udt_rw_ntraps && udt_rw_traps[lo].te_site == site)
		return udt_rw_traps[lo].te_stub;
	return 0;
}

void
udt_rw_cover(uintptr_t lo, uintptr_t hi)
{
	if (udt_rw_ncov == UDT_RW_MAXRANGE) {
		udt_rw_covfull = 1;
		return;
	}
	udt_rw_cov[udt_rw_ncov].rr_lo = lo & ~(uintptr_t)4095;
	udt_rw_cov[udt_rw_ncov].rr_hi = (hi + 4095) & ~(uintptr_t)4095;
	udt_rw_ncov++;
}

static int
udt_rw_covered(uintptr_t lo, uintptr_t hi)
{
	size_t i;

	/* Adjacent ranges (a segment and its trampolines) may share it. */
	while (lo < hi) {
		for (i = 0; i < udt_rw_ncov; i++)
			if (udt_rw_cov[i].rr_lo <= lo && lo < udt_rw_cov[i].rr_hi)
				break;
		if (i == udt_rw_ncov)
			return 0;
		lo = udt_rw_cov[i].rr_hi;
	}
	return 1;
}

static uintptr_t
udt_rw_hex(const char **pp)
{
	const char *p = *pp;
	uintptr_t v = 0;

	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			v = v * 16 + (uintptr_t)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			v = v * 16 + (uintptr_t)(*p - 'a' + 10);
		else
			break;
	}
	*pp = p;
	return v;
}

/*
 * Whether every executable mapping of the process is one the rewriter
 * went through, or made: an executable stack, or code some library
 * mapped by hand, would have sites nobody looked at.  The vsyscall page
 * is the kernel's own, emulated without a system call instruction run.
 */
static int
udt_rw_maps_covered(void)
{
	static char buf[8192];
	const char *p, *nl;
	uintptr_t lo, hi;
	size_t have = 0;
	long fd, n;
	int ok = 1;

	if (udt_rw_covfull)
		return 0;
	fd = udt_sys3(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	for (;;) {
		n = udt_sys3(SYS_read, fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0) {
			ok = 0;
			break;
		}
		have += (size_t)n;
		buf[have] = '\0';
		p = buf;
		while ((nl = strchr(p, '\n')) != NULL) {
			lo = udt_rw_hex(&p);
			p++;
			hi = udt_rw_hex(&p);
			/* "lo-hi rwxp": the x is the fourth letter. */
			if (p + 4 < nl && p[3] == 'x' &&
			    lo < 0xffffffffff600000UL && !udt_rw_covered(lo, hi))
				ok = 0;
			p = nl + 1;
		}
		if (n == 0 || !ok)
			break;
		/* A line longer than the buffer: give up, not complete. */
		if (p == buf && have == sizeof(buf) - 1) {
			ok = 0;
			break;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
	}
	udt_sys1(SYS_close, fd);
	return ok;
}

void
udt_rw_trap_done(size_t nleft)
{
	qsort(udt_rw_traps, udt_rw_ntraps, sizeof(*udt_rw_traps),
	    udt_rw_trapcmp);
	udt_rw_complete = nleft == 0 && udt_rw_maps_covered() &&
	    getenv(UDT_RW_DISPATCH_ENV) == NULL;
}

size_t
udt_rw_trap_count(void)
{
	return udt_rw_ntraps;
}

void
udt_rw_saw(long nr, const long *a, long r)
{
	int exec;

	if (!__atomic_load_n(&udt_rw_complete, __ATOMIC_RELAXED) ||
	    (r < 0 && r > -4096))
		return;
	switch (nr) {
	case SYS_mmap:
	case SYS_mprotect:
	case SYS_pkey_mprotect:
		exec = (a[2] & PROT_EXEC) != 0;
		break;
	case SYS_shmat:
		exec = (a[2] & SHM_EXEC) != 0;
		break;
	default:
		exec = 0;
	}
	if (!exec)
		return;
	__atomic_store_n(&udt_rw_complete, 0, __ATOMIC_RELAXED);
	if (udt_rw_debug) {
		char buf[96];
		int len = snprintf(buf, sizeof(buf), "userdt: dispatch needed: "
		    "new code at %#lx\n", (unsigned long)(nr == SYS_shmat ? r :
		    a[0]));

		udt_sys3(SYS_write, 2, buf, len);
	}
	/* The thread that will most likely run the new code first. */
	if (udt_thread.ut_traced && !udt_thread.ut_armed)
		udt_sud_thread();
}
