// SPDX-License-Identifier: GPL-2.0
/*
 * Hooks in the text of loaded modules: a view's private tables for module
 * space, how they follow the kernel's own changes there, and a module going
 * away under its hooks.
 *
 * Module space (MODULES_VADDR..MODULES_END: modules, BPF JIT images, kprobe
 * and ftrace trampolines) is one PUD entry, the one above the image's, on
 * 4- and 5-level paging, KASLR or not (checked at load). Every mm shares its
 * PMD page (level2_fixmap_pgt), and unlike the image's tables the kernel
 * changes what lies under it all the time: vmalloc maps and unmaps 4 KiB
 * pages there (never a 2 MiB leaf: execmem asks for no huge mapping),
 * allocates a PTE table for each 2 MiB slot it first uses and frees none,
 * and CPA changes the pages' attributes (set_memory_rox() of every module,
 * BPF program and kprobe slot).
 *
 * A view that hooks module text has, while it does, a private copy of that
 * PMD page (->mpmd, in its private PUD) and a private PTE table for each
 * 2 MiB slot that holds a hooked page (->mregions). Every entry of those it
 * does not own is the kernel's, bit for bit, global bit included: so the
 * kernel's own TLB protocol for module space (flush after unmapping or
 * downgrading, before reuse; nothing after mapping) holds for the view's
 * entries as for the kernel's. Only a hooked page differs: the private
 * entry maps the copy, non-global, and the kernel's own entry for that page
 * has its global bit taken away while any view copies it (as the image's
 * regions do, pgtable.c), so that no global translation of the shared page
 * can serve a traced mm.
 *
 * Following the kernel, synchronously (xp_modspace_sync(), under
 * xp_mod_lock, in any context): the view copies every changed entry
 *  - at the entry of flush_tlb_kernel_range(), which vmalloc calls after it
 *    unmaps and before the pages are freed or the addresses used again
 *    (module space is all VM_FLUSH_RESET_PERMS: vfree() flushes before it
 *    frees), so the kernel's flush that follows covers the view's entries
 *    (when the range it flushes meets module space: most are the rest of
 *    vmalloc space's);
 *  - at the entry of cpa_flush() and cpa_flush_all(), which CPA calls after
 *    it changed entries and before it returns, so again the kernel's flush
 *    covers them;
 *  - at every exit of the module-space allocator (execmem_alloc() on 6.12,
 *    module_alloc() on 6.1, by kprobes on its ret instructions, found by
 *    decoding it at load): new entries, and new PTE tables in the PMD page,
 *    before the allocator's caller has the address. A new translation needs
 *    no flush (no CPU caches a non-present entry).
 * A view's first module-space table is built, and the views list extended,
 * under the same lock, after xp_nr_mviews is raised with a full barrier, so
 * that a kernel change either comes before the copy or finds the view. The
 * sweeper (lifecycle.c) and the page-table check (tables.c) compare every
 * view again, once a pass (xp_modspace_resync()), and count what had to be
 * followed as late (xp_mod_late, `status`): the tests expect none.
 *
 * A module going away (MODULE_STATE_GOING, before its memory is freed):
 * every hook in its text is taken out, announced on the events group
 * (HOOK_ENDED). Hooks are refused in a module that is not live, and in init
 * text (freed after init). A jump over several instructions checks the
 * module's own jump labels and exception table, besides the kernel's
 * (hook.c, jump.c).
 *
 * Locking: xp_views_lock (a mutex) over everything that changes views;
 * xp_mod_lock (a raw spinlock, taken with interrupts off) inside it for the
 * module-space tables, which the kernel's paths above read and write from
 * atomic context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>
#include <net/netlink.h>
#include "compat.h"
#include "xprobes.h"

static DEFINE_RAW_SPINLOCK(xp_mod_lock);
static LIST_HEAD(xp_mviews);		/* views with ->mpmd, under xp_mod_lock */
static atomic_t xp_nr_mviews = ATOMIC_INIT(0);
atomic64_t xp_mod_syncs = ATOMIC64_INIT(0);	/* syncs that copied something */
atomic64_t xp_mod_late = ATOMIC64_INIT(0);	/* changes only the sweeper saw */
atomic64_t xp_mod_unfinished = ATOMIC64_INIT(0);	/* ... before the kernel had finished */
atomic64_t xp_mod_hooks_ended = ATOMIC64_INIT(0);	/* taken out with their module */
static atomic64_t xp_mod_odd = ATOMIC64_INIT(0);	/* a table replaced: never seen */

/* The module-space slot of the shared PUD page. */
static unsigned int mod_pud_slot(void)
{
	return pud_index(xp_k.mod_lo);
}

/* The kernel's PTE table for module-space slot @idx, or NULL. */
static pte_t *shared_ptes(unsigned int idx)
{
	pmd_t pmd = READ_ONCE(xp_k.mod_pmds[idx]);

	if (pmd_none(pmd) || !pmd_present(pmd) || pmd_leaf(pmd))
		return NULL;
	return (pte_t *)pmd_page_vaddr(pmd);
}

/* Do two entries differ in more than the accessed and dirty bits? */
static bool pte_differs(pte_t a, pte_t b)
{
	return (pte_val(a) ^ pte_val(b)) & ~(pteval_t)(_PAGE_ACCESSED | _PAGE_DIRTY);
}

/*
 * Fold one difference into a signature: where (view, slot, entry) and what
 * the kernel has there.
 */
static u64 sig_add(u64 sig, const void *v, unsigned long where, u64 val)
{
	return sig ^ hash_64((unsigned long)v ^ (where << 32) ^ val, 63) ^ 1;
}

