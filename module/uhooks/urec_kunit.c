// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: urec.c (included at its end under XPROBES_KUNIT). The return
 * thunks' hash: a key that is a thunk of the block itself (a tail call's
 * return address) has its thunk marked with XP_URT_TAILBIT, which the entry
 * routine takes off as it stores the thunk (btr: the flag in the carry);
 * a return address is never marked, odd or not, before or after the
 * block's detach turns every entry's thunk into its key; nor is one of
 * another process's thunks, while one of another block of the process
 * is (a tail call between two areas); at a detach, a tail call's entry
 * resolved through the thunks of the areas that go, not of those that
 * stay; with no thunk left, an entry that says so (XP_URT_NEGBIT), kept
 * through the detach. The stamp checks as built. Carries: what a thread
 * keeps across a switch.
 */
#include <kunit/test.h>

/* The hash entry of @key in @b: its thunk word, or NULL. */
static u64 *urec_test_entry(struct xp_urecblk *b, u64 key, bool detached)
{
	u64 *hash = b->kaddr + (XP_URT_HASH - XP_URT_TGT);
	u32 pos = hash_64(key, XP_URT_HASH_BITS), i;

	for (i = 0; i < XP_URT_PROBES; i++) {
		u64 *e = hash + (pos + i) * 2;

		/* detached: the key is gone, the thunk word holds it */
		if (detached ? (e[1] & ~BIT_ULL(XP_URT_TAILBIT)) == key : e[0] == key)
			return e + 1;
	}
	return NULL;
}

/*
 * A tail call across two areas of one process (a library's function
 * that jumps to one in the program, each with its own area and block):
 * the return address is a thunk of the other block, and the entry is
 * marked all the same; a thunk of another process's block is not one of
 * ours. Until 2026-12-04 only @b's own thunks marked an entry, and such a
 * call's caller was taken for a frame that never returned.
 */
static void urec_test_other_block(struct kunit *test, struct xp_urecblk *b)
{
	struct xp_urecblk *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	struct xp_urecblk *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	unsigned long ot, xt, t;
	u64 *e;

	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_ASSERT_NOT_NULL(test, x);
	o->mm = b->mm;
	o->va = b->va - XP_UREC_BLOCK;
	x->mm = (struct mm_struct *)x;
	x->va = b->va - 2 * XP_UREC_BLOCK;
	mutex_lock(&xp_views_lock);
	list_add_rcu(&o->node, &xp_urecblks);
	list_add_rcu(&x->node, &xp_urecblks);
	mutex_unlock(&xp_views_lock);

	ot = o->va + XP_URT_OFF + 5 * XP_URT_SIZE;
	xt = x->va + XP_URT_OFF + 5 * XP_URT_SIZE;
	t = thunk_get(b, ot);
	e = urec_test_entry(b, ot, false);
	KUNIT_EXPECT_NOT_NULL(test, e);
	if (e)
		KUNIT_EXPECT_EQ(test, *e, (u64)t | BIT_ULL(XP_URT_TAILBIT));
	t = thunk_get(b, xt);
	e = urec_test_entry(b, xt, false);
	KUNIT_EXPECT_NOT_NULL(test, e);
	if (e)
		KUNIT_EXPECT_EQ(test, *e, (u64)t);	/* another process's: not a thunk of ours */

	mutex_lock(&xp_views_lock);
	list_del_rcu(&o->node);
	list_del_rcu(&x->node);
	mutex_unlock(&xp_views_lock);
	synchronize_rcu();
}

/* Detached: how many of @b's hash entries hold the word @w. */
static unsigned int urec_test_count(struct xp_urecblk *b, u64 w)
{
	u64 *hash = b->kaddr + (XP_URT_HASH - XP_URT_TGT);
	unsigned int i, n = 0;

	for (i = 0; i < XP_URT_HASH_SIZE / 16; i++)
		n += hash[2 * i + 1] == w;
	return n;
}

/*
 * A block for @a alone, on no list, its hash and targets in memory of the
 * test's (vfree() its kaddr); @tgt gets room for a detach's targets.
 */
