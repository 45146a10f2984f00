// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process kernel views: their lifetime and their members.
 *
 * A view is one private page-table chain for the kernel image (pgtable.c)
 * with its hooks (hook.c). Its members are the address spaces that run on the
 * chain: the process the view was made for, the children it forks (unless
 * XPROBES_F_NO_FOLLOW_FORK) and the new mm of every exec among them
 * (lifecycle.c). Joining is a single write of the mm's top-level entry for
 * the image, so it can happen in the fork and exec tracepoints, before the
 * child or the new program runs a single instruction. Threads share their
 * mm, hence their view. Every other process keeps the shared entry.
 *
 * A view is recognised by that entry: the trap handler compares the loaded
 * pgd's entry with each view's (xp_view_of_pgd), so it needs no mm at all.
 *
 * Locking:
 * - xp_views_lock (mutex) serialises creating, changing and destroying views
 *   and everything in pgtable.c, hook.c and xol.c; process-context readers
 *   (peek, walk, dumps, the sweeper) take it too.
 * - xp_views is an RCU list: the trap handler and the fork/exec tracepoints
 *   walk it without the mutex; views are freed after synchronize_rcu().
 * - view->lock (spinlock) protects the member list and ->dying; the fork and
 *   exec tracepoints take it in atomic context. A member is added only while
 *   the view is not dying, so teardown restores every member it must.
 *
 * Teardown is three steps, and xp_views_lock is free in the grace periods
 * between them: under load RCU-tasks waits seconds, even minutes, for every
 * task preempted off a CPU, and held across them the mutex kept every
 * command, the sweeper, the seal and every other view waiting behind one.
 * 1. Close (xp_view_close(), under the mutex): the user hooks give their
 *    bytes back, every kernel hook is disarmed and every CPU serialised.
 *    The view is ->closing: a lookup by pid or hook id refuses it, and
 *    what would arm, audit, sweep or close it again passes it by, as do
 *    forks and execs (their new address spaces stay on the shared tables,
 *    or join the process's next view); what keeps its page tables right
 *    (module space, shared PMD entries, the table check) still covers it,
 *    as its members still run on its chain.
 * 2. Detach (the teardown work, under the mutex, after RCU-tasks where a
 *    jump was live: tasks preempted in a jump's entry or slot have left
 *    them): the chain follows the kernel's tables once more, the jump
 *    entries go back, the chain maps the shared frames again, every
 *    member goes back on the shared entry, the view leaves xp_views for
 *    xp_views_torn (its sums stay readable there), its global bits go.
 * 3. Free (under the mutex again, after RCU, and the RCU-tasks and RCU
 *    callbacks that retire the hooks deleted before): hooks, buffers,
 *    members, chain; then the end is announced. A module going waits for
 *    views in between (xp_views_settle_torn()): their tracepoint hooks
 *    hold its text.
 * The work takes every view closed meanwhile in one round (one set of
 * grace periods). Commands that must answer after the view is gone (view
 * del, an owner's release, rmmod) wait for it with the mutex dropped
 * (xp_views_settle()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <asm/tlbflush.h>
#include <net/netlink.h>
#include "xprobes.h"
#include "uhooks/uhook.h"

DEFINE_MUTEX(xp_views_lock);
LIST_HEAD(xp_views);		/* RCU list; written under xp_views_lock */
unsigned int xp_nr_views;	/* under xp_views_lock */

/*
 * Point @mm's entry for the image at @val. What set_pgd() does for a kernel
 * half entry on bare metal and KVM, without its PTI hook: that only mirrors
 * user half entries into the user copy, and it is not exported to modules
 * on kernels without PARAVIRT_XXL (Debian's goes through the pv op).
 */
static void set_image_slot(struct mm_struct *mm, pgd_t val)
{
	WRITE_ONCE(*xp_image_slot(mm->pgd), val);
}

/* Any context, under RCU: the view whose chain the page tables at @pgd carry. */
struct xp_view *xp_view_of_pgd(pgd_t *pgd)
{
	pgd_t e = READ_ONCE(*xp_image_slot(pgd));
	struct xp_view *v;

	if (pgd_val(e) == pgd_val(xp_k.image_pgd))
		return NULL;		/* the shared kernel half: not traced */
	list_for_each_entry_rcu(v, &xp_views, node)
		if (pgd_val(v->new_pgd) == pgd_val(e))
			return v;
	return NULL;
}
NOKPROBE_SYMBOL(xp_view_of_pgd);

struct xp_view *xp_view_of_mm(struct mm_struct *mm)
{
	return xp_view_of_pgd(mm->pgd);
}

/*
 * The view of process @nr (caller's pid namespace), or with a message
 * ERR_PTR(-ESRCH) (no such process), -ENOENT (none, or its view is being
 * torn down) or -EAGAIN: it is a member of a view and between
 * exec_mmap() and sched_process_exec, where its new mm joins; the caller
 * asks again in a moment (a hook added, or a view ended, by pid while the
 * process is there: a cgroup's poll met one, 2026-12-04).
 */
struct xp_view *xp_view_find_pid(u32 nr, struct netlink_ext_ack *extack)
{
	struct task_struct *task = xp_get_task(nr, extack);
	struct xp_view *v = NULL, *w;
	bool execing = false;

	lockdep_assert_held(&xp_views_lock);
	if (!task)
		return ERR_PTR(-ESRCH);
	task_lock(task);
	if (task->mm)
		v = xp_view_of_mm(task->mm);
	task_unlock(task);
	if (v && v->closing) {
		put_task_struct(task);
		NL_SET_ERR_MSG_FMT(extack, "pid %u's kernel view is being torn down", nr);
		return ERR_PTR(-ENOENT);
	}
	/*
	 * In execve, its old mm a member (the view's root, or a process that
	 * joined it): between exec_mmap() and sched_process_exec.
	 */
	if (!v && task->in_execve)
		list_for_each_entry(w, &xp_views, node)
			execing |= !w->closing && xp_view_has_process(w, task_tgid(task), NULL);
	put_task_struct(task);
	if (v)
		return v;
	if (execing) {
		NL_SET_ERR_MSG_FMT(extack, "pid %u is in exec; its view follows it: try again", nr);
		return ERR_PTR(-EAGAIN);
	}
	NL_SET_ERR_MSG_FMT(extack, "pid %u has no kernel view (xprobectl view add %u)", nr, nr);
	return ERR_PTR(-ENOENT);
}

/*
 * Make @mm run on @v's chain, on behalf of process @tgid. Any context
 * (without __GFP_DIRECT_RECLAIM in @gfp, the member comes from mpool.c);
 * the caller flushes TLBs where @mm may already be loaded. Fails once the
 * view is being destroyed.
 */
int xp_member_add(struct xp_view *v, struct mm_struct *mm, struct pid *tgid, gfp_t gfp)
{
	struct xp_member *m = xp_member_get(gfp);

	if (!m)
		return -ENOMEM;
	pgdval_t was = pgd_val(v->orig_pgd);

	raw_spin_lock(&v->lock);
	if (v->dying) {
		raw_spin_unlock(&v->lock);
		xp_member_put_unused(m, gfp);
		return -ESRCH;
	}
	/*
	 * An address space runs on one view at most: take the slot only from
	 * the shared entry (or from this view's, a vfork child's mm that is
	 * already its parent's). A child given a view of its own before its
	 * fork was followed, say, stays on that one.
	 */
	if (!try_cmpxchg(&xp_image_slot(mm->pgd)->pgd, &was, pgd_val(v->new_pgd)) &&
	    was != pgd_val(v->new_pgd)) {
		raw_spin_unlock(&v->lock);
		xp_member_put_unused(m, gfp);
		return -EBUSY;
	}
	mmgrab(mm);		/* keeps mm->pgd, our anchor, until we detach */
	m->mm = mm;
	m->tgid = get_pid(tgid);
	list_add_tail(&m->node, &v->members);
	v->nr_members++;
	m->gen_before = atomic64_read(&mm->context.tlb_gen);
	/*
	 * A CPU that ran @mm before keeps its translations under the mm's PCID,
	 * and switch_mm_irqs_off() reuses them without a flush as long as the
	 * mm's TLB generation has not moved: move it (as flush_tlb_mm_range()
	 * does), so every CPU flushes before it runs @mm on the new entry. A
	 * full barrier, after the entry is written. The caller flushes the CPUs
	 * @mm is running on now. (inc_mm_tlb_gen() is hidden from modules; this
	 * is all it does.)
	 */
	m->gen_joined = atomic64_inc_return(&mm->context.tlb_gen);
	raw_spin_unlock(&v->lock);
	atomic64_add(sizeof(*m), &xp_mem_bytes);
	return 0;
}

static void free_member(struct xp_member *m)
{
	mmdrop(m->mm);
	put_pid(m->tgid);
	kfree(m);
	atomic64_sub(sizeof(*m), &xp_mem_bytes);
}

/*
 * Is process @tgid inside execve()? exec_mmap() drops the old mm's last user
 * well before the sched_process_exec tracepoint lets the new mm join (the
 * binary is loaded in between): reaping the old member in that gap would
 * leave the process outside its view, or end the view. The flag covers the
 * whole of bprm_execve(), and after de_thread() the thread in execve is the
 * group leader.
 */
static bool in_exec(struct pid *tgid)
{
	struct task_struct *t;
	bool busy;

	rcu_read_lock();
	t = pid_task(tgid, PIDTYPE_TGID);
	busy = t && t->in_execve;	/* a bit-field: a racy read is fine here */
	rcu_read_unlock();
	return busy;
}

/*
 * Detach every member whose address space is dead (no users left: the
 * processes exited or exec'd away), unless its process is still in execve.
 * Returns how many are left. The caller holds xp_views_lock.
 */
unsigned int xp_view_reap_members(struct xp_view *v)
{
	struct xp_member *m, *n;
	unsigned int left;
	LIST_HEAD(dead);

	lockdep_assert_held(&xp_views_lock);
	raw_spin_lock(&v->lock);
	list_for_each_entry_safe(m, n, &v->members, node) {
		if (atomic_read(&m->mm->mm_users) || in_exec(m->tgid))
			continue;
		set_image_slot(m->mm, v->orig_pgd);
		list_move(&m->node, &dead);
		v->nr_members--;
	}
	left = v->nr_members;
	raw_spin_unlock(&v->lock);
	if (list_empty(&dead))
		return left;
	/* Lazy-TLB CPUs may still run on a dead mm's pgd: shared tables now. */
	xp_flush_all();
	list_for_each_entry_safe(m, n, &dead, node)
		free_member(m);
	return left;
}

/* Does process @tgid belong to @v (under another mm than @not)? */
bool xp_view_has_process(struct xp_view *v, struct pid *tgid, struct mm_struct *not)
{
	struct xp_member *m;
	bool found = false;

	raw_spin_lock(&v->lock);
	list_for_each_entry(m, &v->members, node) {
		if (m->tgid == tgid && m->mm != not) {
			found = true;
			break;
		}
	}
	raw_spin_unlock(&v->lock);
	return found;
}

static void free_view(struct xp_view *v)
{
	if (v->owner_sk)
		sock_put(v->owner_sk);
	xp_chain_free(v);
	put_pid(v->root);
	kfree(v->ended);
	kfree(v);
	atomic64_sub(sizeof(*v), &xp_mem_bytes);
}

struct xp_view *xp_view_create(u32 nr, u32 flags, struct sock *owner_sk, u32 owner,
			       struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct xp_view *v;
	const char *why;
	bool raced;
	int err;

	lockdep_assert_held(&xp_views_lock);
	if (xp_k.unsupported) {
		xp_set_msg(extack, xp_k.unsupported);
		return ERR_PTR(-EOPNOTSUPP);
	}
	why = xp_kprobes_broken();
	if (why) {
		xp_set_msg(extack, why);
		return ERR_PTR(-EOPNOTSUPP);
	}
	task = xp_get_task(nr, extack);
	if (!task)
		return ERR_PTR(-ESRCH);
	if (is_global_init(task)) {
		put_task_struct(task);
		NL_SET_ERR_MSG(extack, "refusing to trace init (pid 1)");
		return ERR_PTR(-EPERM);
	}
	mm = get_task_mm(task);
	if (!mm) {
		put_task_struct(task);
		NL_SET_ERR_MSG_FMT(extack, "pid %u has no user address space (kernel thread or exiting)",
				   nr);
		return ERR_PTR(-ESRCH);
	}
	/*
	 * Between exec_mmap() and sched_process_exec a process that runs on a
	 * view is on none (its new mm joins at the tracepoint): a view made
	 * then would be its second. Read after get_task_mm(): exec sets the
	 * flag before exec_mmap() switches the mm under task_lock(), which
	 * get_task_mm() took, so a new mm comes with the flag seen. The
	 * caller asks again in a moment.
	 */
	if (task->in_execve) {	/* a bit-field: read under no lock of its own */
		NL_SET_ERR_MSG_FMT(extack, "pid %u is in execve: try again", nr);
		err = -EAGAIN;
		goto out;
	}
	/*
	 * A child not yet woken: the fork tracepoint may still be about to
	 * put it on its parent's view (it runs before wake_up_new_task()).
	 */
	if (READ_ONCE(task->__state) == TASK_NEW) {
		NL_SET_ERR_MSG_FMT(extack, "pid %u is being forked: try again", nr);
		err = -EAGAIN;
		goto out;
	}
	v = xp_view_of_mm(mm);
	if (v && v->closing) {
		NL_SET_ERR_MSG_FMT(extack, "pid %u's last view is being torn down: try again", nr);
		err = -EINPROGRESS;	/* the caller may wait for it: xp_views_settle() */
		goto out;
	}
	err = -EEXIST;
	if (v) {
		NL_SET_ERR_MSG_FMT(extack, "pid %u already has a kernel view", nr);
		goto out;
	}
	if (pgd_val(*xp_image_slot(mm->pgd)) != pgd_val(xp_k.image_pgd)) {
		NL_SET_ERR_MSG(extack, "unexpected page-table layout for the kernel image");
		err = -EINVAL;
		goto out;
	}

	err = -ENOMEM;
	xp_member_pool_fill();	/* for the forks and execs it will follow */
	v = kzalloc(sizeof(*v), GFP_KERNEL_ACCOUNT);
	if (!v)
		goto out;
	atomic64_add(sizeof(*v), &xp_mem_bytes);
	raw_spin_lock_init(&v->lock);
	INIT_LIST_HEAD(&v->members);
	INIT_LIST_HEAD(&v->regions);
	INIT_LIST_HEAD(&v->mregions);
	INIT_LIST_HEAD(&v->mnode);
	INIT_LIST_HEAD(&v->close_node);
	INIT_LIST_HEAD(&v->tpages);
	INIT_LIST_HEAD(&v->hook_list);
	INIT_LIST_HEAD(&v->tp_hooks);
	hash_init(v->hooks);
	v->flags = flags;
	if (!(flags & XPROBES_F_PERSIST) && owner) {
		v->owner = owner;
		v->owner_sk = owner_sk;
		if (owner_sk)
			sock_hold(owner_sk);	/* its identity: see lifecycle.c */
	}
	v->root = get_task_pid(task, PIDTYPE_TGID);
	v->root_nr = nr;
	v->orig_pgd = xp_k.image_pgd;

	err = xp_chain_build(v, extack);
	if (err) {
		free_view(v);
		goto out;
	}
	/*
	 * Published, and forks followed, before the process joins: a fork it
	 * makes once it runs on the chain finds the view (lifecycle.c).
	 */
	list_add_tail_rcu(&v->node, &xp_views);
	if (!xp_nr_views++)
		xp_lifecycle_start();
	err = xp_member_add(v, mm, v->root, GFP_KERNEL_ACCOUNT);
	if (err) {
		list_del_rcu(&v->node);
		if (!--xp_nr_views)
			xp_lifecycle_stop();
		synchronize_rcu();
		free_view(v);
		goto out;
	}
	/*
	 * An execve that began after the check above and reached its
	 * tracepoint before the join left the process on a new mm this view
	 * never saw: undone, asked again.
	 */
	task_lock(task);
	raced = task->mm != mm;
	task_unlock(task);
	if (raced) {
		xp_view_close(v, NULL);
		NL_SET_ERR_MSG_FMT(extack, "pid %u went through execve meanwhile: try again", nr);
		err = -EAGAIN;
		goto out;
	}
	xp_flush_all();
	xp_tables_check(NULL);
	mmput(mm);
	put_task_struct(task);
	return v;
out:
	mmput(mm);
	put_task_struct(task);
	return ERR_PTR(err);
}

static LIST_HEAD(closed_views);	/* ->close_node, under xp_views_lock */
/* Detached, not yet freed (->close_node, under xp_views_lock): urec.c reads their sums. */
LIST_HEAD(xp_views_torn);
static void teardown(struct work_struct *work);
static DECLARE_WORK(teardown_work, teardown);

/*
 * Step 1: stop @v and hand it to the teardown work. Under xp_views_lock.
 * @reason, when not NULL, is announced to listeners of the events group
 * once the view is gone (a view that ended on its own, not one deleted on
 * request). A view already closing is left as it is.
 */
void xp_view_close(struct xp_view *v, const char *reason)
{
	lockdep_assert_held(&xp_views_lock);
	if (v->closing)
		return;

	/* Its processes' user functions get their own bytes back (uhook.c). */
	xp_uhooks_view_gone(v);
	/*
	 * Then disarm every hook and serialise every CPU: when that returns, no
	 * CPU is in a trap or an xol slot of this view (both run with interrupts
	 * off, the sync is an IPI) and none can enter one. Unmapping first would
	 * let a CPU already in the trap handler return into a slot that is gone.
	 */
	xp_hooks_disarm_all(v);
	xp_sync_cores();
	WRITE_ONCE(v->closing, true);	/* the fork and exec tracepoints read it */
	v->end_reason = reason;
	list_add_tail(&v->close_node, &closed_views);
	queue_work(system_unbound_wq, &teardown_work);
}

/*
 * Step 2, under xp_views_lock: make the chain map what the shared tables
 * map, page size by page size (pgtable.c), and put every member back on the
 * shared tables; no new member can join once ->dying is set. After the
 * flush no CPU walks the chain. Only then may the trap handler stop finding
 * the view.
 */
static void view_detach(struct xp_view *v)
{
	struct xp_member *m;
	struct xp_hook *h;

	/*
	 * What the kernel changed in its tables since the sweeper's last look
	 * (closing views it passes by): the members go back to the shared entry
	 * without a page-size change. Then the jump entries go back (every task
	 * left them: RCU-tasks), for hooks other views add meanwhile.
	 */
	xp_chain_resync(v);
	list_for_each_entry(h, &v->hook_list, vnode)
		xp_jentry_put(h);
	xp_chain_unmap(v);
	raw_spin_lock(&v->lock);
	v->dying = true;
	list_for_each_entry(m, &v->members, node)
		set_image_slot(m->mm, v->orig_pgd);
	raw_spin_unlock(&v->lock);
	xp_flush_all();
	list_del_rcu(&v->node);
	xp_chain_release_globals(v);
	if (!--xp_nr_views)
		xp_lifecycle_stop();
}

/* Step 3, under xp_views_lock: nothing finds @v or runs on it any more. */
static void view_free(struct xp_view *v)
{
	const char *reason = v->end_reason;
	struct xp_member *m, *n;
	u32 root_nr = v->root_nr;

	xp_hooks_free_all(v);
	xp_urecbuf_free(v);
	xp_unwinds_free(v);
	list_for_each_entry_safe(m, n, &v->members, node)
		free_member(m);
	free_view(v);
	if (reason)
		xp_netlink_view_ended(root_nr, reason);
}

static void teardown(struct work_struct *work)
{
	struct xp_view *v, *n;
	bool jumped = false;
	LIST_HEAD(batch);

	mutex_lock(&xp_views_lock);
	list_splice_init(&closed_views, &batch);
	mutex_unlock(&xp_views_lock);
	if (list_empty(&batch))
		return;
	list_for_each_entry(v, &batch, close_node)
		jumped |= v->jumped;
	/*
	 * The views' own tasks may be preempted in a jump hook's entry or slot
	 * with interrupts on (jump.c): wait until they are out, while the
	 * slots are still mapped.
	 */
	if (jumped)
		xp_calls_quiesce();

	mutex_lock(&xp_views_lock);
	list_for_each_entry(v, &batch, close_node)
		view_detach(v);
	list_splice_init(&batch, &xp_views_torn);
	xp_tables_check(NULL);
	mutex_unlock(&xp_views_lock);

	/* Trap handlers and tracepoints that found the views before are done. */
	synchronize_rcu();
	/* Jump hooks deleted earlier are retired by callbacks that use the view. */
	if (jumped) {
		rcu_barrier_tasks();
		rcu_barrier();
	}

	mutex_lock(&xp_views_lock);
	list_for_each_entry_safe(v, n, &xp_views_torn, close_node)
		view_free(v);
	INIT_LIST_HEAD(&xp_views_torn);
	mutex_unlock(&xp_views_lock);
}

/*
 * Under xp_views_lock: wait until no view is between detach and free (a
 * module going must not leave one holding a hook in its text). Drops the
 * lock while it waits.
 */
void xp_views_settle_torn(void)
{
	lockdep_assert_held(&xp_views_lock);
	while (!list_empty(&xp_views_torn)) {
		mutex_unlock(&xp_views_lock);
		xp_views_settle();
		mutex_lock(&xp_views_lock);
	}
}

/*
 * Wait until every view closed so far is gone. Not under xp_views_lock
 * (the teardown takes it); not from the teardown work.
 */
void xp_views_settle(void)
{
	lockdep_assert_not_held(&xp_views_lock);
	flush_work(&teardown_work);
}

/* Close @v and wait until it is gone (KUnit). Not under xp_views_lock. */
void xp_view_destroy(struct xp_view *v)
{
	mutex_lock(&xp_views_lock);
	xp_view_close(v, NULL);
	mutex_unlock(&xp_views_lock);
	xp_views_settle();
}

void xp_views_destroy_all(void)
{
	struct xp_view *v, *n;

	mutex_lock(&xp_views_lock);
	list_for_each_entry_safe(v, n, &xp_views, node)
		xp_view_close(v, NULL);
	mutex_unlock(&xp_views_lock);
	xp_views_settle();
}
