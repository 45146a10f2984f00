// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinders and return thunks (issue 39; docs/userhooks.md, "Unwinding").
 * A user hook with returns puts a thunk's address in the return slot of
 * each call (uevent.c: event thunks; urec.c: record thunks). An unwinder
 * (C++ exceptions, Rust panics, pthread_cancel()'s forced unwinding,
 * backtrace()) reads those slots to find each frame's unwind data, and a
 * thunk has none: the unwinder stops and the program ends in
 * std::terminate(). So the unwinder's entry points get user hooks of
 * their own (XPROBES_F_UNWINDER, events without returns), and each of
 * their calls first gives every thunk on the thread's stack its return
 * address back:
 *
 * 1. Restore. The event (xp_unwind_start(), on the hook's hit path)
 *    queues task work on the thread, which runs before the system call
 *    returns to the stub, where it may fault and sleep: it reads the
 *    thread's stack from the unwinder's entry sp to the end of the
 *    mapping it is in, and writes over each word that is a thunk's address
 *    that thunk's target, the return address it stood for (urec.c and
 *    uevent.c say which addresses are thunks, from their own tables, not
 *    from anything the process can write); where that target is uprobes'
 *    return trampoline (a uprobe'd function's tail call into a user-hooked
 *    one), the return address the kernel keeps for the slot
 *    (uprobes_orig()). It keeps the slots it wrote (XP_UNWIND_SLOTS of
 *    them, the nearest first).
 *
 * 2. Rearm. Frames the unwinding does not cross (the one that catches
 *    and its callers) then return without a thunk, unseen. So the thread
 *    is "pending": its next record (records: its CPU's buffer is made to
 *    look full, xp_urec_force(), and again at each of its switch-ins, so
 *    the record enters the kernel) or its next event tells where it runs
 *    now. Above the unwinder's entry sp, the unwinding is over: task work
 *    puts the thunk back in each kept slot above that sp that still holds
 *    the address written there. Below, the unwinder itself runs (a
 *    personality routine, a backtrace callback): it stays pending.
 *
 * 3. Detach. When the process's hooks go (its view ends: trace stops;
 *    or its last hook of an area is deleted), thunks may still be on its
 *    stacks, and no unwinder hook is left to help: an exception crossing
 *    such a frame later would end the program. So first, while the
 *    unwinder hooks still work, the areas make no more thunks
 *    (xp_urec_detach(), xp_urets_detach(), which copy their targets into a
 *    map), and every thread of the process gets task work that gives the
 *    thunks on its stack their targets back before it runs on in user mode
 *    (a running thread is sent an interrupt, kick_process(); a sleeping
 *    one does it when it wakes, its sleep not cut short). A thread caught
 *    inside the records routine between its lookup of a thunk and its
 *    store is sent to the routine's end (detach_window()); one a signal
 *    stopped there has them in its signal frame, which the scan reads
 *    (detach_word(); and urec.c's detach leaves a return address in a
 *    tail call's hash entry, for one about to load it, found through the
 *    thunks of the areas that go once the map has them all:
 *    xp_unwind_map_done()).
 *
 * The process may only mislead its own figures: it writes its own stack;
 * the values written are a thunk's address and its target, taken from the
 * module's tables, and a thunk returns to its target whatever stack slot
 * holds it, so putting one where its target was never changes where a
 * return goes. A tail call's thunk returns into another thunk: followed,
 * THUNK_CHAIN deep. The works never wait for a page (xp_ufault()), so each
 * runs a bounded time, which module exit waits for.
 *
 * Locking: a view's states are a pool made with its first unwinder hook
 * (xp_unwinds_get(), under xp_views_lock) and freed after the view and
 * every task work that uses them: the pool is refcounted, one reference
 * the view's, one each queued work's. A state is touched by its own thread
 * (hit paths and its task work, which never overlap) and, for taking and
 * giving back, under the pool's raw lock; a state is free when it has no
 * thread and is not busy. Teardown cancels queued works; one that already
 * runs holds its reference. The detach works are on a list of their own,
 * which module exit cancels (those threads keep their thunks, which still
 * return right); it waits for the running ones (xp_unwind_exit()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hardirq.h>
#include <linux/mm.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/userfaultfd_k.h>
#include "xprobes.h"
#include "compat.h"
#include "uhook.h"
#include "uslot.h"	/* get_unaligned_le32() on 6.1 and 6.12 */

#define XP_UNWIND_STATES	64		/* threads of a view with an unwinding pending */
#define XP_UNWIND_SLOTS		256		/* slots kept by a thread for its rearm */
#define XP_UNWIND_SCAN		(64UL << 20)	/* bytes of stack read at most */
#define UNWIND_CHUNK		32		/* words read at a time */
#define THUNK_CHAIN		8		/* thunks of tail calls, nested */

enum { UNWIND_RESTORE = 1, UNWIND_REARM = 2 };

struct xp_unwound {
	unsigned long slot, thunk, target;	/* target: the thunk's */
	unsigned long wrote;			/* its target, or what uprobes keep for it */
};

struct xp_unwind {
	struct xp_unwinds *set;
	struct task_struct *task;	/* the thread, a key (with tid and mm); NULL: free */
	pid_t tid;
	struct mm_struct *mm;
	bool busy;			/* its work is queued or running */
	bool pending;			/* restored slots await the rearm */
	bool release;			/* its thread exits: given back when not busy */
	u8 todo;			/* UNWIND_*, for the work */
	unsigned long unwind_sp;	/* the unwinder's entry sp, the latest */
	unsigned long at_sp;		/* where the thread ran when it asked to rearm */
	unsigned int n;
	struct xp_unwound *slots;	/* made by the work, kept with the pool */
	struct callback_head work;
};

struct xp_unwinds {
	refcount_t refs;		/* the view's, and one per busy state */
	raw_spinlock_t lock;
	unsigned int npending;		/* READ_ONCE on the switch path */
	bool detached;			/* its hooks go: no rearm (xp_unwinds_detach()) */
	struct xp_unwind st[XP_UNWIND_STATES];
};

/* Works queued or running, module-wide: module exit waits for none. */
static atomic_t unwind_works = ATOMIC_INIT(0);
static bool unwind_exiting;	/* module exit: no detach work is queued any more */
static typeof(task_work_cancel) *task_work_cancel_p;

static void unwinds_put(struct xp_unwinds *set)
{
	unsigned int i;

	if (!refcount_dec_and_test(&set->refs))
		return;
	for (i = 0; i < XP_UNWIND_STATES; i++)
		kvfree(set->st[i].slots);
	kfree(set);
}

/* The pool of @v's states, made with its first unwinder hook. */
int xp_unwinds_get(struct xp_view *v, struct netlink_ext_ack *extack)
{
	struct xp_unwinds *set;
	unsigned int i;

	lockdep_assert_held(&xp_views_lock);
	if (v->unwinds)
		return 0;
	if (!task_work_cancel_p) {
		NL_SET_ERR_MSG(extack, "unwinder hooks need the kernel's task_work_cancel()");
		return -EOPNOTSUPP;
	}
	set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	if (!set)
		return -ENOMEM;
	refcount_set(&set->refs, 1);
	raw_spin_lock_init(&set->lock);
	for (i = 0; i < XP_UNWIND_STATES; i++)
		set->st[i].set = set;
	WRITE_ONCE(v->unwinds, set);
	return 0;
}

/* @t's state in @set, or NULL; under its lock, or as a hint without. */
static struct xp_unwind *unwind_find(struct xp_unwinds *set, struct task_struct *t)
{
	unsigned int i;

	for (i = 0; i < XP_UNWIND_STATES; i++) {
		struct xp_unwind *s = &set->st[i];

		if (READ_ONCE(s->task) == t && READ_ONCE(s->tid) == t->pid &&
		    READ_ONCE(s->mm) == t->mm)
			return s;
	}
	return NULL;
}

/* @s is free again; under its lock, not busy. */
static void unwind_release(struct xp_unwind *s)
{
	lockdep_assert_held(&s->set->lock);
	if (s->pending)
		WRITE_ONCE(s->set->npending, s->set->npending - 1);
	s->pending = false;
	s->release = false;
	s->n = 0;
	WRITE_ONCE(s->task, NULL);
}

/*
 * Current's state, taken if it has none (a free one, else one not busy,
 * whose thread loses the returns of its frames still restored), made busy
 * for the restore of an unwinding at @sp, and pending from now on: a
 * switch-in while the work runs must keep its buffer looking full. Under
 * the lock, so that no other thread takes it meanwhile. NULL when current's
 * own is busy still (a call from the work's own return: none) or all are.
 */
static struct xp_unwind *unwind_take(struct xp_unwinds *set, unsigned long sp)
{
	struct xp_unwind *s, *spare = NULL;
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&set->lock, flags);
	s = unwind_find(set, current);
	if (s) {
		if (s->busy)
			s = NULL;
		goto take;
	}
	for (i = 0; i < XP_UNWIND_STATES; i++) {
		s = &set->st[i];
		if (!s->task && !s->busy)
			goto claim;
		if (!s->busy && !spare)
			spare = s;
	}
	s = spare;
	if (!s) {
		raw_spin_unlock_irqrestore(&set->lock, flags);
		pr_warn_ratelimited("pid %d: %u threads unwinding at once: one is not helped\n",
				    task_tgid_nr(current), XP_UNWIND_STATES);
		return NULL;
	}
	unwind_release(s);
claim:
	WRITE_ONCE(s->tid, current->pid);
	WRITE_ONCE(s->mm, current->mm);
	WRITE_ONCE(s->task, current);
take:
	if (s) {
		s->busy = true;
		s->todo = UNWIND_RESTORE;
		s->unwind_sp = sp;
		if (!s->pending) {
			s->pending = true;
			WRITE_ONCE(set->npending, set->npending + 1);
		}
	}
	raw_spin_unlock_irqrestore(&set->lock, flags);
	return s;
}

