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
 * btrace: symbols for kstack, ustack, ksym() and usym().  Kernel symbols
 * come from /proc/kallsyms; user symbols from the ELF files that
 * /proc/PID/maps names, read once per process at first sight so that
 * stacks of processes that have exited since still resolve.  A traced
 * process that exited before we saw it is looked up in dtd, which kept
 * its mappings.
 *
 * Why dtd, and why not DTIOCRDVNODE: once a process is gone its
 * /proc/PID/maps is too, and only dtd saw it while it lived (it reads the
 * maps of every traced process when it attaches, and again when its user
 * stacks leave them).  DTIOCRDVNODE would tell us start, offset and file
 * size of one address, but no file: the descriptor it promises cannot be
 * installed into us by a daemon.  The maps query on dtd's ingest socket
 * (udt_mapsq.h; the socket -c commands attach to, USERDT_SOCKET) names
 * the files of all mappings in one round trip, in the shape
 * /proc/PID/maps has, so the symbol code after it is the same for live
 * and dead processes.
 */
#include <sys/types.h>

#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace.h"
#include "udt_mapsq.h"

struct sym {
	unsigned long	 sy_addr;
	unsigned long	 sy_size;
	char		*sy_name;
};

struct symtab {
	struct sym	*st_syms;
	size_t		 st_n, st_cap;
};

struct elfsyms {
	char		*es_path;
	struct symtab	 es_tab;
	/* the separate debug file's DWARF, for what no symbol covers */
	Dwarf		*es_dw;
	Elf		*es_dbgelf;
	int		 es_dbgfd;
	GElf_Phdr	*es_loads;
	size_t		 es_nloads;
	struct elfsyms	*es_next;
};

struct pmap {
	unsigned long	 pm_start, pm_end, pm_off;
	struct elfsyms	*pm_elf;	/* NULL until first lookup */
	char		*pm_path;
};

#define PID_RELOAD_MS	10	/* between re-reads of a live pid's maps */

struct pidmaps {
	pid_t		 pd_pid;
	struct pmap	*pd_maps;
	size_t		 pd_n;
	uint64_t	 pd_loaded;	/* CLOCK_MONOTONIC ms of the read */
	int		 pd_final;	/* dtd's, of a pid gone: never newer */
	struct pidmaps	*pd_next;
};

static struct symtab	 ksyms;
static int		 ksyms_loaded;
static struct elfsyms	*elfs;
static struct pidmaps	*pids;

static void
sym_add(struct symtab *st, unsigned long addr, unsigned long size,
    const char *name)
{
	if (st->st_n == st->st_cap) {
		st->st_cap = st->st_cap ? st->st_cap * 2 : 1024;
		st->st_syms = realloc(st->st_syms,
		    st->st_cap * sizeof(*st->st_syms));
		if (st->st_syms == NULL) {
			perror("btrace");
			exit(1);
		}
	}
	st->st_syms[st->st_n].sy_addr = addr;
	st->st_syms[st->st_n].sy_size = size;
	st->st_syms[st->st_n].sy_name = xstrdup(name);
	st->st_n++;
}

static int
sym_cmp(const void *a, const void *b)
{
	const struct sym *sa = a, *sb = b;

	if (sa->sy_addr != sb->sy_addr)
		return sa->sy_addr < sb->sy_addr ? -1 : 1;
	/* prefer the symbol with a size at one address */
	return (sa->sy_size < sb->sy_size) - (sa->sy_size > sb->sy_size);
}