/*
 * The first differences a pass found, for the log: what a late follow was
 * (xp_modspace_resync()), so that one seen in a test run can be traced to
 * its path. Filled under xp_mod_lock, printed after it.
 */
struct mod_diffs {
	unsigned int n;
	struct {
		unsigned long va;	/* the page's, or the 2 MiB slot's */
		u64 view, kernel;	/* the entries, the view's before a copy */
		bool slot;
	} d[4];
};

static void diff_note(struct mod_diffs *rep, unsigned long va, u64 view, u64 kernel, bool slot)
{
	if (!rep || rep->n == ARRAY_SIZE(rep->d))
		return;
	rep->d[rep->n].va = va;
	rep->d[rep->n].view = view;
	rep->d[rep->n].kernel = kernel;
	rep->d[rep->n].slot = slot;
	rep->n++;
}

/*
 * Compare @r's entries of pages it has no copy of with the kernel's, and
 * with @apply copy what differs (the first few noted in @rep, if any).
 * Returns a signature of the differences (0: none).
 */
static u64 scan_region(struct xp_region *r, bool apply, struct mod_diffs *rep)
{
	pte_t *t = shared_ptes(pmd_index(r->base));
	unsigned int i;
	u64 sig = 0;

	if (!t) {
		atomic64_inc(&xp_mod_odd);
		return 0;
	}
	for (i = 0; i < PTRS_PER_PTE; i++) {
		pte_t e = READ_ONCE(t[i]), mine = READ_ONCE(r->ptes[i]);

		if (test_bit(i, r->copied) || !pte_differs(mine, e))
			continue;
		sig = sig_add(sig, r, i, pte_val(e));
		diff_note(rep, r->base + i * PAGE_SIZE, pte_val(mine), pte_val(e), false);
		if (apply)
			set_pte(&r->ptes[i], e);
	}
	return sig;
}

static u64 scan_view(struct xp_view *v, bool apply, struct mod_diffs *rep)
{
	DECLARE_BITMAP(own, PTRS_PER_PMD);
	struct xp_region *r;
	unsigned int i;
	u64 sig = 0;

	bitmap_zero(own, PTRS_PER_PMD);
	list_for_each_entry(r, &v->mregions, node) {
		__set_bit(pmd_index(r->base), own);
		sig ^= scan_region(r, apply, rep);
	}
	for (i = 0; i < PTRS_PER_PMD; i++) {
		pmd_t s = READ_ONCE(xp_k.mod_pmds[i]), e = READ_ONCE(v->mpmd[i]);

		if (test_bit(i, own) || pmd_val(e) == pmd_val(s))
			continue;
		sig = sig_add(sig, v, PTRS_PER_PTE + i, pmd_val(s));
		diff_note(rep, (xp_k.mod_lo & PUD_MASK) + i * PMD_SIZE, pmd_val(e), pmd_val(s),
			  true);
		if (!apply)
			continue;
		/* vmalloc only ever adds a PTE table to an empty slot. */
		if (pmd_present(e))
			atomic64_inc(&xp_mod_odd);
		set_pmd(&v->mpmd[i], s);
	}
	return sig;
}

/* Every view against the kernel's module-space tables now (any context). */
static u64 scan_all(bool apply, struct mod_diffs *rep)
{
	struct xp_view *v;
	unsigned long fl;
	u64 sig = 0;

	/* Pairs with the barrier after raising xp_nr_mviews (mview_attach()). */
	smp_mb();
	if (!atomic_read(&xp_nr_mviews))
		return 0;
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	list_for_each_entry(v, &xp_mviews, mnode)
		sig ^= scan_view(v, apply, rep);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	if (sig && apply)
		atomic64_inc(&xp_mod_syncs);
	return sig;
}

static bool sync_all(void)
{
	return scan_all(true, NULL);
}

void xp_modspace_sync(void)
{
	sync_all();
}
NOKPROBE_SYMBOL(xp_modspace_sync);

/*
 * A difference that stays: the kernel may be between a change and its own
 * path's sync (a vmalloc mapping before the allocator returns, a CPA write
 * before its flush), so a difference counts only when the same one is
 * still there a while later, and after the kernel has finished what vfree()
 * leaves unfinished. vfree() clears an area's entries, puts the area on
 * the lazy-purge list, makes its pages' direct map invalid and only then
 * flushes (vm_reset_perms()): a task preempted there, or a CPU its
 * hypervisor has descheduled, holds an unmapped area unflushed as long as
 * it is held, and the views keep its entries until that flush, as every
 * CPU's TLB may. vm_unmap_aliases() purges and flushes every such area now
 * (on_flush_range() follows). A difference nothing finishes stays: an area
 * is purged and flushed once, so a flush the probes did not see is not
 * made again here (only another area's purge, in flight at the same moment
 * and covering it, would follow it too). A difference that goes meanwhile
 * is counted as one the kernel was finishing (`status`). Process context.
 * Returns the signature.
 */
static u64 lasting_diff(void)
{
	u64 sig = scan_all(false, NULL);

	if (!sig)
		return 0;
	msleep(20);
	vm_unmap_aliases();
	if (scan_all(false, NULL) == sig)
		return sig;
	atomic64_inc(&xp_mod_unfinished);
	return 0;
}

static u64 probes_missed(void);
static void report_missed(void);

/*
 * The sweeper's and the tables check's pass (pgtable.c): what it finds to
 * follow, the synchronous paths above missed. kprobes skips a handler it
 * would enter again on the same CPU (a probe hit inside another probe's
 * handler): such a miss is followed here too.
 */