static struct xp_urecblk *urec_test_lone_block(struct kunit *test, struct xp_uarea **a,
					       u64 **tgt)
{
	struct xp_urecblk *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	*a = kunit_kzalloc(test, sizeof(**a), GFP_KERNEL);
	*tgt = kunit_kcalloc(test, XP_URT_N, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, *a);
	KUNIT_ASSERT_NOT_NULL(test, *tgt);
	b->kaddr = vzalloc(XP_UREC_BLOCK - XP_URT_TGT);
	KUNIT_ASSERT_NOT_NULL(test, b->kaddr);
	b->va = 0x7f0000000000UL;
	b->mm = (struct mm_struct *)b;	/* a key only: never a live mm's address */
	raw_spin_lock_init(&b->lock);
	(*a)->urec = b;
	return b;
}

static void urec_thunk_tail_bit(struct kunit *test)
{
	const u64 tail = BIT_ULL(XP_URT_TAILBIT), ret = 0x401001;	/* odd: any byte may follow a call */
	unsigned long t1, t2, base, routine;
	struct xp_urecblk *b;
	struct xp_uarea *a;
	u64 *tgt, *e;

	b = urec_test_lone_block(test, &a, &tgt);

	t1 = thunk_get(b, ret);
	KUNIT_EXPECT_EQ(test, t1, b->va + XP_URT_OFF);
	e = urec_test_entry(b, ret, false);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, *e, (u64)t1);		/* not a tail call */
	/* a tail call: the return address is t1, a thunk of the block */
	t2 = thunk_get(b, t1);
	KUNIT_EXPECT_EQ(test, t2, t1 + XP_URT_SIZE);
	e = urec_test_entry(b, t1, false);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, *e, (u64)t2 | tail);
	KUNIT_EXPECT_EQ(test, thunk_get(b, t1), t2);	/* found again: unmarked */
	KUNIT_EXPECT_EQ(test, b->used, 2u);
	rcu_read_lock();	/* it walks the blocks' list */
	KUNIT_EXPECT_TRUE(test, thunk_is_tail(b, t2 + XP_URT_SIZE - 1));
	KUNIT_EXPECT_FALSE(test, thunk_is_tail(b, b->va + XP_URT_OFF - 1));
	KUNIT_EXPECT_FALSE(test, thunk_is_tail(b, b->va + XP_URT_OFF + XP_URT_N * XP_URT_SIZE));
	rcu_read_unlock();

	urec_test_other_block(test, b);

	/*
	 * detached: a thread that read a key stores its return address, the
	 * flag as it was; for a tail call's key (a thunk), the return address
	 * that thunk stands for (the block on the list: its table is read)
	 */
	mutex_lock(&xp_views_lock);
	list_add_rcu(&b->node, &xp_urecblks);
	KUNIT_EXPECT_EQ(test, xp_urec_detach(a, tgt, &base, &routine, false), 4u);
	list_del_rcu(&b->node);
	mutex_unlock(&xp_views_lock);
	synchronize_rcu();
	KUNIT_EXPECT_EQ(test, tgt[0], ret);
	KUNIT_EXPECT_EQ(test, tgt[1], (u64)t1);
	e = urec_test_entry(b, ret, true);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, *e, ret);			/* odd, and never marked */
	/* t1's: the return address it stands for */
	KUNIT_EXPECT_EQ(test, urec_test_count(b, ret | tail), 1u);
	KUNIT_EXPECT_EQ(test, urec_test_count(b, t1 | tail), 0u);
	KUNIT_EXPECT_EQ(test, thunk_get(b, 0x402000), 0ul);	/* none made any more */
	vfree(b->kaddr);
}

/*
 * No thunk left: a return address still gets an entry, marked as having
 * none (XP_URT_NEGBIT over XP_URT_TAILBIT, the key below them), once, so
 * that the routine gives its calls' returns up without asking again;
 * found again, it is still no thunk. A detach leaves such an entry's
 * word as it is (the routine stores nothing for it) and drops its key.
 */
