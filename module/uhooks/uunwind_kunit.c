// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: uunwind.c (included at its end under XPROBES_KUNIT). A detach's
 * stack words: a thunk's address becomes its target, through the thunks
 * of tail calls; so does one with bit 63 over it (XP_URT_TAILBIT: a
 * thread stopped by a signal between its load of a tail call's hash entry
 * and its btr, the word in its sigframe's rcx), keeping the bit for the
 * btr; any other word stays. A seccomp seal's stop on the way to one of
 * the records routines' system calls outside the entry's window: the
 * routine's own bytes, mapped in the test's process, passed over as
 * detach_syscall() does, rdi's save at -0x30(%rsp) included.
 */
#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/version.h>

static void uunwind_detach_words(struct kunit *test)
{
	const unsigned long tail = BIT_ULL(XP_URT_TAILBIT), base = 0x7f0000001000UL;
	const unsigned long ret = 0x401001;	/* odd: any byte may follow a call */
	struct xp_unwind_map *m = xp_unwind_map_new((struct mm_struct *)test, 1);

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->range[0].base = base;
	m->range[0].n = 2;
	m->range[0].tgt = m->tgt;
	m->tgt[0] = ret;
	m->tgt[1] = base;		/* a tail call's: it returns into thunk 0 */
	m->nranges = 1;

	KUNIT_EXPECT_EQ(test, detach_word(m, base), ret);
	KUNIT_EXPECT_EQ(test, detach_word(m, base + XP_URT_SIZE), ret);
	KUNIT_EXPECT_EQ(test, detach_word(m, base | tail), ret | tail);
	KUNIT_EXPECT_EQ(test, detach_word(m, (base + XP_URT_SIZE) | tail), ret | tail);
	KUNIT_EXPECT_EQ(test, detach_word(m, ret), 0ul);
	KUNIT_EXPECT_EQ(test, detach_word(m, ret | tail), 0ul);
	KUNIT_EXPECT_EQ(test, detach_word(m, base + 1), 0ul);
	KUNIT_EXPECT_EQ(test, detach_word(m, base + 2 * XP_URT_SIZE), 0ul);	/* not given out */
	map_put(m);
}

extern const u8 xp_urec_tmpl[], xp_urec_tmpl_end[], xp_urec_entry[], xp_urec_stored[];

/*
 * A thread stopped at a records routine's save of rdi before a system
 * call outside the entry's window (the return's and the entry without
 * returns' asks, a full buffer's), or just past that save: it resumes past
 * the syscall as if no one listened, with rdi as the code before the
 * syscall set it, and the caller's rdi at -0x30(%rsp), where the code
 * after the syscall takes it back from: written by the detach where the
 * thread had not saved it yet, left alone where it had.
 */
static void uunwind_detach_syscalls(struct kunit *test)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	static const u8 save[] = { 0x48, 0x89, 0x7c, 0x24, 0xd0 };	/* mov %rdi,-0x30(%rsp) */
	const size_t len = xp_urec_tmpl_end - xp_urec_tmpl;
	const unsigned long caller_di = 0x5ca1ab1e0000d1UL, mark = 0x3a3a3a3aUL;
	struct xp_unwind_map *m = xp_unwind_map_new((struct mm_struct *)test, 1);
	unsigned long area, stack, at, imm, slot;
	unsigned int found = 0, past;
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	area = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	stack = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(area) || IS_ERR_VALUE(stack) || !area || !stack);
	KUNIT_ASSERT_LE(test, len, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)area, xp_urec_tmpl, len), 0UL);
	m->area[0] = area;
	m->nareas = 1;
	for (i = 0; i + sizeof(save) + 12 <= len; i++) {
		const u8 *p = xp_urec_tmpl + i;

		if (memcmp(p, save, sizeof(save)) ||
		    (p >= xp_urec_entry && p < xp_urec_stored))
			continue;	/* not a save, or the window's (detach_window()) */
		/* mov $imm32,%edi; mov $XPROBES_UREC_NR,%eax; syscall */
		KUNIT_ASSERT_EQ(test, p[5], 0xbf);
		KUNIT_ASSERT_EQ(test, p[10], 0xb8);
		KUNIT_ASSERT_TRUE(test, p[15] == 0x0f && p[16] == 0x05);
		imm = get_unaligned_le32(p + 6);
		for (past = 0; past < 2; past++) {
			struct pt_regs regs = {};
			struct xp_ubudget b = {};

			regs.ip = area + i + (past ? sizeof(save) : 0);
			regs.sp = stack + PAGE_SIZE / 2;
			regs.di = past ? 7 : caller_di;	/* past it: anything, the routine's */
			regs.flags = 0x246;
			regs.ax = 1;
			at = regs.sp;
			KUNIT_ASSERT_EQ(test, put_user(past ? caller_di : mark,
						       (unsigned long __user *)(at - 0x30)), 0);
			detach_syscall(m, &regs, &b);
			KUNIT_EXPECT_EQ(test, regs.ip, area + i + 17);
			KUNIT_EXPECT_EQ(test, regs.cx, area + i + 17);
			KUNIT_EXPECT_EQ(test, regs.r11, 0x246UL);
			KUNIT_EXPECT_EQ(test, regs.ax, (unsigned long)-ENOSYS);
			KUNIT_EXPECT_EQ(test, regs.di, imm);
			KUNIT_EXPECT_EQ(test, regs.sp, at);
			KUNIT_ASSERT_EQ(test, get_user(slot, (unsigned long __user *)(at - 0x30)),
					0);
			KUNIT_EXPECT_EQ(test, slot, caller_di);
		}
		found++;
	}
	/* .Lask_ret, .Lask_noret, xp_urec_full */
	KUNIT_EXPECT_EQ(test, found, 3U);
	map_put(m);
#else
	kunit_skip(test, "no kunit_vm_mmap() before 6.10");
#endif
}

static struct kunit_case uunwind_cases[] = {
	KUNIT_CASE(uunwind_detach_words),
	KUNIT_CASE(uunwind_detach_syscalls),
	{}
};

static struct kunit_suite uunwind_suite = {
	.name = "xprobes_uunwind",
	.test_cases = uunwind_cases,
};

kunit_test_suites(&uunwind_suite);
