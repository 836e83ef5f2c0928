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
 * Capstone as the rewriter uses it (udt_rw_cs.c), from its module
 * (udt_cs_mod.h), mapped by udt_rw_csload() (udt_rw_csload.c) at the
 * first decoding: the table, or NULL if it cannot be (tried again at
 * the next only after a failure that may pass).  udt_rw_cswhere(self):
 * where the module is, beside self, the library's path as the loader
 * has it; the constructor, before the program can chdir().  udt_rw_cs_open(): the module mapped, its memory the arena
 * [base, base + len), amd64 with details, one instruction's room: 0,
 * or -1.  udt_rw_cs_next(): cs_disasm_iter().  udt_rw_cs_close(): the
 * instruction and the handle, after a successful open.
 * udt_rw_cs_group(): whether the decoded instruction is in a group.
 * All from the rewriter's pass alone.
 */
#ifndef UDT_RW_CS_H
#define UDT_RW_CS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

struct udt_cs_ops;
struct udt_ring_hdr;

const struct udt_cs_ops *udt_rw_csload(void);
void	udt_rw_cswhere(const char *self);
/*
 * Tell dtd, in ring r's header, where the module's text is, if it is
 * mapped: after the module is, and at each attach.  Any thread.
 */
void	udt_rw_cs_announce(struct udt_ring_hdr *r);
int	udt_rw_cs_open(void *, size_t, csh *, cs_insn **);
bool	udt_rw_cs_next(csh, const uint8_t **, size_t *, uint64_t *,
	    cs_insn *);
void	udt_rw_cs_close(csh *, cs_insn *);
int	udt_rw_cs_group(const cs_insn *, uint8_t);

#endif /* UDT_RW_CS_H */
