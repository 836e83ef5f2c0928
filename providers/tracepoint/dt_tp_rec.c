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
 * The tracepoint reader's side of perf's ring buffers: each record of an
 * event's buffers (a sample, a switch in, a rename, a loss) turned into
 * a dt_tp_sample for the event's callback, one CPU's buffer at a time or
 * all of them merged by time (dt_tp_perf.c says when).
 */
#include <linux/perf_event.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <urcu.h>

#include <dev/dt/dtvar.h>

#include "dt_clock.h"
#include "dt_perfev.h"
#include "dt_untrace.h"
#include "dt_tp_perf_var.h"
#include "dt_tp_task.h"

static union dt_perf_wrap dt_tpev_wrap;	/* [R] a wrapped record's copy */
static const struct stacktrace dt_tpev_nostack;	/* [I] */

/*
 * A switch in (PERF_RECORD_SWITCH_CPU_WIDE without MISC_SWITCH_OUT):
 * next_prev pid and tid, then sample_id: pid, tid, time, cpu.  The
 * switch's other half, out, is the tracepoint's.  [R], RCU read.
 */
static void
dt_tpev_switch(struct dt_tpev *ev, const char *rec, size_t len)
{
	struct dt_tp_sample s;
	uint32_t pid, tid, cpu;
	uint64_t time;

	if (len < 32)
		return;
	memset(&s, 0, sizeof(s));
	memcpy(&pid, rec + 8, 4);
	memcpy(&tid, rec + 12, 4);
	memcpy(&time, rec + 16, 8);
	memcpy(&cpu, rec + 24, 4);
	s.ts_cpu = cpu;
	s.ts_pid = (pid_t)pid;
	s.ts_tid = (pid_t)tid;
	s.ts_ns = time + (uint64_t)ev->tpe_tsoff;
	s.ts_ptime = time;
	s.ts_kstack = s.ts_ustack = &dt_tpev_nostack;
	s.ts_swin = true;
	s.ts_swev = true;
	ev->tpe_fn(ev->tpe_arg, &s);
	uatomic_inc(&dt_tpev_counters.tps_records);
}

/* A PERF_RECORD_SAMPLE laid out per dt_tpev_attr().  [R], RCU read. */
static void
dt_tpev_sample(struct dt_tpev *ev, const char *rec, size_t len,
    bool chain)
{
	/* Zeroed: the provider hands them on whole, to device readers. */
	struct stacktrace kst = { 0 }, ust = { 0 };
	struct dt_tp_sample s;
	uint64_t nr, time, abi, regs[DT_TPEV_MAXREGS];
	uint32_t pid, tid, cpu, rawsize;
	size_t off;

	if (len < 24)
		return;
	memset(&s, 0, sizeof(s));
	memcpy(&pid, rec, 4);
	memcpy(&tid, rec + 4, 4);
	memcpy(&time, rec + 8, 8);
	memcpy(&cpu, rec + 16, 4);
	off = 24;
	if (chain) {
		if (off + 8 > len)
			return;
		memcpy(&nr, rec + off, 8);
		off += 8;
		if (nr > (len - off) / 8)
			return;
		dt_perf_callchain(rec + off, nr, &kst, &ust);
		dt_ustack_untrace((pid_t)pid, &ust);
		off += nr * 8;
	}
	if (off + 4 > len)
		return;
	memcpy(&rawsize, rec + off, 4);
	off += 4;
	if (rawsize > len - off)
		return;
	s.ts_cpu = cpu;
	s.ts_pid = (pid_t)pid;
	s.ts_tid = (pid_t)tid;
	s.ts_ns = time + (uint64_t)ev->tpe_tsoff;
	s.ts_ptime = time;
	s.ts_kstack = &kst;
	s.ts_ustack = &ust;
	s.ts_raw = rec + off;
	s.ts_rawlen = rawsize;
	off += rawsize;
	/* REGS_INTR: the ABI word (0: none), then the registers. */
	if (ev->tpe_nregs > 0) {
		if (off + 8 > len)
			return;
		memcpy(&abi, rec + off, 8);
		off += 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (ev->tpe_nregs > (len - off) / 8)
				return;
			/* A wrapped record's copy is not 8-byte aligned. */
			memcpy(regs, rec + off, ev->tpe_nregs * 8);
			s.ts_regs = regs;
			s.ts_nregs = ev->tpe_nregs;
		}
	}
	s.ts_swev = ev->tpe_switches;
	ev->tpe_fn(ev->tpe_arg, &s);
	uatomic_inc(&dt_tpev_counters.tps_records);
}

