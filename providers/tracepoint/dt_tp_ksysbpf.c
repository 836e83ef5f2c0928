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
 * The syscall probes' kernel part counted in the kernel (issue 22,
 * dt_ksys.h's dt_ksys_kcount_fn): a syscall pcb that only counts by the
 * task (dt_pcb_kkey_ok(), a filter dt_kbpf_valfilter_ok() takes) needs no
 * record of raw_syscalls through perf, whose buffers drop beside a busy
 * machine, only how many calls each key had.
 *
 * One program per group: the pcbs of one open and one direction with
 * the same key and filter (an open's `syscall:*:entry` is one group of
 * some 400 pcbs), hung on one counting event of sys_enter or sys_exit
 * (dt_tp_kbpf.c says why one is enough).  It refuses first the calls no
 * pcb of the group wants (an array by Linux number that dtd sets as the
 * pcbs start), then the processes the preload library records (a hash
 * of their tgids, shared by all groups), and counts the rest by key and
 * call number in a per-CPU hash, drained as a tracepoint's program's is
 * (dt_tp_kbpfdrain.c: one grace period per read for every program of
 * the open, a batch of keys at a time, names as the records'); each
 * key's call number, in kk_gen's bits DT_KBPF_SYSSHIFT and up, above
 * the generation and the DT_KBPF_IDLE and DT_KBPF_TASK bits, names the
 * pcb (probe) it folds into.
 *
 * The tracee hash follows dt_sys_kern.c's attach and exit sinks: a
 * tgid is in it from its first image's attach (the accept thread,
 * before the tracee is welcomed and makes a hooked call) to its last
 * image's exit.  Where the sampled feed's dt_ksys_traced() looks back
 * in time (a record read late is judged by when it was made), the
 * program judges each call as it is made; what that changes is in
 * doc/design.md ("syscall probes counted in the kernel").
 *
 * All pcbs of an open stop together (dt_dev.c's stop loop): the first
 * stop of a group detaches its program and folds the last counts into
 * every pcb of it, all still there; the last frees it.
 *
 * Locks used to protect struct members and globals in this file:
 *	[I]	immutable after the group's creation
 *	[K]	the core's configuration lock
 *	[T]	dt_ksb_tmtx
 *	[a]	atomic
 */
#include <sys/ioctl.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_ksys.h"
#include "dt_perfev.h"
#include "dt_tracefs.h"
#include "dt_tp_kbpf.h"
#include "dt_tp_ksys.h"
#include "dt_tp_var.h"
#include "systab.h"

#define KSB_MAXTRACED	65536	/* tracees the hash holds at once */
#define KSB_MAXYOUNG	16384	/* young processes (LRU: the oldest go) */
#define KSB_YGONE	4096	/* young tracees remembered past exit */
/*
 * How long a young process that will attach (LD_PRELOAD and the socket
 * name dt_ksys_will_attach() reads) may keep its counts held, waiting
 * for its attach: a start takes some ms,
 * a loaded machine's some 100.  Past it, or with no such name, they are
 * the program's.
 */
#define KSB_HOLDNS	(5 * 1000000000ULL)
#define KSB_ENVMAX	(256 * 1024)	/* environ read, at most */
#define KSB_WILLS	64		/* answers of environ kept */
#define KSB_WILLNS	(20 * 1000000ULL)	/* for as long */

struct dt_ksb {
	struct dt_kbpf_drain	 ksb_kd;	/* first: the hooks' cast */
	struct dt_ksb		*ksb_next;	/* [K] on dt_ksbs */
	const struct dt_softc	*ksb_sc;	/* [I] the open */
	unsigned int		 ksb_dir;	/* [I] 0 entry, 1 return */
	uint32_t		 ksb_fields;	/* [I] 1 << DTF_* */
	bool			 ksb_comm;	/* [I] names recorded */
	bool			 ksb_args;	/* [I] values read */
	struct dtioc_filter	*ksb_filter;	/* [I] a copy, or NULL */
	int			 ksb_want;	/* [I] by Linux number */
	unsigned int		 ksb_npcb;	/* [K] */
	/* [K] set, [a] read by the drain: each number's pcb */
	struct dt_pcb *_Atomic	 ksb_pcb[SYSTAB_LINUX_MAX];
};

static struct dt_ksb	*dt_ksbs;		/* [K] */
static unsigned int	 dt_ksb_idoff[2];	/* [I] the call number's */
static unsigned int	 dt_ksb_valoff[2];	/* [I] args', ret's; 0: none */

static pthread_mutex_t	 dt_ksb_tmtx = PTHREAD_MUTEX_INITIALIZER;
static int		 dt_ksb_traced = -1;	/* [T] the tgid hash */
/*
 * A tracee in the hash; young: the exec of the image that attached was
 * seen, and its counts since (keyed with kt_exec) are hidden.
 */
struct dt_ksb_tgid {
	pid_t			 kt_pid;
	bool			 kt_young;
	uint32_t		 kt_exec;	/* its DT_KBPF_EXECMASK bits */
};
static struct dt_ksb_tgid *dt_ksb_tgids;	/* [T] what it holds */
static size_t		 dt_ksb_ntgid, dt_ksb_maxtgid;	/* [T] */
static uint64_t		 dt_ksb_trefused;	/* [T] tracees counted twice */

/*
 * The young processes (DT_KBPF_YOUNG): an LRU hash by tgid of those
 * whose exec the exec program (on sched:sched_process_exec) saw while a
 * group was there, struct dt_kbpf_young; a tracee's entry is decided at
 * its attach, any other's at the drain that finds its counts are the
 * program's, and the exit program (sched:sched_process_exit) decides it
 * at the process's end, so that a pid's exec count never starts again
 * while the hash lives.  Made with the first group, closed with the
 * last.  Young tracees that left remain in a ring, by pid and exec
 * count, for the drains still to come of the counts they made before
 * their attach.  Not closed: dtd's decision (dt_ksb_ydecide()) is a
 * lookup then an update, so an exec in between loses its image's
 * youth: that start is counted plainly, as before young processes.
 */
static int		 dt_ksb_young = -1;	/* [K] set, [T] read */
static char		 dt_ksb_env[KSB_ENVMAX];	/* [c] */
static int		 dt_ksb_execid = -1;	/* [I] sched_process_exec */
static int		 dt_ksb_exitid = -1;	/* [I] sched_process_exit */
/* [K] the exec program, its event, the exit program, its event */
static int		 dt_ksb_yfd[4] = { -1, -1, -1, -1 };
/* Whether a young image will attach, asked of its environment: [c] */
static struct {
	pid_t			 kw_pid;
	uint32_t		 kw_exec;
	bool			 kw_will;
	uint64_t		 kw_ns;		/* when asked */
} dt_ksb_will[KSB_WILLS];
static struct {
	pid_t			 yg_pid;
	uint32_t		 yg_exec;	/* as kt_exec */
} dt_ksb_ygone[KSB_YGONE];				/* [T] */
static unsigned int	 dt_ksb_nygone, dt_ksb_ygfirst;	/* [T] */

/* Put tgid in the hash or take it out.  [T] */
static void
dt_ksb_tput(pid_t pid, bool on)
{
	union bpf_attr a;
	uint32_t k = (uint32_t)pid;

	if (dt_ksb_traced == -1)
		return;
	if (!on) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)dt_ksb_traced;
		a.key = (uint64_t)(uintptr_t)&k;
		(void)dt_kbpf_bpf(BPF_MAP_DELETE_ELEM, &a);
		return;
	}
	if (dt_kbpf_put(dt_ksb_traced, k, 1) != 0) {
		/*
		 * Then both the hooks and the program count it: said, by
		 * a count at each power of two, so that no later one is
		 * silent and a full map does not flood the log.
		 */
		dt_ksb_trefused++;
		if ((dt_ksb_trefused & (dt_ksb_trefused - 1)) == 0)
			fprintf(stderr, "dtd: syscall: the kernel program's "
			    "tracee map refused pid %d (%s), %llu tracees "
			    "so far: their calls may count twice\n", (int)pid,
			    strerror(errno),
			    (unsigned long long)dt_ksb_trefused);
	}
}

