// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: insn.c, the decoder hooks are placed with (a separate object,
 * built only for the debug kernel: make kunit, XPROBES_KUNIT=1). Lengths and
 * kinds on hand-made instructions, the RIP-relative layout, and every
 * instruction of schedule() against kprobes' own decoder.
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

/* ---- instruction decoding: what a hook may displace and how ---------------- */

struct insn_case {
	const char *name;
	u8 bytes[XP_INSN_MAX];
	int max;		/* bytes available */
	int len;		/* expected length, 0: undecodable */
	enum xp_insn_kind kind;
	s64 rel;
};

static const struct insn_case insn_cases[] = {
	{ "push %rbp",		{ 0x55 }, 15, 1, XP_INSN_SLOT },
	{ "mov %rsp,%rbp",	{ 0x48, 0x89, 0xe5 }, 15, 3, XP_INSN_SLOT },
	{ "nopl 0(%rax,%rax)",	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 15, 5, XP_INSN_SLOT },
	{ "mov imm64",		{ 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 15, 10, XP_INSN_SLOT },
	{ "rip-relative load",	{ 0x48, 0x8b, 0x05, 0x44, 0x33, 0x22, 0x11 }, 15, 7, XP_INSN_SLOT },
	{ "call rel32",		{ 0xe8, 0x10, 0x00, 0x00, 0x00 }, 15, 5, XP_INSN_CALL, 0x10 },
	{ "jmp rel8 back",	{ 0xeb, 0xfe }, 15, 2, XP_INSN_JMP, -2 },
	{ "jmp rel32",		{ 0xe9, 0x00, 0x01, 0x00, 0x00 }, 15, 5, XP_INSN_JMP, 0x100 },
	{ "je rel32",		{ 0x0f, 0x84, 0x20, 0x00, 0x00, 0x00 }, 15, 6, XP_INSN_JCC, 0x20 },
	{ "jne rel8",		{ 0x75, 0x80 }, 15, 2, XP_INSN_JCC, -128 },
	{ "ret",		{ 0xc3 }, 15, 1, XP_INSN_RET },
	{ "int3",		{ 0xcc }, 15, 1, XP_INSN_REFUSE },
	{ "ud2",		{ 0x0f, 0x0b }, 15, 2, XP_INSN_REFUSE },
	{ "endbr64",		{ 0xf3, 0x0f, 0x1e, 0xfa }, 15, 4, XP_INSN_REFUSE },
	{ "indirect call",	{ 0xff, 0xd0 }, 15, 2, XP_INSN_REFUSE },
	{ "cli",		{ 0xfa }, 15, 1, XP_INSN_REFUSE },
	{ "truncated call",	{ 0xe8, 0x10 }, 2, 0 },
	{ "prefix only",	{ 0x48 }, 1, 0 },
};

static void insn_decode_cases(struct kunit *test)
{
	const struct insn_case *c;

	for (c = insn_cases; c < insn_cases + ARRAY_SIZE(insn_cases); c++) {
		struct xp_insn insn;
		int err = xp_insn_decode(&insn, c->bytes, c->max);

		if (!c->len) {
			KUNIT_EXPECT_NE_MSG(test, err, 0, "%s decoded", c->name);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, insn.len, c->len, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, insn.kind, c->kind, "%s", c->name);
		if (c->kind == XP_INSN_CALL || c->kind == XP_INSN_JMP || c->kind == XP_INSN_JCC)
			KUNIT_EXPECT_EQ_MSG(test, insn.rel, c->rel, "%s", c->name);
	}
}

static void insn_rip_relative_layout(struct kunit *test)
{
	static const u8 b[] = { 0x48, 0x8b, 0x05, 0x44, 0x33, 0x22, 0x11 };
	struct xp_insn insn;

	KUNIT_ASSERT_EQ(test, xp_insn_decode(&insn, b, sizeof(b)), 0);
	KUNIT_EXPECT_TRUE(test, insn.rip_rel);
	KUNIT_EXPECT_TRUE(test, insn.rex_w);
	KUNIT_EXPECT_EQ(test, insn.disp_off, 3);
	KUNIT_EXPECT_EQ(test, insn.disp_len, 4);
}

/* Every instruction of a real function decodes to kprobes' own lengths. */
static void insn_agrees_with_kprobes(struct kunit *test)
{
	unsigned long start, size, a;
	int n = 0, checked = 0;

	start = xp_sym_lookup("schedule", &size);
	KUNIT_ASSERT_NE(test, start, 0UL);
	for (a = start; a < start + size && n < 64; n++) {
		struct xp_kp_answer kp;
		struct xp_insn insn;

		KUNIT_ASSERT_EQ(test, xp_insn_decode(&insn, xp_text(a), XP_INSN_MAX), 0);
		xp_kprobe_ask(&a, &kp, 1);
		/* kprobes moves probes off the ENDBR and onto ftrace for the fentry site */
		if (!kp.err && kp.size && !(kp.flags & KPROBE_FLAG_FTRACE)) {
			KUNIT_EXPECT_EQ_MSG(test, insn.len, kp.size, "schedule+%#lx", a - start);
			checked++;
		}
		a += insn.len;
	}
	KUNIT_EXPECT_GT(test, checked, 4);
}

static struct kunit_case insn_cases_list[] = {
	KUNIT_CASE(insn_decode_cases),
	KUNIT_CASE(insn_rip_relative_layout),
	KUNIT_CASE(insn_agrees_with_kprobes),
	{}
};

static struct kunit_suite insn_suite = {
	.name = "xprobes_insn",
	.test_cases = insn_cases_list,
};

kunit_test_suites(&insn_suite);
