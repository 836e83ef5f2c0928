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
 * syscall_loader DTD DTRUN DYNAMIC STATIC
 *
 * The launcher's part of the syscall provider (udt_ltrace.c): the calls
 * the dynamic loader makes before the preload library starts, read
 * through the device for a program started by dtrun.
 *
 *  - DYNAMIC (loader_tracee.c): its execve (the path, result 0), the
 *    loader's openat of ld.so.cache and of libc (paths, a descriptor
 *    each), the mmap of the cache on the descriptor its openat returned,
 *    page-aligned results, each exactly once, with the program's pid as
 *    pid and tid and stamps within the run; and none of the loader's
 *    work for the preload library itself (its openat, the maps of the
 *    descriptor that openat would have returned).
 *  - STATIC, the same program statically linked: reported on stderr as
 *    not traced, once, and run as untraced.
 *  - ptrace refused (a seccomp filter, inherited from this program run
 *    as "syscall_loader -n ..."): said once on stderr, the program runs
 *    and its own call is still recorded, the loader's are not.
 *  - Images exec'd later (udt_lhelp.c): a traced sh runs DYNAMIC as a
 *    child; its loader's calls arrive as above, under the child's pid
 *    (the one its own write carries), which is not the shell's.  sh
 *    running STATIC: said once on stderr.  sh running DYNAMIC through
 *    "DYNAMIC -t", which traces it itself, so the helper cannot:
 *    said once, and the program runs.
 *  - Nothing enabled: dtrun does not follow its command's loader (dtd
 *    says no syscall probe is on), but STATIC is still said once; and
 *    DYNAMIC under a policy that refuses ptrace runs and says nothing,
 *    since no ptrace is tried.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dtt.h"
#include "syscall_util.h"
#include "systab.h"

enum { P_EXECVE, P_OPENAT, P_MMAP, P_WRITE, P_N };
#define MAXEV	4096		/* events of one run kept */
static const long lnr[P_N] = { SYS_execve, SYS_openat, SYS_mmap, SYS_write };
static const char *const lname[P_N] = { "execve", "openat", "mmap",
    "write" };

/* What one run of a program under dtrun gave. */
struct run {
	pid_t	r_pid;
	int	r_status;
	char	r_err[4096];		/* its stderr and dtrun's */
	long	r_exec, r_exec_ok;	/* execve of the program, result 0 */
	long	r_cache, r_libc;	/* openat entries of those paths */
	long	r_cache_fd, r_libc_fd;	/* their results, -1 if none */
	long	r_cache_map;		/* mmap entries on the cache's fd */
	long	r_mmap, r_mmap_bad;	/* mmap results, misaligned ones */
	long	r_ours, r_ours_map;	/* the library's openat, its maps */
	long	r_other;		/* events with another pid or tid */
	pid_t	r_prog;			/* the pid of the program's write */
	long	r_late;			/* stamps outside the run */
	int	r_mark;			/* the program's own write came */
};

/* The string of argument arg in an event with DTEVT_STRINGS, or NULL. */
static const char *
ev_str(const struct dt_evt *ev, unsigned int arg, char *buf, size_t len)
{
	const unsigned char *p = DTEV_STR_AREA(ev);
	const unsigned char *end = p + DTEV_STR_SIZE;

	while (p + DTEV_STR_HDR < end && p[0] != 0) {
		size_t n = p[1];

		if (p + DTEV_STR_HDR + n >= end)
			return NULL;
		if ((unsigned int)(p[0] & DTEV_STR_ARG) == arg + 1) {
			snprintf(buf, len, "%.*s", (int)n,
			    (const char *)p + DTEV_STR_HDR);
			return buf;
		}
		p += DTEV_STR_HDR + n + 1;
	}
	return NULL;
}

