// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "xprobes": the only way userspace talks to the module.
 * Every command is admin-only; every attribute has a strict policy, so malformed
 * input is refused by the genl core with an extack message before a handler runs.
 * Handlers take xp_views_lock around anything that touches views or hooks.
 */
#include <linux/bpf.h>
#include <linux/module.h>
#include <linux/security.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include "xprobes.h"
#include "uhooks/uhook.h"

/*
 * Hook offsets beyond 1 MiB cannot be inside one kernel function. (Not
 * const: 6.1's nla_policy points at ranges through a non-const pointer.)
 */
static struct netlink_range_validation xp_offset_range __ro_after_init = {
	.max = 1 << 20,
};

/* A user function decoded whole for a user hook: at most XP_UFUNC_MAX bytes. */
static struct netlink_range_validation xp_size_range __ro_after_init = {
	.min = 1,
	.max = XP_UFUNC_MAX,
};

static struct netlink_range_validation xp_count_range __ro_after_init = {
	.min = 1,
	.max = 1 << 20,
};

const struct nla_policy xp_policy[XPROBES_A_MAX + 1] = {
	[XPROBES_A_PID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[XPROBES_A_FLAGS]	= NLA_POLICY_MASK(NLA_U32, XPROBES_F_ALL),
	[XPROBES_A_SYMBOL]	= { .type = NLA_NUL_STRING, .len = XPROBES_SYM_MAX - 1 },
	[XPROBES_A_OFFSET]	= NLA_POLICY_FULL_RANGE(NLA_U32, &xp_offset_range),
	[XPROBES_A_ADDR]	= { .type = NLA_U64 },
	[XPROBES_A_LEN]		= NLA_POLICY_RANGE(NLA_U32, 1, XPROBES_PEEK_MAX),
	[XPROBES_A_HOOK_ID]	= NLA_POLICY_MIN(NLA_U32, 1),
	[XPROBES_A_COOKIE]	= { .type = NLA_U64 },
	[XPROBES_A_PROG_FD]	= NLA_POLICY_MIN(NLA_S32, 0),
	[XPROBES_A_COUNT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &xp_count_range),
	[XPROBES_A_SIZE]	= NLA_POLICY_FULL_RANGE(NLA_U32, &xp_size_range),
	[XPROBES_A_UH_BRANCHES]	= { .type = NLA_BINARY,
				    .len = XPROBES_UH_BRANCHES_MAX * sizeof(struct xprobes_uh_branch) },
	[XPROBES_A_UH_BRANCH_SPAN] = NLA_POLICY_RANGE(NLA_U32, 1, XPROBES_UH_BRANCH_WINDOW),
};

static const char *const xp_attr_names[XPROBES_A_MAX + 1] = {
	[XPROBES_A_PID]		= "pid",
	[XPROBES_A_FLAGS]	= "flags",
	[XPROBES_A_SYMBOL]	= "symbol",
	[XPROBES_A_OFFSET]	= "offset",
	[XPROBES_A_ADDR]	= "address",
	[XPROBES_A_LEN]		= "length",
	[XPROBES_A_HOOK_ID]	= "hook id",
	[XPROBES_A_COOKIE]	= "cookie",
	[XPROBES_A_PROG_FD]	= "program fd",
	[XPROBES_A_COUNT]	= "count",
	[XPROBES_A_SIZE]	= "function size",
	[XPROBES_A_UH_BRANCHES]	= "branches into the function (xprobectl finds them)",
	[XPROBES_A_UH_BRANCH_SPAN] = "how far the branches were looked for",
};

static struct genl_family xp_family;


/* Like GENL_REQ_ATTR_CHECK, plus a message a person can read. */
static bool xp_missing(struct genl_info *info, int attr)
{
	if (info->attrs[attr])
		return false;
	NL_SET_ERR_ATTR_MISS(info->extack, NULL, attr);
	NL_SET_ERR_MSG_FMT(info->extack, "missing attribute: %s", xp_attr_names[attr]);
	return true;
}

/*
 * GENL_ADMIN_PERM already demands CAP_NET_ADMIN; changing what other processes
 * execute in the kernel also takes CAP_SYS_ADMIN, as ptrace-like power does.
 */
static int xp_pre_doit(const struct xp_genl_op *ops, struct sk_buff *skb,
		       struct genl_info *info)
{
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "xprobes needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	return 0;
}

static int xp_dump_start(struct netlink_callback *cb)
{
	if (!netlink_capable(cb->skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(cb->extack, "xprobes needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	return 0;
}

static struct sk_buff *xp_reply_new(struct genl_info *info, u8 cmd, void **hdr, size_t size)
{
	struct sk_buff *msg = genlmsg_new(size, GFP_KERNEL);

	if (!msg)
		return NULL;
	*hdr = genlmsg_put_reply(msg, info, &xp_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int xp_reply_send(struct sk_buff *msg, void *hdr, struct genl_info *info, int err)
{
	if (err) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* ---- STATUS ---------------------------------------------------------------- */

static int xp_cmd_status(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	unsigned int views, hooks;
	u32 sys_threads, threads;
	void *hdr;
	int err;

	msg = xp_reply_new(info, XPROBES_CMD_STATUS, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	xp_sys_threads(&sys_threads, &threads);
	mutex_lock(&xp_views_lock);
	views = xp_nr_views;
	hooks = xp_nr_hooks;
	mutex_unlock(&xp_views_lock);
	err = nla_put_u64_64bit(msg, XPROBES_A_MISMATCH, atomic64_read(&xp_mismatches),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_AUDITS, atomic64_read(&xp_audits), XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_CONFLICTS, atomic64_read(&xp_conflicts),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_MIRRORED, atomic64_read(&xp_mirrored),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_BACKUPS_FIXED, atomic64_read(&xp_backups_fixed),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_KPROBES_REFUSED,
				atomic64_read(&xp_kprobes_refused), XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_TABLE_CHECKS, atomic64_read(&xp_table_checks),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_VIOLATIONS_TOTAL,
				atomic64_read(&xp_table_violations), XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_TP_YIELDS, atomic64_read(&xp_tp_yields),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_TP_SETTLES, atomic64_read(&xp_tp_settles),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_MOD_SYNCS, atomic64_read(&xp_mod_syncs),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_MOD_LATE, atomic64_read(&xp_mod_late),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_MOD_UNFINISHED,
				atomic64_read(&xp_mod_unfinished), XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_MOD_ENDED, atomic64_read(&xp_mod_hooks_ended),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_FORKS_FOLLOWED, atomic64_read(&xp_followed_forks),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_EXECS_FOLLOWED, atomic64_read(&xp_followed_execs),
				XPROBES_A_PAD) ||
	      nla_put_u64_64bit(msg, XPROBES_A_FOLLOWS_FAILED, atomic64_read(&xp_follow_failures),
				XPROBES_A_PAD) ||
	      (xp_k.mod_off && nla_put_string(msg, XPROBES_A_MOD_OFF, xp_k.mod_off)) ||
	      nla_put_u32(msg, XPROBES_A_SYS_THREADS, sys_threads) ||
	      nla_put_u32(msg, XPROBES_A_THREADS, threads) ||
	      nla_put_string(msg, XPROBES_A_VERSION, XPROBES_VERSION) ||
	      nla_put_u32(msg, XPROBES_A_ABI, XPROBES_ABI) ||
	      nla_put_u32(msg, XPROBES_A_MODE, xp_k.unsupported ?
			  XPROBES_MODE_UNSUPPORTED : XPROBES_MODE_VIEWS) ||
	      (xp_k.unsupported && nla_put_string(msg, XPROBES_A_REASON, xp_k.unsupported)) ||
	      nla_put_u32(msg, XPROBES_A_NR_VIEWS, views) ||
	      nla_put_u32(msg, XPROBES_A_NR_HOOKS, hooks) ||
	      nla_put_u64_64bit(msg, XPROBES_A_MEM_BYTES, atomic64_read(&xp_mem_bytes),
				XPROBES_A_PAD);
	return xp_reply_send(msg, hdr, info, err);
}

/* ---- views ------------------------------------------------------------------ */

/*
 * A view's process as the caller numbers it: replies and dumps run in the
 * requester's context, and a pid namespace must not see another's numbers
 * (0 when the process is not visible from the caller's namespace).
 */
static u32 xp_view_pid(struct xp_view *v)
{
	return pid_vnr(v->root);
}

static int xp_put_view(struct sk_buff *msg, struct xp_view *v)
{
	u64 mem = (u64)(v->nr_tables + v->nr_pages) * PAGE_SIZE;
	int i;

	for (i = 0; i < XP_XOL_PAGES; i++)
		mem += v->xol.pages[i] ? PAGE_SIZE : 0;
	return nla_put_u32(msg, XPROBES_A_PID, xp_view_pid(v)) ||
	       nla_put_u32(msg, XPROBES_A_FLAGS, v->flags) ||
	       nla_put_u32(msg, XPROBES_A_NR_PROCS, v->nr_members) ||
	       nla_put_u32(msg, XPROBES_A_NR_HOOKS, v->nr_hooks) ||
	       nla_put_u32(msg, XPROBES_A_NR_PAGES, v->nr_pages) ||
	       nla_put_u32(msg, XPROBES_A_NR_TABLES, v->nr_tables) ||
	       nla_put_u64_64bit(msg, XPROBES_A_MEM_BYTES, mem, XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_XOL, v->xol.va, XPROBES_A_PAD);
}

static struct xp_view *view_new(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;

	return xp_view_create(nla_get_u32(a[XPROBES_A_PID]),
			      a[XPROBES_A_FLAGS] ? nla_get_u32(a[XPROBES_A_FLAGS]) : 0,
			      NETLINK_CB(skb).sk, info->snd_portid, info->extack);
}

static int xp_cmd_view_new(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct xp_view *v;
	void *hdr;
	int err;

	if (xp_missing(info, XPROBES_A_PID))
		return -EINVAL;
	msg = xp_reply_new(info, XPROBES_CMD_VIEW_NEW, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&xp_views_lock);
	v = view_new(skb, info);
	if (v == ERR_PTR(-EINPROGRESS)) {
		/* The process's last view is being torn down: once, after it. */
		mutex_unlock(&xp_views_lock);
		xp_views_settle();
		mutex_lock(&xp_views_lock);
		v = view_new(skb, info);
		if (v == ERR_PTR(-EINPROGRESS))
			v = ERR_PTR(-EAGAIN);
	}
	if (IS_ERR(v)) {
		mutex_unlock(&xp_views_lock);
		nlmsg_free(msg);
		return PTR_ERR(v);
	}
	err = xp_put_view(msg, v);
	mutex_unlock(&xp_views_lock);
	return xp_reply_send(msg, hdr, info, err);
}

static int xp_cmd_view_del(struct sk_buff *skb, struct genl_info *info)
{
	struct xp_view *v;
	u64 before, after;

	if (xp_missing(info, XPROBES_A_PID))
		return -EINVAL;
	mutex_lock(&xp_views_lock);
	before = xp_uhooks_handed();
	v = xp_view_find_pid(nla_get_u32(info->attrs[XPROBES_A_PID]), info->extack);
	if (!IS_ERR(v))
		xp_view_close(v, NULL);
	after = xp_uhooks_handed();
	mutex_unlock(&xp_views_lock);
	if (!IS_ERR(v))
		xp_views_settle();	/* the reply says it is gone */
	if (after != before)
		xp_uhooks_settle(after);	/* its processes have their text back */
	return PTR_ERR_OR_ZERO(v);
}

/*
 * The view PID runs on, which need not be its own (a process forked by a
 * traced one runs on its parent's): how xprobectl tells a process it
 * already covers from one it must give a view (a cgroup's newcomers).
 */
static int xp_cmd_view_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct xp_view *v;
	void *hdr;
	int err;

	if (xp_missing(info, XPROBES_A_PID))
		return -EINVAL;
	msg = xp_reply_new(info, XPROBES_CMD_VIEW_GET, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&xp_views_lock);
	v = xp_view_find_pid(nla_get_u32(info->attrs[XPROBES_A_PID]), info->extack);
	if (IS_ERR(v)) {
		mutex_unlock(&xp_views_lock);
		nlmsg_free(msg);
		return PTR_ERR(v);
	}
	err = xp_put_view(msg, v);
	mutex_unlock(&xp_views_lock);
	return xp_reply_send(msg, hdr, info, err);
}

static int xp_dump_views(struct sk_buff *skb, struct netlink_callback *cb)
{
	long skip = cb->args[0], i = 0;
	struct xp_view *v;
	int err = 0;

	mutex_lock(&xp_views_lock);
	xp_for_each_open_view(v) {
		void *hdr;

		if (i++ < skip)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &xp_family, NLM_F_MULTI, XPROBES_CMD_VIEW_GET);
		if (!hdr || xp_put_view(skb, v)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			i--;
			err = skb->len ? 0 : -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
	}
	mutex_unlock(&xp_views_lock);
	cb->args[0] = i;
	return err ?: skb->len;
}

/* ---- hooks ------------------------------------------------------------------ */

/* A hook: what every hook has, then its instruction or its tracepoint's sites. */
static int xp_put_hook(struct sk_buff *msg, struct xp_hook *h)
{
	const char *why = READ_ONCE(h->why_int3);	/* a kprobe's registration may set it */
	struct xp_hook_stats st;

	xp_hook_stats(h, &st);
	if (nla_put_u32(msg, XPROBES_A_HOOK_ID, h->id) ||
	    nla_put_u32(msg, XPROBES_A_PID, xp_view_pid(h->view)) ||
	    nla_put_string(msg, XPROBES_A_SYMBOL, h->sym) ||
	    nla_put_u32(msg, XPROBES_A_PROG_ID, xp_hook_prog_id(h)) ||
	    nla_put_u64_64bit(msg, XPROBES_A_ADDR, h->addr, XPROBES_A_PAD) ||
	    nla_put_u64_64bit(msg, XPROBES_A_COOKIE, h->cookie, XPROBES_A_PAD) ||
	    nla_put_u64_64bit(msg, XPROBES_A_HITS, st.hits, XPROBES_A_PAD) ||
	    nla_put_u64_64bit(msg, XPROBES_A_DROPPED, st.dropped, XPROBES_A_PAD) ||
	    nla_put_u64_64bit(msg, XPROBES_A_NESTED, st.nested, XPROBES_A_PAD))
		return -EMSGSIZE;
	if (h->tph)
		return nla_put_u32(msg, XPROBES_A_FLAGS, xp_tphook_flags(h) |
				   (h->any_context ? XPROBES_F_ANY_CONTEXT : 0)) ||
		       nla_put_u32(msg, XPROBES_A_NR_SITES, xp_tphook_sites(h));
	return nla_put_u32(msg, XPROBES_A_FLAGS, (READ_ONCE(h->broken) ? XPROBES_HOOK_BROKEN : 0) |
			   (READ_ONCE(h->mode) == XP_HOOK_CALL ?
			    (h->ninsn > 1 ? XPROBES_HOOK_JUMP : XPROBES_HOOK_CALL) : 0) |
			   (h->call_ok ? 0 : XPROBES_F_TRAP) |
			   (h->jump_pending ? XPROBES_HOOK_PENDING : 0) |
			   (h->internal ? XPROBES_HOOK_INTERNAL : 0) |
			   (h->redirect ? XPROBES_HOOK_GUARD : 0) |
			   (h->internal == xp_usigret_fire ? XPROBES_HOOK_SIGRET : 0) |
			   (h->urec_role ? XPROBES_F_RECORDS : 0) |
			   (h->urec_role && h->view->urec_calls ? XPROBES_F_CALLS : 0) |
			   (h->urec_role && h->view->urec_sums ? XPROBES_F_SUMS : 0) |
			   (h->any_context ? XPROBES_F_ANY_CONTEXT : 0)) ||
	       nla_put_u32(msg, XPROBES_A_OFFSET, h->sym_off) ||
	       nla_put_u32(msg, XPROBES_A_COVER, h->cover) ||
	       nla_put_u32(msg, XPROBES_A_NR_INSNS, h->ninsn) ||
	       (why && nla_put_string(msg, XPROBES_A_REASON, why));
}

static int xp_cmd_hook_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct sk_buff *msg;
	struct xp_view *v;
	struct xp_hook *h;
	u32 off;
	void *hdr;
	int err;

	if (xp_missing(info, XPROBES_A_PID) || xp_missing(info, XPROBES_A_SYMBOL))
		return -EINVAL;
	if (a[XPROBES_A_OFFSET])
		off = nla_get_u32(a[XPROBES_A_OFFSET]);
	msg = xp_reply_new(info, XPROBES_CMD_HOOK_ADD, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&xp_views_lock);
	/* kprobes validates through the caller's CR3: it must see the shared text. */
	if (current->mm && xp_view_of_mm(current->mm)) {
		NL_SET_ERR_MSG(info->extack, "the caller is itself traced: add hooks from an untraced process");
		err = -EPERM;
		goto fail;
	}
	v = xp_view_find_pid(nla_get_u32(a[XPROBES_A_PID]), info->extack);
	if (IS_ERR(v)) {
		err = PTR_ERR(v);
		goto fail;
	}
	h = xp_hook_add(v, nla_data(a[XPROBES_A_SYMBOL]), a[XPROBES_A_OFFSET] ? &off : NULL,
			a[XPROBES_A_COOKIE] ? nla_get_u64(a[XPROBES_A_COOKIE]) : 0,
			a[XPROBES_A_FLAGS] ? nla_get_u32(a[XPROBES_A_FLAGS]) : 0,
			info->extack);
	if (IS_ERR(h)) {
		err = PTR_ERR(h);
		goto fail;
	}
	err = xp_put_hook(msg, h);
	mutex_unlock(&xp_views_lock);
	return xp_reply_send(msg, hdr, info, err);
fail:
	mutex_unlock(&xp_views_lock);
	nlmsg_free(msg);
	return err;
}

static int xp_cmd_hook_del(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (xp_missing(info, XPROBES_A_HOOK_ID))
		return -EINVAL;
	mutex_lock(&xp_views_lock);
	err = xp_hook_del(nla_get_u32(info->attrs[XPROBES_A_HOOK_ID]), info->extack);
	mutex_unlock(&xp_views_lock);
	return err;
}

static int xp_cmd_hook_prog(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct bpf_prog *prog = NULL;
	struct xp_hook *h;
	int err = 0;

	if (xp_missing(info, XPROBES_A_HOOK_ID))
		return -EINVAL;
	mutex_lock(&xp_views_lock);
	h = xp_hook_find(nla_get_u32(a[XPROBES_A_HOOK_ID]), info->extack);
	if (!h) {
		err = -ENOENT;
	} else if (h->internal) {
		NL_SET_ERR_MSG(info->extack, "this hook runs the module's own handler, not BPF");
		err = -EBUSY;
	} else if (a[XPROBES_A_PROG_FD]) {
		/* Resolved in the caller's file table: genetlink runs in its context. */
		int fd = nla_get_s32(a[XPROBES_A_PROG_FD]);

		prog = h->tph ? xp_tphook_prog_get(h, fd, info->extack) :
				xp_prog_get(fd, info->extack);
		if (IS_ERR(prog))
			err = PTR_ERR(prog);
	}
	if (!err && h->tph)
		err = xp_tphook_set_prog(h, prog);
	else if (!err)
		xp_hook_set_prog(h, prog);
	mutex_unlock(&xp_views_lock);
	if (err && !IS_ERR_OR_NULL(prog))
		bpf_prog_put(prog);
	return err;
}

static int xp_put_ended(struct sk_buff *msg, struct xp_view *v, const struct xp_ended *e)
{
	return nla_put_u32(msg, XPROBES_A_HOOK_ID, e->id) ||
	       nla_put_u32(msg, XPROBES_A_PID, xp_view_pid(v)) ||
	       nla_put_string(msg, XPROBES_A_SYMBOL, e->sym) ||
	       nla_put_u32(msg, XPROBES_A_OFFSET, e->off) ||
	       nla_put_u64_64bit(msg, XPROBES_A_ADDR, e->addr, XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_HITS, e->hits, XPROBES_A_PAD) ||
	       nla_put_u32(msg, XPROBES_A_FLAGS, XPROBES_HOOK_ENDED) ||
	       nla_put_string(msg, XPROBES_A_REASON, e->reason);
}

/*
 * After the live hooks, those the kernel took away (cb->args[1] counts the
 * rows sent, over every view's last XP_ENDED_MAX). Under xp_views_lock.
 */
static int dump_ended(struct sk_buff *skb, struct netlink_callback *cb, u32 pid)
{
	unsigned long k = 0;
	struct xp_view *v;

	xp_for_each_open_view(v) {
		unsigned int n = min_t(unsigned int, v->nr_ended, XP_ENDED_MAX), i;

		if (pid && xp_view_pid(v) != pid)
			continue;
		for (i = 0; i < n; i++, k++) {
			void *hdr;

			if (k < cb->args[1])
				continue;
			hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
					  &xp_family, NLM_F_MULTI, XPROBES_CMD_HOOK_GET);
			if (!hdr || xp_put_ended(skb, v, &v->ended[i])) {
				if (hdr)
					genlmsg_cancel(skb, hdr);
				return skb->len ? 0 : -EMSGSIZE;
			}
			genlmsg_end(skb, hdr);
			cb->args[1] = k + 1;
		}
	}
	return 0;
}

static int xp_dump_hooks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **a = xp_dump_attrs(cb);
	u32 id = cb->args[0] ?: 1, pid = 0;
	struct xp_hook *h;
	int err = 0;

	if (a[XPROBES_A_PID])
		pid = nla_get_u32(a[XPROBES_A_PID]);
	mutex_lock(&xp_views_lock);
	for (;;) {
		u32 this = id;
		void *hdr;

		h = xp_hook_next(&id);
		if (!h)
			break;
		if (pid && xp_view_pid(h->view) != pid)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &xp_family, NLM_F_MULTI, XPROBES_CMD_HOOK_GET);
		if (!hdr || xp_put_hook(skb, h)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			id = this;
			err = skb->len ? 0 : -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
	}
	if (!h && !err)
		err = dump_ended(skb, cb, pid);
	mutex_unlock(&xp_views_lock);
	cb->args[0] = id;
	return err ?: skb->len;
}

/* ---- user hooks ------------------------------------------------------------- */

static int xp_put_uhook(struct sk_buff *msg, struct xp_uhook *h)
{
	u32 kind = h->trap ? XPROBES_F_TRAP :
		   h->ninsn > 1 ? XPROBES_HOOK_JUMP : XPROBES_HOOK_CALL;

	return nla_put_u32(msg, XPROBES_A_HOOK_ID, h->id) ||
	       nla_put_u32(msg, XPROBES_A_PID, h->pid) ||
	       nla_put_u32(msg, XPROBES_A_FLAGS, kind |
			   (xp_uhook_gone(h) ? XPROBES_UHOOK_GONE : 0) |
			   (h->events ? XPROBES_UHOOK_EVENTS : 0) |
			   (h->returns ? XPROBES_UHOOK_RETURNS : 0) |
			   (h->records ? XPROBES_UHOOK_RECORDS : 0)) ||
	       nla_put_u64_64bit(msg, XPROBES_A_COOKIE, h->cookie, XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_HITS, xp_uevent_hits(h, false), XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_RET_HITS, xp_uevent_hits(h, true), XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_RET_MISSED, atomic64_read(&h->ret_missed),
				 XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_CALLS_MISSED, atomic64_read(&h->calls_missed),
				 XPROBES_A_PAD) ||
	       nla_put_u32(msg, XPROBES_A_OFFSET, h->addr - h->func) ||
	       nla_put_u32(msg, XPROBES_A_COVER, h->cover) ||
	       nla_put_u32(msg, XPROBES_A_NR_INSNS, h->ninsn) ||
	       nla_put_u64_64bit(msg, XPROBES_A_ADDR, h->addr, XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_XOL, h->slot, XPROBES_A_PAD) ||
	       nla_put_u64_64bit(msg, XPROBES_A_TRAPPED, atomic64_read(&h->trapped), XPROBES_A_PAD);
}

/* XPROBES_A_UH_BRANCHES: whole entries, each landing in the window, reserved 0. */
static int uh_branches(const struct nlattr *attr, struct xp_uhook_req *req,
		       struct netlink_ext_ack *extack)
{
	const struct xprobes_uh_branch *b = nla_data(attr);
	unsigned int i, n = nla_len(attr) / sizeof(*b);

	if (nla_len(attr) % sizeof(*b)) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "branches: not a whole number of "
				    "struct xprobes_uh_branch");
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		if (!b[i].to || b[i].to >= XPROBES_UH_BRANCH_WINDOW || b[i].reserved) {
			NL_SET_BAD_ATTR(extack, attr);
			NL_SET_ERR_MSG_FMT(extack, "branch %u: lands outside bytes 1-%u of the "
					   "function, or its reserved field is not 0", i,
					   XPROBES_UH_BRANCH_WINDOW - 1);
			return -EINVAL;
		}
	req->branches = b;
	req->nbranches = n;
	return 0;
}

static int xp_cmd_uhook_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct xp_uhook_req req;
	struct xp_uhook *h;
	u32 flags = 0;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (xp_missing(info, XPROBES_A_PID) || xp_missing(info, XPROBES_A_ADDR) ||
	    xp_missing(info, XPROBES_A_SIZE) || xp_missing(info, XPROBES_A_UH_BRANCHES))
		return -EINVAL;
	err = uh_branches(a[XPROBES_A_UH_BRANCHES], &req, info->extack);
	if (err)
		return err;
	if (a[XPROBES_A_FLAGS])
		flags = nla_get_u32(a[XPROBES_A_FLAGS]);
	req.pid = nla_get_u32(a[XPROBES_A_PID]);
	req.func = nla_get_u64(a[XPROBES_A_ADDR]);
	req.size = nla_get_u32(a[XPROBES_A_SIZE]);
	req.flags = flags;
	req.cookie = a[XPROBES_A_COOKIE] ? nla_get_u64(a[XPROBES_A_COOKIE]) : 0;
	req.branch_span = a[XPROBES_A_UH_BRANCH_SPAN] ? nla_get_u32(a[XPROBES_A_UH_BRANCH_SPAN]) :
			  XPROBES_UH_BRANCH_WINDOW;
	if (flags & ~(XPROBES_F_EVENTS | XPROBES_F_RETURNS | XPROBES_F_RECORDS |
		      XPROBES_F_UNWINDER | XPROBES_F_TRAP)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_FLAGS],
				    "a user hook takes no flag but events, records, returns, "
				    "unwinder and trap");
		return -EINVAL;
	}
	if ((flags & XPROBES_F_UNWINDER) &&
	    (flags & (XPROBES_F_EVENTS | XPROBES_F_RETURNS | XPROBES_F_RECORDS)) !=
	    XPROBES_F_EVENTS) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_FLAGS],
				    "an unwinder hook has events, and no returns or records: its "
				    "own return address is the first the unwinder reads");
		return -EINVAL;
	}
	if ((flags & XPROBES_F_EVENTS) && (flags & XPROBES_F_RECORDS)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_FLAGS],
				    "a user hook has events or records, not both");
		return -EINVAL;
	}
	if ((flags & XPROBES_F_RETURNS) && !(flags & (XPROBES_F_EVENTS | XPROBES_F_RECORDS))) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_FLAGS],
				    "returns need events or records (XPROBES_F_EVENTS, XPROBES_F_RECORDS)");
		return -EINVAL;
	}
	msg = xp_reply_new(info, XPROBES_CMD_UHOOK_ADD, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	/* What waits on the process or its file, without the lock (uhook.c). */
	h = xp_uhook_prepare(&req, info->extack);
	if (IS_ERR(h)) {
		nlmsg_free(msg);
		return PTR_ERR(h);
	}
	mutex_lock(&xp_views_lock);
	err = xp_uhook_install(h, info->extack);
	if (err) {
		mutex_unlock(&xp_views_lock);
		nlmsg_free(msg);
		return err;
	}
	err = xp_put_uhook(msg, h);
	mutex_unlock(&xp_views_lock);
	return xp_reply_send(msg, hdr, info, err);
}

