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
 * The hooks' real functions found without dlsym() (issue 20).  The
 * constructor resolves about 320 of them before the program runs (a
 * hook may later run where the loader must not be entered), and
 * dlsym(RTLD_NEXT) took 70 to 130 us of every traced start for it: each
 * call takes the loader's lock, finds its caller's object, and walks the
 * scope with every check a general lookup needs.
 *
 * What RTLD_NEXT means here: the first object after this library, in
 * the order the loader searches, that defines the name.  At the
 * constructor the objects loaded with the program are in the link map
 * in that order (the vDSO, which is not searched, comes before us), so
 * the objects from ours to libc's (the one that defines dlsym's own
 * first answer) are searched in link-map order through their GNU hash
 * tables, as the loader would.  Whatever is not plainly answered there
 * is left to dlsym(): a name none of them defines, an indirect function
 * (its resolver must run as the loader runs it), anything but a plain
 * function the object exports (a hidden or absolute symbol), a name with
 * no default version or more than one.  Every name is left to dlsym()
 * when the loader's answer may differ from the tables': an audit module
 * (LD_AUDIT, DT_AUDIT, DT_DEPAUDIT) may bind a symbol elsewhere, and
 * LD_DYNAMIC_WEAK passes over weak definitions; and when the objects
 * cannot be told (no GNU hash table, more than UDT_RSO_MAX of them).
 *
 * The constructor's thread; threads an earlier constructor started may
 * run, and call no hook yet (the program has not started), so the
 * slots are stored with release.  UDT_RESOLVE_ENV=check asks dlsym()
 * too and says on stderr where the two differ and how many names the
 * tables answered (the test `syscall-resolve`); =dlsym asks dlsym()
 * alone, for comparisons.
 *
 *	[w]	the constructor's thread alone
 */
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "udt_preload.h"
#include "udt_sys.h"

/* One object's dynamic symbol table, as the lookup needs it. */
struct udt_rso {
	uintptr_t		 rs_base;
	const ElfW(Sym)		*rs_sym;
	const char		*rs_str;
	const ElfW(Half)	*rs_ver;	/* NULL: unversioned */
	const uint32_t		*rs_bucket;
	const uint32_t		*rs_chain;	/* indexed by symbol */
	const ElfW(Addr)	*rs_bloom;
	uint32_t		 rs_nbucket;
	uint32_t		 rs_nbloom;
	uint32_t		 rs_shift;
};

#define UDT_RSO_MAX	64

/* A dynamic entry's address: the loader adjusted most in place. */
static const void *
udt_rso_ptr(uintptr_t base, ElfW(Addr) p)
{
	return (const void *)(p < base ? p + base : p);
}

/* 0 when the object has what a lookup needs (a GNU hash table among it). */
static int
udt_rso_load(uintptr_t base, const ElfW(Dyn) *d, struct udt_rso *o)
{
	const uint32_t *gh = NULL;

	memset(o, 0, sizeof(*o));
	o->rs_base = base;
	for (; d != NULL && d->d_tag != DT_NULL; d++)
		switch (d->d_tag) {
		case DT_SYMTAB:
			o->rs_sym = udt_rso_ptr(base, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			o->rs_str = udt_rso_ptr(base, d->d_un.d_ptr);
			break;
		case DT_VERSYM:
			o->rs_ver = udt_rso_ptr(base, d->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			gh = udt_rso_ptr(base, d->d_un.d_ptr);
			break;
		}
	if (gh == NULL || o->rs_sym == NULL || o->rs_str == NULL ||
	    gh[0] == 0 || gh[2] == 0 || (gh[2] & (gh[2] - 1)) != 0)
		return -1;
	o->rs_nbucket = gh[0];
	o->rs_nbloom = gh[2];
	o->rs_shift = gh[3];
	o->rs_bloom = (const ElfW(Addr) *)(const void *)(gh + 4);
	o->rs_bucket = (const uint32_t *)(const void *)(o->rs_bloom +
	    o->rs_nbloom);
	o->rs_chain = o->rs_bucket + o->rs_nbucket - gh[1];
	return 0;
}

static uint32_t
udt_rso_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s != '\0'; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/*
 * name in o: 1 and *fn when it defines it as a plain function with one
 * default version (or none), 0 when it does not define it, -1 when the
 * answer is dlsym()'s to give.  The loader's rule for an unversioned
 * lookup that wants the newest: a symbol of the base or no version is
 * taken at once; among versioned ones, hidden (old) ones are passed
 * over, and exactly one other is taken.
 */
static int
udt_rso_find(const struct udt_rso *o, const char *name, uint32_t h,
    udt_fn_t *fn)
{
	const ElfW(Sym) *s, *found = NULL;
	ElfW(Addr) w;
	uint32_t i, c, bits = sizeof(ElfW(Addr)) * 8;
	int nver = 0;

	w = o->rs_bloom[(h / bits) & (o->rs_nbloom - 1)];
	if (!((w >> (h % bits)) & (w >> ((h >> o->rs_shift) % bits)) & 1))
		return 0;
	if ((i = o->rs_bucket[h % o->rs_nbucket]) == 0)
		return 0;
	do {
		c = o->rs_chain[i];
		s = &o->rs_sym[i];
		if ((c | 1) == (h | 1) && s->st_shndx != SHN_UNDEF &&
		    strcmp(o->rs_str + s->st_name, name) == 0) {
			if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC ||
			    ELF64_ST_BIND(s->st_info) == STB_GNU_UNIQUE)
				return -1;
			if (o->rs_ver == NULL || (o->rs_ver[i] & 0x7fff) < 2) {
				found = s;
				nver = 1;
				break;
			}
			if (!(o->rs_ver[i] & 0x8000) && nver++ == 0)
				found = s;
		}
		i++;
	} while (!(c & 1));
	if (nver == 0)
		return 0;
	/* The loader binds no hidden symbol, and adds no base to SHN_ABS. */
	if (nver > 1 || ELF64_ST_TYPE(found->st_info) != STT_FUNC ||
	    found->st_value == 0 || found->st_shndx == SHN_ABS ||
	    ELF64_ST_VISIBILITY(found->st_other) == STV_HIDDEN ||
	    ELF64_ST_VISIBILITY(found->st_other) == STV_INTERNAL ||
	    (ELF64_ST_BIND(found->st_info) != STB_GLOBAL &&
	    ELF64_ST_BIND(found->st_info) != STB_WEAK))
		return -1;
	*fn = (udt_fn_t)(o->rs_base + found->st_value);
	return 1;
}

/* What udt_rso_scope() gathers, object by object. */
struct udt_rso_walk {
	struct udt_rso	*rw_os;
	size_t		 rw_n;
	uintptr_t	 rw_self;	/* an address in this library */
	uintptr_t	 rw_end;	/* one in the last object wanted */
	int		 rw_state;	/* 0 before us, 1 after, 2 done, -1 */
};

/* Whether one of info's loaded segments holds a. */
static int
udt_rso_holds(const struct dl_phdr_info *info, uintptr_t a)
{
	const ElfW(Phdr) *ph;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && a >= info->dlpi_addr +
		    ph->p_vaddr && a - (info->dlpi_addr + ph->p_vaddr) <
		    ph->p_memsz)
			return 1;
	}
	return 0;
}

