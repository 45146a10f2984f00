// SPDX-License-Identifier: GPL-2.0
/* xprobectl: controller for xprobes.ko (per-process kernel views). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "xprobectl.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis;
};

static const struct subcmd subcmds[] = {
	{ "status", cmd_status, "status [--json]" },
	{ "view", cmd_view, "view add PID [--no-follow-fork] | view del PID | view list [--json]" },
	{ "hook", cmd_hook, "hook add PID SYMBOL[+OFFSET] [--cookie N] [--return] [--trap] | hook del ID | hook list [PID] [--json]" },
	{ "uhook", cmd_uhook, "uhook add PID [LIB:]FUNCTION | uhook del ID | uhook list [PID] [--json]   (user functions, no trap)" },
	{ "peek", cmd_peek, "peek PID ADDRESS|SYMBOL[+OFFSET] [LEN] [--json]" },
	{ "audit", cmd_audit, "audit [--tables] [--json]   (copies vs kernel text; --tables: page-table invariants)" },
	{ "trace", cmd_trace, "trace [-f [LIB:]GLOB]... [-d S] [-i S] [--json|--folded] [-H] [-T] [--no-views] PID | -- COMMAND [ARGS]" },
	{ "metrics", cmd_metrics, "metrics [-i S] [-d S] [--json] [--no-views] PID   (requests/s, saturation, slack)" },
	{ "latency", cmd_latency, "latency [-k SIGMA] [-m US] [-d S] [--json] [--no-views] PID   (slow syscalls)" },
	{ "walk", cmd_walk, "walk PID ADDRESS|SYMBOL [PAGES] [--user] [--json]   (page-table entries, for debugging)" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: xprobectl [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  xprobectl %s\n", subcmds[i].synopsis);
	fprintf(f, "\nexit status: 0 ok, 1 runtime error, 2 usage error. See xprobectl(8).\n");
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("xprobectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see 'xprobectl --help')\n", stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage_error("no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("xprobectl %s\n", XPROBECTL_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(argv[1], subcmds[i].name))
			return subcmds[i].fn(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