/* The symbol covering addr; sizeless symbols reach to the next one. */
static const struct sym *
sym_find(struct symtab *st, unsigned long addr)
{
	size_t lo = 0, hi = st->st_n, mid;
	const struct sym *s;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (st->st_syms[mid].sy_addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &st->st_syms[lo - 1];
	while (s > st->st_syms && s[-1].sy_addr == s->sy_addr)
		s--;
	if (s->sy_size != 0 && addr >= s->sy_addr + s->sy_size)
		return NULL;
	return s;
}

static const char *
sym_fmt(const struct sym *s, unsigned long addr)
{
	if (s == NULL)
		return tmp_printf("0x%lx", addr);
	/* A user's ELF file names its symbols as it likes: tmp_vis(). */
	if (addr == s->sy_addr)
		return tmp_vis(s->sy_name, strlen(s->sy_name));
	return tmp_printf("%s+0x%lx", tmp_vis(s->sy_name,
	    strlen(s->sy_name)), addr - s->sy_addr);
}

static void
ksyms_load(void)
{
	char line[512], name[256], type;
	unsigned long addr;
	FILE *fp;

	ksyms_loaded = 1;
	if ((fp = fopen("/proc/kallsyms", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
		/* unprivileged readers see zero addresses: useless */
		if (addr == 0 || (type != 't' && type != 'T' &&
		    type != 'w' && type != 'W'))
			continue;
		sym_add(&ksyms, addr, 0, name);
	}
	fclose(fp);
	qsort(ksyms.st_syms, ksyms.st_n, sizeof(*ksyms.st_syms), sym_cmp);
}

const char *
ksym_str(unsigned long pc)
{
	if (!ksyms_loaded)
		ksyms_load();
	return sym_fmt(sym_find(&ksyms, pc), pc);
}

/* Function symbols of e's .symtab and .dynsym into tab. */
static int
elf_syms(Elf *e, struct symtab *tab)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *data;
	size_t i, n;
	int symtab = 0;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize == 0)
			continue;
		if ((data = elf_getdata(scn, NULL)) == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = 1;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *name;

			if (gelf_getsym(data, (int)i, &sym) == NULL)
				continue;
			if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
			    sym.st_value == 0 || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name != NULL && *name != '\0')
				sym_add(tab, sym.st_value, sym.st_size, name);
		}
	}
	return symtab;
}

/*
 * A regular file we may read as ELF: not a FIFO that would block us nor
 * a device, and no symbolic link followed at its last component (the
 * names around a traced file are its owner's to choose).
 */