static void unwind_work(struct callback_head *cb);

/* Have busy @s's work run before current returns to user mode. */
static void unwind_queue(struct xp_unwind *s)
{
	struct xp_unwinds *set = s->set;
	unsigned long flags;

	refcount_inc(&set->refs);
	get_task_struct(current);
	atomic_inc(&unwind_works);
	init_task_work(&s->work, unwind_work);
	if (!task_work_add(current, &s->work, XP_TWA_RESUME_ATOMIC))
		return;
	/* exiting: nothing of it runs in user mode again */
	raw_spin_lock_irqsave(&set->lock, flags);
	s->busy = false;
	unwind_release(s);
	raw_spin_unlock_irqrestore(&set->lock, flags);
	put_task_struct(current);
	atomic_dec(&unwind_works);
	refcount_dec(&set->refs);	/* the view holds one */
}

/*
 * A call of an unwinder hook at @sp (its entry sp, where its return
 * address is), on its hit path in current's system call: the restore is
 * queued, and with records the next record made to enter the kernel.
 */
void xp_unwind_start(struct xp_view *v, unsigned long sp)
{
	struct xp_unwinds *set = READ_ONCE(v->unwinds);
	struct xp_unwind *s;

	if (!set || READ_ONCE(set->detached))
		return;
	s = unwind_take(set, sp);
	if (!s)
		return;
	unwind_queue(s);
	xp_urec_force(v);
}

