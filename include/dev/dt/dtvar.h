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
 * The userland ABI of OpenBSD's dt(4) tracing device (dt_dev.c 1.48,
 * dtvar.h 1.24) as served by userdt's dtd on Linux/amd64.
 *
 * Names and layouts are OpenBSD's so that OpenBSD's btrace builds against
 * this header unchanged.  The ioctl numbers below use the Linux encoding,
 * which is what a program built on Linux passes to ioctl(2); dtd also
 * accepts the OpenBSD encoding of every number (the DTIOC_OPENBSD()
 * macro computes it), whose _IOR/_IOW direction bits are swapped.
 *
 * Needs no OpenBSD header and works from C and C++, strict ISO modes
 * included: OpenBSD's register_t and caddr_t are spelled long and char *,
 * the same types on amd64, since glibc hides its own under _DEFAULT_SOURCE.
 */
#ifndef _DEV_DT_DTVAR_H_
#define _DEV_DT_DTVAR_H_

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <linux/ioctl.h>

#if !defined(__x86_64__) || !defined(__LP64__)
#error "userdt implements the amd64 (LP64) layout of dt(4) only"
#endif

#ifdef __cplusplus
extern "C" {
#define DT_STATIC_ASSERT(e, m)	static_assert(e, m)
#else
#define DT_STATIC_ASSERT(e, m)	_Static_assert(e, m)
#endif

/* Sizes of the fixed strings, each including its terminating NUL. */
#define DTNAMESIZE	16		/* provider, function, name, arg type */
#ifndef _MAXCOMLEN
#define _MAXCOMLEN	24		/* OpenBSD's sys/syslimits.h */
#endif
#define DTMAXCOMLEN	_MAXCOMLEN	/* dtev_comm */
#define DTMAXFUNCARGS	10		/* register_t slots in dtev_args */
#define DTMAXARGTYPES	5		/* typed args of dt(4)'s probes; a
					   Linux tracepoint describes all of
					   its up to DTMAXFUNCARGS */

#ifndef STACKTRACE_MAX
#define STACKTRACE_MAX	19		/* OpenBSD's sys/stacktrace.h */

/* Return addresses, innermost first; st_count of st_pc are valid. */
struct stacktrace {
	unsigned int	 st_count;
	unsigned long	 st_pc[STACKTRACE_MAX];
};
#endif

/*
 * One event as read(2) returns it.  Every record is zeroed before it is
 * filled, so fields the probe's evtflags did not ask for read as zero.
 */
struct dt_evt {
	unsigned int		dtev_pbn;	/* probe number, 1..N */
	unsigned int		dtev_cpu;	/* CPU that recorded it */
	pid_t			dtev_pid;	/* process id (Linux tgid) */
	pid_t			dtev_tid;	/* thread id as gettid(2) */
	struct timespec		dtev_tsp;	/* CLOCK_REALTIME */

	struct stacktrace	dtev_kstack;	/* DTEVT_KSTACK */
	struct stacktrace	dtev_ustack;	/* DTEVT_USTACK */

	char			dtev_comm[DTMAXCOMLEN];	/* DTEVT_EXECNAME */

	union {
		long		E_entry[DTMAXFUNCARGS];	/* DTEVT_FUNCARGS */
		struct {
			long		__retval[2];
			int		__error;
		} E_return;
	} _args;
#define dtev_args	_args.E_entry
#define dtev_retval	_args.E_return.__retval
#define dtev_error	_args.E_return.__error
};

/* What a probe records besides pbn, cpu, pid, tid and tsp. */
#define DTEVT_EXECNAME	(1 << 0)	/* dtev_comm */
#define DTEVT_USTACK	(1 << 1)	/* dtev_ustack */
#define DTEVT_KSTACK	(1 << 2)	/* dtev_kstack */
#define DTEVT_FUNCARGS	(1 << 3)	/* dtev_args */

#define DTEVT_FLAG_BITS		\
	"\020"			\
	"\001EXECNAME"		\
	"\002USTACK"		\
	"\003KSTACK"		\
	"\004FUNCARGS"

/*
 * userdt extension, not in OpenBSD's dt(4): strings in syscall events.
 *
 * DTEVT_STRINGS in dtrq_evtflags of a syscall probe's DTIOCPRBENABLE asks
 * for the arguments the kernel reads as NUL-terminated strings (paths,
 * names: open's first, openat's second, rename's two, mount's three) to
 * be copied into the entry events this open reads.  OpenBSD clients
 * never set the bit (OpenBSD masks syscall evtflags to 0xf, and no
 * OpenBSD flag uses bit 24): for them nothing changes, byte for byte.
 * Other providers ignore it, as dt(4) ignores unknown bits.
 *
 * The bytes travel in dtev_kstack, which syscall events never fill (a
 * user-space system call has no kernel stack): st_count stays 0, so a
 * reader of kstack sees an empty stack, and the DTEV_STR_SIZE bytes of
 * st_pc hold a list of entries, each
 *
 *	byte 0		(argument number + 1) | DTEV_STR_* flags; 0 ends
 *			the list (the rest of the area is zero)
 *	byte 1		len: bytes of the string that follow
 *	bytes 2..	the string's first len bytes, then a NUL
 *
 * in argument order.  DTEV_STR_TRUNC: the string is longer than the
 * space it was given (space is shared fairly between an event's string
 * arguments); DTEV_STR_FAULT: the bytes stop at an address the process
 * could not read (len 0 for a bad pointer; the call itself then fails
 * with EFAULT exactly as untraced, since the copy never faults).  An
 * event whose strings could not be carried has an empty list.
 */
#define DTEVT_STRINGS		(1 << 24)	/* userdt: string arguments */

#define DTEV_STR_SIZE		(STACKTRACE_MAX * 8)	/* st_pc's bytes */
#define DTEV_STR_ARG		0x0f	/* argument number + 1 */
#define DTEV_STR_TRUNC		0x10	/* cut at the space available */
#define DTEV_STR_FAULT		0x20	/* unreadable from there on */
#define DTEV_STR_HDR		2	/* header bytes of an entry */

/* The string area of an event (unsigned char *). */
#define DTEV_STR_AREA(ev)	((unsigned char *)(ev)->dtev_kstack.st_pc)

/*
 * userdt extension, not in OpenBSD's dt(4): deep stacks.
 *
 * DTEVT_DEEPSTACK in dtrq_evtflags, beside DTEVT_KSTACK and/or
 * DTEVT_USTACK, asks for stacks of up to DTEV_DEEP_MAX frames instead of
 * STACKTRACE_MAX.  OpenBSD clients never set the bit, so their records,
 * and struct dt_evt's size, stay exactly as they were.  Providers that
 * cannot walk deeper ignore it (their stacks stop at STACKTRACE_MAX, as
 * dt(4) ignores unknown bits); the profile provider honours it, and the
 * syscall provider for the user stacks its preload library takes.
 *
 * An event whose stack is deeper than STACKTRACE_MAX keeps its first
 * STACKTRACE_MAX frames where they always were, and its st_count says
 * the whole depth (up to DTEV_DEEP_MAX, so more than STACKTRACE_MAX: a
 * reader that asked knows to look further).  The frames from
 * STACKTRACE_MAX on follow in continuation records:
 *
 *	dtev_pbn	the event's probe number | DTEV_PBN_MORE
 *	dtev_cpu, dtev_pid, dtev_tid, dtev_tsp
 *			the event's
 *	from dtev_kstack on (DTEV_MORE_NPC 64-bit words a record)
 *			the kernel stack's frames past STACKTRACE_MAX,
 *			then the user stack's, packed across records
 *
 * ceil((kernel extra + user extra) / DTEV_MORE_NPC) of them.  They are
 * put into the same CPU's ring as the event, right after it, with it or
 * not at all (a ring without room for all drops the event, counted
 * once), so a reader finds them after the event among the records of
 * that dtev_cpu: records of other CPUs may come between (a read merges
 * the rings by time), none of the same CPU.  The words of the last
 * record past its frames are zero.
 */
#define DTEVT_DEEPSTACK		(1 << 25)	/* userdt: deep stacks */

/*
 * userdt extension, not in OpenBSD's dt(4): lossless recording.
 *
 * DTEVT_LOSSLESS in dtrq_evtflags of a syscall probe's DTIOCPRBENABLE
 * asks for every event: while an open that asked records, a traced
 * thread whose ring toward dtd is full waits for room instead of
 * dropping its event (LTTng-UST's blocking mode), and dtd's drain holds
 * the tracees' events back while any lossless open's ring is half full
 * rather than dropping them there.  The wait is bounded: a traced
 * thread that sees no progress for half a second (dtd stopped or
 * gone, a reader that does not read) drops and counts the event as
 * without the flag, and waits again only once the drain moves, so a
 * traced program is slowed to its reader's pace, never stopped.  It is
 * meant for a reader that may slow what it traces (btrace -c); a
 * system-wide reader leaves it off.  OpenBSD clients never set the bit;
 * other providers ignore it.  Events and their layout do not change.
 */
#define DTEVT_LOSSLESS		(1 << 28)	/* userdt: wait, do not drop */

/*
 * userdt extension, not in OpenBSD's dt(4): launched processes only.
 *
 * As root, dtd feeds syscall probes from every process on the machine,
 * as OpenBSD does: the traced processes' own hooks, and the kernel's
 * system call tracepoints for the others.  DTEVT_LAUNCHED in a syscall
 * probe's dtrq_evtflags keeps the kernel's events out of this open's
 * rings: it gets those of the processes started under the launcher
 * alone.  A reader that follows one command (btrace -c) asks for it, so
 * the rest of a busy machine never fills its rings.  OpenBSD clients
 * never set the bit; other providers ignore it.
 */
#define DTEVT_LAUNCHED		(1 << 26)	/* userdt: hooks' events only */

/*
 * userdt extension, not in OpenBSD's dt(4): one process tree's
 * tracepoint events, and its system calls no hook records.
 *
 * DTEVT_TREE in a tracepoint probe's dtrq_evtflags, on an open that
 * named a tree with DTIOCTREE first, gives this open the events of that
 * tree alone, selected by the kernel: perf events opened on the tree's
 * root, which its exec enables and every process it forks from then on
 * inherits (as DTF_F_TREE counts; the same exceptions), so the rest of
 * a busy machine never crosses dtd or fills the open's rings.  Other
 * opens of the probe are not affected.  DTIOCPRBENABLE refuses it with
 * EINVAL on an open with no tree, and with EOPNOTSUPP for a probe that
 * is not fed by one tracepoint alone (on__cpu's switch records, say);
 * a client then enables the probe without it and filters the events
 * itself.  The tree is fixed from then on (DTIOCTREE: EBUSY).  A stop
 * closes the events; a later start opens them again, enabled by the
 * root's next exec.
 *
 * In a syscall probe's dtrq_evtflags (same tree, same EINVAL) it implies
 * DTEVT_LAUNCHED and adds to the hooks' events the kernel's copy of the
 * tree's calls that no hook records (a statically linked program's,
 * whose image the preload library cannot enter): one raw_syscalls
 * sys_enter and one sys_exit perf event an open, opened on the root as
 * above and filtered by the kernel on the calls the open's tree probes
 * record.  The events are built as the system-wide feed's (the six
 * registers at entry, the result folded into retval and errno at
 * return, no strings), never of a process whose calls the hooks record,
 * and never counted twice: the system-wide feed gives none to such an
 * open.  perf's lost records count as the open's drops.  A set-id exec
 * leaves the tree (the kernel drops a process's perf events when an
 * exec changes its credentials): such a program's calls are not seen.
 * DTIOCPRBENABLE fails with EOPNOTSUPP where dtd has no kernel feed (not
 * root, --syscall-scope launched, no raw_syscalls); a client then
 * enables the probe without the bit.  OpenBSD clients never set the
 * bit; other providers ignore it.
 */
#define DTEVT_TREE		(1 << 27)	/* userdt: DTIOCTREE's tree */

#define DTEV_DEEP_MAX		127	/* frames a stack, perf's default */
#define DTEV_PBN_MORE		0x80000000u	/* a continuation record */
#define DTEV_MORE_OFF		32	/* offsetof(struct dt_evt, dtev_kstack) */
#define DTEV_MORE_NPC		((456 - DTEV_MORE_OFF) / 8)	/* 53 words */

/* Continuation records that follow an event with st_count k and u. */
#define DTEV_MORE_RECS(k, u)						\
	(((((k) > STACKTRACE_MAX ? (k) - STACKTRACE_MAX : 0) +		\
	   ((u) > STACKTRACE_MAX ? (u) - STACKTRACE_MAX : 0)) +		\
	  DTEV_MORE_NPC - 1) / DTEV_MORE_NPC)

/* The frame words of a continuation record (uint64_t *). */
#define DTEV_MORE_PCS(ev)	((uint64_t *)(void *)&(ev)->dtev_kstack)

/* DTIOCGPLIST: one entry per probe. */
struct dtioc_probe_info {
	uint32_t	dtpi_pbn;		/* probe number */
	uint8_t		dtpi_nargs;		/* # of arguments */
	char		dtpi_prov[DTNAMESIZE];
	char		dtpi_func[DTNAMESIZE];
	char		dtpi_name[DTNAMESIZE];
};

/*
 * DTIOCGPLIST: the caller passes the size of dtpr_probes; dtd always
 * writes back the size the whole list needs.
 */
struct dtioc_probe {
	size_t			 dtpr_size;	/* size of the buffer */
	struct dtioc_probe_info	*dtpr_probes;	/* array of probe info */
};

struct dtioc_arg_info {
	uint32_t	dtai_pbn;		/* probe number */
	uint8_t		dtai_argn;		/* arguments number */
	char		dtai_argtype[DTNAMESIZE];
};

/* DTIOCGARGS: argument types of one probe, same size protocol. */
struct dtioc_arg {
	uint32_t		 dtar_pbn;	/* probe number */
	size_t			 dtar_size;	/* size of the buffer */
	struct dtioc_arg_info	*dtar_args;	/* array of arg info */
};

/* DTIOCPRBENABLE and DTIOCPRBDISABLE. */
struct dtioc_req {
	uint32_t		 dtrq_pbn;	/* probe number */
	uint32_t		 __unused1;	/* was the in-kernel filter */
	uint64_t		 dtrq_evtflags;	/* DTEVT_* */
	uint64_t		 dtrq_nsecs;	/* profile/interval period */
};

/* DTIOCGSTATS: sums over all CPUs of this open's rings. */
struct dtioc_stat {
	uint64_t		 dtst_readevt;	/* events read */
	uint64_t		 dtst_dropevt;	/* events dropped, ring full */
	uint64_t		 dtst_skiptick;	/* timer periods skipped */
	uint64_t		 dtst_recurevt;	/* recursive events dropped */
};

/*
 * DTIOCRDVNODE: the mapping of dtrv_va in process dtrv_pid.  OpenBSD
 * returns an open descriptor of the mapped file in dtrv_fd; a Linux daemon
 * cannot put a descriptor into its caller, see README for how userdt's
 * clients get one.
 */
struct dtioc_rdvn {
	pid_t		 dtrv_pid;		/* in: target process */
	int		 dtrv_fd;		/* out: descriptor */
	char		*dtrv_va;		/* in: address in the target */
	char		*dtrv_offset;		/* out: file offset of the entry */
	char		*dtrv_start;		/* out: start address of the entry */
	size_t		 dtrv_len;		/* out: size of the file */
};

/*
 * userdt extension, not in OpenBSD's dt(4): filters at the source.
 *
 * DTIOCPRBFILTER hands dtd a filter for a probe this open enabled, after
 * DTIOCPRBENABLE and before DTIOCRECORD 1 (EBUSY while recording; ENOENT
 * when this open did not enable dtfl_pbn; EINVAL for a malformed
 * program).  dtd evaluates it on each event of that probe for this open
 * only, before the event takes a ring slot: an event it rejects is as if
 * the probe had not fired for this open, and is counted in
 * dtsx_filtevt, apart from the drops.  Another open of the same probe
 * keeps its own filter, or none.  A later DTIOCPRBFILTER replaces the
 * filter; dtfl_nterms 0 removes it.  OpenBSD clients never call it, and
 * a client that never calls it sees nothing change.  Where it can, the
 * source applies the OR of the filters of the probe's recording opens
 * before the event reaches dtd (the kernel's tracepoint filter; a
 * traced process's hook, whose rejections count in dtsx_filtevt too);
 * an open without a filter turns that off, and dtd still applies each
 * open's own.
 *
 * The filter is a postfix program of at most DTF_MAXTERMS terms: a
 * comparison pushes one truth value, DTF_OP_AND and DTF_OP_OR pop two
 * and push one, DTF_OP_CONST pushes dtft_val != 0; the program must
 * leave exactly one value, which keeps the event when true.  A
 * comparison reads its field as the reader of this open would see it in
 * the record (dtev_tid with --openbsd-strict's offset, dtev_cpu as read,
 * zero for arguments the open's evtflags did not ask for) as a signed
 * 64-bit number (DTF_F_INT32: its low 32 bits sign-extended, as a C int
 * would read them) and compares it with dtft_val.  DTF_COMM compares
 * dtev_comm with the string dtft_str, DTF_OP_EQ or DTF_OP_NE only; an
 * event whose comm the reader would not see as dtft_str spells it (not
 * recorded, empty, or holding a byte outside printable ASCII or a
 * backslash) passes the comparison, whatever the operator: the source
 * only ever removes what the client can tell it would reject.  No
 * negation operator: a client negates the comparison instead.  A probe
 * whose aggregations dtd folds (DTIOCPRBAGG) gets such an event as a
 * record instead of a fold, for the client's own filter to judge; a
 * client that can take those sets DTF_F_UNSURE on its DTF_COMM
 * comparisons (a dtd from before the flag refuses it: EINVAL).
 *
 * Evaluation takes at most DTF_MAXTERMS steps and no allocation.
 */
#define DTF_MAXTERMS	32

#define DTF_OP_EQ	1	/* comparisons: field OP dtft_val */
#define DTF_OP_NE	2
#define DTF_OP_LT	3
#define DTF_OP_LE	4
#define DTF_OP_GT	5
#define DTF_OP_GE	6
#define DTF_OP_AND	7	/* pop two, push both true */
#define DTF_OP_OR	8	/* pop two, push either true */
#define DTF_OP_CONST	9	/* push dtft_val != 0 */

#define DTF_PID		1	/* dtev_pid */
#define DTF_TID		2	/* dtev_tid */
#define DTF_CPU		3	/* dtev_cpu */
#define DTF_PBN		4	/* dtev_pbn */
#define DTF_COMM	5	/* dtev_comm, against dtft_str */
#define DTF_RETVAL	6	/* dtev_retval[0] */
#define DTF_ERRNO	7	/* dtev_error */
#define DTF_ARG0	16	/* dtev_args[n]: DTF_ARG0 + n */

#define DTF_F_INT32	0x01	/* compare the low 32 bits, signed */
#define DTF_F_UNSURE	0x02	/* DTF_COMM: unjudged events as records */
#define DTF_F_TREE	0x04	/* DTA_COUNT: the open's tree only */

struct dtioc_filter_term {
	uint8_t		dtft_op;		/* DTF_OP_* */
	uint8_t		dtft_field;		/* DTF_* of a comparison */
	uint8_t		dtft_flags;		/* DTF_F_* */
	uint8_t		dtft_pad[5];		/* zero */
	int64_t		dtft_val;
	char		dtft_str[DTMAXCOMLEN];	/* DTF_COMM, NUL-terminated */
};

struct dtioc_filter {
	uint32_t		 dtfl_pbn;	/* a probe this open enabled */
	uint32_t		 dtfl_nterms;	/* 0: no filter */
	struct dtioc_filter_term dtfl_terms[DTF_MAXTERMS];
};

/*
 * DTIOCGSTATSX: DTIOCGSTATS's counters and the extensions'.
 * dtsx_filtevt: events a filter at the source rejected (DTIOCPRBFILTER).
 * dtsx_lateevt: events that reached this open's rings after a later one
 * (dtd holds each event until every source has passed its time stamp,
 * but no longer than its bound: a source held back longer, on a machine
 * too busy, has its events let through late rather than stall the
 * others).  A reader that needs strict time order checks that it is 0.
 * dtsx_srcstk: events of this open's aggregations keyed by ustack
 * (DTIOCPRBAGG) that a traced process folding them itself had no room
 * for the stack of, and recorded instead: dtd folded their records, so
 * they are counted, not lost.  Told to the open whose aggregation found
 * no room, not to another open of the same probe, which got the record
 * too.  The traced processes' word, as their folds are: a process may
 * raise it as it could by making the calls.  All are output only,
 * counted since the open.
 */
struct dtioc_statx {
	uint64_t		 dtsx_readevt;
	uint64_t		 dtsx_dropevt;
	uint64_t		 dtsx_skiptick;
	uint64_t		 dtsx_recurevt;
	uint64_t		 dtsx_filtevt;
	uint64_t		 dtsx_lateevt;
	uint64_t		 dtsx_srcstk;
	uint64_t		 dtsx_spare;	/* zero */
};

/*
 * userdt extension, not in OpenBSD's dt(4): aggregations at the source.
 *
 * DTIOCPRBAGG hands dtd an aggregation for a probe this open enabled,
 * after DTIOCPRBENABLE and before DTIOCRECORD 1 (EBUSY while recording;
 * ENOENT when this open did not enable dtas_pbn; EINVAL for a malformed
 * spec; ENOSPC past DTA_MAXAGGS of an open or DTA_PCBAGGS of a probe;
 * ENOMEM past dtd's memory cap).  From then on, every event of that
 * probe that this open's filter (DTIOCPRBFILTER) keeps is folded into
 * the open's table instead of taking a ring slot: read(2) never returns
 * it.  Several aggregations of one probe each fold every event.  dtd
 * answers dtas_id, this open's number of the aggregation (1, 2, ...),
 * which its entries carry.  Another open of the same probe keeps its
 * own aggregations, or none, and reads its events as before.
 *
 * An entry is keyed by dtae_id and the dtas_nkeys fields of dtas_keys
 * (DTF_PID, DTF_TID, DTF_CPU, DTF_PBN, DTF_COMM, DTF_RETVAL, DTF_ERRNO,
 * DTF_ARG0 + n; each at most once), each read as the reader of this open
 * would see it in the record (as DTIOCPRBFILTER reads them); the fields
 * that are not keys are zero in the entry.  A comm the reader would not
 * see as it is spelled (empty, or holding a byte outside printable ASCII
 * or a backslash) also keys the entry by its pid, so a client can name
 * it as it names such an event.  The value (dtas_vfield, a DTF_* field
 * but DTF_COMM, as a signed 64-bit number, DTF_F_INT32 in dtas_vflags
 * for its low 32 bits sign-extended) is folded by dtas_func:
 *
 *	DTA_COUNT	dtae_count += 1 (no value: dtas_vfield 0)
 *	DTA_SUM		dtae_count += 1, dtae_sum += v (wrapping)
 *	DTA_MIN		dtae_count += 1, dtae_min = min(dtae_min, v)
 *	DTA_MAX		dtae_count += 1, dtae_max = max(dtae_max, v)
 *	DTA_AVG		dtae_count += 1, dtae_sum += v
 *	DTA_HIST	keyed by dtae_bucket too: -1 for v < 0, 0 for 0,
 *			k + 1 for 2^k <= v < 2^(k+1); dtae_count += 1
 *	DTA_LHIST	keyed by dtae_bkind and dtae_bucket: dtae_bkind -1
 *			for v < dtas_lmin, 1 for v >= dtas_lmax (bucket
 *			0), else 0 and dtae_bucket (v / dtas_lstep + 1) *
 *			dtas_lstep, C's division; dtae_count += 1.
 *			dtas_lmin < dtas_lmax, dtas_lstep > 0.
 *
 * dtae_sum, dtae_min and dtae_max are kept for every function, but for
 * the hist and lhist entries a traced process folded itself (dt(4)),
 * which keep only their counts (their sum, min and max are 0).
 *
 * The table holds at most the size the open's first DTIOCPRBAGG asked
 * for in dtas_aggsize (0: DTA_AGGSIZE_DEF entries; more than
 * DTA_AGGSIZE_MAX is cut to it), DTrace's aggsize; dtd answers the size
 * in dtas_aggsize.  An event whose key is new to a full table is not
 * folded: it is counted in dtgr_overflow, never silently lost.
 *
 * DTIOCAGGREAD reads the table.  dtgr_size 0 asks for the size the
 * entries need, answered in dtgr_size (nothing copied, nothing
 * cleared).  Otherwise, with room at dtgr_ents for every entry, dtd
 * copies them (in no particular order), says how many in dtgr_nents and
 * the bytes in dtgr_size, and with DTA_RD_CLEAR in dtgr_flags empties
 * the table in the same step, so an event is in exactly one read;
 * without the room it fails with ENOSPC and changes nothing.  A client
 * that reads with a buffer of dtas_aggsize entries never sees ENOSPC.
 * dtgr_aggevt (events folded, once for each aggregation an event went
 * into) and dtgr_overflow count since the open and are never cleared;
 * so does dtgr_kcount, the part of dtgr_aggevt that a kernel counter
 * counted and no record carried (a tracepoint's count kept by perf), in
 * the same unit: never more than dtgr_aggevt, and an event a full table
 * refused is in dtgr_overflow, not in it.  dtgr_kcount was a spare that
 * had to be zero; it is ignored on input and set on output, so that a
 * struct a size query filled in may be passed again as it is.  Every
 * event stamped before dtgr_done
 * (CLOCK_REALTIME nanoseconds, as dtev_tsp) has reached dtd's table or
 * rings by the time of the read: a client that saw its traced command
 * end at T reads until dtgr_done passes T to have all of its events
 * (sources drain late, design.md's "Time order").  Anyone who may open the device may read.
 * OpenBSD clients call neither command: nothing changes for them.
 *
 * Stacks as keys: DTF_KSTACK and DTF_USTACK (keys only, never a value
 * or a filter's field) key an entry by the event's kernel or user stack
 * as the record would carry it (nothing when the open's evtflags did not
 * ask for it, at most STACKTRACE_MAX frames, or up to DTEV_DEEP_MAX with
 * DTEVT_DEEPSTACK where the provider walks that deep).  dtd interns
 * each distinct stack (its frames, as st_pc holds them) in the open's
 * stack table and keys the entry by its id, 1, 2, ... in dtae_kstack or
 * dtae_ustack; 0 is the empty stack.  The stack table holds at most the
 * dtas_stksize stacks the open's first DTIOCPRBAGG with a stack key
 * asked for (0: DTA_STKSIZE_DEF; more than DTA_STKSIZE_MAX is cut to
 * it), answered in dtas_stksize.  A DTIOCAGGREAD with DTA_RD_CLEAR
 * starts a new one along with the entries: the ids of the entries it
 * returned are those of the table it retired, which DTIOCAGGSTACKS
 * reads until the next DTIOCAGGREAD; a client that reads as it goes
 * needs room for the distinct stacks between two reads.  (A read without
 * DTA_RD_CLEAR keeps the table, and DTIOCAGGSTACKS reads it.)  An event
 * with a stack new to a full stack table is not folded: it counts in
 * dtgr_overflow and in dtsr_overflow.  A client that never reads with
 * DTA_RD_CLEAR fills the table, and from then on every event with a new
 * stack is refused (counted) until the next emptying read.  The table is
 * two generations, the one folded into and the retired one, of a
 * struct dtioc_aggstack (1 KiB) a stack: up to 2 x dtas_stksize KiB,
 * about 128 MiB at DTA_STKSIZE_MAX, charged to the open's memory cap.
 * A user stack's addresses mean something in its process alone: a
 * client keys such an aggregation by DTF_PID too.
 *
 * DTIOCAGGSTACKS reads the stacks of the entries the last DTIOCAGGREAD
 * returned: those of ids dtsr_first (at least 1) on, as many as
 * dtsr_size bytes at dtsr_stks hold, in id order; dtd says how many in
 * dtsr_nstks (the ids dtsr_first .. dtsr_first + dtsr_nstks - 1), the
 * stacks that table holds in dtsr_total and the events a full stack
 * table could not take since the open in dtsr_overflow.  EINVAL for
 * dtsr_first 0 or a nonzero dtsr_pad or dtsr_spare.
 */
#define DTA_COUNT	1
#define DTA_SUM		2
#define DTA_MIN		3
#define DTA_MAX		4
#define DTA_AVG		5
#define DTA_HIST	6
#define DTA_LHIST	7

#define DTA_MAXKEYS	4		/* key fields of an aggregation */
#define DTA_MAXAGGS	4096		/* aggregations of an open */
#define DTA_PCBAGGS	8		/* aggregations of one probe */
#define DTA_AGGSIZE_DEF	4096		/* entries of a table */
#define DTA_AGGSIZE_MAX	65536

#define DTA_RD_CLEAR	0x01		/* empty the table as it is read */

#define DTF_KSTACK	8		/* aggregation key: kernel stack id */
#define DTF_USTACK	9		/* aggregation key: user stack id */
/*
 * userdt: the value of a syscall return probe's aggregation may be
 * DTF_LAT, the call's duration in ns (never a key, never a filter's
 * field): what a script's `nsecs - @s[tid]` reads on return when its
 * entry rule stored `@s[tid] = nsecs` for the call's entry.  Only the
 * hooks of traced processes measure it (they stamp the entry
 * themselves); a return with no stamp of its own entry (an entry before
 * the enable, one a nested call's return consumed) is folded nowhere,
 * as the script would skip it; so is an event of the kernel's feed,
 * which has no stamp of the hooks' (a client asks for this fold for
 * the processes it launched alone, DTEVT_LAUNCHED).  A hook that
 * records the return instead of folding it sends its duration along.
 */
#define DTF_LAT		10		/* aggregation value: duration */
#define DTA_STKSIZE_DEF	1024		/* stacks of a stack table */
#define DTA_STKSIZE_MAX	65535		/* ids fit dtae_kstack's 16 bits */

struct dtioc_aggspec {
	uint32_t	dtas_pbn;		/* a probe this open enabled */
	uint32_t	dtas_id;		/* out: the aggregation's id */
	uint8_t		dtas_func;		/* DTA_* */
	uint8_t		dtas_nkeys;		/* 0 .. DTA_MAXKEYS */
	uint8_t		dtas_vfield;		/* DTF_* of the value */
	uint8_t		dtas_vflags;		/* DTF_F_* */
	uint8_t		dtas_keys[DTA_MAXKEYS];	/* DTF_* */
	uint32_t	dtas_aggsize;		/* in/out: table entries */
	uint32_t	dtas_stksize;		/* in/out: stack table; was
						   padding, 0 is the default */
	int64_t		dtas_lmin;		/* DTA_LHIST */
	int64_t		dtas_lmax;
	int64_t		dtas_lstep;
};

struct dtioc_aggent {
	/* the key: */
	uint32_t	dtae_id;		/* dtas_id */
	uint32_t	dtae_pbn;		/* DTF_PBN */
	int32_t		dtae_pid;		/* DTF_PID (or a plain comm's) */
	int32_t		dtae_tid;		/* DTF_TID */
	uint32_t	dtae_cpu;		/* DTF_CPU */
	int32_t		dtae_error;		/* DTF_ERRNO */
	int64_t		dtae_retval;		/* DTF_RETVAL */
	uint64_t	dtae_args[DTMAXFUNCARGS]; /* DTF_ARG0 + n */
	char		dtae_comm[DTMAXCOMLEN];	/* DTF_COMM */
	int64_t		dtae_bucket;		/* DTA_HIST, DTA_LHIST */
	int32_t		dtae_bkind;		/* DTA_LHIST */
	uint16_t	dtae_kstack;		/* DTF_KSTACK: stack id */
	uint16_t	dtae_ustack;		/* DTF_USTACK: stack id */
	/* the values: */
	uint64_t	dtae_count;
	int64_t		dtae_sum;
	int64_t		dtae_min;
	int64_t		dtae_max;
};

struct dtioc_aggread {
	size_t			 dtgr_size;	/* in/out: bytes at dtgr_ents */
	struct dtioc_aggent	*dtgr_ents;
	uint32_t		 dtgr_flags;	/* DTA_RD_* */
	uint32_t		 dtgr_nents;	/* out */
	uint64_t		 dtgr_aggevt;	/* out: events folded */
	uint64_t		 dtgr_overflow;	/* out: events a full table
						   could not fold */
	uint64_t		 dtgr_done;	/* out: CLOCK_REALTIME ns */
	uint64_t		 dtgr_kcount;	/* out (ignored on input):
						   of dtgr_aggevt, the
						   kernel's counters' */
};

/*
 * userdt extension: counting one process tree's events.
 *
 * DTIOCTREE names the root of the process tree this open follows (a
 * client that starts a command, as btrace -c): dttr_pid, a process that
 * is about to execute it.  Before DTIOCRECORD 1 (EBUSY while recording;
 * EINVAL for a pid <= 0, a dttr_flags bit not below or a nonzero
 * dttr_spare; ESRCH
 * when there is no such process; EOPNOTSUPP from a caller in another
 * pid namespace than dtd's); a later one replaces it, until a
 * DTF_F_TREE count was asked for (then EBUSY).  By itself it changes
 * nothing: it is what DTF_F_TREE counts.
 *
 * A DTIOCPRBAGG of DTA_COUNT with DTF_F_TREE in dtas_vflags, keyed by
 * nothing but DTF_PBN, counts only the events made by dttr_pid from
 * its next execve(2) on and by every process it forks from then on,
 * and exactly: the kernel counts them where
 * they happen (a perf counter that its children inherit and that its
 * exec enables), under the probe's filter (DTIOCPRBFILTER), which the
 * kernel must then take whole.  What a process forked before that exec
 * does (a launcher's helper) is not counted, until it execs itself; a
 * set-id exec leaves the tree (the kernel drops its counters then), and
 * what a process does after perf's exit hook (its last context switch)
 * is not counted.  None of these events
 * takes a ring slot.  dtd refuses with EOPNOTSUPP what it cannot count
 * so (a probe or filter the kernel cannot count, a provider other than
 * tracepoint's, a kernel that refuses the counter), and with EINVAL a
 * DTF_F_TREE spec on an open with no DTIOCTREE: the client then keys
 * its count by DTF_PID and keeps its tree's entries itself.  All of a
 * probe's aggregations are DTF_F_TREE counts, or none is (EINVAL).
 *
 * DTTR_F_HOOKED: the root executes an image the preload library enters
 * (btrace -c's /bin/sh), under a launcher whose helper follows the
 * tree's execs (dtrun(1)).  The kernel's copy of the tree's calls that
 * a syscall probe enabled with DTEVT_TREE takes then starts at each
 * exec of a statically linked image that the helper stops (it asks dtd
 * on the ingest socket, UDT_HELLO_KARM), not at the root's exec: the
 * hooked processes of the tree never go through the kernel's events.
 * An older dtd refuses the bit (EINVAL).
 */
#define DTTR_F_HOOKED	0x0001
struct dtioc_tree {
	int32_t		dttr_pid;		/* the tree's root */
	uint32_t	dttr_flags;		/* DTTR_F_* */
	uint64_t	dttr_spare;		/* zero */
};

/* DTIOCAGGSTACKS: one stack of the stack table. */
struct dtioc_aggstack {
	uint32_t	dtak_id;		/* 1 .. */
	uint32_t	dtak_count;		/* frames in dtak_pc */
	uint64_t	dtak_pc[DTEV_DEEP_MAX];	/* innermost first */
};

struct dtioc_aggstkread {
	size_t			 dtsr_size;	/* in/out: bytes at dtsr_stks */
	struct dtioc_aggstack	*dtsr_stks;
	uint32_t		 dtsr_first;	/* in: first id wanted */
	uint32_t		 dtsr_nstks;	/* out: stacks copied */
	uint32_t		 dtsr_total;	/* out: stacks in the table */
	uint32_t		 dtsr_pad;	/* zero */
	uint64_t		 dtsr_overflow;	/* out: events a full stack
						   table could not fold */
	uint64_t		 dtsr_spare;	/* zero */
};

/* Linux encoding; dtd accepts DTIOC_OPENBSD() of each as well. */
#define DTIOCGPLIST	_IOWR('D', 1, struct dtioc_probe)
#define DTIOCGSTATS	_IOR('D', 2, struct dtioc_stat)
#define DTIOCRECORD	_IOW('D', 3, int)
#define DTIOCPRBENABLE	_IOW('D', 4, struct dtioc_req)
#define DTIOCPRBDISABLE	_IOW('D', 5, struct dtioc_req)
#define DTIOCGARGS	_IOWR('D', 6, struct dtioc_arg)
/* 7 was DTIOCGETAUXBASE: retired upstream, answered with ENOTTY. */
#define DTIOCRDVNODE	_IOWR('D', 8, struct dtioc_rdvn)
/*
 * userdt extensions: numbers far above OpenBSD's so that none of its
 * future commands can collide with them.
 */
#define DTIOCPRBFILTER	_IOW('D', 64, struct dtioc_filter)
#define DTIOCGSTATSX	_IOR('D', 65, struct dtioc_statx)
#define DTIOCPRBAGG	_IOWR('D', 66, struct dtioc_aggspec)
#define DTIOCAGGREAD	_IOWR('D', 67, struct dtioc_aggread)
#define DTIOCAGGSTACKS	_IOWR('D', 68, struct dtioc_aggstkread)
#define DTIOCTREE	_IOW('D', 69, struct dtioc_tree)

/*
 * The OpenBSD encoding of a Linux-encoded number: OpenBSD's IOC_OUT is
 * Linux's _IOC_READ bit and IOC_IN its _IOC_WRITE bit, so swap the two.
 * _IOWR numbers are the same on both systems.
 */
#define DTIOC_OPENBSD(cmd)						\
	(((unsigned long)(cmd) & ~0xc0000000UL) |			\
	 (((unsigned long)(cmd) & 0x80000000UL) >> 1) |		\
	 (((unsigned long)(cmd) & 0x40000000UL) << 1))

/* Layout checks: these are the numbers of dt-abi on amd64. */
DT_STATIC_ASSERT(sizeof(struct stacktrace) == 160, "stacktrace size");
DT_STATIC_ASSERT(offsetof(struct stacktrace, st_pc) == 8, "st_pc");
DT_STATIC_ASSERT(sizeof(struct dt_evt) == 456, "dt_evt size");
DT_STATIC_ASSERT(DTEV_STR_SIZE == sizeof(((struct dt_evt *)0)->dtev_kstack.st_pc),
    "string area");
DT_STATIC_ASSERT(DTEV_MORE_OFF == offsetof(struct dt_evt, dtev_kstack) &&
    DTEV_MORE_OFF + DTEV_MORE_NPC * 8 == sizeof(struct dt_evt), "more area");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_pbn) == 0, "dtev_pbn");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_cpu) == 4, "dtev_cpu");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_pid) == 8, "dtev_pid");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_tid) == 12, "dtev_tid");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_tsp) == 16, "dtev_tsp");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_kstack) == 32, "dtev_kstack");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_ustack) == 192, "dtev_ustack");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_comm) == 352, "dtev_comm");
