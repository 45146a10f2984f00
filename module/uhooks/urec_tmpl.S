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
 * the return writes a record too (where the block has none for that
 * address, its hash entry says so, or its run of the hash is full: the
 * call's return is given up without asking the kernel again). The hash
 * entry the hook's last call found is looked at first: its offset is in
 * the thunk cache (urec.h), by cookie, which the routine keeps when it
 * finds another in the hash. A function called from one place again and
 * again takes one compare there.
 * xp_urec_ret is called by a return thunk, which keeps rax and then jumps
 * to the real return address.
 *
 * Both append one record, {rdtsc, entry sp | kind | cookie}, to the buffer
 * of the CPU the thread is on, inside an rseq critical section: preempted,
 * migrated or signalled before the commit (the count's store), the thread
 * restarts at xp_urec_abort, so two threads never mix inside a buffer and a
 * buffer only ever holds whole records. Only what the kernel saves for the
 * thread (xp_urec_full, a miss, a stamp) enters it: a full buffer, a return
 * address the block has no thunk for yet, or an rseq area not stamped.
 *
 * Whose rseq area? The routines find it at the process's offset from the
 * thread pointer, where glibc puts each thread's, but a thread may have
 * another TLS (clone(CLONE_SETTLS), arch_prctl(ARCH_SET_FS)) and no rseq
 * area: the 8 bytes of rseq_cs would land in its own data. So before it
 * writes there, each routine checks the stamp, a word the kernel writes
 * into the padding of a thread's registered area (XP_RSEQ_STAMP, past
 * every field the kernel writes; random per process) once it has checked
 * that the area at that offset is the one the thread registered; a thread
 * without it asks (rdi 1: the kernel sets rdi 0 once it has stamped) and,
 * refused, writes nothing: no record, no thunk. A thread that exits takes
 * its stamp with it (glibc gives its TLS to a later thread, which runs
 * some code before it registers its area).
 *
 * Sums (XPROBES_F_SUMS: the buffer's header has a ratio of cycles to ns).
 * The count is the low 16 bits of the buffer's state word, eight times
 * the records (XP_UREC_COUNT_UNIT: the routines index with it as it is);
 * above them is A, the cycles of every call the process summed since the last hand-over
 * (urec.h), and every append puts the state as it was beside its record.
 * A return whose entry is the newest record, with its caller's entry just
 * before it (above it on the stack, or at its sp for a tail call), is not
 * appended: in a critical section of its own (xp_urec_fstart to
 * xp_urec_fpost) the routine reads the call's cycles (wall) and what its
 * callees took (A now less A at its entry), then commits the state its
 * entry had, plus wall in A: one store takes the entry out and charges the
 * call to whatever comes before it. Past the commit, it adds the call to
 * its function's sums with locked adds (a thread preempted there finishes
 * them wherever it runs next, and the kernel reads them at any time), and
 * sets rseq_cs to 0, as the kernel would at the thread's next return to
 * user mode after a switch (reading the descriptor first: about 55
 * instructions at each switch of a thread that sleeps after a traced
 * leaf). The append leaves it set: a store on every record would cost more
 * than it saves where calls nest. A restart before the commit has written
 * nothing. The kernel hands the A
 * differences over with the records (XPROBES_UREC_CHARGE), so an entry
 * that does not return within the hand-over still has its callees' time
 * taken off its own.
 *
 * Registers: the routines use rax, rcx, rdx, rsi, rdi and r11 alone, and
 * save them below the stack pointer (rax in the stub or the thunk; rdi
 * only around their system calls). At a
 * function's entry nothing there is live; after a return, nothing a call
 * could not have clobbered is. Flags are not kept: no caller expects them
 * across a call.
 */
#include "urec.h"

/*
 * A record's word rotated left by ROL: its cookie and flags in the low
 * bits (the cookie in bits 0-13, then NORET, TAIL, RET: K_*), an sp's
 * difference above K_LOW.
 */
#define ROL		(64 - XP_UREC_SP_BITS)
#define K_NORET		(1 << (61 - XP_UREC_SP_BITS))
#define K_TAIL		(1 << (62 - XP_UREC_SP_BITS))
#define K_RET		(1 << (63 - XP_UREC_SP_BITS))
#define K_LOW		((1 << ROL) - 1)
#define K_TAIL_BIT	(62 - XP_UREC_SP_BITS)

#define RSEQ_CS_OFF	8	/* struct rseq: cpu_id_start, cpu_id, rseq_cs */
#define RSEQ_CPU_OFF	4
#define XPROBES_UREC_NR	422
#define GOLDEN_RATIO_64	0x61C8864680B583EB

/*
 * To ASK unless the thread's rseq area carries the process's stamp (the
 * immediate and the offset, rseq_off + XP_RSEQ_STAMP, patched at P_STAMP).
 */
.macro STAMPED p_stamp, ask
	cmpl	$0x7fffff00, %fs:0x7fffff00	/* rseq's padding: the stamp? */
\p_stamp:
	jne	\ask
.endm

/*
 * Not stamped: the kernel stamps the area if it is the thread's
 * registered one (rdi 0), and the routine goes on at GO; else rdi stays 1
 * (also where no one listens: a process with no view, or muted for
 * seccomp, uarea.c) and it writes nothing. rsi and rdx survive the call.
 */
.macro ASK_STAMP go, di, di_end
	movq	%rdi, -0x30(%rsp)
\di:
	movl	$1, %edi
	movl	$XPROBES_UREC_NR, %eax
	syscall
	testl	%edi, %edi
	movq	-0x30(%rsp), %rdi	/* (the flags kept) */
\di_end:
	jnz	xp_urec_done
	jmp	\go
.endm

/*
 * rdi is kept only around the system calls, whose argument it is (the
 * ask, a miss, a full buffer: each saves it at -0x30(%rsp) and puts it
 * back); nothing else of the routines writes it.
 */
.macro SAVE
	movq	%rdx, -0x10(%rsp)
	movq	%rcx, -0x18(%rsp)
	movq	%r11, -0x20(%rsp)
	movq	%rsi, -0x28(%rsp)
.endm

/* SAVE's registers back, and the return: xp_urec_done, and the fold's own end */
.macro RESTORE_RET
	movq	-0x10(%rsp), %rdx
	movq	-0x18(%rsp), %rcx
	movq	-0x20(%rsp), %r11
	movq	-0x28(%rsp), %rsi
	ret
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

/*
 * rsi: the record's second word for an entry with the cookie in eax, and
 * its sp, 8(%rsp), where the return address is
 */
.macro ENTRY_WORD
	movl	%eax, %esi		/* the stub's cookie (a forged one: flags of its own records) */
	shlq	$XP_UREC_SP_BITS, %rsi
	leaq	8(%rsp,%rsi), %rsi
.endm

	.section .rodata.xp_urec, "a"
	.balign 64
	.globl xp_urec_tmpl, xp_urec_tmpl_end, xp_urec_entry, xp_urec_entry_noret, xp_urec_ret
	.globl xp_urec_p_cs, xp_urec_p_cpu, xp_urec_p_nbufs, xp_urec_p_base, xp_urec_p_sig
	.globl xp_urec_start, xp_urec_post, xp_urec_abort, xp_urec_desc
	.globl xp_urec_saved, xp_urec_stored, xp_urec_done
	.globl xp_urec_p_cs2, xp_urec_p_cpu2, xp_urec_p_nbufs2, xp_urec_p_base2, xp_urec_p_sig2
	.globl xp_urec_p_sums, xp_urec_fstart, xp_urec_fpost, xp_urec_fabort, xp_urec_desc2
	.globl xp_urec_sums_gate, xp_urec_plain
	.globl xp_urec_ftail, xp_urec_fnoentry, xp_urec_fbottom, xp_urec_fnested
	.globl xp_urec_p_stamp, xp_urec_p_stamp_nr, xp_urec_p_stamp_ret, xp_urec_p_tcache
	.globl xp_urec_p_cs3, xp_urec_p_tcache2, xp_urec_done_di
	.globl xp_urec_di_ask, xp_urec_di_ask_end, xp_urec_di_miss, xp_urec_di_miss_end
xp_urec_tmpl:
.Ltmpl:
xp_urec_ret:
	SAVE
	STAMPED xp_urec_p_stamp_ret, .Lask_ret
/*
 * The sums' gate: without sums, urec.c writes a jmp to xp_urec_plain over
 * the first 5 of the 7 bytes of CPU_BUFFER's lea (the rest become int3s;
 * nothing jumps behind the gate, and the section it starts is then never
 * entered, so its abort never comes back here). With sums it is that lea:
 * no instruction of its own (a 5-byte nop until 2026-12-06).
 */
xp_urec_sums_gate:
xp_urec_fagain:
	CPU_BUFFER .Ldesc2, xp_urec_p_cs2, xp_urec_fstart, xp_urec_p_cpu2, xp_urec_p_nbufs2, \
		   xp_urec_p_base2, .Lplain
/* lea rel32(%rip), %rax (7 bytes); mov %rax, %fs:imm32 (9) */
.if xp_urec_p_cs2 - xp_urec_sums_gate != 7 + 9
.error "the sums' gate needs the 7-byte lea CPU_BUFFER starts with"
.endif
	movzwl	(%r11), %ecx		/* the count, 8n: records at (%r11,%rcx,2), */
					/* states at (%r11,%rcx) */
	cmpl	$(XP_UREC_CAP - 1) * XP_UREC_COUNT_UNIT, %ecx	/* on only for n < CAP - 1: */
	jae	.Lplain			/* a full one, or made to look so, folds nothing; */
					/* n = 0 reads the header's last word */
	movq	XP_UREC_HDR - 8(%r11,%rcx,2), %rsi	/* the newest: this call's entry? */
	subq	%rsp, %rsi
	rolq	$ROL, %rsi		/* the sp's difference above its cookie and flags */
	btrq	$K_TAIL_BIT, %rsi	/* a call or a tail call (CF), at this sp, ... */
	jc	xp_urec_ftail
	cmpq	$XP_USUM_FUNCS, %rsi	/* ... of a function with sums */
	jae	.Lplain			/* else another sp, or not an entry */
	/* rsi: its cookie alone (under XP_USUM_FUNCS: no flags, K_TAIL cleared) */
	movq	XP_UREC_HDR - 24(%r11,%rcx,2), %rax	/* the one before: its caller's entry? */
	subq	%rsp, %rax
	/*
	 * Its sp less this one's above its top ROL bits: signed, above (>
	 * K_LOW), at (0 to K_LOW unsigned), below; its kind in bits 14 to 16
	 * (bits 61 to 63), where it is not below (no borrow).
	 */
	rolq	$ROL, %rax
	testl	$K_NORET | K_RET, %eax
	jnz	xp_urec_fnoentry		/* a return, or an entry whose return writes nothing */
	cmpq	$K_LOW, %rax
	jg	xp_urec_fnested
	jmp	.Lplain			/* not above this one: no nesting */
/*
 * The other cases, inside the critical section too (its start to the
 * commit; selftests/check.sh's host-urec-fold checks that no jump enters
 * either section from outside): a thread preempted here must restart, not
 * go on into the commit with what it read before, maybe into a buffer
 * handed over meanwhile. A tail call's entry: the same tests as above,
 * its caller at its sp.
 */
xp_urec_ftail:
	cmpq	$XP_USUM_FUNCS, %rsi
	jae	.Lplain
	movq	XP_UREC_HDR - 24(%r11,%rcx,2), %rax
	subq	%rsp, %rax
	rolq	$ROL, %rax
	testl	$K_NORET | K_RET, %eax
	jnz	.Lplain
	cmpq	$K_LOW, %rax
	jbe	xp_urec_fnested		/* a tail call's caller is at its sp */
	jmp	.Lplain
/*
 * After a return record: a call at its sp (the same caller's next call,
 * mostly) has for caller the frame on top once that return is taken, which
 * no record names. Its time goes beside the return (into A after the
 * return's state), which the hand-over sends after the return as a bottom
 * charge at the return's sp: the consumer drops the frames there as the
 * call's entry would (a tail call's caller, whose callee that return was),
 * and the time goes to the frame on top. At another sp, the entry would
 * drop other frames, or none: not summed; nor is a tail call, whose caller
 * is in no record. The word before the first record (the header's last,
 * XP_UREC_BELOW) reads as a return too: with one record, the bottom's rule.
 */
xp_urec_fnoentry:
	cmpl	$XP_UREC_COUNT_UNIT, %ecx
	je	xp_urec_fbottom		/* its entry is the only record */
	testl	$K_NORET | K_TAIL, %eax	/* a return (K_RET alone: one of the two is set) */
	jnz	.Lplain			/* an entry whose return writes nothing, or none of ours */
	cmpq	$K_LOW, %rax
	jbe	xp_urec_fnested		/* at the return's sp */
	jmp	.Lplain
/*
 * The bottom: its caller's entry went with a hand-over, or is no traced
 * function's. Its time goes to A before the first record, the callees'
 * of the frame below the buffer, which the hand-over sends as a bottom
 * charge at the sp of the first such call since it (bsp), before the
 * records. A call above bsp appends its return: a longjmp may have left
 * the frames between the two, which its entry, handed over, would have
 * dropped. bsp is stored before the commit: a restart reads it equal to
 * its sp and decides the same; a hand-over before the commit sends the
 * entry after the charge at bsp, whose drop is the entry's own, and clears
 * it all; stored after, the thread could set a bsp of the last hand-over
 * into the next one. Stored for a call that then appends its return (2^32
 * cycles or more), it is that call's sp: the charge, sent before its
 * entry, drops what the entry drops. A tail call's caller is in no record:
 * not summed.
 */
xp_urec_fbottom:
	movq	XP_UREC_BSP(%r11), %rax	/* (done with the caller's word) */
	testq	%rax, %rax
	cmovzq	%rsp, %rax		/* the first since the hand-over: here */
	cmpq	%rsp, %rax
	jb	.Lplain			/* above the first */
	movq	%rax, XP_UREC_BSP(%r11)	/* on into the nested path */
/*
 * The call's cycles from the two halves of now and of its entry's time:
 * a high half of 0 after the borrow is a call of less than 2^32 cycles
 * (a second or more at today's clock rates), whose cycles are then eax,
 * zero-extended into rax; anything else (longer, or a clock that went
 * backwards) is too long to sum, and appends its return.
 */
xp_urec_fnested:
	rdtsc
	subl	XP_UREC_HDR - 16(%r11,%rcx,2), %eax	/* the call's cycles */
	sbbl	XP_UREC_HDR - 12(%r11,%rcx,2), %edx
	jnz	.Lplain			/* backwards, or 2^32 or more: too long to sum */
	movq	XP_UREC_ACC - 8(%r11,%rcx), %rdx	/* the state at its entry */
	/*
	 * Its callees' cycles: A now less A then, each of them a call that
	 * returned inside this one, so no more than its cycles unless the
	 * process wrote its buffer; then its own figures are wrong, which it
	 * could make them by writing its sums too: not clamped. The commit's
	 * A at its entry plus its cycles, with the cycles shifted into place
	 * and back (five registers, none more to save).
	 */
	movq	(%r11), %rcx
	subq	%rdx, %rcx
	shrq	$XP_UREC_COUNT_BITS, %rcx
	shlq	$XP_UREC_COUNT_BITS, %rax
	addq	%rax, %rdx		/* the state at its entry, the call added to A */
	movq	%rdx, (%r11)		/* the commit: the entry is gone */
xp_urec_fpost:
	shrq	$XP_UREC_COUNT_BITS, %rax	/* its cycles again (under 2^32) */
	imull	$XP_USUM_SIZE, %esi, %esi	/* by its cookie */
	movabsq	$0x7fffffffffffff00, %rdx	/* the sums */
xp_urec_p_sums:
	addq	%rsi, %rdx
	lock addq	%rax, XP_USUM_WALL(%rdx)	/* (the calls: the histogram's sum) */
	/*
	 * rseq_cs 0: out of the section for good (left set, each return to
	 * user mode after a switch would read and check its descriptor, and
	 * trace -f of a leaf has its thread sleep with it set). Then its ns's
	 * log2 bucket, by the tables of its cycles' top bit (a zero leaves
	 * bsr's destination as it was, as the kernel's fls64() has it; the
	 * compare's carry outlives the movzbl).
	 */
	xorl	%esi, %esi
	movq	%rsi, %fs:0x7fffff00	/* rseq->rseq_cs */
xp_urec_p_cs3:
	bsrq	%rax, %rsi
	cmpq	XP_UREC_TH(%r11,%rsi,8), %rax
	movzbl	XP_UREC_BK(%r11,%rsi), %esi
	sbbl	$-1, %esi		/* + 1 at or past the threshold */
	lock incq	XP_USUM_HIST(%rdx,%rsi,XP_USUM_BUCKET)
	subq	%rcx, %rax		/* its own cycles */
	lock addq	%rax, XP_USUM_OWN(%rdx)
	RESTORE_RET			/* (a jmp to xp_urec_done until 2026-12-07) */
.Lplain:				/* a return record */
xp_urec_plain:
	movq	%rsp, %rsi		/* where the return address was */
	btsq	$63, %rsi
	jmp	xp_urec_append

xp_urec_entry_noret:			/* a hook without returns */
	SAVE
	ENTRY_WORD
	btsq	$61, %rsi
	STAMPED xp_urec_p_stamp_nr, .Lask_noret
	jmp	xp_urec_append

/*
 * From xp_urec_entry to xp_urec_stored, the window uunwind.c knows: all
 * of the entry routine's way to its thunk's store lies between the two.
 */
xp_urec_entry:
	SAVE
xp_urec_saved:				/* uunwind.c: the registers are below sp */
	ENTRY_WORD
	STAMPED xp_urec_p_stamp, .Lask_entry
.Lstamped:
	movq	8(%rsp), %rdx		/* the return address */
	movabsq	$0x7fffffffffffff00, %rcx	/* the thunk cache */
xp_urec_p_tcache:
	leaq	.Ltmpl + XP_URT_HASH(%rip), %r11
	movl	(%rcx,%rax,4), %ecx	/* the entry this hook's last call found, */
	andl	$XP_URT_TCACHE_MASK, %ecx	/* one of the hash's, whatever the process wrote */
	cmpq	(%r11,%rcx), %rdx
	je	3f			/* the same return address as then */
	movabsq	$GOLDEN_RATIO_64, %rcx	/* the kernel's hash_64() */
	imulq	%rdx, %rcx
	shrq	$(64 - XP_URT_HASH_BITS), %rcx
	shlq	$4, %rcx		/* the first probe's offset */
	cmpq	(%r11,%rcx), %rdx
	je	2f
	movl	$XP_URT_PROBES - 1, %eax
1:	cmpq	$0, (%r11,%rcx)
	je	4f			/* an empty entry: the end of its run */
	addq	$16, %rcx
	cmpq	(%r11,%rcx), %rdx
	je	5f
	decl	%eax
	jnz	1b
	cmpq	$0, (%r11,%rcx)
	je	4f
	/*
	 * Its run looks full, which no ask can change: unless this address
	 * went in meanwhile (another thread's ask, between one entry's key
	 * read for the compare and read again for the empty test). Keys only
	 * ever go from 0 to theirs while the block lives: a second look at
	 * the eight sees every key the first one read as 0.
	 */
	subq	$(XP_URT_PROBES - 1) * 16, %rcx
	movl	$XP_URT_PROBES, %eax
6:	cmpq	(%r11,%rcx), %rdx
	je	5f
	addq	$16, %rcx
	decl	%eax
	jnz	6b
	jmp	.Lnothunk
4:	movq	%rdi, -0x30(%rsp)
xp_urec_di_miss:
	leaq	8(%rsp), %rdi
	movl	$XPROBES_UREC_NR, %eax	/* a miss: the kernel makes the thunk, puts it at (%rdi), */
					/* and sets rsi's tail bit if rdx is a thunk of ours */
	syscall
	movq	-0x30(%rsp), %rdi
xp_urec_di_miss_end:
	cmpq	8(%rsp), %rdx
	jne	xp_urec_append
	btrq	$62, %rsi		/* no thunk: an entry that says so is never a tail call's */
	jmp	.Lnothunk
.Lask_entry:				/* inside the window: on its way to the store */
	ASK_STAMP .Lrestamped, xp_urec_di_ask, xp_urec_di_ask_end
.Lrestamped:				/* the system call took eax */
	movq	%rsi, %rax
	shrq	$XP_UREC_SP_BITS, %rax
	andl	$XP_UREC_COOKIE_MASK, %eax	/* (a stack above 2^47 carries into it) */
	jmp	.Lstamped
/*
 * Off the common path, still inside the window (a thread stopped past
 * the store here goes to xp_urec_done as before it: its stack's scan
 * takes the thunk back). The entry's thunk had XP_URT_TAILBIT: its key is
 * a thunk of ours (a tail call), or it is a return address the block has
 * no thunk for (XP_URT_NEGBIT, urec.h), which stays where it is.
 */
.Lflagged:
	btrq	$XP_URT_NEGBIT, %rcx
	jc	.Lnothunk
	movq	%rcx, 8(%rsp)
	btsq	$62, %rsi		/* XPROBES_UREC_TAIL: the caller's return is a thunk already */
	jmp	xp_urec_append
.Lnothunk:
	btsq	$61, %rsi		/* this call's return writes nothing */
	jmp	xp_urec_append
5:	movq	%rsi, %rax
	shrq	$XP_UREC_SP_BITS, %rax	/* the cookie again, from the entry word */
	andl	$XP_UREC_COOKIE_MASK, %eax
2:	movabsq	$0x7fffffffffffff00, %rdx	/* found in the hash: the hook's cache */
xp_urec_p_tcache2:
	movl	%ecx, (%rdx,%rax,4)
3:	movq	8(%r11,%rcx), %rcx
	btrq	$XP_URT_TAILBIT, %rcx	/* a tail call, or no thunk */
	jc	.Lflagged
	movq	%rcx, 8(%rsp)
xp_urec_stored:				/* uunwind.c: the thunk is in the slot */
xp_urec_append:
xp_urec_again:
	CPU_BUFFER .Ldesc, xp_urec_p_cs, xp_urec_start, xp_urec_p_cpu, xp_urec_p_nbufs, \
		   xp_urec_p_base, xp_urec_done	/* no rseq (cpu_id is -1): no record */
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	(%r11), %rcx		/* the state */
	movzwl	%cx, %edx		/* 8n */
	/*
	 * Room for one more: 8n at most 8 (CAP - 1), and no count the
	 * process wrote (not a multiple of 8) writes past its buffer.
	 */
	cmpl	$(XP_UREC_CAP - 1) * XP_UREC_COUNT_UNIT + 1, %edx
	jae	xp_urec_full
	movq	%rcx, XP_UREC_ACC(%r11,%rdx)	/* beside the record: A at its append */
	movq	%rax, XP_UREC_HDR(%r11,%rdx,2)
	movq	%rsi, XP_UREC_HDR + 8(%r11,%rdx,2)
	addq	$XP_UREC_COUNT_UNIT, %rcx
	movq	%rcx, (%r11)		/* the commit */
xp_urec_post:
xp_urec_done:				/* (rdi: each way here has put it back) */
	RESTORE_RET
	.long	0x53053053		/* the process's rseq signature */
xp_urec_p_sig:
xp_urec_abort:
	jmp	xp_urec_again
	.long	0x53053053
xp_urec_p_sig2:
xp_urec_fabort:
	jmp	xp_urec_fagain
/*
 * rdi 0: the kernel flushes this CPU's records and takes this one (rdi 1
 * back); where it cannot (a child of fork: nobody flushes its buffers),
 * the record is given up, not tried again (until 2026-12-07 the routine
 * tried once more, to find the buffer as full).
 */
xp_urec_full:
	movq	%rdi, -0x30(%rsp)
	movl	$0, %edi
	movl	$XPROBES_UREC_NR, %eax
	syscall
	movq	-0x30(%rsp), %rdi
	jmp	xp_urec_done
/*
 * For uunwind.c's detach_window(): a thread it stops inside the entry's
 * window where the routine keeps rdi at -0x30(%rsp) (around a system
 * call) goes here; from anywhere else in the window, to xp_urec_done.
 */
xp_urec_done_di:
	movq	-0x30(%rsp), %rdi
	jmp	xp_urec_done
.Lask_noret:
	ASK_STAMP xp_urec_append, .Ldi_nr, .Ldi_nr_end
.Lask_ret:
	ASK_STAMP xp_urec_sums_gate, .Ldi_ret, .Ldi_ret_end
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
