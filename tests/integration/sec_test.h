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
 * What sec_test.c and sec_test2.c to sec_test5.c share: the throwaway user, dtd's
 * path, running a function as the user, a tracee's hello as the user,
 * and the modes of sec_test2.c.
 */
#ifndef SEC_TEST_H
#define SEC_TEST_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "dtt.h"
#include "syscall_util.h"

extern struct dtt_user	 sec_user;
extern const char	*sec_dtd;
extern uint32_t		 sec_nsys;	/* syscall probes, as a tracee says */

/*
 * Run fn(arg) in a child that became sec_user: what it returns (an errno
 * value, 0 for success) comes back as the exit status; -1 if the child
 * could not drop root or died.
 */
int	as_user(int (*fn)(void *), void *arg);
/* A tracee's hello as the user on sock of dtd dd (sets sec_nsys). */
int	user_hello_fork(const struct dtt_dtd *dd, const char *sock);

/*
 * A private dtd recording getpid's entry with comm, and the device open:
 * sets sec_nsys, sec_getpid and sec_getpid_pbn.  The open descriptor, or
 * -1.
 */
int	getpid_dtd(struct dtt_dtd *dd);
/* Its end: kills the case's tracee (if > 0), then st_teardown(). */
void	getpid_dtd_end(struct dtt_dtd *dd, int fd, pid_t tracee);
/* Close those of the n descriptors at fds that are not -1. */
void	close_fds(const int *fds, int n);
/*
 * Commit a valid sec_getpid record claiming tid and comm at ticket t; in
 * any order of tickets (rh_head only rises).
 */
struct udt_ring_hdr;
extern uint32_t	sec_getpid;	/* getpid's entry, provider-local */
extern uint32_t	sec_getpid_pbn;	/* and its probe number */
void	commit_rec(struct udt_ring_hdr *rh, uint32_t nslots, uint64_t t,
	    pid_t tid, const char *comm);
/* The comm of pid, or "". */
void	comm_of(pid_t pid, char *buf, size_t len);

void	run_opens(void);
void	run_memory(void);
void	run_readers(void);
void	run_setuid(void);
void	run_exec(void);
void	run_names(void);
void	run_mapsmem(void);
void	run_pidreuse(void);

#endif /* SEC_TEST_H */