static uint64_t
dt_ksb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The young hash's entry of pid into *y: false if none.  [T] */
static bool
dt_ksb_ylook(pid_t pid, struct dt_kbpf_young *y)
{
	union bpf_attr a;
	uint32_t k = (uint32_t)pid;

	if (dt_ksb_young == -1)
		return false;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)dt_ksb_young;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)y;
	return dt_kbpf_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0;
}

/*
 * pid's entry decided, as y (read before): the program keys its calls
 * young no more, and its exec count goes on from there.  Not if the
 * entry changed since (an exec in between: that image is young).  [T]
 */
static void
dt_ksb_ydecide(pid_t pid, const struct dt_kbpf_young *y)
{
	struct dt_kbpf_young n;
	union bpf_attr a;
	uint32_t k = (uint32_t)pid;

	if (!dt_ksb_ylook(pid, &n) || n.ky_exec != y->ky_exec ||
	    n.ky_born != y->ky_born || n.ky_decided != 0)
		return;
	n.ky_decided = 1;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)dt_ksb_young;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&n;
	a.flags = BPF_EXIST;
	(void)dt_kbpf_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* An exec count as the program keys it. */
static uint32_t
dt_ksb_execbits(uint32_t n)
{
	return (n << DT_KBPF_EXECSHIFT) & DT_KBPF_EXECMASK;
}

