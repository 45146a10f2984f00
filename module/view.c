// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process kernel views: private page-table chains for the kernel image.
 *
 * A view belongs to one mm. It replaces the mm's top-level entry for the
 * kernel image (pgd[511]) with a private chain:
 *
 *   pgd[511] -> private P4D (5-level only) -> private PUD -> private PMD
 *
 * The private PUD keeps every entry of the shared one except the kernel-image
 * slot, so PUD[511] (modules, BPF, fixmap) stays the shared page. The private
 * PMD starts as a copy of the shared kernel-image PMD page; each 2 MiB region
 * that holds a hooked page gets a private PTE table mirroring the shared
 * mapping without the global bit, and the hooked pages themselves point at
 * private copies of the text. One otherwise empty PMD slot above the kernel
 * image maps the view's out-of-line execution area (xol).
 *
 * Untraced processes never see any of this: their pgd[511] still points at
 * the shared tables.
 *
 * Locking: xp_views_lock (a mutex) serialises every change to any view, to
 * the kernel half of a traced mm's page tables, and to the global bits of the
 * shared kernel mappings; process-context readers (peek, walk, dumps) take it
 * too. The trap handler reads xp_views, a view's hooks and its pages under RCU
 * only; everything it can reach is freed after synchronize_rcu().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <asm/tlbflush.h>
#include <net/netlink.h>
#include "xprobes.h"

DEFINE_MUTEX(xp_views_lock);
LIST_HEAD(xp_views);		/* RCU list; written under xp_views_lock */
unsigned int xp_nr_views;	/* under xp_views_lock */
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

struct xp_view *xp_view_find_mm(struct mm_struct *mm)
{
	struct xp_view *v;

	list_for_each_entry_rcu(v, &xp_views, node, lockdep_is_held(&xp_views_lock))
		if (v->mm == mm)
			return v;
	return NULL;
}

/* The view of process @nr (caller's pid namespace), or NULL with a message. */
struct xp_view *xp_view_find_pid(u32 nr, struct netlink_ext_ack *extack)
{
	struct task_struct *task = xp_get_task(nr, extack);
	struct xp_view *v = NULL;

	lockdep_assert_held(&xp_views_lock);
	if (!task)
		return NULL;
	task_lock(task);
	if (task->mm)
		v = xp_view_find_mm(task->mm);
	task_unlock(task);
	put_task_struct(task);
	if (!v)
		NL_SET_ERR_MSG_FMT(extack, "pid %u has no kernel view (xprobectl view add %u)",
				   nr, nr);
	return v;
}

/* Build the private chain down to the private copy of the image PMD page. */
static int build_chain(struct xp_view *v, struct netlink_ext_ack *extack)
{
	unsigned long a = xp_k.stext;
	pgd_t *pgd = pgd_offset_pgd(v->mm->pgd, a);
	p4d_t *p4d;
	pud_t *pud;

	v->pgdp = pgd;
	v->orig_pgd = READ_ONCE(*pgd);
	if (pgd_val(v->orig_pgd) != pgd_val(xp_k.image_pgd))
		goto layout;	/* not the shared kernel half */
	p4d = p4d_offset(pgd, a);
	if (p4d_none(*p4d) || !p4d_present(*p4d) || p4d_leaf(*p4d))
		goto layout;
	pud = pud_offset(p4d, a);
	if (pud_none(*pud) || !pud_present(*pud) || pud_leaf(*pud))
		goto layout;

	v->pmd = xp_alloc_table();
	v->pud = xp_alloc_table();
	if (!v->pmd || !v->pud)
		return -ENOMEM;
	memcpy(v->pmd, pud_pgtable(*pud), PAGE_SIZE);
	memcpy(v->pud, p4d_pgtable(*p4d), PAGE_SIZE);
	v->pud[pud_index(a)] = __pud(__pa(v->pmd) | pud_flags(*pud));
	v->nr_tables = 2;

	if (xp_k.l5) {
		v->p4d = xp_alloc_table();
		if (!v->p4d)
			return -ENOMEM;
		memcpy(v->p4d, (void *)pgd_page_vaddr(v->orig_pgd), PAGE_SIZE);
		v->p4d[p4d_index(a)] = __p4d(__pa(v->pud) | p4d_flags(*p4d));
		v->new_pgd = __pgd(__pa(v->p4d) | pgd_flags(v->orig_pgd));
		v->nr_tables++;
	} else {
		v->new_pgd = __pgd(__pa(v->pud) | pgd_flags(v->orig_pgd));
	}
	return 0;
layout:
	NL_SET_ERR_MSG(extack, "unexpected page-table layout for the kernel image");
	return -EINVAL;
}

