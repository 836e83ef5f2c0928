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
 * The launcher's tracer: what the dynamic loader does before the preload
 * library starts (udt_lrec.h says why and how it is handed over).
 *
 * The process about to exec the command stays the command (same pid,
 * parent, group and terminal): it forks a tracer that it never sees
 * again, by a double fork, so the program has no child it did not make
 * and no SIGCHLD it did not ask for.  The tracer seizes it, which Yama's
 * ptrace_scope 1 allows once the tracee names it (PR_SET_PTRACER, taken
 * back before the exec so the program keeps no exception), and follows
 * its system calls from the execve to the library's handover, then
 * detaches.  No PTRACE_O_EXITKILL: a tracer that dies lets the program
 * run on untraced, which is better than killing it.
 *
 * What it does not trace, it says once on stderr: ptrace refused (the
 * launcher under strace or gdb, ptrace_scope 3, a seccomp policy), a
 * statically linked image (no loader, no library: untraced), and an
 * image the exec gives other credentials (set-id or file capabilities:
 * a traced exec would not get them, and the program must not behave
 * differently because it is traced).
 */
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <elf.h>
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
#include "udt_str.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif
#define UDT_AUDIT_X86_64	0xc000003eu	/* AUDIT_ARCH_X86_64 */

/* The tracer's state: one tracee, one thread, no locks. */
struct udt_lt {
	const char	*lt_prog;	/* for messages */
	pid_t		 lt_pid;	/* the tracee */
	int		 lt_statfd;	/* /proc/PID/stat: its cpu */
	char		 lt_comm[UDT_COMMLEN];
	struct udt_lrec	*lt_rec;	/* kept calls */
	unsigned int	 lt_nrec, lt_cap;
	struct udt_lrec	 lt_exec;	/* the execve's entry, until it works */
	int		 lt_have_exec;
	int		 lt_execd;	/* the exec happened: record */
	long		 lt_nr;		/* the call between entry and exit */
	int		 lt_keep;	/* lt_nr's entry was kept */
	size_t		 lt_need;	/* round 1 answered this */
};

/* The cpu the tracee last ran on, field 39 of /proc/PID/stat. */
static uint32_t
udt_lt_cpu(struct udt_lt *lt)
{
	char buf[1024], *p;
	ssize_t n;
	int field;

	if (lt->lt_statfd < 0 ||
	    (n = pread(lt->lt_statfd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	/* The comm in parentheses may hold anything: count after it. */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (field = 2; *p != '\0'; p++)
		if (*p == ' ' && ++field == 39)
			return (uint32_t)strtoul(p + 1, NULL, 10);
	return 0;
}

static void
udt_lt_comm(struct udt_lt *lt)
{
	char path[64];
	ssize_t n;
	int fd;

	memset(lt->lt_comm, 0, sizeof(lt->lt_comm));
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)lt->lt_pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, lt->lt_comm, sizeof(lt->lt_comm) - 1);
	close(fd);
	if (n > 0 && lt->lt_comm[n - 1] == '\n')
		lt->lt_comm[n - 1] = '\0';
}

/* Up to want bytes of the tracee at a; stops at the first unreadable. */
static size_t
udt_lt_peek(pid_t pid, uint64_t a, unsigned char *buf, size_t want)
{
	struct iovec local, remote[2];
	uint64_t edge = (a | 4095) + 1;
	unsigned long n = 1;
	ssize_t r;

	if (a < 4096 || a + want < a)
		return 0;
	local.iov_base = buf;
	local.iov_len = want;
	remote[0].iov_base = (void *)(uintptr_t)a;
	remote[0].iov_len = want;
	if (a + want > edge) {
		remote[0].iov_len = edge - a;
		remote[1].iov_base = (void *)(uintptr_t)edge;
		remote[1].iov_len = a + want - edge;
		n = 2;
	}
	r = process_vm_readv(pid, &local, 1, remote, n, 0);
	return r > 0 ? (size_t)r : 0;
}

static void
udt_lt_stamp(struct udt_lt *lt, struct udt_lrec *lr)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	lr->lr_sec = ts.tv_sec;
	lr->lr_nsec = ts.tv_nsec;
	lr->lr_tid = lt->lt_pid;
	lr->lr_cpu = udt_lt_cpu(lt);
	memcpy(lr->lr_comm, lt->lt_comm, sizeof(lr->lr_comm));
}

