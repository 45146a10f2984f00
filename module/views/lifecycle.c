// SPDX-License-Identifier: GPL-2.0
/*
 * Views follow their processes: fork, exec, exit, and the socket that made
 * them.
 *
 * - fork: the sched_process_fork tracepoint runs in the parent after the
 *   child's mm exists and before the child first runs; a child of a member
 *   joins the view there (unless XPROBES_F_NO_FOLLOW_FORK). A vfork/CLONE_VM
 *   child shares the parent's mm and joins as a process, so that its exec is
 *   followed too; it and a new thread get their rseq side set for records
 *   there (urec.c, xp_urec_clone()).
 * - exec: sched_process_exec runs after the new mm is installed and before
 *   the new program's first instruction; a process that was a member joins
 *   with its new mm (a local TLB flush, and the mm's TLB generation moves for
 *   any CPU that ran it between exec_mmap() and here).
 * - exit: an mm with no users left is dead. A sweeper, running while views
 *   exist, detaches dead members and ends views that have none, announcing
 *   each on the events multicast group. It also runs the coherence audit and
 *   the page-table check, ends every view if kprobes stopped (kpstate.c),
 *   and brings a view's copied tables up to the kernel's changes, or ends
 *   the view where it cannot (pgtable.c, xp_chain_resync).
 * - owner: a view belongs to the generic netlink socket that created it
 *   unless made with XPROBES_F_PERSIST; closing the socket (the controller
 *   exiting, killed or not) ends its views.
 *
 * The tracepoint probes are registered only while views exist (and a second
 * longer, so that view churn does not patch the kernel at every turn): forks
 * and execs pay nothing otherwise. They run in atomic context and touch views
 * under RCU and view->lock only (view.c), with members from mpool.c; every
 * fork and exec followed, and every one missed, is counted for STATUS.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/netlink.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <asm/tlbflush.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include "xprobes.h"
#include "uhooks/uhook.h"

#define XP_SWEEP_MS	200
#define XP_AUDIT_EVERY	10	/* sweeps: every 2 s */
#define XP_IDLE_SWEEPS	5	/* sweeps without views before the probes go */

static struct tracepoint *tp_fork, *tp_exec;
static bool tp_registered;		/* under xp_views_lock */
atomic64_t xp_followed_forks, xp_followed_execs, xp_follow_failures;

static void on_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	struct xp_view *v;
	bool thread;

	if (!parent->mm || !child->mm)
		return;
	/* a thread runs on the view already: only its TLS is looked at */
	thread = child->mm == parent->mm && same_thread_group(parent, child);
	rcu_read_lock();
	v = xp_view_of_mm(parent->mm);
	if (v && READ_ONCE(v->closing))
		v = NULL;	/* going: the child stays on the shared tables */
	if (v && child->mm == parent->mm)
		xp_urec_clone(v, parent, child);
	if (v && !thread && !(v->flags & XPROBES_F_NO_FOLLOW_FORK)) {
		if (xp_member_add(v, child->mm, task_tgid(child), GFP_ATOMIC)) {
			atomic64_inc(&xp_follow_failures);
		} else {
			xp_tp_sys_join(v, child);
			atomic64_inc(&xp_followed_forks);
		}
	}
	rcu_read_unlock();
}

static void on_exec(void *data, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct pid *tgid = task_tgid(p);
	struct mm_struct *mm = p->mm;
	struct xp_view *v;

	if (!mm)
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(v, &xp_views, node) {
		/* A closing view is not the process's any more (its next may be listed after it). */
		if (READ_ONCE(v->closing) || !xp_view_has_process(v, tgid, mm))
			continue;
		xp_guard_evict(mm);
		if (xp_member_add(v, mm, tgid, GFP_ATOMIC)) {
			atomic64_inc(&xp_follow_failures);
		} else {
			/*
			 * exec_mmap() may have loaded the new mm on another CPU
			 * before this one: xp_member_add() moved its TLB
			 * generation, so that CPU flushes before it runs it again
			 * (one that kept it lazily left it: xp_guard_evict()).
			 * Here it runs now (preemption is off).
			 */
			__flush_tlb_all();
			xp_tp_sys_join(v, p);
			atomic64_inc(&xp_followed_execs);
		}
		break;
	}
	rcu_read_unlock();
}

static void find_tracepoints(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		tp_fork = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		tp_exec = tp;
}

static void sweep(struct work_struct *work);
static DECLARE_DELAYED_WORK(sweep_work, sweep);
static unsigned long sweeps, idle_sweeps;	/* under xp_views_lock */

static void unregister_probes(void)
{
	if (!tp_registered)
		return;
	tracepoint_probe_unregister(tp_exec, on_exec, NULL);
	tracepoint_probe_unregister(tp_fork, on_fork, NULL);
	tp_registered = false;
}

