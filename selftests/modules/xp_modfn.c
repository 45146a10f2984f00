// SPDX-License-Identifier: GPL-2.0
/*
 * xp_modfn: a function in module text that a process calls when it asks,
 * for selftest 55-view-module (hooks in module text). Each open and first
 * read of /proc/xp_modfn calls xp_modfn_hit() once; /proc/xp_modfn_n says
 * "CALLS KEYED": every call so far, and those made while the static key was
 * on. Writing 1 or 0 turns the key on or off: a jump label inside
 * xp_modfn_hit(), which the kernel patches in this module's text. Calls
 * come only from processes that read the file, so a hook's hits can be
 * compared exactly with the reads a process made. Each such read also
 * fires the module's own tracepoint, xp_modfn:xp_modfn_read (the reader's
 * tgid, the calls so far). xp_modfn2 is the same module under another name
 * (XP_MODFN), without the tracepoint: a second module with a function of
 * the same name, loaded by a traced process.
 */
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>

#ifndef XP_MODFN
#define XP_MODFN "xp_modfn"
#define CREATE_TRACE_POINTS
#include "xp_modfn_trace.h"
#else
static inline void trace_xp_modfn_read(int tgid, long calls) { }
#endif

static DEFINE_STATIC_KEY_FALSE(xp_modfn_key);
static atomic64_t calls, keyed;

/*
 * noipa: no clone under another name (.isra), the tests hook it by its own.
 * The three adds on %rax (48 83 c0 01, 48 83 c0 02, 48 83 e8 03: plain
 * instructions, 12 bytes, on the hot path whatever the compiler does
 * around them) are where selftest 55 puts a kprobe that kprobes can
 * optimize into a jump.
 */
static noinline __attribute__((__noipa__)) int xp_modfn_hit(int x)
{
	long y = x;

	atomic64_inc(&calls);
	if (static_branch_unlikely(&xp_modfn_key))
		atomic64_inc(&keyed);
	asm volatile("add $1, %0\n\tadd $2, %0\n\tsub $3, %0" : "+a" (y));
	return y + 1;
}

static ssize_t modfn_read(struct file *f, char __user *ubuf, size_t n, loff_t *pos)
{
	if (*pos == 0) {
		xp_modfn_hit((int)n);
		trace_xp_modfn_read(current->tgid, (long)atomic64_read(&calls));
	}
	return simple_read_from_buffer(ubuf, n, pos, "x\n", 2);
}

static ssize_t count_read(struct file *f, char __user *ubuf, size_t n, loff_t *pos)
{
	char buf[48];
	int len;

	len = scnprintf(buf, sizeof(buf), "%lld %lld\n", (long long)atomic64_read(&calls),
			(long long)atomic64_read(&keyed));
	return simple_read_from_buffer(ubuf, n, pos, buf, len);
}

static ssize_t modfn_write(struct file *f, const char __user *ubuf, size_t n, loff_t *pos)
{
	char c;

	if (!n || get_user(c, ubuf))
		return -EINVAL;
	if (c == '1')
		static_branch_enable(&xp_modfn_key);
	else if (c == '0')
		static_branch_disable(&xp_modfn_key);
	else
		return -EINVAL;
	return n;
}

static const struct proc_ops modfn_ops = {
	.proc_read = modfn_read,
	.proc_write = modfn_write,
	.proc_lseek = default_llseek,
};

static const struct proc_ops count_ops = {
	.proc_read = count_read,
	.proc_lseek = default_llseek,
};

static int __init xp_modfn_init(void)
{
	if (!proc_create(XP_MODFN "_n", 0444, NULL, &count_ops))
		return -ENOMEM;
	if (!proc_create(XP_MODFN, 0644, NULL, &modfn_ops)) {
		remove_proc_entry(XP_MODFN "_n", NULL);
		return -ENOMEM;
	}
	return 0;
}

static void __exit xp_modfn_exit(void)
{
	remove_proc_entry(XP_MODFN, NULL);
	remove_proc_entry(XP_MODFN "_n", NULL);
}

module_init(xp_modfn_init);
module_exit(xp_modfn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xprobes selftest: a function in module text, called on demand");