/* Hand one record to the event's callback.  [R], RCU read. */
static void
dt_tpev_record(struct dt_tpev_cpu *c, const struct perf_event_header *hp)
{
	struct dt_tpev *ev = c->tpc_ev;
	const char *body = (const char *)(hp + 1);
	size_t len = hp->size - sizeof(*hp);
	struct dt_tp_sample s;
	uint32_t fk[4];
	uint64_t lost;

	switch (hp->type) {
	case PERF_RECORD_SAMPLE:
		/* TID, then TIME: where a later loss may begin */
		if (len >= 16)
			memcpy(&c->tpc_last, body + 8, 8);
		dt_tpev_sample(ev, body, len, ev->tpe_chain);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!(hp->misc & PERF_RECORD_MISC_SWITCH_OUT))
			dt_tpev_switch(ev, body, len);
		break;
	case PERF_RECORD_COMM:
		memset(&s, 0, sizeof(s));
		if (!dt_perf_comm_rec(body, len, &s.ts_pid, &s.ts_tid,
		    &s.ts_comm))
			break;
		s.ts_exec = (hp->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
		if ((s.ts_ns = dt_perf_comm_time(body, len)) != 0)
			s.ts_ns += (uint64_t)ev->tpe_tsoff;
		s.ts_kstack = s.ts_ustack = &dt_tpev_nostack;
		ev->tpe_fn(ev->tpe_arg, &s);
		break;
	case PERF_RECORD_MMAP:
		/* pid, tid, addr, len, pgoff, the name NUL-padded to 8 */
		if (len < 33 || !ev->tpe_tasks ||
		    memchr(body + 32, '\0', len - 32) == NULL)
			break;
		memset(&s, 0, sizeof(s));
		memcpy(&s.ts_pid, body, 4);
		memcpy(&s.ts_tid, body + 4, 4);
		s.ts_mmap = body + 32;
		/*
		 * then pid, tid and the time (sample_id_all), as after a
		 * comm's name: the comm parser, handed the record from 8
		 * bytes before the name (body + 24), finds them the same way
		 */
		if ((s.ts_ns = dt_perf_comm_time(body + 24, len - 24)) != 0)
			s.ts_ns += (uint64_t)ev->tpe_tsoff;
		s.ts_kstack = s.ts_ustack = &dt_tpev_nostack;
		ev->tpe_fn(ev->tpe_arg, &s);
		break;
	case PERF_RECORD_FORK:
		/*
		 * pid, ppid, tid, ptid, the time of the fork: the new
		 * thread has its maker's name until it execs, and its
		 * records read before that exec's had /proc's, the name
		 * after it (a shell's child's execve entry).  Read after
		 * every buffer's renames, or in time order with them (a
		 * merge by switch records).  The kernel sends them to
		 * every event with comm records, so each open event reads
		 * the same fork: dt_tp_task_fork() takes it more than once.
		 */
		if (len < 24)
			break;
		memcpy(&fk[0], body, 16);
		memcpy(&s.ts_ns, body + 16, 8);
		dt_tp_task_fork((pid_t)fk[2], (pid_t)fk[0], (pid_t)fk[3],
		    (pid_t)fk[1], s.ts_ns + (uint64_t)ev->tpe_tsoff);
		break;
	case PERF_RECORD_EXIT:
		/*
		 * pid, ppid, tid, ptid, the time of the exit.  The kernel
		 * sends them to every event with comm records: only one that
		 * asked (DT_TPEV_MMAPS) has a callback that knows them.
		 */
		if (len < 24 || !ev->tpe_tasks)
			break;
		memset(&s, 0, sizeof(s));
		memcpy(&s.ts_pid, body, 4);
		memcpy(&s.ts_tid, body + 8, 4);
		memcpy(&s.ts_ns, body + 16, 8);
		s.ts_ns += (uint64_t)ev->tpe_tsoff;
		s.ts_exit = true;
		s.ts_kstack = s.ts_ustack = &dt_tpev_nostack;
		ev->tpe_fn(ev->tpe_arg, &s);
		break;
	case PERF_RECORD_LOST:
		if (len < 16)
			break;
		memcpy(&lost, body + 8, 8);
		memset(&s, 0, sizeof(s));
		s.ts_kstack = s.ts_ustack = &dt_tpev_nostack;
		s.ts_lost = lost;
		s.ts_pfrom = c->tpc_last;
		/* sample_id_all: pid, tid, then the time the record was put */
		if (len >= 32)
			memcpy(&s.ts_ptime, body + 24, 8);
		s.ts_cpu = (unsigned int)(c - ev->tpe_cpus);
		ev->tpe_fn(ev->tpe_arg, &s);
		uatomic_add(&dt_tpev_counters.tps_lost, lost);
		break;
	}
}