bool xp_modspace_resync(void)
{
	static u64 missed_seen;
	u64 missed = probes_missed();
	struct mod_diffs rep = {};
	unsigned int i;

	if (missed != missed_seen) {
		missed_seen = missed;
		report_missed();
	} else if (!lasting_diff()) {
		return false;
	}
	scan_all(true, &rep);
	for (i = 0; i < rep.n; i++)
		pr_info("module space followed late: %#lx%s: view %#llx, kernel %#llx\n",
			rep.d[i].va, rep.d[i].slot ? " (2 MiB)" : "", rep.d[i].view,
			rep.d[i].kernel);
	atomic64_inc(&xp_mod_late);
	xp_flush_all();
	return true;
}

u64 xp_modspace_odd(void)
{
	return atomic64_read(&xp_mod_odd);
}

/* ---- a view's module-space tables (under xp_views_lock) ------------------ */

/* Give @v a private PMD page for module space (its first hooked module page). */
static int mview_attach(struct xp_view *v)
{
	unsigned long fl;
	pmd_t *pmds;

	if (v->mpmd)
		return 0;
	pmds = xp_alloc_table();
	if (!pmds)
		return -ENOMEM;
	atomic_inc(&xp_nr_mviews);
	smp_mb__after_atomic();	/* pairs with sync_all(): a change after this is followed */
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	memcpy(pmds, xp_k.mod_pmds, PAGE_SIZE);
	v->mpmd = pmds;
	set_pud(&v->pud[mod_pud_slot()], __pud(__pa(pmds) | pud_flags(xp_k.mod_pud)));
	list_add(&v->mnode, &xp_mviews);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	v->nr_tables++;
	xp_flush_all();		/* the same translations, through another table */
	return 0;
}

/* @v has no module-space region left: back to the shared PMD page. */
static void mview_detach(struct xp_view *v)
{
	unsigned long fl;
	pmd_t *pmds = v->mpmd;

	if (!pmds || !list_empty(&v->mregions))
		return;
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	set_pud(&v->pud[mod_pud_slot()], xp_k.mod_pud);
	list_del_init(&v->mnode);
	v->mpmd = NULL;
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	atomic_dec(&xp_nr_mviews);
	v->nr_tables--;
	xp_flush_all();		/* no CPU walks the private page any more */
	xp_free_table(pmds);
}

/* A private PTE table for the module-space 2 MiB slot of @va, made on first use. */
struct xp_region *xp_mregion_get(struct xp_view *v, unsigned long va,
				 struct netlink_ext_ack *extack)
{
	unsigned int idx = pmd_index(va);
	struct xp_region *r;
	unsigned long fl;
	pte_t *t;
	int err;

	list_for_each_entry(r, &v->mregions, node)
		if (r->base == (va & PMD_MASK))
			return r;
	if (!shared_ptes(idx)) {
		NL_SET_ERR_MSG(extack, "the module's text is not mapped by 4 KiB pages");
		return ERR_PTR(-EFAULT);
	}
	err = mview_attach(v);
	if (err)
		return ERR_PTR(err);
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (r)
		r->ptes = xp_alloc_table();
	if (!r || !r->ptes) {
		kfree(r);
		mview_detach(v);
		return ERR_PTR(-ENOMEM);
	}
	atomic64_add(sizeof(*r), &xp_mem_bytes);
	r->base = va & PMD_MASK;
	r->mod = true;
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	t = shared_ptes(idx);
	memcpy(r->ptes, t, PAGE_SIZE);
	set_pmd(&v->mpmd[idx], __pmd(__pa(r->ptes) | _KERNPG_TABLE));
	list_add(&r->node, &v->mregions);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	v->nr_tables++;
	xp_flush_all();		/* the same translations, through another table */
	return r;
}

/* The slot's last private page is gone: back to the kernel's PTE table. */
void xp_mregion_put(struct xp_view *v, struct xp_region *r)
{
	unsigned int idx = pmd_index(r->base);
	unsigned long fl;

	if (r->nr_pages)
		return;
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	set_pmd(&v->mpmd[idx], READ_ONCE(xp_k.mod_pmds[idx]));
	list_del(&r->node);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	v->nr_tables--;
	xp_flush_all();
	xp_free_table(r->ptes);
	kfree(r);
	atomic64_sub(sizeof(*r), &xp_mem_bytes);
	mview_detach(v);
}

/*
 * The global bit of the kernel's entry for a hooked module page, taken away
 * while any view copies the page. Under xp_views_lock.
 */
struct xp_mglobal {
	struct list_head node;
	unsigned long va;
	unsigned int refs;
	bool had_g;
};
static LIST_HEAD(xp_mglobals);

static struct xp_mglobal *mglobal_of(unsigned long va)
{
	struct xp_mglobal *g;

	list_for_each_entry(g, &xp_mglobals, node)
		if (g->va == va)
			return g;
	return NULL;
}

static int mglobal_get(unsigned long va)
{
	struct xp_mglobal *g = mglobal_of(va);
	pte_t *t, e;

	if (g) {
		g->refs++;
		return 0;
	}
	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return -ENOMEM;
	g->va = va;
	g->refs = 1;
	list_add(&g->node, &xp_mglobals);
	xp_cpa_lock();
	t = shared_ptes(pmd_index(va));
	e = t ? READ_ONCE(t[pte_index(va)]) : __pte(0);
	if (pte_present(e) && (pte_flags(e) & _PAGE_GLOBAL)) {
		g->had_g = true;
		set_pte(&t[pte_index(va)], pte_clear_flags(e, _PAGE_GLOBAL));
	}
	xp_cpa_unlock();
	sync_all();		/* every view's copy of the entry too */
	xp_flush_all();		/* no global translation of the page is left */
	return 0;
}

