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
 * Where a rewritten system call site's trampoline calls in (udt_rw.c).
 * The trampoline has stepped over the red zone, pushed where to come
 * back as a call would, then the site's address, and jumped here with the site's registers: rax the number, rdi rsi rdx r10 r8 r9 the arguments.
 * Like the syscall instruction it stands in for, this entry preserves
 * every register but rax, rcx and r11 (and the flags, which no compiler
 * keeps live across a system call: see udt_rw.c).
 *
 * Out: rcx = 0 and rax = the result; or rcx = 1 with every register as
 * it came in (rax the number): the trampoline makes that call in place,
 * because it must run on the program's own stack (rt_sigreturn, vfork,
 * clone of a thread).
 *
 * The common case stays in the first lines: no probe of the call
 * enabled, a number with no special needs (udt_rw_idx[nr] >= -1), the
 * call made right here, in this library's text, where Syscall User
 * Dispatch lets it through.  A recorded call with no special needs is
 * made here too, between its two records.
 */
#include "udt_rw.h"

/*
 * udt_rw_post's frame: a frame pointer the unwinder can follow, then a
 * struct udt_rw_frame on a 16-byte aligned stack below it; `leave`
 * undoes both.
 */
.macro FRAME_ENTER
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$UDT_RW_FRAMESZ, %rsp
	andq	$-16, %rsp
.endm

/*
 * The system call's argument registers and xmm0-15, which the C side may
 * clobber and the program may keep live across a system call, to and
 * from the struct udt_rw_frame at %rsp.  The library is built for plain
 * x86-64: the rest of the vector state (ymm, zmm, k) changes only in
 * code that is not ours, which the C side brackets with udt_xsave().
 */
.macro SAVE_VOLATILE
	movq	%rdi, UDT_RWF_A0(%rsp)
	movq	%rsi, UDT_RWF_A1(%rsp)
	movq	%rdx, UDT_RWF_A2(%rsp)
	movq	%r10, UDT_RWF_A3(%rsp)
	movq	%r8, UDT_RWF_A4(%rsp)
	movq	%r9, UDT_RWF_A5(%rsp)
	movdqu	%xmm0, UDT_RWF_XMM+0x00(%rsp)
	movdqu	%xmm1, UDT_RWF_XMM+0x10(%rsp)
	movdqu	%xmm2, UDT_RWF_XMM+0x20(%rsp)
	movdqu	%xmm3, UDT_RWF_XMM+0x30(%rsp)
	movdqu	%xmm4, UDT_RWF_XMM+0x40(%rsp)
	movdqu	%xmm5, UDT_RWF_XMM+0x50(%rsp)
	movdqu	%xmm6, UDT_RWF_XMM+0x60(%rsp)
	movdqu	%xmm7, UDT_RWF_XMM+0x70(%rsp)
	movdqu	%xmm8, UDT_RWF_XMM+0x80(%rsp)
	movdqu	%xmm9, UDT_RWF_XMM+0x90(%rsp)
	movdqu	%xmm10, UDT_RWF_XMM+0xa0(%rsp)
	movdqu	%xmm11, UDT_RWF_XMM+0xb0(%rsp)
	movdqu	%xmm12, UDT_RWF_XMM+0xc0(%rsp)
	movdqu	%xmm13, UDT_RWF_XMM+0xd0(%rsp)
	movdqu	%xmm14, UDT_RWF_XMM+0xe0(%rsp)
	movdqu	%xmm15, UDT_RWF_XMM+0xf0(%rsp)
.endm

/* The system call's arguments, as SAVE_VOLATILE kept them. */
.macro LOAD_ARGS
	movq	UDT_RWF_A0(%rsp), %rdi
	movq	UDT_RWF_A1(%rsp), %rsi
	movq	UDT_RWF_A2(%rsp), %rdx
	movq	UDT_RWF_A3(%rsp), %r10
	movq	UDT_RWF_A4(%rsp), %r8
	movq	UDT_RWF_A5(%rsp), %r9
.endm

