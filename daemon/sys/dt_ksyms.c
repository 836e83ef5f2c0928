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
 * /proc/kallsyms to an ELF image for btrace(8)'s kelf_open().  The image
 * holds only what a symboliser reads: a NOBITS .text spanning the symbols
 * (so every symbol has a defining section), .symtab, .strtab and
 * .shstrtab.  Sizes are the distance to the next higher address, which
 * is what kallsyms implies and what btrace would compute anyway.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_ksyms.h"

struct ksym {
	uint64_t	ks_addr;
	uint64_t	ks_size;
	uint32_t	ks_name;	/* offset in the string table */
	uint8_t		ks_bind;	/* STB_* */
};

struct ksyms {
	struct ksym	*kt_syms;
	size_t		 kt_nsyms;
	size_t		 kt_cap;
	char		*kt_str;	/* string table, starts with NUL */
	size_t		 kt_strlen;
	size_t		 kt_strcap;
	bool		 kt_nonzero;	/* some address was not zero */
};

static int
ksyms_err(char *err, size_t errlen, int error, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return error;
}

static int
ksyms_addstr(struct ksyms *kt, const char *s, size_t len, uint32_t *off)
{
	char *n;
	size_t cap;

	if (kt->kt_strlen + len + 1 > UINT32_MAX)
		return EFBIG;
	if (kt->kt_strlen + len + 1 > kt->kt_strcap) {
		cap = kt->kt_strcap ? kt->kt_strcap * 2 : 65536;
		while (cap < kt->kt_strlen + len + 1)
			cap *= 2;
		if ((n = realloc(kt->kt_str, cap)) == NULL)
			return ENOMEM;
		kt->kt_str = n;
		kt->kt_strcap = cap;
	}
	*off = (uint32_t)kt->kt_strlen;
	memcpy(kt->kt_str + kt->kt_strlen, s, len);
	kt->kt_str[kt->kt_strlen + len] = '\0';
	kt->kt_strlen += len + 1;
	return 0;
}

static int
ksyms_add(struct ksyms *kt, uint64_t addr, uint8_t bind, const char *name,
    size_t namelen)
{
	struct ksym *n;
	size_t cap;
	int error;

	if (kt->kt_nsyms == kt->kt_cap) {
		cap = kt->kt_cap ? kt->kt_cap * 2 : 16384;
		if ((n = reallocarray(kt->kt_syms, cap, sizeof(*n))) == NULL)
			return ENOMEM;
		kt->kt_syms = n;
		kt->kt_cap = cap;
	}
	n = &kt->kt_syms[kt->kt_nsyms];
	if ((error = ksyms_addstr(kt, name, namelen, &n->ks_name)) != 0)
		return error;
	n->ks_addr = addr;
	n->ks_size = 0;
	n->ks_bind = bind;
	kt->kt_nsyms++;
	if (addr != 0)
		kt->kt_nonzero = true;
	return 0;
}

/*
 * One line: "<hex address> <type> <name>[\t[<module>]]".  Only text
 * symbols (t, T and the weak w, W) become functions.
 */
static int
ksyms_parse_line(struct ksyms *kt, char *line, size_t len, const char *src,
    size_t lineno, char *err, size_t errlen)
{
	char *p, *end, *name;
	unsigned long long addr;
	uint8_t bind;
	size_t namelen;
	char type;

	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (len == 0)
		return 0;
	errno = 0;
	addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno != 0)
		goto bad;
	p = end + 1;
	if (p[0] == '\0' || p[1] != ' ')
		goto bad;
	type = p[0];
	name = p + 2;
	namelen = strcspn(name, " \t");
	if (namelen == 0)
		goto bad;
	switch (type) {
	case 't':
		bind = STB_LOCAL;
		break;
	case 'T':
		bind = STB_GLOBAL;
		break;
	case 'w':
	case 'W':
		bind = STB_WEAK;
		break;
	default:
		return 0;
	}
	return ksyms_add(kt, addr, bind, name, namelen);
bad:
	return ksyms_err(err, errlen, EINVAL,
	    "%s:%zu: not a kallsyms line (want \"<hex> <type> <name>\")",
	    src, lineno);
}

static int
ksym_cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->ks_addr != y->ks_addr)
		return x->ks_addr < y->ks_addr ? -1 : 1;
	return (x->ks_name > y->ks_name) - (x->ks_name < y->ks_name);
}

/* ELF wants the local symbols first; keep address order within each. */
static int
ksym_cmp_bind(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	int xl = x->ks_bind != STB_LOCAL, yl = y->ks_bind != STB_LOCAL;

	if (xl != yl)
		return xl - yl;
	return ksym_cmp_addr(a, b);
}

static void
ksyms_sizes(struct ksyms *kt)
{
	size_t i, j;

	qsort(kt->kt_syms, kt->kt_nsyms, sizeof(*kt->kt_syms), ksym_cmp_addr);
	for (i = 0; i < kt->kt_nsyms; i = j) {
		for (j = i + 1; j < kt->kt_nsyms &&
		    kt->kt_syms[j].ks_addr == kt->kt_syms[i].ks_addr; j++)
			;
		if (j == kt->kt_nsyms)
			break;
		for (size_t k = i; k < j; k++)
			kt->kt_syms[k].ks_size =
			    kt->kt_syms[j].ks_addr - kt->kt_syms[i].ks_addr;
	}
}