/* A young tracee that left: its earlier counts are still hidden.  [T] */
static void
dt_ksb_ygone_put(pid_t pid, uint32_t exec)
{
	unsigned int j;

	if (dt_ksb_nygone == KSB_YGONE) {
		dt_ksb_ygfirst = (dt_ksb_ygfirst + 1) % KSB_YGONE;
		dt_ksb_nygone--;
	}
	j = (dt_ksb_ygfirst + dt_ksb_nygone++) % KSB_YGONE;
	dt_ksb_ygone[j].yg_pid = pid;
	dt_ksb_ygone[j].yg_exec = exec;
}

/* dt_ksys_tgid_fn: the ingest accept or drain thread. */
static bool
dt_ksb_tgid(pid_t pid, bool on)
{
	struct dt_kbpf_young y;
	struct dt_ksb_tgid *t;
	size_t i, max;
	bool young = false;

	pthread_mutex_lock(&dt_ksb_tmtx);
	for (i = 0; i < dt_ksb_ntgid; i++)
		if (dt_ksb_tgids[i].kt_pid == pid)
			break;
	if (on && i == dt_ksb_ntgid) {
		if (dt_ksb_ntgid == dt_ksb_maxtgid) {
			max = dt_ksb_maxtgid == 0 ? 64 : 2 * dt_ksb_maxtgid;
			if ((t = realloc(dt_ksb_tgids, max * sizeof(*t))) ==
			    NULL) {
				/* the map alone, if made; never young */
				dt_ksb_tput(pid, on);
				pthread_mutex_unlock(&dt_ksb_tmtx);
				return false;
			}
			dt_ksb_tgids = t;
			dt_ksb_maxtgid = max;
		}
		/* skipped first, then no longer keyed young (ka_young()) */
		dt_ksb_tput(pid, on);
		if ((young = dt_ksb_ylook(pid, &y) && y.ky_decided == 0))
			dt_ksb_ydecide(pid, &y);
		dt_ksb_tgids[dt_ksb_ntgid].kt_pid = pid;
		dt_ksb_tgids[dt_ksb_ntgid].kt_young = young;
		dt_ksb_tgids[dt_ksb_ntgid++].kt_exec = young ?
		    dt_ksb_execbits(y.ky_exec) : 0;
	} else if (!on && i < dt_ksb_ntgid) {
		if (dt_ksb_tgids[i].kt_young)
			dt_ksb_ygone_put(pid, dt_ksb_tgids[i].kt_exec);
		dt_ksb_tgids[i] = dt_ksb_tgids[--dt_ksb_ntgid];
		/* its later images' execs, seen while it was skipped */
		if (dt_ksb_ylook(pid, &y))
			dt_ksb_ydecide(pid, &y);
		dt_ksb_tput(pid, on);
	} else
		dt_ksb_tput(pid, on);
	pthread_mutex_unlock(&dt_ksb_tmtx);
	return young;
}

/*
 * kd_young: a young process's count.  Hidden (the library's start; the
 * hooks record the rest) when the image it was made in attached, even
 * if it left since; the program's when it was an earlier image's (the
 * launcher's, which exec'd the tracee), or its image did not attach and
 * will not (no library named, gone, or past KSB_HOLDNS), keyed then as
 * the program keys others; held otherwise.  The drain, [c].
 */
