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
 * The profile provider through a real device file, against a dtd of our
 * own (FUSE-file front end).  Root only: perf_event_open system wide.
 *   profile_test rate DTD SPIN		counts per CPU, two opens, two rates
 *   profile_test ustack DTD SPIN	a frame-pointer program's user stack
 *   profile_test kstack DTD SPIN	a syscall loop's kernel stack
 *   profile_test ksyms DTD SPIN	the /dev/ksyms image dtd writes
 *   profile_test churn DTD SPIN	samplers started and stopped under load
 * The harness (checks, dtd, device calls) is tests/lib/dtt's.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "profile_itest.h"

#define WINDOW_NS	(2 * NSEC_PER_SEC)
#define MAXCPU		256

static const char	*pt_dtd;	/* dtd binary */
static const char	*spin_path;
static struct dtt_dtd	 pt_dd;		/* our dtd and its paths */

/* Open our device; a failing check line if that fails. */
static int
dev_open(void)
{
	int fd;

	if ((fd = dtt_open(pt_dd.dd_dev)) == -1)
		dtt_check(false, "open %s: %s", pt_dd.dd_dev, strerror(errno));
	return fd;
}

static int
run_rate(void)
{
	static const uint64_t hz[2] = { 97, 499 };
	struct pt_evs evs[2];
	struct dtioc_stat st[2];
	pid_t busy[MAXCPU];
	uint64_t t0, deadline, prev[MAXCPU], exp, busyns[MAXCPU];
	unsigned long count[2][MAXCPU], own[MAXCPU], badts = 0, nbadbusy = 0;
	int fds[2], ncpu, i, k, nbadcomm = 0;
	uint32_t pbn;
	size_t j;

	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAXCPU || ncpu != (int)sysconf(_SC_NPROCESSORS_CONF)) {
		dtt_check(false, "want 1..%d CPUs, all online", MAXCPU);
		return -1;
	}
	if (!dtt_check(dtt_busy_start(busy, ncpu, "prof_busy") == 0, "%d pinned busy loops",
	    ncpu))
		return -1;
	for (k = 0; k < 2; k++) {
		if ((fds[k] = dev_open()) == -1)
			return -1;
	}
	pbn = dtt_probe(fds[0], "profile", "hz", "97");
	dtt_check(pbn != 0, "profile:hz:97 listed (pbn %u)", pbn);
	dtt_check(dtt_enable(fds[0], pbn, DTEVT_EXECNAME,
	    NSEC_PER_SEC / hz[0]) == 0, "open 1: enable at %llu Hz",
	    (unsigned long long)hz[0]);
	dtt_check(dtt_enable(fds[1], pbn, 0, NSEC_PER_SEC / hz[1]) == 0,
	    "open 2: enable at %llu Hz", (unsigned long long)hz[1]);
	for (k = 0; k < 2; k++)
		dtt_check(dtt_record(fds[k], 1) == 0, "open %d: record on",
		    k + 1);
	t0 = dtt_clock_ns(CLOCK_REALTIME);
	for (i = 0; i < ncpu; i++)
		busyns[i] = dtt_cpu_ns(busy[i]);
	deadline = t0 + WINDOW_NS;
	dtt_check(pt_collect(fds, evs, 2, deadline) == 0, "read for 2 s");
	for (i = 0; i < ncpu; i++)
		busyns[i] = dtt_cpu_ns(busy[i]) - busyns[i];
	for (k = 0; k < 2; k++) {
		dtt_record(fds[k], 0);
		dtt_stats(fds[k], &st[k]);
	}
	dtt_busy_stop(busy, ncpu);

	memset(count, 0, sizeof(count));
	memset(own, 0, sizeof(own));
	memset(prev, 0, sizeof(prev));
	for (k = 0; k < 2; k++) {
		for (j = 0; j < evs[k].pe_n; j++) {
			const struct dt_evt *ev = &evs[k].pe_evs[j];
			uint64_t ns = pt_evt_ns(ev);

			if (ev->dtev_cpu >= (unsigned int)ncpu ||
			    ev->dtev_pbn != pbn) {
				badts++;
				continue;
			}
			if (k == 0) {
				if (ns < prev[ev->dtev_cpu])
					badts++;
				prev[ev->dtev_cpu] = ns;
				if (ev->dtev_pid == busy[ev->dtev_cpu] &&
				    ev->dtev_tid == ev->dtev_pid &&
				    strcmp(ev->dtev_comm, "prof_busy") == 0)
					own[ev->dtev_cpu]++;
				else
					for (i = 0; i < ncpu; i++)
						if (ev->dtev_pid == busy[i])
							nbadbusy++;
			} else if (ev->dtev_comm[0] != '\0')
				nbadcomm++;
			if (ns >= t0 && ns < deadline)
				count[k][ev->dtev_cpu]++;
		}
	}
	dtt_check(badts == 0, "open 1: pbn and cpu valid, time ordered per CPU "
	    "(%lu bad)", badts);
	dtt_check(nbadcomm == 0,
	    "open 2 did not ask for EXECNAME and has none");
	for (k = 0; k < 2; k++) {
		exp = hz[k] * WINDOW_NS / NSEC_PER_SEC;
		for (i = 0; i < ncpu; i++)
			dtt_check(count[k][i] * 100 >= exp * 95 &&
			    count[k][i] * 100 <= exp * 105,
			    "open %d, %llu Hz, cpu %d: %lu samples in 2 s, "
			    "expected %llu +-5%% (skiptick %llu, drops %llu)",
			    k + 1, (unsigned long long)hz[k], i, count[k][i],
			    (unsigned long long)exp,
			    (unsigned long long)st[k].dtst_skiptick,
			    (unsigned long long)st[k].dtst_dropevt);
	}
	/*
	 * Other tasks share the CPUs, so a busy loop gets a share of its
	 * CPU's samples.  How large a share is not checked: on this
	 * machine's hypervisor a timer interrupt taken in user mode may be
	 * delivered late, to whatever runs at the next kernel entry, and
	 * perf record shows the same skew.  Printed for the record.
	 */
	for (i = 0; i < ncpu; i++) {
		/* A loaded machine may not run it at all: then no claim. */
		dtt_check(own[i] > 0 || busyns[i] < 5 * NSEC_PER_SEC / hz[0],
		    "cpu %d: its busy loop (pid %d) is sampled if it ran",
		    i, (int)busy[i]);
		printf("# cpu %d: %lu samples of the busy loop, which ran "
		    "%.3f s: %.0f if time were split evenly\n", i, own[i],
		    (double)busyns[i] / NSEC_PER_SEC,
		    (double)busyns[i] * hz[0] / NSEC_PER_SEC);
	}
	dtt_check(nbadbusy == 0, "every sample of a busy loop has its tid, "
	    "its CPU and comm prof_busy (%lu do not)", nbadbusy);
	for (k = 0; k < 2; k++) {
		close(fds[k]);
		free(evs[k].pe_evs);
	}
	return 0;
}

