// SPDX-License-Identifier: GPL-2.0
/* Resolving a PID from a request to the process's address space. */
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <net/netlink.h>
#include "xprobes.h"

/*
 * The thread group of @nr, as seen from the caller's pid namespace (netlink
 * handlers run in the sender's context). Returns a task reference or NULL with
 * an extack message.
 */
struct task_struct *xp_get_task(u32 nr, struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	struct pid *pid;

	pid = find_get_pid(nr);
	if (!pid) {
		NL_SET_ERR_MSG_FMT(extack, "no process with pid %u", nr);
		return NULL;
	}
	task = get_pid_task(pid, PIDTYPE_TGID);
	put_pid(pid);
	if (!task) {
		NL_SET_ERR_MSG_FMT(extack, "pid %u is not a process (thread group leader)", nr);
		return NULL;
	}
	return task;
}

/* The mm of @nr with a user reference (mmput() it), or NULL with a message. */
struct mm_struct *xp_get_mm(u32 nr, struct netlink_ext_ack *extack)
{
	struct task_struct *task = xp_get_task(nr, extack);
	struct mm_struct *mm;

	if (!task)
		return NULL;
	mm = get_task_mm(task);
	if (!mm)
		NL_SET_ERR_MSG_FMT(extack, "pid %u has no user address space (kernel thread or exiting)",
				   nr);
	put_task_struct(task);
	return mm;
}