/*
 * Does @t await a rearm? On @t's switch-in, preemption off. (Between its
 * landing and its rearm's task work, too: its buffer is forced again
 * then, and the record that enters the kernel so is taken there,
 * xp_urec_slow().)
 */
bool xp_unwind_pending(struct xp_view *v, struct task_struct *t)
{
	struct xp_unwinds *set = READ_ONCE(v->unwinds);
	struct xp_unwind *s;

	if (!set || !READ_ONCE(set->npending))
		return false;
	s = unwind_find(set, t);
	return s && READ_ONCE(s->pending);
}

/*
 * Current runs at @sp: its next record or event after a restore. Above
 * the unwinder's entry, the unwinding is over: rearm. False while current
 * is pending still, below it (inside the unwinder: a personality routine,
 * a callback) or with its work yet to run.
 */
bool xp_unwind_landed(struct xp_view *v, unsigned long sp)
{
	struct xp_unwinds *set = READ_ONCE(v->unwinds);
	struct xp_unwind *s;
	unsigned long flags;

	if (!set || !READ_ONCE(set->npending) || READ_ONCE(set->detached))
		return true;
	s = unwind_find(set, current);		/* a hint: most events have none */
	if (!s)
		return true;
	raw_spin_lock_irqsave(&set->lock, flags);
	if (s->task != current || s->tid != current->pid || s->mm != current->mm ||
	    !s->pending) {
		raw_spin_unlock_irqrestore(&set->lock, flags);
		return true;
	}
	if (s->busy || sp <= s->unwind_sp) {
		raw_spin_unlock_irqrestore(&set->lock, flags);
		return false;
	}
	s->busy = true;
	s->todo = UNWIND_REARM;
	s->at_sp = sp;
	raw_spin_unlock_irqrestore(&set->lock, flags);
	unwind_queue(s);
	return true;
}

/*
 * Current's last slice (the view's do_exit hook): its state goes. While
 * that hook is an int3 (as its jump goes in or out), this runs in the
 * trap's NMI-like context, where the lock may not be taken (lockdep,
 * make check-debug's 62-stress-kill, 2026-12-06: "inconsistent
 * {INITIAL USE} -> {IN-NMI} usage" on it): a state is then left as it is,
 * keyed to a thread that is gone. It holds no reference; unwind_take()
 * gives it to another thread when none is free, and it goes with the pool.
 * Only the unwinder's figures of that process can suffer, should a later
 * thread of it get the same task_struct and tid.
 */
void xp_unwind_exit_task(struct xp_view *v)
{
	struct xp_unwinds *set = READ_ONCE(v->unwinds);
	struct xp_unwind *s;
	unsigned long flags;

	if (!set || in_nmi())
		return;
	raw_spin_lock_irqsave(&set->lock, flags);
	s = unwind_find(set, current);
	if (s && s->busy)
		s->release = true;	/* by its work, which runs at exit */
	else if (s)
		unwind_release(s);
	raw_spin_unlock_irqrestore(&set->lock, flags);
}

/* ---- reading and writing the thread's stack, never waiting long --------------- */

/*
 * The work may read and write current's stack where a page is not in (a
 * stack swapped out, collapsed by khugepaged, shared copy-on-write after
 * fork). It never waits for one without bound: a process could make that
 * wait last (userfaultfd, a FUSE mapping it serves, its mmap lock held by
 * a reader stuck on such a page), and module exit waits for running works.
 * So accesses do not fault (the _nofault copies), and a page not in is
 * brought in here, the mmap lock only tried (a jiffy later again when
 * held), only in anonymous memory that no userfaultfd watches (a stack
 * elsewhere is the process's own affair: given up); swap-in is the
 * longest wait then. XP_UFAULT_TRIES pages per work at most, and
 * XP_UFAULT_WAITS jiffies of waits for the lock (a second: a collapse into
 * a huge page holds it while it copies 2 MiB, and MADV_COLLAPSE over and
 * over kept the late work of selftest 49's stackzap from it for more than
 * the 32 jiffies that were its whole budget then: one call lost in CI,
 * 2026-12-04); a fatal signal ends it.
 */
bool xp_ufault(unsigned long addr, size_t len, bool write, struct xp_ubudget *b)
{
	unsigned long page, end = addr + len;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool ok = true;

	if (b->tries >= XP_UFAULT_TRIES || fatal_signal_pending(current) || !mm || end < addr)
		return false;
	if (!mmap_read_trylock(mm)) {
		if (b->waits >= XP_UFAULT_WAITS)
			return false;
		b->waits++;
		schedule_timeout_killable(1);
		return true;
	}
	b->tries++;
	for (page = addr & PAGE_MASK; page < end && ok; page += PAGE_SIZE) {
		vma = vma_lookup(mm, page);
		ok = vma && vma_is_anonymous(vma) && !userfaultfd_armed(vma) &&
		     (vma->vm_flags & (write ? VM_WRITE : VM_READ)) &&
		     !fixup_user_fault(mm, page, write ? FAULT_FLAG_WRITE : 0, NULL);
	}
	mmap_read_unlock(mm);
	return ok;
}

