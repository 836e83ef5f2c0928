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
 * The program syscall_signals runs untraced and traced; each mode must
 * behave the same both ways.
 *
 *	sigfd	blocks SIGTRAP and SIGSYS, reads them back as blocked
 *		(sigprocmask, pthread_sigmask), sends itself SIGTRAP by
 *		raise(), kill() and tgkill() and SIGSYS by kill(), sees each
 *		pending (sigpending) and reads it with its siginfo from a
 *		signalfd, then one more by sigwait(); unblocks SIGTRAP with a
 *		handler and gets one there; a thread and a signal handler's
 *		return on the way.  Exits 23, or the number of the check
 *		that failed.
 *	alt N	a SIGUSR1 handler on a 64 KiB alternate stack that uses N
 *		bytes of stack and makes a system call there (getppid,
 *		then sigprocmask); prints "used BYTES": how much of the
 *		alternate stack the delivery, the handler and its return
 *		touched (the stack is filled with a pattern first).
 *	altsz S N	the same on an alternate stack of S bytes with an
 *		unmapped page below it: exits 0, or dies of SIGSEGV.
 *	plain	a SIGALRM handled, a thread, a fork child waited for, the
 *		clone3 checks: what a program does under gdb without
 *		stopping it; exits 23.
 *	clone3	clone3 with a struct it cannot read (EFAULT) and with a
 *		size under 8 bytes (EINVAL): the library must read its
 *		flags without faulting, or not at all.  Exits 23, or the
 *		number of the check that failed.
 *	altset	sets an alternate stack and takes it off (the second
 *		call with the same buffer for the old one), each in force
 *		after its call, while a 50 us timer's handler asks for the
 *		stack meanwhile.  Exits 23, or the check's number.
 *	defer2	a call the library defers (clone3 with a struct it cannot
 *		read) while a 50 us timer's handler makes one too: each
 *		fails with EFAULT as untraced.  Exits 23, or the check's
 *		number.
 *
 * And SIGSYS as the program's own, where the library may not have taken
 * it yet (a start whose every site is rewritten or trapped leaves its
 * handler for later): each prints "cgt-sys N", whether SIGSYS was caught
 * as it began (0 untraced, and traced in the default mode).
 *	sysown	sets a SIGSYS handler of its own, reads it back with
 *		sigaction(), sends itself SIGSYS with kill(): the handler
 *		runs once, with the siginfo of a kill.  Exits 23, or the
 *		check's number.
 *	sysblock	blocks SIGSYS, gets one from kill(), sees it pending
 *		and blocked, prints "held", unblocks it: dies of it then
 *		(SIGSYS's default action), not before.
 *	sysblockh	the same with a handler of its own: it runs at the
 *		unblock, once, not before.  Exits 23, or the check's number.
 *	sysspawn	sets a SIGSYS handler of its own, posix_spawns /bin/true
 *		(whose child resets every handled signal to its default
 *		before its exec, in the parent's memory), then reads its
 *		handler back and sends itself SIGSYS: its handler, once.
 *		Exits 23, or the check's number.
 *	sysign	execs itself with SIGSYS ignored (as a parent's SIG_IGN
 *		comes across exec): reads it back ignored, sends itself
 *		SIGSYS, starts a thread (which blocks every signal for a
 *		moment), sends it again, reads it back: ignored all along,
 *		and alive.  Exits 23, or the check's number.
 *	sigexec	blocks SIGTRAP and SIGSYS and ignores both (what a
 *		process that blocks every signal, or a shell's trap '',
 *		hands its children), with a SIGUSR1 handler of its own,
 *		fails an exec, still sees both so (and the kernel's own
 *		state is as before the exec), posix_spawns itself
 *		with LD_PRELOAD out of the environment (sigexec3: nothing
 *		of the library's there, so the kernel's own state is read),
 *		sends itself each (pending, as blocked), then execs itself
 *		(sigexec2, traced where it was); that one posix_spawns
 *		sigexec3 again and then execs itself (sigexec4) without
 *		LD_PRELOAD.  Every image sees both blocked and ignored, the
 *		execs' both pending.  Exits 23, or the check's number.
 *		sigexect: the same, SIGTRAP alone sent.
 *	sysheld	blocks SIGSYS (its default action), sends itself one, and
 *		execs itself (sysheld2): there it is still blocked and
 *		pending, and the program alive (the library's start must
 *		not let it in).  Exits 23, or the check's number.
 *	systhr	ignores SIGSYS, starts a thread (glibc blocks every signal
 *		around its clone and then sets the old mask again), sends
 *		itself SIGSYS: still ignored, alive, its mask as before.
 *		Exits 23, or the check's number.
 *	sysmask	a SIGSYS handler with SIGUSR1 in its sa_mask and
 *		SA_RESETHAND, sent SIGSYS by kill(): inside it, SIGSYS and
 *		SIGUSR1 are blocked and a SIGUSR1 it raises waits for its
 *		return; after it, SIGUSR1's handler has run once and
 *		SIGSYS's action is the default.  Exits 23, or the check's
 *		number.
 *	sysmask2	a SIGSYS handler whose sa_mask is every signal (as Go
 *		sets its own), sent SIGSYS while SIGTRAP is blocked: its
 *		context's mask says SIGTRAP, not SIGSYS; it sends SIGSYS and
 *		raises SIGUSR1 itself, neither delivered before it returns;
 *		then SIGSYS's handler again, once, not nested, and
 *		SIGUSR1's; the mask after is the one before.  Exits 23, or
 *		the check's number.
 *	sigfault	rt_sigaction (the call itself: libc's wrapper copies
 *		the struct first) of SIGUSR1, SIGTRAP and SIGSYS with an
 *		action or an old action at an address nothing is mapped
 *		at: EFAULT each, as untraced, and alive.  Exits 23, or the
 *		check's number.
 *	jitmask	SIGUSR1 handlers with every signal in their masks make a
 *		system call (getppid) from a page of code of its own, one
 *		set before that code exists, one after, each raised once
 *		the program recorded a call since the code came: exits 23
 *		(killed by a blocked SIGSYS, were the library's dispatch on
 *		there without its handler or with SIGSYS in those masks).
 */
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALTSZ	(64 * 1024)
#define FILL	0xa5

static volatile sig_atomic_t ntrap, nalrm;
static size_t depth;

static void
on_trap(int sig)
{
	(void)sig;
	ntrap++;
}

static void
on_alrm(int sig)
{
	(void)sig;
	nalrm++;
}

static void *
thread(void *arg)
{
	return arg;
}

/* A thread, made through libc's clone3 (a site the library traps). */
static int
one_thread(void)
{
	pthread_t t;
	void *r;

	return pthread_create(&t, NULL, thread, &depth) == 0 &&
	    pthread_join(t, &r) == 0 && r == &depth;
}

/* Read one signal from fd: 0 if it is sig with code and our pid. */
static int
readsig(int fd, int sig, int code)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return -1;
	return (int)si.ssi_signo == sig && si.ssi_code == code &&
	    (pid_t)si.ssi_pid == getpid() && si.ssi_uid == getuid() ? 0 : -1;
}

static int
sigfd(void)
{
	sigset_t both, cur, pend;
	struct sigaction sa;
	int fd, sig;

	/* A recorded call: with USERDT_DISPATCH=1 the thread has dispatch. */
	(void)getppid();
	sigemptyset(&both);
	sigaddset(&both, SIGTRAP);
	sigaddset(&both, SIGSYS);
	if (sigprocmask(SIG_BLOCK, &both, NULL) != 0)
		return 1;
	if (sigprocmask(SIG_BLOCK, NULL, &cur) != 0 ||
	    !sigismember(&cur, SIGTRAP) || !sigismember(&cur, SIGSYS))
		return 2;
	if (pthread_sigmask(SIG_SETMASK, NULL, &cur) != 0 ||
	    !sigismember(&cur, SIGTRAP) || !sigismember(&cur, SIGSYS))
		return 3;
	if ((fd = signalfd(-1, &both, SFD_CLOEXEC)) < 0)
		return 4;
	if (raise(SIGTRAP) != 0 || sigpending(&pend) != 0 ||
	    !sigismember(&pend, SIGTRAP))
		return 5;
	/* What the program's own code runs meanwhile: a trap, a handler. */
	signal(SIGALRM, on_alrm);
	if (!one_thread() || raise(SIGALRM) != 0 || nalrm != 1)
		return 6;
	if (readsig(fd, SIGTRAP, SI_TKILL) != 0)
		return 7;
	if (kill(getpid(), SIGSYS) != 0 || readsig(fd, SIGSYS, SI_USER) != 0)
		return 8;
	if (syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGTRAP) != 0 ||
	    readsig(fd, SIGTRAP, SI_TKILL) != 0)
		return 9;
	if (kill(getpid(), SIGTRAP) != 0 || sigwait(&both, &sig) != 0 ||
	    sig != SIGTRAP)
		return 10;
	if (sigpending(&pend) != 0 || sigismember(&pend, SIGTRAP) ||
	    sigismember(&pend, SIGSYS))
		return 11;
	/* Still blocked, as it left them. */
	if (sigprocmask(SIG_SETMASK, NULL, &cur) != 0 ||
	    !sigismember(&cur, SIGTRAP) || !sigismember(&cur, SIGSYS))
		return 12;
	/* Unblocked: its handler, once pending, once sent. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	if (sigaction(SIGTRAP, &sa, NULL) != 0 || raise(SIGTRAP) != 0 ||
	    ntrap != 0)
		return 13;
	sigdelset(&both, SIGSYS);
	if (sigprocmask(SIG_UNBLOCK, &both, NULL) != 0 || ntrap != 1)
		return 14;
	if (raise(SIGTRAP) != 0 || ntrap != 2)
		return 15;
	if (!one_thread())
		return 16;
	close(fd);
	return 23;
}

static size_t
touched(const unsigned char *stk, size_t size)
{
	size_t i;

	for (i = 0; i < size && stk[i] == FILL; i++)
		;
	return size - i;
}

static void __attribute__((noinline))
deep(size_t n)
{
	volatile unsigned char *b = __builtin_alloca(n + 1);
	sigset_t none;

	b[0] = 1;
	b[n] = 1;
	(void)getppid();
	sigemptyset(&none);
	(void)sigprocmask(SIG_BLOCK, &none, NULL);
	__asm__ volatile ("" ::: "memory");
}

static void
on_usr1(int sig)
{
	(void)sig;
	deep(depth);
}

/* SIGUSR1 handled on an alternate stack of size bytes at stk. */
static int
altrun(unsigned char *stk, size_t size)
{
	struct sigaction sa;
	stack_t ss;

	ss.ss_sp = stk;
	ss.ss_size = size;
	ss.ss_flags = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return -1;
	return raise(SIGUSR1);
}

static int
badclone3(void)
{
	/* A recorded call: with USERDT_DISPATCH=1 the thread has dispatch. */
	(void)getppid();
	errno = 0;
	if (syscall(SYS_clone3, (void *)8, (size_t)64) != -1 ||
	    errno != EFAULT)
		return 1;
	errno = 0;
	if (syscall(SYS_clone3, (void *)8, (size_t)4) != -1 ||
	    errno != EINVAL)
		return 2;
	return 23;
}

static volatile sig_atomic_t naltq;

static void
on_altq(int sig)
{
	stack_t x;

	(void)sig;
	if (sigaltstack(NULL, &x) == 0)
		naltq++;
}

/*
 * sigaltstack() as untraced where the library makes it in its SIGSYS
 * handler (dispatch on, all calls): a stack set, then taken off, is in
 * force after each call (not undone by that handler's sigreturn), also
 * while a 50 us timer's handler asks for the stack (a handler's call in
 * the middle of one of the program's).  Exits 23, or the check's number.
 */
static int
altset(void)
{
	static char mem[1 << 16];
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	stack_t a, y;
	int i;

	if (signal(SIGALRM, on_altq) == SIG_ERR ||
	    setitimer(ITIMER_REAL, &it, NULL) != 0)
		return 1;
	for (i = 0; i < 50000; i++)
		if (sigaltstack(NULL, &y) != 0 || !(y.ss_flags & SS_DISABLE))
			return 2;
	memset(&a, 0, sizeof(a));
	a.ss_sp = mem;
	a.ss_size = sizeof(mem);
	if (sigaltstack(&a, NULL) != 0 || sigaltstack(NULL, &y) != 0 ||
	    y.ss_sp != mem || y.ss_size != sizeof(mem) ||
	    (y.ss_flags & SS_DISABLE))
		return 3;
	a.ss_flags = SS_DISABLE;
	/* one buffer for both: the kernel writes the old over the new */
	if (syscall(SYS_sigaltstack, &a, &a) != 0 || a.ss_sp != mem ||
	    sigaltstack(NULL, &y) != 0 || !(y.ss_flags & SS_DISABLE))
		return 4;
	memset(&it, 0, sizeof(it));
	(void)setitimer(ITIMER_REAL, &it, NULL);
	return naltq > 0 ? 23 : 5;
}

static volatile sig_atomic_t nbad3;

static void
on_bad3(int sig)
{
	int e = errno;

	(void)sig;
	if (syscall(SYS_clone3, (void *)8, (size_t)64) == -1 &&
	    errno == EFAULT)
		nbad3++;
	errno = e;
}

/*
 * A call the library defers (made after its SIGSYS handler's sigreturn:
 * clone3, here with a struct it cannot read, so no child) while a 50 us
 * timer's handler defers one of its own in the middle of it: each comes
 * back to its caller with EFAULT.  Exits 23, or the check's number.
 */
static int
defer2(void)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	int i;

	if (signal(SIGALRM, on_bad3) == SIG_ERR ||
	    setitimer(ITIMER_REAL, &it, NULL) != 0)
		return 1;
	for (i = 0; i < 20000; i++) {
		errno = 0;
		if (syscall(SYS_clone3, (void *)8, (size_t)64) != -1 ||
		    errno != EFAULT)
			return 2;
	}
	memset(&it, 0, sizeof(it));
	(void)setitimer(ITIMER_REAL, &it, NULL);
	return nbad3 > 0 ? 23 : 3;
}

