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
 * The program syscall_vregs traces: the kernel keeps every register but
 * rax, rcx and r11 across a system call, vector and mask registers
 * included, and code may rely on it (a compiler keeps values in them
 * across an inline `syscall`).  Each call below loads a pattern into
 * every vector register the CPU has (xmm0-15; ymm0-15 whole with AVX;
 * zmm0-31 and k1-7 with AVX-512), makes the system call at a site the
 * library rewrites, and stores them back: a traced call must give back
 * what an untraced one does.
 *
 *	getppid()		ROUNDS times
 *	access(path, F_OK)	ROUNDS times (a string argument)
 *	execve(missing)		ROUNDS times, each failing with ENOENT (the
 *				library asks its launcher's helper first)
 *
 * Prints "level sse|avx|avx512", "site XX" (the site's first byte once
 * the library ran: e9 when it was rewritten), "bad CALL ROUND REG" for
 * each register that came back changed, then "done"; exits 0 if none.
 */
#include <sys/syscall.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS		20
#define NREG		32
#define VBYTES		64	/* the widest: a zmm register */

/* The patterns in, the registers out: zmm0-31, then k1-7. */
struct vregs {
	uint8_t		v[NREG][VBYTES];
	uint64_t	k[8];
} __attribute__((aligned(64)));

/*
 * vregs_call_L(nr, a0, in, out): load in, make system call nr(a0, 0, 0),
 * store into out; returns what the call returned.  rbx and r12 hold the
 * pointers across the call; the site (vregs_site) is the instruction
 * that moves a0 into place and the syscall: five bytes, nothing jumps
 * into them, so the library rewrites it.
 */
long	vregs_call_sse(long, long, const struct vregs *, struct vregs *);
long	vregs_call_avx(long, long, const struct vregs *, struct vregs *);
long	vregs_call_avx512(long, long, const struct vregs *, struct vregs *);
extern const uint8_t vregs_site[];

#define VR_ENTER(name)							\
	".text\n"							\
	".globl " name "\n"						\
	".type " name ", @function\n"					\
	name ":\n"							\
	".cfi_startproc\n"						\
	"	pushq %rbx\n"						\
	".cfi_def_cfa_offset 16\n"					\
	"	pushq %r12\n"						\
	".cfi_def_cfa_offset 24\n"					\
	"	movq %rdx, %rbx\n"					\
	"	movq %rcx, %r12\n"
#define VR_CALL							\
	"	call vregs_sys\n"
#define VR_LEAVE(name)							\
	"	popq %r12\n"						\
	".cfi_def_cfa_offset 16\n"					\
	"	popq %rbx\n"						\
	".cfi_def_cfa_offset 8\n"					\
	"	ret\n"							\
	".cfi_endproc\n"						\
	".size " name ", .-" name "\n"

#define R16(op)								\
	op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7)			\
	op(8) op(9) op(10) op(11) op(12) op(13) op(14) op(15)
#define R32(op)								\
	R16(op)								\
	op(16) op(17) op(18) op(19) op(20) op(21) op(22) op(23)		\
	op(24) op(25) op(26) op(27) op(28) op(29) op(30) op(31)
#define S(x)		#x
#define LD_X(i)		"	movdqu " S(i) "*64(%rbx), %xmm" S(i) "\n"
#define ST_X(i)		"	movdqu %xmm" S(i) ", " S(i) "*64(%r12)\n"
#define LD_Y(i)		"	vmovdqu " S(i) "*64(%rbx), %ymm" S(i) "\n"
#define ST_Y(i)		"	vmovdqu %ymm" S(i) ", " S(i) "*64(%r12)\n"
#define LD_Z(i)		"	vmovdqu64 " S(i) "*64(%rbx), %zmm" S(i) "\n"
#define ST_Z(i)		"	vmovdqu64 %zmm" S(i) ", " S(i) "*64(%r12)\n"
#define LD_K(i)		"	kmovq 2048+8*" S(i) "(%rbx), %k" S(i) "\n"
#define ST_K(i)		"	kmovq %k" S(i) ", 2048+8*" S(i) "(%r12)\n"
#define K7(op)		op(1) op(2) op(3) op(4) op(5) op(6) op(7)

/*
 * The system call, in a function of its own: Capstone 4 cannot decode
 * some AVX-512 instructions, and a site in a function it cannot decode
 * is left to dispatch, whose signal saves every register.  a0 travels
 * in r8; rsi and rdx are cleared.
 */
__asm__(
	".text\n"
	".type vregs_sys, @function\n"
	"vregs_sys:\n"
	".cfi_startproc\n"
	"	movq %rdi, %rax\n"
	"	xorl %edx, %edx\n"
	"	xorl %esi, %esi\n"
	".globl vregs_site\n"
	"vregs_site:\n"
	"	movq %r8, %rdi\n"
	"	syscall\n"
	"	ret\n"
	".cfi_endproc\n"
	".size vregs_sys, .-vregs_sys\n"
	
	VR_ENTER("vregs_call_sse")
	"	movq %rsi, %r8\n"
	R16(LD_X)
	VR_CALL
	R16(ST_X)
	VR_LEAVE("vregs_call_sse")
	VR_ENTER("vregs_call_avx")
	"	movq %rsi, %r8\n"
	R16(LD_Y)
	VR_CALL
	R16(ST_Y)
	"	vzeroupper\n"
	VR_LEAVE("vregs_call_avx")
	VR_ENTER("vregs_call_avx512")
	"	movq %rsi, %r8\n"
	R32(LD_Z)
	K7(LD_K)
	VR_CALL
	R32(ST_Z)
	K7(ST_K)
	"	vzeroupper\n"
	VR_LEAVE("vregs_call_avx512"));

static void
fill(struct vregs *in, unsigned int seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < sizeof(*in); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		((uint8_t *)in)[i] = (uint8_t)x;
	}
	in->k[0] = 0;
}

int
main(void)
{
	static const char *const what[] = { "getppid", "access", "execve" };
	const long nr[] = { SYS_getppid, SYS_access, SYS_execve };
	const long a0[] = { 0, (long)"/usr", (long)"/nonexistent/userdt" };
	long (*call)(long, long, const struct vregs *, struct vregs *);
	const uint8_t *site;
	const char *level;
	struct vregs in, out;
	size_t width, nreg, nk, i, j;
	int bad = 0, r;

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		call = vregs_call_avx512;
		level = "avx512";
		width = 64, nreg = 32, nk = 8;
	} else if (__builtin_cpu_supports("avx")) {
		call = vregs_call_avx;
		level = "avx";
		width = 32, nreg = 16, nk = 0;
	} else {
		call = vregs_call_sse;
		level = "sse";
		width = 16, nreg = 16, nk = 0;
	}
	site = vregs_site;
	printf("level %s\nsite %02x\n", level, site[0]);
	for (i = 0; i < 3; i++)
		for (r = 0; r < ROUNDS; r++) {
			fill(&in, (unsigned int)(i * ROUNDS + r));
			memset(&out, 0, sizeof(out));
			(void)call(nr[i], a0[i], &in, &out);
			for (j = 0; j < nreg; j++)
				if (memcmp(in.v[j], out.v[j], width) != 0) {
					printf("bad %s %d %s%zu\n", what[i], r,
					    width == 64 ? "zmm" : width == 32 ?
					    "ymm" : "xmm", j);
					bad = 1;
				}
			for (j = 1; j < nk; j++)
				if (in.k[j] != out.k[j]) {
					printf("bad %s %d k%zu\n", what[i], r, j);
					bad = 1;
				}
		}
	printf("done\n");
	return bad;
}
