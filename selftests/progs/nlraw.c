// SPDX-License-Identifier: GPL-2.0
/*
 * nlraw: send one hand-built generic netlink request and print the kernel's
 * answer, extack message included. Lets tests send what xprobectl never
 * would: unknown attributes, wrong types, missing or oversized attributes.
 *
 * usage: nlraw [-f FAMILY] [-l NLMSG_LEN] [-d] CMD [ATTR...]
 *   ATTR is TYPE:KIND:VALUE with KIND one of
 *     u8 u16 u32 u64   integer VALUE
 *     str              VALUE plus a terminating NUL
 *     strn             VALUE without the NUL
 *     fill             VALUE bytes of 'A'
 *     hex              bytes given as hex digits
 *   -l  lie about the message length (nlmsg_len = NLMSG_LEN)
 *   -d  send as a dump request
 * prints "ok" and one "attr TYPE LEN" line per reply attribute, or
 * "error ERRNO (NAME): MESSAGE"; exits 0 on ok, 1 on a kernel error.
 */
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

static char req[131072] __attribute__((aligned(4)));
static char resp[131072] __attribute__((aligned(4)));

static struct nlattr *put_attr(struct nlmsghdr *h, int type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	if (NLMSG_ALIGN(h->nlmsg_len) + NLA_HDRLEN + len > sizeof(req)) {
		fprintf(stderr, "nlraw: request too large\n");
		exit(2);
	}
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (data)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

static int do_request(int fd, struct nlmsghdr *h, int quiet, uint16_t *family_out)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int done = 0, status = 0;

	if (sendto(fd, h, h->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		printf("error %d (%s): send failed\n", errno, strerror(errno));
		return 1;
	}
	while (!done) {
		ssize_t n = recv(fd, resp, sizeof(resp), 0);
		struct nlmsghdr *r;

		if (n < 0) {
			printf("error %d (%s): receive failed\n", errno, strerror(errno));
			return 1;
		}
		for (r = (struct nlmsghdr *)resp; NLMSG_OK(r, n); r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (r->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(r);
				size_t off = sizeof(*e);
				char msg[512] = "";
				unsigned int offs = 0;
				int rem;
				struct nlattr *a;

				done = 1;
				if (!e->error)
					break;
				if (!(r->nlmsg_flags & NLM_F_CAPPED))
					off += e->msg.nlmsg_len - sizeof(e->msg);
				rem = (int)r->nlmsg_len - NLMSG_HDRLEN - (int)off;
				for (a = (struct nlattr *)((char *)e + off);
				     rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
				     rem -= NLA_ALIGN(a->nla_len),
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
					if (a->nla_type == NLMSGERR_ATTR_MSG)
						snprintf(msg, sizeof(msg), "%.*s",
							 (int)(a->nla_len - NLA_HDRLEN),
							 (char *)a + NLA_HDRLEN);
					if (a->nla_type == NLMSGERR_ATTR_OFFS)
						offs = *(uint32_t *)((char *)a + NLA_HDRLEN);
				}
				printf("error %d (%s): %s", -e->error, strerror(-e->error), msg);
				if (offs)
					printf(" [offset %u]", offs);
				printf("\n");
				status = 1;
				break;
			}
			if (family_out) {	/* CTRL_CMD_GETFAMILY reply */
				struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(r) + GENL_HDRLEN);
				int rem = r->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

				for (; rem >= NLA_HDRLEN; rem -= NLA_ALIGN(a->nla_len),
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
					if (a->nla_type == CTRL_ATTR_FAMILY_ID)
						*family_out = *(uint16_t *)((char *)a + NLA_HDRLEN);
			} else if (!quiet) {
				struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(r) + GENL_HDRLEN);
				int rem = r->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

				printf("msg\n");
				for (; rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN;
				     rem -= NLA_ALIGN(a->nla_len),
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
					printf("attr %u %u\n", a->nla_type, a->nla_len - NLA_HDRLEN);
			}
			if (!(r->nlmsg_flags & NLM_F_MULTI) && r->nlmsg_type != NLMSG_ERROR &&
			    !(h->nlmsg_flags & NLM_F_ACK))
				done = 1;
		}
	}
	if (!status && !quiet && !family_out)
		printf("ok\n");
	return status;
}

static void usage(void)
{
	fprintf(stderr, "usage: nlraw [-f FAMILY] [-l LEN] [-d] CMD [TYPE:KIND:VALUE...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *family = "xprobes";
	int fd, one = 1, opt, dump = 0, i;
	long lie = -1;
	uint16_t fam = 0;
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	struct genlmsghdr *g;

	while ((opt = getopt(argc, argv, "f:l:d")) != -1) {
		switch (opt) {
		case 'f': family = optarg; break;
		case 'l': lie = strtol(optarg, NULL, 0); break;
		case 'd': dump = 1; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0) {
		perror("nlraw: socket");
		return 2;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	/* Resolve the family id. */
	memset(req, 0, sizeof(req));
	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	h->nlmsg_type = GENL_ID_CTRL;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = 1;
	g = NLMSG_DATA(h);
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	put_attr(h, CTRL_ATTR_FAMILY_NAME, family, strlen(family) + 1);
	if (do_request(fd, h, 1, &fam) || !fam) {
		printf("error %d (%s): family %s not found\n", ENOENT, strerror(ENOENT), family);
		return 1;
	}

	memset(req, 0, sizeof(req));
	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	h->nlmsg_type = fam;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	h->nlmsg_seq = 2;
	g = NLMSG_DATA(h);
	g->cmd = atoi(argv[optind]);
	g->version = 1;
	for (i = optind + 1; i < argc; i++) {
		char *spec = strdup(argv[i]), *kind, *val;
		int type;

		kind = strchr(spec, ':');
		if (!kind)
			usage();
		*kind++ = 0;
		val = strchr(kind, ':');
		if (!val)
			usage();
		*val++ = 0;
		type = atoi(spec);
		if (!strcmp(kind, "u8")) {
			uint8_t v = strtoull(val, NULL, 0);
			put_attr(h, type, &v, 1);
		} else if (!strcmp(kind, "u16")) {
			uint16_t v = strtoull(val, NULL, 0);
			put_attr(h, type, &v, 2);
		} else if (!strcmp(kind, "u32")) {
			uint32_t v = strtoull(val, NULL, 0);
			put_attr(h, type, &v, 4);
		} else if (!strcmp(kind, "u64")) {
			uint64_t v = strtoull(val, NULL, 0);
			put_attr(h, type, &v, 8);
		} else if (!strcmp(kind, "str")) {
			put_attr(h, type, val, strlen(val) + 1);
		} else if (!strcmp(kind, "strn")) {
			put_attr(h, type, val, strlen(val));
		} else if (!strcmp(kind, "fill")) {
			size_t n = strtoul(val, NULL, 0);
			struct nlattr *a = put_attr(h, type, NULL, n);
			memset((char *)a + NLA_HDRLEN, 'A', n);
		} else if (!strcmp(kind, "hex")) {
			size_t n = strlen(val) / 2, j;
			unsigned char *b = malloc(n + 1);
			for (j = 0; j < n; j++)
				sscanf(val + 2 * j, "%2hhx", &b[j]);
			put_attr(h, type, b, n);
			free(b);
		} else {
			usage();
		}
		free(spec);
	}
	if (lie >= 0)
		h->nlmsg_len = lie;
	return do_request(fd, h, 0, NULL);
}
