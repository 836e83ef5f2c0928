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
 * The private wire format between traced processes (libuserdt-preload)
 * and dtd.  Not an ABI anyone else relies on: both sides come from the
 * same build and check UDT_VERSION in the handshake.
 *
 * A tracee connects to dtd's tracee socket (the ingest socket's name,
 * env USERDT_SOCKET, default UDT_SOCKET_DEFAULT, as UDT_TRACEE_FMT has it)
 * and receives a udt_welcome with two memory file descriptors
 * (SCM_RIGHTS): its ring (read-write) and its enable table (read-only).
 * It sends nothing: the connection is its hello, a tracee's of dtd's
 * own version, and the table says which systab dtd has (tb_nprobes).
 * On the ingest socket itself, every other client (and a tracee whose
 * tracee socket's name would not fit a sockaddr_un) sends a udt_hello
 * first.  From then on it writes records into the ring
 * without system calls; dtd polls the ring.  dtd stamps every record with
 * the pid it read from SO_PEERCRED at connect time, never with anything
 * the tracee wrote, and validates every byte of the ring.
 *
 * Ring: an MPSC queue of fixed-size slots after LTTng-UST's reserve and
 * commit.  A producer reserves ticket t with a compare-and-swap on
 * rh_head (refusing when t - rh_tail >= nslots: the ring is full, the
 * event is counted in rh_lost; rh_tail is read only when rh_ptail, the
 * producers' copy, says so), fills slot t % nslots and commits by
 * storing t + 1 into ur_seq with release semantics.  dtd consumes tickets
 * in order: a slot is ready when its ur_seq equals its ticket + 1; it
 * publishes its progress in rh_tail (release) so producers may reuse the
 * slots.  A slot that stays uncommitted (a producer that died or left a
 * signal handler with siglongjmp between reserve and commit) is skipped
 * after UDT_STUCK_NSEC and counted as garbage.  A producer that finds,
 * on its next record, that it left a slot that way commits it void,
 * (t + 1) | UDT_SEQ_VOID, which dtd skips at once, also as garbage: the
 * ring does not stall for UDT_STUCK_NSEC (and overflow) behind it.  A
 * producer claims its slot right after its reserve: its tid and probe
 * into ur_tid and ur_probe, then (t + 1) | UDT_SEQ_BUSY into ur_seq
 * (release).  A claimed slot whose producer still runs (running, waiting
 * to run or in an uninterruptible wait: preempted, or throttled by its
 * cgroup, between reserve and commit), a thread of the ring's process in
 * dtd's pid namespace, is waited for past UDT_STUCK_NSEC, up to
 * UDT_STUCK_MAX_NSEC, while the ring is at most half full (in lossless
 * mode, for less than UDT_WAIT_NSEC): its event is not lost to a busy
 * machine.  dtd's looks at such threads are bounded, per ring and in
 * all.  A slot skipped is charged to its claim's probe.  The claim costs
 * the producer one store to a line it writes anyway; a dtd or a library
 * of an older build takes it for a slot not committed.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dtd initialised the object
 *	[p]	written by the tracee (producers), untrusted by dtd
 *	[d]	written by dtd only
 *	[a]	atomic operations
 */
#ifndef USERDT_UDT_WIRE_H
#define USERDT_UDT_WIRE_H

#include <stdint.h>

#define UDT_SOCKET_ENV		"USERDT_SOCKET"
#define UDT_SOCKET_DEFAULT	"/run/userdt/ingest.sock"
/*
 * The tracees' own socket beside it: no hello to wait for, so dtd's
 * accept thread wakes once a tracee, not at its connect and again at
 * its hello, and the tracee makes one call fewer a start.  Its name is
 * the ingest socket's path, UDT_VERSION and the systab's probes (2 *
 * SYSTAB_COUNT): what the hello would have told, so a library of
 * another build finds no such name and says its hello on the ingest
 * socket, where dtd refuses it before spending anything on it.
 */
#define UDT_TRACEE_FMT		"%s.t%u.%u"

#define UDT_MAGIC		0x75647464u	/* "udtd" */
#define UDT_VERSION		15u	/* 15: user stacks in udt_sagg */

#define UDT_NPROBES_MAX		1024	/* probes of the syscall provider */
#define UDT_STACK_MAX		19	/* STACKTRACE_MAX */
#define UDT_COMMLEN		16	/* Linux TASK_COMM_LEN */
#define UDT_NARGS		6

/* Names of the memory files, how a restarted dtd finds orphans. */
#define UDT_TAB_MEMFD		"userdt-tab"
#define UDT_RING_MEMFD		"userdt-ring"

/* A slot that stays uncommitted this long while later ones wait. */
#define UDT_STUCK_NSEC		(200 * 1000 * 1000ULL)
/* ... or this long, while the thread that claimed it runs. */
#define UDT_STUCK_MAX_NSEC	(2000 * 1000 * 1000ULL)

/* ur_seq of a slot its producer abandoned and gave up: skip it. */
#define UDT_SEQ_VOID		(1ULL << 63)
/* ur_seq of a slot claimed by the thread ur_tid, being filled. */
#define UDT_SEQ_BUSY		(1ULL << 62)

/* udt_hello.uh_flags */
#define UDT_HELLO_TRACEE	0x0001	/* a traced process: give me a ring */
#define UDT_HELLO_STATS		0x0002	/* only answer with udt_stats */
#define UDT_HELLO_MAPS		0x0004	/* a pid's mappings: udt_maps_req */
/*
 * A launcher's helper holds the process udt_maps_req names at the exec
 * of a statically linked image (ptrace's exec stop): dtd opens the
 * kernel's copy of its calls for the opens whose tree it is in
 * (DTTR_F_HOOKED, dtvar.h) before it answers with a udt_maps_hdr of no
 * entries (umh_error 0, or an errno), and the helper lets it run only
 * then.  A flag, no new layout, UDT_VERSION unchanged: a dtd without
 * it answers EPROTO (not a tracee's hello), and the helper says the
 * image is not traced.
 */
#define UDT_HELLO_KARM		0x0008
/*
 * A pid's parent, as dtd knew it (udt_kin): a udt_maps_req follows the
 * hello.  btrace -c without the process connector reads its command's
 * tree from /proc, where a process gone with its parent before its
 * events are read is nowhere; dtd notes each tracee's parent at its
 * hello, and the parents of those that never said one (a subshell that
 * forks and waits), from /proc while they still live.  Answered from
 * memory, never waiting: only for a process of the asker's own user
 * (or any, to root).  A flag, no new layout for the request: a dtd
 * without it answers EPROTO in its udt_welcome-shaped header.
 */
#define UDT_HELLO_KIN		0x0010

/* Messages on the socket: copied, never shared. */
struct udt_hello {
	uint32_t	uh_magic;	/* UDT_MAGIC */
	uint32_t	uh_version;	/* UDT_VERSION */
	uint32_t	uh_nprobes;	/* 2 * SYSTAB_COUNT of the tracee */
	uint32_t	uh_flags;	/* UDT_HELLO_* */
};

struct udt_welcome {
	uint32_t	uw_magic;
	uint32_t	uw_version;
	uint32_t	uw_error;	/* 0, or an errno: no fds follow */
	uint32_t	uw_nslots;	/* slots in the ring */
	uint32_t	uw_flags;	/* UDT_W_* */
	int32_t		uw_pid;		/* the pid dtd stamps records with
					   (its namespace's, from the
					   socket), for the table's filters */
	uint64_t	uw_ringsize;	/* bytes of the ring memfd */
	uint64_t	uw_tabsize;	/* bytes of the table memfd */
	/*
	 * What the constructor would otherwise read from /proc/self/status
	 * (two system calls of every traced start): dtd reads the file
	 * while the tracee waits for this welcome, so a Threads of 1 is
	 * exact (that one thread is the waiting one) and the leader's
	 * SigBlk is the constructor's mask.  Valid when uw_stflags has
	 * UDT_WST_OK; else the tracee reads the file itself.
	 */
	uint32_t	uw_stflags;	/* UDT_WST_* */
	int32_t		uw_nspid;	/* its pid in its own namespace
					   (NStgid's last): getpid()'s */
	int32_t		uw_threads;	/* Threads */
	int32_t		uw_tracer;	/* TracerPid, in dtd's namespace:
					   0 when none */
	uint64_t	uw_sigcgt;	/* SigCgt: signals with a handler */
	uint64_t	uw_sigblk;	/* SigBlk: the leader's mask */
};

/* Executable mappings, and files, the table can list (udt_tab.tb_x*). */
#define UDT_XMAPS_MAX		88
#define UDT_XFILES_MAX		20

/* udt_welcome.uw_stflags */
#define UDT_WST_OK		0x0001	/* the uw_ status fields are read */

/*
 * udt_welcome.uw_flags.  UDT_W_TSC: dtd converts raw time stamp counter
 * values to CLOCK_REALTIME (the clock source is the TSC, which the kernel
 * keeps in step across CPUs), so tracees may stamp records with rdtsc
 * instead of a clock_gettime() call, the largest part of a record's cost.
 */
#define UDT_W_TSC		0x0001
/*
 * UDT_W_PTIMER: dtd samples profile probes with the timer fallback (perf
 * refused, or --profile timer): the tracee must watch tb_prof_gen and
 * sample its own threads every tb_prof_nsecs of their CPU time.
 */
#define UDT_W_PTIMER		0x0002
/*
 * UDT_W_XDRAIN: dtd discards what is left in the ring once the image that
 * attached has exec'd (a child may still hold the ring): the tracee waits
 * before each exec until its ring is drained.  Not set for root's
 * tracees, whose rings dtd does not bind, so they exec without waiting.
 */
#define UDT_W_XDRAIN		0x0004
/*
 * UDT_W_EAGER: a fork child attaches at once, not when it first records:
 * dtd samples the traced processes it knows of by their attach (perf
 * events per thread, a dtd without root), so a child that never records
 * would never be sampled.  UDT_W_PTIMER implies it.
 */
#define UDT_W_EAGER		0x0008

/*
 * Answer to UDT_HELLO_KIN.  uk_error ENOENT: dtd knows nothing of the
 * pid (never a tracee nor one's parent, forgotten among DTI_NKIN later
 * ones, or another user's).  uk_start: when the process dtd noted
 * started (CLOCK_REALTIME, to the kernel's clock tick): a pid reused
 * since names a younger process, whose start then follows the event
 * asked about.
 */
struct udt_kin {
	uint32_t	uk_magic;	/* UDT_MAGIC */
	uint32_t	uk_version;	/* UDT_VERSION */
	uint32_t	uk_error;	/* 0, or an errno: the rest is 0 */
	int32_t		uk_ppid;
	uint64_t	uk_start;	/* ns */
};

/* Answer to UDT_HELLO_STATS: dtd's ingestion counters since start. */
struct udt_stats {
	uint32_t	us_magic;
	uint32_t	us_procs;	/* attached processes now */
	uint64_t	us_attached;	/* handshakes completed */
	uint64_t	us_records;	/* valid records dispatched */
	uint64_t	us_garbage;	/* records or slots rejected */
	uint64_t	us_lost;	/* tracee rings full, per tracees */
	uint64_t	us_recur;	/* recursive events, per tracees */
	uint64_t	us_adopted;	/* orphan tables found at start */
	uint64_t	us_refused;	/* connections closed before their
					   hello was whole (caps, time) */
	uint64_t	us_forged;	/* lost and recursive events tracees
					   claimed beyond what their CPU
					   time pays for: not charged */
	uint64_t	us_misnamed;	/* records that named a thread of
					   another process: discarded */
	uint64_t	us_maps_bytes;	/* held now by the mappings kept
					   for exited tracees (dt_pidmaps) */
	uint64_t	us_maps_evicted; /* of those, forgotten to stay
					   within their budgets */
	uint32_t	us_sysprobes;	/* syscall probes on now: with
					   none, a launcher does not follow
					   its command's loader */
	uint32_t	us_pad;
};

/*
 * UDT_HELLO_MAPS (root only, as DTIOCRDVNODE): a udt_maps_req follows the
 * hello; dtd answers with a udt_maps_hdr, then umh_count udt_maps_ent,
 * each followed by its path (ume_pathlen bytes, no NUL): the executable
 * file mappings of that process, in address order, as /proc/PID/maps
 * lists them while it lives and as dtd kept them (from its attach and
 * later user stacks) after a traced process exited.  This is how btrace
 * names the files behind the user stacks of a process that is gone:
 * DTIOCRDVNODE gives start, offset and size but, without a kernel, no
 * descriptor and no name.  The header begins as udt_welcome does, so an
 * older dtd's refusal reads as an error.
 */
struct udt_maps_req {
	int32_t		umr_pid;
	uint32_t	umr_pad;
};

struct udt_maps_hdr {
	uint32_t	umh_magic;	/* UDT_MAGIC */
	uint32_t	umh_version;	/* UDT_VERSION */
	uint32_t	umh_error;	/* 0, or an errno: nothing follows */
	uint32_t	umh_count;	/* entries that follow */
};

#define UDT_MAPS_PATHMAX	4096	/* PATH_MAX: a path's length is less */
#define UDT_MAPS_MAXENT		4096	/* entries in one answer, at most */

struct udt_maps_ent {
	uint64_t	ume_start;	/* [start, end) */
	uint64_t	ume_end;
	uint64_t	ume_off;	/* file offset of start */
	uint64_t	ume_size;	/* file size, 0 when unknown */
	uint32_t	ume_pathlen;	/* < UDT_MAPS_PATHMAX */
	uint32_t	ume_pad;
};

/*
 * Enable table, one per tracee, mapped read-only there.  tb_enab[p] is 0
 * when probe p is off, else UDT_EN_ON | what the hook must record: the
 * DTEVT_* flags that fit the low bits (DTEVT_EXECNAME, DTEVT_USTACK,
 * DTEVT_FUNCARGS), UDT_EN_STR and UDT_EN_DEEP for the two that do not;
 * or UDT_EN_ON | UDT_EN_COUNT alone when it only counts.  Entry
 * probe of systab[i] is p = 2i, its return probe 2i + 1, so a hook tests
 * both with one 16-bit load.  A restarted dtd sets tb_reconnect and every
 * byte of an orphaned table to force its tracee into the slow path, which
 * then reconnects.  tb_sock names the socket the table came from (or, for
 * a placeholder a tracee made while dtd was absent, the socket it wants),
 * so that a dtd only adopts tables of its own tracees.
 */
#define UDT_EN_ON		0x80
/* DTEVT_STRINGS (bit 24) does not fit a byte: this bit stands for it. */
#define UDT_EN_STR		0x10
/*
 * Count only (dtvar.h's aggregations at the source): every open that
 * records the probe only counts its calls, so the hook adds one to
 * rh_count[p] and records nothing, no time stamp, no slot.
 */
#define UDT_EN_COUNT		0x40
/*
 * DTEVT_DEEPSTACK (bit 25) with DTEVT_USTACK: some open wants user
 * stacks deeper than STACKTRACE_MAX, so the hook walks up to
 * UDT_DEEP_MAX frames and follows the record with udt_rec_more slots.
 */
#define UDT_EN_DEEP		0x20
/*
 * Aggregated in the tracee (userdt/udt_sagg.h): every open that records
 * the probe only folds its events into aggregations a hook can compute;
 * the hook folds them into the accumulators after its ring and records
 * nothing.  The other bits stay what a record would carry, for the
 * events the hook cannot fold (a vfork child, a specification being
 * rewritten, USERDT_SRCAGG=0): those are recorded as without the bit.
 * DTEVT_KSTACK's bit, which no enable byte carries.
 */
#define UDT_EN_AGG		0x04

struct udt_tab {
	uint32_t	tb_magic;	/* [I] UDT_MAGIC */
	uint32_t	tb_nprobes;	/* [I] */
	uint32_t	tb_reconnect;	/* [d] a new dtd wants a handshake */
	uint32_t	tb_pad;
	uint8_t		tb_enab[UDT_NPROBES_MAX];	/* [d] */
	char		tb_sock[108];	/* [I] ingest socket it belongs to */
	/*
	 * Profile timer fallback (UDT_W_PTIMER).  dtd stores the period
	 * (ns, 0: off), then increments tb_prof_gen and FUTEX_WAKEs every
	 * waiter on it (a shared futex: the word lives in the memfd).  A
	 * tracee's watcher thread sleeps in FUTEX_WAIT on tb_prof_gen, so a
	 * change reaches processes that never enter a hook.  dtd also wakes
	 * it after setting tb_reconnect when it adopts an orphaned table.
	 */
	uint32_t	tb_prof_gen;	/* [d,a] bumped on every change */
	uint32_t	tb_prof_pad;
	uint64_t	tb_prof_nsecs;	/* [d,a] sampling period, 0: off */
	/*
	 * Lossless mode (DTEVT_LOSSLESS, dtvar.h): non-zero while a
	 * recording open asked for every event.  A producer that finds the
	 * ring full then waits for dtd's drain (FUTEX_WAIT on rh_tail, see
	 * rh_wait) instead of dropping, at most UDT_WAIT_NSEC without the
	 * drain making progress: then it drops and counts as without the
	 * mode, and does not wait again on that ring until rh_tail moves
	 * (rh_gaveup), so a stopped or dead dtd costs a program one bound,
	 * not one a record.  Zero in tables of an older dtd: no wait.
	 */
	uint32_t	tb_lossless;	/* [d,a] */
	uint32_t	tb_lossless_pad;
	/*
	 * The process's executable mappings as dtd read them at its
	 * handshake (the maps snapshot it takes anyway), for the library's
	 * coverage check at start, which then reads no /proc/self/maps (two
	 * system calls of every traced start).  Written once, before the
	 * welcome; 0 entries: not said (too many, unread, an older table),
	 * and the library reads the file itself.  What the check takes from
	 * it decides only whether dispatch is needed: a wrong list costs
	 * events or speed, never the program's memory.
	 */
	uint32_t	tb_xmaps_n;	/* [d] entries of tb_xmaps */
	uint32_t	tb_xfiles_n;	/* [d] entries of tb_xfiles */
	uint64_t	tb_xmaps[UDT_XMAPS_MAX][2];	/* [d] [lo, hi) */
	/*
	 * Of those mappings, the files dtd stat'd as the very file mapped
	 * (/proc/PID/map_files: dtd as root), in the same read: the
	 * identity the library keys its plans and images by (size, mtime,
	 * ctime, inode, device; udt_rw_plan.c), a stat(2) a large object
	 * it would otherwise make.  A mapping not listed, it stats itself.
	 */
	struct udt_xfile {
		uint64_t	xf_lo, xf_hi;	/* the executable mapping */
		uint64_t	xf_size, xf_dev, xf_ino;
		int64_t		xf_mtime, xf_mtimens;
		int64_t		xf_ctime, xf_ctimens;
	}		tb_xfiles[UDT_XFILES_MAX];	/* [d] */
	/*
	 * Bit i set: dtd read the pages of the file mapping tb_xmaps[i] in
	 * /proc/PID/pagemap in the same look and found none a private copy
	 * (an earlier preload's patch, a breakpoint), so the library may
	 * map an image over them without reading its own pagemap (three
	 * calls of a start).  Clear: some are, or not read (an anonymous
	 * or huge mapping, an older dtd), and the library reads it.
	 */
	uint64_t	tb_xclean[(UDT_XMAPS_MAX + 63) / 64];	/* [d] */
};

/*
 * How long a producer waits, in lossless mode, for a full ring's drain
 * to move.  dtd drains without sleeping while records come, so this
 * long without a slot freed means it is stopped, dead or held back by a
 * reader that does not read: the program must go on.  5 ms lost 3% of
 * a flat-out loop's events under a reader through FUSE, whose pauses
 * (and dtd's backpressure behind them) reach that; 20 ms lost none on a
 * quiet machine, but a reader that waits for a CPU on a busy 2-core one
 * pauses longer, and the README's demo lost 3 to 25% of its events.
 */
#define UDT_WAIT_NSEC		(500 * 1000 * 1000ULL)

/*
 * The table memfd: struct udt_tab, then at UDT_FILT_OFF the filters the
 * hooks evaluate before they record (userdt/udt_filt.h), then at
 * UDT_SAGG_OFF the aggregations they fold (userdt/udt_sagg.h).
 */
#define UDT_TAB_SIZE		28672

/* udt_rec.ur_flags: what the record carries. */
#define UDT_R_ARGS		0x01	/* ur_args (entry) */
#define UDT_R_RET		0x02	/* ur_args[0..1], ur_error (return);
					   ur_args[1]: the call's duration
					   in ns + 1, 0: none (udt_sagg.h) */
#define UDT_R_COMM		0x04	/* ur_comm */
#define UDT_R_STACK		0x08	/* ur_stack[0..ur_nframes) */
#define UDT_R_TSC		0x10	/* ur_nsec is a TSC value, ur_sec 0 */
#define UDT_R_PROF		0x20	/* a profile sample, see below */
#define UDT_R_STR		0x40	/* the next slot is its udt_rec_str */
#define UDT_R_ALL		0x7f
/* udt_rec_str.us_flags: never a record's, so a lone one is garbage. */
#define UDT_R_STRDATA		0x80
/* udt_rec_more.um_flags: frames past ur_stack, or a slot left unused. */
#define UDT_R_STKDATA		0x81
#define UDT_R_STKPAD		0x82

/*
 * A profile sample of the timer fallback: ur_probe UDT_PROBE_PROFILE,
 * ur_flags UDT_R_PROF (never with ARGS or RET), ur_args[0] the periods
 * the thread's timer overran since its last sample (dtd counts them as
 * skipped ticks), ur_args[1] the period the tracee sampled at (ns,
 * within dt(4)'s limits), ur_args[2..5] and ur_error zero, ur_stack the
 * interrupted user stack (innermost first).  Its ring-full and recursion
 * counts are rh_lost[UDT_PROBE_PROFILE] and rh_recur[UDT_PROBE_PROFILE]:
 * the index is above every syscall probe.
 */
#define UDT_PROBE_PROFILE	(UDT_NPROBES_MAX - 1)

/*
 * A slot: [p] fields are written by the producer before its commit.
 * Ordered so that a return record (its value, comm) is one cache line
 * and an entry record two: each line a producer writes is fetched from
 * the line's last reader, dtd, on another CPU.  A return record's value
 * is ur_args[0]; ur_args[1..] are not written and dtd ignores them.
 */
struct udt_rec {
	uint64_t	ur_seq;		/* [p,a] ticket + 1 once committed */
	uint16_t	ur_probe;	/* [p] 2i entry, 2i + 1 return */
	uint8_t		ur_flags;	/* [p] UDT_R_* */
	uint8_t		ur_nframes;	/* [p] <= UDT_DEEP_MAX, see below */
	uint32_t	ur_cpu;		/* [p] sched_getcpu() */
	int32_t		ur_tid;		/* [p] gettid(2) */
	int32_t		ur_error;	/* [p] errno of a failed call */
	int64_t		ur_sec;		/* [p] CLOCK_REALTIME, or 0 */
	int64_t		ur_nsec;	/* [p] ns, or TSC (UDT_R_TSC) */
	char		ur_comm[UDT_COMMLEN];	/* [p] */
	int64_t		ur_args[UDT_NARGS];	/* [p] registers, or retval */
	uint64_t	ur_stack[UDT_STACK_MAX];	/* [p] return addrs */
};

/* What dtd copies of a record without UDT_R_STACK. */
#define UDT_REC_HEAD	__builtin_offsetof(struct udt_rec, ur_stack)

#define UDT_SLOT_SIZE		256

/*
 * An entry record with strings (UDT_EN_STR, and the call has string
 * arguments) takes two consecutive tickets t, t + 1, reserved with one
 * compare-and-swap: slot t is the udt_rec with UDT_R_STR, slot t + 1
 * this, committed first (ur_seq t + 2), so that once dtd sees the
 * record committed it sees its strings too.  us_str is dt_evt's string
 * area as dtvar.h lays it out (DTEVT_STRINGS); dtd checks every entry.
 * Records without strings keep one slot: their cost does not change.
 */
#define UDT_STR_SIZE		152	/* DTEV_STR_SIZE */

struct udt_rec_str {
	uint64_t	us_seq;		/* [p,a] ticket + 1 once committed */
	uint16_t	us_probe;	/* [p] the record's ur_probe */
	uint8_t		us_flags;	/* [p] UDT_R_STRDATA */
	uint8_t		us_pad0[5];
	uint8_t		us_str[UDT_STR_SIZE];	/* [p] */
	uint8_t		us_pad1[UDT_SLOT_SIZE - 16 - UDT_STR_SIZE];
};
/*
 * Deep user stacks (UDT_EN_DEEP).  A record whose ur_nframes is above
 * UDT_STACK_MAX (an entry or return record of a syscall probe, never a
 * profile sample) holds its first UDT_STACK_MAX frames in ur_stack, and
 * the rest, UDT_MORE_NPC a slot, in the UDT_MORE_SLOTS(ur_nframes)
 * slots that follow it (after its udt_rec_str, if it has one): slot k
 * of them is a udt_rec_more with um_flags UDT_R_STKDATA, um_idx k and
 * the record's probe.  The hook cannot know the depth before it walks,
 * and walks straight into the ring, so it reserves, with the record's
 * compare-and-swap, the slots UDT_DEEP_MAX frames need and commits them
 * at once as UDT_R_STKPAD (so that a producer that never finishes
 * leaves no hole in the ring); it fills those it uses and marks them
 * UDT_R_STKDATA before it commits the record, whose release publishes
 * them.  dtd consumes a record's slots with it; a pad on its own is
 * skipped, not counted as garbage.  dtd checks every one: a record that
 * claims more than UDT_DEEP_MAX frames is garbage, one whose slots are
 * not all there as described keeps its first UDT_STACK_MAX frames.
 */
#define UDT_DEEP_MAX		127	/* DTEV_DEEP_MAX */
#define UDT_MORE_NPC		30	/* frames a udt_rec_more holds */
#define UDT_MORE_SLOTS(n)						\
	((n) > UDT_STACK_MAX ?						\
	    ((n) - UDT_STACK_MAX + UDT_MORE_NPC - 1) / UDT_MORE_NPC : 0)
#define UDT_MORE_MAXSLOTS	UDT_MORE_SLOTS(UDT_DEEP_MAX)

struct udt_rec_more {
	uint64_t	um_seq;		/* [p,a] ticket + 1 once committed */
	uint16_t	um_probe;	/* [p] the record's ur_probe */
	uint8_t		um_flags;	/* [p] UDT_R_STKDATA or UDT_R_STKPAD */
	uint8_t		um_idx;		/* [p] k: frames from
					   UDT_STACK_MAX + k * UDT_MORE_NPC */
	uint32_t	um_pad;
	uint64_t	um_pc[UDT_MORE_NPC];	/* [p] return addrs */
};

/*
 * 2 MiB, 8 ms at 1M events/s.  A producer writes a slot again a lap
 * later: the one or two lines a record writes there must still be in its
 * core's cache (2 MiB of L2 on our machines) or every record waits on
 * the last level.  32768 slots cost a recorded call 30-35 ns more at
 * 1M events/s (bench/syscall, paced); dtd drains without sleeping while
 * records come, so 8 ms is ample headroom.
 */
#define UDT_NSLOTS_DEFAULT	8192

#define UDT_EXEC_NANN		8	/* rh_exec: execs announced at once */

struct udt_ring_hdr {
	uint32_t	rh_magic;	/* [I] */
	uint32_t	rh_nslots;	/* [I] power of two */
	uint32_t	rh_nprobes;	/* [I] */
	uint32_t	rh_pad0;
	/*
	 * The attaching image's proof that it holds this ring: it stores
	 * where it mapped the ring in rh_self before its first record, and
	 * dtd asks that image's map (/proc/PID/maps, opened at the hello)
	 * whether the ring's memfd is mapped there; it never reads the
	 * memory at that address.  rh_proof, a random word, is no longer
	 * looked at but stays for the layout.  A process that exec'd
	 * between connecting and dtd's look, a forked helper keeping the
	 * ring, has no such mapping: its records are never the new
	 * image's.
	 */
	uint64_t	rh_self;	/* [p] the ring's address there */
	uint64_t	rh_proof;	/* [I] dtd's random word */
	/*
	 * Set by a new image's library once the records it was handed of
	 * its loader are in this ring (rh_exec below).
	 */
	uint32_t	rh_ready;	/* [p,a] */
	uint32_t	rh_pad5;
	/*
	 * Code of the library's mapped after the hello, which dtd's
	 * snapshot of the process does not hold: its disassembler's module
	 * (a pass that decodes maps it).  Its text [rh_cslo, rh_cshi),
	 * rh_cshi stored last; 0: none.  dtd drops a stack it takes of
	 * this process with a frame there (dt_untrace.c), reading these
	 * while the ring is listed; a tracee that lies hides only its own
	 * stacks.
	 */
	uint64_t	rh_cslo;	/* [p,a] */
	uint64_t	rh_cshi;	/* [p,a] */
	uint8_t		rh_pad1[64 - 56];
	uint64_t	rh_head;	/* [p,a] next ticket to reserve */
	/*
	 * The producers' last look at rh_tail, beside rh_head on the line
	 * they own, so that a reserve reads rh_tail (the line dtd writes)
	 * only when the ring looks full by this one.  Never above rh_tail:
	 * every value stored here was rh_tail once.  dtd ignores it.
	 */
	uint64_t	rh_ptail;	/* [p,a] */
	/*
	 * Lossless mode: rh_tail + 1 when a producer last gave up waiting
	 * for the drain (0: never), so that the others drop at once until
	 * rh_tail moves.  Written only when the ring is full.
	 */
	uint64_t	rh_gaveup;	/* [p,a] */
	uint8_t		rh_pad2[64 - 24];
	uint64_t	rh_tail;	/* [d,a] first ticket not consumed */
	/*
	 * Lossless mode: a producer sets rh_wait before it sleeps in
	 * FUTEX_WAIT on rh_tail's low 32 bits (a shared futex: the word is
	 * in the memfd); dtd, after each store to rh_tail, takes rh_wait
	 * back to 0 and, if it was set, FUTEX_WAKEs every waiter.  Both
	 * sides order the store before the load (sequentially consistent),
	 * so either the producer sees the new tail or dtd sees the flag.  On
	 * rh_tail's line: dtd reads it after every batch, producers write
	 * it only when the ring is full.  Untrusted: a tracee that keeps it
	 * set costs dtd a wake a batch of its own ring, nothing else.
	 */
	uint32_t	rh_wait;	/* [p,d,a] */
	uint8_t		rh_pad3[64 - 12];
	uint64_t	rh_lost_total;	/* [p,a] sum of rh_lost */
	uint64_t	rh_recur_total;	/* [p,a] sum of rh_recur */
	uint64_t	rh_filt_total;	/* [p,a] sum of rh_filt */
	uint8_t		rh_pad4[64 - 24];
	uint32_t	rh_lost[UDT_NPROBES_MAX];	/* [p,a] ring full */
	uint32_t	rh_recur[UDT_NPROBES_MAX];	/* [p,a] recursion */
	/*
	 * Events the hook did not record because the table's filter for
	 * their probe (userdt/udt_filt.h) rejected them: every open that
	 * records the probe would have rejected them too.  dtd counts
	 * them as filtered (dtsx_filtevt), never as lost.
	 */
	uint32_t	rh_filt[UDT_NPROBES_MAX];	/* [p,a] filtered */
	/*
	 * Calls of probe p made while its enable byte said UDT_EN_COUNT,
	 * wrapping: dtd folds what moved since it last looked into the
	 * counting opens' tables.  The tracee's word, checked as rh_lost.
	 */
	uint32_t	rh_count[UDT_NPROBES_MAX];	/* [p,a] count only */
	/*
	 * Execs on their way, so that dtd holds the other sources' events
	 * until the new images' first records are in: what the launcher's
	 * helper kept of a new image's loader is stamped from the exec on,
	 * but reaches a ring only once that image's library has attached,
	 * milliseconds later.  Before an execve a thread claims a free
	 * announce (ua_tid from 0 to its tid; the oldest is taken over when
	 * none is free) and stores its stamp (as a record's: bit 63 set for
	 * a raw TSC value, else CLOCK_REALTIME ns); a failed exec gives it
	 * back.  Several: the children of one process that share or keep
	 * its ring (vfork, a fork child that has not attached yet) exec at
	 * once.  dtd gives back an announce whose image attached as
	 * another process, and one that held too long.  Untrusted: a stamp
	 * dtd cannot place, or one older than 50 ms, holds nothing
	 * (dt_ingest_exec.c).
	 */
	struct udt_exec_ann {
		int32_t		ua_tid;		/* [p,d,a] 0: free */
		uint32_t	ua_pad;
		uint64_t	ua_ts;		/* [p,a] */
	} rh_exec[UDT_EXEC_NANN] __attribute__((aligned(64)));
};

#define UDT_RING_HDRSIZE	20480	/* slots start here */

/*
 * The ring memfd: the header, the slots, then the accumulators of the
 * aggregations folded in the tracee (userdt/udt_sagg.h).
 */
#define UDT_SAGG_ACC_OFF(nslots)	\
	(UDT_RING_HDRSIZE + (uint64_t)(nslots) * UDT_SLOT_SIZE)
/* udt_sagg_acc, _kent, _klist, _stk */
#define UDT_SAGG_ACC_SIZE	151552
#define UDT_RING_SIZE(nslots)	\
	(UDT_SAGG_ACC_OFF(nslots) + UDT_SAGG_ACC_SIZE)

_Static_assert(sizeof(struct udt_rec) == UDT_SLOT_SIZE, "udt_rec size");
_Static_assert(__builtin_offsetof(struct udt_rec, ur_args[1]) == 64,
    "a return record is one line");
_Static_assert(sizeof(struct udt_rec_str) == UDT_SLOT_SIZE, "udt_rec_str");
_Static_assert(sizeof(struct udt_rec_more) == UDT_SLOT_SIZE, "udt_rec_more");
_Static_assert(UDT_STACK_MAX + UDT_MORE_MAXSLOTS * UDT_MORE_NPC >=
    UDT_DEEP_MAX && UDT_DEEP_MAX <= 255, "deep stack slots");
_Static_assert(sizeof(struct udt_ring_hdr) <= UDT_RING_HDRSIZE, "ring hdr");
_Static_assert(sizeof(struct udt_tab) <= UDT_TAB_SIZE, "udt_tab size");

/*
 * What dtd reads of a tracee's trampolines (the rewriter's generated
 * code, providers/syscall/README.md) to report a user stack sampled
 * inside one at the system call site it stands for: the 16 bytes just
 * before each trampoline's first instruction, 8-byte aligned, hold
 * UDT_TRAMP_MAGIC then the site's address (its syscall instruction)
 * less the header's own (the magic's), modulo 2^64: relative, so that
 * the trampolines of an object are the same bytes in every process and
 * can be shared as a file (providers/syscall/preload/udt_rw_image.c); a
 * trampoline's code is at most UDT_TRAMP_MAX bytes.  The magic changed
 * with the meaning ("udtramsp" held the site itself): a dtd and a
 * tracee of different versions find no header, not a wrong site.  They are the
 * tracee's bytes: only ever a PC of its own stack is taken from them.
 * A sample in the library's entry has a frame-pointer frame whose
 * return address is the site, so the frames of the library itself
 * (file name UDT_LIB_PREFIX...) are cut from the leaf down to it.
 */
#define UDT_TRAMP_MAGIC		0x72736d6172747564ULL	/* "udtramsr" */
#define UDT_TRAMP_HDR		16
#define UDT_TRAMP_MAX		224
#define UDT_LIB_PREFIX		"libuserdt-preload"

#endif /* USERDT_UDT_WIRE_H */
