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

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char xp_urec_tmpl[], xp_urec_tmpl_end[];
extern const unsigned char xp_urec_entry[], xp_urec_entry_noret[], xp_urec_ret[];
extern const unsigned char xp_urec_p_stamp[], xp_urec_p_stamp_nr[], xp_urec_p_stamp_ret[];
extern const unsigned char xp_urec_p_cs[], xp_urec_p_cpu[], xp_urec_p_nbufs[], xp_urec_p_base[];
extern const unsigned char xp_urec_p_sig[], xp_urec_start[], xp_urec_post[], xp_urec_abort[];
extern const unsigned char xp_urec_desc[], xp_urec_desc2[], xp_urec_p_cs2[], xp_urec_p_cs3[];
extern const unsigned char xp_urec_p_cpu2[], xp_urec_p_nbufs2[], xp_urec_p_base2[];
extern const unsigned char xp_urec_p_sums[], xp_urec_p_tcache[], xp_urec_p_tcache2[];
extern const unsigned char xp_urec_p_sig2[], xp_urec_stored[];
extern const unsigned char xp_urec_fstart[], xp_urec_fpost[], xp_urec_fabort[];
#define OFF(sym)	((size_t)((sym) - xp_urec_tmpl))
#define SIG_X86		0x53053053u	/* glibc's RSEQ_SIG */
#define STAMP		0x5a17c0deu	/* the process's, as the kernel would write it */

/*
 * The template copied to @blk and patched as urec.c's build_code() patches
 * it for a process with sums: its rseq areas at @rseq_off from the thread
 * pointer, stamped with STAMP, @nbufs buffers at @bufs, the sums at @sums,
 * the hooks' thunk cache at @tcache, glibc's signature, and the two
 * critical sections' descriptors.
 */
static inline void urec_host_patch(unsigned char *blk, long rseq_off, unsigned char *bufs,
				   long nbufs, unsigned char *sums, void *tcache)
{
	const unsigned char *const stamps[] = { xp_urec_p_stamp, xp_urec_p_stamp_nr,
						xp_urec_p_stamp_ret };
	const unsigned char *const cs[] = { xp_urec_p_cs, xp_urec_p_cs2, xp_urec_p_cs3 };
	uint32_t v32;
	uint64_t v64;
	unsigned int i;

#define URH_PUT32(at, v)	(v32 = (v), memcpy(blk + OFF(at) - 4, &v32, 4))
#define URH_PUT64(at, v)	(v64 = (uint64_t)(v), memcpy(blk + OFF(at) - 8, &v64, 8))
#define URH_DESC(d, start, post, abort) do {					\
		v64 = (uint64_t)(blk + OFF(start));				\
		memcpy(blk + OFF(d) + 8, &v64, 8);				\
		v64 = post - start;						\
		memcpy(blk + OFF(d) + 16, &v64, 8);				\
		v64 = (uint64_t)(blk + OFF(abort));				\
		memcpy(blk + OFF(d) + 24, &v64, 8);				\
	} while (0)
	memcpy(blk, xp_urec_tmpl, xp_urec_tmpl_end - xp_urec_tmpl);
	for (i = 0; i < 3; i++) {	/* cmpl $STAMP, %fs:off + XP_RSEQ_STAMP */
		v32 = rseq_off + XP_RSEQ_STAMP;
		memcpy(blk + OFF(stamps[i]) - 8, &v32, 4);
		URH_PUT32(stamps[i], STAMP);
		URH_PUT32(cs[i], rseq_off + 8);
	}
	URH_PUT32(xp_urec_p_cpu, rseq_off + 4);
	URH_PUT32(xp_urec_p_cpu2, rseq_off + 4);
	URH_PUT32(xp_urec_p_nbufs, nbufs);
	URH_PUT32(xp_urec_p_nbufs2, nbufs);
	URH_PUT64(xp_urec_p_base, bufs);
	URH_PUT64(xp_urec_p_base2, bufs);
	URH_PUT64(xp_urec_p_sums, sums);
	URH_PUT64(xp_urec_p_tcache, tcache);
	URH_PUT64(xp_urec_p_tcache2, tcache);
	URH_PUT32(xp_urec_p_sig, SIG_X86);
	URH_PUT32(xp_urec_p_sig2, SIG_X86);
	URH_DESC(xp_urec_desc, xp_urec_start, xp_urec_post, xp_urec_abort);
	URH_DESC(xp_urec_desc2, xp_urec_fstart, xp_urec_fpost, xp_urec_fabort);
#undef URH_PUT32
#undef URH_PUT64
#undef URH_DESC
	__builtin___clear_cache((char *)blk, (char *)blk + (xp_urec_tmpl_end - xp_urec_tmpl));
}

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

/* The word at @off of @b. */
static inline uint64_t *word(unsigned char *b, size_t off)
{
	return (uint64_t *)(b + off);
}

/* A random number under @n, or any for 0 (random()'s 31 bits thrice). */
static inline uint64_t rnd(uint64_t n)
{
	uint64_t r = ((uint64_t)random() << 33) ^ ((uint64_t)random() << 11) ^ (uint64_t)random();

	return n ? r % n : r;
}

/*
 * Buffer @b's header as the kernel writes it for the return routine: the
 * histogram tables (a bucket b, or b + 1 at or past 3 << (b - 1), for top
 * bit b) and the word before the first record, a return's (XP_UREC_BELOW).
 */
static inline void urec_host_tables(unsigned char *b)
{
	int i;

	for (i = 0; i < XP_USUM_NHIST; i++) {
		b[XP_UREC_BK + i] = i;
		*word(b, XP_UREC_TH + 8 * i) = i ? (3ull << (i - 1)) : ~0ull;
	}
	*word(b, XP_UREC_BELOW) = 1ull << 63;	/* XPROBES_UREC_RET */
}

/* A buffer's records, by its state word (urec.h) */
static inline unsigned int urec_host_count(uint64_t state)
{
	return (state & ((1u << XP_UREC_COUNT_BITS) - 1)) / XP_UREC_COUNT_UNIT;
}

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