/* Whether SIGSYS was caught as the program began, from its status. */
static void
cgtsys(void)
{
	char buf[4096], *p;
	ssize_t n;
	int fd;

	buf[0] = '\0';
	if ((fd = open("/proc/self/status", O_RDONLY)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	if ((p = strstr(buf, "\nSigCgt:\t")) == NULL)
		printf("cgt-sys ?\n");
	else
		printf("cgt-sys %d\n", (int)(strtoull(p + 9, NULL, 16) >>
		    (SIGSYS - 1) & 1));
	fflush(stdout);
}

extern char **environ;

static volatile sig_atomic_t nsys, sysok;

static void
on_sys(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	nsys++;
	sysok = sig == SIGSYS && si->si_code == SI_USER &&
	    si->si_pid == getpid() && si->si_uid == getuid();
}

static int
sysown(void)
{
	struct sigaction sa, q;

	cgtsys();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 1;
	if (sigaction(SIGSYS, NULL, &q) != 0 || q.sa_sigaction != on_sys ||
	    !(q.sa_flags & SA_SIGINFO) || !sigismember(&q.sa_mask, SIGUSR2) ||
	    sigismember(&q.sa_mask, SIGUSR1))
		return 2;
	if (kill(getpid(), SIGSYS) != 0)
		return 3;
	return nsys == 1 && sysok ? 23 : 4;
}

static int
sysblock(int handled)
{
	struct rlimit nocore = { 0, 0 };
	struct sigaction sa;
	sigset_t sys, cur, pend;

	cgtsys();
	(void)setrlimit(RLIMIT_CORE, &nocore);
	if (handled) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sys;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGSYS, &sa, NULL) != 0)
			return 1;
	}
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	if (sigprocmask(SIG_BLOCK, &sys, NULL) != 0 ||
	    kill(getpid(), SIGSYS) != 0)
		return 2;
	/* Calls of all kinds while it waits: none lets it through. */
	(void)getppid();
	if (sigprocmask(SIG_BLOCK, NULL, &cur) != 0 ||
	    !sigismember(&cur, SIGSYS) || sigpending(&pend) != 0 ||
	    !sigismember(&pend, SIGSYS) || nsys != 0)
		return 3;
	printf("held\n");
	fflush(stdout);
	if (sigprocmask(SIG_UNBLOCK, &sys, NULL) != 0)
		return 4;
	return handled && nsys == 1 && sysok ? 23 : 5;
}

