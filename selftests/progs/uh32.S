/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uh32, uhx32: processes that are not x86-64 ones, for the user hooks'
 * refusals (selftest 46). Built twice from this file, without libc: as an
 * i386 program (-m32: 0x40-0x4f are inc/dec there, not REX prefixes) and as
 * an x32 one (-mx32: x86-64 code, 32-bit pointers, an ELF32 file). Each
 * calls uh32_fn in a loop, forever, and makes no system call (x32's are off
 * by default on Debian's kernels).
 */
	.text
	.globl	_start
	.type	_start, @function
_start:
	call	uh32_fn
	jmp	_start
	.size	_start, . - _start

	.globl	uh32_fn
	.type	uh32_fn, @function
uh32_fn:
#ifdef __x86_64__
	push	%rbp
	mov	%rsp, %rbp
	inc	%eax
	add	$7, %eax
	pop	%rbp
#else
	push	%ebp
	mov	%esp, %ebp
	inc	%eax		/* 0x40: a REX prefix to an x86-64 decoder, */
	add	$7, %eax	/* which reads one 4-byte add here */
	pop	%ebp
#endif
	ret
	.size	uh32_fn, . - uh32_fn
	.section .note.GNU-stack, "", @progbits
