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

/* What only the profile tests share: see profile_itest.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "profile_itest.h"

uint64_t
pt_evt_ns(const struct dt_evt *ev)
{
	return (uint64_t)ev->dtev_tsp.tv_sec * NSEC_PER_SEC +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

struct pt_reader {
	int		 pr_fd;
	struct pt_evs	*pr_out;
	uint64_t	 pr_deadline;
	int		 pr_error;
};

static void *
pt_reader(void *arg)
{
	struct pt_reader *r = arg;
	struct pt_evs *o = r->pr_out;
	struct dt_evt *n;
	ssize_t len;

	while (dtt_clock_ns(CLOCK_REALTIME) < r->pr_deadline) {
		if (o->pe_cap - o->pe_n < 4096) {
			n = reallocarray(o->pe_evs, o->pe_cap + 65536,
			    sizeof(*n));
			if (n == NULL) {
				r->pr_error = ENOMEM;
				break;
			}
			o->pe_evs = n;
			o->pe_cap += 65536;
		}
		len = read(r->pr_fd, o->pe_evs + o->pe_n,
		    4096 * sizeof(struct dt_evt));
		if (len == -1) {
			r->pr_error = errno;
			break;
		}
		if (len % (ssize_t)sizeof(struct dt_evt) != 0) {
			r->pr_error = EPROTO;
			break;
		}
		o->pe_n += (size_t)len / sizeof(struct dt_evt);
	}
	return NULL;
}

int
pt_collect(const int *fds, struct pt_evs *out, int n, uint64_t deadline)
{
	struct pt_reader r[8];
	pthread_t t[8];
	int i, error = 0;

	if (n > 8)
		return EINVAL;
	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		r[i].pr_fd = fds[i];
		r[i].pr_out = &out[i];
		r[i].pr_deadline = deadline;
		r[i].pr_error = 0;
		if (pthread_create(&t[i], NULL, pt_reader, &r[i]) != 0)
			return EAGAIN;
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (r[i].pr_error != 0)
			error = r[i].pr_error;
	}
	return error;
}

static int
ksym_cmp(const void *a, const void *b)
{
	const struct pt_ksym *x = a, *y = b;

	return (x->pk_addr > y->pk_addr) - (x->pk_addr < y->pk_addr);
}

struct pt_ksym *
pt_kallsyms(size_t *np)
{
	struct pt_ksym *ks = NULL, *nk;
	size_t n = 0, cap = 0;
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *fp;

	if ((fp = fopen("/proc/kallsyms", "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    strchr("tTwW", type) == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			if ((nk = reallocarray(ks, cap, sizeof(*ks))) == NULL)
				break;
			ks = nk;
		}
		ks[n].pk_addr = addr;
		ks[n].pk_name = strdup(name);
		ks[n].pk_module = strchr(line, '[') != NULL;
		n++;
	}
	fclose(fp);
	qsort(ks, n, sizeof(*ks), ksym_cmp);
	*np = n;
	return ks;
}

const struct pt_ksym *
pt_ksym_lookup(const struct pt_ksym *ks, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks[mid].pk_addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &ks[lo - 1];
}

int
pt_elf_func(const char *path, const char *name, uint64_t *val, uint64_t *size)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	const char *s;
	int fd, found = -1;
	size_t i;

	elf_version(EV_CURRENT);
	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL) {
		close(fd);
		return -1;
	}
	while (found == -1 && (scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB)
			continue;
		if ((d = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (gelf_getsym(d, (int)i, &sym) == NULL)
				continue;
			s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (s != NULL && strcmp(s, name) == 0 &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				*val = sym.st_value;
				*size = sym.st_size;
				found = 0;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}
