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
 * linkmap_tracee OUT: what a traced program finds loaded in itself, for
 * syscall_linkmap.py.  Writes to OUT, at its start and again after a
 * write(2) whose user stack the test asks for, one line each:
 *	PHASE linkmap N maps M
 * N the objects dl_iterate_phdr() shows whose name holds "libunwind" or
 * "liblzma", M the lines of /proc/self/maps that do; then
 *	PHASE cs linkmap N maps M
 * the same for the library's disassembler module, which its rewriter
 * maps itself when it decodes; then "object NAME" for every object the
 * link map has.  Built without frame pointers:
 * the stack is the CFI's to find.
 */
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static FILE	*out;

static int
tracer_lib(const char *name)
{
	return strstr(name, "libunwind") != NULL ||
	    strstr(name, "liblzma") != NULL;
}

static int
cs_mod(const char *name)
{
	return strstr(name, "libuserdt-preload-cs") != NULL;
}

/* n[0]: tracer libraries, n[1]: whether to list, n[2]: the module. */
static int
object(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *n = arg;

	(void)size;
	if (tracer_lib(info->dlpi_name))
		n[0]++;
	if (cs_mod(info->dlpi_name))
		n[2]++;
	if (n[1])
		fprintf(out, "object %s\n", info->dlpi_name);
	return 0;
}

static void
look(const char *phase, int list)
{
	char line[4096];
	int n[3] = { 0, list, 0 }, m = 0, mc = 0;
	FILE *f;

	dl_iterate_phdr(object, n);
	if ((f = fopen("/proc/self/maps", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (tracer_lib(line))
				m++;
			if (cs_mod(line))
				mc++;
		}
		fclose(f);
	}
	fprintf(out, "%s linkmap %d maps %d\n", phase, n[0], m);
	fprintf(out, "%s cs linkmap %d maps %d\n", phase, n[2], mc);
}

/* Not inlined: a frame of its own between the write and main. */
static int __attribute__((noinline))
poke(int fd)
{
	return (int)write(fd, "x", 1);
}

int
main(int argc, char *argv[])
{
	int fd;

	if (argc != 2 || (out = fopen(argv[1], "w")) == NULL)
		return 2;
	look("start", 1);
	if ((fd = open("/dev/null", O_WRONLY)) == -1 || poke(fd) != 1)
		return 1;
	close(fd);
	look("after", 0);
	return fclose(out) == 0 ? 0 : 1;
}