/* Start profile_spin in mode; its pid and the bias of its symbols. */
static pid_t
spin_start(const char *mode, uint64_t *spin_rt, uint64_t *main_rt)
{
	char *argv[] = { (char *)spin_path, (char *)mode, "12", NULL };
	char line[128];
	unsigned long a = 0, b = 0;
	FILE *fp;
	pid_t pid;
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	pid = dtt_spawn(argv, NULL, -1, p[1], -1, -1);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	fp = fdopen(p[0], "r");
	if (fp == NULL || fgets(line, sizeof(line), fp) == NULL ||
	    sscanf(line, "%lx %lx", &a, &b) != 2) {
		dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
		pid = -1;
	}
	*spin_rt = a;
	*main_rt = b;
	if (fp != NULL)
		fclose(fp);
	return pid;
}

/*
 * Profile pid with flags, 2 s at a time until it has MINSAMPLES samples
 * (other load may starve it) or 5 windows passed; its events into out.
 */
#define MINSAMPLES	20
static int
profile_pid(pid_t pid, uint64_t flags, struct pt_evs *out, size_t *nown,
    uint64_t *cpu_ns)
{
	struct pt_evs all;
	struct dt_evt *n;
	uint64_t c0;
	uint32_t pbn;
	size_t j;
	int fd, w, error = 0;

	if ((fd = dev_open()) == -1)
		return -1;
	pbn = dtt_probe(fd, "profile", "hz", "97");
	if (!dtt_check(dtt_enable(fd, pbn, flags, NSEC_PER_SEC / 97) == 0 &&
	    dtt_record(fd, 1) == 0, "enable profile:hz:97, record"))
		return -1;
	memset(out, 0, sizeof(*out));
	*nown = 0;
	*cpu_ns = 0;
	for (w = 0; w < 5 && *nown < MINSAMPLES && error == 0; w++) {
		c0 = dtt_cpu_ns(pid);
		error = pt_collect(&fd, &all, 1,
		    dtt_clock_ns(CLOCK_REALTIME) + WINDOW_NS);
		*cpu_ns += dtt_cpu_ns(pid) - c0;
		for (j = 0; j < all.pe_n; j++) {
			if (all.pe_evs[j].dtev_pid != pid)
				continue;
			if (*nown == out->pe_cap) {
				n = reallocarray(out->pe_evs,
				    out->pe_cap + 4096, sizeof(*n));
				if (n == NULL)
					break;
				out->pe_evs = n;
				out->pe_cap += 4096;
			}
			out->pe_evs[(*nown)++] = all.pe_evs[j];
		}
		free(all.pe_evs);
	}
	dtt_check(error == 0, "read for %d windows of 2 s", w);
	dtt_record(fd, 0);
	close(fd);
	return 0;
}

