// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: cover.c, which instructions a jump may cover, for kernel and user
 * hooks alike (a separate object, built only for the debug kernel: make
 * kunit). Real functions of the running kernel, synthetic ones, a trap's
 * cover, loops whose branches land inside, a user function's indirect jumps.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <net/genetlink.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <asm/ibt.h>
#include <asm/text-patching.h>
#include "xprobes.h"

/*
 * The rules of cover.c on real code of the running kernel. Debian 6.12's
 * trace_reschedule_entry.constprop.0 (the debug build) starts
 *   +0: push %rbp; +1: push %rbx; +2: xchg %ax,%ax; +4: mov $imm32,%rbp
 * and loops back with "jne +0x4" from +0xd4: a jump at +0 would cover +4, a
 * branch target. __x64_sys_getppid's body (push %rbx; call ...) may be
 * covered: the call is the last covered instruction, and nothing lands at it.
 */
static void cover_real_functions(struct kunit *test)
{
	unsigned long start, size, body;
	struct xp_cover c;
	struct xp_insn insn;
	const u8 *p;
	int err;

	start = xp_sym_lookup("trace_reschedule_entry.constprop.0", &size);
	if (!start || !size)
		kunit_skip(test, "trace_reschedule_entry.constprop.0 is not in this kernel");
	p = xp_text(start);
	err = xp_cover_decide(p, start, size, 0, &xp_k.thunks, &c);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_ASSERT_NOT_NULL(test, c.why);
	KUNIT_EXPECT_NOT_NULL(test, strstr(c.why, "lands inside"));
	KUNIT_ASSERT_EQ(test, xp_insn_decode(&insn, p + c.branch_from, XP_INSN_MAX), 0);
	KUNIT_EXPECT_GT(test, (long)(c.branch_from + insn.len + insn.rel), 0L);
	KUNIT_EXPECT_LT(test, (long)(c.branch_from + insn.len + insn.rel), (long)XP_JUMP_SIZE + 6);

	start = xp_sym_lookup("__x64_sys_getppid", &size);
	KUNIT_ASSERT_NE(test, start, 0UL);
	body = xp_func_body(start);
	err = xp_cover_decide(xp_text(start), start, size, body - start, &xp_k.thunks, &c);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_GE(test, c.bytes, (unsigned int)XP_JUMP_SIZE);
	KUNIT_EXPECT_GE(test, c.ninsn, 2U);
}

