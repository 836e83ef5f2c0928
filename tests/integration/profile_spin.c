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
 * The target of the profile tests, built with frame pointers so a user
 * stack walk sees its frames:
 *   profile_spin spin SECS	spin in profile_spin_here() in user mode
 *   profile_spin syscall SECS	read /dev/zero in a loop, mostly in kernel
 *   profile_spin family SECS	spin in profile_spin_here() in short-lived
 *				threads (one leaves by pthread_exit) and
 *				fork children, 50 ms of CPU time each
 * Prints the run-time address of profile_spin_here and main on stdout
 * ("<spin> <main>\n") once it runs, so the harness can relocate the
 * symbols it reads from this file.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long	profile_spin_sink;

__attribute__((noinline)) void
profile_spin_here(void)
{
	unsigned long i;

	for (i = 0; i < 10000000UL; i++)
		profile_spin_sink += i;
}

static char	zbuf[1 << 20];

#define FAMILY_NS	50000000L	/* CPU time of each thread, child */

/* Spin in profile_spin_here() until this thread ran ns of CPU time. */
static void
spin_cpu(long ns)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		profile_spin_here();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
	    (t.tv_nsec - t0.tv_nsec) < ns);
}

static void *
family_thread(void *arg)
{
	spin_cpu(FAMILY_NS);
	if (arg != NULL)
		pthread_exit(NULL);
	return NULL;
}

/* One round: two threads and a fork child.  0, or 1 on a failure. */
static int
family_round(void)
{
	pthread_t t[2];
	pid_t pid;
	int status, i;

	for (i = 0; i < 2; i++)
		if ((errno = pthread_create(&t[i], NULL, family_thread,
		    i == 1 ? &t[i] : NULL)) != 0) {
			perror("pthread_create");
			return 1;
		}
	if ((pid = fork()) == -1) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		spin_cpu(FAMILY_NS);
		_exit(0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "profile_spin: child %d: status %#x\n",
		    (int)pid, status);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct timespec now, end;
	int fd = -1;

	if (argc != 3 || (strcmp(argv[1], "spin") != 0 &&
	    strcmp(argv[1], "syscall") != 0 &&
	    strcmp(argv[1], "family") != 0)) {
		fprintf(stderr, "usage: profile_spin spin|syscall|family "
		    "seconds\n");
		return 2;
	}
	if (strcmp(argv[1], "syscall") == 0 &&
	    (fd = open("/dev/zero", O_RDONLY)) == -1) {
		perror("/dev/zero");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += atoi(argv[2]);
	printf("%#lx %#lx\n", (unsigned long)(uintptr_t)profile_spin_here,
	    (unsigned long)(uintptr_t)main);
	fflush(stdout);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec &&
		    now.tv_nsec >= end.tv_nsec))
			break;
		if (strcmp(argv[1], "family") == 0) {
			if (family_round() != 0)
				return 1;
		} else if (fd == -1)
			profile_spin_here();
		else if (read(fd, zbuf, sizeof(zbuf)) == -1) {
			perror("read");
			return 1;
		}
	}
	return 0;
}
