// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: views (a separate object, built only for the debug kernel: make
 * kunit, XPROBES_KUNIT=1). KUnit runs the suites when the module loads,
 * after xprobes_init(), so they exercise the module's real state: the
 * kernel facts found at load, the shared page tables, kprobes' answers.
 * view.c and pgtable.c's chain and copies, with the hooks, coherence, audit
 * and table checks that act on them (xprobes_view); lifecycle.c's probes,
 * members and owners (xprobes_lifecycle), on the same fixture.
 *
 * The suites need a live user process to build a view for; the harness
 * starts one and names it with kunit_pid=. The tests run in KUnit's kthread
 * and never touch that process's user memory, only the kernel half of its
 * page tables, and they leave it as they found it.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <net/genetlink.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <asm/ibt.h>
#include <asm/text-patching.h>
#include "xprobes.h"

static unsigned int kunit_pid;
module_param(kunit_pid, uint, 0444);
MODULE_PARM_DESC(kunit_pid, "KUnit only: a user process the view tests may build views for");
static unsigned int kunit_pid2;
module_param(kunit_pid2, uint, 0444);
MODULE_PARM_DESC(kunit_pid2, "KUnit only: a second such process (tests with two views)");

/* ---- views: chain construction, entry flags, copy and patch ----------------- */

struct view_ctx {
	struct mm_struct *mm;
	struct mm_struct *other;	/* init's: never traced, always the shared tables */
	s64 mem0;
	unsigned int views0;
};

static struct view_ctx *view_ctx(struct kunit *test)
{
	return test->priv;
}

static int view_init(struct kunit *test)
{
	struct view_ctx *c;
	struct task_struct *t;

	if (!kunit_pid)
		kunit_skip(test, "no kunit_pid= given: the view tests need a user process");
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	t = xp_get_task(kunit_pid, NULL);
	if (!t)
		return -ESRCH;
	c->mm = get_task_mm(t);
	put_task_struct(t);
	if (!c->mm)
		return -ESRCH;
	c->other = xp_get_mm(1, NULL);
	if (!c->other) {
		mmput(c->mm);
		return -ESRCH;
	}
	mutex_lock(&xp_views_lock);
	c->views0 = xp_nr_views;
	mutex_unlock(&xp_views_lock);
	c->mem0 = atomic64_read(&xp_mem_bytes);
	test->priv = c;
	return 0;
}

static void view_exit(struct kunit *test)
{
	struct view_ctx *c = test->priv;
	struct xp_view *v;

	if (!c)
		return;
	mutex_lock(&xp_views_lock);
	v = xp_view_of_mm(c->mm);
	if (v)
		xp_view_close(v, NULL);
	mutex_unlock(&xp_views_lock);
	xp_views_settle();
	mmput(c->mm);
	mmput(c->other);
}

static struct xp_view *make_view(struct kunit *test, u32 flags)
{
	struct xp_view *v;

	mutex_lock(&xp_views_lock);
	v = xp_view_create(kunit_pid, flags, NULL, 0, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, v);
	return v;
}

static u64 slot_of(struct mm_struct *mm)
{
	return pgd_val(*pgd_offset_pgd(mm->pgd, xp_k.stext));
}

