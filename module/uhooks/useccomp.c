// SPDX-License-Identifier: GPL-2.0
/*
 * A traced process that filters its own system calls, by seccomp or by
 * syscall user dispatch (issue 39; docs/userhooks.md, "seccomp").
 *
 * User hooks enter the kernel by system calls the kernel does not have:
 * 420 (an event stub), 421 (an event thunk), 422 (the records routine's
 * slow path). seccomp sees every system call before the kernel
 * dispatches it, and a filter that allows only what the program needs
 * kills the process for these. Hardened servers install such a filter
 * once they are set up, after trace attached: the first traced call
 * would end them (SIGSYS).
 *
 * Syscall user dispatch (prctl(PR_SET_SYSCALL_USER_DISPATCH), what
 * emulators and sandboxes use) does the same to the thread that turns it
 * on: while its selector says "block", a system call from outside the
 * region it names is a SIGSYS, which the process's handler takes for its
 * own code's (or which kills it). On 6.11 and later kernels uretprobes
 * return through a system call too, from uprobes' own page: after this
 * seal, trace must go on with entry probes only
 * (XPROBES_GONE_NO_URETPROBES on the announcement).
 *
 * So the module watches the ways in (a kprobe each, one hit per filter
 * installed on the machine, nothing per system call): seccomp(2) with
 * SECCOMP_SET_MODE_STRICT or _FILTER, by syscall and by int $0x80 (which
 * a 64-bit process may use), prctl(PR_SET_SECCOMP), and
 * set_syscall_user_dispatch() turning dispatch on (prctl()). When the
 * installing thread's process has a user hook, the call returns
 * -ERESTARTNOINTR without doing anything, and task work queued with
 * TWA_SIGNAL runs before the thread returns to user mode, where it may
 * sleep; then the kernel restarts the call (the signal path's restart,
 * with no signal), which finds no hook and installs the filter. The work:
 *
 *  1. The areas make no more return thunks, and every thread gives back
 *     those on its stack before it runs on in user mode (uunwind.c, as
 *     when a view ends), while the unwinder hooks still help (an unwinder
 *     cannot read through a thunk); it waits for the threads running in
 *     user mode to have done so.
 *  1b. Every syscall in the process's areas becomes a cmp (uarea.c,
 *     xp_uareas_mute(): one byte each, and any code written there later
 *     too), then every CPU is serialised: from here no thread of the
 *     process, nor a child of fork sharing the areas, enters the kernel
 *     through them, whatever stack or signal frame it returns through
 *     (a thunk left where step 1 could not look still returns right).
 *  2. Every hook's jump leaves the text (uhook.c, as a del), and the view
 *     takes no new hook that enters the kernel.
 *  3. Every thread again, now that nothing leads into the areas any more:
 *     one stopped on its way to an area's syscall (inside a stub, a thunk
 *     or the records routine) resumes past it, as if the kernel had
 *     answered ENOSYS (uunwind.c, detach_syscall(): what 1b does already,
 *     kept should 1b fail for memory); it waits for the threads running in
 *     user mode.
 *  4. trace hears of it on the "events" group (UHOOKS_GONE) and goes on
 *     with uprobes, which enter the kernel by a trap.
 *  5. Areas the process maps but did not make (a child of fork shares its
 *     parent's, with the patched text that jumps there) become its own,
 *     muted copies (uarea.c, xp_uareas_unshare()): the parent's hooks go
 *     on. This is also all the work does for a process that maps areas
 *     and has no hook of its own.
 * A hook an add or a del is working on meanwhile is theirs: the work
 * looks again until no hook of the process is left. When it is done the
 * thread gets a pass, which its restarted call takes: a process that
 * maps areas would otherwise be sent round again (the check in the
 * kprobe cannot tell whose areas they are, nor whether they are muted).
 * A process that maps no area pays nothing but that check (a look at up
 * to 1024 of its mappings, under its mmap lock if it is free, at each
 * filter it installs); one whose lock is taken, or with more mappings,
 * is sent round once: a task work that looks where it may sleep, no
 * interrupt to other CPUs.
 *
 * The first hook's race: a thread may pass the kprobe's look (no hook
 * yet) and be on its way to the filter (it copies and checks the program
 * first, and may fault on it for as long as the process likes) when an
 * add claims the process's first hook. So the add, once its cover is
 * published and before anything of the hook can run, looks at every task
 * on the mm (xp_useccomp_claimed(): its threads, a vfork child, one of
 * clone(CLONE_VM), as seal_first() sees them): one under a filter or
 * dispatch refuses the hook, one whose saved registers say it is in such
 * a call is waited for (up to a second, then the add is refused: trace
 * takes a uprobe).
 * The two sides are the store-buffer pattern, each with a full barrier:
 * the thread stores its registers at entry and looks at the hooks after
 * seal_first()'s smp_mb(); the add publishes its cover and looks at the
 * registers after its own. One of them sees the other. (An add that came
 * in between the look and the filter made the process die of SIGSYS at
 * its first hooked call until 2026-12-01: selftest 49's sc-late.)
 *
 * What it does not cover: a thread stopped by a debugger inside one of
 * these system calls, at its entry, when a TSYNC filter comes in (6.12
 * runs seccomp after that stop); a debugger that turns dispatch on for a
 * stopped thread (6.12's PTRACE_SET_SYSCALL_USER_DISPATCH_CONFIG, which
 * runs in the debugger, not in the process) (docs/userhooks.md). (A child
 * of fork that installed a filter of its own while its parent's hooks
 * were live died of SIGSYS at its first hooked call until 2026-11-29.)
 *
 * A kernel built without CONFIG_SECCOMP has none of seccomp's ways in (the
 * system call answers ENOSYS, the prctl EINVAL): only dispatch is watched.
 *
 * Locking: the kprobe handlers run in the installing thread, preemption
 * off; they read the covers' hash under RCU (ucover.c), the mappings under
 * the mmap lock only if it is free (a trylock), and the passes under
 * passes_lock (a raw spinlock, taken nowhere else). The work takes
 * xp_views_lock itself, never across a wait for the process. Module exit
 * unregisters the kprobes once every hook is out of every process (main.c;
 * a filter that goes in before then is sealed against the hooks left),
 * then waits for the works queued (each runs before its thread returns to
 * user mode, or at its exit).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/hashtable.h>
#include <linux/kprobes.h>
#include <linux/prctl.h>
#include <linux/sched/signal.h>
#include <linux/seccomp.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/version.h>
#include <asm/unistd.h>
#include "xprobes.h"
#include "compat.h"
#include "uhook.h"

struct seal {
	struct callback_head work;
	bool dispatch;		/* syscall user dispatch, else a seccomp filter */
	bool hooks;		/* the process had hooks: steps 1-4 */
};

