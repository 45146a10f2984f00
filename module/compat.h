/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels xprobes builds for, in one place.
 * Verified: Debian 12's 6.1 (6.1.0-N) and 6.12 (6.12.N+deb12). Run-time
 * differences (symbols, layouts) are not here: kernel.c checks those at load.
 */
#ifndef _XPROBES_COMPAT_H
#define _XPROBES_COMPAT_H

#include <linux/version.h>
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <net/genetlink.h>
#include <linux/mm.h>
#include <linux/module.h>

/* What pre_doit is handed: a genl_split_ops since 6.2, the genl_ops before. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define xp_genl_op genl_split_ops
#else
#define xp_genl_op genl_ops
#endif

/* Where the fields the kernel writes in struct rseq end: mm_cid's end since 6.3. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define XP_RSEQ_KERNEL_END	offsetof(struct rseq, end)
#else
#define XP_RSEQ_KERNEL_END	offsetofend(struct rseq, flags)
#endif

/* A dump's parsed attributes: in its genl_info since 6.6, beside it before. */
static inline struct nlattr **xp_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return genl_info_dump(cb)->attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

#ifndef NL_SET_ERR_MSG_FMT
/*
 * Formatted extack messages came in 6.2 (with a buffer inside the extack).
 * Before, the extack keeps only a pointer, read when the ack is built after
 * the handler returns, so the text must outlive the handler: it goes in one
 * of a ring of buffers. The family is not parallel_ops, so handlers run one
 * at a time under genl_mutex; a message can only be overwritten if sixteen
 * more are formatted between one handler's return and its ack, and even
 * then the last byte of every buffer stays NUL, so the reader stays inside.
 */
#define XP_MSG_RING 16
#define XP_MSG_LEN 80
static inline const char *xp_fmt_msg(const char *fmt, ...)
{
	static char ring[XP_MSG_RING][XP_MSG_LEN];
	static atomic_t next;
	char *buf = ring[(unsigned int)atomic_inc_return(&next) % XP_MSG_RING];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, XP_MSG_LEN - 1, fmt, ap);
	va_end(ap);
	return buf;
}

#define NL_SET_ERR_MSG_FMT(extack, fmt, args...) do {			\
	struct netlink_ext_ack *__extack = (extack);			\
									\
	if (__extack)							\
		__extack->_msg = xp_fmt_msg(fmt, ##args);		\
} while (0)
#endif


/*
 * uprobes (uhook.c): a registration returns the uprobe since 6.12, which
 * unregisters in two halves (the second waits for running handlers); 6.1
 * names it by inode and offset and waits inside uprobe_unregister(). The
 * consumer's filter lost its context argument in 6.12.
 */
#include <linux/uprobes.h>
struct xp_uprobe {
	struct inode *inode;
	loff_t offset;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	struct uprobe *uprobe;
#endif
};

static inline int xp_uprobe_register(struct xp_uprobe *u, struct uprobe_consumer *uc)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	struct uprobe *up = uprobe_register(u->inode, u->offset, 0, uc);

	if (IS_ERR(up))
		return PTR_ERR(up);
	u->uprobe = up;
	return 0;
#else
	return uprobe_register(u->inode, u->offset, uc);
#endif
}

/*
 * The first half: @uc's breakpoint goes; its handler may still be running
 * until xp_uprobe_unregister_sync() (6.12's waits for RCU-tasks-trace and
 * SRCU grace periods, tens of milliseconds: many consumers share one). On
 * 6.1 unregistering waits for running handlers itself.
 */
static inline void xp_uprobe_unregister_nosync(struct xp_uprobe *u, struct uprobe_consumer *uc)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	uprobe_unregister_nosync(u->uprobe, uc);
#else
	uprobe_unregister(u->inode, u->offset, uc);
#endif
}

static inline void xp_uprobe_unregister_sync(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	uprobe_unregister_sync();
#endif
}

/* When this returns, no handler of @uc runs any more. */
static inline void xp_uprobe_unregister(struct xp_uprobe *u, struct uprobe_consumer *uc)
{
	xp_uprobe_unregister_nosync(u, uc);
	xp_uprobe_unregister_sync();
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define XP_UPROBE_FILTER(name, self, mm) \
	bool name(struct uprobe_consumer *self, struct mm_struct *mm)
#else
#define XP_UPROBE_FILTER(name, self, mm) \
	bool name(struct uprobe_consumer *self, enum uprobe_filter_ctx ctx, struct mm_struct *mm)
#endif

/*
 * Is @mm's mmap lock free for writing this instant? Taken and let go at
 * once (there is no mmap_write_trylock(); nothing is changed under it).
 */
static inline bool xp_mmap_write_free(struct mm_struct *mm)
{
	if (!down_write_trylock(&mm->mmap_lock))
		return false;
	up_write(&mm->mmap_lock);
	return true;
}

/* One page of another mm, pinned: the vmas argument went away in 6.5. */
static inline long xp_gup_one(struct mm_struct *mm, unsigned long addr, unsigned int flags,
			      struct page **page)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return get_user_pages_remote(mm, addr, 1, flags, page, NULL);
#else
	return get_user_pages_remote(mm, addr, 1, flags, page, NULL, NULL);
#endif
}

