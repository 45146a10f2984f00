/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A draft of the planned records routines with one return routine
 * (docs/userhooks.md, "Next: one return routine"), run in user space on the
 * host by uret2.c, under real rseq and real signals: the control flow of
 * the protocol selftests/host/uret-check.c models, in instructions.
 *
 * Not the module's template yet: no stamp, no sums, no per-process
 * patching (the rseq area, the buffer and the thunks' region are read from
 * variables uret2.c sets), one buffer (the harness runs on one CPU), and a
 * full buffer asks for a hand-over with a signal (SIGUSR2 to itself) where
 * the module's routine makes a system call.
 * What it has as planned:
 *
 * u2_entry, called by a traced function's stub (cookie in eax, the stub
 * keeps rax), with the function's return slot at 8(%rsp): in one rseq
 * section, reads the slot; unless it holds the return routine, stores the
 * routine's address there; appends {tsc, sp | cookie << 48 | tail, the
 * slot's value}; commits the count. The abort puts back the value the
 * section read (rdi, 0 until then) unless it was the routine's.
 *
 * u2_ret, reached by the function's ret (the slot just below sp): in one
 * rseq section, looks down the buffer for the newest entry at its sp with
 * no return of that sp after it; the newest record: folds it (count - 1,
 * a call to the sums); else appends a return. Then writes the entry's
 * return address in the slot's word (which nothing else writes: the red
 * zone) and jumps there; but a tail call's entry, whose address is the
 * routine's, goes back to the search for its caller's with the word left
 * as it is (a hand-over may have made it a thunk since the commit). Found nothing: the slot holds a thunk a hand-over
 * put there, which it jumps to.
 *
 * A thunk (uret2.c makes them at hand-overs): keeps rax, puts its number
 * in eax and goes to u2_thunk, which appends a return at its sp and jumps
 * to the thunk's target.
 *
 * Built with -DU2_NOABORT, -DU2_NOSEARCH or -DU2_RETSLOT, one rule is left
 * out: the harness must then fail.
 */

#define RSEQ_SIG	0x53053053
#define HDR		64		/* the records start here; the state is the first word */
#define CAP		64		/* records a buffer holds */
#define R_RET		63
#define R_TAIL		62

	.text

/* tkill(u2_tid, SIGUSR2): the harness's hand-over; clobbers rax, rcx, rsi, rdi, r11 */
.macro FLUSH
	movl	$200, %eax
	movl	u2_tid(%rip), %edi
	movl	$12, %esi
	syscall
.endm

/* rdx, rcx, r11, rsi, rdi below sp, from OFF down (the entry's at -0x10; the return's and the thunks' at -0x18, under rax) */
.macro SAVE off
	movq	%rdx, \off(%rsp)
	movq	%rcx, \off - 8(%rsp)
	movq	%r11, \off - 16(%rsp)
	movq	%rsi, \off - 24(%rsp)
	movq	%rdi, \off - 32(%rsp)
.endm

.macro RESTORE off
	movq	\off(%rsp), %rdx
	movq	\off - 8(%rsp), %rcx
	movq	\off - 16(%rsp), %r11
	movq	\off - 24(%rsp), %rsi
	movq	\off - 32(%rsp), %rdi
.endm

/* r11 at the CPU's buffer, rcx its state; to NONE off the harness's CPU */
.macro BUFFER none
	movl	4(%r11), %ecx		/* rseq->cpu_id */
	cmpl	u2_cpu(%rip), %ecx
	jne	\none
	leaq	u2_buf(%rip), %r11
	movq	(%r11), %rcx		/* the state */
.endm

/* the new record's time, at the count in cx; rdx: its index times 3 (words); clobbers rax */
.macro RECORD_TIME
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movzwl	%cx, %edx
	leaq	(%rdx,%rdx,2), %rdx
	movq	%rax, HDR(%r11,%rdx,8)
.endm

/* a return record at the slot's sp, at the count in cx; clobbers rax, rdx */
.macro RET_RECORD
	RECORD_TIME
	leaq	-8(%rsp), %rax
	btsq	$R_RET, %rax
	movq	%rax, HDR + 8(%r11,%rdx,8)
