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
 * syscall_systab TSV
 *
 * The generated syscall table against OpenBSD's numbers (TSV is
 * openbsd-syscalls.tsv): every probe number below 1024 names the OpenBSD
 * call of that number, every Linux-only call is 1024 + its Linux number
 * and has no OpenBSD namesake left unmapped, numbers ascend, the
 * look-ups btrace uses answer both names, every number of the x86-64
 * table has an entry, and the string arguments are where the kernel
 * reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "systab.h"

static unsigned int	nfail;

static void
fail(const char *what, const struct systab_ent *se)
{
	printf("FAIL: %s: sys%%%u (%s / %s)\n", what, se->se_num, se->se_name,
	    se->se_linux_name);
	nfail++;
}

int
main(int argc, char *argv[])
{
	static char obsd[1024][64];
	char line[256], name[64];
	FILE *f;
	unsigned int i, n, last = 0, j;

	if (argc != 2 || (f = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "usage: syscall_systab openbsd-syscalls.tsv\n");
		return 2;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		if (line[0] != '#' && sscanf(line, "%u\t%63s", &n, name) == 2 &&
		    n < 1024 && name[0] != '#')
			snprintf(obsd[n], sizeof(obsd[n]), "%s", name);
	fclose(f);

	for (i = 0; i < SYSTAB_COUNT; i++) {
		const struct systab_ent *se = &systab[i];

		if (se->se_num <= last)
			fail("not ascending", se);
		last = se->se_num;
		if (se->se_num < SYSTAB_LINUX_ONLY) {
			if (strcmp(obsd[se->se_num], se->se_name) != 0)
				fail("OpenBSD name differs", se);
		} else if (strncmp(se->se_name, "linux_", 6) == 0) {
			/* Its Linux name is an OpenBSD name mapped elsewhere. */
			if (se->se_num != SYSTAB_LINUX_ONLY + se->se_linux ||
			    strcmp(se->se_name + 6, se->se_linux_name) != 0 ||
			    systab_lookup(se->se_linux_name) < 1 ||
			    systab_lookup(se->se_linux_name) >=
			    SYSTAB_LINUX_ONLY)
				fail("renamed Linux-only call", se);
		} else {
			if (se->se_num != SYSTAB_LINUX_ONLY + se->se_linux ||
			    strcmp(se->se_name, se->se_linux_name) != 0)
				fail("Linux-only numbering", se);
			for (j = 1; j < 1024; j++)
				if (strcmp(obsd[j], se->se_linux_name) == 0)
					fail("OpenBSD has it: map it", se);
		}
		for (j = 0; j < SYSTAB_COUNT; j++)
			if (j != i && strcmp(systab[j].se_name, se->se_name) == 0)
				fail("two probes of one name", se);
		if (se->se_strargs >> se->se_nargs)
			fail("string argument past nargs", se);
		if (systab_by_num(se->se_num) != se ||
		    systab_by_linux(se->se_linux) != se ||
		    strcmp(systab_name(se->se_num), se->se_name) != 0)
			fail("look-up by number", se);
		if (systab_lookup(se->se_name) != se->se_num)
			fail("look-up by name", se);
		/* A Linux name that is also another call's OpenBSD name. */
		if (systab_lookup(se->se_linux_name) != se->se_num &&
		    systab_by_num((unsigned int)systab_lookup(
		    se->se_linux_name)) == NULL)
			fail("look-up by Linux name", se);
		if (se->se_nargs > 6 || strchr("iulnv", se->se_ret) == NULL)
			fail("nargs/ret", se);
	}
	/* The decisions syscalls.tsv documents. */
	if (systab_lookup("exit") != 1 || systab_lookup("exit_group") != 1 ||
	    systab_lookup("openat") != 321 || systab_lookup("read") != 3 ||
	    systab_lookup("gettid") != 299 || systab_lookup("pread64") != 169 ||
	    systab_lookup("tgkill") != 1024 + 234 ||
	    systab_lookup("no_such_call") != -1 || systab_name(0) != NULL ||
	    systab_by_linux(-1) != NULL || systab_by_linux(100000) != NULL ||
	    systab_lookup("__threxit") != 302 || systab_by_linux(60)->se_num !=
	    302 || systab_lookup("futex") != 83 ||
	    systab_lookup("rt_sigreturn") != 103 ||
	    systab_lookup("clone3") != 1024 + 435 ||
	    systab_lookup("io_uring_enter") != 1024 + 426 ||
	    systab_lookup("getdents") != 99 ||
	    systab_lookup("linux_getdents") != 1024 + 78 ||
	    systab_by_linux(56) == NULL || systab_by_linux(56)->se_num !=
	    1024 + 56) {
		printf("FAIL: documented mappings\n");
		nfail++;
	}
	/*
	 * Every number of the x86-64 table (Linux 6.1): 0..334, then the
	 * numbers shared by every architecture from 424 on; 335..423 are
	 * not used on x86-64.
	 */
	for (j = 0; j < SYSTAB_LINUX_MAX; j++) {
		int want = j <= 334 || (j >= 424 && j <= 450);

		if ((systab_by_linux(j) != NULL) != want) {
			printf("FAIL: Linux number %u %s\n", j,
			    want ? "missing" : "unexpected");
			nfail++;
		}
	}
	/* Strings: where the kernel reads a path or a name. */
	{
		static const struct {
			const char	*name;
			unsigned int	 mask;
		} s[] = {
			{ "open", 0x1 }, { "openat", 0x2 }, { "rename", 0x3 },
			{ "renameat2", 0xa }, { "mount", 0x7 },
			{ "execve", 0x1 }, { "symlinkat", 0x5 },
			{ "memfd_create", 0x1 }, { "fanotify_mark", 0x10 },
			{ "openat2", 0x2 }, { "read", 0 }, { "write", 0 },
			{ "close", 0 }, { "futex", 0 },
		};
		const struct systab_ent *se;

		for (j = 0; j < sizeof(s) / sizeof(s[0]); j++) {
			se = systab_by_num((unsigned int)systab_lookup(
			    s[j].name));
			if (se == NULL || se->se_strargs != s[j].mask) {
				printf("FAIL: string arguments of %s\n",
				    s[j].name);
				nfail++;
			}
		}
	}
	printf("%u entries checked, %u failed\n", SYSTAB_COUNT, nfail);
	return nfail != 0;
}
