/* SPDX-License-Identifier: GPL-2.0 */
/* Firing a hit, shared by the trap (dispatch.c) and jump (jump.c) paths. */
#ifndef _XPROBES_FIRE_H
#define _XPROBES_FIRE_H

#include <linux/filter.h>
#include <linux/percpu.h>
#include "xprobes.h"
#include "trace.h"

/*
 * Set while this CPU dispatches a hit (1, else 0). A hook's program and the
 * tracepoint run kernel code (the BPF run path, helpers, whatever a program
 * calls); a hook on any of it hits again inside the dispatch of the first.
 * That nested hit is counted and its instruction runs, but it fires nothing:
 * no recursion, whatever is hooked. What can nest (an interrupt on the jump
 * path, whose interrupts stay as they were; an NMI; a trap) runs to its end
 * before the outer dispatch goes on, and leaves the flag as it found it.
 */
DECLARE_PER_CPU(unsigned int, xp_dispatching);

/*
 * Is this CPU's copy of the flag or guard at @p non-zero? One compare
 * against memory and the branch: GCC 12, which Debian 12 builds with,
 * compiles this_cpu_read() and a test to a load and a test, two
 * instructions, even through 6.12's named address space
 * (CONFIG_USE_X86_SEG_SUPPORT). The program's guard is read so: an
 * instruction a hit. Not xp_dispatching: there GCC placed the nested
 * case's block inline and jumped over it, which gave the instruction back.
 * Per-CPU data is %gs-relative on x86-64 SMP, which every kernel built for
 * is.
 */
#ifndef CONFIG_SMP
#error "xp_cpu_flag_set() reads per-CPU data through %gs: SMP kernels only"
#endif
static __always_inline bool xp_cpu_flag_set(const unsigned int __percpu *p)
{
	asm goto("cmpl $0, %%gs:%0\n\t"
		 "jne %l[set]"
		 : : "m" (*(const unsigned int __force *)p) : "cc" : set);
	return false;
set:
	return true;
}

/*
 * Are any of @mask's bits set in this CPU's copy of @p? A test against
 * memory and the branch, as xp_cpu_flag_set().
 */
static __always_inline bool xp_cpu_bits_set(const unsigned int __percpu *p, unsigned int mask)
{
	asm goto("testl %1, %%gs:%0\n\t"
		 "jnz %l[set]"
		 : : "m" (*(const unsigned int __force *)p), "i" (mask) : "cc" : set);
	return false;
set:
	return true;
}

/*
 * Was the hit's context a task, not an interrupt? @pc: preempt_count() as
 * that context had it. Both paths decide from the count alone, not
 * in_task(): on PREEMPT_RT softirqs run in task context (at
 * local_bh_enable(), with the count per task, which in_task() reads there),
 * and a task that blocks inside that work, on a sleeping spinlock, switches
 * out as itself: the switch hooks must see it (a switch-out counted as
 * dropped is a thread that never left, for trace). Without PREEMPT_RT the
 * two tests are the same.
 */