static void view_chain_structure(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	unsigned long a = xp_k.stext;
	struct xp_view *v;
	pud_t *shared_puds;
	int i, private = 0;

	KUNIT_ASSERT_EQ(test, slot_of(c->mm), (u64)pgd_val(xp_k.image_pgd));
	v = make_view(test, 0);
	KUNIT_EXPECT_EQ(test, xp_nr_views, c->views0 + 1);
	KUNIT_EXPECT_EQ(test, v->nr_members, 1U);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), v);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->other), NULL);

	/* The process's top-level entry for the image is the view's, same flags. */
	KUNIT_EXPECT_EQ(test, slot_of(c->mm), (u64)pgd_val(v->new_pgd));
	KUNIT_EXPECT_NE(test, (u64)pgd_val(v->new_pgd), (u64)pgd_val(xp_k.image_pgd));
	KUNIT_EXPECT_EQ(test, (u64)pgd_flags(v->new_pgd), (u64)pgd_flags(xp_k.image_pgd));
	KUNIT_EXPECT_EQ(test, v->nr_tables, xp_k.l5 ? 3U : 2U);

	/* Private PUD: a copy of the shared one but for the image's entry. */
	if (xp_k.l5)
		shared_puds = p4d_pgtable(((p4d_t *)pgd_page_vaddr(xp_k.image_pgd))[p4d_index(a)]);
	else
		shared_puds = p4d_pgtable(__p4d(pgd_val(xp_k.image_pgd)));
	for (i = 0; i < PTRS_PER_PUD; i++) {
		if (i == pud_index(a)) {
			KUNIT_EXPECT_EQ(test, (u64)pud_pfn(v->pud[i]), (u64)(__pa(v->pmd) >> PAGE_SHIFT));
			KUNIT_EXPECT_EQ(test, (u64)pud_flags(v->pud[i]),
					(u64)pud_flags(shared_puds[i]));
		} else {
			KUNIT_EXPECT_EQ(test, (u64)pud_val(v->pud[i]), (u64)pud_val(shared_puds[i]));
		}
	}
	/* Private PMD page: identical to the shared one until a hook needs a copy. */
	for (i = 0; i < PTRS_PER_PMD; i++)
		private += pmd_val(v->pmd[i]) != pmd_val(xp_k.image_pmds[i]);
	KUNIT_EXPECT_EQ(test, private, 0);

	xp_view_destroy(v);
	KUNIT_EXPECT_EQ(test, slot_of(c->mm), (u64)pgd_val(xp_k.image_pgd));
	KUNIT_EXPECT_EQ(test, xp_nr_views, c->views0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

static void view_refusals(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_view *v, *again;

	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, PTR_ERR(xp_view_create(1, 0, NULL, 0, NULL)), -EPERM);	/* init */
	KUNIT_EXPECT_EQ(test, PTR_ERR(xp_view_create(2, 0, NULL, 0, NULL)), -ESRCH);	/* kthreadd */
	KUNIT_EXPECT_EQ(test, PTR_ERR(xp_view_create(PID_MAX_LIMIT + 1, 0, NULL, 0, NULL)), -ESRCH);
	mutex_unlock(&xp_views_lock);

	v = make_view(test, 0);
	mutex_lock(&xp_views_lock);
	again = xp_view_create(kunit_pid, 0, NULL, 0, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, PTR_ERR(again), -EEXIST);
	xp_view_destroy(v);
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

static struct xp_hook *add_hook(struct xp_view *v, const char *sym, const u32 *off, u32 flags)
{
	struct xp_hook *h;

	mutex_lock(&xp_views_lock);
	h = xp_hook_add(v, sym, off, 0x1234, flags, NULL);
	mutex_unlock(&xp_views_lock);
	return h;
}

static int del_hook(u32 id)
{
	int err;

	mutex_lock(&xp_views_lock);
	err = xp_hook_del(id, NULL);
	mutex_unlock(&xp_views_lock);
	return err;
}

static void view_copy_and_patch(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_walk_result w, ws;
	unsigned long page, other;
	struct xp_view *v;
	struct xp_hook *h;
	u8 *copy, *orig;
	unsigned int i, diff = 0;

	v = make_view(test, 0);
	h = add_hook(v, "schedule", NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	KUNIT_EXPECT_PTR_EQ(test, xp_hook_at(v, h->addr), h);
	KUNIT_EXPECT_EQ(test, v->nr_hooks, 1U);
	KUNIT_EXPECT_EQ(test, v->nr_pages, 1U);
	KUNIT_EXPECT_EQ(test, v->nr_tables, (xp_k.l5 ? 3U : 2U) + 1 + (h->slot >= 0));
	page = h->addr & PAGE_MASK;

	/* The process sees the copy at the hook's page, 4 KiB, read-only, executable, not global. */
	KUNIT_ASSERT_EQ(test, xp_walk(c->mm->pgd, h->addr, &w), 0);
	KUNIT_EXPECT_EQ(test, w.level, 1);
	KUNIT_EXPECT_EQ(test, (u64)(w.phys & PAGE_MASK), (u64)page_to_phys(h->tpage->copy));
	KUNIT_EXPECT_TRUE(test, w.flags & _PAGE_PRESENT);
	KUNIT_EXPECT_FALSE(test, w.flags & _PAGE_RW);
	KUNIT_EXPECT_FALSE(test, w.flags & _PAGE_NX);
	KUNIT_EXPECT_FALSE(test, w.flags & _PAGE_GLOBAL);
	KUNIT_EXPECT_FALSE(test, w.flags & _PAGE_USER);
	/* Everyone else, and the kernel's own tables, see the shared frame. */
	KUNIT_ASSERT_EQ(test, xp_walk(c->other->pgd, h->addr, &ws), 0);
	KUNIT_EXPECT_EQ(test, (u64)ws.phys, (u64)__pa_symbol(h->addr));
	KUNIT_EXPECT_FALSE(test, ws.flags & _PAGE_GLOBAL);	/* cleared while copies exist */

	/* The copy is the shared page with one int3 at the hook. */
	copy = page_address(h->tpage->copy);
	orig = xp_text(page);
	for (i = 0; i < PAGE_SIZE; i++)
		diff += copy[i] != orig[i];
	KUNIT_EXPECT_EQ(test, diff, 1U);
	KUNIT_EXPECT_EQ(test, copy[offset_in_page(h->addr)], (u8)INT3_INSN_OPCODE);
	KUNIT_EXPECT_NE(test, orig[offset_in_page(h->addr)], (u8)INT3_INSN_OPCODE);
	KUNIT_EXPECT_EQ(test, memcmp(h->orig, orig + offset_in_page(h->addr),
				     min_t(unsigned long, h->insn.len, PAGE_SIZE - offset_in_page(h->addr))),
			0);

	/* A neighbouring page of the same 2 MiB region stays the shared frame. */
	other = page == (h->addr & PMD_MASK) ? page + PAGE_SIZE : page - PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, xp_walk(c->mm->pgd, other, &w), 0);
	KUNIT_EXPECT_EQ(test, (u64)w.phys, (u64)__pa_symbol(other));

	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	KUNIT_EXPECT_EQ(test, v->nr_pages, 0U);
	KUNIT_EXPECT_EQ(test, v->nr_hooks, 0U);
	KUNIT_ASSERT_EQ(test, xp_walk(c->mm->pgd, page, &w), 0);
	KUNIT_EXPECT_EQ(test, (u64)w.phys, (u64)__pa_symbol(page));
	xp_view_destroy(v);
	rcu_barrier();		/* copies are freed after a grace period */
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/* Two hooks on one page share the copy; each int3 lands in it. */
static void view_shared_copy(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_hook *h1, *h2;
	struct xp_insn insn;
	struct xp_view *v;
	u32 off2;

	v = make_view(test, 0);
	h1 = add_hook(v, "schedule", NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h1);
	KUNIT_ASSERT_EQ(test, xp_insn_decode(&insn, h1->orig, XP_INSN_MAX), 0);
	off2 = h1->sym_off + insn.len;
	h2 = add_hook(v, "schedule", &off2, XPROBES_F_TRAP);
	if (IS_ERR(h2)) {
		/* The next instruction may be one kprobes refuses; say which. */
		kunit_info(test, "second hook refused (%ld), single-hook coverage only", PTR_ERR(h2));
	} else if ((h2->addr & PAGE_MASK) == (h1->addr & PAGE_MASK)) {
		KUNIT_EXPECT_PTR_EQ(test, h1->tpage, h2->tpage);
		KUNIT_EXPECT_EQ(test, h1->tpage->users, 2U);
		KUNIT_EXPECT_EQ(test, v->nr_pages, 1U);
		KUNIT_EXPECT_EQ(test, ((u8 *)page_address(h2->tpage->copy))[offset_in_page(h2->addr)],
				(u8)INT3_INSN_OPCODE);
		KUNIT_EXPECT_EQ(test, del_hook(h1->id), 0);
		KUNIT_EXPECT_EQ(test, v->nr_pages, 1U);	/* h2 still needs it */
	}
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

static void view_hook_refusals(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	unsigned long start, size;
	struct xp_hook *h;
	struct xp_view *v;
	u32 off;

	start = xp_sym_lookup("schedule", &size);
	KUNIT_ASSERT_NE(test, start, 0UL);
	v = make_view(test, 0);

	KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "xprobes_no_such_function", NULL, 0)), -ENOENT);
	/* Freed memory after the text (CI's fuzzer found this), init code, data. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "_etext", NULL, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "start_kernel", NULL, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "jiffies_64", NULL, 0)), -EINVAL);
	off = size;
	KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "schedule", &off, 0)), -ERANGE);
	if (is_endbr(*(u32 *)xp_text(start))) {
		off = 0;
		KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "schedule", &off, 0)), -EINVAL);
		off = 1;	/* inside the ENDBR */
		KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "schedule", &off, 0)), -EINVAL);
		off = 4;	/* the fentry site, which ftrace patches */
		KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "schedule", &off, 0)), -EINVAL);
	}
	/* Kprobes' blacklist (noinstr entry code) is honoured. */
	KUNIT_EXPECT_LT(test, PTR_ERR(add_hook(v, "exc_int3", NULL, 0)), 0L);

	h = add_hook(v, "schedule", NULL, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	off = h->sym_off;
	KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "schedule", &off, 0)), -EEXIST);
	off = h->sym_off + 1;	/* not an instruction boundary */
	if (h->insn.len > 1)
		KUNIT_EXPECT_EQ(test, PTR_ERR(add_hook(v, "schedule", &off, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, v->nr_hooks, v->guard ? 2U : 1U);	/* a jump brings the guard */
	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	KUNIT_EXPECT_EQ(test, del_hook(h->id), -ENOENT);
	KUNIT_EXPECT_EQ(test, del_hook(0), -ENOENT);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * A hook on an instruction of 5 bytes or more becomes a jmp to its entry in
 * the copy, and only those 5 bytes differ; turned back into a trap, the copy
 * is the shared page with one int3 again.
 */
static void view_call_hook(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	unsigned int i, diff = 0;
	struct xp_hook *h = NULL;
	struct xp_view *v;
	u8 *copy, *orig;
	u32 off;
	s32 rel;

	v = make_view(test, 0);
	for (off = 4; off < 96 && !h; off++) {
		h = add_hook(v, "schedule", &off, 0);
		if (IS_ERR(h) || !h->call_ok || h->ninsn > 1) {
			if (!IS_ERR(h))
				KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
			h = NULL;
		}
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, h, "no call-capable instruction in schedule's first 96 bytes");
	KUNIT_EXPECT_GE(test, h->insn.len, 5);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_CALL);
	copy = page_address(h->tpage->copy);
	orig = xp_text(h->addr & PAGE_MASK);
	KUNIT_EXPECT_EQ(test, copy[offset_in_page(h->addr)], (u8)JMP32_INSN_OPCODE);
	memcpy(&rel, copy + offset_in_page(h->addr) + 1, sizeof(rel));
	KUNIT_EXPECT_EQ(test, h->addr + XP_JUMP_SIZE + rel, xp_jentry_addr(h->jentry));
	for (i = 0; i < PAGE_SIZE; i++)
		if (copy[i] != orig[i]) {
			diff++;
			KUNIT_EXPECT_LT(test, i - offset_in_page(h->addr), (unsigned int)CALL_INSN_SIZE);
		}
	KUNIT_EXPECT_LE(test, diff, (unsigned int)CALL_INSN_SIZE);

	mutex_lock(&xp_views_lock);
	xp_calls_disarm(v, h);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	for (diff = 0, i = 0; i < PAGE_SIZE; i++)
		diff += copy[i] != orig[i];
	KUNIT_EXPECT_EQ(test, diff, 1U);
	KUNIT_EXPECT_EQ(test, copy[offset_in_page(h->addr)], (u8)INT3_INSN_OPCODE);

	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * Tests that write into a copy as the kernel would hook __x64_sys_getppid:
 * only a task's own syscalls run it, and the view's process sleeps, so no
 * CPU executes the bytes in between (schedule, say, runs in any kernel
 * thread that borrows the sleeper's tables lazily).
 */
#define XP_QUIET_FN "__x64_sys_getppid"

/* A call hook in XP_QUIET_FN. */
static struct xp_hook *call_hook_quiet(struct kunit *test, struct xp_view *v)
{
	struct xp_hook *h = NULL;
	u32 off;

	for (off = 4; off < 96 && !h; off++) {
		h = add_hook(v, XP_QUIET_FN, &off, 0);
		if (IS_ERR(h) || !h->call_ok || h->ninsn > 1) {
			if (!IS_ERR(h))
				KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
			h = NULL;
		}
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, h, "no call-capable instruction in " XP_QUIET_FN);
	return h;
}

/* A kernel write of @len bytes at @addr, applied to the copies as __text_poke would. */
static void kernel_writes(unsigned long addr, const u8 *src, size_t len)
{
	mutex_lock(xp_k.text_mutex);
	rcu_read_lock();
	xp_mirror_write(addr, src, len, false);
	rcu_read_unlock();
	mutex_unlock(xp_k.text_mutex);
}

/*
 * Defect 6 of issue 16: a plain kernel write of a first byte that is not an
 * int3 (the UP -> SMP switch writes a lock prefix with text_poke()) must not
 * leave the call's displacement behind it: the copy gets the kernel's byte
 * and the instruction's own tail at once. A patcher's int3 keeps the
 * displacement behind it until the next write or audit.
 */
static void view_call_displaced_plain_write(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	u8 lock = 0xf0, int3 = INT3_INSN_OPCODE;
	struct xp_hook *h;
	struct xp_view *v;
	u8 *copy;

	v = make_view(test, 0);
	h = call_hook_quiet(test, v);
	copy = xp_hook_copy(h);
	kernel_writes(h->addr, &lock, 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(h->broken));
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	KUNIT_EXPECT_EQ(test, copy[0], lock);
	KUNIT_EXPECT_EQ(test, memcmp(copy + 1, xp_text(h->addr + 1), CALL_INSN_SIZE - 1), 0);
	KUNIT_EXPECT_FALSE(test, h->tail_ours);
	kernel_writes(h->addr, xp_text(h->addr), 1);	/* the kernel's byte again */
	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);

	/* The patcher's protocol: its int3 first, the displacement stays behind it. */
	h = call_hook_quiet(test, v);
	copy = xp_hook_copy(h);
	kernel_writes(h->addr, &int3, 1);
	KUNIT_EXPECT_EQ(test, copy[0], int3);
	KUNIT_EXPECT_TRUE(test, h->tail_ours);
	/* The patcher finishes: its first byte back, and the audit takes ours away. */
	kernel_writes(h->addr, xp_text(h->addr), 1);
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, xp_audit_all(), 0U);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, memcmp(copy, xp_text(h->addr), CALL_INSN_SIZE), 0);
	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * A closing view (xp_view_close(), view.c): every hook disarmed, the view
 * still its members' (they run on its chain until the teardown work
 * detaches it), but a lookup by pid or by hook id refuses it and the hook
 * dump leaves its hooks out; once the work has run it is gone, memory and
 * all.
 */