/*
 * A pass without switch records reads one CPU's buffer after another:
 * a thread that exec'd on one CPU and went on on another has its
 * samples read before its new name unless every CPU's renames are taken
 * first.  So: the renames and execs of every buffer up to its head
 * (kept in tpc_head), and what the execs mapped (DT_TPEV_MMAPS), then
 * the forks of every buffer (dt_tpev_forks()), then each buffer's
 * records up to there, those left out; the names keep their time
 * (dt_tp_task_rename()).  [R], RCU read.
 */
enum { DT_TPEV_NAMES, DT_TPEV_FORKS, DT_TPEV_REST };

static int
dt_tpev_kind(uint32_t type)
{
	if (type == PERF_RECORD_COMM || type == PERF_RECORD_MMAP)
		return DT_TPEV_NAMES;
	return type == PERF_RECORD_FORK ? DT_TPEV_FORKS : DT_TPEV_REST;
}

static uint64_t
dt_tpev_walk(struct dt_tpev_cpu *c, int kind)
{
	struct perf_event_mmap_page *meta = c->tpc_meta;
	const struct perf_event_header *hp;
	struct perf_event_header h;
	uint64_t tail = meta->data_tail;

	while ((hp = dt_perf_rec_at(meta, tail, c->tpc_head, &h,
	    &dt_tpev_wrap)) != NULL) {
		if (dt_tpev_kind(h.type) == kind)
			dt_tpev_record(c, hp);
		tail += h.size;
	}
	return tail;
}

static void
dt_tpev_renames(struct dt_tpev_cpu *c)
{
	c->tpc_head = __atomic_load_n(&c->tpc_meta->data_head,
	    __ATOMIC_ACQUIRE);
	(void)dt_tpev_walk(c, DT_TPEV_NAMES);
}

/*
 * After every buffer's renames: a fork names its child after its maker
 * as of the fork, which an exec of the maker on another CPU, in a
 * buffer read later, would have changed.  [R], RCU read.
 */
static void
dt_tpev_forks(struct dt_tpev_cpu *c)
{
	(void)dt_tpev_walk(c, DT_TPEV_FORKS);
}

static void
dt_tpev_drain(struct dt_tpev_cpu *c)
{
	__atomic_store_n(&c->tpc_meta->data_tail,
	    dt_tpev_walk(c, DT_TPEV_REST), __ATOMIC_RELEASE);
}

/*
 * The time perf stamped on the record at c's merge cursor (a sample, a
 * switch, a rename, an exit): 0 for what has none (lost records go
 * first), UINT64_MAX when the pass has no more of c.  [R].
 */
static void
dt_tpev_peek(struct dt_tpev_cpu *c)
{
	const struct perf_event_header *hp;
	struct perf_event_header h;
	const char *body;

	c->tpc_ns = UINT64_MAX;
	if ((hp = dt_perf_rec_at(c->tpc_meta, c->tpc_tail, c->tpc_head, &h,
	    &dt_tpev_wrap)) == NULL)
		return;
	body = (const char *)(hp + 1);
	c->tpc_ns = 0;
	if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16)
		memcpy(&c->tpc_ns, body + 8, 8);
	else if (h.type == PERF_RECORD_SWITCH_CPU_WIDE &&
	    h.size >= sizeof(h) + 24)
		memcpy(&c->tpc_ns, body + 16, 8);
	else if (h.type == PERF_RECORD_COMM)
		c->tpc_ns = dt_perf_comm_time(body, h.size - sizeof(h));
	/* a fork at its time: after its maker's exec, before its child's */
	else if (h.type == PERF_RECORD_FORK && h.size >= sizeof(h) + 24)
		memcpy(&c->tpc_ns, body + 16, 8);
	/* an exit in its place, not before the samples that preceded it */
	else if (h.type == PERF_RECORD_EXIT && h.size >= sizeof(h) + 24)
		memcpy(&c->tpc_ns, body + 16, 8);
}

