// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Global hooks with the PID test inside BPF, the way bpftrace -p and bcc
 * tools filter: every process that passes the hook pays for the program.
 * Used by the overhead experiments as the baseline xprobes views replace.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid;
__u64 hits;
__u64 seen;

static __always_inline int count(void)
{
	__sync_fetch_and_add(&seen, 1);
	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(on_kprobe)
{
	return count();
}

/* BTF names the syscall body __do_sys_getppid (same address as __x64_sys_getppid) */
SEC("fentry/__do_sys_getppid")
int BPF_PROG(on_fentry)
{
	return count();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
