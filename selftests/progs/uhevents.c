// SPDX-License-Identifier: GPL-2.0
/*
 * uhevents: attach a BPF raw tracepoint program to xprobes_uhook (see
 * bpf/uhevents.bpf.c) and, on SIGINT/SIGTERM, print for each cookie that had
 * events:
 *   cookie C id ID tgid T count N bad B misaligned M ip IP ret RET
 *     rcount N rbad B rmisaligned M rip IP rax AX args DI SI DX CX R8 R9
 * (the first event's registers, in hex; r*: return events) and "other N" (events with larger
 * cookies). Prints "attached" once the program is live.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "uhevents.h"
#include "uhevents.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(void)
{
	struct uhevents_slot s;
	struct uhevents_bpf *skel;
	__u32 i;
	int fd;

	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	skel = uhevents_bpf__open_and_load();
	if (!skel || uhevents_bpf__attach(skel)) {
		fprintf(stderr, "uhevents: cannot attach to xprobes_uhook: %s\n", strerror(errno));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	fd = bpf_map__fd(skel->maps.slots);
	for (i = 0; i < UHEVENTS_COOKIES; i++) {
		if (bpf_map_lookup_elem(fd, &i, &s) || !s.count)
			continue;
		printf("cookie %u id %u tgid %u count %llu bad %llu misaligned %llu ip %#llx ret %#llx "
		       "rcount %llu rbad %llu rmisaligned %llu rip %#llx rax %#llx "
		       "args %llx %llx %llx %llx %llx %llx\n", i, s.id, s.tgid,
		       (unsigned long long)s.count, (unsigned long long)s.bad,
		       (unsigned long long)s.misaligned, (unsigned long long)s.ip,
		       (unsigned long long)s.ret, (unsigned long long)s.rcount,
		       (unsigned long long)s.rbad, (unsigned long long)s.rmisaligned,
		       (unsigned long long)s.rip, (unsigned long long)s.rax, (unsigned long long)s.di,
		       (unsigned long long)s.si, (unsigned long long)s.dx,
		       (unsigned long long)s.cx, (unsigned long long)s.r8,
		       (unsigned long long)s.r9);
	}
	printf("other %llu\n", (unsigned long long)skel->bss->other);
	uhevents_bpf__destroy(skel);
	return 0;
}
