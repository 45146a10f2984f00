/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared routines of a records block (urec.c), as data: the module
 * copies them into each trampoline area and patches the marked immediates
 * for the process (its rseq area's offset from the thread pointer, its
 * rseq signature, where its record buffers are, how many). Everything
 * rip-relative here points into the same block, so the copy runs wherever
 * it lands.
 *
 * xp_urec_entry is called by a hook's stub at the function's entry, with the
 * hook's cookie in eax (the stub keeps eax). The function's return address
 * is at 8(%rsp): it becomes the address of the return thunk for it, found
 * in the block's hash (or made by the kernel, on the slow path), so that
 * the return writes a record too. xp_urec_ret is called by a return thunk,
 * which keeps rax and then jumps to the real return address.
 *
 * Both append one record, {rdtsc, entry sp | kind | cookie}, to the buffer
 * of the CPU the thread is on, inside an rseq critical section: preempted,
 * migrated or signalled before the commit (the count's store), the thread
 * restarts at xp_urec_abort, so two threads never mix inside a buffer and a
 * buffer only ever holds whole records. Only what the kernel saves for the
 * thread (xp_urec_full, a miss) enters it: a full buffer or a return address
 * the block has no thunk for yet.
 *
 * Registers: the routines save what they use below the stack pointer. At a
 * function's entry nothing there is live; after a return, nothing a call
 * could not have clobbered is. Flags are not kept: no caller expects them
 * across a call.
 */
#include "urec.h"

#define RSEQ_CS_OFF	8	/* struct rseq: cpu_id_start, cpu_id, rseq_cs */
#define RSEQ_CPU_OFF	4
#define XPROBES_UREC_NR	422
#define GOLDEN_RATIO_64	0x61C8864680B583EB

.macro SAVE
	movq	%rdx, -0x10(%rsp)
	movq	%rcx, -0x18(%rsp)
	movq	%r11, -0x20(%rsp)
	movq	%rsi, -0x28(%rsp)
	movq	%rdi, -0x30(%rsp)
.endm

/* esi: the record's second word for an entry with the cookie in eax; rdi: the entry sp */
.macro ENTRY_WORD
	movl	%eax, %esi
	andl	$XP_UREC_COOKIE_MASK, %esi
	shlq	$48, %rsi
	leaq	8(%rsp), %rdi		/* the entry's sp: where the return address is */
	orq	%rdi, %rsi
.endm

	.section .rodata.xp_urec, "a"
	.balign 64
	.globl xp_urec_tmpl, xp_urec_tmpl_end, xp_urec_entry, xp_urec_entry_noret, xp_urec_ret
	.globl xp_urec_p_cs, xp_urec_p_cpu, xp_urec_p_nbufs, xp_urec_p_base, xp_urec_p_sig
	.globl xp_urec_start, xp_urec_post, xp_urec_abort, xp_urec_desc
	.globl xp_urec_saved, xp_urec_stored, xp_urec_done
xp_urec_tmpl:
.Ltmpl:
xp_urec_entry:
	SAVE
xp_urec_saved:				/* uunwind.c: the registers are below sp */
	ENTRY_WORD
	movq	(%rdi), %rdx		/* the return address */
	leaq	.Ltmpl + XP_URT_OFF(%rip), %rcx
	movq	%rdx, %rax
	subq	%rcx, %rax
	cmpq	$XP_URT_N * XP_URT_SIZE, %rax
	jae	1f
	btsq	$62, %rsi		/* a tail call: the caller's return is a thunk already */
1:	movabsq	$GOLDEN_RATIO_64, %rcx	/* the kernel's hash_64() */
	imulq	%rdx, %rcx
	shrq	$(64 - XP_URT_HASH_BITS), %rcx
	shlq	$4, %rcx
	leaq	.Ltmpl + XP_URT_HASH(%rip), %r11
	addq	%rcx, %r11
	movl	$XP_URT_PROBES, %eax
2:	movq	(%r11), %rcx
	cmpq	%rcx, %rdx
	je	3f
	testq	%rcx, %rcx
	jz	4f
	addq	$16, %r11
	decl	%eax
	jnz	2b
4:	movl	$XPROBES_UREC_NR, %eax	/* a miss: the kernel makes the thunk, puts it at (%rdi) */
	syscall
	cmpq	(%rdi), %rdx
	jne	xp_urec_append
	btsq	$61, %rsi		/* no thunk: this call's return writes nothing */
	jmp	xp_urec_append
3:	movq	8(%r11), %rcx
	movq	%rcx, (%rdi)
xp_urec_stored:				/* uunwind.c: the thunk is in the slot */
	jmp	xp_urec_append

xp_urec_entry_noret:			/* a hook without returns */
	SAVE
	ENTRY_WORD
	btsq	$61, %rsi
	jmp	xp_urec_append

xp_urec_ret:
	SAVE
	movq	%rsp, %rsi		/* where the return address was */
	btsq	$63, %rsi
xp_urec_append:
	xorl	%edi, %edi		/* the kernel has not been asked to flush */
xp_urec_again:
	leaq	.Ldesc(%rip), %rax
	movq	%rax, %fs:0x7fffff00	/* rseq->rseq_cs */
xp_urec_p_cs:
xp_urec_start:
	movl	%fs:0x7fffff00, %ecx	/* rseq->cpu_id */
xp_urec_p_cpu:
	cmpl	$0x7fffff00, %ecx	/* buffers */
xp_urec_p_nbufs:
	jae	xp_urec_done		/* no rseq (cpu_id is -1): no record */
	shlq	$XP_UREC_BUF_SHIFT, %rcx
	movabsq	$0x7fffffffffffff00, %r11	/* the buffers */
xp_urec_p_base:
	addq	%rcx, %r11
	movl	(%r11), %ecx
	cmpl	$XP_UREC_CAP, %ecx
	jae	xp_urec_full
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movl	%ecx, %edx
	shlq	$4, %rdx
	addq	%r11, %rdx
	movq	%rax, XP_UREC_HDR(%rdx)
	movq	%rsi, XP_UREC_HDR + 8(%rdx)
	incl	%ecx
	movl	%ecx, (%r11)		/* the commit */
xp_urec_post:
xp_urec_done:
	movq	-0x10(%rsp), %rdx
	movq	-0x18(%rsp), %rcx
	movq	-0x20(%rsp), %r11
	movq	-0x28(%rsp), %rsi
	movq	-0x30(%rsp), %rdi
	ret
	.long	0x53053053		/* the process's rseq signature */
xp_urec_p_sig:
xp_urec_abort:
	jmp	xp_urec_again
xp_urec_full:
	testl	%edi, %edi
	jnz	xp_urec_done		/* still full: nobody flushes (a child of fork) */
	movl	$XPROBES_UREC_NR, %eax	/* rdi 0: flush this CPU's records */
	syscall
	movl	$1, %edi
	jmp	xp_urec_again
	.balign	32
xp_urec_desc:				/* struct rseq_cs */
.Ldesc:
	.long	0, 0			/* version, flags */
	.quad	0, 0, 0			/* start_ip, post_commit_offset, abort_ip */
xp_urec_tmpl_end:
