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
 * The string area of an event (DTEVT_STRINGS, dtvar.h), read and laid
 * out the same by the preload library's hooks (udt_record.c), from its
 * own process, and by the launcher for the loader's calls (udt_ltrace.c),
 * from its tracee.  No state, no errno, one raw system call a string:
 * any context.
 */
#ifndef UDT_STR_H
#define UDT_STR_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "systab.h"
#include "udt_sys.h"

/* Bytes to read for one string: room for it alone and one to see its end. */
#define UDT_STR_WANT	(UDT_STR_SIZE - DTEV_STR_HDR)

/* One string argument as read: si_got bytes of si_buf are the process's. */
struct udt_str_in {
	unsigned int	si_arg;			/* argument number */
	size_t		si_got;			/* <= UDT_STR_WANT */
	unsigned char	si_buf[UDT_STR_SIZE];
};

/*
 * Fill area (UDT_STR_SIZE bytes, zeroed) with n (<= 3) strings: the
 * space shared so that strings shorter than an equal share keep all of
 * theirs and the longer ones split the rest.  A string with no NUL in
 * what was read is cut (all UDT_STR_WANT bytes were readable) or
 * unreadable past its bytes (the read stopped early).
 */
static inline void
udt_str_pack(const struct udt_str_in *in, unsigned int n,
    unsigned char *area)
{
	size_t len[3], cap, budget;
	unsigned int flags[3], i;
	unsigned char *p = area;
	size_t k;
	int changed;

	if (n == 0)
		return;
	for (i = 0; i < n; i++) {
		len[i] = 0;
		while (len[i] < in[i].si_got && in[i].si_buf[len[i]] != '\0')
			len[i]++;
		if (len[i] < in[i].si_got)
			flags[i] = 0;
		else if (in[i].si_got == UDT_STR_WANT)
			flags[i] = DTEV_STR_TRUNC;
		else
			flags[i] = DTEV_STR_FAULT;
	}
	/* Each entry: header, bytes, NUL; shares of what is left. */
	budget = UDT_STR_SIZE - n * (DTEV_STR_HDR + 1);
	cap = budget / n;
	do {
		size_t b = budget, k = n;

		changed = 0;
		for (i = 0; i < n; i++)
			if (len[i] < cap) {
				b -= len[i];
				k--;
			}
		if (k > 0 && b / k != cap) {
			cap = b / k;
			changed = 1;
		}
	} while (changed);
	for (i = 0; i < n; i++) {
		if (len[i] > cap) {
			len[i] = cap;
			flags[i] = DTEV_STR_TRUNC;
		}
		p[0] = (unsigned char)((in[i].si_arg + 1) | flags[i]);
		p[1] = (unsigned char)len[i];
		/*
		 * Not memcpy(), which a variable length makes libc's: it
		 * uses vector registers a rewritten site must give back as
		 * they were (udt_xstate.c).  The empty asm keeps the
		 * compiler from making the loop that call.
		 */
		for (k = 0; k < len[i]; k++) {
			p[DTEV_STR_HDR + k] = in[i].si_buf[k];
			__asm__ volatile("");
		}
		p[DTEV_STR_HDR + len[i]] = '\0';
		p += DTEV_STR_HDR + len[i] + 1;
	}
}

/*
 * Up to want bytes at address a of process pid (any of its threads),
 * without ever faulting: process_vm_readv() reads what is mapped and
 * readable and stops at the first byte that is not, where a plain load
 * would kill the program.  Split at the page boundary, so a string that
 * ends on a readable page before an unmapped one is read whole.  Returns
 * the bytes read (0 for a bad pointer).
 */
static inline size_t
udt_str_peek(int pid, uintptr_t a, unsigned char *buf, size_t want)
{
	struct iovec local, remote[2];
	uintptr_t edge = (a | 4095) + 1;
	unsigned long n = 1;
	long r;

	if (a < 4096 || a + want < a)
		return 0;
	local.iov_base = buf;
	local.iov_len = want;
	remote[0].iov_base = (void *)a;
	remote[0].iov_len = want;
	if (a + want > edge) {
		remote[0].iov_len = edge - a;
		remote[1].iov_base = (void *)edge;
		remote[1].iov_len = a + want - edge;
		n = 2;
	}
	r = udt_sys6(SYS_process_vm_readv, pid, (long)&local, 1,
	    (long)remote, (long)n, 0);
	return r > 0 ? (size_t)r : 0;
}

/*
 * Fill area (UDT_STR_SIZE bytes, zeroed) with the string arguments args
 * of systab entry se, read from process pid: each once with room for
 * the whole area, then packed.  Returns the number of strings.
 */
static inline unsigned int
udt_str_read(int pid, const struct systab_ent *se, const long *args,
    unsigned char *area)
{
	struct udt_str_in in[3];
	unsigned int n = 0, a;

	for (a = 0; a < se->se_nargs && n < 3; a++) {
		if (!(se->se_strargs & (1u << a)))
			continue;
		in[n].si_arg = a;
		in[n].si_got = udt_str_peek(pid, (uintptr_t)args[a],
		    in[n].si_buf, UDT_STR_WANT);
		n++;
	}
	udt_str_pack(in, n, area);
	return n;
}

#endif /* UDT_STR_H */
