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
 * Shared by the profile provider's integration tests: a dtd of our own
 * on a temporary device path, the device calls, and kallsyms lookups.
 * Single-threaded except collect(), which reads each open on its own
 * thread.
 */
#ifndef PROFILE_ITEST_H
#define PROFILE_ITEST_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

#define NSEC_PER_SEC	1000000000ULL
#define PT_PATHMAX	64

extern const char	*pt_dtd;	/* dtd binary */
extern char		 pt_dir[PT_PATHMAX - 16];	/* our temporary dir */
extern char		 pt_dev[PT_PATHMAX];	/* device path in it */
extern char		 pt_ksyms[PT_PATHMAX];	/* ksyms path in it */

bool	check(bool ok, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	pt_done(void);		/* summary line; exit status */

/*
 * Start dtd (FUSE-file front end, our device and ksyms paths, extra
 * options) and wait for its ready line.  Returns its pid, or -1 with its
 * stderr in errbuf when it exited instead.
 */
pid_t	pt_start_dtd(const char *extra, char *errbuf, size_t errlen);
/* SIGTERM and reap; true when it exited 0 in time. */
bool	pt_stop_dtd(pid_t);

/* open, find profile:hz:97, enable, record; -1 or 0 and a check line. */
int	pt_open(void);
uint32_t pt_profile_pbn(int fd);
int	pt_enable(int fd, uint32_t pbn, uint64_t flags, uint64_t nsecs);
int	pt_record(int fd, int on);

/* Events of one open over one window. */
struct pt_evs {
	struct dt_evt	*pe_evs;
	size_t		 pe_n;
	size_t		 pe_cap;
};

/*
 * Read every open in fds until the realtime deadline on a thread each
 * (a recording profile open always has events coming, so the last read
 * ends soon after).  Returns 0 or an errno.
 */
int	pt_collect(const int *fds, struct pt_evs *out, int n,
	    uint64_t deadline);

uint64_t	pt_realtime(void);
uint64_t	pt_evt_ns(const struct dt_evt *);

/* /proc/kallsyms text symbols, sorted by address. */
struct pt_ksym {
	uint64_t	 pk_addr;
	char		*pk_name;
	bool		 pk_module;
};
struct pt_ksym	*pt_kallsyms(size_t *n);
/* The text symbol at or below pc, NULL if none. */
const struct pt_ksym *pt_ksym_lookup(const struct pt_ksym *, size_t,
	    uint64_t pc);

/* CPU time pid has run, in ns (/proc/PID/schedstat); 0 if unknown. */
uint64_t	pt_cpu_ns(pid_t);

/* Run a child with stdout on a pipe; pid, and its stdout in *outfd. */
pid_t	pt_spawn(char *const argv[], int *outfd);

#endif /* PROFILE_ITEST_H */
