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
 * qsort_spin [seconds]: sort again and again for at most seconds (10)
 * with a comparison that spins, so that a profile's samples land in
 * cmp() called by glibc's internal msort_with_tmp(), a static function
 * only libc's separate debug file names.  Built with frame pointers, so
 * perf's walk finds cmp()'s caller; built stripped too (qsort_spin_s),
 * for frames no symbol covers.
 */
#include <stdlib.h>
#include <time.h>

#define N	64

static volatile unsigned long sink;

static int
cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	unsigned long i;

	for (i = 0; i < 20000; i++)
		sink++;
	return (x > y) - (x < y);
}

int
main(int argc, char *argv[])
{
	time_t until = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
	int v[N], i;

	while (time(NULL) < until) {
		for (i = 0; i < N; i++)
			v[i] = (i * 7919) % N;
		qsort(v, N, sizeof(v[0]), cmp);
	}
	return 0;
}