/* ---- UREC_SUMS --------------------------------------------------------------- */

#define XP_USUMS_PER_MSG	8	/* 2.8 KiB: one page's reply */

static int xp_cmd_urec_sums(struct sk_buff *skb, struct genl_info *info)
{
	struct xprobes_usum *out;
	struct sk_buff *msg;
	u32 from = 0;
	void *hdr;
	int n, err;

	if (xp_missing(info, XPROBES_A_PID))
		return -EINVAL;
	if (info->attrs[XPROBES_A_COOKIE]) {
		u64 c = nla_get_u64(info->attrs[XPROBES_A_COOKIE]);

		if (c >= XPROBES_USUM_FUNCS) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[XPROBES_A_COOKIE],
					    "sums are kept for cookies under 4096");
			return -EINVAL;
		}
		from = c;
	}
	out = kmalloc_array(XP_USUMS_PER_MSG, sizeof(*out), GFP_KERNEL);
	msg = xp_reply_new(info, XPROBES_CMD_UREC_SUMS, &hdr, NLMSG_GOODSIZE);
	if (!out || !msg) {
		kfree(out);
		nlmsg_free(msg);
		return -ENOMEM;
	}
	mutex_lock(&xp_views_lock);
	n = xp_urec_sums_read(nla_get_u32(info->attrs[XPROBES_A_PID]), NETLINK_CB(skb).sk, &from,
			      out, XP_USUMS_PER_MSG);
	mutex_unlock(&xp_views_lock);
	if (n < 0) {
		NL_SET_ERR_MSG(info->extack, "no sums for that process: its view has none "
			       "(records hooks with the sums flag), or ended and was not yours");
		kfree(out);
		nlmsg_free(msg);
		return n;
	}
	err = nla_put(msg, XPROBES_A_USUMS, n * sizeof(*out), out) ||
	      (from < XPROBES_USUM_FUNCS &&
	       nla_put_u64_64bit(msg, XPROBES_A_COOKIE, from, XPROBES_A_PAD));
	kfree(out);
	return xp_reply_send(msg, hdr, info, err);
}

