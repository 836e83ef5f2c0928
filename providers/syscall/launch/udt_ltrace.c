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
 * The launcher's tracer, for one tracee: what the dynamic loader of a
 * new image does before the preload library starts (udt_lrec.h says why
 * and how it is handed over).  The helper process (udt_lhelp.c) seizes
 * the tracee and hands each stop here; this follows its system calls
 * from its execve to the library's handover, then detaches.  No
 * PTRACE_O_EXITKILL: a tracer that dies lets the program run on
 * untraced, which is better than killing it.
 *
 * The loader's work for the preload library itself (opening, reading,
 * mapping it, and later the mprotect of its relocated data) is the
 * tracing's, not the program's: an untraced run never does it.  Those
 * calls are left out: the open whose descriptor names the library's
 * file, the calls on that descriptor until it is closed, and those on
 * the addresses it was mapped at.  What the loader does for every
 * library alike (the search, ld.so.cache) is the program's too.
 *
 * What it does not trace, it says once on stderr: a statically linked
 * image (no loader, no library: untraced), and an image the exec gives
 * other credentials (set-id or file capabilities: a non-root tracer's
 * exec would not get them, and the program must not behave differently
 * because it is traced).  Under btrace -c of a hooked tree
 * (UDT_LAUNCH_KTREE_EXEC) dtd reads either from the kernel instead,
 * asked at the exec stop (udt_karmq()); a root helper stays on through
 * a set-id exec for that and judges the image at the stop by the
 * kernel's AT_SECURE, not by the file's bits before.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "systab.h"
#include "udt_launch.h"
#include "udt_lrec.h"
#include "udt_ltrace.h"
#include "udt_str.h"

#define UDT_AUDIT_X86_64	0xc000003eu	/* AUDIT_ARCH_X86_64 */

/*
 * A followed process's calls between its question and its exec: the
 * library's own few (the answer, PR_SET_PTRACER), a signal handler's.
 */
#define UDT_LT_BEFORE		64

/* Records stamped with one reading of the tracee's cpu. */
#define UDT_LT_CPUAGE		32

/* The tracer's state for one tracee; the helper's thread only. */
struct udt_lt {
	const char	*lt_prog;	/* for messages */
	pid_t		 lt_pid;	/* the tracee */
	int		 lt_follow;	/* it asked before its exec */
	int		 lt_checkonly;	/* it wants nothing: let go at exec */
	unsigned int	 lt_before;	/* its calls before the exec */
	const char	*lt_lib;	/* LD_PRELOAD must name it (follow) */
	int		 lt_statfd;	/* /proc/PID/stat, or -1 */
	uint32_t	 lt_cpu;	/* as last read there */
	char		 lt_comm[UDT_COMMLEN];	/* as last read there */
	unsigned int	 lt_cpuage;	/* records stamped since */
	struct udt_lrec	*lt_rec;	/* kept calls */
	unsigned int	 lt_nrec, lt_cap;
	struct udt_lrec	 lt_exec;	/* the execve's entry, until it works */
	int		 lt_have_exec;
	int		 lt_execd;	/* the exec happened: record */
	long		 lt_nr;		/* the call between entry and exit */
	uint64_t	 lt_ownlen;	/* its length, when lt_own */
	int		 lt_keep;	/* lt_nr's entry was kept */
	int		 lt_own;	/* lt_nr is the library's loading */
	dev_t		 lt_libdev;	/* the library's file, if found */
	ino_t		 lt_libino;
	int		 lt_libknown;
	int		 lt_ownfd;	/* the loader's descriptor of it, or -1 */
	uint64_t	 lt_ownlo;	/* where it was mapped: [lo, hi) */
	uint64_t	 lt_ownhi;
	size_t		 lt_need;	/* round 1 answered this */
};

/*
 * The tracee's comm and the cpu it last ran on, fields 2 and 39 of
 * /proc/PID/stat, opened at the first look after each exec (the pid may
 * have changed).  Left as they were when it cannot be read.
 */
