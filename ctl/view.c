// SPDX-License-Identifier: GPL-2.0
/* xprobectl view add|del|list: per-process kernel views. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <netlink/attr.h>
#include "json.h"
#include "nl.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"

static void view_usage(FILE *f)
{
	fprintf(f, "usage: xprobectl view add PID [--no-follow-fork]\n"
		   "       xprobectl view del PID\n"
		   "       xprobectl view list [--json]\n"
		   "Gives a process its own kernel view (private copies of the kernel text pages that\n"
		   "carry its hooks), ends one, or lists them with their memory.\n"
		   "  --no-follow-fork  children the process forks are not traced (default: they are)\n"
		   "  -j, --json        JSON output (list)\n");
}

struct view_row {
	uint32_t pid, flags, hooks, pages, tables, procs;
	uint64_t mem, xol;
};

static void get_row(struct nlattr **tb, struct view_row *r)
{
	memset(r, 0, sizeof(*r));
	if (tb[XPROBES_A_PID]) r->pid = nla_get_u32(tb[XPROBES_A_PID]);
	if (tb[XPROBES_A_FLAGS]) r->flags = nla_get_u32(tb[XPROBES_A_FLAGS]);
	if (tb[XPROBES_A_NR_HOOKS]) r->hooks = nla_get_u32(tb[XPROBES_A_NR_HOOKS]);
	if (tb[XPROBES_A_NR_PAGES]) r->pages = nla_get_u32(tb[XPROBES_A_NR_PAGES]);
	if (tb[XPROBES_A_NR_TABLES]) r->tables = nla_get_u32(tb[XPROBES_A_NR_TABLES]);
	if (tb[XPROBES_A_NR_PROCS]) r->procs = nla_get_u32(tb[XPROBES_A_NR_PROCS]);
	if (tb[XPROBES_A_MEM_BYTES]) r->mem = nla_get_u64(tb[XPROBES_A_MEM_BYTES]);
	if (tb[XPROBES_A_XOL]) r->xol = nla_get_u64(tb[XPROBES_A_XOL]);
}

static int print_view(struct nlattr **tb, void *arg)
{
	bool json = *(bool *)arg;
	struct view_row r;

	get_row(tb, &r);
	if (json) {
		json_obj_begin(NULL);
		json_u64("pid", r.pid);
		json_bool("follow_fork", !(r.flags & XPROBES_F_NO_FOLLOW_FORK));
		json_bool("persist", r.flags & XPROBES_F_PERSIST);
		json_u64("processes", r.procs);
		json_u64("hooks", r.hooks);
		json_u64("private_pages", r.pages);
		json_u64("page_tables", r.tables);
		json_u64("memory_bytes", r.mem);
		json_hex("xol", r.xol);
		json_obj_end();
	} else {
		printf("%-8" PRIu32 " %6" PRIu32 " %6" PRIu32 " %6" PRIu32 " %7" PRIu32 " %9" PRIu64 "  %s\n",
		       r.pid, r.procs, r.hooks, r.pages, r.tables, r.mem / 1024,
		       r.flags & XPROBES_F_NO_FOLLOW_FORK ? "no-follow-fork" : "follow-fork");
	}
	return 0;
}

static int do_view_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-follow-fork", no_argument, NULL, 'n' },
		COMMON_OPTS,
		{ 0 }
	};
	uint32_t pid, flags = XPROBES_F_PERSIST;	/* the CLI exits; the view must not */
	bool json = false;
	struct xp_nl *nl;
	int c, err;

	while ((c = getopt_long(argc, argv, "nhj", opts, NULL)) != -1) {
		switch (c) {
		case 'n': flags |= XPROBES_F_NO_FOLLOW_FORK; break;
		case 'j': json = true; break;
		case 'h': view_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return usage_error("view add takes one PID");
	if (!parse_pid(argv[optind], &pid))
		return EXIT_USAGE;
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	err = view_new(nl, pid, flags, json ? print_view : NULL, &json);
	if (err) {
		xp_nl_perror(nl, "view add");
		xp_nl_close(nl);
		return EXIT_RUNTIME;
	}
	if (json)
		json_done();
	xp_nl_close(nl);
	return EXIT_OK;
}

static int do_view_del(int argc, char **argv)
{
	uint32_t pid;
	struct xp_nl *nl;
	int err;

	if (argc != 2)
		return usage_error("view del takes one PID");
	if (!parse_pid(argv[1], &pid))
		return EXIT_USAGE;
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	err = view_del(nl, pid);
	if (err)
		xp_nl_perror(nl, "view del");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

static int do_view_list(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, { 0 } };
	bool json = false;
	struct xp_nl *nl;
	struct nl_msg *msg;
	int c, err;

	while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': view_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("view list takes no arguments");
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	if (json)
		json_arr_begin(NULL);
	else
		printf("%-8s %6s %6s %6s %7s %9s  %s\n", "PID", "PROCS", "HOOKS", "PAGES", "TABLES",
		       "MEM(KiB)", "FORK");
	msg = xp_nl_msg(nl, XPROBES_CMD_VIEW_GET, 1);
	err = xp_nl_call(nl, msg, print_view, &json);
	if (json) {
		json_arr_end();
		json_done();
	}
	if (err)
		xp_nl_perror(nl, "view list");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_view(int argc, char **argv)
{
	if (argc < 2) {
		view_usage(stderr);
		return EXIT_USAGE;
	}
	optind = 1;
	if (!strcmp(argv[1], "add"))
		return do_view_add(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del"))
		return do_view_del(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return do_view_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		view_usage(stdout);
		return EXIT_OK;
	}
	return usage_error("unknown view command '%s'", argv[1]);
}