/* 6.11 on: a uretprobe returns through a system call (uprobes' trampoline) */
#define URETPROBE_SYSCALL	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0))

static atomic_t seal_works = ATOMIC_INIT(0);
static bool guard_on;

static bool has_hooks(struct mm_struct *mm)
{
	bool live;

	rcu_read_lock();
	live = xp_ucover_mm_live(mm);
	rcu_read_unlock();
	return live;
}

static void sync_cpu(void *unused)
{
}

/*
 * A thread whose seal work is done may install its filter: the restarted
 * call takes its pass. One per thread, keyed by the task and its start
 * time (never the same for a task that reuses the pointer); one not taken
 * within a second (the thread was killed, or left its signal handler by
 * longjmp() instead of restarting) is dropped at the next give into its
 * bucket. Passes
 * are allocated where one may sleep; the kprobes only unlink, and free
 * by kfree_rcu() (preemption is off there).
 */
struct pass {
	struct hlist_node node;
	struct task_struct *task;	/* compared, never followed */
	u64 start;
	unsigned long at;
	struct rcu_head rcu;
};
static DEFINE_HASHTABLE(passes, 6);	/* under passes_lock */
static DEFINE_RAW_SPINLOCK(passes_lock);
static atomic_t npasses = ATOMIC_INIT(0);

