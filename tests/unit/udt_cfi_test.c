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
 * The preload library's unwinder (udt_unw.c, udt_cfi.c) in this
 * process: a call chain from where it runs; the same from a signal
 * handler, through the kernel's signal frame and glibc's __restore_rt;
 * the context a timer signal interrupted, in this program or in the
 * vDSO's clock_gettime(), down to main; and contexts whose stack is
 * unmapped or garbage, which end the walk without a fault.
 * Functions are named by dladdr() (built with --export-dynamic).
 */
#include <sys/mman.h>
#include <sys/time.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "dtt.h"
#include "udt_unw.h"

#define NIPS	40

void	cfi_a(int), cfi_b(int), cfi_c(int);
void	cfi_spin(void);

static void	*ips[NIPS];
static int	 nips;
static volatile int	 nsig, nvdso, nbad;

static const char *
fn(void *pc)
{
	Dl_info di;

	if (dladdr(pc, &di) == 0)
		return "?";
	if (di.dli_fname != NULL && strstr(di.dli_fname, "vdso") != NULL)
		return "[vdso]";
	return di.dli_sname != NULL ? di.dli_sname : "?";
}

/* want[] appear in ips[] in this order (others may come between). */
static bool
chain(void **pcs, int n, const char *const *want)
{
	int i;

	for (i = 0; i < n && *want != NULL; i++)
		if (strcmp(fn(pcs[i]), *want) == 0)
			want++;
	return *want == NULL;
}

static void
show(void **pcs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		printf("    %p %s\n", pcs[i], fn(pcs[i]));
}

static void
on_usr1(int sig)
{
	(void)sig;
	nips = udt_unw_here(ips, NIPS);
}

void __attribute__((noinline))
cfi_c(int how)
{
	if (how == 0)
		nips = udt_unw_here(ips, NIPS);
	else
		raise(SIGUSR1);
	__asm__ volatile ("" ::: "memory");	/* no tail call */
}

void __attribute__((noinline))
cfi_b(int how)
{
	cfi_c(how);
	__asm__ volatile ("" ::: "memory");
}

void __attribute__((noinline))
cfi_a(int how)
{
	cfi_b(how);
	__asm__ volatile ("" ::: "memory");
}

/* Every sample must reach main, wherever it landed. */
static void
on_prof(int sig, siginfo_t *si, void *uc)
{
	static const char *const want[] = { "cfi_spin", "main", NULL };
	uintptr_t pcs[NIPS];
	void *v[NIPS];
	unsigned int n, i;

	(void)sig;
	(void)si;
	n = udt_unw_stack(uc, pcs, NIPS);
	for (i = 0; i < n; i++)
		v[i] = (void *)pcs[i];
	nsig++;
	if (n > 0 && strcmp(fn(v[0]), "[vdso]") == 0)
		nvdso++;
	if (!chain(v, (int)n, want) && nbad++ == 0) {
		printf("  a sample that does not reach main:\n");
		show(v, (int)n);
	}
}

void __attribute__((noinline))
cfi_spin(void)
{
	struct timespec ts;
	long k;

	for (k = 0; k < 200000000L && nsig < 300; k++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	__asm__ volatile ("" ::: "memory");
}

int
main(int argc, char *argv[])
{
	static const char *const plain[] = { "cfi_c", "cfi_b", "cfi_a", "main",
	    NULL };
	/* on_usr1 is static: dladdr() cannot name it */
	static const char *const sig[] = { "cfi_c", "cfi_b", "cfi_a", "main",
	    NULL };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { 0 };
	struct sigaction sa;
	ucontext_t uc;
	uintptr_t pcs[NIPS];
	unsigned int n;
	char *page;

	(void)argc;
	dtt_tag(argv[0]);
	udt_unw_load();
	udt_unw_ours(0, 0, NULL);

	cfi_a(0);
	if (!dtt_check(chain(ips, nips, plain),
	    "from here: cfi_c, cfi_b, cfi_a, main (%d frames)", nips))
		show(ips, nips);

	signal(SIGUSR1, on_usr1);
	nips = 0;
	cfi_a(1);
	if (!dtt_check(chain(ips, nips, sig) && nips > 4,
	    "from a handler, through the signal frame: cfi_c, cfi_b, cfi_a, "
	    "main (%d frames)", nips))
		show(ips, nips);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	cfi_spin();
	setitimer(ITIMER_PROF, &off, NULL);
	signal(SIGPROF, SIG_IGN);
	dtt_check(nsig >= 100 && nbad == 0,
	    "interrupted contexts: %d samples, %d of them in the vDSO, all "
	    "down to main (%d not)", nsig, nvdso, nbad);

	/* A stack that is not there: the PC alone, no fault. */
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	getcontext(&uc);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)cfi_b + 1;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)(page + 2048);
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)(uintptr_t)(page + 2048);
	n = udt_unw_stack(&uc, pcs, NIPS);
	dtt_check(n == 1, "a stack in a PROT_NONE page: %u frame", n);
	uc.uc_mcontext.gregs[REG_RIP] = 0x1000;
	uc.uc_mcontext.gregs[REG_RSP] = 0x10;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)0xdead0000beefULL;
	n = udt_unw_stack(&uc, pcs, NIPS);
	dtt_check(n == 1, "no object, garbage stack and frame pointers: "
	    "%u frame", n);
	munmap(page, 4096);
	return dtt_done();
}