/*
 * Whether young image exec of pid will attach: its environment, asked
 * once a KSB_WILLNS for all keys and groups.  Outside [T] (an environ
 * read can wait on the process's memory).  The drain, [c].
 */
static bool
dt_ksb_willattach(pid_t pid, uint32_t exec)
{
	uint64_t now = dt_ksb_now();
	unsigned int i, old = 0;

	for (i = 0; i < KSB_WILLS; i++) {
		if (dt_ksb_will[i].kw_pid == pid &&
		    dt_ksb_will[i].kw_exec == exec &&
		    now - dt_ksb_will[i].kw_ns < KSB_WILLNS)
			return dt_ksb_will[i].kw_will;
		if (dt_ksb_will[i].kw_ns < dt_ksb_will[old].kw_ns)
			old = i;
	}
	dt_ksb_will[old].kw_pid = pid;
	dt_ksb_will[old].kw_exec = exec;
	dt_ksb_will[old].kw_will = dt_ksys_will_attach(pid, dt_ksb_env,
	    sizeof(dt_ksb_env));
	dt_ksb_will[old].kw_ns = now;
	return dt_ksb_will[old].kw_will;
}

static int
dt_ksb_youngkey(struct dt_kbpf_drain *kd, struct dt_kbpf_key *k, bool final)
{
	struct dt_ksb *g = (struct dt_ksb *)kd;
	struct dt_kbpf_young y;
	pid_t pid = (pid_t)k->kk_pid;
	uint32_t exec = k->kk_gen & DT_KBPF_EXECMASK;
	unsigned int i, j;
	int r = DT_KBPF_FOLD;
	bool odd, open = false;

	pthread_mutex_lock(&dt_ksb_tmtx);
	for (i = 0; i < dt_ksb_ntgid; i++)
		if (dt_ksb_tgids[i].kt_pid == pid) {
			if (dt_ksb_tgids[i].kt_young &&
			    dt_ksb_tgids[i].kt_exec == exec)
				r = DT_KBPF_DROP;
			goto out;
		}
	for (i = 0; i < dt_ksb_nygone; i++) {
		j = (dt_ksb_ygfirst + i) % KSB_YGONE;
		if (dt_ksb_ygone[j].yg_pid == pid &&
		    dt_ksb_ygone[j].yg_exec == exec)
			r = DT_KBPF_DROP;
	}
	/*
	 * Gone, decided, or an earlier image's (the launcher's, which
	 * exec'd the tracee): the program's, unless the ring says it was
	 * a young tracee's.  This image's, not decided: open (the ring
	 * matches it only where the count started again: an entry the
	 * LRU evicted).
	 */
	if (!dt_ksb_ylook(pid, &y) || dt_ksb_execbits(y.ky_exec) != exec ||
	    y.ky_decided != 0)
		goto out;
	r = DT_KBPF_FOLD;
	open = true;
out:
	pthread_mutex_unlock(&dt_ksb_tmtx);
	/* the last drain of a group: its own decision, no other's */
	if (open && !final) {
		if (dt_ksb_now() - y.ky_born < KSB_HOLDNS &&
		    dt_ksb_willattach(pid, exec))
			return DT_KBPF_HOLD;
		/*
		 * The program's from here: it counts them as any other's.
		 * The ring keeps the pid's departed young tracee, if any:
		 * its exec count is another (the exit program decides, it
		 * does not take out), so its last keys still drop.
		 */
		pthread_mutex_lock(&dt_ksb_tmtx);
		dt_ksb_ydecide(pid, &y);
		pthread_mutex_unlock(&dt_ksb_tmtx);
	}
	if (r != DT_KBPF_FOLD)
		return r;
	/* keyed as the program keys a process not young */
	k->kk_gen &= ~(uint32_t)(DT_KBPF_YOUNG | DT_KBPF_EXECMASK);
	if (g->ksb_fields & (1u << DTF_PID) || k->kk_gen & DT_KBPF_TASK)
		return r;
	odd = true;
	if ((g->ksb_fields & (1u << DTF_COMM)) && g->ksb_comm) {
		odd = k->kk_comm[0] == '\0';
		for (i = 0; i < sizeof(k->kk_comm) && k->kk_comm[i] != '\0';
		    i++)
			if ((unsigned char)k->kk_comm[i] < 0x20 ||
			    (unsigned char)k->kk_comm[i] > 0x7e ||
			    k->kk_comm[i] == '\\')
				odd = true;
	}
	if (!(g->ksb_fields & (1u << DTF_COMM)) || !odd)
		k->kk_pid = 0;
	return r;
}

