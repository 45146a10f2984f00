// SPDX-License-Identifier: GPL-2.0
/*
 * The events of user hooks (docs/userhooks.md, "Events"). A hook with events
 * has a stub in front of its trampoline's instructions:
 *
 *	push %rax; push %rcx; push %r11
 *	mov $XPROBES_UHOOK_NR, %eax
 *	syscall
 *	pop %r11; pop %rcx; pop %rax
 *
 * At a function's entry the stack below the stack pointer is free (the
 * caller's call just wrote the word above it; the callee has not run), so
 * the stub may push. syscall clobbers rax, rcx and r11 and keeps the rest;
 * the kernel returns with the flags the process had.
 *
 * XPROBES_UHOOK_NR is a number x86_64 never gives out, so the kernel
 * answers it with __x64_sys_ni_syscall() (-ENOSYS). The traced process's
 * view has a hook there, placed by the module with its own handler:
 * xp_uevent_fire() finds the user hook by the stub's address (the ip the
 * syscall saved) and the process's mm, rebuilds the registers the function
 * was entered with, and fires the xprobes_uhook tracepoint. Every other
 * process runs the shared ni_syscall and pays nothing; a forked child that
 * keeps the patched text gets -ENOSYS, which the stub ignores.
 *
 * seccomp sees the syscall before the kernel dispatches it, and a filter may
 * kill the process for a number it does not know: events are refused for a
 * process any of whose threads is under seccomp (xp_uevents_get(), and
 * again once the hook is claimed), and a filter installed later first takes
 * every hook out (useccomp.c).
 *
 * Locking: the hash and each view's uevent_hook are changed
 * under xp_views_lock. xp_uevent_fire() runs on a hook's hit path with
 * preemption off, an RCU read-side section, and so does xp_uevent_do()
 * from the thread's late work (ulate.c: what the stack did not give
 * without a fault); a user hook is freed after a grace period (uhook.c),
 * its fields read here are fixed from its creation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/shmem_fs.h>
#include <linux/vmalloc.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include "xprobes.h"
#include "uhook.h"
#include "trace.h"
#include "hooks/fire.h"

/* User hooks with events, by trampoline address; compared with the mm too. */
static DEFINE_HASHTABLE(xp_uevents, 10);

void xp_ustub(u8 *out)
{
	static const u8 stub[XP_USTUB_LEN] = {
		0x50,			/* push %rax */
		0x51,			/* push %rcx */
		0x41, 0x53,		/* push %r11 */
		0xb8, 0, 0, 0, 0,	/* mov $XPROBES_UHOOK_NR, %eax */
		0x0f, 0x05,		/* syscall: returns to XP_USTUB_RET */
		0x41, 0x5b,		/* pop %r11 */
		0x59,			/* pop %rcx */
		0x58,			/* pop %rax */
	};

	memcpy(out, stub, sizeof(stub));
	put_unaligned_le32(XPROBES_UHOOK_NR, out + 5);
}

/*
 * The pushes of the stub, as the stack holds them at its syscall, and above
 * them, at a function's entry, the return address.
 */
struct ustub_frame {
	unsigned long r11, cx, ax;
	unsigned long ret;
};

/*
 * For the event, the process's own saved registers (@u, its pt_regs) are
 * made what they were before the stub, at @ip, and put back after: no copy,
 * and whatever reads the task's user registers meanwhile (bpf_get_stack()
 * with BPF_F_USER_STACK, a perf sample) sees the function, not the stub.
 * The syscall's return path only runs after they are back.
 */
struct stub_regs {
	unsigned long ip, sp, ax, cx, r11, orig_ax;
};

static void enter_regs(struct pt_regs *u, const struct ustub_frame *f, unsigned long ip,
		       struct stub_regs *s)
{
	s->ip = u->ip;
	s->sp = u->sp;
	s->ax = u->ax;
	s->cx = u->cx;
	s->r11 = u->r11;
	s->orig_ax = u->orig_ax;
	u->r11 = f->r11;
	u->cx = f->cx;
	u->ax = f->ax;
	u->sp += offsetof(struct ustub_frame, ret);
	u->ip = ip;
	u->orig_ax = -1;
}

