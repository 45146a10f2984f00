/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of xprobes.ko. */
#ifndef _XPROBES_INTERNAL_H
#define _XPROBES_INTERNAL_H

#include <linux/types.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pgtable.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/netlink.h>
#include <net/netlink.h>

struct bpf_prog;

#include "compat.h"
#include "insn.h"
#include "cover.h"
#include "uapi/xprobes.h"

#define XPROBES_VERSION "0.1.0"

struct netlink_ext_ack;
struct sock;
struct mm_struct;
struct task_struct;
struct kprobe;
struct exception_table_entry;

/*
 * NL_SET_ERR_MSG() for a message chosen at run time among string literals
 * (the pointer is kept, so it must have static storage).
 */
static inline void xp_set_msg(struct netlink_ext_ack *extack, const char *msg)
{
	if (extack)
		extack->_msg = msg;
}

/* kernel.c: facts about the running kernel, fixed at load */
struct xp_kernel {
	unsigned long stext, etext;		/* _stext, _etext */
	struct mutex *text_mutex;		/* serialises every kernel text write */
	const struct exception_table_entry *ex_start, *ex_stop;
	bool l5;				/* 5-level paging */
	pgd_t image_pgd;			/* the shared pgd entry for the image */
	pmd_t *image_pmds;			/* the shared PMD page for the image */
	pmd_t *user_pmds;			/* its PTI user copy, or NULL */
	spinlock_t *pgd_lock, *cpa_lock;	/* the kernel's page-attribute locks */
	struct xp_ranges thunks;		/* the retpoline and ITS thunks (cover.c) */
	struct mm_struct *init_mm;		/* the kernel's own mm (not exported) */
	const char *unsupported;		/* why views cannot work here, or NULL */
	/* module space (views/modspace.c) */
	unsigned long mod_lo, mod_hi;		/* MODULES_VADDR, MODULES_END */
	pud_t mod_pud;				/* the shared PUD entry for it */
	pmd_t *mod_pmds;			/* the shared PMD page it points at */
	const char *mod_off;			/* why module text cannot be hooked, or NULL */
};
extern struct xp_kernel xp_k;
int xp_kernel_init(void);
void xp_unsupported(const char *why);	/* at load only: one more reason views are off */
bool xp_is_core_text(unsigned long addr, size_t len);
void *xp_text(unsigned long addr);
void xp_text_read(void *dst, unsigned long addr, size_t len);

/* views/modspace.c: hooks in the text of loaded modules */
static inline bool xp_in_modspace(unsigned long addr)
{
	return addr >= xp_k.mod_lo && addr < xp_k.mod_hi;
}
int xp_modspace_init(void);
void xp_modspace_exit(void);
struct module;
struct module *xp_module_of(unsigned long start, unsigned long size, char *name,
			    struct netlink_ext_ack *extack);
bool xp_module_extable(unsigned long addr);
bool xp_is_module_text(unsigned long addr, size_t len);
unsigned int xp_modules_with(const char *name);
struct tracepoint;
struct tracepoint *xp_module_tracepoint(const char *name, struct module **modp,
					struct netlink_ext_ack *extack);
bool xp_module_fixup_inside(unsigned long lo, unsigned long hi);
bool xp_module_label_into(unsigned long lo, unsigned long hi);
const char *xp_module_qualify(char *name, size_t len, unsigned long addr);
/* A hook the kernel took away (its module went), as hook list shows it. */
#define XP_ENDED_MAX	8
struct xp_ended {
	u32 id;
	u32 off;
	unsigned long addr;
	u64 hits;
	char sym[64];
	char reason[96];
};
void xp_modspace_sync(void);
void xp_alloc_exit(void);		/* views/alloc_exit.S */
bool xp_modspace_resync(void);
u64 xp_modspace_odd(void);
extern atomic64_t xp_mod_syncs, xp_mod_late, xp_mod_unfinished, xp_mod_hooks_ended;
struct xp_view;
struct xp_region;
struct xp_region *xp_mregion_get(struct xp_view *v, unsigned long va,
				 struct netlink_ext_ack *extack);
