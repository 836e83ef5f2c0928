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
 * The syscall provider's table: every x86-64 Linux system call (those
 * with a glibc wrapper are hooked, the others are seen in all-calls mode
 * and through syscall(3)), under the probe number dtd publishes it as (syscall:sys%N:...).
 * N is the OpenBSD number of the call with the same name or meaning, or
 * 1024 + the Linux number for Linux-only calls (design decision 5); the
 * data and every mapping decision live in syscalls.tsv.
 *
 * Shared by dtd (probe registration), the preload library (hooks) and
 * btrace (names).  Everything here is immutable: callable from any
 * thread, any context, including signal handlers.
 */
#ifndef SYSTAB_H
#define SYSTAB_H

#include <stddef.h>

#include "systab_count.h"	/* SYSTAB_COUNT, generated */

#define SYSTAB_LINUX_ONLY	1024	/* N = 1024 + Linux number */
#define SYSTAB_LINUX_MAX	512	/* Linux numbers are below this */
#define SYSTAB_NAMESIZE		24	/* a name's longest, and its NUL */

struct systab_ent {
	unsigned short	 se_num;	/* N: probe is sys%N */
	unsigned short	 se_linux;	/* x86-64 system call number */
	unsigned char	 se_nargs;	/* arguments of the wrapper */
	char		 se_ret;	/* 'i' 'u' 'l' 'n' 'v', see tsv */
	unsigned char	 se_strargs;	/* bit n: argument n is a C string */
	/*
	 * Names held, not pointed at: a table of pointers is relocated,
	 * so written, by the loader in every traced process (three pages,
	 * a fault each), where this one is shared read-only text.
	 */
	char		 se_name[SYSTAB_NAMESIZE];	/* OpenBSD's, or Linux's */
	char		 se_linux_name[SYSTAB_NAMESIZE];	/* the kernel's */
};

/* Sorted by se_num ascending: index i is the i-th pair of probes. */
extern const struct systab_ent systab[SYSTAB_COUNT];

/* Index into systab[] by Linux number, -1 when not in the table. */
extern const short systab_linux_index[SYSTAB_LINUX_MAX];

/* The entry for probe number N (sys%N), NULL when there is none. */
const struct systab_ent	*systab_by_num(unsigned int);

/* The entry for a Linux system call number, NULL when there is none. */
const struct systab_ent	*systab_by_linux(long);

/* Name of sys%N: OpenBSD's where mapped, else Linux's; NULL if none. */
const char	*systab_name(unsigned int);

/*
 * Probe number of a name: OpenBSD names first (so "exit" is sys%1),
 * then Linux kernel names ("exit_group", "gettid", "pread64").  Returns
 * -1 when neither table knows it.
 */
int	 systab_lookup(const char *);

#endif /* SYSTAB_H */