static int
udt_rso_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct udt_rso_walk *w = arg;
	const ElfW(Dyn) *dyn = NULL;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
			    info->dlpi_phdr[i].p_vaddr);
	if (w->rw_state == 0) {
		/* The program's audit modules bind as they please. */
		for (; dyn != NULL && dyn->d_tag != DT_NULL; dyn++)
			if (dyn->d_tag == DT_AUDIT ||
			    dyn->d_tag == DT_DEPAUDIT) {
				w->rw_state = -1;
				return 1;
			}
		if (udt_rso_holds(info, w->rw_self))
			w->rw_state = 1;
		return 0;
	}
	if (w->rw_state != 1)
		return 1;
	if (w->rw_n == UDT_RSO_MAX || udt_rso_load(info->dlpi_addr, dyn,
	    &w->rw_os[w->rw_n]) != 0) {
		w->rw_state = -1;
		return 1;
	}
	w->rw_n++;
	if (udt_rso_holds(info, w->rw_end)) {
		w->rw_state = 2;
		return 1;
	}
	return 0;
}

/*
 * The objects after ours, in the loader's order, up to the one that
 * holds first (a real function dlsym() gave): how many in os[], or 0
 * when they cannot be told.  dl_iterate_phdr(), not dladdr(): that one
 * scans an object's whole symbol table for the nearest name, 25 us a
 * call here.
 */
static size_t
udt_rso_scope(struct udt_rso *os, udt_fn_t first)
{
	struct udt_rso_walk w;

	memset(&w, 0, sizeof(w));
	w.rw_os = os;
	w.rw_self = (uintptr_t)udt_rso_scope;
	w.rw_end = (uintptr_t)first;
	dl_iterate_phdr(udt_rso_object, &w);
	return w.rw_state == 2 ? w.rw_n : 0;
}

/* Whether hash h may be in o, by its bloom filter. */
static int
udt_rso_bloom(const struct udt_rso *o, uint32_t h, uint32_t bits)
{
	ElfW(Addr) w = o->rs_bloom[(h / bits) & (o->rs_nbloom - 1)];

	return (w >> (h % bits)) & (w >> ((h >> o->rs_shift) % bits)) & 1;
}

/*
 * Every look-up misses the cache four or five times (a bloom word, a
 * bucket, a chain word, the symbol, its name), and one after the other
 * they took about 90 ns each.  The last object, which answers nearly
 * every name, is walked in stages instead, each prefetching what the
 * next reads for all names at once, so that the misses overlap; the
 * look-ups proper then find it all in the cache.  Only prefetches: what
 * they touch decides nothing.  hs[] gets each name's hash.
 */
#define UDT_RSO_NAMES	512

