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
 * The disassembler's module mapped by the library itself (udt_cs_mod.h):
 * libuserdt-cs.so, beside the library, the first time a pass decodes.
 * Not dlopen(): the module would join the program's link map, where the
 * program's dl_iterate_phdr() and dlopen() find it; and a later pass
 * runs while the loader is busy with the program's own dlopen().
 *
 * The module is made to need little: segments to map, relative
 * relocations, an entry that is its table.  Anything else (a library it
 * needs, a constructor, a relocation of another kind, a table of another
 * build) and it is refused: the pass then decodes nothing, as when
 * Capstone cannot open, and the sites it would have rewritten are
 * dispatched instead.  Its text is covered (udt_rw_cover()): it holds no
 * system call, so the whole-process check (udt_rw_trap.c) need not
 * count it as code nobody went through.
 *
 * Concurrency contract: the rewriter's pass alone ([w]: the constructor,
 * or a later pass under the loader's lock); raw system calls only.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_cs.h"
#include "udt_rw_plan.h"
#include "udt_cs_mod.h"

#define UDT_CS_NAME	"libuserdt-cs.so"
#define UDT_CS_MAXPH	16
#define UDT_PG		4096UL
#define UDT_PGDN(x)	((x) & ~(UDT_PG - 1))
#define UDT_PGUP(x)	(((x) + UDT_PG - 1) & ~(UDT_PG - 1))

static const struct udt_cs_ops *udt_cs;		/* [w] the table */
static int		 udt_cs_tried;		/* [w] */

/* The library's own path: the object that holds this function. */
struct udt_cs_self {
	uintptr_t	 cs_at;
	const char	*cs_name;
};

static int
udt_cs_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct udt_cs_self *s = arg;
	const ElfW(Phdr) *ph;
	uintptr_t lo;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && s->cs_at >= lo &&
		    s->cs_at - lo < ph->p_memsz) {
			s->cs_name = info->dlpi_name;
			return 1;
		}
	}
	return 0;
}

/* path = the library's directory and the module's name; -1 if none. */
static int
udt_cs_path(char *path, size_t max)
{
	struct udt_cs_self s = { (uintptr_t)udt_cs_self, NULL };
	const char *slash;
	size_t n;

	dl_iterate_phdr(udt_cs_self, &s);
	if (s.cs_name == NULL || (slash = strrchr(s.cs_name, '/')) == NULL)
		return -1;
	n = (size_t)(slash - s.cs_name) + 1;
	if (n + sizeof(UDT_CS_NAME) > max)
		return -1;
	memcpy(path, s.cs_name, n);
	memcpy(path + n, UDT_CS_NAME, sizeof(UDT_CS_NAME));
	return 0;
}

static int
udt_cs_bad(long r)
{
	return r < 0 && r > -4096;
}

static int
udt_cs_prot(uint32_t flags)
{
	return ((flags & PF_R) ? PROT_READ : 0) |
	    ((flags & PF_W) ? PROT_WRITE : 0) |
	    ((flags & PF_X) ? PROT_EXEC : 0);
}

/* Map segment ph of fd at base; 0 or -1. */
static int
udt_cs_seg(long fd, uintptr_t base, const Elf64_Phdr *ph)
{
	uintptr_t at = base + ph->p_vaddr, fend = at + ph->p_filesz;
	uintptr_t mend = at + ph->p_memsz;
	int prot = udt_cs_prot(ph->p_flags);

	if ((ph->p_vaddr & (UDT_PG - 1)) != (ph->p_offset & (UDT_PG - 1)) ||
	    ph->p_filesz > ph->p_memsz)
		return -1;
	if (ph->p_filesz > 0 && udt_cs_bad(udt_sys6(SYS_mmap,
	    (long)UDT_PGDN(at), (long)(UDT_PGUP(fend) - UDT_PGDN(at)), prot,
	    MAP_PRIVATE | MAP_FIXED, fd, (long)UDT_PGDN(ph->p_offset))))
		return -1;
	if (mend <= fend)
		return 0;
	/* The bss: the file page's tail zeroed, then pages of zeros. */
	if (!(prot & PROT_WRITE))
		return -1;
	if (UDT_PGUP(fend) > fend && ph->p_filesz > 0)
		memset((void *)fend, 0, UDT_PGUP(fend) - fend);
	if (UDT_PGUP(mend) > UDT_PGUP(fend) && udt_cs_bad(udt_sys6(SYS_mmap,
	    (long)UDT_PGUP(fend), (long)(UDT_PGUP(mend) - UDT_PGUP(fend)),
	    prot, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0)))
		return -1;
	return 0;
}