static void view_close_refuses(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_hook *h, *n;
	struct xp_view *v;
	u32 id, next = 0;

	v = make_view(test, 0);
	h = add_hook(v, XP_QUIET_FN, NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	id = h->id;
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, xp_hook_copy(h)[0], (u8)INT3_INSN_OPCODE);
	xp_view_close(v, NULL);
	KUNIT_EXPECT_TRUE(test, v->closing);
	KUNIT_EXPECT_EQ(test, xp_hook_copy(h)[0], h->orig[0]);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), v);
	KUNIT_EXPECT_EQ(test, PTR_ERR(xp_view_find_pid(kunit_pid, NULL)), -ENOENT);
	KUNIT_EXPECT_NULL(test, xp_hook_find(id, NULL));
	while ((n = xp_hook_next(&next)))
		KUNIT_EXPECT_PTR_NE(test, n->view, v);
	xp_view_close(v, NULL);		/* again: nothing more */
	KUNIT_EXPECT_EQ(test, xp_nr_views, c->views0 + 1);
	mutex_unlock(&xp_views_lock);
	xp_views_settle();
	KUNIT_EXPECT_NULL(test, xp_view_of_mm(c->mm));
	KUNIT_EXPECT_EQ(test, xp_nr_views, c->views0);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * Defect 10 of issue 16: a copy that differs from the kernel text outside the
 * hooks is not repaired byte by byte under CPUs that may execute it; the
 * audit ends its view.
 */
