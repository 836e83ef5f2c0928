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
 * Work that may wait on something a user controls: a read of a process's
 * memory or of its /proc/PID/maps (which waits for its exec or its mmap
 * lock, or for a page of a FUSE mount that never answers), or a copy to
 * and from an ioctl caller's memory.  No thread that serves everyone
 * (the drain, accept and device loops) may do such work itself; it
 * queues it here instead, keyed by the user it is for, and either looks
 * for the answer later or waits for it a bounded time.
 *
 * A queue runs one worker thread per key, made when the key's first job
 * comes and ended once it has been idle a while: a job that waits holds
 * up only the later jobs of its own key.  A stuck worker cannot be
 * woken (the kernel's waits there end only for a fatal signal), so it
 * stays until its user lets it go or dtd exits; one thread per user is
 * what a user's stall costs dtd.  A caller that waits, or makes others
 * wait, on an answer must bound it, and stop once the worker is stuck
 * (dt_wq_stalled()): the drain's mark behind a held batch does both.
 */
#ifndef DT_WORKER_H
#define DT_WORKER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A job.  wk_fn runs on the key's worker, jobs of one key in the order
 * they were queued; cancel: the queue stopped before it ran, so it must
 * only release what it holds (reply, close) and do nothing that waits.
 * The job belongs to the queue from dt_wq_submit() until wk_fn is called.
 */
struct dt_work {
	struct dt_work	*wk_next;	/* the queue's lock */
	void		(*wk_fn)(struct dt_work *, bool cancel);
};

struct dt_wq;

/*
 * A queue whose keys hold at most qmax jobs waiting each (beyond, the
 * submit fails).  name: for the threads (at most 15 bytes shown).
 * NULL when out of memory.  Any thread.
 */
struct dt_wq	*dt_wq_new(const char *name, unsigned int qmax);

/*
 * Queue wk on key's worker.  0; EAGAIN when key has qmax jobs waiting;
 * ESHUTDOWN once dt_wq_stop() was called; an errno of pthread_create().
 * Any thread, never waits but for the queue's lock.
 */
int	dt_wq_submit(struct dt_wq *, uint32_t key, struct dt_work *wk);

/*
 * Whether key's worker has been in one job for longer than ns: the
 * caller had better not wait for another of its answers.  Any thread.
 */
bool	dt_wq_stalled(struct dt_wq *, uint32_t key, uint64_t ns);

/*
 * Refuse new jobs, cancel those waiting, and wait up to ms for the jobs
 * running to end.  Returns how many workers still run (stuck in a job);
 * they end when their job does, touching nothing but the job and the
 * queue.  Any thread but a worker of the queue.
 */
unsigned int	dt_wq_stop(struct dt_wq *, unsigned int ms);
/*
 * Free a stopped queue, unless a worker still runs in it (it then stays
 * for that worker, which ends when its job does).  After dt_wq_stop().
 */
void	dt_wq_free(struct dt_wq *);

#endif /* DT_WORKER_H */
