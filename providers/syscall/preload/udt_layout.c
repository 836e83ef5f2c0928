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
 * The library's layout (issue 20).  A start reads the library's text in
 * 64 kB blocks, a fault each (the kernel maps a file's pages that many
 * at a read fault).  Its read-only data, some 32 kB that every start
 * reads a little of (the call tables, the environment's names), must
 * not straddle two: udt_layout.ld starts it at a block, whatever the code
 * before it comes to.
 */

/*
 * The loader runs an object's DT_FINI at exit: the library's is this,
 * not crti.o's _fini (which does nothing either: the destructors are in
 * .fini_array), whose .fini section lies just before the read-only data,
 * in the block before it, which only the exit would then fault in.
 */
__attribute__((section(".text.hot.udt_start"))) void	udt_fini(void);

void
udt_fini(void)
{
}

