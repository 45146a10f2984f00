// SPDX-License-Identifier: GPL-2.0
/*
 * The page tables of a view: the private chain for the kernel image, private
 * PTE tables for hooked 2 MiB regions, private copies of hooked text pages,
 * the global bit of every mapping of a hooked region, and TLB flushes.
 *
 * A view's chain is built from the shared tables, not from any one mm:
 *
 *   pgd[511] -> private P4D (5-level only) -> private PUD -> private PMD
 *
 * The private PUD keeps every entry of the shared one except the kernel-image
 * slot, so PUD[511] (modules, BPF, fixmap) stays the shared page unless the
 * view hooks module text (views/modspace.c: its own tables there, which
 * follow the kernel's; xp_view_get_page() and the teardown call it). The private
 * PMD starts as a copy of the shared kernel-image PMD page; each 2 MiB region
 * that holds a hooked page gets a private PTE table mirroring the shared
 * mapping, and the hooked pages point at private copies of the text. One
 * otherwise empty PMD slot above the kernel image maps the view's out-of-line
 * execution area (xol.c). Every mm that is a member of the view has its
 * pgd[511] pointing at the chain (view.c).
 *
 * TLB rules followed (Intel SDM vol. 3, 4.10.4; the kernel's
 * __split_large_page() does the same): a translation never changes page size
 * and frame (or attributes) in one step. Hooking the first page of a region
 * goes: global bit off everywhere, flush; 2 MiB leaf -> PTE table with the same
 * frames and attributes, flush; PTE -> copy, flush. Unhooking and teardown
 * run the same steps backwards. Every flush is __flush_tlb_all() on every CPU:
 * global entries, every PCID, and the paging-structure caches.
 *
 * Locking: everything here runs under xp_views_lock. Copies are taken and
 * their PTEs switched under the kernel's text_mutex, which also serialises
 * them with text pokes (coherence.c). The trap handler reads a view's tpages
 * under RCU only. The shared entries' global bits change under cpa_lock and
 * pgd_lock (see gclear_get()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <asm/tlbflush.h>
#include <net/netlink.h>
#include "xprobes.h"

atomic64_t xp_mem_bytes = ATOMIC64_INIT(0);

/*
 * The global bit of every mapping of a hooked region. With PTI off (or PTI
 * without PCID), kernel text is mapped global, and a global TLB entry survives
 * CR3 writes: loaded by any other mm, it would keep serving the shared
 * (unhooked) page to a traced mm. So while at least one view has a private
 * copy in a 2 MiB region, every table a CPU can load that maps the region
 * carries it non-global:
 * - the shared kernel-image PMD page (its 2 MiB leaf, or the PTEs of the
 *   shared PTE table it points at, which every chain shares);
 * - each view's private PMD page, whose entries for regions it does not hook
 *   itself mirror the shared ones (so a view made earlier does not keep a
 *   global 2 MiB leaf for a region a later view hooks);
 * - the PTI user tables, which pti_clone_kernel_text() may fill with global
 *   copies of the image's entries.
 * Indexed by PMD slot; under xp_views_lock. Only the bit is taken away and
 * given back, under the kernel's own page-attribute locks, so a concurrent
 * change of the shared entries by the kernel is neither lost nor undone.
 */
struct xp_gclear {
	unsigned int refs;			/* views with a private region here */
	bool pmd_had_g;				/* shared 2 MiB leaf was global */
	bool upmd_had_g;			/* PTI user 2 MiB leaf was global */
	DECLARE_BITMAP(pte_had_g, PTRS_PER_PTE);	/* shared 4 KiB entries */
	DECLARE_BITMAP(upte_had_g, PTRS_PER_PTE);	/* PTI user 4 KiB entries */
};
static struct xp_gclear *xp_gclear;

unsigned int xp_gclear_refs(unsigned int idx)
{
	return xp_gclear[idx].refs;
}

void *xp_alloc_table(void)
{
	void *p = (void *)get_zeroed_page(GFP_KERNEL_ACCOUNT);

	if (p)
		atomic64_add(PAGE_SIZE, &xp_mem_bytes);
	return p;
}

void xp_free_table(void *p)
{
	if (p) {
		free_page((unsigned long)p);
		atomic64_sub(PAGE_SIZE, &xp_mem_bytes);
	}
}

