// SPDX-License-Identifier: GPL-2.0
/*
 * A view's guard: a task without an mm of its own never runs on the view's
 * page tables.
 *
 * Why. A jump hook covers several instructions of the view's copy with its
 * 5 bytes. The traced process's tasks never stop between two of them once
 * the jump is live (jump.c: the int3 stage and an RCU-tasks grace period),
 * but every other task runs the shared text, and may be preempted anywhere
 * in it: between two of the instructions a view's jump covers, too. A task
 * with an mm resumes on its own tables, in the shared text. A task without
 * one (a kernel thread, a task past exit_mm(), one that kthread_unuse_mm()
 * left) resumes on whatever tables its CPU has loaded, and lazy TLB keeps
 * the previous task's: a traced one's, so it resumed in the view's copy,
 * inside the jump's displacement. The emulator hid it (TCG takes
 * interrupts only at the end of a translation block); with one instruction
 * per block and preempt=full, a kernel thread calling kstrdup() died at
 * kstrdup+0xc within a minute of guest time (selftest 90-preempt).
 *
 * How. enter_lazy_tlb() is where the kernel tells the architecture that a
 * task without an mm is taking the CPU: context_switch() calls it before
 * switch_to() when the next task has none, exit_mm() and
 * kthread_unuse_mm() when the current task lets its mm go; all three with
 * interrupts off. Its own comment lists "switching to init_mm" among the
 * acceptable implementations. In a view with a jump hook over several
 * instructions, the copy of enter_lazy_tlb() jumps here instead (a call
 * hook on its first instruction after the fentry site, an 8-byte load on
 * Debian's 6.1 and 6.12, whose jump goes to xp_enter_lazy_tlb() rather than
 * to an entry: a tail call, the caller's return address is on the stack).
 * xp_enter_lazy_tlb() does what enter_lazy_tlb() does, then leaves the
 * view's tables for init_mm's with leave_mm(), which intel_idle calls from a
 * lazy CPU for the same effect. Only a CPU on the view's tables runs the
 * copy, so the guard sees exactly the switches that matter, and nothing
 * else on the machine pays for it.
 *
 * The idle task stays lazily on the view's tables: it runs with preemption
 * off and is never switched out between two instructions, and leaving would
 * cost the traced process two CR3 writes per idle period. Interrupts and
 * NMIs on the view's tables return to what they interrupted. Kernel threads
 * that adopt a traced mm (kthread_use_mm(): io_uring, vhost) are on it by
 * choice, and reach it at a call, not between two covered instructions.
 *
 * Ordering (jump.c, hook.c): the guard is a live jump before the first jump
 * over several instructions of its view goes in (optimize_jumps() checks),
 * and goes back to an int3 only after every such jump of its view has
 * (xp_calls_disarm()). A kprobe registered on it takes those jumps apart
 * first (xp_jumps_yield()). While it is an int3 (being armed, or displaced)
 * it only runs its instruction out of line: no jump over several
 * instructions is live in its view then.
 *
 * Hits count the tasks kept off the view's tables, "dropped" the idle
 * task's switches that stayed (hook list, docs/views.md).
 *
 * Locking: the guard is added and removed under xp_views_lock like any
 * hook; xp_enter_lazy_tlb() runs with interrupts off and finds its view
 * under RCU (interrupts off is a read-side critical section).
 */
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/mmu_context.h>
#include <asm/tlbflush.h>
#include "xprobes.h"

#define GUARD_SYMBOL "enter_lazy_tlb"

/*
 * enter_lazy_tlb()'s per-CPU flag. It is exported (the TLB code modules
 * inline reads it), but asm/tlbflush.h declares it, and its type, only
 * outside modules: struct tlb_state_shared { bool is_lazy; }, the same on
 * 6.1 and 6.12.
 */
struct xp_tlb_state_shared {
	bool is_lazy;
};
DECLARE_PER_CPU_SHARED_ALIGNED(struct xp_tlb_state_shared, cpu_tlbstate_shared);

/*
 * Reached by a jump from the view's copy of enter_lazy_tlb(), with its
 * arguments and its caller's return address: returns to that caller.
 */
notrace void xp_enter_lazy_tlb(struct mm_struct *mm, struct task_struct *tsk)
{
	struct xp_view *v = xp_view_of_pgd(__va(read_cr3_pa()));
	struct xp_hook *g = v ? READ_ONCE(v->guard) : NULL;

	/* enter_lazy_tlb(): the loaded mm is a traced one here, never init_mm. */
	this_cpu_write(cpu_tlbstate_shared.is_lazy, true);
	if (is_idle_task(tsk)) {
		if (g)
			this_cpu_inc(g->stats->dropped);
		return;
	}
	xp_leave_mm();
	if (g)
		this_cpu_inc(g->stats->hits);
}
NOKPROBE_SYMBOL(xp_enter_lazy_tlb);

/* On a CPU that has the mm @info loaded for a task without it (lazily): to init_mm. */
static void leave_lazy(void *info)
{
	struct mm_struct *mm = info;

	if (this_cpu_read(cpu_tlbstate_shared.is_lazy) && current->mm != mm &&
	    read_cr3_pa() == __pa(mm->pgd))
		xp_leave_mm();
}

/*
 * @mm is about to join a view while its jumps may be live: exec's new mm
 * was loaded (exec_mmap()) before the tracepoint lets it join, and its task
 * may have blocked in between, leaving a CPU that keeps @mm loaded lazily
 * under a kernel thread, which would then run the view's copies without
 * having passed the guard. Those CPUs leave it first (mm_cpumask() holds
 * the lazy ones too). Only the joining task runs @mm, with preemption off
 * here, so no CPU takes it up meanwhile.
 */
void xp_guard_evict(struct mm_struct *mm)
{
	smp_call_function_many(mm_cpumask(mm), leave_lazy, mm, true);
}

/* Its int3 while it is armed or displaced: the instruction runs out of line, no more. */
static void guard_trap(struct xp_hook *h, struct pt_regs *regs)
{
}
NOKPROBE_SYMBOL(guard_trap);

/*
 * Make sure @v has its guard, live, before a jump over several
 * instructions goes in (under xp_views_lock). Returns NULL, or why the
 * view cannot have one (then such hooks stay int3s).
 */
const char *xp_guard_get(struct xp_view *v)
{
	struct xp_hook *g;

	lockdep_assert_held(&xp_views_lock);
	if (v->guard)
		return xp_guard_live(v) ? NULL :
		       "the view's guard against kernel threads on its page tables was displaced";
	g = xp_hook_add(v, GUARD_SYMBOL, NULL, 0, XP_F_GUARD, NULL);
	if (IS_ERR(g))
		return "the view's guard against kernel threads on its page tables "
		       "could not be placed on " GUARD_SYMBOL "()";
	WRITE_ONCE(v->guard, g);
	if (!xp_guard_live(v))
		return "the view's guard against kernel threads on its page tables is not live";
	return NULL;
}

/* Is @v's guard a live jump (not an int3, not displaced)? */
bool xp_guard_live(struct xp_view *v)
{
	struct xp_hook *g = READ_ONCE(v->guard);

	return g && READ_ONCE(g->mode) == XP_HOOK_CALL && !READ_ONCE(g->broken);
}
NOKPROBE_SYMBOL(xp_guard_live);	/* xp_jumps_yield() */

/* What xp_hook_add() needs to place a guard: where its jump goes, its trap handler. */
void xp_guard_setup(struct xp_hook *h)
{
	h->redirect = (unsigned long)xp_enter_lazy_tlb;
	h->internal = guard_trap;
}
