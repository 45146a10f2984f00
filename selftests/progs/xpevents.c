// SPDX-License-Identifier: GPL-2.0
/*
 * xpevents: listen on the xprobes "events" multicast group and print one
 * "ended PID REASON" line per view that ended, until N events or SECONDS.
 *   xpevents [-n N] [-t SECONDS]
 * Prints "listening" once subscribed.
 */
#include <poll.h>
#include <time.h>
#include "genl.h"
#include "../../module/uapi/xprobes.h"

static uint32_t group_id;

static void find_group(const struct nlattr *attrs, int len, void *arg)
{
	const struct nlattr *grps = genl_attr(attrs, len, CTRL_ATTR_MCAST_GROUPS), *g;
	int rem;

	(void)arg;
	if (!grps)
		return;
	rem = grps->nla_len - NLA_HDRLEN;
	for (g = (const struct nlattr *)((const char *)grps + NLA_HDRLEN);
	     rem >= NLA_HDRLEN && g->nla_len >= NLA_HDRLEN && g->nla_len <= rem;
	     rem -= NLA_ALIGN(g->nla_len), g = (const struct nlattr *)((const char *)g + NLA_ALIGN(g->nla_len))) {
		const struct nlattr *in = (const struct nlattr *)((const char *)g + NLA_HDRLEN);
		const struct nlattr *name = genl_attr(in, g->nla_len - NLA_HDRLEN, CTRL_ATTR_MCAST_GRP_NAME);
		const struct nlattr *id = genl_attr(in, g->nla_len - NLA_HDRLEN, CTRL_ATTR_MCAST_GRP_ID);

		if (name && id && !strcmp((const char *)name + NLA_HDRLEN, XPROBES_MCGRP_EVENTS))
			group_id = *(const uint32_t *)((const char *)id + NLA_HDRLEN);
	}
}

int main(int argc, char **argv)
{
	static struct genl_req r;
	static char buf[65536] __attribute__((aligned(4)));
	struct genl_reply rep = { .on_msg = find_group };
	int fd, opt, n = 1, secs = 30, seen = 0;
	time_t end;

	while ((opt = getopt(argc, argv, "n:t:")) != -1) {
		if (opt == 'n') n = atoi(optarg);
		if (opt == 't') secs = atoi(optarg);
	}
	fd = genl_socket();
	genl_begin(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	genl_put_str(&r, CTRL_ATTR_FAMILY_NAME, XPROBES_GENL_NAME);
	if (fd < 0 || genl_call(fd, &r, &rep) || !group_id) {
		fprintf(stderr, "xpevents: no xprobes events group\n");
		return 1;
	}
	if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group_id, sizeof(group_id))) {
		perror("xpevents: join");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	end = time(NULL) + secs;
	while (seen < n && time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *m;
		ssize_t len;

		if (poll(&p, 1, 200) <= 0)
			continue;
		len = recv(fd, buf, sizeof(buf), 0);
		for (m = (struct nlmsghdr *)buf; len > 0 && NLMSG_OK(m, len); m = NLMSG_NEXT(m, len)) {
			const struct nlattr *a = (const struct nlattr *)((char *)NLMSG_DATA(m) + GENL_HDRLEN);
			int alen = m->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
			const struct nlattr *pid = genl_attr(a, alen, XPROBES_A_PID);
			const struct nlattr *why = genl_attr(a, alen, XPROBES_A_REASON);

			if (((struct genlmsghdr *)NLMSG_DATA(m))->cmd != XPROBES_CMD_VIEW_ENDED)
				continue;
			printf("ended %u %s\n", pid ? *(const uint32_t *)((const char *)pid + NLA_HDRLEN) : 0,
			       why ? (const char *)why + NLA_HDRLEN : "?");
			fflush(stdout);
			seen++;
		}
	}
	return seen >= n ? 0 : 1;
}