/* Pages of another mm, pinned (its mmap lock held): the vmas argument went away in 6.5. */
static inline long xp_pin_remote(struct mm_struct *mm, unsigned long addr, unsigned long n,
				 unsigned int flags, struct page **pages)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return pin_user_pages_remote(mm, addr, n, flags, pages, NULL);
#else
	return pin_user_pages_remote(mm, addr, n, flags, pages, NULL, NULL);
#endif
}

/* A vma's flags, under the mmap lock held for writing: an accessor since 6.3. */
static inline void xp_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * leave_mm() (guard.c) lost its cpu argument in 6.8. Exported since intel_idle
 * calls it; it switches a lazy CPU to init_mm.
 */
#include <asm/mmu.h>
static inline void xp_leave_mm(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	leave_mm();
#else
	leave_mm(smp_processor_id());
#endif
}

/* A sleepable BPF program: the flag moved from its aux into the program in 6.10. */
#include <linux/filter.h>
/*
 * What a tracepoint's BPF probe (__bpf_trace_NAME -> bpf_trace_runN) takes
 * as its data: the program's struct bpf_raw_tp_link since 6.10 (with the
 * attach cookie), the program before (hooks/tracepoint.c).
 */
#define XP_TP_LINKS	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0))

/* This CPU's preempt count, the variable preempt_count() reads (hooks/fire.h). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define XP_PREEMPT_COUNT	pcpu_hot.preempt_count
#else
#define XP_PREEMPT_COUNT	__preempt_count
#endif

/*
 * A hit's BPF run context (hooks/fire.h), as bpf_set_run_ctx() and
 * bpf_reset_run_ctx() set it, but with current read again from its per-CPU
 * slot each time: current is a "stable" read the compiler may keep in a
 * callee-saved register across the program's call, a push and a pop on
 * every hit of the jump path, where a second read is one load. The slot is
 * pcpu_hot's since 6.2, current_task before.
 */
#ifndef CONFIG_BPF_SYSCALL
#error "hooks run BPF programs: task_struct's bpf_ctx needs CONFIG_BPF_SYSCALL"
#endif
static __always_inline struct task_struct *xp_current_reread(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return this_cpu_read(pcpu_hot.current_task);
#else
	return this_cpu_read(current_task);
#endif
}

static __always_inline struct bpf_run_ctx *xp_set_run_ctx(struct bpf_run_ctx *new_ctx)
{
	struct task_struct *t = xp_current_reread();
	struct bpf_run_ctx *old = t->bpf_ctx;

	t->bpf_ctx = new_ctx;
	return old;
}

static __always_inline void xp_reset_run_ctx(struct bpf_run_ctx *old_ctx)
{
	xp_current_reread()->bpf_ctx = old_ctx;
}

/* A stack variable not zeroed first (INIT_STACK_ALL_ZERO), as 6.12 names it. */
#ifndef __uninitialized
#if __has_attribute(__uninitialized__)
#define __uninitialized __attribute__((__uninitialized__))
#else
#define __uninitialized
#endif
#endif

static inline bool xp_prog_sleepable(const struct bpf_prog *prog)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	return prog->sleepable;
#else
	return prog->aux->sleepable;
#endif
}

/*
 * Task work added from a hook's hit path, which may be the int3 handler
 * (NMI-like): since 6.11 KASAN may be told not to allocate for its record
 * of the adding stack there. Before, KASAN (the debug kernel is 6.12) is
 * not in the kernels built for.
 */
#include <linux/task_work.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define XP_TWA_RESUME_ATOMIC	(TWA_RESUME | TWAF_NO_ALLOC)
#define XP_TWA_SIGNAL_ATOMIC	(TWA_SIGNAL | TWAF_NO_ALLOC)
#else
#define XP_TWA_RESUME_ATOMIC	TWA_RESUME
#define XP_TWA_SIGNAL_ATOMIC	TWA_SIGNAL
#endif

/* Is @a in @mod's core text? struct module_memory since 6.4, layouts before. */
static inline bool xp_mod_core_text(const struct module *mod, unsigned long a)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return a - (unsigned long)mod->mem[MOD_TEXT].base < mod->mem[MOD_TEXT].size;
#else
	return a - (unsigned long)mod->core_layout.base < mod->core_layout.text_size;
#endif
}

#endif /* _XPROBES_COMPAT_H */