void xp_mregion_put(struct xp_view *v, struct xp_region *r);
int xp_mpage_map(struct xp_region *r, unsigned long va, struct page *copy,
		 unsigned long *orig_pfn);
void xp_mpage_unmap(struct xp_region *r, unsigned long va);
void xp_mpage_release(unsigned long va);
void xp_mview_unmap(struct xp_view *v);
void xp_mview_free(struct xp_view *v);
const char *xp_mview_check(struct xp_view *v);

/* symbols.c */
struct xp_kp_answer {
	int err;
	unsigned int flags;	/* KPROBE_FLAG_* */
	unsigned int size;	/* instruction length by the kernel's decoder */
};
int xp_sym_resolve(const char *name, unsigned long *addrp, unsigned long *size);
unsigned long xp_sym_lookup(const char *name, unsigned long *size);
void xp_sym_lookup_many(const char *const *names, int n, unsigned long *addrs,
			unsigned long *sizes);
#define XP_KP_ASK_MAX	8
int xp_kprobe_question(struct kprobe *p, struct pt_regs *regs);	/* marks our questions */
void xp_kprobe_ask(const unsigned long *addrs, struct xp_kp_answer *ans, int n);
unsigned long xp_func_body_ask(unsigned long start, struct xp_kp_answer *ans);
unsigned long xp_func_body(unsigned long start);
bool xp_sym_at(unsigned long addr, const char *want, unsigned long *off, unsigned long *size);
int xp_sym_name(unsigned long addr, char *buf, size_t len, unsigned long *off);

/* walk.c */
struct xp_walk_result {
	phys_addr_t phys;	/* physical address the walk ends at */
	unsigned long flags;	/* flags of the leaf entry */
	int level;		/* 1 = 4K PTE, 2 = 2M PMD, 3 = 1G PUD */
	u64 pgd_e, p4d_e, pud_e, pmd_e, pte_e;	/* raw entries met on the way */
	pud_t *pud;
	pmd_t *pmd;
	pte_t *pte;
};
int xp_walk(pgd_t *pgd, unsigned long addr, struct xp_walk_result *res);

/* proc.c */
struct task_struct *xp_get_task(u32 pid, struct netlink_ext_ack *extack);
struct mm_struct *xp_get_mm(u32 pid, struct netlink_ext_ack *extack);

/* peek.c */
int xp_peek(u32 pid, unsigned long addr, u8 *buf, size_t len, struct netlink_ext_ack *extack);

/* view.c: see the locking rules at the top of view.c */
#define XP_XOL_PAGES	4
#define XP_SLOT_SIZE	32		/* one copy: displaced insn, sti, jmp back */
#define XP_XOL_SLOTS	(XP_XOL_PAGES * PAGE_SIZE / (2 * XP_SLOT_SIZE))

/* A 2 MiB region of kernel text mapped through a private PTE table. */
struct xp_region {
	struct list_head node;		/* in view->regions, or ->mregions */
	unsigned long base;		/* 2 MiB aligned */
	pte_t *ptes;			/* private PTE table */
	unsigned int nr_pages;		/* private text pages in it */
	pmd_t seen;			/* the shared leaf the PTEs last followed, or 0 */
	bool mod;			/* in module space (views/modspace.c) */
	DECLARE_BITMAP(copied, PTRS_PER_PTE);	/* module space: entries of copies,
						 * under xp_mod_lock */
};

/* A private copy of one kernel text page. */
struct xp_tpage {
	struct list_head node;		/* in view->tpages (RCU) */
	unsigned long va;		/* page-aligned text address */
	struct page *copy;
	unsigned long orig_pfn;
	struct xp_region *region;
	unsigned int users;		/* hooks on this page */
	struct rcu_head rcu;
};

