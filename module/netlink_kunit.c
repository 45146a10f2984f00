// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: netlink.c's attribute policy, which refuses before a handler runs
 * (a separate object, built only for the debug kernel: make kunit).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <net/genetlink.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <asm/ibt.h>
#include <asm/text-patching.h>
#include "xprobes.h"

struct nl_case {
	const char *name;
	int type;
	int len;		/* payload bytes */
	u64 val;		/* little-endian payload, or a fill byte for strings */
	bool string;
	int err;		/* nla_parse() result */
};

static const struct nl_case nl_cases[] = {
	{ "pid 1",			XPROBES_A_PID, 4, 1, false, 0 },
	{ "pid 0",			XPROBES_A_PID, 4, 0, false, -ERANGE },
	{ "pid as u64",			XPROBES_A_PID, 8, 1, false, -EINVAL },
	{ "pid as u8",			XPROBES_A_PID, 1, 1, false, -EINVAL },
	{ "flags known",		XPROBES_A_FLAGS, 4, XPROBES_F_ALL, false, 0 },
	/* the known flags are the low bits, all set in XPROBES_F_ALL: one past them */
	{ "flags unknown bit",		XPROBES_A_FLAGS, 4, XPROBES_F_ALL + 1, false, -EINVAL },
	{ "flags broken bit",		XPROBES_A_FLAGS, 4, XPROBES_HOOK_BROKEN, false, -EINVAL },
	{ "offset 1 MiB",		XPROBES_A_OFFSET, 4, 1 << 20, false, 0 },
	{ "offset past 1 MiB",		XPROBES_A_OFFSET, 4, (1 << 20) + 1, false, -ERANGE },
	{ "len 0",			XPROBES_A_LEN, 4, 0, false, -ERANGE },
	{ "len max",			XPROBES_A_LEN, 4, XPROBES_PEEK_MAX, false, 0 },
	{ "len past max",		XPROBES_A_LEN, 4, XPROBES_PEEK_MAX + 1, false, -ERANGE },
	{ "count 0",			XPROBES_A_COUNT, 4, 0, false, -ERANGE },
	{ "hook id 0",			XPROBES_A_HOOK_ID, 4, 0, false, -ERANGE },
	{ "addr as u32",		XPROBES_A_ADDR, 4, 1, false, -EINVAL },
	{ "cookie u64",			XPROBES_A_COOKIE, 8, ~0ULL, false, 0 },
	{ "symbol",			XPROBES_A_SYMBOL, 9, 's', true, 0 },
	{ "symbol without NUL",		XPROBES_A_SYMBOL, 8, 's', false, -EINVAL },
	{ "symbol at the limit",	XPROBES_A_SYMBOL, XPROBES_SYM_MAX, 's', true, 0 },
	{ "symbol too long",		XPROBES_A_SYMBOL, XPROBES_SYM_MAX + 1, 's', true, -EINVAL },
	{ "unknown attribute",		XPROBES_A_MAX + 1, 4, 0, false, -EINVAL },
	{ "reply-only attribute",	XPROBES_A_HITS, 8, 1, false, -EINVAL },
};

static void nl_policy_cases(struct kunit *test)
{
	const struct nl_case *c;
	size_t room = nla_total_size(XPROBES_SYM_MAX + 8);
	struct nlattr *tb[XPROBES_A_MAX + 1];
	struct nlattr *nla = kunit_kzalloc(test, room, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, nla);
	for (c = nl_cases; c < nl_cases + ARRAY_SIZE(nl_cases); c++) {
		struct netlink_ext_ack ext = {};
		int err;

		memset(nla, 0, room);
		nla->nla_type = c->type;
		nla->nla_len = nla_attr_size(c->len);
		if (c->string || c->type == XPROBES_A_SYMBOL) {
			memset(nla_data(nla), c->val, c->len);
			if (c->string)
				((char *)nla_data(nla))[c->len - 1] = 0;
		} else {
			memcpy(nla_data(nla), &c->val, c->len);
		}
		err = nla_parse(tb, XPROBES_A_MAX, nla, nla_total_size(c->len), xp_policy, &ext);
		KUNIT_EXPECT_EQ_MSG(test, err, c->err, "%s", c->name);
		if (err)
			KUNIT_EXPECT_NOT_NULL_MSG(test, ext._msg, "%s: no extack message", c->name);
		else if (c->type <= XPROBES_A_MAX)
			KUNIT_EXPECT_PTR_EQ_MSG(test, tb[c->type], nla, "%s", c->name);
	}
}

/* A truncated attribute stream is refused, whatever its declared length says. */
static void nl_truncated(struct kunit *test)
{
	struct nlattr *tb[XPROBES_A_MAX + 1];
	struct {
		struct nlattr h;
		u32 v;
	} a = { { .nla_len = 200, .nla_type = XPROBES_A_PID }, 1 };

	KUNIT_EXPECT_LT(test, nla_parse(tb, XPROBES_A_MAX, &a.h, sizeof(a), xp_policy, NULL), 0);
	a.h.nla_len = 2;	/* shorter than the header */
	KUNIT_EXPECT_LT(test, nla_parse(tb, XPROBES_A_MAX, &a.h, sizeof(a), xp_policy, NULL), 0);
}

static struct kunit_case nl_cases_list[] = {
	KUNIT_CASE(nl_policy_cases),
	KUNIT_CASE(nl_truncated),
	{}
};

static struct kunit_suite nl_suite = {
	.name = "xprobes_netlink",
	.test_cases = nl_cases_list,
};

kunit_test_suites(&nl_suite);
