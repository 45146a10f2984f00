// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: urec_fold.c (included at its end under XPROBES_KUNIT). The fold's
 * rules on small hand-overs: nesting, the clock, giving up open entries,
 * the charges of sums and the bottom's.
 * selftests/host/fold-check.c checks it against a replay on random
 * streams, with the process's own sums modelled.
 */
#include <kunit/test.h>

#define UE(c, sp)	((u64)(c) << XPROBES_UREC_SP_BITS | (sp))	/* an entry */
#define UR(sp)		(XPROBES_UREC_RET | (sp))	/* a return */
#define ST(a, n)	((u64)(a) << 16 | (n) * 8)	/* a state: A cycles, n records (urec.h) */

/* Times as they are: a clock at the end of time, one TSC cycle a nanosecond. */
static const struct xp_urec_clock same_clock = { ~0ULL >> 1, ~0ULL >> 1, 1ULL << 32 };

/*
 * The fold turns TSC readings into nanoseconds as it reads: every record,
 * a call's duration from both. A TSC at half speed (mult 1/2), the clock at
 * TSC 200 = 1000 ns; a reading after the clock's is the clock's time.
 */
static void fold_converts(struct kunit *test)
{
	struct xprobes_urec r[] = {
		{ 100, UE(1, 0x100) }, { 140, UR(0x100) }, { 160, UE(2, 0x100) }, { 250, UR(0x200) },
	};
	const struct xp_urec_clock half = { 200, 1000, 1ULL << 31 };

	KUNIT_ASSERT_EQ(test, xp_urec_fold(r, ARRAY_SIZE(r), NULL, 0, r, &half), 3u);
	KUNIT_EXPECT_TRUE(test, XPROBES_UREC_IS_CALL(r[0].what));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(r[0].time), 20ull);	/* 970 - 950 */
	KUNIT_EXPECT_EQ(test, r[1].time, 980ull);
	KUNIT_EXPECT_EQ(test, r[2].time, 1000ull);
}

/* Plain nesting: every call folds, in its entry's place; the rest stays. */
static void fold_nested(struct kunit *test)
{
	struct xprobes_urec r[] = {
		{ 10, UE(1, 0x100) }, { 20, UE(2, 0xf0) }, { 30, UR(0xf0) },
		{ 40, UE(3, 0xf0) }, { 45, UR(0xf0) }, { 60, UR(0x100) }, { 70, UE(4, 0x100) },
	};
	u64 call = XPROBES_UREC_CALL;

	KUNIT_ASSERT_EQ(test, xp_urec_fold(r, ARRAY_SIZE(r), NULL, 0, r, &same_clock), 4u);
	KUNIT_EXPECT_EQ(test, r[0].what, call | XPROBES_UREC_TOP | UE(1, 0x100));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(r[0].time), 50ull);
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_LOG2(r[0].time), 5ull);	/* 32 <= 50 < 64 */
	KUNIT_EXPECT_EQ(test, r[0].time & XPROBES_UREC_CALL_TAIL, 0ull);
	/* callees: not top, their caller's cookie 1 at level 1 */
	KUNIT_EXPECT_EQ(test, r[1].what, call | UE(2, 0xf0));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(r[1].time), 10ull);
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_LOG2(r[1].time), 3ull);
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_CALLER(r[1].time), 1ull);
	KUNIT_EXPECT_EQ(test, r[2].what, call | UE(3, 0xf0));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(r[2].time), 5ull);
	KUNIT_EXPECT_EQ(test, r[3].what, UE(4, 0x100));
	KUNIT_EXPECT_EQ(test, r[3].time, 70ull);
}

/* A return of an earlier batch's call: the open entry stays, its callee becomes top. */
static void fold_unfolds(struct kunit *test)
{
	struct xprobes_urec r[] = {
		{ 0, UE(1, 0x100) }, { 5, UE(2, 0xf0) }, { 8, UR(0xf0) },
		{ 20, UR(0x200) | XPROBES_UREC_NORET }, { 30, UE(3, 0x200) | XPROBES_UREC_TAIL },
	};

	KUNIT_ASSERT_EQ(test, xp_urec_fold(r, ARRAY_SIZE(r), NULL, 0, r, &same_clock), 4u);
	KUNIT_EXPECT_EQ(test, r[0].what, UE(1, 0x100));
	KUNIT_EXPECT_EQ(test, r[1].what, XPROBES_UREC_CALL | XPROBES_UREC_TOP | UE(2, 0xf0));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(r[1].time), 3ull);
	/* a return passed on is a return and nothing else: never a call */
	KUNIT_EXPECT_EQ(test, r[2].what, UR(0x200));
	KUNIT_EXPECT_EQ(test, r[3].what, UE(3, 0x200) | XPROBES_UREC_TAIL);
}