/* An entry as a record: registers, and the strings the call reads. */
static void
udt_lt_entry(struct udt_lt *lt, const struct systab_ent *se,
    const uint64_t *args, struct udt_lrec *lr)
{
	struct udt_str_in in[3];
	unsigned int a, n = 0;

	memset(lr, 0, sizeof(*lr));
	lr->lr_idx = (uint16_t)(se - systab);
	for (a = 0; a < UDT_NARGS; a++)
		lr->lr_args[a] = (int64_t)args[a];
	for (a = 0; a < se->se_nargs && n < 3; a++) {
		if (!(se->se_strargs & (1u << a)))
			continue;
		in[n].si_arg = a;
		in[n].si_got = udt_lt_peek(lt->lt_pid, args[a], in[n].si_buf,
		    UDT_STR_WANT);
		n++;
	}
	if (n > 0) {
		udt_str_pack(in, n, lr->lr_str);
		lr->lr_flags |= UDT_LR_STR;
	}
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

	got = udt_lt_peek(lt->lt_pid, a, name, sizeof(name) - 1);
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

/*
 * Whether executing path gives the process other credentials: set-id
 * bits that change its ids, or file capabilities for a process that is
 * not root's.  A traced exec does not get them (the kernel refuses a
 * tracer that lacks the privilege), so the tracer must let go first.
 */
static int
udt_lt_setid(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode))
		return 0;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return 1;
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) &&
	    st.st_gid != getegid())
		return 1;
	return geteuid() != 0 &&
	    getxattr(path, "security.capability", NULL, 0) > 0;
}

/*
 * Whether the image the tracee now runs asks for a dynamic loader
 * (PT_INTERP).  1 yes, 0 no (static), -1 cannot tell (not ELF64).
 */
static int
udt_lt_dynamic(pid_t pid, char *exe, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	char path[64];
	ssize_t n;
	int fd, i, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, len - 1)) <= 0)
		n = 0;
	exe[n] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph)) {
		close(fd);
		return -1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff +
		    (uint64_t)i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP) {
			r = 1;
			break;
		}
	}
	close(fd);
	return r;
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
		if (udt_lt_execpath(lt, nr, (const uint64_t *)si->entry.args,
		    path, sizeof(path)) == 0 && udt_lt_setid(path)) {
			fprintf(stderr, "%s: %s: set-id: its loader's calls "
			    "are not traced\n", lt->lt_prog, path);
			ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
			return 1;
		}
		if (!lt->lt_execd) {
			/* The launcher's exec: kept only once it works. */
			udt_lt_comm(lt);
			udt_lt_entry(lt, se, (const uint64_t *)si->entry.args,
			    &lt->lt_exec);
			lt->lt_have_exec = 1;
			return 0;
		}
	}
	if (!lt->lt_execd)
		return 0;
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

/* A syscall-exit stop. */
static void
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
		return;
	}
	if (!lt->lt_keep || (se = systab_by_linux(lt->lt_nr)) == NULL)
		return;
	lt->lt_keep = 0;
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
}

/*
 * The exec happened: keep its entry and follow the new image, unless
 * it has no loader.  Returns 1 when done with the tracee.
 */
static int
udt_lt_exec(struct udt_lt *lt)
{
	char path[64], exe[PATH_MAX];

	if (udt_lt_dynamic(lt->lt_pid, exe, sizeof(exe)) == 0) {
		fprintf(stderr, "%s: %s: statically linked: its system calls "
		    "are not traced\n", lt->lt_prog, exe);
		ptrace(PTRACE_DETACH, lt->lt_pid, 0, 0);
		return 1;
	}
	lt->lt_execd = 1;
	if (lt->lt_have_exec) {
		(void)udt_lt_keep(lt, &lt->lt_exec);
		lt->lt_have_exec = 0;
		lt->lt_keep = 1;	/* its return comes next */
	}
	udt_lt_comm(lt);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)lt->lt_pid);
	if (lt->lt_statfd >= 0)
		close(lt->lt_statfd);
	lt->lt_statfd = open(path, O_RDONLY | O_CLOEXEC);
	return 0;
}

