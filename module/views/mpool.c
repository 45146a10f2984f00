// SPDX-License-Identifier: GPL-2.0
/*
 * Members at hand for the fork and exec tracepoints.
 *
 * Mechanism: the sched_process_fork and sched_process_exec tracepoints
 * (lifecycle.c) make a child, or an exec's new mm, a member of its view
 * before it runs an instruction. They run with preemption off, where
 * PREEMPT_RT's allocator may not be called at all (its locks sleep), so
 * they take a member from this pool. Without PREEMPT_RT an emptied pool
 * falls back to GFP_ATOMIC; on it, a fork with no member at hand is not
 * followed: the child runs the shared kernel text, untraced, counted in
 * xp_follow_failures (STATUS says it). So the pool must not run dry.
 *
 * Refill protocol: a thread that takes a member leaves a refill ticket on
 * itself (task work, TWA_RESUME): on its way back to user space, and so
 * before it can fork or exec again, it fills the pool up in process
 * context. Each forking or exec'ing thread thus has one take at most
 * between its tracepoint and its refill, and the pool empties only if more
 * threads than it holds are caught in that window at once (preempted there
 * together). A thread that cannot carry a ticket (a kernel thread, an
 * io_uring worker, one exiting, every ticket out) has a work item refill
 * it instead, as the only refill did until 2026-12-05: on PREEMPT_RT a
 * fork storm outran that worker (selftest 20 on 6.12-rt, 11 of 50
 * processes untraced in one CI run).
 *
 * Tickets are a fixed array: taking one is a bit under a raw lock. Module
 * exit (after the tracepoints are gone) cancels those not yet run (a
 * thread stopped by its tracer at its fork event holds one indefinitely,
 * and so would one whose fork's put_user() waits on a userfaultfd: no
 * ticket is left where the kernel's task_work_cancel() cannot be found),
 * waits for those running, then for every task to leave this file's text
 * (RCU-tasks).
 *
 * Locking: pool_lock and ticket_lock are raw spinlocks, taken with
 * preemption off in the tracepoints and with interrupts on (nothing takes
 * them in interrupt context).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "xprobes.h"
#include "compat.h"
#include "uhooks/uhook.h"

#define XP_POOL_SIZE	64
#define XP_TICKETS	64

static DEFINE_RAW_SPINLOCK(pool_lock);
static LIST_HEAD(pool);			/* free members, under pool_lock */
static unsigned int pool_n;		/* their number, under pool_lock */

struct refill_ticket {
	struct callback_head work;
	struct task_struct *task;	/* held, for exit's cancel */
};

static struct refill_ticket tickets[XP_TICKETS];
static DECLARE_BITMAP(tickets_busy, XP_TICKETS);
static DEFINE_RAW_SPINLOCK(ticket_lock);	/* a ticket's end against exit's cancel */
static bool tickets_off;		/* module exit: no more are handed out */
static bool tickets_used;		/* since load: exit waits for RCU-tasks */

void xp_member_pool_fill(void)
{
	struct xp_member *m;

	while (READ_ONCE(pool_n) < XP_POOL_SIZE) {
		m = kzalloc(sizeof(*m), GFP_KERNEL);
		if (!m)
			return;
		raw_spin_lock(&pool_lock);
		list_add(&m->node, &pool);
		WRITE_ONCE(pool_n, pool_n + 1);
		raw_spin_unlock(&pool_lock);
	}
}

unsigned int xp_member_pool_count(void)
{
	return READ_ONCE(pool_n);
}

static void pool_refill(struct work_struct *work)
{
	xp_member_pool_fill();
}
static DECLARE_WORK(pool_work, pool_refill);

static void ticket_free(struct refill_ticket *t)
{
	struct task_struct *task = t->task;

	raw_spin_lock(&ticket_lock);
	t->task = NULL;
	__clear_bit(t - tickets, tickets_busy);
	raw_spin_unlock(&ticket_lock);
	put_task_struct(task);
}

static void ticket_run(struct callback_head *cb)
{
	struct refill_ticket *t = container_of(cb, struct refill_ticket, work);

	xp_member_pool_fill();
	ticket_free(t);
}

/* Have current refill the pool before it returns to user space; false if it cannot. */
static bool ticket_leave(void)
{
	struct refill_ticket *t = NULL;
	unsigned int i;

	/* and only where exit can take a ticket back from a thread that never runs it */
	if ((current->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER)) ||
	    !xp_task_work_can_cancel())
		return false;
	raw_spin_lock(&ticket_lock);
	i = find_first_zero_bit(tickets_busy, XP_TICKETS);
	if (!tickets_off && i < XP_TICKETS) {
		__set_bit(i, tickets_busy);
		t = &tickets[i];
		t->task = get_task_struct(current);
	}
	raw_spin_unlock(&ticket_lock);
	if (!t)
		return false;
	WRITE_ONCE(tickets_used, true);
	init_task_work(&t->work, ticket_run);
	if (!task_work_add(current, &t->work, XP_TWA_RESUME_ATOMIC))
		return true;
	ticket_free(t);		/* it exits */
	return false;
}

/* A zeroed member: allocated where @gfp may block, else from the pool. */
struct xp_member *xp_member_get(gfp_t gfp)
{
	struct xp_member *m;

	if (gfpflags_allow_blocking(gfp))
		return kzalloc(sizeof(*m), gfp);
	raw_spin_lock(&pool_lock);
	m = list_first_entry_or_null(&pool, struct xp_member, node);
	if (m) {
		list_del(&m->node);
		WRITE_ONCE(pool_n, pool_n - 1);
	}
	raw_spin_unlock(&pool_lock);
	if (!ticket_leave())
		schedule_work(&pool_work);	/* raw locks only: fine here on RT */
	if (m)
		memset(m, 0, sizeof(*m));
	else if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		m = kzalloc(sizeof(*m), gfp);	/* an emptied pool: as before it */
	return m;
}

/* A member never used: back to the pool where @gfp may not block (nor free). */
void xp_member_put_unused(struct xp_member *m, gfp_t gfp)
{
	if (gfpflags_allow_blocking(gfp)) {
		kfree(m);
		return;
	}
	raw_spin_lock(&pool_lock);
	list_add(&m->node, &pool);
	WRITE_ONCE(pool_n, pool_n + 1);
	raw_spin_unlock(&pool_lock);
}

/* Module exit, after the tracepoints are gone: nothing takes from the pool any more. */
void xp_member_pool_drain(void)
{
	struct xp_member *m, *n;
	bool gone;
	int i;

	raw_spin_lock(&ticket_lock);
	tickets_off = true;
	raw_spin_unlock(&ticket_lock);
	for (i = 0; i < XP_TICKETS; i++) {
		/* held while busy: a ticket lets its task go after its bit, under the lock */
		raw_spin_lock(&ticket_lock);
		gone = test_bit(i, tickets_busy) && xp_task_work_cancel(tickets[i].task,
									 &tickets[i].work);
		raw_spin_unlock(&ticket_lock);
		if (gone)
			ticket_free(&tickets[i]);
	}
	/* those running fill the pool and end */
	while (!bitmap_empty(tickets_busy, XP_TICKETS))
		msleep(1);
	if (tickets_used)
		synchronize_rcu_tasks();	/* out of ticket_run()'s last instructions */
	cancel_work_sync(&pool_work);
	list_for_each_entry_safe(m, n, &pool, node)
		kfree(m);
	INIT_LIST_HEAD(&pool);
	pool_n = 0;
}
