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
 * What the launcher's tracer finds an image to be, before its exec (by
 * the file execvp(3) or the execve names) and at its exec stop (by the
 * file the process runs): statically linked, or one whose exec gives
 * the process other credentials; and what it says of such an image on
 * stderr.  Apart from udt_ltrace.c, which follows a loader's calls:
 * none of this touches a record.  The helper's thread, or a launcher's
 * before its exec (udt_launch_image(), udt_lt_precheck()).
 */
#include <sys/stat.h>
#include <sys/xattr.h>

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "udt_launch.h"
#include "udt_ltrace.h"

/*
 * Whether executing path gives the process other credentials: set-id
 * bits that change its ids, or file capabilities for a process that is
 * not root's.  A traced exec does not get them (the kernel refuses a
 * tracer that lacks the privilege), so the tracer must let go first.
 */
int
udt_li_setid(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode))
		return 0;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return 1;
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) &&
	    st.st_gid != getegid())
		return 1;
	return geteuid() != 0 &&
	    getxattr(path, "security.capability", NULL, 0) > 0;
}

/*
 * Whether the ELF file at path asks for a dynamic loader (PT_INTERP).
 * 1 yes, 0 no (static), -1 cannot tell (not ELF64).
 */
static int
udt_li_interp(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i, r = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph)) {
		close(fd);
		return -1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff +
		    (uint64_t)i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP) {
			r = 1;
			break;
		}
	}
	close(fd);
	return r;
}

/* udt_li_interp() of the image the tracee now runs, its path in exe. */
int
udt_li_dynamic(pid_t pid, char *exe, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, len - 1)) <= 0)
		n = 0;
	exe[n] = '\0';
	return udt_li_interp(path);
}

/* udt_launch_ktree(): dtd reads this tree's unhooked calls from the kernel */
static int udt_li_mode;

void
udt_launch_ktree(int on)
{
	udt_li_mode = on;
}

int
udt_li_ktree(void)
{
	return udt_li_mode;
}

void
udt_li_say_static(const char *prog, const char *exe, int seen, int error)
{
	/* btrace -c: dtd has the kernel's copy; dtd's why, when it has not */
	if (seen)
		fprintf(stderr, "%s: %s: statically linked: its system calls "
		    "are read from the kernel (no strings)\n", prog, exe);
	else if (error != 0)
		fprintf(stderr, "%s: %s: statically linked: its system calls "
		    "are not traced (dtd: %s)\n", prog, exe, strerror(error));
	else
		fprintf(stderr, "%s: %s: statically linked: its system calls "
		    "are not traced\n", prog, exe);
}

void
udt_li_say_setid(const char *prog, const char *path, const char *why)
{
	if (why == NULL)
		fprintf(stderr, "%s: %s: set-id: its system calls are read "
		    "from the kernel (no strings)\n", prog, path);
	else
		fprintf(stderr, "%s: %s: set-id: runs untraced (%s)\n", prog,
		    path, why);
}

/*
 * The first line of a small file, without its newline: 0, or -1 when
 * it cannot be read.
 */
static int
udt_li_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * Whether an LSM may refuse a traced exec that the same exec untraced
 * would pass: SELinux checks process:ptrace against the new domain of
 * a traced process's exec (enforcing only), AppArmor a confined
 * tracer's domain change.  Root's tracee gets its credentials only
 * where neither may say no; elsewhere the tracer lets go before the
 * exec, as a non-root one does.  attr/current is AppArmor's word only
 * where SELinux is absent (there it is a SELinux context); a profile
 * in complain mode is taken as confined too.  Read once: the helper
 * and the launcher before it never change domain.
 */
static int
udt_li_lsm(void)
{
	static int lsm = -1;
	char buf[256];
	size_t n;

	if (lsm != -1)
		return lsm;
	lsm = 0;
	if (udt_li_line("/sys/fs/selinux/enforce", buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "1") == 0)
		lsm = 1;
	else if (udt_li_line("/proc/self/attr/apparmor/current", buf,
	    sizeof(buf)) == 0 || (access("/sys/fs/selinux", F_OK) == -1 &&
	    udt_li_line("/proc/self/attr/current", buf, sizeof(buf)) == 0)) {
		n = strlen(buf);
		lsm = n > 0 && strcmp(buf, "unconfined") != 0;
	}
	return lsm;
}

int
udt_launch_setid_held(void)
{
	return geteuid() == 0 && !udt_li_lsm();
}

/*
 * A non-root tracer's exec would run the program without its
 * credentials; root's tracee gets them all the same where no LSM
 * restricts a traced domain change, and is held at its exec stop for
 * dtd's feed only in a hooked tree's (btrace -c).
 */
int
udt_li_karmsetid(void)
{
	return udt_li_mode == UDT_LAUNCH_KTREE_EXEC &&
	    udt_launch_setid_held();
}

/*
 * The file execvp(3) would run for file: itself when it names a path,
 * else the first regular, executable file of that name along $PATH.
 * Into buf; -1 when there is none.
 */
static int
udt_li_which(const char *file, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat st;
	size_t n;

	if (strchr(file, '/') != NULL)
		return realpath(file, buf) != NULL && strlen(buf) < len &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0 ? 0 : -1;
	if (path == NULL)
		path = "/bin:/usr/bin";
	for (p = path; ; p = e + 1) {
		e = strchrnul(p, ':');
		n = (size_t)(e - p);
		if (n == 0)
			n = 1, p = ".";
		if (n + strlen(file) + 2 <= len) {
			memcpy(buf, p, n);
			buf[n] = '/';
			strcpy(buf + n + 1, file);
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
			    access(buf, X_OK) == 0)
				return 0;
		}
		if (*e == '\0')
			return -1;
	}
}

/* udt_launch_image(), and the file's path into path. */
static int
udt_li_untraced(const char *file, char *path, size_t len)
{
	if (file == NULL || udt_li_which(file, path, len) == -1)
		return 0;
	if (udt_li_setid(path))
		return UDT_LAUNCH_SETID;
	return udt_li_interp(path) == 0 ? UDT_LAUNCH_STATIC : 0;
}

int
udt_launch_image(const char *file)
{
	char path[PATH_MAX];

	return udt_li_untraced(file, path, sizeof(path));
}

void
udt_lt_precheck(const char *prog, const char *file)
{
	char path[PATH_MAX];
	int kind = udt_li_untraced(file, path, sizeof(path));

	/* nothing holds this exec: no one asks dtd for it */
	if (kind == UDT_LAUNCH_SETID)
		udt_li_say_setid(prog, path, UDT_LI_NOLIB);
	else if (kind == UDT_LAUNCH_STATIC)
		udt_li_say_static(prog, path, udt_li_mode != 0, 0);
}