/*
 * The tracer's life: seize, report, follow the stops.  Each stop that
 * is not a system call's is passed on as the kernel would have: a
 * signal re-injected, a group stop listened through.
 */
static void __attribute__((noreturn))
udt_lt_run(int sock, pid_t pid, const char *prog)
{
	struct udt_lt lt;
	struct __ptrace_syscall_info si;
	pid_t me = getpid();
	char go;
	int st, err = 0, sig;

	/*
	 * The terminal's signals are the program's: were the tracer to
	 * die of them mid-way, the program would run on untraced.
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	memset(&lt, 0, sizeof(lt));
	lt.lt_prog = prog;
	lt.lt_pid = pid;
	lt.lt_statfd = -1;
	if (write(sock, &me, sizeof(me)) != (ssize_t)sizeof(me) ||
	    read(sock, &go, 1) != 1)
		_exit(1);
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD |
	    PTRACE_O_TRACEEXEC) == -1 ||
	    ptrace(PTRACE_INTERRUPT, pid, 0, 0) == -1)
		err = errno;
	(void)write(sock, &err, sizeof(err));
	close(sock);
	if (err != 0)
		_exit(1);
	/*
	 * Nothing of the launcher's stays open here (a pipe a reader waits
	 * on to end, btrace's device): stderr only, for what we report.
	 */
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	(void)close_range(STDERR_FILENO + 1, ~0U, 0);

	for (;;) {
		if (waitpid(pid, &st, __WALL) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st))
			continue;
		sig = 0;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(si),
			    &si) <= 0)
				break;
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
				if (udt_lt_enter(&lt, &si))
					break;
			} else if (si.op == PTRACE_SYSCALL_INFO_EXIT)
				udt_lt_exit(&lt, &si);
		} else if (st >> 16 == PTRACE_EVENT_EXEC) {
			if (udt_lt_exec(&lt))
				break;
		} else if (st >> 16 == PTRACE_EVENT_STOP) {
			sig = WSTOPSIG(st);
			if (sig == SIGSTOP || sig == SIGTSTP ||
			    sig == SIGTTIN || sig == SIGTTOU) {
				/* A group stop: stay stopped until SIGCONT. */
				ptrace(PTRACE_LISTEN, pid, 0, 0);
				continue;
			}
			sig = 0;
		} else if (st >> 16 == 0)
			sig = WSTOPSIG(st);
		if (ptrace(PTRACE_SYSCALL, pid, 0, sig) == -1)
			break;
	}
	_exit(0);
}

int
udt_launch_trace(const char *prog)
{
	const char *off;
	char val[16];
	pid_t self = getpid(), h1, h2 = -1;
	int sv[2], err = 0, st;

	(void)unsetenv(UDT_LREC_ENV);
	if ((off = getenv(UDT_LAUNCH_LOADER_ENV)) != NULL &&
	    strcmp(off, "0") == 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		err = errno;
		goto fail;
	}
	if ((h1 = fork()) == -1) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		goto fail;
	}
	if (h1 == 0) {
		close(sv[0]);
		if (fork() == 0)
			udt_lt_run(sv[1], self, prog);
		_exit(0);
	}
	close(sv[1]);
	while (waitpid(h1, &st, 0) == -1 && errno == EINTR)
		;
	/* Set first: a tracer that seized waits for the handover it asks. */
	snprintf(val, sizeof(val), "%d", (int)self);
	if (setenv(UDT_LREC_ENV, val, 1) == -1) {
		err = errno;
		close(sv[0]);
		goto fail;
	}
	if (read(sv[0], &h2, sizeof(h2)) != (ssize_t)sizeof(h2)) {
		err = ECHILD;
		close(sv[0]);
		goto fail;
	}
	/* Yama: only a named tracer may attach to a process not its child. */
	(void)prctl(PR_SET_PTRACER, (unsigned long)h2, 0, 0, 0);
	if (write(sv[0], "g", 1) != 1 ||
	    read(sv[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
		err = ECHILD;
	(void)prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	close(sv[0]);
	if (err != 0)
		goto fail;
	return 0;
fail:
	(void)unsetenv(UDT_LREC_ENV);
	fprintf(stderr, "%s: cannot trace the dynamic loader (ptrace: %s): "
	    "its calls before the preload library starts are not recorded\n",
	    prog, strerror(err));
	return -1;
}