void
dt_tpev_drain_merged(struct dt_tpev *ev, bool final)
{
	const struct perf_event_header *hp;
	struct perf_event_header h;
	struct dt_tpev_cpu *c, *best;
	uint64_t now = UINT64_MAX - DT_TPEV_AHEAD_NS, cutoff = UINT64_MAX;
	unsigned int i;

	if (!final && ev->tpe_clk != DT_PERF_CLOCK_PERF) {
		now = dt_clock_ns(ev->tpe_clk);
		cutoff = now - DT_TPEV_HOLD_MS * 1000000ULL;
	}
	for (i = 0; i < ev->tpe_ncpu; i++) {
		c = &ev->tpe_cpus[i];
		if (c->tpc_meta == NULL)
			continue;
		c->tpc_head = __atomic_load_n(&c->tpc_meta->data_head,
		    __ATOMIC_ACQUIRE);
		c->tpc_tail = c->tpc_meta->data_tail;
		dt_tpev_peek(c);
	}
	for (;;) {
		best = NULL;
		for (i = 0; i < ev->tpe_ncpu; i++) {
			c = &ev->tpe_cpus[i];
			if (c->tpc_meta != NULL && c->tpc_ns != UINT64_MAX &&
			    (best == NULL || c->tpc_ns < best->tpc_ns))
				best = c;
		}
		/* A time far ahead of ours: the clock was set back. */
		if (best == NULL || (best->tpc_ns > cutoff &&
		    best->tpc_ns < now + DT_TPEV_AHEAD_NS))
			break;
		if ((hp = dt_perf_rec_at(best->tpc_meta, best->tpc_tail,
		    best->tpc_head, &h, &dt_tpev_wrap)) == NULL)
			break;
		dt_tpev_record(best, hp);
		best->tpc_tail += h.size;
		dt_tpev_peek(best);
	}
	for (i = 0; i < ev->tpe_ncpu; i++) {
		c = &ev->tpe_cpus[i];
		if (c->tpc_meta != NULL)
			__atomic_store_n(&c->tpc_meta->data_tail, c->tpc_tail,
			    __ATOMIC_RELEASE);
	}
}

/*
 * The merge key of c's record at its cursor: its time on the realtime
 * clock, so that events on other clocks compare; 0 (a loss) and
 * UINT64_MAX (nothing more) as they are.  [R].
 */
static uint64_t
dt_tpev_key(const struct dt_tpev_cpu *c)
{
	if (c->tpc_ns == 0 || c->tpc_ns == UINT64_MAX)
		return c->tpc_ns;
	return c->tpc_ns + (uint64_t)c->tpc_ev->tpe_tsoff;
}

/* The heap of a round's cursors, oldest key on top.  [R]. */
static struct dt_tpev_cpu	**dt_tpev_heap;
static size_t			  dt_tpev_heapmax;

static void
dt_tpev_sift(size_t n, size_t i)
{
	struct dt_tpev_cpu *c = dt_tpev_heap[i];
	uint64_t key = dt_tpev_key(c);
	size_t k;

	while ((k = 2 * i + 1) < n) {
		if (k + 1 < n && dt_tpev_key(dt_tpev_heap[k + 1]) <
		    dt_tpev_key(dt_tpev_heap[k]))
			k++;
		if (dt_tpev_key(dt_tpev_heap[k]) >= key)
			break;
		dt_tpev_heap[i] = dt_tpev_heap[k];
		i = k;
	}
	dt_tpev_heap[i] = c;
}

/* Room in the heap for n cursors: false on ENOMEM.  [R]. */
static bool
dt_tpev_heap_room(size_t n)
{
	struct dt_tpev_cpu **h;

	if (n <= dt_tpev_heapmax)
		return true;
	if ((h = realloc(dt_tpev_heap, n * sizeof(*h))) == NULL)
		return false;
	dt_tpev_heap = h;
	dt_tpev_heapmax = n;
	return true;
}

/*
 * ev's buffers into the heap, each with its head as it is now: the
 * heads of a round read one right after another, so that what a buffer
 * gets after its read is younger than the round's start but for that
 * moment (the rename walks come after all of them).  [R].
 */