static void leave_regs(struct pt_regs *u, const struct stub_regs *s)
{
	u->ip = s->ip;
	u->sp = s->sp;
	u->ax = s->ax;
	u->cx = s->cx;
	u->r11 = s->r11;
	u->orig_ax = s->orig_ax;
}

/*
 * Returns. At a hooked call's entry the return address on the stack is
 * replaced by a return thunk's, one thunk per (hook, return address), in a
 * block at the end of the hook's trampoline area:
 *
 *	push %rax; push %rcx; push %r11
 *	mov $XPROBES_UHOOK_RET_NR, %eax
 *	syscall
 *	pop %r11; pop %rcx; pop %rax
 *	jmp *target(%rip)
 *
 * whose target, the original return address, the module writes into the
 * block's table (read-only for the process, like the rest of the area)
 * before any stack points at the thunk. The thunk needs nothing else to go
 * back where the call came from: no shadow stack to unwind on longjmp or
 * exceptions, nothing to put back on detach, exec or rmmod (a frame still
 * holding a thunk's address returns through it, the kernel answering
 * ENOSYS once nobody listens), and a tail call from one hooked function to
 * another nests two thunks, which return in order. Its syscall fires the
 * return event: the thunk says which hook and where to.
 * Thunks are never reused for another (hook, address) while the area
 * lives: a frame may hold any of them. When a block is full, calls whose
 * return is new to it fire no return event (counted, ret_missed, and
 * said: uhook_lost()).
 */
#define URET_TABLE_PAGES	(XP_URET_N * 8 / PAGE_SIZE)
#define URET_HASH_BITS		12	/* twice XP_URET_N */

struct uret_ent {
	unsigned long ret;		/* where the call returns */
	struct xp_uhook __rcu *hook;	/* NULL once the hook is gone */
};

struct xp_uret {
	struct list_head node;		/* in xp_urets (RCU), under xp_views_lock */
	struct mm_struct *mm;		/* the area's: a key only */
	unsigned long code;		/* the first thunk, in the process */
	raw_spinlock_t lock;		/* taken to add a thunk, on the event path */
	unsigned int used;		/* thunks given out (release: ent[] filled) */
	bool detached;			/* no more (xp_urets_detach()), under the lock */
	struct page *pages[URET_TABLE_PAGES];	/* the targets' pages, held */
	struct uret_ent ent[XP_URET_N];
	u16 slots[1 << URET_HASH_BITS];	/* by (hook, ret): index + 1, 0 free */
	struct rcu_head rcu;
};

static LIST_HEAD(xp_urets);

static u32 uret_hash(struct xp_uhook *h, unsigned long ret)
{
	return hash_64((unsigned long)h ^ ret, URET_HASH_BITS);
}

/* The thunk of (@h, @ret) in @b, made if new; -1 when @b is full. */
static int uret_get(struct xp_uret *b, struct xp_uhook *h, unsigned long ret)
{
	u32 pos = uret_hash(h, ret), mask = (1U << URET_HASH_BITS) - 1;
	unsigned long flags;
	unsigned int i, n;
	u64 *table;
	int idx = -1;

	if (READ_ONCE(b->detached))
		return -1;	/* its process's hooks go: no more thunks */
	/* Without the lock first: slots only go from free to taken. */
	for (n = 0; n <= mask; n++, pos = (pos + 1) & mask) {
		/* Pairs with the release below: the entry is filled before its slot. */
		i = smp_load_acquire(&b->slots[pos]);
		if (!i)
			break;
		if (b->ent[i - 1].ret == ret && rcu_access_pointer(b->ent[i - 1].hook) == h)
			return i - 1;
	}
	raw_spin_lock_irqsave(&b->lock, flags);
	for (; n <= mask; n++, pos = (pos + 1) & mask) {
		i = b->slots[pos];
		if (!i)
			break;
		if (b->ent[i - 1].ret == ret && rcu_access_pointer(b->ent[i - 1].hook) == h) {
			idx = i - 1;
			goto out;
		}
	}
	/*
	 * An event that found @h before it was unpublished may get here after
	 * xp_urets_forget() cleared its entries: the hook is freed after that
	 * event's grace period, a new entry would outlive it. The flag is set
	 * under this lock.
	 */
	if (n > mask || b->used == XP_URET_N || h->rets_gone || b->detached)
		goto out;
	idx = b->used;
	b->ent[idx].ret = ret;
	rcu_assign_pointer(b->ent[idx].hook, h);
	table = page_address(b->pages[idx / (PAGE_SIZE / 8)]);
	WRITE_ONCE(table[idx % (PAGE_SIZE / 8)], ret);
	/* The entry and its thunk's target before the count (uret_fire())... */
	smp_store_release(&b->used, idx + 1);
	/* ... and before the slot (the lockless lookup above). */
	smp_store_release(&b->slots[pos], idx + 1);
out:
	raw_spin_unlock_irqrestore(&b->lock, flags);
	return idx;
}

