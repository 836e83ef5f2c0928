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
 * btrace -c's process tree, between its table (bt_ptree.c) and the
 * process connector that feeds it (bt_ptree_cn.c).
 *
 * Locking: pt_mtx covers the table, the shell's state, the loss counts
 * and the connector socket's reads.  Two threads take it: the main one
 * (ptree_*() of btrace.h) and the connector's drain thread.  Whoever
 * holds it reads the socket, to its end or to the first announcement
 * made after it began, before it lets go, so the announcements are
 * taken in the kernel's order, and a main thread that drained under the
 * lock knows every fork made before it did.
 */
#ifndef BT_PTREE_H
#define BT_PTREE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

extern pthread_mutex_t	 pt_mtx;

/* bt_ptree.c, pt_mtx held: what the connector announces. */
void		 pt_fork(pid_t, pid_t, uint64_t);
void		 pt_exec(pid_t, uint64_t);
void		 pt_overflow(void);

/* bt_ptree_cn.c */
int		 pt_cn_open(void);
size_t		 pt_cn_drain(void);	/* pt_mtx held */
int		 pt_cn_start(void);
void		 pt_cn_stop(void);

#endif /* BT_PTREE_H */