.macro RESTORE_VOLATILE
	movdqu	UDT_RWF_XMM+0x00(%rsp), %xmm0
	movdqu	UDT_RWF_XMM+0x10(%rsp), %xmm1
	movdqu	UDT_RWF_XMM+0x20(%rsp), %xmm2
	movdqu	UDT_RWF_XMM+0x30(%rsp), %xmm3
	movdqu	UDT_RWF_XMM+0x40(%rsp), %xmm4
	movdqu	UDT_RWF_XMM+0x50(%rsp), %xmm5
	movdqu	UDT_RWF_XMM+0x60(%rsp), %xmm6
	movdqu	UDT_RWF_XMM+0x70(%rsp), %xmm7
	movdqu	UDT_RWF_XMM+0x80(%rsp), %xmm8
	movdqu	UDT_RWF_XMM+0x90(%rsp), %xmm9
	movdqu	UDT_RWF_XMM+0xa0(%rsp), %xmm10
	movdqu	UDT_RWF_XMM+0xb0(%rsp), %xmm11
	movdqu	UDT_RWF_XMM+0xc0(%rsp), %xmm12
	movdqu	UDT_RWF_XMM+0xd0(%rsp), %xmm13
	movdqu	UDT_RWF_XMM+0xe0(%rsp), %xmm14
	movdqu	UDT_RWF_XMM+0xf0(%rsp), %xmm15
	LOAD_ARGS
.endm

/* The entry's struct udt_rw_frame, below its site frame (SITE_FRAME). */
.macro FRAME_ALLOC
	subq	$UDT_RW_FRAMESZ, %rsp
	andq	$-16, %rsp
.endm

/*
 * What the C side reads of the program's registers (the number, the
 * callee-saved ones and the site's stack, for a user stack that starts
 * at the site), and everything it may clobber (SAVE_VOLATILE).
 */
.macro SAVE_FRAME
	movq	%rax, UDT_RWF_NR(%rsp)
	movq	%rbx, UDT_RWF_RBX(%rsp)
	movq	%r12, UDT_RWF_R12(%rsp)
	movq	%r13, UDT_RWF_R13(%rsp)
	movq	%r14, UDT_RWF_R14(%rsp)
	movq	%r15, UDT_RWF_R15(%rsp)
	movq	(%rbp), %rcx
	movq	%rcx, UDT_RWF_RBP(%rsp)
	movq	16(%rbp), %rcx
	movq	%rcx, UDT_RWF_RET(%rsp)
	leaq	UDT_RW_SITECFA(%rbp), %rcx	/* the site's rsp */
	movq	%rcx, UDT_RWF_SP(%rsp)
	SAVE_VOLATILE
	cld
.endm

/*
 * One to the count at mem, from the counting path: a plain add while
 * the process has one thread (udt_rw_mt), else a locked one.  r11 is
 * lost.  Its own labels: the macro is used twice.
 */
.macro ADD mem:vararg
	cmpl	$0, udt_rw_mt(%rip)
	jne	.Ladd_lock\@
	movq	__libc_single_threaded@GOTPCREL(%rip), %r11
	cmpb	$0, (%r11)
	je	.Ladd_lock\@
	incl	\mem
	jmp	.Ladd_done\@
.Ladd_lock\@:
	lock incl \mem
.Ladd_done\@:
.endm

/*
 * Back to the trampoline, which pushed its address and jumped here.
 * Not `ret`: it has no call to pair with, and the system call just made
 * left the return predictor with nothing to predict it from.  r11 is
 * the system call's to clobber.
 */
.macro RETURN
	popq	%r11
	.cfi_adjust_cfa_offset -8
	jmpq	*%r11
.endm

/*
 * Undo the site frame, rsp at it: the program's rbp back, the site word
 * dropped (r11, which RETURN takes anyway); the way back left on top.
 */
.macro SITE_LEAVE
	popq	%rbp
	.cfi_def_cfa %rsp, UDT_RW_SITECFA - 8
	.cfi_restore %rbp
	popq	%r11
	.cfi_def_cfa %rsp, 8
	.cfi_offset %rip, -8
.endm

	.text
	.globl	udt_rw_entry
	.hidden	udt_rw_entry
	.type	udt_rw_entry, @function
	.p2align 4
udt_rw_entry:
	.cfi_startproc
	/*
	 * First a frame as the site's function would have made had it
	 * called a function at the site: the site as the return address
	 * (the trampoline pushed it after the way back), the program's rbp
	 * saved under it, rbp pointing there.  A frame-pointer
	 * walk (the kernel's, for perf callchains) then goes from here to
	 * the site and on to the program's callers; the CFI below lets
	 * libunwind do the same, with the site's own rsp (above the way
	 * back and the red zone the trampoline stepped over) as the CFA.
	 * Samples taken here are then cut to start at the site (dtd's
	 * dt_ustack_untrace(), udt_unw_stack()).  rcx and r11 are the
	 * system call's to clobber.
	 */
	.cfi_def_cfa_offset UDT_RW_SITECFA - 8
	.cfi_offset %rip, -(UDT_RW_SITECFA - 8)
	pushq	%rbp
	.cfi_def_cfa_offset UDT_RW_SITECFA
	.cfi_offset %rbp, -UDT_RW_SITECFA
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	cmpq	$UDT_RW_NR, %rax
	jae	.Lslow
	leaq	udt_rw_idx(%rip), %r11
	movswq	(%r11,%rax,2), %rcx
	cmpq	$-1, %rcx
	je	.Lplain
	jl	.Lslow
	movq	udt_enab(%rip), %r11
	cmpw	$0, (%r11,%rcx,2)
	jne	.Lcount