static void urec_thunk_none_left(struct kunit *test)
{
	const u64 neg = BIT_ULL(XP_URT_TAILBIT) | BIT_ULL(XP_URT_NEGBIT);
	const u64 ret1 = 0x401005, ret2 = 0x40200b;
	unsigned long t1, base, routine;
	struct xp_urecblk *b;
	struct xp_uarea *a;
	u64 *tgt, *e;

	b = urec_test_lone_block(test, &a, &tgt);
	b->used = XP_URT_N - 1;		/* as if given out: their hash entries do not matter */

	t1 = thunk_get(b, ret1);
	KUNIT_EXPECT_EQ(test, t1, b->va + XP_URT_OFF + (XP_URT_N - 1) * XP_URT_SIZE);
	KUNIT_EXPECT_EQ(test, thunk_get(b, ret2), 0ul);
	KUNIT_EXPECT_EQ(test, b->used, (unsigned int)XP_URT_N);
	e = urec_test_entry(b, ret2, false);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, *e, ret2 | neg);
	KUNIT_EXPECT_EQ(test, thunk_get(b, ret2), 0ul);	/* found: still none */
	KUNIT_EXPECT_EQ(test, urec_test_count(b, ret2 | neg), 1u);
	/* a tail call's return address (a thunk of the block) the same way */
	KUNIT_EXPECT_EQ(test, thunk_get(b, t1), 0ul);
	e = urec_test_entry(b, t1, false);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, *e, (u64)t1 | neg);

	mutex_lock(&xp_views_lock);
	list_add_rcu(&b->node, &xp_urecblks);
	KUNIT_EXPECT_EQ(test, xp_urec_detach(a, tgt, &base, &routine, false),
			(unsigned int)XP_URT_N);
	list_del_rcu(&b->node);
	mutex_unlock(&xp_views_lock);
	synchronize_rcu();
	KUNIT_EXPECT_NULL(test, urec_test_entry(b, ret2, false));	/* keys gone */
	KUNIT_EXPECT_EQ(test, urec_test_count(b, ret2 | neg), 1u);	/* words kept */
	KUNIT_EXPECT_EQ(test, urec_test_count(b, t1 | neg), 1u);
	KUNIT_EXPECT_EQ(test, urec_test_count(b, ret1), 1u);
	vfree(b->kaddr);
}

/*
 * Without calls folded, records go over as the process wrote them, their
 * times converted: an entry stays an entry (its flags its own), but a
 * word with the return bit is a return and nothing else, never a folded
 * call's or a charge's, which the process has no business writing (the
 * fold and the slow path's record already made it so; until 2026-12-04
 * the plain path passed them on: a review's finding).
 */
static void urec_plain_returns(struct kunit *test)
{
	const u64 sp = 0x7ffd00001000ULL, cookie = 5ULL << XPROBES_UREC_SP_BITS;
	struct xp_urec_clock c = { .tsc = 1000, .ns = 5000, .mult = 1ULL << 32 };
	struct xprobes_urec r[] = {
		{ 900, cookie | sp | XPROBES_UREC_TAIL },		/* an entry, a tail call */
		{ 910, XPROBES_UREC_CALL | cookie | sp },		/* a forged call */
		{ 920, XPROBES_UREC_CHARGE | sp },			/* a forged charge */
		{ 930, XPROBES_UREC_RET | sp },				/* a return */
		{ 940, cookie | sp | XPROBES_UREC_NORET },		/* an entry, no return */
	};
	unsigned int i;

	urec_plain(r, ARRAY_SIZE(r), &c);
	KUNIT_EXPECT_EQ(test, r[0].what, cookie | sp | XPROBES_UREC_TAIL);
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_EQ(test, r[i].what, XPROBES_UREC_RET | sp);
	KUNIT_EXPECT_EQ(test, r[4].what, cookie | sp | XPROBES_UREC_NORET);
	/* the clock's ratio is 1 */
	for (i = 0; i < ARRAY_SIZE(r); i++)
		KUNIT_EXPECT_EQ(test, r[i].time, 5000 - 100 + 10 * (u64)i);
}

/* A block of the process @mm at @va, on the blocks' list, for @a. */
static struct xp_urecblk *urec_test_block(struct kunit *test, struct xp_uarea *a,
					  struct mm_struct *mm, unsigned long va)
{
	struct xp_urecblk *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->kaddr = vzalloc(XP_UREC_BLOCK - XP_URT_TGT);
	KUNIT_ASSERT_NOT_NULL(test, b->kaddr);
	b->va = va;
	b->mm = mm;
	raw_spin_lock_init(&b->lock);
	a->urec = b;
	mutex_lock(&xp_views_lock);
	list_add_rcu(&b->node, &xp_urecblks);
	mutex_unlock(&xp_views_lock);
	return b;
}