/* The tgid hash, made once with the tracees listed so far.  [K] */
static int
dt_ksb_tmap(void)
{
	size_t i;
	int fd;

	pthread_mutex_lock(&dt_ksb_tmtx);
	if (dt_ksb_traced == -1 &&
	    (fd = dt_kbpf_map(BPF_MAP_TYPE_HASH, sizeof(uint32_t),
	    sizeof(uint32_t), KSB_MAXTRACED, "udt_ktraced")) != -1) {
		dt_ksb_traced = fd;
		/*
		 * dtd's own calls (its drains' bpf() and membarrier) are
		 * none of the program's, as the sampled feed drops them.
		 */
		dt_ksb_tput(getpid(), true);
		for (i = 0; i < dt_ksb_ntgid; i++)
			dt_ksb_tput(dt_ksb_tgids[i].kt_pid, true);
	}
	fd = dt_ksb_traced;
	pthread_mutex_unlock(&dt_ksb_tmtx);
	return fd;
}

/* Load prog (n instructions) and attach it to tracepoint id: 0 or -1. */
static int
dt_ksb_yprog(const struct bpf_insn *insns, unsigned int n, const char *name,
    int id, int *progfd, int *evfd, char *why, size_t whylen)
{
	if (n == 0 || (*progfd = dt_kbpf_load_insns(insns, n, name, why,
	    whylen)) == -1)
		return -1;
	if ((*evfd = dt_kbpf_event(id)) == -1 ||
	    ioctl(*evfd, PERF_EVENT_IOC_SET_BPF, *progfd) == -1) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The young hash and its exec and exit programs, for the first group:
 * false said.  A group without them is sampled: it would count a
 * launched process's start as its own, which the ingest, judging by
 * a young attach, would then count again from its records.  [K]
 */
static bool
dt_ksb_exec_on(const char *who)
{
	struct bpf_insn *insns;
	char why[200];
	unsigned int i;
	int ok = -1, fd;

	if (dt_ksb_young != -1)
		return true;
	if (dt_ksb_execid == -1 || dt_ksb_exitid == -1) {
		dt_kbpf_say(who, "exec program", "no sched_process_exec or "
		    "_exit tracepoint");
		return false;
	}
	if (!dt_perf_fds_charge(5)) {
		dt_kbpf_say(who, "exec program", "the budget is spent");
		return false;
	}
	snprintf(why, sizeof(why), "%s", strerror(ENOMEM));
	if ((insns = calloc(DT_KBPF_MAXINSNS, sizeof(*insns))) != NULL &&
	    (fd = dt_kbpf_map(BPF_MAP_TYPE_LRU_HASH, sizeof(uint32_t),
	    sizeof(struct dt_kbpf_young), KSB_MAXYOUNG, "udt_kyoung")) != -1) {
		/* the map first: no program runs before it is there */
		pthread_mutex_lock(&dt_ksb_tmtx);
		dt_ksb_young = fd;
		pthread_mutex_unlock(&dt_ksb_tmtx);
		ok = dt_ksb_yprog(insns, dt_kbpf_execprog(fd, insns),
		    "udt_kexec", dt_ksb_execid, &dt_ksb_yfd[0], &dt_ksb_yfd[1],
		    why, sizeof(why));
		if (ok == 0)
			ok = dt_ksb_yprog(insns, dt_kbpf_exitprog(fd, insns),
			    "udt_kexit", dt_ksb_exitid, &dt_ksb_yfd[2],
			    &dt_ksb_yfd[3], why, sizeof(why));
	} else if (insns != NULL)
		snprintf(why, sizeof(why), "%s", strerror(errno));
	free(insns);
	if (ok == 0)
		return true;
	dt_kbpf_say(who, "exec program", why);
	for (i = 0; i < 4; i++)
		if (dt_ksb_yfd[i] != -1) {
			close(dt_ksb_yfd[i]);
			dt_ksb_yfd[i] = -1;
		}
	pthread_mutex_lock(&dt_ksb_tmtx);
	if (dt_ksb_young != -1)
		close(dt_ksb_young);
	dt_ksb_young = -1;
	pthread_mutex_unlock(&dt_ksb_tmtx);
	dt_perf_fds_uncharge(5);
	return false;
}

/*
 * The young hash and its programs gone with the last group, so that no
 * entry outlives what would have kept it true: a group made later
 * starts with none.  [K]
 */
static void
dt_ksb_exec_off(void)
{
	unsigned int i;

	if (dt_ksbs != NULL || dt_ksb_young == -1)
		return;
	for (i = 0; i < 4; i++) {
		close(dt_ksb_yfd[i]);
		dt_ksb_yfd[i] = -1;
	}
	pthread_mutex_lock(&dt_ksb_tmtx);
	close(dt_ksb_young);
	dt_ksb_young = -1;
	/* the next hash counts execs from 0 again */
	dt_ksb_nygone = 0;
	pthread_mutex_unlock(&dt_ksb_tmtx);
	dt_perf_fds_uncharge(5);
}

/*
 * kd_pcb: the pcb of key k's call number, none once it stopped (the
 * drain reads the map while [K] may clear the number's pcb).  [c].
 */
static struct dt_pcb *
dt_ksb_pcb(struct dt_kbpf_drain *kd, const struct dt_kbpf_key *k)
{
	struct dt_ksb *g = (struct dt_ksb *)kd;
	uint32_t id = k->kk_gen >> DT_KBPF_SYSSHIFT;

	if (id >= SYSTAB_LINUX_MAX)
		return NULL;
	return atomic_load_explicit(&g->ksb_pcb[id], memory_order_acquire);
}

static void
dt_ksb_free(struct dt_ksb *g)
{
	dt_kbpf_drain_free(&g->ksb_kd);
	if (g->ksb_want != -1)
		close(g->ksb_want);
	free(g->ksb_filter);
	free(g);
}

/* Whether filters f and h are the same.  Any thread. */
static bool
dt_ksb_samefilter(const struct dtioc_filter *f, const struct dtioc_filter *h)
{
	if (f == NULL || h == NULL)
		return f == h;
	return f->dtfl_nterms == h->dtfl_nterms &&
	    memcmp(f->dtfl_terms, h->dtfl_terms,
	    f->dtfl_nterms * sizeof(f->dtfl_terms[0])) == 0;
}

/* A group for dp, made with its program attached: NULL when none. [K] */
static struct dt_ksb *
dt_ksb_new(struct dt_pcb *dp, unsigned int dir, uint32_t fields, bool comm,
    bool args, const struct dtioc_filter *f)
{
	struct dt_kbpf_spec s;
	struct dt_ksb *g;
	char who[sizeof(g->ksb_kd.kd_who)];
	int tfd, id;

	snprintf(who, sizeof(who), "syscall: raw_syscalls:%s",
	    dir == 0 ? "sys_enter" : "sys_exit");
	if ((id = dt_tp_ksys_evid(dir)) == -1 || !dt_kbpf_usable(who))
		return NULL;
	if ((tfd = dt_ksb_tmap()) == -1) {
		dt_kbpf_say(who, "tracee map", strerror(errno));
		return NULL;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	memcpy(g->ksb_kd.kd_who, who, sizeof(who));
	g->ksb_kd.kd_pcb = dt_ksb_pcb;
	g->ksb_want = -1;
	g->ksb_sc = dp->dp_sc;
	g->ksb_dir = dir;
	g->ksb_fields = fields;
	g->ksb_comm = comm;
	g->ksb_args = args;
	/* the want array is a descriptor more; its bytes are few */
	if (!dt_kbpf_drain_init(&g->ksb_kd, dp, dt_pcb_agg_size(dp),
	    DT_KBPF_NFDS + 1, "udt_ks")) {
		dt_ksb_free(g);
		return NULL;
	}
	/* the core's holds its terms alone (dt_dev_ioctl.c) */
	if (f != NULL && (g->ksb_filter = calloc(1, sizeof(*f))) != NULL)
		memcpy(g->ksb_filter, f, offsetof(struct dtioc_filter,
		    dtfl_terms) + f->dtfl_nterms * sizeof(f->dtfl_terms[0]));
	if (f != NULL && g->ksb_filter == NULL) {
		dt_ksb_free(g);
		return NULL;
	}
	if ((g->ksb_want = dt_kbpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t),
	    sizeof(uint32_t), SYSTAB_LINUX_MAX, "udt_kswant")) == -1) {
		dt_kbpf_say(who, "map", strerror(errno));
		dt_ksb_free(g);
		return NULL;
	}
	memset(&s, 0, sizeof(s));
	s.kbs_fields = fields;
	s.kbs_comm = comm;
	s.kbs_filter = g->ksb_filter;
	s.kbs_nsys = SYSTAB_LINUX_MAX;
	s.kbs_idoff = (uint16_t)dt_ksb_idoff[dir];
	s.kbs_wantfd = g->ksb_want;
	s.kbs_tracedfd = tfd;
	s.kbs_valoff = (uint16_t)dt_ksb_valoff[dir];
	s.kbs_dir = (uint8_t)dir;
	s.kbs_args = args;
	if (!dt_ksb_exec_on(who)) {
		dt_ksb_free(g);
		return NULL;
	}
	s.kbs_youngfd = dt_ksb_young;
	g->ksb_kd.kd_young = dt_ksb_youngkey;
	/* it counts nothing until a pcb's number is wanted */
	if (!dt_kbpf_drain_load(&g->ksb_kd, &s, id) ||
	    !dt_kbpf_drain_attach(&g->ksb_kd)) {
		dt_ksb_free(g);
		return NULL;
	}
	g->ksb_next = dt_ksbs;
	dt_ksbs = g;
	return g;
}

