/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host harnesses of the records routines (module/uhooks/
 * urec_tmpl.S, run by urec-lookup.c and urec-fold.c) share: the block's
 * offsets and the process's constants, and the registers a routine must
 * give back as it found them: every one but rax, which the hook's stub or
 * the return thunk keeps, and rsp. Each harness's call saves the host's
 * callee-saved registers (UREG_PUSH_KEPT, UREG_POP_KEPT), loads the others
 * from ureg_in[] before the routine and stores them to ureg_out[] after
 * it (UREG_EACH(UREG_LOAD), UREG_EACH(UREG_STORE) in its assembly).
 */
#ifndef _XPROBES_UREC_HOST_H
#define _XPROBES_UREC_HOST_H

#include <stdint.h>

extern const unsigned char xp_urec_tmpl[];
#define OFF(sym)	((size_t)((sym) - xp_urec_tmpl))
#define SIG_X86		0x53053053u	/* glibc's RSEQ_SIG */
#define STAMP		0x5a17c0deu	/* the process's, as the kernel would write it */

#define UREG_PUSH_KEPT							\
	"	pushq	%rbx\n	pushq	%rbp\n	pushq	%r12\n"		\
	"	pushq	%r13\n	pushq	%r14\n	pushq	%r15\n"
#define UREG_POP_KEPT							\
	"	popq	%r15\n	popq	%r14\n	popq	%r13\n"		\
	"	popq	%r12\n	popq	%rbp\n	popq	%rbx\n"

#define UREG_N	14
#define UREG_EACH(op)							\
	op(rbx, 0) op(rcx, 8) op(rdx, 16) op(rsi, 24) op(rdi, 32)	\
	op(rbp, 40) op(r8, 48) op(r9, 56) op(r10, 64) op(r11, 72)	\
	op(r12, 80) op(r13, 88) op(r14, 96) op(r15, 104)
#define UREG_LOAD(r, o)		"	movq	ureg_in+" #o "(%rip), %" #r "\n"
#define UREG_STORE(r, o)	"	movq	%" #r ", ureg_out+" #o "(%rip)\n"

uint64_t ureg_in[UREG_N], ureg_out[UREG_N];

static const char *const ureg_name[UREG_N] = {
	"rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11",
	"r12", "r13", "r14", "r15"
};

/* The first register not given back, or NULL. */
static inline const char *ureg_lost(void)
{
	int i;

	for (i = 0; i < UREG_N; i++)
		if (ureg_out[i] != ureg_in[i])
			return ureg_name[i];
	return NULL;
}

#endif /* _XPROBES_UREC_HOST_H */
