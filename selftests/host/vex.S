/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions whose first instruction is VEX- or EVEX-encoded and whose
 * opcode byte is also a one-byte branch's (selftests/host/vex-check.sh):
 * the kernel's uprobes take 0x78 for js and 0x7a for jp.
 */
	.text
	.globl vx_avx2
	.type vx_avx2, @function
vx_avx2:			/* c4 e2 7d 78: VEX vpbroadcastb, opcode 0x78 */
	vpbroadcastb %xmm0, %ymm1
	vmovd %xmm1, %eax
	vzeroupper
	ret
	.size vx_avx2, .-vx_avx2

	.globl vx_evex
	.type vx_evex, @function
vx_evex:			/* 62 e2 7d 28 7a: EVEX vpbroadcastb %edi, opcode 0x7a */
	vpbroadcastb %edi, %ymm17
	vmovd %xmm17, %eax
	ret
	.size vx_evex, .-vx_evex
	.section .note.GNU-stack, "", @progbits
