// SPDX-License-Identifier: GPL-2.0
/*
 * The page tables of a view: the private chain for the kernel image, private
 * PTE tables for hooked 2 MiB regions, private copies of hooked text pages,
 * the global bit of the shared mappings they shadow, and TLB flushes.
 *
 * A view's chain is built from the shared tables, not from any one mm:
 *
 *   pgd[511] -> private P4D (5-level only) -> private PUD -> private PMD
 *
 * The private PUD keeps every entry of the shared one except the kernel-image
 * slot, so PUD[511] (modules, BPF, fixmap) stays the shared page. The private
 * PMD starts as a copy of the shared kernel-image PMD page; each 2 MiB region
 * that holds a hooked page gets a private PTE table mirroring the shared
 * mapping without the global bit, and the hooked pages point at private
 * copies of the text. One otherwise empty PMD slot above the kernel image maps
 * the view's out-of-line execution area (xol.c). Every mm that is a member of
 * the view has its pgd[511] pointing at the chain (view.c).
 *
 * Locking: everything here runs under xp_views_lock. Copies are taken and
 * their PTEs switched under the kernel's text_mutex, which also serialises
 * them with text pokes (coherence.c). The trap handler reads a view's tpages
 * under RCU only.
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
 * The global bit of shared kernel-image mappings that cover a hooked page.
 * With PTI off, kernel text is mapped global, and a global TLB entry loaded by
 * any other mm would keep serving the shared (unhooked) page to the traced mm.
 * While at least one view has a private copy in a 2 MiB region, the shared
 * entries of that region are non-global. Indexed by PMD slot in the shared
 * kernel-image PMD page; under xp_views_lock.
 */
struct xp_gclear {
	unsigned int refs;
	bool pmd_had_g;				/* a 2 MiB leaf that was global */
	DECLARE_BITMAP(pte_had_g, PTRS_PER_PTE);	/* 4 KiB entries that were global */
};
static struct xp_gclear *xp_gclear;


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
 * paging-structure caches, on every CPU. on_each_cpu() waits for all of them,
 * and a CPU only takes the IPI with interrupts on, so when this returns no CPU
 * is inside a trap handler or an xol slot that started before.
 */
void xp_flush_all(void)
{
	on_each_cpu(flush_local, NULL, 1);
}

static int gclear_get(unsigned int idx)
{
	struct xp_gclear *g = &xp_gclear[idx];
	pmd_t *spmd, pmd;
	pte_t *pte;
	int i;

	if (g->refs++)
		return 0;
	spmd = xp_k.image_pmds;
	pmd = READ_ONCE(spmd[idx]);
	g->pmd_had_g = false;
	bitmap_zero(g->pte_had_g, PTRS_PER_PTE);
	if (pmd_leaf(pmd)) {
		if (pmd_flags(pmd) & _PAGE_GLOBAL) {
			g->pmd_had_g = true;
			set_pmd(&spmd[idx], pmd_clear_flags(pmd, _PAGE_GLOBAL));
		}
		return 0;
	}
	pte = (pte_t *)pmd_page_vaddr(pmd);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t e = READ_ONCE(pte[i]);

		if (pte_present(e) && (pte_flags(e) & _PAGE_GLOBAL)) {
			__set_bit(i, g->pte_had_g);
			set_pte(&pte[i], pte_clear_flags(e, _PAGE_GLOBAL));
		}
	}
	return 0;
}

