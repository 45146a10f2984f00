// SPDX-License-Identifier: GPL-2.0
/*
 * instaret: attach a uprobe whose BPF program returns at once to FUNC in
 * BINARY, for process PID only, until SIGTERM/SIGINT.
 *   instaret -p PID -b BINARY -f FUNC
 *   instaret -U      the same program on the xprobes_uhook tracepoint: the
 *                    events of user hooks (xprobectl uhook add PID FUNC)
 *   instaret -R      ... on the xprobes_urecs tracepoint: the records of user
 *                    hooks with --records, handed over by the view's hooks
 *   -r               returns too: a uretprobe, or xprobes_uhook_ret (the
 *                    user hook added with --returns; records of returns
 *                    come with the others)
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
	LIBBPF_OPTS(bpf_uprobe_opts, ro, .retprobe = true);
	const char *bin = NULL, *func = NULL;
	struct bpf_link *link, *rlink = NULL;
	struct instaret_bpf *skel;
	bool uhook = false, recs = false, rets = false;
	int pid = -1, c;

	while ((c = getopt(argc, argv, "p:b:f:URr")) != -1) {
		switch (c) {
		case 'U': uhook = true; break;
		case 'R': recs = true; break;
		case 'r': rets = true; break;
		case 'p': pid = atoi(optarg); break;
		case 'b': bin = optarg; break;
		case 'f': func = optarg; break;
		default: goto usage;
		}
	}
	if (recs)
		uhook = true;
	if (!uhook && (pid <= 0 || !bin || !func))
		goto usage;
	skel = instaret_bpf__open();
	if (skel) {
		/* Load only what is attached: the others may name what is not there. */
		bpf_program__set_autoload(skel->progs.instaret, !uhook);
		bpf_program__set_autoload(skel->progs.instaret_ret, !uhook && rets);
		bpf_program__set_autoload(skel->progs.instaret_uhook, uhook && !recs);
		bpf_program__set_autoload(skel->progs.instaret_uhook_ret, uhook && !recs && rets);
		bpf_program__set_autoload(skel->progs.instaret_urecs, recs);
		if (instaret_bpf__load(skel)) {
			instaret_bpf__destroy(skel);
			skel = NULL;
		}
	}
	if (!skel) {
		fprintf(stderr, "instaret: cannot load the BPF program: %s\n", strerror(errno));
		return 1;
	}
	if (recs) {
		link = bpf_program__attach(skel->progs.instaret_urecs);
		rets = false;
	} else if (uhook) {
		link = bpf_program__attach(skel->progs.instaret_uhook);
		if (link && rets)
			rlink = bpf_program__attach(skel->progs.instaret_uhook_ret);
	} else {
		uo.func_name = func;
		ro.func_name = func;
		link = bpf_program__attach_uprobe_opts(skel->progs.instaret, pid, bin, 0, &uo);
		if (link && rets)
			rlink = bpf_program__attach_uprobe_opts(skel->progs.instaret_ret, pid, bin, 0, &ro);
	}
	if (!link || (rets && !rlink)) {
		fprintf(stderr, "instaret: cannot attach to %s: %s\n",
			recs ? "xprobes_urecs" : uhook ? "xprobes_uhook" : func, strerror(errno));
		bpf_link__destroy(link);
		instaret_bpf__destroy(skel);
		return 1;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_link__destroy(rlink);
	bpf_link__destroy(link);
	instaret_bpf__destroy(skel);
	return 0;
usage:
	fprintf(stderr, "usage: instaret [-r] -p PID -b BINARY -f FUNC | [-r] -U | -R\n");
	return 2;
}
