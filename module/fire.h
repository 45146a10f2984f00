/* SPDX-License-Identifier: GPL-2.0 */
/* Firing a hit, shared by the trap (dispatch.c) and jump (jump.c) paths. */
#ifndef _XPROBES_FIRE_H
#define _XPROBES_FIRE_H

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
 * Count a hit of @h and fire the tracepoint: a hit when the context is a task
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
		trace_xprobes_hook(h->id, h->cookie, regs);
	} else {
		this_cpu_inc(h->stats->dropped);
		if (h->any_context)	/* e.g. a kernel thread scheduled in on our CR3 */
			trace_xprobes_hook(h->id, h->cookie, regs);
	}
	__this_cpu_dec(xp_dispatching);
}

#endif /* _XPROBES_FIRE_H */