/*
 * Sums (XPROBES_F_SUMS): an entry whose callees the process summed itself
 * is followed by a charge of their time, in nanoseconds, and keeps its
 * frame: its return gives up the open entries, whose folded callees
 * become top. An entry without any folds as before.
 */
static void fold_charges(struct kunit *test)
{
	const struct xprobes_urec in[] = {
		{ 10, UE(1, 0x100) }, { 20, UE(2, 0xf0) }, { 40, UR(0xf0) }, { 50, UE(3, 0xf0) },
		{ 52, UE(4, 0xe0) }, { 55, UR(0xe0) },
	};
	/*
	 * beside each record the state at its append: A grows by what the
	 * process summed while it was the newest (7 under E2, 6 under E3;
	 * 99 before the first, which only a bottom charge would send)
	 */
	const u64 acc[] = { ST(99, 0), ST(99, 1), ST(106, 2), ST(106, 3), ST(112, 4), ST(112, 5) };
	const struct xp_urec_clock half = { 1000, 1000, 1ULL << 31 };
	struct xprobes_urec out[2 * ARRAY_SIZE(in)];

	KUNIT_ASSERT_EQ(test, xp_urec_fold(in, ARRAY_SIZE(in), acc, ST(112, 6), out, &same_clock),
			7u);
	KUNIT_EXPECT_EQ(test, out[0].what, UE(1, 0x100));	/* given up at E2's return */
	KUNIT_EXPECT_EQ(test, out[1].what, UE(2, 0xf0));
	KUNIT_EXPECT_EQ(test, out[2].what, XPROBES_UREC_CHARGE | 0xf0);
	KUNIT_EXPECT_EQ(test, out[2].time, 7ull);
	KUNIT_EXPECT_TRUE(test, XPROBES_UREC_IS_CHARGE(out[2].what));
	KUNIT_EXPECT_FALSE(test, XPROBES_UREC_IS_CALL(out[2].what));
	KUNIT_EXPECT_EQ(test, out[3].what, UR(0xf0));		/* a return, not a call */
	KUNIT_EXPECT_EQ(test, out[4].what, UE(3, 0xf0));
	KUNIT_EXPECT_EQ(test, out[5].what, XPROBES_UREC_CHARGE | 0xf0);
	KUNIT_EXPECT_EQ(test, out[5].time, 6ull);
	/* E4 folds under E3, which stays open with a charge: top (charged to E3's frame) */
	KUNIT_EXPECT_EQ(test, out[6].what, XPROBES_UREC_CALL | XPROBES_UREC_TOP | UE(4, 0xe0));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(out[6].time), 3ull);
	/* the newest record's figure is from the state now (top): here the return's, none */
	/* a charge is a span: the clock's ratio alone (half: 6 cycles, 3 ns) */
	KUNIT_ASSERT_EQ(test, xp_urec_fold(in + 3, 1, acc + 3, ST(112, 4), out, &half), 2u);
	KUNIT_EXPECT_EQ(test, out[0].time, 525ull);		/* 1000 - (1000 - 50) / 2 */
	KUNIT_EXPECT_EQ(test, out[1].what, XPROBES_UREC_CHARGE | 0xf0);
	KUNIT_EXPECT_EQ(test, out[1].time, 3ull);
	/* no call record reads as a charge */
	KUNIT_EXPECT_FALSE(test, XPROBES_UREC_IS_CHARGE(XPROBES_UREC_CALL | XPROBES_UREC_TOP));
	KUNIT_EXPECT_FALSE(test, XPROBES_UREC_IS_CHARGE(XPROBES_UREC_CALL));
}

/*
 * The bottom (XPROBES_F_SUMS): calls the process summed with no caller's
 * entry in the buffer come first, as one bottom charge at the first one's
 * sp, with A of the state while no record is left, else A beside the
 * first record (the hand-over before left it at 0). None without a bsp;
 * the charge clamped as any; a lie's high bits are not an sp.
 */
