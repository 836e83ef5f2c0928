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
 * The library's part in an exec: the drain it waits for, so that dtd
 * takes what the old image wrote before it discards the ring, and the
 * announce, so that dtd holds the other sources' events for the new
 * image's loader (udt_wire.h's rh_exec, dtd's dt_ingest_exec.c).  Both
 * come before the launcher's helper is asked to follow the exec
 * (udt_exec_before()).
 *
 * Any thread, any context, a SIGSYS handler's among them: raw system
 * calls only, and none at all in the announce.
 */
#include <sys/syscall.h>
#include <time.h>

#include "udt_preload.h"
#include "udt_sys.h"

#define UDT_XD_STEP	50000L		/* ns between looks at rh_tail */
#define UDT_XD_STALL	100		/* looks without progress: give up */
#define UDT_XD_STALLV	400		/* a vfork child's: its pid rides on it */

/*
 * Before an exec: wait until dtd has drained what this process wrote.
 * dtd discards whatever it finds in a ring once the image that attached
 * with it has exec'd (a child the process forked may still hold the ring
 * and would write in the new image's name: dti_image_same()), so what
 * the image wrote last, the execve's entry among it, must be drained
 * first.  Only where dtd said so in the welcome (UDT_W_XDRAIN: root's
 * tracees, and those whose memory dtd could not open, are not checked).
 * Nothing waits when the ring is empty (nothing enabled); else
 * dtd's drain comes within its polling period (1 ms at most while
 * something is enabled).  Gives up once dtd made no progress for
 * UDT_XD_STALL looks (dtd gone or stuck): those records are lost, as
 * they would be with a dtd that died, and that ring is not waited for
 * again, so a process whose dtd was killed does not pay it at every exec.
 *
 * Any thread, any context (a SIGSYS handler among them); raw system
 * calls only; made before the launcher's helper is asked to follow the
 * exec (udt_lfollow_exec()), whose tracer counts the calls in between.
 */
/*
 * Where this process announces its execs: its ring, or, in a fork child
 * that has not attached yet, its parent's (udt_fork_child()).
 */
static struct udt_ring_hdr *
udt_exec_ring(void)
{
	struct udt_ring_hdr *r = __atomic_load_n(&udt_ring, __ATOMIC_ACQUIRE);

	return r != NULL ? r : __atomic_load_n(&udt_pring, __ATOMIC_ACQUIRE);
}

/*
 * Just before an execve, once its ring is drained: announce it in the
 * ring (rh_exec, udt_wire.h).  The loader of the new image runs under
 * the launcher's helper, which stamps its calls as they happen but hands
 * them over only once the new image's library attached: dtd holds the
 * other sources' events from this stamp until they are in, so they are
 * not let out ahead of the loader's.  udt_exec_stamp() takes the tid and
 * the time (as a record's: TSC or clock); udt_exec_mark() publishes them
 * right after, before the helper is asked (udt_exec_before()), with
 * stores alone.  Any thread, any context, a vfork child's among them (it
 * announces in the ring it shares, naming itself).  udt_exec_retract():
 * the helper does not follow, or the exec failed (udt_exec_unmark()); the
 * announce goes back if it is still this thread's.
 */
void
udt_exec_stamp(int32_t *tid, uint64_t *stamp)
{
	struct timespec ts;

	*tid = udt_gettid();
	if (__atomic_load_n(&udt_use_tsc, __ATOMIC_RELAXED)) {
		*stamp = (__builtin_ia32_rdtsc() & 0x7fffffffffffffffULL) |
		    (1ULL << 63);
		return;
	}
	if (udt_real_clock_gettime_fn != NULL)
		udt_real_clock_gettime_fn(CLOCK_REALTIME, &ts);
	else
		udt_sys2(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	*stamp = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
udt_exec_mark(int32_t tid, uint64_t stamp)
{
	struct udt_ring_hdr *r = udt_exec_ring();
	struct udt_exec_ann *a;
	int32_t cur;
	unsigned int i;

	if (r == NULL || tid <= 0)
		return;
	/*
	 * Claimed as -tid, which dtd and the other claimers take for a free
	 * slot that is not free, then the stamp, then the tid: dtd never
	 * sees the tid with the slot's last stamp, which it may have held
	 * for D already and would free at once.
	 */
	a = &r->rh_exec[(unsigned int)tid % UDT_EXEC_NANN];
	for (i = 0; i < UDT_EXEC_NANN; i++) {
		cur = 0;
		if (__atomic_compare_exchange_n(&r->rh_exec[i].ua_tid, &cur,
		    -tid, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
		    (cur == tid && __atomic_compare_exchange_n(
		    &r->rh_exec[i].ua_tid, &cur, -tid, 0, __ATOMIC_RELAXED,
		    __ATOMIC_RELAXED))) {
			a = &r->rh_exec[i];
			break;
		}
	}
	/* None free: one is taken over, its exec likelier done than not. */
	if (i == UDT_EXEC_NANN)
		__atomic_store_n(&a->ua_tid, -tid, __ATOMIC_RELAXED);
	__atomic_store_n(&a->ua_ts, stamp, __ATOMIC_RELAXED);
	__atomic_store_n(&a->ua_tid, tid, __ATOMIC_RELEASE);
}

void
udt_exec_retract(int32_t tid)
{
	struct udt_ring_hdr *r = udt_exec_ring();
	int32_t want;
	unsigned int i;

	if (r == NULL || tid <= 0)
		return;
	for (i = 0; i < UDT_EXEC_NANN; i++) {
		want = tid;
		(void)__atomic_compare_exchange_n(&r->rh_exec[i].ua_tid,
		    &want, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}

void
udt_exec_unmark(void)
{
	udt_exec_retract(udt_gettid());
}

static struct udt_ring_hdr *udt_xd_gaveup;	/* [a] not drained: dtd died */

void
udt_exec_drain(void)
{
	struct udt_ring_hdr *r = __atomic_load_n(&udt_ring, __ATOMIC_ACQUIRE);
	struct timespec ts = { 0, UDT_XD_STEP };
	uint64_t head, tail, last;
	unsigned int stall = 0, limit;

	/* Once given up on, a ring (a dead dtd's) is not waited for again. */
	if (r == NULL || (!__atomic_load_n(&udt_use_xdrain, __ATOMIC_RELAXED) &&
	    udt_thread.ut_vfork <= 0) ||
	    r == __atomic_load_n(&udt_xd_gaveup, __ATOMIC_RELAXED))
		return;
	head = __atomic_load_n(&r->rh_head, __ATOMIC_ACQUIRE);
	last = __atomic_load_n(&r->rh_tail, __ATOMIC_ACQUIRE);
	limit = udt_thread.ut_vfork > 0 ? UDT_XD_STALLV : UDT_XD_STALL;
	while ((int64_t)(head - last) > 0 && stall < limit) {
		(void)udt_sys2(SYS_nanosleep, &ts, NULL);
		tail = __atomic_load_n(&r->rh_tail, __ATOMIC_ACQUIRE);
		stall = tail == last ? stall + 1 : 0;
		last = tail;
	}
	if (stall >= limit)
		__atomic_store_n(&udt_xd_gaveup, r, __ATOMIC_RELAXED);
}