static void flush_local(void *unused)
{
	__flush_tlb_all();
}

/*
 * Flush every TLB entry, global ones and those of every PCID, and the
 * paging-structure caches, on every CPU (what the kernel's flush_tlb_all()
 * does). on_each_cpu() waits for all of them, and a CPU only takes the IPI
 * with interrupts on, so when this returns no CPU is inside a trap handler or
 * an xol slot that started before.
 */
void xp_flush_all(void)
{
	on_each_cpu(flush_local, NULL, 1);
}

/*
 * The kernel's page-attribute locks, in set_memory.c's order: cpa_lock
 * serialises every change of attributes (!DEBUG_PAGEALLOC), pgd_lock every
 * large-page split. Holding both, no CPA runs on the shared image tables.
 */
void xp_cpa_lock(void)
{
	if (xp_k.cpa_lock && !debug_pagealloc_enabled())
		spin_lock(xp_k.cpa_lock);
	spin_lock(xp_k.pgd_lock);
}

void xp_cpa_unlock(void)
{
	spin_unlock(xp_k.pgd_lock);
	if (xp_k.cpa_lock && !debug_pagealloc_enabled())
		spin_unlock(xp_k.cpa_lock);
}

/* Take G away from a PMD entry (a 2 MiB leaf) or from the PTEs it points at. */
static void g_clear(pmd_t *pmdp, bool *leaf_had, unsigned long *pte_had)
{
	pmd_t pmd = READ_ONCE(*pmdp);
	pte_t *pte;
	int i;

	*leaf_had = false;
	bitmap_zero(pte_had, PTRS_PER_PTE);
	if (pmd_none(pmd) || !pmd_present(pmd))
		return;
	if (pmd_leaf(pmd)) {
		if (pmd_flags(pmd) & _PAGE_GLOBAL) {
			*leaf_had = true;
			set_pmd(pmdp, pmd_clear_flags(pmd, _PAGE_GLOBAL));
		}
		return;
	}
	pte = (pte_t *)pmd_page_vaddr(pmd);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t e = READ_ONCE(pte[i]);

		if (pte_present(e) && (pte_flags(e) & _PAGE_GLOBAL)) {
			__set_bit(i, pte_had);
			set_pte(&pte[i], pte_clear_flags(e, _PAGE_GLOBAL));
		}
	}
}

/* Give back what g_clear() took: only the bit, in case the entry changed. */
static void g_restore(pmd_t *pmdp, bool leaf_had, const unsigned long *pte_had)
{
	pmd_t pmd = READ_ONCE(*pmdp);
	pte_t *pte;
	int i;

	if (pmd_none(pmd) || !pmd_present(pmd))
		return;
	if (pmd_leaf(pmd)) {
		if (leaf_had)
			set_pmd(pmdp, pmd_set_flags(pmd, _PAGE_GLOBAL));
		return;
	}
	pte = (pte_t *)pmd_page_vaddr(pmd);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t e = READ_ONCE(pte[i]);

		/* A global leaf the kernel split since: its every page was global. */
		if (pte_present(e) && (leaf_had || test_bit(i, pte_had)))
			set_pte(&pte[i], pte_set_flags(e, _PAGE_GLOBAL));
	}
}

/* @v's private region in PMD slot @idx of the image, or NULL. */
struct xp_region *xp_region_at(struct xp_view *v, unsigned int idx)
{
	struct xp_region *r;

	list_for_each_entry(r, &v->regions, node)
		if (pmd_index(r->base) == idx)
			return r;
	return NULL;
}

/* @v's private region holding @va, in the image or in module space, or NULL. */
struct xp_region *xp_region_of(struct xp_view *v, unsigned long va)
{
	struct list_head *list = xp_in_modspace(va) ? &v->mregions : &v->regions;
	struct xp_region *r;

	list_for_each_entry(r, list, node)
		if (r->base == (va & PMD_MASK))
			return r;
	return NULL;
}

/* Does @v map region @idx through a table of its own (a hooked region or xol)? */
static bool own_table(struct xp_view *v, unsigned int idx)
{
	return (v->xol.va && pmd_index(v->xol.va) == idx) || xp_region_at(v, idx);
}