/*
 * A tail call across two areas, A's function jumping to B's: A's hash
 * entry has B's thunk for key. When A's area goes alone, a thread that
 * read that key stores B's thunk, which still records its caller's
 * return; when both go, the return address B's thunk stands for. Until
 * 2026-12-04 the detach walked the thunks of every block of the process,
 * and A alone going stored the return address: B's function lost that
 * return record.
 */
static void urec_detach_tails_kept(struct kunit *test)
{
	const u64 tail = BIT_ULL(XP_URT_TAILBIT), ret = 0x401001;
	struct mm_struct *mm = (struct mm_struct *)test;	/* a key only */
	unsigned int both;

	for (both = 0; both < 2; both++) {
		struct xp_uarea *aa = kunit_kzalloc(test, sizeof(*aa), GFP_KERNEL);
		struct xp_uarea *ab = kunit_kzalloc(test, sizeof(*ab), GFP_KERNEL);
		struct xp_urecblk *ba, *bb;
		struct xp_unwind_map *m;
		unsigned long ta, tb;
		u64 *e;

		KUNIT_ASSERT_NOT_NULL(test, aa);
		KUNIT_ASSERT_NOT_NULL(test, ab);
		ba = urec_test_block(test, aa, mm, 0x7f0000000000UL);
		bb = urec_test_block(test, ab, mm, 0x7f1000000000UL);
		tb = thunk_get(bb, ret);
		ta = thunk_get(ba, tb);
		e = urec_test_entry(ba, tb, false);
		KUNIT_ASSERT_NOT_NULL(test, e);
		KUNIT_EXPECT_EQ(test, *e, (u64)ta | tail);

		m = xp_unwind_map_new(mm, 2);
		KUNIT_ASSERT_NOT_NULL(test, m);
		mutex_lock(&xp_views_lock);
		xp_unwind_map_add(m, aa);
		if (both)
			xp_unwind_map_add(m, ab);
		xp_unwind_map_done(m);
		list_del_rcu(&ba->node);
		list_del_rcu(&bb->node);
		mutex_unlock(&xp_views_lock);
		synchronize_rcu();
		KUNIT_EXPECT_EQ(test, urec_test_count(ba, (both ? ret : tb) | tail), 1u);
		KUNIT_EXPECT_EQ(test, urec_test_count(ba, (both ? tb : ret) | tail), 0u);
		xp_unwind_map_put(m);
		vfree(ba->kaddr);
		vfree(bb->kaddr);
	}
}

/* The routines' process in the tests below: its rseq offset 2336, its stamp, four buffers. */
static const struct xp_urecbuf urec_test_rb = {
	.rseq_off = 2336, .rseq_sig = 0x53053053, .stamp = 0x13572469,
	.nbufs = 4, .va = 0x7f0000000000UL,
};

/* The routines as built for urec_test_rb's process at 0x7f1000000000, with or without @sums. */
static u8 *urec_test_code(struct kunit *test, bool sums)
{
	u8 *code = kunit_kzalloc(test, xp_urec_tmpl_end - xp_urec_tmpl, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, code);
	build_code(code, 0x7f1000000000UL, &urec_test_rb, sums);
	return code;
}

/*
 * The routines as built for a process: each of the three stamp checks
 * (cmpl $imm32, %fs:disp32: 64 81 3c 25) compares the process's stamp with
 * the word at its rseq offset plus XP_RSEQ_STAMP, and is followed by its
 * branch; no other bytes read like one (host-urec-stamp checks the ways
 * through them on the template).
 */
static void urec_stamp_sites(struct kunit *test)
{
	static const u8 cmp[] = { 0x64, 0x81, 0x3c, 0x25 };
	u8 *code = urec_test_code(test, true);
	unsigned int i, n = 0;

	for (i = 0; i + 14 <= TMPL_OFF(xp_urec_desc); i++) {
		if (memcmp(code + i, cmp, sizeof(cmp)))
			continue;
		n++;
		KUNIT_EXPECT_EQ(test, get_unaligned_le32(code + i + 4), 2336 + XP_RSEQ_STAMP);
		KUNIT_EXPECT_EQ(test, get_unaligned_le32(code + i + 8), urec_test_rb.stamp);
		KUNIT_EXPECT_TRUE(test, code[i + 12] == 0x75 ||
				  (code[i + 12] == 0x0f && code[i + 13] == 0x85));	/* jne */
	}
	KUNIT_EXPECT_EQ(test, n, 3);
}

/* mov %reg, %fs:disp32 at @p: 64 48 89, ModRM mod 0 rm 4 (a SIB), SIB 25 (no base) */
static bool urec_test_fs_store(const u8 *p)
{
	return p[0] == 0x64 && p[1] == 0x48 && p[2] == 0x89 && (p[3] & 0xc7) == 0x04 &&
	       p[4] == 0x25;
}

/*
 * The routines' stores of rseq_cs (mov %reg, %fs:disp32), as built:
 * three, each at the process's rseq offset plus 8. The entry's and the
 * fold's set it to their descriptors before their sections; the third,
 * past the fold's commit, lies outside that section and sets it to 0
 * (xorl %esi, %esi before it; %eax until 2026-12-07).
 */
static void urec_rseq_cs_sites(struct kunit *test)
{
	unsigned int i, n = 0, clear = TMPL_OFF(xp_urec_p_cs3) - 9;
	u8 *code = urec_test_code(test, true);

	for (i = 0; i + 9 <= TMPL_OFF(xp_urec_desc); i++) {
		if (!urec_test_fs_store(code + i))
			continue;
		n++;
		KUNIT_EXPECT_EQ(test, get_unaligned_le32(code + i + 5), 2336 + 8);
	}
	KUNIT_EXPECT_EQ(test, n, 3);
	/* the fold's: the register it has just zeroed, xorl %esi, %esi */
	KUNIT_EXPECT_TRUE(test, urec_test_fs_store(code + clear));
	KUNIT_EXPECT_EQ(test, code[clear + 3], 0x34);	/* %rsi */
	KUNIT_EXPECT_EQ(test, code[clear - 2], 0x31);
	KUNIT_EXPECT_EQ(test, code[clear - 1], 0xf6);
	KUNIT_EXPECT_GE(test, clear, TMPL_OFF(xp_urec_fpost));
	KUNIT_EXPECT_LT(test, clear, TMPL_OFF(xp_urec_plain));	/* the fold's tail */
}

/*
 * The sums' gate (urec_tmpl.S) in the routines as built: with sums, the
 * return routine goes on into the fold's section at the gate, the lea of
 * its rseq descriptor, with no instruction of the gate's own; without,
 * a jmp to the return record over that lea's first five bytes, its last
 * two int3s and the store behind it as it was.
 */
static void urec_sums_gate(struct kunit *test)
{
	static const u8 lea[] = { 0x48, 0x8d, 0x05 };	/* lea rel32(%rip), %rax */
	unsigned int g = TMPL_OFF(xp_urec_sums_gate);
	u8 *code = urec_test_code(test, true);
	u8 behind[9];

	KUNIT_EXPECT_EQ(test, memcmp(code + g, lea, sizeof(lea)), 0);
	KUNIT_EXPECT_EQ(test, g + 7 + (s32)get_unaligned_le32(code + g + 3),
			TMPL_OFF(xp_urec_desc2));
	memcpy(behind, code + g + 7, sizeof(behind));
	KUNIT_EXPECT_EQ(test, behind[0], 0x64);		/* mov %rax, %fs:rseq_cs */
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(behind + 5), 2336 + 8);

	code = urec_test_code(test, false);
	KUNIT_EXPECT_EQ(test, code[g], 0xe9);
	KUNIT_EXPECT_EQ(test, g + 5 + (s32)get_unaligned_le32(code + g + 1),
			TMPL_OFF(xp_urec_plain));
	KUNIT_EXPECT_EQ(test, code[g + 5], 0xcc);
	KUNIT_EXPECT_EQ(test, code[g + 6], 0xcc);
	KUNIT_EXPECT_EQ(test, memcmp(code + g + 7, behind, sizeof(behind)), 0);
}

/*
 * Carries: what a thread keeps across its switch (its bottom sums, its
 * dropped mark) comes back whole into the buffer of the CPU it comes in
 * on, the count 0 whatever the buffer said, and the mark into that CPU's;
 * another thread finds none of it, and a CPU it does not come in on keeps
 * no mark; a slot is taken once; a thread has one slot, which a second put
 * overwrites; a thread whose window is full keeps nothing (its switch
 * hands over as before), and gets a slot again once one there is free,
 * which a mark alone takes only among the window's first four.
 */
static void urec_carry_slots(struct kunit *test)
{
	struct xp_urecbuf rb = { .nbufs = 1 };
	struct xp_urec_hdr *hdr = kunit_kzalloc(test, sizeof(*hdr), GFP_KERNEL);
	struct task_struct *t = (void *)0xffff888012345600UL, *u = (void *)0xffff888012346a00UL;
	struct task_struct *other = (void *)0xffff8880dead0000UL;
	u64 a = 123456ULL << XP_UREC_COUNT_BITS;
	u32 h, i, n;

	KUNIT_ASSERT_NOT_NULL(test, hdr);
	rb.kaddr = hdr;
	rb.carry = kunit_kcalloc(test, UREC_CARRY_SLOTS, sizeof(*rb.carry), GFP_KERNEL);
	rb.dropped = kunit_kcalloc(test, 1, sizeof(*rb.dropped), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rb.carry);
	KUNIT_ASSERT_NOT_NULL(test, rb.dropped);

	KUNIT_EXPECT_TRUE(test, urec_carry_put(&rb, t, a | 7 * XP_UREC_COUNT_UNIT, 0x7ffc0000f000UL,
					       0x7ffc0000f008UL));
	rb.dropped[0] = 99;
	KUNIT_EXPECT_FALSE(test, urec_carry_take(&rb, 0, u));	/* not u's */
	KUNIT_EXPECT_EQ(test, hdr->state, 0ULL);
	KUNIT_EXPECT_EQ(test, hdr->bsp, 0ULL);
	KUNIT_EXPECT_EQ(test, rb.dropped[0], 0ULL);		/* u's mark: none */
	KUNIT_EXPECT_TRUE(test, urec_carry_take(&rb, 0, t));
	KUNIT_EXPECT_EQ(test, hdr->state, a);			/* A, the count 0 */
	KUNIT_EXPECT_EQ(test, hdr->bsp, 0x7ffc0000f000UL);
	KUNIT_EXPECT_EQ(test, rb.dropped[0], 0x7ffc0000f008UL);
	hdr->state = 5 * XP_UREC_COUNT_UNIT;
	hdr->bsp = 0;
	KUNIT_EXPECT_FALSE(test, urec_carry_take(&rb, 0, t));	/* taken once */
	KUNIT_EXPECT_EQ(test, hdr->state, 5ULL * XP_UREC_COUNT_UNIT);
	KUNIT_EXPECT_EQ(test, hdr->bsp, 0ULL);

	/* one slot a thread: a mark put after its time replaces it */
	KUNIT_EXPECT_TRUE(test, urec_carry_put(&rb, t, a, 0x2000, 0x2000));
	KUNIT_EXPECT_TRUE(test, urec_carry_put(&rb, t, 0, 0, 0x3000));
	for (i = 0, n = 0; i < UREC_CARRY_SLOTS; i++)
		n += rb.carry[i].t == t;
	KUNIT_EXPECT_EQ(test, n, 1u);
	KUNIT_EXPECT_FALSE(test, urec_carry_take(&rb, 0, t));	/* a mark alone: nothing to send */
	KUNIT_EXPECT_EQ(test, hdr->bsp, 0ULL);
	KUNIT_EXPECT_EQ(test, rb.dropped[0], 0x3000ULL);

	/* t's window full of another's: nothing kept, until a slot is free */
	h = hash_ptr(t, UREC_CARRY_BITS);
	for (i = 0; i < UREC_CARRY_PROBES; i++)
		rb.carry[(h + i) & (UREC_CARRY_SLOTS - 1)].t = other;
	KUNIT_EXPECT_FALSE(test, urec_carry_put(&rb, t, a, 0x1000, 0x1000));
	rb.carry[(h + UREC_CARRY_PROBES - 1) & (UREC_CARRY_SLOTS - 1)].t = NULL;
	/* free past the window's first four: a mark alone leaves it to time */
	KUNIT_EXPECT_FALSE(test, urec_carry_put(&rb, t, 0, 0, 0x1000));
	KUNIT_EXPECT_TRUE(test, urec_carry_put(&rb, t, a, 0x1000, 0x1000));
	KUNIT_EXPECT_PTR_EQ(test, rb.carry[(h + UREC_CARRY_PROBES - 1) &
					   (UREC_CARRY_SLOTS - 1)].t, t);
	KUNIT_EXPECT_TRUE(test, urec_carry_take(&rb, 0, t));
	KUNIT_EXPECT_EQ(test, hdr->bsp, 0x1000ULL);
	KUNIT_EXPECT_NULL(test, rb.carry[(h + UREC_CARRY_PROBES - 1) &
					 (UREC_CARRY_SLOTS - 1)].t);
}

/*
 * The dropped mark after a hand-over (urec_mark()): just below the last
 * entry's frame, whatever it was; raised by a bottom charge after it to
 * its sp, by a return to just below its sp (a tail call's caller may be
 * left there), not by other charges or entries without returns; a folded
 * call raises it to its sp, a tail call's keeps it below.
 */
static void urec_mark_rules(struct kunit *test)
{
	struct xprobes_urec o[4] = {};
	u64 ent = 5ULL << XPROBES_UREC_SP_BITS, bot = XPROBES_UREC_CHARGE | XPROBES_UREC_BOTTOM;

	KUNIT_EXPECT_EQ(test, urec_mark(o, 0, 77), 77ULL);
	o[0].what = bot | 0x5000;				/* a lone charge */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 1, 0), 0x5000ULL);
	KUNIT_EXPECT_EQ(test, urec_mark(o, 1, 0x6000), 0x6000ULL);
	o[1].what = XPROBES_UREC_RET | 0x5100;			/* a return */
	o[2].what = ent | 0x5100;				/* the next entry */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 3, 0x9000), 0x50ffULL);
	o[3].what = XPROBES_UREC_CHARGE | 0x5100;		/* its callees' time */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 4, 0), 0x50ffULL);
	o[3].what = ent | XPROBES_UREC_NORET | 0x4000;		/* no return: no frame */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 4, 0), 0x50ffULL);
	o[3].what = XPROBES_UREC_RET | 0x5200;			/* returns over it */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 4, 0), 0x51ffULL);
	o[3].what = XPROBES_UREC_RET | 0x5100;	/* the tail callee's: its caller may stay */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 4, 0), 0x50ffULL);
	o[3].what = bot | 0x5300;				/* a charge after a return */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 4, 0), 0x5300ULL);
	o[0].what = XPROBES_UREC_CALL | ent | 0x7000;		/* a folded call */
	o[0].time = 0;
	KUNIT_EXPECT_EQ(test, urec_mark(o, 1, 0x6000), 0x7000ULL);
	o[0].time = XPROBES_UREC_CALL_TAIL;			/* a tail call's */
	KUNIT_EXPECT_EQ(test, urec_mark(o, 1, 0x8000), 0x6fffULL);
	KUNIT_EXPECT_EQ(test, urec_mark(o, 1, 0x6000), 0x6000ULL);
}

static struct kunit_case urec_cases[] = {
	KUNIT_CASE(urec_carry_slots),
	KUNIT_CASE(urec_mark_rules),
	KUNIT_CASE(urec_stamp_sites),
	KUNIT_CASE(urec_sums_gate),
	KUNIT_CASE(urec_rseq_cs_sites),
	KUNIT_CASE(urec_thunk_tail_bit),
	KUNIT_CASE(urec_thunk_none_left),
	KUNIT_CASE(urec_plain_returns),
	KUNIT_CASE(urec_detach_tails_kept),
	{}
};

static struct kunit_suite urec_suite = {
	.name = "xprobes_urec",
	.test_cases = urec_cases,
};

kunit_test_suites(&urec_suite);
