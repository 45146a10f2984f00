/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the module-space allocator returns through (views/modspace.c): a
 * kprobe on each of its ret instructions sends the CPU here instead of
 * running the ret, with the stack as the ret would find it. This follows
 * the kernel's module-space tables in every view (xp_modspace_sync(), in the
 * allocating task's own context: the probe's int3 is an NMI-like context
 * where no lock may be taken), then returns to the allocator's caller with
 * the allocator's result. What a ret leaves live is kept: rax and rdx.
 */
#include <linux/linkage.h>

	.text
SYM_FUNC_START(xp_alloc_exit)
	push	%rax
	push	%rdx
	sub	$8, %rsp		/* 16-byte aligned at the call */
	call	xp_modspace_sync
	add	$8, %rsp
	pop	%rdx
	pop	%rax
	RET
SYM_FUNC_END(xp_alloc_exit)
