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
	INIT_HLIST_NODE(&a->mnode);
	INIT_HLIST_NODE(&b->mnode);

	mutex_lock(&xp_views_lock);
	xp_ucover_publish(a);
	xp_ucover_publish(b);		/* at the head: a reader meets b first */
	KUNIT_EXPECT_PTR_EQ(test, b->cnode.next, &a->cnode);
	xp_ucover_unpublish(b);
	/* a reader standing on b goes on to a */
	KUNIT_EXPECT_PTR_EQ(test, b->cnode.next, &a->cnode);
	KUNIT_EXPECT_PTR_EQ(test, b->fnode.next, &a->fnode);
	KUNIT_EXPECT_PTR_EQ(test, b->mnode.next, &a->mnode);
	KUNIT_EXPECT_FALSE(test, hash_hashed(&b->cnode));
	KUNIT_EXPECT_FALSE(test, hash_hashed(&b->mnode));
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

/*
 * The covers are hashed by the granule their site starts in: one that
 * starts just before a granule's end must be found from the bytes it
 * covers in the next, by the sigreturn fixup (strictly inside) and by an
 * add's overlap check (any byte in common), and only from those.
 */
static void ucover_found_across_granules(struct kunit *test)
{
	const unsigned long g = 1UL << COVER_GRANULE_SHIFT, site = 5 * g - 3;
	struct xp_uhook *h, *far;
	struct xp_uarea *area;
	struct mm_struct *mm;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	far = kunit_kzalloc(test, sizeof(*far), GFP_KERNEL);
	area = kunit_kzalloc(test, sizeof(*area), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, h && far && area);
	mm = (struct mm_struct *)area;
	h->mm = far->mm = mm;
	h->up.inode = far->up.inode = (struct inode *)area;
	h->area = far->area = area;
	h->addr = site;
	h->cover = 8;		/* [5g - 3, 5g + 5) */
	far->addr = 9 * g;	/* another granule's */
	far->cover = XP_COVER_MAX;
	INIT_HLIST_NODE(&h->cnode);
	INIT_HLIST_NODE(&h->fnode);
	INIT_HLIST_NODE(&h->mnode);
	INIT_HLIST_NODE(&far->cnode);
	INIT_HLIST_NODE(&far->fnode);
	INIT_HLIST_NODE(&far->mnode);

	mutex_lock(&xp_views_lock);
	xp_ucover_publish(h);
	xp_ucover_publish(far);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, inside(mm, 5 * g + 2), h);	/* the next granule */
	KUNIT_EXPECT_PTR_EQ(test, inside(mm, 5 * g - 2), h);
	KUNIT_EXPECT_NULL(test, inside(mm, site));		/* the entry itself */
	KUNIT_EXPECT_NULL(test, inside(mm, 5 * g + 5));		/* past the end */
	KUNIT_EXPECT_PTR_EQ(test, inside(mm, 9 * g + XP_COVER_MAX - 1), far);
	KUNIT_EXPECT_NULL(test, inside((struct mm_struct *)h, 5 * g + 2));	/* another mm */
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, xp_ucover_overlaps(mm, 5 * g + 4, 5 * g + 20));
	KUNIT_EXPECT_FALSE(test, xp_ucover_overlaps(mm, 5 * g + 5, 5 * g + 20));
	KUNIT_EXPECT_TRUE(test, xp_ucover_overlaps(mm, 5 * g - 10, 5 * g - 2));
	KUNIT_EXPECT_FALSE(test, xp_ucover_overlaps(mm, 5 * g - 10, 5 * g - 3));
	KUNIT_EXPECT_TRUE(test, xp_ucover_overlaps(mm, 9 * g - 1, 9 * g + 1));
	KUNIT_EXPECT_FALSE(test, xp_ucover_overlaps(mm, 8 * g, 9 * g));
	WRITE_ONCE(h->out, true);	/* its bytes are back: an add may go there */
	KUNIT_EXPECT_FALSE(test, xp_ucover_overlaps(mm, 5 * g, 5 * g + 1));
	xp_ucover_unpublish(h);
	xp_ucover_unpublish(far);
	mutex_unlock(&xp_views_lock);
	synchronize_rcu();
}

static struct kunit_case ucover_cases[] = {
	KUNIT_CASE(ucover_unpublish_keeps_chain),
	KUNIT_CASE(ucover_found_across_granules),
	{}
};

static struct kunit_suite ucover_suite = {
	.name = "xprobes_ucover",
	.test_cases = ucover_cases,
};

kunit_test_suites(&ucover_suite);