static void mglobal_put(unsigned long va)
{
	struct xp_mglobal *g = mglobal_of(va);
	pte_t *t, e;

	if (WARN_ON_ONCE(!g) || --g->refs)
		return;
	xp_cpa_lock();
	t = shared_ptes(pmd_index(va));
	e = t ? READ_ONCE(t[pte_index(va)]) : __pte(0);
	if (g->had_g && pte_present(e))
		set_pte(&t[pte_index(va)], pte_set_flags(e, _PAGE_GLOBAL));
	xp_cpa_unlock();
	list_del(&g->node);
	kfree(g);
	sync_all();
	xp_flush_all();
}

/*
 * Map the copy @copy of the module page @va in @r. The kernel's entry loses
 * its global bit first (flushed), then the private one maps the copy,
 * non-global (flushed by the caller). Returns the original frame through
 * @orig_pfn. Called under text_mutex.
 */
int xp_mpage_map(struct xp_region *r, unsigned long va, struct page *copy,
		 unsigned long *orig_pfn)
{
	unsigned int i = pte_index(va);
	unsigned long fl;
	pte_t e;
	int err;

	err = mglobal_get(va);
	if (err)
		return err;
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	e = READ_ONCE(r->ptes[i]);
	*orig_pfn = pte_pfn(e);
	memcpy(page_address(copy), pfn_to_kaddr(pte_pfn(e)), PAGE_SIZE);
	__set_bit(i, r->copied);
	set_pte(&r->ptes[i], pfn_pte(page_to_pfn(copy),
				     pte_pgprot(pte_clear_flags(e, _PAGE_GLOBAL))));
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	return 0;
}

/*
 * The copy of @va goes: the kernel's entry back (still non-global), flushed,
 * then its global bit. Called under text_mutex for the first step.
 */
void xp_mpage_unmap(struct xp_region *r, unsigned long va)
{
	unsigned int i = pte_index(va);
	pte_t *t = shared_ptes(pmd_index(va));
	unsigned long fl;

	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	__clear_bit(i, r->copied);
	set_pte(&r->ptes[i], t ? READ_ONCE(t[i]) : __pte(0));
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
}

void xp_mpage_release(unsigned long va)
{
	mglobal_put(va);
}

/* Teardown: every slot back to the kernel's table, then the PMD page (flushed after). */
void xp_mview_unmap(struct xp_view *v)
{
	struct xp_region *r;
	unsigned long fl;

	if (!v->mpmd)
		return;
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	list_for_each_entry(r, &v->mregions, node)
		set_pmd(&v->mpmd[pmd_index(r->base)], READ_ONCE(xp_k.mod_pmds[pmd_index(r->base)]));
	set_pud(&v->pud[mod_pud_slot()], xp_k.mod_pud);
	list_del_init(&v->mnode);
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	atomic_dec(&xp_nr_mviews);
}

/* Teardown, no CPU walks the view any more: free its module-space tables. */
void xp_mview_free(struct xp_view *v)
{
	struct xp_region *r, *rn;

	list_for_each_entry_safe(r, rn, &v->mregions, node) {
		xp_free_table(r->ptes);
		kfree(r);
		atomic64_sub(sizeof(*r), &xp_mem_bytes);
	}
	INIT_LIST_HEAD(&v->mregions);
	xp_free_table(v->mpmd);
	v->mpmd = NULL;
}

/*
 * Check @v's module-space tables (tables.c): every entry it does not own is
 * the kernel's, every copy's entry maps the copy and is not global, and the
 * kernel's entry for a copied page is not global. Returns a message or NULL.
 */
const char *xp_mview_check(struct xp_view *v)
{
	const char *bad = NULL;
	bool differs = false;
	struct xp_region *r;
	unsigned long fl;
	unsigned int i;

	if (!v->mpmd)
		return list_empty(&v->mregions) ? NULL : "module-space regions without a PMD page";
	raw_spin_lock_irqsave(&xp_mod_lock, fl);
	if (pud_pfn(v->pud[mod_pud_slot()]) != PHYS_PFN(__pa(v->mpmd)))
		bad = "its PUD's module-space slot is not its PMD page";
	list_for_each_entry(r, &v->mregions, node) {
		pte_t *t = shared_ptes(pmd_index(r->base));

		if (pmd_pfn(v->mpmd[pmd_index(r->base)]) != PHYS_PFN(__pa(r->ptes)))
			bad = "a module-space region is not mapped by its PTE table";
		for (i = 0; t && i < PTRS_PER_PTE; i++) {
			pte_t e = READ_ONCE(r->ptes[i]), k = READ_ONCE(t[i]);

			if (!test_bit(i, r->copied)) {
				if (pte_differs(e, k))
					differs = true;
			} else if ((pte_flags(e) | pte_flags(k)) & _PAGE_GLOBAL) {
				bad = "a hooked module page is mapped global";
			}
		}
	}
	raw_spin_unlock_irqrestore(&xp_mod_lock, fl);
	if (!bad && differs && lasting_diff())
		bad = "a module-space PTE differs from the kernel's";
	return bad;
}

/* ---- which module, and what it forbids ----------------------------------- */

/*
 * The kernel's list of modules (kernel/module/main.c "modules"): neither
 * __module_address() nor __module_text_address() is exported, so the walk
 * they make is made here, as they make it, under RCU (preemption off): a
 * module leaves the list with list_del_rcu() and is freed after a grace
 * period. Found by name at load and checked by finding this module on it.
 */
static struct list_head *xp_modules;
static void arm(void);
static void unregister_probes(void);

/* The module whose memory holds @a, or NULL. Preemption off. */
static struct module *module_at(unsigned long a)
{
	struct module *mod;

	if (!xp_modules || !xp_in_modspace(a))
		return NULL;
	list_for_each_entry_rcu(mod, xp_modules, list) {
		if (mod->state == MODULE_STATE_UNFORMED)
			continue;
		if (within_module(a, mod))
			return mod;
	}
	return NULL;
}
NOKPROBE_SYMBOL(module_at);