static void sweep(struct work_struct *work)
{
	struct xp_view *v, *n;
	const char *why;

	mutex_lock(&xp_views_lock);
	why = xp_nr_views ? xp_kprobes_broken() : NULL;
	/* module space, once for every view (counted: the kernel's paths should have) */
	if (!why)
		xp_modspace_resync();
	xp_for_each_open_view_safe(v, n)	/* a closing one's teardown detaches every member */
		if (why)
			xp_view_close(v, why);
		else if (!xp_chain_resync(v))
			xp_view_close(v, "the kernel changed its image page tables in a way the view cannot follow");
		else if (!xp_view_reap_members(v))
			xp_view_close(v, "exit");
	xp_tps_settle();
	if (xp_nr_views && ++sweeps % XP_AUDIT_EVERY == 0) {
		xp_audit_all();
		xp_tables_check(NULL);
	}
	idle_sweeps = xp_nr_views ? 0 : idle_sweeps + 1;
	if (idle_sweeps >= XP_IDLE_SWEEPS)
		unregister_probes();
	if (xp_nr_views || tp_registered)
		schedule_delayed_work(&sweep_work, msecs_to_jiffies(XP_SWEEP_MS));
	mutex_unlock(&xp_views_lock);
}

/* The first view exists: follow processes. Under xp_views_lock. */
void xp_lifecycle_start(void)
{
	if (!tp_registered && tp_fork && tp_exec) {
		if (tracepoint_probe_register(tp_fork, on_fork, NULL)) {
			pr_warn("cannot follow forks\n");
		} else if (tracepoint_probe_register(tp_exec, on_exec, NULL)) {
			pr_warn("cannot follow execs\n");
			tracepoint_probe_unregister(tp_fork, on_fork, NULL);
		} else {
			tp_registered = true;
		}
	}
	schedule_delayed_work(&sweep_work, msecs_to_jiffies(XP_SWEEP_MS));
}

/* The last view is gone. Under xp_views_lock; the sweeper drops the probes later. */
void xp_lifecycle_stop(void)
{
	idle_sweeps = 0;
}

/* Are the fork and exec probes registered? */
bool xp_lifecycle_following(void)
{
	bool on;

	mutex_lock(&xp_views_lock);
	on = tp_registered;
	mutex_unlock(&xp_views_lock);
	return on;
}

/*
 * End the views owned by generic netlink port @portid (not 0): all of them
 * with @any, else only those whose owning socket is released. A port id is
 * not an identity: netlink_release() frees it (netlink_remove) before it
 * announces NETLINK_URELEASE, so another socket may bind it in between and
 * own views of its own by then. The socket being released is orphaned
 * (SOCK_DEAD) before the announcement; each view holds its owner's socket.
 */
void xp_views_release_owner(u32 portid, bool any)
{
	struct xp_view *v, *next;
	u64 before, after;
	bool closed = false;

	mutex_lock(&xp_views_lock);
	before = xp_uhooks_handed();
	list_for_each_entry_safe(v, next, &xp_views, node)
		if (v->owner == portid &&
		    (any || !v->owner_sk || sock_flag(v->owner_sk, SOCK_DEAD))) {
			xp_view_close(v, "owner closed");	/* unless closing already */
			closed = true;
		}
	list_for_each_entry(v, &xp_views_torn, close_node)
		closed |= v->owner == portid;	/* detached, not yet freed */
	after = xp_uhooks_handed();
	if (closed) {
		/*
		 * Gone before the port's kept sums go (a view's teardown may
		 * keep its sums: urec.c), and before the controller's exit
		 * (or close) returns, those the sweeper closed too. Every
		 * other socket's close, and every command's, goes by without
		 * waiting.
		 */
		mutex_unlock(&xp_views_lock);
		xp_views_settle();
		mutex_lock(&xp_views_lock);
	}
	xp_urec_sums_release(portid, any);
	mutex_unlock(&xp_views_lock);
	if (after != before)
		xp_uhooks_settle(after);	/* its processes have their text back */
}

/* A generic netlink socket was released: end the views it owned. */
static int on_netlink_release(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC && n->portid &&
	    net_eq(n->net, &init_net))
		xp_views_release_owner(n->portid, false);
	return NOTIFY_DONE;
}

static struct notifier_block netlink_nb = {
	.notifier_call = on_netlink_release,
};

int xp_lifecycle_init(void)
{
	for_each_kernel_tracepoint(find_tracepoints, NULL);
	if (!tp_fork || !tp_exec)
		pr_warn("sched_process_fork/exec tracepoints not found: views will not follow fork and exec\n");
	return netlink_register_notifier(&netlink_nb);
}

/* After every view is gone. */
void xp_lifecycle_exit(void)
{
	netlink_unregister_notifier(&netlink_nb);
	cancel_delayed_work_sync(&sweep_work);
	mutex_lock(&xp_views_lock);
	unregister_probes();
	mutex_unlock(&xp_views_lock);
	tracepoint_synchronize_unregister();
	xp_member_pool_drain();
}