/* Out-of-line execution area: one private 2 MiB slot above the image. */
struct xp_xol {
	unsigned long va;		/* 0 until the first hook needs it */
	pte_t *ptes;
	struct page *pages[XP_XOL_PAGES];
	DECLARE_BITMAP(used, XP_XOL_SLOTS);
};

/* An address space running on a view's chain (view.c). */
struct xp_member {
	struct list_head node;		/* in view->members, under view->lock */
	struct mm_struct *mm;		/* mmgrab()ed until detached */
	struct pid *tgid;		/* the process it joined for */
	u64 gen_before, gen_joined;	/* mm->context.tlb_gen around the join */
};

struct xp_view {
	struct list_head node;		/* in xp_views (RCU) */
	/*
	 * members, nr_members, dying. Raw: the fork and exec tracepoints take
	 * it with preemption off, where PREEMPT_RT's spinlock_t may not sleep.
	 */
	raw_spinlock_t lock;
	struct list_head members;	/* struct xp_member */
	unsigned int nr_members;
	bool dying;
	/*
	 * Closed, torn down by view.c's teardown work: its hooks are
	 * disarmed, lookups refuse it; it leaves xp_views later. Under
	 * xp_views_lock, like end_reason and close_node.
	 */
	bool closing;
	const char *end_reason;		/* announced when it is gone, or NULL */
	struct list_head close_node;	/* in view.c's closed views */
	bool diverged;			/* the audit found a copy differing (coherence.c) */
	bool jumped;			/* a call or jump hook was live: teardown waits (jump.c) */
	struct pid *root;		/* the process the view was made for */
	u32 root_nr;			/* its pid, as the creator named it */
	u32 flags;			/* XPROBES_F_* */
	u32 owner;			/* netlink port id of its owner, 0 if persistent */
	struct sock *owner_sk;		/* the owning socket, held (lifecycle.c) */
	pgd_t orig_pgd, new_pgd;	/* shared and private values of pgd[511] */
	p4d_t *p4d;			/* private P4D page (5-level only) */
	pud_t *pud;			/* private PUD page */
	pmd_t *pmd;			/* private PMD page for the kernel image */
	pmd_t *mpmd;			/* private PMD page for module space, or NULL
					 * (views/modspace.c; under xp_mod_lock) */
	struct list_head mnode;		/* in xp_mviews while ->mpmd is set */
	struct list_head regions;	/* struct xp_region in the image */
	struct list_head mregions;	/* struct xp_region in module space */
	struct xp_ended *ended;		/* hooks the kernel took away, the last
					 * XP_ENDED_MAX (views/modspace.c) */
	unsigned int nr_ended;		/* ... ever: ended[nr % XP_ENDED_MAX] next */
	struct list_head tpages;	/* struct xp_tpage (RCU) */
	struct xp_xol xol;
	DECLARE_HASHTABLE(hooks, 6);	/* struct xp_hook by address (RCU) */
	struct list_head hook_list;	/* struct xp_hook */
	unsigned int nr_hooks, nr_pages, nr_tables;
	struct xp_hook *uevent_hook;	/* carries its user hooks' events (uevent.c) */
	struct xp_hook *usigret_hook;	/* moves sigreturns out of covers (ucover.c) */
	struct xp_hook *guard;		/* keeps tasks without an mm off its tables,
					 * once it has a jump over several
					 * instructions (guard.c); set once */
	struct xp_urecbuf *urec;	/* its records hooks' buffers, set once (urec.c) */
	struct xp_unwinds *unwinds;	/* its threads' unwindings, with its first
					 * unwinder hook (uunwind.c) */
	u8 urec_roles;			/* XP_UREC_*: its hooks that hand records over */
	bool urec_calls;		/* ... folding calls (XPROBES_F_CALLS): set by
					 * the first of them, under xp_views_lock */
	bool urec_sums;			/* ... and the process summing calls itself
					 * (XPROBES_F_SUMS): likewise */
	bool seccomp;			/* its process installs a seccomp filter: no
					 * more user hooks (useccomp.c), under
					 * xp_views_lock */
	bool dispatch;			/* ... or turns on syscall user dispatch */
	struct list_head tp_hooks;	/* its tracepoint hooks (hooks/tracepoint.c), RCU */
};

