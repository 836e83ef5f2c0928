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
 * What ksysarm_test.c shares with its set-id part (ksysarm_setid.c).
 * The test's one thread.
 */
#ifndef KSYSARM_H
#define KSYSARM_H

#include <stddef.h>

#include "dtt.h"

#define KA_NCALLS	3000

/* The test's own dtd, stopped by its pid. */
extern struct dtt_dtd	 ka_dd;
/* A script counting getppid() by comm. */
extern const char	 ka_count[];

/* btrace -v -d DEV -c cmd -e script: its status; its output in out. */
int		ka_btrace(const char *btrace, const char *cmd,
		    const char *script, char *out, size_t len);
/* How many lines of out hold what. */
unsigned int	ka_lines(const char *out, const char *what);
void		run_setid(const char *btrace, const char *spawn,
		    const char *dyn, const char *lib, const char *st);

#endif /* KSYSARM_H */
