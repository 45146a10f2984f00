// SPDX-License-Identifier: GPL-2.0
/* xprobectl: controller for xprobes.ko (per-process kernel views). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "xprobectl.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;	/* what it measures or does: one line */
	const char *synopsis;	/* every form and every option ("\n" between lines) */
};

static const struct subcmd subcmds[] = {
	{ "status", cmd_status, "whether xprobes.ko is loaded, in which mode, and what it holds",
	  "status [--json]" },
	{ "view", cmd_view, "a process's own kernel view: private copies of the hooked text pages",
	  "view add PID [--no-follow-fork]\n"
	  "view del PID\n"
	  "view list [--json]" },
	{ "hook", cmd_hook, "kernel hooks and tracepoints in one process's view: hits, drops, kind",
	  "hook add PID SYMBOL[+OFFSET] [--cookie N] [--return] [--trap]\n"
	  "         [--records [--calls [--sums]]] [--json]\n"
	  "hook add PID tracepoint:CATEGORY:NAME [--cookie N] [--json]\n"
	  "hook del ID\n"
	  "hook prog ID (PINNED | --detach)\n"
	  "hook list [PID] [--json]" },
	{ "uhook", cmd_uhook, "user-function hooks in one process: a jump into a trampoline, no trap",
	  "uhook add PID [LIB:]FUNCTION [--cookie N] [--returns]\n"
	  "          [--no-events | --records] [--trap] [--json]\n"
	  "uhook del ID\n"
	  "uhook list [PID] [--json]" },
	{ "peek", cmd_peek, "kernel text bytes as one process executes them",
	  "peek PID ADDRESS|SYMBOL[+OFFSET] [LEN] [--json]" },
	{ "audit", cmd_audit, "private copies against the kernel's text; --tables: page-table invariants",
	  "audit [--tables] [--json]" },
	{ "trace", cmd_trace,
	  "per function of a process: calls, wall, ON-CPU, OFF-CPU by cause, wakers",
	  "trace [-f [LIB:]GLOB]... [--list-functions] [-d S] [-i S] [-s KEY]\n"
	  "      [-n N] [-H] [-T] [-W] [-C] [--json | --folded] [--pprof FILE]\n"
	  "      [--latency[=K]] [--latency-min-us US] [--no-views] [--uprobes]\n"
	  "      [--events] [-v]\n"
	  "      PID | -- COMMAND [ARGS] | --cgroup PATH" },
	{ "metrics", cmd_metrics, "a server's requests/s, saturation and slack, from its syscalls",
	  "metrics [-i S] [-d S] [--json] [--no-views] [--listen ADDR:PORT]\n"
	  "        [--textfile DIR] [-q] [-v] PID | --cgroup PATH" },
	{ "latency", cmd_latency, "syscalls far slower than their learned normal, as they happen",
	  "latency [-k SIGMA] [-m US] [-d S] [-n N] [--json] [--no-views] [-q]\n"
	  "        [--listen ADDR:PORT] [--textfile DIR] [-v]\n"
	  "        PID | --cgroup PATH" },
	{ "attach", cmd_attach, "someone's BPF object, kprobe programs run for one process only",
	  "attach PID OBJ.bpf.o [--pin DIR] [-d S] [-v]" },
	{ "walk", cmd_walk, "page-table entries of kernel pages in one process (debugging)",
	  "walk PID ADDRESS|SYMBOL [PAGES] [--user] [--json]" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: xprobectl [--version] [--help] COMMAND [ARGS]\n"
		"Per-process kernel views and tracing: hooks that only the traced process runs.\n"
		"'xprobectl COMMAND --help' says what each option does.\n");
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++) {
		const char *l = subcmds[i].synopsis, *nl;

		fprintf(f, "\n%s: %s\n", subcmds[i].name, subcmds[i].what);
		for (; l; l = nl ? nl + 1 : NULL) {
			nl = strchr(l, '\n');
			/* a line that goes on the one before: no command name */
			fprintf(f, "  %s%.*s\n", *l == ' ' ? "          " : "xprobectl ",
				nl ? (int)(nl - l) : (int)strlen(l), l);
		}
	}
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