static void
udt_rso_warm(const struct udt_rso *o, const char *names, size_t nr,
    uint32_t *hs)
{
	uint32_t bits = sizeof(ElfW(Addr)) * 8, h, at;
	ElfW(Addr) w;
	size_t i;

	if (nr > UDT_RSO_NAMES)
		nr = UDT_RSO_NAMES;
	for (i = 0; i < nr; i++) {
		hs[i] = udt_rso_hash(names);
		names += strlen(names) + 1;
		__builtin_prefetch(&o->rs_bloom[(hs[i] / bits) &
		    (o->rs_nbloom - 1)]);
	}
	/*
	 * Each stage works out again what the one before found (from
	 * lines it brought in): no array of the buckets' symbols, which
	 * in the bss was a page of its own, a fault at every start.
	 */
	for (i = 0; i < nr; i++)
		if (udt_rso_bloom(o, hs[i], bits))
			__builtin_prefetch(&o->rs_bucket[hs[i] %
			    o->rs_nbucket]);
	for (i = 0; i < nr; i++) {
		if (!udt_rso_bloom(o, hs[i], bits) ||
		    (at = o->rs_bucket[hs[i] % o->rs_nbucket]) == 0)
			continue;
		__builtin_prefetch(&o->rs_chain[at]);
		__builtin_prefetch(&o->rs_sym[at]);
	}
	for (i = 0; i < nr; i++) {
		h = hs[i];
		if (!udt_rso_bloom(o, h, bits) ||
		    (at = o->rs_bucket[h % o->rs_nbucket]) == 0)
			continue;
		w = (ElfW(Addr))o->rs_sym[at].st_name;
		__builtin_prefetch(o->rs_str + w);
	}
}

/* USERDT_RESOLVE=check's word on name, on stderr. */
static void
udt_rso_say(const char *name, const char *what)
{
	char buf[256];
	size_t n = 0;
	const char *s[4] = { "userdt: resolve: ", name, what, "\n" };
	int i;

	for (i = 0; i < 4; i++)
		while (*s[i] != '\0' && n < sizeof(buf) - 1)
			buf[n++] = *s[i]++;
	udt_sys3(SYS_write, 2, buf, n);
}

void
udt_resolve_fast(udt_fn_t *slots, const char *names, size_t nr)
{
	struct udt_rso os[UDT_RSO_MAX];
	const char *env = getenv(UDT_RESOLVE_ENV), *ev, *name;
	int check = env != NULL && strcmp(env, "check") == 0;
	int secure = getauxval(AT_SECURE) != 0;
	size_t i, k, n, nhash = 0;
	udt_fn_t fn;
	uint32_t h, hs[UDT_RSO_NAMES];
	char num[24];
	int rv;

	if (nr == 0)
		return;
	/*
	 * Every slot is read before it is written (a hook may have filled
	 * it already): a page of them read first is the zero page, then a
	 * second fault to write it.  Each page written first, with a
	 * locked or of nothing, which changes no slot a thread may be
	 * loading: one fault a page.
	 */
	for (i = 0, k = 0; i < nr; i++)
		if (((uintptr_t)&slots[i] & ~(uintptr_t)4095) != k) {
			k = (uintptr_t)&slots[i] & ~(uintptr_t)4095;
			__asm__ volatile("lock orb $0, %0" :
			    "+m" (*(volatile char *)&slots[i]));
		}
	/* The loader reads these only outside secure mode. */
	if ((env != NULL && strcmp(env, "dlsym") == 0) || (!secure &&
	    (((ev = getenv("LD_AUDIT")) != NULL && *ev != '\0') ||
	    ((ev = getenv("LD_DYNAMIC_WEAK")) != NULL && *ev != '\0'))))
		n = 0;
	else
		n = udt_rso_scope(os, udt_resolve(&slots[0], names));
	if (check && n == 0)
		udt_rso_say("(the objects after ours)", ": not found, every "
		    "name left to dlsym");
	if (n > 0)
		udt_rso_warm(&os[n - 1], names, nr, hs);
	for (i = 0, name = names; i < nr; i++, name += strlen(name) + 1) {
		fn = NULL;
		h = n > 0 && i < UDT_RSO_NAMES ? hs[i] :
		    udt_rso_hash(name);
		for (k = 0, rv = 0; k < n && rv == 0; k++)
			rv = udt_rso_find(&os[k], name, h, &fn);
		if (rv == 1 && __atomic_load_n(&slots[i],
		    __ATOMIC_RELAXED) == NULL)
			__atomic_store_n(&slots[i], fn, __ATOMIC_RELEASE);
		nhash += rv == 1;
		if (rv != 1)
			(void)udt_resolve(&slots[i], name);
		if (!check || n == 0)
			continue;
		if (rv == 1 && fn != (udt_fn_t)dlsym(RTLD_NEXT, name))
			udt_rso_say(name, ": not dlsym's");
		else if (rv != 1)
			udt_rso_say(name, rv == 0 ?
			    ": left to dlsym (not found)" : ": left to dlsym");
	}
	if (check) {
		k = sizeof(num) - 1;
		num[k] = '\0';
		do
			num[--k] = (char)('0' + nhash % 10);
		while ((nhash /= 10) != 0 && k > 2);
		num[--k] = ' ';
		num[--k] = ':';
		udt_rso_say("(names answered by the tables)", &num[k]);
	}
}