static int
dbg_open(const char *path)
{
	struct stat sb;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The separate debug file of e (at path), where perf and gdb look for
 * it: /usr/lib/debug/.build-id/xx/rest.debug by its build id, then by
 * its .gnu_debuglink name beside it, in .debug/ beside it and under
 * /usr/lib/debug/ + its directory.  One whose build id differs from e's
 * is another build's and is passed over.  Returns the open Elf and
 * *fdp, or NULL.
 */
static Elf *
dbg_find(Elf *e, const char *path, int *fdp)
{
	const unsigned char *id;
	const void *idp, *id2;
	const char *link, *slash;
	char cand[4][PATH_MAX], *p;
	GElf_Word crc;
	ssize_t idlen, n2;
	size_t i, nc = 0;
	Elf *d;
	int fd;

	idlen = dwelf_elf_gnu_build_id(e, &idp);
	id = idp;
	if (idlen > 1 && idlen <= 64) {
		p = cand[nc];
		p += sprintf(p, "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (i = 1; i < (size_t)idlen; i++)
			p += sprintf(p, "%02x", id[i]);
		strcpy(p, ".debug");
		nc++;
	}
	if ((link = dwelf_elf_gnu_debuglink(e, &crc)) != NULL &&
	    strchr(link, '/') == NULL && (slash = strrchr(path, '/')) !=
	    NULL) {
		int dl = (int)(slash - path);

		if (snprintf(cand[nc], PATH_MAX, "%.*s/%s", dl, path,
		    link) < PATH_MAX && strcmp(cand[nc], path) != 0)
			nc++;
		if (snprintf(cand[nc], PATH_MAX, "%.*s/.debug/%s", dl, path,
		    link) < PATH_MAX)
			nc++;
		if (snprintf(cand[nc], PATH_MAX, "/usr/lib/debug%.*s/%s",
		    dl, path, link) < PATH_MAX)
			nc++;
	}
	for (i = 0; i < nc; i++) {
		if ((fd = dbg_open(cand[i])) == -1)
			continue;
		if ((d = elf_begin(fd, ELF_C_READ, NULL)) != NULL &&
		    elf_kind(d) == ELF_K_ELF) {
			n2 = dwelf_elf_gnu_build_id(d, &id2);
			if (idlen <= 0 || (n2 == idlen &&
			    memcmp(id2, idp, (size_t)idlen) == 0)) {
				*fdp = fd;
				return d;
			}
		}
		if (d != NULL)
			elf_end(d);
		close(fd);
	}
	return NULL;
}

/* The subprogram DIE under die whose code holds pc, depth first. */
static int
dw_func(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Die child;
	int tag;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			if (dwarf_haspc(&child, pc) == 1) {
				*out = child;
				return 1;
			}
		} else if ((tag == DW_TAG_namespace ||
		    tag == DW_TAG_class_type || tag == DW_TAG_structure_type) &&
		    dw_func(&child, pc, out))
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/*
 * The function at va from the debug file's DWARF: a static function
 * that no symbol table names (libc's __libc_start_call_main), as gdb
 * finds it.  NULL when there is none.
 */
static const char *
dw_name(struct elfsyms *es, unsigned long va)
{
	Dwarf_Die cu, fn;
	Dwarf_Addr low;
	Dwarf_Off off = 0, next;
	size_t hsize;
	const char *name;
	int found = 0;

	if (es->es_dw == NULL)
		return NULL;
	if (dwarf_addrdie(es->es_dw, va, &cu) != NULL)
		found = dw_func(&cu, va, &fn);
	/* no .debug_aranges entry: the units one by one */
	while (!found && dwarf_nextcu(es->es_dw, off, &next, &hsize, NULL,
	    NULL, NULL) == 0) {
		if (dwarf_offdie(es->es_dw, off + hsize, &cu) != NULL &&
		    dwarf_haspc(&cu, va) == 1)
			found = dw_func(&cu, va, &fn);
		off = next;
	}
	if (!found || (name = dwarf_diename(&fn)) == NULL)
		return NULL;
	if (dwarf_entrypc(&fn, &low) != 0 || low > va)
		low = va;
	if (low == va)
		return tmp_vis(name, strlen(name));
	return tmp_printf("%s+0x%lx", tmp_vis(name, strlen(name)),
	    va - (unsigned long)low);
}

/*
 * The symbols of the ELF file mapped at [start, end) in pid (0: a pid
 * gone, whose maps dtd kept), named path; cached by path.  We may be
 * root and the name is the traced process's to choose: the file is
 * opened through udt_mapsq_open(), never by following what the name
 * says, and read, not mapped, so a file truncated under us costs its
 * symbols, not a SIGBUS.
 */
static struct elfsyms *
elf_load(const char *path, pid_t pid, unsigned long start, unsigned long end)
{
	struct elfsyms *es;
	GElf_Phdr ph;
	Elf *e;
	size_t i, nph;
	int fd;

	for (es = elfs; es != NULL; es = es->es_next)
		if (strcmp(es->es_path, path) == 0)
			return es;
	es = xcalloc(1, sizeof(*es));
	es->es_path = xstrdup(path);
	es->es_next = elfs;
	elfs = es;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return es;
	if ((fd = udt_mapsq_open(pid, start, end, path)) == -1)
		return es;
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL) {
		close(fd);
		return es;
	}
	if (elf_getphdrnum(e, &nph) == 0) {
		es->es_loads = xcalloc(nph, sizeof(*es->es_loads));
		for (i = 0; i < nph; i++)
			if (gelf_getphdr(e, i, &ph) != NULL &&
			    ph.p_type == PT_LOAD)
				es->es_loads[es->es_nloads++] = ph;
	}
	(void)elf_syms(e, &es->es_tab);
	/*
	 * A distribution's libraries keep only .dynsym: their static
	 * functions (libc's msort_with_tmp) are in the separate debug
	 * file, with the DWARF that names the rest.  Its symbols have the
	 * same addresses as the file's own.
	 */
	es->es_dbgfd = -1;
	if ((es->es_dbgelf = dbg_find(e, path, &es->es_dbgfd)) != NULL) {
		(void)elf_syms(es->es_dbgelf, &es->es_tab);
		es->es_dw = dwarf_begin_elf(es->es_dbgelf, DWARF_C_READ,
		    NULL);
	}
	elf_end(e);
	close(fd);
	if (es->es_tab.st_n > 0)
		qsort(es->es_tab.st_syms, es->es_tab.st_n,
		    sizeof(*es->es_tab.st_syms), sym_cmp);
	return es;
}

static void
pid_free_maps(struct pidmaps *pd)
{
	size_t i;

	for (i = 0; i < pd->pd_n; i++)
		free(pd->pd_maps[i].pm_path);
	free(pd->pd_maps);
	pd->pd_maps = NULL;
	pd->pd_n = 0;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
pid_add(struct pidmaps *pd, size_t *cap, unsigned long start,
    unsigned long end, unsigned long off, char *path)
{
	if (pd->pd_n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		pd->pd_maps = realloc(pd->pd_maps, *cap * sizeof(*pd->pd_maps));
		if (pd->pd_maps == NULL) {
			perror("btrace");
			exit(1);
		}
	}
	pd->pd_maps[pd->pd_n].pm_start = start;
	pd->pd_maps[pd->pd_n].pm_end = end;
	pd->pd_maps[pd->pd_n].pm_off = off;
	pd->pd_maps[pd->pd_n].pm_elf = NULL;
	pd->pd_maps[pd->pd_n].pm_path = path;
	pd->pd_n++;
}

struct pid_fill {
	struct pidmaps	*pf_pd;
	size_t		*pf_cap;
};

static int
pid_add_kept(void *arg, const struct udt_maps_ent *e, const char *path)
{
	struct pid_fill *pf = arg;

	pid_add(pf->pf_pd, pf->pf_cap, e->ume_start, e->ume_end, e->ume_off,
	    xstrdup(path));
	return 0;
}

/*
 * pid's executable file mappings: /proc/PID/maps while it lives, else
 * (gone, or a zombie with empty maps) what dtd kept of it, which no later
 * read can change.  What was read before stays when neither has anything.
 */
static void
pid_load(struct pidmaps *pd)
{
	char path[64], line[4096], perms[8], file[4096];
	unsigned long start, end, off;
	struct pidmaps nw;
	size_t cap = 0;
	struct pid_fill pf = { &nw, &cap };
	FILE *fp;
	int k, final = 0;

	pd->pd_loaded = now_ms();
	memset(&nw, 0, sizeof(nw));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pd->pd_pid);
	if ((fp = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			file[0] = '\0';
			k = sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]",
			    &start, &end, perms, &off, file);
			if (k < 5 || strchr(perms, 'x') == NULL ||
			    file[0] != '/')
				continue;
			pid_add(&nw, &cap, start, end, off, xstrdup(file));
		}
		fclose(fp);
	}
	if (nw.pd_n == 0) {
		if (udt_mapsq(NULL, pd->pd_pid, pid_add_kept, &pf) != 0)
			pid_free_maps(&nw);
		final = 1;
	}
	if (nw.pd_n == 0)
		return;
	pid_free_maps(pd);
	pd->pd_maps = nw.pd_maps;
	pd->pd_n = nw.pd_n;
	pd->pd_final = final;
}

