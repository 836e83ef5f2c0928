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
 * The program of syscall_uprobe.py, of libc's getppid() (a system call
 * site, rewritten) or ffs() (no site, on a page between sites), looked
 * up in libc itself, not through the preloaded library's hooks:
 *   uprobe_tracee where FN	libc's path and FN's file offset in it,
 *			where a uprobe goes (uprobe_events' form)
 *   uprobe_tracee run FN N	the first byte of FN as this process sees
 *			its text (cc: a breakpoint, a uprobe's), then N
 *			calls of it
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uintptr_t	want;		/* FN's address */
static long		fileoff = -1;	/* its offset in its file */

static int
phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t v;
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		v = want - info->dlpi_addr;
		if (v >= ph->p_vaddr && v < ph->p_vaddr + ph->p_filesz) {
			fileoff = (long)(ph->p_offset + (v - ph->p_vaddr));
			return 1;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	pid_t (*volatile gpp)(void);
	int (*volatile ffs1)(int);
	Dl_info di;
	void *libc, *fn;
	long i, n, bad = 0;

	if (argc < 3 || (strcmp(argv[2], "getppid") != 0 &&
	    strcmp(argv[2], "ffs") != 0))
		return 2;
	if ((libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD)) == NULL ||
	    (fn = dlsym(libc, argv[2])) == NULL)
		return 1;
	want = (uintptr_t)fn;
	if (argc == 3 && strcmp(argv[1], "where") == 0) {
		if (dladdr(fn, &di) == 0 || di.dli_fname == NULL)
			return 1;
		dl_iterate_phdr(phdr_cb, NULL);
		if (fileoff < 0)
			return 1;
		printf("%s 0x%lx\n", di.dli_fname, fileoff);
		return 0;
	}
	if (argc != 4 || strcmp(argv[1], "run") != 0)
		return 2;
	n = atol(argv[3]);
	printf("%02x\n", *(volatile const unsigned char *)want);
	gpp = (pid_t (*)(void))fn;
	ffs1 = (int (*)(int))fn;
	for (i = 0; i < n; i++)
		bad |= argv[2][0] == 'g' ? gpp() != (pid_t)syscall(SYS_getppid) :
		    ffs1((int)(1L << (i % 31))) != (int)(i % 31) + 1;
	printf("%s\n", bad ? "bad" : "done");
	return 0;
}
