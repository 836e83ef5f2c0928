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
 * alias_calls: one call each, through libc's wrappers or syscall(3), of
 * the system calls the device-alias case names by their Linux names:
 * pread64, newfstatat, getdents64, rt_sigaction, brk (twice: sbrk(0)
 * asks the kernel when nothing was malloc()ed yet), gettid, futex,
 * clone3 (made to fail), then exit_group through _exit().
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>

int
main(void)
{
	struct sigaction sa;
	struct stat st;
	char buf[512];
	uint32_t word = 0;
	int fd;

	if ((fd = open("/", O_RDONLY | O_DIRECTORY)) == -1) {
		perror("open");
		return 1;
	}
	(void)pread(fd, buf, 1, 0);		/* EISDIR */
	(void)fstatat(fd, ".", &st, 0);
	(void)getdents64(fd, buf, sizeof(buf));
	memset(&sa, 0, sizeof(sa));
	(void)sigaction(SIGUSR1, NULL, &sa);
	(void)brk(sbrk(0));
	(void)gettid();
	(void)syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
	(void)syscall(SYS_clone3, NULL, 0);	/* EINVAL: size 0 */
	_exit(0);
}