/* The PMD slots of @v's hooked regions, as a bitmap of PTRS_PER_PMD bits. */
void xp_region_slots(struct xp_view *v, unsigned long *slots)
{
	struct xp_region *r;

	bitmap_zero(slots, PTRS_PER_PMD);
	list_for_each_entry(r, &v->regions, node)
		__set_bit(pmd_index(r->base), slots);
}

/*
 * Those and the xol slot, as a bitmap of PTRS_PER_PMD bits: the
 * sweeper compares all 512 slots five times a second, and a list walk per
 * slot made that the largest cost views put on other processes (0.1% of
 * the machine's instructions, bench part 1, 2026-11-30).
 */
static void own_tables(struct xp_view *v, unsigned long *own)
{
	xp_region_slots(v, own);
	if (v->xol.va)
		__set_bit(pmd_index(v->xol.va), own);
}

/* The pages of region @r that @v has copies of, as a bitmap by PTE index. */
void xp_region_copies(struct xp_view *v, struct xp_region *r, unsigned long *copied)
{
	struct xp_tpage *t;

	bitmap_zero(copied, PTRS_PER_PTE);
	list_for_each_entry(t, &v->tpages, node)
		if ((t->va & PMD_MASK) == r->base)
			__set_bit(pte_index(t->va), copied);
}

/*
 * Every view's private PMD entry for a region it does not hook itself is the
 * shared entry: copy the shared one again after its global bit changed.
 */
static void views_mirror_shared(unsigned int idx)
{
	pmd_t shared = READ_ONCE(xp_k.image_pmds[idx]);
	struct xp_view *v;

	list_for_each_entry(v, &xp_views, node)
		if (!own_table(v, idx))
			set_pmd(&v->pmd[idx], shared);
}

/*
 * A view is about to hook region @idx. Returns whether an entry changed (the
 * caller flushes before it changes the region's page size).
 */
static bool gclear_get(unsigned int idx)
{
	struct xp_gclear *g = &xp_gclear[idx];

	lockdep_assert_held(&xp_views_lock);
	if (g->refs++)
		return false;
	xp_cpa_lock();
	g_clear(&xp_k.image_pmds[idx], &g->pmd_had_g, g->pte_had_g);
	if (xp_k.user_pmds)
		g_clear(&xp_k.user_pmds[idx], &g->upmd_had_g, g->upte_had_g);
	xp_cpa_unlock();
	views_mirror_shared(idx);
	return true;
}

/* The last view unhooked region @idx; returns whether an entry changed. */
static bool gclear_put(unsigned int idx)
{
	struct xp_gclear *g = &xp_gclear[idx];

	lockdep_assert_held(&xp_views_lock);
	if (WARN_ON_ONCE(!g->refs) || --g->refs)
		return false;
	xp_cpa_lock();
	g_restore(&xp_k.image_pmds[idx], g->pmd_had_g, g->pte_had_g);
	if (xp_k.user_pmds)
		g_restore(&xp_k.user_pmds[idx], g->upmd_had_g, g->upte_had_g);
	xp_cpa_unlock();
	views_mirror_shared(idx);
	return true;
}

/* The shared P4D page (5-level only, else NULL) and PUD page of the image. */
static p4d_t *xp_shared_p4ds(void)
{
	return xp_k.l5 ? (p4d_t *)pgd_page_vaddr(xp_k.image_pgd) : NULL;
}

static pud_t *xp_shared_puds(void)
{
	p4d_t *p4ds = xp_shared_p4ds();

	return p4d_pgtable(p4ds ? p4ds[p4d_index(xp_k.stext)] : __p4d(pgd_val(xp_k.image_pgd)));
}

/* Has the kernel changed a P4D or PUD entry @v copied? (Never after boot.) */
static bool upper_stale(struct xp_view *v)
{
	unsigned long a = xp_k.stext;
	p4d_t *p4ds = xp_shared_p4ds();
	pud_t *puds = xp_shared_puds();
	unsigned int i;

	for (i = 0; p4ds && i < PTRS_PER_P4D; i++)
		if (i != p4d_index(a) && p4d_val(v->p4d[i]) != p4d_val(READ_ONCE(p4ds[i])))
			return true;
	for (i = 0; i < PTRS_PER_PUD; i++)
		if (i != pud_index(a) && !(v->mpmd && i == pud_index(xp_k.mod_lo)) &&
		    pud_val(v->pud[i]) != pud_val(READ_ONCE(puds[i])))
			return true;
	return false;
}