static int xp_cmd_uhook_del(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (xp_missing(info, XPROBES_A_HOOK_ID))
		return -EINVAL;
	mutex_lock(&xp_views_lock);
	err = xp_uhook_del(nla_get_u32(info->attrs[XPROBES_A_HOOK_ID]), info->extack);
	mutex_unlock(&xp_views_lock);
	return err;
}

static int xp_dump_uhooks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **a = xp_dump_attrs(cb);
	unsigned long id = cb->args[0] ?: 1;
	struct xp_uhook *h;
	u32 pid = 0;
	int err = 0;

	if (a[XPROBES_A_PID])
		pid = nla_get_u32(a[XPROBES_A_PID]);
	mutex_lock(&xp_views_lock);
	for (;;) {
		unsigned long this = id;
		void *hdr;

		h = xp_uhook_next(&id);
		if (!h)
			break;
		if (pid && h->pid != pid)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &xp_family, NLM_F_MULTI, XPROBES_CMD_UHOOK_GET);
		if (!hdr || xp_put_uhook(skb, h)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			id = this;
			err = skb->len ? 0 : -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
	}
	if (!h && !err)
		err = dump_ended(skb, cb, pid);
	mutex_unlock(&xp_views_lock);
	cb->args[0] = id;
	return err ?: skb->len;
}

