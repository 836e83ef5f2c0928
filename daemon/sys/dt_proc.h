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
 * What /proc/PID/stat says about a process that dtd must not take from
 * the process itself: its state, parent and task flags, start time
 * (which with the pid names one process for its whole life), the CPU
 * time its threads have used (what bounds the events it can claim to
 * have lost), and its comm.  Any thread, no lock; each file is read
 * whole, by dt_proc_read().
 */
#ifndef DT_PROC_H
#define DT_PROC_H

#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

struct dt_proc_stat {
	char		ps_state;	/* R, S, D, Z, ... */
	pid_t		ps_ppid;	/* its parent */
	unsigned int	ps_flags;	/* the kernel's PF_* task flags */
	uint64_t	ps_start;	/* starttime, clock ticks since boot */
	uint64_t	ps_cpu;		/* utime + stime, clock ticks */
	char		ps_comm[16];	/* NUL-terminated */
};

/* 0, or an errno: ESRCH when there is no such process, EIO malformed. */
int	dt_proc_stat(pid_t pid, struct dt_proc_stat *);
/* The same of thread tid of process pid (its own state); 0: the process. */
int	dt_proc_task_stat(pid_t pid, pid_t tid, struct dt_proc_stat *);

/*
 * What /proc/PID/status says of a process: for a traced one's library
 * start (udt_wire.h's uw_st*), its thread count, the signals it has
 * handlers for, its leader's blocked mask, its tracer (in dtd's pid
 * namespace) and its pid in its own namespace (the last of NStgid's);
 * for the checks of a launcher helper's word (dt_tp_ksysarm.c), its
 * state, thread group and ids.
 */
struct dt_proc_status {
	char		pst_state;	/* R, S, t, ... */
	int		pst_threads;
	pid_t		pst_tgid;	/* in dtd's namespace */
	pid_t		pst_tracer;
	pid_t		pst_nspid;
	uid_t		pst_uid[4];	/* real, effective, saved, fs */
	gid_t		pst_gid[4];
	uint64_t	pst_sigcgt;
	uint64_t	pst_sigblk;
};

/*
 * 0, or an errno: ESRCH when there is no such process, EIO when a field
 * is missing or malformed (nothing of it is to be believed then).  Any
 * thread, no lock.
 */
int	dt_proc_status(pid_t pid, struct dt_proc_status *);

/*
 * Whether any page of [lo, hi) in the process whose /proc/PID/pagemap
 * pmfd reads is a private copy: present or swapped and not a file's
 * (an earlier preload's patch, a breakpoint written into its text).
 * 0: none, 1: some, -1: cannot be told (a short read, a range over
 * DT_PROC_PRIV_MAX pages).  Reads page tables only, faults no page in.
 * Any thread, no lock; the answer holds while nothing runs in the
 * process that writes its text.
 */
#define DT_PROC_PRIV_MAX	16384
int	dt_proc_private(int pmfd, uint64_t lo, uint64_t hi);

/*
 * Whether process pid's image was exec'd in secure mode (AT_SECURE in
 * the auxiliary vector the kernel saved at that exec, /proc/PID/auxv,
 * which the process cannot write): 1 or 0; -1 with errno when it cannot
 * be read (ESRCH: gone) or told (EIO: not a 64-bit process's vector, no
 * AT_SECURE entry in one read whole, or one too long to read whole;
 * udt_auxv_secure()).  Any thread, no lock.
 */
int	dt_proc_secure(pid_t pid);

/*
 * The threads of process pid now, sorted, in memory the caller frees;
 * their count in *np.  NULL (errno ESRCH) when pid is no process: gone,
 * or a thread but not a process (/proc shows a thread's tid as a
 * directory too, with its process's threads under it), or ENOMEM.  Any
 * thread, no lock.
 */
pid_t	*dt_proc_tids(pid_t pid, size_t *np);
/* Whether each of now[n] is among was[m], both sorted (dt_proc_tids()). */
bool	dt_proc_tids_within(const pid_t *now, size_t n, const pid_t *was,
	    size_t m);

/* Clock ticks in nanoseconds (sysconf(_SC_CLK_TCK)). */
uint64_t	dt_proc_tick_ns(void);

/*
 * A small file (of /proc, of tracefs) read whole, or its first size - 1
 * bytes, into buf, NUL-terminated.  Its length, or -1 with errno.
 */
ssize_t	dt_proc_read(const char *path, char *buf, size_t size);
/*
 * The same for a file the kernel makes in one piece and hands out whole
 * to one read that has room (a process's stat): one read, not two, when
 * it comes short of size - 1.  Only for such files; a regular file's
 * short read is its end, so a copy of one reads the same.
 */
ssize_t	dt_proc_read1(const char *path, char *buf, size_t size);
/*
 * The whole of a file whose size stat(2) does not tell (procfs and
 * tracefs say 0), in reads of 4 kB and up, NUL-ended, malloc'ed, its
 * length in *lenp; NULL with errno set: open's, ENOMEM, EFBIG past max
 * bytes, a read's.  Any thread.
 */
char	*dt_proc_slurp(const char *path, size_t max, size_t *lenp);

/*
 * Thread tid's name (of process pid) now, without its newline, into comm
 * (size bytes, padded with NULs).  0, or -1 with errno when it is gone
 * (comm untouched).  Any thread.
 */
int	dt_proc_comm(pid_t pid, pid_t tid, char *comm, size_t size);

#endif /* DT_PROC_H */
