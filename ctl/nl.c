// SPDX-License-Identifier: GPL-2.0
/* Generic netlink client for the xprobes family (libnl-3 genl). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include "nl.h"
#include "xprobectl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct call_state {
	struct xp_nl *nl;
	xp_nl_cb cb;
	void *arg;
	int done;
	int cb_err;
	int64_t *abi;		/* the reply's XPROBES_A_ABI, if asked for (-1: none) */
};

static int call(struct xp_nl *nl, struct nl_msg *msg, xp_nl_cb cb, void *arg, int64_t *abi);

static void module_missing_hint(void)
{
	fprintf(stderr,
		"xprobectl: the xprobes kernel module is not loaded: load it with "
		"'insmod xprobes.ko' (or 'modprobe xprobes'); without it only "
		"'trace --no-views' (fallback mode) works\n");
}

/* The module's MODULE_VERSION(), for a message; "?" if sysfs does not say. */
static void module_version(char *buf, size_t len)
{
	FILE *f = fopen("/sys/module/xprobes/version", "r");

	snprintf(buf, len, "?");
	if (f) {
		if (fgets(buf, len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* What to do about a module built from another interface than ours. */
#define ABI_FIX "install both from one release and reload the module (rmmod xprobes; " \
		"modprobe xprobes)"

/*
 * Was the module built from the same interface as we were (uapi/xprobes.h
 * and the arguments of its tracepoints, trace.h, which our BPF programs
 * read)? Its STATUS reply says which (XPROBES_A_ABI): another one's
 * commands, attributes, structs and tracepoint arguments may mean other
 * things than ours, and a struct read at the wrong size is silently wrong
 * figures. @cb, if not NULL, is given that reply when the interface is
 * ours (status shows it: one request, not two). A caller the module
 * refuses STATUS to (EPERM) goes on: its own command gets the module's
 * refusal, and nl->err says it to @cb's caller. 0: the same; 1: another
 * (said); -1: no answer (said).
 */
static int same_abi(struct xp_nl *nl, xp_nl_cb cb, void *arg)
{
	struct nl_msg *msg = xp_nl_msg(nl, XPROBES_CMD_STATUS, 0);
	int64_t abi = -1;
	char ver[64];
	int err;

	if (!msg) {
		fprintf(stderr, "xprobectl: out of memory\n");
		return -1;
	}
	err = call(nl, msg, cb, arg, &abi);
	if (err == -EPERM)
		return 0;
	if (err) {
		xp_nl_perror(nl, "asking the module which interface it speaks");
		return -1;
	}
	if (abi == XPROBES_ABI) {
		nl->abi = abi;
		return 0;
	}
	module_version(ver, sizeof(ver));
	if (abi < 0)
		fprintf(stderr, "xprobectl: the loaded xprobes module (%s) predates this xprobectl "
			"(%s, interface %08x) and may read its requests otherwise: " ABI_FIX "\n",
			ver, XPROBECTL_VERSION, XPROBES_ABI);
	else
		fprintf(stderr, "xprobectl: the loaded xprobes module (%s, interface %08llx) was "
			"built from other sources than this xprobectl (%s, interface %08x): "
			ABI_FIX "\n", ver, (unsigned long long)abi, XPROBECTL_VERSION, XPROBES_ABI);
	return 1;
}

static struct xp_nl *open_nl(bool *missing, bool *other, xp_nl_cb cb, void *arg)
{
	struct xp_nl *nl = calloc(1, sizeof(*nl));
	int one = 1, err;

	if (!nl) {
		fprintf(stderr, "xprobectl: out of memory\n");
		return NULL;
	}
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		fprintf(stderr, "xprobectl: out of memory\n");
		free(nl);
		return NULL;
	}
	err = genl_connect(nl->sk);
	if (err < 0) {
		fprintf(stderr, "xprobectl: cannot open a generic netlink socket: %s\n",
			nl_geterror(err));
		goto fail;
	}
	/* Ask for the kernel's explanation of errors, without our request echoed. */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	nl->family = genl_ctrl_resolve(nl->sk, XPROBES_GENL_NAME);
	if (nl->family < 0) {
		if (nl->family == -NLE_OBJ_NOTFOUND && missing)
			*missing = true;
		else if (nl->family == -NLE_OBJ_NOTFOUND)
			module_missing_hint();
		else
			fprintf(stderr, "xprobectl: cannot resolve the '%s' netlink family: %s\n",
				XPROBES_GENL_NAME, nl_geterror(nl->family));
		goto fail;
	}
	switch (same_abi(nl, cb, arg)) {
	case 0:
		return nl;
	case 1:
		if (other)
			*other = true;
		break;
	}
fail:
	nl_socket_free(nl->sk);
	free(nl);
	return NULL;
}

struct xp_nl *xp_nl_open(void)
{
	return open_nl(NULL, NULL, NULL, NULL);
}

struct xp_nl *xp_nl_open_status(xp_nl_cb cb, void *arg)
{
	return open_nl(NULL, NULL, cb, arg);
}

struct xp_nl *xp_nl_try_open(bool *missing, bool *other)
{
	*missing = false;
	if (other)
		*other = false;
	return open_nl(missing, other, NULL, NULL);
}

void xp_nl_close(struct xp_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

struct nl_msg *xp_nl_msg(struct xp_nl *nl, uint8_t cmd, int dump)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 dump ? NLM_F_DUMP : 0, cmd, XPROBES_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct call_state *st = arg;
	struct nlattr *tb[XPROBES_A_MAX + 1];
	int err;

	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, XPROBES_A_MAX, NULL);
	if (err < 0) {
		st->cb_err = -EPROTO;
		return NL_SKIP;
	}
	if (st->abi) {		/* outside tb: its number is above XPROBES_A_MAX */
		struct genlmsghdr *g = genlmsg_hdr(nlmsg_hdr(msg));
		struct nlattr *a = nla_find(genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0),
					    XPROBES_A_ABI);

		if (a && nla_len(a) == sizeof(uint32_t))
			*st->abi = nla_get_u32(a);
		/* another interface's attributes may mean other things */
		if (*st->abi != XPROBES_ABI)
			return NL_OK;
	}
	if (st->cb && !st->cb_err)
		st->cb_err = st->cb(tb, st->arg);
	return NL_OK;
}

/* Pull NLMSGERR_ATTR_MSG / _OFFS out of the TLVs from @off of @h's payload. */
static void parse_tlvs(struct xp_nl *nl, struct nlmsghdr *h, size_t off)
{
	struct nlattr *a;
	int rem;

	nl->ext_msg[0] = 0;
	nl->ext_offs = 0;
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (NLMSG_HDRLEN + off >= h->nlmsg_len)
		return;
	rem = h->nlmsg_len - NLMSG_HDRLEN - off;
	for (a = (struct nlattr *)((char *)NLMSG_DATA(h) + off); nla_ok(a, rem); a = nla_next(a, &rem)) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG) {
			snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%.*s",
				 nla_len(a), (const char *)nla_data(a));
		} else if (nla_type(a) == NLMSGERR_ATTR_OFFS && nla_len(a) >= 4) {
			nl->ext_offs = nla_get_u32(a);
		}
	}
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct call_state *)arg)->done = 1;
	return NL_STOP;
}