/* ---- peek and walk ---------------------------------------------------------- */

/*
 * peek reads kernel memory and walk shows page-table entries and physical
 * addresses (the KASLR layout): what lockdown=confidentiality keeps from
 * root, as it does /proc/kcore.
 */
static bool xp_locked_down(struct netlink_ext_ack *extack)
{
	if (!security_locked_down(LOCKDOWN_KCORE))
		return false;
	NL_SET_ERR_MSG(extack, "the kernel is locked down (confidentiality): peek and walk would read kernel memory");
	return true;
}

static int xp_cmd_peek(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	unsigned long addr, size;
	struct sk_buff *msg;
	u32 pid, len = 16;
	void *hdr;
	u8 *buf;
	int err;

	if (xp_missing(info, XPROBES_A_PID))
		return -EINVAL;
	if (xp_locked_down(info->extack))
		return -EPERM;
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
		/* A module's symbol too (MODULE:NAME): xp_sym_lookup() is the kernel's only. */
		if (xp_sym_resolve(nla_data(a[XPROBES_A_SYMBOL]), &addr, &size))
			addr = 0;
		if (!addr) {
			NL_SET_ERR_MSG_ATTR(info->extack, a[XPROBES_A_SYMBOL],
					    "unknown kernel symbol");
			return -ENOENT;
		}
		if (a[XPROBES_A_OFFSET])
			addr += nla_get_u32(a[XPROBES_A_OFFSET]);
	}

	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = xp_peek(pid, addr, buf, len, info->extack);
	if (err)
		goto out;
	err = -ENOMEM;
	msg = xp_reply_new(info, XPROBES_CMD_PEEK, &hdr, nla_total_size(len) + 64);
	if (!msg)
		goto out;
	err = xp_reply_send(msg, hdr, info,
			    nla_put_u64_64bit(msg, XPROBES_A_ADDR, addr, XPROBES_A_PAD) ||
			    nla_put(msg, XPROBES_A_BYTES, len, buf));