static void give_pass(void)
{
	struct pass *p = kmalloc(sizeof(*p), GFP_KERNEL), *q;
	struct hlist_node *tmp;
	unsigned long flags;
	HLIST_HEAD(gone);

	/* this thread's bucket only: a bounded walk, interrupts off */
	raw_spin_lock_irqsave(&passes_lock, flags);
	hash_for_each_possible_safe(passes, q, tmp, node, (unsigned long)current)
		if (q->task == current || time_after(jiffies, q->at + HZ)) {
			hash_del(&q->node);
			hlist_add_head(&q->node, &gone);
			atomic_dec(&npasses);
		}
	if (p) {
		p->task = current;
		p->start = current->start_time;
		p->at = jiffies;
		hash_add(passes, &p->node, (unsigned long)current);
		atomic_inc(&npasses);
	}
	raw_spin_unlock_irqrestore(&passes_lock, flags);
	hlist_for_each_entry_safe(q, tmp, &gone, node)
		kfree(q);
}

static bool take_pass(void)
{
	struct pass *p, *found = NULL;
	unsigned long flags;

	if (!atomic_read(&npasses))	/* given in this thread, before its restart */
		return false;
	raw_spin_lock_irqsave(&passes_lock, flags);
	hash_for_each_possible(passes, p, node, (unsigned long)current)
		if (p->task == current && p->start == current->start_time) {
			hash_del(&p->node);
			atomic_dec(&npasses);
			found = p;
			break;
		}
	raw_spin_unlock_irqrestore(&passes_lock, flags);
	if (found)
		kfree_rcu(found, rcu);	/* preemption is off here: no kfree() on PREEMPT_RT */
	return found;
}
NOKPROBE_SYMBOL(take_pass);

static void passes_free(void)
{
	struct hlist_node *tmp;
	struct pass *p;
	unsigned int bkt;

	hash_for_each_safe(passes, bkt, tmp, p, node) {
		hash_del(&p->node);
		kfree(p);
	}
}

/* Steps 1-4: the process's hooks out, for good. *@pid: whose hooks went. */
static void seal_hooks(struct mm_struct *mm, bool dispatch, u32 *pid)
{
	struct xp_unwind_map *m;
	int err;

	while (!(current->flags & PF_EXITING)) {
		mutex_lock(&xp_views_lock);
		xp_uhooks_seal_views(mm, dispatch);	/* before an add maps an area m misses */
		m = xp_uareas_seal(mm);
		xp_unwind_detach_queue(xp_unwind_map_get(m));	/* 1 */
		mutex_unlock(&xp_views_lock);
		xp_unwind_detach_wait(m, 100);
		mutex_lock(&xp_views_lock);
		err = xp_uareas_mute(mm);			/* 1b, once the thunks are back */
		mutex_unlock(&xp_views_lock);
		if (err)
			pr_warn_ratelimited("pid %d: the trampolines' system calls stay (%d): only "
					    "its threads' stops before them are seen to\n",
					    task_tgid_nr(current), err);
		/* no CPU runs a syscall it fetched before the mute (cross-modifying code) */
		on_each_cpu(sync_cpu, NULL, 1);
		err = xp_uhooks_seal(mm, pid);			/* 2 */
		mutex_lock(&xp_views_lock);
		xp_unwind_detach_queue(xp_unwind_map_get(m));	/* 3 */
		mutex_unlock(&xp_views_lock);
		if (m)
			xp_unwind_detach_wait(m, 1000);
		xp_unwind_map_put(m);
		if (err || !has_hooks(mm) || fatal_signal_pending(current))
			break;
		schedule_timeout_killable(HZ / 50);	/* an add or a del at work */
	}
}

