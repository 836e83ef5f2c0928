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
 * shim_test: DTIOCRDVNODE through a real dtd, with and without the
 * client shim (shim/dt_rdvn_shim.c, libdtshim.so).  dtd cannot put a
 * descriptor into its caller, so it answers dtrv_fd = -1; preloaded, the
 * shim opens the mapped file in the client itself.  What btrace does
 * with the answer (dt-abi.md 6.5) must then work: the descriptor is the
 * executable, mmap of dtrv_len bytes gives its ELF image, and the load
 * base computed as in dt-abi.md 4.3 is where it is really loaded.
 *
 *   shim_test DTD LIBDTSHIM             the harness: starts its own dtd
 *                                       (tests/lib/dtt), runs the two
 *                                       clients, stops dtd by pid
 *   shim_test --client shim|plain DEV   a client: itself the target
 *
 * The client is this same program, so it is built like the shim: a
 * sanitizer build preloads an instrumented shim into an instrumented
 * client (never a mix, which cannot load).  Root only, like dtd and
 * DTIOCRDVNODE.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dtt.h"

#define SHIM_CLIENT_MS	60000


/*
 * The address the clients ask about: a function of the executable, not
 * inlined so it has a symbol to find in the image.  Clients only.
 */
static __attribute__((noinline, used)) int
shim_target(int x)
{
	return x * 3 + 1;
}

struct shim_obj {
	const char	*so_name;	/* substring of the path wanted */
	char		 so_path[PATH_MAX];	/* its path, if found */
	uintptr_t	 so_base;	/* dlpi_addr of the main program */
	bool		 so_found;
};

/*
 * dl_iterate_phdr callback: the main program is the entry with an empty
 * name (its load base), a library the one whose path has so_name.
 */
static int
shim_obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct shim_obj *so = arg;

	(void)size;
	if (so->so_name == NULL) {
		if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') {
			so->so_base = (uintptr_t)info->dlpi_addr;
			so->so_found = true;
			return 1;
		}
		return 0;
	}
	if (info->dlpi_name != NULL &&
	    strstr(info->dlpi_name, so->so_name) != NULL) {
		snprintf(so->so_path, sizeof(so->so_path), "%s",
		    info->dlpi_name);
		so->so_found = true;
		return 1;
	}
	return 0;
}

/* Is a shared object whose path contains name loaded?  Its path. */
static bool
shim_loaded(const char *name, char *path, size_t len)
{
	struct shim_obj so;

	memset(&so, 0, sizeof(so));
	so.so_name = name;
	dl_iterate_phdr(shim_obj_cb, &so);
	if (so.so_found && path != NULL)
		snprintf(path, len, "%s", so.so_path);
	return so.so_found;
}

/* Where the dynamic linker loaded the executable (its load bias). */
static uintptr_t
shim_exe_base(void)
{
	struct shim_obj so;

	memset(&so, 0, sizeof(so));
	dl_iterate_phdr(shim_obj_cb, &so);
	return so.so_base;
}

/* The /proc/self/maps entry holding va: its start and file offset. */
static bool
shim_maps_entry(uintptr_t va, uintmax_t *start, uintmax_t *off)
{
	char line[4096];
	uintmax_t s, e, o;
	bool found = false;
	FILE *fp;

	if ((fp = fopen("/proc/self/maps", "re")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%jx-%jx %*s %jx", &s, &e, &o) == 3 &&
		    va >= s && va < e) {
			*start = s;
			*off = o;
			found = true;
		}
	fclose(fp);
	return found;
}

/*
 * In the image of len bytes, the value of the function symbol name in
 * .symtab, or 0.  Every offset is checked against len: the image is
 * whatever the descriptor gave us.
 */
static uint64_t
shim_symbol(const unsigned char *img, size_t len, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh, *strsh;
	const Elf64_Sym *sym;
	size_t i, j, nsym;

	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(*sh) ||
	    eh->e_shoff > len ||
	    (len - eh->e_shoff) / sizeof(*sh) < eh->e_shnum)
		return 0;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		strsh = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > len ||
		    len - sh[i].sh_offset < sh[i].sh_size ||
		    strsh->sh_offset > len ||
		    len - strsh->sh_offset < strsh->sh_size)
			return 0;
		sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		nsym = sh[i].sh_size / sizeof(*sym);
		for (j = 0; j < nsym; j++) {
			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC ||
			    sym[j].st_name >= strsh->sh_size)
				continue;
			if (strncmp((const char *)img + strsh->sh_offset +
			    sym[j].st_name, name, strsh->sh_size -
			    sym[j].st_name) == 0)
				return sym[j].st_value;
		}
	}
	return 0;
}