out:
	kfree(buf);
	return err;
}

/*
 * WALK: the page-table entries a CPU would use for each 4 KiB page of a range
 * in one process, read by a plain software walk of its pgd. A test oracle for
 * view structure (which pages are private, their flags, what stays shared).
 */
static int xp_dump_walk(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **a = xp_dump_attrs(cb);
	unsigned long start, addr;
	struct mm_struct *mm;
	u32 count = 1, i;
	pgd_t *pgd;
	int err = 0;

	/*
	 * Refusals are made here, not in a start callback: 6.1 gives .start no
	 * extack, a dump call has one on every kernel (the error and its
	 * message come back in NLMSG_DONE).
	 */
	if (xp_locked_down(cb->extack))
		return -EPERM;
	if (a[XPROBES_A_FLAGS] && (nla_get_u32(a[XPROBES_A_FLAGS]) & XPROBES_F_USER_TABLES) &&
	    !boot_cpu_has(X86_FEATURE_PTI)) {
		NL_SET_ERR_MSG(cb->extack, "no page-table isolation here: there are no user-mode tables");
		return -EOPNOTSUPP;
	}
	if (!a[XPROBES_A_PID] || !a[XPROBES_A_ADDR]) {
		NL_SET_ERR_MSG(cb->extack, "walk needs a pid and an address");
		return -EINVAL;
	}

	if (a[XPROBES_A_COUNT])
		count = nla_get_u32(a[XPROBES_A_COUNT]);
	start = nla_get_u64(a[XPROBES_A_ADDR]) & PAGE_MASK;
	if (start < __START_KERNEL_map || start + (u64)count * PAGE_SIZE - 1 < start ||
	    start + (u64)count * PAGE_SIZE - 1 > MODULES_END) {
		NL_SET_ERR_MSG(cb->extack, "walk covers the kernel image and module area only");
		return -ERANGE;
	}
	mm = xp_get_mm(nla_get_u32(a[XPROBES_A_PID]), cb->extack);
	if (!mm)
		return -ESRCH;

	pgd = mm->pgd;
#if defined(CONFIG_MITIGATION_PAGE_TABLE_ISOLATION) || defined(CONFIG_PAGE_TABLE_ISOLATION)
	if (a[XPROBES_A_FLAGS] && (nla_get_u32(a[XPROBES_A_FLAGS]) & XPROBES_F_USER_TABLES))
		pgd = kernel_to_user_pgdp(pgd);	/* checked above: PTI is on */
#endif
	mutex_lock(&xp_views_lock);
	for (i = cb->args[0]; i < count; i++) {
		struct xp_walk_result w;
		void *hdr;
		int miss;

		addr = start + (unsigned long)i * PAGE_SIZE;
		miss = xp_walk(pgd, addr, &w);
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &xp_family, NLM_F_MULTI, XPROBES_CMD_WALK);
		if (!hdr ||
		    nla_put_u64_64bit(skb, XPROBES_A_ADDR, addr, XPROBES_A_PAD) ||
		    nla_put_u32(skb, XPROBES_A_LEVEL, miss ? 0 : w.level) ||
		    nla_put_u64_64bit(skb, XPROBES_A_PHYS, miss ? 0 : w.phys, XPROBES_A_PAD) ||
		    nla_put_u64_64bit(skb, XPROBES_A_PGD_E, w.pgd_e, XPROBES_A_PAD) ||
		    nla_put_u64_64bit(skb, XPROBES_A_P4D_E, w.p4d_e, XPROBES_A_PAD) ||
		    nla_put_u64_64bit(skb, XPROBES_A_PUD_E, w.pud_e, XPROBES_A_PAD) ||
		    nla_put_u64_64bit(skb, XPROBES_A_PMD_E, w.pmd_e, XPROBES_A_PAD) ||
		    nla_put_u64_64bit(skb, XPROBES_A_PTE_E, w.pte_e, XPROBES_A_PAD)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			err = skb->len ? 0 : -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
	}
	mutex_unlock(&xp_views_lock);
	mmput(mm);
	cb->args[0] = i;
	return err ?: skb->len;
}