static void seal_work(struct callback_head *cb)
{
	struct mm_struct *mm = current->mm;
	struct seal *w = container_of(cb, struct seal, work);
	bool dispatch = w->dispatch, hooks = w->hooks;
	u32 pid = 0;
	int err;

	kfree(w);
	if (mm && hooks)
		seal_hooks(mm, dispatch, &pid);
	if (pid) {
		mutex_lock(&xp_views_lock);
		if (dispatch)
			xp_netlink_uhooks_gone(pid, "the process turns on syscall user dispatch",
					       URETPROBE_SYSCALL ? XPROBES_GONE_NO_URETPROBES : 0);
		else
			xp_netlink_uhooks_gone(pid, "the process installs a seccomp filter", 0);
		mutex_unlock(&xp_views_lock);
	}
	/*
	 * 5: MAP_FIXED's unmap flushes the TLB of every CPU that runs the
	 * process (an interrupt: it serialises them). Whatever the outcome,
	 * the thread gets its pass: a copy that cannot be made (no memory, a
	 * sealed mapping, a security module that refuses) leaves the areas
	 * shared, as before the copies were made, rather than the call
	 * coming round for ever (only memory short for the pass itself sends
	 * it round again).
	 */
	if (mm && !(current->flags & PF_EXITING)) {
		err = xp_uareas_unshare();
		if (err < 0 && !fatal_signal_pending(current))
			pr_warn_ratelimited("pid %d: the trampolines it shares with its parent stay "
					    "shared (%d): its filter may kill it at a hooked call\n",
					    task_tgid_nr(current), err);
		give_pass();
	}
	/* The last this module's code does for the work (module exit polls it). */
	atomic_dec(&seal_works);
}

/*
 * The installing thread, before the filter (or, @dispatch, syscall user
 * dispatch): with hooks, back off and seal.
 */
static int seal_first(struct pt_regs *regs, bool dispatch)
{
	struct mm_struct *mm = current->mm;
	struct seal *w;
	bool hooks;

	if (!mm || (current->flags & (PF_KTHREAD | PF_EXITING)))
		return 0;
	/*
	 * The registers the entry saved (this call's number) before the look
	 * at the hooks: pairs with xp_useccomp_claimed()'s barrier.
	 */
	smp_mb();
	hooks = has_hooks(mm);
	if (!hooks && (take_pass() || !xp_uareas_mapped(mm)))
		return 0;
	w = kmalloc(sizeof(*w), GFP_ATOMIC | __GFP_NOWARN);
	if (!w && !hooks)
		return 0;	/* areas perhaps shared: no process of ours fails for them */
	if (!w)	/* the filter must not go in over the hooks: the call fails, as it may */
		return xp_probe_return(regs, (unsigned long)-ENOMEM);
	init_task_work(&w->work, seal_work);
	w->dispatch = dispatch;
	w->hooks = hooks;
	atomic_inc(&seal_works);
	if (task_work_add(current, &w->work, XP_TWA_SIGNAL_ATOMIC)) {
		kfree(w);
		atomic_dec(&seal_works);
		return 0;
	}
	return xp_probe_return(regs, (unsigned long)-ERESTARTNOINTR);
}
NOKPROBE_SYMBOL(seal_first);

static int seccomp_op(struct pt_regs *regs, unsigned int op)
{
	if (op != SECCOMP_SET_MODE_STRICT && op != SECCOMP_SET_MODE_FILTER)
		return 0;
	return seal_first(regs, false);
}
NOKPROBE_SYMBOL(seccomp_op);

/* __x64_sys_seccomp(regs): the system call's registers; op is an unsigned int */
static int on_seccomp(struct kprobe *p, struct pt_regs *regs)
{
	return seccomp_op(regs, ((const struct pt_regs *)regs->di)->di);
}
NOKPROBE_SYMBOL(on_seccomp);

/* __ia32_sys_seccomp(regs): the same through int $0x80, which a 64-bit process may use */
static int on_seccomp32(struct kprobe *p, struct pt_regs *regs)
{
	return seccomp_op(regs, ((const struct pt_regs *)regs->di)->bx);
}
NOKPROBE_SYMBOL(on_seccomp32);

/* prctl_set_seccomp(mode, filter), for PR_SET_SECCOMP */
static int on_prctl(struct kprobe *p, struct pt_regs *regs)
{
	if (regs->di != SECCOMP_MODE_STRICT && regs->di != SECCOMP_MODE_FILTER)
		return 0;
	return seal_first(regs, false);
}
NOKPROBE_SYMBOL(on_prctl);

