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
 * Where the syscall provider and the kernel feed meet (dt_ksys.h).
 *
 * Locks used to protect the globals in this file:
 *	[I]	set by provider init functions during dt_dev_init()
 */
#include <stddef.h>

#include "dt_ksys.h"

/*
 * [I] Off by default until the feed learns of tracees that attach and
 * exit between two of its snapshots: such a short-lived traced process
 * (btrace -c of a quick command) is counted by both.
 */
static bool			dt_ksys_all = false;
static dt_ksys_set_fn		dt_ksys_setfn;		/* [I] */
static dt_ksys_traced_fn	dt_ksys_tracedfn;	/* [I] */
static dt_ksys_exec_fn		dt_ksys_execfn;		/* [I] */

void
dt_ksys_scope(bool all)
{
	dt_ksys_all = all;
}

bool
dt_ksys_scope_all(void)
{
	return dt_ksys_all;
}

void
dt_ksys_feed(dt_ksys_set_fn fn)
{
	dt_ksys_setfn = fn;
}

void
dt_ksys_owner(dt_ksys_traced_fn fn, dt_ksys_exec_fn efn)
{
	dt_ksys_tracedfn = fn;
	dt_ksys_execfn = efn;
}

void
dt_ksys_set(unsigned int p, struct dt_probe *dtp, bool on, uint64_t evtflags)
{
	if (dt_ksys_setfn != NULL)
		dt_ksys_setfn(p, dtp, on, evtflags);
}

bool
dt_ksys_traced(pid_t pid, uint64_t ns)
{
	return dt_ksys_tracedfn != NULL && dt_ksys_tracedfn(pid, ns);
}

void
dt_ksys_exec(pid_t pid)
{
	if (dt_ksys_execfn != NULL)
		dt_ksys_execfn(pid);
}
