/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a call hook's "call xp_call_entry" lands (callhook.c).
 *
 * On entry the stack holds the return address: the hook's address + 5, in
 * the view's copy. This builds a struct pt_regs that looks like the one an
 * int3 at the hook would have made (ip = hook + 1, sp and flags as at the
 * hook), turns interrupts off, and asks xp_call_handler() where to go on:
 * the hook's out-of-line slot (interrupts stay off until the slot's sti) or,
 * when this CPU's tables no longer carry the hook, back to the hook address
 * itself with the flags as they were. It then restores every register and
 * "returns" there.
 *
 * Until the cli, an interrupt may preempt the task here: module text is
 * mapped in every mm, so that is safe wherever it resumes, and module exit
 * waits for such tasks with synchronize_rcu_tasks().
 */
#include <linux/linkage.h>
#include <asm/segment.h>
#include <asm/smap.h>
#include <asm/unwind_hints.h>
#include <linux/objtool.h>

/* struct pt_regs offsets (arch/x86/include/asm/ptrace.h, x86_64) */
#define XP_REGS_IP	128
#define XP_REGS_SP	152
#define XP_REGS_SIZE	168

	.text
/*
 * Code, not a C function (SYM_CODE): it is entered from the middle of any
 * kernel code, where DF may be set (objtool assumes a C function's callers
 * cleared it). Only direct calls from the copies reach it: no ENDBR.
 */
SYM_CODE_START(xp_call_entry)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	pushq	$__KERNEL_DS		/* ss */
	pushq	%rsp			/* sp, fixed up below */
	pushfq				/* flags, before anything changes them */
	cli
	/*
	 * As the int3 entry does (entry_64.S): C code runs with DF clear and,
	 * inside a user_access_begin() region of the hooked code, SMAP back on.
	 * popfq below gives the hooked code its own AC and DF again.
	 */
	cld
	ASM_CLAC
	pushq	$__KERNEL_CS		/* cs */
	pushq	32(%rsp)		/* ip: the return address, fixed up below */
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
	/* sp: the value pushed was 8 below ours, and ours is 8 below the hook's. */
	addq	$16, XP_REGS_SP(%rsp)
	/* ip: hook + 5 -> hook + 1, as after an int3 at the hook. */
	subq	$4, XP_REGS_IP(%rsp)
	movq	%rsp, %rdi
	call	xp_call_handler
	/* Go on where the handler says: over our own return address. */
	movq	%rax, XP_REGS_SIZE(%rsp)
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	addq	$24, %rsp		/* orig_ax, ip, cs */
	popfq				/* flags: IF cleared on the way to a slot */
	leaq	16(%rsp), %rsp		/* sp, ss: lea keeps the flags */
	RET
SYM_CODE_END(xp_call_entry)