static int xp_cmd_audit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	unsigned int bad;
	void *hdr;

	msg = xp_reply_new(info, XPROBES_CMD_AUDIT, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&xp_views_lock);
	bad = xp_audit_all();
	mutex_unlock(&xp_views_lock);
	return xp_reply_send(msg, hdr, info,
			     nla_put_u64_64bit(msg, XPROBES_A_MISMATCH, bad, XPROBES_A_PAD) ||
			     nla_put_u64_64bit(msg, XPROBES_A_AUDITS, atomic64_read(&xp_audits),
					       XPROBES_A_PAD));
}

static int xp_cmd_tables(struct sk_buff *skb, struct genl_info *info)
{
	struct xp_tables_report rep;
	struct sk_buff *msg;
	unsigned int bad;
	void *hdr;

	msg = xp_reply_new(info, XPROBES_CMD_TABLES, &hdr, NLMSG_GOODSIZE);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&xp_views_lock);
	bad = xp_tables_check(&rep);
	mutex_unlock(&xp_views_lock);
	return xp_reply_send(msg, hdr, info,
			     nla_put_u64_64bit(msg, XPROBES_A_VIOLATIONS, bad, XPROBES_A_PAD) ||
			     nla_put_u64_64bit(msg, XPROBES_A_VIOLATIONS_TOTAL,
					       atomic64_read(&xp_table_violations), XPROBES_A_PAD) ||
			     nla_put_u64_64bit(msg, XPROBES_A_TABLE_CHECKS,
					       atomic64_read(&xp_table_checks), XPROBES_A_PAD) ||
			     nla_put_u32(msg, XPROBES_A_NR_VIEWS, rep.views) ||
			     nla_put_u32(msg, XPROBES_A_NR_REGIONS, rep.regions) ||
			     nla_put_u32(msg, XPROBES_A_NR_PROCS, rep.members) ||
			     (bad && nla_put_string(msg, XPROBES_A_REASON, rep.first)));
}