/* The same rules on code written for the purpose. */
static void cover_synthetic(struct kunit *test)
{
	/* push %rbx; mov %rdi,%rbx; mov %rsi,%rbp; jne -8 (to +1); ret */
	static const u8 loop_in[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0x75, 0xf8, 0xc3 };
	/* push %rbx; jmp *%rax; ret */
	static const u8 indirect[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xff, 0xe0, 0xc3 };
	/* push %rbx; ret; ... */
	static const u8 ret_inside[] = { 0x53, 0xc3, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xc3 };
	/* push %rbx; jmp +3; mov...: a branch before the end of the 5 bytes */
	static const u8 jmp_early[] = { 0x53, 0xeb, 0x03, 0x48, 0x89, 0xfb, 0x90, 0xc3 };
	unsigned long base = 0xffffffff81000000UL;
	struct xp_cover c;

	KUNIT_EXPECT_EQ(test, xp_cover_decide(loop_in, base, sizeof(loop_in), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, c.branch_from, 7U);
	/* Not from +1: the target is then the first byte. */
	KUNIT_EXPECT_EQ(test, xp_cover_decide(loop_in, base, sizeof(loop_in), 1, NULL, &c), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 6U);
	KUNIT_EXPECT_EQ(test, c.ninsn, 2U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(indirect, base, sizeof(indirect), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(c.why, "indirect"));
	KUNIT_EXPECT_EQ(test, xp_cover_decide(ret_inside, base, sizeof(ret_inside), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(jmp_early, base, sizeof(jmp_early), 0, NULL, &c), -EINVAL);
	/* Past the function's end. */
	KUNIT_EXPECT_EQ(test, xp_cover_decide(loop_in, base, 3, 0, NULL, &c), -ERANGE);
}

/*
 * A trap covers what a jump at its site would (a later jump's trampoline
 * comes back there), its first instruction alone only where the bytes
 * rule a jump out. A size that cuts the second instruction short says
 * nothing of the bytes: the trap is refused (-ERANGE), never shrunk to
 * one instruction a later add with the whole function would not match.
 */
static void cover_trap(struct kunit *test)
{
	/* push %rbx; mov %rdi,%rbx; mov %rsi,%rbp; ret */
	static const u8 plain[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xc3 };
	/* push %rbx; then 15 bytes of prefixes, no instruction */
	static const u8 junk[] = { 0x53, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
				   0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66 };
	struct xp_cover c;

	KUNIT_EXPECT_EQ(test, xp_cover_decide_trap(plain, sizeof(plain), 0, &c), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 7U);
	KUNIT_EXPECT_EQ(test, c.ninsn, 3U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_trap(plain, 3, 0, &c), -ERANGE);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_trap(plain, 1, 0, &c), -ERANGE);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_trap(junk, sizeof(junk), 0, &c), 0);
	KUNIT_EXPECT_EQ(test, c.bytes, 1U);
	KUNIT_EXPECT_EQ(test, c.ninsn, 1U);
}

/*
 * loop and jcxz are never displaced (the decoder refuses them), but they
 * branch: one that lands inside the covered bytes rules the jump out like
 * any jcc (issue 35: the cover check used to skip them).
 */
static void cover_loop_targets(struct kunit *test)
{
	/* push %rbx; mov %rdi,%rbx; mov %rsi,%rbp; loop -8 (to +1); ret */
	static const u8 loop_in[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xe2, 0xf8, 0xc3 };
	/* the same with jrcxz */
	static const u8 jcxz_in[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xe3, 0xf8, 0xc3 };
	/* loop -9: to the first byte, which a jump may be entered by */
	static const u8 loop_first[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xe2, 0xf7, 0xc3 };
	unsigned long base = 0xffffffff81000000UL;
	struct xp_cover c;

	KUNIT_EXPECT_EQ(test, xp_cover_decide(loop_in, base, sizeof(loop_in), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, c.branch_from, 7U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(jcxz_in, base, sizeof(jcxz_in), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, c.branch_from, 7U);
	KUNIT_EXPECT_EQ(test, xp_cover_decide(loop_first, base, sizeof(loop_first), 0, NULL, &c), 0);
	KUNIT_EXPECT_EQ(test, xp_branch_into(loop_in, base, sizeof(loop_in), base, base + 7), 7);
	KUNIT_EXPECT_EQ(test, xp_branch_into(loop_in, base, sizeof(loop_in), base + 1, base + 7), -1);
}

/*
 * A user function's indirect jumps: through a register, with the tables it
 * addresses handed to the caller; through memory without an index, a tail
 * call; through a table of absolute addresses, refused.
 */
static void cover_user_jumps(struct kunit *test)
{
	/*
	 * push %rbp; mov %rsp,%rbp; lea 0x100(%rip),%rdx; movslq (%rdx,%rax,4),%rax;
	 * add %rdx,%rax; jmp *%rax
	 */
	static const u8 table[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8d, 0x15, 0x00, 0x01, 0x00, 0x00,
				    0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0 };
	/* push %rbx; mov %rdi,%rbx; pop %rbx; jmp *0x10(%rip) */
	static const u8 tail[] = { 0x53, 0x48, 0x89, 0xfb, 0x5b, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00 };
	/* push %rbx; mov %rdi,%rbx; mov %rsi,%rbp; jmp *0x1000(,%rax,8) */
	static const u8 absolute[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x89, 0xf5, 0xff, 0x24, 0xc5,
				       0x00, 0x10, 0x00, 0x00 };
	unsigned long base = 0x555555554000UL;
	struct xp_cover_tables t;
	struct xp_cover c;

	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(table, base, sizeof(table), 0, &c, &t), 0);
	KUNIT_EXPECT_EQ(test, t.reg_jumps, 1U);
	KUNIT_ASSERT_EQ(test, t.n, 1U);
	KUNIT_EXPECT_EQ(test, t.base[0], base + 11 + 0x100);
	/* The kernel's rule for the same bytes: refused. */
	KUNIT_EXPECT_EQ(test, xp_cover_decide(table, base, sizeof(table), 0, NULL, &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, xp_cover_decide_user(tail, base, sizeof(tail), 0, &c, &t), 0);
	KUNIT_EXPECT_EQ(test, t.reg_jumps, 0U);
	KUNIT_EXPECT_EQ(test, t.n, 0U);
	KUNIT_ASSERT_EQ(test, xp_cover_decide_user(absolute, base, sizeof(absolute), 0, &c, &t),
			-EINVAL);
	KUNIT_ASSERT_NOT_NULL(test, c.why);
	KUNIT_EXPECT_NOT_NULL(test, strstr(c.why, "absolute"));
}

static struct kunit_case cover_cases_list[] = {
	KUNIT_CASE(cover_real_functions),
	KUNIT_CASE(cover_synthetic),
	KUNIT_CASE(cover_trap),
	KUNIT_CASE(cover_loop_targets),
	KUNIT_CASE(cover_user_jumps),
	{}
};

static struct kunit_suite cover_suite = {
	.name = "xprobes_cover",
	.test_cases = cover_cases_list,
};

kunit_test_suites(&cover_suite);
