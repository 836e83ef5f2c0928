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
 * The program syscall_trap traces (trap_tracee LIB RELOADS): a life that
 * goes through the sites the preload library traps with int3 rather than
 * rewrites (libc's clone3 and posix_spawn child, signal return), and a
 * SIGTRAP of its own, each phase marked by a write(-1, buf, MARK) that
 * fails with EBADF and reads nothing:
 *
 *	2001	main, then it stops itself (SIGSTOP): the test looks at its
 *		dispatch there, which must be off
 *	2002	a thread made by pthread_create() with every signal blocked
 *	2003	after dlopen(LIB) and LIB's own calls (life_lib.c: inline
 *		1003 x7, libc 1004 x2), then RELOADS times dlclose() and
 *		dlopen() again (the same addresses, most likely) and its
 *		calls, while a thread spins on getppid(), then it stops
 *		itself again: dispatch still off, LIB rewritten each time
 *		the loader mapped it
 *	2004	an inline syscall in code it writes into an anonymous
 *		executable page, then it stops a third time: dispatch on;
 *		then sigaltstack() from that page sets an alternate stack
 *		and takes it off, each seen in force by libc's sigaltstack()
 *		("jit-altstack 1", "jit-altstack-off 1")
 *
 * between them: posix_spawn() of /bin/true with every signal blocked,
 * SIGTRAP blocked since before its exec too; an int3 of its own, caught
 * by its SIGTRAP handler, which sigaction() still reports as its own; three SIGUSR1 handled (with the handler of the
 * int3, four rt_sigreturn); a fork child dying of its own int3 with
 * SIGTRAP's default action.  Prints "own-trap N", "blocked N",
 * "dfl-trap N" (1: as untraced), then "done".
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t ntrap, trapcode, nusr1;

static void
mark(long m)
{
	static char buf[2004];

	(void)!write(-1, buf, (size_t)m);
}

static void
on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	ntrap++;
	trapcode = si->si_code;
}

static void
on_usr1(int sig)
{
	(void)sig;
	nusr1++;
}

static void *
thread(void *arg)
{
	(void)arg;
	mark(2002);
	return NULL;
}

static atomic_int spinning;

static void *
spinner(void *arg)
{
	(void)arg;
	while (atomic_load(&spinning))
		(void)getppid();
	return NULL;
}

int
main(int argc, char *argv[])
{
	struct sigaction sa, old;
	sigset_t all, omask;
	pthread_t t;
	char *targv[] = { "true", NULL };
	pid_t pid;
	static const unsigned char jitcode[] = {
		0xb8, 0x01, 0x00, 0x00, 0x00,		/* mov $1,%eax */
		0x48, 0xc7, 0xc7, 0xff, 0xff, 0xff, 0xff, /* mov $-1,%rdi */
		0x31, 0xf6,				/* xor %esi,%esi */
		0xba, 0xd4, 0x07, 0x00, 0x00,		/* mov $2004,%edx */
		0x0f, 0x05,				/* syscall */
		0xc3					/* ret */
	};
	/* long (stack_t *ss, stack_t *oss): sigaltstack() made inline */
	static const unsigned char jitalt[] = {
		0xb8, 0x83, 0x00, 0x00, 0x00,		/* mov $131,%eax */
		0x0f, 0x05,				/* syscall */
		0xc3					/* ret */
	};
	static char altmem[1 << 16];
	stack_t alt, cur;
	long (*setalt)(stack_t *, stack_t *);
	void (*libcalls)(void);
	void *lib, *jit;
	int i, st, ok, reloads;

	if (argc != 3 || (reloads = atoi(argv[2])) < 0)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	mark(2001);
	raise(SIGSTOP);

	/* SIGTRAP may come blocked from the exec (syscall_trap blocks it). */
	sigfillset(&all);
	ok = sigprocmask(SIG_BLOCK, &all, &omask) == 0 &&
	    pthread_create(&t, NULL, thread, NULL) == 0 &&
	    pthread_join(t, NULL) == 0 &&
	    posix_spawn(&pid, "/bin/true", NULL, NULL, targv, environ) == 0 &&
	    waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0 &&
	    sigprocmask(SIG_SETMASK, &omask, NULL) == 0;
	printf("blocked %d\n", ok);

	/* Its own int3 needs SIGTRAP unblocked, traced or not. */
	sigemptyset(&all);
	sigaddset(&all, SIGTRAP);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	if (sigprocmask(SIG_UNBLOCK, &all, NULL) != 0 ||
	    sigaction(SIGTRAP, &sa, NULL) != 0)
		return 1;
	__asm__ volatile ("int3");
	ok = ntrap == 1 && trapcode == 0x80 &&	/* SI_KERNEL */
	    sigaction(SIGTRAP, NULL, &old) == 0 &&
	    (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_trap;
	printf("own-trap %d\n", ok);

	signal(SIGUSR1, on_usr1);
	for (i = 0; i < 3; i++)
		raise(SIGUSR1);

	if ((pid = fork()) == 0) {
		struct rlimit nocore = { 0, 0 };

		(void)setrlimit(RLIMIT_CORE, &nocore);
		signal(SIGTRAP, SIG_DFL);
		__asm__ volatile ("int3");
		_exit(0);
	}
	ok = pid > 0 && nusr1 == 3 && waitpid(pid, &st, 0) == pid &&
	    WIFSIGNALED(st) && WTERMSIG(st) == SIGTRAP;
	printf("dfl-trap %d\n", ok);

	if ((lib = dlopen(argv[1], RTLD_NOW)) == NULL ||
	    (libcalls = (void (*)(void))dlsym(lib, "life_lib_calls")) == NULL)
		return 1;
	libcalls();
	atomic_store(&spinning, 1);
	if (pthread_create(&t, NULL, spinner, NULL) != 0)
		return 1;
	for (i = 0; i < reloads; i++) {
		if (dlclose(lib) != 0 ||
		    (lib = dlopen(argv[1], RTLD_NOW)) == NULL ||
		    (libcalls = (void (*)(void))dlsym(lib,
		    "life_lib_calls")) == NULL)
			return 1;
		libcalls();
	}
	atomic_store(&spinning, 0);
	pthread_join(t, NULL);
	mark(2003);
	raise(SIGSTOP);

	/* write(-1, buf, 2004) from a page of its own making: a JIT's. */
	if ((jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return 1;
	memcpy(jit, jitcode, sizeof(jitcode));
	((void (*)(void))(void *)jit)();
	raise(SIGSTOP);
	/*
	 * sigaltstack() from the same page, now dispatched: the stack it
	 * sets must still be the thread's after the call returns (a
	 * handler's sigreturn puts its frame's uc_stack back).
	 */
	memcpy((char *)jit + 64, jitalt, sizeof(jitalt));
	setalt = (long (*)(stack_t *, stack_t *))(void *)((char *)jit + 64);
	memset(&alt, 0, sizeof(alt));
	alt.ss_sp = altmem;
	alt.ss_size = sizeof(altmem);
	memset(&cur, 0, sizeof(cur));
	ok = setalt(&alt, NULL) == 0 && sigaltstack(NULL, &cur) == 0 &&
	    cur.ss_sp == altmem && cur.ss_size == sizeof(altmem) &&
	    !(cur.ss_flags & SS_DISABLE);
	printf("jit-altstack %d\n", ok);
	alt.ss_flags = SS_DISABLE;
	ok = setalt(&alt, NULL) == 0 && sigaltstack(NULL, &cur) == 0 &&
	    (cur.ss_flags & SS_DISABLE);
	printf("jit-altstack-off %d\n", ok);
	printf("done\n");
	return 0;
}