/*
 * An event of @h given up (XPROBES_LOST_*): counted on the hook, and said
 * on the xprobes_uhook_lost tracepoint for the tracer, whose counts outlive
 * the hook's (the process exits, the hook goes).
 */
static void uhook_lost(struct xp_uhook *h, u32 what)
{
	atomic64_inc(what == XPROBES_LOST_CALL ? &h->calls_missed : &h->ret_missed);
	trace_xprobes_uhook_lost(h->id, h->cookie, what);
}

/*
 * At @h's entry: the return address at f->ret becomes a thunk's. A slot
 * that cannot be written now is written by the thread's late work
 * (ulate.c), which does only this again.
 */
static void uret_hijack(struct xp_uhook *h, struct pt_regs *u, const struct ustub_frame *f,
			struct xp_ulate *l)
{
	unsigned long slot = u->sp + offsetof(struct ustub_frame, ret);
	struct xp_uret *b = h->area->uret;
	unsigned long thunk;
	int idx;

	/* off the ABI's stack alignment, a write could tear across two pages */
	idx = slot & 7 ? -1 : uret_get(b, h, f->ret);
	if (idx < 0) {
		uhook_lost(h, XPROBES_LOST_RETURN);
		return;
	}
	thunk = b->code + idx * XP_URET_SIZE;
	if (copy_to_user_nofault((void __user *)slot, &thunk, sizeof(thunk)) &&
	    !xp_ulate_ask(l, XP_ULATE_HIJACK, slot, sizeof(thunk), true))
		uhook_lost(h, XPROBES_LOST_RETURN);
}

/* The syscall of a return thunk: fire the return of its hook's call. */
static void uret_fire(struct xp_view *v, struct pt_regs *u, struct xp_ulate *l)
{
	unsigned long start = u->ip - XP_USTUB_RET, off;
	struct ustub_frame f;
	struct stub_regs s;
	struct xp_uhook *h;
	struct xp_uret *b;
	unsigned int idx;

	l->kind = 0;
	list_for_each_entry_rcu(b, &xp_urets, node)
		if (b->mm == current->mm && start - b->code < XP_URET_TABLE)
			goto found;
	return;		/* a child of fork, or no such thunk */
found:
	off = start - b->code;
	idx = off / XP_URET_SIZE;
	/* Pairs with uret_get()'s release: the entry is filled below the count. */
	if (off % XP_URET_SIZE || idx >= smp_load_acquire(&b->used))
		return;
	h = rcu_dereference_sched(b->ent[idx].hook);
	if (!h)
		return;		/* the hook is gone; the thunk still returns */
	if (copy_from_user_nofault(&f, (const void __user *)u->sp, offsetof(struct ustub_frame, ret))) {
		if (!xp_ulate_ask(l, XP_ULATE_RET, u->sp, offsetof(struct ustub_frame, ret), false))
			uhook_lost(h, XPROBES_LOST_RETURN);
		return;
	}
	if (unlikely(READ_ONCE(v->unwinds)))
		xp_unwind_landed(v, u->sp);
	this_cpu_inc(h->hits->rets);
	enter_regs(u, &f, b->ent[idx].ret, &s);
	trace_xprobes_uhook_ret(h->id, h->cookie, u);
	leave_regs(u, &s);
}

/* Where @mm's event thunks are: up to @max ranges [lo, hi). Under rcu_read_lock(). */
unsigned int xp_uret_thunk_ranges(struct mm_struct *mm, unsigned long *lo, unsigned long *hi,
				  unsigned int max)
{
	struct xp_uret *b;
	unsigned int n = 0;

	list_for_each_entry_rcu(b, &xp_urets, node)
		if (b->mm == mm && n < max) {
			lo[n] = b->code;
			hi[n++] = b->code + XP_URET_TABLE;
		}
	return n;
}

