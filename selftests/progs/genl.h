/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal raw generic netlink for the test programs (no libnl), so they can
 * build requests xprobectl never would and run thousands of them in-process.
 */
#ifndef XP_TEST_GENL_H
#define XP_TEST_GENL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define GENL_BUF 131072

struct genl_req {
	char buf[GENL_BUF] __attribute__((aligned(4)));
	struct nlmsghdr *h;
};

struct genl_reply {
	int error;		/* 0 or a positive errno */
	char msg[512];		/* extack message */
	unsigned int offs;	/* extack attribute offset */
	/* per reply message: callback with the attribute area */
	void (*on_msg)(const struct nlattr *attrs, int len, void *arg);
	void *arg;
};

static inline int genl_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC), one = 1;
	struct timeval tv = { .tv_sec = 30 };

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static inline void genl_begin(struct genl_req *r, uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct genlmsghdr *g;

	memset(r->buf, 0, NLMSG_LENGTH(GENL_HDRLEN));
	r->h = (struct nlmsghdr *)r->buf;
	r->h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->h->nlmsg_type = family;
	r->h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->h->nlmsg_seq = 1;
	g = NLMSG_DATA(r->h);
	g->cmd = cmd;
	g->version = 1;
}

/* Append an attribute; returns a pointer to its payload (len bytes). */
static inline void *genl_put(struct genl_req *r, int type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(r->buf + NLMSG_ALIGN(r->h->nlmsg_len));

	if (NLMSG_ALIGN(r->h->nlmsg_len) + NLA_HDRLEN + len > GENL_BUF) {
		fprintf(stderr, "genl: request too large\n");
		exit(2);
	}
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (data)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	r->h->nlmsg_len = NLMSG_ALIGN(r->h->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return (char *)a + NLA_HDRLEN;
}

static inline void genl_put_u32(struct genl_req *r, int type, uint32_t v) { genl_put(r, type, &v, 4); }
static inline void genl_put_u64(struct genl_req *r, int type, uint64_t v) { genl_put(r, type, &v, 8); }
static inline void genl_put_str(struct genl_req *r, int type, const char *s)
{
	genl_put(r, type, s, strlen(s) + 1);
}

/* Send and read replies until the ACK, error or end of dump. 0 if no kernel error. */
static inline int genl_call(int fd, struct genl_req *r, struct genl_reply *rep)
{
	static char resp[GENL_BUF] __attribute__((aligned(4)));
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	rep->error = 0;
	rep->msg[0] = 0;
	rep->offs = 0;
	if (sendto(fd, r->h, r->h->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		rep->error = errno;
		snprintf(rep->msg, sizeof(rep->msg), "send failed");
		return rep->error;
	}
	for (;;) {
		ssize_t n = recv(fd, resp, sizeof(resp), 0);
		struct nlmsghdr *m;

		if (n < 0) {
			rep->error = errno;
			snprintf(rep->msg, sizeof(rep->msg), "receive failed");
			return rep->error;
		}
		for (m = (struct nlmsghdr *)resp; NLMSG_OK(m, n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (m->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(m);
				size_t off = sizeof(*e);
				struct nlattr *a;
				int rem;

				if (!e->error)
					return 0;
				rep->error = -e->error;
				if (!(m->nlmsg_flags & NLM_F_CAPPED))
					off += e->msg.nlmsg_len - sizeof(e->msg);
				rem = (int)m->nlmsg_len - NLMSG_HDRLEN - (int)off;
				for (a = (struct nlattr *)((char *)e + off);
				     rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
				     rem -= NLA_ALIGN(a->nla_len),
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
					if (a->nla_type == NLMSGERR_ATTR_MSG)
						snprintf(rep->msg, sizeof(rep->msg), "%.*s",
							 (int)(a->nla_len - NLA_HDRLEN),
							 (char *)a + NLA_HDRLEN);
					if (a->nla_type == NLMSGERR_ATTR_OFFS)
						rep->offs = *(uint32_t *)((char *)a + NLA_HDRLEN);
				}
				return rep->error;
			}
			if (rep->on_msg)
				rep->on_msg((struct nlattr *)((char *)NLMSG_DATA(m) + GENL_HDRLEN),
					    m->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, rep->arg);
		}
	}
}

/* Find attribute TYPE in an attribute area. */
static inline const struct nlattr *genl_attr(const struct nlattr *a, int len, int type)
{
	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len), a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

static inline void family_cb(const struct nlattr *attrs, int len, void *arg)
{
	const struct nlattr *a = genl_attr(attrs, len, CTRL_ATTR_FAMILY_ID);

	if (a)
		*(uint16_t *)arg = *(const uint16_t *)((const char *)a + NLA_HDRLEN);
}

/* The id of generic netlink family NAME, 0 if it is not registered. */
static inline uint16_t genl_family(int fd, const char *name)
{
	static struct genl_req r;
	struct genl_reply rep = { .on_msg = family_cb };
	uint16_t id = 0;

	rep.arg = &id;
	genl_begin(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	genl_put_str(&r, CTRL_ATTR_FAMILY_NAME, name);
	if (genl_call(fd, &r, &rep))
		return 0;
	return id;
}

#endif