/* An error message (NLMSG_ERROR): the request, maybe capped, then TLVs. */
static void parse_extack(struct xp_nl *nl, struct nlmsgerr *e)
{
	struct nlmsghdr *h = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	size_t off = sizeof(*e);

	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	parse_tlvs(nl, h, off);
}

/*
 * The end of a dump (NLMSG_DONE) carries the dump's own error, and its
 * extack after it: a refusal made inside the dump ends up here, which libnl
 * does not look at.
 */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct call_state *st = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	int err;

	st->done = 1;
	if (h->nlmsg_type != NLMSG_DONE || h->nlmsg_len < NLMSG_HDRLEN + sizeof(int))
		return NL_STOP;
	memcpy(&err, NLMSG_DATA(h), sizeof(err));
	if (err < 0) {
		st->nl->err = err;
		parse_tlvs(st->nl, h, sizeof(int));
	}
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct call_state *st = arg;

	(void)who;
	st->nl->err = e->error;
	parse_extack(st->nl, e);
	st->done = 1;
	return NL_STOP;
}

static int call(struct xp_nl *nl, struct nl_msg *msg, xp_nl_cb cb, void *arg, int64_t *abi)
{
	struct call_state st = { .nl = nl, .cb = cb, .arg = arg, .abi = abi };
	struct nl_cb *ncb;
	int err;

	nl->err = 0;
	nl->ext_msg[0] = 0;
	ncb = nl_cb_alloc(NL_CB_CUSTOM);
	if (!ncb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(ncb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &st);
	nl_cb_set(ncb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &st);
	nl_cb_set(ncb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &st);
	nl_cb_err(ncb, NL_CB_CUSTOM, on_error, &st);

	err = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (err < 0) {
		nl_cb_put(ncb);
		nl->err = -EIO;
		snprintf(nl->ext_msg, sizeof(nl->ext_msg), "send: %s", nl_geterror(err));
		return nl->err;
	}
	while (!st.done) {
		err = nl_recvmsgs(nl->sk, ncb);
		if (err < 0 && !st.done) {
			nl->err = -EIO;
			snprintf(nl->ext_msg, sizeof(nl->ext_msg), "receive: %s", nl_geterror(err));
			break;
		}
	}
	nl_cb_put(ncb);
	if (nl->err)
		return nl->err;
	return st.cb_err;
}

int xp_nl_call(struct xp_nl *nl, struct nl_msg *msg, xp_nl_cb cb, void *arg)
{
	return call(nl, msg, cb, arg, NULL);
}

void xp_nl_perror(struct xp_nl *nl, const char *what)
{
	int e = -nl->err;

	if (e == EPERM && !nl->ext_msg[0]) {
		fprintf(stderr, "xprobectl: %s: permission denied: xprobes needs CAP_NET_ADMIN "
			"(run as root)\n", what);
		return;
	}
	if (nl->ext_msg[0])
		fprintf(stderr, "xprobectl: %s: %s\n", what, nl->ext_msg);
	else
		fprintf(stderr, "xprobectl: %s: %s\n", what, strerror(e ? e : EIO));
}

int xp_nl_got_hook_id(struct nlattr **tb, void *arg)
{
	if (tb[XPROBES_A_HOOK_ID])
		*(uint32_t *)arg = nla_get_u32(tb[XPROBES_A_HOOK_ID]);
	return 0;
}
