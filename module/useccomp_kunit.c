// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: useccomp.c's passes (included at its end under XPROBES_KUNIT).
 * A thread whose seal work is done gets one pass, which its restarted
 * call takes, once; any other thread's look finds none. No selftest can
 * make another process fill the table while a child installs its filter
 * (the reason passes are not a fixed table): the structure is checked
 * here.
 */
#include <kunit/test.h>

static void useccomp_pass_once(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, take_pass());
	give_pass();
	give_pass();		/* one per thread: the second replaces the first */
	KUNIT_EXPECT_EQ(test, atomic_read(&npasses), 1);
	KUNIT_EXPECT_TRUE(test, take_pass());
	KUNIT_EXPECT_FALSE(test, take_pass());
	KUNIT_EXPECT_EQ(test, atomic_read(&npasses), 0);
}

static void useccomp_pass_not_anothers(struct kunit *test)
{
	struct pass *p = kzalloc(sizeof(*p), GFP_KERNEL);
	unsigned long flags;

	KUNIT_ASSERT_NOT_NULL(test, p);
	/* this thread's pointer with another start: a task that reused it */
	p->task = current;
	p->start = current->start_time + 1;
	p->at = jiffies - 2 * HZ;	/* and left there for 2 s */
	raw_spin_lock_irqsave(&passes_lock, flags);
	hash_add(passes, &p->node, (unsigned long)current);
	atomic_inc(&npasses);
	raw_spin_unlock_irqrestore(&passes_lock, flags);
	KUNIT_EXPECT_FALSE(test, take_pass());
	KUNIT_EXPECT_EQ(test, atomic_read(&npasses), 1);
	give_pass();		/* drops it (this task's pointer, and old), adds ours */
	KUNIT_EXPECT_EQ(test, atomic_read(&npasses), 1);
	KUNIT_EXPECT_TRUE(test, take_pass());
	KUNIT_EXPECT_EQ(test, atomic_read(&npasses), 0);
	rcu_barrier();		/* take_pass()'s kfree_rcu() */
}

static struct kunit_case useccomp_cases[] = {
	KUNIT_CASE(useccomp_pass_once),
	KUNIT_CASE(useccomp_pass_not_anothers),
	{}
};

static struct kunit_suite useccomp_suite = {
	.name = "xprobes_useccomp",
	.test_cases = useccomp_cases,
};

kunit_test_suites(&useccomp_suite);