/*
 * Has the kernel changed the shared image tables since @v copied them? Every
 * entry of the private P4D, PUD and PMD pages that the view does not own must
 * be the shared one (gclear_get/put copy the global bit to every view at
 * once); xp_chain_resync() brings them up to what the kernel changed.
 * Under xp_views_lock.
 */
bool xp_chain_stale(struct xp_view *v)
{
	DECLARE_BITMAP(own, PTRS_PER_PMD);
	unsigned int i;

	lockdep_assert_held(&xp_views_lock);
	if (upper_stale(v))
		return true;
	own_tables(v, own);
	for (i = 0; i < PTRS_PER_PMD; i++)
		if (!test_bit(i, own) && pmd_val(v->pmd[i]) != pmd_val(READ_ONCE(xp_k.image_pmds[i])))
			return true;
	return false;
}

/* Fill @ptes with what the 2 MiB leaf @pmd maps: same frames, same attributes. */
static void ptes_of_leaf(pte_t *ptes, pmd_t pmd)
{
	pgprot_t prot = __pgprot(protval_large_2_4k(pmd_flags(pmd)));
	unsigned long pfn = pmd_pfn(pmd);
	int i;

	for (i = 0; i < PTRS_PER_PTE; i++)
		ptes[i] = pfn_pte(pfn + i, prot);
}

/* The translation of @va under the shared PMD entry @pmd: frame and flags. */
static bool shared_pte_of(pmd_t pmd, unsigned long va, unsigned long *pfn, u64 *flags)
{
	pte_t pte;

	if (pmd_none(pmd) || !pmd_present(pmd))
		return false;
	if (pmd_leaf(pmd)) {
		*pfn = pmd_pfn(pmd) + pte_index(va);
		*flags = protval_large_2_4k(pmd_flags(pmd));
		return true;
	}
	pte = READ_ONCE(((pte_t *)pmd_page_vaddr(pmd))[pte_index(va)]);
	*pfn = pte_pfn(pte);
	*flags = pte_flags(pte);
	return pte_present(pte);
}

/* The kernel's own translation of @va (in PMD slot @idx of the image): frame and flags. */
bool xp_shared_pte(unsigned int idx, unsigned long va, unsigned long *pfn, u64 *flags)
{
	return shared_pte_of(READ_ONCE(xp_k.image_pmds[idx]), va, pfn, flags);
}

/*
 * The entries of a region of its own that @v must bring up to the kernel's:
 * those of pages it has no copy of, 4 KiB entries both. Returns whether one
 * changed.
 */
static bool region_resync(struct xp_view *v, struct xp_region *r)
{
	unsigned int i;
	pmd_t shared = READ_ONCE(xp_k.image_pmds[pmd_index(r->base)]);
	DECLARE_BITMAP(copied, PTRS_PER_PTE);
	bool changed = false;

	/*
	 * The same 2 MiB leaf as when the PTEs last followed it: they still map
	 * what it maps (a page given back since clears ->seen, as its PTE kept
	 * the copy's attributes). A shared PTE table is compared entry by entry.
	 */
	if (pmd_present(shared) && pmd_leaf(shared) && pmd_val(shared) == pmd_val(r->seen))
		return false;
	xp_region_copies(v, r, copied);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		unsigned long va = r->base + i * PAGE_SIZE, pfn;
		pte_t pte = READ_ONCE(r->ptes[i]);
		u64 flags;

		if (test_bit(i, copied))
			continue;
		/*
		 * Under a leaf, from the very value ->seen keeps (CPA may
		 * rewrite it meanwhile: the next pass then sees it changed);
		 * under a table, entry by entry.
		 */
		if (!shared_pte_of(shared, va, &pfn, &flags)) {
			if (pte_present(pte)) {		/* the kernel unmapped it */
				set_pte(&r->ptes[i], __pte(0));
				changed = true;
			}
			continue;
		}
		flags &= ~(u64)_PAGE_GLOBAL;	/* a region of a view's own is never global */
		if (pte_present(pte) && pfn == pte_pfn(pte) &&
		    (flags & XP_CMP_MASK) == (pte_flags(pte) & XP_CMP_MASK))
			continue;
		set_pte(&r->ptes[i], pfn_pte(pfn, __pgprot(flags)));
		changed = true;
	}
	/* What the entries were made from: a change since is seen next time. */
	r->seen = pmd_present(shared) && pmd_leaf(shared) ? shared : __pmd(0);
	return changed;
}