static struct pidmaps *
pid_get(pid_t pid)
{
	struct pidmaps *pd;

	for (pd = pids; pd != NULL; pd = pd->pd_next)
		if (pd->pd_pid == pid)
			return pd;
	pd = xcalloc(1, sizeof(*pd));
	pd->pd_pid = pid;
	pd->pd_next = pids;
	pids = pd;
	pid_load(pd);
	return pd;
}

static const struct pmap *
pmap_find(struct pidmaps *pd, unsigned long pc)
{
	size_t i;

	for (i = 0; i < pd->pd_n; i++)
		if (pc >= pd->pd_maps[i].pm_start && pc < pd->pd_maps[i].pm_end)
			return &pd->pd_maps[i];
	return NULL;
}

const char *
usym_str(pid_t pid, unsigned long pc)
{
	struct pidmaps *pd = pid_get(pid);
	struct pmap *pm;
	struct elfsyms *es;
	unsigned long off, va;
	const char *name, *base;
	size_t i;

	pm = (struct pmap *)pmap_find(pd, pc);
	if (pm == NULL && !pd->pd_final &&
	    now_ms() - pd->pd_loaded >= PID_RELOAD_MS) {
		/*
		 * A library loaded since, or an exec (btrace -c: the shell's
		 * maps were read at its first event, then it became the
		 * command): look again, at most every PID_RELOAD_MS, since a
		 * frame-pointer walk through code without frame pointers
		 * yields garbage addresses that no reload will find.
		 */
		pid_load(pd);
		pm = (struct pmap *)pmap_find(pd, pc);
	}
	if (pm == NULL)
		return tmp_printf("0x%lx", pc);
	if (pm->pm_elf == NULL)
		pm->pm_elf = elf_load(pm->pm_path, pd->pd_final ? 0 :
		    pd->pd_pid, pm->pm_start, pm->pm_end);
	es = pm->pm_elf;
	off = pc - pm->pm_start + pm->pm_off;
	for (i = 0; i < es->es_nloads; i++) {
		if (off >= es->es_loads[i].p_offset && off <
		    es->es_loads[i].p_offset + es->es_loads[i].p_filesz) {
			va = off - es->es_loads[i].p_offset +
			    es->es_loads[i].p_vaddr;
			if (sym_find(&es->es_tab, va) != NULL)
				return sym_fmt(sym_find(&es->es_tab, va), va);
			if ((name = dw_name(es, va)) != NULL)
				return name;
			break;
		}
	}
	/*
	 * No symbol: the file and the offset in it, as perf's dso+offset,
	 * the same for every process that maps it, so that one place is
	 * one frame in a flame graph whatever the load address.
	 */
	base = strrchr(pm->pm_path, '/');
	base = base != NULL && base[1] != '\0' ? base + 1 : pm->pm_path;
	return tmp_printf("%s+0x%lx", tmp_vis(base, strlen(base)), off);
}

/*
 * Symbolising a stack costs microseconds and the same stacks come back
 * all the time: keep the text of recent ones, by pid and addresses.
 */
