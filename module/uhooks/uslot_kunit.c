// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: uslot.c (included at its end under XPROBES_KUNIT). A user hook's
 * trampoline as built from the cover that cover.c decides for a user
 * function (its small leaves and tail calls too). Buffers only, no process.
 */
#include <kunit/test.h>

/*
 * The small functions user code is full of (Redis: connGetPrivateData(),
 * raxSize(), getCommand()): a leaf `mov; ret` and a tail call `jmp f`,
 * 5 bytes each. A user hook covers them, ret and first branch included; the
 * kernel's rule does not. A ret with more covered bytes behind it (padding,
 * the next function) never, nor a jcc first (the stub before it clobbers
 * the flags).
 */
static void cover_user_small(struct kunit *test)
{
	/* mov 0x18(%rdi),%rax; ret */
	static const u8 leaf[] = { 0x48, 0x8b, 0x47, 0x18, 0xc3 };
	/* jmp -0x4e5 */
	static const u8 tail[] = { 0xe9, 0x1b, 0xfb, 0xff, 0xff };
	/* ret; 4 bytes of padding, as the symbol's size says */
	static const u8 ret_pad[] = { 0xc3, 0x66, 0x90, 0x66, 0x90 };
	/* jne rel32: flags read before the stub's would be */
	static const u8 jcc_first[] = { 0x0f, 0x85, 0x10, 0x00, 0x00, 0x00 };
	const unsigned long site = 0x555555554700UL, slot = 0x555540000000UL;
	u8 out[XP_USLOT_MAX], starts[XP_COVER_INSNS];
	struct xp_cover_tables t;
	struct xp_cover c;
	const char *why;
	int len;

	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(leaf, site, sizeof(leaf), 0, &c, &t), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 5U);
	KUNIT_EXPECT_EQ(test, c.ninsn, 2U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(leaf, site, sizeof(leaf), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(tail, site, sizeof(tail), 0, &c, &t), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 5U);
	KUNIT_EXPECT_EQ(test, c.ninsn, 1U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(tail, site, sizeof(tail), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(ret_pad, site, sizeof(ret_pad), 0, &c, &t),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(jcc_first, site, sizeof(jcc_first), 0, &c, &t),
			-EINVAL);

	/* The leaf's trampoline: the mov as it was, the ret, the (dead) jump back. */
	len = xp_uslot_build(leaf, sizeof(leaf), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 5 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, memcmp(out, leaf, 5), 0);
	KUNIT_EXPECT_EQ(test, out[5], 0xe9);
	/* The tail call's: a jmp rel32 from the trampoline to the same target. */
	len = xp_uslot_build(tail, sizeof(tail), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 5 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, out[0], 0xe9);
	KUNIT_EXPECT_EQ(test, slot + 5 + (s32)get_unaligned_le32(out + 1),
			site + 5 + (s32)get_unaligned_le32(tail + 1));
	/* A ret that is not the last covered instruction is refused here too. */
	len = xp_uslot_build(ret_pad, sizeof(ret_pad), site, slot, out, sizeof(out), starts, &why);
	KUNIT_EXPECT_LT(test, len, 0);
}

/*
 * A user hook's trampoline (uslot.c): covered instructions rebuilt for
 * where the trampoline runs, the jump back behind them; a call spelt out
 * with the original return address; a jcc widened; out of reach refused.
 */
static void uslot_rebuilds(struct kunit *test)
{
	/* push %rbx; mov %rdi,%rbx; lock incq 0x2a24(%rip) */
	static const u8 add[] = { 0x53, 0x48, 0x89, 0xfb, 0xf0, 0x48, 0xff, 0x05,
				  0x24, 0x2a, 0x00, 0x00 };
	/* sub $8,%rsp; call +9 */
	static const u8 call[] = { 0x48, 0x83, 0xec, 0x08, 0xe8, 0x09, 0x00, 0x00, 0x00 };
	/* xor %eax,%eax; test %eax,%eax; je -4 (a jcc as the last one) */
	static const u8 jcc[] = { 0x31, 0xc0, 0x85, 0xc0, 0x74, 0xfa };
	const unsigned long site = 0x555555554700UL, slot = 0x555540000000UL;
	u8 out[XP_USLOT_MAX], starts[XP_COVER_INSNS];
	const char *why;
	s32 disp;
	int len;

	len = xp_uslot_build(add, sizeof(add), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, (int)sizeof(add) + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, memcmp(out, add, 8), 0);
	disp = (s32)get_unaligned_le32(out + 8);
	/* the same target: site + 12 + 0x2a24 */
	KUNIT_EXPECT_EQ(test, slot + 12 + disp, site + 12 + 0x2a24);
	KUNIT_EXPECT_EQ(test, starts[0], 0);
	KUNIT_EXPECT_EQ(test, starts[1], 1);
	KUNIT_EXPECT_EQ(test, starts[2], 4);
	KUNIT_EXPECT_EQ(test, out[12], 0xe9);
	KUNIT_EXPECT_EQ(test, slot + 17 + (s32)get_unaligned_le32(out + 13), site + 12);

	/* The call: lea -8(%rsp),%rsp; movl lo,(%rsp); movl hi,4(%rsp); jmp target */
	len = xp_uslot_build(call, sizeof(call), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_GT_MSG(test, len, 0, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, memcmp(out, call, 4), 0);
	KUNIT_EXPECT_EQ(test, out[4], 0x48);
	KUNIT_EXPECT_EQ(test, out[5], 0x8d);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(out + 12), (u32)(site + 9));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(out + 20), (u32)((site + 9) >> 32));
	KUNIT_EXPECT_EQ(test, out[24], 0xe9);
	KUNIT_EXPECT_EQ(test, slot + 29 + (s32)get_unaligned_le32(out + 25), site + 9 + 9);
	KUNIT_EXPECT_EQ(test, out[29], 0xe9);	/* the jump back, never reached */

	/* The jcc becomes 0f 84 rel32 to the same target, then the jump back. */
	len = xp_uslot_build(jcc, sizeof(jcc), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 4 + 6 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, out[4], 0x0f);
	KUNIT_EXPECT_EQ(test, out[5], 0x84);
	KUNIT_EXPECT_EQ(test, slot + 10 + (s32)get_unaligned_le32(out + 6), site + 6 - 6);

	/* A RIP-relative operand 4 GiB away cannot be reached. */
	len = xp_uslot_build(add, sizeof(add), site, site + (4UL << 30), out, sizeof(out),
			     starts, &why);
	KUNIT_EXPECT_LT(test, len, 0);
	KUNIT_EXPECT_NOT_NULL(test, why);
}