/*
 * Follow what the kernel changed in the shared image tables since @v copied
 * them. The kernel changes its image PMD page through CPA: set_memory_*() on
 * a page of the image's physical range changes its alias in the image
 * mapping too (cpa_process_alias()), and splits the 2 MiB leaf that maps it.
 * The image's freed init pages go back to the page allocator and come back
 * as BPF JIT, kprobe or module pages, whose set_memory_rox() does just that:
 * a BPF program loaded, a kprobe registered (xprobes' own questions to
 * kprobes among them: 90-preempt met it) used to end every view. Each
 * copied entry follows without a translation changing page size and frame
 * or attributes in one step (SDM 4.10.2.3): a leaf the kernel split becomes
 * first a private PTE table mapping what the leaf mapped (only the page
 * size changes), every CPU flushes, then the shared table (only attributes
 * of some 4 KiB pages change), every CPU flushes again; any other change
 * keeps the page size, and a flush follows it. In the view's own regions,
 * the entries of pages it has no copy of follow the kernel's (4 KiB both).
 * The kernel never frees a PTE table of the image mapping nor turns one into
 * a leaf after boot (6.1, 6.12), and its P4D and PUD entries there do not
 * change: where one did, this returns false and the caller ends the view
 * rather than guess. Under xp_views_lock.
 */
bool xp_chain_resync(struct xp_view *v)
{
	struct xp_bridge { unsigned int idx; pte_t *ptes; } *bridge = NULL;
	unsigned int i, n = 0;
	bool flush = false, ok = true;
	DECLARE_BITMAP(own, PTRS_PER_PMD);
	struct xp_region *r;

	lockdep_assert_held(&xp_views_lock);
	if (upper_stale(v))
		return false;
	list_for_each_entry(r, &v->regions, node)
		flush |= region_resync(v, r);
	own_tables(v, own);
	for (i = 0; i < PTRS_PER_PMD; i++) {
		pmd_t old = READ_ONCE(v->pmd[i]), new = READ_ONCE(xp_k.image_pmds[i]);

		if (test_bit(i, own) || pmd_val(old) == pmd_val(new))
			continue;
		if (pmd_present(old) && pmd_leaf(old) && pmd_present(new) && !pmd_leaf(new)) {
			pte_t *ptes;

			if (!bridge)
				bridge = kmalloc_array(PTRS_PER_PMD, sizeof(*bridge), GFP_KERNEL);
			ptes = bridge ? xp_alloc_table() : NULL;
			if (!ptes) {
				ok = false;
				break;
			}
			ptes_of_leaf(ptes, old);
			set_pmd(&v->pmd[i], __pmd(__pa(ptes) | _KERNPG_TABLE));
			bridge[n].idx = i;
			bridge[n++].ptes = ptes;
		} else if (!pmd_present(old) || !pmd_present(new) || pmd_leaf(old) == pmd_leaf(new)) {
			set_pmd(&v->pmd[i], new);
		} else {
			ok = false;	/* a table turned into a leaf */
			break;
		}
		flush = true;
	}
	if (flush)
		xp_flush_all();
	for (i = 0; i < n; i++)
		set_pmd(&v->pmd[bridge[i].idx], READ_ONCE(xp_k.image_pmds[bridge[i].idx]));
	if (n)
		xp_flush_all();
	for (i = 0; i < n; i++)
		xp_free_table(bridge[i].ptes);
	kfree(bridge);
	if (ok && !flush)
		return true;	/* every entry was just compared: nothing to follow */
	return ok && !xp_chain_stale(v);
}

