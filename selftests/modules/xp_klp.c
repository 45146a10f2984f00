// SPDX-License-Identifier: GPL-2.0
/*
 * xp_klp: a livepatch for the selftests. getppid() returns 4242 while it is
 * enabled, so a process can tell whether the kernel text it executes (for a
 * traced process: its private copy) follows the patch.
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/module.h>

static long xp_klp_getppid(void)
{
	return 4242;
}

static struct klp_func funcs[] = {
	{ .old_name = "__do_sys_getppid", .new_func = xp_klp_getppid },
	{ }
};

static struct klp_object objs[] = {
	{ .funcs = funcs },	/* vmlinux */
	{ }
};

static struct klp_patch patch = {
	.mod = THIS_MODULE,
	.objs = objs,
};

static int __init xp_klp_init(void)
{
	return klp_enable_patch(&patch);
}

static void __exit xp_klp_exit(void)
{
}

module_init(xp_klp_init);
module_exit(xp_klp_exit);
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
MODULE_DESCRIPTION("xprobes selftest livepatch: getppid() returns 4242");