static void
udt_lt_stat(struct udt_lt *lt)
{
	char path[64], buf[1024], *p, *q;
	ssize_t n;
	size_t len;
	int field;

	if (lt->lt_statfd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)lt->lt_pid);
		lt->lt_statfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (lt->lt_statfd < 0 ||
	    (n = pread(lt->lt_statfd, buf, sizeof(buf) - 1, 0)) <= 0)
		return;
	buf[n] = '\0';
	/* The comm in parentheses may hold anything: up to the last one. */
	if ((p = strchr(buf, '(')) == NULL || (q = strrchr(buf, ')')) == NULL ||
	    q < p)
		return;
	len = (size_t)(q - p - 1);
	if (len > sizeof(lt->lt_comm) - 1)
		len = sizeof(lt->lt_comm) - 1;
	memset(lt->lt_comm, 0, sizeof(lt->lt_comm));
	memcpy(lt->lt_comm, p + 1, len);
	for (field = 2; *q != '\0'; q++)
		if (*q == ' ' && ++field == 39) {
			lt->lt_cpu = (uint32_t)strtoul(q + 1, NULL, 10);
			break;
		}
}

static void
udt_lt_stamp(struct udt_lt *lt, struct udt_lrec *lr)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	lr->lr_sec = ts.tv_sec;
	lr->lr_nsec = ts.tv_nsec;
	lr->lr_tid = lt->lt_pid;
	/*
	 * Reading /proc/PID/stat costs more than the stop itself (about
	 * 30 us here): once every UDT_LT_CPUAGE records, from the exec on.
	 * A loader runs for a millisecond or two and rarely moves; its
	 * comm changes with the exec.
	 */
	if (lt->lt_cpuage++ % UDT_LT_CPUAGE == 0)
		udt_lt_stat(lt);
	lr->lr_cpu = lt->lt_cpu;
	memcpy(lr->lr_comm, lt->lt_comm, sizeof(lr->lr_comm));
}

/* An entry as a record: registers, and the strings the call reads. */
static void
udt_lt_entry(struct udt_lt *lt, const struct systab_ent *se,
    const uint64_t *args, struct udt_lrec *lr)
{
	unsigned int a;

	memset(lr, 0, sizeof(*lr));
	lr->lr_idx = (uint16_t)(se - systab);
	for (a = 0; a < UDT_NARGS; a++)
		lr->lr_args[a] = (int64_t)args[a];
	if (udt_str_read(lt->lt_pid, se, lr->lr_args, lr->lr_str) > 0)
		lr->lr_flags |= UDT_LR_STR;
	udt_lt_stamp(lt, lr);
}

/* Keep a record; 0, or -1 when UDT_LREC_MAX are kept already. */
static int
udt_lt_keep(struct udt_lt *lt, const struct udt_lrec *lr)
{
	struct udt_lrec *p;
	unsigned int cap;

	if (lt->lt_nrec == lt->lt_cap) {
		if (lt->lt_cap >= UDT_LREC_MAX)
			return -1;
		cap = lt->lt_cap == 0 ? 256 : 2 * lt->lt_cap;
		if ((p = realloc(lt->lt_rec, cap * sizeof(*p))) == NULL)
			return -1;
		lt->lt_rec = p;
		lt->lt_cap = cap;
	}
	lt->lt_rec[lt->lt_nrec++] = *lr;
	return 0;
}

/*
 * The file an execve or execveat at its entry stop names, as a path
 * this process can open (through the tracee's /proc entries), into buf.
 * 0, or -1 when it cannot be told.
 */
static int
udt_lt_execpath(struct udt_lt *lt, long nr, const uint64_t *args,
    char *buf, size_t len)
{
	unsigned char name[PATH_MAX];
	uint64_t a = nr == SYS_execve ? args[0] : args[1];
	size_t got;

	got = udt_str_peek(lt->lt_pid, a, name, sizeof(name) - 1);
	if (got == 0 || memchr(name, '\0', got) == NULL)
		return -1;
	if (name[0] == '/')
		snprintf(buf, len, "%s", name);
	else if (nr == SYS_execveat && (int)args[0] != AT_FDCWD)
		snprintf(buf, len, "/proc/%d/fd/%d%s%s", (int)lt->lt_pid,
		    (int)args[0], name[0] != '\0' ? "/" : "", name);
	else
		snprintf(buf, len, "/proc/%d/cwd/%s", (int)lt->lt_pid, name);
	return 0;
}

