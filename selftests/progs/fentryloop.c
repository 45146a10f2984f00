// SPDX-License-Identifier: GPL-2.0
/*
 * fentryloop: attach a BPF fentry program to __do_sys_getppid (or FUNC, a
 * function of the kernel or of a loaded module with BTF), hold it for MS
 * milliseconds, detach it (the kernel frees the trampoline), N times.
 * Prints, per round, how many calls of process PID it counted.
 *   fentryloop -p PID [-n N] [-m MS] [-f FUNC]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "fentrycount.skel.h"

int main(int argc, char **argv)
{
	int opt, pid = 0, rounds = 100, ms = 50, i;
	struct fentrycount_bpf *skel;
	const char *func = NULL;

	while ((opt = getopt(argc, argv, "p:n:m:f:")) != -1) {
		switch (opt) {
		case 'p': pid = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		case 'm': ms = atoi(optarg); break;
		case 'f': func = optarg; break;
		default: return 2;
		}
	}
	skel = fentrycount_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->target_tgid = pid;
	/* libbpf finds FUNC in vmlinux's BTF or in a module's */
	if (func && bpf_program__set_attach_target(skel->progs.count_getppid, 0, func)) {
		fprintf(stderr, "fentryloop: %s: %s\n", func, strerror(errno));
		return 1;
	}
	if (fentrycount_bpf__load(skel)) {
		fprintf(stderr, "fentryloop: load: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		unsigned long long before = skel->bss->hits;

		if (fentrycount_bpf__attach(skel)) {
			fprintf(stderr, "fentryloop: attach: %s\n", strerror(errno));
			return 1;
		}
		usleep(ms * 1000);
		fentrycount_bpf__detach(skel);
		printf("%d %llu\n", i, skel->bss->hits - before);
		fflush(stdout);
	}
	fentrycount_bpf__destroy(skel);
	return 0;
}