/* ---- events --------------------------------------------------------------- */

static bool xp_netlink_up;	/* the family is registered; under xp_views_lock */

/* An event on the multicast group; @sym (and @id) only for a hook's. */
static void announce(u8 cmd, u32 pid, const char *reason, u32 flags, u32 id, const char *sym)
{
	struct sk_buff *msg;
	void *hdr;

	lockdep_assert_held(&xp_views_lock);
	if (!xp_netlink_up)
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &xp_family, 0, cmd);
	if (!hdr || nla_put_u32(msg, XPROBES_A_PID, pid) ||
	    nla_put_string(msg, XPROBES_A_REASON, reason) ||
	    (flags && nla_put_u32(msg, XPROBES_A_FLAGS, flags)) ||
	    (sym && (nla_put_u32(msg, XPROBES_A_HOOK_ID, id) ||
		     nla_put_string(msg, XPROBES_A_SYMBOL, sym)))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&xp_family, msg, 0, 0, GFP_KERNEL);
}

/* Announce a hook the kernel took away (views/modspace.c). Under xp_views_lock. */
void xp_netlink_hook_ended(u32 pid, u32 id, const char *sym, const char *reason)
{
	announce(XPROBES_CMD_HOOK_ENDED, pid, reason, 0, id, sym);
}

