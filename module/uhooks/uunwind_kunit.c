// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: uunwind.c (included at its end under XPROBES_KUNIT). A detach's
 * stack words: a thunk's address becomes its target, through the thunks
 * of tail calls; so does one with bit 63 over it (XP_URT_TAILBIT: a
 * thread stopped by a signal between its load of a tail call's hash entry
 * and its btr, the word in its sigframe's rcx), keeping the bit for the
 * btr; any other word stays.
 */
#include <kunit/test.h>

static void uunwind_detach_words(struct kunit *test)
{
	const unsigned long tail = BIT_ULL(XP_URT_TAILBIT), base = 0x7f0000001000UL;
	const unsigned long ret = 0x401001;	/* odd: any byte may follow a call */
	struct xp_unwind_map *m = xp_unwind_map_new((struct mm_struct *)test, 1);

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->range[0].base = base;
	m->range[0].n = 2;
	m->range[0].tgt = m->tgt;
	m->tgt[0] = ret;
	m->tgt[1] = base;		/* a tail call's: it returns into thunk 0 */
	m->nranges = 1;

	KUNIT_EXPECT_EQ(test, detach_word(m, base), ret);
	KUNIT_EXPECT_EQ(test, detach_word(m, base + XP_URT_SIZE), ret);
	KUNIT_EXPECT_EQ(test, detach_word(m, base | tail), ret | tail);
	KUNIT_EXPECT_EQ(test, detach_word(m, (base + XP_URT_SIZE) | tail), ret | tail);
	KUNIT_EXPECT_EQ(test, detach_word(m, ret), 0ul);
	KUNIT_EXPECT_EQ(test, detach_word(m, ret | tail), 0ul);
	KUNIT_EXPECT_EQ(test, detach_word(m, base + 1), 0ul);
	KUNIT_EXPECT_EQ(test, detach_word(m, base + 2 * XP_URT_SIZE), 0ul);	/* not given out */
	map_put(m);
}

static struct kunit_case uunwind_cases[] = {
	KUNIT_CASE(uunwind_detach_words),
	{}
};

static struct kunit_suite uunwind_suite = {
	.name = "xprobes_uunwind",
	.test_cases = uunwind_cases,
};

kunit_test_suites(&uunwind_suite);