/*
 * The return address event thunk @w of @mm stands for, or 0 if @w is none
 * (uunwind.c). Under rcu_read_lock(); from the block's own entries.
 */
unsigned long xp_uret_thunk_target(struct mm_struct *mm, unsigned long w)
{
	struct xp_uret *b;

	list_for_each_entry_rcu(b, &xp_urets, node) {
		unsigned long off = w - b->code;

		if (b->mm != mm || off >= XP_URET_TABLE || off % XP_URET_SIZE)
			continue;
		/* Pairs with uret_get()'s release: the entry is filled below the count. */
		if (off / XP_URET_SIZE >= smp_load_acquire(&b->used))
			return 0;
		return b->ent[off / XP_URET_SIZE].ret;
	}
	return 0;
}

/*
 * The hooks of @a's process go (uunwind.c): no new event thunk, and the
 * targets of those given out go to @tgt (XP_URET_N of them), the first
 * thunk's address to @base. Returns how many.
 */
unsigned int xp_urets_detach(struct xp_uarea *a, u64 *tgt, unsigned long *base)
{
	struct xp_uret *b = a->uret;
	unsigned long flags;
	unsigned int i, n;

	lockdep_assert_held(&xp_views_lock);
	if (!b)
		return 0;
	raw_spin_lock_irqsave(&b->lock, flags);
	b->detached = true;
	n = b->used;
	raw_spin_unlock_irqrestore(&b->lock, flags);
	for (i = 0; i < n; i++)
		tgt[i] = b->ent[i].ret;
	*base = b->code;
	return n;
}

/* The thunks of @a, written once, before a hook with returns is published. */
int xp_urets_init(struct xp_uarea *a, struct netlink_ext_ack *extack)
{
	unsigned long base = a->va + XP_URET_AREA_OFF;
	u8 code[XP_URET_SIZE];
	struct xp_uret *b;
	unsigned int i;
	int err;

	/* Its table's pages are the file's own (below); the blocks: uhook.h. */
	BUILD_BUG_ON(XP_URET_AREA_OFF % PAGE_SIZE || XP_URET_TABLE % PAGE_SIZE);
	lockdep_assert_held(&xp_views_lock);
	if (a->uret)
		return 0;
	b = kvzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	raw_spin_lock_init(&b->lock);
	b->mm = a->mm;
	b->code = base;
	for (i = 0; i < XP_URET_N; i++) {
		unsigned long at = base + i * XP_URET_SIZE;
		unsigned long target = base + XP_URET_TABLE + i * 8;

		memset(code, 0xcc, sizeof(code));
		xp_ustub(code);
		put_unaligned_le32(XPROBES_UHOOK_RET_NR, code + 5);
		code[XP_USTUB_LEN] = 0xff;	/* jmp *rel32(%rip) */
		code[XP_USTUB_LEN + 1] = 0x25;
		put_unaligned_le32(target - (at + XP_USTUB_LEN + 6), code + XP_USTUB_LEN + 2);
		err = xp_uarea_write(a, at, code, sizeof(code));
		if (err)
			goto fail;
	}
	for (i = 0; i < URET_TABLE_PAGES; i++) {
		struct address_space *mapping = a->file->f_mapping;
		struct page *page;

		page = shmem_read_mapping_page_gfp(mapping,
						   (XP_URET_AREA_OFF + XP_URET_TABLE) / PAGE_SIZE + i,
						   mapping_gfp_mask(mapping));
		if (IS_ERR(page)) {
			err = PTR_ERR(page);
			goto fail;
		}
		set_page_dirty_lock(page);	/* held, then written through the kernel map */
		b->pages[i] = page;
	}
	list_add_rcu(&b->node, &xp_urets);
	a->uret = b;
	return 0;
fail:
	for (i = 0; i < URET_TABLE_PAGES && b->pages[i]; i++)
		put_page(b->pages[i]);
	kvfree(b);
	NL_SET_ERR_MSG(extack, "could not write the return thunks");
	return err;
}