#define STACK_CACHE	4096

struct stack_ent {
	uint64_t	 se_hash;
	pid_t		 se_pid;	/* 0 for kernel stacks */
	unsigned int	 se_n;
	unsigned long	 se_pc[DTEV_DEEP_MAX];
	char		*se_str;
};
static struct stack_ent	*stack_cache;

static uint64_t
stack_hash(pid_t pid, const unsigned long *pc, unsigned int n)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)pid;
	unsigned int i;

	for (i = 0; i < n; i++) {
		h ^= pc[i];
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 31;
	}
	return h ^ n;
}

/* The whole stacks of the event being evaluated (bt_dev_rules.c). */
const struct dt_evt *g_deep_ev;
const struct deep_stacks *g_deep;

/*
 * kstack and ustack as OpenBSD's btrace prints them; max frames at most
 * (kstack(N), ustack(N)), 0 for dt(4)'s STACKTRACE_MAX.  Frames past
 * STACKTRACE_MAX come from the continuation records (DTEVT_DEEPSTACK)
 * gathered in g_deep for g_deep_ev.
 */
const char *
stack_str(struct dt_evt *ev, int kernel, int max)
{
	const struct stacktrace *st;
	const unsigned long *pcs;
	struct stack_ent *se;
	pid_t pid = kernel ? 0 : ev->dtev_pid;
	uint64_t h;
	char *s;
	unsigned int i, n;

	st = kernel ? &ev->dtev_kstack : &ev->dtev_ustack;
	if (kernel && st->st_count == 0)
		return "\nuserland\n";
	pcs = st->st_pc;
	n = st->st_count < STACKTRACE_MAX ? st->st_count : STACKTRACE_MAX;
	if (g_deep != NULL && g_deep_ev == ev) {
		pcs = kernel ? g_deep->dk_k : g_deep->dk_u;
		n = kernel ? g_deep->dk_kn : g_deep->dk_un;
	}
	/* plain kstack and ustack: dt(4)'s depth, as OpenBSD prints them */
	if (max == 0)
		max = STACKTRACE_MAX;
	if (n > (unsigned int)max)
		n = (unsigned int)max;
	if (stack_cache == NULL)
		stack_cache = xcalloc(STACK_CACHE, sizeof(*stack_cache));
	h = stack_hash(pid, pcs, n);
	se = &stack_cache[h % STACK_CACHE];
	if (se->se_str != NULL && se->se_hash == h && se->se_pid == pid &&
	    se->se_n == n && memcmp(se->se_pc, pcs, n * sizeof(*pcs)) == 0)
		return tmp_strdup(se->se_str);	/* the slot may be reused */

	s = tmp_strdup("");
	for (i = 0; i < n; i++) {
		if (!kernel && pcs[i] == 0)
			continue;
		s = tmp_printf("%s\n%s", s, kernel ? ksym_str(pcs[i]) :
		    usym_str(ev->dtev_pid, pcs[i]));
	}
	s = tmp_printf("%s%s", s, kernel ? "\nkernel\n" : "\nuserland\n");
	free(se->se_str);
	se->se_hash = h;
	se->se_pid = pid;
	se->se_n = n;
	memcpy(se->se_pc, pcs, n * sizeof(*pcs));
	se->se_str = xstrdup(s);
	return s;
}

void
syms_cleanup(void)
{
	struct pidmaps *pd, *pdn;
	struct elfsyms *es, *esn;
	size_t i;

	for (pd = pids; pd != NULL; pd = pdn) {
		pdn = pd->pd_next;
		pid_free_maps(pd);
		free(pd);
	}
	pids = NULL;
	for (es = elfs; es != NULL; es = esn) {
		esn = es->es_next;
		for (i = 0; i < es->es_tab.st_n; i++)
			free(es->es_tab.st_syms[i].sy_name);
		free(es->es_tab.st_syms);
		free(es->es_loads);
		free(es->es_path);
		if (es->es_dw != NULL)
			dwarf_end(es->es_dw);
		if (es->es_dbgelf != NULL) {
			elf_end(es->es_dbgelf);
			close(es->es_dbgfd);
		}
		free(es);
	}
	elfs = NULL;
	if (stack_cache != NULL) {
		for (i = 0; i < STACK_CACHE; i++)
			free(stack_cache[i].se_str);
		free(stack_cache);
		stack_cache = NULL;
	}
	free(comm_cache);
	comm_cache = NULL;
	for (i = 0; i < ksyms.st_n; i++)
		free(ksyms.st_syms[i].sy_name);
	free(ksyms.st_syms);
	memset(&ksyms, 0, sizeof(ksyms));
}