/* Build the private chain from the shared tables, down to the private PMD. */
int xp_chain_build(struct xp_view *v, struct netlink_ext_ack *extack)
{
	unsigned long a = xp_k.stext;
	pgd_t pgd = xp_k.image_pgd;
	p4d_t p4d = __p4d(pgd_val(pgd));	/* the same entry when P4D is folded */
	pud_t *puds, pud;

	if (xp_k.l5) {
		p4d = ((p4d_t *)pgd_page_vaddr(pgd))[p4d_index(a)];
		if (p4d_none(p4d) || !p4d_present(p4d) || p4d_leaf(p4d))
			goto layout;
	}
	puds = p4d_pgtable(p4d);
	pud = puds[pud_index(a)];
	if (pud_none(pud) || !pud_present(pud) || pud_leaf(pud) ||
	    pud_pgtable(pud) != xp_k.image_pmds)
		goto layout;

	v->pmd = xp_alloc_table();
	v->pud = xp_alloc_table();
	if (!v->pmd || !v->pud)
		return -ENOMEM;
	/* Under xp_views_lock: every global bit gclear_get() took is off here too. */
	memcpy(v->pmd, xp_k.image_pmds, PAGE_SIZE);
	memcpy(v->pud, puds, PAGE_SIZE);
	v->pud[pud_index(a)] = __pud(__pa(v->pmd) | pud_flags(pud));
	v->nr_tables = 2;

	if (xp_k.l5) {
		v->p4d = xp_alloc_table();
		if (!v->p4d)
			return -ENOMEM;
		memcpy(v->p4d, (void *)pgd_page_vaddr(pgd), PAGE_SIZE);
		v->p4d[p4d_index(a)] = __p4d(__pa(v->pud) | p4d_flags(p4d));
		v->new_pgd = __pgd(__pa(v->p4d) | pgd_flags(pgd));
		v->nr_tables++;
	} else {
		v->new_pgd = __pgd(__pa(v->pud) | pgd_flags(pgd));
	}
	return 0;
layout:
	NL_SET_ERR_MSG(extack, "unexpected page-table layout for the kernel image");
	return -EINVAL;
}

/*
 * Point every hooked page of @v back at its original frame, then every
 * region back at the shared entry, flushing after each step: the chain then
 * maps what the shared tables map (but the xol area), so the members' pgd
 * entries can go back to the shared one without a page-size change. The hooks
 * are disarmed and every CPU has left them (view.c).
 */
void xp_chain_unmap(struct xp_view *v)
{
	struct xp_region *r;
	struct xp_tpage *t;

	lockdep_assert_held(&xp_views_lock);
	if (list_empty(&v->regions) && list_empty(&v->mregions))
		return;
	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(t, &v->tpages, node)
		if (t->region->mod)
			xp_mpage_unmap(t->region, t->va);
		else
			set_pte(&t->region->ptes[pte_index(t->va)],
				pfn_pte(t->orig_pfn,
					pte_pgprot(READ_ONCE(t->region->ptes[pte_index(t->va)]))));
	mutex_unlock(xp_k.text_mutex);
	xp_flush_all();
	list_for_each_entry(r, &v->regions, node)
		set_pmd(&v->pmd[pmd_index(r->base)], READ_ONCE(xp_k.image_pmds[pmd_index(r->base)]));
	xp_mview_unmap(v);
	xp_flush_all();
}

/*
 * Give back the global bits the view's regions took. The chain is no longer
 * loaded anywhere (pgd entries restored and flushed) and the view is off the
 * views list.
 */
void xp_chain_release_globals(struct xp_view *v)
{
	struct xp_region *r;
	struct xp_tpage *t;
	bool changed = false;

	list_for_each_entry(r, &v->regions, node)
		changed |= gclear_put(pmd_index(r->base));
	if (changed)
		xp_flush_all();
	list_for_each_entry(t, &v->tpages, node)
		if (t->region->mod)
			xp_mpage_release(t->va);
}

/* Free every page of the chain; no CPU may walk it any more. */
void xp_chain_free(struct xp_view *v)
{
	struct xp_region *r, *rn;
	struct xp_tpage *t, *tn;

	list_for_each_entry_safe(t, tn, &v->tpages, node) {
		__free_page(t->copy);
		kfree(t);
		atomic64_sub(PAGE_SIZE + sizeof(*t), &xp_mem_bytes);
	}
	list_for_each_entry_safe(r, rn, &v->regions, node) {
		xp_free_table(r->ptes);
		kfree(r);
		atomic64_sub(sizeof(*r), &xp_mem_bytes);
	}
	xp_mview_free(v);
	xp_xol_free(v);
	xp_free_table(v->p4d);
	xp_free_table(v->pud);
	xp_free_table(v->pmd);
}