/* @a goes: its process keeps the thunks and their targets (its mapping holds them). */
void xp_urets_free(struct xp_uarea *a)
{
	struct xp_uret *b = a->uret;
	unsigned int i;

	lockdep_assert_held(&xp_views_lock);
	if (!b)
		return;
	list_del_rcu(&b->node);
	synchronize_rcu();	/* uret_fire() and uret_hijack() are done with it */
	for (i = 0; i < URET_TABLE_PAGES; i++)
		put_page(b->pages[i]);
	kvfree(b);
	a->uret = NULL;
}

/* @h goes: its thunks fire nothing any more (they still return). */
void xp_urets_forget(struct xp_uhook *h)
{
	struct xp_uret *b = h->returns ? h->area->uret : NULL;
	unsigned long flags;
	unsigned int i;

	if (!b)
		return;
	raw_spin_lock_irqsave(&b->lock, flags);
	h->rets_gone = true;	/* uret_get() adds no entry for it from now on */
	for (i = 0; i < b->used; i++)
		if (rcu_access_pointer(b->ent[i].hook) == h)
			RCU_INIT_POINTER(b->ent[i].hook, NULL);
	raw_spin_unlock_irqrestore(&b->lock, flags);
}

/*
 * The event of a hook's stub: @l->kind 0 on the hit path; from the late
 * work, XP_ULATE_ENTRY (all of it again) or XP_ULATE_HIJACK (its event
 * fired: the return slot only).
 */
static void uentry_fire(struct xp_view *v, struct pt_regs *u, struct xp_ulate *l)
{
	bool fire = l->kind != XP_ULATE_HIJACK;
	unsigned long slot = u->ip - XP_USTUB_RET;
	struct ustub_frame f;
	struct stub_regs s;
	struct xp_uhook *h;

	l->kind = 0;
	hash_for_each_possible_rcu(xp_uevents, h, enode, slot)
		if (h->slot == slot && h->mm == current->mm)
			goto found;
	return;		/* a deleted hook's stub still running, or a forked child */
found:
	if (copy_from_user_nofault(&f, (const void __user *)u->sp, sizeof(f))) {
		if (!xp_ulate_ask(l, fire ? XP_ULATE_ENTRY : XP_ULATE_HIJACK, u->sp, sizeof(f),
				  !fire || h->returns))
			uhook_lost(h, fire ? XPROBES_LOST_CALL : XPROBES_LOST_RETURN);
		return;
	}
	if (fire) {
		this_cpu_inc(h->hits->calls);
		enter_regs(u, &f, h->func, &s);
		trace_xprobes_uhook(h->id, h->cookie, u);
		leave_regs(u, &s);
		if (h->unwinder)
			xp_unwind_start(v, u->sp + offsetof(struct ustub_frame, ret));
		else if (unlikely(READ_ONCE(v->unwinds)))
			xp_unwind_landed(v, u->sp);
	}
	if (h->returns)
		uret_hijack(h, u, &f, l);
}

/*
 * The system call of @u on @v, by its number; @l says what is left to do:
 * zeroed on the hit path, what the late work does again (ulate.c).
 */
void xp_uevent_do(struct xp_view *v, struct pt_regs *u, struct xp_ulate *l)
{
	switch (u->orig_ax) {
	case XPROBES_UHOOK_NR:
		uentry_fire(v, u, l);
		break;
	case XPROBES_UHOOK_RET_NR:
		uret_fire(v, u, l);
		break;
	case XPROBES_UREC_NR:
		xp_urec_slow(v, u, l);
		break;
	default:
		l->kind = 0;	/* another unimplemented syscall */
	}
}

/*
 * The system call @u of current from task context (a trapped hit, below;
 * the late work, ulate.c): preemption off and this CPU marked dispatching,
 * as on the hit path, and the view found again by the process's mm (gone:
 * nothing is left to do, its hooks went with it).
 */
void xp_uevent_task(struct pt_regs *u, struct xp_ulate *l)
{
	struct xp_view *v;

	preempt_disable();
	if (!__this_cpu_read(xp_dispatching)) {
		__this_cpu_write(xp_dispatching, 1);
		v = xp_view_of_mm(current->mm);
		if (v)
			xp_uevent_do(v, u, l);
		else
			l->kind = 0;
		__this_cpu_write(xp_dispatching, 0);
	}
	preempt_enable();
}