/* Apply the module's relocations, all relative; 0 or -1. */
static int
udt_cs_reloc(uintptr_t base, uintptr_t lo, uintptr_t hi,
    const Elf64_Phdr *dyn)
{
	const Elf64_Dyn *d;
	const Elf64_Rela *r = NULL;
	size_t relsz = 0, relent = 0, i, n;
	uint64_t v, rv = 0;

	if (dyn == NULL || dyn->p_vaddr < lo || dyn->p_memsz > hi - lo ||
	    dyn->p_vaddr - lo > hi - lo - dyn->p_memsz)
		return -1;
	n = dyn->p_memsz / sizeof(*d);
	d = (const Elf64_Dyn *)(base + dyn->p_vaddr);
	for (i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
		v = d[i].d_un.d_val;
		switch (d[i].d_tag) {
		case DT_RELA:
			if (v < lo || v >= hi)
				return -1;
			rv = v;
			r = (const Elf64_Rela *)(base + v);
			break;
		case DT_RELASZ:
			relsz = v;
			break;
		case DT_RELAENT:
			relent = v;
			break;
		case DT_NEEDED:
		case DT_INIT:
		case DT_INIT_ARRAY:
		case DT_PREINIT_ARRAY:
		case DT_REL:
		case DT_TEXTREL:
			return -1;
		case DT_PLTRELSZ:
			if (v != 0)
				return -1;
			break;
		default:
			break;
		}
	}
	if (relsz == 0)
		return 0;
	if (r == NULL || relent != sizeof(*r) || relsz % sizeof(*r) != 0 ||
	    relsz > hi - rv)
		return -1;
	for (i = 0; i < relsz / sizeof(*r); i++) {
		if (ELF64_R_TYPE(r[i].r_info) != R_X86_64_RELATIVE ||
		    r[i].r_offset < lo || r[i].r_offset > hi - 8)
			return -1;
		*(uint64_t *)(base + r[i].r_offset) = base +
		    (uint64_t)r[i].r_addend;
	}
	return 0;
}

static const struct udt_cs_ops *
udt_cs_map(long fd)
{
	struct stat st;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[UDT_CS_MAXPH];
	const Elf64_Phdr *dyn = NULL, *relro = NULL;
	const struct udt_cs_ops *ops;
	uintptr_t lo = UINTPTR_MAX, hi = 0, base, xlo = 0, xhi = 0;
	long m;
	int i;

	/* Past the file's end a mapped page is a SIGBUS: all within it. */
	if (udt_sys2(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    udt_sys4(SYS_pread64, fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(ph[0]) ||
	    eh.e_phnum == 0 || eh.e_phnum > UDT_CS_MAXPH ||
	    udt_sys4(SYS_pread64, fd, ph, eh.e_phnum * sizeof(ph[0]),
	    (long)eh.e_phoff) != (long)(eh.e_phnum * sizeof(ph[0])))
		return NULL;
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
		else if (ph[i].p_type == PT_GNU_RELRO)
			relro = &ph[i];
		else if (ph[i].p_type == PT_TLS || ph[i].p_type == PT_INTERP)
			return NULL;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr > (1UL << 40) || ph[i].p_memsz > (1UL << 30) ||
		    ph[i].p_offset > (uint64_t)st.st_size ||
		    ph[i].p_filesz > (uint64_t)st.st_size - ph[i].p_offset)
			return NULL;
		if (UDT_PGDN(ph[i].p_vaddr) < lo)
			lo = UDT_PGDN(ph[i].p_vaddr);
		if (UDT_PGUP(ph[i].p_vaddr + ph[i].p_memsz) > hi)
			hi = UDT_PGUP(ph[i].p_vaddr + ph[i].p_memsz);
		if (ph[i].p_flags & PF_X) {
			if (xhi != 0)
				return NULL;	/* one text, covered whole */
			xlo = ph[i].p_vaddr;
			xhi = ph[i].p_vaddr + ph[i].p_memsz;
		}
	}
	if (lo >= hi || xhi == 0 || eh.e_entry < lo ||
	    eh.e_entry > hi - sizeof(*ops))
		return NULL;
	m = udt_sys6(SYS_mmap, 0, (long)(hi - lo), PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (udt_cs_bad(m))
		return NULL;
	base = (uintptr_t)m - lo;
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && udt_cs_seg(fd, base, &ph[i]) != 0)
			goto fail;
	if (udt_cs_reloc(base, lo, hi, dyn) != 0)
		goto fail;
	if (relro != NULL && relro->p_memsz > 0)
		(void)udt_sys3(SYS_mprotect, UDT_PGDN(base + relro->p_vaddr),
		    UDT_PGDN(base + relro->p_vaddr + relro->p_memsz) -
		    UDT_PGDN(base + relro->p_vaddr), PROT_READ);
	ops = (const struct udt_cs_ops *)(base + eh.e_entry);
	if (ops->co_magic != UDT_CS_MAGIC ||
	    ops->co_size != sizeof(*ops) ||
	    ops->co_insnsize != sizeof(cs_insn) ||
	    ops->co_detailsize != sizeof(cs_detail) ||
	    ops->co_version != ((CS_API_MAJOR << 8) | CS_API_MINOR))
		goto fail;
	udt_rw_cover(base + xlo, base + xhi);
	return ops;
fail:
	(void)udt_sys2(SYS_munmap, m, (long)(hi - lo));
	return NULL;
}

const struct udt_cs_ops *
udt_rw_csload(void)
{
	char path[4096];
	long fd;

	if (udt_cs_tried)
		return udt_cs;
	udt_cs_tried = 1;
	if (udt_cs_path(path, sizeof(path)) != 0) {
		if (udt_rw_debug)
			udt_rw_cache_say("rewrite: ", "no disassembler: the "
			    "library's own directory is not known", NULL,
			    NULL);
		return NULL;
	}
	fd = udt_sys3(SYS_open, path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
	if (fd >= 0) {
		udt_cs = udt_cs_map(fd);
		udt_sys1(SYS_close, fd);
	}
	if (udt_cs == NULL && udt_rw_debug)
		udt_rw_cache_say("rewrite: ", "no disassembler: ", path,
		    fd < 0 ? " cannot be opened" : " is not this library's "
		    "module");
	return udt_cs;
}
