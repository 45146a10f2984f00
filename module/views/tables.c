// SPDX-License-Identifier: GPL-2.0
/*
 * The page-table invariants of views, checked against the live tables.
 *
 * The test VMs run under TCG, which flushes its whole TLB on every CR3 write
 * and has no PCIDs, global-entry retention or paging-structure caches: a
 * global or stale translation that would make a real CPU run unhooked (or
 * hooked) text is invisible to behavioural tests there. What a real CPU can
 * cache is decided by the tables, so the rules are checked on the tables:
 *
 * - every table a CPU can load that maps a hooked 2 MiB region maps it
 *   non-global: the shared image PMD (leaf or PTEs), every view's private PMD
 *   entry for it, the PTI user tables;
 * - every private leaf (region PTEs, xol PTEs) is non-global;
 * - a view's private P4D and PUD equal the shared pages but for the image
 *   slot (PUD[511], modules and BPF, stays shared);
 * - a view's private PMD equals the shared one but for its own regions and
 *   its xol slot; a region's PTEs map the shared frames with the shared
 *   attributes (but G, A, D), except its copies, which map the copy pages;
 * - every page a call or jump hook's five bytes lie on maps its copy;
 * - the global-bit reference count of each region is the number of views
 *   that hook it;
 * - every member's pgd entry is the view's, and its TLB generation moved
 *   when it joined (view.c).
 *
 * It runs after every change of a view's tables, every 2 s while views exist
 * (lifecycle.c) and on demand (XPROBES_CMD_TABLES, xprobectl audit --tables).
 * A violation is logged as "page-table invariant violated", which the
 * selftest harness treats as a kernel splat.
 *
 * Locking: under xp_views_lock (the tables of views and the global-bit counts
 * change only under it; view->lock for the members).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include "xprobes.h"

atomic64_t xp_table_checks, xp_table_violations;

/* Attributes a region's PTE must share with the kernel's mapping. */

struct check {
	struct xp_tables_report *rep;
	unsigned int bad;
};

static __printf(2, 3) void violated(struct check *c, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (c->bad < 8)
		pr_err("page-table invariant violated: %pV\n", &vaf);
	if (!c->bad && c->rep)
		vsnprintf(c->rep->first, sizeof(c->rep->first), fmt, args);
	va_end(args);
	c->bad++;
}

/* Is anything the PMD entry maps global (a leaf, or a present PTE it points at)? */
static bool maps_global(pmd_t pmd)
{
	pte_t *pte;
	int i;

	if (pmd_none(pmd) || !pmd_present(pmd))
		return false;
	if (pmd_leaf(pmd))
		return pmd_flags(pmd) & _PAGE_GLOBAL;
	pte = (pte_t *)pmd_page_vaddr(pmd);
	for (i = 0; i < PTRS_PER_PTE; i++)
		if (pte_present(pte[i]) && (pte_flags(pte[i]) & _PAGE_GLOBAL))
			return true;
	return false;
}

static struct xp_tpage *tpage_at(struct xp_view *v, unsigned long va)
{
	struct xp_tpage *t;

	list_for_each_entry(t, &v->tpages, node)
		if (t->va == va)
			return t;
	return NULL;
}

static void check_region(struct check *c, struct xp_view *v, struct xp_region *r)
{
	unsigned int idx = pmd_index(r->base), i;
	DECLARE_BITMAP(copied, PTRS_PER_PTE);

	xp_region_copies(v, r, copied);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		unsigned long va = r->base + i * PAGE_SIZE, pfn;
		pte_t pte = READ_ONCE(r->ptes[i]);
		struct xp_tpage *t;
		u64 flags;

		if (!pte_present(pte))
			continue;
		if (pte_flags(pte) & _PAGE_GLOBAL)
			violated(c, "view of pid %u: private PTE %u of region %u is global",
				 v->root_nr, i, idx);
		t = test_bit(i, copied) ? tpage_at(v, va) : NULL;
		if (t) {
			if (pte_pfn(pte) != page_to_pfn(t->copy))
				violated(c, "view of pid %u: hooked page %u of region %u does not map its copy",
					 v->root_nr, i, idx);
		} else if (!xp_shared_pte(idx, va, &pfn, &flags) || pfn != pte_pfn(pte) ||
			   (flags & XP_CMP_MASK) != (pte_flags(pte) & XP_CMP_MASK)) {
			violated(c, "view of pid %u: PTE %u of region %u differs from the kernel's mapping",
				 v->root_nr, i, idx);
		}
	}
}

/*
 * A jump hook's five bytes are fetched through the view's PTEs: each page
 * they lie on (two where they cross a boundary) must map the copy the hook
 * writes them in.
 */
static void check_hooks(struct check *c, struct xp_view *v)
{
	struct xp_hook *h;

	list_for_each_entry(h, &v->hook_list, vnode) {
		unsigned int i;

		if (!h->call_ok)
			continue;
		for (i = 0; i < XP_JUMP_SIZE; i += XP_JUMP_SIZE - 1) {
			unsigned long va = (h->addr + i) & PAGE_MASK;
			struct xp_region *r = xp_region_of(v, va);
			struct xp_tpage *t = va == (h->addr & PAGE_MASK) ? h->tpage : h->tpage2;

			if (!r || !t || t->va != va ||
			    pte_pfn(READ_ONCE(r->ptes[pte_index(va)])) != page_to_pfn(t->copy))
				violated(c, "view of pid %u: hook %u's jump byte %u is not on its copy",
					 v->root_nr, h->id, i);
		}
	}
}

