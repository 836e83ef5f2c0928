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
 * sec-mapsmem: the mappings dtd keeps for exited tracees
 * (daemon/sys/dt_pidmaps.c) stay within their budget whatever one user
 * does.  Root's traced process attaches and exits; then the throwaway
 * user starts MM_CHILDREN processes that each map one file under a
 * name of about 1500 bytes MM_MAPS times (executable, so dtd keeps
 * every one), attach as tracees and exit: without a budget that is
 * about 3 MB of dtd's memory a child, 300 MB in all.  dtd's count of
 * the kept maps must stay within --maps-user-memory, its resident
 * memory must not grow by more than --maps-memory, the forgetting must
 * be counted and logged, and root's exited process, as the user's
 * newest, must still resolve through DTIOCRDVNODE.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sec_test.h"

#define MM_CHILDREN	100
#define MM_MAPS		2000
#define MM_BUDGET	(64ULL << 20)	/* --maps-memory */
#define MM_UBUDGET	(16ULL << 20)	/* --maps-user-memory */
#define MM_SLACK	(16ULL << 20)	/* RSS: one read in flight, arenas */

struct mm_arg {
	const char	*ma_sock;
	const char	*ma_file;
	pid_t		 ma_last;	/* out: the last child, via a pipe */
	int		 ma_pipe;
};

/* A line of /proc/pid/status ("VmRSS:"), in bytes; 0 if not found. */
static uint64_t
status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	size_t klen = strlen(key);
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, key, klen) == 0) {
			kb = strtoull(line + klen, NULL, 10);
			break;
		}
	fclose(fp);
	return (uint64_t)kb << 10;
}

/* Whether pid maps the sanitizer's runtime (its RSS holds a quarantine). */
static bool
maps_asan(pid_t pid)
{
	char path[64], line[512];
	bool found = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		found = strstr(line, "libasan") != NULL;
	fclose(fp);
	return found;
}

/*
 * One child of the user: file mapped MM_MAPS times (a page each, with a
 * hole between, so each is a mapping of its own), then a tracee's
 * hello; exits 0 once welcomed, else the step that failed.
 */