.endm

/* r11: the rseq area; clobbers rax */
.macro RSEQ_ENTER desc
	movq	u2_rseq(%rip), %r11
	leaq	\desc(%rip), %rax
	movq	%rax, 8(%r11)		/* rseq->rseq_cs */
.endm

	.globl	u2_entry
	.type	u2_entry, @function
u2_entry:
	SAVE	-0x10
	movl	%eax, %esi
	shlq	$48, %rsi
	leaq	8(%rsp,%rsi), %rsi	/* sp | cookie << 48 */
.Le_again:
	/*
	 * rsi's tail bit stays set across a restart: a slot that held the
	 * routine or a thunk holds one of the two again (a hand-over makes
	 * the routine a thunk, the abort puts a thunk back), never a caller's
	 * own address, so a tail call stays one.
	 */
	xorl	%edi, %edi		/* nothing read from the slot yet */
	RSEQ_ENTER .Ldesc_e
.Le_start:
	BUFFER	.Le_done		/* not the harness's CPU: no record */
	movq	8(%rsp), %rdi		/* the slot */
	cmpw	$CAP, %cx
	jae	.Le_full
	leaq	u2_ret(%rip), %rax
	cmpq	%rax, %rdi
	je	.Le_tailret		/* a tail call of an entry in the buffer: slot left */
	movq	%rdi, %rdx
	subq	u2_thunks(%rip), %rdx
	cmpq	u2_thunks_len(%rip), %rdx
	jae	1f
	btsq	$R_TAIL, %rsi		/* a tail call of an entry handed over */
1:	movq	%rax, 8(%rsp)		/* the slot: the return routine */
	jmp	.Le_rec
.Le_tailret:
	btsq	$R_TAIL, %rsi
.Le_rec:
	RECORD_TIME
	movq	%rsi, HDR + 8(%r11,%rdx,8)
	movq	%rdi, HDR + 16(%r11,%rdx,8)
	incq	%rcx
	movq	%rcx, (%r11)		/* the commit */
.Le_post:
.Le_done:
	RESTORE	-0x10
	ret
.Le_full:				/* outside the section: a hand-over, then again */
	movq	%rsi, -0x38(%rsp)
	FLUSH
	movq	-0x38(%rsp), %rsi
	jmp	.Le_again
	.long	RSEQ_SIG
.Le_abort:
#ifndef U2_NOABORT
	testq	%rdi, %rdi
	jz	.Le_again
	leaq	u2_ret(%rip), %rax
	cmpq	%rax, %rdi
	je	.Le_again
	movq	%rdi, 8(%rsp)		/* what the section read, back in the slot */
#endif
	jmp	.Le_again
	.size	u2_entry, . - u2_entry

	.globl	u2_ret
	.type	u2_ret, @function
u2_ret:
	movq	%rax, -0x10(%rsp)	/* -8(%rsp), the slot's word: not ours */
	SAVE	-0x18
.Lr_again:
	leaq	-8(%rsp), %rsi
	shlq	$16, %rsi		/* the entry's sp, as the records' low 48 bits shifted */
	RSEQ_ENTER .Ldesc_r
.Lr_start:
	BUFFER	.Lr_none
	movzwl	%cx, %edx
	xorl	%edi, %edi		/* returns of this sp seen on the way down */
2:	subl	$1, %edx
	jb	.Lr_none
	leaq	(%rdx,%rdx,2), %rax
	movq	HDR + 8(%r11,%rax,8), %rax
	testq	%rax, %rax
	js	3f			/* a return */
	shlq	$16, %rax
	cmpq	%rsi, %rax
	jne	2b
#ifdef U2_NOSEARCH
	jmp	4f
#endif
	testl	%edi, %edi
	jz	4f
	decl	%edi
	jmp	2b
3:	shlq	$16, %rax
	cmpq	%rsi, %rax
	jne	2b
#ifdef U2_NOSEARCH
	jmp	.Lr_none
