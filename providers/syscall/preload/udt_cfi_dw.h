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
 * What udt_cfi.c and udt_cfi_expr.c share: the readers of DWARF's
 * encodings and of stack memory.  Same contract as udt_cfi.h.
 */
#ifndef UDT_CFI_DW_H
#define UDT_CFI_DW_H

#include <stdbool.h>
#include <stdint.h>

#include "udt_cfi.h"

/* Reads of another module's data and of other frames' stack slots are
 * no sanitizer's business (the sampler's test builds these sanitized). */
#define UDT_CFI_RAW	__attribute__((no_sanitize("address", "undefined")))

/* The 8 bytes at addr, of any page: 0, or -1 where none is readable. */
int	udt_cfi_read(struct udt_cfi_cur *, uint64_t addr, uint64_t *v);
/* LEB128 and fixed-size little-endian fields at *pp, never past end. */
uint64_t	udt_cfi_uleb(const uint8_t **pp, const uint8_t *end);
int64_t	udt_cfi_sleb(const uint8_t **pp, const uint8_t *end);
uint64_t	udt_cfi_fixed(const uint8_t **pp, const uint8_t *end,
	    unsigned int n, bool sign, bool *bad);
/* A DWARF expression with initial on its stack: 0 and *out, or -1. */
int	udt_cfi_expr(struct udt_cfi_cur *, const uint8_t *p, uint64_t len,
	    uint64_t initial, uint64_t *out);

#endif /* UDT_CFI_DW_H */
