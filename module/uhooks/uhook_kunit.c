// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: uhook.c (included at its end under XPROBES_KUNIT). Which kernels
 * user hooks trust to leave the original instruction alone once the uprobe
 * handler moved the ip (xp_uprobes_skip_on_ip_change()): the releases that
 * carry the fix and none before it. No selftest can show an unfixed kernel:
 * Debian 12's 6.1 and 6.12 both have it.
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

static struct kunit_case uhook_cases[] = {
	KUNIT_CASE(uprobes_ip_change_gate),
	{}
};

static struct kunit_suite uhook_suite = {
	.name = "xprobes_uhook",
	.test_cases = uhook_cases,
};

kunit_test_suites(&uhook_suite);