.Lplain:
	syscall
	xorl	%ecx, %ecx
	.cfi_remember_state
	SITE_LEAVE
	RETURN
	.cfi_restore_state

	/*
	 * A probe of the call is enabled.  When each of its two enable
	 * bytes says count only (UDT_RW_EN_COUNT) or nothing, and nothing
	 * asks for the C side, the entry counts it itself: one add to
	 * rh_count[p] for each probe, the call made between them, no frame
	 * saved, no vector register touched, errno never at risk.  This is
	 * udt_emit()'s count-only case with udt_rw_arm(), udt_rec_enter()
	 * and udt_filtered() reduced to their answer for it (and the add
	 * a plain one while the process has one thread: ADD), so what
	 * sends a call to .Lrec is what they would act on:
	 *	a byte that records, or a filter on either probe
	 *	(udt_filt_on()): .Lrec applies it, counts what it keeps;
	 *	a table being replaced (tb_reconnect) or not one of dtd's;
	 *	a depth already raised (a handler inside a record, or one
	 *	left by siglongjmp(): udt_nest_enter() sorts it out);
	 *	the library's own calls (ut_inlib);
	 *	a vfork child's calls (ut_vfork > 0), which udt_emit()
	 *	records: the add would be its parent's, and a kernel
	 *	program counts them too (a fork child's return, which
	 *	udt_emit() records as well, never comes here: fork and the
	 *	clones are UDT_RW_C);
	 *	a thread dispatch does not catch yet (ut_armed clear while
	 *	udt_sud_active) unless udt_rw_arm() found before that it
	 *	needs not (ut_traced, every site rewritten or trapped).
	 * The depth is raised around the ring's load and its add, as
	 * udt_rec_enter() does: a fork from a handler in between then
	 * keeps the parent's ring mapped in the child (udt_attach_locked()),
	 * and a call that handler makes counts as recursive.
	 * rcx: the index; r11: udt_enab.
	 */
.Lcount:
	movzwl	(%r11,%rcx,2), %ecx
	testl	$UDT_RW_EN_NOTCOUNT2, %ecx
	jnz	.Lrec
	/* Even parity of the two bits: both or neither. */
	testb	$UDT_RW_EN_COUNT, %cl
	jnp	.Lrec
	testb	$UDT_RW_EN_COUNT, %ch
	jnp	.Lrec
	movq	udt_thread@gottpoff(%rip), %r11
	cmpl	$0, %fs:UDT_RW_UT_NEST(%r11)
	jne	.Lrec
	cmpl	$0, %fs:UDT_RW_UT_INLIB(%r11)
	jne	.Lrec
	cmpl	$0, %fs:UDT_RW_UT_VFORK(%r11)
	jg	.Lrec
	cmpb	$0, %fs:UDT_RW_UT_ARMED(%r11)
	jne	1f
	cmpl	$0, udt_sud_active(%rip)
	je	1f
	cmpb	$0, %fs:UDT_RW_UT_TRACED(%r11)
	je	.Lrec
	cmpl	$0, udt_rw_complete(%rip)
	je	.Lrec
1:
	/* Two more registers, the program's arguments, kept below rbp. */
	pushq	%rdx
	pushq	%rsi
	movq	udt_tab(%rip), %rdx
	cmpl	$0, UDT_RW_TB_RECONNECT(%rdx)
	jne	.Lcount_rec
	cmpl	$UDT_RW_MAGIC, UDT_RW_TB_MAGIC(%rdx)
	jne	.Lcount_rec
	leaq	udt_rw_idx(%rip), %rsi
	movswq	(%rsi,%rax,2), %rsi
	/* ft_probe[2 * idx] and [2 * idx + 1]: 8 bytes an index. */
	testb	%cl, %cl
	jz	2f
	cmpl	$0, UDT_RW_FT_PROBE(%rdx,%rsi,8)
	jne	.Lcount_rec
2:
	testb	%ch, %ch
	jz	3f
	cmpl	$0, UDT_RW_FT_PROBE+4(%rdx,%rsi,8)
	jne	.Lcount_rec
