// SPDX-License-Identifier: GPL-2.0
/*
 * instaret: attach a uprobe whose BPF program returns at once to FUNC in
 * BINARY, for process PID only, until SIGTERM/SIGINT.
 *   instaret -p PID -b BINARY -f FUNC
 *   instaret -U      the same program on the xprobes_uhook tracepoint: the
 *                    events of user hooks (xprobectl uhook add PID FUNC)
 * Prints "attached" once the probe is in.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "instaret.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	const char *bin = NULL, *func = NULL;
	struct instaret_bpf *skel;
	struct bpf_link *link;
	int pid = -1, c;
	bool uhook = false;

	while ((c = getopt(argc, argv, "p:b:f:U")) != -1) {
		switch (c) {
		case 'U': uhook = true; break;
		case 'p': pid = atoi(optarg); break;
		case 'b': bin = optarg; break;
		case 'f': func = optarg; break;
		default: goto usage;
		}
	}
	if (!uhook && (pid <= 0 || !bin || !func))
		goto usage;
	skel = instaret_bpf__open();
	if (skel) {
		bpf_program__set_autoload(uhook ? skel->progs.instaret : skel->progs.instaret_uhook,
					  false);
		if (instaret_bpf__load(skel)) {
			instaret_bpf__destroy(skel);
			skel = NULL;
		}
	}
	if (!skel) {
		fprintf(stderr, "instaret: cannot load the BPF program: %s\n", strerror(errno));
		return 1;
	}
	if (uhook) {
		link = bpf_program__attach(skel->progs.instaret_uhook);
	} else {
		uo.func_name = func;
		link = bpf_program__attach_uprobe_opts(skel->progs.instaret, pid, bin, 0, &uo);
	}
	if (!link) {
		fprintf(stderr, "instaret: cannot attach to %s: %s\n",
			uhook ? "xprobes_uhook" : func, strerror(errno));
		instaret_bpf__destroy(skel);
		return 1;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_link__destroy(link);
	instaret_bpf__destroy(skel);
	return 0;
usage:
	fprintf(stderr, "usage: instaret -p PID -b BINARY -f FUNC | -U\n");
	return 2;
}