static int uread(void *buf, unsigned long addr, size_t len, struct xp_ubudget *b)
{
	while (copy_from_user_nofault(buf, (const void __user *)addr, len))
		if (!xp_ufault(addr, len, false, b))
			return -EFAULT;
	return 0;
}

static int uwrite(unsigned long addr, unsigned long val, struct xp_ubudget *b)
{
	while (copy_to_user_nofault((void __user *)addr, &val, sizeof(val)))
		if (!xp_ufault(addr, sizeof(val), true, b))
			return -EFAULT;
	return 0;
}

/*
 * The end of the stack mapping @sp is in, 0 if none or not anonymous
 * memory (a stack elsewhere is the process's own affair). Its mmap lock is
 * only tried: a process may hold it on purpose.
 */
static unsigned long stack_end(unsigned long sp)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long end = 0;
	int i;

	for (i = 0; !mmap_read_trylock(mm); i++) {
		if (i == 50 || fatal_signal_pending(current))
			return 0;
		schedule_timeout_killable(1);
	}
	vma = vma_lookup(mm, sp);
	if (vma && vma_is_anonymous(vma))
		end = vma->vm_end;
	mmap_read_unlock(mm);
	return end ? min(end, sp + XP_UNWIND_SCAN) : 0;
}

/* ---- the work: restore and rearm, in the thread, before it returns to user mode ---- */

/* Keep @s's slots at or above @sp (frames still there); the others went. */
static void slots_keep_above(struct xp_unwind *s, unsigned long sp)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->n; i++)
		if (s->slots[i].slot >= sp)
			s->slots[n++] = s->slots[i];
	s->n = n;
}

/*
 * The return address thunk @w of @mm stands for, or 0 if @w is none. A
 * tail call's thunk returns into its caller's: followed, THUNK_CHAIN deep
 * at most (the process can make a ring). Under rcu_read_lock(). Also
 * urec.c's detach, for a tail call's hash entry.
 */
unsigned long xp_unwind_thunk_target(struct mm_struct *mm, unsigned long w)
{
	unsigned long t;
	unsigned int i;

	for (i = 0; i < THUNK_CHAIN; i++) {
		t = xp_urec_thunk_target(mm, w) ?: xp_uret_thunk_target(mm, w);
		if (!t)
			return i ? w : 0;
		w = t;
	}
	return 0;
}

/*
 * A uprobe'd function that tail-calls a user-hooked one leaves uprobes'
 * return trampoline in the slot, and the callee's thunk stands for it:
 * it has no unwind data either (the unwinder would stop there, and the
 * program end in std::terminate()). The unwinder gets the return address
 * the kernel keeps for that slot instead, in current's return instance
 * for it (its own list: this runs in its own task work, where nothing
 * else changes it). Only where @target is the trampoline, the start of
 * the "[uprobes]" mapping, looked up once per work (@tramp: 0 not yet, 1
 * none or the mmap lock was busy): a stale instance (a longjmp past a
 * uprobe'd frame) may share the slot of a later call. Returns what to
 * write for @target.
 */
static unsigned long uprobes_orig(struct mm_struct *mm, unsigned long slot, unsigned long target,
				  unsigned long *tramp)
{
#ifdef CONFIG_UPROBES
	struct uprobe_task *ut = current->utask;
	struct return_instance *ri;
	unsigned int n;

	for (ri = ut ? ut->return_instances : NULL, n = 0; ri && n < MAX_URETPROBE_DEPTH;
	     ri = ri->next, n++) {
		if (ri->stack != slot)
			continue;
		if (!*tramp) {
			struct vm_area_struct *vma;

			*tramp = 1;
			if (mmap_read_trylock(mm)) {
				vma = vma_lookup(mm, target);
				if (vma && vma->vm_ops && vma->vm_ops->name &&
				    !strcmp(vma->vm_ops->name(vma) ?: "", "[uprobes]"))
					*tramp = vma->vm_start;
				mmap_read_unlock(mm);
			}
		}
		return target == *tramp ? ri->orig_ret_vaddr : target;
	}
#endif
	return target;
}

/* The areas of current's process, where thunks may be: a test per word before the lookup. */
struct thunk_ranges {
	unsigned int n;
	unsigned long lo[16], hi[16];
};

static bool in_ranges(const struct thunk_ranges *r, unsigned long w)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (w - r->lo[i] < r->hi[i] - r->lo[i])
			return true;
	return false;
}

