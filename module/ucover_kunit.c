// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: ucover.c (included at its end under XPROBES_KUNIT). The covers'
 * hashes are read under RCU with no lock (the sigreturn fixup, the guard
 * on uprobe writes, the seccomp seal's look): a reader that stands on a
 * cover while it is taken out must still reach the covers behind it in
 * its bucket, or it misses a live one (an int3 inside a live jump, a
 * filter over live hooks). No selftest can stop a reader there.
 */
#include <kunit/test.h>

static void ucover_unpublish_keeps_chain(struct kunit *test)
{
	struct xp_uhook *a, *b;
	struct xp_uarea *area;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	area = kunit_kzalloc(test, sizeof(*area), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, a && b && area);
	/* one process, one file: both in the same two buckets */
	a->mm = b->mm = (struct mm_struct *)area;
	a->up.inode = b->up.inode = (struct inode *)area;
	a->area = b->area = area;
	INIT_HLIST_NODE(&a->cnode);
	INIT_HLIST_NODE(&a->fnode);
	INIT_HLIST_NODE(&b->cnode);
	INIT_HLIST_NODE(&b->fnode);

	mutex_lock(&xp_views_lock);
	xp_ucover_publish(a);
	xp_ucover_publish(b);		/* at the head: a reader meets b first */
	KUNIT_EXPECT_PTR_EQ(test, b->cnode.next, &a->cnode);
	xp_ucover_unpublish(b);
	/* a reader standing on b goes on to a */
	KUNIT_EXPECT_PTR_EQ(test, b->cnode.next, &a->cnode);
	KUNIT_EXPECT_PTR_EQ(test, b->fnode.next, &a->fnode);
	KUNIT_EXPECT_FALSE(test, hash_hashed(&b->cnode));
	KUNIT_EXPECT_FALSE(test, hash_hashed(&b->fnode));
	xp_ucover_unpublish(b);		/* twice: nothing */
	KUNIT_EXPECT_TRUE(test, hash_hashed(&a->cnode));
	rcu_read_lock();
	KUNIT_EXPECT_TRUE(test, xp_ucover_mm_live(a->mm));
	rcu_read_unlock();
	xp_ucover_unpublish(a);
	rcu_read_lock();
	KUNIT_EXPECT_FALSE(test, xp_ucover_mm_live(a->mm));
	rcu_read_unlock();
	mutex_unlock(&xp_views_lock);
	synchronize_rcu();	/* no reader of the hashes is left on them */
}

static struct kunit_case ucover_cases[] = {
	KUNIT_CASE(ucover_unpublish_keeps_chain),
	{}
};

static struct kunit_suite ucover_suite = {
	.name = "xprobes_ucover",
	.test_cases = ucover_cases,
};

kunit_test_suites(&ucover_suite);