static void view_audit_ends_diverged(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	unsigned int bad;
	struct xp_hook *h;
	struct xp_view *v;
	u8 *copy;
	int i;

	v = make_view(test, 0);
	h = add_hook(v, XP_QUIET_FN, NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	copy = page_address(h->tpage->copy);
	/* The next instruction's first byte, changed behind the module's back. */
	i = offset_in_page(h->addr) + h->insn.len;
	KUNIT_ASSERT_LT(test, i, (int)PAGE_SIZE);
	mutex_lock(xp_k.text_mutex);
	copy[i] ^= 0xff;
	mutex_unlock(xp_k.text_mutex);
	mutex_lock(&xp_views_lock);
	bad = xp_audit_all();
	KUNIT_EXPECT_EQ(test, bad, 1U);
	KUNIT_EXPECT_TRUE(test, v->closing);
	mutex_unlock(&xp_views_lock);
	xp_views_settle();	/* the teardown work ends it */
	KUNIT_EXPECT_NULL(test, xp_view_of_mm(c->mm));
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * Defect 2 of issue 16: a view made before another view hooks a region must
 * not keep mapping that region with a global 2 MiB leaf.
 */
static void view_tables_two_views(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_view *v, *w;
	struct xp_hook *h;
	struct mm_struct *mm2;
	struct task_struct *t;
	unsigned int idx;

	t = kunit_pid2 ? xp_get_task(kunit_pid2, NULL) : NULL;
	if (!t)
		kunit_skip(test, "no kunit_pid2= given");
	mm2 = get_task_mm(t);
	put_task_struct(t);
	KUNIT_ASSERT_NOT_NULL(test, mm2);
	v = make_view(test, 0);
	mutex_lock(&xp_views_lock);
	w = xp_view_create(kunit_pid2, 0, NULL, 0, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	h = add_hook(w, "schedule", NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	idx = pmd_index(h->addr);
	if (pmd_leaf(v->pmd[idx]))
		KUNIT_EXPECT_FALSE(test, pmd_flags(v->pmd[idx]) & _PAGE_GLOBAL);
	KUNIT_EXPECT_EQ(test, pmd_val(v->pmd[idx]), pmd_val(xp_k.image_pmds[idx]));
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, xp_tables_check(NULL), 0U);
	mutex_unlock(&xp_views_lock);
	xp_view_destroy(w);
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, pmd_val(v->pmd[idx]), pmd_val(xp_k.image_pmds[idx]));
	KUNIT_EXPECT_EQ(test, xp_tables_check(NULL), 0U);
	mutex_unlock(&xp_views_lock);
	mmput(mm2);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * A view's copied tables that no longer mirror the kernel's are seen: an
 * entry the view does not own differs (here an unused PMD slot of the view
 * gets a non-present marker, as if the kernel had changed the shared one).
 */
static void view_stale_tables(struct kunit *test)
{
	struct xp_view *v;
	unsigned int i;

	v = make_view(test, 0);
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_FALSE(test, xp_chain_stale(v));
	for (i = PTRS_PER_PMD; i-- > 0;)
		if (pmd_none(v->pmd[i]) && pmd_none(xp_k.image_pmds[i]))
			break;
	KUNIT_ASSERT_LT(test, i, (unsigned int)PTRS_PER_PMD);
	set_pmd(&v->pmd[i], __pmd(0x1000));	/* not present: nothing can use it */
	KUNIT_EXPECT_TRUE(test, xp_chain_stale(v));
	pmd_clear(&v->pmd[i]);
	KUNIT_EXPECT_FALSE(test, xp_chain_stale(v));
	/* A change it can follow (same page size: nothing mapped either way). */
	set_pmd(&v->pmd[i], __pmd(0x1000));
	KUNIT_EXPECT_TRUE(test, xp_chain_resync(v));
	KUNIT_EXPECT_FALSE(test, xp_chain_stale(v));
	KUNIT_EXPECT_TRUE(test, pmd_none(v->pmd[i]));
	mutex_unlock(&xp_views_lock);
	xp_view_destroy(v);
}

/*
 * A hooked region's PTEs follow the shared leaf only when it changed: the
 * sweeper no longer compares 512 entries five times a second. A PTE changed
 * behind the module's back under an unchanged leaf stays as it is (the
 * tables audit, check_region(), reports it); a page given back makes the
 * next resync compare them all.
 */
static void view_region_resync(struct kunit *test)
{
	struct xp_region *r;
	struct xp_view *v;
	struct xp_hook *h;
	unsigned int i;
	pte_t keep;

	v = make_view(test, 0);
	h = add_hook(v, "schedule", NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	mutex_lock(&xp_views_lock);
	r = xp_region_at(v, pmd_index(h->addr));
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_EXPECT_TRUE(test, xp_chain_resync(v));
	if (!pmd_leaf(READ_ONCE(xp_k.image_pmds[pmd_index(h->addr)]))) {
		mutex_unlock(&xp_views_lock);
		xp_view_destroy(v);
		kunit_skip(test, "the shared region is a PTE table here: compared every time");
	}
	KUNIT_EXPECT_EQ(test, pmd_val(r->seen), pmd_val(READ_ONCE(xp_k.image_pmds[pmd_index(h->addr)])));
	/*
	 * A page of the region the view has no copy of, an attribute changed
	 * that the CPU ignores (the chain is live: the neighbour of schedule's
	 * page holds __cond_resched, NX there would fault) but the compare sees.
	 */
	i = pte_index(h->addr) ^ 1;
	keep = READ_ONCE(r->ptes[i]);
	set_pte(&r->ptes[i], pte_set_flags(keep, _PAGE_SOFTW1));
	KUNIT_EXPECT_TRUE(test, xp_chain_resync(v));
	KUNIT_EXPECT_EQ(test, pte_val(READ_ONCE(r->ptes[i])), pte_val(keep) | _PAGE_SOFTW1);
	/* as when a page is given back: everything is compared again */
	r->seen = __pmd(0);
	KUNIT_EXPECT_TRUE(test, xp_chain_resync(v));
	KUNIT_EXPECT_EQ(test, pte_val(READ_ONCE(r->ptes[i])), pte_val(keep));
	KUNIT_EXPECT_EQ(test, xp_tables_check(NULL), 0U);
	mutex_unlock(&xp_views_lock);
	xp_view_destroy(v);
}

extern void (*xp_test_before_arm)(struct xp_hook *h);

/* What a kprobe armed at the hook's address does to every copy: int3 first. */
static unsigned long kprobe_at;

static void kprobe_arrives(struct xp_hook *h)
{
	u8 int3 = INT3_INSN_OPCODE;

	kprobe_at = h->addr;
	kernel_writes(h->addr, &int3, 1);
}

/*
 * Defect 7 of issue 16: a kernel write (someone's kprobe) to a hook's bytes
 * after its copy was taken and before the hook is armed. The copy check,
 * publication and arming are one text_mutex hold, so the check sees it and
 * the hook is refused (-EAGAIN, "try again"); before, it passed the check,
 * and our int3 and then our call went over the kprobe's int3.
 */
static void view_write_before_arm(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_hook *h;
	struct xp_view *v;
	u32 off = 0;

	v = make_view(test, 0);
	/* A first hook on the page, so the copy exists when the second arrives. */
	h = add_hook(v, XP_QUIET_FN, NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	xp_test_before_arm = kprobe_arrives;
	kprobe_at = 0;
	for (off = h->sym_off + 1; off < 96; off++) {
		struct xp_hook *h2 = add_hook(v, XP_QUIET_FN, &off, 0);

		if (PTR_ERR_OR_ZERO(h2) == -EAGAIN)
			break;
		if (!IS_ERR(h2))
			KUNIT_FAIL(test, "a hook was armed over a kernel write at +%u", off);
	}
	xp_test_before_arm = NULL;
	KUNIT_EXPECT_LT_MSG(test, off, 96U, "no instruction met the injected write");
	KUNIT_EXPECT_EQ(test, v->nr_hooks, 1U);
	if (kprobe_at)		/* the "kprobe" goes: the kernel's byte again */
		kernel_writes(kprobe_at, xp_text(kprobe_at), 1);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/* Peek reads through the process's tables: the copy for it, the text for others. */
static void view_peek(struct kunit *test)
{
	struct xp_hook *h;
	struct xp_view *v;
	u8 b[4];

	v = make_view(test, 0);
	h = add_hook(v, "schedule", NULL, XPROBES_F_TRAP);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	KUNIT_ASSERT_EQ(test, xp_peek(kunit_pid, h->addr, b, 1, NULL), 0);
	KUNIT_EXPECT_EQ(test, b[0], (u8)INT3_INSN_OPCODE);
	KUNIT_ASSERT_EQ(test, xp_peek(1, h->addr, b, 1, NULL), 0);	/* init: no view */
	KUNIT_EXPECT_EQ(test, b[0], h->orig[0]);
	KUNIT_EXPECT_NE(test, xp_peek(kunit_pid, xp_k.etext, b, 4, NULL), 0);
	KUNIT_EXPECT_NE(test, xp_peek(kunit_pid, (unsigned long)&xp_k, b, 4, NULL), 0);
	KUNIT_EXPECT_NE(test, xp_peek(kunit_pid, 0x1000, b, 4, NULL), 0);
	xp_view_destroy(v);
}

/*
 * A hook on XP_QUIET_FN's first instruction with jump hooks on (the module
 * parameter, for the test), pending as an int3 until the optimizer runs;
 * the test is skipped where that instruction makes no jump over several.
 */
static struct xp_hook *jump_hook_quiet(struct kunit *test, struct xp_view *v)
{
	bool was = xp_jump_hooks;
	struct xp_hook *h;

	xp_jump_hooks = true;
	h = add_hook(v, XP_QUIET_FN, NULL, 0);
	xp_jump_hooks = was;
	KUNIT_ASSERT_FALSE(test, IS_ERR(h));
	if (h->ninsn < 2) {
		del_hook(h->id);
		xp_view_destroy(v);
		kunit_skip(test, XP_QUIET_FN "'s first instruction is no jump hook here");
	}
	return h;
}

/*
 * A kernel write at the second instruction a live jump hook covers (someone's
 * kprobe there): the jump's bytes in the copy stay ours until a work item has
 * turned the jump into an int3 and serialised every CPU; then the copy gets
 * the kernel's bytes, first byte last, and the hook is displaced.
 */
static void view_jump_tail_write(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	u8 int3 = INT3_INSN_OPCODE, jmp[XP_JUMP_SIZE];
	struct xp_insn first;
	struct xp_hook *h;
	struct xp_view *v;
	unsigned long at;
	u8 *copy;

	v = make_view(test, 0);
	h = jump_hook_quiet(test, v);
	KUNIT_EXPECT_TRUE(test, h->jump_pending);	/* an int3 until the optimizer ran */
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	xp_jumps_flush();
	if (h->jump_pending)
		xp_jumps_flush();	/* queued again behind a pass already under way */
	KUNIT_EXPECT_FALSE(test, h->jump_pending);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_CALL);
	copy = xp_hook_copy(h);
	memcpy(jmp, copy, sizeof(jmp));
	KUNIT_EXPECT_EQ(test, jmp[0], (u8)JMP32_INSN_OPCODE);
	KUNIT_ASSERT_EQ(test, xp_insn_decode(&first, h->orig, XP_INSN_MAX), 0);
	at = h->addr + first.len;

	kernel_writes(at, &int3, 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(h->broken));
	KUNIT_EXPECT_EQ(test, memcmp(copy, jmp, sizeof(jmp)), 0);	/* kept out */
	xp_conflicts_flush();
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	KUNIT_EXPECT_FALSE(test, h->tail_ours);
	KUNIT_EXPECT_EQ(test, copy[0], h->orig[0]);
	/* The shared text never got the write here: the copy follows it. */
	KUNIT_EXPECT_EQ(test, memcmp(copy, xp_text(h->addr), XP_JUMP_SIZE), 0);
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, xp_audit_all(), 0U);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * 25-view-jumps failed once in make check: a kprobe registered on the second
 * instruction a live jump covers first takes the jump apart
 * (xp_jumps_yield(): an armed int3, the kernel's bytes behind it), then its
 * own int3 marks the hook broken and queues fix_tail_conflicts(), which puts
 * the kernel's first byte back. A periodic audit between the two found the
 * broken hook's int3 and ended the view. That int3 is the hook's, with a
 * handler, until the work item replaces it: no mismatch. Round 1 deletes the
 * hook before the work item runs (a trap hook behind it keeps the page
 * private): the int3 must not outlive its hook.
 */
static void view_jump_yield_audit(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	u8 int3 = INT3_INSN_OPCODE;
	struct xp_hook *h, *keep = NULL;
	struct xp_insn first;
	struct xp_view *v;
	unsigned int bad, round;
	unsigned long at;
	u8 *copy;

	v = make_view(test, 0);
	for (round = 0; round < 2; round++) {
		h = jump_hook_quiet(test, v);
		if (round == 1) {
			u32 off = h->sym_off + h->cover;

			keep = add_hook(v, XP_QUIET_FN, &off, XPROBES_F_TRAP);
			KUNIT_ASSERT_FALSE(test, IS_ERR(keep));
			KUNIT_ASSERT_PTR_EQ(test, keep->tpage, h->tpage);
		}
		xp_jumps_flush();
		if (h->jump_pending)
			xp_jumps_flush();
		KUNIT_ASSERT_EQ(test, READ_ONCE(h->mode), XP_HOOK_CALL);
		copy = xp_hook_copy(h);
		KUNIT_ASSERT_EQ(test, xp_insn_decode(&first, h->orig, XP_INSN_MAX), 0);
		at = h->addr + first.len;

		/* The work item waits for xp_views_lock: the audit runs first. */
		mutex_lock(&xp_views_lock);
		mutex_lock(xp_k.text_mutex);
		xp_jumps_yield(at);
		mutex_unlock(xp_k.text_mutex);
		KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
		KUNIT_EXPECT_EQ(test, copy[0], int3);
		kernel_writes(at, &int3, 1);		/* the kprobe's int3 ... */
		KUNIT_EXPECT_TRUE(test, READ_ONCE(h->broken));
		kernel_writes(at, xp_text(at), 1);	/* ... and the text as it is here */
		bad = xp_audit_all();
		if (!bad && round == 1)
			xp_hook_remove(h);
		mutex_unlock(&xp_views_lock);
		if (bad) {	/* the view and its hooks are gone */
			KUNIT_FAIL(test, "round %u: the audit ended the view over the yielded jump's int3",
				   round);
			rcu_barrier();
			return;
		}
		xp_conflicts_flush();
		KUNIT_EXPECT_EQ(test, copy[0], *(u8 *)xp_text(at - first.len));
		mutex_lock(&xp_views_lock);
		bad = xp_audit_all();
		mutex_unlock(&xp_views_lock);
		if (bad) {
			KUNIT_FAIL(test, "round %u: a stray byte in the copy after the hook", round);
			rcu_barrier();
			return;
		}
		if (round == 0)
			KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	}
	KUNIT_EXPECT_EQ(test, del_hook(keep->id), 0);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * A call hook on an instruction of 5 bytes or more that begins in the last
 * 4 bytes of a page of core text, or NULL: found by decoding, from its
 * function's start, the instruction across each page boundary in turn.
 */
static struct xp_hook *call_hook_across(struct kunit *test, struct xp_view *v)
{
	unsigned long p, tried = 0;
	char *name = kunit_kzalloc(test, KSYM_NAME_LEN, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, name);
	for (p = PAGE_ALIGN(xp_k.stext + 1); p < xp_k.etext && tried < 64; p += PAGE_SIZE) {
		unsigned long off, a;
		struct xp_insn insn;
		struct xp_hook *h;
		u32 o;

		if (xp_sym_name(p, name, KSYM_NAME_LEN, &off) || !off || off > 4096)
			continue;
		insn.len = 0;
		for (a = p - off; a < p; a += insn.len)
			if (xp_insn_decode(&insn, xp_text(a), XP_INSN_MAX))
				break;
		if (a <= p)
			continue;	/* something did not decode, or one begins at p */
		a -= insn.len;		/* the instruction across p */
		if (insn.len < XP_JUMP_SIZE || !xp_jump_crosses(a))
			continue;
		tried++;
		o = a - (p - off);
		h = add_hook(v, name, &o, 0);
		if (!IS_ERR(h) && h->call_ok && h->ninsn == 1)
			return h;
		if (!IS_ERR(h))
			KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	}
	return NULL;
}

/*
 * A call hook whose five bytes cross a page boundary holds the copy of the
 * next page too: its jump's tail is written there, the tables map both
 * copies, and turned back into a trap both pages are the kernel's again but
 * the one int3.
 */
static void view_call_across_pages(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	unsigned int i, diff = 0;
	struct xp_hook *h;
	struct xp_view *v;
	u8 *next, *orig;
	u8 rel[4];
	s32 r;

	v = make_view(test, 0);
	h = call_hook_across(test, v);
	if (!h) {
		xp_view_destroy(v);
		kunit_skip(test, "no hookable 5-byte instruction across a page boundary");
	}
	kunit_info(test, "hook at %pS, %lu bytes before the page end\n", (void *)h->addr,
		   PAGE_SIZE - offset_in_page(h->addr));
	KUNIT_ASSERT_NOT_NULL(test, h->tpage2);
	KUNIT_EXPECT_EQ(test, h->tpage2->va, (h->addr & PAGE_MASK) + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_CALL);
	KUNIT_EXPECT_EQ(test, *xp_hook_byte(h, 0), (u8)JMP32_INSN_OPCODE);
	for (i = 1; i < XP_JUMP_SIZE; i++)
		rel[i - 1] = *xp_hook_byte(h, i);
	memcpy(&r, rel, sizeof(r));
	KUNIT_EXPECT_EQ(test, h->addr + XP_JUMP_SIZE + r, xp_jentry_addr(h->jentry));
	/* On the next page, only the jump's last bytes differ from the kernel's. */
	next = page_address(h->tpage2->copy);
	orig = xp_text(h->tpage2->va);
	for (i = 0; i < PAGE_SIZE; i++)
		if (next[i] != orig[i]) {
			diff++;
			KUNIT_EXPECT_LT(test, h->tpage2->va + i, h->addr + XP_JUMP_SIZE);
		}
	KUNIT_EXPECT_GE(test, diff, 1U);
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, xp_tables_check(NULL), 0U);
	KUNIT_EXPECT_EQ(test, xp_audit_all(), 0U);
	xp_calls_disarm(v, h);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	KUNIT_EXPECT_EQ(test, *xp_hook_byte(h, 0), (u8)INT3_INSN_OPCODE);
	KUNIT_EXPECT_EQ(test, memcmp(next, orig, PAGE_SIZE), 0);

	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	mutex_lock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, v->nr_pages, 0U);
	mutex_unlock(&xp_views_lock);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * A view's first jump over several instructions brings its guard
 * (guard.c): a call hook on enter_lazy_tlb() whose jump goes to
 * xp_enter_lazy_tlb(), live before the jump is, which HOOK_DEL refuses to
 * take away; disarming the view takes both back to int3s.
 */
static void view_guard(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_hook *h, *g;
	struct xp_view *v;
	s32 rel;
	u8 *copy;

	v = make_view(test, 0);
	KUNIT_EXPECT_NULL(test, v->guard);
	h = jump_hook_quiet(test, v);
	g = v->guard;
	KUNIT_ASSERT_NOT_NULL(test, g);
	KUNIT_EXPECT_TRUE(test, xp_guard_live(v));
	KUNIT_EXPECT_STREQ(test, g->sym, "enter_lazy_tlb");
	KUNIT_EXPECT_EQ(test, g->ninsn, 1U);
	copy = xp_hook_copy(g);
	KUNIT_EXPECT_EQ(test, copy[0], (u8)JMP32_INSN_OPCODE);
	memcpy(&rel, copy + 1, sizeof(rel));
	KUNIT_EXPECT_EQ(test, g->addr + XP_JUMP_SIZE + rel, (unsigned long)xp_enter_lazy_tlb);
	xp_jumps_flush();
	if (h->jump_pending)
		xp_jumps_flush();
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_CALL);
	KUNIT_EXPECT_EQ(test, del_hook(g->id), -EBUSY);
	KUNIT_EXPECT_EQ(test, v->nr_hooks, 2U);

	mutex_lock(&xp_views_lock);
	xp_calls_disarm(v, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	KUNIT_EXPECT_EQ(test, READ_ONCE(g->mode), XP_HOOK_TRAP);
	KUNIT_EXPECT_FALSE(test, g->tail_ours);
	KUNIT_EXPECT_EQ(test, copy[0], (u8)INT3_INSN_OPCODE);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/* The first instruction boundary of XP_QUIET_FN after @n of its body's. */
static unsigned long quiet_insn(struct kunit *test, unsigned int n)
{
	unsigned long start, size, a;
	struct xp_insn insn;

	start = xp_sym_lookup(XP_QUIET_FN, &size);
	KUNIT_ASSERT_NE(test, start, 0UL);
	a = xp_func_body(start);
	while (n--) {
		KUNIT_ASSERT_EQ(test, xp_insn_decode(&insn, xp_text(a), XP_INSN_MAX), 0);
		a += insn.len;
	}
	return a;
}

/*
 * Decoding a function goes through the bytes it was built with, not through
 * someone's kprobe (issue 35): an armed probe's int3, then, once kprobes
 * optimized it, its jump, are read back as the instruction they replaced.
 */
static void view_recovered_text(struct kunit *test)
{
	struct kprobe kp = {};
	unsigned long start, size, a;
	u8 orig[XP_JUMP_SIZE], *buf;
	int i;

	start = xp_sym_lookup(XP_QUIET_FN, &size);
	a = quiet_insn(test, 1);
	memcpy(orig, xp_text(a), sizeof(orig));
	kp.addr = (kprobe_opcode_t *)a;
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_NE(test, memcmp(orig, xp_text(a), sizeof(orig)), 0);
	buf = xp_text_recovered(start, size);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, memcmp(orig, buf + (a - start), sizeof(orig)), 0);
	kvfree(buf);
	/* kprobes optimizes in the background (when it can: a 5-byte jump there) */
	for (i = 0; i < 100 && *(u8 *)xp_text(a) != JMP32_INSN_OPCODE; i++)
		msleep(50);
	buf = xp_text_recovered(start, size);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, memcmp(orig, buf + (a - start), sizeof(orig)), 0);
	kvfree(buf);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, memcmp(orig, xp_text(a), sizeof(orig)), 0);
}

/*
 * A kprobe registered on a live call hook's instruction: by the time its
 * int3 goes into the copy, the jump is an int3 with the kernel's bytes
 * behind it, every CPU serialised in between (xp_jumps_yield()), so that
 * the kprobe's disarm, which writes only the first byte back, finds the
 * kernel's bytes behind it (issue 35: it used to find our jump's
 * displacement and restore both in one write, unserialised).
 */
static void view_call_kprobe_tail(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct kprobe kp = {};
	struct xp_hook *h;
	struct xp_view *v;
	u8 *copy;

	v = make_view(test, 0);
	h = call_hook_quiet(test, v);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_CALL);
	copy = xp_hook_copy(h);
	kp.addr = (kprobe_opcode_t *)h->addr;
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(h->broken));
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->mode), XP_HOOK_TRAP);
	KUNIT_EXPECT_FALSE(test, h->tail_ours);
	KUNIT_EXPECT_EQ(test, copy[0], (u8)INT3_INSN_OPCODE);
	KUNIT_EXPECT_EQ(test, memcmp(copy + 1, h->orig + 1, XP_JUMP_SIZE - 1), 0);
	unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ(test, memcmp(copy, xp_text(h->addr), XP_JUMP_SIZE), 0);
	KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * The last instruction boundary of the function holding @t before @t, if
 * a jump there would cover @t (less than 5 bytes before it): 0 otherwise.
 * Its function's name and the boundary's offset in @name, @off.
 */
static unsigned long jump_over(unsigned long t, char *name, u32 *off)
{
	unsigned long start, size, o, pos, last = 0;
	struct xp_insn insn;
	u8 *buf;

	if (!xp_is_core_text(t, 1) || xp_sym_name(t, name, KSYM_NAME_LEN, &o) || o < 9 || o > 512)
		return 0;
	start = t - o;
	if (!xp_sym_at(start, NULL, &o, &size) || o || !size)
		return 0;
	buf = xp_text_recovered(start, size);
	if (!buf)
		return 0;
	for (pos = xp_func_body(start) - start; pos < t - start; pos += insn.len) {
		if (xp_insn_decode(&insn, buf + pos, min_t(unsigned long, size - pos, XP_INSN_MAX)))
			break;
		last = pos;
	}
	kvfree(buf);
	if (pos != t - start || !last || t - (start + last) >= XP_JUMP_SIZE)
		return 0;
	*off = last;
	return start + last;
}

/*
 * Try hooks right before @n branch targets from outside their functions
 * (@target(i) for i < @n, 0 to skip one): none may become a jump over its
 * target, and at least one must have stayed an int3 for the reason that
 * contains @why (so the rule, not chance, kept the jump out). At most 12
 * tried.
 */
static void no_jump_over(struct kunit *test, unsigned long (*target)(unsigned int i),
			 unsigned int n, const char *why)
{
	struct view_ctx *c = view_ctx(test);
	unsigned int i, tried = 0, refused = 0;
	struct xp_view *v;
	char *name;

	name = kunit_kzalloc(test, KSYM_NAME_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, name);
	v = make_view(test, 0);
	for (i = 0; i < n && tried < 12; i++) {
		unsigned long t = target(i), b;
		struct xp_hook *h;
		u32 off;

		if (!t)
			continue;
		b = jump_over(t, name, &off);
		if (!b)
			continue;
		h = add_hook(v, name, &off, 0);
		if (IS_ERR(h))
			continue;	/* kprobes would not probe there, say */
		if (h->addr != b) {	/* the name is another function's too */
			KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
			continue;
		}
		tried++;
		KUNIT_EXPECT_TRUE_MSG(test, h->ninsn == 1 || h->addr + h->cover <= t,
				      "a jump at %s+%#x covers %pS", name, off, (void *)t);
		if (h->why_int3 && strstr(h->why_int3, why))
			refused++;
		KUNIT_EXPECT_EQ(test, del_hook(h->id), 0);
	}
	xp_view_destroy(v);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
	kunit_info(test, "%u hooks tried before a target, %u refused as %s", tried, refused, why);
	KUNIT_EXPECT_GT(test, refused, 0U);
}

/* The target of jump label @i (disabled sites are NOPs: only the table knows). */
static unsigned long label_target(unsigned int i)
{
	static const struct jump_entry *jt, *jt_end;

	if (!jt) {
		jt = (void *)xp_sym_lookup("__start___jump_table", NULL);
		jt_end = (void *)xp_sym_lookup("__stop___jump_table", NULL);
	}
	if (!jt || jt + i >= jt_end)
		return 0;
	return jump_entry_target(jt + i);
}

static void view_label_targets(struct kunit *test)
{
	no_jump_over(test, label_target, 20000, "jump label's target");
}

static struct kunit_case view_cases[] = {
	KUNIT_CASE(view_guard),
	KUNIT_CASE(view_recovered_text),
	KUNIT_CASE(view_call_kprobe_tail),
	KUNIT_CASE(view_label_targets),
	KUNIT_CASE(view_jump_tail_write),
	KUNIT_CASE(view_jump_yield_audit),
	KUNIT_CASE(view_chain_structure),
	KUNIT_CASE(view_refusals),
	KUNIT_CASE(view_copy_and_patch),
	KUNIT_CASE(view_shared_copy),
	KUNIT_CASE(view_hook_refusals),
	KUNIT_CASE(view_peek),
	KUNIT_CASE(view_call_hook),
	KUNIT_CASE(view_call_across_pages),
	KUNIT_CASE(view_call_displaced_plain_write),
	KUNIT_CASE(view_write_before_arm),
	KUNIT_CASE(view_audit_ends_diverged),
	KUNIT_CASE(view_close_refuses),
	KUNIT_CASE(view_tables_two_views),
	KUNIT_CASE(view_stale_tables),
	KUNIT_CASE(view_region_resync),
	{}
};

static struct kunit_suite view_suite = {
	.name = "xprobes_view",
	.init = view_init,
	.exit = view_exit,
	.test_cases = view_cases,
};

/* ---- lifecycle: probes, members, owners -------------------------------------- */

/* Fork/exec probes come with the first view and go a few sweeps after the last. */
static void life_probes_follow_views(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_view *v;
	int i;

	if (c->views0)
		kunit_skip(test, "other views exist");
	v = make_view(test, 0);
	KUNIT_EXPECT_TRUE(test, xp_lifecycle_following());
	xp_view_destroy(v);
	KUNIT_EXPECT_TRUE(test, xp_lifecycle_following());	/* not at once */
	for (i = 0; i < 50 && xp_lifecycle_following(); i++)
		msleep(100);
	KUNIT_EXPECT_FALSE(test, xp_lifecycle_following());
}

/* A dying view accepts no member: teardown restores every member it has. */
static void life_no_join_while_dying(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_view *v;
	struct pid *p;

	v = make_view(test, 0);
	p = find_get_pid(kunit_pid);
	raw_spin_lock(&v->lock);
	v->dying = true;
	raw_spin_unlock(&v->lock);
	KUNIT_EXPECT_EQ(test, xp_member_add(v, c->mm, p, GFP_KERNEL), -ESRCH);
	KUNIT_EXPECT_EQ(test, v->nr_members, 1U);
	raw_spin_lock(&v->lock);
	v->dying = false;
	raw_spin_unlock(&v->lock);
	KUNIT_EXPECT_TRUE(test, xp_view_has_process(v, p, NULL));
	KUNIT_EXPECT_FALSE(test, xp_view_has_process(v, p, c->mm));
	put_pid(p);
	xp_view_destroy(v);
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * The fork and exec tracepoints (GFP_ATOMIC) take members from the pool a
 * view's creation filled, with preemption off as there, and a member a
 * dying view refuses goes back to it rather than to kfree().
 */
static void life_members_from_pool(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_view *v;
	unsigned int n0;
	struct pid *p;
	int err;

	v = make_view(test, 0);
	n0 = xp_member_pool_count();
	KUNIT_EXPECT_GE(test, n0, 16U);
	p = find_get_pid(kunit_pid);
	raw_spin_lock(&v->lock);
	v->dying = true;
	raw_spin_unlock(&v->lock);
	preempt_disable();
	err = xp_member_add(v, c->mm, p, GFP_ATOMIC);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, err, -ESRCH);
	KUNIT_EXPECT_EQ(test, xp_member_pool_count(), n0);
	raw_spin_lock(&v->lock);
	v->dying = false;
	raw_spin_unlock(&v->lock);
	put_pid(p);
	xp_view_destroy(v);
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/* A view ends with the socket that owns it, unless it persists. */
static void life_owner_release(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct xp_view *v;

	mutex_lock(&xp_views_lock);
	v = xp_view_create(kunit_pid, 0, NULL, 4242, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, v);
	KUNIT_EXPECT_EQ(test, v->owner, 4242U);
	xp_views_release_owner(4243, true);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), v);
	xp_views_release_owner(4242, true);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), NULL);

	mutex_lock(&xp_views_lock);
	v = xp_view_create(kunit_pid, XPROBES_F_PERSIST, NULL, 4242, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, v);
	KUNIT_EXPECT_EQ(test, v->owner, 0U);
	xp_views_release_owner(4242, true);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), v);
	xp_view_destroy(v);
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