/*
 * A private PTE table for the 2 MiB region of @va, made on first use. It maps
 * exactly what the view's PMD entry mapped (the global bit is already off),
 * so only the page size changes, and every CPU flushes before anything in it
 * changes frame.
 */
static struct xp_region *get_region(struct xp_view *v, unsigned long va,
				    struct netlink_ext_ack *extack)
{
	unsigned long base = va & PMD_MASK;
	unsigned int idx = pmd_index(va);
	struct xp_region *r;
	pmd_t pmd;

	r = xp_region_at(v, idx);
	if (r)
		return r;

	pmd = READ_ONCE(v->pmd[idx]);
	if (pmd_none(pmd) || !pmd_present(pmd)) {
		NL_SET_ERR_MSG(extack, "kernel text region is not mapped");
		return ERR_PTR(-EFAULT);
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);
	atomic64_add(sizeof(*r), &xp_mem_bytes);
	r->ptes = xp_alloc_table();
	if (!r->ptes) {
		kfree(r);
		atomic64_sub(sizeof(*r), &xp_mem_bytes);
		return ERR_PTR(-ENOMEM);
	}
	r->base = base;
	if (gclear_get(idx))
		xp_flush_all();		/* no global translation of the region is left */
	pmd = READ_ONCE(v->pmd[idx]);
	if (pmd_leaf(pmd)) {
		/* Split the 2 MiB mapping: same frames, same attributes. */
		ptes_of_leaf(r->ptes, pmd);
	} else {
		/* The shared PTE table (non-global now): the same entries. */
		memcpy(r->ptes, (void *)pmd_page_vaddr(pmd), PAGE_SIZE);
	}
	set_pmd(&v->pmd[idx], __pmd(__pa(r->ptes) | _KERNPG_TABLE));
	list_add(&r->node, &v->regions);
	v->nr_tables++;
	xp_flush_all();			/* the page size changed: before any frame does */
	return r;
}

/* The region's last private page is gone: back to the shared entry. */
static void put_region(struct xp_view *v, struct xp_region *r)
{
	unsigned int idx = pmd_index(r->base);

	if (r->nr_pages)
		return;
	set_pmd(&v->pmd[idx], READ_ONCE(xp_k.image_pmds[idx]));
	list_del(&r->node);
	v->nr_tables--;
	xp_flush_all();			/* the page size changed: no CPU walks r->ptes */
	if (gclear_put(idx))
		xp_flush_all();
	xp_free_table(r->ptes);
	kfree(r);
	atomic64_sub(sizeof(*r), &xp_mem_bytes);
}

/*
 * xp_view_get_page() for a module page: the kernel's entry loses its global
 * bit, then the copy is taken and mapped (views/modspace.c).
 */
static struct xp_tpage *get_mpage(struct xp_view *v, struct xp_region *r,
				  struct xp_tpage *t, unsigned long va)
{
	int err;

	t->va = va;
	t->region = r;
	t->users = 1;
	mutex_lock(xp_k.text_mutex);
	err = xp_mpage_map(r, va, t->copy, &t->orig_pfn);
	if (!err)
		list_add_rcu(&t->node, &v->tpages);
	mutex_unlock(xp_k.text_mutex);
	if (err) {
		__free_page(t->copy);
		kfree(t);
		atomic64_sub(PAGE_SIZE + sizeof(*t), &xp_mem_bytes);
		xp_mregion_put(v, r);
		return ERR_PTR(err);
	}
	r->nr_pages++;
	v->nr_pages++;
	xp_flush_all();
	return t;
}

/*
 * The private copy of the text page at @va (page aligned), made on first use.
 * The copy is taken from the page's frame under the kernel's text mutex, so it
 * cannot capture a half-finished text_poke_bp() sequence, and is mapped in
 * before the mutex is released.
 */
struct xp_tpage *xp_view_get_page(struct xp_view *v, unsigned long va,
				  struct netlink_ext_ack *extack)
{
	struct xp_region *r;
	struct xp_tpage *t;
	pte_t *pte, orig;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry(t, &v->tpages, node)
		if (t->va == va) {
			t->users++;
			return t;
		}

