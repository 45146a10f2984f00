// SPDX-License-Identifier: GPL-2.0
/*
 * uhrecs: attach a BPF raw tracepoint program to xprobes_urecs (see
 * bpf/uhrecs.bpf.c) and, on SIGINT/SIGTERM, print one line of counts:
 *   entries C0..C7 returns C0..C7 calls C0..C7 other N noret N tail N unmatched N
 *   abandoned N backwards N future N deep N batches N records N max_batch N
 *   collisions N tids T...
 *   top N call_ns N
 * as "key value" pairs (entries.K, returns.K and calls.K per cookie K). Prints
 * "attached" once the program is live.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "uhrecs.h"
#include "uhrecs.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

#define P(name) printf(" " #name " %llu", (unsigned long long)c->name)

int main(void)
{
	struct uhrecs_counts *c;
	struct uhrecs_bpf *skel;
	int i;

	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	skel = uhrecs_bpf__open_and_load();
	if (!skel || uhrecs_bpf__attach(skel)) {
		fprintf(stderr, "uhrecs: cannot attach to xprobes_urecs: %s\n", strerror(errno));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	c = &skel->bss->counts;
	for (i = 0; i < UHRECS_COOKIES; i++)
		printf("%sentries.%d %llu returns.%d %llu calls.%d %llu", i ? " " : "", i,
		       (unsigned long long)c->entries[i], i, (unsigned long long)c->returns[i],
		       i, (unsigned long long)c->calls[i]);
	P(other); P(top); P(call_ns); P(noret); P(tail); P(unmatched); P(abandoned); P(backwards); P(future);
	P(deep); P(batches); P(records); P(max_batch); P(collisions);
	printf(" tids");
	for (i = 0; i < UHRECS_THREADS; i++)
		if (c->tids[i])
			printf(" %u", c->tids[i]);
	printf("\n");
	uhrecs_bpf__destroy(skel);
	return 0;
}
