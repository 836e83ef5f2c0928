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
 * User stacks without the tracer: see dt_untrace.h.
 */
#include <sys/types.h>
#include <sys/uio.h>

#include <stdint.h>
#include <string.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "dt_pidmaps.h"
#include "dt_untrace.h"

/* Whether m is the preload library's text, by its file name. */
static int
dt_untrace_lib(const struct dt_pm_map *m)
{
	const char *b;

	if (m == NULL || m->pm_path == NULL)
		return 0;
	b = strrchr(m->pm_path, '/');
	b = b != NULL ? b + 1 : m->pm_path;
	return strncmp(b, UDT_LIB_PREFIX, sizeof(UDT_LIB_PREFIX) - 1) == 0;
}

/* len bytes of pid's memory at va into buf: how many could be read. */
static size_t
dt_untrace_read(pid_t pid, uint64_t va, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)va, len };
	ssize_t n;

	n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	return n > 0 ? (size_t)n : 0;
}

/*
 * The site of the trampoline of pid that holds pc, or 0: the nearest
 * header below pc, 8-byte aligned, within a trampoline's length.  The
 * bytes below pc are read in two pieces, pc's page first, so that a
 * trampoline at the start of its mapping is found without reading the
 * unmapped page below.
 */
static uint64_t
dt_untrace_site(pid_t pid, uint64_t pc)
{
	uint64_t buf[(UDT_TRAMP_MAX + UDT_TRAMP_HDR) / 8 + 1];
	uint64_t top = pc & ~(uint64_t)7, lo, page = pc & ~(uint64_t)4095;
	uint64_t from, w[2];
	size_t n, i;

	lo = top - sizeof(buf);
	if (pc < sizeof(buf) + 4096)
		return 0;
	/* The part in pc's page, then the rest, if the first had none. */
	for (from = lo > page ? lo : page; ; from = lo) {
		n = dt_untrace_read(pid, from, (char *)buf + (from - lo),
		    top - from) / 8;
		for (i = n; i-- > 1; ) {
			w[0] = buf[(from - lo) / 8 + i - 1];
			w[1] = buf[(from - lo) / 8 + i];
			if (w[0] == UDT_TRAMP_MAGIC && w[1] != 0 &&
			    pc - (from + 8 * (i + 1)) < UDT_TRAMP_MAX)
				return w[1];
		}
		if (from == lo || n * 8 != top - from)
			return 0;
		/* The header may straddle the page boundary: read again. */
	}
}

void
dt_ustack_untrace(pid_t pid, struct stacktrace *st)
{
	const struct dt_pm_map *m;
	struct dt_pm_snap *s;
	unsigned int i = 0, k;
	uint64_t site;

	if (st->st_count == 0 || (s = dt_pm_cached(pid)) == NULL)
		return;
	/* The library's frames, from the leaf down. */
	while (i < st->st_count &&
	    dt_untrace_lib(dt_pm_find(s, st->st_pc[i])))
		i++;
	/*
	 * A trampoline (anonymous code, or code mapped since the snapshot)
	 * stands for its site.  A frame of the library's entry is followed by
	 * its site already.
	 */
	if (i < st->st_count && ((m = dt_pm_find(s, st->st_pc[i])) == NULL ||
	    m->pm_path == NULL) &&
	    (site = dt_untrace_site(pid, st->st_pc[i])) != 0)
		st->st_pc[i] = site;
	dt_pm_put(s);
	if (i == 0)
		return;
	for (k = 0; i < st->st_count; )
		st->st_pc[k++] = st->st_pc[i++];
	for (i = k; i < st->st_count; i++)
		st->st_pc[i] = 0;
	st->st_count = k;
}
