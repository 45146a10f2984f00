// SPDX-License-Identifier: GPL-2.0
/*
 * xprobes: per-process kernel views for tracing.
 *
 * Module entry and exit. Each concern lives in its own file; this one only
 * orders their set-up and tear-down. On the way in, the trap handler and the
 * text-patching mirror exist before anything can create a view. On the way
 * out, nothing new can arrive (owner notifier, netlink family), then every
 * view goes (no copy is reachable any more), then process following, then
 * the mirror and the trap handler, then whatever RCU still holds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/rcupdate_wait.h>
#include "xprobes.h"
#include "uhooks/uhook.h"

static int __init xprobes_init(void)
{
	int err;

	err = xp_kernel_init();
	if (err)
		return err;
	err = xp_pgtable_init();
	if (err)
		return err;
	err = xp_dispatch_init();
	if (err)
		goto out_pgtable;
	xp_jump_init();
	xp_tp_init();
	err = xp_coherence_init();
	if (err)
		goto out_dispatch;
	xp_kpstate_init();
	xp_modspace_init();
	xp_ucover_init();
	xp_unwind_init();
	err = xp_uhooks_init();
	if (err)
		goto out_kpstate;
	xp_useccomp_init();
	err = xp_lifecycle_init();
	if (err)
		goto out_uhooks;
	err = xp_netlink_init();
	if (err)
		goto out_lifecycle;
	pr_info("loaded, version %s%s%s\n", XPROBES_VERSION,
		xp_k.unsupported ? "; " : "", xp_k.unsupported ?: "");
	return 0;

out_lifecycle:
	xp_lifecycle_exit();
out_uhooks:
	xp_useccomp_exit();
	xp_uhooks_exit();
out_kpstate:
	xp_ucover_exit();
	xp_modspace_exit();
	synchronize_rcu_tasks();	/* nobody is left in xp_alloc_exit() */
	xp_kpstate_exit();
	xp_coherence_exit();
out_dispatch:
	xp_dispatch_exit();
out_pgtable:
	xp_pgtable_exit();
	return err;
}

static void __exit xprobes_exit(void)
{
	xp_netlink_exit();
	xp_kpstate_exit();
	xp_jumps_stop();	/* the optimizer makes no more jumps */
	xp_views_destroy_all();
	xp_modspace_exit();	/* no view holds module-space tables */
	xp_tp_exit();		/* every tracepoint hook went with its view */
	xp_uhooks_drain();	/* every user hook out of every process */
	/*
	 * Only now no filter a process installs can meet a hook of ours
	 * (until 2026-12-01 this came first, and one that went in meanwhile
	 * met live hooks: SIGSYS). Its seal works are done after it.
	 */
	xp_useccomp_exit();
	xp_uhooks_exit();	/* the reaper and the mapping workers are done */
	xp_ulate_exit();	/* no hook is left to queue a late event */
	xp_unwind_exit();	/* after the reaper's last areas: their detach works */
	xp_ucover_exit();	/* no user hook is left */
	xp_calls_exit();
	xp_lifecycle_exit();
	xp_coherence_exit();
	xp_dispatch_exit();
	rcu_barrier();		/* hooks and pages freed with call_rcu() */
	xp_pgtable_exit();
	pr_info("unloaded\n");
}

module_init(xprobes_init);
module_exit(xprobes_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("xprobes developers");
MODULE_DESCRIPTION("Per-process kernel views for cheap, targeted tracing");
MODULE_VERSION(XPROBES_VERSION);