3:
	testb	%cl, %cl
	jz	4f
	movq	%rsp, %fs:UDT_RW_UT_NEST_SP(%r11)
	movl	$1, %fs:UDT_RW_UT_NEST(%r11)
	movq	udt_ring(%rip), %rdx
	testq	%rdx, %rdx
	jz	5f
	ADD	UDT_RW_RH_COUNT(%rdx,%rsi,8)
	movq	udt_thread@gottpoff(%rip), %r11
5:
	movl	$0, %fs:UDT_RW_UT_NEST(%r11)
4:
	testb	%ch, %ch
	jnz	.Lcount_ret
	popq	%rsi
	popq	%rdx
	syscall
	xorl	%ecx, %ecx
	.cfi_remember_state
	SITE_LEAVE
	RETURN
	.cfi_restore_state

	/*
	 * The return probe counts too: the index kept on the stack across
	 * the call, the depth raised again around the ring's load (a
	 * handler may have forked during the call).  A depth found raised
	 * now (a handler left a record by siglongjmp() during the call)
	 * drops the count, where udt_nest_enter() would record it.
	 */
.Lcount_ret:
	movq	%rsi, %rcx
	popq	%rsi
	popq	%rdx
	pushq	%rcx
	syscall
	popq	%rcx
	movq	udt_thread@gottpoff(%rip), %r11
	cmpl	$0, %fs:UDT_RW_UT_NEST(%r11)
	jne	7f
	movq	%rsp, %fs:UDT_RW_UT_NEST_SP(%r11)
	movl	$1, %fs:UDT_RW_UT_NEST(%r11)
	pushq	%rdx
	movq	udt_ring(%rip), %rdx
	testq	%rdx, %rdx
	jz	6f
	ADD	UDT_RW_RH_COUNT+4(%rdx,%rcx,8)
6:
	popq	%rdx
	movq	udt_thread@gottpoff(%rip), %r11
	movl	$0, %fs:UDT_RW_UT_NEST(%r11)
7:
	xorl	%ecx, %ecx
	.cfi_remember_state
	SITE_LEAVE
	RETURN
	.cfi_restore_state

.Lcount_rec:
	popq	%rsi
	popq	%rdx

	/*
	 * A recorded call with no needs of its own: the records on either
	 * side in C, the call here, so that no return after it is into a
	 * frame made before it (see udt_rw_rec_entry()).
	 */
.Lrec:
	FRAME_ALLOC
	SAVE_FRAME
	movq	%rsp, %rdi
	call	udt_rw_rec_entry
	LOAD_ARGS
	movq	UDT_RWF_NR(%rsp), %rax
	syscall
	movq	%rax, UDT_RWF_RV(%rsp)
	movq	%rsp, %rdi
	call	udt_rw_rec_return
	RESTORE_VOLATILE
	xorl	%ecx, %ecx
	movq	%rbp, %rsp
	.cfi_remember_state
	SITE_LEAVE
	RETURN
	.cfi_restore_state

	/*
	 * Everything else (no probe index: calls that change what the
	 * library must know or are made in place) in udt_rw_slow().
	 */
.Lslow:
	FRAME_ALLOC
	SAVE_FRAME
	movq	$0, UDT_RWF_INPLACE(%rsp)
	movq	%rsp, %rdi
	call	udt_rw_slow
	RESTORE_VOLATILE
	movq	UDT_RWF_INPLACE(%rsp), %rcx
	movq	%rbp, %rsp
	SITE_LEAVE
	RETURN
	.cfi_endproc
	.size	udt_rw_entry, .-udt_rw_entry

/*
 * After a call made in place (vfork, a clone), in the parent and in the
 * child, on whichever stack each runs, and after one dispatch made after
 * its handler (udt_sud_stub): the caller pushed the call's number + 1 (0:
 * unknown; UDT_RW_NR_SUD: udt_sud_stub's, which pushed a word for the
 * way back before it), rax holds the result.  Records the return probe; preserves
 * every register but rcx and r11.
 */
	.globl	udt_rw_post
	.hidden	udt_rw_post
	.type	udt_rw_post, @function
	.p2align 4
udt_rw_post:
	.cfi_startproc
	FRAME_ENTER
	movq	%rax, UDT_RWF_RV(%rsp)
	movq	16(%rbp), %rcx
	movq	%rcx, UDT_RWF_NR(%rsp)
	leaq	16(%rbp), %rcx		/* the words the caller pushed */
	movq	%rcx, UDT_RWF_SP(%rsp)
	SAVE_VOLATILE
	cld
	movq	%rsp, %rdi
	call	udt_rw_slow_post
	RESTORE_VOLATILE
	movq	UDT_RWF_RV(%rsp), %rax
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	udt_rw_post, .-udt_rw_post

	.section .note.GNU-stack,"",@progbits