static int
mm_child(const struct mm_arg *ma)
{
	struct udt_welcome w;
	long pg = sysconf(_SC_PAGESIZE);
	char *base;
	int fd, s, fds[2], i;

	if ((fd = open(ma->ma_file, O_RDONLY | O_CLOEXEC)) == -1)
		return 10;
	base = mmap(NULL, (size_t)(2 * MM_MAPS * pg), PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 11;
	for (i = 0; i < MM_MAPS; i++)
		if (mmap(base + 2 * i * pg, (size_t)pg, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
			return 12;
	if ((s = dtt_tracee_hello(ma->ma_sock, sec_nsys, &w, fds)) == -1)
		return 13;
	return 0;
}

/* As the user: the children, one after another. */
static int
mm_churn(void *arg)
{
	struct mm_arg *ma = arg;
	pid_t kid = -1;
	int i, status, bad = 0;

	for (i = 0; i < MM_CHILDREN; i++) {
		if ((kid = fork()) == -1)
			return 20;
		if (kid == 0)
			_exit(mm_child(ma));
		status = dtt_wait(kid, DTT_EXIT_MS);
		if (!dtt_exited0(status) && bad++ == 0)
			fprintf(stderr, "sec-mapsmem: child %d: status %#x\n",
			    i, status);
	}
	(void)write(ma->ma_pipe, &kid, sizeof(kid));
	return bad ? 21 : 0;
}

static int
rdvn(int fd, pid_t pid, unsigned long va)
{
	struct dtioc_rdvn dtrv;

	memset(&dtrv, 0, sizeof(dtrv));
	dtrv.dtrv_pid = pid;
	dtrv.dtrv_va = (caddr_t)va;
	return ioctl(fd, DTIOCRDVNODE, &dtrv) == 0 ? 0 : errno;
}

/* A path of about 1500 bytes under dir, made 0755 for the user. */
static int
long_file(const char *dir, char *path, size_t len)
{
	char comp[201];
	int i, fd;

	memset(comp, 'm', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = '\0';
	snprintf(path, len, "%s", dir);
	for (i = 0; i < 7; i++) {
		if (strlen(path) + 1 + strlen(comp) + 1 >= len)
			return -1;
		strcat(path, "/");
		strcat(path, comp);
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			return -1;
	}
	strcat(path, "/lib.so");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
		return -1;
	if (ftruncate(fd, 4096) == -1) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

void
run_mapsmem(void)
{
	struct dtt_dtd dd;
	struct udt_stats us;
	struct udt_welcome w;
	struct mm_arg ma;
	struct dtioc_probe_info *pi = NULL;
	static char log[65536];
	char ubudget[32], budget[32], err[512], file[2048];
	size_t npi;
	char *args[] = { "--no-ksyms", "--maps-memory", budget,
	    "--maps-user-memory", ubudget, NULL };
	uint64_t rss0, rss1;
	pid_t rootkid = -1, last = -1;
	int fd = -1, p[2] = { -1, -1 }, lfd, s, fds[2], r, status;
	unsigned long va = (unsigned long)(uintptr_t)&run_mapsmem;
	ssize_t n;
	char *dir = NULL;

	snprintf(budget, sizeof(budget), "%llu", (unsigned long long)MM_BUDGET);
	snprintf(ubudget, sizeof(ubudget), "%llu",
	    (unsigned long long)MM_UBUDGET);
	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0 &&
	    dtt_dtd_start(&dd, sec_dtd, args, err, sizeof(err)) != -1,
	    "a private dtd, --maps-memory %s --maps-user-memory %s (%s)",
	    budget, ubudget, err))
		goto out;
	if ((fd = dtt_open(dd.dd_dev)) != -1 &&
	    (pi = dtt_plist(fd, &npi)) != NULL)
		sec_nsys = dtt_nsys(pi, npi, NULL);
	free(pi);
	if (!dtt_check(sec_nsys > 0, "device open, %u syscall probes",
	    sec_nsys))
		goto out;
	dir = strdup("/tmp/udt-mapsmem.XXXXXX");
	file[0] = '\0';
	r = dir != NULL && mkdtemp(dir) != NULL && chmod(dir, 0755) == 0 &&
	    long_file(dir, file, sizeof(file)) == 0;
	if (!dtt_check(r, "a file under a %zu-byte name", strlen(file)))
		goto out;

	/* Root's tracee attaches and exits before the user's churn. */
	fflush(stdout);
	if ((rootkid = fork()) == 0)
		_exit((s = dtt_tracee_hello(dd.dd_sock, sec_nsys, &w, fds)) ==
		    -1 ? 1 : 0);
	status = dtt_wait(rootkid, DTT_EXIT_MS);
	if (!dtt_check(dtt_exited0(status), "root's tracee %d attached and "
	    "exited", (int)rootkid))
		goto out;
	r = rdvn(fd, rootkid, va);
	dtt_check(r == 0, "RDVNODE of root's exited tracee at %#lx: %s", va,
	    strerror(r));

	rss0 = status_kb(dd.dd_pid, "VmRSS:");
	if (pipe2(p, O_CLOEXEC) == -1)
		goto out;
	ma.ma_sock = dd.dd_sock;
	ma.ma_file = file;
	ma.ma_pipe = p[1];
	r = as_user(mm_churn, &ma);
	close(p[1]);
	p[1] = -1;
	if (read(p[0], &last, sizeof(last)) != (ssize_t)sizeof(last))
		last = -1;
	dtt_check(r == 0, "%d children of %s, %d executable mappings each "
	    "under that name, attached and exited (%d)", MM_CHILDREN,
	    sec_user.du_name, MM_MAPS, r);
	rss1 = status_kb(dd.dd_pid, "VmRSS:");

	if (dtt_check(st_ingest_stats(dd.dd_sock, &us) == 0,
	    "ingest statistics")) {
		printf("# kept maps: %llu bytes, %llu forgotten; dtd RSS %llu "
		    "-> %llu KB\n", (unsigned long long)us.us_maps_bytes,
		    (unsigned long long)us.us_maps_evicted,
		    (unsigned long long)(rss0 >> 10),
		    (unsigned long long)(rss1 >> 10));
		dtt_check(us.us_maps_bytes <= MM_UBUDGET + (1ULL << 20),
		    "kept maps within the user's budget and root's "
		    "(%llu bytes)", (unsigned long long)us.us_maps_bytes);
		dtt_check(us.us_maps_evicted >= MM_CHILDREN - MM_UBUDGET /
		    ((uint64_t)MM_MAPS * 1500) - 1, "the children's maps "
		    "forgotten beyond it, counted (%llu)",
		    (unsigned long long)us.us_maps_evicted);
	}
	/* The sanitizer's quarantine keeps what dtd freed resident. */
	if (maps_asan(dd.dd_pid))
		printf("# dtd runs under AddressSanitizer: its RSS is not "
		    "checked\n");
	else
		dtt_check(rss1 <= rss0 + MM_BUDGET + MM_SLACK, "dtd's RSS "
		    "grew by %lld KB, within --maps-memory",
		    (long long)(rss1 - rss0) / 1024);
	r = rdvn(fd, rootkid, va);
	dtt_check(r == 0, "root's exited tracee still resolves (%s)",
	    strerror(r));
	r = last > 0 ? rdvn(fd, last, va) : -1;
	dtt_check(r == 0, "so does the user's newest child %d (%s)",
	    (int)last, r >= 0 ? strerror(r) : "none");
	if ((lfd = open(dd.dd_err, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(lfd, log, sizeof(log) - 1);
		log[n > 0 ? n : 0] = '\0';
		close(lfd);
	} else
		log[0] = '\0';
	dtt_check(strstr(log, "kept maps: forgot pid") != NULL &&
	    strstr(log, "its user's budget") != NULL,
	    "dtd logged what it forgot and why");
	dtt_check(kill(dd.dd_pid, 0) == 0, "dtd is alive");
out:
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	if (dir != NULL) {
		snprintf(log, sizeof(log), "rm -rf '%s'", dir);
		if (system(log) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
		free(dir);
	}
	st_teardown(&dd, fd);
}