/* Step 1: every thunk from the unwinder's entry sp up gets its target back. */
static void unwind_restore(struct xp_unwind *s)
{
	struct mm_struct *mm = current->mm;
	/* a word's thunk's target, 0 for none: not whole xp_unwounds (the frame stays small) */
	unsigned long buf[UNWIND_CHUNK], target[UNWIND_CHUNK];
	unsigned long sp = s->unwind_sp & ~7UL, end, addr, tramp = 0;
	struct xp_ubudget b = {};
	struct thunk_ranges r = {};
	unsigned int i, words;

	if (!s->slots) {
		s->slots = kvmalloc_array(XP_UNWIND_SLOTS, sizeof(*s->slots), GFP_KERNEL_ACCOUNT);
		s->n = 0;
	}
	if (s->slots)
		slots_keep_above(s, sp);
	end = stack_end(sp);
	if (!end)
		return;
	rcu_read_lock();
	r.n = xp_urec_thunk_ranges(mm, r.lo, r.hi, ARRAY_SIZE(r.lo));
	r.n += xp_uret_thunk_ranges(mm, r.lo + r.n, r.hi + r.n, ARRAY_SIZE(r.lo) - r.n);
	rcu_read_unlock();
	for (addr = sp; addr < end; addr += sizeof(buf)) {
		words = min_t(unsigned long, UNWIND_CHUNK, (end - addr) / 8);
		if (uread(buf, addr, words * 8, &b))
			break;
		rcu_read_lock();
		for (i = 0; i < words; i++)
			target[i] = in_ranges(&r, buf[i]) ? xp_unwind_thunk_target(mm, buf[i]) : 0;
		rcu_read_unlock();
		for (i = 0; i < words; i++) {
			struct xp_unwound u = { .slot = addr + i * 8, .thunk = buf[i],
						.target = target[i] };

			if (!u.target)
				continue;
			u.wrote = uprobes_orig(mm, u.slot, u.target, &tramp);
			if (uwrite(u.slot, u.wrote, &b))
				continue;
			if (s->slots && s->n < XP_UNWIND_SLOTS)
				s->slots[s->n++] = u;
		}
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
}

/* Step 2: the slots of frames still there, as written, get their thunks again. */
static void unwind_rearm(struct xp_unwind *s)
{
	struct xp_ubudget b = {};
	unsigned long cur;
	unsigned int i;
	bool live;

	for (i = 0; i < s->n && !READ_ONCE(s->set->detached); i++) {
		struct xp_unwound *u = &s->slots[i];

		if (u->slot <= s->at_sp)
			continue;
		if (uread(&cur, u->slot, sizeof(cur), &b) || cur != u->wrote)
			continue;
		/* a thunk of an area detached meanwhile (area_free()) stays out */
		rcu_read_lock();
		live = xp_unwind_thunk_target(current->mm, u->thunk) == u->target;
		rcu_read_unlock();
		if (live)
			uwrite(u->slot, u->thunk, &b);
	}
}

static void unwind_work(struct callback_head *cb)
{
	struct xp_unwind *s = container_of(cb, struct xp_unwind, work);
	struct xp_unwinds *set = s->set;
	bool mine = current->mm && current->mm == s->mm && !(current->flags & PF_EXITING);
	unsigned long flags;
	u8 todo = s->todo;

	s->todo = 0;
	if (mine && (todo & UNWIND_RESTORE))
		unwind_restore(s);
	else if (mine && (todo & UNWIND_REARM))
		unwind_rearm(s);
	raw_spin_lock_irqsave(&set->lock, flags);
	s->busy = false;
	/* rearmed, nothing restored, or its thread is done: free again */
	if (!mine || s->release || (todo & UNWIND_REARM) || !s->n)
		unwind_release(s);
	raw_spin_unlock_irqrestore(&set->lock, flags);
	put_task_struct(current);
	unwinds_put(set);
	/*
	 * The last this module's code does for the work: module exit polls
	 * the count, and what runs after is this function's return, which
	 * module exit's RCU-tasks wait (xp_calls_exit()) covers.
	 */
	atomic_dec(&unwind_works);
}

/*
 * @v goes, after a grace period (no hit path finds its pool): works still
 * queued are cancelled; one that runs already keeps the pool.
 */
void xp_unwinds_free(struct xp_view *v)
{
	struct xp_unwinds *set = v->unwinds;
	unsigned long flags;
	unsigned int i, dropped = 0;

	if (!set)
		return;
	raw_spin_lock_irqsave(&set->lock, flags);
	for (i = 0; i < XP_UNWIND_STATES; i++) {
		struct xp_unwind *s = &set->st[i];

		if (s->busy && s->task && task_work_cancel_p(s->task, &s->work)) {
			s->busy = false;
			put_task_struct(s->task);
			atomic_dec(&unwind_works);
			dropped++;
		}
	}
	raw_spin_unlock_irqrestore(&set->lock, flags);
	v->unwinds = NULL;
	while (dropped--)
		unwinds_put(set);
	unwinds_put(set);
}

/* ---- detach: the hooks go, the thunks on the stacks go with them ---- */

/*
 * The thunks of a process's areas at detach, with their targets: copied
 * from the blocks (urec.c, uevent.c), which may go before every thread
 * has read its stack. Freed with the last thread's work.
 */
struct xp_unwind_range {
	unsigned long base;		/* the first thunk */
	unsigned int n;			/* thunks given out, XP_URT_SIZE apart */
	u64 *tgt;			/* their targets */
};

struct xp_unwind_map {
	refcount_t refs;		/* one per queued work, and the maker's */
	struct mm_struct *mm;		/* a key only */
	unsigned int nranges, nroutines, max, nareas;
	bool syscalls;			/* seccomp: and no thread makes an area's syscall */
	unsigned long *routine;		/* records blocks' routines, max of them */
	unsigned long *area;		/* the areas' starts (syscalls), max of them */
	struct xp_uarea **uarea;	/* the areas added, until xp_unwind_map_done() */
	unsigned int nuareas;
	struct xp_unwind_range *range;	/* 2 * max of them */
	u64 tgt[];
};

/* A thread's share of a detach. */
struct xp_unwind_detach {
	struct list_head node;		/* in unwind_detaches, under unwind_detach_lock */
	struct callback_head work;
	struct task_struct *task;	/* held */
	struct xp_unwind_map *map;	/* held */
};

static LIST_HEAD(unwind_detaches);
static DEFINE_RAW_SPINLOCK(unwind_detach_lock);

#define MAP_TGTS	(XP_URT_N > XP_URET_N ? XP_URT_N : XP_URET_N)

static void map_put(struct xp_unwind_map *m)
{
	if (m && refcount_dec_and_test(&m->refs)) {
		kfree(m->uarea);
		kfree(m->routine);
		kfree(m->area);
		kfree(m->range);
		kvfree(m);
	}
}

/* A map for @nareas areas of @mm; NULL if there is no memory (nothing is given back). */
struct xp_unwind_map *xp_unwind_map_new(struct mm_struct *mm, unsigned int nareas)
{
	struct xp_unwind_map *m;

	m = kvzalloc(struct_size(m, tgt, 2 * nareas * MAP_TGTS), GFP_KERNEL_ACCOUNT);
	if (!m)
		goto fail;
	m->routine = kcalloc(nareas, sizeof(*m->routine), GFP_KERNEL_ACCOUNT);
	m->area = kcalloc(nareas, sizeof(*m->area), GFP_KERNEL_ACCOUNT);
	m->range = kcalloc(2 * nareas, sizeof(*m->range), GFP_KERNEL_ACCOUNT);
	m->uarea = kcalloc(nareas, sizeof(*m->uarea), GFP_KERNEL_ACCOUNT);
	if (!m->routine || !m->area || !m->range || !m->uarea) {
		kfree(m->uarea);
		kfree(m->routine);
		kfree(m->area);
		kfree(m->range);
		kvfree(m);
		goto fail;
	}
	refcount_set(&m->refs, 1);
	m->mm = mm;
	m->max = nareas;
	return m;
fail:
	pr_warn_ratelimited("no memory to give back the return thunks of a process whose hooks go\n");
	return NULL;
}

/* @a's blocks make no more thunks; those given out go in @m (if any). */
void xp_unwind_map_add(struct xp_unwind_map *m, struct xp_uarea *a)
{
	static u64 scratch[MAP_TGTS];	/* without a map, under xp_views_lock */
	struct xp_unwind_range *r;
	unsigned long routine;

	lockdep_assert_held(&xp_views_lock);
	if (!m || m->nroutines == m->max) {
		xp_urec_detach(a, scratch, &routine, &routine, false);
		xp_urets_detach(a, scratch, &routine);
		return;
	}
	m->uarea[m->nuareas++] = a;
	r = &m->range[m->nranges];
	r->tgt = m->tgt + m->nranges * MAP_TGTS;
	r->n = xp_urec_detach(a, r->tgt, &r->base, &routine, true);
	if (r->n) {
		m->routine[m->nroutines++] = routine;
		m->nranges++;
	}
	r = &m->range[m->nranges];
	r->tgt = m->tgt + m->nranges * MAP_TGTS;
	r->n = xp_urets_detach(a, r->tgt, &r->base);
	if (r->n)
		m->nranges++;
}

/*
 * Every area that goes is in @m: the records blocks' tail-call entries
 * take their return addresses through @m's thunks (xp_urec_detach_tails()),
 * before any stack is read. The areas' pointers are not kept past here.
 */
void xp_unwind_map_done(struct xp_unwind_map *m)
{
	unsigned int i;

	lockdep_assert_held(&xp_views_lock);
	if (!m)
		return;
	for (i = 0; i < m->nuareas; i++)
		xp_urec_detach_tails(m->uarea[i], m);
	m->nuareas = 0;
}

/*
 * seccomp (useccomp.c): the threads also step over the system calls of
 * the areas at @va (one of them each call), which a filter about to be
 * installed could kill them for.
 */
void xp_unwind_map_syscalls(struct xp_unwind_map *m, unsigned long va)
{
	if (!m || m->nareas == m->max)
		return;
	m->syscalls = true;
	m->area[m->nareas++] = va;
}

struct xp_unwind_map *xp_unwind_map_get(struct xp_unwind_map *m)
{
	if (m)
		refcount_inc(&m->refs);
	return m;
}

void xp_unwind_map_put(struct xp_unwind_map *m)
{
	map_put(m);
}

static unsigned long map_lookup(const struct xp_unwind_map *m, unsigned long w)
{
	unsigned int i;

	for (i = 0; i < m->nranges; i++) {
		const struct xp_unwind_range *r = &m->range[i];
		unsigned long off = w - r->base;

		BUILD_BUG_ON(XP_URT_SIZE != XP_URET_SIZE);
		if (off < (unsigned long)r->n * XP_URT_SIZE && !(off % XP_URT_SIZE))
			return r->tgt[off / XP_URT_SIZE];
	}
	return 0;
}

/* As xp_unwind_thunk_target(), from @m. */
static unsigned long map_target(const struct xp_unwind_map *m, unsigned long w)
{
	unsigned long t;
	unsigned int i;

	for (i = 0; i < THUNK_CHAIN; i++) {
		t = map_lookup(m, w);
		if (!t)
			return i ? w : 0;
		w = t;
	}
	return 0;
}

unsigned long xp_unwind_map_target(const struct xp_unwind_map *m, unsigned long w)
{
	return map_target(m, w);
}

/*
 * A thread stopped between its entry routine's start and its thunk's
 * store goes to the routine's end, its unsaved registers saved for it
 * (urec_win.h says where and why, for the host harness too). One past a
 * tail call's store goes to the end too: the scan below finds that thunk
 * in its slot.
 */
static void detach_window(const struct xp_unwind_map *m, struct pt_regs *regs,
			  struct xp_ubudget *b)
{
	unsigned long sp = regs->sp, to;
	struct xp_urec_win w;
	unsigned int i;
	int save;

	for (i = 0; i < m->nroutines; i++) {
		xp_urec_window(m->routine[i], &w);
		to = xp_urec_win_resume(&w, regs->ip, &save);
		if (!to)
			continue;
		if (save &&
		    (uwrite(sp - 0x10, regs->dx, b) || uwrite(sp - 0x18, regs->cx, b) ||
		     uwrite(sp - 0x20, regs->r11, b) || uwrite(sp - 0x28, regs->si, b)))
			return;		/* its stack is gone: it faults where it is */
		regs->ip = to;
		return;
	}
}

/*
 * seccomp: a thread stopped in an area on its way to a system call (an
 * event stub's or event thunk's pushes and mov, the records routines'
 * save of rdi and their movs: the only code the areas hold before a
 * syscall outside the entry's window; the ask's rdi stays 1, "not
 * stamped"; rdi's save is done here too, which the code after the
 * syscall puts back) would make that call
 * once the filter is in, which may kill the process for it. It resumes
 * past the syscall instead, its pushes done, with what the kernel leaves
 * there (-ENOSYS in rax, the return ip in rcx, the flags in r11): the
 * code after each of them takes that as "no one listens". The bytes are
 * read from the process's mapping: whatever it forged there moves only
 * its own registers and stack.
 */
static void detach_syscall(const struct xp_unwind_map *m, struct pt_regs *regs,
			   struct xp_ubudget *b)
{
	unsigned long ip = regs->ip, ax = regs->ax, di = regs->di, push[3], di_save = 0;
	unsigned int i, n = 0, step;
	bool save = false;
	u8 c[5];

	for (i = 0; i < m->nareas; i++)
		if (ip - m->area[i] < XP_UAREA_SIZE)
			break;
	if (i == m->nareas)
		return;
	for (step = 0; step < 5; step++) {
		if (uread(c, ip, 2, b))
			return;
		if (c[0] == 0x0f && c[1] == 0x05)
			goto skip;
		if (c[0] == 0x50 && n < 3) {			/* push %rax */
			push[n++] = ax;
			ip += 1;
		} else if (c[0] == 0x51 && n < 3) {		/* push %rcx */
			push[n++] = regs->cx;
			ip += 1;
		} else if (c[0] == 0x41 && c[1] == 0x53 && n < 3) {	/* push %r11 */
			push[n++] = regs->r11;
			ip += 2;
		} else if (c[0] == 0xb8 && !uread(c, ip, 5, b)) {	/* mov $imm32, %eax */
			ax = get_unaligned_le32(c + 1);
			ip += 5;
		} else if (c[0] == 0xbf && !uread(c, ip, 5, b)) {	/* mov $imm32, %edi */
			di = get_unaligned_le32(c + 1);
			ip += 5;
		} else if (c[0] == 0x48 && c[1] == 0x89 && !n && !save && !uread(c, ip, 5, b) &&
			   c[2] == 0x7c && c[3] == 0x24 && c[4] == 0xd0) {
			/* mov %rdi, -0x30(%rsp): written at the skip */
			save = true;
			di_save = di;
			ip += 5;
		} else {
			return;		/* no syscall ahead */
		}
	}
	return;
skip:
	for (i = 0; i < n; i++)
		if (uwrite(regs->sp - 8 * (i + 1), push[i], b))
			return;		/* its stack is gone: it faults where it is */
	if (save && uwrite(regs->sp - 0x30, di_save, b))
		return;
	regs->sp -= 8 * n;
	regs->di = di;
	regs->ip = ip + 2;
	regs->cx = ip + 2;
	regs->r11 = regs->flags;
	regs->ax = -ENOSYS;
}

/*
 * What the word @w of a stack at detach becomes: a thunk's target, or 0
 * to leave it. A thunk with XP_URT_TAILBIT over it is a word a thread
 * loaded from a tail call's hash entry and had not yet cleared (btr)
 * when a signal stopped it: its sigframe's rcx, which detach_window()
 * does not see. It gets the target with the bit, so that the btr, once
 * the handler returns, leaves the return address for the store (until
 * 2026-12-04 it stored the thunk after its stack was read: an exception
 * through that frame then ended the program; the review's finding 1).
 */
static unsigned long detach_word(const struct xp_unwind_map *m, unsigned long w)
{
	unsigned long tail = w & BIT_ULL(XP_URT_TAILBIT), t = map_target(m, w & ~tail);

	return t ? t | tail : 0;
}

/* Every thunk of @m on current's stack, from its sp up, gets its target back. */
static void detach_restore(const struct xp_unwind_map *m)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long buf[UNWIND_CHUNK], sp, end, addr, t;
	struct xp_ubudget b = {};
	unsigned int i, words;

	detach_window(m, regs, &b);
	if (m->syscalls)
		detach_syscall(m, regs, &b);
	if (!m->nranges)
		return;
	sp = regs->sp & ~7UL;
	end = stack_end(sp);
	for (addr = sp; addr < end; addr += sizeof(buf)) {
		words = min_t(unsigned long, UNWIND_CHUNK, (end - addr) / 8);
		if (uread(buf, addr, words * 8, &b))
			break;
		for (i = 0; i < words; i++) {
			t = detach_word(m, buf[i]);
			if (t)
				uwrite(addr + i * 8, t, &b);
		}
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
}

static void detach_work(struct callback_head *cb)
{
	struct xp_unwind_detach *d = container_of(cb, struct xp_unwind_detach, work);
	unsigned long flags;

	raw_spin_lock_irqsave(&unwind_detach_lock, flags);
	list_del(&d->node);
	raw_spin_unlock_irqrestore(&unwind_detach_lock, flags);
	if (current->mm == d->map->mm &&
	    !(current->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER)))
		detach_restore(d->map);
	map_put(d->map);
	put_task_struct(d->task);
	kfree(d);
	atomic_dec(&unwind_works);	/* the last: unwind_work() says why */
}

