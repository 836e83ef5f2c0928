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
 * The judgement of a process a launcher's helper says it holds at an
 * exec (UDT_HELLO_KARM, dt_tp_ksysarm.c), from /proc alone, never the
 * helper's word: whether the helper holds it at that exec, whether it
 * is still the process found once its feed is open, its ancestry and
 * children (by pid and start time), and whether its exec dropped the
 * perf events it inherited.  No lock: these read files of the process,
 * which stays stopped while held; any thread (an ingest serve worker).
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dt_proc.h"
#include "dt_tp_kajudge.h"

/*
 * Whether pid is held by helper, at a ptrace stop, with helper's user
 * and group as all four of its ids (no set-id image) unless uid is
 * root's, as its process's leader and only thread: 0 and its start
 * time in *start, else EPERM (ESRCH: gone).  /proc's word, not the
 * helper's.  The start time is read first: if pid is another process's
 * by the status read, that one must pass the checks too, and the start
 * time read again after the open (dt_ka_still()) finds the change.
 */
int
dt_ka_held(pid_t helper, uid_t uid, gid_t gid, pid_t pid, uint64_t *start)
{
	struct dt_proc_stat ps;
	struct dt_proc_status pst;
	int i;

	if (dt_proc_stat(pid, &ps) != 0)
		return ESRCH;
	*start = ps.ps_start;
	if (dt_proc_status(pid, &pst) != 0)
		return ESRCH;
	if (pst.pst_state != 't' || pst.pst_tgid != pid ||
	    pst.pst_threads != 1 || pst.pst_tracer != helper)
		return EPERM;
	for (i = 0; i < 4 && uid != 0; i++)
		if (pst.pst_uid[i] != uid || pst.pst_gid[i] != gid)
			return EPERM;
	return 0;
}

/*
 * Whether kp is still the process dt_ka_held() found: the same start
 * time, at a ptrace stop, traced by helper.  Any thread.
 */
bool
dt_ka_still(pid_t helper, const struct dt_ka_proc *kp)
{
	struct dt_proc_stat ps;
	struct dt_proc_status pst;

	return dt_proc_stat(kp->kp_pid, &ps) == 0 &&
	    ps.ps_start == kp->kp_start && ps.ps_state == 't' &&
	    dt_proc_status(kp->kp_pid, &pst) == 0 &&
	    pst.pst_tracer == helper;
}

/* pid and its ancestors, nearest first, into anc: how many.  Any thread. */
unsigned int
dt_ka_ancestry(pid_t pid, struct dt_ka_proc *anc)
{
	struct dt_proc_stat ps;
	unsigned int n = 0;

	while (pid > 0 && n < DT_KA_DEPTH && dt_proc_stat(pid, &ps) == 0) {
		anc[n].kp_pid = pid;
		anc[n].kp_start = ps.ps_start;
		n++;
		if (pid == 1)
			break;
		pid = ps.ps_ppid;
	}
	return n;
}

/*
 * pid's children now, from its one thread's list (dt_ka_held(); pid is
 * stopped, so it forks none meanwhile); DT_KA_KIDS + 1: more, or a list
 * too long to read whole.  Any thread.
 */
unsigned int
dt_ka_kids(pid_t pid, struct dt_ka_proc *kids)
{
	char path[96], buf[4096], *p, *e;
	struct dt_proc_stat ps;
	unsigned int n = 0;
	ssize_t len;
	long k;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((len = dt_proc_read(path, buf, sizeof(buf))) <= 0)
		return 0;
	if ((size_t)len >= sizeof(buf) - 1)
		return DT_KA_KIDS + 1;
	for (p = buf; ; p = e) {
		k = strtol(p, &e, 10);
		if (e == p || k <= 0)
			break;
		if (n == DT_KA_KIDS)
			return DT_KA_KIDS + 1;	/* more: said by the count */
		if (dt_proc_stat((pid_t)k, &ps) == 0) {
			kids[n].kp_pid = (pid_t)k;
			kids[n].kp_start = ps.ps_start;
			n++;
		}
	}
	return n;
}


/*
 * The kernel drops a task's perf events at an exec only when the new
 * image is not dumpable (begin_new_exec(): get_dumpable() !=
 * SUID_DUMP_USER), which a secure exec need not leave: fs.suid_dumpable
 * 1 keeps a set-id image dumpable, an LSM's AT_SECURE changes no id,
 * and an unreadable file makes any image not dumpable.  /proc says it:
 * the owner of a file of /proc/PID is the process's effective user and
 * group while it is dumpable, its user namespace's root when not
 * (task_dump_owner(); not of the directory, always the effective ids);
 * a stat revalidates it.  An owner other than its
 * ids: dropped.  Root's ids as both cannot be told that way: then by
 * the kernel's own rule, for a root whose every file is readable (no
 * unreadable file's loss of it): dumpable when its real ids are its
 * effective ones, else as fs.suid_dumpable says (1 keeps it).  What
 * cannot be read is taken as dropped, so that the image gets a feed of
 * its own: its calls perhaps twice, never not at all.
 */
bool
dt_ka_dropped(pid_t pid)
{
	struct dt_proc_status pst;
	struct stat st;
	char path[64], v[8];

	if (dt_proc_status(pid, &pst) != 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (stat(path, &st) == -1)
		return true;
	if (st.st_uid != pst.pst_uid[1] || st.st_gid != pst.pst_gid[1])
		return true;
	if (st.st_uid != 0 || st.st_gid != 0)
		return false;
	if (pst.pst_uid[0] == 0 && pst.pst_gid[0] == 0)
		return false;
	return dt_proc_read("/proc/sys/fs/suid_dumpable", v, sizeof(v)) <= 0 ||
	    v[0] != '1';
}
