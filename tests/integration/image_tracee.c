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
 * image_tracee OUT N: a program for syscall_image.py.  Calls getppid()
 * through libc N times; then writes to OUT where the first jump in
 * libc's getppid leads ("jump ADDR", or "jump 0": its site was not
 * rewritten), getppid's own address ("site ADDR"), and its
 * /proc/self/smaps, which say what maps libc's text and the trampolines
 * and whether their pages were copied; first, the descriptors it was
 * started with past 2 ("fd N TARGET"), where none of the library's
 * (the handshake's, the images', pagemap's) may be left.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	const uint8_t *p;
	uintptr_t to = 0;
	int32_t rel;
	char buf[4096];
	size_t n;
	char fds[2048], path[64], tgt[256];
	size_t nfds = 0;
	struct dirent *de;
	ssize_t len;
	DIR *d;
	FILE *f, *m;
	void *h;
	long i, k;
	int fd;

	/* Before this program opens any of its own. */
	fds[0] = '\0';
	if ((d = opendir("/proc/self/fd")) == NULL)
		return 2;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if ((len = readlink(path, tgt, sizeof(tgt) - 1)) < 0)
			len = 0;
		tgt[len] = '\0';
		if (nfds < sizeof(fds))
			nfds += (size_t)snprintf(fds + nfds, sizeof(fds) - nfds,
			    "fd %d %s\n", fd, tgt);
	}
	closedir(d);
	if (argc != 3 || (f = fopen(argv[1], "w")) == NULL)
		return 2;
	fputs(fds, f);
	k = strtol(argv[2], NULL, 10);
	for (i = 0; i < k; i++)
		(void)getppid();
	/* libc's own: the preload library has a getppid too. */
	if ((h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD)) == NULL ||
	    (p = dlsym(h, "getppid")) == NULL)
		return 3;
	/* After an endbr64, if any: the window's jump. */
	for (i = 0; i < 16; i++)
		if (p[i] == 0xe9) {
			memcpy(&rel, p + i + 1, 4);
			to = (uintptr_t)(p + i + 5) + (uintptr_t)(intptr_t)rel;
			break;
		}
	fprintf(f, "jump %#lx\nsite %#lx\n", (unsigned long)to,
	    (unsigned long)(uintptr_t)p);
	if ((m = fopen("/proc/self/smaps", "r")) == NULL)
		return 4;
	while ((n = fread(buf, 1, sizeof(buf), m)) > 0)
		fwrite(buf, 1, n, f);
	fclose(m);
	return fclose(f) == 0 ? 0 : 1;
}
