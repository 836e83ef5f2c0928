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
 * The auxiliary vector's parser dtd and the launcher's helper share
 * (include/userdt/udt_auxv.h), on vectors made here as the kernel makes
 * them: a 64-bit process's, secure or not, and a compat (i386, x32)
 * process's of 32-bit pairs, whose (AT_SECURE, 0) read as 64-bit words
 * would say secure; a vector cut short or too long; and this process's
 * own through dtd's reader (dt_proc_secure()).  No i386 toolchain is
 * needed: the 32-bit vector is laid out here word by word.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_auxv.h>

#include "dt_proc.h"
#include "dtt.h"

/* A 64-bit vector, the entries a kernel puts first, secure or not. */
static size_t
vec64(uint64_t *v, int secure, uint64_t phent)
{
	const uint64_t e[] = {
		AT_SYSINFO_EHDR, 0x7ffd12345000ULL, AT_HWCAP, 0x178bfbff,
		AT_PAGESZ, 4096, AT_CLKTCK, 100, AT_PHDR, 0x400040,
		AT_PHENT, phent, AT_PHNUM, 13, AT_BASE, 0x7f0000000000ULL,
		AT_FLAGS, 0, AT_ENTRY, 0x401000, AT_UID, 1000, AT_EUID, 0,
		AT_GID, 1000, AT_EGID, 1000, AT_SECURE, (uint64_t)secure,
		AT_RANDOM, 0x7ffd00001000ULL, AT_EXECFN, 0x7ffd00002000ULL,
		AT_PLATFORM, 0x7ffd00003000ULL, AT_NULL, 0
	};

	memcpy(v, e, sizeof(e));
	return sizeof(e);
}

/*
 * The same as a 32-bit process's: pairs of 32-bit words, in the order
 * of a kernel's (ARCH_DLINFO_IA32 first), which puts (AT_SECURE, 0) at
 * an even 64-bit word, followed by a non-zero one.
 */
static size_t
vec32(uint64_t *v, int secure)
{
	const uint32_t e[] = {
		AT_SYSINFO, 0xf7f8e550, AT_SYSINFO_EHDR, 0xf7f8e000,
		AT_MINSIGSTKSZ, 2032, AT_HWCAP, 0x178bfbff,
		AT_PAGESZ, 4096, AT_CLKTCK, 100,
		AT_PHDR, 0x8048034, AT_PHENT, sizeof(Elf32_Phdr),
		AT_PHNUM, 9, AT_BASE, 0xf7f90000, AT_FLAGS, 0,
		AT_ENTRY, 0x8049000, AT_UID, 1000, AT_EUID, 1000,
		AT_GID, 1000, AT_EGID, 1000, AT_SECURE, (uint32_t)secure,
		AT_RANDOM, 0xffd0100b, AT_EXECFN, 0xffd01fe8,
		AT_PLATFORM, 0xffd0101b, AT_NULL, 0
	};

	memcpy(v, e, sizeof(e));
	return sizeof(e);
}

/* The reading this parser replaced: 64-bit pairs, whatever the class. */
static int
naive(const uint64_t *v, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len / sizeof(v[0]); i += 2) {
		if (v[i] == AT_NULL)
			break;
		if (v[i] == AT_SECURE)
			return v[i + 1] != 0;
	}
	return -1;
}

int
main(void)
{
	uint64_t v[UDT_AUXV_WORDS + 8];
	size_t n, i;
	int r;

	dtt_tag("auxv");
	n = vec64(v, 1, sizeof(Elf64_Phdr));
	dtt_check(udt_auxv_secure(v, n) == 1, "a 64-bit secure vector: 1");
	n = vec64(v, 0, sizeof(Elf64_Phdr));
	dtt_check(udt_auxv_secure(v, n) == 0, "a 64-bit vector: 0");

	/* the reviewer's case: AT_SECURE 0, in 32-bit pairs */
	n = vec32(v, 0);
	dtt_check(naive(v, n) == 1, "a 32-bit vector read as 64-bit "
	    "pairs says secure: the case this guards against");
	r = udt_auxv_secure(v, n);
	dtt_check(r == -1, "a 32-bit vector, "
	    "not secure: %d, want -1 (cannot tell), not 1", r);
	n = vec32(v, 1);
	r = udt_auxv_secure(v, n);
	dtt_check(r == -1, "a 32-bit vector, "
	    "secure: %d, want -1", r);

	/* a 64-bit vector whose AT_PHENT is not a 64-bit image's */
	n = vec64(v, 0, sizeof(Elf32_Phdr));
	dtt_check(udt_auxv_secure(v, n) == -1, "AT_PHENT of 32: -1");

	/* cut before its AT_NULL, and before its AT_SECURE */
	n = vec64(v, 1, sizeof(Elf64_Phdr));
	dtt_check(udt_auxv_secure(v, n - 2 * sizeof(v[0])) == -1,
	    "no AT_NULL: -1");
	dtt_check(udt_auxv_secure(v, 12 * sizeof(v[0])) == -1,
	    "cut after AT_PHENT: -1");
	dtt_check(udt_auxv_secure(v, 0) == -1, "empty: -1");

	/* longer than the bound: a buffer read full is no kernel's */
	for (i = 0; i < UDT_AUXV_WORDS + 8; i++)
		v[i] = (i & 1) ? 0 : AT_FLAGS;
	(void)vec64(v + 2 * (UDT_AUXV_PAIRS - 20), 1, sizeof(Elf64_Phdr));
	dtt_check(udt_auxv_secure(v, UDT_AUXV_PAIRS * 2 * sizeof(v[0])) ==
	    1, "AT_NULL as the bound's last pair: 1");
	dtt_check(udt_auxv_secure(v, UDT_AUXV_WORDS * sizeof(v[0])) == -1,
	    "a word past the bound: -1");

	/* this process's own, through dtd's reader: not secure */
	r = dt_proc_secure(getpid());
	dtt_check(r == 0, "dt_proc_secure() "
	    "of this process: %d, want 0 (%s)", r, r == -1 ?
	    strerror(errno) : "");
	return dtt_done();
}
