// SPDX-License-Identifier: GPL-2.0
/*
 * xp_klpmod: a livepatch of a module's function for the selftests. It
 * replaces xp_modfn_hit() of the test module xp_modfn with a function that
 * returns what the original returns and counts its calls in its own
 * parameter (/sys/module/xp_klpmod/parameters/calls): a process's reads of
 * /proc/xp_modfn show whether the text it executes (for a traced process,
 * its private copy of the module's page) follows the patch.
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/sysfs.h>

static atomic_long_t calls;

static int calls_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&calls));
}

static const struct kernel_param_ops calls_ops = {
	.get = calls_get,
};
module_param_cb(calls, &calls_ops, NULL, 0444);

static noinline int xp_klpmod_hit(int x)
{
	atomic_long_inc(&calls);
	return x + 1;
}

static struct klp_func funcs[] = {
	{ .old_name = "xp_modfn_hit", .new_func = xp_klpmod_hit },
	{ }
};

static struct klp_object objs[] = {
	{ .name = "xp_modfn", .funcs = funcs },
	{ }
};

static struct klp_patch patch = {
	.mod = THIS_MODULE,
	.objs = objs,
};

static int __init xp_klpmod_init(void)
{
	return klp_enable_patch(&patch);
}

static void __exit xp_klpmod_exit(void)
{
}

module_init(xp_klpmod_init);
module_exit(xp_klpmod_exit);
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
MODULE_DESCRIPTION("xprobes selftest livepatch: xp_modfn's xp_modfn_hit() replaced, its calls counted");
