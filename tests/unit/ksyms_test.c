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
 * dt_ksyms_write(): a kallsyms text in, an ELF image out that a libelf
 * reader such as btrace's kelf_open() takes: STT_FUNC symbols in
 * .symtab/.strtab with the right addresses, sizes and bindings, locals
 * first, and clear errors on bad input.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_ksyms.h"

/* An unusual mode, so the check sees it was applied, not defaulted. */
#define KT_MODE		0640

static unsigned int	npass, nfail;
static char		tmpdir[] = "/tmp/ksyms_test.XXXXXX";

static bool
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		npass++;
	else
		nfail++;
	return ok;
}

static char *
tpath(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void
put(const char *name, const char *text)
{
	FILE *fp = fopen(tpath(name), "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) == EOF) {
		perror(name);
		exit(2);
	}
}

static long long
filesize(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) ?
	    (long long)sb.st_size : -1;
}

static bool
isfifo(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

struct sym {
	char		name[64];
	GElf_Sym	s;
};

/* Read an image back the way btrace does; returns the symbol count. */
static int
readback(const char *path, struct sym *out, int max, GElf_Shdr *symsh,
    GElf_Shdr *textsh)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t shstrndx, strndx = 0, i, n;
	const char *name;
	int fd, count = -1;

	elf_version(EV_CURRENT);
	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL ||
	    elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	Elf_Scn *symtab = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL)
			goto out;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name == NULL)
			goto out;
		if (strcmp(name, ".symtab") == 0 && sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			*symsh = sh;
		}
		if (strcmp(name, ".strtab") == 0 && sh.sh_type == SHT_STRTAB)
			strndx = elf_ndxscn(scn);
		if (strcmp(name, ".text") == 0)
			*textsh = sh;
	}
	if (symtab == NULL || strndx == 0 || symsh->sh_entsize == 0)
		goto out;
	if ((d = elf_getdata(symtab, NULL)) == NULL)
		goto out;
	n = symsh->sh_size / symsh->sh_entsize;
	count = 0;
	for (i = 1; i < n && count < max; i++) {
		if (gelf_getsym(d, (int)i, &out[count].s) == NULL)
			continue;
		name = elf_strptr(e, strndx, out[count].s.st_name);
		snprintf(out[count].name, sizeof(out[count].name), "%s",
		    name ? name : "(null)");
		count++;
	}
out:
	if (e != NULL)
		elf_end(e);
	close(fd);
	return count;
}

static const struct sym *
find(const struct sym *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s[i].name, name) == 0)
			return &s[i];
	return NULL;
}

