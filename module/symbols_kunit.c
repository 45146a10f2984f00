// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: kernel.c's core-text bounds and symbols.c's lookups (a separate
 * object, built only for the debug kernel: make kunit).
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

static void addr_core_text_bounds(struct kunit *test)
{
	unsigned long s = xp_k.stext, e = xp_k.etext;

	KUNIT_EXPECT_TRUE(test, xp_is_core_text(s, 1));
	KUNIT_EXPECT_TRUE(test, xp_is_core_text(e - 1, 1));
	KUNIT_EXPECT_TRUE(test, xp_is_core_text(s, e - s));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text(s - 1, 1));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text(e, 1));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text(e - 1, 2));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text(s, e - s + 1));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text(ULONG_MAX - 1, 4));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text(s + 16, ULONG_MAX));
	/* Module text and data are not core text. */
	KUNIT_EXPECT_FALSE(test, xp_is_core_text((unsigned long)addr_core_text_bounds, 1));
	KUNIT_EXPECT_FALSE(test, xp_is_core_text((unsigned long)&xp_k, 1));
	/* The shared bytes of the image are reachable through the direct map. */
	KUNIT_EXPECT_EQ(test, memcmp(xp_text(s), (void *)s, 64), 0);
}

static void addr_symbols(struct kunit *test)
{
	unsigned long start, size, off;
	char name[KSYM_NAME_LEN];

	start = xp_sym_lookup("schedule", &size);
	KUNIT_ASSERT_NE(test, start, 0UL);
	KUNIT_EXPECT_TRUE(test, xp_is_core_text(start, size));
	KUNIT_EXPECT_TRUE(test, xp_sym_at(start + 5, "schedule", &off, &size));
	KUNIT_EXPECT_EQ(test, off, 5UL);
	KUNIT_EXPECT_FALSE(test, xp_sym_at(start + 5, "do_exit", &off, &size));
	KUNIT_EXPECT_EQ(test, xp_sym_name(start + 1, name, sizeof(name), &off), 0);
	KUNIT_EXPECT_STREQ(test, name, "schedule");
	KUNIT_EXPECT_EQ(test, xp_sym_lookup("xprobes_no_such_function", &size), 0UL);
	KUNIT_EXPECT_EQ(test, xp_sym_lookup("", &size), 0UL);
	/* The body starts after the ENDBR and the fentry site. */
	off = xp_func_body(start) - start;
	KUNIT_EXPECT_GE(test, off, (unsigned long)(is_endbr(*(u32 *)xp_text(start)) ? 4 : 0));
	KUNIT_EXPECT_LT(test, off, 16UL);
}

static struct kunit_case addr_cases[] = {
	KUNIT_CASE(addr_core_text_bounds),
	KUNIT_CASE(addr_symbols),
	{}
};

static struct kunit_suite addr_suite = {
	.name = "xprobes_addr",
	.test_cases = addr_cases,
};

kunit_test_suites(&addr_suite);
