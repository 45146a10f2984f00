// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what a kernel hook's bytes may meet (a separate object, built only
 * for the debug kernel: make kunit). jump.c: which kprobes would run into a
 * live jump; hook.c: no other entry point inside a call hook's jump.
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
 * Which kprobes would run into a live jump (jump.c): its int3 on a call
 * hook's first byte; for a jump over several instructions, its int3 on any
 * covered byte, or up to 4 bytes before the jump, where an optimized
 * probe's detour, which runs what starts in its first 5 bytes, comes back
 * inside the covered bytes (issue 35; before, only probes on covered
 * instructions were looked for).
 */
static void jump_kprobe_reach(struct kunit *test)
{
	struct xp_hook h = { .addr = 0x1000, .cover = 7, .ninsn = 3 };

	KUNIT_EXPECT_FALSE(test, xp_kprobe_reaches(&h, 0x1000 - 5));
	KUNIT_EXPECT_TRUE(test, xp_kprobe_reaches(&h, 0x1000 - 4));
	KUNIT_EXPECT_TRUE(test, xp_kprobe_reaches(&h, 0x1000 - 1));
	KUNIT_EXPECT_TRUE(test, xp_kprobe_reaches(&h, 0x1000));
	KUNIT_EXPECT_TRUE(test, xp_kprobe_reaches(&h, 0x1000 + 6));
	KUNIT_EXPECT_FALSE(test, xp_kprobe_reaches(&h, 0x1000 + 7));
	h.cover = 6;
	h.ninsn = 1;	/* a call hook: its instruction's start is the only boundary */
	KUNIT_EXPECT_TRUE(test, xp_kprobe_reaches(&h, 0x1000));
	KUNIT_EXPECT_FALSE(test, xp_kprobe_reaches(&h, 0x1000 - 1));
	KUNIT_EXPECT_FALSE(test, xp_kprobe_reaches(&h, 0x1000 - 4));
	KUNIT_EXPECT_FALSE(test, xp_kprobe_reaches(&h, 0x1000 + 6));
}

/*
 * A call hook may not have another entry point inside the bytes its jump
 * writes: srso_untrain_ret's 10-byte movabs holds srso_safe_ret, which is
 * called on its own (issue 35). The instruction is refused as a call (the
 * thunk as a whole is refused earlier, dispatch.c), a plain instruction of
 * schedule() is not.
 */
static void hook_entry_inside(struct kunit *test)
{
	unsigned long a = xp_sym_lookup("srso_untrain_ret", NULL);
	unsigned long s = xp_sym_lookup("srso_safe_ret", NULL);
	unsigned long start, size, off;
	struct xp_hook h = {};
	const char *why;

	if (!a || !s || s <= a || s >= a + XP_JUMP_SIZE)
		kunit_skip(test, "no srso_safe_ret inside srso_untrain_ret's first 5 bytes here");
	h.addr = a;
	KUNIT_ASSERT_EQ(test, xp_insn_decode(&h.insn, xp_text(a), XP_INSN_MAX), 0);
	KUNIT_EXPECT_GE(test, h.insn.len, XP_JUMP_SIZE);
	h.cover = h.insn.len;
	h.ninsn = 1;
	why = xp_entry_inside(&h);
	KUNIT_ASSERT_NOT_NULL(test, why);
	kunit_info(test, "srso_untrain_ret: %s", why);
	KUNIT_EXPECT_TRUE(test, strstr(why, "a symbol starts inside") ||
			  strstr(why, "runs past the end of its symbol"));

	start = xp_sym_lookup("schedule", &size);
	KUNIT_ASSERT_NE(test, start, 0UL);
	for (off = xp_func_body(start) - start; off < 64; off += h.insn.len) {
		KUNIT_ASSERT_EQ(test, xp_insn_decode(&h.insn, xp_text(start + off), XP_INSN_MAX), 0);
		if (h.insn.len >= XP_JUMP_SIZE)
			break;
	}
	KUNIT_ASSERT_LT(test, off, 64UL);
	h.addr = start + off;
	h.cover = h.insn.len;
	KUNIT_EXPECT_NULL(test, xp_entry_inside(&h));
}

static struct kunit_case hook_cases_list[] = {
	KUNIT_CASE(jump_kprobe_reach),
	KUNIT_CASE(hook_entry_inside),
	{}
};

static struct kunit_suite hook_suite = {
	.name = "xprobes_hook",
	.test_cases = hook_cases_list,
};

kunit_test_suites(&hook_suite);
