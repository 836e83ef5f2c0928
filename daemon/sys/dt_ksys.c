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
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "dt_ksys.h"

/*
 * [I] On by default, as OpenBSD's syscall probes see every process: the
 * feed is told of each tracee's attach and exit as they happen, and of
 * a launched one from its exec (dt_sys_kern.c), so a quick traced
 * command is counted once.  Without root the kernel's tracepoints are
 * closed to dtd: launched, whatever was asked.
 */
static bool			dt_ksys_all = true;
static dt_ksys_set_fn		dt_ksys_setfn;		/* [I] */
static dt_ksys_traced_fn	dt_ksys_tracedfn;	/* [I] */
static dt_ksys_exec_fn		dt_ksys_execfn;		/* [I] */
static dt_ksys_tree_fn		dt_ksys_treefn;		/* [I] */
static dt_ksys_index_fn		dt_ksys_indexfn;	/* [I] */
static dt_ksys_arm_fn		dt_ksys_armfn;		/* [I] */
static dt_ksys_kcount_fn	dt_ksys_kcountfn;	/* [I] */
static dt_ksys_tgid_fn		dt_ksys_tgidfn;		/* [I] */

void
dt_ksys_scope(bool all)
{
	dt_ksys_all = all;
}

bool
dt_ksys_scope_all(void)
{
	return dt_ksys_all && geteuid() == 0;
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
dt_ksys_tree_feed(dt_ksys_tree_fn fn)
{
	dt_ksys_treefn = fn;
}

void
dt_ksys_tree_owner(dt_ksys_index_fn fn)
{
	dt_ksys_indexfn = fn;
}

void
dt_ksys_tree_arm(dt_ksys_arm_fn fn)
{
	dt_ksys_armfn = fn;
}

void
dt_ksys_kcount_feed(dt_ksys_kcount_fn fn, dt_ksys_tgid_fn tfn)
{
	dt_ksys_kcountfn = fn;
	dt_ksys_tgidfn = tfn;
}

bool
dt_ksys_kcount(unsigned int p, struct dt_pcb *dp, bool on)
{
	return dt_ksys_kcountfn != NULL && dt_ksys_kcountfn(p, dp, on);
}

bool
dt_ksys_tgid(pid_t pid, bool on)
{
	return dt_ksys_tgidfn != NULL && dt_ksys_tgidfn(pid, on);
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

void
dt_ksys_tree(unsigned int p, struct dt_pcb *dp, bool on)
{
	if (dt_ksys_treefn != NULL)
		dt_ksys_treefn(p, dp, on);
}

int
dt_ksys_index(const struct dt_pcb *dp)
{
	return dt_ksys_indexfn != NULL ? dt_ksys_indexfn(dp) : -1;
}

int
dt_ksys_arm(pid_t helper, uid_t uid, gid_t gid, pid_t pid)
{
	return dt_ksys_armfn != NULL ? dt_ksys_armfn(helper, uid, gid, pid) :
	    EOPNOTSUPP;
}

bool
dt_ksys_tree_can(void)
{
	return dt_ksys_treefn != NULL && dt_ksys_scope_all();
}
