// SPDX-License-Identifier: GPL-2.0
/*
 * Call hooks: a hook whose copy carries "call xp_call_entry" instead of an
 * int3, so a hit costs a call and a jump instead of an exception.
 *
 * Only an instruction of 5 bytes or more is replaced, and only by the call's
 * own 5 bytes: no instruction boundary lies inside them, so no branch can
 * land inside them, and the kernel itself never writes inside them without
 * first writing an int3 on their first byte and serialising every CPU (every
 * runtime patcher follows that protocol at instruction starts, and kprobes
 * refuses non-boundaries). That is what lets a call hook be placed and taken
 * away with the int3 protocol alone, with no wait for preempted tasks: a task
 * can stop at the hook's address or after its instruction, never inside it.
 *
 * A hook always starts as a trap (hook.c); the call replaces it like
 * text_poke_bp() replaces an instruction: with the int3 in place, the call's
 * displacement goes in, every CPU serialises, then its opcode replaces the
 * int3. Going back is the reverse. In the copy, the displaced instruction
 * runs in the hook's out-of-line slot (xol.c), entered with interrupts off.
 *
 * xp_call_entry (callhook_entry.S) may be entered on tables that no longer
 * carry the hook: a kernel thread preempted before its cli may resume on
 * another mm, or the hook may have been taken away meanwhile. Nothing of the
 * hooked instruction has run yet, so the handler then sends it back to the
 * hook's address, to run whatever those tables have there. It never does that
 * while the hook is a live call on this CPU's tables (that would loop, maybe
 * with interrupts off): ->mode turns XP_HOOK_CALL before the opcode is
 * written, and back only after the int3 is in and every CPU has serialised.
 *
 * Locking: placing and removing run under xp_views_lock, every write to a copy
 * under text_mutex (coherence.c applies kernel writes under it too); the
 * handler reads ->mode and the view's hooks with interrupts off (RCU).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/irqflags.h>
#include <asm/text-patching.h>
#include <asm/tlbflush.h>
#include "xprobes.h"

void xp_call_entry(void);

/* rel32 of a call at @addr to xp_call_entry (kept opaque: objtool wants the
 * reference to point at the ENDBR, not at a folded entry - 5). */
static s64 entry_rel(unsigned long addr)
{
	unsigned long entry = (unsigned long)xp_call_entry;

	OPTIMIZER_HIDE_VAR(entry);
	return (s64)entry - (s64)(addr + CALL_INSN_SIZE);
}

static u8 *copy_at(struct xp_hook *h)
{
	return (u8 *)page_address(h->tpage->copy) + offset_in_page(h->addr);
}

/* Can @h become a call hook? Decided once, when it is added. */
bool xp_call_possible(struct xp_hook *h, u32 flags)
{
	s64 rel = entry_rel(h->addr);

	if (flags & XPROBES_F_TRAP)
		return false;
	if (h->insn.len < CALL_INSN_SIZE || h->insn.kind == XP_INSN_RET ||
	    h->insn.kind == XP_INSN_REFUSE)
		return false;
	/* The call's bytes must lie in the one private page. */
	if (offset_in_page(h->addr) + CALL_INSN_SIZE > PAGE_SIZE)
		return false;
	return rel == (s32)rel;
}

/*
 * The hook is armed as a trap and has its slot: make it a call. Under
 * xp_views_lock. If kernel patching displaces the instruction meanwhile, it
 * stays what the kernel made of it (coherence.c).
 */
void xp_call_arm(struct xp_hook *h)
{
	s32 rel = (s32)entry_rel(h->addr);
	u8 *c = copy_at(h);

	lockdep_assert_held(&xp_views_lock);
	mutex_lock(xp_k.text_mutex);
	if (READ_ONCE(h->broken)) {
		mutex_unlock(xp_k.text_mutex);
		return;
	}
	/* Behind the int3: nothing executes these bytes. */
	memcpy(c + 1, &rel, sizeof(rel));
	h->tail_ours = true;
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();

	mutex_lock(xp_k.text_mutex);
	if (!READ_ONCE(h->broken) && c[0] == INT3_INSN_OPCODE) {
		WRITE_ONCE(h->mode, XP_HOOK_CALL);	/* before any CPU can take the call */
		smp_wmb();
		WRITE_ONCE(c[0], CALL_INSN_OPCODE);
	}
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();
}

/* Put the kernel's bytes back behind the hook's first byte. Under text_mutex. */
void xp_call_restore_tail(struct xp_hook *h)
{
	if (!h->tail_ours)
		return;
	memcpy(copy_at(h) + 1, xp_text(h->addr + 1), CALL_INSN_SIZE - 1);
	h->tail_ours = false;
}

/* First half of making calls traps again: int3 over every live call of @v. */
static bool calls_to_int3(struct xp_view *v, struct xp_hook *only)
{
	struct xp_hook *h;
	bool any = false;

	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(h, &v->hook_list, vnode) {
		u8 *c;

		if (only && h != only)
			continue;
		c = copy_at(h);
		if (READ_ONCE(h->mode) == XP_HOOK_CALL && c[0] == CALL_INSN_OPCODE) {
			WRITE_ONCE(c[0], INT3_INSN_OPCODE);
			any = true;
		}
	}
	mutex_unlock(xp_k.text_mutex);
	return any;
}

/*
 * Turn the call hooks of @v (or only @only) back into armed traps. Under
 * xp_views_lock. When it returns, no CPU executes or enters their calls;
 * a task preempted inside xp_call_entry will find them gone and retry.
 */
void xp_calls_disarm(struct xp_view *v, struct xp_hook *only)
{
	struct xp_hook *h;

	lockdep_assert_held(&xp_views_lock);
	if (calls_to_int3(v, only))
		xp_sync_cores();
	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(h, &v->hook_list, vnode) {
		if (only && h != only)
			continue;
		WRITE_ONCE(h->mode, XP_HOOK_TRAP);
		xp_call_restore_tail(h);
	}
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();
}

/*
 * Called from xp_call_entry with interrupts off; @regs as an int3 at the hook
 * would have left them. Returns where to go on (see the top of the file).
 *
 * No rcu_read_lock(): with interrupts off this is a read-side critical
 * section already, and __rcu_read_lock() is a function a hook may be on
 * (dispatch.c). Lockdep is told about the cli, and about interrupts coming
 * back on (at the slot's sti, or popfq), as the kernel's entry code does.
 */
unsigned long xp_call_handler(struct pt_regs *regs)
{
	unsigned long addr = regs->ip - INT3_INSN_SIZE, to = addr;
	bool irq_on = regs->flags & X86_EFLAGS_IF;
	pgd_t *pgd = __va(read_cr3_pa());
	struct xp_view *v;
	struct xp_hook *h;

	if (irq_on)
		trace_hardirqs_off();
	v = xp_view_of_pgd(pgd);
	h = v ? xp_hook_at(v, addr) : NULL;
	if (h && READ_ONCE(h->mode) == XP_HOOK_CALL) {
		xp_hook_fire(h, regs, pgd, in_task());
		to = h->slot_va + (irq_on ? XP_SLOT_SIZE : 0);
		regs->flags &= ~X86_EFLAGS_IF;
	}
	if (irq_on)
		trace_hardirqs_on();
	return to;
}
NOKPROBE_SYMBOL(xp_call_handler);

/*
 * Module exit, after every view is gone: a task may still be preempted in
 * module text it was sent to, in xp_call_entry before its cli or at
 * xp_just_return (readers.c), whatever this load did. Wait for every task to
 * pass a voluntary context switch, out of both.
 */
void xp_calls_exit(void)
{
	synchronize_rcu_tasks();
}