/*
 * Issue 16, 12: a port id is not an identity. netlink_release() frees the port
 * id before it announces NETLINK_URELEASE; a socket that binds it meanwhile
 * keeps its views. Only views whose own socket is released (orphaned) end.
 */
static void life_owner_is_a_socket(struct kunit *test)
{
	struct view_ctx *c = view_ctx(test);
	struct socket *sock;
	struct xp_view *v;

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW, NETLINK_GENERIC,
					       &sock), 0);
	mutex_lock(&xp_views_lock);
	v = xp_view_create(kunit_pid, 0, sock->sk, 4242, NULL);
	mutex_unlock(&xp_views_lock);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, v);
	/* Another socket that had port 4242 is released: ours is alive. */
	xp_views_release_owner(4242, false);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), v);
	/* Ours is released (orphaned, as netlink_release does first). */
	sock_release(sock);
	xp_views_release_owner(4242, false);
	KUNIT_EXPECT_PTR_EQ(test, xp_view_of_mm(c->mm), NULL);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, atomic64_read(&xp_mem_bytes), c->mem0);
}

static struct kunit_case life_cases[] = {
	KUNIT_CASE(life_probes_follow_views),
	KUNIT_CASE(life_no_join_while_dying),
	KUNIT_CASE(life_owner_release),
	KUNIT_CASE(life_owner_is_a_socket),
	KUNIT_CASE(life_members_from_pool),
	{}
};

static struct kunit_suite life_suite = {
	.name = "xprobes_lifecycle",
	.init = view_init,
	.exit = view_exit,
	.test_cases = life_cases,
};

kunit_test_suites(&view_suite, &life_suite);
