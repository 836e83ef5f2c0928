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
 * The program syscall_life traces: system calls from everywhere a
 * process makes them, each phase marked by the length argument of a
 * write(-1, NULL, MARK) that fails with EBADF and touches nothing:
 *
 *	1001 x3	inline syscall instructions in main's code
 *	1002 x5	a thread made by a raw clone(2), no libc in it
 *	1003 x7	inline instructions in a library dlopen()ed after start
 *	1004 x2	libc's write() called by that library
 *	1005 x1	the image a fork child execve()s (traced from its start)
 *	1006 x1	a fork child, before _exit(3)
 *
 * and fork, vfork (its child execs), posix_spawn and execve between them.  Prints
 * "fork PID", "vfork PID", "spawn PID", "exec PID", then "done"; exits 0
 * only if both exec'd images ran (their own exit statuses).
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dlfcn.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* A thread without libc: clone, five marked writes, exit. */
long	life_rawthread(unsigned long flags, void *stack, int *ptid, int *ctid);
__asm__(
	".text\n"
	".globl life_rawthread\n"
	".type life_rawthread, @function\n"
	"life_rawthread:\n"
	".cfi_startproc\n"
	"	pushq %rbx\n"
	".cfi_def_cfa_offset 16\n"
	"	movq %rcx, %r10\n"
	"	xorl %r8d, %r8d\n"
	"	movl $56, %eax\n"
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	movl $5, %ebx\n"
	"2:	movl $1, %eax\n"
	"	movq $-1, %rdi\n"
	"	xorl %esi, %esi\n"
	"	movl $1002, %edx\n"
	"	syscall\n"
	"	decl %ebx\n"
	"	jnz 2b\n"
	"	movl $60, %eax\n"
	"	xorl %edi, %edi\n"
	"	syscall\n"
	"	hlt\n"
	"1:	popq %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size life_rawthread, .-life_rawthread\n");

static void
mark(long m)
{
	long r;

	__asm__ volatile ("syscall" : "=a" (r)
	    : "a" ((long)SYS_write), "D" (-1L), "S" (0L), "d" (m)
	    : "rcx", "r11", "memory");
	(void)r;
}

int
main(int argc, char *argv[])
{
	const unsigned long cflags = CLONE_VM | CLONE_FS | CLONE_FILES |
	    CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
	    CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
	static volatile int ctid;
	int ptid, i, st;
	char *sargv[] = { "true", NULL };
	char *eargv[] = { argv[0], "exec", NULL };
	char *vargv[] = { argv[0], "vfexec", NULL };
	void (*calls)(void);
	void *stack, *lib;
	pid_t pid;

	if (argc == 2 && strcmp(argv[1], "exec") == 0) {
		mark(1005);
		return 7;
	}
	if (argc == 2 && strcmp(argv[1], "vfexec") == 0)
		return 10;
	if (argc != 2)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);

	for (i = 0; i < 3; i++)
		mark(1001);

	if ((stack = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) == MAP_FAILED)
		return 3;
	ctid = 1;
	if (life_rawthread(cflags, (char *)stack + 65536, &ptid,
	    (int *)&ctid) < 0)
		return 4;
	/* CLONE_CHILD_CLEARTID: the kernel zeroes ctid when it ends. */
	while (ctid != 0)
		syscall(SYS_futex, &ctid, 0 /* FUTEX_WAIT */, ctid, NULL);

	if ((lib = dlopen(argv[1], RTLD_NOW)) == NULL ||
	    (calls = (void (*)(void))dlsym(lib, "life_lib_calls")) == NULL)
		return 5;
	calls();

	if ((pid = fork()) == 0) {
		mark(1006);
		_exit(3);
	}
	printf("fork %d\n", (int)pid);
	waitpid(pid, &st, 0);

	/* The child's exec is a call of its own on its parent's stack. */
	if ((pid = vfork()) == 0) {
		execve("/proc/self/exe", vargv, environ);
		_exit(4);
	}
	printf("vfork %d\n", (int)pid);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 10)
		return 11;

	if (posix_spawn(&pid, "/bin/true", NULL, NULL, sargv, environ) != 0)
		return 6;
	printf("spawn %d\n", (int)pid);
	waitpid(pid, &st, 0);

	if ((pid = fork()) == 0) {
		execve("/proc/self/exe", eargv, environ);
		_exit(8);
	}
	printf("exec %d\n", (int)pid);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 9;
	printf("done\n");
	return 0;
}
