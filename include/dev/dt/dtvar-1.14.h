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
 * The userland ABI of OpenBSD's dt(4) as dt_dev.c 1.14 (2021-05-22)
 * served it, on Linux/amd64: what dtd serves with --abi 1.14, for
 * testing clients written against that OpenBSD release.  Include it
 * instead of <dev/dt/dtvar.h>, never beside it (the names are the same).
 *
 * Against 1.48 (dtvar.h): records are 296 bytes (no dtev_ustack, a
 * 17-byte dtev_comm); DTIOCPRBENABLE takes a 32-byte dtioc_req with an
 * in-kernel pid/tid filter and a timer rate in Hz (1..100); DTIOCGSTATS
 * fills two counters; DTIOCPRBDISABLE, DTIOCGARGS and DTIOCRDVNODE do
 * not exist (ENOTTY).  Numbers in the Linux encoding; DTIOC_OPENBSD()
 * gives OpenBSD's, which dtd accepts too.
 */
#ifndef _DEV_DT_DTVAR_1_14_H_
#define _DEV_DT_DTVAR_1_14_H_

#ifdef _DEV_DT_DTVAR_H_
#error "<dev/dt/dtvar-1.14.h> and <dev/dt/dtvar.h> cannot both be included"
#endif
#define _DEV_DT_DTVAR_H_	/* and <dev/dt/dtvar.h> may not come after */

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

#define DT_ABI_REVISION	"1.14"		/* dt_dev.c revision served */

#define DTNAMESIZE	16		/* provider, function, name */
#define DTMAXCOMLEN	17		/* OpenBSD's MAXCOMLEN + 1 then */
#define DTMAXFUNCARGS	10		/* register_t slots in dtev_args */

#ifndef STACKTRACE_MAX
#define STACKTRACE_MAX	19		/* OpenBSD's sys/stacktrace.h */

struct stacktrace {
	unsigned int	 st_count;
	unsigned long	 st_pc[STACKTRACE_MAX];
};
#endif

/* One event as read(2) returns it: 296 bytes. */
struct dt_evt {
	unsigned int		dtev_pbn;	/* probe number, 1..N */
	unsigned int		dtev_cpu;	/* CPU that recorded it */
	pid_t			dtev_pid;	/* process id */
	pid_t			dtev_tid;	/* thread id */
	struct timespec		dtev_tsp;	/* CLOCK_REALTIME */
	struct stacktrace	dtev_kstack;	/* DTEVT_KSTACK or USTACK */
	char			dtev_comm[DTMAXCOMLEN];	/* DTEVT_EXECNAME */
	union {
		long		E_entry[DTMAXFUNCARGS];
		struct {
			long		__retval[2];
			int		__error;
		} E_return;
	} _args;
#define dtev_args	_args.E_entry
#define dtev_retval	_args.E_return.__retval
#define dtev_error	_args.E_return.__error
};

#define DTEVT_EXECNAME	(1 << 0)
#define DTEVT_USTACK	(1 << 1)	/* 1.14 saved the kernel stack */
#define DTEVT_KSTACK	(1 << 2)
#define DTEVT_FUNCARGS	(1 << 3)

#define DTEVT_FLAG_BITS		\
	"\020"			\
	"\001EXECNAME"		\
	"\002USTACK"		\
	"\003KSTACK"		\
	"\004FUNCARGS"		\
	"\005RETVAL"

/*
 * A probe's filter: events are recorded only when the process id or
 * thread id (as dtev_tid reads) is, or is not, dtf_value.  The tracing
 * program's own events were never recorded.
 */
struct dt_filter {
	enum dt_operand {
		DT_OP_NONE = 0,
		DT_OP_EQ,
		DT_OP_NE,
	}		dtf_operand;
	enum dt_filtervar {
		DT_FV_NONE = 0,
		DT_FV_PID,
		DT_FV_TID,
	}		dtf_variable;
	unsigned int	dtf_value;
};

struct dtioc_probe_info {
	uint32_t	dtpi_pbn;
	uint8_t		dtpi_nargs;
	char		dtpi_prov[DTNAMESIZE];
	char		dtpi_func[DTNAMESIZE];
	char		dtpi_name[DTNAMESIZE];
};

struct dtioc_probe {
	size_t			 dtpr_size;
	struct dtioc_probe_info	*dtpr_probes;
};

struct dtioc_req {
	uint32_t		 dtrq_pbn;
	struct dt_filter	 dtrq_filter;
	uint32_t		 dtrq_rate;	/* profile/interval, Hz */
	uint64_t		 dtrq_evtflags;
};

struct dtioc_stat {
	uint64_t		 dtst_readevt;
	uint64_t		 dtst_dropevt;
};

#define DTIOCGPLIST	_IOWR('D', 1, struct dtioc_probe)
#define DTIOCGSTATS	_IOR('D', 2, struct dtioc_stat)
#define DTIOCRECORD	_IOW('D', 3, int)
#define DTIOCPRBENABLE	_IOW('D', 4, struct dtioc_req)

#define DTIOC_OPENBSD(cmd)						\
	(((unsigned long)(cmd) & ~0xc0000000UL) |			\
	 (((unsigned long)(cmd) & 0x80000000UL) >> 1) |		\
	 (((unsigned long)(cmd) & 0x40000000UL) << 1))

DT_STATIC_ASSERT(sizeof(struct dt_evt) == 296, "dt_evt size");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_kstack) == 32, "dtev_kstack");
DT_STATIC_ASSERT(offsetof(struct dt_evt, dtev_comm) == 192, "dtev_comm");
DT_STATIC_ASSERT(offsetof(struct dt_evt, _args) == 216, "dtev_args");
DT_STATIC_ASSERT(sizeof(struct dt_filter) == 12, "dt_filter size");
DT_STATIC_ASSERT(sizeof(struct dtioc_probe_info) == 56, "probe_info size");
DT_STATIC_ASSERT(sizeof(struct dtioc_probe) == 16, "dtioc_probe size");
DT_STATIC_ASSERT(sizeof(struct dtioc_req) == 32, "dtioc_req size");
DT_STATIC_ASSERT(offsetof(struct dtioc_req, dtrq_filter) == 4, "filter");
DT_STATIC_ASSERT(offsetof(struct dtioc_req, dtrq_rate) == 16, "rate");
DT_STATIC_ASSERT(offsetof(struct dtioc_req, dtrq_evtflags) == 24, "flags");
DT_STATIC_ASSERT(sizeof(struct dtioc_stat) == 16, "dtioc_stat size");
DT_STATIC_ASSERT(DTIOCGPLIST == 0xC0104401UL, "DTIOCGPLIST");
DT_STATIC_ASSERT(DTIOCGSTATS == 0x80104402UL, "DTIOCGSTATS");
DT_STATIC_ASSERT(DTIOCRECORD == 0x40044403UL, "DTIOCRECORD");
DT_STATIC_ASSERT(DTIOCPRBENABLE == 0x40204404UL, "DTIOCPRBENABLE");
DT_STATIC_ASSERT(DTIOC_OPENBSD(DTIOCGSTATS) == 0x40104402UL, "GSTATS bsd");
DT_STATIC_ASSERT(DTIOC_OPENBSD(DTIOCPRBENABLE) == 0x80204404UL, "ENABLE bsd");

#undef DT_STATIC_ASSERT

#ifdef __cplusplus
}
#endif

#endif /* _DEV_DT_DTVAR_1_14_H_ */
