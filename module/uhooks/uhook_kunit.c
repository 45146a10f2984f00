// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: uhook.c (included at its end under XPROBES_KUNIT). Which kernels
 * user hooks trust to leave the original instruction alone once the uprobe
 * handler moved the ip (xp_uprobes_skip_on_ip_change()): the releases that
 * carry the fix and none before it. No selftest can show an unfixed kernel:
 * Debian 12's 6.1 and 6.12 both have it.
 *
 * The ids: four billion adds go round past U32_MAX, where the ids must skip
 * those still live, and a dump must end after the last. No selftest makes
 * that many hooks; here the search starts just below the top.
 */
#include <kunit/test.h>

static void uprobes_ip_change_gate(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 1, 158)));
	KUNIT_EXPECT_TRUE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 1, 159)));
	KUNIT_EXPECT_TRUE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 1, 255)));
	KUNIT_EXPECT_FALSE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 12, 57)));
	KUNIT_EXPECT_TRUE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 12, 58)));
	KUNIT_EXPECT_FALSE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 6, 200)));
	KUNIT_EXPECT_FALSE(test, xp_uprobes_skip_on_ip_change(KERNEL_VERSION(6, 0, 200)));
	/* the kernel this module runs on: Debian 12's pass */
	KUNIT_EXPECT_TRUE(test, xp_uprobes_skip_on_ip_change(LINUX_VERSION_CODE));
}

static void uhook_ids_go_round(struct kunit *test)
{
	static const u32 want[] = { 1, U32_MAX - 1, U32_MAX, 2, 3 };
	static const int order[] = { 0, 4, 1, 2 };	/* by id, h[3] not live */
	struct xp_uhook *h[ARRAY_SIZE(want)], *got;
	unsigned long id;
	u32 saved;
	int i, n;

	for (i = 0; i < ARRAY_SIZE(h); i++) {
		h[i] = kunit_kzalloc(test, sizeof(*h[i]), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, h[i]);
		h[i]->state = XP_UH_LIVE;
	}
	mutex_lock(&xp_views_lock);
	if (!xa_empty(&uhook_ids)) {	/* loaded with no hook: no assert, the lock is held */
		mutex_unlock(&xp_views_lock);
		KUNIT_FAIL(test, "user hooks exist while the module loads");
		return;
	}
	saved = next_id;
	next_id = 0;
	KUNIT_EXPECT_EQ(test, uhook_id_take(h[0]), 0);
	next_id = U32_MAX - 1;		/* four billion adds later, h[0] still live */
	for (i = 1; i < ARRAY_SIZE(h); i++)
		KUNIT_EXPECT_EQ(test, uhook_id_take(h[i]), 0);
	for (i = 0; i < ARRAY_SIZE(h); i++)
		KUNIT_EXPECT_EQ(test, h[i]->id, want[i]);
	for (i = 0; i < ARRAY_SIZE(h); i++)
		KUNIT_EXPECT_PTR_EQ(test, (struct xp_uhook *)xa_load(&uhook_ids, want[i]), h[i]);

	/* the dump: each live hook once, by id, then the end (after U32_MAX's too) */
	h[3]->state = XP_UH_DELETING;
	id = 1;
	for (n = 0; n < 10 && (got = xp_uhook_next(&id)); n++)
		if (n < ARRAY_SIZE(order))
			KUNIT_EXPECT_PTR_EQ(test, got, h[order[n]]);
	KUNIT_EXPECT_EQ(test, n, 4);
	KUNIT_EXPECT_EQ(test, id, (unsigned long)U32_MAX + 1);
	KUNIT_EXPECT_NULL(test, xp_uhook_next(&id));	/* the dump's next call */

	for (i = 0; i < ARRAY_SIZE(h); i++)
		xa_erase(&uhook_ids, h[i]->id);
	next_id = saved;
	mutex_unlock(&xp_views_lock);
}

static struct kunit_case uhook_cases[] = {
	KUNIT_CASE(uprobes_ip_change_gate),
	KUNIT_CASE(uhook_ids_go_round),
	{}
};

static struct kunit_suite uhook_suite = {
	.name = "xprobes_uhook",
	.test_cases = uhook_cases,
};

kunit_test_suites(&uhook_suite);
