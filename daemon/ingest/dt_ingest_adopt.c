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
 * Adoption of orphaned tracees at dtd's start (design decision 6).  A
 * traced process whose dtd died keeps that dtd's enable table mapped; one
 * that started while no dtd ran maps a placeholder of its own.  Both are
 * memfds named UDT_TAB_MEMFD, so a new dtd finds them in /proc/PID/maps,
 * opens them through /proc/PID/map_files (root), and if a table is
 * sealed against resizing and names this dtd's socket, sets tb_reconnect
 * and every enable byte: the tracee's next hooked call takes the slow
 * path, which reconnects.  Nothing else of the tracee is trusted or
 * touched.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dt_ingest.h"

/* Pull one orphaned table's tracee into reconnecting. */
static int
dti_adopt_one(const char *sock, pid_t pid, unsigned long lo, unsigned long hi)
{
	struct udt_tab *tab;
	struct stat st;
	char path[96];
	int fd, seals, adopted = 0;

	if (hi - lo != UDT_TAB_SIZE)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid,
	    lo, hi);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return 0;
	/* Only a size the tracee cannot change under our mapping. */
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || st.st_size != UDT_TAB_SIZE || seals < 0 ||
	    !(seals & F_SEAL_SHRINK)) {
		close(fd);
		return 0;
	}
	tab = mmap(NULL, UDT_TAB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    0);
	close(fd);
	if (tab == MAP_FAILED)
		return 0;
	if (tab->tb_magic == UDT_MAGIC &&
	    strncmp(tab->tb_sock, sock, sizeof(tab->tb_sock)) == 0) {
		__atomic_store_n(&tab->tb_reconnect, 1, __ATOMIC_RELEASE);
		memset(tab->tb_enab, UDT_EN_ON, sizeof(tab->tb_enab));
		/* Its old dtd's mode: no one drains that ring to wait for. */
		__atomic_store_n(&tab->tb_lossless, 0, __ATOMIC_RELAXED);
		/*
		 * A profile watcher reconnects too, busy loop or not: a new
		 * generation, or one between its check of tb_reconnect and
		 * its wait would sleep through the wake.
		 */
		dt_ingest_tab_announce(tab);
		adopted = 1;
	}
	munmap(tab, UDT_TAB_SIZE);
	return adopted;
}

unsigned int
dt_ingest_adopt(const char *sock)
{
	static const char tag[] = "/memfd:" UDT_TAB_MEMFD " ";
	struct dirent *de;
	DIR *d;
	FILE *f;
	char path[64], line[512];
	unsigned long lo, hi;
	pid_t self = getpid(), pid;
	char *end;
	unsigned int n = 0;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strstr(line, tag) == NULL ||
			    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
				continue;
			n += dti_adopt_one(sock, pid, lo, hi);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}