/*
 * The entry of the page tables at @pgd that maps the kernel image: always
 * the last one (checked at load, kernel.c), a constant offset.
 */
static inline pgd_t *xp_image_slot(pgd_t *pgd)
{
	return pgd + PTRS_PER_PGD - 1;
}

/*
 * Does the image entry of the page tables at @pgd hold @val? Raw values,
 * read once: the hit paths ask (pgd_val() is a paravirt call), the jump
 * path with the value its hook keeps (jump.c).
 */
static inline bool xp_pgd_slot_is(pgd_t *pgd, pgdval_t val)
{
	BUILD_BUG_ON(sizeof(pgd_t) != sizeof(pgdval_t));
	return READ_ONCE(xp_image_slot(pgd)->pgd) == val;
}

/* Do the page tables at @pgd carry @v's chain? */
static inline bool xp_pgd_in_view(pgd_t *pgd, const struct xp_view *v)
{
	return xp_pgd_slot_is(pgd, v->new_pgd.pgd);
}

extern struct mutex xp_views_lock;
extern struct list_head xp_views;
extern unsigned int xp_nr_views;

/*
 * The views that are not closing, under xp_views_lock. A closing view
 * (xp_view_close()) has every hook disarmed and its members go back with
 * its teardown: the sweeper, the optimizer, the dumps leave it alone. The
 * _safe form lets the body close the view it is at.
 */
static inline struct xp_view *xp_open_view_from(struct xp_view *v)
{
	while (!list_entry_is_head(v, &xp_views, node) && v->closing)
		v = list_next_entry(v, node);
	return v;
}

#define xp_for_each_open_view(v)						\
	for (v = xp_open_view_from(list_first_entry(&xp_views, typeof(*v), node));	\
	     !list_entry_is_head(v, &xp_views, node);				\
	     v = xp_open_view_from(list_next_entry(v, node)))
#define xp_for_each_open_view_safe(v, n)					\
	for (v = xp_open_view_from(list_first_entry(&xp_views, typeof(*v), node)),	\
	     n = list_next_entry(v, node);					\
	     !list_entry_is_head(v, &xp_views, node);				\
	     v = xp_open_view_from(n), n = list_next_entry(v, node))
struct xp_view *xp_view_of_pgd(pgd_t *pgd);
struct xp_view *xp_view_of_mm(struct mm_struct *mm);
struct xp_view *xp_view_find_pid(u32 nr, struct netlink_ext_ack *extack);
struct xp_view *xp_view_create(u32 nr, u32 flags, struct sock *owner_sk, u32 owner,
			       struct netlink_ext_ack *extack);
void xp_view_close(struct xp_view *v, const char *reason);
void xp_views_settle(void);
void xp_views_settle_torn(void);
extern struct list_head xp_views_torn;
void xp_view_destroy(struct xp_view *v);
int xp_member_add(struct xp_view *v, struct mm_struct *mm, struct pid *tgid, gfp_t gfp);
/* mpool.c: members at hand for the fork and exec tracepoints */
struct xp_member *xp_member_get(gfp_t gfp);
void xp_member_put_unused(struct xp_member *m, gfp_t gfp);
void xp_member_pool_fill(void);
void xp_member_pool_drain(void);
unsigned int xp_member_pool_count(void);
unsigned int xp_view_reap_members(struct xp_view *v);
bool xp_view_has_process(struct xp_view *v, struct pid *tgid, struct mm_struct *not);
void xp_views_destroy_all(void);

