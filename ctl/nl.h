/* SPDX-License-Identifier: GPL-2.0 */
/* Generic netlink client for the xprobes family (libnl-3 genl). */
#ifndef XPROBECTL_NL_H
#define XPROBECTL_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include "../module/uapi/xprobes.h"

struct xp_nl {
	struct nl_sock *sk;
	int family;
	int err;		/* last errno from the kernel, 0 if none */
	char ext_msg[256];	/* last extack message, "" if none */
	uint32_t ext_offs;	/* offset of the attribute the kernel blamed, 0 if none */
	uint32_t abi;		/* the module's XPROBES_A_ABI, ours (0 if it refused STATUS) */
};

/* Called once per reply message with its attributes indexed by type. */
typedef int (*xp_nl_cb)(struct nlattr **tb, void *arg);

/*
 * Connect and resolve the family. On failure prints one line saying what is
 * wrong and how to fix it, and returns NULL.
 */
struct xp_nl *xp_nl_open(void);
/*
 * Same, but a missing module is not an error: returns NULL with *missing
 * set. Nor, with @other, one built from another interface: NULL with
 * *other set, its line said (a daemon goes on without it; trace does not).
 */
struct xp_nl *xp_nl_try_open(bool *missing, bool *other);
/*
 * Same as xp_nl_open(), and the STATUS reply it checks the interface by is
 * handed to @cb (one request, not a second for what status shows). If the
 * module refused the reply (EPERM), nl->err says so and @cb was not called.
 */
struct xp_nl *xp_nl_open_status(xp_nl_cb cb, void *arg);
void xp_nl_close(struct xp_nl *nl);

/* A request for CMD; add attributes with nla_put_*() and pass it to xp_nl_call. */
struct nl_msg *xp_nl_msg(struct xp_nl *nl, uint8_t cmd, int dump);

/*
 * Send MSG (consumed), run CB on every reply until the ACK or the end of the
 * dump. Returns 0, or a negative errno with nl->ext_msg holding the kernel's
 * explanation when it gave one.
 */
int xp_nl_call(struct xp_nl *nl, struct nl_msg *msg, xp_nl_cb cb, void *arg);

/* Print "xprobectl: WHAT: <kernel message or strerror>" to stderr. */
void xp_nl_perror(struct xp_nl *nl, const char *what);
/* An xp_nl_cb: the reply's XPROBES_A_HOOK_ID into the uint32_t at ARG, if it has one. */
int xp_nl_got_hook_id(struct nlattr **tb, void *arg);

#endif
