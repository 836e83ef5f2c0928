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
 * Look-ups over the generated table.  The table is small (a few hundred
 * entries) and sorted by N, so a binary search by number and a linear
 * scan by name are enough for every caller (probe registration once,
 * btrace once per probe name).
 */
#include <stddef.h>
#include <string.h>

#include "systab.h"

const struct systab_ent *
systab_by_num(unsigned int num)
{
	size_t lo = 0, hi = SYSTAB_COUNT;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (systab[mid].se_num == num)
			return &systab[mid];
		if (systab[mid].se_num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct systab_ent *
systab_by_linux(long nr)
{
	if (nr < 0 || nr >= SYSTAB_LINUX_MAX || systab_linux_index[nr] < 0)
		return NULL;
	return &systab[systab_linux_index[nr]];
}

const char *
systab_name(unsigned int num)
{
	const struct systab_ent *se = systab_by_num(num);

	return se != NULL ? se->se_name : NULL;
}

int
systab_lookup(const char *name)
{
	size_t i;

	if (name == NULL)
		return -1;
	for (i = 0; i < SYSTAB_COUNT; i++)
		if (strcmp(systab[i].se_name, name) == 0)
			return systab[i].se_num;
	for (i = 0; i < SYSTAB_COUNT; i++)
		if (strcmp(systab[i].se_linux_name, name) == 0)
			return systab[i].se_num;
	return -1;
}