/* pgtable.c */
extern atomic64_t xp_mem_bytes;
void *xp_alloc_table(void);
void xp_free_table(void *p);
void xp_flush_all(void);
void xp_cpa_lock(void);
void xp_cpa_unlock(void);
int xp_chain_build(struct xp_view *v, struct netlink_ext_ack *extack);
void xp_chain_unmap(struct xp_view *v);
void xp_chain_release_globals(struct xp_view *v);
unsigned int xp_gclear_refs(unsigned int idx);
bool xp_chain_stale(struct xp_view *v);
bool xp_chain_resync(struct xp_view *v);
/* PTE flags two translations must agree on (not G, A, D). */
#define XP_CMP_MASK	(PTE_FLAGS_MASK & ~(_PAGE_GLOBAL | _PAGE_ACCESSED | _PAGE_DIRTY))
bool xp_shared_pte(unsigned int idx, unsigned long va, unsigned long *pfn, u64 *flags);
struct xp_region *xp_region_at(struct xp_view *v, unsigned int idx);
struct xp_region *xp_region_of(struct xp_view *v, unsigned long va);
void xp_region_slots(struct xp_view *v, unsigned long *slots);
void xp_region_copies(struct xp_view *v, struct xp_region *r, unsigned long *copied);
void xp_chain_free(struct xp_view *v);
struct xp_tpage *xp_view_get_page(struct xp_view *v, unsigned long va,
				  struct netlink_ext_ack *extack);
void xp_view_put_page(struct xp_view *v, struct xp_tpage *t);
unsigned long xp_view_free_pmd_slot(struct xp_view *v);
int xp_view_map_table(struct xp_view *v, unsigned long va, pte_t *ptes);
void xp_view_unmap_table(struct xp_view *v, unsigned long va);
int xp_pgtable_init(void);
void xp_pgtable_exit(void);

/* tables.c */
struct xp_tables_report {
	unsigned int views, regions, members;
	char first[128];		/* the first violation found */
};
extern atomic64_t xp_table_checks, xp_table_violations;
unsigned int xp_tables_check(struct xp_tables_report *rep);

/* lifecycle.c */
extern atomic64_t xp_followed_forks, xp_followed_execs, xp_follow_failures;
void xp_lifecycle_start(void);
void xp_lifecycle_stop(void);
bool xp_lifecycle_following(void);
void xp_views_release_owner(u32 portid, bool any);
int xp_lifecycle_init(void);
void xp_lifecycle_exit(void);

/* coherence.c */
extern atomic64_t xp_mirrored, xp_conflicts, xp_mismatches, xp_audits;

void xp_conflicts_flush(void);

/* kpstate.c */
const char *xp_kprobes_broken(void);
void xp_kpstate_init(void);
void xp_kpstate_exit(void);
bool xp_poke_probe_armed(void);

/* readers.c */
extern atomic64_t xp_backups_fixed, xp_kprobes_refused;
void xp_readers_poke(unsigned long addr, const u8 *src, size_t len);
const char *xp_readers_init(void);
void xp_readers_exit(void);
bool xp_kprobes_guarded(void);
unsigned int xp_audit_all(void);
void xp_mirror_write(unsigned long addr, const u8 *src, size_t len, bool set);
int xp_coherence_init(void);
void xp_coherence_exit(void);

/* hook.c */
struct xp_hook_stats {
	u64 hits;			/* taken by the view's own tasks */
	u64 dropped;			/* other contexts on the view's CR3 */
	u64 nested;			/* inside the dispatch of another hit */
};