/* Whether [a, a + len) lies where the library was mapped. */
static int
udt_lt_inown(const struct udt_lt *lt, uint64_t a, uint64_t len)
{
	return lt->lt_ownlo < lt->lt_ownhi && a >= lt->lt_ownlo &&
	    a + len >= a && a + len <= lt->lt_ownhi;
}

/* At an entry: whether the call is the loader's work for the library. */
static int
udt_lt_isown(const struct udt_lt *lt, long nr, const uint64_t *args)
{
	int fd = (int)args[0];

	switch (nr) {
	case SYS_read:
	case SYS_pread64:
	case SYS_fstat:
	case SYS_newfstatat:
	case SYS_close:
		return lt->lt_ownfd >= 0 && fd == lt->lt_ownfd;
	case SYS_mmap:
		if (!(args[3] & MAP_ANONYMOUS) && lt->lt_ownfd >= 0 &&
		    (int)args[4] == lt->lt_ownfd)
			return 1;
		return (args[3] & MAP_FIXED) && udt_lt_inown(lt, args[0],
		    args[1]);
	case SYS_mprotect:
	case SYS_munmap:
	case SYS_madvise:
		return udt_lt_inown(lt, args[0], args[1]);
	default:
		return 0;
	}
}

/*
 * At the exit of an open that worked: whether descriptor fd of the
 * tracee is the library's file.  Compared by device and inode, so any
 * spelling of its path in LD_PRELOAD is recognised.
 */
static int
udt_lt_islib(const struct udt_lt *lt, long fd)
{
	char path[64];
	struct stat st;

	if (!lt->lt_libknown || fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)lt->lt_pid, fd);
	return stat(path, &st) == 0 && st.st_dev == lt->lt_libdev &&
	    st.st_ino == lt->lt_libino;
}

/* Round 2: the kept calls into the library's buffer at a (len bytes). */
static void
udt_lt_hand(struct udt_lt *lt, uint64_t a, uint64_t len)
{
	struct udt_lbuf hdr;
	struct iovec local[2], remote;
	size_t need = sizeof(hdr) + lt->lt_nrec * sizeof(struct udt_lrec);

	if (len < need)
		return;
	memset(&hdr, 0, sizeof(hdr));
	hdr.lb_magic = UDT_LREC_MAGIC;
	hdr.lb_count = lt->lt_nrec;
	local[0].iov_base = &hdr;
	local[0].iov_len = sizeof(hdr);
	local[1].iov_base = lt->lt_rec;
	local[1].iov_len = need - sizeof(hdr);
	remote.iov_base = (void *)(uintptr_t)a;
	remote.iov_len = need;
	(void)process_vm_writev(lt->lt_pid, local, 2, &remote, 1, 0);
}

/*
 * A syscall-entry stop.  Returns 1 when the tracer is done with the
 * tracee (it detached), else 0.
 */