	r = xp_in_modspace(va) ? xp_mregion_get(v, va, extack) : get_region(v, va, extack);
	if (IS_ERR(r))
		return ERR_CAST(r);
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (t)
		t->copy = alloc_page(GFP_KERNEL_ACCOUNT);
	if (!t || !t->copy) {
		kfree(t);
		if (r->mod)
			xp_mregion_put(v, r);
		else
			put_region(v, r);
		return ERR_PTR(-ENOMEM);
	}
	atomic64_add(PAGE_SIZE + sizeof(*t), &xp_mem_bytes);
	if (r->mod)
		return get_mpage(v, r, t, va);
	pte = &r->ptes[pte_index(va)];
	orig = READ_ONCE(*pte);
	t->va = va;
	t->region = r;
	t->orig_pfn = pte_pfn(orig);
	t->users = 1;

	mutex_lock(xp_k.text_mutex);
	memcpy(page_address(t->copy), pfn_to_kaddr(t->orig_pfn), PAGE_SIZE);
	set_pte(pte, pfn_pte(page_to_pfn(t->copy), pte_pgprot(orig)));
	list_add_rcu(&t->node, &v->tpages);
	mutex_unlock(xp_k.text_mutex);

	r->nr_pages++;
	v->nr_pages++;
	xp_flush_all();
	return t;
}

static void free_tpage_rcu(struct rcu_head *rcu)
{
	struct xp_tpage *t = container_of(rcu, struct xp_tpage, rcu);

	__free_page(t->copy);
	kfree(t);
}

void xp_view_put_page(struct xp_view *v, struct xp_tpage *t)
{
	struct xp_region *r = t->region;

	lockdep_assert_held(&xp_views_lock);
	if (--t->users)
		return;
	mutex_lock(xp_k.text_mutex);
	if (r->mod)
		xp_mpage_unmap(r, t->va);
	else
		set_pte(&r->ptes[pte_index(t->va)],
			pfn_pte(t->orig_pfn, pte_pgprot(READ_ONCE(r->ptes[pte_index(t->va)]))));
	r->seen = __pmd(0);	/* its attributes follow the kernel's at the next sweep */
	list_del_rcu(&t->node);
	mutex_unlock(xp_k.text_mutex);
	/* No CPU executes the copy after this; trap handlers may still read it. */
	xp_flush_all();
	if (r->mod)
		xp_mpage_release(t->va);
	call_rcu(&t->rcu, free_tpage_rcu);
	atomic64_sub(PAGE_SIZE + sizeof(*t), &xp_mem_bytes);
	r->nr_pages--;
	v->nr_pages--;
	if (r->mod)
		xp_mregion_put(v, r);
	else
		put_region(v, r);
}

/* Find an empty PMD slot in the kernel-image PUD for the xol area. */
unsigned long xp_view_free_pmd_slot(struct xp_view *v)
{
	unsigned int i;

	for (i = pmd_index(xp_k.etext); i < PTRS_PER_PMD; i++)
		if (pmd_none(v->pmd[i]) && pmd_none(xp_k.image_pmds[i]))
			goto found;
	for (i = pmd_index(xp_k.stext); i-- > 0;)
		if (pmd_none(v->pmd[i]) && pmd_none(xp_k.image_pmds[i]))
			goto found;
	return 0;
found:
	return (xp_k.stext & PUD_MASK) + (unsigned long)i * PMD_SIZE;
}

int xp_view_map_table(struct xp_view *v, unsigned long va, pte_t *ptes)
{
	unsigned int i = pmd_index(va);

	if (!pmd_none(v->pmd[i]))
		return -EBUSY;
	set_pmd(&v->pmd[i], __pmd(__pa(ptes) | _KERNPG_TABLE));
	v->nr_tables++;
	return 0;
}

void xp_view_unmap_table(struct xp_view *v, unsigned long va)
{
	pmd_clear(&v->pmd[pmd_index(va)]);
	v->nr_tables--;
}

int xp_pgtable_init(void)
{
	xp_gclear = kcalloc(PTRS_PER_PMD, sizeof(*xp_gclear), GFP_KERNEL);
	return xp_gclear ? 0 : -ENOMEM;
}

void xp_pgtable_exit(void)
{
	kfree(xp_gclear);
}
