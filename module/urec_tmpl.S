/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared routines of a records block (urec.c), as data: the module
 * copies them into each trampoline area and patches the marked immediates
 * for the process (its rseq area's offset from the thread pointer, its
 * rseq signature, where its record buffers and sums are, how many
 * buffers). Everything rip-relative here points into the same block, so
 * the copy runs wherever it lands.
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
 * Sums (XPROBES_F_SUMS: the buffer's header has a ratio of cycles to ns).
 * A return whose entry is the newest record, with its caller's entry just
 * before it (above it on the stack, or at its sp for a tail call), is not
 * appended: in a critical section of its own
 * (xp_urec_fstart to xp_urec_fpost) the routine takes the entry out and
 * adds the call's cycles to what its caller's callees took, then, past
 * the commit, adds the call to its function's sums with locked adds (a
 * thread preempted there finishes them wherever it runs next, and the
 * kernel reads them at any time). What each open entry's callees took is
 * kept beside the record before it (XP_UREC_ACC: every append copies the
 * newest's there), and the newest's in one of two header slots chosen by
 * the count's parity: a fold writes the caller's new figure into the other
 * slot, so a restart after any store before the commit reads the same
 * values again. The kernel hands those figures over with the records
 * (XPROBES_UREC_CHARGE), so an entry that does not return within the
 * hand-over still has its callees' time taken off its own.
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

/*
 * The critical section's start: its descriptor in rseq->rseq_cs, then the
 * CPU from rseq->cpu_id (the immediates patched per process at P_CS,
 * P_CPU, P_NBUFS, P_BASE), and r11 at that CPU's buffer; to NONE without
 * rseq (cpu_id -1) or past the buffers.
 */
.macro CPU_BUFFER desc, p_cs, start, p_cpu, p_nbufs, p_base, none
	leaq	\desc(%rip), %rax
	movq	%rax, %fs:0x7fffff00	/* rseq->rseq_cs */
\p_cs:
\start:
	movl	%fs:0x7fffff00, %ecx	/* rseq->cpu_id */
\p_cpu:
	cmpl	$0x7fffff00, %ecx	/* buffers */
\p_nbufs:
	jae	\none
	shlq	$XP_UREC_BUF_SHIFT, %rcx
	movabsq	$0x7fffffffffffff00, %r11	/* the buffers */
\p_base:
	addq	%rcx, %r11
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
	.globl xp_urec_p_cs2, xp_urec_p_cpu2, xp_urec_p_nbufs2, xp_urec_p_base2, xp_urec_p_sig2
	.globl xp_urec_p_sums, xp_urec_fstart, xp_urec_fpost, xp_urec_fabort, xp_urec_desc2
	.globl xp_urec_sums_gate, xp_urec_plain, xp_urec_slots_gate, xp_urec_slots_done
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
xp_urec_sums_gate:			/* without sums, urec.c makes it a jmp to xp_urec_plain */
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* a 5-byte nop */
	movq	%r8, -0x38(%rsp)
	movq	%r9, -0x40(%rsp)
	movq	%r10, -0x48(%rsp)
xp_urec_fagain:
	CPU_BUFFER .Ldesc2, xp_urec_p_cs2, xp_urec_fstart, xp_urec_p_cpu2, xp_urec_p_nbufs2, \
		   xp_urec_p_base2, .Lplain
	movq	XP_UREC_MULT(%r11), %r8
	testq	%r8, %r8
	jz	.Lplain			/* no sums */
	movl	(%r11), %r9d
	leal	-1(%r9), %eax
	cmpl	$XP_UREC_CAP - 2, %eax	/* 1 <= n < CAP: a full one (or made to look so) folds nothing */
	ja	.Lplain
	movq	%r9, %r10
	shlq	$4, %r10
	addq	%r11, %r10		/* past the newest record */
	movq	XP_UREC_HDR - 8(%r10), %rax	/* the newest: this call's entry? */
	subq	%rsp, %rax
	movq	%rax, %rdi
	shlq	$16, %rdi
	jnz	.Lplain			/* another sp, or not an entry */
	shrq	$48, %rax		/* its cookie, and its flags from bit 13 */
	movl	%eax, %esi
	andl	$XP_UREC_COOKIE_MASK, %esi
	cmpl	$XP_USUM_FUNCS, %esi
	jae	.Lplain
	shrl	$13, %eax		/* 0: a call, 2: a tail call, else none of ours */
	movq	XP_UREC_HDR - 24(%r10), %rdi	/* the one before: its caller's entry? */
	movq	%rdi, %rcx
	shrq	$61, %rcx
	shlq	$16, %rdi
	testl	$5, %ecx
	jnz	.Lnoentry		/* a return, or an entry whose return writes nothing */
	movq	%rsp, %rcx
	shlq	$16, %rcx
	testl	%eax, %eax
	jnz	.Ltail
	cmpq	%rcx, %rdi
	jbe	.Lplain			/* not above this one: no nesting */
	jmp	.Lnested
/*
 * After a return record: a call at its sp (the same caller's next call,
 * mostly) has for caller the frame on top once that return is taken, which
 * no record names. Its time goes beside the return (the slot of the
 * count's parity below it, as a caller's would), which the hand-over sends
 * after the return as a bottom charge at the return's sp: the consumer
 * drops the frames there as the call's entry would (a tail call's caller,
 * whose callee that return was), and the time goes to the frame on top.
 * At another sp, the entry would drop other frames, or none: not summed;
 * nor is a tail call, whose caller is in no record. The word before the
 * first record (the header's last, XP_UREC_BELOW) reads as a return too:
 * with one record, the bottom's rule.
 */
.Lnoentry:
	cmpl	$4, %ecx
	jne	.Lplain			/* an entry whose return writes nothing, or none of ours */
	testl	%eax, %eax
	jnz	.Lplain
	cmpl	$1, %r9d
	je	.Lbottom		/* its entry is the only record */
	movq	%rsp, %rcx
	shlq	$16, %rcx
	cmpq	%rcx, %rdi
	jne	.Lplain			/* not at the return's sp */
	jmp	.Lnested
/*
 * The bottom: its caller's entry went with a hand-over, or is no traced
 * function's. Its time goes to slot 0, the callees' of the frame below the
 * buffer (what XP_UREC_ACC[0] starts the next record at), which the
 * hand-over sends as a bottom charge at the sp of the first such call
 * since it (bsp), before the records. A call above bsp appends its return:
 * a longjmp may have left the frames between the two, which its entry,
 * handed over, would have dropped. bsp is stored before the commit: a
 * restart reads it equal to its sp and decides the same; a hand-over
 * before the commit sends the entry after the charge at bsp, whose drop is
 * the entry's own, and clears it all; stored after, the thread could set a
 * bsp of the last hand-over into the next one. Stored for a call that
 * then appends its return (its cycles past 2^40), it is that call's sp:
 * the charge, sent before its entry, drops what the entry drops. With one
 * record the rest is the nested path's (its caller's slot is slot 0, its
 * callees' slot 1). A tail call's caller is in no record: not summed.
 */
.Lbottom:
	movq	XP_UREC_BSP(%r11), %rcx
	testq	%rcx, %rcx
	cmovzq	%rsp, %rcx		/* the first since the hand-over: here */
	cmpq	%rsp, %rcx
	jb	.Lplain			/* above the first */
	movq	%rcx, XP_UREC_BSP(%r11)
	jmp	.Lnested
.Ltail:
	cmpl	$2, %eax
	jne	.Lplain
	cmpq	%rcx, %rdi
	jne	.Lplain			/* a tail call's caller is at its sp */
.Lnested:
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	subq	XP_UREC_HDR - 16(%r10), %rax	/* the call's cycles */
	movq	%rax, %rdi
	shrq	$40, %rdi
	jnz	.Lplain			/* backwards, or too long to sum */
	movl	%r9d, %edx
	andl	$1, %edx
	movq	XP_UREC_SLOT(%r11,%rdx,8), %rdi	/* its callees' */
	cmpq	%rax, %rdi
	cmova	%rax, %rdi
	movq	XP_UREC_ACC - 8(%r11,%r9,8), %rcx	/* its caller's callees' so far */
	addq	%rax, %rcx
	xorl	$1, %edx
	movq	%rcx, XP_UREC_SLOT(%r11,%rdx,8)
	decl	%r9d
	movl	%r9d, (%r11)		/* the commit: the entry is gone */
xp_urec_fpost:
	movq	%rax, %rcx
	subq	%rdi, %rcx		/* its own cycles */
	mulq	%r8
	shrdq	$32, %rdx, %rax
	movq	%rax, %rdi		/* its ns */
	movq	%rcx, %rax
	mulq	%r8
	shrdq	$32, %rdx, %rax		/* its own ns */
	leaq	(%rsi,%rsi,2), %rsi
	shlq	$6, %rsi		/* * XP_USUM_SIZE */
	movabsq	$0x7fffffffffffff00, %rcx	/* the sums */
xp_urec_p_sums:
	addq	%rsi, %rcx
	lock incq	XP_USUM_CALLS(%rcx)
	lock addq	%rdi, XP_USUM_WALL(%rcx)
	lock addq	%rax, XP_USUM_OWN(%rcx)
	xorl	%edx, %edx
	bsrq	%rdi, %rax
	cmovzq	%rdx, %rax		/* 0 ns: bucket 0 */
	movl	$XP_USUM_NHIST - 1, %edx
	cmpl	%edx, %eax
	cmoval	%edx, %eax
	lock incl	XP_USUM_HIST(%rcx,%rax,4)
	movq	-0x38(%rsp), %r8
	movq	-0x40(%rsp), %r9
	movq	-0x48(%rsp), %r10
	jmp	xp_urec_done
.Lplain:				/* a return record */
	movq	-0x38(%rsp), %r8
	movq	-0x40(%rsp), %r9
	movq	-0x48(%rsp), %r10
xp_urec_plain:
	movq	%rsp, %rsi		/* where the return address was */
	btsq	$63, %rsi
xp_urec_append:
	xorl	%edi, %edi		/* the kernel has not been asked to flush */
xp_urec_again:
	CPU_BUFFER .Ldesc, xp_urec_p_cs, xp_urec_start, xp_urec_p_cpu, xp_urec_p_nbufs, \
		   xp_urec_p_base, xp_urec_done	/* no rseq (cpu_id is -1): no record */
	movl	(%r11), %ecx
	cmpl	$XP_UREC_CAP, %ecx
	jae	xp_urec_full
xp_urec_slots_gate:			/* without sums, urec.c makes it a jmp to xp_urec_slots_done */
	.byte	0x66, 0x90		/* a 2-byte nop */
	movl	%ecx, %edx		/* the newest's callees' time beside it, */
	andl	$1, %edx
	movq	XP_UREC_SLOT(%r11,%rdx,8), %rax
	movq	%rax, XP_UREC_ACC(%r11,%rcx,8)
	xorl	$1, %edx
	movq	$0, XP_UREC_SLOT(%r11,%rdx,8)	/* and none yet for this one */
xp_urec_slots_done:
	.if xp_urec_slots_done - xp_urec_slots_gate > 129
	.error "the slots' gate is a jmp rel8"
	.endif
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
	.long	0x53053053
xp_urec_p_sig2:
xp_urec_fabort:
	jmp	xp_urec_fagain
xp_urec_full:
	testl	%edi, %edi
	jnz	xp_urec_done		/* still full: nobody flushes (a child of fork) */
	movl	$XPROBES_UREC_NR, %eax	/* rdi 0: flush this CPU's records */
	syscall
	testl	%edi, %edi
	jnz	xp_urec_done		/* rdi 1: the kernel took this record (all but a fork child's) */
	movl	$1, %edi
	jmp	xp_urec_again
	.balign	32
xp_urec_desc:				/* struct rseq_cs */
.Ldesc:
	.long	0, 0			/* version, flags */
	.quad	0, 0, 0			/* start_ip, post_commit_offset, abort_ip */
	.balign	32
xp_urec_desc2:				/* the sums' */
.Ldesc2:
	.long	0, 0
	.quad	0, 0, 0
xp_urec_tmpl_end:
