// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: modspace.c (included at its end under XPROBES_KUNIT). Which module
 * an address is in, the allocator's exits found at load, the name count
 * that refuses an ambiguous plain name, and the follow itself: a view's
 * module-space tables (a view no CPU loads, made here) brought up to the
 * kernel's, its copied entries left alone, a difference nothing in the
 * kernel finishes found lasting.
 */
#include <kunit/test.h>
#include <asm/text-patching.h>

static int mod_kunit_data;

static void mod_finds_own_text(struct kunit *test)
{
	char name[MODULE_NAME_LEN] = "";
	unsigned long fn = (unsigned long)xp_alloc_exit;

	preempt_disable();
	KUNIT_EXPECT_PTR_EQ(test, module_at(fn), THIS_MODULE);
	KUNIT_EXPECT_PTR_EQ(test, module_text_at(fn), THIS_MODULE);
	KUNIT_EXPECT_PTR_EQ(test, module_at((unsigned long)&mod_kunit_data), THIS_MODULE);
	KUNIT_EXPECT_NULL(test, module_text_at((unsigned long)&mod_kunit_data));
	KUNIT_EXPECT_NULL(test, module_at(xp_k.stext));
	preempt_enable();
	KUNIT_EXPECT_TRUE(test, xp_is_module_text(fn, 1));
	KUNIT_EXPECT_FALSE(test, xp_is_module_text((unsigned long)&mod_kunit_data, 1));
	/* Our own text is refused, with the reason. */
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_NULL(test, xp_module_of(fn, 1, name, NULL));
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_STREQ(test, name, THIS_MODULE->name);
	KUNIT_EXPECT_EQ(test, xp_modules_with("xp_alloc_exit"), 1U);
	KUNIT_EXPECT_EQ(test, xp_modules_with("xp_no_such_function_anywhere"), 0U);
}

static void mod_allocator_exits(struct kunit *test)
{
	unsigned long exits[XP_ALLOC_EXITS];
	const char *name = xp_sym_lookup("execmem_alloc", NULL) ? "execmem_alloc" : "module_alloc";
	unsigned int n = 0, i;

	mutex_lock(&xp_views_lock);
	arm();			/* as the first hook in module text does */
	mutex_unlock(&xp_views_lock);
	KUNIT_ASSERT_NULL(test, xp_k.mod_off);
	KUNIT_ASSERT_NULL(test, find_exits(name, exits, &n));
	KUNIT_ASSERT_GT(test, n, 0U);
	KUNIT_EXPECT_EQ(test, n, nr_exit_kps);
	for (i = 0; i < n; i++) {
		u8 op = *(u8 *)xp_text(exits[i]);

		/* A probed ret: kprobes' int3 there, or its optimized jump. */
		KUNIT_EXPECT_TRUE(test, op == INT3_INSN_OPCODE || op == RET_INSN_OPCODE ||
				  op == JMP32_INSN_OPCODE);
		KUNIT_EXPECT_PTR_EQ(test, (void *)exit_kps[i].addr, (void *)exits[i]);
	}
}

/* A view of module space no CPU loads: its PMD page and one region's PTEs. */
static void mod_scan_follows(struct kunit *test)
{
	unsigned long va = (unsigned long)xp_alloc_exit & PAGE_MASK, fl;
	struct xp_view *v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);
	struct xp_region *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int idx = pmd_index(va), i = pte_index(va);
	pte_t *t = shared_ptes(idx), saved;
	struct mod_diffs rep = {};

	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, t);
	v->mpmd = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	r->ptes = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, v->mpmd);
	KUNIT_ASSERT_NOT_NULL(test, r->ptes);
	INIT_LIST_HEAD(&v->mregions);
	r->base = va & PMD_MASK;
	r->mod = true;
	list_add(&r->node, &v->mregions);

	atomic_inc(&xp_nr_mviews);
	smp_mb__after_atomic();	/* as mview_attach(): pairs with scan_all() */
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	memcpy(v->mpmd, xp_k.mod_pmds, PAGE_SIZE);
	memcpy(r->ptes, t, PAGE_SIZE);
	list_add(&v->mnode, &xp_mviews);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);

	KUNIT_EXPECT_EQ(test, scan_all(false, NULL), 0ULL);
	/* An entry that differs is found, and followed. */
	saved = READ_ONCE(r->ptes[i]);
	WRITE_ONCE(r->ptes[i], __pte(0));
	WRITE_ONCE(v->mpmd[(idx + 1) % PTRS_PER_PMD], __pmd(0));
	KUNIT_EXPECT_NE(test, scan_all(false, &rep), 0ULL);
	KUNIT_EXPECT_EQ(test, pte_val(READ_ONCE(r->ptes[i])), 0UL);
	/* noted for the log as counted: the page's entry, then the slot's (if the kernel has one) */
	KUNIT_ASSERT_GE(test, rep.n, 1U);
	KUNIT_EXPECT_EQ(test, rep.d[0].va, va);
	KUNIT_EXPECT_FALSE(test, rep.d[0].slot);
	KUNIT_EXPECT_EQ(test, rep.d[0].view, 0ULL);
	KUNIT_EXPECT_EQ(test, rep.d[0].kernel, (u64)pte_val(saved));
	if (pmd_val(READ_ONCE(xp_k.mod_pmds[(idx + 1) % PTRS_PER_PMD]))) {
		KUNIT_ASSERT_EQ(test, rep.n, 2U);
		KUNIT_EXPECT_TRUE(test, rep.d[1].slot);
		KUNIT_EXPECT_EQ(test, rep.d[1].va,
				(xp_k.mod_lo & PUD_MASK) + ((idx + 1) % PTRS_PER_PMD) * PMD_SIZE);
	}
	/*
	 * ... and it lasts: what the kernel leaves unfinished is finished
	 * (vm_unmap_aliases()), which follows nothing here.
	 */
	KUNIT_EXPECT_NE(test, lasting_diff(), 0ULL);
	KUNIT_EXPECT_EQ(test, pte_val(READ_ONCE(r->ptes[i])), 0UL);
	KUNIT_EXPECT_NE(test, scan_all(true, NULL), 0ULL);
	KUNIT_EXPECT_EQ(test, pte_val(READ_ONCE(r->ptes[i])), pte_val(saved));
	KUNIT_EXPECT_EQ(test, pmd_val(READ_ONCE(v->mpmd[(idx + 1) % PTRS_PER_PMD])),
			pmd_val(READ_ONCE(xp_k.mod_pmds[(idx + 1) % PTRS_PER_PMD])));
	KUNIT_EXPECT_EQ(test, scan_all(false, NULL), 0ULL);
	/* A copied entry is the view's own: never followed. */
	__set_bit(i, r->copied);
	WRITE_ONCE(r->ptes[i], __pte(0));
	KUNIT_EXPECT_EQ(test, scan_all(true, NULL), 0ULL);
	KUNIT_EXPECT_EQ(test, pte_val(READ_ONCE(r->ptes[i])), 0UL);

	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	list_del(&v->mnode);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	atomic_dec(&xp_nr_mviews);
}

static struct kunit_case modspace_cases[] = {
	KUNIT_CASE(mod_finds_own_text),
	KUNIT_CASE(mod_allocator_exits),
	KUNIT_CASE(mod_scan_follows),
	{}
};

static struct kunit_suite modspace_suite = {
	.name = "xprobes_modspace",
	.test_cases = modspace_cases,
};

kunit_test_suites(&modspace_suite);
