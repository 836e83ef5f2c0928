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
 * dt-itest: checks of dt(4) through a real device file, for dtd's
 * FUSE-file front end on the host and its CUSE front end in the VM.
 * Every check prints one line; main() ends with "N passed, N failed".
 * Single-threaded; a forked child reports its counts back by a pipe.
 */
#ifndef ITEST_H
#define ITEST_H

#include <sys/types.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

#include "dtt.h"	/* dtt_check(), dtt_npass, dtt_done() */

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

struct itest {
	const char	*it_dev;	/* device path */
	pid_t		 it_dtd;	/* dtd's pid, 0: unknown */
	uint32_t	 it_profile;	/* pbn of profile:hz:97 */
	uint32_t	 it_interval;	/* pbn of interval:hz:1 */
	uint32_t	 it_nprobes;
};

/* ioctl(2) with cmd in the OpenBSD encoding if bsd: 0 or errno. */
int	dtioc(int fd, unsigned long cmd, void *arg, bool bsd);
const char *encname(bool bsd);

/* open(2) O_RDONLY of the device, with a check line on failure. */
int	itest_open(const struct itest *);

/* The probe list in a malloc'd buffer (two-step GPLIST); NULL on error. */
struct dtioc_probe_info *itest_plist(int fd, bool bsd, size_t *n);

/*
 * SIGALRM after ms milliseconds, with a handler without SA_RESTART, so a
 * blocked read(2) ends with EINTR: the watchdog of every blocking read
 * and the signal of the EINTR check.  disarm() cancels it.
 */
void	arm(unsigned int ms);
void	disarm(void);
extern volatile sig_atomic_t	itest_alarms;

/*
 * Read until at least want records arrived, each read(2) of bufsz
 * bytes, under a watchdog of ms: returns the number of records copied
 * into evs (at most max), or -errno of the failing read.
 */
long	read_events(int fd, struct dt_evt *evs, size_t max, size_t want,
	    size_t bufsz, unsigned int ms);

/* The checks, one file per concern. */
void	itest_seq(struct itest *, bool bsd);		/* itest_seq.c */
void	itest_errors(struct itest *, bool bsd);		/* itest_err.c */
void	itest_badptr(struct itest *, bool bsd);
void	itest_rdvnode(struct itest *, bool bsd);
void	itest_concurrent(struct itest *);		/* itest_conc.c */
void	itest_eintr(struct itest *);
void	itest_thread(struct itest *);
void	itest_bigread(struct itest *);
void	itest_poll(struct itest *);
void	itest_stopcont(struct itest *);			/* itest_stop.c */
void	itest_unpriv(struct itest *);			/* itest_priv.c */
void	itest_ring16(struct itest *);			/* itest_conc.c */
int	itest_block_read(const char *);

#endif /* ITEST_H */