/* set_syscall_user_dispatch(mode, offset, len, selector), for the calling thread */
static int on_dispatch(struct kprobe *p, struct pt_regs *regs)
{
	if (regs->di != PR_SYS_DISPATCH_ON)
		return 0;
	return seal_first(regs, true);
}
NOKPROBE_SYMBOL(on_dispatch);

static struct kprobe seccomp_kp = {
	.symbol_name = "__x64_sys_seccomp",
	.pre_handler = on_seccomp,
};

static struct kprobe prctl_kp = {
	.symbol_name = "prctl_set_seccomp",
	.pre_handler = on_prctl,
};

static struct kprobe dispatch_kp = {
	.symbol_name = "set_syscall_user_dispatch",
	.pre_handler = on_dispatch,
};

/* Only with IA32_EMULATION; prctl() through int $0x80 ends in prctl_set_seccomp() */
static struct kprobe seccomp32_kp = {
	.symbol_name = "__ia32_sys_seccomp",
	.pre_handler = on_seccomp32,
};
static bool seccomp32_on;

/*
 * Is a thread, by the registers its last entry into the kernel saved (@r),
 * in a call that installs a filter or turns dispatch on? So also for a while after
 * such a call failed (until its next entry, an interrupt's too): an add
 * waits for nothing then, and no more than a second.
 */
static enum xp_filtered installing(struct pt_regs *r)
{
	u32 nr = r->orig_ax, op;	/* the kernel dispatches on eax; op is an int */
	unsigned long arg;

	if (nr == __NR_ia32_seccomp || nr == __NR_ia32_prctl) {	/* int $0x80: ebx, ecx */
		op = r->bx;
		arg = (u32)r->cx;
		nr = nr == __NR_ia32_seccomp ? __NR_seccomp : __NR_prctl;
	} else {
		nr &= ~__X32_SYSCALL_BIT;	/* x32's numbers are x86_64's with it */
		op = r->di;
		arg = r->si;	/* dispatch's mode is an unsigned long */
	}
	if ((nr == __NR_seccomp && (op == SECCOMP_SET_MODE_STRICT || op == SECCOMP_SET_MODE_FILTER)) ||
	    (nr == __NR_prctl && op == PR_SET_SECCOMP))
		return XP_INSTALLING_SECCOMP;
	if (nr == __NR_prctl && op == PR_SET_SYSCALL_USER_DISPATCH && arg == PR_SYS_DISPATCH_ON)
		return XP_INSTALLING_DISPATCH;
	return XP_UNFILTERED;
}

/*
 * Does a task running @mm (its process's threads, and any that shares the
 * mm otherwise: a vfork child, clone(CLONE_VM)) filter its system calls,
 * or is one on its way to (installing())? The saved registers are read
 * under task_lock() with the task still on @mm, which keeps its stack
 * (exit_mm() comes before the stack goes).
 */
enum xp_filtered xp_useccomp_state(struct mm_struct *mm)
{
	enum xp_filtered how = XP_UNFILTERED;
	struct task_struct *g, *t;

	if (!mm)	/* (every kernel thread, and every task that exited, has none) */
		return how;
	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (READ_ONCE(t->mm) != mm)
			continue;
#ifdef CONFIG_SECCOMP
		if (READ_ONCE(t->seccomp.mode) != SECCOMP_MODE_DISABLED) {
			how = XP_SECCOMP;
			goto out;
		}
#endif
		if (test_task_syscall_work(t, SYSCALL_USER_DISPATCH)) {
			how = XP_DISPATCH;
			goto out;
		}
		if (how != XP_UNFILTERED)
			continue;	/* one on its way is enough; a filter in says more */
		task_lock(t);
		if (t->mm == mm && !(t->flags & PF_KTHREAD))
			how = installing(task_pt_regs(t));
		task_unlock(t);
	}
out:
	rcu_read_unlock();
	return how;
}

/* A hook that enters the kernel, in a process filtered as @how: refused, and why. */
bool xp_useccomp_refuse(enum xp_filtered how, struct netlink_ext_ack *extack)
{
	switch (how) {
	case XP_SECCOMP:
		NL_SET_ERR_MSG(extack, "the process runs under seccomp, whose filter may kill it for "
			       "the events' system call: use a uprobe, or a hook without events");
		return true;
	case XP_DISPATCH:
		NL_SET_ERR_MSG(extack, "the process runs with syscall user dispatch on, which may "
			       "take the events' system call for its own: use a uprobe, or a hook "
			       "without events");
		return true;
	default:
		return false;
	}
}

