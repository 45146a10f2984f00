// SPDX-License-Identifier: GPL-2.0
/*
 * The events of user hooks (docs/userhooks.md, "Events"). A hook with events
 * has a stub in front of its trampoline's instructions:
 *
 *	push %rax; push %rcx; push %r11
 *	mov $XPROBES_UHOOK_NR, %eax
 *	syscall
 *	pop %r11; pop %rcx; pop %rax
 *
 * At a function's entry the stack below the stack pointer is free (the
 * caller's call just wrote the word above it; the callee has not run), so
 * the stub may push. syscall clobbers rax, rcx and r11 and keeps the rest;
 * the kernel returns with the flags the process had.
 *
 * XPROBES_UHOOK_NR is a number x86_64 never gives out, so the kernel
 * answers it with __x64_sys_ni_syscall() (-ENOSYS). The traced process's
 * view has a hook there, placed by the module with its own handler:
 * xp_uevent_fire() finds the user hook by the stub's address (the ip the
 * syscall saved) and the process's mm, rebuilds the registers the function
 * was entered with, and fires the xprobes_uhook tracepoint. Every other
 * process runs the shared ni_syscall and pays nothing; a forked child that
 * keeps the patched text gets -ENOSYS, which the stub ignores.
 *
 * seccomp sees the syscall before the kernel dispatches it, and a filter may
 * kill the process for a number it does not know: events are refused for a
 * process any of whose threads is under seccomp (xp_uevents_get()).
 *
 * Locking: the hash and each view's uevent_hook are changed
 * under xp_views_lock. xp_uevent_fire() runs on a hook's hit path with
 * preemption off, an RCU read-side section; a user hook is freed after a
 * grace period (uhook.c), its fields read here are fixed from its creation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/seccomp.h>
#include "xprobes.h"
#include "uhook.h"
#include "trace.h"

/* User hooks with events, by trampoline address; compared with the mm too. */
static DEFINE_HASHTABLE(xp_uevents, 10);

void xp_ustub(u8 *out)
{
	static const u8 stub[XP_USTUB_LEN] = {
		0x50,			/* push %rax */
		0x51,			/* push %rcx */
		0x41, 0x53,		/* push %r11 */
		0xb8, 0, 0, 0, 0,	/* mov $XPROBES_UHOOK_NR, %eax */
		0x0f, 0x05,		/* syscall: returns to XP_USTUB_RET */
		0x41, 0x5b,		/* pop %r11 */
		0x59,			/* pop %rcx */
		0x58,			/* pop %rax */
	};

	memcpy(out, stub, sizeof(stub));
	put_unaligned_le32(XPROBES_UHOOK_NR, out + 5);
}

/* The pushes of the stub, as the stack holds them at its syscall. */
struct ustub_frame {
	unsigned long r11, cx, ax;
};

/*
 * The hit of the view's hook on __x64_sys_ni_syscall(regs): @kregs are the
 * kernel's registers there, the process's are in the first argument.
 */
void xp_uevent_fire(struct xp_hook *kh, struct pt_regs *kregs)
{
	struct pt_regs *u = (struct pt_regs *)kregs->di;
	struct ustub_frame f;
	struct xp_uhook *h;
	unsigned long slot;
	struct pt_regs r;

	/* Another unimplemented syscall, or not ours. */
	if (u != task_pt_regs(current) || u->orig_ax != XPROBES_UHOOK_NR)
		return;
	slot = u->ip - XP_USTUB_RET;
	hash_for_each_possible_rcu(xp_uevents, h, enode, slot)
		if (h->slot == slot && h->mm == current->mm)
			goto found;
	return;		/* a deleted hook's stub still running, or a forked child */
found:
	if (copy_from_user_nofault(&f, (const void __user *)u->sp, sizeof(f)))
		return;
	r = *u;
	r.r11 = f.r11;
	r.cx = f.cx;
	r.ax = f.ax;
	r.sp = u->sp + sizeof(f);
	r.ip = h->func;
	r.orig_ax = -1;
	this_cpu_inc(*h->hits);
	trace_xprobes_uhook(h->id, h->cookie, &r);
}

static bool under_seccomp(struct task_struct *task)
{
	bool filtered = false;
#ifdef CONFIG_SECCOMP
	struct task_struct *t;

	rcu_read_lock();
	for_each_thread(task, t)
		if (READ_ONCE(t->seccomp.mode) != SECCOMP_MODE_DISABLED)
			filtered = true;
	rcu_read_unlock();
#endif
	return filtered;
}

/*
 * A user hook with events in @task, which runs on @v: the first places the
 * view's hook on the unimplemented-syscall handler, which stays until the
 * view ends (adding and removing it with every user hook would cost each
 * add a kernel jump's arming, for nothing: the traced process alone pays
 * for it, and only on syscalls the kernel does not have).
 */
int xp_uevents_get(struct xp_view *v, struct task_struct *task, struct netlink_ext_ack *extack)
{
	struct xp_hook *kh;

	lockdep_assert_held(&xp_views_lock);
	if (under_seccomp(task)) {
		NL_SET_ERR_MSG(extack, "the process runs under seccomp, whose filter may kill it for "
			       "the events' system call: use a uprobe, or a hook without events");
		return -EPERM;
	}
	if (!v->uevent_hook) {
		kh = xp_hook_add(v, "__x64_sys_ni_syscall", NULL, 0, XP_F_UEVENTS, extack);
		if (IS_ERR(kh))
			return PTR_ERR(kh);
		v->uevent_hook = kh;
	}
	return 0;
}

void xp_uevent_publish(struct xp_uhook *h)
{
	hash_add_rcu(xp_uevents, &h->enode, h->slot);
}

void xp_uevent_unpublish(struct xp_uhook *h)
{
	hash_del_rcu(&h->enode);
}

u64 xp_uevent_hits(struct xp_uhook *h)
{
	u64 sum = 0;
	int cpu;

	if (!h->hits)
		return 0;
	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(h->hits, cpu);
	return sum;
}
