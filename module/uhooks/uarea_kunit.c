// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: uarea.c's placement within reach of a site, and its copies for a
 * child of fork (included at its end under
 * XPROBES_KUNIT). An area is told by its file alone, and its copy mutes
 * the syscalls of its code, never the bytes of its tables (addresses the
 * thunks return to, which may hold the same bytes).
 */
#include <kunit/test.h>

static const u8 site[] = { 0xb8, 0xa4, 0x01, 0x00, 0x00, 0x0f, 0x05 };	/* mov $420,%eax; syscall */

static void uarea_told_by_file(struct kunit *test)
{
	struct vm_area_struct *vma = kunit_kzalloc(test, sizeof(*vma), GFP_KERNEL);
	struct file *a = area_file(), *other;

	KUNIT_ASSERT_NOT_NULL(test, vma);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	other = shmem_file_setup("memfd:" AREA_NAME, XP_UAREA_SIZE, VM_NORESERVE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	vma->vm_start = 0x10000000;
	vma->vm_end = vma->vm_start + XP_UAREA_SIZE;
	vma->vm_file = a;
	KUNIT_EXPECT_TRUE(test, is_area(vma));
	vma->vm_end -= PAGE_SIZE;		/* split by mprotect(): not one */
	KUNIT_EXPECT_FALSE(test, is_area(vma));
	vma->vm_end += PAGE_SIZE;
	vma->vm_pgoff = 1;
	KUNIT_EXPECT_FALSE(test, is_area(vma));
	vma->vm_pgoff = 0;
	vma->vm_file = other;			/* another shmem file on the same mount */
	KUNIT_EXPECT_FALSE(test, is_area(vma));
	vma->vm_file = NULL;
	KUNIT_EXPECT_FALSE(test, is_area(vma));
	fput(other);
	fput(a);
}

static void uarea_copy_mutes_code_only(struct kunit *test)
{
	u8 *buf = vzalloc(XP_UAREA_SIZE), *back = vzalloc(XP_UAREA_SIZE);
	struct file *old = area_file(), *copy = area_file();
	static const unsigned long in_code[] = {
		64, XP_UREC_AREA_OFF + 16, XP_URET_AREA_OFF + 8,
	};
	static const unsigned long in_table[] = {
		XP_UREC_AREA_OFF + XP_URT_TGT + 8, XP_URET_AREA_OFF + XP_URET_TABLE + 8,
	};
	unsigned int i;

	KUNIT_ASSERT_TRUE(test, buf && back && !IS_ERR(old) && !IS_ERR(copy));
	for (i = 0; i < ARRAY_SIZE(in_code); i++)
		KUNIT_ASSERT_EQ(test, file_rw(old, in_code[i], (u8 *)site, sizeof(site), true), 0);
	for (i = 0; i < ARRAY_SIZE(in_table); i++)
		KUNIT_ASSERT_EQ(test, file_rw(old, in_table[i], (u8 *)site, sizeof(site), true), 0);
	/* no area listed with it (its parent's went): all of it is read */
	KUNIT_EXPECT_EQ(test, read_area(NULL, old, buf), 0);
	KUNIT_EXPECT_EQ(test, mute_area(buf), ARRAY_SIZE(in_code));
	KUNIT_EXPECT_EQ(test, mute_area(buf), 0U);	/* a copy of a copy: nothing left */
	KUNIT_ASSERT_EQ(test, write_area(copy, buf), 0);
	KUNIT_ASSERT_EQ(test, file_rw(copy, 0, back, XP_UAREA_SIZE, false), 0);
	for (i = 0; i < ARRAY_SIZE(in_code); i++) {
		KUNIT_EXPECT_EQ(test, back[in_code[i] + 5], (u8)MUTE_OP);
		KUNIT_EXPECT_EQ(test, back[in_code[i]], site[0]);
	}
	for (i = 0; i < ARRAY_SIZE(in_table); i++)
		KUNIT_EXPECT_EQ(test, memcmp(back + in_table[i], site, sizeof(site)), 0);
	/* the parent's file is as it was */
	KUNIT_ASSERT_EQ(test, file_rw(old, in_code[0], back, sizeof(site), false), 0);
	KUNIT_EXPECT_EQ(test, memcmp(back, site, sizeof(site)), 0);
	fput(copy);
	fput(old);
	vfree(back);
	vfree(buf);
}

/*
 * A listed area: its own process's is not read; another's (the child's
 * parent's) is read as written (trampolines up to used, the blocks), the
 * records' hash with its targets.
 */
static void uarea_listed_read(struct kunit *test)
{
	struct xp_uarea *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct mm_struct *parent = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mm_struct *child = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *buf = vzalloc(XP_UAREA_SIZE);
	static const u8 key[8] = { 0x10, 0x20, 0x30, 0x40 }, tgt[8] = { 0x50, 0x60 };
	const unsigned long hash = XP_UREC_AREA_OFF + XP_URT_HASH + 16;
	const unsigned long target = XP_UREC_AREA_OFF + XP_URT_TGT + 8;

	KUNIT_ASSERT_TRUE(test, a && parent && child && buf);
	a->file = area_file();
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->file));
	a->mm = parent;
	a->used = 128;
	a->users = 1;		/* never freed by a release meanwhile */
	a->urec = (struct xp_urecblk *)a;	/* looked at, never followed here */
	KUNIT_ASSERT_EQ(test, file_rw(a->file, 64, (u8 *)site, sizeof(site), true), 0);
	KUNIT_ASSERT_EQ(test, file_rw(a->file, 4096, (u8 *)site, sizeof(site), true), 0);
	KUNIT_ASSERT_EQ(test, file_rw(a->file, hash, (u8 *)key, 8, true), 0);
	KUNIT_ASSERT_EQ(test, file_rw(a->file, target, (u8 *)tgt, 8, true), 0);
	mutex_lock(&xp_views_lock);
	list_add(&a->node, &xp_uareas);
	mutex_unlock(&xp_views_lock);
	KUNIT_EXPECT_EQ(test, read_area(parent, a->file, buf), 1);
	KUNIT_EXPECT_EQ(test, read_area(child, a->file, buf), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 64, site, sizeof(site)), 0);
	KUNIT_EXPECT_EQ(test, buf[4096], 0);	/* past used: never handed out */
	KUNIT_EXPECT_EQ(test, memcmp(buf + hash, key, 8), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + target, tgt, 8), 0);
	KUNIT_EXPECT_EQ(test, mute_area(buf), 1U);
	mutex_lock(&xp_views_lock);
	list_del(&a->node);
	mutex_unlock(&xp_views_lock);
	fput(a->file);
	vfree(buf);
}

/*
 * An area gap_near() may place, at either end of its range, reaches the
 * site it was placed for: at the bottom, a page above the lowest gap
 * start (gap_floor()); at the top, a guard page below near + REACH.
 */
static void uarea_placed_within_reach(struct kunit *test)
{
	static const unsigned long near[] = {
		0x555555554000UL, 0x7f0012345000UL, SZ_4G + 0x1234000UL, REACH + SZ_16M,
	};
	struct xp_uarea a = {};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(near); i++) {
		a.va = PAGE_ALIGN(gap_floor(near[i])) + PAGE_SIZE;
		KUNIT_EXPECT_TRUE_MSG(test, reaches(&a, near[i]), "below %lx", near[i]);
		a.va = near[i] + REACH - PAGE_SIZE - XP_UAREA_SIZE;
		KUNIT_EXPECT_TRUE_MSG(test, reaches(&a, near[i]), "above %lx", near[i]);
	}
}

static struct kunit_case uarea_cases[] = {
	KUNIT_CASE(uarea_placed_within_reach),
	KUNIT_CASE(uarea_told_by_file),
	KUNIT_CASE(uarea_listed_read),
	KUNIT_CASE(uarea_copy_mutes_code_only),
	{}
};

static struct kunit_suite uarea_suite = {
	.name = "xprobes_uarea",
	.test_cases = uarea_cases,
};

kunit_test_suites(&uarea_suite);