#define CLAIMED_WAIT	HZ	/* for a thread on its way to a filter */

/*
 * @h, which enters the kernel, is claimed (its cover published) and not
 * yet in the text: may it go in? Without xp_views_lock: it waits for the
 * process. The first hook's race, in the header.
 */
int xp_useccomp_claimed(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	unsigned long end = jiffies + CLAIMED_WAIT;
	enum xp_filtered how;

	/* The cover's publication before the threads' registers: pairs with seal_first()'s. */
	smp_mb();
	for (;;) {
		how = xp_useccomp_state(h->mm);
		if (how == XP_UNFILTERED)
			return 0;
		if (xp_useccomp_refuse(how, extack))
			return -EPERM;
		if (READ_ONCE(h->orphan))
			return -ESRCH;
		if (time_after(jiffies, end)) {
			/* -EPERM as for a filter in: trace takes uprobes for the rest */
			if (how == XP_INSTALLING_DISPATCH)
				NL_SET_ERR_MSG(extack, "a thread of the process is turning on syscall "
					       "user dispatch: use a uprobe, or try again");
			else
				NL_SET_ERR_MSG(extack, "a thread of the process is installing a "
					       "seccomp filter: use a uprobe, or try again");
			return -EPERM;
		}
		schedule_timeout_killable(HZ / 100);
		if (fatal_signal_pending(current)) {
			NL_SET_ERR_MSG(extack, "interrupted while a thread of the process installed a "
				       "seccomp filter or turned on syscall user dispatch: try again");
			return -EINTR;
		}
	}
}

/*
 * Can a filter installed now, or dispatch turned on, go in unseen? (Hooks
 * that enter the kernel are refused then.) A kernel built without seccomp
 * takes no filter: only dispatch (x86's generic entry always has it) is
 * watched there.
 */
bool xp_useccomp_unguarded(void)
{
	return !guard_on;
}

static int seccomp_init(void)
{
	int err;

	if (!IS_ENABLED(CONFIG_SECCOMP))
		return 0;
	err = register_kprobe(&seccomp_kp);
	if (err)
		return err;
	err = register_kprobe(&prctl_kp);
	if (err)
		goto out_seccomp;
	err = register_kprobe(&seccomp32_kp);
	seccomp32_on = !err;
	if (err == -ENOENT || err == -EINVAL)
		err = 0;	/* no IA32_EMULATION: no such way in */
	if (err)
		goto out_prctl;
	return 0;

out_prctl:
	unregister_kprobe(&prctl_kp);
out_seccomp:
	unregister_kprobe(&seccomp_kp);
	return err;
}

void xp_useccomp_init(void)
{
	int err;

	xp_uareas_init();	/* before the kprobes, which tell areas by it */

	err = register_kprobe(&dispatch_kp);
	if (!err) {
		err = seccomp_init();
		if (err)
			unregister_kprobe(&dispatch_kp);
	}
	if (err)
		pr_warn("no kprobe on seccomp's or syscall user dispatch's entry points (%d): "
			"user hooks with events or records are refused\n", err);
	guard_on = !err;
}

void xp_useccomp_exit(void)
{
	/* guard_on: dispatch's kprobe, and seccomp's where the kernel has it */
	if (guard_on && IS_ENABLED(CONFIG_SECCOMP)) {
		if (seccomp32_on)
			unregister_kprobe(&seccomp32_kp);
		unregister_kprobe(&prctl_kp);
		unregister_kprobe(&seccomp_kp);
	}
	if (guard_on)
		unregister_kprobe(&dispatch_kp);
	guard_on = false;
	seccomp32_on = false;
	while (atomic_read(&seal_works))
		msleep(1);	/* each runs before its thread returns to user mode */
	passes_free();		/* (kfree_rcu() runs none of this module's code) */
}

#ifdef XPROBES_KUNIT
#include "useccomp_kunit.c"
#endif