/*
 * What btrace does with an answer (dt-abi.md 6.5 and 4.3): map
 * dtrv_len bytes of the file from offset 0, find the PT_LOAD that holds
 * va's file offset, compute the load base; it must be where the
 * executable really is, and base + the symbol's value must be va.
 */
static void
shim_check_image(int fd, const struct dtioc_rdvn *rv)
{
	const unsigned char *img;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph, *load = NULL;
	uintptr_t va = (uintptr_t)rv->dtrv_va, real = shim_exe_base();
	uint64_t fileoff, base = 0, sym;
	size_t len = rv->dtrv_len;
	int i;

	img = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!dtt_check(img != MAP_FAILED, "mmap of dtrv_len %zu bytes at "
	    "offset 0", len))
		return;
	eh = (const Elf64_Ehdr *)img;
	if (!dtt_check(len >= sizeof(*eh) &&
	    memcmp(img, ELFMAG, SELFMAG) == 0 &&
	    eh->e_ident[EI_CLASS] == ELFCLASS64, "the mapping starts with "
	    "the ELF magic of a 64-bit object"))
		goto out;

	fileoff = (uint64_t)(uintptr_t)rv->dtrv_offset +
	    (va - (uintptr_t)rv->dtrv_start);
	if (eh->e_phentsize == sizeof(*ph) && eh->e_phoff <= len &&
	    (len - eh->e_phoff) / sizeof(*ph) >= eh->e_phnum) {
		ph = (const Elf64_Phdr *)(img + eh->e_phoff);
		for (i = 0; i < eh->e_phnum && load == NULL; i++)
			if (ph[i].p_type == PT_LOAD &&
			    fileoff >= ph[i].p_offset &&
			    fileoff - ph[i].p_offset < ph[i].p_filesz)
				load = &ph[i];
	}
	if (!dtt_check(load != NULL && (load->p_flags & PF_X) != 0,
	    "an executable PT_LOAD holds file offset %#" PRIx64 " of va "
	    "%#jx", fileoff, (uintmax_t)va))
		goto out;
	base = (va - load->p_vaddr) - (fileoff - load->p_offset);
	dtt_check(base == real, "load base (va - p_vaddr) - (fileoff - "
	    "p_offset) = %#" PRIx64 " is where the executable is loaded "
	    "(dl_iterate_phdr: %#jx)", base, (uintmax_t)real);
	sym = shim_symbol(img, len, "shim_target");
	dtt_check(sym != 0 && base + sym == va, "load base + the image's "
	    "shim_target symbol (%#" PRIx64 ") is va", sym);
out:
	munmap((void *)img, len);
}

/* The maps entry and file size dtd should have answered with. */
static void
shim_check_answer(const struct dtioc_rdvn *rv, const struct stat *exe)
{
	uintmax_t start = 0, off = 0;
	bool found;

	/* Arguments are evaluated in no set order: look first, then check. */
	found = shim_maps_entry((uintptr_t)rv->dtrv_va, &start, &off);
	dtt_check(found && (uintmax_t)(uintptr_t)rv->dtrv_start == start &&
	    (uintmax_t)(uintptr_t)rv->dtrv_offset == off,
	    "dtrv_start %p, dtrv_offset %p are the maps entry's (%#jx, %#jx)",
	    (void *)rv->dtrv_start, (void *)rv->dtrv_offset, start, off);
	dtt_check(rv->dtrv_len == (size_t)exe->st_size,
	    "dtrv_len %zu is the executable's size %jd", rv->dtrv_len,
	    (intmax_t)exe->st_size);
}

