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
 * libuserdt-preload-cs.so, beside the library, the first time a pass decodes.
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
 * A module is taken only if it is laid out as the linker lays one out:
 * loadable segments in order, apart, none both writable and executable,
 * one text, memory past the file's part only in a writable one; its
 * dynamic section and table within the file's part of a readable
 * segment, its relocations within a read-only one, every relocation's
 * target within a writable one; every entry point in the text; its
 * .eh_frame_hdr whole, else the unwinder is not told of it.  Its data
 * stay writable (no RELRO): a layout the checks above cannot tell from
 * a spoiled one would fault.  A module that is otherwise is not
 * this build's, and a check is cheaper than a crash of the program.
 * Where it is looked for is fixed by the constructor, from the path
 * its look at itself found (udt_init()): the library's directory then,
 * made absolute, whatever the program's chdir() since.  A failure that may pass (out of descriptors or
 * memory) is tried again at the next decoding; others are final.
 *
 * Frames of the module are the tracer's: the unwinders know its text
 * (udt_unw_ours_also(), udt_cfi_also()), cut it, and walk on to the
 * program's; dtd, whose snapshot of the process predates the module,
 * is told its text in the ring's header (rh_cslo, rh_cshi), in every
 * ring the process attaches with (udt_rw_cs_announce()).
 *
 * Concurrency contract: the rewriter's pass alone ([w]: the constructor,
 * or a later pass under the loader's lock); raw system calls only.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_cs.h"
#include "udt_rw_plan.h"
#include "udt_cfi.h"
#include "udt_unw.h"
#include "udt_cs_mod.h"

#define UDT_CS_NAME	"libuserdt-preload-cs.so"
#define UDT_CS_MAXPH	16
#define UDT_CS_MAXLOAD	4
#define UDT_PG		4096UL
#define UDT_PGDN(x)	((x) & ~(UDT_PG - 1))
#define UDT_PGUP(x)	(((x) + UDT_PG - 1) & ~(UDT_PG - 1))

static const struct udt_cs_ops *udt_cs;		/* [w] the table */
static uintptr_t	 udt_cs_xlo, udt_cs_xhi;	/* [a] its text, hi last */
static int		 udt_cs_final;		/* [w] no more tries */
/*
 * The module's path, made when it is first needed, and the library's
 * own, absolute, from the loader (its link map's name, which lives as
 * long as the library): a start that decodes nothing writes no page
 * for it.  A relative one is made at once, from the directory the
 * loader started in, which may change.  [w]
 */
static UDT_LBSS char	 udt_cs_where[PATH_MAX];
static const char	*udt_cs_self;
static int		 udt_cs_made;	/* udt_cs_where is made */

/* The module's path beside self's, into udt_cs_where, or "". */
static void
udt_cs_path(const char *self)
{
	const char *slash;
	size_t n, at = 0;
	long r;

	if ((slash = strrchr(self, '/')) == NULL)
		goto none;
	if (self[0] != '/') {
		r = udt_sys2(SYS_getcwd, udt_cs_where, sizeof(udt_cs_where));
		if (r <= 1 || udt_cs_where[0] != '/')
			goto none;
		at = strlen(udt_cs_where);
		udt_cs_where[at++] = '/';
	}
	n = (size_t)(slash - self) + 1;
	if (at + n + sizeof(UDT_CS_NAME) > sizeof(udt_cs_where))
		goto none;
	memcpy(udt_cs_where + at, self, n);
	memcpy(udt_cs_where + at + n, UDT_CS_NAME, sizeof(UDT_CS_NAME));
	udt_cs_made = 1;
	return;
none:
	udt_cs_where[0] = '\0';
	udt_cs_made = 1;
}

void
udt_rw_cswhere(const char *self)
{
	if (udt_cs_self != NULL || udt_cs_made || self == NULL ||
	    strchr(self, '/') == NULL)
		return;
	/* A relative LD_PRELOAD: from the directory the loader started in. */
	if (self[0] != '/')
		udt_cs_path(self);
	else
		udt_cs_self = self;
}

/* Whether an error may pass: the next decoding tries again. */
static int
udt_cs_passing(long r)
{
	return r == -EMFILE || r == -ENFILE || r == -ENOMEM || r == -EINTR ||
	    r == -EAGAIN;
}

