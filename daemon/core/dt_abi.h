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
 * Older revisions of dt(4)'s ABI that dtd can serve (--abi), as the core
 * sees them.  The public header of each is include/dev/dt/dtvar-REV.h;
 * it cannot be included beside dtvar.h (same names), so the core has
 * its own spelling of the layouts here, checked against the numbers of
 * dt-abi section 2.10 and 3.
 *
 * dt_dev.c 1.14 (2021-05-22): records of 296 bytes (no user stack,
 * dtev_comm of 17 bytes); DTIOCGSTATS fills two counters (16 bytes);
 * DTIOCPRBENABLE takes a 32-byte request with an in-kernel pid/tid
 * filter and a rate in Hz; no DTIOCPRBDISABLE, DTIOCGARGS or
 * DTIOCRDVNODE (ENOTTY).
 */
#ifndef DT_ABI_H
#define DT_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <linux/ioctl.h>

#include <dev/dt/dtvar.h>

enum dt_abi {
	DT_ABI_1_48 = 0,	/* dt_dev.c 1.48 / dtvar.h 1.24: dtvar.h */
	DT_ABI_1_14,		/* dt_dev.c 1.14: dtvar-1.14.h */
};

#define DT14_MAXCOMLEN		17	/* MAXCOMLEN + 1 then */
#define DT14_READMAX		32	/* 1.14 copied through a 2 x 16 queue */
#define DT14_HZ			100	/* OpenBSD amd64's hz: rate 1..hz */

struct dt14_evt {
	unsigned int		dtev_pbn;
	unsigned int		dtev_cpu;
	pid_t			dtev_pid;
	pid_t			dtev_tid;
	struct timespec		dtev_tsp;
	struct stacktrace	dtev_kstack;
	char			dtev_comm[DT14_MAXCOMLEN];
	long			dt14_args[DTMAXFUNCARGS]; /* dtev_args, retval */
};

/* The in-kernel filter of a probe: dtf_operand, dtf_variable. */
#define DT14_OP_NONE	0
#define DT14_OP_EQ	1
#define DT14_OP_NE	2
#define DT14_FV_NONE	0
#define DT14_FV_PID	1
#define DT14_FV_TID	2

struct dt14_filter {
	uint32_t	dtf_operand;	/* enum dt_operand: an int */
	uint32_t	dtf_variable;	/* enum dt_filtervar */
	uint32_t	dtf_value;	/* pid or tid */
};

struct dt14_req {
	uint32_t		dtrq_pbn;
	struct dt14_filter	dtrq_filter;
	uint32_t		dtrq_rate;	/* Hz, profile/interval */
	uint64_t		dtrq_evtflags;
};

struct dt14_stat {
	uint64_t	dtst_readevt;
	uint64_t	dtst_dropevt;
};

/* Linux encoding; DTIOC_OPENBSD() gives OpenBSD's. */
#define DT14IOCGSTATS		_IOR('D', 2, struct dt14_stat)
#define DT14IOCPRBENABLE	_IOW('D', 4, struct dt14_req)

_Static_assert(sizeof(struct dt14_evt) == 296, "1.14 dt_evt");
_Static_assert(offsetof(struct dt14_evt, dtev_comm) == 192, "1.14 comm");
_Static_assert(offsetof(struct dt14_evt, dt14_args) == 216, "1.14 args");
_Static_assert(sizeof(struct dt14_req) == 32, "1.14 dtioc_req");
_Static_assert(offsetof(struct dt14_req, dtrq_rate) == 16, "1.14 rate");
_Static_assert(offsetof(struct dt14_req, dtrq_evtflags) == 24, "1.14 flags");
_Static_assert(sizeof(struct dt14_stat) == 16, "1.14 dtioc_stat");
_Static_assert(DT14IOCGSTATS == 0x80104402UL, "1.14 GSTATS");
_Static_assert(DTIOC_OPENBSD(DT14IOCGSTATS) == 0x40104402UL, "GSTATS bsd");
_Static_assert(DTIOC_OPENBSD(DT14IOCPRBENABLE) == 0x80204404UL, "ENABLE bsd");

#endif /* DT_ABI_H */
