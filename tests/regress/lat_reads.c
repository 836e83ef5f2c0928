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
 * A traced program for latencies folded at the source: N readv() calls
 * of one byte of /dev/zero, in the first thread and in THREADS more at
 * the same time.  readv(), which neither the loader nor libc's start
 * makes, so a script timing it sees exactly N * (1 + THREADS) calls.
 *
 * With "gate" after THREADS, it first prints its pid and then reads one
 * byte of its standard input with readv(), which a caller holds until
 * it enabled its probes: a call whose entry came before the enable.
 *
 * With "vfork", a vfork child makes N readv() calls first, under a tid
 * of its own on its parent's thread memory, then exits; so 2N calls in
 * all without threads.  With "spawn", a posix_spawn() child (glibc's:
 * a clone that shares its parent's memory) makes LAT_NDUP dup2() calls
 * of its file actions before it execs lat_reads 1; nothing else of it
 * calls dup2().
 *
 * usage: lat_reads N [THREADS [gate | vfork | spawn]]
 */
#include <sys/uio.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#define LAT_NDUP	64		/* spawn: the child's dup2() calls */

extern char **environ;

#define LAT_MAXTHREADS	8

static long	lat_n;
static int	lat_fd;

static void *
lat_loop(void *arg)
{
	struct iovec iov;
	char c;
	long i;

	iov.iov_base = &c;
	iov.iov_len = 1;
	for (i = 0; i < lat_n; i++)
		if (readv(lat_fd, &iov, 1) != 1)
			exit(1);
	return arg;
}

/* N readv()s in a vfork child, which may only _exit() after them. */
static int
lat_vfork(void)
{
	static struct iovec iov;
	static char c;
	static long i;
	int status;
	pid_t pid;

	if ((pid = vfork()) == -1)
		return -1;
	if (pid == 0) {
		iov.iov_base = &c;
		iov.iov_len = 1;
		for (i = 0; i < lat_n; i++)
			if (readv(lat_fd, &iov, 1) != 1)
				_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

/* A posix_spawn() child's dup2()s, then lat_reads 1. */
static int
lat_spawn(const char *self)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { (char *)self, "1", NULL };
	int i, status;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	for (i = 0; i < LAT_NDUP; i++)
		if (posix_spawn_file_actions_adddup2(&fa, lat_fd,
		    100 + i) != 0)
			return -1;
	if (posix_spawn(&pid, self, &fa, NULL, argv, environ) != 0)
		return -1;
	(void)posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

int
main(int argc, char *argv[])
{
	pthread_t th[LAT_MAXTHREADS];
	long i, nth = 0;

	struct iovec iov;
	char c;

	if (argc < 2 || argc > 4 || (lat_n = strtol(argv[1], NULL, 10)) <= 0)
		return 2;
	if (argc >= 3 && ((nth = strtol(argv[2], NULL, 10)) < 0 ||
	    nth > LAT_MAXTHREADS))
		return 2;
	if (argc == 4 && strcmp(argv[3], "vfork") != 0 &&
	    strcmp(argv[3], "spawn") != 0) {
		if (strcmp(argv[3], "gate") != 0)
			return 2;
		printf("%ld\n", (long)getpid());
		fflush(stdout);
		iov.iov_base = &c;
		iov.iov_len = 1;
		if (readv(0, &iov, 1) != 1)
			return 1;
	}
	if ((lat_fd = open("/dev/zero", O_RDONLY)) == -1)
		return 1;
	if (argc == 4 && strcmp(argv[3], "vfork") == 0 && lat_vfork() != 0)
		return 1;
	if (argc == 4 && strcmp(argv[3], "spawn") == 0 &&
	    lat_spawn(argv[0]) != 0)
		return 1;
	for (i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, lat_loop, NULL) != 0)
			return 1;
	(void)lat_loop(NULL);
	for (i = 0; i < nth; i++)
		(void)pthread_join(th[i], NULL);
	return 0;
}