static int
run_ustack(void)
{
	struct pt_evs evs;
	uint64_t spin_rt, main_rt, spin_v, spin_sz, main_v, main_sz, bias, cpu;
	unsigned long in_spin = 0, from_main = 0;
	size_t n, j;
	pid_t pid;

	if (!dtt_check(pt_elf_func(spin_path, "profile_spin_here", &spin_v,
	    &spin_sz) == 0 && pt_elf_func(spin_path, "main", &main_v,
	    &main_sz) == 0, "symbols of %s", spin_path))
		return -1;
	if (!dtt_check((pid = spin_start("spin", &spin_rt, &main_rt)) != -1,
	    "profile_spin spin started"))
		return -1;
	bias = spin_rt - spin_v;
	dtt_check(main_rt - main_v == bias, "one load bias for both symbols");
	if (profile_pid(pid, DTEVT_USTACK | DTEVT_KSTACK | DTEVT_EXECNAME,
	    &evs, &n, &cpu) == 0) {
		for (j = 0; j < n; j++) {
			const struct stacktrace *u = &evs.pe_evs[j].dtev_ustack;

			if (u->st_count >= 1 && u->st_pc[0] >= spin_rt &&
			    u->st_pc[0] < spin_rt + spin_sz)
				in_spin++;
			if (u->st_count >= 2 && u->st_pc[1] >= main_rt &&
			    u->st_pc[1] < main_rt + main_sz)
				from_main++;
		}
		/* See run_rate() on why the share is printed only. */
		dtt_check(n >= MINSAMPLES, "%zu samples of the spinning pid %d",
		    n, (int)pid);
		printf("# it ran %.3f s: %.0f samples if time were split "
		    "evenly\n", (double)cpu / NSEC_PER_SEC,
		    (double)cpu * 97 / NSEC_PER_SEC);
		dtt_check(in_spin * 10 >= n * 9 && n > 0,
		    "%lu of %zu ustacks start in profile_spin_here "
		    "[%#llx, +%llu)", in_spin, n, (unsigned long long)spin_rt,
		    (unsigned long long)spin_sz);
		dtt_check(from_main * 10 >= n * 8 && n > 0,
		    "%lu of %zu ustacks return into main next", from_main, n);
		dtt_check(n > 0 &&
		    strcmp(evs.pe_evs[0].dtev_comm, "profile_spin") == 0,
		    "comm is profile_spin (%s)",
		    n > 0 ? evs.pe_evs[0].dtev_comm : "");
		free(evs.pe_evs);
	}
	dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	return 0;
}

