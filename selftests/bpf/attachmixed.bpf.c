// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An object with one program xprobectl attach can run per process and two
 * it cannot: selftest 38 checks that the whole object is refused, each of
 * the two with its reason, and that nothing is attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__u64 hits;

SEC("kprobe/__x64_sys_getppid")
int BPF_KPROBE(fine)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* views have no return hook there */
SEC("kretprobe/__x64_sys_getppid")
int BPF_KRETPROBE(kret)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* away from the entry, a uretprobe would overwrite the process's data */
SEC("uretprobe//xp/bin/uhtarget:uh_add+4")
int BPF_KRETPROBE(uret_off)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