static void
test_good(void)
{
	struct dt_ksyms_stats st;
	struct sym s[16];
	GElf_Shdr symsh, textsh;
	const struct sym *x;
	char err[256];
	int n, error, i, seen_global = 0, order_ok = 1;

	put("good",
	    "ffffffff81000000 T _stext\n"
	    "ffffffff81000100 t local_fn\n"
	    "ffffffff81000100 t local_alias\n"
	    "ffffffff81000180 W weak_fn\n"
	    "ffffffff81000200 D some_data\n"
	    "ffffffff81000300 T last_fn\n"
	    "ffffffffc0001000 t mod_fn\t[some_mod]\n");
	error = dt_ksyms_write(tpath("good"), tpath("img"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	if (!check(error == 0, "write a good file: %d %s", error, err))
		return;
	check(st.dks_nsyms == 6 && !st.dks_hidden,
	    "6 text symbols, not hidden (%zu, %d)", st.dks_nsyms,
	    st.dks_hidden);
	memset(&textsh, 0, sizeof(textsh));
	n = readback(tpath("img"), s, 16, &symsh, &textsh);
	if (!check(n == 6, "libelf reads 6 symbols back (%d)", n))
		return;
	for (i = 0; i < n; i++) {
		if (GELF_ST_TYPE(s[i].s.st_info) != STT_FUNC)
			order_ok = 0;
		if (GELF_ST_BIND(s[i].s.st_info) != STB_LOCAL)
			seen_global = 1;
		else if (seen_global)
			order_ok = 0;
	}
	check(order_ok, "all STT_FUNC, locals before the others");
	check(symsh.sh_info == 4, "sh_info is the first non-local (%u)",
	    (unsigned)symsh.sh_info);
	x = find(s, n, "_stext");
	check(x && x->s.st_value == 0xffffffff81000000ULL &&
	    x->s.st_size == 0x100 && GELF_ST_BIND(x->s.st_info) == STB_GLOBAL,
	    "_stext global at its address, sized to the next symbol");
	x = find(s, n, "local_alias");
	check(x && x->s.st_value == 0xffffffff81000100ULL &&
	    x->s.st_size == 0x80 && GELF_ST_BIND(x->s.st_info) == STB_LOCAL,
	    "aliases share address and size");
	x = find(s, n, "weak_fn");
	check(x && GELF_ST_BIND(x->s.st_info) == STB_WEAK &&
	    x->s.st_size == 0x180, "W is weak; data symbols are no boundary");
	check(find(s, n, "some_data") == NULL, "data symbols left out");
	x = find(s, n, "mod_fn");
	check(x && x->s.st_value == 0xffffffffc0001000ULL && x->s.st_size == 0,
	    "module symbol without its [module] tag, last has size 0");
	check(textsh.sh_type == SHT_NOBITS &&
	    textsh.sh_addr == 0xffffffff81000000ULL &&
	    textsh.sh_size == 0xffffffffc0001000ULL - 0xffffffff81000000ULL,
	    ".text spans the symbols");
	for (i = 0; i < n; i++)
		if (s[i].s.st_shndx == SHN_UNDEF)
			break;
	check(i == n, "every symbol is defined in a section");
	struct stat sb;
	check(stat(tpath("img"), &sb) == 0 && (sb.st_mode & 07777) == KT_MODE &&
	    sb.st_uid == getuid() && sb.st_gid == getgid(),
	    "image has the mode and owner asked for (%o)",
	    (unsigned)(sb.st_mode & 07777));
}

static void
test_errors(void)
{
	struct dt_ksyms_stats st;
	struct sym s[4];
	GElf_Shdr symsh, textsh;
	char err[256];
	int error;

	put("bad", "ffffffff81000000 T ok\nthis is not kallsyms\n");
	error = dt_ksyms_write(tpath("bad"), tpath("img2"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == EINVAL && strstr(err, ":2:") != NULL,
	    "malformed line: EINVAL naming line 2 (%d, %s)", error, err);
	check(access(tpath("img2"), F_OK) == -1,
	    "nothing installed on error");

	error = dt_ksyms_write(tpath("missing"), tpath("img2"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == ENOENT && strstr(err, "missing") != NULL,
	    "missing input: ENOENT naming it (%s)", err);

	put("good2", "ffffffff81000000 T a\n");
	error = dt_ksyms_write(tpath("good2"), tpath("nodir/img"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == ENOENT && strstr(err, "nodir") != NULL,
	    "unwritable destination: ENOENT naming it (%s)", err);

	/* What is not an image is never replaced (--ksyms /dev/null). */
	put("notimg", "not an image\n");
	error = dt_ksyms_write(tpath("good2"), tpath("notimg"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == EEXIST && strstr(err, "notimg") != NULL &&
	    filesize(tpath("notimg")) == 13,
	    "a file that is not an image: EEXIST, left as it was (%s)", err);
	/* An ELF file that is a program, not an image: a mistyped path. */
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "cp /bin/true %s", tpath("prog"));
		check(system(cmd) == 0, "a copy of /bin/true");
		error = dt_ksyms_write(tpath("good2"), tpath("prog"), getuid(),
		    getgid(), KT_MODE, &st, err, sizeof(err));
		check(error == EEXIST && filesize(tpath("prog")) ==
		    filesize("/bin/true"), "a program: EEXIST, left as it "
		    "was (%s)", err);
	}
	check(mkfifo(tpath("fifo"), 0600) == 0, "mkfifo");
	error = dt_ksyms_write(tpath("good2"), tpath("fifo"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == EEXIST && isfifo(tpath("fifo")),
	    "a fifo: EEXIST, left as it was (%s)", err);

	put("hidden", "0000000000000000 T a\n0000000000000000 t b\n");
	error = dt_ksyms_write(tpath("hidden"), tpath("img3"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == 0 && st.dks_hidden && st.dks_nsyms == 0,
	    "kptr_restrict: written, flagged hidden, no symbols");
	check(readback(tpath("img3"), s, 4, &symsh, &textsh) == 0,
	    "hidden image is valid ELF with an empty symbol table");

	{
		struct dt_ksyms_stats st4;

		/* A second writer replaces img3: ours must stay away. */
		dt_ksyms_write(tpath("hidden"), tpath("img3"), getuid(),
		    getgid(), KT_MODE, &st4, err, sizeof(err));
		check(dt_ksyms_remove(tpath("img3"), &st) == 0 &&
		    access(tpath("img3"), F_OK) == 0,
		    "remove leaves an image another writer installed");
		check(dt_ksyms_remove(tpath("img3"), &st4) == 0 &&
		    access(tpath("img3"), F_OK) == -1,
		    "remove deletes its own image");
		check(dt_ksyms_remove(tpath("img3"), &st4) == 0,
		    "removing a missing image is not an error");
	}
}

/* The real thing: every text symbol of this kernel, by name. */
static void
test_kallsyms(void)
{
	struct dt_ksyms_stats st;
	char err[256], line[512];
	FILE *fp;
	size_t ntext = 0;
	char a[32], t[4];
	int error;

	if ((fp = fopen(DT_KALLSYMS, "r")) == NULL) {
		check(false, "%s: %s", DT_KALLSYMS, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%31s %3s", a, t) == 2 && t[1] == '\0' &&
		    strchr("tTwW", t[0]) != NULL)
			ntext++;
	fclose(fp);
	error = dt_ksyms_write(DT_KALLSYMS, tpath("kimg"), getuid(),
	    getgid(), KT_MODE, &st, err, sizeof(err));
	check(error == 0, "write from %s (%s)", DT_KALLSYMS, err);
	/* Modules may come and go between the two reads. */
	check(st.dks_hidden || (st.dks_nsyms + 100 > ntext &&
	    st.dks_nsyms < ntext + 100),
	    "%zu symbols written for %zu text lines", st.dks_nsyms, ntext);
	unlink(tpath("kimg"));
}

int
main(void)
{
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	test_good();
	test_errors();
	test_kallsyms();
	unlink(tpath("good"));
	unlink(tpath("good2"));
	unlink(tpath("bad"));
	unlink(tpath("hidden"));
	unlink(tpath("img"));
	unlink(tpath("notimg"));
	unlink(tpath("fifo"));
	unlink(tpath("prog"));
	rmdir(tmpdir);
	printf("%u passed, %u failed\n", npass, nfail);
	return nfail != 0;
}
