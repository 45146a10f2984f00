// SPDX-License-Identifier: GPL-2.0
/*
 * Views stand on kprobes: the __text_poke probe keeps copies coherent
 * (coherence.c) and the arch_prepare_kprobe probe keeps kprobes from copying
 * hook bytes (readers.c). kprobes can be switched off under us:
 *
 * - globally, by "echo 0 > /sys/kernel/debug/kprobes/enabled"
 *   (disarm_all_kprobes(), inlined into write_enabled_file_bool()). The next
 *   text patch through a traced CR3 would then read back a stale copy and hit
 *   __text_poke()'s BUG_ON(memcmp). That write is refused with -EBUSY while
 *   views exist, and every view is ended (VIEW_ENDED, "kprobes were being
 *   disarmed"): the write goes through when it is tried again. A write that
 *   arms (1, y, on) is let through.
 * - ftrace-based kprobes (the arch_prepare_kprobe probe is one) stop when
 *   ftrace kills itself after an ftrace bug (kprobe_ftrace_kill()).
 *
 * xp_kprobes_broken() says whether either happened or the __text_poke probe
 * is not in the text any more. View creation and HOOK_ADD refuse then (a hook
 * is the first thing that makes a copy; HOOK_ADD registers kprobes itself,
 * under kprobe_mutex, before it asks, so it sees a global disarm that came
 * before it), and the sweeper ends every view (lifecycle.c).
 *
 * Locking: the write probe runs in the writer's context with preemption off
 * and only reads xp_nr_views (a racy read: a view made after it finds
 * kprobes disarmed at HOOK_ADD) and queues work; the work takes xp_views_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/text-patching.h>
#include "xprobes.h"

static bool *all_disarmed;		/* kprobes_all_disarmed (kernel/kprobes.c) */
static bool *ftrace_disabled;		/* kprobe_ftrace_disabled */
static bool write_probe_on;

/* Why views cannot stand now, or NULL. */
const char *xp_kprobes_broken(void)
{
	if (all_disarmed && READ_ONCE(*all_disarmed))
		return "kprobes are disarmed (debugfs kprobes/enabled is 0): views need them";
	if (ftrace_disabled && READ_ONCE(*ftrace_disabled))
		return "ftrace-based kprobes were stopped (ftrace was killed): views need them";
	if (!xp_poke_probe_armed())
		return "the kprobe that keeps copies coherent is not armed: views need it";
	return NULL;
}

static void end_views(struct work_struct *work)
{
	struct xp_view *v, *n;

	mutex_lock(&xp_views_lock);
	list_for_each_entry_safe(v, n, &xp_views, node)
		xp_view_close(v, "kprobes were being disarmed (debugfs kprobes/enabled)");
	mutex_unlock(&xp_views_lock);
}
static DECLARE_WORK(end_views_work, end_views);

/* kstrtobool()'s "true" spellings start with 1, y, Y, or on/ON. */
static bool arms(const char __user *buf, size_t count)
{
	char s[2] = { 0 };

	if (copy_from_user_nofault(s, buf, min_t(size_t, count, sizeof(s))))
		return false;
	return s[0] == '1' || s[0] == 'y' || s[0] == 'Y' ||
	       ((s[0] == 'o' || s[0] == 'O') && (s[1] == 'n' || s[1] == 'N'));
}
NOKPROBE_SYMBOL(arms);

/* write_enabled_file_bool(file, user_buf, count, ppos) */
static int on_enabled_write(struct kprobe *p, struct pt_regs *regs)
{
	if (!READ_ONCE(xp_nr_views) || arms((const char __user *)regs->si, regs->dx))
		return 0;
	schedule_work(&end_views_work);
	return xp_probe_return(regs, (unsigned long)-EBUSY);
}
NOKPROBE_SYMBOL(on_enabled_write);

static struct kprobe write_kp = {
	.symbol_name = "write_enabled_file_bool",
	.pre_handler = on_enabled_write,
};

void xp_kpstate_init(void)
{
	all_disarmed = (bool *)xp_sym_lookup("kprobes_all_disarmed", NULL);
	ftrace_disabled = (bool *)xp_sym_lookup("kprobe_ftrace_disabled", NULL);
	if (!all_disarmed)
		pr_warn("cannot find kprobes_all_disarmed: a global kprobes disarm is not detected\n");
	if (register_kprobe(&write_kp))
		pr_warn("cannot probe write_enabled_file_bool: a global kprobes disarm ends views only at the next sweep\n");
	else
		write_probe_on = true;
}

void xp_kpstate_exit(void)
{
	if (write_probe_on)
		unregister_kprobe(&write_kp);
	cancel_work_sync(&end_views_work);
}