struct xp_hook {
	struct hlist_node hnode;	/* in view->hooks (RCU) */
	struct list_head vnode;		/* in view->hook_list */
	struct xp_view *view;
	u32 id;
	unsigned long addr;
	u64 cookie;
	struct xp_insn insn;		/* the displaced instruction (the first covered one) */
	u8 orig[XP_COVER_MAX];		/* the shared text's bytes from addr */
	u8 cover;			/* bytes a jump covers (insn.len for an int3) */
	u8 ninsn;			/* whole instructions in them */
	struct xp_tpage *tpage;
	struct xp_tpage *tpage2;	/* the next page, where a jump's bytes cross into it */
	int slot;			/* xol slot, -1 when emulated */
	unsigned long slot_va;
	struct xp_hook_stats __percpu *stats;
	/* Kept for the jump path (jump.c) when the hook takes its entry: */
	pgdval_t view_pgd;		/* ->view->new_pgd's raw value */
	unsigned long hit_ip;		/* ->addr + 1, ip at a hit as after an int3 */
	char sym[64];			/* MODULE:SYMBOL in a module's text */
	bool mod;			/* in a module's text (views/modspace.c) */
	unsigned int sym_off;
	bool broken;			/* displaced by kernel text patching */
	bool any_context;		/* XPROBES_F_ANY_CONTEXT */
	bool call_ok;			/* may become a call or jump hook (jump.c) */
	int jentry;			/* its entry (jump_entry.S), -1 if none */
	const char *why_int3;		/* why it is not a call or jump hook, or NULL */
	u8 mode;			/* XP_HOOK_*: a live jump or a trap (jump.c) */
	bool tail_ours;			/* copy bytes 1..4 hold our jump's rel32 */
	bool tail_conflict;		/* the kernel wrote behind our live jump (coherence.c) */
	bool went_live;			/* its jump was in the copy once: retired after RCU-tasks */
	bool jump_pending;		/* an int3 waiting for the optimizer to become a jump */
	u64 pending_seq;		/* the optimizer pass it waits for (jump.c) */
	struct bpf_prog __rcu *prog;	/* run directly on each hit (prog.c) */
	/* The module's own handler, instead of BPF (uevent.c); fixed from creation. */
	void (*internal)(struct xp_hook *h, struct pt_regs *regs);
	/* Where its jump goes instead of an entry: the guard's (guard.c). */
	unsigned long redirect;
	u8 urec_role;			/* XP_UREC_*: hands the view's records over first */
	bool special;			/* ->urec_role or ->internal: fixed from creation */
	bool kp_asked;			/* kprobes said yes to its address when it was placed */
	/*
	 * A tracepoint hook (hooks/tracepoint.c): no instruction of its own,
	 * not in ->hooks or ->hook_list but in view->tp_hooks (by ->vnode).
	 */
	struct xp_tphook *tph;
	struct rcu_head rcu;
};

enum { XP_HOOK_TRAP, XP_HOOK_CALL };

/* CALL: a live jump, of either kind */

/* The hook's first byte in its view's private copy of the page. */
static inline u8 *xp_hook_copy(struct xp_hook *h)
{
	return (u8 *)page_address(h->tpage->copy) + offset_in_page(h->addr);
}

/*
 * Byte @i of the hook's bytes in its view's copies: past the end of the
 * page, in the copy of the next one (->tpage2, which a jump whose bytes
 * cross the boundary holds).
 */
static inline u8 *xp_hook_byte(struct xp_hook *h, unsigned int i)
{
	unsigned long off = offset_in_page(h->addr) + i;

	if (off >= PAGE_SIZE)
		return (u8 *)page_address(h->tpage2->copy) + off - PAGE_SIZE;
	return (u8 *)page_address(h->tpage->copy) + off;
}

/* Does a jump at @addr put bytes on the next page? */
static inline bool xp_jump_crosses(unsigned long addr)
{
	return offset_in_page(addr) + XP_JUMP_SIZE > PAGE_SIZE;
}

/*
 * From a kprobe's pre-handler on a function's first instruction: make the
 * function return @ret at once, through a real ret (just_return.S), and tell
 * kprobes to resume there. The way the kernel's override_return works.
 */
void xp_just_return(void);
static __always_inline int xp_probe_return(struct pt_regs *regs, unsigned long ret)
{
	regs->ax = ret;
	regs->ip = (unsigned long)xp_just_return;
	return 1;
}

