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
 * Whether an exec was a secure one (AT_SECURE), from the auxiliary
 * vector the kernel saved for it (/proc/PID/auxv): dtd's judgement of a
 * held image (daemon/sys/dt_proc.c) and the launcher's helper's
 * (udt_karmq.c) must not disagree, so both read it through this one
 * parser, with the one bound.  Header-only, as udt_userdir.h.
 *
 * The vector is a few dozen pairs of words (type, value) ending with
 * AT_NULL, the words of the process's own class: a compat (i386, x32)
 * process's are 32-bit, and read as 64-bit words its pair
 * (AT_SECURE, 0) would say secure.  The class is told from the vector
 * itself: every ELF exec puts AT_PHENT, the size of the image's program
 * headers, which is sizeof(Elf64_Phdr) only in a 64-bit vector (a
 * 32-bit pair is one 64-bit word, and (AT_PHENT, 0) is no pair a
 * kernel makes).  Anything else cannot be told, and is neither secure
 * nor not.
 */
#ifndef USERDT_UDT_AUXV_H
#define USERDT_UDT_AUXV_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 256 pairs hold any vector the kernel makes (AT_VECTOR_SIZE is far
 * less): a longer one is not one to believe.  A reader's buffer is
 * UDT_AUXV_WORDS long, one word more than those pairs, so that a read
 * that fills it tells the longer vector from the whole.
 */
#define UDT_AUXV_PAIRS	256
#define UDT_AUXV_WORDS	(2 * UDT_AUXV_PAIRS + 1)

/*
 * The len bytes of a vector read whole at v: 1 secure, 0 not, -1
 * cannot tell (not a 64-bit process's, no AT_NULL or AT_SECURE, or
 * longer than UDT_AUXV_PAIRS pairs).  Pure: any thread.
 */
static inline int
udt_auxv_secure(const uint64_t *v, size_t len)
{
	size_t i, n = len / sizeof(v[0]);
	int secure = -1, wide = 0;

	if (n > 2 * UDT_AUXV_PAIRS)
		return -1;
	for (i = 0; i + 1 < n; i += 2) {
		if (v[i] == AT_NULL)
			return wide ? secure : -1;
		if (v[i] == AT_PHENT)
			wide = v[i + 1] == sizeof(Elf64_Phdr);
		else if (v[i] == AT_SECURE)
			secure = v[i + 1] != 0;
	}
	return -1;	/* no AT_NULL: cut short */
}

#endif /* USERDT_UDT_AUXV_H */