/*
 * Every thread of @m's process reads its stack before it next runs in user
 * mode: one running now is sent an interrupt (kick_process()), one asleep
 * does it when it wakes, before its system call returns (no signal: its
 * sleep is not cut short). Takes @m.
 */
/* @t's share of @m, queued; false when @t exits or there is no memory. */
static bool detach_one(struct xp_unwind_map *m, struct task_struct *t)
{
	struct xp_unwind_detach *d = kzalloc(sizeof(*d), GFP_NOWAIT | __GFP_NOWARN);
	unsigned long flags;

	if (!d)
		return false;
	d->task = get_task_struct(t);
	refcount_inc(&m->refs);
	d->map = m;
	init_task_work(&d->work, detach_work);
	atomic_inc(&unwind_works);
	raw_spin_lock_irqsave(&unwind_detach_lock, flags);
	list_add(&d->node, &unwind_detaches);
	raw_spin_unlock_irqrestore(&unwind_detach_lock, flags);
	if (!task_work_add(t, &d->work, XP_TWA_RESUME_ATOMIC))
		return true;
	/* it exits: nothing of it runs in user mode again */
	raw_spin_lock_irqsave(&unwind_detach_lock, flags);
	list_del(&d->node);
	raw_spin_unlock_irqrestore(&unwind_detach_lock, flags);
	map_put(m);
	put_task_struct(t);
	kfree(d);
	atomic_dec(&unwind_works);
	return true;
}