static int
ksyms_read(struct ksyms *kt, const char *src, char *err, size_t errlen)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int error = 0;

	if ((fp = fopen(src, "re")) == NULL)
		return ksyms_err(err, errlen, errno, "%s: %s", src,
		    strerror(errno));
	while ((len = getline(&line, &cap, fp)) != -1) {
		lineno++;
		error = ksyms_parse_line(kt, line, (size_t)len, src, lineno,
		    err, errlen);
		if (error != 0)
			break;
	}
	if (error == 0 && ferror(fp))
		error = ksyms_err(err, errlen, EIO, "%s: read error", src);
	else if (error == ENOMEM || error == EFBIG)
		ksyms_err(err, errlen, error, "%s: %s", src, strerror(error));
	free(line);
	fclose(fp);
	return error;
}

static Elf_Scn *
ksyms_newscn(Elf *e, uint32_t name, uint32_t type, uint64_t flags,
    void *buf, size_t size, uint64_t align, Elf_Type dtype)
{
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;

	if ((scn = elf_newscn(e)) == NULL)
		return NULL;
	if (gelf_getshdr(scn, &sh) == NULL)
		return NULL;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	if (!gelf_update_shdr(scn, &sh))
		return NULL;
	/* NOBITS too: libelf takes a section's size from its data. */
	if ((d = elf_newdata(scn)) == NULL)
		return NULL;
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = align;
	d->d_version = EV_CURRENT;
	return scn;
}

/* Section names, at fixed offsets of this string table. */
static char ksyms_shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
#define SHSTR_TEXT	1
#define SHSTR_SYMTAB	7
#define SHSTR_STRTAB	15
#define SHSTR_SHSTRTAB	23

static int
ksyms_elf(struct ksyms *kt, int fd, char *err, size_t errlen)
{
	Elf *e;
	Elf64_Ehdr *eh;
	Elf64_Sym *sym = NULL;
	Elf_Scn *text, *symtab, *strtab, *shstr;
	GElf_Shdr sh;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, nlocal = 0, n;
	int error = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return ksyms_err(err, errlen, EINVAL, "libelf: %s",
		    elf_errmsg(-1));
	n = kt->kt_nonzero ? kt->kt_nsyms : 0;
	if ((sym = calloc(n + 1, sizeof(*sym))) == NULL)
		return ksyms_err(err, errlen, ENOMEM, "%s", strerror(ENOMEM));
	for (i = 0; i < n; i++) {
		struct ksym *k = &kt->kt_syms[i];

		sym[i + 1].st_name = k->ks_name;
		sym[i + 1].st_info = ELF64_ST_INFO(k->ks_bind, STT_FUNC);
		sym[i + 1].st_shndx = 1;	/* .text */
		sym[i + 1].st_value = k->ks_addr;
		sym[i + 1].st_size = k->ks_size;
		if (k->ks_bind == STB_LOCAL)
			nlocal++;
		if (k->ks_addr < lo)
			lo = k->ks_addr;
		if (k->ks_addr + k->ks_size > hi)
			hi = k->ks_addr + k->ks_size;
	}
	if (n == 0)
		lo = hi = 0;

	if ((e = elf_begin(fd, ELF_C_WRITE, NULL)) == NULL) {
		free(sym);
		return ksyms_err(err, errlen, EIO, "elf_begin: %s",
		    elf_errmsg(-1));
	}
	if ((eh = elf64_newehdr(e)) == NULL)
		goto elferr;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;

	text = ksyms_newscn(e, SHSTR_TEXT, SHT_NOBITS,
	    SHF_ALLOC | SHF_EXECINSTR, NULL, hi - lo, 16, ELF_T_BYTE);
	symtab = ksyms_newscn(e, SHSTR_SYMTAB, SHT_SYMTAB, 0, sym,
	    (n + 1) * sizeof(*sym), 8, ELF_T_SYM);
	strtab = ksyms_newscn(e, SHSTR_STRTAB, SHT_STRTAB, 0, kt->kt_str,
	    kt->kt_strlen, 1, ELF_T_BYTE);
	shstr = ksyms_newscn(e, SHSTR_SHSTRTAB, SHT_STRTAB, 0, ksyms_shstr,
	    sizeof(ksyms_shstr), 1, ELF_T_BYTE);
	if (text == NULL || symtab == NULL || strtab == NULL || shstr == NULL)
		goto elferr;
	if (gelf_getshdr(text, &sh) == NULL)
		goto elferr;
	sh.sh_addr = lo;
	if (!gelf_update_shdr(text, &sh))
		goto elferr;
	if (gelf_getshdr(symtab, &sh) == NULL)
		goto elferr;
	sh.sh_link = (uint32_t)elf_ndxscn(strtab);
	sh.sh_info = (uint32_t)(nlocal + 1);	/* first non-local */
	sh.sh_entsize = sizeof(Elf64_Sym);
	if (!gelf_update_shdr(symtab, &sh))
		goto elferr;
	/* Four sections: far below SHN_LORESERVE, so no extended index. */
	if ((eh = elf64_getehdr(e)) == NULL)
		goto elferr;
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(shstr);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto elferr;
	goto out;
elferr:
	error = ksyms_err(err, errlen, EIO, "libelf: %s", elf_errmsg(-1));
out:
	elf_end(e);
	free(sym);
	return error;
}

