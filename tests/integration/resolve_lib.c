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
 * A library that defines two of libc's wrappers, and a third weak,
 * preloaded after ours: the preload library's hooks must find these,
 * as dlsym(RTLD_NEXT) does, and with LD_DYNAMIC_WEAK libc's fsync
 * (syscall_resolve.py).
 */
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

pid_t
getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	return syscall(SYS_write, fd, buf, len);
}

__attribute__((weak)) int
fsync(int fd)
{
	return (int)syscall(SYS_fsync, fd);
}
