// SPDX-License-Identifier: GPL-2.0
/*
 * Late events: what a user hook's system call could not read or write on
 * the hit path (docs/userhooks.md, "Late events").
 *
 * The handlers of the hooks' system calls (uevent.c: an entry, a return;
 * urec.c: a return address that needs a thunk) run on the hit path of the
 * view's hook on __x64_sys_ni_syscall, preemption off, and touch the
 * thread's stack without faulting: the stub's pushed registers, the return
 * address, the slot a thunk goes into. The thread wrote those words just
 * before its syscall, yet their page may be out for a moment all the same:
 * khugepaged collapsing the range into a huge page (its entries cleared
 * while it copies), migration, reclaim, a fork's copy-on-write for a
 * write. Until 2026-12-01 such an event was dropped: a Go program traced
 * whole lost one call of 120040 in CI (selftest 49), and a thread whose
 * stack is collapsed under it (stackzap, selftest 49) lost about one call
 * in a thousand with events.
 *
 * Now the handler asks for the event again (struct xp_ulate: what is left
 * to do, and the access that failed) and the thread runs it from task work
 * before the system call returns to the stub: the work brings the page in
 * (xp_ufault(), uunwind.c: never waiting for one without bound, which
 * module exit relies on), then runs the handler again, preemption off, as
 * the hit path would have (xp_uevent_do()), the process's registers
 * still the syscall's: task work runs before a signal's frame is made
 * (get_signal() runs it first) and before a ptrace stop for a signal, but
 * after the syscall-exit stop of PTRACE_SYSCALL (and after audit and the
 * sys_exit tracepoint): a debugger there may change the registers the
 * work then reads, which only changes its own tracee's figures. Another work on
 * the thread may run first (works run newest first) and change them: a
 * detach work sending a thread caught in the records routine to its end
 * (uunwind.c). The redo decides everything again from the registers and
 * the areas' state (detached first, then the detach works queued), so it
 * does what the hit path would have done there. It tries
 * again while pages come in, XP_ULATE_TRIES of them at most, and while the
 * mmap lock is held, a second of waits at most (XP_UFAULT_WAITS); then the
 * event is counted lost on its hook (calls_missed, ret_missed) and said
 * on the xprobes_uhook_lost tracepoint (uevent.c, uhook_lost()). An entry
 * whose event fired but whose return address could not become a thunk's
 * does only that again (XP_ULATE_HIJACK): no event fires twice.
 *
 * The works come from a pool (XP_ULATE_N, a bitmap): the hit path may not
 * allocate (PREEMPT_RT's allocator sleeps), claimed under a raw lock. A
 * thread has at most one (one system call at a time), a process
 * XP_ULATE_PER_MM (a thread can only be in that window between its push
 * and the handler's read when a page goes out: a few per process, one per
 * CPU it runs on). A work faults in XP_ULATE_TRIES pages at most, but a thread stopped by a debugger at its
 * syscall's exit holds its work until it runs on: so a process cannot
 * take more than its share, and it takes XP_ULATE_N / XP_ULATE_PER_MM
 * processes that keep theirs to empty the pool. Past its share, or with
 * the pool empty, the event is lost, counted on its hook (a records
 * routine's request is not: its record is lost as with a full block).
 *
 * Module exit, once no hook is left: works not yet run are cancelled,
 * those running are waited for (each runs a bounded time: xp_ufault()
 * only tries the mmap lock and only faults anonymous memory no
 * userfaultfd watches, and the loop ends at exit's flag).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/task_work.h>
#include "xprobes.h"
#include "compat.h"
#include "hooks/fire.h"
#include "uhook.h"

#define XP_ULATE_N	256
#define XP_ULATE_PER_MM	8	/* a process's share of the pool */
#define XP_ULATE_TRIES	32	/* pages a work brings in at most */

struct ulate_work {
	struct callback_head work;
	struct task_struct *task;	/* held, for module exit's cancel */
	struct mm_struct *mm;		/* its process's: a key only */
	struct xp_ulate what;
};

static struct ulate_work ulate_pool[XP_ULATE_N];
static DECLARE_BITMAP(ulate_busy, XP_ULATE_N);
static DEFINE_RAW_SPINLOCK(ulate_lock);	/* a work's end against exit's cancel */
static bool ulate_exiting;