/*
 * Whether what is at dst may be replaced: nothing, or an image as this
 * file writes them (an earlier dtd's, left by a crash): an x86-64 ELF
 * executable with no program header, which no program has.  Anything
 * else is refused: `--ksyms /dev/null', meant as "none", used to rename
 * the image over the null device, as root, and a path mistyped as a
 * program's would have replaced the program.
 */
static int
ksyms_replaceable(const char *dst, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	struct stat sb;
	ssize_t n = 0;
	int fd;

	if (lstat(dst, &sb) == -1)
		return errno == ENOENT ? 0 : ksyms_err(err, errlen, errno,
		    "%s: %s", dst, strerror(errno));
	if (S_ISREG(sb.st_mode) &&
	    (fd = open(dst, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) != -1) {
		n = read(fd, &eh, sizeof(eh));
		close(fd);
	}
	if (S_ISREG(sb.st_mode) && n == (ssize_t)sizeof(eh) &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_EXEC &&
	    eh.e_machine == EM_X86_64 && eh.e_phnum == 0)
		return 0;
	return ksyms_err(err, errlen, EEXIST, "%s: exists and is not a "
	    "kernel symbol image: not replaced", dst);
}

int
dt_ksyms_write(const char *src, const char *dst, uid_t uid, gid_t gid,
    mode_t mode, struct dt_ksyms_stats *st, char *err, size_t errlen)
{
	struct ksyms kt;
	struct stat sb;
	char *tmp = NULL;
	bool made = false;
	int fd = -1, error;

	memset(&kt, 0, sizeof(kt));
	if (st != NULL)
		memset(st, 0, sizeof(*st));
	if (errlen > 0)
		err[0] = '\0';
	/* The string table starts with the empty name. */
	if ((kt.kt_str = malloc(1)) == NULL)
		return ksyms_err(err, errlen, ENOMEM, "%s", strerror(ENOMEM));
	kt.kt_str[0] = '\0';
	kt.kt_strlen = kt.kt_strcap = 1;

	if ((error = ksyms_replaceable(dst, err, errlen)) != 0 ||
	    (error = ksyms_read(&kt, src, err, errlen)) != 0)
		goto out;
	ksyms_sizes(&kt);
	qsort(kt.kt_syms, kt.kt_nsyms, sizeof(*kt.kt_syms), ksym_cmp_bind);

	if (asprintf(&tmp, "%s.XXXXXX", dst) == -1) {
		tmp = NULL;
		error = ksyms_err(err, errlen, ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		error = ksyms_err(err, errlen, errno, "%s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	made = true;
	/*
	 * mkostemp made it 0600, so nobody else can open it while we write;
	 * the owner is set before the mode, so a group never widens a file
	 * that still belongs to someone else.
	 */
	if (fchown(fd, uid, gid) == -1 || fchmod(fd, mode & 07777) == -1) {
		error = ksyms_err(err, errlen, errno, "%s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if ((error = ksyms_elf(&kt, fd, err, errlen)) != 0)
		goto out;
	if (fstat(fd, &sb) == -1) {
		error = ksyms_err(err, errlen, errno, "%s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (close(fd) == -1) {
		fd = -1;
		error = ksyms_err(err, errlen, errno, "%s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	fd = -1;
	/* Again: the read and the build took a while. */
	if ((error = ksyms_replaceable(dst, err, errlen)) != 0)
		goto out;
	if (rename(tmp, dst) == -1) {
		error = ksyms_err(err, errlen, errno, "%s: %s", dst,
		    strerror(errno));
		goto out;
	}
	made = false;
	if (st != NULL) {
		st->dks_nsyms = kt.kt_nonzero ? kt.kt_nsyms : 0;
		st->dks_hidden = kt.kt_nsyms > 0 && !kt.kt_nonzero;
		st->dks_dev = sb.st_dev;
		st->dks_ino = sb.st_ino;
	}
out:
	if (fd != -1)
		close(fd);
	if (made)
		unlink(tmp);
	free(tmp);
	free(kt.kt_syms);
	free(kt.kt_str);
	return error;
}

int
dt_ksyms_remove(const char *dst, const struct dt_ksyms_stats *st)
{
	struct stat sb;

	/* Racy by a few instructions, which is all a path-based check has. */
	if (lstat(dst, &sb) == -1)
		return errno == ENOENT ? 0 : errno;
	if (sb.st_dev != st->dks_dev || sb.st_ino != st->dks_ino)
		return 0;
	if (unlink(dst) == -1 && errno != ENOENT)
		return errno;
	return 0;
}
