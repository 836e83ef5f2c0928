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
 * busy: a demo workload for profiles and syscall traces.  For the given
 * number of seconds it alternates between three kinds of work, so a
 * profile has a shape to show: arithmetic in a deep call chain, hashing
 * a buffer, and small reads and writes through a pipe.  With -c, seconds
 * of its own CPU time, not the clock's: a profile of it then holds as
 * many samples on a busy machine as on an idle one.  Built with frame
 * pointers so user stacks unwind without DWARF.
 *
 *	busy [-c] [seconds]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t	busy_sink;

static __attribute__((noinline)) int
is_prime(uint64_t n)
{
	uint64_t d;

	if (n < 2)
		return 0;
	for (d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

static __attribute__((noinline)) void
count_primes(uint64_t from, uint64_t to)
{
	uint64_t n, c = 0;

	for (n = from; n < to; n++)
		c += is_prime(n);
	busy_sink += c;
}

static __attribute__((noinline)) void
hash_block(const unsigned char *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	busy_sink += h;
}

static __attribute__((noinline)) void
pipe_traffic(int rfd, int wfd)
{
	char buf[64];
	int i;

	for (i = 0; i < 200; i++) {
		if (write(wfd, "ping", 4) != 4 || read(rfd, buf, sizeof(buf)) < 0)
			exit(1);
	}
}

int
main(int argc, char *argv[])
{
	static unsigned char block[1 << 16];
	struct timespec now, end;
	clockid_t clk = CLOCK_MONOTONIC;
	int fds[2];
	uint64_t round = 0;

	if (pipe(fds) == -1) {
		perror("pipe");
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "-c") == 0) {
		clk = CLOCK_PROCESS_CPUTIME_ID;
		argc--;
		argv++;
	}
	clock_gettime(clk, &end);
	end.tv_sec += argc > 1 ? atoi(argv[1]) : 2;
	do {
		count_primes(round * 2000, round * 2000 + 4000);
		hash_block(block, sizeof(block));
		pipe_traffic(fds[0], fds[1]);
		round++;
		clock_gettime(clk, &now);
	} while (now.tv_sec < end.tv_sec ||
	    (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	printf("busy: %ju rounds\n", (uintmax_t)round);
	return 0;
}
