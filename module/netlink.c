// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "xprobes": the only way userspace talks to the module.
 * Every command is admin-only; every attribute has a strict policy, so malformed
 * input is refused by the genl core with an extack message before a handler runs.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include "xprobes.h"

/* Hook offsets beyond 1 MiB cannot be inside one kernel function. */
static const struct netlink_range_validation xp_offset_range = {
	.max = 1 << 20,
};

static const struct nla_policy xp_policy[XPROBES_A_MAX + 1] = {
	[XPROBES_A_PID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[XPROBES_A_FLAGS]	= NLA_POLICY_MASK(NLA_U32, XPROBES_F_ALL),
	[XPROBES_A_SYMBOL]	= { .type = NLA_NUL_STRING, .len = XPROBES_SYM_MAX - 1 },
	[XPROBES_A_OFFSET]	= NLA_POLICY_FULL_RANGE(NLA_U32, &xp_offset_range),
	[XPROBES_A_ADDR]	= { .type = NLA_U64 },
	[XPROBES_A_LEN]		= NLA_POLICY_RANGE(NLA_U32, 1, XPROBES_PEEK_MAX),
	[XPROBES_A_HOOK_ID]	= NLA_POLICY_MIN(NLA_U32, 1),
	[XPROBES_A_COOKIE]	= { .type = NLA_U64 },
};

static struct genl_family xp_family;

/*
 * GENL_ADMIN_PERM already demands CAP_NET_ADMIN; changing what other processes
 * execute in the kernel also takes CAP_SYS_ADMIN, as ptrace-like power does.
 */
static int xp_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		       struct genl_info *info)
{
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "xprobes needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	return 0;
}

static const char *const xp_attr_names[XPROBES_A_MAX + 1] = {
	[XPROBES_A_PID]		= "pid",
	[XPROBES_A_FLAGS]	= "flags",
	[XPROBES_A_SYMBOL]	= "symbol",
	[XPROBES_A_OFFSET]	= "offset",
	[XPROBES_A_ADDR]	= "address",
	[XPROBES_A_LEN]		= "length",
	[XPROBES_A_HOOK_ID]	= "hook id",
	[XPROBES_A_COOKIE]	= "cookie",
};

/* Like GENL_REQ_ATTR_CHECK, plus a message a person can read. */
static bool xp_missing(struct genl_info *info, int attr)
{
	if (info->attrs[attr])
		return false;
	NL_SET_ERR_ATTR_MISS(info->extack, NULL, attr);
	NL_SET_ERR_MSG_FMT(info->extack, "missing attribute: %s", xp_attr_names[attr]);
	return true;
}

static int xp_cmd_status(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &xp_family, 0, XPROBES_CMD_STATUS);
	if (!hdr)
		goto nospace;
	if (nla_put_string(msg, XPROBES_A_VERSION, XPROBES_VERSION) ||
	    nla_put_u32(msg, XPROBES_A_MODE, xp_k.unsupported ?
			XPROBES_MODE_UNSUPPORTED : XPROBES_MODE_VIEWS) ||
	    (xp_k.unsupported && nla_put_string(msg, XPROBES_A_REASON, xp_k.unsupported)) ||
	    nla_put_u32(msg, XPROBES_A_NR_VIEWS, 0) ||
	    nla_put_u32(msg, XPROBES_A_NR_HOOKS, 0) ||
	    nla_put_u64_64bit(msg, XPROBES_A_MEM_BYTES, 0, XPROBES_A_PAD))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int xp_cmd_peek(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	u32 pid, len = 16;
	unsigned long addr, off = 0, size;
	struct sk_buff *msg;
	void *hdr;
	u8 *buf;
	int err;

	if (xp_missing(info, XPROBES_A_PID))
		return -EINVAL;
	pid = nla_get_u32(a[XPROBES_A_PID]);
	if (a[XPROBES_A_LEN])
		len = nla_get_u32(a[XPROBES_A_LEN]);
	if (!!a[XPROBES_A_ADDR] == !!a[XPROBES_A_SYMBOL]) {
		NL_SET_ERR_MSG(info->extack, "give exactly one of address and symbol");
		return -EINVAL;
	}
	if (a[XPROBES_A_ADDR]) {
		if (a[XPROBES_A_OFFSET]) {
			NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_OFFSET],
					    "an offset goes with a symbol, not an address");
			return -EINVAL;
		}
		addr = nla_get_u64(a[XPROBES_A_ADDR]);
	} else {
		addr = xp_sym_lookup(nla_data(a[XPROBES_A_SYMBOL]), &size);
		if (!addr) {
			NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_SYMBOL],
					    "unknown kernel symbol");
			return -ENOENT;
		}
		if (a[XPROBES_A_OFFSET])
			off = nla_get_u32(a[XPROBES_A_OFFSET]);
		addr += off;
	}

	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = xp_peek(pid, addr, buf, len, info->extack);
	if (err)
		goto out;
	err = -ENOMEM;
	msg = genlmsg_new(nla_total_size(len) + 64, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &xp_family, 0, XPROBES_CMD_PEEK);
	if (!hdr || nla_put_u64_64bit(msg, XPROBES_A_ADDR, addr, XPROBES_A_PAD) ||
	    nla_put(msg, XPROBES_A_BYTES, len, buf)) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	kfree(buf);
	return err;
}

static const struct genl_small_ops xp_ops[] = {
	{
		.cmd	= XPROBES_CMD_STATUS,
		.doit	= xp_cmd_status,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= XPROBES_CMD_PEEK,
		.doit	= xp_cmd_peek,
		.flags	= GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group xp_mcgrps[] = {
	{ .name = XPROBES_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

static struct genl_family xp_family __ro_after_init = {
	.name		= XPROBES_GENL_NAME,
	.version	= XPROBES_GENL_VERSION,
	.maxattr	= XPROBES_A_MAX,
	.policy		= xp_policy,
	.netnsok	= false,
	.module		= THIS_MODULE,
	.pre_doit	= xp_pre_doit,
	.small_ops	= xp_ops,
	.n_small_ops	= ARRAY_SIZE(xp_ops),
	.resv_start_op	= XPROBES_CMD_MAX + 1,
	.mcgrps		= xp_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(xp_mcgrps),
};

int xp_netlink_init(void)
{
	return genl_register_family(&xp_family);
}

void xp_netlink_exit(void)
{
	genl_unregister_family(&xp_family);
}
