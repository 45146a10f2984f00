// SPDX-License-Identifier: GPL-2.0
/*
 * pidfilter: attach a global kprobe or fentry program on a kernel function
 * with a PID test inside BPF (the bpftrace/bcc way), until SIGTERM/SIGINT.
 *   pidfilter -p PID -m kprobe|fentry [-f FUNC]
 * Prints "attached", and at exit "hits H seen S" (S = every process).
 * fentry is built for __do_sys_getppid (= __x64_sys_getppid).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "pidfilter.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	const char *mode = "kprobe", *func = "__x64_sys_getppid";
	struct pidfilter_bpf *skel;
	struct bpf_link *link;
	int opt, pid = 0;

	while ((opt = getopt(argc, argv, "p:m:f:")) != -1) {
		switch (opt) {
		case 'p': pid = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'f': func = optarg; break;
		default: return 2;
		}
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	skel = pidfilter_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->target_tgid = pid;
	bpf_program__set_autoload(skel->progs.on_fentry, !strcmp(mode, "fentry"));
	bpf_program__set_autoload(skel->progs.on_kprobe, !strcmp(mode, "kprobe"));
	if (pidfilter_bpf__load(skel)) {
		fprintf(stderr, "pidfilter: load failed: %s\n", strerror(errno));
		return 1;
	}
	if (!strcmp(mode, "fentry"))
		link = bpf_program__attach(skel->progs.on_fentry);
	else
		link = bpf_program__attach_kprobe(skel->progs.on_kprobe, false, func);
	if (!link) {
		fprintf(stderr, "pidfilter: attach %s %s failed: %s\n", mode, func, strerror(errno));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	printf("hits %llu seen %llu\n", (unsigned long long)skel->bss->hits,
	       (unsigned long long)skel->bss->seen);
	bpf_link__destroy(link);
	pidfilter_bpf__destroy(skel);
	return 0;
}