static void free_view(struct xp_view *v)
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
	if (v->mm)
		mmdrop(v->mm);
	put_pid(v->tgid);
	kfree(v);
	atomic64_sub(sizeof(*v), &xp_mem_bytes);
}

struct xp_view *xp_view_create(u32 nr, u32 flags, struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct xp_view *v;
	int err;

	lockdep_assert_held(&xp_views_lock);
	if (xp_k.unsupported) {
		xp_set_msg(extack, xp_k.unsupported);
		return ERR_PTR(-EOPNOTSUPP);
	}
	task = xp_get_task(nr, extack);
	if (!task)
		return ERR_PTR(-ESRCH);
	if (is_global_init(task)) {
		put_task_struct(task);
		NL_SET_ERR_MSG(extack, "refusing to trace init (pid 1)");
		return ERR_PTR(-EPERM);
	}
	mm = get_task_mm(task);
	if (!mm) {
		put_task_struct(task);
		NL_SET_ERR_MSG_FMT(extack, "pid %u has no user address space (kernel thread or exiting)",
				   nr);
		return ERR_PTR(-ESRCH);
	}
	if (xp_view_find_mm(mm)) {
		mmput(mm);
		put_task_struct(task);
		NL_SET_ERR_MSG_FMT(extack, "pid %u already has a kernel view", nr);
		return ERR_PTR(-EEXIST);
	}

	err = -ENOMEM;
	v = kzalloc(sizeof(*v), GFP_KERNEL_ACCOUNT);
	if (!v)
		goto out;
	atomic64_add(sizeof(*v), &xp_mem_bytes);
	INIT_LIST_HEAD(&v->regions);
	INIT_LIST_HEAD(&v->tpages);
	INIT_LIST_HEAD(&v->hook_list);
	hash_init(v->hooks);
	v->flags = flags;
	v->tgid = get_task_pid(task, PIDTYPE_TGID);
	mmgrab(mm);		/* keeps mm->pgd (and our chain's anchor) alive */
	v->mm = mm;
	v->kpgd = mm->pgd;

	err = build_chain(v, extack);
	if (err) {
		free_view(v);
		goto out;
	}
	set_pgd(v->pgdp, v->new_pgd);
	xp_flush_all();
	list_add_tail_rcu(&v->node, &xp_views);
	xp_nr_views++;
	mmput(mm);
	put_task_struct(task);
	return v;
out:
	mmput(mm);
	put_task_struct(task);
	return ERR_PTR(err);
}

void xp_view_destroy(struct xp_view *v)
{
	struct xp_region *r;

	lockdep_assert_held(&xp_views_lock);

	/*
	 * First disarm every hook and serialise every CPU: when that returns, no
	 * CPU is in a trap or an xol slot of this view (both run with interrupts
	 * off, the sync is an IPI) and none can enter one. Unmapping first would
	 * let a CPU already in the trap handler return into a slot that is gone.
	 */
	xp_hooks_disarm_all(v);
	xp_sync_cores();
	/*
	 * Then unhook the chain: after the flush every CPU walks the shared
	 * tables for this mm. Only then may the trap handler stop finding the
	 * view.
	 */
	set_pgd(v->pgdp, v->orig_pgd);
	xp_flush_all();
	list_del_rcu(&v->node);
	xp_nr_views--;
	list_for_each_entry(r, &v->regions, node)
		gclear_put(pmd_index(r->base));
	/* Trap handlers that found the view before it left the list are done. */
	synchronize_rcu();
	xp_hooks_free_all(v);
	free_view(v);
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

void xp_views_destroy_all(void)
{
	struct xp_view *v, *n;

	mutex_lock(&xp_views_lock);
	list_for_each_entry_safe(v, n, &xp_views, node)
		xp_view_destroy(v);
	mutex_unlock(&xp_views_lock);
}

int xp_views_init(void)
{
	xp_gclear = kcalloc(PTRS_PER_PMD, sizeof(*xp_gclear), GFP_KERNEL);
	return xp_gclear ? 0 : -ENOMEM;
}

void xp_views_exit(void)
{
	xp_views_destroy_all();
	kfree(xp_gclear);
}
