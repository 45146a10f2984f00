/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a call or jump hook's "jmp" in the copy lands (jump.c).
 *
 * xp_jentries is a pool of XP_NR_JENTRIES entries, XP_JENTRY_SIZE bytes
 * apart, in module text: mapped in every mm, so a task preempted in one, or
 * a lazy-TLB kernel thread whose CR3 an IPI switches meanwhile, resumes
 * safely wherever it does. Each entry belongs to one hook at a time: it
 * pushes its own number and goes to xp_jump_common, so the handler finds the
 * hook by index, with no lookup by address or page table.
 *
 * xp_jump_common builds a struct pt_regs like the one an int3 at the hook
 * would have made (the handler fills ip = hook + 1; sp and flags as at the
 * hook), asks xp_jump_handler() where to go on, restores every register and
 * flag and "returns" there: the hook's out-of-line slot, which runs the
 * covered instructions and jumps back behind them, or the hook's address
 * itself (jump.c says when). Interrupts are left as they were.
 *
 * Stacks through a hit (bpf_get_stack() in a hook's program, perf, a
 * livepatch's reliable unwind): while the handler runs, the frame reads as
 * if the hooked function had called xp_jump_common from the hook's address
 * (the entry's number below pt_regs becomes hook + 1, the handler's first
 * store: UNWIND_HINT type CALL), so the unwinder goes on into the hooked
 * function with the unwind data of the hooked instruction itself, at the
 * stack it ran on. An exception frame there would give it the next
 * instruction's, against the stack from before the hooked one: a hook on a
 * push, the usual first instruction, cut every stack at the hooked function.
 * A kprobe program's bpf_get_stack() starts from the registers themselves,
 * as at a kprobe (ip = hook + 1, an exception frame to perf): at a push
 * it reads the return address a word too high, as a kprobe's does upstream. The entry and the slot have
 * no unwind data: an unwind that starts in one stops there.
 */
#include <linux/linkage.h>
#include <asm/segment.h>
#include <asm/smap.h>
#include <asm/unwind_hints.h>
#include <linux/objtool.h>
#include "jump_entry.h"

/* 6.1 calls the "no unwind information here" hint UNWIND_HINT_EMPTY. */
#ifndef UNWIND_HINT_TYPE_UNDEFINED
#define UNWIND_HINT_UNDEFINED UNWIND_HINT_EMPTY
#endif

/* struct pt_regs offsets (arch/x86/include/asm/ptrace.h, x86_64) */
#define XP_REGS_SP	152
#define XP_REGS_SIZE	168

	.text
/*
 * Code, not C functions (SYM_CODE): entered from the middle of any kernel
 * code, where DF may be set. Only direct jumps from the copies reach them:
 * no ENDBR.
 */
SYM_CODE_START(xp_jentries)
	.set xp_n, 0
	.rept XP_NR_JENTRIES
	UNWIND_HINT_UNDEFINED
	ANNOTATE_NOENDBR
	pushq	$xp_n
	jmp	xp_jump_common
	.balign	XP_JENTRY_SIZE, 0xcc
	.set xp_n, xp_n + 1
	.endr
SYM_CODE_END(xp_jentries)

SYM_CODE_START_LOCAL(xp_jump_common)
	UNWIND_HINT_UNDEFINED
	ANNOTATE_NOENDBR
	/* (%rsp): the entry's number; 8(%rsp): the stack at the hook */
	pushq	$__KERNEL_DS		/* ss */
	pushq	%rsp			/* sp, fixed up below */
	pushfq				/* flags, before anything changes them */
	/*
	 * As the int3 entry does (entry_64.S): C code runs with DF clear and,
	 * inside a user_access_begin() region of the hooked code, SMAP back on.
	 * popfq below gives the hooked code its own AC and DF again.
	 */
	cld
	ASM_CLAC
	pushq	$__KERNEL_CS		/* cs */
	pushq	$0			/* ip: the handler knows it */
	pushq	$-1			/* orig_ax */
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	/* A call from the hook: hook + 1 in the number's place (the handler's first store). */
	UNWIND_HINT type=UNWIND_HINT_TYPE_CALL sp_reg=ORC_REG_SP sp_offset=XP_REGS_SIZE+8
	/* sp: the value pushed was 16 below the hook's (number, ss). */
	addq	$16, XP_REGS_SP(%rsp)
	movq	%rsp, %rdi
	movq	XP_REGS_SIZE(%rsp), %rsi
	call	xp_jump_handler
	/*
	 * From here the word unwinders took for the return address is where
	 * to go on (the slot, or the hook's address): no unwind data.
	 */
	UNWIND_HINT_UNDEFINED
	/* Go on where the handler says: over the entry's number. */
	movq	%rax, XP_REGS_SIZE(%rsp)
	/* r15..rbx: the handler is C and kept them, and nothing writes regs. */
	addq	$48, %rsp
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	UNWIND_HINT_UNDEFINED
	addq	$24, %rsp		/* orig_ax, ip, cs */
	popfq				/* flags: IF cleared on the way to a slot */
	leaq	16(%rsp), %rsp		/* sp, ss: lea keeps the flags */
	UNWIND_HINT_FUNC
	RET
SYM_CODE_END(xp_jump_common)
