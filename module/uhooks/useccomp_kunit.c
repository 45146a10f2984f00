// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: useccomp.c's passes and its reading of a thread's saved
 * registers (included at its end under XPROBES_KUNIT).
 * A thread whose seal work is done gets one pass, which its restarted
 * call takes, once; any other thread's look finds none. No selftest can
 * make another process fill the table while a child installs its filter
 * (the reason passes are not a fixed table): the structure is checked
 * here.
 */
#include <kunit/test.h>

/*
 * Passes keyed by @task with @start, anywhere (not the global count: the
 * kprobes are live); @drop: take them out.
 */
static unsigned int passes_of(struct task_struct *task, u64 start, bool drop)
{
	struct hlist_node *tmp;
	unsigned int n = 0, bkt;
	unsigned long flags;
	struct pass *p;
	HLIST_HEAD(gone);

	raw_spin_lock_irqsave(&passes_lock, flags);
	hash_for_each_safe(passes, bkt, tmp, p, node) {
		if (p->task != task || p->start != start)
			continue;
		n++;
		if (drop) {
			hash_del(&p->node);
			hlist_add_head(&p->node, &gone);
			atomic_dec(&npasses);
		}
	}
	raw_spin_unlock_irqrestore(&passes_lock, flags);
	hlist_for_each_entry_safe(p, tmp, &gone, node)
		kfree(p);
	return n;
}

static void plant(struct kunit *test, struct task_struct *task, u64 start, unsigned long at)
{
	struct pass *p = kzalloc(sizeof(*p), GFP_KERNEL);
	unsigned long flags;

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->task = task;
	p->start = start;
	p->at = at;
	raw_spin_lock_irqsave(&passes_lock, flags);
	hash_add(passes, &p->node, (unsigned long)current);	/* current's bucket */
	atomic_inc(&npasses);
	raw_spin_unlock_irqrestore(&passes_lock, flags);
}

static void useccomp_pass_once(struct kunit *test)
{
	u64 me = current->start_time;

	KUNIT_EXPECT_FALSE(test, take_pass());
	give_pass();
	give_pass();		/* one per thread: the second replaces the first */
	KUNIT_EXPECT_EQ(test, passes_of(current, me, false), 1U);
	KUNIT_EXPECT_TRUE(test, take_pass());
	KUNIT_EXPECT_FALSE(test, take_pass());
	KUNIT_EXPECT_EQ(test, passes_of(current, me, false), 0U);
}

static void useccomp_pass_not_anothers(struct kunit *test)
{
	struct task_struct *other = (struct task_struct *)((unsigned long)current + 64);
	u64 me = current->start_time;

	/* this thread's pointer with another start: a task that reused it */
	plant(test, current, me + 1, jiffies);
	KUNIT_EXPECT_FALSE(test, take_pass());
	KUNIT_EXPECT_EQ(test, passes_of(current, me + 1, false), 1U);
	/* another task's, in the same bucket: one fresh, one 2 s old */
	plant(test, other, 7, jiffies);
	plant(test, other, 8, jiffies - 2 * HZ);
	give_pass();		/* drops this pointer's and the old one, keeps the fresh */
	KUNIT_EXPECT_EQ(test, passes_of(current, me + 1, false), 0U);
	KUNIT_EXPECT_EQ(test, passes_of(current, me, false), 1U);
	KUNIT_EXPECT_EQ(test, passes_of(other, 7, false), 1U);
	KUNIT_EXPECT_EQ(test, passes_of(other, 8, false), 0U);
	KUNIT_EXPECT_TRUE(test, take_pass());
	KUNIT_EXPECT_FALSE(test, take_pass());
	KUNIT_EXPECT_EQ(test, passes_of(other, 7, true), 1U);	/* and out */
}

/* The calls installing() tells apart, by every way in (selftest 49 makes one: sc-late). */
static void useccomp_installing_calls(struct kunit *test)
{
	static const struct {
		unsigned long nr, a0, a1;
		enum xp_filtered want;
	} cases[] = {
		{ __NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, XP_INSTALLING_SECCOMP },
		{ __NR_seccomp, SECCOMP_SET_MODE_STRICT, 0, XP_INSTALLING_SECCOMP },
		{ __NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, XP_UNFILTERED },
		{ __NR_seccomp | __X32_SYSCALL_BIT, SECCOMP_SET_MODE_FILTER, 0, XP_INSTALLING_SECCOMP },
		{ __NR_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, XP_INSTALLING_SECCOMP },
		{ __NR_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		  XP_INSTALLING_DISPATCH },
		{ __NR_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, XP_UNFILTERED },
		{ __NR_prctl, PR_SET_NAME, 0, XP_UNFILTERED },
		{ 0, SECCOMP_SET_MODE_FILTER, 0, XP_UNFILTERED },	/* read() */
		{ -1UL, SECCOMP_SET_MODE_FILTER, 0, XP_UNFILTERED },	/* an interrupt */
		/* eax is the number, edi the op: the kernel ignores the upper halves */
		{ 0xffffffff00000000UL | __NR_seccomp, SECCOMP_SET_MODE_FILTER, 0,
		  XP_INSTALLING_SECCOMP },
		{ __NR_seccomp, 0x100000000UL | SECCOMP_SET_MODE_FILTER, 0, XP_INSTALLING_SECCOMP },
		{ __NR_prctl, 0x100000000UL | PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		  XP_INSTALLING_DISPATCH },
		/* dispatch's mode is an unsigned long: ON with an upper bit is not ON */
		{ __NR_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0x100000000UL | PR_SYS_DISPATCH_ON,
		  XP_UNFILTERED },
	};
	struct pt_regs r;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&r, 0, sizeof(r));
		r.orig_ax = cases[i].nr;
		r.di = cases[i].a0;
		r.si = cases[i].a1;
		KUNIT_EXPECT_EQ_MSG(test, installing(&r), cases[i].want, "case %u", i);
	}
	/* int $0x80: i386's numbers, the arguments in ebx and ecx (di, si ignored) */
	memset(&r, 0, sizeof(r));
	r.orig_ax = __NR_ia32_seccomp;
	r.bx = SECCOMP_SET_MODE_FILTER;
	r.di = SECCOMP_GET_ACTION_AVAIL;
	KUNIT_EXPECT_EQ(test, installing(&r), XP_INSTALLING_SECCOMP);
	r.orig_ax = __NR_ia32_prctl;
	r.bx = PR_SET_SYSCALL_USER_DISPATCH;
	r.cx = PR_SYS_DISPATCH_ON;
	KUNIT_EXPECT_EQ(test, installing(&r), XP_INSTALLING_DISPATCH);
	r.bx = 0xffffffff00000000UL | PR_SET_SECCOMP;	/* a 32-bit register's upper half */
	KUNIT_EXPECT_EQ(test, installing(&r), XP_INSTALLING_SECCOMP);
	/* a KUnit kthread has no mm: no task runs it, no filter, no call */
	KUNIT_EXPECT_EQ(test, xp_useccomp_state(current->mm), XP_UNFILTERED);
}

static struct kunit_case useccomp_cases[] = {
	KUNIT_CASE(useccomp_pass_once),
	KUNIT_CASE(useccomp_pass_not_anothers),
	KUNIT_CASE(useccomp_installing_calls),
	{}
};

static struct kunit_suite useccomp_suite = {
	.name = "xprobes_useccomp",
	.test_cases = useccomp_cases,
};

kunit_test_suites(&useccomp_suite);
