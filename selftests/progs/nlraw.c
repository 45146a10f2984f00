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
 * prints "msg" and one "attr TYPE LEN" line per reply attribute, then "ok";
 * or "error ERRNO (NAME): MESSAGE"; exits 0 on ok, 1 on a kernel error.
 */
#include "genl.h"

static struct genl_req req;

static void print_msg(const struct nlattr *a, int len, void *arg)
{
	(void)arg;
	printf("msg\n");
	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len), a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len)))
		printf("attr %u %u\n", a->nla_type, a->nla_len - NLA_HDRLEN);
}

static void usage(void)
{
	fprintf(stderr, "usage: nlraw [-f FAMILY] [-l LEN] [-d] CMD [TYPE:KIND:VALUE...]\n");
	exit(2);
}

static void put_spec(const char *arg)
{
	char *spec = strdup(arg), *kind, *val;
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
		genl_put(&req, type, &v, 1);
	} else if (!strcmp(kind, "u16")) {
		uint16_t v = strtoull(val, NULL, 0);
		genl_put(&req, type, &v, 2);
	} else if (!strcmp(kind, "u32")) {
		genl_put_u32(&req, type, strtoull(val, NULL, 0));
	} else if (!strcmp(kind, "u64")) {
		genl_put_u64(&req, type, strtoull(val, NULL, 0));
	} else if (!strcmp(kind, "str")) {
		genl_put_str(&req, type, val);
	} else if (!strcmp(kind, "strn")) {
		genl_put(&req, type, val, strlen(val));
	} else if (!strcmp(kind, "fill")) {
		size_t n = strtoul(val, NULL, 0);
		memset(genl_put(&req, type, NULL, n), 'A', n);
	} else if (!strcmp(kind, "hex")) {
		size_t n = strlen(val) / 2, j;
		unsigned char *b = genl_put(&req, type, NULL, n);

		for (j = 0; j < n; j++)
			sscanf(val + 2 * j, "%2hhx", &b[j]);
	} else {
		usage();
	}
	free(spec);
}

int main(int argc, char **argv)
{
	const char *family = "xprobes";
	struct genl_reply rep = { .on_msg = print_msg };
	int fd, opt, dump = 0, i;
	long lie = -1;
	uint16_t fam;

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
	fd = genl_socket();
	if (fd < 0) {
		perror("nlraw: socket");
		return 2;
	}
	fam = genl_family(fd, family);
	if (!fam) {
		printf("error %d (%s): family %s not found\n", ENOENT, strerror(ENOENT), family);
		return 1;
	}
	genl_begin(&req, fam, atoi(argv[optind]), dump ? NLM_F_DUMP : 0);
	for (i = optind + 1; i < argc; i++)
		put_spec(argv[i]);
	if (lie >= 0)
		req.h->nlmsg_len = lie;
	if (genl_call(fd, &req, &rep)) {
		printf("error %d (%s): %s", rep.error, strerror(rep.error), rep.msg);
		if (rep.offs)
			printf(" [offset %u]", rep.offs);
		printf("\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