static void check_view(struct check *c, struct xp_view *v)
{
	DECLARE_BITMAP(hooked, PTRS_PER_PMD);
	unsigned long a = xp_k.stext;
	struct xp_member *m;
	const char *why;
	struct xp_region *r;
	unsigned int i;

	xp_region_slots(v, hooked);

	/*
	 * Every copied entry it does not own is the kernel's (P4D, PUD, PMD),
	 * once it has followed what the kernel changed (pgtable.c).
	 */
	if (!xp_chain_resync(v) && !v->closing)	/* closed for that, maybe */
		violated(c, "view of pid %u: a copied P4D, PUD or PMD entry is not the kernel's",
			 v->root_nr);
	if (pud_pfn(v->pud[pud_index(a)]) != PHYS_PFN(__pa(v->pmd)))
		violated(c, "view of pid %u: PUD image slot is not its PMD", v->root_nr);

	for (i = 0; i < PTRS_PER_PMD; i++) {
		pmd_t e = READ_ONCE(v->pmd[i]);

		r = test_bit(i, hooked) ? xp_region_at(v, i) : NULL;
		if (r) {
			if (pmd_leaf(e) || pmd_pfn(e) != PHYS_PFN(__pa(r->ptes)))
				violated(c, "view of pid %u: region %u is not mapped by its PTE table",
					 v->root_nr, i);
			check_region(c, v, r);
		} else if (v->xol.va && pmd_index(v->xol.va) == i) {
			if (pmd_leaf(e) || pmd_pfn(e) != PHYS_PFN(__pa(v->xol.ptes)))
				violated(c, "view of pid %u: xol slot is not its PTE table", v->root_nr);
		}
		if (xp_gclear_refs(i) && !r && maps_global(e))
			violated(c, "view of pid %u: hooked region %u mapped global", v->root_nr, i);
	}
	check_hooks(c, v);
	why = xp_mview_check(v);
	if (why)
		violated(c, "view of pid %u: %s", v->root_nr, why);
	if (v->xol.ptes)
		for (i = 0; i < PTRS_PER_PTE; i++)
			if (pte_present(v->xol.ptes[i]) &&
			    (pte_flags(v->xol.ptes[i]) & (_PAGE_GLOBAL | _PAGE_RW | _PAGE_USER)))
				violated(c, "view of pid %u: xol PTE %u is global, writable or user",
					 v->root_nr, i);

	raw_spin_lock(&v->lock);
	list_for_each_entry(m, &v->members, node) {
		if (c->rep)
			c->rep->members++;
		if (!atomic_read(&m->mm->mm_users))
			continue;	/* dead: the sweeper detaches it */
		if (!xp_pgd_in_view(m->mm->pgd, v))
			violated(c, "view of pid %u: a member's pgd entry is not the view's", v->root_nr);
		if (m->gen_joined <= m->gen_before ||
		    atomic64_read(&m->mm->context.tlb_gen) < m->gen_joined)
			violated(c, "view of pid %u: a member's TLB generation did not move when it joined",
				 v->root_nr);
	}
	raw_spin_unlock(&v->lock);
}

/* Check every invariant now; returns the number of violations. Under xp_views_lock. */
unsigned int xp_tables_check(struct xp_tables_report *rep)
{
	struct check c = { .rep = rep };
	struct xp_view *v;
	unsigned int i;

	lockdep_assert_held(&xp_views_lock);
	if (xp_k.unsupported)
		return 0;
	if (rep)
		memset(rep, 0, sizeof(*rep));

	for (i = 0; i < PTRS_PER_PMD; i++) {
		unsigned int hooking = 0;

		list_for_each_entry(v, &xp_views, node)
			hooking += !!xp_region_at(v, i);
		if (rep)
			rep->regions += hooking;
		if (hooking != xp_gclear_refs(i))
			violated(&c, "region %u: %u views hook it, global bit held for %u",
				 i, hooking, xp_gclear_refs(i));
		if (!xp_gclear_refs(i))
			continue;
		if (maps_global(READ_ONCE(xp_k.image_pmds[i])))
			violated(&c, "region %u: hooked, but the shared tables map it global", i);
		if (xp_k.user_pmds && maps_global(READ_ONCE(xp_k.user_pmds[i])))
			violated(&c, "region %u: hooked, but the PTI user tables map it global", i);
	}
	xp_modspace_resync();	/* every view's module space, once, before they are checked */
	list_for_each_entry(v, &xp_views, node) {
		struct xp_region *r;

		if (rep)
			rep->views++;
		list_for_each_entry(r, &v->mregions, node)
			if (rep)
				rep->regions++;
		check_view(&c, v);
	}
	atomic64_inc(&xp_table_checks);
	atomic64_add(c.bad, &xp_table_violations);
	return c.bad;
}
