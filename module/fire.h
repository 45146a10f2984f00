/* SPDX-License-Identifier: GPL-2.0 */
/* Firing a hit, shared by the trap (dispatch.c) and jump (jump.c) paths. */
#ifndef _XPROBES_FIRE_H
#define _XPROBES_FIRE_H

#include <linux/filter.h>
#include <linux/percpu.h>
#include "xprobes.h"
#include "trace.h"

/*
 * Hooks this CPU is dispatching right now. The tracepoint runs kernel code
 * (the BPF run path, helpers, whatever a program calls); a hook on any of it
 * hits again inside the dispatch of the first. That nested hit is counted
 * and its instruction runs, but it fires nothing: no recursion, whatever is
 * hooked. Both paths run with interrupts off, so only an NMI or a trap can
 * nest, and the count is back to its value when they return.
 */
DECLARE_PER_CPU(unsigned int, xp_dispatching);

/*
 * Run the BPF program attached to @h directly (prog.c): what bpf_trace_run3()
 * does around a program on the tracepoint, without the tracepoint's own
 * dispatch. The program's per-CPU recursion guard and run context (its
 * attach cookie is the hook's) as there; RCU read side as there, although
 * preemption is already off, so that lockdep sees what BPF helpers check.
 */
static __always_inline void xp_run_prog(struct xp_hook *h, struct bpf_prog *prog,
					struct pt_regs *regs)
{
	struct bpf_trace_run_ctx run_ctx = { .bpf_cookie = h->cookie };
	u64 args[3] = { h->id, h->cookie, (unsigned long)regs };
	struct bpf_run_ctx *old;

	if (likely(this_cpu_inc_return(*prog->active) == 1)) {
		old = bpf_set_run_ctx(&run_ctx.run_ctx);
		rcu_read_lock();
		bpf_prog_run(prog, args);
		rcu_read_unlock();
		bpf_reset_run_ctx(old);
	}
	this_cpu_dec(*prog->active);
}

/* The program of @h, if it has one, then the tracepoint. */
static __always_inline void xp_hook_emit(struct xp_hook *h, struct pt_regs *regs)
{
	struct bpf_prog *prog = rcu_dereference_sched(h->prog);

	if (prog)
		xp_run_prog(h, prog, regs);
	trace_xprobes_hook(h->id, h->cookie, regs);
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
	if (__this_cpu_inc_return(xp_dispatching) > 1) {
		this_cpu_inc(h->stats->nested);
	} else if (own_task) {
		this_cpu_inc(h->stats->hits);
		xp_hook_emit(h, regs);
	} else {
		this_cpu_inc(h->stats->dropped);
		if (h->any_context)	/* e.g. a kernel thread scheduled in on our CR3 */
			xp_hook_emit(h, regs);
	}
	__this_cpu_dec(xp_dispatching);
}

#endif /* _XPROBES_FIRE_H */