DT_STATIC_ASSERT(offsetof(struct dt_evt, _args) == 376, "dtev_args");
DT_STATIC_ASSERT(offsetof(struct dt_evt, _args.E_return.__error) == 392,
    "dtev_error");
DT_STATIC_ASSERT(sizeof(struct dtioc_probe_info) == 56, "probe_info size");
DT_STATIC_ASSERT(offsetof(struct dtioc_probe_info, dtpi_nargs) == 4, "nargs");
DT_STATIC_ASSERT(offsetof(struct dtioc_probe_info, dtpi_prov) == 5, "prov");
DT_STATIC_ASSERT(offsetof(struct dtioc_probe_info, dtpi_func) == 21, "func");
DT_STATIC_ASSERT(offsetof(struct dtioc_probe_info, dtpi_name) == 37, "name");
DT_STATIC_ASSERT(sizeof(struct dtioc_probe) == 16, "dtioc_probe size");
DT_STATIC_ASSERT(offsetof(struct dtioc_probe, dtpr_probes) == 8, "probes");
DT_STATIC_ASSERT(sizeof(struct dtioc_arg_info) == 24, "arg_info size");
DT_STATIC_ASSERT(offsetof(struct dtioc_arg_info, dtai_argtype) == 5, "type");
DT_STATIC_ASSERT(sizeof(struct dtioc_arg) == 24, "dtioc_arg size");
DT_STATIC_ASSERT(offsetof(struct dtioc_arg, dtar_size) == 8, "dtar_size");
DT_STATIC_ASSERT(offsetof(struct dtioc_arg, dtar_args) == 16, "dtar_args");
DT_STATIC_ASSERT(sizeof(struct dtioc_req) == 24, "dtioc_req size");
DT_STATIC_ASSERT(offsetof(struct dtioc_req, dtrq_evtflags) == 8, "evtflags");
DT_STATIC_ASSERT(offsetof(struct dtioc_req, dtrq_nsecs) == 16, "nsecs");
DT_STATIC_ASSERT(sizeof(struct dtioc_stat) == 32, "dtioc_stat size");
DT_STATIC_ASSERT(sizeof(struct dtioc_rdvn) == 40, "dtioc_rdvn size");
DT_STATIC_ASSERT(offsetof(struct dtioc_rdvn, dtrv_fd) == 4, "dtrv_fd");
DT_STATIC_ASSERT(offsetof(struct dtioc_rdvn, dtrv_va) == 8, "dtrv_va");
DT_STATIC_ASSERT(offsetof(struct dtioc_rdvn, dtrv_offset) == 16, "offset");
DT_STATIC_ASSERT(offsetof(struct dtioc_rdvn, dtrv_start) == 24, "start");
DT_STATIC_ASSERT(offsetof(struct dtioc_rdvn, dtrv_len) == 32, "dtrv_len");
DT_STATIC_ASSERT(DTIOCGPLIST == 0xC0104401UL, "DTIOCGPLIST");
DT_STATIC_ASSERT(DTIOCGSTATS == 0x80204402UL, "DTIOCGSTATS");
DT_STATIC_ASSERT(DTIOCRECORD == 0x40044403UL, "DTIOCRECORD");
DT_STATIC_ASSERT(DTIOCPRBENABLE == 0x40184404UL, "DTIOCPRBENABLE");
DT_STATIC_ASSERT(DTIOCPRBDISABLE == 0x40184405UL, "DTIOCPRBDISABLE");
DT_STATIC_ASSERT(DTIOCGARGS == 0xC0184406UL, "DTIOCGARGS");
DT_STATIC_ASSERT(DTIOCRDVNODE == 0xC0284408UL, "DTIOCRDVNODE");
DT_STATIC_ASSERT(sizeof(struct dtioc_filter_term) == 40, "filter term");
DT_STATIC_ASSERT(sizeof(struct dtioc_filter) == 8 + 40 * DTF_MAXTERMS,
    "dtioc_filter size");