static size_t
dt_tpev_heap_add(struct dt_tpev *ev, size_t n)
{
	struct dt_tpev_cpu *c;
	unsigned int i;

	for (i = 0; i < ev->tpe_ncpu; i++) {
		c = &ev->tpe_cpus[i];
		if (c->tpc_meta == NULL)
			continue;
		c->tpc_head = __atomic_load_n(&c->tpc_meta->data_head,
		    __ATOMIC_ACQUIRE);
		dt_tpev_heap[n++] = c;
	}
	return n;
}

/* c is read to its head: the kernel may write there again.  [R]. */
static void
dt_tpev_done(struct dt_tpev_cpu *c)
{
	__atomic_store_n(&c->tpc_meta->data_tail, c->tpc_tail,
	    __ATOMIC_RELEASE);
}

void
dt_tpev_drain_round(struct dt_tpev *const *evs, size_t nev,
    struct dt_tpev *dead)
{
	const struct perf_event_header *hp;
	struct perf_event_header h;
	struct dt_tpev_cpu *c;
	struct dt_tpev *ev;
	size_t i, n = 0, want = 0;

	for (i = 0; i < nev; i++)
		if (!evs[i]->tpe_switches)
			want += evs[i]->tpe_ncpu;
	for (ev = dead; ev != NULL; ev = ev->tpe_next)
		if (!ev->tpe_switches)
			want += ev->tpe_ncpu;
	if (!dt_tpev_heap_room(want)) {
		/* One buffer after another, as before the merge. */
		for (i = 0; i < nev; i++)
			dt_tpev_drain_all(evs[i], false);
		for (ev = dead; ev != NULL; ev = ev->tpe_next)
			dt_tpev_drain_all(ev, true);
		return;
	}
	/* Those with switch records on their own, as before. */
	for (i = 0; i < nev; i++)
		if (evs[i]->tpe_switches)
			dt_tpev_drain_merged(evs[i], false);
	for (ev = dead; ev != NULL; ev = ev->tpe_next)
		if (ev->tpe_switches)
			dt_tpev_drain_merged(ev, true);
	for (i = 0; i < nev; i++)
		if (!evs[i]->tpe_switches)
			n = dt_tpev_heap_add(evs[i], n);
	for (ev = dead; ev != NULL; ev = ev->tpe_next)
		if (!ev->tpe_switches)
			n = dt_tpev_heap_add(ev, n);
	for (i = 0; i < n; i++)
		(void)dt_tpev_walk(dt_tpev_heap[i], DT_TPEV_NAMES);
	for (i = 0; i < n; i++) {
		c = dt_tpev_heap[i];
		dt_tpev_forks(c);
		c->tpc_tail = c->tpc_meta->data_tail;
		dt_tpev_peek(c);
	}
	for (i = n / 2; i-- > 0; )
		dt_tpev_sift(n, i);
	while (n > 0 && (c = dt_tpev_heap[0])->tpc_ns != UINT64_MAX) {
		if ((hp = dt_perf_rec_at(c->tpc_meta, c->tpc_tail,
		    c->tpc_head, &h, &dt_tpev_wrap)) == NULL)
			c->tpc_ns = UINT64_MAX;
		else {
			/* The renames and forks went first. */
			if (dt_tpev_kind(h.type) == DT_TPEV_REST)
				dt_tpev_record(c, hp);
			c->tpc_tail += h.size;
			dt_tpev_peek(c);
		}
		/* Its room back at once: a long round's others go on. */
		if (c->tpc_ns == UINT64_MAX)
			dt_tpev_done(c);
		dt_tpev_sift(n, 0);
	}
	/* The loop ends with every cursor done: each gave its room back. */
}

void
dt_tpev_drain_all(struct dt_tpev *ev, bool final)
{
	unsigned int i;

	if (ev->tpe_switches) {
		dt_tpev_drain_merged(ev, final);
		return;
	}
	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_meta != NULL)
			dt_tpev_renames(&ev->tpe_cpus[i]);
	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_meta != NULL)
			dt_tpev_forks(&ev->tpe_cpus[i]);
	for (i = 0; i < ev->tpe_ncpu; i++)
		if (ev->tpe_cpus[i].tpc_meta != NULL)
			dt_tpev_drain(&ev->tpe_cpus[i]);
}

