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
 * The kernel's system calls for the syscall probes (issue 22).  On
 * OpenBSD a syscall probe sees every process; here the preload library
 * sees the processes started under a launcher, and the kernel's system
 * call tracepoints see the others.  Two providers share that work and
 * neither may include the other (doc/design.md, "The tree"): the
 * syscall provider owns the probes and knows which processes its hooks
 * already record; the tracepoint provider reads the kernel through perf.
 * They meet here, through two functions each registers once.
 *
 * Locks used to protect the globals behind this file:
 *	[I]	set during dt_dev_init() (provider init), read-only after
 */
#ifndef DT_KSYS_H
#define DT_KSYS_H

#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

struct dt_pcb;
struct dt_probe;

/*
 * The kernel feed (the tracepoint provider): syscall probe dtp, of wire
 * index p (2i entry, 2i + 1 return of systab[i]), records with the
 * union evtflags of its started pcbs' DTEVT_* flags, or no longer
 * (on false).  Called under the core's lock from the syscall
 * provider's dtpv_start/dtpv_stop; must not wait for event producers.
 */
typedef void	(*dt_ksys_set_fn)(unsigned int p, struct dt_probe *dtp,
		    bool on, uint64_t evtflags);

/*
 * The owner of the traced processes (the syscall provider): true when
 * the event of process pid at time ns (CLOCK_REALTIME) is one the
 * preload library records, or may have recorded, so the kernel's copy
 * must be dropped.  Called by the kernel feed's one reader thread only,
 * registered with liburcu.
 */
typedef bool	(*dt_ksys_traced_fn)(pid_t pid, uint64_t ns);

/*
 * dtd --syscall-scope: all (the default) lets the kernel feed offer
 * itself; launched keeps the syscall probes to the library's processes.
 * dt_ksys_scope_all() is the scope in force: all only for a root dtd.
 * From dtd's options, before dt_dev_init().  [I]
 */
void	dt_ksys_scope(bool all);
bool	dt_ksys_scope_all(void);

/*
 * The owner again: process pid exec'd a new image (perf's comm record
 * of the exec, read before the records of the new image on the CPU it
 * exec'd on), so that one about to attach, whose loader runs before its
 * library is there, is known before it attached.  Called by the kernel
 * feed's reader thread only, as dt_ksys_traced_fn.
 */
typedef void	(*dt_ksys_exec_fn)(pid_t pid);

/*
 * The tree's feed (the tracepoint provider, dt_tp_ksystree.c): pcb dp
 * of syscall probe p (as above), enabled with DTEVT_TREE on an open
 * that named a tree (dtvar.h), starts (on) or stops taking the kernel's
 * events of that tree's processes that no hook records.  A start may
 * look at the pcbs of dp's open that start after it (dp_snext) for the
 * calls to come, by dt_ksys_index().  Same caller and rules as
 * dt_ksys_set_fn.
 */
typedef void	(*dt_ksys_tree_fn)(unsigned int p, struct dt_pcb *dp, bool on);

/*
 * The owner again: the wire index p of pcb dp when it is a syscall
 * probe's enabled with DTEVT_TREE, else -1.  Under the core's lock.
 */
typedef int	(*dt_ksys_index_fn)(const struct dt_pcb *dp);

/*
 * The tree's feed again (dt_tp_ksysarm.c): a launcher's helper, process
 * helper of user uid and group gid (the ingest socket's credentials),
 * holds pid at the exec of an image no hook sees (UDT_HELLO_KARM,
 * udt_wire.h): a statically linked one, or, for a root helper, one
 * exec'd in secure mode (set-id, file capabilities: AT_SECURE, whose
 * loader ignores LD_PRELOAD).  Open the kernel's copy of pid's calls,
 * and of what it forks, for the recording opens that named a tree with
 * DTTR_F_HOOKED (dtvar.h) and have pid in it, before the helper lets
 * pid run.  0 when one such open has its calls (opened now, or by an
 * ancestor's events that a secure exec did not drop), else an errno:
 * EPERM when pid is not held by helper as its only thread, or, helper
 * not root, with other credentials than helper's; ENOENT when no such
 * open has it in its tree, ENOEXEC when its file asks for a loader and
 * its exec was not a root helper's secure one, ENOSPC when the open
 * follows as many images as it may already, ESRCH when pid was another
 * process by the time the events were open, perf's when they would not
 * open.  The word of the helper names a pid and nothing else: what pid
 * runs, its tree and its tracer are read from /proc, its files only
 * once it is in a tree.  An ingest serve worker, no
 * lock held; never waits for the reader.
 */