static int
udt_cs_prot(uint32_t flags)
{
	return ((flags & PF_R) ? PROT_READ : 0) |
	    ((flags & PF_W) ? PROT_WRITE : 0) |
	    ((flags & PF_X) ? PROT_EXEC : 0);
}

/*
 * Whether [v, v + len) lies in one loadable segment with the flags want
 * and none of deny: within its file's part if file, else within its
 * memory.
 */
static int
udt_cs_within(const Elf64_Phdr *const *ld, int nld, uint64_t v,
    uint64_t len, uint32_t want, uint32_t deny, int file)
{
	uint64_t span;
	int i;

	for (i = 0; i < nld; i++) {
		span = file ? ld[i]->p_filesz : ld[i]->p_memsz;
		if ((ld[i]->p_flags & want) == want &&
		    (ld[i]->p_flags & deny) == 0 && v >= ld[i]->p_vaddr &&
		    len <= span && v - ld[i]->p_vaddr <= span - len)
			return 1;
	}
	return 0;
}

/*
 * Whether the .eh_frame_hdr at v is one the library's unwinder reads
 * (udt_cfi.c): version 1, a 4-byte pointer, a 4-byte count, a table of
 * 4-byte pairs, all of it in the file's part of a read-only segment.
 */
static int
udt_cs_ehok(uintptr_t base, const Elf64_Phdr *const *ld, int nld,
    uint64_t v)
{
	const uint8_t *h = (const uint8_t *)(base + v);
	uint32_t count;

	if (!udt_cs_within(ld, nld, v, 12, PF_R, PF_W, 1) || h[0] != 1 ||
	    h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	memcpy(&count, h + 8, 4);
	return udt_cs_within(ld, nld, v, 12 + 8 * (uint64_t)count, PF_R,
	    PF_W, 1);
}

/* USERDT_REWRITE=debug: where the module's text went (the tests'). */
static void
udt_cs_say_text(uintptr_t lo, uintptr_t hi)
{
	char buf[40];
	uintptr_t v[2] = { lo, hi };
	size_t at = 0;
	int i, k;

	for (k = 0; k < 2; k++) {
		buf[at++] = k == 0 ? '0' : '-';
		if (k == 1)
			buf[at++] = '0';
		buf[at++] = 'x';
		for (i = 60; i >= 0; i -= 4)
			buf[at++] = "0123456789abcdef"[(v[k] >> i) & 15];
	}
	buf[at] = '\0';
	udt_rw_cache_say("rewrite: ", "disassembler text at ", buf, NULL);
}

/* Map segment ph of fd at base; 0, or the error. */
static long
udt_cs_seg(long fd, uintptr_t base, const Elf64_Phdr *ph)
{
	uintptr_t at = base + ph->p_vaddr, fend = at + ph->p_filesz;
	uintptr_t mend = at + ph->p_memsz;
	int prot = udt_cs_prot(ph->p_flags);
	long r;

	if (ph->p_filesz > 0 && udt_sys_failed(r = udt_sys6(SYS_mmap,
	    (long)UDT_PGDN(at), (long)(UDT_PGUP(fend) - UDT_PGDN(at)), prot,
	    MAP_PRIVATE | MAP_FIXED, fd, (long)UDT_PGDN(ph->p_offset))))
		return r;
	if (mend <= fend)
		return 0;
	/* The bss: the file page's tail zeroed, then pages of zeros. */
	if (UDT_PGUP(fend) > fend)
		memset((void *)fend, 0, UDT_PGUP(fend) - fend);
	if (UDT_PGUP(mend) > UDT_PGUP(fend) && udt_sys_failed(r = udt_sys6(
	    SYS_mmap, (long)UDT_PGUP(fend), (long)(UDT_PGUP(mend) -
	    UDT_PGUP(fend)), prot, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
	    -1, 0)))
		return r;
	return 0;
}

/* Apply the module's relocations, all relative; 0 or -1. */
static int
udt_cs_reloc(uintptr_t base, const Elf64_Phdr *const *ld, int nld,
    const Elf64_Phdr *dyn)
{
	const Elf64_Dyn *d;
	const Elf64_Rela *r = NULL;
	size_t relsz = 0, relent = 0, i, n;
	uint64_t v, rv = 0;

	if (dyn == NULL || !udt_cs_within(ld, nld, dyn->p_vaddr,
	    dyn->p_memsz, PF_R, 0, 1))
		return -1;
	n = dyn->p_memsz / sizeof(*d);
	d = (const Elf64_Dyn *)(base + dyn->p_vaddr);
	for (i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
		v = d[i].d_un.d_val;
		switch (d[i].d_tag) {
		case DT_RELA:
			rv = v;
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
	if (relent != sizeof(*r) || relsz % sizeof(*r) != 0 ||
	    !udt_cs_within(ld, nld, rv, relsz, PF_R, PF_W, 1))
		return -1;
	r = (const Elf64_Rela *)(base + rv);
	for (i = 0; i < relsz / sizeof(*r); i++)
		if (ELF64_R_TYPE(r[i].r_info) != R_X86_64_RELATIVE ||
		    !udt_cs_within(ld, nld, r[i].r_offset, 8, PF_W, 0, 0))
			return -1;
	for (i = 0; i < relsz / sizeof(*r); i++)
		*(uint64_t *)(base + r[i].r_offset) = base +
		    (uint64_t)r[i].r_addend;
	return 0;
}

/* Whether the table is this build's and points into the text only. */
static int
udt_cs_table(const struct udt_cs_ops *ops, uintptr_t xlo, uintptr_t xhi)
{
	const void *fn[] = { (const void *)ops->co_open,
	    (const void *)ops->co_option, (const void *)ops->co_malloc,
	    (const void *)ops->co_disasm_iter, (const void *)ops->co_free,
	    (const void *)ops->co_close };
	size_t i;

	if (ops->co_magic != UDT_CS_MAGIC || ops->co_size != sizeof(*ops) ||
	    ops->co_insnsize != sizeof(cs_insn) ||
	    ops->co_detailsize != sizeof(cs_detail) ||
	    ops->co_version != ((CS_API_MAJOR << 8) | CS_API_MINOR))
		return 0;
	for (i = 0; i < sizeof(fn) / sizeof(fn[0]); i++)
		if ((uintptr_t)fn[i] < xlo || (uintptr_t)fn[i] >= xhi)
			return 0;
	return 1;
}

/* The table of the module fd holds, mapped; NULL with *err its error. */
static const struct udt_cs_ops *
udt_cs_map(long fd, long *err)
{
	struct stat st;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[UDT_CS_MAXPH];
	const Elf64_Phdr *ld[UDT_CS_MAXLOAD], *dyn = NULL;
	const Elf64_Phdr *ehf = NULL, *x = NULL;
	const struct udt_cs_ops *ops;
	uintptr_t lo, hi, base;
	long m;
	int i, nld = 0;

	*err = 0;
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
		switch (ph[i].p_type) {
		case PT_DYNAMIC:
			dyn = &ph[i];
			continue;
		case PT_GNU_EH_FRAME:
			ehf = &ph[i];
			continue;
		case PT_TLS:
		case PT_INTERP:
			return NULL;
		case PT_LOAD:
			break;
		default:
			continue;
		}
		/*
		 * In order, apart, within the file, no page both writable
		 * and executable, one text, a bss only after file bytes.
		 */
		if (nld == UDT_CS_MAXLOAD || ph[i].p_vaddr > (1UL << 40) ||
		    ph[i].p_memsz > (1UL << 30) ||
		    ph[i].p_filesz > ph[i].p_memsz || ph[i].p_filesz == 0 ||
		    (ph[i].p_vaddr & (UDT_PG - 1)) !=
		    (ph[i].p_offset & (UDT_PG - 1)) ||
		    ph[i].p_offset > (uint64_t)st.st_size ||
		    ph[i].p_filesz > (uint64_t)st.st_size - ph[i].p_offset ||
		    (ph[i].p_flags & (PF_W | PF_X)) == (PF_W | PF_X) ||
		    (ph[i].p_memsz > ph[i].p_filesz &&
		    !(ph[i].p_flags & PF_W)) ||
		    (nld > 0 && UDT_PGDN(ph[i].p_vaddr) < UDT_PGUP(
		    ld[nld - 1]->p_vaddr + ld[nld - 1]->p_memsz)))
			return NULL;
		if (ph[i].p_flags & PF_X) {
			if (x != NULL)
				return NULL;
			x = &ph[i];
		}
		ld[nld++] = &ph[i];
	}
	if (nld == 0 || x == NULL || !udt_cs_within(ld, nld, eh.e_entry,
	    sizeof(*ops), PF_R, 0, 1))
		return NULL;
	lo = UDT_PGDN(ld[0]->p_vaddr);
	hi = UDT_PGUP(ld[nld - 1]->p_vaddr + ld[nld - 1]->p_memsz);
	m = udt_sys6(SYS_mmap, 0, (long)(hi - lo), PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (udt_sys_failed(m)) {
		*err = m;
		return NULL;
	}
	base = (uintptr_t)m - lo;
	for (i = 0; i < nld; i++)
		if ((*err = udt_cs_seg(fd, base, ld[i])) != 0)
			goto fail;
	if (udt_cs_reloc(base, ld, nld, dyn) != 0)
		goto fail;
	ops = (const struct udt_cs_ops *)(base + eh.e_entry);
	if (!udt_cs_table(ops, base + x->p_vaddr, base + x->p_vaddr +
	    x->p_memsz))
		goto fail;
	udt_rw_cover(base + x->p_vaddr, base + x->p_vaddr + x->p_memsz);
	if (udt_rw_debug)
		udt_cs_say_text(base + x->p_vaddr, base + x->p_vaddr +
		    x->p_memsz);
	__atomic_store_n(&udt_cs_xlo, base + x->p_vaddr, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_cs_xhi, base + x->p_vaddr + x->p_memsz,
	    __ATOMIC_RELEASE);
	/*
	 * Against an attach publishing a new ring meanwhile (it announces
	 * after its store, fenced too): one of the two sees the other.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	udt_rw_cs_announce(__atomic_load_n(&udt_ring, __ATOMIC_ACQUIRE));
	udt_unw_ours_also(base + x->p_vaddr, base + x->p_vaddr + x->p_memsz);
	if (ehf != NULL && udt_cs_ehok(base, ld, nld, ehf->p_vaddr))
		udt_cfi_also(base + x->p_vaddr, base + x->p_vaddr +
		    x->p_memsz, base + ehf->p_vaddr);
	return ops;
fail:
	(void)udt_sys2(SYS_munmap, m, (long)(hi - lo));
	return NULL;
}

void
udt_rw_cs_announce(struct udt_ring_hdr *r)
{
	uintptr_t hi = __atomic_load_n(&udt_cs_xhi, __ATOMIC_ACQUIRE);

	if (r == NULL || hi == 0)
		return;
	__atomic_store_n(&r->rh_cslo, (uint64_t)__atomic_load_n(&udt_cs_xlo,
	    __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&r->rh_cshi, (uint64_t)hi, __ATOMIC_RELEASE);
}

const struct udt_cs_ops *
udt_rw_csload(void)
{
	long fd, err = 0;

	if (udt_cs != NULL || udt_cs_final)
		return udt_cs;
	if (!udt_cs_made && udt_cs_self != NULL)
		udt_cs_path(udt_cs_self);
	if (udt_cs_where[0] == '\0') {
		udt_cs_final = 1;
		if (udt_rw_debug)
			udt_rw_cache_say("rewrite: ", "no disassembler: the "
			    "library's own directory is not known", NULL,
			    NULL);
		return NULL;
	}
	fd = udt_sys3(SYS_open, udt_cs_where, O_RDONLY | O_CLOEXEC |
	    O_NOCTTY, 0);
	if (fd >= 0) {
		udt_cs = udt_cs_map(fd, &err);
		udt_sys1(SYS_close, fd);
	} else
		err = fd;
	if (udt_cs == NULL && !udt_cs_passing(err))
		udt_cs_final = 1;
	if (udt_cs == NULL && udt_rw_debug)
		udt_rw_cache_say("rewrite: ", "no disassembler: ",
		    udt_cs_where, fd < 0 ? " cannot be opened" :
		    udt_cs_final ? " is not this library's module" :
		    " cannot be mapped now");
	return udt_cs;
}