static int
run_kstack(void)
{
	struct pt_evs evs;
	struct pt_ksym *ks;
	const struct pt_ksym *k, *stext = NULL, *etext = NULL;
	uint64_t a, b, cpu;
	unsigned long withk = 0, withu = 0, bad = 0, readfn = 0, frames = 0;
	size_t nks, n, j, i;
	unsigned int f;
	pid_t pid;

	ks = pt_kallsyms(&nks);
	if (!dtt_check(ks != NULL && nks > 1000,
	    "/proc/kallsyms has %zu text symbols", ks ? nks : 0))
		return -1;
	for (i = 0; i < nks; i++) {
		if (strcmp(ks[i].pk_name, "_stext") == 0)
			stext = &ks[i];
		if (strcmp(ks[i].pk_name, "_etext") == 0)
			etext = &ks[i];
	}
	if (!dtt_check(stext && etext && stext->pk_addr != 0,
	    "_stext and _etext known, addresses not hidden"))
		return -1;
	if (!dtt_check((pid = spin_start("syscall", &a, &b)) != -1,
	    "profile_spin syscall started"))
		return -1;
	if (profile_pid(pid, DTEVT_USTACK | DTEVT_KSTACK, &evs, &n,
	    &cpu) == 0) {
		for (j = 0; j < n; j++) {
			const struct dt_evt *ev = &evs.pe_evs[j];
			bool hasread = false;

			if (ev->dtev_ustack.st_count > 0)
				withu++;
			if (ev->dtev_kstack.st_count == 0)
				continue;
			withk++;
			for (f = 0; f < ev->dtev_kstack.st_count; f++) {
				uint64_t pc = ev->dtev_kstack.st_pc[f];

				frames++;
				k = pt_ksym_lookup(ks, nks, pc);
				if (pc >= stext->pk_addr && pc < etext->pk_addr)
					;
				else if (k == NULL || !k->pk_module ||
				    pc - k->pk_addr > (1 << 20)) {
					bad++;
					continue;
				}
				if (k != NULL && strstr(k->pk_name, "read"))
					hasread = true;
			}
			if (hasread)
				readfn++;
		}
		dtt_check(n >= MINSAMPLES,
		    "%zu samples of the syscall loop pid %d", n, (int)pid);
		printf("# it ran %.3f s: %.0f samples if time were split "
		    "evenly\n", (double)cpu / NSEC_PER_SEC,
		    (double)cpu * 97 / NSEC_PER_SEC);
		dtt_check(withk * 2 >= n && n > 0, "%lu of %zu have a kstack",
		    withk, n);
		dtt_check(bad == 0 && frames > 0,
		    "all %lu kstack frames lie in kernel text (%lu outside)",
		    frames, bad);
		dtt_check(readfn * 2 >= withk && withk > 0,
		    "%lu of %lu kstacks pass through a *read* function",
		    readfn, withk);
		dtt_check(withu * 10 >= n * 9 && n > 0,
		    "%lu of %zu have a ustack too", withu, n);
		free(evs.pe_evs);
	}
	dtt_stop(pid, SIGKILL, DTT_EXIT_MS);
	for (i = 0; i < nks; i++)
		free(ks[i].pk_name);
	free(ks);
	return 0;
}

static int
strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "addr name" of every FUNC symbol readelf -sW lists in path. */
static char **
readelf_funcs(const char *path, size_t *np, int *status)
{
	char cmd[512], line[1024], val[32], type[16], name[512];
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' 2>&1", path);
	if ((fp = popen(cmd, "r")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%*s %31s %*s %15s %*s %*s %*s %511s", val,
		    type, name) != 3 || strcmp(type, "FUNC") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				break;
			v = nv;
		}
		if (asprintf(&v[n], "%016llx %s", strtoull(val, NULL, 16),
		    name) == -1)
			break;
		n++;
	}
	*status = pclose(fp);
	*np = n;
	return v;
}