/* Announce a view that ended on its own. Called under xp_views_lock. */
void xp_netlink_view_ended(u32 pid, const char *reason)
{
	announce(XPROBES_CMD_VIEW_ENDED, pid, reason, 0, 0, NULL);
}

/* Announce that every user hook of @pid went (useccomp.c). Under xp_views_lock. */
void xp_netlink_uhooks_gone(u32 pid, const char *reason, u32 flags)
{
	announce(XPROBES_CMD_UHOOKS_GONE, pid, reason, flags, 0, NULL);
}

static const struct genl_ops xp_ops[] = {
	{ .cmd = XPROBES_CMD_STATUS,	.doit = xp_cmd_status,	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_VIEW_NEW,	.doit = xp_cmd_view_new,  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_VIEW_DEL,	.doit = xp_cmd_view_del,  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_VIEW_GET,	.doit = xp_cmd_view_get,  .start = xp_dump_start,
	  .dumpit = xp_dump_views,	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_HOOK_ADD,	.doit = xp_cmd_hook_add,  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_HOOK_DEL,	.doit = xp_cmd_hook_del,  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_HOOK_PROG,	.doit = xp_cmd_hook_prog, .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_HOOK_GET,	.start = xp_dump_start,	  .dumpit = xp_dump_hooks,
	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_PEEK,	.doit = xp_cmd_peek,	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_WALK,	.start = xp_dump_start, .dumpit = xp_dump_walk,
	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_AUDIT,	.doit = xp_cmd_audit,	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_TABLES,	.doit = xp_cmd_tables,	  .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_UHOOK_ADD,	.doit = xp_cmd_uhook_add, .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_UREC_SUMS,	.doit = xp_cmd_urec_sums, .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_UHOOK_DEL,	.doit = xp_cmd_uhook_del, .flags = GENL_ADMIN_PERM },
	{ .cmd = XPROBES_CMD_UHOOK_GET,	.start = xp_dump_start,	  .dumpit = xp_dump_uhooks,
	  .flags = GENL_ADMIN_PERM },
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
	/*
	 * Every command takes xp_views_lock for what it shares; none needs
	 * genl_mutex, which would otherwise hold every xprobes command (and
	 * every other family's) behind a UHOOK_ADD waiting on a process's
	 * file.
	 */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.pre_doit	= xp_pre_doit,
	.ops		= xp_ops,
	.n_ops		= ARRAY_SIZE(xp_ops),
	.resv_start_op	= XPROBES_CMD_MAX + 1,
	.mcgrps		= xp_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(xp_mcgrps),
};

int xp_netlink_init(void)
{
	int err = genl_register_family(&xp_family);

	if (!err) {
		mutex_lock(&xp_views_lock);
		xp_netlink_up = true;
		mutex_unlock(&xp_views_lock);
	}
	return err;
}

void xp_netlink_exit(void)
{
	struct xp_view *v;

	mutex_lock(&xp_views_lock);
	/*
	 * Tell the controllers whose hooks are about to go: one that gave its
	 * hooks a BPF program holds no reference on this module (only a
	 * program on the xprobes_hook tracepoint does), so rmmod goes through
	 * under it and it must learn that its counts stop here.
	 */
	list_for_each_entry(v, &xp_views, node)
		xp_netlink_view_ended(v->root_nr, "the xprobes module was unloaded");
	xp_netlink_up = false;
	mutex_unlock(&xp_views_lock);
	genl_unregister_family(&xp_family);
}