void xp_unwind_detach_queue(struct xp_unwind_map *m)
{
	struct task_struct *p, *t;

	if (!m)
		return;
	rcu_read_lock();
	for_each_process_thread(p, t) {
		/* per thread: a leader that exited (pthread_exit()) has no mm */
		if ((!m->nranges && !m->syscalls) || READ_ONCE(t->mm) != m->mm ||
		    READ_ONCE(unwind_exiting) ||
		    (t->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER)))
			continue;
		if (detach_one(m, t))
			kick_process(t);
		else
			pr_warn_ratelimited("pid %d: no memory to give a thread's return thunks back\n",
					    task_tgid_nr(t));
	}
	rcu_read_unlock();
	map_put(m);
}

/*
 * seccomp: wait until no thread of @m's process can run in user mode
 * before its detach work has run: each thread with its work still queued
 * is off its CPU (->on_cpu clear: it runs the work before it returns to
 * user mode) or was sent an interrupt and runs the work on its way back; this waits for the
 * second kind, at most @ms milliseconds (a thread that keeps its CPU in
 * the kernel runs the work before user mode all the same). The caller's
 * own work runs after the caller's.
 */
void xp_unwind_detach_wait(struct xp_unwind_map *m, unsigned int ms)
{
	unsigned long until = jiffies + msecs_to_jiffies(ms), flags;
	struct xp_unwind_detach *d;
	bool busy;

	do {
		busy = false;
		raw_spin_lock_irqsave(&unwind_detach_lock, flags);
		list_for_each_entry(d, &unwind_detaches, node)
			if (d->map == m && d->task != current && READ_ONCE(d->task->on_cpu))
				busy = true;
		raw_spin_unlock_irqrestore(&unwind_detach_lock, flags);
		if (!busy || fatal_signal_pending(current))
			return;
		usleep_range(100, 200);
	} while (time_before(jiffies, until));
}