extern unsigned int xp_nr_hooks;
struct xp_hook *xp_hook_add(struct xp_view *v, const char *sym, const u32 *off,
			    u64 cookie, u32 flags, struct netlink_ext_ack *extack);
/* xp_hook_add() flags, never from netlink: the view's hook for user-hook events */
#define XP_F_UEVENTS	(1U << 31)
/* ... and its guard (guard.c) */
#define XP_F_GUARD	(1U << 30)
/* ... and its sigreturn fixup for user hooks' covers (ucover.c) */
#define XP_F_USIGRET	(1U << 29)
int xp_hook_del(u32 id, struct netlink_ext_ack *extack);
struct xp_hook *xp_hook_new(struct xp_view *v, u64 cookie, u32 flags);
void xp_hook_free(struct xp_hook *h);
int xp_hook_publish(struct xp_hook *h);
void xp_hook_unpublish(struct xp_hook *h);
struct xp_hook *xp_hook_overlapping(struct xp_view *v, unsigned long lo, unsigned long hi);

/* hooks/tracepoint.c: SYMBOL "tracepoint:[CATEGORY:]NAME" */
#define XP_TP_PREFIX	"tracepoint:"
extern atomic64_t xp_tp_yields, xp_tp_settles;
void xp_sys_threads(u32 *flagged, u32 *all);
void xp_tp_init(void);
void xp_tp_exit(void);
struct xp_hook *xp_tphook_add(struct xp_view *v, const char *spec, const u32 *offp,
			      u64 cookie, u32 flags, struct netlink_ext_ack *extack);
void xp_tphook_remove(struct xp_hook *h);
void xp_tphooks_disarm(struct xp_view *v);
void xp_tphooks_free(struct xp_view *v);
u32 xp_tphook_flags(struct xp_hook *h);
u32 xp_tphook_sites(struct xp_hook *h);
struct module *xp_tphook_module(struct xp_hook *h);
struct bpf_prog *xp_tphook_prog_get(struct xp_hook *h, int fd, struct netlink_ext_ack *extack);
int xp_tphook_set_prog(struct xp_hook *h, struct bpf_prog *prog);
void xp_tps_settle(void);
bool xp_tp_int3(struct xp_view *v, struct pt_regs *regs, unsigned long addr);
bool xp_tp_site_in(struct xp_view *v, unsigned long addr);
void xp_tp_sys_join(struct xp_view *v, struct task_struct *t);
bool xp_tp_sites_inside(struct xp_view *v, unsigned long lo, unsigned long hi);
const char *xp_entry_inside(struct xp_hook *h);
void xp_hook_remove(struct xp_hook *h);
void xp_uevent_fire(struct xp_hook *kh, struct pt_regs *kregs);	/* uevent.c */
void xp_usigret_fire(struct xp_hook *kh, struct pt_regs *kregs);	/* ucover.c */
/* urec.c: the hooks that hand a view's user-hook records over */
#define XP_UREC_OUT	1	/* switch_mm_irqs_off: current leaves */
#define XP_UREC_IN	2	/* finish_task_switch: prev has left, current comes */
#define XP_UREC_EXIT	4	/* do_exit: current's last records, before its mm goes */
#define XP_UREC_WAKE	8	/* try_to_wake_up: current's records, so that the
				 * program sees the function it wakes from */
#define XP_UREC_UPROBE	16	/* uprobe_notify_resume, uprobe_handle_trampoline:
				 * current's records, before a uprobe's or a
				 * uretprobe's programs see the call */