/* As __module_text_address(): the module whose core or init text holds @a. */
static struct module *module_text_at(unsigned long a)
{
	struct module *mod = module_at(a);

	return mod && (xp_mod_core_text(mod, a) || within_module_init(a, mod)) ? mod : NULL;
}
NOKPROBE_SYMBOL(module_text_at);

/*
 * The live module whose core text holds [@start, @start + @size), its name
 * in @name (MODULE_NAME_LEN), or NULL with a message. The caller holds
 * xp_views_lock, which the going notifier takes: the module's text stays
 * until the caller is done, and its hooks are then taken out.
 */
struct module *xp_module_of(unsigned long start, unsigned long size, char *name,
			    struct netlink_ext_ack *extack)
{
	struct module *mod;
	bool init = false, live = false;

	arm();
	if (xp_k.mod_off) {
		xp_set_msg(extack, xp_k.mod_off);
		return NULL;
	}
	preempt_disable();
	mod = module_text_at(start);
	if (mod) {
		init = within_module_init(start, mod);
		live = READ_ONCE(mod->state) == MODULE_STATE_LIVE;
		strscpy(name, mod->name, MODULE_NAME_LEN);
		if (!live || init || !size || module_text_at(start + size - 1) != mod ||
		    mod == THIS_MODULE)
			mod = NULL;
	}
	preempt_enable();
	if (mod)
		return mod;
	if (!strcmp(name, THIS_MODULE->name))
		NL_SET_ERR_MSG(extack, "xprobes' own text: its hit path runs there");
	else if (init)
		NL_SET_ERR_MSG(extack, "init text of a module: freed once the module is initialised");
	else if (name[0] && !live)
		NL_SET_ERR_MSG(extack, "the module is loading or going away");
	else
		NL_SET_ERR_MSG(extack, "not a function in the text of the kernel or of a loaded module");
	return NULL;
}

/* Is [@addr, @addr + @len) in the core text of one live module? */
bool xp_is_module_text(unsigned long addr, size_t len)
{
	struct module *mod;
	bool ok;

	if (!len || !xp_in_modspace(addr))
		return false;
	preempt_disable();
	mod = module_text_at(addr);
	ok = mod && READ_ONCE(mod->state) == MODULE_STATE_LIVE &&
	     !within_module_init(addr, mod) && module_text_at(addr + len - 1) == mod;
	preempt_enable();
	return ok;
}
NOKPROBE_SYMBOL(xp_is_module_text);

/*
 * How many live modules have a function named @name in their text (their
 * own symbol tables, read as kallsyms reads them, under RCU). A plain name
 * kprobes resolves to the first: the caller refuses it when there are more.
 */
unsigned int xp_modules_with(const char *name)
{
	unsigned int n = 0, i;
	struct module *mod;

	if (!xp_modules)
		return 0;
	preempt_disable();
	list_for_each_entry_rcu(mod, xp_modules, list) {
		struct mod_kallsyms *ks;

		if (READ_ONCE(mod->state) != MODULE_STATE_LIVE)
			continue;
		ks = rcu_dereference_sched(mod->kallsyms);
		for (i = 0; ks && i < ks->num_symtab; i++) {
			const Elf_Sym *sym = &ks->symtab[i];

			if (!strcmp(ks->strtab + sym->st_name, name) &&
			    xp_mod_core_text(mod, kallsyms_symbol_value(sym))) {
				n++;
				break;
			}
		}
	}
	preempt_enable();
	return n;
}

/*
 * The tracepoint named @name that a live module other than this one
 * defines, with a reference on that module (*@modp; the caller drops it
 * with module_put()); NULL if none does; an ERR_PTR with @extack set if
 * several do or the one that does is going away. As perf and BPF do, the module stays while we
 * hold a probe on its tracepoint: tracepoint_module_going() expects none
 * left when a module goes.
 */
struct tracepoint *xp_module_tracepoint(const char *name, struct module **modp,
					struct netlink_ext_ack *extack)
{
	struct tracepoint *found = NULL;
	struct module *mod, *owner = NULL;
	const char *other = NULL;
	unsigned int i;

	if (!xp_modules)
		return NULL;
	preempt_disable();
	list_for_each_entry_rcu(mod, xp_modules, list) {
		if (READ_ONCE(mod->state) != MODULE_STATE_LIVE || mod == THIS_MODULE)
			continue;
		for (i = 0; i < mod->num_tracepoints; i++) {
			struct tracepoint *tp = tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);

			if (strcmp(tp->name, name))
				continue;
			if (owner) {
				other = mod->name;
				goto out;
			}
			owner = mod;
			found = tp;
			break;
		}
	}
out:
	if (other) {
		NL_SET_ERR_MSG_FMT(extack, "tracepoint '%s' is defined by modules %s and %s: "
				   "it cannot be told apart", name, owner->name, other);
		owner = NULL;
	} else if (owner && !try_module_get(owner)) {
		NL_SET_ERR_MSG_FMT(extack, "module %s, which defines tracepoint '%s', is going away",
				   owner->name, name);
		owner = NULL;
	}
	preempt_enable();
	*modp = owner;
	if (owner)
		return found;
	return other ? ERR_PTR(-EINVAL) : found ? ERR_PTR(-EBUSY) : NULL;
}

/*
 * Has the exception table of the module at @lo an entry whose instruction
 * is at @lo (@fixup false), or whose fixup lands inside (@lo, @hi)?
 */
