// SPDX-License-Identifier: GPL-2.0
/*
 * xprobes: per-process kernel views for tracing.
 *
 * Module entry and exit. Each concern lives in its own file; this one only
 * orders their set-up and tear-down. On the way out, the netlink family goes
 * first (no new requests), then every view (no copy is reachable any more),
 * and only then the trap handler.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "xprobes.h"

static int __init xprobes_init(void)
{
	int err;

	err = xp_kernel_init();
	if (err)
		return err;
	err = xp_views_init();
	if (err)
		return err;
	err = xp_dispatch_init();
	if (err)
		goto out_views;
	err = xp_netlink_init();
	if (err)
		goto out_dispatch;
	pr_info("loaded, version %s\n", XPROBES_VERSION);
	return 0;

out_dispatch:
	xp_dispatch_exit();
out_views:
	xp_views_exit();
	return err;
}

static void __exit xprobes_exit(void)
{
	xp_netlink_exit();
	xp_views_exit();
	xp_dispatch_exit();
	rcu_barrier();		/* hooks and pages freed with call_rcu() */
	pr_info("unloaded\n");
}

module_init(xprobes_init);
module_exit(xprobes_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("xprobes developers");
MODULE_DESCRIPTION("Per-process kernel views for cheap, targeted tracing");
MODULE_VERSION(XPROBES_VERSION);