/* Take g off dt_ksbs.  [K] */
static void
dt_ksb_unlink(struct dt_ksb *g)
{
	struct dt_ksb **gp;

	for (gp = &dt_ksbs; *gp != NULL; gp = &(*gp)->ksb_next)
		if (*gp == g) {
			*gp = g->ksb_next;
			return;
		}
}

/*
 * USERDT_KSYSBPF=0: the sampled feed for syscall probes too, as before
 * the program counted a launched process's start as its own (the exec
 * program now hides it: dt_ksb_youngkey()), for comparisons.  [K]
 */
static bool
dt_ksb_on(void)
{
	const char *env = getenv("USERDT_KSYSBPF");

	return env == NULL || strcmp(env, "0") != 0;
}

static bool
dt_ksb_start(unsigned int p, struct dt_pcb *dp)
{
	const struct dtioc_filter *f = dp->dp_filter;
	unsigned int dir = p & 1, lin, nargs;
	struct dt_ksb *g;
	uint32_t fields;
	bool comm = (dp->dp_evtflags & DTEVT_EXECNAME) != 0;
	/* the values the reader sees (dt_evt_field()) */
	bool args = (dp->dp_dtp->dtp_argsflag & ~dp->dp_evtflags) == 0;

	if (dt_tp_kbpf_off() || !dt_ksb_on() || p / 2 >= SYSTAB_COUNT ||
	    (lin = systab[p / 2].se_linux) >= SYSTAB_LINUX_MAX ||
	    !dt_pcb_kkey_ok(dp, &fields))
		return false;
	if (f != NULL && f->dtfl_nterms == 0)
		f = NULL;
	if (!dt_kbpf_valfilter_ok(f, comm, dt_ksb_valoff[dir] != 0))
		return false;
	for (g = dt_ksbs; g != NULL; g = g->ksb_next)
		if (g->ksb_sc == dp->dp_sc && g->ksb_dir == dir &&
		    g->ksb_fields == fields && g->ksb_comm == comm &&
		    g->ksb_args == args &&
		    g->ksb_kd.kd_ev != -1 && dt_ksb_samefilter(g->ksb_filter, f))
			break;
	if (g == NULL &&
	    (g = dt_ksb_new(dp, dir, fields, comm, args, f)) == NULL) {
		dt_ksb_exec_off();
		return false;
	}
	/*
	 * An open has one pcb a probe (dt_ioctl_probe_enable()'s EEXIST,
	 * and btrace shares a probe of several rules, never aggregated in
	 * dtd), so lin is free.  Were it not, dp would be sampled, and
	 * the ingest would keep the records it drops for the group's
	 * (dt_sys_kall false): the group's pcb would count them twice.
	 */
	if (atomic_load(&g->ksb_pcb[lin]) != NULL)
		return false;
	/*
	 * No kernel record goes to dp from here, and the program counts
	 * its number from the want: a call in between is counted by
	 * neither, never twice (as dt_tp_kbpf_start()).
	 */
	atomic_store_explicit(&g->ksb_pcb[lin], dp, memory_order_release);
	g->ksb_npcb++;
	atomic_store(&dp->dp_knot, true);
	/*
	 * Number lin's calls counted from here; the value is one more
	 * than the arguments the reader has of them (dt_tp_ksys_build()).
	 */
	nargs = dir == 0 ? dp->dp_dtp->dtp_nargs : 0;
	if (dt_kbpf_put(g->ksb_want, lin, 1 + (nargs < 6 ? nargs : 6)) == 0)
		return true;
	/*
	 * Not wanted, the program never counts it: dp is sampled after
	 * all (the feed skips it while dp_knot says otherwise; a call in
	 * between is lost, never counted twice).  A group of no other
	 * pcb goes.
	 */
	dt_kbpf_say(g->ksb_kd.kd_who, "want", strerror(errno));
	atomic_store(&dp->dp_knot, false);
	atomic_store(&g->ksb_pcb[lin], NULL);
	if (--g->ksb_npcb == 0) {
		dt_ksb_unlink(g);
		if (g->ksb_kd.kd_ev != -1)
			dt_kbpf_drain_stop(&g->ksb_kd);
		dt_ksb_free(g);
		dt_ksb_exec_off();
	}
	return false;
}