/*
 * DTIOCRDVNODE about ourselves at shim_target, through ioctl(3) (the
 * shim's, when preloaded) or, with raw, the system call past it.  Checks
 * it succeeded.  Clients only.
 */
static bool
shim_rdvnode(int dev, struct dtioc_rdvn *rv, bool raw)
{
	long rc;

	memset(rv, 0, sizeof(*rv));
	rv->dtrv_pid = getpid();
	rv->dtrv_va = (caddr_t)(uintptr_t)&shim_target;
	errno = 0;
	if (raw)
		rc = syscall(SYS_ioctl, dev, DTIOCRDVNODE, rv);
	else
		rc = ioctl(dev, DTIOCRDVNODE, rv);
	return dtt_check(rc == 0, "%sDTIOCRDVNODE pid %d va %p succeeds%s%s",
	    raw ? "raw " : "", (int)rv->dtrv_pid, (void *)rv->dtrv_va,
	    rc == 0 ? "" : ": ", rc == 0 ? "" : strerror(errno));
}

/* Through the shim: a descriptor of the executable, usable as btrace's. */
static void
shim_client_shim(int dev, const struct stat *exe)
{
	struct dtioc_rdvn rv, raw;
	struct stat st;
	int fl, fdfl;
	off_t pos;
	bool ok;

	dtt_check(shim_loaded("libdtshim", NULL, 0),
	    "libdtshim is loaded (LD_PRELOAD)");
	if (!shim_rdvnode(dev, &rv, false) ||
	    !dtt_check(rv.dtrv_fd >= 0, "dtrv_fd %d is a descriptor",
	    rv.dtrv_fd))
		return;
	/* Arguments are evaluated in no set order: look first, then check. */
	memset(&st, 0, sizeof(st));
	ok = fstat(rv.dtrv_fd, &st) == 0;
	dtt_check(ok && st.st_dev == exe->st_dev && st.st_ino == exe->st_ino,
	    "fstat(dtrv_fd) is /proc/self/exe (dev %#jx ino %ju; exe dev "
	    "%#jx ino %ju)", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
	    (uintmax_t)exe->st_dev, (uintmax_t)exe->st_ino);
	/* dt(4) installs it close-on-exec, FREAD, at offset 0. */
	fl = fcntl(rv.dtrv_fd, F_GETFL);
	fdfl = fcntl(rv.dtrv_fd, F_GETFD);
	pos = lseek(rv.dtrv_fd, 0, SEEK_CUR);
	dtt_check(fl != -1 && (fl & O_ACCMODE) == O_RDONLY && fdfl != -1 &&
	    (fdfl & FD_CLOEXEC) != 0 && pos == 0, "dtrv_fd is read-only "
	    "(flags %#x), close-on-exec (%#x), at offset 0 (%jd)", fl, fdfl,
	    (intmax_t)pos);
	shim_check_answer(&rv, exe);
	shim_check_image(rv.dtrv_fd, &rv);
	close(rv.dtrv_fd);

	/* Past the shim: dtd's own answer, as an unmodified client sees it. */
	if (shim_rdvnode(dev, &raw, true))
		dtt_check(raw.dtrv_fd == -1 &&
		    raw.dtrv_start == rv.dtrv_start &&
		    raw.dtrv_offset == rv.dtrv_offset &&
		    raw.dtrv_len == rv.dtrv_len, "past the shim: dtrv_fd %d "
		    "(-1), start %p, offset %p, len %zu (the same)",
		    raw.dtrv_fd, (void *)raw.dtrv_start,
		    (void *)raw.dtrv_offset, raw.dtrv_len);
}

/*
 * Without the shim: dtrv_fd -1 and the same start, offset and len; the
 * file by path (as our btrace reads it) gives the same load base.
 */
