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
 * Helpers shared by the syscall provider's integration and fuzz tests:
 * a private dtd on a temporary device and ingest socket, the device's
 * ioctls, reads under a watchdog, and dtd's ingestion counters.  Every
 * helper prints why it failed and returns an error; none exits.
 * Single-threaded use.
 */
#ifndef SYSCALL_UTIL_H
#define SYSCALL_UTIL_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

struct st_dtd {
	char	 sd_dir[64];		/* temporary directory */
	char	 sd_dev[96];		/* device file */
	char	 sd_sock[96];		/* ingest socket */
	pid_t	 sd_pid;		/* 0: not running */
};

/* Failures so far; st_check() counts and prints. */
extern unsigned int	st_nfail, st_npass;
bool	st_check(bool, const char *, ...) __attribute__((format(printf, 2, 3)));

/* A fresh temporary directory for dev and socket. */
int	st_setup(struct st_dtd *);
/* Start dtd on sd_dev (suffix picks another device file) and sd_sock. */
int	st_dtd_start(struct st_dtd *, const char *dtd, const char *devname,
	    const char *extra);
/* SIGTERM (or sig) and waitpid; returns the wait status. */
int	st_dtd_stop(struct st_dtd *, int sig);
/* Unmount what a killed dtd left at the device path, remove the tree. */
void	st_cleanup(struct st_dtd *);

/* The probe list; pbn of syscall:func:name or 0. */
struct dtioc_probe_info *st_plist(int fd, size_t *n);
uint32_t	st_pbn(const struct dtioc_probe_info *, size_t,
		    const char *prov, const char *func, const char *name);
int	st_enable(int fd, uint32_t pbn, uint64_t flags);
int	st_record(int fd, int on);
int	st_stats(int fd, struct dtioc_stat *);

/* dtd's ingestion counters through the socket; 0 or -1. */
int	st_ingest_stats(const char *sock, struct udt_stats *);

/*
 * read(2) once, with a watchdog of ms: records read (>= 0), or -1 with
 * the reason printed (EINTR from the watchdog is "timed out").
 */
long	st_read(int fd, struct dt_evt *, size_t max, unsigned int ms);

/* fork+exec argv with stdin/stdout on the given fds (-1: inherit). */
pid_t	st_spawn(char *const argv[], int in, int out);

#endif /* SYSCALL_UTIL_H */
