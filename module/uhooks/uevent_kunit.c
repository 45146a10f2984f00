// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for uevent.c's return thunks, included at the end of uevent.c
 * (for its static functions) when the module is built with its suites
 * (make kunit). A block is built as xp_urets_init() would, but its table in
 * pages of its own and no process: uret_get() and xp_urets_forget() touch
 * nothing else.
 */
#include <kunit/test.h>

/* A hook with returns in @area (both too large for KUnit's stack). */
static struct xp_uhook *uret_hook_new(struct kunit *test, struct xp_uarea *area)
{
	struct xp_uhook *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	h->returns = true;
	h->area = area;
	return h;
}

static struct xp_uret *uret_block_new(struct kunit *test)
{
	struct xp_uret *b = kvzalloc(sizeof(*b), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, b);
	raw_spin_lock_init(&b->lock);
	for (i = 0; i < URET_TABLE_PAGES; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, b->pages[i]);
	}
	return b;
}

static void uret_block_free(struct xp_uret *b)
{
	unsigned int i;

	for (i = 0; i < URET_TABLE_PAGES; i++)
		if (b->pages[i])
			__free_page(b->pages[i]);
	kvfree(b);
}

/*
 * A hook's event that looked it up before it was unpublished reaches
 * uret_get() after xp_urets_forget(): no entry may name the hook then (it
 * is freed after that event's grace period, and a thunk's return would
 * count in freed memory). Two hooks share the block; the other one's
 * entries stay, and a new one still gets its thunk.
 */
static void uret_forgotten_hook(struct kunit *test)
{
	struct xp_uarea *area = kunit_kzalloc(test, sizeof(*area), GFP_KERNEL);
	struct xp_uhook *h, *other;
	struct xp_uret *b;
	unsigned int i;
	u64 *table;

	KUNIT_ASSERT_NOT_NULL(test, area);
	h = uret_hook_new(test, area);
	other = uret_hook_new(test, area);
	b = uret_block_new(test);
	area->uret = b;
	KUNIT_EXPECT_EQ(test, uret_get(b, h, 0x1000), 0);
	KUNIT_EXPECT_EQ(test, uret_get(b, other, 0x1000), 1);
	KUNIT_EXPECT_EQ(test, uret_get(b, h, 0x1000), 0);	/* found, not added again */
	table = page_address(b->pages[0]);
	KUNIT_EXPECT_EQ(test, table[0], 0x1000ull);

	xp_urets_forget(h);
	KUNIT_EXPECT_PTR_EQ(test, rcu_access_pointer(b->ent[0].hook), (struct xp_uhook *)NULL);
	KUNIT_EXPECT_PTR_EQ(test, rcu_access_pointer(b->ent[1].hook), other);
	/* the late event: a new return address, and the one it had */
	KUNIT_EXPECT_EQ(test, uret_get(b, h, 0x2000), -1);
	KUNIT_EXPECT_EQ(test, uret_get(b, h, 0x1000), -1);
	for (i = 0; i < b->used; i++)
		KUNIT_EXPECT_PTR_NE(test, rcu_access_pointer(b->ent[i].hook), h);
	KUNIT_EXPECT_EQ(test, uret_get(b, other, 0x2000), 2);
	uret_block_free(b);
}

/* A full block gives no thunk, and says so (-1), for a new address only. */
static void uret_full_block(struct kunit *test)
{
	struct xp_uarea *area = kunit_kzalloc(test, sizeof(*area), GFP_KERNEL);
	struct xp_uhook *h;
	struct xp_uret *b;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, area);
	h = uret_hook_new(test, area);
	b = uret_block_new(test);
	area->uret = b;
	for (i = 0; i < XP_URET_N; i++)
		KUNIT_ASSERT_EQ(test, uret_get(b, h, 0x1000 + i), (int)i);
	KUNIT_EXPECT_EQ(test, uret_get(b, h, 0x1000 + XP_URET_N), -1);
	KUNIT_EXPECT_EQ(test, uret_get(b, h, 0x1000 + 7), 7);
	uret_block_free(b);
}

static struct kunit_case uret_cases[] = {
	KUNIT_CASE(uret_forgotten_hook),
	KUNIT_CASE(uret_full_block),
	{}
};

static struct kunit_suite uret_suite = {
	.name = "xprobes_uret",
	.test_cases = uret_cases,
};

kunit_test_suites(&uret_suite);