DT_STATIC_ASSERT(sizeof(struct dtioc_statx) == 64, "dtioc_statx size");
DT_STATIC_ASSERT(DTIOCPRBFILTER == 0x45084440UL, "DTIOCPRBFILTER");
DT_STATIC_ASSERT(DTIOCGSTATSX == 0x80404441UL, "DTIOCGSTATSX");
DT_STATIC_ASSERT(sizeof(struct dtioc_aggspec) == 48, "dtioc_aggspec size");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggspec, dtas_aggsize) == 16,
    "dtas_aggsize");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggspec, dtas_lmin) == 24, "lmin");
DT_STATIC_ASSERT(sizeof(struct dtioc_aggent) == 184, "dtioc_aggent size");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggent, dtae_args) == 32, "args");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggent, dtae_comm) == 112, "comm");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggent, dtae_count) == 152, "count");
DT_STATIC_ASSERT(sizeof(struct dtioc_aggread) == 56, "dtioc_aggread size");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggread, dtgr_flags) == 16, "flags");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggread, dtgr_aggevt) == 24, "aggevt");
DT_STATIC_ASSERT(DTIOCPRBAGG == 0xC0304442UL, "DTIOCPRBAGG");
DT_STATIC_ASSERT(DTIOCAGGREAD == 0xC0384443UL, "DTIOCAGGREAD");
DT_STATIC_ASSERT(offsetof(struct dtioc_aggent, dtae_kstack) == 148, "kstk");
DT_STATIC_ASSERT(sizeof(struct dtioc_aggstack) == 8 + 8 * DTEV_DEEP_MAX,
    "dtioc_aggstack size");
DT_STATIC_ASSERT(sizeof(struct dtioc_aggstkread) == 48, "aggstkread size");
DT_STATIC_ASSERT(DTIOCAGGSTACKS == 0xC0304444UL, "DTIOCAGGSTACKS");
DT_STATIC_ASSERT(DTIOC_OPENBSD(DTIOCGSTATS) == 0x40204402UL, "GSTATS bsd");
DT_STATIC_ASSERT(DTIOC_OPENBSD(DTIOCRECORD) == 0x80044403UL, "RECORD bsd");
DT_STATIC_ASSERT(DTIOC_OPENBSD(DTIOCPRBENABLE) == 0x80184404UL, "ENABLE bsd");
DT_STATIC_ASSERT(DTIOC_OPENBSD(DTIOCGPLIST) == DTIOCGPLIST, "GPLIST bsd");

#undef DT_STATIC_ASSERT

#ifdef __cplusplus
}
#endif

#endif /* _DEV_DT_DTVAR_H_ */