static bool module_extable_has(unsigned long lo, unsigned long hi, bool fixup)
{
	const struct exception_table_entry *e;
	struct module *mod;
	bool found = false;
	unsigned int i;

	preempt_disable();
	mod = module_at(lo);
	for (i = 0; mod && !found && i < mod->num_exentries; i++) {
		unsigned long at;

		e = &mod->extable[i];
		at = fixup ? (unsigned long)&e->fixup + e->fixup : (unsigned long)&e->insn + e->insn;
		found = fixup ? at > lo && at < hi : at == lo;
	}
	preempt_enable();
	return found;
}

/* Does a module expect a fault at @addr (its exception table)? */
bool xp_module_extable(unsigned long addr)
{
	return module_extable_has(addr, addr, false);
}

/* Does an exception fixup of the module at @lo land inside (@lo, @hi)? */
bool xp_module_fixup_inside(unsigned long lo, unsigned long hi)
{
	return module_extable_has(lo, hi, true);
}

/* Does a jump label of the module at @lo have its target inside (@lo, @hi)? */
bool xp_module_label_into(unsigned long lo, unsigned long hi)
{
	bool found = false;
#ifdef CONFIG_JUMP_LABEL
	struct module *mod;
	unsigned int i;

	preempt_disable();
	mod = module_at(lo);
	for (i = 0; mod && i < mod->num_jump_entries; i++) {
		unsigned long t = jump_entry_target(&mod->jump_entries[i]);

		if (t > lo && t < hi) {
			found = true;
			break;
		}
	}
	preempt_enable();
#endif
	return found;
}

/*
 * @name (a symbol of the module at @addr, as kallsyms gives it) as
 * MODULE:NAME, in place (@len bytes), so that kprobes looks it up in that
 * module only. Returns why not, or NULL.
 */
const char *xp_module_qualify(char *name, size_t len, unsigned long addr)
{
	char mod[MODULE_NAME_LEN] = "", *tmp;
	struct module *m;

	preempt_disable();
	m = module_at(addr);
	if (m)
		strscpy(mod, m->name, sizeof(mod));
	preempt_enable();
	if (!mod[0])
		return "the function's module went away";
	tmp = kasprintf(GFP_KERNEL, "%s:%s", mod, name);
	if (!tmp)
		return "out of memory";
	if (strscpy(name, tmp, len) < 0) {
		kfree(tmp);
		return "the function's name is too long";
	}
	kfree(tmp);
	return NULL;
}

/* ---- the kernel's paths that change module space -------------------------- */

static int on_change(struct kprobe *p, struct pt_regs *regs)
{
	sync_all();
	return 0;
}
NOKPROBE_SYMBOL(on_change);

/*
 * flush_tlb_kernel_range(start, end): only a range that meets module space
 * (the kernel flushes every entry it changed or took away; vmalloc's lazy
 * purge flushes one range that covers all it freed). Most calls are for
 * the rest of vmalloc space, and cost nothing more now.
 */
static int on_flush_range(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long start = regs->di, end = regs->si;

	if (end > xp_k.mod_lo && start < xp_k.mod_hi)
		sync_all();
	return 0;
}
NOKPROBE_SYMBOL(on_flush_range);

/*
 * At a ret of the allocator: int3 context, where lockdep (rightly) forbids
 * the spinlock. The ret is run by xp_alloc_exit() instead, which follows
 * the tables in the task's own context first. A post-handler keeps kprobes
 * from optimizing the probe into a jump, whose handler could not send the
 * CPU elsewhere.
 */
static int on_alloc_exit(struct kprobe *p, struct pt_regs *regs)
{
	regs->ip = (unsigned long)xp_alloc_exit;
	return 1;	/* kprobes does not run the ret */
}
NOKPROBE_SYMBOL(on_alloc_exit);

static void no_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

/* Before the kernel's flush: cpa_flush(), cpa_flush_all(), flush_tlb_kernel_range(). */
static struct kprobe flush_kps[] = {
	{ .symbol_name = "cpa_flush", .pre_handler = on_change },
	{ .symbol_name = "cpa_flush_all", .pre_handler = on_change },
	{ .symbol_name = "flush_tlb_kernel_range", .pre_handler = on_flush_range },
};
#define XP_ALLOC_EXITS 8
static struct kprobe exit_kps[XP_ALLOC_EXITS];
static unsigned int nr_exit_kps, nr_flush_kps;

/* Hits kprobes skipped on our probes (see xp_modspace_resync()). Under xp_views_lock. */
static u64 probes_missed(void)
{
	u64 n = 0;
	unsigned int i;

	for (i = 0; i < nr_flush_kps; i++)
		n += READ_ONCE(flush_kps[i].nmissed);
	for (i = 0; i < nr_exit_kps; i++)
		n += READ_ONCE(exit_kps[i].nmissed);
	return n;
}

/*
 * The probes kprobes skipped since the last pass (a hit inside another
 * probe's handler), for the log. The sweeper's pass only: one at a time.
 */
static void report_missed(void)
{
	static unsigned long seen[ARRAY_SIZE(flush_kps) + XP_ALLOC_EXITS];
	unsigned int i;

	for (i = 0; i < nr_flush_kps + nr_exit_kps; i++) {
		struct kprobe *kp = i < nr_flush_kps ? &flush_kps[i] : &exit_kps[i - nr_flush_kps];
		unsigned long n = READ_ONCE(kp->nmissed);

		if (n != seen[i])
			pr_info("module space followed late: the probe on %pS missed %lu hits\n",
				kp->addr, n - seen[i]);
		seen[i] = n;
	}
}

/*
 * Every exit of the module-space allocator @name: its ret instructions (or
 * jumps to a return thunk). Refused where it leaves any other way (a tail
 * call would allocate after the probe) or does not decode.
 */