/*
 * Where a hit of the view's hook that came through its int3 goes instead
 * of __x64_sys_ni_syscall(). The hook is an int3 while it is placed or
 * taken out (jump.c: the jump goes in behind it), and for good where no
 * jump may go (a kprobe near, every jump entry in use, call_hooks=0). The
 * trap's context is NMI-like: the handlers' locks (the thunk blocks') may
 * not be taken there, nor BPF's in the programs they run. So the trap
 * only returns here (xp_uevent_fire() sets the ip, dispatch.c honours this
 * one target alone), as bpf_override_return() sends a probed function to
 * just_return_func: the hook is at the function's first instruction past
 * its ENDBR and fentry site (xp_func_body()), so the stack is as at its
 * entry, its caller's return address on top and @regs its argument, and
 * this runs as the syscall itself, in task context, preemption off around
 * the handler as on the jump path. It returns what the function would.
 * Module exit waits for a task preempted in here (RCU-tasks, xp_calls_exit()).
 */
long xp_uevent_trapped(const struct pt_regs *regs)
{
	struct pt_regs *u = (struct pt_regs *)regs;
	struct xp_ulate l = {};

	if (u == task_pt_regs(current))
		xp_uevent_task(u, &l);
	return -ENOSYS;
}

/*
 * The hit of the view's hook on __x64_sys_ni_syscall(regs): @kregs are the
 * kernel's registers there, the process's are in the first argument. What
 * the stack does not give without a fault now is done again by the
 * thread's late work (ulate.c) before the syscall returns.
 */
void xp_uevent_fire(struct xp_hook *kh, struct pt_regs *kregs)
{
	struct pt_regs *u = (struct pt_regs *)kregs->di;
	struct xp_ulate l = {};

	if (u != task_pt_regs(current))
		return;
	if (unlikely(in_nmi())) {
		kregs->ip = (unsigned long)xp_uevent_trapped;
		return;
	}
	xp_uevent_do(kh->view, u, &l);
}

/*
 * A user hook with events in @mm, which runs on @v: the first places the
 * view's hook on the unimplemented-syscall handler, which stays until the
 * view ends (adding and removing it with every user hook would cost each
 * add a kernel jump's arming, for nothing: the traced process alone pays
 * for it, and only on syscalls the kernel does not have).
 */
int xp_uevents_get(struct xp_view *v, struct mm_struct *mm, struct netlink_ext_ack *extack)
{
	struct xp_hook *kh;

	lockdep_assert_held(&xp_views_lock);
	if (v->dispatch) {
		NL_SET_ERR_MSG(extack,
			       "the process turns on syscall user dispatch, which may take the "
			       "hooks' system calls for its own: use a uprobe");
		return -EPERM;
	}
	if (v->seccomp) {
		NL_SET_ERR_MSG(extack,
			       "the process installs a seccomp filter, which may kill it for the "
			       "hooks' system calls: use a uprobe");
		return -EPERM;
	}
	if (xp_useccomp_unguarded()) {
		NL_SET_ERR_MSG(extack,
			       "no kprobe on seccomp's or syscall user dispatch's entry points (see "
			       "dmesg): a filter the process installs later would kill it for the "
			       "hooks' system calls; use a uprobe");
		return -EPERM;
	}
	/* (a call on its way to a filter is waited for once the hook is claimed) */
	if (xp_useccomp_refuse(xp_useccomp_state(mm), extack))
		return -EPERM;
	if (!v->uevent_hook) {
		kh = xp_hook_add(v, "__x64_sys_ni_syscall", NULL, 0, XP_F_UEVENTS, extack);
		if (IS_ERR(kh))
			return PTR_ERR(kh);
		v->uevent_hook = kh;
	}
	return 0;
}

void xp_uevent_publish(struct xp_uhook *h)
{
	hash_add_rcu(xp_uevents, &h->enode, h->slot);
}

void xp_uevent_unpublish(struct xp_uhook *h)
{
	hash_del_rcu(&h->enode);
}

/* Events of @h: calls, or with @rets, returns. */
u64 xp_uevent_hits(struct xp_uhook *h, bool rets)
{
	u64 sum = 0;
	int cpu;

	if (!h->hits)
		return 0;
	for_each_possible_cpu(cpu)
		sum += rets ? per_cpu_ptr(h->hits, cpu)->rets : per_cpu_ptr(h->hits, cpu)->calls;
	return sum;
}

#ifdef XPROBES_KUNIT
#include "uevent_kunit.c"
#endif
