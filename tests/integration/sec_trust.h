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
 * What sec_trust.c and sec_trust_squat.c share: the throwaway user who
 * is the victim or attacker, dtd's path, small file helpers and the
 * squat mode.
 */
#ifndef SEC_TRUST_H
#define SEC_TRUST_H

#include <stddef.h>

#include "dtt.h"

extern struct dtt_user	 st_user;	/* each mode's ordinary user */
extern const char	*st_dtd;

/* Copy src to dst, mode 0755: 0 or -1. */
int	copy_file(const char *src, const char *dst);
/* How many lines of file path hold what. */
int	count_lines(const char *path, const char *what);
/* The first line of path that holds what, into buf ("" if none). */
void	find_line(const char *path, const char *what, char *buf,
	    size_t len);

/* squat (sec_trust_squat.c): ARGS DTRUN PRELOAD. */
void	run_squat(const char *dtrun, const char *preload);

#endif /* SEC_TRUST_H */