static int
sysspawn(void)
{
	char *argv[] = { "true", NULL };
	struct sigaction sa, q;
	pid_t pid;
	int st;

	cgtsys();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 1;
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 2;
	if (sigaction(SIGSYS, NULL, &q) != 0 || q.sa_sigaction != on_sys)
		return 3;
	if (kill(getpid(), SIGSYS) != 0)
		return 4;
	return nsys == 1 && sysok ? 23 : 5;
}

/*
 * getppid() made from a page of code the library found after its start
 * (a JIT's): a site only dispatch sees, where a thread has it on.
 */
static long
(*jitmake(void))(void)
{
	static const unsigned char code[] = {
		0xb8, 0x6e, 0x00, 0x00, 0x00,	/* mov $110,%eax: getppid */
		0x0f, 0x05,			/* syscall */
		0xc3				/* ret */
	};
	void *jit;

	if ((jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return NULL;
	memcpy(jit, code, sizeof(code));
	return (long (*)(void))jit;
}

/*
 * SIGSYS (or SIGTRAP) blocked and pending in the parent, then a
 * posix_spawn whose child unblocks every signal: the child's mask is its
 * own, the parent's signal stays blocked and pending through its calls
 * (a recorded one, which turns dispatch on where it may be, then one
 * from a JIT page, which dispatch would catch), and comes once at its
 * unblock.
 */
static volatile sig_atomic_t nheld;

static void
on_held(int sig)
{
	(void)sig;
	nheld++;
}

static int
heldspawn(int sig)
{
	char *argv[] = { "true", NULL };
	posix_spawnattr_t at;
	struct sigaction sa;
	sigset_t one, none, pend;
	long (*jit)(void);
	pid_t pid;
	int i, st;

	if ((jit = jitmake()) == NULL)
		return 6;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_held;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigemptyset(&none);
	if (sigaction(sig, &sa, NULL) != 0 ||
	    sigprocmask(SIG_BLOCK, &one, NULL) != 0 ||
	    kill(getpid(), sig) != 0)
		return 1;
	if (posix_spawnattr_init(&at) != 0 ||
	    posix_spawnattr_setsigmask(&at, &none) != 0 ||
	    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK) != 0 ||
	    posix_spawn(&pid, "/bin/true", NULL, &at, argv, environ) != 0 ||
	    waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 2;
	/* Calls of every kind: a dispatched one or a trap would kill. */
	for (i = 0; i < 64; i++)
		(void)getppid();
	if (jit() != getppid())
		return 7;
	if (sigpending(&pend) != 0 || !sigismember(&pend, sig) || nheld != 0)
		return 3;
	if (sigprocmask(SIG_UNBLOCK, &one, NULL) != 0)
		return 4;
	return nheld == 1 ? 23 : 5;
}

/*
 * SIGTRAP and SIGSYS blocked, then a vfork child that unblocks every
 * signal before it exits: its mask is its own, the parent's still blocks
 * both.
 */
static int
vforkview(void)
{
	sigset_t ours, none, cur;
	pid_t pid;
	int st;

	sigemptyset(&ours);
	sigaddset(&ours, SIGTRAP);
	sigaddset(&ours, SIGSYS);
	sigemptyset(&none);
	if (sigprocmask(SIG_BLOCK, &ours, NULL) != 0)
		return 1;
	if ((pid = vfork()) == 0) {
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	if (sigprocmask(SIG_BLOCK, NULL, &cur) != 0 ||
	    !sigismember(&cur, SIGTRAP) || !sigismember(&cur, SIGSYS))
		return 3;
	return 23;
}

static void *
nothing(void *arg)
{
	return arg;
}

static int
sysign(char *self, int again)
{
	char *argv[] = { self, "sysign2", NULL };
	struct sigaction q;
	pthread_t th;

	if (!again) {
		if (signal(SIGSYS, SIG_IGN) == SIG_ERR)
			return 1;
		execv(self, argv);
		return 2;
	}
	cgtsys();
	if (sigaction(SIGSYS, NULL, &q) != 0 || q.sa_handler != SIG_IGN)
		return 3;
	if (kill(getpid(), SIGSYS) != 0)
		return 4;
	if (pthread_create(&th, NULL, nothing, NULL) != 0 ||
	    pthread_join(th, NULL) != 0)
		return 5;
	if (kill(getpid(), SIGSYS) != 0)
		return 6;
	if (sigaction(SIGSYS, NULL, &q) != 0 || q.sa_handler != SIG_IGN)
		return 7;
	return 23;
}

/*
 * Whether SIGTRAP and SIGSYS are blocked and ignored, and the pending
 * ones (UDT_SIGBIT-like: 1 SIGTRAP, 2 SIGSYS) pending.
 */
static int
sigstate(int pending)
{
	struct sigaction a, b;
	sigset_t m, p;

	if (sigprocmask(SIG_BLOCK, NULL, &m) != 0 ||
	    !sigismember(&m, SIGTRAP) || !sigismember(&m, SIGSYS) ||
	    sigaction(SIGTRAP, NULL, &a) != 0 || a.sa_handler != SIG_IGN ||
	    sigaction(SIGSYS, NULL, &b) != 0 || b.sa_handler != SIG_IGN)
		return -1;
	if (pending && (sigpending(&p) != 0 ||
	    ((pending & 1) && !sigismember(&p, SIGTRAP)) ||
	    ((pending & 2) && !sigismember(&p, SIGSYS))))
		return -1;
	return 0;
}

/*
 * The kernel's own state of SIGTRAP and SIGSYS (blocked, ignored,
 * caught) in *st, comparable: 0, or -1.  A failed exec changes none of
 * it, untraced or traced (where the library's handler and unblocked
 * mask must come back).
 */
static int
sigreal(unsigned long long *st)
{
	const unsigned long long both = (1ULL << (SIGTRAP - 1)) |
	    (1ULL << (SIGSYS - 1));
	unsigned long long blk = 0, ign = 0, cgt = 0;
	char line[256];
	FILE *f;
	int got = 0;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		got += sscanf(line, "SigBlk: %llx", &blk) +
		    sscanf(line, "SigIgn: %llx", &ign) +
		    sscanf(line, "SigCgt: %llx", &cgt);
	fclose(f);
	*st = (blk & both) | (ign & both) << 1 | (cgt & both) << 2;
	return got == 3 ? 0 : -1;
}

/* This environment without LD_PRELOAD: an image with nothing of ours. */
static char **
nopreload(void)
{
	static char *env[512];
	size_t i, n = 0;

	for (i = 0; environ[i] != NULL && n + 1 < 512; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[n++] = environ[i];
	env[n] = NULL;
	return env;
}

/* The image sigexec3 by posix_spawn, without the library: 0 if it was. */
static int
sigspawn(char *self)
{
	char *argv[] = { self, "sigexec3", NULL };
	pid_t pid;
	int st;

	return posix_spawn(&pid, self, NULL, NULL, argv, nopreload()) == 0 &&
	    waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 23 ? 0 : -1;
}

/* step: which image; sys: SIGSYS sent too (else SIGTRAP alone). */
static int
sigexec(char *self, int step, int sys)
{
	char *argv[] = { self, NULL, NULL };
	unsigned long long before, after;
	int pend = sys ? 3 : 1;
	sigset_t m;

	switch (step) {
	case 0:
		sigemptyset(&m);
		sigaddset(&m, SIGTRAP);
		sigaddset(&m, SIGSYS);
		if (sigprocmask(SIG_BLOCK, &m, NULL) != 0 ||
		    signal(SIGTRAP, SIG_IGN) == SIG_ERR ||
		    signal(SIGSYS, SIG_IGN) == SIG_ERR ||
		    signal(SIGUSR1, on_alrm) == SIG_ERR)
			return 1;
		if (sigreal(&before) != 0)
			return 11;
		execl("/nonexistent/signals_tracee", "none", (char *)NULL);
		if (sigstate(0) != 0)
			return 2;
		if (sigreal(&after) != 0 || after != before)
			return 12;
		if (sigspawn(self) != 0)
			return 10;
		if (kill(getpid(), SIGTRAP) != 0 ||
		    (sys && kill(getpid(), SIGSYS) != 0) ||
		    sigstate(pend) != 0)
			return 3;
		argv[1] = sys ? "sigexec2" : "sigexect2";
		execv(self, argv);
		return 4;
	case 2:
		if (sigstate(pend) != 0)
			return 5;
		if (sigspawn(self) != 0)
			return 6;
		argv[1] = sys ? "sigexec4" : "sigexect4";
		execve(self, argv, nopreload());
		return 7;
	case 3:
		return sigstate(0) == 0 ? 23 : 8;
	default:
		return sigstate(pend) == 0 ? 23 : 9;
	}
}

static int
sysheld(char *self, int again)
{
	char *argv[] = { self, "sysheld2", NULL };
	sigset_t m, p;

	sigemptyset(&m);
	sigaddset(&m, SIGSYS);
	if (!again) {
		if (sigprocmask(SIG_BLOCK, &m, NULL) != 0 ||
		    kill(getpid(), SIGSYS) != 0)
			return 1;
		execv(self, argv);
		return 2;
	}
	if (sigprocmask(SIG_BLOCK, NULL, &m) != 0 || !sigismember(&m, SIGSYS))
		return 3;
	if (sigpending(&p) != 0 || !sigismember(&p, SIGSYS))
		return 4;
	return 23;
}

static int
systhr(void)
{
	struct sigaction q;
	sigset_t m;
	pthread_t th;

	if (signal(SIGSYS, SIG_IGN) == SIG_ERR)
		return 1;
	if (pthread_create(&th, NULL, nothing, NULL) != 0 ||
	    pthread_join(th, NULL) != 0)
		return 2;
	if (sigprocmask(SIG_BLOCK, NULL, &m) != 0 || sigismember(&m, SIGSYS))
		return 3;
	if (kill(getpid(), SIGSYS) != 0)
		return 4;
	if (sigaction(SIGSYS, NULL, &q) != 0 || q.sa_handler != SIG_IGN)
		return 5;
	return 23;
}

static volatile sig_atomic_t nmusr1, inmask, usr1early;

static void
on_musr1(int sig)
{
	(void)sig;
	nmusr1++;
}

static void
on_sysmask(int sig)
{
	sigset_t m;

	(void)sig;
	inmask = sigprocmask(SIG_BLOCK, NULL, &m) == 0 &&
	    sigismember(&m, SIGSYS) && sigismember(&m, SIGUSR1);
	raise(SIGUSR1);
	usr1early = nmusr1 != 0;
}

static int
sysmask(void)
{
	struct sigaction sa, q;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_musr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	sa.sa_handler = on_sysmask;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 2;
	if (kill(getpid(), SIGSYS) != 0)
		return 3;
	if (!inmask)
		return 4;
	if (usr1early || nmusr1 != 1)
		return 5;
	if (sigaction(SIGSYS, NULL, &q) != 0 || q.sa_handler != SIG_DFL)
		return 6;
	return 23;
}

static volatile sig_atomic_t nsys2, insys2, nested2, early2, ucmask2;

static void
on_sysmask2(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	(void)si;
	if (insys2)
		nested2 = 1;
	insys2 = 1;
	if (nsys2++ == 0) {
		/* The interrupted mask: SIGTRAP blocked, SIGSYS not. */
		ucmask2 = sigismember(&uc->uc_sigmask, SIGTRAP) &&
		    !sigismember(&uc->uc_sigmask, SIGSYS);
		kill(getpid(), SIGSYS);
		raise(SIGUSR1);
		early2 = nsys2 != 1 || nmusr1 != 0;
	}
	insys2 = 0;
}

static int
sysmask2(void)
{
	struct sigaction sa;
	sigset_t m;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_musr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	sa.sa_sigaction = on_sysmask2;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 2;
	sigemptyset(&m);
	sigaddset(&m, SIGTRAP);
	if (sigprocmask(SIG_BLOCK, &m, NULL) != 0 ||
	    kill(getpid(), SIGSYS) != 0)
		return 3;
	if (early2 || nested2)
		return 4;
	if (nsys2 != 2 || nmusr1 != 1)
		return 5;
	if (!ucmask2)
		return 6;
	if (sigprocmask(SIG_BLOCK, NULL, &m) != 0 ||
	    !sigismember(&m, SIGTRAP) || sigismember(&m, SIGSYS))
		return 7;
	return 23;
}

static int
sigfault(void)
{
	const int sigs[] = { SIGUSR1, SIGTRAP, SIGSYS };
	void *bad = (void *)16;
	int i;

	for (i = 0; i < 3; i++) {
		errno = 0;
		if (syscall(SYS_rt_sigaction, sigs[i], bad, NULL, 8) != -1 ||
		    errno != EFAULT)
			return 1 + 2 * i;
		errno = 0;
		if (syscall(SYS_rt_sigaction, sigs[i], NULL, bad, 8) != -1 ||
		    errno != EFAULT)
			return 2 + 2 * i;
	}
	return 23;
}

static long (*jitppid)(void);
static volatile sig_atomic_t nusr, usrok;

static void
on_usr(int sig)
{
	(void)sig;
	nusr++;
	usrok = jitppid() == getppid();
}

static int
jitmask(void)
{
	struct sigaction sa;

	cgtsys();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	if ((jitppid = jitmake()) == NULL)
		return 2;
	/* Recorded: dispatch on for this thread, the code being there. */
	(void)getppid();
	if (jitppid() != getppid() || raise(SIGUSR1) != 0 || nusr != 1 ||
	    !usrok)
		return 3;
	if (sigaction(SIGUSR2, &sa, NULL) != 0 || raise(SIGUSR2) != 0 ||
	    nusr != 2 || !usrok)
		return 4;
	return 23;
}

int
main(int argc, char *argv[])
{
	unsigned char *stk;
	size_t size;
	pid_t pid;
	int st;

	if (argc >= 2 && strcmp(argv[1], "sigfd") == 0)
		return sigfd();
	if (argc == 3 && strcmp(argv[1], "alt") == 0) {
		depth = strtoul(argv[2], NULL, 0);
		if ((stk = malloc(ALTSZ)) == NULL)
			return 1;
		memset(stk, FILL, ALTSZ);
		/* Bound before: no lazy binding inside the handler. */
		(void)getppid();
		if (altrun(stk, ALTSZ) != 0)
			return 1;
		printf("used %zu\n", touched(stk, ALTSZ));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "altsz") == 0) {
		size = strtoul(argv[2], NULL, 0);
		depth = strtoul(argv[3], NULL, 0);
		/* The stack at the end of its pages, one unmapped below. */
		stk = mmap(NULL, size + 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stk == MAP_FAILED)
			return 1;
		stk += 4096 + (4096 - size % 4096) % 4096;
		(void)munmap(stk - 4096 - (4096 - size % 4096) % 4096, 4096);
		(void)getppid();
		return altrun(stk, size) != 0;
	}
	if (argc == 2 && strcmp(argv[1], "clone3") == 0)
		return badclone3();
	if (argc == 2 && strcmp(argv[1], "altset") == 0)
		return altset();
	if (argc == 2 && strcmp(argv[1], "defer2") == 0)
		return defer2();
	if (argc == 2 && strcmp(argv[1], "sysown") == 0)
		return sysown();
	if (argc == 2 && strcmp(argv[1], "sysblock") == 0)
		return sysblock(0);
	if (argc == 2 && strcmp(argv[1], "sysblockh") == 0)
		return sysblock(1);
	if (argc == 2 && strcmp(argv[1], "sysspawn") == 0)
		return sysspawn();
	if (argc == 2 && strcmp(argv[1], "heldspawn") == 0)
		return heldspawn(SIGSYS);
	if (argc == 2 && strcmp(argv[1], "heldspawnt") == 0)
		return heldspawn(SIGTRAP);
	if (argc == 2 && strcmp(argv[1], "vforkview") == 0)
		return vforkview();
	if (argc == 2 && strcmp(argv[1], "sysign") == 0)
		return sysign(argv[0], 0);
	if (argc == 2 && strcmp(argv[1], "sysign2") == 0)
		return sysign(argv[0], 1);
	if (argc == 2 && strcmp(argv[1], "jitmask") == 0)
		return jitmask();
	if (argc == 2 && strncmp(argv[1], "sigexec", 7) == 0) {
		const char *v = argv[1] + 7 + (argv[1][7] == 't');

		return sigexec(argv[0], *v == '\0' ? 0 : *v - '0',
		    argv[1][7] != 't');
	}
	if (argc == 2 && strcmp(argv[1], "sigfault") == 0)
		return sigfault();
	if (argc == 2 && strcmp(argv[1], "sysmask") == 0)
		return sysmask();
	if (argc == 2 && strcmp(argv[1], "sysmask2") == 0)
		return sysmask2();
	if (argc == 2 && strcmp(argv[1], "systhr") == 0)
		return systhr();
	if (argc == 2 && strcmp(argv[1], "sysheld") == 0)
		return sysheld(argv[0], 0);
	if (argc == 2 && strcmp(argv[1], "sysheld2") == 0)
		return sysheld(argv[0], 1);
	if (argc == 2 && strcmp(argv[1], "plain") == 0) {
		if (badclone3() != 23)
			return 3;
		signal(SIGALRM, on_alrm);
		if (raise(SIGALRM) != 0 || nalrm != 1 || !one_thread())
			return 1;
		if ((pid = fork()) == 0)
			_exit(5);
		if (pid < 0 || waitpid(pid, &st, 0) != pid ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 5)
			return 2;
		return 23;
	}
	fprintf(stderr, "usage: signals_tracee sigfd | alt N | "
	    "altsz SIZE N | plain | clone3 | altset | defer2 | sysown | "
	    "sysblock | sysblockh | sysspawn | sysign | sigexec | "
	    "sysheld | systhr | sysmask | sysmask2 | sigfault | "
	    "jitmask | heldspawn | heldspawnt | vforkview\n");
	return 2;
}