static const char *find_exits(const char *name, unsigned long *exits, unsigned int *n)
{
	unsigned long start, size, pos;
	struct xp_insn insn;
	u8 *func, *buf;

	if (xp_sym_resolve(name, &start, &size) || !size || !xp_is_core_text(start, size))
		return "the module-space allocator was not found";
	/* As built: another kprobe's int3 there must not misalign the decoding. */
	func = xp_text_recovered(start, size);
	buf = func ? kmalloc(size + XP_INSN_MAX, GFP_KERNEL) : NULL;
	if (!buf) {
		kvfree(func);
		return "the module-space allocator could not be read";
	}
	memset(buf, INT3_INSN_OPCODE, size + XP_INSN_MAX);
	memcpy(buf, func, size);
	kvfree(func);
	*n = 0;
	for (pos = 0; pos < size; pos += insn.len) {
		unsigned long ip = start + pos, to;

		if (xp_insn_decode(&insn, buf + pos, XP_INSN_MAX))
			goto odd;
		/* jmp through a register or memory (ff /4, /5): a tail call, maybe */
		if (!insn.map && insn.opcode == 0xff && insn.has_modrm &&
		    (((insn.modrm >> 3) & 7) == 4 || ((insn.modrm >> 3) & 7) == 5))
			goto odd;
		if (insn.kind == XP_INSN_RET) {
			if (insn.len != 1 || *n == XP_ALLOC_EXITS)	/* ret, not ret imm16 */
				goto odd;
			exits[(*n)++] = ip;
			continue;
		}
		if (insn.kind != XP_INSN_JMP && insn.kind != XP_INSN_JCC)
			continue;
		to = ip + insn.len + insn.rel;
		if (to >= start && to < start + size)
			continue;
		/* Leaving the function: a ret patched into a return thunk's jump only. */
		if (insn.kind == XP_INSN_JCC || !xp_is_return_thunk(to) || *n == XP_ALLOC_EXITS)
			goto odd;
		exits[(*n)++] = ip;
	}
	kfree(buf);
	return *n ? NULL : "the module-space allocator has no ret";
odd:
	kfree(buf);
	return "the module-space allocator leaves other than by a ret: module text cannot be hooked";
}

/*
 * Module space must be one PUD entry of the image's PUD page (same pgd and
 * P4D entries), mapped by a PMD page: a view's private PUD page, a copy of
 * that page, then holds the shared entry until the view hooks module text.
 */
static const char *find_tables(void)
{
	struct xp_walk_result w;

	xp_k.mod_lo = MODULES_VADDR;
	xp_k.mod_hi = MODULES_END;
	if (pgd_index(xp_k.mod_lo) != pgd_index(xp_k.stext) ||
	    (xp_k.l5 && p4d_index(xp_k.mod_lo) != p4d_index(xp_k.stext)) ||
	    pud_index(xp_k.mod_lo) != pud_index(xp_k.mod_hi - 1) ||
	    pud_index(xp_k.mod_lo) == pud_index(xp_k.stext) ||
	    (xp_k.mod_lo & ~PUD_MASK))
		return "module space is not one PUD entry beside the image's";
	xp_walk(xp_k.init_mm->pgd, xp_k.mod_lo, &w);
	if (!w.pud)
		return "module space is not mapped";
	xp_k.mod_pud = READ_ONCE(*w.pud);
	if (pud_none(xp_k.mod_pud) || !pud_present(xp_k.mod_pud) || pud_leaf(xp_k.mod_pud))
		return "module space is not mapped by a PMD page";
	xp_k.mod_pmds = pud_pgtable(xp_k.mod_pud);
	return NULL;
}

/*
 * The kernel's list of modules ("modules", kernel/module/main.c), found
 * from this module's own entry without a lookup: every struct module lies
 * in its module's memory, in module space, and the list's head in the
 * kernel's data, outside it.
 */
static const char *find_modules(void)
{
	struct list_head *n, *head = NULL;

	rcu_read_lock();
	for (n = rcu_dereference(list_next_rcu(&THIS_MODULE->list)); n != &THIS_MODULE->list;
	     n = rcu_dereference(list_next_rcu(n)))
		if (!xp_in_modspace((unsigned long)n)) {
			head = n;
			break;
		}
	rcu_read_unlock();
	if (!head)
		return "the kernel's list of modules was not found";
	xp_modules = head;
	return NULL;
}

/* ---- modules going away --------------------------------------------------- */

/*
 * @h ends with its module, for @reason: announced on the events group,
 * counted, and what hook list shows of it kept (the last XP_ENDED_MAX).
 * The caller takes it out.
 */
static void hook_ended(struct xp_view *v, struct xp_hook *h, const char *reason)
{
	struct xp_hook_stats st;
	struct xp_ended *e;

	xp_netlink_hook_ended(v->root_nr, h->id, h->sym, reason);
	atomic64_inc(&xp_mod_hooks_ended);
	if (!v->ended)
		v->ended = kcalloc(XP_ENDED_MAX, sizeof(*v->ended), GFP_KERNEL);
	if (!v->ended)
		return;
	e = &v->ended[v->nr_ended++ % XP_ENDED_MAX];
	xp_hook_stats(h, &st);
	e->id = h->id;
	e->off = h->sym_off;
	e->addr = h->addr;
	e->hits = st.hits;
	strscpy(e->sym, h->sym, sizeof(e->sym));
	strscpy(e->reason, reason, sizeof(e->reason));
}

