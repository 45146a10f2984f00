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
 * It runs in NMI-like context (irqentry_nmi_enter), with interrupts off, and
 * must not be probed itself; nor may anything it calls before its re-entry
 * guard (xp_on_dispatch_path()). Every int3 it cannot account for is left to the
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
#include "fire.h"
#include "uhooks/uhook.h"

/* Was the trapped context a task (not irq, softirq, NMI)? int3 added one NMI level. */
static bool trapped_in_task(void)
{
	return xp_pc_in_task(preempt_count() - (NMI_OFFSET + HARDIRQ_OFFSET));
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
		/*
		 * Out of line (every instruction a jump hook covers), interrupts
		 * off until the slot jumps back (xol.c).
		 */
		regs->ip = h->slot_va + ((regs->flags & X86_EFLAGS_IF) ? XP_SLOT_SIZE : 0);
		regs->flags &= ~X86_EFLAGS_IF;
		break;
	}
}
NOKPROBE_SYMBOL(run_displaced);

DEFINE_PER_CPU(unsigned int, xp_dispatching);	/* fire.h */

/*
 * Kernel functions that run on the way to xp_hook_fire()'s guard, or only
 * inside it: a hook there would trap again before any of our code can tell
 * (the int3 path runs exc_int3 -> do_int3 -> notify_die ->
 * atomic_notifier_call_chain -> rcu_read_lock() before our notifier), or
 * could only ever be a nested hit. Refused at HOOK_ADD, with what kprobes
 * refuses. Those missing from a kernel (no PREEMPT_RCU, no lockdep) are
 * skipped.
 */
static const char *const dispatch_path[] = {
	/* RCU read side (PREEMPT_RCU): notify_die's rcu_read_lock() */
	"__rcu_read_lock", "__rcu_read_unlock", "rcu_read_unlock_special",
	/* the die notifier chain */
	"notify_die", "atomic_notifier_call_chain", "notifier_call_chain",
	/* lockdep and RCU debugging (debug kernels), in rcu_read_lock() and RCU lists */
	"lock_acquire", "lock_release", "lock_is_held_type", "rcu_read_lock_held",
	"rcu_read_lock_any_held", "rcu_read_lock_sched_held", "rcu_read_lock_bh_held",
	"debug_lockdep_rcu_enabled", "rcu_is_watching", "rcu_lockdep_current_cpu_online",
	"lockdep_rcu_suspicious",
	/* irq-state tracing, around the call path's cli */
	"trace_hardirqs_on", "trace_hardirqs_off", "trace_hardirqs_on_prepare",
	"trace_hardirqs_off_finish", "lockdep_hardirqs_on", "lockdep_hardirqs_on_prepare",
	"lockdep_hardirqs_off", "preempt_count_add", "preempt_count_sub",
	"__this_cpu_preempt_check", "check_preemption_disabled",
	/* the tracepoint's BPF run path */
	"bpf_trace_run1", "bpf_trace_run2", "bpf_trace_run3", "bpf_trace_run4",
	"bpf_trace_run5", "bpf_trace_run6", "bpf_trace_run7", "bpf_trace_run8",
	"bpf_trace_run9", "bpf_trace_run10", "bpf_trace_run11", "bpf_trace_run12",
	"bpf_prog_inc_misses_counter",
	/*
	 * The return thunks: where the CPU needs them (retbleed, SRSO, ITS,
	 * call depth tracking), every ret of the kernel and of this module is a
	 * jump to one, the dispatch path's own first of all, which would hit
	 * the hook again before the guard in xp_hook_fire() (the retpoline
	 * thunks, for its indirect calls, are xp_k.thunks).
	 */
	"__x86_return_thunk", "__x86_return_skl", "call_depth_return_thunk",
	"retbleed_return_thunk", "retbleed_untrain_ret", "entry_untrain_ret",
	"srso_return_thunk", "srso_untrain_ret", "srso_safe_ret",
	"srso_alias_untrain_ret", "its_return_thunk",	/* srso_alias_*: dispatch_derived[] */
};

/*
 * Those found from another of the list, not by asking kprobes: a probe
 * registered there (even a disabled one) has kprobes decode everything up
 * to the next symbol to see whether it could optimize it, and these lie in
 * sections of their own, far from the next one: 3.7 s for
 * srso_alias_safe_ret on 6.1 in the VM, 1.5 s for srso_alias_return_thunk
 * on 6.12, most of the module's load time. On both,
 * srso_alias_untrain_ret is "nop2; lfence; jmp srso_alias_return_thunk",
 * which is "call srso_alias_safe_ret; ud2". Each is confirmed by name;
 * failing that, kprobes is asked after all.
 */
static const struct {
	const char *from, *name;
	enum xp_insn_kind kind;		/* of the branch in @from that names it */
} dispatch_derived[] = {
	{ "srso_alias_untrain_ret", "srso_alias_return_thunk", XP_INSN_JMP },
	{ "srso_alias_return_thunk", "srso_alias_safe_ret", XP_INSN_CALL },
};

/* Where each of dispatch_path[], then of dispatch_derived[], was found. */
static struct { const char *name; unsigned long start, end; }
	dispatch_ranges[ARRAY_SIZE(dispatch_path) + ARRAY_SIZE(dispatch_derived)];

/* Does @addr lie in a function the dispatch path runs? */
bool xp_on_dispatch_path(unsigned long addr)
{
	int i;

	if (xp_in_ranges(&xp_k.thunks, addr))
		return true;
	for (i = 0; i < ARRAY_SIZE(dispatch_ranges); i++)
		if (addr >= dispatch_ranges[i].start && addr < dispatch_ranges[i].end)
			return true;
	return false;
}