#endif
	incl	%edi
	jmp	2b
4:					/* record edx is this call's entry */
#ifdef U2_NOSEARCH
	leal	1(%rdx), %eax
	cmpw	%ax, %cx
	jne	.Lr_none		/* only the newest is looked at */
#endif
	leaq	(%rdx,%rdx,2), %rax
	movq	HDR + 16(%r11,%rax,8), %rdi	/* where it returns */
	movq	HDR + 8(%r11,%rax,8), %rsi	/* its cookie, for a fold */
	leal	1(%rdx), %eax
	cmpw	%ax, %cx
	jne	.Lr_append		/* not the newest: a return record */
	shrq	$48, %rsi
	andl	$0xfff, %esi
	decq	%rcx			/* folded: the entry goes */
	jmp	.Lr_commit
.Lr_append:
	cmpw	$CAP, %cx
	jae	.Lr_full
	RET_RECORD
	movq	$-1, %rsi		/* nothing to sum */
	incq	%rcx			/* a return record */
.Lr_commit:				/* one commit for both: the section's last instruction */
	movq	%rcx, (%r11)
.Lr_post:
	testq	%rsi, %rsi
	js	.Lr_go
	leaq	u2_sums(%rip), %rax
	lock incq (%rax,%rsi,8)
.Lr_go:
	/*
	 * A tail call's caller returns next, here again: the slot's word is
	 * left as it is, the routine's address, or the thunk a hand-over made
	 * since the commit for the caller's entry (written over with the
	 * routine's address, that return would be lost).
	 */
#ifndef U2_RETSLOT
	leaq	u2_ret(%rip), %rax
	cmpq	%rax, %rdi
	je	.Lr_again
#endif
	movq	%rdi, -8(%rsp)		/* where to go, in the slot's word */
.Lr_jump:
	movq	-0x10(%rsp), %rax
	RESTORE	-0x18
	jmp	*-8(%rsp)
.Lr_none:				/* out of the section: a hand-over took the entry */
	movq	-8(%rsp), %rax
	subq	u2_thunks(%rip), %rax
	cmpq	u2_thunks_len(%rip), %rax
	jb	.Lr_jump		/* its thunk */
	ud2				/* the return address is lost */
.Lr_full:
	FLUSH
	jmp	.Lr_again
	.long	RSEQ_SIG
.Lr_abort:
	jmp	.Lr_again
	.size	u2_ret, . - u2_ret

/* From a thunk: rax saved at -0x10(%rsp) (the thunk's), eax its number. */
	.globl	u2_thunk
	.type	u2_thunk, @function
u2_thunk:
	SAVE	-0x18
	movl	%eax, %eax
	leaq	u2_target(%rip), %rdi
	movq	(%rdi,%rax,8), %rdi	/* where it goes */
.Lt_again:
	RSEQ_ENTER .Ldesc_t
.Lt_start:
	BUFFER	.Lt_go
	cmpw	$CAP, %cx
	jae	.Lt_full
	RET_RECORD
	incq	%rcx
	movq	%rcx, (%r11)
.Lt_post:
.Lt_go:
	movq	%rdi, -8(%rsp)
	jmp	.Lr_jump
.Lt_full:
	movq	%rdi, -0x40(%rsp)
	FLUSH
	movq	-0x40(%rsp), %rdi
	jmp	.Lt_again
	.long	RSEQ_SIG
.Lt_abort:
	jmp	.Lt_again
	.size	u2_thunk, . - u2_thunk

	.section .data.rel.ro, "aw"
	.balign	32
.Ldesc_e:
	.long	0, 0
	.quad	.Le_start, .Le_post - .Le_start, .Le_abort
	.balign	32
.Ldesc_r:
	.long	0, 0
	.quad	.Lr_start, .Lr_post - .Lr_start, .Lr_abort
	.balign	32
.Ldesc_t:
	.long	0, 0
	.quad	.Lt_start, .Lt_post - .Lt_start, .Lt_abort

	.section .note.GNU-stack, "", @progbits
