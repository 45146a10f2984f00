// SPDX-License-Identifier: GPL-2.0
/*
 * hookcount: attach a BPF raw tracepoint program to xprobes_hook and, on
 * SIGINT/SIGTERM/SIGUSR1 (or after -d SECONDS), print "ID TGID COUNT" lines
 * (hits the table had no room for go to stderr). Prints "attached" once the
 * program is live.
 */
#include <errno.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "hookcount.h"
#include "hookcount.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	struct hookcount_slot slot;
	struct hookcount_bpf *skel;
	int opt, secs = 0, fd;
	__u32 i;

	while ((opt = getopt(argc, argv, "d:")) != -1)
		if (opt == 'd')
			secs = atoi(optarg);
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	signal(SIGUSR1, on_sig);
	skel = hookcount_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "hookcount: cannot load the BPF program: %s\n", strerror(errno));
		return 1;
	}
	if (hookcount_bpf__attach(skel)) {
		fprintf(stderr, "hookcount: cannot attach to xprobes_hook (is xprobes.ko loaded?): %s\n",
			strerror(errno));
		hookcount_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop && (secs == 0 || secs-- > 0))
		sleep(1);
	fd = bpf_map__fd(skel->maps.counts);
	for (i = 0; i < HOOKCOUNT_SLOTS; i++)
		if (!bpf_map_lookup_elem(fd, &i, &slot) && slot.key)
			printf("%u %u %llu\n", (unsigned int)(slot.key >> 32), (unsigned int)slot.key,
			       (unsigned long long)slot.count);
	if (skel->bss->lost)
		fprintf(stderr, "hookcount: %llu hits found no free slot\n",
			(unsigned long long)skel->bss->lost);
	hookcount_bpf__destroy(skel);
	return 0;
}