/*
 * Is @addr the start of a return thunk, which a function's ret becomes
 * where the CPU needs one (a jump there returns)?
 */
bool xp_is_return_thunk(unsigned long addr)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(dispatch_ranges); i++)
		if (dispatch_ranges[i].end && addr == dispatch_ranges[i].start &&
		    strstr(dispatch_ranges[i].name, "return"))
			return true;
	return false;
}

/* The range of @name, found already, or 0. */
static unsigned long found_start(const char *name, unsigned long *end)
{
	int j;

	for (j = 0; j < ARRAY_SIZE(dispatch_ranges); j++)
		if (dispatch_ranges[j].end && !strcmp(dispatch_ranges[j].name, name)) {
			*end = dispatch_ranges[j].end;
			return dispatch_ranges[j].start;
		}
	return 0;
}

/*
 * The target of the first branch in the function [@start, @end) if it is
 * of @kind and the instructions before it are only nops and fences
 * (srso_alias_untrain_ret: nop2; lfence; jmp), or 0.
 */
static unsigned long branch_target(unsigned long start, unsigned long end,
				   enum xp_insn_kind kind)
{
	unsigned long pos = start;
	struct xp_insn insn;

	while (pos < end) {
		const u8 *p = (const u8 *)pos;

		if (xp_insn_decode(&insn, p, min_t(unsigned long, end - pos, XP_INSN_MAX)))
			return 0;
		if (insn.kind == kind)
			return pos + insn.len + insn.rel;
		if (!(insn.map == 0 && insn.opcode == 0x90) &&			/* nop, 66 nop */
		    !(insn.map == 1 && insn.opcode == 0x1f) &&			/* nopl */
		    !(insn.map == 1 && insn.opcode == 0xae && insn.modrm == 0xe8))	/* lfence */
			return 0;
		pos += insn.len;
	}
	return 0;
}

/* dispatch_derived[@i] into dispatch_ranges[@k]: from its branch, else from kprobes. */
static void find_derived(int i, int k)
{
	const char *name = dispatch_derived[i].name;
	unsigned long start, end, at = 0, off, size;

	start = found_start(dispatch_derived[i].from, &end);
	if (start)
		at = branch_target(start, end, dispatch_derived[i].kind);
	if (at && !(xp_sym_at(at, name, &off, &size) && !off && size))
		at = 0;
	if (!at) {
		at = xp_sym_lookup(name, &size);
		if (!at || !size)
			return;
	}
	dispatch_ranges[k].name = name;
	dispatch_ranges[k].start = at;
	dispatch_ranges[k].end = at + size;
}

static void find_dispatch_path(void)
{
	unsigned long starts[ARRAY_SIZE(dispatch_path)], sizes[ARRAY_SIZE(dispatch_path)];
	unsigned long off, pfx_size;
	char pfx[64];
	int i;

	xp_sym_lookup_many(dispatch_path, ARRAY_SIZE(dispatch_path), starts, sizes);
	for (i = 0; i < ARRAY_SIZE(dispatch_path); i++) {
		unsigned long start = starts[i], size = sizes[i];

		if (!start || !size)
			continue;
		dispatch_ranges[i].name = dispatch_path[i];
		dispatch_ranges[i].start = start;
		dispatch_ranges[i].end = start + size;
		/*
		 * And its padding right before it (__pfx_NAME), which call
		 * depth tracking (retbleed=stuff) runs on every direct call.
		 */
		snprintf(pfx, sizeof(pfx), "__pfx_%s", dispatch_path[i]);
		if (xp_sym_at(start - 1, pfx, &off, &pfx_size))
			dispatch_ranges[i].start = start - 1 - off;
	}
	for (i = 0; i < ARRAY_SIZE(dispatch_derived); i++)
		find_derived(i, ARRAY_SIZE(dispatch_path) + i);
}

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
	/* A tracepoint hook's site being written (hooks/tracepoint.c) */
	if (xp_tp_int3(v, regs, addr))
		return NOTIFY_STOP;
	if (removed_under_us(v, addr)) {
		regs->ip = addr;	/* execute the restored instruction */
		return NOTIFY_STOP;
	}
	return NOTIFY_DONE;

found:
	xp_hook_fire(h, regs, current->mm && current->mm->pgd == pgd && trapped_in_task());
	/* The user-hook events' handler runs as the syscall itself (uevent.c) */
	if (unlikely(regs->ip == (unsigned long)xp_uevent_trapped))
		return NOTIFY_STOP;
	run_displaced(h, regs);
	return NOTIFY_STOP;
}
NOKPROBE_SYMBOL(xp_int3);

/*
 * No rcu_read_lock() here or in the call path: it is a function a hook could
 * be on (PREEMPT_RCU). Interrupts are off in both, and synchronize_rcu()
 * waits for such regions as for read-side critical sections.
 */
static int xp_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;

	if (val != DIE_INT3 || user_mode(args->regs))
		return NOTIFY_DONE;
	return xp_int3(args->regs);
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
	find_dispatch_path();
	return register_die_notifier(&xp_die_nb);
}

void xp_dispatch_exit(void)
{
	unregister_die_notifier(&xp_die_nb);
	/* Let BPF programs and tracepoint probes that we fired drain. */
	tracepoint_synchronize_unregister();
}