/*
 * A function that is one jump through a pointer (Redis's
 * RM_MonotonicMicroseconds(): `jmp *getMonotonicUs(%rip)`; PLT-like stubs
 * and C++ thunks): a user hook covers the jmp, the last covered
 * instruction, and its trampoline runs it with the displacement moved so
 * that it reads the same pointer. Through a register, the stack or TLS
 * too. Not with more covered bytes behind it (a trap then runs it alone),
 * not under the kernel's rule (which refuses any indirect jump in the
 * function before it looks at the cover), and no other
 * indirect branch (a call through memory would push the trampoline's
 * address), nor one with a prefix that changes it (66: a 16-bit target;
 * LOCK: #UD; 67: a 32-bit RIP-relative address).
 */
static void uslot_jmp_indirect(struct kunit *test)
{
	/* jmp *0x15c35a(%rip); cs nopw 0x0(%rax,%rax,1) */
	static const u8 ptr[] = { 0xff, 0x25, 0x5a, 0xc3, 0x15, 0x00, 0x66, 0x2e, 0x0f, 0x1f,
				  0x84, 0x00, 0x00, 0x00, 0x00, 0x00 };
	/* mov %rdi,%rax; mov %rsi,%rdi; notrack jmp *%rax */
	static const u8 reg[] = { 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x3e, 0xff, 0xe0 };
	/* jmp *%rax; push %rbx; mov %rdi,%rbx: more covered behind the jmp */
	static const u8 more[] = { 0xff, 0xe0, 0x53, 0x48, 0x89, 0xfb, 0xc3 };
	/* call *0x10(%rip); ret */
	static const u8 call[] = { 0xff, 0x15, 0x10, 0x00, 0x00, 0x00, 0xc3 };
	/* 66 jmp *0x10(%rip); lock jmp *0x10(%rip); addr32 jmp *0x10(%eip) */
	static const u8 jmp16[] = { 0x66, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00 };
	static const u8 locked[] = { 0xf0, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00 };
	static const u8 eip[] = { 0x67, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00 };
	/* rex.W jmp *0x10(%rip): the displacement after the REX byte */
	static const u8 rexw[] = { 0x48, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00 };
	/* jmp *0x100(%rsp); jmp *%fs:0x28 */
	static const u8 stack[] = { 0xff, 0xa4, 0x24, 0x00, 0x01, 0x00, 0x00 };
	static const u8 tls[] = { 0x64, 0xff, 0x24, 0x25, 0x28, 0x00, 0x00, 0x00 };
	const unsigned long site = 0x555555554700UL, slot = 0x555540000000UL;
	u8 out[XP_USLOT_MAX], starts[XP_COVER_INSNS];
	struct xp_cover_tables t;
	struct xp_cover c;
	const char *why;
	int len;

	KUNIT_ASSERT_EQ(test, xp_cover_decide_user(ptr, site, sizeof(ptr), 0, &c, &t), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 6U);
	KUNIT_EXPECT_EQ(test, c.ninsn, 1U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(ptr, site, sizeof(ptr), 0, NULL, &c), -EINVAL);
	len = xp_uslot_build(ptr, 6, site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 6 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, out[0], 0xff);
	KUNIT_EXPECT_EQ(test, out[1], 0x25);
	/* the same pointer: site + 6 + 0x15c35a */
	KUNIT_EXPECT_EQ(test, slot + 6 + (s32)get_unaligned_le32(out + 2), site + 6 + 0x15c35a);
	/* out of the trampoline's reach: refused, not a wrong pointer */
	len = xp_uslot_build(ptr, 6, site, site + (4UL << 30), out, sizeof(out), starts, &why);
	KUNIT_EXPECT_LT(test, len, 0);

	KUNIT_ASSERT_EQ(test, xp_cover_decide_user(reg, site, sizeof(reg), 3, &c, &t), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 6U);
	KUNIT_EXPECT_EQ(test, t.reg_jumps, 1U);	/* the caller checks its tables */
	len = xp_uslot_build(reg + 3, 6, site + 3, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 6 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, memcmp(out, reg + 3, 6), 0);

	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(more, site, sizeof(more), 0, &c, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(call, site, sizeof(call), 0, &c, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(jmp16, site, sizeof(jmp16), 0, &c, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(locked, site, sizeof(locked), 0, &c, &t),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(eip, site, sizeof(eip), 0, &c, &t), -EINVAL);
	KUNIT_ASSERT_EQ(test, xp_cover_decide_user(rexw, site, sizeof(rexw), 0, &c, &t), 0);
	len = xp_uslot_build(rexw, sizeof(rexw), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 7 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, slot + 7 + (s32)get_unaligned_le32(out + 3), site + 7 + 0x10);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(stack, site, sizeof(stack), 0, &c, &t), 0);
	len = xp_uslot_build(stack, sizeof(stack), site, slot, out, sizeof(out), starts, &why);
	KUNIT_ASSERT_EQ_MSG(test, len, 7 + 5, "%s", why ?: "");
	KUNIT_EXPECT_EQ(test, memcmp(out, stack, sizeof(stack)), 0);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(tls, site, sizeof(tls), 0, &c, &t), 0);
	/* A trap runs the first instruction alone where no jump could go. */
	KUNIT_ASSERT_EQ(test, xp_cover_decide_trap(more, sizeof(more), 0, &c), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 2U);
	len = xp_uslot_build(more, 5, site, slot, out, sizeof(out), starts, &why);
	KUNIT_EXPECT_LT(test, len, 0);
	len = xp_uslot_build(call, 6, site, slot, out, sizeof(out), starts, &why);
	KUNIT_EXPECT_LT(test, len, 0);
}

static struct kunit_case uslot_cases[] = {
	KUNIT_CASE(cover_user_small),
	KUNIT_CASE(uslot_rebuilds),
	KUNIT_CASE(uslot_jmp_indirect),
	{}
};

static struct kunit_suite uslot_suite = {
	.name = "xprobes_uslot",
	.test_cases = uslot_cases,
};

kunit_test_suites(&uslot_suite);
