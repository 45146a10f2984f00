// SPDX-License-Identifier: GPL-2.0
/*
 * xp_stall: holds one task inside vfree() between vmalloc's unmap and its
 * TLB flush, as a preempted task or a vCPU its host has descheduled is held
 * there: selftest 55-view-module (g). vfree() of module-space memory (every
 * area is VM_FLUSH_RESET_PERMS) clears the area's entries and puts the
 * area on the lazy-purge list (remove_vm_area()), then makes the pages'
 * direct map invalid, one page at a time (vm_reset_perms() on 6.12,
 * vm_remove_mappings() on 6.1, through set_direct_map_invalid_noflush()),
 * and only then purges and flushes (_vm_unmap_aliases()).
 *
 * The task whose tgid is written to pid= is held at its first call of
 * set_direct_map_invalid_noflush(), asleep, until 1 is written to release=
 * or ms= milliseconds have passed; stalling= is 1 while it is held,
 * stalled= counts the holds. Asleep, not spinning: a CPU spinning with
 * preemption off holds up every RCU grace period, and whatever waits for
 * one (the sweeper, a check) would wait for the hold too. The kprobe on the
 * function's ftrace site sends the task to hold_then_call() instead (a
 * pre-handler that changes the ip, as error injection does; a post-handler
 * makes kprobes use its IPMODIFY ftrace ops), which sleeps, then calls the
 * function itself: the probe sees that call too, and lets it through.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <asm/ibt.h>

static int pid;
module_param(pid, int, 0644);
MODULE_PARM_DESC(pid, "the tgid of the task to hold once (0: none)");
static unsigned int ms = 20000;
module_param(ms, uint, 0644);
MODULE_PARM_DESC(ms, "how long to hold it at most, in milliseconds");
static int release;
module_param(release, int, 0644);
MODULE_PARM_DESC(release, "write 1 to let the held task go on");
static int stalled;
module_param(stalled, int, 0444);
MODULE_PARM_DESC(stalled, "holds made so far");
static int stalling;
module_param(stalling, int, 0444);
MODULE_PARM_DESC(stalling, "1 while a task is held");

static int (*invalid_noflush)(struct page *page);

static noinline int hold_then_call(struct page *page)
{
	unsigned long end = jiffies + msecs_to_jiffies(READ_ONCE(ms));

	WRITE_ONCE(stalling, 1);
	while (!READ_ONCE(release) && time_before(jiffies, end))
		schedule_timeout_uninterruptible(msecs_to_jiffies(10));
	WRITE_ONCE(stalled, stalled + 1);
	WRITE_ONCE(stalling, 0);
	return invalid_noflush(page);
}

static int on_invalid(struct kprobe *p, struct pt_regs *regs)
{
	int want = READ_ONCE(pid);

	if (!want || current->tgid != want || cmpxchg(&pid, want, 0) != want)
		return 0;
	pr_info("holding %s[%d], called from %pS\n", current->comm, current->pid,
		(void *)*(unsigned long *)regs->sp);
	regs->ip = (unsigned long)hold_then_call;
	return 1;	/* the ip is ours: kprobes leaves it */
}

static void no_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static struct kprobe kp = {
	.symbol_name = "set_direct_map_invalid_noflush",
	.pre_handler = on_invalid,
	.post_handler = no_post,
};

static int __init xp_stall_init(void)
{
	unsigned long start;
	int err = register_kprobe(&kp);

	if (err)
		return err;
	/* Only a probe on the function's ftrace site may change the ip so. */
	if (!kprobe_ftrace(&kp)) {
		unregister_kprobe(&kp);
		return -EOPNOTSUPP;
	}
	/* The function's start: the probe is behind its ENDBR, if it has one. */
	start = (unsigned long)kp.addr;
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) && is_endbr(*(u32 *)(start - ENDBR_INSN_SIZE)))
		start -= ENDBR_INSN_SIZE;
	invalid_noflush = (void *)start;
	return 0;
}

static void __exit xp_stall_exit(void)
{
	unregister_kprobe(&kp);
}

module_init(xp_stall_init);
module_exit(xp_stall_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xprobes selftest: a task held between vmalloc's unmap and its flush");