static void
free_strs(char **v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

/* "addr name" of every kallsyms text symbol, sorted. */
static char **
kallsyms_strs(size_t *np)
{
	struct pt_ksym *ks;
	char **v;
	size_t n, i;

	if ((ks = pt_kallsyms(&n)) == NULL)
		return NULL;
	if ((v = calloc(n + 1, sizeof(*v))) != NULL)
		for (i = 0; i < n; i++)
			if (asprintf(&v[i], "%016llx %s",
			    (unsigned long long)ks[i].pk_addr,
			    ks[i].pk_name) == -1)
				v[i] = NULL;
	for (i = 0; i < n; i++)
		free(ks[i].pk_name);
	free(ks);
	for (i = 0; v != NULL && i < n; i++) {
		if (v[i] == NULL) {
			free_strs(v, n);
			return NULL;
		}
	}
	if (v != NULL)
		qsort(v, n, sizeof(*v), strp_cmp);
	*np = n;
	return v;
}

static bool
has(char **v, size_t n, const char *s)
{
	return bsearch(&s, v, n, sizeof(*v), strp_cmp) != NULL;
}

/*
 * The default place read-only (a container's /dev): dtd starts anyway
 * and says it goes without the image.  A wrapper runs dtd in a private
 * mount namespace with /dev remounted read-only, dropping the --ksyms
 * dtt gives it; unshare and sh exec, so dtd keeps the pid dtt knows.
 * Its FUSE mount lives in that namespace: only start, message and clean
 * stop are looked at.
 */
static int
run_ksyms_rodev(void)
{
	char script[256], log[4096], err[512];
	FILE *f;
	ssize_t n;
	pid_t pid;
	int fd;

	snprintf(script, sizeof(script), "%s/dtd-rodev.sh", pt_dd.dd_dir);
	if ((f = fopen(script, "w")) == NULL)
		return -1;
	fprintf(f, "#!/bin/sh\n"
	    "exec unshare -m --propagation private /bin/sh -c '\n"
	    "mount -o bind /dev /dev && mount -o remount,bind,ro /dev /dev "
	    "|| exit 99\n"
	    "n=$#; skip=0\n"
	    "for a in \"$@\"; do\n"
	    "  if [ $skip = 1 ]; then skip=0; continue; fi\n"
	    "  if [ \"$a\" = --ksyms ]; then skip=1; continue; fi\n"
	    "  set -- \"$@\" \"$a\"\n"
	    "done\n"
	    "shift $n\n"
	    "exec %s \"$@\"' sh \"$@\"\n", pt_dtd);
	if (fclose(f) != 0 || chmod(script, 0755) != 0)
		return -1;
	pid = dtt_dtd_start(&pt_dd, script, NULL, err, sizeof(err));
	if (!dtt_check(pid != -1, "default /dev/ksyms read-only: dtd starts "
	    "(%s)", err))
		return 0;
	log[0] = '\0';
	if ((fd = open(pt_dd.dd_err, O_RDONLY | O_CLOEXEC)) != -1) {
		if ((n = read(fd, log, sizeof(log) - 1)) < 0)
			n = 0;
		log[n] = '\0';
		close(fd);
	}
	dtt_check(strstr(log, "going on without /dev/ksyms") != NULL,
	    "and says it goes on without the image");
	dtt_check(dtt_exited0(dtt_dtd_stop(&pt_dd, SIGTERM)),
	    "that dtd exits 0 on SIGTERM");
	return 0;
}

static int
run_ksyms(void)
{
	char **img, **before, **after, err[2048];
	char bad[sizeof(pt_dd.dd_dir) + 32];
	size_t nimg = 0, nb = 0, na = 0, i, missing = 0, extra = 0;
	int status;
	pid_t pid;

	/*
	 * kallsyms changes under us (BPF programs, modules): what was
	 * there before dtd started and still is after readelf must be in
	 * the image, and the image may hold nothing that was in neither.
	 */
	before = kallsyms_strs(&nb);
	pid = dtt_dtd_start(&pt_dd, pt_dtd, NULL, err, sizeof(err));
	if (!dtt_check(pid != -1, "dtd started (%s)", err))
		return -1;
	img = readelf_funcs(pt_dd.dd_ksyms, &nimg, &status);
	after = kallsyms_strs(&na);
	dtt_check(img != NULL && status == 0, "readelf -sW %s exits 0",
	    pt_dd.dd_ksyms);
	if (before != NULL && after != NULL && img != NULL) {
		qsort(img, nimg, sizeof(*img), strp_cmp);
		for (i = 0; i < nb; i++)
			if (has(after, na, before[i]) &&
			    !has(img, nimg, before[i]))
				missing++;
		for (i = 0; i < nimg; i++)
			if (!has(before, nb, img[i]) &&
			    !has(after, na, img[i]))
				extra++;
		dtt_check(nb > 1000 && missing == 0 && extra == 0,
		    "readelf lists the %zu text symbols of /proc/kallsyms "
		    "by name and address (%zu listed, %zu missing, %zu not "
		    "in kallsyms)", nb, nimg, missing, extra);
	} else
		dtt_check(false, "read /proc/kallsyms and the image");
	free_strs(img, nimg);
	free_strs(before, nb);
	free_strs(after, na);
	dtt_check(dtt_exited0(dtt_dtd_stop(&pt_dd, SIGTERM)),
	    "dtd exits 0 on SIGTERM");
	dtt_check(access(pt_dd.dd_ksyms, F_OK) == -1 && errno == ENOENT,
	    "dtd removed %s when it stopped", pt_dd.dd_ksyms);

	/*
	 * An unwritable path: dtd refuses to start and says why.  Later
	 * options win, so this one overrides dtt's --ksyms.
	 */
	snprintf(bad, sizeof(bad), "--ksyms=%s/no/such/dir", pt_dd.dd_dir);
	pid = dtt_dtd_start(&pt_dd, pt_dtd, (char *[]){ bad, NULL }, err,
	    sizeof(err));
	dtt_check(pid == -1 && strstr(err, "ksyms") != NULL &&
	    strstr(err, "no/such/dir") != NULL,
	    "dtd with %s exits, naming it: %s", bad, err);
	if (pid != -1)
		dtt_dtd_stop(&pt_dd, SIGTERM);
	return run_ksyms_rodev();
}

/*
 * Samplers come and go while others run: opens at the fastest rate
 * dt(4) allows, recording on and off, closed while recording, one
 * sampler left running all along.  dtd must keep serving and exit 0
 * (under -Db_sanitize, any misuse of a freed sampler ends it).
 */
static int
run_churn(void)
{
	struct pt_evs evs;
	struct dtioc_stat st;
	unsigned long total = 0;
	unsigned long long maxskip = 0;
	uint32_t pbn;
	int bg, fd, i, bad = 0;

	if ((bg = dev_open()) == -1)
		return -1;
	pbn = dtt_probe(bg, "profile", "hz", "97");
	dtt_check(dtt_enable(bg, pbn, DTEVT_KSTACK | DTEVT_USTACK |
	    DTEVT_EXECNAME, 200000) == 0 && dtt_record(bg, 1) == 0,
	    "a 5000 Hz open records throughout");
	for (i = 0; i < 40; i++) {
		if ((fd = dev_open()) == -1)
			return -1;
		if (dtt_enable(fd, pbn, i % 2 ? DTEVT_KSTACK : DTEVT_USTACK,
		    200000 + (uint64_t)i * 100000) != 0 ||
		    dtt_record(fd, 1) != 0)
			bad++;
		if (pt_collect(&fd, &evs, 1,
		    dtt_clock_ns(CLOCK_REALTIME) + 20000000) != 0)
			bad++;
		total += evs.pe_n;
		free(evs.pe_evs);
		/*
		 * A sample taken before the start was stamped counted its
		 * whole time stamp as skipped ticks (9e12); a late timer
		 * skips a handful in 20 ms.
		 */
		if (dtt_stats(fd, &st) == 0 && st.dtst_skiptick > maxskip)
			maxskip = st.dtst_skiptick;
		if (i % 3 == 0 && (dtt_record(fd, 0) != 0 ||
		    dtt_record(fd, 1) != 0))
			bad++;
		if (i % 2 == 0)
			dtt_record(fd, 0);
		close(fd);	/* odd i: closed while recording */
	}
	dtt_check(bad == 0 && total > 0, "40 opens came and went (%lu events, "
	    "%d failures)", total, bad);
	dtt_check(maxskip < 1000000, "no open's skiptick jumped at its start "
	    "(at most %llu)", maxskip);
	i = pt_collect(&bg, &evs, 1, dtt_clock_ns(CLOCK_REALTIME) + 100000000);
	dtt_check(i == 0 && evs.pe_n > 0, "the long open still gets events "
	    "(%zu)", evs.pe_n);
	/* Idle time, if any, is recorded as OpenBSD's idle<cpu> threads. */
	{
		unsigned long nidle = 0, badidle = 0;
		char want[DTMAXCOMLEN];
		size_t j;

		for (j = 0; j < evs.pe_n; j++) {
			const struct dt_evt *ev = &evs.pe_evs[j];

			if (ev->dtev_pid != 0)
				continue;
			nidle++;
			snprintf(want, sizeof(want), "idle%u", ev->dtev_cpu);
			if (ev->dtev_tid != 0 ||
			    strcmp(ev->dtev_comm, want) != 0)
				badidle++;
		}
		dtt_check(badidle == 0, "%lu idle samples, all pid 0 tid 0 "
		    "named idle<cpu> (%lu not)", nidle, badidle);
	}
	i = dtt_stats(bg, &st);
	dtt_check(i == 0 && st.dtst_readevt >= evs.pe_n,
	    "stats: %llu read, %llu dropped, %llu skipped",
	    (unsigned long long)st.dtst_readevt,
	    (unsigned long long)st.dtst_dropevt,
	    (unsigned long long)st.dtst_skiptick);
	free(evs.pe_evs);
	close(bg);
	return 0;
}

/* dtd's stderr, for the test log. */
static void
show_log(const char *path)
{
	char line[1024];
	FILE *fp;

	if ((fp = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL)
		printf("# %s", line);
	fclose(fp);
}

int
main(int argc, char **argv)
{
	char err[2048];
	pid_t pid;
	int rv = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: profile_test rate|ustack|kstack|ksyms|"
		    "churn dtd profile_spin\n");
		return 2;
	}
	pt_dtd = argv[2];
	spin_path = argv[3];
	/* A suite that cannot run fails: never a silent skip. */
	if (geteuid() != 0) {
		printf("FAIL: root only (perf_event_open system wide)\n");
		return 1;
	}
	if (dtt_dtd_init(&pt_dd, "profile_itest") == -1) {
		perror("/tmp/profile_itest.XXXXXX");
		return 2;
	}

	if (strcmp(argv[1], "ksyms") == 0)
		rv = run_ksyms();
	else {
		pid = dtt_dtd_start(&pt_dd, pt_dtd, NULL, err, sizeof(err));
		if (dtt_check(pid != -1, "dtd started (%s)", err)) {
			if (strcmp(argv[1], "rate") == 0)
				rv = run_rate();
			else if (strcmp(argv[1], "ustack") == 0)
				rv = run_ustack();
			else if (strcmp(argv[1], "kstack") == 0)
				rv = run_kstack();
			else if (strcmp(argv[1], "churn") == 0)
				rv = run_churn();
			else
				rv = dtt_check(false, "unknown test %s",
				    argv[1]) ? 0 : -1;
			dtt_check(dtt_exited0(dtt_dtd_stop(&pt_dd, SIGTERM)),
			    "dtd exits 0 on SIGTERM");
		}
	}
	(void)rv;
	show_log(pt_dd.dd_err);
	/* dtd's stderr and ksyms, and a mount if dtd had to be killed. */
	dtt_dtd_fini(&pt_dd, true);
	return dtt_done();
}