static void
shim_client_plain(int dev, const struct stat *exe)
{
	struct dtioc_rdvn rv;
	int fd;

	dtt_check(!shim_loaded("libdtshim", NULL, 0),
	    "libdtshim is not loaded");
	if (!shim_rdvnode(dev, &rv, false))
		return;
	dtt_check(rv.dtrv_fd == -1, "dtrv_fd %d is -1: dtd cannot give a "
	    "descriptor", rv.dtrv_fd);
	shim_check_answer(&rv, exe);
	if ((fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) == -1) {
		dtt_check(false, "open /proc/self/exe: %s", strerror(errno));
		return;
	}
	shim_check_image(fd, &rv);
	close(fd);
}

static int
shim_client(const char *mode, const char *device)
{
	struct stat exe;
	int dev;

	dtt_tag(mode);
	/* Keep the target live whatever the optimiser thinks of it. */
	if (shim_target(1) != 4)
		return 1;
	if (stat("/proc/self/exe", &exe) == -1) {
		dtt_check(false, "stat /proc/self/exe: %s", strerror(errno));
		return dtt_done();
	}
	if ((dev = dtt_open(device)) == -1) {
		dtt_check(false, "open %s: %s", device, strerror(errno));
		return dtt_done();
	}
	if (strcmp(mode, "shim") == 0)
		shim_client_shim(dev, &exe);
	else
		shim_client_plain(dev, &exe);
	close(dev);
	return dtt_done();
}

/*
 * Run ourselves as a client in mode, with preload (NULL: none); its wait
 * status or -1.  Harness only.
 */
static int
shim_run_client(const char *self, const char *mode, const char *device,
    const char *preload)
{
	char *argv[] = { (char *)self, "--client", (char *)mode,
	    (char *)device, NULL };
	char **env, *pre;
	pid_t pid;
	int status = -1;

	if ((env = dtt_preload_env(preload, &pre)) == NULL)
		return -1;
	if ((pid = dtt_spawn(argv, env, -1, -1, -1, -1)) != -1 &&
	    (status = dtt_wait(pid, SHIM_CLIENT_MS)) == -1)
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	free(pre);
	free(env);
	return status;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	char self[PATH_MAX], err[2048], dir[sizeof(dd.dd_dir)];
	ssize_t n;
	int status, rc;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "--client") == 0)
		return shim_client(argv[2], argv[3]);
	if (argc != 3) {
		fprintf(stderr, "usage: shim_test dtd libdtshim.so\n");
		return 2;
	}
	if (geteuid() != 0) {
		/* Not a skip: the suite needs root to mount FUSE. */
		fprintf(stderr, "shim_test: FAIL: must run as root\n");
		return 1;
	}
	dtt_tag("harness");
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1) {
		perror("/proc/self/exe");
		return 1;
	}
	self[n] = '\0';
	if (access(argv[2], R_OK) == -1) {
		dtt_check(false, "%s: %s", argv[2], strerror(errno));
		return dtt_done();
	}
	if (dtt_dtd_init(&dd, "dt-shim") == -1) {
		dtt_check(false, "/tmp/dt-shim.XXXXXX: %s", strerror(errno));
		return dtt_done();
	}
	/* No profiling here: do not write a ksyms image for nothing. */
	pid = dtt_dtd_start(&dd, argv[1], (char *[]){ "--no-ksyms", NULL },
	    err, sizeof(err));
	if (dtt_check(pid != -1, "dtd %d started%s%s", (int)pid,
	    err[0] != '\0' ? ": " : "", err)) {
		status = shim_run_client(self, "shim", dd.dd_dev, argv[2]);
		dtt_check(dtt_exited0(status), "the client with the shim "
		    "passed (status %#x)", status);
		status = shim_run_client(self, "plain", dd.dd_dev, NULL);
		dtt_check(dtt_exited0(status), "the client without the shim "
		    "passed (status %#x)", status);
		status = dtt_dtd_stop(&dd, SIGTERM);
		dtt_check(dtt_exited0(status), "dtd exited 0 on SIGTERM "
		    "(status %#x)", status);
	}
	/* Without "all": whatever dtd left behind keeps it non-empty. */
	snprintf(dir, sizeof(dir), "%s", dd.dd_dir);
	rc = dtt_dtd_fini(&dd, false);
	dtt_check(rc == 0, "dtd left %s empty (%s)", dir,
	    rc == 0 ? "removed" : strerror(errno));
	return dtt_done();
}