#define XP_UREC_ALL	(XP_UREC_OUT | XP_UREC_IN | XP_UREC_EXIT)	/* needed */
struct pt_regs *xp_urec_switch(struct xp_hook *h, struct pt_regs *regs, bool own_task);
void xp_urec_clone(struct xp_view *v, struct task_struct *parent, struct task_struct *child);
struct xp_hook *xp_hook_find(u32 id, struct netlink_ext_ack *extack);
struct xp_hook *xp_hook_next(u32 *id);
struct xp_hook *xp_hook_at(struct xp_view *v, unsigned long addr);
bool xp_hook_answer(unsigned long addr, struct xp_kp_answer *ans);
void xp_hook_stats(struct xp_hook *h, struct xp_hook_stats *sum);
void xp_hooks_disarm_all(struct xp_view *v);
void xp_hooks_free_all(struct xp_view *v);

/* prog.c */
/* id, cookie, regs: trace_xprobes_hook()'s arguments, a raw tracepoint program's context */
#define XP_PROG_ARGS	3
struct bpf_prog *xp_prog_get(int fd, struct netlink_ext_ack *extack);
void xp_prog_run_counted(struct bpf_prog *prog, const void *ctx);
void xp_prog_missed(struct bpf_prog *prog);
__noendbr struct pt_regs *xp_hook_tp(struct xp_hook *h, struct pt_regs *regs);
void xp_hook_set_prog(struct xp_hook *h, struct bpf_prog *prog);
u32 xp_hook_prog_id(struct xp_hook *h);

/* retsite.c */
unsigned long xp_retsite_find(const char *callee, const char **caller, u32 *off,
			      struct netlink_ext_ack *extack);

/* xol.c */
int xp_xol_alloc(struct xp_view *v, struct xp_hook *h, struct netlink_ext_ack *extack);
void xp_xol_release(struct xp_view *v, struct xp_hook *h);
void xp_xol_free(struct xp_view *v);

/* jump.c */
extern bool xp_jump_hooks;		/* module parameter jump_hooks */
void xp_jump_init(void);
u8 *xp_text_recovered(unsigned long start, unsigned long size);
bool xp_call_possible(struct xp_hook *h, u32 flags, const u8 *func, unsigned long start,
		      unsigned long size, const char **why);
bool xp_jentry_get(struct xp_hook *h);
unsigned long xp_jentry_addr(int n);
void xp_jentry_put(struct xp_hook *h);
void xp_call_arm(struct xp_hook *h);
void xp_call_restore_tail(struct xp_hook *h);
void xp_calls_disarm(struct xp_view *v, struct xp_hook *only);
void xp_jumps_yield(unsigned long addr);
struct jump_entry;
void xp_jump_table(const struct jump_entry **start, const struct jump_entry **stop);
bool xp_kprobe_reaches(const struct xp_hook *h, unsigned long addr);
int xp_cover_starts(const struct xp_hook *h, unsigned long *starts);
void xp_calls_quiesce(void);
void xp_jumps_stop(void);
void xp_jumps_flush(void);
__noendbr unsigned long xp_jump_handler(struct pt_regs *regs, unsigned long n);
void xp_calls_exit(void);

/* guard.c */
void xp_enter_lazy_tlb(struct mm_struct *mm, struct task_struct *tsk);
const char *xp_guard_get(struct xp_view *v);
void xp_guard_evict(struct mm_struct *mm);
bool xp_guard_live(struct xp_view *v);
void xp_guard_setup(struct xp_hook *h);

/* dispatch.c */
bool xp_on_dispatch_path(unsigned long addr);
bool xp_is_return_thunk(unsigned long addr);
int xp_dispatch_init(void);
void xp_dispatch_exit(void);
void xp_sync_cores(void);

/* netlink.c */
extern const struct nla_policy xp_policy[XPROBES_A_MAX + 1];
int xp_netlink_init(void);
void xp_netlink_exit(void);
void xp_netlink_view_ended(u32 pid, const char *reason);
void xp_netlink_hook_ended(u32 pid, u32 id, const char *sym, const char *reason);
void xp_netlink_uhooks_gone(u32 pid, const char *reason, u32 flags);

#endif /* _XPROBES_INTERNAL_H */
