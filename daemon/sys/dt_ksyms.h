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
 * A /dev/ksyms for unmodified OpenBSD clients: btrace(8) symbolises
 * kernel stacks from an ELF image at that path, reading the STT_FUNC
 * entries of its .symtab/.strtab, and has no other source of kernel
 * symbols.  Linux publishes them as text in /proc/kallsyms, so dtd turns
 * that text into such an image when it starts.
 *
 * Concurrency contract: every function is reentrant and keeps no state;
 * callers serialise writers of the same output path themselves.
 */
#ifndef DT_KSYMS_H
#define DT_KSYMS_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>

#define DT_KALLSYMS	"/proc/kallsyms"

struct dt_ksyms_stats {
	size_t		dks_nsyms;	/* text symbols written */
	bool		dks_hidden;	/* kptr_restrict hid every address */
	dev_t		dks_dev;	/* the file installed */
	ino_t		dks_ino;
};

/*
 * Build an ELF image with one STT_FUNC symbol per text symbol of the
 * kallsyms-format file at src, and install it at dst atomically (a
 * temporary file beside dst renamed over it) with owner uid, group gid
 * and mode, which the file has before it holds a byte.  When every
 * address reads as zero (kptr_restrict, not root) the image has an empty
 * symbol table, so clients print raw addresses instead of wrong names.
 * Returns 0, or an errno with a message for the operator in err.
 */
int	dt_ksyms_write(const char *src, const char *dst, uid_t uid,
	    gid_t gid, mode_t mode, struct dt_ksyms_stats *, char *err,
	    size_t errlen);

/*
 * Remove the image dt_ksyms_write() installed at dst as st describes,
 * unless another writer (a second dtd) has replaced it since.  0 (also
 * when there was nothing of ours to remove) or an errno.
 */
int	dt_ksyms_remove(const char *dst, const struct dt_ksyms_stats *st);

#endif /* DT_KSYMS_H */