typedef int	(*dt_ksys_arm_fn)(pid_t helper, uid_t uid, gid_t gid,
		    pid_t pid);

/*
 * The kernel feed's counting program (dt_tp_ksysbpf.c): pcb dp of
 * syscall probe p (as above), not DTEVT_LAUNCHED, starts (on) or stops
 * having its kernel part counted by an eBPF program on raw_syscalls
 * instead of the sampled feed.  On: true when it is, dp_knot set, so
 * the set_fn's events skip it (the hooks' still come); false: nothing
 * done, the sampled feed's as before.  Off: only for a pcb it took,
 * its last counts folded.  Same caller and rules as dt_ksys_set_fn,
 * called before it.
 */
typedef bool	(*dt_ksys_kcount_fn)(unsigned int p, struct dt_pcb *dp,
		    bool on);

/*
 * The owner tells the counting program's tracee map: process pid
 * attached its first image (on), or left the list with its last
 * (off), as dt_ingest_sink_attach() and _exit() see them.  On: true
 * when the program saw pid's exec and has hidden its calls since (the
 * starting library's: none of its records before the attach was
 * counted by the program).  The ingest accept or drain thread; must
 * not wait for the core's lock.
 */
typedef bool	(*dt_ksys_tgid_fn)(pid_t pid, bool on);

/* Register each once, from provider init functions.  [I] */
void	dt_ksys_kcount_feed(dt_ksys_kcount_fn, dt_ksys_tgid_fn);
void	dt_ksys_feed(dt_ksys_set_fn);
void	dt_ksys_owner(dt_ksys_traced_fn, dt_ksys_exec_fn);
void	dt_ksys_tree_feed(dt_ksys_tree_fn);
void	dt_ksys_tree_owner(dt_ksys_index_fn);
void	dt_ksys_tree_arm(dt_ksys_arm_fn);

/* Forward to what was registered; nothing / false when nothing was. */
void	dt_ksys_set(unsigned int p, struct dt_probe *dtp, bool on,
	    uint64_t evtflags);
bool	dt_ksys_traced(pid_t pid, uint64_t ns);
void	dt_ksys_exec(pid_t pid);
void	dt_ksys_tree(unsigned int p, struct dt_pcb *dp, bool on);
int	dt_ksys_index(const struct dt_pcb *dp);
int	dt_ksys_arm(pid_t helper, uid_t uid, gid_t gid, pid_t pid);
bool	dt_ksys_kcount(unsigned int p, struct dt_pcb *dp, bool on);
bool	dt_ksys_tgid(pid_t pid, bool on);

/*
 * Whether the image process pid runs will attach to this dtd: it
 * preloads the library and names dtd's socket (NAME=VALUE entries,
 * NUL-ended, in /proc/PID/environ, read into buf of size bytes; an
 * entry cut at the end is left out).  Any thread, its own buf.
 */
bool	dt_ksys_will_attach(pid_t pid, char *buf, size_t size);

/*
 * Whether a tree's feed was offered: a syscall probe may then be
 * enabled with DTEVT_TREE.  It is only where the kernel feed's owner is
 * told of every tracee (dt_ksys_scope_all()), or the feed could not
 * drop the calls a hook records.  [I]
 */
bool	dt_ksys_tree_can(void);

#endif /* DT_KSYS_H */