static __always_inline bool xp_pc_in_task(unsigned long pc)
{
	return !(pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
}

/*
 * The same for the context running now, tested in the per-CPU count itself
 * (XP_PREEMPT_COUNT, compat.h): a test against memory and the branch where
 * preempt_count() and a test are a load, a test and the branch. On the jump
 * path that is an instruction a hit (docs/experiments.md, section 2).
 */
static __always_inline bool xp_in_task_now(void)
{
	return !xp_cpu_bits_set((const unsigned int __percpu *)&XP_PREEMPT_COUNT,
				NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET);
}

/*
 * Run @h's program @prog as bpf_prog_run() runs it, with what
 * bpf_trace_run3() does around a program on the tracepoint, without the
 * tracepoint's own dispatch: the program's per-CPU recursion guard, and its
 * run context (its attach cookie is the hook's). A kprobe program's context
 * is the registers, a raw tracepoint program's the tracepoint's arguments,
 * built on the stack only for it. With BPF statistics on
 * (kernel.bpf_stats_enabled), through bpf_prog_run() itself, out of line.
 *
 * What is kept across the program is what the jump path pays for in
 * callee-saved registers, each a push and a pop a hit (docs/experiments.md,
 * section 2): the run context it replaced and the guard's address, not the
 * program or current. current is read again from its per-CPU slot
 * (xp_set_run_ctx()). One call site serves both kinds of program.
 *
 * The guard (prog->active, as bpf_trace_run3()'s) is read, then set, then
 * cleared, not incremented and decremented: preemption is off on every path
 * here (asserted), so only what nests on this CPU can touch it between the
 * read and the write (an interrupt on the jump path, an NMI), and that puts
 * it back as it found it, as the tracepoint's own path does. A program
 * already running on this CPU (through a tracepoint, or a hook in code it
 * called) is not entered again: the run is counted in its recursion misses
 * (xp_prog_missed()), as the kernel counts a tracepoint's skipped run.
 *
 * RCU: preemption is off here (interrupts too on the trap path), which makes
 * this an RCU read-side critical section already (RCU flavours are one since
 * v4.20: a grace period waits for preemption-disabled code). rcu_read_lock()
 * would only tell lockdep, whose bpf_rcu_lock_held() checks in BPF helpers
 * do not count preemption; without lockdep those checks are constant true
 * and the pair would be two calls per hit for nothing. So it is taken where
 * lockdep looks (the debug kernel of make check-debug), nowhere else.
 */
static __always_inline void xp_run_prog(struct xp_hook *h, struct bpf_prog *prog,
					struct pt_regs *regs)
{
	u64 cookie = h->cookie;	/* read once, for the run context and args[1] */
	struct bpf_trace_run_ctx run_ctx = { .bpf_cookie = cookie };
	/* filled below for the one kind that reads it: not zeroed first (INIT_STACK_ALL_ZERO) */
	u64 args[XP_PROG_ARGS] __uninitialized;
	int __percpu *active = prog->active;
	struct bpf_run_ctx *old;
	const void *ctx = regs;

	lockdep_assert_preemption_disabled();
	if (unlikely(xp_cpu_flag_set((const unsigned int __percpu *)active))) {
		xp_prog_missed(prog);	/* the program's recursion_misses, as the kernel's */
		return;
	}
	__this_cpu_write(*active, 1);
	if (prog->type != BPF_PROG_TYPE_KPROBE) {
		args[0] = h->id;
		args[1] = cookie;
		args[2] = (unsigned long)regs;
		ctx = args;
	}
	old = xp_set_run_ctx(&run_ctx.run_ctx);
	if (IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC))
		rcu_read_lock();
	if (static_branch_unlikely(&bpf_stats_enabled_key))
		xp_prog_run_counted(prog, ctx);
	else
		bpf_dispatcher_nop_func(ctx, prog->insnsi, prog->bpf_func);
	if (IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC))
		rcu_read_unlock();
	xp_reset_run_ctx(old);
	__this_cpu_write(*active, 0);
}

/*
 * The tracepoint, then the program of @h, if it has one; or the module's own
 * handler. The out-of-line calls hand @regs back (xp_urec_switch(),
 * xp_hook_tp()), so that the jump path keeps no register for it; the
 * tracepoint goes first for the same reason: after the program only @h is
 * needed.
 */
static __always_inline void xp_hook_emit(struct xp_hook *h, struct pt_regs *regs, bool own_task)
{
	struct bpf_prog *prog;

	if (unlikely(h->special)) {	/* one test on the common path */
		if (h->urec_role)	/* before the program that accounts the switch */
			regs = xp_urec_switch(h, regs, own_task);
		if (h->internal) {
			h->internal(h, regs);
			return;
		}
	}
	if (trace_xprobes_hook_enabled())
		regs = xp_hook_tp(h, regs);
	prog = rcu_dereference_sched(h->prog);
	if (prog)
		xp_run_prog(h, prog, regs);
}

/*
 * Count a hit of @h and fire it (its program, the tracepoint): a hit when the context is a task
 * running on its own mm (@own_task: not an interrupt, not a lazy-TLB
 * borrower of the view's tables); anything else is dropped. Shared by the
 * trap and jump paths; preemption is off. Inlined into both: on the jump
 * path every call and return is a measurable part of a hit.
 */
static __always_inline void xp_hook_fire(struct xp_hook *h, struct pt_regs *regs, bool own_task)
{
	/*
	 * Read, then set: whatever nests between the two (an interrupt on the
	 * jump path, an NMI) has put the flag back as it found it by the time
	 * it returns.
	 */
	if (__this_cpu_read(xp_dispatching)) {
		this_cpu_inc(h->stats->nested);
		return;
	}
	__this_cpu_write(xp_dispatching, 1);
	if (own_task) {
		this_cpu_inc(h->stats->hits);
		xp_hook_emit(h, regs, true);
	} else {
		this_cpu_inc(h->stats->dropped);
		if (h->any_context)	/* e.g. a kernel thread scheduled in on our CR3 */
			xp_hook_emit(h, regs, false);
		else if (h->urec_role)	/* records still go: see urec.c */
			xp_urec_switch(h, regs, false);
	}
	__this_cpu_write(xp_dispatching, 0);
}

#endif /* _XPROBES_FIRE_H */
