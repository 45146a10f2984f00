// SPDX-License-Identifier: GPL-2.0
/*
 * hookcount: attach a BPF raw tracepoint program to xprobes_hook and, on
 * SIGINT/SIGTERM/SIGUSR1 (or after -d SECONDS), print "ID TGID COUNT" lines.
 * Prints "attached" once the program is live.
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
	struct hookcount_key key, next, *prev = NULL;
	struct hookcount_bpf *skel;
	int opt, secs = 0, fd;
	__u64 val;

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
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &val))
			printf("%u %u %llu\n", next.id, next.tgid, (unsigned long long)val);
		key = next;
		prev = &key;
	}
	hookcount_bpf__destroy(skel);
	return 0;
}
