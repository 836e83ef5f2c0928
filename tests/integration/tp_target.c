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
 * A workload for the tracepoint tests (tp_test.c), each mode a known
 * count of the kernel events it causes:
 *   tp_target sleep N USEC	N nanosleeps of USEC each
 *   tp_target fork N		N children, each exits at once; prints
 *				their pids, one a line
 *   tp_target fault PAGES	writes to PAGES fresh pages (no huge
 *				pages); prints "ADDR LEN" of the mapping
 *   tp_target bio N FILE	N 4 KB writes to FILE, each to its own
 *				block, past the page cache (O_DIRECT) and
 *				on the disk when it returns (O_DSYNC)
 *   tp_target getppid N	N getppid(2) calls (the syscall probes'
 *				kernel feed, under btrace -c)
 * Exits 0, or 1 with a message when something failed.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	long n, i, pg = sysconf(_SC_PAGESIZE);
	struct timespec ts;
	char *p;
	pid_t pid;

	if (argc < 3)
		goto usage;
	n = atol(argv[2]);
	if (strcmp(argv[1], "sleep") == 0 && argc == 4) {
		ts.tv_sec = 0;
		ts.tv_nsec = atol(argv[3]) * 1000;
		for (i = 0; i < n; i++)
			nanosleep(&ts, NULL);
		return 0;
	}
	if (strcmp(argv[1], "fork") == 0) {
		for (i = 0; i < n; i++) {
			if ((pid = fork()) == -1) {
				perror("fork");
				return 1;
			}
			if (pid == 0)
				_exit(0);
			waitpid(pid, NULL, 0);
			printf("%d\n", (int)pid);
		}
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (strcmp(argv[1], "fault") == 0) {
		p = mmap(NULL, (size_t)(n * pg), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		/* One fault a page, not one per 2 MB. */
		madvise(p, (size_t)(n * pg), MADV_NOHUGEPAGE);
		for (i = 0; i < n; i++)
			p[i * pg] = 1;
		printf("%lx %lx\n", (unsigned long)p,
		    (unsigned long)(n * pg));
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (strcmp(argv[1], "getppid") == 0) {
		for (i = 0; i < n; i++)
			(void)getppid();
		return 0;
	}
	if (strcmp(argv[1], "bio") == 0 && argc == 4) {
		int fd;

		if ((fd = open(argv[3], O_WRONLY | O_CREAT | O_DIRECT |
		    O_DSYNC, 0600)) == -1 ||
		    (p = aligned_alloc(4096, 4096)) == NULL) {
			perror(argv[3]);
			return 1;
		}
		/* Blocks allocated first: the writes are then plain I/O. */
		if (posix_fallocate(fd, 0, n * 4096) != 0) {
			fprintf(stderr, "tp_target: fallocate failed\n");
			return 1;
		}
		memset(p, 'b', 4096);
		for (i = 0; i < n; i++)
			if (pwrite(fd, p, 4096, i * 4096) != 4096) {
				perror("pwrite");
				return 1;
			}
		return close(fd) == 0 ? 0 : 1;
	}
usage:
	fprintf(stderr, "usage: tp_target sleep N USEC | fork N | "
	    "fault PAGES | bio N FILE | getppid N\n");
	return 1;
}
