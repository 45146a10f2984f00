// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: tracepoint.c (included at its end under XPROBES_KUNIT). What the
 * selftests cannot see from outside: every site found for a tracepoint is
 * one of the jump table's entries for its key, a NOP or the jump it becomes
 * with the target the table gives; the jump written in a copy is the
 * kernel's own encoding (JMP8 for a 2-byte site, JMP32 for a 5-byte one,
 * landing on the target); the lookup by address finds each site's every
 * byte and nothing between them.
 */
#include <kunit/test.h>

static void sites_match_jump_table(struct kunit *test)
{
	struct tp_lookup l = { .name = "signal_generate" };
	struct xp_tp *x;
	const struct jump_entry *e;
	unsigned int i, n = 0;
	const char *why;

	if (xp_tp_missing)
		kunit_skip(test, "%s", xp_tp_missing);
	for_each_kernel_tracepoint(match_tp, &l);
	KUNIT_ASSERT_NOT_NULL(test, l.tp);
	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	x->tp = l.tp;
	mutex_lock(xp_tps_mutex);	/* as new_tp() calls it */
	why = find_sites(x);
	mutex_unlock(xp_tps_mutex);
	KUNIT_ASSERT_NULL(test, why);
	KUNIT_EXPECT_GT(test, x->nr_sites, 0U);
	for (e = xp_jt_start; e < xp_jt_stop; e++)
		if (jump_entry_key(e) == &l.tp->key && !jump_entry_is_init(e) &&
		    xp_is_core_text(jump_entry_code(e), JMP32_INSN_SIZE))
			n++;
	KUNIT_EXPECT_EQ(test, x->nr_sites, n);
	for (i = 0; i < x->nr_sites; i++) {
		const struct xp_tp_site *s = &x->sites[i];
		u8 jmp[JMP32_INSN_SIZE];
		s32 rel;

		if (i)
			KUNIT_EXPECT_LT(test, x->sites[i - 1].addr, s->addr);
		KUNIT_EXPECT_TRUE(test, s->len == 2 || s->len == 5);
		site_bytes(s, true, jmp);
		if (s->len == 2) {
			KUNIT_EXPECT_EQ(test, jmp[0], JMP8_INSN_OPCODE);
			rel = (s8)jmp[1];
		} else {
			KUNIT_EXPECT_EQ(test, jmp[0], JMP32_INSN_OPCODE);
			memcpy(&rel, jmp + 1, sizeof(rel));
		}
		KUNIT_EXPECT_EQ(test, s->addr + s->len + rel, s->target);
		KUNIT_EXPECT_PTR_EQ(test, site_at(x, s->addr), s);
		KUNIT_EXPECT_PTR_EQ(test, site_at(x, s->addr + s->len - 1), s);
		KUNIT_EXPECT_TRUE(test, !site_at(x, s->addr - 1) || site_at(x, s->addr - 1) != s);
	}
	kfree(x->sites);
}

static struct kunit_case tp_cases[] = {
	KUNIT_CASE(sites_match_jump_table),
	{}
};

static struct kunit_suite tp_suite = {
	.name = "xprobes_tracepoint",
	.test_cases = tp_cases,
};

kunit_test_suites(&tp_suite);
