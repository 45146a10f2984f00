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
 * Run @prog on @ctx as bpf_prog_run() runs it, with what bpf_trace_run3()
 * does around a program on the tracepoint, without the tracepoint's own
 * dispatch: the program's per-CPU recursion guard, and its run context
 * (@cookie: its attach cookie is the hook's). With BPF statistics on
 * (kernel.bpf_stats_enabled), through bpf_prog_run() itself, out of line,
 * so that the common path keeps no registers for it.
 *
 * RCU: preemption is off here (interrupts too on the trap path), which makes
 * this an RCU read-side critical section already (RCU flavours are one since
 * v4.20: a grace period waits for preemption-disabled code). rcu_read_lock()
 * would only tell lockdep, whose bpf_rcu_lock_held() checks in BPF helpers
 * do not count preemption; without lockdep those checks are constant true
 * and the pair would be two calls per hit for nothing. So it is taken where
 * lockdep looks (the debug kernel of make check-debug), nowhere else.
 */
static __always_inline void xp_run_prog_ctx(struct bpf_prog *prog, u64 cookie,
					    const void *ctx)
{
	struct bpf_trace_run_ctx run_ctx = { .bpf_cookie = cookie };
	struct bpf_run_ctx *old;

	if (likely(this_cpu_inc_return(*prog->active) == 1)) {
		old = bpf_set_run_ctx(&run_ctx.run_ctx);
		if (IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC))
			rcu_read_lock();
		if (static_branch_unlikely(&bpf_stats_enabled_key))
			xp_prog_run_counted(prog, ctx);
		else
			bpf_dispatcher_nop_func(ctx, prog->insnsi, prog->bpf_func);
		if (IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC))
			rcu_read_unlock();
		bpf_reset_run_ctx(old);
	}
	this_cpu_dec(*prog->active);
}

/*
 * The program attached to @h (prog.c): a kprobe program's context is the
 * registers, a raw tracepoint program's the tracepoint's arguments, built
 * on the stack only for it.
 */
static __always_inline void xp_run_prog(struct xp_hook *h, struct bpf_prog *prog,
					struct pt_regs *regs)
{
	if (prog->type == BPF_PROG_TYPE_KPROBE) {
		xp_run_prog_ctx(prog, h->cookie, regs);
	} else {
		/* initialised here: an array declared bare is zeroed first (INIT_STACK_ALL_ZERO) */
		u64 args[3] = { h->id, h->cookie, (unsigned long)regs };

		xp_run_prog_ctx(prog, h->cookie, args);
	}
}

/* The program of @h, if it has one, then the tracepoint; or the module's own handler. */
static __always_inline void xp_hook_emit(struct xp_hook *h, struct pt_regs *regs, bool own_task)
{
	struct bpf_prog *prog;

	if (unlikely(h->special)) {	/* one test on the common path */
		if (h->urec_role)	/* before the program that accounts the switch */
			xp_urec_switch(h, regs, own_task);
		if (h->internal) {
			h->internal(h, regs);
			return;
		}
	}
	prog = rcu_dereference_sched(h->prog);
	if (prog)
		xp_run_prog(h, prog, regs);
	if (trace_xprobes_hook_enabled())
		xp_hook_tp(h, regs);
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
