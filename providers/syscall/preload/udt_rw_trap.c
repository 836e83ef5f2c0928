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
 * process is complete, and its threads trace without dispatch.  What
 * the loader maps for a dlopen() is gone through at its r_brk, before
 * any of it runs (udt_rw_brk()); other new executable memory (a JIT's)
 * ends completeness for good: its sites are neither, so a thread that
 * records turns dispatch on, as it did before there were traps: the one
 * that made the memory at once, the others at their next recorded call.  One of those that, before such a call, runs
 * a system call instruction of the new code is not seen: the price of
 * not interrupting every thread (a signal would break their blocking
 * calls).
 *
 * Locks used to protect the globals below:
 *	[I]	set by the constructor before other threads exist
 *	[a]	atomic
 *	[w]	a pass of the rewriter: the constructor, or udt_rw_brk()
 *		under the loader's lock
 */
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_host.h"
#include "udt_sys.h"
#include "udt_rw.h"

/* Trapped sites and their stubs: staged by a pass [w], then published. */
static struct udt_rw_stage udt_rw_trapstage = { .st_first = 64 };		/* [w] */
static struct udt_rw_tab *udt_rw_traptab;		/* [a] */

/* Executable ranges the rewriter went through, or made [w]. */
static struct udt_rw_stage udt_rw_cov = { .st_first = 64 };

/*
 * Code the loader mapped since its last r_brk, to be rewritten there
 * [w: the loader's lock, held from the mmap to its r_brk].
 */
#define UDT_RW_MAXPEND	32
static uintptr_t	udt_rw_pend[UDT_RW_MAXPEND][2];
static size_t		udt_rw_npend;

/* The vsyscall page: the kernel's, highest of all, no call run there. */
#define UDT_VSYSCALL	0xffffffffff600000UL

int	udt_rw_complete;				/* [a] */
int	udt_rw_notrap;					/* [a] */
int	udt_rw_sitesback;				/* [a] */
/*
 * An untrap that could not take a site back (no /proc/self/mem), and
 * one that is over: the first untrap's thread may still be writing
 * while another asks (udt_rw_untrap_all()).
 */
static int	udt_rw_trapleft, udt_rw_untrapped;		/* [a] */

int
udt_rw_trap_put(uintptr_t site, uintptr_t stub)
{
	return udt_rw_stage_put(&udt_rw_trapstage, site, stub);
}

int
udt_rw_trap_publish(const uintptr_t (*gone)[2], size_t ngone)
{
	return udt_rw_tab_publish(&udt_rw_traptab, &udt_rw_trapstage, 0, gone,
	    ngone);
}

uintptr_t
udt_rw_trap_stub(uintptr_t site)
{
	uintptr_t k, v;

	if (udt_rw_tab_floor(&udt_rw_traptab, site, &k, &v) == 0 && k == site)
		return v;
	return 0;
}

void
udt_rw_cover(uintptr_t lo, uintptr_t hi)
{
	/* Out of memory: the range stays uncovered, dispatch needed. */
	(void)udt_rw_stage_put(&udt_rw_cov, lo & ~(uintptr_t)4095,
	    (hi + 4095) & ~(uintptr_t)4095);
}

static int
udt_rw_covered(uintptr_t lo, uintptr_t hi)
{
	size_t i;

	/* Adjacent ranges (a segment and its trampolines) may share it. */
	while (lo < hi) {
		for (i = 0; i < udt_rw_cov.st_n; i++)
			if (udt_rw_cov.st_e[i][0] <= lo &&
			    lo < udt_rw_cov.st_e[i][1])
				break;
		if (i == udt_rw_cov.st_n)
			return 0;
		lo = udt_rw_cov.st_e[i][1];
	}
	return 1;
}

/*
 * Whether every executable mapping of the process that meets [qlo, qhi)
 * is one the rewriter went through, or made: an executable stack, or
 * code some library mapped by hand, would have sites nobody looked at.
 * The vsyscall page is the kernel's own, emulated without a system call
 * instruction run.
 */
static int
udt_rw_maps_covered(uintptr_t qlo, uintptr_t qhi)
{
	char *buf = udt_rw_pass_spare(8192);
	const char *p, *nl;
	uintptr_t lo, hi;
	size_t have = 0;
	long fd, n;
	int ok = 1, last = 0;

	if (buf == NULL)
		return 0;
	fd = udt_sys3(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	for (;;) {
		n = udt_sys3(SYS_read, fd, buf + have, 8192 - 1 - have);
		if (n < 0) {
			ok = 0;
			break;
		}
		have += (size_t)n;
		buf[have] = '\0';
		p = buf;
		while ((nl = strchr(p, '\n')) != NULL) {
			lo = (uintptr_t)udt_hex(&p);
			p++;
			hi = (uintptr_t)udt_hex(&p);
			/* "lo-hi rwxp": the x is the fourth letter. */
			if (p + 4 < nl && p[3] == 'x' && lo < qhi && qlo < hi &&
			    lo < UDT_VSYSCALL && !udt_rw_covered(lo, hi))
				ok = 0;
			/*
			 * The vsyscall page is the highest address there
			 * is, and the kernel lists it last (the gate area
			 * follows every mapping): nothing can come after
			 * it, so the read that would say end of file is
			 * not made.  Without it (vsyscall=none), read on.
			 */
			if (lo == UDT_VSYSCALL)
				last = 1;
			p = nl + 1;
		}
		if (n == 0 || !ok || last)
			break;
		/* A line longer than the buffer: give up, not complete. */
		if (p == buf && have == 8192 - 1) {
			ok = 0;
			break;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
	}
	/* The constructor's: closed with its others at its end. */
	if (udt_close_defer((int)fd, (int)fd) != 0)
		udt_sys1(SYS_close, fd);
	return ok;
}

/*
 * The same for the whole process at the constructor's end, from the
 * executable mappings dtd read at the handshake when its table lists
 * them (udt_tab.tb_xmaps): no /proc/self/maps read.  The constructor's
 * thread alone ran since (the pass runs only then), and what it mapped
 * executable is its own and covered; so the list is the file's but for
 * those.  Else the file.
 */
static int
udt_rw_all_covered(void)
{
	const struct udt_tab *tab = __atomic_load_n(&udt_tab, __ATOMIC_ACQUIRE);
	uint32_t i, n;

	if (tab == NULL || !udt_proc_status_dtd() ||
	    (n = tab->tb_xmaps_n) == 0 || n > UDT_XMAPS_MAX)
		return udt_rw_maps_covered(0, UINTPTR_MAX);
	for (i = 0; i < n; i++)
		if (tab->tb_xmaps[i][0] < tab->tb_xmaps[i][1] &&
		    tab->tb_xmaps[i][0] < UDT_VSYSCALL &&
		    !udt_rw_covered((uintptr_t)tab->tb_xmaps[i][0],
		    (uintptr_t)tab->tb_xmaps[i][1]))
			return 0;
	return 1;
}

void
udt_rw_trap_done(size_t nleft)
{
	udt_rw_complete = nleft == 0 && udt_rw_all_covered() &&
	    getenv(UDT_RW_DISPATCH_ENV) == NULL;
}

/* Dispatch from now on: new code no pass went through.  Once. */
static void
udt_rw_incomplete(uintptr_t at)
{
	if (!__atomic_exchange_n(&udt_rw_complete, 0, __ATOMIC_RELAXED))
		return;
	/* New code's clones may go unseen: see udt_init()'s. */
	__atomic_store_n(&udt_rw_mt, 1, __ATOMIC_RELAXED);
	if (udt_rw_debug) {
		/* From a rewritten site too: snprintf() is libc's. */
		struct udt_xsave xs;
		char buf[96];
		int len;

		udt_xsave(&xs);
		len = snprintf(buf, sizeof(buf), "userdt: dispatch needed: "
		    "new code at %#lx\n", (unsigned long)at);
		udt_xrstor(&xs);
		udt_sys3(SYS_write, 2, buf, len);
	}
	/* The thread that will most likely run the new code first. */
	if (udt_thread.ut_traced && !udt_thread.ut_armed)
		udt_sud_thread();
}

void
udt_rw_saw(long nr, const long *a, long r, uintptr_t at)
{
	uintptr_t site;

	if ((r < 0 && r > -4096) ||
	    !(a[2] & (nr == SYS_shmat ? SHM_EXEC : PROT_EXEC)))
		return;
	/*
	 * The loader mapping an object's text, read-only, from its file:
	 * rewritten at the loader's next r_brk, before any of it runs,
	 * complete or not (a call from it costs no signal then).
	 * udt_rw_ld_lo/hi are 0 where the r_brk is not hooked.
	 */
	if (nr == SYS_mmap && !(a[2] & PROT_WRITE) &&
	    !(a[3] & MAP_ANONYMOUS) && udt_rw_npend < UDT_RW_MAXPEND &&
	    (site = udt_rw_site_of(at)) >= udt_rw_ld_lo &&
	    site < udt_rw_ld_hi) {
		udt_rw_pend[udt_rw_npend][0] = (uintptr_t)r;
		udt_rw_pend[udt_rw_npend][1] = (uintptr_t)r + (uintptr_t)a[1];
		udt_rw_npend++;
		return;
	}
	udt_rw_incomplete(nr == SYS_shmat ? (uintptr_t)r : (uintptr_t)a[0]);
}

/*
 * Entered by a jump from the loader's r_brk (udt_rw_hook()), called as
 * _dl_debug_state(): with the loader's lock held, after a dlopen() has
 * mapped its objects and before any of their code runs, and at other
 * changes of the list.  The objects the loader mapped since are
 * rewritten and trapped as the constructor's were: no thread can be in
 * their code yet.  What is left, or mapped and not found among them,
 * ends udt_rw_complete.  The pass's own calls (Capstone's allocations)
 * are the library's, not the program's.
 */
void
udt_rw_brk(void)
{
	size_t k, j, left;
	int saved = errno, host;

	if (udt_rw_npend == 0)
		return;
	host = udt_host_enter();
	/* A range mapped anew: what covered it before is gone. */
	for (k = 0; k < udt_rw_cov.st_n; ) {
		for (j = 0; j < udt_rw_npend; j++)
			if (udt_rw_cov.st_e[k][0] < udt_rw_pend[j][1] &&
			    udt_rw_pend[j][0] < udt_rw_cov.st_e[k][1])
				break;
		if (j == udt_rw_npend) {
			k++;
			continue;
		}
		udt_rw_cov.st_n--;
		udt_rw_cov.st_e[k][0] = udt_rw_cov.st_e[udt_rw_cov.st_n][0];
		udt_rw_cov.st_e[k][1] = udt_rw_cov.st_e[udt_rw_cov.st_n][1];
	}
	left = udt_rw_pass((const uintptr_t (*)[2])udt_rw_pend, udt_rw_npend);
	if (udt_rw_debug) {
		char buf[96];
		int len = snprintf(buf, sizeof(buf), "userdt: the loader's new "
		    "code at %#lx gone through, %zd left\n",
		    (unsigned long)udt_rw_pend[0][0], (ssize_t)left);

		udt_sys3(SYS_write, 2, buf, len);
	}
	for (k = 0; k < udt_rw_npend &&
	    __atomic_load_n(&udt_rw_complete, __ATOMIC_RELAXED); k++)
		if (left != 0 || !udt_rw_maps_covered(udt_rw_pend[k][0],
		    udt_rw_pend[k][1]))
			udt_rw_incomplete(udt_rw_pend[k][0]);
	udt_rw_npend = 0;
	udt_host_leave(host);
	errno = saved;
}

/* Decimal v into b (20 bytes at least), its length. */
static int
udt_rw_dec(char *b, unsigned long v)
{
	char tmp[20];
	int n = 0, k = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		b[k++] = tmp[--n];
	return k;
}

/* str after buf's *len bytes, as much as fits in size with a newline. */
static void
udt_rw_cat(char *buf, int *len, size_t size, const char *str)
{
	while (*str != '\0' && (size_t)*len + 1 < size)
		buf[(*len)++] = *str++;
	if (*str == '\n')
		buf[(*len)++] = '\n';
}

/*
 * Each trapped site, from the newest table, back to its system call:
 * the int3 stood for the first byte of `syscall' (0f 05), so that byte
 * is what the rewriter took away.  Written as the rewriter writes,
 * through /proc/self/mem; a site whose bytes are no longer an int3 and
 * its call (its object closed, the memory reused) is left alone.  A
 * thread that ran one of these int3 just before is sent back to the
 * call by the SIGTRAP handler, which finds the site in the table and
 * its call in place.
 */
static unsigned long
udt_rw_untrap_sites(void)
{
	static const uint8_t sys0 = 0x0f;
	uintptr_t key = UINTPTR_MAX, site, stub;
	unsigned long n = 0;
	uint8_t b[2];
	long fd;

	/*
	 * No int3 written (a tracer was there from the start, the common
	 * case under a debugger or strace): no file opened for none.
	 */
	if (udt_rw_tab_floor(&udt_rw_traptab, key, &site, &stub) != 0)
		return 0;
	fd = udt_sys3(SYS_open, "/proc/self/mem", O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		__atomic_store_n(&udt_rw_trapleft, 1, __ATOMIC_RELAXED);
	while (fd >= 0 && key != 0 && udt_rw_tab_floor(&udt_rw_traptab, key,
	    &site, &stub) == 0) {
		if (udt_sys4(SYS_pread64, fd, b, 2, site) == 2 &&
		    b[0] == 0xcc && b[1] == 0x05) {
			if (udt_sys4(SYS_pwrite64, fd, &sys0, 1, site) == 1)
				n++;
			else
				__atomic_store_n(&udt_rw_trapleft, 1,
				    __ATOMIC_RELAXED);
		}
		key = site - 1;
	}
	if (fd >= 0)
		udt_sys1(SYS_close, fd);
	/* Their calls are now dispatch's, where dispatch may be on. */
	if (n != 0) {
		__atomic_store_n(&udt_rw_complete, 0, __ATOMIC_RELAXED);
		/* Their clones may now go unseen (no dispatch): locked. */
		__atomic_store_n(&udt_rw_mt, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&udt_rw_sitesback, 1, __ATOMIC_RELAXED);
	}
	return n;
}

void
udt_rw_untrap(const char *why)
{
	unsigned long n;

	if (__atomic_exchange_n(&udt_rw_notrap, 1, __ATOMIC_ACQ_REL))
		return;
	n = udt_rw_untrap_sites();
	__atomic_store_n(&udt_rw_untrapped, 1, __ATOMIC_RELEASE);
	if (udt_rw_debug) {
		char buf[224];
		int len = 0;

		udt_rw_cat(buf, &len, sizeof(buf), "userdt: ");
		len += udt_rw_dec(buf + len, n);
		udt_rw_cat(buf, &len, sizeof(buf), " int3 sites back to their "
		    "calls: ");
		udt_rw_cat(buf, &len, sizeof(buf), why != NULL ? why :
		    "the program blocks a SIGTRAP sent to it");
		if (__atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED))
			udt_rw_cat(buf, &len, sizeof(buf), "; no dispatch: "
			    "sites neither rewritten nor trapped run "
			    "unrecorded");
		udt_rw_cat(buf, &len, sizeof(buf), "\n");
		udt_sys3(SYS_write, 2, buf, len);
	}
	if (!__atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED) && n != 0 &&
	    udt_thread.ut_traced && !udt_thread.ut_armed)
		udt_sud_thread();
}

int
udt_rw_untrap_all(const char *why)
{
	udt_rw_untrap(why);
	return !__atomic_load_n(&udt_rw_untrapped, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&udt_rw_trapleft, __ATOMIC_RELAXED) ? -1 : 0;
}

/* TracerPid of /proc/self/status: the tracer's pid, 0, or -1. */
static long
udt_rw_tracer(void)
{
	static const char key[] = "\nTracerPid:\t";
	char buf[512];
	const char *p;
	long fd, n, pid = 0;
	size_t i;

	fd = udt_sys3(SYS_open, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	n = udt_sys3(SYS_read, fd, buf, sizeof(buf) - 1);
	udt_sys1(SYS_close, fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; *p != '\0'; p++) {
		for (i = 0; key[i] != '\0' && p[i] == key[i]; i++)
			;
		if (key[i] != '\0')
			continue;
		for (p += i; *p >= '0' && *p <= '9'; p++)
			pid = pid * 10 + (*p - '0');
		return pid;
	}
	return -1;
}

void
udt_rw_tracer_check(void)
{
	long pid;

	if (__atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED) ||
	    (pid = udt_rw_tracer()) <= 0)
		return;
	udt_rw_tracer_seen(pid);
}

/*
 * A pass that wrote int3s and published them after an untrap had read
 * the table (its check of udt_rw_notrap came before the untrap, its
 * publish after) takes them back itself.
 */
void
udt_rw_untrap_late(void)
{
	if (__atomic_load_n(&udt_rw_notrap, __ATOMIC_ACQUIRE) &&
	    udt_rw_untrap_sites() != 0 &&
	    !__atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED) &&
	    udt_thread.ut_traced && !udt_thread.ut_armed)
		udt_sud_thread();
}

/* The same, the tracer's pid known (udt_proc_status()). */
void
udt_rw_tracer_seen(long pid)
{
	char why[48];
	int len;

	if (pid <= 0 || __atomic_load_n(&udt_sud_traced, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&udt_sud_traced, 1, __ATOMIC_RELAXED);
	len = 0;
	udt_rw_cat(why, &len, sizeof(why), "a tracer (pid ");
	len += udt_rw_dec(why + len, (unsigned long)pid);
	udt_rw_cat(why, &len, sizeof(why), ") is there");
	why[len] = '\0';
	udt_rw_untrap(why);
}