static uint64_t
ev_ns(const struct dt_evt *ev)
{
	return (uint64_t)ev->dtev_tsp.tv_sec * 1000000000ULL +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

static int
ev_cmp(const void *a, const void *b)
{
	uint64_t x = ev_ns(a), y = ev_ns(b);

	return x < y ? -1 : x > y;
}

/*
 * Run argv (dtrun ...) and read its events.  follow 0: the program is
 * the process dtrun became; 1: a process the command runs, whichever
 * made the program's write.
 */
static int
run_prog(struct dtt_dtd *dd, int fd, char *const argv[], const uint32_t *pbn,
    const char *path, int events, int follow, struct run *r)
{
	static struct dt_evt evs[1024], mine[MAXEV];
	char errpath[512], buf[256];
	const char *s;
	uint64_t t0, t1;
	int errfd, nullfd, want = 0;	/* 1: openat cache, 2: libc, 3: mmap */
	int opened[64] = { 0 };		/* descriptors an openat returned */
	long n, k, nmine;
	ssize_t len;

	memset(r, 0, sizeof(*r));
	r->r_cache_fd = r->r_libc_fd = -1;
	snprintf(errpath, sizeof(errpath), "%s/stderr", dd->dd_dir);
	if ((errfd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	/* Its "ok" is no line of ours. */
	if ((nullfd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		close(errfd);
		return -1;
	}
	t0 = dtt_clock_ns(CLOCK_REALTIME);
	r->r_pid = dtt_spawn(argv, NULL, -1, nullfd, errfd, -1);
	close(nullfd);
	if (r->r_pid == -1) {
		close(errfd);
		return -1;
	}
	r->r_status = dtt_wait(r->r_pid, DTT_EXIT_MS);
	t1 = dtt_clock_ns(CLOCK_REALTIME);
	/* The tracer reports before it lets the program go on. */
	len = pread(errfd, r->r_err, sizeof(r->r_err) - 1, 0);
	r->r_err[len > 0 ? len : 0] = '\0';
	close(errfd);

	/*
	 * dtd hands a process's records on in the order it made them, but
	 * each to the open's ring of its cpu, and the launcher's carry the
	 * cpus the loader ran on.  Once the program's own write has come,
	 * every earlier event is in some ring already: what is left is read
	 * without waiting for more, and the process's events are put back
	 * in their order by time stamp (one thread: strictly increasing).
	 * A static program has none: no library to wait for.
	 */
	nmine = 0;
	while (events && (n = dtt_read(fd, evs, 1024,
	    r->r_mark ? 100 : 5000)) > 0) {
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];

			if (!follow && ev->dtev_pid != r->r_pid) {
				r->r_other++;
				continue;
			}
			if (ev->dtev_pbn == pbn[P_WRITE] &&
			    ev->dtev_args[0] == 1 && ev->dtev_args[2] == 3) {
				r->r_mark = 1;
				r->r_prog = ev->dtev_pid;
			}
			if (nmine < MAXEV)
				mine[nmine++] = *ev;
		}
	}
	if (!follow)
		r->r_prog = r->r_pid;
	qsort(mine, nmine, sizeof(mine[0]), ev_cmp);
	for (k = 0; k < nmine; k++) {
		const struct dt_evt *ev = &mine[k];
		uint32_t p = ev->dtev_pbn;
		uint64_t ts = ev_ns(ev);
		long rv = (long)ev->dtev_retval[0];

		/*
		 * The shell's exec of the program: from a vfork child, in
		 * its parent's ring (the pid the shell's, the tid its own).
		 */
		if (follow && p == pbn[P_EXECVE] &&
		    ev->dtev_tid == r->r_prog && (s = ev_str(ev, 0, buf,
		    sizeof(buf))) != NULL && strcmp(s, path) == 0)
			r->r_exec++;
		if (ev->dtev_pid != r->r_prog)
			continue;
		if (ev->dtev_tid != r->r_prog)
			r->r_other++;
		if (ts < t0 || ts > t1)
			r->r_late++;
		if (!follow && p == pbn[P_EXECVE] && (s = ev_str(ev, 0, buf,
		    sizeof(buf))) != NULL && strcmp(s, path) == 0)
			r->r_exec++;
		if (p == pbn[P_EXECVE] + 1 && rv == 0 && ev->dtev_error == 0)
			r->r_exec_ok++;
		if (p == pbn[P_OPENAT]) {
			want = 0;
			s = ev_str(ev, 1, buf, sizeof(buf));
			if (s != NULL && strstr(s, "/libuserdt-preload") != NULL)
				r->r_ours++;
			if (s != NULL && strcmp(s, "/etc/ld.so.cache") == 0) {
				r->r_cache++;
				want = 1;
			} else if (s != NULL &&
			    strstr(s, "/libc.so.6") != NULL) {
				r->r_libc++;
				want = 2;
			}
		}
		if (p == pbn[P_OPENAT] + 1 && ev->dtev_error == 0 && rv >= 0 &&
		    rv < 64)
			opened[rv] = 1;
		if (p == pbn[P_OPENAT] + 1 && want == 1) {
			r->r_cache_fd = ev->dtev_error == 0 ? rv : -1;
			want = 3;
		} else if (p == pbn[P_OPENAT] + 1 && want == 2) {
			r->r_libc_fd = ev->dtev_error == 0 ? rv : -1;
			want = 0;
		}
		/* ld.so maps the cache on the descriptor it got. */
		if (p == pbn[P_MMAP] && want == 3 &&
		    (long)ev->dtev_args[4] == r->r_cache_fd) {
			r->r_cache_map++;
			want = 0;
		}
		/* A file mapped before any openat gave its descriptor. */
		if (p == pbn[P_MMAP] && !(ev->dtev_args[3] & MAP_ANONYMOUS) &&
		    (ev->dtev_args[4] >= 64 || !opened[ev->dtev_args[4]]))
			r->r_ours_map++;
		if (p == pbn[P_MMAP] + 1) {
			r->r_mmap++;
			if (ev->dtev_error != 0 || (rv & 4095) != 0)
				r->r_mmap_bad++;
		}
	}
	return 0;
}

/*
 * A run whose loader was traced (what names it): the program ran as
 * untraced, and its image's loader calls arrived once each, right.
 */
static void
check_loader(const char *what, const char *path, const struct run *r)
{
	dtt_check(dtt_exited0(r->r_status) && r->r_err[0] == '\0',
	    "%s: ran as untraced, nothing on stderr (%s)", what, r->r_err);
	dtt_check(r->r_exec == 1 && r->r_exec_ok == 1,
	    "%s: execve of %s once (%ld), returned 0 (%ld)", what, path,
	    r->r_exec, r->r_exec_ok);
	dtt_check(r->r_cache == 1 && r->r_cache_fd >= 0,
	    "%s: openat of /etc/ld.so.cache once (%ld), a descriptor (%ld)",
	    what, r->r_cache, r->r_cache_fd);
	dtt_check(r->r_cache_map == 1, "%s: the cache mapped on the "
	    "descriptor its openat returned", what);
	dtt_check(r->r_libc == 1 && r->r_libc_fd >= 0,
	    "%s: openat of libc once (%ld), a descriptor (%ld)", what,
	    r->r_libc, r->r_libc_fd);
	dtt_check(r->r_mmap >= 4 && r->r_mmap_bad == 0,
	    "%s: %ld mmap results, %ld not a page", what, r->r_mmap,
	    r->r_mmap_bad);
	dtt_check(r->r_ours == 0 && r->r_ours_map == 0,
	    "%s: the loading of the preload library left out: %ld openat, "
	    "%ld maps of a file no openat opened", what, r->r_ours,
	    r->r_ours_map);
	dtt_check(r->r_other == 0 && r->r_late == 0,
	    "%s: pid and tid the program's (%ld not), stamps within the run "
	    "(%ld not)", what, r->r_other, r->r_late);
}

/* How many times needle occurs in hay. */
static int
count_str(const char *hay, const char *needle)
{
	int c = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		c++;
		hay += strlen(needle);
	}
	return c;
}

/* A run of the static program (what names it): said once, run untraced. */
static void
check_static(const char *what, const char *path, const struct run *r)
{
	dtt_check(dtt_exited0(r->r_status), "%s: ran as untraced", what);
	dtt_check(count_str(r->r_err, "statically linked: its system calls "
	    "are not traced") == 1 && strstr(r->r_err, path),
	    "%s: said once on stderr (%s)", what, r->r_err);
}

/* -n: ptrace fails with EPERM from here on, then exec the rest. */
static int
noptrace(char *argv[])
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		err(126, "seccomp");
	execv(argv[0], argv);
	err(127, "%s", argv[0]);
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct run r;
	uint32_t pbn[P_N];
	char self[512], cmd[2048];
	char *targv[8];
	size_t npi;
	ssize_t len;
	int fd = -1, i;

	if (argc > 2 && strcmp(argv[1], "-n") == 0)
		return noptrace(argv + 2);
	if (argc != 5) {
		fprintf(stderr, "usage: syscall_loader DTD DTRUN DYNAMIC "
		    "STATIC\n");
		return 2;
	}
	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		err(1, "/proc/self/exe");
	self[len] = '\0';
	/* The launcher's switch, were it inherited, would hide it all. */
	unsetenv("USERDT_LOADER");
	if (st_setup(&dd, "udt-loader", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	for (i = 0; i < P_N; i++)
		if (st_enable_linux(fd, pi, npi, (int)lnr[i], lname[i],
		    DTEVT_FUNCARGS | DTEVT_STRINGS, &pbn[i]) != 0)
			goto out;
	if (dtt_record(fd, 1) != 0)
		goto out;

	/* The dynamic program: the loader's calls, once each, right. */
	targv[0] = argv[2];
	targv[1] = "-s";
	targv[2] = dd.dd_sock;
	targv[3] = argv[3];
	targv[4] = NULL;
	if (run_prog(&dd, fd, targv, pbn, argv[3], 1, 0, &r) == 0) {
		check_loader("dynamic", argv[3], &r);
		dtt_check(r.r_mark, "dynamic: its own write arrived");
	}

	/* The static program: said, and run as untraced. */
	targv[3] = argv[4];
	if (run_prog(&dd, fd, targv, pbn, argv[4], 0, 0, &r) == 0)
		check_static("static", argv[4], &r);

	/* ptrace refused: said once, the program traced from its library. */
	targv[0] = self;
	targv[1] = "-n";
	targv[2] = argv[2];
	targv[3] = "-s";
	targv[4] = dd.dd_sock;
	targv[5] = argv[3];
	targv[6] = NULL;
	if (run_prog(&dd, fd, targv, pbn, argv[3], 1, 0, &r) == 0) {
		dtt_check(dtt_exited0(r.r_status), "no ptrace: ran as untraced");
		dtt_check(count_str(r.r_err, "cannot trace the dynamic loader")
		    == 1, "no ptrace: said once on stderr (%s)", r.r_err);
		dtt_check(r.r_mark && r.r_cache == 0 && r.r_exec == 0,
		    "no ptrace: its own write recorded (%d), no loader call "
		    "(%ld, %ld)", r.r_mark, r.r_cache, r.r_exec);
	}

	/* A traced sh runs the dynamic program as its child. */
	snprintf(cmd, sizeof(cmd), "%s; true", argv[3]);
	targv[0] = argv[2];
	targv[1] = "-s";
	targv[2] = dd.dd_sock;
	targv[3] = "/bin/sh";
	targv[4] = "-c";
	targv[5] = cmd;
	targv[6] = NULL;
	if (run_prog(&dd, fd, targv, pbn, argv[3], 1, 1, &r) == 0) {
		check_loader("sh", argv[3], &r);
		dtt_check(r.r_mark && r.r_prog != r.r_pid,
		    "sh: the program's write arrived, from a child (%d) of "
		    "the shell (%d)", (int)r.r_prog, (int)r.r_pid);
	}

	/* A traced sh runs the static program: said. */
	snprintf(cmd, sizeof(cmd), "%s; true", argv[4]);
	if (run_prog(&dd, fd, targv, pbn, argv[4], 0, 1, &r) == 0)
		check_static("sh static", argv[4], &r);

	/* The helper refused (another tracer has it): said once, it runs. */
	snprintf(cmd, sizeof(cmd), "%s -t %s; %s -t %s; true", argv[3],
	    argv[3], argv[3], argv[3]);
	if (run_prog(&dd, fd, targv, pbn, argv[3], 1, 1, &r) == 0) {
		dtt_check(dtt_exited0(r.r_status), "sh refused: ran");
		dtt_check(count_str(r.r_err, "cannot trace the dynamic loader "
		    "of a program") == 1, "sh refused: said once on stderr, "
		    "for two (%s)", r.r_err);
		dtt_check(r.r_mark && r.r_cache == 0,
		    "sh refused: its own write recorded (%d), no loader call "
		    "(%ld)", r.r_mark, r.r_cache);
	}

	/*
	 * Nothing on (recording stopped): dtrun asks dtd and does not
	 * follow its command's loader, yet a static one is still said
	 * once, and a dynamic one runs and says nothing.
	 */
	if (dtt_record(fd, 0) != 0)
		goto out;
	targv[0] = argv[2];
	targv[1] = "-s";
	targv[2] = dd.dd_sock;
	targv[3] = argv[4];
	targv[4] = NULL;
	if (run_prog(&dd, fd, targv, pbn, argv[4], 0, 0, &r) == 0)
		check_static("static, nothing on", argv[4], &r);
	/* Under a policy that refuses ptrace: never tried, so not said. */
	targv[0] = self;
	targv[1] = "-n";
	targv[2] = argv[2];
	targv[3] = "-s";
	targv[4] = dd.dd_sock;
	targv[5] = argv[3];
	targv[6] = NULL;
	if (run_prog(&dd, fd, targv, pbn, argv[3], 0, 0, &r) == 0)
		dtt_check(dtt_exited0(r.r_status) && r.r_err[0] == '\0',
		    "dynamic, nothing on: ran, not followed, said nothing (%s)",
		    r.r_err);
out:
	free(pi);
	st_teardown(&dd, fd);
	return dtt_done();
}
