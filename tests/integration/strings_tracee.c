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
 * strings_tracee DIR: the calls syscall_strings checks, through libc's
 * wrappers, in this order:
 *
 *	open(DIR/known)			opens
 *	openat(AT_FDCWD, DIR/missing)	ENOENT
 *	open((char *)1)			a bad pointer: EFAULT
 *	open(DIR/aaa...a, 300 a's)	too long for an event: truncated
 *	rename(DIR/r1, DIR/r2)		two strings
 *	open("edge")			the last bytes of a page before an
 *					unmapped one: whole
 *	open("0123456789" and no NUL)	runs into the unmapped page: EFAULT
 *
 * then prints "S efault-ok efault-ok" (each bad call's errno was EFAULT)
 * with one write(2), the last event the test waits for.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * open(2) itself: libc's open() makes openat, which the default mode
 * records as what it is; the system call keeps the probe the same in
 * every mode.
 */
static int
sys_open(const char *path, int flags)
{
	return (int)syscall(SYS_open, path, flags);
}

int
main(int argc, char *argv[])
{
	char path[512], to[512], line[64];
	char *page;
	long psz = sysconf(_SC_PAGESIZE);
	int fd, e1, e2, n;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/known", argv[1]);
	if ((fd = sys_open(path, O_RDONLY)) == -1)
		return 1;
	close(fd);
	snprintf(path, sizeof(path), "%s/missing", argv[1]);
	if (openat(AT_FDCWD, path, O_RDONLY) != -1)
		return 1;
	e1 = sys_open((const char *)1, O_RDONLY) == -1 ? errno : 0;
	n = snprintf(path, sizeof(path), "%s/", argv[1]);
	memset(path + n, 'a', 300);
	path[n + 300] = '\0';
	(void)sys_open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/r1", argv[1]);
	snprintf(to, sizeof(to), "%s/r2", argv[1]);
	if (rename(path, to) != 0)
		return 1;
	page = mmap(NULL, 2 * (size_t)psz, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || munmap(page + psz, (size_t)psz) != 0)
		return 1;
	memcpy(page + psz - 5, "edge", 5);
	(void)sys_open(page + psz - 5, O_RDONLY);
	memcpy(page + psz - 10, "0123456789", 10);
	e2 = sys_open(page + psz - 10, O_RDONLY) == -1 ? errno : 0;
	n = snprintf(line, sizeof(line), "S %s %s\n",
	    e1 == EFAULT ? "efault-ok" : "efault-bad",
	    e2 == EFAULT ? "efault-ok" : "efault-bad");
	return write(1, line, (size_t)n) == n ? 0 : 1;
}