static void
dt_ksb_stop(unsigned int p, struct dt_pcb *dp)
{
	struct dt_ksb **gp, *g;
	unsigned int lin = systab[p / 2].se_linux;

	for (gp = &dt_ksbs; (g = *gp) != NULL; gp = &g->ksb_next)
		if (atomic_load(&g->ksb_pcb[lin]) == dp)
			break;
	if (g == NULL)
		return;
	/* the open's first stop: the last drain, into every pcb of it */
	if (g->ksb_kd.kd_ev != -1)
		dt_kbpf_drain_stop(&g->ksb_kd);
	atomic_store(&g->ksb_pcb[lin], NULL);
	if (--g->ksb_npcb > 0)
		return;
	*gp = g->ksb_next;
	dt_ksb_free(g);
	dt_ksb_exec_off();
	/* dp_knot stays set: dp is still on its probe's list */
}

/* dt_ksys_kcount_fn.  [K] */
static bool
dt_ksb_kcount(unsigned int p, struct dt_pcb *dp, bool on)
{
	if (on)
		return dt_ksb_start(p, dp);
	dt_ksb_stop(p, dp);
	return true;
}

void
dt_tp_ksysbpf_init(unsigned int idoff0, unsigned int idoff1,
    unsigned int valoff0, unsigned int valoff1)
{
	static struct dt_tp_format fmt;

	/* the number is a long at a 64-bit aligned place */
	if (idoff0 % 8 != 0 || idoff1 % 8 != 0 || idoff0 > INT16_MAX ||
	    idoff1 > INT16_MAX)
		return;
	dt_ksb_idoff[0] = idoff0;
	dt_ksb_idoff[1] = idoff1;
	/* args[6] and ret the same, else filters of them are sampled */
	if (valoff0 != 0 && valoff0 % 8 == 0 && valoff0 + 48 <= INT16_MAX)
		dt_ksb_valoff[0] = valoff0;
	if (valoff1 != 0 && valoff1 % 8 == 0 && valoff1 + 8 <= INT16_MAX)
		dt_ksb_valoff[1] = valoff1;
	dt_ksb_execid = dt_tracefs_format("sched", "sched_process_exec",
	    &fmt) == 0 ? (int)fmt.dtfm_id : -1;
	dt_ksb_exitid = dt_tracefs_format("sched", "sched_process_exit",
	    &fmt) == 0 ? (int)fmt.dtfm_id : -1;
	dt_ksys_kcount_feed(dt_ksb_kcount, dt_ksb_tgid);
}
