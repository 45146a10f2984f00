// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel code that reads kernel text through the current CR3 and keeps what
 * it read. On a traced CR3 that is a view's copy, hook bytes included, so the
 * kernel could carry an int3 or a call of ours into the shared text, or into
 * code of its own that every process runs. Two such readers, both in kprobes:
 *
 * - The optimizer backs up the four bytes its jump will cover
 *   (arch_optimize_kprobes, arch/x86/kernel/kprobes/opt.c:485) and writes them
 *   back when the probe is unoptimized. It runs in a kworker, which borrows
 *   whatever mm the CPU ran last: often a traced process that keeps a CPU busy.
 *   Seen here: a call hook's first bytes written back into the shared text
 *   of __x64_sys_getppid, and every caller then called into the middle of
 *   some other function. The backup is taken right before the jump's tail is
 *   written; at that moment the shared text still holds the bytes it must
 *   hold, so when that write comes by (coherence.c calls xp_readers_poke())
 *   the backup is corrected from the shared text. The probe is found from its
 *   detour buffer, which loads the probe's address as its first argument.
 *
 * - Registration decodes the function up to the probed address and copies the
 *   probed instruction through the registering task's CR3 (can_probe,
 *   __copy_instruction). An int3 of ours makes it refuse; a call hook would
 *   misalign its decoding, or be copied into the probe's slot and run by
 *   every process. A task on a traced CR3 therefore cannot register kprobes
 *   that need their instruction copied: arch_prepare_kprobe(), which does the
 *   decoding and copying, returns -EBUSY to it (its entry is probed, and the
 *   probe returns at once, as BPF's override_return does), and
 *   register_kprobe() unwinds through its own error path. (Returning early
 *   from register_kprobe() itself is not safe: callers' error paths expect
 *   what it initialises first. Seen: trace_kprobe's list corrupted.)
 *
 * - A kprobe that would run into a live jump hook (jump.c: on or up to 4
 *   bytes before its covered instructions, or on a call hook's first
 *   byte) takes such jumps apart first (xp_jumps_yield()), twice:
 *   . when it is prepared (the probe on arch_prepare_kprobe() above, for
 *     every registration that is not one of our own questions), before it
 *     enters kprobes' table. From then on kprobes claims every int3 at its
 *     address before our handler sees it, and runs the probed instruction
 *     out of line, coming back behind it: a jump taken apart later, whose
 *     first instruction is the probed one and shorter than the jump, would
 *     send a task that hits its int3 meanwhile into the jump's old bytes
 *     (found on 6.1: selftest 34, a kprobe on a jump's push);
 *   . when it is armed (a probe on arch_arm_kprobe(), which every arming
 *     goes through before it writes the int3: an enable, a probe added to
 *     one already at the address, which skips arch_prepare_kprobe()). By
 *     then a kprobe on a jump's first byte is in the table; it cannot be
 *     one there: a jump never goes live where a kprobe is registered, and
 *     our own questions to kprobes (xp_kprobe_ask(), the only probes a
 *     later one could join without being prepared) are never asked where a
 *     hook is (xp_hook_answer()).
 *   kprobes registers and arms under kprobe_mutex and text_mutex, and the
 *   optimizer checks kprobes' table and arms our jumps under kprobe_mutex,
 *   so one of the two always sees the other. That needs IPIs,
 *   which an ftrace-based probe may send (preemption off, interrupts on);
 *   where a probe is not ftrace-based, no call or jump hook is made
 *   (xp_kprobes_guarded()). A disabled probe writes nothing: our own
 *   questions to kprobes (xp_kprobe_ask()) are never armed.
 *
 * Locking: the poke path runs under text_mutex, held by the patcher (and the
 * kprobes optimizer holds kprobe_mutex, so the backup cannot change under
 * us); the registration probe looks views up under RCU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <asm/text-patching.h>
#include <asm/tlbflush.h>
#include "xprobes.h"

atomic64_t xp_backups_fixed;		/* optimizer backups corrected */
atomic64_t xp_kprobes_refused;		/* registrations refused on a traced CR3 */

static bool reg_probe_on;

#ifdef CONFIG_OPTPROBES
/* optprobe_template_val - optprobe_template_entry, 0 if unknown */
static long tmpl_move_idx;

/* The detour at @detour loads its probe's address: "movabs $op, %rdi". */
static struct optimized_kprobe *detour_owner(unsigned long detour)
{
	u8 insn[10];
	unsigned long op;

	if (!tmpl_move_idx ||
	    copy_from_kernel_nofault(insn, (void *)(detour + tmpl_move_idx), sizeof(insn)) ||
	    insn[0] != 0x48 || insn[1] != 0xbf)
		return NULL;
	memcpy(&op, insn + 2, sizeof(op));
	return (struct optimized_kprobe *)op;
}
NOKPROBE_SYMBOL(detour_owner);

/*
 * Called from the __text_poke probe, before the write of @len bytes of @src
 * at @addr. Is it the tail of an optimized kprobe's jump (its int3 is in
 * place, the jump goes out of core text)? Then its backup must equal the
 * shared text it is about to cover.
 */
void xp_readers_poke(unsigned long addr, const u8 *src, size_t len)
{
	unsigned long site = addr - INT3_INSN_SIZE, detour;
	struct optimized_kprobe *op;
	u8 backup[DISP32_SIZE], now[DISP32_SIZE];
	void *kp_addr, *insn;
	s32 rel;

	/* Module text too: a view may hold a copy of a module's page. */
	if (len != DISP32_SIZE ||
	    (!xp_is_core_text(site, JMP32_INSN_SIZE) && !xp_is_module_text(site, JMP32_INSN_SIZE)) ||
	    *(u8 *)xp_text(site) != INT3_INSN_OPCODE)
		return;
	memcpy(&rel, src, sizeof(rel));
	detour = site + JMP32_INSN_SIZE + (long)rel;
	if (xp_is_core_text(detour, 1))
		return;
	op = detour_owner(detour);
	if (!op ||
	    copy_from_kernel_nofault(&kp_addr, &op->kp.addr, sizeof(kp_addr)) ||
	    copy_from_kernel_nofault(&insn, &op->optinsn.insn, sizeof(insn)) ||
	    kp_addr != (void *)site || insn != (void *)detour ||
	    copy_from_kernel_nofault(backup, op->optinsn.copied_insn, sizeof(backup)))
		return;
	xp_text_read(now, addr, sizeof(now));	/* may cross into a module's next page */
	if (!memcmp(backup, now, sizeof(backup)))
		return;
	/* Read through a view: put the kernel's own bytes in the backup. */
	memcpy(op->optinsn.copied_insn, now, sizeof(backup));
	atomic64_inc(&xp_backups_fixed);
}
NOKPROBE_SYMBOL(xp_readers_poke);

static void find_template(void)
{
	unsigned long entry = xp_sym_lookup("optprobe_template_entry", NULL);
	unsigned long val = xp_sym_lookup("optprobe_template_val", NULL);

	if (entry && val > entry)
		tmpl_move_idx = val - entry;
	else
		pr_warn("cannot find kprobes' detour template: optimized kprobes near hooks are not checked\n");
}
#else
void xp_readers_poke(unsigned long addr, const u8 *src, size_t len)
{
}

static void find_template(void)
{
}
#endif

static struct kprobe reg_kp;

static int on_prepare_kprobe(struct kprobe *p, struct pt_regs *regs)
{
	bool traced;

	rcu_read_lock();
	traced = xp_view_of_pgd(__va(read_cr3_pa()));
	rcu_read_unlock();
	if (!traced) {
		struct kprobe *kp = (struct kprobe *)regs->di;

		/* text_mutex held, @kp not in kprobes' table yet (see above) */
		if (kp->pre_handler != xp_kprobe_question && xp_kprobes_guarded() &&
		    (reg_kp.flags & KPROBE_FLAG_FTRACE))
			xp_jumps_yield((unsigned long)kp->addr);
		return 0;
	}
	atomic64_inc(&xp_kprobes_refused);
	return xp_probe_return(regs, (unsigned long)-EBUSY);
}
NOKPROBE_SYMBOL(on_prepare_kprobe);

static struct kprobe reg_kp = {
	.symbol_name = "arch_prepare_kprobe",
	.pre_handler = on_prepare_kprobe,
};

/* arch_arm_kprobe(p): text_mutex held, the int3 not written yet. */
static int on_arm_kprobe(struct kprobe *p, struct pt_regs *regs)
{
	xp_jumps_yield((unsigned long)((struct kprobe *)regs->di)->addr);
	return 0;
}
NOKPROBE_SYMBOL(on_arm_kprobe);

static bool arm_probe_on;
static struct kprobe arm_kp = {
	.symbol_name = "arch_arm_kprobe",
	.pre_handler = on_arm_kprobe,
};

/* Returns why views cannot be used here, or NULL. */
const char *xp_readers_init(void)
{
	int err;

	find_template();
	err = register_kprobe(&reg_kp);
	if (err) {
		pr_err("cannot probe arch_prepare_kprobe (%d): views disabled\n", err);
		return "cannot guard kprobes registration from traced processes";
	}
	reg_probe_on = true;
	err = register_kprobe(&arm_kp);
	if (err)
		pr_warn("cannot probe arch_arm_kprobe (%d): every hook stays an int3\n", err);
	arm_probe_on = !err;
	if (!xp_kprobes_guarded())
		pr_notice("the arch_arm_kprobe probe is not ftrace-based: every hook stays an int3\n");
	return NULL;
}

/* Can a kprobe's arming take jump hooks apart first (xp_jumps_yield())? */
bool xp_kprobes_guarded(void)
{
	return arm_probe_on && (arm_kp.flags & KPROBE_FLAG_FTRACE);
}

void xp_readers_exit(void)
{
	if (arm_probe_on)
		unregister_kprobe(&arm_kp);
	if (reg_probe_on)
		unregister_kprobe(&reg_kp);
}