static void fold_bottom(struct kunit *test)
{
	const struct xprobes_urec in[] = { { 50, UE(3, 0x200) }, { 60, UR(0x200) } };
	const u64 acc[] = { ST(40, 0), ST(40, 1) };
	const struct xp_urec_clock half = { 1000, 1000, 1ULL << 31 };
	const u64 bottom = XPROBES_UREC_CHARGE | XPROBES_UREC_BOTTOM;
	struct xprobes_urec out[2 * ARRAY_SIZE(in) + 1];

	/* none left: slot 0, in ns (half: 15) */
	KUNIT_ASSERT_EQ(test, xp_urec_fold_sums(in, 0, acc, ST(30, 0), 0x1f0, out, &half), 1u);
	KUNIT_EXPECT_EQ(test, out[0].what, bottom | 0x1f0);
	KUNIT_EXPECT_EQ(test, out[0].time, 15ull);
	KUNIT_EXPECT_TRUE(test, XPROBES_UREC_IS_BOTTOM(out[0].what));
	KUNIT_EXPECT_TRUE(test, XPROBES_UREC_IS_CHARGE(out[0].what));
	KUNIT_EXPECT_FALSE(test, XPROBES_UREC_IS_CALL(out[0].what));
	/* records left: A beside the first, then the fold as without a bottom (none after) */
	KUNIT_ASSERT_EQ(test, xp_urec_fold_sums(in, 2, acc, ST(40, 2), 0x1f0, out, &same_clock), 2u);
	KUNIT_EXPECT_EQ(test, out[0].what, bottom | 0x1f0);
	KUNIT_EXPECT_EQ(test, out[0].time, 40ull);
	KUNIT_EXPECT_EQ(test, out[1].what, XPROBES_UREC_CALL | XPROBES_UREC_TOP | UE(3, 0x200));
	KUNIT_EXPECT_EQ(test, XPROBES_UREC_WALL(out[1].time), 10ull);
	/* no bsp: no charge, whatever A says */
	KUNIT_ASSERT_EQ(test, xp_urec_fold_sums(in, 0, acc, ST(30, 0), 0, out, &same_clock), 0u);
	KUNIT_ASSERT_EQ(test, xp_urec_fold_sums(in, 1, acc, ST(49, 1), 0, out, &same_clock), 2u);
	KUNIT_EXPECT_EQ(test, out[0].what, UE(3, 0x200));
	KUNIT_EXPECT_EQ(test, out[1].what, XPROBES_UREC_CHARGE | 0x200);	/* 49 - 40: its callees' */
	KUNIT_EXPECT_EQ(test, out[1].time, 9ull);
	/* a lie: clamped time, an sp of 48 bits, nothing else set */
	KUNIT_ASSERT_EQ(test, xp_urec_fold_sums(in, 0, acc, ~0ULL, ~0ULL, out, &same_clock), 1u);
	KUNIT_EXPECT_EQ(test, out[0].what, bottom | XPROBES_UREC_SP(~0ULL));
	KUNIT_EXPECT_EQ(test, out[0].time, (1ULL << 38) - 1);
	KUNIT_EXPECT_TRUE(test, XPROBES_UREC_IS_BOTTOM(out[0].what));
	/* a charge that follows an entry is no bottom */
	KUNIT_EXPECT_FALSE(test, XPROBES_UREC_IS_BOTTOM(XPROBES_UREC_CHARGE | 0x200));
	KUNIT_EXPECT_FALSE(test, XPROBES_UREC_IS_BOTTOM(XPROBES_UREC_CALL | UE(1, 0x200)));
}

/*
 * Calls the process summed after a return, at its sp, are beside it: the
 * return stays one (never folded with its entry, whose caller's frame
 * then takes that time) and a bottom charge at its sp follows it.
 */