/* @v's hooks go: its threads' rearms are given up. */
void xp_unwinds_detach(struct xp_view *v)
{
	struct xp_unwinds *set = v->unwinds;

	lockdep_assert_held(&xp_views_lock);
	if (set)
		WRITE_ONCE(set->detached, true);
}

/* task_work_cancel(), which the kernel does not export; false without it. */
bool xp_task_work_cancel(struct task_struct *t, struct callback_head *cb)
{
	return task_work_cancel_p && task_work_cancel_p(t, cb);
}

/* Can a task work of ours be taken back at module exit (xp_task_work_cancel())? */
bool xp_task_work_can_cancel(void)
{
	return task_work_cancel_p;
}

void xp_unwind_init(void)
{
	task_work_cancel_p = (typeof(task_work_cancel_p))xp_sym_lookup("task_work_cancel", NULL);
}

/*
 * Module exit, after every view: the detach works of threads that have
 * not run since (asleep, or stopped by a debugger) are cancelled (those
 * threads keep their thunks, which still return right); the works that
 * run already are waited for.
 */
void xp_unwind_exit(void)
{
	struct xp_unwind_detach *d, *n;
	unsigned long flags;
	LIST_HEAD(gone);

	WRITE_ONCE(unwind_exiting, true);	/* under xp_views_lock for the queues: none left */
	mutex_lock(&xp_views_lock);
	mutex_unlock(&xp_views_lock);
	raw_spin_lock_irqsave(&unwind_detach_lock, flags);
	list_for_each_entry_safe(d, n, &unwind_detaches, node)
		if (xp_task_work_cancel(d->task, &d->work))
			list_move(&d->node, &gone);
	raw_spin_unlock_irqrestore(&unwind_detach_lock, flags);
	list_for_each_entry_safe(d, n, &gone, node) {
		map_put(d->map);
		put_task_struct(d->task);
		kfree(d);
		atomic_dec(&unwind_works);
	}
	while (atomic_read(&unwind_works))
		msleep(1);	/* each runs a bounded time: no page is waited for */
}

#ifdef XPROBES_KUNIT
#include "uunwind_kunit.c"
#endif
