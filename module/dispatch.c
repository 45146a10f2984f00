// SPDX-License-Identifier: GPL-2.0
/*
 * The trap handler: every int3 a view's copy executes lands here.
 *
 * kprobes looks first (do_int3) and finds no probe at these addresses, so the
 * trap reaches the die notifier chain. The CPU's loaded CR3 says which view's
 * copy it was executing (the view whose chain its pgd carries); only that
 * view's hooks are considered. The handler counts the hit when the trapping
 * context is a task running on its own mm (lazy-TLB kernel threads,
 * interrupts and idle running on a traced CR3 are counted as dropped), fires
 * the xprobes_hook tracepoint, then runs the displaced instruction: emulated
 * for branches, otherwise out of line in a slot that jumps back by itself.
 *
 * It runs in NMI-like context (irqentry_nmi_enter), under RCU only, and must
 * not be probed itself. Every int3 it cannot account for is left to the
 * kernel, except one a concurrent removal just took out of a copy, which is
 * retried.
 */
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <asm/text-patching.h>
#include <asm/sync_core.h>
#include <asm/tlbflush.h>
#include "xprobes.h"
#include "trace.h"

/* Was the trapped context a task (not irq, softirq, NMI)? int3 added one NMI level. */
static bool trapped_in_task(void)
{
	unsigned long pc = preempt_count() - (NMI_OFFSET + HARDIRQ_OFFSET);

	return !(pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
}
NOKPROBE_SYMBOL(trapped_in_task);

static void run_displaced(struct xp_hook *h, struct pt_regs *regs)
{
	unsigned long next = h->addr + h->insn.len;

	switch (h->insn.kind) {
	case XP_INSN_CALL:
		int3_emulate_push(regs, next);
		int3_emulate_jmp(regs, next + h->insn.rel);
		break;
	case XP_INSN_JMP:
		int3_emulate_jmp(regs, next + h->insn.rel);
		break;
	case XP_INSN_JCC:
		int3_emulate_jcc(regs, h->insn.cc, next, h->insn.rel);
		break;
	case XP_INSN_RET:
		int3_emulate_ret(regs);
		break;
	default:
		/* Out of line, interrupts off until the slot jumps back (xol.c). */
		regs->ip = h->slot_va + ((regs->flags & X86_EFLAGS_IF) ? XP_SLOT_SIZE : 0);
		regs->flags &= ~X86_EFLAGS_IF;
		break;
	}
}
NOKPROBE_SYMBOL(run_displaced);

/*
 * Count a hit of @h and fire the tracepoint: a hit when the context is a task
 * (@in_task) running on its own mm, whose tables are @pgd (not a lazy-TLB
 * borrower); anything else is dropped. Shared by the trap and call paths.
 */
void xp_hook_fire(struct xp_hook *h, struct pt_regs *regs, pgd_t *pgd, bool in_task)
{
	if (current->mm && current->mm->pgd == pgd && in_task) {
		this_cpu_inc(h->stats->hits);
		trace_xprobes_hook(h->id, h->cookie, regs);
	} else {
		this_cpu_inc(h->stats->dropped);
		if (h->any_context)	/* e.g. a kernel thread scheduled in on our CR3 */
			trace_xprobes_hook(h->id, h->cookie, regs);
	}
}
NOKPROBE_SYMBOL(xp_hook_fire);

/* No hook at @addr: was it one that is being removed right now? */
static bool removed_under_us(struct xp_view *v, unsigned long addr)
{
	struct xp_tpage *t;

	list_for_each_entry_rcu(t, &v->tpages, node) {
		if (t->va == (addr & PAGE_MASK))
			return ((u8 *)page_address(t->copy))[offset_in_page(addr)] !=
			       INT3_INSN_OPCODE;
	}
	return false;
}
NOKPROBE_SYMBOL(removed_under_us);

static int xp_int3(struct pt_regs *regs)
{
	unsigned long addr = regs->ip - INT3_INSN_SIZE;
	pgd_t *pgd = __va(read_cr3_pa());
	struct xp_view *v = xp_view_of_pgd(pgd);
	struct xp_hook *h;

	if (!v)
		return NOTIFY_DONE;

	hash_for_each_possible_rcu(v->hooks, h, hnode, addr)
		if (h->addr == addr)
			goto found;
	if (removed_under_us(v, addr)) {
		regs->ip = addr;	/* execute the restored instruction */
		return NOTIFY_STOP;
	}
	return NOTIFY_DONE;

found:
	xp_hook_fire(h, regs, pgd, trapped_in_task());
	run_displaced(h, regs);
	return NOTIFY_STOP;
}
NOKPROBE_SYMBOL(xp_int3);

static int xp_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	int ret;

	if (val != DIE_INT3 || user_mode(args->regs))
		return NOTIFY_DONE;
	rcu_read_lock();
	ret = xp_int3(args->regs);
	rcu_read_unlock();
	return ret;
}
NOKPROBE_SYMBOL(xp_die_notify);

static struct notifier_block xp_die_nb = {
	.notifier_call = xp_die_notify,
	/* Ahead of debuggers that would treat a kernel int3 as theirs. */
	.priority = INT_MAX,
};

static void sync_local(void *unused)
{
	sync_core();
}

/* Make every CPU serialise, so none runs instructions fetched before now. */
void xp_sync_cores(void)
{
	on_each_cpu(sync_local, NULL, 1);
}

int xp_dispatch_init(void)
{
	return register_die_notifier(&xp_die_nb);
}

void xp_dispatch_exit(void)
{
	unregister_die_notifier(&xp_die_nb);
	/* Let BPF programs and tracepoint probes that we fired drain. */
	tracepoint_synchronize_unregister();
}
