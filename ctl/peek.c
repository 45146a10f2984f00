// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl peek: kernel text bytes as one process's view shows them.
 * xprobectl walk: the page-table entries one process uses for kernel pages
 * (a debugging aid and the structural test oracle).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <netlink/attr.h>
#include "json.h"
#include "nl.h"
#include "util.h"
#include "xprobectl.h"

struct peek_out {
	bool json;
	uint64_t addr;
};

static int print_peek(struct nlattr **tb, void *arg)
{
	struct peek_out *o = arg;
	const unsigned char *b;
	char hex[3 * 4096 + 1];
	int len, i;

	if (!tb[XPROBES_A_BYTES] || !tb[XPROBES_A_ADDR])
		return -EPROTO;
	o->addr = nla_get_u64(tb[XPROBES_A_ADDR]);
	b = nla_data(tb[XPROBES_A_BYTES]);
	len = nla_len(tb[XPROBES_A_BYTES]);
	if (o->json) {
		for (i = 0; i < len && i < 4096; i++)
			sprintf(hex + 2 * i, "%02x", b[i]);
		hex[2 * i] = 0;
		json_obj_begin(NULL);
		json_hex("address", o->addr);
		json_u64("length", len);
		json_str("bytes", hex);
		json_obj_end();
		json_done();
		return 0;
	}
	for (i = 0; i < len; i++) {
		if (i % 16 == 0)
			printf("%s%016" PRIx64 ":", i ? "\n" : "", o->addr + i);
		printf(" %02x", b[i]);
	}
	printf("\n");
	return 0;
}

int cmd_peek(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, { 0 } };
	struct peek_out o = { 0 };
	uint64_t len = 16;
	struct target t;
	struct xp_nl *nl;
	struct nl_msg *msg;
	uint32_t pid;
	int c, err;

	while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = true; break;
		case 'h':
			printf("usage: xprobectl peek PID ADDRESS|SYMBOL[+OFFSET] [LEN] [--json]\n"
			       "Prints the LEN (default 16) bytes of kernel text at an address as process PID\n"
			       "executes them: its private copy where its view has one, else the shared text.\n"
			       "  -j, --json  one JSON object\n");
			return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind < 2 || argc - optind > 3)
		return usage_error("peek takes PID, ADDRESS|SYMBOL[+OFFSET] and an optional LEN");
	if (!parse_pid(argv[optind], &pid) || !parse_target(argv[optind + 1], &t))
		return EXIT_USAGE;
	if (argc - optind == 3 && (!parse_u64(argv[optind + 2], &len) || !len || len > XPROBES_PEEK_MAX))
		return usage_error("LEN must be 1..%d", XPROBES_PEEK_MAX);

	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	msg = xp_nl_msg(nl, XPROBES_CMD_PEEK, 0);
	nla_put_u32(msg, XPROBES_A_PID, pid);
	nla_put_u32(msg, XPROBES_A_LEN, len);
	if (t.is_addr) {
		nla_put_u64(msg, XPROBES_A_ADDR, t.addr);
	} else {
		nla_put_string(msg, XPROBES_A_SYMBOL, t.sym);
		if (t.has_off)
			nla_put_u32(msg, XPROBES_A_OFFSET, t.off);
	}
	err = xp_nl_call(nl, msg, print_peek, &o);
	if (err)
		xp_nl_perror(nl, "peek");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

static int print_walk(struct nlattr **tb, void *arg)
{
	static const char *const names[] = { "pgd", "p4d", "pud", "pmd", "pte" };
	static const int attrs[] = { XPROBES_A_PGD_E, XPROBES_A_P4D_E, XPROBES_A_PUD_E,
				     XPROBES_A_PMD_E, XPROBES_A_PTE_E };
	uint64_t addr = tb[XPROBES_A_ADDR] ? nla_get_u64(tb[XPROBES_A_ADDR]) : 0;
	uint64_t phys = tb[XPROBES_A_PHYS] ? nla_get_u64(tb[XPROBES_A_PHYS]) : 0;
	uint32_t level = tb[XPROBES_A_LEVEL] ? nla_get_u32(tb[XPROBES_A_LEVEL]) : 0;
	unsigned int i;

	if (*(bool *)arg) {
		json_obj_begin(NULL);
		json_hex("address", addr);
		json_u64("level", level);
		json_hex("phys", phys);
		for (i = 0; i < 5; i++)
			json_hex(names[i], tb[attrs[i]] ? nla_get_u64(tb[attrs[i]]) : 0);
		json_obj_end();
		return 0;
	}
	printf("%016" PRIx64 " %" PRIu32 " %012" PRIx64, addr, level, phys);
	for (i = 0; i < 5; i++)
		printf(" %016" PRIx64, tb[attrs[i]] ? (uint64_t)nla_get_u64(tb[attrs[i]]) : 0);
	printf("\n");
	return 0;
}

int cmd_walk(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "user", no_argument, NULL, 'u' }, COMMON_OPTS, { 0 }
	};
	bool json = false, user = false;
	uint64_t pages = 1;
	struct target t;
	struct xp_nl *nl;
	struct nl_msg *msg;
	uint32_t pid;
	int c, err;

	while ((c = getopt_long(argc, argv, "hju", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'u': user = true; break;
		case 'h':
			printf("usage: xprobectl walk PID ADDRESS|SYMBOL [PAGES] [--user] [--json]\n"
			       "Shows the page-table entries process PID uses for PAGES (default 1) kernel pages\n"
			       "from an address (a debugging aid: which pages are private, their flags).\n"
			       "prints: address level phys pgd p4d pud pmd pte (raw entries)\n"
			       "  -u, --user  the PTI user-mode tables (what the CPU uses in user mode)\n"
			       "  -j, --json  one JSON object per page\n");
			return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind < 2 || argc - optind > 3)
		return usage_error("walk takes PID, ADDRESS|SYMBOL and an optional page count");
	if (!parse_pid(argv[optind], &pid) || !parse_target(argv[optind + 1], &t))
		return EXIT_USAGE;
	if (argc - optind == 3 && (!parse_u64(argv[optind + 2], &pages) || !pages || pages > (1 << 20)))
		return usage_error("PAGES must be 1..%d", 1 << 20);
	if (!t.is_addr) {
		t.addr = kallsyms_addr(t.sym);
		if (!t.addr) {
			fprintf(stderr, "xprobectl: walk: unknown symbol '%s' (or /proc/kallsyms hides addresses: run as root)\n",
				t.sym);
			return EXIT_RUNTIME;
		}
		t.addr += t.off;
	}
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	msg = xp_nl_msg(nl, XPROBES_CMD_WALK, 1);
	nla_put_u32(msg, XPROBES_A_PID, pid);
	nla_put_u64(msg, XPROBES_A_ADDR, t.addr);
	nla_put_u32(msg, XPROBES_A_COUNT, pages);
	if (user)
		nla_put_u32(msg, XPROBES_A_FLAGS, XPROBES_F_USER_TABLES);
	if (json)
		json_arr_begin(NULL);
	err = xp_nl_call(nl, msg, print_walk, &json);
	if (json) {
		json_arr_end();
		json_done();
	}
	if (err)
		xp_nl_perror(nl, "walk");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
