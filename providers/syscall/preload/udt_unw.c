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
 * libunwind through dlopen: see udt_unw.h.
 *
 * Locks used to protect the globals below:
 *	[a]	published by udt_unw_load() with release order, read with
 *		acquire order (udt_unw_fns), fixed after that
 */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "udt_unw.h"

#ifndef UDT_UNW_SONAME
#define UDT_UNW_SONAME	"libunwind.so.8"
#endif

/* libunwind.h names its functions by macros: the symbols they expand to. */
#define UDT_UNW_XSTR(s)	UDT_UNW_STR(s)
#define UDT_UNW_STR(s)	#s

struct udt_unw_fns {
	unw_addr_space_t *uf_as;	/* unw_local_addr_space */
	int	(*uf_policy)(unw_addr_space_t, unw_caching_policy_t);
	int	(*uf_init2)(unw_cursor_t *, unw_context_t *, int);
	int	(*uf_get_reg)(unw_cursor_t *, int, unw_word_t *);
	int	(*uf_step)(unw_cursor_t *);
	int	(*uf_backtrace)(void **, int);
};

static struct udt_unw_fns	 udt_unw_tab;		/* [a] via udt_unw_fns */
static struct udt_unw_fns	*udt_unw_fns;		/* [a] */

/* The tracer's code, cut from stacks (udt_unw_ours()).  [I] */
static uintptr_t	  udt_unw_lo, udt_unw_hi;
static uintptr_t	(*udt_unw_site)(uintptr_t);

void
udt_unw_ours(uintptr_t lo, uintptr_t hi, uintptr_t (*site)(uintptr_t))
{
	udt_unw_lo = lo;
	udt_unw_hi = hi;
	udt_unw_site = site;
}

int
udt_unw_load(void)
{
	struct udt_unw_fns f;
	void *h;

	if (__atomic_load_n(&udt_unw_fns, __ATOMIC_ACQUIRE) != NULL)
		return 0;
	/* A program's own libunwind, if it has one, is found by its name. */
	if ((h = dlopen(UDT_UNW_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return -1;
	f.uf_as = dlsym(h, UDT_UNW_XSTR(unw_local_addr_space));
	*(void **)&f.uf_policy = dlsym(h,
	    UDT_UNW_XSTR(unw_set_caching_policy));
	*(void **)&f.uf_init2 = dlsym(h, UDT_UNW_XSTR(unw_init_local2));
	*(void **)&f.uf_get_reg = dlsym(h, UDT_UNW_XSTR(unw_get_reg));
	*(void **)&f.uf_step = dlsym(h, UDT_UNW_XSTR(unw_step));
	*(void **)&f.uf_backtrace = dlsym(h, "unw_backtrace");
	if (f.uf_as == NULL || f.uf_policy == NULL || f.uf_init2 == NULL ||
	    f.uf_get_reg == NULL || f.uf_step == NULL ||
	    f.uf_backtrace == NULL)
		return -1;	/* the handle stays: it may be the program's */
	/* Racing loaders store the same values. */
	udt_unw_tab = f;
	__atomic_store_n(&udt_unw_fns, &udt_unw_tab, __ATOMIC_RELEASE);
	return 0;
}

int
udt_unw_set_caching_policy(unw_caching_policy_t p)
{
	struct udt_unw_fns *f = __atomic_load_n(&udt_unw_fns,
	    __ATOMIC_ACQUIRE);

	return f != NULL ? f->uf_policy(*f->uf_as, p) : -UNW_EUNSPEC;
}

int
udt_unw_init_local2(unw_cursor_t *c, unw_context_t *uc, int flags)
{
	struct udt_unw_fns *f = __atomic_load_n(&udt_unw_fns,
	    __ATOMIC_ACQUIRE);

	return f != NULL ? f->uf_init2(c, uc, flags) : -UNW_EUNSPEC;
}

int
udt_unw_get_reg(unw_cursor_t *c, int reg, unw_word_t *v)
{
	struct udt_unw_fns *f = __atomic_load_n(&udt_unw_fns,
	    __ATOMIC_ACQUIRE);

	return f != NULL ? f->uf_get_reg(c, reg, v) : -UNW_EUNSPEC;
}

int
udt_unw_step(unw_cursor_t *c)
{
	struct udt_unw_fns *f = __atomic_load_n(&udt_unw_fns,
	    __ATOMIC_ACQUIRE);

	return f != NULL ? f->uf_step(c) : -UNW_EUNSPEC;
}

int
udt_unw_backtrace(void **ips, int max)
{
	struct udt_unw_fns *f = __atomic_load_n(&udt_unw_fns,
	    __ATOMIC_ACQUIRE);

	return f != NULL ? f->uf_backtrace(ips, max) : 0;
}

/*
 * One unwind cache a thread: libunwind's global cache blocks every
 * signal around each use, two rt_sigprocmask(2) a frame.  Set by the
 * first unwinding, not before: libunwind's start opens a pipe, two
 * descriptors the program would find taken from its lowest free ones.
 * Any thread, any context; the first caller sets it, once.
 */
static void
udt_unw_cache_init(void)
{
	static int done;	/* [a] */
	int no = 0;

	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 0 &&
	    __atomic_compare_exchange_n(&done, &no, 1, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    udt_unw_set_caching_policy(UNW_CACHE_PER_THREAD) != 0)
		/* libunwind not open yet: the next caller tries again */
		__atomic_store_n(&done, 0, __ATOMIC_RELEASE);
}

int
udt_unw_here(void **ips, int max)
{
	udt_unw_cache_init();
	return udt_unw_backtrace(ips, max);
}

/*
 * The context a signal interrupted, as the program's: a PC in a
 * trampoline stands for its site (the trampoline's instructions are the
 * site's function's, copied, on the same stack: the site's CFI unwinds
 * them, but for the few between the red zone's steps); a PC in this
 * library is unwound through (the entry's CFI leads to the site) and
 * its frames cut, up to the first that is not ours.  No stack of the
 * program ever shows a frame of the tracer.
 */
unsigned int
udt_unw_stack(void *uc, uintptr_t *pcs, unsigned int max)
{
	ucontext_t at;
	unw_cursor_t cur;
	unw_word_t ip;
	uintptr_t pc, site;
	unsigned int n = 0;
	int ours = 1;

	udt_unw_cache_init();
	if (max == 0)
		return 0;
	pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	if (pc < udt_unw_lo || pc >= udt_unw_hi) {
		if (udt_unw_site != NULL && (site = udt_unw_site(pc)) != pc) {
			memcpy(&at, uc, sizeof(at));
			at.uc_mcontext.gregs[REG_RIP] = (greg_t)site;
			uc = &at;
		}
		ours = 0;
	}
	/* On amd64, unw_context_t is the ucontext_t the kernel gave us. */
	if (udt_unw_init_local2(&cur, (unw_context_t *)uc,
	    UNW_INIT_SIGNAL_FRAME) != 0)
		return 0;
	do {
		if (udt_unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
		if (ours && ip >= udt_unw_lo && ip < udt_unw_hi)
			continue;
		ours = 0;
		pcs[n++] = (uintptr_t)ip;
	} while (n < max && udt_unw_step(&cur) > 0);
	return n;
}