/* Give back the global bit; only the bit, in case the kernel changed the entry. */
static void gclear_put(unsigned int idx)
{
	struct xp_gclear *g = &xp_gclear[idx];
	pmd_t *spmd, pmd;
	pte_t *pte;
	int i;

	if (WARN_ON_ONCE(!g->refs) || --g->refs)
		return;
	spmd = xp_k.image_pmds;
	pmd = READ_ONCE(spmd[idx]);
	if (pmd_leaf(pmd)) {
		if (g->pmd_had_g)
			set_pmd(&spmd[idx], pmd_set_flags(pmd, _PAGE_GLOBAL));
		return;
	}
	pte = (pte_t *)pmd_page_vaddr(pmd);
	for_each_set_bit(i, g->pte_had_g, PTRS_PER_PTE) {
		pte_t e = READ_ONCE(pte[i]);

		if (pte_present(e))
			set_pte(&pte[i], pte_set_flags(e, _PAGE_GLOBAL));
	}
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

/* Give back the global bits the view's regions took (after the chain is unhooked). */
void xp_chain_release_globals(struct xp_view *v)
{
	struct xp_region *r;

	list_for_each_entry(r, &v->regions, node)
		gclear_put(pmd_index(r->base));
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
	xp_xol_free(v);
	xp_free_table(v->p4d);
	xp_free_table(v->pud);
	xp_free_table(v->pmd);
}

/* A private PTE table for the 2 MiB region of @va, made on first use. */
static struct xp_region *get_region(struct xp_view *v, unsigned long va,
				    struct netlink_ext_ack *extack)
{
	unsigned long base = va & PMD_MASK;
	unsigned int idx = pmd_index(va);
	struct xp_region *r;
	pmd_t pmd;
	int i;

	list_for_each_entry(r, &v->regions, node)
		if (r->base == base)
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
	if (!r->ptes || gclear_get(idx)) {
		xp_free_table(r->ptes);
		kfree(r);
		atomic64_sub(sizeof(*r), &xp_mem_bytes);
		return ERR_PTR(-ENOMEM);
	}
	r->base = base;
	r->shared = pmd;
	if (pmd_leaf(pmd)) {
		/* Split the 2 MiB mapping: same frames, same protection, not global. */
		pgprot_t prot = __pgprot(protval_large_2_4k(pmd_flags(pmd)) & ~_PAGE_GLOBAL);
		unsigned long pfn = pmd_pfn(pmd);

		for (i = 0; i < PTRS_PER_PTE; i++)
			r->ptes[i] = pfn_pte(pfn + i, prot);
	} else {
		pte_t *src = (pte_t *)pmd_page_vaddr(pmd);

		for (i = 0; i < PTRS_PER_PTE; i++)
			r->ptes[i] = pte_present(src[i]) ?
				     pte_clear_flags(src[i], _PAGE_GLOBAL) : src[i];
	}
	set_pmd(&v->pmd[idx], __pmd(__pa(r->ptes) | _KERNPG_TABLE));
	list_add(&r->node, &v->regions);
	v->nr_tables++;
	return r;
}

static void put_region(struct xp_view *v, struct xp_region *r)
{
	if (r->nr_pages)
		return;
	set_pmd(&v->pmd[pmd_index(r->base)], r->shared);
	xp_flush_all();
	gclear_put(pmd_index(r->base));
	list_del(&r->node);
	v->nr_tables--;
	xp_free_table(r->ptes);
	kfree(r);
	atomic64_sub(sizeof(*r), &xp_mem_bytes);
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

	r = get_region(v, va, extack);
	if (IS_ERR(r))
		return ERR_CAST(r);
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (t)
		t->copy = alloc_page(GFP_KERNEL_ACCOUNT);
	if (!t || !t->copy) {
		kfree(t);
		put_region(v, r);
		return ERR_PTR(-ENOMEM);
	}
	atomic64_add(PAGE_SIZE + sizeof(*t), &xp_mem_bytes);
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
	set_pte(&r->ptes[pte_index(t->va)],
		pfn_pte(t->orig_pfn, pte_pgprot(READ_ONCE(r->ptes[pte_index(t->va)]))));
	list_del_rcu(&t->node);
	mutex_unlock(xp_k.text_mutex);
	/* No CPU executes the copy after this; trap handlers may still read it. */
	xp_flush_all();
	call_rcu(&t->rcu, free_tpage_rcu);
	atomic64_sub(PAGE_SIZE + sizeof(*t), &xp_mem_bytes);
	r->nr_pages--;
	v->nr_pages--;
	put_region(v, r);
}

/* Find an empty PMD slot in the kernel-image PUD for the xol area. */
unsigned long xp_view_free_pmd_slot(struct xp_view *v)
{
	unsigned int i;

	for (i = pmd_index(xp_k.etext); i < PTRS_PER_PMD; i++)
		if (pmd_none(v->pmd[i]))
			goto found;
	for (i = pmd_index(xp_k.stext); i-- > 0;)
		if (pmd_none(v->pmd[i]))
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