static int on_module(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;
	struct xp_view *v;
	struct xp_hook *h, *hn;
	char reason[64 + MODULE_NAME_LEN];

	if (state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	snprintf(reason, sizeof(reason), "module %s was unloaded", mod->name);
	mutex_lock(&xp_views_lock);
	/*
	 * A view being freed (view.c) is off the list with its hooks: those in
	 * this module's text go with it first. Closing ones are on the list and
	 * handled as any.
	 */
	xp_views_settle_torn();
	list_for_each_entry(v, &xp_views, node) {
		list_for_each_entry_safe(h, hn, &v->hook_list, vnode) {
			if (!h->mod || !within_module_core(h->addr, mod))
				continue;
			hook_ended(v, h, reason);
			xp_hook_remove(h);
		}
		/*
		 * A hooked tracepoint holds its module; only a forced unload
		 * (rmmod -f, MODULE_FORCE_UNLOAD) gets here with one: ours go
		 * before the kernel's notifiers find our probe on it.
		 */
		list_for_each_entry_safe(h, hn, &v->tp_hooks, vnode) {
			if (xp_tphook_module(h) != mod)
				continue;
			hook_ended(v, h, reason);
			xp_tphook_remove(h);
		}
	}
	mutex_unlock(&xp_views_lock);
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = {
	.notifier_call = on_module,
	/* Before others that free what the module's text refers to. */
	.priority = INT_MAX,
};
static bool module_nb_on;

/*
 * What module space needs of the kernel, looked up in one round (one RCU
 * grace period): the allocator, and any copy the compiler
 * made of a probed path (NAME.constprop.0, .isra.0, .part.0), which would
 * be called instead of the function probed, unseen.
 */
#define XP_CLONES(f) f ".constprop.0", f ".isra.0", f ".part.0"
static const char *const lookups[] = {
	"execmem_alloc", "module_alloc",
	XP_CLONES("cpa_flush"), XP_CLONES("cpa_flush_all"), XP_CLONES("flush_tlb_kernel_range"),
	XP_CLONES("execmem_alloc"), XP_CLONES("module_alloc"),
};

/* At load: where module space is. The rest waits for the first module hook. */
int xp_modspace_init(void)
{
	const char *why;

	if (xp_k.unsupported)
		return 0;
	why = find_tables() ?: find_modules();
	/*
	 * The going notifier at load, not with the probes: registering a
	 * module notifier from inside one (KUnit runs this module's suites from
	 * its own, and they place module hooks) waits on the chain's lock.
	 */
	if (!why && register_module_notifier(&module_nb))
		why = "cannot follow modules going away";
	else if (!why)
		module_nb_on = true;
	if (why) {
		xp_k.mod_off = why;
		pr_info("module text cannot be hooked: %s\n", why);
	}
	return 0;
}

/*
 * Before the first hook in module text (xp_module_of(), under
 * xp_views_lock, before any view has module-space tables): what the
 * kernel's paths need, and their probes. Not at load:
 * registering four probes costs insmod about 0.3 s in the emulator, where
 * 05-insmod-cycles loads the module 55 times. Sets xp_k.mod_off if module
 * text cannot be hooked. Kept until the module unloads.
 */
static bool armed;

static void arm(void)
{
	unsigned long exits[XP_ALLOC_EXITS], addrs[ARRAY_SIZE(lookups)], sizes[ARRAY_SIZE(lookups)];
	const char *why = NULL, *alloc;
	unsigned int i, n = 0;
	int err;

	lockdep_assert_held(&xp_views_lock);
	if (armed || xp_k.mod_off)
		return;
	xp_sym_lookup_many(lookups, ARRAY_SIZE(lookups), addrs, sizes);
	alloc = addrs[0] ? lookups[0] : lookups[1];
	if (!addrs[0] && !addrs[1])
		why = "no module-space allocator (execmem_alloc, module_alloc) was found";
	if (!why)
		why = find_exits(alloc, exits, &n);
	for (i = 2; !why && i < ARRAY_SIZE(lookups); i++)
		if (addrs[i])
			why = "the compiler made a copy of a kernel path module space is followed on";
	for (i = 0; !why && i < ARRAY_SIZE(flush_kps); i++) {
		err = register_kprobe(&flush_kps[i]);
		if (err)
			why = "cannot probe the kernel's module-space flushes";
		else
			nr_flush_kps++;
	}
	for (i = 0; !why && i < n; i++) {
		exit_kps[i].addr = (kprobe_opcode_t *)exits[i];
		exit_kps[i].pre_handler = on_alloc_exit;
		exit_kps[i].post_handler = no_post;
		err = register_kprobe(&exit_kps[i]);
		if (err)
			why = "cannot probe the module-space allocator's exits";
		else
			nr_exit_kps++;
	}
	if (why) {
		xp_k.mod_off = why;
		unregister_probes();	/* not the notifier: this may run inside one */
		pr_info("module text cannot be hooked: %s\n", why);
		return;
	}
	armed = true;
}

/* The kernel's paths' probes, in one RCU grace period. */
static void unregister_probes(void)
{
	struct kprobe *kps[ARRAY_SIZE(flush_kps) + XP_ALLOC_EXITS];
	unsigned int n = 0, i;

	for (i = 0; i < nr_exit_kps; i++)
		kps[n++] = &exit_kps[i];
	for (i = 0; i < nr_flush_kps; i++)
		kps[n++] = &flush_kps[i];
	if (n)
		unregister_kprobes(kps, n);
	nr_exit_kps = nr_flush_kps = 0;
	armed = false;
}

/*
 * A task may still be on its way through xp_alloc_exit() when its probe is
 * gone: module exit waits for RCU-tasks after this (xp_calls_exit()), as a
 * failed init does.
 */
void xp_modspace_exit(void)
{
	if (module_nb_on)
		unregister_module_notifier(&module_nb);
	module_nb_on = false;
	unregister_probes();
}

#ifdef XPROBES_KUNIT
#include "modspace_kunit.c"
#endif
