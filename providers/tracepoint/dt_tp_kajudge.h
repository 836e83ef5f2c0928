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
 * dt_tp_kajudge.c: what /proc says of a process a launcher's helper
 * holds at an exec, for dt_tp_ksysarm.c.  Any thread, no lock: each
 * reads files of the process, never the helper's word.
 */
#ifndef DT_TP_KAJUDGE_H
#define DT_TP_KAJUDGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define DT_KA_DEPTH	64	/* ancestors looked at for the tree */
#define DT_KA_KIDS	64	/* children a process had at its arm */

/* A process, as /proc names it for as long as it lives. */
struct dt_ka_proc {
	pid_t		 kp_pid;
	uint64_t	 kp_start;	/* starttime, ticks since boot */
};

/*
 * 0 when pid is held by helper at a ptrace stop, its leader and only
 * thread, with uid and gid as all four of its ids unless uid is 0; its
 * start time into *start.  EPERM when not, ESRCH when gone.
 */
int		dt_ka_held(pid_t helper, uid_t uid, gid_t gid, pid_t pid,
		    uint64_t *start);
/* Whether kp is still the process held by helper that was found. */
bool		dt_ka_still(pid_t helper, const struct dt_ka_proc *kp);
/* pid and its ancestors, nearest first, into anc (DT_KA_DEPTH): how many. */
unsigned int	dt_ka_ancestry(pid_t pid, struct dt_ka_proc *anc);
/*
 * pid's children now, into kids (DT_KA_KIDS); DT_KA_KIDS + 1: more, or
 * a list too long to read whole.  pid is stopped (dt_ka_held()).
 */
unsigned int	dt_ka_kids(pid_t pid, struct dt_ka_proc *kids);
/*
 * Whether pid's exec dropped the perf events it inherited (its new
 * image is not dumpable), or that cannot be told: true.
 */
bool		dt_ka_dropped(pid_t pid);

#endif /* DT_TP_KAJUDGE_H */
