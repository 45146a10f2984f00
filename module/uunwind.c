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
 *    from anything the process can write). It keeps the slots it wrote
 *    (XP_UNWIND_SLOTS of them, the nearest first).
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
 * The process may only mislead its own figures: it writes its own stack,
 * the values written are a thunk's address and its target, taken from
 * the module's tables, and a thunk returns to its target whatever stack
 * slot holds it, so putting one where its target was never changes where
 * a return goes. The restore needs no state and always runs (a full pool
 * of states costs returns only, counted).
 *
 * Locking: a view's states are a pool made with its first unwinder hook
 * (xp_unwinds_get(), under xp_views_lock) and freed after the view and
 * every task work that uses them: the pool is refcounted, one reference
 * the view's, one each queued work's. A state is touched by its own thread
 * (hit paths and its task work, which never overlap) and, for taking and
 * giving back, under the pool's raw lock. Teardown cancels queued works;
 * one that already runs holds its reference; module exit waits for all
 * (xp_unwind_exit()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include "xprobes.h"
#include "uhook.h"

#define XP_UNWIND_STATES	64		/* threads of a view with an unwinding pending */
#define XP_UNWIND_SLOTS		256		/* slots kept by a thread for its rearm */
#define XP_UNWIND_SCAN		(64UL << 20)	/* bytes of stack read at most */
#define UNWIND_CHUNK		32		/* words read at a time */

enum { UNWIND_RESTORE = 1, UNWIND_REARM = 2 };

struct xp_unwound {
	unsigned long slot, thunk, target;
};

struct xp_unwind {
	struct xp_unwinds *set;
	struct task_struct *task;	/* the thread, a key (with tid); NULL: free */
	pid_t tid;
	bool busy;			/* its work is queued or running */
	bool pending;			/* restored slots await the rearm */
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
	struct xp_unwind st[XP_UNWIND_STATES];
};

static atomic_t unwind_works = ATOMIC_INIT(0);	/* queued or running, module-wide */
static bool (*task_work_cancel_p)(struct task_struct *, struct callback_head *);

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

/* Current's state in @set, or NULL; under its lock, or by current itself. */
static struct xp_unwind *unwind_find(struct xp_unwinds *set, struct task_struct *t)
{
	unsigned int i;

	for (i = 0; i < XP_UNWIND_STATES; i++) {
		struct xp_unwind *s = &set->st[i];

		if (READ_ONCE(s->task) == t && READ_ONCE(s->tid) == t->pid)
			return s;
	}
	return NULL;
}

static void unwind_release(struct xp_unwind *s)
{
	lockdep_assert_held(&s->set->lock);
	if (s->pending)
		s->set->npending--;
	s->pending = false;
	s->n = 0;
	WRITE_ONCE(s->task, NULL);
}

/*
 * Current's state, taken if it has none: a free one, else one whose
 * rearm is given up (any not busy: its thread loses the returns of the
 * frames still restored), and made busy with @todo, under the lock so
 * that no other thread takes it meanwhile. NULL when every state is busy.
 */
static struct xp_unwind *unwind_take(struct xp_unwinds *set, u8 todo, unsigned long sp)
{
	struct xp_unwind *s, *spare = NULL;
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&set->lock, flags);
	s = unwind_find(set, current);
	if (s)
		goto found;
	for (i = 0; i < XP_UNWIND_STATES; i++) {
		s = &set->st[i];
		if (!s->task)
			goto claim;
		if (!s->busy && !spare)
			spare = s;
	}
	s = spare;
	if (!s)
		goto out;
	unwind_release(s);
claim:
	s->tid = current->pid;
	WRITE_ONCE(s->task, current);
found:
	if (s->busy) {
		s = NULL;	/* its work has not run: a call from the kernel's own exit */
		goto out;
	}
	s->busy = true;
	s->todo = todo;
	s->unwind_sp = sp;
out:
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
	if (!task_work_add(current, &s->work, TWA_RESUME))
		return;
	/* exiting: nothing of it runs in user mode again */
	raw_spin_lock_irqsave(&set->lock, flags);
	s->busy = false;
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

	if (!set)
		return;
	s = unwind_take(set, UNWIND_RESTORE, sp);
	if (!s) {
		pr_warn_ratelimited("pid %d: %u threads unwinding at once: one is not helped\n",
				    task_tgid_nr(current), XP_UNWIND_STATES);
		return;
	}
	unwind_queue(s);
	xp_urec_force(v);
}

/* Does @t await a rearm? On @t's switch-in, preemption off. */
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
 * the unwinder's entry, the unwinding is over: rearm.
 */
void xp_unwind_landed(struct xp_view *v, unsigned long sp)
{
	struct xp_unwinds *set = READ_ONCE(v->unwinds);
	struct xp_unwind *s;
	unsigned long flags;

	if (!set || !READ_ONCE(set->npending))
		return;
	raw_spin_lock_irqsave(&set->lock, flags);
	s = unwind_find(set, current);
	if (!s || !s->pending || s->busy || sp <= s->unwind_sp) {
		raw_spin_unlock_irqrestore(&set->lock, flags);
		return;
	}
	s->busy = true;
	s->todo = UNWIND_REARM;
	s->at_sp = sp;
	raw_spin_unlock_irqrestore(&set->lock, flags);
	unwind_queue(s);
}

