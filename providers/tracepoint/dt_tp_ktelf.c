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
 * What a tree's image is, by its file (dt_tp_kt.h): the ELF reading
 * that both halves of the tree's feed share, dt_tp_ksystree.c's
 * judgement of an exec seen in its records and dt_tp_ksysarm.c's of a
 * process the launcher's helper holds at its exec.  Kept apart so that
 * neither file holds the other's work, nor grows past a reading.
 */
#include <sys/stat.h>

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dt_tp_kt.h"

/*
 * Whether pid's image, mapped from path, asks for a loader (PT_INTERP):
 * the kernel maps it with the image, before its first instruction, so
 * the file says it, not what the image maps later (a JIT's anonymous
 * code, a static glibc's dlopen() of an NSS module).
 *
 * The file is the one pid runs, opened through /proc/PID/exe, never by
 * the record's path: a path is the tracee's to change (a FIFO renamed
 * over it would hold the thread, the reader of every tracepoint, in
 * open(2); a device node would be opened by root), and is resolved in
 * the tracee's root, not dtd's.  The path only checks that the image
 * the record speaks of is still the one pid runs: not a later exec's,
 * not another file mapped first (a record of the exec's own mapping
 * read out of order, after the loader's or the library's).  Otherwise,
 * or when it cannot be read, DT_KT_BYMAP: judged by a second file
 * mapped beside the first.  A loader run as the command (ld.so PROG)
 * has no PT_INTERP: judged static, its program's calls, which the
 * library records, come twice.  Any thread: the perf reader
 * (dt_kt_judge()), a serve worker (dt_kt_exe_static()).
 */
enum dt_kt_kind
dt_kt_elf(pid_t pid, const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	char exe[64], link[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t len;
	unsigned int i;
	int fd;
	enum dt_kt_kind kind = DT_KT_BYMAP;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if ((n = readlink(exe, link, sizeof(link) - 1)) <= 0)
		return kind;
	link[n] = '\0';
	if (strcmp(link, path) != 0)
		return kind;
	if ((fd = open(exe, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1)
		return kind;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		goto out;
	/* else raw_syscalls' call numbers are another ABI's (i386's) */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64) {
		kind = DT_KT_FOREIGN;
		goto out;
	}
	if (eh.e_phentsize != sizeof(ph[0]) || eh.e_phnum > 64)
		goto out;
	/* the whole table in one read: often the reader of every event */
	len = (size_t)eh.e_phnum * sizeof(ph[0]);
	if (pread(fd, ph, len, (off_t)eh.e_phoff) != (ssize_t)len)
		goto out;
	kind = DT_KT_STATIC;
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_INTERP)
			kind = DT_KT_DYNAMIC;
out:
	close(fd);
	return kind;
}

/*
 * By the link the exe file gives now: the check in dt_kt_elf() that
 * the file is still the one pid runs is then against itself, and the
 * helper holds pid, so nothing execs in between.
 */
bool
dt_kt_exe_static(pid_t pid)
{
	char exe[64], link[PATH_MAX];
	ssize_t n;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if ((n = readlink(exe, link, sizeof(link) - 1)) <= 0)
		return false;
	link[n] = '\0';
	return dt_kt_elf(pid, link) == DT_KT_STATIC;
}
