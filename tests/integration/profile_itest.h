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
 * Shared by the profile provider's integration tests and its benchmark,
 * next to tests/lib/dtt.h (checks, a private dtd, the device's ioctls):
 * reading several opens at once, event times, kallsyms lookups and a
 * task's CPU time.  Single-threaded except pt_collect(), which reads
 * each open on its own thread.
 */
#ifndef PROFILE_ITEST_H
#define PROFILE_ITEST_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

#define NSEC_PER_SEC	1000000000ULL

/* Events of one open over one window. */
struct pt_evs {
	struct dt_evt	*pe_evs;
	size_t		 pe_n;
	size_t		 pe_cap;
};

/*
 * Read every open in fds until the realtime deadline on a thread each
 * (a recording profile open always has events coming, so the last read
 * ends soon after).  Returns 0 or an errno.
 */
int	pt_collect(const int *fds, struct pt_evs *out, int n,
	    uint64_t deadline);

uint64_t	pt_evt_ns(const struct dt_evt *);

/* /proc/kallsyms text symbols, sorted by address. */
struct pt_ksym {
	uint64_t	 pk_addr;
	char		*pk_name;
	bool		 pk_module;
};
struct pt_ksym	*pt_kallsyms(size_t *n);
/* The text symbol at or below pc, NULL if none. */
const struct pt_ksym *pt_ksym_lookup(const struct pt_ksym *, size_t,
	    uint64_t pc);

/*
 * st_value and st_size of the function name in the ELF file path (its
 * .symtab); 0, or -1 when the file or the symbol is not there.
 */
int	pt_elf_func(const char *path, const char *name, uint64_t *val,
	    uint64_t *size);

#endif /* PROFILE_ITEST_H */