/* Current's last slice (the view's do_exit hook): its state goes. */
void xp_unwind_exit_task(struct xp_view *v)
{
	struct xp_unwinds *set = READ_ONCE(v->unwinds);
	struct xp_unwind *s;
	unsigned long flags;

	if (!set)
		return;
	raw_spin_lock_irqsave(&set->lock, flags);
	s = unwind_find(set, current);
	if (s && !s->busy)
		unwind_release(s);
	raw_spin_unlock_irqrestore(&set->lock, flags);
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

static unsigned long thunk_target(struct mm_struct *mm, unsigned long w)
{
	unsigned long t = xp_urec_thunk_target(mm, w);

	return t ?: xp_uret_thunk_target(mm, w);
}

/* Step 1: every thunk from the unwinder's entry sp up gets its target back. */
static void unwind_restore(struct xp_unwind *s)
{
	struct mm_struct *mm = current->mm;
	struct xp_unwound hit[UNWIND_CHUNK];
	unsigned long buf[UNWIND_CHUNK];
	unsigned long sp = s->unwind_sp & ~7UL, end = 0, addr;
	struct vm_area_struct *vma;
	unsigned int i, nhit;

	if (!s->slots) {
		s->slots = kvmalloc_array(XP_UNWIND_SLOTS, sizeof(*s->slots), GFP_KERNEL_ACCOUNT);
		s->n = 0;
	}
	if (mmap_read_lock_killable(mm))
		return;
	vma = vma_lookup(mm, sp);
	if (vma)
		end = vma->vm_end;
	mmap_read_unlock(mm);
	if (!end)
		return;
	end = min(end, sp + XP_UNWIND_SCAN);
	if (s->slots)
		slots_keep_above(s, sp);
	for (addr = sp; addr < end; addr += sizeof(buf)) {
		unsigned int words = min_t(unsigned long, UNWIND_CHUNK, (end - addr) / 8);

		if (copy_from_user(buf, (const void __user *)addr, words * 8))
			break;
		nhit = 0;
		rcu_read_lock();
		for (i = 0; i < words; i++) {
			unsigned long target = thunk_target(mm, buf[i]);

			if (!target)
				continue;
			hit[nhit].slot = addr + i * 8;
			hit[nhit].thunk = buf[i];
			hit[nhit++].target = target;
		}
		rcu_read_unlock();
		for (i = 0; i < nhit; i++) {
			if (put_user(hit[i].target, (unsigned long __user *)hit[i].slot))
				continue;
			if (s->slots && s->n < XP_UNWIND_SLOTS)
				s->slots[s->n++] = hit[i];
		}
		cond_resched();
	}
	if (s->n && !s->pending) {
		unsigned long flags;

		raw_spin_lock_irqsave(&s->set->lock, flags);
		s->pending = true;
		s->set->npending++;
		raw_spin_unlock_irqrestore(&s->set->lock, flags);
	}
}

/* Step 2: the slots of frames still there, as written, get their thunks again. */
static void unwind_rearm(struct xp_unwind *s)
{
	unsigned long cur, flags;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		struct xp_unwound *u = &s->slots[i];

		if (u->slot <= s->at_sp)
			continue;
		if (get_user(cur, (unsigned long __user *)u->slot) || cur != u->target)
			continue;
		put_user(u->thunk, (unsigned long __user *)u->slot);
	}
	raw_spin_lock_irqsave(&s->set->lock, flags);
	unwind_release(s);
	raw_spin_unlock_irqrestore(&s->set->lock, flags);
}

static void unwind_work(struct callback_head *cb)
{
	struct xp_unwind *s = container_of(cb, struct xp_unwind, work);
	struct xp_unwinds *set = s->set;
	unsigned long flags;
	u8 todo = s->todo;

	s->todo = 0;
	if (current->mm && !(current->flags & PF_EXITING)) {
		if (todo & UNWIND_RESTORE)
			unwind_restore(s);
		else if (todo & UNWIND_REARM)
			unwind_rearm(s);
	}
	raw_spin_lock_irqsave(&set->lock, flags);
	s->busy = false;
	raw_spin_unlock_irqrestore(&set->lock, flags);
	put_task_struct(current);
	unwinds_put(set);
	/*
	 * The last this module's text does for the work: module exit waits
	 * for the count; what runs after is this function's return.
	 */
	if (atomic_dec_and_test(&unwind_works))
		wake_up_var(&unwind_works);
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
	wake_up_var(&unwind_works);
}

void xp_unwind_init(void)
{
	task_work_cancel_p = (void *)xp_sym_lookup("task_work_cancel", NULL);
}

/* Module exit, after every view: the works that ran on are done. */
void xp_unwind_exit(void)
{
	wait_var_event(&unwind_works, !atomic_read(&unwind_works));
}
