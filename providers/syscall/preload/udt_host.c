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
 * The door the profile timer sampler goes through (udt_host.h): each
 * function is the library's own state or record path, named for what
 * the sampler needs of it.
 */
#include <pthread.h>
#include <string.h>

#include "udt_host.h"
#include "udt_preload.h"

_Static_assert(UDT_PROF_STACK_MAX == UDT_STACK_MAX, "stack depth");

/*
 * pthread_atfork() as libc_nonshared.a has it: __register_atfork() with
 * this object's handle, so that its handlers go with it.  Defined here,
 * the linker takes this one, laid out with what a start runs (the
 * constructor registers its handlers: meson.build), not the archive's,
 * which it puts after all of the library's code, a 64 kB block more of
 * the library's text faulted at every start (issue 20).
 */
extern void *__dso_handle __attribute__((weak, visibility("hidden")));
int	__register_atfork(void (*)(void), void (*)(void), void (*)(void),
	    void *);

int
pthread_atfork(void (*prepare)(void), void (*parent)(void),
    void (*child)(void))
{
	return __register_atfork(prepare, parent, child,
	    &__dso_handle == NULL ? NULL : __dso_handle);
}

int
udt_host_enter(void)
{
	struct udt_thread *t = &udt_thread;
	int old = (t->ut_inlib & 1) | ((unsigned char)t->ut_sud << 8);

	t->ut_inlib = 1;
	if (udt_sud_active)
		t->ut_sud = 0;		/* SYSCALL_DISPATCH_FILTER_ALLOW */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return old;
}

void
udt_host_leave(int old)
{
	struct udt_thread *t = &udt_thread;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (udt_sud_active)
		t->ut_sud = (char)(old >> 8);
	t->ut_inlib = old & 1;
}

void
udt_host_sample(const struct udt_prof_sample *s, uint64_t period)
{
	struct udt_thread *t = &udt_thread;
	struct udt_ring_hdr *r;
	struct udt_rec *rec;
	uint64_t ticket;
	unsigned int i, n;
	int depth;

	if ((r = udt_rec_enter(t, UDT_PROBE_PROFILE,
	    (uintptr_t)__builtin_frame_address(0), &depth)) == NULL ||
	    (rec = udt_rec_reserve(t, r, UDT_PROBE_PROFILE, &ticket,
	    s->ups_tid)) == NULL)	/* this thread: its timer's signal */
		goto out;
	n = s->ups_nframes < UDT_STACK_MAX ? s->ups_nframes : UDT_STACK_MAX;
	rec->ur_flags = UDT_R_PROF | UDT_R_COMM | (n > 0 ? UDT_R_STACK : 0);
	rec->ur_nframes = (uint8_t)n;
	/* sched_getcpu() failed: -1 would be garbage to dtd. */
	rec->ur_cpu = s->ups_cpu < 0x10000 ? s->ups_cpu : 0;
	rec->ur_error = 0;
	rec->ur_sec = s->ups_tsp.tv_sec;
	rec->ur_nsec = s->ups_tsp.tv_nsec;
	memset(rec->ur_args, 0, sizeof(rec->ur_args));
	rec->ur_args[0] = (int64_t)s->ups_missed;
	rec->ur_args[1] = (int64_t)period;
	udt_getcomm(rec->ur_comm);
	for (i = 0; i < n; i++)
		rec->ur_stack[i] = s->ups_pc[i];
	udt_rec_commit(t, rec, ticket);
out:
	udt_nest_leave(t, depth);
}

struct udt_tab *
udt_host_tab(void)
{
	return __atomic_load_n(&udt_tab, __ATOMIC_ACQUIRE);
}

bool
udt_host_timer_mode(void)
{
	return __atomic_load_n(&udt_use_ptimer, __ATOMIC_RELAXED) != 0;
}

void
udt_host_reattach(void)
{
	udt_attach();
}

int
udt_host_tid(void)
{
	return udt_gettid();
}

bool
udt_host_wrap_threads(void)
{
	return udt_sud_wanted() != 0;
}

void
udt_host_thread_begin(void)
{
	udt_sud_start();
}

void
udt_host_thread_creating(void)
{
	if (udt_sud_active)
		udt_sig_create_begin();
}

void
udt_host_thread_created(void)
{
	if (udt_sud_active) {
		/* pthread_create()'s own mask calls ran let through. */
		udt_sig_create_end();
		udt_sud_resync();
		udt_thread.ut_sud = 1;
	}
}

static const struct udt_host_client *udt_host_client;	/* [I] */

void
udt_host_register(const struct udt_host_client *c)
{
	udt_host_client = c;
}

/* The library's constructor, after its first attach. */
void
udt_host_attached(void)
{
	if (udt_host_client != NULL && udt_host_client->uhc_attached != NULL)
		udt_host_client->uhc_attached();
}

/* The library's fork handler, in a fork child: async-signal-safe. */
void
udt_host_fork_child(void)
{
	if (udt_host_client != NULL &&
	    udt_host_client->uhc_fork_child != NULL)
		udt_host_client->uhc_fork_child();
}
