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
 * syscall_util's part that needs the syscall table: the tests link it,
 * the benchmarks, which compile syscall_util.c themselves, do not.
 */
#include <err.h>
#include <stdio.h>

#include "dtt.h"
#include "syscall_util.h"
#include "systab.h"

int
st_enable_linux(int fd, const struct dtioc_probe_info *pi, size_t npi,
    int nr, const char *name, int flags, uint32_t *pbnp)
{
	const struct systab_ent *se = systab_by_linux(nr);
	char pname[16];

	*pbnp = 0;
	if (se != NULL) {
		snprintf(pname, sizeof(pname), "sys%%%u", se->se_num);
		*pbnp = dtt_pbn(pi, npi, "syscall", pname, "entry");
	}
	if (!dtt_check(*pbnp != 0, "%s has a probe", name))
		return -1;
	if (dtt_enable(fd, *pbnp, flags, 0) || dtt_enable(fd, *pbnp + 1, 0, 0)) {
		warn("enable %s", name);
		return -1;
	}
	return 0;
}
