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
 * plan_tracee OUT: a program for syscall_plan.py whose own text holds a
 * system call site the rewriter rewrites, `mov $110,%eax; syscall'
 * (getppid), whose bytes the test changes in place to make it getpid;
 * and enough of it (padding no function covers) that the rewrite-plan
 * cache names it by its file's stat, not by a hash of its bytes: a plan
 * for the old bytes then matches the changed file's key, and only the
 * byte check can refuse it.  Calls getpid, getppid, then the site;
 * writes "ret R pid P ppid Q" to OUT.
 */
#include <stdio.h>
#include <unistd.h>

/* 320 kB of nop in the text, past the cache's small-object limit. */
__asm__(".text\n"
    ".globl plan_tracee_pad\n"
    "plan_tracee_pad:\n"
    ".fill 327680, 1, 0x90\n"
    "ret\n");

__attribute__((noinline)) static long
plan_call(void)
{
	long r;

	__asm__ volatile ("movl $110, %%eax\n\tsyscall"
	    : "=a" (r) : : "rcx", "r11", "memory");
	return r;
}

int
main(int argc, char *argv[])
{
	long r, pid, ppid;
	FILE *f;

	if (argc != 2 || (f = fopen(argv[1], "w")) == NULL)
		return 2;
	pid = getpid();
	ppid = getppid();
	r = plan_call();
	fprintf(f, "ret %ld pid %ld ppid %ld\n", r, pid, ppid);
	return fclose(f) == 0 ? 0 : 1;
}
