// SPDX-License-Identifier: GPL-2.0
/* Listening on the xprobes "events" multicast group: see events.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/genl/ctrl.h>
#include "events.h"
#include "nl.h"

struct xp_events {
	struct nl_sock *sk;
	pid_t pid;
	bool ended, told, uhooks_gone;
	uint32_t gone_flags;	/* XPROBES_GONE_* */
	char reason[200], gone_reason[200];
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[XPROBES_A_MAX + 1];
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct xp_events *ev = arg;
	const char *why;

	uint8_t cmd = ((struct genlmsghdr *)nlmsg_data(h))->cmd;

	if ((cmd != XPROBES_CMD_VIEW_ENDED && cmd != XPROBES_CMD_UHOOKS_GONE) ||
	    genlmsg_parse(h, 0, tb, XPROBES_A_MAX, NULL) || !tb[XPROBES_A_PID] ||
	    nla_get_u32(tb[XPROBES_A_PID]) != (uint32_t)ev->pid)
		return NL_SKIP;
	why = tb[XPROBES_A_REASON] ? nla_get_string(tb[XPROBES_A_REASON]) : "no reason given";
	if (cmd == XPROBES_CMD_UHOOKS_GONE) {
		ev->uhooks_gone = true;
		ev->gone_flags = tb[XPROBES_A_FLAGS] ? nla_get_u32(tb[XPROBES_A_FLAGS]) : 0;
		snprintf(ev->gone_reason, sizeof(ev->gone_reason), "%s", why);
		return NL_OK;
	}
	if (!strcmp(why, "exit"))
		return NL_SKIP;
	ev->ended = true;
	snprintf(ev->reason, sizeof(ev->reason), "%s", why);
	return NL_OK;
}

struct xp_events *xp_events_open(pid_t pid)
{
	struct xp_events *ev = calloc(1, sizeof(*ev));
	int grp = -NLE_NOMEM;

	if (ev)
		ev->sk = nl_socket_alloc();
	if (ev && ev->sk && !genl_connect(ev->sk))
		grp = genl_ctrl_resolve_grp(ev->sk, XPROBES_GENL_NAME, XPROBES_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(ev->sk, grp) ||
	    nl_socket_set_nonblocking(ev->sk)) {
		fprintf(stderr, "xprobectl: cannot listen for the end of the view (%s): "
			"if the kernel ends it, the counts will just stop\n",
			nl_geterror(grp < 0 ? grp : -NLE_FAILURE));
		xp_events_close(ev);
		return NULL;
	}
	ev->pid = pid;
	nl_socket_disable_seq_check(ev->sk);
	nl_socket_modify_cb(ev->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, ev);
	return ev;
}

bool xp_events_view_ended(struct xp_events *ev)
{
	int i;

	if (!ev)
		return false;
	/*
	 * Until the socket is drained (-NLE_AGAIN) or says it lost messages;
	 * bounded, as a flood of other views' announcements must not hold us.
	 */
	for (i = 0; i < 64 && !ev->ended; i++)
		if (nl_recvmsgs_default(ev->sk) < 0)
			break;
	if (ev->ended && !ev->told) {
		fprintf(stderr, "xprobectl: the kernel ended the view of pid %d: %s; "
			"the figures below stop there\n", (int)ev->pid, ev->reason);
		ev->told = true;
	}
	return ev->ended;
}

int xp_events_fd(struct xp_events *ev)
{
	return ev ? nl_socket_get_fd(ev->sk) : -1;
}

const char *xp_events_uhooks_gone(struct xp_events *ev, uint32_t *flags)
{
	if (!ev || !ev->uhooks_gone)
		return NULL;
	ev->uhooks_gone = false;
	*flags = ev->gone_flags;
	return ev->gone_reason;
}

void xp_events_close(struct xp_events *ev)
{
	if (!ev)
		return;
	nl_socket_free(ev->sk);
	free(ev);
}
