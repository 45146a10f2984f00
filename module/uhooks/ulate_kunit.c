// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for ulate.c, included at the end of ulate.c when the module
 * is built with its suites (make kunit): what a handler's failed access
 * asks for, on the hit path and from the late work.
 */
#include <kunit/test.h>

/* From the work: the failure is handed back to its loop, nothing queued. */
static void ulate_ask_late(struct kunit *test)
{
	struct xp_ulate l = { .late = true };
	unsigned long busy = bitmap_weight(ulate_busy, XP_ULATE_N);

	KUNIT_EXPECT_TRUE(test, xp_ulate_ask(&l, XP_ULATE_HIJACK, 0x7000, 8, true));
	KUNIT_EXPECT_EQ(test, l.kind, XP_ULATE_HIJACK);
	KUNIT_EXPECT_EQ(test, l.addr, 0x7000UL);
	KUNIT_EXPECT_EQ(test, l.len, 8);
	KUNIT_EXPECT_TRUE(test, l.write);
	KUNIT_EXPECT_EQ(test, bitmap_weight(ulate_busy, XP_ULATE_N), busy);
}

/* The work's last try: the caller counts the event lost. */
static void ulate_ask_last(struct kunit *test)
{
	struct xp_ulate l = { .late = true, .last = true };

	KUNIT_EXPECT_FALSE(test, xp_ulate_ask(&l, XP_ULATE_ENTRY, 0x7000, 32, false));
	KUNIT_EXPECT_EQ(test, l.kind, 0);
}

/* A kernel thread never runs a stub: no work is taken for it. */
static void ulate_ask_kthread(struct kunit *test)
{
	struct xp_ulate l = {};
	unsigned long busy = bitmap_weight(ulate_busy, XP_ULATE_N);

	KUNIT_EXPECT_FALSE(test, xp_ulate_ask(&l, XP_ULATE_RET, 0x7000, 24, false));
	KUNIT_EXPECT_EQ(test, bitmap_weight(ulate_busy, XP_ULATE_N), busy);
}

/*
 * A process gets its share and no more, another process still gets works,
 * and what is let go is free again. The processes are two addresses: only
 * compared.
 */
static void ulate_claim_share(struct kunit *test)
{
	static char one, two;
	struct mm_struct *a = (struct mm_struct *)&one, *b = (struct mm_struct *)&two;
	struct ulate_work *got[XP_ULATE_PER_MM + 2] = {};
	unsigned long busy = bitmap_weight(ulate_busy, XP_ULATE_N);
	unsigned int i;

	for (i = 0; i < XP_ULATE_PER_MM; i++) {
		got[i] = ulate_claim(a);
		KUNIT_EXPECT_NOT_NULL(test, got[i]);
		if (got[i])
			KUNIT_EXPECT_PTR_EQ(test, got[i]->mm, a);
	}
	got[i] = ulate_claim(a);
	KUNIT_EXPECT_NULL(test, got[i]);
	got[i + 1] = ulate_claim(b);
	KUNIT_EXPECT_NOT_NULL(test, got[i + 1]);
	KUNIT_EXPECT_EQ(test, bitmap_weight(ulate_busy, XP_ULATE_N), busy + XP_ULATE_PER_MM + 1);
	for (i = 0; i < ARRAY_SIZE(got); i++)
		if (got[i])
			ulate_unclaim(got[i]);
	KUNIT_EXPECT_EQ(test, bitmap_weight(ulate_busy, XP_ULATE_N), busy);
}

static struct kunit_case ulate_cases[] = {
	KUNIT_CASE(ulate_ask_late),
	KUNIT_CASE(ulate_ask_last),
	KUNIT_CASE(ulate_ask_kthread),
	KUNIT_CASE(ulate_claim_share),
	{}
};

static struct kunit_suite ulate_suite = {
	.name = "xprobes_ulate",
	.test_cases = ulate_cases,
};

kunit_test_suites(&ulate_suite);
