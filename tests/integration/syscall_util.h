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
 * What the syscall provider's tests, fuzzer and benchmark need beyond
 * tests/lib/dtt.h: dtd's ingestion counters, which only a client of the
 * ingest protocol (userdt/udt_wire.h) can ask for.
 */
#ifndef SYSCALL_UTIL_H
#define SYSCALL_UTIL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <userdt/udt_wire.h>

/*
 * dtd's ingestion counters through its ingest socket sock; 0 or -1.
 * Any caller, any thread.
 */
int	st_ingest_stats(const char *sock, struct udt_stats *);

struct dtt_dtd;
struct dtioc_probe_info;

/*
 * Start of a test: a private dtd (its directory named after name, no
 * kernel symbols, the library's processes alone, then the options in
 * extra, up to 6, NULL-terminated, or NULL),
 * the device opened into *fdp, its probe list into *pip and *npip.  0,
 * or -1 after a failed check, with what was made left for st_teardown().
 * Main thread.
 */
int	st_setup(struct dtt_dtd *, const char *name, const char *dtd,
	    char *const extra[], int *fdp, struct dtioc_probe_info **pip,
	    size_t *npip);

/*
 * Start argv with its stdout on a pipe: the pipe's read end as a stream
 * (the program exits once the caller has read it all and closed it), its
 * pid in *pidp; NULL on failure.  Main thread.
 */
FILE	*st_spawn_out(char *const argv[], pid_t *pidp);

/*
 * The entry probe of Linux system call nr (the OpenBSD-named sys%N it
 * maps to), checked to exist ("NAME has a probe"), enabled with flags,
 * and its return probe with none.  0 with its pbn in *pbnp; -1 when it
 * has none (*pbnp 0) or cannot be enabled (warned).  Main thread.
 * In syscall_probe.c: the tests have it, the benchmarks do not.
 */
int	st_enable_linux(int fd, const struct dtioc_probe_info *, size_t npi,
	    int nr, const char *name, int flags, uint32_t *pbnp);

/*
 * End of a test: close the device (fd may be -1), stop dtd by pid and
 * check it exited 0 ("dtd stopped"), remove its temporary directory.
 * Main thread.
 */
void	st_teardown(struct dtt_dtd *, int fd);

#endif /* SYSCALL_UTIL_H */
