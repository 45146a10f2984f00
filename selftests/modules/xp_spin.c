// SPDX-License-Identifier: GPL-2.0
/*
 * xp_spin: kernel threads for the preemption selftest (90-preempt). One
 * thread per online CPU, bound to it, calls kstrdup() in a loop, mostly
 * with NULL (its first instructions are a test and a branch out: a jump
 * hook there covers both, and a thread preempted between the two is what
 * the test is after), now and then with a string (the rest of the
 * function, where the test puts a call hook). On a fully preemptible
 * kernel they are preempted wherever an interrupt lands, and a process of
 * the test's spinning on the same CPU makes each of them be switched in
 * after a traced task, on that task's tables. They sleep for a moment
 * every thousand calls: a task that never sleeps in the kernel holds up
 * every RCU-tasks grace period, which jump hooks wait for before they go
 * live.
 *
 * /sys/module/xp_spin/parameters/calls counts the calls, so the test can
 * tell the threads ran.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

static unsigned long calls;
module_param(calls, ulong, 0444);
MODULE_PARM_DESC(calls, "kstrdup() calls made by the threads so far");

static struct task_struct *threads[NR_CPUS];

static int spin(void *unused)
{

	unsigned int round = 0;

	while (!kthread_should_stop()) {
		/* The argument from a volatile read: the compiler cannot fold the calls. */
		const char *volatile none = NULL;
		int i;

		for (i = 0; i < 64; i++)
			kfree(kstrdup(none, GFP_KERNEL));
		kfree(kstrdup("xprobes", GFP_KERNEL));
		WRITE_ONCE(calls, READ_ONCE(calls) + 65);	/* approximate across CPUs */
		if (++round % 16 == 0)
			usleep_range(50, 100);
		else
			cond_resched();	/* a no-op under full preemption */
	}
	return 0;
}

static void stop_all(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		if (threads[cpu])
			kthread_stop(threads[cpu]);
		threads[cpu] = NULL;
	}
}

static int __init xp_spin_init(void)
{
	int cpu;

	for_each_online_cpu(cpu) {
		struct task_struct *t = kthread_create_on_cpu(spin, NULL, cpu, "xp_spin/%u");

		if (IS_ERR(t)) {
			stop_all();
			return PTR_ERR(t);
		}
		threads[cpu] = t;
		wake_up_process(t);
	}
	return 0;
}

static void __exit xp_spin_exit(void)
{
	stop_all();
}

module_init(xp_spin_init);
module_exit(xp_spin_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xprobes selftest: kernel threads calling kstrdup() on every CPU");
