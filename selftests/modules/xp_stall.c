// SPDX-License-Identifier: GPL-2.0
/*
 * xp_stall: holds one task inside vfree() between vmalloc's unmap and its
 * TLB flush, as a preempted task or a vCPU its host has descheduled is held
 * there: selftest 55-view-module. vfree() of module-space memory (every
 * area is VM_FLUSH_RESET_PERMS) clears the area's entries and puts the
 * area on the lazy-purge list (remove_vm_area()), then makes the pages'
 * direct map invalid, one page at a time (vm_reset_perms(), through
 * set_direct_map_invalid_noflush()), and only then purges and flushes
 * (_vm_unmap_aliases()). A kprobe on set_direct_map_invalid_noflush()
 * busy-waits there for ms= milliseconds, once, in the task whose tgid is
 * written to pid=; stalled= counts the stalls made, stalling= says one is
 * under way.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/sched.h>

static int pid;
module_param(pid, int, 0644);
MODULE_PARM_DESC(pid, "the tgid of the task to hold once (0: none)");
static unsigned int ms = 300;
module_param(ms, uint, 0644);
MODULE_PARM_DESC(ms, "how long to hold it, in milliseconds");
static int stalled;
module_param(stalled, int, 0444);
MODULE_PARM_DESC(stalled, "stalls made so far");
static int stalling;
module_param(stalling, int, 0444);
MODULE_PARM_DESC(stalling, "1 while a task is held");

static int on_invalid(struct kprobe *p, struct pt_regs *regs)
{
	int want = READ_ONCE(pid);

	if (!want || current->tgid != want || cmpxchg(&pid, want, 0) != want)
		return 0;
	WRITE_ONCE(stalling, 1);
	mdelay(READ_ONCE(ms));
	WRITE_ONCE(stalled, stalled + 1);
	WRITE_ONCE(stalling, 0);
	return 0;
}

static struct kprobe kp = {
	.symbol_name = "set_direct_map_invalid_noflush",
	.pre_handler = on_invalid,
};

static int __init xp_stall_init(void)
{
	return register_kprobe(&kp);
}

static void __exit xp_stall_exit(void)
{
	unregister_kprobe(&kp);
}

module_init(xp_stall_init);
module_exit(xp_stall_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xprobes selftest: a task held between vmalloc's unmap and its flush");
