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
 * What the tracepoint provider knows of Linux threads that a record does
 * not say: the process (tgid) of a thread named in a field (the task a
 * wakeup wakes, the next task of a switch), and the name of the thread
 * an event happened in.  A small cache in front of /proc, fed by what
 * records do say.
 *
 * Every function here is for the perf reader thread only ([R]), but
 * those said to be for any thread.
 */
#ifndef DT_TP_TASK_H
#define DT_TP_TASK_H

#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

struct dt_evt;
struct dt_tp_sample;

/* Record that thread tid belongs to process tgid, named comm (or NULL). */
void	dt_tp_task_note(pid_t tid, pid_t tgid, const char *comm);
/*
 * A rename or an exec perf reported at ns (0: unknown): as
 * dt_tp_task_note(), unless the thread's name already comes from a
 * later one (CPUs' buffers are read one after another).
 */
void	dt_tp_task_rename(pid_t tid, pid_t tgid, const char *comm,
	    uint64_t ns);
/*
 * A fork or a clone perf reported at ns: thread tid of tgid was made by
 * thread ptid of ppid and has its name from then until an exec or a
 * rename (a shell's child is the shell until its execve returns).  The
 * maker's name from this cache, else /proc while it runs; none known,
 * nothing changes.  Read with the renames, in any order with them.
 */
void	dt_tp_task_fork(pid_t tid, pid_t tgid, pid_t ptid, pid_t ppid,
	    uint64_t ns);

/*
 * Thread tid's process and name as /proc/TID/status says them (the name
 * as escaped there, up to DTMAXCOMLEN - 1 bytes, NUL padded, the name
 * a record gets): 0, or -1 once gone.  Any thread.
 */
int	dt_tp_task_status(pid_t tid, pid_t *tgid, char *comm);

/*
 * The name a record would give a task the kernel named kcomm (16 bytes,
 * NUL padded) at an event, into comm (DTMAXCOMLEN bytes): kcomm as /proc
 * escapes it, or /proc's longer name of thread tid (0: none) of pid, a
 * workqueue worker's or a kernel thread's full name, if that thread
 * still runs under a name that begins as kcomm.  Any thread.
 */
void	dt_tp_task_kname(const char *kcomm, pid_t pid, pid_t tid,
	    char *comm);

/* The process of thread tid; tid itself when /proc no longer knows it. */
pid_t	dt_tp_task_tgid(pid_t tid);

/*
 * The name of thread tid of pid into comm (DTMAXCOMLEN bytes, padded
 * with NULs) for its record stamped at ns (CLOCK_REALTIME, 0: now): the
 * name it had then, when a rename read before it came later; "idleN"
 * for CPU N's idle task (tid 0), as OpenBSD names its idle threads; ""
 * once the thread is gone.
 */
void	dt_tp_task_comm(pid_t pid, pid_t tid, unsigned int cpu, uint64_t ns,
	    char *comm);

/*
 * Begin ev from the perf record s as every provider on perf's records
 * does: zeroed, s's process, thread and time stamp, its kernel and user
 * stacks when stacks, and the thread's name when flags (the probe's
 * DTEVT_* union) asks for it.  The reader thread.
 */
void	dt_tp_evt_begin(struct dt_evt *ev, const struct dt_tp_sample *s,
	    uint64_t flags, bool stacks);

#endif /* DT_TP_TASK_H */