static void fold_after_return(struct kunit *test)
{
	const struct xprobes_urec in[] = {
		{ 10, UE(1, 0x100) }, { 20, UE(2, 0xf0) }, { 30, UR(0xf0) }, { 45, UR(0x100) },
	};
	/* 8 cycles summed after the return at 0xf0 (A beside the next record), 5 after the last */
	const u64 acc[] = { ST(0, 0), ST(0, 1), ST(0, 2), ST(8, 3) };
	struct xprobes_urec out[2 * ARRAY_SIZE(in)];
	u64 bottom = XPROBES_UREC_CHARGE | XPROBES_UREC_BOTTOM;

	KUNIT_ASSERT_EQ(test, xp_urec_fold(in, ARRAY_SIZE(in), acc, ST(13, 4), out, &same_clock), 6u);
	KUNIT_EXPECT_EQ(test, out[0].what, UE(1, 0x100));	/* given up at 0xf0's return */
	KUNIT_EXPECT_EQ(test, out[1].what, UE(2, 0xf0));
	KUNIT_EXPECT_EQ(test, out[2].what, UR(0xf0));
	KUNIT_EXPECT_EQ(test, out[3].what, bottom | 0xf0);
	KUNIT_EXPECT_EQ(test, out[3].time, 8ull);
	KUNIT_EXPECT_EQ(test, out[4].what, UR(0x100));
	KUNIT_EXPECT_EQ(test, out[5].what, bottom | 0x100);
	KUNIT_EXPECT_EQ(test, out[5].time, 5ull);
	/* nothing beside them: the pair folds as ever */
	KUNIT_ASSERT_EQ(test, xp_urec_fold(in + 1, 2, acc, ST(0, 2), out, &same_clock), 1u);
	KUNIT_EXPECT_EQ(test, out[0].what, XPROBES_UREC_CALL | XPROBES_UREC_TOP | UE(2, 0xf0));
}

/*
 * The return routine's histogram tables: at 2 cycles a ns (a 2 GHz TSC),
 * bucket k holds calls of 2^k ns and more, 2^(k+1) cycles; at 3 GHz the
 * edges fall inside a top bit's range. The last bucket takes the rest.
 */
static void fold_hist_tables(struct kunit *test)
{
	u64 th[XPROBES_USUM_HIST], c;
	u8 bk[XPROBES_USUM_HIST];
	unsigned int b;

	xp_urec_hist_tables(1ULL << 31, th, bk, XPROBES_USUM_HIST);
	KUNIT_EXPECT_EQ(test, (u64)bk[0], 0ull);		/* 1 cycle, 0 ns */
	KUNIT_EXPECT_EQ(test, (u64)bk[2], 1ull);		/* 4 - 7 cycles: 2 - 3 ns */
	KUNIT_EXPECT_EQ(test, th[2], ~0ULL);
	KUNIT_EXPECT_EQ(test, (u64)bk[21], 20ull);		/* 2^21 cycles: 2^20 ns */
	KUNIT_EXPECT_EQ(test, (u64)bk[39], 38ull);
	xp_urec_hist_tables(0x55555555, th, bk, XPROBES_USUM_HIST);	/* 3 cycles a ns */
	for (b = 2; b < XPROBES_USUM_HIST; b++) {
		c = th[b] == ~0ULL ? (2ULL << b) - 1 : th[b];
		KUNIT_EXPECT_EQ(test, bk[b] + (u64)(th[b] != ~0ULL),
				(u64)ilog2(mul_u64_u64_shr(c, 0x55555555, 32)));
		if (th[b] != ~0ULL)
			KUNIT_EXPECT_EQ(test, (u64)ilog2(mul_u64_u64_shr(c - 1, 0x55555555, 32)),
					(u64)bk[b]);
	}
	xp_urec_hist_tables(1ULL << 36, th, bk, XPROBES_USUM_HIST);	/* 16 ns a cycle */
	KUNIT_EXPECT_EQ(test, (u64)bk[39], (u64)XPROBES_USUM_HIST - 1);
	KUNIT_EXPECT_EQ(test, th[39], ~0ULL);
}

static struct kunit_case fold_cases[] = {
	KUNIT_CASE(fold_nested),
	KUNIT_CASE(fold_converts),
	KUNIT_CASE(fold_unfolds),
	KUNIT_CASE(fold_charges),
	KUNIT_CASE(fold_bottom),
	KUNIT_CASE(fold_after_return),
	KUNIT_CASE(fold_hist_tables),
	{}
};

static struct kunit_suite fold_suite = {
	.name = "xprobes_urec_fold",
	.test_cases = fold_cases,
};

kunit_test_suites(&fold_suite);