static int
udt_lt_enter(struct udt_lt *lt, const struct __ptrace_syscall_info *si)
{
	const struct systab_ent *se;
	struct udt_lrec lr;
	char path[PATH_MAX + 64];
	long nr = (long)si->entry.nr;

	lt->lt_nr = nr;
	lt->lt_keep = 0;
	lt->lt_own = 0;
	if (si->arch != UDT_AUDIT_X86_64)
		return 0;
	if (nr == SYS_prctl && si->entry.args[0] == UDT_LREC_PRCTL &&
	    lt->lt_execd) {
		if (si->entry.args[1] == 0) {
			lt->lt_need = sizeof(struct udt_lbuf) +
			    lt->lt_nrec * sizeof(struct udt_lrec);
			return 0;
		}
		udt_lt_hand(lt, si->entry.args[1], si->entry.args[2]);
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	/* After round 1: the library's own calls. */
	if (lt->lt_need != 0 || (se = systab_by_linux(nr)) == NULL)
		return 0;
	if (nr == SYS_execve || nr == SYS_execveat) {
		if (!udt_li_karmsetid() && udt_lt_execpath(lt, nr,
		    (const uint64_t *)si->entry.args, path, sizeof(path)) ==
		    0 && udt_li_setid(path)) {
			/*
			 * The loader of a set-id image ignores LD_PRELOAD
			 * paths, so none of its calls reach a hook either.
			 */
			udt_li_say_setid(lt->lt_prog, path, UDT_LI_NOLIB);
			ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
			return 1;
		}
		/* A traced process's exec: its library records the entry. */
		if (!lt->lt_execd && lt->lt_follow)
			return 0;
		if (!lt->lt_execd) {
			/* The launcher's exec: kept only once it works. */
			udt_lt_entry(lt, se, (const uint64_t *)si->entry.args,
			    &lt->lt_exec);
			lt->lt_have_exec = 1;
			return 0;
		}
	}
	if (!lt->lt_execd) {
		/*
		 * A process that asked to be followed execs right after the
		 * answer; one that goes on doing other things is let go.
		 */
		if (lt->lt_follow && ++lt->lt_before > UDT_LT_BEFORE) {
			ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
			return 1;
		}
		return 0;
	}
	if (udt_lt_isown(lt, nr, (const uint64_t *)si->entry.args)) {
		lt->lt_own = 1;
		lt->lt_ownlen = si->entry.args[1];
		if (nr == SYS_close)
			lt->lt_ownfd = -1;
		return 0;
	}
	udt_lt_entry(lt, se, (const uint64_t *)si->entry.args, &lr);
	if (udt_lt_keep(lt, &lr) == -1) {
		fprintf(stderr, "%s: the preload library did not start within "
		    "%d system calls: the program runs untraced\n",
		    lt->lt_prog, UDT_LREC_MAX);
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	lt->lt_keep = 1;
	return 0;
}

/* A syscall-exit stop.  Returns 1 when done with the tracee. */
static int
udt_lt_exit(struct udt_lt *lt, const struct __ptrace_syscall_info *si)
{
	const struct systab_ent *se;
	struct udt_lrec lr;

	if (lt->lt_nr == SYS_prctl && lt->lt_need != 0) {
		/* Round 1's answer, once: later calls are the library's. */
		if (lt->lt_need != (size_t)-1) {
			ptrace(PTRACE_POKEUSER, lt->lt_pid,
			    offsetof(struct user, regs.rax),
			    (long)lt->lt_need);
			lt->lt_need = (size_t)-1;
		}
		return 0;
	}
	/* A failed exec of a traced process: its image goes on, untraced. */
	if (lt->lt_follow && !lt->lt_execd &&
	    (lt->lt_nr == SYS_execve || lt->lt_nr == SYS_execveat)) {
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	if (lt->lt_own) {
		/* The library's mapping: where its later calls will land. */
		lt->lt_own = 0;
		if (lt->lt_nr == SYS_mmap && !si->exit.is_error) {
			uint64_t a = (uint64_t)si->exit.rval;

			/* The range starts empty, [0, 0). */
			if (lt->lt_ownlo >= lt->lt_ownhi || a < lt->lt_ownlo)
				lt->lt_ownlo = a;
			if (a + lt->lt_ownlen > lt->lt_ownhi)
				lt->lt_ownhi = a + lt->lt_ownlen;
		}
		return 0;
	}
	if (!lt->lt_keep || (se = systab_by_linux(lt->lt_nr)) == NULL)
		return 0;
	lt->lt_keep = 0;
	/* The library's file opened: its entry goes, and no return. */
	if ((lt->lt_nr == SYS_openat || lt->lt_nr == SYS_open) &&
	    !si->exit.is_error && lt->lt_ownfd < 0 && lt->lt_nrec > 0 &&
	    udt_lt_islib(lt, (long)si->exit.rval)) {
		lt->lt_nrec--;
		lt->lt_ownfd = (int)si->exit.rval;
		return 0;
	}
	memset(&lr, 0, sizeof(lr));
	lr.lr_idx = (uint16_t)(se - systab);
	lr.lr_flags = UDT_LR_RET;
	if (si->exit.is_error) {
		lr.lr_args[0] = -1;
		lr.lr_error = (int32_t)-si->exit.rval;
	} else
		lr.lr_args[0] = si->exit.rval;
	udt_lt_stamp(lt, &lr);
	(void)udt_lt_keep(lt, &lr);
	return 0;
}

/*
 * Of a followed image, stopped at its exec: whether its environment
 * still preloads the library and names the helper.  If so, the name
 * becomes UDT_LFOLLOW_MARK in place, on the new stack, and 1 is
 * returned; the library puts it back.  Else 0: the program chose to run
 * it without us, and it is let go.
 */
static int
udt_lt_envmark(struct udt_lt *lt)
{
	struct user_regs_struct regs;
	struct iovec local, remote;
	uint64_t argc, a, ptrs[128], at = 0;
	unsigned char head[16], val[4096];
	size_t n, i, got;
	int lib = 0;

	if (ptrace(PTRACE_GETREGS, lt->lt_pid, 0, &regs) == -1 ||
	    udt_str_peek(lt->lt_pid, regs.rsp, (unsigned char *)&argc,
	    sizeof(argc)) != sizeof(argc) || argc > (1u << 24))
		return 0;
	/* argc, argv[] and its NULL, then envp[] up to its NULL. */
	a = regs.rsp + 8 * (argc + 2);
	for (;;) {
		n = udt_str_peek(lt->lt_pid, a, (unsigned char *)ptrs,
		    sizeof(ptrs)) / 8;
		if (n == 0)
			return 0;
		for (i = 0; i < n && ptrs[i] != 0; i++) {
			got = udt_str_peek(lt->lt_pid, ptrs[i], head,
			    sizeof(head));
			if (got >= sizeof(UDT_LFOLLOW_ENV) && memcmp(head,
			    UDT_LFOLLOW_ENV "=", sizeof(UDT_LFOLLOW_ENV)) == 0)
				at = ptrs[i];
			else if (lt->lt_lib[0] != '\0' && got >= 11 &&
			    memcmp(head, "LD_PRELOAD=", 11) == 0) {
				got = udt_str_peek(lt->lt_pid, ptrs[i] + 11,
				    val, sizeof(val) - 1);
				val[got] = '\0';
				lib = strstr((char *)val, lt->lt_lib) != NULL;
			}
		}
		if (i < n)
			break;
		a += 8 * n;
	}
	if (at == 0 || !lib)
		return 0;
	/* The same length: the variable keeps its place and its value. */
	_Static_assert(sizeof(UDT_LFOLLOW_MARK) == sizeof(UDT_LFOLLOW_ENV),
	    "UDT_LFOLLOW_MARK renames UDT_LFOLLOW_ENV in place");
	local.iov_base = (void *)UDT_LFOLLOW_MARK;
	local.iov_len = sizeof(UDT_LFOLLOW_MARK) - 1;
	remote.iov_base = (void *)(uintptr_t)at;
	remote.iov_len = local.iov_len;
	return process_vm_writev(lt->lt_pid, &local, 1, &remote, 1, 0) ==
	    (ssize_t)remote.iov_len;
}

/*
 * The exec happened: keep its entry and follow the new image, unless
 * it has no loader.  Returns 1 when done with the tracee.
 */
static int
udt_lt_exec(struct udt_lt *lt)
{
	char exe[PATH_MAX], why[128];
	int error, secure;

	if (udt_li_dynamic(lt->lt_pid, exe, sizeof(exe)) == 0) {
		/* held here, before its first instruction, until dtd has it */
		error = 0;
		if (udt_li_ktree() == UDT_LAUNCH_KTREE_EXEC &&
		    udt_karmq(lt->lt_pid) == -1)
			error = errno;
		udt_li_say_static(lt->lt_prog, exe, udt_li_ktree() != 0 &&
		    error == 0, error);
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	/*
	 * The kernel's word, after the fact: its loader ignores LD_PRELOAD
	 * and the exec dropped the perf events it inherited.  Held, as a
	 * static image, until dtd has opened its own.  A vector that cannot
	 * be told (a 32-bit image's) is not taken as secure, nor dtd asked
	 * (it would not tell either): one of a set-id file runs with its
	 * credentials (root's tracee), untraced, and is said so.
	 */
	if (udt_li_karmsetid() &&
	    (secure = udt_karmq_secure(lt->lt_pid)) != 0 &&
	    (secure == 1 || udt_li_setid(exe))) {
		if (secure == -1)
			udt_li_say_setid(lt->lt_prog, exe, "not a 64-bit "
			    "image, whose exec cannot be told secure");
		else if (udt_karmq(lt->lt_pid) == 0)
			udt_li_say_setid(lt->lt_prog, exe, NULL);
		else {
			snprintf(why, sizeof(why), "dtd: %s", strerror(errno));
			udt_li_say_setid(lt->lt_prog, exe, why);
		}
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	/*
	 * Nothing enabled when it asked: its loader's calls would only be
	 * dropped by its library, so two stops a call buy nothing.  The
	 * variable stays unmarked: the new image asks again at its exec.
	 */
	if (lt->lt_checkonly) {
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	if (lt->lt_follow) {
		if (!udt_lt_envmark(lt)) {
			ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
			return 1;
		}
		lt->lt_keep = 1;	/* the execve's return comes next */
	}
	lt->lt_execd = 1;
	if (lt->lt_have_exec) {
		(void)udt_lt_keep(lt, &lt->lt_exec);
		lt->lt_have_exec = 0;
		lt->lt_keep = 1;	/* its return comes next */
	}
	/* The next record reads the new image's comm. */
	if (lt->lt_statfd >= 0)
		close(lt->lt_statfd);
	lt->lt_statfd = -1;
	memset(lt->lt_comm, 0, sizeof(lt->lt_comm));
	lt->lt_cpuage = 0;
	return 0;
}


long
udt_lt_options(void)
{
	return PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC;
}

struct udt_lt *
udt_lt_new(const char *prog, pid_t tid, int follow, const char *lib)
{
	struct udt_lt *lt;
	struct stat st;

	if ((lt = calloc(1, sizeof(*lt))) == NULL)
		return NULL;
	lt->lt_prog = prog;
	lt->lt_pid = tid;
	lt->lt_follow = follow != UDT_LT_LAUNCH;
	lt->lt_checkonly = follow == UDT_LT_CHECK;
	lt->lt_lib = lib != NULL ? lib : "";
	lt->lt_statfd = -1;
	lt->lt_ownfd = -1;
	if (lib != NULL && stat(lib, &st) == 0) {
		lt->lt_libdev = st.st_dev;
		lt->lt_libino = st.st_ino;
		lt->lt_libknown = 1;
	}
	return lt;
}

void
udt_lt_free(struct udt_lt *lt)
{
	if (lt == NULL)
		return;
	if (lt->lt_statfd >= 0)
		close(lt->lt_statfd);
	free(lt->lt_rec);
	free(lt);
}

pid_t
udt_lt_pid(const struct udt_lt *lt)
{
	return lt->lt_pid;
}

void
udt_lt_repid(struct udt_lt *lt, pid_t pid)
{
	lt->lt_pid = pid;
}

/*
 * Each stop that is not a system call's is passed on as the kernel
 * would have: a signal re-injected, a group stop listened through.
 */
int
udt_lt_stop(struct udt_lt *lt, int st)
{
	struct __ptrace_syscall_info si;
	pid_t pid = lt->lt_pid;
	int sig = 0;

	if (WIFEXITED(st) || WIFSIGNALED(st))
		return 1;
	if (!WIFSTOPPED(st))
		return 0;
	if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(si),
		    &si) <= 0) {
			ptrace(PTRACE_DETACH, pid, 0, 0);
			return 1;
		}
		if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
			if (udt_lt_enter(lt, &si))
				return 1;
		} else if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
			if (udt_lt_exit(lt, &si))
				return 1;
		}
	} else if (st >> 16 == PTRACE_EVENT_EXEC) {
		if (udt_lt_exec(lt))
			return 1;
	} else if (st >> 16 == PTRACE_EVENT_STOP) {
		sig = WSTOPSIG(st);
		if (sig == SIGSTOP || sig == SIGTSTP ||
		    sig == SIGTTIN || sig == SIGTTOU) {
			/* A group stop: stay stopped until SIGCONT. */
			ptrace(PTRACE_LISTEN, pid, 0, 0);
			return 0;
		}
		sig = 0;
	} else if (st >> 16 == 0)
		sig = WSTOPSIG(st);
	/* Gone meanwhile (killed): its exit status comes next. */
	(void)ptrace(PTRACE_SYSCALL, pid, 0, sig);
	return 0;
}
