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
 * The disassembler's module (libuserdt-preload-cs.so, udt_cs_mod.c) and what the
 * preload library sees of it: one table of entry points, the module's
 * ELF entry, found and mapped by the library's own loader
 * (udt_rw_csload.c), never by the program's.
 *
 * Why a module: Capstone's tables of pointers are relocated, so written,
 * by the loader of every traced process at every exec, some ten pages
 * copied and faulted, and two thousand relocations, for a decoder that
 * a start with its plans cached (udt_rw_plan.c) never runs.  Apart, it
 * is mapped only by a pass that decodes.
 *
 * The module links against nothing: what of libc Capstone's amd64 part
 * calls is in the module, hidden (memcpy and the like, a heap sort for
 * qsort), and its memory and vsnprintf come from the library through
 * CS_OPT_MEM before anything else.  Its relocations are all relative.
 */
#ifndef UDT_CS_MOD_H
#define UDT_CS_MOD_H

#include <stdbool.h>
#include <stdint.h>

#include <capstone/capstone.h>

#define UDT_CS_MAGIC	0x31736374647475ULL	/* "udtdcs1" */

/* [I] once the module is mapped. */
struct udt_cs_ops {
	uint64_t	co_magic;		/* UDT_CS_MAGIC */
	uint32_t	co_size;		/* sizeof(struct udt_cs_ops) */
	uint32_t	co_insnsize;		/* sizeof(cs_insn), as built */
	uint32_t	co_detailsize;		/* sizeof(cs_detail) */
	uint32_t	co_version;		/* cs_version(), as built */
	cs_err		(*co_open)(cs_arch, cs_mode, csh *);
	cs_err		(*co_option)(csh, cs_opt_type, size_t);
	cs_insn		*(*co_malloc)(csh);
	bool		(*co_disasm_iter)(csh, const uint8_t **, size_t *,
			    uint64_t *, cs_insn *);
	void		(*co_free)(cs_insn *, size_t);
	cs_err		(*co_close)(csh *);
};

#endif /* UDT_CS_MOD_H */
