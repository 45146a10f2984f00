// SPDX-License-Identifier: GPL-2.0
/*
 * hookcount: attach a BPF raw tracepoint program to xprobes_hook and, on
 * SIGINT/SIGTERM/SIGUSR1 (or after -d SECONDS), print "ID TGID COUNT" lines
 * (hits the table had no room for go to stderr). Prints "attached" once the
 * program is live.
 * -P PATH: do not attach to the tracepoint; pin the program at PATH (for
 * "xprobectl hook prog ID PATH"), at PATH_past one that reads beyond the
 * hook's arguments, at PATH_kprobe a kprobe program that counts a
 * getppid hook's hits by cookie, at PATH_sleepable a sleepable one
 * (uprobe.s), and at PATH_reenter the program -S attaches; all unpinned at
 * exit. Prints "attached" once pinned.
 * -S: also attach the reenter program to raw_syscalls:sys_enter (it calls
 * bpf_ktime_get_ns() at every system call: a hook on that helper then hits
 * inside its run).
 */
#include <errno.h>
#include <stdbool.h>
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
	const char *pin = NULL;
	char past[256] = "", regs[256] = "", sleepable[256] = "", reenter[256] = "";
	struct bpf_link *sysenter = NULL;
	int opt, secs = 0, fd, err, rc = 1;
	bool sys = false;
	__u32 i;

	while ((opt = getopt(argc, argv, "d:P:S")) != -1) {
		if (opt == 'd')
			secs = atoi(optarg);
		else if (opt == 'P')
			pin = optarg;
		else if (opt == 'S')
			sys = true;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	signal(SIGUSR1, on_sig);
	skel = hookcount_bpf__open();
	if (skel) {
		bpf_program__set_autoattach(skel->progs.reads_past, false);
		bpf_program__set_autoattach(skel->progs.count_regs, false);
		bpf_program__set_autoattach(skel->progs.sleepable, false);
		bpf_program__set_autoattach(skel->progs.reenter, false);
	}
	if (skel && hookcount_bpf__load(skel)) {
		hookcount_bpf__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		fprintf(stderr, "hookcount: cannot load the BPF program: %s\n", strerror(errno));
		return 1;
	}
	if (pin) {
		snprintf(past, sizeof(past), "%s_past", pin);
		snprintf(regs, sizeof(regs), "%s_kprobe", pin);
		snprintf(sleepable, sizeof(sleepable), "%s_sleepable", pin);
		snprintf(reenter, sizeof(reenter), "%s_reenter", pin);
		err = bpf_program__pin(skel->progs.count_hook, pin);
		if (!err)
			err = bpf_program__pin(skel->progs.reads_past, past);
		if (!err)
			err = bpf_program__pin(skel->progs.count_regs, regs);
		if (!err)
			err = bpf_program__pin(skel->progs.sleepable, sleepable);
		if (!err)
			err = bpf_program__pin(skel->progs.reenter, reenter);
		if (err) {
			fprintf(stderr, "hookcount: cannot pin at %s: %s\n", pin, strerror(-err));
			goto out;	/* the pins made before go too */
		}
	} else if (hookcount_bpf__attach(skel)) {
		fprintf(stderr, "hookcount: cannot attach to xprobes_hook (is xprobes.ko loaded?): %s\n",
			strerror(errno));
		goto out;
	}
	if (sys) {
		sysenter = bpf_program__attach(skel->progs.reenter);
		if (!sysenter) {
			fprintf(stderr, "hookcount: cannot attach to raw_syscalls:sys_enter: %s\n",
				strerror(errno));
			goto out;
		}
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
	if (skel->bss->wrong_regs)
		fprintf(stderr, "hookcount: %llu kprobe hits did not see getppid's registers\n",
			(unsigned long long)skel->bss->wrong_regs);
	rc = 0;
out:
	if (pin) {
		unlink(pin);
		unlink(past);
		unlink(regs);
		unlink(sleepable);
		unlink(reenter);
	}
	bpf_link__destroy(sysenter);
	hookcount_bpf__destroy(skel);
	return rc;
}