/* Let @w go: its bit under the lock, which exit's cancel tests it under. */
static void ulate_unclaim(struct ulate_work *w)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ulate_lock, flags);
	w->mm = NULL;
	__clear_bit(w - ulate_pool, ulate_busy);
	raw_spin_unlock_irqrestore(&ulate_lock, flags);
}

static void ulate_free(struct ulate_work *w)
{
	struct task_struct *t = w->task;

	ulate_unclaim(w);
	put_task_struct(t);
}

static void ulate_work(struct callback_head *cb)
{
	struct ulate_work *w = container_of(cb, struct ulate_work, work);
	struct pt_regs *u = task_pt_regs(current);
	struct xp_ulate l = w->what;
	/* the stub's words span two pages at most: a short budget */
	struct xp_ubudget b = { .tries = XP_UFAULT_TRIES - XP_ULATE_TRIES };

	l.late = true;
	while (l.kind && !(current->flags & PF_EXITING) && !READ_ONCE(ulate_exiting)) {
		/* the last try counts the event lost on its hook */
		l.last = !xp_ufault(l.addr, l.len, l.write, &b);
		xp_uevent_task(u, &l);
		if (l.last)
			break;
	}
	ulate_free(w);
}

/* A free work for @mm's thread, or NULL: its process has its share, or none is free. */
static struct ulate_work *ulate_claim(struct mm_struct *mm)
{
	unsigned int i, mine = 0;
	unsigned long flags;

	raw_spin_lock_irqsave(&ulate_lock, flags);
	for_each_set_bit(i, ulate_busy, XP_ULATE_N)
		mine += ulate_pool[i].mm == mm;
	i = find_first_zero_bit(ulate_busy, XP_ULATE_N);
	if (mine < XP_ULATE_PER_MM && i < XP_ULATE_N) {
		__set_bit(i, ulate_busy);
		ulate_pool[i].mm = mm;
	}
	raw_spin_unlock_irqrestore(&ulate_lock, flags);
	return mine < XP_ULATE_PER_MM && i < XP_ULATE_N ? &ulate_pool[i] : NULL;
}

/*
 * On the hit path (preemption off): the thread does @l again before its
 * system call returns. False when it cannot (no work free, the thread
 * exits, module exit): the caller counts the event lost.
 */
static bool ulate_queue(const struct xp_ulate *l)
{
	struct ulate_work *w;

	if (READ_ONCE(ulate_exiting) ||
	    (current->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER)))
		return false;
	/*
	 * A process that keeps pages out or its mmap lock held on purpose
	 * holds a work for about a second at most (XP_UFAULT_WAITS jiffies of
	 * waits, XP_ULATE_TRIES faults), and XP_ULATE_PER_MM of them: the
	 * others' events go on.
	 */
	w = ulate_claim(current->mm);
	if (!w)
		return false;
	w->what = *l;
	w->task = get_task_struct(current);
	init_task_work(&w->work, ulate_work);
	if (!task_work_add(current, &w->work, XP_TWA_RESUME_ATOMIC))
		return true;
	ulate_free(w);		/* it exits: nothing of it runs in user mode again */
	return false;
}

/*
 * A handler's access of @len bytes at @addr failed: @kind is to be done
 * again. True when it will be (from task work); false when the caller
 * counts the event lost.
 */
bool xp_ulate_ask(struct xp_ulate *l, u8 kind, unsigned long addr, u8 len, bool write)
{
	if (l->last)
		return false;
	l->kind = kind;
	l->addr = addr;
	l->len = len;
	l->write = write;
	return l->late || ulate_queue(l);
}

/* Module exit, after every hook: none is queued any more. */
void xp_ulate_exit(void)
{
	unsigned long flags;
	unsigned int i;
	bool gone;

	WRITE_ONCE(ulate_exiting, true);
	synchronize_rcu();	/* a hit path that read it clear has queued */
	for (i = 0; i < XP_ULATE_N; i++) {
		/* held while busy: the work lets it go after the bit, under the lock */
		raw_spin_lock_irqsave(&ulate_lock, flags);
		gone = test_bit(i, ulate_busy) &&
		       xp_task_work_cancel(ulate_pool[i].task, &ulate_pool[i].work);
		raw_spin_unlock_irqrestore(&ulate_lock, flags);
		if (gone)
			ulate_free(&ulate_pool[i]);
	}
	while (!bitmap_empty(ulate_busy, XP_ULATE_N))
		msleep(1);	/* each runs a bounded time: no page is waited for */
}

#ifdef XPROBES_KUNIT
#include "ulate_kunit.c"
#endif
